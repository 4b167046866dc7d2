/* sync.h: what pyhost needs from the platform for threads and processes: a short sleep,
 * for pyhost_finalize waiting until calls in flight on other threads have returned, and
 * a hook into fork().  sync_posix.c and sync_win32.c implement it. */
#ifndef PYHOST_SYNC_H
#define PYHOST_SYNC_H

/* Sleeps for about ms milliseconds (at least the scheduler's tick). */
void pyhost__sleep_ms(unsigned ms);

/* Has fn run in the child process after every later fork() (a no-op where processes
 * do not fork).  fn runs on the child's only thread, the one that called fork(). */
void pyhost__on_fork_child(void (*fn)(void));

#endif
