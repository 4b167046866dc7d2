/* bridge.h: what the bridge files share (call.c, callback.c, hostfn.c, hosttype.c).
 * The public side is in pyhost.h: "calling Python from C", "host functions", "host
 * types". */
#ifndef PYHOST_BRIDGE_H
#define PYHOST_BRIDGE_H

#include "internal.h"

/* ---- resolving names (call.c) ---- */
/* The object a dotted name names (see pyhost_resolve): new reference, or NULL with a
 * Python exception set.  Needs the GIL. */
PyObject *pyhost__resolve(pyhost *h, const char *dotted);

/* ---- callbacks (callback.c) ---- */
/* One C callback running on this thread.  Frames nest (C -> Python -> C ...): the
 * innermost one is where pyhost_raise and failing pyhost calls leave the exception
 * that the callback's Python caller will see. */
/* Push returns the outer frame, which the caller hands back to pop: held by the caller
 * (a register on the hot paths), not stored in the frame. */
static inline struct pyhost__frame *pyhost__frame_push(struct pyhost__frame *f) {
  struct pyhost__frame *outer = pyhost__thread.frame;
  f->type = NULL;
  pyhost__thread.frame = f;
  return outer;
}
static inline void pyhost__frame_pop(struct pyhost__frame *outer) {
  pyhost__thread.frame = outer;
}
/* With the GIL, after a callback returned rc: PYHOST_OK -> 0; otherwise sets the Python
 * exception (the kept one, or RuntimeError "<who>: <status>: <message>") -> -1.  Always
 * drops what the frame kept. */
int pyhost__frame_finish_slow(pyhost *h, struct pyhost__frame *f, int rc, const char *who);
static inline int pyhost__frame_finish(pyhost *h, struct pyhost__frame *f, int rc,
                                       const char *who) {
  if (rc == PYHOST_OK && !f->type) return 0; /* the common case */
  return pyhost__frame_finish_slow(h, f, rc, who);
}

/* Arguments of a call from Python, converted to values. */
struct pyhost__args {
  pyhost_value *small[6];
  pyhost_value **argv;  /* small or heap */
  size_t nargs;
  pyhost_value *kwargs; /* dict value or NULL */
};
/* From a vectorcall-style argument array (kwnames: tuple of keyword names or NULL), or
 * from an args tuple and a kwargs dict (either may be NULL).  0, or -1 with a Python
 * exception set (and nothing held). */
int pyhost__args_from_vector(struct pyhost__args *a, PyObject *const *args, size_t nargs,
                             PyObject *kwnames);
int pyhost__args_from_tuple(struct pyhost__args *a, PyObject *tuple, size_t skip,
                            PyObject *kwdict);
void pyhost__args_clear(struct pyhost__args *a);

/* Whose callback a view is for: the handle and the callable's qualified name (for
 * messages), kept in the callable's record, so a call's view points at it instead of
 * copying both. */
struct pyhost__callee {
  pyhost *h;
  const char *who;
};
/* The borrowed view of a fast callback (fastargs.c): either form of a call from
 * Python, read on demand. */
struct pyhost_args {
  const struct pyhost__callee *callee;
  PyObject *const *argv;     /* vector form: positional, then keyword values */
  PyObject *kwnames;         /* vector form: tuple of keyword names, or NULL; in the
                              * tuple form PYHOST__TUPLE_FORM (so the vector form, the
                              * hot one, writes no marker of its own) */
  PyObject *tuple, *kwdict;  /* tuple form only */
  size_t skip;               /* tuple form: leading items left out (a method's self) */
  size_t nargs;
  size_t nkw;                /* tuple form only: the vector form counts kwnames when asked */
  PyObject *keep;            /* list of temporaries (UTF-8 bytes before 3.10, the copy of
                              * kwdict before 3.9), or NULL */
};
extern PYHOST__HIDDEN const char pyhost__tuple_form;
#define PYHOST__TUPLE_FORM ((PyObject *)(void *)&pyhost__tuple_form)
static inline int pyhost__args_is_tuple(const struct pyhost_args *a) {
  return a->kwnames == PYHOST__TUPLE_FORM;
}
struct pyhost_ret {
  PyObject *obj;             /* new reference, None until a setter runs */
};
/* One fast call on the stack: the callback's frame, its result and the view in one
 * object, so the hot path addresses them all from the stack pointer.  The order is
 * measured: with the frame first GCC 12 builds entry_fast (hostfn.c) in 34
 * instructions on x86-64, against 37 with the view first (register moves). */
