/* pyhost.c: init, finalize and the handle's life.
 *
 * pyhost_init refuses a library before anything in it runs whenever it can: the path
 * is checked, the library is opened with RTLD_LOCAL, its version and build are read,
 * the table is resolved and the home's standard library is found.  Only then is it
 * promoted to RTLD_GLOBAL and Python started.  A refused library is closed again, so
 * that its symbols never shadow the next library the host tries.
 */
#include "runtime.h"
#include "discovery.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

/* CPython is process-global: at most one Python started by pyhost per process
 * (pyhost__process, core.h). */

static int finalize(pyhost *h);

/* Test seam (fault injection): a symbol name the look-up pretends is missing. */
void pyhost__fail_symbol(const char *name) {
  pyhost__process.fail_symbol = name;
}

static void *lookup(void *lib, const char *name) {
  const char *fail = pyhost__process.fail_symbol;
  if (fail && strcmp(name, fail) == 0) return NULL;
  return pyhost__dl_sym(lib, name);
}

/* ---- checks before anything runs ---- */

/* The file is looked at before the system loader maps it (libcheck.h): a damaged
 * library would kill the process inside the loader, a FIFO would hang it. */
static int check_path(pyhost *h, const char *path, const char *origin) {
  if (!path[0]) return pyhost__set_error(h, PYHOST_NOTFOUND, "the Python library path%s is empty", origin);
  if (!pyhost__fs_has_dir(path)) return PYHOST_OK; /* a bare name: the system loader searches */
  struct pyhost__verdict v;
  if (pyhost__verdict_file_explained(path, &v))
    return pyhost__set_error(h, v.status, "cannot load Python library %s%s: %s", path, origin, v.reason);
  return PYHOST_OK;
}

/* A relative path with a directory part is resolved against the current directory
 * here, once, so that the file checked, the file loaded and the file reported are the
 * same; a bare name is left to the system loader's search (it never looks in the
 * current directory, see docs/configuration.md). */
static int absolute_path(pyhost *h, char *path, size_t cap, char *origin, size_t ocap) {
  char cwd[PYHOST__PATH_MAX], rel[PYHOST__PATH_MAX], path_as_given[PYHOST__PATH_MAX];
  if (!path[0] || !pyhost__fs_has_dir(path) || pyhost__sys_is_absolute(path)) return PYHOST_OK;
  pyhost__fmt(path_as_given, sizeof path_as_given, "%s", path);
  if (pyhost__sys_cwd(cwd, sizeof cwd) != 0)
    return pyhost__set_error(h, PYHOST_NOTFOUND,
                             "cannot load Python library %s%s: a relative path, and the current "
                             "directory cannot be read to resolve it",
                             path, origin);
  const char *r = path;
  while (r[0] == '.' && (r[1] == '/' || r[1] == pyhost__fs_sep)) r += 2; /* "./lib.so" */
  pyhost__fmt(rel, sizeof rel, "%s", r);
  if (strlen(cwd) + 1 + strlen(rel) >= cap)
    return pyhost__set_error(h, PYHOST_NOTFOUND,
                             "cannot load Python library %s%s: resolved against the current "
                             "directory %s it is longer than the %zu bytes pyhost handles",
                             rel, origin, cwd, cap - 1);
  pyhost__fmt(path, cap, "%s%c%s", cwd, pyhost__fs_sep, rel);
  size_t used = strlen(origin);
  pyhost__fmt(origin + used, ocap - used, " (the relative path %s, resolved against the current directory)", path_as_given);
  return PYHOST_OK;
}

/* Opens, judges (verdict.h) and resolves the library; on success h->lib is open
 * RTLD_LOCAL and *table is filled.  On failure nothing is left open. */
static int open_and_check(pyhost *h, const char *path, const char *origin, struct pyapi *table) {
  char err[2048];
  struct pyhost__verdict v;
  int rc = check_path(h, path, origin);
  if (rc) return rc;
  void *lib = pyhost__dl_open(path, 0, err, sizeof err);
  if (!lib) {
    pyhost__verdict_unloaded(path, err, &v);
    return pyhost__set_error(h, v.status, "cannot load Python library %s%s: %s", path, origin, v.reason);
  }
  struct pyhost__policy pol;
  struct pyapi_probe pr;
  pyhost__policy_of(&h->cfg, 1, &pol); /* chosen by the host, the user or discovery */
  rc = pyhost__verdict_library(lookup, lib, &pol, &pr, table, &v);
  if (pr.version_text) pyhost__fmt(h->version_text, sizeof h->version_text, "%s", pr.version_text);
  if (rc) {
    pyhost__set_error(h, rc, "cannot use %s%s: %s", path, origin, v.reason);
    pyhost__dl_close(lib);
    return rc;
  }
  h->lib = lib;
  h->hexversion = pr.hexversion;
  /* The loader knows which file a bare name or a symlink resolved to. */
  char real[PYHOST__PATH_MAX];
  void *probe_addr;
  memcpy(&probe_addr, &table->Py_GetVersion, sizeof probe_addr);
  if (pyhost__dl_path(lib, probe_addr, real, sizeof real) != 0)
    pyhost__fmt(real, sizeof real, "%s", path);
  if (pyhost__fs_realpath(real, h->library_path, sizeof h->library_path) != 0)
    pyhost__fmt(h->library_path, sizeof h->library_path, "%s", real);
  return PYHOST_OK;
}

