/* internal.h: what the bridge's files share (values and conversions, the scalar
 * rules, the eval cache), over everything the layers below offer.  Host callbacks
 * add bridge.h.  Never installed; white-box tests include it too.
 */
#ifndef PYHOST_INTERNAL_H
#define PYHOST_INTERNAL_H

#include "runtime.h" /* first: Python.h must precede system headers */
#include "registries.h" /* the bridge's process state */

/* ---- the compiled-expression cache (eval.c) ---- */
/* Cache hits and misses since the last clear (for white-box tests). */
void pyhost__eval_cache_stats(unsigned long *hits, unsigned long *misses);


/* ---- conversions (convert.c) ---- */
/* new reference, or NULL with a Python exception set */
PyObject *pyhost__to_python(pyhost *h, const pyhost_value *v);
/* own result, or NULL with a Python exception set */
pyhost_value *pyhost__from_python(pyhost *h, PyObject *o);

/* ---- the scalar rules, in one place ----
 * What pyhost reads as a C scalar, wherever it reads one (pyhost_args_* in fastargs.c,
 * results in scalar.c, values in convert.c), as every luaL_check* goes through one
 * rule per type: an int is an int or a subclass but never a bool (bool is int's
 * subclass in Python, a kind of its own in pyhost); a float accepts a float, a
 * subclass, or an int under that rule; a bool is exactly bool (it cannot be
 * subclassed). */
static inline int pyhost__is_bool(PyObject *o) {
  return Py_TYPE(o) == PY.PyBool_Type;
}
static inline int pyhost__is_int(PyObject *o) {
  return !pyhost__is_bool(o) && (PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_LONG_SUBCLASS) != 0;
}
static inline int pyhost__is_float(PyObject *o) {
  return Py_TYPE(o) == PY.PyFloat_Type || PY.PyType_IsSubtype(Py_TYPE(o), PY.PyFloat_Type);
}
static inline int pyhost__accepts_float(PyObject *o) {
  return pyhost__is_float(o) || pyhost__is_int(o);
}

/* ---- C scalars (scalar.c) ---- */
/* Argument index of a call named fn, as a new reference; NULL with a Python exception
 * set, or with PYHOST_MISUSE in h's message (an unknown kind, a NULL pointer) and no
 * exception. */
PyObject *pyhost__arg_to_python(pyhost *h, const pyhost_arg *a, size_t index, const char *fn);
/* The same, with the numbers converted in place: for the per-call loops, where the
 * call and the switch of the general conversion cost as much as the conversion. */
static inline PyObject *pyhost__arg_to_python_inline(pyhost *h, const pyhost_arg *a,
                                                     size_t index, const char *fn) {
  if (a->kind == PYHOST_ARG_INT) return PY.PyLong_FromLongLong(a->u.i);
  if (a->kind == PYHOST_ARG_FLOAT) return PY.PyFloat_FromDouble(a->u.d);
  return pyhost__arg_to_python(h, a, index, fn);
}
/* The result o of a call named fn read as an int, float or bool under pyhost_value's
 * rules: PYHOST_OK, or PYHOST_TYPE / PYHOST_RANGE / PYHOST_PYEXC with h's message set. */
int pyhost__read_int_any(pyhost *h, PyObject *o, const char *fn, int64_t *out);
/* An exact int that fits, the usual result, is read here; the rest (bool, subclasses,
 * overflow, the errors) by pyhost__read_int_any. */
static inline int pyhost__read_int(pyhost *h, PyObject *o, const char *fn, int64_t *out) {
  if (Py_TYPE(o) == PY.PyLong_Type) {
    int overflow = 0;
    long long i = PY.PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow && i != -1) { /* -1 may be an error: the general read tells */
      *out = (int64_t)i;
      return PYHOST_OK;
    }
  }
  return pyhost__read_int_any(h, o, fn, out);
}
int pyhost__read_float(pyhost *h, PyObject *o, const char *fn, double *out);
int pyhost__read_bool(pyhost *h, PyObject *o, const char *fn, int *out);
/* PYHOST_TYPE with h's message "<fn>: the result: expected <expected>, got <type>". */
int pyhost__read_type_error(pyhost *h, PyObject *o, const char *fn, const char *expected);

/* ---- values (value.c) ---- */
struct pyhost_value {
  unsigned char kind;    /* pyhost_kind */
  unsigned char big;     /* an int beyond 64 bits: its digits are in u.s, decimal, or
                          * [-]0x hex when the decimal form exceeds CPython's integer
                          * string conversion limit (convert.c) */
  unsigned char in_slab; /* 1: the struct lives in its parent's slab, never freed alone;
                          * 2: a shared constant (pyhost__value_constant), never freed
                          * and never written */
  union {
    int b;
    int64_t i;
    double d;
    struct { char *p; size_t len; } s;            /* str, bytes, big int */
    struct {
      pyhost_value **items;
      size_t n, cap;
      pyhost_value *slab; /* one block for the items converted from Python, or NULL */
    } seq;                /* list, tuple; dict: 2n */
    PyObject *obj;                                 /* strong reference */
  } u;
  char *type_name;       /* Python type name when it differs from the kind's */
  char *repr;            /* cache for pyhost_value_repr */
};
pyhost_value *pyhost__value_new(pyhost_kind kind);
/* The shared None, False or True (kind NONE or BOOL, b 0/1) that conversions hand out:
 * an "own" result the caller frees as any other, at no cost. */
pyhost_value *pyhost__value_constant(pyhost_kind kind, int b);
/* Adds to a list/tuple/dict's item array without kind checks; 0 or -1 (no memory). */
int pyhost__value_push(pyhost_value *seq, pyhost_value *item);
/* The decimal text of a big int's stored text p[0..n) (decimal, or [-]0x...; see
 * big above; int_text.c): own, NUL-terminated, or NULL when out of memory. */
char *pyhost__int_decimal(const char *p, size_t n, size_t *len);

#endif
