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

unsigned check_minor(void) {
  return (unsigned)atoi(strchr(check_version, '.') + 1);
}