/* ---- starting Python ---- */

static int set_argv(pyhost *h) {
  int argc = h->cfg.argc;
  PyObject *list = PY.PyList_New(0);
  if (!list) return -1;
  for (int i = 0; i < (argc ? argc : 1); i++) {
    const char *a = argc ? h->cfg.argv[i] : "";
    PyObject *s = PY.PyUnicode_DecodeUTF8(a, (Py_ssize_t)strlen(a), "surrogateescape");
    if (!s || PY.PyList_Append(list, s) < 0) {
      PY.Py_DecRef(s);
      PY.Py_DecRef(list);
      return -1;
    }
    PY.Py_DecRef(s);
  }
  int rc = PY.PySys_SetObject("argv", list);
  PY.Py_DecRef(list);
  return rc;
}

static int prepend_sys_path(pyhost *h) {
  PyObject *path = PY.PySys_GetObject("path"); /* borrowed */
  if (!path) {
    PY.PyErr_SetString(*PY.PyExc_RuntimeError, "sys.path is missing");
    return -1;
  }
  for (size_t i = 0; i < h->cfg.n_sys_path; i++) {
    const char *d = h->cfg.sys_path[i];
    PyObject *s = PY.PyUnicode_DecodeUTF8(d, (Py_ssize_t)strlen(d), "surrogateescape");
    int rc = s ? PY.PyList_Insert(path, (Py_ssize_t)i, s) : -1;
    PY.Py_DecRef(s);
    if (rc < 0) return -1;
  }
  return 0;
}

/* sys.executable: the configured command (pyhost_config_set_executable), or "" when
 * there is no interpreter beside the library (home.c), Python's own answer when it
 * finds none, rather than naming the host program.  sys._base_executable follows
 * where it named the same program (outside a venv).  0/-1. */
static int set_executable(pyhost *h) {
  const char *exe = h->cfg.executable ? h->cfg.executable : h->no_executable ? "" : NULL;
  if (!exe) return 0;
  PyObject *was = PY.PySys_GetObject("executable"); /* borrowed, kept alive below */
  PY.Py_IncRef(was);
  PyObject *now = PY.PyUnicode_DecodeUTF8(exe, (Py_ssize_t)strlen(exe), "surrogateescape");
  int rc = now ? PY.PySys_SetObject("executable", now) : -1;
  PyObject *base = rc == 0 ? PY.PySys_GetObject("_base_executable") : NULL; /* borrowed */
  int same = base && was && !h->no_executable ? PY.PyObject_RichCompareBool(base, was, Py_EQ) : 0;
  if (same < 0) rc = -1;
  else if (base && (h->no_executable || same)) rc = PY.PySys_SetObject("_base_executable", now);
  PY.Py_DecRef(now);
  PY.Py_DecRef(was);
  return rc;
}

/* Takes pyhost's own references to __main__ and its dict (see internal.h).  0/-1. */
static int keep_main(pyhost *h) {
  PYHOST__ASSERT_GIL();
  PyObject *main = PY.PyImport_AddModule("__main__"); /* borrowed */
  PyObject *dict = main ? PY.PyModule_GetDict(main) : NULL; /* borrowed */
  if (!dict) return -1;
  PY.Py_IncRef(main);
  PY.Py_IncRef(dict);
  h->main_module = main;
  h->main_dict = dict;
  return 0;
}

/* With the GIL, before Py_FinalizeEx: every reference pyhost keeps across calls goes,
 * while Python can still run the destructors this may trigger (docs/lifetimes.md). */
static void drop_kept(pyhost *h) {
  PYHOST__ASSERT_GIL();
  pyhost__inflight_forget();
  pyhost__teardown_run(PYHOST__AT_DROP); /* the bridge's caches and modules */
  PyObject *dict = h->main_dict, *main = h->main_module;
  h->main_dict = h->main_module = NULL;
  PY.Py_DecRef(dict);
  PY.Py_DecRef(main);
}

