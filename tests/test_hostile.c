/* test_hostile.c: tier 2, code that tries to take the host down.  Each case checks
 * a clear status and message, then that the runtime still works.
 * Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "core.h" /* white-box: PY.PyErr_Occurred, whether an exception was left set */
#include "check.h"
#include "reliab.h"

static int hostile_inputs; /* printed by each case: the figure the issue asks for */

/* Runs code with exec (or eval), checks the status and that the message holds want. */
static void expect_exec(pyhost *h, const char *code, int status, const char *want) {
  hostile_inputs++;
  int rc = pyhost_exec(h, code, "<hostile>");
  if (rc != status) {
    fprintf(stderr, "exec(%.200s) gave %s, expected %s: %s\n", code, pyhost_status_name(rc),
            pyhost_status_name(status), pyhost_errmsg(h));
    check_failures++;
  }
  if (want) CHECK_CONTAINS(pyhost_errmsg(h), want);
}

static void expect_eval(pyhost *h, const char *expr, int status, const char *want) {
  hostile_inputs++;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  if (rc != status) {
    fprintf(stderr, "eval(%.200s) gave %s, expected %s: %s\n", expr, pyhost_status_name(rc),
            pyhost_status_name(status), pyhost_errmsg(h));
    check_failures++;
  }
  CHECK((v != NULL) == (rc == PYHOST_OK));
  if (want) CHECK_CONTAINS(pyhost_errmsg(h), want);
  pyhost_value_free(v);
}

static void still_works(pyhost *h) {
  reliab_expect_int(h, "6 * 7", 42);
}

static void done(pyhost *h) {
  still_works(h);
  printf("hostile inputs tried: %d\n", hostile_inputs);
  pyhost_free(h);
}

TEST_CASE(exits_of_every_kind) {
  pyhost *h = reliab_start();
  expect_exec(h, "raise SystemExit(7)", PYHOST_EXIT, "exit code 7");
  CHECK(pyhost_exit_code(h) == 7);
  expect_eval(h, "__import__('sys').exit(5)", PYHOST_EXIT, "exit code 5");
  CHECK(pyhost_exit_code(h) == 5);
  expect_exec(h, "class Quit(SystemExit): pass\nraise Quit(9)", PYHOST_EXIT, "exit code 9");
  CHECK(pyhost_exit_code(h) == 9);
  expect_exec(h, "raise SystemExit(1 << 100)", PYHOST_EXIT, NULL);
  expect_exec(h, "raise SystemExit('bye', 2)", PYHOST_EXIT, "exit code 1");
  expect_exec(h, "try:\n    raise SystemExit(3)\nfinally:\n    x = 1", PYHOST_EXIT, "exit code 3");
  /* SystemExit on a Python thread ends that thread only */
  expect_exec(h, "import threading\nt = threading.Thread(target=__import__('sys').exit)\n"
                 "t.start(); t.join()",
              PYHOST_OK, NULL);
  done(h);
}

TEST_CASE(base_exceptions_are_errors) {
  pyhost *h = reliab_start();
  expect_exec(h, "raise KeyboardInterrupt", PYHOST_PYEXC, "KeyboardInterrupt");
  expect_eval(h, "(_ for _ in ()).throw(KeyboardInterrupt('ki'))", PYHOST_PYEXC,
              "KeyboardInterrupt: ki");
  expect_exec(h, "raise GeneratorExit('ge')", PYHOST_PYEXC, "GeneratorExit: ge");
  expect_exec(h, "class Odd(BaseException): pass\nraise Odd('odd one')", PYHOST_PYEXC,
              "Odd: odd one");
  /* exceptions that fight their own formatting */
  expect_exec(h, "class BadStr(Exception):\n    def __str__(self): raise RuntimeError('no')\n"
                 "raise BadStr()",
              PYHOST_PYEXC, "BadStr");
  expect_exec(h, "class NotStr(Exception):\n    def __str__(self): return 42\nraise NotStr()",
              PYHOST_PYEXC, "NotStr");
  expect_exec(h, "class Deep(Exception):\n    def __str__(self): return str(self)\nraise Deep()",
              PYHOST_PYEXC, "Deep");
  expect_exec(h, "e = ValueError('cycle')\ne.__context__ = TypeError('other')\n"
                 "e.__context__.__context__ = e\nraise e",
              PYHOST_PYEXC, "ValueError: cycle");
  expect_exec(h, "raise ValueError('\\udcff lone surrogate')", PYHOST_PYEXC, "ValueError");
  done(h);
}

