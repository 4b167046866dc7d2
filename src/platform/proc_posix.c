/* proc_posix.c: proc.h on POSIX systems.
 *
 * One service thread per process does what must not depend on which host thread
 * asked: it forks the workers (Linux's parent-death signal fires when the *thread*
 * that forked ends, so a host thread that loads a plugin and then exits would take
 * the worker with it), pumps their stdout and stderr to the host, and reaps them
 * (through a pidfd where the kernel has them, else by polling waitpid).  Its state is
 * the caller's (struct pyhost__proc_service, made by pyhost__proc_service_new and kept
 * by the bridge); its thread stays parked until the process ends.  Host threads reach
 * it through a wake-up pipe and one monitor that guards every worker's state; a
 * worker's output is read and delivered under its own monitor, by the service thread
 * or by a host thread draining what a call left (pyhost__proc_drain).
 *
 * Every descriptor is made close-on-exec; a worker gets its two channel ends by
 * number on its command line and clears the flag on those two only.  Channels are
 * socketpairs, written with MSG_NOSIGNAL: a host never gets SIGPIPE from a dead
 * worker.  The worker runs in a process group of its own (a Ctrl-C at the terminal
 * is the host's to handle; pyhost_interrupt reaches the worker through the control
 * channel) with every signal disposition at its default and nothing blocked.
 *
 * A host started through an explicit dynamic loader (`ld.so --library-path DIR
 * host`, as the test matrix runs a Python built against a newer C library) starts its
 * workers through the same loader with the same options: the worker links what the
 * host links.
 */
#if defined(__linux__)
#  define _GNU_SOURCE
#else
#  define _POSIX_C_SOURCE 200809L
#  define _DARWIN_C_SOURCE
#endif
#include "proc.h"
#include "proc_tail.h"

#include "alloc.h"
#include "strbuf.h"
#include "sync.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sys/prctl.h>
#  include <sys/syscall.h>
#endif

extern char **environ;

/* ---- channels ---- */

struct pyhost__chan {
  int fd;
};

static struct pyhost__chan *chan_new(int fd) {
  struct pyhost__chan *c = pyhost__malloc(sizeof *c);
  if (c) c->fd = fd;
  return c;
}

int pyhost__chan_send(struct pyhost__chan *c, const void *p, size_t len) {
  const char *b = p;
  while (len) {
    ssize_t n = send(c->fd, b, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    b += n;
    len -= (size_t)n;
  }
  return 0;
}

long pyhost__chan_recv(struct pyhost__chan *c, void *p, size_t cap, int64_t deadline) {
  for (;;) {
    if (deadline != PYHOST__FOREVER) {
      struct pollfd pf = {c->fd, POLLIN, 0};
      int r = poll(&pf, 1, (int)pyhost__ms_until(deadline, 0x7fffffff));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return PYHOST__CHAN_TIMEOUT;
    }
    ssize_t n = read(c->fd, p, cap);
    if (n >= 0) return (long)n;
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) return 0; /* the peer is gone: the end of the stream */
    return -1;
  }
}

void pyhost__chan_close(struct pyhost__chan *c) {
  if (!c) return;
  close(c->fd);
  pyhost__free(c);
}

/* ---- workers and the service thread ---- */

struct pyhost__proc {
  pid_t pid;
  int pidfd;                  /* -1 where the kernel has none */
  struct pyhost__chan *chan;  /* the host's end */
  int control;                /* the host's end of the control channel */
  int out[3];                 /* [1] stdout (when captured), [2] stderr: read ends or -1 */
  int eof[3];                 /* 1 once that stream ended (service monitor) */
  pyhost__proc_output_fn output;
  void *output_ctx;
  struct pyhost__monitor *deliver; /* reading and delivering output, and the tail */
  struct pyhost__tail tail;   /* the last bytes of stderr */
  struct pyhost__proc_service *svc; /* the service that watches it */
  /* under the service monitor */
  int reaped, killed, leaving, dropped;
  struct pyhost__proc_exit how;
  int64_t reaped_at;
  struct pyhost__proc *next;
};

