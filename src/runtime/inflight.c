/* inflight.c: which threads are inside a pyhost call, so that pyhost_interrupt can
 * stop them and pyhost_finalize can wait for them.
 *
 * Every public call goes through pyhost__inflight_begin/_end (via pyhost__enter and
 * pyhost__leave).  Two mechanisms, each as cheap as it can be on the hot path:
 *  - a process-wide atomic counter of calls in flight, incremented before the gate is
 *    read.  pyhost_finalize closes the gate and then waits for the counter to drop to
 *    zero: a call that saw the gate open is counted, so Python is never finalized under
 *    a thread that is about to take (or holds) the GIL; a call that comes later is
 *    refused without touching Python.
 *  - a list of the threads that made a call, one record each, linked by the thread's
 *    first call and unlinked when the thread exits (the platform's thread-exit hook), so
 *    that a call only counts its depth: a record whose depth is above zero is a thread
 *    inside a call.  Depths change with the GIL held; the list has a spin lock of its
 *    own, as a thread exits without the GIL.  pyhost_interrupt walks it with the GIL
 *    and asks CPython to raise pyhost.Interrupted in each thread inside a call
 *    (PyThreadState_SetAsyncExc, the stable ABI's only way to reach a thread other than
 *    the main one: PyErr_SetInterrupt works only there).  A record is on the heap, owned
 *    by the list: another thread may read it while its own thread exits.  An interrupt
 *    that arrives after the code finished is cleared when the outermost call leaves, so
 *    it never leaks into the thread's next call.  Inside a
 *    pyhost_gil_enter scope the scope is the thread's outermost entry, so each call
 *    made in it with no host callback running on the thread counts as outermost.
 * An asynchronous exception may land in any bytecode, also inside importlib while it
 * holds an import lock, which then stays held for good.  So pyhost never interrupts
 * its own Python work (formatting a traceback, importing traceback for it): a thread
 * marks it with pyhost__inflight_protect, and pyhost_interrupt imports traceback once
 * before the first interrupt so that no call imports it later.  User code that is
 * interrupted inside an import can still leave a lock held, as Ctrl-C can in python.
 */
#include "runtime.h"

/* The state is the process's (pyhost__process: threads, threads_lock, in_flight,
 * gate_open, forked_amid_calls, traceback_ready, interrupted_type) and each thread's
 * (pyhost__thread.call, .nogil, .interrupted), core.h. */
#define SELF (pyhost__thread.call) /* this thread's record; NULL before its first call */

static void lock_threads(void) {
  while (atomic_flag_test_and_set_explicit(&pyhost__process.threads_lock, memory_order_acquire))
    pyhost__sleep_ms(0);
}

static void unlock_threads(void) {
  atomic_flag_clear_explicit(&pyhost__process.threads_lock, memory_order_release);
}

static void unlink_record(struct pyhost__call *r) {
  if (r->prev) r->prev->next = r->next;
  else pyhost__process.threads = r->next;
  if (r->next) r->next->prev = r->prev;
}

/* The platform's thread-exit hook: the thread is outside any call (it is ending), so
 * no one reads its record but pyhost_interrupt's walk, which the lock keeps out. */
static void unlist_thread(void *record) {
  lock_threads();
  unlink_record(record);
  unlock_threads();
  pyhost__free(record);
  /* a later thread-exit hook of the host's may call again (and Windows runs this for
   * every thread's record on the thread that unloads the library) */
  if (pyhost__thread.call == record) pyhost__thread.call = NULL;
}

#if defined(__GNUC__)
/* The library is being unloaded (or the process ends): no thread that exits later
 * runs unlist_thread, which is gone. */
__attribute__((destructor)) static void forget_thread_exit(void) {
  pyhost__thread_exit_delete(&pyhost__process.thread_exit);
}
#endif

/* The thread's first call, the gate open (Python runs): its record, listed; NULL when
 * out of memory. */
