/* convert.c: PyObject <-> pyhost_value.
 *
 * Builtin value types (and their subclasses) become C data; anything else becomes an
 * object value holding a reference.  Nesting is bounded so that a list containing
 * itself is an error, not a stack overflow.
 */
#include "internal.h"

#include <string.h>

#define MAX_DEPTH 256

static int set_subtype_name(pyhost_value *v, PyTypeObject *type, PyTypeObject *exact) {
  if (type == exact) return 0;
  char name[256];
  pyhost__type_name((PyObject *)type, name, sizeof name);
  if (!(v->type_name = pyhost__strdup(name))) return -1;
  return 0;
}

/* Converts o into slot (a zeroed struct in the parent's slab) or, for a NULL slot,
 * into a new allocation. */
static pyhost_value *from_python(pyhost *h, PyObject *o, int depth, pyhost_value *slot);

/* from_python on an item borrowed from a container: converting may run Python code
 * (a subclass's type name, a metaclass's __getattribute__, a collection's __del__)
 * that changes the container and frees the item, so the item is held meanwhile.
 * Converting None or an exact str, bytes, float or bool runs none (nothing it
 * allocates is tracked by the collector): those, the common items, skip the two
 * reference calls. */
static int converts_without_code(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  return o == PY._Py_NoneStruct || t == PY.PyUnicode_Type || t == PY.PyBytes_Type ||
         t == PY.PyFloat_Type || t == PY.PyBool_Type;
}

static pyhost_value *from_held(pyhost *h, PyObject *item, int depth, pyhost_value *slot) {
  if (converts_without_code(item)) return from_python(h, item, depth, slot);
  PY.Py_IncRef(item);
  pyhost_value *v = from_python(h, item, depth, slot);
  PY.Py_DecRef(item);
  return v;
}

/* A fresh value of kind, in slot when there is one.  Containers give their items one
 * slab and one item array, sized once: a 100 000-element list costs three allocations,
 * not 100 000 (malloc and free were 80 % of converting a list of ints). */
static pyhost_value *new_value(pyhost_value *slot, pyhost_kind kind) {
  if (!slot) {
    /* every NULL a converter returns must carry an exception: a host function that
     * returns NULL without one is a SystemError, and fatal on a debug build */
    pyhost_value *v = pyhost__value_new(kind);
    if (!v) PY.PyErr_NoMemory();
    return v;
  }
  slot->kind = (unsigned char)kind;
  slot->in_slab = 1;
  return slot;
}

/* Sizes v's item array and slab for n items; -1 (MemoryError set) when out of memory. */
static int reserve_items(pyhost_value *v, size_t n) {
  if (n == 0) return 0;
  v->u.seq.items = pyhost__malloc(n * sizeof *v->u.seq.items);
  /* not zeroed: each slot is initialized as it is filled (memset was a third of it) */
  v->u.seq.slab = v->u.seq.items ? pyhost__malloc(n * sizeof *v->u.seq.slab) : NULL;
  if (!v->u.seq.slab) {
    PY.PyErr_NoMemory();
    return -1;
  }
  v->u.seq.cap = n;
  return 0;
}

static pyhost_value *from_sequence(pyhost *h, PyObject *o, pyhost_kind kind, int depth,
                                   pyhost_value *slot) {
  int is_list = kind == PYHOST_KIND_LIST;
  Py_ssize_t n = is_list ? PY.PyList_Size(o) : PY.PyTuple_Size(o);
  pyhost_value *v = n < 0 ? NULL : new_value(slot, kind);
  if (!v) return NULL;
  if (reserve_items(v, (size_t)n) < 0) goto fail;
  for (Py_ssize_t i = 0; i < n; i++) {
    /* a list may shrink meanwhile (another thread): GetItem then raises IndexError */
    PyObject *item = is_list ? PY.PyList_GetItem(o, i) : PY.PyTuple_GetItem(o, i);
    pyhost_value *c = &v->u.seq.slab[i];
    c->big = 0;
    c->type_name = c->repr = NULL;
    if (item && Py_TYPE(item) == PY.PyLong_Type) {
      /* the common item, inline: no type dispatch, no subtype name to look up */
      if (pyhost__scalar_int(item, &c->u.i) == PYHOST_OK) new_value(c, PYHOST_KIND_INT);
      else c = from_held(h, item, depth + 1, c); /* beyond 64 bits */
    } else {
      memset(c, 0, sizeof *c);
      c = item ? from_held(h, item, depth + 1, c) : NULL;
    }
    if (!c) goto fail;
    v->u.seq.items[v->u.seq.n++] = c;
  }
  return v;
fail:
  pyhost_value_free(v);
  return NULL;
}

