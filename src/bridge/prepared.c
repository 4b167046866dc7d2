/* prepared.c: prepared calls (see pyhost.h, "prepared calls").
 *
 * The callable is resolved and its runtime's best call chosen once, in pyhost_prepare;
 * a call converts its C arguments straight onto the C stack and hands them to
 * PyObject_Vectorcall (3.12+; before, pyhost__call_objargs: no tuple either), so the
 * per-call work is Python's own.  A callable that
 * is running is never freed under its call: pyhost_callable_free from inside (a host
 * function the call reached) only marks it, and the call frees it on the way out.
 * A keyword plan (pyhost_prepare_keywords) is a callable whose last arguments go by
 * keyword: its names made once, so that a call passes only values.
 */
#include "callf.h"

#include <limits.h>
#include <string.h>

#define STACK_MAX PYHOST__CALL_STACK_MAX /* arguments converted onto the C stack; more go
                                           * through a tuple */

#define DOOMED INT_MIN /* the sign bit: a call's way out tests it with the decrement */

struct pyhost_callable {
  uint32_t tag;     /* PYHOST__TAG_CALLABLE (core.h) */
  pyhost *h;
  /* the sub-interpreter it was prepared in (pyhost__thread.sub then; NULL: the main
   * one): its object lives there and is called only there */
  const struct pyhost__sub *sub;
  PyObject *fn;     /* strong */
  PyObject *(*call0)(PyObject *fn); /* the runtime's cheapest call without arguments */
  /* calls of it on the C stack (GIL held), plus DOOMED once freed while running: the
   * last call out then frees it.  One word, so a call's way out tests it once. */
  int busy;
  /* pyhost_prepared_callf's last format; a keyword plan's layout (text NULL, never
   * replaced: pyhost_prepared_callf refuses a keyword plan) */
  struct pyhost__callf_plan plan;
  PyObject *kept; /* its last borrowed result (>s, >y, _str), held until the next one */
  /* a keyword plan's names (plan.kwnames) and their count: NULL and 0 for a plain
   * callable, so that the vector call passes them without a test */
  PyObject *kwnames;
  size_t nkw;
};

static PyObject *call0_tuple(PyObject *f) { return PY.PyObject_CallObject(f, NULL); }

static void destroy(pyhost_callable *c) {
  pyhost__callf_plan_clear(&c->plan);
  if (c->kept) PY.Py_DecRef(c->kept);
  PY.Py_DecRef(c->fn);
  pyhost__handle_retire(c);
}

/* ---- preparing ---- */

enum source { BY_VALUE, BY_NAME, BY_EXPRESSION }; /* what a callable is prepared from */

/* The object to prepare (new reference), or NULL with rc set. */
static PyObject *source_object(pyhost *h, enum source from, const pyhost_value *callable,
                               const char *text, const char *inputs, const char *fn, int *rc) {
  PyObject *f = NULL;
  if (from == BY_EXPRESSION) return pyhost__expression_function(h, inputs, text, fn, rc);
  if (from == BY_NAME ? !text : !callable) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn,
                            from == BY_NAME ? "dotted" : "callable");
    return NULL;
  }
  f = from == BY_NAME ? pyhost__resolve(h, text) : pyhost__to_python(h, callable);
  if (!f) *rc = pyhost__take_exception(h, NULL);
  return f;
}

