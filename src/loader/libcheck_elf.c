/* libcheck_elf.c: is an ELF shared library complete and consistent (libcheck.h)?
 *
 * Checked, in the order a loader uses them: the identification and the ELF header; the
 * program header table; every segment's file bytes (PT_LOAD and PT_DYNAMIC above all:
 * glibc maps them and reads the dynamic array before any check of its own); the dynamic
 * array (a DT_NULL end, known tags, tables inside a loadable segment, string offsets
 * inside the string table); the section header table and every section that has file
 * bytes.  What is not checked: the contents of code, data, relocations and symbol
 * tables, which would mean reading the whole file (docs/reliability.md).
 */
#include "libcheck.h"
#include "platform.h"

#include <string.h>

struct elf {
  const struct pyhost__libsrc *src;
  int big, wide;
  char *why;
  size_t cap;
  /* the tables are read a block at a time: a hostile file may hold 65535 program
   * headers or millions of section headers, each a system call otherwise */
  unsigned char block[4096];
  uint64_t block_off, block_len;
  int pie; /* DT_FLAGS_1 has DF_1_PIE: a program, which dlopen refuses */
};

struct load { uint64_t vaddr, off, filesz; };
enum { MAX_LOADS = 64 };

static uint64_t get(const struct elf *e, const unsigned char *p, int size) {
  return pyhost__libcheck_get(p, size, e->big);
}