static pyhost_value *from_dict(pyhost *h, PyObject *o, int depth, pyhost_value *slot) {
  Py_ssize_t size = PY.PyDict_Size(o), pos = 0;
  PyObject *key, *val;
  pyhost_value *v = size < 0 ? NULL : new_value(slot, PYHOST_KIND_DICT);
  if (!v) return NULL;
  size_t cap = 2 * (size_t)size;
  if (reserve_items(v, cap) < 0) goto fail;
  while (PY.PyDict_Next(o, &pos, &key, &val)) {
    if (v->u.seq.n == cap) {
      PY.PyErr_SetString(*PY.PyExc_RuntimeError, "dictionary changed size during conversion");
      goto fail;
    }
    memset(&v->u.seq.slab[v->u.seq.n], 0, 2 * sizeof *v->u.seq.slab);
    /* the value held before the key converts: that may run Python code that changes
     * the dict and frees the value */
    int hold = !converts_without_code(key);
    if (hold) PY.Py_IncRef(val);
    pyhost_value *k = from_held(h, key, depth + 1, &v->u.seq.slab[v->u.seq.n]);
    pyhost_value *x = k ? from_held(h, val, depth + 1, &v->u.seq.slab[v->u.seq.n + 1]) : NULL;
    if (hold) PY.Py_DecRef(val);
    if (!k) goto fail;
    v->u.seq.items[v->u.seq.n++] = k;
    if (!x) goto fail; /* the key alone: freeing v frees it, a dict's n is even again */
    v->u.seq.items[v->u.seq.n++] = x;
  }
  return v;
fail:
  pyhost_value_free(v);
  return NULL;
}

static pyhost_value *from_int(PyObject *o, pyhost_value *slot) {
  int64_t i;
  int fits = pyhost__scalar_int(o, &i) == PYHOST_OK;
  pyhost_value *v = new_value(slot, PYHOST_KIND_INT);
  if (!v) return NULL;
  if (fits) {
    v->u.i = i;
    return v;
  }
  /* Too big for 64 bits: keep the digits so the value can go back to Python intact.
   * The int's own digits, not a subclass's __str__.  Decimal when CPython converts it
   * (3.11+ and the 3.7 to 3.10 security releases refuse beyond 4300 digits by default);
   * else hexadecimal, which the limit exempts both ways. */
  PyObject *s = PY.PyNumber_ToBase(o, 10);
  if (!s && PY.PyErr_ExceptionMatches(*PY.PyExc_ValueError)) {
    PY.PyErr_Clear();
    s = PY.PyNumber_ToBase(o, 16);
  }
  v->u.s.p = s ? pyhost__utf8_copy(s, &v->u.s.len) : NULL;
  PY.Py_DecRef(s);
  if (!v->u.s.p) {
    pyhost_value_free(v);
    return NULL;
  }
  v->big = 1;
  return v;
}

static pyhost_value *from_text(PyObject *o, int is_str, pyhost_value *slot) {
  pyhost_value *v = new_value(slot, is_str ? PYHOST_KIND_STR : PYHOST_KIND_BYTES);
  if (!v) return NULL;
  if (is_str) {
    v->u.s.p = pyhost__utf8_copy(o, &v->u.s.len);
  } else {
    char *p;
    Py_ssize_t n;
    if (PY.PyBytes_AsStringAndSize(o, &p, &n) == 0) {
      v->u.s.p = pyhost__memdup(p, (size_t)n);
      v->u.s.len = (size_t)n;
      if (!v->u.s.p) PY.PyErr_NoMemory();
    }
  }
  if (!v->u.s.p) {
    pyhost_value_free(v);
    return NULL;
  }
  return v;
}

static pyhost_value *from_python(pyhost *h, PyObject *o, int depth, pyhost_value *slot) {
  if (depth > MAX_DEPTH) {
    PY.PyErr_Format(*PY.PyExc_ValueError,
                    "value nests deeper than %d levels (does it contain itself?)", MAX_DEPTH);
    return NULL;
  }
  if (o == PY._Py_NoneStruct) /* the most common result: before any look-up */
    return slot ? new_value(slot, PYHOST_KIND_NONE) : pyhost__value_constant(PYHOST_KIND_NONE, 0);
  PyTypeObject *type = Py_TYPE(o);
  unsigned long flags = PY.PyType_GetFlags(type);
  pyhost_value *v;
  if (pyhost__is_bool(o)) { /* the scalar rules (internal.h): before int, its base */
    int b = pyhost__scalar_bool(o);
    if (!slot) return pyhost__value_constant(PYHOST_KIND_BOOL, b);
    if ((v = new_value(slot, PYHOST_KIND_BOOL))) v->u.b = b;
  } else if (flags & Py_TPFLAGS_LONG_SUBCLASS) {
    v = from_int(o, slot);
    if (v && set_subtype_name(v, type, PY.PyLong_Type) < 0) goto nomem;
    return v;
  } else if (pyhost__is_float(o)) {
    if ((v = new_value(slot, PYHOST_KIND_FLOAT))) v->u.d = pyhost__scalar_float(o);
    if (v && set_subtype_name(v, type, PY.PyFloat_Type) < 0) goto nomem;
  } else if (flags & (Py_TPFLAGS_UNICODE_SUBCLASS | Py_TPFLAGS_BYTES_SUBCLASS)) {
    int is_str = (flags & Py_TPFLAGS_UNICODE_SUBCLASS) != 0;
    v = from_text(o, is_str, slot);
    if (v && set_subtype_name(v, type, is_str ? PY.PyUnicode_Type : PY.PyBytes_Type) < 0) goto nomem;
    return v;
  } else if (flags & (Py_TPFLAGS_LIST_SUBCLASS | Py_TPFLAGS_TUPLE_SUBCLASS)) {
    int is_list = (flags & Py_TPFLAGS_LIST_SUBCLASS) != 0;
    v = from_sequence(h, o, is_list ? PYHOST_KIND_LIST : PYHOST_KIND_TUPLE, depth, slot);
    if (v && set_subtype_name(v, type, is_list ? PY.PyList_Type : PY.PyTuple_Type) < 0) goto nomem;
    return v;
  } else if (flags & Py_TPFLAGS_DICT_SUBCLASS) {
    v = from_dict(h, o, depth, slot);
    if (v && set_subtype_name(v, type, PY.PyDict_Type) < 0) goto nomem;
    return v;
  } else {
    if ((v = new_value(slot, PYHOST_KIND_OBJECT))) {
      char name[256];
      PY.Py_IncRef(o); /* held before the type name's look-up runs Python code */
      v->u.obj = o;
      pyhost__type_name((PyObject *)type, name, sizeof name);
      if (!(v->type_name = pyhost__strdup(name))) goto nomem;
    }
  }
  if (!v) PY.PyErr_NoMemory();
  return v;
nomem:
  pyhost_value_free(v);
  PY.PyErr_NoMemory();
  return NULL;
}