static int prepare(pyhost *h, enum source from, const pyhost_value *callable, const char *text,
                   const char *inputs, const char *fn, pyhost_callable **out) {
  PyGILState_STATE gil;
  if (out) *out = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: out is NULL", fn);
  } else {
    pyhost_callable *c = pyhost__calloc(1, sizeof *c);
    PyObject *f = c ? source_object(h, from, callable, text, inputs, fn, &rc) : NULL;
    if (!c) {
      rc = pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
    } else if (!f) {
      pyhost__free(c);
    } else {
      c->tag = PYHOST__TAG_CALLABLE;
      c->h = h;
      c->sub = pyhost__thread.sub;
      c->fn = f;
      /* 3.10+: the table's PyObject_CallNoArgs itself (on 3.12+ it is the same
       * vectorcall as PyObject_Vectorcall with no arguments) */
      c->call0 = pyhost__runtime_at_least(3, 10) ? PY.PyObject_CallNoArgs : call0_tuple;
      *out = c;
    }
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_prepare(pyhost *h, const pyhost_value *callable, pyhost_callable **out) {
  return prepare(h, BY_VALUE, callable, NULL, NULL, "pyhost_prepare", out);
}

int pyhost_prepare_name(pyhost *h, const char *dotted, pyhost_callable **out) {
  return prepare(h, BY_NAME, NULL, dotted, NULL, "pyhost_prepare_name", out);
}

int pyhost_prepare_expression(pyhost *h, const char *inputs, const char *expr,
                              pyhost_callable **out) {
  return prepare(h, BY_EXPRESSION, NULL, expr, inputs, "pyhost_prepare_expression", out);
}

void pyhost_callable_free(pyhost_callable *c) {
  /* NULL, or freed already (a second free): nothing to do */
  if (!pyhost__tagged(c, PYHOST__TAG_CALLABLE)) return;
  PyGILState_STATE g;
  /* Once finalize has begun the object dies with the interpreter: free only our memory,
   * after the calls of c still running have returned (free_begin waits for them). */
  if (!pyhost__inflight_free_begin(&g)) {
    pyhost__handle_retire(c);
    return;
  }
  if (c->busy) {
    c->busy |= DOOMED;
    c->tag = PYHOST__TAG_FREED; /* no new call, no second free; the last call out frees */
  }
  else destroy(c);
  pyhost__inflight_free_end(g);
}

/* ---- calling ---- */

static PYHOST__NOINLINE PyObject *call_tuple(pyhost *h, PyObject *f, const pyhost_arg *argv, size_t n,
                            const char *fn) {
  PyObject *args = PY.PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; args && i < n; i++) {
    PyObject *x = pyhost__arg_to_python(h, &argv[i], i, fn);
    if (!x || PY.PyTuple_SetItem(args, (Py_ssize_t)i, x) < 0) { /* steals x */
      PY.Py_DecRef(args);
      return NULL;
    }
  }
  PyObject *r = args ? PY.PyObject_Call(f, args, NULL) : NULL;
  PY.Py_DecRef(args);
  return r;
}

/* Before 3.12 (no PyObject_Vectorcall; the runtime counts inline), 1 <= n <= STACK_MAX:
 * argv converted straight into PyObject_CallFunctionObjArgs's arguments (its list ends
 * at the first NULL: every argument is an object here, and no tuple is made), one
 * straight-line case per count, then dropped.  No array and no loop: each argument
 * lives in a register of its own.  A new reference, or NULL with the exception set (or
 * MISUSE in h's message) when an argument or the call fails. */
