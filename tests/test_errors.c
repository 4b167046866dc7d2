/* test_errors.c: errors as data (pyhost_errtype, pyhost_errtext, pyhost_errframe) on
 * every Python of the matrix, checked against what Python itself says: the last line
 * of its traceback and traceback.extract_tb.  Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* Python's own view of a failure, for the cases to compare with: extracted(src, file)
 * runs src as pyhost_exec does and gives traceback.extract_tb's (file, line, function)
 * of what it raised, from the code's own frame on; called(f, *a) the same for a call
 * from C, from f's frame on. */
static const char oracle[] =
    "import traceback\n"
    "def _entries(e, skip):\n"
    "    return [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(e.__traceback__)][skip:]\n"
    "def extracted(src, file):\n"
    "    try: exec(compile(src, file, 'exec'), {'__name__': '__main__'})\n"
    "    except BaseException as e: return _entries(e, 1)\n"
    "def called(f, *a):\n"
    "    try: f(*a)\n"
    "    except BaseException as e: return _entries(e, 1)\n";

static pyhost *start(void) {
  pyhost *h = check_start(NULL);
  CHECK_RC(pyhost_exec(h, oracle, "<oracle>"), PYHOST_OK);
  return h;
}

/* The frames pyhost_errframe gives for the last call, as a list of (file, line,
 * function) tuples (own).  Read before any other call on h. */
static pyhost_value *frames_of(pyhost *h) {
  pyhost_value *list = pyhost_value_list();
  size_t n = pyhost_errframe_count(h);
  for (size_t i = 0; i < n; i++) {
    const char *file = NULL, *function = NULL;
    int line = -1;
    CHECK_RC(pyhost_errframe(h, i, &file, &line, &function), PYHOST_OK);
    pyhost_value *t = pyhost_value_tuple();
    pyhost_value_append(t, pyhost_value_str(file, PYHOST_STRLEN));
    pyhost_value_append(t, pyhost_value_int(line));
    pyhost_value_append(t, pyhost_value_str(function, PYHOST_STRLEN));
    pyhost_value_append(list, t);
  }
  const char *file = "untouched";
  int line = -7;
  CHECK_RC(pyhost_errframe(h, n, &file, &line, NULL), PYHOST_RANGE);
  CHECK(strcmp(file, "untouched") == 0 && line == -7);
  return list;
}

/* 1 when the frames (own) equal what Python evaluates `want` to; says both otherwise. */
static int same_frames(pyhost *h, pyhost_value *frames, const char *want, int line) {
  CHECK_RC(pyhost_set_global(h, "got", frames), PYHOST_OK);
  pyhost_value_free(frames);
  char expr[1024];
  snprintf(expr, sizeof expr, "got == (%s)", want);
  pyhost_value *v = NULL;
  int same = 0;
  if (pyhost_eval(h, expr, &v) == PYHOST_OK) pyhost_value_to_bool(h, v, &same);
  pyhost_value_free(v);
  if (!same) {
    snprintf(expr, sizeof expr, "'got  %%r\\nwant %%r' %% (got, %s)", want);
    v = NULL;
    pyhost_eval(h, expr, &v);
    const char *s = "?";
    pyhost_value_to_str(h, v, &s, NULL);
    fprintf(stderr, "test_errors.c:%d: frames differ:\n%s\n", line, s);
    pyhost_value_free(v);
    check_failures++;
  }
  return same;
}
#define SAME_FRAMES(h, frames, want) same_frames(h, frames, want, __LINE__)

/* Sets global `src` to code (a str) for the oracle. */
static void set_src(pyhost *h, const char *code) {
  pyhost_value *s = pyhost_value_str(code, PYHOST_STRLEN);
  CHECK_RC(pyhost_set_global(h, "src", s), PYHOST_OK);
  pyhost_value_free(s);
}

/* exec code as file: the status, type and text, and the frames against Python's own. */
static void exec_as_python_says(pyhost *h, const char *code, const char *file, int status,
                                const char *type, const char *text) {
  CHECK_RC(pyhost_exec(h, code, file), status);
  CHECK_STREQ(pyhost_errtype(h), type);
  if (text) CHECK_STREQ(pyhost_errtext(h), text);
  pyhost_value *frames = frames_of(h);
  set_src(h, code);
  char want[256];
  snprintf(want, sizeof want, "extracted(src, '%s')", file);
  SAME_FRAMES(h, frames, want);
}

