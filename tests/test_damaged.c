#define _GNU_SOURCE
/* test_damaged.c: damaged, odd and hostile library files (issue 12).  Every fixture is
 * made here, at run time, from the real library under test (nothing large is checked
 * in), in a scratch directory removed at exit.  Each one is tried three ways, each
 * twice: pyhost_init in this process (the status, a message naming the path and the
 * cause, the same message again), pyhost_inspect_library, and the `pyhost` command
 * (exit 1 and the message on stderr, under a timeout: a hang is a failure, not a stuck
 * test).  Arguments: CASE LIB VERSION PYHOST_CLI. */
#include "pyhost.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char scratch[256];

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  return remove(p);
}

static void cleanup(void) {
  if (scratch[0]) nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A short scratch directory: a socket path must fit sockaddr_un's 108 bytes. */
static const char *dir(void) {
  if (!scratch[0]) {
    snprintf(scratch, sizeof scratch, "/tmp/pyhost-dmg-XXXXXX");
    if (!mkdtemp(scratch)) {
      perror("mkdtemp");
      exit(1);
    }
    atexit(cleanup);
  }
  return scratch;
}

static uint64_t lib_size(void) {
  struct stat st;
  if (stat(check_lib, &st) != 0) {
    perror(check_lib);
    exit(1);
  }
  return (uint64_t)st.st_size;
}

/* Writes the first n bytes of the library under test to path; then overwrites
 * [from, n) with bytes from fill (NULL: keep). */
static void copy_lib(const char *path, uint64_t n, uint64_t from, void (*fill)(unsigned char *, size_t)) {
  FILE *in = fopen(check_lib, "rb"), *out = fopen(path, "wb");
  CHECK(in && out);
  if (!in || !out) exit(1);
  static unsigned char buf[1 << 16];
  for (uint64_t at = 0; at < n;) {
    size_t want = n - at < sizeof buf ? (size_t)(n - at) : sizeof buf;
    size_t got = fread(buf, 1, want, in);
    if (got == 0) break;
    if (fill && at + got > from) {
      size_t skip = at >= from ? 0 : (size_t)(from - at);
      fill(buf + skip, got - skip);
    }
    CHECK(fwrite(buf, 1, got, out) == got);
    at += got;
  }
  fclose(in);
  CHECK(fclose(out) == 0);
}

static void zeros(unsigned char *p, size_t n) {
  memset(p, 0, n);
}

static void random_bytes(unsigned char *p, size_t n) {
  static uint64_t s = 0x9E3779B97F4A7C15ull; /* fixed: the same bytes on every run */
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    p[i] = (unsigned char)(s >> 24);
  }
}

static char *path_in(const char *name) {
  static char p[8][8192];
  static int next;
  char *out = p[next++ % 8];
  snprintf(out, sizeof p[0], "%s/%s", dir(), name);
  return out;
}

/* Runs the CLI with args; its stderr into err.  Returns the exit status, or -1 when it
 * died by a signal or ran past the timeout (then it is killed). */
