/* test_python.c: tier 2, run once per Python in the matrix.
 * Arguments: CASE LIB VERSION [PY2_LIB]. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static pyhost *start(void) { return check_start(NULL); }

/* Evaluates expr and checks that its repr() is want. */
static void expect_repr(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "eval(%s): %s\n", expr, pyhost_errmsg(h));
    check_failures++;
    return;
  }
  const char *r = pyhost_value_repr(h, v);
  if (!r || strcmp(r, want) != 0) {
    fprintf(stderr, "eval(%s) gave %s, expected %s\n", expr, r ? r : pyhost_errmsg(h), want);
    check_failures++;
  }
  pyhost_value_free(v);
}

TEST_CASE(version) {
  pyhost *h = start();
  char want[32];
  snprintf(want, sizeof want, "(3, %u)", check_minor());
  expect_repr(h, "__import__('sys').version_info[:2]", want);
  CHECK((pyhost_python_version(h) >> 16) == (0x0300u | check_minor()));
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('sys').hexversion", &v), PYHOST_OK);
  int64_t hex = 0;
  CHECK_RC(pyhost_value_to_int(h, v, &hex), PYHOST_OK);
  CHECK((unsigned long)hex == pyhost_python_version(h));
  pyhost_value_free(v);
  CHECK(pyhost_library_path(h)[0] == '/');
  CHECK_CONTAINS(pyhost_python_version_text(h), check_version);
  pyhost_free(h);
}

TEST_CASE(eval_values) {
  pyhost *h = start();
  pyhost_value *v = NULL;
  int64_t i;
  double d;
  const char *s;
  size_t n;
  int b;
  CHECK_RC(pyhost_eval(h, "None", &v), PYHOST_OK);
  CHECK(pyhost_value_kind(v) == PYHOST_KIND_NONE);
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "1 < 2", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_bool(h, v, &b), PYHOST_OK);
  CHECK(b == 1);
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "-2**63", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_OK);
  CHECK(i == INT64_MIN);
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "2**63", &v), PYHOST_OK);
  CHECK(pyhost_value_kind(v) == PYHOST_KIND_INT);
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_RANGE);
  CHECK_CONTAINS(pyhost_errmsg(h), "9223372036854775808 does not fit in 64 bits");
  CHECK_STREQ(pyhost_value_repr(h, v), "9223372036854775808"); /* round trip intact */
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "0.1 + 0.2", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_float(h, v, &d), PYHOST_OK);
  CHECK(d == 0.1 + 0.2);
  CHECK_STREQ(pyhost_value_repr(h, v), "0.30000000000000004");
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "'h\\xe9llo\\x00w\\u20ac'", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, v, &s, &n), PYHOST_OK);
  CHECK(n == 11 && memcmp(s, "h\xc3\xa9llo\0w\xe2\x82\xac", 11) == 0);
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "expected int, got str");
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "b'\\x00\\xff'", &v), PYHOST_OK);
  const void *p;
  CHECK_RC(pyhost_value_to_bytes(h, v, &p, &n), PYHOST_OK);
  CHECK(n == 2 && ((const unsigned char *)p)[1] == 0xff);
  pyhost_value_free(v);
  expect_repr(h, "[1, 'a', (2.5, None), {'k': [True]}]", "[1, 'a', (2.5, None), {'k': [True]}]");
  expect_repr(h, "__import__('collections').OrderedDict(a=1)", "{'a': 1}");
  CHECK_RC(pyhost_eval(h, "object()", &v), PYHOST_OK);
  CHECK(pyhost_value_kind(v) == PYHOST_KIND_OBJECT);
  CHECK_STREQ(pyhost_value_type_name(v), "object");
  CHECK_CONTAINS(pyhost_value_repr(h, v), "<object object at 0x");
  pyhost_value_free(v);
  CHECK_RC(pyhost_eval(h, "__import__('datetime').date(2026, 12, 3)", &v), PYHOST_OK);
  CHECK_STREQ(pyhost_value_type_name(v), "datetime.date");
  CHECK_STREQ(pyhost_value_repr(h, v), "datetime.date(2026, 12, 3)");
  pyhost_value_free(v);
  pyhost_free(h);
}

