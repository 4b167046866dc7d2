/* sync.h: the one blocking primitive pyhost needs from the platform: a short sleep,
 * for pyhost_finalize waiting until calls in flight on other threads have returned.
 * sync_posix.c and sync_win32.c implement it. */
#ifndef PYHOST_SYNC_H
#define PYHOST_SYNC_H

/* Sleeps for about ms milliseconds (at least the scheduler's tick). */
void pyhost__sleep_ms(unsigned ms);

#endif
