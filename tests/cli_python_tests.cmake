# The `pyhost` command as `python` itself (issue 38): exit statuses, sys.orig_argv and
# tracebacks, python's options, the REPL, and sys.executable naming a command that
# runs through pyhost.  pyhost hands python's command line to the runtime's own main
# (pyhost_main, docs/command.md), so most cases run the same command line through the
# matrix entry's python3.X and through pyhost and require the same exit status, stdout
# and stderr (pyhost_like_python, tests/cli_tests.cmake).  Included from
# tests/CMakeLists.txt after cli_tests.cmake and cli_first_hour_tests.cmake.
if(CMAKE_CROSSCOMPILING)
  return()
endif()

# help when no Python can be found: pyhost's own usage and the reason
pyhost_cli_test(help_without_python 1 ARGS --python ${FIX}/nope.so -h
                STDOUT "^usage: pyhost [^\n]*\npyhost's own options[^\n]*\nusage: pyhost \\[pyhost options\\]"
                STDERR "^pyhost: cannot load Python library [^\n]*nope.so: no such file")
# python's modes refuse a bad library exactly as -e does, before anything runs
pyhost_cli_test(main_missing_library 1 ARGS --python ${FIX}/nope.so -c pass STDERR "^pyhost: cannot load Python library [^\n]*nope.so: no such file")
pyhost_cli_test(main_missing_symbols 1 ARGS --python ${FIX}/libfake_missing.so -c pass STDERR "stable-ABI symbols are missing")
pyhost_cli_test(main_too_old 1 ARGS --python ${FIX}/libfake_old.so STDERR "Python 3.5, older than 3.6")
# the script --executable-wrapper writes, read back: what is not one of pyhost's options
pyhost_cli_test(executable_script_bad_line 1 ARGS --executable-script ${CMAKE_CURRENT_SOURCE_DIR}/data/run/not_a_pyhost_script -c pass
                STDERR "^pyhost: [^\n]*not_a_pyhost_script, line 3: not a pyhost option \\(one \"--name value\" a line\\)\n$")
pyhost_cli_test(executable_script_missing 1 ARGS --executable-script ${FIX}/nope-script -c pass
                STDERR "^pyhost: cannot read the executable script [^\n]*nope-script: No such file")

# What the cases below print: python's options show in these (the same for both runs).
set(SHOW "import sys\nprint(sys.flags)\nprint(sys.warnoptions, sys._xoptions)\nprint(sys.path)\nprint(sys.argv, __debug__)")
# PYTHON* variables, each with an option of its own
set(PYTHON_ENVS PYTHONOPTIMIZE=1 PYTHONWARNINGS=error::DeprecationWarning PYTHONDEVMODE=1 PYTHONSAFEPATH=1
    PYTHONNOUSERSITE=1 PYTHONPATH=/nonexistent/pyhost-test PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=7
    PYTHONUNBUFFERED=1 PYTHONVERBOSE= PYTHONINSPECT= PYTHONSTARTUP=)
set(DATA ${CMAKE_CURRENT_SOURCE_DIR}/data)
string(ASCII 255 byte_ff) # a byte no encoding of an argument decodes

foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  pyhost_python_exe(${lib} ${ver} python_exe)
  string(REPLACE "3." "" minor "${ver}")

  # ---- what everyone can check, with or without the interpreter beside the library ----
  # sys.orig_argv (3.10+): pyhost's own options left out, python's as given
  if(ver VERSION_GREATER_EQUAL 3.10)
    pyhost_cli_test(orig_argv.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} -X dev -c "import sys\nprint(sys.orig_argv)" a
                    STDOUT "^\\['[^']*/pyhost', '-X', 'dev', '-c', 'import sys\\\\nprint\\(sys\\.orig_argv\\)', 'a'\\]\n$")
  endif()
  # -h: two lines of pyhost's, then python's own help (CPython's test_cmd_line wants
  # "usage" on the first line and, from 3.11, fewer than 50 lines)
  set(not_long)
  if(ver VERSION_GREATER_EQUAL 3.11)
    set(not_long STDOUT_NOT "([^\n]*\n){50}")
  endif()
  pyhost_cli_test(help.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} -h
                  STDOUT "^usage: pyhost [^\n]*\npyhost's own options [^\n]*\nusage: [^\n]* \\[option\\] \\.\\.\\. .*-c cmd" ${not_long})

  if(NOT python_exe)
    continue()
  endif()
  # ---- 1. exit statuses: every SystemExit value and every way out ----
  pyhost_like_python(exit_false ARGS -c "import sys\nsys.exit(False)")
  pyhost_like_python(exit_true ARGS -c "import sys\nsys.exit(True)")
  pyhost_like_python(exit_int_subclass ARGS -c "import sys\nclass Code(int): pass\nsys.exit(Code(7))")
  pyhost_like_python(exit_huge ARGS -c "import sys\nsys.exit(2 ** 70)")
  pyhost_like_python(exit_huge_negative ARGS -c "import sys\nsys.exit(-(1 << 40))")
  pyhost_like_python(exit_negative ARGS -c "import sys\nsys.exit(-1)")
  pyhost_like_python(exit_none ARGS -c "import sys\nsys.exit(None)")
  pyhost_like_python(exit_object ARGS -c "import sys\nclass Why:\n    def __str__(self): return 'a reason'\nsys.exit(Why())")
  pyhost_like_python(exit_tuple ARGS -c "raise SystemExit(3, 'more')")
  pyhost_like_python(excepthook_raises ARGS -c "import sys\ndef hook(*a): raise ValueError('in the hook')\nsys.excepthook = hook\nraise KeyError('original')")
  pyhost_like_python(excepthook_exits ARGS -c "import sys\ndef hook(*a): sys.exit(5)\nsys.excepthook = hook\nraise KeyError('original')")
  pyhost_like_python(excepthook_deleted ARGS -c "import sys\ndel sys.excepthook\nraise KeyError('original')")
  pyhost_like_python(closed_stdio_at_exit ARGS -c "import os\nos.close(1)\nos.close(2)\nprint('lost')")
  # (the message names the function with its address: stderr is matched, not compared)
  pyhost_like_python(atexit_raises ARGS -c "import atexit\natexit.register(lambda: 1 / 0)" STDERR 0
                     PYHOST_STDERR "\nZeroDivisionError: division by zero\n$")
  pyhost_like_python(exit_in_thread ARGS -c "import sys, threading\nt = threading.Thread(target=sys.exit, args=(3,))\nt.start()\nt.join()\nprint('main goes on')")
  # sys.executable and the prefixes: the installation's own, as python3.X has them
  pyhost_like_python(executable_and_prefix ARGS -c "import sys\nprint(sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix)")
  # arguments that are not ASCII, decoded as that version's python decodes its own
  # (pyhost decodes them for 3.6 and 3.7, whose main takes wchar_t)
  pyhost_like_python(non_ascii_arguments_utf8 ARGS -c "import sys\nprint(ascii(sys.argv))" "café" "${byte_ff}" ENVS LC_ALL=C.UTF-8 PYTHONUTF8=)
  pyhost_like_python(non_ascii_arguments_c_locale ARGS -c "import sys\nprint(ascii(sys.argv))" "café" "${byte_ff}" ENVS LC_ALL=C PYTHONUTF8= PYTHONCOERCECLOCALE=)
  # ---- 2. tracebacks: the depth python reaches, no frame of pyhost's ----
  pyhost_like_python(recursion_depth ARGS -c "def f(): f()\nf()")
  # ---- 3. python's options, parsed by python: combined, attached, repeated, -- ----
  pyhost_like_python(options_combined ARGS -IS -c "${SHOW}" x ENVS ${PYTHON_ENVS})
  pyhost_like_python(options_attached ARGS -bb -OO -B -u -s -R -Werror -W ignore::DeprecationWarning -Wdefault
                     -X dev -Xa=b -X c "-c${SHOW}" y)
  pyhost_like_python(options_environment ARGS -c "${SHOW}" ENVS ${PYTHON_ENVS})
  pyhost_like_python(options_ignore_environment ARGS -E -c "${SHOW}" ENVS ${PYTHON_ENVS})
  pyhost_like_python(options_safe_path DIR ${DATA} ARGS -P args.py)
  pyhost_like_python(options_double_dash DIR ${DATA} ARGS -q -- args.py -c x)
  pyhost_like_python(options_skip_first_line DIR ${RUN_DATA} ARGS -x first_line.py)
  pyhost_like_python(options_hash_based_pycs ARGS --check-hash-based-pycs always -c "print('ran')")
  pyhost_like_python(option_unknown ARGS -E -z)
  pyhost_like_python(option_unknown_first_reported ARGS -a -z)
  pyhost_like_python(option_unknown_long ARGS -I --unknown-option)
  pyhost_like_python(c_without_value ARGS -c)
  pyhost_like_python(x_without_value ARGS -X)
  pyhost_like_python(version_short ARGS -V)
  pyhost_like_python(version_long ARGS --version)
  pyhost_like_python(version_verbose ARGS -VV)
  if(NOT tag MATCHES "d$") # python_exe of a debug build's entry is the release interpreter
    pyhost_like_python(help_env ARGS --help-env) # (a debug build lists more variables)
  endif()
  # ---- 4. standard input not a terminal: a script, interactive with -i/PYTHONINSPECT ----
  pyhost_like_python(no_arguments INPUT ${RUN_DATA}/answer.py ARGS)
  pyhost_like_python(inspect_option INPUT ${RUN_DATA}/inspect_input.py ARGS -i -c "x = 21")
  pyhost_like_python(inspect_environment INPUT ${RUN_DATA}/inspect_input.py ARGS -c "x = 21" ENVS PYTHONINSPECT=1)
