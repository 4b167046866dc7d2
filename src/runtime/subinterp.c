/* subinterp.c: sub-interpreters and the thread states pyhost makes for them (the
 * interpreter isolation level's runtime side; docs/plugins.md, "Isolation").
 *
 * Py_NewInterpreter makes an interpreter that shares the GIL with the main one (an own
 * GIL needs Py_NewInterpreterFromConfig, outside the stable ABI).  A thread runs in it
 * through a thread state of its own for that interpreter: the PyGILState API knows
 * only the main interpreter (its Ensure, called while a sub-interpreter's thread state
 * holds the GIL on this thread, waits for that same GIL for ever), so pyhost keeps one
 * thread state per (thread, sub-interpreter), made on the thread's first entry and
 * deleted when the interpreter ends.  Entering is a PyThreadState_Swap with the GIL
 * held: every entry first takes the GIL as any call does (pyhost__enter), so a call
 * from a host function running in another interpreter, on the same thread, nests:
 * swap in, run, swap back to whatever was current.  While pyhost__thread.sub is set
 * this thread holds the GIL through that interpreter's thread state, and the calls it
 * makes count in flight without PyGILState (inflight.c).
 *
 * Before 3.9 the stable ABI hands out no PyInterpreterState: only the thread state
 * Py_NewInterpreter made exists, on the thread that made the interpreter, and only that
 * thread enters it.  Ending the interpreter (no call running in it) may be done from
 * any thread: the idle thread state is handed over once, under the GIL.
 *
 * The list of thread states and of live sub-interpreters is read and written with the
 * GIL held.
 */
#include "runtime.h"

struct pyhost__sub_ts {
  unsigned long serial; /* the thread's (pyhost__thread.serial) */
  PyThreadState *ts;
  struct pyhost__sub_ts *next;
};

struct pyhost__sub {
  PyInterpreterState *interp;  /* from 3.9; NULL before */
  struct pyhost__sub_ts *tss;  /* the first is Py_NewInterpreter's, its maker's */
  int running;                 /* entries now inside it, on every thread */
  void *data;                  /* the layer above's state for this interpreter */
  struct pyhost__sub *next, *prev; /* pyhost__process.subs */
};

static unsigned long this_serial(void) {
  if (!pyhost__thread.serial) pyhost__thread.serial = atomic_fetch_add(&pyhost__process.serials, 1) + 1;
  return pyhost__thread.serial;
}

/* This thread's thread state in s, or NULL. */
static PyThreadState *ts_here(const struct pyhost__sub *s) {
  unsigned long serial = this_serial();
  for (struct pyhost__sub_ts *t = s->tss; t; t = t->next)
    if (t->serial == serial) return t->ts;
  return NULL;
}

/* Records ts as this thread's in s: 0, or -1 out of memory. */
static int ts_add(struct pyhost__sub *s, PyThreadState *ts) {
  struct pyhost__sub_ts *t = pyhost__calloc(1, sizeof *t), **end = &s->tss;
  if (!t) return -1;
  t->serial = this_serial();
  t->ts = ts;
  while (*end) end = &(*end)->next;
  *end = t;
  return 0;
}

int pyhost__sub_new(pyhost *h, void *data, struct pyhost__sub **out) {
  struct pyhost__sub *s = pyhost__calloc(1, sizeof *s);
  if (!s) return pyhost__set_error(h, PYHOST_NOMEM, "out of memory making a sub-interpreter");
  PyThreadState *outer = PY.PyThreadState_Get();
  PyThreadState *ts = PY.Py_NewInterpreter(); /* current now, when made */
  if (!ts) {
    PY.PyThreadState_Swap(outer);
    pyhost__free(s);
    return pyhost__set_error(h, PYHOST_ERROR, "Py_NewInterpreter could not make a sub-interpreter");
  }
  if (pyhost__runtime_at_least(3, 9)) s->interp = PY.PyInterpreterState_Get();
  PY.PyThreadState_Swap(outer);
  if (ts_add(s, ts) < 0) {
    PY.PyThreadState_Swap(ts);
    PY.Py_EndInterpreter(ts);
    PY.PyThreadState_Swap(outer);
    pyhost__free(s);
    return pyhost__set_error(h, PYHOST_NOMEM, "out of memory making a sub-interpreter");
  }
  s->data = data;
  s->next = pyhost__process.subs;
  if (s->next) s->next->prev = s;
  pyhost__process.subs = s;
  *out = s;
  return PYHOST_OK;
}

void *pyhost__sub_data(const struct pyhost__sub *s) { return s->data; }

int pyhost__sub_running(const struct pyhost__sub *s) { return s->running; }

struct pyhost__sub *pyhost__sub_next(const struct pyhost__sub *s) {
  return s ? s->next : pyhost__process.subs;
}

