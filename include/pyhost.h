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
 *    pyhost takes Python's GIL itself for the length of the call (unless the thread
 *    holds it through pyhost_gil_enter).  The initializing thread releases the GIL
 *    when pyhost_init returns; pyhost_finalize waits for calls in flight on other
 *    threads (and interrupts them first); pyhost_free must come after every other
 *    thread is done with the handle.  docs/threads.md has the whole model.
 *  - "Since" is the pyhost version that added the declaration.
 *
 * A whole host (build it with -lpyhost; it finds a Python by itself):
 *
 *     #include "pyhost.h"
 *     #include <stdio.h>
 *     int main(void) {
 *       pyhost *h = NULL;
 *       pyhost_value *v = NULL;
 *       int rc = pyhost_init(NULL, &h);
 *       if (rc == PYHOST_OK) rc = pyhost_eval(h, "sum(range(10))", &v);
 *       if (rc == PYHOST_OK) printf("%s\n", pyhost_value_repr(h, v));
 *       else fprintf(stderr, "%s: %s\n", pyhost_status_name(rc), pyhost_errmsg(h));
 *       pyhost_value_free(v);
 *       pyhost_free(h);
 *       return rc;
 *     }
 *
 * The declarations come in the order a first host needs them: the lifecycle, running
 * code, status codes and messages; values and calls; GIL scopes and interrupts; host
 * functions, host types and plugins; then configuration, discovery and inspection,
 * information about the loaded Python, and versions.
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

/* PYHOST_PRINTF_FORMAT(f, a) lets gcc and clang check the printf-style arguments of
 * pyhost's formatting functions.  They take C99 formats (%zu, %lld) on every OS: on
 * mingw-w64, whose gcc checks "printf" as Microsoft's dialect, the GNU one is named. */
#if defined(__MINGW32__)
#  define PYHOST_PRINTF_FORMAT(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#  define PYHOST_PRINTF_FORMAT(f, a) __attribute__((format(printf, f, a)))
#else
#  define PYHOST_PRINTF_FORMAT(f, a)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================
 * lifecycle
 * ====================================================================== */

/* An opaque handle on the loaded Python.  CPython is one per process, and so is a
 * running pyhost: a second pyhost_init while one runs gets PYHOST_MISUSE. */
typedef struct pyhost pyhost;

/* An opaque set of options for pyhost_init().  pyhost_init copies what it needs, so a
 * config may be freed or reused right after the call.  Not thread-safe: one thread
 * builds a config. */
typedef struct pyhost_config pyhost_config;

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
 * PYHOST_MISUSE for a NULL or already finalized handle, or when called from inside a
 * pyhost call on this thread (from a host function), or when called on another thread
 * than the one that called pyhost_init: CPython is finalized on the thread that started
 * it (elsewhere 3.11 waits forever in threading's shutdown and 3.14+ debug builds
 * abort), so that thread must call it.  Calls racing it from other threads are safe: new calls get
 * PYHOST_MISUSE, calls already running are interrupted as by pyhost_interrupt, and
 * finalize waits until they have returned (code that swallows the interrupt with
 * `except BaseException` keeps it waiting).  The library is never unloaded (Python's threads and atexit
 * hooks may still point into it).  Since 0.1. */
PYHOST_API int pyhost_finalize(pyhost *h);

/* Finalizes Python if it still runs, then frees the handle (own parameter).  NULL and
 * a handle already freed are no-ops; inside this thread's pyhost_gil_enter scope (not
 * from a host callback) the scope ends first.  Call it on the thread that called
 * pyhost_init, or after pyhost_finalize there: on another thread it still finalizes
 * (the handle is given up either way), with the hazards pyhost_finalize refuses to run
 * into.  From inside a pyhost call on this thread (a host callback) it is refused: the
 * handle stays, its message says why, and a build with asserts aborts naming the
 * misuse (docs/reliability.md).  Since 0.1. */
PYHOST_API void pyhost_free(pyhost *h);

/* Runs the configured Python's own `python` program with the command line argv, as
 * `python3.X argv[1] ...` would: its options (-I, -X, -W, ...), -c, -m, a script,
 * standard input, its REPL, its exit status for every way out, sys.argv and
 * sys.orig_argv (argv[0] is orig_argv[0] from 3.10).  pyhost first does what
 * pyhost_init does before Python starts (the library chosen by the configuration or
 * discovery, checked, opened; the home chosen), then hands argv to the runtime's own
 * main (Py_BytesMain from 3.8, Py_Main before and on Windows, whose arguments are
 * then decoded as that python decodes its own).  From the configuration it uses the
 * library, home, program name, executable, isolated and discovery settings and
 * PYHOST_INIT_RTLD_LOCAL; argv, sys.path entries and the other flags are pyhost_init's
 * alone.  With isolated on, the PYTHON* variables stay hidden (and PYTHONNOUSERSITE=1
 * set) for the whole run, so child processes inherit that environment; the host's is
 * restored when Python is done.
 *
 * Python's main owns the process while it runs, as `python` does: it installs its
 * signal handlers, sets the locale from the environment, may end the process itself
 * (SystemExit through Py_Exit; from 3.8 an uncaught KeyboardInterrupt by SIGINT, and
 * its help) and finalizes Python before it returns.  Returns PYHOST_OK when Python
 * ran, with the exit status `python` would have in *exit_status; Python is then
 * finalized for good (a later pyhost_init or pyhost_main gets PYHOST_MISUSE).
 * Otherwise the status of pyhost_init's checks with its message, nothing started, the
 * process free for another try.  In both cases *out receives a handle (own result) for
 * pyhost_errmsg and pyhost_free.  PYHOST_MISUSE, and *out = NULL, for a NULL out,
 * argv, argv[i] or exit_status, or argc < 1.  docs/command.md.  Since 0.1. */
PYHOST_API int pyhost_main(const pyhost_config *cfg, int argc, char **argv, pyhost **out,
                           int *exit_status);

/* ======================================================================
 * running code
 * ====================================================================== */

/* A C-side value: none, bool, int, float, str, bytes, list, tuple, dict, or a
 * reference to any other Python object.  Values are plain C data once made: reading
 * them needs no GIL.  An object value holds a strong reference that pyhost_value_free
 * releases (taking the GIL itself).  Not thread-safe: one thread at a time per value. */
typedef struct pyhost_value pyhost_value;

/* Host memory lent to Python as a memoryview (pyhost_buffer_new, "bulk data" below).
 * Since 0.1. */
typedef struct pyhost_buffer pyhost_buffer;

/* Runs statements in the __main__ module's namespace.  That namespace is pyhost's own:
 * the dict of the __main__ module that existed at init, held from init to finalize, so
 * code that removes or replaces sys.modules['__main__'] (or clears sys.modules) does
 * not take it away; pyhost_exec_file, pyhost_eval, pyhost_get_global,
 * pyhost_set_global and pyhost_resolve use the same one (docs/lifetimes.md).
 * filename appears in tracebacks (NULL: "<pyhost>").  Returns one of these states:
 *   PYHOST_OK     the code ran to its end;
 *   PYHOST_PYEXC  it raised: pyhost_errmsg(h) holds the exception's type, message and
 *                 formatted traceback (a SyntaxError names file and line);
 *   PYHOST_EXIT   it raised SystemExit: pyhost_exit_code(h) has the code, and the host
 *                 keeps running;
 *   PYHOST_INTERRUPTED  pyhost_interrupt stopped it (the message says where);
 *   or a pyhost error (PYHOST_MISUSE for a NULL or finalized handle, or once
 *   pyhost_finalize has begun on another thread; PYHOST_NOMEM).
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
 * errors: status codes
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
  X(RANGE, 17, "a number does not fit the C type")                                 \
  X(INTERRUPTED, 18, "the call was stopped by pyhost_interrupt")                  \
  X(NOHOOK, 19, "the plugin has no such hook")                                     \
  X(DAMAGED, 20, "the library file is damaged (truncated or inconsistent headers)") \
  X(PROCESS, 21, "the plugin's process ended (it crashed, was killed or exited)")   \
  X(LIMIT, 22, "the plugin hit a limit (memory, CPU time or wall-clock time)")       \
  X(DEPS, 23, "a plugin's dependencies could not be prepared or disagree")          \
  X(BUSY, 24, "the memory is exported to Python and cannot change now")

/* The status codes every fallible function returns: the rows of PYHOST_STATUS_MAP. */
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
 * errors: messages
 * ====================================================================== */

/* The message of the last call on h made by this thread: for PYHOST_PYEXC, the
 * formatted exception with traceback; for loader errors, the library path and the
 * reason; "not an error" after success.  Owned by pyhost, valid until this thread's
 * next call on h.  h may be NULL ("no pyhost handle (NULL)") or already freed ("not a
 * live pyhost handle: ...": pyhost checks a handle against its list of live ones and
 * never reads a freed one, so every call on it answers PYHOST_MISUSE).  Never NULL.
 * Very long messages keep their start and their end.  Since 0.1. */
PYHOST_API const char *pyhost_errmsg(const pyhost *h);

/* The exit code of the last PYHOST_EXIT on h: SystemExit's code (None is 0, an int is
 * itself, anything else is 1 and its text is in pyhost_errmsg).  Since 0.1. */
PYHOST_API int pyhost_exit_code(const pyhost *h);

/* ---- errors as data: the Python exception behind the last failed call ----
 *
 * For a call that failed with a Python exception (PYHOST_PYEXC, PYHOST_EXIT,
 * PYHOST_INTERRUPTED; from any function, plugin hooks and host callbacks included),
 * these read the exception itself rather than the formatted text: its type, its
 * message and its traceback's frames.  They answer for the calling thread's last call
 * on h, as pyhost_errmsg does, and what they return is valid as long as that message
 * is: until this thread's next call on h (reading them is no call).  Chained
 * exceptions: the data is the exception that reached pyhost (the last raised); its
 * __cause__ and __context__ appear only in pyhost_errmsg's text.  docs/errors.md has
 * examples. */

/* The exception's type as Python's traceback names it on its last line:
 * "json.decoder.JSONDecodeError" (__module__ "." __qualname__), the bare qualified
 * name for builtins and for classes of __main__ ("ValueError", "Outer.Error"),
 * "SystemExit" (or its subclass) for PYHOST_EXIT, "pyhost.Interrupted" for
 * PYHOST_INTERRUPTED, "<unknown type>" for a class whose names cannot be read.  ""
 * when the last call did not fail with a Python exception: success, pyhost's own
 * errors (PYHOST_TYPE, PYHOST_MISUSE...), or h not a live handle.  Never NULL.
 * Since 0.1. */
PYHOST_API const char *pyhost_errtype(const pyhost *h);

/* The exception's message without type, context or traceback: str(exception)
 * ("Expecting value: line 1 column 1 (char 0)"; "" for an exception raised without
 * one); a SyntaxError's msg alone ("invalid syntax": its file and line are its last
 * frame); "<exception str() failed>" when str() raises.  For a failure that was no
 * Python exception, the same text as pyhost_errmsg.  Long texts keep their start and
 * end as messages do.  Never NULL.  Since 0.1. */
PYHOST_API const char *pyhost_errtext(const pyhost *h);

/* The number of frames in the exception's traceback, 0 when there is none (an
 * exception raised before any Python code ran, pyhost's own errors) and for a call
 * made inside a host callback (the exception goes on into Python, and the outer call
 * that leaves pyhost gathers the frames, as it formats the traceback).  Since 0.1. */
PYHOST_API size_t pyhost_errframe_count(const pyhost *h);

/* Frame i of the traceback, in the order Python prints them: 0 is the outermost call,
 * pyhost_errframe_count(h) - 1 the line that raised.  Writes the frame's file
 * (co_filename: the filename given to pyhost_exec, a module's path, a plugin's file),
 * its line (0 when Python knows none) and its function (co_name: "<module>" for
 * top-level code); any output pointer may be NULL.  The frames start where Python code
 * of the host's call starts: a plugin's load and hook errors start in the plugin's file.
 * A SyntaxError ends with a frame of its own: the file and line of the error, function
 * "".  Returns PYHOST_OK, PYHOST_RANGE when i is not below the count, PYHOST_MISUSE
 * when h is not a live handle; outputs are written only on PYHOST_OK.  Since 0.1. */
PYHOST_API int pyhost_errframe(const pyhost *h, size_t i, const char **file, int *line,
                               const char **function);

/* ======================================================================
 * values
 * ====================================================================== */

/* What a value holds (pyhost_value_kind). */
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
/* The decimal text of an int of any size (the one way to read an int beyond 64 bits,
 * which pyhost_value_to_int refuses with PYHOST_RANGE): an optional '-' and the digits,
 * without CPython's integer string conversion limit (4300 digits by default from 3.11
 * and in the 3.7 to 3.10 security releases; pyhost converts ints without it).  Writes
 * the text and a NUL into buf and its length (NUL not counted) into *len.  When cap is
 * not more than that length, writes nothing into buf, sets *len all the same and answers
 * PYHOST_RANGE: call again with a buffer of *len + 1 bytes (buf may be NULL with cap
 * 0).  PYHOST_TYPE for another kind, PYHOST_MISUSE when len is NULL.  Needs no GIL;
 * time quadratic in the digits beyond the limit.  Since 0.1. */
PYHOST_API int pyhost_value_to_int_text(pyhost *h, const pyhost_value *v, char *buf,
                                        size_t cap, size_t *len);
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
 * more values (docs/values.md)
 * ====================================================================== */

/* A deep copy of v (own result): containers are copied item by item; an object value
 * gets a new strong reference to the same Python object (taking the GIL), so the copy
 * and the original may be freed in any order.  NULL when out of memory or when v is
 * NULL.  After pyhost_finalize an object value cannot be copied (NULL).  Since 0.1. */
PYHOST_API pyhost_value *pyhost_value_copy(const pyhost_value *v);

/* The value stored under the str key `key` in a dict value (for example the kwargs a
 * host function receives); NULL when absent, when v is not a dict, or for NULL
 * arguments.  Borrowed from v.  Keys of other kinds are skipped.  Since 0.1. */
PYHOST_API const pyhost_value *pyhost_value_lookup(const pyhost_value *v, const char *key);

/* ======================================================================
 * calling Python from C (docs/calling.md)
 * ====================================================================== */