static PYHOST__HOT_INLINE PyObject *call_objargs_argv(pyhost *h, PyObject *f,
                                                      const pyhost_arg *argv, size_t n,
                                                      const char *fn) {
  PyObject *a[STACK_MAX], *r = NULL;
#define MAKE(k) if (!(a[k] = pyhost__arg_to_python_inline(h, &argv[k], k, fn))) goto undo##k;
#define MAKE_1 MAKE(0)
#define MAKE_2 MAKE_1 MAKE(1)
#define MAKE_3 MAKE_2 MAKE(2)
#define MAKE_4 MAKE_3 MAKE(3)
#define MAKE_5 MAKE_4 MAKE(4)
#define MAKE_6 MAKE_5 MAKE(5)
#define MAKE_7 MAKE_6 MAKE(6)
#define MAKE_8 MAKE_7 MAKE(7)
#define CALL(k, ...)                                                \
  case k:                                                           \
    MAKE_##k r = PY.PyObject_CallFunctionObjArgs(f, __VA_ARGS__, NULL); \
    break;
  switch (n) {
    CALL(1, a[0])
    CALL(2, a[0], a[1])
    CALL(3, a[0], a[1], a[2])
    CALL(4, a[0], a[1], a[2], a[3])
    CALL(5, a[0], a[1], a[2], a[3], a[4])
    CALL(6, a[0], a[1], a[2], a[3], a[4], a[5])
    CALL(7, a[0], a[1], a[2], a[3], a[4], a[5], a[6])
    CALL(8, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
  default: PYHOST__UNREACHABLE();
  }
#undef CALL
#undef MAKE_8
#undef MAKE_7
#undef MAKE_6
#undef MAKE_5
#undef MAKE_4
#undef MAKE_3
#undef MAKE_2
#undef MAKE_1
#undef MAKE
  /* the arguments dropped, the last first; a failed one's way out drops those before */
  switch (n) {
  case 8: pyhost__drop_as(a[7], 1); /* fall through */
  undo7: case 7: pyhost__drop_as(a[6], 1); /* fall through */
  undo6: case 6: pyhost__drop_as(a[5], 1); /* fall through */
  undo5: case 5: pyhost__drop_as(a[4], 1); /* fall through */
  undo4: case 4: pyhost__drop_as(a[3], 1); /* fall through */
  undo3: case 3: pyhost__drop_as(a[2], 1); /* fall through */
  undo2: case 2: pyhost__drop_as(a[1], 1); /* fall through */
  undo1: case 1: pyhost__drop_as(a[0], 1); /* fall through */
  default: break;
  }
undo0:
  return r;
}

/* pre312 is 1 before 3.12 (pyhost__inline_refcounts(): counts inline, no
 * PyObject_Vectorcall): a constant in the typed calls' hot bodies, which split on it
 * once instead of testing the runtime at each step. */
/* Before 3.12, a keyword plan's call: the stable ABI's only call with keywords takes
 * a tuple and a dict, made here per call; each positional argument goes straight into
 * the tuple (which takes its reference), each keyword under the plan's interned name. */
static PYHOST__NOINLINE PyObject *call_keywords_tuple(pyhost *h, const pyhost_callable *c,
                                                      const pyhost_arg *argv, size_t n,
                                                      const char *fn) {
  size_t npos = c->plan.npos, i = 0;
  PyObject *args = PY.PyTuple_New((Py_ssize_t)npos), *kw = args ? PY.PyDict_New() : NULL;
  PyObject *r = NULL;
  for (; kw && i < n; i++) {
    PyObject *x = pyhost__arg_to_python_inline(h, &argv[i], i, fn);
    if (!x) break;
    if (i < npos) {
      PY.PyTuple_SetItem(args, (Py_ssize_t)i, x); /* steals x; cannot fail here */
      continue;
    }
    int bad = PY.PyDict_SetItem(kw, PY.PyTuple_GetItem(c->kwnames, (Py_ssize_t)(i - npos)), x);
    pyhost__drop_as(x, 1);
    if (bad < 0) break;
  }
  if (i == n) r = PY.PyObject_Call(c->fn, args, kw);
  if (kw) pyhost__drop_as(kw, 1);
  if (args) pyhost__drop_as(args, 1);
  return r;
}

static PYHOST__HOT_INLINE PyObject *call_vector(pyhost *h, const pyhost_callable *c,
                                                const pyhost_arg *argv, size_t n, const char *fn,
                                                int pre312) {
  if (pre312) {
    if (PYHOST__UNLIKELY(c->kwnames != NULL)) return call_keywords_tuple(h, c, argv, n, fn);
    return call_objargs_argv(h, c->fn, argv, n, fn);
  }
  PyObject *stack[STACK_MAX + 1];
  size_t done = 0;
  for (; done < n; done++) { /* straight into the stack: no register held for it */
    if (!(stack[done + 1] = pyhost__arg_to_python_inline(h, &argv[done], done, fn))) break;
  }
  PyObject *r = NULL;
  /* a plain callable's nkw is 0 and its kwnames NULL: no test for them */
  if (done == n)
    r = PY.PyObject_Vectorcall(c->fn, stack + 1, (n - c->nkw) | PYHOST__ARGS_OFFSET, c->kwnames);
  pyhost__callf_drop_args(stack + 1, done, 0);
  return r;
}

#define CALLF_ARGS SIZE_MAX /* refuse's n for pyhost_prepared_callf: a format, no count */

/* Why invoke refuses c, argv, n: the status with h's message set. */
static PYHOST__COLD int refuse(pyhost *h, const pyhost_callable *c, size_t n, const char *fn) {
  if (!pyhost__tagged(c, PYHOST__TAG_CALLABLE)) return pyhost__tag_refused(h, c, fn, "callable");
  if (c->h != h)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: the callable belongs to another pyhost", fn);
  if (c->sub != pyhost__thread.sub)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "%s: the callable was prepared in %s and is called from %s; "
                             "call it where it was prepared",
                             fn, c->sub ? "a plugin's sub-interpreter" : "the main interpreter",
                             pyhost__thread.sub ? "a plugin's sub-interpreter" : "the main one");
  if (c->kwnames && n == CALLF_ARGS)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: a keyword plan (pyhost_prepare_keywords) "
                             "fixes its own layout: call it with a pyhost_prepared_call* form", fn);
  if (c->kwnames && n != c->plan.n)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: the keyword plan takes %zu arguments (%zu "
                             "positional, %zu by keyword), %zu given", fn, c->plan.n,
                             c->plan.npos, c->nkw, n);
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: argv is NULL", fn);
}

