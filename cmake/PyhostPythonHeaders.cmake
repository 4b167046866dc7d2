# pyhost_find_python_headers(<var>): CPython headers to compile pyhost with.
#
# Any Python 3 >= the floor works; the newest is preferred because only its headers
# declare the newest rows.  Free-threaded headers (python3.Xt) are skipped: they
# refuse Py_LIMITED_API.  The result is only a build-time input: pyhost never runs
# or links this Python.
function(pyhost_find_python_headers var)
  if(${var})
    if(NOT EXISTS "${${var}}/Python.h")
      message(FATAL_ERROR "${var}=${${var}} has no Python.h")
    endif()
    return()
  endif()
  set(globs /usr/include/python3.* /usr/local/include/python3.*)
  if(DEFINED ENV{PYENV_ROOT})
    list(APPEND globs "$ENV{PYENV_ROOT}/versions/*/include/python3.*")
  endif()
  file(GLOB candidates LIST_DIRECTORIES true ${globs})
  set(best "")
  set(best_minor -1)
  foreach(dir IN LISTS candidates)
    if(dir MATCHES "python3\\.([0-9]+)$" AND EXISTS "${dir}/Python.h")
      if(CMAKE_MATCH_1 GREATER best_minor)
        set(best_minor ${CMAKE_MATCH_1})
        set(best "${dir}")
      endif()
    endif()
  endforeach()
  if(NOT best)
    find_package(Python3 COMPONENTS Development.Module)
    if(Python3_Development.Module_FOUND)
      list(GET Python3_INCLUDE_DIRS 0 best)
    endif()
  endif()
  if(NOT best)
    message(FATAL_ERROR "pyhost needs CPython 3 headers to build (not to run): install a "
      "Python 3 development package or pass -D${var}=/path/to/include/python3.X")
  endif()
  set(${var} "${best}" CACHE PATH "CPython headers to build with" FORCE)
endfunction()

# pyhost_python_headers_after(<include dir> <var>): the directory to search last
# (-idirafter) for headers outside the one named.  Debian's python3.X/pyconfig.h only
# includes <x86_64-linux-gnu/python3.X/pyconfig.h>: for headers of another root (the
# sid sysroot of tools/sysroot.sh) that lives in the include dir's parent, which must
# come after the compiler's own system headers so the host's libc headers still win.
# "" when nothing is needed.
function(pyhost_python_headers_after inc var)
  set(after "")
  get_filename_component(parent "${inc}" DIRECTORY)
  get_filename_component(name "${inc}" NAME)
  if(CMAKE_LIBRARY_ARCHITECTURE AND NOT parent STREQUAL "/usr/include" AND
     EXISTS "${parent}/${CMAKE_LIBRARY_ARCHITECTURE}/${name}/pyconfig.h")
    set(after "${parent}")
  endif()
  set(${var} "${after}" PARENT_SCOPE)
endfunction()
