# like_python.cmake: runs the same thing through the same Python's own `python3.X` and
# through `pyhost`, with the same arguments, input, environment and folder, and checks
# that both give the same exit status, stdout and stderr (stderr compared after the
# program's name at the start of a line, "python3.X: " or "pyhost: ", is set aside, and
# so is the program python's usage line names, its own argv[0]).
#   cmake -DPYTHON="launcher@@python3.X" -DPYHOST="launcher@@pyhost@@--python@@LIB"
#         -DARGS="a@@b" [-DINPUT=file] [-DENVS="VAR=value@@..."] [-DDIR=folder]
#         [-DPIPE="head@@-1"] [-DSTDERR=0] [-DPYHOST_STDERR=regex] -P like_python.cmake
# STDERR=0 leaves stderr out of the comparison; PYHOST_STDERR is a regex pyhost's stderr
# must match (a host program's own report).
foreach(v PYTHON PYHOST ARGS PIPE)
  string(REPLACE "@@" ";" ${v} "${${v}}")
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/set_envs.cmake)
set(extra)
if(DEFINED INPUT)
  list(APPEND extra INPUT_FILE "${INPUT}")
endif()
if(DEFINED DIR)
  list(APPEND extra WORKING_DIRECTORY "${DIR}")
endif()
set(pipe)
if(PIPE)
  set(pipe COMMAND ${PIPE})
endif()
foreach(who PYTHON PYHOST)
  execute_process(COMMAND ${${who}} ${ARGS} ${pipe} ${extra} RESULTS_VARIABLE rc_${who}
                  OUTPUT_VARIABLE out_${who} ERROR_VARIABLE err_${who})
  list(GET rc_${who} 0 rc_${who}) # the first command's, not the pipe's
  string(REGEX REPLACE "(^|\n)[^\n:]*(python3[.0-9a-z]*|pyhost): " "\\1PROGRAM: " err_${who} "${err_${who}}")
  foreach(stream out err)
    string(REGEX REPLACE "(^|\n)usage: [^ \n]+ " "\\1usage: PROGRAM " ${stream}_${who} "${${stream}_${who}}")
  endforeach()
endforeach()
set(ok TRUE)
if(NOT "${rc_PYTHON}" STREQUAL "${rc_PYHOST}")
  message("exit status: python ${rc_PYTHON}, pyhost ${rc_PYHOST}")
  set(ok FALSE)
endif()
if(NOT out_PYTHON STREQUAL out_PYHOST)
  message("stdout differs")
  set(ok FALSE)
endif()
if(NOT STDERR STREQUAL "0" AND NOT err_PYTHON STREQUAL err_PYHOST)
  message("stderr differs")
  set(ok FALSE)
endif()
if(DEFINED PYHOST_STDERR AND NOT err_PYHOST MATCHES "${PYHOST_STDERR}")
  message("pyhost's stderr does not match '${PYHOST_STDERR}'")
  set(ok FALSE)
endif()
if(NOT ok)
  message(FATAL_ERROR "python: ${PYTHON} ${ARGS}\n--- stdout ---\n${out_PYTHON}\n--- stderr ---\n${err_PYTHON}\n"
                      "pyhost: ${PYHOST} ${ARGS}\n--- stdout ---\n${out_PYHOST}\n--- stderr ---\n${err_PYHOST}")
endif()
