// fuzz_cpp.cpp: libFuzzer target for the C++ layer, include/pyhost.hpp (issue 39).
//
// The input is a program of operations, each a byte with the bytes after it as data:
// numbers at the 64-bit edges through every conversion the layer has (pyh::value,
// prepared calls, calls with keywords that go as a format, calls that go as value
// trees, Python's own ints), strings and containers the same ways, host functions of
// every parameter type called from Python with any argument, a host class whose
// constructor, methods and properties take integers of each width, errors as data,
// C++ exceptions thrown through Python, GIL and thread scopes, and handles used after
// their interpreter is gone (in a forked child).  Every route must give the same
// answer, and the answer the C++ type's range says: the value, or pyh::error with
// PYHOST_RANGE / PYHOST_TYPE; Python sees OverflowError / TypeError.
#include "pyhost.hpp"

extern "C" {
#include "fuzz_python.h"
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "fuzz_cpp: %s\n", what.c_str());
  std::abort();
}

struct input {
  const uint8_t *p;
  size_t n;
  uint64_t take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
      v = v << 8 | (n ? *p : 0);
      if (n) p++, n--;
    }
    return v;
  }
};

// An interrupt (the unit's budget ran out) ends the unit, wherever it lands.
void pass_interrupts(const pyh::error &e) {
  if (e.status() == PYHOST_INTERRUPTED) throw;
}

// ---- the host side ----

struct Acc {
  int64_t n = 0;
  uint8_t small = 0;
  double x = 0;
  explicit Acc(int64_t start) : n(start) {}
  int64_t add(int32_t k) {
    n = static_cast<int64_t>(static_cast<uint64_t>(n) + static_cast<uint64_t>(k));
    return n;
  }
};

pyh::interpreter *py;
pyh::module *cx;
pyh::type<Acc> *acc;
pyh::function *echo, *echo_kw;

const char *const oracle = R"PY(
import cx

class IntSub(int):
    def __index__(s): raise AssertionError('__index__ ran')
    def __int__(s): raise AssertionError('__int__ ran')
    def __float__(s): raise AssertionError('__float__ ran')

POOL = [0, 1, -1, 127, 128, -128, -129, 255, 256, 2**15 - 1, 2**15, -2**15 - 1, 2**16,
        2**31 - 1, 2**31, -2**31 - 1, 2**32, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64,
        True, False, None, 1.5, -0.0, float('nan'), 'x', 'h\u00e9', '\ud800', b'b', [1, 2],
        (3, 'y'), {'k': 1}, {1: 2}, IntSub(9), [2**63], ['s', 1], object()]
RANGES = {'i8': (-2**7, 2**7 - 1), 'u8': (0, 2**8 - 1), 'i16': (-2**15, 2**15 - 1),
          'u16': (0, 2**16 - 1), 'i32': (-2**31, 2**31 - 1), 'u32': (0, 2**32 - 1),
          'i64': (-2**63, 2**63 - 1), 'u64': (0, 2**63 - 1)}

def is_int(x):
    return isinstance(x, int) and type(x) is not bool

def want(name, x):
    """what cx.<name>(x) returns, or the exception class it raises"""
    if name in RANGES:
        lo, hi = RANGES[name]
        if not is_int(x):
            return TypeError
        return int.__int__(x) if lo <= x <= hi else OverflowError
    if name == 'f64':
        if isinstance(x, float):
            return x
        if is_int(x):
            return float(int.__int__(x)) if abs(x) < 2**1000 else OverflowError
        return TypeError
    if name == 'b':
        return x if x is True or x is False else TypeError
    if name in ('sv', 's', 'cs'):
        if not isinstance(x, str):
            return TypeError
        try:
            x.encode()
        except UnicodeEncodeError:
            return UnicodeEncodeError
        return len(x.encode()) if name == 'cs' else x
    if name == 'opt':
        if x is None:
            return -1
        return want('i32', x)
    if name == 'vec':
        if not isinstance(x, (list, tuple)):
            return TypeError
        items = [want('i64', i) for i in x]
        for i in items:
            if isinstance(i, type):
                return i
        return sum(items) if abs(sum(items)) < 2**63 else OverflowError
    return None

