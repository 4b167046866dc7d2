// test_cpp.cpp: the C++ layer (include/pyhost.hpp) on every Python of the matrix: one
// case per conversion, per error path and per RAII path.  Run as `test_cpp CASE LIB VER`;
// built only against pyhost.hpp and the library (no src/ headers, no Python.h).
extern "C" {
#include "check.h"
}
#include <pyhost.hpp>

#include <atomic>
#include <cmath>
#include <thread>
#include <type_traits>

using namespace pyh::literals;

static pyh::interpreter start() { return pyh::interpreter(check_lib); }

// err(f, *a, **k): "Type: message" of what f(*a, **k) raises, for the cases that check
// what Python sees.
static const char *const err_helper =
    "def err(f, *a, **k):\n"
    "    try: f(*a, **k)\n"
    "    except BaseException as e: return type(e).__name__ + ': ' + str(e)\n";

// Runs f, which must throw pyh::error (or a subclass E) with status and a message and
// type name holding the fragments given.
template <class E = pyh::error, class F>
static void expect_error(F &&f, int status, const char *type_name, const char *fragment, int line) {
  try {
    f();
    fprintf(stderr, "test_cpp.cpp:%d: no exception\n", line);
    check_failures++;
  } catch (const E &e) {
    if (e.status() != status || (type_name && e.type_name() != type_name) ||
        (fragment && !strstr(e.what(), fragment))) {
      fprintf(stderr, "test_cpp.cpp:%d: %s [%s] %s\n", line, e.status_name(), e.type_name().c_str(), e.what());
      check_failures++;
    }
  }
}
// check.h's string checks keep a const char *: these hold the std::string first.
#define CHECK_STR(expr, want)      \
  do {                             \
    std::string s_ = (expr);       \
    CHECK_STREQ(s_.c_str(), want); \
  } while (0)
#define CHECK_HAS(expr, fragment)         \
  do {                                    \
    std::string s_ = (expr);              \
    CHECK_CONTAINS(s_.c_str(), fragment); \
  } while (0)
#define EXPECT_ERROR(expr, status, type, fragment) \
  expect_error([&] { (void)(expr); }, status, type, fragment, __LINE__)

// ---- conversions -------------------------------------------------------------

// A raw pyhost_value * becomes a pyh::value only by the explicit constructor, which takes
// ownership: an implicit conversion would take it unseen (and, through the converting
// constructor, convert the pointer instead).  Checked at run time so that a header
// that allows it fails this test rather than the build.
TEST_CASE(raw_values_convert_only_explicitly) {
  CHECK((!std::is_convertible<pyhost_value *, pyh::value>::value));
  CHECK((std::is_constructible<pyh::value, pyhost_value *>::value));
  CHECK((!std::is_convertible<const pyh::value &, pyhost_value *>::value));
}

TEST_CASE(conv_integers) {
  auto py = start();
  auto ident = py.function("int");
  CHECK(ident.call<int>(-7) == -7);
  CHECK(ident.call<int64_t>(INT64_MAX) == INT64_MAX);
  CHECK(ident.call<uint8_t>(255) == 255);
  CHECK(ident.call<short>(-32768) == -32768);
  CHECK(py.eval<long long>("2**62") == (1LL << 62));
  EXPECT_ERROR(ident.call<uint8_t>(256), PYHOST_RANGE, "", "does not fit");
  EXPECT_ERROR(ident.call<unsigned>(-1), PYHOST_RANGE, "", "does not fit");
  EXPECT_ERROR(py.eval<int64_t>("2**64"), PYHOST_RANGE, "", nullptr);
  EXPECT_ERROR(ident.call<int>(UINT64_MAX), PYHOST_RANGE, "", "64 bits");  // C++ -> Python
  CHECK(py.call<int>("abs", -3) == 3);
}

TEST_CASE(conv_floats) {
  auto py = start();
  auto f = py.function("float");
  CHECK(f.call<double>(2.5) == 2.5);
  CHECK(f.call<float>(0.5f) == 0.5f);
  CHECK(f.call<double>(3) == 3.0);            // an int argument, a float result
  CHECK(py.eval<double>("7") == 7.0);         // an int result read as double
  CHECK(std::isinf(f.call<double>("inf")));
  EXPECT_ERROR(py.eval<double>("'x'"), PYHOST_TYPE, "", "expected float, got str");
}

TEST_CASE(conv_bool) {
  auto py = start();
  auto b = py.function("bool");
  CHECK(b.call<bool>(1) == true);
  CHECK(b.call<bool>(false) == false);
  CHECK(py.eval<bool>("1 < 2"));
  EXPECT_ERROR(py.eval<bool>("1"), PYHOST_TYPE, "", "expected bool, got int");
  // C++ -> Python through a value, a container and a keyword: true is True, false False
  CHECK(py.call<std::string>("repr", pyh::value(true)) == "True");
  CHECK(py.call<std::string>("repr", pyh::value(false)) == "False");
  CHECK(py.call<std::string>("repr", std::vector<bool>{true, false}) == "[True, False]");
  CHECK(py.call<std::string>("json.dumps", "é", "ensure_ascii"_kw = false) == "\"é\"");
}

TEST_CASE(conv_strings) {
  auto py = start();
  auto s = py.function("str");
  CHECK(s.call<std::string>("hé") == "hé");
  std::string with_nul("a\0b", 3);
  CHECK(s.call<std::string>(with_nul) == with_nul);  // length kept
  std::string_view view = std::string_view("abcdef").substr(1, 3);  // borrowed, not NUL-ended
  CHECK(s.call<std::string>(view) == "bcd");
  const char *cs = "plain";
  CHECK(py.call<int>("len", cs) == 5);
  CHECK(py.eval<std::string>("'x' * 3") == "xxx");
  EXPECT_ERROR(s.call<std::string>(std::string("\xff")), PYHOST_PYEXC, "UnicodeDecodeError", "utf-8");
  EXPECT_ERROR(py.eval<std::string>("b'x'"), PYHOST_TYPE, "", "expected str, got bytes");
}

TEST_CASE(conv_vector) {
  auto py = start();
  auto ident = py.function("list");
  std::vector<int> v{1, 2, 3};
  CHECK(ident.call<std::vector<int>>(v) == v);
  CHECK(py.eval<std::vector<double>>("(1.5, 2)") == (std::vector<double>{1.5, 2.0}));  // a tuple too
  CHECK(py.eval<std::vector<std::string>>("['a', 'b']") == (std::vector<std::string>{"a", "b"}));
  CHECK(py.call<int>("len", std::vector<std::vector<int>>{{1}, {2, 3}}) == 2);
  EXPECT_ERROR(py.eval<std::vector<int>>("[1, 'x']"), PYHOST_TYPE, "", "expected int, got str");
  EXPECT_ERROR(py.eval<std::vector<int>>("{}"), PYHOST_TYPE, "", "expected list or tuple, got dict");
}

TEST_CASE(conv_maps) {
  auto py = start();
  std::map<std::string, int> m{{"a", 1}, {"b", 2}};
  std::string json = py.call<std::string>("json.dumps", m, "sort_keys"_kw = true);
  CHECK_STREQ(json.c_str(), "{\"a\": 1, \"b\": 2}");
  CHECK((py.eval<std::map<std::string, int>>("{'x': 1, 'y': 2}") == std::map<std::string, int>{{"x", 1}, {"y", 2}}));
  auto um = py.eval<std::unordered_map<int, std::string>>("{1: 'one', 2: 'two'}");
  CHECK(um.size() == 2 && um[1] == "one" && um[2] == "two");
  std::unordered_map<std::string, double> um2{{"k", 0.5}};
  CHECK(py.call<double>("operator.getitem", um2, "k") == 0.5);
  EXPECT_ERROR((py.eval<std::map<std::string, int>>("[1]")), PYHOST_TYPE, "", "expected dict, got list");
}

