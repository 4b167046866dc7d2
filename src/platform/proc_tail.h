/* proc_tail.h: the last bytes a worker wrote to stderr, kept for the message about
 * its end; one ring buffer for proc_posix.c and proc_win32.c (proc_tail.c). */
#ifndef PYHOST_PROC_TAIL_H
#define PYHOST_PROC_TAIL_H

#include <stddef.h>

#define PYHOST__TAIL_CAP 4096

struct pyhost__tail {
  char buf[PYHOST__TAIL_CAP];
  size_t pos, len; /* the next byte's place; how many are kept */
};

/* Keeps data's n bytes, dropping the oldest beyond the capacity. */
void pyhost__tail_put(struct pyhost__tail *t, const char *data, size_t n);

/* The last cap - 1 bytes at most, NUL-terminated, into out. */
void pyhost__tail_get(const struct pyhost__tail *t, char *out, size_t cap);

#endif
