// pyhost.hpp: the header-only C++17 layer over pyhost.h (docs/cpp.md).
//
// RAII handles (interpreter, value, function, plugin, module, type), errors as
// exceptions, calls with conversion by C++ type both ways, keyword arguments, host
// functions from lambdas and function pointers, host types from C++ classes, GIL and
// thread scopes.  Templates over the public C API only: no Python headers, no ABI of
// its own, nothing C++ inside libpyhost.  Every call goes through the fastest C route:
// prepared calls (pyhost_prepared_call_*), fast host functions and fast host types with
// inline payloads (borrowed pyhost_args views, pyhost_ret results).
//
// Non-goals: a second object model (Python objects stay pyhost values), implicit
// conversions the C layer does not offer (a str result is copied into std::string; a
// std::string_view is borrowed only where pyhost lends a buffer: host function
// arguments and call arguments).
#ifndef PYHOST_HPP
#define PYHOST_HPP

#include "pyhost.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <initializer_list>
#include <cstddef>
#include <cstdint>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

// A host's own globals (say `h`) must not make -Wshadow warn about this header's
// parameters.
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wshadow"
#endif

// A cold path kept out of the hot function that reaches it.
#if defined(__GNUC__)
#  define PYH_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#  define PYH_NOINLINE __declspec(noinline)
#else
#  define PYH_NOINLINE
#endif

namespace pyh {

// ---- errors ----------------------------------------------------------------

// One entry of a Python traceback (pyhost_errframe): the file, the line (0 when Python
// knows none) and the function ("<module>" for top-level code; "" for a SyntaxError's
// own place).
struct frame {
  std::string file;
  int line = 0;
  std::string function;
};

// A failed pyhost call: the status (PYHOST_PYEXC, PYHOST_TYPE, ...); for a Python
// exception, its type as the traceback names it (type_name(): "ValueError",
// "json.decoder.JSONDecodeError"), its message without the traceback (message()) and
// its traceback's frames (frames()), read from the exception itself (pyhost_errtype,
// pyhost_errtext, pyhost_errframe); what() = pyhost_errmsg's text, which for a Python
// exception is the formatted exception with its traceback.  For pyhost's own errors
// type_name() is "", message() is what() and frames() is empty.
class error : public std::runtime_error {
 public:
  error(int status, std::string type_name, const std::string &message)
      : std::runtime_error(message), status_(status), type_name_(std::move(type_name)), message_(message) {}
  error(int status, std::string type_name, std::string message, std::vector<pyh::frame> frames,
        const std::string &what)
      : std::runtime_error(what), status_(status), type_name_(std::move(type_name)),
        message_(std::move(message)), frames_(std::move(frames)) {}
  int status() const noexcept { return status_; }
  const char *status_name() const noexcept { return pyhost_status_name(status_); }
  const std::string &type_name() const noexcept { return type_name_; }
  // The exception's message alone: str(exception) ("Expecting value: line 1 column 1
  // (char 0)"), a SyntaxError's msg.
  const std::string &message() const noexcept { return message_; }
  // The traceback's frames, outermost first: frames().back() raised.
  const std::vector<pyh::frame> &frames() const noexcept { return frames_; }
  // The formatted exception with its traceback (the same text as what()).
  const char *traceback() const noexcept { return what(); }