TEST_CASE(conv_optional) {
  auto py = start();
  CHECK(!py.eval<std::optional<int>>("None").has_value());
  CHECK(py.eval<std::optional<int>>("4") == 4);
  std::optional<int> none;
  CHECK(py.call<bool>("operator.is_", none, pyh::value::none()));
  CHECK(py.call<int>("abs", std::optional<int>(-2)) == 2);
  CHECK(py.eval<std::vector<std::optional<int>>>("[1, None]") == (std::vector<std::optional<int>>{1, std::nullopt}));
}

TEST_CASE(conv_tuple) {
  auto py = start();
  auto dm = py.function("divmod");
  auto [q, r] = dm.call<std::tuple<int, int>>(7, 2);
  CHECK(q == 3 && r == 1);
  auto t = py.eval<std::tuple<std::string, double, bool>>("('a', 1.5, True)");
  CHECK(std::get<0>(t) == "a" && std::get<1>(t) == 1.5 && std::get<2>(t));
  CHECK(py.call<int>("len", std::make_tuple(1, "x", 2.0)) == 3);
  auto p = py.eval<std::pair<int, int>>("[1, 2]");
  CHECK(p.first == 1 && p.second == 2);
  EXPECT_ERROR((py.eval<std::tuple<int, int>>("(1, 2, 3)")), PYHOST_TYPE, "", "tuple of 2 items, got 3");
}

TEST_CASE(conv_values) {
  auto py = start();
  py.exec("import fractions\nfr = fractions.Fraction(1, 3)\n");
  pyh::value fr = py.global("fr");
  CHECK(fr.kind() == PYHOST_KIND_OBJECT);
  CHECK_STREQ(fr.type_name(), "fractions.Fraction");
  CHECK(py.call<bool>("operator.is_", fr, py.global("fr")));  // the same object, both ways
  CHECK(fr.repr(py) == "Fraction(1, 3)");
  pyh::value built(std::vector<int>{1, 2});
  CHECK(built.kind() == PYHOST_KIND_LIST && built.size() == 2);
  CHECK(built.as<std::vector<int>>() == (std::vector<int>{1, 2}));
  py.set_global("g", built);
  CHECK(py.eval<int>("sum(g)") == 3);
  CHECK(py.attr<int>(fr, "denominator") == 3);
}

// ---- calls -------------------------------------------------------------------

TEST_CASE(call_keywords_and_typed_results) {
  auto py = start();
  py.exec("def f(a, b=0, *, weight=1):\n    return (a + b) * weight\n"
          "def text(): return 'txt'\n"
          "def nothing(): pass\n");
  auto f = py.function("f");
  CHECK(f.call<int>(1) == 1);
  CHECK(f.call<int>(1, 2) == 3);
  CHECK(f.call<int>(1, pyh::kw("weight", 3)) == 3);
  CHECK(f.call<double>(1, "b"_kw = 2, "weight"_kw = 0.5) == 1.5);
  CHECK(f.call<int>(2, 2) == 4);
  CHECK(py.call<int>("f", 1, "weight"_kw = 10) == 10);
  CHECK(py.call<std::string>("text") == "txt");
  py.function("nothing").call<void>();
  CHECK(f(1, 1).as<int>() == 2);  // operator(): a value
  EXPECT_ERROR(f.call<int>(1, "nope"_kw = 1), PYHOST_PYEXC, "TypeError", "nope");
  EXPECT_ERROR(f.call<std::string>(1), PYHOST_TYPE, "", "expected str, got int");
}

// Keyword calls of scalars and strings go through pyhost_prepared_callf / call_namef;
// other argument types, and keyword names a format cannot carry, through value trees.
TEST_CASE(call_keywords_fast_route_and_fallback) {
  auto py = start();
  py.exec("def g(a, s='', *, weight=1, flag=False, **rest):\n"
          "    return (a * weight, s, flag, sorted(rest.items()))\n"
          "def k(*, n): return n * 2\n");
  auto k = py.function("k");
  CHECK(k.call<int>("n"_kw = 21) == 42);  // keyword-only, typed result
  CHECK(k.call<double>("n"_kw = 1.25) == 2.5);
  CHECK(k.call<std::string>("n"_kw = std::string("ab")) == "abab");
  CHECK(py.call<int>("k", "n"_kw = 4) == 8);
  auto g = py.function("g");
  using T = std::tuple<int, std::string, bool, std::vector<std::tuple<std::string, int>>>;
  T r = g.call<T>(2, "x", "weight"_kw = 3, "flag"_kw = true);
  CHECK(std::get<0>(r) == 6 && std::get<1>(r) == "x" && std::get<2>(r) && std::get<3>(r).empty());
  // a keyword before a positional argument still reaches its parameter
  r = g.call<T>("weight"_kw = 5, 1);
  CHECK(std::get<0>(r) == 5);
  // containers take the value-tree route
  r = g.call<T>(std::vector<int>{1, 2}.size(), "weight"_kw = 2, "v"_kw = 7);
  CHECK(std::get<0>(r) == 4 && std::get<3>(r).size() == 1 && std::get<1>(std::get<3>(r)[0]) == 7);
  CHECK(py.call<std::vector<int>>("list", std::vector<int>{1, 2, 3}).size() == 3);
  auto lists = g.call<std::tuple<std::vector<int>, std::string, bool, pyh::value>>(std::vector<int>{1, 2},
                                                                                   "weight"_kw = 2);
  CHECK(std::get<0>(lists).size() == 4);
  // names a format cannot carry, and a name given twice (a dict keeps the last)
  r = g.call<T>(1, pyh::kw("two words", 3), pyh::kw("caf\xc3\xa9", 4));
  CHECK(std::get<3>(r).size() == 2 && std::get<0>(std::get<3>(r)[1]) == "two words");
  CHECK(std::get<0>(g.call<T>(1, "weight"_kw = 2, "weight"_kw = 3)) == 3);
  EXPECT_ERROR(k.call<int>("n"_kw = "x", "m"_kw = 1), PYHOST_PYEXC, "TypeError", "m");
  EXPECT_ERROR(k.call<int>("n"_kw = 1.5), PYHOST_TYPE, "", "expected int, got float");
  EXPECT_ERROR(py.call<int>("no_such_fn", "n"_kw = 1), PYHOST_PYEXC, "ModuleNotFoundError", "no_such_fn");
}

TEST_CASE(plugin_hooks) {
  auto py = start();
  std::string dir = std::string(check_arg4);
  auto p = py.load_plugin((dir + "/scorer.py").c_str());
  py.module("app").def("scale", [](double x) { return x * 1.5; });  // freed at once: unused below
  CHECK(p.has_hook("score") && !p.has_hook("nope"));
  CHECK(p.call<int>("count", "[1, 2]") == 2);
  CHECK(p.call<double>("weighted", "[1, 2]", "weight"_kw = 2) == 6.0);
  auto hook = p.hook("weighted");  // prepared
  CHECK(hook.call<double>("[4]") == 4.0);
  EXPECT_ERROR(p.call("nope"), PYHOST_NOHOOK, "", "has no hook nope");
  EXPECT_ERROR(p.call<double>("weighted", "not json"), PYHOST_PYEXC, "json.decoder.JSONDecodeError", "scorer.py");
  CHECK(p.hooks().size() >= 3);
}

// ---- errors ------------------------------------------------------------------

TEST_CASE(error_has_status_type_and_traceback) {
  auto py = start();
  try {
    py.exec("def inner():\n    raise KeyError('k')\ninner()\n", "tb.py");
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK(e.status() == PYHOST_PYEXC);
    CHECK(e.type_name() == "KeyError");
    CHECK(e.message() == "'k'");
    CHECK(e.frames().size() == 2);
    if (e.frames().size() == 2) {
      CHECK(e.frames()[0].file == "tb.py" && e.frames()[0].line == 3 && e.frames()[0].function == "<module>");
      CHECK(e.frames()[1].file == "tb.py" && e.frames()[1].line == 2 && e.frames()[1].function == "inner");
    }
    CHECK_CONTAINS(e.traceback(), "File \"tb.py\", line 2, in inner");
    CHECK_CONTAINS(e.what(), "KeyError: 'k'");
    CHECK_STREQ(e.status_name(), "PYHOST_PYEXC");
  }
  EXPECT_ERROR(py.exec("class E(Exception): pass\nraise E('a\\nb: c')"), PYHOST_PYEXC, "E", "b: c");
  EXPECT_ERROR(py.exec("x = (", "syn.py"), PYHOST_PYEXC, "SyntaxError", "syn.py");
  EXPECT_ERROR(py.import("no_such_module_xyz"), PYHOST_PYEXC, nullptr, "no_such_module_xyz");
  EXPECT_ERROR(py.global("undefined_name"), PYHOST_PYEXC, "NameError", "undefined_name");
}

