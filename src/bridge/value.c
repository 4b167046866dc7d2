/* value.c: C-side values (see pyhost.h, "values").  Plain C memory; only object
 * values hold a Python reference, dropped under the GIL when they are freed. */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

pyhost_value *pyhost__value_new(pyhost_kind kind) {
  pyhost_value *v = pyhost__calloc(1, sizeof *v);
  if (v) v->kind = (unsigned char)kind;
  return v;
}

/* Results are None (or a bool) more often than anything else: allocating and freeing
 * a value for each was a third of a call's cost.  Immutable, so shared by threads. */
static pyhost_value constants[3] = {
  {.kind = PYHOST_KIND_NONE, .in_slab = 2},
  {.kind = PYHOST_KIND_BOOL, .in_slab = 2, .u.b = 0},
  {.kind = PYHOST_KIND_BOOL, .in_slab = 2, .u.b = 1},
};

pyhost_value *pyhost__value_constant(pyhost_kind kind, int b) {
  return &constants[kind == PYHOST_KIND_NONE ? 0 : b ? 2 : 1];
}

pyhost_value *pyhost_value_none(void) { return pyhost__value_new(PYHOST_KIND_NONE); }
pyhost_value *pyhost_value_list(void) { return pyhost__value_new(PYHOST_KIND_LIST); }
pyhost_value *pyhost_value_tuple(void) { return pyhost__value_new(PYHOST_KIND_TUPLE); }
pyhost_value *pyhost_value_dict(void) { return pyhost__value_new(PYHOST_KIND_DICT); }

pyhost_value *pyhost_value_bool(int b) {
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_BOOL);
  if (v) v->u.b = b != 0;
  return v;
}

pyhost_value *pyhost_value_int(int64_t i) {
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_INT);
  if (v) v->u.i = i;
  return v;
}

pyhost_value *pyhost_value_float(double d) {
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_FLOAT);
  if (v) v->u.d = d;
  return v;
}

static pyhost_value *text_value(pyhost_kind kind, const void *p, size_t len) {
  pyhost_value *v = pyhost__value_new(kind);
  if (!v) return NULL;
  if (!(v->u.s.p = pyhost__memdup(p ? p : "", p ? len : 0))) {
    pyhost__free(v);
    return NULL;
  }
  v->u.s.len = p ? len : 0;
  return v;
}

pyhost_value *pyhost_value_str(const char *s, size_t len) {
  return text_value(PYHOST_KIND_STR, s, s && len == PYHOST_STRLEN ? strlen(s) : len);
}

pyhost_value *pyhost_value_bytes(const void *data, size_t len) {
  return text_value(PYHOST_KIND_BYTES, data, len);
}

int pyhost__value_push(pyhost_value *seq, pyhost_value *item) {
  if (seq->u.seq.n == seq->u.seq.cap) {
    size_t cap = seq->u.seq.cap ? seq->u.seq.cap * 2 : 4;
    pyhost_value **items = pyhost__realloc(seq->u.seq.items, cap * sizeof *items);
    if (!items) return -1;
    seq->u.seq.items = items;
    seq->u.seq.cap = cap;
  }
  seq->u.seq.items[seq->u.seq.n++] = item;
  return 0;
}

int pyhost_value_append(pyhost_value *seq, pyhost_value *item) {
  int rc = PYHOST_OK;
  if (!seq || !item) rc = item ? PYHOST_MISUSE : PYHOST_NOMEM;
  else if (seq->kind != PYHOST_KIND_LIST && seq->kind != PYHOST_KIND_TUPLE) rc = PYHOST_TYPE;
  else if (pyhost__value_push(seq, item) < 0) rc = PYHOST_NOMEM;
  if (rc) pyhost_value_free(item);
  return rc;
}

int pyhost_value_set(pyhost_value *dict, pyhost_value *key, pyhost_value *val) {
  int rc = PYHOST_OK;
  if (!dict) rc = PYHOST_MISUSE;
  else if (!key || !val) rc = PYHOST_NOMEM;
  else if (dict->kind != PYHOST_KIND_DICT) rc = PYHOST_TYPE;
  else if (pyhost__value_push(dict, key) < 0) rc = PYHOST_NOMEM;
  else if (pyhost__value_push(dict, val) < 0) {
    dict->u.seq.n--; /* keep keys and values paired */
    rc = PYHOST_NOMEM;
  }
  if (rc) {
    pyhost_value_free(key);
    pyhost_value_free(val);
  }
  return rc;
}

void pyhost_value_free(pyhost_value *v) {
  if (!v || v->in_slab == 2) return; /* a shared constant owns nothing */
  switch (v->kind) {
  case PYHOST_KIND_STR:
  case PYHOST_KIND_BYTES:
    pyhost__free(v->u.s.p);
    break;
  case PYHOST_KIND_INT:
    if (v->big) pyhost__free(v->u.s.p);
    break;
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE:
  case PYHOST_KIND_DICT:
    for (size_t i = 0; i < v->u.seq.n; i++) {
      const pyhost_value *c = v->u.seq.items[i];
      /* slab scalars own nothing: skip the call (a list of ints frees in one go) */
      if (c->in_slab && c->kind <= PYHOST_KIND_FLOAT && !c->big && !c->type_name && !c->repr)
        continue;
      pyhost_value_free(v->u.seq.items[i]);
    }
    pyhost__free(v->u.seq.items);
    pyhost__free(v->u.seq.slab);
    break;
  case PYHOST_KIND_OBJECT: {
    /* After finalize the object died with the interpreter: free only our memory.
     * pyhost__inflight_begin refuses once finalize has begun: no race with it. */
    PyGILState_STATE g;
    if (v->u.obj && pyhost__python_running() && pyhost__inflight_begin(&g) == 0) {
      PY.Py_DecRef(v->u.obj);
      pyhost__inflight_end(g);
    }
    break;
  }
  default:
    break;
  }
  pyhost__free(v->type_name);
  pyhost__free(v->repr);
  if (!v->in_slab) pyhost__free(v);
}