TEST_CASE(infinite_recursion_is_a_recursion_error) {
  pyhost *h = reliab_start();
  unsigned minor = (unsigned)atoi(strchr(check_version, '.') + 1);
  const char *want = minor >= 5 ? "RecursionError" : "RuntimeError";
  expect_exec(h, "def f(): return f()\nf()", PYHOST_PYEXC, want);
  expect_eval(h, "(lambda g: g(g))(lambda g: g(g))", PYHOST_PYEXC, want);
  expect_exec(h, "class R:\n    def __repr__(self): return repr(self)\nr = R()", PYHOST_OK, NULL);
  /* repr recursing without end, asked by pyhost itself */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "r", &v), PYHOST_OK);
  hostile_inputs++;
  CHECK(pyhost_value_repr(h, v) == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), want);
  pyhost_value_free(v);
  /* a nested result deeper than pyhost converts */
  expect_exec(h, "deep = []\nfor _ in range(100000): deep = [deep]", PYHOST_OK, NULL);
  expect_eval(h, "deep", PYHOST_PYEXC, NULL);
  expect_exec(h, "del deep", PYHOST_OK, NULL);
  /* nesting the parser refuses (no crash at any depth pyhost accepts as source) */
  char *nested = malloc(2 * 5000 + 2);
  memset(nested, '(', 5000);
  memset(nested + 5000, ')', 5000);
  nested[10000] = '\0';
  expect_eval(h, nested, PYHOST_PYEXC, NULL);
  free(nested);
  done(h);
}

TEST_CASE(huge_allocations_are_memory_errors) {
  pyhost *h = reliab_start();
  expect_eval(h, "bytearray(1 << 62)", PYHOST_PYEXC, "MemoryError");
  expect_eval(h, "[0] * (1 << 60)", PYHOST_PYEXC, "MemoryError");
  expect_eval(h, "b'x' * (1 << 62)", PYHOST_PYEXC, NULL);    /* Overflow- or MemoryError */
  expect_exec(h, "x = ' ' * (1 << 62)", PYHOST_PYEXC, NULL);
  expect_eval(h, "len(bytearray(1 << 20))", PYHOST_OK, NULL); /* memory is still there */
  done(h);
}

TEST_CASE(broken_builtins_still_give_messages) {
  pyhost *h = reliab_start();
  expect_exec(h, "import builtins\nsaved_len = builtins.len\ndel builtins.len\nlen('x')",
              PYHOST_PYEXC, "NameError");
  expect_exec(h, "builtins.len = saved_len", PYHOST_OK, NULL);
  /* no __import__: pyhost's traceback formatting cannot import; the short form stays */
  expect_exec(h, "saved_import = builtins.__import__\ndel builtins.__import__", PYHOST_OK, NULL);
  expect_exec(h, "raise ValueError('without import')", PYHOST_PYEXC,
              "ValueError: without import");
  expect_exec(h, "import os", PYHOST_PYEXC, "ImportError");
  expect_exec(h, "builtins.__import__ = saved_import", PYHOST_OK, NULL);
  /* a traceback module that is not one */
  expect_exec(h, "import sys\nsaved_tb = sys.modules['traceback'] if 'traceback' in sys.modules "
                 "else __import__('traceback')\nsys.modules['traceback'] = 42",
              PYHOST_OK, NULL);
  expect_exec(h, "raise KeyError('no traceback module')", PYHOST_PYEXC, "no traceback module");
  expect_exec(h, "sys.modules['traceback'] = saved_tb", PYHOST_OK, NULL);
  /* __main__ without __builtins__: later code still runs (it gets minimal builtins) */
  expect_exec(h, "del __builtins__", PYHOST_OK, NULL);
  expect_eval(h, "1 + 1", PYHOST_OK, NULL);
  expect_exec(h, "raise ValueError('no builtins')", PYHOST_PYEXC, NULL);
  done(h);
}

TEST_CASE(junk_standard_streams) {
  pyhost *h = reliab_start();
  expect_exec(h, "import sys\nsys.stdout = 42\nsys.stderr = None\nprint('lost')", PYHOST_PYEXC,
              "AttributeError");
  expect_exec(h, "raise ValueError('streams are junk')", PYHOST_PYEXC,
              "ValueError: streams are junk");
  expect_exec(h, "sys.stdout = sys.__stdout__\nsys.stderr = sys.__stderr__", PYHOST_OK, NULL);
  /* closed streams: errors still read, and finalize's flush reports, never crashes */
  expect_exec(h, "sys.stdout.close()\nsys.stderr.close()\nprint('x')", PYHOST_PYEXC,
              "closed file");
  expect_exec(h, "raise ValueError('streams are closed')", PYHOST_PYEXC,
              "ValueError: streams are closed");
  still_works(h);
  printf("hostile inputs tried: %d\n", hostile_inputs);
  int rc = pyhost_finalize(h);
  CHECK(rc == PYHOST_OK || rc == PYHOST_ERROR);
  pyhost_free(h);
}

