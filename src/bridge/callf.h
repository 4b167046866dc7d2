/* callf.h: the per-call body of the calls in one line (callf.c), inline so that
 * pyhost_prepared_callf (prepared.c), the hot form, runs it without a call, a second
 * prologue and eight arguments of its own.  The rare parts stay out of line in
 * callf.c: reading a format the cache does not hold, letters other than 'i', calls
 * with keywords before 3.12, borrowed results. */
#ifndef PYHOST_CALLF_H
#define PYHOST_CALLF_H

#include "bridge.h"
#include "buffer.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

/* The plan of fmt when cache does not hold it: read into *read (and kept in cache when
 * there is one); NULL with *rc set (a bad format). */
const struct pyhost__callf_plan *pyhost__callf_plan_read(pyhost *h, const char *fname,
                                                         const char *fmt,
                                                         struct pyhost__callf_plan *cache,
                                                         struct pyhost__callf_plan *read, int *rc);
/* The keyword names of p (kwname, kwlen from npos to n) as a tuple of interned str,
 * so that the callee matches them by identity: a new reference, or NULL with the
 * exception set. */
PyObject *pyhost__callf_kwnames(const struct pyhost__callf_plan *p);
/* The next argument of letter t from ap, as a pyhost_arg (strings and bytes in place). */
pyhost_arg pyhost__callf_next(char t, va_list *ap);
/* Argument i of letter t (not 'i') from ap: a new reference, or NULL with the
 * exception set, or with PYHOST_MISUSE in h's message (a NULL string with a length). */
PyObject *pyhost__callf_arg(pyhost *h, char t, va_list *ap, size_t i, const char *fn);
/* fn called with the plan's arguments objs, keywords among them, the ways the calls
 * below do not take: before 3.12 a tuple and a dict; keyword names made for this call
 * when the plan holds none.  A new reference, or NULL with the exception set. */
PyObject *pyhost__callf_call_other(PyObject *fn, PyObject *const *objs,
                                   const struct pyhost__callf_plan *p);
/* A borrowed str or bytes result r (a new reference, taken): its text in *out and
 * *len, and in *kept what holds it (r, or before 3.10 the bytes of its UTF-8); nothing
 * written unless PYHOST_OK. */
int pyhost__callf_read_borrowed(pyhost *h, PyObject *r, char t, const char **out, size_t *len,
                                PyObject **kept, const char *fn);

/* Argument i of the call, of letter t, from ap (see pyhost__callf_arg). */
static inline PyObject *pyhost__callf_read_arg(pyhost *h, char t, va_list *ap, size_t i,
                                               const char *fn) {
  if (t == 'i') return PY.PyLong_FromLongLong((long long)va_arg(*ap, int)); /* the usual one */
  return pyhost__callf_arg(h, t, ap, i, fn);
}

/* Drops the n arguments objs (new references); counted as in pyhost__drop_as. */
static inline void pyhost__callf_drop_args(PyObject *const *objs, size_t n, int counted) {
  if (counted) {
    while (n) pyhost__drop_as(objs[--n], 1);
  } else {
    while (n) PY.Py_DecRef(objs[--n]); /* None too: immortal there */
  }
}

/* Reads the result r (a new reference, dropped here) as letter t into out; counted as
 * in pyhost__drop_as. */
static inline int pyhost__callf_read_result(pyhost *h, PyObject *r, char t, void *out,
                                            const char *fn, int counted) {
  int rc = PYHOST_OK;
  int64_t i = 0;
  switch (t) {
  case 'i':
    if (!(rc = pyhost__read_int(h, r, fn, &i))) {
      if (i < INT_MIN || i > INT_MAX)
        rc = pyhost__set_error(h, PYHOST_RANGE, "%s: the result %lld does not fit in an int", fn,
                               (long long)i);
      else *(int *)out = (int)i;
    }
    break;
  case 'L': rc = pyhost__read_int(h, r, fn, (int64_t *)out); break;
  case 'd': rc = pyhost__read_float(h, r, fn, (double *)out); break;
  case 'b': rc = pyhost__read_bool(h, r, fn, (int *)out); break;
  case 'O':
  case 'o': { /* O converts the result, o keeps the object */
    pyhost_value *v = t == 'O' ? pyhost__from_python(h, r) : pyhost__object_value(r);
    if (v) *(pyhost_value **)out = v;
    else rc = pyhost__take_exception(h, t == 'O' ? "converting the result failed" : fn);
    break;
  }
  /* a view, as pyhost_view_get: zeroed on failure (callf_inline zeroed it first), so
   * releasing it is a no-op either way */
  case 'w': rc = pyhost__view_from_object(h, r, 0, (pyhost_view *)out, fn); break;
  default: break;
  }
  pyhost__drop_as(r, counted);
  return rc;
}

