/* buffer.h: what the bulk-data files share (buffer_host.c, buffer_view.c,
 * buffer_array.c) with the calls in one line (callf.c, scalar.c).  The public side is
 * pyhost.h's "bulk data". */
#ifndef PYHOST_BUFFER_H
#define PYHOST_BUFFER_H

#include "internal.h"

/* The buffer protocol's flags (CPython's PyBUF_*; limited API from 3.11, values never
 * changed since 3.0) and the memoryview flags of PyMemoryView_FromMemory. */
#define PYHOST__BUF_WRITABLE 0x0001
#define PYHOST__BUF_FORMAT 0x0004
#define PYHOST__BUF_ND 0x0008
#define PYHOST__BUF_STRIDES (0x0010 | PYHOST__BUF_ND)
#define PYHOST__BUF_C_CONTIGUOUS (0x0020 | PYHOST__BUF_STRIDES)
#define PYHOST__BUF_RECORDS_RO (PYHOST__BUF_STRIDES | PYHOST__BUF_FORMAT)
#define PYHOST__BUF_READ 0x100
/* The type slots of the buffer protocol (typeslots.h; limited API from 3.11). */
#define PYHOST__BF_GETBUFFER 1
#define PYHOST__BF_RELEASEBUFFER 2

/* Memory pyhost exports: C-contiguous, one native struct letter (buffer_layout.c). */
struct pyhost__layout {
  Py_ssize_t len, itemsize;
  int ndim;
  char format[2];
  Py_ssize_t shape[PYHOST_BUFFER_MAXDIM], strides[PYHOST_BUFFER_MAXDIM];
};

/* Reads a host's description into *l: 0, or -1 with the reason in err (an unknown
 * format, ndim out of range, a 0 in a shape of more than one dimension, a size that
 * overflows, NULL data with items). */
int pyhost__layout_make(struct pyhost__layout *l, const char *format, int ndim,
                        const size_t *shape, const void *data, char *err, size_t errlen);

/* Fills view's memory fields from l and data as the consumer's flags ask (no obj, no
 * internal: the exporter's). */
void pyhost__layout_export(const struct pyhost__layout *l, void *data, int readonly,
                           Py_buffer *view, int flags);

/* Fills *view with o's buffer (GIL held; o borrowed, the view takes its own
 * reference): PYHOST_OK, or a status with h's message set (fn names the caller) and
 * *view zeroed. */
int pyhost__view_from_object(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                             const char *fn);

/* A borrowed view of o for a callback's argument (GIL held, o borrowed), as
 * pyhost__view_from_object reads it, chained first on *chain (the call's lent views:
 * pyhost__view_lent_end releases them once the callback returned; pyhost_view_release
 * refuses the view meanwhile).  PYHOST_OK with *out set; PYHOST_TYPE with nothing
 * raised when o is not a buffer of the kind flags ask, *want naming that kind ("bytes-
 * like object", "read-write bytes-like object", "contiguous buffer"); else a status
 * with the exception (the exporter's own) taken into the callback's frame. */
int pyhost__view_lend(pyhost *h, PyObject *o, unsigned flags, pyhost_view **chain,
                      const pyhost_view **out, const char **want);

/* An object value holding a new reference to o, never converted; NULL with the
 * exception set. */
pyhost_value *pyhost__object_value(PyObject *o);

/* o.name(): a new reference, or NULL with the exception set. */
PyObject *pyhost__call_method0(PyObject *o, const char *name);

/* mv.release() and a drop of pyhost's reference, with the GIL; a memoryview something
 * still holds a Py_buffer of stays as it is (BufferError cleared): its managed buffer
 * then keeps the exporter's count above 0. */
void pyhost__memoryview_drop(PyObject *mv);

#endif
