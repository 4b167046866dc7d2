# The `pyhost` command as a new user meets it (issue 26, items 5 to 9): a program
# given where a library is expected, a bare interpreter name, --check of things that
# are not libraries, a broken PYHOST_PYTHON_LIBRARY in --list, the version text and the
# venv in --info.  Included from tests/CMakeLists.txt; pyhost_cli_test is in
# cli_tests.cmake.
if(CMAKE_CROSSCOMPILING)
  return()
endif()

# --check prints only what it found, and the reason pyhost_init gives
pyhost_cli_test(check_missing_only_found 1 ARGS --check ${FIX}/nope.so
                STDOUT "verdict +PYHOST_NOTFOUND.*initializes +no: cannot load Python library [^\n]*nope.so: no such file"
                STDOUT_NOT "\n(version|build|architecture|required|optional|stdlib) ")
pyhost_cli_test(check_text_file_only_found 1 ARGS --check ${FIX}/textfile.so
                STDOUT "initializes +no: cannot load Python library" STDOUT_NOT "\n(build|required|optional) ")
pyhost_cli_test(check_directory_only_found 1 ARGS --check ${FIX}/libpython3.99.so
                STDOUT "initializes +no: [^\n]*it is a directory" STDOUT_NOT "\n(build|required|optional) ")
pyhost_cli_test(check_bare_name_says_why 1 ARGS --check libpython3.99.so.1.0
                STDOUT "initializes +no: [^\n]*a bare name \\(no directory\\), which the system loader searched for"
                STDOUT_NOT "\n(real path|architecture|build) ")

# a broken binding source is named as the cause of "no candidate"
pyhost_cli_test(list_broken_env_library 1 ARGS --list ENVS "PYHOST_PYTHON_LIBRARY=${FIX}/nope.so"
                STDOUT "#1 \\(PYHOST_PYTHON_LIBRARY\\) is binding.*no candidate is acceptable: #1, PYHOST_PYTHON_LIBRARY [^\n]*nope.so: no such file; it is binding")
if(PYHOST_PY2_LIB)
  pyhost_cli_test(python2_env_library_tagged 1 ARGS -e 1 ENVS "PYHOST_PYTHON_LIBRARY=${PYHOST_PY2_LIB}"
                  STDERR "\\(from PYHOST_PYTHON_LIBRARY\\): it is Python 2\\.7")
endif()

# a relative interpreter path with a directory is still refused
pyhost_cli_test(interpreter_dot_relative 1 ARGS --interpreter ./python3 -e 1 ENVS "PYHOST_PYTHON_LIBRARY="
                STDERR "\\./python3 is a relative path")
pyhost_cli_test(interpreter_bare_name_missing 1 ARGS --interpreter no-such-python-here -e 1
                ENVS "PYHOST_PYTHON_LIBRARY=" STDERR "no-such-python-here is not on PATH")

foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  string(REPLACE "3." "" minor "${ver}")
  # one line per field, whatever the version text holds (3.6's has a newline)
  pyhost_cli_test(info_lines.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} --info
                  STDOUT "^python   [^\n]+\nlibrary  [^\n]+\nhome     [^\n]+\nvenv     none\nbuild    [^\n]+\n$")
  pyhost_cli_test(check_version_one_line.${tag} 0 LAUNCHER ${launcher} ARGS --check ${lib}
                  STDOUT "\nversion +${ver}[^\n]+\nbuild +")
  # the interpreter beside a pyenv-style library (prefix/lib/libpython -> prefix/bin/python3.X)
  get_filename_component(_prefix "${lib}" DIRECTORY)
  get_filename_component(_prefix "${_prefix}" DIRECTORY)
  set(_exe "${_prefix}/bin/python${ver}")
  if(launcher OR NOT EXISTS "${_exe}")
    continue()
  endif()
  string(REPLACE "." "\\." vre "${ver}")
  pyhost_cli_test(python_given_interpreter.${tag} 1 ARGS --python ${_exe} -e 1
                  STDERR "it is a program \\(a position-independent executable\\), not a shared library; it is a Python interpreter, whose library is [^\n:]*libpython${vre}[^\n:]*: give pyhost that library, or this program as the interpreter \\(pyhost --interpreter")
  pyhost_cli_test(check_given_interpreter.${tag} 1 ARGS --check ${_exe}
                  STDOUT "verdict +PYHOST_NOLIB: [^\n]*it is a program [^\n]*whose library is [^\n]*libpython${vre}")
  pyhost_cli_test(interpreter_bare_name.${tag} 0 ARGS --interpreter python${ver} -e "sys.version_info[:2]"
                  STDOUT "^\\(3, ${minor}\\)\n$" ENVS "PYHOST_PYTHON_LIBRARY=" "PATH=${_prefix}/bin")
  if(tag STREQUAL PYHOST_QUICK_TAG)
    # a venv made from it: --info names the venv, --check of its python names the library
    set(_venv "${CMAKE_CURRENT_BINARY_DIR}/cli-venv")
    add_test(NAME cli.make_venv COMMAND ${_exe} -m venv --without-pip --clear ${_venv})
    set_tests_properties(cli.make_venv PROPERTIES LABELS cli FIXTURES_SETUP cli_venv)
    pyhost_cli_test(info_venv 0 ARGS --interpreter ${_venv}/bin/python --info
                    STDOUT "\nvenv     ${_venv}\n" ENVS "PYHOST_PYTHON_LIBRARY=")
    pyhost_cli_test(check_venv_python 1 ARGS --check ${_venv}/bin/python
                    STDOUT "verdict +PYHOST_NOLIB: [^\n]*it is a program [^\n]*whose library is [^\n]*libpython${vre}")
    set_tests_properties(cli.info_venv cli.check_venv_python PROPERTIES FIXTURES_REQUIRED cli_venv)
  endif()
endforeach()
