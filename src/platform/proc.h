/* proc.h: the platform interface of the process isolation level: a worker process
 * that pyhost starts and owns, and the channel it is reached through.  proc_posix.c
 * (fork, a socketpair, pipes, rlimits, the parent-death signal) and proc_win32.c
 * (CreateProcess, a named pipe, anonymous pipes, a job object) implement it; nothing
 * else knows which.  Nothing here knows Python or the protocol spoken on the channel
 * (the bridge's wire.c does).
 *
 * What every implementation promises:
 *  - no handle or descriptor of the host leaks into a worker, or into any other
 *    program the host starts, except the ones meant for that worker;
 *  - a worker never outlives its host: it is killed when the host process ends
 *    (parent-death signal, a job object that kills on close), and it sees the end of
 *    its control channel when the host is gone (the worker ends itself then);
 *  - every worker is reaped (no zombies), and what it wrote to its stderr (and stdout,
 *    when captured) is delivered to its output function, in order, the last few KiB
 *    of stderr also kept for messages about its end.
 */
#ifndef PYHOST_PROC_H
#define PYHOST_PROC_H

#include <stddef.h>
#include <stdint.h>

/* ---- channels: a stream of bytes both ways between host and worker ---- */
struct pyhost__chan;

/* Sends all len bytes.  0, or -1 when the peer is gone or the channel failed. */
int pyhost__chan_send(struct pyhost__chan *c, const void *p, size_t len);

/* Receives between 1 and cap bytes, waiting until deadline (pyhost__clock_ms, or
 * PYHOST__FOREVER).  Returns the count, 0 at the end of the stream (the peer closed
 * its end or is gone), PYHOST__CHAN_TIMEOUT when the deadline passed first, or -1 on
 * an error. */
#define PYHOST__CHAN_TIMEOUT (-2)
long pyhost__chan_recv(struct pyhost__chan *c, void *p, size_t cap, int64_t deadline);

/* Closes and frees the channel end (NULL: no-op). */
void pyhost__chan_close(struct pyhost__chan *c);

/* ---- the host's side: starting and ending a worker ---- */
struct pyhost__proc;

/* What watches a process's workers (on POSIX a thread that forks them, delivers their
 * output and reaps them).  Its state is the caller's to keep: pyhost keeps no state of
 * its own outside the objects docs/design.md names.  Never freed (its thread runs
 * until the process ends); a child forked from a process that has one makes another
 * (the parent's thread does not exist there).  0 and *out, or -1 with the reason in
 * err. */
struct pyhost__proc_service;
int pyhost__proc_service_new(struct pyhost__proc_service **out, char *err, size_t cap);

/* Where a worker's output goes: called with what it wrote to stream 1 (stdout) or 2
 * (stderr), possibly on a thread of pyhost's, one call at a time per worker. */
typedef void (*pyhost__proc_output_fn)(void *ctx, int stream, const char *data, size_t len);

struct pyhost__proc_spec {
  struct pyhost__proc_service *service; /* what watches it (pyhost__proc_service_new) */
  const char *program;          /* the worker program's path */
  const char *const *args;      /* arguments after the channel's, NULL-terminated; may be NULL */
  uint64_t memory_limit;        /* bytes of address space (POSIX) / committed memory
                                 * (Windows job object); 0: none */
  unsigned cpu_seconds;         /* CPU time over the worker's life; 0: none */
  int capture_stdout;           /* 1: stdout goes to output(); 0: the host's own stdout */
  pyhost__proc_output_fn output; /* NULL: the host's own stdout/stderr */
  void *output_ctx;
};

/* Starts the worker.  On success 0 and *out; the worker gets its channel end and the
 * read end of a control channel on its command line (pyhost__proc_child_open reads
 * them).  On failure -1 and the reason in err, naming the program. */
int pyhost__proc_start(const struct pyhost__proc_spec *spec, struct pyhost__proc **out,
                       char *err, size_t cap);

/* The host's end of the channel (owned by the proc). */
struct pyhost__chan *pyhost__proc_chan(struct pyhost__proc *p);

