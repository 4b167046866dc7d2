/* runtime.h: what the runtime layer offers the bridge above it: entering and leaving
 * a call (the GIL, calls in flight, interrupts), exceptions into messages, the frame a
 * host callback's exception travels in, and the teardown hooks finalize runs.
 * Never installed.
 */
#ifndef PYHOST_RUNTIME_H
#define PYHOST_RUNTIME_H

#include "core.h"

/* ---- calls into Python (inflight.c) ---- */
/* What pyhost__enter stores when this thread's pyhost_gil_enter scope already holds
 * the GIL: pyhost__leave then releases nothing.  Neither PyGILState value. */
#define PYHOST__GIL_SCOPED ((PyGILState_STATE)2)
/* What pyhost__inflight_begin stores for a call made in a sub-interpreter this thread
 * runs in (pyhost__thread.sub): the GIL is held already, and PyGILState must not be
 * used there (subinterp.c).  Counted in flight, released by nothing. */
#define PYHOST__GIL_IN_SUB ((PyGILState_STATE)3)
/* pyhost__enter outside a scope: checks h, counts the call in flight, takes the GIL. */
int pyhost__enter_slow(pyhost *h, PyGILState_STATE *gil);
void pyhost__inflight_end(PyGILState_STATE gil);

/* 1 when this thread holds a pyhost_gil_enter scope on h. */
static inline int pyhost__gil_scoped(const pyhost *h) {
  return pyhost__thread.scope_h == h;
}

/* Checks h and takes the GIL.  Returns PYHOST_OK (then call pyhost__leave) or MISUSE
 * with the message set.  Inside a scope on h this is the whole cost of a call's
 * entry: the scope's handle is h (a scope is only opened on a live handle and closed
 * before it is freed) and h still runs, so only the state is read. */
static inline int pyhost__enter(pyhost *h, PyGILState_STATE *gil) {
  if (pyhost__gil_scoped(h) && atomic_load(&h->state) == PYHOST__RUNNING) {
    *gil = PYHOST__GIL_SCOPED; /* counted in flight by the scope's enter */
    if (pyhost__thread.messages) pyhost__clear_message(h);
    return PYHOST_OK;
  }
  return pyhost__enter_slow(h, gil);
}

/* 1 when a call on h costs nothing to enter or leave: inside this thread's scope on h,
 * h running, no message to reset.  The hot paths test it first and go through
 * pyhost__enter/leave otherwise. */
static inline int pyhost__entry_is_free(const pyhost *h) {
  return pyhost__gil_scoped(h) && !pyhost__thread.messages &&
         atomic_load_explicit(&h->state, memory_order_relaxed) == PYHOST__RUNNING;
}

/* The end of a call made inside this thread's scope that an interrupt reached
 * (inflight.c): a late interrupt is dropped once no outer call is left to stop. */
void pyhost__inflight_scoped_end(void);

static inline void pyhost__leave(pyhost *h, PyGILState_STATE gil) {
  (void)h;
  if (gil != PYHOST__GIL_SCOPED) pyhost__inflight_end(gil);
  else if (pyhost__thread.interrupted) pyhost__inflight_scoped_end();
}
/* Test seam: the library's symbol look-up answers NULL for name (NULL: off). */
void pyhost__fail_symbol(const char *name);

/* ---- calls in flight and interrupts (inflight.c) ---- */
/* With the GIL, once Python runs: creates pyhost.Interrupted and lets calls in.  0/-1
 * (Python exception set). */
int pyhost__inflight_open(void);
/* Counts a call and takes the GIL: 0, -1 (nothing held) once finalize has begun, or
 * PYHOST__INFLIGHT_NOMEM.
 * pyhost__enter's core; value_free uses it directly (it has no handle). */
int pyhost__inflight_begin(PyGILState_STATE *gil);
/* What pyhost__inflight_begin returns when this thread's first call finds no memory
 * for its record (-1: refused, finalize has begun). */
#define PYHOST__INFLIGHT_NOMEM (-2)
/* The threads listed for pyhost_interrupt: those that made a call and did not exit
 * (tests: a thread's record goes when it exits). */
int pyhost__inflight_listed_threads(void);
/* For freeing a handle a call may be using (a callable, a plugin, a module) without
 * racing finalize: 1 with the GIL held (end with pyhost__inflight_free_end) while
 * Python takes calls or this thread is inside one; else 0, once every call in flight
 * has returned (it waits for them): then only the handle's memory may be freed. */
