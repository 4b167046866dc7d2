/* test_isolated.c: pyhost_config_set_isolated on every Python of the matrix.
 * Arguments: CASE LIB VERSION.  Both cases plant the same traps (PYTHONPATH, a user
 * site directory through PYTHONUSERBASE, a broken PYTHONHOME); the isolated case must
 * see none of them, the control case must see them all. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "alloc.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmp[256], pp[512], ub[512];

static void cleanup(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "/bin/rm -rf '%s'", tmp);
  if (tmp[0] && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
}

static void plant(const char *dir, const char *module) {
  char cmd[1024], path[1024];
  snprintf(cmd, sizeof cmd, "/bin/mkdir -p '%s'", dir);
  if (system(cmd) != 0) exit(1);
  snprintf(path, sizeof path, "%s/%s.py", dir, module);
  FILE *f = fopen(path, "w");
  if (!f) exit(1);
  fputs("FOUND = True\n", f);
  fclose(f);
}

static void traps(void) {
  snprintf(tmp, sizeof tmp, "/tmp/pyhost-isolated-XXXXXX");
  if (!mkdtemp(tmp)) exit(1);
  atexit(cleanup);
  snprintf(pp, sizeof pp, "%s/pythonpath", tmp);
  snprintf(ub, sizeof ub, "%s/userbase", tmp);
  char site[1024];
  snprintf(site, sizeof site, "%s/lib/python%s/site-packages", ub, check_version);
  plant(pp, "trap_pythonpath");
  plant(site, "trap_usersite");
  setenv("PYTHONPATH", pp, 1);
  setenv("PYTHONUSERBASE", ub, 1);
  unsetenv("PYTHONNOUSERSITE");
}

static pyhost *start(int isolated) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_isolated(c, isolated);
  return check_start(c);
}

static int truth(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int b = -1;
  if (pyhost_eval(h, expr, &v) != PYHOST_OK || pyhost_value_to_bool(h, v, &b) != PYHOST_OK)
    fprintf(stderr, "%s: %s\n", expr, pyhost_errmsg(h));
  pyhost_value_free(v);
  return b;
}

/* 1 when module is importable, 0 when not, -1 on error */
static int importable(pyhost *h, const char *module) {
  char expr[256];
  snprintf(expr, sizeof expr, "__import__('importlib.util').util.find_spec('%s') is not None", module);
  return truth(h, expr);
}

TEST_CASE(isolated_hides_environment) {
  traps();
  setenv("PYTHONHOME", "/nonexistent/home", 1); /* would be refused (NOHOME) otherwise */
  setenv("PYTHONSTARTUP", "/nonexistent/startup.py", 1);
  pyhost *h = start(1);
  CHECK(importable(h, "trap_pythonpath") == 0);
  CHECK(importable(h, "trap_usersite") == 0);
  CHECK(truth(h, "__import__('site').ENABLE_USER_SITE") == 0);
  CHECK(truth(h, "not [k for k in __import__('os').environ if k.startswith('PYTHON')]") == 1);
  CHECK(truth(h, "not [p for p in __import__('sys').path if 'userbase' in p or 'pythonpath' in p]") == 1);
  /* 3.7+ read PYTHONNOUSERSITE during init; 3.6 only in python's main() */
  int minor = atoi(strchr(check_version, '.') + 1);
  CHECK(truth(h, "__import__('sys').flags.no_user_site == 1") == (minor >= 7));
  /* the host's environment is back as it was */
  CHECK_STREQ(getenv("PYTHONPATH"), pp);
  CHECK_STREQ(getenv("PYTHONUSERBASE"), ub);
  CHECK_STREQ(getenv("PYTHONHOME"), "/nonexistent/home");
  CHECK(getenv("PYTHONNOUSERSITE") == NULL);
  pyhost_free(h);
}

TEST_CASE(not_isolated_control) {
  traps();
  pyhost *h = start(0);
  CHECK(importable(h, "trap_pythonpath") == 1);
  CHECK(importable(h, "trap_usersite") == 1);
  CHECK(truth(h, "'PYTHONPATH' in __import__('os').environ") == 1);
  pyhost_free(h);
}

/* Out of memory while hiding the environment: init fails before Python starts, the
 * environment is untouched, and the next init succeeds. */
TEST_CASE(isolated_out_of_memory) {
  traps();
  int last_late = 0, started = 0;
  for (long k = 0; k < 1000 && !started; k++) {
    pyhost_config *c = pyhost_config_new();
    pyhost_config_set_library(c, check_lib);
    pyhost_config_set_isolated(c, 1);
    pyhost *h = NULL;
    pyhost__alloc_fail_after(k);
    int rc = pyhost_init(c, &h);
    pyhost__alloc_fail_after(-1);
    if (rc == PYHOST_OK) {
      started = 1;
      CHECK(importable(h, "trap_pythonpath") == 0);
    } else {
      /* failed before Python started: the environment is the host's again */
      CHECK_RC(rc, PYHOST_NOMEM);
      CHECK_STREQ(getenv("PYTHONPATH"), pp);
      CHECK(getenv("PYTHONNOUSERSITE") == NULL);
      /* (the message itself may not fit in memory) */
      last_late = pyhost_python_version(h) != 0;
    }
    pyhost_free(h);
    pyhost_config_free(c);
  }
  CHECK(started);
  /* the attempt just before success failed after the library was accepted: in the
   * isolation step, the last allocation before Python starts */
  CHECK(last_late);
}
