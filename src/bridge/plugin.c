/* plugin.c: plugins, Python files or packages loaded each into a namespace of its own.
 *
 * The import mechanics are Python (LOADER below, run once into the module
 * "_pyhost_plugins" in sys.modules), because importlib is the one way to give a file
 * a real module with working relative imports on every version from 3.6; this file
 * keeps the C side: handles, hooks, values, errors.
 *
 * Naming: a plugin gets a fresh top-level name "_pyhost_plugin_<name>_<n>" (n counts
 * loads in the process), so two plugins never share a module, and reloading one
 * creates new modules instead of mutating live ones.
 *   - a package directory d/ is that module itself, with __path__ [d];
 *   - a file d/x.py is "<top>.x" under a synthetic package <top> whose __path__ is
 *     [d], so `from . import helper` finds d/helper.py for that plugin alone.
 * Siblings are reached by relative imports only: putting d on sys.path would put
 * "helper" in the global sys.modules, shared (and clobbered) between plugins.
 * Plugin code is always compiled from source (never from __pycache__), so a reload
 * sees an edit made within the same second, and plugin folders get no .pyc files.
 */
#include "bridge.h"
#include "callf.h"
#include "plugin_level.h"
#include "callf.h"

#include <string.h>

/* The loader's file name in tracebacks: frames from it are cut from load errors. */
#define LOADER_FILE "<pyhost plugin loader>"

static const char LOADER[] =
    "import importlib.machinery, importlib.util, os, sys\n"
    "PREFIX = '_pyhost_plugin_'\n"
    "HERE = '" LOADER_FILE "'\n"
    "_count = [0]\n"
    "class SourceLoader(importlib.machinery.SourceFileLoader):\n"
    "    def get_code(self, fullname):\n"
    "        return self.source_to_code(self.get_data(self.path), self.path)\n"
    "def spec(name, path, locations):\n"
    "    return importlib.util.spec_from_file_location(name, path,\n"
    "        loader=SourceLoader(name, path), submodule_search_locations=locations)\n"
    "class Finder(object):\n"
    "    @classmethod\n"
    "    def find_spec(cls, fullname, path=None, target=None):\n"
    "        if not fullname.startswith(PREFIX) or '.' not in fullname or not path:\n"
    "            return None\n"
    "        tail = fullname.rpartition('.')[2]\n"
    "        for d in path:\n"
    "            base = os.path.join(d, tail)\n"
    "            init = os.path.join(base, '__init__.py')\n"
    "            if os.path.isfile(init):\n"
    "                return spec(fullname, init, [base])\n"
    "            if os.path.isfile(base + '.py'):\n"
    "                return spec(fullname, base + '.py', None)\n"
    "        return None\n"
    "sys.meta_path.insert(0, Finder)\n"
    "def forget(top):\n"
    "    for k in [k for k in sys.modules if k == top or k.startswith(top + '.')]:\n"
    "        del sys.modules[k]\n"
    "def outside(tb):\n"
    "    while tb is not None and (tb.tb_frame.f_code.co_filename == HERE\n"
    "            or tb.tb_frame.f_code.co_filename.startswith('<frozen ')):\n"
    "        tb = tb.tb_next\n"
    "    return tb\n"
    "def load(path, name):\n"
    "    _count[0] += 1\n"
    "    ident = ''.join(c if c.isalnum() or c == '_' else '_' for c in name)\n"
    "    top = '%s%s_%d' % (PREFIX, ident, _count[0])\n"
    "    if os.path.isdir(path):\n"
    "        init = os.path.join(path, '__init__.py')\n"
    "        if not os.path.isfile(init):\n"
    "            raise ImportError('%s is a directory without __init__.py' % path)\n"
    "        modname, s = top, spec(top, init, [path])\n"
    "    elif os.path.isfile(path):\n"
    "        pkg = importlib.util.module_from_spec(\n"
    "            importlib.machinery.ModuleSpec(top, None, is_package=True))\n"
    "        pkg.__path__ = [os.path.dirname(path)]\n"
    "        sys.modules[top] = pkg\n"
    "        modname = top + '.' + ident\n"
    "        s = spec(modname, path, None)\n"
    "    else:\n"
    "        raise ImportError('%s: no such file or directory' % path)\n"
    "    module = importlib.util.module_from_spec(s)\n"
    "    sys.modules[modname] = module\n"
    "    try:\n"
    "        exec(s.loader.get_code(modname), module.__dict__)\n"
    "    except BaseException as e:\n"
    "        forget(top)\n"
    "        raise e.with_traceback(outside(e.__traceback__))\n"
    "    if modname != top:\n"
    "        setattr(sys.modules[top], ident, module)\n"
    "    return top, modname, module\n"
    "def add_path(p):\n"
    "    if p not in sys.path:\n"
    "        sys.path.insert(0, p)\n"
    "    importlib.invalidate_caches()\n"
    "def drop_path(p):\n"
    "    while p in sys.path:\n"
    "        sys.path.remove(p)\n"
    "def hooks(module, top):\n"
    "    out = []\n"
    "    for k, v in list(vars(module).items()):\n"
    "        if k.startswith('_') or isinstance(v, type) or not callable(v):\n"
    "            continue\n"
    "        m = getattr(v, '__module__', None) or ''\n"
    "        if m == top or m.startswith(top + '.'):\n"
    "            out.append(k)\n"
    "    return out\n";

