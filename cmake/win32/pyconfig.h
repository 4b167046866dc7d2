/* pyconfig.h for compiling pyhost for 64-bit Windows with mingw-w64 against the
 * limited-API headers of a Linux CPython (cmake/PyhostWin32PythonHeaders.cmake copies
 * those headers and puts this file in place of their pyconfig.h).
 *
 * pyhost uses Python's headers only for types, struct layouts and constants, and never
 * links python3.dll, so only what the limited-API headers test matters: the LLP64 type
 * sizes of Windows (long is 32 bits) and MS_WINDOWS for the Windows-only declarations.
 * Py_ENABLE_SHARED stays undefined: no __declspec(dllimport) on symbols nobody links. */
#ifndef Py_CONFIG_H
#define Py_CONFIG_H

#if !defined(_WIN64) || !defined(__MINGW64__)
#  error "this pyconfig.h is for 64-bit mingw-w64 only"
#endif

#define MS_WIN32
#define MS_WIN64
#define MS_WINDOWS
#define NT_THREADS
#define WITH_THREAD

#define SIZEOF_SHORT 2
#define SIZEOF_INT 4
#define SIZEOF_LONG 4
#define SIZEOF_LONG_LONG 8
#define SIZEOF_FLOAT 4
#define SIZEOF_DOUBLE 8
#define SIZEOF_VOID_P 8
#define SIZEOF_SIZE_T 8
#define SIZEOF_TIME_T 8
#define SIZEOF_OFF_T 4
#define SIZEOF_FPOS_T 8
#define SIZEOF_WCHAR_T 2
#define SIZEOF__BOOL 1
#define ALIGNOF_SIZE_T 8
#define ALIGNOF_LONG 4

#define HAVE_SSIZE_T 1
#define HAVE_UINTPTR_T 1
#define HAVE_INTPTR_T 1
#define HAVE_LONG_LONG 1
#define PY_LONG_LONG long long
#define HAVE_STDARG_PROTOTYPES 1
#define HAVE_WCHAR_H 1
#define HAVE_USABLE_WCHAR_T 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define STDC_HEADERS 1
#define DOUBLE_IS_LITTLE_ENDIAN_IEEE754 1
#define PY_FORMAT_SIZE_T "I64"

#endif
