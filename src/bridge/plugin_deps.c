/* plugin_deps.c: a plugin's own dependencies at its load (pyhost.h, "a plugin's own
 * dependencies"): the declaration read, the host's requirements merged, the Python
 * picked for the level, the environment prepared (src/deps does the work), and at the
 * shared level the check that two plugins' environments agree.  Also
 * pyhost_deps_prepare, the same for a script (`pyhost --deps FILE`). */
#include "bridge.h"
#include "plugin_level.h"

#include <string.h>

void pyhost__plugin_deps_clear(struct pyhost__plugin_deps *d) {
  pyhost__free(d->installed);
  pyhost__free(d->library);
  memset(d, 0, sizeof *d);
}

/* What o asks for, as the deps layer takes it. */
static void want_of(const pyhost_plugin_options *o, struct pyhost__deps_want *w) {
  memset(w, 0, sizeof *w);
  if (!o) {
    w->mode = PYHOST_DEPS_DECLARED;
    return;
  }
  w->mode = o->deps_mode;
  w->host_reqs = o->requirements;
  w->host_n = o->n_requirements;
  w->cache = o->deps_cache;
  w->progress = o->progress;
  w->progress_ctx = o->progress_ctx;
}

/* The Python a level runs the plugin on: the host's at the shared and interpreter
 * levels; at the process level o's, or the host's, or (when the host's does not meet
 * requires-python and o names none) the first one discovery finds that does. */
static int pick_python(pyhost *h, const pyhost_plugin_options *o, const struct pyhost__deps_decl *decl,
                       struct pyhost__deps_python *py, char **chosen, char *err, size_t cap) {
  const char *spec = decl->requires_python;
  char why[512];
  int process = o && o->isolation == PYHOST_ISOLATION_PROCESS;
  if (process && o->python) {
    if (pyhost__deps_python_of_config(o->python, spec, py, chosen, err, cap) != 0) return PYHOST_NOTFOUND;
  } else if (pyhost__deps_python_of_handle(h, py, err, cap) != 0) {
    return PYHOST_NOTFOUND;
  }
  if (!spec || pyhost__python_spec_match(spec, py->hexversion, why, sizeof why) == 1) return PYHOST_OK;
  if (process && !o->python) {
    pyhost_config *cfg = pyhost_config_new();
    int rc = !cfg || pyhost__config_copy(cfg, &h->cfg) != PYHOST_OK ||
                     pyhost_config_set_library(cfg, NULL) != PYHOST_OK
                 ? PYHOST_NOMEM
                 : pyhost__deps_python_of_config(cfg, spec, py, chosen, err, cap) != 0 ? PYHOST_VERSION
                                                                                       : PYHOST_OK;
    pyhost_config_free(cfg);
    if (rc == PYHOST_NOMEM) pyhost__fmt(err, cap, "out of memory");
    return rc;
  }
  pyhost__fmt(err, cap, "%s (%s:%d)%s", why, decl->source, decl->requires_python_line,
              process ? ": the Python set with pyhost_plugin_options_set_python must meet it"
                      : "; at the process level (PYHOST_ISOLATION_PROCESS) pyhost picks a Python that meets it");
  return PYHOST_VERSION;
}

/* The shared core of a plugin's and a script's preparation: errors into err. */
static int prepare(pyhost *h, const char *who, const char *path, const pyhost_plugin_options *o,
                   const pyhost_config *python, struct pyhost__plugin_deps *d, char *err, size_t cap) {
  struct pyhost__deps_want w;
  want_of(o, &w);
  memset(d, 0, sizeof *d);
  if (w.mode == PYHOST_DEPS_OFF) return PYHOST_OK;
  struct pyhost__deps_decl decl;
  memset(&decl, 0, sizeof decl);
  if (w.mode == PYHOST_DEPS_DECLARED && pyhost__deps_read(path, &decl, err, cap) != 0) return PYHOST_DEPS;
  char **reqs = NULL;
  size_t n = 0;
  int m = pyhost__deps_merge(&decl, &w, &reqs, &n, err, cap), rc = PYHOST_OK;
  struct pyhost__deps_python py;
  memset(&py, 0, sizeof py);
  if (m != 0) {
    rc = m == -1 ? PYHOST_NOMEM : PYHOST_MISUSE;
    if (m == -1) pyhost__fmt(err, cap, "out of memory");
  } else if (!n && !decl.requires_python) {
    rc = PYHOST_OK; /* nothing declared */
  } else if (h) {
    rc = pick_python(h, o, &decl, &py, &d->library, err, cap);
  } else if (pyhost__deps_python_of_config(python, decl.requires_python, &py, &d->library, err, cap) != 0) {
    rc = PYHOST_NOTFOUND;
  } else if (decl.requires_python) {
    char why[512];
    if (pyhost__python_spec_match(decl.requires_python, py.hexversion, why, sizeof why) != 1) {
      pyhost__fmt(err, cap, "%s (%s:%d)", why, decl.source, decl.requires_python_line);
      rc = PYHOST_VERSION;
    }
  }
  if (rc == PYHOST_OK && n) {
    struct pyhost__deps_job job = {w.cache, reqs, n, &py, w.progress, w.progress_ctx, who};
    rc = pyhost__deps_prepare(&job, d->env, sizeof d->env, &d->installed, err, cap);
  }
  pyhost__deps_free_list(reqs, n);
  pyhost__deps_decl_clear(&decl);
  if (rc) pyhost__plugin_deps_clear(d);
  return rc;
}

int pyhost__plugin_deps_prepare(pyhost *h, const char *name, const char *path,
                                const pyhost_plugin_options *o, struct pyhost__plugin_deps *d) {
  char who[300];
  pyhost__fmt(who, sizeof who, "plugin %s", name);
  char *err = pyhost__malloc(PYHOST__MSG_HEAD + 1024);
  if (!err) return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", name);
  err[0] = '\0';
  int rc = prepare(h, who, path, o, NULL, d, err, PYHOST__MSG_HEAD + 1024);
  if (rc)
    pyhost__set_error(h, rc, "loading plugin %s from %s failed: its dependencies: %s", name, path, err);
  pyhost__free(err);
  return rc;
}

int pyhost_deps_prepare(const char *path, const pyhost_plugin_options *o, pyhost_config *python,
                        char *env, size_t env_cap, char *msg, size_t msg_cap) {
  if (!path || !env || !msg || !env_cap || !msg_cap) return PYHOST_MISUSE;
  env[0] = msg[0] = '\0';
  char who[PYHOST__PATH_MAX + 16];
  pyhost__fmt(who, sizeof who, "script %s", path);
  struct pyhost__plugin_deps d;
  int rc = prepare(NULL, who, path, o, python, &d, msg, msg_cap);
  if (rc == PYHOST_OK) {
    pyhost__fmt(env, env_cap, "%s", d.env);
    if (d.library && python && !python->library && pyhost_config_set_library(python, d.library) != PYHOST_OK)
      rc = PYHOST_NOMEM;
  }
  pyhost__plugin_deps_clear(&d);
  return rc;
}
