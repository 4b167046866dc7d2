// bench_pybind11.cpp: the C++ peer, pybind11's embedding on Debian's Python 3.11, for
// (b) C->Python calls and (c) Python->C calls.  `bench_pybind11 MODE N`.
// The modes cpp_* are the operations of bench_cpp.cpp (the C++ layer), the same way in
// pybind11: f(i, 2) -> int cast to int64_t, g2(i, 2.5) -> float from a lambda, and
// T2(i).get() on a py::class_, the Python loops inside a function.
#include <pybind11/embed.h>
#include <pybind11/stl.h>

#include <vector>

extern "C" {
#include "bench.h"
}

namespace py = pybind11;

struct Box {
  int64_t v;
  explicit Box(int64_t x) : v(x) {}
  int64_t get() const { return v; }
};

PYBIND11_EMBEDDED_MODULE(pyhost_bench, m) {
  m.def("g", []() {});
  m.def("h", [](int64_t i, double y) { return (double)i + y; }, py::arg("i"), py::arg("y"));
  m.def("g2", [](int64_t i, double x) { return static_cast<double>(i) * x; });
  py::class_<Box>(m, "T2").def(py::init<int64_t>()).def("get", &Box::get);
}

static py::object main_dict; // null until the interpreter runs
static unsigned char *bulk;    // (g1): 64 MiB, bulk[0] == 7
static std::vector<int64_t> list_data; // (g3)

static void run_loop(const char *src, unsigned long n) {
  main_dict["n"] = n;
  py::exec(src, main_dict);
}

// The measured loop of each mode (callgrind --toggle-collect=bench_loop).
static BENCH_NOINLINE void bench_loop(const char *mode, unsigned long n) {
  if (!strcmp(mode, "call")) {
    py::function f = main_dict["f"];
    for (unsigned long i = 0; i < n; i++) f();
  } else if (!strcmp(mode, "cpp_call")) {
    py::function f = main_dict["f2"];
    for (unsigned long i = 0; i < n; i++) f(static_cast<int64_t>(i), 2).cast<int64_t>();
  } else if (!strcmp(mode, "cpp_hostfn") || !strcmp(mode, "cpp_hosttype")) {
    py::function run = main_dict[!strcmp(mode, "cpp_hostfn") ? "run_fn" : "run_type"];
    run(n);
  } else if (!strcmp(mode, "hostfn")) {
    run_loop(BENCH_LOOP_CALL_PY, n);
  } else if (!strcmp(mode, "call2")) {
    py::function f2 = main_dict["f2"];
    for (unsigned long i = 0; i < n; i++)
      if (f2((int)(i & 0xffff), 2).cast<int>() != (int)(i & 0xffff) + 2) bench_die("f2", "wrong");
  } else if (!strcmp(mode, "hostfn2")) {
    run_loop(BENCH_LOOP_ARGS_PY, n);
  } else if (!strcmp(mode, "hostfn2_kw")) {
    run_loop(BENCH_LOOP_KW_PY, n);
  } else if (!strcmp(mode, "hosttype2")) { // (e2): g is T2
    run_loop(BENCH_LOOP_OBJ_PY, n);
  } else if (!strcmp(mode, "loop_fn_empty")) {
    run_loop(BENCH_LOOP_FN_EMPTY_PY, n);
  } else if (!strcmp(mode, "loop_empty")) {
    run_loop(BENCH_LOOP_EMPTY_PY, n);
  } else if (!strcmp(mode, "g1_small") || !strcmp(mode, "g1_large")) {
    // (g1) host memory lent as py::memoryview::from_memory, one element read in Python
    py::function first = main_dict["first"];
    size_t len = mode[3] == 's' ? BENCH_BULK_SMALL : BENCH_BULK_LARGE;
    for (unsigned long i = 0; i < n; i++)
      if (first(py::memoryview::from_memory(bulk, (py::ssize_t)len, true)).cast<int>() != 7)
        bench_die("first(v)", "wrong");
  } else if (!strncmp(mode, "g2_", 3)) {
    // (g2) Python's buffer read in place through py::buffer::request()
    py::function get = main_dict[mode[3] == 's' ? "get_small" : mode[3] == 'l' ? "get_big" : "get_np"];
    for (unsigned long i = 0; i < n; i++) {
      py::buffer b = get();
      py::buffer_info info = b.request();
      if (static_cast<const unsigned char *>(info.ptr)[0] != 7) bench_die("get()", "wrong");
    }
  } else if (!strcmp(mode, "g3_to_py")) {
    // (g3) the list through pybind11's std::vector caster
    py::function keep = main_dict["keep"];
    for (unsigned long i = 0; i < n; i++) keep(py::cast(list_data));
  } else if (!strcmp(mode, "g3_from_py")) {
    py::function get_l = main_dict["get_l"];
    for (unsigned long i = 0; i < n; i++) {
      std::vector<int64_t> v = get_l().cast<std::vector<int64_t>>();
      if (v.size() != BENCH_LIST_LEN) bench_die("get_l()", "wrong");
    }
  } else {
    bench_die(mode, "unknown mode");
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: bench_pybind11 MODE N\n");
    return 2;
  }
  const char *mode = argv[1];
  unsigned long n = bench_count(argv[2]);
  py::scoped_interpreter interpreter;
  main_dict = py::module_::import("__main__").attr("__dict__");
  py::exec(BENCH_SETUP_PY, main_dict);
  main_dict["g"] = py::module_::import("pyhost_bench")
                       .attr(!strncmp(mode, "hostfn2", 7) ? "h" : !strcmp(mode, "hosttype2") ? "T2" : "g");
  py::exec("def f2(a, b):\n    return a + b\n"
           "from pyhost_bench import g2, T2\n"
           "def run_fn(n):\n    for i in range(n):\n        g2(i, 2.5)\n"
           "def run_type(n):\n    for i in range(n):\n        T2(i).get()\n", main_dict);
  if (!strncmp(mode, "g", 1) && mode[1] >= '1' && mode[1] <= '3') {
    py::exec(BENCH_BULK_PY, main_dict);
    bulk = static_cast<unsigned char *>(calloc(1, BENCH_BULK_LARGE));
    if (!bulk) bench_die("calloc", "out of memory");
    bulk[0] = 7;
    for (unsigned i = 0; i < BENCH_LIST_LEN; i++) list_data.push_back(i);
  }
  bench_loop(mode, n / 10 + 1);
  double t0 = bench_now();
  bench_loop(mode, n);
  bench_result(mode, bench_now() - t0, n);
  main_dict.release().dec_ref(); // before the interpreter goes, not at exit
  free(bulk);
  return 0;
}
