/* bench_abi3.c: the best the stable ABI allows, the ceiling pyhost is measured against
 * on runtimes where the full API has more (issue 24: "within 1.10x of the best the
 * stable ABI of that version allows").  A host written by hand, linked directly against
 * one libpython like bench_direct, but compiled with Py_LIMITED_API set to that very
 * runtime's version: it may use everything the stable ABI of that version has, and
 * nothing else.  `bench_abi3 MODE N`; the modes are the rows with arguments.
 *
 * Each mode takes the fastest stable route of its version:
 * - calls with arguments: PyObject_Vectorcall from 3.12; before it,
 *   PyObject_CallFunctionObjArgs, which CPython (3.6+) forwards as a C array to the
 *   callee's fast call, so no argument tuple is built for a Python function;
 * - builtins: METH_FASTCALL | METH_KEYWORDS from 3.10 (stable then), METH_VARARGS |
 *   METH_KEYWORDS before, parsed by hand;
 * - types: PyType_FromSpec (no static types in the limited API), a METH_NOARGS method;
 * - str results: PyUnicode_AsUTF8AndSize from 3.10; before it, PyUnicode_AsUTF8String
 *   (a bytes copy), the only UTF-8 view the stable ABI has there;
 * - Py_DECREF is whatever the limited headers of the version make of it (inline before
 *   3.12, a call of _Py_DecRef from 3.12). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "bench_capi.h"

#if !defined(Py_LIMITED_API)
#  error "bench_abi3.c is compiled with Py_LIMITED_API set to its runtime's version"
#endif

/* f(a0) or f(a0, a1): the fastest stable call with these arguments. */
static PyObject *call1(PyObject *f, PyObject *a0) {
#if Py_LIMITED_API >= 0x030C0000
  return PyObject_Vectorcall(f, &a0, 1, NULL);
#else
  return PyObject_CallFunctionObjArgs(f, a0, NULL);
#endif
}
static PyObject *call2(PyObject *f, PyObject *a0, PyObject *a1) {
#if Py_LIMITED_API >= 0x030C0000
  PyObject *args[2] = {a0, a1};
  return PyObject_Vectorcall(f, args, 2, NULL);
#else
  return PyObject_CallFunctionObjArgs(f, a0, a1, NULL);
#endif
}

/* (b3): f(x, y=y): vectorcall with a tuple of names made once from 3.12, before it a
 * tuple and a dict per call, the stable ABI's only call with keywords. */
static PyObject *call_kw(PyObject *f, PyObject *x, PyObject *y) {
#if Py_LIMITED_API >= 0x030C0000
  static PyObject *kwnames;
  if (!kwnames) check((kwnames = PyTuple_Pack(1, kw_y)) != NULL, "kwnames");
  PyObject *args[2] = {x, y};
  return PyObject_Vectorcall(f, args, 1, kwnames);
#else
  return call_kw_dict(f, x, y);
#endif
}

/* (c2, c3): g(i, y) by hand: the count, the keyword's name. */
static PyObject *bad_arguments(void) {
  PyErr_SetString(PyExc_TypeError, "g(i, y): bad arguments");
  return NULL;
}
#if Py_LIMITED_API >= 0x030A0000
static PyObject *host_h(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames) {
  (void)self;
  Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
  if (nargs + nkw != 2 ||
      (nkw && !kw_is(PyTuple_GetItem(kwnames, nkw - 1), kw_y, "y")) ||
      (nkw == 2 && !kw_is(PyTuple_GetItem(kwnames, 0), kw_i, "i")))
    return bad_arguments();
  return host_h_finish(args[0], args[1]);
}
static PyMethodDef host_h_def = {"g", (PyCFunction)(void (*)(void))host_h,
                                 METH_FASTCALL | METH_KEYWORDS, NULL};
#else
static PyObject *host_h(PyObject *self, PyObject *args, PyObject *kwargs) {
  (void)self;
  Py_ssize_t n = PyTuple_Size(args), nkw = kwargs ? PyDict_Size(kwargs) : 0;
  if (n + nkw != 2) return bad_arguments();
  PyObject *io = n > 0 ? PyTuple_GetItem(args, 0) : PyDict_GetItemString(kwargs, "i");
  PyObject *yo = n > 1 ? PyTuple_GetItem(args, 1) : PyDict_GetItemString(kwargs, "y");
  if (!io || !yo) return bad_arguments();
  return host_h_finish(io, yo);
}
static PyMethodDef host_h_def = {"g", (PyCFunction)(void (*)(void))host_h,
                                 METH_VARARGS | METH_KEYWORDS, NULL};
