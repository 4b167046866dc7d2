/* tree.h: the file-system work of preparing a plugin's dependencies (src/deps):
 * directories made, renamed into place whole, removed whole, small files written, and
 * a lock file that keeps two processes (or two threads) from preparing the same
 * environment at once.  Paths are UTF-8.  tree_posix.c and tree_win32.c implement it. */
#ifndef PYHOST_TREE_H
#define PYHOST_TREE_H

#include <stddef.h>
#include <stdint.h>

/* The reason the last call below failed on this thread, in words (strerror, or
 * Windows' message and its number). */
void pyhost__fs_error(char *out, size_t cap);

/* Makes path and every missing parent.  0 (also when it exists as a directory) or -1. */
int pyhost__fs_mkdirs(const char *path);

/* Renames the directory from to to, which must not exist: 0, 1 when to exists (from is
 * left as it was), -1 on another failure.  Atomic: to is absent or complete. */
int pyhost__fs_rename_new(const char *from, const char *to);

/* Removes path and everything under it (symlinks removed, never followed).  0, also
 * when nothing was there, or -1 when something could not be removed. */
int pyhost__fs_remove_tree(const char *path);

/* Creates or truncates path and writes len bytes to it, flushed to the disk before it
 * returns.  0 or -1. */
int pyhost__fs_write_file(const char *path, const void *data, size_t len);

/* Sets path's modification time to now: 0 or -1. */
int pyhost__fs_touch(const char *path);

/* path's modification time in seconds since 1970, or -1 when it is missing. */
int64_t pyhost__fs_mtime(const char *path);

/* The current time in seconds since 1970. */
int64_t pyhost__fs_now(void);

/* An exclusive lock on a lock file (created if missing), held until
 * pyhost__fs_unlock: flock() on POSIX, LockFileEx on Windows.  Each call opens the
 * file anew, so two threads of one process exclude each other as two processes do;
 * the system drops the lock when its process ends, however it ends.  wait 0: returns
 * 1 at once when another holder has it.  0 with *out held, 1 busy, -1 on an error. */
struct pyhost__fs_lock;
int pyhost__fs_lock(const char *path, int wait, struct pyhost__fs_lock **out);
void pyhost__fs_unlock(struct pyhost__fs_lock *l);

#endif
