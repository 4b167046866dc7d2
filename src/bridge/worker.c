/* worker.c: the process isolation level, the worker's side: what pyhost's worker
 * program (worker/pyhost_worker.c) runs.  It starts the Python its host asks for,
 * loads the plugin into it as a shared-level plugin of its own, makes the host's
 * modules (hostmods.c), and serves the host's requests (wire.h) until told to end or
 * until its host is gone.
 *
 * Threads.  The main thread serves the channel and runs the plugin's code (Python's
 * main thread, where signals are handled).  A second thread reads the control
 * channel: an interrupt for the host call now running here trips Python's SIGINT
 * flag (PyErr_SetInterrupt, safe without the GIL) and wakes the main thread from a
 * blocking system call; the SIGINT handler installed here raises KeyboardInterrupt
 * as a subclass that is also pyhost.Interrupted, so the call's status is
 * PYHOST_INTERRUPTED as in-process.  The end of the control channel means the host
 * is gone: the process ends at once, whatever the main thread is doing (a Python
 * loop, a sleep, a C call holding the GIL).  It starts before Python does, so it
 * watches the worker's whole life; on Linux the parent-death signal (proc_posix.c)
 * covers the same ground when a process forked from the host still holds the host's
 * end of the channel.
 *
 * A host function the plugin calls is a proxy here: it sends CALLBACK and, with the
 * GIL given up, serves the requests the host makes before it answers (nested calls),
 * on the main thread, then returns the answer or raises the host's exception type.
 */
#include "bridge.h"
#include "callf.h"
#include "hostmods.h"
#include "plugin_level.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct worker {
  pyhost *h;
  struct pyhost__chan *chan, *control;
  struct pyhost__wire_in in;
  pyhost_plugin *p;
  pyhost_value *module;        /* p's module (an object value), for callf's own lookup */
  char *name;                  /* the plugin's */
  uint64_t memory_limit;
  struct pyhost__mirror *mirror;
  struct pyhost__monitor *m;   /* tree and interrupted, shared with the control thread */
  uint32_t tree;               /* the host's call running here; 0 between calls */
  int interrupted;             /* an interrupt reached it */
  int depth;                   /* requests being served (nested through host functions) */
  PyObject *flush;             /* flushes sys.stdout and sys.stderr */
  unsigned long main_ident;    /* the main thread's, the one that serves the host */
  struct pyhost__proc_waker *waker; /* reaches that thread */
};

/* Python's part of the worker's start: line-buffered output (a call's lines reach the
 * host before its answer), faulthandler (a crash leaves the Python traceback on
 * stderr, which the host reports), the SIGINT handler of interrupts. */
static const char SETUP[] =
    "import faulthandler, io, signal, sys\n"
    "for _n in ('stdout', 'stderr'):\n"
    "    _s = getattr(sys, _n)\n"
    "    if _s is None: continue\n"
    "    try:\n"
    "        _s.reconfigure(line_buffering=True)\n"
    "    except AttributeError:\n"
    "        setattr(sys, _n, io.TextIOWrapper(_s.buffer, _s.encoding, _s.errors,\n"
    "                                         line_buffering=True))\n"
    "if sys.stderr is not None:\n"
    "    try:\n"
    "        faulthandler.enable(c_stack=False)  # 3.14+: the Python frames are the news\n"
    "    except TypeError:\n"
    "        faulthandler.enable()\n"
    "def on_sigint(signum, frame):\n"
    "    raise Interrupted()\n"
    "signal.signal(signal.SIGINT, on_sigint)\n"
    "def flush():\n"
    "    for s in (sys.stdout, sys.stderr):\n"
    "        try:\n"
    "            if s is not None: s.flush()\n"
    "        except Exception:\n"
    "            pass\n";

