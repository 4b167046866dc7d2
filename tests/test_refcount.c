/* test_refcount.c: no public entry leaks references.  Arguments: CASE LIB VERSION.
 *
 * A debug build of CPython (sys.abiflags "d") counts every reference it hands out:
 * sys.gettotalrefcount().  Each case runs one public entry ROUNDS times after a warm-up
 * (caches, interned strings and lazily made types settle there) and wants the total
 * back within SLACK: a leak of one reference per call would show as ROUNDS.  Registered
 * for the debug entries of the matrix only; a release build (no counter) skips when run
 * by hand, a debug build without the counter fails.  docs/versions-and-abi.md. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#ifndef ROUNDS
#define ROUNDS 1000
#endif
#define WARMUP 1000
#define SLACK 64 /* far below ROUNDS */

typedef void (*op_fn)(pyhost *h, void *ctx);

/* Runs a call whose result is not wanted (result must not be NULL). */
#define DISCARD(call_with_r, want)  \
  do {                              \
    pyhost_value *r = NULL;         \
    CHECK_RC(call_with_r, want);    \
    pyhost_value_free(r);           \
  } while (0)

static int64_t total_refs(pyhost *h) {
  pyhost_value *v = NULL;
  int64_t n = -1;
  /* A collection first: cycles (tracebacks hold frames) are garbage, not leaks.  Then
   * the type attribute cache goes: its slots hold references to attribute names and
   * fill at random as type versions come and go, which on 3.14 added up to ~90 per
   * run, more on a loaded box; emptied on both sides, the count is exact. */
  int rc = pyhost_exec(h, "__import__('gc').collect()\n"
                          "getattr(__import__('sys'), '_clear_internal_caches',\n"
                          "        __import__('sys')._clear_type_cache)()\n",
                       "<refcount>"); /* binds no name in __main__ */
  if (rc != PYHOST_OK ||
      pyhost_call_namev(h, "sys.gettotalrefcount", NULL, 0, NULL, &v) != PYHOST_OK ||
      pyhost_value_to_int(h, v, &n) != PYHOST_OK) {
    fprintf(stderr, "sys.gettotalrefcount(): %s\n", pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
  return n;
}

/* Starts Python; skips on a release build, fails on a debug build without the counter. */
static pyhost *start(void) {
  pyhost *h = check_start(NULL);
  pyhost_value *v = NULL;
  const char *flags = "";
  CHECK_RC(pyhost_eval(h, "getattr(__import__('sys'), 'abiflags', '')", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, v, &flags, NULL), PYHOST_OK);
  int debug = strchr(flags, 'd') != NULL;
  pyhost_value_free(v);
  v = NULL;
  CHECK_RC(pyhost_eval(h, "hasattr(__import__('sys'), 'gettotalrefcount')", &v), PYHOST_OK);
  int counted = 0;
  CHECK_RC(pyhost_value_to_bool(h, v, &counted), PYHOST_OK);
  pyhost_value_free(v);
  if (debug && !counted) {
    fprintf(stderr, "a debug build (abiflags %s) without sys.gettotalrefcount\n", flags);
    exit(1);
  }
  if (!counted) {
    pyhost_free(h);
    SKIP("Python %s is a release build: no sys.gettotalrefcount", check_version);
  }
  return h;
}

/* Growth of the total over ROUNDS calls of op, measured up to three times: a real leak
 * grows it by about ROUNDS every time.  With the caches emptied (total_refs) every case
 * reads exactly 0 on 3.14 and 3.15, under load too; SLACK and the repeats are for what
 * a runtime not yet seen may add on its own, a small constant that need not repeat, as
 * CPython's own refleak runs (regrtest -R) judge it. */
static void measure(pyhost *h, const char *what, op_fn op, void *ctx) {
  for (int i = 0; i < WARMUP; i++) op(h, ctx);
  int64_t growth = 0;
  for (int rep = 0; rep < 3; rep++) {
    int64_t before = total_refs(h);
    int failures = check_failures;
    for (int i = 0; i < ROUNDS && check_failures == failures; i++) op(h, ctx);
    growth = total_refs(h) - before;
    fprintf(stderr, "%s: %lld references after %d rounds\n", what, (long long)growth, ROUNDS);
    if (growth <= SLACK) return;
  }
  fprintf(stderr, "%s: the total reference count grew by more than %d in each of 3 runs of %d rounds\n",
          what, SLACK, ROUNDS);
  check_failures++;
}

static pyhost_value *object(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, expr, &v), PYHOST_OK);
  return v;
}

/* ---- eval, exec, call ---- */

static void op_eval(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "[n * 2 for n in range(3)]", &v), PYHOST_OK);
  pyhost_value_free(v);
}

static void op_exec(pyhost *h, void *ctx) {
  (void)ctx;
  CHECK_RC(pyhost_exec(h, "rc_x = {'a': [1, 2.5, 'three']}\ndel rc_x\n", "<refcount>"), PYHOST_OK);
}

