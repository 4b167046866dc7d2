# The Python matrix for the tests: every Python 3 shared library found at configure
# time, one entry per installation, oldest first.
#
# Sources: PYHOST_TEST_PYTHONS (a list of library paths), pyenv's versions under
# PYENV_ROOT (or ~/.pyenv), the system's /usr/lib[/<multiarch>] and /usr/local/lib, and
# the Debian sid sysroot that tools/sysroot.sh makes (PYHOST_SYSROOT): the newest
# releases and their debug builds, run through that sysroot's own loader.
# Results:
#   PYHOST_TEST_LIBS      library paths (real paths, no duplicates)
#   PYHOST_TEST_TAGS      matching test-name tags: py3.11, py3.11-system, py3.15, py3.15d, ...
#   PYHOST_TEST_VERSIONS  matching "3.11"
#   PYHOST_TEST_INCLUDES  matching header directories ("" when none)
#   PYHOST_TEST_NUMPY     1 where a Debian numpy for that Python is installed, else 0
#   PYHOST_TEST_LAUNCHER_<i>  the command prefix entry i's programs run under (a list;
#                         empty but for sysroot entries)
#   PYHOST_TEST_DEBUG_COUNT   how many entries are debug builds (sys.abiflags "d")
#   PYHOST_PY2_LIB        a Python 2 library for the bad-input tests ("" when none)
set(PYHOST_TEST_PYTHONS "" CACHE STRING "Extra Python libraries to run the matrix against")
# The newest minor the project tests (tools/sysroot.sh brings it): CI requires every
# minor from the floor to it, and docs.version_ranges requires every "3.6 to 3.N" in
# README.md and docs/ to name it.  The one place to change when a minor is added.
set(PYHOST_NEWEST_TESTED_MINOR "3.15")

# The sysroot: the environment's, else tools/sysroot.sh's default when it finished there.
set(_sysroot_default "$ENV{PYHOST_SYSROOT}")
if(NOT _sysroot_default)
  set(_cache "$ENV{XDG_CACHE_HOME}")
  if(NOT _cache)
    set(_cache "$ENV{HOME}/.cache")
  endif()
  if(EXISTS "${_cache}/pyhost/sysroot-sid/.pyhost-stamp")
    set(_sysroot_default "${_cache}/pyhost/sysroot-sid")
  endif()
endif()
set(PYHOST_SYSROOT "${_sysroot_default}" CACHE PATH
    "Debian sid sysroot made by tools/sysroot.sh: its Pythons join the matrix (empty: none)")
set(_sysroot_libdir "${PYHOST_SYSROOT}/usr/lib/x86_64-linux-gnu")
set(_sysroot_launcher)
if(PYHOST_SYSROOT)
  if(NOT EXISTS "${PYHOST_SYSROOT}/.pyhost-stamp")
    message(FATAL_ERROR "PYHOST_SYSROOT=${PYHOST_SYSROOT} is not a complete sysroot (no .pyhost-stamp): "
      "run tools/sysroot.sh, or configure with -DPYHOST_SYSROOT= to leave it out")
  endif()
  # Its libraries need sid's glibc: every program of those entries starts under sid's
  # loader, which also finds sid's libc, libm, libexpat... (no chroot needed).
  set(_sysroot_launcher "${PYHOST_SYSROOT}/lib64/ld-linux-x86-64.so.2" --library-path
      "${PYHOST_SYSROOT}/lib/x86_64-linux-gnu:${_sysroot_libdir}")
endif()

set(_globs)
set(_pyenv "$ENV{PYENV_ROOT}")
if(NOT _pyenv AND EXISTS "$ENV{HOME}/.pyenv/versions")
  set(_pyenv "$ENV{HOME}/.pyenv")
endif()
if(_pyenv)
  list(APPEND _globs "${_pyenv}/versions/*/lib/libpython*.so.1.0" "${_pyenv}/versions/*/lib/libpython*.dylib")
