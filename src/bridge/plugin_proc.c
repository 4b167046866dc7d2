/* plugin_proc.c: the process isolation level, the host's side (docs/plugins.md,
 * "Isolation").  A plugin runs in a worker process (worker.c, started through
 * src/platform/proc.h) and every plugin call becomes a request on its channel
 * (wire.h).  While the host waits for the reply it serves the host functions the
 * plugin calls (with the GIL, on the waiting thread), so nested calls work to any
 * depth: host -> plugin -> host -> plugin ...
 *
 * Threads.  A call here holds no GIL while it waits (a thread that holds one, inside
 * a host function or a GIL scope, gives it up meanwhile), so plugins in different
 * processes run in parallel.  Calls of one plugin take turns: the plugin's owner is
 * the thread whose call runs; a call from that thread (a host function the plugin
 * called, calling it again) nests; a call from another thread waits for its turn,
 * unless waiting would close a circle of threads each waiting for a plugin the next
 * one holds: that call answers PYHOST_MISUSE.  One monitor guards the owners of every
 * plugin, their state, and their workers' handles against pyhost_interrupt,
 * pyhost_plugin_unload and pyhost_finalize on other threads.
 *
 * Ends.  A worker that ends (a crash, a kill by a limit, by unload or finalize)
 * shows as the end of its channel to the call waiting on it: that call reaps it,
 * returns PYHOST_PROCESS or PYHOST_LIMIT with how it ended and the last lines of its
 * stderr, and every later call answers PYHOST_PROCESS until a restart.
 */
#include "bridge.h"
#include "callf.h"
#include "hostmods.h"
#include "plugin_level.h"
#include "wire.h"

#include <stdlib.h>
#include <string.h>

#ifndef PYHOST_WORKER_NAME
#  define PYHOST_WORKER_NAME "pyhost-worker"
#endif

/* How long a worker may take to say who it is after it was started (a loaded CI box
 * can take seconds to exec a program), and to end after EXIT or after its channel
 * closed, before it is killed. */
enum { HELLO_MS = 60000, END_MS = 2000, DEFAULT_GRACE_MS = 1000 };

enum { STARTING, RUNNING, ENDED };
enum { BY_NOTHING, BY_UNLOAD, BY_FINALIZE, BY_LIMIT, BY_RESTART };

/* A thread owns a plugin's turn, or waits for one, as its pyhost__thread (core.h),
 * whose plugin_waiting_for says which (deadlock detection). */
#define ME (&pyhost__thread)

struct pyhost__pp {
  pyhost *h;
  long owner_pid;        /* the process that loaded it: a forked child may not use it */
  pyhost_plugin *handle; /* the public handle, for the output function */
  char *name, *given;    /* the name, the path as given */
  char *path, *module_name; /* as the worker reports them */
  /* the options */
  pyhost_config *python;
  char *deps_env;              /* its dependencies' environment, first on sys.path; NULL: none */
  char *worker;
  uint64_t memory_limit;
  unsigned cpu_seconds, timeout_ms, grace_ms;
  pyhost_output_fn output;
  void *output_ctx;
  /* used by the owner thread only */
  struct pyhost__wire_in in;
  struct pyhost__wbuf out;     /* one message at a time, sent as soon as it is built */
  unsigned long synced_gen;    /* the host modules' generation the worker has */
  int64_t deadline;            /* the running call's wall-clock limit, or FOREVER */
  int limit_interrupted;       /* the limit's interrupt was sent */
  pyhost_value *kept;          /* pyhost_plugin_callf's borrowed result */
  const char *doing;           /* what the outermost call does, for messages */
  char doing_buf[300];
  /* under procs->m */
  struct pyhost__proc *proc;   /* NULL when no worker runs */
  struct pyhost__thread *owner;
  int depth, waiters, state, ended_by, doomed;
  int deferred; /* unloaded from inside its own call: that call's end finishes it */
  uint32_t tree, trees;        /* the outermost call's id; ids handed out */
  char *end_text;              /* why it ended, for later calls */
  long pid;
  struct pyhost__pp *next, *prev;
};

struct pyhost__procs {
  struct pyhost__monitor *m;
  struct pyhost__pp *all;
  int closing; /* finalize has begun */
  long pid;    /* the process this state belongs to */
  struct pyhost__proc_service *service; /* watches the workers; made by the first start */
  /* in a forked child: the parent's monitor and service, unused */
  struct pyhost__monitor *parents;
  struct pyhost__proc_service *parent_service;
};

static void at_close(void);
static void at_drop(void);
static void at_interrupt(void);

/* The level's state, made by the first load (which holds the GIL then).  In a child
 * forked from the host it starts afresh: the parent's plugins and workers are not
 * the child's (their calls refuse there), and the monitor may have been held by a
 * thread that does not exist in the child. */
static struct pyhost__procs *procs(void) {
  struct pyhost__procs *ps = pyhost__bridge.procs;
  long self = pyhost__proc_self();
  if (ps && ps->pid != self) {
    struct pyhost__monitor *m = pyhost__monitor_new();
    if (m) {
      ps->parents = ps->m; /* left as it is: a thread of the parent may have held it */
      ps->m = m;
      ps->parent_service = ps->service; /* its thread is not in this process */
      ps->service = NULL;
      ps->all = NULL;
      ps->pid = self;
    }
  }
  return ps;
}

/* PYHOST_OK, or MISUSE in a child forked from the process that loaded pp. */
static int same_process(pyhost *h, struct pyhost__pp *pp, const char *fn) {
  if (pp->owner_pid == pyhost__proc_self()) return PYHOST_OK;
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "%s: plugin %s runs in a process that belongs to the process that "
                           "loaded it; this one was forked from that one",
                           fn, pp->name);
}

/* ---- the GIL while waiting ---- */

/* A call that waits for a worker gives up the GIL this thread holds (inside a host
 * function, or a GIL scope), so that other threads, and the host functions the
 * worker calls on this one, can have it. */
struct gap {
  pyhost *h;
  PyThreadState *ts;
};

static void gap_open(struct gap *g, pyhost *h) {
  g->h = h;
  g->ts = pyhost__inflight_depth() > 0 || pyhost__gil_scoped(h) ? PY.PyEval_SaveThread() : NULL;
}

static void gap_close(struct gap *g) {
  if (g->ts) PY.PyEval_RestoreThread(g->ts);
  g->ts = NULL;
}

/* Takes the GIL inside a gap: PYHOST_OK (then gil_drop) or MISUSE with the message
 * set (Python no longer takes calls). */
static int gil_take(struct gap *g, PyGILState_STATE *state) {
  gap_close(g);
  int rc = pyhost__enter(g->h, state);
  if (rc) gap_open(g, g->h);
  return rc;
}

static void gil_drop(struct gap *g, PyGILState_STATE state) {
  pyhost__leave(g->h, state);
  gap_open(g, g->h);
}

/* ---- turns ---- */

/* 1 when waiting for pp would close a circle of threads waiting for each other. */
static int would_deadlock(struct pyhost__pp *pp) {
  struct pyhost__thread *t = pp->owner;
  for (int hops = 0; t && hops < 10000; hops++) {
    struct pyhost__pp *w = t->plugin_waiting_for;
    if (!w) return 0;
    if (w->owner == ME) return 1;
    t = w->owner;
  }
  return 0;
}