static int run_cli(const char *const *args, char *err, size_t cap) {
  char errfile[4096];
  snprintf(errfile, sizeof errfile, "%s/cli.stderr", dir());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  /* a sysroot entry's programs run under its loader: PYHOST_TEST_LAUNCHER holds that
   * command prefix, each word followed by "@@" (tests/CMakeLists.txt) */
  static char launch[8192];
  snprintf(launch, sizeof launch, "%s", getenv("PYHOST_TEST_LAUNCHER") ? getenv("PYHOST_TEST_LAUNCHER") : "");
  char *argv[32];
  int n = 0;
  for (char *w = launch, *end; n < 16 && (end = strstr(w, "@@")) != NULL; w = end + 2) {
    *end = '\0';
    argv[n++] = w;
  }
  argv[n++] = (char *)check_arg4;
  for (const char *const *a = args; *a && n < 31; a++) argv[n++] = (char *)*a;
  argv[n] = NULL;
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  CHECK(rc == 0);
  if (rc != 0) return -1;
  int status = 0, waited = 0;
  for (int ms = 0; ms < 60000 && !waited; ms += 10) { /* generous: a loaded CI box */
    if (waitpid(pid, &status, WNOHANG) == pid) waited = 1;
    else nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  if (!waited) {
    fprintf(stderr, "the CLI ran for 60 s: killed\n");
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  FILE *f = fopen(errfile, "rb");
  size_t got = f ? fread(err, 1, cap - 1, f) : 0;
  err[got] = '\0';
  if (f) fclose(f);
  if (waited && WIFSIGNALED(status)) fprintf(stderr, "the CLI died by signal %d\n", WTERMSIG(status));
  return waited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* in_msg: the path as the message shows it (a relative path shows as absolute). */
static void expect_refused_as(const char *lib, const char *in_msg, int status, const char *frag1,
                              const char *frag2) {
  char first[8192], m[8192], err[16384];
  for (int attempt = 0; attempt < 2; attempt++) {
    check_refused(lib, status, in_msg, frag1, frag2, m, sizeof m);
    if (attempt == 0) snprintf(first, sizeof first, "%s", m);
    else CHECK_STREQ(m, first);

    pyhost_library_info *info = NULL;
    CHECK_RC(pyhost_inspect_library(lib, &info), PYHOST_OK);
    if (info) {
      CHECK_RC(info->status, status);
      if (status == PYHOST_DAMAGED) CHECK_CONTAINS(info->message, frag2 ? frag2 : frag1);
      pyhost_library_info_free(info);
    }

    const char *args[] = {"--python", lib, "-e", "1", NULL};
    CHECK_RC(run_cli(args, err, sizeof err), 1);
    CHECK_CONTAINS(err, "pyhost: ");
    CHECK_CONTAINS(err, in_msg);
    if (frag1) CHECK_CONTAINS(err, frag1);
    if (frag2) CHECK_CONTAINS(err, frag2);
  }
}

static void expect_refused(const char *lib, int status, const char *frag1, const char *frag2) {
  expect_refused_as(lib, lib, status, frag1, frag2);
}

static void expect_damaged(const char *lib, const char *what) {
  expect_refused(lib, PYHOST_DAMAGED, "the file is damaged: ", what);
}

/* The library's name (libpython3.X.so.1.0): fixtures keep it, as a user's copy would. */
static const char *lib_name(void) {
  const char *s = strrchr(check_lib, '/');
  return s ? s + 1 : check_lib;
}

static const char *truncated(uint64_t n) {
  char *p = path_in(lib_name());
  copy_lib(p, n, n, NULL);
  return p;
}

/* ---- the issue's table ---- */

TEST_CASE(first_4096_bytes) { /* was SIGBUS inside the system loader */
  expect_damaged(truncated(4096), "truncated: segment 0 (PT_LOAD) ends at byte");
}

TEST_CASE(fifo) { /* was a hang */
  const char *p = path_in(lib_name());
  CHECK(mkfifo(p, 0600) == 0);
  expect_refused(p, PYHOST_NOLIB, "a FIFO (named pipe), not a regular file", NULL);
}

TEST_CASE(half_the_file) {
  expect_damaged(truncated(lib_size() / 2), "truncated: ");
}

TEST_CASE(bare_name_of_a_file_in_the_current_directory) {
  /* a name no system directory has, so that the loader's search fails here too */
  char name[256];
  snprintf(name, sizeof name, "libpython%s-pyhost-test-copy.so", check_version);
  copy_lib(path_in(name), lib_size(), lib_size(), NULL);
  CHECK(chdir(dir()) == 0);
  expect_refused(name, PYHOST_NOLIB, "a bare name (no directory), which the system loader searched for in",
                 "a file of that name is in the current directory: give it as ./");
}

TEST_CASE(relative_path_is_made_absolute) {
  CHECK(mkdir(path_in("sub"), 0700) == 0);
  copy_lib(path_in("sub/libpython-rel.so"), 4096, 4096, NULL);
  CHECK(chdir(dir()) == 0);
  expect_refused_as("./sub/libpython-rel.so", path_in("sub/libpython-rel.so"), PYHOST_DAMAGED,
                    "(the relative path ./sub/libpython-rel.so, resolved against the current directory)",
                    "truncated: segment 0");
}

/* ---- truncations at several points ---- */

TEST_CASE(inside_the_elf_header) {
  expect_damaged(truncated(40), "truncated: the ELF header needs 64 bytes, the file has 40");
}

TEST_CASE(inside_the_program_headers) {
  expect_damaged(truncated(64 + 56 + 20), "truncated: the program header table ends at byte");
}

TEST_CASE(inside_the_identification) {
  expect_damaged(truncated(10), "truncated: the ELF identification needs 16 bytes, the file has 10");
}

TEST_CASE(one_byte_short) {
  expect_damaged(truncated(lib_size() - 1), "truncated: ");
}

TEST_CASE(headers_then_random_bytes) {
  /* the real ELF and program headers, then noise up to the real size: every segment
   * fits, so the dynamic array (noise) is what gives it away */
  const char *p = path_in(lib_name());
  copy_lib(p, lib_size(), 4096, random_bytes);
  expect_damaged(p, "the dynamic array is garbage");
}

/* The stdlib directory of the Python under test: <libdir>/python3.X, or on Debian
 * (/usr/lib/<multiarch>/ holds the library) <libdir>/../python3.X. */
static void stdlib_of_lib(char *out, size_t cap) {
  snprintf(out, cap, "%s", check_lib);
  *strrchr(out, '/') = '\0';
  size_t cut = strlen(out);
  snprintf(out + cut, cap - cut, "/python%s", check_version);
  if (access(out, F_OK) != 0) {
    out[cut] = '\0';
    *strrchr(out, '/') = '\0';
    cut = strlen(out);
    snprintf(out + cut, cap - cut, "/python%s", check_version);
  }
  CHECK(access(out, F_OK) == 0);
}

/* A copy of the library in an installation of its own: D/lib/libpython3.X.so.1.0
 * beside D/lib/python3.X (the real stdlib, symlinked), so that the home is found and
 * nothing but the library's own state decides.  Returns the library's path. */
static const char *installation(void) {
  char stdlib[4096], where[4096];
  stdlib_of_lib(stdlib, sizeof stdlib);
  CHECK(mkdir(path_in("lib"), 0700) == 0);
  snprintf(where, sizeof where, "lib/python%s", check_version);
  CHECK(symlink(stdlib, path_in(where)) == 0);
  snprintf(where, sizeof where, "lib/%s", lib_name());
  return path_in(where);
}

TEST_CASE(in_an_installation_then_truncated) {
  /* without the check the home is found and Python starts on half a library */
  const char *p = installation();
  copy_lib(p, lib_size() / 2, lib_size(), NULL);
  expect_damaged(p, "truncated: ");
}

/* Where the file bytes of the loadable segments end, and the dynamic array's offset,
 * read from the library under test (ELF64, little-endian: the matrix's machines). */
static void segments_of_lib(uint64_t *load_end, uint64_t *dyn_off) {
  FILE *f = fopen(check_lib, "rb");
  unsigned char eh[64], ph[56];
  CHECK(f && fread(eh, 1, 64, f) == 64 && eh[4] == 2 && eh[5] == 1);
  uint64_t phoff, off, filesz;
  unsigned phnum = (unsigned)(eh[56] | eh[57] << 8);
  memcpy(&phoff, eh + 32, 8);
  *load_end = *dyn_off = 0;
  for (unsigned i = 0; f && i < phnum; i++) {
    CHECK(fseek(f, (long)(phoff + i * 56u), SEEK_SET) == 0 && fread(ph, 1, 56, f) == 56);
    memcpy(&off, ph + 8, 8);
    memcpy(&filesz, ph + 32, 8);
    if (ph[0] == 1 && off + filesz > *load_end) *load_end = off + filesz;
    if (ph[0] == 2) *dyn_off = off;
  }
  if (f) fclose(f);
  CHECK(*load_end > 0 && *dyn_off > 0);
}

TEST_CASE(last_bytes_zeroed_in_an_installation) {
  /* The bytes past the last loadable segment (section headers, symbol tables, debug
   * links) are never mapped: zeroed, the section types read SHT_NULL, the headers
   * stay consistent, and the honest outcome is that Python runs.  (Zeroed bytes
   * inside a segment's code or data are content damage that no header check sees:
   * docs/reliability.md.)  A crash, a hang or a refusal all fail. */
  const char *p = installation();
  uint64_t n = lib_size(), load_end, dyn_off;
  segments_of_lib(&load_end, &dyn_off);
  uint64_t from = n - load_end > 4096 ? n - 4096 : load_end;
  CHECK(n - from > 1000);
  copy_lib(p, n, from, zeros);

  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, p);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "6*7", &v), PYHOST_OK);
  pyhost_value_free(v);
  pyhost_free(h);
  pyhost_config_free(c);
  char err[16384];
  const char *args[] = {"--python", p, "-e", "6*7", NULL};
  CHECK_RC(run_cli(args, err, sizeof err), 0);
}

