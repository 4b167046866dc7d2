/* bench_isolation.c: the isolation levels' rows of bench/run.py (issue 34).
 * `bench_isolation MODE N [LIB]`, printing `RESULT NAME VALUE` lines:
 *
 *   proc_call N LIB    (i2) hook f(a, b) ints -> int at the process level
 *                      (pyhost_plugin_callf "ii>i"): the median ns per call over 21
 *                      batches of N/21 calls; and the bytes each call moved each way
 *                      (the worker's own read and write counts, /proc/PID/io)
 *   shared_call N LIB  the same at the shared level, for reference
 *   interp_call N LIB  (i1) the same at the interpreter level (instructions per call
 *                      under callgrind, shared_call its baseline)
 *   pingpong N IN OUT  (i2's floor) the same exchange as raw bytes between two C
 *                      processes over a socketpair: IN bytes one way, OUT back; the
 *                      median ns per exchange over 21 batches
 *   proc_cycle N LIB   (i3) load + first call + unload at the process level, N times:
 *                      the median wall time of one cycle
 *   shared_cycle N LIB (i3) the same at the shared level
 *   interp_cycle N LIB (i3) the same at the interpreter level
 *   proc_rss N LIB     (i3) N plugins loaded at the process level: the RSS of one
 *                      worker process, and the host's own growth per plugin (KiB)
 *   shared_rss N LIB   (i3) N plugins at the shared level: the host's growth per plugin
 *   interp_rss N LIB   (i3) N plugins at the interpreter level: the host's growth per
 *                      plugin
 *   shared_deps N LIB  a plugin's dependencies found ready in the cache (issue 35): load
 *   proc_deps N LIB    + first call + unload of a plugin declaring pyhostdemo==1.0 with
 *                      PYHOST_DEPS_DECLARED, against the same cycle with dependencies
 *                      off (the environment on sys.path: pyhostdemo is importable from
 *                      it both ways), interleaved; the median of each and of their
 *                      difference.  The first load installs (untimed): run it with
 *                      PIP_NO_INDEX=1 PIP_FIND_LINKS=<tests/deps_wheelhouse.py's dir>
 */
#define _GNU_SOURCE
#include "pyhost.h"
#include "bench.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BATCHES 21

static pyhost *h;
static char dir[] = "/tmp/pyhost_bench_iso_XXXXXX";

static void check(int rc, const char *what) {
  if (rc != PYHOST_OK) bench_die(what, pyhost_errmsg(h));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

static void start(const char *lib) {
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, lib);
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  check(rc, "pyhost_init");
  if (!mkdtemp(dir)) bench_die("mkdtemp", NULL);
}

static void stop(void) {
  pyhost_free(h);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) bench_die(cmd, NULL);
}

/* >0: plugin_file's plugins declare pyhostdemo==1.0 and load declares their
 * dependencies; <0: the same files, loaded with dependencies off */
static int with_deps;

/* Plugin i's file: f(a, b) returns a + b. */
static const char *plugin_file(unsigned long i) {
  static char path[256];
  snprintf(path, sizeof path, "%s/p%lu.py", dir, i);
  FILE *f = fopen(path, "w");
  if (!f) bench_die(path, "cannot write");
  if (with_deps) fputs("# /// script\n# dependencies = ['pyhostdemo==1.0']\n# ///\nimport pyhostdemo\n", f);
  fputs("def f(a, b):\n    return a + b\n", f);
  fclose(f);
  return path;
}

/* The levels' names in the modes and results, by pyhost_isolation. */
static const char *const LEVEL[] = {"shared", "interp", "proc"};

static pyhost_plugin *load(int level, unsigned long i) {
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  pyhost_plugin_options_set_isolation(o, level);
  if (with_deps) pyhost_plugin_options_set_deps(o, with_deps > 0 ? PYHOST_DEPS_DECLARED : PYHOST_DEPS_OFF);
  pyhost_plugin *p = NULL;
  check(pyhost_plugin_load_with(h, plugin_file(i), o, &p), "pyhost_plugin_load_with");
  pyhost_plugin_options_free(o);
  return p;
}

static BENCH_NOINLINE void bench_loop(pyhost_plugin *p, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    int r = 0;
    check(pyhost_plugin_callf(h, p, "f", "ii>i", (int)i, 2, &r), "f(a, b)");
    if (r != (int)i + 2) bench_die("f(a, b)", "wrong result");
  }
}