// The type, message and frames come from the exception itself (pyhost_errtype,
// pyhost_errtext, pyhost_errframe), also where the text has no traceback to read them
// from: a hook called with a missing argument (issue 39), a SyntaxError.
TEST_CASE(error_data_without_parsing_text) {
  auto py = start();
  auto p = py.load_plugin((std::string(check_arg4) + "/scorer.py").c_str());
  try {
    p.call<int>("count");  // TypeError: count() missing 1 required positional argument
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK(e.status() == PYHOST_PYEXC);
    CHECK_STR(e.type_name(), "TypeError");
    CHECK_HAS(e.message(), "text");
    CHECK(e.frames().empty());
    CHECK_HAS(e.what(), "plugin scorer: hook count raised");
  }
  try {
    p.call<double>("weighted", "[1,");
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK_STR(e.type_name(), "json.decoder.JSONDecodeError");
    CHECK(e.message().find("Traceback") == std::string::npos);
    CHECK(!e.frames().empty() && e.frames()[0].function == "weighted");
    CHECK(!e.frames().empty() && e.frames()[0].file == std::string(check_arg4) + "/scorer.py");
  }
  try {
    py.exec("x = 1\ny = (\n", "syn.py");
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK_STR(e.type_name(), "SyntaxError");
    CHECK(e.frames().size() == 1 && e.frames()[0].file == "syn.py" && e.frames()[0].function.empty());
  }
  try {
    py.exec("class Quit(SystemExit): pass\ndef bye():\n    raise Quit(4)\nbye()\n", "quit.py");
    CHECK(!"no exception");
  } catch (const pyh::system_exit &e) {
    CHECK(e.code() == 4);
    CHECK_STR(e.type_name(), "Quit");
    CHECK_STR(e.message(), "4");
    CHECK(e.frames().size() == 2 && e.frames()[1].function == "bye");
  }
  // pyhost's own errors: no Python type, the message is what()
  try {
    py.eval<int>("'text'");
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK(e.status() == PYHOST_TYPE && e.type_name().empty() && e.frames().empty());
    CHECK_STR(e.message(), e.what());
  }
}

// A result or an argument of the wrong type names what was called (issue 39).
TEST_CASE(error_wrong_types_name_the_call) {
  auto py = start();
  auto p = py.load_plugin((std::string(check_arg4) + "/scorer.py").c_str());
  EXPECT_ERROR(p.call<double>("label", "x"), PYHOST_TYPE, "",
               "plugin scorer: hook label: the result: expected float, got str");
  EXPECT_ERROR(p.call<int>("count", std::vector<unsigned long long>{UINT64_MAX}), PYHOST_RANGE, "",
               "plugin scorer: hook count: int 18446744073709551615 does not fit in 64 bits");
  auto label = p.hook("label");
  EXPECT_ERROR(label.call<double>("x"), PYHOST_TYPE, "", "plugin scorer: hook label: ");
  EXPECT_ERROR(label.call<double>("x"), PYHOST_TYPE, "", "expected float, got str");
  CHECK_STR(label.name(), "plugin scorer: hook label");
  EXPECT_ERROR(py.function("str").call<int>(1), PYHOST_TYPE, "", "str: ");
  EXPECT_ERROR(py.call<double>("str", 1), PYHOST_TYPE, "", "str: ");
  EXPECT_ERROR(py.call<double>("dict", "weight"_kw = 1), PYHOST_TYPE, "", "dict: ");
  // a Python exception is left as it is
  EXPECT_ERROR(label.call<std::string>(1), PYHOST_PYEXC, "TypeError", nullptr);
}

TEST_CASE(error_system_exit_is_distinguishable) {
  auto py = start();
  try {
    py.exec("import sys\nsys.exit(3)");
    CHECK(!"no exception");
  } catch (const pyh::system_exit &e) {
    CHECK(e.code() == 3 && e.status() == PYHOST_EXIT && e.type_name() == "SystemExit");
  }
  CHECK(py.eval<int>("1 + 1") == 2);  // the host keeps running
}

TEST_CASE(error_interrupt_is_distinguishable) {
  auto py = start();
  auto m = py.module("ctl");
  pyhost *h = py;
  m.def("stop", [h] { pyhost_interrupt(h); });
  try {
    py.exec("import ctl\nctl.stop()\nwhile True: pass\n");
    CHECK(!"no exception");
  } catch (const pyh::interrupted &e) {
    CHECK(e.status() == PYHOST_INTERRUPTED);
    CHECK_CONTAINS(e.what(), "interrupted by pyhost_interrupt");
  }
  CHECK(py.eval<int>("2") == 2);
}

TEST_CASE(error_init_refused) {
  try {
    pyh::interpreter py("/nonexistent/libpython3.99.so");
    CHECK(!"no exception");
  } catch (const pyh::error &e) {
    CHECK(e.status() == PYHOST_NOTFOUND);
    CHECK_CONTAINS(e.what(), "/nonexistent/libpython3.99.so");
  }
  auto py = start();  // a failed init does not count: the real one starts
  CHECK(py.eval<int>("3") == 3);
}

// ---- host functions ----------------------------------------------------------

static int64_t twice(int64_t x) { return 2 * x; }

TEST_CASE(hostfn_conversions) {
  auto py = start();
  auto m = py.module("hf");
  m.def("add", [](int a, double b) { return a + b; })
      .def("neg", [](bool b) { return !b; })
      .def("cat", [](std::string_view a, const std::string &b) { return std::string(a) + b; })
      .def("cstr", [](const char *s) { return std::strlen(s); })
      .def("total", [](const std::vector<int> &v) { int t = 0; for (int x : v) t += x; return t; })
      .def("keys", [](const std::map<std::string, int> &d) { return d.size(); })
      .def("opt", [](int a, std::optional<int> b) { return a + b.value_or(100); })
      .def("pair", [](int a) { return std::make_tuple(a, std::to_string(a)); })
      .def("vec", [](int n) { return std::vector<int>(static_cast<size_t>(n), 7); })
      .def("obj", [](const pyh::value &v) { return v; })
      .def("small", [](uint8_t x) { return x; })
      .def("none", []() {})
      .def("twice", twice)
      .def("twice_ptr", &twice);
  py.exec("import hf, fractions\n"
          "assert hf.add(1, 2.5) == 3.5\n"
          "assert hf.neg(False) is True\n"
          "assert hf.cat('a', 'b') == 'ab'\n"
          "assert hf.cstr('four') == 4\n"
          "assert hf.total([1, 2, 3]) == 6 and hf.total((4,)) == 4\n"
          "assert hf.keys({'a': 1, 'b': 2}) == 2\n"
          "assert hf.opt(1) == 101 and hf.opt(1, 2) == 3 and hf.opt(1, None) == 101\n"
          "assert hf.pair(5) == (5, '5')\n"
          "assert hf.vec(2) == [7, 7]\n"
          "f = fractions.Fraction(1, 2)\nassert hf.obj(f) is f\n"
          "assert hf.small(255) == 255\n"
          "assert hf.none() is None\n"
          "assert hf.twice(21) == 42 and hf.twice_ptr(4) == 8\n");
}

