# pyhost_win32_python_headers(<var>): when cross-compiling for Windows with headers
# whose pyconfig.h is not a Windows one (the Linux CPython found on the build machine),
# copy those headers into the build tree with cmake/win32/pyconfig.h in place of
# pyconfig.h, and point <var> at the copy.  Python.h includes "pyconfig.h" from its own
# directory, so a header directory earlier on the include path could not override it.
# Headers of a real Windows CPython (include/ of a python.org install, whose
# pyconfig.h defines MS_WINDOWS) are used as they are.
function(pyhost_win32_python_headers var)
  set(src "${${var}}")
  file(STRINGS "${src}/pyconfig.h" ms REGEX "define[ \t]+MS_WINDOWS")
  if(ms)
    return()
  endif()
  set(dst "${CMAKE_BINARY_DIR}/win32-python-include")
  file(REMOVE_RECURSE "${dst}")
  file(COPY "${src}/" DESTINATION "${dst}" PATTERN "pyconfig.h" EXCLUDE)
  configure_file("${CMAKE_CURRENT_FUNCTION_LIST_DIR}/win32/pyconfig.h" "${dst}/pyconfig.h" COPYONLY)
  message(STATUS "pyhost: Windows cross-build uses ${src} with cmake/win32/pyconfig.h")
  set(${var} "${dst}" PARENT_SCOPE)
endfunction()
