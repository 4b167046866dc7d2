/* check.h: the tests' tiny harness.  Each test binary holds named cases; CTest runs
 * one case per process (`binary CASE [LIB [VERSION]]`), because CPython starts only
 * once per process.  Exit 0 pass, 1 fail, 77 skip. */
#ifndef PYHOST_CHECK_H
#define PYHOST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int check_failures;
extern const char *check_lib;      /* argv[2]: the Python library under test */
extern const char *check_version;  /* argv[3]: its "3.X" */
extern const char *check_arg4;     /* argv[4]: a case-specific extra */

void check_register(const char *name, void (*fn)(void));

/* Starts the Python under test (check_lib) with cfg (own; NULL: defaults), or exits 1
 * with pyhost's message: a case that cannot start Python has nothing to test. */
struct pyhost;
struct pyhost_config;
struct pyhost *check_start(struct pyhost_config *cfg);
/* pyhost_init with library lib must fail with status and a message holding every
 * fragment (NULL ones are skipped); the message is copied into msg. */
void check_refused(const char *lib, int status, const char *f1, const char *f2, const char *f3,
                   char *msg, size_t cap);
/* The minor version of the Python under test (check_version "3.11" -> 11). */
unsigned check_minor(void);
/* Runs code in h's __main__ (pyhost_exec), which must succeed; and evaluates expr,
 * whose repr must be want (each failure printed with pyhost's message). */
void check_run(struct pyhost *h, const char *code);
void check_expect_py(struct pyhost *h, const char *expr, const char *want);
/* Imports numpy as np in h's __main__: 1 when it did, 0 where no numpy is installed for
 * the Python under test; exits 1 (a failure, never a skip) when the matrix entry has
 * one (PYHOST_TEST_NUMPY=1, tests/CMakeLists.txt) and it does not import. */
int check_numpy(struct pyhost *h);

#define TEST_CASE(name)                                                   \
  static void name(void);                                                 \
  __attribute__((constructor)) static void register_##name(void) {        \
    check_register(#name, name);                                          \
  }                                                                       \
  static void name(void)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      check_failures++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_RC(expr, want)                                               \
  do {                                                                     \
    int rc_ = (expr), want_ = (want);                                      \
    if (rc_ != want_) {                                                    \
      fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, \
              __LINE__, #expr, rc_, pyhost_status_name(rc_), want_,         \
              pyhost_status_name(want_));                                  \
      check_failures++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                        \
  do {                                                                     \
    const char *h_ = (hay), *n_ = (needle);                                \
    if (!h_ || !strstr(h_, n_)) {                                          \
      fprintf(stderr, "%s:%d: expected \"%s\" in:\n%s\n", __FILE__, __LINE__, n_, \
              h_ ? h_ : "(null)");                                         \
      check_failures++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_STREQ(a, b)                                                  \
  do {                                                                     \
    const char *a_ = (a), *b_ = (b);                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                               \
      fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__,     \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                     \
      check_failures++;                                                    \
    }                                                                      \
  } while (0)

/* Leaves the case as skipped (CTest SKIP_RETURN_CODE 77) with a reason. */
#define SKIP(...)                                                          \
  do {                                                                     \
    fprintf(stderr, "skipped: " __VA_ARGS__);                              \
    fputc('\n', stderr);                                                   \
    exit(77);                                                              \
  } while (0)

#endif
