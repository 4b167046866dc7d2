/* excdata.c: a Python exception as data (core.h): its type, its text and its
 * traceback's frames, gathered by the runtime (error.c) and kept beside the message
 * they came with (msg.c) in one block, so that a message slot frees it in one call.
 */
#include "core.h"

#include <string.h>

void pyhost__excbuild_init(struct pyhost__excbuild *b) {
  memset(b, 0, sizeof *b);
  pyhost__excbuild_str(b, "", 0); /* offset 0: "" */
}

static int reserve(struct pyhost__excbuild *b, size_t more) {
  if (b->failed) return -1;
  if (b->cap - b->len >= more) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < more) {
    if (cap > (size_t)-1 / 2) return b->failed = 1, -1;
    cap *= 2;
  }
  char *p = pyhost__realloc(b->strings, cap);
  if (!p) return b->failed = 1, -1;
  b->strings = p;
  b->cap = cap;
  return 0;
}

size_t pyhost__excbuild_str(struct pyhost__excbuild *b, const char *s, size_t len) {
  if (len == (size_t)-1 || reserve(b, len + 1) < 0) return 0;
  size_t at = b->len;
  if (len) memcpy(b->strings + at, s, len);
  b->strings[at + len] = '\0';
  b->len += len + 1;
  return at;
}

size_t pyhost__excbuild_text(struct pyhost__excbuild *b, const char *s, size_t len) {
  if (reserve(b, pyhost__cut_size(len)) < 0) return 0;
  size_t at = b->len;
  b->len += pyhost__cut_text(b->strings + at, s, len) + 1;
  return at;
}

void pyhost__excbuild_frame(struct pyhost__excbuild *b, size_t file, size_t function, int line) {
  if (b->failed) return;
  if (b->nframes == b->frames_cap) {
    size_t cap = b->frames_cap ? 2 * b->frames_cap : 16;
    struct pyhost__excbuild_frame *f =
        cap <= (size_t)-1 / sizeof *f ? pyhost__realloc(b->frames, cap * sizeof *f) : NULL;
    if (!f) {
      b->failed = 1;
      return;
    }
    b->frames = f;
    b->frames_cap = cap;
  }
  struct pyhost__excbuild_frame *f = &b->frames[b->nframes++];
  f->file = file;
  f->function = function;
  f->line = line;
}

void pyhost__excbuild_finish(struct pyhost__excbuild *b, struct pyhost__excdata *d) {
  memset(d, 0, sizeof *d);
  size_t head = b->nframes * sizeof(struct pyhost__errframe);
  char *block = b->failed ? NULL : pyhost__malloc(head + b->len);
  if (block) {
    struct pyhost__errframe *frames = (struct pyhost__errframe *)(void *)block;
    char *strings = block + head;
    memcpy(strings, b->strings, b->len);
    for (size_t i = 0; i < b->nframes; i++) {
      frames[i].file = strings + b->frames[i].file;
      frames[i].function = strings + b->frames[i].function;
      frames[i].line = b->frames[i].line;
    }
    d->block = block;
    d->type = strings + b->type;
    d->text = strings + b->text;
    d->frames = frames;
    d->nframes = b->nframes;
  }
  pyhost__free(b->strings);
  pyhost__free(b->frames);
  memset(b, 0, sizeof *b);
}

void pyhost__excdata_free(struct pyhost__excdata *d) {
  pyhost__free(d->block);
  memset(d, 0, sizeof *d);
}