/* A call with arguments: onto the stack, or past STACK_MAX into a tuple. */
static inline PyObject *call_with(pyhost *h, const pyhost_callable *c, const pyhost_arg *argv, size_t n,
                           const char *fn, int pre312) {
  if (n <= STACK_MAX) return call_vector(h, c, argv, n, fn, pre312);
  return call_tuple(h, c->fn, argv, n, fn);
}

static PYHOST__COLD int failed(pyhost *h) {
  /* a bad argument left MISUSE in the message and no exception */
  return PY.PyErr_Occurred() ? pyhost__take_exception(h, NULL) : PYHOST_MISUSE;
}

/* A call without arguments of c: a new reference, or NULL with the exception set. */
static PYHOST__HOT_INLINE PyObject *call0(pyhost_callable *c) {
  PYHOST__ASSERT_GIL(); /* busy is the GIL's */
  c->busy++;
  PyObject *r = c->call0(c->fn);
  PYHOST__ASSERT(c->busy > 0 || (c->busy & DOOMED)); /* negative only once freed */
  if (--c->busy == DOOMED) destroy(c);
  return r;
}

/* 1 when c is a live callable made in the interpreter this thread runs in.  Where h is
 * known to run (pyhost__entry_is_free, the hot paths) c is h's too: only one pyhost
 * ever runs in a process, and c was made while it ran. */
static PYHOST__HOT_INLINE int callable_here(const pyhost_callable *c) {
  return pyhost__tagged(c, PYHOST__TAG_CALLABLE) && c->sub == pyhost__thread.sub;
}

/* 1 when n arguments fit c: any count for a plain callable, its own for a keyword plan. */
static PYHOST__HOT_INLINE int count_fits(const pyhost_callable *c, size_t n) {
  return !c->kwnames || n == c->plan.n;
}

/* 1 when invoke takes c, argv, n (else refuse says why). */
static inline int callable_usable(const pyhost *h, const pyhost_callable *c,
                                  const pyhost_arg *argv, size_t n) {
  return callable_here(c) && c->h == h && (!n || argv) && count_fits(c, n);
}

/* A call of c (usable): a new reference, or NULL with the exception set (or MISUSE in
 * h's message).  A call without arguments is one branch and one call. */
static PYHOST__HOT_INLINE PyObject *run(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                        size_t n, const char *fn, int pre312) {
  if (!n) return call0(c);
  PYHOST__ASSERT_GIL();
  c->busy++;
  PyObject *r = call_with(h, c, argv, n, fn, pre312);
  if (--c->busy == DOOMED) destroy(c);
  return r;
}

/* The call: PYHOST_OK with *r a new reference, or the status with h's message set. */
static PYHOST__HOT_INLINE int invoke(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t n,
                         const char *fn, PyObject **r) {
  if (!callable_usable(h, c, argv, n)) return refuse(h, c, n, fn);
  *r = run(h, c, argv, n, fn, pyhost__inline_refcounts());
  return *r ? PYHOST_OK : failed(h);
}

static PYHOST__NOINLINE int call_any(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                                 size_t nargs) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyObject *r;
  if (!(rc = invoke(h, c, argv, nargs, "pyhost_prepared_call", &r))) pyhost__drop(r);
  pyhost__leave(h, gil);
  return rc;
}

/* The end of a call of a callable freed while it ran: the last call out frees it, then
 * answers as the call would. */
static PYHOST__COLD int end_doomed(pyhost_callable *c, PyObject *r) {
  pyhost *h = c->h;
  if (c->busy == DOOMED) destroy(c);
  if (!r) return failed(h);
  pyhost__drop(r);
  return PYHOST_OK;
}

