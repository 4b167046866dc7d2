# The `pyhost` command, run as a user would, once per Python in the matrix and once per
# bad input.  Included from tests/CMakeLists.txt.
function(pyhost_cli_test name exit)
  cmake_parse_arguments(T "" "STDOUT;STDOUT_NOT;STDERR" "ARGS;ENVS;LAUNCHER" ${ARGN})
  set(args -DEXIT=${exit})
  if(DEFINED T_STDOUT)
    list(APPEND args "-DSTDOUT=${T_STDOUT}")
  endif()
  if(DEFINED T_STDOUT_NOT)
    list(APPEND args "-DSTDOUT_NOT=${T_STDOUT_NOT}")
  endif()
  if(DEFINED T_STDERR)
    list(APPEND args "-DSTDERR=${T_STDERR}")
  endif()
  # ";" would split the -D arguments: expect.cmake turns "@@" back into list separators
  # (a cross build runs the command through its emulator, wine64: tests/cross_tests.cmake)
  # (a matrix entry's launcher, the sysroot's loader, comes first: cmake/PyhostTestPythons.cmake)
  string(REPLACE ";" "@@" cmd "${CMAKE_CROSSCOMPILING_EMULATOR};${T_LAUNCHER};$<TARGET_FILE:pyhost_cli>;${T_ARGS}")
  string(REGEX REPLACE "^(@@)+" "" cmd "${cmd}")
  string(REPLACE ";" "@@" envs "${T_ENVS}")
  add_test(NAME cli.${name} COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" "-DENVS=${envs}" ${args}
           -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
  set_tests_properties(cli.${name} PROPERTIES LABELS cli TIMEOUT 120)
endfunction()
if(CMAKE_CROSSCOMPILING)
  return() # cross_tests.cmake uses the function, with its own Windows cases
endif()

# pyhost's own version and usage (-V, --version, -h and --help are python's: below)
pyhost_cli_test(pyhost_version 0 ARGS --pyhost-version STDOUT "^pyhost [0-9]+\\.[0-9]+\\.[0-9]+ \\(stable ABI floor 3\\.6\\)")
pyhost_cli_test(pyhost_help 0 ARGS --pyhost-help STDOUT "^usage: pyhost \\[pyhost options\\] \\[python's options and arguments\\]\n.*--executable-wrapper.*--interpreter PATH")
# one of pyhost's options without its value gets one line naming it (python's own,
# such as -c alone, get python's message: cli.like_python.c_without_value.*)
# python's own help, after pyhost's prelude, found past an option's value as python
# reads its command line (-W ignore: "ignore" is -W's, so --help is an option)
pyhost_cli_test(python_help_after_an_option_value 0 ARGS -W ignore --help
  STDOUT "^usage: pyhost \\[pyhost options\\] \\[python's options and arguments, as below\\]\n")
pyhost_cli_test(python_help_after_a_joined_value 0 ARGS -Xdev -h
  STDOUT "^usage: pyhost \\[pyhost options\\] \\[python's options and arguments, as below\\]\n")
pyhost_cli_test(option_without_value 1 ARGS --python STDERR "^pyhost: this option needs a value: --python; pyhost --pyhost-help lists pyhost's options\n$")
# pyhost's modes take no python arguments
pyhost_cli_test(eval_with_python_arguments 1 ARGS -e 1 -X dev STDERR "^pyhost: -e takes no python arguments \\(-X\\); pyhost --pyhost-help")
pyhost_cli_test(executable_and_wrapper 1 ARGS --executable /x --executable-wrapper -c 1 STDERR "^pyhost: --executable and --executable-wrapper exclude each other;")
pyhost_cli_test(json_alone 1 ARGS --json STDERR "^pyhost: --json goes with --list \\(pyhost --list --json\\); pyhost --pyhost-help")
pyhost_cli_test(missing_library 1 ARGS --python ${FIX}/nope.so -e 1 STDERR "pyhost: cannot load Python library .*nope.so: no such file")
pyhost_cli_test(directory 1 ARGS --python ${FIX}/libpython3.99.so -e 1 STDERR "is a directory")
pyhost_cli_test(text_file 1 ARGS --python ${FIX}/textfile.so -e 1 STDERR "invalid ELF header")
pyhost_cli_test(not_python 1 ARGS --python ${FIX}/libnotpython.so -e 1 STDERR "not a CPython library")
pyhost_cli_test(missing_symbols 1 ARGS --python ${FIX}/libfake_missing.so -e 1 STDERR "stable-ABI symbols are missing")
pyhost_cli_test(free_threaded 1 ARGS --python ${FIX}/libfake_ftsymbol.so -e 1 STDERR "free-threaded")
pyhost_cli_test(too_old 1 ARGS --python ${FIX}/libfake_old.so -e 1 STDERR "Python 3.5, older than 3.6")
if(PYHOST_PY2_LIB)
  pyhost_cli_test(python2 1 ARGS --python ${PYHOST_PY2_LIB} -e 1 STDERR "is Python 2.7")
endif()

foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  string(REPLACE "3." "" minor "${ver}")
  pyhost_cli_test(eval.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} -e "sys.version_info[:2]" STDOUT "^\\(3, ${minor}\\)\n$")
  pyhost_cli_test(env_library.${tag} 0 LAUNCHER ${launcher} ARGS -e "6*7" STDOUT "^42\n$" ENVS "PYHOST_PYTHON_LIBRARY=${lib}")
  pyhost_cli_test(info.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} --info STDOUT "python   ${ver}\\.[0-9]+\nlibrary  /")
  pyhost_cli_test(exec_exit_code.${tag} 3 LAUNCHER ${launcher} ARGS --python ${lib} -c "raise SystemExit(3)")
  pyhost_cli_test(exec_exit_message.${tag} 1 LAUNCHER ${launcher} ARGS --python ${lib} -c "import sys\nsys.exit('giving up')" STDERR "giving up")
  pyhost_cli_test(exec_exception.${tag} 1 LAUNCHER ${launcher} ARGS --python ${lib} -c "def f(): raise ValueError('boom')\nf()"
                  STDERR "Traceback.*ValueError: boom")
  pyhost_cli_test(syntax_error.${tag} 1 LAUNCHER ${launcher} ARGS --python ${lib} -e "1 +" STDERR "SyntaxError")
  pyhost_cli_test(script.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} ${CMAKE_CURRENT_SOURCE_DIR}/data/args.py one two
                  STDOUT "args.py', 'one', 'two'\\]")
