/* test_threadlist.c: tier 2, the threads pyhost_interrupt can reach: each thread is
 * listed once, by its first call, and unlisted when it exits (runtime/inflight.c).
 * Arguments: CASE LIB VERSION.  White-box: counts the listed threads. */
#define _GNU_SOURCE
#include "internal.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

static int64_t eval_int(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t i = -12345;
  if (pyhost_eval(h, expr, &v) != PYHOST_OK || pyhost_value_to_int(h, v, &i) != PYHOST_OK) i = -1;
  pyhost_value_free(v);
  return i;
}

/* A thread that makes `calls` calls, says so, waits for leave, makes `again` calls
 * more and exits. */
struct caller {
  pyhost *h;
  int attach; /* keeps its Python thread state between calls (pyhost_thread_attach) */
  int calls, again, ok, ok_again;
  _Atomic int done, leave;
};

static void *caller_main(void *arg) {
  struct caller *c = arg;
  if (c->attach && pyhost_thread_attach(c->h) != PYHOST_OK) c->ok = -1000;
  for (int i = 0; i < c->calls; i++) c->ok += eval_int(c->h, "6 * 7") == 42;
  atomic_store(&c->done, 1);
  while (!atomic_load(&c->leave)) usleep(1000);
  for (int i = 0; i < c->again; i++) c->ok_again += eval_int(c->h, "sum(range(1000))") == 499500;
  if (c->attach) pyhost_thread_detach(c->h);
  return NULL;
}

/* A thread is listed by its first call, once however many calls it makes, and no
 * longer once it exited (its record freed: ASan and valgrind see a leak otherwise). */
TEST_CASE(thread_record_goes_when_the_thread_exits) {
  pyhost *h = check_start(NULL);
  CHECK(eval_int(h, "1") == 1);
  int base = pyhost__inflight_listed_threads(); /* this thread's */
  CHECK(base == 1);
  struct caller c = {.h = h, .calls = 100};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, caller_main, &c) == 0);
  while (!atomic_load(&c.done)) usleep(1000);
  CHECK(c.ok == 100);
  CHECK(pyhost__inflight_listed_threads() == base + 1);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK); /* it is listed, not inside a call: untouched */
  atomic_store(&c.leave, 1);
  pthread_join(t, NULL);
  CHECK(pyhost__inflight_listed_threads() == base);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK); /* walks no record of a thread that is gone */
  CHECK(eval_int(h, "6 * 7") == 42);
  pyhost_free(h);
}

/* pyhost_interrupt reaches the thread inside a call, and not one that is listed but
 * idle (attached, so that an interrupt sent to it would wait in its thread state):
 * that one's next calls run to their end. */
struct spinner {
  pyhost *h;
  int rc;
};

static void *spinner_main(void *arg) {
  struct spinner *s = arg;
  s->rc = pyhost_exec(s->h, "spinning = True\nwhile True: pass\n", NULL);
  return NULL;
}

TEST_CASE(interrupt_reaches_only_threads_inside_a_call) {
  pyhost *h = check_start(NULL);
  struct caller idle = {.h = h, .attach = 1, .calls = 1, .again = 20};
  pthread_t ti, ts;
  CHECK(pthread_create(&ti, NULL, caller_main, &idle) == 0);
  while (!atomic_load(&idle.done)) usleep(1000);
  struct spinner s = {.h = h, .rc = -1};
  CHECK(pthread_create(&ts, NULL, spinner_main, &s) == 0);
  while (eval_int(h, "int(globals().get('spinning', False))") != 1) usleep(1000);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  pthread_join(ts, NULL);
  CHECK_RC(s.rc, PYHOST_INTERRUPTED);
  /* the idle thread was not sent the interrupt: a call of its own, now, completes */
  atomic_store(&idle.leave, 1);
  pthread_join(ti, NULL);
  CHECK(idle.ok == 1 && idle.ok_again == 20);
  CHECK(pyhost__inflight_listed_threads() == 1);
  pyhost_free(h);
}

/* Many short-lived threads, each making calls and trying a handle of its own (refused:
 * one Python per process), while another thread interrupts again and again: every
 * call answers OK or INTERRUPTED, and every exited thread's record is gone. */
struct churn {
  pyhost *h;
  _Atomic int stop;
  _Atomic int bad;
};

static void *churn_main(void *arg) {
  struct churn *c = arg;
  pyhost *other = NULL;
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, check_lib);
  if (pyhost_init(cfg, &other) != PYHOST_MISUSE) atomic_fetch_add(&c->bad, 1);
  pyhost_config_free(cfg);
  pyhost_free(other);
  for (int i = 0; i < 10; i++) {
    int rc = pyhost_exec(c->h, "x = sum(range(50))", NULL);
    if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) atomic_fetch_add(&c->bad, 1);
  }
  return NULL;
}

static void *interrupter_main(void *arg) {
  struct churn *c = arg;
  while (!atomic_load(&c->stop))
    if (pyhost_interrupt(c->h) != PYHOST_OK) atomic_fetch_add(&c->bad, 1);
  return NULL;
}

TEST_CASE(many_threads_come_and_go_while_interrupted) {
  enum { ROUNDS = 20, THREADS = 8 };
  pyhost *h = check_start(NULL);
  CHECK(eval_int(h, "1") == 1);
  struct churn c = {.h = h};
  pthread_t in;
  CHECK(pthread_create(&in, NULL, interrupter_main, &c) == 0);
  for (int r = 0; r < ROUNDS; r++) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, churn_main, &c) == 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  }
  atomic_store(&c.stop, 1);
  pthread_join(in, NULL);
  CHECK(atomic_load(&c.bad) == 0);
  CHECK(pyhost__inflight_listed_threads() == 1); /* this thread: the others exited */
  pyhost_free(h);
}

/* One Python per process, so many instances are many processes: each child starts
 * its own, calls from several threads, and after a fork amid listed threads the
 * child lists only itself. */
static int child_instance(int threads) {
  pyhost *h = check_start(NULL);
  int base = pyhost__inflight_listed_threads();
  pthread_t t[8];
  struct churn c = {.h = h};
  for (int i = 0; i < threads; i++)
    if (pthread_create(&t[i], NULL, churn_main, &c) != 0) return 2;
  for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
  if (atomic_load(&c.bad) || pyhost__inflight_listed_threads() != base) return 3;
  if (eval_int(h, "6 * 7") != 42 || pyhost__inflight_listed_threads() != 1) return 4;
  if (pyhost_finalize(h) != PYHOST_OK) return 5;
  pyhost_free(h);
  return 0;
}

TEST_CASE(many_instances_one_per_process) {
  for (int k = 0; k < 4; k++) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(child_instance(8));
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) fprintf(stderr, "instance %d: status %d\n", k, st);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
}

TEST_CASE(fork_keeps_only_the_forking_threads_record) {
  pyhost *h = check_start(NULL);
  CHECK(eval_int(h, "1") == 1);
  struct caller c = {.h = h, .calls = 3};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, caller_main, &c) == 0);
  while (!atomic_load(&c.done)) usleep(1000);
  CHECK(pyhost__inflight_listed_threads() == 2);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    alarm(60);
    int listed = pyhost__inflight_listed_threads();
    int ok = eval_int(h, "6 * 7") == 42 && pyhost_interrupt(h) == PYHOST_OK;
    _exit(listed == 1 && ok && pyhost_finalize(h) == PYHOST_OK ? 0 : 3);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  atomic_store(&c.leave, 1);
  pthread_join(t, NULL);
  CHECK(pyhost__inflight_listed_threads() == 1);
  pyhost_free(h);
}
