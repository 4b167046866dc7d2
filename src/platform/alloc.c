/* alloc.c: pyhost's allocator with a fault-injection seam (see alloc.h).  The seam is
 * one atomic counter: free when off. */
#include "alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long countdown = -1;
static atomic_long failures = 0;

static int should_fail(void) {
  long c = atomic_load_explicit(&countdown, memory_order_relaxed);
  if (c < 0) return 0;
  if (c == 0) {
    atomic_fetch_add(&failures, 1);
    return 1;
  }
  atomic_fetch_sub(&countdown, 1);
  return 0;
}

long pyhost__alloc_fail_after(long n) {
  atomic_store(&countdown, n);
  return atomic_exchange(&failures, 0);
}

void *pyhost__malloc(size_t n) {
  return should_fail() ? NULL : malloc(n ? n : 1);
}

void *pyhost__calloc(size_t count, size_t n) {
  return should_fail() ? NULL : calloc(count ? count : 1, n ? n : 1);
}

void *pyhost__realloc(void *p, size_t n) {
  return should_fail() ? NULL : realloc(p, n ? n : 1);
}

void pyhost__free(void *p) {
  free(p);
}

char *pyhost__memdup(const void *p, size_t n) {
  char *d = pyhost__malloc(n + 1);
  if (d) {
    if (n) memcpy(d, p, n);
    d[n] = '\0';
  }
  return d;
}

char *pyhost__strdup(const char *s) {
  return s ? pyhost__memdup(s, strlen(s)) : NULL;
}
