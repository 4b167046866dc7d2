/* reliab.h: helpers shared by the reliability tests (test_threads.c, test_hostile.c,
 * test_faults.c): starting Python, checked evals, iteration counts that shrink under
 * valgrind, and the host-function callbacks the stress test mixes in. */
#ifndef PYHOST_TEST_RELIAB_H
#define PYHOST_TEST_RELIAB_H

#include "pyhost.h"

#include <stdatomic.h>
#include <stdint.h>

/* Starts check_lib or exits 1 with the message. */
pyhost *reliab_start(void);
/* want, or want / 50 (at least 20) when running under valgrind. */
int reliab_iterations(int want);
int reliab_under_valgrind(void);

/* Evaluates expr; counts a failure unless it is the int want. */
void reliab_expect_int(pyhost *h, const char *expr, int64_t want);
/* The int value of expr (-1 and a counted failure on error). */
int64_t reliab_eval_int(pyhost *h, const char *expr);
/* 1 when expr evaluates to a true bool/int. */
int reliab_eval_true(pyhost *h, const char *expr);

/* Waiting for a condition instead of sampling it once: the scheduler owes a thread
 * nothing on a loaded 2-core CI box, so every wait polls (1 ms sleeps) up to a
 * generous bound and counts a failure naming what never happened.
 * reliab_wait: until cond(ctx) is nonzero.  reliab_wait_true: until expr evaluates
 * true, or *stop (when not NULL) becomes nonzero.  Both return 1 when it happened. */
enum { RELIAB_WAIT_SECONDS = 120 };
int reliab_wait(int (*cond)(void *ctx), void *ctx, const char *what);
int reliab_wait_true(pyhost *h, const char *expr, _Atomic int *stop);

/* Host functions (issue 3's API) for the stress test; no-ops while that API is not
 * there.  reliab_callback_step returns PYHOST_OK or the failing status. */
int reliab_callbacks_available(void);
void reliab_callback_setup(pyhost *h);
int reliab_callback_step(pyhost *h, int thread, int i);
/* Calls pyhost_finalize from inside a host function: returns the status the
 * function saw (PYHOST_MISUSE expected), or PYHOST_ERROR when the call failed. */
int reliab_finalize_from_callback(pyhost *h);

#endif