struct pyhost_plugin {
  pyhost *h;
  char *name;        /* file stem or directory name */
  char *path;        /* absolute */
  char *top;         /* "_pyhost_plugin_<name>_<n>": everything under it is the plugin's */
  char *module_name; /* the plugin's own module (top, or top.<name> for a file) */
  PyObject *module;  /* strong reference; NULL once unloaded while a hook of it ran */
  /* Calls of its hooks on the C stack (GIL held).  pyhost_plugin_unload from inside a
   * hook (a host function the hook reached) sets doomed, and the last call out frees
   * the record: the call still names the plugin in its messages. */
  int busy, doomed;
  PyObject *kept; /* the last borrowed result of pyhost_plugin_callf (>s, >y), or NULL */
  /* A plugin of another isolation level: its operations and its record there (NULL:
   * this file's shared level).  Its calls run without the GIL, from any threads at
   * once: lbusy counts them (and an unload in progress), and the last one out of a
   * doomed plugin frees the handle. */
  const struct pyhost__plugin_level *level;
  void *impl;
  _Atomic int lbusy;
  /* its dependencies' environment (NULL: none), and at the shared level what it holds
   * ("installed NAME VERSION" lines) and its link in pyhost__istate()->shared_deps (its interpreter's) */
  char *deps_env;
  char *deps_installed;
  struct pyhost_plugin *deps_next;
  int deps_linked;
};

/* The loader's module (pyhost__istate()->plugin_loader): made and run once per
 * interpreter, kept by a strong reference until finalize (or the end of its
 * sub-interpreter).  It is also registered as
 * sys.modules["_pyhost_plugins"] for tracebacks and introspection, but never looked up
 * there: Python code may remove or replace that entry, and plugins must keep loading. */

/* Makes the loader's module and runs LOADER in it: new reference or NULL with a
 * Python exception set. */
static PyObject *loader_make(void) {
  PyObject *mod = PY.PyModule_New("_pyhost_plugins");
  PyObject *dict = mod ? PY.PyModule_GetDict(mod) : NULL; /* borrowed from mod */
  PyObject *code = dict && PY.PyDict_SetItemString(dict, "__builtins__", PY.PyEval_GetBuiltins()) == 0
                       ? PY.Py_CompileString(LOADER, LOADER_FILE, Py_file_input)
                       : NULL;
  PyObject *r = code ? PY.PyEval_EvalCode(code, dict, dict) : NULL;
  PY.Py_DecRef(code);
  if (!r || PY.PyDict_SetItemString(PY.PyImport_GetModuleDict(), "_pyhost_plugins", mod) < 0) {
    PY.Py_DecRef(r);
    PY.Py_DecRef(mod);
    return NULL;
  }
  PY.Py_DecRef(r);
  return mod;
}

void pyhost__plugin_loader_clear(struct pyhost__istate *is) {
  PyObject *old = is->plugin_loader;
  is->plugin_loader = NULL;
  PY.Py_DecRef(old);
}

/* With the GIL, before Py_FinalizeEx (its teardown hook). */
static void main_loader_clear(void) {
  pyhost__plugin_loader_clear(&pyhost__bridge.main);
}

/* The loader's function `fn` (new reference), running LOADER the first time in this
 * interpreter.  NULL with a Python exception set. */
