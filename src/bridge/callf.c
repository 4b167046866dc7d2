/* callf.c: calls in one line (see pyhost.h, "calls in one line"): a format string says
 * the C types of the positional and keyword arguments that follow it and of the
 * result, so `pyhost_prepared_callf(h, score, "s,weight=i>d", text, 2, &x)` is the
 * whole call.  Arguments are read in place, as a prepared call reads its pyhost_arg
 * array; on 3.12+ the call is PyObject_Vectorcall with a tuple of keyword names, which
 * a prepared callable keeps from one call to the next (no allocation per call then);
 * before 3.12 the stable ABI's only call with keywords takes a tuple and a dict. */
#include "callf.h"

/* A format read: what each argument's letter is, which are keywords, the result's
 * letter.  A prepared callable keeps the last one it read (struct pyhost__callf_plan
 * in bridge.h), so a loop of calls with one format reads it once. */
static int bad_format(pyhost *h, const char *fn, const char *fmt, const char *at,
                      const char *why) {
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: format \"%s\": %s at column %d", fn, fmt, why,
                           (int)(at - fmt) + 1);
}

static int is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_arg_letter(char c) { return c && strchr("iLdbnszyOm", c) != NULL; }

/* Reads fmt into *p (names point into fmt): PYHOST_OK or PYHOST_MISUSE naming the
 * fault and its column. */
static int read_format(pyhost *h, const char *fn, const char *fmt, struct pyhost__callf_plan *p) {
  if (!fmt) return pyhost__set_error(h, PYHOST_MISUSE, "%s: format is NULL", fn);
  const char *c = fmt;
  p->n = p->npos = 0;
  p->rtype = 0;
  p->text = NULL;
  p->kwnames = NULL;
  for (; *c && *c != '>'; c++) {
    if (*c == ' ') continue;
    /* before anything is written for this argument: the arrays hold 16 */
    if (p->n == PYHOST__CALLF_MAX)
      return bad_format(h, fn, fmt, c, "more arguments than pyhost takes (16)");
    const char *name = NULL;
    if (*c == ',') {
      c++;
      while (*c == ' ') c++;
      name = c;
      while (is_name_char(*c)) c++;
      if (c == name || *c != '=') return bad_format(h, fn, fmt, c, "expected name=type after ','");
      p->kwname[p->n] = name;
      p->kwlen[p->n] = (size_t)(c - name);
      c++;
    } else if (p->n > p->npos) {
      return bad_format(h, fn, fmt, c, "a positional argument after a keyword");
    }
    if (!is_arg_letter(*c)) return bad_format(h, fn, fmt, c, "unknown type (i L d b n s z y O m)");
    p->letter[p->n++] = *c;
    if (!name) p->npos++;
  }
  if (*c == '>') {
    p->rtype = c[1];
    if (!p->rtype || !strchr("iLdbOsyow", p->rtype) || c[2])
      return bad_format(h, fn, fmt, c + 1, "expected one result type (i L d b O s y o w) after '>'");
  }
  return PYHOST_OK;
}

/* Keyword name i of p interned (new reference), as the names in Python code are, so
 * that the callee matches it by identity rather than by comparing text; NULL with the
 * exception set.  The name points into its format: copied to be NUL-terminated. */
static PyObject *kwname_of(const struct pyhost__callf_plan *p, size_t i) {
  char small[64];
  size_t len = p->kwlen[i];
  char *z = len < sizeof small ? small : pyhost__malloc(len + 1);
  if (!z) return PY.PyErr_NoMemory();
  memcpy(z, p->kwname[i], len);
  z[len] = '\0';
  PyObject *s = PY.PyUnicode_InternFromString(z);
  if (z != small) pyhost__free(z);
  return s;
}

PyObject *pyhost__callf_kwnames(const struct pyhost__callf_plan *p) {
  PyObject *t = PY.PyTuple_New((Py_ssize_t)(p->n - p->npos));
  for (size_t i = p->npos; t && i < p->n; i++) {
    PyObject *s = kwname_of(p, i);
    if (!s || PY.PyTuple_SetItem(t, (Py_ssize_t)(i - p->npos), s) < 0) {
      PY.Py_DecRef(t);
      return NULL;
    }
  }
  return t;
}

