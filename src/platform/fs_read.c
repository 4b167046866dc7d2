/* fs_read.c: reading a whole stream, shared by fs_posix.c and fs_win32.c, which only
 * differ in how they open the file. */
#include "fs.h"
#include "alloc.h"
#include "strbuf.h"

int pyhost__fs_read_stream(FILE *f, char **data, size_t *len, char *err, size_t errlen) {
  size_t cap = 4096, n = 0;
  char *buf = pyhost__malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n + 1 < cap) break;
    char *bigger = pyhost__realloc(buf, cap * 2);
    if (!bigger) {
      pyhost__free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  int read_error = buf && ferror(f);
  fclose(f);
  if (!buf || read_error) {
    pyhost__fmt(err, errlen, "%s", buf ? "read error" : "out of memory");
    pyhost__free(buf);
    return -1;
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}
