/* values.c: the example of docs/values.md.  Builds values in C, sends them through
 * Python and back, walks the result, and shows the checked conversions.
 *   example_values [PYTHON_LIBRARY] */
#include "common.h"

#include <inttypes.h>

/* Prints a value the C way, walking containers. */
static void show(pyhost *py, const pyhost_value *v, int depth) {
  int64_t i;
  double d;
  const char *s;
  size_t n;
  int b;
  printf("%*s%s", depth * 2, "", pyhost_kind_name(pyhost_value_kind(v)));
  switch (pyhost_value_kind(v)) {
  case PYHOST_KIND_BOOL: pyhost_value_to_bool(py, v, &b); printf(" %s\n", b ? "true" : "false"); break;
  case PYHOST_KIND_INT:
    if (pyhost_value_to_int(py, v, &i) == PYHOST_OK) printf(" %" PRId64 "\n", i);
    else printf(" (%s)\n", pyhost_errmsg(py));
    break;
  case PYHOST_KIND_FLOAT: pyhost_value_to_float(py, v, &d); printf(" %g\n", d); break;
  case PYHOST_KIND_STR: pyhost_value_to_str(py, v, &s, &n); printf(" %zu bytes \"%s\"\n", n, s); break;
  case PYHOST_KIND_BYTES: { const void *p; pyhost_value_to_bytes(py, v, &p, &n); printf(" %zu bytes\n", n); break; }
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE:
    printf(" of %zu\n", pyhost_value_count(v));
    for (size_t k = 0; k < pyhost_value_count(v); k++) show(py, pyhost_value_item(v, k), depth + 1);
    break;
  case PYHOST_KIND_DICT:
    printf(" of %zu\n", pyhost_value_count(v));
    for (size_t k = 0; k < pyhost_value_count(v); k++) {
      show(py, pyhost_value_key(v, k), depth + 1);
      show(py, pyhost_value_item(v, k), depth + 2);
    }
    break;
  case PYHOST_KIND_OBJECT: printf(" %s\n", pyhost_value_type_name(v)); break;
  default: printf("\n"); break;
  }
}

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);

  /* build: a dict with a list inside; append and set take ownership of the items */
  pyhost_value *d = pyhost_value_dict(), *l = pyhost_value_list();
  pyhost_value_append(l, pyhost_value_int(INT64_MAX));
  pyhost_value_append(l, pyhost_value_str("nul\0inside", 10));
  pyhost_value_append(l, pyhost_value_bytes("\x00\xff", 2));
  pyhost_value_set(d, pyhost_value_str("items", PYHOST_STRLEN), l);
  pyhost_value_set(d, pyhost_value_str("ratio", PYHOST_STRLEN), pyhost_value_float(0.25));
  pyhost_value_set(d, pyhost_value_str("ok", PYHOST_STRLEN), pyhost_value_bool(1));
  printf("repr: %s\n", pyhost_value_repr(py, d));

  /* through Python and back */
  pyhost_set_global(py, "d", d);
  pyhost_value_free(d);
  pyhost_value *back = NULL;
  if (pyhost_eval(py, "dict(d, more=(None, 2**64, __import__('fractions').Fraction(1, 3)))", &back) == PYHOST_OK) {
    show(py, back, 0);
    /* look a key up, copy a part that must outlive the whole */
    pyhost_value *more = pyhost_value_copy(pyhost_value_lookup(back, "more"));
    pyhost_value_free(back);
    printf("copied: %s\n", pyhost_value_repr(py, more));
    pyhost_value_free(more);
  }

  /* every conversion is checked */
  pyhost_value *s = pyhost_value_str("text", PYHOST_STRLEN), *big = NULL;
  int64_t i;
  if (pyhost_value_to_int(py, s, &i) != PYHOST_OK) printf("to_int(str): %s\n", pyhost_errmsg(py));
  pyhost_eval(py, "-2**63 - 1", &big);
  if (pyhost_value_to_int(py, big, &i) == PYHOST_RANGE) printf("to_int(big): %s\n", pyhost_errmsg(py));
  pyhost_value *bad = pyhost_value_str("caf\xe9", 4); /* Latin-1, not UTF-8 */
  if (pyhost_set_global(py, "bad", bad) != PYHOST_OK) printf("invalid UTF-8: %s\n", last_line(py));
  pyhost_value_free(bad);
  pyhost_value_free(big);
  pyhost_value_free(s);
  pyhost_free(py);
  return 0;
}