TEST_CASE(exception_type_text_and_frames) {
  pyhost *h = start();
  const char *code = "def inner():\n    raise KeyError('k')\ndef outer():\n    inner()\nouter()\n";
  CHECK_RC(pyhost_exec(h, code, "tb.py"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "KeyError");
  CHECK_STREQ(pyhost_errtext(h), "'k'");
  CHECK(pyhost_errframe_count(h) == 3);
  const char *file = NULL, *fn = NULL;
  int line = 0;
  CHECK_RC(pyhost_errframe(h, 0, &file, &line, &fn), PYHOST_OK);
  CHECK_STREQ(file, "tb.py");
  CHECK(line == 5);
  CHECK_STREQ(fn, "<module>");
  CHECK_RC(pyhost_errframe(h, 2, &file, &line, &fn), PYHOST_OK);
  CHECK(line == 2);
  CHECK_STREQ(fn, "inner");
  CHECK_RC(pyhost_errframe(h, 1, NULL, &line, NULL), PYHOST_OK); /* outputs may be NULL */
  CHECK(line == 4);
  /* the message is what it was: the formatted traceback */
  CHECK_CONTAINS(pyhost_errmsg(h), "File \"tb.py\", line 2, in inner");
  exec_as_python_says(h, code, "tb.py", PYHOST_PYEXC, "KeyError", "'k'");
  /* a call from C: the frames start in the callee, down into the standard library */
  CHECK_RC(pyhost_exec(h, "import json\ndef parse(t):\n    return json.loads(t)\n", "parse.py"), PYHOST_OK);
  pyhost_value *arg = pyhost_value_str("{oops", PYHOST_STRLEN), *r = NULL;
  CHECK_RC(pyhost_call_namev(h, "parse", (const pyhost_value *const *)&arg, 1, NULL, &r), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "json.decoder.JSONDecodeError");
  CHECK_CONTAINS(pyhost_errtext(h), "line 1 column 2 (char 1)");
  CHECK(strstr(pyhost_errtext(h), "Traceback") == NULL && strstr(pyhost_errtext(h), "JSONDecodeError") == NULL);
  CHECK(pyhost_errframe_count(h) >= 3);
  SAME_FRAMES(h, frames_of(h), "called(parse, '{oops')");
  pyhost_value_free(arg);
  /* a failed eval */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1 / 0", &v), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "ZeroDivisionError");
  CHECK(pyhost_errframe_count(h) == 1);
  pyhost_free(h);
}

/* The type as the traceback's last line names it, and that line is "type: text". */
TEST_CASE(type_names_as_python_prints_them) {
  pyhost *h = start();
  static const struct {
    const char *code, *type;
  } cases[] = {
      {"raise ValueError('v')", "ValueError"},
      {"class E(Exception): pass\nraise E('e')", "E"},
      {"class Outer:\n    class Inner(Exception): pass\nraise Outer.Inner('i')", "Outer.Inner"},
      {"import json\njson.loads('x')", "json.decoder.JSONDecodeError"},
      {"class E(Exception): pass\nE.__module__ = 'pkg.mod'\nraise E('m')", "pkg.mod.E"},
      {"raise KeyboardInterrupt", "KeyboardInterrupt"},
      {"import os\nos.stat('/nonexistent/pyhost-x')", "FileNotFoundError"},
      {"raise ValueError()", "ValueError"},
      {"raise ValueError('two\\nlines')", "ValueError"},
      {"class E(Exception):\n    def __str__(self): return 'custom'\nraise E(1, 2)", "E"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    CHECK_RC(pyhost_exec(h, cases[i].code, "names.py"), PYHOST_PYEXC);
    CHECK_STREQ(pyhost_errtype(h), cases[i].type);
    char last[1024];
    const char *text = pyhost_errtext(h);
    snprintf(last, sizeof last, text[0] ? "%s: %s" : "%s%s", pyhost_errtype(h), text);
    const char *m = pyhost_errmsg(h);
    size_t lm = strlen(m), ll = strlen(last);
    if (lm < ll || strcmp(m + lm - ll, last) != 0 || (lm > ll && m[lm - ll - 1] != '\n')) {
      fprintf(stderr, "case %zu: the message does not end with the line \"%s\":\n%s\n", i, last, m);
      check_failures++;
    }
  }
  pyhost_free(h);
}

TEST_CASE(texts_of_odd_exceptions) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "raise ValueError()", NULL), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtext(h), "");
  CHECK_RC(pyhost_exec(h, "class BadStr(Exception):\n    def __str__(self): raise RuntimeError('no')\nraise BadStr()", NULL),
           PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "BadStr");
  CHECK_STREQ(pyhost_errtext(h), "<exception str() failed>");
  CHECK(pyhost_errframe_count(h) == 1);
  CHECK_RC(pyhost_exec(h, "raise ValueError('\\udcff lone')", NULL), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtext(h), "\\udcff lone");
  /* a long text keeps its start and its end, as messages do */
  CHECK_RC(pyhost_exec(h, "raise ValueError('<' + 'x' * 1000000 + '>')", NULL), PYHOST_PYEXC);
  const char *t = pyhost_errtext(h);
  size_t n = strlen(t);
  CHECK(n > 60000 && n < 70000);
  CHECK(t[0] == '<' && t[n - 1] == '>');
  CHECK_CONTAINS(t, "bytes cut");
  /* an exception raised before any Python code ran: no frames */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "undefined_name_xyz", &v), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "NameError");
  CHECK_RC(pyhost_get_global(h, "undefined_name_xyz", &v), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "NameError");
  CHECK(pyhost_errframe_count(h) == 0);
  pyhost_free(h);
}

