/* names.h: a growable list of file names handed out sorted, so that directory listings
 * (discover_posix.c, discover_win32.c) come in the same order on every file system. */
#ifndef PYHOST_NAMES_H
#define PYHOST_NAMES_H

#include <stddef.h>

struct pyhost__names {
  char **v;
  size_t n, cap;
};

/* Copies name into the list: 0, or -1 when out of memory (the list stays valid). */
int pyhost__names_add(struct pyhost__names *l, const char *name);

/* Sorts the names, calls fn(ctx, name) for each, and frees the list. */
void pyhost__names_emit(struct pyhost__names *l, void (*fn)(void *ctx, const char *name), void *ctx);

#endif