static PYHOST__COLD struct pyhost__call *list_thread(void) {
  struct pyhost__call *r = pyhost__calloc(1, sizeof *r);
  if (!r) return NULL;
  if (pyhost__thread_exit_set(&pyhost__process.thread_exit, unlist_thread, r) != 0) {
    pyhost__free(r);
    return NULL;
  }
  r->thread = &pyhost__thread;
  r->ident = PY.PyThread_get_thread_ident();
  lock_threads();
  r->next = pyhost__process.threads;
  if (r->next) r->next->prev = r;
  pyhost__process.threads = r;
  unlock_threads();
  return pyhost__thread.call = r;
}

int pyhost__inflight_listed_threads(void) {
  int n = 0;
  lock_threads();
  for (const struct pyhost__call *r = pyhost__process.threads; r; r = r->next) n++;
  unlock_threads();
  return n;
}

/* In the child after fork(): only the forking thread exists, so only its own calls are
 * in flight (each of its entries counted once; a scope is one).  With another thread's
 * call cut off, Python's state may be held by a thread that is gone: the gate closes,
 * and finalize (pyhost.c) leaves Python alone.  The other threads' records go (their
 * threads exit nowhere here), and so does a lock one of them held. */
static void after_fork_child(void) {
  long own = (SELF ? SELF->depth : 0) + pyhost__thread.nogil;
  if (atomic_load(&pyhost__process.in_flight) > own) {
    atomic_store(&pyhost__process.gate_open, 0);
    atomic_store(&pyhost__process.forked_amid_calls, 1);
  }
  atomic_store(&pyhost__process.in_flight, own);
  atomic_flag_clear(&pyhost__process.threads_lock);
  for (struct pyhost__call *r = pyhost__process.threads, *next; r; r = next) {
    next = r->next;
    if (r != SELF) pyhost__free(r);
  }
  pyhost__process.threads = SELF;
  if (SELF) SELF->prev = SELF->next = NULL;
}

int pyhost__inflight_open(void) {
  PYHOST__ASSERT_GIL();
  PyObject *type = PY.PyErr_NewException("pyhost.Interrupted", *PY.PyExc_BaseException, NULL);
  pyhost__process.interrupted_type = type;
  if (!type) return -1;
  pyhost__on_fork_child(after_fork_child); /* Python starts once per process: once */
  atomic_store(&pyhost__process.gate_open, 1);
  return 0;
}

int pyhost__inflight_forked_amid_calls(void) {
  return atomic_load(&pyhost__process.forked_amid_calls);
}

/* pyhost__inflight_begin's body, inline in pyhost__enter_slow: a call outside a scope
 * pays the GIL's price and this, nothing more. */
static PYHOST__HOT_INLINE int inflight_begin(struct pyhost__thread *thread,
                                             PyGILState_STATE *gil) {
  atomic_fetch_add(&pyhost__process.in_flight, 1);
  if (!atomic_load(&pyhost__process.gate_open)) goto refused;
  struct pyhost__call *self = thread->call;
  if (!self && !(self = list_thread())) {
    atomic_fetch_sub(&pyhost__process.in_flight, 1);
    return PYHOST__INFLIGHT_NOMEM;
  }
  if (thread->sub) { /* inside a call, the GIL held */
    self->depth++;
    *gil = PYHOST__GIL_IN_SUB;
    return 0;
  }
  *gil = PY.PyGILState_Ensure();
  /* Checked again under the GIL: pyhost_finalize closes the gate and interrupts the
   * threads inside a call in one GIL hold, so a thread is either inside by then (its
   * depth counted) or refused. */
  if (!atomic_load(&pyhost__process.gate_open)) {
    PY.PyGILState_Release(*gil);
    goto refused;
  }
  self->depth++; /* thread->interrupted is 0: the outermost end clears it */
  return 0;
refused:
  atomic_fetch_sub(&pyhost__process.in_flight, 1);
  return -1;
}

int pyhost__inflight_begin(PyGILState_STATE *gil) { return inflight_begin(&pyhost__thread, gil); }

void pyhost__inflight_end(PyGILState_STATE gil) {
  PYHOST__ASSERT_GIL();
  if (gil == PYHOST__GIL_IN_SUB) {
    SELF->depth--;
    atomic_fetch_sub(&pyhost__process.in_flight, 1);
    return;
  }
  /* An interrupt that came too late to be raised must not hit the next call. */
  if (--SELF->depth == 0 && pyhost__thread.interrupted) {
    pyhost__thread.interrupted = 0;
    PY.PyThreadState_SetAsyncExc(SELF->ident, NULL);
  }
  PY.PyGILState_Release(gil);
  atomic_fetch_sub(&pyhost__process.in_flight, 1);
}

