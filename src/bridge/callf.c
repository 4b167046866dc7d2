/* callf.c: calls in one line (see pyhost.h, "calls in one line"): a format string says
 * the C types of the positional and keyword arguments that follow it and of the
 * result, so `pyhost_prepared_callf(h, score, "s,weight=i>d", text, 2, &x)` is the
 * whole call.  Arguments are read in place, as a prepared call reads its pyhost_arg
 * array; on 3.12+ the call is PyObject_Vectorcall with a tuple of keyword names, which
 * a prepared callable keeps from one call to the next (no allocation per call then);
 * before 3.12 the stable ABI's only call with keywords takes a tuple and a dict. */
#include "bridge.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>

#define ARGS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1)) /* see prepared.c */

/* One call's arguments, read from the format and the varargs. */
struct callf_args {
  pyhost_arg argv[PYHOST__CALLF_MAX];
  const char *kwname[PYHOST__CALLF_MAX]; /* into fmt; the keywords are argv[npos..] */
  size_t kwlen[PYHOST__CALLF_MAX];
  size_t n, npos;
  char rtype;     /* 0: the result is discarded */
  void *rout;     /* where it goes */
  const char *kw; /* the keywords' part of fmt, up to '>' or its end: the cache's key */
  size_t kwspan;
};

static int bad_format(pyhost *h, const char *fn, const char *fmt, const char *at,
                      const char *why) {
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: format \"%s\": %s at column %d", fn, fmt, why,
                           (int)(at - fmt) + 1);
}

/* One argument of type letter t from ap. */
static int read_arg(char t, va_list *ap, pyhost_arg *a) {
  switch (t) {
  case 'i': *a = pyhost_arg_int(va_arg(*ap, int)); return 0;
  case 'L': *a = pyhost_arg_int(va_arg(*ap, int64_t)); return 0;
  case 'd': *a = pyhost_arg_float(va_arg(*ap, double)); return 0;
  case 'b': *a = pyhost_arg_bool(va_arg(*ap, int)); return 0;
  case 'n': *a = pyhost_arg_none(); return 0;
  case 's': *a = pyhost_arg_str(va_arg(*ap, const char *), PYHOST_STRLEN); return 0;
  case 'z': {
    const char *s = va_arg(*ap, const char *);
    *a = pyhost_arg_str(s, va_arg(*ap, size_t));
    return 0;
  }
  case 'y': {
    const void *p = va_arg(*ap, const void *);
    *a = pyhost_arg_bytes(p, va_arg(*ap, size_t));
    return 0;
  }
  case 'O': *a = pyhost_arg_value(va_arg(*ap, const pyhost_value *)); return 0;
  default: return -1;
  }
}

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Reads fmt and the varargs into *a: PYHOST_OK or PYHOST_MISUSE naming the fault. */
static int read_format(pyhost *h, const char *fn, const char *fmt, va_list *ap,
                       struct callf_args *a) {
  if (!fmt) return pyhost__set_error(h, PYHOST_MISUSE, "%s: format is NULL", fn);
  const char *p = fmt;
  a->n = a->npos = 0;
  a->rtype = 0;
  a->rout = NULL;
  a->kw = NULL;
  a->kwspan = 0;
  for (; *p && *p != '>'; p++) {
    if (*p == ' ') continue;
    const char *name = NULL;
    size_t len = 0;
    if (*p == ',') {
      p++;
      while (*p == ' ') p++;
      name = p;
      while (is_name_char(*p)) p++;
      len = (size_t)(p - name);
      if (!len || *p != '=') return bad_format(h, fn, fmt, p, "expected name=type after ','");
      if (!a->kw) a->kw = name - 1;
      p++;
    } else if (a->kw) {
      return bad_format(h, fn, fmt, p, "a positional argument after a keyword");
    }
    if (a->n == PYHOST__CALLF_MAX)
      return bad_format(h, fn, fmt, p, "more arguments than pyhost takes (16)");
    if (read_arg(*p, ap, &a->argv[a->n]) < 0)
      return bad_format(h, fn, fmt, p, "unknown type (i L d b n s z y O)");
    a->kwname[a->n] = name;
    a->kwlen[a->n] = len;
    if (!name) a->npos++;
    a->n++;
  }
  if (a->kw) a->kwspan = (size_t)(p - a->kw);
  if (*p == '>') {
    a->rtype = p[1];
    if (!a->rtype || !strchr("iLdbO", a->rtype) || p[2])
      return bad_format(h, fn, fmt, p + 1, "expected one result type (i L d b O) after '>'");
    if (!(a->rout = va_arg(*ap, void *)))
      return pyhost__set_error(h, PYHOST_MISUSE, "%s: the result pointer is NULL", fn);
    if (a->rtype == 'O') *(pyhost_value **)a->rout = NULL;
  }
  return PYHOST_OK;
}

/* The keyword names of a as a tuple (new reference), or NULL with the exception set. */
static PyObject *kwnames_of(const struct callf_args *a) {
  PyObject *t = PY.PyTuple_New((Py_ssize_t)(a->n - a->npos));
  for (size_t i = a->npos; t && i < a->n; i++) {
    PyObject *s = PY.PyUnicode_DecodeUTF8(a->kwname[i], (Py_ssize_t)a->kwlen[i], NULL);
    if (!s || PY.PyTuple_SetItem(t, (Py_ssize_t)(i - a->npos), s) < 0) {
      PY.Py_DecRef(t);
      return NULL;
    }
  }
  return t;
}

