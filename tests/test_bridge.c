/* test_bridge.c: tier 2, the bridge between the host and Python: calls into Python,
 * host functions, host types and the lifetime rules, run once per Python in the
 * matrix.  Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "alloc.h" /* white box: the fault-injection seam */

#include <stdint.h>
#include <unistd.h>

static pyhost *start(void) { return check_start(NULL); }


/* Runs code; a failure is a test failure with Python's message. */
static void run(pyhost *h, const char *code) {
  int rc = pyhost_exec(h, code, "<test>");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "exec failed (%s):\n%s\n--- code:\n%s\n", pyhost_status_name(rc),
            pyhost_errmsg(h), code);
    check_failures++;
  }
}

/* Evaluates expr and compares its repr with want. */
static void expect(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  const char *r = rc == PYHOST_OK ? pyhost_value_repr(h, v) : NULL;
  if (!r || strcmp(r, want) != 0) {
    fprintf(stderr, "eval(%s) gave %s, expected %s\n", expr, r ? r : pyhost_errmsg(h), want);
    check_failures++;
  }
  pyhost_value_free(v);
}

static int64_t int_of(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t i = -999999;
  if (pyhost_eval(h, expr, &v) != PYHOST_OK || pyhost_value_to_int(h, v, &i) != PYHOST_OK) {
    fprintf(stderr, "eval(%s): %s\n", expr, pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
  return i;
}

/* Resident set size in bytes (/proc/self/statm, second field). */
static long rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (!f) return 0;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
  fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

/* ====================================================================== calling */

TEST_CASE(call_by_name_and_value) {
  pyhost *h = start();
  pyhost_value *args = pyhost_value_list(), *kw = pyhost_value_dict(), *r = NULL;
  pyhost_value *d = pyhost_value_dict();
  pyhost_value_set(d, pyhost_value_str("b", PYHOST_STRLEN), pyhost_value_int(2));
  pyhost_value_set(d, pyhost_value_str("a", PYHOST_STRLEN), pyhost_value_int(1));
  pyhost_value_append(args, d);
  pyhost_value_set(kw, pyhost_value_str("sort_keys", PYHOST_STRLEN), pyhost_value_bool(1));
  CHECK_RC(pyhost_call_name(h, "json.dumps", args, kw, &r), PYHOST_OK);
  const char *s = NULL;
  CHECK_RC(pyhost_value_to_str(h, r, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, "{\"a\": 1, \"b\": 2}");
  pyhost_value_free(r);

  /* by value, with a C array of arguments */
  pyhost_value *dumps = NULL;
  CHECK_RC(pyhost_resolve(h, "json.dumps", &dumps), PYHOST_OK);
  CHECK(pyhost_value_kind(dumps) == PYHOST_KIND_OBJECT);
  const pyhost_value *argv[1] = {pyhost_value_item(args, 0)};
  CHECK_RC(pyhost_callv(h, dumps, argv, 1, kw, &r), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, r, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, "{\"a\": 1, \"b\": 2}");
  pyhost_value_free(r);
  CHECK_RC(pyhost_call(h, dumps, NULL, NULL, &r), PYHOST_PYEXC); /* missing argument */
  CHECK_CONTAINS(pyhost_errmsg(h), "TypeError");
  CHECK(r == NULL);
  pyhost_value_free(dumps);

  /* submodules, builtins, __main__ first */
  pyhost_value *two[2] = {pyhost_value_str("a", 1), pyhost_value_str("b", 1)};
  CHECK_RC(pyhost_call_namev(h, "os.path.join", (const pyhost_value *const *)two, 2, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "'a/b'");
  pyhost_value_free(r);
  CHECK_RC(pyhost_call_namev(h, "len", (const pyhost_value *const *)two, 1, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "1");
  pyhost_value_free(r);
  run(h, "def len(x):\n    return 'mine'\n");
  CHECK_RC(pyhost_call_namev(h, "len", (const pyhost_value *const *)two, 1, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "'mine'");
  pyhost_value_free(r);
  CHECK_RC(pyhost_call_namev(h, "xml.etree.ElementTree.fromstring", (const pyhost_value *const *)two, 0, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "missing 1 required positional argument");
  pyhost_value_free(two[0]);
  pyhost_value_free(two[1]);

  /* names that do not resolve */
  CHECK_RC(pyhost_call_name(h, "no_such_module_xyz.f", NULL, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "No module named 'no_such_module_xyz'");
  CHECK_RC(pyhost_call_name(h, "json.no_such_fn", NULL, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "AttributeError");
  CHECK_CONTAINS(pyhost_errmsg(h), "no_such_fn");
  CHECK_RC(pyhost_call_name(h, "json..dumps", NULL, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "empty name in json..dumps");

  /* wrong kinds and NULLs */
  pyhost_value *i = pyhost_value_int(3);
  CHECK_RC(pyhost_call_name(h, "json.dumps", i, NULL, &r), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "pyhost_call_name: args: expected tuple or list, got int");
  CHECK_RC(pyhost_call_name(h, "json.dumps", args, i, &r), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "pyhost_call_name: kwargs: expected dict, got int");
  CHECK_RC(pyhost_call(h, NULL, args, NULL, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "callable is NULL");
  CHECK_RC(pyhost_call_name(h, NULL, args, NULL, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "dotted is NULL");
  CHECK_RC(pyhost_call_name(h, "len", args, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_callv(h, i, NULL, 2, NULL, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_call(h, i, NULL, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "'int' object is not callable");
  pyhost_value_free(i);
  pyhost_value_free(args);
  pyhost_value_free(kw);
  pyhost_free(h);
}

/* Positional calls of every count, across the stack's limit (8) where the tuple form
 * takes over, to a Python function, a builtin, a bound method and a class: before 3.12
 * the stack goes through PyObject_CallFunctionObjArgs, whose list a NULL would end. */
TEST_CASE(callv_every_argument_count) {
  pyhost *h = start();
  run(h, "def args(*a):\n    return a\n"
         "class K:\n    def m(self, *a):\n        return a\n"
         "class T(tuple):\n    def __new__(cls, *a):\n        return tuple.__new__(cls, a)\n"
         "bound = K().m\n");
  pyhost_value *argv[10];
  for (int i = 0; i < 10; i++) argv[i] = i == 3 ? pyhost_value_none() : pyhost_value_int(i);
  const char *const names[] = {"args", "bound", "T"};
  for (size_t f = 0; f < 3; f++) {
    for (size_t n = 0; n <= 10; n++) {
      char want[128] = "(";
      for (size_t i = 0; i < n; i++) {
        char item[8] = "None";
        if (i != 3) snprintf(item, sizeof item, "%zu", i);
        strcat(want, item);
        strcat(want, n == 1 ? "," : i + 1 < n ? ", " : "");
      }
      strcat(want, ")");
      pyhost_value *r = NULL, *t = NULL;
      CHECK_RC(pyhost_call_namev(h, names[f], (const pyhost_value *const *)argv, n, NULL, &r),
               PYHOST_OK);
      if (f == 2) /* a T: the repr of its tuple */
        CHECK_RC(pyhost_call_namev(h, "tuple", (const pyhost_value *const *)&r, 1, NULL, &t),
                 PYHOST_OK);
      CHECK_STREQ(pyhost_value_repr(h, t ? t : r), want);
      pyhost_value_free(t);
      pyhost_value_free(r);
    }
  }
  pyhost_value *r = NULL; /* a builtin taking a fixed count */
  CHECK_RC(pyhost_call_namev(h, "divmod", (const pyhost_value *const *)argv + 7, 2, NULL, &r),
           PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "(0, 7)");
  pyhost_value_free(r);
  CHECK_RC(pyhost_call_namev(h, "divmod", (const pyhost_value *const *)argv + 7, 3, NULL, &r),
           PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "TypeError");
  for (int i = 0; i < 10; i++) pyhost_value_free(argv[i]);
  pyhost_free(h);
}

TEST_CASE(call_error_has_traceback) {
  pyhost *h = start();
  run(h, "def inner(x):\n    raise ValueError('bad %d' % x)\n\ndef outer(x):\n    return inner(x)\n");
  pyhost_value *a = pyhost_value_int(7), *r = NULL;
  const pyhost_value *argv[1] = {a};
  CHECK_RC(pyhost_call_namev(h, "outer", argv, 1, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "Traceback (most recent call last)");
  CHECK_CONTAINS(pyhost_errmsg(h), "in inner");
  CHECK_CONTAINS(pyhost_errmsg(h), "ValueError: bad 7");
  CHECK_RC(pyhost_call_namev(h, "exit", argv, 1, NULL, &r), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 7);
  pyhost_value_free(a);
  pyhost_free(h);
}

TEST_CASE(import_attributes_globals) {
  pyhost *h = start();
  pyhost_value *m = NULL, *v = NULL;
  CHECK_RC(pyhost_import(h, "os.path", &m), PYHOST_OK);
  CHECK_STREQ(pyhost_value_type_name(m), "module");
  CHECK_RC(pyhost_getattr(h, m, "sep", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "'/'");
  pyhost_value_free(v);
  CHECK_RC(pyhost_getattr(h, m, "no_such_attr", &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "AttributeError");
  CHECK(v == NULL);
  CHECK_RC(pyhost_import(h, "no_such_module_xyz", &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "No module named");
  pyhost_value_free(m);

  run(h, "class C:\n    pass\nc = C()\n");
  pyhost_value *c = NULL, *x = pyhost_value_float(2.5);
  CHECK_RC(pyhost_get_global(h, "c", &c), PYHOST_OK);
  CHECK_RC(pyhost_setattr(h, c, "x", x), PYHOST_OK);
  expect(h, "c.x", "2.5");
  CHECK_RC(pyhost_setattr(h, c, "x", NULL), PYHOST_OK);
  expect(h, "hasattr(c, 'x')", "False");
  CHECK_RC(pyhost_setattr(h, c, "x", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "AttributeError");
  pyhost_value *one = pyhost_value_int(1);
  CHECK_RC(pyhost_setattr(h, one, "real", x), PYHOST_PYEXC); /* int attributes are read-only */
  CHECK_RC(pyhost_getattr(h, x, "real", &v), PYHOST_OK);        /* C data converted first */
  CHECK_STREQ(pyhost_value_repr(h, v), "2.5");
  pyhost_value_free(v);
  pyhost_value_free(one);
  pyhost_value_free(c);

  CHECK_RC(pyhost_set_global(h, "answer", x), PYHOST_OK);
  expect(h, "answer * 2", "5.0");
  CHECK_RC(pyhost_get_global(h, "answer", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, v), "2.5");
  pyhost_value_free(v);
  CHECK_RC(pyhost_set_global(h, "answer", NULL), PYHOST_OK);
  CHECK_RC(pyhost_get_global(h, "answer", &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "NameError: name 'answer' is not defined");
  CHECK_RC(pyhost_set_global(h, "answer", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "NameError");
  CHECK_RC(pyhost_get_global(h, "len", &v), PYHOST_PYEXC); /* builtins are not globals */
  CHECK_RC(pyhost_get_global(h, NULL, &v), PYHOST_MISUSE);
  pyhost_value *bad = pyhost_value_str("\xff", 1);
  CHECK_RC(pyhost_set_global(h, "bad", bad), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "UnicodeDecodeError");
  pyhost_value_free(bad);
  pyhost_value_free(x);
  pyhost_free(h);
  /* after free: a NULL handle is refused, never a crash */
  CHECK_RC(pyhost_import(NULL, "os", &v), PYHOST_MISUSE);
}

TEST_CASE(value_copy_and_lookup) {
  pyhost *h = start();
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "{'a': [1, 2**70, b'x\\x00y', object], 'b': None, 3: 'three'}", &v), PYHOST_OK);
  pyhost_value *c = pyhost_value_copy(v);
  pyhost_value_free(v);
  CHECK_STREQ(pyhost_value_repr(h, c), "{'a': [1, 1180591620717411303424, b'x\\x00y', <class 'object'>], 'b': None, 3: 'three'}");
  CHECK(pyhost_value_lookup(c, "a") != NULL);
  CHECK(pyhost_value_kind(pyhost_value_lookup(c, "b")) == PYHOST_KIND_NONE);
  CHECK(pyhost_value_lookup(c, "b") != NULL);
  CHECK(pyhost_value_lookup(c, "3") == NULL);
  CHECK(pyhost_value_lookup(c, "zz") == NULL);
  CHECK(pyhost_value_lookup(pyhost_value_item(c, 0), "a") == NULL); /* not a dict */
  CHECK(pyhost_value_copy(NULL) == NULL);
  pyhost_value *obj = pyhost_value_copy(pyhost_value_item(pyhost_value_item(c, 0), 3));
  pyhost_value_free(c);
  CHECK_STREQ(pyhost_value_repr(h, obj), "<class 'object'>"); /* the copy holds its own reference */
  pyhost_finalize(h);
  CHECK(pyhost_value_copy(obj) == NULL); /* object values cannot be copied after finalize */
  pyhost_value_free(obj);
  pyhost_free(h);
}

/* ====================================================================== host functions */

static int fn_add(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                  const pyhost_value *kwargs, pyhost_value **result) {
  (*(int *)ud)++;
  if (nargs != 2)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "add() takes 2 arguments (%zu given)", nargs);
  int64_t a, b;
  if (pyhost_value_to_int(h, args[0], &a) || pyhost_value_to_int(h, args[1], &b))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "add(): %s", pyhost_errmsg(h));
  const pyhost_value *scale = pyhost_value_lookup(kwargs, "scale");
  int64_t k = 1;
  if (scale && pyhost_value_to_int(h, scale, &k))
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "scale: %s", pyhost_errmsg(h));
  *result = pyhost_value_int((a + b) * k);
  return PYHOST_OK;
}

static int fn_fail(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  (void)kwargs;
  const char *how = "";
  if (nargs > 0) pyhost_value_to_str(h, args[0], &how, NULL);
  *result = pyhost_value_int(1); /* ignored on failure */
  if (!strcmp(how, "named")) return pyhost_raise_named(h, "myapp.Error", "custom %d", 42);
  if (!strcmp(how, "keyerror")) return pyhost_raise_named(h, "KeyError", "k");
  if (!strcmp(how, "notexc")) return pyhost_raise_named(h, "json.dumps", "x");
  if (!strcmp(how, "status")) return pyhost_value_to_int(h, args[0], &(int64_t){0});
  if (!strcmp(how, "handled")) { /* a failed call handled, then another failure */
    pyhost_value *r = NULL;
    pyhost_call_name(h, "no_such_module_xyz.f", NULL, NULL, &r);
    return pyhost_value_to_int(h, args[0], &(int64_t){0});
  }
  if (!strcmp(how, "bad")) return pyhost_raise(h, (pyhost_exc)999, "x");
  return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "plain \xff failure"); /* not UTF-8: replaced */
}

static int fn_echo(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)h;
  (void)ud;
  pyhost_value *t = pyhost_value_tuple();
  pyhost_value *l = pyhost_value_list();
  for (size_t i = 0; i < nargs; i++) pyhost_value_append(l, pyhost_value_copy(args[i]));
  pyhost_value_append(t, l);
  pyhost_value_append(t, kwargs ? pyhost_value_copy(kwargs) : pyhost_value_none());
  *result = t;
  return PYHOST_OK;
}

static pyhost_module *make_myapp(pyhost *h, int *calls) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", "The test host.", &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "add", fn_add, calls, "add(a, b, *, scale=1)"), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "fail", fn_fail, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "echo", fn_echo, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_exception(h, m, "Error", PYHOST_EXC_VALUE_ERROR, NULL), PYHOST_OK);
  return m;
}

TEST_CASE(host_functions) {
  pyhost *h = start();
  int calls = 0;
  pyhost_module *m = make_myapp(h, &calls);
  run(h, "import myapp");
  expect(h, "myapp.add(2, 3)", "5");
  expect(h, "myapp.add(2, 3, scale=10)", "50");
  expect(h, "myapp.add.__doc__", "'add(a, b, *, scale=1)'");
  expect(h, "myapp.add.__name__, myapp.add.__module__, myapp.__name__, myapp.__doc__",
         "('add', 'myapp', 'myapp', 'The test host.')");
  expect(h, "myapp.echo()", "([], None)");
  expect(h, "myapp.echo(1, 'x', [None], k=b'v', j=2.5)", "([1, 'x', [None]], {'k': b'v', 'j': 2.5})");
  expect(h, "myapp.echo(*range(20))[0][-1]", "19"); /* beyond the small argument array */
  expect(h, "type(myapp.echo(object())[0][0]).__name__", "'object'");
  CHECK(calls == 2);
  /* wrong argument counts and types */
  run(h, "try:\n    myapp.add(1)\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'add() takes 2 arguments (1 given)'");
  run(h, "try:\n    myapp.add(1, 'x')\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'add(): expected int, got str'");
  run(h, "try:\n    myapp.add(1, 2**64)\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'add(): int 18446744073709551616 does not fit in 64 bits'");
  run(h, "try:\n    myapp.add(1, 2, scale=None)\nexcept ValueError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'scale: expected int, got NoneType'");
  /* exception types */
  run(h, "try:\n    myapp.fail('named')\nexcept myapp.Error as e:\n    msg = (type(e).__module__, type(e).__name__, str(e), isinstance(e, ValueError))\n");
  expect(h, "msg", "('myapp', 'Error', 'custom 42', True)");
  run(h, "try:\n    myapp.fail('keyerror')\nexcept KeyError as e:\n    msg = (type(e).__name__, e.args)\n");
  expect(h, "msg", "('KeyError', ('k',))");
  run(h, "try:\n    myapp.fail('notexc')\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'pyhost_raise_named: json.dumps does not name an exception class'");
  run(h, "try:\n    myapp.fail('status')\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.fail: PYHOST_TYPE: expected int, got str'");
  run(h, "try:\n    myapp.fail('handled')\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.fail: PYHOST_TYPE: expected int, got str'");
  run(h, "try:\n    myapp.fail('bad')\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.fail: PYHOST_MISUSE: pyhost_raise: unknown exception type 999'");
  run(h, "try:\n    myapp.fail()\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg == 'plain \\ufffd failure'", "True");
  /* uncaught: back to C as PYEXC with the Python traceback */
  CHECK_RC(pyhost_exec(h, "def go():\n    myapp.fail('named')\ngo()\n", "script.py"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "File \"script.py\", line 2, in go");
  CHECK_CONTAINS(pyhost_errmsg(h), "myapp.Error: custom 42");
  /* a host function called from C like any callable */
  pyhost_value *r = NULL, *a = pyhost_value_int(20), *b = pyhost_value_int(22);
  const pyhost_value *argv[2] = {a, b};
  CHECK_RC(pyhost_call_namev(h, "myapp.add", argv, 2, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "42");
  pyhost_value_free(r);
  CHECK_RC(pyhost_call_namev(h, "myapp.add", argv, 1, NULL, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "TypeError: add() takes 2 arguments (1 given)");
  pyhost_value_free(a);
  pyhost_value_free(b);
  /* the module handle as a value, and values in the module */
  pyhost_value *mv = NULL, *ver = pyhost_value_str("1.0", PYHOST_STRLEN);
  CHECK_RC(pyhost_module_add_value(h, m, "version", ver), PYHOST_OK);
  CHECK_RC(pyhost_module_value(h, m, &mv), PYHOST_OK);
  CHECK_RC(pyhost_getattr(h, mv, "version", &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "'1.0'");
  pyhost_value_free(r);
  pyhost_value_free(mv);
  pyhost_value_free(ver);
  /* raising outside a callback is refused */
  CHECK_RC(pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "x"), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "outside a host callback");
  CHECK_RC(pyhost_raise_named(h, "KeyError", "x"), PYHOST_MISUSE);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(module_errors) {
  pyhost *h = start();
  pyhost_module *m = NULL, *sub = NULL;
  run(h, "import json");
  CHECK_RC(pyhost_module_new(h, "json", NULL, &m), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a module named json is already in sys.modules");
  CHECK(m == NULL);
  CHECK_RC(pyhost_module_new(h, "nopar.sub", NULL, &m), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "needs its parent module nopar");
  CHECK_RC(pyhost_module_new(h, "", NULL, &m), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_new(h, "x", NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_new(h, "app", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_new(h, "app.sub", "Sub.", &sub), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, sub, "echo", fn_echo, NULL, NULL), PYHOST_OK);
  run(h, "import app.sub\nfrom app.sub import echo\nassert app.sub.echo is echo\n");
  expect(h, "echo(1)", "([1], None)");
  CHECK_RC(pyhost_module_add_function(h, m, "f", NULL, NULL, NULL), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "fn is NULL for f");
  CHECK_RC(pyhost_module_add_function(h, NULL, "f", fn_echo, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_function(h, m, NULL, fn_echo, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_exception(h, m, "E", (pyhost_exc)77, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_remove(h, m, "nothing"), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "app has no host function nothing");
  pyhost_module_free(h, sub);
  pyhost_module_free(h, m);
  CHECK_RC(pyhost_exec(h, "import app", NULL), PYHOST_PYEXC); /* gone from sys.modules */
  CHECK_CONTAINS(pyhost_errmsg(h), "No module named 'app'");
  CHECK_RC(pyhost_module_new(h, "app", NULL, &m), PYHOST_OK); /* the name is free again */
  pyhost_module_free(h, m);
  pyhost_module_free(h, NULL);
  pyhost_free(h);
}

/* A Python function that calls back into C, 50 levels deep: C -> Python -> C -> ... */
static int fn_down(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)kwargs;
  int *deepest = ud;
  int64_t n;
  if (nargs != 1 || pyhost_value_to_int(h, args[0], &n))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "down(n)");
  if (n > *deepest) *deepest = (int)n;
  if (n >= 50) {
    if (pyhost_value_lookup(kwargs, "boom")) return pyhost_raise(h, PYHOST_EXC_KEY_ERROR, "bottom");
    *result = pyhost_value_int(n);
    return PYHOST_OK;
  }
  pyhost_value *next = pyhost_value_int(n + 1);
  const pyhost_value *argv[1] = {next};
  int rc = pyhost_call_namev(h, "py_down", argv, 1, kwargs, result);
  pyhost_value_free(next);
  return rc; /* a failure below propagates as the original exception */
}

TEST_CASE(recursion_50_levels) {
  pyhost *h = start();
  int deepest = 0;
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "rec", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "down", fn_down, &deepest, NULL), PYHOST_OK);
  run(h, "import rec\ndef py_down(n, **kw):\n    return rec.down(n, **kw)\n");
  expect(h, "rec.down(1)", "50");
  CHECK(deepest == 50);
  /* an exception at the bottom comes back up through 50 C frames, type intact */
  run(h, "try:\n    rec.down(1, boom=1)\nexcept KeyError as e:\n    import traceback\n"
         "    tb = [f.name for f in traceback.extract_tb(e.__traceback__)]\n    msg = (type(e).__name__, e.args)\n");
  expect(h, "msg", "('KeyError', ('bottom',))");
  expect(h, "tb.count('py_down')", "49"); /* py_down(2) .. py_down(50), every level kept */
  /* and back to C */
  pyhost_value *one = pyhost_value_int(1), *kw = pyhost_value_dict(), *r = NULL;
  pyhost_value_set(kw, pyhost_value_str("boom", 4), pyhost_value_bool(1));
  const pyhost_value *argv[1] = {one};
  CHECK_RC(pyhost_call_namev(h, "rec.down", argv, 1, kw, &r), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "in py_down");
  CHECK_CONTAINS(pyhost_errmsg(h), "KeyError: 'bottom'");
  pyhost_value_free(one);
  pyhost_value_free(kw);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(unregistered_function_raises) {
  pyhost *h = start();
  int calls = 0;
  pyhost_module *m = make_myapp(h, &calls);
  run(h, "import myapp\nkept_add = myapp.add\nkept_echo = myapp.echo\n");
  CHECK_RC(pyhost_module_remove(h, m, "add"), PYHOST_OK);
  expect(h, "hasattr(myapp, 'add')", "False");
  run(h, "try:\n    kept_add(1, 2)\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.add was unregistered by the host'");
  CHECK(calls == 0);
  CHECK_RC(pyhost_module_remove(h, m, "add"), PYHOST_NOTFOUND);
  /* replacing a function unregisters the old one */
  CHECK_RC(pyhost_module_add_function(h, m, "echo", fn_add, &calls, NULL), PYHOST_OK);
  expect(h, "myapp.echo(1, 1)", "2");
  run(h, "try:\n    kept_echo()\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.echo was unregistered by the host'");
  /* freeing the module unregisters everything; Python's references stay safe */
  run(h, "kept_fail = myapp.fail\n");
  pyhost_module_free(h, m);
  run(h, "try:\n    kept_fail()\nexcept RuntimeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.fail was unregistered by the host'");
  run(h, "del kept_add, kept_echo, kept_fail, myapp\nimport gc\ngc.collect()\n");
  pyhost_free(h);
}

/* ====================================================================== host types */

struct counter {
  int64_t value;
  int *freed;
};

static int counter_ctor(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, void **payload) {
  (void)kwargs;
  int64_t start = 0;
  if (nargs > 1) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Counter(start=0)");
  if (nargs == 1 && pyhost_value_to_int(h, args[0], &start))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Counter(): start: %s", pyhost_errmsg(h));
  if (start < 0) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "Counter(): start must be >= 0");
  struct counter *c = calloc(1, sizeof *c);
  c->value = start;
  c->freed = ud;
  *payload = c;
  return PYHOST_OK;
}

static void counter_dtor(void *payload, void *ud) {
  struct counter *c = payload;
  (void)ud;
  if (!c) return;
  (*c->freed)++;
  free(c);
}

static int counter_incr(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                        size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  (void)kwargs;
  struct counter *c = payload;
  int64_t by = 1;
  if (nargs > 1 || (nargs == 1 && pyhost_value_to_int(h, args[0], &by)))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "incr(by=1)");
  c->value += by;
  *result = pyhost_value_int(c->value);
  return PYHOST_OK;
}

static int counter_call_back(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                             size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)payload;
  (void)ud;
  (void)kwargs;
  if (nargs != 1) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "call_back(f)");
  return pyhost_call(h, args[0], NULL, NULL, result);
}

static int counter_get(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h;
  (void)ud;
  *result = pyhost_value_int(((struct counter *)payload)->value);
  return PYHOST_OK;
}

static int counter_set(pyhost *h, void *payload, void *ud, const pyhost_value *v) {
  (void)ud;
  int64_t i;
  if (pyhost_value_to_int(h, v, &i)) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "value: %s", pyhost_errmsg(h));
  ((struct counter *)payload)->value = i;
  return PYHOST_OK;
}

static int counter_kind(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h;
  (void)payload;
  (void)ud;
  *result = pyhost_value_str("counter", PYHOST_STRLEN);
  return PYHOST_OK;
}

static const pyhost_method_def counter_methods[] = {
    {"incr", counter_incr, "incr(by=1) -> the new value"},
    {"call_back", counter_call_back, NULL},
};
static const pyhost_property_def counter_props[] = {
    {"value", counter_get, counter_set, "the count"},
    {"kind", counter_kind, NULL, NULL},
};

static pyhost_type_spec counter_spec(int *freed, unsigned flags) {
  pyhost_type_spec s = {.size = sizeof s, .name = "Counter", .doc = "A counter in C.",
                        .methods = counter_methods, .n_methods = 2, .properties = counter_props,
                        .n_properties = 2, .constructor = counter_ctor, .destructor = counter_dtor,
                        .userdata = freed, .flags = flags};
  return s;
}

static pyhost_type *make_counter(pyhost *h, pyhost_module **m, int *freed, unsigned flags) {
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, m), PYHOST_OK);
  pyhost_type_spec s = counter_spec(freed, flags);
  CHECK_RC(pyhost_type_new(h, *m, &s, &t), PYHOST_OK);
  run(h, "import myapp, sys, gc");
  return t;
}

/* Frees the type, its module and the handle, in that order. */
static void finish(pyhost *h, pyhost_type *t, pyhost_module *m) {
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(host_type_basics) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, 0);
  expect(h, "myapp.Counter.__name__, myapp.Counter.__module__, myapp.Counter.__doc__",
         "('Counter', 'myapp', 'A counter in C.')");
  run(h, "c = myapp.Counter(5)\n");
  expect(h, "c.incr(), c.incr(10), c.value, c.kind", "(6, 16, 16, 'counter')");
  run(h, "c.value = 100\n");
  expect(h, "c.value", "100");
  expect(h, "myapp.Counter.incr(c, 2)", "102"); /* unbound form */
  expect(h, "myapp.Counter.incr.__doc__, c.incr.__doc__",
         "('incr(by=1) -> the new value', 'incr(by=1) -> the new value')");
  expect(h, "myapp.Counter.value.__doc__", "'the count'");
  expect(h, "c.call_back(lambda: 'from python')", "'from python'");
  /* errors */
  run(h, "try:\n    c.value = 'x'\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'value: expected int, got str'");
  run(h, "try:\n    c.kind = 'x'\nexcept AttributeError as e:\n    msg = 'ro'\n");
  expect(h, "msg", "'ro'");
  run(h, "try:\n    del c.value\nexcept AttributeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "\"cannot delete attribute 'value' of 'myapp.Counter' objects\"");
  run(h, "try:\n    myapp.Counter(-1)\nexcept ValueError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'Counter(): start must be >= 0'");
  run(h, "try:\n    myapp.Counter('a')\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'Counter(): start: expected int, got str'");
  run(h, "try:\n    c.incr(1, 2)\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'incr(by=1)'");
  run(h, "try:\n    myapp.Counter.incr(42)\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "\"myapp.Counter.incr() needs a 'myapp.Counter' object as its first argument\"");
  run(h, "try:\n    c.call_back(lambda: 1/0)\nexcept ZeroDivisionError as e:\n    msg = 'zde'\n");
  expect(h, "msg", "'zde'");
  run(h, "try:\n    type(myapp.Counter.incr)()\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'pyhost method objects cannot be created from Python'");
  CHECK(freed == 0); /* c lives; Counter(-1) and Counter('a') made no payload */
  /* from C: payload, type checks */
  pyhost_value *c = NULL, *one = pyhost_value_int(1);
  void *p = NULL;
  CHECK_RC(pyhost_get_global(h, "c", &c), PYHOST_OK);
  CHECK_STREQ(pyhost_value_type_name(c), "myapp.Counter");
  CHECK_RC(pyhost_object_payload(h, c, t, &p), PYHOST_OK);
  CHECK(p && ((struct counter *)p)->value == 102);
  CHECK_RC(pyhost_object_payload(h, one, t, &p), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "expected myapp.Counter, got int");
  CHECK_RC(pyhost_object_invalidate(h, one, t), PYHOST_TYPE);
  CHECK_RC(pyhost_object_payload(h, NULL, t, &p), PYHOST_MISUSE);
  pyhost_value *cls = NULL;
  CHECK_RC(pyhost_type_value(h, t, &cls), PYHOST_OK);
  pyhost_value *r = NULL;
  const pyhost_value *argv[1] = {one};
  CHECK_RC(pyhost_callv(h, cls, argv, 1, NULL, &r), PYHOST_OK); /* constructed from C via Python */
  CHECK_RC(pyhost_object_payload(h, r, t, &p), PYHOST_OK);
  CHECK(((struct counter *)p)->value == 1);
  pyhost_value_free(r);
  pyhost_value_free(cls);
  pyhost_value_free(one);
  pyhost_value_free(c);
  finish(h, t, m);
}

TEST_CASE(host_type_spec_errors) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_type_new(h, m, NULL, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "spec is NULL");
  pyhost_type_spec s = counter_spec(NULL, 0);
  s.name = "a.b";
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "plain name");
  s = counter_spec(NULL, 0);
  pyhost_method_def bad_m[] = {{"x", NULL, NULL}};
  s.methods = bad_m;
  s.n_methods = 1;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a method has no name or no fn: x");
  s = counter_spec(NULL, 0);
  pyhost_property_def bad_p[] = {{"p", NULL, NULL, NULL}};
  s.properties = bad_p;
  s.n_properties = 1;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "neither get nor set: p");
  s = counter_spec(NULL, 0);
  CHECK_RC(pyhost_type_new(h, NULL, &s, &t), PYHOST_MISUSE);
  CHECK(t == NULL);
  /* no constructor: Python cannot instantiate, the host can */
  s.name = "Opaque";
  s.constructor = NULL;
  s.destructor = NULL;
  s.n_methods = 0;
  s.n_properties = 0;
  s.doc = NULL;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_OK);
  run(h, "import myapp\ntry:\n    myapp.Opaque()\nexcept TypeError as e:\n    msg = str(e)\n");
  expect(h, "msg", "\"cannot create 'myapp.Opaque' instances from Python\"");
  pyhost_value *o = NULL;
  int x = 5;
  CHECK_RC(pyhost_object_new(h, t, &x, &o), PYHOST_OK);
  void *p = NULL;
  CHECK_RC(pyhost_object_payload(h, o, t, &p), PYHOST_OK);
  CHECK(p == &x);
  pyhost_value_free(o);
  CHECK_RC(pyhost_object_new(h, NULL, &x, &o), PYHOST_MISUSE);
  CHECK(o == NULL);
  finish(h, t, m);
}

TEST_CASE(type_spec_size) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  int freed = 0;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_type_spec s = counter_spec(&freed, 0);
  s.size = 0; /* forgot PYHOST_TYPE_SPEC_INIT */
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "spec->size is 0; set it to sizeof(pyhost_type_spec)");
  CHECK(t == NULL);
  /* A caller built against a future, larger header: pyhost reads what it knows. */
  struct { pyhost_type_spec spec; void *future_field; } bigger = {counter_spec(&freed, 0), &s};
  bigger.spec.size = sizeof bigger;
  CHECK_RC(pyhost_type_new(h, m, &bigger.spec, &t), PYHOST_OK);
  run(h, "import myapp\nc = myapp.Counter(4)\nc.incr(3)\n");
  expect(h, "c.value", "7");
  finish(h, t, m);
}

TEST_CASE(instances_100k_flat) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, PYHOST_TYPE_SUBCLASSABLE);
  /* warm up allocator pools and caches first */
  run(h, "for i in range(2000):\n    myapp.Counter(i).incr()\ngc.collect()\n");
  int64_t before = int_of(h, "sys.getrefcount(myapp.Counter)");
  int freed0 = freed;
  long rss0 = rss_bytes();
  run(h, "for i in range(100000):\n    c = myapp.Counter(i)\n    c.incr()\n    c.value\ndel c\n");
  CHECK(freed - freed0 == 100000);
  /* and 100 000 made from C */
  for (int i = 0; i < 100000; i++) {
    struct counter *c = calloc(1, sizeof *c);
    c->freed = &freed;
    pyhost_value *v = NULL;
    if (pyhost_object_new(h, t, c, &v) != PYHOST_OK) {
      CHECK(!"pyhost_object_new");
      break;
    }
    pyhost_value_free(v);
  }
  CHECK(freed - freed0 == 200000);
  run(h, "gc.collect()");
  int64_t after = int_of(h, "sys.getrefcount(myapp.Counter)");
  long rss1 = rss_bytes();
  fprintf(stderr, "refcount(Counter) %lld -> %lld, RSS %ld KiB -> %ld KiB\n", (long long)before,
          (long long)after, rss0 / 1024, rss1 / 1024);
  CHECK(before == after);
  CHECK(rss1 - rss0 < 8L * 1024 * 1024); /* 200 000 leaked instances would be > 10 MiB */
  finish(h, t, m);
}

TEST_CASE(subclassing_per_version) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, PYHOST_TYPE_SUBCLASSABLE);
  if (check_minor() < 8) {
    /* bpo-37879: a subclass would decref the type twice; the type stays final */
    run(h, "try:\n    class Sub(myapp.Counter):\n        pass\nexcept TypeError as e:\n    msg = str(e)\n");
    expect(h, "msg", "\"type 'myapp.Counter' is not an acceptable base type\"");
  } else {
    run(h, "class Sub(myapp.Counter):\n    def twice(self):\n        self.incr()\n        return self.incr()\n");
    expect(h, "Sub(1).twice(), Sub(7).value, isinstance(Sub(), myapp.Counter)", "(3, 7, True)");
    run(h, "gc.collect()\nb1 = sys.getrefcount(myapp.Counter)\nb2 = sys.getrefcount(Sub)\n"
           "for i in range(5000):\n    s = Sub(i)\n    s.extra = [s]\n    s.twice()\n"
           "del s\ngc.collect()\n");
    expect(h, "sys.getrefcount(myapp.Counter) - b1, sys.getrefcount(Sub) - b2", "(0, 0)");
    pyhost_value *s = NULL;
    void *p = NULL;
    run(h, "s = Sub(41)\n");
    CHECK_RC(pyhost_get_global(h, "s", &s), PYHOST_OK);
    CHECK_RC(pyhost_object_payload(h, s, t, &p), PYHOST_OK);
    CHECK(p && ((struct counter *)p)->value == 41);
    pyhost_value_free(s);
  }
  /* without the flag no version allows it */
  pyhost_type_spec spec = counter_spec(&freed, 0);
  spec.name = "Final";
  pyhost_type *final = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec, &final), PYHOST_OK);
  run(h, "try:\n    class F(myapp.Final):\n        pass\nexcept TypeError as e:\n    msg = 'final'\n");
  expect(h, "msg", "'final'");
  pyhost_type_free(h, final);
  finish(h, t, m);
}

