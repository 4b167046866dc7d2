/* scalar.c: C scalars, strings and bytes to and from Python objects, one at a time,
 * without a pyhost_value in between: the conversions of the fast forms (prepared
 * calls).  Results are read by the one reader of scalars (scalar_read.c), so every form
 * agrees on what is an int, a float or a bool. */
#include "buffer.h"

#include <string.h>

int pyhost__arg_text(const pyhost_arg *a, size_t *len) {
  *len = a->len == PYHOST_STRLEN && a->u.p && a->kind == PYHOST_ARG_STR ? strlen(a->u.s) : a->len;
  return (!a->u.p && *len) || *len > (size_t)PY_SSIZE_T_MAX ? -1 : 0;
}

void pyhost__arg_misuse(const pyhost_arg *a, char *why, size_t cap) {
  if (a->kind == PYHOST_ARG_VIEW)
    pyhost__fmt(why, cap, "PYHOST_ARG_VIEW is a typed callback's borrowed view, never a call's "
                "argument (pass the object's value, or a pyhost_buffer)");
  else if (a->kind != PYHOST_ARG_STR && a->kind != PYHOST_ARG_BYTES)
    pyhost__fmt(why, cap, "unknown pyhost_arg kind %d", a->kind);
  else
    pyhost__fmt(why, cap, "%s with %s pointer and len %zu",
                a->kind == PYHOST_ARG_STR ? "str" : "bytes", a->u.p ? "a" : "a NULL", a->len);
}

PyObject *pyhost__arg_to_python(pyhost *h, const pyhost_arg *a, size_t index, const char *fn) {
  size_t len;
  switch (a->kind) {
  case PYHOST_ARG_NONE:
    PY.Py_IncRef(PY._Py_NoneStruct);
    return PY._Py_NoneStruct;
  case PYHOST_ARG_BOOL: return PY.PyBool_FromLong(a->u.b != 0);
  case PYHOST_ARG_INT: return PY.PyLong_FromLongLong(a->u.i);
  case PYHOST_ARG_FLOAT: return PY.PyFloat_FromDouble(a->u.d);
  case PYHOST_ARG_STR:
  case PYHOST_ARG_BYTES:
    if (pyhost__arg_text(a, &len) < 0) break;
    if (a->kind == PYHOST_ARG_STR)
      return PY.PyUnicode_DecodeUTF8(len ? a->u.s : "", (Py_ssize_t)len, "strict");
    return PY.PyBytes_FromStringAndSize(len ? a->u.p : "", (Py_ssize_t)len);
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
  default: break;
  }
  char why[128];
  pyhost__arg_misuse(a, why, sizeof why);
  pyhost__set_error(h, PYHOST_MISUSE, "%s: argument %zu: %s", fn, index, why);
  return NULL;
}

int pyhost__read_type_error(pyhost *h, PyObject *o, const char *fn, const char *expected) {
  char name[256];
  pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
  return pyhost__set_error(h, PYHOST_TYPE, "%s: the result: expected %s, got %s", fn, expected,
                           name);
}

/* The result o read as kind into *out, or the error naming fn and the type wanted. */
static int read_result(pyhost *h, PyObject *o, const char *fn, int kind, const char *want,
                       pyhost_arg *out) {
  int rc = pyhost__scalar_read(o, kind, out);
  if (rc == PYHOST_TYPE) return pyhost__read_type_error(h, o, fn, want);
  if (rc == PYHOST_RANGE)
    return pyhost__set_error(h, PYHOST_RANGE, "%s: the result: %s", fn,
                             pyhost__scalar_range_text(kind));
  return PYHOST_OK;
}

int pyhost__read_int_any(pyhost *h, PyObject *o, const char *fn, int64_t *out) {
  pyhost_arg a = pyhost_arg_none();
  int rc = read_result(h, o, fn, PYHOST_ARG_INT, "int", &a);
  if (rc == PYHOST_OK) *out = a.u.i;
  return rc;
}

int pyhost__read_float_any(pyhost *h, PyObject *o, const char *fn, double *out) {
  pyhost_arg a = pyhost_arg_none();
  int rc = read_result(h, o, fn, PYHOST_ARG_FLOAT, "float", &a);
  if (rc == PYHOST_OK) *out = a.u.d;
  return rc;
}

int pyhost__read_bool(pyhost *h, PyObject *o, const char *fn, int *out) {
  pyhost_arg a = pyhost_arg_none();
  int rc = read_result(h, o, fn, PYHOST_ARG_BOOL, "bool", &a);
  if (rc == PYHOST_OK) *out = a.u.b;
  return rc;
}
