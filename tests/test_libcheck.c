/* test_libcheck.c: the pre-load parsers (src/loader/libcheck_*.c) on synthetic bytes, through
 * the memory seam: sound images of each format pass, every truncation of them and
 * each kind of inconsistency is refused with its reason, and a file for another
 * machine is left to the loader.  The ELF parser also runs on real libraries in
 * test_damaged.c; the PE and Mach-O parsers have no real library on this machine. */
#define _GNU_SOURCE /* fork, setuid, chmod */
#include "libcheck.h"
#include "pyhost.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef _WIN32
#  include <sys/wait.h>
#endif

static unsigned char img[8192];

static void put(unsigned char *p, uint64_t v, int size, int big) {
  for (int i = 0; i < size; i++) p[big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static const struct pyhost__libwant any = {0, 0, 0, 0, 0};

static int check(int format, size_t size, const struct pyhost__libwant *want, char *why) {
  int rc = pyhost__libcheck_bytes(format, img, size, want, why, 512);
  CHECK(memchr(why, '\0', 512) != NULL);
  if (rc == PYHOST__LIB_DAMAGED) CHECK(why[0] != '\0');
  return rc;
}

/* Every cut of a sound image shorter than need is refused, never passed or crashed. */
static void every_cut_refused(int format, size_t size, size_t need) {
  char why[512];
  for (size_t n = 4; n < need && n < size; n++) {
    int rc = check(format, n, &any, why);
    if (rc != PYHOST__LIB_DAMAGED) fprintf(stderr, "cut at %zu: verdict %d\n", n, rc);
    CHECK(rc == PYHOST__LIB_DAMAGED);
  }
}

/* ---- ELF64: header, 2 program headers (PT_LOAD, PT_DYNAMIC), a dynamic array, 2
 * section headers ---- */
enum { E_PH = 64, E_DYN = 64 + 2 * 56, E_STR = E_DYN + 5 * 16, E_SH = 512, E_SIZE = E_SH + 2 * 64 };

static size_t elf(void) {
  memset(img, 0, sizeof img);
  memcpy(img, "\177ELF", 4);
  img[4] = 2, img[5] = 1, img[6] = 1;
  put(img + 16, 3, 2, 0);  /* ET_DYN */
  put(img + 18, 62, 2, 0); /* x86_64 */
  put(img + 32, E_PH, 8, 0);
  put(img + 40, E_SH, 8, 0);
  put(img + 54, 56, 2, 0);
  put(img + 56, 2, 2, 0);
  put(img + 58, 64, 2, 0);
  put(img + 60, 2, 2, 0);
  unsigned char *ph = img + E_PH;
  put(ph, 1, 4, 0), put(ph + 8, 0, 8, 0), put(ph + 16, 0, 8, 0), put(ph + 32, E_SH, 8, 0), put(ph + 40, E_SH, 8, 0);
  ph += 56;
  put(ph, 2, 4, 0), put(ph + 8, E_DYN, 8, 0), put(ph + 16, E_DYN, 8, 0), put(ph + 32, 5 * 16, 8, 0);
  unsigned char *d = img + E_DYN;
  put(d, 5, 8, 0), put(d + 8, E_STR, 8, 0);           /* DT_STRTAB */
  put(d + 16, 10, 8, 0), put(d + 24, 16, 8, 0);       /* DT_STRSZ */
  put(d + 32, 6, 8, 0), put(d + 40, E_STR + 16, 8, 0); /* DT_SYMTAB */
  put(d + 48, 1, 8, 0), put(d + 56, 1, 8, 0);         /* DT_NEEDED "libc.so.6" */
  memcpy(img + E_STR + 1, "libc.so.6", 10);
  unsigned char *sh = img + E_SH + 64;
  put(sh + 4, 1, 4, 0), put(sh + 24, E_STR, 8, 0), put(sh + 32, 16, 8, 0);
  return E_SIZE;
}

TEST_CASE(elf_sound) {
  char why[512];
  CHECK_RC(check(PYHOST__FMT_ELF, elf(), &any, why), PYHOST__LIB_SOUND);
  struct pyhost__libwant native = {2, 1, 62, 0, 0};
  CHECK_RC(check(PYHOST__FMT_ELF, elf(), &native, why), PYHOST__LIB_SOUND);
}

TEST_CASE(elf_every_cut) {
  every_cut_refused(PYHOST__FMT_ELF, elf(), E_SIZE);
}

TEST_CASE(elf_another_machine_is_for_the_loader) {
  char why[512];
  struct pyhost__libwant arm = {2, 1, 183, 0, 0}, x32 = {1, 1, 62, 0, 0};
  CHECK_RC(check(PYHOST__FMT_ELF, elf(), &arm, why), PYHOST__LIB_FOREIGN);
  CHECK_RC(check(PYHOST__FMT_ELF, elf(), &x32, why), PYHOST__LIB_FOREIGN);
  memcpy(img, "MZ\0\0", 4);
  CHECK_RC(check(PYHOST__FMT_ELF, E_SIZE, &any, why), PYHOST__LIB_FOREIGN);
}

/* dlopen refuses programs ("cannot dynamically load position-independent executable"):
 * an ET_EXEC file, or an ET_DYN one whose DT_FLAGS_1 has DF_1_PIE, is named as one. */
TEST_CASE(elf_program_is_not_a_library) {
  char why[512];
  size_t n = elf();
  put(img + 16, 2, 2, 0); /* ET_EXEC */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_PROGRAM);
  CHECK_CONTAINS(why, "it is a program (an executable), not a shared library");
  elf();
  put(img + E_DYN + 48, 0x6ffffffbull, 8, 0), put(img + E_DYN + 56, 0x08000001ull, 8, 0); /* DF_1_PIE|NOW */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_PROGRAM);
  CHECK_CONTAINS(why, "position-independent executable");
  elf();
  put(img + E_DYN + 48, 0x6ffffffbull, 8, 0), put(img + E_DYN + 56, 0x00000001ull, 8, 0); /* DF_1_NOW only */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_SOUND);
  put(img + 16, 2, 2, 0);
  img[E_SIZE - 1] = 0;
  CHECK_RC(check(PYHOST__FMT_ELF, E_SH + 64, &any, why), PYHOST__LIB_DAMAGED); /* damage first */
}

