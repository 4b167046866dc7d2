/* toml.c: see toml.h.  A recursive-descent reader over the text; strings are decoded
 * into allocated copies only for the values reported. */
#include "toml.h"

#include "platform.h"

#include <string.h>

struct scan {
  const char *p, *file;
  int line;
  char *err;
  size_t cap;
  int failed;
};

/* A value being read: what toml.h reports for it. */
struct value {
  enum pyhost__toml_kind kind;
  char *str;
  char **strs;
  size_t n;
  int other_line;
};

static int fail(struct scan *s, const char *what) {
  if (!s->failed) pyhost__fmt(s->err, s->cap, "%s:%d: %s", s->file, s->line, what);
  s->failed = 1;
  return -1;
}

static void value_clear(struct value *v) {
  pyhost__free(v->str);
  for (size_t i = 0; i < v->n; i++) pyhost__free(v->strs[i]);
  pyhost__free(v->strs);
  memset(v, 0, sizeof *v);
}

static void skip_blank(struct scan *s) {
  while (*s->p == ' ' || *s->p == '\t') s->p++;
}

/* Spaces, comments and line ends (inside arrays). */
static void skip_space(struct scan *s) {
  for (;;) {
    skip_blank(s);
    if (*s->p == '#') {
      while (*s->p && *s->p != '\n') s->p++;
    } else if (*s->p == '\r' && s->p[1] == '\n') {
      s->p++;
    } else if (*s->p == '\n') {
      s->p++;
      s->line++;
    } else {
      return;
    }
  }
}

/* The rest of a line after a value or header: blanks and a comment only. */
static int end_of_line(struct scan *s) {
  skip_blank(s);
  if (*s->p == '#')
    while (*s->p && *s->p != '\n') s->p++;
  if (*s->p == '\r' && s->p[1] == '\n') s->p++;
  if (*s->p == '\n') {
    s->p++;
    s->line++;
    return 0;
  }
  if (!*s->p) return 0;
  return fail(s, "expected the end of the line after the value (one key = value per line)");
}

/* A growing buffer for a decoded string. */
struct buf {
  char *d;
  size_t n, cap;
};

static int put(struct scan *s, struct buf *b, const char *c, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = (b->n + n + 1) * 2;
    char *d = pyhost__realloc(b->d, cap);
    if (!d) return fail(s, "out of memory");
    b->d = d;
    b->cap = cap;
  }
  memcpy(b->d + b->n, c, n);
  b->n += n;
  b->d[b->n] = '\0';
  return 0;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* An escape after the backslash (s->p at its letter). */
static int escape(struct scan *s, struct buf *b) {
  char c = *s->p++;
  const char *map = "b\bt\tn\nf\fr\r\"\"\\\\";
  for (const char *m = map; *m; m += 2)
    if (c == m[0]) return put(s, b, m + 1, 1);
  if (c != 'u' && c != 'U') return fail(s, "unknown escape sequence in a string");
  int digits = c == 'u' ? 4 : 8;
  unsigned long cp = 0;
  for (int i = 0; i < digits; i++) {
    int h = hexval(*s->p);
    if (h < 0) return fail(s, "a \\u escape needs hexadecimal digits");
    cp = cp * 16 + (unsigned long)h;
    s->p++;
  }
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return fail(s, "an escape names no Unicode scalar value");
  char u[4];
  size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  if (n == 1) u[0] = (char)cp;
  else {
    static const unsigned char lead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (size_t i = n - 1; i > 0; i--) {
      u[i] = (char)(0x80 | (cp & 0x3F));
      cp >>= 6;
    }
    u[0] = (char)(lead[n] | cp);
  }
  return put(s, b, u, n);
}

/* A string of any of the four kinds, s->p at its first quote: the decoded text
 * (own result) or NULL. */
static char *string(struct scan *s) {
  char q = *s->p;
  int multi = s->p[1] == q && s->p[2] == q;
  struct buf b = {NULL, 0, 0};
  if (put(s, &b, "", 0)) return NULL;
  s->p += multi ? 3 : 1;
  if (multi && (*s->p == '\n' || (*s->p == '\r' && s->p[1] == '\n'))) { /* a first newline is trimmed */
    s->p += *s->p == '\r' ? 2 : 1;
    s->line++;
  }
  for (;;) {
    char c = *s->p;
    if (!c || (!multi && (c == '\n' || c == '\r'))) {
      fail(s, multi ? "a multi-line string is not closed" : "a string is not closed on its line");
      break;
    }
    if (c == q && (!multi || (s->p[1] == q && s->p[2] == q))) {
      s->p += multi ? 3 : 1;
      while (multi && *s->p == q) { /* up to two quotes may end the content */
        if (put(s, &b, s->p, 1)) break;
        s->p++;
      }
      if (!s->failed) return b.d;
      break;
    }
    if (c == '\n') s->line++;
    if (c == '\\' && q == '"') {
      s->p++;
      if (multi && (*s->p == '\n' || *s->p == ' ' || *s->p == '\t' || *s->p == '\r')) {
        while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
          s->line += *s->p++ == '\n';
        continue;
      }
      if (escape(s, &b)) break;
      continue;
    }
    if ((unsigned char)c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      fail(s, "a control character in a string");
      break;
    }
    if (put(s, &b, s->p++, 1)) break;
  }
  pyhost__free(b.d);
  return NULL;
}

static int value(struct scan *s, struct value *v, int depth);