/* Every function here takes the GIL itself, may be called from any thread and from
 * inside host functions (re-entrant, to any depth Python's recursion limit allows),
 * and returns one of: PYHOST_OK; PYHOST_PYEXC with the exception's type, message and
 * traceback in pyhost_errmsg(h); PYHOST_EXIT for SystemExit; PYHOST_INTERRUPTED;
 * PYHOST_MISUSE for a NULL or finalized handle or a NULL required argument;
 * PYHOST_TYPE when an argument value has the wrong kind (the message names the
 * expected and the actual kind).  Results are converted as pyhost_eval converts them:
 * none, bool, int, float, str, bytes, list, tuple and dict become C data, anything else
 * an object value (a strong reference).  On any status but PYHOST_OK, *result is NULL.
 * `const pyhost_value *` arguments are borrowed and only read. */

/* Imports a module (a dotted name such as "os.path" gives the submodule) and returns
 * it as an object value (own, *module).  An ImportError gives PYHOST_PYEXC.
 * Since 0.1. */
PYHOST_API int pyhost_import(pyhost *h, const char *name, pyhost_value **module);

/* Resolves a dotted name to the object it names, as an object value (or converted,
 * like any result): the first part is looked up in __main__'s globals, then in
 * builtins, then imported as a module; each next part is an attribute, and when a
 * module lacks it, the submodule of that name is imported ("os.path.join",
 * "json.dumps", "len", "collections.OrderedDict").  Resolve once and pyhost_call the
 * value to skip the look-up on every call.  Since 0.1. */
PYHOST_API int pyhost_resolve(pyhost *h, const char *dotted, pyhost_value **result);

/* obj.name (own *result).  obj must be an object value (a module, a host object, any
 * Python object); other kinds are converted to Python first, so `(1.5).real` works
 * too.  A missing attribute gives PYHOST_PYEXC (AttributeError).  Since 0.1. */
PYHOST_API int pyhost_getattr(pyhost *h, const pyhost_value *obj, const char *name,
                              pyhost_value **result);

/* obj.name = val (val converted to Python; a NULL val deletes the attribute).
 * Since 0.1. */
PYHOST_API int pyhost_setattr(pyhost *h, const pyhost_value *obj, const char *name,
                              const pyhost_value *val);

/* __main__'s global `name` (own *result): what pyhost_exec code defined.  A missing
 * name gives PYHOST_PYEXC with a NameError message ("name 'x' is not defined"); builtins
 * are not searched.  Since 0.1. */
PYHOST_API int pyhost_get_global(pyhost *h, const char *name, pyhost_value **result);

/* Sets (val converted) or, with val NULL, deletes __main__'s global `name`.  Deleting a
 * missing name gives PYHOST_PYEXC (NameError).  Since 0.1. */
PYHOST_API int pyhost_set_global(pyhost *h, const char *name, const pyhost_value *val);

/* Calls `callable` (an object value: a function, a class, a bound method, a host
 * function...).  args: NULL (no positional arguments), or a tuple or list value whose
 * items are the positional arguments.  kwargs: NULL or a dict value with str keys.
 * Any other kind gives PYHOST_TYPE.  *result (own) receives the return value.
 * Since 0.1. */
PYHOST_API int pyhost_call(pyhost *h, const pyhost_value *callable, const pyhost_value *args,
                           const pyhost_value *kwargs, pyhost_value **result);

/* As pyhost_call with the positional arguments as a C array of nargs values (argv may
 * be NULL when nargs is 0; a NULL item is None).  Since 0.1. */
PYHOST_API int pyhost_callv(pyhost *h, const pyhost_value *callable,
                            const pyhost_value *const *argv, size_t nargs,
                            const pyhost_value *kwargs, pyhost_value **result);

/* As pyhost_call and pyhost_callv on the object a dotted name resolves to (see
 * pyhost_resolve): pyhost_call_name(h, "json.dumps", args, NULL, &r).  A name that does
 * not resolve gives PYHOST_PYEXC (ImportError, AttributeError or NameError).
 * Since 0.1. */
PYHOST_API int pyhost_call_name(pyhost *h, const char *dotted, const pyhost_value *args,
                                const pyhost_value *kwargs, pyhost_value **result);
PYHOST_API int pyhost_call_namev(pyhost *h, const char *dotted,
                                 const pyhost_value *const *argv, size_t nargs,
                                 const pyhost_value *kwargs, pyhost_value **result);

/* ---- prepared calls: the fast form for hot loops ----
 *
 * A callable resolved once and called many times with C arguments read in place: no
 * pyhost_value is built for an argument or, unless asked for, for the result.  On
 * Python 3.12+ the call is PyObject_Vectorcall (no argument tuple); before, it is the
 * cheapest call the runtime's stable ABI has: PyObject_CallNoArgs on 3.10 and 3.11 for
 * no arguments, else PyObject_CallFunctionObjArgs, which CPython hands to the callee
 * as a C array (an argument tuple only with keywords before 3.12, or past 8
 * arguments).  Inside a pyhost_gil_enter scope, a call without arguments whose result
 * is discarded adds to Python's own call only a thread-local check of the handle; with
 * arguments and a typed result it adds the conversions a direct host makes too, and
 * pyhost's own checks of the handle, the callable and each argument's kind
 * (docs/performance.md measures each shape against a direct host). */

/* A prepared callable: owned by the host, freed with pyhost_callable_free. */
typedef struct pyhost_callable pyhost_callable;

/* The kinds of pyhost_arg.  Values are fixed (docs/abi.md); new kinds are appended. */
typedef enum pyhost_arg_kind {
  PYHOST_ARG_NONE = 0,  /* None */
  PYHOST_ARG_BOOL = 1,  /* u.b: False for 0, True otherwise */
  PYHOST_ARG_INT = 2,   /* u.i: an int */
  PYHOST_ARG_FLOAT = 3, /* u.d: a float */
  PYHOST_ARG_STR = 4,   /* u.s, len (or PYHOST_STRLEN): UTF-8, strict (invalid UTF-8 raises
                         * UnicodeDecodeError) */
  PYHOST_ARG_BYTES = 5, /* u.p, len: bytes */
  PYHOST_ARG_VALUE = 6, /* u.v: a pyhost_value converted as pyhost_call converts it (an
                         * object value is passed as it is; NULL is None) */
  PYHOST_ARG_BUFFER = 7, /* u.p: a pyhost_buffer *, passed as its memoryview (no copy on
                          * 3.11+; see pyhost_buffer_new).  Since 0.1. */
  PYHOST_ARG_VIEW = 8    /* in a typed callback's argv only (a parameter of type buffer or
                          * rwbuffer): u.p is a const pyhost_view *, len its len; both
                          * borrowed until the callback returns (never an argument of a
                          * call: PYHOST_MISUSE).  Since 0.1. */
} pyhost_arg_kind;

/* One argument of a prepared call, borrowed: pyhost reads it during the call and
 * keeps nothing.  Build it with the pyhost_arg_* helpers below (a struct literal
 * works too).  An element of arrays, so its layout is frozen (docs/abi.md). */
typedef struct pyhost_arg {
  int kind;   /* pyhost_arg_kind */
  size_t len; /* PYHOST_ARG_STR, PYHOST_ARG_BYTES: the number of bytes at u.s / u.p */
  /* the argument, in the member its kind names */
  union {
    int b;
    int64_t i;
    double d;
    const char *s;
    const void *p;
    const pyhost_value *v;
  } u;
} pyhost_arg;

static inline pyhost_arg pyhost_arg_none(void) {
  pyhost_arg a;
  a.kind = PYHOST_ARG_NONE;
  a.len = 0;
  a.u.p = 0;
  return a;
}
static inline pyhost_arg pyhost_arg_bool(int b) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_BOOL;
  a.u.b = b;
  return a;
}
static inline pyhost_arg pyhost_arg_int(int64_t i) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_INT;
  a.u.i = i;
  return a;
}
static inline pyhost_arg pyhost_arg_float(double d) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_FLOAT;
  a.u.d = d;
  return a;
}
/* s: len bytes of UTF-8 (need not be NUL-terminated; NULL only with len 0), or a
 * NUL-terminated string with len PYHOST_STRLEN. */
static inline pyhost_arg pyhost_arg_str(const char *s, size_t len) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_STR;
  a.len = len;
  a.u.s = s;
  return a;
}
static inline pyhost_arg pyhost_arg_bytes(const void *p, size_t len) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_BYTES;
  a.len = len;
  a.u.p = p;
  return a;
}
static inline pyhost_arg pyhost_arg_value(const pyhost_value *v) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_VALUE;
  a.u.v = v;
  return a;
}

/* A host buffer (pyhost_buffer_new) as an argument: Python gets its memoryview.
 * Since 0.1. */
static inline pyhost_arg pyhost_arg_buffer(const pyhost_buffer *b) {
  pyhost_arg a = pyhost_arg_none();
  a.kind = PYHOST_ARG_BUFFER;
  a.u.p = b;
  return a;
}

/* Prepares callable (any value; an object value is the usual one: a function, a bound
 * method, a class, a host function) for pyhost_prepared_call: *out (own) keeps a strong
 * reference to the Python object.  Since 0.1. */
PYHOST_API int pyhost_prepare(pyhost *h, const pyhost_value *callable, pyhost_callable **out);

/* As pyhost_prepare on the object a dotted name resolves to (see pyhost_resolve); the
 * name is looked up once, here.  Since 0.1. */
PYHOST_API int pyhost_prepare_name(pyhost *h, const char *dotted, pyhost_callable **out);

/* Prepares an expression with named inputs: "x * 2 + y" with inputs "x, y" becomes a
 * callable taking x and y, positional or by keyword, for every pyhost_prepared_call*
 * form (pyhost_prepared_call_int(h, c, argv, 2, &n), pyhost_prepared_callf(h, c,
 * "ii>i", 20, 1, &n)).  It is compiled once, here, as `lambda x, y: (x * 2 + y)`
 * whose globals are its own, holding only the builtins: evaluating it never reads or
 * writes __main__, and one evaluation leaves nothing for the next.  inputs is names
 * separated by commas ("" for none: PYHOST_MISUSE otherwise); expr must be one
 * expression (a SyntaxError is PYHOST_PYEXC).  Free with pyhost_callable_free.
 * Since 0.1. */
PYHOST_API int pyhost_prepare_expression(pyhost *h, const char *inputs, const char *expr,
                                         pyhost_callable **out);

/* Frees c and drops its reference (taking the GIL for it; after pyhost_finalize it
 * only frees the memory).  NULL is ignored.  Freeing a callable while a call of it is
 * running (from a host function it called, or on another thread) is safe: the call
 * finishes, then the callable is freed; once finalize has begun on another thread,
 * the free waits for the calls finalize waits for.  Since 0.1. */
PYHOST_API void pyhost_callable_free(pyhost_callable *c);

/* Calls c with nargs positional arguments read from argv (NULL when nargs is 0) and
 * discards the result.  Returns what pyhost_callv returns, plus PYHOST_MISUSE for a
 * NULL or foreign c (prepared on another handle), a NULL argv with nargs > 0, an
 * unknown argument kind, a NULL string or bytes pointer with a non-zero len, or a count
 * other than a keyword plan's (pyhost_prepare_keywords); after
 * pyhost_finalize it answers PYHOST_MISUSE like every call.  Since 0.1. */
PYHOST_API int pyhost_prepared_call(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                    size_t nargs);

/* As pyhost_prepared_call, reading the result straight into a C scalar: *out is
 * written only on PYHOST_OK.  _int wants an int (not a bool) and gives PYHOST_RANGE
 * beyond 64 bits; _float takes a float or an int (PYHOST_RANGE beyond a double's
 * range); _bool wants a bool (True/False, not a truth value).  Subclasses of int and
 * float are read by the value they store, without calling their dunder methods.  A result of another type gives PYHOST_TYPE naming the expected and
 * the actual type, as pyhost_value_to_int and friends do.  Since 0.1. */
PYHOST_API int pyhost_prepared_call_int(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                        size_t nargs, int64_t *out);
PYHOST_API int pyhost_prepared_call_float(pyhost *h, pyhost_callable *c,
                                          const pyhost_arg *argv, size_t nargs, double *out);
PYHOST_API int pyhost_prepared_call_bool(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                         size_t nargs, int *out);

/* As pyhost_prepared_call with the result converted as pyhost_call converts it: *result
 * (own) on PYHOST_OK, NULL otherwise.  Since 0.1. */
PYHOST_API int pyhost_prepared_call_value(pyhost *h, pyhost_callable *c,
                                          const pyhost_arg *argv, size_t nargs,
                                          pyhost_value **result);

/* Prepares a keyword plan of c: a new callable (free it with pyhost_callable_free)
 * calling c's object with npos positional arguments followed by the nkw keyword
 * arguments named by names, in that order, so that
 *
 *   const char *const kw[] = {"y"};
 *   pyhost_prepare_keywords(h, fk, 1, kw, 1, &fk_y);
 *   pyhost_arg a[2] = {pyhost_arg_int(i), pyhost_arg_float(2.5)};
 *   pyhost_prepared_call_float(h, fk_y, a, 2, &x);
 *
 * is fk(i, y=2.5) read as a double.  The layout is read once, here: the names are
 * interned into one tuple that every call passes (CPython matches them by identity),
 * and a call only supplies values, through every pyhost_prepared_call* form except
 * pyhost_prepared_callf (whose format says the layout itself: PYHOST_MISUSE).  A call
 * with nargs other than npos + nkw is PYHOST_MISUSE naming both counts.  names is
 * read here and kept by nothing; each name is a non-empty NUL-terminated UTF-8 string
 * (NULL or empty: PYHOST_MISUSE; not UTF-8: PYHOST_PYEXC; a name the callee does not
 * take is its TypeError at the call); 1 <= nkw and npos + nkw <= 8, else
 * PYHOST_MISUSE.  c stays usable and
 * independent: freeing either leaves the other working.  On 3.12+ a call is
 * PyObject_Vectorcall with the plan's names; before 3.12 the stable ABI's only call
 * with keywords takes a tuple and a dict, built per call.  *out is written only on
 * PYHOST_OK (NULL otherwise).  Since 0.1. */
PYHOST_API int pyhost_prepare_keywords(pyhost *h, const pyhost_callable *c, size_t npos,
                                       const char *const *names, size_t nkw,
                                       pyhost_callable **out);

/* As pyhost_prepared_call, reading a str result in place (no copy, no allocation of
 * pyhost's): on PYHOST_OK *out is its UTF-8, NUL-terminated, and *len its length in
 * bytes; nothing is written otherwise.  The text is borrowed from c, which holds the
 * result: it stays valid until the next call of c that reads a borrowed result
 * (pyhost_prepared_call_str, or pyhost_prepared_callf with >s or >y) has returned (so
 * it may be that call's argument), pyhost_prepared_release_result(c), or c is freed;
 * any thread may read it meanwhile, without the GIL.  A result that is not a str
 * (subclasses are read as str) is PYHOST_TYPE naming its type.  A call whose callable
 * is freed during it answers PYHOST_MISUSE and writes nothing.  Before 3.10 (no UTF-8
 * view in the stable ABI) the str is encoded once into a bytes object c holds
 * instead.  Since 0.1. */