/* Sends a short message (at most 64 bytes) on the control channel, from any thread,
 * without blocking: 0, or -1 when it could not be sent (the worker is gone or busy
 * not reading it). */
int pyhost__proc_control(struct pyhost__proc *p, const void *msg, size_t len);

/* Kills the worker (SIGKILL / TerminateProcess) unless it has ended already.  Any
 * thread, any time before pyhost__proc_free. */
void pyhost__proc_kill(struct pyhost__proc *p);

/* How a worker ended. */
struct pyhost__proc_exit {
  int signaled;       /* 1: ended by a signal (POSIX) or an exception (Windows) */
  int code;           /* the exit code, or the signal / exception number */
  int killed;         /* 1: pyhost__proc_kill ended it */
  double cpu_seconds; /* CPU time it used, -1 when unknown */
};

/* Waits until the worker has ended and been reaped (and its output delivered, or a
 * short while passed for descendants that keep the pipes open), or until deadline.
 * Returns 0 with *how filled, or 1 when the deadline passed first. */
int pyhost__proc_wait(struct pyhost__proc *p, int64_t deadline, struct pyhost__proc_exit *how);

/* Describes how it ended in words: "exited with code 3", "killed by signal 11
 * (SIGSEGV)", "ended by exception 0xC0000005 (access violation)". */
void pyhost__proc_describe(const struct pyhost__proc_exit *how, char *out, size_t cap);

/* 1 when something outside pyhost killed it the way the system's out-of-memory killer
 * does (SIGKILL, not pyhost__proc_kill). */
int pyhost__proc_killed_from_outside(const struct pyhost__proc_exit *how);

/* 1 when how is the end of a worker that used up its CPU time limit. */
int pyhost__proc_cpu_limit_hit(const struct pyhost__proc_exit *how, unsigned cpu_seconds);

/* Delivers, on this thread, what the worker wrote before now and was not delivered
 * yet (what it flushed before it answered a call, for example). */
void pyhost__proc_drain(struct pyhost__proc *p);

/* The last lines of what the worker wrote to stderr (up to a few KiB), NUL-terminated;
 * "" when none. */
void pyhost__proc_stderr_tail(struct pyhost__proc *p, char *out, size_t cap);

/* The worker's process id. */
long pyhost__proc_id(const struct pyhost__proc *p);

/* This process's id (a child forked from the host has another). */
long pyhost__proc_self(void);

/* Kills the worker if it still runs, waits until it is reaped, delivers the rest of
 * its output, closes everything and frees p.  NULL: no-op. */
void pyhost__proc_free(struct pyhost__proc *p);

/* In a child forked from the host: closes this process's copies of the worker's
 * descriptors and frees p, leaving the worker alone (it is the parent's).  NULL: no-op. */
void pyhost__proc_forget(struct pyhost__proc *p);

/* Test seam: 0 starts workers without the parent-death signal (POSIX), so that a test
 * sees the end of the control channel end a worker alone.  Default 1. */
extern int pyhost__proc_deathsig;

/* ---- the worker's side ---- */

/* In the worker program: the channel end and the control channel's read end its
 * host passed on the command line (argv as main got it).  0, or -1 with the reason in
 * err when the command line is not a worker's. */
int pyhost__proc_child_open(int argc, char **argv, struct pyhost__chan **chan,
                            struct pyhost__chan **control, char *err, size_t cap);

/* In the worker, on its main thread, once: makes pyhost__proc_child_wake_main able to
 * reach that thread; on_wake (a signal handler: async-signal-safe, errno left as it
 * found it) is what then runs on it.  What reaches the thread, or NULL out of memory. */
struct pyhost__proc_waker;
struct pyhost__proc_waker *pyhost__proc_child_setup(void (*on_wake)(int));

/* From another thread of the worker: runs on_wake on the main thread, in a signal
 * handler (Python's interpreter notices what is set there only on its main thread),
 * and makes a blocking system call of that thread return early (EINTR; Python then
 * runs its pending signal handlers).  On Windows, where signals do not reach threads,
 * it raises SIGINT on the calling thread instead: Python's handler sets the event its
 * blocking calls wait for. */
void pyhost__proc_child_wake_main(struct pyhost__proc_waker *w);

#endif
