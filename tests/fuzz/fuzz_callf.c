/* fuzz_callf.c: libFuzzer target for the calls in one line (issue 39):
 * pyhost_prepared_callf and pyhost_call_namef with a format of any text, made as real
 * variadic calls (libffi builds each one from the format, so every letter reaches
 * pyhost with the C type it names), on Python functions whose results are known, on a
 * typed host function, and on an expression of the input's own prepared with
 * pyhost_prepare_expression.
 *
 * Input: byte 0: the callee (bits 0-2) and which result a Python callee returns (bits
 * 3-7); byte 1: flags (bit 0: a NULL result pointer; bit 1: pass the last borrowed
 * result as each s argument); then the format, the expression's inputs and the
 * expression, each up to a NUL; the rest feeds the arguments.  Three calls of the same
 * callable follow one another.
 *
 * Checks, against a reading of the format of this file's own (the header's grammar):
 * a format it refuses is PYHOST_MISUSE naming a column, and one pyhost refuses it
 * refuses too; a call with a bad argument or a NULL result pointer fails; every output
 * is written only on PYHOST_OK; a result is what the callee returned under the rules of
 * pyhost_prepared_call_int and friends (status and value); the arguments reach Python as
 * they were given; a borrowed result (>s, >y) reads the same until the callable's next
 * callf returns and may be that call's argument. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "fuzz_python.h"

#include <ffi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 16, FMT_MAX = 96, EXPR_MAX = 160 };

static pyhost *h;
static pyhost_value *pool[6]; /* O arguments */
static pyhost_buffer *loan; /* m arguments: host memory lent for the process */

static void die(const char *what, const char *fmt, const char *detail) {
  fprintf(stderr, "fuzz_callf: %s\nformat: \"%s\"\n%s\n", what, fmt, detail ? detail : "");
  abort();
}

/* ---- what the Python callees return, and what each result letter reads of it ---- */

enum rkind { R_ECHO, R_STR, R_BYTES, R_INT, R_FLOAT, R_BOOL, R_NONE, R_RAISE, R_BADSTR, R_OBJECT };

static const struct result {
  const char *src; /* a lambda's body */
  enum rkind kind;
  int64_t i;       /* R_INT, R_BOOL: the value */
  int fits;        /* R_INT: 0 within int, 1 within int64, 2 within a double, 3 beyond */
  double d;        /* R_INT, R_FLOAT: the value as a double */
  const char *text;
  size_t len;
} results[] = {
    {"(a, k)", R_ECHO, 0, 0, 0, NULL, 0},
    {"'x' * 40", R_STR, 0, 0, 0, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 40},
    {"'h\\u00e9\\0!'", R_STR, 0, 0, 0, "h\xc3\xa9\0!", 5},
    {"b'\\0\\xff' * 3", R_BYTES, 0, 0, 0, "\0\xff\0\xff\0\xff", 6},
    {"2 ** 31 - 1", R_INT, 2147483647, 0, 2147483647.0, NULL, 0},
    {"-2 ** 31", R_INT, -2147483647 - 1, 0, -2147483648.0, NULL, 0},
    {"2 ** 31", R_INT, 2147483648, 1, 2147483648.0, NULL, 0},
    {"-2 ** 63", R_INT, INT64_MIN, 1, -9223372036854775808.0, NULL, 0},
    {"2 ** 63", R_INT, 0, 2, 9223372036854775808.0, NULL, 0},
    {"IntSub(7)", R_INT, 7, 0, 7.0, NULL, 0},
    {"1.5", R_FLOAT, 0, 0, 1.5, NULL, 0},
    {"FloatSub(-0.0)", R_FLOAT, 0, 0, -0.0, NULL, 0},
    {"True", R_BOOL, 1, 0, 0, NULL, 0},
    {"None", R_NONE, 0, 0, 0, NULL, 0},
    {"boom()", R_RAISE, 0, 0, 0, NULL, 0},
    {"'\\ud800'", R_BADSTR, 0, 0, 0, NULL, 0},
    {"object()", R_OBJECT, 0, 0, 0, NULL, 0},
    {"2 ** 1100", R_INT, 0, 3, 0, NULL, 0},
};
enum { NRESULTS = sizeof results / sizeof results[0] };

