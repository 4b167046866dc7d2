/* plugin_interp.c: the interpreter isolation level.  A plugin gets a sub-interpreter of
 * its own (runtime/subinterp.c), with its own sys.modules, sys.path, builtins and
 * __main__, and is loaded there as a shared-level plugin of plugin.c's: every call
 * enters the interpreter (this thread's thread state there, swapped in with the GIL
 * held), makes the host's modules there match the host's (hostmods.c, when they
 * changed), runs the shared level's call, and swaps back.  So a call means what it
 * means at the shared level, message for message.
 *
 * Objects of one interpreter never serve another: the bridge's per-interpreter state
 * (struct pyhost__istate: pyhost.function_data, the plugin loader, the eval cache,
 * __main__'s dict) is this record's first member, and values cross into and out of the
 * interpreter as data (an object value is refused, as at the process level).
 *
 * Unload ends the interpreter once no call runs in it, as the shared level frees a
 * plugin: at once, or, with calls of it running, as the last of them returns (those on
 * other threads are interrupted first, as at the process level).  Finalize ends every live one before
 * Py_FinalizeEx. */
#include "hostmods.h"
#include "plugin_level.h"

#include <string.h>

struct pyhost__pi {
  struct pyhost__istate is; /* first: the runtime's record of the interpreter points here */
  pyhost *h;
  char *name;
  char *path;               /* absolute, as the first load made it (a restart loads it) */
  char *deps_env;           /* its dependencies' environment, first on its sys.path; or NULL */
  struct pyhost__sub *sub;  /* NULL once ended */
  pyhost_plugin *inner;     /* the shared-level plugin in it */
  PyObject *mods;           /* the host's modules there (hostmods.c's state), strong */
  unsigned long mods_gen;   /* pyhost__bridge.modules_gen they match; 0: never made */
  /* calls inside, on every thread (GIL); unloaded: the last call out ends it */
  int calls;
  int doomed;
  /* once finalize has begun, the record is freed by the second of finalize's end of
   * the interpreter and the unload */
  _Atomic int let_go;
  struct pyhost__pi *next;          /* pyhost__bridge.interps: finalize ends them */
};

/* ---- entering ---- */

struct entry {
  PyGILState_STATE gil;
  struct pyhost__sub_saved saved;
};

/* With the GIL, in pi's interpreter: the host's modules there made to match. */
static void sync_mods(pyhost *h, struct pyhost__pi *pi, struct pyhost__wbuf *described,
                      unsigned long gen) {
  struct pyhost__rbuf r = {described->p, described->p + described->len, 0};
  char err[512] = "";
  if (pyhost__hostmods_apply_here(h, &pi->mods, &r, err, sizeof err) == 0) pi->mods_gen = gen;
}

/* Takes the GIL, enters pi's interpreter, with the host's modules up to date there:
 * PYHOST_OK (then leave), or an error with h's message set. */
static int enter(pyhost *h, struct pyhost__pi *pi, const char *fn, struct entry *e) {
  int rc = pyhost__enter(h, &e->gil);
  if (rc) return rc;
  if (!pi->sub || pi->doomed) {
    pyhost__leave(h, e->gil);
    return pyhost__set_error(h, PYHOST_MISUSE,
                             pi->doomed ? "%s: plugin %s was unloaded"
                                        : "%s: plugin %s has no interpreter (a restart failed, "
                                          "or finalize ended it)",
                             fn, pi->name);
  }
  /* counted first: describing, and from 3.13 entering, may let other threads run */
  pi->calls++;
  /* the description is made where the host's modules live, before entering */
  unsigned long gen = atomic_load(&pyhost__bridge.modules_gen);
  struct pyhost__wbuf described = {0};
  if (gen != pi->mods_gen) pyhost__hostmods_describe(h, &described);
  if ((rc = pyhost__sub_enter(h, pi->sub, &e->saved, pi->name))) {
    pyhost__wbuf_free(&described);
    pi->calls--;
    pyhost__leave(h, e->gil);
    return rc;
  }
  if (gen != pi->mods_gen && !described.nomem) sync_mods(h, pi, &described, gen);
  pyhost__wbuf_free(&described);
  return PYHOST_OK;
}

