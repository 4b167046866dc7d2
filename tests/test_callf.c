#define _GNU_SOURCE
/* test_callf.c: calls in one line (issue 24, item 2): pyhost_prepared_callf,
 * pyhost_call_namef and pyhost_plugin_callf read typed arguments, keywords and a
 * typed result from a format string. */
#include "pyhost.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pyhost *start(void) { return check_start(NULL); }

static const char *const defs =
    "import json\n"
    "def add(a, b):\n    return a + b\n"
    "def score(text, weight=1, *, bonus=0.0):\n"
    "    return sum(json.loads(text)) * weight + bonus\n"
    "def echo(*a, **k):\n    return [list(a), sorted(k.items())]\n"
    "def fail(x):\n    raise KeyError(x)\n"
    "def big():\n    return 2**40\n";

TEST_CASE(callf_arguments_keywords_results) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *add = NULL, *score = NULL, *echo = NULL;
  CHECK_RC(pyhost_prepare_name(h, "add", &add), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "score", &score), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "echo", &echo), PYHOST_OK);
  int i = 0;
  int64_t l = 0;
  double d = 0;
  int b = -1;
  CHECK_RC(pyhost_prepared_callf(h, add, "ii>i", 40, 2, &i), PYHOST_OK);
  CHECK(i == 42);
  CHECK_RC(pyhost_prepared_callf(h, add, "LL>L", (int64_t)1 << 40, (int64_t)1, &l), PYHOST_OK);
  CHECK(l == ((int64_t)1 << 40) + 1);
  CHECK_RC(pyhost_prepared_callf(h, score, "s,weight=i>d", "[1, 2, 3.5]", 2, &d), PYHOST_OK);
  CHECK(d == 13.0);
  /* the same keywords again (the cached names), then others, then the first again */
  CHECK_RC(pyhost_prepared_callf(h, score, "s,weight=i>d", "[1]", 3, &d), PYHOST_OK);
  CHECK(d == 3.0);
  CHECK_RC(pyhost_prepared_callf(h, score, "s, bonus=d, weight=i >d", "[1]", 0.5, 4, &d), PYHOST_OK);
  CHECK(d == 4.5);
  CHECK_RC(pyhost_prepared_callf(h, score, "s,weight=i>d", "[2]", 3, &d), PYHOST_OK);
  CHECK(d == 6.0);
  CHECK_RC(pyhost_prepared_callf(h, add, "dd>b", 1.0, 2.0, &b), PYHOST_TYPE); /* 3.0 is no bool */
  CHECK(b == -1);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_prepared_callf(h, echo, "nbdz y,k=s,o=O>O", 1, 0.25, "ab\0c", (size_t)4, "\x00\x01",
                                 (size_t)2, "t\xc3\xa9", (const pyhost_value *)NULL, &v),
           PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v),
              "[[None, True, 0.25, 'ab\\x00c', b'\\x00\\x01'], [('k', 't\xc3\xa9'), ('o', None)]]");
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepared_callf(h, echo, ""), PYHOST_OK); /* discarded result */
  CHECK_RC(pyhost_call_namef(h, "json.dumps", "O,sort_keys=b,indent=n>O", (const pyhost_value *)NULL, 1, &v),
           PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "'null'");
  pyhost_value_free(v);
  CHECK_RC(pyhost_call_namef(h, "os.path.join", "ss>O", "a", "b", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "'a/b'");
  pyhost_value_free(v);
  /* inside a GIL scope as outside */
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  for (int k = 0; k < 100; k++) {
    CHECK_RC(pyhost_prepared_callf(h, score, "s,weight=i>d", "[1]", k, &d), PYHOST_OK);
    CHECK(d == k);
  }
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  pyhost_callable_free(add);
  pyhost_callable_free(score);
  pyhost_callable_free(echo);
  pyhost_free(h);
}

/* Keyword names reach Python interned, as the names in Python code are, so that the
 * callee matches them by identity (issue 36): prepared (the names kept from one call
 * to the next) and in one line, on every runtime (a tuple of names from 3.12, a dict
 * before). */
