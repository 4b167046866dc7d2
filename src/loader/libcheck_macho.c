/* libcheck_macho.c: is a Mach-O library complete and consistent (libcheck.h)?
 *
 * Thin files (32/64-bit, either byte order) and fat files (fat_arch and fat_arch_64):
 * every slice inside the file, and in the slice dyld would pick (or in every slice when
 * any machine is accepted): the load commands inside sizeofcmds and the file, each
 * command's size sane, and every segment's fileoff + filesize inside the slice.  Not
 * checked: the contents (symbol tables, code), which would mean reading the whole file.
 */
#include "libcheck.h"

#include <string.h>

typedef unsigned long long ull;

#define damaged(...) pyhost__libcheck_damaged(why, cap, __VA_ARGS__)

/* A slice of the file: a thin Mach-O at base, size bytes long. */
struct slice { const struct pyhost__libsrc *src; uint64_t base, size; };

static int slice_read(const struct slice *s, uint64_t off, void *buf, size_t n) {
  uint64_t end;
  if (pyhost__libcheck_end(off, n, &end) != 0 || end > s->size) return -1;
  return pyhost__libcheck_read(s->src, s->base + off, buf, n);
}

static int check_segment(const struct slice *s, const unsigned char *c, uint32_t cmd, int big,
                         unsigned index, char *why, size_t cap) {
  int wide = cmd == 0x19;
  uint64_t off = pyhost__libcheck_get(c + (wide ? 40 : 32), wide ? 8 : 4, big);
  uint64_t size = pyhost__libcheck_get(c + (wide ? 48 : 36), wide ? 8 : 4, big), end;
  char name[17];
  memcpy(name, c + 8, 16);
  name[16] = '\0';
  for (char *p = name; *p; p++)
    if (*p < 0x20 || *p > 0x7e) *p = '?';
  if (pyhost__libcheck_end(off, size, &end) != 0)
    return damaged("load command %u (segment %s): offset %llu and size %llu pass 2^64", index, name,
                   (ull)off, (ull)size);
  if (end > s->size)
    return damaged("truncated: load command %u (segment %s) ends at byte %llu, the %s has %llu bytes",
                   index, name, (ull)(s->base + end), s->base ? "slice" : "file", (ull)s->size);
  return PYHOST__LIB_SOUND;
}

