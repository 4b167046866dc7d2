/* buffer_host.c: host memory lent to Python as a memoryview (pyhost_buffer_*; see
 * pyhost.h, "bulk data").
 *
 * 3.11+ (the first stable ABI with the buffer protocol): the memoryview is made from a
 * private exporter object, pyhost.HostMemory, whose getbuffer and releasebuffer slots
 * count the Py_buffers it has handed out.  Every view Python derives (slices, casts,
 * numpy arrays) holds one of them, directly or through the memoryview's managed buffer,
 * so when the host releases the loan pyhost releases its own memoryview and the count
 * says whether anything still reads the memory: the host's free callback runs when it
 * reaches 0, never earlier.  A released loan hands out no new Py_buffer (BufferError).
 *
 * Before 3.11 a host cannot write an exporter in the stable ABI, and a memoryview from
 * PyMemoryView_FromMemory cannot tell when the last view derived from it ends; so Python
 * gets a copy it owns (bytes, or a bytearray when writable) and writes are copied back
 * when the host releases.  Both paths lend the same memoryview shape and format.
 */
#include "buffer.h"
#include "bridge.h"

#include <string.h>

struct pyhost_buffer {
  uint32_t tag;         /* PYHOST__TAG_BUFFER (core.h) */
  void *data;
  struct pyhost__layout l;
  int readonly;
  pyhost_buffer_free_fn free_fn;
  void *userdata;
  PyObject *exporter;   /* 3.11+: the pyhost.HostMemory (strong) while the host lends */
  PyObject *copy;       /* before 3.11: the bytes or bytearray Python reads (strong) */
  PyObject *view;       /* the memoryview lent (strong) while the host lends */
  size_t exports;       /* Py_buffers the exporter handed out and has not got back */
  int host_done;        /* the host released its handle */
  int freed;            /* free_fn ran: data is no longer ours */
  int detached;         /* Python finalized: only the host's handle remains */
  int refs;             /* the host's handle and the exporter object's */
  struct pyhost_buffer *next, *prev; /* on pyhost__bridge.buffers until freed */
};

/* The exporter object: its record, NULL never (set at creation, dropped at dealloc). */
struct hostmem {
  PyObject ob_base;
  struct pyhost_buffer *b;
};

/* ---- the record ---- */

static void run_free(struct pyhost_buffer *b) {
  if (b->freed) return;
  b->freed = 1;
  if (b->free_fn) b->free_fn(b->data, b->userdata);
}

static void unlink_record(struct pyhost_buffer *b) {
  if (b->detached) return;
  if (b->prev) b->prev->next = b->next;
  else pyhost__bridge.buffers = b->next;
  if (b->next) b->next->prev = b->prev;
  b->next = b->prev = NULL;
  b->detached = 1;
}

static void record_unref(struct pyhost_buffer *b) {
  if (--b->refs) return;
  unlink_record(b);
  pyhost__handle_retire(b);
}

/* 1 when b is a buffer handle the host has not released (its record may outlive the
 * release while Python still holds views of it). */
static int host_live(const struct pyhost_buffer *b) {
  return pyhost__tagged(b, PYHOST__TAG_BUFFER) && !b->host_done;
}

/* ---- the exporter (3.11+) ---- */

static int hostmem_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  struct pyhost_buffer *b = ((struct hostmem *)self)->b;
  view->obj = NULL;
  if (b->host_done) {
    PY.PyErr_SetString(*PY.PyExc_BufferError, "the host has released this memory");
    return -1;
  }
  if ((flags & PYHOST__BUF_WRITABLE) && b->readonly) {
    PY.PyErr_SetString(*PY.PyExc_BufferError, "the host lent this memory read-only");
    return -1;
  }
  pyhost__layout_export(&b->l, b->data, b->readonly, view, flags);
  view->internal = NULL;
  PY.Py_IncRef(self);
  view->obj = self;
  b->exports++;
  return 0;
}

static void hostmem_releasebuffer(PyObject *self, Py_buffer *view) {
  (void)view;
  struct pyhost_buffer *b = ((struct hostmem *)self)->b;
  if (--b->exports == 0 && b->host_done) run_free(b);
}

static void hostmem_dealloc(PyObject *self) {
  struct pyhost_buffer *b = ((struct hostmem *)self)->b;
  pyhost__heap_free(self);
  if (b) record_unref(b); /* NULL: a spare, between loans */
}

static PyObject *hostmem_refuse_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)type, (void)args, (void)kwargs;
  PY.PyErr_SetString(*PY.PyExc_TypeError, "pyhost.HostMemory objects cannot be created from Python");
  return NULL;
}

/* An exporter for b (counted in b->refs): this interpreter's spare, or a new one; NULL
 * with the exception set. */
