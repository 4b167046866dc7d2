/* test_kwplan.c: keyword plans and borrowed str results of prepared calls (issue 36,
 * target b3 and item 3): pyhost_prepare_keywords fixes a call's layout once, a call
 * passes only values; pyhost_prepared_call_str reads a str result in place, held by
 * the callable until its next borrowed result. */
#include "pyhost.h"
#include "check.h"

#include <stdint.h>
#include <string.h>

static pyhost *start(void) { return check_start(NULL); }

static const char *const defs =
    "import sys\n"
    "def fk(i, y=1.0, *, z=0.0):\n    return i * y + z\n"
    "def echo(*a, **k):\n    return repr((a, list(k.items())))\n"
    "alpha = b\xc3\xa9ta = 0\n" /* the names interned by the compiler, first */
    "def interned(**k):\n    return all(sys.intern(n) is n for n in k)\n"
    "def boom(*a, **k):\n    raise KeyError('boom')\n"
    "def give(x, **k):\n    return x\n"
    "def big(n, *, fill='x'):\n    return fill * n\n";

static pyhost_callable *prepared(pyhost *h, const char *name) {
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_prepare_name(h, name, &c), PYHOST_OK);
  return c;
}

/* c's plan with npos positional arguments and the keywords names (nkw of them). */
static pyhost_callable *plan(pyhost *h, pyhost_callable *c, size_t npos,
                             const char *const *names, size_t nkw) {
  pyhost_callable *k = NULL;
  CHECK_RC(pyhost_prepare_keywords(h, c, npos, names, nkw, &k), PYHOST_OK);
  return k;
}

/* Keywords go by name, in the plan's order, through every typed form; the names are
 * interned (the callee sees the same objects sys.intern gives). */
TEST_CASE(kwplan_keywords_in_order) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *fk = prepared(h, "fk"), *echo = prepared(h, "echo");
  pyhost_callable *interned = prepared(h, "interned");
  static const char *const y[] = {"y"}, *const zy[] = {"z", "y"};
  pyhost_callable *fk_y = plan(h, fk, 1, y, 1), *fk_zy = plan(h, fk, 1, zy, 2);
  pyhost_arg a[3] = {pyhost_arg_int(4), pyhost_arg_float(2.5), pyhost_arg_float(0.5)};
  double d = 0;
  CHECK_RC(pyhost_prepared_call_float(h, fk_y, a, 2, &d), PYHOST_OK);
  CHECK(d == 10.0);
  CHECK_RC(pyhost_prepared_call_float(h, fk_zy, a, 3, &d), PYHOST_OK); /* z=2.5, y=0.5 */
  CHECK(d == 4.5);
  /* the plain callable is untouched by its plans, and they outlive it */
  CHECK_RC(pyhost_prepared_call_float(h, fk, a, 2, &d), PYHOST_OK);
  CHECK(d == 10.0);
  pyhost_callable_free(fk);
  CHECK_RC(pyhost_prepared_call_float(h, fk_y, a, 2, &d), PYHOST_OK);
  CHECK(d == 10.0);
  /* order and names as the callee sees them, through the other forms */
  static const char *const bca[] = {"b", "c", "a"};
  pyhost_callable *e = plan(h, echo, 0, bca, 3);
  pyhost_arg s[3] = {pyhost_arg_str("one", PYHOST_STRLEN), pyhost_arg_int(2), pyhost_arg_none()};
  const char *text = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_prepared_call_str(h, e, s, 3, &text, &n), PYHOST_OK);
  CHECK_STREQ(text, "((), [('b', 'one'), ('c', 2), ('a', None)])");
  CHECK(n == strlen("((), [('b', 'one'), ('c', 2), ('a', None)])"));
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_prepared_call_value(h, e, s, 3, &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "\"((), [('b', 'one'), ('c', 2), ('a', None)])\"");
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepared_call(h, e, s, 3), PYHOST_OK);
  static const char *const ab[] = {"alpha", "b\xc3\xa9ta"};
  pyhost_callable *in = plan(h, interned, 0, ab, 2);
  int yes = 0;
  for (int i = 0; i < 3; i++) { /* the same names every call */
    yes = 0;
    CHECK_RC(pyhost_prepared_call_bool(h, in, a, 2, &yes), PYHOST_OK);
    CHECK(yes == 1);
  }
  int64_t l = 0;
  static const char *const fill[] = {"fill"};
  pyhost_callable *big = prepared(h, "big"), *bigf = plan(h, big, 1, fill, 1);
  pyhost_arg bf[2] = {pyhost_arg_int(3), pyhost_arg_str("ab", 2)};
  CHECK_RC(pyhost_prepared_call_str(h, bigf, bf, 2, &text, &n), PYHOST_OK);
  CHECK(n == 6 && strcmp(text, "ababab") == 0);
  CHECK_RC(pyhost_prepared_call_int(h, bigf, bf, 2, &l), PYHOST_TYPE);
  pyhost_callable_free(bigf);
  pyhost_callable_free(big);
  pyhost_callable_free(in);
  pyhost_callable_free(e);
  pyhost_callable_free(fk_y);
  pyhost_callable_free(fk_zy);
  pyhost_callable_free(echo);
  pyhost_callable_free(interned);
  pyhost_free(h);
}