/* This thread's turn on pp: PYHOST_OK (nested when it has it already), or MISUSE. */
static int acquire(pyhost *h, struct pyhost__pp *pp, const char *fn) {
  struct pyhost__procs *ps = procs();
  int rc = PYHOST_OK;
  pyhost__monitor_enter(ps->m);
  for (;;) {
    if (pp->owner == ME) {
      pp->depth++;
      break;
    }
    if (pp->doomed) {
      rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin %s was unloaded", fn, pp->name);
      break;
    }
    if (ps->closing) {
      rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin %s: this pyhost is being finalized",
                             fn, pp->name);
      break;
    }
    if (!pp->owner) {
      pp->owner = ME;
      pp->depth = 1;
      pp->tree = ++pp->trees ? pp->trees : ++pp->trees; /* never 0: 0 is "idle" */
      break;
    }
    if (would_deadlock(pp)) {
      rc = pyhost__set_error(h, PYHOST_MISUSE,
                             "%s: plugin %s is busy on a thread that waits (through other "
                             "process-level plugins) for a plugin this thread's call holds: "
                             "waiting would deadlock", fn, pp->name);
      break;
    }
    ME->plugin_waiting_for = pp;
    pp->waiters++;
    pyhost__monitor_wait(ps->m, PYHOST__FOREVER);
    pp->waiters--;
    ME->plugin_waiting_for = NULL;
  }
  pyhost__monitor_leave(ps->m);
  return rc;
}

/* Gives the turn back; 1 when it was the outermost call of a plugin unloaded meanwhile
 * (by a host function on this thread): the caller then ends it. */
static int release(struct pyhost__pp *pp) {
  struct pyhost__procs *ps = procs();
  int finish = 0;
  pyhost__monitor_enter(ps->m);
  if (--pp->depth == 0) {
    pp->owner = NULL;
    pp->tree = 0;
    finish = pp->deferred;
    pyhost__monitor_notify(ps->m);
  }
  pyhost__monitor_leave(ps->m);
  return finish;
}

static void send_interrupt(struct pyhost__pp *pp) { /* under procs->m */
  if (!pp->proc || !pp->tree) return;
  char msg[5];
  msg[0] = PYHOST__W_INTERRUPT;
  memcpy(msg + 1, &pp->tree, 4);
  (void)pyhost__proc_control(pp->proc, msg, sizeof msg);
}

/* ---- the worker's end ---- */

/* The last lines of s (at most max), indented, into sb. */
static void last_lines(struct pyhost__strbuf *sb, const char *s, int max) {
  size_t n = strlen(s);
  while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
  size_t start = n;
  int lines = 0;
  while (start > 0 && lines < max) {
    start--;
    if (s[start] == '\n' && ++lines == max) {
      start++;
      break;
    }
  }
  for (size_t i = start; i < n;) {
    size_t e = i;
    while (e < n && s[e] != '\n') e++;
    pyhost__strbuf_printf(sb, "\n    %.*s", (int)(e - i), s + i);
    i = e + 1;
  }
}

/* Takes pp's worker off it (under the monitor), so no other thread reaches it. */
static struct pyhost__proc *take_proc(struct pyhost__pp *pp, int state, const char *end_text) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  struct pyhost__proc *proc = pp->proc;
  pp->proc = NULL;
  pp->pid = 0;
  pp->state = state;
  if (end_text) {
    pyhost__free(pp->end_text);
    pp->end_text = pyhost__strdup(end_text);
  }
  pyhost__monitor_leave(ps->m);
  return proc;
}

/* The worker ended under a call (its channel closed, or it broke the protocol: then
 * it is killed): reaps it, records why for later calls, and sets h's message.
 * Returns PYHOST_PROCESS, or PYHOST_LIMIT when a limit ended it. */
static int worker_ended(struct pyhost__pp *pp, int why) {
  struct pyhost__proc *proc = pp->proc;
  struct pyhost__proc_exit how;
  if (why != PYHOST__WIRE_EOF) pyhost__proc_kill(proc); /* broken or unreachable */
  if (pyhost__proc_wait(proc, pyhost__clock_ms() + END_MS, &how) != 0) {
    pyhost__proc_kill(proc); /* it closed the channel but lives on */
    pyhost__proc_wait(proc, PYHOST__FOREVER, &how);
  }
  char ended[160], tail[4096], text[8192];
  pyhost__proc_describe(&how, ended, sizeof ended);
  pyhost__proc_stderr_tail(proc, tail, sizeof tail);
  pyhost__monitor_enter(procs()->m);
  int by = pp->ended_by;
  pp->ended_by = BY_NOTHING;
  pyhost__monitor_leave(procs()->m);
  /* why, in a clause: the call's message and every later call's */
  char reason[1024];
  int status = PYHOST_PROCESS;
  long pid = pyhost__proc_id(proc);
  if (by == BY_LIMIT) {
    status = PYHOST_LIMIT;
    pyhost__fmt(reason, sizeof reason,
                "%s ran past its wall-clock limit of %u ms and did not stop within %u ms of "
                "the interrupt: its process (pid %ld) was killed",
                pp->doing, pp->timeout_ms, pp->grace_ms, pid);
  } else if (pyhost__proc_cpu_limit_hit(&how, pp->cpu_seconds)) {
    status = PYHOST_LIMIT;
    pyhost__fmt(reason, sizeof reason,
                "its process (pid %ld) used up its CPU time limit of %u s during %s: %s", pid,
                pp->cpu_seconds, pp->doing, ended);
  } else if (by == BY_UNLOAD || by == BY_FINALIZE) {
    pyhost__fmt(reason, sizeof reason, "its process (pid %ld) was ended by %s during %s", pid,
                by == BY_UNLOAD ? "pyhost_plugin_unload" : "pyhost_finalize", pp->doing);
  } else {
    pyhost__fmt(reason, sizeof reason, "its process (pid %ld) ended during %s: %s%s%s", pid,
                pp->doing, ended,
                why == PYHOST__WIRE_BAD ? " (it was killed: it broke pyhost's protocol)" : "",
                !pyhost__proc_killed_from_outside(&how) ? ""
                : pp->memory_limit ? ", not by pyhost: the system's out-of-memory killer (it has "
                                     "a memory limit), or another process"
                                   : ", not by pyhost: the system's out-of-memory killer, or "
                                     "another process");
  }
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, text, sizeof text);
  pyhost__strbuf_printf(&sb, "plugin %s: %s", pp->name, reason);
  if (tail[0]) {
    pyhost__strbuf_printf(&sb, "\nthe last lines it wrote to stderr:");
    last_lines(&sb, tail, 20);
  }
  if (by != BY_UNLOAD && by != BY_FINALIZE)
    pyhost__strbuf_printf(&sb, "\nthe host goes on; pyhost_plugin_restart starts the plugin again");
  take_proc(pp, ENDED, reason);
  pyhost__proc_free(proc);
  pyhost__wire_in_free(&pp->in);
  return pyhost__set_error(pp->h, status, "%s", text);
}

/* Ends pp's worker politely (EXIT, then a kill after a while), without a call
 * waiting on it.  state ENDED with end_text (NULL: keep the one there). */
