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
void pyhost__frame_push(struct pyhost__frame *f);
void pyhost__frame_pop(struct pyhost__frame *f);
/* With the GIL, after a callback returned rc: PYHOST_OK -> 0; otherwise sets the Python
 * exception (the kept one, or RuntimeError "<who>: <status>: <message>") -> -1.  Always
 * drops what the frame kept. */
int pyhost__frame_finish(pyhost *h, struct pyhost__frame *f, int rc, const char *who);

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

/* A callback's result (own) as a new reference: NULL means None.  NULL with a Python
 * exception set when the conversion fails. */
PyObject *pyhost__result_to_python(pyhost *h, pyhost_value *result);

/* The Python class of a pyhost_exc code (borrowed), NULL for an unknown code. */
PyObject *pyhost__exc_type(pyhost_exc type);

/* ---- host modules (hostfn.c) ---- */
PyObject *pyhost__module_object(pyhost_module *m); /* borrowed */
const char *pyhost__module_name(pyhost_module *m);

/* 1 when the handle still runs Python (callbacks refuse to run during finalize). */
int pyhost__handle_running(const pyhost *h);

#endif