endif()
list(APPEND _globs /usr/lib/libpython*.so.1.0 /usr/lib/*/libpython*.so.1.0 /usr/local/lib/libpython*.so.1.0)
file(GLOB _found ${_globs})
set(_sysroot_found)
if(PYHOST_SYSROOT)
  file(GLOB _sysroot_found "${_sysroot_libdir}/libpython3.*.so.1.0")
endif()
set(_all ${PYHOST_TEST_PYTHONS} ${_found} ${_sysroot_found})

set(PYHOST_TEST_LIBS)
set(PYHOST_TEST_TAGS)
set(PYHOST_TEST_VERSIONS)
set(PYHOST_TEST_INCLUDES)
set(PYHOST_TEST_NUMPY)
set(PYHOST_PY2_LIB "")
set(_seen)
set(_rows)
foreach(lib IN LISTS _all)
  get_filename_component(real "${lib}" REALPATH)
  if(real IN_LIST _seen)
    continue()
  endif()
  list(APPEND _seen "${real}")
  get_filename_component(name "${lib}" NAME)
  if(NOT name MATCHES "^libpython([23])\\.([0-9]+)([a-z]*)\\.")
    continue()
  endif()
  set(major ${CMAKE_MATCH_1})
  set(minor ${CMAKE_MATCH_2})
  set(flags "${CMAKE_MATCH_3}")
  if(major STREQUAL "2")
    set(PYHOST_PY2_LIB "${real}")
    continue()
  endif()
  get_filename_component(libdir "${real}" DIRECTORY)
  set(sysroot 0)
  if(PYHOST_SYSROOT AND libdir STREQUAL _sysroot_libdir)
    set(sysroot 1)
  endif()
  if(flags MATCHES "t" OR (flags MATCHES "d" AND NOT sysroot))
    continue() # free-threaded builds, and debug builds but the sysroot's, are fixtures
  endif()
  if(sysroot)
    set(tag "py3.${minor}${flags}")
    set(prefix "${PYHOST_SYSROOT}/usr")
  elseif(libdir MATCHES "/versions/[^/]+/lib$")
    set(tag "py3.${minor}")
    get_filename_component(prefix "${libdir}" DIRECTORY)
  else()
    set(tag "py3.${minor}-system")
    set(prefix "/usr")
  endif()
  set(inc "${prefix}/include/python3.${minor}${flags}")
  if(NOT EXISTS "${inc}/Python.h")
    set(inc "")
  endif()
  # sortable key: two-digit minor, then the tag
  if(minor LESS 10)
    set(key "0${minor}")
  else()
    set(key "${minor}")
  endif()
  # A Debian numpy built for this Python (the system's python3-numpy, or the sysroot's:
  # tools/sysroot.sh; Debian's debug builds load the release builds' extensions): its
  # numpy tests then must import it rather than skip.
  file(GLOB numpy_ext "${prefix}/lib/python3/dist-packages/numpy/*core/_multiarray_umath.cpython-3${minor}*-*.so")
  set(numpy 0)
  if(numpy_ext)
    set(numpy 1)
  endif()
  list(APPEND _rows "${key}|${tag}|${real}|${inc}|${sysroot}|${numpy}")
endforeach()
list(SORT _rows)
foreach(row IN LISTS _rows)
  string(REPLACE "|" ";" f "${row}")
  list(GET f 1 tag)
  list(GET f 2 real)
  list(GET f 3 inc)
  list(GET f 4 sysroot)
  list(GET f 5 numpy)
  if(tag IN_LIST PYHOST_TEST_TAGS)
    set(tag "${tag}-2")
  endif()
  string(REGEX MATCH "3\\.[0-9]+" ver "${tag}")
  list(LENGTH PYHOST_TEST_LIBS _i)
  set(PYHOST_TEST_LAUNCHER_${_i})
  if(sysroot)
    set(PYHOST_TEST_LAUNCHER_${_i} ${_sysroot_launcher})
  endif()
  list(APPEND PYHOST_TEST_LIBS "${real}")
  list(APPEND PYHOST_TEST_TAGS "${tag}")
  list(APPEND PYHOST_TEST_VERSIONS "${ver}")
  list(APPEND PYHOST_TEST_INCLUDES "${inc}")
  list(APPEND PYHOST_TEST_NUMPY "${numpy}")
endforeach()

# Walking the matrix, the same way everywhere:
#   foreach(i IN LISTS PYHOST_TEST_INDICES)
#     pyhost_matrix_entry(${i})   # sets lib, tag, ver, inc, numpy (1: a Debian numpy
#                                 # for it is installed) and launcher for entry i
# Every command of a matrix test starts with ${launcher} (a list, often empty);
# launcher_at is the same joined by "@@" with a trailing "@@", for the -DCMD= strings of
# the scripts that split on "@@" (tests/expect.cmake, examples/compare_output.cmake).
set(PYHOST_TEST_INDICES)
list(LENGTH PYHOST_TEST_LIBS _n)
if(_n GREATER 0)
  math(EXPR _last "${_n} - 1")
  foreach(_i RANGE ${_last})
    list(APPEND PYHOST_TEST_INDICES ${_i})
  endforeach()
endif()
macro(pyhost_matrix_entry i)
  list(GET PYHOST_TEST_LIBS ${i} lib)
  list(GET PYHOST_TEST_TAGS ${i} tag)
  list(GET PYHOST_TEST_VERSIONS ${i} ver)
  list(GET PYHOST_TEST_INCLUDES ${i} inc)
  list(GET PYHOST_TEST_NUMPY ${i} numpy)
  set(launcher ${PYHOST_TEST_LAUNCHER_${i}})
  set(launcher_at "")
  if(launcher)
    string(REPLACE ";" "@@" launcher_at "${launcher}@@")
  endif()
endmacro()

# The quick preset's one Python (label `quick`, with the unit tests): the newest
# release build that runs without a launcher, unless -DPYHOST_QUICK_PYTHON=py3.X.
set(PYHOST_QUICK_PYTHON "" CACHE STRING "Matrix tag the quick test preset runs (default: the newest plain one)")
set(PYHOST_QUICK_TAG "${PYHOST_QUICK_PYTHON}")
if(NOT PYHOST_QUICK_TAG)
  foreach(_i IN LISTS PYHOST_TEST_INDICES)
    list(GET PYHOST_TEST_TAGS ${_i} _t)
    if(NOT PYHOST_TEST_LAUNCHER_${_i} AND _t MATCHES "^py3\\.[0-9]+$")
      set(PYHOST_QUICK_TAG "${_t}")
    endif()
  endforeach()
endif()

set(_minors ${PYHOST_TEST_VERSIONS})
list(REMOVE_DUPLICATES _minors)
list(LENGTH _minors PYHOST_TEST_MINOR_COUNT)
set(PYHOST_TEST_DEBUG_COUNT 0)
foreach(_t IN LISTS PYHOST_TEST_TAGS)
  if(_t MATCHES "^py3\\.[0-9]+d$")
    math(EXPR PYHOST_TEST_DEBUG_COUNT "${PYHOST_TEST_DEBUG_COUNT} + 1")
  endif()
endforeach()
message(STATUS "pyhost test matrix: ${PYHOST_TEST_TAGS} (${PYHOST_TEST_MINOR_COUNT} minors, "
  "${PYHOST_TEST_DEBUG_COUNT} debug builds)")
# CI proves "3.6 to the newest" and runs the debug builds: it never skips them.
string(REGEX REPLACE "^3\\." "" _newest "${PYHOST_NEWEST_TESTED_MINOR}")
math(EXPR _need_minors "${_newest} - 6 + 1")
if("$ENV{CI}" STREQUAL "true" AND (PYHOST_TEST_MINOR_COUNT LESS _need_minors OR PYHOST_TEST_DEBUG_COUNT LESS 2))
  message(FATAL_ERROR "CI needs at least ${_need_minors} Python 3 minors (3.6 to ${PYHOST_NEWEST_TESTED_MINOR}) and 2 debug builds for "
    "the matrix, found ${PYHOST_TEST_MINOR_COUNT} minors and ${PYHOST_TEST_DEBUG_COUNT} debug builds: "
    "${PYHOST_TEST_TAGS} (PYHOST_SYSROOT=${PYHOST_SYSROOT}; tools/sysroot.sh makes the sysroot)")
endif()
if("$ENV{CI}" STREQUAL "true" AND NOT PYHOST_PY2_LIB)
  message(FATAL_ERROR "CI needs the Python 2.7 library for the bad-input tests")
endif()
