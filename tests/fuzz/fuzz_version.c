/* fuzz_version.c: libFuzzer target for the loader's text parsers that see bytes from
 * a library: pyhost__parse_version (Py_GetVersion's text) and pyhost__widen (UTF-8
 * paths to wchar_t with surrogateescape).  Checks invariants, not just "no crash". */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  unsigned long v = pyhost__parse_version(s);
  if (v) {
    /* a version is major.minor: both digits at the start, level a/b/c/f */
    if (s[0] < '0' || s[0] > '9') abort();
    unsigned level = (unsigned)(v >> 4) & 0xF;
    if (level != 0xA && level != 0xB && level != 0xC && level != 0xF) abort();
  }
  wchar_t *w = pyhost__widen(s);
  if (w) {
    /* never longer than the bytes: each byte is at most one wchar_t */
    if (wcslen(w) > strlen(s)) abort();
    pyhost__free(w);
  }
  free(s);
  return 0;
}