TEST_CASE(weakrefs_per_version) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, PYHOST_TYPE_WEAKREF);
  run(h, "import weakref\nc = myapp.Counter(3)\n");
  if (check_minor() >= 9) {
    CHECK(pyhost_type_has_weakrefs(t) == 1);
    run(h, "r = weakref.ref(c)\nassert r() is c\ndel c\n");
    expect(h, "r() is None", "True");
    CHECK(freed == 1);
  } else {
    /* __weaklistoffset__ is ignored by PyType_FromSpec before 3.9 */
    CHECK(pyhost_type_has_weakrefs(t) == 0);
    run(h, "try:\n    weakref.ref(c)\nexcept TypeError as e:\n    msg = str(e)\n");
    expect(h, "msg", "\"cannot create weak reference to 'myapp.Counter' object\"");
  }
  CHECK(pyhost_type_has_weakrefs(NULL) == 0);
  finish(h, t, m);
}

/* A payload that holds a Python object: GC must see through it. */
struct holder {
  pyhost_value *item;
  int *freed;
};

static int holder_ctor(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, void **payload) {
  (void)h;
  (void)args;
  (void)nargs;
  (void)kwargs;
  struct holder *x = calloc(1, sizeof *x);
  x->freed = ud;
  *payload = x;
  return PYHOST_OK;
}