/* A fork the service thread makes for pyhost__proc_start. */
struct spawn {
  char **argv;
  int keep[2];          /* the child's channel ends: close-on-exec cleared there */
  int in, out, err;     /* the child's stdin, stdout (-1: the host's) and stderr */
  uint64_t memory_limit;
  unsigned cpu_seconds;
  pid_t parent;
  /* the answer */
  int done;
  pid_t pid;
  int error;
  const char *what;
  struct spawn *next;
};

struct pyhost__proc_service {
  struct pyhost__monitor *m;    /* guards everything below and every worker's state */
  int wake[2];                  /* the service thread polls wake[0] */
  struct pyhost__proc *procs;   /* watched by the service thread */
  struct spawn *spawns;         /* asked for, not yet made */
  char **prefix;                /* the dynamic loader and its options, or NULL */
  int prefix_n;
  /* the service thread's poll set (here, not on its stack: a child forked from the
   * host has no such thread, and keeps them reachable all the same) */
  struct pollfd *pf;
  struct pyhost__proc **who;
  int *what;
  size_t cap;
};

/* fd moved to 3 or above (so that dup2 onto 0-2 in a child never clobbers it),
 * close-on-exec; -1 on failure (fd closed). */
static int high_fd(int fd) {
  if (fd < 0 || fd > 2) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return h;
}

static int pipe_cloexec(int fds[2]) {
#if defined(__linux__)
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
#else
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#endif
  fds[0] = high_fd(fds[0]);
  fds[1] = high_fd(fds[1]);
  return fds[0] < 0 || fds[1] < 0 ? -1 : 0;
}