TEST_CASE(bad_bytes_from_c) {
  pyhost *h = reliab_start();
  expect_exec(h, "x = '\xff\xfe'", PYHOST_PYEXC, "SyntaxError");
  expect_eval(h, "'\xc3\x28'", PYHOST_PYEXC, NULL);
  expect_eval(h, "'\xed\xa0\x80'", PYHOST_PYEXC, NULL); /* an encoded surrogate */
  expect_exec(h, "# coding: latin-1\nx = '\xe9'", PYHOST_OK, NULL);
  expect_eval(h, "x == '\\xe9'", PYHOST_OK, NULL);
  expect_exec(h, "# coding: no-such-codec\nx = 1", PYHOST_PYEXC, "SyntaxError");
  /* a file name that is not UTF-8 still names the file */
  hostile_inputs++;
  CHECK_RC(pyhost_exec(h, "raise ValueError('bad name')", "\xff\xfe.py"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "bad name");
  /* strings with NULs and non-UTF-8 bytes coming back from Python */
  pyhost_value *v = NULL;
  const char *s;
  size_t n;
  hostile_inputs++;
  CHECK_RC(pyhost_eval(h, "'a\\0b\\0'", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, v, &s, &n), PYHOST_OK);
  CHECK(n == 4 && memcmp(s, "a\0b\0", 5) == 0);
  pyhost_value_free(v);
  hostile_inputs++;
  CHECK_RC(pyhost_eval(h, "'\\udcff'", &v), PYHOST_PYEXC); /* a lone surrogate is not UTF-8 */
  pyhost_value_free(v);
  hostile_inputs++;
  CHECK_RC(pyhost_eval(h, "b'\\xff\\x00'", &v), PYHOST_OK);
  const void *d;
  CHECK_RC(pyhost_value_to_bytes(h, v, &d, &n), PYHOST_OK);
  CHECK(n == 2 && memcmp(d, "\xff\0", 2) == 0);
  pyhost_value_free(v);
  done(h);
}

TEST_CASE(ten_megabyte_sources) {
  pyhost *h = reliab_start();
  size_t n = 10u << 20;
  char *src = malloc(n + 64);
  /* one 10 MB string literal */
  memcpy(src, "s = '", 5);
  memset(src + 5, 'a', n);
  memcpy(src + 5 + n, "'", 2);
  expect_exec(h, src, PYHOST_OK, NULL);
  reliab_expect_int(h, "len(s)", (int64_t)n);
  pyhost_value *v = NULL;
  const char *s;
  size_t len = 0;
  CHECK_RC(pyhost_eval(h, "s", &v), PYHOST_OK); /* 10 MB back to C */
  CHECK_RC(pyhost_value_to_str(h, v, &s, &len), PYHOST_OK);
  CHECK(len == n && s[n - 1] == 'a');
  pyhost_value_free(v);
  /* 10 MB of comment lines, then an error on the last line */
  for (size_t i = 0; i < n; i += 64) {
    memset(src + i, '#', 63);
    src[i + 63] = '\n';
  }
  strcpy(src + n, "raise ValueError('at the end')\n");
  expect_exec(h, src, PYHOST_PYEXC, "line 163841");
  /* a 10 MB line that is a syntax error */
  memset(src, '1', n);
  strcpy(src + n, " +");
  expect_eval(h, src, PYHOST_PYEXC, "SyntaxError");
  free(src);
  done(h);
}

/* Daemon threads still running at finalize.  From 3.9 until 3.14 made such threads
 * hang (CPython gh-87135), CPython itself can crash a daemon thread that wakes after
 * Py_FinalizeEx freed its thread state (gh-110052: its own
 * test_threading.test_4_daemon_threads crashes the same way): there the test leaves
 * only the thread that finalize waits for, since no host can make that window safe. */
TEST_CASE(threads_left_running_at_finalize) {
  pyhost *h = reliab_start();
  unsigned long v = pyhost_python_version(h) >> 16;
  int daemons_safe = v < 0x0309 || v >= 0x030e;
  expect_exec(h,
              "import threading, time\n"
              "def sleeper():\n"
              "    while True: time.sleep(0.001)\n"
              "def spinner():\n"
              "    n = 0\n"
              "    while True: n += 1\n"
              "def short():\n"
              "    time.sleep(0.05)\n"
              "threading.Thread(target=short).start()\n", /* not daemon: finalize waits */
              PYHOST_OK, NULL);
  if (daemons_safe)
    expect_exec(h,
                "for f in (sleeper, spinner):\n"
                "    threading.Thread(target=f, daemon=True).start()\n",
                PYHOST_OK, NULL);
  still_works(h);
  printf("hostile inputs tried: %d (daemon threads: %s)\n", hostile_inputs,
         daemons_safe ? "yes" : "no, CPython gh-110052");
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost_free(h);
}

TEST_CASE(recursion_through_host_functions) {
  pyhost *h = reliab_start();
  reliab_callback_setup(h);
  /* valgrind runs each level's compile a hundred times slower: a lower limit */
  if (reliab_under_valgrind()) expect_exec(h, "import sys\nsys.setrecursionlimit(150)", PYHOST_OK, NULL);
  /* Python -> C host function -> pyhost_eval -> Python -> ... without end */
  expect_exec(h, "def down(): return reliab.reenter('down()')\ndown()", PYHOST_PYEXC,
              "RecursionError");
  expect_eval(h, "reliab.reenter('reliab.reenter(\"reliab.add(1, 2)\")')", PYHOST_OK, NULL);
  done(h);
}

/* ---- issue 22: Python code that pulls what pyhost holds out from under it ---- */

/* hx.raise_named(name): pyhost_raise_named(name, "from C") */
static int hx_raise_named(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *name;
  if (nargs != 1 || pyhost_value_to_str(h, args[0], &name, NULL))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "raise_named(name) takes a str");
  return pyhost_raise_named(h, name, "from C");
}

