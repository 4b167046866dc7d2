/* pyhost.h: embed any CPython 3 in a C or C++ program, chosen at run time.
 *
 * pyhost loads a libpython3.X shared library when the host asks for it, resolves only
 * stable-ABI (abi3) symbols into a function table, and runs Python code in it.  One
 * build of pyhost works with every Python 3 from its floor (pyhost_abi_version(),
 * 3.6 by default) to the newest.  This header is the reference manual; docs/ holds the
 * guides.  It never includes Python.h.
 *
 * Conventions, for every declaration below:
 *  - Functions that can fail return an int status (PYHOST_OK is 0); pyhost_errmsg()
 *    then says why, in UTF-8 text naming the cause.
 *  - "own" marks a pointer whose ownership moves: an own parameter passes it to pyhost,
 *    an own result passes it to the caller.  Every other pointer is borrowed.
 *  - Strings are UTF-8, paths included, on every OS.
 *  - Threads: every function that takes a pyhost * may be called from any thread;
 *    pyhost takes Python's GIL itself for the length of the call.
 *  - "Since" is the pyhost version that added the declaration.
 */
#ifndef PYHOST_H
#define PYHOST_H

#include <stddef.h>
#include <stdint.h>

#include "pyhost/version.h"

/* PYHOST_API marks the exported functions.  Define PYHOST_STATIC when linking the
 * static library on Windows. */
#if defined(_WIN32) && !defined(PYHOST_STATIC)
#  if defined(PYHOST_BUILDING)
#    define PYHOST_API __declspec(dllexport)
#  else
#    define PYHOST_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && defined(PYHOST_BUILDING)
#  define PYHOST_API __attribute__((visibility("default")))
#else
#  define PYHOST_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * status codes
 * ====================================================================== */

/* One map, expanded into the enum, pyhost_status_name() and pyhost_errstr().
 * Codes are append-only: never renumbered, never removed. */
#define PYHOST_STATUS_MAP(X)                                                       \
  X(OK, 0, "success")                                                              \
  X(ERROR, 1, "generic error")                                                     \
  X(NOLIB, 2, "the shared library could not be loaded")                            \
  X(NOSYM, 3, "a required stable-ABI symbol is missing")                           \
  X(VERSION, 4, "the Python version is outside the accepted range")                \
  X(PYEXC, 5, "Python raised an exception")                                        \
  X(MISUSE, 6, "pyhost was used incorrectly")                                      \
  X(NOMEM, 7, "out of memory")                                                     \
  X(NOTFOUND, 8, "the file does not exist or cannot be read")                      \
  X(ISDIR, 9, "the path is a directory, not a library")                            \
  X(NOTPYTHON, 10, "the library is not a CPython library")                         \
  X(PYTHON2, 11, "the library is Python 2; pyhost needs Python 3")                 \
  X(FREETHREADED, 12, "free-threaded Python has no stable ABI before 3.15")        \
  X(BUILD, 13, "the Python build changes the object layout (Py_TRACE_REFS)")       \
  X(NOHOME, 14, "the Python home has no standard library")                         \
  X(EXIT, 15, "Python code raised SystemExit")                                     \
  X(TYPE, 16, "a value has another type than the one asked for")                   \
  X(RANGE, 17, "a number does not fit the C type")

enum pyhost_status {
#define PYHOST_STATUS_ENUM_(name, code, text) PYHOST_##name = code,
  PYHOST_STATUS_MAP(PYHOST_STATUS_ENUM_)
#undef PYHOST_STATUS_ENUM_
};

/* "PYHOST_NOSYM" for PYHOST_NOSYM; "PYHOST_UNKNOWN" for any other number.
 * Static text, never NULL.  Thread-safe.  Since 0.1. */
PYHOST_API const char *pyhost_status_name(int status);

/* A one-line English description of a status code.  Static text, never NULL.
 * Thread-safe.  Since 0.1. */
PYHOST_API const char *pyhost_errstr(int status);

/* ======================================================================
 * versions
 * ====================================================================== */

/* PYHOST_VERSION_HEX and PYHOST_VERSION_STRING of the library that is running.
 * Since 0.1. */
PYHOST_API unsigned long pyhost_version(void);
PYHOST_API const char *pyhost_version_string(void);

/* The stable-ABI floor this pyhost was built for, in PY_VERSION_HEX form (0x03060000
 * for 3.6): the oldest Python 3 it loads, like Vim's v:python3_version.  Since 0.1. */
PYHOST_API unsigned long pyhost_abi_version(void);

/* Makes a PY_VERSION_HEX-style number from major and minor, for the config setters. */
#define PYHOST_PY(major, minor) ((unsigned long)(((major) << 24) | ((minor) << 16)))

