/* test_fastpath.c: tier 2, the fast paths behind the benchmarks: host-held GIL scopes
 * (pyhost_gil_enter/leave) and pyhost_eval's compiled-expression cache.
 * Arguments: CASE LIB VERSION.  White-box: reads the cache's hit counters. */
#define _GNU_SOURCE
#include "internal.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static pyhost *start(void) { return check_start(NULL); }

static int64_t eval_int(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t i = -12345;
  int rc = pyhost_eval(h, expr, &v);
  if (rc != PYHOST_OK) fprintf(stderr, "eval(%s): %s\n", expr, pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_OK);
  pyhost_value_free(v);
  return i;
}

TEST_CASE(gil_scope_nests) {
  pyhost *h = start();
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42); /* still inside the outer scope */
  CHECK_RC(pyhost_exec(h, "import threading; x = threading.current_thread().name", NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42); /* outside: pyhost takes the GIL itself again */
  pyhost_free(h);
}

TEST_CASE(gil_scope_misuse) {
  CHECK_RC(pyhost_gil_enter(NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_gil_leave(NULL), PYHOST_MISUSE);
  pyhost *h = start();
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "without a matching pyhost_gil_enter");
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "leave it first");
  CHECK(eval_int(h, "1 + 1") == 2); /* the refused finalize left Python running */
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_free(h);
}

static atomic_int other_done;

static void *other_thread(void *arg) {
  pyhost *h = arg;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "2 + 3", &v);
  pyhost_value_free(v);
  atomic_store(&other_done, rc == PYHOST_OK ? 1 : -1);
  return NULL;
}

/* A scope really holds the GIL: another thread's call waits until it is left. */
TEST_CASE(gil_scope_holds_gil) {
  pyhost *h = start();
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_thread, h) == 0);
  usleep(200 * 1000);
  CHECK(atomic_load(&other_done) == 0);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  pthread_join(t, NULL);
  CHECK(atomic_load(&other_done) == 1);
  pyhost_free(h);
}

TEST_CASE(eval_cache_hits) {
  pyhost *h = start();
  unsigned long hits, misses;
  CHECK_RC(pyhost_exec(h, "x = 1", NULL), PYHOST_OK);
  CHECK(eval_int(h, "x * 2") == 2);
  CHECK_RC(pyhost_exec(h, "x = 5", NULL), PYHOST_OK);
  CHECK(eval_int(h, "x * 2") == 10); /* cached code, fresh namespace values */
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 1);
  /* a syntax error is never cached: it fails the same way every time */
  for (int i = 0; i < 2; i++) {
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_eval(h, "1 +", &v), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
    CHECK(v == NULL);
  }
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 3);
  pyhost_free(h);
}

TEST_CASE(eval_cache_evicts) {
  pyhost *h = start();
  unsigned long hits, misses, h0, m0;
  char expr[64];
  CHECK(eval_int(h, "1000") == 1000);
  /* 200 distinct expressions push "1000" out of the 64 slots */
  for (int i = 0; i < 200; i++) {
    snprintf(expr, sizeof expr, "%d + 1", i);
    CHECK(eval_int(h, expr) == i + 1);
  }
  pyhost__eval_cache_stats(&h0, &m0);
  CHECK(h0 == 0 && m0 == 201);
  CHECK(eval_int(h, "1000") == 1000);
  CHECK(eval_int(h, "199 + 1") == 200); /* the most recent ones stay */
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 202);
  /* a long source is evaluated right but not kept */
  size_t n = 10000;
  char *big = malloc(n + 1);
  memset(big, 'a', n);
  memcpy(big, "len('", 5);
  memcpy(big + n - 2, "')", 3);
  CHECK(eval_int(h, big) == (int64_t)(n - 7));
  CHECK(eval_int(h, big) == (int64_t)(n - 7));
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 204);
  free(big);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 0 && misses == 0); /* finalize dropped the code objects */
  pyhost_free(h);
}

/* Containers converted from Python keep their items in one slab: mixed items, big
 * ints, subclasses and nesting read back exactly, and freeing them is clean (memcheck). */
