/* buffer_view.c: Python buffers read by the host in place (pyhost_view_*; see pyhost.h,
 * "bulk data").
 *
 * 3.11+: PyObject_GetBuffer with format, shape and strides, held until the host
 * releases the view.  Before 3.11 the stable ABI has no Py_buffer: a bytes object is
 * read in place (immutable, held), a bytearray in place while a memoryview of it is held
 * (which refuses its resizing), and any other exporter through one copy,
 * memoryview(o).tobytes(), with its format and shape read from the memoryview.
 */
#include "buffer.h"
#include "bridge.h" /* pyhost__sole_reference */

#include <string.h>

/* What a view holds, inside pyhost_view.internal_. */
enum { HELD_NONE, HELD_PYBUFFER, HELD_OBJECT, HELD_VALUE };
struct held {
  int kind;
  int lent;            /* a callback's borrowed view: pyhost releases it (lent_end) */
  PyObject *obj;       /* HELD_OBJECT: the bytes, or a memoryview of the bytearray */
  Py_buffer pb;        /* HELD_PYBUFFER */
  Py_ssize_t one[2];   /* the shape and stride of a 1-dimensional view pyhost made */
  void *alloc;         /* a copy's shape, strides and format (pyhost__malloc) */
};
_Static_assert(sizeof(struct held) <= sizeof(((pyhost_view *)0)->internal_),
               "pyhost_view.internal_ holds struct held");
_Static_assert(sizeof(Py_ssize_t) == sizeof(ptrdiff_t), "shape and strides are Py_ssize_t");

static struct held *held_of(pyhost_view *v) { return (struct held *)(void *)v->internal_; }

/* An empty view: its public fields zero, holding nothing.  Field by field, not a memset
 * of the whole struct: the Py_buffer inside internal_ is written whole by
 * PyObject_GetBuffer before it is read (g2 in docs/performance.md). */
static void view_clear(pyhost_view *view) {
  struct held *k = held_of(view);
  view->data = NULL;
  view->len = view->itemsize = 0;
  view->format = NULL;
  view->readonly = view->ndim = view->copied = 0;
  view->shape = view->strides = NULL;
  k->kind = HELD_NONE;
  k->lent = 0;
  k->obj = NULL;
  k->alloc = NULL;
}

pyhost_value *pyhost__object_value(PyObject *o) {
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_OBJECT);
  if (!v) {
    PY.PyErr_NoMemory();
    return NULL;
  }
  char name[256];
  PY.Py_IncRef(o);
  v->u.obj = o;
  pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
  if (!(v->type_name = pyhost__strdup(name))) {
    pyhost_value_free(v);
    PY.PyErr_NoMemory();
    return NULL;
  }
  return v;
}

/* A view of n contiguous bytes at data. */
static void fill_bytes(pyhost_view *view, void *data, size_t n, int readonly) {
  struct held *k = held_of(view);
  k->one[0] = (Py_ssize_t)n;
  k->one[1] = 1;
  view->data = data;
  view->len = n;
  view->itemsize = 1;
  view->format = "B";
  view->readonly = readonly;
  view->ndim = 1;
  view->shape = &k->one[0];
  view->strides = &k->one[1];
}

static int c_contiguous(const pyhost_view *v) {
  ptrdiff_t want = (ptrdiff_t)v->itemsize;
  for (int i = v->ndim - 1; i >= 0; i--) {
    if (v->shape[i] > 1 && v->strides[i] != want) return 0;
    want *= v->shape[i];
  }
  return 1;
}

/* PYHOST_TYPE with the pending exception's text ("memoryview: a bytes-like object is
 * required, not 'int'"), the exception cleared. */
