# check_prototypes.cmake: -DCC -DINC [-DAFTER] -DHEADER_VERSION=3.X -DSRC -DPYHOST_SRC
# Compiles check_prototypes.c for every stable-ABI minor from 3.2 to the headers' own.
# AFTER: searched after the system headers (cmake/PyhostPythonHeaders.cmake).
string(REPLACE "3." "" top "${HEADER_VERSION}")
set(after)
if(AFTER)
  set(after -idirafter "${AFTER}")
endif()
set(checked 0)
foreach(minor RANGE 2 ${top})
  math(EXPR hex "0x03000000 + (${minor} << 16)" OUTPUT_FORMAT HEXADECIMAL)
  execute_process(COMMAND ${CC} -std=c11 -fsyntax-only -Werror=implicit-function-declaration
      -DNDEBUG -DPy_LIMITED_API=${hex} -DCHECK_MINOR=${minor} -I${INC} ${after} -I${PYHOST_SRC} ${SRC}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "rows added in 3.${minor} do not match ${INC} at Py_LIMITED_API=${hex}:\n${err}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "${INC}: rows of ${checked} stable-ABI versions match")