/* A word: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t word(const struct elf *e, const unsigned char *p) {
  return get(e, p, e->wide ? 8 : 4);
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
  if (got < 16)
    return damaged(e, "truncated: the ELF identification needs 16 bytes, the file has %llu", (ull)got);
  unsigned cls = h[4], data = h[5];
  if ((cls != 1 && cls != 2) || (data != 1 && data != 2) || h[6] != 1)
    return damaged(e, "not a valid ELF identification (class %u, byte order %u, version %u)", cls,
                   data, (unsigned)h[6]);
  e->wide = cls == 2;
  e->big = data == 2;
  if ((want->elf_class && cls != want->elf_class) || (want->elf_data && data != want->elf_data))
    return PYHOST__LIB_FOREIGN;
  uint64_t need = e->wide ? 64 : 52;
  if (got < need)
    return damaged(e, "truncated: the ELF header needs %llu bytes, the file has %llu", (ull)need, (ull)got);
  if (want->elf_machine && get(e, h + 18, 2) != want->elf_machine) return PYHOST__LIB_FOREIGN;
  return PYHOST__LIB_SOUND;
}

/* Tags of the dynamic array: the generic range and the OS/processor ranges. */
static int known_tag(uint64_t tag) {
  return tag <= 37 || (tag >= 0x6000000dull && tag <= 0x7fffffffull);
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

/* The dynamic array at off (filesz bytes, inside the file). */
static int check_dynamic(struct elf *e, uint64_t off, uint64_t filesz, const struct load *loads,
                         int nloads) {
  /* address tags and the tag of their size (0: a table whose size the loader derives) */
  static const struct { uint64_t tag, size_tag; const char *name; } tables[] = {
      {5, 10, "DT_STRTAB"},       {6, 0, "DT_SYMTAB"},        {4, 0, "DT_HASH"},
      {0x6ffffef5ull, 0, "DT_GNU_HASH"}, {7, 8, "DT_RELA"},   {17, 18, "DT_REL"},
      {23, 2, "DT_JMPREL"},       {25, 27, "DT_INIT_ARRAY"},  {26, 28, "DT_FINI_ARRAY"},
      {36, 35, "DT_RELR"},        {0x6ffffff0ull, 0, "DT_VERSYM"},
      {0x6ffffffcull, 0, "DT_VERDEF"}, {0x6ffffffeull, 0, "DT_VERNEED"}};
  enum { NT = sizeof tables / sizeof tables[0] };
  uint64_t val[NT], size[NT], strsz = 0, strings[64];
  int have[NT], nstrings = 0, ended = 0;
  memset(have, 0, sizeof have);
  memset(size, 0, sizeof size);
  uint64_t esz = e->wide ? 16 : 8, n = filesz / esz;
  if (n > 65536) n = 65536; /* real arrays hold dozens: no end by then is no end */
  for (uint64_t i = 0; i < n && !ended; i++) {
    unsigned char d[16];
    if (read_at(e, off + i * esz, d, (size_t)esz) != 0)
      return damaged(e, "cannot read the dynamic array at byte %llu", (ull)(off + i * esz));
    uint64_t tag = word(e, d), v = word(e, d + esz / 2);
    if (tag == 0) {
      ended = 1;
      break;
    }
    if (!known_tag(tag))
      return damaged(e, "the dynamic array is garbage: entry %llu has tag %#llx", (ull)i, (ull)tag);
    if (tag == 10) strsz = v;
    if (tag == 0x6ffffffbull && (v & 0x08000000ull)) e->pie = 1; /* DT_FLAGS_1, DF_1_PIE */
    if ((tag == 1 || tag == 14 || tag == 15 || tag == 29) && nstrings < 64) strings[nstrings++] = v;
    for (int t = 0; t < NT; t++) {
      if (tag == tables[t].tag) have[t] = 1, val[t] = v;
      if (tables[t].size_tag && tag == tables[t].size_tag) size[t] = v;
    }
  }
  if (!ended) return damaged(e, "the dynamic array (%llu bytes at byte %llu) has no DT_NULL end",
                             (ull)filesz, (ull)off);
  if (!have[0] || !have[1])
    return damaged(e, "the dynamic array names no %s",
                   have[0] ? "symbol table (DT_SYMTAB)" : "string table (DT_STRTAB)");
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
  return PYHOST__LIB_SOUND;
}

static int check_segments(struct elf *e, const unsigned char *h) {
  uint64_t phoff = word(e, h + (e->wide ? 32 : 28));
  unsigned phentsize = (unsigned)get(e, h + (e->wide ? 54 : 42), 2);
  unsigned phnum = (unsigned)get(e, h + (e->wide ? 56 : 44), 2);
  unsigned want_ent = e->wide ? 56 : 32;
  if (phnum == 0) return damaged(e, "no program headers: nothing to load");
  if (phentsize != want_ent)
    return damaged(e, "program header entries of %u bytes, not %u", phentsize, want_ent);
  int rc = table_fits(e, "program header", phoff, phnum, phentsize);
  if (rc) return rc;
  struct load loads[MAX_LOADS];
  int nloads = 0;
  uint64_t dyn_off = 0, dyn_size = 0;
  int has_dyn = 0;
  for (unsigned i = 0; i < phnum; i++) {
    unsigned char p[56];
    if (read_at(e, phoff + (uint64_t)i * phentsize, p, phentsize) != 0)
      return damaged(e, "cannot read program header %u", i);
    uint64_t type = get(e, p, 4), off, vaddr, filesz, memsz, end;
    if (e->wide) off = get(e, p + 8, 8), vaddr = get(e, p + 16, 8), filesz = get(e, p + 32, 8), memsz = get(e, p + 40, 8);
    else off = get(e, p + 4, 4), vaddr = get(e, p + 8, 4), filesz = get(e, p + 16, 4), memsz = get(e, p + 20, 4);
    if (filesz == 0 && type != 1 && type != 2) continue;
    const char *kind = type == 1 ? " (PT_LOAD)" : type == 2 ? " (PT_DYNAMIC)" : "";
    if (pyhost__libcheck_end(off, filesz, &end) != 0)
      return damaged(e, "segment %u%s: offset %llu and size %llu pass 2^64", i, kind, (ull)off,
                     (ull)filesz);
    if (end > e->src->size)
      return damaged(e, "truncated: segment %u%s ends at byte %llu, the file has %llu bytes", i, kind,
                     (ull)end, (ull)e->src->size);
    if (type == 1) {
      if (filesz > memsz)
        return damaged(e, "segment %u (PT_LOAD) has more file bytes (%llu) than memory (%llu)", i,
                       (ull)filesz, (ull)memsz);
      if (nloads == MAX_LOADS) return damaged(e, "more than %d loadable segments", MAX_LOADS);
      loads[nloads++] = (struct load){vaddr, off, filesz};
    } else if (type == 2) {
      if (has_dyn) return damaged(e, "two dynamic segments (the second is segment %u)", i);
      has_dyn = 1, dyn_off = off, dyn_size = filesz;
    }
  }
  if (!nloads) return damaged(e, "no loadable segment (PT_LOAD)");
  return has_dyn ? check_dynamic(e, dyn_off, dyn_size, loads, nloads) : PYHOST__LIB_SOUND;
}

static int check_sections(struct elf *e, const unsigned char *h) {
  uint64_t shoff = word(e, h + (e->wide ? 40 : 32));
  unsigned shentsize = (unsigned)get(e, h + (e->wide ? 58 : 46), 2);
  uint64_t shnum = get(e, h + (e->wide ? 60 : 48), 2);
  unsigned want_ent = e->wide ? 64 : 40;
  if (shoff == 0) return PYHOST__LIB_SOUND; /* no section headers: the loader needs none */
  if (shentsize != want_ent)
    return damaged(e, "section header entries of %u bytes, not %u", shentsize, want_ent);
  int rc = table_fits(e, "section header", shoff, 1, shentsize);
  if (rc) return rc;
  unsigned char s[64];
  if (shnum == 0) { /* more than 0xff00 sections: the count is section 0's sh_size */
    if (read_at(e, shoff, s, shentsize) != 0)
      return damaged(e, "cannot read section header 0");
    shnum = e->wide ? get(e, s + 32, 8) : get(e, s + 20, 4);
    if (shnum > e->src->size / shentsize)
      return damaged(e, "section header 0 counts %llu sections, more than a file of %llu bytes holds",
                     (ull)shnum, (ull)e->src->size);
  }
  if ((rc = table_fits(e, "section header", shoff, shnum, shentsize))) return rc;
  for (uint64_t i = 1; i < shnum; i++) {
    if (read_at(e, shoff + i * shentsize, s, shentsize) != 0)
      return damaged(e, "cannot read section header %llu", (ull)i);
    uint64_t type = get(e, s + 4, 4), off, size, end;
    if (e->wide) off = get(e, s + 24, 8), size = get(e, s + 32, 8);
    else off = get(e, s + 16, 4), size = get(e, s + 20, 4);
    if (type == 0 || type == 8) continue; /* SHT_NULL, SHT_NOBITS: no file bytes */
    if (pyhost__libcheck_end(off, size, &end) != 0)
      return damaged(e, "section %llu: offset %llu and size %llu pass 2^64", (ull)i, (ull)off, (ull)size);
    if (end > e->src->size)
      return damaged(e, "truncated: section %llu ends at byte %llu, the file has %llu bytes", (ull)i,
                     (ull)end, (ull)e->src->size);
  }
  return PYHOST__LIB_SOUND;
}

int pyhost__libcheck_elf(const struct pyhost__libsrc *src, const struct pyhost__libwant *want,
                         char *why, size_t cap) {
  static const struct elf zero;
  struct elf e = zero;
  e.src = src, e.why = why, e.cap = cap;
  unsigned char h[64];
  uint64_t got = src->size < sizeof h ? src->size : sizeof h;
  why[0] = '\0';
  if (got < 4 || src->read(src->ctx, 0, h, (size_t)got) != 0) return PYHOST__LIB_FOREIGN;
  if (memcmp(h, "\177ELF", 4) != 0) return PYHOST__LIB_FOREIGN;
  int rc = check_ident(&e, h, got, want);
  if (rc) return rc;
  if ((rc = check_segments(&e, h))) return rc;
  if ((rc = check_sections(&e, h))) return rc;
  if (get(&e, h + 16, 2) == 2 || e.pie) { /* ET_EXEC, or a position-independent one */
    pyhost__fmt(why, cap, "it is a program (%s), not a shared library",
                e.pie ? "a position-independent executable" : "an executable");
    return PYHOST__LIB_PROGRAM;
  }
  return PYHOST__LIB_SOUND;
}