/* Without PYHOST_INIT_SIGNALS the host's SIGINT disposition stays in force.  Python
 * started without its handlers installs none, but the signal module's initialisation
 * (every version, also for `import signal` by asyncio or subprocess) puts its own
 * SIGINT handler in place when the disposition is SIG_DFL.  So pyhost initialises the
 * module now and, when it took SIGINT over, gives it back through the module itself:
 * Python's view (signal.getsignal) and the process's agree, and the module is not
 * initialised again.  SIG_IGN and a host handler are left alone by the module.  0/-1. */
static int keep_host_sigint(void) {
  PyObject *sig = PY.PyImport_ImportModule("_signal");
  PyObject *num = sig ? PY.PyObject_GetAttrString(sig, "SIGINT") : NULL;
  PyObject *get = sig ? PY.PyObject_GetAttrString(sig, "getsignal") : NULL;
  PyObject *now = get && num ? PY.PyObject_CallFunctionObjArgs(get, num, NULL) : NULL;
  PyObject *python = now ? PY.PyObject_GetAttrString(sig, "default_int_handler") : NULL;
  PyObject *dfl = python ? PY.PyObject_GetAttrString(sig, "SIG_DFL") : NULL;
  PyObject *set = dfl && now == python ? PY.PyObject_GetAttrString(sig, "signal") : NULL;
  PyObject *old = set ? PY.PyObject_CallFunctionObjArgs(set, num, dfl, NULL) : NULL;
  int ok = dfl && (now != python || old);
  PY.Py_DecRef(old);
  PY.Py_DecRef(set);
  PY.Py_DecRef(dfl);
  PY.Py_DecRef(python);
  PY.Py_DecRef(now);
  PY.Py_DecRef(get);
  PY.Py_DecRef(num);
  PY.Py_DecRef(sig);
  return ok ? 0 : -1;
}

/* env: the environment saved by pyhost__isolate_begin (isolated mode), or NULL. */
static int start_python(pyhost *h, struct pyhost__env_saved *env) {
  char saved_ctype[256];
  const char *cur = setlocale(LC_CTYPE, NULL);
  pyhost__fmt(saved_ctype, sizeof saved_ctype, "%s", cur ? cur : "C");

  if (h->w_home) PY.Py_SetPythonHome(h->w_home);
  if (h->w_program) PY.Py_SetProgramName(h->w_program);
  int utf8_mode = pyhost__utf8_mode_choice(h);
  if (utf8_mode >= 0) *PY.Py_UTF8Mode = utf8_mode;
  PY.Py_InitializeEx((h->cfg.flags & PYHOST_INIT_SIGNALS) ? 1 : 0);
  pyhost__thread.gil_own++; /* Py_InitializeEx returns holding the GIL */
  int isolated_rc = h->cfg.isolated ? pyhost__isolate_finish(h, env) : PYHOST_OK;
  if (!(h->cfg.flags & PYHOST_INIT_KEEP_LOCALE)) setlocale(LC_CTYPE, saved_ctype);
  if (!PY.Py_IsInitialized()) {
    pyhost__thread.gil_own--;
    return pyhost__set_error(h, PYHOST_ERROR, "Py_InitializeEx did not initialize %s",
                             h->library_path);
  }
  /* 3.6 creates the GIL lazily: without this, PyGILState from other threads fails. */
  if (!pyhost__runtime_at_least(3, 7)) PY.PyEval_InitThreads();

  int rc = isolated_rc;
  if (keep_main(h) < 0 || set_argv(h) < 0 || prepend_sys_path(h) < 0 || set_executable(h) < 0 ||
      pyhost__inflight_open() < 0 ||
      (!(h->cfg.flags & PYHOST_INIT_SIGNALS) && keep_host_sigint() < 0))
    rc = pyhost__take_exception(h, "setting up the interpreter failed");
  pyhost__thread.gil_own--;
  (void)PY.PyEval_SaveThread(); /* the thread state stays this thread's (PyGILState finds it) */
  return rc;
}

/* ---- public lifecycle ---- */

static pyhost *handle_new(void) {
  pyhost *h = pyhost__calloc(1, sizeof *h);
  if (!h) return NULL;
  atomic_init(&h->state, PYHOST__FAILED);
  atomic_init(&h->msgs, NULL);
  if (pyhost__handle_add(h) < 0) {
    pyhost__free(h);
    return NULL;
  }
  return h;
}