/* Runs args[0] (code), then reads keyword 0's name and bytes value through the view
 * into buf as "name=<value>". */
static int hx_read_kw(pyhost *h, const pyhost_args *args, char *buf, size_t cap, size_t *k) {
  const char *code, *name;
  const void *data;
  size_t n, len;
  int rc;
  if ((rc = pyhost_args_str(h, args, 0, &code, NULL)) || (rc = pyhost_exec(h, code, "<hx>")) ||
      (rc = pyhost_args_kwname(h, args, 0, &name, &n)) ||
      (rc = pyhost_args_bytes(h, args, pyhost_args_count(args), &data, &len)))
    return rc;
  *k = (size_t)snprintf(buf, cap, "%.*s=%.*s", (int)n, name, (int)len, (const char *)data);
  return *k < cap ? PYHOST_OK : pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "too long");
}

/* hx.kw(code, **kw) -> "name=<value>", read after code ran */
static int hx_kw(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  char buf[256];
  size_t k;
  int rc = hx_read_kw(h, args, buf, sizeof buf, &k);
  return rc ? rc : pyhost_ret_str(h, ret, buf, k);
}

/* hx.KW(code, **kw): the same in a fast constructor (kept in the payload, read by
 * seen()) and a fast method kw(code, **kw) */
enum { HX_PAYLOAD = 256 };
static int hxt_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  size_t k;
  return hx_read_kw(h, args, *payload, HX_PAYLOAD, &k);
}
static int hxt_kw(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)payload;
  return hx_kw(h, ud, args, ret);
}
static int hxt_seen(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args;
  return pyhost_ret_str(h, ret, payload, strlen(payload));
}
static const pyhost_fast_method_def hxt_methods[] = {{"kw", hxt_kw, NULL}, {"seen", hxt_seen, NULL}};

/* hx.value(x): x through pyhost_args_value and back */
static int hx_value(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  pyhost_value *v = NULL;
  int rc = pyhost_args_value(h, args, 0, &v);
  if (!rc) rc = pyhost_ret_value(h, ret, v);
  pyhost_value_free(v);
  return rc;
}

static pyhost_module *hx_module;

static void hx_setup(pyhost *h) {
  CHECK_RC(pyhost_module_new(h, "hx", NULL, &hx_module), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, hx_module, "raise_named", hx_raise_named, NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, hx_module, "kw", hx_kw, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, hx_module, "value", hx_value, NULL, NULL),
           PYHOST_OK);
  pyhost_type_spec s = {PYHOST_TYPE_SPEC_INIT};
  s.name = "KW";
  s.fast_methods = hxt_methods;
  s.n_fast_methods = sizeof hxt_methods / sizeof hxt_methods[0];
  s.fast_constructor = hxt_new;
  s.payload_size = HX_PAYLOAD;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_type_new(h, hx_module, &s, &t), PYHOST_OK);
  pyhost_type_free(h, t);
  expect_exec(h, "import hx", PYHOST_OK, NULL);
}

/* Defect 2: a class whose __new__ returns no exception was kept as the exception's
 * type (SIGSEGV, or an abort in _PyErr_Restore on the debug builds). */
