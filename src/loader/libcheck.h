/* libcheck.h: the checks a library file passes before the system loader sees it.
 *
 * A loader maps what a file's headers promise.  When the file is shorter than that (an
 * interrupted copy, a full disk), touching the missing pages kills the process with
 * SIGBUS inside the loader, before pyhost could say anything.  So the headers are read
 * first (never the whole file) and every part the loader maps or reads must lie inside
 * the file.  One parser per format (libcheck_elf.c, libcheck_pe.c, libcheck_macho.c),
 * plain C that builds everywhere and reads through a reader, so that tests and fuzzers
 * feed it bytes; libcheck.c opens the file and runs the parser of this platform's
 * loader.
 */
#ifndef PYHOST_LIBCHECK_H
#define PYHOST_LIBCHECK_H

#include "platform.h" /* PYHOST__PRINTF_DIALECT, enum pyhost__lib_format */

#include <stddef.h>
#include <stdint.h>

/* Where the bytes come from: a file (libcheck.c) or memory (pyhost__libcheck_bytes). */
struct pyhost__libsrc {
  uint64_t size;
  /* 0 when all n bytes at off were read; off + n never exceeds size */
  int (*read)(void *ctx, uint64_t off, void *buf, size_t n);
  void *ctx;
};

enum pyhost__libcheck_verdict {
  PYHOST__LIB_SOUND = 0,   /* complete and consistent as far as the headers tell */
  PYHOST__LIB_FOREIGN = 1, /* not this format, or built for another machine: the loader
                            * refuses it by its header alone, with its own words */
  PYHOST__LIB_DAMAGED = 2, /* why says what is wrong */
  PYHOST__LIB_PROGRAM = 3, /* sound, but a program, not a library: ELF ET_EXEC or a PIE
                            * (DF_1_PIE), which dlopen refuses; a PE without
                            * IMAGE_FILE_DLL; a Mach-O MH_EXECUTE.  why says which */
  PYHOST__LIB_OTHER_MACHINE = 4 /* (pyhost__libcheck_path_ex only) an ELF file FOREIGN by
                                 * its class, byte order or machine: why names both */
};

/* What this process can load: files for another class, byte order or machine are
 * FOREIGN.  Zero fields accept any (the fuzzers check every variant). */
struct pyhost__libwant {
  unsigned elf_class, elf_data, elf_machine; /* 1/2, 1/2, e_machine */
  unsigned pe_machine;                       /* IMAGE_FILE_MACHINE_* */
  uint32_t macho_cputype;                    /* CPU_TYPE_* (fat files pick it) */
};

/* What the ELF reader learned of a file, as far as it read (the one ELF reader: the
 * checks above and the facts below come from the same pass over the headers). */
struct pyhost__elf {
  int is_elf;             /* starts with \177ELF and a valid class and byte order */
  int is_script;          /* starts with #! */
  unsigned elf_class;     /* ELF_CLASS32 or ELF_CLASS64 (elf_format.h) */
  unsigned machine;       /* e_machine */
  int dynamic;            /* has a PT_DYNAMIC segment (0: statically linked) */
  char needed_python[256];/* the first DT_NEEDED that names libpython, "" when none */
  char runpath[2048];     /* DT_RUNPATH, else DT_RPATH, "" when none ($ORIGIN unexpanded) */
};

/* facts may be NULL. */
int pyhost__libcheck_elf(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                         char *why, size_t cap, struct pyhost__elf *facts);
int pyhost__libcheck_pe(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                        char *why, size_t cap);
int pyhost__libcheck_macho(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                           char *why, size_t cap);

/* The memory seam: runs the parser of format on size bytes at data. */
int pyhost__libcheck_bytes(int format, const void *data, size_t size,
                           const struct pyhost__libwant *want, char *why, size_t cap);

/* Checks the file at path (which names a location, not a bare name) for this
 * platform's loader.  Returns PYHOST_OK, or a status with the reason in why (the path
 * is not repeated): NOTFOUND (missing, unreadable, a symlink loop, a path too long),
 * ISDIR, NOLIB (a FIFO, socket or device) or DAMAGED. */
int pyhost__libcheck_path(const char *path, char *why, size_t cap);
/* The same, and *kind (may be NULL) set to the parser's verdict (PYHOST__LIB_*).  Two
 * are refusals with NOLIB: PROGRAM, a program rather than a library (a Python
 * interpreter given where its library was expected, which interp.c can explain:
 * pyhost__verdict_file_explained), and OTHER_MACHINE, an ELF library built for another
 * machine, named here rather than left to the loader's terse "wrong ELF class". */
int pyhost__libcheck_path_ex(const char *path, char *why, size_t cap, int *kind);

/* The ELF facts of the file at path (an interpreter, a library), whatever its machine,
 * read by the same parser as the checks, up to where the headers stop making sense.
 * 0, or -1 when the file cannot be opened or has fewer than 2 bytes. */
int pyhost__elf_read(const char *path, struct pyhost__elf *out);

/* This process's ELF machine (e_machine; 0 where pyhost does not know it) and class,
 * what a library must be built for; a machine and class in words, into buf:
 * "x86_64 (ELF64)", "e_machine 99 (ELF32)". */
unsigned pyhost__elf_native_machine(void);
unsigned pyhost__elf_native_class(void);
const char *pyhost__elf_arch_text(unsigned machine, unsigned elf_class, char *buf, size_t cap);

/* Shared by the parsers.  end = off + len unless that passes 2^64 (then -1). */
int pyhost__libcheck_end(uint64_t off, uint64_t len, uint64_t *end);
/* Reads n bytes at off when they lie inside the source; 0, else -1. */
int pyhost__libcheck_read(const struct pyhost__libsrc *src, uint64_t off, void *buf, size_t n);
/* Writes the reason into why and returns PYHOST__LIB_DAMAGED. */
int pyhost__libcheck_damaged(char *why, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;
/* An unsigned number of up to 8 bytes at p, little- or big-endian. */
uint64_t pyhost__libcheck_get(const unsigned char *p, int size, int big);

#endif
