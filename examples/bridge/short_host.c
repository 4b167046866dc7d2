/* short_host.c: a whole host in the short forms (docs/getting-started.md): the Python
 * library from the command line, a host function with declared arguments, a plugin
 * that imports json and calls it, a hook called in one line with a keyword argument
 * and a typed result, and the traceback when the plugin raises.
 *   short_host LIBPYTHON PLUGIN.py */
#include <pyhost.h>
#include <stdio.h>
#include <string.h>

/* app.scale(x, factor=2.0) -> x * factor */
static int scale(pyhost *py, void *userdata, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)userdata;
  return pyhost_ret_float(py, ret, argv[0].u.d * argv[1].u.d);
}

int main(int argc, char **argv) {
  if (argc != 3) return fprintf(stderr, "usage: short_host LIBPYTHON PLUGIN.py\n"), 2;
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, argv[1]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  pyhost_module *app = NULL;
  pyhost_plugin *plugin = NULL;
  if (!rc) rc = pyhost_module_new(py, "app", "The host's functions.", &app);
  if (!rc) rc = pyhost_module_add_typed_function(py, app, "scale(x: float, factor: float = 2.0)",
                                                 scale, NULL, "x times factor");
  if (!rc) rc = pyhost_plugin_load(py, argv[2], &plugin);
  for (int i = 0; i < 2 && !rc; i++) {
    double total = 0;
    rc = pyhost_plugin_callf(py, plugin, "score", "s,weight=i>d", i ? "[1, 2," : "[1, 2, 3.5]",
                             3, &total);
    if (!rc) printf("score: %g\n", total);
  }
  const char *msg = pyhost_errmsg(py), *last = strrchr(msg, '\n');
  if (rc) printf("the plugin failed: %s\n", last ? last + 1 : msg); /* its last line */
  if (rc) fprintf(stderr, "%s\n", msg);                              /* the traceback */
  pyhost_plugin_unload(plugin);
  pyhost_module_free(py, app);
  pyhost_free(py);
  return rc == PYHOST_PYEXC ? 0 : 1; /* the second call is meant to fail */
}
