// bench_cpp.cpp: the C++ layer (include/pyhost.hpp) against the C route it wraps.
// `bench_cpp MODE N LIB`; bench/run_cpp.py counts the instructions of bench_loop under
// callgrind for each mode.
//
// The typed routes (rows cpp-b2 ... cpp-f2): each cpp_* mode does what the bench_pyhost
// mode of the same name without "cpp_" does through the C API (the C typed route of
// run.py's row), on the same set-up (BENCH_SETUP_PY, the same Python loop, the GIL held
// by a scope) and the same static library, so that run_cpp.py sets them side by side
// and beside the direct host (bench_direct_<tag>):
//   cpp_call2        f2(i & 0xffff, 2) -> int64_t          (call2_args: pyhost_prepared_call_int)
//   cpp_call_kw      fk(i & 0xffff, y=2.5) -> double        (call_kw_plan: a keyword plan,
//                    pyhost_prepare_keywords once + pyhost_prepared_call_float)
//   cpp_hostfn2      Python g(i, 2.5), g from a lambda with pyh::arg names (hostfn2)
//   cpp_hostfn2_kw   Python g(i, y=2.5), the same g (hostfn2_kw)
//   cpp_hosttype2    Python g(i).get(), a class with init<int64_t>(pyh::arg("i")) (hosttype2)
//   cpp_str_trip     ident(s) of a 10 000-character string_view, the result a borrowed
//                    std::string_view (str_trip: "z>s"; the C++ layer reads it through
//                    pyhost_prepared_call_str)
//   loop_fn_empty    the Python loop alone, to net the loops out
//
// The fast forms, for reference (a C mode here and a C++ mode each):
//   c_call / cpp_call          C -> Python: f(i, 2) -> int, a prepared call with a typed
//                              result in a GIL scope (pyhost_prepared_call_int /
//                              function::call<int64_t>)
//   c_hostfn / cpp_hostfn      Python -> C: h(i, 2.5) -> float, a fast host function
//                              (pyhost_args_* + pyhost_ret_float / module::def of a lambda)
//   c_hosttype / cpp_hosttype  Python -> C: T(i).get(), a fast host type with an inline
//                              payload (fast constructor + method / class_builder<T>)
// The Python loops run inside a function, where hot Python code lives.  The C side does
// what the C++ layer does for the caller, so that both do the same job: it refuses
// surplus positional arguments and keywords with a TypeError (the C++ layer checks the
// count for every function it wraps).
#include <pyhost.hpp>

extern "C" {
#include "bench.h"
}

#include <memory>
#include <string>

using namespace pyh::literals;

static pyhost *h;

static void check(int rc, const char *what) {
  if (rc != PYHOST_OK) bench_die(what, pyhost_errmsg(h));
}

// ---- the C routes ----
static int c_refuse_surplus(pyhost *py, const pyhost_args *args, size_t n, const char *name) {
  if (pyhost_args_count(args) > n || pyhost_args_kwcount(args) > 0)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "%s() takes %zu arguments", name, n);
  return PYHOST_OK;
}
static int c_h(pyhost *py, void *, const pyhost_args *args, pyhost_ret *ret) {
  int64_t i;
  double x;
  int rc;
  if ((rc = c_refuse_surplus(py, args, 2, "g")) || (rc = pyhost_args_int(py, args, 0, &i)) || (rc = pyhost_args_float(py, args, 1, &x))) return rc;
  return pyhost_ret_float(py, ret, static_cast<double>(i) * x);
}
struct c_payload {
  int64_t v;
};
static int c_new(pyhost *py, void *, const pyhost_args *args, void **payload) {
  if (int rc = c_refuse_surplus(py, args, 1, "T")) return rc;
  return pyhost_args_int(py, args, 0, &static_cast<c_payload *>(*payload)->v);
}
static int c_get(pyhost *py, void *payload, void *, const pyhost_args *args, pyhost_ret *ret) {
  if (int rc = c_refuse_surplus(py, args, 0, "get")) return rc;
  return pyhost_ret_int(py, ret, static_cast<c_payload *>(payload)->v);
}
static void c_free(void *, void *) {}