static int type_error_from_exception(pyhost *h, const char *fn) {
  PyObject *t, *v, *tb;
  PY.PyErr_Fetch(&t, &v, &tb);
  PyObject *s = v ? PY.PyObject_Str(v) : NULL;
  char *text = s ? pyhost__utf8_copy(s, NULL) : NULL;
  PY.PyErr_Clear();
  int rc = pyhost__set_error(h, PYHOST_TYPE, "%s: %s", fn, text ? text : "no buffer");
  pyhost__free(text);
  PY.Py_DecRef(s);
  PY.Py_DecRef(t);
  PY.Py_DecRef(v);
  PY.Py_DecRef(tb);
  return rc;
}

PyObject *pyhost__call_method0(PyObject *o, const char *name) {
  PyObject *m = PY.PyObject_GetAttrString(o, name);
  PyObject *r = m ? PY.PyObject_CallObject(m, NULL) : NULL;
  PY.Py_DecRef(m);
  return r;
}

void pyhost__memoryview_drop(PyObject *mv) {
  PYHOST__ASSERT_GIL();
  /* the last reference's dealloc releases the view exactly as release() would, and no
   * Python code can see the difference: no method call for the common end */
  if (!pyhost__sole_reference(mv)) {
    PyObject *r = pyhost__call_method0(mv, "release");
    if (r) PY.Py_DecRef(r);
    else PY.PyErr_Clear();
  }
  PY.Py_DecRef(mv);
}

/* The view's fields from the Py_buffer it holds now. */
static void fill_from_pybuffer(pyhost_view *view) {
  struct held *k = held_of(view);
  k->kind = HELD_PYBUFFER;
  view->data = k->pb.buf;
  view->len = (size_t)k->pb.len;
  view->itemsize = (size_t)k->pb.itemsize;
  view->format = k->pb.format ? k->pb.format : "B";
  view->readonly = k->pb.readonly;
  view->ndim = k->pb.ndim;
  view->shape = k->pb.shape;
  view->strides = k->pb.strides;
}

static int from_pybuffer(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                         const char *fn) {
  int want = PYHOST__BUF_RECORDS_RO | ((flags & PYHOST_VIEW_WRITABLE) ? PYHOST__BUF_WRITABLE : 0);
  if (PY.PyObject_GetBuffer(o, &held_of(view)->pb, want) < 0) return type_error_from_exception(h, fn);
  fill_from_pybuffer(view);
  return PYHOST_OK;
}

/* Before 3.11, an exporter other than bytes and bytearray: one C-ordered copy. */
static int from_copy(pyhost *h, PyObject *mv, pyhost_view *view, const char *fn) {
  struct held *k = held_of(view);
  PyObject *fmt = PY.PyObject_GetAttrString(mv, "format");
  PyObject *shape = fmt ? PY.PyObject_GetAttrString(mv, "shape") : NULL;
  PyObject *isz = shape ? PY.PyObject_GetAttrString(mv, "itemsize") : NULL;
  PyObject *bytes = isz ? pyhost__call_method0(mv, "tobytes") : NULL;
  size_t flen = 0;
  char *ftext = bytes ? pyhost__utf8_copy(fmt, &flen) : NULL;
  Py_ssize_t ndim = ftext ? PY.PyTuple_Size(shape) : -1;
  int rc = PYHOST_OK;
  if (ndim < 0 || (k->alloc = pyhost__malloc(2 * sizeof(Py_ssize_t) * (size_t)ndim + flen + 1)) == NULL) {
    rc = PY.PyErr_Occurred() ? pyhost__take_exception(h, fn)
                             : pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
  } else {
    Py_ssize_t *sh = k->alloc, *st = sh + ndim;
    char *f = (char *)(st + ndim);
    memcpy(f, ftext, flen + 1);
    /* memoryview's own ints: exact, and within Py_ssize_t */
    long long itemsize = PY.PyLong_AsLongLong(isz);
    for (Py_ssize_t i = 0; i < ndim; i++)
      sh[i] = (Py_ssize_t)PY.PyLong_AsLongLong(PY.PyTuple_GetItem(shape, i));
    if (PY.PyErr_Occurred()) rc = pyhost__take_exception(h, fn);
    Py_ssize_t stride = (Py_ssize_t)itemsize;
    for (Py_ssize_t i = ndim - 1; !rc && i >= 0; i--) {
      st[i] = stride;
      stride *= sh[i];
    }
    char *data = NULL;
    Py_ssize_t len = 0;
    if (!rc && PY.PyBytes_AsStringAndSize(bytes, &data, &len) < 0) rc = pyhost__take_exception(h, fn);
    if (!rc) {
      k->kind = HELD_OBJECT;
      k->obj = bytes;
      bytes = NULL;
      view->data = data;
      view->len = (size_t)len;
      view->itemsize = (size_t)itemsize;
      view->format = f;
      view->readonly = 1;
      view->copied = 1;
      view->ndim = (int)ndim;
      view->shape = sh;
      view->strides = st;
    }
  }
  pyhost__free(ftext);
  PY.Py_DecRef(bytes);
  PY.Py_DecRef(isz);
  PY.Py_DecRef(shape);
  PY.Py_DecRef(fmt);
  return rc;
}

