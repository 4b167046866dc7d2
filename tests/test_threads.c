/* test_threads.c: tier 2, threads, interrupts and calls racing finalize.
 * Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "reliab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- stress: many threads, many mixed calls ---- */

struct stress {
  pyhost *h;
  int id, iters;
  int ok;        /* calls that gave the expected result */
  char why[512]; /* first failure */
};

static void stress_fail(struct stress *s, const char *what, int i, int rc) {
  if (!s->why[0])
    snprintf(s->why, sizeof s->why, "thread %d, iteration %d: %s: %s: %s", s->id, i, what,
             pyhost_status_name(rc), pyhost_errmsg(s->h));
}

/* One iteration: an eval, an exec and a read-back in a per-thread name, a raised
 * exception every 16th time (its message must be this thread's), a container
 * result every 8th.  Returns 1 when every result was right. */
static int stress_step(struct stress *s, int i) {
  char src[128];
  int64_t got = -1;
  pyhost_value *v = NULL;
  snprintf(src, sizeof src, "%d * 1000003 + %d", s->id, i);
  int rc = pyhost_eval(s->h, src, &v);
  if (rc || pyhost_value_to_int(s->h, v, &got) || got != (int64_t)s->id * 1000003 + i)
    return stress_fail(s, "eval", i, rc), pyhost_value_free(v), 0;
  pyhost_value_free(v);
  switch (i % 4) {
  case 0:
    snprintf(src, sizeof src, "t%d = %d", s->id, i);
    if ((rc = pyhost_exec(s->h, src, NULL))) return stress_fail(s, "exec", i, rc), 0;
    snprintf(src, sizeof src, "t%d", s->id);
    rc = pyhost_eval(s->h, src, &v);
    if (rc || pyhost_value_to_int(s->h, v, &got) || got != i)
      return stress_fail(s, "read-back", i, rc), pyhost_value_free(v), 0;
    pyhost_value_free(v);
    break;
  case 1:
    if (i % 16 == 1) {
      snprintf(src, sizeof src, "raise ValueError('thread %d step %d')", s->id, i);
      rc = pyhost_exec(s->h, src, NULL);
      snprintf(src, sizeof src, "ValueError: thread %d step %d", s->id, i);
      if (rc != PYHOST_PYEXC || !strstr(pyhost_errmsg(s->h), src))
        return stress_fail(s, "exception", i, rc), 0;
    }
    break;
  case 2:
    if (i % 8 == 2) {
      snprintf(src, sizeof src, "[%d, 'x' * 3, {'k': (None, 1.5)}]", i);
      rc = pyhost_eval(s->h, src, &v);
      const char *str = NULL;
      if (rc || pyhost_value_count(v) != 3 ||
          pyhost_value_to_str(s->h, pyhost_value_item(v, 1), &str, NULL) || strcmp(str, "xxx"))
        return stress_fail(s, "container", i, rc), pyhost_value_free(v), 0;
      pyhost_value_free(v);
    }
    break;
  default:
    if ((rc = reliab_callback_step(s->h, s->id, i))) return stress_fail(s, "callback", i, rc), 0;
    break;
  }
  return 1;
}

/* Odd threads run attached (pyhost_thread_attach), even ones make a thread state per
 * call: both kinds at once. */
static void *stress_main(void *arg) {
  struct stress *s = arg;
  int rc, attach = s->id % 2;
  if (attach && (rc = pyhost_thread_attach(s->h))) return stress_fail(s, "attach", 0, rc), NULL;
  for (int i = 0; i < s->iters; i++) {
    if (!stress_step(s, i)) break;
    s->ok++;
  }
  if (attach && (rc = pyhost_thread_detach(s->h))) stress_fail(s, "detach", s->iters, rc);
  return NULL;
}