PYHOST_API int pyhost_prepared_call_str(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                        size_t nargs, const char **out, size_t *len);

/* As pyhost_prepared_call_str for a bytes result (as pyhost_prepared_callf's >y): *out
 * its data read in place, *len its size, borrowed from c under the same rules (the
 * same slot: the next borrowed result of c replaces it).  A result that is not bytes
 * (subclasses are read as bytes) is PYHOST_TYPE naming its type.  Since 0.1. */
PYHOST_API int pyhost_prepared_call_bytes(pyhost *h, pyhost_callable *c,
                                          const pyhost_arg *argv, size_t nargs,
                                          const void **out, size_t *len);

/* Drops the borrowed result c holds (pyhost_prepared_call_str, pyhost_prepared_callf's
 * >s and >y) before the next call would: the text it handed out is invalid from here.
 * NULL, a freed callable, or one holding nothing is ignored; after pyhost_finalize
 * there is nothing to drop.  Since 0.1. */
PYHOST_API void pyhost_prepared_release_result(pyhost_callable *c);

/* ---- calls in one line ----
 *
 * A format string says the C types of the arguments that follow it and of the result:
 *
 *   double x;
 *   pyhost_prepared_callf(h, score, "s,weight=i>d", "[1, 2, 3.5]", 2, &x);
 *
 * is score('[1, 2, 3.5]', weight=2) read as a double.  The format is the positional
 * arguments' letters, then each keyword argument as ",name=letter", then optionally
 * ">letter" and a pointer for the result (no ">": the result is discarded); spaces are
 * ignored; at most 16 arguments.  The letters and their C types (arguments / result):
 *
 *   i  int / int *          L  int64_t / int64_t *     d  double / double *
 *   b  int (0 False, else True) / int * (True/False only)
 *   n  None (no C argument)  s  const char * (UTF-8, NUL-terminated)
 *   z  const char *, size_t (UTF-8 of that length)     y  const void *, size_t (bytes)
 *   O  const pyhost_value * (as pyhost_arg_value) / pyhost_value ** (own)
 *   bulk data (since 0.2; docs/values.md, "Bulk data"):
 *   m  pyhost_buffer * (argument only): Python gets the buffer's memoryview
 *   o  result only, pyhost_value ** (own): the object itself as an object value, never
 *      converted (a list stays one Python list: read it with pyhost_value_to_int64s)
 *   w  result only, pyhost_view *: the result's buffer read in place (no copy on 3.11+,
 *      and for bytes and bytearray on every version), as pyhost_view_get with flags 0;
 *      release it with pyhost_view_release
 *   results only, borrowed (pyhost_prepared_callf and pyhost_plugin_callf; the other
 *   forms refuse them with PYHOST_MISUSE):
 *   s  const char **, size_t *: a str's UTF-8, NUL-terminated, read in place
 *   y  const void **, size_t *: a bytes object's data, read in place
 *   A borrowed result stays valid until the next pyhost_prepared_callf (or
 *   pyhost_prepared_call_str) of the same callable has returned (so it may be that call's argument) or the callable is
 *   freed (a call whose callable is freed during it answers PYHOST_MISUSE and writes
 *   no borrowed result); the callable holds it, so any thread may read it meanwhile, without the
 *   GIL.  pyhost_plugin_callf's lives in the plugin likewise, until its next
 *   pyhost_plugin_callf has returned or it is unloaded.  Before 3.10 (no UTF-8 view in the stable ABI) a str result is encoded once
 *   into a bytes object the callable holds instead.
 *
 * Arguments are read in place and kept by nothing; results follow the rules of
 * pyhost_prepared_call_int and friends (i: PYHOST_RANGE beyond an int; a result of
 * another type is PYHOST_TYPE).  The result is written only on PYHOST_OK (but for a >w
 * view, zeroed on failure as pyhost_view_get zeroes it, so releasing it is a no-op
 * either way, once the arguments are read).  A format
 * pyhost cannot read is PYHOST_MISUSE naming the column.  On 3.12+ the call is
 * PyObject_Vectorcall, with a tuple of keyword names that a prepared callable keeps
 * from one call to the next (a call with the same keywords allocates nothing of
 * pyhost's); before 3.12 the stable ABI has no vectorcall, and a call builds an
 * argument tuple (and a dict for keywords), as the runtime's own callers do. */

/* Calls the prepared callable c.  Errors as pyhost_prepared_call.  Since 0.1. */
PYHOST_API int pyhost_prepared_callf(pyhost *h, pyhost_callable *c, const char *fmt, ...);

/* Resolves a dotted name (as pyhost_resolve), then calls it.  Since 0.1. */
PYHOST_API int pyhost_call_namef(pyhost *h, const char *dotted, const char *fmt, ...);

/* ======================================================================
 * bulk data: buffers and arrays without copies (docs/values.md, "Bulk data")
 * ====================================================================== */

/* ---- host memory seen by Python ----
 *
 * A pyhost_buffer lends host memory to Python as a memoryview with an item format and
 * a shape, so that `numpy.asarray(view)`, `view[i]` and `view.cast(...)` read it in
 * place.  Lifetime: the host hands the memory over with a free callback.  When the
 * host releases the buffer (pyhost_buffer_release), pyhost releases the memoryview it
 * made (Python code that kept it gets ValueError from then on) and counts what Python
 * still holds: views made from it (slices, casts, `numpy.asarray`).  With none, the
 * free callback runs before pyhost_buffer_release returns; otherwise the memory stays
 * readable for them and the callback runs when the last of them ends (or at
 * pyhost_finalize).  So no Python code ever reads freed memory, whatever it keeps.
 *
 * In place from 3.11 (the first stable ABI with the buffer protocol): the memoryview
 * reads the host's memory through a pyhost exporter that counts its exports.  Before
 * 3.11 the stable ABI has no exporter a host can write, and PyMemoryView_FromMemory
 * cannot tell when Python stops reading; so pyhost lends a copy instead: Python reads
 * a snapshot taken at pyhost_buffer_new (in a bytes object, or a bytearray when
 * writable) and, for a writable buffer, what Python wrote is copied back into the
 * host's memory at pyhost_buffer_release; the free callback then runs at once.
 * pyhost_buffer_in_place tells which.  Since 0.1. */

/* The most dimensions a pyhost_buffer has. */
#define PYHOST_BUFFER_MAXDIM 8

/* Called once when neither pyhost nor Python reads data any more (data and userdata as
 * given in the spec).  It runs with the GIL held, possibly on a thread Python runs,
 * and must not call pyhost. */
typedef void (*pyhost_buffer_free_fn)(void *data, void *userdata);

/* What a pyhost_buffer lends.  Read by pyhost_buffer_new only (it may be temporary).
 * The layout is frozen (docs/abi.md). */
typedef struct pyhost_buffer_spec {
  void *data;           /* the first byte; may be NULL only when there are no items */
  const char *format;   /* one native struct letter: b B h H i I l L q Q n N f d ? c;
                         * NULL means "B" */
  int ndim;             /* 1 .. PYHOST_BUFFER_MAXDIM */
  size_t shape[PYHOST_BUFFER_MAXDIM]; /* items per dimension, C order (row-major,
                         * contiguous); 0 only in a 1-dimensional buffer */
  int writable;         /* 0: Python gets a read-only view (a write raises TypeError) */
  pyhost_buffer_free_fn free_fn; /* NULL: the memory outlives pyhost (static data) */
  void *userdata;       /* passed to free_fn */
} pyhost_buffer_spec;

/* Lends spec's memory to Python; *out (own) is the handle, to give to
 * pyhost_buffer_release.  PYHOST_MISUSE for a NULL argument, an unknown format, ndim
 * out of range, a size that overflows, or NULL data with items.  Since 0.1. */
PYHOST_API int pyhost_buffer_new(pyhost *h, const pyhost_buffer_spec *spec, pyhost_buffer **out);

/* The buffer's memoryview as an object value (own *view; the same memoryview each
 * time), to pass to Python by any call.  Since 0.1. */
PYHOST_API int pyhost_buffer_value(pyhost *h, pyhost_buffer *b, pyhost_value **view);

/* 1 when Python reads the host's memory in place (3.11+), 0 when it reads a copy
 * (before 3.11).  Since 0.1. */
PYHOST_API int pyhost_buffer_in_place(const pyhost_buffer *b);

/* Ends the loan (own b: the handle is gone after the call, whatever it returns).
 * Releases pyhost's memoryview; *exports (may be NULL) receives the number of exports
 * Python still holds (views made from it, numpy arrays): 0 means the free callback
 * has run; more means it runs when the last ends.  Returns PYHOST_OK; PYHOST_MISUSE
 * for a NULL h or b.  After pyhost_finalize it only runs the free callback.
 * Since 0.1. */
PYHOST_API int pyhost_buffer_release(pyhost *h, pyhost_buffer *b, size_t *exports);

/* ---- Python buffers read by the host ----
 *
 * A view of a Python object's memory, in place: bytes and bytearray on every version
 * (a bytearray cannot be resized while viewed), and from 3.11 any object exporting
 * the buffer protocol (memoryview, array.array, numpy arrays) with its format, shape
 * and strides.  Before 3.11 other exporters arrive through one copy, made C-contiguous
 * by memoryview.tobytes() with their format and shape kept; the view then says copied
 * and is read-only.  Release every view with pyhost_view_release. */
typedef struct pyhost_view {
  void *data;               /* the first byte */
  size_t len;               /* bytes in all */
  size_t itemsize;          /* bytes per item */
  const char *format;       /* struct syntax ("B", "d", "<f"); "B" when the exporter
                             * gives none */
  int readonly;             /* 1: do not write */
  int ndim;                 /* dimensions (0 for a scalar) */
  const ptrdiff_t *shape;   /* ndim items */
  const ptrdiff_t *strides; /* ndim items, in bytes (C-contiguous unless the exporter
                             * says otherwise) */
  int copied;               /* 1: data is a copy pyhost made (before 3.11) */
  void *internal_[16];      /* pyhost's */
} pyhost_view;

/* pyhost_view_get flags. */
#define PYHOST_VIEW_WRITABLE 1u   /* refuse a read-only buffer (and a copy) */
#define PYHOST_VIEW_CONTIGUOUS 2u /* refuse a buffer that is not C-contiguous */

/* Fills *view with obj's buffer: an object value (a bytearray, a memoryview, an array
 * or numpy array from Python) read in place as described above, or a bytes value read
 * in place from the value itself (no Python involved; view it only while the value
 * lives).  PYHOST_TYPE naming the type for anything that exports no buffer,
 * PYHOST_TYPE also for a read-only buffer asked PYHOST_VIEW_WRITABLE or a strided one
 * asked PYHOST_VIEW_CONTIGUOUS; PYHOST_MISUSE for NULL arguments.  On failure *view is
 * zeroed (releasing it is a no-op).  Since 0.1. */
PYHOST_API int pyhost_view_get(pyhost *h, const pyhost_value *obj, unsigned flags,
                               pyhost_view *view);

/* Releases a view (the exporter may resize or free its memory again) and zeroes it.
 * A zeroed view is a no-op, and so is a borrowed view (a typed callback's buffer
 * parameter, pyhost_args_view's), which pyhost releases itself when the callback
 * returns: refused with PYHOST_MISUSE's message set, during the call or after.  Takes the GIL when it holds a Python object; after
 * pyhost_finalize it only forgets it.  Since 0.1. */
PYHOST_API void pyhost_view_release(pyhost *h, pyhost_view *view);

/* ---- arrays of numbers ----
 *
 * C arrays to and from Python lists without a pyhost_value per item: the list is made
 * and read in C in one pass of Python's own loops where the stable ABI has them. */

/* A Python list of n ints (or floats) holding a[0..n), as an object value (own
 * *list): pass it to Python as any value (kind PYHOST_KIND_OBJECT: it stays one Python
 * list; pyhost_value_to_int64s reads it back).  Since 0.1. */
PYHOST_API int pyhost_value_from_int64s(pyhost *h, const int64_t *a, size_t n,
                                        pyhost_value **list);
PYHOST_API int pyhost_value_from_doubles(pyhost *h, const double *a, size_t n,
                                         pyhost_value **list);

/* Reads a list or tuple of ints (or floats; ints are accepted as floats) into
 * out[0..cap): v may be an object value (a list or tuple Python made, as the "o"
 * result letter gives) or a list or tuple value.  *n receives the number of items; when
 * cap is smaller nothing is written and the answer is PYHOST_RANGE (call again with
 * *n).  PYHOST_TYPE names the first item of another type ("item 3: expected int, got
 * str") or a v that is no list or tuple; PYHOST_RANGE an int beyond 64 bits.
 * Since 0.1. */
PYHOST_API int pyhost_value_to_int64s(pyhost *h, const pyhost_value *v, int64_t *out,
                                      size_t cap, size_t *n);
PYHOST_API int pyhost_value_to_doubles(pyhost *h, const pyhost_value *v, double *out,
                                       size_t cap, size_t *n);

/* ======================================================================
 * holding the GIL across calls
 * ====================================================================== */

/* Takes Python's GIL for the calling thread and keeps it until the matching
 * pyhost_gil_leave, so that the pyhost calls in between skip taking it themselves
 * (PyGILState_Ensure/Release on every call): a tight loop of calls pays for the GIL
 * once.  Scopes nest (a counter per thread); the outermost enter takes the GIL and the
 * outermost leave releases it.  Python's own thread switching still runs inside a
 * scope (the interpreter drops and retakes the GIL between bytecodes), but C code
 * between pyhost calls runs with the GIL held: keep scopes around short loops, and
 * leave before blocking or waiting for a thread that calls pyhost.
 *
 * A scope belongs to the thread that opened it: leave on the same thread.  Close every
 * scope before pyhost_finalize (which answers PYHOST_MISUSE inside one) or
 * pyhost_free.  Returns PYHOST_OK, or PYHOST_MISUSE for a NULL, failed or finalized
 * handle (also nested inside an open scope once finalize has begun).  Since 0.1. */
PYHOST_API int pyhost_gil_enter(pyhost *h);

/* Closes the innermost pyhost_gil_enter scope of this thread; the outermost releases
 * the GIL.  Returns PYHOST_OK, or PYHOST_MISUSE (message set) when this thread has no
 * open scope on h, or h is NULL or not a handle.  Since 0.1. */
PYHOST_API int pyhost_gil_leave(pyhost *h);

