/* bench_direct.c: the baseline, a host linked directly against one libpython with the
 * full (non-limited) API, compiled once per Python version.  `bench_direct MODE N`.
 * Modes mirror bench_pyhost.c; each does the same work the plain CPython way. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "bench_capi.h"

/* Where copies are published so that the compiler cannot drop malloc+memcpy+free. */
static void *volatile sink;

static PyObject *eval_expr(PyObject *code) {
  PyObject *r = PyEval_EvalCode(code, main_dict, main_dict);
  check(r != NULL, "eval");
  return r;
}

/* (f) The conversions as a hand-written host makes them: its C data handed to Python
 * (keep(x) stores it in a global) and Python data read back into C (get_s(), get_l()),
 * each through a call, as the pyhost side's public route makes them; a str read in
 * place, a list read into the host's own int64_t array. */
static PyObject *call0(PyObject *f) {
#if PY_VERSION_HEX >= 0x03090000
  return PyObject_CallNoArgs(f);
#else
  return PyObject_CallObject(f, NULL);
#endif
}
static PyObject *call1(PyObject *f, PyObject *arg);

static void give(PyObject *keep, PyObject *o) {
  check(o != NULL, "conversion");
  PyObject *r = call1(keep, o);
  check(r != NULL, "keep()");
  Py_DECREF(r);
  Py_DECREF(o);
}

static void str_to_py(const char *s, size_t len, unsigned long n) {
  PyObject *keep = get("keep");
  for (unsigned long i = 0; i < n; i++) give(keep, PyUnicode_FromStringAndSize(s, (Py_ssize_t)len));
}

static void str_from_py(unsigned long n) {
  PyObject *get_s = get("get_s");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *o = call0(get_s);
    check(o != NULL, "get_s()");
    Py_ssize_t len;
    const char *p = PyUnicode_AsUTF8AndSize(o, &len);
    check(p != NULL && len == BENCH_STR_BYTES && p[len - 1] == 'f', "PyUnicode_AsUTF8AndSize");
    Py_DECREF(o);
  }
}

static void list_to_py(const int64_t *items, size_t len, unsigned long n) {
  PyObject *keep = get("keep");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *o = PyList_New((Py_ssize_t)len);
    check(o != NULL, "PyList_New");
    for (size_t j = 0; j < len; j++) {
      PyObject *x = PyLong_FromLongLong(items[j]);
      check(x != NULL, "PyLong_FromLongLong");
      PyList_SET_ITEM(o, (Py_ssize_t)j, x);
    }
    give(keep, o);
  }
}

static void list_from_py(unsigned long n) {
  PyObject *get_l = get("get_l");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *o = call0(get_l);
    check(o != NULL && PyList_Check(o), "get_l()");
    Py_ssize_t len = PyList_GET_SIZE(o);
    int64_t *items = malloc(sizeof *items * (size_t)len);
    for (Py_ssize_t j = 0; j < len; j++) {
      items[j] = PyLong_AsLongLong(PyList_GET_ITEM(o, j));
      if (items[j] == -1 && PyErr_Occurred()) check(0, "PyLong_AsLongLong");
    }
    sink = items;
    free(sink);
    Py_DECREF(o);
  }
}

/* (g1) host memory to Python per operation: a memoryview made by
 * PyMemoryView_FromMemory, passed to first(v), dropped (a direct host cannot tell
 * whether Python kept it). */
static unsigned char *bulk;
static void bulk_to_py(size_t len, unsigned long n) {
  PyObject *first = get("first");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *mv = PyMemoryView_FromMemory((char *)bulk, (Py_ssize_t)len, PyBUF_READ);
    check(mv != NULL, "PyMemoryView_FromMemory");
    PyObject *r = call1(first, mv);
    check(r != NULL && PyLong_AsLong(r) == 7, "first(v)");
    Py_DECREF(r);
    Py_DECREF(mv);
  }
}

/* (g1, the guarantee pyhost's loan gives) an exporter object per loan, as pyhost's
 * pyhost.HostMemory: it counts the Py_buffers it lends, so the host knows whether a view
 * Python kept (a slice, a numpy array) still reads the memory when the loan ends and
 * frees it only after the last; a view Python kept itself is released.  What a direct
 * host pays for that, which PyMemoryView_FromMemory (above) cannot give at any price. */
typedef struct {
  PyObject_HEAD
  void *buf;
  Py_ssize_t len, exports;
} loan_object;

