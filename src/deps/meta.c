/* meta.c: what a plugin declares, read where Python people write it: a PEP 723 script
 * block (`# /// script` ... `# ///`, TOML in comment lines) in a .py file, or the
 * [project] table of a package's pyproject.toml.  Only `dependencies` (an array of
 * requirement strings) and `requires-python` (a string) are taken; the rest of the
 * TOML is read and checked, so a typo anywhere is reported with its line. */
#include "deps.h"
#include "toml.h"

#include "platform.h"

#include <string.h>

void pyhost__deps_decl_clear(struct pyhost__deps_decl *d) {
  pyhost__deps_free_list(d->reqs, d->n);
  pyhost__free(d->requires_python);
  memset(d, 0, sizeof *d);
}

struct reading {
  struct pyhost__deps_decl *d;
  const char *file;
  const char *table; /* the table whose keys count: "" (PEP 723) or "project" */
  int deps_line;
};

static int take(void *ctx, const struct pyhost__toml_item *it, char *err, size_t cap) {
  struct reading *r = ctx;
  if (strcmp(it->table, r->table) != 0) return 0;
  int is_deps = !strcmp(it->key, "dependencies");
  if (!is_deps && strcmp(it->key, "requires-python") != 0) return 0;
  int first = is_deps ? r->deps_line : r->d->requires_python_line;
  if (first) {
    pyhost__fmt(err, cap, "%s:%d: %s is given twice (first on line %d)", r->file, it->line, it->key, first);
    return -1;
  }
  if (!is_deps) {
    if (it->kind != PYHOST__TOML_STRING) {
      pyhost__fmt(err, cap, "%s:%d: requires-python must be a string such as \">=3.9\"", r->file, it->line);
      return -1;
    }
    char why[256];
    if (pyhost__python_spec_match(it->str, 0x030C00F0, why, sizeof why) < 0) {
      pyhost__fmt(err, cap, "%s:%d: requires-python \"%s\": %s", r->file, it->line, it->str, why);
      return -1;
    }
    if (!(r->d->requires_python = pyhost__strdup(it->str))) {
      pyhost__fmt(err, cap, "%s: out of memory", r->file);
      return -1;
    }
    r->d->requires_python_line = it->line;
    return 0;
  }
  if (it->kind != PYHOST__TOML_STRINGS) {
    if (it->other_line)
      pyhost__fmt(err, cap, "%s:%d: dependencies must be an array of strings; the item on line %d is not a string",
                  r->file, it->line, it->other_line);
    else
      pyhost__fmt(err, cap, "%s:%d: dependencies must be an array of strings such as [\"requests>=2\"]",
                  r->file, it->line);
    return -1;
  }
  r->deps_line = it->line;
  char **reqs = pyhost__calloc(it->n ? it->n : 1, sizeof *reqs);
  if (!reqs) {
    pyhost__fmt(err, cap, "%s: out of memory", r->file);
    return -1;
  }
  for (size_t i = 0; i < it->n; i++) {
    char name[256];
    if (pyhost__req_name(it->strs[i], name, sizeof name) != 0) {
      pyhost__fmt(err, cap, "%s:%d: dependencies: \"%s\" is not a requirement (PEP 508: a project "
                  "name first, as in \"requests>=2.31\")", r->file, it->line, it->strs[i]);
      pyhost__deps_free_list(reqs, i);
      return -1;
    }
    if (!(reqs[i] = pyhost__strdup(it->strs[i]))) {
      pyhost__deps_free_list(reqs, i);
      pyhost__fmt(err, cap, "%s: out of memory", r->file);
      return -1;
    }
  }
  r->d->reqs = reqs;
  r->d->n = it->n;
  return 0;
}