#endif

/* (e2): T(i) and T.get() -> i: a type from a spec, its one int argument checked and
 * converted by hand into the object, a METH_NOARGS method. */
typedef struct {
  PyObject_HEAD
  long long value;
} int_obj;
static PyObject *int_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *io = NULL;
  if (!kwargs && PyTuple_Size(args) == 1) io = PyTuple_GetItem(args, 0);
  else if (kwargs && PyTuple_Size(args) == 0 && PyDict_Size(kwargs) == 1)
    io = PyDict_GetItemString(kwargs, "i");
  if (!io || !PyLong_Check(io)) {
    PyErr_SetString(PyExc_TypeError, "T(i): i must be int");
    return NULL;
  }
  long long v = PyLong_AsLongLong(io);
  if (v == -1 && PyErr_Occurred()) return NULL;
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  int_obj *o = (int_obj *)alloc(type, 0);
  if (!o) return NULL;
  o->value = v;
  return (PyObject *)o;
}
static PyObject *int_get(PyObject *self, PyObject *unused) {
  (void)unused;
  return PyLong_FromLongLong(((int_obj *)self)->value);
}
static PyMethodDef int_methods[] = {{"get", int_get, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static PyType_Slot int_slots[] = {
    {Py_tp_new, (void *)int_new}, {Py_tp_methods, int_methods}, {0, NULL}};
static PyType_Spec int_spec = {"bench.T", sizeof(int_obj), 0, Py_TPFLAGS_DEFAULT, int_slots};

/* (f2) the str result's UTF-8: in place from 3.10, through a bytes copy before. */
static void read_str(PyObject *r, size_t len) {
#if Py_LIMITED_API >= 0x030A0000
  Py_ssize_t got = 0;
  const char *back = PyUnicode_AsUTF8AndSize(r, &got);
  check(back && (size_t)got == len && back[len - 1] == str_data[len - 1], "result");
#else
  PyObject *b = PyUnicode_AsUTF8String(r);
  char *back = NULL;
  Py_ssize_t got = 0;
  check(b && PyBytes_AsStringAndSize(b, &back, &got) == 0 && (size_t)got == len &&
            back[len - 1] == str_data[len - 1],
        "result");
  Py_DECREF(b);
#endif
}

/* The measured loop of each mode (callgrind --toggle-collect=bench_loop). */
static BENCH_NOINLINE void bench_loop(const char *mode, unsigned long n) {
  if (!strcmp(mode, "call2")) {
    PyObject *f = get("f2");
    for (unsigned long i = 0; i < n; i++) {
      PyObject *a = PyLong_FromLong((long)(i & 0xffff)), *b = PyLong_FromLong(2);
      check(a && b, "f2 arguments");
      PyObject *r = call2(f, a, b);
      Py_DECREF(a);
      Py_DECREF(b);
      check(r != NULL, "f2()");
      long v = PyLong_AsLong(r);
      Py_DECREF(r);
      check(v == (long)(i & 0xffff) + 2, "f2() result");
    }
  } else if (!strcmp(mode, "call_kw")) {
    loop_call_kw(n, call_kw);
  } else if (!strcmp(mode, "expr_inputs")) {
    loop_expr_inputs(n, call1);
  } else if (!strcmp(mode, "str_trip") || !strcmp(mode, "bytes_trip")) {
    loop_trip(mode[0] == 's', n, call1, read_str);
  } else if (!run_loop_mode(mode, n)) {
    bench_die(mode, "unknown mode");
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: bench_abi3 MODE N\n");
    return 2;
  }
  const char *mode = argv[1];
  unsigned long n = bench_count(argv[2]);
  start_python();
  set_up_main();
  if (!strncmp(mode, "hostfn2", 7)) bind_g(PyCFunction_NewEx(&host_h_def, NULL, NULL));
  if (!strcmp(mode, "hosttype2")) bind_g(PyType_FromSpec(&int_spec));
  bench_loop(mode, n / 10 + 1);
  double t0 = bench_now();
  bench_loop(mode, n);
  bench_result(mode, bench_now() - t0, n);
  free(str_data);
  Py_FinalizeEx();
  return 0;
}