/* ======================================================================
 * configuration
 * ====================================================================== */

/* An opaque set of options for pyhost_init().  pyhost_init copies what it needs, so a
 * config may be freed or reused right after the call.  Not thread-safe: one thread
 * builds a config. */
typedef struct pyhost_config pyhost_config;

/* own result: a config with every default; NULL when out of memory.  Since 0.1. */
PYHOST_API pyhost_config *pyhost_config_new(void);

/* Frees a config; NULL is a no-op.  Since 0.1. */
PYHOST_API void pyhost_config_free(pyhost_config *cfg);

/* Each setter copies its strings and returns PYHOST_OK, PYHOST_NOMEM, or PYHOST_MISUSE
 * for a NULL config.  Passing NULL as a string restores the default. */

/* The Python shared library to load: a path ("/opt/py/lib/libpython3.12.so.1.0",
 * "C:\\Python312\\python3.dll") or a bare library name left to the system loader.
 * Default: the PYHOST_PYTHON_LIBRARY environment variable, then discovery
 * (docs/discovery.md).  A configured path is used exactly, never second-guessed.
 * Since 0.1. */
PYHOST_API int pyhost_config_set_library(pyhost_config *cfg, const char *path);

/* The Python home (sys.prefix).  Default: derived from the library's real path, so a
 * library runs on its own installation's standard library.  A home without a standard
 * library is refused with PYHOST_NOHOME before Python starts.  Since 0.1. */
PYHOST_API int pyhost_config_set_home(pyhost_config *cfg, const char *home);

/* The program name Python sees (sys.executable).  Default: the installation's
 * bin/python3.X next to the derived home.  Since 0.1. */
PYHOST_API int pyhost_config_set_program_name(pyhost_config *cfg, const char *name);

/* Appends a directory that is put at the front of sys.path, in the order added.
 * Default: none.  Since 0.1. */
PYHOST_API int pyhost_config_add_sys_path(pyhost_config *cfg, const char *dir);

/* sys.argv.  argv[0..argc-1] are copied.  Default: [""] (sys.argv exists on every
 * version, 3.6 included).  Since 0.1. */
PYHOST_API int pyhost_config_set_argv(pyhost_config *cfg, int argc, const char *const *argv);

/* The oldest Python the host accepts, PY_VERSION_HEX form, e.g. PYHOST_PY(3, 10).
 * Default 0: the build floor.  A lower value than the floor does not lower it.
 * Since 0.1. */
PYHOST_API int pyhost_config_set_min_python(pyhost_config *cfg, unsigned long hexversion);

/* Flags for pyhost_init, or-ed together.  Default: 0. */
enum pyhost_init_flag {
  /* Let CPython install its signal handlers (SIGINT raises KeyboardInterrupt, SIGPIPE
   * ignored).  Off by default: the host owns its signals. */
  PYHOST_INIT_SIGNALS = 1u << 0,
  /* Load libpython with RTLD_LOCAL instead of RTLD_GLOBAL (POSIX only).  C extension
   * modules (math, _ctypes, numpy) then fail to import on Python 3.8+: use only for a
   * host that imports none. */
  PYHOST_INIT_RTLD_LOCAL = 1u << 1,
  /* Keep the LC_CTYPE locale that Python's initialization sets.  By default pyhost
   * restores the host's LC_CTYPE after Python starts. */
  PYHOST_INIT_KEEP_LOCALE = 1u << 2
};

/* Sets the init flags (pyhost_init_flag values or-ed).  Since 0.1. */
PYHOST_API int pyhost_config_set_flags(pyhost_config *cfg, unsigned flags);

/* ======================================================================
 * lifecycle
 * ====================================================================== */

/* An opaque handle on the loaded Python.  CPython is one per process, and so is a
 * running pyhost: a second pyhost_init while one runs gets PYHOST_MISUSE. */
typedef struct pyhost pyhost;

/* Loads the configured Python, checks it, and starts it.  cfg may be NULL (defaults).
 *
 * Returns PYHOST_OK with a running handle, or an error status.  In both cases *out
 * receives a handle (own result) from which pyhost_errmsg() reads the cause, except
 * when memory for the handle itself could not be had (PYHOST_NOMEM, *out = NULL).
 * Release it with pyhost_free().  Errors before Python starts name the library path
 * and the reason (missing file, directory, not a shared library or another
 * architecture with the loader's own text, not CPython, Python 2, too old, free-threaded,
 * Py_TRACE_REFS layout, missing symbols listed all at once, a home without stdlib).
 * Nothing here exits or aborts the host.
 *
 * Python is finalized for good by pyhost_finalize: a later pyhost_init in the same
 * process returns PYHOST_MISUSE, because CPython and its extension modules do not
 * support a second start reliably.  A pyhost_init that failed before Python started
 * does not count: the host may try another library.  Since 0.1. */
