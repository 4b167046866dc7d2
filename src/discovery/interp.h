/* interp.h: from a Python interpreter to the libpython it runs, without running it
 * when the files say enough (interp.c). */
#ifndef PYHOST_INTERP_H
#define PYHOST_INTERP_H

#include <stddef.h>

#define PYHOST__IPATH 4096

struct pyhost__interp {
  char kind[32];                   /* "interpreter", "venv", "pyenv shim", "asdf shim",
                                      "mise shim", "script" */
  char resolved[PYHOST__IPATH];    /* the real interpreter after shims, venv and links */
  char venv[PYHOST__IPATH];        /* the virtual environment's prefix, "" when none */
  char program[PYHOST__IPATH];     /* program name for Python (a venv's python), or "" */
  char library[PYHOST__IPATH];     /* the library found, "" when none */
  char how[512];                   /* how the library was found, for the report */
  unsigned major, minor;           /* 0 when unknown */
  const char *code;                /* NULL when library is set, else a reason code */
  char reason[1024];               /* text for code */
};

/* Follows path (absolute) to its library.  allow_subprocess: run the interpreter as a
 * last resort (python -E -s -c 'print sysconfig values').  Returns 0 when a library
 * was found, -1 with out->code and out->reason set. */
int pyhost__interp_resolve(const char *path, int allow_subprocess, struct pyhost__interp *out);

/* Looks in prefix's lib directories for the library of Python major.minor. */
int pyhost__prefix_library(const char *prefix, unsigned major, unsigned minor, char *out,
                           size_t cap);

#endif