pyhost_value *pyhost__from_python(pyhost *h, PyObject *o) {
  return from_python(h, o, 0, NULL);
}

static PyObject *to_python(pyhost *h, const pyhost_value *v, int depth);

static PyObject *seq_to_python(pyhost *h, const pyhost_value *v, int depth) {
  int is_list = v->kind == PYHOST_KIND_LIST;
  Py_ssize_t n = (Py_ssize_t)v->u.seq.n;
  PyObject *o = is_list ? PY.PyList_New(n) : PY.PyTuple_New(n);
  for (Py_ssize_t i = 0; o && i < n; i++) {
    PyObject *item = to_python(h, v->u.seq.items[i], depth + 1);
    /* SetItem steals item, even on failure */
    if (!item || (is_list ? PY.PyList_SetItem(o, i, item) : PY.PyTuple_SetItem(o, i, item)) < 0) {
      PY.Py_DecRef(o);
      return NULL;
    }
  }
  return o;
}

static PyObject *dict_to_python(pyhost *h, const pyhost_value *v, int depth) {
  PyObject *d = PY.PyDict_New();
  for (size_t i = 0; d && i + 1 < v->u.seq.n; i += 2) {
    PyObject *k = to_python(h, v->u.seq.items[i], depth + 1);
    PyObject *x = k ? to_python(h, v->u.seq.items[i + 1], depth + 1) : NULL;
    int rc = x ? PY.PyDict_SetItem(d, k, x) : -1;
    PY.Py_DecRef(k);
    PY.Py_DecRef(x);
    if (rc < 0) {
      PY.Py_DecRef(d);
      return NULL;
    }
  }
  return d;
}

static PyObject *to_python(pyhost *h, const pyhost_value *v, int depth) {
  if (depth > MAX_DEPTH) {
    PY.PyErr_Format(*PY.PyExc_ValueError, "value nests deeper than %d levels", MAX_DEPTH);
    return NULL;
  }
  if (!v) {
    PY.Py_IncRef(PY._Py_NoneStruct);
    return PY._Py_NoneStruct;
  }
  switch ((pyhost_kind)v->kind) {
  case PYHOST_KIND_NONE:
    PY.Py_IncRef(PY._Py_NoneStruct);
    return PY._Py_NoneStruct;
  case PYHOST_KIND_BOOL: return PY.PyBool_FromLong(v->u.b);
  case PYHOST_KIND_INT:
    /* base 0 reads both forms a big int keeps: decimal (no leading zero) and 0x */
    return v->big ? PY.PyLong_FromString(v->u.s.p, NULL, 0) : PY.PyLong_FromLongLong(v->u.i);
  case PYHOST_KIND_FLOAT: return PY.PyFloat_FromDouble(v->u.d);
  case PYHOST_KIND_STR:
    /* strict: invalid UTF-8 from C is an error (UnicodeDecodeError names the byte) */
    return PY.PyUnicode_DecodeUTF8(v->u.s.p, (Py_ssize_t)v->u.s.len, "strict");
  case PYHOST_KIND_BYTES: return PY.PyBytes_FromStringAndSize(v->u.s.p, (Py_ssize_t)v->u.s.len);
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE: return seq_to_python(h, v, depth);
  case PYHOST_KIND_DICT: return dict_to_python(h, v, depth);
  case PYHOST_KIND_OBJECT:
    PY.Py_IncRef(v->u.obj);
    return v->u.obj;
  }
  PY.PyErr_SetString(*PY.PyExc_TypeError, "corrupt pyhost value");
  return NULL;
}

PyObject *pyhost__to_python(pyhost *h, const pyhost_value *v) {
  return to_python(h, v, 0);
}