endforeach()

# ---- the command behaves as `python` for scripts (issue 26, item 10) ----
# Each case runs through the matrix entry's own python3.X and through pyhost, and the
# two must agree (tests/like_python.cmake).  pyhost_python_exe finds the interpreter
# beside a library: PREFIX/bin/python3.X for PREFIX/lib[/<multiarch>]/libpython3.X.so.
function(pyhost_python_exe lib ver out)
  get_filename_component(dir "${lib}" DIRECTORY)
  set(${out} "" PARENT_SCOPE)
  foreach(up ".." "../..")
    get_filename_component(exe "${dir}/${up}/bin/python${ver}" ABSOLUTE)
    if(EXISTS "${exe}")
      set(${out} "${exe}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(RUN_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/run)
# a zip with __main__.py, as zipapp makes
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/zipapp)
execute_process(COMMAND ${CMAKE_COMMAND} -E tar cf ${CMAKE_CURRENT_BINARY_DIR}/zipapp/app.zip --format=zip __main__.py
                WORKING_DIRECTORY ${RUN_DATA}/zipsrc)

add_executable(locale_host locale_host.c)
target_link_libraries(locale_host PRIVATE pyhost ${CMAKE_DL_LIBS})
target_compile_options(locale_host PRIVATE ${PYHOST_WARNINGS})

