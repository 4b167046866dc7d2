/* scalar.c: C scalars, strings and bytes to and from Python objects, one at a time,
 * without a pyhost_value in between: the conversions of the fast forms (prepared
 * calls).  The rules are pyhost_value's (value.c), so both forms agree on what is an
 * int, a float or a bool. */
#include "buffer.h"

#include <string.h>

PyObject *pyhost__arg_to_python(pyhost *h, const pyhost_arg *a, size_t index, const char *fn) {
  switch (a->kind) {
  case PYHOST_ARG_NONE:
    PY.Py_IncRef(PY._Py_NoneStruct);
    return PY._Py_NoneStruct;
  case PYHOST_ARG_BOOL: return PY.PyBool_FromLong(a->u.b != 0);
  case PYHOST_ARG_INT: return PY.PyLong_FromLongLong(a->u.i);
  case PYHOST_ARG_FLOAT: return PY.PyFloat_FromDouble(a->u.d);
  case PYHOST_ARG_STR:
  case PYHOST_ARG_BYTES: {
    size_t len = a->len == PYHOST_STRLEN && a->u.p && a->kind == PYHOST_ARG_STR ? strlen(a->u.s)
                                                                                : a->len;
    if ((!a->u.p && len) || len > (size_t)PY_SSIZE_T_MAX) break;
    if (a->kind == PYHOST_ARG_STR)
      return PY.PyUnicode_DecodeUTF8(len ? a->u.s : "", (Py_ssize_t)len, "strict");
    return PY.PyBytes_FromStringAndSize(len ? a->u.p : "", (Py_ssize_t)len);
  }
  case PYHOST_ARG_VALUE:
    if (a->u.v && a->u.v->kind == PYHOST_KIND_OBJECT) { /* the usual one: no dispatch */
      PY.Py_IncRef(a->u.v->u.obj);
      return a->u.v->u.obj;
    }
    return pyhost__to_python(h, a->u.v);
  case PYHOST_ARG_BUFFER:
    if (a->u.p) return pyhost__buffer_object((const pyhost_buffer *)a->u.p);
    pyhost__set_error(h, PYHOST_MISUSE, "%s: argument %zu: a NULL pyhost_buffer", fn, index);
    return NULL;
  default:
    pyhost__set_error(h, PYHOST_MISUSE, "%s: argument %zu: unknown pyhost_arg kind %d", fn,
                      index, a->kind);
    return NULL;
  }
  pyhost__set_error(h, PYHOST_MISUSE, "%s: argument %zu: %s with %s pointer and len %zu", fn,
                    index, a->kind == PYHOST_ARG_STR ? "str" : "bytes",
                    a->u.p ? "a" : "a NULL", a->len);
  return NULL;
}

int pyhost__read_type_error(pyhost *h, PyObject *o, const char *fn, const char *expected) {
  char name[256];
  pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
  return pyhost__set_error(h, PYHOST_TYPE, "%s: the result: expected %s, got %s", fn, expected,
                           name);
}

int pyhost__read_int_any(pyhost *h, PyObject *o, const char *fn, int64_t *out) {
  if (!pyhost__is_int(o)) return pyhost__read_type_error(h, o, fn, "int");
  int overflow = 0;
  long long i = PY.PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow)
    return pyhost__set_error(h, PYHOST_RANGE, "%s: the result: int does not fit in 64 bits", fn);
  if (i == -1 && PY.PyErr_Occurred()) return pyhost__take_exception(h, NULL);
  *out = (int64_t)i;
  return PYHOST_OK;
}

int pyhost__read_float(pyhost *h, PyObject *o, const char *fn, double *out) {
  if (!pyhost__accepts_float(o)) return pyhost__read_type_error(h, o, fn, "float");
  double d = PY.PyFloat_AsDouble(o); /* an int too big for a double raises OverflowError */
  if (d == -1.0 && PY.PyErr_Occurred()) return pyhost__take_exception(h, NULL);
  *out = d;
  return PYHOST_OK;
}

int pyhost__read_bool(pyhost *h, PyObject *o, const char *fn, int *out) {
  if (!pyhost__is_bool(o)) return pyhost__read_type_error(h, o, fn, "bool");
  *out = PY.PyObject_IsTrue(o);
  return PYHOST_OK;
}
