/* install.c: the installer, run as a child process: `uv pip install --target DIR
 * --python PYTHON REQ...` when uv is on PATH, else `PYTHON -I -m pip install --target
 * DIR REQ...` with the selected Python's own pip.  Neither gets an index or any option
 * of pyhost's: the user's configuration (pip.conf, uv.toml, PIP_* and UV_* variables:
 * index URL, find-links, no-index) decides where packages come from.
 * PYHOST_DEPS_INSTALLER=pip or =uv chooses one.  Their output is read line by line
 * for progress, and its end kept for the message when they fail. */
#include "deps.h"
#include "discovery.h"

#include "platform.h"

#include <stdlib.h>
#include <string.h>

/* What the installer said, and what it is doing. */
struct reading {
  const struct pyhost__deps_job *job;
  int uv;
  long resolved, total, installed;
  char tail[PYHOST__MSG_HEAD]; /* its last lines */
  size_t tail_len;
  int no_pip;
};

static void keep(struct reading *r, const char *line, size_t len) {
  if (len + 2 > sizeof r->tail) len = sizeof r->tail - 2;
  while (r->tail_len + len + 2 > sizeof r->tail) { /* drop the oldest line */
    char *nl = memchr(r->tail, '\n', r->tail_len);
    size_t cut = nl ? (size_t)(nl - r->tail) + 1 : r->tail_len;
    memmove(r->tail, r->tail + cut, r->tail_len - cut);
    r->tail_len -= cut;
  }
  memcpy(r->tail + r->tail_len, line, len);
  r->tail_len += len;
  r->tail[r->tail_len++] = '\n';
  r->tail[r->tail_len] = '\0';
}

/* The word after prefix in line (a package or requirement), into out. */
static int after(const char *line, const char *prefix, char *out, size_t cap) {
  size_t n = strlen(prefix);
  if (strncmp(line, prefix, n) != 0) return 0;
  line += n;
  size_t k = strcspn(line, " \t(");
  pyhost__fmt(out, cap, "%.*s", (int)k, line);
  return 1;
}