PYHOST_API int pyhost_init(const pyhost_config *cfg, pyhost **out);

/* Finalizes Python (Py_FinalizeEx).  The handle stays valid for pyhost_errmsg and
 * answers PYHOST_MISUSE to every later call; free it with pyhost_free.  Returns
 * PYHOST_OK, PYHOST_ERROR when Python reported an error while finalizing, or
 * PYHOST_MISUSE for a NULL or already finalized handle.  Call it from the thread that
 * called pyhost_init.  The library is never unloaded (Python's threads and atexit
 * hooks may still point into it).  Since 0.1. */
PYHOST_API int pyhost_finalize(pyhost *h);

/* Finalizes Python if it still runs, then frees the handle (own parameter).  NULL is a
 * no-op.  Since 0.1. */
PYHOST_API void pyhost_free(pyhost *h);

/* ======================================================================
 * information about the loaded Python
 * ====================================================================== */

/* The loaded runtime as sys.hexversion (0x030B07F0 for 3.11.7); 0 when no library was
 * accepted.  Since 0.1. */
PYHOST_API unsigned long pyhost_python_version(const pyhost *h);

/* The real path of the loaded library (symlinks resolved), or the path that failed
 * when init failed; "" when none.  Owned by h, valid until pyhost_free.  Since 0.1. */
PYHOST_API const char *pyhost_library_path(const pyhost *h);

/* Py_GetVersion() of the loaded library ("3.11.7 (main, ...) [GCC 12.2.0]"); "" when
 * none.  Owned by h, valid until pyhost_free.  Since 0.1. */
PYHOST_API const char *pyhost_python_version_text(const pyhost *h);

/* The Python home (sys.prefix) pyhost gave the runtime; "" when none.  Owned by h.
 * Since 0.1. */
PYHOST_API const char *pyhost_python_home(const pyhost *h);

/* ======================================================================
 * values
 * ====================================================================== */

/* A C-side value: none, bool, int, float, str, bytes, list, tuple, dict, or a
 * reference to any other Python object.  Values are plain C data once made: reading
 * them needs no GIL.  An object value holds a strong reference that pyhost_value_free
 * releases (taking the GIL itself).  Not thread-safe: one thread at a time per value. */
typedef struct pyhost_value pyhost_value;

typedef enum pyhost_kind {
  PYHOST_KIND_NONE,
  PYHOST_KIND_BOOL,
  PYHOST_KIND_INT,
  PYHOST_KIND_FLOAT,
  PYHOST_KIND_STR,
  PYHOST_KIND_BYTES,
  PYHOST_KIND_LIST,
  PYHOST_KIND_TUPLE,
  PYHOST_KIND_DICT,
  PYHOST_KIND_OBJECT
} pyhost_kind;

/* Pass as a length to mean "up to the terminating NUL". */
#define PYHOST_STRLEN ((size_t)-1)

/* Building.  Each returns an own value, or NULL when out of memory.  Strings and bytes
 * are copied; a str is checked to be UTF-8 when it goes to Python.  Since 0.1. */
PYHOST_API pyhost_value *pyhost_value_none(void);
PYHOST_API pyhost_value *pyhost_value_bool(int b);
PYHOST_API pyhost_value *pyhost_value_int(int64_t i);
PYHOST_API pyhost_value *pyhost_value_float(double d);
PYHOST_API pyhost_value *pyhost_value_str(const char *s, size_t len);
PYHOST_API pyhost_value *pyhost_value_bytes(const void *data, size_t len);
PYHOST_API pyhost_value *pyhost_value_list(void);
PYHOST_API pyhost_value *pyhost_value_tuple(void);
PYHOST_API pyhost_value *pyhost_value_dict(void);

/* Appends item (own parameter, taken even on failure) to a list or tuple.
 * PYHOST_TYPE when seq is neither, PYHOST_NOMEM.  Since 0.1. */
PYHOST_API int pyhost_value_append(pyhost_value *seq, pyhost_value *item);

/* Adds key: val (both own, taken even on failure) to a dict, in order.  The key must be
 * a hashable kind when it reaches Python.  PYHOST_TYPE when dict is not a dict.
 * Since 0.1. */
PYHOST_API int pyhost_value_set(pyhost_value *dict, pyhost_value *key, pyhost_value *val);

/* Frees a value and everything in it (own parameter); NULL is a no-op.  Object values
 * drop their Python reference; after pyhost_finalize only the C memory is freed.
 * Since 0.1. */
PYHOST_API void pyhost_value_free(pyhost_value *v);

/* The kind of a value (PYHOST_KIND_NONE for NULL).  Since 0.1. */
PYHOST_API pyhost_kind pyhost_value_kind(const pyhost_value *v);

