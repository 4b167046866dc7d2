/* libcheck_read.c: what the format parsers (libcheck_elf.c, libcheck_pe.c,
 * libcheck_macho.c) share for reading headers: bounded offsets, reads that stay inside
 * the source, numbers of either byte order, the "damaged" verdict.  Below the parsers
 * and libcheck.c, which runs them, so that no two of these files need each other. */
#include "libcheck.h"

#include <stdarg.h>

int pyhost__libcheck_end(uint64_t off, uint64_t len, uint64_t *end) {
  if (len > UINT64_MAX - off) return -1;
  *end = off + len;
  return 0;
}

int pyhost__libcheck_read(const struct pyhost__libsrc *src, uint64_t off, void *buf, size_t n) {
  uint64_t end;
  if (pyhost__libcheck_end(off, n, &end) != 0 || end > src->size) return -1;
  return src->read(src->ctx, off, buf, n);
}

int pyhost__libcheck_damaged(char *why, size_t cap, const char *fmt, ...) {
  struct pyhost__strbuf sb;
  va_list ap;
  va_start(ap, fmt);
  pyhost__strbuf_init(&sb, why, cap);
  pyhost__strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  return PYHOST__LIB_DAMAGED;
}

uint64_t pyhost__libcheck_get(const unsigned char *p, int size, int big) {
  uint64_t v = 0;
  for (int i = 0; i < size; i++) v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
  return v;
}
