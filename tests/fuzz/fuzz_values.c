/* fuzz_values.c: libFuzzer target for value conversion.  The input is a little
 * program that builds a pyhost_value tree (ints, floats, strs and bytes with any
 * bytes, nested lists, tuples and dicts); the tree goes to Python and back, and what
 * comes back must equal what went in (or the conversion must fail with a status).
 * Python is started once: the library in PYHOST_FUZZ_PYTHON, else the build's. */
#include "internal.h"
#include "fuzz_python.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct reader {
  const uint8_t *p;
  size_t n;
};

static unsigned take(struct reader *r, void *out, size_t want) {
  size_t k = want < r->n ? want : r->n;
  memset(out, 0, want);
  memcpy(out, r->p, k);
  r->p += k, r->n -= k;
  return (unsigned)k;
}

static pyhost_value *build(struct reader *r, int depth) {
  uint8_t op = 0;
  if (!take(r, &op, 1)) return pyhost_value_none();
  switch (op % 9) {
  case 0: return pyhost_value_none();
  case 1: return pyhost_value_bool(op & 0x10);
  case 2: {
    int64_t i;
    take(r, &i, op & 0x10 ? 8 : 1);
    return pyhost_value_int(i);
  }
  case 3: {
    double d;
    take(r, &d, 8);
    return pyhost_value_float(d);
  }
  case 4:
  case 5: {
    uint8_t len = 0;
    take(r, &len, 1);
    char buf[256];
    unsigned got = take(r, buf, len);
    return op % 9 == 4 ? pyhost_value_str(buf, got) : pyhost_value_bytes(buf, got);
  }
  default: {
    pyhost_value *c = op % 9 == 6 ? pyhost_value_list() : op % 9 == 7 ? pyhost_value_tuple()
                                                                      : pyhost_value_dict();
    uint8_t count = 0;
    take(r, &count, 1);
    for (unsigned i = 0; c && i < (count & 7u) && depth < 24; i++) {
      if (pyhost_value_kind(c) == PYHOST_KIND_DICT) {
        pyhost_value *k = build(r, depth + 1);
        pyhost_value_set(c, k, build(r, depth + 1));
      } else {
        pyhost_value_append(c, build(r, depth + 1));
      }
    }
    return c;
  }
  }
}

/* 1 when b (back from Python) equals a (built in C).  Dicts may have lost duplicate
 * keys (1 and True are one key to Python): then only the count shrinks. */
static int same(const pyhost_value *a, const pyhost_value *b) {
  pyhost_kind ka = pyhost_value_kind(a), kb = pyhost_value_kind(b);
  if (ka != kb) return 0;
  int64_t i, j;
  double d, e;
  const char *s, *t;
  size_t n, m;
  switch (ka) {
  case PYHOST_KIND_NONE: return 1;
  case PYHOST_KIND_BOOL: {
    int x, y;
    return !pyhost_value_to_bool(NULL, a, &x) && !pyhost_value_to_bool(NULL, b, &y) && x == y;
  }
  case PYHOST_KIND_INT:
    return !pyhost_value_to_int(NULL, a, &i) && !pyhost_value_to_int(NULL, b, &j) && i == j;
  case PYHOST_KIND_FLOAT:
    pyhost_value_to_float(NULL, a, &d);
    pyhost_value_to_float(NULL, b, &e);
    return isnan(d) ? isnan(e) : memcmp(&d, &e, sizeof d) == 0;
  case PYHOST_KIND_STR:
    pyhost_value_to_str(NULL, a, &s, &n);
    pyhost_value_to_str(NULL, b, &t, &m);
    return n == m && memcmp(s, t, n) == 0;
  case PYHOST_KIND_BYTES:
    pyhost_value_to_bytes(NULL, a, (const void **)&s, &n);
    pyhost_value_to_bytes(NULL, b, (const void **)&t, &m);
    return n == m && memcmp(s, t, n) == 0;
  case PYHOST_KIND_DICT:
    return pyhost_value_count(b) <= pyhost_value_count(a);
  default:
    if (pyhost_value_count(a) != pyhost_value_count(b)) return 0;
    for (size_t k = 0; k < pyhost_value_count(a); k++)
      if (!same(pyhost_value_item(a, k), pyhost_value_item(b, k))) return 0;
    return 1;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pyhost *h = fuzz_python();
  struct reader r = {data, size};
  pyhost_value *v = build(&r, 0);
  if (!v) return 0;
  if (pyhost_gil_enter(h) != PYHOST_OK) abort();
  PyObject *o = pyhost__to_python(h, v);
  pyhost_value *back = o ? pyhost__from_python(h, o) : NULL;
  if (!o || !back) {
    /* only a reason Python gives: bad UTF-8, an unhashable key, too deep */
    if (pyhost__take_exception(h, "round trip") != PYHOST_PYEXC) abort();
  }
  PY.Py_DecRef(o);
  pyhost_gil_leave(h);
  if (back && !same(v, back)) abort();
  pyhost_value_free(back);
  pyhost_value_free(v);
  return 0;
}
