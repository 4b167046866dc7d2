/* sync_win32.c: sync.h on Windows. */
#include "sync.h"

#include "alloc.h"

#include <process.h>
#include <stdatomic.h>
#include <windows.h>

void pyhost__sleep_ms(unsigned ms) {
  Sleep(ms);
}

void pyhost__on_fork_child(void (*fn)(void)) {
  (void)fn; /* Windows processes do not fork */
}

/* A fiber-local slot whose callback runs fn when a thread (a fiber) with a value ends,
 * as a pthread key's destructor does; made by the first thread to come.  fn is the
 * callback itself: on x64, the only Windows pyhost builds for, WINAPI is the C
 * convention. */
static int exit_hook_made(struct pyhost__thread_exit *e, void (*fn)(void *)) {
  int state = atomic_load(&e->state);
  if (state == 0 && atomic_compare_exchange_strong(&e->state, &state, 1)) {
    DWORD slot = FlsAlloc((PFLS_CALLBACK_FUNCTION)(void (*)(void))fn);
    e->key = slot;
    atomic_store(&e->state, state = slot != FLS_OUT_OF_INDEXES ? 2 : 3);
  }
  while (state == 1) state = atomic_load(&e->state), SwitchToThread();
  return state == 2;
}

int pyhost__thread_exit_set(struct pyhost__thread_exit *e, void (*fn)(void *), void *value) {
  if (!exit_hook_made(e, fn)) return -1;
  return FlsSetValue((DWORD)e->key, value) ? 0 : -1;
}

void pyhost__thread_exit_delete(struct pyhost__thread_exit *e) {
  int made = 2;
  if (atomic_compare_exchange_strong(&e->state, &made, 0)) FlsFree((DWORD)e->key);
}

int64_t pyhost__clock_ms(void) {
  return (int64_t)GetTickCount64();
}

struct pyhost__monitor {
  SRWLOCK lock;
  CONDITION_VARIABLE cv;
};

struct pyhost__monitor *pyhost__monitor_new(void) {
  struct pyhost__monitor *m = pyhost__calloc(1, sizeof *m);
  if (m) {
    InitializeSRWLock(&m->lock);
    InitializeConditionVariable(&m->cv);
  }
  return m;
}

void pyhost__monitor_free(struct pyhost__monitor *m) {
  pyhost__free(m); /* SRW locks and condition variables own nothing */
}

void pyhost__monitor_enter(struct pyhost__monitor *m) {
  AcquireSRWLockExclusive(&m->lock);
}

void pyhost__monitor_leave(struct pyhost__monitor *m) {
  ReleaseSRWLockExclusive(&m->lock);
}

int pyhost__monitor_wait(struct pyhost__monitor *m, int64_t deadline) {
  DWORD ms = (DWORD)pyhost__ms_until(deadline, INFINITE);
  if (!ms) return 1;
  SleepConditionVariableSRW(&m->cv, &m->lock, ms, 0);
  return deadline != PYHOST__FOREVER && pyhost__clock_ms() >= deadline;
}

void pyhost__monitor_notify(struct pyhost__monitor *m) {
  WakeAllConditionVariable(&m->cv);
}

struct pyhost__thread_handle {
  HANDLE t;
};

struct start {
  void (*fn)(void *);
  void *arg;
};

static unsigned __stdcall trampoline(void *p) {
  struct start s = *(struct start *)p;
  pyhost__free(p);
  s.fn(s.arg);
  return 0;
}

int pyhost__thread_start(void (*fn)(void *), void *arg, int detached,
                         struct pyhost__thread_handle **out) {
  struct start *s = pyhost__malloc(sizeof *s);
  struct pyhost__thread_handle *h = detached ? NULL : pyhost__malloc(sizeof *h);
  if (!s || (!detached && !h)) {
    pyhost__free(s);
    pyhost__free(h);
    return -1;
  }
  s->fn = fn;
  s->arg = arg;
  /* Windows signals (the C runtime's) are not sent to threads: nothing to block */
  uintptr_t t = _beginthreadex(NULL, 0, trampoline, s, 0, NULL);
  if (!t) {
    pyhost__free(s);
    pyhost__free(h);
    return -1;
  }
  if (detached) CloseHandle((HANDLE)t);
  else {
    h->t = (HANDLE)t;
    *out = h;
  }
  return 0;
}

void pyhost__thread_join(struct pyhost__thread_handle *t) {
  if (!t) return;
  WaitForSingleObject(t->t, INFINITE);
  CloseHandle(t->t);
  pyhost__free(t);
}