/* Keeps a Python thread state for the calling thread until the matching
 * pyhost_thread_detach.  A thread that Python did not create (any host thread but the
 * one that called pyhost_init) otherwise gets a thread state at the start of each
 * outermost pyhost call or GIL scope and loses it at the end, as CPython's
 * PyGILState_Ensure/Release do: making one costs hundreds of times a short call
 * (memory for its frame stack, mapped and touched anew each time), and Python's
 * per-thread state (threading.local, context variables, sys.settrace) does not last
 * from one call to the next.  A thread that makes calls in a loop, or keeps Python
 * state between calls, attaches once.  Attaching does not hold the GIL: other threads
 * run as before.  Attach and detach nest (a counter per thread); detach on the same
 * thread, before it exits: a thread that exits attached leaves its thread state to
 * pyhost_finalize, which frees it.  Returns PYHOST_OK, or PYHOST_MISUSE for a NULL,
 * failed or finalized handle.  Since 0.1. */
PYHOST_API int pyhost_thread_attach(pyhost *h);

/* Undoes the innermost pyhost_thread_attach of this thread; the outermost frees the
 * thread state pyhost made for it (threading.local values of the thread go with it).
 * After pyhost_finalize it only counts down (Python freed the thread state).  Returns
 * PYHOST_OK, or PYHOST_MISUSE (message set) when this thread is not attached, or h is
 * NULL or not a handle.  Since 0.1. */
PYHOST_API int pyhost_thread_detach(pyhost *h);

/* ======================================================================
 * interrupting running code
 * ====================================================================== */

/* Stops the Python code that pyhost calls are running right now, on every thread:
 * each such call (pyhost_exec, pyhost_eval, ...) returns PYHOST_INTERRUPTED, with
 * "interrupted by pyhost_interrupt" and the traceback of where it stopped in
 * pyhost_errmsg, and the runtime stays usable.  Python code is stopped between two
 * bytecodes by raising pyhost.Interrupted, a BaseException subclass (so
 * `except Exception` does not catch it); it cannot stop code that catches
 * BaseException and carries on, nor a blocking C call (time.sleep, a socket read)
 * before it returns.  An interrupt reaching a call that has already finished its
 * Python code is dropped: it never hits the thread's next call.  Calls made after
 * pyhost_interrupt are not affected.
 *
 * May be called from any thread, including from inside a host function (then the
 * calling thread's own running call is interrupted too, once the host function
 * returns).  It takes the GIL, so it is not async-signal-safe: from a signal handler,
 * wake a thread that calls it.  Returns PYHOST_OK (also when nothing was running), or
 * PYHOST_MISUSE for a NULL, failed or finalized handle.  Since 0.1. */
PYHOST_API int pyhost_interrupt(pyhost *h);

/* ======================================================================
 * host functions: C functions Python can call (docs/host-functions.md)
 * ====================================================================== */

/* A module the host creates in Python, named as the host chooses ("myapp"): registered
 * in sys.modules, so Python code can `import myapp`.  Owned by the host until
 * pyhost_module_free.  Not thread-safe: build a module from one thread. */
typedef struct pyhost_module pyhost_module;

/* A host function.  Called with the GIL held, on the thread running the Python code
 * that calls it.  args[0..nargs-1] are the positional arguments and kwargs a dict
 * value of the keyword arguments (NULL when there are none); all are borrowed, valid
 * until the callback returns (pyhost_value_copy what must outlive it).
 *
 * Return PYHOST_OK and set *result (own; leaving it NULL returns None), or fail:
 *   - return pyhost_raise(h, ...): Python sees that exception;
 *   - return the status of a pyhost call that failed inside the callback (say
 *     pyhost_call gave PYHOST_PYEXC): the original Python exception, with its
 *     traceback, propagates to the Python caller;
 *   - return any other status: Python sees RuntimeError("<module>.<name>: <status
 *     name>: <pyhost_errmsg text>").
 * *result is ignored (and freed) on failure.  The callback may call any pyhost
 * function on h, recursively, except pyhost_finalize. */
typedef int (*pyhost_function)(pyhost *h, void *userdata, const pyhost_value *const *args,
                               size_t nargs, const pyhost_value *kwargs,
                               pyhost_value **result);

/* Python exception types a host function can raise by code.  Append-only. */
typedef enum pyhost_exc {
  PYHOST_EXC_RUNTIME_ERROR,
  PYHOST_EXC_TYPE_ERROR,
  PYHOST_EXC_VALUE_ERROR,
  PYHOST_EXC_KEY_ERROR,
  PYHOST_EXC_INDEX_ERROR,
  PYHOST_EXC_ATTRIBUTE_ERROR,
  PYHOST_EXC_LOOKUP_ERROR,
  PYHOST_EXC_OS_ERROR,
  PYHOST_EXC_NOT_IMPLEMENTED_ERROR,
  PYHOST_EXC_ZERO_DIVISION_ERROR,
  PYHOST_EXC_OVERFLOW_ERROR,
  PYHOST_EXC_MEMORY_ERROR,
  PYHOST_EXC_REFERENCE_ERROR,
  PYHOST_EXC_EXCEPTION,
  PYHOST_EXC_BUFFER_ERROR /* BufferError: exported memory cannot change now */
} pyhost_exc;

/* Raises a Python exception of the given type with a printf-formatted UTF-8 message
 * (text that is not UTF-8 is decoded with "replace").  For use inside a host function,
 * method, getter, setter or constructor: `return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR,
 * "bad size %d", n);`.  Returns PYHOST_PYEXC, or PYHOST_MISUSE when not called from
 * inside a callback on this thread (nothing is raised then) or for an unknown type.
 * Since 0.1. */
PYHOST_API int pyhost_raise(pyhost *h, pyhost_exc type, const char *fmt, ...)
    PYHOST_PRINTF_FORMAT(3, 4);

/* As pyhost_raise with the exception class named by a dotted name, resolved as
 * pyhost_resolve does ("KeyError", "json.JSONDecodeError", "myapp.Error").  A name that
 * does not resolve to a BaseException subclass raises RuntimeError saying so, and
 * returns PYHOST_PYEXC as well.  Since 0.1. */
PYHOST_API int pyhost_raise_named(pyhost *h, const char *type_name, const char *fmt, ...)
    PYHOST_PRINTF_FORMAT(3, 4);

/* Creates module `name` (a plain identifier, or dotted "myapp.sub" when "myapp" is a
 * host module already; it then becomes an attribute of its parent) with docstring doc
 * (may be NULL) and registers it in sys.modules.  *out (own) is the handle.  A name that
 * sys.modules already has gives PYHOST_MISUSE, unless it is a module this host freed.
 * The handle holds the module: when Python code removes it from sys.modules, what
 * Python holds of it keeps working, `import name` raises ModuleNotFoundError until
 * the host puts it back (pyhost_module_value), and the handle's calls still work.
 * Since 0.1. */
PYHOST_API int pyhost_module_new(pyhost *h, const char *name, const char *doc,
                                 pyhost_module **out);

/* Adds a function `name` to the module, calling fn with userdata (borrowed: it must
 * stay valid until the function is removed or the module freed).  doc may be NULL.
 * Replaces an earlier function of that name (the old one is removed as by
 * pyhost_module_remove).  On 3.10 and later the function uses the METH_FASTCALL
 * convention (no argument tuple is built), before it uses METH_VARARGS.  Since 0.1. */
PYHOST_API int pyhost_module_add_function(pyhost *h, pyhost_module *m, const char *name,
                                          pyhost_function fn, void *userdata,
                                          const char *doc);

/* ---- host functions with borrowed arguments: the fast form ----
 *
 * The callback sees the Python arguments through a view (pyhost_args) and converts
 * only the ones it reads, one at a time, straight into C; it sets its result through
 * a pyhost_ret.  Nothing is allocated on the common path (scalar, str and bytes
 * arguments and results).  Both are borrowed and valid only until the callback
 * returns; they belong to the thread running it.  Failing works as for
 * pyhost_function: return pyhost_raise(...), the status of a failed pyhost call, or any
 * other status. */

/* The arguments of one call from Python: positional ones at indexes 0 .. count-1,
 * keyword ones after them (index count + k for the k-th keyword). */
typedef struct pyhost_args pyhost_args;
/* The result of one call: None unless a pyhost_ret_* function sets it. */
typedef struct pyhost_ret pyhost_ret;

/* A host function of the fast form: reads its arguments with the pyhost_args_* getters
 * and sets its result with the pyhost_ret_* setters (leaving it unset returns None).
 * Called with the GIL held on the thread running the Python code; returns PYHOST_OK or
 * fails as a pyhost_function does. */
typedef int (*pyhost_fast_function)(pyhost *h, void *userdata, const pyhost_args *args,
                                    pyhost_ret *ret);

/* As pyhost_module_add_function for a callback of the fast form.  Since 0.1. */
PYHOST_API int pyhost_module_add_fast_function(pyhost *h, pyhost_module *m, const char *name,
                                               pyhost_fast_function fn, void *userdata,
                                               const char *doc);

/* The number of positional arguments, and of keyword arguments. */
PYHOST_API size_t pyhost_args_count(const pyhost_args *args);
PYHOST_API size_t pyhost_args_kwcount(const pyhost_args *args);

/* The name of the k-th keyword argument (its value is at index count + k): UTF-8,
 * borrowed until the callback returns.  PYHOST_OK, or PYHOST_MISUSE (nothing raised)
 * for a k out of range or a NULL out pointer (len may be NULL).  Since 0.1. */
PYHOST_API int pyhost_args_kwname(pyhost *h, const pyhost_args *args, size_t k,
                                  const char **name, size_t *len);

/* The kind argument i would convert to (PYHOST_KIND_OBJECT for any other type), or
 * PYHOST_KIND_NONE for an index out of range.  Since 0.1. */
PYHOST_API pyhost_kind pyhost_args_kind(const pyhost_args *args, size_t i);

/* Argument i converted into C, under the rules of pyhost_value_to_int and friends: _int
 * wants an int (not a bool), _float a float or an int, _bool True or False (subclasses
 * of int and float are read by the value they store: no __index__, __float__ or other
 * Python code runs), _str a str
 * (UTF-8, borrowed until the callback returns; a NUL follows its len bytes), _bytes a
 * bytes object (borrowed likewise).  _value converts any argument into a pyhost_value
 * (own *out).  On success: PYHOST_OK.  Otherwise nothing is written and the getter
 * raises in the callback's frame and returns PYHOST_PYEXC, so `return rc;` hands the
 * exception to the Python caller: TypeError ("<function>() argument 2: expected int, got
 * str") for a wrong type or a missing argument (i >= count + kwcount), OverflowError
 * for an int beyond 64 bits.  PYHOST_MISUSE (nothing raised) when called outside the
 * callback or with a NULL out pointer.  Since 0.1. */
PYHOST_API int pyhost_args_int(pyhost *h, const pyhost_args *args, size_t i, int64_t *out);
PYHOST_API int pyhost_args_float(pyhost *h, const pyhost_args *args, size_t i, double *out);
PYHOST_API int pyhost_args_bool(pyhost *h, const pyhost_args *args, size_t i, int *out);
PYHOST_API int pyhost_args_str(pyhost *h, const pyhost_args *args, size_t i, const char **s,
                               size_t *len);
PYHOST_API int pyhost_args_bytes(pyhost *h, const pyhost_args *args, size_t i,
                                 const void **data, size_t *len);
PYHOST_API int pyhost_args_value(pyhost *h, const pyhost_args *args, size_t i,
                                 pyhost_value **out);

/* Argument i's buffer read in place, as pyhost_view_get reads an object (flags
 * PYHOST_VIEW_WRITABLE and PYHOST_VIEW_CONTIGUOUS as there; the same rules before
 * 3.11: bytes and bytearray in place, other exporters as a read-only copy), into
 * *view: borrowed, like a str or bytes argument.  pyhost releases it once the callback
 * has returned, whatever the callback returns; until then the exporter cannot resize
 * or free the memory (a bytearray refuses resizing).  Neither the pointer nor a copy
 * of the struct may be kept: pyhost_view_release refuses a borrowed view, during the
 * call or after it (it does nothing and sets PYHOST_MISUSE's message).  On 3.12+ an
 * exporter written in Python runs its __buffer__ here (and its __release_buffer__
 * once the callback returned).  Errors as the getters above: TypeError "<function>()
 * argument 1: expected bytes-like object, got int" (or "read-write bytes-like object"
 * for a read-only one asked PYHOST_VIEW_WRITABLE, "contiguous buffer" for a strided
 * one asked PYHOST_VIEW_CONTIGUOUS), or the exporter's own exception.  Since 0.1. */
PYHOST_API int pyhost_args_view(pyhost *h, const pyhost_args *args, size_t i, unsigned flags,
                                const pyhost_view **view);

/* Set the callback's result (a later call replaces an earlier one).  _str takes len
 * bytes of UTF-8 (PYHOST_STRLEN: up to a NUL); _value converts v (borrowed) as a
 * pyhost_function's result is converted; _none resets it.  PYHOST_OK, or PYHOST_PYEXC
 * with the exception raised in the callback's frame (invalid UTF-8, no memory), or
 * PYHOST_MISUSE for a NULL ret or a NULL pointer with a non-zero len.  In a typed
 * callback (pyhost_typed_function) _none, _int and _float only record the value, and
 * the Python object is made once the callback returned (so that no memory there
 * raises MemoryError to its caller, not to the callback).  Since 0.1. */
PYHOST_API int pyhost_ret_none(pyhost *h, pyhost_ret *ret);
PYHOST_API int pyhost_ret_bool(pyhost *h, pyhost_ret *ret, int b);
PYHOST_API int pyhost_ret_int(pyhost *h, pyhost_ret *ret, int64_t i);
PYHOST_API int pyhost_ret_float(pyhost *h, pyhost_ret *ret, double d);
PYHOST_API int pyhost_ret_str(pyhost *h, pyhost_ret *ret, const char *s, size_t len);
PYHOST_API int pyhost_ret_bytes(pyhost *h, pyhost_ret *ret, const void *data, size_t len);
PYHOST_API int pyhost_ret_value(pyhost *h, pyhost_ret *ret, const pyhost_value *v);

/* ---- host functions with declared arguments: the typed form ----
 *
 * The host declares once, at registration, what the function takes, in Python's own
 * notation; pyhost then checks and converts every argument in one pass before the
 * callback runs, and raises CPython's TypeErrors itself ("geo.scale() missing required
 * argument 'factor' (pos 2)", "geo.scale() argument 'x' must be float, not str",
 * "geo.scale() got an unexpected keyword argument 'z'").  Python sees the signature:
 * inspect.signature(geo.scale) and help(geo.scale) show it on every version. */

