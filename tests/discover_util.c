/* discover_util.c: discover_util.h. */
#define _GNU_SOURCE
#include "discover_util.h"
#include "check.h"

#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

void fmtbuf(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
}

static char tmp[256];

static void remove_tmp(void) {
  char cmd[512];
  if (!tmp[0]) return;
  fmtbuf(cmd, sizeof cmd, "/bin/rm -rf '%s'", tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
}

const char *make_tmp(const char *prefix, const char *const *vars) {
  fmtbuf(tmp, sizeof tmp, "/tmp/%s-XXXXXX", prefix);
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    exit(1);
  }
  atexit(remove_tmp);
  for (; vars && *vars; vars++) unsetenv(*vars);
  return tmp;
}

void sh(const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  /* the cases change PATH: the shell's tools are found through the usual one */
  size_t n = (size_t)sprintf(cmd, "PATH=/usr/bin:/bin; set -e; ");
  vsnprintf(cmd + n, sizeof cmd - n, fmt, ap);
  va_end(ap);
  if (system(cmd) != 0) {
    fprintf(stderr, "command failed: %s\n", cmd);
    exit(1);
  }
}

void write_file(const char *path, const char *text, mode_t mode) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
  chmod(path, mode);
}

struct seen_one seen[128];
int n_seen, taken_at;

static void record(void *ctx, const pyhost_candidate *c) {
  (void)ctx;
  if (n_seen >= 128) return;
  struct seen_one *s = &seen[n_seen];
  fmtbuf(s->code, sizeof s->code, "%s", c->reason_code);
  fmtbuf(s->source, sizeof s->source, "%s", c->source);
  fmtbuf(s->kind, sizeof s->kind, "%s", c->kind);
  fmtbuf(s->library, sizeof s->library, "%s", c->library);
  fmtbuf(s->interpreter, sizeof s->interpreter, "%s", c->interpreter);
  fmtbuf(s->venv, sizeof s->venv, "%s", c->venv);
  fmtbuf(s->how, sizeof s->how, "%s", c->how);
  fmtbuf(s->reason, sizeof s->reason, "%s", c->reason);
  s->hex = c->hexversion;
  s->taken = c->taken;
  CHECK(c->index == n_seen + 1);
  CHECK(c->reason[0] != '\0');
  if (c->taken) {
    CHECK(taken_at < 0); /* exactly one */
    taken_at = n_seen;
  }
  n_seen++;
}

int record_discovery(pyhost_config *cfg) {
  n_seen = 0;
  taken_at = -1;
  int rc = pyhost_discover(cfg, record, NULL);
  CHECK((rc == PYHOST_OK) == (taken_at >= 0));
  return rc;
}

const struct seen_one *taken(void) {
  static struct seen_one none;
  if (taken_at >= 0) return &seen[taken_at];
  fprintf(stderr, "nothing taken; candidates:\n");
  dump();
  check_failures++;
  return &none;
}

const struct seen_one *find_in(const char *source, const char *needle) {
  for (int i = 0; i < n_seen; i++)
    if ((!source || !strcmp(seen[i].source, source)) &&
        (!needle || strstr(seen[i].interpreter, needle) || strstr(seen[i].library, needle)))
      return &seen[i];
  return NULL;
}

void dump(void) {
  for (int i = 0; i < n_seen; i++)
    fprintf(stderr, "  #%d %-18s %-18s %-10s %s | %s [%s] %s\n", i + 1, seen[i].code, seen[i].source,
            seen[i].kind, seen[i].interpreter, seen[i].library, seen[i].how, seen[i].reason);
}

pyhost *start_or_fail(pyhost_config *cfg) {
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  CHECK_RC(rc, PYHOST_OK);
  if (rc == PYHOST_OK) return h;
  fprintf(stderr, "%s\n", pyhost_errmsg(h));
  pyhost_free(h);
  return NULL;
}
