/* text.c: the UTF-8 text of a Python str, copied out.  Messages (error.c) and
 * conversions (the bridge) both read str objects this one way. */
#include "runtime.h"

char *pyhost__utf8_copy(PyObject *str, size_t *len) {
  PYHOST__ASSERT_GIL();
  const char *p;
  Py_ssize_t n;
  PyObject *bytes = NULL;
  if (pyhost__runtime_at_least(3, 10)) {
    if (!(p = PY.PyUnicode_AsUTF8AndSize(str, &n))) return NULL;
  } else {
    /* Before 3.10 the stable ABI has no UTF-8 view of a str: encode, then copy. */
    char *bp;
    if (!(bytes = PY.PyUnicode_AsUTF8String(str))) return NULL;
    if (PY.PyBytes_AsStringAndSize(bytes, &bp, &n) < 0) {
      PY.Py_DecRef(bytes);
      return NULL;
    }
    p = bp;
  }
  char *copy = pyhost__memdup(p, (size_t)n);
  PY.Py_DecRef(bytes);
  if (!copy) {
    PY.PyErr_NoMemory();
    return NULL;
  }
  if (len) *len = (size_t)n;
  return copy;
}