static void end_worker(struct pyhost__pp *pp, const char *end_text) {
  struct pyhost__proc *proc = take_proc(pp, ENDED, end_text);
  if (!proc) return;
  struct pyhost__wbuf b = {0};
  pyhost__wbuf_start(&b, PYHOST__W_EXIT);
  (void)pyhost__wbuf_send(&b, pyhost__proc_chan(proc));
  pyhost__wbuf_free(&b);
  struct pyhost__proc_exit how;
  if (pyhost__proc_wait(proc, pyhost__clock_ms() + END_MS, &how) != 0) pyhost__proc_kill(proc);
  pyhost__proc_free(proc);
  pyhost__wire_in_free(&pp->in);
}

/* The message of a call on an ended plugin. */
static int not_running(struct pyhost__pp *pp, const char *fn) {
  return pyhost__set_error(pp->h, PYHOST_PROCESS,
                           "%s: plugin %s is not running: %s; pyhost_plugin_restart starts it "
                           "again",
                           fn, pp->name, pp->end_text ? pp->end_text : "its process ended");
}

/* ---- exchanging messages ---- */

static int out_of_memory(struct pyhost__pp *pp) {
  return pyhost__set_error(pp->h, PYHOST_NOMEM, "plugin %s: out of memory", pp->name);
}

/* The deadline of the running call passed: the first time, interrupt it and give it
 * the grace period; the second time, kill the worker. */
static void deadline_passed(struct pyhost__pp *pp) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  if (!pp->limit_interrupted) {
    pp->limit_interrupted = 1;
    send_interrupt(pp);
    pp->deadline = pyhost__clock_ms() + pp->grace_ms;
  } else {
    pp->ended_by = BY_LIMIT;
    if (pp->proc) pyhost__proc_kill(pp->proc);
    pp->deadline = PYHOST__FOREVER; /* the end of the channel comes next */
  }
  pyhost__monitor_leave(ps->m);
}

static int serve_callback(struct pyhost__pp *pp, struct gap *g, struct pyhost__rbuf *msg);

/* Sends pp->out and waits for the reply, serving the worker's host function calls
 * meanwhile.  PYHOST_OK with the reply's fields in *reply (valid until the next
 * receive), or the status of the worker's end with h's message set. */
static int exchange(struct pyhost__pp *pp, struct gap *g, struct pyhost__rbuf *reply) {
  if (pp->out.nomem) return out_of_memory(pp);
  struct pyhost__chan *chan = pyhost__proc_chan(pp->proc);
  if (pyhost__wbuf_send(&pp->out, chan) != 0) return worker_ended(pp, PYHOST__WIRE_EOF);
  for (;;) {
    int type;
    struct pyhost__rbuf msg;
    int r = pyhost__wire_recv(&pp->in, chan, pp->deadline, &type, &msg);
    if (r == PYHOST__WIRE_TIMEOUT) {
      deadline_passed(pp);
      continue;
    }
    if (r == PYHOST__WIRE_NOMEM) return out_of_memory(pp);
    if (r != PYHOST__WIRE_OK) return worker_ended(pp, r);
    if (type == PYHOST__W_LOADING) { /* a start: the plugin's own code begins */
      pyhost__monitor_enter(procs()->m);
      if (pp->timeout_ms) pp->deadline = pyhost__clock_ms() + pp->timeout_ms;
      pyhost__monitor_leave(procs()->m);
      continue;
    }
    if (type == PYHOST__W_REPLY) {
      /* for the host's output function, what the call wrote comes before its return
       * (a read per stream per call; without a function the service thread forwards
       * stderr as it comes, and stdout is the host's own) */
      if (pp->output) pyhost__proc_drain(pp->proc);
      *reply = msg;
      return PYHOST_OK;
    }
    if (type != PYHOST__W_CALLBACK || serve_callback(pp, g, &msg) < 0)
      return worker_ended(pp, PYHOST__WIRE_BAD);
    if (pp->out.nomem) return out_of_memory(pp);
    if (pyhost__wbuf_send(&pp->out, chan) != 0) return worker_ended(pp, PYHOST__WIRE_EOF);
  }
}

/* A reply's status: PYHOST_OK, or the error record's status with h's message, exit
 * code and exception data set from it. */
static int reply_status(struct pyhost__pp *pp, struct pyhost__rbuf *r) {
  if (r->p < r->end && (unsigned char)*r->p == PYHOST_OK) {
    r->p++;
    return PYHOST_OK;
  }
  int status = pyhost__rbuf_error_to(r, pp->h);
  if (status < 0) {
    pyhost__proc_kill(pp->proc);
    return worker_ended(pp, PYHOST__WIRE_BAD);
  }
  return status;
}

/* A host function the worker called (a CALLBACK message): runs it with the GIL on
 * this thread, and leaves the reply in pp->out.  -1 for a malformed message. */
static int serve_callback(struct pyhost__pp *pp, struct gap *g, struct pyhost__rbuf *msg) {
  /* copied out first: the function may make calls that receive into pp->in */
  char *module = pyhost__strdup(pyhost__rbuf_str(msg, NULL));
  char *name = pyhost__strdup(pyhost__rbuf_str(msg, NULL));
  pyhost_value *args = pyhost__rbuf_value(msg);
  pyhost_value *kwargs = args ? pyhost__rbuf_value(msg) : NULL;
  if (msg->bad || (args && args->kind != PYHOST_KIND_TUPLE)) {
    pyhost_value_free(args);
    pyhost_value_free(kwargs);
    pyhost__free(module);
    pyhost__free(name);
    return -1;
  }
  struct pyhost__wire_error e = {PYHOST_PYEXC, "", 0, 0, 0, "RuntimeError", "", NULL, 0};
  char type[256] = "", text[4096] = "", why[256];
  pyhost_value *result = NULL;
  PyGILState_STATE gil;
  if (!module || !name || !args || !kwargs) {
    e.exc_type = "MemoryError";
    e.exc_text = "out of memory in the host";
  } else if (gil_take(g, &gil) != PYHOST_OK) {
    pyhost__fmt(text, sizeof text, "%s.%s: the host is being finalized and takes no calls",
                module, name);
    e.exc_text = text;
  } else {
    PyObject *fn = pyhost__hostfn_find(module, name);
    size_t n = pyhost_value_count(args);
    PyObject *t = fn ? PY.PyTuple_New((Py_ssize_t)n) : NULL;
    for (size_t i = 0; t && i < n; i++) {
      PyObject *x = pyhost__to_python(pp->h, pyhost_value_item(args, i));
      if (!x || PY.PyTuple_SetItem(t, (Py_ssize_t)i, x) < 0) {
        PY.Py_DecRef(t);
        t = NULL;
      }
    }
    PyObject *kw = t && kwargs->kind == PYHOST_KIND_DICT ? pyhost__to_python(pp->h, kwargs) : NULL;
    PyObject *r = t && (kw || kwargs->kind != PYHOST_KIND_DICT) ? PY.PyObject_Call(fn, t, kw) : NULL;
    if (r && !(result = pyhost__from_python(pp->h, r))) r = NULL;
    if (!r) { /* its exception: type and text, raised again in the worker */
      PyObject *et = NULL, *ev = NULL, *tb = NULL;
      PY.PyErr_Fetch(&et, &ev, &tb);
      if (et) {
        PY.PyErr_NormalizeException(&et, &ev, &tb);
        pyhost__type_name(et, type, sizeof type);
        PyObject *s = ev ? PY.PyObject_Str(ev) : NULL;
        char *u = s ? pyhost__utf8_copy(s, NULL) : NULL;
        pyhost__fmt(text, sizeof text, "%s", u ? u : "");
        pyhost__free(u);
        PY.Py_DecRef(s);
      }
      PY.PyErr_Clear();
      PY.Py_DecRef(et);
      PY.Py_DecRef(ev);
      PY.Py_DecRef(tb);
      e.exc_type = type;
      e.exc_text = text;
    }
    PY.Py_DecRef(r);
    PY.Py_DecRef(kw);
    PY.Py_DecRef(t);
    PY.Py_DecRef(fn);
    gil_drop(g, gil);
  }
  pyhost__wbuf_start(&pp->out, PYHOST__W_REPLY);
  if (result) {
    size_t mark = pp->out.len;
    pyhost__wbuf_u8(&pp->out, PYHOST_OK);
    if (pyhost__wbuf_value(&pp->out, result, why, sizeof why) == 0) goto done;
    pp->out.len = mark;
    pyhost__fmt(text, sizeof text,
                "%s.%s() returned %s, which cannot cross to the plugin's process (only None, "
                "bool, int, float, str, bytes, and lists, tuples and dicts of them)",
                module, name, why);
    e.exc_type = "TypeError";
    e.exc_text = text;
  }
  pyhost__wbuf_error(&pp->out, &e);
done:
  pyhost_value_free(result);
  pyhost_value_free(args);
  pyhost_value_free(kwargs);
  pyhost__free(module);
  pyhost__free(name);
  return 0;
}

