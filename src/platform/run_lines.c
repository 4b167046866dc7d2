/* run_lines.c: see run_lines.h. */
#include "run_lines.h"

void pyhost__run_lines_init(struct pyhost__run_lines *l, pyhost__run_line_fn fn, void *ctx) {
  l->fn = fn;
  l->ctx = ctx;
  l->n = 0;
  l->after_cr = 0;
}

static void deliver(struct pyhost__run_lines *l) {
  l->buf[l->n] = '\0';
  if (l->fn) l->fn(l->ctx, l->buf, l->n);
  l->n = 0;
}

void pyhost__run_lines_feed(struct pyhost__run_lines *l, const char *data, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char c = data[i];
    int cr_lf = l->after_cr && c == '\n';
    l->after_cr = c == '\r';
    if (cr_lf) continue;
    if (c == '\n' || c == '\r') {
      deliver(l);
      continue;
    }
    l->buf[l->n++] = c;
    if (l->n == sizeof l->buf - 1) deliver(l);
  }
}

void pyhost__run_lines_end(struct pyhost__run_lines *l) {
  if (l->n) deliver(l);
}
