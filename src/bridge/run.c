/* run.c: the rare end of the recursion guard of entries from Python (bridge.h).
 *
 * Every value-form entry (host functions, methods, constructors, getters, setters)
 * goes through one inline runner, pyhost__run_value; the fast forms through
 * pyhost__run_fast (bridge.h).
 */
#include "bridge.h"

PYHOST__COLD int pyhost__recursion_nested(void) {
  if (++pyhost__thread.nesting >= 50 && pyhost__recursion_too_deep()) {
    pyhost__thread.nesting--;
    return -1;
  }
  return 0;
}

PYHOST__COLD PyObject *pyhost__run_fast_refused(struct pyhost__frame *outer) {
  struct pyhost__fast_call *c = pyhost__fast_call_of(pyhost__thread.frame);
  pyhost__frame_pop(outer);
  pyhost__drop(c->ret.obj);
  if (c->args.keep) PY.Py_DecRef(c->args.keep); /* a copy of the caller's kwargs (3.6-3.8) */
  return NULL;
}

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
