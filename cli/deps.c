/* deps.c: see deps.h. */
#if !defined(_WIN32)
#  define _POSIX_C_SOURCE 200809L
#endif
#include "deps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
#  include <io.h>
#  define isatty _isatty
#  define fileno _fileno
#else
#  include <unistd.h>
#endif

static const char *const phase_names[] = {"", "waiting for another pyhost", "rebuilding a damaged entry",
                                          "starting", "resolving", "downloading", "building",
                                          "installing", "ready"};

struct bar {
  int tty;
  int drawn; /* a bar line is on the terminal */
};

static void show(void *ctx, const pyhost_deps_progress *ev) {
  struct bar *b = ctx;
  const char *phase = ev->phase > 0 && ev->phase <= PYHOST_DEPS_READY ? phase_names[ev->phase] : "?";
  if (!b->tty) {
    if (ev->phase == PYHOST_DEPS_READY)
      fprintf(stderr, "pyhost: dependencies of %s ready (%ld packages%s): %s\n", ev->who, ev->total,
              ev->fresh ? ", installed now" : ", cached", ev->env);
    else
      fprintf(stderr, "pyhost: dependencies of %s: %s %s%s%s\n", ev->who, phase, ev->package,
              ev->line[0] ? ": " : "", ev->line);
    return;
  }
  if (ev->phase == PYHOST_DEPS_READY) {
    if (b->drawn) fprintf(stderr, "\r\033[K");
    if (ev->fresh) fprintf(stderr, "pyhost: installed %ld packages for %s\n", ev->total, ev->who);
    b->drawn = 0;
    return;
  }
  /* one line redrawn in place: [#####.....] phase done/total package */
  char bar[24] = "";
  if (ev->total > 0 && ev->done >= 0) {
    int fill = (int)(20 * (ev->done > ev->total ? ev->total : ev->done) / ev->total);
    for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
    bar[20] = '\0';
    fprintf(stderr, "\r\033[K[%s] %s %ld/%ld %.50s", bar, phase, ev->done, ev->total, ev->package);
  } else {
    fprintf(stderr, "\r\033[K[%-20s] %s %.50s", "...", phase, ev->package);
  }
  fflush(stderr);
  b->drawn = 1;
}

static int set_pythonpath(const char *env) {
  const char *old = getenv("PYTHONPATH");
#if defined(_WIN32)
  char sep = ';';
#else
  char sep = ':';
#endif
  size_t n = strlen(env) + (old ? strlen(old) : 0) + 16;
  char *v = malloc(n);
  if (!v) return -1;
  if (old && old[0]) snprintf(v, n, "%s%c%s", env, sep, old);
  else snprintf(v, n, "%s", env);
#if defined(_WIN32)
  int rc = _putenv_s("PYTHONPATH", v);
#else
  int rc = setenv("PYTHONPATH", v, 1);
#endif
  free(v);
  return rc;
}

int pyhost_cli_deps_prepare(pyhost_config *cfg, const char *script) {
  if (!script || script[0] == '-') {
    fprintf(stderr, "pyhost: --deps runs a script: pyhost --deps FILE [ARGS...]\n");
    return 1;
  }
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  struct bar b = {isatty(fileno(stderr)), 0};
  char env[4096], msg[16384];
  if (!o || pyhost_plugin_options_set_deps(o, PYHOST_DEPS_DECLARED) != PYHOST_OK ||
      pyhost_plugin_options_set_progress(o, show, &b) != PYHOST_OK) {
    pyhost_plugin_options_free(o);
    fprintf(stderr, "pyhost: out of memory\n");
    return 1;
  }
  int rc = pyhost_deps_prepare(script, o, cfg, env, sizeof env, msg, sizeof msg);
  pyhost_plugin_options_free(o);
  if (b.drawn) fprintf(stderr, "\n");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "pyhost: the dependencies of %s: %s\n", script, msg);
    return 1;
  }
  if (env[0] && set_pythonpath(env) != 0) {
    fprintf(stderr, "pyhost: cannot set PYTHONPATH\n");
    return 1;
  }
  return 0;
}

static void print_entry(void *ctx, const pyhost_deps_entry *e) {
  const char *verb = ctx;
  char when[64] = "never";
  time_t t = (time_t)e->last_used;
  struct tm *tm = e->last_used > 0 ? localtime(&t) : NULL;
  if (tm) strftime(when, sizeof when, "%Y-%m-%d %H:%M", tm);
  printf("%s%s  %s  last used %s%s\n", verb, e->name, e->python[0] ? e->python : "-", when,
         e->complete ? "" : "  (incomplete or damaged)");
  for (const char *r = e->requirements; *r;) {
    const char *nl = strchr(r, '\n');
    int n = nl ? (int)(nl - r) : (int)strlen(r);
    printf("    %.*s\n", n, r);
    r += nl ? n + 1 : n;
  }
}

int pyhost_cli_deps_list(void) {
  char msg[1024];
  int rc = pyhost_deps_list(NULL, print_entry, "", msg, sizeof msg);
  if (rc != PYHOST_OK) fprintf(stderr, "pyhost: --deps-list: %s\n", msg);
  return rc != PYHOST_OK;
}

int pyhost_cli_deps_prune(unsigned days) {
  char msg[1024];
  int rc = pyhost_deps_prune(NULL, days, print_entry, "removed ", msg, sizeof msg);
  if (rc != PYHOST_OK) fprintf(stderr, "pyhost: --deps-prune: %s\n", msg);
  return rc != PYHOST_OK;
}
