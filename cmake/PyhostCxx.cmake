# PyhostCxx.cmake: C++ only where the C++ layer is built (tests/test_cpp.cpp,
# examples/cpp), so that a C-only build still configures where no C++ compiler exists.
#   pyhost_enable_cxx()  sets PYHOST_HAVE_CXX (ON when a C++17 compiler was found) and
#                        PYHOST_CXX_WARNINGS (the C++ counterpart of PYHOST_WARNINGS).
macro(pyhost_enable_cxx)
  if(NOT DEFINED PYHOST_HAVE_CXX)
    include(CheckLanguage)
    check_language(CXX)
    if(CMAKE_CXX_COMPILER)
      enable_language(CXX)
      set(PYHOST_HAVE_CXX ON)
    else()
      set(PYHOST_HAVE_CXX OFF)
      message(STATUS "pyhost: no C++ compiler, the C++ layer's tests and example are left out")
    endif()
  endif()
  set(PYHOST_CXX_WARNINGS)
  if(PYHOST_HAVE_CXX AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set(PYHOST_CXX_WARNINGS -Wall -Wextra -Wshadow)
    if(PYHOST_WERROR)
      list(APPEND PYHOST_CXX_WARNINGS -Werror)
    endif()
  endif()
endmacro()
