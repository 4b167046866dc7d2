/* common.h: what the bridge examples share: starting Python from argv[1] and
 * printing the last line of an error message (the "Type: message" line, the same on
 * every Python; the traceback above it differs between versions). */
#ifndef EXAMPLE_COMMON_H
#define EXAMPLE_COMMON_H

#include <pyhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline pyhost *example_start(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0); /* destructors print from inside Python calls */
  pyhost_config *cfg = pyhost_config_new();
  if (argc > 1) pyhost_config_set_library(cfg, argv[1]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "cannot start Python: %s\n", pyhost_errmsg(py));
    pyhost_free(py);
    exit(1);
  }
  return py;
}

/* The last line of pyhost_errmsg(py). */
static inline const char *last_line(pyhost *py) {
  const char *m = pyhost_errmsg(py), *nl = strrchr(m, '\n');
  return nl ? nl + 1 : m;
}

/* Runs Python statements; prints the error's last line if they fail. */
static inline void run(pyhost *py, const char *code) {
  fflush(stdout); /* C's and Python's stdout buffer separately: keep the order */
  int rc = pyhost_exec(py, code, "<example>");
  if (rc != PYHOST_OK) printf("error: %s: %s\n", pyhost_status_name(rc), last_line(py));
  pyhost_exec(py, "import sys\nsys.stdout.flush()\n", NULL);
}

#endif