TEST_CASE(slab_conversion) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "class I(int): pass\n"
                          "v = [1, -1, 2**70, -2**70, 'a', b'b', [3, None, (4.5,)], "
                          "{'k': [1, 2], 7: {}}, True, I(3), 1.25, object]\n", NULL),
           PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "v", &v), PYHOST_OK);
  CHECK(pyhost_value_count(v) == 12);
  const char *r = pyhost_value_repr(h, v);
  pyhost_value *want = NULL;
  CHECK_RC(pyhost_eval(h, "repr(v)", &want), PYHOST_OK);
  const char *ws = NULL;
  size_t wn = 0;
  CHECK_RC(pyhost_value_to_str(h, want, &ws, &wn), PYHOST_OK);
  CHECK_STREQ(r, ws);
  CHECK_STREQ(pyhost_value_type_name(pyhost_value_item(v, 9)), "__main__.I");
  int64_t i = 0;
  CHECK_RC(pyhost_value_to_int(h, pyhost_value_item(v, 2), &i), PYHOST_RANGE);
  /* an item appended in C to a converted list lives outside the slab */
  CHECK_RC(pyhost_value_append(v, pyhost_value_str("c", 1)), PYHOST_OK);
  CHECK(pyhost_value_count(v) == 13);
  pyhost_value *copy = pyhost_value_copy(v);
  CHECK(copy && pyhost_value_count(copy) == 13);
  pyhost_value_free(copy);
  pyhost_value_free(want);
  pyhost_value_free(v);
  pyhost_free(h);
}

/* ---- prepared calls ---- */

/* repr of what a prepared call of echo(*args) returned. */
static void check_echo(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t n,
                       const char *want) {
  pyhost_value *r = NULL;
  int rc = pyhost_prepared_call_value(h, c, argv, n, &r);
  if (rc) fprintf(stderr, "echo: %s\n", pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), want);
  pyhost_value_free(r);
}

/* Every argument kind, on the stack (up to 8) and through a tuple (more). */
TEST_CASE(prepared_call_arguments) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def echo(*a):\n    return a\n", NULL), PYHOST_OK);
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_prepare_name(h, "echo", &c), PYHOST_OK);
  pyhost_value *obj = NULL, *lst = pyhost_value_list();
  CHECK_RC(pyhost_eval(h, "range(3)", &obj), PYHOST_OK);
  CHECK_RC(pyhost_value_append(lst, pyhost_value_int(7)), PYHOST_OK);
  pyhost_arg a[10] = {pyhost_arg_none(),         pyhost_arg_bool(5),
                      pyhost_arg_int(-INT64_MAX - 1), pyhost_arg_float(2.5),
                      pyhost_arg_str("h\xc3\xa9\0x", 5), pyhost_arg_bytes("\0\xff", 2),
                      pyhost_arg_value(obj),     pyhost_arg_value(lst),
                      pyhost_arg_value(NULL),    pyhost_arg_str("nul-terminated", PYHOST_STRLEN)};
  check_echo(h, c, NULL, 0, "()");
  check_echo(h, c, a, 8,
             "(None, True, -9223372036854775808, 2.5, 'h\xc3\xa9\\x00x', b'\\x00\\xff', range(0, 3), [7])");
  check_echo(h, c, a + 6, 4, "(range(0, 3), [7], None, 'nul-terminated')");
  check_echo(h, c, a, 10,
             "(None, True, -9223372036854775808, 2.5, 'h\xc3\xa9\\x00x', b'\\x00\\xff', range(0, 3), [7], "
             "None, 'nul-terminated')");
  check_echo(h, c, (pyhost_arg[]){pyhost_arg_str(NULL, 0), pyhost_arg_bytes(NULL, 0)}, 2,
             "('', b'')");
  /* a bound method gets its arguments without a copy on 3.12+ (argv[-1] is free) */
  pyhost_callable *m = NULL;
  CHECK_RC(pyhost_exec(h, "class K:\n    def m(self, x, y):\n        return (x, y)\nk = K()\n",
                       NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "k.m", &m), PYHOST_OK);
  check_echo(h, m, a + 2, 2, "(-9223372036854775808, 2.5)");
  pyhost_callable_free(m);
  /* every count, in order, around the stack's size (8: on the C stack on every runtime,
   * before 3.12 through PyObject_CallFunctionObjArgs; past it a tuple), typed and
   * as pyhost_prepared_callf */
  pyhost_callable *w = NULL;
  CHECK_RC(pyhost_exec(h, "def weigh(*a):\n    return sum((i + 1) * x for i, x in enumerate(a))\n",
                       NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "weigh", &w), PYHOST_OK);
  pyhost_arg ints[10];
  int64_t want = 0;
  for (int n = 0; n <= 10; n++) {
    int64_t got = -1;
    CHECK_RC(pyhost_prepared_call_int(h, w, ints, (size_t)n, &got), PYHOST_OK);
    CHECK(got == want);
    if (n < 10) {
      ints[n] = pyhost_arg_int(100 + n);
      want += (int64_t)(n + 1) * (100 + n);
    }
  }
  int r = -1;
  CHECK_RC(pyhost_prepared_callf(h, w, "iiiiiiii>i", 1, 2, 3, 4, 5, 6, 7, 8, &r), PYHOST_OK);
  CHECK(r == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64);
  CHECK_RC(pyhost_prepared_callf(h, w, "iiiiiiiii>i", 1, 2, 3, 4, 5, 6, 7, 8, 9, &r), PYHOST_OK);
  CHECK(r == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 64 + 81);
  double d = 0;
  CHECK_RC(pyhost_prepared_callf(h, w, "id>d", 1, 0.5, &d), PYHOST_OK);
  CHECK(d == 2.0);
  pyhost_callable_free(w);
  pyhost_value_free(obj);
  pyhost_value_free(lst);
  pyhost_callable_free(c);
  pyhost_free(h);
}