pyhost_arg pyhost__callf_next(char t, va_list *ap) {
  pyhost_arg a;
  switch (t) {
  case 'i': a = pyhost_arg_int(va_arg(*ap, int)); break;
  case 'L': a = pyhost_arg_int(va_arg(*ap, int64_t)); break;
  case 'd': a = pyhost_arg_float(va_arg(*ap, double)); break;
  case 'b': a = pyhost_arg_bool(va_arg(*ap, int)); break;
  case 'n': a = pyhost_arg_none(); break;
  case 's': a = pyhost_arg_str(va_arg(*ap, const char *), PYHOST_STRLEN); break;
  case 'z': {
    const char *s = va_arg(*ap, const char *);
    a = pyhost_arg_str(s, va_arg(*ap, size_t));
    break;
  }
  case 'y': {
    const void *p = va_arg(*ap, const void *);
    a = pyhost_arg_bytes(p, va_arg(*ap, size_t));
    break;
  }
  case 'm': a = pyhost_arg_buffer(va_arg(*ap, const pyhost_buffer *)); break;
  default: a = pyhost_arg_value(va_arg(*ap, const pyhost_value *)); break; /* 'O' */
  }
  return a;
}

PyObject *pyhost__callf_arg(pyhost *h, char t, va_list *ap, size_t i, const char *fn) {
  switch (t) { /* the numbers straight, the rest as a pyhost_arg */
  case 'i': return PY.PyLong_FromLongLong((long long)va_arg(*ap, int));
  case 'L': return PY.PyLong_FromLongLong((long long)va_arg(*ap, int64_t));
  case 'd': return PY.PyFloat_FromDouble(va_arg(*ap, double));
  default: break;
  }
  pyhost_arg a = pyhost__callf_next(t, ap);
  return pyhost__arg_to_python(h, &a, i, fn);
}

/* fn(*args, **kwargs) the stable ABI's way before 3.12: a tuple and a dict. */
static PyObject *call_tuple(PyObject *fn, PyObject *const *objs,
                            const struct pyhost__callf_plan *p) {
  PyObject *args = PY.PyTuple_New((Py_ssize_t)p->npos), *kw = NULL, *r = NULL;
  for (size_t i = 0; args && i < p->npos; i++) {
    PY.Py_IncRef(objs[i]);
    PY.PyTuple_SetItem(args, (Py_ssize_t)i, objs[i]); /* steals; cannot fail here */
  }
  int ok = args != NULL;
  if (ok && p->n > p->npos) {
    ok = (kw = PY.PyDict_New()) != NULL;
    for (size_t i = p->npos; ok && i < p->n; i++) {
      PyObject *k = p->kwnames ? PY.PyTuple_GetItem(p->kwnames, (Py_ssize_t)(i - p->npos))
                               : kwname_of(p, i);
      if (k && p->kwnames) PY.Py_IncRef(k);
      ok = k && PY.PyDict_SetItem(kw, k, objs[i]) == 0;
      if (k) PY.Py_DecRef(k);
    }
  }
  if (ok) r = PY.PyObject_Call(fn, args, kw);
  if (kw) PY.Py_DecRef(kw);
  if (args) PY.Py_DecRef(args);
  return r;
}

PyObject *pyhost__callf_call_other(PyObject *fn, PyObject *const *objs,
                                   const struct pyhost__callf_plan *p) {
  if (!pyhost__runtime_at_least(3, 12)) return call_tuple(fn, objs, p);
  PyObject *kwnames = pyhost__callf_kwnames(p), *r = NULL; /* the plan could not keep them */
  if (kwnames) {
    r = PY.PyObject_Vectorcall(fn, objs, p->npos | PYHOST__ARGS_OFFSET, kwnames);
    PY.Py_DecRef(kwnames);
  }
  return r;
}

