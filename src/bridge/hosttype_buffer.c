/* hosttype_buffer.c: host types whose instances export their payload's memory through
 * the buffer protocol (pyhost_type_spec.getbuffer).
 *
 * The host describes the memory at each request (it may move between requests, never
 * during one: each export is counted on the instance, and the host asks
 * pyhost_object_exports before it resizes or frees).  Every export keeps its own copy
 * of the layout (format, shape, strides), freed when the consumer releases it, so a
 * later request that describes other memory does not change what earlier views read.
 * The stable ABI has the buffer slots from 3.11 only: before, a type asking for them
 * is refused when it is made. */
#include "hosttype_buffer.h"
#include "buffer.h"

#include <string.h>

int pyhost__type_exporter_check(pyhost *h, const pyhost_type_spec *s) {
  if (!s->getbuffer || pyhost__runtime_at_least(3, 11)) return PYHOST_OK;
  return pyhost__set_error(h, PYHOST_VERSION,
                           "pyhost_type_new: %s: spec->getbuffer needs Python 3.11 or later (the "
                           "stable ABI has no buffer protocol before); this Python is %lu.%lu",
                           s->name, (h->hexversion >> 24) & 0xff, (h->hexversion >> 16) & 0xff);
}

void pyhost__type_exporter_slots(const struct pyhost__type_exporter *e, PyType_Slot *slots,
                                 int *n, void *getbuffer, void *releasebuffer) {
  if (!e->fn) return;
  slots[(*n)++] = (PyType_Slot){PYHOST__BF_GETBUFFER, getbuffer};
  slots[(*n)++] = (PyType_Slot){PYHOST__BF_RELEASEBUFFER, releasebuffer};
}

/* -1 with BufferError "<type>: <why>". */
static int refuse(const struct pyhost__type_exporter *e, const char *why) {
  PY.PyErr_Format(*PY.PyExc_BufferError, "%s: %s", e->tp_name, why);
  return -1;
}

/* What an export keeps until it is released (view->internal). */
struct export_rec {
  struct pyhost__layout l;
  const void *payload;
};

static struct pyhost__exported *entry_of(const struct pyhost__type_exporter *e,
                                         const void *payload) {
  for (size_t i = 0; i < e->n_exported; i++)
    if (e->exported[i].payload == payload) return &e->exported[i];
  return NULL;
}

size_t pyhost__type_exporter_views(const struct pyhost__type_exporter *e, const void *payload) {
  const struct pyhost__exported *x = entry_of(e, payload);
  return x ? x->views : 0;
}

/* Counts one more view of payload: 0, or -1 when memory for the entry cannot be had. */
static int count_in(struct pyhost__type_exporter *e, const void *payload) {
  struct pyhost__exported *x = entry_of(e, payload);
  if (!x) {
    if (e->n_exported == e->cap_exported) {
      size_t cap = e->cap_exported ? 2 * e->cap_exported : 4;
      struct pyhost__exported *a = pyhost__realloc(e->exported, cap * sizeof *a);
      if (!a) return -1;
      e->exported = a;
      e->cap_exported = cap;
    }
    x = &e->exported[e->n_exported++];
    x->payload = payload;
    x->views = 0;
  }
  x->views++;
  return 0;
}

/* Counts a view of payload out; the table goes when the last entry does (no memory
 * stays with a type nobody exports from). */
static void count_out(struct pyhost__type_exporter *e, const void *payload) {
  struct pyhost__exported *x = entry_of(e, payload);
  if (!x || --x->views) return;
  *x = e->exported[--e->n_exported];
  if (e->n_exported) return;
  pyhost__free(e->exported);
  e->exported = NULL;
  e->cap_exported = 0;
}

int pyhost__type_exporter_get(struct pyhost__type_exporter *e, void *payload, PyObject *self,
                              Py_buffer *view, int flags) {
  view->obj = NULL;
  pyhost_buffer_info info;
  memset(&info, 0, sizeof info);
  int rc = e->fn(payload, e->userdata, &info);
  char why[200];
  if (rc != PYHOST_OK) {
    pyhost__fmt(why, sizeof why, "the host gives no buffer now (%s)", pyhost_status_name(rc));
    return refuse(e, why);
  }
  if ((flags & PYHOST__BUF_WRITABLE) && !info.writable)
    return refuse(e, "the buffer is read-only");
  struct export_rec *x = pyhost__malloc(sizeof *x);
  if (!x || count_in(e, payload) < 0) {
    pyhost__free(x);
    PY.PyErr_NoMemory();
    return -1;
  }
  char err[160];
  if (pyhost__layout_make(&x->l, info.format, info.ndim, info.shape, info.data, err, sizeof err)) {
    count_out(e, payload);
    pyhost__free(x);
    pyhost__fmt(why, sizeof why, "the host's buffer: %s", err);
    return refuse(e, why);
  }
  x->payload = payload;
  pyhost__layout_export(&x->l, info.data, !info.writable, view, flags);
  view->internal = x;
  PY.Py_IncRef(self);
  view->obj = self;
  return 0;
}

void pyhost__type_exporter_release(struct pyhost__type_exporter *e, Py_buffer *view) {
  struct export_rec *x = view->internal;
  view->internal = NULL;
  if (!x) return;
  count_out(e, x->payload);
  pyhost__free(x);
}