/* ---- the format, read as pyhost.h says ---- */

struct plan {
  size_t n, npos;
  char letter[MAX_ARGS];
  const char *name[MAX_ARGS];
  size_t namelen[MAX_ARGS];
  char rtype;
};

static int name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* 1 when fmt is a format the header describes, into *p. */
static int read_plan(const char *fmt, struct plan *p) {
  memset(p, 0, sizeof *p);
  const char *c = fmt;
  for (; *c && *c != '>'; c++) {
    if (*c == ' ') continue;
    const char *name = NULL;
    if (*c == ',') {
      for (c++; *c == ' '; c++) {
      }
      name = c;
      while (name_char(*c)) c++;
      if (c == name || *c != '=' || p->n == MAX_ARGS) return 0;
      p->name[p->n] = name;
      p->namelen[p->n] = (size_t)(c - name);
      c++;
    } else if (p->n > p->npos) {
      return 0; /* a positional argument after a keyword */
    }
    if (p->n == MAX_ARGS || !*c || !strchr("iLdbnszyOm", *c)) return 0;
    p->letter[p->n++] = *c;
    if (!name) p->npos++;
  }
  if (*c == '>') {
    p->rtype = c[1];
    if (!p->rtype || !strchr("iLdbOsyow", p->rtype) || c[2]) return 0;
  }
  return 1;
}

/* ---- the arguments ---- */

struct feed {
  const uint8_t *p;
  size_t n;
};

static uint64_t take(struct feed *f, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; i++) {
    v = v << 8 | (f->n ? *f->p : 0);
    if (f->n) f->p++, f->n--;
  }
  return v;
}

static const struct text {
  const char *s;
  size_t len;
  int utf8; /* Python decodes it */
} texts[] = {
    {"abc", 3, 1}, {"", 0, 1}, {"h\xc3\xa9\xe2\x82\xac", 6, 1}, {"\xff\xfe", 2, 0},
    {"a\0b", 3, 1}, {"\xed\xa0\x80", 3, 0}, {NULL, 0, 1}, {NULL, 3, 0}, {"\xc3", 1, 0},
};
enum { NTEXTS = sizeof texts / sizeof texts[0] };

/* One call's arguments, where libffi reads them. */
struct args {
  ffi_type *types[3 + 2 * MAX_ARGS + 2];
  void *values[3 + 2 * MAX_ARGS + 2];
  size_t n;
  int ints[MAX_ARGS];
  int64_t longs[MAX_ARGS];
  double doubles[MAX_ARGS];
  const void *ptrs[MAX_ARGS];
  size_t lens[MAX_ARGS];
  int bad;          /* an argument pyhost must refuse */
  const char *fixed[3];
  void *out, *out_len;
};

static void push(struct args *a, ffi_type *t, void *v) {
  a->types[a->n] = t;
  a->values[a->n++] = v;
}

static void make_args(struct args *a, const struct plan *p, struct feed *f, const char *borrowed,
                      int reuse) {
  for (size_t i = 0; i < p->n; i++) {
    const struct text *t = &texts[take(f, 1) % NTEXTS];
    switch (p->letter[i]) {
    case 'i': a->ints[i] = (int)(uint32_t)take(f, 4); push(a, &ffi_type_sint, &a->ints[i]); break;
    case 'b': a->ints[i] = (int)(int8_t)take(f, 1); push(a, &ffi_type_sint, &a->ints[i]); break;
    case 'L': a->longs[i] = (int64_t)take(f, 8); push(a, &ffi_type_sint64, &a->longs[i]); break;
    case 'd': {
      uint64_t bits = take(f, 8);
      memcpy(&a->doubles[i], &bits, sizeof bits);
      push(a, &ffi_type_double, &a->doubles[i]);
      break;
    }
    case 'n': break;
    case 'm': /* a loan of host memory, or NULL (refused) */
      a->ptrs[i] = take(f, 1) % 4 ? loan : NULL;
      a->bad |= !a->ptrs[i];
      push(a, &ffi_type_pointer, &a->ptrs[i]);
      break;
    case 's':
      a->ptrs[i] = reuse && borrowed ? borrowed : t->s ? t->s : "none";
      a->bad |= !(reuse && borrowed) && !t->utf8 && t->s;
      push(a, &ffi_type_pointer, &a->ptrs[i]);
      break;
    case 'z':
    case 'y':
      a->ptrs[i] = t->s;
      a->lens[i] = t->len;
      a->bad |= !t->s && t->len;                        /* NULL with a length */
      a->bad |= p->letter[i] == 'z' && t->s && !t->utf8; /* not UTF-8 */
      push(a, &ffi_type_pointer, &a->ptrs[i]);
      push(a, &ffi_type_uint64, &a->lens[i]);
      break;
    default: /* 'O' */
      a->ptrs[i] = pool[take(f, 1) % 6];
      push(a, &ffi_type_pointer, &a->ptrs[i]);
    }
  }
}

