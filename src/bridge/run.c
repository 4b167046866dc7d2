/* run.c: the rare ends of the runners of host callbacks and of the recursion guard of
 * entries from Python (bridge.h).
 *
 * One inline runner per callback form, each with the same steps in the same order
 * (push, guard, call, assert, pop, leave, finish): the value forms (host functions,
 * methods, constructors, getters, setters) go through pyhost__run_value, the fast forms
 * through pyhost__run_fast, the typed forms (functions, methods, constructors, and a
 * fast constructor's `T()`) through pyhost__run_typed, which binds and looks at the
 * record again between the guard and the call.
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
  pyhost__args_drop(&c->args); /* a copy of the caller's kwargs (3.6-3.8) */
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

PYHOST__COLD int pyhost__run_typed_refused(struct pyhost__frame *outer, struct pyhost_args *view,
                                           int guarded) {
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer);
  if (view) pyhost__args_drop(view);
  return -1;
}

PYHOST__COLD int pyhost__run_typed_end(int rc, struct pyhost__frame *outer,
                                       const struct pyhost__callee *callee,
                                       struct pyhost_args *view, int guarded, PyObject **out) {
  /* the call's frame is still the innermost: the frame is the call's first member */
  struct pyhost__typed_call *c = (struct pyhost__typed_call *)(void *)pyhost__thread.frame;
  PYHOST__ASSERT(&c->frame != outer);
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer);
  if (view) pyhost__args_drop(view);
  if (pyhost__frame_finish(callee->h, &c->frame, rc, callee->who) < 0) {
    if (out && c->ret.pending.kind == PYHOST__RET_MADE) pyhost__drop(c->ret.obj);
    return -1;
  }
  if (out && !(*out = pyhost__ret_result(&c->ret, PYHOST__NONE_ASK))) return -1;
  return 0;
}

PYHOST__COLD int pyhost__args_made_slow(int made, struct pyhost_args *a, pyhost__live_fn live,
                                        void *ctx) {
  if (made < 0) return 0;
  if (live(ctx)) return 1;
  pyhost__args_drop(a);
  return 0;
}
