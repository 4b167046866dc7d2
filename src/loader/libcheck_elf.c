/* libcheck_elf.c: pyhost's one ELF reader.  Is an ELF shared library complete and
 * consistent (libcheck.h), and what do its headers say (struct pyhost__elf: machine,
 * class, the libpython an interpreter needs and where it looks for it)?
 *
 * Checked, in the order a loader uses them: the identification and the ELF header; the
 * program header table; every segment's file bytes (PT_LOAD and PT_DYNAMIC above all:
 * glibc maps them and reads the dynamic array before any check of its own); the dynamic
 * array (a DT_NULL end, known tags, tables inside a loadable segment, string offsets
 * inside the string table); the section header table and every section that has file
 * bytes.  What is not checked: the contents of code, data, relocations and symbol
 * tables, which would mean reading the whole file (docs/reliability.md).  The facts are
 * read in the same pass, so they stop where the headers stop making sense.
 */
#include "libcheck.h"
#include "elf_format.h"
#include "platform.h"

#include <string.h>

struct elf {
  const struct pyhost__libsrc *src;
  const struct elf_layout *L; /* the class's field offsets and sizes */
  int big;
  char *why;
  size_t cap;
  /* the tables are read a block at a time: a hostile file may hold 65535 program
   * headers or millions of section headers, each a system call otherwise */
  unsigned char block[4096];
  uint64_t block_off, block_len;
  int pie; /* DT_FLAGS_1 has DF_1_PIE: a program, which dlopen refuses */
  struct pyhost__elf *facts; /* NULL: the caller wants the verdict only */
};

struct load { uint64_t vaddr, off, filesz; };
enum {
  MAX_LOADS = 64,
  MAX_DYNAMIC = 65536, /* real arrays hold dozens: no end by then is no end */
  MAX_NAMES = 64       /* string-valued dynamic entries checked (and DT_NEEDED read) */
};

static uint64_t get(const struct elf *e, const unsigned char *p, int size) {
  return pyhost__libcheck_get(p, size, e->big);
}

/* A word: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t word(const struct elf *e, const unsigned char *p) {
  return get(e, p, (int)e->L->word);
}

typedef unsigned long long ull;

#define damaged(e, ...) pyhost__libcheck_damaged((e)->why, (e)->cap, __VA_ARGS__)
/* n bytes (at most 64) at off, through the block. */
static int read_at(struct elf *e, uint64_t off, void *buf, size_t n) {
  uint64_t end;
  if (pyhost__libcheck_end(off, n, &end) != 0 || end > e->src->size) return -1;
  if (off < e->block_off || end > e->block_off + e->block_len) {
    uint64_t len = e->src->size - off < sizeof e->block ? e->src->size - off : sizeof e->block;
    e->block_len = 0;
    if (e->src->read(e->src->ctx, off, e->block, (size_t)len) != 0) return -1;
    e->block_off = off, e->block_len = len;
  }
  memcpy(buf, e->block + (off - e->block_off), n);
  return 0;
}

/* The NUL-terminated string at file offset off into out (cut to cap). */
static void read_string(struct elf *e, uint64_t off, char *out, size_t cap) {
  out[0] = '\0';
  if (off >= e->src->size) return;
  size_t n = e->src->size - off < cap - 1 ? (size_t)(e->src->size - off) : cap - 1;
  if (e->src->read(e->src->ctx, off, out, n) != 0) n = 0;
  out[n] = '\0';
}

/* A table of count entries of entsize bytes at off, all inside the file. */
static int table_fits(struct elf *e, const char *what, uint64_t off, uint64_t count,
                      uint64_t entsize) {
  uint64_t end;
  if (pyhost__libcheck_end(off, count * entsize, &end) != 0) /* count, entsize < 2^32 */
    return damaged(e, "the %s table's offset %llu passes 2^64", what, (ull)off);
  if (end > e->src->size) {
    return damaged(e, "truncated: the %s table ends at byte %llu, the file has %llu bytes", what,
                   (ull)end, (ull)e->src->size);
  }
  return PYHOST__LIB_SOUND;
}

