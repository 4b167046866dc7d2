/* fastargs.c: the fast form of host callbacks (see pyhost.h, "host functions with
 * borrowed arguments"): a view over the Python arguments that converts one argument
 * on demand, and a result set in place.  Nothing is allocated unless a getter needs a
 * temporary (the UTF-8 of a str before 3.10, which has no UTF-8 view) or the host asks
 * for a pyhost_value.  A wrong argument raises TypeError in the callback's frame, so
 * the callback's `return rc;` hands it to its Python caller. */
#include "bridge.h"
#include "buffer.h"

const char pyhost__tuple_form = 0; /* its address marks a tuple-form view */

/* How many keyword arguments: counted when asked, so a call never pays for it. */
static size_t kwcount(const struct pyhost_args *a) {
  if (pyhost__args_is_tuple(a)) return a->nkw;
  return a->kwnames ? (size_t)PY.PyTuple_Size(a->kwnames) : 0;
}

/* The k-th keyword's name (want_key) or value of a tuple-form call: borrowed. */
static PyObject *dict_entry(PyObject *d, size_t k, int want_key) {
  Py_ssize_t pos = 0;
  PyObject *key, *val;
  for (size_t j = 0; PY.PyDict_Next(d, &pos, &key, &val); j++)
    if (j == k) return want_key ? key : val;
  return NULL;
}

/* Argument i (borrowed), or NULL when there is none. */
static PyObject *item(const struct pyhost_args *a, size_t i) {
  if (i >= a->nargs + kwcount(a)) return NULL;
  if (!pyhost__args_is_tuple(a)) return a->argv[i];
  if (i < a->nargs) return PY.PyTuple_GetItem(a->tuple, (Py_ssize_t)(i + a->skip));
  return dict_entry(a->kwdict, i - a->nargs, 0);
}

/* Raises TypeError "<who>() argument i: ..." in the callback's frame. */
static int type_error(const struct pyhost_args *a, size_t i, PyObject *o, const char *want) {
  char got[256];
  if (!o) {
    return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR,
                        "%s() missing argument %zu (it was given %zu)", a->callee->who, i,
                        a->nargs + kwcount(a));
  }
  pyhost__type_name((PyObject *)Py_TYPE(o), got, sizeof got);
  return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR,
                      "%s() argument %zu: expected %s, got %s", a->callee->who, i, want, got);
}

static int bad_call(pyhost *h, const char *fn, const char *what) {
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, what);
}

static PYHOST__COLD int outside(pyhost *h, const char *fn) {
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "%s: called outside a host callback on this thread (args and ret "
                           "live on their callback's thread until it returns)",
                           fn);
}

/* args (or ret) checked: not NULL, and used on a thread running a host callback.  They
 * belong to the callback running on their thread (pyhost.h): a getter or a setter
 * called anywhere else (after its callback returned, on another thread) would touch
 * Python objects without the GIL.  A load of this thread's state: every build. */
#define IN_CALLBACK(H, FN, P, WHAT)                         \
  do {                                                      \
    if (!(P)) return bad_call(H, FN, WHAT);                 \
    if (!pyhost__thread.frame) return outside(H, FN);       \
  } while (0)

/* Keeps a temporary alive until the callback returns (steals o). */
static int keep(struct pyhost_args *a, PyObject *o) {
  if (!a->keep && !(a->keep = PY.PyList_New(0))) {
    PY.Py_DecRef(o);
    return -1;
  }
  int rc = PY.PyList_Append(a->keep, o);
  PY.Py_DecRef(o);
  return rc;
}

int pyhost__args_own_kwdict(struct pyhost_args *a) {
  PyObject *copy = PY.PyDict_Copy(a->kwdict);
  if (!copy || keep(a, copy) < 0) { /* keep steals copy */
    if (a->keep) PY.Py_DecRef(a->keep);
    a->keep = NULL;
    return -1;
  }
  a->kwdict = copy; /* held by a->keep until the callback returns */
  return 0;
}