int pyhost__sub_enter(pyhost *h, struct pyhost__sub *s, struct pyhost__sub_saved *saved,
                      const char *who) {
  saved->sub = pyhost__thread.sub;
  saved->ts = NULL;
  if (saved->sub != s) {
    PyThreadState *ts = ts_here(s);
    if (!ts) {
      if (!pyhost__runtime_at_least(3, 9))
        return pyhost__set_error(
            h, PYHOST_MISUSE,
            "plugin %s runs in a sub-interpreter of its own, which Python %d.%d lets only the "
            "thread that loaded it enter (the stable ABI hands out no interpreter "
            "before 3.9); call it from that thread, or load it at the process level",
            who, PY.runtime >> 8, PY.runtime & 0xff);
      if (!(ts = PY.PyThreadState_New(s->interp)) || ts_add(s, ts) < 0) {
        if (ts) PY.PyThreadState_Delete(ts);
        return pyhost__set_error(h, PYHOST_NOMEM, "plugin %s: out of memory making a thread state", who);
      }
    }
    saved->ts = PY.PyThreadState_Swap(ts);
  }
  saved->entered = s;
  saved->prev = pyhost__thread.sub_chain;
  pyhost__thread.sub_chain = saved;
  pyhost__thread.sub = pyhost__thread.call->sub = s;
  s->running++;
  return PYHOST_OK;
}

void pyhost__sub_leave(struct pyhost__sub_saved *saved) {
  saved->entered->running--;
  /* an interrupt that came too late to be raised here must not hit its next entry */
  if (pyhost__thread.interrupted && saved->ts)
    PY.PyThreadState_SetAsyncExc(pyhost__thread.call->ident, NULL);
  if (saved->ts) PY.PyThreadState_Swap(saved->ts);
  pyhost__thread.sub = pyhost__thread.call->sub = saved->sub;
  pyhost__thread.sub_chain = saved->prev;
}

int pyhost__sub_async_exc(struct pyhost__sub *s, unsigned long ident, PyObject *exc) {
  const struct pyhost__sub *live = pyhost__process.subs;
  while (live && live != s) live = live->next;
  if (!live) return 0; /* ended meanwhile */
  if (pyhost__thread.sub == s) return PY.PyThreadState_SetAsyncExc(ident, exc) > 0;
  PyThreadState *ts = ts_here(s);
  if (!ts && s->interp && (ts = PY.PyThreadState_New(s->interp)) && ts_add(s, ts) < 0) {
    PY.PyThreadState_Delete(ts);
    ts = NULL;
  }
  if (!ts) return 0; /* before 3.9, from another thread than its maker's */
  PyThreadState *outer = PY.PyThreadState_Swap(ts);
  int n = PY.PyThreadState_SetAsyncExc(ident, exc) > 0;
  PY.PyThreadState_Swap(outer);
  return n;
}

int pyhost__sub_inside(const struct pyhost__sub *s) {
  for (const struct pyhost__sub_saved *e = pyhost__thread.sub_chain; e; e = e->prev)
    if (e->entered == s) return 1;
  return 0;
}

void pyhost__sub_end(struct pyhost__sub *s, void (*drop)(void *data)) {
  PYHOST__ASSERT(s->running == 0 && !pyhost__sub_inside(s));
  /* this thread's own thread state ends it where it has one (3.12+ binds a thread state
   * to its thread); else a new one (3.9+), else the maker's, idle now, handed over */
  PyThreadState *mine = ts_here(s);
  if (!mine && s->interp) mine = PY.PyThreadState_New(s->interp);
  if (!mine) mine = s->tss->ts;
  PyThreadState *outer = PY.PyThreadState_Swap(mine);
  struct pyhost__sub *was = pyhost__thread.sub;
  pyhost__thread.sub = s; /* what drop and the interpreter's end run call in: in it */
  drop(s->data);
  while (s->tss) {
    struct pyhost__sub_ts *t = s->tss;
    s->tss = t->next;
    if (t->ts != mine) {
      PY.PyThreadState_Clear(t->ts);
      PY.PyThreadState_Delete(t->ts);
    }
    pyhost__free(t);
  }
  PY.Py_EndInterpreter(mine);
  pyhost__thread.sub = was;
  /* from 3.12 it returns without the GIL, before with the GIL and no thread state */
  if (pyhost__runtime_at_least(3, 12)) PY.PyEval_RestoreThread(outer);
  else PY.PyThreadState_Swap(outer);
  if (s->prev) s->prev->next = s->next;
  else pyhost__process.subs = s->next;
  if (s->next) s->next->prev = s->prev;
  pyhost__free(s);
}

struct pyhost__sub *pyhost__sub_current(void) {
  if (pyhost__thread.sub || !pyhost__process.subs || !pyhost__runtime_at_least(3, 9))
    return pyhost__thread.sub;
  /* a thread Python started inside a sub-interpreter, calling a host function */
  PyInterpreterState *interp = PY.PyInterpreterState_Get();
  for (struct pyhost__sub *s = pyhost__process.subs; s; s = s->next)
    if (s->interp == interp) return s;
  return NULL;
}