/* The hot loop's call: c is all that lives across the call into Python. */
static PYHOST__HOT_INLINE int call0_discard(pyhost_callable *c) {
  PYHOST__ASSERT_GIL();
  c->busy++;
  PyObject *r = c->call0(c->fn);
  if (pyhost__thread.interrupted) pyhost__inflight_scoped_end(); /* see pyhost__leave */
  if (--c->busy < 0) return end_doomed(c, r);
  if (!r) return failed(c->h);
  pyhost__drop(r);
  return PYHOST_OK;
}

/* A call without arguments outside a scope: the GIL taken for it, then the hot
 * loop's call, then the GIL given back. */
static PYHOST__NOINLINE int call0_entered(pyhost *h, pyhost_callable *c) {
  PyGILState_STATE gil;
  int rc = pyhost__enter_slow(h, &gil); /* (the free entry was asked already) */
  if (rc) return rc;
  PYHOST__ASSERT_GIL();
  c->busy++;
  PyObject *r = c->call0(c->fn);
  if (PYHOST__UNLIKELY(--c->busy < 0)) rc = end_doomed(c, r);
  else if (!r) rc = failed(h);
  else pyhost__drop(r);
  pyhost__leave(h, gil);
  return rc;
}

/* The hot loop's case (no arguments, inside a scope, no message to reset) costs its
 * checks and a jump; without a scope, the GIL's price and the call's; everything else
 * goes the general way. */
int pyhost_prepared_call(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t nargs) {
  if (nargs || !callable_here(c) || c->kwnames) return call_any(h, c, argv, nargs);
  if (!pyhost__entry_is_free(h)) return call0_entered(h, c);
  return call0_discard(c);
}

/* The typed forms: one body, the reader and the output differ.  The hot case (inside a
 * scope, no message to reset, good arguments) costs entry_is_free's checks and a jump
 * to NAME_hot, made once for each answer of pyhost__inline_refcounts() (NAME_counted
 * before 3.12, NAME_vector from 3.12): each a function of its own, so that neither
 * pays for the other's registers; every other case goes through the general body,
 * NAME_any, out of line. */
#define TYPED_CALL(NAME, FN, CTYPE, READ)                                               \
  int NAME(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t nargs,         \
           CTYPE *out); /* a leading static makes both static */                        \
  static PYHOST__NOINLINE int NAME##_any(pyhost *h, pyhost_callable *c,                 \
                                         const pyhost_arg *argv, size_t nargs,          \
                                         CTYPE *out) {                                  \
    PyGILState_STATE gil;                                                               \
    int rc = pyhost__enter(h, &gil);                                                    \
    if (rc) return rc;                                                                  \
    PyObject *r;                                                                        \
    if (!out) rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: out is NULL", FN);          \
    else if (!(rc = invoke(h, c, argv, nargs, FN, &r))) {                               \
      rc = READ(h, r, FN, out);                                                         \
      pyhost__drop(r);                                                                  \
    }                                                                                   \
    pyhost__leave(h, gil);                                                              \
    return rc;                                                                          \
  }                                                                                     \
  static PYHOST__HOT_INLINE int NAME##_hot(pyhost *h, pyhost_callable *c,              \
                                            const pyhost_arg *argv, size_t nargs,       \
                                            CTYPE *out, int pre312) {                   \
    PyObject *r = run(h, c, argv, nargs, FN, pre312);                                   \
    int rc = r ? READ(h, r, FN, out) : failed(h);                                       \
    if (r) pyhost__drop_as(r, pre312);                                                  \
    pyhost__leave(h, PYHOST__GIL_SCOPED);                                               \
    return rc;                                                                          \
  }                                                                                     \
  static PYHOST__NOINLINE int NAME##_counted(pyhost *h, pyhost_callable *c,             \
                                             const pyhost_arg *argv, size_t nargs,      \
                                             CTYPE *out) {                              \
    return NAME##_hot(h, c, argv, nargs, out, 1);                                       \
  }                                                                                     \
  static PYHOST__NOINLINE int NAME##_vector(pyhost *h, pyhost_callable *c,              \
                                            const pyhost_arg *argv, size_t nargs,       \
                                            CTYPE *out) {                               \
    return NAME##_hot(h, c, argv, nargs, out, 0);                                       \
  }                                                                                     \
  int NAME(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t nargs,         \
           CTYPE *out) {                                                                \
    if (!pyhost__entry_is_free(h) || !out || !callable_here(c) || (nargs && !argv) ||   \
        !count_fits(c, nargs))                                                          \
      return NAME##_any(h, c, argv, nargs, out);                                        \
    return pyhost__inline_refcounts() ? NAME##_counted(h, c, argv, nargs, out)          \
                                      : NAME##_vector(h, c, argv, nargs, out);          \
  }

TYPED_CALL(pyhost_prepared_call_int, "pyhost_prepared_call_int", int64_t, pyhost__read_int)
TYPED_CALL(pyhost_prepared_call_float, "pyhost_prepared_call_float", double, pyhost__read_float)
TYPED_CALL(pyhost_prepared_call_bool, "pyhost_prepared_call_bool", int, pyhost__read_bool)

static int read_value(pyhost *h, PyObject *o, const char *fn, pyhost_value **out) {
  (void)fn;
  *out = pyhost__from_python(h, o);
  return *out ? PYHOST_OK : pyhost__take_exception(h, "converting the result failed");
}

static TYPED_CALL(value_call, "pyhost_prepared_call_value", pyhost_value *, read_value)

int pyhost_prepared_call_value(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                               size_t nargs, pyhost_value **result) {
  if (result) *result = NULL;
  return value_call(h, c, argv, nargs, result);
}

/* pyhost_prepared_callf's call, made once for each answer of pyhost__inline_refcounts()
 * (pre312: see pyhost__callf_inline). */
static PYHOST__HOT_INLINE int callf_as(pyhost *h, pyhost_callable *c, const char *fmt, va_list *ap,
                                       struct pyhost__callf_borrowed *b, int pre312) {
  return pyhost__callf_inline(h, c->fn, "pyhost_prepared_callf", fmt, ap, &c->plan, b, NULL,
                              pre312);
}

/* The end of a call of a callable freed during it: the last call out frees it; a
 * borrowed result it read would go with it, so that call fails, writing nothing. */
static PYHOST__COLD int callf_doomed(pyhost *h, pyhost_callable *c, int rc,
                                     struct pyhost__callf_borrowed *b, const char *fn) {
  if (c->busy == DOOMED) destroy(c);
  if (!b->holder) return rc;
  pyhost__drop(b->holder);
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: the callable was freed during its own call, "
                           "and its borrowed result with it", fn);
}