// ---- the C++ side ----
struct Box {
  int64_t v;
  explicit Box(int64_t x) : v(x) {}
  int64_t get() const { return v; }
};

static std::unique_ptr<pyh::function> cpp_f;
static pyhost_callable *c_f;
static std::string trip;  // (cpp_str_trip) the C data sent

// Runs one of bench.h's Python loops with n as its count (bench_pyhost's run_loop).
static void run_loop(pyh::interpreter &py, const char *src, unsigned long n) {
  py.set_global("n", static_cast<int64_t>(n));
  py.exec(src, "<bench>");
}

static BENCH_NOINLINE void bench_loop_typed(pyh::interpreter &py, const std::string &mode, unsigned long n) {
  if (mode == "cpp_call2") {
    for (unsigned long i = 0; i < n; i++) {
      int64_t r = cpp_f->call<int64_t>(static_cast<int64_t>(i & 0xffff), 2);
      if (r != static_cast<int64_t>(i & 0xffff) + 2) bench_die("f2()", "wrong result");
    }
  } else if (mode == "cpp_call_kw") {
    for (unsigned long i = 0; i < n; i++) {
      double r = cpp_f->call<double>(static_cast<int64_t>(i & 0xffff), "y"_kw = 2.5);
      if (r != static_cast<double>(i & 0xffff) + 2.5) bench_die("fk()", "wrong result");
    }
  } else if (mode == "cpp_str_trip") {
    for (unsigned long i = 0; i < n; i++) {
      std::string_view back = cpp_f->call<std::string_view>(std::string_view(trip));
      if (back.size() != trip.size() || back.back() != trip.back()) bench_die("ident()", "wrong result");
    }
  } else if (mode == "cpp_hostfn2") {
    run_loop(py, BENCH_LOOP_ARGS_PY, n);
  } else if (mode == "cpp_hostfn2_kw") {
    run_loop(py, BENCH_LOOP_KW_PY, n);
  } else if (mode == "cpp_hosttype2") {
    run_loop(py, BENCH_LOOP_OBJ_PY, n);
  } else if (mode == "loop_fn_empty") {
    run_loop(py, BENCH_LOOP_FN_EMPTY_PY, n);
  } else {
    bench_die(mode.c_str(), "unknown mode");
  }
}

// The typed modes: bench_pyhost's set-up, in C++.
static void typed_main(pyh::interpreter &py, const std::string &mode, unsigned long n) {
  py.exec(BENCH_SETUP_PY, "<bench>");
  auto m = py.module("pyhost_bench");
  std::unique_ptr<pyh::type<Box>> box;
  if (mode == "cpp_call2") {
    cpp_f.reset(new pyh::function(py.function("f2")));
  } else if (mode == "cpp_call_kw") {
    cpp_f.reset(new pyh::function(py.function("fk")));
  } else if (mode == "cpp_str_trip") {
    cpp_f.reset(new pyh::function(py.function("ident")));
    for (unsigned i = 0; i < BENCH_TRIP_STR; i++) trip += "0123456789abcdef"[i % 16];
  } else if (mode.find("hostfn2") != std::string::npos) {
    m.def("g", [](int64_t i, double y) { return static_cast<double>(i) + y; }, pyh::arg("i"), pyh::arg("y"));
    py.exec("from pyhost_bench import g");
  } else if (mode == "cpp_hosttype2") {
    box.reset(new pyh::type<Box>(m.type<Box>("T").init<int64_t>(pyh::arg("i")).def_typed("get", &Box::get).make()));
    py.set_global("g", box->object());
  }
  pyh::gil_guard gil(py);  // as bench_pyhost holds it for these modes
  bench_loop_typed(py, mode, n / 10 + 1);
  double t0 = bench_now();
  bench_loop_typed(py, mode, n);
  bench_result(mode.c_str(), bench_now() - t0, n);
  cpp_f.reset();
}