 private:
  int status_;
  std::string type_name_;
  std::string message_;
  std::vector<pyh::frame> frames_;
};

// SystemExit raised by Python code (PYHOST_EXIT): the host keeps running.
class system_exit : public error {
 public:
  system_exit(int code, const std::string &message)
      : error(PYHOST_EXIT, "SystemExit", message), code_(code) {}
  system_exit(int code, std::string type_name, std::string message, std::vector<pyh::frame> frames,
              const std::string &what)
      : error(PYHOST_EXIT, std::move(type_name), std::move(message), std::move(frames), what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// The call was stopped by pyhost_interrupt (PYHOST_INTERRUPTED).
class interrupted : public error {
 public:
  explicit interrupted(const std::string &message)
      : error(PYHOST_INTERRUPTED, "pyhost.Interrupted", message) {}
  interrupted(std::string message, std::vector<pyh::frame> frames, const std::string &what)
      : error(PYHOST_INTERRUPTED, "pyhost.Interrupted", std::move(message), std::move(frames), what) {}
};

// Thrown by a host function (or method) to raise a Python exception of a class named
// by a dotted name: throw pyh::python_error("KeyError", "no such item").
class python_error : public std::runtime_error {
 public:
  python_error(std::string type_name, const std::string &message)
      : std::runtime_error(message), type_name_(std::move(type_name)) {}
  const std::string &type_name() const noexcept { return type_name_; }

 private:
  std::string type_name_;
};

namespace detail {

// The frames of the last failed call on h (read before any other call on h).
inline std::vector<pyh::frame> frames_of(const pyhost *h) {
  std::vector<pyh::frame> out;
  size_t n = pyhost_errframe_count(h);
  out.reserve(n);
  for (size_t i = 0; i < n; i++) {
    const char *file = "", *function = "";
    int line = 0;
    if (pyhost_errframe(h, i, &file, &line, &function) != PYHOST_OK) break;
    out.push_back(pyh::frame{file, line, function});
  }
  return out;
}

// Throws the exception that status rc of the last call on h stands for, with the
// Python exception's data read from pyhost (never parsed from the text).
[[noreturn]] inline PYH_NOINLINE void throw_status(pyhost *h, int rc) {
  if (rc == PYHOST_NOMEM) throw std::bad_alloc();
  std::string what = pyhost_errmsg(h), type = pyhost_errtype(h), text = pyhost_errtext(h);
  std::vector<pyh::frame> frames = frames_of(h);
  if (rc == PYHOST_EXIT)
    throw system_exit(pyhost_exit_code(h), type.empty() ? "SystemExit" : std::move(type), std::move(text),
                      std::move(frames), what);
  if (rc == PYHOST_INTERRUPTED) throw interrupted(std::move(text), std::move(frames), what);
  throw error(rc, std::move(type), std::move(text), std::move(frames), what);
}

// Runs f; a value of the wrong type or a number out of range (PYHOST_TYPE,
// PYHOST_RANGE) is thrown again with "<who()>: " before its message, so that the error
// names what was called: "plugin scorer: hook score: the result: expected float, got
// str".  who is called only then.
// (The renaming is a function of its own, so that a call's frame stays as light as
// the call it wraps.)
template <class Who> [[noreturn]] PYH_NOINLINE void rethrow_named(const Who &who) {
  try {
    throw;
  } catch (const error &e) {
    if (e.status() != PYHOST_TYPE && e.status() != PYHOST_RANGE) throw;
    throw error(e.status(), e.type_name(), std::string(who()) + ": " + e.what());
  }
}
template <class Who, class F> auto naming(const Who &who, F &&f) -> decltype(f()) {
  try {
    return f();
  } catch (const error &) {
    rethrow_named(who);
  }
}

inline void check(pyhost *h, int rc) {
  if (rc != PYHOST_OK) throw_status(h, rc);
}

inline pyhost_value *checked_new(pyhost_value *v) {
  if (!v) throw std::bad_alloc();
  return v;
}

[[noreturn]] inline void throw_type(const char *expected, const pyhost_value *v) {
  throw error(PYHOST_TYPE, "",
              std::string("expected ") + expected + ", got " +
                  (v ? pyhost_value_type_name(v) : "NoneType"));
}

template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_map : std::false_type {};
template <class K, class V, class C, class A> struct is_map<std::map<K, V, C, A>> : std::true_type {};
template <class K, class V, class H, class E, class A>
struct is_map<std::unordered_map<K, V, H, E, A>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_tuple : std::false_type {};
template <class... T> struct is_tuple<std::tuple<T...>> : std::true_type {};
template <class A, class B> struct is_tuple<std::pair<A, B>> : std::true_type {};

template <class T>
constexpr bool is_integer = std::is_integral<T>::value && !std::is_same<T, bool>::value;

// Whether an int64_t fits integer type T.
template <class T> constexpr bool int_fits(int64_t i) {
  return std::is_signed<T>::value
             ? (i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                (sizeof(T) >= sizeof(int64_t) || i <= static_cast<int64_t>(std::numeric_limits<T>::max())))
             : (i >= 0 && (sizeof(T) >= sizeof(int64_t) ||
                           static_cast<uint64_t>(i) <= static_cast<uint64_t>(std::numeric_limits<T>::max())));
}

// An int64_t into T, or PYHOST_RANGE naming both.
template <class T> T narrow_int(int64_t i) {
  if (!int_fits<T>(i))
    throw error(PYHOST_RANGE, "", "int " + std::to_string(i) + " does not fit the C++ type");
  return static_cast<T>(i);
}

// A T as an int64_t, or PYHOST_RANGE (an unsigned beyond INT64_MAX).
template <class T> int64_t widen_int(T i) {
  if (std::is_unsigned<T>::value && static_cast<uint64_t>(i) > static_cast<uint64_t>(INT64_MAX))
    throw error(PYHOST_RANGE, "", "int " + std::to_string(i) + " does not fit in 64 bits");
  return static_cast<int64_t>(i);
}

}  // namespace detail

// ---- values ----------------------------------------------------------------

class value;
template <class T> pyhost_value *to_value(const T &x);

// Bytes, borrowed: a pointer and a length the C++ side owns (an argument), or that pyhost
// lends (a host function's parameter until it returns; a function::call<pyh::bytes>
// result until the next call of that function, as pyhost_prepared_callf's ">y").
// Python sees a bytes object.
struct bytes {
  const void *data = nullptr;
  size_t size = 0;
  constexpr bytes() noexcept = default;
  constexpr bytes(const void *d, size_t n) noexcept : data(d), size(n) {}
  explicit constexpr bytes(std::string_view s) noexcept : data(s.data()), size(s.size()) {}
  // The bytes as characters (no copy).
  std::string_view view() const noexcept { return {static_cast<const char *>(data), size}; }
};
template <class T> T from_value(const pyhost_value *v);

// An owned pyhost_value: plain C data for built-in kinds, a strong reference for an
// object value.  Copying makes a deep copy (pyhost_value_copy: an object value shares
// the Python object); moving transfers ownership.
class value {
 public:
  value() noexcept = default;
  explicit value(pyhost_value *owned) noexcept : v_(owned) {}
  template <class T, class = std::enable_if_t<!std::is_same<std::decay_t<T>, value>::value &&
                                              !std::is_same<std::decay_t<T>, pyhost_value *>::value>>
  value(const T &x) : v_(to_value(x)) {}  // NOLINT: converting on purpose
  value(const value &o) : v_(o.v_ ? detail::checked_new(pyhost_value_copy(o.v_)) : nullptr) {}
  value(value &&o) noexcept : v_(o.release()) {}
  value &operator=(value o) noexcept {
    std::swap(v_, o.v_);
    return *this;
  }
  ~value() { pyhost_value_free(v_); }

  static value none() { return value(detail::checked_new(pyhost_value_none())); }

  pyhost_value *get() const noexcept { return v_; }
  pyhost_value *release() noexcept { return std::exchange(v_, nullptr); }
  explicit operator bool() const noexcept { return v_ != nullptr; }

  pyhost_kind kind() const noexcept { return pyhost_value_kind(v_); }
  bool is_none() const noexcept { return kind() == PYHOST_KIND_NONE; }
  // Python's name of the value's type ("int", "datetime.date").
  const char *type_name() const noexcept { return v_ ? pyhost_value_type_name(v_) : "NoneType"; }
  size_t size() const noexcept { return pyhost_value_count(v_); }
  // The value converted to T (PYHOST_TYPE / PYHOST_RANGE as pyh::error).
  template <class T> T as() const { return from_value<T>(v_); }
  // repr() computed by Python.
  std::string repr(pyhost *h) const {
    const char *r = pyhost_value_repr(h, v_);
    // NULL: a Python exception, or pyhost's own refusal (no value, no live handle)
    if (!r) detail::throw_status(h, pyhost_errtype(h)[0] ? PYHOST_PYEXC : PYHOST_MISUSE);
    return r;
  }

 private:
  pyhost_value *v_ = nullptr;
};

// ---- conversion: C++ -> pyhost_value ---------------------------------------

namespace detail {

template <class T> struct to_value_impl {
  static pyhost_value *make(const T &x) {
    if constexpr (std::is_same<T, bool>::value) {
      return checked_new(pyhost_value_bool(x ? 1 : 0));
    } else if constexpr (is_integer<T>) {
      return checked_new(pyhost_value_int(widen_int(x)));
    } else if constexpr (std::is_floating_point<T>::value) {
      return checked_new(pyhost_value_float(static_cast<double>(x)));
    } else if constexpr (std::is_convertible<const T &, std::string_view>::value) {
      std::string_view s(x);
      return checked_new(pyhost_value_str(s.data(), s.size()));
    } else if constexpr (std::is_same<T, pyh::bytes>::value) {
      return checked_new(pyhost_value_bytes(x.data, x.size));
    } else if constexpr (std::is_same<T, std::nullptr_t>::value || std::is_same<T, std::nullopt_t>::value) {
      return checked_new(pyhost_value_none());
    } else if constexpr (std::is_same<T, pyh::value>::value) {
      return x.get() ? checked_new(pyhost_value_copy(x.get())) : checked_new(pyhost_value_none());
    } else if constexpr (is_optional<T>::value) {
      return x ? to_value_impl<typename T::value_type>::make(*x) : checked_new(pyhost_value_none());
    } else if constexpr (is_vector<T>::value) {
      pyh::value list(checked_new(pyhost_value_list()));
      for (const auto &item : x) check(nullptr, pyhost_value_append(list.get(), pyh::to_value(item)));
      return list.release();
    } else if constexpr (is_map<T>::value) {
      pyh::value dict(checked_new(pyhost_value_dict()));
      for (const auto &kv : x) {
        pyhost_value *k = pyh::to_value(kv.first);
        pyhost_value *v;
        try {
          v = pyh::to_value(kv.second);
        } catch (...) {
          pyhost_value_free(k);
          throw;
        }
        check(nullptr, pyhost_value_set(dict.get(), k, v));
      }
      return dict.release();
    } else if constexpr (is_tuple<T>::value) {
      pyh::value tuple(checked_new(pyhost_value_tuple()));
      std::apply([&](const auto &...item) {
        (check(nullptr, pyhost_value_append(tuple.get(), pyh::to_value(item))), ...);
      }, x);
      return tuple.release();
    } else {
      static_assert(sizeof(T) == 0, "pyhost: no conversion from this C++ type to a Python value");
      return nullptr;
    }
  }
};

}  // namespace detail

// x as a new pyhost_value (own result).
template <class T> pyhost_value *to_value(const T &x) {
  return detail::to_value_impl<std::decay_t<const T>>::make(x);
}

// ---- conversion: pyhost_value -> C++ ---------------------------------------

namespace detail {

template <class T> struct from_value_impl {
  static T get(const pyhost_value *v) {
    if constexpr (std::is_same<T, bool>::value) {
      int b;
      if (pyhost_value_to_bool(nullptr, v, &b) != PYHOST_OK) throw_type("bool", v);
      return b != 0;
    } else if constexpr (is_integer<T>) {
      int64_t i;
      int rc = pyhost_value_to_int(nullptr, v, &i);
      if (rc == PYHOST_RANGE) throw error(PYHOST_RANGE, "", "int does not fit in 64 bits");
      if (rc != PYHOST_OK) throw_type("int", v);
      return narrow_int<T>(i);
    } else if constexpr (std::is_floating_point<T>::value) {
      double d;
      if (pyhost_value_to_float(nullptr, v, &d) != PYHOST_OK) throw_type("float", v);
      return static_cast<T>(d);
    } else if constexpr (std::is_same<T, std::string>::value) {
      const char *s;
      size_t len;
      if (pyhost_value_to_str(nullptr, v, &s, &len) != PYHOST_OK) throw_type("str", v);
      return std::string(s, len);
    } else if constexpr (std::is_same<T, pyh::value>::value) {
      return pyh::value(v ? checked_new(pyhost_value_copy(v)) : checked_new(pyhost_value_none()));
    } else if constexpr (is_optional<T>::value) {
      if (pyhost_value_kind(v) == PYHOST_KIND_NONE) return T();
      return T(from_value_impl<typename T::value_type>::get(v));
    } else if constexpr (is_vector<T>::value) {
      pyhost_kind k = pyhost_value_kind(v);
      if (k != PYHOST_KIND_LIST && k != PYHOST_KIND_TUPLE) throw_type("list or tuple", v);
      T out;
      size_t n = pyhost_value_count(v);
      out.reserve(n);
      for (size_t i = 0; i < n; i++)
        out.push_back(from_value_impl<typename T::value_type>::get(pyhost_value_item(v, i)));
      return out;
    } else if constexpr (is_map<T>::value) {
      if (pyhost_value_kind(v) != PYHOST_KIND_DICT) throw_type("dict", v);
      T out;
      size_t n = pyhost_value_count(v);
      for (size_t i = 0; i < n; i++)
        out.emplace(from_value_impl<typename T::key_type>::get(pyhost_value_key(v, i)),
                    from_value_impl<typename T::mapped_type>::get(pyhost_value_item(v, i)));
      return out;
    } else if constexpr (is_tuple<T>::value) {
      pyhost_kind k = pyhost_value_kind(v);
      if (k != PYHOST_KIND_LIST && k != PYHOST_KIND_TUPLE) throw_type("tuple", v);
      constexpr size_t n = std::tuple_size<T>::value;
      if (pyhost_value_count(v) != n)
        throw error(PYHOST_TYPE, "", "expected a tuple of " + std::to_string(n) + " items, got " +
                                         std::to_string(pyhost_value_count(v)));
      return items<T>(v, std::make_index_sequence<n>());
    } else {
      static_assert(sizeof(T) == 0,
                    "pyhost: no conversion from a Python value to this C++ type "
                    "(std::string_view, const char * and pyh::bytes results would dangle: use "
                    "std::string, or function::call<std::string_view>, which pyhost lends)");
    }
  }
  template <class Tup, size_t... I> static Tup items(const pyhost_value *v, std::index_sequence<I...>) {
    return Tup(from_value_impl<std::tuple_element_t<I, Tup>>::get(pyhost_value_item(v, I))...);
  }
};

}  // namespace detail

// v converted to T; throws pyh::error (PYHOST_TYPE naming both types, PYHOST_RANGE).
template <class T> T from_value(const pyhost_value *v) {
  return detail::from_value_impl<std::decay_t<T>>::get(v);
}

// ---- keyword arguments -----------------------------------------------------

// A keyword argument of a call: f(1, pyh::kw("weight", 2)) or, with
// `using namespace pyh::literals`, f(1, "weight"_kw = 2).
template <class T> struct kwarg {
  const char *name;
  const T &val;
};
template <class T> kwarg<T> kw(const char *name, const T &v) { return {name, v}; }

struct kw_name {
  const char *name;
  template <class T> kwarg<T> operator=(const T &v) const { return {name, v}; }
};

// A keyword argument whose name is part of its type ("weight"_kw = 2 with g++ and
// clang++): a call made only of such keywords and positional arguments sends a format
// fixed at compile time, one constant per call site, so nothing is written per call.
template <class T, char... C> struct kwarg_lit : kwarg<T> {};
template <char... C> struct kw_lit_name {
  static constexpr char text[] = {C..., '\0'};
  template <class T> kwarg_lit<T, C...> operator=(const T &v) const { return {{text, v}}; }
  operator kw_name() const noexcept { return {text}; }  // NOLINT: what "x"_kw was before
};

namespace literals {
#if defined(__GNUC__)
// g++ and clang++ (a GNU extension they share): the name becomes a template argument.
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wpedantic"
#  if defined(__clang__)
#    pragma GCC diagnostic ignored "-Wgnu-string-literal-operator-template"
#  endif
template <class Ch, Ch... C> constexpr kw_lit_name<static_cast<char>(C)...> operator""_kw() {
  static_assert(sizeof(Ch) == 1, "pyhost: a keyword name is a narrow string literal");
  return {};
}
#  pragma GCC diagnostic pop
#else
inline kw_name operator""_kw(const char *name, size_t) { return {name}; }
#endif
}  // namespace literals

namespace detail {
template <class T> struct is_kwarg : std::false_type {};
template <class T> struct is_kwarg<kwarg<T>> : std::true_type {};
template <class T, char... C> struct is_kwarg<kwarg_lit<T, C...>> : std::true_type {};

// One argument of a prepared call: scalars and strings read in place (no allocation),
// anything else converted to a pyhost_value that lives until the call returns.
template <class T, class = void> struct arg_slot {
  pyh::value owned;
  explicit arg_slot(const T &x) : owned(pyh::value(pyh::to_value(x))) {}
  pyhost_arg arg() const { return pyhost_arg_value(owned.get()); }
};
template <class T> struct arg_slot<T, std::enable_if_t<std::is_arithmetic<T>::value>> {
  pyhost_arg a;
  explicit arg_slot(T x) {
    if constexpr (std::is_same<T, bool>::value) a = pyhost_arg_bool(x ? 1 : 0);
    else if constexpr (std::is_floating_point<T>::value) a = pyhost_arg_float(static_cast<double>(x));
    else a = pyhost_arg_int(widen_int(x));
  }
  pyhost_arg arg() const { return a; }
};
template <class T>
struct arg_slot<T, std::enable_if_t<std::is_convertible<const T &, std::string_view>::value>> {
  pyhost_arg a;
  explicit arg_slot(const T &x) {
    std::string_view s(x);  // borrowed: the caller's buffer, read during the call
    a = pyhost_arg_str(s.data(), s.size());
  }
  pyhost_arg arg() const { return a; }
};
template <> struct arg_slot<pyh::bytes> {
  pyhost_arg a;
  explicit arg_slot(const pyh::bytes &x) : a(pyhost_arg_bytes(x.data, x.size)) {}
  pyhost_arg arg() const { return a; }
};
template <> struct arg_slot<pyh::value> {
  pyhost_arg a;
  explicit arg_slot(const pyh::value &x) : a(pyhost_arg_value(x.get())) {}
  pyhost_arg arg() const { return a; }
};

template <class T> using slot_t = arg_slot<std::decay_t<const T>>;  // const char[N] -> const char *

// The positional arguments as a tuple value and the keyword ones as a dict value.
struct value_args {
  pyh::value args{checked_new(pyhost_value_tuple())};
  pyh::value kwargs;
  template <class T> void add(const T &x) { check(nullptr, pyhost_value_append(args.get(), to_value(x))); }
  template <class T, char... C> void add(const kwarg_lit<T, C...> &x) { add(static_cast<const kwarg<T> &>(x)); }
  template <class T> void add(const kwarg<T> &x) {
    if (!kwargs) kwargs = pyh::value(checked_new(pyhost_value_dict()));
    pyhost_value *k = checked_new(pyhost_value_str(x.name, PYHOST_STRLEN));
    pyhost_value *v;
    try {
      v = to_value(x.val);
    } catch (...) {
      pyhost_value_free(k);
      throw;
    }
    check(nullptr, pyhost_value_set(kwargs.get(), k, v));
  }
};
template <class... A> value_args make_value_args(const A &...a) {
  value_args va;
  (va.add(a), ...);
  return va;
}

// Reads an owned result value into R (void discards it).
template <class R> R take_result(pyhost_value *r) {
  pyh::value owned(r);
  if constexpr (std::is_void<R>::value) return;
  else if constexpr (std::is_same<R, pyh::value>::value) return owned;
  else return from_value<R>(owned.get());
}

// Calls prepared c with the C arguments in argv, reading the result as R through the
// typed form of pyhost_prepared_call that R names.
template <class R> R prepared(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t n) {
  if constexpr (std::is_void<R>::value) {
    check(h, pyhost_prepared_call(h, c, argv, n));
  } else if constexpr (std::is_same<R, bool>::value) {
    int b;
    check(h, pyhost_prepared_call_bool(h, c, argv, n, &b));
    return b != 0;
  } else if constexpr (is_integer<R>) {
    int64_t i;
    check(h, pyhost_prepared_call_int(h, c, argv, n, &i));
    return narrow_int<R>(i);
  } else if constexpr (std::is_floating_point<R>::value) {
    double d;
    check(h, pyhost_prepared_call_float(h, c, argv, n, &d));
    return static_cast<R>(d);
  } else if constexpr (std::is_same<R, std::string_view>::value) {
    const char *s = nullptr;  // lent by c until its next borrowed result (pyhost_prepared_call_str)
    size_t len = 0;
    check(h, pyhost_prepared_call_str(h, c, argv, n, &s, &len));
    return std::string_view(s, len);
  } else if constexpr (std::is_same<R, pyh::bytes>::value) {
    const void *p = nullptr;  // the same: pyhost_prepared_call_bytes
    size_t len = 0;
    check(h, pyhost_prepared_call_bytes(h, c, argv, n, &p, &len));
    return pyh::bytes(p, len);
  } else {
    pyhost_value *r = nullptr;
    check(h, pyhost_prepared_call_value(h, c, argv, n, &r));
    return take_result<R>(r);
  }
}

// The slots are temporaries of the caller's full expression: they live until the call
// has returned.
template <class R, class... S> R call_with_slots(pyhost *h, pyhost_callable *c, const S &...s) {
  const pyhost_arg argv[] = {s.arg()...};
  return prepared<R>(h, c, argv, sizeof...(S));
}
template <class R, class... A> R prepared_call(pyhost *h, pyhost_callable *c, const A &...a) {
  if constexpr (sizeof...(A) == 0) return prepared<R>(h, c, nullptr, 0);
  else return call_with_slots<R>(h, c, slot_t<A>(a)...);
}

template <class... A> constexpr bool any_kwarg = (is_kwarg<std::decay_t<A>>::value || ...);

// ---- one-line typed calls (pyhost_prepared_callf and friends) ----
//
// A call with keywords (or with a result pyhost lends) is sent as a format
// ("Lz,weight=d>d") and its C values: the fastest C route with keywords.  When every
// keyword is named by "name"_kw the format is a constant fixed at compile time (one per
// call site, static_format below): arguments that have no letter of their own go as
// converted values ('O').  Keywords named at run time (pyh::kw("name", v)) get their
// format written per call, and take the value-tree route when an argument has no letter.

// The format letter of an argument's C++ type, 0 when the format cannot express it.
// The same conversions as arg_slot: bool, integers (widened to int64), floating point,
// anything a string_view is made from, pyh::bytes.
template <class T> constexpr char callf_letter() {
  using D = std::decay_t<T>;
  if constexpr (std::is_same<D, bool>::value) return 'b';
  else if constexpr (is_integer<D>) return 'L';
  else if constexpr (std::is_floating_point<D>::value) return 'd';
  else if constexpr (std::is_same<D, pyh::bytes>::value) return 'y';
  else if constexpr (std::is_convertible<const T &, std::string_view>::value && !std::is_same<D, pyh::value>::value)
    return 'z';
  else return 0;
}
template <class T> struct callf_of { using type = T; };
template <class T> struct callf_of<kwarg<T>> { using type = T; };
template <class T, char... C> struct callf_of<kwarg_lit<T, C...>> { using type = T; };
template <class A> constexpr char callf_letter_of = callf_letter<typename callf_of<std::decay_t<A>>::type>();

// A result pyhost lends (pyhost_prepared_callf's ">s" and ">y"): valid until the next
// pyhost_prepared_callf of the same callable, or until it is freed.
template <class R> constexpr bool is_borrowed_result =
    std::is_same<R, std::string_view>::value || std::is_same<R, pyh::bytes>::value;

// The result letter: a C scalar read straight, a borrowed view, anything else an owned
// value ('O').
template <class R> constexpr char callf_result_letter() {
  if constexpr (std::is_void<R>::value) return 0;
  else if constexpr (std::is_same<R, bool>::value) return 'b';
  else if constexpr (is_integer<R>) return 'L';
  else if constexpr (std::is_floating_point<R>::value) return 'd';
  else if constexpr (std::is_same<R, std::string_view>::value) return 's';
  else if constexpr (std::is_same<R, pyh::bytes>::value) return 'y';
  else return 'O';
}

constexpr size_t callf_max_args = 16;  // pyhost_prepared_callf's limit
template <class... A>
constexpr bool callf_expressible = sizeof...(A) <= callf_max_args && ((callf_letter_of<A> != 0) && ...);

// The C values of one argument, for the positional part or the keyword part.
template <class T> auto callf_values(const T &x) {
  constexpr char l = callf_letter<T>();
  if constexpr (l == 'b') return std::make_tuple(x ? 1 : 0);
  else if constexpr (l == 'L') return std::make_tuple(widen_int(x));
  else if constexpr (l == 'd') return std::make_tuple(static_cast<double>(x));
  else if constexpr (l == 'y') return std::make_tuple(x.data, x.size);
  else {
    std::string_view s(x);  // borrowed: the caller's buffer, read during the call
    return std::make_tuple(s.data(), s.size());
  }
}
template <class T> auto callf_positional(const T &x) { return callf_values(x); }
template <class T> std::tuple<> callf_positional(const kwarg<T> &) { return {}; }
template <class T, char... C> std::tuple<> callf_positional(const kwarg_lit<T, C...> &) { return {}; }
template <class T> std::tuple<> callf_keyword(const T &) { return {}; }
template <class T> auto callf_keyword(const kwarg<T> &x) { return callf_values(x.val); }
template <class T, char... C> auto callf_keyword(const kwarg_lit<T, C...> &x) { return callf_values(x.val); }

// The format of a call whose keywords are named at run time: the positional letters,
// then ",name=letter" per keyword, then the result's.  False (take the value-tree
// route) when a keyword name is not one the format can carry (empty, NULL, not
// [A-Za-z0-9_]) or is given twice (a dict keeps the last), or the format does not fit.
struct callf_format {
  char text[256];
  size_t len = 0;
  bool put(char c) {
    if (len + 1 >= sizeof text) return false;
    text[len++] = c;
    return true;
  }
  template <class T> bool add_positional(const T &) { return put(callf_letter<T>()); }
  template <class T> bool add_positional(const kwarg<T> &) { return true; }
  template <class T, char... C> bool add_positional(const kwarg_lit<T, C...> &) { return true; }
  template <class T> bool add_keyword(const T &) { return true; }
  template <class T, char... C> bool add_keyword(const kwarg_lit<T, C...> &x) {
    return add_keyword(static_cast<const kwarg<T> &>(x));
  }
  template <class T> bool add_keyword(const kwarg<T> &x) {
    const char *n = x.name;
    if (!n || !*n || !put(',')) return false;
    size_t start = len;
    for (; *n; n++) {
      char c = *n;
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (!ok || !put(c)) return false;
    }
    if (given_before(start, len - start)) return false;
    return put('=') && put(callf_letter<T>());
  }
  // Whether text[start, start+n) is already one of the keyword names before start.
  bool given_before(size_t start, size_t n) const {
    for (size_t i = 0; i < start; i++) {
      if (text[i] != ',') continue;
      size_t j = i + 1, k = 0;
      while (k < n && j + k < start && text[j + k] == text[start + k]) k++;
      if (k == n && j + k < start && text[j + k] == '=') return true;
    }
    return false;
  }
  template <class R, class... A> bool build(const A &...a) {
    if (!((add_positional(a) && ...) && (add_keyword(a) && ...))) return false;
    constexpr char r = callf_result_letter<R>();
    if (r && !(put('>') && put(r))) return false;
    text[len] = '\0';
    return true;
  }
};

// ---- formats fixed at compile time ----

// The letter of an argument in a static format: its own, or a converted value.
template <class T> constexpr char static_letter() {
  constexpr char l = callf_letter<T>();
  return l ? l : 'O';
}
constexpr bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One argument's part of a static format: a letter among the positional ones, or
// ",name=letter" among the keywords.
template <class A> struct format_piece {
  static constexpr bool carried = true;
  static constexpr size_t positional = 1, keyword = 0;
  template <size_t N> static constexpr size_t put_positional(std::array<char, N> &out, size_t n) {
    out[n] = static_letter<A>();
    return n + 1;
  }
  template <size_t N> static constexpr size_t put_keyword(std::array<char, N> &, size_t n) { return n; }
};
template <class T, char... C> struct format_piece<kwarg_lit<T, C...>> {
  // other names take the value-tree route
  static constexpr bool carried = sizeof...(C) > 0 && (is_name_char(C) && ...);
  static constexpr size_t positional = 0, keyword = sizeof...(C) + 3;
  template <size_t N> static constexpr size_t put_positional(std::array<char, N> &, size_t n) { return n; }
  template <size_t N> static constexpr size_t put_keyword(std::array<char, N> &out, size_t n) {
    out[n++] = ',';
    ((out[n++] = C), ...);
    out[n++] = '=';
    out[n++] = static_letter<T>();
    return n;
  }
};

// Whether two arguments of a call are keywords of the same name.  The names are
// compared as the types that carry them, not through their text's addresses: a
// compiler that instruments pointers (g++ -fsanitize=undefined) cannot evaluate a
// comparison of those at compile time.
template <class A, class B> struct same_keyword : std::false_type {};
template <class T, class U, char... C> struct same_keyword<kwarg_lit<T, C...>, kwarg_lit<U, C...>> : std::true_type {};
template <class... A> struct repeats_a_name : std::false_type {};
template <class A, class... Rest>
struct repeats_a_name<A, Rest...>
    : std::integral_constant<bool, (same_keyword<A, Rest>::value || ...) || repeats_a_name<Rest...>::value> {};

// The format of a call of A... returning R: a constant of the program.
template <class R, class... A> struct static_format {
  static constexpr size_t size = (format_piece<A>::positional + ... + 0) + (format_piece<A>::keyword + ... + 0) +
                                 (callf_result_letter<R>() ? 2 : 0) + 1;
  static constexpr std::array<char, size> make() {
    std::array<char, size> out{};
    size_t n = 0;
    ((n = format_piece<A>::put_positional(out, n)), ...);
    ((n = format_piece<A>::put_keyword(out, n)), ...);
    if (callf_result_letter<R>()) {
      out[n++] = '>';
      out[n++] = callf_result_letter<R>();
    }
    out[n] = '\0';
    return out;
  }
  static constexpr std::array<char, size> text = make();
};

// An argument's C values for a static format, held for the call: read in place, or
// (letter 'O') converted to a value that lives until the call returns.
template <class T, char L = static_letter<T>()> struct format_slot {
  explicit format_slot(const T &x) : v(callf_values(x)) {}
  decltype(callf_values(std::declval<const T &>())) v;
  auto values() const { return v; }
};
template <class T> struct format_slot<T, 'O'> {
  explicit format_slot(const T &x) : owned(to_value(x)) {}
  pyh::value owned;
  std::tuple<const pyhost_value *> values() const { return std::tuple<const pyhost_value *>(owned.get()); }
};
template <> struct format_slot<pyh::value, 'O'> {  // passed as it is, no copy
  explicit format_slot(const pyh::value &x) : v(x.get()) {}
  std::tuple<const pyhost_value *> v;
  auto values() const { return v; }
};
template <class A> struct arg_format_slot : format_slot<A> {
  using format_slot<A>::format_slot;
  auto positional() const { return this->values(); }
  std::tuple<> keyword() const { return {}; }
};
template <class T, char... C> struct arg_format_slot<kwarg_lit<T, C...>> : format_slot<T> {
  explicit arg_format_slot(const kwarg_lit<T, C...> &x) : format_slot<T>(x.val) {}
  std::tuple<> positional() const { return {}; }
  auto keyword() const { return this->values(); }
};

// A call through a static format: every keyword named by "name"_kw with ASCII letters,
// digits and _, each name once (a name given twice takes the value-tree route, where the
// last wins), at most 16 arguments.
template <class... A>
constexpr bool static_expressible =
    sizeof...(A) <= callf_max_args && ((!is_kwarg<A>::value || format_piece<A>::keyword > 0) && ...) &&
    (format_piece<A>::carried && ...) &&
    !repeats_a_name<A...>::value;

// Calls fn(format, C values..., result pointer) and reads the result as R, as
// prepared<R> does.  fn is one of pyhost_prepared_callf, pyhost_call_namef,
// pyhost_plugin_callf with its leading arguments bound.
template <class R, class Fn, class Values> R callf_finish(pyhost *h, const Fn &fn, const char *fmt, const Values &values) {
  auto call = [&](auto *out) {
    return std::apply([&](auto... v) {
      if constexpr (std::is_same<decltype(out), std::nullptr_t *>::value) return fn(fmt, v...);
      else return fn(fmt, v..., out);
    }, values);
  };
  if constexpr (std::is_void<R>::value) {
    check(h, call(static_cast<std::nullptr_t *>(nullptr)));
  } else if constexpr (std::is_same<R, bool>::value) {
    int b;
    check(h, call(&b));
    return b != 0;
  } else if constexpr (is_integer<R>) {
    int64_t i;
    check(h, call(&i));
    return narrow_int<R>(i);
  } else if constexpr (std::is_floating_point<R>::value) {
    double d;
    check(h, call(&d));
    return static_cast<R>(d);
  } else if constexpr (std::is_same<R, std::string_view>::value) {
    const char *s = nullptr;
    size_t n = 0;
    std::apply([&](auto... v) { check(h, fn(fmt, v..., &s, &n)); }, values);
    return std::string_view(s, n);
  } else if constexpr (std::is_same<R, pyh::bytes>::value) {
    const void *p = nullptr;
    size_t n = 0;
    std::apply([&](auto... v) { check(h, fn(fmt, v..., &p, &n)); }, values);
    return pyh::bytes(p, n);
  } else {
    pyhost_value *r = nullptr;
    check(h, call(&r));
    return take_result<R>(r);
  }
}
template <class R, class Fn, class... S> R static_call_with(pyhost *h, const Fn &fn, const S &...s) {
  return callf_finish<R>(h, fn, static_format<R, typename S::arg_type...>::text.data(),
                         std::tuple_cat(s.positional()..., s.keyword()...));
}
template <class A> struct named_slot : arg_format_slot<A> {
  using arg_type = A;
  using arg_format_slot<A>::arg_format_slot;
};

// The value-tree route of typed_call: the arguments as a tuple and a dict.
template <class R, class Slow, class... A> PYH_NOINLINE R value_tree_call(pyhost *h, const Slow &slow, const A &...a) {
  if constexpr (is_borrowed_result<R>) {
    (void)h, (void)slow, ((void)a, ...);
    throw error(PYHOST_MISUSE, "",
                "a std::string_view or pyh::bytes result is lent by pyhost_prepared_callf, which "
                "cannot carry this call (keyword names given at run time that are not ASCII "
                "identifiers or repeat, or more than 16 arguments)");
  } else {
    value_args va = make_value_args(a...);
    pyhost_value *r = nullptr;
    check(h, slow(va.args.get(), va.kwargs.get(), &r));
    return take_result<R>(r);
  }
}

// A call, keywords allowed: through fn and a static format when every keyword is
// named by "name"_kw; else through fn and a format written now when every argument has
// a letter and the names fit; else through the value trees (slow(args tuple, kwargs
// dict, &r)).  fast false: the value-tree route always (for the misuse message of the
// slow route).
template <class R, class Fn, class Slow, class... A>
R typed_call(pyhost *h, bool fast, const Fn &fn, const Slow &slow, const A &...a) {
  if constexpr (static_expressible<std::decay_t<const A>...>) {
    if (fast) return static_call_with<R>(h, fn, named_slot<std::decay_t<const A>>(a)...);
  } else if constexpr (callf_expressible<A...>) {
    callf_format f;
    if (fast && f.build<R>(a...))
      return callf_finish<R>(h, fn, f.text, std::tuple_cat(callf_positional(a)..., callf_keyword(a)...));
  }
  return value_tree_call<R>(h, slow, a...);
}

// ---- keyword plans (pyhost_prepare_keywords) kept by a function ----
//
// A call whose keywords are all named by "name"_kw has its layout (how many positional
// arguments, then which names) fixed at compile time.  A function makes the keyword
// plan of a layout at its first call with it and keeps it (plan_cache), so each later
// call passes only a pyhost_arg array: no format read, no string built, no allocation.

constexpr size_t plan_max_args = 8;  // pyhost_prepare_keywords' limit

// The calls a plan carries: those a static format carries (names of ASCII letters,
// digits and _, each once), with a keyword and at most 8 arguments.
template <class... A>
constexpr bool plan_expressible = sizeof...(A) <= plan_max_args && static_expressible<A...> &&
                                  (is_kwarg<A>::value || ...);

// One argument of a plan's call: its pyhost_arg, and whether it goes among the keywords.
template <class A> struct plan_slot : slot_t<A> {
  static constexpr bool keyword = false;
  explicit plan_slot(const A &x) : slot_t<A>(x) {}
};
template <class T, char... C> struct plan_slot<kwarg_lit<T, C...>> : slot_t<T> {
  static constexpr bool keyword = true;
  explicit plan_slot(const kwarg_lit<T, C...> &x) : slot_t<T>(x.val) {}
};

// The layout of a call of A...: a constant of the program per layout, whose address is
// the key of its plan in a function's plan_cache (two calls differing only in their
// values' types share one plan).
template <class A> struct plan_name { using type = std::tuple<>; };
template <class T, char... C> struct plan_name<kwarg_lit<T, C...>> { using type = std::tuple<kw_lit_name<C...>>; };
template <size_t NPos, class Names> struct kw_layout;
template <size_t NPos, class... Names> struct kw_layout<NPos, std::tuple<Names...>> {
  static constexpr size_t npos = NPos, nkw = sizeof...(Names);
  static constexpr const char *names[] = {Names::text...};
};
template <class... A>
using kw_layout_of = kw_layout<((is_kwarg<A>::value ? 0 : 1) + ... + 0),
                               decltype(std::tuple_cat(std::declval<typename plan_name<A>::type>()...))>;

// The plans one function has made, by layout: at most 8 (a ninth layout takes the
// static format's route), found without a lock by any thread, freed with the function.
class plan_cache {
 public:
  plan_cache() = default;
  plan_cache(const plan_cache &) = delete;
  plan_cache &operator=(const plan_cache &) = delete;
  ~plan_cache() {
    for (auto &s : slots_) {
      if (entry *e = s.load(std::memory_order_acquire)) {
        pyhost_callable_free(e->plan);
        delete e;
      }
    }
  }
  pyhost_callable *find(const void *key) const noexcept {
    for (const auto &s : slots_) {
      const entry *e = s.load(std::memory_order_acquire);
      if (!e) return nullptr;  // filled in order: the rest are empty
      if (e->key == key) return e->plan;
    }
    return nullptr;
  }
  size_t size() const noexcept {
    size_t n = 0;
    while (n < slots_.size() && slots_[n].load(std::memory_order_acquire)) n++;
    return n;
  }
  // Keeps plan (own) under key: the plan kept (another thread's, when it kept one for
  // key first; ours is freed then), or nullptr when every slot is taken.
  pyhost_callable *keep(const void *key, pyhost_callable *plan) {
    entry *mine = new (std::nothrow) entry{key, plan};
    for (auto &s : slots_) {
      entry *cur = nullptr;
      if (mine && s.compare_exchange_strong(cur, mine, std::memory_order_acq_rel)) return plan;
      if (!cur) cur = s.load(std::memory_order_acquire);
      if (cur && cur->key == key) {
        delete mine;
        pyhost_callable_free(plan);
        return cur->plan;
      }
      if (!cur) break;  // no memory for our entry
    }
    delete mine;
    pyhost_callable_free(plan);
    return nullptr;
  }

 private:
  struct entry {
    const void *key;
    pyhost_callable *plan;
  };
  std::array<std::atomic<entry *>, plan_max_args> slots_{};
};

// Calls plan with the positional arguments, then the keyword ones, as the plan's layout
// orders them.
template <class R, class... S> R plan_call_with(pyhost *h, pyhost_callable *plan, const S &...s) {
  pyhost_arg argv[sizeof...(S)];
  size_t n = 0;
  ((S::keyword ? void() : void(argv[n++] = s.arg())), ...);
  ((S::keyword ? void(argv[n++] = s.arg()) : void()), ...);
  return prepared<R>(h, plan, argv, n);
}

}  // namespace detail

// ---- functions: prepared callables -----------------------------------------

// A Python callable prepared once (pyhost_prepare) and called many times.  Calls
// without keyword arguments are prepared calls reading their arguments in place (the
// fastest C route; std::string_view and pyh::bytes results through
// pyhost_prepared_call_str and _bytes).  A call whose keywords are all named by
// "name"_kw (ASCII letters, digits and _, each once; 8 arguments at most) goes through
// a keyword plan (pyhost_prepare_keywords) that the function makes at the first call
// of each layout (positional count and names) and keeps until it is freed, for up to 8
// layouts: a later call passes only its values, with no allocation.  Other calls with
// keywords go through pyhost_prepared_callf (a format fixed at compile time when every
// keyword is named by "name"_kw).  Move-only.
class function {
 public:
  function() noexcept = default;
  // Takes over c (own), a prepared callable with no Python object behind it for the
  // value-tree route (pyhost_prepare_expression's).
  function(pyhost *h, pyhost_callable *c, std::string name) noexcept : h_(h), c_(c), name_(std::move(name)) {}
  // name (may be empty) starts the message of an argument or a result of the wrong
  // type: "json.loads", "plugin scorer: hook score".
  function(pyhost *h, pyh::value callable, std::string name = std::string())
      : h_(h), obj_(std::move(callable)), name_(std::move(name)) {
    detail::check(h_, pyhost_prepare(h_, obj_.get(), &c_));
  }
  function(function &&o) noexcept
      : h_(o.h_), obj_(std::move(o.obj_)), c_(std::exchange(o.c_, nullptr)), name_(std::move(o.name_)),
        plans_(o.plans_.exchange(nullptr)) {}
  function &operator=(function &&o) noexcept {
    if (this != &o) {
      delete plans_.exchange(o.plans_.exchange(nullptr));
      pyhost_callable_free(c_);
      h_ = o.h_, obj_ = std::move(o.obj_), c_ = std::exchange(o.c_, nullptr), name_ = std::move(o.name_);
    }
    return *this;
  }
  function(const function &) = delete;
  function &operator=(const function &) = delete;
  ~function() {
    delete plans_.load();
    pyhost_callable_free(c_);
  }

  // f.call<double>(1, "x", pyh::kw("weight", 2)): the result as R (void discards it).
  // Keywords named by "name"_kw go through the keyword plan of the call's layout, made
  // at its first call and kept (keyword_plans()).
  // R = std::string_view or pyh::bytes: the str's UTF-8 or the bytes read in place,
  // lent by pyhost until the next call of this function that returns such a view (or
  // takes keywords), or until the function is freed (pyhost_prepared_call_str, _bytes
  // and pyhost_prepared_callf's ">s", ">y"); any thread may read it meanwhile.
  template <class R, class... A> R call(const A &...a) const {
    if (name_.empty()) return call_unnamed<R>(a...);
    return detail::naming([this] { return name_; }, [&] { return call_unnamed<R>(a...); });
  }
  // f(args...): the result as a value.
  template <class... A> pyh::value operator()(const A &...a) const {
    return call<pyh::value>(a...);
  }
  pyhost_callable *get() const noexcept { return c_; }
  // How many keyword plans the function keeps (one per layout of "name"_kw calls made;
  // at most 8).
  size_t keyword_plans() const noexcept {
    const detail::plan_cache *pc = plans_.load(std::memory_order_acquire);
    return pc ? pc->size() : 0;
  }
  const pyh::value &object() const noexcept { return obj_; }
  const std::string &name() const noexcept { return name_; }

 private:
  template <class R, class... A> R call_unnamed(const A &...a) const {
    if constexpr (detail::plan_expressible<std::decay_t<const A>...>) {
      using layout = detail::kw_layout_of<std::decay_t<const A>...>;
      detail::plan_cache *pc = plans_.load(std::memory_order_acquire);
      pyhost_callable *plan = pc ? pc->find(&layout::names) : nullptr;
      if (!plan) plan = make_plan(&layout::names, layout::npos, layout::names, layout::nkw);
      if (plan) return detail::plan_call_with<R>(h_, plan, detail::plan_slot<std::decay_t<const A>>(a)...);
    }
    if constexpr (detail::any_kwarg<A...>) {
      return detail::typed_call<R>(
          h_, c_ != nullptr, [this](const char *fmt, auto... v) { return pyhost_prepared_callf(h_, c_, fmt, v...); },
          [this](pyhost_value *args, pyhost_value *kwargs, pyhost_value **r) {
            if (!obj_ && c_)
              throw error(PYHOST_MISUSE, "",
                          "an expression is called with at most 16 arguments and keyword names of ASCII "
                          "letters, digits and _, each given once");
            return pyhost_call(h_, obj_.get(), args, kwargs, r);
          },
          a...);
    } else {
      return detail::prepared_call<R>(h_, c_, a...);
    }
  }
  // The plan of a layout first called: made, kept and returned; nullptr (take the
  // static format's route) for a function with no callable or with 8 layouts kept.
  PYH_NOINLINE pyhost_callable *make_plan(const void *key, size_t npos, const char *const *names,
                                          size_t nkw) const {
    if (!c_) return nullptr;
    detail::plan_cache *pc = plans_.load(std::memory_order_acquire);
    if (!pc) {
      auto *mine = new detail::plan_cache();
      if (plans_.compare_exchange_strong(pc, mine, std::memory_order_acq_rel)) pc = mine;
      else delete mine;  // another thread's came first: pc is it
    }
    if (pyhost_callable *kept = pc->find(key)) return kept;
    pyhost_callable *plan = nullptr;
    detail::check(h_, pyhost_prepare_keywords(h_, c_, npos, names, nkw, &plan));
    return pc->keep(key, plan);
  }
  pyhost *h_ = nullptr;
  pyh::value obj_;
  pyhost_callable *c_ = nullptr;
  std::string name_;
  mutable std::atomic<detail::plan_cache *> plans_{nullptr};  // made at the first plan
};

// ---- declared parameters: the typed route ----------------------------------

template <class T> struct arg_v;

// A parameter's name, given pybind11-style after the callable:
// m.def("scale", fn, pyh::arg("x"), pyh::arg("factor") = 1.5).  With one name per
// parameter the callable is registered with a declared signature (pyhost's typed form,
// docs/cpp.md): keywords, defaults, inspect.signature and CPython's TypeErrors.
struct arg {
  const char *name;
  explicit constexpr arg(const char *n) noexcept : name(n) {}
  // The parameter's default: pyh::arg("n") = 3; None (= nullptr or = std::nullopt) for
  // a std::optional parameter.
  template <class T, class = std::enable_if_t<!std::is_same<std::decay_t<T>, arg>::value>>
  arg_v<std::decay_t<T>> operator=(T &&v) const {
    return {name, std::forward<T>(v)};
  }
};
// A parameter's name and default (pyh::arg("n") = 3).
template <class T> struct arg_v {
  const char *name;
  T value;
};
// Markers among the names, as in a Python def: the parameters before pyh::pos_only()
// are positional-only ("/"), those after pyh::kw_only() keyword-only ("*").
struct pos_only {};
struct kw_only {};

// ---- host functions: C++ callables as Python functions ---------------------

class view;  // a parameter of bulk data (below)

namespace detail {

template <class T> struct callable_traits : callable_traits<decltype(&T::operator())> {};
template <class R, class... A> struct callable_traits<R (*)(A...)> {
  using result = R;
  using args = std::tuple<A...>;
};
template <class R, class... A> struct callable_traits<R (*)(A...) noexcept> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A> struct callable_traits<R (C::*)(A...)> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A> struct callable_traits<R (C::*)(A...) const> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A> struct callable_traits<R (C::*)(A...) noexcept> : callable_traits<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_traits<R (C::*)(A...) const noexcept> : callable_traits<R (*)(A...)> {};

// Reads argument i of a borrowed view as T.  Returns PYHOST_OK, or the status of the
// getter that raised (TypeError / OverflowError set in the callback's frame).
template <class T> struct arg_reader {
  using D = std::decay_t<T>;
  static int read(pyhost *h, const pyhost_args *args, size_t i, D &out, const char *who) {
    if constexpr (std::is_same<D, bool>::value) {
      int b;
      int rc = pyhost_args_bool(h, args, i, &b);
      if (rc == PYHOST_OK) out = b != 0;
      return rc;
    } else if constexpr (is_integer<D>) {
      int64_t v;
      int rc = pyhost_args_int(h, args, i, &v);
      if (rc != PYHOST_OK) return rc;
      if (!int_fits<D>(v))
        return pyhost_raise(h, PYHOST_EXC_OVERFLOW_ERROR, "%s() argument %zu: %lld does not fit the C++ type", who, i,
                            static_cast<long long>(v));
      out = static_cast<D>(v);
      return PYHOST_OK;
    } else if constexpr (std::is_floating_point<D>::value) {
      double d;
      int rc = pyhost_args_float(h, args, i, &d);
      if (rc == PYHOST_OK) out = static_cast<D>(d);
      return rc;
    } else if constexpr (std::is_same<D, pyh::view>::value) {
      const pyhost_view *v;  // borrowed until the callback returns: take `const pyh::view &`
      int rc = pyhost_args_view(h, args, i, 0, &v);
      if (rc == PYHOST_OK) out = D(v);
      return rc;
    } else if constexpr (std::is_same<D, std::string_view>::value || std::is_same<D, std::string>::value ||
                         std::is_same<D, const char *>::value) {
      const char *s;
      size_t len;
      int rc = pyhost_args_str(h, args, i, &s, &len);  // borrowed until the callback returns
      if (rc != PYHOST_OK) return rc;
      if constexpr (std::is_same<D, const char *>::value) out = s;
      else out = D(s, len);
      return PYHOST_OK;
    } else if constexpr (std::is_same<D, pyh::bytes>::value) {
      const void *p;
      size_t len;
      int rc = pyhost_args_bytes(h, args, i, &p, &len);  // borrowed until the callback returns
      if (rc == PYHOST_OK) out = D(p, len);
      return rc;
    } else if constexpr (is_optional<D>::value) {
      if (i >= pyhost_args_count(args) + pyhost_args_kwcount(args) ||
          pyhost_args_kind(args, i) == PYHOST_KIND_NONE) {
        out = D();
        return PYHOST_OK;
      }
      std::decay_t<typename D::value_type> inner{};
      int rc = arg_reader<typename D::value_type>::read(h, args, i, inner, who);
      if (rc == PYHOST_OK) out = D(std::move(inner));
      return rc;
    } else {
      pyhost_value *v = nullptr;
      int rc = pyhost_args_value(h, args, i, &v);
      if (rc != PYHOST_OK) return rc;
      pyh::value owned(v);
      if constexpr (std::is_same<D, pyh::value>::value) {
        out = std::move(owned);
      } else {
        try {
          out = from_value<D>(owned.get());
        } catch (const error &e) {
          return pyhost_raise(h, e.status() == PYHOST_RANGE ? PYHOST_EXC_OVERFLOW_ERROR : PYHOST_EXC_TYPE_ERROR,
                              "%s() argument %zu: %s", who, i, e.what());
        }
      }
      return PYHOST_OK;
    }
  }
};

// Sets the callback's result from a C++ value.
template <class R> int set_result(pyhost *h, pyhost_ret *ret, const R &r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same<D, bool>::value) {
    return pyhost_ret_bool(h, ret, r ? 1 : 0);
  } else if constexpr (is_integer<D>) {
    if (std::is_unsigned<D>::value && static_cast<uint64_t>(r) > static_cast<uint64_t>(INT64_MAX))
      return pyhost_raise(h, PYHOST_EXC_OVERFLOW_ERROR, "result %llu does not fit in 64 bits",
                          static_cast<unsigned long long>(r));
    return pyhost_ret_int(h, ret, static_cast<int64_t>(r));
  } else if constexpr (std::is_floating_point<D>::value) {
    return pyhost_ret_float(h, ret, static_cast<double>(r));
  } else if constexpr (std::is_convertible<const D &, std::string_view>::value) {
    std::string_view s(r);
    return pyhost_ret_str(h, ret, s.data(), s.size());
  } else if constexpr (std::is_same<D, pyh::bytes>::value) {
    return pyhost_ret_bytes(h, ret, r.data, r.size);
  } else if constexpr (std::is_same<D, pyh::value>::value) {
    return pyhost_ret_value(h, ret, r.get());
  } else {
    pyh::value v(to_value(r));
    return pyhost_ret_value(h, ret, v.get());
  }
}

// A C++ exception leaving a callback, as the status that makes Python see it: a
// pyh::error from a pyhost call that raised hands on the original exception (kept in
// the callback's frame), anything else raises with its message.  Never rethrows.
inline int exception_to_python(pyhost *h) noexcept {
  try {
    throw;
  } catch (const error &e) {
    int s = e.status();
    if (s == PYHOST_PYEXC || s == PYHOST_EXIT || s == PYHOST_INTERRUPTED) return s;
    return pyhost_raise(h, s == PYHOST_RANGE ? PYHOST_EXC_OVERFLOW_ERROR : PYHOST_EXC_TYPE_ERROR, "%s", e.what());
  } catch (const python_error &e) {
    return pyhost_raise_named(h, e.type_name().c_str(), "%s", e.what());
  } catch (const std::bad_alloc &) {
    return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "out of memory (std::bad_alloc)");
  } catch (const std::invalid_argument &e) {
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "%s", e.what());
  } catch (const std::domain_error &e) {
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "%s", e.what());
  } catch (const std::out_of_range &e) {
    return pyhost_raise(h, PYHOST_EXC_INDEX_ERROR, "%s", e.what());
  } catch (const std::overflow_error &e) {
    return pyhost_raise(h, PYHOST_EXC_OVERFLOW_ERROR, "%s", e.what());
  } catch (const std::exception &e) {
    return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "%s", e.what());
  } catch (...) {
    return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "a C++ exception of unknown type");
  }
}