/* rchar and wchar of process pid (the bytes its read and write calls moved). */
static void io_of(long pid, long long *in, long long *out) {
  char path[64], line[128];
  snprintf(path, sizeof path, "/proc/%ld/io", pid);
  FILE *f = fopen(path, "r");
  *in = *out = -1;
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "rchar: %lld", in);
    sscanf(line, "wchar: %lld", out);
  }
  fclose(f);
}

static void calls(int level, unsigned long n) {
  int process = level == PYHOST_ISOLATION_PROCESS;
  pyhost_plugin *p = load(level, 0);
  bench_loop(p, n / 10 + 1); /* warm */
  double t[BATCHES];
  unsigned long per = n / BATCHES ? n / BATCHES : 1;
  /* what a call moves: the worker reads the request, this process the answer (sends
   * are not in wchar) */
  long pid = pyhost_plugin_process_id(p);
  long long in0, in1, back0, back1, unused;
  io_of(pid, &in0, &unused);
  io_of((long)getpid(), &back0, &unused);
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now();
    bench_loop(p, per);
    t[b] = (bench_now() - t0) * 1e9 / (double)per;
  }
  io_of((long)getpid(), &back1, &unused);
  io_of(pid, &in1, &unused);
  printf("RESULT %s_call %.3f\n", LEVEL[level], median(t, BATCHES));
  if (process && in0 >= 0 && in1 >= 0 && back0 >= 0)
    printf("RESULT proc_call_bytes %lld %lld\n", (in1 - in0) / (long long)(per * BATCHES),
           (back1 - back0) / (long long)(per * BATCHES));
  pyhost_plugin_unload(p);
}

static void full(int fd, char *buf, size_t n, int reading) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = reading ? read(fd, buf + done, n - done) : write(fd, buf + done, n - done);
    if (k <= 0) bench_die("pingpong", "short read or write");
    done += (size_t)k;
  }
}

static BENCH_NOINLINE void pingpong_loop(int fd, char *buf, size_t in, size_t out, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    full(fd, buf, in, 0);
    full(fd, buf, out, 1);
  }
}