static int socketpair_cloexec(int fds[2]) {
#if defined(SOCK_CLOEXEC)
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return -1;
#else
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#endif
#if defined(SO_NOSIGPIPE) /* macOS has no MSG_NOSIGNAL semantics on every call */
  int one = 1;
  setsockopt(fds[0], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
  setsockopt(fds[1], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
  fds[0] = high_fd(fds[0]);
  fds[1] = high_fd(fds[1]);
  return fds[0] < 0 || fds[1] < 0 ? -1 : 0;
}

static void set_nonblock(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

static void wake_service(struct pyhost__proc_service *svc) {
  char b = 1;
  ssize_t n;
  do n = write(svc->wake[1], &b, 1);
  while (n < 0 && errno == EINTR); /* full (EAGAIN): it is awake anyway */
}

/* ld.so's path and its options when this process was started through an explicit
 * dynamic loader (the program after them is the host's).  Linux only. */
static void find_prefix(struct pyhost__proc_service *svc) {
#if defined(__linux__)
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = '\0';
  const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  if (strncmp(base, "ld-", 3) != 0 && strncmp(base, "ld.so", 5) != 0) return;
  char *data = NULL;
  size_t len = 0;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  ssize_t got;
  while ((got = read(fd, buf, sizeof buf)) > 0) {
    char *grown = pyhost__realloc(data, len + (size_t)got + 1);
    if (!grown) break;
    data = grown;
    memcpy(data + len, buf, (size_t)got);
    len += (size_t)got;
  }
  close(fd);
  if (!data) return;
  data[len] = '\0';
  static const char *const with_value[] = {"--library-path", "--preload", "--audit",
                                           "--argv0", "--inhibit-rpath",
                                           "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask"};
  char **v = pyhost__calloc(64, sizeof *v);
  int k = 0;
  if (v) v[k++] = pyhost__strdup(exe);
  size_t at = strlen(data) + 1; /* past argv[0] */
  while (v && at < len && k < 62) {
    const char *a = data + at;
    if (strncmp(a, "--", 2) != 0) break; /* the program */
    int takes = 0;
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
      takes |= strcmp(a, with_value[i]) == 0;
    at += strlen(a) + 1;
    const char *value = takes && at < len ? data + at : NULL;
    if (takes) at += value ? strlen(value) + 1 : 0;
    if (strcmp(a, "--argv0") == 0) continue; /* the worker keeps its own name */
    v[k++] = pyhost__strdup(a);
    if (value) v[k++] = pyhost__strdup(value);
  }
  pyhost__free(data);
  if (v) {
    svc->prefix = v;
    svc->prefix_n = k;
  }
#endif
}

static void service_main(void *arg);

int pyhost__proc_service_new(struct pyhost__proc_service **out, char *err, size_t cap) {
  struct pyhost__proc_service *svc = pyhost__calloc(1, sizeof *svc);
  *out = NULL;
  if (svc) {
    svc->wake[0] = svc->wake[1] = -1;
    svc->m = pyhost__monitor_new();
  }
  if (!svc || !svc->m) {
    pyhost__fmt(err, cap, "cannot start pyhost's process service: out of memory");
  } else if (pipe_cloexec(svc->wake) != 0) {
    pyhost__fmt(err, cap, "cannot start pyhost's process service: pipe: %s", strerror(errno));
  } else {
    set_nonblock(svc->wake[0]);
    set_nonblock(svc->wake[1]);
    find_prefix(svc);
    if (pyhost__thread_start(service_main, svc, 1, NULL) == 0) {
      *out = svc;
      return 0;
    }
    pyhost__fmt(err, cap, "cannot start pyhost's process service thread: %s", strerror(errno));
  }
  if (svc) {
    close_fd(&svc->wake[0]);
    close_fd(&svc->wake[1]);
    pyhost__monitor_free(svc->m);
    pyhost__free(svc);
  }
  return -1;
}

int pyhost__proc_deathsig = 1;

/* The child between fork and exec: async-signal-safe calls only. */
static void child(const struct spawn *s, int status_fd) {
  setpgid(0, 0);
#if defined(__linux__)
  if (pyhost__proc_deathsig) prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != s->parent) _exit(127); /* the host ended before the line above */
#endif
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++) sigaction(sig, &dfl, NULL); /* some refuse: fine */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (s->memory_limit) {
    struct rlimit rl = {(rlim_t)s->memory_limit, (rlim_t)s->memory_limit};
    setrlimit(RLIMIT_AS, &rl);
  }
  if (s->cpu_seconds) {
    /* SIGXCPU at the soft limit ends it (the default action); the hard limit one
     * second later, with SIGKILL, ends a worker that ignores SIGXCPU */
    struct rlimit rl = {(rlim_t)s->cpu_seconds, (rlim_t)s->cpu_seconds + 1};
    setrlimit(RLIMIT_CPU, &rl);
  }
  if (dup2(s->in, 0) < 0 || (s->out >= 0 && dup2(s->out, 1) < 0) || dup2(s->err, 2) < 0) {
    int e = errno;
    (void)!write(status_fd, &e, sizeof e);
    _exit(127);
  }
  /* whatever else this process has open (descriptors its own parent left it without
   * close-on-exec) stays behind: only the two channel ends go to the worker */
#if defined(__linux__) && defined(SYS_close_range)
  if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) != 0)
