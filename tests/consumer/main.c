/* The consumer: checks that the header it compiled against and the library it runs
 * with agree, starts the Python named by argv[1], and evaluates an expression. */
#include <pyhost.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer LIBPYTHON\n");
    return 2;
  }
  if (pyhost_version() != PYHOST_VERSION_HEX ||
      strcmp(pyhost_version_string(), PYHOST_VERSION_STRING) != 0) {
    fprintf(stderr, "header %s but library %s\n", PYHOST_VERSION_STRING, pyhost_version_string());
    return 1;
  }
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, argv[1]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  pyhost_value *v = NULL;
  int64_t n = 0;
  if (rc == PYHOST_OK) rc = pyhost_eval(py, "sum(range(10))", &v);
  if (rc == PYHOST_OK) rc = pyhost_value_to_int(py, v, &n);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "consumer: %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(py));
  } else {
    unsigned long pv = pyhost_python_version(py);
    printf("consumer: pyhost %s, Python %lu.%lu: %lld\n", pyhost_version_string(),
           (pv >> 24) & 0xFF, (pv >> 16) & 0xFF, (long long)n);
  }
  pyhost_value_free(v);
  pyhost_free(py);
  return rc == PYHOST_OK ? 0 : 1;
}
