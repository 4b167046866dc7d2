/* typedargs.c: one call of a typed host function (see pyhost.h, "host functions with
 * declared arguments"): the arguments Python passed are bound to the declared
 * parameters and converted in one pass, with the TypeErrors CPython's own builtins
 * raise, then the host's callback gets them as C values.  Nothing is allocated (the
 * converted arguments live on the stack; a str before 3.10 keeps its UTF-8 copy in
 * the view, as the getters do) and no Python code runs between reading an argument
 * and handing it over: the conversions read type flags, never __index__, __float__ or
 * __str__, and keywords are matched by identity, then by their text. */
#include "bridge.h"

#include <stdint.h>
#include <string.h>

static int raise_type(const struct pyhost_args *a, const char *fmt, const char *name,
                      size_t n) {
  return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR, fmt, a->callee->who, name, n);
}

/* Argument o for parameter p converted into *out past pyhost__quick_read, or the error
 * naming p: out of line, so that the binder's loop keeps only the quick read. */
static PYHOST__NOINLINE int convert_other(const struct pyhost__param *p, struct pyhost_args *a,
                                          PyObject *o, pyhost_arg *out) {
  if (p->dflt_none && o == PY._Py_NoneStruct) {
    *out = pyhost_arg_none();
    return PYHOST_OK;
  }
  static const char *const wants[] = {"None", "bool", "int", "float", "str", "bytes"};
  const char *want = p->kind < PYHOST_ARG_VALUE ? wants[p->kind] : "?";
  int rc;
  if (p->kind == PYHOST_ARG_VIEW) { /* held with the call's temporaries */
    const pyhost_view *v;
    if ((rc = pyhost__args_view(a, o, p->view_flags, &v, &want)) == PYHOST_OK) {
      out->kind = PYHOST_ARG_VIEW;
      out->u.p = v;
      out->len = v->len;
    }
  } else {
    rc = pyhost__args_read(a, o, p->kind, out);
  }
  if (rc == PYHOST_RANGE)
    return pyhost_raise(a->callee->h, PYHOST_EXC_OVERFLOW_ERROR, "%s() argument '%s': %s",
                        a->callee->who, p->name, pyhost__scalar_range_text(p->kind));
  if (rc != PYHOST_TYPE) return rc;
  char got[128];
  pyhost__type_name((PyObject *)Py_TYPE(o), got, sizeof got);
  return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR, "%s() argument '%s' must be %s%s, not %s",
                      a->callee->who, p->name, want, p->dflt_none ? " or None" : "", got);
}

/* Argument o for parameter j converted into *out, or the error naming it. */
static inline int convert(const struct pyhost__sig *s, size_t j, struct pyhost_args *a,
                          PyObject *o, pyhost_arg *out) {
  return pyhost__quick_read(s, j, o, out) ? PYHOST_OK : convert_other(&s->p[j], a, o, out);
}

/* The parameter a keyword names, or -1.  Identity first: the names in Python code are
 * interned, as the parameters' are. */
static int param_of(const struct pyhost__sig *s, PyObject *key) {
  for (size_t j = 0; j < s->n; j++)
    if (s->p[j].pyname == key) return (int)j;
  if (!(PY.PyType_GetFlags(Py_TYPE(key)) & Py_TPFLAGS_UNICODE_SUBCLASS)) return -1;
  for (size_t j = 0; j < s->n; j++)
    if (PY.PyUnicode_CompareWithASCIIString(key, s->p[j].name) == 0) return (int)j;
  return -1;
}

/* The k-th keyword of the call: its name and value (both borrowed). */
static void keyword(const struct pyhost_args *a, size_t k, Py_ssize_t *pos, PyObject **key,
                    PyObject **val) {
  if (pyhost__args_is_tuple(a)) {
    PY.PyDict_Next(a->kwdict, pos, key, val);
  } else {
    *key = PY.PyTuple_GetItem(a->kwnames, (Py_ssize_t)k);
    *val = a->argv[a->nargs + k];
  }
}

static PYHOST__COLD int unexpected_keyword(const struct pyhost__sig *s, struct pyhost_args *a,
                                           PyObject *key, int j) {
  pyhost *h = a->callee->h;
  if (j >= 0)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR,
                        "'%s' is an invalid keyword argument for %s() (positional-only)",
                        s->p[j].name, a->callee->who);
  pyhost_arg text;
  if (!key || pyhost__args_read(a, key, PYHOST_ARG_STR, &text) != PYHOST_OK)
    text = pyhost_arg_str("?", 1);
  return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "%s() got an unexpected keyword argument '%s'",
                      a->callee->who, text.u.s);
}