static PyObject *loader_fn(const char *fn) {
  struct pyhost__istate *is = pyhost__istate();
  if (!is->plugin_loader) {
    if (!(is->plugin_loader = loader_make())) return NULL;
    if (is == &pyhost__bridge.main) /* a sub-interpreter's goes with it */
      pyhost__teardown_add(&pyhost__bridge.plugin_loader_hook, main_loader_clear, PYHOST__AT_DROP);
  }
  return PY.PyObject_GetAttrString(is->plugin_loader, fn);
}

/* Calls the loader's function fn(a[, b]): new reference, or NULL with an exception. */
static PyObject *loader_call(const char *fn, PyObject *a, PyObject *b) {
  PyObject *f = a ? loader_fn(fn) : NULL;
  PyObject *r = f ? PY.PyObject_CallFunctionObjArgs(f, a, b, NULL) : NULL;
  PY.Py_DecRef(f);
  return r;
}

static PyObject *path_object(const char *path) {
  return PY.PyUnicode_DecodeUTF8(path, (Py_ssize_t)strlen(path), "surrogateescape");
}

/* The plugin's name: the last path component without a trailing ".py". */
static char *name_of(const char *path) {
  size_t end = strlen(path);
  while (end > 1 && (path[end - 1] == '/' || path[end - 1] == '\\')) end--;
  size_t start = end;
  while (start > 0 && path[start - 1] != '/' && path[start - 1] != '\\') start--;
  size_t n = end - start;
  if (n > 3 && memcmp(path + start + n - 3, ".py", 3) == 0) n -= 3;
  return pyhost__memdup(path + start, n);
}

/* The absolute form of path, by os.path.abspath: new reference or NULL. */
static PyObject *abspath(PyObject *path) {
  PyObject *os = PY.PyImport_ImportModule("os.path");
  PyObject *fn = os ? PY.PyObject_GetAttrString(os, "abspath") : NULL;
  PyObject *r = fn ? PY.PyObject_CallFunctionObjArgs(fn, path, NULL) : NULL;
  PY.Py_DecRef(fn);
  PY.Py_DecRef(os);
  return r;
}

/* Reports a failed load.  The traceback's first entry is the loader's own frame: it
 * is dropped, so the message starts at the plugin's file (a SyntaxError shows file,
 * line and the caret). */
static int load_error(pyhost *h, const char *name, const char *path) {
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  PY.PyErr_Fetch(&type, &value, &tb);
  if (type) PY.PyErr_NormalizeException(&type, &value, &tb);
  PyObject *next = tb ? PY.PyObject_GetAttrString(tb, "tb_next") : NULL;
  PY.PyErr_Clear();
  if (next == PY._Py_NoneStruct) {
    PY.Py_DecRef(next);
    next = NULL;
  }
  if (value && tb) PY.PyException_SetTraceback(value, next ? next : PY._Py_NoneStruct);
  PY.Py_DecRef(tb);
  PY.PyErr_Restore(type, value, next);
  char context[PYHOST__PATH_MAX + 256];
  pyhost__fmt(context, sizeof context, "loading plugin %s from %s failed", name, path);
  return pyhost__take_exception(h, context);
}

/* Runs the loader on p's path: on success replaces p's module, names and top (the
 * old top is forgotten); on failure leaves p as it was. */
static int load_into(pyhost *h, pyhost_plugin *p) {
  PyObject *path = path_object(p->path);
  PyObject *name = path ? PY.PyUnicode_FromString(p->name) : NULL;
  PyObject *r = name ? loader_call("load", path, name) : NULL;
  PY.Py_DecRef(name);
  PY.Py_DecRef(path);
  if (!r) return load_error(h, p->name, p->path);
  char *top = pyhost__utf8_copy(PY.PyTuple_GetItem(r, 0), NULL);
  char *modname = top ? pyhost__utf8_copy(PY.PyTuple_GetItem(r, 1), NULL) : NULL;
  PyObject *module = PY.PyTuple_GetItem(r, 2);
  int rc = PYHOST_OK;
  if (!modname) {
    pyhost__free(top);
    PY.PyErr_Clear();
    rc = pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", p->name);
    PY.Py_DecRef(loader_call("forget", PY.PyTuple_GetItem(r, 0), NULL));
    PY.PyErr_Clear();
  } else {
    PY.Py_IncRef(module);
    PY.Py_DecRef(p->module);
    p->module = module;
    pyhost__free(p->top);
    pyhost__free(p->module_name);
    p->top = top;
    p->module_name = modname;
  }
  PY.Py_DecRef(r);
  return rc;
}

