/* callback.c: running C callbacks for Python: argument conversion, the frame that
 * carries an exception from inside a callback to its Python caller, pyhost_raise.
 *
 * A callback fails by returning a status.  The exception Python then sees is the last
 * one the callback left in its frame: one it raised with pyhost_raise, or the original
 * exception of a pyhost call that failed inside it (pyhost__take_exception keeps a
 * copy there), so a traceback survives C -> Python -> C -> Python round trips.
 */
#include "bridge.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The frame and its kept exception are the runtime's (runtime.h, frame.c). */

int pyhost__frame_finish_slow(pyhost *h, struct pyhost__frame *f, int rc, const char *who) {
  if (rc == PYHOST_OK) {
    pyhost__frame_drop(f);
    return 0;
  }
  /* Only a status that says "Python raised" hands the kept exception on: a callback
   * that handled a failed call and then fails for another reason reports that. */
  int raised = rc == PYHOST_PYEXC || rc == PYHOST_EXIT || rc == PYHOST_INTERRUPTED;
  if (f->type && raised) {
    PY.PyErr_Restore(f->type, f->value, f->tb); /* steals the frame's references */
    f->type = f->value = f->tb = NULL;
    return -1;
  }
  pyhost__frame_drop(f);
  const char *msg = pyhost_errmsg(h);
  PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s: %s: %s", who, pyhost_status_name(rc),
                  msg && strcmp(msg, "not an error") != 0 ? msg : pyhost_errstr(rc));
  return -1;
}

/* ---- arguments ---- */

static int args_alloc(struct pyhost__args *a, size_t n) {
  a->nargs = 0; /* small[] needs no zeroing: only the first nargs slots are ever read */
  a->kwargs = NULL;
  a->argv = a->small;
  if (n > sizeof a->small / sizeof a->small[0]) {
    if (!(a->argv = pyhost__calloc(n, sizeof *a->argv))) {
      PY.PyErr_NoMemory();
      return -1;
    }
  }
  return 0;
}

void pyhost__args_clear(struct pyhost__args *a) {
  for (size_t i = 0; i < a->nargs; i++) pyhost_value_free(a->argv[i]);
  if (a->argv != a->small) pyhost__free(a->argv);
  pyhost_value_free(a->kwargs);
  a->argv = a->small;
  a->nargs = 0;
  a->kwargs = NULL;
}

static int push_arg(struct pyhost__args *a, pyhost *h, PyObject *o) {
  pyhost_value *v = pyhost__from_python(h, o);
  if (!v) return -1;
  a->argv[a->nargs++] = v;
  return 0;
}

int pyhost__args_from_vector(struct pyhost__args *a, PyObject *const *args, size_t nargs,
                             PyObject *kwnames) {
  if (args_alloc(a, nargs) < 0) return -1;
  for (size_t i = 0; i < nargs; i++)
    if (push_arg(a, NULL, args[i]) < 0) goto fail;
  Py_ssize_t nk = kwnames ? PY.PyTuple_Size(kwnames) : 0;
  if (nk > 0) {
    if (!(a->kwargs = pyhost_value_dict())) goto nomem;
    for (Py_ssize_t i = 0; i < nk; i++) {
      pyhost_value *k = pyhost__from_python(NULL, PY.PyTuple_GetItem(kwnames, i));
      pyhost_value *v = k ? pyhost__from_python(NULL, args[nargs + (size_t)i]) : NULL;
      if (!v) {
        pyhost_value_free(k);
        goto fail;
      }
      if (pyhost_value_set(a->kwargs, k, v) != PYHOST_OK) goto nomem;
    }
  }
  return 0;
nomem:
  PY.PyErr_NoMemory();
fail:
  pyhost__args_clear(a);
  return -1;
}

int pyhost__args_from_tuple(struct pyhost__args *a, PyObject *tuple, size_t skip,
                            PyObject *kwdict) {
  Py_ssize_t n = tuple ? PY.PyTuple_Size(tuple) : 0;
  if (n < 0) return -1;
  size_t count = (size_t)n > skip ? (size_t)n - skip : 0;
  if (args_alloc(a, count) < 0) return -1;
  for (size_t i = 0; i < count; i++)
    if (push_arg(a, NULL, PY.PyTuple_GetItem(tuple, (Py_ssize_t)(i + skip))) < 0) goto fail;
  if (kwdict && PY.PyDict_Size(kwdict) > 0 && !(a->kwargs = pyhost__from_python(NULL, kwdict)))
    goto fail;
  return 0;
fail:
  pyhost__args_clear(a);
  return -1;
}

PyObject *pyhost__result_to_python(pyhost *h, pyhost_value *result) {
  PyObject *o = pyhost__to_python(h, result); /* NULL value: None */
  pyhost_value_free(result);
  return o;
}

/* ---- raising ---- */

