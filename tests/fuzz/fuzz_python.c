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
static _Atomic long watched;   /* generation of the eval being watched; 0: none */

static void *watchdog(void *arg) {
  (void)arg;
  for (;;) {
    long seen = atomic_load(&watched);
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    if (seen && atomic_load(&watched) == seen) pyhost_interrupt(py);
  }
  return NULL;
}

void fuzz_watch(int on) {
  static long generation;
  atomic_store(&watched, on ? ++generation : 0);
}

static void start(void) {
  const char *lib = getenv("PYHOST_FUZZ_PYTHON");
  if (!lib || !lib[0]) lib = PYHOST_FUZZ_DEFAULT_PYTHON;
  pyhost_config *c = pyhost_config_new();
  if (lib[0]) pyhost_config_set_library(c, lib);
  int rc = pyhost_init(c, &py);
  pyhost_config_free(c);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "fuzz: cannot start Python %s: %s\n", lib, pyhost_errmsg(py));
    abort();
  }
  pthread_t t;
  pthread_create(&t, NULL, watchdog, NULL);
  pthread_detach(t);
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