static BENCH_NOINLINE void bench_loop(const std::string &mode, unsigned long n) {
  if (mode == "c_call") {
    pyh::gil_guard gil(h);  // as a hot loop holds it (docs/calling.md); so does cpp_call
    for (unsigned long i = 0; i < n; i++) {
      pyhost_arg argv[2] = {pyhost_arg_int(static_cast<int64_t>(i)), pyhost_arg_int(2)};
      int64_t r;
      check(pyhost_prepared_call_int(h, c_f, argv, 2, &r), "f(i, 2)");
    }
  } else if (mode == "cpp_call") {
    pyh::gil_guard gil(h);
    for (unsigned long i = 0; i < n; i++) cpp_f->call<int64_t>(static_cast<int64_t>(i), 2);
  } else {  // the Python-driven modes
    pyhost_arg count = pyhost_arg_int(static_cast<int64_t>(n));
    pyhost_callable *run = nullptr;
    check(pyhost_prepare_name(h, mode.find("hosttype") != std::string::npos ? "run_type" : "run_fn", &run), "run");
    check(pyhost_prepared_call(h, run, &count, 1), mode.c_str());
    pyhost_callable_free(run);
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bench_cpp MODE N LIB\n");
    return 2;
  }
  std::string mode = argv[1];
  unsigned long n = bench_count(argv[2]);
  try {
    pyh::interpreter py(argv[3]);
    h = py;
    if (mode.find("2") != std::string::npos || mode == "cpp_call_kw" || mode == "cpp_str_trip" ||
        mode == "loop_fn_empty") {
      typed_main(py, mode, n);
      return 0;
    }
    py.exec("def f(a, b):\n    return a + b\n"
            "def run_fn(n):\n    for i in range(n):\n        g(i, 2.5)\n"
            "def run_type(n):\n    for i in range(n):\n        T(i).get()\n"
            "import gc\ngc.collect()\n");
    auto m = py.module("pyhost_bench");
    std::unique_ptr<pyh::type<Box>> box;
    pyhost_type *ctype = nullptr;
    if (mode == "c_call" || mode == "cpp_call") {
      check(pyhost_prepare_name(h, "f", &c_f), "prepare f");
      cpp_f.reset(new pyh::function(py.function("f")));
    } else if (mode == "c_hostfn") {
      check(pyhost_module_add_fast_function(h, m.get(), "g", c_h, nullptr, nullptr), "g");
      py.exec("from pyhost_bench import g");
    } else if (mode == "cpp_hostfn") {
      m.def("g", [](int64_t i, double x) { return static_cast<double>(i) * x; });
      py.exec("from pyhost_bench import g");
    } else if (mode == "c_hosttype") {
      static const pyhost_fast_method_def methods[] = {{"get", c_get, nullptr}};
      pyhost_type_spec spec = {};
      spec.size = sizeof spec;
      spec.name = "T";
      spec.fast_methods = methods;
      spec.n_fast_methods = 1;
      spec.fast_constructor = c_new;
      spec.destructor = c_free;  // the C++ layer always has one: so does the C route
      spec.payload_size = sizeof(c_payload) + sizeof(bool) * 8;  // the same size as Box's slot
      spec.flags = PYHOST_TYPE_WEAKREF;
      check(pyhost_type_new(h, m.get(), &spec, &ctype), "T");
      py.exec("from pyhost_bench import T");
    } else if (mode == "cpp_hosttype") {
      box.reset(new pyh::type<Box>(m.type<Box>("T").init<int64_t>().def("get", &Box::get).make()));
      py.exec("from pyhost_bench import T");
    } else {
      bench_die(mode.c_str(), "unknown mode");
    }
    bench_loop(mode, n / 10 + 1);
    double t0 = bench_now();
    bench_loop(mode, n);
    bench_result(mode.c_str(), bench_now() - t0, n);
    cpp_f.reset();
    pyhost_callable_free(c_f);
    pyhost_type_free(h, ctype);
  } catch (const std::exception &e) {
    bench_die(mode.c_str(), e.what());
  }
  return 0;
}
