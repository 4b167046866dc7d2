/* libcheck.c: a library file is looked at before the system loader maps it
 * (libcheck.h): opened without blocking, then its headers checked by the parser of the
 * format this platform's loader reads (dl.h's pyhost__dl_format). */
#include "libcheck.h"
#include "pyhost.h"

#include <string.h>

static void native(struct pyhost__libwant *w) {
  const unsigned one = 1;
  memset(w, 0, sizeof *w);
  w->elf_class = sizeof(void *) == 8 ? 2 : 1;
  w->elf_data = *(const unsigned char *)&one ? 1 : 2;
#if defined(__x86_64__) || defined(_M_X64)
  w->elf_machine = 62, w->pe_machine = 0x8664, w->macho_cputype = 0x01000007u;
#elif defined(__aarch64__) || defined(_M_ARM64)
  w->elf_machine = 183, w->pe_machine = 0xAA64, w->macho_cputype = 0x0100000Cu;
#elif defined(__i386__) || defined(_M_IX86)
  w->elf_machine = 3, w->pe_machine = 0x14C, w->macho_cputype = 7;
#endif /* elsewhere: any machine, the loader judges */
}

static int run(int format, const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
               char *why, size_t cap) {
  why[0] = '\0';
  switch (format) {
  case PYHOST__FMT_ELF: return pyhost__libcheck_elf(src, want, why, cap);
  case PYHOST__FMT_PE: return pyhost__libcheck_pe(src, want, why, cap);
  case PYHOST__FMT_MACHO: return pyhost__libcheck_macho(src, want, why, cap);
  default: return PYHOST__LIB_FOREIGN;
  }
}

struct memory { const unsigned char *data; };

static int memory_read(void *ctx, uint64_t off, void *buf, size_t n) {
  memcpy(buf, ((struct memory *)ctx)->data + off, n);
  return 0;
}

int pyhost__libcheck_bytes(int format, const void *data, size_t size,
                           const struct pyhost__libwant *want, char *why, size_t cap) {
  struct memory m = {(const unsigned char *)data};
  struct pyhost__libsrc src = {size, memory_read, &m};
  return run(format, &src, want, why, cap);
}

static int file_read(void *ctx, uint64_t off, void *buf, size_t n) {
  return pyhost__fs_pread((const struct pyhost__fs_file *)ctx, off, buf, n);
}

int pyhost__libcheck_path(const char *path, char *why, size_t cap) {
  return pyhost__libcheck_path_ex(path, why, cap, NULL);
}

int pyhost__libcheck_path_ex(const char *path, char *why, size_t cap, int *program) {
  struct pyhost__fs_file f;
  if (program) *program = 0;
  switch (pyhost__fs_open_regular(path, &f, why, cap)) {
  case PYHOST__FS_FILE: break;
  case PYHOST__FS_DIR: return PYHOST_ISDIR;
  case PYHOST__FS_OTHER: return PYHOST_NOLIB;
  default: return PYHOST_NOTFOUND;
  }
  struct pyhost__libwant want;
  native(&want);
  struct pyhost__libsrc src = {f.size, file_read, &f};
  int verdict = run(pyhost__dl_format, &src, &want, why, cap);
  pyhost__fs_close(&f);
  if (verdict == PYHOST__LIB_PROGRAM) {
    if (program) *program = 1;
    return PYHOST_NOLIB;
  }
  return verdict == PYHOST__LIB_DAMAGED ? PYHOST_DAMAGED : PYHOST_OK;
}