static int claim_process(pyhost *h) {
  int expected = PYHOST__PROCESS_IDLE;
  if (atomic_compare_exchange_strong(&pyhost__process.state, &expected, PYHOST__PROCESS_STARTING))
    return PYHOST_OK;
  if (expected == PYHOST__PROCESS_DONE)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "Python was already finalized in this process (%s); CPython cannot be "
                             "started a second time reliably, so pyhost does not",
                             pyhost__process.library);
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "Python is already running in this process (%s); only one pyhost may "
                           "run at a time",
                           expected == PYHOST__PROCESS_RUNNING ? pyhost__process.library : "starting");
}

static int given_path(pyhost *h, const char *value, char *path, size_t cap, const char *origin) {
  size_t n = strlen(value);
  if (n < cap) return memcpy(path, value, n + 1), PYHOST_OK;
  return pyhost__set_error(h, PYHOST_NOTFOUND,
                           "cannot load Python library %.200s...%s: the path has %zu bytes, more "
                           "than the %zu pyhost handles",
                           value, origin, n, cap - 1);
}

static int choose_library(pyhost *h, char *path, size_t cap, char *origin, size_t ocap) {
  const char *given = h->cfg.library;
  origin[0] = '\0';
  if (!given) {
    given = getenv("PYHOST_PYTHON_LIBRARY");
    if (!given || !given[0]) return pyhost__discover(h, path, cap, origin, ocap);
    pyhost__fmt(origin, ocap, " (from PYHOST_PYTHON_LIBRARY)");
  }
  int rc = given_path(h, given, path, cap, origin);
  return rc ? rc : absolute_path(h, path, cap, origin, ocap);
}

int pyhost__load(const pyhost_config *cfg, pyhost **out) {
  if (!out) return PYHOST_MISUSE;
  pyhost *h = *out = handle_new();
  if (!h) return PYHOST_NOMEM;
  h->init_thread = &pyhost__thread; /* its address is this thread's own */
  int rc = pyhost__config_copy(&h->cfg, cfg);
  if (rc) return pyhost__set_error(h, rc, "out of memory copying the configuration");
  if ((rc = claim_process(h))) return rc;

  char path[PYHOST__PATH_MAX], origin[256];
  struct pyapi table;
  if ((rc = choose_library(h, path, sizeof path, origin, sizeof origin))) goto refused;
  if (!h->library_path[0]) pyhost__fmt(h->library_path, sizeof h->library_path, "%s", path);
  if ((rc = open_and_check(h, path, origin, &table))) goto refused;

  PY = table; /* choose_home needs the runtime */
  if ((rc = pyhost__choose_home(h, table.runtime))) goto close_refused;
  if (!(h->cfg.flags & PYHOST_INIT_RTLD_LOCAL)) {
    char err[1024];
    void *global = pyhost__dl_open(path, 1, err, sizeof err);
    if (!global) {
      rc = pyhost__set_error(h, PYHOST_NOLIB, "cannot make %s's symbols global: %s",
                             h->library_path, err);
      goto close_refused;
    }
    pyhost__dl_close(h->lib); /* the global reference keeps it open */
    h->lib = global;
  }
  pyhost__fmt(pyhost__process.library, sizeof pyhost__process.library, "%s", h->library_path);
  return PYHOST_OK;

close_refused:
  pyhost__load_undo(h);
  return rc;
refused:
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_IDLE);
  return rc;
}

void pyhost__load_undo(pyhost *h) {
  pyhost__dl_close(h->lib);
  h->lib = NULL;
  memset(&PY, 0, sizeof PY);
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_IDLE);
}

int pyhost_init(const pyhost_config *cfg, pyhost **out) {
  int rc = pyhost__load(cfg, out);
  if (rc) return rc;
  pyhost *h = *out;
  /* isolation may fail (out of memory) only here, while the host can still retry */
  struct pyhost__env_saved *env = NULL;
  if (h->cfg.isolated && (rc = pyhost__isolate_begin(h, &env))) {
    pyhost__load_undo(h);
    return rc;
  }
  rc = start_python(h, env);
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_RUNNING);
  atomic_store(&h->state, PYHOST__RUNNING);
  if (rc) {
    finalize(h);
    atomic_store(&h->state, PYHOST__FAILED);
  }
  return rc;
}

int pyhost_finalize(pyhost *h) {
  if (!pyhost__handle_live(h)) return PYHOST_MISUSE;
  /* CPython finalizes on its main thread: elsewhere 3.11's threading shutdown waits
   * forever for the main thread's state to go, and debug builds of 3.14+ abort. */
  if (h->init_thread != &pyhost__thread && atomic_load(&h->state) == PYHOST__RUNNING &&
      !pyhost__inflight_forked_amid_calls())
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_finalize called on another thread than pyhost_init's; "
                             "CPython is finalized on the thread that started it");
  return finalize(h);
}