/* The UTF-8 text of str o: borrowed from o (3.10+) or from a kept temporary. */
static int utf8_of(struct pyhost_args *a, PyObject *o, const char **s, size_t *len) {
  Py_ssize_t n = 0;
  if (pyhost__runtime_at_least(3, 10)) {
    const char *p = PY.PyUnicode_AsUTF8AndSize(o, &n);
    if (!p) return pyhost__take_exception(a->callee->h, NULL);
    *s = p;
  } else {
    PyObject *b = PY.PyUnicode_AsUTF8String(o);
    char *p;
    if (!b || keep(a, b) < 0 || PY.PyBytes_AsStringAndSize(b, &p, &n) < 0)
      return pyhost__take_exception(a->callee->h, NULL);
    *s = p;
  }
  if (len) *len = (size_t)n;
  return PYHOST_OK;
}

size_t pyhost_args_count(const pyhost_args *args) { return args ? args->nargs : 0; }
size_t pyhost_args_kwcount(const pyhost_args *args) { return args ? kwcount(args) : 0; }

int pyhost_args_kwname(pyhost *h, const pyhost_args *args, size_t k, const char **name,
                       size_t *len) {
  IN_CALLBACK(h, "pyhost_args_kwname", args, "args");
  if (!name) return bad_call(h, "pyhost_args_kwname", "name");
  if (k >= kwcount(args))
    return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_args_kwname: keyword %zu of %zu", k,
                             kwcount(args));
  PyObject *key = pyhost__args_is_tuple(args) ? dict_entry(args->kwdict, k, 1)
                              : PY.PyTuple_GetItem(args->kwnames, (Py_ssize_t)k);
  return utf8_of((struct pyhost_args *)args, key, name, len);
}

pyhost_kind pyhost_args_kind(const pyhost_args *args, size_t i) {
  PyObject *o = args ? item(args, i) : NULL;
  if (!o || o == PY._Py_NoneStruct) return PYHOST_KIND_NONE;
  PyTypeObject *t = Py_TYPE(o);
  unsigned long f = PY.PyType_GetFlags(t);
  if (t == PY.PyBool_Type) return PYHOST_KIND_BOOL;
  if (f & Py_TPFLAGS_LONG_SUBCLASS) return PYHOST_KIND_INT;
  if (t == PY.PyFloat_Type || PY.PyType_IsSubtype(t, PY.PyFloat_Type)) return PYHOST_KIND_FLOAT;
  if (f & Py_TPFLAGS_UNICODE_SUBCLASS) return PYHOST_KIND_STR;
  if (f & Py_TPFLAGS_BYTES_SUBCLASS) return PYHOST_KIND_BYTES;
  if (f & Py_TPFLAGS_LIST_SUBCLASS) return PYHOST_KIND_LIST;
  if (f & Py_TPFLAGS_TUPLE_SUBCLASS) return PYHOST_KIND_TUPLE;
  if (f & Py_TPFLAGS_DICT_SUBCLASS) return PYHOST_KIND_DICT;
  return PYHOST_KIND_OBJECT;
}

/* Reads o as a C argument of kind (PYHOST_ARG_INT, _FLOAT, _BOOL, _STR or _BYTES): the
 * scalars by the one reader (internal.h), str and bytes here.  The one conversion
 * behind the getters below and the typed functions' binding (typedargs.c).  PYHOST_OK;
 * PYHOST_TYPE or PYHOST_RANGE (pyhost__scalar_read's) with nothing raised, for the
 * caller to word; PYHOST_PYEXC with the exception taken into the callback's frame.
 * Runs no Python code: the checks read type flags, never __index__, __float__ or
 * __str__. */
int pyhost__args_read(struct pyhost_args *a, PyObject *o, int kind, pyhost_arg *out) {
  switch (kind) {
  case PYHOST_ARG_STR: {
    if (!(PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_UNICODE_SUBCLASS)) return PYHOST_TYPE;
    int rc = utf8_of(a, o, &out->u.s, &out->len);
    if (rc) return rc;
    break;
  }
  case PYHOST_ARG_BYTES: {
    if (!(PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_BYTES_SUBCLASS)) return PYHOST_TYPE;
    char *p;
    Py_ssize_t n;
    if (PY.PyBytes_AsStringAndSize(o, &p, &n) < 0) return pyhost__take_exception(a->callee->h, NULL);
    out->u.p = p;
    out->len = (size_t)n;
    break;
  }
  default:
    return pyhost__scalar_read(o, kind, out);
  }
  out->kind = kind;
  return PYHOST_OK;
}

