/* plugin_options.c: pyhost_plugin_options, the options of one plugin load (see
 * pyhost.h, "isolation levels"), built as pyhost_config is, and
 * pyhost_plugin_load_with, which loads at the level they name. */
#include "bridge.h"
#include "plugin_level.h"

#include <string.h>

pyhost_plugin_options *pyhost_plugin_options_new(void) {
  return pyhost__calloc(1, sizeof(pyhost_plugin_options));
}

void pyhost_plugin_options_free(pyhost_plugin_options *o) {
  if (!o) return;
  pyhost_config_free(o->python);
  pyhost__free(o->worker);
  pyhost_plugin_options_add_requirement(o, NULL);
  pyhost__free(o->deps_cache);
  pyhost__free(o);
}

int pyhost_plugin_options_set_isolation(pyhost_plugin_options *o, int isolation) {
  if (!o || isolation < PYHOST_ISOLATION_SHARED || isolation > PYHOST_ISOLATION_PROCESS)
    return PYHOST_MISUSE;
  o->isolation = isolation;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_python(pyhost_plugin_options *o, const pyhost_config *cfg) {
  if (!o) return PYHOST_MISUSE;
  pyhost_config *copy = NULL;
  if (cfg) {
    if (!(copy = pyhost_config_new())) return PYHOST_NOMEM;
    if (pyhost__config_copy(copy, cfg) != PYHOST_OK) {
      pyhost_config_free(copy);
      return PYHOST_NOMEM;
    }
  }
  pyhost_config_free(o->python);
  o->python = copy;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_worker(pyhost_plugin_options *o, const char *path) {
  if (!o) return PYHOST_MISUSE;
  char *copy = NULL;
  if (path && !(copy = pyhost__strdup(path))) return PYHOST_NOMEM;
  pyhost__free(o->worker);
  o->worker = copy;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_memory_limit(pyhost_plugin_options *o, uint64_t bytes) {
  if (!o) return PYHOST_MISUSE;
  o->memory_limit = bytes;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_cpu_limit(pyhost_plugin_options *o, unsigned seconds) {
  if (!o) return PYHOST_MISUSE;
  o->cpu_seconds = seconds;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_call_timeout(pyhost_plugin_options *o, unsigned timeout_ms,
                                           unsigned grace_ms) {
  if (!o) return PYHOST_MISUSE;
  o->call_timeout_ms = timeout_ms;
  o->kill_grace_ms = grace_ms;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_output(pyhost_plugin_options *o, pyhost_output_fn fn, void *ctx) {
  if (!o) return PYHOST_MISUSE;
  o->output = fn;
  o->output_ctx = fn ? ctx : NULL;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_deps(pyhost_plugin_options *o, int mode) {
  if (!o || mode < PYHOST_DEPS_OFF || mode > PYHOST_DEPS_HOST_ONLY) return PYHOST_MISUSE;
  o->deps_mode = mode;
  return PYHOST_OK;
}

int pyhost_plugin_options_add_requirement(pyhost_plugin_options *o, const char *requirement) {
  if (!o) return PYHOST_MISUSE;
  if (!requirement) {
    pyhost__deps_free_list(o->requirements, o->n_requirements);
    o->requirements = NULL;
    o->n_requirements = 0;
    return PYHOST_OK;
  }
  char name[256];
  if (pyhost__req_name(requirement, name, sizeof name) != 0) return PYHOST_MISUSE;
  char **grown = pyhost__realloc(o->requirements, (o->n_requirements + 1) * sizeof *grown);
  if (!grown) return PYHOST_NOMEM;
  o->requirements = grown;
  if (!(grown[o->n_requirements] = pyhost__strdup(requirement))) return PYHOST_NOMEM;
  o->n_requirements++;
  if (o->deps_mode == PYHOST_DEPS_OFF) o->deps_mode = PYHOST_DEPS_DECLARED;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_deps_cache(pyhost_plugin_options *o, const char *dir) {
  if (!o) return PYHOST_MISUSE;
  char *copy = NULL;
  if (dir && !(copy = pyhost__strdup(dir))) return PYHOST_NOMEM;
  pyhost__free(o->deps_cache);
  o->deps_cache = copy;
  return PYHOST_OK;
}

int pyhost_plugin_options_set_progress(pyhost_plugin_options *o, pyhost_deps_progress_fn fn,
                                       void *ctx) {
  if (!o) return PYHOST_MISUSE;
  o->progress = fn;
  o->progress_ctx = fn ? ctx : NULL;
  return PYHOST_OK;
}

int pyhost__plugin_options_check(pyhost *h, const pyhost_plugin_options *o, const char *fn) {
  if (o->isolation == PYHOST_ISOLATION_PROCESS) return PYHOST_OK;
  const char *set = o->python ? "the Python (pyhost_plugin_options_set_python)"
                    : o->worker ? "the worker program (pyhost_plugin_options_set_worker)"
                    : o->memory_limit ? "a memory limit"
                    : o->cpu_seconds ? "a CPU time limit"
                    : o->call_timeout_ms ? "a call timeout"
                    : o->output ? "an output function"
                    : NULL;
  if (set)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "%s: %s applies to the process isolation level only "
                             "(PYHOST_ISOLATION_PROCESS); this plugin is loaded at the %s level",
                             fn, set, o->isolation == PYHOST_ISOLATION_SHARED ? "shared" : "interpreter");
  return PYHOST_OK;
}

/* The dispatch to the levels lives here, not in plugin.c: the interpreter level is
 * built on plugin.c's shared level, so plugin.c names no level (no circle of files). */
int pyhost_plugin_load_with(pyhost *h, const char *path, const pyhost_plugin_options *o,
                            pyhost_plugin **out) {
  static const char fn[] = "pyhost_plugin_load_with";
  if (out) *out = NULL;
  if (!o || o->isolation == PYHOST_ISOLATION_SHARED) {
    int rc = o && pyhost__handle_running(h) ? pyhost__plugin_options_check(h, o, fn) : PYHOST_OK;
    return rc ? rc : pyhost__plugin_load_shared(h, path, o, out);
  }
  if (!pyhost__handle_running(h)) return pyhost_plugin_load(h, path, out); /* its refusal */
  int rc = pyhost__plugin_options_check(h, o, fn);
  if (rc) return rc;
  if (!path || !out)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, path ? "out" : "path");
  return pyhost__plugin_load_at(h, path,
                                o->isolation == PYHOST_ISOLATION_PROCESS ? &pyhost__plugin_process
                                                                         : &pyhost__plugin_interpreter,
                                o, out);
}