TEST_CASE(callf_keyword_names_interned) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h,
                       "import sys\n"
                       "NAMES = ('a_keyword_name_of_some_length', 'other_name')\n" /* interned */
                       "def interned(**k):\n"
                       "    return [sys.intern(n) is n for n in k]\n",
                       "<defs>"),
           PYHOST_OK);
  pyhost_callable *f = NULL;
  CHECK_RC(pyhost_prepare_name(h, "interned", &f), PYHOST_OK);
  for (int k = 0; k < 2; k++) { /* the first call reads the format, the second its plan */
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_prepared_callf(h, f, ",a_keyword_name_of_some_length=i>O", 1, &v), PYHOST_OK);
    CHECK_STREQ(pyhost_value_repr(h, v), "[True]");
    pyhost_value_free(v);
  }
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_call_namef(h, "interned", ",a_keyword_name_of_some_length=i,other_name=d>O",
                             1, 2.0, &v),
           PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "[True, True]");
  pyhost_value_free(v);
  pyhost_callable_free(f);
  pyhost_free(h);
}

TEST_CASE(callf_errors) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, defs, "<defs>"), PYHOST_OK);
  pyhost_callable *add = NULL, *fail = NULL, *big = NULL;
  CHECK_RC(pyhost_prepare_name(h, "add", &add), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "fail", &fail), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "big", &big), PYHOST_OK);
  int i = 7;
  static const struct {
    const char *fmt, *msg;
  } bad[] = {
      {"iq", "unknown type (i L d b n s z y O m) at column 2"},
      {",k=i,i", "expected name=type after ',' at column 7"},
      {",k=ii", "a positional argument after a keyword at column 5"},
      {",=i", "expected name=type after ',' at column 2"},
      {"i>", "expected one result type (i L d b O s y o w) after '>' at column 3"},
      {"i>ii", "expected one result type"},
      {"i>x", "expected one result type"},
      {"iiiiiiiiiiiiiiiii", "more arguments than pyhost takes (16) at column 17"},
      /* refused before the 17th's name is kept (the fuzzer's find: it was written past
       * the 16 names first) */
      {"iiiiiiiiiiiiiiii,k=i", "more arguments than pyhost takes (16) at column 17"},
      {"iiiiiiiiiiiiiii,k=i,w=z", "more arguments than pyhost takes (16) at column 20"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    CHECK_RC(pyhost_prepared_callf(h, add, bad[k].fmt, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                                   14, 15, 16, 17),
             PYHOST_MISUSE);
    if (!strstr(pyhost_errmsg(h), bad[k].msg)) fprintf(stderr, "%s: %s\n", bad[k].fmt, pyhost_errmsg(h));
    CHECK(strstr(pyhost_errmsg(h), bad[k].msg) != NULL);
  }
  CHECK_RC(pyhost_prepared_callf(h, add, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, add, "ii>i", 1, 2, (int *)NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, NULL, "ii", 1, 2), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(NULL, add, "ii", 1, 2), PYHOST_MISUSE);
  CHECK_RC(pyhost_call_namef(h, NULL, ""), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, add, "zz", (const char *)NULL, (size_t)1, "", (size_t)0),
           PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, add, "ss", "\xff", "a"), PYHOST_PYEXC); /* invalid UTF-8 */
  CHECK(strstr(pyhost_errmsg(h), "UnicodeDecodeError") != NULL);
  /* Python's errors, with their tracebacks */
  CHECK_RC(pyhost_prepared_callf(h, fail, "s", "k"), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "KeyError: 'k'") && strstr(pyhost_errmsg(h), "line 9"));
  CHECK_RC(pyhost_prepared_callf(h, add, "i,c=i>i", 1, 2, &i), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "TypeError") != NULL);
  CHECK_RC(pyhost_prepared_callf(h, add, "ss>i", "a", "b", &i), PYHOST_TYPE);
  CHECK(strstr(pyhost_errmsg(h), "str") != NULL);
  CHECK_RC(pyhost_prepared_callf(h, big, ">i", &i), PYHOST_RANGE);
  CHECK(i == 7); /* written only on PYHOST_OK */
  CHECK_RC(pyhost_call_namef(h, "no_such_module_x.f", ""), PYHOST_PYEXC);
  pyhost_callable_free(add);
  pyhost_callable_free(fail);
  pyhost_callable_free(big);
  pyhost_free(h);
}