TEST_CASE(stress_8_threads) {
  enum { N = 8 };
  pyhost *h = reliab_start();
  int iters = reliab_iterations(10000);
  reliab_callback_setup(h);
  pthread_t t[N];
  struct stress s[N];
  for (int i = 0; i < N; i++) {
    s[i] = (struct stress){.h = h, .id = i + 1, .iters = iters};
    CHECK(pthread_create(&t[i], NULL, stress_main, &s[i]) == 0);
  }
  long total = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    if (s[i].why[0]) fprintf(stderr, "%s\n", s[i].why);
    CHECK(s[i].ok == iters && !s[i].why[0]);
    total += s[i].ok;
  }
  reliab_expect_int(h, "1 + 1", 2);
  printf("threads x iterations held: %d x %d (%ld mixed iterations, callbacks: %s)\n", N, iters,
         total, reliab_callbacks_available() ? "yes" : "not available");
  pyhost_free(h);
}

/* ---- a long computation does not starve the other threads ---- */

struct spinner {
  pyhost *h;
  const char *code;
  int eval;          /* run code with pyhost_eval instead of pyhost_exec */
  _Atomic int done;
  int rc;
  char msg[4096];
};

static void *spinner_main(void *arg) {
  struct spinner *sp = arg;
  if (sp->eval) {
    pyhost_value *v = NULL;
    sp->rc = pyhost_eval(sp->h, sp->code, &v);
    pyhost_value_free(v);
  } else {
    sp->rc = pyhost_exec(sp->h, sp->code, "<spinner>");
  }
  snprintf(sp->msg, sizeof sp->msg, "%s", pyhost_errmsg(sp->h));
  /* the thread's next call must not see the interrupt */
  sp->rc = sp->rc * 100 + pyhost_exec(sp->h, "spinner_after = 1", NULL);
  atomic_store(&sp->done, 1);
  return NULL;
}

/* Starts code on a thread and returns once `flag` is true in __main__ (or the code
 * ended early, which the caller's checks then report). */
static void spin_up(struct spinner *sp, pthread_t *t, const char *flag) {
  CHECK(pthread_create(t, NULL, spinner_main, sp) == 0);
  char expr[128];
  snprintf(expr, sizeof expr, "globals().get('%s', False)", flag);
  reliab_wait_true(sp->h, expr, &sp->done);
}

static const char *const spin_forever =
    "spinning = True\n"
    "n = 0\n"
    "while True:\n"
    "    n += 1\n";

struct quick {
  pyhost *h;
  int id, ok;
};

static void *quick_main(void *arg) {
  struct quick *q = arg;
  for (int i = 0; i < 500; i++) {
    char src[64];
    snprintf(src, sizeof src, "%d + %d", q->id, i);
    pyhost_value *v = NULL;
    int64_t got = -1;
    if (pyhost_eval(q->h, src, &v) == PYHOST_OK && pyhost_value_to_int(q->h, v, &got) == PYHOST_OK &&
        got == q->id + i)
      q->ok++;
    pyhost_value_free(v);
  }
  return NULL;
}

