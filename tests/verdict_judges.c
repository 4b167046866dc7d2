#define _GNU_SOURCE
/* verdict_judges.c: see verdict_judges.h. */
#include "verdict_judges.h"
#include "pyhost.h"
#include "check.h"

#include <ftw.h>
#include <stdlib.h>
#include <string.h>

static char scratch[] = "/tmp/pyhost-verdict-XXXXXX";

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

/* The copies are as large as the libraries: none outlives the case. */
static void remove_scratch(void) {
  nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *verdict_scratch(void) {
  static int made;
  if (!made) {
    if (!mkdtemp(scratch)) {
      perror("mkdtemp");
      exit(1);
    }
    atexit(remove_scratch);
    made = 1;
  }
  return scratch;
}

void verdict_quiet_discovery(const char *dir) {
  static const char *const unset[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "PIXI_PROJECT_ROOT",
                                      "CONDA_EXE", "MAMBA_ROOT_PREFIX", "LD_LIBRARY_PATH",
                                      "PYHOST_PYTHON", "PYHOST_PYTHON_LIBRARY", "PYTHONHOME"};
  for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++) unsetenv(unset[i]);
  setenv("PATH", "/nonexistent", 1);
  static const char *const dirs[] = {"PYENV_ROOT", "UV_PYTHON_INSTALL_DIR", "MISE_DATA_DIR",
                                     "ASDF_DATA_DIR", "HOME"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) setenv(dirs[i], dir, 1);
}

const char *verdict_copy(const char *src, const char *dst, size_t limit) {
  FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
  CHECK(in && out);
  if (!in || !out) exit(1);
  char buf[1 << 16];
  size_t n, total = 0;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
    if (limit && total + n > limit) n = limit - total;
    CHECK(fwrite(buf, 1, n, out) == n);
    total += n;
    if (limit && total == limit) break;
  }
  fclose(in);
  CHECK(fclose(out) == 0);
  return dst;
}

/* Candidate #1 of pyhost_discover: the configured file. */
struct first {
  int seen;
  char code[64], reason[4096];
  unsigned long hexversion;
  int free_threaded, debug;
};

static void keep_first(void *ctx, const pyhost_candidate *c) {
  struct first *f = ctx;
  if (c->index != 1) return;
  f->seen = 1;
  snprintf(f->code, sizeof f->code, "%s", c->reason_code);
  snprintf(f->reason, sizeof f->reason, "%s", c->reason);
  f->hexversion = c->hexversion;
  f->free_threaded = c->free_threaded;
  f->debug = c->debug;
}

void verdict_expect(const char *path, int status, const char *code, int debug) {
  fprintf(stderr, "judging %s: expecting %s (%s)\n", path, pyhost_status_name(status), code);
  /* inspect: pyhost --check */
  pyhost_library_info *in = NULL;
  CHECK_RC(pyhost_inspect_library(path, &in), PYHOST_OK);
  if (!in) return;
  CHECK_RC(in->status, status);
  fprintf(stderr, "  inspect:   %s: %s\n", pyhost_status_name(in->status), in->message);

  /* discovery: pyhost --list with the file named */
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, path);
  struct first d;
  memset(&d, 0, sizeof d);
  int drc = pyhost_discover(cfg, keep_first, &d);
  CHECK(d.seen);
  CHECK_RC(drc, status == PYHOST_OK ? PYHOST_OK : PYHOST_NOTFOUND);
  fprintf(stderr, "  discovery: %s: %s\n", d.code, d.reason);
  CHECK_STREQ(d.code, status == PYHOST_OK ? "taken" : code);
  /* one reason, word for word (discovery's "configured" says why it was taken) */
  if (status != PYHOST_OK) CHECK_STREQ(d.reason, in->message);
  /* and the same facts about what the library is */
  CHECK(d.hexversion == in->hexversion);
  CHECK(d.free_threaded == in->free_threaded);
  CHECK(d.debug == in->debug);
  if (debug >= 0) CHECK(in->debug == debug);

  /* init: pyhost --python */
  pyhost *h = NULL;
  int irc = pyhost_init(cfg, &h);
  fprintf(stderr, "  init:      %s: %s\n", pyhost_status_name(irc), pyhost_errmsg(h));
  CHECK_RC(irc, status);
  if (status != PYHOST_OK) CHECK_CONTAINS(pyhost_errmsg(h), in->message);
  if (irc == PYHOST_OK) {
    CHECK(pyhost_python_version(h) == in->hexversion);
    CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  }
  pyhost_free(h);
  pyhost_config_free(cfg);
  pyhost_library_info_free(in);
}