/* "none", "bool", "int", ... for a kind.  Static text.  Since 0.1. */
PYHOST_API const char *pyhost_kind_name(pyhost_kind kind);

/* Python's name of the value's type ("int", "datetime.date"), as seen when the value
 * came from Python; the kind's Python name for values built in C.  Owned by v. */
PYHOST_API const char *pyhost_value_type_name(const pyhost_value *v);

/* Reading.  Each returns PYHOST_OK and writes *out, or PYHOST_TYPE naming the expected
 * and the actual type in pyhost_errmsg(h) (h may be NULL: then only the status tells).
 * pyhost_value_to_int gives PYHOST_RANGE for an int beyond 64 bits, never a wrapped
 * number.  pyhost_value_to_float accepts an int too.  Strings and bytes point into v:
 * valid until v is freed; a str has a NUL after its len bytes but may also contain NULs.
 * Since 0.1. */
PYHOST_API int pyhost_value_to_bool(pyhost *h, const pyhost_value *v, int *out);
PYHOST_API int pyhost_value_to_int(pyhost *h, const pyhost_value *v, int64_t *out);
PYHOST_API int pyhost_value_to_float(pyhost *h, const pyhost_value *v, double *out);
PYHOST_API int pyhost_value_to_str(pyhost *h, const pyhost_value *v, const char **s, size_t *len);
PYHOST_API int pyhost_value_to_bytes(pyhost *h, const pyhost_value *v, const void **data,
                                     size_t *len);

/* Items of a list or tuple, entries of a dict: 0 for other kinds. */
PYHOST_API size_t pyhost_value_count(const pyhost_value *v);

/* The i-th item of a list or tuple, or the i-th key / value of a dict (insertion
 * order); NULL when out of range or another kind.  Borrowed from v. */
PYHOST_API const pyhost_value *pyhost_value_item(const pyhost_value *v, size_t i);
PYHOST_API const pyhost_value *pyhost_value_key(const pyhost_value *v, size_t i);

/* repr() of the value, computed by Python (so 0.1 reads "0.1" and an object reads as
 * its own __repr__ says).  Returns text owned by v, valid until v is freed or repr is
 * asked again, or NULL on error (the cause in pyhost_errmsg(h)).  Since 0.1. */
PYHOST_API const char *pyhost_value_repr(pyhost *h, pyhost_value *v);

/* ======================================================================
 * running code
 * ====================================================================== */

/* Runs statements in the __main__ module's namespace.  filename appears in tracebacks
 * (NULL: "<pyhost>").  Returns, one of three states:
 *   PYHOST_OK     the code ran to its end;
 *   PYHOST_PYEXC  it raised: pyhost_errmsg(h) holds the exception's type, message and
 *                 formatted traceback (a SyntaxError names file and line);
 *   PYHOST_EXIT   it raised SystemExit: pyhost_exit_code(h) has the code, and the host
 *                 keeps running;
 *   or a pyhost error (PYHOST_MISUSE for a NULL or finalized handle, PYHOST_NOMEM).
 * Since 0.1. */
PYHOST_API int pyhost_exec(pyhost *h, const char *code, const char *filename);

/* Reads a UTF-8 (or PEP 263 declared) source file and runs it as pyhost_exec does, with
 * __main__.__file__ set to path.  PYHOST_NOTFOUND when the file cannot be read.
 * Since 0.1. */
PYHOST_API int pyhost_exec_file(pyhost *h, const char *path);

/* Evaluates one expression in __main__'s namespace.  On PYHOST_OK, *result (own) is
 * the value: none, bool, int, float, str, bytes, list, tuple and dict are converted to
 * C (recursively), anything else is an object value whose repr pyhost_value_repr gives.
 * On any other status *result is NULL and the states are as for pyhost_exec.
 * Since 0.1. */
PYHOST_API int pyhost_eval(pyhost *h, const char *expr, pyhost_value **result);

/* ======================================================================
 * errors
 * ====================================================================== */

/* The message of the last call on h made by this thread: for PYHOST_PYEXC, the
 * formatted exception with traceback; for loader errors, the library path and the
 * reason; "not an error" after success.  Owned by pyhost, valid until this thread's
 * next call on h.  h may be NULL ("no pyhost handle (NULL)").  Never NULL.  Very long
 * messages keep their start and their end.  Since 0.1. */
PYHOST_API const char *pyhost_errmsg(const pyhost *h);

/* The exit code of the last PYHOST_EXIT on h: SystemExit's code (None is 0, an int is
 * itself, anything else is 1 and its text is in pyhost_errmsg).  Since 0.1. */
PYHOST_API int pyhost_exit_code(const pyhost *h);

#ifdef __cplusplus
}
#endif
#endif