/* A plugin loaded from its file name.py, which holds text, in a new directory under
 * /tmp (struct plugin_file keeps both for plugin_file_unload). */
struct plugin_file {
  char dir[sizeof "/tmp/pyhost_callf_XXXXXX"], path[128];
  pyhost_plugin *p;
};
static void plugin_file_load(pyhost *h, struct plugin_file *pf, const char *name, const char *text) {
  memcpy(pf->dir, "/tmp/pyhost_callf_XXXXXX", sizeof pf->dir);
  pf->p = NULL;
  CHECK(mkdtemp(pf->dir) != NULL);
  snprintf(pf->path, sizeof pf->path, "%s/%s.py", pf->dir, name);
  FILE *f = fopen(pf->path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs(text, f);
  fclose(f);
  CHECK_RC(pyhost_plugin_load(h, pf->path, &pf->p), PYHOST_OK);
}
/* The plugin unloaded, its file and directory removed. */
static void plugin_file_unload(struct plugin_file *pf) {
  pyhost_plugin_unload(pf->p);
  remove(pf->path);
  rmdir(pf->dir);
}

TEST_CASE(callf_plugin_hooks) {
  pyhost *h = start();
  struct plugin_file pf;
  plugin_file_load(h, &pf, "scorer",
                   "import json\n"
                   "def score(text, weight=1):\n    return sum(json.loads(text)) * weight\n");
  pyhost_plugin *p = pf.p;
  double d = 0;
  CHECK_RC(pyhost_plugin_callf(h, p, "score", "s,weight=i>d", "[1, 2, 3.5]", 2, &d), PYHOST_OK);
  CHECK(d == 13.0);
  CHECK_RC(pyhost_plugin_callf(h, p, "score", "s>d", "[1, ", &d), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "JSONDecodeError") != NULL);
  /* the same context as pyhost_plugin_call's */
  CHECK(strstr(pyhost_errmsg(h), "plugin scorer: hook score raised") != NULL);
  CHECK_RC(pyhost_plugin_callf(h, p, "nohook", ""), PYHOST_NOHOOK);
  CHECK_RC(pyhost_plugin_callf(h, p, NULL, ""), PYHOST_MISUSE);
  plugin_file_unload(&pf);
  pyhost_free(h);
}

/* Hostile Python: the callee frees its own prepared callable through a host function,
 * and calls back into C recursively. */
static pyhost_callable *self_freeing;
static int free_it(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args, (void)ret, (void)h;
  pyhost_callable_free(self_freeing);
  return PYHOST_OK;
}
static int again(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t n = 0;
  int rc = pyhost_args_int(h, args, 0, &n);
  if (rc) return rc;
  if (n == 0) return pyhost_ret_int(h, ret, 0);
  int64_t r = 0;
  rc = pyhost_call_namef(h, "down", "L,step=i>L", n - 1, 1, &r);
  return rc ? rc : pyhost_ret_int(h, ret, r + 1);
}

TEST_CASE(callf_hostile) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "cfm", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "free_it", free_it, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "again", again, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import cfm\n"
                          "def suicide(x, *, y):\n    cfm.free_it()\n    return x + y\n"
                          "def down(n, step):\n    return cfm.again(n)\n",
                       NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "suicide", &self_freeing), PYHOST_OK);
  int r = 0;
  CHECK_RC(pyhost_prepared_callf(h, self_freeing, "i,y=i>i", 40, 2, &r), PYHOST_OK);
  CHECK(r == 42);
  int64_t depth = 0;
  CHECK_RC(pyhost_call_namef(h, "down", "L,step=i>L", (int64_t)30, 1, &depth), PYHOST_OK);
  CHECK(depth == 30);
  CHECK_RC(pyhost_call_namef(h, "down", "L,step=i>L", (int64_t)100000, 1, &depth), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "RecursionError") != NULL);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Expressions with inputs (issue 24, item 4): compiled once, evaluated with arguments,
 * never touching __main__. */