static void end_interp(struct pyhost__pi *pi);

static void leave(pyhost *h, struct pyhost__pi *pi, struct entry *e) {
  pyhost__sub_leave(&e->saved);
  if (--pi->calls == 0 && pi->doomed) end_interp(pi); /* unloaded during the call */
  pyhost__leave(h, e->gil);
}

/* ---- values cross as data ---- */

/* The first object value in v, or NULL. */
static const pyhost_value *object_in(const pyhost_value *v) {
  if (!v) return NULL;
  if (v->kind == PYHOST_KIND_OBJECT) return v;
  if (v->kind != PYHOST_KIND_LIST && v->kind != PYHOST_KIND_TUPLE && v->kind != PYHOST_KIND_DICT)
    return NULL;
  for (size_t i = 0; i < v->u.seq.n; i++) { /* a dict's keys and values: n counts both */
    const pyhost_value *o = object_in(v->u.seq.items[i]);
    if (o) return o;
  }
  return NULL;
}

static int object_refused(pyhost *h, struct pyhost__pi *pi, const pyhost_value *o, const char *what) {
  return pyhost__set_error(h, PYHOST_TYPE,
                           "plugin %s: %s a %s object, which cannot cross into or out of the "
                           "plugin's sub-interpreter (values cross as data there)",
                           pi->name, what, pyhost_value_type_name(o));
}

/* ---- the level's operations ---- */

/* A refused extension module's ImportError gets the way out appended. */
static int load_failed(pyhost *h, struct pyhost__pi *pi, int rc) {
  const char *msg = pyhost_errmsg(h);
  if (rc != PYHOST_PYEXC || !strstr(msg, "ImportError") ||
      !(strstr(msg, "interpreter") || strstr(msg, "more than once")))
    return rc;
  const char *type = pyhost_errtype(h), *text = pyhost_errtext(h);
  char *copy = pyhost__strdup(msg);
  if (copy) {
    pyhost__set_error(h, rc,
                      "%s\nplugin %s imports a C extension module that refuses to live in a "
                      "sub-interpreter (%s: %s); load it at the process level "
                      "(PYHOST_ISOLATION_PROCESS), or at the shared level",
                      copy, pi->name, type[0] ? type : "ImportError", text);
    pyhost__free(copy);
  }
  return rc;
}

/* With the GIL, in pi's interpreter: drops everything of the bridge's there. */
static void drop_state(void *data) {
  struct pyhost__pi *pi = data;
  if (pi->inner) pyhost_plugin_unload(pi->inner);
  pi->inner = NULL;
  PyObject *mods = pi->mods;
  pi->mods = NULL;
  PY.Py_DecRef(mods);
  pyhost__plugin_loader_clear(&pi->is);
  pyhost__eval_cache_clear(&pi->is);
  PyObject *main = pi->is.main_dict;
  pi->is.main_dict = NULL;
  PY.Py_DecRef(main);
  /* the types last: the functions above used them; a loan's exporter keeps its own,
   * and an instance of a host type its type */
  pyhost__hosttypes_drop(&pi->is);
  pyhost__hostmem_spare_drop(&pi->is);
  PyTypeObject *t = pi->is.fnself_type, *m = pi->is.hostmem_type;
  pi->is.fnself_type = pi->is.hostmem_type = NULL;
  PY.Py_DecRef((PyObject *)t);
  PY.Py_DecRef((PyObject *)m);
}

static void pi_free(struct pyhost__pi *pi) {
  pyhost__free(pi->deps_env);
  pyhost__free(pi->path);
  pyhost__free(pi->name);
  pyhost__free(pi);
}

static void unlist(struct pyhost__pi *pi) {
  struct pyhost__pi **l = &pyhost__bridge.interps;
  while (*l && *l != pi) l = &(*l)->next;
  if (*l) *l = pi->next;
}

/* With the GIL, no call inside: ends pi's interpreter and frees pi. */
static void end_interp(struct pyhost__pi *pi) {
  unlist(pi);
  if (pi->sub) pyhost__sub_end(pi->sub, drop_state);
  pi_free(pi);
}

/* With the GIL, in the plugin's interpreter: dir first on its sys.path.  0, or -1 with
 * a Python exception set. */