TEST_CASE(long_computation_does_not_starve_others) {
  pyhost *h = reliab_start();
  struct spinner sp = {.h = h, .code = spin_forever};
  pthread_t st;
  spin_up(&sp, &st, "spinning");
  int64_t n1 = reliab_eval_int(h, "n");
  enum { N = 4 };
  pthread_t t[N];
  struct quick q[N];
  for (int i = 0; i < N; i++) {
    q[i] = (struct quick){h, i + 1, 0};
    CHECK(pthread_create(&t[i], NULL, quick_main, &q[i]) == 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    CHECK(q[i].ok == 500);
  }
  /* every quick thread finished while the loop still ran, and the loop moves on: how
   * soon is the scheduler's business (one read could come before the spinning thread
   * ran again), so wait for it */
  CHECK(!atomic_load(&sp.done));
  char moved[64];
  snprintf(moved, sizeof moved, "n > %lld", (long long)n1);
  CHECK(reliab_wait_true(h, moved, NULL));
  int64_t n2 = reliab_eval_int(h, "n");
  CHECK(n2 > n1);
  printf("the long loop counted %lld -> %lld while 4 threads made 2000 calls\n",
         (long long)n1, (long long)n2);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  pthread_join(st, NULL);
  CHECK(sp.rc == PYHOST_INTERRUPTED * 100 + PYHOST_OK);
  pyhost_free(h);
}

/* ---- interrupts ---- */

static void interrupt_case(const char *code, int eval) {
  pyhost *h = reliab_start();
  struct spinner sp = {.h = h, .code = code, .eval = eval};
  pthread_t t;
  spin_up(&sp, &t, "spinning");
  CHECK(!atomic_load(&sp.done));
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  pthread_join(t, NULL);
  if (sp.rc != PYHOST_INTERRUPTED * 100) fprintf(stderr, "rc %d: %s\n", sp.rc, sp.msg);
  CHECK(sp.rc == PYHOST_INTERRUPTED * 100 + PYHOST_OK);
  CHECK_CONTAINS(sp.msg, "interrupted by pyhost_interrupt");
  CHECK_CONTAINS(sp.msg, "Interrupted");
  reliab_expect_int(h, "spinner_after", 1);
  reliab_expect_int(h, "6 * 7", 42); /* the runtime stays usable */
  pyhost_free(h);
}

TEST_CASE(interrupt_stops_an_infinite_loop) {
  interrupt_case(spin_forever, 0);
}

TEST_CASE(interrupt_stops_an_eval) {
  /* a generator's loop runs bytecode; (spinning := ...) needs 3.8, so set it by hand */
  interrupt_case("globals().__setitem__('spinning', True) or any(x for x in iter(int, 1))", 1);
}

TEST_CASE(interrupt_is_not_caught_by_except_exception) {
  interrupt_case("spinning = True\n"
                 "while True:\n"
                 "    try:\n"
                 "        while True: pass\n"
                 "    except Exception:\n"
                 "        pass\n",
                 0);
}

TEST_CASE(interrupt_with_nothing_running_changes_nothing) {
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  reliab_expect_int(h, "sum(range(100000)) % 7", (int64_t)(4999950000LL % 7));
  CHECK_RC(pyhost_exec(h, "for i in range(200000): pass", NULL), PYHOST_OK);
  CHECK_RC(pyhost_interrupt(NULL), PYHOST_MISUSE);
  pyhost_finalize(h);
  CHECK_RC(pyhost_interrupt(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_free(h);
}

TEST_CASE(interrupt_reaches_every_running_thread) {
  enum { N = 3 };
  pyhost *h = reliab_start();
  struct spinner sp[N];
  pthread_t t[N];
  for (int i = 0; i < N; i++) {
    static const char *const codes[N] = {
        "spin0 = True\nwhile True: pass\n", "spin1 = True\nwhile True: pass\n",
        "spin2 = True\nwhile True: pass\n"};
    char flag[16];
    snprintf(flag, sizeof flag, "spin%d", i);
    sp[i] = (struct spinner){.h = h, .code = codes[i]};
    spin_up(&sp[i], &t[i], flag);
  }
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    CHECK(sp[i].rc == PYHOST_INTERRUPTED * 100 + PYHOST_OK);
  }
  pyhost_free(h);
}

/* A Python exception of the same name raised by the code itself is not an interrupt. */
TEST_CASE(code_cannot_fake_an_interrupt) {
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_exec(h, "class Interrupted(BaseException): pass\nraise Interrupted()", NULL),
           PYHOST_PYEXC);
  CHECK_RC(pyhost_exec(h, "raise KeyboardInterrupt", NULL), PYHOST_PYEXC);
  pyhost_free(h);
}

/* ---- calls racing pyhost_finalize ---- */

struct racer {
  pyhost *h;
  int id;
  _Atomic long calls;
  int bad;             /* a status no racing call may give */
  char why[512];
};

static void *racer_main(void *arg) {
  struct racer *r = arg;
  for (long i = 0;; i++) {
    pyhost_value *v = NULL;
    int rc;
    switch (i % 4) {
    case 0: rc = pyhost_eval(r->h, "object()", &v); break; /* an object value to free */
    case 1: rc = pyhost_exec(r->h, "x = [i for i in range(50)]", NULL); break;
    case 2: rc = pyhost_interrupt(r->h); break;
    default: rc = pyhost_eval(r->h, "'abc'.upper()", &v); break;
    }
    pyhost_value_free(v); /* may run after finalize: must then leave Python alone */
    if (rc == PYHOST_MISUSE) {
      if (!strstr(pyhost_errmsg(r->h), "finaliz")) {
        r->bad = rc;
        snprintf(r->why, sizeof r->why, "%s", pyhost_errmsg(r->h));
      }
      return NULL;
    }
    /* racing interrupts (case 2 on other threads) may stop any call */
    if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) {
      r->bad = rc;
      snprintf(r->why, sizeof r->why, "%s: %s", pyhost_status_name(rc), pyhost_errmsg(r->h));
      return NULL;
    }
    atomic_fetch_add(&r->calls, 1);
  }
}