TEST_CASE(self_containing_value_is_an_error) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "loop = []\nloop.append(loop)", NULL), PYHOST_OK);
  pyhost_value *v = (pyhost_value *)1;
  CHECK_RC(pyhost_eval(h, "loop", &v), PYHOST_PYEXC);
  CHECK(v == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "nests deeper than");
  expect_repr(h, "len(loop)", "1");
  pyhost_free(h);
}

TEST_CASE(invalid_utf8_from_c_is_an_error) {
  pyhost *h = start();
  pyhost_value *v = pyhost_value_str("ok\xff", 3);
  CHECK(pyhost_value_repr(h, v) == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "utf-8");
  CHECK_CONTAINS(pyhost_errmsg(h), "0xff");
  pyhost_value_free(v);
  v = pyhost_value_str("nul\0inside", 10);
  CHECK_STREQ(pyhost_value_repr(h, v), "'nul\\x00inside'");
  pyhost_value_free(v);
  pyhost_free(h);
}

TEST_CASE(exec_shares_main_namespace) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "x = 21\ndef double(n):\n    return n * 2\n", "setup.py"), PYHOST_OK);
  expect_repr(h, "double(x)", "42");
  expect_repr(h, "len('four')", "4"); /* __builtins__ is there on 3.6 to 3.9 */
  expect_repr(h, "__name__", "'__main__'");
  pyhost_free(h);
}

TEST_CASE(syntax_error_names_file_and_line) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "a = 1\ndef broken(:\n    pass\n", "plugin.py"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin.py");
  CHECK_CONTAINS(pyhost_errmsg(h), "line 2");
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1 +", &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
  expect_repr(h, "1 + 1", "2");
  pyhost_free(h);
}

TEST_CASE(exception_has_traceback) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "def inner():\n    raise ValueError('bad value')\n\ndef outer():\n    inner()\n\nouter()\n", "tb.py"),
           PYHOST_PYEXC);
  const char *m = pyhost_errmsg(h);
  CHECK_CONTAINS(m, "Traceback (most recent call last):");
  CHECK_CONTAINS(m, "File \"tb.py\", line 2, in inner");
  CHECK_CONTAINS(m, "line 5, in outer");
  CHECK_CONTAINS(m, "ValueError: bad value");
  CHECK(m[strlen(m) - 1] != '\n');
  CHECK_RC(pyhost_exec(h, "try:\n    1/0\nexcept Exception as e:\n    raise KeyError('k') from e\n", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "ZeroDivisionError");
  CHECK_CONTAINS(pyhost_errmsg(h), "direct cause");
  CHECK_CONTAINS(pyhost_errmsg(h), "KeyError: 'k'");
  pyhost_free(h);
}

TEST_CASE(system_exit_never_exits_the_host) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "raise SystemExit(7)", NULL), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 7);
  CHECK_CONTAINS(pyhost_errmsg(h), "exit code 7");
  CHECK_RC(pyhost_exec(h, "import sys\nsys.exit()", NULL), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 0);
  CHECK_RC(pyhost_exec(h, "import sys\nsys.exit('fatal: no config')", NULL), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 1);
  CHECK_CONTAINS(pyhost_errmsg(h), "fatal: no config");
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "exit(3)", &v), PYHOST_EXIT); /* site's exit() too */
  CHECK(pyhost_exit_code(h) == 3);
  expect_repr(h, "'still here'", "'still here'");
  pyhost_free(h);
}

TEST_CASE(keyboard_interrupt_is_an_error) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "raise KeyboardInterrupt", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "KeyboardInterrupt");
  CHECK_RC(pyhost_exec(h, "class Odd(BaseException): pass\nraise Odd('x')", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "Odd: x");
  expect_repr(h, "2 * 21", "42");
  pyhost_free(h);
}

TEST_CASE(lifecycle_misuse) {
  pyhost *h = start();
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost *second = NULL;
  CHECK_RC(pyhost_init(c, &second), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(second), "already running");
  pyhost_free(second);
  expect_repr(h, "1", "1"); /* the first is untouched */
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "already finalized");
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1", &v), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  CHECK_RC(pyhost_exec(h, "pass", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_init(c, &second), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(second), "already finalized");
  pyhost_free(second);
  pyhost_free(h);
  pyhost_config_free(c);
}

