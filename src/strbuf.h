/* strbuf.h: bounded text building for messages.  Never allocates, never overflows,
 * always NUL-terminates; text that does not fit is cut and marked with "...". */
#ifndef PYHOST_STRBUF_H
#define PYHOST_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct pyhost__strbuf {
  char *buf;
  size_t cap, len;
};

void pyhost__strbuf_init(struct pyhost__strbuf *sb, char *buf, size_t cap);
void pyhost__strbuf_printf(struct pyhost__strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void pyhost__strbuf_vprintf(struct pyhost__strbuf *sb, const char *fmt, va_list ap);

/* snprintf into buf that marks truncation; returns buf. */
char *pyhost__fmt(char *buf, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