TEST_CASE(raise_named_with_a_new_that_returns_no_exception) {
  pyhost *h = reliab_start();
  hx_setup(h);
  expect_exec(h,
              "class Weird(Exception):\n"
              "    returns = 42\n"
              "    def __new__(cls, *a):\n"
              "        return cls.returns\n"
              "seen = []\n"
              "for r in (42, None, object(), 'text', Weird):\n"
              "    Weird.returns = r\n"
              "    try:\n"
              "        hx.raise_named('__main__.Weird')\n"
              "    except BaseException as e:\n"
              "        seen.append((type(e).__name__, str(e)))\n",
              PYHOST_OK, NULL);
  reliab_expect_int(h, "len(seen)", 5);
  reliab_expect_int(h, "sum(t == 'TypeError' for t, _ in seen)", 5);
  reliab_expect_int(h, "sum('should have returned an instance of BaseException, not int' in m "
                       "for _, m in seen)", 1);
  reliab_expect_int(h, "sum('not NoneType' in m for _, m in seen)", 1);
  /* a __new__ that does return an instance still raises it */
  expect_exec(h, "Weird.__new__ = lambda cls, *a: ValueError('made by new')\n"
                 "try:\n    hx.raise_named('__main__.Weird')\n"
                 "except ValueError as e:\n    assert str(e) == 'made by new', e\n",
              PYHOST_OK, NULL);
  pyhost_module_free(h, hx_module);
  done(h);
}

/* Defect 3: before 3.9 `f(**D)` hands the caller's own D to the call; the view read it
 * after the callback's Python code cleared it (a NULL name, freed bytes). */
TEST_CASE(kwargs_dict_cleared_during_a_fast_call) {
  pyhost *h = reliab_start();
  hx_setup(h);
  expect_exec(h, "D = {'key': bytes(range(97, 123)) * 3}\n"
                 "r = hx.kw('D.clear(); import gc; gc.collect()', **D)\n"
                 "assert r == 'key=' + 'abcdefghijklmnopqrstuvwxyz' * 3, r\n"
                 "assert D == {}\n"
                 "D = {'other': b'x' * 50}\n"
                 "r = hx.kw('D[\"other\"] = None; D.update((str(i), i) for i in range(100))', **D)\n"
                 "assert r == 'other=' + 'x' * 50, r\n",
              PYHOST_OK, NULL);
  /* a fast host type's constructor and method read their views the same way */
  expect_exec(h, "import gc\n"
                 "D = {'key': bytes(range(97, 123)) * 3}\n"
                 "o = hx.KW('D.clear(); gc.collect()', **D)\n"
                 "assert o.seen() == 'key=' + 'abcdefghijklmnopqrstuvwxyz' * 3, o.seen()\n"
                 "D = {'name': b'y' * 20}\n"
                 "r = o.kw('D.clear(); gc.collect()', **D)\n"
                 "assert r == 'name=' + 'y' * 20, r\n"
                 "D = {'name': b'z' * 20}\n"
                 "r = hx.KW.kw(o, 'D.clear(); gc.collect()', **D)\n"
                 "assert r == 'name=' + 'z' * 20, r\n",
              PYHOST_OK, NULL);
  pyhost_module_free(h, hx_module);
  done(h);
}

/* Defect 4: converting a container ran Python code (the type name of an item) before
 * holding the item; that code could free it. */
static const char replaces_items[] =
    "freed = []\n"
    "class M(type):\n"
    "    def __getattribute__(cls, name):\n"
    "        if name == '__module__':\n"
    "            L[:] = [None] * len(L)\n"
    "            for k in D: D[k] = None\n"
    "        return type.__getattribute__(cls, name)\n"
    "class C(metaclass=M):\n"
    "    def __init__(self, tag): self.tag = tag\n"
    "    def __del__(self): freed.append(self.tag)\n"
    "def fresh():\n"
    "    global L, D\n"
    "    freed.clear()\n"
    "    L, D = [C('L')], {'k': C('D')}\n"
    "    return L, D\n"
    "def keyed():\n"
    "    global L, D\n"
    "    freed.clear()\n"
    "    L, D = [], {C('K'): C('V')}\n"
    "    return D\n";

TEST_CASE(container_items_replaced_while_converting) {
  pyhost *h = reliab_start();
  hx_setup(h);
  expect_exec(h, replaces_items, PYHOST_OK, NULL);
  /* the item converting, the value of a dict entry, the value when its key converts */
  const char *exprs[] = {"fresh()[0]", "fresh()[1]", "keyed()"},
             *tags[] = {"'L' in freed", "'D' in freed", "'V' in freed"};
  for (size_t i = 0; i < 3; i++) {
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_eval(h, exprs[i], &v), PYHOST_OK);
    /* the value holds what it converted: the item lives while the value does */
    CHECK(!reliab_eval_true(h, tags[i]));
    pyhost_value_free(v);
    CHECK(reliab_eval_true(h, tags[i]));
  }
  /* the same through a fast function's argument view */
  expect_exec(h, "r = hx.value(fresh()[0])\nassert type(r[0]) is C and 'L' not in freed, (r, freed)\n"
                 "r = hx.value(fresh()[1])\nassert type(r['k']) is C and 'D' not in freed, (r, freed)\n"
                 "del r\n",
              PYHOST_OK, NULL);
  pyhost_module_free(h, hx_module);
  done(h);
}