/* The parameters no argument gave: their defaults, or the error naming the first
 * required one. */
static int fill_defaults(const struct pyhost__sig *s, const struct pyhost_args *a,
                         pyhost_arg *argv, uint32_t given) {
  for (size_t j = 0; j < s->n; j++) {
    if (given & (1u << j)) continue;
    const struct pyhost__param *p = &s->p[j];
    if (!p->has_default)
      return p->kwonly ? pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR,
                                      "%s() missing required keyword-only argument '%s'",
                                      a->callee->who, p->name)
                       : raise_type(a, "%s() missing required argument '%s' (pos %zu)", p->name,
                                    j + 1);
    argv[j] = p->dflt;
  }
  return PYHOST_OK;
}

/* The keywords against the parameters, nothing converted: PYHOST_OK, or the TypeError
 * of a keyword no parameter takes or one given by position too.  Sets *given. */
static int bind_keywords(const struct pyhost__sig *s, struct pyhost_args *a, uint32_t *given) {
  size_t nkw = pyhost__args_is_tuple(a) ? a->nkw
               : a->kwnames          ? (size_t)PY.PyTuple_Size(a->kwnames)
                                     : 0;
  Py_ssize_t pos = 0;
  for (size_t k = 0; k < nkw; k++) {
    PyObject *key = NULL, *val = NULL;
    keyword(a, k, &pos, &key, &val);
    int j = key ? param_of(s, key) : -1;
    if (j < 0 || s->p[j].posonly) return unexpected_keyword(s, a, key, j);
    if (*given & (1u << j))
      return raise_type(a, "argument for %s() given by name ('%s') and position (%zu)",
                        s->p[j].name, (size_t)j + 1);
    *given |= 1u << j;
  }
  return PYHOST_OK;
}

/* A value refused (rc) in a call that binds wrongly too: the binding's TypeError is the
 * one to report, as Python's own functions bind before they convert (and as
 * inspect.signature(f).bind refuses the call); it replaces the value's exception. */
static PYHOST__COLD int refused_value(const struct pyhost__sig *s, struct pyhost_args *a,
                                      pyhost_arg *argv, int rc) {
  uint32_t given = (uint32_t)((1ull << a->nargs) - 1);
  int bound = bind_keywords(s, a, &given);
  if (!bound && given != (uint32_t)((1ull << s->n) - 1)) bound = fill_defaults(s, a, argv, given);
  return bound ? bound : rc;
}

int pyhost__sig_bind(const struct pyhost__sig *s, struct pyhost_args *a, pyhost_arg *argv) {
  size_t np = a->nargs;
  if (np > s->npos)
    return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR,
                        "%s() takes at most %zu positional argument%s (%zu given)",
                        a->callee->who, s->npos, s->npos == 1 ? "" : "s", np);
  for (size_t i = 0; i < np; i++) {
    PyObject *o = pyhost__args_is_tuple(a)
                      ? PY.PyTuple_GetItem(a->tuple, (Py_ssize_t)(i + a->skip))
                      : a->argv[i];
    int rc = convert(s, i, a, o, &argv[i]);
    if (rc) return refused_value(s, a, argv, rc);
  }
  uint32_t given = (uint32_t)((1ull << np) - 1);
  size_t nkw = pyhost__args_is_tuple(a) ? a->nkw
               : a->kwnames          ? (size_t)PY.PyTuple_Size(a->kwnames)
                                     : 0;
  Py_ssize_t pos = 0;
  for (size_t k = 0; k < nkw; k++) {
    PyObject *key = NULL, *val = NULL;
    keyword(a, k, &pos, &key, &val);
    int j = key ? param_of(s, key) : -1;
    if (j < 0 || s->p[j].posonly) return unexpected_keyword(s, a, key, j);
    if (given & (1u << j))
      return raise_type(a, "argument for %s() given by name ('%s') and position (%zu)",
                        s->p[j].name, (size_t)j + 1);
    int rc = convert(s, (size_t)j, a, val, &argv[j]);
    if (rc) return refused_value(s, a, argv, rc);
    given |= 1u << j;
  }
  if (given == (uint32_t)((1ull << s->n) - 1)) return PYHOST_OK;
  return fill_defaults(s, a, argv, given);
}

/* ---- the quick binding of a vector-form call (bridge.h) ---- */

/* One argument read as the quick binding reads it, past pyhost__quick_read: 1 when
 * done, 0 when the full binder must read it. */