pyhost_kind pyhost_value_kind(const pyhost_value *v) {
  return v ? (pyhost_kind)v->kind : PYHOST_KIND_NONE;
}

const char *pyhost_kind_name(pyhost_kind kind) {
  static const char *const names[] = {"none", "bool",  "int",   "float", "str",
                                      "bytes", "list", "tuple", "dict",  "object"};
  return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *pyhost_value_type_name(const pyhost_value *v) {
  static const char *const py_names[] = {"NoneType", "bool",  "int",   "float", "str",
                                         "bytes",    "list",  "tuple", "dict",  "object"};
  if (!v) return "NoneType";
  return v->type_name ? v->type_name : py_names[v->kind];
}

static int wrong_type(pyhost *h, const pyhost_value *v, const char *expected) {
  if (pyhost__handle_live(h))
    pyhost__set_error(h, PYHOST_TYPE, "expected %s, got %s", expected, pyhost_value_type_name(v));
  return PYHOST_TYPE;
}

int pyhost_value_to_bool(pyhost *h, const pyhost_value *v, int *out) {
  if (!v || v->kind != PYHOST_KIND_BOOL) return wrong_type(h, v, "bool");
  *out = v->u.b;
  return PYHOST_OK;
}

int pyhost_value_to_int(pyhost *h, const pyhost_value *v, int64_t *out) {
  if (!v || v->kind != PYHOST_KIND_INT) return wrong_type(h, v, "int");
  if (v->big) {
    if (pyhost__handle_live(h))
      pyhost__set_error(h, PYHOST_RANGE, "int %.80s%s does not fit in 64 bits", v->u.s.p,
                        v->u.s.len > 80 ? "..." : "");
    return PYHOST_RANGE;
  }
  *out = v->u.i;
  return PYHOST_OK;
}

int pyhost_value_to_int_text(pyhost *h, const pyhost_value *v, char *buf, size_t cap,
                              size_t *len) {
  if (!len) {
    if (pyhost__handle_live(h))
      pyhost__set_error(h, PYHOST_MISUSE, "pyhost_value_to_int_text: len is NULL");
    return PYHOST_MISUSE;
  }
  *len = 0;
  if (!v || v->kind != PYHOST_KIND_INT) return wrong_type(h, v, "int");
  char small[24];
  size_t n;
  char *text = small;
  if (!v->big) {
    n = (size_t)snprintf(small, sizeof small, "%" PRId64, v->u.i);
  } else if (!(text = pyhost__int_decimal(v->u.s.p, v->u.s.len, &n))) {
    if (pyhost__handle_live(h))
      pyhost__set_error(h, PYHOST_NOMEM, "pyhost_value_to_int_text: out of memory");
    return PYHOST_NOMEM;
  }
  *len = n;
  int rc = PYHOST_OK;
  if (cap > n && buf) {
    memcpy(buf, text, n + 1);
  } else if (pyhost__handle_live(h)) {
    rc = pyhost__set_error(h, PYHOST_RANGE,
                           "pyhost_value_to_int_text: the int has %zu characters, the buffer "
                           "holds %zu (and a NUL)", n, cap ? cap - 1 : 0);
  } else {
    rc = PYHOST_RANGE;
  }
  if (text != small) pyhost__free(text);
  return rc;
}

int pyhost_value_to_float(pyhost *h, const pyhost_value *v, double *out) {
  if (v && v->kind == PYHOST_KIND_FLOAT) *out = v->u.d;
  else if (v && v->kind == PYHOST_KIND_INT && !v->big) *out = (double)v->u.i;
  else return wrong_type(h, v, "float");
  return PYHOST_OK;
}

int pyhost_value_to_str(pyhost *h, const pyhost_value *v, const char **s, size_t *len) {
  if (!v || v->kind != PYHOST_KIND_STR) return wrong_type(h, v, "str");
  *s = v->u.s.p;
  if (len) *len = v->u.s.len;
  return PYHOST_OK;
}

int pyhost_value_to_bytes(pyhost *h, const pyhost_value *v, const void **data, size_t *len) {
  if (!v || v->kind != PYHOST_KIND_BYTES) return wrong_type(h, v, "bytes");
  *data = v->u.s.p;
  if (len) *len = v->u.s.len;
  return PYHOST_OK;
}

size_t pyhost_value_count(const pyhost_value *v) {
  if (!v) return 0;
  switch (v->kind) {
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE: return v->u.seq.n;
  case PYHOST_KIND_DICT: return v->u.seq.n / 2;
  default: return 0;
  }
}

const pyhost_value *pyhost_value_item(const pyhost_value *v, size_t i) {
  if (!v || i >= pyhost_value_count(v)) return NULL;
  return v->kind == PYHOST_KIND_DICT ? v->u.seq.items[2 * i + 1] : v->u.seq.items[i];
}

const pyhost_value *pyhost_value_key(const pyhost_value *v, size_t i) {
  if (!v || v->kind != PYHOST_KIND_DICT || i >= pyhost_value_count(v)) return NULL;
  return v->u.seq.items[2 * i];
}
