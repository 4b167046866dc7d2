/* signature.c: the declared signature of a typed host function (see pyhost.h,
 * "host functions with declared arguments"), read once at registration:
 *
 *   name(x: int, y: float = 2.5, /, *, label: str = None)
 *
 * Parameters are ASCII identifiers with one of the types int, float, bool, str,
 * bytes, buffer, rwbuffer, and an optional default (None, True, False, an int, a float or a quoted
 * string without backslashes); "/" ends the positional-only ones and "*" starts the
 * keyword-only ones, as in Python.  The result is a struct pyhost__sig that
 * typedargs.c binds each call against, and the builtin's docstring, whose first line
 * "name(...)\n--\n\n" is what CPython reads as __text_signature__ (so
 * inspect.signature() and help() show it, on every version since 3.4). */
#include "bridge.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct reader {
  const char *text, *p;
  int method;    /* a method's: its docstring's signature starts with "$self" */
  char why[160]; /* what is wrong, when something is */
  int nomem;     /* ...and it is not the text: an allocation failed */
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

/* 1 when p[0 .. n) is a Python keyword (a parameter of that name would make the
 * signature Python reads back invalid, and could never be passed by name). */
static int is_keyword(const char *p, size_t n) {
  static const char *const words[] = {
      "False", "None",   "True",     "and",      "as",   "assert", "async",  "await",
      "break", "class",  "continue", "def",      "del",  "elif",   "else",   "except",
      "finally", "for",  "from",     "global",   "if",   "import", "in",     "is",
      "lambda", "nonlocal", "not",   "or",       "pass", "raise",  "return", "try",
      "while", "with",   "yield"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (word_is(p, n, words[i])) return 1;
  return 0;
}

/* The parameter's kind (and a buffer's view flags) from its type's name, or -1.  The
 * buffer types are Argument Clinic's names for CPython's own: a C-contiguous buffer
 * read in place, and one the callback may write. */
static int type_of(const char *p, size_t n, unsigned *view_flags) {
  static const struct { const char *name; int kind; unsigned flags; } types[] = {
      {"int", PYHOST_ARG_INT, 0},   {"float", PYHOST_ARG_FLOAT, 0},
      {"bool", PYHOST_ARG_BOOL, 0}, {"str", PYHOST_ARG_STR, 0},
      {"bytes", PYHOST_ARG_BYTES, 0},
      {"buffer", PYHOST_ARG_VIEW, PYHOST_VIEW_CONTIGUOUS},
      {"rwbuffer", PYHOST_ARG_VIEW, PYHOST_VIEW_CONTIGUOUS | PYHOST_VIEW_WRITABLE}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (word_is(p, n, types[i].name)) {
      *view_flags = types[i].flags;
      return types[i].kind;
    }
  return -1;
}

/* The length of the UTF-8 sequence at p (at most n bytes) as Python's strict decoder
 * takes it, or 0 (a stray byte, an overlong form, a surrogate, past U+10FFFF). */
static size_t utf8_char(const unsigned char *p, size_t n) {
  if (p[0] < 0x80) return 1;
  size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
  if (!len || len > n || p[0] > 0xF4) return 0;
  for (size_t i = 1; i < len; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) ||
      (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))
    return 0;
  return len;
}

/* A string default's text s[0 .. len): 1 when Python reads it back as the same string
 * (inspect.signature parses the docstring's text as a literal): UTF-8, and no control
 * character but a tab (a line end would end the literal). */
static int carries_exactly(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < len;) {
    if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7F) return 0;
    size_t n = utf8_char(p + i, len - i);
    if (!n) return 0;
    i += n;
  }
  return 1;
}

/* The double nearest to the decimal literal s[0 .. len) (digits, '.', an exponent;
 * checked already): strtod on a copy that has the C library's decimal point for '.',
 * which the host's locale may have changed.  -1 when out of memory. */
static int decimal_value(const char *s, size_t len, double *out) {
  const char *point = localeconv()->decimal_point;
  size_t plen = point && *point ? strlen(point) : 1;
  char *copy = pyhost__malloc(len * plen + 1), *q = copy;
  if (!copy) return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.' && point && *point) {
      memcpy(q, point, plen);
      q += plen;
    } else {
      *q++ = s[i];
    }
  }
  *q = 0;
  *out = strtod(copy, NULL);
  pyhost__free(copy);
  return 0;
}

