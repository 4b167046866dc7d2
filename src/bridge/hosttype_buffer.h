/* hosttype_buffer.h: host types whose instances export their payload's memory through
 * the buffer protocol (pyhost_type_spec.getbuffer, 3.11+), for hosttype.c. */
#ifndef PYHOST_HOSTTYPE_BUFFER_H
#define PYHOST_HOSTTYPE_BUFFER_H

#include "internal.h"

/* A payload Python holds buffer views of, and how many. */
struct pyhost__exported {
  const void *payload;
  size_t views;
};

/* What a type's instances export: the host's callback, its userdata, the type's name
 * for messages, and the payloads exported now (counted by payload, the memory the host
 * would resize or free: instances that share a payload share its count). */
struct pyhost__type_exporter {
  pyhost_getbuffer fn; /* NULL: instances export nothing */
  void *userdata;
  const char *tp_name;
  struct pyhost__exported *exported; /* n_exported entries; NULL when none */
  size_t n_exported, cap_exported;
};

/* The buffer views Python holds of payload (GIL held). */
size_t pyhost__type_exporter_views(const struct pyhost__type_exporter *e, const void *payload);

/* PYHOST_OK, or PYHOST_VERSION with h's message set for a spec with getbuffer on a
 * runtime whose stable ABI has no buffer protocol (before 3.11). */
int pyhost__type_exporter_check(pyhost *h, const pyhost_type_spec *s);

/* Appends the buffer slots (getbuffer and releasebuffer functions given) to slots at
 * *n when e exports. */
void pyhost__type_exporter_slots(const struct pyhost__type_exporter *e, PyType_Slot *slots,
                                 int *n, void *getbuffer, void *releasebuffer);

/* bf_getbuffer of an instance whose payload is in use: asks the host for payload's
 * memory, fills view (taking a reference to self) and counts the export on payload.
 * 0, or -1 with BufferError (or MemoryError) set and view->obj NULL. */
int pyhost__type_exporter_get(struct pyhost__type_exporter *e, void *payload, PyObject *self,
                              Py_buffer *view, int flags);

/* bf_releasebuffer: frees what the export kept and counts it out. */
void pyhost__type_exporter_release(struct pyhost__type_exporter *e, Py_buffer *view);

#endif