/* The typed reads, the same outside a scope and inside one (where the typed forms take
 * their quick entry): exact ints at both ends of 64 bits and -1 (the value that may
 * mean an error), bools and floats refused as ints, int subclasses read. */
static void check_results(pyhost *h, pyhost_callable *c, pyhost_callable *big,
                          pyhost_callable *sub) {
  int64_t i = 0;
  double d = 0;
  int b = -1;
  pyhost_arg x = pyhost_arg_int(41);
  CHECK_RC(pyhost_prepared_call_int(h, c, &x, 1, &i), PYHOST_OK);
  CHECK(i == 41);
  static const int64_t edges[] = {-1, INT64_MIN, INT64_MAX, 0};
  for (size_t k = 0; k < sizeof edges / sizeof *edges; k++) {
    x = pyhost_arg_int(edges[k]);
    i = 5;
    CHECK_RC(pyhost_prepared_call_int(h, c, &x, 1, &i), PYHOST_OK);
    CHECK(i == edges[k]);
  }
  x = pyhost_arg_int(41);
  CHECK_RC(pyhost_prepared_call_float(h, c, &x, 1, &d), PYHOST_OK); /* an int is a float */
  CHECK(d == 41.0);
  x = pyhost_arg_float(0.5);
  CHECK_RC(pyhost_prepared_call_float(h, c, &x, 1, &d), PYHOST_OK);
  CHECK(d == 0.5);
  i = 5;
  CHECK_RC(pyhost_prepared_call_int(h, c, &x, 1, &i), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_prepared_call_int: the result: expected int, got float");
  CHECK(i == 5);
  x = pyhost_arg_bool(1);
  CHECK_RC(pyhost_prepared_call_bool(h, c, &x, 1, &b), PYHOST_OK);
  CHECK(b == 1);
  CHECK_RC(pyhost_prepared_call_int(h, c, &x, 1, &i), PYHOST_TYPE); /* a bool is not an int */
  CHECK_CONTAINS(pyhost_errmsg(h), "got bool");
  x = pyhost_arg_int(0);
  CHECK_RC(pyhost_prepared_call_bool(h, c, &x, 1, &b), PYHOST_TYPE); /* no truth values */
  x = pyhost_arg_str("s", 1);
  CHECK_RC(pyhost_prepared_call_float(h, c, &x, 1, &d), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "expected float, got str");
  CHECK_RC(pyhost_prepared_call_int(h, big, NULL, 0, &i), PYHOST_RANGE);
  CHECK_CONTAINS(pyhost_errmsg(h), "does not fit in 64 bits");
  CHECK(i == 5);
  CHECK_RC(pyhost_prepared_call_float(h, big, NULL, 0, &d), PYHOST_OK);
  CHECK(d == 1180591620717411303424.0);
  CHECK_RC(pyhost_prepared_call_int(h, sub, NULL, 0, &i), PYHOST_OK); /* int subclasses too */
  CHECK(i == -3);
  CHECK_RC(pyhost_prepared_call(h, sub, NULL, 0), PYHOST_OK);
  CHECK_STREQ(pyhost_errmsg(h), "not an error");
}

TEST_CASE(prepared_call_results) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def ident(x):\n    return x\nclass I(int): pass\n", NULL), PYHOST_OK);
  pyhost_value *fn = NULL;
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_get_global(h, "ident", &fn), PYHOST_OK);
  CHECK_RC(pyhost_prepare(h, fn, &c), PYHOST_OK);
  pyhost_value_free(fn);
  pyhost_callable *big = NULL, *sub = NULL;
  CHECK_RC(pyhost_exec(h, "def big():\n    return 2**70\ndef sub():\n    return I(-3)\n", NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "big", &big), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "sub", &sub), PYHOST_OK);
  check_results(h, c, big, sub);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  check_results(h, c, big, sub);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  pyhost_callable_free(big);
  pyhost_callable_free(sub);
  pyhost_callable_free(c);
  pyhost_free(h);
}

/* Errors: tracebacks from Python, MISUSE for bad input, nothing written on failure;
 * inside a scope the message is reset by the next call that succeeds. */