function(pyhost_like_python name)
  cmake_parse_arguments(T "" "INPUT;DIR;STDERR;PYHOST_STDERR" "ARGS;ENVS;PIPE;PYHOST" ${ARGN})
  set(args)
  foreach(v INPUT DIR STDERR PYHOST_STDERR)
    if(DEFINED T_${v})
      list(APPEND args "-D${v}=${T_${v}}")
    endif()
  endforeach()
  foreach(v ARGS ENVS PIPE)
    string(REPLACE ";" "@@" at_${v} "${T_${v}}")
  endforeach()
  if(NOT T_PYHOST)
    set(T_PYHOST $<TARGET_FILE:pyhost_cli> --python ${lib})
  endif()
  string(REPLACE ";" "@@" python_at "${launcher};${python_exe}")
  string(REPLACE ";" "@@" pyhost_at "${launcher};${T_PYHOST}")
  string(REGEX REPLACE "^(@@)+" "" python_at "${python_at}")
  string(REGEX REPLACE "^(@@)+" "" pyhost_at "${pyhost_at}")
  add_test(NAME cli.like_python.${name}.${tag}
           COMMAND ${CMAKE_COMMAND} "-DPYTHON=${python_at}" "-DPYHOST=${pyhost_at}" "-DARGS=${at_ARGS}"
                   "-DENVS=${at_ENVS}" "-DPIPE=${at_PIPE}" ${args} -P ${CMAKE_CURRENT_SOURCE_DIR}/like_python.cmake)
  set_tests_properties(cli.like_python.${name}.${tag} PROPERTIES LABELS "cli;${tag}" TIMEOUT 120)
endfunction()

foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  pyhost_python_exe(${lib} ${ver} python_exe)
  if(NOT python_exe)
    continue()
  endif()
  # a library copied without its interpreter: no unrelated python3 from PATH as
  # sys.executable
  get_filename_component(python_dir "${python_exe}" DIRECTORY)
  string(REPLACE ";" "@@" pyhost_at "${launcher};$<TARGET_FILE:pyhost_cli>")
  string(REGEX REPLACE "^(@@)+" "" pyhost_at "${pyhost_at}")
  add_test(NAME cli.no_unrelated_executable.${tag}
           COMMAND ${CMAKE_COMMAND} "-DPYHOST=${pyhost_at}" -DLIB=${lib} -DVER=${ver} -DPATH_DIR=${python_dir}
                   -DDIR=${CMAKE_CURRENT_BINARY_DIR}/app_copy.${tag} -P ${CMAKE_CURRENT_SOURCE_DIR}/app_copy.cmake)
  set_tests_properties(cli.no_unrelated_executable.${tag} PROPERTIES LABELS "cli;${tag}" TIMEOUT 120)
  # the script's folder first on sys.path, __file__ (absolute from 3.9), its loader
  pyhost_like_python(script DIR ${RUN_DATA} ARGS app/main.py one two)
  # -c: '' first on sys.path, every argument kept (no ";" in code: it splits CMake lists)
  set(hundred)
  foreach(n RANGE 1 100)
    list(APPEND hundred ${n})
  endforeach()
  pyhost_like_python(c_argv ARGS -c "import sys\nprint(len(sys.argv), repr(sys.path[0]), sys.argv[-1])" ${hundred})
  pyhost_like_python(excepthook DIR ${RUN_DATA} ARGS hook.py)
  pyhost_like_python(exit_message ARGS -c "import sys\nsys.exit('m')")
  pyhost_like_python(exit_code ARGS -c "raise SystemExit(260)")
  pyhost_like_python(uncaught DIR ${RUN_DATA} ARGS -c "def f(): 1/0\nf()")
  pyhost_like_python(keyboard_interrupt ARGS -c "raise KeyboardInterrupt")
  pyhost_like_python(stdin INPUT ${RUN_DATA}/mod_here.py DIR ${RUN_DATA} ARGS - x y)
  pyhost_like_python(module DIR ${RUN_DATA} ARGS -m mod_here x y)
  pyhost_like_python(missing_module DIR ${RUN_DATA} ARGS -m no_such_module_here)
  pyhost_like_python(directory DIR ${RUN_DATA} ARGS pkgdir x)
  pyhost_like_python(zip DIR ${CMAKE_CURRENT_BINARY_DIR}/zipapp ARGS app.zip x)
  pyhost_like_python(directory_without_main DIR ${RUN_DATA} ARGS app)
  pyhost_like_python(missing_script DIR ${RUN_DATA} ARGS no_such_script.py)
  # SIGPIPE ignored as python does: BrokenPipeError, not death by the signal
  pyhost_like_python(broken_pipe DIR ${RUN_DATA} ARGS pipe.py PIPE head -1)
  # uncaught there
  pyhost_like_python(broken_pipe_uncaught ARGS -c "print('x' * 1000000)" PIPE head -c 1)
  # stdout that cannot be flushed at exit (a pipe nobody reads): python's status 120
  pyhost_like_python(flush_fails_at_exit ARGS -c "import os\nr, w = os.pipe()\nos.close(r)\nos.dup2(w, 1)\nprint('x')"
                     ENVS PYTHONUNBUFFERED=)
  # LC_CTYPE from the environment, and the UTF-8 mode in the C locale (PEP 538/540)
  pyhost_like_python(encoding_c ARGS ${RUN_DATA}/encoding.py flags subprocess ENVS LC_ALL=C PYTHONUTF8= PYTHONCOERCECLOCALE=)
  pyhost_like_python(encoding_utf8 ARGS ${RUN_DATA}/encoding.py flags subprocess ENVS LC_ALL=C.UTF-8 PYTHONUTF8= PYTHONCOERCECLOCALE=)
  # PEP 538 (3.7+): a C LC_CTYPE without LC_ALL becomes C.UTF-8, for child processes too
  pyhost_like_python(coerce_c_locale ARGS -c "import locale, os, subprocess, sys\nprint(os.environ.get('LC_CTYPE'), locale.setlocale(locale.LC_CTYPE), getattr(sys.flags, 'utf8_mode', None))\nsubprocess.call(['sh', '-c', 'echo child $LC_CTYPE'])"
                     ENVS LC_ALL= LC_CTYPE= LANG=C PYTHONCOERCECLOCALE= PYTHONUTF8= PYTHONUNBUFFERED=)
  # a library host that never calls setlocale gets the encoding python has, its own
  # locale untouched (the UTF-8 mode flag itself may differ in a UTF-8 locale)
  set(host $<TARGET_FILE:locale_host> ${lib})
  pyhost_like_python(host_encoding_c PYHOST ${host} ARGS ${RUN_DATA}/encoding.py flags ENVS LC_ALL=C PYTHONUTF8=
                     STDERR 0 PYHOST_STDERR "^host LC_CTYPE C\n$")
  # 3.6 has no UTF-8 mode, and 3.7's Py_UTF8Mode is outside the stable ABI (3.8): a host
  # in the C locale gives them ASCII when the environment names a UTF-8 locale
  # (docs/configuration.md)
  if(ver VERSION_GREATER_EQUAL 3.8)
    pyhost_like_python(host_encoding_utf8 PYHOST ${host} ARGS ${RUN_DATA}/encoding.py ENVS LC_ALL=C.UTF-8 PYTHONUTF8=
                     STDERR 0 PYHOST_STDERR "^host LC_CTYPE C\n$")
  endif()
  pyhost_like_python(host_encoding_pythonutf8 PYHOST ${host} ARGS ${RUN_DATA}/encoding.py flags ENVS LC_ALL=C PYTHONUTF8=1
                     STDERR 0 PYHOST_STDERR "^host LC_CTYPE C\n$")
  # 3.15's init keeps its default UTF-8 mode whatever an embedder asks (docs/configuration.md)
  set(locale_encoding "preferred ascii\nopen ascii\n.*read fails")
  if(ver VERSION_LESS 3.15)
    pyhost_like_python(host_encoding_pythonutf8_off PYHOST ${host} ARGS ${RUN_DATA}/encoding.py flags ENVS LC_ALL=C PYTHONUTF8=0
                       STDERR 0 PYHOST_STDERR "^host LC_CTYPE C\n$")
  else()
    set(locale_encoding "preferred utf-8\nopen utf-8\n")
  endif()
  # the switch back to the host's locale: ASCII in the C locale
  string(REPLACE ";" "@@" host_at "${launcher};${host};${RUN_DATA}/encoding.py;--locale-encoding")
  string(REGEX REPLACE "^(@@)+" "" host_at "${host_at}")
  add_test(NAME cli.host_locale_encoding.${tag}
           COMMAND ${CMAKE_COMMAND} "-DCMD=${host_at}" "-DENVS=LC_ALL=C.UTF-8" -DEXIT=0
                   "-DSTDOUT=${locale_encoding}" -P ${CMAKE_CURRENT_SOURCE_DIR}/expect.cmake)
  set_tests_properties(cli.host_locale_encoding.${tag} PROPERTIES LABELS "cli;${tag}" TIMEOUT 120)