// Calls fn(prefix..., converted arguments...) for the view and sets the result.
// `first` is the index of the view's first argument for fn's parameters after prefix.
template <class Args> struct invoker;
template <class... A> struct invoker<std::tuple<A...>> {
  template <class R, class F, class... P>
  static int run(pyhost *h, const pyhost_args *args, pyhost_ret *ret, const char *name, F &&fn, P &&...prefix) {
    constexpr size_t n = sizeof...(A);
    size_t count = pyhost_args_count(args);
    if (count > n || pyhost_args_kwcount(args) > 0) {
      if (pyhost_args_kwcount(args) > 0)
        return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "%s() takes no keyword arguments", name);
      return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "%s() takes %zu arguments (%zu given)", name, n, count);
    }
    return run_seq<R>(h, args, ret, name, std::forward<F>(fn), std::index_sequence_for<A...>(),
                      std::forward<P>(prefix)...);
  }
  template <class R, class F, size_t... I, class... P>
  static int run_seq(pyhost *h, const pyhost_args *args, pyhost_ret *ret, const char *name, F &&fn, std::index_sequence<I...>,
                     P &&...prefix) {
    (void)h, (void)args, (void)name;  // unused for a function without parameters
    std::tuple<std::decay_t<A>...> vals;  // every parameter type converted to is default-constructible
    int rc = PYHOST_OK;
    ((rc == PYHOST_OK ? (rc = arg_reader<A>::read(h, args, I, std::get<I>(vals), name)) : 0), ...);
    if (rc != PYHOST_OK) return rc;
    if constexpr (std::is_void<R>::value) {
      fn(std::forward<P>(prefix)..., static_cast<A>(std::get<I>(vals))...);
      return PYHOST_OK;
    } else {
      return set_result<R>(h, ret, fn(std::forward<P>(prefix)..., static_cast<A>(std::get<I>(vals))...));
    }
  }
};