/* A call with another count than the plan's, a plan misused, a plan badly asked for:
 * PYHOST_MISUSE naming the cause, nothing written, nothing of Python's left set. */
TEST_CASE(kwplan_wrong_count) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *fk = prepared(h, "fk");
  static const char *const y[] = {"y"};
  pyhost_callable *fk_y = plan(h, fk, 1, y, 1);
  pyhost_arg a[3] = {pyhost_arg_int(4), pyhost_arg_float(2.5), pyhost_arg_float(0.5)};
  double d = -7;
  const char *text = "untouched";
  size_t n = 99;
  CHECK_RC(pyhost_prepared_call_float(h, fk_y, a, 1, &d), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "the keyword plan takes 2 arguments (1 positional, 1 by "
                                   "keyword), 1 given");
  CHECK_RC(pyhost_prepared_call_float(h, fk_y, a, 3, &d), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "3 given");
  CHECK(d == -7);
  CHECK_RC(pyhost_prepared_call(h, fk_y, NULL, 0), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "0 given");
  CHECK_RC(pyhost_prepared_call_str(h, fk_y, a, 1, &text, &n), PYHOST_MISUSE);
  CHECK(strcmp(text, "untouched") == 0 && n == 99);
  CHECK_RC(pyhost_prepared_callf(h, fk_y, "id>d", 4, 2.5, &d), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "fixes its own layout");
  CHECK(d == -7);
  /* asking badly */
  pyhost_callable *k = fk;
  CHECK_RC(pyhost_prepare_keywords(h, fk, 1, y, 0, &k), PYHOST_MISUSE);
  CHECK(k == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "1 positional and 0 keyword arguments");
  static const char *const nine[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  CHECK_RC(pyhost_prepare_keywords(h, fk, 0, nine, 9, &k), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_keywords(h, fk, 8, nine, 1, &k), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_keywords(h, fk, (size_t)-1, nine, 2, &k), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_keywords(h, fk, 1, NULL, 1, &k), PYHOST_MISUSE);
  static const char *const empty[] = {"y", ""}, *const null[] = {NULL};
  CHECK_RC(pyhost_prepare_keywords(h, fk, 0, empty, 2, &k), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "keyword name 1 is empty");
  CHECK_RC(pyhost_prepare_keywords(h, fk, 0, null, 1, &k), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "keyword name 0 is NULL");
  CHECK_RC(pyhost_prepare_keywords(h, fk_y, 0, y, 1, &k), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a keyword plan already");
  CHECK_RC(pyhost_prepare_keywords(h, NULL, 0, y, 1, &k), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_keywords(h, fk, 0, y, 1, NULL), PYHOST_MISUSE);
  static const char *const bad[] = {"\xff"}; /* not UTF-8 */
  CHECK_RC(pyhost_prepare_keywords(h, fk, 0, bad, 1, &k), PYHOST_PYEXC);
  CHECK(k == NULL);
  /* nothing of Python's was left set: the next call works */
  CHECK_RC(pyhost_prepared_call_float(h, fk_y, a, 2, &d), PYHOST_OK);
  CHECK(d == 10.0);
  pyhost_callable_free(fk_y);
  pyhost_callable_free(fk);
  pyhost_free(h);
}

/* The callee raises, or a result is of the wrong type: the status names it, nothing
 * is written, and the exception is pyhost's message, not left set in Python. */
TEST_CASE(kwplan_raises_and_wrong_result_type) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *boom = prepared(h, "boom"), *give = prepared(h, "give");
  static const char *const y[] = {"y"};
  pyhost_callable *by = plan(h, boom, 1, y, 1), *gy = plan(h, give, 1, y, 1);
  pyhost_arg a[2] = {pyhost_arg_str("text", PYHOST_STRLEN), pyhost_arg_float(2.5)};
  double d = -7;
  int64_t l = -7;
  const char *text = "untouched";
  size_t n = 99;
  CHECK_RC(pyhost_prepared_call_float(h, by, a, 2, &d), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "KeyError");
  CHECK_RC(pyhost_prepared_call_str(h, by, a, 2, &text, &n), PYHOST_PYEXC);
  CHECK_RC(pyhost_prepared_call(h, by, a, 2), PYHOST_PYEXC);
  CHECK_RC(pyhost_prepared_call_float(h, gy, a, 2, &d), PYHOST_TYPE); /* a str */
  CHECK_CONTAINS(pyhost_errmsg(h), "str");
  pyhost_arg f[2] = {pyhost_arg_float(1.5), pyhost_arg_float(2.5)};
  CHECK_RC(pyhost_prepared_call_int(h, gy, f, 2, &l), PYHOST_TYPE);
  CHECK_RC(pyhost_prepared_call_str(h, gy, f, 2, &text, &n), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "expected str, got float");
  CHECK(d == -7 && l == -7 && strcmp(text, "untouched") == 0 && n == 99);
  /* no exception left behind: a call that needs a clean state succeeds */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('sys').exc_info()[0] is None", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "True");
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepared_call_str(h, gy, a, 2, &text, &n), PYHOST_OK);
  CHECK(n == 4 && strcmp(text, "text") == 0);
  pyhost_callable_free(by);
  pyhost_callable_free(gy);
  pyhost_callable_free(boom);
  pyhost_callable_free(give);
  pyhost_free(h);
}