/* ---- calls ---- */

/* One public call on a plugin: the handle checked and counted in flight, the GIL
 * given up, this thread's turn on the plugin. */
struct op {
  pyhost *h;
  struct pyhost__pp *pp;
  struct gap gap;
  int outer;
};

static int op_begin(struct op *o, pyhost *h, struct pyhost__pp *pp, const char *fn, const char *doing) {
  int rc = pyhost__enter_nogil(h);
  if (rc) return rc;
  if ((rc = same_process(h, pp, fn))) {
    pyhost__leave_nogil();
    return rc;
  }
  o->h = h;
  o->pp = pp;
  gap_open(&o->gap, h);
  if ((rc = acquire(h, pp, fn))) {
    gap_close(&o->gap);
    pyhost__leave_nogil();
    return rc;
  }
  o->outer = pp->depth == 1;
  if (o->outer) {
    pp->deadline = pp->timeout_ms ? pyhost__clock_ms() + pp->timeout_ms : PYHOST__FOREVER;
    pp->limit_interrupted = 0;
    pyhost__fmt(pp->doing_buf, sizeof pp->doing_buf, "%s", doing);
    pp->doing = pp->doing_buf;
  }
  return PYHOST_OK;
}

static void unload_finish(struct pyhost__pp *pp);

static int op_end(struct op *o, int rc) {
  struct pyhost__pp *pp = o->pp;
  if (o->outer) {
    pp->deadline = PYHOST__FOREVER;
    if (rc == PYHOST_INTERRUPTED && pp->limit_interrupted) { /* stopped by its limit */
      char *was = pyhost__strdup(pyhost_errmsg(o->h));
      struct pyhost__excdata d; /* the exception behind it stays readable */
      pyhost__exc_snapshot(o->h, &d);
      rc = pyhost__set_error(o->h, PYHOST_LIMIT,
                             "plugin %s: %s ran past its wall-clock limit of %u ms and was "
                             "interrupted: %s",
                             pp->name, pp->doing, pp->timeout_ms, was ? was : "");
      pyhost__set_exception(o->h, &d);
      pyhost__free(was);
    }
  }
  int finish = release(pp);
  gap_close(&o->gap);
  if (finish) unload_finish(pp); /* unloaded by a host function during this call */
  pyhost__leave_nogil();
  return rc;
}

/* Starts a request of type with the running call's tree id. */
static void request(struct pyhost__pp *pp, int type) {
  pyhost__wbuf_start(&pp->out, type);
  pyhost__wbuf_u32(&pp->out, pp->tree);
}

/* The host's modules, described with the GIL, at the end of pp->out. */
static int describe_modules(struct op *o) {
  PyGILState_STATE gil;
  int rc = gil_take(&o->gap, &gil);
  if (rc) return rc;
  o->pp->synced_gen = atomic_load(&pyhost__bridge.modules_gen);
  pyhost__hostmods_describe(o->h, &o->pp->out);
  gil_drop(&o->gap, gil);
  return PYHOST_OK;
}

/* Before a request: the worker learns of changes to the host's modules. */
static int sync_modules(struct op *o) {
  struct pyhost__pp *pp = o->pp;
  if (atomic_load(&pyhost__bridge.modules_gen) == pp->synced_gen) return PYHOST_OK;
  request(pp, PYHOST__W_SYNC);
  int rc = describe_modules(o);
  struct pyhost__rbuf r;
  if (!rc && !(rc = exchange(pp, &o->gap, &r))) rc = reply_status(pp, &r);
  return rc;
}

/* A call's start on a running plugin: its turn, the worker running, modules synced. */
static int call_begin(struct op *o, pyhost *h, struct pyhost__pp *pp, const char *fn, const char *doing) {
  if (!pp) {
    int rc = pyhost__enter_nogil(h);
    if (!rc) {
      rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: plugin is NULL", fn);
      pyhost__leave_nogil();
    }
    return rc;
  }
  int rc = op_begin(o, h, pp, fn, doing);
  if (rc) return rc;
  if (pp->state != RUNNING) rc = not_running(pp, fn);
  else rc = sync_modules(o);
  return rc ? op_end(o, rc) : PYHOST_OK;
}

/* ---- starting a worker ---- */

/* Where the worker program is: PYHOST_OK with its path in out, or PYHOST_NOTFOUND
 * naming every place looked at. */
static int find_worker(struct pyhost__pp *pp, char *out, size_t cap) {
  char tried[4096], dir[PYHOST__PATH_MAX], path[PYHOST__PATH_MAX];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, tried, sizeof tried);
  const char *name = PYHOST_WORKER_NAME;
  const char *env = getenv("PYHOST_WORKER");
  const char *given = pp->worker ? pp->worker : env && env[0] ? env : NULL;
  if (given) {
    if (pyhost__fs_kind(given) == PYHOST__FS_FILE && pyhost__sys_is_executable(given)) {
      pyhost__fmt(out, cap, "%s", given);
      return PYHOST_OK;
    }
    return pyhost__set_error(pp->h, PYHOST_NOTFOUND,
                             "loading plugin %s from %s failed: the worker program %s (%s) %s",
                             pp->name, pp->given, given,
                             pp->worker ? "set in its options" : "from PYHOST_WORKER",
                             pyhost__fs_kind(given) == PYHOST__FS_MISSING ? "does not exist"
                                                                          : "is not a program");
  }
  const char *places[4];
  char beside[PYHOST__PATH_MAX] = "", libexec[PYHOST__PATH_MAX] = "";
  int n = 0;
  /* beside the library (or program) this code is in, and its ../libexec */
  if (pyhost__dl_path(NULL, (void *)find_worker, path, sizeof path) == 0 &&
      pyhost__fs_realpath(path, dir, sizeof dir) == 0) {
    char *slash = strrchr(dir, '/');
    char *bslash = strrchr(dir, '\\');
    if (bslash > slash) slash = bslash;
    if (slash) {
      *slash = '\0';
      pyhost__fmt(beside, sizeof beside, "%s%c%s%s", dir, pyhost__fs_sep, name,
                  pyhost__sys_exe_suffix);
      pyhost__fmt(libexec, sizeof libexec, "%s%c..%clibexec%c%s%s", dir, pyhost__fs_sep,
                  pyhost__fs_sep, pyhost__fs_sep, name, pyhost__sys_exe_suffix);
      places[n++] = beside;
      places[n++] = libexec;
    }
  }