/* Removes the plugin's modules from sys.modules (with the GIL). */
static void forget(pyhost_plugin *p) {
  PYHOST__ASSERT_GIL();
  if (!p->top) return;
  PyObject *top = PY.PyUnicode_FromString(p->top);
  PY.Py_DecRef(loader_call("forget", top, NULL));
  PY.Py_DecRef(top);
  PY.PyErr_Clear();
}

static void plugin_free(pyhost_plugin *p) {
  pyhost__free(p->deps_env);
  pyhost__free(p->deps_installed);
  pyhost__free(p->name);
  pyhost__free(p->path);
  pyhost__free(p->top);
  pyhost__free(p->module_name);
  pyhost__free(p);
}

/* ---- the shared level's dependencies: one sys.path for every shared plugin ---- */

/* The version of package name in "installed NAME VERSION" lines, into out: 1 when
 * there. */
static int version_in(const char *installed, const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  for (const char *l = installed; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    if (len > 10 + n && !memcmp(l, "installed ", 10) && !memcmp(l + 10, name, n) && l[10 + n] == ' ') {
      pyhost__fmt(out, cap, "%.*s", (int)(len - 11 - n), l + 11 + n);
      return 1;
    }
    l += e ? len + 1 : len;
  }
  return 0;
}

/* PYHOST_OK when every package in installed has the version the earlier shared
 * plugins' environments have, else PYHOST_DEPS naming both plugins, the package and
 * the versions (with the GIL). */
static int deps_agree(pyhost *h, const char *name, const char *path, const char *installed) {
  for (pyhost_plugin *q = pyhost__istate()->shared_deps; q; q = q->deps_next) {
    for (const char *l = installed; l && *l;) {
      const char *e = strchr(l, '\n');
      size_t len = e ? (size_t)(e - l) : strlen(l);
      char line[512], theirs[128];
      pyhost__fmt(line, sizeof line, "%.*s", (int)len, l);
      char *pkg = line + 10, *ver = strchr(pkg, ' ');
      if (ver && !strncmp(line, "installed ", 10)) {
        *ver++ = '\0';
        if (version_in(q->deps_installed, pkg, theirs, sizeof theirs) && strcmp(theirs, ver) != 0)
          return pyhost__set_error(
              h, PYHOST_DEPS,
              "loading plugin %s from %s failed: its dependencies disagree with plugin %s's at the "
              "shared level: plugin %s needs %s %s, plugin %s has %s %s (from %s); the plugins of "
              "the host's interpreter share one sys.path and one sys.modules, so a package has one "
              "version there: load one of them at the interpreter or process level "
              "(pyhost_plugin_options_set_isolation)",
              name, path, q->name, name, pkg, ver, q->name, pkg, theirs, q->deps_env);
      }
      l += e ? len + 1 : len;
    }
  }
  return PYHOST_OK;
}

/* Unlinks p from the shared plugins with an environment: 1 when another one has the
 * same environment. */
static int deps_list_remove(pyhost_plugin *p) {
  int shared = 0;
  for (pyhost_plugin **at = &pyhost__istate()->shared_deps; p->deps_linked && *at;) {
    if (*at == p) *at = p->deps_next;
    else {
      shared |= !strcmp((*at)->deps_env, p->deps_env);
      at = &(*at)->deps_next;
    }
  }
  p->deps_linked = 0;
  return shared;
}

/* Unlinks p, and takes its environment off sys.path when no other plugin has it (with
 * the GIL). */
static void deps_unlink(pyhost_plugin *p) {
  if (!p->deps_linked || deps_list_remove(p)) return;
  PyObject *env = path_object(p->deps_env);
  PY.Py_DecRef(loader_call("drop_path", env, NULL));
  PY.Py_DecRef(env);
  PY.PyErr_Clear();
}

/* pyhost_plugin_load_with at the shared level with dependencies: they are prepared
 * (without the GIL), checked against the other shared plugins', put first on
 * sys.path, and the plugin loaded. */