/* A borrowed str result lives in the callable: through other calls, a collection and
 * new allocations, as the next call's argument, until the next borrowed result or
 * pyhost_prepared_release_result.  The strings are large (their own mmap in CPython's
 * allocator), so one freed too early is unmapped, not just stale. */
TEST_CASE(call_str_borrowed_until_next_call) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *big = prepared(h, "big"), *give = prepared(h, "give");
  static const char *const fill[] = {"fill"};
  pyhost_callable *bigf = plan(h, big, 1, fill, 1);
  enum { N = 1 << 20 };
  pyhost_arg a[2] = {pyhost_arg_int(N), pyhost_arg_str("q", 1)};
  const char *s = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_prepared_call_str(h, bigf, a, 2, &s, &n), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import gc; gc.collect(); junk = ['y' * 4096 for _ in range(600)]\n"
                          "del junk\n", NULL),
           PYHOST_OK);
  pyhost_arg one = pyhost_arg_int(1);
  int64_t l = 0;
  CHECK_RC(pyhost_prepared_call_int(h, give, &one, 1, &l), PYHOST_OK); /* another callable */
  CHECK(n == N && s[0] == 'q' && s[N - 1] == 'q' && s[N] == 0);
  /* a scalar call of the same callable keeps it too: only a borrowed result replaces it */
  a[0] = pyhost_arg_int(3);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_prepared_call_value(h, bigf, a, 2, &v), PYHOST_OK);
  pyhost_value_free(v);
  CHECK(n == N && s[0] == 'q' && s[N - 1] == 'q');
  /* the result as the next call's argument, on the plain callable: valid through it */
  pyhost_arg arg = pyhost_arg_str(s, n);
  const char *s2 = NULL;
  size_t n2 = 0;
  CHECK_RC(pyhost_prepared_call_str(h, give, &arg, 1, &s2, &n2), PYHOST_OK);
  CHECK(n2 == N && s2[0] == 'q' && s2[N - 1] == 'q');
  for (int i = 0; i < 20; i++) { /* its own result as its argument */
    arg = pyhost_arg_str(s2, n2);
    CHECK_RC(pyhost_prepared_call_str(h, give, &arg, 1, &s2, &n2), PYHOST_OK);
  }
  CHECK(n2 == N && s2[N - 1] == 'q' && s2[N] == 0);
  /* pyhost_prepared_callf's >s and _str share the one result a callable holds */
  CHECK_RC(pyhost_prepared_callf(h, give, "s>s", "short", &s2, &n2), PYHOST_OK);
  CHECK(n2 == 5 && strcmp(s2, "short") == 0);
  pyhost_prepared_release_result(give);
  pyhost_prepared_release_result(give); /* holding nothing: ignored */
  pyhost_prepared_release_result(NULL);
  CHECK(n == N && s[N - 1] == 'q'); /* bigf's is still held */
  pyhost_callable_free(bigf);
  pyhost_callable_free(big);
  pyhost_callable_free(give);
  pyhost_free(h);
}

/* pyhost_prepared_call_bytes: a bytes result in place, through a plan and the plain
 * callable, held in the slot pyhost_prepared_call_str uses (the next borrowed result
 * replaces it, a scalar call does not); anything else is PYHOST_TYPE, nothing written. */