static void holder_dtor(void *payload, void *ud) {
  (void)ud;
  struct holder *x = payload;
  (*x->freed)++;
  pyhost_value_free(x->item);
  free(x);
}

static void holder_traverse(void *payload, void *ud, pyhost_visit visit, void *arg) {
  (void)ud;
  visit(((struct holder *)payload)->item, arg);
}

static int holder_get(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h;
  (void)ud;
  struct holder *x = payload;
  *result = x->item ? pyhost_value_copy(x->item) : NULL;
  return PYHOST_OK;
}

static int holder_set(pyhost *h, void *payload, void *ud, const pyhost_value *v) {
  (void)h;
  (void)ud;
  struct holder *x = payload;
  pyhost_value_free(x->item);
  x->item = pyhost_value_copy(v);
  return PYHOST_OK;
}

TEST_CASE(gc_collects_cycles_through_payloads) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_property_def props[] = {{"item", holder_get, holder_set, NULL}};
  pyhost_type_spec s = {.size = sizeof s, .name = "Holder", .properties = props, .n_properties = 1,
                        .constructor = holder_ctor, .destructor = holder_dtor,
                        .traverse = holder_traverse, .userdata = &freed};
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_OK);
  run(h, "import myapp, gc, sys\nclass Box:\n    pass\n"
         "gc.collect()\nbase = sys.getrefcount(myapp.Holder)\n"
         "for i in range(1000):\n    x = myapp.Holder()\n    b = Box()\n    b.x = x\n    x.item = b\n"
         "del x, b\ngc.collect()\n");
  CHECK(freed == 1000);
  expect(h, "sys.getrefcount(myapp.Holder) - base", "0");
  expect(h, "gc.is_tracked(myapp.Holder())", "True");
  finish(h, t, m);
}