static int load_shared_deps(pyhost *h, const char *path, const pyhost_plugin_options *o,
                            pyhost_plugin **out) {
  if (!pyhost__handle_running(h) || !path || !out) return pyhost_plugin_load(h, path, out); /* its refusal */
  char *name = name_of(path);
  if (!name) return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", path);
  struct pyhost__plugin_deps d;
  int rc = pyhost__plugin_deps_prepare(h, name, path, o, &d);
  char *env = rc || !d.env[0] ? NULL : pyhost__strdup(d.env);
  if (rc || !d.env[0]) {
    pyhost__free(name);
    pyhost__plugin_deps_clear(&d);
    return rc ? rc : pyhost_plugin_load(h, path, out);
  }
  PyGILState_STATE gil;
  if (!env) rc = pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", name);
  else rc = pyhost__enter(h, &gil);
  if (rc == PYHOST_OK) {
    if ((rc = deps_agree(h, name, path, d.installed)) == PYHOST_OK) {
      PyObject *p = path_object(env);
      PyObject *r = p ? loader_call("add_path", p, NULL) : NULL;
      PY.Py_DecRef(p);
      if (!r) rc = pyhost__take_exception(h, "loading a plugin: putting its dependencies on sys.path");
      PY.Py_DecRef(r);
    }
    if (rc == PYHOST_OK && (rc = pyhost_plugin_load(h, path, out)) == PYHOST_OK) {
      pyhost_plugin *p = *out;
      p->deps_env = env;
      p->deps_installed = d.installed;
      d.installed = NULL;
      env = NULL;
      p->deps_next = pyhost__istate()->shared_deps;
      pyhost__istate()->shared_deps = p;
      p->deps_linked = 1;
    } else if (env) {
      /* nothing else of this load stays: its environment goes unless a plugin uses it */
      int used = 0;
      for (pyhost_plugin *q = pyhost__istate()->shared_deps; q; q = q->deps_next) used |= !strcmp(q->deps_env, env);
      if (!used && rc != PYHOST_DEPS) {
        PyObject *p = path_object(env);
        PY.Py_DecRef(loader_call("drop_path", p, NULL));
        PY.Py_DecRef(p);
        PY.PyErr_Clear();
      }
    }
    pyhost__leave(h, gil);
  }
  pyhost__free(env);
  pyhost__free(name);
  pyhost__plugin_deps_clear(&d);
  return rc;
}

const char *pyhost_plugin_deps_env(const pyhost_plugin *p) {
  return p && p->deps_env ? p->deps_env : "";
}

/* ---- plugins of another isolation level: each call goes to its level ---- */

/* Counts a call of level plugin p in: 0, or PYHOST_MISUSE once it was unloaded. */
static int level_in(pyhost *h, pyhost_plugin *p, const char *fn) {
  atomic_fetch_add(&p->lbusy, 1);
  if (!p->doomed) return PYHOST_OK;
  atomic_fetch_sub(&p->lbusy, 1);
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin %s was unloaded", fn, p->name);
}

/* Counts it out; the last one out of an unloaded plugin frees it. */
static int level_out(pyhost_plugin *p, int rc) {
  if (atomic_fetch_sub(&p->lbusy, 1) == 1 && p->doomed) plugin_free(p);
  return rc;
}

#define LEVEL_CALL(h, p, fn, call)                                                          \
  do {                                                                                     \
    if ((p) && (p)->level) {                                                               \
      int level_rc_ = level_in(h, p, fn);                                                  \
      return level_rc_ ? level_rc_ : level_out(p, (p)->level->call);                       \
    }                                                                                      \
  } while (0)

int pyhost__plugin_load_shared(pyhost *h, const char *path, const pyhost_plugin_options *o,
                               pyhost_plugin **out) {
  return o && o->deps_mode != PYHOST_DEPS_OFF ? load_shared_deps(h, path, o, out)
                                              : pyhost_plugin_load(h, path, out);
}

int pyhost__plugin_load_at(pyhost *h, const char *path, const struct pyhost__plugin_level *level,
                           const pyhost_plugin_options *o, pyhost_plugin **out) {
  pyhost_plugin *p = pyhost__calloc(1, sizeof *p);
  if (!p || !(p->name = name_of(path))) {
    pyhost__free(p);
    return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", path);
  }
  p->h = h;
  p->level = level;
  /* the level puts the environment first on the plugin's sys.path where it runs */
  struct pyhost__plugin_deps d;
  int rc = pyhost__plugin_deps_prepare(h, p->name, path, o, &d);
  pyhost_plugin_options level_opts = *o;
  level_opts.deps_env = d.env;
  level_opts.deps_library = d.library;
  if (rc == PYHOST_OK && d.env[0] && !(p->deps_env = pyhost__strdup(d.env)))
    rc = pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", path);
  if (rc == PYHOST_OK) rc = p->level->load(h, p, p->name, path, &level_opts, &p->impl);
  pyhost__plugin_deps_clear(&d);
  if (rc) {
    plugin_free(p);
    return rc;
  }
  *out = p;
  return PYHOST_OK;
}

