/* fs_posix.c: fs.h on POSIX systems. */
#define _GNU_SOURCE
#include "fs.h"
#include "alloc.h"
#include "strbuf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char pyhost__fs_sep = '/';

enum pyhost__fs_kind pyhost__fs_kind(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return PYHOST__FS_MISSING;
  if (S_ISREG(st.st_mode)) return PYHOST__FS_FILE;
  if (S_ISDIR(st.st_mode)) return PYHOST__FS_DIR;
  return PYHOST__FS_OTHER;
}

int pyhost__fs_readable(const char *path) {
  return access(path, R_OK) == 0;
}

int pyhost__fs_realpath(const char *path, char *out, size_t cap) {
  char *r = realpath(path, NULL);
  if (!r) return -1;
  int ok = strlen(r) < cap;
  if (ok) memcpy(out, r, strlen(r) + 1);
  free(r); /* realpath's own malloc, not pyhost's allocator */
  return ok ? 0 : -1;
}

int pyhost__fs_has_dir(const char *path) {
  return strchr(path, '/') != NULL;
}

int pyhost__fs_read(const char *path, char **data, size_t *len, char *err, size_t errlen) {
  FILE *f = fopen(path, "rb");
  *data = NULL;
  *len = 0;
  if (!f) {
    pyhost__fmt(err, errlen, "%s", strerror(errno));
    return -1;
  }
  return pyhost__fs_read_stream(f, data, len, err, errlen);
}
