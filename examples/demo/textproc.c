/* textproc: a line-oriented text processor extended by Python plugins.
 *
 *   textproc [--python LIB] [--plugins DIR] [-o NAME=VALUE]... [FILE|-]
 *
 * Loads the plugins and calls their on_load() hooks.  Then reads lines from FILE (or
 * stdin), hands each one to every plugin's on_line(line) hook as a textproc.Line
 * object (properties text, number, dropped; method drop()), prints the lines that
 * survive, calls each plugin's on_end() hook and prints the counters plugins kept.  Plugins are the *.py files and package directories of
 * DIR whose names do not start with "_" or ".", in name order.  Python code sees the
 * host module `textproc`:
 *   emit(text)              print a line of output now
 *   count(name, n=1)        add n to a counter; returns its new value
 *   counter(name)           a counter's value (0 when never counted)
 *   option(name, default=None)  the value of -o NAME=VALUE, else default
 * A plugin that fails to load or raises in a hook is reported on stderr and disabled;
 * the others go on, and textproc exits with status 2.  The Python library comes from
 * --python, else PYHOST_PYTHON_LIBRARY, else discovery.  docs/demo.md has more.
 */
#include <pyhost.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLUGINS 32
#define MAX_COUNTERS 64
#define MAX_OPTIONS 16

struct counter { char *name; int64_t value; };
struct option { const char *name; size_t name_len; const char *value; };

static struct counter counters[MAX_COUNTERS];
static size_t n_counters;
static struct option options[MAX_OPTIONS];
static size_t n_options;

/* The C object behind a textproc.Line. */
struct line {
  char *text;
  int64_t number;
  int dropped;
};

static char *dup_text(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* ---- host functions ---- */

/* Reads args[i] as str into *s, or raises TypeError naming the function. */
static int str_arg(pyhost *h, const char *fn, const pyhost_value *const *args, size_t nargs,
                   size_t i, const char **s) {
  if (i >= nargs) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "%s() missing argument %d", fn, (int)i + 1);
  if (pyhost_value_to_str(h, args[i], s, NULL) != PYHOST_OK)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "%s() argument %d must be str, not %s", fn,
                        (int)i + 1, pyhost_value_type_name(args[i]));
  return PYHOST_OK;
}

static int fn_emit(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *text;
  int rc = str_arg(h, "emit", args, nargs, 0, &text);
  if (rc == PYHOST_OK) printf("%s\n", text);
  return rc;
}

static struct counter *find_counter(const char *name, int create) {
  for (size_t i = 0; i < n_counters; i++)
    if (strcmp(counters[i].name, name) == 0) return &counters[i];
  if (!create || n_counters == MAX_COUNTERS) return NULL;
  counters[n_counters].name = dup_text(name, strlen(name));
  return counters[n_counters].name ? &counters[n_counters++] : NULL;
}

static int fn_count(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  const char *name;
  int64_t n = 1;
  int rc = str_arg(h, "count", args, nargs, 0, &name);
  if (rc) return rc;
  const pyhost_value *nv = nargs > 1 ? args[1] : pyhost_value_lookup(kwargs, "n");
  if (nv && pyhost_value_to_int(h, nv, &n) != PYHOST_OK)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "count() n must be int, not %s",
                        pyhost_value_type_name(nv));
  struct counter *c = find_counter(name, 1);
  if (!c) return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "too many counters");
  c->value += n;
  *result = pyhost_value_int(c->value);
  return PYHOST_OK;
}

static int fn_counter(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                      const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *name;
  int rc = str_arg(h, "counter", args, nargs, 0, &name);
  if (rc) return rc;
  struct counter *c = find_counter(name, 0);
  *result = pyhost_value_int(c ? c->value : 0);
  return PYHOST_OK;
}

static int fn_option(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                     const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  const char *name;
  int rc = str_arg(h, "option", args, nargs, 0, &name);
  if (rc) return rc;
  for (size_t i = 0; i < n_options; i++)
    if (strlen(name) == options[i].name_len && memcmp(name, options[i].name, options[i].name_len) == 0) {
      *result = pyhost_value_str(options[i].value, PYHOST_STRLEN);
      return PYHOST_OK;
    }
  const pyhost_value *def = nargs > 1 ? args[1] : pyhost_value_lookup(kwargs, "default");
  *result = def ? pyhost_value_copy(def) : NULL;
  return PYHOST_OK;
}

/* ---- the Line type ---- */

static int line_get_text(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h, (void)ud;
  struct line *l = payload;
  *result = pyhost_value_str(l->text, PYHOST_STRLEN);
  return PYHOST_OK;
}

