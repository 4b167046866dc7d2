# Damaged, odd and hostile library files (issue 12): test_damaged.c makes every
# fixture at run time from the library under test and drives pyhost_init,
# pyhost_inspect_library and the `pyhost` command with it, once per Python in the
# matrix.  Included from tests/CMakeLists.txt.
# the parsers on synthetic bytes (also in the Windows cross build: cross_tests.cmake)
pyhost_test_binary(test_libcheck test_libcheck.c)
pyhost_unit_tests(libcheck test_libcheck test_libcheck.c)

if(NOT PYHOST_BUILD_CLI)
  return()
endif()
pyhost_api_test_binary(test_damaged test_damaged.c)
add_dependencies(test_damaged pyhost_cli)
pyhost_python_tests(damaged test_damaged test_damaged.c $<TARGET_FILE:pyhost_cli>)
# every case is bounded: a hang (the FIFO) must fail within the minute, not at 300 s
pyhost_cases_of(${CMAKE_CURRENT_SOURCE_DIR}/test_damaged.c _damaged_cases)
foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  foreach(c IN LISTS _damaged_cases)
    set_tests_properties(damaged.${c}.${tag} PROPERTIES TIMEOUT 120)
  endforeach()
endforeach()