TEST_CASE(eval_and_exec) {
  pyhost *h = start();
  measure(h, "pyhost_eval", op_eval, NULL);
  measure(h, "pyhost_exec", op_exec, NULL);
  pyhost_free(h);
}

static void op_call(pyhost *h, void *ctx) {
  const pyhost_value *f = ctx;
  pyhost_value *args = pyhost_value_tuple(), *kw = pyhost_value_dict(), *r = NULL;
  pyhost_value_append(args, pyhost_value_int(40));
  pyhost_value_set(kw, pyhost_value_str("b", 1), pyhost_value_int(2));
  CHECK_RC(pyhost_call(h, f, args, kw, &r), PYHOST_OK);
  pyhost_value_free(r);
  r = NULL;
  const pyhost_value *argv[] = {args};
  CHECK_RC(pyhost_callv(h, f, argv, 1, NULL, &r), PYHOST_OK);
  pyhost_value_free(r);
  r = NULL;
  CHECK_RC(pyhost_call_namev(h, "len", argv, 1, NULL, &r), PYHOST_OK);
  pyhost_value_free(r);
  pyhost_value_free(args);
  pyhost_value_free(kw);
}

/* A host thread that attaches, makes calls and detaches: its thread state comes and
 * goes with everything Python hung on it. */
static void *attached_thread(void *arg) {
  pyhost *h = arg;
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "L.x = [1, 2, 3]", NULL), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "len(L.x)", &r), PYHOST_OK);
  pyhost_value_free(r);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_OK);
  return NULL;
}
static void op_attached_thread(pyhost *h, void *ctx) {
  (void)ctx;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, attached_thread, h) == 0);
  pthread_join(t, NULL);
}

TEST_CASE(attached_threads) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "import threading; L = threading.local()", NULL), PYHOST_OK);
  measure(h, "pyhost_thread_attach/detach on a new thread", op_attached_thread, NULL);
  pyhost_free(h);
}

TEST_CASE(call) {
  pyhost *h = start();
  pyhost_value *f = object(h, "lambda a, b=0: (a, b)");
  measure(h, "pyhost_call/callv/call_namev", op_call, f);
  pyhost_value_free(f);
  pyhost_free(h);
}

/* ---- every value kind, C -> Python and Python -> C ---- */

static pyhost_value *every_kind(pyhost *h, const pyhost_value *obj) {
  pyhost_value *l = pyhost_value_list(), *d = pyhost_value_dict(), *t = pyhost_value_tuple();
  pyhost_value_append(l, pyhost_value_none());
  pyhost_value_append(l, pyhost_value_bool(1));
  pyhost_value_append(l, pyhost_value_int(-7));
  pyhost_value_append(l, pyhost_value_float(2.5));
  pyhost_value_append(l, pyhost_value_str("caf\xc3\xa9", 5));
  pyhost_value_append(l, pyhost_value_bytes("\0\1", 2));
  pyhost_value_append(t, pyhost_value_int(1));
  pyhost_value_append(l, t);
  pyhost_value_set(d, pyhost_value_str("k", 1), pyhost_value_int(2));
  pyhost_value_append(l, d);
  pyhost_value_append(l, pyhost_value_copy(obj));
  (void)h;
  return l;
}

static void op_to_python(pyhost *h, void *ctx) {
  pyhost_value *v = every_kind(h, ctx);
  CHECK_RC(pyhost_set_global(h, "rc_value", v), PYHOST_OK);
  pyhost_value_free(v);
}

static void op_from_python(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_get_global(h, "rc_value", &v), PYHOST_OK);
  pyhost_value_free(v);
  v = NULL;
  /* what C has no own kind for: big ints, subclasses, objects */
  CHECK_RC(pyhost_get_global(h, "rc_odd", &v), PYHOST_OK);
  pyhost_value_free(v);
}

TEST_CASE(values_both_ways) {
  pyhost *h = start();
  pyhost_value *obj = object(h, "object()");
  CHECK_RC(pyhost_exec(h, "class S(str): pass\nrc_odd = [2**80, -2**70, S('x'), True, {1: (None,)}, object()]\n",
                       "<refcount>"), PYHOST_OK);
  measure(h, "values to Python", op_to_python, obj);
  measure(h, "values from Python", op_from_python, NULL);
  pyhost_value_free(obj);
  pyhost_free(h);
}

/* ---- host functions, host types, errors with tracebacks ---- */

static int add(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
               const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  (void)kwargs;
  int64_t a = 0, b = 0;
  if (nargs != 2 || pyhost_value_to_int(h, args[0], &a) || pyhost_value_to_int(h, args[1], &b))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "add(a, b) wants two ints");
  *result = pyhost_value_list();
  pyhost_value_append(*result, pyhost_value_int(a + b));
  pyhost_value_append(*result, pyhost_value_str("sum", 3));
  return PYHOST_OK;
}

/* calls back into Python; a failure there travels out with its traceback */
static int relay(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                 const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  (void)kwargs;
  if (nargs != 1) return pyhost_raise_named(h, "ValueError", "relay(f) wants one callable");
  return pyhost_callv(h, args[0], NULL, 0, NULL, result);
}

