/* run.h: running a program to its end while the caller waits (a dependency installer:
 * pip or uv), its stdout and stderr merged and delivered line by line.  No shell: the
 * arguments reach the program as given.  The program gets the host's environment with
 * the caller's additions, stdin from the null device, and no other descriptor or
 * handle of the host.  run_posix.c and run_win32.c implement it. */
#ifndef PYHOST_RUN_H
#define PYHOST_RUN_H

#include <stddef.h>

/* One line of output (without its end: "\n", "\r\n" or a lone "\r", as progress bars
 * write them), NUL-terminated; a line longer than 4 KiB comes in pieces. */
typedef void (*pyhost__run_line_fn)(void *ctx, const char *line, size_t len);

/* Runs argv[0] (an absolute path) with argv (NULL-terminated).  env: "NAME=VALUE"
 * strings (NULL-terminated, may be NULL) set in the program's environment over the
 * host's.  Returns 0 when it ran, with *code its exit status (or 128 + the signal that
 * ended it, as a shell says), or -1 with the reason in err when it could not start. */
int pyhost__run(const char *const *argv, const char *const *env, pyhost__run_line_fn fn,
                void *ctx, int *code, char *err, size_t cap);

#endif