/* ---- checks of a result ---- */

static int is_int(const pyhost_value *v, int64_t want) {
  int64_t i;
  return pyhost_value_kind(v) == PYHOST_KIND_INT && !pyhost_value_to_int(NULL, v, &i) && i == want;
}

/* An echoed argument i (a[i] or k[name]) against what the call passed. */
static int same_arg(const pyhost_value *v, char t, const struct args *a, size_t i) {
  const char *s;
  const void *d;
  size_t n;
  double x;
  int b;
  switch (t) {
  case 'i': return is_int(v, a->ints[i]);
  case 'L': return is_int(v, a->longs[i]);
  case 'b': return !pyhost_value_to_bool(NULL, v, &b) && b == (a->ints[i] != 0);
  case 'd':
    return !pyhost_value_to_float(NULL, v, &x) &&
           (memcmp(&x, &a->doubles[i], sizeof x) == 0 || (isnan(x) && isnan(a->doubles[i])));
  case 'n': return pyhost_value_kind(v) == PYHOST_KIND_NONE;
  case 's':
    return !pyhost_value_to_str(NULL, v, &s, &n) && n == strlen(a->ptrs[i]) &&
           !memcmp(s, a->ptrs[i], n);
  case 'z':
    return !pyhost_value_to_str(NULL, v, &s, &n) && n == a->lens[i] && (!n || !memcmp(s, a->ptrs[i], n));
  case 'y':
    return !pyhost_value_to_bytes(NULL, v, &d, &n) && n == a->lens[i] && (!n || !memcmp(d, a->ptrs[i], n));
  case 'm': return pyhost_value_kind(v) == PYHOST_KIND_OBJECT; /* the loan's memoryview */
  default: return 1; /* 'O': its own conversions are fuzz_values' */
  }
}

static void check_echo(const pyhost_value *r, const struct plan *p, const struct args *a,
                       const char *fmt) {
  const pyhost_value *pos = pyhost_value_item(r, 0), *kw = pyhost_value_item(r, 1);
  if (pyhost_value_kind(r) != PYHOST_KIND_TUPLE || pyhost_value_count(pos) != p->npos)
    die("the positional arguments did not arrive as passed", fmt, NULL);
  for (size_t i = 0; i < p->n; i++) {
    const pyhost_value *v = NULL;
    if (i < p->npos) {
      v = pyhost_value_item(pos, i);
    } else {
      char name[FMT_MAX + 1];
      snprintf(name, sizeof name, "%.*s", (int)p->namelen[i], p->name[i]);
      v = pyhost_value_lookup(kw, name);
      for (size_t j = i + 1; j < p->n; j++) /* a name given twice: the last one counts */
        if (p->namelen[j] == p->namelen[i] && !memcmp(p->name[j], p->name[i], p->namelen[i])) v = NULL;
    }
    if (v && !same_arg(v, p->letter[i], a, i)) die("an argument did not arrive as passed", fmt, NULL);
  }
}

