/* signature.c: the declared signature of a typed host function (see pyhost.h,
 * "host functions with declared arguments"), read once at registration:
 *
 *   name(x: int, y: float = 2.5, /, *, label: str = None)
 *
 * Parameters are ASCII identifiers with one of the types int, float, bool, str,
 * bytes, and an optional default (None, True, False, an int, a float or a quoted
 * string without backslashes); "/" ends the positional-only ones and "*" starts the
 * keyword-only ones, as in Python.  The result is a struct pyhost__sig that
 * typedargs.c binds each call against, and the builtin's docstring, whose first line
 * "name(...)\n--\n\n" is what CPython reads as __text_signature__ (so
 * inspect.signature() and help() show it, on every version since 3.4). */
#include "bridge.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct reader {
  const char *text, *p;
  char why[160]; /* what is wrong, when something is */
};

static void skip_ws(struct reader *r) {
  while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n') r->p++;
}

static int fail(struct reader *r, const char *what) {
  if (!r->why[0])
    pyhost__fmt(r->why, sizeof r->why, "%s at column %d", what, (int)(r->p - r->text) + 1);
  return -1;
}

/* An identifier [A-Za-z_][A-Za-z0-9_]*: its length (0 when there is none). */
static size_t ident(struct reader *r) {
  const char *s = r->p;
  if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
  while (isalnum((unsigned char)*s) || *s == '_') s++;
  return (size_t)(s - r->p);
}

static int word_is(const char *p, size_t n, const char *w) {
  return strlen(w) == n && memcmp(p, w, n) == 0;
}