def check(name, x):
    w = want(name, x)
    try:
        r = getattr(cx, name)(x)
    except (TypeError, OverflowError, UnicodeError, ValueError) as e:
        # a scalar's rule names the exception; a container's element fails either way
        if not (isinstance(w, type) and (name not in RANGES or isinstance(e, w))):
            raise AssertionError('cx.%s(%r) raised %r, want %r' % (name, x, e, w))
        return
    if isinstance(w, type) or not (r == w or (r != r and w != w)) or type(r) is not type(w):
        raise AssertionError('cx.%s(%r) returned %r, want %r' % (name, x, r, w))
)PY";

void setup() {
  py = new pyh::interpreter(fuzz_python_library());
  fuzz_python_adopt(py->get());
  cx = new pyh::module(py->module("cx"));
  cx->def("i8", [](int8_t x) { return x; })
      .def("u8", [](uint8_t x) { return x; })
      .def("i16", [](int16_t x) { return x; })
      .def("u16", [](uint16_t x) { return x; })
      .def("i32", [](int32_t x) { return x; })
      .def("u32", [](uint32_t x) { return x; })
      .def("i64", [](int64_t x) { return x; })
      .def("u64", [](uint64_t x) { return x; })
      .def("f64", [](double x) { return x; })
      .def("b", [](bool x) { return x; })
      .def("sv", [](std::string_view x) { return std::string(x); })
      .def("s", [](const std::string &x) { return x; })
      .def("cs", [](const char *x) { return static_cast<int64_t>(std::strlen(x)); })
      .def("opt", [](std::optional<int32_t> x) { return x ? static_cast<int64_t>(*x) : int64_t{-1}; })
      .def("vec", [](const std::vector<int64_t> &v) {
        int64_t t = 0;
        for (int64_t x : v)
          if (__builtin_add_overflow(t, x, &t)) throw std::overflow_error("the sum overflows");
        return t;
      })
      .def("big", [](int k) -> uint64_t { return (uint64_t{1} << 63) + static_cast<uint64_t>(k); })
      .def("throw", [](int k) -> int {
        switch (k) {
        case 0: throw std::invalid_argument("invalid");
        case 1: throw std::out_of_range("out of range");
        case 2: throw std::overflow_error("overflow");
        case 3: throw pyh::python_error("KeyError", "by name");
        case 4: throw pyh::error(PYHOST_RANGE, "", "range");
        case 5: throw 42;
        default: return k;
        }
      });
  acc = new pyh::type<Acc>(cx->type<Acc>("Acc")
                               .init<int64_t>()
                               .def("add", &Acc::add)
                               .property("n", &Acc::n)
                               .property("small", &Acc::small)
                               .property("x", &Acc::x)
                               .make());
  py->exec(oracle, "<fuzz oracle>");
  py->exec("def echo(x): return x\n"
           "def echo_kw(*a, **k): return k.get('x', a[0] if a else None)\n");
  echo = new pyh::function(py->function("echo"));
  echo_kw = new pyh::function(py->function("echo_kw"));
}

// ---- integers: every route agrees with the type's range ----

template <class T> bool fits(int64_t i) {
  if (std::is_signed<T>::value)
    return i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           (sizeof(T) == 8 || i <= static_cast<int64_t>(std::numeric_limits<T>::max()));
  return i >= 0 && (sizeof(T) == 8 || static_cast<uint64_t>(i) <= std::numeric_limits<T>::max());
}

// r() gives a T or throws; it must give T(i) when i fits T, else PYHOST_RANGE.
template <class T, class F> void agrees(const char *route, int64_t i, F &&r) {
  bool ok = fits<T>(i);
  try {
    T got = r();
    if (!ok || got != static_cast<T>(i))
      die(std::string(route) + ": " + std::to_string(i) + " read as " + std::to_string(got) +
          (ok ? "" : " (does not fit)") + " into a " + std::to_string(sizeof(T)) + "-byte int");
  } catch (const pyh::error &e) {
    pass_interrupts(e);
    if (ok || e.status() != PYHOST_RANGE)
      die(std::string(route) + ": " + std::to_string(i) + ": " + e.status_name() + " " + e.what());
  }
}

