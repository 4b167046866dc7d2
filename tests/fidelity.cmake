# fidelity.cmake: CPython's own regression tests for a few modules, run by the same
# Python's `python3.X -m test` and by `pyhost --python LIB ... -m test`: both runs must
# give the same counts of tests passed, skipped, failed and errored, and the same result.
#   cmake -DPYTHON="launcher@@python3.X" -DPYHOST="launcher@@pyhost@@--python@@LIB@@..."
#         -DMODULES="test_json@@..." [-DIGNORE="test_x@@..."] -DOUT=dir -P fidelity.cmake
# IGNORE names test methods that differ for a reason of the environment (docs/
# getting-started.md lists each with its reason); both runs skip them (-i).
foreach(v PYTHON PYHOST MODULES IGNORE)
  string(REPLACE "@@" ";" ${v} "${${v}}")
endforeach()
set(args -m test -v)
foreach(name IN LISTS IGNORE)
  list(APPEND args -i "${name}")
endforeach()
file(MAKE_DIRECTORY "${OUT}")
# outcomes as unittest's verbose runner prints them at the end of a test's line
set(kinds ok skipped FAIL ERROR "expected failure" "unexpected success")
foreach(who PYTHON PYHOST)
  execute_process(COMMAND ${${who}} ${args} ${MODULES} WORKING_DIRECTORY "${OUT}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(WRITE "${OUT}/${who}.log" "${out}")
  set(summary_${who} "exit ${rc}")
  foreach(kind IN LISTS kinds)
    string(REGEX MATCHALL "\\.\\.\\. ${kind}" hits "${out}")
    list(LENGTH hits n)
    string(APPEND summary_${who} ", ${kind} ${n}")
  endforeach()
  message("${who}: ${summary_${who}} (log: ${OUT}/${who}.log)")
endforeach()
if(NOT summary_PYTHON STREQUAL summary_PYHOST)
  message(FATAL_ERROR "pyhost's run of CPython's tests differs from python's: compare the logs")
endif()
