/* isolation.h: what the isolation tests share (test_isolation.c, the matrix cases;
 * test_isolation_limits.c, the slow limit cases): a case's plugin folder, loading at
 * a level, and checks that no worker process is left behind. */
#ifndef PYHOST_TEST_ISOLATION_H
#define PYHOST_TEST_ISOLATION_H

#include "pyhost.h"

#include <stdint.h>

/* Starts the Python under test and makes the case's plugin folder. */
pyhost *iso_start(void);
/* Removes the folder, frees h, and checks that no child process of this one is left
 * (every worker reaped). */
void iso_stop(pyhost *h);
/* The absolute path of rel inside the case's folder (a rotation of static buffers). */
const char *iso_at(const char *rel);
/* Writes text to rel in the case's folder. */
void iso_put(const char *rel, const char *text);
/* Options for the process level (own). */
pyhost_plugin_options *iso_proc_options(void);
/* Loads rel at the process level with o (NULL: iso_proc_options()); a failure is a
 * failed check and NULL. */
pyhost_plugin *iso_load(pyhost *h, const char *rel, const pyhost_plugin_options *o);
/* Loads rel at the shared level. */
pyhost_plugin *iso_load_shared(pyhost *h, const char *rel);
/* hook() as an int through pyhost_plugin_callf (">L"); -1 and a failed check on error. */
int64_t iso_int(pyhost *h, pyhost_plugin *p, const char *hook);
/* 1 while process pid exists and is not a zombie. */
int iso_alive(long pid);
/* Waits until process pid is gone (a failed check if it never goes). */
void iso_wait_gone(long pid);
/* How many child processes this process has (zombies included). */
int iso_children(void);

/* The thread cases': a thread calling plugin p's hook calc(id, i) for i below
 * iterations, which answers id * 1000 + i through the host function iso_host_add
 * (add(a: int, b: int), typed); failures counts the calls that did not. */
struct worker_arg {
  pyhost *h;
  pyhost_plugin *p;
  int id, iterations, failures;
};
int iso_host_add(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret);
void *iso_hammer(void *arg); /* a pthread start routine; arg is a struct worker_arg */

#endif
