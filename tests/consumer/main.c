/* The consumer: checks that the header it compiled against and the library it runs
 * with agree, starts the Python named by argv[1], evaluates an expression, and calls
 * a plugin in a process of its own (its worker program found where this pyhost is:
 * beside an installed library, through PYHOST_WORKER, or in the build tree). */
#include <pyhost.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* f(20, 25) of a plugin at the process level, or -1 with the reason on stderr. */
static long long in_a_worker(pyhost *py) {
  char path[] = "pyhost_consumer_plugin.py";
  FILE *f = fopen(path, "w");
  if (!f || fputs("def f(a, b):\n    return a + b\n", f) < 0 || fclose(f) != 0) return -1;
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_PROCESS);
  pyhost_plugin *p = NULL;
  int r = -1;
  int rc = pyhost_plugin_load_with(py, path, o, &p);
  if (rc == PYHOST_OK) rc = pyhost_plugin_callf(py, p, "f", "ii>i", 20, 25, &r);
  if (rc != PYHOST_OK) fprintf(stderr, "consumer: the worker: %s: %s\n", pyhost_status_name(rc),
                               pyhost_errmsg(py));
  pyhost_plugin_unload(p);
  pyhost_plugin_options_free(o);
  remove(path);
  return rc == PYHOST_OK ? r : -1;
}

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
  long long w = -1;
  if (rc != PYHOST_OK) {
    fprintf(stderr, "consumer: %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(py));
  } else {
    unsigned long pv = pyhost_python_version(py);
    w = in_a_worker(py);
    printf("consumer: pyhost %s, Python %lu.%lu: %lld, in a worker process: %lld\n",
           pyhost_version_string(), (pv >> 24) & 0xFF, (pv >> 16) & 0xFF, (long long)n, w);
  }
  pyhost_value_free(v);
  pyhost_free(py);
  return rc == PYHOST_OK && w == 45 ? 0 : 1;
}
