# pyhost's own ABI (docs/abi.md).  Included from tests/CMakeLists.txt; the versions
# themselves are checked by unit.versions_agree, the exports by consistency.nm and here.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_program(PYHOST_NM NAMES nm)
  add_test(NAME abi.exports_match_header COMMAND ${CMAKE_COMMAND} -DNM=${PYHOST_NM}
    -DLIB=$<TARGET_FILE:pyhost> -DHEADER=${PROJECT_SOURCE_DIR}/include/pyhost.h
    -P ${CMAKE_CURRENT_SOURCE_DIR}/check_exports.cmake)
  # The SONAME carries the major version: libpyhost.so.0 for every 0.y.z.
  add_test(NAME abi.soname COMMAND ${CMAKE_COMMAND} -E echo $<TARGET_SONAME_FILE_NAME:pyhost>)
  set_tests_properties(abi.soname PROPERTIES
    PASS_REGULAR_EXPRESSION "^libpyhost\\.so\\.${PROJECT_VERSION_MAJOR}\n$")
  set_tests_properties(abi.exports_match_header abi.soname PROPERTIES LABELS unit)
endif()