static int from_legacy(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                       const char *fn) {
  struct held *k = held_of(view);
  unsigned long tf = PY.PyType_GetFlags(Py_TYPE(o));
  if (tf & Py_TPFLAGS_BYTES_SUBCLASS) {
    if (flags & PYHOST_VIEW_WRITABLE)
      return pyhost__set_error(h, PYHOST_TYPE, "%s: bytes is read-only", fn);
    char *data = NULL;
    Py_ssize_t len = 0;
    if (PY.PyBytes_AsStringAndSize(o, &data, &len) < 0) return pyhost__take_exception(h, fn);
    PY.Py_IncRef(o);
    k->kind = HELD_OBJECT;
    k->obj = o;
    fill_bytes(view, data, (size_t)len, 1);
    return PYHOST_OK;
  }
  PyObject *mv = PY.PyMemoryView_FromObject(o); /* held: a bytearray is not resized */
  if (!mv) return type_error_from_exception(h, fn);
  if (Py_TYPE(o) == PY.PyByteArray_Type || PY.PyType_IsSubtype(Py_TYPE(o), PY.PyByteArray_Type)) {
    k->kind = HELD_OBJECT;
    k->obj = mv;
    fill_bytes(view, PY.PyByteArray_AsString(o), (size_t)PY.PyByteArray_Size(o), 0);
    return PYHOST_OK;
  }
  int rc;
  if (flags & PYHOST_VIEW_WRITABLE) {
    char name[256];
    pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
    rc = pyhost__set_error(h, PYHOST_TYPE,
                           "%s: %s lends no writable memory before Python 3.11 (only bytearray "
                           "does; others arrive as a read-only copy)", fn, name);
  } else {
    rc = from_copy(h, mv, view, fn);
  }
  pyhost__memoryview_drop(mv);
  return rc;
}

int pyhost__view_from_object(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                             const char *fn) {
  PYHOST__ASSERT_GIL();
  view_clear(view);
  int rc = pyhost__runtime_at_least(3, 11) ? from_pybuffer(h, o, flags, view, fn)
                                           : from_legacy(h, o, flags, view, fn);
  if (!rc && (flags & PYHOST_VIEW_CONTIGUOUS) && !c_contiguous(view)) {
    char name[256];
    pyhost__type_name((PyObject *)Py_TYPE(o), name, sizeof name);
    pyhost_view_release(h, view);
    return pyhost__set_error(h, PYHOST_TYPE, "%s: the %s buffer is not C-contiguous", fn, name);
  }
  if (rc) view_clear(view);
  return rc;
}