TEST_CASE(prepared_expressions) {
  pyhost *h = start();
  pyhost_callable *e = NULL, *k = NULL, *none = NULL;
  CHECK_RC(pyhost_prepare_expression(h, "x, y", "x * 2 + y  # a comment", &e), PYHOST_OK);
  int r = 0;
  CHECK_RC(pyhost_prepared_callf(h, e, "ii>i", 20, 1, &r), PYHOST_OK);
  CHECK(r == 41);
  int64_t l = 0;
  pyhost_arg argv[2] = {pyhost_arg_int(5), pyhost_arg_int(-1)};
  CHECK_RC(pyhost_prepared_call_int(h, e, argv, 2, &l), PYHOST_OK);
  CHECK(l == 9);
  CHECK_RC(pyhost_prepared_callf(h, e, "i,y=i>i", 1, 2, &r), PYHOST_OK); /* by keyword */
  CHECK(r == 4);
  /* no trace in __main__, and none left from one evaluation to the next */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "[n for n in ('x', 'y') if n in globals()]", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "[]");
  pyhost_value_free(v);
  CHECK_RC(pyhost_prepare_expression(h, "s", "len(s) + abs(-1)", &k), PYHOST_OK); /* builtins */
  CHECK_RC(pyhost_prepared_callf(h, k, "s>i", "abc", &r), PYHOST_OK);
  CHECK(r == 4);
  CHECK_RC(pyhost_prepare_expression(h, "", "__import__('math').floor(2.5)", &none), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, none, ">i", &r), PYHOST_OK);
  CHECK(r == 2);
  /* a global of __main__ is not seen: the expression's globals are its own */
  CHECK_RC(pyhost_exec(h, "z = 1", NULL), PYHOST_OK);
  pyhost_callable *z = NULL;
  CHECK_RC(pyhost_prepare_expression(h, "", "z", &z), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, z, ">i", &r), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "NameError") != NULL);
  pyhost_callable_free(z);
  /* what cannot make an expression */
  pyhost_callable *bad = (pyhost_callable *)1;
  CHECK_RC(pyhost_prepare_expression(h, "x", "1), print('escaped'", &bad), PYHOST_PYEXC);
  CHECK(bad == NULL && strstr(pyhost_errmsg(h), "SyntaxError") != NULL);
  CHECK_RC(pyhost_prepare_expression(h, "x", "x = 1", &bad), PYHOST_PYEXC);
  CHECK_RC(pyhost_prepare_expression(h, "x): 0 or (lambda: 0", "1", &bad), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "must be names separated by commas") != NULL);
  CHECK_RC(pyhost_prepare_expression(h, "x,", "1", &bad), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_expression(h, "x y", "1", &bad), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_expression(h, "x, x", "1", &bad), PYHOST_PYEXC); /* duplicate */
  CHECK_RC(pyhost_prepare_expression(h, NULL, "1", &bad), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_expression(h, "x", NULL, &bad), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepare_expression(h, "x", "1", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, e, "i>i", 1, &r), PYHOST_PYEXC); /* y missing */
  CHECK(strstr(pyhost_errmsg(h), "TypeError") != NULL);
  pyhost_callable_free(e);
  pyhost_callable_free(k);
  pyhost_callable_free(none);
  pyhost_free(h);
}

/* Borrowed results (issue 24, item 3): a str or bytes result read in place, valid
 * until the callable's next call returns, which may take it as its argument. */