static pyhost_module *host_module(pyhost *h) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "rcmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "add", add, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "relay", relay, NULL, NULL), PYHOST_OK);
  return m;
}

static void op_hostfn(pyhost *h, void *ctx) {
  const pyhost_value *f = ctx;
  pyhost_value *a = pyhost_value_int(40), *b = pyhost_value_int(2), *r = NULL;
  const pyhost_value *argv[] = {a, b};
  CHECK_RC(pyhost_callv(h, f, argv, 2, NULL, &r), PYHOST_OK);
  pyhost_value_free(r);
  r = NULL;
  /* keyword arguments, and a failure raised by the function */
  pyhost_value *kw = pyhost_value_dict();
  pyhost_value_set(kw, pyhost_value_str("z", 1), pyhost_value_none());
  CHECK_RC(pyhost_callv(h, f, argv, 1, kw, &r), PYHOST_PYEXC);
  pyhost_value_free(r);
  pyhost_value_free(kw);
  pyhost_value_free(a);
  pyhost_value_free(b);
}

static void op_hostfn_from_python(pyhost *h, void *ctx) {
  (void)ctx;
  CHECK_RC(pyhost_exec(h, "import rcmod\nrcmod.add(1, 2)\n"
                          "try:\n    rcmod.add(1)\nexcept TypeError:\n    pass\n", "<refcount>"),
           PYHOST_OK);
}

TEST_CASE(host_functions) {
  pyhost *h = start();
  pyhost_module *m = host_module(h);
  pyhost_value *f = object(h, "__import__('rcmod').add");
  measure(h, "host function from C", op_hostfn, f);
  measure(h, "host function from Python", op_hostfn_from_python, NULL);
  pyhost_value_free(f);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- the fast forms: prepared calls and host functions with borrowed arguments ---- */

/* rcfast.mix(a, b, *, tag=None): a + b as an int, or "tag:a+b" as a str */
static int mix(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t a = 0, b = 0;
  int rc;
  if (pyhost_args_count(args) != 2) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "mix(a, b)");
  if ((rc = pyhost_args_int(h, args, 0, &a)) || (rc = pyhost_args_int(h, args, 1, &b))) return rc;
  if (pyhost_args_kwcount(args) == 1) {
    const char *tag;
    size_t len;
    if ((rc = pyhost_args_str(h, args, 2, &tag, &len))) return rc;
    char text[64];
    int n = snprintf(text, sizeof text, "%.*s:%lld", (int)len, tag, (long long)(a + b));
    return pyhost_ret_str(h, ret, text, (size_t)n);
  }
  return pyhost_ret_int(h, ret, a + b);
}

struct fast_ctx {
  pyhost_callable *py_fn, *host_fn;
  pyhost_value *obj;
};

static void op_prepared(pyhost *h, void *ctx) {
  struct fast_ctx *c = ctx;
  pyhost_arg argv[] = {pyhost_arg_int(40), pyhost_arg_str("two", 3), pyhost_arg_float(0.5),
                       pyhost_arg_bytes("b", 1), pyhost_arg_value(c->obj), pyhost_arg_none(),
                       pyhost_arg_bool(1)};
  CHECK_RC(pyhost_prepared_call(h, c->py_fn, argv, 7), PYHOST_OK);
  int64_t n = 0;
  CHECK_RC(pyhost_prepared_call_int(h, c->py_fn, argv, 1, &n), PYHOST_OK);
  CHECK(n == 40);
  CHECK_RC(pyhost_prepared_call_int(h, c->host_fn, (pyhost_arg[]){pyhost_arg_int(40), pyhost_arg_int(2)}, 2, &n),
           PYHOST_OK);
  CHECK(n == 42);
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_prepared_call_value(h, c->py_fn, argv, 3, &r), PYHOST_OK);
  pyhost_value_free(r);
  /* the error paths: a Python exception with its traceback, a result of the wrong type */
  CHECK_RC(pyhost_prepared_call(h, c->host_fn, argv, 2), PYHOST_PYEXC);
  double d = 0;
  CHECK_RC(pyhost_prepared_call_float(h, c->py_fn, argv, 3, &d), PYHOST_TYPE);
}

static void op_fast_from_python(pyhost *h, void *ctx) {
  (void)ctx;
  CHECK_RC(pyhost_exec(h, "import rcfast\nrcfast.mix(1, 2)\nrcfast.mix(1, 2, tag='t')\n"
                          "try:\n    rcfast.mix(1, 'x')\nexcept TypeError:\n    pass\n", "<refcount>"),
           PYHOST_OK);
}

/* The typed form: every error of the binding, keywords, defaults, registration and
 * removal (the interned parameter names). */