/* A typed host function: argv[i] is the i-th declared parameter, converted, in the
 * order the signature declares them (whether Python passed it by position, by keyword
 * or not at all): kind PYHOST_ARG_INT (u.i), _FLOAT (u.d; an int argument is
 * converted), _BOOL (u.b), _STR (u.s and len: UTF-8, NUL-terminated, borrowed until the
 * callback returns), _BYTES (u.p and len, borrowed likewise), _VIEW (a buffer or
 * rwbuffer parameter: u.p a const pyhost_view *, len its bytes; borrowed likewise and
 * released by pyhost after the callback, see pyhost_args_view), or PYHOST_ARG_NONE for
 * a parameter whose default is None when it was omitted or passed None.  A parameter
 * left out gets its default.  Sets its result and fails as a pyhost_fast_function
 * does. */
typedef int (*pyhost_typed_function)(pyhost *h, void *userdata, const pyhost_arg *argv,
                                     pyhost_ret *ret);

/* Adds a typed function to the module: signature names it and declares its parameters,
 * as a Python def would, each with a type and optionally a default:
 *
 *   "scale(x: float, factor: float = 1.0, /, *, label: str = None)"
 *
 * Types: int (an int, not a bool, within 64 bits), float (a float or an int), bool
 * (True or False), str, bytes: the rules of pyhost_args_int and friends; buffer (any
 * C-contiguous buffer: pyhost_args_view with PYHOST_VIEW_CONTIGUOUS) and rwbuffer (a
 * writable one: PYHOST_VIEW_CONTIGUOUS | PYHOST_VIEW_WRITABLE), whose only default is
 * None; a wrong argument raises "<function>() argument 'data' must be bytes-like
 * object, not int" ("read-write bytes-like object", "contiguous buffer").  Defaults:
 * None (the parameter then also accepts None), True, False, an int, a float, or a
 * string in quotes without backslashes; a default must match its parameter's type.
 * "/" ends the positional-only parameters and "*" begins the keyword-only ones, as in
 * Python; at most 16 parameters, named by ASCII identifiers.  The function's
 * __text_signature__ is the signature without the types, its __doc__ is doc (may be
 * NULL).  Otherwise as pyhost_module_add_fast_function (replacing, removal, finalize,
 * threads).  PYHOST_MISUSE for a NULL fn or signature, or a signature pyhost cannot
 * read: the message says what and at which column.  Since 0.1. */
PYHOST_API int pyhost_module_add_typed_function(pyhost *h, pyhost_module *m,
                                                const char *signature,
                                                pyhost_typed_function fn, void *userdata,
                                                const char *doc);

/* Sets module attribute `name` to val (converted to Python; an object value is shared).
 * Since 0.1. */
PYHOST_API int pyhost_module_add_value(pyhost *h, pyhost_module *m, const char *name,
                                       const pyhost_value *val);

/* Creates an exception class `<module>.<name>` deriving from base (a pyhost_exc;
 * PYHOST_EXC_EXCEPTION for Exception itself; an unknown value is PYHOST_MISUSE),
 * stores it as a module attribute, and returns it as an object value in *cls (own; may
 * be NULL when the caller does not want it).  Raise it with
 * pyhost_raise_named(h, "myapp.Error", ...).  Since 0.1. */
PYHOST_API int pyhost_module_add_exception(pyhost *h, pyhost_module *m, const char *name,
                                           pyhost_exc base, pyhost_value **cls);

/* Unregisters function `name`: it disappears from the module, and any reference Python
 * code kept (`f = myapp.f`) raises RuntimeError("myapp.f was unregistered by the
 * host") when called.  After it returns, fn is never called again and userdata is no
 * longer used.  PYHOST_NOTFOUND when there is no such host function.  Since 0.1. */
PYHOST_API int pyhost_module_remove(pyhost *h, pyhost_module *m, const char *name);

/* The module as an object value (own *module), e.g. to pass to Python code.
 * Since 0.1. */
PYHOST_API int pyhost_module_value(pyhost *h, pyhost_module *m, pyhost_value **module);

/* Unregisters every function of the module (as pyhost_module_remove), removes the
 * module from sys.modules and frees the handle (own parameter).  Host types created in
 * it stay usable until pyhost_type_free.  Python code that still holds the module
 * object keeps its non-function attributes.  After pyhost_finalize it frees only C
 * memory; once finalize has begun on another thread, it waits for the calls finalize
 * waits for.  NULL m is a no-op.  Since 0.1. */
PYHOST_API void pyhost_module_free(pyhost *h, pyhost_module *m);

/* ======================================================================
 * host types: classes backed by C data (docs/host-types.md)
 * ====================================================================== */

/* A class the host defines, built from a PyType_Spec at run time
 * (PyType_FromModuleAndSpec on 3.10+, PyType_FromSpecWithBases before).  Every
 * instance carries a C payload: a pointer the host manages, or (payload_size > 0) bytes
 * inside the object itself.  Owned by the host until pyhost_type_free. */
typedef struct pyhost_type pyhost_type;

/* Callbacks of a host type.  All run with the GIL held; `payload` is the instance's C
 * pointer, `userdata` the spec's userdata.  They fail as host functions fail
 * (pyhost_raise, a failed pyhost call's status, or another status).  When an instance
 * was invalidated (pyhost_object_invalidate), no callback runs: Python gets
 * ReferenceError("<type> object was invalidated by the host"). */
typedef int (*pyhost_method)(pyhost *h, void *payload, void *userdata,
                             const pyhost_value *const *args, size_t nargs,
                             const pyhost_value *kwargs, pyhost_value **result);
/* A property read: set *result (own; NULL means None). */
typedef int (*pyhost_getter)(pyhost *h, void *payload, void *userdata, pyhost_value **result);
/* A property write (`obj.x = value`); value is borrowed.  `del obj.x` raises
 * AttributeError without calling it. */
typedef int (*pyhost_setter)(pyhost *h, void *payload, void *userdata,
                             const pyhost_value *value);
/* The constructor Python calls as `myapp.Buffer(...)`: set *payload (it may be NULL) and
 * return PYHOST_OK, or fail.  Without a constructor Python cannot create instances
 * (TypeError); the host makes them with pyhost_object_new. */
typedef int (*pyhost_constructor)(pyhost *h, void *userdata, const pyhost_value *const *args,
                                  size_t nargs, const pyhost_value *kwargs, void **payload);
/* Runs when Python drops the last reference to an instance that still has a payload
 * (not after pyhost_object_invalidate).  Also runs during pyhost_finalize for instances
 * that die then; it must not call pyhost functions (they would answer PYHOST_MISUSE
 * during finalize).  Instances that Python never frees at finalize (CPython does not
 * promise to free everything) never get it. */
typedef void (*pyhost_destructor)(void *payload, void *userdata);
/* For payloads that hold object values (pyhost_value of kind OBJECT, possibly inside
 * containers): call visit(v, arg) on each, so that Python's cycle collector sees them.
 * With a traverse callback the type supports GC: an instance in an unreachable cycle
 * is cleared by running its destructor early (the payload is then gone and the
 * instance invalidated) — so the destructor must free those values. */
typedef void (*pyhost_visit)(const pyhost_value *v, void *arg);
typedef void (*pyhost_traverse)(void *payload, void *userdata, pyhost_visit visit, void *arg);

/* ---- host types with borrowed arguments: the fast form ----
 *
 * The callbacks of a host type in the form of pyhost_fast_function: arguments are read
 * through a borrowed pyhost_args view with the pyhost_args_* getters and results set
 * with the pyhost_ret_* setters, nothing converted or allocated on the common path.
 * They fail as the value form fails (pyhost_raise, a failed pyhost call's status with
 * its traceback, any other status), refuse invalidated instances (ReferenceError) and
 * calls during finalize (RuntimeError) the same way.  The name in an argument's
 * TypeError is "<module>.<Type>.<name>".  Since 0.1. */

/* obj.name(...): args are the arguments after self. */
typedef int (*pyhost_fast_method)(pyhost *h, void *payload, void *userdata,
                                  const pyhost_args *args, pyhost_ret *ret);
/* A property read: set *ret (unset means None). */
typedef int (*pyhost_fast_getter)(pyhost *h, void *payload, void *userdata, pyhost_ret *ret);
/* A property write (`obj.x = value`): value is a view of one argument (index 0), read
 * with the pyhost_args_* getters.  `del obj.x` raises AttributeError without calling it. */
typedef int (*pyhost_fast_setter)(pyhost *h, void *payload, void *userdata,
                                  const pyhost_args *value);
/* The constructor Python calls as `myapp.Buffer(...)`.  For a type with an inline
 * payload (payload_size > 0) *payload points on entry at the instance's zeroed payload:
 * initialise it in place (a different pointer stored in *payload is ignored).  For
 * other types *payload is NULL on entry: set it, as a pyhost_constructor does.  When it
 * fails, the instance is dropped without running the destructor: the constructor
 * cleans up what it made. */
typedef int (*pyhost_fast_constructor)(pyhost *h, void *userdata, const pyhost_args *args,
                                       void **payload);

/* ---- host types with declared arguments: the typed form ----
 *
 * Methods and the constructor of a host type with a signature declared at
 * registration, in the notation of pyhost_module_add_typed_function: pyhost binds and
 * converts the arguments in one pass before the callback runs, with the same
 * TypeErrors ("myapp.Counter.add() argument 'n' must be int, not str"), and Python
 * sees the signature (inspect.signature(myapp.Counter.add) is "(self, /, n, step=1)",
 * inspect.signature(obj.add) and inspect.signature(myapp.Counter) leave self out).
 * argv is as a pyhost_typed_function's; they refuse invalidated instances and calls
 * during finalize, and fail, as the fast forms do.  Since 0.1. */

/* obj.name(...): argv[i] is the i-th declared parameter (self not among them),
 * converted. */
typedef int (*pyhost_typed_method)(pyhost *h, void *payload, void *userdata,
                                   const pyhost_arg *argv, pyhost_ret *ret);
/* `myapp.T(...)`: argv as above; *payload on entry and what to do with it as for a
 * pyhost_fast_constructor (an inline payload is initialised in place). */
typedef int (*pyhost_typed_constructor)(pyhost *h, void *userdata, const pyhost_arg *argv,
                                        void **payload);

/* One typed method.  An element of arrays: frozen (docs/abi.md). */
typedef struct pyhost_typed_method_def {
  const char *signature;    /* "add(n: int, step: int = 1)": names the method */
  pyhost_typed_method fn;   /* never NULL */
  const char *doc;          /* may be NULL */
} pyhost_typed_method_def;

/* One fast method: obj.name(...) calls fn with the instance's payload.  An element of
 * arrays: frozen (docs/abi.md). */
typedef struct pyhost_fast_method_def {
  const char *name;         /* the method's name */
  pyhost_fast_method fn;    /* never NULL */
  const char *doc;          /* may be NULL */
} pyhost_fast_method_def;

/* One fast property: reading obj.name calls get, writing it calls set. */
typedef struct pyhost_fast_property_def {
  const char *name;         /* the attribute's name */
  pyhost_fast_getter get;   /* NULL: write-only (reading raises AttributeError) */
  pyhost_fast_setter set;   /* NULL: read-only */
  const char *doc;          /* may be NULL */
} pyhost_fast_property_def;

/* One method of a host type: obj.name(...) calls fn with the instance's payload. */
typedef struct pyhost_method_def {
  const char *name;         /* the method's name */
  pyhost_method fn;         /* never NULL */
  const char *doc;          /* may be NULL */
} pyhost_method_def;

/* One property of a host type: reading obj.name calls get, writing it calls set. */
typedef struct pyhost_property_def {
  const char *name;         /* the attribute's name */
  pyhost_getter get;        /* NULL: write-only (reading raises AttributeError) */
  pyhost_setter set;        /* NULL: read-only */
  const char *doc;          /* may be NULL */
} pyhost_property_def;

/* Type flags, or-ed into pyhost_type_spec.flags. */
enum pyhost_type_flag {
  /* Let Python code subclass the type.  Honoured on 3.8 and later only: on 3.6 and
   * 3.7 the runtime decrefs a heap type twice when a Python subclass instance dies
   * (bpo-37879), so there the type stays final (`class X(myapp.T)` raises TypeError). */
  PYHOST_TYPE_SUBCLASSABLE = 1u << 0,
  /* Instances support weak references (weakref.ref(obj)).  Honoured on 3.9 and later
   * only (the stable ABI's __weaklistoffset__ member is ignored before): on 3.6-3.8
   * weakref.ref(obj) raises TypeError.  pyhost_type_has_weakrefs tells. */
  PYHOST_TYPE_WEAKREF = 1u << 1
};

/* What an instance's payload exports through the buffer protocol: filled by a
 * pyhost_getbuffer callback each time Python asks.  The layout is frozen (docs/abi.md). */
typedef struct pyhost_buffer_info {
  void *data;         /* the first byte; may be NULL only when there are no items */
  const char *format; /* one native struct letter as in pyhost_buffer_spec; NULL: "B" */
  int ndim;           /* 1 .. PYHOST_BUFFER_MAXDIM */
  size_t shape[PYHOST_BUFFER_MAXDIM]; /* items per dimension, C order, contiguous */
  int writable;       /* 0: Python's views are read-only */
} pyhost_buffer_info;

/* Describes payload's memory in *info (zeroed before the call) when Python asks for the
 * instance's buffer (memoryview(obj), numpy.asarray(obj)).  Runs with the GIL held and
 * must not call pyhost.  Returns PYHOST_OK, or any other status to refuse: Python gets
 * BufferError naming the type and the status.  A description pyhost cannot read (an
 * unknown format, ndim out of range, NULL data with items) is BufferError saying so. */
typedef int (*pyhost_getbuffer)(void *payload, void *userdata, pyhost_buffer_info *info);

/* Everything pyhost_type_new needs.  pyhost copies the strings and the arrays: the spec
 * may be temporary.  Set size to sizeof(pyhost_type_spec) (PYHOST_TYPE_SPEC_INIT does):
 * later versions append fields, and a library reads only the fields a caller's size
 * covers, so hosts compiled against an older header keep working. */