/* pyhost's own errors, success, NULL and the range of the frames. */
TEST_CASE(no_exception_no_data) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "x = 1", NULL), PYHOST_OK);
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK_STREQ(pyhost_errtext(h), "not an error");
  CHECK(pyhost_errframe_count(h) == 0);
  CHECK_RC(pyhost_errframe(h, 0, NULL, NULL, NULL), PYHOST_RANGE);
  /* a failure of pyhost's own: the text is the message */
  pyhost_value *v = pyhost_value_str("s", 1);
  int64_t i;
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK_STREQ(pyhost_errtext(h), pyhost_errmsg(h));
  CHECK_CONTAINS(pyhost_errtext(h), "expected int");
  pyhost_value_free(v);
  /* an exception, then a call that succeeds: the data goes with the message */
  CHECK_RC(pyhost_exec(h, "1/0", NULL), PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 1);
  CHECK_RC(pyhost_exec(h, "x = 2", NULL), PYHOST_OK);
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK(pyhost_errframe_count(h) == 0);
  /* an exception, then pyhost's own error: no stale exception data */
  CHECK_RC(pyhost_exec(h, "1/0", NULL), PYHOST_PYEXC);
  CHECK_RC(pyhost_exec(h, NULL, NULL), PYHOST_MISUSE);
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK(pyhost_errframe_count(h) == 0);
  CHECK_STREQ(pyhost_errtext(h), pyhost_errmsg(h));
  CHECK_STREQ(pyhost_errtype(NULL), "");
  CHECK_STREQ(pyhost_errtext(NULL), "no pyhost handle (NULL)");
  CHECK(pyhost_errframe_count(NULL) == 0);
  CHECK_RC(pyhost_errframe(NULL, 0, NULL, NULL, NULL), PYHOST_MISUSE);
  pyhost_free(h);
}