TEST_CASE(callf_borrowed_results) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def up(s):\n    return s.upper()\n"
                          "def rev(b):\n    return b[::-1]\n"
                          "def same(x):\n    return x\n", NULL),
           PYHOST_OK);
  pyhost_callable *up = NULL, *rev = NULL, *same = NULL;
  CHECK_RC(pyhost_prepare_name(h, "up", &up), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "rev", &rev), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "same", &same), PYHOST_OK);
  const char *s = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_prepared_callf(h, up, "s>s", "h\xc3\xa9llo", &s, &n), PYHOST_OK);
  CHECK(n == 6 && memcmp(s, "H\xc3\x89LLO", 7) == 0); /* NUL-terminated */
  /* the result as the next call's argument, 50 times: each stays valid through it */
  char big[10001];
  memset(big, 'a', 10000);
  big[10000] = 0;
  CHECK_RC(pyhost_prepared_callf(h, same, "z>s", big, (size_t)10000, &s, &n), PYHOST_OK);
  for (int i = 0; i < 50; i++) CHECK_RC(pyhost_prepared_callf(h, same, "z>s", s, n, &s, &n), PYHOST_OK);
  CHECK(n == 10000 && s[0] == 'a' && s[9999] == 'a' && s[10000] == 0);
  const void *b = NULL;
  CHECK_RC(pyhost_prepared_callf(h, rev, "y>y", "\x01\x00\x02", (size_t)3, &b, &n), PYHOST_OK);
  CHECK(n == 3 && memcmp(b, "\x02\x00\x01", 3) == 0);
  /* readable outside the GIL and after other calls of other callables */
  CHECK_RC(pyhost_prepared_callf(h, up, "s>s", "x", &s, &n), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "[0] * 1000", NULL), PYHOST_MISUSE); /* NULL result: refused */
  CHECK_RC(pyhost_exec(h, "import gc; gc.collect()", NULL), PYHOST_OK);
  CHECK(n == 1 && strcmp(s, "X") == 0);
  /* wrong types, and the forms that have no callable to hold the result */
  CHECK_RC(pyhost_prepared_callf(h, same, "i>s", 1, &s, &n), PYHOST_TYPE);
  CHECK(strstr(pyhost_errmsg(h), "expected str, got int") != NULL);
  CHECK_RC(pyhost_prepared_callf(h, same, "s>y", "t", &b, &n), PYHOST_TYPE);
  CHECK_RC(pyhost_prepared_callf(h, same, "s>s", "t", &s, (size_t *)NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, same, "z>s", "\xed\xb2\x80", (size_t)3, &s, &n), PYHOST_PYEXC);
  CHECK_RC(pyhost_call_namef(h, "up", "s>s", "t", &s, &n), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "needs a prepared callable") != NULL);
  /* a str with a lst surrogate has no UTF-8 */
  CHECK_RC(pyhost_exec(h, "def lst():\n    return '\\udcff'\n", NULL), PYHOST_OK);
  pyhost_callable *lst = NULL;
  CHECK_RC(pyhost_prepare_name(h, "lst", &lst), PYHOST_OK);
  CHECK_RC(pyhost_prepared_callf(h, lst, ">s", &s, &n), PYHOST_PYEXC);
  CHECK(strstr(pyhost_errmsg(h), "UnicodeEncodeError") != NULL);
  pyhost_callable_free(lst);
  pyhost_callable_free(up);
  pyhost_callable_free(rev);
  pyhost_callable_free(same);
  pyhost_free(h);
}

/* ---- results are written only on PYHOST_OK (issue 39, defect 3) ---- */

/* What each output holds before a call that fails: scalars and borrowed results must
 * still hold it after, own pointers must be NULL (pyhost.h: "On any status but
 * PYHOST_OK, *result is NULL"), never a partial or dangling result. */
static char poison_text[] = "poison";
#define POISON_I ((int)0x5a5a5a5a)
#define POISON_L ((int64_t)0x5a5a5a5a5a5a5a5aLL)
#define POISON_D 12345.25
#define POISON_N ((size_t)0xdeadbeef)
#define POISON_V ((pyhost_value *)(void *)poison_text)