typedef struct pyhost_type_spec {
  size_t size;                           /* sizeof(pyhost_type_spec) as the caller knew it */
  const char *name;                      /* "Buffer": the class is <module>.Buffer */
  const char *doc;                       /* may be NULL */
  const pyhost_method_def *methods;      /* n_methods entries, may be NULL */
  size_t n_methods;                      /* entries in methods */
  const pyhost_property_def *properties; /* n_properties entries, may be NULL */
  size_t n_properties;                   /* entries in properties */
  pyhost_constructor constructor;        /* NULL: not instantiable from Python */
  pyhost_destructor destructor;          /* NULL: the payload is the host's business */
  pyhost_traverse traverse;              /* NULL: payloads hold no object values */
  void *userdata;                        /* passed to every callback; borrowed */
  unsigned flags;                        /* pyhost_type_flag values */
  /* Appended fields (a caller whose size stops before them gets 0 for each). */
  const pyhost_fast_method_def *fast_methods;      /* n_fast_methods entries, may be NULL */
  size_t n_fast_methods;                           /* entries in fast_methods */
  const pyhost_fast_property_def *fast_properties; /* n_fast_properties entries */
  size_t n_fast_properties;                        /* entries in fast_properties */
  pyhost_fast_constructor fast_constructor; /* instead of constructor (not both) */
  /* > 0: each instance carries its payload inline, payload_size bytes inside the
   * object itself (no allocation of its own), zeroed when the instance is made and
   * aligned to 16 bytes (alignof(max_align_t)) on 3.8+, 8 on 3.6 and 3.7.  Callbacks
   * get a pointer to it; the destructor still runs on it, then its memory goes with the
   * object.  0: the payload is a pointer the host manages. */
  size_t payload_size;
  /* Appended in 0.1 with the typed form (see "host types with declared arguments"). */
  const pyhost_typed_method_def *typed_methods;    /* n_typed_methods entries, may be NULL */
  size_t n_typed_methods;                          /* entries in typed_methods */
  /* The typed constructor and its signature, named after the type:
   * "Counter(start: int = 0)".  Instead of constructor and fast_constructor (at most
   * one of the three); both set or both NULL. */
  pyhost_typed_constructor typed_constructor; /* NULL: see constructor */
  const char *constructor_signature;          /* typed_constructor's: "Counter(...)" */
  /* Appended with bulk data (issue 37): instances export their payload's memory through the buffer
   * protocol (memoryview, numpy, bytes(obj) read it in place), described by getbuffer
   * at each request.  While Python holds such a view the instance counts it
   * (pyhost_object_exports): the host must not resize or free that memory then, and
   * pyhost_object_invalidate answers PYHOST_BUSY.  Needs Python 3.11+ (the first stable
   * ABI with the buffer protocol): before, pyhost_type_new refuses a spec with it
   * (PYHOST_VERSION).  NULL: no buffer (docs/host-types.md, "Exporting memory"). */
  pyhost_getbuffer getbuffer;
} pyhost_type_spec;

/* Starts a pyhost_type_spec initializer with its size: PYHOST_TYPE_SPEC_INIT, .name = "T" */
#define PYHOST_TYPE_SPEC_INIT .size = sizeof(pyhost_type_spec)

/* Creates the class and stores it as attribute spec->name of module m.  *out (own) is
 * the handle.  PYHOST_MISUSE for a NULL or invalid spec (no name, a method without fn,
 * a property with neither get nor set, more than one of constructor, fast_constructor
 * and typed_constructor, a typed method or constructor whose signature pyhost cannot
 * read or a constructor signature not named after the type, a payload_size over
 * 1 MiB), PYHOST_PYEXC when Python refuses it.  Since 0.1. */
PYHOST_API int pyhost_type_new(pyhost *h, pyhost_module *m, const pyhost_type_spec *spec,
                               pyhost_type **out);

/* 1 when instances of t support weak references on this runtime (see
 * PYHOST_TYPE_WEAKREF), else 0.  Since 0.1. */
PYHOST_API int pyhost_type_has_weakrefs(const pyhost_type *t);

/* The class as an object value (own *cls).  Since 0.1. */
PYHOST_API int pyhost_type_value(pyhost *h, pyhost_type *t, pyhost_value **cls);

/* Drops the host's handle on the class (own parameter).  The class and its instances
 * live on while Python holds them, and their callbacks keep being called: free the type
 * only when the userdata and callbacks stay valid, or invalidate the instances first.
 * After pyhost_finalize it frees only C memory.  NULL t is a no-op.  Since 0.1. */
PYHOST_API void pyhost_type_free(pyhost *h, pyhost_type *t);

/* Creates an instance of t carrying payload (may be NULL) and returns it as an object
 * value (own *obj).  The destructor runs on payload when Python drops the last
 * reference (freeing *obj drops the host's).  The constructor is not called.  For a
 * type with an inline payload (payload_size > 0), payload_size bytes are copied from
 * payload into the instance's own payload (zeroed when payload is NULL); the host keeps
 * what payload points at, and pyhost_object_payload gives the inline copy.
 * Since 0.1. */
PYHOST_API int pyhost_object_new(pyhost *h, pyhost_type *t, void *payload, pyhost_value **obj);

/* The payload of an instance of t (or of a Python subclass of it) into *payload.
 * PYHOST_TYPE (naming the expected and actual type) when obj is something else;
 * PYHOST_MISUSE ("... was invalidated by the host") when it was invalidated, and once
 * finalize has begun (the instance dies with the interpreter).  Needs no GIL.
 * Since 0.1. */
PYHOST_API int pyhost_object_payload(pyhost *h, const pyhost_value *obj, pyhost_type *t,
                                     void **payload);

/* Detaches the payload from an instance of t while Python may still hold it: the
 * destructor does not run (the host destroys the C object itself), and every later
 * method call, property access or pyhost_object_payload on it fails with
 * ReferenceError / PYHOST_MISUSE.  Invalidating twice is PYHOST_OK.  PYHOST_TYPE when
 * obj is not an instance of t.  PYHOST_BUSY while Python holds buffer
 * views of the payload (a type with getbuffer; pyhost_object_exports): nothing changes
 * then.  Since 0.1. */
PYHOST_API int pyhost_object_invalidate(pyhost *h, const pyhost_value *obj, pyhost_type *t);

/* The number of buffer views Python holds of an instance's payload (t a type whose
 * spec has getbuffer) into *exports: memoryviews, numpy arrays and the like made from
 * it and not yet released.  A host resizes or frees the payload's memory only when it is 0; from
 * a method, refuse with `return pyhost_raise(h, PYHOST_EXC_BUFFER_ERROR, ...)` as
 * bytearray does.  0 for a type without getbuffer.  PYHOST_TYPE when obj is not an
 * instance of t, PYHOST_MISUSE for NULL arguments.  Since 0.1. */
PYHOST_API int pyhost_object_exports(pyhost *h, const pyhost_value *obj, pyhost_type *t,
                                     size_t *exports);

/* As pyhost_object_exports for a payload, as a method or property callback of t gets
 * it: the buffer views Python holds of instances of t carrying payload (instances that
 * share a payload share its count).  0 for a payload nothing exports.  PYHOST_MISUSE
 * for NULL t or exports.  Since 0.1. */
PYHOST_API int pyhost_payload_exports(pyhost *h, pyhost_type *t, const void *payload,
                                      size_t *exports);

/* ======================================================================
 * plugins
 * ====================================================================== */

/* A Python plugin: a .py file or a package directory loaded into a namespace of its
 * own (docs/plugins.md).  Each load gets fresh, unique module names
 * ("_pyhost_plugin_<name>_<n>"), so two plugins defining the same names never
 * collide.  A plugin reaches its sibling files by relative imports only
 * (`from . import helper`, `from .util import f`): for a file d/x.py they resolve in
 * d/, for a package in the package, and each plugin gets its own copy.  Plugin code
 * is compiled from source on every load, never from __pycache__.  A plugin that fails
 * (to load, or in a hook) only returns an error: other plugins and the host go on.
 * Not thread-safe: one thread at a time per plugin (at the process isolation level,
 * calls from several threads take turns; see "isolation levels" below). */
typedef struct pyhost_plugin pyhost_plugin;

/* Loads the plugin at path (a .py file, or a directory with __init__.py) and runs its
 * top-level code; it calls no hook.  On PYHOST_OK *out is the plugin (own result:
 * release with pyhost_plugin_unload).  Otherwise *out is NULL and the status is
 * PYHOST_PYEXC (the code raised, or the path is missing or not a plugin: the message
 * starts "loading plugin NAME from PATH failed" and has the traceback, whose frames
 * start in the plugin's file; a SyntaxError shows file, line and the caret),
 * PYHOST_EXIT (SystemExit at top level), PYHOST_NOMEM or PYHOST_MISUSE (NULL
 * arguments, handle not running).  Since 0.1. */
PYHOST_API int pyhost_plugin_load(pyhost *h, const char *path, pyhost_plugin **out);

/* The plugin's name (file name without ".py", or the directory's name), the absolute
 * path it was loaded from, and the name of its module in sys.modules.  Owned by p:
 * name and path until pyhost_plugin_unload, the module name until the next successful
 * pyhost_plugin_reload.  "" for NULL, and the module name "" while an
 * interpreter-level plugin has no interpreter (a failed restart, or finalize, ended it;
 * its calls answer PYHOST_MISUSE saying so).  Since 0.1. */
PYHOST_API const char *pyhost_plugin_name(const pyhost_plugin *p);
PYHOST_API const char *pyhost_plugin_path(const pyhost_plugin *p);
PYHOST_API const char *pyhost_plugin_module_name(const pyhost_plugin *p);

/* PYHOST_OK when the plugin's module has a callable attribute named hook;
 * PYHOST_NOHOOK ("plugin NAME has no hook HOOK") when it has none or it is not
 * callable; PYHOST_PYEXC when a module __getattr__ raised something else than
 * AttributeError; PYHOST_MISUSE for NULL arguments.
 * Since 0.1. */
PYHOST_API int pyhost_plugin_has_hook(pyhost *h, pyhost_plugin *p, const char *hook);

/* *names (own result) is a list value of str: the plugin's public hooks, i.e. the
 * callables in its namespace whose names do not start with "_" and that its own files
 * define (classes and imported functions are left out), in definition order.
 * PYHOST_OK, PYHOST_MISUSE, PYHOST_NOMEM or PYHOST_PYEXC.  Since 0.1. */
PYHOST_API int pyhost_plugin_hooks(pyhost *h, pyhost_plugin *p, pyhost_value **names);

/* Calls hook(*args, **kwargs) in the plugin.  args is a list or tuple value or NULL
 * (no arguments); kwargs a dict value with str keys or NULL; both stay the caller's.
 * On PYHOST_OK *result (own result; result may be NULL to discard it) is the returned
 * value, converted as pyhost_eval converts.  Errors: PYHOST_NOHOOK (as
 * pyhost_plugin_has_hook), PYHOST_TYPE (args or kwargs of another kind),
 * PYHOST_PYEXC ("plugin NAME: hook HOOK raised: " and the traceback), PYHOST_EXIT
 * (the hook raised SystemExit; the host keeps running), PYHOST_MISUSE, PYHOST_NOMEM.
 * The plugin stays loaded whatever the hook did.  Since 0.1. */
PYHOST_API int pyhost_plugin_call(pyhost *h, pyhost_plugin *p, const char *hook,
                                  const pyhost_value *args, const pyhost_value *kwargs,
                                  pyhost_value **result);

/* As pyhost_plugin_call in one line: hook's arguments and result as the format of
 * pyhost_prepared_callf says (a Python error is PYHOST_PYEXC, "plugin NAME: hook HOOK
 * raised: " and the traceback, as pyhost_plugin_call's).  A borrowed result (>s, >y)
 * stays valid until the plugin's next pyhost_plugin_callf has returned, or its unload
 * (appended in 0.1: before, it was refused with PYHOST_MISUSE).  Since 0.1. */
PYHOST_API int pyhost_plugin_callf(pyhost *h, pyhost_plugin *p, const char *hook,
                                   const char *fmt, ...);

/* *module (own result) is an object value referencing the plugin's module, for the
 * calls that take an object.  Since 0.1. */
PYHOST_API int pyhost_plugin_module(pyhost *h, pyhost_plugin *p, pyhost_value **module);

/* Loads the plugin's path again, for development: edits to its file and to its
 * sibling files are picked up.  The new code runs in new modules; on PYHOST_OK they
 * replace the old ones (removed from sys.modules; objects Python still holds from
 * the old code keep working).  On failure (statuses as pyhost_plugin_load) the plugin
 * keeps its previous module and hooks, so a typo while editing does not disable it.
 * No hook is called: a host with on_unload/on_load hooks calls them around it.  At the
 * process level the plugin's process reloads it; a plugin whose process ended is
 * started again, as pyhost_plugin_restart does.  Since 0.1. */
PYHOST_API int pyhost_plugin_reload(pyhost *h, pyhost_plugin *p);

/* Removes the plugin's modules from sys.modules, drops pyhost's reference and frees
 * p (own parameter).  Calls no hook.  Objects Python still holds (a callback the
 * plugin registered) stay alive.  After pyhost_finalize only the C memory is freed;
 * unload plugins before pyhost_free.  Unloading a plugin whose hook is running (from
 * a host function the hook called) is safe: the hook's call frees p as it returns,
 * and any other call on p meanwhile answers PYHOST_MISUSE.  Once finalize has begun on
 * another thread, it waits for the calls finalize waits for.  NULL is a no-op.  At the
 * process level it ends the plugin's process (told to end, killed if it has not
 * within the grace period, reaped before unload returns); a call of p running on
 * another thread is interrupted first (it returns PYHOST_INTERRUPTED, or
 * PYHOST_PROCESS when it had to be killed), and unload waits for it.  At the
 * interpreter level it ends the plugin's sub-interpreter, at once or, while calls of
 * p run, as the last of them returns (those on other threads are interrupted first,
 * from Python 3.9).  Since 0.1. */
PYHOST_API void pyhost_plugin_unload(pyhost_plugin *p);