TEST_CASE(prepared_call_errors) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def div(a, b):\n    return a // b\n", "<prep>"), PYHOST_OK);
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_prepare(h, NULL, &c), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_prepare: callable is NULL");
  CHECK_RC(pyhost_prepare_name(h, NULL, &c), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "dotted is NULL");
  CHECK_RC(pyhost_prepare_name(h, "div", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_name(h, "no_such.thing", &c), PYHOST_PYEXC);
  CHECK(c == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "No module named");
  CHECK_RC(pyhost_prepare_name(h, "div", &c), PYHOST_OK);
  for (int scoped = 0; scoped < 2; scoped++) {
    if (scoped) CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
    pyhost_arg a[2] = {pyhost_arg_int(1), pyhost_arg_int(0)};
    int64_t i = 77;
    CHECK_RC(pyhost_prepared_call_int(h, c, a, 2, &i), PYHOST_PYEXC);
    CHECK(i == 77);
    CHECK_CONTAINS(pyhost_errmsg(h), "ZeroDivisionError");
    CHECK_CONTAINS(pyhost_errmsg(h), "<prep>");
    a[1] = pyhost_arg_int(1);
    CHECK_RC(pyhost_prepared_call_int(h, c, a, 2, &i), PYHOST_OK);
    CHECK(i == 1);
    CHECK_STREQ(pyhost_errmsg(h), "not an error");
    CHECK_RC(pyhost_prepared_call(h, NULL, a, 2), PYHOST_MISUSE);
    CHECK_CONTAINS(pyhost_errmsg(h), "callable is NULL");
    CHECK_RC(pyhost_prepared_call(h, c, NULL, 2), PYHOST_MISUSE);
    CHECK_CONTAINS(pyhost_errmsg(h), "argv is NULL");
    CHECK_RC(pyhost_prepared_call_int(h, c, a, 2, NULL), PYHOST_MISUSE);
    CHECK_CONTAINS(pyhost_errmsg(h), "out is NULL");
    a[1].kind = 99;
    CHECK_RC(pyhost_prepared_call(h, c, a, 2), PYHOST_MISUSE);
    CHECK_CONTAINS(pyhost_errmsg(h), "argument 1: unknown pyhost_arg kind 99");
    a[1] = pyhost_arg_bytes(NULL, 3);
    CHECK_RC(pyhost_prepared_call(h, c, a, 2), PYHOST_MISUSE);
    CHECK_CONTAINS(pyhost_errmsg(h), "bytes with a NULL pointer and len 3");
    a[1] = pyhost_arg_str("\xff", 1);
    CHECK_RC(pyhost_prepared_call(h, c, a, 2), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "UnicodeDecodeError");
    CHECK(eval_int(h, "6 * 7") == 42);
    CHECK_STREQ(pyhost_errmsg(h), "not an error");
    if (scoped) CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  }
  pyhost_value *r = (pyhost_value *)1;
  CHECK_RC(pyhost_prepared_call_value(h, c, NULL, 0, &r), PYHOST_PYEXC); /* TypeError */
  CHECK(r == NULL);
  CHECK_RC(pyhost_prepared_call(NULL, c, NULL, 0), PYHOST_MISUSE);
  /* after finalize: MISUSE, and freeing is still safe */
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK_RC(pyhost_prepared_call(h, c, NULL, 0), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_callable *late = NULL;
  CHECK_RC(pyhost_prepare_name(h, "len", &late), PYHOST_MISUSE);
  CHECK(late == NULL);
  pyhost_callable_free(c);
  pyhost_callable_free(NULL);
  pyhost_free(h);
}

/* A bad argument at every position of every count (on the C stack up to 8, through a
 * tuple past it), inside a scope and outside: the call fails with that argument's
 * error, its index named, and the arguments made before it are dropped (the object
 * passed in the other places keeps its count). */
TEST_CASE(prepared_call_bad_argument_anywhere) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "import sys\ndef count(*a):\n    return len(a)\nprobe = object()\n", NULL),
           PYHOST_OK);
  pyhost_callable *c = NULL;
  pyhost_value *probe = NULL;
  CHECK_RC(pyhost_prepare_name(h, "count", &c), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "probe", &probe), PYHOST_OK);
  int64_t before = eval_int(h, "sys.getrefcount(probe)");
  for (int scoped = 0; scoped < 2; scoped++) {
    if (scoped) CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
    for (size_t n = 1; n <= 10; n++) {
      for (size_t k = 0; k < n; k++) {
        pyhost_arg a[10];
        for (size_t j = 0; j < n; j++) a[j] = pyhost_arg_value(probe);
        char want[64];
        snprintf(want, sizeof want, "argument %zu: unknown pyhost_arg kind 99", k);
        int64_t got = -5;
        a[k].kind = 99;
        CHECK_RC(pyhost_prepared_call_int(h, c, a, n, &got), PYHOST_MISUSE);
        CHECK_CONTAINS(pyhost_errmsg(h), want);
        a[k] = pyhost_arg_str("\xff", 1);
        CHECK_RC(pyhost_prepared_call_int(h, c, a, n, &got), PYHOST_PYEXC);
        CHECK_CONTAINS(pyhost_errmsg(h), "UnicodeDecodeError");
        CHECK(got == -5);
        a[k] = pyhost_arg_int((int64_t)k);
        CHECK_RC(pyhost_prepared_call_int(h, c, a, n, &got), PYHOST_OK);
        CHECK(got == (int64_t)n);
      }
    }
    CHECK(eval_int(h, "sys.getrefcount(probe)") == before);
    if (scoped) CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  }
  pyhost_value_free(probe);
  pyhost_callable_free(c);
  pyhost_free(h);
}