/* Runs SETUP in a namespace of its own: 0, or -1 with the reason on stderr. */
static int setup_python(struct worker *w) {
  PyGILState_STATE gil;
  if (pyhost__enter(w->h, &gil) != PYHOST_OK) return -1;
  PyObject *bases = PY.PyTuple_New(2), *cls = NULL, *ns = NULL, *code = NULL, *r = NULL;
  if (bases) {
    PY.Py_IncRef(pyhost__interrupt_type());
    PY.PyTuple_SetItem(bases, 0, pyhost__interrupt_type());
    PY.Py_IncRef(*PY.PyExc_KeyboardInterrupt);
    PY.PyTuple_SetItem(bases, 1, *PY.PyExc_KeyboardInterrupt);
    cls = PY.PyErr_NewException("pyhost.Interrupted", bases, NULL);
  }
  if (cls && (ns = PY.PyDict_New()) &&
      PY.PyDict_SetItemString(ns, "__builtins__", PY.PyEval_GetBuiltins()) == 0 &&
      PY.PyDict_SetItemString(ns, "Interrupted", cls) == 0 &&
      (code = PY.Py_CompileString(SETUP, "<pyhost worker>", Py_file_input)))
    r = PY.PyEval_EvalCode(code, ns, ns);
  if (r && (w->flush = PY.PyDict_GetItemString(ns, "flush"))) PY.Py_IncRef(w->flush);
  int rc = w->flush ? 0 : -1;
  if (rc) {
    pyhost__take_exception(w->h, "pyhost's worker: setting up Python failed");
    fprintf(stderr, "%s\n", pyhost_errmsg(w->h));
  }
  PY.Py_DecRef(r);
  PY.Py_DecRef(code);
  PY.Py_DecRef(ns);
  PY.Py_DecRef(cls);
  PY.Py_DecRef(bases);
  pyhost__leave(w->h, gil);
  return rc;
}

/* Ends the process: what Python buffered is written first. */
static void finish(struct worker *w, int code) {
  PyGILState_STATE gil;
  if (w->h && w->flush && pyhost__enter(w->h, &gil) == PYHOST_OK) {
    PY.Py_DecRef(PY.PyObject_CallObject(w->flush, NULL));
    PY.PyErr_Clear();
    pyhost__leave(w->h, gil);
  }
  fflush(NULL);
  _Exit(code);
}

/* ---- interrupts ---- */

/* pyhost__bridge.worker_interrupt is set while an interrupt for the running call is
 * wanted: read in a signal handler on the main thread, so a flag of the process
 * rather than of struct worker. */

/* On the main thread, in the wake-up signal's handler: trips Python's SIGINT flag
 * there (the interpreter notices a flag tripped by another thread only at its next
 * blocking call), so the handler SETUP installs raises at the next bytecode. */
static void on_wake(int sig) {
  (void)sig;
  int saved = errno;
  if (atomic_load(&pyhost__bridge.worker_interrupt)) PY.PyErr_SetInterrupt(); /* async-signal-safe */
  errno = saved;
}

static void interrupt(struct worker *w, uint32_t tree) {
  pyhost__monitor_enter(w->m);
  if (w->tree && w->tree == tree) {
    w->interrupted = 1;
    atomic_store(&pyhost__bridge.worker_interrupt, 1);
    pyhost__proc_child_wake_main(w->waker);
  }
  pyhost__monitor_leave(w->m);
}

static void control_main(void *arg) {
  struct worker *w = arg;
  char buf[64];
  size_t have = 0;
  for (;;) {
    long n = pyhost__chan_recv(w->control, buf + have, sizeof buf - have, PYHOST__FOREVER);
    if (n <= 0) _Exit(0); /* the host is gone */
    have += (size_t)n;
    while (have >= 5) {
      if (buf[0] == PYHOST__W_INTERRUPT) {
        uint32_t tree;
        memcpy(&tree, buf + 1, sizeof tree);
        interrupt(w, tree);
      }
      memmove(buf, buf + 5, have - 5);
      have -= 5;
    }
  }
}

static void tree_begin(struct worker *w, uint32_t tree) {
  pyhost__monitor_enter(w->m);
  w->tree = tree;
  w->interrupted = 0;
  pyhost__monitor_leave(w->m);
}

static void tree_end(struct worker *w) {
  pyhost__monitor_enter(w->m);
  atomic_store(&pyhost__bridge.worker_interrupt, 0); /* a wake-up that comes later does nothing */
  w->tree = 0;
  int was = w->interrupted;
  w->interrupted = 0;
  pyhost__monitor_leave(w->m);
  PyGILState_STATE gil;
  /* an interrupt that came too late to be raised must not hit the next call */
  if (was && pyhost__enter(w->h, &gil) == PYHOST_OK) {
    PY.PyErr_CheckSignals();
    PY.PyErr_Clear();
    pyhost__leave(w->h, gil);
  }
}

