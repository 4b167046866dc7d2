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

/* The memoryview a pyhost_buffer lends (a new reference), or NULL with the exception
 * set (released handle: ValueError). */
PyObject *pyhost__buffer_object(const pyhost_buffer *b);

/* Fills *view with o's buffer (GIL held; o borrowed, the view takes its own
 * reference): PYHOST_OK, or a status with h's message set (fn names the caller) and
 * *view zeroed. */
int pyhost__view_from_object(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                             const char *fn);

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