TEST_CASE(hostfn_bad_arguments_raise_type_errors) {
  auto py = start();
  auto m = py.module("hb");
  m.def("add", [](int a, double b) { return a + b; }).def("small", [](uint8_t x) { return x; });
  m.def("total", [](const std::vector<int> &v) { return v.size(); });
  py.exec(err_helper);
  py.exec("import hb");
  CHECK_HAS(py.eval<std::string>("err(hb.add, 'x', 1)"), "TypeError");
  CHECK_HAS(py.eval<std::string>("err(hb.add, 1)"), "TypeError");
  CHECK_HAS(py.eval<std::string>("err(hb.add, 1, 2, 3)"), "TypeError: hb.add() takes 2 arguments (3 given)");
  CHECK_HAS(py.eval<std::string>("err(hb.add, 1, b=2)"), "TypeError: hb.add() takes no keyword arguments");
  CHECK_HAS(py.eval<std::string>("err(hb.small, 256)"), "OverflowError: hb.small() argument 0: 256 does not fit");
  CHECK_HAS(py.eval<std::string>("err(hb.total, [1, 'x'])"), "TypeError: hb.total() argument 0: expected int, got str");
}

TEST_CASE(hostfn_exceptions_become_python_exceptions) {
  auto py = start();
  auto m = py.module("he");
  pyh::interpreter *ip = &py;
  m.def("runtime", []() -> int { throw std::runtime_error("it broke"); })
      .def("value", []() -> int { throw std::invalid_argument("bad value"); })
      .def("index", []() -> int { throw std::out_of_range("too far"); })
      .def("named", []() -> int { throw pyh::python_error("KeyError", "no key"); })
      .def("other", []() -> int { throw 42; })
      .def("inner", [ip]() { return ip->eval<int>("{}['missing']"); })  // a failed pyhost call
      .def("nested_exit", [ip]() { ip->exec("raise SystemExit(5)"); });
  py.exec(err_helper);
  py.exec("import he");
  CHECK_STR(py.eval<std::string>("err(he.runtime)"), "RuntimeError: it broke");
  CHECK_STR(py.eval<std::string>("err(he.value)"), "ValueError: bad value");
  CHECK_STR(py.eval<std::string>("err(he.index)"), "IndexError: too far");
  CHECK_STR(py.eval<std::string>("err(he.named)"), "KeyError: 'no key'");
  CHECK_HAS(py.eval<std::string>("err(he.other)"), "RuntimeError: a C++ exception of unknown type");
  CHECK_STR(py.eval<std::string>("err(he.inner)"), "KeyError: 'missing'");  // the original
  CHECK_STR(py.eval<std::string>("err(he.nested_exit)"), "SystemExit: 5");
  // uncaught, it comes back to C++ with its type and the traceback through the host function
  EXPECT_ERROR(py.exec("he.inner()", "top.py"), PYHOST_PYEXC, "KeyError", "top.py");
}

// ---- host types --------------------------------------------------------------

static std::atomic<int> live_counters{0};
struct Counter {
  std::string name;
  int count = 0;
  std::vector<int> history;  // a member with its own heap memory: leaks show
  Counter(std::string n, int c) : name(std::move(n)), count(c) {
    if (count < 0) throw std::invalid_argument("count must not be negative");
    live_counters++;
  }
  ~Counter() { live_counters--; }
  int add(int n) { history.push_back(n); return count += n; }
  std::string label() const { return name + ":" + std::to_string(count); }
};

TEST_CASE(type_constructor_methods_properties) {
  auto py = start();
  auto m = py.module("ht");
  auto counter = m.type<Counter>("Counter", "a C++ counter")
                     .init<std::string, int>()
                     .def("add", &Counter::add)
                     .def("label", &Counter::label)
                     .def("reset", [](Counter &c, std::optional<int> to) { c.count = to.value_or(0); })
                     .property("count", &Counter::count)
                     .property_readonly("name", &Counter::name)
                     .property("double", [](const Counter &c) { return 2 * c.count; })
                     .make();
  py.exec("import ht\n"
          "c = ht.Counter('bolts', 10)\n"
          "assert c.add(5) == 15\n"
          "assert c.label() == 'bolts:15'\n"
          "c.count = 2\nassert c.count == 2 and c.double == 4\n"
          "c.reset()\nassert c.count == 0\nc.reset(9)\nassert c.count == 9\n"
          "assert c.name == 'bolts'\n"
          "try:\n    c.name = 'x'\nexcept AttributeError: pass\nelse: raise AssertionError\n"
          "try:\n    c.count = 'x'\nexcept TypeError: pass\nelse: raise AssertionError\n"
          "try:\n    c.add('x')\nexcept TypeError as e: assert 'ht.Counter.add' in str(e) or 'argument 0' in str(e), e\n"
          "else: raise AssertionError\n");
  Counter &c = counter.of(py.global("c"));
  CHECK(c.count == 9 && c.history.size() == 1);
  // from C++: made in place, read back, handed to Python
  pyh::value made = counter.create("nuts", 3);
  CHECK(counter.of(made).label() == "nuts:3");
  py.set_global("made", made);
  CHECK(py.eval<std::string>("made.label()") == "nuts:3");
  EXPECT_ERROR(counter.of(pyh::value(1)), PYHOST_TYPE, "", "expected ht.Counter, got int");
  CHECK(counter.inline_payload());
}

TEST_CASE(type_destroyed_exactly_once) {
  {
    auto py = start();
    auto m = py.module("hd");
    auto counter = m.type<Counter>("Counter").init<std::string, int>().def("add", &Counter::add).make();
    py.exec("import hd, gc\n"
            "xs = [hd.Counter('a', i) for i in range(100)]\n"
            "for x in xs: x.add(1)\n");
    CHECK(live_counters == 100);
    py.exec("del xs, x\ngc.collect()\n");
    CHECK(live_counters == 0);
    {
      pyh::value a = counter.create("c", 1);
      pyh::value b = a;  // a second reference to the same instance
      CHECK(live_counters == 1);
      a = pyh::value();
      CHECK(live_counters == 1);
    }
    CHECK(live_counters == 0);
    py.exec("keep = hd.Counter('kept', 1)\n");  // alive until finalize
    CHECK(live_counters == 1);
    // the constructor throws: nothing was made, nothing is destroyed
    EXPECT_ERROR(py.exec("hd.Counter('bad', -1)"), PYHOST_PYEXC, "ValueError", "must not be negative");
    try {  // from C++ the C++ exception itself comes back, and no instance is left
      counter.create("bad", -1);
      CHECK(!"no exception");
    } catch (const std::invalid_argument &e) {
      CHECK_CONTAINS(e.what(), "must not be negative");
    }
    CHECK(live_counters == 1);
  }
  // what Python frees at finalize it frees once (CPython does not promise to free all)
  CHECK(live_counters == 0 || live_counters == 1);
}

TEST_CASE(type_overaligned_payload_lives_inline_or_boxed) {
  struct alignas(16) Wide {
    double v[2];
    explicit Wide(double x) : v{x, -x} {}
    double first() const { return v[0]; }
  };
  auto py = start();
  auto m = py.module("hw");
  auto wide = m.type<Wide>("Wide").init<double>().def("first", &Wide::first).make();
  CHECK(wide.inline_payload() == (py.python_version() >= PYHOST_PY(3, 8)));
  py.exec("import hw\nw = hw.Wide(2.5)\nassert w.first() == 2.5\n");
  Wide &w = wide.of(py.global("w"));
  CHECK(reinterpret_cast<uintptr_t>(&w) % 16 == 0 && w.v[1] == -2.5);
}

// ---- the typed routes: declared parameters, static formats (issue 36) --------

TEST_CASE(typed_hostfn_keywords_and_defaults) {
  auto py = start();
  auto m = py.module("tk");
  m.def("scale", [](double x, double factor) { return x * factor; }, pyh::arg("x"), pyh::arg("factor") = 1.5)
      .def("greet",
           [](std::string_view name, std::optional<int> times, bool loud, const std::string &end) {
             std::string s;
             for (int i = 0; i < times.value_or(1); i++) s += name;
             return s + (loud ? "!" : "") + end;
           },
           pyh::arg("name"), pyh::arg("times"), pyh::pos_only(), pyh::kw_only(), pyh::arg("loud") = false,
           pyh::arg("end") = ".")
      .def("blob", [](pyh::bytes b, const char *tag) { return std::string(tag) + std::to_string(b.size); },
           pyh::arg("data"), pyh::arg("tag") = "n=")
      .def("back", [](pyh::bytes b) { return b; }, pyh::arg("data"))
      .def("twice", &twice, pyh::arg("x"));
  py.exec("import tk\n"
          "assert tk.scale(2) == 3.0 and tk.scale(2, 3) == 6.0\n"
          "assert tk.scale(x=2, factor=4) == 8.0 and tk.scale(factor=0.5, x=4) == 2.0\n"
          "assert tk.greet('ab') == 'ab.' and tk.greet('ab', 2) == 'abab.' and tk.greet('ab', None) == 'ab.'\n"
          "assert tk.greet('a', 3, loud=True, end='?') == 'aaa!?'\n"
          "assert tk.blob(b'xyz') == 'n=3' and tk.blob(tag='len ', data=b'') == 'len 0'\n"
          "assert tk.back(b'a\\x00b') == b'a\\x00b'\n"
          "assert tk.twice(x=21) == 42\n");
}