static int loan_getbuffer(PyObject *self, Py_buffer *v, int flags) {
  loan_object *l = (loan_object *)self;
  if (PyBuffer_FillInfo(v, self, l->buf, l->len, 1, flags) < 0) return -1;
  l->exports++;
  return 0;
}

static void loan_releasebuffer(PyObject *self, Py_buffer *v) {
  (void)v;
  ((loan_object *)self)->exports--;
}

static PyBufferProcs loan_as_buffer = {loan_getbuffer, loan_releasebuffer};
static PyTypeObject loan_type = {PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bench.Loan",
                                 .tp_basicsize = sizeof(loan_object),
                                 .tp_as_buffer = &loan_as_buffer,
                                 .tp_flags = Py_TPFLAGS_DEFAULT};

static void bulk_to_py_exporter(size_t len, unsigned long n) {
  PyObject *first = get("first");
  check(PyType_Ready(&loan_type) == 0, "PyType_Ready");
  for (unsigned long i = 0; i < n; i++) {
    loan_object *l = PyObject_New(loan_object, &loan_type);
    check(l != NULL, "PyObject_New");
    l->buf = bulk;
    l->len = (Py_ssize_t)len;
    l->exports = 0;
    PyObject *mv = PyMemoryView_FromObject((PyObject *)l);
    check(mv != NULL, "PyMemoryView_FromObject");
    PyObject *r = call1(first, mv);
    check(r != NULL && PyLong_AsLong(r) == 7, "first(v)");
    Py_DECREF(r);
    if (Py_REFCNT(mv) > 1) Py_XDECREF(PyObject_CallMethod(mv, "release", NULL));
    Py_DECREF(mv);
    check(l->exports == 0, "a view Python kept"); /* a host would free the memory later */
    Py_DECREF(l);
  }
}

/* (g2_typed) g(data) -> its first byte: a builtin reading its argument's buffer in
 * place, C-contiguous, as a typed buffer parameter does. */
static PyObject *host_buf(PyObject *self, PyObject *o) {
  (void)self;
  Py_buffer v;
  if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0) return NULL;
  if (!PyBuffer_IsContiguous(&v, 'C')) {
    PyBuffer_Release(&v);
    PyErr_SetString(PyExc_TypeError, "g(data): data must be a contiguous buffer");
    return NULL;
  }
  long b = v.len ? ((const unsigned char *)v.buf)[0] : -1;
  PyBuffer_Release(&v);
  return PyLong_FromLong(b);
}
static PyMethodDef host_buf_def = {"g", host_buf, METH_O, NULL};

/* (g2) Python's buffer read in place through PyObject_GetBuffer. */
static void bulk_from_py(const char *getter, unsigned long n) {
  PyObject *f = get(getter);
  for (unsigned long i = 0; i < n; i++) {
    PyObject *o = call0(f);
    Py_buffer v;
    check(o != NULL && PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) == 0, "get()");
    check(((const unsigned char *)v.buf)[0] == 7, "get()");
    PyBuffer_Release(&v);
    Py_DECREF(o);
  }
}

/* (c): a directly linked builtin, METH_FASTCALL where the runtime has it (3.7+). */
static PyObject *host_g(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self, (void)args, (void)nargs;
  Py_RETURN_NONE;
}
#if PY_VERSION_HEX >= 0x03070000
static PyMethodDef host_g_def = {"g", (PyCFunction)(void (*)(void))host_g, METH_FASTCALL, NULL};
#else
static PyObject *host_g_noargs(PyObject *self, PyObject *unused) {
  return host_g(self, NULL, 0);
}
static PyMethodDef host_g_def = {"g", host_g_noargs, METH_NOARGS, NULL};
#endif

/* (c2, c3): g(i, y) -> i + y as a directly linked builtin does it by hand: the
 * fewest checks a real host needs (the count, the keyword's name, each conversion's
 * error), METH_FASTCALL | METH_KEYWORDS where the runtime has it (3.7+). */
#if PY_VERSION_HEX >= 0x03070000
static PyObject *host_h(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  (void)self;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nkw != 2 ||
      (nkw && !kw_is(PyTuple_GET_ITEM(kwnames, nkw - 1), kw_y, "y")) ||
      (nkw == 2 && !kw_is(PyTuple_GET_ITEM(kwnames, 0), kw_i, "i"))) {
    PyErr_SetString(PyExc_TypeError, "g(i, y): bad arguments");
    return NULL;
  }
  return host_h_finish(args[0], args[1]);
}
static PyMethodDef host_h_def = {"g", (PyCFunction)(void (*)(void))host_h,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
#else
static PyObject *host_h(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"i", "y", NULL};
  PyObject *io, *yo;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO", names, &io, &yo)) return NULL;
  return host_h_finish(io, yo);
}
static PyMethodDef host_h_def = {"g", (PyCFunction)(void (*)(void))host_h,
                                 METH_VARARGS | METH_KEYWORDS, NULL};