TEST_CASE(syntax_errors_end_with_their_place) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "x = 1\ny = (1,\n", "syn.py"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "SyntaxError");
  /* the msg alone, as the traceback's last line shows it */
  CHECK(strstr(pyhost_errtext(h), "syn.py") == NULL);
  char last[512];
  snprintf(last, sizeof last, "SyntaxError: %s", pyhost_errtext(h));
  CHECK_CONTAINS(pyhost_errmsg(h), last);
  CHECK(pyhost_errframe_count(h) == 1);
  const char *file = NULL, *fn = NULL;
  int line = 0;
  CHECK_RC(pyhost_errframe(h, 0, &file, &line, &fn), PYHOST_OK);
  CHECK_STREQ(file, "syn.py");
  CHECK(line == 2 || line == 3); /* where the parser stopped: the version decides */
  CHECK_STREQ(fn, "");
  /* raised by compile() in running code: the frames that called it, then its place */
  CHECK_RC(pyhost_exec(h, "def build():\n    compile('def f(:\\n', 'inner.py', 'exec')\nbuild()\n", "outer.py"),
           PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 3);
  CHECK_RC(pyhost_errframe(h, 1, &file, &line, &fn), PYHOST_OK);
  CHECK_STREQ(file, "outer.py");
  CHECK(line == 2);
  CHECK_STREQ(fn, "build");
  CHECK_RC(pyhost_errframe(h, 2, &file, &line, &fn), PYHOST_OK);
  CHECK_STREQ(file, "inner.py");
  CHECK(line == 1);
  CHECK_STREQ(fn, "");
  /* raised by hand: no place of its own, no frame for it; a line Python knows none
   * of (None, beyond an int) is 0 */
  CHECK_RC(pyhost_exec(h, "raise SyntaxError('no place')\n", "bare.py"), PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 1);
  static const char *const unknown_lines[] = {"None", "2 ** 40", "'7'"};
  for (size_t i = 0; i < sizeof unknown_lines / sizeof *unknown_lines; i++) {
    char code[128];
    snprintf(code, sizeof code, "raise SyntaxError('m', ('s.py', %s, 1, 'x'))\n", unknown_lines[i]);
    CHECK_RC(pyhost_exec(h, code, "unknown.py"), PYHOST_PYEXC);
    CHECK(pyhost_errframe_count(h) == 2);
    line = -1;
    CHECK_RC(pyhost_errframe(h, 1, &file, &line, &fn), PYHOST_OK);
    CHECK_STREQ(file, "s.py");
    CHECK(line == 0);
  }
  CHECK_RC(pyhost_exec(h, "if True:\nx = 1\n", "indent.py"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "IndentationError");
  pyhost_free(h);
}

TEST_CASE(system_exit_as_data) {
  pyhost *h = start();
  exec_as_python_says(h, "import sys\ndef bye():\n    sys.exit(3)\nbye()\n", "exit.py", PYHOST_EXIT,
                      "SystemExit", "3");
  CHECK(pyhost_exit_code(h) == 3);
  CHECK_RC(pyhost_exec(h, "raise SystemExit", NULL), PYHOST_EXIT);
  CHECK_STREQ(pyhost_errtype(h), "SystemExit");
  CHECK_STREQ(pyhost_errtext(h), "");
  CHECK_RC(pyhost_exec(h, "class Quit(SystemExit): pass\nraise Quit('bye')", NULL), PYHOST_EXIT);
  CHECK_STREQ(pyhost_errtype(h), "Quit");
  CHECK_STREQ(pyhost_errtext(h), "bye");
  pyhost_free(h);
}

TEST_CASE(chained_exceptions_give_the_last) {
  pyhost *h = start();
  const char *code = "def low():\n    1 / 0\ntry:\n    low()\nexcept Exception as e:\n"
                     "    raise ValueError('wrapped') from e\n";
  CHECK_RC(pyhost_exec(h, code, "chain.py"), PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 1);
  CHECK_CONTAINS(pyhost_errmsg(h), "ZeroDivisionError"); /* the chain is in the text */
  exec_as_python_says(h, code, "chain.py", PYHOST_PYEXC, "ValueError", "wrapped");
  exec_as_python_says(h, "try:\n    {}['k']\nexcept KeyError:\n    None.attr\n", "context.py", PYHOST_PYEXC,
                      "AttributeError", NULL);
  pyhost_free(h);
}

TEST_CASE(recursion_error_frames) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "import sys\nsys.setrecursionlimit(200)", NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "def f(n):\n    return f(n + 1)\nf(0)\n", "rec.py"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), check_minor() >= 5 ? "RecursionError" : "RuntimeError");
  size_t n = pyhost_errframe_count(h);
  printf("frames: %zu\n", n);
  CHECK(n > 150 && n <= 200); /* every level, up to the limit */
  /* one module frame, then f's on line 2: the strings of a code object seen before are
   * shared, never mixed up with another's */
  pyhost_value *frames = frames_of(h);
  SAME_FRAMES(h, frames, "[('rec.py', 3, '<module>')] + [('rec.py', 2, 'f')] * (len(got) - 1)");
  pyhost_free(h);
}