TEST_CASE(object_value_outlives_finalize) {
  pyhost *h = start();
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "object()", &v), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(pyhost_value_repr(h, v) == NULL);
  pyhost_value_free(v); /* must not touch the finalized interpreter */
  pyhost_free(h);
}

TEST_CASE(runs_on_its_own_installation) {
  /* Put another Python first on PATH: the library must still use its own stdlib. */
  setenv("PATH", "/usr/bin:/bin", 1);
  pyhost *h = start();
  char prefix[4096];
  snprintf(prefix, sizeof prefix, "%s", pyhost_library_path(h));
  /* PREFIX/lib/libpython3.X.so (pyenv) or PREFIX/lib/<multiarch>/libpython3.X.so (Debian,
   * the system's /usr or the sid sysroot's DIR/usr) */
  *strrchr(prefix, '/') = '\0';
  if (strstr(strrchr(prefix, '/'), "-linux-")) *strrchr(prefix, '/') = '\0';
  *strrchr(prefix, '/') = '\0';
  char want[4200];
  snprintf(want, sizeof want, "'%s'", prefix);
  expect_repr(h, "__import__('sys').prefix", want);
  CHECK_STREQ(pyhost_python_home(h), prefix);
  snprintf(want, sizeof want, "'%s/bin/python%s'", prefix, check_version);
  expect_repr(h, "__import__('sys').executable", want);
  /* C extension modules need libpython's symbols globally (RTLD_GLOBAL) */
  expect_repr(h, "[m.__name__ for m in map(__import__, ['math', '_ctypes', 'json', 'decimal', 'select'])]",
              "['math', '_ctypes', 'json', 'decimal', 'select']");
  expect_repr(h, "__import__('os').__file__.startswith(__import__('sys').prefix)", "True");
  pyhost_free(h);
}

TEST_CASE(sys_argv_always_exists) {
  pyhost *h = start();
  expect_repr(h, "__import__('sys').argv", "['']");
  pyhost_free(h);
}

TEST_CASE(sys_argv_and_path_from_config) {
  pyhost_config *c = pyhost_config_new();
  const char *args[] = {"host", "--flag", "caf\xc3\xa9"};
  pyhost_config_set_argv(c, 3, args);
  char dir[] = "/tmp/pyhost-path-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char file[256];
  snprintf(file, sizeof file, "%s/pyhost_test_mod.py", dir);
  FILE *f = fopen(file, "w");
  fputs("ANSWER = 42\n", f);
  fclose(f);
  pyhost_config_add_sys_path(c, dir);
  pyhost *h = check_start(c);
  expect_repr(h, "__import__('sys').argv", "['host', '--flag', 'caf\xc3\xa9']");
  char want[300];
  snprintf(want, sizeof want, "'%s'", dir);
  expect_repr(h, "__import__('sys').path[0]", want);
  expect_repr(h, "__import__('pyhost_test_mod').ANSWER", "42");
  pyhost_free(h);
  unlink(file);
  rmdir(dir);
}

TEST_CASE(host_locale_and_signals_are_kept) {
  setlocale(LC_CTYPE, "C");
  struct sigaction before_int, before_pipe, after;
  sigaction(SIGINT, NULL, &before_int);
  sigaction(SIGPIPE, NULL, &before_pipe);
  pyhost *h = start();
  CHECK_STREQ(setlocale(LC_CTYPE, NULL), "C");
  sigaction(SIGINT, NULL, &after);
  CHECK(after.sa_handler == before_int.sa_handler);
  sigaction(SIGPIPE, NULL, &after);
  CHECK(after.sa_handler == before_pipe.sa_handler);
  expect_repr(h, "'\\u20ac'", "'\xe2\x82\xac'");
  pyhost_free(h);
}

TEST_CASE(signal_flag_installs_python_handlers) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_flags(c, PYHOST_INIT_SIGNALS);
  pyhost *h = check_start(c);
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  CHECK(now.sa_handler != SIG_DFL);
  pyhost_free(h);
}