/* ---- answers ---- */

static void reply_error(struct worker *w, struct pyhost__wbuf *out, int status) {
  pyhost__wbuf_error_of(out, w->h, status);
}

/* A hook's status, with MemoryError under a memory limit made PYHOST_LIMIT (the
 * exception behind it kept). */
static int limit_status(struct worker *w, int rc) {
  if (rc != PYHOST_PYEXC || !w->memory_limit || strcmp(pyhost_errtype(w->h), "MemoryError") != 0)
    return rc;
  char *msg = pyhost__strdup(pyhost_errmsg(w->h));
  struct pyhost__excdata d;
  pyhost__exc_snapshot(w->h, &d);
  pyhost__set_error(w->h, PYHOST_LIMIT,
                    "%s\n(plugin %s's process has a memory limit of %llu bytes: the MemoryError "
                    "above is that limit)",
                    msg ? msg : "MemoryError", w->name, (unsigned long long)w->memory_limit);
  pyhost__set_exception(w->h, &d);
  pyhost__free(msg);
  return PYHOST_LIMIT;
}

/* A result value: OK and the value, or PYHOST_TYPE when it cannot cross. */
static void reply_value(struct worker *w, struct pyhost__wbuf *out, const pyhost_value *v,
                        const char *hook) {
  size_t mark = out->len;
  char why[256];
  pyhost__wbuf_u8(out, PYHOST_OK);
  if (pyhost__wbuf_value(out, v, why, sizeof why) == 0) return;
  out->len = mark;
  pyhost__set_error(w->h, PYHOST_TYPE,
                    "plugin %s: hook %s returned %s, which cannot leave the plugin's process "
                    "(only None, bool, int, float, str, bytes, and lists, tuples and dicts of "
                    "them cross; its module runs in a process of its own)",
                    w->name, hook, why);
  reply_error(w, out, PYHOST_TYPE);
}

/* ---- requests ---- */

/* w->module: the plugin's module now (after a load or a reload). */
static int module_of(struct worker *w) {
  pyhost_value_free(w->module);
  w->module = NULL;
  return pyhost_plugin_module(w->h, w->p, &w->module);
}

static void serve_call(struct worker *w, struct pyhost__rbuf *m, struct pyhost__wbuf *out) {
  char *hook = pyhost__strdup(pyhost__rbuf_str(m, NULL));
  int want = (int)pyhost__rbuf_u8(m);
  pyhost_value *args = pyhost__rbuf_value(m);
  pyhost_value *kwargs = args ? pyhost__rbuf_value(m) : NULL;
  pyhost_value *result = NULL;
  int rc;
  if (!hook || !args || !kwargs) {
    rc = pyhost__set_error(w->h, PYHOST_NOMEM, "plugin %s: out of memory in its process", w->name);
  } else {
    rc = pyhost_plugin_call(w->h, w->p, hook, args->kind == PYHOST_KIND_NONE ? NULL : args,
                            kwargs->kind == PYHOST_KIND_NONE ? NULL : kwargs, want ? &result : NULL);
    rc = limit_status(w, rc);
  }
  if (rc == PYHOST_OK) reply_value(w, out, result, hook);
  else reply_error(w, out, rc);
  pyhost_value_free(result);
  pyhost_value_free(args);
  pyhost_value_free(kwargs);
  pyhost__free(hook);
}

/* callf's call: the hook called with the arguments, its result read as the result
 * letter says, by the same code that reads it in-process. */