struct holder_base {
  virtual ~holder_base() = default;
};

template <class F> struct function_holder : holder_base {
  F fn;
  std::string name;
  function_holder(F f, std::string n) : fn(std::move(f)), name(std::move(n)) {}
  static int trampoline(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) noexcept {
    auto *self = static_cast<function_holder *>(ud);
    try {
      using traits = callable_traits<std::conditional_t<std::is_function<F>::value, F *, F>>;
      return invoker<typename traits::args>::template run<typename traits::result>(h, args, ret,
                                                                                     self->name.c_str(), self->fn);
    } catch (...) {
      return exception_to_python(h);
    }
  }
};


// ---- the typed route: a declared signature built from the callable's types ----

// What may follow the callable in a declaration: 1 pyh::arg, 2 pyh::arg_v, 3
// pyh::pos_only, 4 pyh::kw_only, 5 a docstring; 0 anything else.
template <class E> struct declared_kind : std::integral_constant<int, 0> {};
template <> struct declared_kind<arg> : std::integral_constant<int, 1> {};
template <class V> struct declared_kind<arg_v<V>> : std::integral_constant<int, 2> {};
template <> struct declared_kind<pos_only> : std::integral_constant<int, 3> {};
template <> struct declared_kind<kw_only> : std::integral_constant<int, 4> {};
template <> struct declared_kind<const char *> : std::integral_constant<int, 5> {};
template <class E> constexpr int declared = declared_kind<std::decay_t<const E>>::value;
template <class E> constexpr bool names_a_parameter = declared<E> == 1 || declared<E> == 2;
// What starts a declaration (a docstring alone is the fast form's def(name, fn, doc)).
template <class E> constexpr bool starts_declaration = declared<E> >= 1 && declared<E> <= 4;