static int racer_started(void *arg) {
  struct racer *r = arg;
  return atomic_load(&r->calls) >= 50 || r->bad;
}

TEST_CASE(calls_racing_finalize) {
  enum { N = 6 };
  pyhost *h = reliab_start();
  pthread_t t[N];
  struct racer r[N];
  for (int i = 0; i < N; i++) {
    r[i] = (struct racer){.h = h, .id = i};
    CHECK(pthread_create(&t[i], NULL, racer_main, &r[i]) == 0);
  }
  /* finalize while every racer is in its loop */
  for (int i = 0; i < N; i++) reliab_wait(racer_started, &r[i], "a racer's first 50 calls");
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  long total = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    if (r[i].bad) fprintf(stderr, "racer %d: %s\n", i, r[i].why);
    CHECK(r[i].bad == 0);
    total += r[i].calls;
  }
  printf("%d threads made %ld calls, then finalize raced them\n", N, total);
  pyhost_free(h);
}

struct looper {
  pyhost *h;
  int rc;
};

static void *looper_main(void *arg) {
  struct looper *l = arg;
  l->rc = pyhost_exec(l->h, "looping = True\nwhile True: pass\n", NULL);
  return NULL;
}

/* Runs fn(arg) on a thread, finalizes once `flag` is true in __main__, joins it. */
static void finalize_while_running(pyhost *h, void *(*fn)(void *), void *arg, const char *flag) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, fn, arg) == 0);
  char expr[128];
  snprintf(expr, sizeof expr, "globals().get('%s', False)", flag);
  reliab_wait_true(h, expr, NULL);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pthread_join(t, NULL);
}

TEST_CASE(finalize_interrupts_and_waits_for_running_calls) {
  pyhost *h = reliab_start();
  struct looper l = {h, -1};
  finalize_while_running(h, looper_main, &l, "looping");
  CHECK_RC(l.rc, PYHOST_INTERRUPTED);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1", &v), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_free(h);
}

TEST_CASE(finalize_from_a_host_function_is_refused) {
  if (!reliab_callbacks_available()) SKIP("host functions are not built yet");
  pyhost *h = reliab_start();
  CHECK_RC(reliab_finalize_from_callback(h), PYHOST_MISUSE);
  reliab_expect_int(h, "2 + 2", 4); /* still running */
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost_free(h);
}

/* Init with another library while one runs: refused before that library is touched. */
TEST_CASE(second_library_while_running_is_refused) {
  pyhost *h = reliab_start();
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent/libpython3.99.so");
  pyhost *second = NULL;
  CHECK_RC(pyhost_init(c, &second), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(second), "already running");
  CHECK_CONTAINS(pyhost_errmsg(second), pyhost_library_path(h));
  CHECK_RC(pyhost_finalize(second), PYHOST_MISUSE); /* a failed handle finalizes nothing */
  pyhost_free(second);
  pyhost_config_free(c);
  reliab_expect_int(h, "3 * 3", 9);
  pyhost_free(h);
}

/* ---- host threads attached: pyhost_thread_attach / pyhost_thread_detach ---- */

