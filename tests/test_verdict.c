#define _GNU_SOURCE
/* test_verdict.c: copies of each matrix library, renamed, cut short, patched for
 * another machine or moved away from their standard library, each judged by
 * pyhost_inspect_library, pyhost_discover and pyhost_init, which must agree on the
 * status, the reason and what the library is (verdict_judges.h).  What a library IS
 * decides, never its file name (src/loader/verdict.h).
 * Arguments: CASE LIB VERSION.  The odd files that need no Python of the matrix are
 * test_verdict_files.c's. */
#include "pyhost.h"
#include "check.h"
#include "verdict_judges.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/* A debug build of the matrix (Debian's libpython3.14d.so.1.0) is one by its name. */
static int matrix_debug(void) {
  const char *base = strrchr(check_lib, '/');
  return strstr(base ? base : check_lib, "d.so") != NULL;
}

/* The standard library beside the library under test: <home>/lib/python3.X, with the
 * home as pyhost_init derives it for the library itself. */
static void stdlib_of(char *out, size_t cap) {
  pyhost_library_info *in = NULL;
  CHECK_RC(pyhost_inspect_library(check_lib, &in), PYHOST_OK);
  if (!in || in->status != PYHOST_OK) {
    fprintf(stderr, "the library under test is not usable itself: %s\n", in ? in->message : "?");
    exit(1);
  }
  snprintf(out, cap, "%s/lib/python%s", in->home, check_version);
  pyhost_library_info_free(in);
}

/* scratch/<dir>/lib/<name>: a copy of the library under test (limit bytes of it, 0:
 * all), with the standard library linked beside it unless alone is set. */
static const char *placed(const char *dir, const char *name, size_t limit, int alone) {
  static char lib[PATH_MAX + 64];
  char d[PATH_MAX], stdlib[PATH_MAX], link[PATH_MAX + 64];
  const char *t = verdict_scratch();
  stdlib_of(stdlib, sizeof stdlib);
  snprintf(d, sizeof d, "%s/%s", t, dir);
  mkdir(d, 0755);
  snprintf(d, sizeof d, "%s/%s/lib", t, dir);
  mkdir(d, 0755);
  if (!alone) {
    snprintf(link, sizeof link, "%s/python%s", d, check_version);
    CHECK(symlink(stdlib, link) == 0);
  }
  snprintf(lib, sizeof lib, "%s/%s", d, name);
  verdict_copy(check_lib, lib, limit);
  verdict_quiet_discovery(t);
  return lib;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A copy under a name that says nothing: judged by what it is. */
TEST_CASE(renamed_copy) {
  verdict_expect(placed("renamed", "libembedded-python.so", 0, 0), PYHOST_OK, "taken", matrix_debug());
}

/* The issue this test came from: pyenv's ordinary 3.12 library named
 * libpython3.12t.so.1.0 was "usable" to --check and free-threaded to pyhost_init.  Its
 * version text and exports are a GIL build's: it is one. */
TEST_CASE(t_name_on_a_gil_build) {
  char name[64];
  snprintf(name, sizeof name, "libpython%st.so.1.0", check_version);
  verdict_expect(placed("tname", name, 0, 0), PYHOST_OK, "taken", matrix_debug());
}

/* A d in the name does not make a release build a debug one (nor its absence a debug
 * build a release one). */
TEST_CASE(d_name) {
  char name[64];
  snprintf(name, sizeof name, "libpython%sd.so.1.0", check_version);
  verdict_expect(placed("dname", name, 0, 0), PYHOST_OK, "taken", matrix_debug());
}

/* Cut in half, as an interrupted copy leaves it. */
TEST_CASE(truncated) {
  long size = file_size(check_lib);
  CHECK(size > 0);
  verdict_expect(placed("cut", "libpython-cut.so", (size_t)size / 2, 0), PYHOST_DAMAGED, "damaged", -1);
}

/* The same bytes, marked as built for another machine (e_machine: x86_64 <-> aarch64). */
TEST_CASE(wrong_architecture) {
  const char *lib = placed("arch", "libpython-arch.so", 0, 0);
  FILE *f = fopen(lib, "r+b");
  unsigned char m[2];
  CHECK(f && fseek(f, 18, SEEK_SET) == 0 && fread(m, 1, 2, f) == 2);
  if (!f) return;
  m[0] = m[0] == 62 ? 183 : 62;
  m[1] = 0;
  CHECK(fseek(f, 18, SEEK_SET) == 0 && fwrite(m, 1, 2, f) == 2);
  fclose(f);
  verdict_expect(lib, PYHOST_NOLIB, "wrong-architecture", -1);
}

/* Alone in a folder: no standard library near it. */
TEST_CASE(no_home) {
  verdict_expect(placed("alone", "libpython-alone.so", 0, 1), PYHOST_NOHOME, "no-home", matrix_debug());
}