struct pyhost__fast_call {
  struct pyhost__frame frame;
  struct pyhost_ret ret;
  struct pyhost_args args;
};
/* The view of a vector-form or a tuple-form call (args, kwargs may be NULL); skip
 * leading positional items are left out (a method's self). */
static inline void pyhost__args_vector(struct pyhost_args *a,
                                       const struct pyhost__callee *callee,
                                       PyObject *const *argv, size_t nargs, PyObject *kwnames) {
  a->nargs = nargs;
  a->argv = argv;
  a->kwnames = kwnames;
  a->keep = NULL; /* tuple, kwdict, skip and nkw belong to the tuple form: never read here */
  a->callee = callee;
}
/* Before 3.9 `f(**d)` hands the caller's own dict d to the call, which Python code run
 * by the callback may change or clear: the view then holds a copy (0, or -1 with the
 * Python exception set and nothing held; fastargs.c). */
int pyhost__args_own_kwdict(struct pyhost_args *a);
/* 0, or -1 with the Python exception set (the view holds nothing then). */
static inline int pyhost__args_tuple(struct pyhost_args *a,
                                     const struct pyhost__callee *callee, PyObject *tuple,
                                     size_t skip, PyObject *kwdict) {
  /* tuple is the one the runtime made for the call: an exact tuple, whose size is in
   * its PyVarObject header (stable layout) */
  Py_ssize_t n = tuple ? ((PyVarObject *)tuple)->ob_size : 0;
  Py_ssize_t nk = kwdict ? PY.PyDict_Size(kwdict) : 0;
  a->callee = callee;
  a->argv = NULL;
  a->kwnames = PYHOST__TUPLE_FORM;
  a->keep = NULL;
  a->tuple = tuple;
  a->kwdict = nk > 0 ? kwdict : NULL;
  a->nargs = n > (Py_ssize_t)skip ? (size_t)n - skip : 0;
  a->nkw = nk > 0 ? (size_t)nk : 0;
  a->skip = skip;
  if (nk > 0 && !pyhost__runtime_at_least(3, 9)) return pyhost__args_own_kwdict(a);
  return 0;
}

/* A callback's result (own) as a new reference: NULL means None.  NULL with a Python
 * exception set when the conversion fails. */
PyObject *pyhost__result_to_python(pyhost *h, pyhost_value *result);

/* ---- running a host callback (run.c) ---- */
/* The recursion guard of the entries from Python into host callbacks: both runners
 * below (every form but a host function's fast door, a builtin call CPython guards
 * itself, where the guard would cost the hottest path 2.5%) and the no-argument
 * constructor.  CPython never guards a getter, a setter or a type's own vectorcall
 * (pyhost's methods from 3.12); from 3.12 its C limit for builtin calls (thousands of
 * levels) can outlast a small stack (an ASan build, a host thread).  So recursion
 * through host callbacks with no Python frame between the levels (a method calling
 * itself through pyhost_call, a getter reading its own attribute) counts the
 * callbacks nested on the thread and ends in RecursionError past Python's recursion
 * limit, on every runtime (Py_EnterRecursiveCall is stable ABI only from 3.9).
 * pyhost__recursion_enter: 0, or -1 with RecursionError set (then no leave). */