template <class T> void ints_as(int64_t i) {
  pyh::value v(i);
  agrees<T>("pyh::from_value", i, [&] { return pyh::from_value<T>(v.get()); });
  agrees<T>("a prepared call", i, [&] { return echo->call<T>(i); });
  agrees<T>("a call with keywords (callf)", i, [&] { return echo_kw->call<T>(pyh::kw("x", i)); });
  agrees<T>("a call with keywords (value trees)", i,
            [&] { return echo_kw->call<T>(pyh::kw("x", std::optional<int64_t>(i))); });
  agrees<T>("a call by name", i, [&] { return py->call<T>("echo", i); });
  agrees<T>("eval", i, [&] { return py->eval<T>(std::to_string(i).c_str()); });
}

void op_ints(input &in) {
  int64_t i = static_cast<int64_t>(in.take(8));
  switch (in.take(1) % 4) { // near an edge more often than not
  case 0: i = (i & 8 ? INT64_MIN / 2 : INT64_MIN) + (i & 7); break;
  case 1: i = INT64_MAX - (i & 7); break;
  case 2: i = (i % 300) + (int64_t{1} << ((static_cast<uint64_t>(i) >> 8) % 63)); break;
  default: break;
  }
  ints_as<int8_t>(i), ints_as<uint8_t>(i), ints_as<int16_t>(i), ints_as<uint16_t>(i);
  ints_as<int32_t>(i), ints_as<uint32_t>(i), ints_as<int64_t>(i), ints_as<uint64_t>(i);
  // an unsigned beyond INT64_MAX has no Python int pyhost makes: PYHOST_RANGE each way
  uint64_t u = static_cast<uint64_t>(i) | (uint64_t{1} << 63);
  for (int route = 0; route < 4; route++) {
    try {
      switch (route) {
      case 0: pyh::value{u}; break;
      case 1: echo->call<int64_t>(u); break;
      case 2: echo_kw->call<int64_t>(pyh::kw("x", u)); break;
      default: echo_kw->call<int64_t>(pyh::kw("x", std::vector<uint64_t>{u})); break;
      }
      die("an unsigned beyond INT64_MAX went to Python, route " + std::to_string(route));
    } catch (const pyh::error &e) {
      pass_interrupts(e);
      if (e.status() != PYHOST_RANGE) die(std::string("an unsigned beyond INT64_MAX: ") + e.what());
    }
  }
  // beyond 64 bits from Python
  std::string big = "2**64 + " + std::to_string(i);
  try {
    py->eval<int64_t>(big.c_str());
    die(big + " read as an int64_t");
  } catch (const pyh::error &e) {
    pass_interrupts(e);
    if (e.status() != PYHOST_RANGE) die(big + ": " + e.what());
  }
  // a host function's unsigned result beyond INT64_MAX raises OverflowError in Python
  py->exec(("try:\n    cx.big(" + std::to_string(i & 0xff) +
            ")\nexcept OverflowError:\n    pass\nelse:\n    raise AssertionError('cx.big')\n")
               .c_str());
}

// ---- floats, strings, containers ----

void op_floats(input &in) {
  uint64_t bits = in.take(8);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  double a = echo->call<double>(d), b = echo_kw->call<double>(pyh::kw("x", d)),
         c = pyh::from_value<double>(pyh::value(d).get());
  for (double x : {a, b, c})
    if (std::memcmp(&x, &d, sizeof d) != 0 && !(std::isnan(x) && std::isnan(d)))
      die("a double did not come back bit for bit");
  try {
    pyh::from_value<int64_t>(pyh::value(d).get());
    die("a float read as an int");
  } catch (const pyh::error &e) {
    pass_interrupts(e);
    if (e.status() != PYHOST_TYPE) die(std::string("a float read as an int: ") + e.what());
  }
}

