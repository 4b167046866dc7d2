/* libcheck.c: a library file is looked at before the system loader maps it
 * (libcheck.h): opened without blocking, then its headers checked by the parser of the
 * format this platform's loader reads (dl.h's pyhost__dl_format). */
#include "libcheck.h"
#include "elf_format.h"
#include "pyhost.h"

#include <string.h>

/* The machines of PE's IMAGE_FILE_HEADER and Mach-O's cputype pyhost knows. */
enum { PE_MACHINE_I386 = 0x14C, PE_MACHINE_AMD64 = 0x8664, PE_MACHINE_ARM64 = 0xAA64 };
#define MACHO_CPU_ARCH_ABI64 0x01000000u
enum { MACHO_CPU_TYPE_X86 = 7, MACHO_CPU_TYPE_ARM = 12 };

static void native(struct pyhost__libwant *w) {
  const unsigned one = 1;
  memset(w, 0, sizeof *w);
  w->elf_class = pyhost__elf_native_class();
  w->elf_data = *(const unsigned char *)&one ? ELF_DATA_LSB : ELF_DATA_MSB;
  w->elf_machine = pyhost__elf_native_machine();
#if defined(__x86_64__) || defined(_M_X64)
  w->pe_machine = PE_MACHINE_AMD64, w->macho_cputype = MACHO_CPU_TYPE_X86 | MACHO_CPU_ARCH_ABI64;
#elif defined(__aarch64__) || defined(_M_ARM64)
  w->pe_machine = PE_MACHINE_ARM64, w->macho_cputype = MACHO_CPU_TYPE_ARM | MACHO_CPU_ARCH_ABI64;
#elif defined(__i386__) || defined(_M_IX86)
  w->pe_machine = PE_MACHINE_I386, w->macho_cputype = MACHO_CPU_TYPE_X86;
#endif /* elsewhere: any machine, the loader judges */
}

static int run(int format, const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
               char *why, size_t cap, struct pyhost__elf *facts) {
  why[0] = '\0';
  switch (format) {
  case PYHOST__FMT_ELF: return pyhost__libcheck_elf(src, want, why, cap, facts);
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
  return run(format, &src, want, why, cap, NULL);
}

static int file_read(void *ctx, uint64_t off, void *buf, size_t n) {
  return pyhost__fs_pread((const struct pyhost__fs_file *)ctx, off, buf, n);
}

int pyhost__libcheck_path(const char *path, char *why, size_t cap) {
  return pyhost__libcheck_path_ex(path, why, cap, NULL);
}

/* An ELF file the native want refused by its identification: which machine it is for. */
static void other_machine(const struct pyhost__elf *f, const struct pyhost__libwant *want, char *why,
                          size_t cap) {
  char theirs[64], ours[64];
  pyhost__fmt(why, cap, "it is built for %s, not for this %s process",
              pyhost__elf_arch_text(f->machine, f->elf_class, theirs, sizeof theirs),
              pyhost__elf_arch_text(want->elf_machine, want->elf_class, ours, sizeof ours));
}

int pyhost__libcheck_path_ex(const char *path, char *why, size_t cap, int *kind) {
  struct pyhost__fs_file f;
  if (kind) *kind = PYHOST__LIB_SOUND;
  switch (pyhost__fs_open_regular(path, &f, why, cap)) {
  case PYHOST__FS_FILE: break;
  case PYHOST__FS_DIR: return PYHOST_ISDIR;
  case PYHOST__FS_OTHER: return PYHOST_NOLIB;
  default: return PYHOST_NOTFOUND;
  }
  struct pyhost__libwant want;
  native(&want);
  struct pyhost__libsrc src = {f.size, file_read, &f};
  struct pyhost__elf facts;
  memset(&facts, 0, sizeof facts);
  int verdict = run(pyhost__dl_format, &src, &want, why, cap, &facts);
  pyhost__fs_close(&f);
  if (verdict == PYHOST__LIB_FOREIGN && facts.is_elf) {
    other_machine(&facts, &want, why, cap);
    verdict = PYHOST__LIB_OTHER_MACHINE;
  }
  if (kind) *kind = verdict;
  if (verdict == PYHOST__LIB_PROGRAM || verdict == PYHOST__LIB_OTHER_MACHINE) return PYHOST_NOLIB;
  return verdict == PYHOST__LIB_DAMAGED ? PYHOST_DAMAGED : PYHOST_OK;
}

int pyhost__elf_read(const char *path, struct pyhost__elf *out) {
  static const struct pyhost__libwant any;
  struct pyhost__fs_file f;
  char why[256];
  memset(out, 0, sizeof *out);
  if (pyhost__fs_open_regular(path, &f, why, sizeof why) != PYHOST__FS_FILE) return -1;
  struct pyhost__libsrc src = {f.size, file_read, &f};
  (void)pyhost__libcheck_elf(&src, &any, why, sizeof why, out);
  pyhost__fs_close(&f);
  return f.size >= 2 ? 0 : -1;
}