// The type a parameter of C++ type P is declared with (pyhost_module_add_typed_function's
// notation), nullptr when the typed form cannot carry it.
template <class P> constexpr const char *declared_type() {
  using D = std::decay_t<P>;
  if constexpr (is_optional<D>::value) return declared_type<typename D::value_type>();
  else if constexpr (std::is_same<D, bool>::value) return "bool";
  else if constexpr (is_integer<D>) return "int";
  else if constexpr (std::is_floating_point<D>::value) return "float";
  else if constexpr (std::is_same<D, std::string>::value || std::is_same<D, std::string_view>::value ||
                     std::is_same<D, const char *>::value)
    return "str";
  else if constexpr (std::is_same<D, pyh::bytes>::value) return "bytes";
  else return nullptr;
}
template <class P> constexpr bool declarable =
    declared_type<P>() != nullptr && (!std::is_reference<P>::value || std::is_const<std::remove_reference_t<P>>::value);

// Whether a default of type V suits a parameter of type P.
template <class P, class V> constexpr bool default_fits() {
  using D = std::decay_t<P>;
  if constexpr (std::is_same<V, std::nullptr_t>::value || std::is_same<V, std::nullopt_t>::value)
    return is_optional<D>::value;
  else if constexpr (is_optional<D>::value) return default_fits<typename D::value_type, V>();
  else if constexpr (std::is_same<D, bool>::value) return std::is_same<V, bool>::value;
  else if constexpr (is_integer<D>) return is_integer<V>;
  else if constexpr (std::is_floating_point<D>::value) return std::is_arithmetic<V>::value && !std::is_same<V, bool>::value;
  else if constexpr (std::is_same<D, pyh::bytes>::value) return false;  // no bytes literal in a signature
  else return std::is_convertible<const V &, std::string_view>::value;
}
template <class E> struct default_of { using type = void; };
template <class V> struct default_of<arg_v<V>> { using type = V; };
// Each default against the parameter it names (Ps: the parameters' types as a tuple).
template <class Ps, size_t I, class... E> struct defaults_fit : std::true_type {};
template <class Ps, size_t I, class E0, class... E> struct defaults_fit<Ps, I, E0, E...> {
  static constexpr bool here() {
    if constexpr (declared<E0> == 2 && I < std::tuple_size<Ps>::value)
      return default_fits<std::tuple_element_t<I, Ps>, typename default_of<std::decay_t<E0>>::type>();
    else return true;
  }
  static constexpr bool value = here() && defaults_fit<Ps, I + (names_a_parameter<E0> ? 1 : 0), E...>::value;
};
template <class Ps> struct all_declarable;
template <class... P> struct all_declarable<std::tuple<P...>> : std::bool_constant<(declarable<P> && ...)> {};

// The compile-time checks of a declaration: one name per parameter, parameter types
// the typed form carries, defaults of the parameter's type.
template <class Ps, class... E> constexpr bool check_declaration() {
  static_assert(((declared<E> != 0) && ...),
                "pyhost: after the callable come pyh::arg(\"name\") (= default), pyh::pos_only(), "
                "pyh::kw_only() and a docstring");
  static_assert((size_t(names_a_parameter<E>) + ... + 0) == std::tuple_size<Ps>::value,
                "pyhost: give one pyh::arg per parameter of the callable");
  static_assert(all_declarable<Ps>::value,
                "pyhost: a parameter named by pyh::arg is bool, an integer, a floating-point type, "
                "std::string, std::string_view, const char *, pyh::bytes or a std::optional of one of "
                "them, taken by value or const reference (leave the names out for other types: the "
                "fast form)");
  static_assert(defaults_fit<Ps, 0, E...>::value,
                "pyhost: a default of another type than its parameter's (None, = nullptr or = "
                "std::nullopt, only for a std::optional parameter; no bytes default)");
  return true;
}

// What an argument's error names: "app.scale" and the parameters' names.
struct typed_site {
  std::string who;
  std::vector<std::string> params;
};

// Parameter i of a typed callback, read from argv[i] (converted and checked by pyhost
// already; an integer is checked here against the C++ type's range).
template <class P> struct typed_param {
  using D = std::decay_t<P>;
  static D read(const pyhost_arg &a, const typed_site &s, size_t i) {
    if constexpr (is_optional<D>::value) {
      if (a.kind == PYHOST_ARG_NONE) return D();
      return D(typed_param<typename D::value_type>::read(a, s, i));
    } else if constexpr (std::is_same<D, bool>::value) {
      return a.u.b != 0;
    } else if constexpr (is_integer<D>) {
      if (!int_fits<D>(a.u.i))
        throw error(PYHOST_RANGE, "",
                    s.who + "() argument '" + s.params[i] + "': " + std::to_string(a.u.i) +
                        " is out of range for the C++ parameter (" + std::to_string(std::numeric_limits<D>::min()) +
                        " to " + std::to_string(std::numeric_limits<D>::max()) + ")");
      return static_cast<D>(a.u.i);
    } else if constexpr (std::is_floating_point<D>::value) {
      return static_cast<D>(a.u.d);
    } else if constexpr (std::is_same<D, const char *>::value) {
      return a.u.s;  // NUL-terminated, borrowed until the callback returns
    } else if constexpr (std::is_same<D, pyh::bytes>::value) {
      return D(a.u.p, a.len);
    } else {
      return D(a.u.s, a.len);  // std::string_view borrows, std::string copies
    }
  }
};

// Calls fn(prefix..., parameters read from argv...) and sets the result.
template <class Args> struct typed_invoker;
template <class... A> struct typed_invoker<std::tuple<A...>> {
  template <class R, class F, class... P>
  static int run(pyhost *h, const pyhost_arg *argv, pyhost_ret *ret, const typed_site &s, F &&fn, P &&...prefix) {
    return run_seq<R>(h, argv, ret, s, std::forward<F>(fn), std::index_sequence_for<A...>(), std::forward<P>(prefix)...);
  }
  template <class R, class F, size_t... I, class... P>
  static int run_seq(pyhost *h, const pyhost_arg *argv, pyhost_ret *ret, const typed_site &s, F &&fn,
                     std::index_sequence<I...>, P &&...prefix) {
    (void)argv, (void)s;  // unused without parameters
    if constexpr (std::is_void<R>::value) {
      (void)h, (void)ret;
      fn(std::forward<P>(prefix)..., typed_param<A>::read(argv[I], s, I)...);
      return PYHOST_OK;
    } else {
      return set_result<R>(h, ret, fn(std::forward<P>(prefix)..., typed_param<A>::read(argv[I], s, I)...));
    }
  }
};