struct outs {
  int i, b;
  int64_t l;
  double d;
  const char *s;
  const void *y;
  size_t n;
  pyhost_value *v;
};
static void poison(struct outs *o) {
  o->i = o->b = POISON_I;
  o->l = POISON_L;
  o->d = POISON_D;
  o->s = poison_text;
  o->y = poison_text;
  o->n = POISON_N;
  o->v = POISON_V;
}
static int untouched(const struct outs *o) {
  return o->i == POISON_I && o->b == POISON_I && o->l == POISON_L && o->d == POISON_D &&
         o->s == poison_text && o->y == poison_text && o->n == POISON_N;
}
#define EXPECT_UNTOUCHED(call, status)                                    \
  do {                                                                     \
    poison(&o);                                                            \
    CHECK_RC(call, status);                                                \
    if (!untouched(&o)) fprintf(stderr, "%s wrote a result\n", #call);     \
    CHECK(untouched(&o) && o.v == POISON_V);                               \
  } while (0)
#define EXPECT_NULL_RESULT(call, status)                                   \
  do {                                                                     \
    poison(&o);                                                            \
    CHECK_RC(call, status);                                                \
    CHECK(untouched(&o) && o.v == NULL);                                   \
  } while (0)

static pyhost_callable *freed_in_call;
static int free_in_call(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)h, (void)ud, (void)args, (void)ret;
  pyhost_callable_free(freed_in_call);
  freed_in_call = NULL;
  return PYHOST_OK;
}

/* A getter that fails leaves its output as it was (pyhost.h: "Otherwise nothing is
 * written"): wrong types, a missing argument, an int out of range. */
static int getters_fail(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  struct outs o;
  (void)ud;
  const char *name = poison_text;
  size_t len = POISON_N;
  EXPECT_UNTOUCHED(pyhost_args_int(h, args, 0, &o.l), PYHOST_PYEXC);          /* a str */
  EXPECT_UNTOUCHED(pyhost_args_int(h, args, 1, &o.l), PYHOST_PYEXC);          /* 2**64 */
  EXPECT_UNTOUCHED(pyhost_args_float(h, args, 0, &o.d), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_args_float(h, args, 2, &o.d), PYHOST_PYEXC);        /* 2**2000 */
  EXPECT_UNTOUCHED(pyhost_args_bool(h, args, 1, &o.b), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_args_str(h, args, 1, &o.s, &o.n), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_args_str(h, args, 3, &o.s, &o.n), PYHOST_PYEXC);    /* '\udcff' */
  EXPECT_UNTOUCHED(pyhost_args_bytes(h, args, 0, &o.y, &o.n), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_args_value(h, args, 4, &o.v), PYHOST_PYEXC);        /* too deep */
  EXPECT_UNTOUCHED(pyhost_args_value(h, args, 9, &o.v), PYHOST_PYEXC);        /* missing */
  CHECK_RC(pyhost_args_kwname(h, args, 5, &name, &len), PYHOST_MISUSE);
  CHECK(name == poison_text && len == POISON_N);
  return pyhost_ret_none(h, ret); /* the exceptions raised above are the frame's */
}