static const char *skip_blanks(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* pip: "Collecting NAME", "Processing FILE", "Downloading FILE", "Building wheel for
 * NAME", "Installing collected packages: A, B", "Successfully installed A-1 B-2".
 * uv: "Resolved N packages", "Prepared N packages", " + NAME==VERSION". */
static void on_line(void *ctx, const char *line, size_t len) {
  struct reading *r = ctx;
  const struct pyhost__deps_job *job = r->job;
  if (!len) return;
  keep(r, line, len);
  if (strstr(line, "No module named pip")) r->no_pip = 1;
  const char *s = skip_blanks(line);
  char what[512];
  if (after(s, "Collecting ", what, sizeof what) || after(s, "Processing ", what, sizeof what)) {
    const char *base = strrchr(what, '/');
    pyhost__deps_report(job, PYHOST_DEPS_RESOLVING, base ? base + 1 : what, ++r->resolved, -1, line, NULL);
  } else if (after(s, "Downloading ", what, sizeof what)) {
    const char *base = strrchr(what, '/');
    pyhost__deps_report(job, PYHOST_DEPS_DOWNLOADING, base ? base + 1 : what, -1, -1, line, NULL);
  } else if (after(s, "Building wheel for ", what, sizeof what)) {
    pyhost__deps_report(job, PYHOST_DEPS_BUILDING, what, -1, -1, line, NULL);
  } else if (!strncmp(s, "Installing collected packages: ", 31)) {
    r->total = 1;
    for (const char *p = s + 31; *p; p++) r->total += *p == ',';
    pyhost__deps_report(job, PYHOST_DEPS_INSTALLING, s + 31, 0, r->total, line, NULL);
  } else if (!strncmp(s, "Successfully installed ", 23)) {
    long n = 1;
    for (const char *p = s + 23; *p; p++) n += *p == ' ';
    pyhost__deps_report(job, PYHOST_DEPS_INSTALLING, s + 23, n, r->total ? r->total : n, line, NULL);
  } else if (r->uv && !strncmp(s, "Resolved ", 9)) {
    r->total = strtol(s + 9, NULL, 10);
    pyhost__deps_report(job, PYHOST_DEPS_RESOLVING, "", r->total, r->total, line, NULL);
  } else if (r->uv && !strncmp(s, "Prepared ", 9)) {
    pyhost__deps_report(job, PYHOST_DEPS_DOWNLOADING, "", strtol(s + 9, NULL, 10), r->total, line, NULL);
  } else if (r->uv && after(s, "+ ", what, sizeof what)) {
    pyhost__deps_report(job, PYHOST_DEPS_INSTALLING, what, ++r->installed, r->total, line, NULL);
  }
}

/* uv's path when uv is to be used, else "" (pip). */
static int choose(char *uv, size_t cap, char *err, size_t ecap) {
  const char *forced = getenv("PYHOST_DEPS_INSTALLER");
  uv[0] = '\0';
  if (forced && forced[0] && strcmp(forced, "pip") && strcmp(forced, "uv")) {
    pyhost__fmt(err, ecap, "PYHOST_DEPS_INSTALLER=%s: it names pip or uv", forced);
    return -1;
  }
  if (forced && !strcmp(forced, "pip")) return 0;
  if (pyhost__find_on_path("uv", NULL, uv, cap) == 0) return 0;
  uv[0] = '\0';
  if (forced && !strcmp(forced, "uv")) {
    pyhost__fmt(err, ecap, "PYHOST_DEPS_INSTALLER=uv, but uv is not on PATH");
    return -1;
  }
  return 0;
}

int pyhost__deps_install(const struct pyhost__deps_job *job, const char *dir, char *err,
                         size_t cap) {
  char uv[PYHOST__PATH_MAX];
  if (choose(uv, sizeof uv, err, cap) != 0) return PYHOST_NOTFOUND;
  const char **argv = pyhost__calloc(job->n + 12, sizeof *argv);
  struct reading *r = pyhost__calloc(1, sizeof *r);
  if (!argv || !r) {
    pyhost__free(argv);
    pyhost__free(r);
    pyhost__fmt(err, cap, "out of memory");
    return PYHOST_NOMEM;
  }
  size_t k = 0;
  r->job = job;
  r->uv = uv[0] != '\0';
  if (r->uv) {
    argv[k++] = uv;
    argv[k++] = "pip";
    argv[k++] = "install";
    argv[k++] = "--python";
    argv[k++] = job->py->executable;
  } else {
    argv[k++] = job->py->executable;
    argv[k++] = "-I"; /* the current directory and PYTHON* variables stay out of pip's way */
    argv[k++] = "-m";
    argv[k++] = "pip";
    argv[k++] = "install";
  }
  argv[k++] = "--target";
  argv[k++] = dir;
  for (size_t i = 0; i < job->n; i++) argv[k++] = job->reqs[i];
  argv[k] = NULL;
  /* pip asks its index whether a newer pip exists unless told not to; that is no
   * part of installing (the user's own setting wins) */
  const char *env[] = {getenv("PIP_DISABLE_PIP_VERSION_CHECK") ? NULL : "PIP_DISABLE_PIP_VERSION_CHECK=1", NULL};
  char cmd[256];
  pyhost__fmt(cmd, sizeof cmd, "%s", r->uv ? "uv pip install" : "pip install");
  pyhost__deps_report(job, PYHOST_DEPS_PREPARING, "", 0, (long)job->n, cmd, NULL);
  int code, rc = PYHOST_OK;
  char why[512];
  if (pyhost__run(argv, env, on_line, r, &code, why, sizeof why) != 0) {
    pyhost__fmt(err, cap, "%s", why);
    rc = PYHOST_NOTFOUND;
  } else if (code != 0) {
    if (r->no_pip)
      pyhost__fmt(err, cap, "Python %lu.%lu (%s) has no pip, and uv is not on PATH: install pip for it "
                  "(%s -m ensurepip) or put uv on PATH", (job->py->hexversion >> 24) & 0xFF,
                  (job->py->hexversion >> 16) & 0xFF, job->py->executable, job->py->executable);
    else
      pyhost__fmt(err, cap, "%s exited with status %d:\n%s", r->uv ? "uv pip install" : "pip install", code,
                  r->tail);
    rc = r->no_pip ? PYHOST_NOTFOUND : PYHOST_DEPS;
  }
  pyhost__free(argv);
  pyhost__free(r);
  return rc;
}