#ifdef PYHOST_WORKER_INSTALL_PATH
  places[n++] = PYHOST_WORKER_INSTALL_PATH;
#endif
#ifdef PYHOST_WORKER_BUILD_PATH
  places[n++] = PYHOST_WORKER_BUILD_PATH;
#endif
  for (int i = 0; i < n; i++) {
    if (pyhost__fs_kind(places[i]) == PYHOST__FS_FILE && pyhost__sys_is_executable(places[i])) {
      pyhost__fmt(out, cap, "%s", places[i]);
      return PYHOST_OK;
    }
    pyhost__strbuf_printf(&sb, "%s%s", i ? ", " : "", places[i]);
  }
  return pyhost__set_error(pp->h, PYHOST_NOTFOUND,
                           "loading plugin %s from %s failed: no worker program (%s%s) for the "
                           "process isolation level: PYHOST_WORKER is not set, and none is at %s; "
                           "name it with pyhost_plugin_options_set_worker or PYHOST_WORKER",
                           pp->name, pp->given, name, pyhost__sys_exe_suffix, tried);
}

/* The platform's output function: to the host's own function, with the handle. */
static void output_to_host(void *ctx, int stream, const char *data, size_t len) {
  struct pyhost__pp *pp = ctx;
  pp->output(pp->output_ctx, pp->handle, stream, data, len);
}

/* Puts dir before the config's sys.path entries. */
static int path_first(pyhost_config *cfg, const char *dir) {
  char **grown = pyhost__realloc(cfg->sys_path, (cfg->n_sys_path + 1) * sizeof *grown);
  if (!grown) return PYHOST_NOMEM;
  cfg->sys_path = grown;
  if (!(dir = pyhost__strdup(dir))) return PYHOST_NOMEM;
  memmove(grown + 1, grown, cfg->n_sys_path * sizeof *grown);
  grown[0] = (char *)dir;
  cfg->n_sys_path++;
  return PYHOST_OK;
}

/* The worker's Python: the options' config, or the host's own (its library); its
 * dependencies' environment first on its sys.path. */
static int worker_python(struct pyhost__pp *pp, pyhost_config *cfg) {
  int rc = pp->python ? pyhost__config_copy(cfg, pp->python) : pyhost__config_copy(cfg, &pp->h->cfg);
  if (rc == PYHOST_OK && !pp->python) rc = pyhost_config_set_library(cfg, pp->h->library_path);
  if (rc == PYHOST_OK && pp->deps_env) rc = path_first(cfg, pp->deps_env);
  if (rc != PYHOST_OK) {
    pyhost__config_clear(cfg);
    return PYHOST_NOMEM;
  }
  return PYHOST_OK;
}

/* The options' Python, or (deps_library) the one chosen for the plugin's
 * requires-python: a copy for pp, or NULL with *rc for the host's own. */
static pyhost_config *python_of(pyhost *h, const pyhost_plugin_options *opt, int *rc) {
  *rc = PYHOST_OK;
  if (!opt->python && !opt->deps_library) return NULL;
  pyhost_config *cfg = pyhost_config_new();
  if (!cfg || pyhost__config_copy(cfg, opt->python ? opt->python : &h->cfg) != PYHOST_OK ||
      (opt->deps_library && pyhost_config_set_library(cfg, opt->deps_library) != PYHOST_OK)) {
    pyhost_config_free(cfg);
    *rc = PYHOST_NOMEM;
    return NULL;
  }
  return cfg;
}

/* The worker's HELLO: PYHOST_OK, or an error with the message set (the worker is
 * then ended). */
static int hello(struct pyhost__pp *pp, const char *program) {
  int type;
  struct pyhost__rbuf m;
  int r = pyhost__wire_recv(&pp->in, pyhost__proc_chan(pp->proc), pyhost__clock_ms() + HELLO_MS,
                            &type, &m);
  if (r == PYHOST__WIRE_OK && type == PYHOST__W_HELLO) {
    uint32_t magic = pyhost__rbuf_u32(&m), version = pyhost__rbuf_u32(&m);
    const char *its = pyhost__rbuf_str(&m, NULL);
    if (!m.bad && magic == PYHOST__WIRE_MAGIC && version == PYHOST__WIRE_VERSION &&
        strcmp(its, PYHOST_VERSION_STRING) == 0)
      return PYHOST_OK;
    if (!m.bad && magic == PYHOST__WIRE_MAGIC) {
      pyhost__proc_kill(pp->proc);
      worker_ended(pp, PYHOST__WIRE_BAD);
      return pyhost__set_error(pp->h, PYHOST_VERSION,
                               "loading plugin %s from %s failed: the worker program %s is "
                               "pyhost %s (protocol %u), this library is pyhost %s (protocol "
                               "%u): use the worker built with this library",
                               pp->name, pp->given, program, its, (unsigned)version,
                               PYHOST_VERSION_STRING, (unsigned)PYHOST__WIRE_VERSION);
    }
  }
  if (r == PYHOST__WIRE_NOMEM) return out_of_memory(pp);
  if (r == PYHOST__WIRE_EOF) return worker_ended(pp, r); /* it ended: say how */
  pyhost__proc_kill(pp->proc);
  worker_ended(pp, PYHOST__WIRE_BAD);
  return pyhost__set_error(pp->h, PYHOST_ERROR,
                           "loading plugin %s from %s failed: %s did not answer as pyhost's "
                           "worker program%s",
                           pp->name, pp->given, program,
                           r == PYHOST__WIRE_TIMEOUT ? " within 60 s" : "");
}

/* Starts a worker for pp and loads the plugin there (inside an op, pp->proc NULL).
 * PYHOST_OK (state RUNNING), or the status with the message set (state ENDED). */