static int check_ident(struct elf *e, const unsigned char *h, uint64_t got,
                       const struct pyhost__libwant *want) {
  if (got < ELF_EI_NIDENT)
    return damaged(e, "truncated: the ELF identification needs %d bytes, the file has %llu",
                   ELF_EI_NIDENT, (ull)got);
  unsigned cls = h[ELF_EI_CLASS], data = h[ELF_EI_DATA];
  if ((cls != ELF_CLASS32 && cls != ELF_CLASS64) || (data != ELF_DATA_LSB && data != ELF_DATA_MSB) ||
      h[ELF_EI_VERSION] != ELF_EV_CURRENT)
    return damaged(e, "not a valid ELF identification (class %u, byte order %u, version %u)", cls,
                   data, (unsigned)h[ELF_EI_VERSION]);
  e->L = cls == ELF_CLASS64 ? &elf64_layout : &elf32_layout;
  e->big = data == ELF_DATA_MSB;
  unsigned machine = got >= ELF_E_MACHINE + 2 ? (unsigned)get(e, h + ELF_E_MACHINE, 2) : 0;
  if (e->facts) e->facts->is_elf = 1, e->facts->elf_class = cls, e->facts->machine = machine;
  if ((want->elf_class && cls != want->elf_class) || (want->elf_data && data != want->elf_data))
    return PYHOST__LIB_FOREIGN;
  if (got < e->L->ehsize)
    return damaged(e, "truncated: the ELF header needs %u bytes, the file has %llu", e->L->ehsize, (ull)got);
  if (want->elf_machine && machine != want->elf_machine) return PYHOST__LIB_FOREIGN;
  return PYHOST__LIB_SOUND;
}

/* Tags of the dynamic array: the generic range and the OS/processor ranges. */
static int known_tag(uint64_t tag) {
  return tag <= ELF_DT_NUM_GENERIC || (tag >= ELF_DT_LOOS && tag <= ELF_DT_HIPROC);
}

static int in_load(const struct load *l, int n, uint64_t addr, uint64_t len) {
  for (int i = 0; i < n; i++) {
    uint64_t end, lend;
    if (pyhost__libcheck_end(addr, len, &end) != 0) return 0;
    if (pyhost__libcheck_end(l[i].vaddr, l[i].filesz, &lend) != 0) continue;
    if (addr >= l[i].vaddr && end <= lend) return 1;
  }
  return 0;
}

/* The file offset of address addr, or -1 when no loadable segment holds it. */
static int address_to_offset(const struct load *l, int n, uint64_t addr, uint64_t *off) {
  for (int i = 0; i < n; i++)
    if (addr >= l[i].vaddr && addr - l[i].vaddr < l[i].filesz) {
      *off = addr - l[i].vaddr + l[i].off;
      return 0;
    }
  return -1;
}

/* The facts the dynamic array holds: the first DT_NEEDED naming libpython, and
 * DT_RUNPATH (else DT_RPATH).  Only called on an array already checked. */
static void read_names(struct elf *e, uint64_t strtab, const struct load *loads, int nloads,
                       const uint64_t *needed, int nneeded, uint64_t runpath, uint64_t rpath) {
  struct pyhost__elf *f = e->facts;
  uint64_t str_off;
  if (address_to_offset(loads, nloads, strtab, &str_off) != 0) return;
  for (int i = 0; i < nneeded && !f->needed_python[0]; i++) {
    char name[sizeof f->needed_python];
    read_string(e, str_off + needed[i], name, sizeof name);
    if (!strncmp(name, "libpython", 9) || !strncmp(name, "python", 6))
      pyhost__fmt(f->needed_python, sizeof f->needed_python, "%s", name);
  }
  uint64_t rp = runpath != UINT64_MAX ? runpath : rpath;
  if (rp != UINT64_MAX) read_string(e, str_off + rp, f->runpath, sizeof f->runpath);
}