TEST_CASE(typed_hostfn_signatures) {
  auto py = start();
  auto m = py.module("ts");
  m.def("scale", [](double x, double factor) { return x * factor; }, pyh::arg("x"), pyh::arg("factor") = 0.1,
        "scales x")
      .def("opts", [](std::optional<std::string> s, int64_t n, bool b, float f) { return s.value_or("") + std::to_string(n + b) + std::to_string(f); },
           pyh::arg("s"), pyh::pos_only(), pyh::arg("n") = -7, pyh::kw_only(), pyh::arg("b") = true,
           pyh::arg("f") = 1e20)
      .def("quote", [](std::string_view s) { return std::string(s); }, pyh::arg("s") = "it's")
      .def("whole", [](double d) { return d; }, pyh::arg("d") = 3);
  py.exec("import ts, inspect\n");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(ts.scale))"), "(x, factor=0.1)");
  CHECK_STR(py.eval<std::string>("ts.scale.__text_signature__"), "(x, factor=0.1)");  // the shortest text
  CHECK_STR(py.eval<std::string>("ts.scale.__doc__"), "scales x");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(ts.opts))"), "(s=None, /, n=-7, *, b=True, f=1e+20)");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(ts.quote))"), "(s=\"it's\")");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(ts.whole))"), "(d=3.0)");
  // each default Python shows is the value the callable gets
  CHECK(py.eval<double>("ts.scale(10)") == 10 * 0.1);
  CHECK_STR(py.eval<std::string>("ts.quote()"), "it's");
  CHECK(py.eval<double>("ts.whole()") == 3.0);
  std::string opts = "-6" + std::to_string(1e20f);
  CHECK_STR(py.eval<std::string>("ts.opts()"), opts.c_str());
}

TEST_CASE(typed_hostfn_wrong_arguments_cpython_worded) {
  auto py = start();
  auto m = py.module("tw");
  m.def("count", [](std::string_view text, int n) { return text.size() * static_cast<size_t>(n); },
        pyh::arg("text"), pyh::arg("n") = 1)
      .def("small", [](uint8_t b, int16_t s) { return b + s; }, pyh::arg("b"), pyh::arg("s") = 0)
      .def("boom", [](int n) -> int { throw std::out_of_range("index " + std::to_string(n)); }, pyh::arg("n"));
  py.exec(err_helper);
  py.exec("import tw");
  CHECK_STR(py.eval<std::string>("err(tw.count)"), "TypeError: tw.count() missing required argument 'text' (pos 1)");
  CHECK_STR(py.eval<std::string>("err(tw.count, 1)"), "TypeError: tw.count() argument 'text' must be str, not int");
  CHECK_STR(py.eval<std::string>("err(tw.count, 'a', z=1)"), "TypeError: tw.count() got an unexpected keyword argument 'z'");
  CHECK_HAS(py.eval<std::string>("err(tw.count, 'a', 1, 2)"), "TypeError: tw.count() takes at most 2 positional arguments (3 given)");
  CHECK_STR(py.eval<std::string>("err(tw.small, 256)"),
            "OverflowError: tw.small() argument 'b': 256 is out of range for the C++ parameter (0 to 255)");
  CHECK_STR(py.eval<std::string>("err(tw.small, 1, s=-40000)"),
            "OverflowError: tw.small() argument 's': -40000 is out of range for the C++ parameter (-32768 to 32767)");
  CHECK_STR(py.eval<std::string>("err(tw.boom, n=3)"), "IndexError: index 3");
  CHECK(py.eval<int>("tw.small(255, s=-255)") == 0);
}

struct Tally {
  std::string name;
  int64_t count;
  Tally(std::string n, int64_t c) : name(std::move(n)), count(c) {
    if (count < 0) throw std::invalid_argument("count must not be negative");
  }
  int64_t add(int64_t n, int64_t step) { return count += n * step; }
  std::string label() const { return name + ":" + std::to_string(count); }
};

TEST_CASE(typed_methods_and_constructors) {
  auto py = start();
  auto m = py.module("tm");
  auto tally = m.type<Tally>("Tally", "a tally")
                   .init<std::string, int64_t>(pyh::arg("name"), pyh::arg("count") = 0)
                   .def("add", &Tally::add, pyh::arg("n"), pyh::arg("step") = 1, "adds n * step")
                   .def("scaled", [](Tally &t, double f) { return static_cast<double>(t.count) * f; },
                        pyh::arg("factor"))
                   .def("label", &Tally::label)
                   .make();
  py.exec(err_helper);
  py.exec("import tm, inspect\n"
          "t = tm.Tally('bolts', count=3)\n"
          "assert t.add(2) == 5 and t.add(n=1, step=10) == 15 and t.add(step=2, n=1) == 17\n"
          "assert t.scaled(factor=0.5) == 8.5 and t.label() == 'bolts:17'\n"
          "assert tm.Tally('x').label() == 'x:0' and tm.Tally(name='y', count=2).label() == 'y:2'\n");
  // the class's own signature from 3.10, where its __text_signature__ is read (host-types.md)
  if (py.python_version() >= PYHOST_PY(3, 10))
    CHECK_STR(py.eval<std::string>("str(inspect.signature(tm.Tally))"), "(name, count=0)");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(t.add))"), "(n, step=1)");
  CHECK_STR(py.eval<std::string>("str(inspect.signature(tm.Tally.add))"), "(self, /, n, step=1)");
  CHECK_STR(py.eval<std::string>("t.add.__doc__"), "adds n * step");
  CHECK_STR(py.eval<std::string>("err(tm.Tally)"), "TypeError: tm.Tally() missing required argument 'name' (pos 1)");
  CHECK_STR(py.eval<std::string>("err(tm.Tally, 1)"), "TypeError: tm.Tally() argument 'name' must be str, not int");
  CHECK_STR(py.eval<std::string>("err(t.add, 'x')"), "TypeError: tm.Tally.add() argument 'n' must be int, not str");
  CHECK_STR(py.eval<std::string>("err(t.scaled)"), "TypeError: tm.Tally.scaled() missing required argument 'factor' (pos 1)");
  CHECK_STR(py.eval<std::string>("err(tm.Tally, 'z', -1)"), "ValueError: count must not be negative");
  CHECK(tally.of(py.global("t")).count == 17);
}

TEST_CASE(typed_declarations_refused_at_registration) {
  auto py = start();
  auto m = py.module("tr");
  auto id = [](const std::string &s) { return s; };
  EXPECT_ERROR(m.def("q", id, pyh::arg("s") = "both ' and \""), PYHOST_MISUSE, "", "both quotes");
  EXPECT_ERROR(m.def("q", id, pyh::arg("s") = "back\\slash"), PYHOST_MISUSE, "", "backslash");
  EXPECT_ERROR(m.def("q", id, pyh::arg(nullptr)), PYHOST_MISUSE, "", "needs a name");
  EXPECT_ERROR(m.def("q", id, pyh::arg("1s")), PYHOST_MISUSE, "", "column");  // pyhost's own check
  EXPECT_ERROR(m.def("d", [](double d) { return d; }, pyh::arg("d") = std::numeric_limits<double>::infinity()),
               PYHOST_MISUSE, "", "finite");
  EXPECT_ERROR(m.def("o", [](int a, int b) { return a + b; }, pyh::arg("a") = 1, pyh::arg("b")), PYHOST_MISUSE, "",
               "column");
  py.exec("import tr\nassert not hasattr(tr, 'q') and not hasattr(tr, 'd')\n");
}

