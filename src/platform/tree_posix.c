/* tree_posix.c: tree.h on POSIX systems. */
#if defined(__linux__)
#  define _GNU_SOURCE
#else
#  define _POSIX_C_SOURCE 200809L
#  define _DARWIN_C_SOURCE
#endif
#include "tree.h"

#include "alloc.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

void pyhost__fs_error(char *out, size_t cap) { pyhost__fmt(out, cap, "%s", strerror(errno)); }

int pyhost__fs_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    struct stat st;
    if (mkdir(buf, 0777) != 0 && (errno != EEXIST || stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))) {
      if (errno == EEXIST) errno = ENOTDIR;
      return -1;
    }
    buf[i] = c;
  }
  return 0;
}

int pyhost__fs_rename_new(const char *from, const char *to) {
#if defined(__linux__) && defined(RENAME_NOREPLACE)
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno == EEXIST) return 1;
  if (errno != ENOSYS && errno != EINVAL) return -1;
#endif
  /* rename() replaces an empty directory only; a complete entry is never empty */
  if (rename(from, to) == 0) return 0;
  return errno == EEXIST || errno == ENOTEMPTY ? 1 : -1;
}

int pyhost__fs_remove_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
  DIR *d = opendir(path);
  if (!d) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *child = pyhost__malloc(n);
    if (!child) {
      rc = -1;
      break;
    }
    snprintf(child, n, "%s/%s", path, e->d_name);
    if (pyhost__fs_remove_tree(child) != 0) rc = -1;
    pyhost__free(child);
  }
  closedir(d);
  if (rc == 0 && rmdir(path) != 0 && errno != ENOENT) rc = -1;
  return rc;
}

int pyhost__fs_write_file(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  const char *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      errno = e;
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  if (fsync(fd) != 0 && errno != EINVAL) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return close(fd);
}

int pyhost__fs_touch(const char *path) { return utimes(path, NULL); }

int64_t pyhost__fs_mtime(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_mtime : -1;
}

int64_t pyhost__fs_now(void) { return (int64_t)time(NULL); }

struct pyhost__fs_lock {
  int fd;
};

int pyhost__fs_lock(const char *path, int wait, struct pyhost__fs_lock **out) {
  *out = NULL;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  int r;
  do r = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
  while (r != 0 && errno == EINTR);
  if (r != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return e == EWOULDBLOCK ? 1 : -1;
  }
  if (!(*out = pyhost__malloc(sizeof **out))) {
    close(fd);
    errno = ENOMEM;
    return -1;
  }
  (*out)->fd = fd;
  return 0;
}

void pyhost__fs_unlock(struct pyhost__fs_lock *l) {
  if (!l) return;
  close(l->fd); /* drops the flock with the last descriptor of the open file */
  pyhost__free(l);
}
