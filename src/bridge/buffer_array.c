/* buffer_array.c: C arrays of numbers to and from Python lists (see pyhost.h, "arrays
 * of numbers"), with no pyhost_value per item.
 *
 * C -> Python: from 3.7 (PyMemoryView_FromMemory) the array is lent to a memoryview
 * for the length of the call and memoryview.cast(letter).tolist() builds the list in
 * CPython's own loop, which stores each item without a call; the memoryview is
 * released before the call returns, so nothing keeps the host's array.  On 3.6 each
 * item is made and stored by the stable ABI's calls.
 * Python -> C: the stable ABI has no look at a list's item array, so each item is
 * read with PyList_GetItem (PyTuple_GetItem) and PyLong_AsLongLong (PyFloat_AsDouble),
 * a call where a direct host reads the array in place: the measured floor
 * (docs/performance.md, g3); any other item (a subclass, -1, beyond range) by the one
 * reader of scalars, which runs no Python code.
 */
#include "buffer.h"

#include <string.h>

/* A list of the n items of letter 'q' or 'd' at a: a new reference or NULL with the
 * exception set. */
static PyObject *list_from_memory(const void *a, size_t n, const char *letter) {
  PyObject *mv = PY.PyMemoryView_FromMemory((char *)(uintptr_t)a, (Py_ssize_t)(n * 8),
                                            PYHOST__BUF_READ);
  if (!mv) return NULL;
  PyObject *cast = PY.PyObject_GetAttrString(mv, "cast");
  PyObject *fmt = cast ? PY.PyUnicode_FromString(letter) : NULL;
  PyObject *typed = fmt ? PY.PyObject_CallFunctionObjArgs(cast, fmt, NULL) : NULL;
  PyObject *list = typed ? pyhost__call_method0(typed, "tolist") : NULL;
  if (typed) pyhost__memoryview_drop(typed);
  PY.Py_DecRef(fmt);
  PY.Py_DecRef(cast);
  pyhost__memoryview_drop(mv);
  return list;
}

static PyObject *list_item_by_item(int ints, const void *a, size_t n) {
  PyObject *list = PY.PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *x = ints ? PY.PyLong_FromLongLong(((const int64_t *)a)[i])
                       : PY.PyFloat_FromDouble(((const double *)a)[i]);
    if (!x || PY.PyList_SetItem(list, (Py_ssize_t)i, x) < 0) {
      PY.Py_DecRef(list);
      list = NULL;
    }
  }
  return list;
}