int pyhost_view_get(pyhost *h, const pyhost_value *obj, unsigned flags, pyhost_view *view) {
  const char *fn = "pyhost_view_get";
  if (!view || !obj)
    return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, view ? "obj" : "view");
  view_clear(view);
  if (obj->kind == PYHOST_KIND_BYTES) { /* C data already: no Python */
    if (flags & PYHOST_VIEW_WRITABLE)
      return pyhost__set_error(h, PYHOST_TYPE, "%s: a bytes value is read-only", fn);
    held_of(view)->kind = HELD_VALUE;
    fill_bytes(view, obj->u.s.p, obj->u.s.len, 1);
    return PYHOST_OK;
  }
  if (obj->kind != PYHOST_KIND_OBJECT)
    return pyhost__set_error(h, PYHOST_TYPE, "%s: expected an object with the buffer protocol, "
                             "got a %s value", fn, pyhost_kind_name((pyhost_kind)obj->kind));
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  rc = pyhost__view_from_object(h, obj->u.obj, flags, view, fn);
  pyhost__leave(h, gil);
  return rc;
}

/* Lets go of what the view holds (GIL held, Python running), and zeroes it. */
static void view_end(pyhost_view *view) {
  struct held *k = held_of(view);
  if (k->kind == HELD_PYBUFFER) PY.PyBuffer_Release(&k->pb);
  else if (k->kind == HELD_OBJECT) PY.Py_DecRef(k->obj);
  pyhost__free(k->alloc);
  view_clear(view);
}

void pyhost_view_release(pyhost *h, pyhost_view *view) {
  if (!view) return;
  struct held *k = held_of(view);
  if (k->lent) {
    /* the call's own, or a copy kept past it: released once, by lent_end */
    pyhost__set_error(h, PYHOST_MISUSE, "pyhost_view_release: a borrowed view (a callback's "
                      "buffer argument) is released by pyhost when the callback returns");
    return;
  }
  if (k->kind == HELD_PYBUFFER || k->kind == HELD_OBJECT) {
    PyGILState_STATE g;
    if (pyhost__free_begin(h, &g)) { /* else Python is gone, and what we held with it */
      view_end(view);
      pyhost__inflight_free_end(g);
      return;
    }
  }
  pyhost__free(k->alloc);
  view_clear(view);
}

/* ---- a callback's borrowed view: chained on the call's view (pyhost_args.lent) ---- */

/* The structs of borrowed views: taken from pyhost__bridge.lent_free and given back,
 * freed only after Py_FinalizeEx (one per view in flight at most; both ends run with
 * the GIL, which every interpreter pyhost runs shares).  So a pointer a callback kept
 * past its call still points into pyhost's memory: an empty view (data NULL, len 0)
 * whose release is refused, or another call's borrowed view, never freed memory. */
struct pyhost__lent_slot {
  pyhost_view view; /* first: the slot's address is the view's */
  struct pyhost__lent_slot *next; /* the free list's, or the call's chain while lent */
};

static struct pyhost__lent_slot *slot_of(pyhost_view *view) {
  return (struct pyhost__lent_slot *)(void *)view;
}

static void lent_free_all(void) {
  for (struct pyhost__lent_slot *s = pyhost__bridge.lent_free, *next; s; s = next) {
    next = s->next;
    pyhost__free(s);
  }
  pyhost__bridge.lent_free = NULL;
}

static pyhost_view *lent_take(void) {
  struct pyhost__lent_slot *s = pyhost__bridge.lent_free;
  if (s) {
    pyhost__bridge.lent_free = s->next;
  } else {
    if (!(s = pyhost__calloc(1, sizeof *s))) return NULL;
    pyhost__teardown_add(&pyhost__bridge.lent_hook, lent_free_all, PYHOST__AFTER_FINALIZE);
  }
  held_of(&s->view)->lent = 0; /* empty already: lent_give cleared it, or calloc */
  return &s->view;
}

static void lent_give(pyhost_view *view) {
  struct pyhost__lent_slot *s = slot_of(view);
  view_clear(view);
  held_of(view)->lent = 1;
  s->next = pyhost__bridge.lent_free;
  pyhost__bridge.lent_free = s;
}