TEST_CASE(call_static_keyword_formats) {
  auto py = start();
  py.exec("def f(a, b=1, *, weight=1, **rest):\n    return (a + b) * weight + len(rest)\n"
          "def ident(x):\n    return x\n"
          "def join(*a, sep=''):\n    return sep.join(a)\n");
  // the format of a call whose keywords are named by "name"_kw is a constant
  using F = pyh::detail::static_format<double, int64_t, pyh::kwarg_lit<double, 'w', 't'>, pyh::kwarg_lit<const char *, 's'>>;
  static_assert(std::string_view(F::text.data()) == "L,wt=d,s=z>d", "a format fixed at compile time");
  CHECK_STR(std::string(F::text.data()), "L,wt=d,s=z>d");
  // a name given twice, whatever its values' types, leaves the static format
  using pyh::detail::static_expressible;
  static_assert(static_expressible<int64_t, pyh::kwarg_lit<double, 'w'>, pyh::kwarg_lit<double, 'w', 't'>>, "");
  static_assert(!static_expressible<int64_t, pyh::kwarg_lit<double, 'w'>, pyh::kwarg_lit<int64_t, 'w'>>, "");
  static_assert(!static_expressible<pyh::kwarg_lit<double, 'a'>, int64_t, pyh::kwarg_lit<double, 'b'>,
                                    pyh::kwarg_lit<double, 'a'>>, "");
  auto f = py.function("f");
  CHECK(f.call<double>(1, "weight"_kw = 2.5) == 5.0);
  CHECK(f.call<int>(1, "b"_kw = 2, "weight"_kw = 3) == 9);
  CHECK(f.call<int>("weight"_kw = 2, 1) == 4);  // a keyword before a positional argument
  CHECK(f.call<int>(std::vector<int>{1}.size(), "x"_kw = std::vector<int>{1, 2}) == 3);  // 'O' for a container
  CHECK(f.call<int>(1, "two words"_kw = 5) == 3);      // not a format's name: the value-tree route
  CHECK(f.call<int>(1, "weight"_kw = 2, "weight"_kw = 3) == 6);  // given twice: the last wins
  CHECK(py.call<int>("f", 2, "weight"_kw = 2) == 6);  // pyhost_call_namef with the same format
  auto join = py.function("join");
  CHECK(join.call<std::string>("a", std::string("b"), "sep"_kw = std::string_view("-+").substr(0, 1)) == "a-b");
  EXPECT_ERROR(f.call<int>("weight"_kw = 1), PYHOST_PYEXC, "TypeError", "missing");
  EXPECT_ERROR(f.call<int>(1, "weight"_kw = "x"), PYHOST_PYEXC, "TypeError", nullptr);
}

// Calls whose keywords are named by "name"_kw go through a keyword plan the function
// makes once per layout and keeps: CPython's own TypeErrors reach the exception, a
// name given twice keeps its meaning (the last wins), and the plans stay few.
TEST_CASE(call_keyword_plans) {
  auto py = start();
  py.exec("import sys\n"
          "zeta_kw = 0\n"  // the name interned by the compiler first
          "def f(a, b=1, *, weight=1, **rest):\n    return (a + b) * weight + len(rest)\n"
          "def interned(**k):\n    return all(sys.intern(n) is n for n in k)\n"
          "def show(x, *, sep='-'):\n    return sep.join([x, x])\n");
  static_assert(pyh::detail::plan_expressible<int64_t, pyh::kwarg_lit<double, 'w'>>, "a plan's call");
  static_assert(!pyh::detail::plan_expressible<int64_t, int64_t>, "no keyword: the plain prepared call");
  static_assert(!pyh::detail::plan_expressible<int, int, int, int, int, int, int, int, pyh::kwarg_lit<int, 'w'>>,
                "more than 8 arguments: the static format");
  auto f = py.function("f");
  CHECK(f.keyword_plans() == 0);
  for (int i = 0; i < 500; i++) CHECK(f.call<int64_t>(i, "weight"_kw = 2) == 2 * (i + 1));
  CHECK(f.call<double>(1.5, "weight"_kw = 2.0) == 5.0);  // other value types, the same layout
  CHECK(f.keyword_plans() == 1);
  CHECK(f.call<int>("weight"_kw = 2, 1) == 4);  // positional after the keyword: the same layout
  CHECK(f.call<int>(1, "b"_kw = 2, "weight"_kw = 3) == 9);
  CHECK(f.call<int>(1, "weight"_kw = 3, "b"_kw = 2) == 9);  // another order: another plan
  CHECK(f.call<int>(1, "x"_kw = std::vector<int>{1, 2}) == 3);  // a converted value by keyword
  CHECK(f.keyword_plans() == 4);
  // a wrong name: CPython's TypeError, its own text
  auto show = py.function("show");
  EXPECT_ERROR(show.call<std::string>("a", "nope"_kw = "+"), PYHOST_PYEXC, "TypeError",
               "unexpected keyword argument 'nope'");
  // a keyword also given by position: CPython's TypeError
  EXPECT_ERROR(show.call<std::string>("a", "x"_kw = "b"), PYHOST_PYEXC, "TypeError",
               "multiple values for argument 'x'");
  // a name given twice: the value-tree route, where the last wins, as before plans
  CHECK(f.call<int>(1, "weight"_kw = 2, "weight"_kw = 3) == 6);
  // more than 8 arguments: the static format's route
  py.exec("def many(*a, k=0):\n    return sum(a) + k\n");
  CHECK(py.function("many").call<int>(1, 1, 1, 1, 1, 1, 1, 1, "k"_kw = 10) == 18);
  // the names are interned: CPython matches them by identity
  auto in = py.function("interned");
  CHECK(in.call<bool>("zeta_kw"_kw = 1));
  CHECK(in.keyword_plans() == 1);
  // a borrowed str result through a plan (pyhost_prepared_call_str)
  std::string_view v = show.call<std::string_view>("ab", "sep"_kw = "+");
  CHECK(v == "ab+ab" && v.data()[v.size()] == '\0');
  CHECK(show.keyword_plans() == 3);
  // a borrowed bytes result through a plan (pyhost_prepared_call_bytes)
  py.exec("def raw(n, *, fill=b'x'):\n    return fill * n\n");
  auto raw = py.function("raw");
  pyh::bytes rb = raw.call<pyh::bytes>(3, "fill"_kw = pyh::bytes("\0z", 2));
  CHECK(rb.size == 6 && rb.view() == std::string_view("\0z\0z\0z", 6));
  CHECK(raw.keyword_plans() == 1);
  // wrong result types name both
  EXPECT_ERROR(f.call<std::string_view>(1, "weight"_kw = 1), PYHOST_TYPE, "", "int");
  EXPECT_ERROR(raw.call<std::string_view>(1, "fill"_kw = pyh::bytes("a", 1)), PYHOST_TYPE, "", "bytes");
  // moved: the plans go with the function
  pyh::function g = std::move(f);
  CHECK(g.keyword_plans() == 4 && g.call<int>(2, "weight"_kw = 2) == 6 && g.keyword_plans() == 4);
  // keyword arguments of the plans of an expression (a callable with no object)
  auto e = py.expression("x, y", "x * 2 + y");
  CHECK(e.call<int>(20, "y"_kw = 2) == 42 && e.call<int>("y"_kw = 1, "x"_kw = 1) == 3);
  CHECK(e.keyword_plans() == 2);
}

