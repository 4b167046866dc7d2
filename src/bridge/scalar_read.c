/* scalar_read.c: the one reader of an int, a float or a bool from a Python object, for
 * every door that reads one (internal.h says the rules, and holds the inline steps the
 * per-call paths take): typed arguments, the fast form's getters, the results of calls
 * into Python, values.  It looks at the type and the stored value only, so it runs no
 * Python code and leaves no exception set. */
#include "internal.h"

PYHOST__COLD int pyhost__scalar_overflowed(void) {
  if (!PY.PyErr_Occurred()) return 0;
  PY.PyErr_Clear();
  return 1;
}

int pyhost__scalar_read(PyObject *o, int kind, pyhost_arg *out) {
  switch (kind) {
  case PYHOST_ARG_INT:
    if (!pyhost__is_int(o)) return PYHOST_TYPE;
    if (pyhost__scalar_int(o, &out->u.i) != PYHOST_OK) return PYHOST_RANGE;
    break;
  case PYHOST_ARG_FLOAT:
    if (pyhost__is_float(o)) {
      out->u.d = pyhost__scalar_float(o);
    } else if (pyhost__is_int(o)) {
      /* its digits rounded as float(n) rounds them; PyFloat_AsDouble would call a
       * subclass's __float__ */
      double d = PY.PyLong_AsDouble(o);
      if (d == -1.0 && pyhost__scalar_overflowed()) return PYHOST_RANGE;
      out->u.d = d;
    } else {
      return PYHOST_TYPE;
    }
    break;
  case PYHOST_ARG_BOOL:
    if (!pyhost__is_bool(o)) return PYHOST_TYPE;
    out->u.b = pyhost__scalar_bool(o);
    break;
  default:
    return PYHOST_TYPE;
  }
  out->kind = kind;
  return PYHOST_OK;
}

const char *pyhost__scalar_range_text(int kind) {
  return kind == PYHOST_ARG_FLOAT ? "int too large to convert to float"
                                  : "int does not fit in 64 bits";
}