static int type_of(const char *p, size_t n) {
  static const struct { const char *name; int kind; } types[] = {
      {"int", PYHOST_ARG_INT},   {"float", PYHOST_ARG_FLOAT}, {"bool", PYHOST_ARG_BOOL},
      {"str", PYHOST_ARG_STR},   {"bytes", PYHOST_ARG_BYTES}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (word_is(p, n, types[i].name)) return types[i].kind;
  return -1;
}

/* The default after "=": into p->dflt (a string's text is copied to *strings), its
 * source text kept for the docstring. */
static int read_default(struct reader *r, struct pyhost__param *p, char **strings) {
  const char *s = r->p;
  size_t n = ident(r);
  p->dflt = pyhost_arg_none();
  if (n) {
    if (word_is(s, n, "None")) p->dflt_none = 1;
    else if (word_is(s, n, "True") || word_is(s, n, "False")) p->dflt = pyhost_arg_bool(s[0] == 'T');
    else return fail(r, "a default must be None, True, False, a number or a string");
    r->p += n;
  } else if (*s == '\'' || *s == '"') {
    const char *end = strchr(s + 1, *s);
    if (!end || memchr(s + 1, '\\', (size_t)(end - s - 1)) || memchr(s + 1, '\n', (size_t)(end - s - 1)))
      return fail(r, "a string default needs its closing quote, on one line, without backslashes");
    size_t len = (size_t)(end - s - 1);
    memcpy(*strings, s + 1, len);
    (*strings)[len] = 0;
    p->dflt = pyhost_arg_str(*strings, len);
    *strings += len + 1;
    r->p = end + 1;
  } else {
    char *end;
    long long i = strtoll(s, &end, 10);
    const char *iend = end;
    double d = strtod(s, &end);
    if (end == s) return fail(r, "a default must be None, True, False, a number or a string");
    p->dflt = end == iend ? pyhost_arg_int(i) : pyhost_arg_float(d);
    r->p = end;
  }
  if (p->dflt_none) return 0;
  if (p->kind == PYHOST_ARG_FLOAT && p->dflt.kind == PYHOST_ARG_INT)
    p->dflt = pyhost_arg_float((double)p->dflt.u.i);
  if (p->dflt.kind != p->kind) return fail(r, "the default does not have the parameter's type");
  return 0;
}

/* One parameter "name: type [= default]" into p. */
static int read_param(struct reader *r, struct pyhost__param *p, char **names, char **strings) {
  size_t n = ident(r);
  if (!n) return fail(r, "expected a parameter name, '/' or '*'");
  memcpy(*names, r->p, n);
  (*names)[n] = 0;
  p->name = *names;
  *names += n + 1;
  r->p += n;
  skip_ws(r);
  if (*r->p != ':') return fail(r, "expected ':' and the parameter's type");
  r->p++;
  skip_ws(r);
  n = ident(r);
  if ((p->kind = type_of(r->p, n)) < 0)
    return fail(r, "the type must be int, float, bool, str or bytes");
  r->p += n;
  skip_ws(r);
  p->has_default = *r->p == '=';
  if (p->has_default) {
    r->p++;
    skip_ws(r);
    const char *from = r->p;
    if (read_default(r, p, strings) < 0) return -1;
    p->dflt_text = from;
    p->dflt_len = (size_t)(r->p - from);
  }
  return 0;
}

/* The parameter list between the parentheses into s. */
static int read_params(struct reader *r, struct pyhost__sig *s, char *names, char *strings) {
  int slash = 0, star = 0, defaults = 0;
  skip_ws(r);
  while (*r->p != ')') {
    if (*r->p == '/' || *r->p == '*') {
      if (*r->p == '/' && (slash || star || s->n == 0)) return fail(r, "misplaced '/'");
      if (*r->p == '*' && star) return fail(r, "a second '*'");
      if (*r->p == '/') slash = 1, s->nposonly = s->n;
      else star = 1, s->npos = s->n;
      r->p++;
    } else {
      if (s->n == PYHOST__SIG_MAX) return fail(r, "more parameters than pyhost takes (16)");
      struct pyhost__param *p = &s->p[s->n];
      if (read_param(r, p, &names, &strings) < 0) return -1;
      for (size_t j = 0; j < s->n; j++)
        if (strcmp(s->p[j].name, p->name) == 0) return fail(r, "a parameter named twice");
      if (!star && defaults && !p->has_default)
        return fail(r, "a parameter without a default follows one with a default");
      defaults |= p->has_default;
      s->borrows_bytes |= p->kind == PYHOST_ARG_BYTES;
      p->kwonly = (unsigned char)star;
      s->n++;
    }
    skip_ws(r);
    if (*r->p == ',') {
      r->p++;
      skip_ws(r);
    } else if (*r->p != ')') {
      return fail(r, "expected ',' or ')'");
    }
  }
  if (star && s->npos == s->n) return fail(r, "'*' must be followed by a parameter");
  if (!star) s->npos = s->n;
  s->n_all_positional = s->npos == s->n ? s->n : SIZE_MAX;
  for (size_t j = 0; j < s->nposonly; j++) s->p[j].posonly = 1;
  return 0;
}

/* The docstring: "name(a, b=1, /, *, c=None)\n--\n\n" and the host's doc. */
static char *docstring(const struct pyhost__sig *s, const char *name, size_t namelen,
                       const char *doc, int method) {
  size_t cap = namelen + 24 + (doc ? strlen(doc) : 0);
  for (size_t j = 0; j < s->n; j++) cap += strlen(s->p[j].name) + s->p[j].dflt_len + 8;
  char *out = pyhost__malloc(cap);
  if (!out) return NULL;
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  pyhost__strbuf_printf(&sb, "%.*s(%s", (int)namelen, name,
                        method ? (s->n ? "$self, " : "$self") : "");
  for (size_t j = 0; j < s->n; j++) {
    const struct pyhost__param *p = &s->p[j];
    if (j == s->npos) pyhost__strbuf_printf(&sb, "*, ");
    pyhost__strbuf_printf(&sb, "%s", p->name);
    if (p->has_default) pyhost__strbuf_printf(&sb, "=%.*s", (int)p->dflt_len, p->dflt_text);
    if (j + 1 == s->nposonly) pyhost__strbuf_printf(&sb, ", /");
    if (j + 1 < s->n) pyhost__strbuf_printf(&sb, ", ");
  }
  pyhost__strbuf_printf(&sb, ")\n--\n\n%s", doc ? doc : "");
  return out;
}

int pyhost__sig_new_as(pyhost *h, const char *text, const char *doc, const char *fn,
                       int method, struct pyhost__sig **out) {
  *out = NULL;
  if (!text) return pyhost__set_error(h, PYHOST_MISUSE, "%s: signature is NULL", fn);
  size_t len = strlen(text);
  /* names and string defaults are copied after the struct: each fits in the text */
  struct pyhost__sig *s = pyhost__calloc(1, sizeof *s + 2 * (len + 1));
  if (!s) return pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
  char *names = (char *)(s + 1), *strings = names + len + 1;
  struct reader r = {text, text, ""};
  skip_ws(&r);
  size_t namelen = ident(&r);
  const char *name = r.p;
  if (!namelen) {
    fail(&r, "expected the function's name");
  } else {
    memcpy(names, name, namelen);
    s->name = names;
    names += namelen + 1;
    r.p += namelen;
    skip_ws(&r);
    if (*r.p != '(') fail(&r, "expected '('");
    else if (r.p++, read_params(&r, s, names, strings) == 0) {
      r.p++;
      skip_ws(&r);
      if (*r.p) fail(&r, "unexpected text after ')'");
    }
  }
  if (r.why[0]) {
    pyhost__free(s);
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: signature \"%s\": %s", fn, text, r.why);
  }
  if (!(s->doc = docstring(s, name, namelen, doc, method))) {
    pyhost__free(s);
    return pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
  }
  *out = s;
  return PYHOST_OK;
}

char *pyhost__sig_text(const struct pyhost__sig *s) {
  const char *open = strchr(s->doc, '('), *end = strstr(s->doc, ")\n--\n\n");
  size_t len = (size_t)(end - open) + 1;
  char *out = pyhost__malloc(len + 1);
  if (!out) return NULL;
  memcpy(out, open, len);
  out[len] = 0;
  return out;
}

int pyhost__sig_intern(struct pyhost__sig *s) {
  for (size_t j = 0; j < s->n; j++)
    s->quick_type[j] = s->p[j].kind == PYHOST_ARG_INT     ? PY.PyLong_Type
                       : s->p[j].kind == PYHOST_ARG_FLOAT ? PY.PyFloat_Type
                                                          : NULL;
  for (size_t j = 0; j < s->n; j++)
    if (!s->p[j].pyname && !(s->p[j].pyname = PY.PyUnicode_InternFromString(s->p[j].name)))
      return -1;
  return 0;
}

void pyhost__sig_release(struct pyhost__sig *s) {
  if (!s) return;
  if (s->kw_names) PY.Py_DecRef(s->kw_names);
  s->kw_names = NULL;
  for (size_t j = 0; j < s->n; j++) {
    if (s->p[j].pyname) PY.Py_DecRef(s->p[j].pyname);
    s->p[j].pyname = NULL;
  }
}

void pyhost__sig_free(struct pyhost__sig *s) {
  if (!s) return;
  pyhost__free(s->doc);
  pyhost__free(s);
}
