# toolchain-mingw-w64-x86_64.cmake: cross-compile pyhost for 64-bit Windows with
# Debian's mingw-w64 (package gcc-mingw-w64-x86-64):
#
#   cmake -S . -B build-win64 --toolchain cmake/toolchain-mingw-w64-x86_64.cmake
#
# The POSIX "win32" thread model of the x86_64-w64-mingw32-gcc driver is used, so the
# result needs no winpthread DLL.  Tests that need no Python can run under wine64
# (CMAKE_CROSSCOMPILING_EMULATOR below, when wine64 is installed).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_triple x86_64-w64-mingw32)

find_program(CMAKE_C_COMPILER NAMES ${_triple}-gcc-win32 ${_triple}-gcc REQUIRED)
# C++ (the C++ layer's tests and example) when g++-mingw-w64-x86-64 is installed too;
# CMake's own search does not find the -win32 driver
find_program(CMAKE_CXX_COMPILER NAMES ${_triple}-g++-win32 ${_triple}-g++)
find_program(CMAKE_RC_COMPILER NAMES ${_triple}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${_triple})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Static libgcc: the .exe and .dll run without libgcc_s_seh-1.dll beside them.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")

find_program(PYHOST_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(PYHOST_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${PYHOST_WINE}")
endif()