static int tmix(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return argv[1].kind == PYHOST_ARG_STR ? pyhost_ret_str(h, ret, argv[1].u.s, argv[1].len)
                                        : pyhost_ret_int(h, ret, argv[0].u.i);
}
static void op_typed(pyhost *h, void *ctx) {
  pyhost_module *m = ctx;
  CHECK_RC(pyhost_module_add_typed_function(h, m, "tmix2(a: int, b: str = None, *, t: bytes = None)",
                                            tmix, NULL, "doc"),
           PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import rcfast, inspect\nf = rcfast.tmix2\nf(1)\nf(1, 's')\nf(1, b='x', t=b'y')\n"
                          "str(inspect.signature(f))\n"
                          "for bad in [(), ('x',), (1, 2), (1, 's', 3), (2**70,)]:\n"
                          "    try:\n        f(*bad)\n    except (TypeError, OverflowError):\n        pass\n"
                          "for kw in [{'z': 1}, {'a': 1}, {'t': 's'}, {str('b') + '': 'k'}]:\n"
                          "    try:\n        f(1, **kw)\n    except TypeError:\n        pass\n",
                       "<refcount>"),
           PYHOST_OK);
  CHECK_RC(pyhost_module_remove(h, m, "tmix2"), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "try:\n    f(1)\nexcept RuntimeError:\n    pass\ndel f\n", "<refcount>"),
           PYHOST_OK);
}

/* The typed form of a host type (made once, in fast_forms): the constructor and the
 * methods with every error of the binding, keywords, defaults, inspect. */
static int rc_tinit(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  *(int64_t *)*payload = argv[0].u.i;
  return PYHOST_OK;
}
static int rc_tget(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return argv[0].kind == PYHOST_ARG_STR ? pyhost_ret_str(h, ret, argv[0].u.s, argv[0].len)
                                        : pyhost_ret_int(h, ret, *(int64_t *)payload);
}
/* Every argument of its exact type: bound before the frame, the result kept as a C
 * value until the method returned (hosttype.c run_typed_method); raises for n < 0. */
static int rc_tadd(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  if (argv[0].u.i < 0) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "n < 0");
  return pyhost_ret_int(h, ret, *(int64_t *)payload + argv[0].u.i);
}
static void op_typed_type(pyhost *h, void *ctx) {
  (void)ctx;
  CHECK_RC(pyhost_exec(h, "import rcfast, inspect\nT = rcfast.TT\nT(1).get()\nT(2).get('s')\n"
                          "T(x=3).get(s=None)\no = T(4)\nm = o.get\nm()\nT.get(o)\n"
                          "str(inspect.signature(m)), str(inspect.signature(T.get))\n"
                          "for bad in [(), ('x',), (1, 2), (2**70,)]:\n"
                          "    try:\n        T(*bad)\n    except (TypeError, OverflowError):\n        pass\n"
                          "for bad in [(1,), ('a', 2)]:\n"
                          "    try:\n        o.get(*bad)\n    except TypeError:\n        pass\n"
                          "for kw in [{'z': 1}, {'s': 1}]:\n"
                          "    try:\n        o.get(**kw)\n    except TypeError:\n        pass\n"
                          "try:\n    T.get(1)\nexcept TypeError:\n    pass\n"
                          "assert T(5).add(1) + o.add(2) + T.add(o, 3) == 19\n"
                          "try:\n    o.add(-1)\nexcept ValueError:\n    pass\n"
                          "del T, o, m\n",
                       "<refcount>"),
           PYHOST_OK);
}

/* Calls in one line: keywords (the kept names replaced), results of every type,
 * Python errors and refused results. */
static void op_callf(pyhost *h, void *ctx) {
  pyhost_callable *c = ctx;
  int64_t l = 0;
  double d = 0;
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_prepared_callf(h, c, "L,b=L>L", (int64_t)1, (int64_t)2, &l), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, c, "d,t=s>O", 0.5, "x", &v), PYHOST_OK);
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepared_callf(h, c, "d,t=y>d", 0.5, "x", (size_t)1, &d), PYHOST_TYPE); /* a list */
  CHECK_RC(pyhost_prepared_callf(h, c, "s,b=s>L", "a", "b", &l), PYHOST_TYPE);
  CHECK_RC(pyhost_prepared_callf(h, c, "n,b=i"), PYHOST_PYEXC);
  CHECK_RC(pyhost_call_namef(h, "rcf", "L,b=L>L", (int64_t)1, (int64_t)2, &l), PYHOST_OK);
  pyhost_callable *e = NULL;
  CHECK_RC(pyhost_prepare_expression(h, "x, s", "[x * 2 + 1, s]", &e), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, e, "L,s=s>O", (int64_t)20, "t", &v), PYHOST_OK);
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepared_callf(h, e, "L>L", (int64_t)20, &l), PYHOST_PYEXC);
  pyhost_callable_free(e);
  CHECK_RC(pyhost_prepare_expression(h, "x", "x +", &e), PYHOST_PYEXC);
  const char *s = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_prepare_expression(h, "t", "t * 2", &e), PYHOST_OK);
  for (int k = 0; k < 3; k++) CHECK_RC(pyhost_prepared_callf(h, e, "z>s", "ab", (size_t)2, &s, &n), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, e, "y>y", "ab", (size_t)2, &s, &n), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, e, "i>s", 1, &s, &n), PYHOST_TYPE);
  pyhost_callable_free(e);
}