/* ---- host callbacks ---- */

static char inner_type[64], inner_text[64];
static size_t inner_frames = 99;

static int raise_value_error(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                             const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "bad size %d", 5);
}

/* A pyhost call that fails inside the callback: its data is read there, then the
 * exception goes on into Python. */
static int nested_failure(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  int rc = pyhost_exec(h, "def deep():\n    1 / 0\ndeep()\n", "nested.py");
  snprintf(inner_type, sizeof inner_type, "%s", pyhost_errtype(h));
  snprintf(inner_text, sizeof inner_text, "%s", pyhost_errtext(h));
  inner_frames = pyhost_errframe_count(h);
  return rc;
}

static int stop(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  return pyhost_interrupt(h);
}

TEST_CASE(host_callbacks_and_interrupts_as_data) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "app", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "bad", raise_value_error, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "nested", nested_failure, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "stop", stop, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import app\ndef use():\n    app.bad()\nuse()\n", "cb.py"), PYHOST_PYEXC);
  CHECK(pyhost_errframe_count(h) == 2);
  exec_as_python_says(h, "import app\ndef use():\n    app.bad()\nuse()\n", "cb.py", PYHOST_PYEXC,
                      "ValueError", "bad size 5");
  /* inside the callback: type and text, no frames; outside: the whole way down */
  CHECK_RC(pyhost_exec(h, "import app\napp.nested()\n", "cb2.py"), PYHOST_PYEXC);
  CHECK_STREQ(inner_type, "ZeroDivisionError");
  CHECK_STREQ(inner_text, "division by zero");
  CHECK(inner_frames == 0);
  CHECK_STREQ(pyhost_errtype(h), "ZeroDivisionError");
  CHECK_STREQ(pyhost_errtext(h), "division by zero");
  pyhost_value *frames = frames_of(h);
  SAME_FRAMES(h, frames, "[('cb2.py', 2, '<module>'), ('nested.py', 3, '<module>'), ('nested.py', 2, 'deep')]");
  /* pyhost_interrupt: where the loop was stopped */
  CHECK_RC(pyhost_exec(h, "import app\ndef spin():\n    app.stop()\n    while True: pass\nspin()\n", "spin.py"),
           PYHOST_INTERRUPTED);
  CHECK_STREQ(pyhost_errtype(h), "pyhost.Interrupted");
  size_t n = pyhost_errframe_count(h);
  const char *file = NULL, *fn = NULL;
  CHECK(n == 2);
  CHECK_RC(pyhost_errframe(h, n - 1, &file, NULL, &fn), PYHOST_OK);
  CHECK_STREQ(file, "spin.py");
  CHECK_STREQ(fn, "spin");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Failures inside a callback that the callback or its Python caller handled: they are
 * the callback's business.  The call that leaves pyhost answers for itself, so after
 * one that succeeded there is no message and no exception data (pyhost.h: "" and
 * "not an error" after success), also inside a GIL scope and through a prepared call. */
static int swallow(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  pyhost_value *s = pyhost_value_str("s", 1);
  int64_t i;
  int rc = pyhost_value_to_int(h, s, &i); /* pyhost's own error: a message, no exception */
  pyhost_value_free(s);
  if (rc != PYHOST_TYPE) return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "to_int: %d", rc);
  return pyhost_exec(h, "1 / 0", "inner.py") == PYHOST_PYEXC ? PYHOST_OK : PYHOST_ERROR;
}

static void no_data_after_success(pyhost *h, int rc, int line) {
  if (rc != PYHOST_OK || strcmp(pyhost_errmsg(h), "not an error") != 0 || pyhost_errtype(h)[0] ||
      pyhost_errframe_count(h) != 0) {
    fprintf(stderr, "test_errors.c:%d: %s, then message \"%.200s\", type \"%s\", %zu frames\n",
            line, pyhost_status_name(rc), pyhost_errmsg(h), pyhost_errtype(h),
            pyhost_errframe_count(h));
    check_failures++;
  }
}

