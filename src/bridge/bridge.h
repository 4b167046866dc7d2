/* bridge.h: what the bridge files share (call.c, callback.c, hostfn.c, hosttype.c).
 * The public side is in pyhost.h: "calling Python from C", "host functions", "host
 * types". */
#ifndef PYHOST_BRIDGE_H
#define PYHOST_BRIDGE_H

#include "internal.h"

#include <stdarg.h>

/* ---- resolving names (call.c) ---- */
/* The object a dotted name names (see pyhost_resolve): new reference, or NULL with a
 * Python exception set.  Needs the GIL. */
PyObject *pyhost__resolve(pyhost *h, const char *dotted);

/* f(*stack[0:n]), the cheapest positional call the runtime's stable ABI has (GIL held;
 * a new reference, or NULL with the exception set): PyObject_Vectorcall on 3.12+ (the
 * callee may write stack[-1]), PyObject_CallNoArgs for none on 3.10 and 3.11, and
 * before that PyObject_CallFunctionObjArgs, which CPython 3.6+ hands to the callee's
 * fast call as a C array, not a tuple (bench_abi3 measures it); a tuple only past
 * PYHOST__CALL_STACK_MAX arguments (call.c). */
#define PYHOST__CALL_STACK_MAX 8
PyObject *pyhost__call_stack(PyObject *f, PyObject *const *stack, size_t n);
/* Its way before 3.12 for callers that know the runtime is older and n > 0 (the
 * per-call paths, which split on pyhost__inline_refcounts() once). */
PyObject *pyhost__call_objargs(PyObject *f, PyObject *const *stack, size_t n);
/* PY_VECTORCALL_ARGUMENTS_OFFSET (not in the floor's headers): the callee may use
 * args[-1], so a bound method puts self there instead of copying the arguments. */
#define PYHOST__ARGS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))

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
 * drops what the frame kept, and the message a failed call inside the callback left on
 * this thread: its Python caller has the exception now, and the pyhost call that
 * leaves to the host answers with a message of its own or none. */
int pyhost__frame_finish_slow(pyhost *h, struct pyhost__frame *f, int rc, const char *who);
static inline int pyhost__frame_finish(pyhost *h, struct pyhost__frame *f, int rc,
                                       const char *who) {
  if (rc == PYHOST_OK && !f->type && !pyhost__thread.messages) return 0; /* the common case */
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
  pyhost_view *lent;         /* the views lent to the callback (buffer arguments), chained
                              * through their slots (buffer_view.c), or NULL */
};
extern PYHOST__HIDDEN const char pyhost__tuple_form;
#define PYHOST__TUPLE_FORM ((PyObject *)(void *)&pyhost__tuple_form)
static inline int pyhost__args_is_tuple(const struct pyhost_args *a) {
  return a->kwnames == PYHOST__TUPLE_FORM;
}
struct pyhost_ret {
  PyObject *obj;      /* the result made (a new reference) while pending.kind is
                       * PYHOST__RET_MADE, else not set */
  pyhost_arg pending; /* kind PYHOST__RET_MADE: the result is obj (a fast call's from the
                       * start, None); else, in a typed call (pyhost__typed_call) until a
                       * setter makes an object, the result as a C value (kind NONE, INT
                       * or FLOAT), made an object once the callback returned, so that
                       * the scalar setters of typed callbacks only store */
};
/* pending.kind of a result that is an object already (no pyhost_arg_kind) */
#define PYHOST__RET_MADE (-1)
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
  a->lent = NULL;
  a->callee = callee;
}
/* Before 3.9 `f(**d)` hands the caller's own dict d to the call, which Python code run
 * by the callback may change or clear: the view then holds a copy (0, or -1 with the
 * Python exception set and nothing held; fastargs.c). */
int pyhost__args_own_kwdict(struct pyhost_args *a);
/* Releases the views a call lent its callback (chained from first; buffer_view.c). */
void pyhost__view_lent_end(pyhost_view *first);
/* 1 when the view keeps anything to drop after the callback: temporaries or lent views. */
static inline int pyhost__args_holds(const struct pyhost_args *a) {
  return (a->keep != NULL) | (a->lent != NULL);
}
/* Drops what the view keeps (that copy, the temporaries of its reads, the views lent),
 * once its callback has returned or will not run. */