/* A number default, as Python writes a decimal literal (an optional sign, which
 * inspect reads as a unary operator): into p->dflt, exactly as Python reads the same
 * text, or refused naming what cannot be carried.  An int parameter takes an int
 * literal within 64 bits; a float parameter any number, rounded to the nearest double
 * as Python rounds it (an int literal too: the parameter reads an int so). */
static int read_number(struct reader *r, struct pyhost__param *p) {
  const char *s = r->p, *q = s;
  int neg = *q == '-';
  if (*q == '+' || *q == '-') q++;
  const char *digits = q;
  while (isdigit((unsigned char)*q)) q++;
  size_t nint = (size_t)(q - digits);
  int is_float = *q == '.';
  if (is_float) {
    q++;
    while (isdigit((unsigned char)*q)) q++;
  }
  if (nint == 0 && (size_t)(q - digits) <= 1) {
    if (isalpha((unsigned char)*q)) {
      r->p = q;
      return fail(r, "a default must be None, True, False, a number or a string (inf and nan "
                     "have no literal that Python reads back)");
    }
    return fail(r, "a default must be None, True, False, a number or a string");
  }
  if (*q == 'e' || *q == 'E') {
    is_float = 1;
    q++;
    if (*q == '+' || *q == '-') q++;
    if (!isdigit((unsigned char)*q)) {
      r->p = q;
      return fail(r, "an exponent needs its digits");
    }
    while (isdigit((unsigned char)*q)) q++;
  }
  if (isalnum((unsigned char)*q) || *q == '_' || *q == '.') {
    r->p = q;
    return fail(r, "a number default is decimal digits, a '.' and an exponent (no hex, no "
                   "'_', no suffix)");
  }
  if (!is_float && nint > 1 && digits[0] == '0') {
    for (const char *z = digits; z < q; z++)
      if (*z != '0') return fail(r, "an int default with a leading zero, which Python refuses");
  }
  if (p->kind == PYHOST_ARG_FLOAT) {
    double d;
    if (decimal_value(s, (size_t)(q - s), &d) < 0) return r->nomem = 1, fail(r, "out of memory");
    if (isinf(d)) return fail(r, "a float default beyond the range of a double");
    p->dflt = pyhost_arg_float(d);
  } else if (!is_float) {
    /* the digits, exactly: an int default beyond 64 bits would reach the callback as
     * another number than the one Python shows */
    uint64_t v = 0, limit = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
    for (const char *z = digits; z < q; z++) {
      unsigned d = (unsigned)(*z - '0');
      if (v > (limit - d) / 10) return fail(r, "an int default beyond 64 bits");
      v = v * 10 + d;
    }
    p->dflt = pyhost_arg_int(neg ? (int64_t)(0 - v) : (int64_t)v);
  } else {
    p->dflt = pyhost_arg_float(0); /* a float for a parameter of another type */
  }
  r->p = q;
  return 0;
}

/* The default after "=": into p->dflt (a string's text is copied to *strings), its
 * source text kept for the docstring, which Python reads back (inspect.signature): a
 * default is taken only when that reads the value the callback gets. */
static int read_default(struct reader *r, struct pyhost__param *p, char **strings) {
  const char *s = r->p;
  size_t n = ident(r);
  p->dflt = pyhost_arg_none();
  if (n) {
    if (word_is(s, n, "None")) p->dflt_none = 1;
    else if (word_is(s, n, "True") || word_is(s, n, "False")) p->dflt = pyhost_arg_bool(s[0] == 'T');
    else if (word_is(s, n, "inf") || word_is(s, n, "nan"))
      return fail(r, "a default must be None, True, False, a number or a string (inf and nan "
                     "have no literal that Python reads back)");
    else return fail(r, "a default must be None, True, False, a number or a string");
    r->p += n;
  } else if (*s == '\'' || *s == '"') {
    const char *end = strchr(s + 1, *s);
    if (!end || memchr(s + 1, '\\', (size_t)(end - s - 1)) || memchr(s + 1, '\n', (size_t)(end - s - 1)))
      return fail(r, "a string default needs its closing quote, on one line, without backslashes");
    size_t len = (size_t)(end - s - 1);
    if (!carries_exactly(s + 1, len))
      return fail(r, "a string default must be UTF-8 without control characters");
    memcpy(*strings, s + 1, len);
    (*strings)[len] = 0;
    p->dflt = pyhost_arg_str(*strings, len);
    *strings += len + 1;
    r->p = end + 1;
  } else if (read_number(r, p) < 0) {
    return -1;
  }
  if (p->dflt_none) return 0;
  if (p->dflt.kind != p->kind) {
    r->p = s;
    return fail(r, "the default does not have the parameter's type");
  }
  return 0;
}

