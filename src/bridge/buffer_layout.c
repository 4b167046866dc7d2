/* buffer_layout.c: the C-contiguous layout of memory pyhost exports to Python (one
 * native struct letter and a shape), read from a host's description and handed out as
 * Py_buffers.  Shared by host memory loans (buffer_host.c) and host types that export
 * their payload (hosttype_buffer.c). */
#include "buffer.h"

/* The item size of a native struct letter, 0 for letters pyhost does not lend: those
 * memoryview reads itself on every version (cast and item access). */
static Py_ssize_t format_itemsize(char c) {
  switch (c) {
  case 'b': case 'B': case 'c': case '?': return 1;
  case 'h': case 'H': return (Py_ssize_t)sizeof(short);
  case 'i': case 'I': return (Py_ssize_t)sizeof(int);
  case 'l': case 'L': return (Py_ssize_t)sizeof(long);
  case 'q': case 'Q': return (Py_ssize_t)sizeof(long long);
  case 'n': case 'N': return (Py_ssize_t)sizeof(size_t);
  case 'f': return (Py_ssize_t)sizeof(float);
  case 'd': return (Py_ssize_t)sizeof(double);
  default: return 0;
  }
}

int pyhost__layout_make(struct pyhost__layout *l, const char *format, int ndim,
                        const size_t *shape, const void *data, char *err, size_t errlen) {
  const char *f = format ? format : "B";
  if (!f[0] || f[1] || !(l->itemsize = format_itemsize(f[0]))) {
    pyhost__fmt(err, errlen, "format \"%.20s\" is not one native struct letter of bBhHiIlLqQnNfd?c", f);
    return -1;
  }
  if (ndim < 1 || ndim > PYHOST_BUFFER_MAXDIM) {
    pyhost__fmt(err, errlen, "ndim %d is not between 1 and %d", ndim, PYHOST_BUFFER_MAXDIM);
    return -1;
  }
  l->format[0] = f[0];
  l->format[1] = '\0';
  l->ndim = ndim;
  size_t total = (size_t)l->itemsize;
  for (int i = ndim - 1; i >= 0; i--) {
    size_t n = shape[i];
    if (n == 0 && ndim > 1) {
      pyhost__fmt(err, errlen, "shape[%d] is 0 in a %d-dimensional buffer", i, ndim);
      return -1;
    }
    l->shape[i] = (Py_ssize_t)n;
    l->strides[i] = (Py_ssize_t)total;
    if (n && total > (size_t)PY_SSIZE_T_MAX / n) {
      pyhost__fmt(err, errlen, "the size overflows");
      return -1;
    }
    total *= n;
  }
  l->len = (Py_ssize_t)(shape[0] ? total : 0);
  if (!data && l->len) {
    pyhost__fmt(err, errlen, "data is NULL with %zu bytes", total);
    return -1;
  }
  return 0;
}

void pyhost__layout_export(const struct pyhost__layout *l, void *data, int readonly,
                           Py_buffer *view, int flags) {
  view->buf = data;
  view->len = l->len;
  view->itemsize = l->itemsize;
  view->readonly = readonly;
  view->format = (flags & PYHOST__BUF_FORMAT) ? (char *)l->format : NULL;
  /* without ND the consumer reads the bytes as one contiguous run, which they are */
  int nd = (flags & PYHOST__BUF_ND) == PYHOST__BUF_ND;
  view->ndim = nd ? l->ndim : 1;
  view->shape = nd ? (Py_ssize_t *)l->shape : NULL;
  view->strides = (flags & PYHOST__BUF_STRIDES) == PYHOST__BUF_STRIDES ? (Py_ssize_t *)l->strides : NULL;
  view->suboffsets = NULL;
}
