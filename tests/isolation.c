/* isolation.c: see isolation.h. */
#define _GNU_SOURCE
#include "isolation.h"
#include "check.h"
#include "reliab.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

pyhost *iso_start(void) {
  pyhost *h = check_start(NULL);
  snprintf(tmp, sizeof tmp, "%s/pyhost-iso-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    exit(1);
  }
  return h;
}

static int no_children(void *ctx) {
  (void)ctx;
  return iso_children() == 0;
}

void iso_stop(pyhost *h) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
  pyhost_free(h);
  /* every worker ended and reaped: a process left behind fails the case */
  if (!reliab_wait(no_children, NULL, "every worker process to be gone"))
    fprintf(stderr, "%d child processes are left\n", iso_children());
}

const char *iso_at(const char *rel) {
  static char bufs[8][512];
  static int next;
  char *b = bufs[next++ % 8];
  snprintf(b, 512, "%s/%s", tmp, rel);
  return b;
}

void iso_put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp, rel);
  for (char *s = path + strlen(tmp) + 1; (s = strchr(s, '/')); s++) {
    *s = '\0';
    mkdir(path, 0700);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

pyhost_plugin_options *iso_proc_options(void) {
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  if (!o || pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_PROCESS) != PYHOST_OK) {
    fprintf(stderr, "cannot make plugin options\n");
    exit(1);
  }
  return o;
}

pyhost_plugin *iso_load(pyhost *h, const char *rel, const pyhost_plugin_options *o) {
  pyhost_plugin_options *own = o ? NULL : iso_proc_options();
  pyhost_plugin *p = NULL;
  int rc = pyhost_plugin_load_with(h, iso_at(rel), o ? o : own, &p);
  pyhost_plugin_options_free(own);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "loading %s: %s: %s\n", rel, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
    return NULL;
  }
  return p;
}

pyhost_plugin *iso_load_shared(pyhost *h, const char *rel) {
  pyhost_plugin *p = NULL;
  int rc = pyhost_plugin_load(h, iso_at(rel), &p);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "loading %s: %s: %s\n", rel, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
  return p;
}

int64_t iso_int(pyhost *h, pyhost_plugin *p, const char *hook) {
  int64_t v = -1;
  int rc = pyhost_plugin_callf(h, p, hook, ">L", &v);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "%s(): %s: %s\n", hook, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
    return -1;
  }
  return v;
}

/* The state letter of process pid ('Z' zombie), 0 when there is none. */
static char state_of(long pid) {
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char *ok = fgets(line, sizeof line, f);
  fclose(f);
  const char *close = ok ? strrchr(line, ')') : NULL;
  return close && close[1] == ' ' ? close[2] : 0;
}

int iso_alive(long pid) {
  char s = state_of(pid);
  return s && s != 'Z' && s != 'X';
}

static int gone(void *ctx) {
  return !iso_alive(*(long *)ctx);
}

void iso_wait_gone(long pid) {
  reliab_wait(gone, &pid, "a worker process to end");
}

int iso_children(void) {
  DIR *d = opendir("/proc");
  if (!d) return 0;
  int n = 0;
  long me = (long)getpid();
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[300], line[512];
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char *ok = fgets(line, sizeof line, f);
    fclose(f);
    const char *close = ok ? strrchr(line, ')') : NULL;
    long ppid = 0;
    char st;
    if (close && sscanf(close + 1, " %c %ld", &st, &ppid) == 2 && ppid == me) n++;
  }
  closedir(d);
  return n;
}

int iso_host_add(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, argv[0].u.i + argv[1].u.i);
}

void *iso_hammer(void *arg) {
  struct worker_arg *w = arg;
  for (int i = 0; i < w->iterations; i++) {
    int64_t r = -1;
    int rc = pyhost_plugin_callf(w->h, w->p, "calc", "LL>L", (int64_t)w->id, (int64_t)i, &r);
    if (rc != PYHOST_OK || r != w->id * 1000 + i) {
      fprintf(stderr, "thread %d, call %d: %s %lld: %s\n", w->id, i, pyhost_status_name(rc),
              (long long)r, pyhost_errmsg(w->h));
      w->failures++;
      break;
    }
  }
  return NULL;
}
