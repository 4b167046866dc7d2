# Checks that keep the symbol list honest.  Included from tests/CMakeLists.txt.

# nm: the shared library calls no libpython symbol directly and exports only pyhost_*.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_program(PYHOST_NM NAMES nm)
  add_test(NAME consistency.nm COMMAND ${CMAKE_COMMAND} -DNM=${PYHOST_NM}
    -DLIB=$<TARGET_FILE:pyhost> -P ${CMAKE_CURRENT_SOURCE_DIR}/check_nm.cmake)
  set_tests_properties(consistency.nm PROPERTIES LABELS unit)
endif()

# Prototypes: every row is declared by CPython's limited-API headers, at the row's own
# `added` version, with the type the table gives it; once per header set in the matrix.
set(_headers ${PYHOST_PYTHON_INCLUDE_DIR} ${PYHOST_TEST_INCLUDES})
list(REMOVE_ITEM _headers "")
list(REMOVE_DUPLICATES _headers)
foreach(inc IN LISTS _headers)
  string(REGEX MATCH "python3\\.[0-9]+" hv "${inc}")
  string(REPLACE "python" "" hv "${hv}")
  set(hname "${hv}")
  if(inc MATCHES "python3\\.[0-9]+d$")
    set(hname "${hv}d") # a debug build's headers
  endif()
  if(TARGET pyhost_objects)
    get_filename_component(_tag "${inc}" DIRECTORY)
    string(MD5 _h "${inc}")
    string(SUBSTRING "${_h}" 0 6 _h)
  endif()
  pyhost_python_headers_after("${inc}" _after)
  add_test(NAME consistency.prototypes.headers${hname}-${_h} COMMAND ${CMAKE_COMMAND}
    -DCC=${CMAKE_C_COMPILER} -DINC=${inc} -DAFTER=${_after} -DHEADER_VERSION=${hv}
    -DSRC=${CMAKE_CURRENT_SOURCE_DIR}/check_prototypes.c -DPYHOST_SRC=${PROJECT_SOURCE_DIR}/src/loader
    -P ${CMAKE_CURRENT_SOURCE_DIR}/check_prototypes.cmake)
  set_tests_properties(consistency.prototypes.headers${hname}-${_h} PROPERTIES LABELS unit TIMEOUT 300)
endforeach()

# Manifest: every row is in CPython's stable_abi.toml with the same kind and `added`,
# and every Python in the matrix exports what its version promises.
add_executable(dump_pyapi dump_pyapi.c)
target_link_libraries(dump_pyapi PRIVATE pyhost_static)
target_include_directories(dump_pyapi PRIVATE ${PYHOST_SRC_DIRS})
target_include_directories(dump_pyapi SYSTEM PRIVATE ${PYHOST_PYTHON_INCLUDE_DIR})
target_compile_definitions(dump_pyapi PRIVATE Py_LIMITED_API=${PYHOST_LIMITED_API_HEX})
if(PYHOST_TEST_PYTHON_EXE)
  set(_exports)
  foreach(i IN LISTS PYHOST_TEST_INDICES)
    pyhost_matrix_entry(${i})
    list(APPEND _exports "${ver}=${lib}")
  endforeach()
  add_test(NAME consistency.manifest COMMAND ${PYHOST_TEST_PYTHON_EXE}
    ${CMAKE_CURRENT_SOURCE_DIR}/check_manifest.py $<TARGET_FILE:dump_pyapi> ${PYHOST_SHARED_DIR}
    ${PYHOST_LIMITED_API} ${_exports})
  set_tests_properties(consistency.manifest PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
  # a clone without ../shared skips it: the skip says how to run it
  add_test(NAME consistency.manifest_skip_message COMMAND ${CMAKE_COMMAND}
    "-DCMD=${PYHOST_TEST_PYTHON_EXE}@@${CMAKE_CURRENT_SOURCE_DIR}/check_manifest.py@@$<TARGET_FILE:dump_pyapi>@@${CMAKE_CURRENT_BINARY_DIR}/no-shared@@${PYHOST_LIMITED_API}"
    -DEXIT=77 "-DSTDOUT=skipped: .*no-shared.* is absent; to run this check, configure with -DPYHOST_SHARED_DIR="
    -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
  set_tests_properties(consistency.manifest_skip_message PROPERTIES LABELS unit)
endif()

# Layers: no circle of files and no call or include from a lower folder of src/ to a
# higher one (docs/design.md), read from the library's objects with nm.  The second
# test proves the check can fail: two fixture files, a lower one calling up.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND PYHOST_TEST_PYTHON_EXE)
  list(JOIN PYHOST_SRC_LAYERS "," _layers)
  add_test(NAME consistency.layers COMMAND ${PYHOST_TEST_PYTHON_EXE}
    ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py ${PYHOST_NM} ${PROJECT_SOURCE_DIR}/src ${_layers}
    $<TARGET_OBJECTS:pyhost_objects>
    COMMAND_EXPAND_LISTS)
  set_tests_properties(consistency.layers PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "no circle, no upward call or include")
  # Process state in the places docs/design.md names: no other writable data
  add_test(NAME consistency.state COMMAND ${PYHOST_TEST_PYTHON_EXE}
    ${CMAKE_CURRENT_SOURCE_DIR}/check_state.py ${PYHOST_NM} $<TARGET_OBJECTS:pyhost_objects>
    COMMAND_EXPAND_LISTS)
  set_tests_properties(consistency.state PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "the process's state is where docs/design.md says")
  # ... and it fails on a file static: the layers fixture's low.c keeps a counter
  add_test(NAME consistency.state_check_fails_on_file_static COMMAND ${PYHOST_TEST_PYTHON_EXE}
    ${CMAKE_CURRENT_SOURCE_DIR}/check_state.py ${PYHOST_NM} $<TARGET_OBJECTS:layers_fixture>
    COMMAND_EXPAND_LISTS)
  set_tests_properties(consistency.state_check_fails_on_file_static PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "low/low.c: calls \\(.bss\\) is state outside")
  add_library(layers_fixture OBJECT fixtures/layers/low/low.c fixtures/layers/high/high.c)
  add_test(NAME consistency.layers_check_fails_on_upward_call COMMAND ${PYHOST_TEST_PYTHON_EXE}
    ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py ${PYHOST_NM}
    ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/layers low,high $<TARGET_OBJECTS:layers_fixture>
    COMMAND_EXPAND_LISTS)
  set_tests_properties(consistency.layers_check_fails_on_upward_call PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION
    "upward call: low/low.c \\(low\\) -> high/high.c \\(high\\): layers_high.*circle of files: high/high.c <-> low/low.c")
endif()