int pyhost__callf_read_borrowed(pyhost *h, PyObject *r, char t, const char **out, size_t *len,
                                PyObject **kept, const char *fn) {
  unsigned long flags = PY.PyType_GetFlags(Py_TYPE(r));
  char *p = NULL;
  Py_ssize_t n = 0;
  int rc = PYHOST_OK;
  if (t == 'y') {
    if (!(flags & Py_TPFLAGS_BYTES_SUBCLASS)) rc = pyhost__read_type_error(h, r, fn, "bytes");
    else if (PY.PyBytes_AsStringAndSize(r, &p, &n) < 0) rc = pyhost__take_exception(h, NULL);
  } else if (!(flags & Py_TPFLAGS_UNICODE_SUBCLASS)) {
    rc = pyhost__read_type_error(h, r, fn, "str");
  } else if (pyhost__runtime_at_least(3, 10)) {
    const char *u = PY.PyUnicode_AsUTF8AndSize(r, &n); /* cached in r: lives with it */
    if (!u) rc = pyhost__take_exception(h, NULL);
    p = (char *)u;
  } else { /* no UTF-8 view before 3.10: the bytes of one hold it */
    PyObject *b = PY.PyUnicode_AsUTF8String(r);
    pyhost__drop(r);
    if (!(r = b) || PY.PyBytes_AsStringAndSize(b, &p, &n) < 0) rc = pyhost__take_exception(h, NULL);
  }
  if (rc) {
    if (r) pyhost__drop(r);
    return rc;
  }
  *out = p;
  *len = (size_t)n;
  *kept = r;
  return PYHOST_OK;
}

/* cache holds fmt's plan: read from a copy of the text, its keyword names made once
 * (interned: a call before 3.12 puts them into its dict, from 3.12 passes the tuple).  Nothing kept when memory runs out:
 * the next call reads the format again. */
static void keep_plan(struct pyhost__callf_plan *cache, const char *fmt) {
  pyhost__callf_plan_clear(cache);
  size_t len = strlen(fmt);
  char *text = pyhost__malloc(len + 1);
  if (!text) return;
  memcpy(text, fmt, len + 1);
  struct pyhost__callf_plan p;
  if (read_format(NULL, "", text, &p) != PYHOST_OK) { /* cannot fail: fmt was read */
    pyhost__free(text);
    return;
  }
  p.text = text;
  p.kwnames = NULL;
  if (p.n > p.npos && !(p.kwnames = pyhost__callf_kwnames(&p))) {
    PY.PyErr_Clear();
    pyhost__free(text);
    return;
  }
  *cache = p;
}

const struct pyhost__callf_plan *pyhost__callf_plan_read(pyhost *h, const char *fname,
                                                         const char *fmt,
                                                         struct pyhost__callf_plan *cache,
                                                         struct pyhost__callf_plan *read, int *rc) {
  if ((*rc = read_format(h, fname, fmt, read)) != PYHOST_OK) return NULL;
  if (!cache) return read;
  keep_plan(cache, fmt);
  return cache->text ? cache : read;
}

int pyhost__callf(pyhost *h, PyObject *fn, const char *fname, const char *fmt, va_list *ap,
                  struct pyhost__callf_plan *cache, struct pyhost__callf_borrowed *borrowed,
                  const char *raised) {
  return pyhost__callf_inline(h, fn, fname, fmt, ap, cache, borrowed, raised,
                              pyhost__inline_refcounts());
}

void pyhost__callf_plan_clear(struct pyhost__callf_plan *p) {
  if (p->kwnames) PY.Py_DecRef(p->kwnames);
  pyhost__free(p->text);
  p->kwnames = NULL;
  p->text = NULL;
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
  else rc = pyhost__callf(h, fn, "pyhost_call_namef", fmt, &ap, NULL, NULL, NULL);
  va_end(ap);
  if (fn) PY.Py_DecRef(fn);
  pyhost__leave(h, gil);
  return rc;
}