/* Runs fn(h) on a new host thread and returns what it returned. */
struct on_thread {
  pyhost *h;
  int (*fn)(pyhost *h);
  int result;
};
static void *on_thread_main(void *arg) {
  struct on_thread *t = arg;
  t->result = t->fn(t->h);
  return NULL;
}
static int run_on_thread(pyhost *h, int (*fn)(pyhost *h)) {
  struct on_thread t = {h, fn, -1};
  pthread_t id;
  CHECK(pthread_create(&id, NULL, on_thread_main, &t) == 0);
  pthread_join(id, NULL);
  return t.result;
}

/* Python's per-thread state as this thread sees it: L.x of the threading.local L
 * (-1 when this thread's L has none). */
static int64_t local_x(pyhost *h) { return reliab_eval_int(h, "getattr(L, 'x', -1)"); }

/* Not attached: each call has a thread state of its own, so L.x set by one call is
 * gone at the next (CPython's PyGILState rules, what attaching is for). */
static int unattached_calls(pyhost *h) {
  CHECK_RC(pyhost_exec(h, "L.x = 7", NULL), PYHOST_OK);
  CHECK(local_x(h) == -1);
  return 0;
}

/* Attached: the state lasts until the outermost detach, nested attaches included. */
static int attached_calls(pyhost *h) {
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "L.x = 7", NULL), PYHOST_OK);
  CHECK(local_x(h) == 7);
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_OK);
  CHECK(local_x(h) == 7); /* one attach still open */
  if (reliab_eval_true(h, "sys.version_info >= (3, 7)")) {
    CHECK_RC(pyhost_exec(h, "import contextvars; cv.set(5)", NULL), PYHOST_OK);
    CHECK(reliab_eval_int(h, "cv.get(0)") == 5);
  }
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK); /* a scope on an attached thread */
  CHECK(local_x(h) == 7);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_OK);
  CHECK(local_x(h) == -1); /* the outermost detach freed the thread state */
  CHECK_RC(pyhost_thread_detach(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "without a matching pyhost_thread_attach");
  return 0;
}

TEST_CASE(attached_thread_keeps_its_python_state) {
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_exec(h,
                       "import sys, threading\n"
                       "L = threading.local()\n"
                       "if sys.version_info >= (3, 7):\n"
                       "    import contextvars\n"
                       "    cv = contextvars.ContextVar('cv')\n",
                       NULL),
           PYHOST_OK);
  CHECK(run_on_thread(h, unattached_calls) == 0);
  CHECK(run_on_thread(h, attached_calls) == 0);
  /* the initializing thread has its thread state until finalize: attaching there
   * only counts, and detaching frees nothing */
  CHECK_RC(pyhost_exec(h, "L.x = 1", NULL), PYHOST_OK);
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_OK);
  CHECK(local_x(h) == 1);
  pyhost_free(h);
}

TEST_CASE(attach_refuses_bad_handles) {
  CHECK_RC(pyhost_thread_attach(NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_thread_detach(NULL), PYHOST_MISUSE);
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_thread_detach(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "without a matching pyhost_thread_attach");
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK_RC(pyhost_thread_attach(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_free(h);
}

/* Threads that exit attached, and one still attached when finalize runs: Python frees
 * their thread states at finalize (memcheck sees nothing lost), and a detach after
 * finalize only counts down. */
struct parked {
  pyhost *h;
  _Atomic int attached, finalized;
  int detach_rc;
};
static int attach_and_exit(pyhost *h) {
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "L.x = 3", NULL), PYHOST_OK);
  return 0;
}
static void *parked_main(void *arg) {
  struct parked *p = arg;
  CHECK_RC(pyhost_thread_attach(p->h), PYHOST_OK);
  CHECK(reliab_eval_int(p->h, "6 * 7") == 42);
  atomic_store(&p->attached, 1);
  while (!atomic_load(&p->finalized)) usleep(1000); /* finalize does not wait for it */
  p->detach_rc = pyhost_thread_detach(p->h);
  return NULL;
}
static int parked_attached(void *ctx) { return atomic_load(&((struct parked *)ctx)->attached); }

TEST_CASE(attached_threads_at_exit_and_finalize) {
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_exec(h, "import threading; L = threading.local()", NULL), PYHOST_OK);
  for (int i = 0; i < 4; i++) CHECK(run_on_thread(h, attach_and_exit) == 0);
  reliab_expect_int(h, "2 + 3", 5);
  struct parked p = {.h = h, .detach_rc = -1};
  pthread_t id;
  CHECK(pthread_create(&id, NULL, parked_main, &p) == 0);
  CHECK(reliab_wait(parked_attached, &p, "the parked thread attached"));
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  atomic_store(&p.finalized, 1);
  pthread_join(id, NULL);
  CHECK_RC(p.detach_rc, PYHOST_OK);
  pyhost_free(h);
}

