/* gil.c: host-held GIL scopes (pyhost_gil_enter / pyhost_gil_leave).
 *
 * Every public call takes the GIL itself (PyGILState_Ensure/Release, about a hundred
 * instructions and two atomic operations per call).  A scope lets a tight loop pay
 * that once: while this thread holds a scope on h, pyhost__enter only checks the
 * handle.  Scopes are per thread and nest by counting; the GIL is taken by the
 * outermost enter and released by the outermost leave.
 */
#include "runtime.h"

int pyhost_gil_enter(pyhost *h) {
  if (pyhost__gil_scoped(h)) {
    /* the outer scope holds the GIL, but finalize answers MISUSE to every later call */
    if (atomic_load(&h->state) != PYHOST__RUNNING)
      return pyhost__set_error(h, PYHOST_MISUSE,
                               "pyhost_gil_enter: this pyhost is being finalized; Python no "
                               "longer takes calls (leave the open scope)");
    pyhost__thread.depth++;
    pyhost__clear_message(h);
    return PYHOST_OK;
  }
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  pyhost__thread.scope_h = h;
  pyhost__thread.depth = 1;
  pyhost__thread.state = gil;
  return PYHOST_OK;
}

int pyhost_gil_leave(pyhost *h) {
  if (!pyhost__handle_live(h)) return PYHOST_MISUSE;
  if (!pyhost__gil_scoped(h))
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_gil_leave without a matching pyhost_gil_enter on this "
                             "thread");
  pyhost__clear_message(h);
  if (--pyhost__thread.depth == 0) {
    pyhost__thread.scope_h = PYHOST__NO_SCOPE;
    pyhost__leave(h, pyhost__thread.state); /* the enter was counted in flight (inflight.c) */
  }
  return PYHOST_OK;
}