int pyhost__recursion_too_deep(void);
/* Only a callback that runs inside another (its frame's outer is not NULL) is counted,
 * so the outermost one, the common case, pays a test on each side and nothing more. */
int pyhost__recursion_nested(void);
#if defined(__GNUC__)
#  define PYHOST__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#  define PYHOST__UNLIKELY(x) (x)
#endif
static inline int pyhost__recursion_enter(const struct pyhost__frame *outer) {
  return PYHOST__UNLIKELY(outer != NULL) ? pyhost__recursion_nested() : 0;
}
static inline void pyhost__recursion_leave(const struct pyhost__frame *outer) {
  if (PYHOST__UNLIKELY(outer != NULL)) {
    PYHOST__ASSERT(pyhost__thread.nesting > 0);
    pyhost__thread.nesting--;
  }
}

/* A value-form callback as the runner calls it: ctx is the entry's own (the record,
 * payload and converted arguments); *result (own) is NULL until the callback sets one. */
typedef int (*pyhost__value_entry)(pyhost *h, void *ctx, pyhost_value **result);
/* The one runner of the value forms (functions, methods, constructors, getters,
 * setters): runs entry in a frame, finishes the frame (who names the callable in
 * messages) and converts the result into *out (a new reference, None when the
 * callback set none) unless out is NULL (the forms without a result), inside the
 * recursion guard.  0, or -1 with the Python exception set; the callback's result is
 * freed either way.  Inline, so that each entry calls its callback directly and a
 * constant out costs nothing. */
static PYHOST__HOT_INLINE int pyhost__run_value(pyhost *h, const char *who,
                                                pyhost__value_entry entry, void *ctx,
                                                PyObject **out) {
  struct pyhost__frame frame;
  pyhost_value *result = NULL;
  struct pyhost__frame *outer_frame = pyhost__frame_push(&frame);
  if (pyhost__recursion_enter(outer_frame) < 0) {
    pyhost__frame_pop(outer_frame);
    return -1;
  }
  int rc = entry(h, ctx, &result);
  PYHOST__ASSERT(pyhost__thread.frame == &frame); /* frames pair */
  pyhost__frame_pop(outer_frame);
  pyhost__recursion_leave(outer_frame);
  rc = pyhost__frame_finish(h, &frame, rc, who);
  if (rc < 0 || !out) pyhost_value_free(result);
  else if (!(*out = pyhost__result_to_python(h, result))) rc = -1;
  return rc;
}

/* The Python class of a pyhost_exc code (borrowed), NULL for an unknown code. */
PyObject *pyhost__exc_type(pyhost_exc type);

/* ---- instances of pyhost's heap types (heapobj.c) ---- */
/* A new instance of type through its tp_alloc, or NULL with the exception set. */
PyObject *pyhost__heap_alloc(PyTypeObject *type);
/* For a tp_dealloc: frees self through tp_free, then drops its reference to the type. */
void pyhost__heap_free(PyObject *self);

/* ---- host modules (hostfn.c) ---- */
PyObject *pyhost__module_object(pyhost_module *m); /* borrowed */
const char *pyhost__module_name(pyhost_module *m);

/* 1 when the handle still runs Python (callbacks refuse to run during finalize). */
static inline int pyhost__handle_running(const pyhost *h) {
  return h && h->magic == PYHOST__MAGIC && atomic_load(&h->state) == PYHOST__RUNNING;
}

/* Reference counts on the per-call paths.  Before 3.12 the stable ABI's own Py_INCREF
 * and Py_DECREF were inline operations on ob_refcnt (every abi3 extension built for
 * 3.11 or older does them), so pyhost may do them too and save a call; a count that
 * reaches zero still goes through Py_DecRef, which deallocates.  From 3.12 the counts
 * go through the runtime (immortal objects, PEP 683), except None's: immortal, it
 * needs no count at all. */