// A float default as Python writes it back: the shortest decimal that reads as the same
// double, with a '.' whatever the locale.
inline std::string float_literal(double d) {
  if (d != d || d - d != 0)
    throw error(PYHOST_MISUSE, "", "a float default must be finite (Python has no literal for inf or nan)");
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string text(buf);
  const char *point = std::localeconv()->decimal_point;
  if (point && *point && std::strcmp(point, ".") != 0) {
    size_t at = text.find(point);
    if (at != std::string::npos) text.replace(at, std::strlen(point), ".");
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// A default's text in a signature (to_float: an integer default of a floating-point
// parameter, written as the float the callable gets).
template <class V> std::string default_literal(const V &v, bool to_float) {
  (void)to_float;  // read for integers only
  if constexpr (std::is_same<V, bool>::value) {
    return v ? "True" : "False";
  } else if constexpr (std::is_same<V, std::nullptr_t>::value || std::is_same<V, std::nullopt_t>::value) {
    return "None";
  } else if constexpr (is_integer<V>) {
    return to_float ? float_literal(static_cast<double>(v)) : std::to_string(widen_int(v));
  } else if constexpr (std::is_floating_point<V>::value) {
    return float_literal(static_cast<double>(v));
  } else {
    std::string_view s(v);
    char quote = s.find('\'') == std::string_view::npos ? '\'' : '"';
    if (s.find(quote) != std::string_view::npos || s.find('\\') != std::string_view::npos)
      throw error(PYHOST_MISUSE, "", "a str default holding both quotes or a backslash cannot be declared");
    return quote + std::string(s) + quote;
  }
}

// The parameter list of a declared signature, "(x: float, factor: float = 1.5)", from
// the parameters' types (Ps) and the names, defaults and markers given.
template <class Ps> struct signature_writer;
template <class... P> struct signature_writer<std::tuple<P...>> {
  static constexpr const char *types[sizeof...(P) + 1] = {declared_type<P>()..., nullptr};
  static constexpr bool optional[sizeof...(P) + 1] = {is_optional<std::decay_t<P>>::value..., false};
  std::string text = "(";
  std::vector<std::string> names;
  const char *doc = nullptr;

  void add(const arg &a) {
    bool none = optional[names.size()];  // a std::optional parameter without a default takes None
    param(a.name);
    if (none) text += " = None";
  }
  template <class V> void add(const arg_v<V> &a) {
    bool to_float = std::strcmp(types[names.size()] ? types[names.size()] : "", "float") == 0;
    param(a.name);
    text += " = " + default_literal(a.value, to_float);
  }
  void add(pos_only) { mark("/"); }
  void add(kw_only) { mark("*"); }
  void add(const char *d) { doc = d; }
  std::string finish() const { return text + ")"; }

 private:
  void param(const char *name) {
    if (!name) throw error(PYHOST_MISUSE, "", "pyh::arg(nullptr): a parameter needs a name");
    mark(name);
    text += std::string(": ") + types[names.size()];
    names.emplace_back(name);
  }
  void mark(const char *what) {
    if (text.size() > 1) text += ", ";
    text += what;
  }
};

// The signature text and the error site of callable name with parameters Ps.
template <class Ps> struct declaration {
  std::string signature;
  typed_site site;
  const char *doc = nullptr;
  template <class... E> declaration(const std::string &qualified, const char *name, const E &...extras) {
    if (!name) throw error(PYHOST_MISUSE, "", "a NULL name");
    signature_writer<Ps> w;
    (w.add(extras), ...);
    signature = name + w.finish();
    site = typed_site{qualified, std::move(w.names)};
    doc = w.doc;
  }
};

template <class F> struct typed_function_holder : holder_base {
  F fn;
  typed_site site;
  typed_function_holder(F f, typed_site s) : fn(std::move(f)), site(std::move(s)) {}
  static int trampoline(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) noexcept {
    auto *self = static_cast<typed_function_holder *>(ud);
    try {
      using traits = callable_traits<F>;
      return typed_invoker<typename traits::args>::template run<typename traits::result>(h, argv, ret, self->site,
                                                                                           self->fn);
    } catch (...) {
      return exception_to_python(h);
    }
  }
};

}  // namespace detail

// ---- host types: C++ classes as Python classes -------------------------------

template <class T> class type;
template <class T> class class_builder;

namespace detail {

// The payload of an instance: T itself, inline in the Python object when the runtime's
// alignment allows it, else a T the payload points to.  `live` says the T was
// constructed, so a destructor runs exactly once and never on a zeroed payload.
template <class T> struct inline_slot {
  alignas(T) unsigned char storage[sizeof(T)];
  bool live;
  T *get() { return std::launder(reinterpret_cast<T *>(storage)); }
};

struct member_base {
  virtual ~member_base() = default;
  virtual int call(pyhost *h, void *self, const pyhost_args *args, pyhost_ret *ret) = 0;
};
struct typed_member_base {
  typed_site site;  // "module.Type.method" and the parameters' names
  virtual ~typed_member_base() = default;
  virtual int call(pyhost *h, void *self, const pyhost_arg *argv, pyhost_ret *ret) = 0;
};
struct getter_base {
  std::string name;  // "module.Type.property", for argument errors
  virtual ~getter_base() = default;
  virtual int get(pyhost *h, void *self, pyhost_ret *ret) = 0;
  virtual int set(pyhost *h, void *self, const pyhost_args *value) = 0;
};

struct type_state_base : holder_base {
  std::vector<std::unique_ptr<member_base>> methods;
  std::vector<std::unique_ptr<typed_member_base>> typed_methods;
  std::vector<std::unique_ptr<getter_base>> properties;
  bool inline_payload = true;
  size_t live_offset = 0;  // of inline_slot<T>::live
  // The T* of a payload, or nullptr when its T was never made or is gone.
  void *object(void *payload) const noexcept {
    if (!payload || !inline_payload) return payload;
    return *(static_cast<const bool *>(payload) + live_offset) ? payload : nullptr;
  }
};

constexpr size_t max_members = 32;

template <size_t I> int method_trampoline(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) noexcept {
  auto *st = static_cast<type_state_base *>(ud);
  try {
    void *self = st->object(payload);
    if (!self) return pyhost_raise(h, PYHOST_EXC_REFERENCE_ERROR, "the C++ object is gone");
    return st->methods[I]->call(h, self, args, ret);
  } catch (...) {
    return exception_to_python(h);
  }
}
template <size_t I>
int typed_method_trampoline(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) noexcept {
  auto *st = static_cast<type_state_base *>(ud);
  try {
    void *self = st->object(payload);
    if (!self) return pyhost_raise(h, PYHOST_EXC_REFERENCE_ERROR, "the C++ object is gone");
    return st->typed_methods[I]->call(h, self, argv, ret);
  } catch (...) {
    return exception_to_python(h);
  }
}
template <size_t I> int getter_trampoline(pyhost *h, void *payload, void *ud, pyhost_ret *ret) noexcept {
  auto *st = static_cast<type_state_base *>(ud);
  try {
    void *self = st->object(payload);
    if (!self) return pyhost_raise(h, PYHOST_EXC_REFERENCE_ERROR, "the C++ object is gone");
    return st->properties[I]->get(h, self, ret);
  } catch (...) {
    return exception_to_python(h);
  }
}
template <size_t I> int setter_trampoline(pyhost *h, void *payload, void *ud, const pyhost_args *value) noexcept {
  auto *st = static_cast<type_state_base *>(ud);
  try {
    void *self = st->object(payload);
    if (!self) return pyhost_raise(h, PYHOST_EXC_REFERENCE_ERROR, "the C++ object is gone");
    return st->properties[I]->set(h, self, value);
  } catch (...) {
    return exception_to_python(h);
  }
}
template <size_t... I> constexpr std::array<pyhost_fast_method, sizeof...(I)> method_table(std::index_sequence<I...>) {
  return {{&method_trampoline<I>...}};
}
template <size_t... I>
constexpr std::array<pyhost_typed_method, sizeof...(I)> typed_method_table(std::index_sequence<I...>) {
  return {{&typed_method_trampoline<I>...}};
}
template <size_t... I> constexpr std::array<pyhost_fast_getter, sizeof...(I)> getter_table(std::index_sequence<I...>) {
  return {{&getter_trampoline<I>...}};
}
template <size_t... I> constexpr std::array<pyhost_fast_setter, sizeof...(I)> setter_table(std::index_sequence<I...>) {
  return {{&setter_trampoline<I>...}};
}

template <class T> struct type_state : type_state_base {
  std::string ctor_name;  // "module.Type", for argument errors
  pyhost_fast_constructor constructor = nullptr;  // construct<A...>, set by init<A...>()
  // construct_typed<A...> and its signature, set by init<A...>(pyh::arg...)
  pyhost_typed_constructor typed_constructor = nullptr;
  std::string constructor_signature;
  typed_site ctor_site;
  type_state() { live_offset = offsetof(inline_slot<T>, live); }
  static void destroy(void *payload, void *ud) noexcept {
    auto *st = static_cast<type_state *>(ud);
    if (!payload) return;
    if (st->inline_payload) {
      auto *slot = static_cast<inline_slot<T> *>(payload);
      if (slot->live) {
        slot->live = false;
        slot->get()->~T();
      }
    } else {
      delete static_cast<T *>(payload);
    }
  }
  // The fast constructor of a type whose Python constructor takes A...: T(A...) built
  // in the inline payload, or in memory of its own the payload then points to.
  template <class... A> static int construct(pyhost *h, void *ud, const pyhost_args *args, void **payload) noexcept {
    auto *st = static_cast<type_state *>(ud);
    return build(h, st, payload, [&](auto &&make) {
      return invoker<std::tuple<A...>>::template run<void>(h, args, nullptr, st->ctor_name.c_str(), make);
    });
  }
  // The same for the typed constructor (init<A...>(pyh::arg...)).
  template <class... A>
  static int construct_typed(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) noexcept {
    auto *st = static_cast<type_state *>(ud);
    return build(h, st, payload, [&](auto &&make) {
      return typed_invoker<std::tuple<A...>>::template run<void>(h, argv, nullptr, st->ctor_site, make);
    });
  }
  // run(make) reads the arguments and calls make(arguments...), which builds the T.
  template <class Run> static int build(pyhost *h, type_state *st, void **payload, const Run &run) noexcept {
    try {
      if (st->inline_payload) {
        auto *slot = static_cast<inline_slot<T> *>(*payload);
        int rc = run([slot](auto &&...a) { ::new (static_cast<void *>(slot->storage)) T(std::forward<decltype(a)>(a)...); });
        if (rc == PYHOST_OK) slot->live = true;  // a throwing T constructor leaves it not live
        return rc;
      }
      return build_boxed(payload, run);
    } catch (...) {
      return exception_to_python(h);
    }
  }
  // (Out of line: the inline payload's path stays as light as a C constructor.)
  template <class Run> PYH_NOINLINE static int build_boxed(void **payload, const Run &run) {
    T *made = nullptr;
    int rc = run([&made](auto &&...a) { made = new T(std::forward<decltype(a)>(a)...); });
    if (rc == PYHOST_OK) *payload = made;
    return rc;
  }
};

// A method of T: F is a member function pointer, or a callable taking T& first.
// params: its parameters after the object; bind(fn, obj): a callable of those.
template <class T, class F> struct method_traits {
  template <class... A> struct tail_of;
  template <class A0, class... A> struct tail_of<std::tuple<A0, A...>> { using type = std::tuple<A...>; };
  static constexpr bool member = std::is_member_function_pointer<F>::value;
  using all = typename callable_traits<F>::args;
  using params = typename std::conditional_t<member, std::enable_if<true, all>, tail_of<all>>::type;
  using result = typename callable_traits<F>::result;
  static auto bind(F &fn, T &obj) {
    if constexpr (member)
      return [&fn, &obj](auto &&...a) -> decltype(auto) { return (obj.*fn)(std::forward<decltype(a)>(a)...); };
    else
      return [&fn, &obj](auto &&...a) -> decltype(auto) { return fn(obj, std::forward<decltype(a)>(a)...); };
  }
};

template <class T, class F> struct typed_method_holder : typed_member_base {
  F fn;
  explicit typed_method_holder(F f) : fn(std::move(f)) {}
  int call(pyhost *h, void *self, const pyhost_arg *argv, pyhost_ret *ret) override {
    using m = method_traits<T, F>;
    return typed_invoker<typename m::params>::template run<typename m::result>(h, argv, ret, site,
                                                                               m::bind(fn, *static_cast<T *>(self)));
  }
};

template <class T, class F> struct method_holder : member_base {
  F fn;  // a member function pointer, or a callable taking T& first
  std::string name_text;
  const std::string *name = &name_text;
  method_holder(F f, std::string n) : fn(f), name_text(std::move(n)) {}
  int call(pyhost *h, void *self, const pyhost_args *args, pyhost_ret *ret) override {
    using m = method_traits<T, F>;
    return invoker<typename m::params>::template run<typename m::result>(h, args, ret, name->c_str(),
                                                                         m::bind(fn, *static_cast<T *>(self)));
  }
};

template <class T, class M> struct member_property : getter_base {
  M T::*member;
  explicit member_property(M T::*m) : member(m) {}
  int get(pyhost *h, void *self, pyhost_ret *ret) override {
    return set_result<M>(h, ret, static_cast<T *>(self)->*member);
  }
  int set(pyhost *h, void *self, const pyhost_args *value) override {
    M v{};
    int rc = arg_reader<M>::read(h, value, 0, v, name.c_str());
    if (rc == PYHOST_OK) static_cast<T *>(self)->*member = std::move(v);
    return rc;
  }
};

template <class T, class G, class S> struct accessor_property : getter_base {
  G getter;
  S setter;  // nullptr_t when read-only
  accessor_property(G g, S s) : getter(g), setter(s) {}
  int get(pyhost *h, void *self, pyhost_ret *ret) override {
    T &obj = *static_cast<T *>(self);
    if constexpr (std::is_member_function_pointer<G>::value) return set_result(h, ret, (obj.*getter)());
    else return set_result(h, ret, getter(obj));
  }
  int set(pyhost *h, void *self, const pyhost_args *value) override {
    if constexpr (std::is_same<S, std::nullptr_t>::value) {
      (void)self, (void)value;
      return pyhost_raise(h, PYHOST_EXC_ATTRIBUTE_ERROR, "read-only property");
    } else {
      T &obj = *static_cast<T *>(self);
      using A = std::decay_t<std::tuple_element_t<std::is_member_function_pointer<S>::value ? 0 : 1,
                                                  typename callable_traits<S>::args>>;
      A v{};
      int rc = arg_reader<A>::read(h, value, 0, v, name.c_str());
      if (rc != PYHOST_OK) return rc;
      if constexpr (std::is_member_function_pointer<S>::value) (obj.*setter)(std::move(v));
      else setter(obj, std::move(v));
      return PYHOST_OK;
    }
  }
};

}  // namespace detail

// ---- modules -----------------------------------------------------------------

class interpreter;

// A host module (pyhost_module_new): `import name` works in Python at once.  Owns the
// C++ callables of its functions.  Move-only; the destructor unregisters the functions
// and removes the module from sys.modules (pyhost_module_free).
class module {
 public:
  module() noexcept = default;
  module(pyhost *h, std::vector<std::unique_ptr<detail::holder_base>> *keep, const char *name, const char *doc)
      : h_(h), keep_(keep), name_(name) {
    detail::check(h_, pyhost_module_new(h_, name, doc, &m_));
  }
  module(module &&o) noexcept
      : h_(o.h_), keep_(o.keep_), m_(std::exchange(o.m_, nullptr)), name_(std::move(o.name_)), fns_(std::move(o.fns_)) {}
  module &operator=(module &&o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_, keep_ = o.keep_, m_ = std::exchange(o.m_, nullptr), name_ = std::move(o.name_), fns_ = std::move(o.fns_);
    }
    return *this;
  }
  module(const module &) = delete;
  module &operator=(const module &) = delete;
  ~module() { reset(); }

  // Adds function `name` calling fn (a lambda, a function object or a function pointer):
  // Python's arguments are converted to fn's parameter types (a trailing std::optional
  // parameter may be left out), its result from the return type; a C++ exception
  // becomes a Python exception with its message.  Uses the fast form (borrowed view).
  template <class F> module &def(const char *name, F &&fn, const char *doc = nullptr) {
    using D = std::decay_t<F>;
    auto holder = std::make_unique<detail::function_holder<D>>(D(std::forward<F>(fn)), name_ + "." + name);
    detail::check(h_, pyhost_module_add_fast_function(h_, m_, name, &detail::function_holder<D>::trampoline,
                                                      holder.get(), doc));
    fns_[name] = std::move(holder);  // a replaced function is unregistered: its holder may go
    return *this;
  }
  // Adds function `name` with its parameters declared: one pyh::arg per parameter of
  // fn, in order, optionally with a default (pyh::arg("n") = 3), pyh::pos_only() and
  // pyh::kw_only() markers between them, and a docstring:
  //   app.def("scale", [](double x, double factor) { return x * factor; },
  //           pyh::arg("x"), pyh::arg("factor") = 1.5, "scales x");
  // It is a typed host function (pyhost_module_add_typed_function) whose signature is
  // written from fn's parameter types: Python may pass keywords, sees the signature
  // (inspect.signature: "(x, factor=1.5)"), and gets CPython's TypeErrors ("app.scale()
  // missing required argument 'x' (pos 1)").  Parameter types: bool, integers (checked
  // against the C++ type's range: OverflowError), floating point, std::string,
  // std::string_view and const char * (borrowed until fn returns), pyh::bytes, and
  // std::optional of those (None allowed; without a default, the default is None).
  template <class F, class E0, class... E, class = std::enable_if_t<detail::starts_declaration<E0>>>
  module &def(const char *name, F &&fn, const E0 &first, const E &...rest) {
    using D = std::decay_t<F>;
    using params = typename detail::callable_traits<D>::args;
    static_assert(detail::check_declaration<params, E0, E...>(), "");
    detail::declaration<params> decl(name_ + "." + (name ? name : ""), name, first, rest...);
    auto holder = std::make_unique<detail::typed_function_holder<D>>(D(std::forward<F>(fn)), std::move(decl.site));
    detail::check(h_, pyhost_module_add_typed_function(h_, m_, decl.signature.c_str(),
                                                       &detail::typed_function_holder<D>::trampoline, holder.get(),
                                                       decl.doc));
    fns_[name] = std::move(holder);
    return *this;
  }
  // Sets attribute `name` to a converted value.
  template <class V> module &add(const char *name, const V &v) {
    pyh::value val(v);
    detail::check(h_, pyhost_module_add_value(h_, m_, name, val.get()));
    return *this;
  }
  // Creates exception class `<module>.<name>` deriving from base.
  module &add_exception(const char *name, pyhost_exc base = PYHOST_EXC_EXCEPTION) {
    detail::check(h_, pyhost_module_add_exception(h_, m_, name, base, nullptr));
    return *this;
  }
  // Starts a host type `<module>.<name>` backed by C++ class T (class_builder<T>).
  template <class T> class_builder<T> type(const char *name, const char *doc = nullptr);

  pyhost_module *get() const noexcept { return m_; }
  pyhost *handle() const noexcept { return h_; }
  const std::string &name() const noexcept { return name_; }

 private:
  void reset() noexcept {
    if (m_) pyhost_module_free(h_, m_);  // the functions are never called after this
    m_ = nullptr;
    fns_.clear();
  }
  pyhost *h_ = nullptr;
  std::vector<std::unique_ptr<detail::holder_base>> *keep_ = nullptr;
  pyhost_module *m_ = nullptr;
  std::string name_;
  std::map<std::string, std::unique_ptr<detail::holder_base>> fns_;
};

// A host type backed by C++ class T.  Instances made from Python run the registered
// constructor; the T is destroyed exactly once, when Python drops the instance (or
// during finalize).  Move-only; the destructor drops the host's handle on the class
// (instances live on; the callbacks' state lives until the interpreter is freed).
template <class T> class type {
 public:
  type() noexcept = default;
  type(pyhost *h, pyhost_type *t, detail::type_state<T> *st) noexcept
      : h_(h), t_(t), st_(st), inline_(st->inline_payload) {}
  type(type &&o) noexcept : h_(o.h_), t_(std::exchange(o.t_, nullptr)), st_(o.st_), inline_(o.inline_) {}
  type &operator=(type &&o) noexcept {
    if (this != &o) {
      pyhost_type_free(h_, t_);
      h_ = o.h_, t_ = std::exchange(o.t_, nullptr), st_ = o.st_, inline_ = o.inline_;
    }
    return *this;
  }
  type(const type &) = delete;
  type &operator=(const type &) = delete;
  ~type() { pyhost_type_free(h_, t_); }

  // A new instance holding T(args...), made from C++ (the Python constructor is not run).
  template <class... A> pyh::value create(A &&...args) const {
    pyhost_value *obj = nullptr;
    if (inline_) {
      detail::check(h_, pyhost_object_new(h_, t_, nullptr, &obj));  // a zeroed slot: not live
      pyh::value owned(obj);
      void *p = nullptr;
      detail::check(h_, pyhost_object_payload(h_, obj, t_, &p));
      auto *slot = static_cast<detail::inline_slot<T> *>(p);
      ::new (static_cast<void *>(slot->storage)) T(std::forward<A>(args)...);  // a throw leaves it not live
      slot->live = true;
      return owned;
    }
    std::unique_ptr<T> made(new T(std::forward<A>(args)...));
    detail::check(h_, pyhost_object_new(h_, t_, made.get(), &obj));
    made.release();  // the instance's destructor deletes it
    return pyh::value(obj);
  }
  // The T inside an instance (or a Python subclass's instance); PYHOST_TYPE for others.
  T &of(const pyh::value &obj) const {
    void *p = nullptr;
    detail::check(h_, pyhost_object_payload(h_, obj.get(), t_, &p));
    void *self = st_->object(p);
    if (!self) throw error(PYHOST_MISUSE, "", "the C++ object of this instance is gone");
    return *static_cast<T *>(self);
  }
  // The class as a value.
  pyh::value object() const {
    pyhost_value *v = nullptr;
    detail::check(h_, pyhost_type_value(h_, t_, &v));
    return pyh::value(v);
  }
  // 1 when the payload lives inline in the Python object (the runtime's alignment allows T).
  bool inline_payload() const noexcept { return inline_; }
  pyhost_type *get() const noexcept { return t_; }

 private:
  pyhost *h_ = nullptr;
  pyhost_type *t_ = nullptr;
  // owned by the interpreter (instances may outlive this handle): read only after a
  // pyhost call on h_ succeeded, never once the interpreter is gone
  detail::type_state<T> *st_ = nullptr;
  bool inline_ = false;
};

