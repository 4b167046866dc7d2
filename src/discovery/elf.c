/* elf.c: reading an ELF file's header and dynamic section (see elf.h).
 *
 * Only the headers are read: a statically linked python is several megabytes and
 * never needs reading whole.  Every offset is checked against the file's size, so a
 * truncated or hostile file yields "no information", never a crash; the file is
 * opened as libcheck.c opens it, so a FIFO or a device never blocks the reader.
 */
#include "elf.h"
#include "platform.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct reader {
  struct pyhost__fs_file f;
  int big;   /* big-endian */
  int wide;  /* ELF64 */
};

static int read_at(struct reader *r, uint64_t off, void *buf, size_t n) {
  if (off > r->f.size || n > r->f.size - off) return -1;
  return pyhost__fs_pread(&r->f, off, buf, n);
}

static uint64_t get(const struct reader *r, const unsigned char *p, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; i++) v |= (uint64_t)p[r->big ? size - 1 - i : i] << (8 * i);
  return v;
}

/* Reads the NUL-terminated string at file offset off into out (cut to cap). */
static void read_str(struct reader *r, uint64_t off, char *out, size_t cap) {
  out[0] = '\0';
  if (off >= r->f.size) return;
  size_t n = r->f.size - off < cap - 1 ? (size_t)(r->f.size - off) : cap - 1; /* near the end */
  if (read_at(r, off, out, n) != 0) n = 0;
  out[n] = '\0';
}

struct load { uint64_t vaddr, off, size; };

static int vaddr_to_off(const struct load *loads, int n, uint64_t vaddr, uint64_t *off) {
  for (int i = 0; i < n; i++)
    if (vaddr >= loads[i].vaddr && vaddr < loads[i].vaddr + loads[i].size) {
      *off = vaddr - loads[i].vaddr + loads[i].off;
      return 0;
    }
  return -1;
}

static void read_dynamic(struct reader *r, uint64_t dyn_off, uint64_t dyn_size,
                         const struct load *loads, int nloads, struct pyhost__elf *out) {
  int esz = r->wide ? 16 : 8, half = esz / 2;
  uint64_t strtab = 0, needed[64], runpath = (uint64_t)-1, rpath = (uint64_t)-1;
  int nneeded = 0;
  for (uint64_t at = 0; at + (uint64_t)esz <= dyn_size && at < 65536; at += (uint64_t)esz) {
    unsigned char e[16];
    if (read_at(r, dyn_off + at, e, (size_t)esz) != 0) return;
    uint64_t tag = get(r, e, half), val = get(r, e + half, half);
    if (tag == 0) break;
    if (tag == 1 && nneeded < 64) needed[nneeded++] = val;
    else if (tag == 5) strtab = val;
    else if (tag == 15) rpath = val;
    else if (tag == 29) runpath = val;
  }
  uint64_t str_off;
  if (!strtab || vaddr_to_off(loads, nloads, strtab, &str_off) != 0) return;
  for (int i = 0; i < nneeded && !out->needed_python[0]; i++) {
    char name[256];
    read_str(r, str_off + needed[i], name, sizeof name);
    if (!strncmp(name, "libpython", 9) || !strncmp(name, "python", 6))
      pyhost__fmt(out->needed_python, sizeof out->needed_python, "%s", name);
  }
  uint64_t rp = runpath != (uint64_t)-1 ? runpath : rpath;
  if (rp != (uint64_t)-1) read_str(r, str_off + rp, out->runpath, sizeof out->runpath);
}

int pyhost__elf_read(const char *path, struct pyhost__elf *out) {
  memset(out, 0, sizeof *out);
  struct reader r = {{0, 0}, 0, 0};
  char why[256];
  if (pyhost__fs_open_regular(path, &r.f, why, sizeof why) != PYHOST__FS_FILE) return -1;
  unsigned char h[64];
  size_t got = r.f.size < sizeof h ? (size_t)r.f.size : sizeof h;
  if (read_at(&r, 0, h, got) != 0) got = 0;
  int rc = got >= 2 ? 0 : -1;
  if (got >= 2 && h[0] == '#' && h[1] == '!') out->is_script = 1;
  if (got >= 52 && !memcmp(h, "\177ELF", 4) && (h[4] == 1 || h[4] == 2)) {
    out->is_elf = 1;
    out->elf_class = h[4];
    r.wide = h[4] == 2;
    r.big = h[5] == 2;
    out->machine = (unsigned)get(&r, h + 18, 2);
    uint64_t phoff = r.wide ? get(&r, h + 32, 8) : get(&r, h + 28, 4);
    unsigned phentsize = (unsigned)get(&r, h + (r.wide ? 54 : 42), 2);
    unsigned phnum = (unsigned)get(&r, h + (r.wide ? 56 : 44), 2);
    struct load loads[16];
    int nloads = 0;
    uint64_t dyn_off = 0, dyn_size = 0;
    for (unsigned i = 0; i < phnum && i < 64 && phentsize >= 32 && phentsize <= 64; i++) {
      unsigned char ph[64];
      if (read_at(&r, phoff + (uint64_t)i * phentsize, ph, phentsize) != 0) break;
      uint64_t type = get(&r, ph, 4), off, vaddr, filesz;
      if (r.wide) {
        off = get(&r, ph + 8, 8);
        vaddr = get(&r, ph + 16, 8);
        filesz = get(&r, ph + 32, 8);
      } else {
        off = get(&r, ph + 4, 4);
        vaddr = get(&r, ph + 8, 4);
        filesz = get(&r, ph + 16, 4);
      }
      if (type == 1 && nloads < 16) loads[nloads++] = (struct load){vaddr, off, filesz};
      if (type == 2) {
        out->dynamic = 1;
        dyn_off = off;
        dyn_size = filesz;
      }
    }
    if (out->dynamic) read_dynamic(&r, dyn_off, dyn_size, loads, nloads, out);
  }
  pyhost__fs_close(&r.f);
  return rc;
}
