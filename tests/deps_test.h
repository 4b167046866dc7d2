/* deps_test.h: what the dependency tests share (test_deps.c defines it; the cases
 * of test_deps.c and test_deps_pip.c use it), on top of isolation.h's folder. */
#ifndef PYHOST_TEST_DEPS_H
#define PYHOST_TEST_DEPS_H

#include "pyhost.h"

#include <stdatomic.h>

/* A plugin's text: a PEP 723 block with deps (the array's items) and requires_python
 * (NULL: none) on line 3 or 4, and hooks version() (pyhostdemo.VERSION), python()
 * ("3.X") and demo_file().  A rotation of static buffers. */
const char *script(const char *deps, const char *requires_python);

/* What a load reported, in order (record is the progress function). */
struct events {
  int n;
  int phase[256];
  long done[256], total[256];
  int fresh;
  char env[1024];
  _Atomic int waiting;
};
void record(void *ctx, const pyhost_deps_progress *ev);
/* 1 when phase was reported. */
int saw(const struct events *e, int phase);

/* Options for level with the declared dependencies, progress into e (may be NULL). */
pyhost_plugin_options *deps_options(int level, struct events *e);
/* Loads the case folder's rel at level so: the status, *p on success. */
int load(pyhost *h, const char *rel, int level, struct events *e, pyhost_plugin **p);
/* hook() as a string, or "<STATUS: message>". */
const char *str_of(pyhost *h, pyhost_plugin *p, const char *hook);
/* PYHOST_DEPS_CACHE is the case folder's cache/. */
void use_cache(void);
/* Skips the case without the wheelhouse (PIP_FIND_LINKS). */
void need_wheelhouse(void);
/* Entries in a cache (NULL: the case's), and installs left over into *temps. */
int cache_dirs_in(const char *cache, int *temps);
int cache_dirs(int *temps);
/* The entry a load of pyhostdemo==version looks for, made by hand in the case's cache. */
void make_entry(const char *version);

#endif
