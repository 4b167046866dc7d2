/* fs_posix.c: fs.h on POSIX systems. */
#define _GNU_SOURCE
#include "fs.h"
#include "alloc.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
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

static enum pyhost__fs_kind describe(mode_t mode, char *why, size_t cap) {
  if (S_ISREG(mode)) return PYHOST__FS_FILE;
  if (S_ISDIR(mode)) return pyhost__fmt(why, cap, "it is a directory"), PYHOST__FS_DIR;
  pyhost__fmt(why, cap, "it is %s, not a regular file",
              S_ISFIFO(mode) ? "a FIFO (named pipe)" : S_ISSOCK(mode) ? "a socket"
              : S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
              : "a special file");
  return PYHOST__FS_OTHER;
}

static enum pyhost__fs_kind open_failed(int err, char *why, size_t cap) {
  if (err == ELOOP)
    pyhost__fmt(why, cap, "a symlink loop, or a chain of more symlinks than the system follows");
  else if (err == ENAMETOOLONG)
    pyhost__fmt(why, cap, "the path or one of its names is too long for the system (%s)", strerror(err));
  else if (err == ENOENT)
    pyhost__fmt(why, cap, "no such file");
  else
    pyhost__fmt(why, cap, "the file cannot be opened: %s", strerror(err));
  return PYHOST__FS_MISSING;
}

enum pyhost__fs_kind pyhost__fs_open_regular(const char *path, struct pyhost__fs_file *f,
                                             char *why, size_t cap) {
  struct stat st;
  f->handle = -1;
  f->size = 0;
  why[0] = '\0';
  /* stat first: opening a FIFO or a device may do something; looking at it never does */
  if (stat(path, &st) != 0) return open_failed(errno, why, cap);
  enum pyhost__fs_kind k = describe(st.st_mode, why, cap);
  if (k != PYHOST__FS_FILE) return k;
  /* O_NONBLOCK: if the path was replaced by a FIFO since the stat, the open returns */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == EACCES) return pyhost__fmt(why, cap, "the file is not readable"), PYHOST__FS_MISSING;
    return open_failed(errno, why, cap);
  }
  if (fstat(fd, &st) != 0 || (k = describe(st.st_mode, why, cap)) != PYHOST__FS_FILE) {
    if (!why[0]) pyhost__fmt(why, cap, "the opened file cannot be examined: %s", strerror(errno));
    close(fd);
    return k == PYHOST__FS_FILE ? PYHOST__FS_OTHER : k;
  }
  f->handle = fd;
  f->size = (uint64_t)st.st_size;
  return PYHOST__FS_FILE;
}

int pyhost__fs_pread(const struct pyhost__fs_file *f, uint64_t off, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (off + got > (uint64_t)INT64_MAX) return -1;
    ssize_t r = pread((int)f->handle, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

void pyhost__fs_close(struct pyhost__fs_file *f) {
  if (f->handle >= 0) close((int)f->handle);
  f->handle = -1;
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