void op_strings(input &in) {
  size_t n = in.take(1) % 24;
  std::string s;
  for (size_t i = 0; i < n; i++) s += static_cast<char>(in.take(1));
  for (int route = 0; route < 4; route++) {
    try {
      std::string got;
      switch (route) {
      case 0: got = echo->call<std::string>(std::string_view(s)); break;
      case 1: got = echo_kw->call<std::string>(pyh::kw("x", s)); break;
      case 2: got = echo_kw->call<std::string>(pyh::kw("x", std::optional<std::string>(s))); break;
      default: got = py->call<std::string>("echo", s); break;
      }
      if (got != s) die("a str did not come back as it went");
    } catch (const pyh::error &e) {
      pass_interrupts(e);
      if (e.status() != PYHOST_PYEXC || e.type_name() != "UnicodeDecodeError")
        die(std::string("a str: ") + e.status_name() + " " + e.type_name() + ": " + e.what());
    }
  }
}

void op_containers(input &in) {
  std::vector<int64_t> v;
  std::map<std::string, int64_t> m;
  size_t n = in.take(1) % 6;
  for (size_t i = 0; i < n; i++) {
    int64_t x = static_cast<int64_t>(in.take(8));
    v.push_back(x);
    m[std::to_string(x % 5)] = x;
  }
  auto t = std::make_tuple(n, std::string("t"), std::optional<double>());
  if (echo->call<std::vector<int64_t>>(v) != v) die("a vector did not come back");
  if (echo_kw->call<std::map<std::string, int64_t>>(pyh::kw("x", m)) != m) die("a map did not come back");
  if (echo->call<decltype(t)>(t) != t) die("a tuple did not come back");
  try {
    echo->call<std::vector<int8_t>>(v);
    for (int64_t x : v)
      if (!fits<int8_t>(x)) die("a vector<int8_t> took an int that does not fit");
  } catch (const pyh::error &e) {
    pass_interrupts(e);
    if (e.status() != PYHOST_RANGE) die(std::string("vector<int8_t>: ") + e.what());
  }
}

// ---- host functions and the class, from Python ----

const char *const cx_names[] = {"i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f64",
                                "b", "sv", "s", "cs", "opt", "vec"};

void op_host_functions(input &in) {
  std::string code;
  for (int k = 0; k < 4; k++) {
    unsigned f = static_cast<unsigned>(in.take(1)), x = static_cast<unsigned>(in.take(1));
    code += "check('" + std::string(cx_names[f % 15]) + "', POOL[" + std::to_string(x) + " % len(POOL)])\n";
  }
  py->exec(code.c_str(), "<host functions>");
}

void op_class(input &in) {
  unsigned k = static_cast<unsigned>(in.take(1)), x = static_cast<unsigned>(in.take(1));
  std::string code =
      "a = cx.Acc(5)\n"
      "x = POOL[" + std::to_string(x) + " % len(POOL)]\n"
      "attr = ('n', 'small', 'x')[" + std::to_string(k % 3) + "]\n"
      "w = want(('i64', 'u8', 'f64')[" + std::to_string(k % 3) + "], x)\n"
      "try:\n"
      "    setattr(a, attr, x)\n"
      "except (TypeError, OverflowError) as e:\n"
      "    assert isinstance(w, type), (attr, x, e)\n"
      "else:\n"
      "    g = getattr(a, attr)\n"
      "    assert not isinstance(w, type) and (g == w or g != g and w != w), (attr, x, g, w)\n"
      "try:\n"
      "    b = cx.Acc(x)\n"
      "    assert not isinstance(want('i64', x), type) and b.n == want('i64', x), x\n"
      "    r = b.add(x)\n"
      "    assert not isinstance(want('i32', x), type), ('add', x)\n"
      "except (TypeError, OverflowError) as e:\n"
      "    pass\n"
      "A = a\n";
  py->exec(code.c_str(), "<class>");
  pyh::value obj = py->global("A");
  Acc &a = acc->of(obj);
  if (a.n != py->eval<int64_t>("A.n") || a.small != py->eval<uint8_t>("A.small"))
    die("the C++ object and Python disagree");
  if (k & 4) {
    pyh::value made = acc->create(static_cast<int64_t>(in.take(8)));
    acc->of(made).add(1);
  }
}

// ---- errors ----

