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

/* The process level's choice when the host's Python does not meet spec: the first
 * acceptable Python discovery finds under base's policy (its library left out) that
 * does.  PYHOST_OK, or PYHOST_VERSION / PYHOST_NOMEM with err. */
static int another_python(const pyhost_config *base, const char *spec, struct pyhost__deps_python *py,
                          char **chosen, char *err, size_t cap) {
  pyhost_config *cfg = pyhost_config_new();
  int rc = !cfg || pyhost__config_copy(cfg, base) != PYHOST_OK ||
                   pyhost_config_set_library(cfg, NULL) != PYHOST_OK
               ? PYHOST_NOMEM
               : pyhost__deps_python_of_config(cfg, spec, py, chosen, err, cap) != 0 ? PYHOST_VERSION
                                                                                     : PYHOST_OK;
  pyhost_config_free(cfg);
  if (rc == PYHOST_NOMEM) pyhost__fmt(err, cap, "out of memory");
  return rc;
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
  if (process && !o->python) return another_python(&h->cfg, spec, py, chosen, err, cap);
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
  if (!path || !env || !msg || !env_cap || !msg_cap || (o && !pyhost__options_live(o)))
    return PYHOST_MISUSE;
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

int pyhost_python_meets(const char *requires_python, unsigned long hexversion, char *why,
                        size_t cap) {
  char text[512];
  if (!requires_python) {
    pyhost__fmt(why && cap ? why : text, why && cap ? cap : sizeof text, "requires_python is NULL");
    return PYHOST_MISUSE;
  }
  int m = pyhost__python_spec_match(requires_python, hexversion, why && cap ? why : text,
                                    why && cap ? cap : sizeof text);
  return m == 1 ? PYHOST_OK : m == 0 ? PYHOST_VERSION : PYHOST_MISUSE;
}

int pyhost_python_for(const pyhost_config *cfg, const char *requires_python, char *library,
                      size_t cap, char *why, size_t why_cap) {
  if (!requires_python || !library || !cap || !why || !why_cap) return PYHOST_MISUSE;
  library[0] = why[0] = '\0';
  pyhost_config *defaults = cfg ? NULL : pyhost_config_new();
  if (!cfg && !(cfg = defaults)) return PYHOST_NOMEM;
  char meets[512]; /* what pyhost_python_meets says, unused beyond its status */
  struct pyhost__deps_python py;
  char *chosen = NULL;
  int rc = pyhost_python_meets(requires_python, 0x03000000UL, meets, sizeof meets);
  if (rc == PYHOST_MISUSE) {
    pyhost__fmt(why, why_cap, "%s", meets);
  } else if (pyhost__deps_python_of_config(cfg, NULL, &py, &chosen, why, why_cap) != 0) {
    rc = PYHOST_NOTFOUND; /* the host's own: what a host with cfg would run */
  } else if ((rc = pyhost_python_meets(requires_python, py.hexversion, meets, sizeof meets)) == PYHOST_OK) {
    pyhost__fmt(library, cap, "%s", py.library);
    pyhost__fmt(why, why_cap, "the host's Python (the one discovery takes) meets it");
  } else {
    char host[64];
    pyhost__fmt(host, sizeof host, "%lu.%lu.%lu", py.hexversion >> 24, (py.hexversion >> 16) & 0xFF,
                (py.hexversion >> 8) & 0xFF);
    pyhost__free(chosen);
    chosen = NULL;
    rc = another_python(cfg, requires_python, &py, &chosen, why, why_cap);
    if (rc == PYHOST_OK) {
      pyhost__fmt(library, cap, "%s", chosen ? chosen : py.library);
      pyhost__fmt(why, why_cap,
                  "the host's Python, %s (the one discovery takes), does not meet it; this is the "
                  "first acceptable one discovery finds that does",
                  host);
    }
  }
  pyhost__free(chosen);
  pyhost_config_free(defaults);
  return rc;
}