// Declares a host type: .init<A...>(), .def("m", &T::m), .property("x", &T::x), then
// .make() gives the pyh::type<T>.
template <class T> class class_builder {
 public:
  class_builder(module &m, std::vector<std::unique_ptr<detail::holder_base>> *keep, const char *name, const char *doc)
      : m_(m), keep_(keep), name_(name), doc_(doc ? doc : ""), st_(new detail::type_state<T>()) {
    st_->ctor_name = m.name() + "." + name;
  }
  // Python may call the class as Type(a...): T(a...) is built in place.
  template <class... A> class_builder &init() {
    st_->constructor = &detail::type_state<T>::template construct<A...>;
    st_->typed_constructor = nullptr;
    return *this;
  }
  // The same with the parameters declared, as module::def declares them: Python may
  // call Type(a, name=b), inspect.signature(Type) shows them, wrong arguments get
  // CPython's TypeErrors.  .init<std::string, int>(pyh::arg("name"), pyh::arg("count") = 0)
  template <class... A, class E0, class... E, class = std::enable_if_t<detail::starts_declaration<E0>>>
  class_builder &init(const E0 &first, const E &...rest) {
    static_assert(detail::check_declaration<std::tuple<A...>, E0, E...>(), "");
    static_assert(((detail::declared<E> != 5) && ...),
                  "pyhost: a constructor's docstring is the type's (module.type<T>(name, doc))");
    detail::declaration<std::tuple<A...>> decl(st_->ctor_name, name_.c_str(), first, rest...);
    st_->constructor_signature = std::move(decl.signature);
    st_->ctor_site = std::move(decl.site);
    st_->typed_constructor = &detail::type_state<T>::template construct_typed<A...>;
    st_->constructor = nullptr;
    return *this;
  }
  // A method with its parameters declared (as module::def declares them):
  // .def("add", &Counter::add, pyh::arg("n"), pyh::arg("step") = 1).
  template <class F, class E0, class... E, class = std::enable_if_t<detail::starts_declaration<E0>>>
  class_builder &def(const char *name, F fn, const E0 &first, const E &...rest) {
    return def_typed(name, fn, first, rest...);
  }
  template <class F, class... E> class_builder &def_typed(const char *name, F fn, const E &...extras) {
    using params = typename detail::method_traits<T, F>::params;
    static_assert(detail::check_declaration<params, E...>(), "");
    if (st_->typed_methods.size() >= detail::max_members) throw error(PYHOST_MISUSE, "", "too many methods");
    detail::declaration<params> decl(m_.name() + "." + name_ + "." + (name ? name : ""), name, extras...);
    auto holder = std::make_unique<detail::typed_method_holder<T, F>>(fn);
    holder->site = std::move(decl.site);
    st_->typed_methods.push_back(std::move(holder));
    typed_methods_.push_back({std::move(decl.signature), decl.doc});
    return *this;
  }
  // A method from a member function pointer, or a callable taking T& first.
  template <class F> class_builder &def(const char *name, F fn, const char *doc = nullptr) {
    if (st_->methods.size() >= detail::max_members) throw error(PYHOST_MISUSE, "", "too many methods");
    st_->methods.emplace_back(new detail::method_holder<T, F>(fn, m_.name() + "." + name_ + "." + name));
    methods_.push_back({name, doc});
    return *this;
  }
  // A read-write property from a data member pointer.
  template <class M> class_builder &property(const char *name, M T::*member, const char *doc = nullptr) {
    return add_property(name, new detail::member_property<T, M>(member), true, doc);
  }
  template <class M> class_builder &property_readonly(const char *name, M T::*member, const char *doc = nullptr) {
    return add_property(name, new detail::member_property<T, M>(member), false, doc);
  }
  // A property from a getter (member function or callable taking const T&) and an
  // optional setter.
  template <class G, class S = std::nullptr_t>
  class_builder &property(const char *name, G getter, S setter = nullptr, const char *doc = nullptr) {
    return add_property(name, new detail::accessor_property<T, G, S>(getter, setter),
                        !std::is_same<S, std::nullptr_t>::value, doc);
  }
  // Creates the class in the module.
  pyh::type<T> make() {
    pyhost *h = m_.handle();
    // Inline when the runtime aligns payloads enough for T: 16 bytes from 3.8, 8 before.
    size_t align = pyhost_python_version(h) >= PYHOST_PY(3, 8) ? 16 : 8;
    st_->inline_payload = alignof(T) <= align;
    static constexpr auto mt = detail::method_table(std::make_index_sequence<detail::max_members>());
    static constexpr auto gt = detail::getter_table(std::make_index_sequence<detail::max_members>());
    static constexpr auto stt = detail::setter_table(std::make_index_sequence<detail::max_members>());
    static constexpr auto tmt = detail::typed_method_table(std::make_index_sequence<detail::max_members>());
    std::vector<pyhost_fast_method_def> md;
    for (size_t i = 0; i < methods_.size(); i++) md.push_back({methods_[i].first.c_str(), mt[i], methods_[i].second});
    std::vector<pyhost_typed_method_def> td;
    for (size_t i = 0; i < typed_methods_.size(); i++)
      td.push_back({typed_methods_[i].first.c_str(), tmt[i], typed_methods_[i].second});
    std::vector<pyhost_fast_property_def> pd;
    for (size_t i = 0; i < props_.size(); i++)
      pd.push_back({props_[i].name.c_str(), gt[i], props_[i].writable ? stt[i] : nullptr, props_[i].doc});
    pyhost_type_spec spec = {};
    spec.size = sizeof(pyhost_type_spec);
    spec.name = name_.c_str();
    spec.doc = doc_.empty() ? nullptr : doc_.c_str();
    spec.fast_methods = md.data();
    spec.n_fast_methods = md.size();
    spec.fast_properties = pd.data();
    spec.n_fast_properties = pd.size();
    spec.fast_constructor = st_->constructor;
    spec.typed_methods = td.data();
    spec.n_typed_methods = td.size();
    spec.typed_constructor = st_->typed_constructor;
    spec.constructor_signature = st_->typed_constructor ? st_->constructor_signature.c_str() : nullptr;
    // an inline T that is trivially destructible needs no call when the instance dies
    bool trivial = st_->inline_payload && std::is_trivially_destructible<T>::value;
    spec.destructor = trivial ? nullptr : &detail::type_state<T>::destroy;
    spec.userdata = st_.get();
    spec.payload_size = st_->inline_payload ? sizeof(detail::inline_slot<T>) : 0;
    spec.flags = PYHOST_TYPE_WEAKREF;
    pyhost_type *t = nullptr;
    detail::check(h, pyhost_type_new(h, m_.get(), &spec, &t));
    auto *st = st_.get();
    keep_->push_back(std::move(st_));  // instances may outlive the handle: until pyhost_free
    return pyh::type<T>(h, t, st);
  }

 private:
  struct prop {
    std::string name;
    bool writable;
    const char *doc;
  };
  class_builder &add_property(const char *name, detail::getter_base *g, bool writable, const char *doc) {
    std::unique_ptr<detail::getter_base> owned(g);
    owned->name = m_.name() + "." + name_ + "." + name;
    if (st_->properties.size() >= detail::max_members) throw error(PYHOST_MISUSE, "", "too many properties");
    st_->properties.push_back(std::move(owned));
    props_.push_back({name, writable, doc});
    return *this;
  }
  module &m_;
  std::vector<std::unique_ptr<detail::holder_base>> *keep_;
  std::string name_, doc_;
  std::unique_ptr<detail::type_state<T>> st_;
  std::vector<std::pair<std::string, const char *>> methods_;
  std::vector<std::pair<std::string, const char *>> typed_methods_;  // signature, doc
  std::vector<prop> props_;
};

template <class T> class_builder<T> module::type(const char *name, const char *doc) {
  return class_builder<T>(*this, keep_, name, doc);
}

// ---- plugins -----------------------------------------------------------------

