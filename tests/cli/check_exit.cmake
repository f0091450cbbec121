# Runs CMD (a ;-list, behind EMULATOR when cross compiling) and checks its exit code is CODE
# and its output (stdout + stderr) matches REGEX (and not NOT_REGEX, if given). Standard input
# is the file INPUT if given.
if(NOT INPUT)
  set(INPUT /dev/null)
endif()
execute_process(COMMAND ${EMULATOR} ${CMD} INPUT_FILE ${INPUT} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
if(NOT rc STREQUAL "${CODE}")
  message(FATAL_ERROR "exit code ${rc}, expected ${CODE}\nstdout: ${out}\nstderr: ${err}")
endif()
string(REGEX MATCH "${REGEX}" found "${out}${err}")
if(NOT found)
  message(FATAL_ERROR "output does not match '${REGEX}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(DEFINED NOT_REGEX)
  string(REGEX MATCH "${NOT_REGEX}" found "${out}${err}")
  if(found)
    message(FATAL_ERROR "output matches '${NOT_REGEX}'\nstdout: ${out}\nstderr: ${err}")
  endif()
endif()
message(STATUS "ok: exit ${rc}, matched '${REGEX}'")
