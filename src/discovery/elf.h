/* elf.h: the little pyhost reads from an ELF file without loading it: its machine, and
 * for an interpreter the libpython it needs and where it looks for it.  Plain file
 * parsing, the same on every host OS; a file that is not ELF (Mach-O, PE, a script)
 * just says so. */
#ifndef PYHOST_ELF_H
#define PYHOST_ELF_H

#include <stddef.h>

struct pyhost__elf {
  int is_elf;             /* starts with \177ELF */
  int is_script;          /* starts with #! */
  int elf_class;          /* 1: 32-bit, 2: 64-bit */
  unsigned machine;       /* e_machine */
  int dynamic;            /* has a PT_DYNAMIC segment (0: statically linked) */
  char needed_python[256];/* the first DT_NEEDED that names libpython, "" when none */
  char runpath[2048];     /* DT_RUNPATH, else DT_RPATH, "" when none ($ORIGIN unexpanded) */
};

/* Reads what it can.  0, or -1 when the file cannot be opened or read. */
int pyhost__elf_read(const char *path, struct pyhost__elf *out);

#endif