/* fn(*args, **kwargs) the stable ABI's way before 3.12: a tuple and a dict. */
static PyObject *call_tuple(pyhost *h, PyObject *fn, PyObject *const *objs,
                            const struct callf_args *a) {
  PyObject *args = PY.PyTuple_New((Py_ssize_t)a->npos), *kw = NULL, *r = NULL;
  for (size_t i = 0; args && i < a->npos; i++) {
    PY.Py_IncRef(objs[i]);
    PY.PyTuple_SetItem(args, (Py_ssize_t)i, objs[i]); /* steals; cannot fail here */
  }
  if (args && a->n > a->npos && (kw = PY.PyDict_New())) {
    for (size_t i = a->npos; kw && i < a->n; i++) {
      PyObject *k = PY.PyUnicode_DecodeUTF8(a->kwname[i], (Py_ssize_t)a->kwlen[i], NULL);
      if (!k || PY.PyDict_SetItem(kw, k, objs[i]) < 0) {
        PY.Py_DecRef(kw);
        kw = NULL;
      }
      PY.Py_DecRef(k);
    }
    if (!kw) {
      PY.Py_DecRef(args);
      return NULL;
    }
  }
  (void)h;
  if (args && (a->n == a->npos || kw)) r = PY.PyObject_Call(fn, args, kw);
  PY.Py_DecRef(kw);
  PY.Py_DecRef(args);
  return r;
}

/* Reads the result r (a new reference, dropped here) as a's result type. */
static int read_result(pyhost *h, PyObject *r, const struct callf_args *a, const char *fn) {
  int rc = PYHOST_OK;
  int64_t i = 0;
  switch (a->rtype) {
  case 'i':
    if (!(rc = pyhost__read_int(h, r, fn, &i))) {
      if (i < INT_MIN || i > INT_MAX)
        rc = pyhost__set_error(h, PYHOST_RANGE, "%s: the result %lld does not fit in an int", fn,
                               (long long)i);
      else *(int *)a->rout = (int)i;
    }
    break;
  case 'L': rc = pyhost__read_int(h, r, fn, (int64_t *)a->rout); break;
  case 'd': rc = pyhost__read_float(h, r, fn, (double *)a->rout); break;
  case 'b': rc = pyhost__read_bool(h, r, fn, (int *)a->rout); break;
  case 'O':
    if (!(*(pyhost_value **)a->rout = pyhost__from_python(h, r)))
      rc = pyhost__take_exception(h, "converting the result failed");
    break;
  default: break;
  }
  pyhost__drop(r);
  return rc;
}

int pyhost__callf(pyhost *h, PyObject *fn, const char *fname, const char *fmt, va_list *ap,
                  struct pyhost__kwcache *cache) {
  struct callf_args a;
  int rc = read_format(h, fname, fmt, ap, &a);
  if (rc) return rc;
  PyObject *stack[PYHOST__CALLF_MAX + 1];
  size_t done = 0;
  while (done < a.n && (stack[done + 1] = pyhost__arg_to_python(h, &a.argv[done], done, fname)))
    done++;
  PyObject *r = NULL, *kwnames = NULL;
  if (done == a.n) {
    if (!pyhost__runtime_at_least(3, 12)) {
      r = call_tuple(h, fn, stack + 1, &a);
    } else if (a.n == a.npos) {
      r = PY.PyObject_Vectorcall(fn, stack + 1, a.n | ARGS_OFFSET, NULL);
    } else if (cache && cache->kwnames && cache->span == a.kwspan &&
               memcmp(cache->key, a.kw, a.kwspan) == 0) {
      r = PY.PyObject_Vectorcall(fn, stack + 1, a.npos | ARGS_OFFSET, cache->kwnames);
    } else if ((kwnames = kwnames_of(&a))) {
      r = PY.PyObject_Vectorcall(fn, stack + 1, a.npos | ARGS_OFFSET, kwnames);
      if (cache) pyhost__kwcache_keep(cache, a.kw, a.kwspan, kwnames); /* takes kwnames */
      else PY.Py_DecRef(kwnames);
    }
  }
  while (done) PY.Py_DecRef(stack[done--]);
  if (!r) return PY.PyErr_Occurred() ? pyhost__take_exception(h, NULL) : PYHOST_MISUSE;
  return read_result(h, r, &a, fname);
}

void pyhost__kwcache_keep(struct pyhost__kwcache *c, const char *key, size_t span,
                          PyObject *kwnames) {
  char *copy = pyhost__malloc(span ? span : 1);
  if (!copy) { /* no cache then: the next call makes the names again */
    PY.Py_DecRef(kwnames);
    return;
  }
  memcpy(copy, key, span);
  pyhost__kwcache_clear(c);
  c->key = copy;
  c->span = span;
  c->kwnames = kwnames;
}

void pyhost__kwcache_clear(struct pyhost__kwcache *c) {
  if (c->kwnames) PY.Py_DecRef(c->kwnames);
  pyhost__free(c->key);
  c->kwnames = NULL;
  c->key = NULL;
  c->span = 0;
}

int pyhost_call_namef(pyhost *h, const char *dotted, const char *fmt, ...) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  va_list ap;
  va_start(ap, fmt);
  PyObject *fn = NULL;
  if (!dotted) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_call_namef: dotted is NULL");
  else if (!(fn = pyhost__resolve(h, dotted))) rc = pyhost__take_exception(h, NULL);
  else rc = pyhost__callf(h, fn, "pyhost_call_namef", fmt, &ap, NULL);
  va_end(ap);
  if (fn) PY.Py_DecRef(fn);
  pyhost__leave(h, gil);
  return rc;
}