static int start_worker(struct op *o) {
  struct pyhost__pp *pp = o->pp;
  char program[PYHOST__PATH_MAX], err[1024];
  int rc = find_worker(pp, program, sizeof program);
  if (rc) return rc;
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  if (!ps->service && pyhost__proc_service_new(&ps->service, err, sizeof err) != 0)
    ps->service = NULL;
  struct pyhost__proc_service *service = ps->service;
  pyhost__monitor_leave(ps->m);
  if (!service)
    return pyhost__set_error(pp->h, PYHOST_ERROR, "loading plugin %s from %s failed: %s", pp->name,
                             pp->given, err);
  struct pyhost__proc_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.service = service;
  spec.program = program;
  spec.memory_limit = pp->memory_limit;
  spec.cpu_seconds = pp->cpu_seconds;
  spec.capture_stdout = pp->output != NULL;
  spec.output = pp->output ? output_to_host : NULL;
  spec.output_ctx = pp;
  struct pyhost__proc *proc;
  if (pyhost__proc_start(&spec, &proc, err, sizeof err) != 0)
    return pyhost__set_error(pp->h, PYHOST_ERROR, "loading plugin %s from %s failed: %s", pp->name,
                             pp->given, err);
  pyhost__monitor_enter(procs()->m);
  pp->proc = proc;
  pp->pid = pyhost__proc_id(proc);
  pp->state = STARTING;
  pyhost__monitor_leave(procs()->m);
  if ((rc = hello(pp, program))) return rc;

  pyhost_config cfg;
  if (worker_python(pp, &cfg) != PYHOST_OK) {
    end_worker(pp, "its start failed: out of memory");
    return out_of_memory(pp);
  }
  request(pp, PYHOST__W_START);
  pyhost__wbuf_config(&pp->out, &cfg);
  pyhost__config_clear(&cfg);
  pyhost__wbuf_str(&pp->out, pp->given, PYHOST_STRLEN);
  pyhost__wbuf_str(&pp->out, pp->name, PYHOST_STRLEN);
  pyhost__wbuf_i64(&pp->out, (int64_t)pp->memory_limit);
  if ((rc = describe_modules(o))) {
    end_worker(pp, "its start failed: the host is being finalized");
    return rc;
  }
  /* the wall-clock limit counts from LOADING: the plugin's code, not the start of a
   * process and its Python (a debug build on a loaded machine may take a while).
   * Until then a worker under a limit gets as long as its HELLO may take, or the limit
   * if that is longer: a Python that hangs as it starts still ends in a status. */
  pyhost__monitor_enter(procs()->m);
  pp->deadline = pp->timeout_ms ? pyhost__clock_ms() + (pp->timeout_ms > HELLO_MS ? pp->timeout_ms
                                                                                  : HELLO_MS)
                                : PYHOST__FOREVER;
  pyhost__monitor_leave(procs()->m);
  struct pyhost__rbuf r;
  if ((rc = exchange(pp, &o->gap, &r))) return rc;
  if ((rc = reply_status(pp, &r))) {
    char text[1024];
    pyhost__fmt(text, sizeof text, "its last start failed (%s)", pyhost_status_name(rc));
    char *msg = pyhost__strdup(pyhost_errmsg(pp->h)); /* end_worker keeps the message */
    end_worker(pp, text);
    if (msg) pyhost__set_error(pp->h, rc, "%s", msg);
    pyhost__free(msg);
    return rc;
  }
  const char *path = pyhost__rbuf_str(&r, NULL);
  const char *module = pyhost__rbuf_str(&r, NULL);
  char *p = pyhost__strdup(path), *m = pyhost__strdup(module);
  if (r.bad || !p || !m) {
    pyhost__free(p);
    pyhost__free(m);
    end_worker(pp, "its start failed");
    return r.bad ? pyhost__set_error(pp->h, PYHOST_ERROR, "plugin %s: a malformed answer from its process", pp->name)
                 : out_of_memory(pp);
  }
  pyhost__free(pp->path);
  pyhost__free(pp->module_name);
  pp->path = p;
  pp->module_name = m;
  pyhost__monitor_enter(procs()->m);
  pp->state = RUNNING;
  pyhost__monitor_leave(procs()->m);
  return PYHOST_OK;
}

/* ---- the level's operations ---- */

static void pp_free(struct pyhost__pp *pp) {
  pyhost_value_free(pp->kept);
  pyhost__wire_in_free(&pp->in);
  pyhost__wbuf_free(&pp->out);
  pyhost_config_free(pp->python);
  pyhost__free(pp->deps_env);
  pyhost__free(pp->worker);
  pyhost__free(pp->name);
  pyhost__free(pp->given);
  pyhost__free(pp->path);
  pyhost__free(pp->module_name);
  pyhost__free(pp->end_text);
  pyhost__free(pp);
}

/* The level's state, with the GIL (for the finalize hooks).  NULL out of memory. */
static struct pyhost__procs *procs_make(pyhost *h) {
  if (pyhost__bridge.procs) return pyhost__bridge.procs;
  PyGILState_STATE gil;
  if (pyhost__enter(h, &gil) != PYHOST_OK) return NULL;
  struct pyhost__procs *ps = pyhost__bridge.procs;
  if (!ps && (ps = pyhost__calloc(1, sizeof *ps)) && !(ps->m = pyhost__monitor_new())) {
    pyhost__free(ps);
    ps = NULL;
  }
  if (ps && !pyhost__bridge.procs) {
    ps->pid = pyhost__proc_self();
    pyhost__teardown_add(&pyhost__bridge.procs_close_hook, at_close, PYHOST__AT_CLOSE);
    pyhost__teardown_add(&pyhost__bridge.procs_drop_hook, at_drop, PYHOST__AT_DROP);
    pyhost__teardown_add(&pyhost__bridge.procs_interrupt_hook, at_interrupt, PYHOST__AT_INTERRUPT);
    pyhost__bridge.procs = ps;
  }
  pyhost__leave(h, gil);
  return ps;
}

static void list_add(struct pyhost__pp *pp) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  pp->next = ps->all;
  if (ps->all) ps->all->prev = pp;
  ps->all = pp;
  pyhost__monitor_leave(ps->m);
}

static void list_remove(struct pyhost__pp *pp) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  if (pp->prev) pp->prev->next = pp->next;
  else if (ps->all == pp) ps->all = pp->next;
  if (pp->next) pp->next->prev = pp->prev;
  pyhost__monitor_leave(ps->m);
}

static int proc_load(pyhost *h, pyhost_plugin *handle, const char *name, const char *path,
                     const pyhost_plugin_options *opt, void **impl) {
  static const char fn[] = "pyhost_plugin_load_with";
  int rc = pyhost__enter_nogil(h);
  if (rc) return rc;
  pyhost__leave_nogil();
  if (!procs_make(h)) return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", name);
  struct pyhost__pp *pp = pyhost__calloc(1, sizeof *pp);
  int copied = PYHOST_OK;
  if (!pp || !(pp->name = pyhost__strdup(name)) || !(pp->given = pyhost__strdup(path)) ||
      !(pp->path = pyhost__strdup("")) || !(pp->module_name = pyhost__strdup("")) ||
      (opt->worker && !(pp->worker = pyhost__strdup(opt->worker))) ||
      (opt->deps_env && opt->deps_env[0] && !(pp->deps_env = pyhost__strdup(opt->deps_env))) ||
      (!(pp->python = python_of(h, opt, &copied)) && copied != PYHOST_OK)) {
    if (pp) pp_free(pp);
    return pyhost__set_error(h, PYHOST_NOMEM, "loading plugin %s: out of memory", name);
  }
  pp->h = h;
  pp->owner_pid = pyhost__proc_self();
  pp->handle = NULL; /* the host learns the handle when the load returns */
  pp->memory_limit = opt->memory_limit;
  pp->cpu_seconds = opt->cpu_seconds;
  pp->timeout_ms = opt->call_timeout_ms;
  pp->grace_ms = opt->kill_grace_ms ? opt->kill_grace_ms : DEFAULT_GRACE_MS;
  pp->output = opt->output;
  pp->output_ctx = opt->output_ctx;
  pp->deadline = PYHOST__FOREVER;
  pp->state = ENDED;
  list_add(pp);
  struct op o;
  char doing[300];
  pyhost__fmt(doing, sizeof doing, "its start (loading %s)", path);
  if ((rc = op_begin(&o, h, pp, fn, doing)) == PYHOST_OK) {
    rc = start_worker(&o);
    rc = op_end(&o, rc);
  }
  if (rc) {
    list_remove(pp);
    end_worker(pp, NULL);
    pp_free(pp);
    return rc;
  }
  pp->handle = handle;
  *impl = pp;
  return PYHOST_OK;
}