/* pyhost_finalize from a thread other than the initializing one, attached or not, is
 * refused with a message (CPython finalizes on its main thread: elsewhere 3.11 waits
 * forever in threading's shutdown and 3.14+ debug builds abort); Python keeps running
 * and the initializing thread finalizes it. */
static int finalize_here(pyhost *h) {
  CHECK_RC(pyhost_exec(h, "import threading; L = threading.local(); L.x = 1", NULL), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "another thread than pyhost_init's");
  CHECK(reliab_eval_int(h, "6 * 7") == 42);
  return 0;
}
static int attach_and_finalize_here(pyhost *h) {
  CHECK_RC(pyhost_thread_attach(h), PYHOST_OK);
  finalize_here(h);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_OK);
  return 0;
}

TEST_CASE(finalize_from_another_thread_is_refused) {
  pyhost *h = reliab_start();
  CHECK(run_on_thread(h, finalize_here) == 0);
  CHECK(run_on_thread(h, attach_and_finalize_here) == 0);
  reliab_expect_int(h, "2 + 2", 4);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost_free(h);
}

/* ---- issue 22: late interrupts in a scope, frees and finalize, fork ---- */

/* A thread in a GIL scope calls time.sleep through a prepared call until the main
 * thread's pyhost_interrupt has returned; the interrupt lands mid-sleep, which runs no
 * bytecode to raise it.  Its next, unrelated call in the same scope must not see it. */
struct sleeper {
  pyhost *h;
  int hot;                  /* the call without arguments (the hot path) */
  _Atomic int started, interrupt_returned;
  int bad_rc, after_rc;
  int64_t after;
  char why[512];
};

static void *sleeper_main(void *arg) {
  struct sleeper *s = arg;
  pyhost_callable *sleep = NULL;
  pyhost_value *partial = NULL;
  pyhost_arg a = pyhost_arg_float(0.02);
  int rc = s->hot ? pyhost_eval(s->h, "__import__('functools').partial(__import__('time').sleep, 0.02)",
                                &partial)
                  : PYHOST_OK;
  if (!rc) rc = s->hot ? pyhost_prepare(s->h, partial, &sleep) : pyhost_prepare_name(s->h, "time.sleep", &sleep);
  pyhost_value_free(partial);
  if (!rc) rc = pyhost_gil_enter(s->h);
  atomic_store(&s->started, 1);
  if (rc) {
    s->bad_rc = rc;
    snprintf(s->why, sizeof s->why, "setup: %s", pyhost_errmsg(s->h));
    return NULL;
  }
  while (!atomic_load(&s->interrupt_returned)) {
    rc = pyhost_prepared_call(s->h, sleep, s->hot ? NULL : &a, s->hot ? 0 : 1);
    if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED && !s->bad_rc) {
      s->bad_rc = rc;
      snprintf(s->why, sizeof s->why, "sleep: %s", pyhost_errmsg(s->h));
    }
  }
  pyhost_value *v = NULL;
  s->after_rc = pyhost_eval(s->h, "6 * 7", &v);
  if (s->after_rc) snprintf(s->why, sizeof s->why, "%s", pyhost_errmsg(s->h));
  else pyhost_value_to_int(s->h, v, &s->after);
  pyhost_value_free(v);
  pyhost_gil_leave(s->h);
  pyhost_callable_free(sleep);
  return NULL;
}

