/* bench_capi.h: what the two hand-written C-API hosts share, bench_direct.c (the full
 * API) and bench_abi3.c (the stable ABI of its runtime's version): code that compiles
 * the same under both, so that the two baselines differ only where the APIs do. */
#ifndef PYHOST_BENCH_CAPI_H
#define PYHOST_BENCH_CAPI_H

#include <wchar.h>

#include "bench.h"

static PyObject *main_dict;
static char *str_data; /* BENCH_STR_BYTES of text, for the conversions and round trips */

static void check(int ok, const char *what) {
  if (!ok) {
    PyErr_Print();
    bench_die(what, "Python raised");
  }
}

static PyObject *get(const char *name) {
  PyObject *o = PyDict_GetItemString(main_dict, name);
  if (!o) bench_die(name, "missing from __main__");
  return o;
}

static void run(const char *src) {
  PyObject *code = Py_CompileString(src, "<bench>", Py_file_input);
  check(code != NULL, src);
  PyObject *r = PyEval_EvalCode(code, main_dict, main_dict);
  check(r != NULL, src);
  Py_DECREF(r);
  Py_DECREF(code);
}

static void run_loop(const char *src, unsigned long n) {
  PyObject *count = PyLong_FromUnsignedLong(n);
  check(count && PyDict_SetItemString(main_dict, "n", count) == 0, "n");
  Py_DECREF(count);
  run(src);
}

/* Starts the runtime with the home pyhost gives it too: neither side searches for its
 * prefix (the text converted by hand: Py_DecodeLocale is stable only from 3.7). */
static void start_python(void) {
#ifdef BENCH_PYTHON_HOME
  static wchar_t home[4096];
  size_t len = mbstowcs(home, BENCH_PYTHON_HOME, sizeof home / sizeof *home);
  if (len == (size_t)-1 || len == sizeof home / sizeof *home) bench_die("home", "too long");
  Py_SetPythonHome(home);
#endif
  Py_InitializeEx(0);
}

/* (c3): the interned names of g's parameters (set_up_main): a keyword's name is
 * matched as CPython's own argument parsing matches it (find_keyword in getargs.c), by
 * identity with the interned name first, by value only when that fails. */
static PyObject *kw_i, *kw_y;
static inline int kw_is(PyObject *name, PyObject *interned, const char *text) {
  return name == interned || PyUnicode_CompareWithASCIIString(name, text) == 0;
}

/* After start_python: __main__, the shared Python set-up, str_data. */
static void set_up_main(void) {
  main_dict = PyModule_GetDict(PyImport_AddModule("__main__"));
  run(BENCH_SETUP_PY);
  kw_i = PyUnicode_InternFromString("i");
  kw_y = PyUnicode_InternFromString("y");
  if (!kw_i || !kw_y) bench_die("PyUnicode_InternFromString", NULL);
  str_data = malloc(BENCH_STR_BYTES);
  if (!str_data) bench_die("malloc", NULL);
  for (unsigned i = 0; i < BENCH_STR_BYTES; i++) str_data[i] = "0123456789abcdef"[i % 16];
}

/* The Python-driven modes with arguments: 1 when mode is one of them (and ran). */
static int run_loop_mode(const char *mode, unsigned long n) {
  const char *src = !strcmp(mode, "hostfn2")         ? BENCH_LOOP_ARGS_PY
                    : !strcmp(mode, "hostfn2_kw")    ? BENCH_LOOP_KW_PY
                    : !strcmp(mode, "hosttype2")     ? BENCH_LOOP_OBJ_PY
                    : !strcmp(mode, "hostfn_str")    ? BENCH_LOOP_STR_PY
                    : !strcmp(mode, "loop_fn_empty") ? BENCH_LOOP_FN_EMPTY_PY
                                                     : NULL;
  if (src) run_loop(src, n);
  return src != NULL;
}

static void bind_g(PyObject *g) {
  check(g != NULL && PyDict_SetItemString(main_dict, "g", g) == 0, "binding g");
  Py_DECREF(g);
}