endforeach()

# ---- 4. the REPL, through a pseudo-terminal (tests/repl_session.py) ----
# The version's own console: the new one (_pyrepl) from 3.13, the classic one before;
# history and completion through readline, Ctrl-C and Ctrl-D at the prompt.
# cli.repl_reference.* runs the same session through python3.X: what the session
# expects is python's own behaviour.
function(pyhost_repl_test name session)
  set(new_repl 0)
  if(ver VERSION_GREATER_EQUAL 3.13)
    set(new_repl 1)
  endif()
  add_test(NAME cli.${name}.${tag} COMMAND ${PYHOST_TEST_PYTHON_EXE} ${CMAKE_CURRENT_SOURCE_DIR}/repl_session.py
           ${session} ${new_repl} -- ${ARGN})
  set_tests_properties(cli.${name}.${tag} PROPERTIES LABELS "cli;${tag}" TIMEOUT 300)
endfunction()
if(PYHOST_TEST_PYTHON_EXE AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  foreach(i IN LISTS PYHOST_TEST_INDICES)
    pyhost_matrix_entry(${i})
    pyhost_python_exe(${lib} ${ver} python_exe)
    set(pyhost ${launcher} $<TARGET_FILE:pyhost_cli> --python ${lib})
    pyhost_repl_test(repl plain ${pyhost})
    pyhost_repl_test(repl_inspect_option inspect ${pyhost} -i -c "x = 21")
    pyhost_repl_test(repl_inspect_environment inspect ${CMAKE_COMMAND} -E env PYTHONINSPECT=1 ${pyhost} -c "x = 21")
    if(python_exe)
      pyhost_repl_test(repl_reference plain ${launcher} ${python_exe})
    endif()
  endforeach()
endif()

# ---- 5. sys.executable: a command that runs this same Python through pyhost ----
# tests/data/run/children.py starts children from sys.executable (subprocess, with a
# cleared environment and python's options, os.execv of sys.orig_argv, multiprocessing's
# spawn) and names the program each runs in.  A matrix entry run through a loader
# (the sysroot's ld.so) gets a script written here, given with --executable; the others
# get the one --executable-wrapper writes.
foreach(i IN LISTS PYHOST_TEST_INDICES)
  pyhost_matrix_entry(${i})
  # the script written here for a loader is a shell script: the shell drops "a-b"
  set(kept kept)
  if(launcher)
    set(kept None)
  endif()
  set(want "^parent pyhost\nsubprocess pyhost 0 None\nsubprocess, no environment pyhost 1 ${kept}\n")
  if(ver VERSION_GREATER_EQUAL 3.10)
    string(APPEND want "re-executed pyhost \\['again'\\]\nspawn pyhost\n$")
  else()
    string(APPEND want "no sys.orig_argv before 3.10\nspawn pyhost\n$")
  endif()
  if(launcher)
    set(words)
    foreach(w IN LISTS launcher)
      string(APPEND words "'${w}' ")
    endforeach()
    set(through ${CMAKE_CURRENT_BINARY_DIR}/through-pyhost/python${ver}-${tag})
    file(GENERATE OUTPUT ${through}
         CONTENT "#!/bin/sh\nexec ${words}'$<TARGET_FILE:pyhost_cli>' --python '${lib}' --executable '${through}' \"$@\"\n"
         FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
    pyhost_cli_test(executable.${tag} 0 LAUNCHER ${launcher} ARGS --python ${lib} --executable ${through}
                    ${RUN_DATA}/children.py STDOUT "${want}")
    if(NOT _loader_refusal)
      set(_loader_refusal 1)
      # the loader's options cannot be read back: --executable-wrapper says so
      pyhost_cli_test(executable_wrapper_through_loader 1 LAUNCHER ${launcher} ARGS --python ${lib} --executable-wrapper -c pass
                      STDERR "^pyhost: --executable-wrapper: pyhost runs through the dynamic loader [^\n]*ld-linux[^\n]*; write a script")
    endif()
  else()
    pyhost_cli_test(executable_wrapper.${tag} 0 ARGS --python ${lib} --executable-wrapper ${RUN_DATA}/children.py
                    STDOUT "${want}" ENVS XDG_CACHE_HOME=${CMAKE_CURRENT_BINARY_DIR}/executables-cache)
    if(NOT _wrapper_refusal)
      set(_wrapper_refusal 1)
      # no folder to keep the script in: pyhost says so and runs nothing
      pyhost_cli_test(executable_wrapper_without_folder 1 ARGS --python ${lib} --executable-wrapper -c "print('ran')"
                      STDOUT_NOT "ran" ENVS XDG_CACHE_HOME=relative HOME=relative
                      STDERR "^pyhost: --executable-wrapper: neither XDG_CACHE_HOME nor HOME names a folder")
    endif()
  endif()
endforeach()
# In a venv the script goes into its bin/: Python makes the venv sys.prefix, for the
# children too (the venv is cli_first_hour_tests.cmake's, made from the quick Python)
set(_venv "${CMAKE_CURRENT_BINARY_DIR}/cli-venv")
if(TEST cli.make_venv)
  pyhost_cli_test(executable_wrapper_venv 0 ARGS --interpreter ${_venv}/bin/python --executable-wrapper -c
                  "import os, subprocess, sys\nchild = subprocess.check_output([sys.executable, '-c', 'import sys\\nprint(sys.prefix)'])\nprint(os.path.dirname(sys.executable) == os.path.join(sys.prefix, 'bin'), sys.prefix != sys.base_prefix, child.decode().strip() == sys.prefix)"
                  STDOUT "^True True True\n$" ENVS "PYHOST_PYTHON_LIBRARY=")
  set_tests_properties(cli.executable_wrapper_venv PROPERTIES FIXTURES_REQUIRED cli_venv)
endif()
