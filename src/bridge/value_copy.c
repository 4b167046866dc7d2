/* value_copy.c: pyhost_value_copy and pyhost_value_lookup. */
#include "internal.h"

#include <string.h>

static pyhost_value *copy(const pyhost_value *v) {
  pyhost_value *c = pyhost__value_new((pyhost_kind)v->kind);
  if (!c) return NULL;
  c->big = v->big;
  if (v->type_name && !(c->type_name = pyhost__strdup(v->type_name))) goto fail;
  switch (v->kind) {
  case PYHOST_KIND_STR:
  case PYHOST_KIND_BYTES:
  text:
    if (!(c->u.s.p = pyhost__memdup(v->u.s.p, v->u.s.len))) goto fail;
    c->u.s.len = v->u.s.len;
    break;
  case PYHOST_KIND_INT:
    if (v->big) goto text;
    c->u.i = v->u.i;
    break;
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE:
  case PYHOST_KIND_DICT:
    for (size_t i = 0; i < v->u.seq.n; i++) {
      pyhost_value *item = copy(v->u.seq.items[i]);
      if (!item || pyhost__value_push(c, item) < 0) {
        pyhost_value_free(item);
        goto fail;
      }
    }
    break;
  case PYHOST_KIND_OBJECT: {
    PyGILState_STATE g;
    if (!v->u.obj || !pyhost__python_running() || pyhost__inflight_begin(&g) != 0) goto fail;
    PY.Py_IncRef(v->u.obj);
    pyhost__inflight_end(g);
    c->u.obj = v->u.obj;
    break;
  }
  default:
    c->u = v->u; /* none, bool, float: plain data */
    break;
  }
  return c;
fail:
  pyhost_value_free(c);
  return NULL;
}

pyhost_value *pyhost_value_copy(const pyhost_value *v) {
  return v ? copy(v) : NULL;
}

const pyhost_value *pyhost_value_lookup(const pyhost_value *v, const char *key) {
  if (!v || !key || v->kind != PYHOST_KIND_DICT) return NULL;
  size_t klen = strlen(key);
  for (size_t i = 0; i + 1 < v->u.seq.n; i += 2) {
    const pyhost_value *k = v->u.seq.items[i];
    if (k->kind == PYHOST_KIND_STR && k->u.s.len == klen && memcmp(k->u.s.p, key, klen) == 0)
      return v->u.seq.items[i + 1];
  }
  return NULL;
}
