/* sync_posix.c: sync.h on POSIX systems. */
#define _POSIX_C_SOURCE 200809L
#include "sync.h"

#include "alloc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

void pyhost__sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void pyhost__on_fork_child(void (*fn)(void)) {
  (void)pthread_atfork(NULL, NULL, fn); /* fails only out of memory: then no hook */
}

/* Made by the first thread to come; another that comes meanwhile waits for it. */
static int exit_hook_made(struct pyhost__thread_exit *e, void (*fn)(void *)) {
  int state = atomic_load(&e->state);
  if (state == 0 && atomic_compare_exchange_strong(&e->state, &state, 1)) {
    pthread_key_t key;
    int ok = pthread_key_create(&key, fn) == 0;
    e->key = ok ? (uintptr_t)key : 0;
    atomic_store(&e->state, state = ok ? 2 : 3);
  }
  while (state == 1) state = atomic_load(&e->state), sched_yield();
  return state == 2;
}

int pyhost__thread_exit_set(struct pyhost__thread_exit *e, void (*fn)(void *), void *value) {
  if (!exit_hook_made(e, fn)) return -1;
  return pthread_setspecific((pthread_key_t)e->key, value) == 0 ? 0 : -1;
}

void pyhost__thread_exit_delete(struct pyhost__thread_exit *e) {
  int made = 2;
  if (atomic_compare_exchange_strong(&e->state, &made, 0)) pthread_key_delete((pthread_key_t)e->key);
}

int64_t pyhost__clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct pyhost__monitor {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* on CLOCK_MONOTONIC, as the deadlines are */
};

struct pyhost__monitor *pyhost__monitor_new(void) {
  struct pyhost__monitor *m = pyhost__calloc(1, sizeof *m);
  pthread_condattr_t a;
  if (!m) return NULL;
  pthread_condattr_init(&a);
#if !defined(__APPLE__)
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
#endif
  if (pthread_mutex_init(&m->mu, NULL) != 0 || pthread_cond_init(&m->cv, &a) != 0) {
    pthread_condattr_destroy(&a);
    pyhost__free(m);
    return NULL;
  }
  pthread_condattr_destroy(&a);
  return m;
}

void pyhost__monitor_free(struct pyhost__monitor *m) {
  if (!m) return;
  pthread_cond_destroy(&m->cv);
  pthread_mutex_destroy(&m->mu);
  pyhost__free(m);
}

void pyhost__monitor_enter(struct pyhost__monitor *m) {
  pthread_mutex_lock(&m->mu);
}

void pyhost__monitor_leave(struct pyhost__monitor *m) {
  pthread_mutex_unlock(&m->mu);
}

int pyhost__monitor_wait(struct pyhost__monitor *m, int64_t deadline) {
  if (deadline == PYHOST__FOREVER) {
    pthread_cond_wait(&m->cv, &m->mu);
    return 0;
  }
#if defined(__APPLE__) /* no monotonic condition clock: a relative wait */
  int64_t left = deadline - pyhost__clock_ms();
  if (left <= 0) return 1;
  struct timespec rel = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
  pthread_cond_timedwait_relative_np(&m->cv, &m->mu, &rel);
#else
  struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
  pthread_cond_timedwait(&m->cv, &m->mu, &ts);
#endif
  return pyhost__clock_ms() >= deadline;
}

void pyhost__monitor_notify(struct pyhost__monitor *m) {
  pthread_cond_broadcast(&m->cv);
}

struct pyhost__thread_handle {
  pthread_t t;
};

struct start {
  void (*fn)(void *);
  void *arg;
};

static void *trampoline(void *p) {
  struct start s = *(struct start *)p;
  pyhost__free(p);
  s.fn(s.arg);
  return NULL;
}

int pyhost__thread_start(void (*fn)(void *), void *arg, int detached,
                         struct pyhost__thread_handle **out) {
  struct start *s = pyhost__malloc(sizeof *s);
  struct pyhost__thread_handle *h = detached ? NULL : pyhost__malloc(sizeof *h);
  pthread_t t;
  if (!s || (!detached && !h)) {
    pyhost__free(s);
    pyhost__free(h);
    return -1;
  }
  s->fn = fn;
  s->arg = arg;
  /* the new thread starts with the creator's mask: block everything around the create */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&t, NULL, trampoline, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    pyhost__free(s);
    pyhost__free(h);
    return -1;
  }
  if (detached) pthread_detach(t);
  else {
    h->t = t;
    *out = h;
  }
  return 0;
}

void pyhost__thread_join(struct pyhost__thread_handle *t) {
  if (!t) return;
  pthread_join(t->t, NULL);
  pyhost__free(t);
}
