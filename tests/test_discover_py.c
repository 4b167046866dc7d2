/* test_discover_py.c: discovery while a Python runs in the process, on every Python of
 * the matrix.  Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

static int n, taken_minor = -1, opened_elsewhere;

static void count(void *ctx, const pyhost_candidate *c) {
  (void)ctx;
  n++;
  if (c->taken) taken_minor = (int)((c->hexversion >> 16) & 0xFF);
  /* judged by name: the full version (patch level) is never read from a library */
  if (c->hexversion & 0xFFFF) opened_elsewhere++;
}

TEST_CASE(discover_while_python_runs) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_OK);
  /* the running library, named as configured: taken again, judged by its name */
  CHECK_RC(pyhost_discover(c, count, NULL), PYHOST_OK);
  pyhost_config_free(c);
  CHECK(n >= 1);
  CHECK(taken_minor == atoi(strchr(check_version, '.') + 1));
  CHECK(opened_elsewhere == 0);
  /* and Python is unharmed */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "6 * 7", &v), PYHOST_OK);
  pyhost_value_free(v);
  pyhost_free(h);
}
