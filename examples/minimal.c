/* minimal.c: the smallest pyhost host (README's example).  Loads the Python named on
 * the command line (or found by discovery), evaluates an expression and prints it.
 *
 *   minimal [LIBPYTHON]
 */
#include <pyhost.h>
#include <stdio.h>

int main(int argc, char **argv) {
  pyhost_config *cfg = pyhost_config_new();
  if (argc > 1) pyhost_config_set_library(cfg, argv[1]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "cannot start Python: %s\n", pyhost_errmsg(py));
    pyhost_free(py);
    return 1;
  }
  pyhost_value *v = NULL;
  rc = pyhost_eval(py, "'Python %d.%d says hello' % __import__('sys').version_info[:2]", &v);
  const char *text;
  if (rc == PYHOST_OK && pyhost_value_to_str(py, v, &text, NULL) == PYHOST_OK) printf("%s\n", text);
  else fprintf(stderr, "%s\n", pyhost_errmsg(py));
  pyhost_value_free(v);
  pyhost_free(py);
  return rc == PYHOST_OK ? 0 : 1;
}
