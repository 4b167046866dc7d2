# Tests of a cross build (Windows, mingw-w64), run through CMAKE_CROSSCOMPILING_EMULATOR
# (wine64; see cmake/toolchain-mingw-w64-x86_64.cmake).  Included from
# tests/CMakeLists.txt instead of the native tests: no Python for Windows is on the
# build machine, so this covers what needs none.  The unit cases run as they are; the
# loader is driven through the CLI with fixture DLLs: LoadLibraryExW, its error text,
# the UTF-8 to UTF-16 path conversion (a non-ASCII directory) and the checks pyhost
# makes before Python starts.
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(STATUS "pyhost: cross build without an emulator: tests are built, not run")
endif()

pyhost_test_binary(test_unit test_unit.c)
pyhost_unit_tests(unit test_unit test_unit.c)
pyhost_test_binary(test_libcheck test_libcheck.c)
pyhost_unit_tests(libcheck test_libcheck test_libcheck.c)

# The DLL exports exactly the PYHOST_API functions (the .so's check, on the export table).
if(CMAKE_OBJDUMP)
  add_test(NAME abi.dll_exports_match_header COMMAND ${CMAKE_COMMAND} -DOBJDUMP=${CMAKE_OBJDUMP}
    -DLIB=$<TARGET_FILE:pyhost> -DHEADER=${PROJECT_SOURCE_DIR}/include/pyhost.h
    -P ${CMAKE_CURRENT_SOURCE_DIR}/check_exports.cmake)
  set_tests_properties(abi.dll_exports_match_header PROPERTIES LABELS "unit;win32")
endif()