/* (c2, c3): the end of g(i, y) -> i + y once the arguments are found. */
static PyObject *host_h_finish(PyObject *io, PyObject *yo) {
  long long i = PyLong_AsLongLong(io);
  if (i == -1 && PyErr_Occurred()) return NULL;
  double y = PyFloat_AsDouble(yo);
  if (y == -1.0 && PyErr_Occurred()) return NULL;
  return PyFloat_FromDouble((double)i + y);
}

/* (b3): fk(i, y=2.5) -> float, y by keyword: callkw is the host's fastest such call,
 * its keyword's name made once and interned (kw_y), as CPython's callers pass names. */
static void loop_call_kw(unsigned long n, PyObject *(*callkw)(PyObject *, PyObject *, PyObject *)) {
  PyObject *f = get("fk");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLong((long)(i & 0xffff)), *y = PyFloat_FromDouble(2.5);
    check(x && y, "fk arguments");
    PyObject *r = callkw(f, x, y);
    Py_DECREF(x);
    Py_DECREF(y);
    check(r != NULL, "fk()");
    double v = PyFloat_AsDouble(r);
    Py_DECREF(r);
    check(v == (double)(i & 0xffff) + 2.5, "fk() result");
  }
}

/* (b3) where there is no vectorcall: f(x, y=y) with an argument tuple and a dict. */
static inline PyObject *call_kw_dict(PyObject *f, PyObject *x, PyObject *y) {
  PyObject *args = PyTuple_Pack(1, x), *kw = PyDict_New(), *r = NULL;
  if (args && kw && PyDict_SetItem(kw, kw_y, y) == 0) r = PyObject_Call(f, args, kw);
  Py_XDECREF(args);
  Py_XDECREF(kw);
  return r;
}

/* (d2): the expression's own globals: a dict holding only __builtins__. */
static PyObject *expr_globals(void) {
  static PyObject *globals;
  if (!globals)
    check((globals = PyDict_New()) != NULL &&
              PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0,
          "globals");
  return globals;
}

/* (d2): what pyhost runs for an expression with input x, done by hand: the expression
 * compiled once as `lambda x: (EXPR)`, the function called with x = i (call1, the
 * host's fastest call with one argument), the int read. */
static void loop_expr_inputs(unsigned long n, PyObject *(*call1)(PyObject *, PyObject *)) {
  static PyObject *fn;
  if (!fn) {
    PyObject *code = Py_CompileString("lambda x: (" BENCH_EXPR "\n)", "<eval>", Py_eval_input);
    check(code != NULL, "compile");
    check((fn = PyEval_EvalCode(code, expr_globals(), expr_globals())) != NULL, "lambda");
    Py_DECREF(code);
  }
  for (unsigned long i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLong((long)(i & 0xffff));
    check(x != NULL, "x");
    PyObject *r = call1(fn, x);
    Py_DECREF(x);
    check(r != NULL, "call");
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    check(v == (long)(i & 0xffff) * 2 + 1, "result");
  }
}

/* (f2, f3): C data to Python and back through ident(), read in place: call1 is the
 * host's call with one argument, read_str its way to a str's UTF-8 (bytes are read
 * with PyBytes_AsStringAndSize on both). */
static inline void loop_trip(int str, unsigned long n, PyObject *(*call1)(PyObject *, PyObject *),
                             void (*read_str)(PyObject *, size_t)) {
  size_t len = str ? BENCH_TRIP_STR : BENCH_TRIP_BYTES;
  PyObject *f = get("ident");
  for (unsigned long i = 0; i < n; i++) {
    PyObject *arg = str ? PyUnicode_FromStringAndSize(str_data, (Py_ssize_t)len)
                        : PyBytes_FromStringAndSize(str_data, (Py_ssize_t)len);
    check(arg != NULL, "argument");
    PyObject *r = call1(f, arg);
    Py_DECREF(arg);
    check(r != NULL, "ident()");
    if (str) {
      read_str(r, len);
    } else {
      char *back = NULL;
      Py_ssize_t got = 0;
      check(PyBytes_AsStringAndSize(r, &back, &got) == 0 && (size_t)got == len &&
                back[len - 1] == str_data[len - 1],
            "result");
    }
    Py_DECREF(r);
  }
}

#endif