TEST_CASE(zeros_from_the_dynamic_section_on) {
  /* a preallocated file whose copy stopped before the dynamic array: zeros to the end */
  const char *p = installation();
  uint64_t load_end, dyn_off;
  segments_of_lib(&load_end, &dyn_off);
  copy_lib(p, lib_size(), dyn_off, zeros);
  expect_damaged(p, "the dynamic array names no string table (DT_STRTAB)");
}

/* ---- what is not a regular file ---- */

TEST_CASE(unix_socket) {
  const char *p = path_in(lib_name());
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
  CHECK(s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0);
  expect_refused(p, PYHOST_NOLIB, "a socket, not a regular file", NULL);
  close(s);
}

TEST_CASE(character_devices) {
  expect_refused("/dev/null", PYHOST_NOLIB, "a character device, not a regular file", NULL);
  expect_refused("/dev/zero", PYHOST_NOLIB, "a character device, not a regular file", NULL);
}

TEST_CASE(symlink_loop) {
  CHECK(symlink(path_in("b.so"), path_in("a.so")) == 0);
  CHECK(symlink(path_in("a.so"), path_in("b.so")) == 0);
  expect_refused(path_in("a.so"), PYHOST_NOTFOUND, "a symlink loop", NULL);
}

TEST_CASE(symlink_chain_too_long) {
  /* 60 links to a real file: more than the system follows (40 on Linux) */
  char name[64], target[64];
  copy_lib(path_in("link0.so"), 4096, 4096, NULL);
  for (int i = 1; i <= 60; i++) {
    snprintf(name, sizeof name, "link%d.so", i);
    snprintf(target, sizeof target, "link%d.so", i - 1);
    CHECK(symlink(target, path_in(name)) == 0);
  }
  expect_refused(path_in("link60.so"), PYHOST_NOTFOUND, "a chain of more symlinks than the system follows", NULL);
}