static int from_array(pyhost *h, int ints, const void *a, size_t n, pyhost_value **out,
                      const char *fn) {
  if (!out) return pyhost__set_error(h, PYHOST_MISUSE, "%s: list is NULL", fn);
  *out = NULL;
  if (n && !a) return pyhost__set_error(h, PYHOST_MISUSE, "%s: a is NULL with n %zu", fn, n);
  if (n > (size_t)PY_SSIZE_T_MAX / 8)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: n %zu is too large", fn, n);
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyObject *list = n && pyhost__runtime_at_least(3, 7) ? list_from_memory(a, n, ints ? "q" : "d")
                                                      : list_item_by_item(ints, a, n);
  if (!list || !(*out = pyhost__object_value(list))) rc = pyhost__take_exception(h, fn);
  PY.Py_DecRef(list);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_value_from_int64s(pyhost *h, const int64_t *a, size_t n, pyhost_value **list) {
  return from_array(h, 1, a, n, list, "pyhost_value_from_int64s");
}

int pyhost_value_from_doubles(pyhost *h, const double *a, size_t n, pyhost_value **list) {
  return from_array(h, 0, a, n, list, "pyhost_value_from_doubles");
}

/* ---- Python -> C ---- */

static int item_error(pyhost *h, const char *fn, size_t i, const char *expected,
                      const char *got) {
  return pyhost__set_error(h, PYHOST_TYPE, "%s: item %zu: expected %s, got %s", fn, i, expected,
                           got);
}

/* Item i (a borrowed reference) into ia[i] or da[i], by the one reader of scalars
 * (scalar_read.c: a subclass by the value it stores, no Python code runs). */
static int read_item(pyhost *h, PyObject *x, size_t i, int ints, void *out, const char *fn) {
  int kind = ints ? PYHOST_ARG_INT : PYHOST_ARG_FLOAT;
  pyhost_arg a;
  int rc = pyhost__scalar_read(x, kind, &a);
  if (rc == PYHOST_OK) {
    if (ints) ((int64_t *)out)[i] = a.u.i;
    else ((double *)out)[i] = a.u.d;
    return PYHOST_OK;
  }
  if (rc == PYHOST_RANGE)
    return pyhost__set_error(h, PYHOST_RANGE, "%s: item %zu: %s", fn, i,
                             pyhost__scalar_range_text(kind));
  char name[256];
  pyhost__type_name((PyObject *)Py_TYPE(x), name, sizeof name);
  return item_error(h, fn, i, ints ? "int" : "float", name);
}

/* A list or tuple value made in C: read without Python. */
static int read_c_items(pyhost *h, const pyhost_value *v, int ints, void *out, const char *fn) {
  int64_t *ia = out;
  double *da = out;
  for (size_t i = 0; i < v->u.seq.n; i++) {
    const pyhost_value *x = v->u.seq.items[i];
    int rc;
    if (ints) {
      rc = x->kind == PYHOST_KIND_INT && x->big
               ? pyhost__set_error(h, PYHOST_RANGE, "%s: item %zu: int does not fit in 64 bits", fn, i)
               : x->kind == PYHOST_KIND_INT ? (ia[i] = x->u.i, PYHOST_OK)
                                            : item_error(h, fn, i, "int", pyhost_value_type_name(x));
    } else {
      rc = x->kind == PYHOST_KIND_FLOAT ? (da[i] = x->u.d, PYHOST_OK)
           : x->kind == PYHOST_KIND_INT && !x->big ? (da[i] = (double)x->u.i, PYHOST_OK)
           : x->kind == PYHOST_KIND_INT ? pyhost_value_to_float(h, x, &da[i])
                                        : item_error(h, fn, i, "float", pyhost_value_type_name(x));
    }
    if (rc) return rc;
  }
  return PYHOST_OK;
}

typedef PyObject *(*get_item_fn)(PyObject *, Py_ssize_t);

/* The common run of items from i on: exact ints (floats), in range and not -1, each
 * read with two calls and no reference of its own (no Python code runs).  Returns
 * where the run stops; an exception an item raised there is cleared (read_item reads
 * that item again and reports it). */
static size_t read_exact_ints(get_item_fn get, PyObject *o, int64_t *out, size_t i, size_t n) {
  PyTypeObject *exact = PY.PyLong_Type;
  long long (*as)(PyObject *) = PY.PyLong_AsLongLong;
  for (; i < n; i++) {
    PyObject *x = get(o, (Py_ssize_t)i);
    if (!x || Py_TYPE(x) != exact) break;
    long long v = as(x);
    if (v == -1) break;
    out[i] = (int64_t)v;
  }
  return i;
}

static size_t read_exact_floats(get_item_fn get, PyObject *o, double *out, size_t i, size_t n) {
  PyTypeObject *exact = PY.PyFloat_Type;
  double (*as)(PyObject *) = PY.PyFloat_AsDouble;
  for (; i < n; i++) {
    PyObject *x = get(o, (Py_ssize_t)i);
    if (!x || Py_TYPE(x) != exact) break;
    double d = as(x);
    if (d == -1.0) break;
    out[i] = d;
  }
  return i;
}

static int read_py_items(pyhost *h, PyObject *o, int ints, void *out, size_t n,
                         const char *fn) {
  int is_list = Py_TYPE(o) == PY.PyList_Type ||
                (PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_LIST_SUBCLASS);
  get_item_fn get = is_list ? PY.PyList_GetItem : PY.PyTuple_GetItem;
  for (size_t i = 0;; i++) {
    i = ints ? read_exact_ints(get, o, out, i, n) : read_exact_floats(get, o, out, i, n);
    if (i == n) return PYHOST_OK;
    PY.PyErr_Clear();
    /* borrowed: reading an item runs no Python code, so nothing can change the list */
    PyObject *x = get(o, (Py_ssize_t)i);
    if (!x) return pyhost__take_exception(h, fn);
    int rc = read_item(h, x, i, ints, out, fn);
    if (rc) return rc;
  }
}

static int to_array(pyhost *h, const pyhost_value *v, int ints, void *out, size_t cap,
                    size_t *n, const char *fn) {
  if (!v || !n) return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, v ? "n" : "v");
  *n = 0;
  if (v->kind == PYHOST_KIND_LIST || v->kind == PYHOST_KIND_TUPLE) {
    *n = v->u.seq.n;
    if (cap < *n) return pyhost__set_error(h, PYHOST_RANGE, "%s: %zu items, room for %zu", fn, *n, cap);
    if (*n && !out) return pyhost__set_error(h, PYHOST_MISUSE, "%s: out is NULL", fn);
    return read_c_items(h, v, ints, out, fn);
  }
  if (v->kind != PYHOST_KIND_OBJECT)
    return pyhost__set_error(h, PYHOST_TYPE, "%s: expected a list or tuple, got %s", fn,
                             pyhost_value_type_name(v));
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyObject *o = v->u.obj;
  unsigned long tf = PY.PyType_GetFlags(Py_TYPE(o));
  if (!(tf & (Py_TPFLAGS_LIST_SUBCLASS | Py_TPFLAGS_TUPLE_SUBCLASS))) {
    char name[256];
    pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
    rc = pyhost__set_error(h, PYHOST_TYPE, "%s: expected a list or tuple, got %s", fn, name);
  } else {
    Py_ssize_t len = (tf & Py_TPFLAGS_LIST_SUBCLASS) ? PY.PyList_Size(o) : PY.PyTuple_Size(o);
    *n = (size_t)len;
    if (cap < *n) rc = pyhost__set_error(h, PYHOST_RANGE, "%s: %zu items, room for %zu", fn, *n, cap);
    else if (*n && !out) rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: out is NULL", fn);
    else rc = read_py_items(h, o, ints, out, *n, fn);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_value_to_int64s(pyhost *h, const pyhost_value *v, int64_t *out, size_t cap, size_t *n) {
  return to_array(h, v, 1, out, cap, n, "pyhost_value_to_int64s");
}

int pyhost_value_to_doubles(pyhost *h, const pyhost_value *v, double *out, size_t cap, size_t *n) {
  return to_array(h, v, 0, out, cap, n, "pyhost_value_to_doubles");
}