int pyhost__inflight_free_begin(PyGILState_STATE *gil);
/* pyhost__inflight_free_begin for a release that names its handle h (NULL allowed):
 * inside this thread's scope on a running h the scope already holds the GIL and counts
 * the call in flight, so the free takes nothing (the cost of a per-item release). */
static inline int pyhost__free_begin(const pyhost *h, PyGILState_STATE *gil) {
  if (pyhost__gil_scoped(h) && atomic_load_explicit(&h->state, memory_order_relaxed) == PYHOST__RUNNING) {
    *gil = PYHOST__GIL_SCOPED;
    return 1;
  }
  return pyhost__inflight_free_begin(gil);
}
void pyhost__inflight_free_end(PyGILState_STATE gil);
/* 1 in a child forked while other threads were inside pyhost calls: Python no longer
 * takes calls there, and finalize leaves it alone (docs/threads.md). */
int pyhost__inflight_forked_amid_calls(void);
/* How many pyhost calls this thread is inside (0 outside any). */
int pyhost__inflight_depth(void);
/* With the GIL: refuses new calls and interrupts the running ones; returns how many. */
int pyhost__inflight_close(void);
/* With the GIL: on (1) / off (0) around pyhost's own Python work on this thread
 * (formatting an exception), which pyhost_interrupt then leaves alone. */
void pyhost__inflight_protect(int on);
/* With the GIL: interrupts the calls running in sub-interpreter s (as pyhost_interrupt
 * does all); returns how many got it. */
int pyhost__inflight_interrupt_sub(const struct pyhost__sub *s);
/* Without the GIL: waits until no call is in flight. */
void pyhost__inflight_drain(void);
/* With the GIL, before Py_FinalizeEx: drops pyhost.Interrupted. */
void pyhost__inflight_forget(void);
/* 1 when type is pyhost.Interrupted (what pyhost_interrupt raises). */
int pyhost__is_interrupt(PyObject *type);
/* pyhost.Interrupted itself (borrowed; NULL before Python runs). */
PyObject *pyhost__interrupt_type(void);
/* For a call that waits on something other than Python (a plugin's worker process)
 * and takes the GIL only now and then: checks h and counts the call in flight, so
 * that finalize waits for it, without taking the GIL.  PYHOST_OK (then call
 * pyhost__leave_nogil) or MISUSE with the message set. */
int pyhost__enter_nogil(pyhost *h);
void pyhost__leave_nogil(void);

/* ---- sub-interpreters (subinterp.c) ---- */
/* What pyhost__thread.sub and this thread's thread state were before an entry. */
struct pyhost__sub_saved {
  struct pyhost__sub *sub;     /* pyhost__thread.sub before */
  PyThreadState *ts; /* NULL: nothing was swapped (the thread was in it already) */
  struct pyhost__sub *entered; /* the one entered */
  struct pyhost__sub_saved *prev; /* this thread's entries, innermost first */
};
/* With the GIL: a new sub-interpreter, data the caller's state for it.  PYHOST_OK, or
 * an error with h's message set. */
int pyhost__sub_new(pyhost *h, void *data, struct pyhost__sub **out);
void *pyhost__sub_data(const struct pyhost__sub *s);
/* Entries now inside s, on every thread. */
int pyhost__sub_running(const struct pyhost__sub *s);
/* The live sub-interpreters: the first after NULL, then the next. */
struct pyhost__sub *pyhost__sub_next(const struct pyhost__sub *s);
/* With the GIL: makes s this thread's interpreter, through its thread state there
 * (made on first use).  PYHOST_OK (then pyhost__sub_leave), or MISUSE/NOMEM with h's
 * message set; who names the plugin in it. */
int pyhost__sub_enter(pyhost *h, struct pyhost__sub *s, struct pyhost__sub_saved *saved,
                      const char *who);
void pyhost__sub_leave(struct pyhost__sub_saved *saved);
/* With the GIL: PyThreadState_SetAsyncExc(ident, exc) in s (through this thread's
 * thread state there, made if need be; before 3.9 only its maker's thread has one, and
 * elsewhere this does nothing).  1 when a thread state of ident's got it.  From 3.13
 * it lets other threads run (a swap does). */
int pyhost__sub_async_exc(struct pyhost__sub *s, unsigned long ident, PyObject *exc);
/* 1 when this thread is inside s, at any depth of its entries. */
int pyhost__sub_inside(const struct pyhost__sub *s);
/* With the GIL, outside s, no entry running in it: runs drop(data) inside s (the layer
 * above lets go of its objects there), ends s, deletes every thread state made for it
 * and frees s. */