static int callf_run(struct worker *w, const char *hook, char rtype, pyhost_value **argv,
                     char **kwname, size_t n, size_t npos, struct pyhost__wbuf *out) {
  char fname[512]; /* as the shared level names the call in its messages */
  pyhost__fmt(fname, sizeof fname, PYHOST__CALLF_NAMED, w->name, hook);
  PyGILState_STATE gil;
  int rc = pyhost__enter(w->h, &gil);
  if (rc) return rc;
  /* the hook, looked up here; when there is none, pyhost_plugin_has_hook says so in
   * the shared level's words */
  PyObject *fn = PY.PyObject_GetAttrString(w->module->u.obj, hook);
  if (!fn || !PY.PyCallable_Check(fn)) {
    PY.Py_DecRef(fn);
    PY.PyErr_Clear();
    pyhost__leave(w->h, gil);
    rc = pyhost_plugin_has_hook(w->h, w->p, hook);
    return rc ? rc : pyhost__set_error(w->h, PYHOST_NOHOOK, "plugin %s has no hook %s", w->name, hook);
  }
  char raised[512];
  pyhost__fmt(raised, sizeof raised, PYHOST__HOOK_RAISED, w->name, hook);
  PyObject *t = PY.PyTuple_New((Py_ssize_t)npos);
  PyObject *kw = t && n > npos ? PY.PyDict_New() : NULL;
  int ok = t && (n == npos || kw);
  for (size_t i = 0; ok && i < n; i++) {
    PyObject *x = pyhost__to_python(w->h, argv[i]);
    if (!x) ok = 0;
    else if (i < npos) PY.PyTuple_SetItem(t, (Py_ssize_t)i, x); /* steals */
    else {
      ok = PY.PyDict_SetItemString(kw, kwname[i], x) == 0;
      PY.Py_DecRef(x);
    }
  }
  PyObject *r = ok ? PY.PyObject_Call(fn, t, kw) : NULL;
  PY.Py_DecRef(kw);
  PY.Py_DecRef(t);
  PY.Py_DecRef(fn);
  if (!r) {
    rc = pyhost__take_exception(w->h, raised);
  } else {
    union {
      int i;
      int64_t l;
      double d;
      pyhost_value *v;
      const char *s;
    } got;
    size_t len = 0;
    PyObject *kept = NULL;
    switch (rtype) {
    case 0:
      PY.Py_DecRef(r);
      pyhost__wbuf_u8(out, PYHOST_OK);
      pyhost__wbuf_value(out, NULL, raised, sizeof raised);
      break;
    case 's':
    case 'y':
      if (!(rc = pyhost__callf_read_borrowed(w->h, r, rtype, &got.s, &len, &kept, fname))) {
        pyhost_arg a = rtype == 's' ? pyhost_arg_str(got.s, len) : pyhost_arg_bytes(got.s, len);
        pyhost__wbuf_u8(out, PYHOST_OK);
        pyhost__wbuf_arg(out, &a, raised, sizeof raised);
        PY.Py_DecRef(kept);
      }
      break;
    default:
      if (!(rc = pyhost__callf_read_result(w->h, r, rtype, &got, fname, 0))) {
        pyhost_value *v = rtype == 'O' ? got.v
                          : rtype == 'd' ? pyhost_value_float(got.d)
                          : rtype == 'b' ? pyhost_value_bool(got.i)
                          : pyhost_value_int(rtype == 'i' ? got.i : got.l);
        if (!v) rc = pyhost__set_error(w->h, PYHOST_NOMEM, "out of memory");
        else reply_value(w, out, v, hook);
        pyhost_value_free(v);
      }
      break;
    }
  }
  pyhost__leave(w->h, gil);
  return rc;
}

static void serve_callf(struct worker *w, struct pyhost__rbuf *m, struct pyhost__wbuf *out) {
  char *hook = pyhost__strdup(pyhost__rbuf_str(m, NULL));
  char rtype = (char)pyhost__rbuf_u8(m);
  uint32_t n = pyhost__rbuf_u32(m), npos = pyhost__rbuf_u32(m);
  pyhost_value *argv[PYHOST__CALLF_MAX] = {0};
  char *kwname[PYHOST__CALLF_MAX] = {0};
  int rc = PYHOST_OK;
  if (m->bad || n > PYHOST__CALLF_MAX || npos > n) m->bad = 1;
  for (uint32_t i = 0; !m->bad && i < n; i++) {
    if (i >= npos && !(kwname[i] = pyhost__strdup(pyhost__rbuf_str(m, NULL)))) rc = PYHOST_NOMEM;
    if (!(argv[i] = pyhost__rbuf_value(m)) && !m->bad) rc = PYHOST_NOMEM;
  }
  if (m->bad) finish(w, 3); /* not pyhost's host */
  if (!hook || rc) rc = pyhost__set_error(w->h, PYHOST_NOMEM, "plugin %s: out of memory in its process", w->name);
  else rc = limit_status(w, callf_run(w, hook, rtype, argv, kwname, n, npos, out));
  if (rc) reply_error(w, out, rc);
  for (uint32_t i = 0; i < n && i < PYHOST__CALLF_MAX; i++) {
    pyhost_value_free(argv[i]);
    pyhost__free(kwname[i]);
  }
  pyhost__free(hook);
}

