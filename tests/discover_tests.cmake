# Discovery (issue 4): tests/test_discover.c builds PATH directories, pyenv roots,
# venvs and wrapper scripts at test time; tests/test_isolated.c runs on the matrix.
add_executable(static_python_fixture fixtures/static_python.c)
set_target_properties(static_python_fixture PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${FIX}")
# a debug build by its exports (a Py_REF_DEBUG symbol), named as one too
pyhost_fake_python(fake_debug_name VERSION "3.12.0 (main) [GCC]" MARKER _Py_NegativeRefcount OUTPUT_DIR dbg OUTPUT_NAME libpython3.12d)

set(_discover_pyenv "$ENV{PYENV_ROOT}")
if(NOT _discover_pyenv)
  set(_discover_pyenv "$ENV{HOME}/.pyenv")
endif()
pyhost_test_binary(test_discover test_discover.c discover_util.c)
add_dependencies(test_discover ${PYHOST_FIXTURE_TARGETS} fake_debug_name static_python_fixture)
pyhost_unit_tests(discover test_discover test_discover.c "${FIX}" "${_discover_pyenv}"
                  "$<TARGET_FILE:static_python_fixture>")
string(REPLACE ";" ":" _discover_libs "${PYHOST_TEST_LIBS}")
set_tests_properties(discover.lists_every_python PROPERTIES ENVIRONMENT "PYHOST_TEST_LIBS=${_discover_libs}")

pyhost_test_binary(test_isolated test_isolated.c)
pyhost_python_tests(isolated test_isolated test_isolated.c)

if(PYHOST_BUILD_CLI)
  # the doctor, as a user runs it
  pyhost_cli_test(list_table 0 ARGS --list STDOUT "^#  +STATUS +VERSION +KIND +SOURCE +PATH +REASON\n1  +taken "
                  ENVS "PYHOST_PYTHON_LIBRARY=")
  pyhost_cli_test(list_json 0 ARGS --list --json STDOUT "^{\"candidates\": .\n  {\"index\": 1, \"taken\": true.*\"status\": \"PYHOST_OK\"}"
                  ENVS "PYHOST_PYTHON_LIBRARY=")
  pyhost_cli_test(check_missing 1 ARGS --check ${FIX}/nope.so STDOUT "verdict +PYHOST_NOTFOUND")
  # refused before its headers were read: no architecture to show, and none blamed
  pyhost_cli_test(check_missing_arch 1 ARGS --check ${FIX}/nope.so STDOUT_NOT "\narchitecture ")
  pyhost_cli_test(check_symbols 1 ARGS --check ${FIX}/libfake_missing.so STDOUT "required +[0-9]+ symbols, [1-9][0-9]* missing")
  pyhost_cli_test(policy_bad_version 1 ARGS --min-python 3 -e 1 STDERR "--min-python wants a version like 3.11, not '3'")
  pyhost_cli_test(policy_missing_value 1 ARGS --interpreter STDERR "--interpreter needs a value")
  pyhost_cli_test(isolated 0 ARGS --isolated -e "'PYTHONPATH' in __import__('os').environ" STDOUT "^False\n$"
                  ENVS "PYHOST_PYTHON_LIBRARY=" "PYTHONPATH=/tmp")
  pyhost_cli_test(not_isolated 0 ARGS -e "'PYTHONPATH' in __import__('os').environ" STDOUT "^True\n$"
                  ENVS "PYHOST_PYTHON_LIBRARY=" "PYTHONPATH=/tmp")
  pyhost_cli_test(interpreter_missing 1 ARGS --interpreter /nonexistent/python3 -e 1
                  STDERR "no usable Python 3 found.*#1 interpreter /nonexistent/python3: /nonexistent/python3 does not exist"
                  ENVS "PYHOST_PYTHON_LIBRARY=")
  list(LENGTH PYHOST_TEST_LIBS _n)
  if(_n GREATER 0)
    list(GET PYHOST_TEST_VERSIONS 0 _v0)
    string(REPLACE "." "\\." _v0re "${_v0}")
    pyhost_cli_test(list_python_minor 0 ARGS --list --python-minor ${_v0} STDOUT "\n[0-9]+ +taken +${_v0re}\\."
                    ENVS "PYHOST_PYTHON_LIBRARY=")
    foreach(i IN LISTS PYHOST_TEST_INDICES)
      pyhost_matrix_entry(${i})
      string(REPLACE "." "\\." vre "${ver}")
      pyhost_cli_test(check.${tag} 0 LAUNCHER ${launcher} ARGS --check ${lib}
                      STDOUT "version +${vre}\\.[0-9]+.*optional +[0-9]+ due on this version, 0 missing.*verdict +usable.*initializes +yes")
      # --list names this library with its version ("d" for a debug build).  Discovery
      # rightly never searches a private sysroot, so its libraries are named the way a
      # user would name one from there: PYHOST_PYTHON_LIBRARY.
      set(named "")
      if(launcher)
        set(named "${lib}")
      endif()
      pyhost_cli_test(list.${tag} 0 LAUNCHER ${launcher} ARGS --list STDOUT "${vre}\\.[0-9]+d? [^\n]*${lib}"
                      ENVS "PYHOST_PYTHON_LIBRARY=${named}")
    endforeach()
    # The tools' sources in the doctor (issue 27): a uv folder made here from the first
    # pyenv entry (uv's folder name, the library hard-linked, the stdlib linked beside),
    # listed with its source in --list --json, and named by --check.
    foreach(i IN LISTS PYHOST_TEST_INDICES)
      pyhost_matrix_entry(${i})
      if(launcher OR NOT lib MATCHES "/versions/([0-9]+\\.[0-9]+\\.[0-9]+)/lib/")
        continue()
      endif()
      set(_full ${CMAKE_MATCH_1})
      set(_uvdir "${FIX}/uv-python")
      set(_uv "${_uvdir}/cpython-${_full}-linux-x86_64-gnu")
      get_filename_component(_libname "${lib}" NAME)
      get_filename_component(_prefix "${lib}" DIRECTORY)
      file(MAKE_DIRECTORY "${_uv}/lib")
      file(CREATE_LINK "${lib}" "${_uv}/lib/${_libname}" COPY_ON_ERROR)
      file(CREATE_LINK "${_prefix}/python${ver}" "${_uv}/lib/python${ver}" SYMBOLIC)
      string(REPLACE "." "\\." fre "${_full}")
      pyhost_cli_test(list_json_uv 0 ARGS --list --json --python-minor ${ver}
                      STDOUT "\"source\": \"uv\", \"kind\": \"library\", \"interpreter\": \"\", \"resolved\": \"[^\"]*/cpython-${fre}-linux-x86_64-gnu\""
                      ENVS "PYHOST_PYTHON_LIBRARY=" "UV_PYTHON_INSTALL_DIR=${_uvdir}")
      pyhost_cli_test(check_tool_uv 0 ARGS --check "${_uv}/lib/${_libname}"
                      STDOUT "tool +uv \\(managed Python cpython-${fre}-linux-x86_64-gnu, a python-build-standalone build\\).*initializes +yes"
                      ENVS "UV_PYTHON_INSTALL_DIR=${_uvdir}")
      pyhost_cli_test(check_tool_pyenv 0 ARGS --check "${lib}" STDOUT "tool +pyenv \\(version ${fre}\\)")
      # The same library under a free-threaded build's name (libpython3.Xt): --check,
      # --list and --python all take it for the GIL build it is (src/loader/verdict.h)
      set(_tname "${FIX}/tname/lib/libpython${ver}t.so.1.0")
      file(MAKE_DIRECTORY "${FIX}/tname/lib")
      file(CREATE_LINK "${lib}" "${_tname}" COPY_ON_ERROR)
      file(CREATE_LINK "${_prefix}/python${ver}" "${FIX}/tname/lib/python${ver}" SYMBOLIC)
      pyhost_cli_test(check_t_name_gil_build 0 ARGS --check "${_tname}"
                      STDOUT "build +release \\(GIL\\).*verdict +usable\n.*initializes +yes")
      pyhost_cli_test(list_t_name_gil_build 0 ARGS --list
                      STDOUT "\n1 +taken +${fre} [^\n]*libpython${ver}t\\.so\\.1\\.0"
                      ENVS "PYHOST_PYTHON_LIBRARY=${_tname}")
      string(REGEX REPLACE "^3\\." "" _minor "${ver}")
      pyhost_cli_test(python_t_name_gil_build 0 ARGS --python "${_tname}" -e "__import__('sys').version_info[1]"
                      STDOUT "^${_minor}\n$")
      break()
    endforeach()
  endif()
endif()

pyhost_api_test_binary(test_discover_py test_discover_py.c)
pyhost_python_tests(discoverpy test_discover_py test_discover_py.c)

# The Pythons today's tools install (issue 27): uv, python-build-standalone, conda,
# pixi, mise and asdf layouts built from each matrix Python in the case's own folder.
pyhost_api_test_binary(test_discover_tools test_discover_tools.c discover_util.c)
add_dependencies(test_discover_tools static_python_fixture)
pyhost_python_tests(discovertools test_discover_tools test_discover_tools.c "$<TARGET_FILE:static_python_fixture>")

# One verdict on a library (src/loader/verdict.h): the same odd files put before
# pyhost_inspect_library, pyhost_discover and pyhost_init, which must agree.
pyhost_api_test_binary(test_verdict_files test_verdict_files.c verdict_judges.c)
add_dependencies(test_verdict_files ${PYHOST_FIXTURE_TARGETS} fake_debug_name)
pyhost_unit_tests(verdict test_verdict_files test_verdict_files.c "${FIX}" "${PYHOST_PY2_LIB}"
                  "${PYHOST_PY_EXECUTABLE}")
pyhost_api_test_binary(test_verdict test_verdict.c verdict_judges.c)
pyhost_python_tests(verdict test_verdict test_verdict.c)