TEST_CASE(min_python_is_enforced) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost_config_set_min_python(c, PYHOST_PY(3, check_minor() + 1));
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_VERSION);
  CHECK_CONTAINS(pyhost_errmsg(h), "the oldest the host accepts");
  CHECK_CONTAINS(pyhost_errmsg(h), check_lib);
  pyhost_free(h);
  pyhost_config_set_min_python(c, PYHOST_PY(3, check_minor()));
  h = check_start(c); /* a refusal does not use up the process */
  expect_repr(h, "__import__('math').sqrt(16)", "4.0");
  pyhost_free(h);
}

TEST_CASE(home_without_stdlib_is_refused) {
  char dir[] = "/tmp/pyhost-home-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost_config_set_home(c, dir);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_NOHOME);
  CHECK_CONTAINS(pyhost_errmsg(h), dir);
  CHECK_CONTAINS(pyhost_errmsg(h), "no standard library");
  pyhost_free(h);
  pyhost_config_set_home(c, NULL);
  setenv("PYTHONHOME", dir, 1);
  CHECK_RC(pyhost_init(c, &h), PYHOST_NOHOME);
  CHECK_CONTAINS(pyhost_errmsg(h), "PYTHONHOME");
  pyhost_free(h);
  unsetenv("PYTHONHOME");
  h = check_start(c);
  expect_repr(h, "1", "1");
  pyhost_free(h);
  rmdir(dir);
}

TEST_CASE(refused_library_leaves_no_trace) {
  /* Python 2 loads, is refused and closed; the real one then imports C extensions
   * with no Python 2 symbols in the global scope. */
  if (!check_arg4 || !check_arg4[0]) SKIP("no Python 2 library on this machine");
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_arg4);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_PYTHON2);
  pyhost_free(h);
  pyhost_config_free(c);
  h = start();
  expect_repr(h, "__import__('math').floor(2.5), __import__('_struct').calcsize('i')", "(2, 4)");
  pyhost_free(h);
}

TEST_CASE(exec_file_sets_file) {
  pyhost *h = start();
  char path[] = "/tmp/pyhost-script-XXXXXX.py";
  int fd = mkstemps(path, 3);
  const char *src = "# -*- coding: utf-8 -*-\nresult = (__file__, 'caf\xc3\xa9')\n";
  CHECK(write(fd, src, strlen(src)) == (ssize_t)strlen(src));
  close(fd);
  CHECK_RC(pyhost_exec_file(h, path), PYHOST_OK);
  char want[256];
  snprintf(want, sizeof want, "('%s', 'caf\xc3\xa9')", path);
  expect_repr(h, "result", want);
  unlink(path);
  CHECK_RC(pyhost_exec_file(h, path), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), path);
  pyhost_free(h);
}

struct worker { pyhost *h; int id, ok; };

static void *worker_main(void *arg) {
  struct worker *w = arg;
  char expr[64], want[32];
  for (int i = 0; i < 200; i++) {
    snprintf(expr, sizeof expr, "%d * 1000 + %d", w->id, i);
    snprintf(want, sizeof want, "%d", w->id * 1000 + i);
    pyhost_value *v = NULL;
    if (pyhost_eval(w->h, expr, &v) != PYHOST_OK) return NULL;
    int64_t got = -1;
    pyhost_value_to_int(w->h, v, &got);
    pyhost_value_free(v);
    if (got != w->id * 1000 + i) return NULL;
    if (i % 50 == 0 && pyhost_exec(w->h, "raise ValueError('per-thread')", NULL) == PYHOST_PYEXC &&
        !strstr(pyhost_errmsg(w->h), "per-thread"))
      return NULL;
  }
  w->ok = 1;
  return NULL;
}

TEST_CASE(calls_from_other_threads) {
  pyhost *h = start();
  pthread_t t[4];
  struct worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (struct worker){h, i + 1, 0};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK(w[i].ok);
  }
  expect_repr(h, "'main thread'", "'main thread'");
  pyhost_free(h);
}