static void serve_sync(struct worker *w, struct pyhost__rbuf *m, struct pyhost__wbuf *out);

static void serve(struct worker *w, int type, struct pyhost__rbuf *m) {
  uint32_t tree = pyhost__rbuf_u32(m);
  int outer = w->depth == 0;
  if (outer) tree_begin(w, tree);
  w->depth++;
  struct pyhost__wbuf out = {0};
  pyhost__wbuf_start(&out, PYHOST__W_REPLY);
  int rc;
  switch (type) {
  case PYHOST__W_CALL: serve_call(w, m, &out); break;
  case PYHOST__W_CALLF: serve_callf(w, m, &out); break;
  case PYHOST__W_HAS_HOOK: {
    char *hook = pyhost__strdup(pyhost__rbuf_str(m, NULL));
    rc = hook ? pyhost_plugin_has_hook(w->h, w->p, hook) : PYHOST_NOMEM;
    if (rc) reply_error(w, &out, rc);
    else pyhost__wbuf_u8(&out, PYHOST_OK);
    pyhost__free(hook);
    break;
  }
  case PYHOST__W_HOOKS: {
    pyhost_value *names = NULL;
    if ((rc = pyhost_plugin_hooks(w->h, w->p, &names))) reply_error(w, &out, rc);
    else reply_value(w, &out, names, "(hooks)");
    pyhost_value_free(names);
    break;
  }
  case PYHOST__W_RELOAD:
    if ((rc = pyhost_plugin_reload(w->h, w->p)) || (rc = module_of(w))) reply_error(w, &out, rc);
    else {
      pyhost__wbuf_u8(&out, PYHOST_OK);
      pyhost__wbuf_str(&out, pyhost_plugin_module_name(w->p), PYHOST_STRLEN);
    }
    break;
  case PYHOST__W_SYNC: serve_sync(w, m, &out); break;
  default: break;
  }
  w->depth--;
  if (outer) tree_end(w);
  if (out.nomem) { /* the answer itself: a short one */
    pyhost__wbuf_free(&out);
    pyhost__wbuf_start(&out, PYHOST__W_REPLY);
    pyhost__set_error(w->h, PYHOST_NOMEM, "plugin %s: out of memory in its process", w->name);
    reply_error(w, &out, PYHOST_NOMEM);
  }
  if (pyhost__wbuf_send(&out, w->chan) != 0) finish(w, 0); /* the host is gone */
  pyhost__wbuf_free(&out);
}

/* Receives and serves the host's requests; with reply set, until the answer to this
 * process's own host function call comes (its fields in *reply, valid until the next
 * receive).  EXIT, the end of the channel or a broken message end the process. */
static void pump(struct worker *w, struct pyhost__rbuf *reply) {
  for (;;) {
    int type;
    struct pyhost__rbuf m;
    int r = pyhost__wire_recv(&w->in, w->chan, PYHOST__FOREVER, &type, &m);
    if (r != PYHOST__WIRE_OK) finish(w, r == PYHOST__WIRE_EOF ? 0 : 3);
    if (type == PYHOST__W_REPLY && reply) {
      *reply = m;
      return;
    }
    if (type == PYHOST__W_EXIT) finish(w, 0);
    if (type < PYHOST__W_CALL || type > PYHOST__W_SYNC) finish(w, 3);
    serve(w, type, &m);
  }
}

/* ---- the host's functions, called from the plugin ---- */

/* Raises the host's exception type_name(text) in the plugin when this Python knows the
 * type (a builtin, an exception class of the host's modules, an importable one), else
 * RuntimeError naming it. */
static int raise_from_host(pyhost *h, const char *type_name, const char *text) {
  int known = 0;
  PyGILState_STATE gil;
  if (type_name[0] && pyhost__enter(h, &gil) == PYHOST_OK) {
    PyObject *t = pyhost__resolve(h, type_name);
    known = t && (PY.PyType_GetFlags(Py_TYPE(t)) & Py_TPFLAGS_TYPE_SUBCLASS) &&
            PY.PyType_IsSubtype((PyTypeObject *)t, (PyTypeObject *)*PY.PyExc_BaseException);
    PY.Py_DecRef(t);
    PY.PyErr_Clear();
    pyhost__leave(h, gil);
  }
  if (known) return pyhost_raise_named(h, type_name, "%s", text);
  return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "%s: %s", type_name[0] ? type_name : "error", text);
}

