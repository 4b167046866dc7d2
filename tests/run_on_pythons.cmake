# run_on_pythons.cmake: included by the -P scripts that build a program and then run it
# on the oldest and the newest Python (consumer_test.cmake, docs_build_test.cmake).
# Uses LIBS and VERSIONS (lists) and LAUNCHER_NEW ("@@"-separated, for the last one).
#   pyhost_run_on_pythons(<program> <expected stdout regex, @VER@ for the version> <what>
#                         [ARGS <arguments after LIB>...] [EXIT <status>])
# runs `program LIB ARGS...` for each, in the current directory, and fails with its
# output unless it exits with EXIT (default 0) and prints what the regex says.
function(pyhost_run_on_pythons program expect what)
  cmake_parse_arguments(R "" "EXIT" "ARGS" ${ARGN})
  if(NOT DEFINED R_EXIT)
    set(R_EXIT 0)
  endif()
  list(LENGTH LIBS n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    list(GET LIBS ${i} lib)
    list(GET VERSIONS ${i} ver)
    set(launcher)
    if(i EQUAL last AND LAUNCHER_NEW)
      string(REPLACE "@@" ";" launcher "${LAUNCHER_NEW}")
    endif()
    execute_process(COMMAND ${launcher} "${program}" "${lib}" ${R_ARGS} RESULT_VARIABLE rc
                    OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REPLACE "." "\\." ver_re "${ver}")
    string(REPLACE "@VER@" "${ver_re}" re "${expect}")
    if(NOT rc STREQUAL "${R_EXIT}" OR NOT out MATCHES "${re}")
      message(FATAL_ERROR "${what} on ${lib}: exit ${rc}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
    endif()
    message(STATUS "${what} on Python ${ver}: ${out}")
  endforeach()
endfunction()
