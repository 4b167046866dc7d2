/* verdict.h: is this library acceptable?  The one rule, with its status, its reason
 * code and its sentence, that pyhost_init (runtime/pyhost.c), discovery
 * (discovery/discover.c) and pyhost_inspect_library (discovery/inspect.c) all apply,
 * so that `pyhost --check`, `pyhost --list` and `pyhost --python` never disagree about
 * one file (tests/test_verdict.c feeds the same odd libraries to all three).
 *
 * The steps, in the order every caller takes them:
 *   1. the file (pyhost__verdict_file): there, readable, a regular file, not damaged,
 *      a library rather than a program, built for this machine;
 *   2. the library (pyhost__verdict_library): opened with RTLD_LOCAL by the caller,
 *      probed (pyhost__pyapi_probe), judged by what it is (pyhost__verdict_build), its
 *      table resolved;
 *   3. its home (discovery/home.c, pyhost__verdict_home): a standard library near it.
 * What a library IS decides, never its file name: a `t` in `libpython3.12t.so` is the
 * ABI flag CPython's build gives a free-threaded library, and a `d` a debug one, but a
 * file can be renamed; once the library is open, its version text and its exports say
 * which build it is.  The name is read only to sort and label candidates before they
 * are opened, and to judge one that is not opened at all (discovery while a Python
 * already runs in the process), and then the reason says so.
 */
#ifndef PYHOST_VERDICT_H
#define PYHOST_VERDICT_H

#include "pyapi.h"
#include "platform.h" /* PYHOST__PRINTF_DIALECT */

/* What the host accepts besides what pyhost can run (pyhost_config_set_min_python and
 * the others).  Versions in PY_VERSION_HEX form, 0 for no limit. */
struct pyhost__policy {
  unsigned long min_python, max_python, python_minor;
  int allow_debug; /* a configured library is always allowed to be a debug build */
};

struct pyhost__verdict {
  int status;       /* PYHOST_OK, or the status of the refusal */
  const char *code; /* the refusal as pyhost_candidate.reason_code has it ("python2",
                     * "free-threaded", "missing-symbols"...); "" when acceptable */
  char reason[2048];/* the cause in one sentence, without the file's path, so that each
                     * caller can say where the file came from: "it is Python 2.7; ..." */
};

/* Sets *v and returns status (PYHOST_OK: accepted, code and reason emptied). */
int pyhost__verdict_set(struct pyhost__verdict *v, int status, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 4, 5)))
#endif
    ;
int pyhost__verdict_ok(struct pyhost__verdict *v);

/* 1. The file at path (a location, not a bare name), before the system loader sees it
 * (libcheck.h).  *kind (may be NULL) gets the parser's PYHOST__LIB_* verdict. */
int pyhost__verdict_file(const char *path, struct pyhost__verdict *v, int *kind);

/* The system loader refused the file at path (a path or a bare name) with err. */
int pyhost__verdict_unloaded(const char *path, const char *err, struct pyhost__verdict *v);

/* 2a. The rule on what a library is (pr: its probe, or what its name says, with
 * pr->by_name set), then the host's policy: Python 2, not 3, free-threaded,
 * Py_TRACE_REFS, below the build floor, outside the host's range, a debug build the
 * policy does not allow, in that order. */
int pyhost__verdict_build(const struct pyapi_probe *pr, const struct pyhost__policy *pol,
                          struct pyhost__verdict *v);

/* 2. An opened library (sym/lib as pyhost__pyapi_probe takes them): probes it into
 * *probe (filled as far as it got, also when refused), applies 2a, and resolves the
 * table into *table (left zeroed unless PYHOST_OK). */
int pyhost__verdict_library(pyhost__sym_fn sym, void *lib, const struct pyhost__policy *pol,
                            struct pyapi_probe *probe, struct pyapi *table, struct pyhost__verdict *v);

#endif
