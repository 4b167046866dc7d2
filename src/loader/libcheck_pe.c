/* libcheck_pe.c: is a PE (Windows DLL) file complete and consistent (libcheck.h)?
 *
 * Checked: the DOS header and e_lfanew, the PE signature, the COFF header, the optional
 * header (its magic and a size that holds the fields the loader reads, SizeOfHeaders
 * inside the file), the section table and every section's raw data.  Not checked: the
 * contents (imports, relocations, code), which would mean reading the whole file.
 */
#include "libcheck.h"

#include <string.h>

typedef unsigned long long ull;

#define damaged(...) pyhost__libcheck_damaged(why, cap, __VA_ARGS__)

static uint64_t le(const unsigned char *p, int size) {
  return pyhost__libcheck_get(p, size, 0);
}

static int check_sections(const struct pyhost__libsrc *src, uint64_t table, unsigned n,
                          char *why, size_t cap) {
  uint64_t end;
  if (pyhost__libcheck_end(table, (uint64_t)n * 40, &end) != 0 || end > src->size)
    return damaged("truncated: the section table (%u sections) ends at byte %llu, the file has %llu bytes",
                   n, (ull)(table + (uint64_t)n * 40), (ull)src->size);
  for (unsigned i = 0; i < n; i++) {
    unsigned char s[40];
    if (pyhost__libcheck_read(src, table + (uint64_t)i * 40, s, sizeof s) != 0)
      return damaged("cannot read section header %u", i);
    char name[9];
    memcpy(name, s, 8);
    name[8] = '\0';
    for (char *c = name; *c; c++)
      if (*c < 0x20 || *c > 0x7e) *c = '?';
    uint64_t raw_size = le(s + 16, 4), raw_ptr = le(s + 20, 4);
    if (raw_size == 0) continue; /* uninitialized data only */
    end = raw_ptr + raw_size;    /* both 32-bit: no overflow */
    if (end > src->size)
      return damaged("truncated: section %u (%s) ends at byte %llu, the file has %llu bytes", i, name,
                     (ull)end, (ull)src->size);
  }
  return PYHOST__LIB_SOUND;
}

int pyhost__libcheck_pe(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                        char *why, size_t cap) {
  unsigned char dos[64], pe[24], opt[64];
  why[0] = '\0';
  if (src->size < 2 || pyhost__libcheck_read(src, 0, dos, 2) != 0 || memcmp(dos, "MZ", 2) != 0)
    return PYHOST__LIB_FOREIGN;
  if (pyhost__libcheck_read(src, 0, dos, sizeof dos) != 0)
    return damaged("truncated: the DOS header needs 64 bytes, the file has %llu", (ull)src->size);
  uint64_t lfanew = le(dos + 0x3c, 4);
  if (pyhost__libcheck_read(src, lfanew, pe, sizeof pe) != 0)
    return damaged("truncated: the PE header at byte %llu (e_lfanew) needs 24 bytes, the file has %llu",
                   (ull)lfanew, (ull)src->size);
  if (memcmp(pe, "PE\0\0", 4) != 0)
    return damaged("no PE signature at byte %llu (e_lfanew)", (ull)lfanew);
  unsigned machine = (unsigned)le(pe + 4, 2), nsections = (unsigned)le(pe + 6, 2);
  unsigned optsize = (unsigned)le(pe + 20, 2);
  if (want->pe_machine && machine != want->pe_machine) return PYHOST__LIB_FOREIGN;
  uint64_t opt_off = lfanew + 24;
  if (optsize < 64) return damaged("the optional header has %u bytes, too few for a DLL", optsize);
  if (pyhost__libcheck_read(src, opt_off, opt, sizeof opt) != 0 || opt_off + optsize > src->size)
    return damaged("truncated: the optional header ends at byte %llu, the file has %llu bytes",
                   (ull)(opt_off + optsize), (ull)src->size);
  unsigned magic = (unsigned)le(opt, 2);
  if (magic != 0x10b && magic != 0x20b) return damaged("the optional header's magic is %#x, not PE32 or PE32+", magic);
  if (optsize < (magic == 0x20b ? 112u : 96u))
    return damaged("the optional header has %u bytes, too few for its magic %#x", optsize, magic);
  uint64_t headers = le(opt + 60, 4); /* SizeOfHeaders, the same place in PE32 and PE32+ */
  if (headers > src->size)
    return damaged("truncated: the headers (SizeOfHeaders) end at byte %llu, the file has %llu bytes",
                   (ull)headers, (ull)src->size);
  if (nsections == 0) return damaged("no sections");
  int rc = check_sections(src, opt_off + optsize, nsections, why, cap);
  if (rc) return rc;
  if (!(le(pe + 22, 2) & 0x2000)) { /* Characteristics without IMAGE_FILE_DLL: an .exe */
    pyhost__fmt(why, cap, "it is a program (an .exe), not a DLL");
    return PYHOST__LIB_PROGRAM;
  }
  return PYHOST__LIB_SOUND;
}
