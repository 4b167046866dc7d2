/* pyspec.c: requirement names (PEP 508, normalized as PEP 503 says) and
 * requires-python specifier sets (PEP 440) judged against a Python's version. */
#include "deps.h"

#include "platform.h"

#include <stdlib.h>
#include <string.h>

static int alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The length of the project name at the start of req (after blanks), 0 when none. */
static size_t name_len(const char *req, size_t *start) {
  size_t i = 0;
  while (req[i] == ' ' || req[i] == '\t') i++;
  *start = i;
  if (!alnum(req[i])) return 0;
  size_t end = i;
  while (alnum(req[end]) || req[end] == '-' || req[end] == '_' || req[end] == '.') end++;
  while (end > i && !alnum(req[end - 1])) end--; /* a name ends with a letter or digit */
  return end - i;
}

int pyhost__req_name(const char *req, char *out, size_t cap) {
  size_t start, n = name_len(req, &start);
  if (!n || strpbrk(req, "\n\r")) return -1;
  size_t k = 0;
  for (size_t i = start; i < start + n; i++) {
    char c = req[i];
    if (c == '-' || c == '_' || c == '.') {
      if (out[k - 1] == '-') continue; /* k > 0: a name starts with a letter or digit */
      c = '-';
    } else if (c >= 'A' && c <= 'Z') {
      c = (char)(c - 'A' + 'a');
    }
    if (k + 1 >= cap) return -1;
    out[k++] = c;
  }
  out[k] = '\0';
  return 0;
}

/* Appends s[0..n) to w with blanks removed (drop 1) or collapsed to one and trimmed. */
static char *copy_blanks(char *w, const char *s, size_t n, int drop) {
  int blank = 0, any = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == ' ' || s[i] == '\t') {
      blank = 1;
      continue;
    }
    if (blank && any && !drop) *w++ = ' ';
    blank = 0;
    any = 1;
    *w++ = s[i];
  }
  return w;
}

char *pyhost__req_normal(const char *req) {
  char name[256];
  if (pyhost__req_name(req, name, sizeof name) != 0) return NULL;
  size_t start, n = name_len(req, &start);
  const char *rest = req + start + n;
  char *out = pyhost__malloc(strlen(name) + strlen(rest) + 4), *w = out;
  if (!out) return NULL;
  w += strlen(strcpy(w, name));
  /* "name [extras] specifiers ; marker": no blanks before the marker, one between
   * its words; a URL requirement ("name @ URL ; marker") keeps one blank each */
  const char *semi = strchr(rest, ';');
  size_t head = semi ? (size_t)(semi - rest) : strlen(rest);
  int url = memchr(rest, '@', head) != NULL;
  if (url) *w++ = ' ';
  w = copy_blanks(w, rest, head, !url);
  if (semi) {
    w += strlen(strcpy(w, url ? " ; " : "; "));
    w = copy_blanks(w, semi + 1, strlen(semi + 1), 0);
  }
  *w = '\0';
  return out;
}

/* ---- requires-python ---- */

/* A version "3", "3.9", "3.9.1" (at most three parts), optionally ".*": 0, or -1. */
static int parse_version(const char **pp, unsigned v[3], int *parts, int *wild) {
  const char *p = *pp;
  *parts = 0;
  *wild = 0;
  v[0] = v[1] = v[2] = 0;
  while (*parts < 3) {
    if (*p < '0' || *p > '9') return -1;
    char *end;
    unsigned long x = strtoul(p, &end, 10);
    if (x > 1000) return -1;
    v[(*parts)++] = (unsigned)x;
    p = end;
    if (*p != '.') break;
    if (p[1] == '*') {
      *wild = 1;
      p += 2;
      break;
    }
    p++;
  }
  *pp = p;
  return 0;
}

static int cmp3(const unsigned a[3], const unsigned b[3], int parts) {
  for (int i = 0; i < parts; i++)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

int pyhost__python_spec_match(const char *spec, unsigned long hexversion, char *why, size_t cap) {
  unsigned have[3] = {(unsigned)(hexversion >> 24) & 0xFF, (unsigned)(hexversion >> 16) & 0xFF,
                      (unsigned)(hexversion >> 8) & 0xFF};
  const char *p = spec;
  int match = 1, clauses = 0;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) break;
    static const char *const ops[] = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
    size_t op = 0, nops = sizeof ops / sizeof ops[0];
    while (op < nops && strncmp(p, ops[op], strlen(ops[op])) != 0) op++;
    if (op == nops) {
      pyhost__fmt(why, cap, "expected an operator (>=, <=, ==, !=, ~=, <, >) at \"%s\"", p);
      return -1;
    }
    p += strlen(ops[op]);
    while (*p == ' ' || *p == '\t') p++;
    unsigned v[3];
    int parts, wild;
    if (parse_version(&p, v, &parts, &wild) != 0) {
      pyhost__fmt(why, cap, "expected a version such as 3.9 or 3.10.2 after %s", ops[op]);
      return -1;
    }
    while (*p == ' ' || *p == '\t') p++;
    if (*p && *p != ',') {
      pyhost__fmt(why, cap, "unexpected \"%s\" (clauses are separated by commas)", p);
      return -1;
    }
    if (*p == ',') p++;
    if (wild && op != 2 && op != 3) {
      pyhost__fmt(why, cap, "a \".*\" version goes with == or != only");
      return -1;
    }
    if (op == 1 && parts < 2) {
      pyhost__fmt(why, cap, "~= needs a version of two parts at least (~=3.9)");
      return -1;
    }
    clauses++;
    int c = cmp3(have, v, 3); /* missing parts are zeros, as PEP 440 pads */
    int ok;
    switch (op) {
      case 0: /* === : the same text; a Python's version is three numbers */
      case 2: ok = wild ? cmp3(have, v, parts) == 0 : c == 0; break;
      case 3: ok = wild ? cmp3(have, v, parts) != 0 : c != 0; break;
      case 1: ok = c >= 0 && cmp3(have, v, parts - 1) == 0; break;
      case 4: ok = c <= 0; break;
      case 5: ok = c >= 0; break;
      case 6: ok = c < 0; break;
      default: ok = c > 0; break;
    }
    match &= ok;
  }
  if (!clauses) {
    pyhost__fmt(why, cap, "no version clause (such as \">=3.9\")");
    return -1;
  }
  if (!match) pyhost__fmt(why, cap, "Python %u.%u.%u does not meet requires-python \"%s\"", have[0], have[1], have[2], spec);
  return match;
}

void pyhost__deps_free_list(char **list, size_t n) {
  for (size_t i = 0; list && i < n; i++) pyhost__free(list[i]);
  pyhost__free(list);
}