TEST_CASE(fast_forms) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "rcfast", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "mix", mix, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "def rcfast_py(*a):\n    return a[:2] if len(a) > 2 else a[0]\n", "<refcount>"),
           PYHOST_OK);
  struct fast_ctx c = {NULL, NULL, object(h, "object()")};
  CHECK_RC(pyhost_prepare_name(h, "rcfast_py", &c.py_fn), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "rcfast.mix", &c.host_fn), PYHOST_OK);
  measure(h, "prepared calls", op_prepared, &c);
  measure(h, "fast host function from Python", op_fast_from_python, NULL);
  measure(h, "typed host function", op_typed, m);
  static const pyhost_typed_method_def tt_methods[] = {{"get(s: str = None)", rc_tget, NULL},
                                                       {"add(n: int)", rc_tadd, NULL}};
  pyhost_type_spec tt_spec = {PYHOST_TYPE_SPEC_INIT, .name = "TT", .typed_methods = tt_methods,
                              .n_typed_methods = 2, .typed_constructor = rc_tinit,
                              .constructor_signature = "TT(x: int)",
                              .payload_size = sizeof(int64_t)};
  pyhost_type *tt = NULL;
  CHECK_RC(pyhost_type_new(h, m, &tt_spec, &tt), PYHOST_OK);
  measure(h, "typed host type", op_typed_type, NULL);
  pyhost_type_free(h, tt);
  CHECK_RC(pyhost_exec(h, "def rcf(a, b=0, t=None):\n    return a + b if t is None else [a, t]\n",
                       "<refcount>"),
           PYHOST_OK);
  pyhost_callable *rcf = NULL;
  CHECK_RC(pyhost_prepare_name(h, "rcf", &rcf), PYHOST_OK);
  measure(h, "calls in one line", op_callf, rcf);
  pyhost_callable_free(rcf);
  pyhost_callable_free(c.py_fn);
  pyhost_callable_free(c.host_fn);
  pyhost_value_free(c.obj);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Keyword plans (issue 36, b3): made and freed each round (the interned names), called
 * through each typed form, a borrowed str result replaced and released, and each way
 * to fail: a wrong count, an exception, a result of the wrong type. */
static void op_keyword_plan(pyhost *h, void *ctx) {
  pyhost_callable *f = ctx, *k = NULL;
  static const char *const names[] = {"y", "t"};
  CHECK_RC(pyhost_prepare_keywords(h, f, 1, names, 2, &k), PYHOST_OK);
  pyhost_arg a[3] = {pyhost_arg_int(2), pyhost_arg_float(2.5), pyhost_arg_none()};
  double d = 0;
  CHECK_RC(pyhost_prepared_call_float(h, k, a, 3, &d), PYHOST_OK);
  CHECK(d == 5.0);
  CHECK_RC(pyhost_prepared_call_float(h, k, a, 2, &d), PYHOST_MISUSE);
  a[2] = pyhost_arg_str("text", 4);
  const char *s = NULL;
  size_t n = 0;
  for (int i = 0; i < 2; i++) CHECK_RC(pyhost_prepared_call_str(h, k, a, 3, &s, &n), PYHOST_OK);
  CHECK(n == 4);
  CHECK_RC(pyhost_prepared_call_float(h, k, a, 3, &d), PYHOST_TYPE);
  pyhost_prepared_release_result(k);
  CHECK_RC(pyhost_prepared_call_str(h, k, a, 3, &s, &n), PYHOST_OK); /* held by the free */
  a[0] = pyhost_arg_str("x", 1);
  a[2] = pyhost_arg_none();
  CHECK_RC(pyhost_prepared_call_str(h, k, a, 3, &s, &n), PYHOST_PYEXC); /* 'x' * 2.5 */
  pyhost_callable_free(k);
}

TEST_CASE(keyword_plans) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def rckw(i, *, y, t=None):\n    return i * y if t is None else t\n",
                       "<refcount>"),
           PYHOST_OK);
  pyhost_callable *f = NULL;
  CHECK_RC(pyhost_prepare_name(h, "rckw", &f), PYHOST_OK);
  measure(h, "keyword plans", op_keyword_plan, f);
  pyhost_callable_free(f);
  pyhost_free(h);
}

static int counter_ctor(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, void **payload) {
  (void)ud;
  (void)kwargs;
  int64_t start = 0;
  if (nargs > 0 && pyhost_value_to_int(h, args[0], &start) != PYHOST_OK) return PYHOST_PYEXC;
  int64_t *p = malloc(sizeof *p);
  if (!p) return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "no memory");
  *p = start;
  *payload = p;
  return PYHOST_OK;
}

static void counter_dtor(void *payload, void *ud) {
  (void)ud;
  free(payload);
}

static int counter_incr(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                        size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h;
  (void)ud;
  (void)args;
  (void)nargs;
  (void)kwargs;
  *result = pyhost_value_int(++*(int64_t *)payload);
  return PYHOST_OK;
}

static int counter_get(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h;
  (void)ud;
  *result = pyhost_value_int(*(int64_t *)payload);
  return PYHOST_OK;
}

