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
/* Empties is's cache (with the GIL, in its interpreter). */
void pyhost__eval_cache_clear(struct pyhost__istate *is);

/* ---- conversions (convert.c) ---- */
/* new reference, or NULL with a Python exception set */
PyObject *pyhost__to_python(pyhost *h, const pyhost_value *v);
/* own result, or NULL with a Python exception set */
pyhost_value *pyhost__from_python(pyhost *h, PyObject *o);

/* ---- the scalar rules and their one reader (scalar_read.c) ----
 * What pyhost reads as a C scalar, wherever it reads one from a Python object (the
 * typed functions' binding and its quick form, the fast form's pyhost_args_* getters,
 * the results of calls into Python, values in convert.c), as every luaL_check* goes
 * through one rule per type:
 *  - int: an int or a subclass, never a bool (bool is int's subclass in Python, a kind
 *    of its own in pyhost), within 64 bits;
 *  - float: a float or a subclass; or an int under the int rule, of any size, rounded
 *    to the nearest double as float(n) rounds it;
 *  - bool: exactly True or False (bool cannot be subclassed), never a truth value.
 * The value read is the one the object stores, as int and float keep it: a subclass's
 * __index__, __int__, __float__ or __bool__ never runs, so reading runs no Python code
 * and leaves no exception set. */
#if defined(__GNUC__)
#  define PYHOST__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#  define PYHOST__UNLIKELY(x) (x)
#endif
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
/* After a read that answered -1 (or -1.0): 1 when that was the runtime's
 * OverflowError, cleared (none was set when the read began); 0 when -1 is the value.
 * Out of line (scalar_read.c). */
int pyhost__scalar_overflowed(void);
/* The reader's steps, inline for the per-call paths.  The int of o, an int or a
 * subclass (PyLong_AsLongLong reads an int's own digits): PYHOST_OK with *out set, or
 * PYHOST_RANGE beyond 64 bits. */
static inline int pyhost__scalar_int(PyObject *o, int64_t *out) {
  long long v = PY.PyLong_AsLongLong(o);
  if (PYHOST__UNLIKELY(v == -1) && pyhost__scalar_overflowed()) return PYHOST_RANGE;
  *out = (int64_t)v;
  return PYHOST_OK;
}
/* The double of o, a float or a subclass: the value it stores (PyFloat_AsDouble reads
 * it without __float__ for any float), which cannot fail. */
static inline double pyhost__scalar_float(PyObject *o) { return PY.PyFloat_AsDouble(o); }
/* o is True or False: 1 or 0 (PyObject_IsTrue answers for bool itself). */
static inline int pyhost__scalar_bool(PyObject *o) { return PY.PyObject_IsTrue(o); }
/* The reader: o read under the rules as kind (PYHOST_ARG_INT, _FLOAT or _BOOL) into
 * *out, kind and value: PYHOST_OK; PYHOST_TYPE for another type; PYHOST_RANGE for an
 * int beyond 64 bits (int) or beyond a double's range (float).  Nothing raised either
 * way; the caller words the error for its door (pyhost__scalar_range_text). */
int pyhost__scalar_read(PyObject *o, int kind, pyhost_arg *out);
/* Why a read of kind answered PYHOST_RANGE, in CPython's words: "int does not fit in
 * 64 bits" or "int too large to convert to float". */
const char *pyhost__scalar_range_text(int kind);

/* ---- C scalars (scalar.c) ---- */
/* Argument index of a call named fn, as a new reference; NULL with a Python exception
 * set, or with PYHOST_MISUSE in h's message (an unknown kind, a NULL pointer) and no
 * exception. */
PyObject *pyhost__arg_to_python(pyhost *h, const pyhost_arg *a, size_t index, const char *fn);
/* The bytes of a str or bytes argument a: 0 and their count in *len, or -1 (a NULL
 * pointer with a length, or more than Python takes). */
int pyhost__arg_text(const pyhost_arg *a, size_t *len);
/* Why a cannot be converted (an unknown kind, a NULL pointer), in words, into why. */
void pyhost__arg_misuse(const pyhost_arg *a, char *why, size_t cap);
/* The memoryview a pyhost_buffer lends (a new reference), or NULL with the exception
 * set (released handle: ValueError). */
PyObject *pyhost__buffer_object(const pyhost_buffer *b);
/* The same, with the numbers converted in place and a buffer's memoryview taken
 * straight: for the per-call loops, where the call and the switch of the general
 * conversion cost as much as the conversion (a NULL buffer goes on to its message). */
static inline PyObject *pyhost__arg_to_python_inline(pyhost *h, const pyhost_arg *a,
                                                     size_t index, const char *fn) {
  if (a->kind == PYHOST_ARG_INT) return PY.PyLong_FromLongLong(a->u.i);
  if (a->kind == PYHOST_ARG_FLOAT) return PY.PyFloat_FromDouble(a->u.d);
  if (a->kind == PYHOST_ARG_BUFFER && a->u.p) return pyhost__buffer_object((const pyhost_buffer *)a->u.p);
  return pyhost__arg_to_python(h, a, index, fn);
}
/* The result o of a call named fn read by the scalar reader as an int, float or bool:
 * PYHOST_OK with *out written, or PYHOST_TYPE / PYHOST_RANGE with h's message set and
 * *out untouched. */
int pyhost__read_int_any(pyhost *h, PyObject *o, const char *fn, int64_t *out);
/* An exact int that fits, the usual result, is read here; the rest (bool, subclasses,
 * overflow, the errors) by pyhost__read_int_any. */
static inline int pyhost__read_int(pyhost *h, PyObject *o, const char *fn, int64_t *out) {
  if (Py_TYPE(o) == PY.PyLong_Type && pyhost__scalar_int(o, out) == PYHOST_OK) return PYHOST_OK;
  return pyhost__read_int_any(h, o, fn, out);
}
int pyhost__read_float_any(pyhost *h, PyObject *o, const char *fn, double *out);
/* As pyhost__read_int for a float result: an exact float read here (the usual one; it
 * cannot fail), the rest (an int, a subclass, the errors) by pyhost__read_float_any. */
static inline int pyhost__read_float(pyhost *h, PyObject *o, const char *fn, double *out) {
  if (Py_TYPE(o) == PY.PyFloat_Type) {
    *out = pyhost__scalar_float(o);
    return PYHOST_OK;
  }
  return pyhost__read_float_any(h, o, fn, out);
}
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