static pyhost_callable *doomed;

static int free_doomed(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  pyhost_callable_free(doomed); /* while the call of it is running */
  doomed = NULL;
  return PYHOST_OK;
}

/* A callable freed from inside its own call lives until the call returns (ASan and
 * memcheck see any use after free). */
TEST_CASE(prepared_freed_while_running) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "prepmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "free_me", free_doomed, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import prepmod\ndef f(x):\n    prepmod.free_me()\n    return x + 1\n",
                       NULL),
           PYHOST_OK);
  for (int scoped = 0; scoped < 2; scoped++) {
    if (scoped) CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
    CHECK_RC(pyhost_exec(h, "def g(x):\n    return x\n", NULL), PYHOST_OK);
    CHECK_RC(pyhost_prepare_name(h, "f", &doomed), PYHOST_OK);
    pyhost_arg x = pyhost_arg_int(1);
    int64_t i = 0;
    CHECK_RC(pyhost_prepared_call_int(h, doomed, &x, 1, &i), PYHOST_OK);
    CHECK(i == 2 && doomed == NULL);
    if (scoped) CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  }
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- host functions with borrowed arguments ---- */

/* fast_mix(i, x, flag, s, b, *, key=...): reads every kind and returns by kind[i]. */
static int fast_mix(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t i;
  double x;
  int flag, rc;
  const char *s;
  const void *b;
  size_t sn, bn;
  if ((rc = pyhost_args_int(h, args, 0, &i)) || (rc = pyhost_args_float(h, args, 1, &x)) ||
      (rc = pyhost_args_bool(h, args, 2, &flag)) || (rc = pyhost_args_str(h, args, 3, &s, &sn)) ||
      (rc = pyhost_args_bytes(h, args, 4, &b, &bn)))
    return rc;
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%lld|%.2f|%d|%.*s|%zu|%zu", (long long)i, x, flag, (int)sn, s,
                   bn, pyhost_args_kwcount(args));
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name;
    size_t len;
    if ((rc = pyhost_args_kwname(h, args, k, &name, &len))) return rc;
    pyhost_value *v = NULL;
    if ((rc = pyhost_args_value(h, args, pyhost_args_count(args) + k, &v))) return rc;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "|%.*s=%s", (int)len, name,
                  pyhost_value_repr(h, v));
    pyhost_value_free(v);
  }
  switch (i) {
  case 0: return PYHOST_OK; /* None */
  case 1: return pyhost_ret_int(h, ret, i * 1000);
  case 2: return pyhost_ret_float(h, ret, x * 2);
  case 3: return pyhost_ret_bool(h, ret, !flag);
  case 4: return pyhost_ret_bytes(h, ret, b, bn);
  case 5: return pyhost_ret_str(h, ret, "\xff", 1); /* invalid UTF-8: UnicodeDecodeError */
  case 6: {
    pyhost_value *l = pyhost_value_list();
    pyhost_value_append(l, pyhost_value_int(6));
    rc = pyhost_ret_value(h, ret, l);
    pyhost_value_free(l);
    return rc;
  }
  case 7: /* a result set, then the callback fails: the result is dropped */
    pyhost_ret_int(h, ret, 1);
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "seven");
  case 8: /* a failed pyhost call: its exception reaches Python with the traceback */
    return pyhost_exec(h, "def inner():\n    raise KeyError('deep')\ninner()", "<inner>");
  default: return pyhost_ret_str(h, ret, buf, (size_t)n);
  }
}

static int fast_kind(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  char buf[256] = "";
  size_t n = 0;
  for (size_t i = 0; i <= pyhost_args_count(args) + pyhost_args_kwcount(args); i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s ", pyhost_kind_name(pyhost_args_kind(args, i)));
  return pyhost_ret_str(h, ret, buf, PYHOST_STRLEN);
}

static void expect_py(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  if (rc) fprintf(stderr, "%s: %s\n", expr, pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), want);
  pyhost_value_free(v);
}

