#define _POSIX_C_SOURCE 200809L
/* test_badinput.c: every kind of library that is not a usable Python 3 gets its own
 * status and a message naming the path and the reason, and the process goes on.
 * Arguments: CASE FIXTURE_DIR PY2_LIB PY_EXECUTABLE. */
#include "pyhost.h"
#include "check.h"

static char path[4096];

static const char *fixture(const char *name) {
  snprintf(path, sizeof path, "%s/%s", check_lib, name);
  return path;
}

/* Tries to init with lib; checks the status, that the message names the path and
 * every fragment, and that a second try gives the very same message. */
static void expect_refused(const char *lib, int status, const char *frag1, const char *frag2) {
  char first[8192], again[8192];
  check_refused(lib, status, lib, frag1, frag2, first, sizeof first);
  check_refused(lib, status, lib, frag1, frag2, again, sizeof again);
  CHECK_STREQ(again, first);
}

TEST_CASE(missing_path) {
  expect_refused(fixture("no-such-libpython3.11.so.1.0"), PYHOST_NOTFOUND, "no such file", NULL);
}

TEST_CASE(directory) {
  expect_refused(fixture("libpython3.99.so"), PYHOST_ISDIR, "is a directory", NULL);
}

TEST_CASE(text_file) {
  expect_refused(fixture("textfile.so"), PYHOST_NOLIB, "system loader says", "invalid ELF header");
}

TEST_CASE(empty_file) {
  expect_refused(fixture("empty.so"), PYHOST_NOLIB, "system loader says", "too short");
}

TEST_CASE(wrong_architecture) {
  /* A 64-bit library marked 32-bit (EI_CLASS = ELFCLASS32), as a library built for
   * another architecture looks to the loader; made at run time from a fixture. */
  FILE *in = fopen(fixture("libnotpython.so"), "rb");
  CHECK(in != NULL);
  if (!in) return;
  static unsigned char image[1 << 20];
  size_t n = fread(image, 1, sizeof image, in);
  fclose(in);
  CHECK(n > 64 && image[4] == 2);
  image[4] = 1;
  char out[4096];
  snprintf(out, sizeof out, "%s/libwrongclass.so", check_lib);
  FILE *f = fopen(out, "wb");
  CHECK(f && fwrite(image, 1, n, f) == n);
  if (f) fclose(f);
  expect_refused(out, PYHOST_NOLIB, "it is built for x86_64 (ELF32), not for this x86_64 (ELF64) process", NULL);
}

TEST_CASE(not_python) {
  expect_refused(fixture("libnotpython.so"), PYHOST_NOTPYTHON, "no Py_GetVersion", "not a CPython");
}

TEST_CASE(python_executable) {
  if (!check_arg4 || !check_arg4[0]) SKIP("no Python executable in the matrix");
  /* a Python interpreter where its library belongs: named as one, with its library */
  expect_refused(check_arg4, PYHOST_NOLIB, "it is a program (a position-independent executable), not a shared library",
                 "it is a Python interpreter, whose library is ");
}

TEST_CASE(python2) {
  if (!check_version || !check_version[0]) SKIP("no Python 2 library on this machine");
  expect_refused(check_version, PYHOST_PYTHON2, "is Python 2.7", "Python 3");
}

TEST_CASE(missing_symbols) {
  expect_refused(fixture("libfake_missing.so"), PYHOST_NOSYM, "symbols are missing for Python 3.11",
                 "Py_InitializeEx (stable ABI 3.2)"); /* early in the list: long lists are cut */
}

TEST_CASE(too_old) {
  expect_refused(fixture("libfake_old.so"), PYHOST_VERSION, "Python 3.5", "oldest this pyhost");
}

TEST_CASE(python4) {
  expect_refused(fixture("libfake_four.so"), PYHOST_VERSION, "Python 4.0", "embeds Python 3");
}

TEST_CASE(garbage_version) {
  expect_refused(fixture("libfake_garbage.so"), PYHOST_NOTPYTHON, "PyPy 7.3.15", NULL);
}

TEST_CASE(free_threaded_by_version_text) {
  expect_refused(fixture("libfake_ftversion.so"), PYHOST_FREETHREADED, "free-threaded", "3.13");
}

TEST_CASE(free_threaded_by_symbol) {
  expect_refused(fixture("libfake_ftsymbol.so"), PYHOST_FREETHREADED, "free-threaded", NULL);
}

/* A t in the file name is only a name: this library's version text and exports are a
 * GIL build's, so it is judged as one (and refused for what it lacks). */
TEST_CASE(t_name_on_a_gil_build) {
  expect_refused(fixture("ft/libpython3.13t.so"), PYHOST_NOSYM, "symbols are missing for Python 3.13", NULL);
}

TEST_CASE(trace_refs_build) {
  expect_refused(fixture("libfake_tracerefs.so"), PYHOST_BUILD, "Py_TRACE_REFS", "3.8");
}

TEST_CASE(empty_path) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "");
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "empty");
  pyhost_free(h);
  pyhost_config_free(c);
}

TEST_CASE(env_variable_is_named) {
  setenv("PYHOST_PYTHON_LIBRARY", fixture("no-such.so"), 1);
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "from PYHOST_PYTHON_LIBRARY");
  pyhost_free(h);
}