TEST_CASE(no_stale_data_after_handled_failures_in_callbacks) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "app", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "swallow", swallow, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "nested", nested_failure, NULL, NULL), PYHOST_OK);
  const char *caught = "import app\ntry:\n    app.nested()\nexcept ZeroDivisionError:\n    pass\n";
  no_data_after_success(h, pyhost_exec(h, "import app\napp.swallow()\n", "s.py"), __LINE__);
  no_data_after_success(h, pyhost_exec(h, caught, "c.py"), __LINE__);
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_prepare_name(h, "app.swallow", &c), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  no_data_after_success(h, pyhost_exec(h, caught, "c.py"), __LINE__);
  no_data_after_success(h, pyhost_prepared_call(h, c, NULL, 0), __LINE__);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  no_data_after_success(h, pyhost_prepared_call(h, c, NULL, 0), __LINE__);
  /* a failure of the outer call is still its own */
  CHECK_RC(pyhost_exec(h, "import app\napp.nested()\n", "n.py"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "ZeroDivisionError");
  pyhost_callable_free(c);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- plugins: the frames start in the plugin's file ---- */

static char dir[256];

static const char *put(const char *rel, const char *text) {
  static char path[4][512];
  static int next;
  char *p = path[next++ % 4];
  snprintf(p, 512, "%s/%s", dir, rel);
  char *slash = strrchr(p, '/');
  *slash = '\0';
  mkdir(p, 0700);
  *slash = '/';
  FILE *f = fopen(p, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(p);
    exit(1);
  }
  return p;
}

static void first_frame_is(pyhost *h, const char *file, int line, const char *function) {
  const char *f = NULL, *fn = NULL;
  int l = 0;
  CHECK(pyhost_errframe_count(h) >= 1);
  CHECK_RC(pyhost_errframe(h, 0, &f, &l, &fn), PYHOST_OK);
  CHECK_STREQ(f, file);
  CHECK(l == line);
  CHECK_STREQ(fn, function);
}

TEST_CASE(plugin_errors_start_in_the_plugin) {
  pyhost *h = start();
  snprintf(dir, sizeof dir, "%s/pyhost-errors-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(1);
  }
  const char *hooks = put("hooks.py", "import json\n\ndef parse(text):\n    return json.loads(text)\n\n"
                                      "def name():\n    return 'n'\n");
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_load(h, hooks, &p), PYHOST_OK);
  pyhost_value *args = pyhost_value_list(), *r = NULL;
  pyhost_value_append(args, pyhost_value_str("[1,", PYHOST_STRLEN));
  CHECK_RC(pyhost_plugin_call(h, p, "parse", args, NULL, &r), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "json.decoder.JSONDecodeError");
  CHECK(strstr(pyhost_errtext(h), "plugin") == NULL);
  first_frame_is(h, hooks, 4, "parse");
  double d;
  CHECK_RC(pyhost_plugin_callf(h, p, "parse", "s>d", "{", &d), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "json.decoder.JSONDecodeError");
  first_frame_is(h, hooks, 4, "parse");
  /* a result of the wrong type names the call, the plugin and the hook */
  CHECK_RC(pyhost_plugin_callf(h, p, "name", ">d", &d), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "pyhost_plugin_callf: plugin hooks: hook name: the result: expected float, got str");
  CHECK_STREQ(pyhost_errtype(h), "");
  /* a hook called with a missing argument: raised by the call itself, no frame */
  CHECK_RC(pyhost_plugin_call(h, p, "parse", NULL, NULL, &r), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "TypeError");
  CHECK(pyhost_errframe_count(h) == 0);
  CHECK_RC(pyhost_plugin_call(h, p, "nope", NULL, NULL, &r), PYHOST_NOHOOK);
  CHECK_STREQ(pyhost_errtype(h), "");
  pyhost_plugin_unload(p);
  pyhost_value_free(args);
  /* load errors: raised at import, in a sibling it imports, a syntax error */
  const char *boom = put("boom.py", "x = 1\nraise RuntimeError('at import')\n");
  CHECK_RC(pyhost_plugin_load(h, boom, &p), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "RuntimeError");
  CHECK_STREQ(pyhost_errtext(h), "at import");
  CHECK(pyhost_errframe_count(h) == 1);
  first_frame_is(h, boom, 2, "<module>");
  const char *init = put("pkg/__init__.py", "from . import helper\n");
  const char *helper = put("pkg/helper.py", "def f():\n    raise ValueError('in helper')\nf()\n");
  char pkg[512];
  snprintf(pkg, sizeof pkg, "%s/pkg", dir);
  CHECK_RC(pyhost_plugin_load(h, pkg, &p), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "ValueError");
  first_frame_is(h, init, 1, "<module>");
  const char *f = NULL;
  CHECK_RC(pyhost_errframe(h, pyhost_errframe_count(h) - 1, &f, NULL, NULL), PYHOST_OK);
  CHECK_STREQ(f, helper);
  const char *bad = put("bad.py", "x = 1\ndef f(:\n    pass\n");
  CHECK_RC(pyhost_plugin_load(h, bad, &p), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "SyntaxError");
  CHECK(pyhost_errframe_count(h) == 1);
  first_frame_is(h, bad, 2, "");
  char code[512];
  snprintf(code, sizeof code, "import shutil\nshutil.rmtree(r'%s')", dir);
  CHECK_RC(pyhost_exec(h, code, NULL), PYHOST_OK);
  pyhost_free(h);
}