static int counter_set(pyhost *h, void *payload, void *ud, const pyhost_value *value) {
  (void)ud;
  return pyhost_value_to_int(h, value, payload);
}

static const pyhost_method_def counter_methods[] = {{"incr", counter_incr, NULL}};
static const pyhost_property_def counter_props[] = {{"value", counter_get, counter_set, NULL}};

struct types {
  pyhost_type *t;
  pyhost_value *cls;
};

static void op_instances(pyhost *h, void *ctx) {
  struct types *ts = ctx;
  pyhost_value *start = pyhost_value_int(5), *obj = NULL, *r = NULL;
  const pyhost_value *argv[] = {start};
  CHECK_RC(pyhost_callv(h, ts->cls, argv, 1, NULL, &obj), PYHOST_OK);
  CHECK_RC(pyhost_getattr(h, obj, "incr", &r), PYHOST_OK);
  pyhost_value *r2 = NULL;
  CHECK_RC(pyhost_callv(h, r, NULL, 0, NULL, &r2), PYHOST_OK);
  pyhost_value_free(r2);
  pyhost_value_free(r);
  r = NULL;
  CHECK_RC(pyhost_setattr(h, obj, "value", start), PYHOST_OK);
  CHECK_RC(pyhost_getattr(h, obj, "value", &r), PYHOST_OK);
  pyhost_value_free(r);
  pyhost_value_free(obj);
  obj = NULL;
  /* made by the host, invalidated by the host */
  int64_t *p = malloc(sizeof *p);
  *p = 1;
  CHECK_RC(pyhost_object_new(h, ts->t, p, &obj), PYHOST_OK);
  CHECK_RC(pyhost_object_invalidate(h, obj, ts->t), PYHOST_OK);
  free(p);
  pyhost_value_free(obj);
  pyhost_value_free(start);
}

TEST_CASE(host_type_instances) {
  pyhost *h = start();
  pyhost_module *m = host_module(h);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Counter", .methods = counter_methods,
                           .n_methods = 1, .properties = counter_props, .n_properties = 1,
                           .constructor = counter_ctor, .destructor = counter_dtor};
  struct types ts = {NULL, NULL};
  CHECK_RC(pyhost_type_new(h, m, &spec, &ts.t), PYHOST_OK);
  CHECK_RC(pyhost_type_value(h, ts.t, &ts.cls), PYHOST_OK);
  measure(h, "host type instances", op_instances, &ts);
  pyhost_value_free(ts.cls);
  pyhost_type_free(h, ts.t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- host types in the fast form, with an inline payload ---- */

struct pt {
  int64_t x;
  pyhost_value *tag; /* an object value the payload holds (traversed) */
};

/* Pt(x=0, *, tag=None) */
static int pt_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  struct pt *p = *payload;
  int rc;
  if (pyhost_args_count(args) > 0 && (rc = pyhost_args_int(h, args, 0, &p->x))) return rc;
  if (pyhost_args_kwcount(args) == 1 &&
      (rc = pyhost_args_value(h, args, pyhost_args_count(args), &p->tag)))
    return rc;
  return PYHOST_OK;
}

static void pt_free(void *payload, void *ud) {
  (void)ud;
  pyhost_value_free(((struct pt *)payload)->tag);
}

static void pt_traverse(void *payload, void *ud, pyhost_visit visit, void *arg) {
  (void)ud;
  visit(((struct pt *)payload)->tag, arg);
}

/* moved(dx, dy=0, *, label=None) -> x + dx + dy, or "label:x" */
static int pt_moved(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t dx = 0, dy = 0;
  int rc;
  if ((rc = pyhost_args_int(h, args, 0, &dx))) return rc;
  if (pyhost_args_count(args) > 1 && (rc = pyhost_args_int(h, args, 1, &dy))) return rc;
  if (pyhost_args_kwcount(args) == 1) {
    const char *s;
    size_t len;
    if ((rc = pyhost_args_str(h, args, pyhost_args_count(args), &s, &len))) return rc;
    char text[64];
    int n = snprintf(text, sizeof text, "%.*s:%lld", (int)len, s, (long long)((struct pt *)payload)->x);
    return pyhost_ret_str(h, ret, text, (size_t)n);
  }
  return pyhost_ret_int(h, ret, ((struct pt *)payload)->x + dx + dy);
}

static int pt_get_x(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, ((struct pt *)payload)->x);
}
static int pt_set_x(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  return pyhost_args_int(h, value, 0, &((struct pt *)payload)->x);
}
static int pt_get_tag(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_value(h, ret, ((struct pt *)payload)->tag);
}

static const pyhost_fast_method_def pt_methods[] = {{"moved", pt_moved, NULL}};
static const pyhost_fast_property_def pt_props[] = {{"x", pt_get_x, pt_set_x, NULL},
                                                    {"tag", pt_get_tag, NULL, NULL}};