/* The call's views released, the callback having returned (or never running): the
 * chain read before each release, which gives the slot back.  __release_buffer__
 * (3.12+) may run Python code here; an exception being handed to the caller stays as
 * it is.  No object per view: the list and the capsule that held it cost a typed call
 * with a buffer parameter about 850 instructions on 3.13 (g2_typed, docs/performance.md). */
void pyhost__view_lent_end(pyhost_view *first) {
  PyObject *t = NULL, *v = NULL, *tb = NULL;
  int raised = PY.PyErr_Occurred() != NULL; /* the common end has nothing to set aside */
  if (raised) PY.PyErr_Fetch(&t, &v, &tb);
  for (struct pyhost__lent_slot *s = slot_of(first), *next; s; s = next) {
    next = s->next;
    view_end(&s->view);
    lent_give(&s->view);
  }
  if (raised) PY.PyErr_Restore(t, v, tb);
}

/* A view of o for a callback's argument, o's not being a buffer of that kind kept
 * apart from the exporter's own failure: PYHOST_OK; PYHOST_TYPE with nothing raised
 * and *want naming what o is not; else a status with the exception taken into the
 * callback's frame. */
static int argument_view(pyhost *h, PyObject *o, unsigned flags, pyhost_view *view,
                         const char **want) {
  int writable = (flags & PYHOST_VIEW_WRITABLE) != 0;
  *want = writable ? "read-write bytes-like object" : "bytes-like object";
  if (pyhost__runtime_at_least(3, 11)) {
    /* the type's slot only: a non-exporter's __index__, __len__ or __iter__ never runs */
    if (!PY.PyObject_CheckBuffer(o)) return PYHOST_TYPE;
    int ask = PYHOST__BUF_RECORDS_RO | (writable ? PYHOST__BUF_WRITABLE : 0);
    if (PY.PyObject_GetBuffer(o, &held_of(view)->pb, ask) < 0) {
      if (!writable) return pyhost__take_exception(h, NULL);
      PY.PyErr_Clear(); /* as CPython's own read-write parameters (Argument Clinic) */
      return PYHOST_TYPE;
    }
    fill_from_pybuffer(view);
    if (writable && view->readonly) { /* an exporter that lent read-only memory anyway */
      view_end(view);
      return PYHOST_TYPE;
    }
    return PYHOST_OK;
  }
  int bytes = (PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_BYTES_SUBCLASS) != 0;
  if (!bytes) {
    /* an exporter before 3.11 is a C type (no __buffer__): this runs no Python code */
    PyObject *mv = PY.PyMemoryView_FromObject(o);
    if (!mv) {
      if (!PY.PyErr_ExceptionMatches(*PY.PyExc_TypeError)) return pyhost__take_exception(h, NULL);
      PY.PyErr_Clear();
      return PYHOST_TYPE;
    }
    PY.Py_DecRef(mv);
  }
  int rc = from_legacy(h, o, flags, view, "pyhost_args_view");
  if (rc == PYHOST_TYPE && !bytes) /* writable asked of an exporter lending a copy */
    *want = "bytearray (other exporters lend no writable memory before Python 3.11)";
  return rc;
}

int pyhost__view_lend(pyhost *h, PyObject *o, unsigned flags, pyhost_view **chain,
                      const pyhost_view **out, const char **want) {
  PYHOST__ASSERT_GIL();
  pyhost_view *view = lent_take();
  if (!view) {
    PY.PyErr_NoMemory();
    return pyhost__take_exception(h, NULL);
  }
  int rc = argument_view(h, o, flags, view, want);
  if (!rc && (flags & PYHOST_VIEW_CONTIGUOUS) && !c_contiguous(view)) {
    view_end(view);
    *want = "contiguous buffer";
    rc = PYHOST_TYPE;
  }
  if (rc) {
    lent_give(view);
    return rc;
  }
  held_of(view)->lent = 1;
  slot_of(view)->next = *chain ? slot_of(*chain) : NULL;
  *chain = view;
  *out = view;
  return PYHOST_OK;
}