/* A request whose reply is only a status. */
static int status_call(pyhost *h, struct pyhost__pp *pp, const char *fn, const char *doing, int type,
                       const char *hook) {
  struct op o;
  int rc = call_begin(&o, h, pp, fn, doing);
  if (rc) return rc;
  request(pp, type);
  if (hook) pyhost__wbuf_str(&pp->out, hook, PYHOST_STRLEN);
  struct pyhost__rbuf r;
  if (!(rc = exchange(pp, &o.gap, &r))) rc = reply_status(pp, &r);
  return op_end(&o, rc);
}

static int proc_has_hook(pyhost *h, void *impl, const char *hook) {
  struct pyhost__pp *pp = impl;
  if (!hook) {
    int rc = pyhost__enter_nogil(h);
    if (rc) return rc;
    pyhost__leave_nogil();
    return pyhost__set_error(h, PYHOST_MISUSE, "plugin %s: the hook name is NULL", pp->name);
  }
  return status_call(h, pp, "pyhost_plugin_has_hook", "pyhost_plugin_has_hook", PYHOST__W_HAS_HOOK,
                     hook);
}

/* A reply's value into *out (own), or the status of a malformed one. */
static int reply_value(struct pyhost__pp *pp, struct pyhost__rbuf *r, pyhost_value **out) {
  pyhost_value *v = pyhost__rbuf_value(r);
  if (v) {
    if (out) *out = v;
    else pyhost_value_free(v);
    return PYHOST_OK;
  }
  if (!r->bad) return out_of_memory(pp);
  pyhost__proc_kill(pp->proc);
  return worker_ended(pp, PYHOST__WIRE_BAD);
}

static int proc_hooks(pyhost *h, void *impl, pyhost_value **names) {
  struct pyhost__pp *pp = impl;
  struct op o;
  int rc = call_begin(&o, h, pp, "pyhost_plugin_hooks", "pyhost_plugin_hooks");
  if (rc) return rc;
  if (!names) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_plugin_hooks: names is NULL");
  } else {
    request(pp, PYHOST__W_HOOKS);
    struct pyhost__rbuf r;
    if (!(rc = exchange(pp, &o.gap, &r)) && !(rc = reply_status(pp, &r)))
      rc = reply_value(pp, &r, names);
  }
  return op_end(&o, rc);
}

/* Encodes a call's argument value v; PYHOST_TYPE naming what cannot cross. */
static int put_arg(struct pyhost__pp *pp, const pyhost_value *v, const char *what) {
  char why[256];
  if (pyhost__wbuf_value(&pp->out, v, why, sizeof why) == 0) return PYHOST_OK;
  return pyhost__set_error(pp->h, PYHOST_TYPE,
                           "plugin %s: %s holds %s, which cannot cross to the plugin's process "
                           "(only None, bool, int, float, str, bytes, and lists, tuples and "
                           "dicts of them)",
                           pp->name, what, why);
}

static int proc_call(pyhost *h, void *impl, const char *hook, const pyhost_value *args,
                     const pyhost_value *kwargs, pyhost_value **result) {
  struct pyhost__pp *pp = impl;
  char doing[300];
  pyhost__fmt(doing, sizeof doing, "hook %s", hook ? hook : "(NULL)");
  struct op o;
  int rc = call_begin(&o, h, pp, "pyhost_plugin_call", doing);
  if (rc) return rc;
  pyhost_kind ak = pyhost_value_kind(args);
  if (kwargs && pyhost_value_kind(kwargs) != PYHOST_KIND_DICT) {
    rc = pyhost__set_error(h, PYHOST_TYPE, "plugin %s: the keyword arguments must be a dict, not %s",
                           pp->name, pyhost_value_type_name(kwargs));
  } else if (!hook) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "plugin %s: the hook name is NULL", pp->name);
  } else if (args && ak != PYHOST_KIND_LIST && ak != PYHOST_KIND_TUPLE) {
    rc = pyhost__set_error(h, PYHOST_TYPE, "plugin %s: the arguments must be a tuple or a list, not %s",
                           pp->name, pyhost_value_type_name(args));
  } else {
    request(pp, PYHOST__W_CALL);
    pyhost__wbuf_str(&pp->out, hook, PYHOST_STRLEN);
    pyhost__wbuf_u8(&pp->out, result != NULL);
    struct pyhost__rbuf r;
    if (!(rc = put_arg(pp, args, "the arguments")) &&
        !(rc = put_arg(pp, kwargs, "the keyword arguments")) && !(rc = exchange(pp, &o.gap, &r)) &&
        !(rc = reply_status(pp, &r)))
      rc = reply_value(pp, &r, result);
  }
  return op_end(&o, rc);
}

/* callf's result, as the worker read it under the format's rules, into out. */
static int store_result(struct pyhost__pp *pp, char rtype, pyhost_value *v, void *out, size_t *out_len) {
  switch (rtype) {
  case 'i': *(int *)out = (int)v->u.i; break;
  case 'L': *(int64_t *)out = v->u.i; break;
  case 'd': *(double *)out = v->u.d; break;
  case 'b': *(int *)out = v->u.b; break;
  case 'O': *(pyhost_value **)out = v; return PYHOST_OK;
  case 's':
  case 'y':
    /* borrowed: lives in the plugin until its next callf (once this one returned) */
    *(const char **)out = v->u.s.p;
    *out_len = v->u.s.len;
    pyhost_value_free(pp->kept);
    pp->kept = v;
    return PYHOST_OK;
  default: break;
  }
  pyhost_value_free(v);
  return PYHOST_OK;
}

static int proc_callf(pyhost *h, void *impl, const char *hook, const char *fmt, va_list *ap) {
  static const char fname[] = "pyhost_plugin_callf";
  struct pyhost__pp *pp = impl;
  char doing[300];
  pyhost__fmt(doing, sizeof doing, "hook %s", hook ? hook : "(NULL)");
  struct op o;
  int rc = call_begin(&o, h, pp, fname, doing);
  if (rc) return rc;
  struct pyhost__callf_plan plan;
  if (!hook) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "plugin %s: the hook name is NULL", pp->name);
    return op_end(&o, rc);
  }
  char named[512]; /* as the shared level names the call in these messages */
  pyhost__fmt(named, sizeof named, PYHOST__CALLF_NAMED, pp->name, hook);
  if (!pyhost__callf_plan_read(h, named, fmt, NULL, &plan, &rc)) return op_end(&o, rc);
  request(pp, PYHOST__W_CALLF);
  pyhost__wbuf_str(&pp->out, hook, PYHOST_STRLEN);
  pyhost__wbuf_u8(&pp->out, (unsigned char)plan.rtype);
  pyhost__wbuf_u32(&pp->out, (uint32_t)plan.n);
  pyhost__wbuf_u32(&pp->out, (uint32_t)plan.npos);
  for (size_t i = 0; i < plan.n; i++) {
    char why[256];
    if (i >= plan.npos) pyhost__wbuf_str(&pp->out, plan.kwname[i], plan.kwlen[i]);
    pyhost_arg a = pyhost__callf_next(plan.letter[i], ap);
    if (pyhost__wbuf_arg(&pp->out, &a, why, sizeof why) != 0) {
      rc = a.kind == PYHOST_ARG_VALUE
               ? pyhost__set_error(h, PYHOST_TYPE,
                                   "%s: argument %zu is %s, which cannot cross to the plugin's "
                                   "process (only None, bool, int, float, str, bytes, and lists, "
                                   "tuples and dicts of them)",
                                   named, i, why)
               : pyhost__set_error(h, PYHOST_MISUSE, "%s: argument %zu: %s", named, i, why);
      return op_end(&o, rc);
    }
  }
  void *out = NULL;
  size_t *out_len = NULL;
  int borrowed = plan.rtype == 's' || plan.rtype == 'y';
  if (plan.rtype) {
    out = va_arg(*ap, void *);
    if (borrowed) out_len = va_arg(*ap, size_t *);
    if (!out || (borrowed && !out_len))
      return op_end(&o, pyhost__set_error(h, PYHOST_MISUSE, "%s: the result pointer is NULL", named));
  }
  struct pyhost__rbuf r;
  pyhost_value *v = NULL;
  if (!(rc = exchange(pp, &o.gap, &r)) && !(rc = reply_status(pp, &r)) &&
      !(rc = reply_value(pp, &r, &v)))
    rc = store_result(pp, plan.rtype, v, out, out_len);
  return op_end(&o, rc);
}