static int path_first(const char *dir) {
  PyObject *sys = PY.PyImport_ImportModule("sys");
  PyObject *path = sys ? PY.PyObject_GetAttrString(sys, "path") : NULL;
  PyObject *d = path ? PY.PyUnicode_DecodeUTF8(dir, (Py_ssize_t)strlen(dir), "surrogateescape")
                     : NULL;
  int r = d ? PY.PyList_Insert(path, 0, d) : -1;
  PY.Py_DecRef(d);
  PY.Py_DecRef(path);
  PY.Py_DecRef(sys);
  return r;
}

/* With the GIL: a new interpreter for pi, the plugin at path loaded there. */
static int start(pyhost *h, struct pyhost__pi *pi, const char *path) {
  int rc = pyhost__sub_new(h, pi, &pi->sub);
  if (rc) return rc;
  pi->mods_gen = 0;
  struct entry e;
  if ((rc = enter(h, pi, "pyhost_plugin_load_with", &e)) == PYHOST_OK) {
    PyObject *main = PY.PyImport_AddModule("__main__"); /* borrowed */
    if (!(pi->is.main_dict = main ? PY.PyModule_GetDict(main) : NULL))
      rc = pyhost__take_exception(h, "loading plugin: its interpreter has no __main__");
    PY.Py_IncRef(pi->is.main_dict);
    if (rc == PYHOST_OK && pi->deps_env && (rc = path_first(pi->deps_env)))
      rc = pyhost__take_exception(h, "loading a plugin: putting its dependencies on sys.path");
    if (rc == PYHOST_OK && (rc = pyhost_plugin_load(h, path, &pi->inner)))
      rc = load_failed(h, pi, rc);
    if (rc == PYHOST_OK && !pi->path && !(pi->path = pyhost__strdup(pyhost_plugin_path(pi->inner))))
      rc = pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", pi->name);
    leave(h, pi, &e);
  }
  if (rc) {
    pyhost__sub_end(pi->sub, drop_state);
    pi->sub = NULL;
  }
  return rc;
}

/* With the GIL as finalize ends calls: every live interpreter ends (the calls in it
 * have returned: finalize drained them). */
static void end_all(void) {
  while (pyhost__bridge.interps) {
    struct pyhost__pi *pi = pyhost__bridge.interps;
    pyhost__bridge.interps = pi->next;
    if (pi->sub) pyhost__sub_end(pi->sub, drop_state);
    pi->sub = NULL;
    pi->next = NULL;
    if (atomic_exchange(&pi->let_go, 1)) pi_free(pi); /* else its unload frees it */
  }
}

static int load(pyhost *h, pyhost_plugin *p, const char *name, const char *path,
                const pyhost_plugin_options *o, void **impl) {
  (void)p;
  struct pyhost__pi *pi = pyhost__calloc(1, sizeof *pi);
  if (!pi || !(pi->name = pyhost__strdup(name)) ||
      (o->deps_env && o->deps_env[0] && !(pi->deps_env = pyhost__strdup(o->deps_env)))) {
    if (pi) pi_free(pi);
    return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", name);
  }
  pi->h = h;
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) {
    pi_free(pi);
    return rc;
  }
  if ((rc = start(h, pi, path)) == PYHOST_OK) {
    pi->next = pyhost__bridge.interps;
    pyhost__bridge.interps = pi;
    pyhost__teardown_add(&pyhost__bridge.interps_hook, end_all, PYHOST__AT_DROP);
    *impl = pi;
  }
  pyhost__leave(h, gil);
  if (rc) pi_free(pi);
  return rc;
}

static int has_hook(pyhost *h, void *impl, const char *hook) {
  struct pyhost__pi *pi = impl;
  struct entry e;
  int rc = enter(h, pi, "pyhost_plugin_has_hook", &e);
  if (rc) return rc;
  rc = pyhost_plugin_has_hook(h, pi->inner, hook);
  leave(h, pi, &e);
  return rc;
}

static int hooks(pyhost *h, void *impl, pyhost_value **names) {
  struct pyhost__pi *pi = impl;
  struct entry e;
  int rc = enter(h, pi, "pyhost_plugin_hooks", &e);
  if (rc) return rc;
  rc = pyhost_plugin_hooks(h, pi->inner, names);
  leave(h, pi, &e);
  return rc;
}

