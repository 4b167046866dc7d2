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
 *  - a list of the threads now inside a call, one thread-local record each, linked on
 *    the thread's outermost call.  The list is only touched with the GIL held, so the
 *    GIL is its lock.  pyhost_interrupt walks it and asks CPython to raise
 *    pyhost.Interrupted in each thread (PyThreadState_SetAsyncExc, the stable ABI's only
 *    way to reach a thread other than the main one: PyErr_SetInterrupt works only
 *    there).  An interrupt that arrives after the code finished is cleared when the
 *    outermost call leaves, so it never leaks into the thread's next call.  Inside a
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

struct running_thread {
  unsigned long ident;  /* PyThread_get_thread_ident(): the id SetAsyncExc matches */
  int depth;            /* nested calls (host function callbacks calling pyhost) */
  int nogil;            /* calls counted without the GIL (pyhost__enter_nogil) */
  struct pyhost__thread *thread; /* its interrupted flag: an async exception was sent */
  int protected;        /* inside pyhost's own Python work: not to be interrupted */
  struct running_thread *prev, *next;
};

static _Thread_local struct running_thread self;
static struct running_thread *running;     /* GIL-protected */
static _Atomic long in_flight;
static _Atomic int gate_open;
static PyObject *interrupted_type;         /* pyhost.Interrupted, strong reference */
/* This process is a child forked while other threads were inside pyhost calls: those
 * threads do not exist here, and one of them may have held the GIL for good. */
static _Atomic int forked_amid_calls;

/* In the child after fork(): only the forking thread exists, so only its own calls are
 * in flight (each of its entries counted once; a scope is one).  With another thread's
 * call cut off, Python's state may be held by a thread that is gone: the gate closes,
 * and finalize (pyhost.c) leaves Python alone. */
static void after_fork_child(void) {
  long own = self.depth + self.nogil;
  if (atomic_load(&in_flight) > own) {
    atomic_store(&gate_open, 0);
    atomic_store(&forked_amid_calls, 1);
  }
  atomic_store(&in_flight, own);
  running = own ? &self : NULL;
  self.prev = self.next = NULL;
}

int pyhost__inflight_open(void) {
  interrupted_type = PY.PyErr_NewException("pyhost.Interrupted", *PY.PyExc_BaseException, NULL);
  if (!interrupted_type) return -1;
  pyhost__on_fork_child(after_fork_child); /* Python starts once per process: once */
  atomic_store(&gate_open, 1);
  return 0;
}

int pyhost__inflight_forked_amid_calls(void) {
  return atomic_load(&forked_amid_calls);
}

int pyhost__inflight_begin(PyGILState_STATE *gil) {
  atomic_fetch_add(&in_flight, 1);
  if (!atomic_load(&gate_open)) goto refused;
  *gil = PY.PyGILState_Ensure();
  /* Checked again under the GIL: pyhost_finalize closes the gate and interrupts the
   * listed threads in one GIL hold, so a thread is either listed by then or refused. */
  if (!atomic_load(&gate_open)) {
    PY.PyGILState_Release(*gil);
    goto refused;
  }
  if (self.depth++ == 0) {
    self.ident = PY.PyThread_get_thread_ident();
    self.thread = &pyhost__thread;
    pyhost__thread.interrupted = 0;
    self.prev = NULL;
    self.next = running;
    if (running) running->prev = &self;
    running = &self;
  }
  return 0;
refused:
  atomic_fetch_sub(&in_flight, 1);
  return -1;
}

void pyhost__inflight_end(PyGILState_STATE gil) {
  if (--self.depth == 0) {
    if (self.prev) self.prev->next = self.next;
    else running = self.next;
    if (self.next) self.next->prev = self.prev;
    /* An interrupt that came too late to be raised must not hit the next call. */
    if (pyhost__thread.interrupted) PY.PyThreadState_SetAsyncExc(self.ident, NULL);
  }
  PY.PyGILState_Release(gil);
  atomic_fetch_sub(&in_flight, 1);
}

