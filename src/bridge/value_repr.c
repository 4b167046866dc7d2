/* value_repr.c: pyhost_value_repr, a value's Python repr.  Above both value.c (the
 * C-side values) and convert.c (which builds values), since it converts a value back
 * to Python to ask for its repr. */
#include "internal.h"

const char *pyhost_value_repr(pyhost *h, pyhost_value *v) {
  PyGILState_STATE gil;
  if (!v) {
    if (pyhost__handle_live(h)) pyhost__set_error(h, PYHOST_MISUSE, "NULL value");
    return NULL;
  }
  if (pyhost__enter(h, &gil)) return NULL;
  if (v->in_slab == 2) { /* a constant is never written: its repr is known */
    pyhost__leave(h, gil);
    return v->kind == PYHOST_KIND_NONE ? "None" : v->u.b ? "True" : "False";
  }
  PyObject *o = pyhost__to_python(h, v);
  PyObject *r = o ? PY.PyObject_Repr(o) : NULL;
  size_t len;
  char *text = r ? pyhost__utf8_copy(r, &len) : NULL;
  if (!text) pyhost__take_exception(h, "repr() failed");
  PY.Py_DecRef(r);
  PY.Py_DecRef(o);
  pyhost__leave(h, gil);
  if (!text) return NULL;
  pyhost__free(v->repr);
  v->repr = text;
  return text;
}
