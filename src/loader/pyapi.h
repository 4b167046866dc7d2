/* pyapi.h: the run-time table of stable-ABI symbols, expanded from pyapi_list.h.
 *
 * Python's own declarations come from CPython's limited-API headers, compiled for the
 * build floor (PYHOST_LIMITED_API); only their types, struct layouts and constants are
 * used.  Every call goes through the process's table (PY, core.h), filled by
 * pyhost__pyapi_load().
 */
#ifndef PYHOST_PYAPI_H
#define PYHOST_PYAPI_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <wchar.h>

/* Py_buffer (and the buffer protocol's flags and type slots) entered the limited API
 * in 3.11; the floor's headers hide them.  Its layout is the same in every CPython 3
 * (the 3.11 stable ABI froze the one 3.0 introduced), so below 3.11's headers pyhost
 * declares it itself.  Only bridge/buffer*.c use it, and only on runtimes whose stable
 * ABI has the buffer protocol (3.11+). */
#if defined(Py_LIMITED_API) && Py_LIMITED_API + 0 < 0x030B0000
typedef struct {
  void *buf;
  PyObject *obj;
  Py_ssize_t len;
  Py_ssize_t itemsize;
  int readonly;
  int ndim;
  char *format;
  Py_ssize_t *shape;
  Py_ssize_t *strides;
  Py_ssize_t *suboffsets;
  void *internal;
} Py_buffer;
#endif

/* Runtime versions inside pyhost are (major << 8) | minor, e.g. 0x030A for 3.10. */
#define PYHOST__V(major, minor) (((major) << 8) | (minor))

struct pyapi {
  unsigned runtime;        /* major.minor of the loaded library, PYHOST__V form */
  unsigned long hexversion;/* full PY_VERSION_HEX form parsed before init */
#define PYAPI_FN(ret, name, params, major, minor, need) ret (*name) params;
#define PYAPI_DATA(type, name, major, minor, need) type *name;
#include "pyapi_list.h"
#undef PYAPI_FN
#undef PYAPI_DATA
};

enum pyapi_kind { PYAPI_KIND_FN, PYAPI_KIND_DATA };
enum pyapi_need { PYAPI_NEED_REQ, PYAPI_NEED_OPT };

struct pyapi_row {
  const char *name;
  size_t offset;           /* of the member in struct pyapi */
  unsigned added;          /* PYHOST__V form */
  unsigned char kind;      /* enum pyapi_kind */
  unsigned char need;      /* enum pyapi_need */
};

extern const struct pyapi_row pyhost__pyapi_rows[];
extern const size_t pyhost__pyapi_nrows;

/* On the library's own globals that hot paths read: a declaration without it could
 * name another module's variable, so every read would go through the GOT (two loads
 * where one RIP-relative load does). */
#if defined(__GNUC__) && !defined(_WIN32)
#  define PYHOST__HIDDEN __attribute__((visibility("hidden")))
#else
#  define PYHOST__HIDDEN
#endif

/* Symbol look-up used by the loader: production passes the dl layer, tests a fake. */
typedef void *(*pyhost__sym_fn)(void *ctx, const char *name);

/* Facts read from a library before anything in it runs. */
struct pyapi_probe {
  unsigned long hexversion;    /* 0 when the version text could not be parsed */
  const char *version_text;    /* Py_GetVersion(), borrowed from the library */
  int free_threaded;           /* version text or symbols say Py_GIL_DISABLED */
  int trace_refs;              /* object layout changed by Py_TRACE_REFS (<= 3.12) */
  int debug;                   /* Py_DEBUG / Py_REF_DEBUG build */
  int by_name;                 /* 0: read from the library; 1: guessed from its file name
                                * (the version and the ABI flags t and d), the library
                                * not opened (verdict.h) */
};

/* Fills *probe from the library's Py_GetVersion and marker symbols.  Returns a pyhost
 * status: OK, NOTPYTHON (no Py_GetVersion or unparsable text). */
int pyhost__pyapi_probe(pyhost__sym_fn sym, void *ctx, struct pyapi_probe *probe,
                        char *err, size_t errlen);

/* Resolves every row needed by `runtime` into *t (zeroed first).  On a missing row,
 * returns PYHOST_NOSYM with every missing name listed in err, and leaves *t zeroed:
 * never a half-filled table. */
int pyhost__pyapi_load(struct pyapi *t, unsigned long hexversion, pyhost__sym_fn sym,
                       void *ctx, char *err, size_t errlen);

/* Parses the leading "X.Y.Z" (with an optional a/b/rc level) of a version text into
 * PY_VERSION_HEX form.  Returns 0 when the text does not start with a version. */
unsigned long pyhost__parse_version(const char *text);

#endif