int pyhost_prepared_callf(pyhost *h, pyhost_callable *c, const char *fmt, ...) {
  PyGILState_STATE gil = PYHOST__GIL_SCOPED; /* inside a scope with nothing to reset: free */
  int rc = PYHOST_OK;
  if (!pyhost__entry_is_free(h) && (rc = pyhost__enter(h, &gil))) return rc;
  if (!callable_here(c) || c->kwnames) { /* h runs (entered): c is h's if live */
    rc = refuse(h, c, CALLF_ARGS, "pyhost_prepared_callf");
  } else {
    va_list ap;
    struct pyhost__callf_borrowed b;
    b.holder = NULL;
    va_start(ap, fmt);
    PYHOST__ASSERT_GIL();
    c->busy++;
    rc = pyhost__inline_refcounts() ? callf_as(h, c, fmt, &ap, &b, 1)
                                    : callf_as(h, c, fmt, &ap, &b, 0);
    if (PYHOST__UNLIKELY(--c->busy < 0)) rc = callf_doomed(h, c, rc, &b, "pyhost_prepared_callf");
    else if (PYHOST__UNLIKELY(b.holder != NULL)) pyhost__callf_commit(&b, &c->kept);
    va_end(ap);
  }
  pyhost__leave(h, gil);
  return rc;
}

/* ---- a str or bytes result read in place ---- */

/* The call of pyhost_prepared_call_str (letter 's') and _bytes ('y'): out is the
 * const char ** or const void ** of the result. */
