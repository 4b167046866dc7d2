/* test_hostile.c: tier 2, code that tries to take the host down.  Each case checks
 * a clear status and message, then that the runtime still works.
 * Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
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
