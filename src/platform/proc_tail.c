/* proc_tail.c: see proc_tail.h. */
#include "proc_tail.h"

void pyhost__tail_put(struct pyhost__tail *t, const char *data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    t->buf[t->pos] = data[i];
    t->pos = (t->pos + 1) % PYHOST__TAIL_CAP;
  }
  t->len = t->len + n > PYHOST__TAIL_CAP ? PYHOST__TAIL_CAP : t->len + n;
}

void pyhost__tail_get(const struct pyhost__tail *t, char *out, size_t cap) {
  if (!cap) return;
  size_t n = t->len < cap - 1 ? t->len : cap - 1;
  size_t start = (t->pos + PYHOST__TAIL_CAP - n) % PYHOST__TAIL_CAP;
  for (size_t i = 0; i < n; i++) out[i] = t->buf[(start + i) % PYHOST__TAIL_CAP];
  out[n] = '\0';
}