/* ---- isolation levels (docs/plugins.md, "Isolation") ----
 *
 * A plugin loaded with pyhost_plugin_load shares the host's interpreter (the shared
 * level).  pyhost_plugin_load_with takes options, among them the level:
 *
 *   pyhost_plugin_options *o = pyhost_plugin_options_new();
 *   pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_PROCESS);
 *   pyhost_plugin_options_set_memory_limit(o, 512u << 20);
 *   int rc = pyhost_plugin_load_with(h, "plugins/risky.py", o, &p);
 *   pyhost_plugin_options_free(o);
 *
 * Every plugin call above works at every level with the same meaning, statuses and
 * messages, with these differences at the process level:
 *  - values cross as data: an object value (any Python object but None, bool, int,
 *    float, str, bytes, list, tuple and dict) cannot cross; a hook that returns one
 *    gives PYHOST_TYPE naming its type, and so does a host function;
 *  - pyhost_plugin_module answers PYHOST_MISUSE (the module lives in the plugin's
 *    process); pyhost_plugin_module_name names it there;
 *  - the plugin's process may end (a crash, a kill, a limit): the call that was
 *    running returns PYHOST_PROCESS (or PYHOST_LIMIT) with the signal or exit code and
 *    the last lines the process wrote to stderr; every later call returns
 *    PYHOST_PROCESS until pyhost_plugin_restart (or pyhost_plugin_reload) starts it
 *    again; the host and other plugins go on;
 *  - host functions of the host's modules are there for the plugin (the same modules,
 *    functions, plain values and exception classes) and run in the host, on the
 *    thread of the plugin call, nested to any depth; host types are in-process only:
 *    in the plugin's process `myapp.Counter(...)` raises TypeError saying so;
 *  - calls of one process-level plugin from several host threads take turns (a call
 *    waits for the one running; a call from inside a host function the plugin called
 *    is nested, not a deadlock); calls of different plugins run in parallel; a call
 *    that would wait for a plugin whose running call waits for a plugin this thread's
 *    call holds answers PYHOST_MISUSE instead of deadlocking;
 *  - pyhost_interrupt reaches the plugin's process: the running hook gets
 *    KeyboardInterrupt (a subclass that is also pyhost.Interrupted), also inside
 *    time.sleep, and the call returns PYHOST_INTERRUPTED as in-process. */

/* The isolation levels.  Values are fixed (docs/abi.md); new levels are appended. */
typedef enum pyhost_isolation {
  /* The host's interpreter, the plugin's own module namespace (pyhost_plugin_load). */
  PYHOST_ISOLATION_SHARED = 0,
  /* A sub-interpreter of the plugin's own: its own sys.modules, sys.path, builtins
   * and __main__, ended when the plugin is unloaded.  Values cross as data, as at the
   * process level; the host's modules are made there (host types refuse); before
   * Python 3.9 only the thread that loaded the plugin may call it (others get
   * PYHOST_MISUSE).  docs/plugins.md, "The plugin's interpreter". */
  PYHOST_ISOLATION_INTERPRETER = 1,
  /* A worker process pyhost starts and owns, running the host's Python or another
   * one: crash isolation, limits, a restart without restarting the host. */
  PYHOST_ISOLATION_PROCESS = 2
} pyhost_isolation;

/* Options of one plugin load, as pyhost_config is for pyhost_init: made with every
 * default (the shared level), set by the setters below, copied by
 * pyhost_plugin_load_with (free or reuse it right after).  Not thread-safe: one thread
 * builds it. */
typedef struct pyhost_plugin_options pyhost_plugin_options;

/* own result, or NULL when out of memory.  Since 0.1. */
PYHOST_API pyhost_plugin_options *pyhost_plugin_options_new(void);

/* Frees the options; NULL is a no-op.  Since 0.1. */
PYHOST_API void pyhost_plugin_options_free(pyhost_plugin_options *o);

/* Each setter returns PYHOST_OK, PYHOST_NOMEM, or PYHOST_MISUSE for a NULL o or a value
 * out of range.  The options that apply to the process level only (everything below
 * the isolation) make pyhost_plugin_load_with answer PYHOST_MISUSE at another level. */

/* The isolation level (a pyhost_isolation).  Default PYHOST_ISOLATION_SHARED.
 * Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_isolation(pyhost_plugin_options *o, int isolation);

/* Process level: the Python the plugin's process runs, as pyhost_init would choose it
 * from cfg (copied): a library (pyhost_config_set_library), or a version requirement
 * that discovery resolves in the new process (pyhost_config_set_min_python,
 * _max_python, _python_minor; docs/discovery.md), and the rest of a config (sys.path
 * entries, isolation from PYTHON* variables...).  NULL (the default): the host's own
 * Python, started as the host started it.  A Python the plugin's process cannot start
 * makes the load fail with pyhost_init's status and message.  Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_python(pyhost_plugin_options *o,
                                                const pyhost_config *cfg);

/* Process level: the worker program (pyhost-worker, built and installed with the
 * library).  Default (NULL): the PYHOST_WORKER environment variable, then beside the
 * library (or the program) that contains pyhost, then its ../libexec, then where this
 * pyhost was installed, then its build tree; a load that finds none answers
 * PYHOST_NOTFOUND naming every place it looked.  Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_worker(pyhost_plugin_options *o, const char *path);

/* Process level: the most memory the plugin's process may map, in bytes (POSIX:
 * RLIMIT_AS, address space, so leave room for Python itself: 64 MiB at least; Windows:
 * a job object's committed-memory limit).  A hook that runs into it gets MemoryError,
 * and the call returns PYHOST_LIMIT with its traceback; a process killed by it (a C
 * allocation that cannot fail gracefully) ends with PYHOST_PROCESS.  0 (the default):
 * none.  Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_memory_limit(pyhost_plugin_options *o, uint64_t bytes);

/* Process level: the CPU time the plugin's process may use over its life, in seconds
 * (POSIX: RLIMIT_CPU; Windows: the job's per-process user time).  A process that uses
 * it up is ended by the system; the call returns PYHOST_LIMIT, and the plugin is
 * restarted as after a crash (the count starts again).  0 (the default): none.
 * Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_cpu_limit(pyhost_plugin_options *o, unsigned seconds);

/* Process level: the wall-clock time one call (a hook call, a load, a reload,
 * including the host functions it calls) may take, in milliseconds.  When it is up,
 * the call is interrupted as by pyhost_interrupt; if it has not returned grace_ms
 * later, the plugin's process is killed.  Either way the call returns PYHOST_LIMIT
 * (with the traceback of where it stopped, when the interrupt stopped it).  0 (the
 * default): none.  grace_ms 0: 1000.  Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_call_timeout(pyhost_plugin_options *o,
                                                      unsigned timeout_ms, unsigned grace_ms);

/* Where the output of a plugin's process goes.  fn(ctx, p, stream, data, len) gets
 * what the process wrote to stream 1 (stdout) or 2 (stderr), in order, in pieces:
 * on a thread of pyhost's, or, for what a call wrote before it returned, on the thread
 * of that call before the call returns; one piece at a time per plugin, never with
 * the GIL held, p NULL during pyhost_plugin_load_with.  It must return promptly and
 * must not call pyhost on p.  Default (fn NULL): the host's own stdout and stderr (a
 * call's output is written before the call returns).  Since 0.1. */
typedef void (*pyhost_output_fn)(void *ctx, pyhost_plugin *p, int stream, const char *data,
                                 size_t len);
PYHOST_API int pyhost_plugin_options_set_output(pyhost_plugin_options *o, pyhost_output_fn fn,
                                                void *ctx);

/* As pyhost_plugin_load, at the level and with the options o says (NULL: the
 * defaults, which is pyhost_plugin_load).  At the process level the plugin's process
 * is started, starts its Python and loads the plugin there; the statuses are
 * pyhost_plugin_load's, and besides: PYHOST_NOTFOUND (no worker program), PYHOST_PROCESS
 * (the process ended while starting), PYHOST_LIMIT, pyhost_init's status when the
 * process cannot start its Python ("its process could not start Python: " and
 * pyhost_init's message), PYHOST_MISUSE for options that do not apply to the level.
 * Since 0.1. */
PYHOST_API int pyhost_plugin_load_with(pyhost *h, const char *path,
                                       const pyhost_plugin_options *o, pyhost_plugin **out);

/* The plugin's isolation level (a pyhost_isolation); PYHOST_ISOLATION_SHARED for NULL.
 * Since 0.1. */
PYHOST_API int pyhost_plugin_isolation(const pyhost_plugin *p);

/* Starts the plugin afresh.  The interpreter level: its sub-interpreter is ended
 * and a new one made, where the plugin is loaded anew (PYHOST_MISUSE while a call of
 * it runs; a failed restart leaves it without an interpreter, its calls answering
 * PYHOST_MISUSE, until one succeeds).  The process level: its process, if it still
 * runs, is ended, and a new one started, where the plugin is loaded anew (its state
 * starts over).  This is how a plugin whose process ended (PYHOST_PROCESS) comes back;
 * pyhost_plugin_reload does the same then.  On failure (statuses as
 * pyhost_plugin_load_with's) the plugin stays ended: its calls answer PYHOST_PROCESS
 * until a restart succeeds.  Waits for a call of p running on another thread.  At the
 * shared level: PYHOST_MISUSE (a fresh start needs an isolated level; reload reloads
 * the code).  Since 0.1. */
PYHOST_API int pyhost_plugin_restart(pyhost *h, pyhost_plugin *p);

/* The process id of a process-level plugin's worker process, or 0 (another level, or
 * its process ended).  For diagnostics and tests.  Since 0.1. */
PYHOST_API long pyhost_plugin_process_id(const pyhost_plugin *p);

/* ---- a plugin's own dependencies (docs/plugins.md, "Dependencies") ----
 *
 * A plugin may declare the packages it needs where Python people declare them: a .py
 * file in a PEP 723 block, a package directory in its pyproject.toml
 * ([project] dependencies and requires-python; without one, a PEP 723 block in its
 * __init__.py):
 *
 *   # /// script
 *   # requires-python = ">=3.9"
 *   # dependencies = ["requests>=2.31", "rich"]
 *   # ///
 *
 * With pyhost_plugin_options_set_deps(o, PYHOST_DEPS_DECLARED), pyhost_plugin_load_with
 * prepares them before the plugin's code runs: an environment directory per distinct
 * requirement set and Python (version, ABI, platform), in a cache, made once by the
 * installer (uv when it is on PATH, else the selected Python's own pip, as a child
 * process, with the user's own pip or uv configuration: pyhost names no index), and
 * put first on the plugin's sys.path.  A later load of the same set finds it ready.
 *  - process level: first on sys.path in the plugin's process only;
 *  - shared level: first on the host interpreter's sys.path, which every shared
 *    plugin sees; a plugin whose environment holds another version of a package than
 *    one an earlier shared plugin's does is refused with PYHOST_DEPS naming both
 *    plugins, the package and both versions (load one of them at another level);
 *  - requires-python: at the shared level the host's Python must meet it
 *    (PYHOST_VERSION); at the process level, without pyhost_plugin_options_set_python,
 *    a Python that meets it is chosen by discovery when the host's does not (with
 *    one set, that one must meet it).
 * The load's statuses besides pyhost_plugin_load_with's: PYHOST_DEPS (malformed
 * metadata, naming file, line and what is wrong; the installer failed, with its own
 * message; versions that disagree at the shared level), PYHOST_VERSION, PYHOST_NOTFOUND
 * (no installer: neither uv nor pip for that Python; or no cache directory). */

/* What pyhost_plugin_load_with prepares.  Values are fixed. */
typedef enum pyhost_deps_mode {
  PYHOST_DEPS_OFF = 0,      /* nothing (the default): metadata is not even read */
  PYHOST_DEPS_DECLARED = 1, /* the plugin's declaration, with the host's requirements */
  PYHOST_DEPS_HOST_ONLY = 2 /* the host's requirements only; the file's are ignored */
} pyhost_deps_mode;

/* A pyhost_deps_mode.  Default PYHOST_DEPS_OFF.  Applies at every level.  Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_deps(pyhost_plugin_options *o, int mode);

/* Adds a requirement of the host's (PEP 508, "numpy<2"): one naming a package the
 * plugin declares replaces the plugin's requirement for it; others are added.  Also
 * makes PYHOST_DEPS_OFF PYHOST_DEPS_DECLARED.  NULL removes every one added.
 * PYHOST_MISUSE for text that is not a requirement (an installer option such as
 * "--index-url=..." included).  Since 0.1. */
PYHOST_API int pyhost_plugin_options_add_requirement(pyhost_plugin_options *o,
                                                     const char *requirement);

/* The cache's root directory (copied).  Default (NULL): the PYHOST_DEPS_CACHE
 * environment variable, else $XDG_CACHE_HOME/pyhost/deps or ~/.cache/pyhost/deps
 * (macOS ~/Library/Caches/pyhost/deps; Windows %LOCALAPPDATA%/pyhost/cache/deps, with
 * backslashes).
 * Since 0.1. */
PYHOST_API int pyhost_plugin_options_set_deps_cache(pyhost_plugin_options *o, const char *dir);

/* The steps of preparing an environment.  Values are fixed; new ones are appended. */
typedef enum pyhost_deps_phase {
  PYHOST_DEPS_WAITING = 1,    /* another host or thread prepares the same one: waiting */
  PYHOST_DEPS_REBUILDING = 2, /* a damaged entry (its marker missing or wrong) is removed */
  PYHOST_DEPS_PREPARING = 3,  /* the installer starts (line: which); total: requirements */
  PYHOST_DEPS_RESOLVING = 4,  /* it looks at package (done: how many so far) */
  PYHOST_DEPS_DOWNLOADING = 5, /* it fetches package */
  PYHOST_DEPS_BUILDING = 6,   /* it builds a wheel of package */
  PYHOST_DEPS_INSTALLING = 7, /* it installs (package: the list); done of total */
  PYHOST_DEPS_READY = 8       /* the environment is there (done = total = packages in it) */
} pyhost_deps_phase;

/* One progress event.  Strings are valid during the call only; "" when not known. */
typedef struct pyhost_deps_progress {
  int phase;           /* a pyhost_deps_phase */
  const char *package; /* the package (or packages) concerned */
  long done, total;    /* -1 when not known */
  const char *line;    /* the installer's output line the event comes from */
  const char *env;     /* the environment directory (WAITING, REBUILDING, READY) */
  const char *who;     /* "plugin NAME" or "script PATH" */
  int fresh;           /* READY: 1 when this call installed it, 0 when it was cached */
} pyhost_deps_progress;

/* Called on the loading thread while a load prepares the plugin's dependencies, in
 * order; never with the GIL held.  It must not call pyhost on the loading handle.
 * Without one, nothing is reported.  Since 0.1. */
typedef void (*pyhost_deps_progress_fn)(void *ctx, const pyhost_deps_progress *ev);
PYHOST_API int pyhost_plugin_options_set_progress(pyhost_plugin_options *o,
                                                  pyhost_deps_progress_fn fn, void *ctx);

/* The environment directory a plugin's dependencies were prepared in; "" when it has
 * none (or p is NULL).  Owned by p.  Since 0.1. */
PYHOST_API const char *pyhost_plugin_deps_env(const pyhost_plugin *p);

/* Prepares the dependencies the file at path declares (as a plugin's; o's deps mode,
 * requirements, cache and progress apply; o NULL: the file's declaration) for the
 * Python python selects (as pyhost_init would; NULL: discovery's default choice; a
 * requires-python the choice does not meet picks one that does, whose library is
 * then set in python when it names none), without starting it.  On PYHOST_OK env
 * holds the environment's directory ("" when nothing is declared); otherwise msg says
 * why.  Statuses as pyhost_plugin_load_with's for dependencies; PYHOST_MISUSE for
 * NULL path, env or msg.  This is what `pyhost --deps FILE` runs.  Since 0.1. */
