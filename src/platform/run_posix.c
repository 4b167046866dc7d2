/* run_posix.c: run.h on POSIX systems: fork and exec with one pipe for stdout and
 * stderr.  The child closes every descriptor but its three, and on Linux dies with
 * the thread that waits for it (the parent-death signal), so an installer never
 * outlives the host that started it. */
#if defined(__linux__)
#  define _GNU_SOURCE
#else
#  define _POSIX_C_SOURCE 200809L
#  define _DARWIN_C_SOURCE
#endif
#include "run.h"
#include "run_lines.h"

#include "alloc.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/prctl.h>
#  include <sys/syscall.h>
#endif

extern char **environ;

/* The name part of "NAME=VALUE" matches entry's. */
static int same_name(const char *a, const char *b) {
  size_t n = strcspn(a, "=");
  return strncmp(a, b, n) == 0 && b[n] == '=';
}

/* The host's environment with env's entries set over it: own result (the array; the
 * strings are borrowed), or NULL out of memory. */
static char **merged_env(const char *const *env) {
  size_t n = 0, k = 0, add = 0;
  while (environ && environ[n]) n++;
  while (env && env[add]) add++;
  char **out = pyhost__calloc(n + add + 1, sizeof *out);
  if (!out) return NULL;
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; j < add; j++) replaced |= same_name(env[j], environ[i]);
    if (!replaced) out[k++] = environ[i];
  }
  for (size_t j = 0; j < add; j++) out[k++] = (char *)env[j];
  return out;
}

/* Between fork and exec: async-signal-safe calls only. */
static void child(const char *const *argv, char **envp, int out, pid_t parent) {
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
#else
  (void)parent;
#endif
  int null = open("/dev/null", O_RDONLY);
  if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(127);
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
#if defined(__linux__) && defined(SYS_close_range)
  if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
    for (int fd = 3; fd < max; fd++) close(fd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execve(argv[0], (char *const *)argv, envp);
  _exit(127);
}

int pyhost__run(const char *const *argv, const char *const *env, pyhost__run_line_fn fn,
                void *ctx, int *code, char *err, size_t cap) {
  *code = -1;
  if (access(argv[0], X_OK) != 0) {
    pyhost__fmt(err, cap, "cannot run %s: %s", argv[0], strerror(errno));
    return -1;
  }
  char **envp = merged_env(env);
  int fds[2];
  if (!envp) {
    pyhost__fmt(err, cap, "cannot run %s: out of memory", argv[0]);
    return -1;
  }
  if (pipe(fds) != 0) {
    pyhost__fmt(err, cap, "cannot run %s: pipe: %s", argv[0], strerror(errno));
    pyhost__free(envp);
    return -1;
  }
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) child(argv, envp, fds[1], parent);
  int fork_errno = errno;
  close(fds[1]);
  pyhost__free(envp);
  if (pid < 0) {
    close(fds[0]);
    pyhost__fmt(err, cap, "cannot run %s: fork: %s", argv[0], strerror(fork_errno));
    return -1;
  }
  struct pyhost__run_lines lines;
  pyhost__run_lines_init(&lines, fn, ctx);
  for (;;) {
    char buf[4096];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) pyhost__run_lines_feed(&lines, buf, (size_t)got);
    else if (got == 0 || errno != EINTR) break;
  }
  pyhost__run_lines_end(&lines);
  close(fds[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      pyhost__fmt(err, cap, "waiting for %s: %s", argv[0], strerror(errno));
      return -1;
    }
  }
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return 0;
}