static int proxy(pyhost *h, void *userdata, const pyhost_value *const *args, size_t nargs,
                 const pyhost_value *kwargs, pyhost_value **result) {
  struct pyhost__mirror_fn *f = userdata;
  struct worker *w = f->ctx;
  if (f->is_type)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR,
                        "%s.%s is a host type, and host types are in-process only: a plugin "
                        "in a process of its own (PYHOST_ISOLATION_PROCESS) cannot make or use "
                        "one; the host's functions are there",
                        f->module, f->name);
  int on_main = PY.PyThread_get_thread_ident() == w->main_ident;
  if (!on_main || w->depth == 0)
    return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR,
                        "%s.%s: the plugin's process reaches the host's functions only during a "
                        "call from the host and on the thread running it (this is %s)",
                        f->module, f->name, on_main ? "between calls" : "another thread");
  struct pyhost__wbuf b = {0};
  char why[256];
  pyhost__wbuf_start(&b, PYHOST__W_CALLBACK);
  pyhost__wbuf_str(&b, f->module, PYHOST_STRLEN);
  pyhost__wbuf_str(&b, f->name, PYHOST_STRLEN);
  pyhost__wbuf_tuple(&b, nargs);
  for (size_t i = 0; i < nargs; i++)
    if (pyhost__wbuf_value(&b, args[i], why, sizeof why) != 0) {
      pyhost__wbuf_free(&b);
      return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR,
                          "%s.%s(): argument %zu is %s, which cannot leave the plugin's process "
                          "(only None, bool, int, float, str, bytes, and lists, tuples and dicts "
                          "of them cross to the host)",
                          f->module, f->name, i + 1, why);
    }
  if (pyhost__wbuf_value(&b, kwargs, why, sizeof why) != 0) {
    pyhost__wbuf_free(&b);
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR,
                        "%s.%s(): a keyword argument is %s, which cannot leave the plugin's "
                        "process",
                        f->module, f->name, why);
  }
  if (b.nomem) {
    pyhost__wbuf_free(&b);
    return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "%s.%s(): out of memory", f->module, f->name);
  }
  if (pyhost__wbuf_send(&b, w->chan) != 0) finish(w, 0); /* the host is gone */
  pyhost__wbuf_free(&b);
  /* the answer, serving the host's nested requests meanwhile, without the GIL */
  PyThreadState *ts = PY.PyEval_SaveThread();
  struct pyhost__rbuf r;
  pump(w, &r);
  PY.PyEval_RestoreThread(ts);
  if (r.p < r.end && (unsigned char)*r.p == PYHOST_OK) {
    r.p++;
    pyhost_value *v = pyhost__rbuf_value(&r);
    if (!v && r.bad) finish(w, 3);
    if (!v) return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "%s.%s(): out of memory", f->module, f->name);
    *result = v;
    return PYHOST_OK;
  }
  struct pyhost__wire_error e;
  pyhost__rbuf_error(&r, &e, NULL);
  if (r.bad) finish(w, 3);
  /* copied: resolving the type runs Python code, which may reach the host again */
  char type_name[256], text[4096];
  pyhost__fmt(type_name, sizeof type_name, "%s", e.exc_type);
  pyhost__fmt(text, sizeof text, "%s", e.exc_text[0] ? e.exc_text : e.message);
  return raise_from_host(h, type_name, text);
}

static void serve_sync(struct worker *w, struct pyhost__rbuf *m, struct pyhost__wbuf *out) {
  char err[512] = "";
  if (pyhost__hostmods_apply(w->h, &w->mirror, m, proxy, w, err, sizeof err) != 0 && m->bad)
    finish(w, 3);
  if (err[0]) fprintf(stderr, "pyhost worker (plugin %s): %s\n", w->name, err);
  pyhost__wbuf_u8(out, PYHOST_OK);
}

/* ---- the start ---- */

