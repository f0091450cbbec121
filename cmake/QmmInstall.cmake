# `cmake --install`: headers, the library, a CMake package (find_package(qmm) -> qmm::qmm) and
# qmm.pc. Both find their files relative to where they are installed, so `--prefix` works.
include(CMakePackageConfigHelpers)
install(TARGETS qmm EXPORT qmmTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/qmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT qmmTargets NAMESPACE qmm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)
configure_package_config_file(cmake/qmmConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/qmmConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/qmmConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/qmm)

# qmm.pc: the prefix is found from the .pc file's own place (${pcfiledir}). The static
# library needs the C++ runtime on every link line (C programs link with cc), the shared one
# only when linking statically (`pkg-config --static`).
file(RELATIVE_PATH QMM_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" QMM_PC_TO_PREFIX "${QMM_PC_TO_PREFIX}")
set(QMM_PC_RUNTIME "-lstdc++ -lm -pthread")
if(BUILD_SHARED_LIBS)
  set(QMM_PC_LIBS "")
  set(QMM_PC_LIBS_PRIVATE "${QMM_PC_RUNTIME}")
else()
  set(QMM_PC_LIBS "${QMM_PC_RUNTIME}")
  set(QMM_PC_LIBS_PRIVATE "")
endif()
configure_file(cmake/qmm.pc.in ${CMAKE_CURRENT_BINARY_DIR}/qmm.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/qmm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