/* An exact str's UTF-8, borrowed from it (3.10+; the caller holds the argument for the
 * whole call, and the runtime caches the text in the object): 1, or 0 with nothing
 * raised. */
int pyhost__quick_read_str(PyObject *o, pyhost_arg *out) {
  Py_ssize_t n;
  const char *u = PY.PyUnicode_AsUTF8AndSize(o, &n);
  if (!u) { /* a lone surrogate, or no memory: the full binder raises it again */
    PY.PyErr_Clear();
    return 0;
  }
  *out = pyhost_arg_str(u, (size_t)n);
  return 1;
}

/* (a str is pyhost__quick_read's: quick_type) */
static PYHOST__NOINLINE int read_quick_other(const struct pyhost__param *p, PyObject *o,
                                             pyhost_arg *out) {
  PyTypeObject *t = Py_TYPE(o);
  if (p->kind == PYHOST_ARG_BOOL && t == PY.PyBool_Type) {
    *out = pyhost_arg_bool(pyhost__scalar_bool(o));
  } else if (p->kind == PYHOST_ARG_BYTES && t == PY.PyBytes_Type) {
    char *b;
    Py_ssize_t n;
    if (PY.PyBytes_AsStringAndSize(o, &b, &n) < 0) return 0; /* never for an exact bytes */
    *out = pyhost_arg_bytes(b, (size_t)n);
  } else if (p->dflt_none && o == PY._Py_NoneStruct) {
    *out = pyhost_arg_none();
  } else {
    return 0;
  }
  return 1;
}

/* Argument o of parameter j read as the quick binding reads it. */
static inline int read_quick(const struct pyhost__sig *s, size_t j, PyObject *o,
                             pyhost_arg *out) {
  return pyhost__quick_read(s, j, o, out) || read_quick_other(&s->p[j], o, out);
}

/* The parameter each of kwnames' nkw names names, by identity: s's kept match when
 * kwnames is the last call's tuple, else matched and kept (the tuple held, so that no
 * other tuple takes its address while kept).  NULL when a name is not the interned
 * name of a parameter that may be given by keyword (then nothing is kept). */
static const unsigned char *kw_params(struct pyhost__sig *s, PyObject *kwnames, size_t nkw) {
  if (kwnames == s->kw_names) return s->kw_param;
  if (nkw > s->n) return NULL;
  unsigned char match[PYHOST__SIG_MAX];
  for (size_t k = 0; k < nkw; k++) {
    PyObject *key = PY.PyTuple_GetItem(kwnames, (Py_ssize_t)k);
    size_t j = s->nposonly;
    while (j < s->n && s->p[j].pyname != key) j++;
    if (j == s->n) return NULL;
    match[k] = (unsigned char)j;
  }
  /* the tuple let go holds only parameter names (it matched): freeing it runs no
   * Python code */
  PyObject *old = s->kw_names;
  PY.Py_IncRef(kwnames);
  s->kw_names = kwnames;
  memcpy(s->kw_param, match, nkw);
  if (old) PY.Py_DecRef(old);
  return s->kw_param;
}

int pyhost__typed_bind_vector_from(struct pyhost__sig *s, PyObject *const *args, size_t nargs,
                                   PyObject *kwnames, pyhost_arg *argv, size_t from) {
  /* a buffer parameter: the full binder lends its view, which a quick read never does */
  if (s->lends_views || nargs > s->npos) return 0;
  for (size_t i = from; i < nargs; i++)
    if (!read_quick(s, i, args[i], &argv[i])) return 0;
  uint32_t given = (uint32_t)((1ull << nargs) - 1);
  if (kwnames) {
    /* the tuple the runtime made for the call, whose size is in its PyVarObject
     * header (stable layout) */
    size_t nkw = (size_t)((PyVarObject *)kwnames)->ob_size;
    const unsigned char *param = kw_params(s, kwnames, nkw);
    if (!param) return 0;
    for (size_t k = 0; k < nkw; k++) {
      size_t j = param[k];
      /* a parameter given by position too, or a name given twice: the binder's */
      if ((given & (1u << j)) || !read_quick(s, j, args[nargs + k], &argv[j])) return 0;
      given |= 1u << j;
    }
  }
  if (given != (uint32_t)((1ull << s->n) - 1))
    for (size_t j = nargs; j < s->n; j++)
      if (!(given & (1u << j))) {
        if (!s->p[j].has_default) return 0;
        argv[j] = s->p[j].dflt;
      }
  return 1;
}