/* The status a Python callee's result gives for letter t, and its checks on OK. */
static int expected_status(const struct result *r, char t) {
  switch (t) {
  case 0: return PYHOST_OK;
  case 'i':
  case 'L':
    if (r->kind != R_INT) return PYHOST_TYPE;
    return r->fits >= 2 || (t == 'i' && r->fits == 1) ? PYHOST_RANGE : PYHOST_OK;
  case 'd':
    if (r->kind == R_FLOAT) return PYHOST_OK;
    if (r->kind != R_INT) return PYHOST_TYPE;
    return r->fits == 3 ? PYHOST_RANGE : PYHOST_OK;
  case 'b': return r->kind == R_BOOL ? PYHOST_OK : PYHOST_TYPE;
  case 's': return r->kind == R_STR ? PYHOST_OK : r->kind == R_BADSTR ? PYHOST_PYEXC : PYHOST_TYPE;
  case 'y': return r->kind == R_BYTES ? PYHOST_OK : PYHOST_TYPE;
  case 'o': return PYHOST_OK; /* the object itself, never converted */
  case 'w': return r->kind == R_BYTES ? PYHOST_OK : r->kind == R_ECHO ? -1 : PYHOST_TYPE;
  default: return r->kind == R_BADSTR ? -1 : PYHOST_OK; /* 'O' */
  }
}

/* ---- one unit ---- */

/* Where a call writes its result, of any result type. */
union out_slot {
  int i;
  int64_t L;
  double d;
  pyhost_value *v;
  const char *s;
  pyhost_view w;
};

struct borrowed {
  const char *p;
  size_t len;
  char rtype;
  char copy[64];
};

/* 1 when two keyword arguments have one name (Python's calls refuse that from 3.12,
 * where the names go as a tuple; before, a dict keeps the last). */
static int names_repeat(const struct plan *p) {
  for (size_t i = p->npos; i < p->n; i++)
    for (size_t j = i + 1; j < p->n; j++)
      if (p->namelen[i] == p->namelen[j] && !memcmp(p->name[i], p->name[j], p->namelen[i])) return 1;
  return 0;
}

/* cz.tz: a typed host function, its result a str */
static int tz(pyhost *hh, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  if (argv[2].kind == PYHOST_ARG_STR && strlen(argv[2].u.s) > argv[2].len) abort();
  return pyhost_ret_str(hh, ret, "tz", PYHOST_STRLEN);
}

static const char *field(struct feed *f, char *buf, size_t cap) {
  size_t n = 0;
  while (f->n && *f->p && n + 1 < cap) buf[n++] = (char)*f->p++, f->n--;
  if (f->n) f->p++, f->n--; /* the NUL */
  buf[n] = '\0';
  return buf;
}

/* Expressions with named inputs run in the real builtins: only words from this list,
 * no dunder, no string prefix (an f-string holds code), small numbers only. */
static int harmless(const char *e) {
  static const char *const words[] = {
      "if", "else", "and", "or", "not", "in", "is", "for", "lambda", "None", "True", "False",
      "len", "str", "int", "float", "bytes", "tuple", "list", "dict", "abs", "min", "max",
      "bool", "repr", "sorted", "upper", "lower", "join", "split", "real", "imag", "keys",
      "items", "values", "get", "count", "encode", "decode", "x", "y", "z", "a", "b", "k"};
  if (strstr(e, "__") || strstr(e, "**") || strstr(e, "<<")) return 0;
  for (const char *p = e; *p;) {
    if ((unsigned char)*p >= 0x80) return 0;
    if (p[0] >= '0' && p[0] <= '9') {
      const char *q = p;
      while ((*q >= '0' && *q <= '9') || *q == '_') q++;
      if (q - p > 4) return 0;
      while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')) q++;
      p = q;
      continue;
    }
    if (name_char(*p)) {
      const char *q = p;
      while (name_char(*q)) q++;
      if (*q == '\'' || *q == '"') return 0; /* a string prefix */
      size_t n = (size_t)(q - p), k = 0;
      while (k < sizeof words / sizeof words[0] && (strlen(words[k]) != n || memcmp(words[k], p, n))) k++;
      if (k == sizeof words / sizeof words[0]) return 0;
      p = q;
      continue;
    }
    p++;
  }
  return 1;
}