TEST_CASE(elf_inconsistent) {
  char why[512];
  size_t n = elf();
  put(img + 64 + 56 + 32, UINT64_MAX - 8, 8, 0); /* PT_DYNAMIC filesz: offset + size wraps */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "pass 2^64");
  elf();
  put(img + 54, 40, 2, 0);
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "program header entries of 40 bytes, not 56");
  elf();
  put(img + E_DYN + 48, 0x4000000000ull, 8, 0); /* a tag in no range */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "entry 3 has tag 0x4000000000");
  elf();
  put(img + E_DYN + 8, 0x100000, 8, 0); /* DT_STRTAB outside every PT_LOAD */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "DT_STRTAB (16 bytes at address 0x100000) lies outside");
  elf();
  put(img + E_DYN + 56, 99, 8, 0); /* DT_NEEDED past DT_STRSZ */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "string 99, past the string table's 16 bytes");
  elf();
  put(img + 64 + 56 + 32, 3 * 16, 8, 0); /* the array ends before its DT_NULL */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "has no DT_NULL end");
  elf();
  put(img + E_SH + 64 + 32, 4096, 8, 0); /* section 1 past the end */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "truncated: section 1 ends at byte 4352, the file has 640 bytes");
  put(img + E_SH + 64 + 4, 8, 4, 0); /* ... unless it is SHT_NOBITS */
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_SOUND);
  elf();
  img[4] = 3;
  CHECK_RC(check(PYHOST__FMT_ELF, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "not a valid ELF identification (class 3");
}

/* ---- PE32+: DOS header, PE header at 0x80, optional header of 240 bytes, 2 sections ---- */
enum { P_PE = 0x80, P_OPT = P_PE + 24, P_SEC = P_OPT + 240, P_SIZE = 0x600 };

