/* sync.h: what pyhost needs from the platform for threads and processes: a short sleep,
 * for pyhost_finalize waiting until calls in flight on other threads have returned, a
 * hook into fork(), a monotonic clock, a monitor (a lock with a condition), and
 * threads of pyhost's own (the process isolation level's, proc.h).  sync_posix.c and
 * sync_win32.c implement it. */
#ifndef PYHOST_SYNC_H
#define PYHOST_SYNC_H

#include <stdint.h>

/* Sleeps for about ms milliseconds (at least the scheduler's tick). */
void pyhost__sleep_ms(unsigned ms);

/* Has fn run in the child process after every later fork() (a no-op where processes
 * do not fork).  fn runs on the child's only thread, the one that called fork(). */
void pyhost__on_fork_child(void (*fn)(void));

/* A thread-exit hook: fn(value) runs on each thread that exits (its start function
 * returned, or it called its own exit) with a value set by pyhost__thread_exit_set;
 * not on a thread still running when the process exits, nor after
 * pyhost__thread_exit_delete.  The caller keeps it, zeroed before first use (the
 * platform layer keeps no state); one fn per hook. */
struct pyhost__thread_exit {
  _Atomic int state; /* 0: not made; 1: being made; 2: made; 3: the platform had no room */
  uintptr_t key;     /* the pthread key, or the fiber-local slot on Windows */
};
/* Sets this thread's value (NULL: none), making the hook with fn on its first use.
 * 0, or -1 when the platform has no room for it. */
int pyhost__thread_exit_set(struct pyhost__thread_exit *e, void (*fn)(void *), void *value);
/* Unmakes the hook (the library is being unloaded): fn runs no more. */
void pyhost__thread_exit_delete(struct pyhost__thread_exit *e);

/* Milliseconds of a monotonic clock (never set back; its zero is arbitrary).  The
 * deadlines below are values of it; PYHOST__FOREVER waits without one. */
int64_t pyhost__clock_ms(void);
#define PYHOST__FOREVER ((int64_t)-1)

/* Milliseconds from now until deadline, at most max (0 when it passed); max for
 * PYHOST__FOREVER. */
static inline int64_t pyhost__ms_until(int64_t deadline, int64_t max) {
  if (deadline == PYHOST__FOREVER) return max;
  int64_t left = deadline - pyhost__clock_ms();
  return left <= 0 ? 0 : left > max ? max : left;
}

/* A monitor: one lock and one condition, for waiting until a state changes.  Not
 * recursive.  NULL from _new when out of memory. */
struct pyhost__monitor;
struct pyhost__monitor *pyhost__monitor_new(void);
void pyhost__monitor_free(struct pyhost__monitor *m);
void pyhost__monitor_enter(struct pyhost__monitor *m);
void pyhost__monitor_leave(struct pyhost__monitor *m);
/* Inside the monitor: gives it up until notified (or woken for no reason: callers
 * re-check their condition in a loop) or until deadline; has it again on return.
 * Returns 1 when the deadline passed, else 0. */
int pyhost__monitor_wait(struct pyhost__monitor *m, int64_t deadline);
/* Inside the monitor: wakes every thread waiting in it. */
void pyhost__monitor_notify(struct pyhost__monitor *m);

/* Runs fn(arg) on a new thread with every signal blocked there (so that signals sent to
 * the process reach its other threads).  0, or -1 when no thread could be made.
 * The thread is joined with pyhost__thread_join (joinable) or never (detached: 1). */
struct pyhost__thread_handle;
int pyhost__thread_start(void (*fn)(void *), void *arg, int detached,
                         struct pyhost__thread_handle **out);
void pyhost__thread_join(struct pyhost__thread_handle *t);

#endif