static int line_set_text(pyhost *h, void *payload, void *ud, const pyhost_value *value) {
  (void)ud;
  struct line *l = payload;
  const char *s;
  size_t n;
  if (pyhost_value_to_str(h, value, &s, &n) != PYHOST_OK)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Line.text must be str, not %s",
                        pyhost_value_type_name(value));
  if (memchr(s, '\n', n)) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "Line.text cannot contain a newline");
  char *copy = dup_text(s, n);
  if (!copy) return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "out of memory");
  free(l->text);
  l->text = copy;
  return PYHOST_OK;
}

static int line_get_number(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h, (void)ud;
  *result = pyhost_value_int(((struct line *)payload)->number);
  return PYHOST_OK;
}

static int line_get_dropped(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h, (void)ud;
  *result = pyhost_value_bool(((struct line *)payload)->dropped);
  return PYHOST_OK;
}

static int line_drop(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                     size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  ((struct line *)payload)->dropped = 1;
  return PYHOST_OK;
}

static const pyhost_method_def line_methods[] = {
  {"drop", line_drop, "drop()\n\nRemoves the line from the output; later plugins do not see it."},
};
static const pyhost_property_def line_properties[] = {
  {"text", line_get_text, line_set_text, "The line's text, without its newline."},
  {"number", line_get_number, NULL, "The line's number in the input, from 1."},
  {"dropped", line_get_dropped, NULL, "True once drop() was called."},
};

/* ---- plugins ---- */

struct plugin {
  pyhost_plugin *p;
  int failed;
};

static struct plugin plugins[MAX_PLUGINS];
static size_t n_plugins;
static int any_failure;

static void report(pyhost *h, const char *what) {
  fprintf(stderr, "textproc: %s: %s\n", what, pyhost_errmsg(h));
  any_failure = 1;
}

/* Calls hook in every plugin that has it and has not failed; a failure disables it. */
static void call_hook(pyhost *h, const char *hook, const pyhost_value *args, const struct line *l) {
  for (size_t i = 0; i < n_plugins; i++) {
    if (plugins[i].failed || (l && l->dropped)) continue;
    if (pyhost_plugin_has_hook(h, plugins[i].p, hook) != PYHOST_OK) continue;
    if (pyhost_plugin_call(h, plugins[i].p, hook, args, NULL, NULL) != PYHOST_OK) {
      char what[256];
      snprintf(what, sizeof what, "plugin %s disabled", pyhost_plugin_name(plugins[i].p));
      report(h, what);
      plugins[i].failed = 1;
    }
  }
}

/* The sorted names of dir's entries that are plugins, as a list value (own); the
 * listing is Python's, which is portable. */
static pyhost_value *plugin_names(pyhost *h, const char *dir) {
  static const char code[] =
      "def _textproc_plugins(d):\n"
      "    import os\n"
      "    return sorted(n for n in os.listdir(d) if n[0] not in '_.' and (n.endswith('.py')\n"
      "                  or os.path.isfile(os.path.join(d, n, '__init__.py'))))\n";
  pyhost_value *r = NULL, *arg = pyhost_value_str(dir, PYHOST_STRLEN);
  const pyhost_value *argv[] = {arg};
  if (pyhost_exec(h, code, "<textproc>") != PYHOST_OK ||
      pyhost_call_namev(h, "_textproc_plugins", argv, 1, NULL, &r) != PYHOST_OK)
    report(h, "cannot list the plugins");
  pyhost_value_free(arg);
  return r;
}

static void load_plugins(pyhost *h, const char *dir) {
  pyhost_value *names = plugin_names(h, dir);
  for (size_t i = 0; i < pyhost_value_count(names) && n_plugins < MAX_PLUGINS; i++) {
    const char *name;
    char path[4096];
    if (pyhost_value_to_str(h, pyhost_value_item(names, i), &name, NULL) != PYHOST_OK) continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    pyhost_plugin *p = NULL;
    if (pyhost_plugin_load(h, path, &p) != PYHOST_OK) {
      report(h, "a plugin failed to load");
      continue;
    }
    plugins[n_plugins++].p = p;
    /* say which hooks each plugin has: the host calls on_line and on_end */
    pyhost_value *hooks = NULL;
    printf("# plugin %s:", pyhost_plugin_name(p));
    if (pyhost_plugin_hooks(h, p, &hooks) == PYHOST_OK)
      for (size_t k = 0; k < pyhost_value_count(hooks); k++) {
        const char *hook;
        if (pyhost_value_to_str(h, pyhost_value_item(hooks, k), &hook, NULL) == PYHOST_OK)
          printf(" %s", hook);
      }
    printf("\n");
    pyhost_value_free(hooks);
  }
  pyhost_value_free(names);
  call_hook(h, "on_load", NULL, NULL);
}

/* ---- the main loop ---- */

