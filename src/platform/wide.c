/* wide.c: UTF-8 to wchar_t for the few pre-init calls that take wchar_t
 * (Py_SetPythonHome, Py_SetProgramName, Py_Main's arguments).  Py_DecodeLocale would
 * do it only from 3.7 and depends on the host's locale; pyhost__widen does the same as
 * Python's surrogateescape decoding of UTF-8 file names on every version, without
 * Python.  pyhost__widen_locale decodes in the locale, as python's main() does its
 * arguments before 3.8. */
#include "platform.h"

#include <string.h>
#include <wchar.h>

static size_t decode_one(const unsigned char *s, unsigned long *cp) {
  unsigned char c = s[0];
  size_t n;
  unsigned long v, min;
  if (c < 0x80) { *cp = c; return 1; }
  if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07, min = 0x10000;
  else goto escape;
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) goto escape;
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) goto escape;
  *cp = v;
  return n;
escape:
  *cp = 0xDC00 + c; /* surrogateescape: one lone byte */
  return 1;
}

wchar_t *pyhost__widen(const char *s) {
  size_t len = strlen(s);
  /* at most one wchar_t per byte, two for a UTF-16 surrogate pair from 4 bytes */
  wchar_t *w = pyhost__malloc((len + 1) * sizeof *w);
  if (!w) return NULL;
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    unsigned long cp;
    p += decode_one(p, &cp);
    if (sizeof(wchar_t) == 2 && cp > 0xFFFF) {
      cp -= 0x10000;
      w[o++] = (wchar_t)(0xD800 + (cp >> 10));
      w[o++] = (wchar_t)(0xDC00 + (cp & 0x3FF));
    } else {
      w[o++] = (wchar_t)cp;
    }
  }
  w[o] = 0;
  return w;
}

wchar_t *pyhost__widen_locale(const char *s) {
  size_t len = strlen(s);
  wchar_t *w = pyhost__malloc((len + 1) * sizeof *w);
  if (!w) return NULL;
  mbstate_t state;
  memset(&state, 0, sizeof state);
  size_t o = 0;
  for (const char *p = s; *p;) {
    wchar_t c;
    size_t n = mbrtowc(&c, p, len - (size_t)(p - s), &state);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
      w[o++] = (wchar_t)(0xDC00 + (unsigned char)*p); /* surrogateescape: one lone byte */
      memset(&state, 0, sizeof state);
      p++;
      continue;
    }
    w[o++] = c;
    p += n;
  }
  w[o] = 0;
  return w;
}
