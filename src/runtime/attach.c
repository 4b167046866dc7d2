/* attach.c: host threads that keep their Python thread state
 * (pyhost_thread_attach / pyhost_thread_detach).
 *
 * CPython gives a thread it did not create a thread state on PyGILState_Ensure and
 * frees it on the matching outermost PyGILState_Release.  So without help every
 * outermost pyhost call or GIL scope on a host thread makes and frees one: memory
 * mapped for its frame stack and faulted in each time (about 20 us on the machines
 * docs/performance.md was measured on), and the thread's Python state
 * (threading.local, context variables, sys.settrace) gone between calls.  Attaching is
 * one PyGILState_Ensure that stays: the count keeps the thread state until detach
 * releases it.  Nothing runs at thread exit: a thread that exits attached leaves its
 * thread state to Py_FinalizeEx, which frees every thread state still listed.
 */
#include "runtime.h"

/* The state is this thread's (pyhost__thread.attached and attach_pin, core.h). */

int pyhost_thread_attach(pyhost *h) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (pyhost__thread.sub) { /* PyGILState_Ensure would wait there for its own GIL */
    pyhost__leave(h, gil);
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_thread_attach from inside a plugin's sub-interpreter (a "
                             "host function it called); attach the thread outside any call");
  }
  /* the GIL is held here, so the pin answers PyGILState_LOCKED: releasing it later
   * only drops the count */
  if (pyhost__thread.attached++ == 0) pyhost__thread.attach_pin = PY.PyGILState_Ensure();
  pyhost__leave(h, gil);
  return PYHOST_OK;
}

int pyhost_thread_detach(pyhost *h) {
  if (!pyhost__handle_live(h)) return PYHOST_MISUSE;
  if (pyhost__thread.attached == 0)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_thread_detach without a matching pyhost_thread_attach "
                             "on this thread");
  if (--pyhost__thread.attached > 0) {
    pyhost__clear_message(h);
    return PYHOST_OK;
  }
  PyGILState_STATE gil;
  /* Refused once finalize has begun: Python frees the thread state itself (or has). */
  if (pyhost__enter(h, &gil) != PYHOST_OK) {
    pyhost__clear_message(h);
    return PYHOST_OK;
  }
  PY.PyGILState_Release(pyhost__thread.attach_pin);
  pyhost__leave(h, gil); /* the outermost release frees a thread state pyhost made */
  return PYHOST_OK;
}