void pyhost__inflight_scoped_end(void) {
  PYHOST__ASSERT_GIL();
  /* a call below a host callback leaves the interrupt to stop the call around it */
  if (pyhost__thread.frame) return;
  pyhost__thread.interrupted = 0;
  PY.PyThreadState_SetAsyncExc(SELF->ident, NULL);
}

int pyhost__inflight_free_begin(PyGILState_STATE *gil) {
  int rc = pyhost__inflight_begin(gil);
  if (rc == 0) return 1;
  /* Out of memory for this thread's record (its first call): the release cannot be
   * counted, so what it drops is left to the process's end, as after finalize. */
  if (rc == PYHOST__INFLIGHT_NOMEM) return 0;
  /* Finalize has begun.  A thread inside a call (a scope, a host callback, also one
   * that Python code on a thread of its own called) holds the GIL: Python still runs
   * under it, and waiting here would keep the calls finalize waits for from the GIL. */
  if (pyhost__inflight_depth() > 0 || pyhost__thread.frame) {
    *gil = PYHOST__GIL_SCOPED;
    return 1;
  }
  /* Elsewhere a call of what is freed may still run (interrupted, on its way out):
   * finalize waits for it, and so does the free. */
  pyhost__inflight_drain();
  return 0;
}

void pyhost__inflight_free_end(PyGILState_STATE gil) {
  if (gil != PYHOST__GIL_SCOPED) pyhost__inflight_end(gil);
}

int pyhost__inflight_depth(void) {
  return SELF ? SELF->depth : 0;
}

void pyhost__inflight_protect(int on) {
  PYHOST__ASSERT_GIL();
  if (!SELF) return; /* not listed: pyhost_interrupt cannot reach this thread */
  if (!on) {
    SELF->protected--;
    return;
  }
  /* An interrupt sent but not raised yet would fire inside pyhost's own work; the
   * call is ending with an error anyway, so it has done its job. */
  if (SELF->protected++ == 0 && pyhost__thread.interrupted)
    PY.PyThreadState_SetAsyncExc(SELF->ident, NULL);
}

/* GIL held.  The caller's own thread is skipped when its only call is this one.  A
 * call running in a sub-interpreter gets it there too: PyThreadState_SetAsyncExc finds
 * only the current interpreter's threads.  Those are gathered first, as reaching a
 * sub-interpreter may let other threads run (and change the list). */
static int interrupt_calls(const struct pyhost__sub *only) {
  PYHOST__ASSERT_GIL();
  int n = 0;
  size_t nsub = 0, cap = 0;
  struct sub_call { struct pyhost__sub *sub; unsigned long ident; } *subs = NULL;
  lock_threads();
  for (struct pyhost__call *r = pyhost__process.threads; r; r = r->next) {
    if (r->depth == 0 || (r == SELF && r->depth == 1) || r->protected || (only && r->sub != only))
      continue;
    r->thread->interrupted = 1;
    if (!only) n += PY.PyThreadState_SetAsyncExc(r->ident, pyhost__process.interrupted_type) > 0;
    if (!r->sub) continue;
    if (nsub == cap) {
      struct sub_call *more = pyhost__realloc(subs, (cap = cap ? 2 * cap : 8) * sizeof *subs);
      if (!more) break; /* out of memory: those left stop when they return to Python */
      subs = more;
    }
    subs[nsub++] = (struct sub_call){r->sub, r->ident};
  }
  unlock_threads();
  for (size_t i = 0; i < nsub; i++)
    n += pyhost__sub_async_exc(subs[i].sub, subs[i].ident, pyhost__process.interrupted_type);
  pyhost__free(subs);
  return n;
}

static int interrupt_all(void) {
  return interrupt_calls(NULL);
}

int pyhost__inflight_interrupt_sub(const struct pyhost__sub *s) {
  return interrupt_calls(s);
}

