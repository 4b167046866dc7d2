/* discover_util.h: what the discovery tests share (test_discover.c,
 * test_discover_tools.c): a temporary tree per case, shell steps to build it, and a
 * record of what pyhost_discover reports. */
#ifndef PYHOST_DISCOVER_UTIL_H
#define PYHOST_DISCOVER_UTIL_H

#include "pyhost.h"

#include <stddef.h>
#include <sys/types.h>

#define PATHBUF 8192

/* snprintf without gcc's truncation guesses: test paths are short, and a cut one
 * fails the case visibly anyway */
void fmtbuf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A fresh temporary directory /tmp/<prefix>-XXXXXX, removed when the case exits, with
 * each of vars (NULL-terminated) unset. */
const char *make_tmp(const char *prefix, const char *const *vars);

/* Runs a shell command (PATH=/usr/bin:/bin, set -e); a failure ends the case. */
void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void write_file(const char *path, const char *text, mode_t mode);

/* ---- what pyhost_discover reports ---- */

struct seen_one {
  char code[32], source[40], kind[16], library[4096], interpreter[4096], venv[4096], how[512];
  char reason[1024];
  unsigned long hex;
  int taken;
};
extern struct seen_one seen[128];
extern int n_seen, taken_at;

/* pyhost_discover(cfg) into seen[]; checks that exactly one is taken when it says so. */
int record_discovery(pyhost_config *cfg);
/* The taken candidate; none taken fails the case (and lists the candidates). */
const struct seen_one *taken(void);
/* The first candidate from source (any when NULL) whose interpreter or library
 * contains needle (any when NULL), or NULL. */
const struct seen_one *find_in(const char *source, const char *needle);
void dump(void);

/* pyhost_init(cfg) (cfg is freed): the handle, or NULL after failing the case with
 * pyhost's message. */
pyhost *start_or_fail(pyhost_config *cfg);

#endif