/* An array, s->p at '['. */
static int array(struct scan *s, struct value *v, int depth) {
  s->p++;
  v->kind = PYHOST__TOML_STRINGS;
  for (;;) {
    skip_space(s);
    if (*s->p == ']') {
      s->p++;
      return 0;
    }
    if (!*s->p) return fail(s, "an array is not closed (no ']')");
    int line = s->line;
    struct value item;
    memset(&item, 0, sizeof item);
    if (value(s, &item, depth + 1)) return -1;
    if (item.kind == PYHOST__TOML_STRING && v->kind == PYHOST__TOML_STRINGS) {
      char **grown = pyhost__realloc(v->strs, (v->n + 1) * sizeof *grown);
      if (!grown) {
        value_clear(&item);
        return fail(s, "out of memory");
      }
      v->strs = grown;
      v->strs[v->n++] = item.str;
      item.str = NULL;
    } else if (v->kind == PYHOST__TOML_STRINGS) {
      v->other_line = line;
      v->kind = PYHOST__TOML_OTHER; /* the strings so far stay for clearing */
    }
    value_clear(&item);
    skip_space(s);
    if (*s->p == ',') s->p++;
    else if (*s->p != ']') return fail(s, "expected ',' or ']' between the items of an array");
  }
}

static int key(struct scan *s, struct buf *b);

/* An inline table, s->p at '{': checked, reported as "other". */
static int inline_table(struct scan *s, int depth) {
  s->p++;
  skip_blank(s);
  if (*s->p == '}') {
    s->p++;
    return 0;
  }
  for (;;) {
    struct buf k = {NULL, 0, 0};
    int rc = key(s, &k);
    pyhost__free(k.d);
    if (rc) return -1;
    skip_blank(s);
    if (*s->p++ != '=') return fail(s, "expected '=' after a key in an inline table");
    skip_blank(s);
    struct value v;
    memset(&v, 0, sizeof v);
    rc = value(s, &v, depth + 1);
    value_clear(&v);
    if (rc) return -1;
    skip_blank(s);
    if (*s->p == '}') {
      s->p++;
      return 0;
    }
    if (*s->p++ != ',') return fail(s, "expected ',' or '}' in an inline table (which stays on one line)");
    skip_blank(s);
  }
}

static int bare_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

static int value(struct scan *s, struct value *v, int depth) {
  memset(v, 0, sizeof *v);
  if (depth > 64) return fail(s, "arrays or tables nested too deep");
  char c = *s->p;
  if (c == '"' || c == '\'') {
    v->kind = PYHOST__TOML_STRING;
    return (v->str = string(s)) ? 0 : -1;
  }
  v->kind = PYHOST__TOML_OTHER;
  if (c == '[') return array(s, v, depth);
  if (c == '{') return inline_table(s, depth);
  /* a number, a boolean, a date or time: its characters only */
  const char *start = s->p;
  while (bare_char(*s->p) || *s->p == '.' || *s->p == ':' || *s->p == '+' ||
         (*s->p == ' ' && s->p > start && s->p[1] >= '0' && s->p[1] <= '9')) /* "1979-05-27 07:32:00" */
    s->p++;
  if (s->p == start) return fail(s, "expected a value (a string in quotes, an array, a number, true or false)");
  return 0;
}

/* A key (bare, quoted, or dotted), appended to b with "." between parts. */
static int key(struct scan *s, struct buf *b) {
  for (int part = 0;; part++) {
    skip_blank(s);
    if (part && put(s, b, ".", 1)) return -1;
    if (*s->p == '"' || *s->p == '\'') {
      if (s->p[1] == *s->p && s->p[2] == *s->p) return fail(s, "a key cannot be a multi-line string");
      char *q = string(s);
      int rc = q ? put(s, b, q, strlen(q)) : -1;
      pyhost__free(q);
      if (rc) return -1;
    } else {
      const char *start = s->p;
      while (bare_char(*s->p)) s->p++;
      if (s->p == start) return fail(s, "expected a key (letters, digits, '_' and '-', or a quoted key)");
      if (put(s, b, start, (size_t)(s->p - start))) return -1;
    }
    skip_blank(s);
    if (*s->p != '.') return 0;
    s->p++;
  }
}

int pyhost__toml_scan(const char *text, const char *file, int first_line, pyhost__toml_fn fn,
                      void *ctx, char *err, size_t cap) {
  struct scan s = {text, file, first_line, err, cap, 0};
  struct buf table = {NULL, 0, 0};
  if (put(&s, &table, "", 0)) return -1;
  int rc = 0;
  while (!rc) {
    skip_space(&s);
    if (!*s.p) break;
    if (*s.p == '[') {
      int array_table = s.p[1] == '[';
      s.p += array_table ? 2 : 1;
      table.n = 0;
      table.d[0] = '\0';
      if ((rc = key(&s, &table))) break;
      if (*s.p != ']' || (array_table && s.p[1] != ']')) {
        rc = fail(&s, array_table ? "a table header is not closed (no ']]')" : "a table header is not closed (no ']')");
        break;
      }
      s.p += array_table ? 2 : 1;
      rc = end_of_line(&s);
      continue;
    }
    struct buf k = {NULL, 0, 0};
    int line = s.line;
    struct value v;
    memset(&v, 0, sizeof v);
    if ((rc = key(&s, &k)) == 0) {
      if (*s.p != '=') {
        rc = fail(&s, "expected '=' after the key");
      } else {
        s.p++;
        skip_blank(&s);
        if ((rc = value(&s, &v, 0)) == 0 && (rc = end_of_line(&s)) == 0 && fn) {
          struct pyhost__toml_item it = {table.d, k.d, line, v.kind, v.str, v.strs, v.n, v.other_line};
          if (v.kind == PYHOST__TOML_OTHER && v.other_line == 0) it.n = 0;
          rc = fn(ctx, &it, err, cap);
        }
      }
    }
    value_clear(&v);
    pyhost__free(k.d);
  }
  pyhost__free(table.d);
  return rc ? -1 : 0;
}
