/* isolation: the example of docs/plugins.md, "Isolation".  A host with three plugins:
 * counter.py in the host's own interpreter (the shared level), tidy.py in a
 * sub-interpreter of its own (the interpreter level: its monkeypatched json stays its
 * own) and risky.py in a worker process of its own (the process level).  risky.py
 * crashes; the host and the others carry on, and risky.py is restarted.  All call the
 * host's function app.log, which runs in the host at every level.
 *   example_isolation PLUGIN_DIR [PYTHON_LIBRARY] */
#include <pyhost.h>
#include <stdio.h>
#include <string.h>

/* app.log(text): the host's function, for every plugin */
static int app_log(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)h, (void)ud, (void)ret;
  printf("  [host] %.*s\n", (int)argv[0].len, argv[0].u.s);
  return PYHOST_OK;
}

/* app.host_pid(): so that a plugin can see where it runs */
static int app_host_pid(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret);

static void event(pyhost *py, pyhost_plugin *p, const char *name) {
  long long n = 0;
  int rc = pyhost_plugin_callf(py, p, "on_event", "s>L", name, &n);
  if (rc == PYHOST_OK)
    printf("%s.on_event(%s) -> %lld\n", pyhost_plugin_name(p), name, n);
  else
    printf("%s.on_event(%s) failed: %s\n", pyhost_plugin_name(p), name, pyhost_status_name(rc));
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN_DIR [PYTHON_LIBRARY]\n", argv[0]);
    return 64;
  }
  setvbuf(stdout, NULL, _IOLBF, 0); /* lines in the order the two processes write them */
  pyhost_config *cfg = pyhost_config_new();
  if (argc > 2) pyhost_config_set_library(cfg, argv[2]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "cannot start Python: %s\n", pyhost_errmsg(py));
    pyhost_free(py);
    return 1;
  }
  pyhost_module *app = NULL;
  if (pyhost_module_new(py, "app", "the host", &app) != PYHOST_OK ||
      pyhost_module_add_typed_function(py, app, "log(text: str)", app_log, NULL, NULL) ||
      pyhost_module_add_typed_function(py, app, "host_pid()", app_host_pid, NULL, NULL)) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }

  char path[4096];
  pyhost_plugin *counter = NULL, *tidy = NULL, *risky = NULL;
  snprintf(path, sizeof path, "%s/counter.py", argv[1]);
  if (pyhost_plugin_load(py, path, &counter) != PYHOST_OK) { /* the shared level */
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_INTERPRETER);
  snprintf(path, sizeof path, "%s/tidy.py", argv[1]);
  rc = pyhost_plugin_load_with(py, path, o, &tidy); /* the interpreter level */
  if (rc != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }
  pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_PROCESS);
  snprintf(path, sizeof path, "%s/risky.py", argv[1]);
  rc = pyhost_plugin_load_with(py, path, o, &risky); /* the process level */
  pyhost_plugin_options_free(o);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }

  event(py, counter, "start");
  event(py, tidy, "start");
  event(py, risky, "start");
  pyhost_value *j = NULL; /* the host's json is its own */
  if (pyhost_eval(py, "__import__('json').dumps('host')", &j) == PYHOST_OK)
    printf("the host's json.dumps('host') -> %s\n", pyhost_value_repr(py, j));
  pyhost_value_free(j);

  /* risky crashes: the call says how its process ended, the host goes on */
  rc = pyhost_plugin_call(py, risky, "crash", NULL, NULL, NULL);
  printf("risky.crash() -> %s (%s)\n", pyhost_status_name(rc),
         strstr(pyhost_errmsg(py), "SIGSEGV") || strstr(pyhost_errmsg(py), "access violation")
             ? "its process crashed"
             : pyhost_errmsg(py));
  event(py, counter, "after the crash");
  event(py, tidy, "after the crash");
  event(py, risky, "after the crash"); /* PYHOST_PROCESS until it is restarted */

  /* a fresh process, the plugin loaded anew: its state starts over */
  rc = pyhost_plugin_restart(py, risky);
  printf("restart -> %s\n", pyhost_status_name(rc));
  event(py, risky, "again");
  event(py, counter, "again");

  pyhost_plugin_unload(risky);
  pyhost_plugin_unload(tidy); /* ends its interpreter */
  pyhost_plugin_unload(counter);
  pyhost_module_free(py, app);
  pyhost_free(py);
  return 0;
}

#if defined(_WIN32)
#  include <process.h>
#  define own_pid() _getpid()
#else
#  include <unistd.h>
#  define own_pid() getpid()
#endif

static int app_host_pid(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv;
  return pyhost_ret_int(h, ret, (int64_t)own_pid());
}