static void op_fast_type(pyhost *h, void *ctx) {
  pyhost_type *t = ctx;
  /* the last line raises AttributeError (no __dict__): a traceback too */
  CHECK_RC(pyhost_exec(h, "import rcmod\n"
                          "p = rcmod.Pt(3, tag=[1, 'two'])\n"
                          "p.moved(1), p.moved(1, 2), p.moved(0, label='l'), rcmod.Pt.moved(p, 1)\n"
                          "m = p.moved\nm(2)\n"
                          "p.x = 7\np.x, p.tag\n"
                          "p.other = 0\n",
                          "<refcount>"),
           PYHOST_PYEXC);
  CHECK_RC(pyhost_exec(h, "for bad in (lambda: p.moved('x'), lambda: rcmod.Pt('x'),\n"
                          "            lambda: setattr(p, 'x', 'y'), lambda: rcmod.Pt.moved(1)):\n"
                          "    try:\n        bad()\n    except TypeError:\n        pass\n"
                          "try:\n    del p.x\nexcept AttributeError:\n    pass\n"
                          "q = rcmod.Pt(tag=[])\nq.tag.append(q)\n" /* a cycle through the payload */
                          "q2 = rcmod.Pt(tag=q)\n"
                          "del p, m, q, q2\n",
                          "<refcount>"),
           PYHOST_OK);
  /* made by the host (the payload copied in), invalidated by the host */
  struct pt init = {5, NULL};
  pyhost_value *obj = NULL, *r = NULL;
  CHECK_RC(pyhost_object_new(h, t, &init, &obj), PYHOST_OK);
  CHECK_RC(pyhost_getattr(h, obj, "x", &r), PYHOST_OK);
  pyhost_value_free(r);
  CHECK_RC(pyhost_object_invalidate(h, obj, t), PYHOST_OK);
  pyhost_value_free(obj);
}

TEST_CASE(fast_host_type_instances) {
  pyhost *h = start();
  pyhost_module *m = host_module(h);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Pt", .fast_methods = pt_methods,
                           .n_fast_methods = 1, .fast_properties = pt_props,
                           .n_fast_properties = 2, .fast_constructor = pt_new,
                           .destructor = pt_free, .traverse = pt_traverse,
                           .payload_size = sizeof(struct pt)};
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec, &t), PYHOST_OK);
  measure(h, "fast host type instances", op_fast_type, t);
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

static void op_errors(pyhost *h, void *ctx) {
  const pyhost_value *relay_fn = ctx;
  /* Python -> C: a traceback three frames deep */
  DISCARD(pyhost_call_namev(h, "rc_fail", NULL, 0, NULL, &r), PYHOST_PYEXC);
  CHECK_RC(pyhost_exec(h, "rc_fail()\n", "<refcount>"), PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 3); /* the exception read as data, frames and all */
  DISCARD(pyhost_eval(h, "1 +", &r), PYHOST_PYEXC); /* SyntaxError: its place read too */
  CHECK(pyhost_errframe_count(h) == 1);
  CHECK_RC(pyhost_exec(h, "raise SystemExit('rc')", "<refcount>"), PYHOST_EXIT);
  CHECK_STREQ(pyhost_errtext(h), "rc");
  /* C -> Python -> C -> Python: the traceback travels back out through the host function */
  pyhost_value *f = NULL;
  CHECK_RC(pyhost_get_global(h, "rc_fail", &f), PYHOST_OK);
  const pyhost_value *argv[] = {f};
  DISCARD(pyhost_callv(h, relay_fn, argv, 1, NULL, &r), PYHOST_PYEXC);
  pyhost_value_free(f);
}

TEST_CASE(errors_with_tracebacks) {
  pyhost *h = start();
  pyhost_module *m = host_module(h);
  CHECK_RC(pyhost_exec(h, "def rc_fail():\n    def inner():\n        raise ValueError('deep')\n"
                          "    inner()\n", "<refcount>"), PYHOST_OK);
  pyhost_value *relay_fn = object(h, "__import__('rcmod').relay");
  /* the message carries the traceback: what is measured is the real error path */
  DISCARD(pyhost_callv(h, relay_fn, NULL, 0, NULL, &r), PYHOST_PYEXC); /* wrong arity */
  CHECK_CONTAINS(pyhost_errmsg(h), "relay(f) wants one callable");
  DISCARD(pyhost_call_namev(h, "rc_fail", NULL, 0, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "in inner");
  measure(h, "errors with tracebacks", op_errors, relay_fn);
  pyhost_value_free(relay_fn);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- plugin hooks ---- */

static void op_plugin(pyhost *h, void *ctx) {
  pyhost_plugin *p = ctx;
  pyhost_value *args = pyhost_value_list(), *kw = pyhost_value_dict(), *r = NULL;
  pyhost_value_append(args, pyhost_value_str("ab", 2));
  pyhost_value_set(kw, pyhost_value_str("times", 5), pyhost_value_int(3));
  CHECK_RC(pyhost_plugin_call(h, p, "on_item", args, kw, &r), PYHOST_OK);
  pyhost_value_free(r);
  CHECK_RC(pyhost_plugin_call(h, p, "boom", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_RC(pyhost_plugin_call(h, p, "missing", NULL, NULL, NULL), PYHOST_NOHOOK);
  CHECK_RC(pyhost_plugin_has_hook(h, p, "on_item"), PYHOST_OK);
  pyhost_value_free(args);
  pyhost_value_free(kw);
}

TEST_CASE(plugin_hooks) {
  pyhost *h = start();
  char dir[] = "/tmp/pyhost-refcount-XXXXXX", path[256];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/rcplug.py", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("def on_item(s, times=1):\n    return {'item': s * times, 'n': times}\n"
          "def boom():\n    raise KeyError('k')\n", f);
    fclose(f);
  }
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_load(h, path, &p), PYHOST_OK);
  if (p) measure(h, "plugin hook calls", op_plugin, p);
  pyhost_plugin_unload(p);
  unlink(path);
  rmdir(dir);
  pyhost_free(h);
}

/* A reload gives back the module it replaces (the plugin keeps one reference, to the
 * new module). */
static void op_reload(pyhost *h, void *ctx) { CHECK_RC(pyhost_plugin_reload(h, ctx), PYHOST_OK); }

TEST_CASE(plugin_reloads) {
  pyhost *h = start();
  char dir[] = "/tmp/pyhost-refcount-XXXXXX", path[256];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/rcreload.py", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("def on_item(s):\n    return s\n", f);
    fclose(f);
  }
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_load(h, path, &p), PYHOST_OK);
  if (p) measure(h, "plugin reloads", op_reload, p);
  pyhost_plugin_unload(p);
  unlink(path);
  rmdir(dir);
  pyhost_free(h);
}