static void setup(void) {
  h = fuzz_python_full();
  static pyhost_module *m; /* kept for the process */
  int rc = pyhost_exec(h,
                       "class IntSub(int):\n"
                       "    def __index__(s): raise AssertionError('__index__ ran')\n"
                       "    def __int__(s): raise AssertionError('__int__ ran')\n"
                       "class FloatSub(float):\n"
                       "    def __float__(s): raise AssertionError('__float__ ran')\n"
                       "def boom(): raise ValueError('boom')\n",
                       "<fuzz setup>");
  char src[256];
  for (size_t i = 0; !rc && i < NRESULTS; i++) {
    snprintf(src, sizeof src, "R%zu = lambda *a, **k: %s\n", i, results[i].src);
    rc = pyhost_exec(h, src, "<fuzz setup>");
  }
  if (!rc) rc = pyhost_module_new(h, "cz", NULL, &m);
  if (!rc)
    rc = pyhost_module_add_typed_function(
        h, m, "tz(a: int = 0, b: float = 0.0, s: str = '', y: bytes = None, *, k: bool = False)",
        tz, NULL, NULL);
  if (!rc) rc = pyhost_exec(h, "import cz", "<fuzz setup>");
  if (rc) die("setup", "", pyhost_errmsg(h));
  static unsigned char lent[12] = "host memory";
  pyhost_buffer_spec spec = {lent, "B", 1, {sizeof lent}, 0, NULL, NULL};
  if (pyhost_buffer_new(h, &spec, &loan)) die("setup", "a loan", pyhost_errmsg(h));
  pool[1] = pyhost_value_int(-5);
  pool[2] = pyhost_value_str("h\xc3\xa9", PYHOST_STRLEN);
  pool[3] = pyhost_value_list();
  pyhost_value_append(pool[3], pyhost_value_bytes("\0", 1));
  pyhost_eval(h, "IntSub(3)", &pool[4]);
  pyhost_eval(h, "{'k': (1.5, None)}", &pool[5]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!h) setup();
  if (size < 2) return 0;
  int callee = data[0] & 7, null_out = data[1] & 1, reuse = data[1] & 2;
  const struct result *res = &results[(data[0] >> 3) % NRESULTS];
  struct feed f = {data + 2, size - 2};
  char fmt[FMT_MAX], inputs[64], expr[EXPR_MAX];
  field(&f, fmt, sizeof fmt);
  field(&f, inputs, sizeof inputs);
  field(&f, expr, sizeof expr);

  fuzz_unit_begin(2000);
  pyhost_callable *c = NULL;
  int rc;
  char name[16];
  snprintf(name, sizeof name, "R%d", (int)(res - results));
  if (callee == 5) { /* an expression of the input's own */
    if (!harmless(expr)) goto out;
    rc = pyhost_prepare_expression(h, inputs, expr, &c);
    if ((rc == PYHOST_OK) != (c != NULL) || (rc && !pyhost_errmsg(h)[0]))
      die("pyhost_prepare_expression", expr, pyhost_errmsg(h));
    if (rc) goto out;
  } else if (callee != 6) {
    rc = pyhost_prepare_name(h, callee == 7 ? "cz.tz" : name, &c);
    if (rc) die("preparing a callee", fmt, pyhost_errmsg(h));
  }
  struct plan p;
  int valid = read_plan(fmt, &p);
  struct borrowed last = {NULL, 0, 0, ""};
  for (int call = 0; call < 3 && !fuzz_unit_expired(); call++) {
    struct args a;
    memset(&a, 0, sizeof a);
    a.fixed[0] = (const char *)h;
    a.fixed[1] = callee == 6 ? name : (const char *)c;
    a.fixed[2] = fmt;
    for (int k = 0; k < 3; k++) push(&a, &ffi_type_pointer, &a.fixed[k]);
    /* outputs left alone must stay as they are */
    union out_slot out, untouched;
    memset(&out, 0xA5, sizeof out);
    memset(&untouched, 0xA5, sizeof untouched);
    size_t out_len = 0xA5A5;
    const void *out_p = &out, *len_p = &out_len;
    if (valid) {
      make_args(&a, &p, &f, last.rtype == 's' ? last.p : NULL, reuse);
      if (p.rtype) {
        if (null_out) out_p = NULL;
        push(&a, &ffi_type_pointer, &out_p);
        if (p.rtype == 's' || p.rtype == 'y') push(&a, &ffi_type_pointer, &len_p);
      }
    }
    ffi_cif cif;
    if (ffi_prep_cif_var(&cif, FFI_DEFAULT_ABI, 3, (unsigned)a.n, &ffi_type_sint, a.types) != FFI_OK)
      abort();
    /* the last borrowed result reads as it did until this call returns */
    if (last.p && memcmp(last.p, last.copy, last.len < sizeof last.copy ? last.len : sizeof last.copy))
      die("a borrowed result changed before the next call", fmt, NULL);
    ffi_arg ret = 0;
    ffi_call(&cif, callee == 6 ? FFI_FN(pyhost_call_namef) : FFI_FN(pyhost_prepared_callf), &ret,
             a.values);
    rc = (int)ret;
    const char *msg = pyhost_errmsg(h);
    /* a failed call leaves its result alone; a >w view may be zeroed instead, as
     * pyhost_view_get's (releasable either way) */
    static const pyhost_view zero_view;
    if (rc != PYHOST_OK && valid && p.rtype == 'w' && !memcmp(&out.w, &zero_view, sizeof zero_view))
      memset(&untouched.w, 0, sizeof untouched.w);
    if (rc != PYHOST_OK && (memcmp(&out, &untouched, sizeof out) || out_len != 0xA5A5))
      die("a failed call wrote its result", fmt, msg);
    if (rc != PYHOST_OK && !msg[0]) die("a failure without a message", fmt, NULL);
    last.p = NULL; /* this call ended the last borrowed result's life */
    if (!valid) {
      if (rc != PYHOST_MISUSE || !strstr(msg, "at column")) die("a bad format was not refused by its column", fmt, msg);
      break;
    }
    if (rc == PYHOST_MISUSE && strstr(msg, "format \""))
      die("pyhost refused a format the header allows", fmt, msg);
    int borrowed = p.rtype == 's' || p.rtype == 'y';
    if (a.bad || (p.rtype && null_out) || (borrowed && callee == 6)) {
      if (rc == PYHOST_OK) die("a call with a bad argument or result pointer succeeded", fmt, msg);
      continue;
    }
    if (rc == PYHOST_OK && borrowed) {
      if (p.rtype == 's' && strlen(out.s) != out_len && !memchr(out.s, 0, out_len))
        die("a borrowed str does not end in a NUL at its length", fmt, NULL);
      last.p = out.s;
      last.len = out_len;
      last.rtype = p.rtype;
      memcpy(last.copy, out.s, out_len < sizeof last.copy ? out_len : sizeof last.copy);
    }
    if (callee < 5) { /* a Python callee whose result is known */
      int want = res->kind == R_RAISE ? PYHOST_PYEXC : expected_status(res, p.rtype);
      if (names_repeat(&p) && rc == PYHOST_PYEXC) continue;
      if (want >= 0 && rc != want) {
        char why[160];
        snprintf(why, sizeof why, "callee %s: %s, expected %s\n", res->src, pyhost_status_name(rc),
                 pyhost_status_name(want));
        die(why, fmt, msg);
      }
      if (rc != PYHOST_OK) continue;
      int wrong = 0;
      switch (p.rtype) {
      case 'i': wrong = out.i != (int)res->i; break;
      case 'L': wrong = out.L != res->i; break;
      case 'd': wrong = memcmp(&out.d, &res->d, sizeof out.d) != 0; break;
      case 'b': wrong = out.i != (int)res->i; break;
      case 's':
      case 'y': wrong = out_len != res->len || memcmp(out.s, res->text, res->len) != 0; break;
      case 'O':
        if (res->kind == R_ECHO) check_echo(out.v, &p, &a, fmt);
        pyhost_value_free(out.v);
        break;
      case 'o': pyhost_value_free(out.v); break;
      case 'w':
        wrong = out.w.len != res->len || (res->len && memcmp(out.w.data, res->text, res->len) != 0);
        pyhost_view_release(h, &out.w);
        break;
      }
      if (wrong) die("the result read is not what the callee returned", fmt, res->src);
    } else if (rc == PYHOST_OK && (p.rtype == 'O' || p.rtype == 'o')) {
      pyhost_value_free(out.v);
    } else if (rc == PYHOST_OK && p.rtype == 'w') {
      pyhost_view_release(h, &out.w);
    }
  }
out:
  fuzz_unit_end();
  pyhost_callable_free(c);
  return 0;
}
