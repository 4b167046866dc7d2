/* fs.h: the platform interface for the few file-system questions pyhost asks
 * (before loading a library, and when looking for a Python's home).  Paths are UTF-8.
 * fs_posix.c and fs_win32.c implement it. */
#ifndef PYHOST_FS_H
#define PYHOST_FS_H

#include <stddef.h>
#include <stdio.h>

enum pyhost__fs_kind {
  PYHOST__FS_MISSING,  /* nothing there (or a dangling symlink) */
  PYHOST__FS_FILE,     /* a regular file (after following symlinks) */
  PYHOST__FS_DIR,      /* a directory */
  PYHOST__FS_OTHER     /* a device, socket, fifo... */
};

/* What is at path, following symlinks. */
enum pyhost__fs_kind pyhost__fs_kind(const char *path);

/* 1 when the current user may read the file at path. */
int pyhost__fs_readable(const char *path);

/* The canonical absolute path (symlinks resolved) into out.  0, or -1 on error. */
int pyhost__fs_realpath(const char *path, char *out, size_t cap);

/* Reads a whole file into a malloc'd, NUL-terminated buffer (own result, *len bytes
 * before the NUL).  0, or -1 with errno-style text in err. */
int pyhost__fs_read(const char *path, char **data, size_t *len, char *err, size_t errlen);

/* Reads an open stream to its end into a malloc'd, NUL-terminated buffer and closes
 * it: the part of pyhost__fs_read that is plain C on every platform (fs_read.c). */
int pyhost__fs_read_stream(FILE *f, char **data, size_t *len, char *err, size_t errlen);

/* The platform's directory separator and whether a path names a location (has a
 * separator) rather than a bare library name for the system loader's search. */
extern const char pyhost__fs_sep;
int pyhost__fs_has_dir(const char *path);

#endif