void pyhost__inflight_scoped_end(void) {
  /* a call below a host callback leaves the interrupt to stop the call around it */
  if (pyhost__thread.frame) return;
  pyhost__thread.interrupted = 0;
  PY.PyThreadState_SetAsyncExc(self.ident, NULL);
}

int pyhost__inflight_free_begin(PyGILState_STATE *gil) {
  if (pyhost__inflight_begin(gil) == 0) return 1;
  /* Finalize has begun.  A thread inside a call (a scope, a host callback, also one
   * that Python code on a thread of its own called) holds the GIL: Python still runs
   * under it, and waiting here would keep the calls finalize waits for from the GIL. */
  if (self.depth > 0 || pyhost__thread.frame) {
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
  return self.depth;
}

void pyhost__inflight_protect(int on) {
  if (!on) {
    self.protected--;
    return;
  }
  /* An interrupt sent but not raised yet would fire inside pyhost's own work; the
   * call is ending with an error anyway, so it has done its job. */
  if (self.protected++ == 0 && pyhost__thread.interrupted)
    PY.PyThreadState_SetAsyncExc(self.ident, NULL);
}

/* GIL held.  The caller's own thread is skipped when its only call is this one. */
static int interrupt_all(void) {
  int n = 0;
  for (struct running_thread *r = running; r; r = r->next) {
    if ((r == &self && self.depth == 1) || r->protected) continue;
    r->thread->interrupted = 1;
    n += PY.PyThreadState_SetAsyncExc(r->ident, interrupted_type) > 0;
  }
  return n;
}

int pyhost__inflight_close(void) {
  atomic_store(&gate_open, 0);
  return interrupt_all();
}

void pyhost__inflight_drain(void) {
  while (atomic_load(&in_flight) > 0) pyhost__sleep_ms(1);
}

void pyhost__inflight_forget(void) {
  PY.Py_DecRef(interrupted_type);
  interrupted_type = NULL;
}

int pyhost__is_interrupt(PyObject *type) {
  return interrupted_type && PY.PyErr_GivenExceptionMatches(type, interrupted_type);
}

PyObject *pyhost__interrupt_type(void) {
  return interrupted_type;
}

int pyhost_interrupt(pyhost *h) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  static _Atomic int traceback_ready;
  if (!atomic_load(&traceback_ready)) {
    pyhost__inflight_protect(1);
    PyObject *m = PY.PyImport_ImportModule("traceback");
    atomic_store(&traceback_ready, m != NULL);
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
                           forked_amid_calls
                               ? "this process was forked while other threads were inside "
                                 "pyhost calls; in the child only pyhost_finalize and "
                                 "pyhost_free may be called (docs/threads.md)"
                               : "this pyhost is being finalized; Python no longer takes calls");
}

int pyhost__enter_nogil(pyhost *h) {
  int rc = check_handle(h);
  if (rc) return rc;
  atomic_fetch_add(&in_flight, 1);
  if (!atomic_load(&gate_open)) {
    atomic_fetch_sub(&in_flight, 1);
    return refused(h);
  }
  self.nogil++;
  pyhost__clear_message(h);
  return PYHOST_OK;
}

void pyhost__leave_nogil(void) {
  self.nogil--;
  atomic_fetch_sub(&in_flight, 1);
}

/* pyhost__enter outside a scope (runtime.h): checks h, counts the call in flight,
 * takes the GIL. */
int pyhost__enter_slow(pyhost *h, PyGILState_STATE *gil) {
  int rc = check_handle(h);
  if (rc) return rc;
  if (pyhost__gil_scoped(h)) *gil = PYHOST__GIL_SCOPED; /* counted by the scope's enter */
  else if (pyhost__inflight_begin(gil) != 0)
    return refused(h);
  pyhost__clear_message(h);
  return PYHOST_OK;
}
