/* strbuf.h: bounded text building for messages.  Never allocates, never overflows,
 * always NUL-terminates; text that does not fit is cut and marked with "...". */
#ifndef PYHOST_STRBUF_H
#define PYHOST_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* The printf dialect GCC checks formats against.  CMake sets gnu_printf for mingw-w64,
 * whose GCC reads "printf" as Microsoft's (no %zu); that build uses mingw's C99 stdio
 * (__USE_MINGW_ANSI_STDIO), so the GNU dialect is the one that runs. */
#ifndef PYHOST__PRINTF_DIALECT
#define PYHOST__PRINTF_DIALECT printf
#endif

struct pyhost__strbuf {
  char *buf;
  size_t cap, len;
};

void pyhost__strbuf_init(struct pyhost__strbuf *sb, char *buf, size_t cap);
void pyhost__strbuf_printf(struct pyhost__strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 2, 3)))
#endif
    ;
void pyhost__strbuf_vprintf(struct pyhost__strbuf *sb, const char *fmt, va_list ap);

/* Texts longer than PYHOST__MSG_MAX (messages, an exception's text) keep their first
 * PYHOST__MSG_HEAD bytes and their end: a traceback's last line names the exception. */
#define PYHOST__MSG_MAX 65536
#define PYHOST__MSG_HEAD 8192
/* The bytes pyhost__cut_text writes for a text of len bytes, its NUL included. */
static inline size_t pyhost__cut_size(size_t len) {
  return (len <= PYHOST__MSG_MAX ? len : PYHOST__MSG_MAX + 64) + 1;
}
/* Writes text (len bytes) and a NUL into dst (pyhost__cut_size(len) bytes): whole up
 * to PYHOST__MSG_MAX bytes, else its start, a line saying how much was cut, and its
 * end.  Returns the length written. */
size_t pyhost__cut_text(char *dst, const char *text, size_t len);

/* snprintf into buf that marks truncation; returns buf. */
char *pyhost__fmt(char *buf, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;

#endif
