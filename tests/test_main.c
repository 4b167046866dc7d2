/* test_main.c: pyhost_main (python's own main for a host) and
 * pyhost_config_set_executable, once per Python in the matrix.
 * Arguments: CASE LIB VERSION.  What Python did inside pyhost_main comes back through
 * a file its code writes. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fresh file name for Python's report (removed by read_report). */
static void report_path(char *out, size_t cap) {
  snprintf(out, cap, "/tmp/pyhost-main-%ld-XXXXXX", (long)getpid());
  int fd = mkstemp(out);
  CHECK(fd >= 0);
  if (fd >= 0) close(fd);
}

static void read_report(const char *path, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  out[n] = '\0';
  if (f) fclose(f);
  unlink(path);
}

static pyhost_config *config(void) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  return c;
}

/* Evaluates expr and checks that its repr() is want. */
static void expect_repr(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  const char *r = rc == PYHOST_OK ? pyhost_value_repr(h, v) : NULL;
  if (!r || strcmp(r, want) != 0) {
    fprintf(stderr, "eval(%s) gave %s, expected %s\n", expr, r ? r : pyhost_errmsg(h), want);
    check_failures++;
  }
  pyhost_value_free(v);
}

TEST_CASE(executable_names_the_command) {
  pyhost_config *c = config();
  pyhost_config_set_executable(c, "/opt/py host/caf\xc3\xa9/python-through-pyhost");
  pyhost *h = check_start(c);
  expect_repr(h, "__import__('sys').executable", "'/opt/py host/caf\xc3\xa9/python-through-pyhost'");
  /* outside a venv the base executable is the same program */
  expect_repr(h, "(lambda s: getattr(s, '_base_executable', s.executable) == s.executable)(__import__('sys'))",
              "True");
  /* the installation is still the library's own */
  pyhost_value *v = NULL;
  const char *prefix = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('sys').prefix", &v), PYHOST_OK);
  pyhost_value_to_str(h, v, &prefix, NULL);
  CHECK_STREQ(prefix, pyhost_python_home(h));
  pyhost_value_free(v);
  pyhost_free(h);
}

TEST_CASE(main_runs_python_as_python) {
  char report[256], got[4096];
  report_path(report, sizeof report);
  const char *code = "import sys\n"
                     "open(sys.argv[1], 'w').write(repr((sys.argv, sys.flags.optimize, sys._xoptions, "
                     "getattr(sys, 'orig_argv', ['the-host'])[0])))\n"
                     "raise ValueError('uncaught: python prints it and its status is 1')\n";
  char *argv[] = {"the-host", "-O", "-X", "pyhost_test=1", "-c", (char *)code, report, NULL};
  pyhost_config *c = config();
  pyhost *h = NULL;
  int status = -1;
  CHECK_RC(pyhost_main(c, 7, argv, &h, &status), PYHOST_OK);
  pyhost_config_free(c);
  CHECK(status == 1);
  read_report(report, got, sizeof got);
  char want[512];
  snprintf(want, sizeof want, "(['-c', '%s'], 1, {'pyhost_test': '1'}, 'the-host')", report);
  CHECK_STREQ(got, want);
  /* Python is done: the handle only answers errmsg, the process starts no other */
  CHECK_RC(pyhost_exec(h, "1", NULL), PYHOST_MISUSE);
  pyhost_free(h);
  h = NULL;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "already finalized");
  pyhost_free(h);
}

TEST_CASE(main_system_exit_ends_the_process) {
  /* as python: Py_Exit finalizes Python and exits with the code, inside pyhost_main */
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {"the-host", "-c", "raise SystemExit(7)", NULL};
    pyhost *h = NULL;
    int status = -1;
    int rc = pyhost_main(NULL, 3, argv, &h, &status);
    _exit(rc == PYHOST_OK ? 100 + status : 99);
  }
  int st = 0;
  CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
}

/* The program's name alone (argc 1) is python with no arguments: the interactive
 * loop, which reads standard input; at its end (here an empty stdin) it exits 0. */
TEST_CASE(main_with_the_name_alone_reads_stdin) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", 0);
    if (null < 0 || dup2(null, 0) < 0) _exit(98);
    char *argv[] = {"the-host", NULL};
    pyhost_config *c = config();
    pyhost *h = NULL;
    int status = -1;
    int rc = pyhost_main(c, 1, argv, &h, &status);
    _exit(rc == PYHOST_OK ? status : 99);
  }
  int st = 0;
  CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST_CASE(main_refused_library_leaves_the_process_free) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent/pyhost-test/libpython3.99.so");
  char *argv[] = {"the-host", "-c", "pass", NULL};
  pyhost *h = NULL;
  int status = -1;
  CHECK(pyhost_main(c, 3, argv, &h, &status) != PYHOST_OK);
  CHECK(h != NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "/nonexistent/pyhost-test/libpython3.99.so");
  CHECK(status == 1);
  pyhost_free(h);
  pyhost_config_free(c);
  h = check_start(NULL);
  expect_repr(h, "6 * 7", "42");
  pyhost_free(h);
}

TEST_CASE(main_misuse_is_refused) {
  char *argv[] = {"the-host", NULL}, *holes[] = {"the-host", NULL, NULL};
  pyhost *h = (pyhost *)&h; /* anything but NULL: it must be set to NULL */
  int status = 0;
  CHECK_RC(pyhost_main(NULL, 0, argv, &h, &status), PYHOST_MISUSE);
  CHECK(h == NULL);
  h = (pyhost *)&h;
  CHECK_RC(pyhost_main(NULL, 1, NULL, &h, &status), PYHOST_MISUSE);
  CHECK(h == NULL);
  CHECK_RC(pyhost_main(NULL, 2, holes, &h, &status), PYHOST_MISUSE);
  CHECK_RC(pyhost_main(NULL, 1, argv, &h, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_main(NULL, 1, argv, NULL, &status), PYHOST_MISUSE);
  /* none of it used up the process */
  h = check_start(NULL);
  expect_repr(h, "1 + 1", "2");
  pyhost_free(h);
}

TEST_CASE(main_with_executable_and_isolated) {
  char report[256], got[4096], code[1024];
  report_path(report, sizeof report);
  snprintf(code, sizeof code,
           "import os, sys\n"
           "open(sys.argv[1], 'w').write(repr((sys.executable, os.environ.get('PYTHONPATH'), "
           "'/nonexistent/pyhost-isolated' in sys.path, sys.flags.no_user_site)) + '\\n' + sys.prefix)\n");
  setenv("PYTHONPATH", "/nonexistent/pyhost-isolated", 1);
  char *argv[] = {"the-host", "-c", code, report, NULL};
  pyhost_config *c = config();
  pyhost_config_set_executable(c, "/opt/through-pyhost");
  pyhost_config_set_isolated(c, 1);
  pyhost *h = NULL;
  int status = -1;
  CHECK_RC(pyhost_main(c, 4, argv, &h, &status), PYHOST_OK);
  pyhost_config_free(c);
  CHECK(status == 0);
  read_report(report, got, sizeof got);
  char want[4200];
  snprintf(want, sizeof want, "('/opt/through-pyhost', None, False, 1)\n%s", pyhost_python_home(h));
  CHECK_STREQ(got, want);
  /* the host's environment is back */
  CHECK_STREQ(getenv("PYTHONPATH"), "/nonexistent/pyhost-isolated");
  CHECK(getenv("PYTHONNOUSERSITE") == NULL);
  pyhost_free(h);
}