TEST_CASE(call_bytes_borrowed_until_next_call) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *big = prepared(h, "big"), *give = prepared(h, "give");
  static const char *const fill[] = {"fill"};
  pyhost_callable *bigf = plan(h, big, 1, fill, 1);
  enum { N = 1 << 20 };
  pyhost_arg a[2] = {pyhost_arg_int(N), pyhost_arg_bytes("\0q", 2)};
  const void *p = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_prepared_call_bytes(h, bigf, a, 2, &p, &n), PYHOST_OK);
  const unsigned char *b = p;
  CHECK(n == 2 * (size_t)N && b[0] == 0 && b[1] == 'q' && b[n - 1] == 'q');
  CHECK_RC(pyhost_exec(h, "import gc; gc.collect(); junk = [b'y' * 4096 for _ in range(600)]\n"
                          "del junk\n", NULL),
           PYHOST_OK);
  a[0] = pyhost_arg_int(3);
  double d = 0;
  CHECK_RC(pyhost_prepared_call_float(h, bigf, a, 2, &d), PYHOST_TYPE); /* a scalar form */
  CHECK(b[0] == 0 && b[n - 1] == 'q');                                   /* still held */
  pyhost_arg arg = pyhost_arg_bytes(p, n); /* the result as the next call's argument */
  const void *p2 = (const void *)&n;
  size_t n2 = 77;
  CHECK_RC(pyhost_prepared_call_bytes(h, give, &arg, 1, &p2, &n2), PYHOST_OK);
  CHECK(n2 == n && memcmp(p2, p, n) == 0);
  arg = pyhost_arg_str("text", 4);
  p2 = (const void *)&n, n2 = 77;
  CHECK_RC(pyhost_prepared_call_bytes(h, give, &arg, 1, &p2, &n2), PYHOST_TYPE);
  CHECK(p2 == (const void *)&n && n2 == 77);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_prepared_call_bytes");
  CHECK_CONTAINS(pyhost_errmsg(h), "str");
  CHECK_RC(pyhost_prepared_call_bytes(h, give, &arg, 1, NULL, &n2), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call_bytes(h, bigf, a, 1, &p2, &n2), PYHOST_MISUSE); /* the plan's count */
  pyhost_prepared_release_result(bigf);
  pyhost_callable_free(bigf);
  pyhost_callable_free(big);
  pyhost_callable_free(give);
  pyhost_free(h);
}

/* ---- a callable freed during its own call ---- */

static pyhost_callable *freed_in_call;
static int free_in_call(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args;
  pyhost_callable_free(freed_in_call);
  freed_in_call = NULL;
  return pyhost_ret_none(h, ret);
}

/* Freed from a host function it called: the call finishes, then the plan goes; a
 * scalar result is the call's own, a borrowed one would go with the plan, so that
 * call is PYHOST_MISUSE and writes nothing. */
TEST_CASE(kwplan_freed_during_call) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "kfree", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "free", free_in_call, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import kfree\ndef freeing(x, *, y):\n    kfree.free()\n"
                          "    return str(x * y) if isinstance(x, str) else x * y\n", NULL),
           PYHOST_OK);
  pyhost_callable *f = prepared(h, "freeing");
  static const char *const y[] = {"y"};
  pyhost_arg a[2] = {pyhost_arg_float(2.0), pyhost_arg_int(3)};
  double d = -7;
  freed_in_call = plan(h, f, 1, y, 1);
  CHECK_RC(pyhost_prepared_call_float(h, freed_in_call, a, 2, &d), PYHOST_OK);
  CHECK(d == 6.0 && freed_in_call == NULL);
  const char *s = "untouched";
  size_t n = 99;
  pyhost_arg t[2] = {pyhost_arg_str("ab", 2), pyhost_arg_int(2)};
  freed_in_call = plan(h, f, 1, y, 1);
  CHECK_RC(pyhost_prepared_call_str(h, freed_in_call, t, 2, &s, &n), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "freed during its own call");
  CHECK(freed_in_call == NULL && strcmp(s, "untouched") == 0 && n == 99);
  /* the plain callable, freed during a call of its plan: the plan lives on */
  pyhost_callable *p = plan(h, f, 1, y, 1);
  freed_in_call = f;
  CHECK_RC(pyhost_prepared_call_str(h, p, t, 2, &s, &n), PYHOST_OK);
  CHECK(n == 4 && strcmp(s, "abab") == 0 && freed_in_call == NULL);
  freed_in_call = NULL;
  CHECK_RC(pyhost_prepared_call_str(h, p, t, 2, &s, &n), PYHOST_OK);
  pyhost_callable_free(p);
  pyhost_free(h);
}