/* ---- odd paths ---- */

TEST_CASE(path_of_5000_characters) {
  /* a real file at the end of 25 nested 199-character directories */
  char comp[200], path[6000];
  memset(comp, 'd', 199);
  comp[199] = '\0';
  int fd = open(dir(), O_RDONLY | O_DIRECTORY);
  snprintf(path, sizeof path, "%s", dir());
  for (int i = 0; i < 25 && fd >= 0; i++) {
    CHECK(mkdirat(fd, comp, 0700) == 0);
    int next = openat(fd, comp, O_RDONLY | O_DIRECTORY);
    close(fd);
    fd = next;
    strcat(path, "/");
    strcat(path, comp);
  }
  int lib = fd >= 0 ? openat(fd, "libpython.so", O_WRONLY | O_CREAT, 0600) : -1;
  CHECK(lib >= 0 && write(lib, "\177ELF", 4) == 4);
  if (lib >= 0) close(lib);
  if (fd >= 0) close(fd);
  strcat(path, "/libpython.so");
  CHECK(strlen(path) > 5000);
  char head[128];
  snprintf(head, sizeof head, "%.100s", path);
  expect_refused_as(path, head, PYHOST_NOTFOUND, "more than the 4095 pyhost handles", NULL);
}

TEST_CASE(path_with_newline_and_non_ascii) {
  const char *p = path_in("lib\npyth\xc3\xb6n-\xe2\x82\xac-\xe6\x97\xa5.so"); /* UTF-8 ö, €, 日 */
  copy_lib(p, 4096, 4096, NULL);
  expect_damaged(p, "truncated: segment 0 (PT_LOAD)");
}