static int process(pyhost *h, pyhost_type *line_type, FILE *in) {
  char buf[65536];
  int64_t number = 0;
  while (fgets(buf, sizeof buf, in)) {
    size_t n = strcspn(buf, "\r\n");
    struct line l = {dup_text(buf, n), ++number, 0};
    pyhost_value *obj = NULL, *args = pyhost_value_tuple();
    if (!l.text || !args || pyhost_object_new(h, line_type, &l, &obj) != PYHOST_OK) {
      report(h, "cannot make a Line");
      free(l.text);
      pyhost_value_free(args);
      return 1;
    }
    pyhost_value_append(args, obj); /* args owns obj now */
    call_hook(h, "on_line", args, &l);
    /* l lives on this stack frame only: a plugin that kept the Line gets
     * ReferenceError from now on instead of reading freed memory */
    pyhost_object_invalidate(h, obj, line_type);
    pyhost_value_free(args);
    if (!l.dropped) printf("%s\n", l.text);
    free(l.text);
  }
  call_hook(h, "on_end", NULL, NULL);
  return 0;
}

static int cmp_counter(const void *a, const void *b) {
  return strcmp(((const struct counter *)a)->name, ((const struct counter *)b)->name);
}

static int setup_module(pyhost *h, pyhost_module **mod, pyhost_type **line_type) {
  static const struct { const char *name; pyhost_function fn; const char *doc; } fns[] = {
    {"emit", fn_emit, "emit(text)\n\nPrints a line of output now."},
    {"count", fn_count, "count(name, n=1)\n\nAdds n to a counter and returns its value."},
    {"counter", fn_counter, "counter(name)\n\nA counter's value, 0 when never counted."},
    {"option", fn_option, "option(name, default=None)\n\nThe value of -o NAME=VALUE."},
  };
  int rc = pyhost_module_new(h, "textproc", "The textproc host's API for plugins.", mod);
  for (size_t i = 0; rc == PYHOST_OK && i < sizeof fns / sizeof fns[0]; i++)
    rc = pyhost_module_add_function(h, *mod, fns[i].name, fns[i].fn, NULL, fns[i].doc);
  pyhost_type_spec spec = {
    PYHOST_TYPE_SPEC_INIT,
    .name = "Line",
    .doc = "One input line, valid during the on_line call it is passed to.",
    .methods = line_methods, .n_methods = sizeof line_methods / sizeof line_methods[0],
    .properties = line_properties,
    .n_properties = sizeof line_properties / sizeof line_properties[0],
  };
  if (rc == PYHOST_OK) rc = pyhost_type_new(h, *mod, &spec, line_type);
  return rc;
}

static int usage(void) {
  fprintf(stderr, "usage: textproc [--python LIB] [--plugins DIR] [-o NAME=VALUE]... [FILE|-]\n");
  return 64;
}

int main(int argc, char **argv) {
  const char *library = NULL, *plugin_dir = NULL, *input = "-";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--python") == 0 && i + 1 < argc) library = argv[++i];
    else if (strcmp(argv[i], "--plugins") == 0 && i + 1 < argc) plugin_dir = argv[++i];
    else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && strchr(argv[i + 1], '=') &&
             n_options < MAX_OPTIONS) {
      const char *kv = argv[++i];
      options[n_options++] = (struct option){kv, (size_t)(strchr(kv, '=') - kv), strchr(kv, '=') + 1};
    } else if (argv[i][0] == '-' && argv[i][1]) return usage();
    else input = argv[i];
  }
  FILE *in = strcmp(input, "-") == 0 ? stdin : fopen(input, "r");
  if (!in) {
    perror(input);
    return 1;
  }

  pyhost_config *cfg = pyhost_config_new();
  if (library) pyhost_config_set_library(cfg, library);
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "textproc: cannot start Python: %s\n", pyhost_errmsg(h));
    pyhost_free(h);
    return 1;
  }
  pyhost_module *mod = NULL;
  pyhost_type *line_type = NULL;
  if (setup_module(h, &mod, &line_type) != PYHOST_OK) {
    fprintf(stderr, "textproc: cannot create the textproc module: %s\n", pyhost_errmsg(h));
    pyhost_free(h);
    return 1;
  }
  if (plugin_dir) load_plugins(h, plugin_dir);
  int status = process(h, line_type, in);
  if (in != stdin) fclose(in);

  qsort(counters, n_counters, sizeof counters[0], cmp_counter);
  for (size_t i = 0; i < n_counters; i++) {
    printf("# %s: %lld\n", counters[i].name, (long long)counters[i].value);
    free(counters[i].name);
  }
  for (size_t i = 0; i < n_plugins; i++) pyhost_plugin_unload(plugins[i].p);
  pyhost_type_free(h, line_type);
  pyhost_module_free(h, mod);
  pyhost_free(h);
  return status ? status : any_failure ? 2 : 0;
}