static inline void pyhost__args_drop(struct pyhost_args *a) {
  if (a->keep) PY.Py_DecRef(a->keep);
  if (a->lent) pyhost__view_lent_end(a->lent);
}
/* A door's liveness: 1 when ctx's callback may run now (its function still
 * registered, its instance still valid, Python still running); else 0 with the Python
 * exception set (the door's own refusal).  Every door asks it after any step that may
 * have run Python code, before it reads the callback, its userdata or the payload. */
typedef int (*pyhost__live_fn)(void *ctx);
/* The rare end of pyhost__args_made (run.c). */
int pyhost__args_made_slow(int made, struct pyhost_args *a, pyhost__live_fn live, void *ctx);
/* After a view was made, made being pyhost__args_tuple_as's answer: 1 when the call
 * goes on; 0 (the exception set, the view's copy dropped) when making it failed, or
 * copied the caller's dict (a collection may run Python code there) and live(ctx) now
 * refuses.  One test on the common path. */
static inline int pyhost__args_made(int made, struct pyhost_args *a, pyhost__live_fn live,
                                    void *ctx) {
  return PYHOST__UNLIKELY(made != 0) ? pyhost__args_made_slow(made, a, live, ctx) : 1;
}
/* Reads o (an argument of the view a) as a C argument of kind PYHOST_ARG_INT, _FLOAT,
 * _BOOL, _STR or _BYTES into *out (kind and value; str and bytes borrowed for the
 * callback): PYHOST_OK; PYHOST_TYPE or PYHOST_RANGE with nothing raised; PYHOST_PYEXC
 * with the exception taken into the callback's frame (fastargs.c). */
int pyhost__args_read(struct pyhost_args *a, PyObject *o, int kind, pyhost_arg *out);
/* Reads o (an argument of the view a) as a borrowed view (flags as pyhost_view_get's)
 * into *out, kept with a's temporaries and released when they are dropped, after the
 * callback: PYHOST_OK; PYHOST_TYPE with nothing raised and *want naming what o is not
 * (for the caller to word); another status with the exception (the exporter's) taken
 * into the callback's frame (fastargs.c, buffer_view.c). */
int pyhost__args_view(struct pyhost_args *a, PyObject *o, unsigned flags,
                      const pyhost_view **out, const char **want);
/* 0; 1 when it copied the caller's keyword dict (own_kw: before 3.9, above), where a
 * collection may have run Python code (see pyhost__args_made); or -1 with the Python
 * exception set (the view holds nothing then).  A caller that takes nothing from the
 * dict past its own conversions (a typed function without bytes parameters: its str
 * arguments are copies before 3.10) passes own_kw 0. */