static void pingpong(unsigned long n, size_t in, size_t out) {
  int sv[2];
  char buf[4096];
  if (in > sizeof buf || out > sizeof buf || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    bench_die("pingpong", "set-up");
  memset(buf, 1, sizeof buf);
  unsigned long per = n / BATCHES ? n / BATCHES : 1;
  unsigned long total = per * BATCHES + n / 10 + 1;
  pid_t child = fork();
  if (child == 0) { /* the other process: read the request, answer */
    close(sv[0]);
    for (unsigned long i = 0; i < total; i++) {
      full(sv[1], buf, in, 1);
      full(sv[1], buf, out, 0);
    }
    _exit(0);
  }
  close(sv[1]);
  pingpong_loop(sv[0], buf, in, out, n / 10 + 1); /* warm */
  double t[BATCHES];
  for (int b = 0; b < BATCHES; b++) {
    double t0 = bench_now();
    pingpong_loop(sv[0], buf, in, out, per);
    t[b] = (bench_now() - t0) * 1e9 / (double)per;
  }
  waitpid(child, NULL, 0);
  printf("RESULT pingpong %.3f\n", median(t, BATCHES));
}

static void cycles(int level, unsigned long n) {
  double *t = calloc(n, sizeof *t);
  if (!t) bench_die("calloc", NULL);
  for (unsigned long i = 0; i < n; i++) {
    double t0 = bench_now();
    pyhost_plugin *p = load(level, i);
    int r = 0;
    check(pyhost_plugin_callf(h, p, "f", "ii>i", 1, 2, &r), "f(1, 2)");
    pyhost_plugin_unload(p);
    t[i] = (bench_now() - t0) * 1e9;
  }
  printf("RESULT %s_cycle %.3f\n", LEVEL[level], median(t, (int)n));
  free(t);
}

/* Load + call + unload with dependencies ready in the cache, and without. */
static void deps_cycles(int level, unsigned long n) {
  int process = level == PYHOST_ISOLATION_PROCESS;
  with_deps = 1;
  pyhost_plugin *first = load(level, 0); /* installs, or finds it ready */
  char env[4096];
  snprintf(env, sizeof env, "%s", pyhost_plugin_deps_env(first));
  pyhost_plugin_unload(first);
  if (!process) { /* without dependencies, pyhostdemo comes from the same place */
    char code[4200];
    snprintf(code, sizeof code, "import sys; sys.path.insert(0, r'%s')", env);
    check(pyhost_exec(h, code, NULL), "sys.path");
  } else {
    setenv("PYTHONPATH", env, 1); /* the worker's Python reads it */
  }
  double *on = calloc(n, sizeof *on), *off = calloc(n, sizeof *off), *diff = calloc(n, sizeof *diff);
  if (!on || !off || !diff) bench_die("calloc", NULL);
  for (unsigned long i = 0; i < n; i++) {
    for (int k = 0; k < 2; k++) {
      with_deps = (k == 0) == (i % 2 == 0) ? 1 : -1; /* alternate which goes first */
      double t0 = bench_now();
      pyhost_plugin *p = load(level, i);
      int r = 0;
      check(pyhost_plugin_callf(h, p, "f", "ii>i", 1, 2, &r), "f(1, 2)");
      pyhost_plugin_unload(p);
      (with_deps > 0 ? on : off)[i] = (bench_now() - t0) * 1e9;
    }
    diff[i] = on[i] - off[i];
  }
  printf("RESULT %s_deps_cached %.3f\n", LEVEL[level], median(on, (int)n));
  printf("RESULT %s_deps_plain %.3f\n", LEVEL[level], median(off, (int)n));
  printf("RESULT %s_deps_overhead %.3f\n", LEVEL[level], median(diff, (int)n));
  free(on);
  free(off);
  free(diff);
}

/* VmRSS of process pid in KiB ("self" for this one). */
static long rss_kib(const char *pid) {
  char path[64], line[128];
  long kib = -1;
  snprintf(path, sizeof path, "/proc/%s/status", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
  fclose(f);
  return kib;
}

static void rss(int level, unsigned long n) {
  int process = level == PYHOST_ISOLATION_PROCESS;
  pyhost_plugin **ps = calloc(n, sizeof *ps);
  if (!ps) bench_die("calloc", NULL);
  /* the first plugin's one-time costs (the loader's module, pyhost's service thread) */
  pyhost_plugin *first = load(level, n);
  int r = 0;
  check(pyhost_plugin_callf(h, first, "f", "ii>i", 1, 2, &r), "f(1, 2)");
  long before = rss_kib("self");
  long workers = 0;
  for (unsigned long i = 0; i < n; i++) {
    ps[i] = load(level, i);
    check(pyhost_plugin_callf(h, ps[i], "f", "ii>i", 1, 2, &r), "f(1, 2)");
    if (process) {
      char pid[32];
      snprintf(pid, sizeof pid, "%ld", pyhost_plugin_process_id(ps[i]));
      workers += rss_kib(pid);
    }
  }
  long after = rss_kib("self");
  printf("RESULT %s_rss_host_kib %.3f\n", LEVEL[level], (double)(after - before) / (double)n);
  if (process) printf("RESULT proc_rss_worker_kib %.3f\n", (double)workers / (double)n);
  for (unsigned long i = 0; i < n; i++) pyhost_plugin_unload(ps[i]);
  pyhost_plugin_unload(first);
  free(ps);
}

int main(int argc, char **argv) {
  if (argc < 3) bench_die("usage", "bench_isolation MODE N [LIB | IN OUT]");
  const char *mode = argv[1];
  unsigned long n = bench_count(argv[2]);
  if (strcmp(mode, "pingpong") == 0) {
    if (argc < 5) bench_die("pingpong", "N IN OUT");
    pingpong(n, (size_t)bench_count(argv[3]), (size_t)bench_count(argv[4]));
    return 0;
  }
  if (argc < 4) bench_die(mode, "needs the Python library");
  start(argv[3]);
  static void (*const run[])(int, unsigned long) = {calls, cycles, rss, deps_cycles};
  static const char *const what[] = {"call", "cycle", "rss", "deps"};
  int done = 0;
  for (int level = 0; level < 3 && !done; level++)
    for (int k = 0; k < 4 && !done; k++) {
      char name[32];
      snprintf(name, sizeof name, "%s_%s", LEVEL[level], what[k]);
      if (strcmp(mode, name) == 0) {
        run[k](level, n);
        done = 1;
      }
    }
  if (!done) bench_die(mode, "unknown mode");
  stop();
  return 0;
}