endforeach()

# ---- fidelity: CPython's own tests through the command (label `fidelity`) ----
# The same modules through python3.X -m test and pyhost --executable-wrapper -m test
# must give the same counts (tests/fidelity.cmake): with sys.executable naming a
# command that runs through pyhost, every child those tests start runs through pyhost
# too (test_cmd_line and test_cmd_line_script start hundreds).  About 90 s a run on
# 3.13 here, so two runs a Python: the tests are left out of the default test presets;
# .ci/run's own step runs PYHOST_FIDELITY_PYTHONS (`ctest -L fidelity` runs them by
# hand).  test_ssl (40 s more) is left out for time.
set(PYHOST_FIDELITY_PYTHONS "py3.8;py3.12;py3.13" CACHE STRING "Matrix tags whose CPython tests run through pyhost (label fidelity)")
set(PYHOST_FIDELITY_MODULES test_json test_re test_sys test_os test_subprocess test_signal
    test_cmd_line test_cmd_line_script test_asyncio.test_base_events)
# test methods that differ for a reason of the environment, skipped in both runs
# (docs/getting-started.md says why each one is listed)
set(PYHOST_FIDELITY_IGNORE test.test_subprocess.POSIXProcessTestCase.test_user
  # a race of CPython's own test (docs/getting-started.md): 0.1 s against 0.01 s
  test.test_asyncio.test_base_events.BaseEventLoopTests.test_shutdown_default_executor_timeout)
foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  pyhost_python_exe(${lib} ${ver} python_exe)
  if(NOT python_exe OR NOT tag IN_LIST PYHOST_FIDELITY_PYTHONS)
    continue()
  endif()
  string(REPLACE ";" "@@" python_at "${launcher};${python_exe}")
  string(REPLACE ";" "@@" pyhost_at "${launcher};$<TARGET_FILE:pyhost_cli>;--python;${lib};--executable-wrapper")
  string(REGEX REPLACE "^(@@)+" "" python_at "${python_at}")
  string(REGEX REPLACE "^(@@)+" "" pyhost_at "${pyhost_at}")
  string(REPLACE ";" "@@" modules_at "${PYHOST_FIDELITY_MODULES}")
  string(REPLACE ";" "@@" ignore_at "${PYHOST_FIDELITY_IGNORE}")
  add_test(NAME fidelity.cpython_tests.${tag}
           COMMAND ${CMAKE_COMMAND} "-DPYTHON=${python_at}" "-DPYHOST=${pyhost_at}" "-DMODULES=${modules_at}"
                   "-DIGNORE=${ignore_at}" -DOUT=${CMAKE_CURRENT_BINARY_DIR}/fidelity.${tag}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/fidelity.cmake)
  # not a py3.X label: .ci/run's per-Python steps must not pick it up; the script
  # --executable-wrapper writes goes into the build tree
  set_tests_properties(fidelity.cpython_tests.${tag} PROPERTIES LABELS fidelity TIMEOUT 900
                       ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_CURRENT_BINARY_DIR}/fidelity-executables")
endforeach()