static size_t pe(void) {
  memset(img, 0, sizeof img);
  memcpy(img, "MZ", 2);
  put(img + 0x3c, P_PE, 4, 0);
  memcpy(img + P_PE, "PE\0\0", 4);
  put(img + P_PE + 4, 0x8664, 2, 0);
  put(img + P_PE + 6, 2, 2, 0);
  put(img + P_PE + 20, 240, 2, 0);
  put(img + P_PE + 22, 0x2022, 2, 0); /* IMAGE_FILE_DLL | EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE */
  put(img + P_OPT, 0x20b, 2, 0);
  put(img + P_OPT + 60, 0x200, 4, 0); /* SizeOfHeaders */
  unsigned char *s = img + P_SEC;
  memcpy(s, ".text", 5), put(s + 16, 0x200, 4, 0), put(s + 20, 0x200, 4, 0);
  s += 40;
  memcpy(s, ".data", 5), put(s + 16, 0x200, 4, 0), put(s + 20, 0x400, 4, 0);
  return P_SIZE;
}

TEST_CASE(pe_sound) {
  char why[512];
  struct pyhost__libwant native = {0, 0, 0, 0x8664, 0}, arm = {0, 0, 0, 0xAA64, 0};
  CHECK_RC(check(PYHOST__FMT_PE, pe(), &any, why), PYHOST__LIB_SOUND);
  CHECK_RC(check(PYHOST__FMT_PE, pe(), &native, why), PYHOST__LIB_SOUND);
  CHECK_RC(check(PYHOST__FMT_PE, pe(), &arm, why), PYHOST__LIB_FOREIGN);
}

TEST_CASE(pe_program_is_not_a_library) {
  char why[512];
  size_t n = pe();
  put(img + P_PE + 22, 0x0022, 2, 0); /* python.exe: no IMAGE_FILE_DLL */
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_PROGRAM);
  CHECK_CONTAINS(why, "it is a program (an .exe), not a DLL");
}

TEST_CASE(pe_every_cut) {
  every_cut_refused(PYHOST__FMT_PE, pe(), P_SIZE);
}

/* A section name is shown printable: bytes outside ASCII's printable range (control
 * characters, bytes of 0x7f and up) are '?' in the reason. */
TEST_CASE(pe_section_name_shown_printable) {
  char why[512];
  size_t n = pe();
  memcpy(img + P_SEC + 40, "\x1b[2J\x7f\xff", 6); /* an escape sequence, DEL, 0xff */
  put(img + P_SEC + 40 + 16, 0x800, 4, 0);
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "truncated: section 1 (?[2J?" "?) ends at byte 3072");
}

TEST_CASE(pe_inconsistent) {
  char why[512];
  size_t n = pe();
  put(img + 0x3c, 0xfffffff0u, 4, 0);
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "(e_lfanew) needs 24 bytes");
  pe();
  img[P_PE] = 'X';
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "no PE signature at byte 128");
  pe();
  put(img + P_OPT, 0x999, 2, 0);
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "magic is 0x999");
  pe();
  put(img + P_PE + 6, 200, 2, 0);
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "truncated: the section table (200 sections)");
  pe();
  put(img + P_SEC + 40 + 16, 0x800, 4, 0);
  CHECK_RC(check(PYHOST__FMT_PE, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "truncated: section 1 (.data) ends at byte 3072, the file has 1536 bytes");
}

/* ---- Mach-O 64 (little-endian): header, LC_SEGMENT_64 ---- */
enum { M_SIZE = 0x400 };

static size_t macho_at(unsigned char *p, uint32_t cputype) {
  put(p, 0xfeedfacfu, 4, 0);
  put(p + 4, cputype, 4, 0);
  put(p + 12, 6, 4, 0);  /* MH_DYLIB */
  put(p + 16, 2, 4, 0);  /* ncmds */
  put(p + 20, 72 + 16, 4, 0);
  unsigned char *c = p + 32;
  put(c, 0x19, 4, 0), put(c + 4, 72, 4, 0);
  memcpy(c + 8, "__TEXT", 6);
  put(c + 40, 0, 8, 0), put(c + 48, M_SIZE, 8, 0); /* fileoff, filesize */
  c += 72;
  put(c, 0x0c, 4, 0), put(c + 4, 16, 4, 0); /* LC_LOAD_DYLIB, a stub of 16 bytes */
  return M_SIZE;
}

static size_t macho(void) {
  memset(img, 0, sizeof img);
  return macho_at(img, 0x01000007u);
}

