/* run_lines.h: cuts a program's output into lines for pyhost__run (run.h), the part
 * of it that is plain C on every platform (run_lines.c). */
#ifndef PYHOST_RUN_LINES_H
#define PYHOST_RUN_LINES_H

#include "run.h"

struct pyhost__run_lines {
  pyhost__run_line_fn fn;
  void *ctx;
  size_t n;
  int after_cr; /* the last byte was "\r": a "\n" right after it ends nothing more */
  char buf[4096];
};

void pyhost__run_lines_init(struct pyhost__run_lines *l, pyhost__run_line_fn fn, void *ctx);
/* Takes len more bytes, delivering every line they complete. */
void pyhost__run_lines_feed(struct pyhost__run_lines *l, const char *data, size_t len);
/* Delivers what is left after the last line end (the output ended). */
void pyhost__run_lines_end(struct pyhost__run_lines *l);

#endif