TEST_CASE(fast_function_arguments_and_results) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "fastmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "mix", fast_mix, NULL, "doc"), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "kind", fast_kind, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "bad", NULL, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_exec(h, "import fastmod\n"
                          "def mix(i, **kw):\n"
                          "    return fastmod.mix(i, 1.5, True, 'h\\u00e9', b'\\x00b', **kw)\n",
                       NULL),
           PYHOST_OK);
  expect_py(h, "mix(0)", "None");
  expect_py(h, "mix(1)", "1000");
  expect_py(h, "mix(2)", "3.0");
  expect_py(h, "mix(3)", "False");
  expect_py(h, "mix(4)", "b'\\x00b'");
  expect_py(h, "mix(6)", "[6]");
  expect_py(h, "mix(9, key=[1, 'a'], z=None)", "\"9|1.50|1|h\xc3\xa9|2|2|key=[1, 'a']|z=None\"");
  expect_py(h, "fastmod.mix(9, 2, False, 's', b'')", "'9|2.00|0|s|0|0'"); /* int as float */
  expect_py(h, "fastmod.kind(None, True, 1, 1.0, 's', b'', [], (), {}, object())",
            "'none bool int float str bytes list tuple dict object none '");
  expect_py(h, "fastmod.mix.__doc__", "'doc'");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(fast_function_errors) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "fastmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "mix", fast_mix, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import fastmod\n"
                          "def mix(i, **kw):\n"
                          "    return fastmod.mix(i, 1.5, True, 's', b'', **kw)\n",
                       NULL),
           PYHOST_OK);
  static const struct {
    const char *code, *want;
  } cases[] = {
      {"fastmod.mix('x', 1.5, True, 's', b'')",
       "TypeError: fastmod.mix() argument 0: expected int, got str"},
      {"fastmod.mix(True, 1.5, True, 's', b'')", "expected int, got bool"},
      {"fastmod.mix(2**64, 1.5, True, 's', b'')",
       "OverflowError: fastmod.mix() argument 0: int does not fit in 64 bits"},
      {"fastmod.mix(1, 's', True, 's', b'')", "argument 1: expected float, got str"},
      {"fastmod.mix(1, 1.5, 1, 's', b'')", "argument 2: expected bool, got int"},
      {"fastmod.mix(1, 1.5, True, b's', b'')", "argument 3: expected str, got bytes"},
      {"fastmod.mix(1, 1.5, True, 's', 's')", "argument 4: expected bytes, got str"},
      {"fastmod.mix(1, 1.5, True, 's')", "TypeError: fastmod.mix() missing argument 4 (it was given 4)"},
      {"fastmod.mix(1, 1.5, True, '\\ud800', b'')", "UnicodeEncodeError"},
      {"mix(5)", "UnicodeDecodeError"},
      {"mix(7)", "ValueError: seven"},
      {"mix(8)", "KeyError: 'deep'"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CHECK_RC(pyhost_exec(h, cases[k].code, "<fast>"), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), cases[k].want);
  }
  /* the traceback runs through the host function into the inner Python code */
  CHECK_RC(pyhost_exec(h, "mix(8)", "<fast>"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "<inner>");
  CHECK_CONTAINS(pyhost_errmsg(h), "<fast>");
  /* the Python side can catch them */
  CHECK_RC(pyhost_exec(h, "try:\n    fastmod.mix('x', 1.5, True, 's', b'')\n"
                          "except TypeError as e:\n    caught = str(e)\n", NULL),
           PYHOST_OK);
  expect_py(h, "caught", "'fastmod.mix() argument 0: expected int, got str'");
  /* a function Python keeps after the host removed it raises instead of calling */
  CHECK_RC(pyhost_exec(h, "kept = fastmod.mix", NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_remove(h, m, "mix"), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "kept(1, 1.5, True, 's', b'')", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "unregistered");
  /* getters and setters refuse NULLs without raising */
  CHECK(pyhost_args_count(NULL) == 0 && pyhost_args_kwcount(NULL) == 0);
  CHECK(pyhost_args_kind(NULL, 0) == PYHOST_KIND_NONE);
  int64_t i;
  CHECK_RC(pyhost_args_int(h, NULL, 0, &i), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_args_int: args is NULL");
  CHECK_RC(pyhost_ret_int(h, NULL, 1), PYHOST_MISUSE);
  CHECK_RC(pyhost_ret_none(h, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_args_kwname(h, NULL, 0, NULL, NULL), PYHOST_MISUSE);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

static int fast_tag(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)args;
  return pyhost_ret_int(h, ret, (int64_t)(intptr_t)ud);
}

/* A module finds its host functions by name whatever Python did to its attributes:
 * re-registering a name Python deleted unregisters the old function (a copy Python
 * kept raises), and thousands of names are registered, replaced and removed. */
TEST_CASE(host_function_index) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "idxmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "f", fast_tag, (void *)1, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import idxmod\nold = idxmod.f\ndel idxmod.f\n", NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "f", fast_tag, (void *)2, NULL), PYHOST_OK);
  expect_py(h, "idxmod.f()", "2");
  CHECK_RC(pyhost_exec(h, "old()", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "idxmod.f was unregistered by the host");
  /* the function's self is pyhost's; Python cannot make one */
  CHECK_RC(pyhost_exec(h, "type(idxmod.f.__self__)()", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "TypeError: pyhost.function_data objects cannot be created");
  char name[32];
  for (int i = 0; i < 3000; i++) {
    snprintf(name, sizeof name, "g%d", i);
    CHECK_RC(pyhost_module_add_fast_function(h, m, name, fast_tag, (void *)(intptr_t)i, NULL),
             PYHOST_OK);
  }
  for (int i = 0; i < 3000; i += 3) { /* replace a third, remove a third */
    snprintf(name, sizeof name, "g%d", i);
    CHECK_RC(pyhost_module_add_fast_function(h, m, name, fast_tag, (void *)(intptr_t)-i, NULL),
             PYHOST_OK);
    snprintf(name, sizeof name, "g%d", i + 1);
    CHECK_RC(pyhost_module_remove(h, m, name), PYHOST_OK);
    CHECK_RC(pyhost_module_remove(h, m, name), PYHOST_NOTFOUND);
  }
  expect_py(h, "sum(getattr(idxmod, 'g%d' % i)() for i in range(0, 3000, 3))", "-1498500");
  expect_py(h, "sum(getattr(idxmod, 'g%d' % i)() for i in range(2, 3000, 3))", "1500500");
  expect_py(h, "any(hasattr(idxmod, 'g%d' % i) for i in range(1, 3000, 3))", "False");
  CHECK_RC(pyhost_exec(h, "kept = idxmod.g2", NULL), PYHOST_OK);
  pyhost_module_free(h, m);
  CHECK_RC(pyhost_exec(h, "kept()", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "unregistered");
  pyhost_free(h);
}

/* A fast function's record closes its door (its PyMethodDef's entry) when it may no
 * longer run: a call already running finishes, the next one refuses, even from a call
 * site the interpreter has specialised; at finalize a registered function refuses
 * from atexit code without running. */
struct door {
  pyhost_module *m;
  int calls, remove_at;
};

static int fast_door(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  struct door *d = ud;
  int64_t i = -1;
  int rc = pyhost_args_int(h, args, 0, &i);
  if (rc) return rc;
  d->calls++;
  if (i == d->remove_at && (rc = pyhost_module_remove(h, d->m, "door"))) return rc;
  return pyhost_ret_int(h, ret, i * 2);
}

TEST_CASE(fast_function_doors) {
  pyhost *h = start();
  struct door d = {NULL, 0, 50};
  CHECK_RC(pyhost_module_new(h, "doormod", NULL, &d.m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, d.m, "door", fast_door, &d, NULL), PYHOST_OK);
  /* one call site, run 100 times: specialised long before the function goes */
  CHECK_RC(pyhost_exec(h, "import doormod\n"
                          "def loop(f):\n"
                          "    total, refused = 0, []\n"
                          "    for i in range(100):\n"
                          "        try:\n"
                          "            total += f(i)\n"
                          "        except RuntimeError as e:\n"
                          "            refused.append(str(e))\n"
                          "    return total, len(refused), refused[:1]\n"
                          "got = loop(doormod.door)\n",
                       NULL),
           PYHOST_OK);
  CHECK(d.calls == 51);
  expect_py(h, "got", "(2550, 49, ['doormod.door was unregistered by the host'])");
  /* registered again under the same name: a new record with its door open */
  CHECK_RC(pyhost_module_add_fast_function(h, d.m, "door", fast_door, &d, NULL), PYHOST_OK);
  d.remove_at = -1;
  expect_py(h, "loop(doormod.door)[:2]", "(9900, 0)");
  CHECK(d.calls == 151);
  /* at finalize: refused, never run, whatever the specialised call site */
  char path[] = "/tmp/pyhost-doors-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && close(fd) == 0);
  pyhost_value *p = pyhost_value_str(path, PYHOST_STRLEN);
  CHECK_RC(pyhost_set_global(h, "path", p), PYHOST_OK);
  pyhost_value_free(p);
  CHECK_RC(pyhost_exec(h, "import atexit\n"
                          "def bye(f=doormod.door):\n"
                          "    with open(path, 'w') as out:\n"
                          "        out.write('%r' % (loop(f)[1:],))\n"
                          "atexit.register(bye)\n",
                       NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(d.calls == 151);
  char buf[256] = "";
  FILE *in = fopen(path, "r");
  CHECK(in && fgets(buf, sizeof buf, in));
  if (in) fclose(in);
  unlink(path);
  CHECK_STREQ(buf, "(100, ['doormod.door called while Python is being finalized; the host no "
                   "longer takes calls'])");
  pyhost_module_free(h, d.m);
  pyhost_free(h);
}

/* ---- CPython reads ml_meth on every call ----
 * A host function's door swap (hostfn.c, close_door) writes the PyMethodDef's ml_meth
 * and relies on the next call reading it: no call path, specialised call sites
 * (3.11+) included, may keep the function pointer it read before.  Checked on every
 * runtime with both conventions pyhost uses: the tuple form before 3.10, METH_FASTCALL
 * from 3.10. */
static PyObject *swap_tuple_a(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self, (void)args, (void)kw;
  return PY.PyLong_FromLongLong(1);
}
static PyObject *swap_tuple_b(PyObject *self, PyObject *args, PyObject *kw) {
  (void)self, (void)args, (void)kw;
  return PY.PyLong_FromLongLong(1000);
}
static PyObject *swap_fast_a(PyObject *self, PyObject *const *args, Py_ssize_t n, PyObject *kw) {
  (void)self, (void)args, (void)n, (void)kw;
  return PY.PyLong_FromLongLong(1);
}
static PyObject *swap_fast_b(PyObject *self, PyObject *const *args, Py_ssize_t n, PyObject *kw) {
  (void)self, (void)args, (void)n, (void)kw;
  return PY.PyLong_FromLongLong(1000);
}
static PyMethodDef swap_def = {"swap", NULL, 0, NULL};

TEST_CASE(ml_meth_read_on_every_call) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def loop(f, n):\n"
                          "    total = 0\n"
                          "    for i in range(n):\n"
                          "        total += f()\n"
                          "    return total\n",
                       NULL),
           PYHOST_OK);
  for (int fast = 0; fast <= 1; fast++) {
    if (fast && !pyhost__runtime_at_least(3, 10)) break; /* METH_FASTCALL: stable 3.10 */
    CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
    swap_def.ml_flags = (fast ? 0x0080 /* METH_FASTCALL */ : METH_VARARGS) | METH_KEYWORDS;
    swap_def.ml_meth = fast ? (PyCFunction)(void (*)(void))swap_fast_a
                            : (PyCFunction)(void (*)(void))swap_tuple_a;
    PyObject *f = PY.PyCFunction_NewEx(&swap_def, NULL, NULL);
    CHECK(f != NULL && PY.PyDict_SetItemString(h->main_dict, "swap", f) == 0);
    /* warm: the loop's call site specialises (3.11+) on the first door */
    expect_py(h, "loop(swap, 200)", "200");
    swap_def.ml_meth = fast ? (PyCFunction)(void (*)(void))swap_fast_b
                            : (PyCFunction)(void (*)(void))swap_tuple_b;
    expect_py(h, "loop(swap, 3)", "3000");               /* the specialised site */
    expect_py(h, "swap()", "1000");                      /* a fresh call site */
    PyObject *r = PY.PyObject_CallObject(f, NULL);       /* tp_call / vectorcall from C */
    int overflow = 0;
    CHECK(r != NULL && PY.PyLong_AsLongLongAndOverflow(r, &overflow) == 1000);
    PY.Py_DecRef(r);
    PY.Py_DecRef(f);
    CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  }
  pyhost_free(h);
}

/* The process's state is two objects: the runtime's (core.h, pyhost__process) and the
 * bridge's registries (registries.h, pyhost__bridge), which finalize empties through
 * the bridge's teardown hooks alone.  What init, the registries and finalize do shows
 * there. */
TEST_CASE(process_state_in_one_struct) {
  CHECK(atomic_load(&pyhost__process.state) == PYHOST__PROCESS_IDLE);
  pyhost *h = start();
  CHECK(atomic_load(&pyhost__process.state) == PYHOST__PROCESS_RUNNING);
  CHECK(PY.runtime >= PYHOST__V(3, 6) && PY.Py_GetVersion != NULL);
  CHECK_STREQ(pyhost__process.library, pyhost_library_path(h));
  CHECK(atomic_load(&pyhost__process.gate_open) && pyhost__process.interrupted_type != NULL);
  CHECK(pyhost__bridge.hostfns == NULL && pyhost__process.teardown == NULL);
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "procmod", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "door", fast_door, NULL, NULL), PYHOST_OK);
  CHECK(pyhost__bridge.hostfns != NULL && pyhost__bridge.main.fnself_type != NULL);
  expect_py(h, "1 + 1", "2"); /* fills the eval cache */
  unsigned long hits, misses;
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(misses >= 1);
  int hooks = 0;
  for (struct pyhost__teardown *t = pyhost__process.teardown; t; t = t->next) hooks++;
  CHECK(hooks == 3); /* host functions: close and orphans; the eval cache */
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(atomic_load(&pyhost__process.state) == PYHOST__PROCESS_DONE);
  CHECK(!atomic_load(&pyhost__process.gate_open) && pyhost__process.interrupted_type == NULL);
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 0 && misses == 0); /* the drop hook ran */
  pyhost_module_free(h, m);
  pyhost_free(h);
}
