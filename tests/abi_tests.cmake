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

# The header's version is the project's (hence the SONAME, pyhost.pc and
# pyhostConfigVersion.cmake): one number, written twice, checked here.
file(STRINGS "${PROJECT_SOURCE_DIR}/include/pyhost/version.h" _vlines
     REGEX "^#define PYHOST_VERSION_(MAJOR|MINOR|PATCH) ")
set(_hv "")
foreach(l IN LISTS _vlines)
  string(REGEX REPLACE "^#define PYHOST_VERSION_[A-Z]+ ([0-9]+).*" "\\1" n "${l}")
  list(APPEND _hv ${n})
endforeach()
string(REPLACE ";" "." _hv "${_hv}")
add_test(NAME abi.header_version_is_project_version
  COMMAND ${CMAKE_COMMAND} -E echo "header ${_hv} project ${PROJECT_VERSION}")
set_tests_properties(abi.header_version_is_project_version PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION "header ${PROJECT_VERSION} project ${PROJECT_VERSION}\n")