static PyObject *hostmem_new(struct pyhost_buffer *b) {
  struct pyhost__istate *is = pyhost__istate(); /* a heap type is its interpreter's */
  PyObject *o = is->hostmem_spare;
  if (o) {
    is->hostmem_spare = NULL;
    ((struct hostmem *)o)->b = b;
    b->refs++;
    return o;
  }
  if (!is->hostmem_type) {
    PyType_Slot slots[] = {{Py_tp_dealloc, (void *)hostmem_dealloc},
                           {Py_tp_new, (void *)hostmem_refuse_new},
                           {PYHOST__BF_GETBUFFER, (void *)hostmem_getbuffer},
                           {PYHOST__BF_RELEASEBUFFER, (void *)hostmem_releasebuffer},
                           {0, NULL}};
    PyType_Spec spec = {"pyhost.HostMemory", (int)sizeof(struct hostmem), 0,
                        (unsigned int)pyhost__tpflags_default(), slots};
    is->hostmem_type = (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
    if (!is->hostmem_type) return NULL;
  }
  o = pyhost__heap_alloc(is->hostmem_type);
  if (o) {
    ((struct hostmem *)o)->b = b;
    b->refs++;
  }
  return o;
}

/* ---- the copy (before 3.11) ---- */

/* mv.cast(format, shape): a new reference, or NULL with the exception set. */
static PyObject *cast_view(PyObject *mv, const struct pyhost_buffer *b) {
  PyObject *cast = PY.PyObject_GetAttrString(mv, "cast");
  PyObject *fmt = cast ? PY.PyUnicode_FromString(b->l.format) : NULL;
  PyObject *shape = fmt ? PY.PyList_New(b->l.ndim) : NULL;
  PyObject *r = NULL;
  int ok = shape != NULL;
  for (int i = 0; ok && i < b->l.ndim; i++) {
    PyObject *n = PY.PyLong_FromLongLong((long long)b->l.shape[i]);
    ok = n && PY.PyList_SetItem(shape, i, n) == 0;
  }
  if (ok) r = PY.PyObject_CallFunctionObjArgs(cast, fmt, shape, NULL);
  PY.Py_DecRef(shape);
  PY.Py_DecRef(fmt);
  PY.Py_DecRef(cast);
  return r;
}

static PyObject *copy_view(struct pyhost_buffer *b) {
  const char *src = b->l.len ? (const char *)b->data : "";
  b->copy = b->readonly ? PY.PyBytes_FromStringAndSize(src, b->l.len)
                        : PY.PyByteArray_FromStringAndSize(src, b->l.len);
  PyObject *mv = b->copy ? PY.PyMemoryView_FromObject(b->copy) : NULL;
  if (!mv || (b->l.format[0] == 'B' && b->l.ndim == 1)) return mv;
  PyObject *r = cast_view(mv, b);
  PY.Py_DecRef(mv);
  return r;
}

/* ---- finalize ---- */

/* Writes Python's writes to a copy back to the host's memory (before 3.11). */
static void copy_back(struct pyhost_buffer *b) {
  if (b->copy && !b->readonly && b->l.len)
    memcpy(b->data, PY.PyByteArray_AsString(b->copy), (size_t)b->l.len);
}

/* Keeps e, the exporter of a loan the host released, as its interpreter's spare for the
 * next loan, when nothing but pyhost holds it (no view, no Py_buffer, no Python name:
 * no Python code can ever see it again, so it can serve other memory) and the slot is
 * free: 1, with e's reference on its record dropped; else 0.  It saves the next loan
 * the stable ABI's allocation and this one its deallocation (tp_alloc, tp_free and the
 * type's reference, through PyType_GetSlot). */
static int hostmem_keep(PyObject *e, struct pyhost_buffer *b) {
  struct pyhost__istate *is = pyhost__istate();
  /* the type says e is this interpreter's (a loan may be released from another) */
  if (is->hostmem_spare || b->exports || Py_TYPE(e) != is->hostmem_type ||
      !pyhost__sole_reference(e))
    return 0;
  ((struct hostmem *)e)->b = NULL;
  is->hostmem_spare = e;
  record_unref(b); /* never the last: the host's handle holds it */
  return 1;
}

void pyhost__hostmem_spare_drop(struct pyhost__istate *is) {
  PyObject *e = is->hostmem_spare;
  is->hostmem_spare = NULL;
  if (e) PY.Py_DecRef(e);
}

/* Drops pyhost's references: the memoryview released, the copy written back; the
 * exporter kept as the spare when keep says so and it may be (hostmem_keep). */
static void drop_refs(struct pyhost_buffer *b, int keep) {
  copy_back(b);
  if (b->view) {
    pyhost__memoryview_drop(b->view);
    b->view = NULL;
  }
  if (b->copy) {
    PY.Py_DecRef(b->copy);
    b->copy = NULL;
  }
  PyObject *e = b->exporter;
  b->exporter = NULL;
  /* a decref may free the exporter, never the record: the host's ref */
  if (e && !(keep && hostmem_keep(e, b))) PY.Py_DecRef(e);
}

/* Before Py_FinalizeEx, with the GIL: pyhost lets go of every loan's objects. */
static void drop_all(void) {
  PYHOST__ASSERT_GIL();
  for (struct pyhost_buffer *b = pyhost__bridge.buffers; b; b = b->next) drop_refs(b, 0);
  pyhost__hostmem_spare_drop(&pyhost__bridge.main);
  if (pyhost__bridge.main.hostmem_type) {
    PY.Py_DecRef((PyObject *)pyhost__bridge.main.hostmem_type);
    pyhost__bridge.main.hostmem_type = NULL;
  }
}

/* After Py_FinalizeEx: exporters Python never freed will not call back.  Loans the host
 * released are done (their memory is freed now); the others wait for the host alone. */
static void after_finalize(void) {
  struct pyhost_buffer *b = pyhost__bridge.buffers, *next;
  pyhost__bridge.main.hostmem_spare = NULL; /* one kept after drop_all went with Python */
  for (; b; b = next) {
    next = b->next;
    unlink_record(b);
    b->exports = 0;
    b->refs = 1;
    if (b->host_done) {
      run_free(b);
      pyhost__handle_retire(b);
    }
  }
}

/* ---- the API ---- */

static int check_spec(pyhost *h, const pyhost_buffer_spec *s, struct pyhost_buffer *b) {
  char err[160];
  if (pyhost__layout_make(&b->l, s->format, s->ndim, s->shape, s->data, err, sizeof err))
    return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_buffer_new: %s", err);
  b->data = s->data;
  b->readonly = !s->writable;
  b->free_fn = s->free_fn;
  b->userdata = s->userdata;
  return PYHOST_OK;
}

int pyhost_buffer_new(pyhost *h, const pyhost_buffer_spec *spec, pyhost_buffer **out) {
  if (!out || !spec)
    return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_buffer_new: %s is NULL",
                             out ? "spec" : "out");
  *out = NULL;
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  /* malloc and memset, not calloc: glibc's calloc passes its thread cache by */
  struct pyhost_buffer *b = pyhost__malloc(sizeof *b);
  if (b) memset(b, 0, sizeof *b);
  if (!b) {
    rc = pyhost__set_error(h, PYHOST_NOMEM, "pyhost_buffer_new: out of memory");
  } else if (!(rc = check_spec(h, spec, b))) {
    b->tag = PYHOST__TAG_BUFFER;
    b->refs = 1;
    pyhost__teardown_add(&pyhost__bridge.buffers_drop_hook, drop_all, PYHOST__AT_DROP);
    pyhost__teardown_add(&pyhost__bridge.buffers_after_hook, after_finalize,
                         PYHOST__AFTER_FINALIZE);
    b->next = pyhost__bridge.buffers;
    if (b->next) b->next->prev = b;
    pyhost__bridge.buffers = b;
    if (pyhost__runtime_at_least(3, 11)) {
      if ((b->exporter = hostmem_new(b))) b->view = PY.PyMemoryView_FromObject(b->exporter);
    } else {
      b->view = copy_view(b);
    }
    if (!b->view) {
      rc = pyhost__take_exception(h, "pyhost_buffer_new");
      b->freed = 1; /* the memory stays the host's: no free callback */
      b->host_done = 1;
      drop_refs(b, 0);
      record_unref(b);
      b = NULL;
    }
    *out = b;
  } else {
    pyhost__free(b);
  }
  pyhost__leave(h, gil);
  return rc;
}

