/* test_fastpath.c: tier 2, the fast paths behind the benchmarks: host-held GIL scopes
 * (pyhost_gil_enter/leave) and pyhost_eval's compiled-expression cache.
 * Arguments: CASE LIB VERSION.  White-box: reads the cache's hit counters. */
#define _GNU_SOURCE
#include "internal.h"
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static pyhost *start(void) { return check_start(NULL); }

static int64_t eval_int(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t i = -12345;
  int rc = pyhost_eval(h, expr, &v);
  if (rc != PYHOST_OK) fprintf(stderr, "eval(%s): %s\n", expr, pyhost_errmsg(h));
  CHECK_RC(rc, PYHOST_OK);
  CHECK_RC(pyhost_value_to_int(h, v, &i), PYHOST_OK);
  pyhost_value_free(v);
  return i;
}

TEST_CASE(gil_scope_nests) {
  pyhost *h = start();
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42); /* still inside the outer scope */
  CHECK_RC(pyhost_exec(h, "import threading; x = threading.current_thread().name", NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK(eval_int(h, "6 * 7") == 42); /* outside: pyhost takes the GIL itself again */
  pyhost_free(h);
}

TEST_CASE(gil_scope_misuse) {
  CHECK_RC(pyhost_gil_enter(NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_gil_leave(NULL), PYHOST_MISUSE);
  pyhost *h = start();
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "without a matching pyhost_gil_enter");
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "leave it first");
  CHECK(eval_int(h, "1 + 1") == 2); /* the refused finalize left Python running */
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_free(h);
}

static atomic_int other_done;

static void *other_thread(void *arg) {
  pyhost *h = arg;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "2 + 3", &v);
  pyhost_value_free(v);
  atomic_store(&other_done, rc == PYHOST_OK ? 1 : -1);
  return NULL;
}

/* A scope really holds the GIL: another thread's call waits until it is left. */
TEST_CASE(gil_scope_holds_gil) {
  pyhost *h = start();
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_thread, h) == 0);
  usleep(200 * 1000);
  CHECK(atomic_load(&other_done) == 0);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_OK);
  pthread_join(t, NULL);
  CHECK(atomic_load(&other_done) == 1);
  pyhost_free(h);
}

TEST_CASE(eval_cache_hits) {
  pyhost *h = start();
  unsigned long hits, misses;
  CHECK_RC(pyhost_exec(h, "x = 1", NULL), PYHOST_OK);
  CHECK(eval_int(h, "x * 2") == 2);
  CHECK_RC(pyhost_exec(h, "x = 5", NULL), PYHOST_OK);
  CHECK(eval_int(h, "x * 2") == 10); /* cached code, fresh namespace values */
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 1);
  /* a syntax error is never cached: it fails the same way every time */
  for (int i = 0; i < 2; i++) {
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_eval(h, "1 +", &v), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
    CHECK(v == NULL);
  }
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 3);
  pyhost_free(h);
}

TEST_CASE(eval_cache_evicts) {
  pyhost *h = start();
  unsigned long hits, misses, h0, m0;
  char expr[64];
  CHECK(eval_int(h, "1000") == 1000);
  /* 200 distinct expressions push "1000" out of the 64 slots */
  for (int i = 0; i < 200; i++) {
    snprintf(expr, sizeof expr, "%d + 1", i);
    CHECK(eval_int(h, expr) == i + 1);
  }
  pyhost__eval_cache_stats(&h0, &m0);
  CHECK(h0 == 0 && m0 == 201);
  CHECK(eval_int(h, "1000") == 1000);
  CHECK(eval_int(h, "199 + 1") == 200); /* the most recent ones stay */
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 202);
  /* a long source is evaluated right but not kept */
  size_t n = 10000;
  char *big = malloc(n + 1);
  memset(big, 'a', n);
  memcpy(big, "len('", 5);
  memcpy(big + n - 2, "')", 3);
  CHECK(eval_int(h, big) == (int64_t)(n - 7));
  CHECK(eval_int(h, big) == (int64_t)(n - 7));
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 1 && misses == 204);
  free(big);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost__eval_cache_stats(&hits, &misses);
  CHECK(hits == 0 && misses == 0); /* finalize dropped the code objects */
  pyhost_free(h);
}

/* Containers converted from Python keep their items in one slab: mixed items, big
 * ints, subclasses and nesting read back exactly, and freeing them is clean (memcheck). */
TEST_CASE(slab_conversion) {
  pyhost *h = start();
  CHECK_RC(pyhost_exec(h, "class I(int): pass\n"
                          "v = [1, -1, 2**70, -2**70, 'a', b'b', [3, None, (4.5,)], "
                          "{'k': [1, 2], 7: {}}, True, I(3), 1.25, object]\n", NULL),
           PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "v", &v), PYHOST_OK);
  CHECK(pyhost_value_count(v) == 12);
  const char *r = pyhost_value_repr(h, v);
  pyhost_value *want = NULL;
  CHECK_RC(pyhost_eval(h, "repr(v)", &want), PYHOST_OK);
  const char *ws = NULL;
  size_t wn = 0;
  CHECK_RC(pyhost_value_to_str(h, want, &ws, &wn), PYHOST_OK);
  CHECK_STREQ(r, ws);
  CHECK_STREQ(pyhost_value_type_name(pyhost_value_item(v, 9)), "__main__.I");
  int64_t i = 0;
  CHECK_RC(pyhost_value_to_int(h, pyhost_value_item(v, 2), &i), PYHOST_RANGE);
  /* an item appended in C to a converted list lives outside the slab */
  CHECK_RC(pyhost_value_append(v, pyhost_value_str("c", 1)), PYHOST_OK);
  CHECK(pyhost_value_count(v) == 13);
  pyhost_value *copy = pyhost_value_copy(v);
  CHECK(copy && pyhost_value_count(copy) == 13);
  pyhost_value_free(copy);
  pyhost_value_free(want);
  pyhost_value_free(v);
  pyhost_free(h);
}