static inline int pyhost__args_tuple_as(struct pyhost_args *a,
                                        const struct pyhost__callee *callee, PyObject *tuple,
                                        size_t skip, PyObject *kwdict, int own_kw) {
  /* tuple is the one the runtime made for the call: an exact tuple, whose size is in
   * its PyVarObject header (stable layout) */
  Py_ssize_t n = tuple ? ((PyVarObject *)tuple)->ob_size : 0;
  Py_ssize_t nk = kwdict ? PY.PyDict_Size(kwdict) : 0;
  a->callee = callee;
  a->argv = NULL;
  a->kwnames = PYHOST__TUPLE_FORM;
  a->keep = NULL;
  a->lent = NULL;
  a->tuple = tuple;
  a->kwdict = nk > 0 ? kwdict : NULL;
  a->nargs = n > (Py_ssize_t)skip ? (size_t)n - skip : 0;
  a->nkw = nk > 0 ? (size_t)nk : 0;
  a->skip = skip;
  if (own_kw && nk > 0 && !pyhost__runtime_at_least(3, 9))
    return pyhost__args_own_kwdict(a) < 0 ? -1 : 1;
  return 0;
}
static inline int pyhost__args_tuple(struct pyhost_args *a,
                                     const struct pyhost__callee *callee, PyObject *tuple,
                                     size_t skip, PyObject *kwdict) {
  return pyhost__args_tuple_as(a, callee, tuple, skip, kwdict, 1);
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

/* The flags every type pyhost makes starts from: Py_TPFLAGS_DEFAULT as the runtime's
 * own headers define it.  Up to 3.9 it holds Py_TPFLAGS_HAVE_VERSION_TAG (bit 18, the
 * same in every version), without which the runtime never caches a look-up on the type
 * (every `obj.m` walks the MRO's dicts); the floor's newer headers leave it out, as
 * 3.10+ no longer reads it. */
static inline unsigned long pyhost__tpflags_default(void) {
  return Py_TPFLAGS_DEFAULT | (pyhost__runtime_at_least(3, 10) ? 0 : (1UL << 18));
}

/* ---- instances of pyhost's heap types (heapobj.c) ---- */
/* A new instance of type through its tp_alloc, or NULL with the exception set. */
PyObject *pyhost__heap_alloc(PyTypeObject *type);
/* For a tp_dealloc: frees self through tp_free, then drops its reference to the type. */
void pyhost__heap_free(PyObject *self);

/* ---- host modules (hostfn.c) ---- */
PyObject *pyhost__module_object(pyhost_module *m); /* borrowed */
const char *pyhost__module_name(pyhost_module *m);
/* The live host modules in the order made: the first for NULL, then the one after m
 * (NULL at the end).  GIL held. */
pyhost_module *pyhost__modules_next(pyhost_module *m);
/* 1 when o is m's host function called name (its doc in *doc, "" when none). */
int pyhost__module_function(pyhost_module *m, const char *name, PyObject *o, const char **doc);
/* Host function name of the host module called module: a new reference, or NULL with
 * RuntimeError("<module>.<name> was unregistered by the host") set.  GIL held. */
PyObject *pyhost__hostfn_find(const char *module, const char *name);
/* With the GIL, in a sub-interpreter: a new function object there that calls host
 * function name of host module m (a replica record: hostfn.c), or NULL with a Python
 * exception set. */
PyObject *pyhost__hostfn_replica(pyhost_module *m, const char *name);
/* With the GIL, in a sub-interpreter: host type modname.name's type object there,
 * made from its record on the first call (in that interpreter, for its module
 * object module) and the same one after: a new reference, or NULL with a Python
 * exception set.  Kept in the interpreter's pyhost__istate until
 * pyhost__hosttypes_drop (hosttype.c). */
PyObject *pyhost__hosttype_here(PyObject *module, const char *modname, const char *name);
/* With the GIL, in the interpreter whose state is is, as it ends: its host type
 * objects, leave the table of types and are released. */
void pyhost__hosttypes_drop(struct pyhost__istate *is);
/* With is's interpreter current and the GIL: drops its spare loan exporter (before its
 * HostMemory type: buffer_host.c). */
void pyhost__hostmem_spare_drop(struct pyhost__istate *is);

/* 1 when the handle still runs Python (callbacks refuse to run during finalize). */
static inline int pyhost__handle_running(const pyhost *h) {
  return pyhost__handle_live(h) && atomic_load(&h->state) == PYHOST__RUNNING;
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

/* 1 when pyhost's reference to o is its only one: no Python code can reach o.  Before
 * 3.14 the stable ABI's own Py_REFCNT reads the count in place; 3.14 made it a
 * function. */
static inline int pyhost__sole_reference(PyObject *o) {
  /* (PY.Py_REFCNT): built with 3.14+ headers, Py_REFCNT is also a macro */
  if (pyhost__runtime_at_least(3, 14)) return (PY.Py_REFCNT)(o) == 1;
  return PYHOST__REFCNT(o) == 1;
}

/* A new reference to None. */
static inline PyObject *pyhost__none_new(void) {
  PyObject *none = PY._Py_NoneStruct;
  if (pyhost__inline_refcounts()) PYHOST__REFCNT(none)++;
  return none;
}
/* Drops a new reference (o not NULL); counted is pyhost__inline_refcounts(), a constant
 * where a per-call path has split on it once. */
static inline void pyhost__drop_as(PyObject *o, int counted) {
  if (counted) {
    /* as Py_DECREF of those runtimes' limited headers: _Py_Dealloc is stable ABI */
    if (--PYHOST__REFCNT(o) == 0) PY._Py_Dealloc(o);
  } else if (o != PY._Py_NoneStruct) {
    PY.Py_DecRef(o);
  }
}
static inline void pyhost__drop(PyObject *o) { pyhost__drop_as(o, pyhost__inline_refcounts()); }

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
 * them: none_counted is pyhost__inline_refcounts(), guarded that the call runs inside
 * the recursion guard (every entry but a host function's fast door, a builtin call
 * CPython guards itself: the guard would cost the hottest path 2.5%).  The view keeps
 * temporaries on every runtime (a str's UTF-8 before 3.10, pyhost_args_view's views):
 * one test of a word on the stack. */
static inline PyObject *pyhost__run_fast_as(pyhost_fast_function fn, void *userdata,
                                            struct pyhost__fast_call *c, int none_counted,
                                            int guarded) {
  c->ret.obj = PY._Py_NoneStruct;
  c->ret.pending.kind = PYHOST__RET_MADE;
  if (none_counted) PYHOST__REFCNT(c->ret.obj)++;
  struct pyhost__frame *outer = pyhost__frame_push(&c->frame);
  if (guarded && pyhost__recursion_enter(outer) < 0) return pyhost__run_fast_refused(outer);
  int rc = fn(c->args.callee->h, userdata, &c->args, &c->ret);
  /* frames pair: whatever the callback ran pushed and popped its own */
  PYHOST__ASSERT(pyhost__thread.frame == &c->frame);
  if ((rc != PYHOST_OK) | (c->frame.type != NULL) | pyhost__args_holds(&c->args))
    return pyhost__run_fast_end(rc, outer, guarded);
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer);
  return c->ret.obj;
}
static inline PyObject *pyhost__run_fast(pyhost_fast_function fn, void *userdata,
                                         struct pyhost__fast_call *c) {
  return pyhost__run_fast_as(fn, userdata, c, pyhost__inline_refcounts(), 1);
}

/* ---- typed host functions: the declared signature (signature.c, typedargs.c) ---- */
#define PYHOST__SIG_MAX 16 /* parameters; a bit each in the binder's mask */
struct pyhost__param {
  const char *name;       /* ASCII identifier, in the signature's own memory */
  PyObject *pyname;       /* interned name (strong) while Python runs, for keywords
                           * matched by identity; NULL before pyhost__sig_intern and
                           * after pyhost__sig_release */
  int kind;               /* PYHOST_ARG_INT, _FLOAT, _BOOL, _STR, _BYTES or _VIEW */
  unsigned view_flags;    /* _VIEW: pyhost_view_get's flags (buffer, rwbuffer) */
  unsigned char has_default, dflt_none, kwonly, posonly;
  pyhost_arg dflt;        /* the default (kind NONE for None) */
  const char *dflt_text;  /* its source text, for the docstring */
  size_t dflt_len;
};
struct pyhost__sig {
  const char *name;         /* the function's name */
  char *doc;                /* "name(...)\n--\n\n" + the host's doc: own */
  size_t n, npos, nposonly; /* parameters; that may be positional; positional-only */
  int borrows_bytes;        /* a bytes parameter: its argument is read in place */
  int lends_views;          /* a buffer or rwbuffer parameter: only the full binder binds
                             * the call (lending may run Python code; typedargs.c) */
  /* the exact type pyhost__quick_read reads p[j] from (int, float), else NULL, which
   * no object has, and NULL past the last parameter, so that a loop over more arguments
   * than parameters stops there: set with the names */
  PyTypeObject *quick_type[PYHOST__SIG_MAX + 1];
  size_t n_all_positional;  /* n when every parameter may be positional, else SIZE_MAX */
  /* The keyword names of the last vector-form call with keywords (a strong reference,
   * so that its address names it: in the common case a code object's constant) and the
   * parameter each of them names, for the quick binding (typedargs.c); NULL while
   * there is none, and after pyhost__sig_release. */
  PyObject *kw_names;
  unsigned char kw_param[PYHOST__SIG_MAX];
  struct pyhost__param p[PYHOST__SIG_MAX];
};
/* Reads the signature text (see signature.c) into *out (own): PYHOST_OK, or
 * PYHOST_MISUSE naming what is wrong and where (fn names the public function), or
 * PYHOST_NOMEM, with h's message set.  The _as form: method says the docstring's
 * signature starts with "$self" (a method's, as CPython writes it). */
int pyhost__sig_new_as(pyhost *h, const char *text, const char *doc, const char *fn,
                       int method, struct pyhost__sig **out);
static inline int pyhost__sig_new(pyhost *h, const char *text, const char *doc,
                                  const char *fn, struct pyhost__sig **out) {
  return pyhost__sig_new_as(h, text, doc, fn, 0, out);
}
/* The "(...)" of s's docstring, what __text_signature__ reads: a new string (own), or
 * NULL when out of memory. */
char *pyhost__sig_text(const struct pyhost__sig *s);
/* With the GIL: makes the interned parameter names (0, or -1 with the exception set);
 * release drops them (before Python finalizes: after, only free runs). */
int pyhost__sig_intern(struct pyhost__sig *s);
void pyhost__sig_release(struct pyhost__sig *s);
void pyhost__sig_free(struct pyhost__sig *s);
/* Binds the arguments of the view a to s's parameters in one pass, converted into
 * argv[0 .. s->n), defaults filled in: PYHOST_OK, or PYHOST_PYEXC with a TypeError
 * (or OverflowError) naming the function and the parameter raised in the callback's
 * frame. */
int pyhost__sig_bind(const struct pyhost__sig *s, struct pyhost_args *a, pyhost_arg *argv);
/* An exact str's read failing (a lone surrogate, no memory): clears the error that
 * the full binder raises again; 0. */
PYHOST__COLD int pyhost__quick_read_str_failed(void);
/* Argument o of parameter j read without a call to classify it: an exact int into an
 * int parameter, an exact float into a float one (by the scalar reader's steps,
 * internal.h), an exact str into a str one (3.10+: its UTF-8 view, read inline, the
 * length written straight into out).  1 when done; 0 leaves everything else
 * (subclasses, an int for a float, None, bytes, an int out of range, a str that has no
 * UTF-8) to the other readers, with nothing raised.  Runs no Python code. */
static inline int pyhost__quick_read(const struct pyhost__sig *s, size_t j, PyObject *o,
                                     pyhost_arg *out) {
  PyTypeObject *t = Py_TYPE(o);
  if (PYHOST__UNLIKELY(t != s->quick_type[j])) return 0;
  if (t == PY.PyLong_Type) {
    if (PYHOST__UNLIKELY(pyhost__scalar_int(o, &out->u.i) != PYHOST_OK)) return 0;
    out->kind = PYHOST_ARG_INT; /* (len is not read for an int) */
  } else if (t == PY.PyFloat_Type) {
    out->kind = PYHOST_ARG_FLOAT;
    out->u.d = pyhost__scalar_float(o);
  } else { /* an exact str (3.10+): its UTF-8 read in place, the length into out */
    const char *u = PY.PyUnicode_AsUTF8AndSize(o, (Py_ssize_t *)(void *)&out->len);
    if (PYHOST__UNLIKELY(!u)) return pyhost__quick_read_str_failed();
    out->kind = PYHOST_ARG_STR;
    out->u.s = u;
  }
  return 1;
}

/* The common call of a typed callable: every argument given by position, none by
 * keyword, each read by pyhost__quick_read, from items or else from the tuple's items
 * after its first skip.  Nothing stays raised, so the arguments can be read before the
 * callback's frame exists and without a view; 0 leaves the call, and every error, to
 * the binding inside the frame. */
static inline int pyhost__typed_bind_exact(const struct pyhost__sig *s, PyObject *const *items,
                                           PyObject *tuple, size_t skip, size_t nargs,
                                           pyhost_arg *argv) {
  if (nargs != s->n_all_positional) return 0; /* a keyword-only one is never positional */
  for (size_t i = 0; i < nargs; i++)
    if (!pyhost__quick_read(s, i, items ? items[i] : PY.PyTuple_GetItem(tuple, (Py_ssize_t)(i + skip)),
                            &argv[i]))
      return 0;
  return 1;
}

/* The arguments of a vector-form call (3.10+) bound to s's parameters straight from
 * the vector, without a view (typedargs.c): every argument of its parameter's exact
 * type (int, float, bool, str with its UTF-8 borrowed, bytes; None where the default
 * is None), each keyword matched by identity with a parameter's interned name (Python
 * code's keyword names are interned; s keeps the last call's match), the defaults
 * filled in.  The positional arguments before `from` are bound already.  1 when bound;
 * 0 leaves the whole call to pyhost__sig_bind over a view, with nothing raised: an
 * error to word (too many or missing arguments, a name given twice, unknown or
 * positional-only), a keyword named by a string that is not the interned one, a
 * conversion beyond the exact types.  Runs no Python code. */
int pyhost__typed_bind_vector_from(struct pyhost__sig *s, PyObject *const *args, size_t nargs,
                                   PyObject *kwnames, pyhost_arg *argv, size_t from);
/* The positional arguments args[0 .. nargs) read by pyhost__quick_read into argv: 1
 * when every one was, else 0 (nothing raised).  Up to 8 in straight-line code, the last
 * first (a read runs no Python code, so the order is free): no counter, no pointer to
 * step, no register for either across the reads. */
static PYHOST__HOT_INLINE int pyhost__quick_read_vector(const struct pyhost__sig *s,
                                                        PyObject *const *args, size_t nargs,
                                                        pyhost_arg *argv) {
#define PYHOST__READ(k)                                          \
  if (!pyhost__quick_read(s, k, args[k], &argv[k])) return 0; \
  PYHOST__FALLTHROUGH;
  switch (nargs) {
  case 8: PYHOST__READ(7)
  case 7: PYHOST__READ(6)
  case 6: PYHOST__READ(5)
  case 5: PYHOST__READ(4)
  case 4: PYHOST__READ(3)
  case 3: PYHOST__READ(2)
  case 2: PYHOST__READ(1)
  case 1: PYHOST__READ(0)
  case 0: return 1;
  default:
    for (size_t i = 0; i < nargs; i++)
      if (!pyhost__quick_read(s, i, args[i], &argv[i])) return 0;
    return 1;
  }
#undef PYHOST__READ
}
/* pyhost__typed_bind_vector_from from the start, inline for the positional arguments
 * (ints and floats read here: each a call into the runtime and a store); keywords and
 * defaults out of line. */
static PYHOST__HOT_INLINE int pyhost__typed_bind_vector(struct pyhost__sig *s,
                                                        PyObject *const *args, size_t nargs,
                                                        PyObject *kwnames, pyhost_arg *argv) {
  /* more arguments than parameters stop at quick_type[n]; _from refuses them */
  if (PYHOST__UNLIKELY(!pyhost__quick_read_vector(s, args, nargs, argv)))
    return pyhost__typed_bind_vector_from(s, args, nargs, kwnames, argv, 0);
  if (PYHOST__UNLIKELY(kwnames != NULL || nargs != s->n_all_positional))
    return pyhost__typed_bind_vector_from(s, args, nargs, kwnames, argv, nargs);
  return 1;
}

/* ---- the one runner of typed callbacks (run.c has its rare ends) ----
 * Typed functions (both doors), typed methods, typed constructors and a fast
 * constructor called as `T()` run their callback through pyhost__run_typed, which does
 * the steps every runner does, in one order: push the frame, enter the recursion guard
 * (when the door is guarded), bind the arguments when the door has not, look at the
 * record again when that may have run Python code, call, check that the frames paired,
 * pop, leave the guard, finish (the exception kept, or the result made). */

/* One call of a typed callback on the stack: its frame, its result and the bound
 * arguments, all addressed from the stack pointer. */
struct pyhost__typed_call {
  struct pyhost__frame frame;
  struct pyhost_ret ret;
  pyhost_arg argv[PYHOST__SIG_MAX];
};
/* A door's callback as the runner calls it: ctx is the door's own (the record, the
 * instance, the payload), argv the bound arguments, ret the call's result.  Inline at
 * each door, so that the door calls the host's callback itself. */
typedef int (*pyhost__typed_fn)(void *ctx, const pyhost_arg *argv, pyhost_ret *ret);
/* A typed call's result, before its callback runs: None, pending. */
static inline void pyhost__ret_begin(struct pyhost_ret *r) { r->pending.kind = PYHOST_ARG_NONE; }
/* pyhost__none_new out of line (fastargs.c): for a path that has not split on the
 * runtime's way of counting, which then asks only when the result is None. */
PyObject *pyhost__none_new_out_of_line(void);
#define PYHOST__NONE_ASK (-1) /* none_counted of pyhost__ret_result: not known here */
/* A typed call's result once its callback succeeded, as a new reference (the pending
 * one made with the runtime's own way of counting None, none_counted: 1, 0 or
 * PYHOST__NONE_ASK): NULL with the exception set when making it fails. */
static PYHOST__HOT_INLINE PyObject *pyhost__ret_result(const struct pyhost_ret *r,
                                                       int none_counted) {
  if (r->pending.kind == PYHOST_ARG_FLOAT) return PY.PyFloat_FromDouble(r->pending.u.d);
  if (r->pending.kind == PYHOST_ARG_INT) return PY.PyLong_FromLongLong((long long)r->pending.u.i);
  if (r->pending.kind == PYHOST__RET_MADE) return r->obj;
  if (none_counted == PYHOST__NONE_ASK) return pyhost__none_new_out_of_line();
  PyObject *none = PY._Py_NoneStruct;
  if (none_counted) PYHOST__REFCNT(none)++;
  return none;
}
/* The rare ends of pyhost__run_typed (run.c), with the call's frame still the
 * innermost (so the hot path keeps no pointer to it across the callback).  _end: the
 * callback failed, kept an exception or the view kept temporaries: pops back to outer,
 * leaves the guard when guarded, drops the view's temporaries, finishes the frame
 * (callee names the callable) and makes the result into *out (out NULL: none).
 * _refused: the recursion guard refused the call (guarded 0 then), or the record was
 * not live after the binding: pops, leaves the guard when guarded, drops, with the
 * exception set.  Both answer as pyhost__run_typed does. */
int pyhost__run_typed_end(int rc, struct pyhost__frame *outer, const struct pyhost__callee *callee,
                          struct pyhost_args *view, int guarded, PyObject **out);
int pyhost__run_typed_refused(struct pyhost__frame *outer, struct pyhost_args *view, int guarded);
/* Runs a typed callback (fn with ctx) in the frame c->frame: over c->argv bound by the
 * door's quick binding when view is NULL (it runs no Python code), else over the
 * arguments of view bound to s here, in the frame (the binder raises there).  Making
 * the view and binding run Python code only while they allocate what the view keeps
 * (a collection may start there: the copy of the caller's dict before 3.9, a str's
 * UTF-8 before 3.10), so when the view keeps anything the callback runs only if
 * live(ctx) still says so.  guarded: inside the recursion guard (every door but
 * a typed function's, a builtin call CPython guards).  out: where the result goes, a
 * new reference (None counted as none_counted says: see pyhost__ret_result), or NULL
 * for a callback without one (a constructor's: ret is never read then).  0, or -1 with
 * the Python exception set; the view's temporaries are dropped either way.  Inline:
 * with fn, live, view, guarded, out and none_counted constants at each door, this is
 * the whole per-call cost of a typed callable besides the binding and the callback. */
static PYHOST__HOT_INLINE int pyhost__run_typed(const struct pyhost__callee *callee,
                                                struct pyhost__typed_call *c,
                                                struct pyhost__sig *s, struct pyhost_args *view,
                                                pyhost__typed_fn fn, pyhost__live_fn live,
                                                void *ctx, int guarded, int none_counted,
                                                PyObject **out) {
  if (out) pyhost__ret_begin(&c->ret);
  struct pyhost__frame *outer = pyhost__frame_push(&c->frame);
  if (guarded && pyhost__recursion_enter(outer) < 0) /* refused: no guard to leave */
    return pyhost__run_typed_refused(outer, view, 0);
  int rc = PYHOST_OK;
  if (view) {
    rc = pyhost__sig_bind(s, view, c->argv);
    if (rc == PYHOST_OK && pyhost__args_holds(view) && !live(ctx))
      return pyhost__run_typed_refused(outer, view, guarded);
  }
  if (rc == PYHOST_OK) rc = fn(ctx, c->argv, &c->ret);
  PYHOST__ASSERT(pyhost__thread.frame == &c->frame); /* frames pair */
  if ((rc != PYHOST_OK) | (c->frame.type != NULL) | (view != NULL && pyhost__args_holds(view)))
    return pyhost__run_typed_end(rc, outer, callee, view, guarded, out);
  pyhost__frame_pop(outer);
  if (guarded) pyhost__recursion_leave(outer);
  if (out && !(*out = pyhost__ret_result(&c->ret, none_counted))) return -1;
  return 0;
}

/* ---- calls in one line (callf.c) ---- */
#define PYHOST__CALLF_MAX 16 /* arguments of one call */
/* A format read (see pyhost_prepared_callf): a prepared callable keeps its last one,
 * with its keyword names as the tuple vectorcall takes (3.12+), so a loop of calls
 * with one format reads it and makes the names once. */
struct pyhost__callf_plan {
  char *text;        /* own copy of the format: the key; NULL while nothing is kept */
  PyObject *kwnames; /* strong, interned names, or NULL (no keywords) */
  const char *kwname[PYHOST__CALLF_MAX]; /* into text (or the caller's format) */
  size_t kwlen[PYHOST__CALLF_MAX];
  char letter[PYHOST__CALLF_MAX];
  size_t n, npos; /* arguments; the positional ones come first */
  char rtype;     /* the result's letter, 0 when it is discarded */
};
/* A borrowed result (>s, >y) read by a call but not handed out yet: the caller that
 * holds such results (a prepared callable) writes it into the caller's pointers only
 * once it knows the holder outlives the call (pyhost__callf_commit), so that a failed
 * call writes nothing. */
struct pyhost__callf_borrowed {
  PyObject *holder;   /* what the text lives in: a new reference, or NULL (none read) */
  const char *p;      /* the text, its length, and where they go */
  size_t n;
  void *out;
  size_t *out_len;
};
/* With the GIL: calls fn as the format fmt and the varargs ap say and reads the result
 * (fname names the public function in messages); cache (may be NULL) keeps the plan;
 * borrowed (may be NULL: then >s and >y are refused) receives a borrowed result,
 * unwritten (holder NULL when there is none); raised (may be NULL) is the context put
 * before the exception when fn raises.  A status with h's message set; every other
 * result is written only on PYHOST_OK. */
int pyhost__callf(pyhost *h, PyObject *fn, const char *fname, const char *fmt, va_list *ap,
                  struct pyhost__callf_plan *cache, struct pyhost__callf_borrowed *borrowed,
                  const char *raised);
/* With the GIL: drops what the plan keeps. */
void pyhost__callf_plan_clear(struct pyhost__callf_plan *p);

/* ---- expressions with inputs (exprfn.c) ---- */
/* With the GIL: `lambda <inputs>: (<expr>)` with globals of its own (builtins only), a
 * new reference; NULL with *rc set (PYHOST_MISUSE for NULL or bad inputs, PYHOST_PYEXC
 * with the SyntaxError, PYHOST_NOMEM).  fn names the public function. */
PyObject *pyhost__expression_function(pyhost *h, const char *inputs, const char *expr,
                                      const char *fn, int *rc);

#endif
