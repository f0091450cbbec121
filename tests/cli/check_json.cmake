# Checks that a qmm verb's JSON output is valid for any file name, and that what was not
# measured is null. QMM = the qmm binary (behind EMULATOR when cross compiling), DIR = a
# scratch folder. A synthetic model is written under a name with a quote, a comma, a
# backslash and non-ASCII text, then:
#   bench model -o json (an array), -o jsonl (one object a line), -o csv (the name quoted),
#   bench matmul --json --no-limits, bench limits --json.
function(run out)
  execute_process(COMMAND ${EMULATOR} ${QMM} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "qmm ${ARGN}: exit ${rc}\n${o}\n${e}")
  endif()
  set(${out} "${o}" PARENT_SCOPE)
endfunction()
function(expect_type json type)  # expect_type(JSON TYPE path...)
  string(JSON t ERROR_VARIABLE err TYPE "${json}" ${ARGN})
  if(err OR NOT t STREQUAL type)
    message(FATAL_ERROR "${ARGN}: expected ${type}, got '${t}' ${err}\n${json}")
  endif()
endfunction()

file(MAKE_DIRECTORY "${DIR}")
set(model "${DIR}/m \"q\",x\\é.gguf")
run(o synth tiny --type q8_0 -f -o "${model}")

run(json bench model -m "${model}" -p 8 -n 4 -r 2 -t 1,2 --no-limits -o json)
string(JSON n ERROR_VARIABLE err LENGTH "${json}")
if(err OR NOT n EQUAL 4)
  message(FATAL_ERROR "bench model -o json: not an array of 4 results (${err})\n${json}")
endif()
string(JSON name GET "${json}" 0 model)
if(NOT name STREQUAL model)
  message(FATAL_ERROR "model name in JSON: '${name}', expected '${model}'")
endif()
expect_type("${json}" NULL 0 bound_ts)      # --no-limits: no bound
expect_type("${json}" NULL 0 paired_ratio)  # a prefill has no paired ratio
expect_type("${json}" NUMBER 1 paired_ratio)
expect_type("${json}" NUMBER 3 stddev_ts)
expect_type("${json}" NULL 0 limits)

run(jsonl bench model -m "${model}" -p 8 -n 4 -r 1 -t 1 --no-limits -o jsonl)
string(REGEX REPLACE "\n$" "" jsonl "${jsonl}")
string(REPLACE "\n" ";" lines "${jsonl}")
list(LENGTH lines nl)
if(NOT nl EQUAL 2)
  message(FATAL_ERROR "-o jsonl: ${nl} lines, expected 2\n${jsonl}")
endif()
foreach(line IN LISTS lines)
  expect_type("${line}" NULL stddev_ts)  # one repetition: no standard deviation
endforeach()

run(csv bench model -m "${model}" -p 8 -n 0 -r 1 -t 1 --no-limits -o csv)
string(FIND "${csv}" "\"${DIR}/m \"\"q\"\",x\\é.gguf\"," at)
if(at LESS 0)
  message(FATAL_ERROR "-o csv: the model name is not quoted\n${csv}")
endif()

run(json bench matmul -m 1 -n 64 -k 64 --min-time 0.01 --rotate-mib 1 --no-limits --json)
expect_type("${json}" NULL limits)
expect_type("${json}" NULL results 0 pct_limit)
expect_type("${json}" NUMBER results 0 gbs)
if(NOT EMULATOR)  # measuring the limits under emulation is slow and means nothing
  run(json bench limits --json)
  expect_type("${json}" NUMBER dram_read_gbs)
endif()
message(STATUS "ok: JSON, JSON lines and CSV valid for the name '${model}'")
