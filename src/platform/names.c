/* names.c: sorted name lists (names.h). */
#include "names.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

int pyhost__names_add(struct pyhost__names *l, const char *name) {
  if (l->n == l->cap) {
    size_t ncap = l->cap ? l->cap * 2 : 32;
    char **grown = pyhost__realloc(l->v, ncap * sizeof *grown);
    if (!grown) return -1;
    l->v = grown;
    l->cap = ncap;
  }
  if (!(l->v[l->n] = pyhost__strdup(name))) return -1;
  l->n++;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

void pyhost__names_emit(struct pyhost__names *l, void (*fn)(void *ctx, const char *name), void *ctx) {
  if (l->n) qsort(l->v, l->n, sizeof *l->v, cmp_names);
  for (size_t i = 0; i < l->n; i++) {
    fn(ctx, l->v[i]);
    pyhost__free(l->v[i]);
  }
  pyhost__free(l->v);
  l->v = NULL;
  l->n = l->cap = 0;
}
