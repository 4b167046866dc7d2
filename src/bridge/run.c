/* run.c: running a host callback from Python, the value form's one runner and the
 * recursion guard (bridge.h).
 *
 * Every value-form entry (host functions, methods, constructors, getters, setters)
 * goes through pyhost__run_value: guard, frame push, the callback, frame pop, finish,
 * result.  The fast forms have their inline runner, pyhost__run_fast (bridge.h).
 */
#include "bridge.h"

PYHOST__COLD int pyhost__recursion_too_deep(void) {
  int limit = PY.Py_GetRecursionLimit();
  if (limit < 1 || pyhost__thread.nesting <= (unsigned long)limit) return 0;
  /* RecursionError (3.5) is stable ABI from 3.7; 3.6 has it among the builtins */
  PyObject *type = PY.PyExc_RecursionError
                       ? *PY.PyExc_RecursionError
                       : PY.PyDict_GetItemString(PY.PyEval_GetBuiltins(), "RecursionError");
  if (!type) type = *PY.PyExc_RuntimeError; /* its base class: builtins were changed */
  PY.PyErr_Format(type, "maximum recursion depth exceeded in a pyhost host callback (%lu "
                        "nested, the limit is %d)",
                  pyhost__thread.nesting - 1, limit);
  return 1;
}

PyObject *pyhost__run_value(pyhost *h, const char *who, pyhost__value_entry entry, void *ctx) {
  if (pyhost__recursion_enter() < 0) return NULL;
  struct pyhost__frame frame;
  pyhost_value *result = NULL;
  struct pyhost__frame *outer_frame = pyhost__frame_push(&frame);
  int rc = entry(h, ctx, &result);
  pyhost__frame_pop(outer_frame);
  PyObject *r = NULL;
  if (pyhost__frame_finish(h, &frame, rc, who) < 0) pyhost_value_free(result);
  else r = pyhost__result_to_python(h, result);
  pyhost__recursion_leave();
  return r;
}
