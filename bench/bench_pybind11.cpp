// bench_pybind11.cpp: the C++ peer, pybind11's embedding on Debian's Python 3.11, for
// (b) C->Python calls and (c) Python->C calls.  `bench_pybind11 MODE N`.
#include <pybind11/embed.h>

extern "C" {
#include "bench.h"
}

namespace py = pybind11;

PYBIND11_EMBEDDED_MODULE(pyhost_bench, m) {
  m.def("g", []() {});
  m.def("h", [](int64_t i, double y) { return (double)i + y; }, py::arg("i"), py::arg("y"));
}

static py::object main_dict; // null until the interpreter runs

static void run_loop(const char *src, unsigned long n) {
  main_dict["n"] = n;
  py::exec(src, main_dict);
}

// The measured loop of each mode (callgrind --toggle-collect=bench_loop).
static BENCH_NOINLINE void bench_loop(const char *mode, unsigned long n) {
  if (!strcmp(mode, "call")) {
    py::function f = main_dict["f"];
    for (unsigned long i = 0; i < n; i++) f();
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
  } else if (!strcmp(mode, "loop_fn_empty")) {
    run_loop(BENCH_LOOP_FN_EMPTY_PY, n);
  } else if (!strcmp(mode, "loop_empty")) {
    run_loop(BENCH_LOOP_EMPTY_PY, n);
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
  main_dict["g"] = py::module_::import("pyhost_bench").attr(strncmp(mode, "hostfn2", 7) ? "g" : "h");
  bench_loop(mode, n / 10 + 1);
  double t0 = bench_now();
  bench_loop(mode, n);
  bench_result(mode, bench_now() - t0, n);
  main_dict.release().dec_ref(); // before the interpreter goes, not at exit
  return 0;
}