PyObject *pyhost__buffer_object(const pyhost_buffer *b) {
  if (!b || !b->view) {
    PY.PyErr_SetString(*PY.PyExc_ValueError, "pyhost_buffer: NULL or released buffer");
    return NULL;
  }
  PY.Py_IncRef(b->view);
  return b->view;
}

int pyhost_buffer_value(pyhost *h, pyhost_buffer *b, pyhost_value **view) {
  if (!view) return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_buffer_value: view is NULL");
  if (!host_live(b)) return pyhost__tag_refused(h, b, "pyhost_buffer_value", "buffer");
  *view = NULL;
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(*view = pyhost__object_value(b->view))) rc = pyhost__take_exception(h, "pyhost_buffer_value");
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_buffer_in_place(const pyhost_buffer *b) {
  return host_live(b) && b->exporter != NULL;
}

int pyhost_buffer_release(pyhost *h, pyhost_buffer *b, size_t *exports) {
  if (exports) *exports = 0;
  /* NULL, or released already (a second release) */
  if (!host_live(b)) return pyhost__tag_refused(h, b, "pyhost_buffer_release", "buffer");
  /* a call that succeeds leaves "not an error", as every call on h does */
  if (pyhost__handle_live(h)) pyhost__clear_message(h);
  PyGILState_STATE g;
  if (!pyhost__free_begin(h, &g)) {
    /* Python is finalized (or finalizing): its views died with it */
    b->host_done = 1;
    if (b->detached) {
      run_free(b);
      pyhost__handle_retire(b);
    } /* else the finalize hook frees it, after Py_FinalizeEx */
    return PYHOST_OK;
  }
  b->host_done = 1; /* first: the releases below may bring the count to 0 */
  drop_refs(b, 1);
  size_t left = b->exports;
  if (!left) run_free(b);
  record_unref(b);
  pyhost__inflight_free_end(g);
  if (exports) *exports = left;
  return PYHOST_OK;
}