# Every platform file for Windows (src/platform/*_win32.c) is part of this build.
file(GLOB _win32_sources RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/src/*/*_win32.c")
set(_not_built ${_win32_sources})
list(REMOVE_ITEM _not_built ${pyhost_sources})
add_test(NAME win32.every_win32_source_is_built
  COMMAND ${CMAKE_COMMAND} -E echo "not built: [${_not_built}] of [${_win32_sources}]")
set_tests_properties(win32.every_win32_source_is_built PROPERTIES LABELS "unit;win32"
  PASS_REGULAR_EXPRESSION "not built: \\[\\] of \\[src/")

if(NOT PYHOST_BUILD_CLI OR NOT CMAKE_CROSSCOMPILING_EMULATOR)
  return()
endif()

set(FIX "${CMAKE_CURRENT_BINARY_DIR}/fixtures")
set(UNI "${FIX}/pyhöst-ünïcode") # a directory whose name is not ASCII
file(MAKE_DIRECTORY "${FIX}/python399.dll" "${UNI}")
file(WRITE "${FIX}/textfile.dll" "This is a text file with a library's name, long enough that the loader reads its header and rejects it.\n")
# Wine maps drive Z: to the Unix root: Z:/work/... is an absolute Windows path.
set(WFIX "Z:${FIX}")
set(WUNI "Z:${UNI}")

function(pyhost_fake_dll name)
  cmake_parse_arguments(F "" "VERSION;OUTPUT_DIR;OUTPUT_NAME" "DEFS" ${ARGN})
  add_library(${name} SHARED fixtures/fakepython.c)
  set(defs ${F_DEFS})
  if(F_VERSION)
    list(APPEND defs "FAKE_VERSION=\"${F_VERSION}\"")
  endif()
  target_compile_definitions(${name} PRIVATE ${defs})
  if(NOT F_OUTPUT_DIR)
    set(F_OUTPUT_DIR "${FIX}")
  endif()
  if(NOT F_OUTPUT_NAME)
    set(F_OUTPUT_NAME ${name})
  endif()
  set_target_properties(${name} PROPERTIES PREFIX "" RUNTIME_OUTPUT_DIRECTORY "${F_OUTPUT_DIR}"
    OUTPUT_NAME ${F_OUTPUT_NAME})
  add_dependencies(pyhost_cli ${name})
endfunction()
pyhost_fake_dll(notpython)
pyhost_fake_dll(fake_missing VERSION "3.11.4 (fake, main) [MSC v.1937 64 bit (AMD64)]" DEFS FAKE_SOME)
pyhost_fake_dll(fake_old VERSION "3.5.10 (default) [MSC v.1900 64 bit (AMD64)]")
pyhost_fake_dll(fake_unicode VERSION "3.12.1 (fake) [MSC]" DEFS FAKE_SOME OUTPUT_DIR "${UNI}")
# A PEP 514 installation: python312.dll in a directory the registry names.
pyhost_fake_dll(fake_registered VERSION "3.12.4 (fake) [MSC v.1940 64 bit (AMD64)]" DEFS FAKE_SOME
  OUTPUT_DIR "${FIX}/Python312" OUTPUT_NAME python312)

# win32.<name>: `wine64 pyhost.exe ARGS`, exit code and output checked by expect.cmake
# through cli_tests.cmake's pyhost_cli_test (which puts the emulator first).
include(cli_tests.cmake)
function(pyhost_win32_cli_test name exit)
  pyhost_cli_test(win32.${name} ${exit} ENVS WINEDEBUG=-all ${ARGN})
  set_tests_properties(cli.win32.${name} PROPERTIES LABELS "unit;win32" TIMEOUT 300)
endfunction()

# a program given where a DLL belongs is named as one (pyhost.exe itself stands in for
# python.exe, which this machine does not have)
pyhost_win32_cli_test(exe_as_library 1 ARGS --python "Z:$<TARGET_FILE:pyhost_cli>" -e 1
                      STDERR "it is a program \\(an \\.exe\\), not a DLL")
pyhost_win32_cli_test(version 0 ARGS --pyhost-version
  STDOUT "^pyhost [0-9]+\\.[0-9]+\\.[0-9]+ \\(stable ABI floor 3\\.6\\)")
pyhost_win32_cli_test(missing_library 1 ARGS --python ${WFIX}/python311.dll -e 1
  STDERR "python311\\.dll: no such file")
pyhost_win32_cli_test(directory 1 ARGS --python ${WFIX}/python399.dll -e 1 STDERR "is a directory")
pyhost_win32_cli_test(text_file 1 ARGS --python ${WFIX}/textfile.dll -e 1
  STDERR "textfile\\.dll.*system loader says.*\\(error [0-9]+\\)")
pyhost_win32_cli_test(not_python 1 ARGS --python ${WFIX}/notpython.dll -e 1 STDERR "not a CPython library")
pyhost_win32_cli_test(missing_symbols 1 ARGS --python ${WFIX}/fake_missing.dll -e 1
  STDERR "stable-ABI symbols are missing for Python 3\\.11")
pyhost_win32_cli_test(too_old 1 ARGS --python ${WFIX}/fake_old.dll -e 1 STDERR "Python 3\\.5, older than 3\\.6")
# The library is found and loaded through its UTF-16 path, and the message names it in UTF-8.
pyhost_win32_cli_test(unicode_path 1 ARGS --python ${WUNI}/fake_unicode.dll -e 1
  STDERR "pyhöst-ünïcode.fake_unicode\\.dll.*stable-ABI symbols are missing for Python 3\\.12")

# Discovery reads the registry (src/platform/discover_win32.c): an InstallPath under HKCU is
# found, its python312.dll examined before anything in it runs, and passed over with
# the reason.  The entry lives in the test's wine prefix only.
add_test(NAME win32.registry_entry COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR} reg add
  "HKCU\\Software\\Python\\PythonCore\\3.12\\InstallPath" /ve /d "Z:${FIX}/Python312" /f)
set_tests_properties(win32.registry_entry PROPERTIES LABELS "unit;win32" FIXTURES_SETUP win32_registry
  ENVIRONMENT WINEDEBUG=-all)
pyhost_win32_cli_test(registry_discovery 1 ARGS --list
  STDOUT "registry.*Python312.python312\\.dll.*missing-symbols")
set_tests_properties(cli.win32.registry_discovery PROPERTIES FIXTURES_REQUIRED win32_registry)

# uv's managed Pythons on Windows (src/platform/discover_win32.c): UV_PYTHON_INSTALL_DIR, else
# %APPDATA%\uv\data\python (docs.astral.sh/uv/reference/storage), folders named
# cpython-<version>-windows-<arch>-none with the DLL at their top.
pyhost_fake_dll(fake_uv_env VERSION "3.12.4 (fake) [MSC v.1940 64 bit (AMD64)]" DEFS FAKE_SOME
  OUTPUT_DIR "${FIX}/uvwin/cpython-3.12.4-windows-x86_64-none" OUTPUT_NAME python312)
pyhost_fake_dll(fake_uv_appdata VERSION "3.13.1 (fake) [MSC v.1940 64 bit (AMD64)]" DEFS FAKE_SOME
  OUTPUT_DIR "${FIX}/appdata/uv/data/python/cpython-3.13.1-windows-x86_64-none" OUTPUT_NAME python313)
pyhost_win32_cli_test(uv_install_dir 1 ARGS --list ENVS "UV_PYTHON_INSTALL_DIR=${WFIX}/uvwin"
  STDOUT "uv +[^\n]*cpython-3\\.12\\.4-windows-x86_64-none.python312\\.dll +missing-symbols")
# wine sets %APPDATA% itself (C:\users\<user>\AppData\Roaming in the test's prefix):
# the installation is copied there by the prefix's own cmd, as the registry entry is
# made by its reg.
set(_uv_appdata "uv\\data\\python\\cpython-3.13.1-windows-x86_64-none")
string(REPLACE "/" "\\" _uv_dll "${WFIX}/appdata/uv/data/python/cpython-3.13.1-windows-x86_64-none/python313.dll")
add_test(NAME win32.uv_appdata_mkdir COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR} cmd /c mkdir "%APPDATA%\\${_uv_appdata}" "&" exit 0)
add_test(NAME win32.uv_appdata_copy COMMAND ${CMAKE_CROSSCOMPILING_EMULATOR} cmd /c copy /y "${_uv_dll}"
  "%APPDATA%\\${_uv_appdata}\\python313.dll")
set_tests_properties(win32.uv_appdata_mkdir win32.uv_appdata_copy PROPERTIES LABELS "unit;win32"
  FIXTURES_SETUP win32_uv_appdata ENVIRONMENT WINEDEBUG=-all)
set_tests_properties(win32.uv_appdata_copy PROPERTIES DEPENDS win32.uv_appdata_mkdir)
pyhost_win32_cli_test(uv_appdata 1 ARGS --list
  STDOUT "uv +[^\n]*AppData.Roaming.uv.data.python.cpython-3\\.13\\.1-windows-x86_64-none.python313\\.dll +missing-symbols")
set_tests_properties(cli.win32.uv_appdata PROPERTIES FIXTURES_REQUIRED win32_uv_appdata)


# A DLL cut short (an interrupted copy) is refused by the PE check before
# LoadLibraryExW sees it (src/loader/libcheck_pe.c); the cut copy is made at test time.
find_program(PYHOST_HEAD_EXE head)
if(PYHOST_HEAD_EXE)
  add_test(NAME win32.make_truncated_dll COMMAND ${CMAKE_COMMAND} -E env
    sh -c "head -c 1000 '${FIX}/fake_missing.dll' > '${FIX}/truncated.dll'")
  set_tests_properties(win32.make_truncated_dll PROPERTIES LABELS "unit;win32"
    FIXTURES_SETUP win32_truncated)
  pyhost_win32_cli_test(truncated_dll 1 ARGS --python ${WFIX}/truncated.dll -e 1
    STDERR "truncated\\.dll.*the file is damaged: truncated: ")
  set_tests_properties(cli.win32.truncated_dll PROPERTIES FIXTURES_REQUIRED win32_truncated)
endif()
