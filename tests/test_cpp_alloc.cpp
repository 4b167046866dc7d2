// test_cpp_alloc.cpp: the C++ layer's typed routes call libc's allocator no more per call
// than the C typed route they wrap (docs/cpp.md, "Cost").  This program replaces
// malloc, calloc and realloc with counting ones that hand on to glibc's own
// (__libc_malloc and friends), so it runs where glibc is, outside sanitizer builds
// (tests/CMakeLists.txt); each case runs the same N calls through C++ and through the C
// API in one process and compares the counts, so Python's own allocations (all of them
// under PYTHONMALLOC=malloc) count alike on both sides.  Run as `test_cpp_alloc CASE LIB VER`.
extern "C" {
#include "check.h"
}
#include <pyhost.hpp>

#include <atomic>

using namespace pyh::literals;

#if defined(__GLIBC__)
extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);

static std::atomic<long> allocations{0};
extern "C" void *malloc(size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void *calloc(size_t n, size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
extern "C" void *realloc(void *p, size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
#endif

static const long N = 2000;  // calls per side

// Calls of the allocator during f().
template <class F> static long allocations_in(F &&f) {
#if defined(__GLIBC__)
  long before = allocations.load();
  f();
  return allocations.load() - before;
#else
  (void)f;
  SKIP("the allocator is counted through glibc's __libc_malloc");
#endif
}

// The C++ side makes no call of the allocator per call beyond the C side's: a per-call
// allocation would add N.  (A few may come once: a cache filled at the first call.)
static void expect_no_more(const char *route, long cpp, long c) {
  printf("%s: %ld allocations for %ld C++ calls, %ld for %ld C calls\n", route, cpp, N, c, N);
  if (cpp > c + N / 20) {
    fprintf(stderr, "test_cpp_alloc.cpp: %s: the C++ layer allocates per call (%ld against %ld)\n", route, cpp, c);
    check_failures++;
  }
}

static pyh::interpreter start() { return pyh::interpreter(check_lib); }

// Runs `g(...)` N times from a Python function (the loop is compiled before counting).
static long loop_allocations(pyh::interpreter &py, const char *call) {
  py.exec((std::string("def run(n):\n    for i in range(n):\n        ") + call + "\n").c_str());
  py.call<void>("run", 10);  // warm: the first call's caches
  return allocations_in([&] { py.call<void>("run", N); });
}

static int c_g(pyhost *h, void *, const pyhost_arg *argv, pyhost_ret *ret) {
  return pyhost_ret_float(h, ret, static_cast<double>(argv[0].u.i) + argv[1].u.d);
}
static int c_new(pyhost *, void *, const pyhost_arg *argv, void **payload) {
  *static_cast<int64_t *>(*payload) = argv[0].u.i;
  return PYHOST_OK;
}
static int c_get(pyhost *h, void *payload, void *, const pyhost_arg *, pyhost_ret *ret) {
  return pyhost_ret_int(h, ret, *static_cast<int64_t *>(payload));
}
struct Box {
  int64_t v;
  explicit Box(int64_t x) : v(x) {}
  int64_t get() const { return v; }
};

TEST_CASE(python_to_cpp_typed_calls_allocate_nothing) {
  auto py = start();
  auto m = py.module("al");
  m.def("g", [](int64_t i, double y) { return static_cast<double>(i) + y; }, pyh::arg("i"), pyh::arg("y"));
  CHECK(pyhost_module_add_typed_function(py, m.get(), "cg(i: int, y: float)", c_g, nullptr, nullptr) == PYHOST_OK);
  auto box = m.type<Box>("T").init<int64_t>(pyh::arg("i")).def("get", &Box::get).make();
  static const pyhost_typed_method_def get_def[] = {{"get()", c_get, nullptr}};
  pyhost_type_spec spec = {};
  spec.size = sizeof spec;
  spec.name = "CT";
  spec.typed_constructor = c_new;
  spec.constructor_signature = "CT(i: int)";
  spec.typed_methods = get_def;
  spec.n_typed_methods = 1;
  spec.payload_size = sizeof(int64_t);
  pyhost_type *ct = nullptr;
  CHECK(pyhost_type_new(py, m.get(), &spec, &ct) == PYHOST_OK);
  py.exec("from al import g, cg, T, CT");
  {
    pyh::gil_guard gil(py);
    expect_no_more("g(i, 2.5)", loop_allocations(py, "g(i, 2.5)"), loop_allocations(py, "cg(i, 2.5)"));
    expect_no_more("g(i, y=2.5)", loop_allocations(py, "g(i, y=2.5)"), loop_allocations(py, "cg(i, y=2.5)"));
    expect_no_more("T(i).get()", loop_allocations(py, "T(i).get()"), loop_allocations(py, "CT(i).get()"));
  }
  pyhost_type_free(py, ct);
}

TEST_CASE(cpp_to_python_typed_calls_allocate_nothing) {
  auto py = start();
  py.exec("def f2(a, b):\n    return a + b\ndef ident(x):\n    return x\n");
  auto f2 = py.function("f2");
  auto ident = py.function("ident");
  std::string trip(10000, 'x');
  pyh::gil_guard gil(py);
  auto twice = [](auto &&body) {
    body(10);  // warm
    return allocations_in([&] { body(N); });
  };
  long cpp = twice([&](long n) {
    for (long i = 0; i < n; i++) f2.call<int64_t>(i, 2);
  });
  long c = twice([&](long n) {
    for (long i = 0; i < n; i++) {
      pyhost_arg argv[2] = {pyhost_arg_int(i), pyhost_arg_int(2)};
      int64_t r;
      CHECK(pyhost_prepared_call_int(py, f2.get(), argv, 2, &r) == PYHOST_OK);
    }
  });
  expect_no_more("f2(i, 2)", cpp, c);
  cpp = twice([&](long n) {
    for (long i = 0; i < n; i++) f2.call<double>(i, "b"_kw = 2.5);
  });
  pyhost_callable *f2_b = nullptr;  // the C route of a keyword: a plan made once
  static const char *const b[] = {"b"};
  CHECK(pyhost_prepare_keywords(py, f2.get(), 1, b, 1, &f2_b) == PYHOST_OK);
  c = twice([&](long n) {
    for (long i = 0; i < n; i++) {
      pyhost_arg argv[2] = {pyhost_arg_int(i), pyhost_arg_float(2.5)};
      double r;
      CHECK(pyhost_prepared_call_float(py, f2_b, argv, 2, &r) == PYHOST_OK);
    }
  });
  pyhost_callable_free(f2_b);
  expect_no_more("f2(i, b=2.5)", cpp, c);
  cpp = twice([&](long n) {
    for (long i = 0; i < n; i++) CHECK(ident.call<std::string_view>(std::string_view(trip)).size() == trip.size());
  });
  c = twice([&](long n) {
    for (long i = 0; i < n; i++) {
      const char *s;
      size_t len;
      CHECK(pyhost_prepared_callf(py, ident.get(), "z>s", trip.data(), trip.size(), &s, &len) == PYHOST_OK);
    }
  });
  expect_no_more("ident(s) -> string_view", cpp, c);
}