/* Defect 8: every failing level of a recursion through host functions formatted the
 * whole traceback (quadratic, with interrupts held off); now only where the error
 * leaves pyhost for the host.  Counted, not timed. */
TEST_CASE(deep_recursion_error_formatted_once) {
  pyhost *h = reliab_start();
  reliab_callback_setup(h);
  if (reliab_under_valgrind()) expect_exec(h, "import sys\nsys.setrecursionlimit(150)", PYHOST_OK, NULL);
  expect_exec(h, "import traceback\n"
                 "formats = [0]\n"
                 "_format = traceback.format_exception\n"
                 "def counting(*a, **k):\n"
                 "    formats[0] += 1\n"
                 "    return _format(*a, **k)\n"
                 "traceback.format_exception = counting\n"
                 "levels = [0]\n"
                 "def down():\n"
                 "    levels[0] += 1\n"
                 "    return reliab.reenter('down()')\n",
              PYHOST_OK, NULL);
  expect_exec(h, "down()", PYHOST_PYEXC, "RecursionError");
  const char *m = pyhost_errmsg(h);
  CHECK_CONTAINS(m, "Traceback (most recent call last)");
  CHECK_CONTAINS(m, "in down");
  int64_t levels = reliab_eval_int(h, "levels[0]");
  printf("levels: %lld, formats: %lld\n", (long long)levels, (long long)reliab_eval_int(h, "formats[0]"));
  CHECK(levels > 50);
  reliab_expect_int(h, "formats[0]", 1);
  /* 2000 levels and more unwind with the exception whole (every level in its
   * traceback), and nothing formats it until it leaves pyhost: caught in Python, never */
  if (!reliab_under_valgrind()) {
    /* the limit that gives about 2010 levels, from the Python frames a level took above
     * (two to four, by version): deeper would overflow the C stack of an ASan build */
    expect_exec(h, "import sys\n"
                   "sys.setrecursionlimit(sys.getrecursionlimit() * 2010 // levels[0] + 50)\n"
                   "formats[0] = levels[0] = 0\n"
                   "try:\n    down()\nexcept RecursionError as e:\n"
                   "    named = sum(f.name == 'down' for f in traceback.extract_tb(e.__traceback__))\n",
                PYHOST_OK, NULL);
    levels = reliab_eval_int(h, "levels[0]");
    printf("deep: levels: %lld, formats: %lld\n", (long long)levels,
           (long long)reliab_eval_int(h, "formats[0]"));
    /* 3.12's C recursion limit (1500 C levels) stops a recursion through C at 750 */
    CHECK(levels >= (strncmp(check_version, "3.12", 4) == 0 ? 700 : 2000));
    CHECK(reliab_eval_true(h, "named == levels[0]"));
    reliab_expect_int(h, "formats[0]", 0);
    expect_exec(h, "sys.setrecursionlimit(1000)", PYHOST_OK, NULL);
  }
  expect_exec(h, "traceback.format_exception = _format", PYHOST_OK, NULL);
  done(h);
}

/* Text of an int value through pyhost_value_to_int_text, in a buffer of the size the
 * first call asks for (own). */
static char *int_text(pyhost *h, const pyhost_value *v) {
  size_t len = 0;
  CHECK_RC(pyhost_value_to_int_text(h, v, NULL, 0, &len), PYHOST_RANGE);
  char *buf = malloc(len + 1);
  size_t len2 = 0;
  CHECK_RC(pyhost_value_to_int_text(h, v, buf, len + 1, &len2), PYHOST_OK);
  CHECK(len2 == len && strlen(buf) == len);
  return buf;
}

/* Defect 9: an int beyond CPython's integer string limit (4300 digits) failed to
 * convert at all; it converts, reads as decimal and goes back to Python intact. */