// A plan reused across many calls holds no more references than before: on a debug
// build the interpreter's total, on every build the callee's and a value argument's.
TEST_CASE(call_keyword_plans_hold_no_references) {
  auto py = start();
  py.exec("import sys, gc\n"
          "def f(a, *, y=None):\n    return a + len(y)\n"
          "class Arg:\n    def __len__(self):\n        return 2\n"
          "arg = Arg()\n"  // an object value: passed as the object itself
          "def total():\n"
          "    gc.collect()\n"
          "    getattr(sys, '_clear_internal_caches', sys._clear_type_cache)()\n"
          "    return sys.gettotalrefcount() if hasattr(sys, 'gettotalrefcount') else 0\n");
  auto f = py.function("f");
  pyh::value arg = py.eval("arg");
  auto total = py.function("total");
  auto run = [&](int n) {
    for (int i = 0; i < n; i++) CHECK(f.call<int64_t>(i, "y"_kw = arg) == i + 2);
  };
  run(1000);  // warm-up: the plan is made here
  int64_t f_refs = py.eval<int64_t>("sys.getrefcount(f)"), arg_refs = py.eval<int64_t>("sys.getrefcount(arg)");
  int64_t growth = 0;
  for (int rep = 0; rep < 3; rep++) {  // as test_refcount.c: a leak grows every run
    int64_t before = total.call<int64_t>();
    run(1000);
    growth = total.call<int64_t>() - before;
    if (growth <= 64) break;
  }
  fprintf(stderr, "1000 calls through one plan: %lld references\n", static_cast<long long>(growth));
  CHECK(growth <= 64);
  CHECK(py.eval<int64_t>("sys.getrefcount(f)") == f_refs);
  CHECK(py.eval<int64_t>("sys.getrefcount(arg)") == arg_refs);
  CHECK(f.keyword_plans() == 1);
}

TEST_CASE(call_borrowed_results) {
  auto py = start();
  py.exec("def ident(x):\n    return x\ndef num():\n    return 5\n");
  auto ident = py.function("ident");
  std::string big(10000, 'q');
  std::string_view v = ident.call<std::string_view>(std::string_view(big));
  CHECK(v == big && v.data() != big.data());  // Python's str, read in place
  CHECK(v.data()[v.size()] == '\0');
  std::string_view w = ident.call<std::string_view>("h\xc3\xa9");  // valid until the next such call
  CHECK(w == "h\xc3\xa9");
  pyh::bytes b = ident.call<pyh::bytes>(pyh::bytes("a\0b", 3));
  CHECK(b.size == 3 && std::memcmp(b.data, "a\0b", 3) == 0 && b.view() == std::string_view("a\0b", 3));
  EXPECT_ERROR(py.function("num").call<std::string_view>(), PYHOST_TYPE, "", "str");
  EXPECT_ERROR(ident.call<pyh::bytes>("not bytes"), PYHOST_TYPE, "", "bytes");
  // keywords named at run time that a format cannot carry: refused, never a dangling view
  EXPECT_ERROR(ident.call<std::string_view>(pyh::kw("x y", 1)), PYHOST_MISUSE, "", "std::string_view");
}

TEST_CASE(expression_wrapper) {
  auto py = start();
  auto e = py.expression("x, y", "x * 2 + y");
  CHECK(e.call<int>(20, 1) == 41);
  CHECK(e.call<int64_t>(20, "y"_kw = 2) == 42);
  CHECK(e.call<double>(1.5, 0.5) == 3.5);
  CHECK(py.expression("s", "s.upper()").call<std::string_view>("abc") == "ABC");
  py.exec("x = 1000");  // an expression reads no global of __main__
  CHECK(py.expression("", "len('abc')").call<int>() == 3);
  EXPECT_ERROR(e.call<int>(1), PYHOST_PYEXC, "TypeError", "y");
  EXPECT_ERROR(e.call<int>("a", 1), PYHOST_PYEXC, "TypeError", nullptr);
  EXPECT_ERROR(py.expression("x", "x +"), PYHOST_PYEXC, "SyntaxError", nullptr);
  EXPECT_ERROR(py.expression("x,,", "x"), PYHOST_MISUSE, "", nullptr);
  EXPECT_ERROR(e.call<int>(1, pyh::kw("not a name", 2)), PYHOST_MISUSE, "", "expression");
  EXPECT_ERROR(e.call<int>(std::vector<int>{1}, 1), PYHOST_PYEXC, "TypeError", nullptr);  // list * 2 + 1
}

// ---- RAII --------------------------------------------------------------------

TEST_CASE(raii_values_copy_and_move) {
  auto py = start();
  py.exec("import fractions\nfr = fractions.Fraction(2, 3)\nimport sys\n");
  int before = py.eval<int>("sys.getrefcount(fr)");
  {
    pyh::value a = py.global("fr");
    pyh::value b = a;              // a new reference
    pyh::value c = std::move(a);   // the same one
    CHECK(!a && b && c);
    CHECK(py.eval<int>("sys.getrefcount(fr)") == before + 2);
    b = c;                         // copy-assign drops b's old reference
    CHECK(py.eval<int>("sys.getrefcount(fr)") == before + 2);
  }
  CHECK(py.eval<int>("sys.getrefcount(fr)") == before);
}

TEST_CASE(raii_functions_plugins_modules) {
  auto py = start();
  py.exec("import sys\ndef f(): return 1\n");
  int before = py.eval<int>("sys.getrefcount(f)");
  {
    pyh::function a = py.function("f");
    pyh::function b = std::move(a);
    CHECK(b.call<int>() == 1);
    CHECK(py.eval<int>("sys.getrefcount(f)") > before);
  }
  CHECK(py.eval<int>("sys.getrefcount(f)") == before);
  std::string module_name;
  {
    pyh::plugin p = py.load_plugin((std::string(check_arg4) + "/scorer.py").c_str());
    module_name = pyhost_plugin_module_name(p.get());
    pyh::plugin q = std::move(p);
    CHECK(py.eval<bool>(("'" + module_name + "' in sys.modules").c_str()));
  }
  CHECK(!py.eval<bool>(("'" + module_name + "' in sys.modules").c_str()));  // unloaded once
  {
    auto m = py.module("gone");
    m.def("f", [] { return 1; });
    auto m2 = std::move(m);
    CHECK(py.eval<int>("__import__('gone').f()") == 1);
    py.exec("import gone\nkept = gone.f\n");
  }
  CHECK(!py.eval<bool>("'gone' in sys.modules"));
  EXPECT_ERROR(py.exec("kept()"), PYHOST_PYEXC, "RuntimeError", "unregistered");
}

TEST_CASE(raii_nothing_leaks_when_an_exception_unwinds) {
  auto py = start();
  py.exec("def boom(*a, **k): raise ValueError('boom')\n");
  auto f = py.function("boom");
  for (int i = 0; i < 100; i++) {
    try {
      std::vector<std::string> big(10, std::string(100, 'x'));
      std::map<std::string, std::vector<int>> m{{"a", {1, 2, 3}}};
      f.call<double>(big, m, "k"_kw = big);  // argument values built, then the call throws
    } catch (const pyh::error &e) {
      CHECK(e.type_name() == "ValueError");
    }
  }
  // a conversion that fails half way through an argument list
  EXPECT_ERROR(f.call<int>(std::vector<unsigned long long>{1, UINT64_MAX}), PYHOST_RANGE, "", nullptr);
}