// A loaded plugin (pyhost_plugin_load); move-only; the destructor unloads it.
class plugin {
 public:
  plugin() noexcept = default;
  plugin(pyhost *h, const char *path) : h_(h) { detail::check(h_, pyhost_plugin_load(h_, path, &p_)); }
  plugin(plugin &&o) noexcept : h_(o.h_), p_(std::exchange(o.p_, nullptr)) {}
  plugin &operator=(plugin &&o) noexcept {
    if (this != &o) {
      pyhost_plugin_unload(p_);
      h_ = o.h_, p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  plugin(const plugin &) = delete;
  plugin &operator=(const plugin &) = delete;
  ~plugin() { pyhost_plugin_unload(p_); }

  // Calls hook(args...) (pyhost_plugin_call), keywords included, the result as R.
  // A missing hook is pyh::error with PYHOST_NOHOOK.
  // An argument or a result of the wrong type names the plugin and the hook ("plugin
  // scorer: hook score: the result: expected float, got str").
  template <class R = pyh::value, class... A> R call(const char *hook, const A &...a) const {
    return detail::naming([&] { return who(hook); }, [&] {
      detail::value_args va = detail::make_value_args(a...);
      pyhost_value *r = nullptr;
      detail::check(h_, pyhost_plugin_call(h_, p_, hook, va.args.get(), va.kwargs.get(), &r));
      return detail::naming([] { return "the result"; }, [&] { return detail::take_result<R>(r); });
    });
  }
  bool has_hook(const char *hook) const {
    int rc = pyhost_plugin_has_hook(h_, p_, hook);
    if (rc == PYHOST_NOHOOK) return false;
    detail::check(h_, rc);
    return true;
  }
  // The hook prepared for hot loops (the fastest route: prepared calls).
  pyh::function hook(const char *name) const {
    pyhost_value *m = nullptr, *f = nullptr;
    detail::check(h_, pyhost_plugin_module(h_, p_, &m));
    pyh::value mod(m);
    detail::check(h_, pyhost_getattr(h_, mod.get(), name, &f));
    return pyh::function(h_, pyh::value(f), who(name));
  }
  void reload() { detail::check(h_, pyhost_plugin_reload(h_, p_)); }
  std::vector<std::string> hooks() const {
    pyhost_value *v = nullptr;
    detail::check(h_, pyhost_plugin_hooks(h_, p_, &v));
    return detail::take_result<std::vector<std::string>>(v);
  }
  const char *name() const noexcept { return pyhost_plugin_name(p_); }
  const char *path() const noexcept { return pyhost_plugin_path(p_); }
  pyhost_plugin *get() const noexcept { return p_; }

 private:
  std::string who(const char *hook) const {
    return std::string("plugin ") + pyhost_plugin_name(p_) + ": hook " + (hook ? hook : "(null)");
  }
  pyhost *h_ = nullptr;
  pyhost_plugin *p_ = nullptr;
};

// ---- configuration and the interpreter -------------------------------------

// pyhost_config as a builder: pyh::config().library(path).sys_path("plugins").
class config {
 public:
  config() : c_(pyhost_config_new()) {
    if (!c_) throw std::bad_alloc();
  }
  config(config &&o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
  config(const config &) = delete;
  config &operator=(const config &) = delete;
  ~config() { pyhost_config_free(c_); }
  config &library(const char *path) { return set(pyhost_config_set_library(c_, path)); }
  config &home(const char *dir) { return set(pyhost_config_set_home(c_, dir)); }
  config &sys_path(const char *dir) { return set(pyhost_config_add_sys_path(c_, dir)); }
  config &min_python(unsigned long hex) { return set(pyhost_config_set_min_python(c_, hex)); }
  config &flags(unsigned f) { return set(pyhost_config_set_flags(c_, f)); }
  config &isolated(bool on = true) { return set(pyhost_config_set_isolated(c_, on ? 1 : 0)); }
  pyhost_config *get() const noexcept { return c_; }

 private:
  config &set(int rc) {
    if (rc == PYHOST_NOMEM) throw std::bad_alloc();
    if (rc != PYHOST_OK) throw error(rc, "", "pyhost_config: invalid setting");
    return *this;
  }
  pyhost_config *c_;
};

// The running Python (pyhost_init ... pyhost_free).  Move-only.  Destroy the handles
// made from it (plugins, modules, types, functions) before it; values may outlive it.
class interpreter {
 public:
  // Starts the Python at library (nullptr: discovery, docs/discovery.md).
  explicit interpreter(const char *library = nullptr) {
    config c;
    if (library) c.library(library);
    start(c.get());
  }
  explicit interpreter(const config &c) { start(c.get()); }
  interpreter(interpreter &&o) noexcept : h_(std::exchange(o.h_, nullptr)), keep_(std::move(o.keep_)) {}
  interpreter(const interpreter &) = delete;
  interpreter &operator=(const interpreter &) = delete;
  interpreter &operator=(interpreter &&) = delete;
  ~interpreter() {
    pyhost_free(h_);  // finalize runs the destructors of instances Python frees ...
    keep_.reset();    // ... so the types' state goes only after it
  }

  void exec(const char *code, const char *filename = nullptr) { detail::check(h_, pyhost_exec(h_, code, filename)); }
  void exec_file(const char *path) { detail::check(h_, pyhost_exec_file(h_, path)); }
  template <class R = pyh::value> R eval(const char *expr) {
    pyhost_value *r = nullptr;
    detail::check(h_, pyhost_eval(h_, expr, &r));
    return detail::take_result<R>(r);
  }
  pyh::value import(const char *name) {
    pyhost_value *m = nullptr;
    detail::check(h_, pyhost_import(h_, name, &m));
    return pyh::value(m);
  }
  template <class R = pyh::value> R resolve(const char *dotted) {
    pyhost_value *r = nullptr;
    detail::check(h_, pyhost_resolve(h_, dotted, &r));
    return detail::take_result<R>(r);
  }
  template <class R = pyh::value> R attr(const pyh::value &obj, const char *name) {
    pyhost_value *r = nullptr;
    detail::check(h_, pyhost_getattr(h_, obj.get(), name, &r));
    return detail::take_result<R>(r);
  }
  template <class V> void set_attr(const pyh::value &obj, const char *name, const V &v) {
    pyh::value val(v);
    detail::check(h_, pyhost_setattr(h_, obj.get(), name, val.get()));
  }
  template <class R = pyh::value> R global(const char *name) {
    pyhost_value *r = nullptr;
    detail::check(h_, pyhost_get_global(h_, name, &r));
    return detail::take_result<R>(r);
  }
  template <class V> void set_global(const char *name, const V &v) {
    pyh::value val(v);
    detail::check(h_, pyhost_set_global(h_, name, val.get()));
  }
  // Calls the object a dotted name resolves to, once: call<double>("math.hypot", 3, 4).
  // For repeated calls, function() prepares it.
  template <class R = pyh::value, class... A> R call(const char *dotted, const A &...a) {
    return detail::naming([&] { return dotted ? dotted : "(null)"; }, [&] {
      return detail::typed_call<R>(
          h_, dotted != nullptr, [&](const char *fmt, auto... v) { return pyhost_call_namef(h_, dotted, fmt, v...); },
          [&](pyhost_value *args, pyhost_value *kwargs, pyhost_value **r) {
            return pyhost_call_name(h_, dotted, args, kwargs, r);
          },
          a...);
    });
  }
  // Calls a callable value.
  template <class R = pyh::value, class... A> R call(const pyh::value &callable, const A &...a) {
    detail::value_args va = detail::make_value_args(a...);
    pyhost_value *r = nullptr;
    detail::check(h_, pyhost_call(h_, callable.get(), va.args.get(), va.kwargs.get(), &r));
    return detail::take_result<R>(r);
  }
  // A prepared callable from a dotted name or a value.
  pyh::function function(const char *dotted) {
    pyh::value f = resolve(dotted);
    return pyh::function(h_, std::move(f), dotted);
  }
  pyh::function function(pyh::value callable) { return pyh::function(h_, std::move(callable)); }
  // An expression with named inputs, compiled once (pyhost_prepare_expression) and
  // called as a function: py.expression("x, y", "x * 2 + y").call<int>(20, 1), keywords
  // included ("y"_kw = 1).  It reads and writes no globals of __main__.
  pyh::function expression(const char *inputs, const char *expr) {
    pyhost_callable *c = nullptr;
    detail::check(h_, pyhost_prepare_expression(h_, inputs, expr, &c));
    return pyh::function(h_, c, std::string("expression ") + (expr ? expr : "(null)"));
  }
  pyh::plugin load_plugin(const char *path) { return pyh::plugin(h_, path); }
  pyh::module module(const char *name, const char *doc = nullptr) {
    return pyh::module(h_, keep_.get(), name, doc);
  }
  void interrupt() { detail::check(h_, pyhost_interrupt(h_)); }
  // Finalizes Python now (the handle stays for the message).
  void finalize() { detail::check(h_, pyhost_finalize(h_)); }

  unsigned long python_version() const noexcept { return pyhost_python_version(h_); }
  const char *python_version_text() const noexcept { return pyhost_python_version_text(h_); }
  const char *library_path() const noexcept { return pyhost_library_path(h_); }
  pyhost *get() const noexcept { return h_; }
  operator pyhost *() const noexcept { return h_; }  // for the C API

 private:
  void start(const pyhost_config *c) {
    int rc = pyhost_init(c, &h_);
    if (rc != PYHOST_OK) {
      error e(rc, "", pyhost_errmsg(h_));
      pyhost_free(h_);
      h_ = nullptr;
      if (rc == PYHOST_NOMEM) throw std::bad_alloc();
      throw e;
    }
    keep_.reset(new std::vector<std::unique_ptr<detail::holder_base>>());
  }
  pyhost *h_ = nullptr;
  std::unique_ptr<std::vector<std::unique_ptr<detail::holder_base>>> keep_;
};

// ---- threads -----------------------------------------------------------------

namespace detail {
// A per-thread scope opened by enter and closed by leave on the same thread: neither
// copyable nor movable.
template <int (*Enter)(pyhost *), int (*Leave)(pyhost *)> class thread_scope {
 public:
  explicit thread_scope(pyhost *h) : h_(h) { check(h_, Enter(h_)); }
  thread_scope(const thread_scope &) = delete;
  thread_scope &operator=(const thread_scope &) = delete;
  ~thread_scope() { Leave(h_); }

 private:
  pyhost *h_;
};
}  // namespace detail

// Holds the GIL for a scope (pyhost_gil_enter / pyhost_gil_leave): the pyhost calls
// inside skip taking it.  A scope belongs to its thread.
using gil_guard = detail::thread_scope<&pyhost_gil_enter, &pyhost_gil_leave>;

// Keeps a Python thread state for this host thread for a scope (pyhost_thread_attach /
// pyhost_thread_detach): a worker that calls in a loop attaches once.
using thread_attachment = detail::thread_scope<&pyhost_thread_attach, &pyhost_thread_detach>;


// ---- bulk data: loans, views and arrays (docs/cpp.md "Bulk data") -----------

namespace detail {
// The struct letter of an item type T ('\0' for a type pyhost does not lend).
template <class T> constexpr char format_letter() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same<U, bool>::value) return '?';
  else if constexpr (std::is_same<U, float>::value) return 'f';
  else if constexpr (std::is_same<U, double>::value) return 'd';
  else if constexpr (std::is_integral<U>::value) {
    constexpr bool s = std::is_signed<U>::value;
    switch (sizeof(U)) {
    case 1: return s ? 'b' : 'B';
    case 2: return s ? 'h' : 'H';
    case 4: return s ? 'i' : 'I';
    case 8: return s ? 'q' : 'Q';
    }
  }
  return '\0';
}
}  // namespace detail

// A contiguous run of T: what pyh::view::as<T>() gives (std::span's shape, C++17).
template <class T> class span {
 public:
  span() noexcept = default;
  span(T *data, size_t size) noexcept : p_(data), n_(size) {}
  T *data() const noexcept { return p_; }
  size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  T &operator[](size_t i) const noexcept { return p_[i]; }
  T *begin() const noexcept { return p_; }
  T *end() const noexcept { return p_ + n_; }

 private:
  T *p_ = nullptr;
  size_t n_ = 0;
};

// Host memory lent to Python (pyhost_buffer_new): move-only; the destructor (or
// release()) ends the loan.  Python gets value() as a memoryview; the memory is the
// host's again when free_fn runs (at once when Python kept nothing).
class buffer {
 public:
  buffer() noexcept = default;
  buffer(pyhost *h, const pyhost_buffer_spec &spec) : h_(h) {
    detail::check(h, pyhost_buffer_new(h, &spec, &b_));
  }
  // data[shape[0]][shape[1]]... of T (an arithmetic type of 1, 2, 4 or 8 bytes), read-only
  // for const T.
  template <class T>
  buffer(pyhost *h, T *data, std::initializer_list<size_t> shape,
         pyhost_buffer_free_fn free_fn = nullptr, void *userdata = nullptr)
      : h_(h) {
    constexpr char letter = detail::format_letter<T>();
    static_assert(letter != '\0', "pyh::buffer lends arithmetic items of 1, 2, 4 or 8 bytes");
    static const char fmt[2] = {letter, '\0'};
    pyhost_buffer_spec spec{};
    if (shape.size() < 1 || shape.size() > PYHOST_BUFFER_MAXDIM)
      throw error(PYHOST_MISUSE, "", "pyh::buffer: a shape has 1 to 8 dimensions");
    spec.data = const_cast<std::remove_const_t<T> *>(data);
    spec.format = fmt;
    spec.ndim = static_cast<int>(shape.size());
    std::copy(shape.begin(), shape.end(), spec.shape);
    spec.writable = !std::is_const<T>::value;
    spec.free_fn = free_fn;
    spec.userdata = userdata;
    detail::check(h, pyhost_buffer_new(h, &spec, &b_));
  }
  buffer(const buffer &) = delete;
  buffer &operator=(const buffer &) = delete;
  buffer(buffer &&o) noexcept : h_(o.h_), b_(std::exchange(o.b_, nullptr)) {}
  buffer &operator=(buffer &&o) noexcept {
    if (this != &o) {
      release();
      h_ = o.h_;
      b_ = std::exchange(o.b_, nullptr);
    }
    return *this;
  }
  ~buffer() { release(); }

  pyhost_buffer *get() const noexcept { return b_; }
  explicit operator bool() const noexcept { return b_ != nullptr; }
  // true when Python reads the memory in place (3.11+), false for a copy (before).
  bool in_place() const noexcept { return pyhost_buffer_in_place(b_) != 0; }
  // The memoryview Python reads, to pass in any call.
  value memoryview() const {
    pyhost_value *v = nullptr;
    detail::check(h_, pyhost_buffer_value(h_, b_, &v));
    return value(v);
  }
  // Ends the loan: the exports Python still holds (0: free_fn has run).  Again: 0.
  size_t release() noexcept {
    size_t left = 0;
    if (b_) pyhost_buffer_release(h_, std::exchange(b_, nullptr), &left);
    return left;
  }

 private:
  pyhost *h_ = nullptr;
  pyhost_buffer *b_ = nullptr;
};

// A Python object's buffer read in place (pyhost_view_get): move-only; the destructor
// releases it.  as<T>() gives the items as a span once format and layout agree.
// A host function's parameter of type `const pyh::view &` is a borrowed one
// (pyhost_args_view): valid until the function returns, released by pyhost then.
class view {
 public:
  view() = default;
  view(pyhost *h, const value &obj, unsigned flags = 0) : h_(h), own_(new pyhost_view()) {
    v_ = own_.get();
    detail::check(h, pyhost_view_get(h, obj.get(), flags, own_.get()));
  }
  // A callback's borrowed view (pyhost_args_view, a typed buffer parameter): read
  // through this object, never released by it.
  explicit view(const pyhost_view *borrowed) noexcept : v_(borrowed) {}
  view(const view &) = delete;
  view &operator=(const view &) = delete;
  view(view &&o) noexcept : h_(o.h_), own_(std::move(o.own_)), v_(std::exchange(o.v_, nullptr)) {}
  view &operator=(view &&o) noexcept {
    if (this != &o) {
      release();
      h_ = o.h_;
      own_ = std::move(o.own_);
      v_ = std::exchange(o.v_, nullptr);
    }
    return *this;
  }
  ~view() { release(); }

  // The C view (its pointers stay put: the view lives on the heap, or is pyhost's).
  const pyhost_view &raw() const noexcept { return *v_; }
  explicit operator bool() const noexcept { return v_ && v_->data; }
  void *data() const noexcept { return v_ ? v_->data : nullptr; }
  size_t bytes() const noexcept { return v_ ? v_->len : 0; }
  size_t itemsize() const noexcept { return v_ ? v_->itemsize : 0; }
  std::string_view format() const noexcept { return v_ && v_->format ? v_->format : ""; }
  bool readonly() const noexcept { return !v_ || v_->readonly; }
  bool copied() const noexcept { return v_ && v_->copied; }
  int ndim() const noexcept { return v_ ? v_->ndim : 0; }
  std::vector<ptrdiff_t> shape() const { return v_ ? std::vector<ptrdiff_t>(v_->shape, v_->shape + v_->ndim) : std::vector<ptrdiff_t>(); }
  std::vector<ptrdiff_t> strides() const { return v_ ? std::vector<ptrdiff_t>(v_->strides, v_->strides + v_->ndim) : std::vector<ptrdiff_t>(); }
  bool c_contiguous() const noexcept {
    if (!v_) return false;
    ptrdiff_t step = static_cast<ptrdiff_t>(v_->itemsize);
    for (int i = v_->ndim - 1; i >= 0; i--) {
      if (v_->shape[i] > 1 && v_->strides[i] != step) return false;
      step *= v_->shape[i];
    }
    return true;
  }
  // Every item as T, in C order: PYHOST_TYPE (as pyh::error) when the format is not
  // T's native letter ("d", "<d" on a little-endian host, "=d", "@d"), the view is
  // strided, or T is not const and the view read-only.
  template <class T> span<T> as() const {
    constexpr char letter = detail::format_letter<T>();
    static_assert(letter != '\0', "pyh::view::as reads arithmetic items of 1, 2, 4 or 8 bytes");
    std::string_view f = format();
    if (!f.empty() && (f[0] == '@' || f[0] == '=' || (f[0] == (little_endian() ? '<' : '>'))))
      f.remove_prefix(1);
    char have = f.size() == 1 ? f[0] : '\0';
    // 'l'/'L' are 8 bytes on LP64 and 4 on LLP64: the same item as 'q' or 'i' there
    if ((have == 'l' || have == 'L') && v_ && v_->itemsize == sizeof(T))
      have = static_cast<char>(have == 'l' ? letter | 0x20 : letter & ~0x20);
    if (have != letter || itemsize() != sizeof(T))
      throw error(PYHOST_TYPE, "", std::string("pyh::view::as: the buffer's format is \"") +
                                       std::string(format()) + "\", not \"" + letter + "\"");
    if (!c_contiguous()) throw error(PYHOST_TYPE, "", "pyh::view::as: the buffer is not C-contiguous");
    if (!std::is_const<T>::value && readonly())
      throw error(PYHOST_TYPE, "", "pyh::view::as: the buffer is read-only (ask for const items)");
    return span<T>(static_cast<T *>(v_->data), bytes() / sizeof(T));
  }
  // Releases the view now (the exporter may resize or free again); a borrowed one is
  // only let go (pyhost releases it when the callback returns).
  void release() noexcept {
    if (own_) pyhost_view_release(h_, own_.get());
    own_.reset();
    v_ = nullptr;
  }

 private:
  static bool little_endian() noexcept {
    const uint16_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
  }
  pyhost *h_ = nullptr;
  std::unique_ptr<pyhost_view> own_;  // a view of the host's own, else none
  const pyhost_view *v_ = nullptr;    // own_'s, or a borrowed one
};

// A Python list of ints or floats from a C++ array, with no value per item
// (pyhost_value_from_int64s / _from_doubles).
inline value list_of(pyhost *h, const int64_t *a, size_t n) {
  pyhost_value *v = nullptr;
  detail::check(h, pyhost_value_from_int64s(h, a, n, &v));
  return value(v);
}
inline value list_of(pyhost *h, const double *a, size_t n) {
  pyhost_value *v = nullptr;
  detail::check(h, pyhost_value_from_doubles(h, a, n, &v));
  return value(v);
}
inline value list_of(pyhost *h, const std::vector<int64_t> &a) { return list_of(h, a.data(), a.size()); }
inline value list_of(pyhost *h, const std::vector<double> &a) { return list_of(h, a.data(), a.size()); }

namespace detail {
template <class T, int (*Read)(pyhost *, const pyhost_value *, T *, size_t, size_t *)>
std::vector<T> read_numbers(pyhost *h, const value &v) {
  std::vector<T> out;
  for (;;) {  // a list Python changes between the two reads is read again
    size_t n = 0;
    int rc = Read(h, v.get(), out.data(), out.size(), &n);
    if (rc == PYHOST_OK) {
      out.resize(n);
      return out;
    }
    if (rc != PYHOST_RANGE || n <= out.size()) throw_status(h, rc);
    out.resize(n);
  }
}
}  // namespace detail

// A list or tuple of ints (floats) as a vector: v a list value or an object value
// (pyh::call's result kept as an object).  PYHOST_TYPE names the first item of another
// type; PYHOST_RANGE an int beyond 64 bits.
inline std::vector<int64_t> int64s_of(pyhost *h, const value &v) {
  return detail::read_numbers<int64_t, &pyhost_value_to_int64s>(h, v);
}
inline std::vector<double> doubles_of(pyhost *h, const value &v) {
  return detail::read_numbers<double, &pyhost_value_to_doubles>(h, v);
}

}  // namespace pyh

#undef PYH_NOINLINE

#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif

#endif