static int sleeper_started(void *arg) {
  return atomic_load(&((struct sleeper *)arg)->started);
}

static void late_interrupt_in_scope(int hot) {
  pyhost *h = reliab_start();
  struct sleeper s = {.h = h, .hot = hot};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, sleeper_main, &s) == 0);
  reliab_wait(sleeper_started, &s, "the sleeper's scope");
  /* takes the GIL, which the scope gives up only inside time.sleep */
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  atomic_store(&s.interrupt_returned, 1);
  pthread_join(t, NULL);
  if (s.bad_rc || s.after_rc) fprintf(stderr, "%s\n", s.why);
  CHECK_RC(s.bad_rc, PYHOST_OK);
  CHECK_RC(s.after_rc, PYHOST_OK);
  CHECK(s.after == 42);
  pyhost_free(h);
}

TEST_CASE(late_interrupt_in_scope_does_not_hit_the_next_call) {
  late_interrupt_in_scope(0);
}

TEST_CASE(late_interrupt_in_scope_hot_path) {
  late_interrupt_in_scope(1);
}

/* pyhost_callable_free of a callable whose call is running as finalize begins: the
 * free must not return (nor free) before the call has left; the call outlives the
 * interrupt finalize sends by a second. */
struct freer {
  pyhost *h;
  pyhost_callable *c;
  int caught[2];    /* the call writes a byte into it when finalize's interrupt reached it */
  int pipe[2];      /* the call writes a byte into it as its Python code ends */
  int ended_before_free; /* whether that byte was there when the free returned */
  int call_rc;
};

static void *finalize_caller_main(void *arg) {
  struct freer *f = arg;
  f->call_rc = pyhost_prepared_call(f->h, f->c, NULL, 0);
  return NULL;
}

static void *freer_main(void *arg) {
  struct freer *f = arg;
  char b;
  /* finalize closes the gate and interrupts in one GIL hold: it no longer takes calls */
  if (read(f->caught[0], &b, 1) != 1) return NULL; /* blocking */
  pyhost_callable_free(f->c);
  f->ended_before_free = read(f->pipe[0], &b, 1) == 1; /* non-blocking */
  return NULL;
}

TEST_CASE(callable_freed_while_running_as_finalize_begins) {
  pyhost *h = reliab_start();
  struct freer f = {.h = h};
  CHECK(pipe(f.pipe) == 0 && pipe(f.caught) == 0);
  CHECK(fcntl(f.pipe[0], F_SETFL, O_NONBLOCK) == 0);
  char code[512];
  snprintf(code, sizeof code,
           "import os, time\n"
           "def lingering():\n"
           "    global started\n"
           "    started = True\n"
           "    try:\n"
           "        while True: time.sleep(0.0005)\n" /* 3.11 and 3.12 do not catch an async */
           "    except BaseException:\n"           /* exception raised at `while True: pass` */
           "        os.write(%d, b'i')\n"
           "        time.sleep(1)\n"
           "        os.write(%d, b'x')\n",
           f.caught[1], f.pipe[1]);
  CHECK_RC(pyhost_exec(h, code, NULL), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "lingering", &f.c), PYHOST_OK);
  pthread_t caller, freer;
  CHECK(pthread_create(&caller, NULL, finalize_caller_main, &f) == 0);
  reliab_wait_true(h, "globals().get('started', False)", NULL);
  CHECK(pthread_create(&freer, NULL, freer_main, &f) == 0);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pthread_join(caller, NULL);
  close(f.caught[1]); /* a call that never caught the interrupt: the freer reads EOF */
  pthread_join(freer, NULL);
  CHECK_RC(f.call_rc, PYHOST_OK); /* the code swallowed the interrupt */
  CHECK(f.ended_before_free == 1);
  close(f.pipe[0]);
  close(f.pipe[1]);
  close(f.caught[0]);
  pyhost_free(h);
}