int pyhost__worker_main(int argc, char **argv) {
  struct worker w;
  memset(&w, 0, sizeof w);
  char err[512];
  if (pyhost__proc_child_open(argc, argv, &w.chan, &w.control, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  if (!(w.waker = pyhost__proc_child_setup(on_wake)) || !(w.m = pyhost__monitor_new())) return 1;
  /* the watchdog first: the Python started next runs code of its own (site, .pth
   * files) that may hang, and the host may end meanwhile */
  if (pyhost__thread_start(control_main, &w, 1, NULL) != 0) {
    fprintf(stderr, "pyhost's worker: cannot start its control thread\n");
    return 1;
  }
  struct pyhost__wbuf b = {0};
  pyhost__wbuf_start(&b, PYHOST__W_HELLO);
  pyhost__wbuf_u32(&b, PYHOST__WIRE_MAGIC);
  pyhost__wbuf_u32(&b, PYHOST__WIRE_VERSION);
  pyhost__wbuf_str(&b, PYHOST_VERSION_STRING, PYHOST_STRLEN);
  if (pyhost__wbuf_send(&b, w.chan) != 0) return 0;

  int type;
  struct pyhost__rbuf m;
  if (pyhost__wire_recv(&w.in, w.chan, PYHOST__FOREVER, &type, &m) != PYHOST__WIRE_OK ||
      type != PYHOST__W_START)
    return 0;
  uint32_t tree = pyhost__rbuf_u32(&m);
  pyhost_config *cfg = pyhost__rbuf_config(&m);
  char *path = pyhost__strdup(pyhost__rbuf_str(&m, NULL));
  w.name = pyhost__strdup(pyhost__rbuf_str(&m, NULL)); /* as the host names it */
  w.memory_limit = (uint64_t)pyhost__rbuf_i64(&m);
  if (!cfg || !path || !w.name || m.bad) return 3;
  pyhost_config_set_flags(cfg, cfg->flags | PYHOST_INIT_SIGNALS);
  int rc = pyhost_init(cfg, &w.h);
  pyhost_config_free(cfg);
  if (rc == PYHOST_OK) w.main_ident = PY.PyThread_get_thread_ident(); /* this thread's */
  pyhost__wbuf_start(&b, PYHOST__W_REPLY);
  if (rc != PYHOST_OK) {
    char text[8192];
    pyhost__fmt(text, sizeof text,
                "loading plugin %s from %s failed: its process could not start Python: %s",
                w.name, path, pyhost_errmsg(w.h));
    struct pyhost__wire_error e;
    memset(&e, 0, sizeof e);
    e.status = rc;
    e.message = text;
    pyhost__wbuf_error(&b, &e);
    pyhost__wbuf_send(&b, w.chan);
    return 1;
  }
  if (setup_python(&w) != 0) {
    pyhost__set_error(w.h, PYHOST_ERROR,
                      "loading plugin %s from %s failed: its process could not set up Python",
                      w.name, path);
    reply_error(&w, &b, PYHOST_ERROR);
    pyhost__wbuf_send(&b, w.chan);
    return 1;
  }
  pyhost__wbuf_start(&b, PYHOST__W_LOADING); /* the wall-clock limit counts from here */
  if (pyhost__wbuf_send(&b, w.chan) != 0) return 0;
  tree_begin(&w, tree);
  w.depth++;
  err[0] = '\0'; /* apply writes it only on a failure; the start wrote into it before */
  rc = pyhost__hostmods_apply(w.h, &w.mirror, &m, proxy, &w, err, sizeof err);
  if (err[0]) fprintf(stderr, "pyhost worker: %s\n", err);
  if (rc != 0 && m.bad) return 3;
  rc = pyhost_plugin_load(w.h, path, &w.p);
  if (rc == PYHOST_OK) rc = module_of(&w);
  w.depth--;
  tree_end(&w);
  pyhost__wbuf_start(&b, PYHOST__W_REPLY);
  if (rc != PYHOST_OK) {
    reply_error(&w, &b, rc);
    pyhost__wbuf_send(&b, w.chan);
    finish(&w, 1);
  }
  pyhost__wbuf_u8(&b, PYHOST_OK);
  pyhost__wbuf_str(&b, pyhost_plugin_path(w.p), PYHOST_STRLEN);
  pyhost__wbuf_str(&b, pyhost_plugin_module_name(w.p), PYHOST_STRLEN);
  if (pyhost__wbuf_send(&b, w.chan) != 0) finish(&w, 0);
  pyhost__wbuf_free(&b);
  pump(&w, NULL);
  return 0;
}
