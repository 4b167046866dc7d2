/* sync_posix.c: sync.h on POSIX systems. */
#define _POSIX_C_SOURCE 200809L
#include "sync.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

void pyhost__sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void pyhost__on_fork_child(void (*fn)(void)) {
  (void)pthread_atfork(NULL, NULL, fn); /* fails only out of memory: then no hook */
}