int pyhost__args_view(struct pyhost_args *a, PyObject *o, unsigned flags,
                      const pyhost_view **out, const char **want) {
  /* chained on a->lent until the callback returned: pyhost__args_drop releases it */
  return pyhost__view_lend(a->callee->h, o, flags, &a->lent, out, want);
}

/* Argument i of the getter FN read as kind into the pyhost_arg x, or the getter's
 * TypeError ("expected <want>") or OverflowError. */
static int get(pyhost *h, const pyhost_args *args, size_t i, int kind, const char *want,
               pyhost_arg *x) {
  PyObject *o = item(args, i);
  if (!o) return type_error(args, i, NULL, NULL);
  int rc = pyhost__args_read((struct pyhost_args *)args, o, kind, x);
  if (rc == PYHOST_TYPE) return type_error(args, i, o, want);
  if (rc == PYHOST_RANGE)
    return pyhost_raise(h, PYHOST_EXC_OVERFLOW_ERROR, "%s() argument %zu: %s", args->callee->who,
                        i, pyhost__scalar_range_text(kind));
  return rc;
}

/* The shape of every typed getter: args and out checked, argument i read. */
#define GETTER(FN, KIND, WANT)                                   \
  IN_CALLBACK(h, FN, args, "args");                              \
  if (!out) return bad_call(h, FN, "out");                       \
  pyhost_arg x;                                                  \
  int rc = get(h, args, i, KIND, WANT, &x);                      \
  if (rc) return rc;

int pyhost_args_int(pyhost *h, const pyhost_args *args, size_t i, int64_t *out) {
  GETTER("pyhost_args_int", PYHOST_ARG_INT, "int")
  *out = x.u.i;
  return PYHOST_OK;
}

int pyhost_args_float(pyhost *h, const pyhost_args *args, size_t i, double *out) {
  GETTER("pyhost_args_float", PYHOST_ARG_FLOAT, "float")
  *out = x.u.d;
  return PYHOST_OK;
}

int pyhost_args_bool(pyhost *h, const pyhost_args *args, size_t i, int *out) {
  GETTER("pyhost_args_bool", PYHOST_ARG_BOOL, "bool")
  *out = x.u.b;
  return PYHOST_OK;
}

int pyhost_args_str(pyhost *h, const pyhost_args *args, size_t i, const char **out,
                    size_t *len) {
  GETTER("pyhost_args_str", PYHOST_ARG_STR, "str")
  *out = x.u.s;
  if (len) *len = x.len;
  return PYHOST_OK;
}

int pyhost_args_bytes(pyhost *h, const pyhost_args *args, size_t i, const void **out,
                      size_t *len) {
  GETTER("pyhost_args_bytes", PYHOST_ARG_BYTES, "bytes")
  *out = x.u.p;
  if (len) *len = x.len;
  return PYHOST_OK;
}

int pyhost_args_value(pyhost *h, const pyhost_args *args, size_t i, pyhost_value **out) {
  IN_CALLBACK(h, "pyhost_args_value", args, "args");
  if (!out) return bad_call(h, "pyhost_args_value", "out");
  PyObject *o = item(args, i);
  if (!o) return type_error(args, i, NULL, NULL);
  pyhost_value *v = pyhost__from_python(h, o);
  if (!v) return pyhost__take_exception(h, NULL); /* *out untouched, as every getter's */
  *out = v;
  return PYHOST_OK;
}

int pyhost_args_view(pyhost *h, const pyhost_args *args, size_t i, unsigned flags,
                     const pyhost_view **view) {
  IN_CALLBACK(h, "pyhost_args_view", args, "args");
  if (!view) return bad_call(h, "pyhost_args_view", "view");
  PyObject *o = item(args, i);
  if (!o) return type_error(args, i, NULL, NULL);
  const char *want;
  const pyhost_view *v;
  int rc = pyhost__args_view((struct pyhost_args *)args, o, flags, &v, &want);
  if (rc == PYHOST_TYPE) return type_error(args, i, o, want);
  if (rc == PYHOST_OK) *view = v;
  return rc;
}

/* ---- results ---- */