int pyhost_plugin_isolation(const pyhost_plugin *p) {
  return p && p->level ? p->level->isolation : PYHOST_ISOLATION_SHARED;
}

long pyhost_plugin_process_id(const pyhost_plugin *p) {
  return p && p->level && p->level->process_id ? p->level->process_id(p->impl) : 0;
}

int pyhost_plugin_restart(pyhost *h, pyhost_plugin *p) {
  LEVEL_CALL(h, p, "pyhost_plugin_restart", restart(h, p->impl));
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  rc = p ? pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_plugin_restart: plugin %s is loaded at the shared level, in "
                             "the host's own interpreter: a fresh start needs an isolated level "
                             "(pyhost_plugin_load_with); pyhost_plugin_reload reloads its code",
                             p->name)
         : pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_restart: plugin is NULL");
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_plugin_load(pyhost *h, const char *path, pyhost_plugin **out) {
  if (out) *out = NULL;
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  pyhost_plugin *p = NULL;
  PyObject *abs = NULL;
  if (!path || !out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_load: %s is NULL", path ? "out" : "path");
    goto done;
  }
  if (!(p = pyhost__calloc(1, sizeof *p)) || !(p->name = name_of(path))) {
    rc = pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", path);
    goto done;
  }
  p->h = h;
  PyObject *given = path_object(path);
  abs = given ? abspath(given) : NULL;
  PY.Py_DecRef(given);
  if (!abs || !(p->path = pyhost__utf8_copy(abs, NULL))) {
    rc = pyhost__take_exception(h, "pyhost_plugin_load: cannot make the path absolute");
    goto done;
  }
  if ((rc = load_into(h, p)) == PYHOST_OK) {
    *out = p;
    p = NULL;
  }
done:
  PY.Py_DecRef(abs);
  if (p) plugin_free(p);
  pyhost__leave(h, gil);
  return rc;
}

/* pyhost__enter plus the check every call on a loaded plugin makes.  (A plugin of
 * another handle cannot be passed: only one pyhost runs per process.) */
static int enter_plugin(pyhost *h, pyhost_plugin *p, const char *fn, PyGILState_STATE *gil) {
  int rc = pyhost__enter(h, gil);
  if (rc || (p && !p->doomed)) return rc;
  pyhost__leave(h, *gil);
  if (p) /* unloaded from inside one of its hooks, which is still running */
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin %s was unloaded", fn, p->name);
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin is NULL", fn);
}

/* The hook's callable (new reference), or NULL with h's message set and *rc. */
static PyObject *find_hook(pyhost *h, pyhost_plugin *p, const char *hook, int *rc) {
  if (!hook) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE, "plugin %s: the hook name is NULL", p->name);
    return NULL;
  }
  PyObject *fn = PY.PyObject_GetAttrString(p->module, hook);
  if (!fn) {
    if (PY.PyErr_ExceptionMatches(*PY.PyExc_AttributeError)) {
      PY.PyErr_Clear();
      *rc = pyhost__set_error(h, PYHOST_NOHOOK, "plugin %s has no hook %s", p->name, hook);
    } else {
      char context[512];
      pyhost__fmt(context, sizeof context, "plugin %s: looking up hook %s failed", p->name, hook);
      *rc = pyhost__take_exception(h, context);
    }
    return NULL;
  }
  if (!PY.PyCallable_Check(fn)) {
    char type[256];
    PyObject *t = PY.PyObject_Type(fn);
    pyhost__type_name(t, type, sizeof type);
    PY.Py_DecRef(t);
    PY.Py_DecRef(fn);
    *rc = pyhost__set_error(h, PYHOST_NOHOOK, "plugin %s has no hook %s (%s is a %s, not callable)",
                            p->name, hook, hook, type);
    return NULL;
  }
  return fn;
}

