/* check_python.c: the harness's one way to start the Python under test (check.h). */
#include "pyhost.h"
#include "check.h"

pyhost *check_start(pyhost_config *cfg) {
  pyhost *h = NULL;
  if (!cfg) cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, check_lib);
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "pyhost_init(%s) failed: %s: %s\n", check_lib, pyhost_status_name(rc),
            pyhost_errmsg(h));
    exit(1);
  }
  return h;
}

void check_refused(const char *lib, int status, const char *f1, const char *f2, const char *f3,
                   char *msg, size_t cap) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, lib);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), status);
  const char *m = pyhost_errmsg(h);
  const char *frags[] = {f1, f2, f3};
  for (int i = 0; i < 3; i++)
    if (frags[i]) CHECK_CONTAINS(m, frags[i]);
  snprintf(msg, cap, "%s", m);
  pyhost_free(h);
  pyhost_config_free(c);
}

unsigned check_minor(void) {
  return (unsigned)atoi(strchr(check_version, '.') + 1);
}

void check_expect_py(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  if (rc) fprintf(stderr, "%s: %s\n", expr, pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
  if (v && strcmp(pyhost_value_repr(h, v), want) != 0)
    fprintf(stderr, "%s\n  got:  %s\n  want: %s\n", expr, pyhost_value_repr(h, v), want);
  CHECK_STREQ(pyhost_value_repr(h, v), want);
  pyhost_value_free(v);
}

void check_run(pyhost *h, const char *code) {
  int rc = pyhost_exec(h, code, "<test>");
  if (rc) fprintf(stderr, "%s\n%s\n", code, pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
}

int check_numpy(pyhost *h) {
  if (pyhost_exec(h, "import numpy as np", "<test>") == PYHOST_OK) return 1;
  const char *want = getenv("PYHOST_TEST_NUMPY");
  if (want && !strcmp(want, "1")) {
    fprintf(stderr, "a numpy for this Python is installed (PYHOST_TEST_NUMPY=1), yet: %s\n",
            pyhost_errmsg(h));
    exit(1);
  }
  return 0;
}