#endif

/* (c4): g(s) -> len(s.encode()) as a directly linked builtin does it: the count, the
 * type, the UTF-8 view (the str's own, cached by the runtime), the int made. */
static PyObject *host_s_finish(PyObject *s) {
  Py_ssize_t n;
  if (!PyUnicode_Check(s)) {
    PyErr_SetString(PyExc_TypeError, "g(s): s must be str");
    return NULL;
  }
  if (!PyUnicode_AsUTF8AndSize(s, &n)) return NULL;
  return PyLong_FromSsize_t(n);
}
#if PY_VERSION_HEX >= 0x03070000
static PyObject *host_s(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "g(s): one argument");
    return NULL;
  }
  return host_s_finish(args[0]);
}
static PyMethodDef host_s_def = {"g", (PyCFunction)(void (*)(void))host_s, METH_FASTCALL, NULL};
#else
static PyObject *host_s(PyObject *self, PyObject *s) {
  (void)self;
  return host_s_finish(s);
}
static PyMethodDef host_s_def = {"g", host_s, METH_O, NULL};
#endif

/* (e): a directly linked static type whose instances carry one C pointer. */
typedef struct {
  PyObject_HEAD
  void *payload;
} host_obj;
static PyTypeObject host_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  "bench.T",           /* tp_name */
  sizeof(host_obj),    /* tp_basicsize */
};

/* (e2): T(i) and T.get() -> i as a directly linked static type does them by hand:
 * one int argument (positional or i=), checked and converted, into the object; a
 * METH_NOARGS method. */
typedef struct {
  PyObject_HEAD
  long long value;
} int_obj;
static PyObject *int_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"i", NULL};
  long long v;
  if (!kwargs && PyTuple_GET_SIZE(args) == 1) {
    PyObject *io = PyTuple_GET_ITEM(args, 0);
    if (!PyLong_Check(io)) {
      PyErr_SetString(PyExc_TypeError, "T(i): i must be int");
      return NULL;
    }
    v = PyLong_AsLongLong(io);
    if (v == -1 && PyErr_Occurred()) return NULL;
  } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L", names, &v)) {
    return NULL;
  }
  int_obj *o = (int_obj *)type->tp_alloc(type, 0);
  if (!o) return NULL;
  o->value = v;
  return (PyObject *)o;
}
static PyObject *int_get(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLongLong(((int_obj *)self)->value);
}
static PyMethodDef int_methods[] = {{"get", int_get, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static PyTypeObject int_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  "bench.T",           /* tp_name */
  sizeof(int_obj),     /* tp_basicsize */
};

static int64_t *list_data;

/* (f2, f3): ident(x), the fastest call the runtime offers, and a str's UTF-8 in place. */
static PyObject *call1(PyObject *f, PyObject *arg) {
#if PY_VERSION_HEX >= 0x03090000
  return PyObject_Vectorcall(f, &arg, 1, NULL);
#elif PY_VERSION_HEX >= 0x03080000
  return _PyObject_Vectorcall(f, &arg, 1, NULL);
#else
  return PyObject_CallFunctionObjArgs(f, arg, NULL);
#endif
}
static void read_str(PyObject *r, size_t len) {
  Py_ssize_t got = 0;
  const char *back = PyUnicode_AsUTF8AndSize(r, &got);
  check(back && (size_t)got == len && back[len - 1] == str_data[len - 1], "result");
}

/* (d2) for reference: the expression compiled once, evaluated with x = i set in its
 * globals (PyEval_EvalCode), the int read: less work than a call, as no frame takes an
 * argument. */
static void loop_expr_eval(unsigned long n) {
  static PyObject *code;
  if (!code) check((code = Py_CompileString(BENCH_EXPR, "<eval>", Py_eval_input)) != NULL, "compile");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLong((long)(i & 0xffff));
    check(x && PyDict_SetItemString(expr_globals(), "x", x) == 0, "x");
    Py_DECREF(x);
    PyObject *r = PyEval_EvalCode(code, expr_globals(), expr_globals());
    check(r != NULL, "eval");
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    check(v == (long)(i & 0xffff) * 2 + 1, "result");
  }
}