int pyhost_plugin_has_hook(pyhost *h, pyhost_plugin *p, const char *hook) {
  LEVEL_CALL(h, p, "pyhost_plugin_has_hook", has_hook(h, p->impl, hook));
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_has_hook", &gil);
  if (rc) return rc;
  PY.Py_DecRef(find_hook(h, p, hook, &rc));
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_plugin_hooks(pyhost *h, pyhost_plugin *p, pyhost_value **names) {
  if (names) *names = NULL;
  LEVEL_CALL(h, p, "pyhost_plugin_hooks", hooks(h, p->impl, names));
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_hooks", &gil);
  if (rc) return rc;
  if (!names) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_hooks: names is NULL");
  } else {
    PyObject *top = PY.PyUnicode_FromString(p->top);
    PyObject *list = top ? loader_call("hooks", p->module, top) : NULL;
    if (!list || !(*names = pyhost__from_python(h, list)))
      rc = pyhost__take_exception(h, "pyhost_plugin_hooks: listing the hooks failed");
    PY.Py_DecRef(list);
    PY.Py_DecRef(top);
  }
  pyhost__leave(h, gil);
  return rc;
}

/* The positional arguments as a tuple (new reference); NULL with *rc and the message
 * set when args is neither NULL, a list nor a tuple, or with a Python exception. */
static PyObject *args_tuple(pyhost *h, pyhost_plugin *p, const pyhost_value *args, int *rc) {
  pyhost_kind k = pyhost_value_kind(args);
  if (args && k != PYHOST_KIND_LIST && k != PYHOST_KIND_TUPLE) {
    *rc = pyhost__set_error(h, PYHOST_TYPE, "plugin %s: the arguments must be a tuple or a list, not %s",
                            p->name, pyhost_value_type_name(args));
    return NULL;
  }
  size_t n = pyhost_value_count(args);
  PyObject *t = PY.PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    PyObject *item = pyhost__to_python(h, pyhost_value_item(args, i));
    if (!item || PY.PyTuple_SetItem(t, (Py_ssize_t)i, item) < 0) {
      PY.Py_DecRef(t);
      t = NULL;
    }
  }
  if (!t) {
    char context[256];
    pyhost__fmt(context, sizeof context, "plugin %s: converting the arguments failed", p->name);
    *rc = pyhost__take_exception(h, context);
  }
  return t;
}