/* ---- hostile Python (issue 22): the references the fixes take are all given back ---- */

/* rchx.kw(code, **kw): runs code (which clears the caller's dict), then reads keyword 0
 * through the view, by name, bytes and value */
static int rchx_kw(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  const char *code, *name;
  const void *data;
  size_t n, len;
  pyhost_value *v = NULL;
  size_t at = pyhost_args_count(args);
  int rc;
  if ((rc = pyhost_args_str(h, args, 0, &code, NULL)) || (rc = pyhost_exec(h, code, "<rchx>")) ||
      (rc = pyhost_args_kwname(h, args, 0, &name, &n)) ||
      (rc = pyhost_args_bytes(h, args, at, &data, &len)) ||
      (rc = pyhost_args_value(h, args, at, &v)))
    return rc;
  rc = pyhost_ret_value(h, ret, v);
  pyhost_value_free(v);
  return rc;
}

/* rchx.raise_named(name) */
static int rchx_raise(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)ret;
  const char *name;
  int rc = pyhost_args_str(h, args, 0, &name, NULL);
  return rc ? rc : pyhost_raise_named(h, name, "from C");
}

static void op_hostile(pyhost *h, void *ctx) {
  (void)ctx;
  CHECK_RC(pyhost_exec(h, "rc_d = {'key': b'abc'}\n"
                          "assert rchx.kw('rc_d.clear()', **rc_d) == b'abc'\n"
                          "for rc_r in (42, None, object()):\n"
                          "    RcWeird.returns = rc_r\n"
                          "    try: rchx.raise_named('__main__.RcWeird')\n"
                          "    except TypeError: pass\n"
                          "del rc_d, rc_r\n",
                       "<refcount>"),
           PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "rc_fresh()", &v), PYHOST_OK);
  pyhost_value_free(v);
  v = NULL;
  CHECK_RC(pyhost_eval(h, "-(10**700)", &v), PYHOST_OK); /* beyond the limit set below */
  char digits[703];
  size_t len = 0;
  CHECK_RC(pyhost_value_to_int_text(h, v, digits, sizeof digits, &len), PYHOST_OK);
  CHECK(len == 702);
  CHECK_RC(pyhost_set_global(h, "rc_big", v), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "assert rc_big == -(10**700)\ndel rc_big\n", "<refcount>"), PYHOST_OK);
  pyhost_value_free(v);
}

TEST_CASE(hostile_conversions) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "rchx", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "kw", rchx_kw, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "raise_named", rchx_raise, NULL, NULL),
           PYHOST_OK);
  /* the smallest integer string limit there is (debug builds are 3.14+): the big int's
   * way through hexadecimal at a tenth of the cost of the default's */
  CHECK_RC(pyhost_exec(h, "import rchx, sys\n"
                          "sys.set_int_max_str_digits(640)\n"
                          "class RcWeird(Exception):\n"
                          "    returns = None\n"
                          "    def __new__(cls, *a): return cls.returns\n"
                          "class RcMeta(type):\n"
                          "    def __getattribute__(cls, name):\n"
                          "        if name == '__module__': rc_items[:] = [None] * len(rc_items)\n"
                          "        return type.__getattribute__(cls, name)\n"
                          "class RcItem(metaclass=RcMeta): pass\n"
                          "def rc_fresh():\n"
                          "    global rc_items\n"
                          "    rc_items = [RcItem(), {'k': RcItem()}]\n"
                          "    return rc_items\n",
                       "<refcount>"),
           PYHOST_OK);
  measure(h, "hostile conversions", op_hostile, NULL);
  pyhost_module_free(h, m);
  pyhost_free(h);
}