void op_errors(input &in) {
  static const char *const raisers[] = {
      "1/0", "raise KeyError('k')", "import json\njson.loads('{')", "raise SystemExit(3)",
      "x = (1,", "def f():\n    raise ValueError('v')\nf()", "cx.throw(0)", "cx.throw(1)",
      "cx.throw(2)", "cx.throw(3)", "cx.throw(4)", "cx.throw(5)", "cx.i8(1000)",
      "class E(Exception):\n    def __str__(s): raise KeyboardInterrupt\nraise E()",
  };
  unsigned k = static_cast<unsigned>(in.take(1)) % 14;
  try {
    py->exec(raisers[k], "err.py");
    die(std::string("no error from ") + raisers[k]);
  } catch (const pyh::system_exit &e) {
    if (e.code() != 3 || e.type_name() != "SystemExit") die("SystemExit's data");
  } catch (const pyh::error &e) {
    pass_interrupts(e);
    if (e.status() != PYHOST_PYEXC || e.type_name().empty() || e.type_name() != pyhost_errtype(*py))
      die(std::string("an exception's type: ") + e.type_name());
    if (e.frames().size() != pyhost_errframe_count(*py)) die("an exception's frames");
    if (std::string(e.what()) != pyhost_errmsg(*py)) die("what() is not the message");
    static const char *const types[] = {"ZeroDivisionError", "KeyError", "json.decoder.JSONDecodeError",
                                        "", "SyntaxError", "ValueError", "ValueError", "IndexError",
                                        "OverflowError", "KeyError", "OverflowError", "RuntimeError",
                                        "OverflowError", "E"};
    if (e.type_name() != types[k]) die(std::string(raisers[k]) + ": " + e.type_name());
  }
  py->eval<int>("1");  // nothing left set
}

// ---- scopes ----

void op_scopes(input &in) {
  unsigned k = static_cast<unsigned>(in.take(1));
  pyh::gil_guard g(*py);
  {
    pyh::thread_attachment t(*py);
    if (echo->call<int>(static_cast<int>(k)) != static_cast<int>(k)) die("a call in a scope");
    if (k & 1) {
      pyh::gil_guard nested(*py);
      py->call<void>("cx.i8", static_cast<int>(k & 0x7f));
    }
  }
}

// ---- handles after their interpreter (a forked child: finalize ends CPython) ----

void op_stale() {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    alarm(30);
    int misuse = 0, total = 0;
    {
    pyh::value obj = acc->create(int64_t{1});
    pyh::function f = py->function("echo");
    delete py;  // finalize and free: every handle made from it is stale now
    auto stale = [&](auto &&call) {
      total++;
      try {
        call();
      } catch (const pyh::error &e) {
        misuse += e.status() == PYHOST_MISUSE;
      }
    };
    stale([&] { f.call<int>(1); });
    stale([&] { echo_kw->call<int>(pyh::kw("x", 1)); });
    stale([&] { acc->of(obj); });
    stale([&] { acc->create(int64_t{2}); });
    }  // the function and the value go after the interpreter: safe
    if (misuse != total) _exit(3);
    delete echo;
    delete echo_kw;
    delete acc;
    delete cx;  // module, type and functions destroyed after the interpreter: safe
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    die(std::string("the child using stale handles ") + (WIFEXITED(st) ? "exited with " : "died of signal ") +
        std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!py) setup();
  input in{data, size};
  fuzz_unit_begin(2000);
  try {
    for (int ops = 0; in.n && ops < 16 && !fuzz_unit_expired(); ops++) {
      uint8_t code = static_cast<uint8_t>(in.take(1));
      switch (code % 9) {
      case 0: op_ints(in); break;
      case 1: op_floats(in); break;
      case 2: op_strings(in); break;
      case 3: op_containers(in); break;
      case 4: op_host_functions(in); break;
      case 5: op_class(in); break;
      case 6: op_errors(in); break;
      case 7: op_scopes(in); break;
      default:
        if (code == 0xff) op_stale();
      }
    }
  } catch (const pyh::interrupted &) {
    // the unit ran past its budget
  } catch (const pyh::error &e) {
    if (!fuzz_unit_expired()) die(std::string("unexpected: ") + e.status_name() + " " + e.what());
  }
  fuzz_unit_end();
  return 0;
}