/* One parameter "name: type [= default]" into p. */
static int read_param(struct reader *r, struct pyhost__param *p, char **names, char **strings) {
  size_t n = ident(r);
  if (!n) return fail(r, "expected a parameter name, '/' or '*'");
  if (is_keyword(r->p, n)) return fail(r, "a parameter named with a Python keyword");
  if (r->method && word_is(r->p, n, "self"))
    return fail(r, "a method's parameter named self (the instance is self)");
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
  if ((p->kind = type_of(r->p, n, &p->view_flags)) < 0)
    return fail(r, "the type must be int, float, bool, str, bytes, buffer or rwbuffer");
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
      s->lends_views |= p->kind == PYHOST_ARG_VIEW;
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
/* A string default's literal as the docstring writes it: inspect reads a signature as
 * ASCII, so a character past ASCII (and a tab) goes as its escape, which Python reads
 * back as the same character. */
static void string_literal(struct pyhost__strbuf *sb, const struct pyhost__param *p) {
  const unsigned char *t = (const unsigned char *)p->dflt.u.s;
  char quote = p->dflt_text[0];
  pyhost__strbuf_printf(sb, "%c", quote);
  for (size_t i = 0; i < p->dflt.len;) {
    size_t n = utf8_char(t + i, p->dflt.len - i); /* valid: carries_exactly said so */
    if (n == 1) {
      if (t[i] == '\t') pyhost__strbuf_printf(sb, "\\t");
      else pyhost__strbuf_printf(sb, "%c", t[i]);
    } else {
      unsigned long c = t[i] & (0x7F >> n);
      for (size_t k = 1; k < n; k++) c = (c << 6) | (t[i + k] & 0x3F);
      if (c > 0xFFFF) pyhost__strbuf_printf(sb, "\\U%08lx", c);
      else pyhost__strbuf_printf(sb, "\\u%04lx", c);
    }
    i += n;
  }
  pyhost__strbuf_printf(sb, "%c", quote);
}

static char *docstring(const struct pyhost__sig *s, const char *name, size_t namelen,
                       const char *doc, int method) {
  size_t cap = namelen + 24 + (doc ? strlen(doc) : 0);
  /* (an escape is at most 3 times the bytes it stands for) */
  for (size_t j = 0; j < s->n; j++) cap += strlen(s->p[j].name) + 3 * s->p[j].dflt_len + 8;
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
    if (p->has_default && p->dflt.kind == PYHOST_ARG_STR) {
      pyhost__strbuf_printf(&sb, "=");
      string_literal(&sb, p);
    } else if (p->has_default) {
      pyhost__strbuf_printf(&sb, "=%.*s", (int)p->dflt_len, p->dflt_text);
    }
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
  struct reader r = {text, text, method, "", 0};
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
    return pyhost__set_error(h, r.nomem ? PYHOST_NOMEM : PYHOST_MISUSE, "%s: signature \"%s\": %s",
                             fn, text, r.why);
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
                       /* a str's UTF-8 borrowed from it: the stable ABI's from 3.10 */
                       : s->p[j].kind == PYHOST_ARG_STR && pyhost__runtime_at_least(3, 10)
                           ? PY.PyUnicode_Type
                           : NULL;
  for (size_t j = 0; j < s->n; j++)
    if (!s->p[j].pyname && !(s->p[j].pyname = PY.PyUnicode_InternFromString(s->p[j].name)))
      return -1;
  return 0;
}

void pyhost__sig_release(struct pyhost__sig *s) {
  PYHOST__ASSERT_GIL();
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
