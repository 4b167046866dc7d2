/* bench.h: what the benchmark programs share: the clock, the result line, and the
 * Python workload, so that pyhost, the directly linked baselines and pybind11 run the
 * very same Python code.
 *
 * Every program is `PROGRAM MODE N [LIB]` and prints `RESULT MODE NS_PER_OP` lines;
 * bench/run.py turns them into ratios.  The measured loop of a mode lives in a
 * function named bench_loop (never inlined), so that
 * `valgrind --tool=callgrind --toggle-collect=bench_loop` counts exactly its
 * instructions. */
#ifndef PYHOST_BENCH_H
#define PYHOST_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#  define BENCH_NOINLINE __attribute__((noinline))
#else
#  define BENCH_NOINLINE
#endif

/* Python run once before any mode: the functions for C->Python calls (f(), and
 * f2(a, b) and fk(i, y) with arguments), the expression's variable, a 1 MiB str and
 * a 100 000-element list for the conversions, and the functions (f) hands data
 * through: keep(x), get_s(), get_l(). */
#define BENCH_SETUP_PY                                                           \
  "def f():\n"                                                                    \
  "    return None\n"                                                             \
  "def f2(a, b):\n"                                                               \
  "    return a + b\n"                                                            \
  "def fk(i, y):\n"                                                               \
  "    return i + y\n"                                                            \
  "def ident(x):\n"                                                               \
  "    return x\n"                                                                \
  "x = 20\n"                                                                      \
  "def keep(x):\n"                                                               \
  "    global kept\n"                                                            \
  "    kept = x\n"                                                               \
  "def get_s():\n"                                                               \
  "    return s\n"                                                               \
  "def get_l():\n"                                                               \
  "    return l\n"                                                               \
  "s = '0123456789abcdef' * 65536\n"                                              \
  "l = list(range(100000))\n"                                                     \
  "import gc\n"                                                                    \
  "gc.collect()\n" /* no collection left pending by the set-up lands in a loop */

/* The Python loops that drive host functions and host types: `g` is bound to the
 * host function / type by each program before the loop runs, n to the count.  Every
 * loop runs inside a function, where hot Python code lives: `g` and `i` are then a
 * global and a local look-up, as in real code, not two dict look-ups of a
 * module-level loop, which shrink the ratio and move with the dict's layout. */
#define BENCH_LOOP_FN_PY(body) "def run(n):\n    for i in range(n):\n        " body "\nrun(n)\n"
#define BENCH_LOOP_CALL_PY BENCH_LOOP_FN_PY("g()")        /* (c), (e) */
#define BENCH_LOOP_ARGS_PY BENCH_LOOP_FN_PY("g(i, 2.5)")   /* (c2) */
#define BENCH_LOOP_KW_PY BENCH_LOOP_FN_PY("g(i, y=2.5)")   /* (c3) */
#define BENCH_LOOP_OBJ_PY BENCH_LOOP_FN_PY("g(i).get()")   /* (e2) */
/* (c4) a str argument: a local made once, before the loop (net of loop_fn_empty) */
#define BENCH_LOOP_STR_PY \
  "def run(n):\n    s = 'hello, world'\n    for i in range(n):\n        g(s)\nrun(n)\n"
#define BENCH_LOOP_FN_EMPTY_PY BENCH_LOOP_FN_PY("pass")
/* (g2_typed) the 64 MiB bytearray of BENCH_BULK_PY handed to a host function that reads
 * one byte of it in place: a buffer parameter (net of loop_fn_empty) */
#define BENCH_LOOP_BUF_PY \
  "def run(n):\n    b = big\n    for i in range(n):\n        g(b)\nrun(n)\n"
#define BENCH_LOOP_EMPTY_PY BENCH_LOOP_FN_EMPTY_PY

/* pyhost_eval's expression, and the one per iteration when the cache is defeated. */
#define BENCH_EXPR "x * 2 + 1"
#define BENCH_EXPR_FMT "x * 2 + %lu"

#define BENCH_STR_BYTES (16u * 65536u)
#define BENCH_TRIP_STR 10000u           /* (f2): a 10 000-character str C->Python->C */
#define BENCH_TRIP_BYTES (1024u * 1024u) /* (f3): 1 MiB of bytes C->Python->C */
#define BENCH_LIST_LEN 100000u

/* (g1, g2): bulk data, 1 KiB and 64 MiB.  Run only by the g modes (64 MiB each side):
 * first(v) reads one element; get_small(), get_big() and get_np() hand Python's
 * buffers to C (get_np() a numpy uint8 array where numpy is installed, else None). */
#define BENCH_BULK_SMALL 1024u
#define BENCH_BULK_LARGE (64u << 20)
#define BENCH_BULK_PY                                                            \
  "def first(v):\n"                                                               \
  "    return v[0]\n"                                                             \
  "small = bytearray(1024)\n"                                                     \
  "big = bytearray(64 << 20)\n"                                                   \
  "small[0] = big[0] = 7\n"                                                       \
  "def get_small():\n"                                                            \
  "    return small\n"                                                            \
  "def get_big():\n"                                                              \
  "    return big\n"                                                              \
  "try:\n"                                                                        \
  "    import numpy\n"                                                            \
  "    npbig = numpy.zeros(64 << 20, dtype=numpy.uint8)\n"                        \
  "    npbig[0] = 7\n"                                                            \
  "except ImportError:\n"                                                         \
  "    npbig = None\n"                                                            \
  "def get_np():\n"                                                               \
  "    return npbig\n"

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void bench_result(const char *mode, double seconds, unsigned long n) {
  printf("RESULT %s %.3f\n", mode, seconds * 1e9 / (double)(n ? n : 1));
  fflush(stdout);
}

static inline void bench_die(const char *what, const char *why) {
  fprintf(stderr, "bench: %s: %s\n", what, why ? why : "failed");
  exit(1);
}

static inline unsigned long bench_count(const char *arg) {
  char *end;
  unsigned long n = strtoul(arg, &end, 10);
  if (!*arg || *end || n == 0) bench_die("count", "must be a positive number");
  return n;
}

#endif