#endif
  {
    struct rlimit nofile;
    int max = getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 65536
                  ? (int)nofile.rlim_cur : 65536;
    for (int fd = 3; fd < max; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  fcntl(s->keep[0], F_SETFD, 0);
  fcntl(s->keep[1], F_SETFD, 0);
  execve(s->argv[0], s->argv, environ);
  int e = errno;
  (void)!write(status_fd, &e, sizeof e);
  _exit(127);
}

/* On the service thread, outside the monitor (a fork must not copy it held). */
static void make_fork(struct spawn *s) {
  int st[2];
  if (pipe_cloexec(st) != 0) {
    s->error = errno;
    s->what = "pipe";
    return;
  }
  s->parent = getpid();
  pid_t pid = fork();
  if (pid == 0) child(s, st[1]);
  close(st[1]);
  if (pid < 0) {
    s->error = errno;
    s->what = "fork";
    close(st[0]);
    return;
  }
  int e = 0;
  ssize_t n;
  do n = read(st[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(st[0]);
  if (n == (ssize_t)sizeof e) { /* exec failed: the child is gone already */
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    s->error = e;
    s->what = "exec";
    return;
  }
  s->pid = pid;
}

static void deliver(struct pyhost__proc *p, int stream, const char *data, size_t n) {
  if (stream == 2) pyhost__tail_put(&p->tail, data, n);
  if (p->output) {
    p->output(p->output_ctx, stream, data, n);
    return;
  }
  while (n) { /* the host's own stream */
    ssize_t w = write(stream, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    data += w;
    n -= (size_t)w;
  }
}

/* Reads and delivers what stream has now (under p->deliver).  1 when it ended. */
static int pump(struct pyhost__proc *p, int stream) {
  char buf[16384];
  for (;;) {
    if (p->out[stream] < 0) return 1;
    ssize_t n = read(p->out[stream], buf, sizeof buf);
    if (n > 0) {
      deliver(p, stream, buf, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return 1; /* the end, or an error that ends it */
  }
}

static void mark_eof(struct pyhost__proc *p, int stream) {
  pyhost__monitor_enter(p->svc->m);
  if (!p->eof[stream]) {
    p->eof[stream] = 1;
    pyhost__monitor_notify(p->svc->m);
  }
  pyhost__monitor_leave(p->svc->m);
}

/* Under the service's monitor: reaps p when it has ended. */
static void try_reap(struct pyhost__proc *p) {
  if (p->reaped) return;
  int status;
  struct rusage ru;
  pid_t r;
  do r = wait4(p->pid, &status, WNOHANG, &ru);
  while (r < 0 && errno == EINTR);
  if (r != p->pid) {
    if (r < 0 && errno == ECHILD) { /* reaped by someone else (a host's waitpid(-1)) */
      p->how.signaled = 0;
      p->how.code = -1;
      p->how.cpu_seconds = -1;
    } else {
      return;
    }
  } else {
    p->how.signaled = WIFSIGNALED(status);
    p->how.code = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
    p->how.cpu_seconds = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                         (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  }
  p->how.killed = p->killed;
  p->reaped = 1;
  p->reaped_at = pyhost__clock_ms();
  close_fd(&p->pidfd);
  pyhost__monitor_notify(p->svc->m);
}

static void service_main(void *arg) {
  struct pyhost__proc_service *svc = arg;
  for (;;) {
    pyhost__monitor_enter(svc->m);
    /* forks asked for */
    while (svc->spawns) {
      struct spawn *s = svc->spawns;
      svc->spawns = s->next;
      pyhost__monitor_leave(svc->m);
      make_fork(s);
      pyhost__monitor_enter(svc->m);
      s->done = 1;
      pyhost__monitor_notify(svc->m);
    }
    /* workers being freed: dropped here, between two polls, so that no read of this
     * thread uses their descriptors once their owner closes them */
    size_t n = 1, nprocs = 0;
    int unreaped_without_pidfd = 0;
    for (struct pyhost__proc **l = &svc->procs; *l;) {
      struct pyhost__proc *p = *l;
      if (p->leaving) {
        *l = p->next;
        p->dropped = 1;
        pyhost__monitor_notify(svc->m);
        continue;
      }
      try_reap(p);
      /* without a pidfd, look for its end once its stderr ended (it exited, or closed
       * stderr: then this looks every 50 ms until it ends) */
      if (!p->reaped && p->pidfd < 0 && p->eof[2]) unreaped_without_pidfd = 1;
      nprocs++;
      l = &p->next;
    }
    size_t need = 1 + 3 * nprocs;
    if (need > svc->cap) {
      size_t c = need * 2;
      struct pollfd *npf = pyhost__realloc(svc->pf, c * sizeof *svc->pf);
      if (npf) svc->pf = npf;
      struct pyhost__proc **nwho = pyhost__realloc(svc->who, c * sizeof *svc->who);
      if (nwho) svc->who = nwho;
      int *nwhat = pyhost__realloc(svc->what, c * sizeof *svc->what);
      if (nwhat) svc->what = nwhat;
      if (npf && nwho && nwhat) svc->cap = c;
    }
    struct pollfd *pf = svc->pf;
    struct pyhost__proc **who = svc->who;
    int *what = svc->what;
    size_t cap = svc->cap;
    pf[0].fd = svc->wake[0];
    pf[0].events = POLLIN;
    for (struct pyhost__proc *p = svc->procs; p && n + 3 <= cap; p = p->next) {
      for (int s = 1; s <= 2; s++)
        if (p->out[s] >= 0 && !p->eof[s]) {
          pf[n].fd = p->out[s];
          pf[n].events = POLLIN;
          who[n] = p;
          what[n++] = s;
        }
      if (!p->reaped && p->pidfd >= 0) {
        pf[n].fd = p->pidfd;
        pf[n].events = POLLIN;
        who[n] = p;
        what[n++] = 0;
      }
    }
    pyhost__monitor_leave(svc->m);
    int r = poll(pf, (nfds_t)n, unreaped_without_pidfd ? 50 : -1);
    if (r < 0) continue;
    if (pf[0].revents) {
      char b[64];
      while (read(svc->wake[0], b, sizeof b) > 0) {
      }
    }
    for (size_t i = 1; i < n; i++) {
      if (!pf[i].revents) continue;
      struct pyhost__proc *p = who[i];
      if (what[i] == 0) { /* the pidfd: it ended */
        pyhost__monitor_enter(svc->m);
        try_reap(p);
        pyhost__monitor_leave(svc->m);
        continue;
      }
      pyhost__monitor_enter(p->deliver);
      int ended = pump(p, what[i]);
      pyhost__monitor_leave(p->deliver);
      if (ended) mark_eof(p, what[i]);
    }
  }
}

/* The worker's argv: the loader prefix, the program, the channel ends, the extras. */
static char **worker_argv(const struct pyhost__proc_spec *spec, int chan, int control) {
  const struct pyhost__proc_service *svc = spec->service;
  size_t extra = 0;
  while (spec->args && spec->args[extra]) extra++;
  size_t n = (size_t)svc->prefix_n + 4 + extra;
  char **v = pyhost__calloc(n + 1, sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  for (int i = 0; i < svc->prefix_n; i++) v[k++] = pyhost__strdup(svc->prefix[i]);
  char a[32], b[32];
  pyhost__fmt(a, sizeof a, "%d", chan);
  pyhost__fmt(b, sizeof b, "%d", control);
  v[k++] = pyhost__strdup(spec->program);
  v[k++] = pyhost__strdup("--pyhost-worker");
  v[k++] = pyhost__strdup(a);
  v[k++] = pyhost__strdup(b);
  for (size_t i = 0; i < extra; i++) v[k++] = pyhost__strdup(spec->args[i]);
  for (size_t i = 0; i < k; i++)
    if (!v[i]) {
      for (size_t j = 0; j < k; j++) pyhost__free(v[j]);
      pyhost__free(v);
      return NULL;
    }
  return v;
}

static void free_argv(char **v) {
  for (size_t i = 0; v && v[i]; i++) pyhost__free(v[i]);
  pyhost__free(v);
}

int pyhost__proc_start(const struct pyhost__proc_spec *spec, struct pyhost__proc **out,
                       char *err, size_t cap) {
  *out = NULL;
  if (access(spec->program, X_OK) != 0) {
    pyhost__fmt(err, cap, "cannot run the worker program %s: %s", spec->program, strerror(errno));
    return -1;
  }
  struct pyhost__proc_service *svc = spec->service;
  struct pyhost__proc *p = pyhost__calloc(1, sizeof *p);
  int ch[2] = {-1, -1}, ctl[2] = {-1, -1}, so[2] = {-1, -1}, se[2] = {-1, -1}, in = -1;
  char **argv = NULL;
  const char *what = "out of memory";
  int e = ENOMEM;
  if (!p || !(p->deliver = pyhost__monitor_new())) goto fail;
  p->svc = svc;
  p->pid = -1;
  p->pidfd = p->control = p->out[0] = p->out[1] = p->out[2] = -1;
  what = "socketpair";
  if (socketpair_cloexec(ch) != 0 || socketpair_cloexec(ctl) != 0) goto fail_errno;
  what = "pipe";
  if ((spec->capture_stdout && pipe_cloexec(so) != 0) || pipe_cloexec(se) != 0) goto fail_errno;
  what = "/dev/null";
  if ((in = high_fd(open("/dev/null", O_RDONLY | O_CLOEXEC))) < 0) goto fail_errno;
  what = "out of memory";
  if (!(argv = worker_argv(spec, ch[1], ctl[1]))) goto fail;

  struct spawn s;
  memset(&s, 0, sizeof s);
  s.argv = argv;
  s.keep[0] = ch[1];
  s.keep[1] = ctl[1];
  s.in = in;
  s.out = so[1];
  s.err = se[1];
  s.memory_limit = spec->memory_limit;
  s.cpu_seconds = spec->cpu_seconds;
  pyhost__monitor_enter(svc->m);
  s.next = svc->spawns;
  svc->spawns = &s;
  wake_service(svc);
  while (!s.done) pyhost__monitor_wait(svc->m, PYHOST__FOREVER);
  pyhost__monitor_leave(svc->m);
  free_argv(argv);
  argv = NULL;
  close_fd(&ch[1]);
  close_fd(&ctl[1]);
  close_fd(&so[1]);
  close_fd(&se[1]);
  close_fd(&in);
  if (s.error) {
    e = s.error;
    what = s.what;
    goto fail;
  }
  p->pid = s.pid;
  if (!(p->chan = chan_new(ch[0]))) {
    e = ENOMEM;
    what = "out of memory";
    pyhost__proc_free(p); /* kills and reaps the worker */
    p = NULL;
    goto fail;
  }
  ch[0] = -1;
  p->control = ctl[0];
  set_nonblock(p->control);
  p->out[1] = so[0];
  p->out[2] = se[0];
  if (p->out[1] >= 0) set_nonblock(p->out[1]);
  set_nonblock(p->out[2]);
  p->eof[1] = p->out[1] < 0;
  p->output = spec->output;
  p->output_ctx = spec->output_ctx;
#if defined(__linux__) && defined(SYS_pidfd_open)
  p->pidfd = (int)syscall(SYS_pidfd_open, s.pid, 0);
  if (p->pidfd >= 0) fcntl(p->pidfd, F_SETFD, FD_CLOEXEC);
#endif
  pyhost__monitor_enter(svc->m);
  p->next = svc->procs;
  svc->procs = p;
  wake_service(svc);
  pyhost__monitor_leave(svc->m);
  *out = p;
  return 0;

fail_errno:
  e = errno; /* the call that failed set it */
fail:
  if (strcmp(what, "exec") == 0)
    pyhost__fmt(err, cap, "cannot run the worker program %s: %s", spec->program, strerror(e));
  else if (strcmp(what, "out of memory") == 0)
    pyhost__fmt(err, cap, "cannot start the worker program %s: out of memory", spec->program);
  else
    pyhost__fmt(err, cap, "cannot start the worker program %s: %s: %s", spec->program, what,
                strerror(e));
  free_argv(argv);
  close_fd(&ch[0]);
  close_fd(&ch[1]);
  close_fd(&ctl[0]);
  close_fd(&ctl[1]);
  close_fd(&so[0]);
  close_fd(&so[1]);
  close_fd(&se[0]);
  close_fd(&se[1]);
  close_fd(&in);
  if (p) {
    pyhost__monitor_free(p->deliver);
    pyhost__free(p);
  }
  return -1;
}

struct pyhost__chan *pyhost__proc_chan(struct pyhost__proc *p) {
  return p->chan;
}

int pyhost__proc_control(struct pyhost__proc *p, const void *msg, size_t len) {
  ssize_t n;
  do n = send(p->control, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)len ? 0 : -1;
}

void pyhost__proc_kill(struct pyhost__proc *p) {
  pyhost__monitor_enter(p->svc->m);
  if (!p->reaped) { /* not reaped: the pid is still this worker's */
    p->killed = 1;
    kill(p->pid, SIGKILL);
  }
  pyhost__monitor_leave(p->svc->m);
}

int pyhost__proc_wait(struct pyhost__proc *p, int64_t deadline, struct pyhost__proc_exit *how) {
  pyhost__monitor_enter(p->svc->m);
  for (;;) {
    try_reap(p); /* also when the service thread is between polls */
    if (p->reaped) {
      /* its output, unless descendants keep the pipes open past a short while */
      int64_t enough = p->reaped_at + 500;
      if ((p->eof[1] && p->eof[2]) || pyhost__clock_ms() >= enough) break;
      int64_t until = deadline != PYHOST__FOREVER && deadline < enough ? deadline : enough;
      if (pyhost__monitor_wait(p->svc->m, until) && deadline != PYHOST__FOREVER &&
          pyhost__clock_ms() >= deadline)
        break;
      continue;
    }
    int64_t poll_at = pyhost__clock_ms() + 50; /* no pidfd: look again */
    int64_t until = deadline != PYHOST__FOREVER && deadline < poll_at ? deadline : poll_at;
    pyhost__monitor_wait(p->svc->m, p->pidfd >= 0 ? deadline : until);
    if (deadline != PYHOST__FOREVER && pyhost__clock_ms() >= deadline && !p->reaped) {
      pyhost__monitor_leave(p->svc->m);
      return 1;
    }
  }
  *how = p->how;
  pyhost__monitor_leave(p->svc->m);
  return 0;
}

void pyhost__proc_describe(const struct pyhost__proc_exit *how, char *out, size_t cap) {
  static const struct {
    int sig;
    const char *name;
  } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"},
               {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},
               {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}, {SIGINT, "SIGINT"},
               {SIGPIPE, "SIGPIPE"}, {SIGTRAP, "SIGTRAP"}, {SIGHUP, "SIGHUP"},
               {SIGQUIT, "SIGQUIT"}, {SIGSYS, "SIGSYS"},   {SIGXFSZ, "SIGXFSZ"}};
  if (!how->signaled) {
    if (how->code < 0) pyhost__fmt(out, cap, "ended (its exit status was taken by another waitpid)");
    else pyhost__fmt(out, cap, "exited with code %d", how->code);
    return;
  }
  const char *name = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].sig == how->code) name = names[i].name;
  if (name[0]) pyhost__fmt(out, cap, "killed by signal %d (%s)", how->code, name);
  else pyhost__fmt(out, cap, "killed by signal %d", how->code);
}

int pyhost__proc_killed_from_outside(const struct pyhost__proc_exit *how) {
  return how->signaled && how->code == SIGKILL && !how->killed;
}

int pyhost__proc_cpu_limit_hit(const struct pyhost__proc_exit *how, unsigned cpu_seconds) {
  if (!cpu_seconds || !how->signaled) return 0;
  if (how->code == SIGXCPU) return 1;
  return how->code == SIGKILL && !how->killed && how->cpu_seconds >= (double)cpu_seconds - 0.05;
}

void pyhost__proc_drain(struct pyhost__proc *p) {
  for (int s = 1; s <= 2; s++) {
    pyhost__monitor_enter(p->deliver);
    int ended = pump(p, s);
    pyhost__monitor_leave(p->deliver);
    if (ended && p->out[s] >= 0) mark_eof(p, s);
  }
}

void pyhost__proc_stderr_tail(struct pyhost__proc *p, char *out, size_t cap) {
  if (!cap) return;
  pyhost__monitor_enter(p->deliver);
  pyhost__tail_get(&p->tail, out, cap);
  pyhost__monitor_leave(p->deliver);
}

long pyhost__proc_id(const struct pyhost__proc *p) {
  return (long)p->pid;
}

long pyhost__proc_self(void) {
  return (long)getpid();
}

void pyhost__proc_free(struct pyhost__proc *p) {
  if (!p) return;
  if (p->pid > 0) {
    struct pyhost__proc_exit how;
    pyhost__proc_kill(p);
    pyhost__proc_wait(p, PYHOST__FOREVER, &how);
    pyhost__monitor_enter(p->svc->m);
    int listed = 0;
    for (struct pyhost__proc *q = p->svc->procs; q; q = q->next) listed |= q == p;
    if (listed) {
      p->leaving = 1;
      wake_service(p->svc);
      while (!p->dropped) pyhost__monitor_wait(p->svc->m, PYHOST__FOREVER);
    }
    pyhost__monitor_leave(p->svc->m);
    pyhost__proc_drain(p); /* what is left */
  }
  pyhost__chan_close(p->chan);
  close_fd(&p->control);
  close_fd(&p->out[1]);
  close_fd(&p->out[2]);
  close_fd(&p->pidfd);
  pyhost__monitor_free(p->deliver);
  pyhost__free(p);
}

void pyhost__proc_forget(struct pyhost__proc *p) {
  if (!p) return;
  pyhost__chan_close(p->chan);
  close_fd(&p->control);
  close_fd(&p->out[1]);
  close_fd(&p->out[2]);
  close_fd(&p->pidfd);
  pyhost__monitor_free(p->deliver); /* no thread of this process holds it */
  pyhost__free(p);
}

/* ---- the worker's side ---- */

static int fd_arg(const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < 3 || v > 1 << 20 || fcntl((int)v, F_GETFD) < 0) return -1;
  return (int)v;
}

int pyhost__proc_child_open(int argc, char **argv, struct pyhost__chan **chan,
                            struct pyhost__chan **control, char *err, size_t cap) {
  int a, b;
  if (argc < 4 || strcmp(argv[1], "--pyhost-worker") != 0 || (a = fd_arg(argv[2])) < 0 ||
      (b = fd_arg(argv[3])) < 0) {
    pyhost__fmt(err, cap,
                "this is pyhost's worker program: pyhost starts it for plugins loaded with "
                "PYHOST_ISOLATION_PROCESS (it is not meant to be run by hand)");
    return -1;
  }
  /* what the plugin starts must not hold them */
  fcntl(a, F_SETFD, FD_CLOEXEC);
  fcntl(b, F_SETFD, FD_CLOEXEC);
  *chan = chan_new(a);
  *control = chan_new(b);
  if (!*chan || !*control) {
    pyhost__fmt(err, cap, "out of memory");
    return -1;
  }
  return 0;
}

/* The signal that wakes the main thread: its handler runs the worker's on_wake there,
 * and without SA_RESTART the blocking call returns EINTR. */
#if defined(SIGRTMIN)
#  define WAKE_SIGNAL (SIGRTMIN + 4)
#else
#  define WAKE_SIGNAL SIGUSR2
#endif

struct pyhost__proc_waker {
  pthread_t main_thread;
};

struct pyhost__proc_waker *pyhost__proc_child_setup(void (*on_wake)(int)) {
  struct pyhost__proc_waker *w = pyhost__malloc(sizeof *w);
  if (!w) return NULL;
  w->main_thread = pthread_self();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_wake;
  sigemptyset(&sa.sa_mask);
  sigaction(WAKE_SIGNAL, &sa, NULL);
  return w;
}

void pyhost__proc_child_wake_main(struct pyhost__proc_waker *w) {
  pthread_kill(w->main_thread, WAKE_SIGNAL);
}