/* A nested pyhost_gil_enter once finalize has begun answers MISUSE like every call. */
struct scoped {
  pyhost *h;
  int exec_rc, nested_rc, leave_rc;
  char msg[512];
};

static void *scoped_main(void *arg) {
  struct scoped *s = arg;
  if (pyhost_gil_enter(s->h)) return NULL;
  s->exec_rc = pyhost_exec(s->h, "spinning = True\nwhile True: pass\n", NULL);
  s->nested_rc = pyhost_gil_enter(s->h); /* finalize has begun: it interrupted the loop */
  snprintf(s->msg, sizeof s->msg, "%s", pyhost_errmsg(s->h));
  if (s->nested_rc == PYHOST_OK) pyhost_gil_leave(s->h);
  s->leave_rc = pyhost_gil_leave(s->h);
  return NULL;
}

/* Scopes nest: each pyhost_gil_enter is ended by its own pyhost_gil_leave, the inner
 * leave keeps the outer scope (calls still run inside it), and one leave too many is
 * refused. */
TEST_CASE(nested_gil_scopes_count) {
  pyhost *h = reliab_start();
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "x = 6 * 7", "<scope>"), PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK); /* the outer scope, still open until here */
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "without a matching pyhost_gil_enter");
  pyhost_free(h);
}

TEST_CASE(nested_gil_enter_after_finalize_began) {
  pyhost *h = reliab_start();
  struct scoped s = {.h = h, .exec_rc = -1, .nested_rc = -1, .leave_rc = -1};
  finalize_while_running(h, scoped_main, &s, "spinning");
  CHECK_RC(s.exec_rc, PYHOST_INTERRUPTED);
  CHECK_RC(s.nested_rc, PYHOST_MISUSE);
  CHECK_CONTAINS(s.msg, "finaliz");
  CHECK_RC(s.leave_rc, PYHOST_OK);
  pyhost_free(h);
}

/* fork() while another thread is inside a pyhost call: in the child that thread does
 * not exist.  Calls answer MISUSE naming the fork, and finalize and free return. */
TEST_CASE(fork_while_another_thread_calls) {
  pyhost *h = reliab_start();
  struct spinner sp = {.h = h, .code = "import time\nsleeping = True\nwhile True: time.sleep(0.001)\n"};
  pthread_t t;
  spin_up(&sp, &t, "sleeping");
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    alarm(60); /* a hang ends the child with SIGALRM, which the parent reports */
    pyhost_value *v = NULL;
    int rc = pyhost_eval(h, "1 + 1", &v);
    if (rc != PYHOST_MISUSE || !strstr(pyhost_errmsg(h), "forked")) {
      fprintf(stderr, "child: eval answered %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(h));
      _exit(3);
    }
    if ((rc = pyhost_finalize(h)) != PYHOST_OK) {
      fprintf(stderr, "child: finalize answered %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(h));
      _exit(4);
    }
    pyhost_free(h);
    _exit(0);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  if (WIFSIGNALED(st)) fprintf(stderr, "the child died of signal %d\n", WTERMSIG(st));
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  /* the parent goes on as before */
  reliab_expect_int(h, "6 * 7", 42);
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  pthread_join(t, NULL);
  pyhost_free(h);
}

/* A child forked while no other thread was inside a call keeps a usable Python and
 * finalizes it. */
TEST_CASE(fork_while_idle_child_keeps_python) {
  pyhost *h = reliab_start();
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    alarm(60);
    pyhost_value *v = NULL;
    int64_t i = 0;
    if (pyhost_eval(h, "6 * 7", &v) || pyhost_value_to_int(h, v, &i) || i != 42) _exit(3);
    pyhost_value_free(v);
    if (pyhost_finalize(h) != PYHOST_OK) _exit(4);
    pyhost_free(h);
    _exit(0);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  reliab_expect_int(h, "6 * 7", 42);
  pyhost_free(h);
}
