/* plugin_level.h: the seam between the plugin API (plugin.c, which is the shared level
 * itself) and the isolation levels that run a plugin elsewhere: the process level
 * (plugin_proc.c) and the interpreter level (plugin_interp.c).  plugin.c keeps the handle, its
 * name and the level (which plugin_options.c's pyhost_plugin_load_with picks); every call on a handle of another level goes to that level's
 * operations with the level's own record (impl).  A level never calls back into
 * plugin.c. */
#ifndef PYHOST_PLUGIN_LEVEL_H
#define PYHOST_PLUGIN_LEVEL_H

#include "internal.h"
#include "deps.h"

#include <stdarg.h>

/* What pyhost_plugin_options holds (plugin_options.c). */
struct pyhost_plugin_options {
  int isolation;                /* pyhost_isolation */
  /* the process level's */
  pyhost_config *python;        /* the worker's Python; NULL: the host's */
  char *worker;                 /* the worker program; NULL: found */
  uint64_t memory_limit;        /* bytes, 0: none */
  unsigned cpu_seconds;         /* 0: none */
  unsigned call_timeout_ms;     /* 0: none */
  unsigned kill_grace_ms;       /* after the interrupt, before the kill */
  pyhost_output_fn output;      /* NULL: the host's own stdout/stderr */
  void *output_ctx;
  /* every level's: the plugin's dependencies (plugin_deps.c) */
  int deps_mode;                /* pyhost_deps_mode */
  char **requirements;          /* the host's, as given */
  size_t n_requirements;
  char *deps_cache;             /* NULL: the default root */
  pyhost_deps_progress_fn progress;
  void *progress_ctx;
  /* set by pyhost_plugin_load_with on its own copy, for the level: the prepared
   * environment, to go first on the plugin's sys.path ("" or NULL: none), and the
   * Python chosen for the plugin's requires-python (process level; NULL: none) */
  const char *deps_env;
  const char *deps_library;
};

/* A plugin's prepared dependencies (plugin_deps.c): what a load made ready. */
struct pyhost__plugin_deps {
  char env[PYHOST__PATH_MAX]; /* "" when none */
  char *installed;            /* "installed NAME VERSION" lines (own) */
  char *library;              /* process level: the Python chosen for requires-python (own) */
};

/* Reads what the plugin at path declares, merges the host's requirements, picks the
 * Python for the level (the host's; at the process level o's or one meeting
 * requires-python) and prepares the environment.  Called without the GIL.  PYHOST_OK
 * with *d filled (d->env "" when there is nothing to prepare), or the status with h's
 * message naming the plugin. */
int pyhost__plugin_deps_prepare(pyhost *h, const char *name, const char *path,
                                const pyhost_plugin_options *o, struct pyhost__plugin_deps *d);
void pyhost__plugin_deps_clear(struct pyhost__plugin_deps *d);

/* PYHOST_OK when o's options fit its level, else PYHOST_MISUSE naming the one that
 * does not (fn names the caller). */
int pyhost__plugin_options_check(pyhost *h, const pyhost_plugin_options *o, const char *fn);

/* One isolation level's plugin operations.  Each has the meaning of the public call of
 * the same name; h is checked by the level; impl is what load made. */
struct pyhost__plugin_level {
  int isolation; /* pyhost_isolation */
  /* p: the public handle (its name set), for what the level reports about it */
  int (*load)(pyhost *h, pyhost_plugin *p, const char *name, const char *path,
              const pyhost_plugin_options *o, void **impl);
  int (*has_hook)(pyhost *h, void *impl, const char *hook);
  int (*hooks)(pyhost *h, void *impl, pyhost_value **names);
  int (*call)(pyhost *h, void *impl, const char *hook, const pyhost_value *args,
              const pyhost_value *kwargs, pyhost_value **result);
  int (*callf)(pyhost *h, void *impl, const char *hook, const char *fmt, va_list *ap);
  int (*module)(pyhost *h, void *impl, pyhost_value **module);
  int (*reload)(pyhost *h, void *impl);
  int (*restart)(pyhost *h, void *impl);
  /* frees impl (at once, or when the call running it returns) */
  void (*unload)(void *impl);
  const char *(*path)(const void *impl);
  const char *(*module_name)(const void *impl);
  long (*process_id)(const void *impl);
};

/* The process level: the host's side (plugin_proc.c), and the main of the worker
 * program its plugins run in (worker.c; worker/pyhost_worker.c calls it). */
extern const struct pyhost__plugin_level pyhost__plugin_process;
/* The interpreter level (plugin_interp.c): a shared-level plugin of this file's, loaded
 * inside a sub-interpreter of its own. */
extern const struct pyhost__plugin_level pyhost__plugin_interpreter;

/* A new handle for the plugin at path (a non-NULL path and out: checked by the
 * caller), loaded at level with o (plugin.c).  PYHOST_OK, or the level's status. */
int pyhost__plugin_load_at(pyhost *h, const char *path, const struct pyhost__plugin_level *level,
                           const pyhost_plugin_options *o, pyhost_plugin **out);
/* pyhost_plugin_load at the shared level, with the dependencies o asks for (plugin.c;
 * o may be NULL). */
int pyhost__plugin_load_shared(pyhost *h, const char *path, const pyhost_plugin_options *o,
                               pyhost_plugin **out);
/* pyhost_plugin_callf with its arguments in ap (plugin.c). */
int pyhost__plugin_callv(pyhost *h, pyhost_plugin *p, const char *hook, const char *fmt,
                         va_list *ap);
/* Drops is's plugin loader module (plugin.c; with the GIL, in is's interpreter). */
void pyhost__plugin_loader_clear(struct pyhost__istate *is);
int pyhost__worker_main(int argc, char **argv);

/* Messages the levels share with plugin.c, so that a call means the same at each. */
#define PYHOST__HOOK_RAISED "plugin %s: hook %s raised"
/* pyhost_plugin_callf's name in its messages (a result of the wrong type names both) */
#define PYHOST__CALLF_NAMED "pyhost_plugin_callf: plugin %s: hook %s"

#endif
