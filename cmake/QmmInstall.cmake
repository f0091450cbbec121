# `cmake --install`: headers, the library, a CMake package (find_package(qmm)) and pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
install(TARGETS qmm EXPORT qmmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/qmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT qmmTargets NAMESPACE qmm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake.in
  "@PACKAGE_INIT@\ninclude(CMakeFindDependencyMacro)\nfind_dependency(Threads)\ninclude(\${CMAKE_CURRENT_LIST_DIR}/qmmTargets.cmake)\n")
configure_package_config_file(${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/qmmConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/qmmConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)
configure_file(cmake/qmm.pc.in ${CMAKE_CURRENT_BINARY_DIR}/qmm.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
