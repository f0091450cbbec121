# qmm_isa_sources(<target> FLAGS <flags...> SOURCES <files...>)
# Each ISA's sources compile with their own flags only, so one binary runs on any CPU of
# its architecture and selects kernels at run time.
function(qmm_isa_sources target)
  cmake_parse_arguments(ARG "" "" "FLAGS;SOURCES" ${ARGN})
  target_sources(${target} PRIVATE ${ARG_SOURCES})
  set_source_files_properties(${ARG_SOURCES} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${ARG_FLAGS}")
endfunction()