static int call(pyhost *h, void *impl, const char *hook, const pyhost_value *args,
                const pyhost_value *kwargs, pyhost_value **result) {
  struct pyhost__pi *pi = impl;
  const pyhost_value *o = object_in(args);
  if (o || (o = object_in(kwargs))) return object_refused(h, pi, o, "an argument is");
  struct entry e;
  int rc = enter(h, pi, "pyhost_plugin_call", &e);
  if (rc) return rc;
  rc = pyhost_plugin_call(h, pi->inner, hook, args, kwargs, result);
  if (rc == PYHOST_OK && result && (o = object_in(*result))) {
    char what[256];
    pyhost__fmt(what, sizeof what, "hook %s returned", hook);
    rc = object_refused(h, pi, o, what);
    pyhost_value_free(*result); /* in the interpreter: it holds the object */
    *result = NULL;
  }
  leave(h, pi, &e);
  return rc;
}

static int callf(pyhost *h, void *impl, const char *hook, const char *fmt, va_list *ap) {
  struct pyhost__pi *pi = impl;
  struct entry e;
  int rc = enter(h, pi, "pyhost_plugin_callf", &e);
  if (rc) return rc;
  rc = pyhost__plugin_callv(h, pi->inner, hook, fmt, ap);
  leave(h, pi, &e);
  return rc;
}

static int module(pyhost *h, void *impl, pyhost_value **out) {
  struct pyhost__pi *pi = impl;
  (void)out;
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "pyhost_plugin_module: plugin %s runs in a sub-interpreter of its "
                           "own, and its module cannot leave it; pyhost_plugin_module_name "
                           "names it there",
                           pi->name);
}

static int reload(pyhost *h, void *impl) {
  struct pyhost__pi *pi = impl;
  struct entry e;
  int rc = enter(h, pi, "pyhost_plugin_reload", &e);
  if (rc) return rc;
  rc = pyhost_plugin_reload(h, pi->inner);
  leave(h, pi, &e);
  return rc;
}

static int restart(pyhost *h, void *impl) {
  struct pyhost__pi *pi = impl;
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (pi->calls > 0) {
    rc = pyhost__set_error(h, PYHOST_MISUSE,
                           "pyhost_plugin_restart: plugin %s has a call running; restart it "
                           "after the call returns",
                           pi->name);
  } else if (!pi->inner && !pi->path) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_restart: plugin %s was never loaded",
                           pi->name);
  } else {
    if (pi->sub) pyhost__sub_end(pi->sub, drop_state); /* drops inner, keeps path */
    pi->sub = NULL;
    rc = start(h, pi, pi->path);
  }
  pyhost__leave(h, gil);
  return rc;
}

static void unload(void *impl) {
  struct pyhost__pi *pi = impl;
  PyGILState_STATE gil;
  if (!pyhost__inflight_free_begin(&gil)) {
    /* finalize has begun: it ends the interpreter (end_all); the second of the two
     * frees the record */
    if (atomic_exchange(&pi->let_go, 1)) pi_free(pi);
    return;
  }
  pi->doomed = 1;
  if (pi->calls == 0) {
    end_interp(pi);
  } else if (!pyhost__sub_inside(pi->sub)) {
    /* calls on other threads: interrupted (3.9+; before, no other thread reaches the
     * interpreter), and the last one out ends it (leave) */
    pyhost__inflight_interrupt_sub(pi->sub);
  } /* else from inside a call of its own: that call finishes first */
  pyhost__inflight_free_end(gil);
}

static const char *path_of(const void *impl) {
  const struct pyhost__pi *pi = impl;
  return pi->path ? pi->path : "";
}

static const char *module_name_of(const void *impl) {
  const struct pyhost__pi *pi = impl;
  return pi->inner ? pyhost_plugin_module_name(pi->inner) : "";
}

const struct pyhost__plugin_level pyhost__plugin_interpreter = {
    PYHOST_ISOLATION_INTERPRETER, load, has_hook, hooks, call, callf, module, reload, restart,
    unload, path_of, module_name_of, NULL};