/* pyhost_finalize without the thread check (pyhost_free and a failed init use it). */
static int finalize(pyhost *h) {
  if (pyhost__gil_scoped(h))
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_finalize inside a pyhost_gil_enter scope; leave it first");
  if (pyhost__inflight_depth() > 0)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_finalize called from inside a pyhost call on this thread "
                             "(a host function?); finalize after the call returns");
  int expected = PYHOST__RUNNING;
  if (!atomic_compare_exchange_strong(&h->state, &expected, PYHOST__FINALIZED))
    return pyhost__set_error(h, PYHOST_MISUSE,
                             expected == PYHOST__FINALIZED ? "this pyhost was already finalized"
                                                           : "this pyhost never started Python");
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_DONE);
  /* The threads that were inside calls when this child was forked are gone, and may
   * have held the GIL: Python's memory is left to the process's exit. */
  if (pyhost__inflight_forked_amid_calls()) {
    pyhost__clear_message(h);
    return PYHOST_OK;
  }
  /* Refuse new calls and interrupt running ones (one GIL hold, see inflight.c), then
   * wait without the GIL until every call in flight on another thread has returned:
   * Python must not be finalized under a thread that is about to use it.  The GIL is
   * taken with this thread's own thread state (the initializing thread kept the one
   * Py_InitializeEx made; another gets one): from 3.12 a thread state bound to one
   * thread must not run on another, which debug builds assert.  The count is never released: Python is gone after. */
  (void)PY.PyGILState_Ensure();
  pyhost__thread.gil_own++;
  pyhost__teardown_run(PYHOST__AT_CLOSE); /* host functions refuse from now on */
  pyhost__inflight_close();
  pyhost__thread.gil_own--;
  PyThreadState *tstate = PY.PyEval_SaveThread();
  pyhost__inflight_drain();
  PY.PyEval_RestoreThread(tstate);
  pyhost__thread.gil_own++;
  drop_kept(h);
  int rc = PY.Py_FinalizeEx();
  pyhost__thread.gil_own--;
  pyhost__teardown_run(PYHOST__AFTER_FINALIZE);
  if (rc < 0)
    return pyhost__set_error(h, PYHOST_ERROR,
                             "Py_FinalizeEx reported an error (buffered data could not be "
                             "flushed)");
  pyhost__clear_message(h);
  return PYHOST_OK;
}

void pyhost_free(pyhost *h) {
  if (!pyhost__handle_live(h)) return; /* NULL, or freed already */
  /* Freed inside this thread's pyhost_gil_enter scope (not from a host callback in it):
   * the scope ends with its handle, so that finalize runs and no later call on this
   * thread finds a scope naming freed memory. */
  if (pyhost__gil_scoped(h) && !pyhost__thread.frame) {
    pyhost__thread.depth = 0;
    pyhost__thread.scope_h = PYHOST__NO_SCOPE;
    pyhost__leave(h, pyhost__thread.state);
  }
  /* From a host callback (or any call still running on this thread) the call would go
   * on with the handle freed under it, and finalize would run under Python's feet. */
  int in_call = pyhost__inflight_depth() > 0 || pyhost__thread.frame;
  PYHOST__API_CHECK(!in_call, "pyhost_free",
                    "called while a pyhost call runs on this thread (from a host callback); "
                    "free the handle after the call returns");
  if (in_call) {
    pyhost__set_error(h, PYHOST_MISUSE,
                      "pyhost_free called from inside a pyhost call on this thread; the "
                      "handle stays until it is freed after the call returns");
    return;
  }
  if (atomic_load(&h->state) == PYHOST__RUNNING) finalize(h); /* from any thread: the
                                                                 * host gives the handle up */
  pyhost__handle_remove(h);
  pyhost__config_clear(&h->cfg);
  pyhost__free(h->w_home);
  pyhost__free(h->w_program);
  pyhost__free_messages(h);
  pyhost__free(h);
}

/* ---- information ---- */

unsigned long pyhost_python_version(const pyhost *h) {
  return pyhost__handle_live(h) ? h->hexversion : 0;
}

const char *pyhost_library_path(const pyhost *h) {
  return pyhost__handle_live(h) ? h->library_path : "";
}

const char *pyhost_python_version_text(const pyhost *h) {
  return pyhost__handle_live(h) ? h->version_text : "";
}

const char *pyhost_python_home(const pyhost *h) {
  return pyhost__handle_live(h) ? h->home : "";
}
