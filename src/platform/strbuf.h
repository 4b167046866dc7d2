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

/* snprintf into buf that marks truncation; returns buf. */
char *pyhost__fmt(char *buf, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;

#endif