static PyObject *exc_type(pyhost_exc type) {
  switch (type) {
  case PYHOST_EXC_RUNTIME_ERROR: return *PY.PyExc_RuntimeError;
  case PYHOST_EXC_TYPE_ERROR: return *PY.PyExc_TypeError;
  case PYHOST_EXC_VALUE_ERROR: return *PY.PyExc_ValueError;
  case PYHOST_EXC_KEY_ERROR: return *PY.PyExc_KeyError;
  case PYHOST_EXC_INDEX_ERROR: return *PY.PyExc_IndexError;
  case PYHOST_EXC_ATTRIBUTE_ERROR: return *PY.PyExc_AttributeError;
  case PYHOST_EXC_LOOKUP_ERROR: return *PY.PyExc_LookupError;
  case PYHOST_EXC_OS_ERROR: return *PY.PyExc_OSError;
  case PYHOST_EXC_NOT_IMPLEMENTED_ERROR: return *PY.PyExc_NotImplementedError;
  case PYHOST_EXC_ZERO_DIVISION_ERROR: return *PY.PyExc_ZeroDivisionError;
  case PYHOST_EXC_OVERFLOW_ERROR: return *PY.PyExc_OverflowError;
  case PYHOST_EXC_MEMORY_ERROR: return *PY.PyExc_MemoryError;
  case PYHOST_EXC_REFERENCE_ERROR: return *PY.PyExc_ReferenceError;
  case PYHOST_EXC_EXCEPTION: return *PY.PyExc_Exception;
  case PYHOST_EXC_BUFFER_ERROR: return *PY.PyExc_BufferError;
  }
  return NULL;
}

PyObject *pyhost__exc_type(pyhost_exc type) { return exc_type(type); }

/* Sets TypeError: calling type gave exc, which is no exception instance. */
static void not_an_exception(PyObject *type, PyObject *exc) {
  char want[256], got[256];
  pyhost__type_name(type, want, sizeof want);
  pyhost__type_name((PyObject *)Py_TYPE(exc), got, sizeof got);
  PY.PyErr_Format(*PY.PyExc_TypeError,
                  "calling %s should have returned an instance of BaseException, not %s", want,
                  got);
}

/* Makes type(message) and keeps it in the innermost frame.  Needs the GIL (held by
 * the callback's caller). */
static int raise_into_frame(PyObject *type, const char *fmt, va_list ap) {
  PYHOST__ASSERT_GIL();
  char buf[2048];
  vsnprintf(buf, sizeof buf, fmt ? fmt : "", ap);
  PyObject *msg = PY.PyUnicode_DecodeUTF8(buf, (Py_ssize_t)strlen(buf), "replace");
  PyObject *exc = msg ? PY.PyObject_CallFunctionObjArgs(type, msg, NULL) : NULL;
  PY.Py_DecRef(msg);
  if (exc && !(PY.PyType_GetFlags(Py_TYPE(exc)) & Py_TPFLAGS_BASE_EXC_SUBCLASS)) {
    /* a __new__ may return anything: keeping Py_TYPE(42) as an exception type corrupts
     * the runtime (debug builds abort in _PyErr_Restore), so raise as Python would */
    not_an_exception(type, exc);
    PY.Py_DecRef(exc);
    exc = NULL;
  }
  if (exc) {
    pyhost__frame_keep(pyhost__thread.frame, (PyObject *)Py_TYPE(exc), exc, NULL);
    PY.Py_DecRef(exc);
  } else { /* the class refused the message: keep why */
    PyObject *t, *v, *tb;
    PY.PyErr_Fetch(&t, &v, &tb);
    PY.PyErr_NormalizeException(&t, &v, &tb);
    pyhost__frame_keep(pyhost__thread.frame, t, v, tb);
    PY.Py_DecRef(t);
    PY.Py_DecRef(v);
    PY.Py_DecRef(tb);
  }
  return PYHOST_PYEXC;
}

static int outside_callback(pyhost *h, const char *fn) {
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "%s called outside a host callback on this thread: raise only from "
                           "inside a host function, method, property or constructor",
                           fn);
}

int pyhost_raise(pyhost *h, pyhost_exc type, const char *fmt, ...) {
  if (!pyhost__handle_running(h)) return PYHOST_MISUSE;
  if (!pyhost__thread.frame) return outside_callback(h, "pyhost_raise");
  PyObject *t = exc_type(type);
  if (!t) return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_raise: unknown exception type %d", (int)type);
  va_list ap;
  va_start(ap, fmt);
  int rc = raise_into_frame(t, fmt, ap);
  va_end(ap);
  return rc;
}

int pyhost_raise_named(pyhost *h, const char *type_name, const char *fmt, ...) {
  if (!pyhost__handle_running(h)) return PYHOST_MISUSE;
  if (!pyhost__thread.frame) return outside_callback(h, "pyhost_raise_named");
  if (!type_name) return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_raise_named: type_name is NULL");
  PyObject *t = pyhost__resolve(h, type_name);
  int ok = t && (PY.PyType_GetFlags(Py_TYPE(t)) & Py_TPFLAGS_TYPE_SUBCLASS) &&
           (PY.PyType_GetFlags((PyTypeObject *)t) & Py_TPFLAGS_BASE_EXC_SUBCLASS);
  if (!ok) {
    PY.PyErr_Clear();
    PY.Py_DecRef(t);
    return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR,
                        "pyhost_raise_named: %s does not name an exception class", type_name);
  }
  va_list ap;
  va_start(ap, fmt);
  int rc = raise_into_frame(t, fmt, ap);
  va_end(ap);
  PY.Py_DecRef(t);
  return rc;
}