/* fat: x86_64 slice at 0x1000, arm64 at 0x1400 */
static size_t fat(void) {
  memset(img, 0, sizeof img);
  put(img, 0xcafebabeu, 4, 1);
  put(img + 4, 2, 4, 1);
  put(img + 8, 0x01000007u, 4, 1), put(img + 16, 0x1000, 4, 1), put(img + 20, M_SIZE, 4, 1);
  put(img + 28, 0x0100000Cu, 4, 1), put(img + 36, 0x1400, 4, 1), put(img + 40, M_SIZE, 4, 1);
  macho_at(img + 0x1000, 0x01000007u);
  macho_at(img + 0x1400, 0x0100000Cu);
  return 0x1400 + M_SIZE;
}

TEST_CASE(macho_sound) {
  char why[512];
  struct pyhost__libwant x64 = {0, 0, 0, 0, 0x01000007u}, arm = {0, 0, 0, 0, 0x0100000Cu},
                         ppc = {0, 0, 0, 0, 18};
  CHECK_RC(check(PYHOST__FMT_MACHO, macho(), &any, why), PYHOST__LIB_SOUND);
  CHECK_RC(check(PYHOST__FMT_MACHO, macho(), &arm, why), PYHOST__LIB_FOREIGN);
  CHECK_RC(check(PYHOST__FMT_MACHO, fat(), &x64, why), PYHOST__LIB_SOUND);
  CHECK_RC(check(PYHOST__FMT_MACHO, fat(), &arm, why), PYHOST__LIB_SOUND);
  CHECK_RC(check(PYHOST__FMT_MACHO, fat(), &ppc, why), PYHOST__LIB_FOREIGN);
}

TEST_CASE(macho_program_is_not_a_library) {
  char why[512];
  size_t n = macho();
  put(img + 12, 2, 4, 0); /* MH_EXECUTE */
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &any, why), PYHOST__LIB_PROGRAM);
  CHECK_CONTAINS(why, "it is a program (a Mach-O executable), not a library");
  struct pyhost__libwant x64 = {0, 0, 0, 0, 0x01000007u};
  n = fat();
  put(img + 0x1000 + 12, 2, 4, 0);
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &x64, why), PYHOST__LIB_PROGRAM);
}

TEST_CASE(macho_every_cut) {
  every_cut_refused(PYHOST__FMT_MACHO, macho(), M_SIZE);
  every_cut_refused(PYHOST__FMT_MACHO, fat(), 0x1400 + M_SIZE);
}

TEST_CASE(macho_inconsistent) {
  char why[512];
  size_t n = macho();
  put(img + 20, 16, 4, 0); /* sizeofcmds smaller than the first command */
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "past sizeofcmds");
  macho();
  put(img + 32 + 4, 6, 4, 0);
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "has a size of 6 bytes");
  macho();
  put(img + 16, 3, 4, 0); /* one command more than sizeofcmds holds */
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "load command 2 starts past");
  macho();
  put(img + 32 + 40, UINT64_MAX, 8, 0);
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &any, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "(segment __TEXT): offset 18446744073709551615");
  n = fat();
  put(img + 0x1400 + 32 + 48, 0x800, 8, 0); /* the arm64 slice's segment passes its end */
  struct pyhost__libwant arm = {0, 0, 0, 0, 0x0100000Cu};
  CHECK_RC(check(PYHOST__FMT_MACHO, n, &arm, why), PYHOST__LIB_DAMAGED);
  CHECK_CONTAINS(why, "segment __TEXT) ends at byte 7168, the slice has 1024 bytes");
}

/* A file this user may not read is refused as such, before any parsing ("the file is
 * not readable", not a generic open failure).  Root reads any file, so as root the
 * check runs in a child that becomes nobody first. */
TEST_CASE(unreadable_file_is_named) {
#ifdef _WIN32
  SKIP("a file without read permission is a POSIX mode (chmod 0); Windows has ACLs");
#else
  char path[256];
  snprintf(path, sizeof path, "%s/pyhost-unreadable-%ld.so", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (long)getpid());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("\177ELF", f);
  fclose(f);
  CHECK(chmod(path, 0) == 0);
  pid_t pid = fork();
  if (pid == 0) {
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    char why[256] = "";
    int rc = pyhost__libcheck_path(path, why, sizeof why);
    if (rc != PYHOST_NOTFOUND) _exit(1);
    _exit(strcmp(why, "the file is not readable") == 0 ? 0 : 2);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  unlink(path);
#endif
}