/* The dynamic array at off (filesz bytes, inside the file). */
static int check_dynamic(struct elf *e, uint64_t off, uint64_t filesz, const struct load *loads,
                         int nloads) {
  /* address tags and the tag of their size (0: a table whose size the loader derives) */
  static const struct { uint64_t tag, size_tag; const char *name; } tables[] = {
      {ELF_DT_STRTAB, ELF_DT_STRSZ, "DT_STRTAB"},
      {ELF_DT_SYMTAB, 0, "DT_SYMTAB"},
      {ELF_DT_HASH, 0, "DT_HASH"},
      {ELF_DT_GNU_HASH, 0, "DT_GNU_HASH"},
      {ELF_DT_RELA, ELF_DT_RELASZ, "DT_RELA"},
      {ELF_DT_REL, ELF_DT_RELSZ, "DT_REL"},
      {ELF_DT_JMPREL, ELF_DT_PLTRELSZ, "DT_JMPREL"},
      {ELF_DT_INIT_ARRAY, ELF_DT_INIT_ARRAYSZ, "DT_INIT_ARRAY"},
      {ELF_DT_FINI_ARRAY, ELF_DT_FINI_ARRAYSZ, "DT_FINI_ARRAY"},
      {ELF_DT_RELR, ELF_DT_RELRSZ, "DT_RELR"},
      {ELF_DT_VERSYM, 0, "DT_VERSYM"},
      {ELF_DT_VERDEF, 0, "DT_VERDEF"},
      {ELF_DT_VERNEED, 0, "DT_VERNEED"}};
  enum { NT = sizeof tables / sizeof tables[0], STRTAB = 0, SYMTAB = 1 };
  uint64_t val[NT], size[NT], strsz = 0, strings[MAX_NAMES], needed[MAX_NAMES];
  uint64_t runpath = UINT64_MAX, rpath = UINT64_MAX;
  int have[NT], nstrings = 0, nneeded = 0, ended = 0;
  memset(have, 0, sizeof have);
  memset(size, 0, sizeof size);
  uint64_t esz = e->L->dynsize, n = filesz / esz;
  if (n > MAX_DYNAMIC) n = MAX_DYNAMIC;
  for (uint64_t i = 0; i < n && !ended; i++) {
    unsigned char d[16];
    if (read_at(e, off + i * esz, d, (size_t)esz) != 0)
      return damaged(e, "cannot read the dynamic array at byte %llu", (ull)(off + i * esz));
    uint64_t tag = word(e, d), v = word(e, d + esz / 2);
    if (tag == ELF_DT_NULL) {
      ended = 1;
      break;
    }
    if (!known_tag(tag))
      return damaged(e, "the dynamic array is garbage: entry %llu has tag %#llx", (ull)i, (ull)tag);
    if (tag == ELF_DT_STRSZ) strsz = v;
    if (tag == ELF_DT_FLAGS_1 && (v & ELF_DF_1_PIE)) e->pie = 1;
    if (tag == ELF_DT_NEEDED || tag == ELF_DT_SONAME || tag == ELF_DT_RPATH || tag == ELF_DT_RUNPATH) {
      if (nstrings < MAX_NAMES) strings[nstrings++] = v;
      if (tag == ELF_DT_NEEDED && nneeded < MAX_NAMES) needed[nneeded++] = v;
      if (tag == ELF_DT_RUNPATH) runpath = v;
      if (tag == ELF_DT_RPATH) rpath = v;
    }
    for (int t = 0; t < NT; t++) {
      if (tag == tables[t].tag) have[t] = 1, val[t] = v;
      if (tables[t].size_tag && tag == tables[t].size_tag) size[t] = v;
    }
  }
  if (!ended) return damaged(e, "the dynamic array (%llu bytes at byte %llu) has no DT_NULL end",
                             (ull)filesz, (ull)off);
  if (!have[STRTAB] || !have[SYMTAB])
    return damaged(e, "the dynamic array names no %s",
                   have[STRTAB] ? "symbol table (DT_SYMTAB)" : "string table (DT_STRTAB)");
  for (int t = 0; t < NT; t++) {
    if (!have[t]) continue;
    uint64_t len = tables[t].size_tag ? size[t] : 1;
    if (!in_load(loads, nloads, val[t], len)) {
      return damaged(e,
                     "the dynamic array's %s (%llu bytes at address %#llx) lies outside the file's "
                     "loadable segments",
                     tables[t].name, (ull)len, (ull)val[t]);
    }
  }
  for (int i = 0; i < nstrings; i++)
    if (strings[i] >= strsz)
      return damaged(e, "a name in the dynamic array starts at string %llu, past the string table's %llu bytes",
                     (ull)strings[i], (ull)strsz);
  if (e->facts) read_names(e, val[STRTAB], loads, nloads, needed, nneeded, runpath, rpath);
  return PYHOST__LIB_SOUND;
}