PYHOST_API int pyhost_deps_prepare(const char *path, const pyhost_plugin_options *o,
                                   pyhost_config *python, char *env, size_t env_cap,
                                   char *msg, size_t msg_cap);

/* One entry of the cache, for pyhost_deps_list and _prune.  Strings valid during the
 * call only. */
typedef struct pyhost_deps_entry {
  const char *dir;          /* its directory */
  const char *name;         /* its name in the cache ("cp312-linux-x86_64-<hash>") */
  const char *python;       /* the Python it is for ("cp312-linux-x86_64") */
  const char *requirements; /* one per line */
  const char *installed;    /* "NAME VERSION" per line */
  int complete;             /* 0: an install left over, or a damaged entry */
  long long last_used;      /* seconds since 1970 */
} pyhost_deps_entry;

/* Called once per entry by pyhost_deps_list and pyhost_deps_prune. */
typedef void (*pyhost_deps_entry_fn)(void *ctx, const pyhost_deps_entry *e);

/* Calls fn for each entry of the cache (cache NULL: the default root, as
 * pyhost_plugin_options_set_deps_cache says).  PYHOST_OK (also for a cache not made
 * yet), or PYHOST_NOTFOUND / PYHOST_ERROR with msg (msg_cap bytes).  Since 0.1. */
PYHOST_API int pyhost_deps_list(const char *cache, pyhost_deps_entry_fn fn, void *ctx, char *msg,
                                size_t msg_cap);

/* Removes the entries not used for days days (0: every one), installs left over by
 * a host that ended mid-way, and damaged entries; never one another host is
 * preparing (its lock is held).  fn (may be NULL) is called for each one removed.
 * Plugins loaded from an entry keep what they imported; a later load makes it again.
 * Statuses as pyhost_deps_list's.  Since 0.1. */
PYHOST_API int pyhost_deps_prune(const char *cache, unsigned days, pyhost_deps_entry_fn fn,
                                 void *ctx, char *msg, size_t msg_cap);

/* ======================================================================
 * configuration
 * ====================================================================== */

/* own result: a config with every default; NULL when out of memory.  Since 0.1. */
PYHOST_API pyhost_config *pyhost_config_new(void);

/* Frees a config; NULL is a no-op.  Since 0.1. */
PYHOST_API void pyhost_config_free(pyhost_config *cfg);

/* Each setter copies its strings and returns PYHOST_OK, PYHOST_NOMEM, or PYHOST_MISUSE
 * for a NULL config.  Passing NULL as a string restores the default. */

/* The Python shared library to load: a path ("/opt/py/lib/libpython3.12.so.1.0",
 * "C:\\Python312\\python3.dll") or a bare library name left to the system loader.
 * Default: the PYHOST_PYTHON_LIBRARY environment variable, then discovery
 * (docs/discovery.md).  A configured path is used exactly, never second-guessed; a
 * relative one is resolved against the current directory at pyhost_init.  The file
 * is checked before the system loader sees it: PYHOST_DAMAGED when it is truncated or
 * its headers are inconsistent, PYHOST_NOLIB for a FIFO, socket or device,
 * PYHOST_NOTFOUND for a symlink loop (docs/configuration.md).  Since 0.1. */
PYHOST_API int pyhost_config_set_library(pyhost_config *cfg, const char *path);

/* The Python home (sys.prefix).  Default: derived from the library's real path, so a
 * library runs on its own installation's standard library.  A home without a standard
 * library is refused with PYHOST_NOHOME before Python starts.  Since 0.1. */
PYHOST_API int pyhost_config_set_home(pyhost_config *cfg, const char *home);

/* The program name Python sees (sys.executable).  Default: the installation's
 * bin/python3.X next to the derived home.  Since 0.1. */
PYHOST_API int pyhost_config_set_program_name(pyhost_config *cfg, const char *name);

/* What sys.executable names: a command that runs this same Python, such as a small
 * script that runs `pyhost --python LIB` (the `pyhost --executable-wrapper` option
 * writes one), so that child processes started from sys.executable (subprocess,
 * multiprocessing's spawn, test runners' workers) run through pyhost too rather than
 * through the installation's python3.X.  pyhost_init sets sys.executable to it after
 * Python starts (and sys._base_executable where that named the same program: outside
 * a venv); pyhost_main gives it to Python as the program name, with the home, so
 * Python derives sys.executable from it and finds a venv only where the command lies
 * in one, as for python itself.  pyhost does not check that the command exists.
 * Default: none (the installation's interpreter, or "" when the library has none
 * beside it).  Since 0.1. */
PYHOST_API int pyhost_config_set_executable(pyhost_config *cfg, const char *path);

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
  PYHOST_INIT_KEEP_LOCALE = 1u << 2,
  /* Let Python take its default text encoding from the host's LC_CTYPE locale as it
   * stands (ASCII in the "C" locale of a host that never calls setlocale).  By
   * default, where `python` would use UTF-8 in the same environment (a C/POSIX or
   * UTF-8 locale, or PYTHONUTF8=1) but the host's locale is "C", pyhost starts Python
   * 3.8+ in UTF-8 mode (PEP 540); the host's locale is never changed
   * (docs/configuration.md).  Since 0.1. */
  PYHOST_INIT_LOCALE_ENCODING = 1u << 3
};

/* Sets the init flags (pyhost_init_flag values or-ed).  Since 0.1. */
PYHOST_API int pyhost_config_set_flags(pyhost_config *cfg, unsigned flags);

/* ---- which Python: discovery and version policy (docs/discovery.md) ----
 * The policy setters apply to discovery, and max/exact also to a configured library
 * (min_python above applies to both).  A configured library is otherwise never
 * second-guessed: debug builds are accepted there, only discovery passes them over. */

/* An interpreter (python3, a venv's bin/python, a pyenv shim) whose library discovery
 * takes first, as PYHOST_PYTHON does; a venv's interpreter makes sys.prefix the venv.
 * An absolute path, or a bare name such as "python3", looked up on PATH
 * as a shell does (never in the current directory); a relative path with a directory
 * ("./python") is refused.  Default: none.  Since 0.1. */
PYHOST_API int pyhost_config_set_interpreter(pyhost_config *cfg, const char *path);

/* The newest Python the host accepts, PY_VERSION_HEX form; only major.minor count
 * (PYHOST_PY(3, 12) accepts every 3.12.x).  Default 0: no limit.  Since 0.1. */
PYHOST_API int pyhost_config_set_max_python(pyhost_config *cfg, unsigned long hexversion);

/* Accept only this major.minor (PYHOST_PY(3, 11)); 0 (the default) accepts any minor
 * within min/max.  Since 0.1. */
PYHOST_API int pyhost_config_set_python_minor(pyhost_config *cfg, unsigned long hexversion);

/* 1: among all acceptable candidates take the newest (the earliest in the search order
 * among equals).  0 (default): take the first acceptable one in the search order, so
 * an active venv or python3 on PATH wins over a newer library elsewhere.  Since 0.1. */
PYHOST_API int pyhost_config_set_prefer_newest(pyhost_config *cfg, int on);

/* 1: discovery may take a debug build (Py_DEBUG, libpython3.Xd).  Default 0: passed
 * over with reason "debug".  Free-threaded builds are always passed over: they have
 * no stable ABI before 3.15.  Since 0.1. */
PYHOST_API int pyhost_config_set_allow_debug(pyhost_config *cfg, int on);

/* 1: never run an interpreter to ask for its library; discovery reads files only and
 * reports such candidates as "unresolved".  Default 0: running `python -E -s -c ...` is
 * the last resort for interpreters whose files say nothing.  Since 0.1. */
PYHOST_API int pyhost_config_set_no_subprocess(pyhost_config *cfg, int on);

/* 1: start Python isolated from the user's environment as far as the stable ABI
 * allows: every PYTHON* variable (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONUSERBASE,
 * ...) is hidden from Python's initialization and from its os.environ, and the user
 * site directory is off (site.ENABLE_USER_SITE False, no user site on sys.path;
 * sys.flags.no_user_site is 1 from 3.7).  The host's own environment is restored right after init; because the environment is
 * process-wide, no other thread may read or change it during pyhost_init.  pyhost's
 * own PYHOST_* variables keep working.  What it covers per Python version:
 * docs/discovery.md.  Default 0.  Since 0.1. */
PYHOST_API int pyhost_config_set_isolated(pyhost_config *cfg, int on);

/* One Python that discovery examined.  Every string is owned by pyhost and valid only
 * during the callback; "" when not known. */
typedef struct pyhost_candidate {
  int index;                /* 1, 2, ... in the order examined */
  const char *source;       /* where it came from: "configured", "PYHOST_PYTHON_LIBRARY",
                               "interpreter", "PYHOST_PYTHON", "VIRTUAL_ENV", "pixi",
                               "CONDA_PREFIX", "uv pin", "PATH python3", "PATH python",
                               "conda base", "standard location", "pyenv", "uv", "mise",
                               "asdf", "framework", "registry" */
  const char *kind;         /* "library", "interpreter", "venv", "pyenv shim", "script",
                               "conda env", "pixi env", "asdf shim", "mise shim" */
  const char *interpreter;  /* the interpreter it was reached from (for a tool's
                               installation, its folder; for a uv pin, the pin file) */
  const char *resolved;     /* that interpreter after shims, venvs and symlinks, or
                               the tool's installation or environment folder */
  const char *venv;         /* the virtual environment's prefix, or a conda or pixi
                               environment's */
  const char *library;      /* the library path (real path when it exists) */
  const char *how;          /* how the library was found from the interpreter */
  unsigned long hexversion; /* PY_VERSION_HEX when known (from the library), else 0 */
  int free_threaded, debug; /* build flags when known */
  int taken;                /* 1 for the one pyhost_init would load */
  /* "taken", "acceptable" (fine, but another was taken), or why it was passed over:
   * "missing", "unreadable", "relative-path", "not-python", "python2", "out-of-range",
   * "free-threaded", "debug", "trace-refs", "missing-symbols", "no-shared-library",
   * "wrong-architecture", "unresolved", "duplicate", "no-home" */
  const char *reason_code;
  const char *reason;       /* one line of English saying the same, with details */
} pyhost_candidate;

/* Called once per candidate, in order, after the choice is made. */
typedef void (*pyhost_candidate_fn)(void *ctx, const pyhost_candidate *c);

/* Runs the discovery pyhost_init would run for cfg (NULL: defaults), without starting
 * Python, and reports every candidate to fn (may be NULL).  Libraries are opened with
 * RTLD_LOCAL to read their version and symbols, and closed again; while a Python runs
 * in the process they are judged by their names only.  Returns PYHOST_OK
 * when one was taken, PYHOST_NOTFOUND when none is acceptable, PYHOST_NOMEM.  Not
 * thread-safe against a concurrent pyhost_init.  Since 0.1. */
PYHOST_API int pyhost_discover(const pyhost_config *cfg, pyhost_candidate_fn fn, void *ctx);

/* Whether Python version hexversion (PY_VERSION_HEX) meets requires_python, a
 * requires-python specifier set as a PEP 723 block or pyproject.toml has it (">=3.8,
 * <3.10", "==3.12.*"): PYHOST_OK when it does, PYHOST_VERSION when it does not,
 * PYHOST_MISUSE when requires_python is NULL or malformed; why (may be NULL) then says
 * which clause fails or what is malformed.  Since 0.1. */
PYHOST_API int pyhost_python_meets(const char *requires_python, unsigned long hexversion,
                                   char *why, size_t cap);

/* The Python a plugin declaring requires_python runs on at the process level when its
 * options name none (pyhost_plugin_options_set_python), for a host started with cfg
 * (NULL: defaults): the one discovery takes when it meets requires_python, else the
 * first acceptable one discovery finds that does (cfg's library left out).  Runs
 * discovery, starts no Python.  PYHOST_OK with its library path in library and in why
 * the reason, in words (`pyhost --list --requires-python SPEC` prints both);
 * PYHOST_VERSION when no acceptable Python meets it, PYHOST_NOTFOUND when cfg's own
 * choice fails, PYHOST_MISUSE for a NULL argument or a malformed specifier, each with
 * why saying so.  Since 0.1. */
PYHOST_API int pyhost_python_for(const pyhost_config *cfg, const char *requires_python,
                                 char *library, size_t cap, char *why, size_t why_cap);

/* What pyhost can tell about one library before starting it (`pyhost --check`). */
typedef struct pyhost_library_info {
  int status;               /* PYHOST_OK when pyhost_init would accept it, else why not */
  const char *message;      /* the reason for status, "" when OK */
  const char *real_path;    /* symlinks resolved; "" when missing */
  unsigned long hexversion; /* 0 when unknown */
  const char *version_text; /* Py_GetVersion(), "" when unknown */
  int free_threaded, debug, trace_refs; /* build flags: 1 when set, 0 when not or unknown */
  const char *architecture; /* "x86_64 (ELF64)", "" when not ELF */
  int architecture_ok;      /* 1 when it matches this process */
  size_t required, required_missing;  /* REQ table rows, and how many are absent */
  size_t optional, optional_missing;  /* OPT rows due on this version, and absent */
  size_t optional_later;              /* OPT rows added after this version */
  const char *missing;      /* the absent names, space-separated, "" when none */
  const char *home;         /* the derived home with a standard library, "" when none */
  const char *home_probe;   /* where the standard library was looked for */
  /* The tool the library belongs to, when its folders tell ("uv (managed Python
   * cpython-3.12.7-linux-x86_64-gnu, ...)", "conda (environment /x)", "pixi (...)",
   * "mise (python 3.12.7)", "asdf (...)", "pyenv (version 3.11.7)",
   * "python-build-standalone (/x/python)"), "" when they do not.  Appended in 0.1 (see docs/abi.md). */
  const char *tool;
} pyhost_library_info;

/* Examines the library at path (its headers checked as pyhost_init checks them, then
 * opened RTLD_LOCAL, closed again, nothing run but Py_GetVersion).  *out (own result) is filled even when the library is unusable; its
 * status says why.  Returns PYHOST_OK when the examination itself worked (whatever
 * the verdict), PYHOST_NOMEM or PYHOST_MISUSE.  Free with pyhost_library_info_free.
 * Since 0.1. */
PYHOST_API int pyhost_inspect_library(const char *path, pyhost_library_info **out);
PYHOST_API void pyhost_library_info_free(pyhost_library_info *info);

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

#ifdef __cplusplus
}
#endif
#endif
