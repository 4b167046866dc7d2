/* frame.c: the exception a host callback hands back to its Python caller.
 *
 * Frames live on the C stack of the thread running a host callback; the innermost is
 * pyhost__thread.frame (core.h), pushed and popped inline by the bridge (bridge.h).
 * Taking an exception inside a callback (error.c) keeps a copy here, so that a
 * traceback survives C -> Python -> C -> Python round trips (callback.c).
 */
#include "runtime.h"

void pyhost__frame_drop(struct pyhost__frame *f) {
  PYHOST__ASSERT_GIL();
  if (!f->type) return; /* the common case: nothing was kept (see runtime.h) */
  PY.Py_DecRef(f->type);
  PY.Py_DecRef(f->value);
  PY.Py_DecRef(f->tb);
  f->type = f->value = f->tb = NULL;
}

void pyhost__frame_keep(struct pyhost__frame *f, PyObject *type, PyObject *value, PyObject *tb) {
  PYHOST__ASSERT_GIL();
  if (!type) return; /* nothing to keep; a frame holds value and tb only with a type */
  PY.Py_IncRef(type);
  PY.Py_IncRef(value);
  PY.Py_IncRef(tb);
  pyhost__frame_drop(f);
  f->type = type;
  f->value = value;
  f->tb = tb;
}

void pyhost__callback_keep(PyObject *type, PyObject *value, PyObject *tb) {
  PYHOST__ASSERT_GIL();
  if (pyhost__thread.frame && type) pyhost__frame_keep(pyhost__thread.frame, type, value, tb);
}
