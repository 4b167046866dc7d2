/* toml.h: the part of TOML that dependency metadata needs (toml.c): every key-value
 * line and table header of a document is read and checked (strings with escapes,
 * multi-line strings, arrays over lines, inline tables, bare scalars, comments), and
 * each key's value is reported as a string, an array of strings, or something else.
 * Enough to read PEP 723 script blocks and pyproject.toml; not a general TOML reader
 * (a bare scalar is checked for its characters only). */
#ifndef PYHOST_TOML_H
#define PYHOST_TOML_H

#include <stddef.h>

enum pyhost__toml_kind { PYHOST__TOML_STRING, PYHOST__TOML_STRINGS, PYHOST__TOML_OTHER };

struct pyhost__toml_item {
  const char *table; /* the table header's name ("" before any: the root table) */
  const char *key;   /* dotted keys joined with "." */
  int line;          /* the key's line */
  enum pyhost__toml_kind kind;
  char *str;         /* PYHOST__TOML_STRING */
  char **strs;       /* PYHOST__TOML_STRINGS: every item a string (n may be 0) */
  size_t n;
  int other_line;    /* an array with another item: that item's line */
};

/* Called per key-value; 0 to go on, -1 to stop with err set. */
typedef int (*pyhost__toml_fn)(void *ctx, const struct pyhost__toml_item *it, char *err,
                               size_t cap);

/* Reads text; line numbers start at first_line and messages name file:
 * "FILE:LINE: what is wrong".  0, or -1 with err (malformed text, out of memory, or the
 * callback's). */
int pyhost__toml_scan(const char *text, const char *file, int first_line, pyhost__toml_fn fn,
                      void *ctx, char *err, size_t cap);

#endif
