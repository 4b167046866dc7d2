/* handles.c: which pyhost handles are alive, so that a handle the host already freed
 * (a C++ wrapper that outlived its pyh::interpreter, a second pyhost_free) is refused
 * without reading the freed memory.
 *
 * A list of slots, each naming one live handle or none, after a first slot of the
 * process's own (pyhost__process.live_first) that the hot paths read inline.  Slots are never freed, only
 * emptied and reused, so a reader walks them without a lock while other threads add
 * and remove handles (a fork in between leaves nothing locked), and the list is never
 * longer than the most handles ever alive at once: the running one and the failed
 * ones a host has not freed yet.  Asking costs a load and a compare per slot.
 */
#include "core.h"

int pyhost__handle_add(const pyhost *h) {
  const pyhost *empty = PYHOST__NO_SCOPE;
  if (atomic_compare_exchange_strong(&pyhost__process.live_first.h, &empty, h)) return 0;
  struct pyhost__live *s = atomic_load_explicit(&pyhost__process.live, memory_order_acquire);
  for (; s; s = s->next) {
    const pyhost *none = NULL;
    if (atomic_compare_exchange_strong(&s->h, &none, h)) return 0;
  }
  if (!(s = pyhost__malloc(sizeof *s))) return -1;
  atomic_init(&s->h, h);
  struct pyhost__live *head = atomic_load(&pyhost__process.live);
  do s->next = head;
  while (!atomic_compare_exchange_weak(&pyhost__process.live, &head, s));
  return 0;
}

void pyhost__handle_remove(const pyhost *h) {
  const pyhost *first = h;
  if (atomic_compare_exchange_strong(&pyhost__process.live_first.h, &first, PYHOST__NO_SCOPE)) return;
  for (struct pyhost__live *s = atomic_load(&pyhost__process.live); s; s = s->next) {
    const pyhost *was = h;
    if (atomic_compare_exchange_strong(&s->h, &was, NULL)) return;
  }
}

int pyhost__handle_live_slow(const pyhost *h) {
  if (!h) return 0;
  for (struct pyhost__live *s = atomic_load_explicit(&pyhost__process.live, memory_order_acquire);
       s; s = s->next)
    if (atomic_load_explicit(&s->h, memory_order_acquire) == h) return 1;
  return 0;
}

/* ---- the quarantine of freed handles (core.h) ----
 * A ring of the last PYHOST__QUARANTINE freed handle blocks (pyhost__process).  A free
 * takes the next slot with one atomic add and swaps its block in, freeing the one it
 * displaces: no lock (frees come from any thread, with or without the GIL, after
 * finalize too), and a block is freed by exactly the free that displaced it.  What the
 * ring holds at exit stays reachable through it (valgrind and LeakSanitizer report no
 * leak). */
void pyhost__handle_retire(void *p) {
  if (!p) return;
  *(uint32_t *)p = PYHOST__TAG_FREED;
  unsigned long i = atomic_fetch_add(&pyhost__process.quarantine_next, 1) % PYHOST__QUARANTINE;
  pyhost__free(atomic_exchange(&pyhost__process.quarantine[i], p));
}