TEST_CASE(invalidated_wrapper_raises) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, 0);
  /* the host owns this C object and hands Python a wrapper */
  struct counter *c = calloc(1, sizeof *c);
  c->freed = &freed;
  c->value = 9;
  pyhost_value *w = NULL;
  CHECK_RC(pyhost_object_new(h, t, c, &w), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "w", w), PYHOST_OK);
  run(h, "m = w.incr\n");
  expect(h, "w.value", "9");
  /* the host destroys its object: invalidate first, then free it */
  CHECK_RC(pyhost_object_invalidate(h, w, t), PYHOST_OK);
  CHECK_RC(pyhost_object_invalidate(h, w, t), PYHOST_OK);
  free(c);
  run(h, "try:\n    w.value\nexcept ReferenceError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'myapp.Counter object was invalidated by the host'");
  run(h, "try:\n    m()\nexcept ReferenceError as e:\n    msg = 'method'\n");
  expect(h, "msg", "'method'");
  run(h, "try:\n    w.value = 3\nexcept ReferenceError as e:\n    msg = 'set'\n");
  expect(h, "msg", "'set'");
  expect(h, "type(w).__name__", "'Counter'"); /* the wrapper itself is still a valid object */
  void *p = (void *)1;
  CHECK_RC(pyhost_object_payload(h, w, t, &p), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "the myapp.Counter object was invalidated by the host");
  CHECK(p == NULL);
  pyhost_value_free(w);
  run(h, "del w, m\n");
  CHECK(freed == 0); /* no destructor for an invalidated payload */
  finish(h, t, m);
}

