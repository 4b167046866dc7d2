/* alloc.h: every allocation pyhost makes goes through here, so that tests can make
 * the N-th one fail (fault injection) and count what is still held. */
#ifndef PYHOST_ALLOC_H
#define PYHOST_ALLOC_H

#include <stddef.h>

void *pyhost__malloc(size_t n);
void *pyhost__calloc(size_t count, size_t n);
void *pyhost__realloc(void *p, size_t n);
void pyhost__free(void *p);
char *pyhost__strdup(const char *s);               /* NULL for NULL */
char *pyhost__memdup(const void *p, size_t n);     /* adds a NUL after n bytes */

/* Test seam: after `countdown` more successful allocations, every allocation fails
 * (0 = fail the next one); a negative value turns injection off.  Returns how many
 * allocations failed since the last call. */
long pyhost__alloc_fail_after(long countdown);

#endif
