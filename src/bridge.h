/* bridge.h: what the bridge files share (call.c, callback.c, hostfn.c, hosttype.c).
 * The public side is in pyhost.h: "calling Python from C", "host functions", "host
 * types". */
#ifndef PYHOST_BRIDGE_H
#define PYHOST_BRIDGE_H

#include "internal.h"

/* ---- resolving names (call.c) ---- */
/* The object a dotted name names (see pyhost_resolve): new reference, or NULL with a
 * Python exception set.  Needs the GIL. */
PyObject *pyhost__resolve(pyhost *h, const char *dotted);

/* ---- callbacks (callback.c) ---- */
/* One C callback running on this thread.  Frames nest (C -> Python -> C ...): the
 * innermost one is where pyhost_raise and failing pyhost calls leave the exception
 * that the callback's Python caller will see. */
struct pyhost__frame {
  struct pyhost__frame *outer;
  PyObject *type, *value, *tb; /* the exception kept for the caller (owned), or NULL */
};
static inline void pyhost__frame_push(struct pyhost__frame *f) {
  f->type = f->value = f->tb = NULL;
  f->outer = pyhost__thread.frame;
  pyhost__thread.frame = f;
}
static inline void pyhost__frame_pop(struct pyhost__frame *f) {
  pyhost__thread.frame = f->outer;
}
/* With the GIL, after a callback returned rc: PYHOST_OK -> 0; otherwise sets the Python
 * exception (the kept one, or RuntimeError "<who>: <status>: <message>") -> -1.  Always
 * drops what the frame kept. */
int pyhost__frame_finish_slow(pyhost *h, struct pyhost__frame *f, int rc, const char *who);
static inline int pyhost__frame_finish(pyhost *h, struct pyhost__frame *f, int rc,
                                       const char *who) {
  if (rc == PYHOST_OK && !f->type && !f->value && !f->tb) return 0; /* the common case */
  return pyhost__frame_finish_slow(h, f, rc, who);
}

/* Arguments of a call from Python, converted to values. */
struct pyhost__args {
  pyhost_value *small[6];
  pyhost_value **argv;  /* small or heap */
  size_t nargs;
  pyhost_value *kwargs; /* dict value or NULL */
};
/* From a vectorcall-style argument array (kwnames: tuple of keyword names or NULL), or
 * from an args tuple and a kwargs dict (either may be NULL).  0, or -1 with a Python
 * exception set (and nothing held). */
int pyhost__args_from_vector(struct pyhost__args *a, PyObject *const *args, size_t nargs,
                             PyObject *kwnames);
int pyhost__args_from_tuple(struct pyhost__args *a, PyObject *tuple, size_t skip,
                            PyObject *kwdict);
void pyhost__args_clear(struct pyhost__args *a);

/* The borrowed view of a fast callback (fastargs.c): either form of a call from
 * Python, read on demand. */
struct pyhost_args {
  pyhost *h;
  const char *who;           /* the callable's qualified name, for messages */
  PyObject *const *argv;     /* vector form: positional, then keyword values */
  PyObject *kwnames;         /* vector form: tuple of keyword names, or NULL */
  PyObject *tuple, *kwdict;  /* tuple form (before 3.10); tuple NULL in the vector form */
  size_t skip;               /* tuple form: leading items left out (a method's self) */
  size_t nargs, nkw;
  PyObject *keep;            /* list of temporaries (UTF-8 bytes before 3.10), or NULL */
};
struct pyhost_ret {
  PyObject *obj;             /* new reference, or NULL for None */
};
/* The view of a vector-form or a tuple-form call (args, kwargs may be NULL); skip
 * leading positional items are left out (a method's self). */
static inline void pyhost__args_vector(struct pyhost_args *a, pyhost *h, const char *who,
                                       PyObject *const *argv, size_t nargs, PyObject *kwnames) {
  a->h = h;
  a->who = who;
  a->argv = argv;
  a->kwnames = kwnames;
  a->tuple = a->kwdict = a->keep = NULL;
  a->skip = 0;
  a->nargs = nargs;
  a->nkw = kwnames ? (size_t)PY.PyTuple_Size(kwnames) : 0;
}
void pyhost__args_tuple(struct pyhost_args *a, pyhost *h, const char *who, PyObject *tuple,
                        size_t skip, PyObject *kwdict);

/* A callback's result (own) as a new reference: NULL means None.  NULL with a Python
 * exception set when the conversion fails. */
PyObject *pyhost__result_to_python(pyhost *h, pyhost_value *result);

/* The Python class of a pyhost_exc code (borrowed), NULL for an unknown code. */
PyObject *pyhost__exc_type(pyhost_exc type);

/* ---- host modules (hostfn.c) ---- */
PyObject *pyhost__module_object(pyhost_module *m); /* borrowed */
const char *pyhost__module_name(pyhost_module *m);

/* 1 when the handle still runs Python (callbacks refuse to run during finalize). */
static inline int pyhost__handle_running(const pyhost *h) {
  return h && h->magic == PYHOST__MAGIC && atomic_load(&h->state) == PYHOST__RUNNING;
}

/* Runs a fast callback in a frame and hands back its result as a new reference, or
 * NULL with the Python exception set; drops the view's temporaries.  Inline: this is
 * the whole per-call cost of a fast host function besides the callback. */
static inline PyObject *pyhost__run_fast(pyhost *h, pyhost_fast_function fn, void *userdata,
                                         struct pyhost_args *a, const char *who) {
  struct pyhost__frame frame;
  struct pyhost_ret ret = {NULL};
  pyhost__frame_push(&frame);
  int rc = fn(h, userdata, a, &ret);
  pyhost__frame_pop(&frame);
  if (a->keep) PY.Py_DecRef(a->keep);
  if (pyhost__frame_finish(h, &frame, rc, who) < 0) {
    PY.Py_DecRef(ret.obj);
    return NULL;
  }
  if (ret.obj) return ret.obj;
  PY.Py_IncRef(PY._Py_NoneStruct);
  return PY._Py_NoneStruct;
}

#endif
