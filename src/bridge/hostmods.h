/* hostmods.h: the host's modules described for a plugin's worker process, and made
 * there from the description (hostmods.c). */
#ifndef PYHOST_HOSTMODS_H
#define PYHOST_HOSTMODS_H

#include "bridge.h"
#include "wire.h"

/* The host's side, with the GIL: describes every live host module into b. */
void pyhost__hostmods_describe(pyhost *h, struct pyhost__wbuf *b);

/* The worker's side: one host function (or host type) of the host, made a function
 * in the worker whose userdata is this record. */
struct pyhost__mirror_fn {
  char *module, *name;
  int is_type;  /* a host type: its stand-in refuses */
  void *ctx;    /* the worker's, as given to apply */
  int seen;
  struct pyhost__mirror_fn *next;
};
struct pyhost__mirror;

/* Makes the worker's host modules match the description in r (the first call creates
 * *state): proxy (with a pyhost__mirror_fn as userdata) stands for every function and
 * type.  0, or -1 with the reason in err (a module the worker could not make is only
 * reported in err, with 0). */
int pyhost__hostmods_apply(pyhost *h, struct pyhost__mirror **state, struct pyhost__rbuf *r,
                           pyhost_function proxy, void *ctx, char *err, size_t cap);

/* A sub-interpreter's side (the interpreter level), with the GIL, in that interpreter:
 * makes its host modules match the description in r (*state, a dict there, made by the
 * first call, is what was made; drop it before the interpreter ends).  0, or -1 with the
 * reason in err (a module name taken there is only reported in err, with 0). */
int pyhost__hostmods_apply_here(pyhost *h, PyObject **state, struct pyhost__rbuf *r, char *err,
                                size_t cap);

#endif