static int call_borrowed(pyhost *h, pyhost_callable *c, const pyhost_arg *argv, size_t nargs,
                         void *out, size_t *len, char letter, const char *fn) {
  PyGILState_STATE gil = PYHOST__GIL_SCOPED; /* inside a scope with nothing to reset: free */
  int rc = PYHOST_OK;
  if (!pyhost__entry_is_free(h) && (rc = pyhost__enter(h, &gil))) return rc;
  if (!out || !len) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, out ? "len" : "out");
  } else if (!callable_usable(h, c, argv, nargs)) {
    rc = refuse(h, c, nargs, fn);
  } else {
    /* read into b first: written out only once c is known to outlive the call */
    struct pyhost__callf_borrowed b;
    b.holder = NULL;
    b.out = out;
    b.out_len = len;
    PYHOST__ASSERT_GIL();
    c->busy++;
    PyObject *r = nargs ? call_with(h, c, argv, nargs, fn, pyhost__inline_refcounts())
                        : c->call0(c->fn);
    rc = r ? pyhost__callf_read_borrowed(h, r, letter, &b.p, &b.n, &b.holder, fn) : failed(h);
    if (PYHOST__UNLIKELY(--c->busy < 0)) rc = callf_doomed(h, c, rc, &b, fn);
    else if (b.holder) pyhost__callf_commit(&b, &c->kept);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_prepared_call_str(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                             size_t nargs, const char **out, size_t *len) {
  return call_borrowed(h, c, argv, nargs, (void *)out, len, 's', "pyhost_prepared_call_str");
}

int pyhost_prepared_call_bytes(pyhost *h, pyhost_callable *c, const pyhost_arg *argv,
                               size_t nargs, const void **out, size_t *len) {
  return call_borrowed(h, c, argv, nargs, (void *)out, len, 'y', "pyhost_prepared_call_bytes");
}

void pyhost_prepared_release_result(pyhost_callable *c) {
  if (!pyhost__tagged(c, PYHOST__TAG_CALLABLE)) return;
  PyGILState_STATE g;
  if (!pyhost__inflight_free_begin(&g)) return; /* finalize began: it dies with Python */
  PyObject *old = c->kept;
  c->kept = NULL; /* before the drop: a __del__ it runs may call c again */
  if (old) PY.Py_DecRef(old);
  pyhost__inflight_free_end(g);
}

/* ---- keyword plans ---- */

/* c's object called with npos positional arguments and the keywords names: a new
 * callable k, or NULL with h's message set in *rc. */
static pyhost_callable *keyword_plan(pyhost *h, const pyhost_callable *c, size_t npos,
                                     const char *const *names, size_t nkw, const char *fn,
                                     int *rc) {
  struct pyhost__callf_plan p;
  memset(&p, 0, sizeof p);
  for (size_t i = 0; i < nkw; i++) {
    if (!names[i] || !names[i][0]) {
      *rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: keyword name %zu is %s", fn, i,
                              names[i] ? "empty" : "NULL");
      return NULL;
    }
    p.kwname[npos + i] = names[i];
    p.kwlen[npos + i] = strlen(names[i]);
  }
  p.npos = npos;
  p.n = npos + nkw;
  pyhost_callable *k = pyhost__calloc(1, sizeof *k);
  if (!k) {
    *rc = pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
    return NULL;
  }
  if (!(p.kwnames = pyhost__callf_kwnames(&p))) { /* a name that is not UTF-8, or memory */
    pyhost__free(k);
    *rc = pyhost__take_exception(h, NULL);
    return NULL;
  }
  memset(p.kwname, 0, sizeof p.kwname); /* the caller's: kept by nothing */
  k->tag = PYHOST__TAG_CALLABLE;
  k->h = h;
  k->sub = c->sub;
  PY.Py_IncRef(c->fn);
  k->fn = c->fn;
  k->call0 = c->call0;
  k->plan = p;
  k->kwnames = p.kwnames;
  k->nkw = nkw;
  return k;
}

int pyhost_prepare_keywords(pyhost *h, const pyhost_callable *c, size_t npos,
                            const char *const *names, size_t nkw, pyhost_callable **out) {
  static const char fn[] = "pyhost_prepare_keywords";
  PyGILState_STATE gil;
  if (out) *out = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: out is NULL", fn);
  } else if (!callable_here(c) || c->h != h) {
    rc = refuse(h, c, 0, fn);
  } else if (c->kwnames) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: c is a keyword plan already; prepare the "
                           "plan from the plain callable", fn);
  } else if (!nkw || npos > STACK_MAX || nkw > STACK_MAX - npos) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %zu positional and %zu keyword arguments; a "
                           "keyword plan takes 1 to %d keywords and %d arguments in all", fn,
                           npos, nkw, STACK_MAX, STACK_MAX);
  } else if (!names) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: names is NULL", fn);
  } else {
    *out = keyword_plan(h, c, npos, names, nkw, fn, &rc);
  }
  pyhost__leave(h, gil);
  return rc;
}
