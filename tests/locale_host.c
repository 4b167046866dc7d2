/* locale_host.c: a host as most C programs are: it never calls setlocale, so its
 * LC_CTYPE is "C".  Runs a script on the given library:
 *   locale_host LIB SCRIPT [--locale-encoding] [ARGS...]
 * --locale-encoding sets PYHOST_INIT_LOCALE_ENCODING.  After Python ran, prints the
 * host's own LC_CTYPE (on stderr), which pyhost must not have changed. */
#include "pyhost.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: locale_host LIB SCRIPT [--locale-encoding] [ARGS...]\n");
    return 2;
  }
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, argv[1]);
  int first = 3;
  if (argc > 3 && !strcmp(argv[3], "--locale-encoding")) {
    pyhost_config_set_flags(cfg, PYHOST_INIT_LOCALE_ENCODING);
    first = 4;
  }
  const char *args[16] = {argv[2]};
  int n = 1;
  for (int i = first; i < argc && n < 16; i++) args[n++] = argv[i];
  pyhost_config_set_argv(cfg, n, args);
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  if (rc == PYHOST_OK) rc = pyhost_exec_file(h, argv[2]);
  if (rc != PYHOST_OK) fprintf(stderr, "locale_host: %s\n", pyhost_errmsg(h));
  fflush(stdout);
  pyhost_free(h);
  fprintf(stderr, "host LC_CTYPE %s\n", setlocale(LC_CTYPE, NULL));
  return rc == PYHOST_OK ? 0 : 1;
}