static int finalize_calls;
static int fn_count(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)h;
  (void)ud;
  (void)args;
  (void)nargs;
  (void)kwargs;
  (void)result;
  finalize_calls++;
  return PYHOST_OK;
}

TEST_CASE(behaviour_at_finalize) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, 0);
  CHECK_RC(pyhost_module_add_function(h, m, "count", fn_count, NULL, NULL), PYHOST_OK);
  /* Python code that runs during finalize calls a host function and a method */
  run(h, "import atexit\nkeep = [myapp.Counter(i) for i in range(10)]\n"
         "def bye():\n    try:\n        myapp.count()\n    except RuntimeError as e:\n"
         "        sys.stderr.write('at exit: %s\\n' % e)\n    try:\n        keep[0].incr()\n"
         "    except RuntimeError as e:\n        sys.stderr.write('at exit: %s\\n' % e)\n"
         "atexit.register(bye)\n");
  expect(h, "myapp.count()", "None");
  CHECK(finalize_calls == 1);
  pyhost_value *w = NULL;
  CHECK_RC(pyhost_eval(h, "keep[1]", &w), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(finalize_calls == 1); /* refused during finalize, never called */
  fprintf(stderr, "destructors run at finalize: %d of 10\n", freed);
  CHECK(freed == 9); /* keep[1] is still held by w, a C value: its payload is never destroyed */
  /* after finalize: every call refuses, handles free only C memory */
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_call_name(h, "len", NULL, NULL, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_function(h, m, "x", fn_count, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_invalidate(h, w, t), PYHOST_MISUSE);
  CHECK_RC(pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "x"), PYHOST_MISUSE);
  pyhost_value_free(w);
  finish(h, t, m);
}