/* (b3): f(x, y=y), the keyword's name in a tuple made once (vectorcall, 3.8+). */
static PyObject *call_kw(PyObject *f, PyObject *x, PyObject *y) {
#if PY_VERSION_HEX >= 0x03080000
  static PyObject *kwnames;
  if (!kwnames) check((kwnames = PyTuple_Pack(1, kw_y)) != NULL, "kwnames");
  PyObject *args[2] = {x, y};
#  if PY_VERSION_HEX >= 0x03090000
  return PyObject_Vectorcall(f, args, 1, kwnames);
#  else
  return _PyObject_Vectorcall(f, args, 1, kwnames);
#  endif
#else
  return call_kw_dict(f, x, y);
#endif
}

/* The measured loop of each mode (callgrind --toggle-collect=bench_loop). */
static BENCH_NOINLINE void bench_loop(const char *mode, unsigned long n) {
  if (!strcmp(mode, "call") || !strcmp(mode, "call_gil")) {
    /* (b): the trivial Python function, called the fastest way the runtime offers;
     * (h2) the same with the GIL taken and given back around each call (it is not
     * held here): the bare PyGILState pair */
    int gil = !strcmp(mode, "call_gil");
    PyObject *f = NULL;
    if (gil) {
      PyGILState_STATE g = PyGILState_Ensure();
      f = get("f");
      PyGILState_Release(g);
    } else {
      f = get("f");
    }
    for (unsigned long i = 0; i < n; i++) {
      PyGILState_STATE g = gil ? PyGILState_Ensure() : PyGILState_UNLOCKED;
#if PY_VERSION_HEX >= 0x03090000
      PyObject *r = PyObject_Vectorcall(f, NULL, 0, NULL);
#elif PY_VERSION_HEX >= 0x03080000
      PyObject *r = _PyObject_Vectorcall(f, NULL, 0, NULL);
#else
      PyObject *r = PyObject_CallObject(f, NULL);
#endif
      check(r != NULL, "f()");
      Py_DECREF(r);
      if (gil) PyGILState_Release(g);
    }
  } else if (!strcmp(mode, "call2")) {
    /* (b2): f2(a, b) with two C ints, the int result read: what a host must do */
    PyObject *f = get("f2");
    for (unsigned long i = 0; i < n; i++) {
      PyObject *args[2] = {PyLong_FromLong((long)(i & 0xffff)), PyLong_FromLong(2)};
      check(args[0] && args[1], "f2 arguments");
#if PY_VERSION_HEX >= 0x03090000
      PyObject *r = PyObject_Vectorcall(f, args, 2, NULL);
#elif PY_VERSION_HEX >= 0x03080000
      PyObject *r = _PyObject_Vectorcall(f, args, 2, NULL);
#else
      PyObject *r = PyObject_CallFunctionObjArgs(f, args[0], args[1], NULL);
#endif
      Py_DECREF(args[0]);
      Py_DECREF(args[1]);
      check(r != NULL, "f2()");
      long v = PyLong_AsLong(r);
      Py_DECREF(r);
      check(v == (long)(i & 0xffff) + 2, "f2() result");
    }
  } else if (!strcmp(mode, "call_kw")) {
    loop_call_kw(n, call_kw);
  } else if (!strcmp(mode, "hostfn") || !strcmp(mode, "hosttype")) {
    run_loop(BENCH_LOOP_CALL_PY, n);
  } else if (!strcmp(mode, "loop_empty")) {
    run_loop(BENCH_LOOP_EMPTY_PY, n);
  } else if (!strcmp(mode, "eval_code")) {
    /* the physical limit for (d): code compiled once, evaluated n times */
    static PyObject *code;
    if (!code) check((code = Py_CompileString(BENCH_EXPR, "<eval>", Py_eval_input)) != NULL, "compile");
    for (unsigned long i = 0; i < n; i++) Py_DECREF(eval_expr(code));
  } else if (!strcmp(mode, "expr_inputs")) {
    loop_expr_inputs(n, call1);
  } else if (!strcmp(mode, "expr_eval")) {
    loop_expr_eval(n);
  } else if (!strcmp(mode, "str_trip") || !strcmp(mode, "bytes_trip")) {
    loop_trip(mode[0] == 's', n, call1, read_str);
  } else if (!strcmp(mode, "eval_compile")) {
    /* what pyhost_eval did before its cache: compile, then evaluate, every time */
    for (unsigned long i = 0; i < n; i++) {
      PyObject *code = Py_CompileString(BENCH_EXPR, "<eval>", Py_eval_input);
      check(code != NULL, "compile");
      Py_DECREF(eval_expr(code));
      Py_DECREF(code);
    }
  } else if (!strcmp(mode, "gil_ensure")) {
    /* the price a call pays for taking the GIL itself (it is not held here) */
    for (unsigned long i = 0; i < n; i++) PyGILState_Release(PyGILState_Ensure());
  } else if (!strcmp(mode, "conv_str_to_py")) {
    str_to_py(str_data, BENCH_STR_BYTES, n);
  } else if (!strcmp(mode, "conv_str_from_py")) {
    str_from_py(n);
  } else if (!strcmp(mode, "conv_list_to_py")) {
    list_to_py(list_data, BENCH_LIST_LEN, n);
  } else if (!strcmp(mode, "conv_list_from_py")) {
    list_from_py(n);
  } else if (!strcmp(mode, "g1_small") || !strcmp(mode, "g1_large")) {
    bulk_to_py(mode[3] == 's' ? BENCH_BULK_SMALL : BENCH_BULK_LARGE, n);
  } else if (!strcmp(mode, "g1_exporter_small") || !strcmp(mode, "g1_exporter_large")) {
    bulk_to_py_exporter(mode[12] == 's' ? BENCH_BULK_SMALL : BENCH_BULK_LARGE, n);
  } else if (!strcmp(mode, "g2_typed")) {
    run_loop(BENCH_LOOP_BUF_PY, n);
  } else if (!strcmp(mode, "g2_small") || !strcmp(mode, "g2_large") || !strcmp(mode, "g2_numpy")) {
    bulk_from_py(mode[3] == 's' ? "get_small" : mode[3] == 'l' ? "get_big" : "get_np", n);
  } else if (!run_loop_mode(mode, n)) {
    bench_die(mode, "unknown mode");
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: bench_direct MODE N\n");
    return 2;
  }
  const char *mode = argv[1];
  unsigned long n = bench_count(argv[2]);
  double t0 = bench_now();
  start_python();
  if (!strcmp(mode, "startup")) {
    Py_FinalizeEx();
    bench_result("startup_inproc", bench_now() - t0, 1);
    return 0;
  }
  set_up_main();
  list_data = malloc(sizeof *list_data * BENCH_LIST_LEN);
  for (unsigned i = 0; i < BENCH_LIST_LEN; i++) list_data[i] = i;
  if (!strncmp(mode, "g1", 2) || !strncmp(mode, "g2", 2)) {
    run(BENCH_BULK_PY);
    check((bulk = calloc(1, BENCH_BULK_LARGE)) != NULL, "calloc");
    bulk[0] = 7;
  }
  if (!strcmp(mode, "hostfn")) bind_g(PyCFunction_New(&host_g_def, NULL));
  if (!strncmp(mode, "hostfn2", 7)) bind_g(PyCFunction_New(&host_h_def, NULL));
  if (!strcmp(mode, "hostfn_str")) bind_g(PyCFunction_New(&host_s_def, NULL));
  if (!strcmp(mode, "g2_typed")) bind_g(PyCFunction_New(&host_buf_def, NULL));
  if (!strcmp(mode, "hosttype")) {
    host_type.tp_new = PyType_GenericNew;
    check(PyType_Ready(&host_type) == 0, "PyType_Ready");
    Py_INCREF(&host_type);
    bind_g((PyObject *)&host_type);
  }
  if (!strcmp(mode, "hosttype2")) {
    int_type.tp_new = int_new;
    int_type.tp_methods = int_methods;
    check(PyType_Ready(&int_type) == 0, "PyType_Ready");
    Py_INCREF(&int_type);
    bind_g((PyObject *)&int_type);
  }
  int release = !strcmp(mode, "gil_ensure") || !strcmp(mode, "call_gil");
  PyThreadState *ts = release ? PyEval_SaveThread() : NULL;
  bench_loop(mode, n / 10 + 1);
  t0 = bench_now();
  bench_loop(mode, n);
  double t = bench_now() - t0;
  bench_result(mode, t, n);
  if (release) PyEval_RestoreThread(ts);
  free(str_data);
  free(list_data);
  Py_FinalizeEx();
  return 0;
}