// Handles used after their interpreter was destroyed (issue 39): a pyh::error with
// PYHOST_MISUSE saying so, never a read of the freed interpreter (valgrind and ASan run
// this case), and their destructors afterwards are clean.
TEST_CASE(stale_handles_after_the_interpreter) {
  pyh::function f, hook;
  pyh::plugin p;
  pyh::module m;
  pyh::type<Counter> counter;
  pyh::value obj, list;
  pyhost *stale = nullptr;
  {
    auto py = start();
    stale = py;
    f = py.function("len");
    p = py.load_plugin((std::string(check_arg4) + "/scorer.py").c_str());
    hook = p.hook("count");
    m = py.module("app");
    m.def("twice", [](int x) { return 2 * x; });
    counter = m.type<Counter>("Counter").init<std::string, int>().def("add", &Counter::add).make();
    obj = counter.create("kept", 1);
    list = py.eval("[1, 2, 3]");
  }  // the interpreter is gone: Python finalized, the handle freed
  const char *stale_text = "not a live pyhost handle";
  EXPECT_ERROR(f.call<int>("abc"), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(f.call<int>("abc", "k"_kw = 1), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(f.call<int>(std::vector<int>{1}), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(hook.call<int>("[1]"), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(p.call<int>("count", "[1]"), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(p.has_hook("count"), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(p.hook("count"), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(p.reload(), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(p.hooks(), PYHOST_MISUSE, "", stale_text);
  CHECK_STR(p.name(), "scorer");
  EXPECT_ERROR(m.def("more", [] { return 1; }), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(m.add("x", 1), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(m.add_exception("Error"), PYHOST_MISUSE, "", stale_text);
  expect_error([&] { m.type<Counter>("Other").init<std::string, int>().make(); }, PYHOST_MISUSE, "", stale_text,
               __LINE__);
  EXPECT_ERROR(counter.create("new", 2), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(counter.of(obj), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(counter.object(), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(obj.repr(stale), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(pyh::gil_guard(stale), PYHOST_MISUSE, "", stale_text);
  EXPECT_ERROR(pyh::thread_attachment(stale), PYHOST_MISUSE, "", stale_text);
  CHECK(list.as<std::vector<int>>().size() == 3);  // plain C data needs no Python
  CHECK(pyhost_python_version(stale) == 0);
}  // and every handle's destructor runs after the interpreter's

// ---- threads -----------------------------------------------------------------

TEST_CASE(gil_guard_and_thread_attachment) {
  auto py = start();
  py.exec("import threading\nlocal = threading.local()\n"
          "def bump():\n    local.n = getattr(local, 'n', 0) + 1\n    return local.n\n");
  auto bump = py.function("bump");
  {
    pyh::gil_guard gil(py);
    for (int i = 0; i < 10; i++) bump.call<int>();
  }
  int last_attached = 0, last_detached = 0;
  std::thread t([&] {
    {
      pyh::thread_attachment attach(py);  // the thread state (and threading.local) lasts
      for (int i = 0; i < 5; i++) last_attached = bump.call<int>();
    }
    for (int i = 0; i < 5; i++) last_detached = bump.call<int>();  // a new state per call
  });
  t.join();
  CHECK(last_attached == 5);
  CHECK(last_detached == 1);
  EXPECT_ERROR(pyh::gil_guard(nullptr), PYHOST_MISUSE, "", nullptr);
}

// ---- bulk data: loans, views and arrays -----------------------------------------

static int cpp_freed;

// A host function's `const pyh::view &` parameter: a borrowed view (pyhost_args_view),
// released by pyhost when the function returns; letting the pyh::view go releases
// nothing twice.
TEST_CASE(view_parameters_are_borrowed) {
  auto py = start();
  pyhost *h = py.get();
  py.exec(err_helper);
  static pyhost_view kept;
  auto m = py.module("bv");
  m.def("total", [](const pyh::view &v) {
     uint64_t t = 0;
     for (uint8_t b : v.as<const uint8_t>()) t += b;
     kept = v.raw();
     return t;
   }).def("zero", [](const pyh::view &v) {
     auto items = v.as<uint8_t>();  // read-only buffers throw: TypeError for Python
     for (auto &b : items) b = 0;
     return items.size();
   });
  py.exec("import bv\nba = bytearray(b'\\x01\\x02\\x03')\nimport sys\nbase = sys.getrefcount(ba)");
  CHECK_STR(py.eval("(bv.total(b'ab'), bv.total(ba), bv.zero(ba), ba)").repr(h),
            "(195, 6, 3, bytearray(b'\\x00\\x00\\x00'))");
  // released when the function returned: the bytearray resizes, its count is back
  py.exec("ba.append(1)");
  CHECK_STR(py.eval("sys.getrefcount(ba) - base").repr(h), "0");
  pyhost_view_release(h, &kept);  // a copy kept past the call: refused
  CHECK_HAS(pyhost_errmsg(h), "borrowed view");
  CHECK_STR(py.eval("sys.getrefcount(ba) - base").repr(h), "0");
  CHECK_HAS(py.eval("err(bv.total, 5)").repr(h), "expected bytes-like object, got int");
  CHECK_HAS(py.eval("err(bv.zero, b'ro')").repr(h), "read-only");
}

TEST_CASE(bulk_loans_views_arrays) {
  auto py = start();
  pyhost *h = py.get();
  py.exec(err_helper);
  bool in_place = check_minor() >= 11;
  // a loan of a 2x3 float image: Python reads (and, in place, writes) it
  float *img = new float[6]{0, 1, 2, 3, 4, 5};
  cpp_freed = 0;
  {
    pyh::buffer b(h, img, {2, 3}, [](void *d, void *) { delete[] static_cast<float *>(d); cpp_freed++; });
    CHECK(b.in_place() == in_place);
    py.set_global("img", b.memoryview());
    CHECK_STR(py.eval("(img.format, img.shape, img.tolist())").repr(h),
              "('f', (2, 3), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])");
    py.exec("img[1, 2] = 50.0");
    if (in_place) CHECK(img[5] == 50.0f);
    py.exec("kept = img.cast('B')");  // Python keeps a view past the release
    size_t left = b.release();
    CHECK(left == (in_place ? 1u : 0u));
    CHECK(!b);
    CHECK(b.release() == 0);  // twice: nothing
    CHECK(cpp_freed == (in_place ? 0 : 1));
    py.exec("del kept");
  }  // the destructor of a released loan does nothing more
  CHECK(cpp_freed == 1);
  // a read-only loan from const data
  static const int32_t table[4] = {7, -8, 9, 10};
  pyh::buffer ro(h, table, {4});
  py.set_global("t", ro.memoryview());
  CHECK_STR(py.eval("(t.readonly, t.format, list(t))").repr(h), "(True, 'i', [7, -8, 9, 10])");
  CHECK_HAS(py.eval("err(t.__setitem__, 0, 1)").repr(h), "TypeError");
  // views: a bytearray, and the format and layout checks of as<T>()
  py.exec("ba = bytearray(b'abcd')\nimport array\nad = array.array('d', [0.5, 1.5, 2.5])");
  {
    pyh::view v(h, py.global("ba"));
    auto bytes = v.as<uint8_t>();
    CHECK(bytes.size() == 4 && bytes[0] == 'a' && !v.readonly() && v.ndim() == 1);
    bytes[0] = 'z';
    CHECK_STR(py.eval("ba").repr(h), "bytearray(b'zbcd')");
    EXPECT_ERROR(v.as<int32_t>(), PYHOST_TYPE, "", "format is \"B\", not \"i\"");
    pyh::view moved = std::move(v);  // the C view stays where it is: its pointers too
    CHECK(!v && moved.as<const uint8_t>()[1] == 'b');
    CHECK(moved.shape() == std::vector<ptrdiff_t>{4});
  }
  {
    pyh::view v(h, py.global("ad"));
    auto d = v.as<const double>();
    CHECK(d.size() == 3 && d[2] == 2.5);
    double sum = 0;
    for (double x : d) sum += x;
    CHECK(sum == 4.5);
    if (v.copied()) EXPECT_ERROR(v.as<double>(), PYHOST_TYPE, "", "read-only");
  }
  EXPECT_ERROR(pyh::view(h, py.eval("3")), PYHOST_TYPE, "", nullptr);
  // arrays of numbers both ways
  std::vector<int64_t> ints{1, -2, INT64_MAX};
  py.set_global("li", pyh::list_of(h, ints));
  CHECK_STR(py.eval("li").repr(h), "[1, -2, 9223372036854775807]");
  CHECK(pyh::int64s_of(h, py.eval("list(range(100))")).size() == 100);
  CHECK(pyh::int64s_of(h, py.eval("(5, 6)")) == (std::vector<int64_t>{5, 6}));
  CHECK(pyh::doubles_of(h, pyh::list_of(h, std::vector<double>{0.5, -1})) == (std::vector<double>{0.5, -1}));
  CHECK(pyh::int64s_of(h, py.eval("[]")).empty());
  EXPECT_ERROR(pyh::int64s_of(h, py.eval("[1, 'x']")), PYHOST_TYPE, "", "item 1");
  EXPECT_ERROR(pyh::int64s_of(h, py.eval("[2**64]")), PYHOST_RANGE, "", nullptr);
}