/* ====================================================================== misuse and memory */

static int fn_raise_null(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                         const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  (void)args;
  (void)nargs;
  (void)kwargs;
  (void)result;
  int rc = pyhost_raise_named(h, NULL, "x");
  return rc == PYHOST_MISUSE ? pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "refused") : PYHOST_OK;
}

TEST_CASE(null_arguments_are_misuse) {
  pyhost *h = start();
  int freed = 0;
  pyhost_module *m = NULL;
  pyhost_type *t = make_counter(h, &m, &freed, 0);
  pyhost_value *v = NULL, *one = pyhost_value_int(1);
  CHECK_RC(pyhost_import(h, NULL, &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_import(h, "os", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_resolve(h, NULL, &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_resolve(h, "os", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_getattr(h, NULL, "x", &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_getattr(h, one, NULL, &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_getattr(h, one, "real", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_setattr(h, NULL, "x", one), PYHOST_MISUSE);
  CHECK_RC(pyhost_setattr(h, one, NULL, one), PYHOST_MISUSE);
  CHECK_RC(pyhost_get_global(h, "x", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_set_global(h, NULL, one), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_value(h, m, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_value(h, NULL, &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_value(h, m, NULL, one), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_exception(h, m, NULL, PYHOST_EXC_EXCEPTION, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_remove(h, NULL, "x"), PYHOST_MISUSE);
  CHECK_RC(pyhost_type_value(h, NULL, &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_type_value(h, t, NULL), PYHOST_MISUSE);
  pyhost_type_spec s = counter_spec(&freed, 0);
  CHECK_RC(pyhost_type_new(h, m, &s, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_new(h, t, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_invalidate(h, NULL, t), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_invalidate(h, one, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_payload(h, one, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_function(h, m, "rn", fn_raise_null, NULL, NULL), PYHOST_OK);
  run(h, "try:\n    myapp.rn()\nexcept ValueError as e:\n    msg = str(e)\n");
  expect(h, "msg", "'refused'");
  CHECK_RC(pyhost_import(NULL, "os", &v), PYHOST_MISUSE);
  pyhost_module *none = (pyhost_module *)1;
  CHECK_RC(pyhost_module_new(NULL, "x", NULL, &none), PYHOST_MISUSE);
  CHECK(none == NULL);
  pyhost_value_free(one);
  finish(h, t, m);
}

/* Every allocation pyhost makes in the bridge fails in turn: each call then returns a
 * status (never crashes or leaks), and once allocations work again everything does. */
TEST_CASE(out_of_memory_everywhere) {
  pyhost *h = start();
  int freed = 0, calls = 0;
  run(h, "import gc");
  for (long n = 0; n < 400; n++) {
    pyhost_module *m = NULL;
    pyhost_type *t = NULL;
    pyhost_value *o = NULL, *r = NULL, *a = NULL;
    pyhost__alloc_fail_after(n);
    int rc = pyhost_module_new(h, "oom", NULL, &m);
    if (rc == PYHOST_OK) {
      pyhost_module_add_function(h, m, "add", fn_add, &calls, NULL);
      pyhost_type_spec s = counter_spec(&freed, 0);
      pyhost_type_new(h, m, &s, &t);
      if (t) pyhost_object_new(h, t, NULL, &o);
      a = pyhost_value_list();
      pyhost_value_append(a, pyhost_value_int(2));
      pyhost_value_append(a, pyhost_value_int(3));
      pyhost_call_name(h, "oom.add", a, NULL, &r);
      pyhost_value_free(r);
      r = NULL;
      pyhost_exec(h, "import oom\ntry:\n    oom.add(1, 2)\n    oom.Counter(1).incr()\nexcept Exception:\n    pass\n", NULL);
    } else {
      CHECK(rc == PYHOST_NOMEM || rc == PYHOST_PYEXC);
    }
    long failed = pyhost__alloc_fail_after(-1);
    pyhost_value_free(o);
    pyhost_value_free(a);
    pyhost_type_free(h, t);
    pyhost_module_free(h, m);
    pyhost_exec(h, "gc.collect()", NULL);
    if (failed == 0) { /* every allocation of the sequence has failed once */
      fprintf(stderr, "%ld allocations in the sequence\n", n);
      break;
    }
    CHECK(n < 399);
  }
  /* and everything works again */
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "oom", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "add", fn_add, &calls, NULL), PYHOST_OK);
  expect(h, "__import__('oom').add(2, 3)", "5");
  pyhost_module_free(h, m);
  pyhost_free(h);
}