/* ---- threads: each reads its own ---- */

static pyhost *shared_h;
static pthread_barrier_t failed_both;

static void *fail_and_read(void *arg) {
  const char *expr = arg;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(shared_h, expr, &v);
  pthread_barrier_wait(&failed_both); /* both have failed before either reads */
  static char out[2][64];
  char *o = out[expr[0] == '1'];
  snprintf(o, 64, "%s %s %s", pyhost_status_name(rc), pyhost_errtype(shared_h), pyhost_errtext(shared_h));
  return o;
}

TEST_CASE(data_is_per_thread) {
  shared_h = start();
  pthread_barrier_init(&failed_both, NULL, 2);
  pthread_t a, b;
  pthread_create(&a, NULL, fail_and_read, (void *)"1 / 0");
  pthread_create(&b, NULL, fail_and_read, (void *)"{}['key']");
  void *ra, *rb;
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  CHECK_STREQ(ra, "PYHOST_PYEXC ZeroDivisionError division by zero");
  CHECK_STREQ(rb, "PYHOST_PYEXC KeyError 'key'");
  CHECK_STREQ(pyhost_errtype(shared_h), ""); /* this thread made no call */
  pthread_barrier_destroy(&failed_both);
  pyhost_free(shared_h);
}

/* A thread that failed a call and ended leaves nothing to the threads after it: a new
 * thread, which often gets the ended one's stack and thread-local storage back, has no
 * message and no exception data before its first call, and none after a call that
 * succeeded.  50 threads one after the other, each failing then ending, each followed
 * by one that reads. */
static void *fail_then_end(void *arg) {
  (void)arg;
  pyhost_value *v = NULL;
  return (void *)(intptr_t)pyhost_eval(shared_h, "1 / 0", &v);
}

static void *read_fresh(void *arg) {
  (void)arg;
  static char out[256];
  int stale = strcmp(pyhost_errmsg(shared_h), "not an error") != 0 || pyhost_errtype(shared_h)[0];
  pyhost_value *v = NULL;
  int rc = pyhost_eval(shared_h, "2", &v);
  pyhost_value_free(v);
  stale |= rc != PYHOST_OK || strcmp(pyhost_errmsg(shared_h), "not an error") != 0 ||
           pyhost_errtype(shared_h)[0] || pyhost_errframe_count(shared_h) != 0;
  snprintf(out, sizeof out, "%s %s", pyhost_status_name(rc), pyhost_errtype(shared_h));
  return stale ? out : NULL;
}

TEST_CASE(ended_threads_leave_no_data) {
  shared_h = start();
  int stale = 0;
  for (int i = 0; i < 50; i++) {
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, fail_then_end, NULL);
    pthread_join(t, &r);
    CHECK((intptr_t)r == PYHOST_PYEXC);
    pthread_create(&t, NULL, read_fresh, NULL);
    pthread_join(t, &r);
    if (r && !stale++) fprintf(stderr, "a new thread read another's data: %s\n", (char *)r);
  }
  CHECK(stale == 0);
  pyhost_free(shared_h);
}