void pyhost__sub_end(struct pyhost__sub *s, void (*drop)(void *data));
/* With the GIL: the sub-interpreter this thread runs in, or NULL for the main one. */
struct pyhost__sub *pyhost__sub_current(void);

/* ---- exceptions (error.c) ---- */
/* Takes the pending exception and turns it into h's message.  Returns PYHOST_EXIT for
 * SystemExit (exit code stored in h), PYHOST_NOMEM for MemoryError raised by pyhost
 * itself, PYHOST_PYEXC otherwise.  `context` prefixes the message when not NULL. */
int pyhost__take_exception(pyhost *h, const char *context);
/* The type's display name ("ValueError", "datetime.date") into out. */
void pyhost__type_name(PyObject *type, char *out, size_t cap);

/* UTF-8 text of a str object, copied into a pyhost__malloc'd buffer (own) (text.c). */
char *pyhost__utf8_copy(PyObject *str, size_t *len);

/* ---- the exception a host callback hands its Python caller (frame.c) ---- */
/* A host callback's frame (pushed and popped by the bridge, bridge.h): the exception
 * kept for the callback's Python caller (owned).  type is set whenever one is kept,
 * and value and tb are only read then, so a push initialises type alone.  The
 * innermost frame is pyhost__thread.frame (core.h). */
struct pyhost__frame {
  PyObject *type, *value, *tb;
};
/* Keeps (type, value, tb) as f's exception, new references, dropping what f kept. */
void pyhost__frame_keep(struct pyhost__frame *f, PyObject *type, PyObject *value, PyObject *tb);
/* Drops what f kept. */
void pyhost__frame_drop(struct pyhost__frame *f);
/* Inside a host callback on this thread, keeps a new reference to the exception being
 * taken so the callback's Python caller can get it back; else no-op. */
void pyhost__callback_keep(PyObject *type, PyObject *value, PyObject *tb);

/* ---- teardown hooks (teardown.c) ---- */
/* Finalize reaches the layer above through hooks that layer registers, never by name:
 * the bridge adds one when it first keeps something that finalize must drop. */
enum pyhost__teardown_phase {
  PYHOST__AT_CLOSE,       /* with the GIL as finalize begins, before calls are refused */
  PYHOST__AT_DROP,        /* with the GIL, before Py_FinalizeEx: drop kept references */
  PYHOST__AFTER_FINALIZE, /* after Py_FinalizeEx, without Python */
  PYHOST__AT_INTERRUPT    /* not a teardown: with the GIL, in every pyhost_interrupt, for
                           * calls the bridge runs outside Python (a plugin's worker) */
};
struct pyhost__teardown {
  void (*run)(void);
  int phase;                      /* enum pyhost__teardown_phase */
  struct pyhost__teardown *next;  /* set by pyhost__teardown_add */
  int added;
};
/* With the GIL: adds t (process storage: the bridge's object) to the hooks finalize
 * runs, to run run in phase; again is a no-op. */
void pyhost__teardown_add(struct pyhost__teardown *t, void (*run)(void), int phase);
/* Runs the hooks of phase, in the order they were added. */
void pyhost__teardown_run(int phase);

/* ---- the default text encoding (textenc.c) ---- */
/* Before Py_InitializeEx, what to set Py_UTF8Mode to: 1 where `python` would have
 * UTF-8 in this environment and the host's C locale would give ASCII; -1 to leave
 * Python's own default. */
int pyhost__utf8_mode_choice(const pyhost *h);

/* ---- loading (pyhost.c) ---- */
/* pyhost_init's first part, shared with pyhost_main: a new handle in *out (as
 * pyhost_init gives it), the process claimed, the library chosen, checked, opened (and
 * made global) with the table resolved and the home chosen; Python not started.  On an
 * error nothing is left open and the process is free again. */
int pyhost__load(const pyhost_config *cfg, pyhost **out);
/* Undoes a successful pyhost__load whose Python never started: the library closed,
 * the table cleared, the process free for another pyhost_init. */
void pyhost__load_undo(pyhost *h);

/* ---- isolated init (isolate.c) ---- */
struct pyhost__env_saved;
/* Before Py_InitializeEx: hides PYTHON* variables (see isolate.c).  PYHOST_OK/NOMEM. */
int pyhost__isolate_begin(pyhost *h, struct pyhost__env_saved **saved);
/* After it, with the GIL: tidies os.environ and site, restores the environment. */
int pyhost__isolate_finish(pyhost *h, struct pyhost__env_saved *saved);

#endif