static int check_segments(struct elf *e, const unsigned char *h) {
  const struct elf_layout *L = e->L;
  uint64_t phoff = word(e, h + L->e_phoff);
  unsigned phentsize = (unsigned)get(e, h + L->e_phentsize, 2);
  unsigned phnum = (unsigned)get(e, h + L->e_phnum, 2);
  if (phnum == 0) return damaged(e, "no program headers: nothing to load");
  if (phentsize != L->phsize)
    return damaged(e, "program header entries of %u bytes, not %u", phentsize, L->phsize);
  int rc = table_fits(e, "program header", phoff, phnum, phentsize);
  if (rc) return rc;
  struct load loads[MAX_LOADS];
  int nloads = 0;
  uint64_t dyn_off = 0, dyn_size = 0;
  int has_dyn = 0;
  for (unsigned i = 0; i < phnum; i++) {
    unsigned char p[64];
    if (read_at(e, phoff + (uint64_t)i * phentsize, p, phentsize) != 0)
      return damaged(e, "cannot read program header %u", i);
    uint64_t type = get(e, p, 4), end;
    uint64_t off = word(e, p + L->p_offset), vaddr = word(e, p + L->p_vaddr);
    uint64_t filesz = word(e, p + L->p_filesz), memsz = word(e, p + L->p_memsz);
    if (filesz == 0 && type != ELF_PT_LOAD && type != ELF_PT_DYNAMIC) continue;
    const char *kind = type == ELF_PT_LOAD ? " (PT_LOAD)" : type == ELF_PT_DYNAMIC ? " (PT_DYNAMIC)" : "";
    if (pyhost__libcheck_end(off, filesz, &end) != 0)
      return damaged(e, "segment %u%s: offset %llu and size %llu pass 2^64", i, kind, (ull)off,
                     (ull)filesz);
    if (end > e->src->size)
      return damaged(e, "truncated: segment %u%s ends at byte %llu, the file has %llu bytes", i, kind,
                     (ull)end, (ull)e->src->size);
    if (type == ELF_PT_LOAD) {
      if (filesz > memsz)
        return damaged(e, "segment %u (PT_LOAD) has more file bytes (%llu) than memory (%llu)", i,
                       (ull)filesz, (ull)memsz);
      if (nloads == MAX_LOADS) return damaged(e, "more than %d loadable segments", MAX_LOADS);
      loads[nloads++] = (struct load){vaddr, off, filesz};
    } else if (type == ELF_PT_DYNAMIC) {
      if (has_dyn) return damaged(e, "two dynamic segments (the second is segment %u)", i);
      has_dyn = 1, dyn_off = off, dyn_size = filesz;
    }
  }
  if (!nloads) return damaged(e, "no loadable segment (PT_LOAD)");
  if (e->facts) e->facts->dynamic = has_dyn;
  return has_dyn ? check_dynamic(e, dyn_off, dyn_size, loads, nloads) : PYHOST__LIB_SOUND;
}

static int check_sections(struct elf *e, const unsigned char *h) {
  const struct elf_layout *L = e->L;
  uint64_t shoff = word(e, h + L->e_shoff);
  unsigned shentsize = (unsigned)get(e, h + L->e_shentsize, 2);
  uint64_t shnum = get(e, h + L->e_shnum, 2);
  if (shoff == 0) return PYHOST__LIB_SOUND; /* no section headers: the loader needs none */
  if (shentsize != L->shsize)
    return damaged(e, "section header entries of %u bytes, not %u", shentsize, L->shsize);
  int rc = table_fits(e, "section header", shoff, 1, shentsize);
  if (rc) return rc;
  unsigned char s[64];
  if (shnum == 0) { /* more than 0xff00 sections: the count is section 0's sh_size */
    if (read_at(e, shoff, s, shentsize) != 0)
      return damaged(e, "cannot read section header 0");
    shnum = word(e, s + L->sh_size);
    if (shnum > e->src->size / shentsize)
      return damaged(e, "section header 0 counts %llu sections, more than a file of %llu bytes holds",
                     (ull)shnum, (ull)e->src->size);
  }
  if ((rc = table_fits(e, "section header", shoff, shnum, shentsize))) return rc;
  for (uint64_t i = 1; i < shnum; i++) {
    if (read_at(e, shoff + i * shentsize, s, shentsize) != 0)
      return damaged(e, "cannot read section header %llu", (ull)i);
    uint64_t type = get(e, s + L->sh_type, 4), end;
    uint64_t off = word(e, s + L->sh_offset), size = word(e, s + L->sh_size);
    if (type == ELF_SHT_NULL || type == ELF_SHT_NOBITS) continue; /* no file bytes */
    if (pyhost__libcheck_end(off, size, &end) != 0)
      return damaged(e, "section %llu: offset %llu and size %llu pass 2^64", (ull)i, (ull)off, (ull)size);
    if (end > e->src->size)
      return damaged(e, "truncated: section %llu ends at byte %llu, the file has %llu bytes", (ull)i,
                     (ull)end, (ull)e->src->size);
  }
  return PYHOST__LIB_SOUND;
}