static inline int pyhost__inline_refcounts(void) { return !pyhost__runtime_at_least(3, 12); }
/* The count as those runtimes lay it out: a Py_ssize_t first in every object (as in
 * all stable-ABI objects; Py_TRACE_REFS builds are outside the stable ABI).  Not
 * o->ob_refcnt: headers of 3.14 and later name only its low 32 bits so. */
#define PYHOST__REFCNT(o) (*(Py_ssize_t *)(void *)(o))

/* A new reference to None. */
static inline PyObject *pyhost__none_new(void) {
  PyObject *none = PY._Py_NoneStruct;
  if (pyhost__inline_refcounts()) PYHOST__REFCNT(none)++;
  return none;
}
/* Drops a new reference (o not NULL). */
static inline void pyhost__drop(PyObject *o) {
  if (pyhost__inline_refcounts()) {
    if (PYHOST__REFCNT(o) > 1) PYHOST__REFCNT(o)--;
    else PY.Py_DecRef(o);
  } else if (o != PY._Py_NoneStruct) {
    PY.Py_DecRef(o);
  }
}

/* The rare end of pyhost__run_fast: the callback failed, kept an exception or left
 * temporaries.  The call is the innermost frame's (not popped yet: so the hot path
 * keeps no pointer to it across the callback); pops it back to outer, drops what it
 * kept; the result as pyhost__run_fast returns it. */
PyObject *pyhost__run_fast_end(int rc, struct pyhost__frame *outer, int guarded);
/* The end of pyhost__run_fast_as refused by the recursion guard: pops the frame, drops
 * the result; NULL with RecursionError set. */
PyObject *pyhost__run_fast_refused(struct pyhost__frame *outer);
/* The fast call whose frame f is. */
static inline struct pyhost__fast_call *pyhost__fast_call_of(struct pyhost__frame *f) {
  return (struct pyhost__fast_call *)(void *)((char *)f -
                                              offsetof(struct pyhost__fast_call, frame));
}

/* Runs a fast callback over the view c->args in a frame and hands back its result as a
 * new reference, or NULL with the Python exception set; drops the view's temporaries.
 * Inline: this is the whole per-call cost of a fast host function besides the
 * callback, so the common end (success, nothing kept) is one test and the rest is out
 * of line.  The traits say what the runtime does, as constants where the caller knows
 * them: none_counted is pyhost__inline_refcounts(), may_keep that views keep
 * temporaries (before 3.10 only, see fastargs.c), guarded that the call runs inside
 * the recursion guard (every entry but a host function's fast door, a builtin call
 * CPython guards itself: the guard would cost the hottest path 2.5%). */
static inline PyObject *pyhost__run_fast_as(pyhost_fast_function fn, void *userdata,
                                            struct pyhost__fast_call *c, int none_counted,
                                            int may_keep, int guarded) {
  c->ret.obj = PY._Py_NoneStruct;
  if (none_counted) PYHOST__REFCNT(c->ret.obj)++;
  struct pyhost__frame *outer = pyhost__frame_push(&c->frame);
  if (guarded && pyhost__recursion_enter(outer) < 0) return pyhost__run_fast_refused(outer);
  int rc = fn(c->args.callee->h, userdata, &c->args, &c->ret);
  /* frames pair: whatever the callback ran pushed and popped its own */
  PYHOST__ASSERT(pyhost__thread.frame == &c->frame);
  if ((rc != PYHOST_OK) | (c->frame.type != NULL) | (may_keep && c->args.keep != NULL))
    return pyhost__run_fast_end(rc, outer, guarded);
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer);
  return c->ret.obj;
}
static inline PyObject *pyhost__run_fast(pyhost_fast_function fn, void *userdata,
                                         struct pyhost__fast_call *c) {
  return pyhost__run_fast_as(fn, userdata, c, pyhost__inline_refcounts(),
                             !pyhost__runtime_at_least(3, 10), 1);
}


#endif