int pyhost_plugin_call(pyhost *h, pyhost_plugin *p, const char *hook, const pyhost_value *args,
                       const pyhost_value *kwargs, pyhost_value **result) {
  if (result) *result = NULL;
  LEVEL_CALL(h, p, "pyhost_plugin_call", call(h, p->impl, hook, args, kwargs, result));
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_call", &gil);
  if (rc) return rc;
  PyObject *fn = NULL, *pargs = NULL, *pkw = NULL, *r = NULL;
  char context[512];
  PYHOST__ASSERT_GIL(); /* busy is the GIL's */
  p->busy++;
  if (kwargs && pyhost_value_kind(kwargs) != PYHOST_KIND_DICT) {
    rc = pyhost__set_error(h, PYHOST_TYPE, "plugin %s: the keyword arguments must be a dict, not %s",
                           p->name, pyhost_value_type_name(kwargs));
  } else if ((fn = find_hook(h, p, hook, &rc)) && (pargs = args_tuple(h, p, args, &rc))) {
    if (kwargs && !(pkw = pyhost__to_python(h, kwargs))) {
      pyhost__fmt(context, sizeof context, "plugin %s: converting the keyword arguments failed", p->name);
      rc = pyhost__take_exception(h, context);
    } else if (!(r = PY.PyObject_Call(fn, pargs, pkw))) {
      pyhost__fmt(context, sizeof context, PYHOST__HOOK_RAISED, p->name, hook);
      rc = pyhost__take_exception(h, context);
    } else if (result && !(*result = pyhost__from_python(h, r))) {
      pyhost__fmt(context, sizeof context, "plugin %s: converting the result of %s failed", p->name, hook);
      rc = pyhost__take_exception(h, context);
    }
  }
  PY.Py_DecRef(r);
  PY.Py_DecRef(pkw);
  PY.Py_DecRef(pargs);
  PY.Py_DecRef(fn);
  if (--p->busy == 0 && p->doomed) plugin_free(p); /* unloaded by the hook */
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_plugin_callf(pyhost *h, pyhost_plugin *p, const char *hook, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = pyhost__plugin_callv(h, p, hook, fmt, &ap);
  va_end(ap);
  return rc;
}

int pyhost__plugin_callv(pyhost *h, pyhost_plugin *p, const char *hook, const char *fmt,
                         va_list *ap) {
  if (p && p->level) {
    int rc = level_in(h, p, "pyhost_plugin_callf");
    return rc ? rc : level_out(p, p->level->callf(h, p->impl, hook, fmt, ap));
  }
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_callf", &gil);
  if (rc) return rc;
  PYHOST__ASSERT_GIL();
  p->busy++; /* as in pyhost_plugin_call: a hook that unloads p frees it on the way out */
  struct pyhost__callf_borrowed b; /* written to the caller only once p is known to live */
  b.holder = NULL;
  PyObject *fn = find_hook(h, p, hook, &rc);
  if (fn) {
    char raised[512], named[512]; /* a result or an argument of the wrong type names both */
    pyhost__fmt(raised, sizeof raised, PYHOST__HOOK_RAISED, p->name, hook);
    pyhost__fmt(named, sizeof named, PYHOST__CALLF_NAMED, p->name, hook);
    rc = pyhost__callf(h, fn, named, fmt, ap, NULL, &b, raised);
    PY.Py_DecRef(fn);
  }
  if (--p->busy == 0 && p->doomed) { /* unloaded by the hook: its result goes too */
    if (b.holder) {
      pyhost__drop(b.holder);
      rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_callf: plugin %s was unloaded "
                             "during its own call, and its borrowed result with it", p->name);
    }
    PY.Py_DecRef(p->kept);
    plugin_free(p);
  } else if (b.holder) {
    /* a borrowed result (>s, >y) lives in p until its next callf, or its unload */
    pyhost__callf_commit(&b, &p->kept);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_plugin_module(pyhost *h, pyhost_plugin *p, pyhost_value **module) {
  if (module) *module = NULL;
  LEVEL_CALL(h, p, "pyhost_plugin_module", module(h, p->impl, module));
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_module", &gil);
  if (rc) return rc;
  if (!module) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_module: module is NULL");
  else {
    /* converting runs Python code, which may unload the plugin: hold the module */
    PyObject *m = p->module;
    PY.Py_IncRef(m);
    if (!(*module = pyhost__from_python(h, m))) rc = pyhost__take_exception(h, "pyhost_plugin_module");
    PY.Py_DecRef(m);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_plugin_reload(pyhost *h, pyhost_plugin *p) {
  LEVEL_CALL(h, p, "pyhost_plugin_reload", reload(h, p->impl));
  PyGILState_STATE gil;
  int rc = enter_plugin(h, p, "pyhost_plugin_reload", &gil);
  if (rc) return rc;
  char *old_top = pyhost__strdup(p->top);
  if (!old_top) {
    rc = pyhost__set_error(h, PYHOST_NOMEM, "reloading plugin %s: out of memory", p->name);
  } else if ((rc = load_into(h, p)) == PYHOST_OK) {
    /* the new modules are in place: drop the old ones */
    char *new_top = p->top;
    p->top = old_top;
    forget(p);
    p->top = new_top;
  }
  pyhost__free(old_top);
  pyhost__leave(h, gil);
  return rc;
}

const char *pyhost_plugin_name(const pyhost_plugin *p) { return p ? p->name : ""; }
const char *pyhost_plugin_path(const pyhost_plugin *p) {
  return !p ? "" : p->level ? p->level->path(p->impl) : p->path;
}
const char *pyhost_plugin_module_name(const pyhost_plugin *p) {
  return !p ? "" : p->level ? p->level->module_name(p->impl) : p->module_name;
}

void pyhost_plugin_unload(pyhost_plugin *p) {
  if (!p) return;
  if (p->level) {
    if (p->doomed) return;
    atomic_fetch_add(&p->lbusy, 1); /* this unload: the handle lives until it is done */
    p->doomed = 1;
    p->level->unload(p->impl); /* waits for other threads' calls; frees impl */
    level_out(p, 0);
    return;
  }
  PyGILState_STATE gil;
  /* Once finalize has begun the modules die with the interpreter: free only our memory
   * (free_begin waits for the hooks still running). */
  if (!pyhost__inflight_free_begin(&gil)) {
    deps_list_remove(p);
    plugin_free(p);
    return;
  }
  int running = p->busy > 0;
  if (!p->doomed) {
    deps_unlink(p);
    forget(p);
    PY.Py_DecRef(p->module);
    p->module = NULL;
    PY.Py_DecRef(p->kept);
    p->kept = NULL;
    p->doomed = running;
  }
  pyhost__inflight_free_end(gil);
  if (!running) plugin_free(p);
}