int pyhost__inflight_close(void) {
  PYHOST__ASSERT_GIL();
  atomic_store(&pyhost__process.gate_open, 0);
  return interrupt_all();
}

void pyhost__inflight_drain(void) {
  while (atomic_load(&pyhost__process.in_flight) > 0) pyhost__sleep_ms(1);
}

void pyhost__inflight_forget(void) {
  PYHOST__ASSERT_GIL();
  PY.Py_DecRef(pyhost__process.interrupted_type);
  pyhost__process.interrupted_type = NULL;
}

int pyhost__is_interrupt(PyObject *type) {
  PyObject *interrupted = pyhost__process.interrupted_type;
  return interrupted && PY.PyErr_GivenExceptionMatches(type, interrupted);
}

PyObject *pyhost__interrupt_type(void) {
  return pyhost__process.interrupted_type;
}

int pyhost_interrupt(pyhost *h) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!atomic_load(&pyhost__process.traceback_ready)) {
    pyhost__inflight_protect(1);
    PyObject *m = PY.PyImport_ImportModule("traceback");
    atomic_store(&pyhost__process.traceback_ready, m != NULL);
    PY.Py_DecRef(m);
    PY.PyErr_Clear();
    pyhost__inflight_protect(0);
  }
  interrupt_all();
  pyhost__teardown_run(PYHOST__AT_INTERRUPT); /* calls the bridge runs elsewhere */
  pyhost__leave(h, gil);
  return PYHOST_OK;
}

/* The checks of pyhost__enter_slow on h; PYHOST_OK or MISUSE with the message set. */
static int check_handle(pyhost *h) {
  if (!pyhost__handle_live(h)) return PYHOST_MISUSE; /* NULL, freed: nothing to read */
  int st = atomic_load(&h->state);
  if (st != PYHOST__RUNNING)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             st == PYHOST__FINALIZED
                                 ? "this pyhost was finalized; Python no longer runs"
                                 : "this pyhost failed to initialize; only pyhost_errmsg and "
                                   "pyhost_free may be called on it");
  return PYHOST_OK;
}

static int refused(pyhost *h) {
  return pyhost__set_error(h, PYHOST_MISUSE,
                           pyhost__process.forked_amid_calls
                               ? "this process was forked while other threads were inside "
                                 "pyhost calls; in the child only pyhost_finalize and "
                                 "pyhost_free may be called (docs/threads.md)"
                               : "this pyhost is being finalized; Python no longer takes calls");
}

int pyhost__enter_nogil(pyhost *h) {
  int rc = check_handle(h);
  if (rc) return rc;
  atomic_fetch_add(&pyhost__process.in_flight, 1);
  if (!atomic_load(&pyhost__process.gate_open)) {
    atomic_fetch_sub(&pyhost__process.in_flight, 1);
    return refused(h);
  }
  pyhost__thread.nogil++;
  pyhost__clear_message(h);
  return PYHOST_OK;
}

void pyhost__leave_nogil(void) {
  pyhost__thread.nogil--;
  atomic_fetch_sub(&pyhost__process.in_flight, 1);
}

/* pyhost__enter outside a scope (runtime.h): checks h, counts the call in flight,
 * takes the GIL. */
static PYHOST__COLD int not_entered(pyhost *h, int rc) {
  return rc == PYHOST__INFLIGHT_NOMEM
             ? pyhost__set_error(h, PYHOST_NOMEM, "out of memory for this thread's record (its "
                                                  "first call into Python)")
             : refused(h);
}

int pyhost__enter_slow(pyhost *h, PyGILState_STATE *gil) {
  int rc = check_handle(h);
  if (rc) return rc;
  struct pyhost__thread *t = &pyhost__thread;
#if defined(__GNUC__)
  __asm__("" : "+r"(t)); /* its address once: GCC would compute it again at each use */
#endif
  /* the message first (it needs no GIL), so that h is not kept across taking the GIL */
  if (t->messages) pyhost__clear_message(h); /* the common case: none */
  if (t->scope_h == h) *gil = PYHOST__GIL_SCOPED; /* counted by the scope's enter */
  else if ((rc = inflight_begin(t, gil)) != 0)
    return not_entered(h, rc);
  return PYHOST_OK;
}