static int check_thin(const struct slice *s, const struct pyhost__libwant *want, int in_fat,
                      char *why, size_t cap) {
  unsigned char h[32];
  if (slice_read(s, 0, h, 4) != 0) return damaged("truncated: no room for the Mach-O magic");
  uint32_t magic = (uint32_t)pyhost__libcheck_get(h, 4, 0);
  int big = magic == 0xcefaedfeu || magic == 0xcffaedfeu;
  int wide = magic == 0xfeedfacfu || magic == 0xcffaedfeu;
  if (!wide && !big && magic != 0xfeedfaceu)
    return in_fat ? damaged("a fat slice at byte %llu is not a Mach-O file", (ull)s->base)
                  : PYHOST__LIB_FOREIGN;
  unsigned hsize = wide ? 32 : 28;
  if (slice_read(s, 0, h, hsize) != 0)
    return damaged("truncated: the Mach-O header needs %u bytes, the %s has %llu", hsize,
                   in_fat ? "slice" : "file", (ull)s->size);
  uint32_t cputype = (uint32_t)pyhost__libcheck_get(h + 4, 4, big);
  if (!in_fat && want->macho_cputype && cputype != want->macho_cputype) return PYHOST__LIB_FOREIGN;
  uint64_t ncmds = pyhost__libcheck_get(h + 16, 4, big), sizeofcmds = pyhost__libcheck_get(h + 20, 4, big);
  if (hsize + sizeofcmds > s->size)
    return damaged("truncated: the load commands end at byte %llu, the %s has %llu bytes",
                   (ull)(s->base + hsize + sizeofcmds), in_fat ? "slice" : "file", (ull)s->size);
  uint64_t at = 0;
  for (uint64_t i = 0; i < ncmds; i++) {
    unsigned char c[56];
    if (at + 8 > sizeofcmds || slice_read(s, hsize + at, c, 8) != 0)
      return damaged("load command %llu starts past the %llu bytes of load commands (sizeofcmds)",
                     (ull)i, (ull)sizeofcmds);
    uint32_t cmd = (uint32_t)pyhost__libcheck_get(c, 4, big) & 0x7fffffffu; /* less LC_REQ_DYLD */
    uint64_t cmdsize = pyhost__libcheck_get(c + 4, 4, big);
    if (cmdsize < 8 || cmdsize % 4 || at + cmdsize > sizeofcmds)
      return damaged("load command %llu has a size of %llu bytes: below 8, unaligned or past sizeofcmds (%llu)",
                     (ull)i, (ull)cmdsize, (ull)sizeofcmds);
    if (cmd == 0x1 || cmd == 0x19) { /* LC_SEGMENT, LC_SEGMENT_64 */
      unsigned need = cmd == 0x19 ? 56 : 40;
      if (cmdsize < need || slice_read(s, hsize + at, c, need) != 0)
        return damaged("load command %llu (a segment) has %llu bytes, fewer than %u", (ull)i, (ull)cmdsize, need);
      int rc = check_segment(s, c, cmd, big, (unsigned)i, why, cap);
      if (rc) return rc;
    }
    at += cmdsize;
  }
  if (pyhost__libcheck_get(h + 12, 4, big) == 2) { /* MH_EXECUTE: dlopen refuses it */
    pyhost__fmt(why, cap, "it is a program (a Mach-O executable), not a library");
    return PYHOST__LIB_PROGRAM;
  }
  return PYHOST__LIB_SOUND;
}

static int check_fat(const struct pyhost__libsrc *src, int wide, const struct pyhost__libwant *want,
                     char *why, size_t cap) {
  unsigned char h[8], a[32];
  unsigned esz = wide ? 32 : 20;
  if (pyhost__libcheck_read(src, 0, h, 8) != 0) return damaged("truncated: the fat header needs 8 bytes");
  uint64_t n = pyhost__libcheck_get(h + 4, 4, 1);
  if (n == 0 || 8 + n * esz > src->size)
    return damaged("truncated: the fat header lists %llu slices, the file has %llu bytes", (ull)n, (ull)src->size);
  int checked = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (pyhost__libcheck_read(src, 8 + i * esz, a, esz) != 0) return damaged("cannot read fat slice %llu", (ull)i);
    uint32_t cputype = (uint32_t)pyhost__libcheck_get(a, 4, 1);
    uint64_t off = pyhost__libcheck_get(a + 8, wide ? 8 : 4, 1);
    uint64_t size = pyhost__libcheck_get(a + (wide ? 16 : 12), wide ? 8 : 4, 1), end;
    if (pyhost__libcheck_end(off, size, &end) != 0) end = UINT64_MAX;
    if (end > src->size)
      return damaged("truncated: fat slice %llu ends at byte %llu, the file has %llu bytes", (ull)i,
                     (ull)end, (ull)src->size);
    if (want->macho_cputype && cputype != want->macho_cputype) continue;
    struct slice s = {src, off, size};
    int rc = check_thin(&s, want, 1, why, cap);
    if (rc) return rc;
    checked++;
  }
  return checked ? PYHOST__LIB_SOUND : PYHOST__LIB_FOREIGN;
}

int pyhost__libcheck_macho(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                           char *why, size_t cap) {
  unsigned char m[4];
  why[0] = '\0';
  if (pyhost__libcheck_read(src, 0, m, 4) != 0) return PYHOST__LIB_FOREIGN;
  uint32_t be = (uint32_t)pyhost__libcheck_get(m, 4, 1);
  if (be == 0xcafebabeu || be == 0xcafebabfu) return check_fat(src, be == 0xcafebabfu, want, why, cap);
  struct slice s = {src, 0, src->size};
  return check_thin(&s, want, 0, why, cap);
}