int pyhost__libcheck_elf(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                         char *why, size_t cap, struct pyhost__elf *facts) {
  static const struct elf zero;
  struct elf e = zero;
  e.src = src, e.why = why, e.cap = cap, e.facts = facts;
  unsigned char h[64];
  uint64_t got = src->size < sizeof h ? src->size : sizeof h;
  why[0] = '\0';
  if (got < 2 || src->read(src->ctx, 0, h, (size_t)got) != 0) return PYHOST__LIB_FOREIGN;
  if (facts) facts->is_script = h[0] == '#' && h[1] == '!';
  if (got < 4 || memcmp(h, "\177ELF", 4) != 0) return PYHOST__LIB_FOREIGN;
  int rc = check_ident(&e, h, got, want);
  if (rc) return rc;
  if ((rc = check_segments(&e, h))) return rc;
  if ((rc = check_sections(&e, h))) return rc;
  if (get(&e, h + ELF_E_TYPE, 2) == ELF_ET_EXEC || e.pie) {
    pyhost__fmt(why, cap, "it is a program (%s), not a shared library",
                e.pie ? "a position-independent executable" : "an executable");
    return PYHOST__LIB_PROGRAM;
  }
  return PYHOST__LIB_SOUND;
}

/* ---- this process's machine ---- */

unsigned pyhost__elf_native_machine(void) {
#if defined(__x86_64__) || defined(_M_X64)
  return ELF_EM_X86_64;
#elif defined(__aarch64__) || defined(_M_ARM64)
  return ELF_EM_AARCH64;
#elif defined(__i386__) || defined(_M_IX86)
  return ELF_EM_386;
#elif defined(__arm__)
  return ELF_EM_ARM;
#elif defined(__riscv)
  return ELF_EM_RISCV;
#elif defined(__powerpc64__)
  return ELF_EM_PPC64;
#elif defined(__s390x__)
  return ELF_EM_S390;
#else
  return 0; /* any machine: the loader judges */
#endif
}

unsigned pyhost__elf_native_class(void) {
  return sizeof(void *) == 8 ? ELF_CLASS64 : ELF_CLASS32;
}

const char *pyhost__elf_arch_text(unsigned machine, unsigned elf_class, char *buf, size_t cap) {
  static const struct { unsigned machine; const char *name; } names[] = {
      {ELF_EM_X86_64, "x86_64"}, {ELF_EM_386, "i386"},   {ELF_EM_AARCH64, "aarch64"},
      {ELF_EM_ARM, "arm"},       {ELF_EM_RISCV, "riscv"}, {ELF_EM_PPC64, "ppc64"},
      {ELF_EM_S390, "s390x"}};
  const char *name = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].machine == machine) name = names[i].name;
  if (name) pyhost__fmt(buf, cap, "%s (ELF%d)", name, elf_class == ELF_CLASS64 ? 64 : 32);
  else if (machine) pyhost__fmt(buf, cap, "e_machine %u (ELF%d)", machine, elf_class == ELF_CLASS64 ? 64 : 32);
  else pyhost__fmt(buf, cap, "an unknown machine (ELF%d)", elf_class == ELF_CLASS64 ? 64 : 32);
  return buf;
}
