# docs.version_ranges: README.md and docs/ name the newest tested minor in every range
# from the floor, and only .md files that exist (tests/check_docs.cmake).
add_test(NAME docs.version_ranges COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR}
  -DFLOOR=${PYHOST_LIMITED_API} -DNEWEST=${PYHOST_NEWEST_TESTED_MINOR}
  -P ${CMAKE_CURRENT_SOURCE_DIR}/check_docs.cmake)
set_tests_properties(docs.version_ranges PROPERTIES LABELS "unit;docs" TIMEOUT 60)

# docs.api_reference: Doxygen builds the API reference from the public headers with
# zero warnings (docs/Doxyfile, WARN_AS_ERROR).  Included from tests/CMakeLists.txt;
# skipped where doxygen is not installed (.ci/run installs it and runs it too).
find_program(PYHOST_DOXYGEN_EXE doxygen)
if(NOT PYHOST_DOXYGEN_EXE OR NOT PYHOST_TEST_PYTHON_EXE)
  return()
endif()
add_test(NAME docs.api_reference
  COMMAND ${CMAKE_COMMAND} -E env "PYHOST_DOXYGEN_OUT=${CMAKE_CURRENT_BINARY_DIR}/doxygen"
          "PYHOST_VERSION=${PROJECT_VERSION}" ${PYHOST_DOXYGEN_EXE} docs/Doxyfile
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# Doxygen exits 0 with FAIL_ON_WARNINGS only when nothing was printed as a warning.
set_tests_properties(docs.api_reference PROPERTIES LABELS "unit;docs" TIMEOUT 120
  FAIL_REGULAR_EXPRESSION "warning:|error:")