TEST_CASE(ints_beyond_the_string_limit) {
  pyhost *h = reliab_start();
  const char *exprs[] = {"10**5000", "-(10**5000) - 1", "7**9000", "-(2**70)", "2**64", "-5", "0"};
  expect_exec(h, "import sys\n"
                 "def decimal(x):\n"
                 "    get = getattr(sys, 'get_int_max_str_digits', None)\n"
                 "    if not get: return str(x)\n"
                 "    old = get(); sys.set_int_max_str_digits(0)\n"
                 "    try: return str(x)\n"
                 "    finally: sys.set_int_max_str_digits(old)\n",
              PYHOST_OK, NULL);
  for (size_t i = 0; i < sizeof exprs / sizeof exprs[0]; i++) {
    pyhost_value *v = NULL, *want = NULL;
    char src[64];
    CHECK_RC(pyhost_eval(h, exprs[i], &v), PYHOST_OK);
    CHECK(pyhost_value_kind(v) == PYHOST_KIND_INT);
    snprintf(src, sizeof src, "decimal(%s)", exprs[i]);
    CHECK_RC(pyhost_eval(h, src, &want), PYHOST_OK);
    const char *w = NULL;
    CHECK_RC(pyhost_value_to_str(h, want, &w, NULL), PYHOST_OK);
    char *text = int_text(h, v);
    if (w && strcmp(text, w) != 0) {
      fprintf(stderr, "%s: read %.60s... (%zu), Python says %.60s... (%zu)\n", exprs[i], text,
                      strlen(text), w, strlen(w));
      check_failures++;
    }
    free(text);
    /* and back into Python intact */
    CHECK_RC(pyhost_set_global(h, "back", v), PYHOST_OK);
    snprintf(src, sizeof src, "back == %s", exprs[i]);
    CHECK(reliab_eval_true(h, src));
    pyhost_value_free(want);
    pyhost_value_free(v);
  }
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "10**5000", &v), PYHOST_OK);
  int64_t i64;
  CHECK_RC(pyhost_value_to_int(h, v, &i64), PYHOST_RANGE);
  CHECK_CONTAINS(pyhost_errmsg(h), "does not fit in 64 bits");
  char small[16];
  size_t len;
  CHECK_RC(pyhost_value_to_int_text(h, v, small, sizeof small, &len), PYHOST_RANGE);
  CHECK(len == 5001);
  CHECK_RC(pyhost_value_to_int_text(h, v, small, sizeof small, NULL), PYHOST_MISUSE);
  pyhost_value_free(v);
  v = NULL;
  CHECK_RC(pyhost_eval(h, "'10'", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int_text(h, v, small, sizeof small, &len), PYHOST_TYPE);
  pyhost_value_free(v);
  /* inside containers and as an int subclass whose __str__ lies */
  expect_eval(h, "[10**5000, {'k': -(10**4400)}]", PYHOST_OK, NULL);
  expect_exec(h, "class Liar(int):\n    def __str__(self): return 'not a number'\n", PYHOST_OK, NULL);
  v = NULL;
  CHECK_RC(pyhost_eval(h, "Liar(2**80)", &v), PYHOST_OK);
  char *text = int_text(h, v);
  CHECK(strcmp(text, "1208925819614629174706176") == 0);
  free(text);
  pyhost_value_free(v);
  done(h);
}

/* 1 when no Python exception is pending on this thread: Python's own check, asked
 * inside a GIL scope (the thread state of the calls before). */
static int nothing_pending(pyhost *h) {
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  int clear = PY.PyErr_Occurred() == NULL;
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  return clear;
}

/* Runs code (exec, or eval when it is an expression), which must fail with status, then
 * requires that nothing is left set and that the exception's data reads. */
static void hostile_error(pyhost *h, const char *code, int status, const char *type,
                          const char *text) {
  hostile_inputs++;
  pyhost_value *v = NULL;
  int rc = strchr(code, '\n') || strncmp(code, "raise", 5) == 0 ? pyhost_exec(h, code, "<hostile>")
                                                                 : pyhost_eval(h, code, &v);
  pyhost_value_free(v);
  if (rc != status) {
    fprintf(stderr, "%.300s\ngave %s, expected %s: %s\n", code, pyhost_status_name(rc),
            pyhost_status_name(status), pyhost_errmsg(h));
    check_failures++;
  }
  if (type) CHECK_STREQ(pyhost_errtype(h), type);
  if (text) CHECK_STREQ(pyhost_errtext(h), text);
  size_t n = pyhost_errframe_count(h);
  for (size_t i = 0; i < n; i++) CHECK_RC(pyhost_errframe(h, i, NULL, NULL, NULL), PYHOST_OK);
  if (!nothing_pending(h)) {
    fprintf(stderr, "an exception was left set after:\n%.300s\n", code);
    check_failures++;
  }
  still_works(h); /* on 3.14d and 3.15d a pending exception aborts here */
}

/* Issue 39 defect 6: reading a failed call's exception runs its own code (__str__,
 * __repr__, a metaclass's __getattribute__ or properties), which may raise anything.
 * Whatever it raises, no exception stays set for the host's next call, and pyhost calls
 * no Python API with one set (the debug builds assert both). */