static int proc_module(pyhost *h, void *impl, pyhost_value **module) {
  struct pyhost__pp *pp = impl;
  int rc = pyhost__enter_nogil(h);
  if (rc) return rc;
  rc = pyhost__set_error(h, PYHOST_MISUSE,
                         "pyhost_plugin_module: plugin %s runs in a process of its own "
                         "(PYHOST_ISOLATION_PROCESS): its module (%s) is there, not in the host; "
                         "call its hooks (pyhost_plugin_call)",
                         pp->name, pp->module_name);
  (void)module;
  pyhost__leave_nogil();
  return rc;
}

/* pp's worker ended (or is to be replaced): a new one, the plugin loaded afresh. */
static int restart_in(struct op *o) {
  if (o->pp->proc) end_worker(o->pp, "it was restarted");
  return start_worker(o);
}

static int proc_reload(pyhost *h, void *impl) {
  struct pyhost__pp *pp = impl;
  struct op o;
  int rc = op_begin(&o, h, pp, "pyhost_plugin_reload", "pyhost_plugin_reload");
  if (rc) return rc;
  if (pp->state != RUNNING) return op_end(&o, restart_in(&o)); /* it ended: start it again */
  if ((rc = sync_modules(&o))) return op_end(&o, rc);
  request(pp, PYHOST__W_RELOAD);
  struct pyhost__rbuf r;
  if (!(rc = exchange(pp, &o.gap, &r)) && !(rc = reply_status(pp, &r))) {
    char *m = pyhost__strdup(pyhost__rbuf_str(&r, NULL));
    if (!m) rc = out_of_memory(pp);
    else {
      pyhost__free(pp->module_name);
      pp->module_name = m;
    }
  }
  return op_end(&o, rc);
}

static int proc_restart(pyhost *h, void *impl) {
  struct pyhost__pp *pp = impl;
  struct op o;
  int rc = op_begin(&o, h, pp, "pyhost_plugin_restart", "pyhost_plugin_restart");
  if (rc) return rc;
  return op_end(&o, restart_in(&o));
}

/* The end of an unloaded plugin: its worker, its record. */
static void unload_finish(struct pyhost__pp *pp) {
  end_worker(pp, "it was unloaded");
  list_remove(pp);
  pp_free(pp);
}

static void proc_unload(void *impl) {
  struct pyhost__pp *pp = impl;
  if (pp->owner_pid != pyhost__proc_self()) {
    /* a forked child's copy: the worker is the parent's, so is the state; only the
     * memory and the copies of its descriptors are this process's own */
    pyhost__proc_forget(pp->proc);
    pp->proc = NULL;
    pp_free(pp);
    return;
  }
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  pp->doomed = 1;
  pyhost__monitor_notify(ps->m); /* calls waiting for their turn give up */
  if (pp->owner == ME) { /* from a host function inside a call of it: that call ends it */
    pp->deferred = 1;
    pyhost__monitor_leave(ps->m);
    return;
  }
  if (pp->owner) { /* another thread's call runs: stop it, then end its process */
    send_interrupt(pp);
    int64_t until = pyhost__clock_ms() + pp->grace_ms;
    while (pp->owner && !pyhost__monitor_wait(ps->m, until)) {
    }
    if (pp->owner) {
      pp->ended_by = BY_UNLOAD;
      if (pp->proc) pyhost__proc_kill(pp->proc);
      while (pp->owner) pyhost__monitor_wait(ps->m, PYHOST__FOREVER);
    }
  }
  while (pp->waiters) pyhost__monitor_wait(ps->m, PYHOST__FOREVER);
  pyhost__monitor_leave(ps->m);
  unload_finish(pp);
}

static const char *proc_path(const void *impl) {
  const struct pyhost__pp *pp = impl;
  return pp->path[0] ? pp->path : pp->given;
}

static const char *proc_module_name(const void *impl) {
  return ((const struct pyhost__pp *)impl)->module_name;
}

static long proc_pid(const void *impl) {
  const struct pyhost__pp *pp = impl;
  return pp->state == ENDED ? 0 : pp->pid;
}

const struct pyhost__plugin_level pyhost__plugin_process = {
    PYHOST_ISOLATION_PROCESS, proc_load,    proc_has_hook, proc_hooks,  proc_call,
    proc_callf,               proc_module,  proc_reload,   proc_restart, proc_unload,
    proc_path,                proc_module_name, proc_pid};

/* ---- pyhost_interrupt and pyhost_finalize ---- */

/* With the GIL, in pyhost_interrupt: every running call's worker gets the interrupt. */
static void at_interrupt(void) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  for (struct pyhost__pp *pp = ps->all; pp; pp = pp->next)
    if (pp->owner) send_interrupt(pp);
  pyhost__monitor_leave(ps->m);
}

/* As finalize begins (GIL held): no new call starts; a worker with a call running is
 * killed, so that the call returns and finalize's wait for it ends. */
static void at_close(void) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  ps->closing = 1;
  for (struct pyhost__pp *pp = ps->all; pp; pp = pp->next)
    if (pp->owner && pp->proc) {
      pp->ended_by = BY_FINALIZE;
      pyhost__proc_kill(pp->proc);
    }
  pyhost__monitor_notify(ps->m);
  pyhost__monitor_leave(ps->m);
}

/* Once the calls have returned (GIL held, before Py_FinalizeEx): every worker ends. */
static void at_drop(void) {
  struct pyhost__procs *ps = procs();
  pyhost__monitor_enter(ps->m);
  struct pyhost__pp *list = ps->all;
  pyhost__monitor_leave(ps->m);
  /* EXIT to all first, so that they end side by side */
  for (struct pyhost__pp *pp = list; pp; pp = pp->next)
    if (pp->proc) {
      struct pyhost__wbuf b = {0};
      pyhost__wbuf_start(&b, PYHOST__W_EXIT);
      (void)pyhost__wbuf_send(&b, pyhost__proc_chan(pp->proc));
      pyhost__wbuf_free(&b);
    }
  for (struct pyhost__pp *pp = list; pp; pp = pp->next) end_worker(pp, "it was ended by pyhost_finalize");
}