/* pyhost__callf's body (bridge.h says what it does).  pre312 is
 * pyhost__inline_refcounts() (1 before 3.12: counts inline, no PyObject_Vectorcall),
 * a constant where the hot caller splits on it once. */
static PYHOST__HOT_INLINE int pyhost__callf_inline(pyhost *h, PyObject *fn, const char *fname,
                                                   const char *fmt, va_list *ap,
                                                   struct pyhost__callf_plan *cache,
                                                   struct pyhost__callf_borrowed *keep,
                                                   const char *raised, int pre312) {
  struct pyhost__callf_plan read;
  const struct pyhost__callf_plan *p = cache;
  int rc;
  if (!cache || !cache->text || !fmt || strcmp(cache->text, fmt) != 0) {
    if (!(p = pyhost__callf_plan_read(h, fname, fmt, cache, &read, &rc))) return rc;
  }
  PyObject *stack[PYHOST__CALLF_MAX + 1];
  size_t done = 0;
  for (; done < p->n; done++) {
    PyObject *x = pyhost__callf_read_arg(h, p->letter[done], ap, done, fname);
    if (!x) break;
    stack[done + 1] = x;
  }
  int borrowed = 0;
  void *out = NULL;
  size_t *out_len = NULL;
  if (p->rtype && done == p->n) { /* past a failed argument the rest are unread: the
                                     * next va_arg would be one of them, not the result */
    out = va_arg(*ap, void *);
    if ((borrowed = p->rtype == 's' || p->rtype == 'y')) out_len = va_arg(*ap, size_t *);
    if (p->rtype == 'w' && out) memset(out, 0, sizeof(pyhost_view)); /* releasable on failure */
  }
  PyObject *r = NULL;
  if (done < p->n) {
    /* an argument failed: its exception (or MISUSE message) is the answer */
  } else if (borrowed && !keep) {
    pyhost__callf_drop_args(stack + 1, done, pre312);
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "%s: a borrowed result (>s, >y) needs a prepared callable: "
                             "pyhost_prepared_callf", fname);
  } else if (p->rtype && (!out || (borrowed && !out_len))) {
    pyhost__callf_drop_args(stack + 1, done, pre312);
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: the result pointer is NULL", fname);
  } else if (!pre312 && (p->n == p->npos || p->kwnames)) {
    /* no keywords (kwnames NULL then), or their names made once */
    r = PY.PyObject_Vectorcall(fn, stack + 1, p->npos | PYHOST__ARGS_OFFSET, p->kwnames);
  } else if (p->n == p->npos) { /* before 3.12, no keywords; none: 3.10's CallNoArgs */
    r = p->n ? pyhost__call_objargs(fn, stack + 1, p->n) : pyhost__call_stack(fn, stack + 1, 0);
  } else {
    r = pyhost__callf_call_other(fn, stack + 1, p);
  }
  pyhost__callf_drop_args(stack + 1, done, pre312);
  if (!r) return PY.PyErr_Occurred() ? pyhost__take_exception(h, raised) : PYHOST_MISUSE;
  if (!borrowed) return pyhost__callf_read_result(h, r, p->rtype, out, fname, pre312);
  rc = pyhost__callf_read_borrowed(h, r, p->rtype, &keep->p, &keep->n, &keep->holder, fname);
  keep->out = out;
  keep->out_len = out_len;
  return rc;
}

/* A prepared callable's borrowed result b, read by the call that just ended: written
 * into the caller's pointers, its holder kept in *kept (which drops the one it held:
 * the previous result lived until now, an argument may have been it). */
static inline void pyhost__callf_commit(struct pyhost__callf_borrowed *b, PyObject **kept) {
  PyObject *old = *kept;
  *kept = b->holder;
  *(const char **)b->out = b->p;
  *b->out_len = b->n;
  if (old) pyhost__drop(old);
}

#endif