TEST_CASE(failed_calls_write_no_result) {
  pyhost *h = start();
  struct outs o;
  CHECK_RC(pyhost_exec(h,
                       "def boom(*a, **k):\n    raise ValueError('boom')\n"
                       "def give(x, *a, **k):\n    return x\n"
                       "deep = []\n"
                       "for _ in range(2000): deep = [deep]\n" /* deeper than pyhost converts */
                       "def deepf():\n    return deep\n"
                       "def lonef():\n    return '\\udcff'\n", /* a str without UTF-8 */
                       NULL),
           PYHOST_OK);
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "cfree", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "free", free_in_call, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "getters", getters_fail, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import cfree\ndef freeing(x):\n    cfree.free()\n    return x\n", NULL),
           PYHOST_OK);
  pyhost_callable *boom = NULL, *give = NULL;
  CHECK_RC(pyhost_prepare_name(h, "boom", &boom), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "give", &give), PYHOST_OK);
  pyhost_value *huge = NULL, *big = NULL, *lst = NULL;
  CHECK_RC(pyhost_eval(h, "2**2000", &huge), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "2**64", &big), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "[1]", &lst), PYHOST_OK); /* no letter's type */
  pyhost_arg one = pyhost_arg_int(1), s = pyhost_arg_str("x", 1), hv = pyhost_arg_value(huge),
             bv = pyhost_arg_value(big);

  /* prepared calls with a typed result: the call raises, the type is wrong, out of range */
  EXPECT_UNTOUCHED(pyhost_prepared_call_int(h, boom, &one, 1, &o.l), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_prepared_call_int(h, give, &s, 1, &o.l), PYHOST_TYPE);
  EXPECT_UNTOUCHED(pyhost_prepared_call_int(h, give, &bv, 1, &o.l), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_prepared_call_float(h, boom, &one, 1, &o.d), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_prepared_call_float(h, give, &s, 1, &o.d), PYHOST_TYPE);
  EXPECT_UNTOUCHED(pyhost_prepared_call_float(h, give, &hv, 1, &o.d), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_prepared_call_bool(h, boom, &one, 1, &o.b), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_prepared_call_bool(h, give, &one, 1, &o.b), PYHOST_TYPE);
  EXPECT_UNTOUCHED(pyhost_prepared_call_int(h, give, NULL, 1, &o.l), PYHOST_MISUSE);
  EXPECT_NULL_RESULT(pyhost_prepared_call_value(h, boom, &one, 1, &o.v), PYHOST_PYEXC);
  pyhost_callable *deepf = NULL;
  CHECK_RC(pyhost_prepare_name(h, "deepf", &deepf), PYHOST_OK);
  EXPECT_NULL_RESULT(pyhost_prepared_call_value(h, deepf, NULL, 0, &o.v), PYHOST_PYEXC);

  /* calls in one line, every result letter, each way to fail */
  static const char *const forms[] = {"i", "L", "d", "b", "O", "s", "y"};
  for (int which = 0; which < 3; which++) {
    for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
      char fmt[16];
      void *out = forms[k][0] == 'i' ? (void *)&o.i : forms[k][0] == 'L' ? (void *)&o.l
                  : forms[k][0] == 'd' ? (void *)&o.d : forms[k][0] == 'b' ? (void *)&o.b
                  : forms[k][0] == 'O' ? (void *)&o.v : forms[k][0] == 's' ? (void *)&o.s
                                                                          : (void *)&o.y;
      int borrowed = forms[k][0] == 's' || forms[k][0] == 'y';
      /* the call raises */
      snprintf(fmt, sizeof fmt, "i>%s", forms[k]);
      if (which == 0) EXPECT_UNTOUCHED(pyhost_prepared_callf(h, boom, fmt, 1, out, &o.n), PYHOST_PYEXC);
      if (which == 1)
        EXPECT_UNTOUCHED(pyhost_call_namef(h, "boom", fmt, 1, out, &o.n),
                         borrowed ? PYHOST_MISUSE : PYHOST_PYEXC);
      /* a result of the wrong type (a list for all: O converts anything but too deep) */
      snprintf(fmt, sizeof fmt, "O>%s", forms[k]);
      pyhost_value *arg = forms[k][0] == 'O' ? NULL : lst;

      if (which == 0) {
        if (forms[k][0] == 'O') {
          EXPECT_UNTOUCHED(pyhost_prepared_callf(h, deepf, ">O", out), PYHOST_PYEXC);
        } else {
          EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, fmt, arg, out, &o.n), PYHOST_TYPE);
        }
      }
      if (which == 1 && !borrowed && forms[k][0] != 'O')
        EXPECT_UNTOUCHED(pyhost_call_namef(h, "give", fmt, arg, out), PYHOST_TYPE);
      if (which == 1 && forms[k][0] == 'O')
        EXPECT_UNTOUCHED(pyhost_call_namef(h, "deepf", ">O", out), PYHOST_PYEXC);
      /* the callable freed during its own call: a borrowed result would go with it */
      if (which == 2) {
        CHECK_RC(pyhost_prepare_name(h, "freeing", &freed_in_call), PYHOST_OK);
        snprintf(fmt, sizeof fmt, "O>%s", forms[k]);
        pyhost_value *x = NULL;
        CHECK_RC(pyhost_eval(h, forms[k][0] == 'y' ? "b'bytes'" : forms[k][0] == 's' ? "'str'"
                                : forms[k][0] == 'b' ? "True" : forms[k][0] == 'd' ? "2.5" : "7",
                             &x),
                 PYHOST_OK);
        pyhost_callable *c = freed_in_call;
        if (borrowed) {
          EXPECT_UNTOUCHED(pyhost_prepared_callf(h, c, fmt, x, out, &o.n), PYHOST_MISUSE);
          CHECK(strstr(pyhost_errmsg(h), "freed during its own call") != NULL);
        } else {
          poison(&o);
          CHECK_RC(pyhost_prepared_callf(h, c, fmt, x, out), PYHOST_OK); /* its own result */
          if (forms[k][0] == 'O') pyhost_value_free(o.v);
        }
        CHECK(freed_in_call == NULL);
        pyhost_value_free(x);
      }
    }
  }
  /* out-of-range results of the letters that have a range */
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "O>i", big, &o.i), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "L>i", (int64_t)1 << 40, &o.i), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "O>L", big, &o.l), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "O>d", huge, &o.d), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_call_namef(h, "give", "O>d", huge, &o.d), PYHOST_RANGE);
  pyhost_callable *lonef = NULL;
  CHECK_RC(pyhost_prepare_name(h, "lonef", &lonef), PYHOST_OK);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, lonef, ">s", &o.s, &o.n), PYHOST_PYEXC);
  pyhost_callable_free(lonef);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "i>s", 1, &o.s, (size_t *)NULL), PYHOST_MISUSE);
  EXPECT_UNTOUCHED(pyhost_prepared_callf(h, give, "q>i", 1, &o.i), PYHOST_MISUSE);

  /* plugins */
  struct plugin_file pf;
  plugin_file_load(h, &pf, "outs",
                   "def boom(*a):\n    raise ValueError('boom')\ndef give(x):\n    return x\n"
                   "def deep():\n    d = []\n    for _ in range(2000): d = [d]\n    return d\n");
  pyhost_plugin *p = pf.p;
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "boom", "i>L", 1, &o.l), PYHOST_PYEXC);
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "give", "s>L", "x", &o.l), PYHOST_TYPE);
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "give", "O>d", huge, &o.d), PYHOST_RANGE);
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "deep", ">O", &o.v), PYHOST_PYEXC);
  /* a borrowed result (which pyhost_plugin_callf reads since issue 34) of the wrong type */
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "give", "i>s", 1, &o.s, &o.n), PYHOST_TYPE);
  EXPECT_UNTOUCHED(pyhost_plugin_callf(h, p, "nohook", ">i", &o.i), PYHOST_NOHOOK);
  EXPECT_NULL_RESULT(pyhost_plugin_call(h, p, "boom", NULL, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_plugin_call(h, p, "deep", NULL, NULL, &o.v), PYHOST_PYEXC);
  plugin_file_unload(&pf);

  /* the value forms: own results are NULL on failure */
  pyhost_value *fn = NULL;
  CHECK_RC(pyhost_resolve(h, "boom", &fn), PYHOST_OK);
  EXPECT_NULL_RESULT(pyhost_eval(h, "1/0", &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_eval(h, "deep", &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_call(h, fn, NULL, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_callv(h, fn, NULL, 0, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_call_name(h, "boom", NULL, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_call_namev(h, "boom", NULL, 0, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_call_name(h, "deepf", NULL, NULL, &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_resolve(h, "no.such.name", &o.v), PYHOST_PYEXC);
  EXPECT_NULL_RESULT(pyhost_get_global(h, "no_such_global", &o.v), PYHOST_PYEXC);

  /* the fast form's getters */
  CHECK_RC(pyhost_exec(h, "cfree.getters('s', 2**64, 2**2000, '\\udcff', deep, k=1)", NULL),
           PYHOST_OK);

  pyhost_value_free(fn);
  pyhost_value_free(huge);
  pyhost_value_free(big);
  pyhost_value_free(lst);
  pyhost_callable_free(deepf);
  pyhost_callable_free(boom);
  pyhost_callable_free(give);
  pyhost_module_free(h, m);
  pyhost_free(h);
}
