/* elf_format.h: the numbers of the ELF format the reader (libcheck_elf.c) uses, by the
 * names the System V ABI gives them (glibc's <elf.h> spells the same without the ELF_
 * prefix; that header is not on every platform the reader is built for: mingw, the
 * fuzzers' memory seam).  Where ELF32 and ELF64 differ, struct elf_layout holds both.
 */
#ifndef PYHOST_ELF_FORMAT_H
#define PYHOST_ELF_FORMAT_H

/* e_ident */
enum {
  ELF_EI_CLASS = 4,   /* ELF_CLASS32 or ELF_CLASS64 */
  ELF_EI_DATA = 5,    /* ELF_DATA_LSB or ELF_DATA_MSB */
  ELF_EI_VERSION = 6, /* ELF_EV_CURRENT */
  ELF_EI_NIDENT = 16,
  ELF_CLASS32 = 1,
  ELF_CLASS64 = 2,
  ELF_DATA_LSB = 1,
  ELF_DATA_MSB = 2,
  ELF_EV_CURRENT = 1
};

/* e_type and e_machine (the machines pyhost names; any other is compared by number) */
enum { ELF_E_TYPE = 16, ELF_E_MACHINE = 18 }; /* offsets, the same in both classes */
enum { ELF_ET_EXEC = 2, ELF_ET_DYN = 3 };
enum {
  ELF_EM_386 = 3,
  ELF_EM_PPC64 = 21,
  ELF_EM_S390 = 22,
  ELF_EM_ARM = 40,
  ELF_EM_X86_64 = 62,
  ELF_EM_AARCH64 = 183,
  ELF_EM_RISCV = 243
};

/* p_type, sh_type */
enum { ELF_PT_LOAD = 1, ELF_PT_DYNAMIC = 2 };
enum { ELF_SHT_NULL = 0, ELF_SHT_NOBITS = 8 };

/* d_tag: the generic range (up to ELF_DT_NUM_GENERIC), then the OS and processor
 * ranges, which run to ELF_DT_HIPROC */
enum {
  ELF_DT_NULL = 0,
  ELF_DT_NEEDED = 1,
  ELF_DT_PLTRELSZ = 2,
  ELF_DT_HASH = 4,
  ELF_DT_STRTAB = 5,
  ELF_DT_SYMTAB = 6,
  ELF_DT_RELA = 7,
  ELF_DT_RELASZ = 8,
  ELF_DT_STRSZ = 10,
  ELF_DT_SONAME = 14,
  ELF_DT_RPATH = 15,
  ELF_DT_REL = 17,
  ELF_DT_RELSZ = 18,
  ELF_DT_JMPREL = 23,
  ELF_DT_INIT_ARRAY = 25,
  ELF_DT_FINI_ARRAY = 26,
  ELF_DT_INIT_ARRAYSZ = 27,
  ELF_DT_FINI_ARRAYSZ = 28,
  ELF_DT_RUNPATH = 29,
  ELF_DT_RELRSZ = 35,
  ELF_DT_RELR = 36,
  ELF_DT_NUM_GENERIC = 37 /* the last generic tag pyhost knows */
};
#define ELF_DT_LOOS 0x6000000dull
#define ELF_DT_GNU_HASH 0x6ffffef5ull
#define ELF_DT_VERSYM 0x6ffffff0ull
#define ELF_DT_FLAGS_1 0x6ffffffbull
#define ELF_DT_VERDEF 0x6ffffffcull
#define ELF_DT_VERNEED 0x6ffffffeull
#define ELF_DT_HIPROC 0x7fffffffull
#define ELF_DF_1_PIE 0x08000000ull /* in DT_FLAGS_1: a position-independent executable */

/* Where the fields are in one class: offsets in the ELF header (e_*), a program header
 * (p_*) and a section header (sh_*), and the sizes of those and of a dynamic entry.
 * A word-sized field is 4 bytes in ELF32 and 8 in ELF64 (word). */
struct elf_layout {
  unsigned word, ehsize;
  unsigned e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, e_shnum;
  unsigned phsize, p_offset, p_vaddr, p_filesz, p_memsz;
  unsigned shsize, sh_type, sh_offset, sh_size;
  unsigned dynsize;
};

static const struct elf_layout elf32_layout = {4,  52, 28, 32, 42, 44, 46, 48, 32, 4,
                                               8,  16, 20, 40, 4,  16, 20, 8};
static const struct elf_layout elf64_layout = {8,  64, 32, 40, 54, 56, 58, 60, 56, 8,
                                               16, 32, 40, 64, 4,  24, 32, 16};

#endif