PYHOST__COLD PyObject *pyhost__run_fast_end(int rc, struct pyhost__frame *outer, int guarded) {
  /* the call's frame is still the innermost (pyhost__run_fast_as pops it only here) */
  PYHOST__ASSERT(pyhost__thread.frame && pyhost__thread.frame != outer);
  struct pyhost__fast_call *c = pyhost__fast_call_of(pyhost__thread.frame);
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer); /* entered by pyhost__run_fast_as */
  struct pyhost_args *a = &c->args;
  PyObject *result = c->ret.obj;
  pyhost__args_drop(a);
  if (pyhost__frame_finish(a->callee->h, &c->frame, rc, a->callee->who) < 0) {
    pyhost__drop(result);
    return NULL;
  }
  return result;
}

PyObject *pyhost__none_new_out_of_line(void) { return pyhost__none_new(); }

/* Sets ret to the conversion of a (a pyhost_arg, as for prepared calls). */
static int set(pyhost *h, pyhost_ret *ret, pyhost_arg a, const char *fn) {
  IN_CALLBACK(h, fn, ret, "ret");
  PyObject *o = pyhost__arg_to_python(h, &a, 0, fn);
  if (!o) return PY.PyErr_Occurred() ? pyhost__take_exception(h, NULL) : PYHOST_MISUSE;
  if (ret->pending.kind == PYHOST__RET_MADE) pyhost__drop(ret->obj); /* else pending */
  ret->obj = o;
  ret->pending.kind = PYHOST__RET_MADE;
  return PYHOST_OK;
}

/* In a typed call whose result is still pending (bridge.h): the scalar setters only
 * store, the door makes the object. */
static inline int set_pending(pyhost_ret *ret, pyhost_arg a) {
  ret->pending.kind = a.kind; /* a scalar's len means nothing: not stored */
  ret->pending.u = a.u;
  return PYHOST_OK;
}

int pyhost_ret_none(pyhost *h, pyhost_ret *ret) {
  IN_CALLBACK(h, "pyhost_ret_none", ret, "ret");
  if (ret->pending.kind != PYHOST__RET_MADE) return set_pending(ret, pyhost_arg_none());
  pyhost__drop(ret->obj);
  ret->obj = pyhost__none_new();
  return PYHOST_OK;
}
int pyhost_ret_bool(pyhost *h, pyhost_ret *ret, int b) {
  return set(h, ret, pyhost_arg_bool(b), "pyhost_ret_bool");
}
/* Sets ret (checked already) to o, a new reference or NULL with the exception set: the
 * scalar setters, which need no conversion but Python's own. */
static int set_made(pyhost *h, pyhost_ret *ret, PyObject *o) {
  if (!o) return pyhost__take_exception(h, NULL);
  pyhost__drop(ret->obj);
  ret->obj = o;
  return PYHOST_OK;
}
/* The int and float setters (ret checked) but for a pending result: out of line, so
 * that the pending one saves no registers. */
static PYHOST__NOINLINE int ret_int_made(pyhost *h, pyhost_ret *ret, int64_t i) {
  return set_made(h, ret, PY.PyLong_FromLongLong((long long)i));
}
static PYHOST__NOINLINE int ret_float_made(pyhost *h, pyhost_ret *ret, double d) {
  return set_made(h, ret, PY.PyFloat_FromDouble(d));
}
int pyhost_ret_int(pyhost *h, pyhost_ret *ret, int64_t i) {
  IN_CALLBACK(h, "pyhost_ret_int", ret, "ret");
  return ret->pending.kind != PYHOST__RET_MADE ? set_pending(ret, pyhost_arg_int(i))
                                              : ret_int_made(h, ret, i);
}
int pyhost_ret_float(pyhost *h, pyhost_ret *ret, double d) {
  IN_CALLBACK(h, "pyhost_ret_float", ret, "ret");
  return ret->pending.kind != PYHOST__RET_MADE ? set_pending(ret, pyhost_arg_float(d))
                                              : ret_float_made(h, ret, d);
}
int pyhost_ret_str(pyhost *h, pyhost_ret *ret, const char *s, size_t len) {
  return set(h, ret, pyhost_arg_str(s, len), "pyhost_ret_str");
}
int pyhost_ret_bytes(pyhost *h, pyhost_ret *ret, const void *data, size_t len) {
  return set(h, ret, pyhost_arg_bytes(data, len), "pyhost_ret_bytes");
}
int pyhost_ret_value(pyhost *h, pyhost_ret *ret, const pyhost_value *v) {
  return set(h, ret, pyhost_arg_value(v), "pyhost_ret_value");
}
