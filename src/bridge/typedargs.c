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

static int raise_type(const struct pyhost_args *a, const char *fmt, const char *name,
                      size_t n) {
  return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR, fmt, a->callee->who, name, n);
}

/* Argument o for parameter p converted into *out, or the error naming p. */
static int convert(const struct pyhost__param *p, struct pyhost_args *a, PyObject *o,
                   pyhost_arg *out) {
  if (pyhost__read_exact(p, o, out)) return PYHOST_OK;
  if (p->dflt_none && o == PY._Py_NoneStruct) {
    *out = pyhost_arg_none();
    return PYHOST_OK;
  }
  int rc = pyhost__args_read(a, o, p->kind, out);
  if (rc == PYHOST_OK || rc == PYHOST_PYEXC) return rc;
  if (rc == PYHOST_RANGE)
    return pyhost_raise(a->callee->h, PYHOST_EXC_OVERFLOW_ERROR,
                        "%s() argument '%s': int does not fit in 64 bits", a->callee->who,
                        p->name);
  static const char *const want[] = {"None", "bool", "int", "float", "str", "bytes"};
  char got[128];
  pyhost__type_name((PyObject *)Py_TYPE(o), got, sizeof got);
  return pyhost_raise(a->callee->h, PYHOST_EXC_TYPE_ERROR, "%s() argument '%s' must be %s%s, not %s",
                      a->callee->who, p->name, want[p->kind], p->dflt_none ? " or None" : "",
                      got);
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
    int rc = convert(&s->p[i], a, o, &argv[i]);
    if (rc) return rc;
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
    int rc = convert(&s->p[j], a, val, &argv[j]);
    if (rc) return rc;
    given |= 1u << j;
  }
  if (given == (uint32_t)((1ull << s->n) - 1)) return PYHOST_OK;
  return fill_defaults(s, a, argv, given);
}
