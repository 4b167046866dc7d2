/* strbuf.c: bounded message building (see strbuf.h). */
#include "strbuf.h"

#include <stdio.h>
#include <string.h>

void pyhost__strbuf_init(struct pyhost__strbuf *sb, char *buf, size_t cap) {
  sb->buf = buf;
  sb->cap = cap;
  sb->len = 0;
  if (cap) buf[0] = '\0';
}

static void mark_cut(struct pyhost__strbuf *sb) {
  if (sb->cap >= 4) memcpy(sb->buf + sb->cap - 4, "...", 4);
  sb->len = sb->cap ? sb->cap - 1 : 0;
}

void pyhost__strbuf_vprintf(struct pyhost__strbuf *sb, const char *fmt, va_list ap) {
  if (!sb->cap || sb->len + 1 >= sb->cap) return;
  size_t room = sb->cap - sb->len;
  int n = vsnprintf(sb->buf + sb->len, room, fmt, ap);
  if (n < 0) return;
  if ((size_t)n >= room) mark_cut(sb);
  else sb->len += (size_t)n;
}

void pyhost__strbuf_printf(struct pyhost__strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pyhost__strbuf_vprintf(sb, fmt, ap);
  va_end(ap);
}

char *pyhost__fmt(char *buf, size_t cap, const char *fmt, ...) {
  struct pyhost__strbuf sb;
  va_list ap;
  pyhost__strbuf_init(&sb, buf, cap);
  va_start(ap, fmt);
  pyhost__strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  return buf;
}

size_t pyhost__cut_text(char *dst, const char *text, size_t len) {
  if (len <= PYHOST__MSG_MAX) {
    memcpy(dst, text, len);
    dst[len] = '\0';
    return len;
  }
  size_t tail = PYHOST__MSG_MAX - PYHOST__MSG_HEAD;
  memcpy(dst, text, PYHOST__MSG_HEAD);
  int n = snprintf(dst + PYHOST__MSG_HEAD, 64, "\n[... %zu bytes cut ...]\n", len - PYHOST__MSG_HEAD - tail);
  if (n < 0) n = 0;
  memcpy(dst + PYHOST__MSG_HEAD + n, text + len - tail, tail);
  dst[PYHOST__MSG_HEAD + n + tail] = '\0';
  return PYHOST__MSG_HEAD + (size_t)n + tail;
}
