/* death.h: a death test for the tests of pyhost's assertions: runs fn in a forked
 * child and requires the child to abort (SIGABRT) with every fragment in its stderr
 * (caught through a pipe), or, when the library was built without asserts
 * (expect_abort 0), to return normally.  POSIX only: the callers are skipped
 * elsewhere. */
#ifndef PYHOST_DEATH_H
#define PYHOST_DEATH_H

#include "check.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* PYHOST_TEST_ASSERTS: CMake's PYHOST_ASSERTS for the library these tests link (set by
 * tests/CMakeLists.txt), so a build whose asserts silently went away fails here. */
#ifndef PYHOST_TEST_ASSERTS
#  error "PYHOST_TEST_ASSERTS must say whether the library was built with PYHOST_ASSERTS"
#endif

static inline void death_expect(void (*fn)(void), const char *frag1, const char *frag2) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    fn();
    _exit(0);
  }
  close(fds[1]);
  char err[8192];
  size_t len = 0;
  ssize_t n;
  while ((n = read(fds[0], err + len, sizeof err - 1 - len)) > 0) len += (size_t)n;
  err[len] = '\0';
  close(fds[0]);
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  if (PYHOST_TEST_ASSERTS) {
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
      fprintf(stderr, "the child did not abort (status %d); its stderr:\n%s\n", st, err);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    if (!strstr(err, frag1) || (frag2 && !strstr(err, frag2)))
      fprintf(stderr, "the child's stderr lacks \"%s\"/\"%s\":\n%s\n", frag1,
              frag2 ? frag2 : "", err);
    CHECK(strstr(err, frag1) != NULL);
    CHECK(!frag2 || strstr(err, frag2) != NULL);
  } else {
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fprintf(stderr, "the child: %d\n%s\n", st, err);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
}

#endif