TEST_CASE(formatting_leaves_no_exception_set) {
  pyhost *h = reliab_start();
  reliab_callback_setup(h);
  const char *ki = "    def __str__(self): raise KeyboardInterrupt\n";
  char code[1024];
  snprintf(code, sizeof code, "class E(Exception):\n%sraise E()", ki);
  hostile_error(h, code, PYHOST_PYEXC, "E", "<exception str() failed>");
  hostile_error(h, "class K:\n    def __repr__(self): raise KeyboardInterrupt\nraise KeyError(K())",
                PYHOST_PYEXC, "KeyError", NULL);
  snprintf(code, sizeof code, "class C:\n%sraise SystemExit(C())", ki);
  hostile_error(h, code, PYHOST_EXIT, "SystemExit", NULL);
  hostile_error(h, "class Q(SystemExit):\n    @property\n    def code(self): raise KeyboardInterrupt\n"
                   "raise Q(4)",
                PYHOST_EXIT, "Q", NULL);
  /* the type's names: a metaclass that refuses them, a property, a name not a str */
  static const char meta_ga[] =
      "class M(type):\n"
      "    def __getattribute__(cls, n):\n"
      "        if n in ('__module__', '__qualname__', '__name__'): raise KeyboardInterrupt\n"
      "        return type.__getattribute__(cls, n)\n";
  snprintf(code, sizeof code, "%sclass Nameless(Exception, metaclass=M): pass\nraise Nameless('x')", meta_ga);
  hostile_error(h, code, PYHOST_PYEXC, "<unknown type>", "x");
  hostile_error(h, "class P(type):\n    @property\n    def __module__(cls): raise KeyboardInterrupt\n"
                   "class PE(Exception, metaclass=P): pass\nraise PE('p')",
                PYHOST_PYEXC, "PE", NULL);
  hostile_error(h, "class N(Exception): pass\nN.__module__ = 42\nraise N('n')", PYHOST_PYEXC, "N", NULL);
  /* a SyntaxError whose fields raise; notes that raise (3.11+ formats them) */
  hostile_error(h, "class S(SyntaxError):\n    @property\n    def msg(self): raise KeyboardInterrupt\n"
                   "    @property\n    def lineno(self): raise KeyboardInterrupt\n"
                   "    @property\n    def filename(self): raise KeyboardInterrupt\nraise S('s')",
                PYHOST_PYEXC, "S", NULL);
  hostile_error(h, "class T(Exception):\n    def __getattribute__(self, n):\n"
                   "        if n in ('__notes__', 'args', '__cause__', '__context__'): raise KeyboardInterrupt\n"
                   "        return Exception.__getattribute__(self, n)\nraise T('t')",
                PYHOST_PYEXC, "T", NULL);
  /* __str__ giving a str subclass with hostile methods of its own */
  snprintf(code, sizeof code, "class U(str):\n%s    def __len__(self): raise KeyboardInterrupt\n"
                              "class UE(Exception):\n    def __str__(self): return U('sub')\nraise UE()", ki);
  hostile_error(h, code, PYHOST_PYEXC, "UE", "sub");
  /* the same exceptions raised through a host callback (the short form inside it) */
  CHECK_RC(pyhost_exec(h, meta_ga, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "class Nameless(Exception, metaclass=M): pass\n"
                          "def hostile(): raise Nameless('deep')\n"
                          "class BadStr(Exception):\n" "    def __str__(self): raise KeyboardInterrupt\n"
                          "def badstr(): raise BadStr()\n",
                       NULL),
           PYHOST_OK);
  hostile_error(h, "reliab.reenter('hostile()')", PYHOST_PYEXC, "<unknown type>", NULL);
  hostile_error(h, "reliab.reenter('badstr()')", PYHOST_PYEXC, "BadStr", NULL);
  /* converting and repr: a value whose type's names raise, a repr that raises */
  CHECK_RC(pyhost_exec(h, "class Obj(metaclass=M): pass\n"
                          "class R:\n    def __repr__(self): raise KeyboardInterrupt\n",
                       NULL),
           PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "Obj()", &v), PYHOST_OK);
  CHECK(nothing_pending(h));
  CHECK_STREQ(pyhost_value_type_name(v), "<unknown type>");
  pyhost_value_free(v);
  v = NULL;
  CHECK_RC(pyhost_eval(h, "R()", &v), PYHOST_OK);
  CHECK(pyhost_value_repr(h, v) == NULL);
  CHECK_STREQ(pyhost_errtype(h), "KeyboardInterrupt");
  CHECK(nothing_pending(h));
  pyhost_value_free(v);
  done(h);
}
