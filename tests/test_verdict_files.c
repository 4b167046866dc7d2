#define _GNU_SOURCE
/* test_verdict_files.c: odd files that are no usable Python 3, each judged by
 * pyhost_inspect_library, pyhost_discover and pyhost_init, which must agree
 * (verdict_judges.h): fakes that export Py_GetVersion and a marker symbol
 * (tests/fixtures/fakepython.c), Python 2, a Python executable, files that are no
 * library at all.  Arguments: CASE FIXTURE_DIR PY2_LIB PY_EXECUTABLE. */
#include "pyhost.h"
#include "check.h"
#include "verdict_judges.h"

#include <limits.h>
#include <sys/stat.h>

static const char *fixture(const char *name) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", check_lib, name);
  verdict_quiet_discovery(verdict_scratch());
  return path;
}

/* A copy of the file at src under another name in the scratch directory. */
static const char *renamed(const char *src, const char *as) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", verdict_scratch(), as);
  return verdict_copy(src, path, 0);
}

TEST_CASE(not_python) {
  verdict_expect(fixture("libnotpython.so"), PYHOST_NOTPYTHON, "not-python", -1);
}

TEST_CASE(not_python_named_as_python) {
  verdict_expect(renamed(fixture("libnotpython.so"), "libpython3.12.so.1.0"), PYHOST_NOTPYTHON, "not-python", -1);
}

TEST_CASE(garbage_version) {
  verdict_expect(fixture("libfake_garbage.so"), PYHOST_NOTPYTHON, "not-python", -1);
}

TEST_CASE(python2) {
  if (!check_version || !check_version[0]) SKIP("no Python 2 library on this machine");
  verdict_quiet_discovery(verdict_scratch());
  verdict_expect(check_version, PYHOST_PYTHON2, "python2", 0);
}

/* Python 2 under a Python 3 name: the library says what it is. */
TEST_CASE(python2_named_as_python3) {
  if (!check_version || !check_version[0]) SKIP("no Python 2 library on this machine");
  verdict_quiet_discovery(verdict_scratch());
  verdict_expect(renamed(check_version, "libpython3.12.so.1.0"), PYHOST_PYTHON2, "python2", 0);
}

TEST_CASE(python4) {
  verdict_expect(fixture("libfake_four.so"), PYHOST_VERSION, "out-of-range", 0);
}

TEST_CASE(too_old) {
  verdict_expect(fixture("libfake_old.so"), PYHOST_VERSION, "out-of-range", 0);
}

TEST_CASE(free_threaded_by_version_text) {
  verdict_expect(fixture("libfake_ftversion.so"), PYHOST_FREETHREADED, "free-threaded", 0);
}

TEST_CASE(free_threaded_by_export) {
  verdict_expect(fixture("libfake_ftsymbol.so"), PYHOST_FREETHREADED, "free-threaded", 0);
}

/* Free-threaded by its exports under a GIL build's name: still free-threaded. */
TEST_CASE(free_threaded_without_t_name) {
  verdict_expect(renamed(fixture("libfake_ftsymbol.so"), "libpython3.13.so.1.0"), PYHOST_FREETHREADED,
                 "free-threaded", 0);
}

/* A GIL build (by its version text and exports) named with the t flag: judged as the
 * GIL build it is, and refused only for the symbols the fake lacks. */
TEST_CASE(t_name_on_a_gil_build) {
  verdict_expect(fixture("ft/libpython3.13t.so"), PYHOST_NOSYM, "missing-symbols", 0);
}

/* _Py_PrintReferences: a Py_TRACE_REFS build's export (tests/CMakeLists.txt's fake). */
TEST_CASE(trace_refs) {
  verdict_expect(fixture("libfake_tracerefs.so"), PYHOST_BUILD, "trace-refs", 0);
}

/* _Py_NegativeRefcount: a debug build; named by the host, it is allowed, and then
 * refused for the symbols the fake lacks. */
TEST_CASE(debug_build) {
  verdict_expect(fixture("dbg/libpython3.12d.so"), PYHOST_NOSYM, "missing-symbols", 1);
}

TEST_CASE(debug_build_without_d_name) {
  verdict_expect(renamed(fixture("dbg/libpython3.12d.so"), "libpython3.12.so"), PYHOST_NOSYM,
                 "missing-symbols", 1);
}

TEST_CASE(missing_symbols) {
  verdict_expect(fixture("libfake_missing.so"), PYHOST_NOSYM, "missing-symbols", 0);
}

TEST_CASE(python_executable) {
  if (!check_arg4 || !check_arg4[0]) SKIP("no Python executable in the matrix");
  verdict_quiet_discovery(verdict_scratch());
  verdict_expect(check_arg4, PYHOST_NOLIB, "not-python", -1);
}

TEST_CASE(text_file) {
  verdict_expect(fixture("textfile.so"), PYHOST_NOLIB, "not-python", -1);
}

TEST_CASE(empty_file) {
  verdict_expect(fixture("empty.so"), PYHOST_NOLIB, "not-python", -1);
}

TEST_CASE(truncated_header) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/libcut-header.so", verdict_scratch());
  verdict_expect(verdict_copy(fixture("libnotpython.so"), path, 40), PYHOST_DAMAGED, "damaged", -1);
}

TEST_CASE(directory) {
  verdict_expect(fixture("libpython3.99.so"), PYHOST_ISDIR, "missing", -1);
}

TEST_CASE(missing_file) {
  verdict_expect(fixture("no-such-libpython3.11.so.1.0"), PYHOST_NOTFOUND, "missing", -1);
}

TEST_CASE(fifo) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/libpython3.11.so", verdict_scratch());
  CHECK(mkfifo(path, 0600) == 0);
  verdict_quiet_discovery(verdict_scratch());
  verdict_expect(path, PYHOST_NOLIB, "missing", -1);
}
