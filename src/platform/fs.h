/* fs.h: the platform interface for the few file-system questions pyhost asks
 * (before loading a library, and when looking for a Python's home).  Paths are UTF-8.
 * fs_posix.c and fs_win32.c implement it. */
#ifndef PYHOST_FS_H
#define PYHOST_FS_H

#include <stddef.h>
#include <stdint.h>
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

/* A file opened for reading a library's headers (libcheck.c). */
struct pyhost__fs_file {
  intptr_t handle; /* a descriptor or a HANDLE */
  uint64_t size;   /* of the opened file, not of whatever the path names later */
};

/* Opens path for reading if it is a regular file after following symlinks (as many as
 * the system follows: a loop fails), without ever blocking: what the path names is
 * looked at before it is opened, the open does not wait (a FIFO, a device), and the
 * opened file is looked at again.  Returns PYHOST__FS_FILE with f open; otherwise the
 * kind found, nothing open, and the reason in why ("no such file", "a symlink loop or
 * a chain of too many links", "a FIFO (named pipe)", "not readable: ..."). */
enum pyhost__fs_kind pyhost__fs_open_regular(const char *path, struct pyhost__fs_file *f,
                                             char *why, size_t cap);

/* Reads n bytes at off of an open file.  0, or -1 when fewer could be read. */
int pyhost__fs_pread(const struct pyhost__fs_file *f, uint64_t off, void *buf, size_t n);

void pyhost__fs_close(struct pyhost__fs_file *f);

/* The platform's directory separator and whether a path names a location (has a
 * separator) rather than a bare library name for the system loader's search. */
extern const char pyhost__fs_sep;
int pyhost__fs_has_dir(const char *path);

#endif