/* "# /// TYPE" exactly: TYPE into type. */
static int opening(const char *line, size_t n, char *type, size_t cap) {
  if (n < 8 || memcmp(line, "# /// ", 6) != 0) return 0;
  size_t t = n - 6;
  if (t >= cap) return 0;
  for (size_t i = 0; i < t; i++) {
    char c = line[6 + i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-')) return 0;
  }
  memcpy(type, line + 6, t);
  type[t] = '\0';
  return 1;
}

/* Line i's start and length (its end excluded, a "\r" before "\n" too). */
struct line {
  const char *s;
  size_t n;
};

static size_t split_lines(const char *text, struct line *out, size_t max) {
  size_t k = 0;
  for (const char *p = text; *p && k < max;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    out[k].s = p;
    out[k].n = n && p[n - 1] == '\r' ? n - 1 : n;
    k++;
    p = e ? e + 1 : p + n;
  }
  return k;
}

static int comment_line(const struct line *l) {
  return l->n >= 1 && l->s[0] == '#' && (l->n == 1 || l->s[1] == ' ');
}

/* The script block of a PEP 723 file: 0 with its TOML in *toml (own result, NULL when
 * there is none) and its first line, or -1 with err. */
static int script_block(const char *text, const char *file, char **toml, int *first, char *err,
                        size_t cap) {
  *toml = NULL;
  size_t max = 1;
  for (const char *p = text; *p; p++) max += *p == '\n';
  struct line *lines = pyhost__calloc(max, sizeof *lines);
  if (!lines) {
    pyhost__fmt(err, cap, "%s: out of memory", file);
    return -1;
  }
  size_t n = split_lines(text, lines, max), found = 0;
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    char type[64];
    if (!opening(lines[i].s, lines[i].n, type, sizeof type)) continue;
    /* the block runs over the comment lines that follow; it ends at the last "# ///" */
    size_t end = 0;
    for (size_t j = i + 1; j < n && comment_line(&lines[j]); j++)
      if (lines[j].n == 5 && memcmp(lines[j].s, "# ///", 5) == 0) end = j;
    if (!end) {
      pyhost__fmt(err, cap, "%s:%zu: the `# /// %s` block opened here is not closed by a `# ///` line "
                  "(PEP 723: every line up to it starts with '#')", file, i + 1, type);
      rc = -1;
      break;
    }
    if (strcmp(type, "script") == 0) {
      if (found) {
        pyhost__fmt(err, cap, "%s:%zu: a second `# /// script` block (the first is on line %zu); "
                    "PEP 723 allows one", file, i + 1, found);
        rc = -1;
        break;
      }
      found = i + 1;
      size_t len = 1;
      for (size_t j = i + 1; j < end; j++) len += lines[j].n + 1;
      char *t = pyhost__malloc(len), *w = t;
      if (!t) {
        pyhost__fmt(err, cap, "%s: out of memory", file);
        rc = -1;
        break;
      }
      for (size_t j = i + 1; j < end; j++) {
        size_t skip = lines[j].n >= 2 ? 2 : 1;
        memcpy(w, lines[j].s + skip, lines[j].n - skip);
        w += lines[j].n - skip;
        *w++ = '\n';
      }
      *w = '\0';
      *toml = t;
      *first = (int)i + 2;
    }
    i = end;
  }
  pyhost__free(lines);
  if (rc) {
    pyhost__free(*toml);
    *toml = NULL;
  }
  return rc;
}

int pyhost__deps_parse(const char *text, const char *file, int pyproject,
                       struct pyhost__deps_decl *d, char *err, size_t cap) {
  memset(d, 0, sizeof *d);
  struct reading r = {d, file, pyproject ? "project" : "", 0};
  char *toml = NULL;
  int first = 1, rc;
  if (pyproject) {
    rc = pyhost__toml_scan(text, file, 1, take, &r, err, cap);
  } else {
    rc = script_block(text, file, &toml, &first, err, cap);
    if (rc == 0 && toml) rc = pyhost__toml_scan(toml, file, first, take, &r, err, cap);
  }
  pyhost__free(toml);
  if (rc == 0 && (d->n || d->requires_python)) pyhost__fmt(d->source, sizeof d->source, "%s", file);
  if (rc) pyhost__deps_decl_clear(d);
  return rc;
}

int pyhost__deps_read(const char *path, struct pyhost__deps_decl *d, char *err, size_t cap) {
  memset(d, 0, sizeof *d);
  char file[PYHOST__PATH_MAX];
  int pyproject = 0;
  if (pyhost__fs_kind(path) == PYHOST__FS_DIR) {
    pyhost__fmt(file, sizeof file, "%s%cpyproject.toml", path, pyhost__fs_sep);
    pyproject = pyhost__fs_kind(file) == PYHOST__FS_FILE;
    if (!pyproject) pyhost__fmt(file, sizeof file, "%s%c__init__.py", path, pyhost__fs_sep);
  } else {
    pyhost__fmt(file, sizeof file, "%s", path);
  }
  if (pyhost__fs_kind(file) != PYHOST__FS_FILE) return 0; /* the load says what is missing */
  char *text = NULL;
  size_t len = 0;
  char why[256];
  if (pyhost__fs_read(file, &text, &len, why, sizeof why) != 0) {
    pyhost__fmt(err, cap, "%s: cannot read it: %s", file, why);
    return -1;
  }
  if (strlen(text) != len) {
    pyhost__free(text);
    pyhost__fmt(err, cap, "%s: a NUL byte in the file", file);
    return -1;
  }
  int rc = pyhost__deps_parse(text, file, pyproject, d, err, cap);
  pyhost__free(text);
  return rc;
}
