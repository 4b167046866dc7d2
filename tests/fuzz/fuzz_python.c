/* fuzz_python.c: see fuzz_python.h. */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_python.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef PYHOST_FUZZ_DEFAULT_PYTHON
#  define PYHOST_FUZZ_DEFAULT_PYTHON ""
#endif

static pyhost *py;
static _Atomic long long deadline_ms; /* of the running unit; 0: none */

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *watchdog(void *arg) {
  (void)arg;
  for (;;) {
    struct timespec ts = {0, 50 * 1000000};
    nanosleep(&ts, NULL);
    long long d = atomic_load(&deadline_ms);
    if (d && now_ms() > d) pyhost_interrupt(py);
  }
  return NULL;
}

void fuzz_unit_begin(unsigned budget_ms) { atomic_store(&deadline_ms, now_ms() + budget_ms); }

int fuzz_unit_expired(void) {
  long long d = atomic_load(&deadline_ms);
  return d && now_ms() > d;
}

void fuzz_unit_end(void) { atomic_store(&deadline_ms, 0); }

void fuzz_watch(int on) {
  if (on) fuzz_unit_begin(1000);
  else fuzz_unit_end();
}

const char *fuzz_python_library(void) {
  const char *lib = getenv("PYHOST_FUZZ_PYTHON");
  return lib && lib[0] ? lib : PYHOST_FUZZ_DEFAULT_PYTHON;
}

void fuzz_python_adopt(pyhost *h) {
  py = h;
  int rc = pyhost_exec(py,
                       "import time\n"
                       "def _fuzz_sleep(secs, _sleep=time.sleep, _now=time.monotonic):\n"
                       "    if not secs > 0.02:\n" /* its errors are time.sleep's own */
                       "        return _sleep(secs)\n"
                       "    end = _now() + secs\n"
                       "    while _now() < end:\n"
                       "        _sleep(min(end - _now(), 0.02))\n"
                       "time.sleep = _fuzz_sleep\n"
                       "del _fuzz_sleep, time\n",
                       "<fuzz setup>");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "fuzz: setup: %s\n", pyhost_errmsg(py));
    abort();
  }
  pthread_t t;
  pthread_create(&t, NULL, watchdog, NULL);
  pthread_detach(t);
}

static void start(void) {
  const char *lib = fuzz_python_library();
  pyhost_config *c = pyhost_config_new();
  if (lib[0]) pyhost_config_set_library(c, lib);
  pyhost *h = NULL;
  int rc = pyhost_init(c, &h);
  pyhost_config_free(c);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "fuzz: cannot start Python %s: %s\n", lib, pyhost_errmsg(h));
    abort();
  }
  fuzz_python_adopt(h);
}

pyhost *fuzz_python_full(void) {
  if (!py) start();
  return py;
}

pyhost *fuzz_python(void) {
  if (py) return py;
  start();
  int rc = pyhost_exec(py,
                   "import traceback\n" /* pyhost's message formatting, imported once */
                   "__builtins__ = {k: getattr(__builtins__, k) for k in (\n"
                   "    'len', 'str', 'int', 'float', 'bytes', 'bytearray', 'list', 'tuple',\n"
                   "    'dict', 'set', 'frozenset', 'bool', 'repr', 'isinstance', 'min',\n"
                   "    'max', 'abs', 'chr', 'ord', 'slice', 'object', 'type', 'None',\n"
                   "    'True', 'False', 'Exception', 'BaseException', 'ValueError',\n"
                   "    'TypeError', 'KeyError', 'SystemExit', 'KeyboardInterrupt')}\n",
                   "<fuzz setup>");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "fuzz: setup: %s\n", pyhost_errmsg(py));
    abort();
  }
  return py;
}
