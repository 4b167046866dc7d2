/* plugins.c: the example of docs/plugins.md.  Loads two plugins that define the same
 * names, calls their hooks, shows a missing hook and a reload.
 *   example_plugins PLUGIN_DIR [PYTHON_LIBRARY] */
#include <pyhost.h>
#include <stdio.h>

/* Calls hook(kind) in plugin p and prints what came back, or the error. */
static void event(pyhost *py, pyhost_plugin *p, const char *hook, const char *kind) {
  pyhost_value *args = pyhost_value_tuple(), *result = NULL;
  pyhost_value_append(args, pyhost_value_str(kind, PYHOST_STRLEN));
  int rc = pyhost_plugin_call(py, p, hook, args, NULL, &result);
  const char *text;
  if (rc == PYHOST_OK && pyhost_value_to_str(py, result, &text, NULL) == PYHOST_OK)
    printf("%s.%s(%s) -> %s\n", pyhost_plugin_name(p), hook, kind, text);
  else
    printf("%s.%s(%s) failed: %s: %s\n", pyhost_plugin_name(p), hook, kind,
           pyhost_status_name(rc), pyhost_errmsg(py));
  pyhost_value_free(result);
  pyhost_value_free(args);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN_DIR [PYTHON_LIBRARY]\n", argv[0]);
    return 64;
  }
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

  char path[4096];
  pyhost_plugin *hello = NULL, *greeter = NULL;
  snprintf(path, sizeof path, "%s/hello.py", argv[1]);
  if (pyhost_plugin_load(py, path, &hello) != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }
  snprintf(path, sizeof path, "%s/greeter", argv[1]);
  if (pyhost_plugin_load(py, path, &greeter) != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }

  /* the hooks each plugin defines */
  pyhost_plugin *all[] = {hello, greeter};
  for (int i = 0; i < 2; i++) {
    pyhost_value *hooks = NULL;
    if (pyhost_plugin_hooks(py, all[i], &hooks) == PYHOST_OK)
      printf("%s hooks: %s\n", pyhost_plugin_name(all[i]), pyhost_value_repr(py, hooks));
    pyhost_value_free(hooks);
  }

  /* on_load is optional: call it where it exists */
  for (int i = 0; i < 2; i++) {
    if (pyhost_plugin_has_hook(py, all[i], "on_load") == PYHOST_OK)
      pyhost_plugin_call(py, all[i], "on_load", NULL, NULL, NULL);
    else
      printf("%s\n", pyhost_errmsg(py)); /* "plugin greeter has no hook on_load" */
  }

  /* both define `seen` and on_event: each has its own */
  event(py, hello, "on_event", "start");
  event(py, greeter, "on_event", "start");
  event(py, hello, "on_event", "stop");
  event(py, greeter, "on_quit", "now"); /* PYHOST_NOHOOK */

  /* reload: new modules from the same files; hello's `seen` starts over */
  if (pyhost_plugin_reload(py, hello) == PYHOST_OK) event(py, hello, "on_event", "again");

  pyhost_plugin_unload(hello);
  pyhost_plugin_unload(greeter);
  pyhost_free(py);
  return 0;
}
