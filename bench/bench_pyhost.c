/* bench_pyhost.c: the pyhost side of every benchmark.  `bench_pyhost MODE N LIB`.
 * Every mode uses the public API only, as a host would. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, mkdtemp */
#include "pyhost.h"
#include "bench.h"

#include <pthread.h>
#include <unistd.h>

static pyhost *h;
static pyhost_value *fn;       /* (b): the Python function f, resolved once */
static pyhost_callable *pfn;   /* (b): f prepared, the fastest route */
static pyhost_callable *pfn2;  /* (b2): f2(a, b) prepared */
static pyhost_callable *pfk;   /* (b3): fk(i, y) prepared */
static pyhost_callable *pfk_y; /* (b3): its keyword plan fk(i, y=...) */
static pyhost_callable *pexpr; /* (d2): BENCH_EXPR with input x */
static pyhost_callable *pident; /* (f2, f3): ident(x), prepared */
static char *trip;             /* (f2, f3): the C data sent */
static pyhost_module *module;
static pyhost_type *type;

static void check(int rc, const char *what) {
  if (rc != PYHOST_OK) bench_die(what, pyhost_errmsg(h));
}

static void eval_once(const char *expr) {
  pyhost_value *v = NULL;
  check(pyhost_eval(h, expr, &v), expr);
  pyhost_value_free(v);
}

/* (f) The conversions through the public route: the host's C data handed to Python
 * (keep(x) stores it), Python data read back into C (get_s(), get_l()).  A str goes in
 * and out in place ("z", borrowed ">s"); a list is built as a value from the host's
 * int64_t array and read back into one. */
static pyhost_callable *pkeep, *pget_s, *pget_l;
static char *str_data;
static int64_t *list_data;

static void str_to_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++)
    check(pyhost_prepared_callf(h, pkeep, "z", str_data, (size_t)BENCH_STR_BYTES), "keep(s)");
}

static void str_from_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    const char *p = NULL;
    size_t len = 0;
    check(pyhost_prepared_callf(h, pget_s, ">s", &p, &len), "get_s()");
    if (len != BENCH_STR_BYTES || p[len - 1] != 'f') bench_die("get_s()", "wrong result");
  }
}

static void list_to_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_value *l = pyhost_value_list();
    for (unsigned j = 0; l && j < BENCH_LIST_LEN; j++)
      if (pyhost_value_append(l, pyhost_value_int(list_data[j]))) bench_die("append", NULL);
    if (!l) bench_die("pyhost_value_list", NULL);
    check(pyhost_prepared_callf(h, pkeep, "O", l), "keep(l)");
    pyhost_value_free(l);
  }
}

static void *volatile sink;
static void list_from_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_value *l = NULL;
    check(pyhost_prepared_call_value(h, pget_l, NULL, 0, &l), "get_l()");
    size_t len = pyhost_value_count(l);
    int64_t *items = malloc(sizeof *items * len);
    for (size_t j = 0; j < len; j++)
      check(pyhost_value_to_int(h, pyhost_value_item(l, j), &items[j]), "item");
    sink = items;
    free(sink);
    pyhost_value_free(l);
  }
}

/* (g1) a loan of len bytes of host memory per operation: made, passed to first(v)
 * (which reads one element), released.  The fastest documented route is the typed
 * prepared call with a pyhost_arg_buffer argument; line: the one-line form ("m>L"),
 * for reference (as b2's callf row). */
static pyhost_callable *pfirst, *pget_small, *pget_big, *pget_np;
static unsigned char *bulk;
static void bulk_to_py(size_t len, int line, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_buffer_spec s = {bulk, "B", 1, {len}, 0, NULL, NULL};
    pyhost_buffer *b = NULL;
    int64_t x = 0;
    check(pyhost_buffer_new(h, &s, &b), "pyhost_buffer_new");
    if (line) {
      check(pyhost_prepared_callf(h, pfirst, "m>L", b, &x), "first(v)");
    } else {
      pyhost_arg a = pyhost_arg_buffer(b);
      check(pyhost_prepared_call_int(h, pfirst, &a, 1, &x), "first(v)");
    }
    if (x != 7) bench_die("first(v)", "wrong result");
    check(pyhost_buffer_release(h, b, NULL), "pyhost_buffer_release");
  }
}

/* (g2) Python's buffer read in place: get() returns it, the host reads one byte. */
static void bulk_from_py(pyhost_callable *get, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_view v;
    check(pyhost_prepared_callf(h, get, ">w", &v), "get()");
    if (((const unsigned char *)v.data)[0] != 7) bench_die("get()", "wrong result");
    pyhost_view_release(h, &v);
  }
}

/* (g3) the list through the array entry points. */
static void array_to_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_value *l = NULL;
    check(pyhost_value_from_int64s(h, list_data, BENCH_LIST_LEN, &l), "pyhost_value_from_int64s");
    check(pyhost_prepared_callf(h, pkeep, "O", l), "keep(l)");
    pyhost_value_free(l);
  }
}

static void array_from_py(unsigned long n) {
  for (unsigned long i = 0; i < n; i++) {
    pyhost_value *l = NULL;
    check(pyhost_prepared_callf(h, pget_l, ">o", &l), "get_l()");
    int64_t *items = malloc(sizeof *items * BENCH_LIST_LEN);
    size_t got = 0;
    check(pyhost_value_to_int64s(h, l, items, BENCH_LIST_LEN, &got), "pyhost_value_to_int64s");
    sink = items;
    free(sink);
    pyhost_value_free(l);
  }
}

/* (c): the host function g, as trivial as the baseline's builtin. */
static int host_g(pyhost *hh, void *userdata, const pyhost_value *const *args, size_t nargs,
                  const pyhost_value *kwargs, pyhost_value **result) {
  (void)hh, (void)userdata, (void)args, (void)nargs, (void)kwargs, (void)result;
  return PYHOST_OK; /* *result left NULL: None */
}

/* (c): the same in the fast form (borrowed arguments, result left None). */
static int host_g_fast(pyhost *hh, void *userdata, const pyhost_args *args, pyhost_ret *ret) {
  (void)hh, (void)userdata, (void)args, (void)ret;
  return PYHOST_OK;
}

/* (c2, c3): g(i, y) -> i + y, its arguments declared: the typed form, the fastest
 * public route for a host function with arguments. */
static int host_h_typed(pyhost *hh, void *userdata, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)userdata;
  return pyhost_ret_float(hh, ret, (double)argv[0].u.i + argv[1].u.d);
}

/* (c4): hs(s) -> the length of s's UTF-8: a str parameter, declared. */
static int host_s_typed(pyhost *hh, void *userdata, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)userdata;
  return pyhost_ret_int(hh, ret, (int64_t)argv[0].len);
}

/* (g2_typed): g(data: buffer) -> its first byte, read in place. */
static int host_buf_typed(pyhost *hh, void *userdata, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)userdata;
  const pyhost_view *v = argv[0].u.p;
  return pyhost_ret_int(hh, ret, v->len ? ((const unsigned char *)v->data)[0] : -1);
}

/* (e): the host type's constructor; instances carry one C pointer, as the baseline's. */
static int host_new_fast(pyhost *hh, void *userdata, const pyhost_args *args, void **payload) {
  (void)hh, (void)userdata, (void)args;
  *(void **)*payload = NULL; /* the inline payload, zeroed already */
  return PYHOST_OK;
}

/* (e2): T(i) with an inline payload, its argument declared, and T.get() -> the int:
 * the typed form, the fastest public route for a constructor and a method with
 * arguments. */
static int host_new_typed(pyhost *hh, void *userdata, const pyhost_arg *argv, void **payload) {
  (void)hh, (void)userdata;
  *(int64_t *)*payload = argv[0].u.i;
  return PYHOST_OK;
}
static int host_get_typed(pyhost *hh, void *payload, void *userdata, const pyhost_arg *argv,
                          pyhost_ret *ret) {
  (void)userdata, (void)argv;
  return pyhost_ret_int(hh, ret, *(int64_t *)payload);
}

/* (e) for reference: the value-form constructor; instances carry a NULL payload. */
static int host_new(pyhost *hh, void *userdata, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, void **payload) {
  (void)hh, (void)userdata, (void)args, (void)nargs, (void)kwargs;
  *payload = NULL;
  return PYHOST_OK;
}

static void run_loop(const char *src, unsigned long n) {
  pyhost_value *count = pyhost_value_int((int64_t)n);
  check(pyhost_set_global(h, "n", count), "n");
  pyhost_value_free(count);
  check(pyhost_exec(h, src, "<bench>"), src);
}

/* Binds __main__.g to a host function (c) or a host type (e), each in the fast form
 * or (*_values) the value form. */
static void bind_g(const char *mode) {
  pyhost_value *g = NULL;
  check(pyhost_module_new(h, "pyhost_bench", NULL, &module), "pyhost_module_new");
  if (!strcmp(mode, "hostfn") || !strcmp(mode, "hostfn_values")) {
    if (!strcmp(mode, "hostfn")) /* the fastest route: the borrowed form */
      check(pyhost_module_add_fast_function(h, module, "g", host_g_fast, NULL, NULL),
            "add_fast_function");
    else
      check(pyhost_module_add_function(h, module, "g", host_g, NULL, NULL), "add_function");
    check(pyhost_exec(h, "from pyhost_bench import g", NULL), "import g");
    return;
  }
  if (!strcmp(mode, "hostfn_str") || !strcmp(mode, "g2_typed")) {
    int str = mode[0] == 'h';
    check(pyhost_module_add_typed_function(h, module, str ? "g(s: str)" : "g(data: buffer)",
                                           str ? host_s_typed : host_buf_typed, NULL, NULL),
          "add_typed_function");
    check(pyhost_exec(h, "from pyhost_bench import g", NULL), "import g");
    return;
  }
  if (!strncmp(mode, "hostfn2", 7)) {
    check(pyhost_module_add_typed_function(h, module, "g(i: int, y: float)", host_h_typed, NULL,
                                           NULL),
          "add_typed_function");
    check(pyhost_exec(h, "from pyhost_bench import g", NULL), "import g");
    return;
  }
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT};
  spec.name = "T";
  static const pyhost_typed_method_def get_def[] = {{"get()", host_get_typed, NULL}};
  if (!strcmp(mode, "hosttype")) { /* the fastest route */
    spec.fast_constructor = host_new_fast;
    spec.payload_size = sizeof(void *);
  } else if (!strcmp(mode, "hosttype2")) { /* the fastest route with arguments */
    spec.typed_constructor = host_new_typed;
    spec.constructor_signature = "T(i: int)";
    spec.typed_methods = get_def;
    spec.n_typed_methods = 1;
    spec.payload_size = sizeof(int64_t);
  } else {
    spec.constructor = host_new;
  }
  check(pyhost_type_new(h, module, &spec, &type), "pyhost_type_new");
  check(pyhost_type_value(h, type, &g), "pyhost_type_value");
  check(pyhost_set_global(h, "g", g), "g");
  pyhost_value_free(g);
}

/* The measured loop of each mode (callgrind --toggle-collect=bench_loop). */
static BENCH_NOINLINE void bench_loop(const char *mode, unsigned long n) {
  char expr[64];
  if (!strcmp(mode, "call") || !strcmp(mode, "call_noscope")) {
    for (unsigned long i = 0; i < n; i++) check(pyhost_prepared_call(h, pfn, NULL, 0), "f()");
  } else if (!strcmp(mode, "call2")) {
    /* (b2): two C ints in, an int out, in one line: the fastest public route */
    for (unsigned long i = 0; i < n; i++) {
      int r = 0;
      check(pyhost_prepared_callf(h, pfn2, "ii>i", (int)(i & 0xffff), 2, &r), "f2()");
      if (r != (int)(i & 0xffff) + 2) bench_die("f2()", "wrong result");
    }
  } else if (!strcmp(mode, "call2_args")) {
    /* (b2) the same with a pyhost_arg array and pyhost_prepared_call_int */
    for (unsigned long i = 0; i < n; i++) {
      int64_t r = 0;
      pyhost_arg argv[2] = {pyhost_arg_int((int64_t)(i & 0xffff)), pyhost_arg_int(2)};
      check(pyhost_prepared_call_int(h, pfn2, argv, 2, &r), "f2()");
      if (r != (int64_t)(i & 0xffff) + 2) bench_die("f2()", "wrong result");
    }
  } else if (!strcmp(mode, "call_kw")) {
    /* (b3): fk(i, y=2.5), y by keyword, a float out: the one public route with keywords */
    for (unsigned long i = 0; i < n; i++) {
      double r = 0;
      check(pyhost_prepared_callf(h, pfk, "L,y=d>d", (int64_t)(i & 0xffff), 2.5, &r), "fk()");
      if (r != (double)(i & 0xffff) + 2.5) bench_die("fk()", "wrong result");
    }
  } else if (!strcmp(mode, "call_kw_plan")) {
    /* (b3) the same through a keyword plan: the layout fixed once, values per call */
    for (unsigned long i = 0; i < n; i++) {
      double r = 0;
      pyhost_arg argv[2] = {pyhost_arg_int((int64_t)(i & 0xffff)), pyhost_arg_float(2.5)};
      check(pyhost_prepared_call_float(h, pfk_y, argv, 2, &r), "fk()");
      if (r != (double)(i & 0xffff) + 2.5) bench_die("fk()", "wrong result");
    }
  } else if (!strcmp(mode, "expr_inputs")) {
    /* (d2): x * 2 + 1 for x = i, an int out: an expression with inputs */
    for (unsigned long i = 0; i < n; i++) {
      int64_t r = 0;
      pyhost_arg x = pyhost_arg_int((int64_t)(i & 0xffff));
      check(pyhost_prepared_call_int(h, pexpr, &x, 1, &r), "expression");
      if (r != (int64_t)(i & 0xffff) * 2 + 1) bench_die("expression", "wrong result");
    }
  } else if (!strcmp(mode, "str_trip") || !strcmp(mode, "bytes_trip")) {
    /* (f2, f3): C data to Python and back, the result read in place (borrowed) */
    int str = mode[0] == 's';
    size_t len = str ? BENCH_TRIP_STR : BENCH_TRIP_BYTES;
    for (unsigned long i = 0; i < n; i++) {
      const char *back = NULL;
      size_t got = 0;
      check(pyhost_prepared_callf(h, pident, str ? "z>s" : "y>y", trip, len, &back, &got),
            "ident()");
      if (got != len || back[len - 1] != trip[len - 1]) bench_die("ident()", "wrong result");
    }
  } else if (!strcmp(mode, "callv")) {
    for (unsigned long i = 0; i < n; i++) {
      pyhost_value *r = NULL;
      check(pyhost_callv(h, fn, NULL, 0, NULL, &r), "f()");
      pyhost_value_free(r);
    }
  } else if (!strcmp(mode, "hostfn2")) {
    run_loop(BENCH_LOOP_ARGS_PY, n);
  } else if (!strcmp(mode, "hostfn2_kw")) {
    run_loop(BENCH_LOOP_KW_PY, n);
  } else if (!strcmp(mode, "hostfn_str")) {
    run_loop(BENCH_LOOP_STR_PY, n);
  } else if (!strcmp(mode, "hosttype2")) {
    run_loop(BENCH_LOOP_OBJ_PY, n);
  } else if (!strcmp(mode, "loop_fn_empty")) {
    run_loop(BENCH_LOOP_FN_EMPTY_PY, n);
  } else if (!strncmp(mode, "hostfn", 6) || !strncmp(mode, "hosttype", 8)) {
    run_loop(BENCH_LOOP_CALL_PY, n);
  } else if (!strcmp(mode, "loop_empty")) {
    run_loop(BENCH_LOOP_EMPTY_PY, n);
  } else if (!strcmp(mode, "eval_cached") || !strcmp(mode, "eval_scope")) {
    for (unsigned long i = 0; i < n; i++) eval_once(BENCH_EXPR);
  } else if (!strcmp(mode, "eval_uncached")) {
    for (unsigned long i = 0; i < n; i++) {
      snprintf(expr, sizeof expr, BENCH_EXPR_FMT, i); /* a new source every time */
      eval_once(expr);
    }
  } else if (!strcmp(mode, "conv_str_to_py")) {
    str_to_py(n);
  } else if (!strcmp(mode, "conv_list_to_py")) {
    list_to_py(n);
  } else if (!strcmp(mode, "conv_str_from_py")) {
    str_from_py(n);
  } else if (!strcmp(mode, "conv_list_from_py")) {
    list_from_py(n);
  } else if (!strcmp(mode, "g1_small") || !strcmp(mode, "g1_large") ||
             !strcmp(mode, "g1_line_small") || !strcmp(mode, "g1_line_large")) {
    bulk_to_py(strstr(mode, "_small") ? BENCH_BULK_SMALL : BENCH_BULK_LARGE,
               strstr(mode, "_line") != NULL, n);
  } else if (!strcmp(mode, "g2_typed")) {
    run_loop(BENCH_LOOP_BUF_PY, n);
  } else if (!strcmp(mode, "g2_small") || !strcmp(mode, "g2_large") || !strcmp(mode, "g2_numpy")) {
    bulk_from_py(mode[3] == 's' ? pget_small : mode[3] == 'l' ? pget_big : pget_np, n);
  } else if (!strcmp(mode, "g3_to_py")) {
    array_to_py(n);
  } else if (!strcmp(mode, "g3_from_py")) {
    array_from_py(n);
  } else {
    bench_die(mode, "unknown mode");
  }
}

/* ---- scale: how cost grows with the number of functions, plugins and threads ---- */

#define SCALE_CALLS 100000ul /* calls measured after the set-up, whatever its size */

/* The measured parts of the scale modes: never inlined, so that callgrind's
 * --toggle-collect=<name> counts each one alone (bench/run.py). */
static BENCH_NOINLINE void scale_register_fns(unsigned long n) {
  char name[32];
  for (unsigned long i = 0; i < n; i++) {
    snprintf(name, sizeof name, "g%lu", i);
    check(pyhost_module_add_fast_function(h, module, name, host_g_fast, NULL, NULL), name);
  }
}

static BENCH_NOINLINE void scale_call_fn(void) {
  run_loop(BENCH_LOOP_CALL_PY, SCALE_CALLS);
}

static BENCH_NOINLINE void scale_load_plugins(const char *dir, pyhost_plugin **ps,
                                              unsigned long n) {
  char path[128];
  for (unsigned long i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/p%lu.py", dir, i);
    check(pyhost_plugin_load(h, path, &ps[i]), path);
  }
}

static BENCH_NOINLINE void scale_call_hook(pyhost_plugin *p) {
  for (unsigned long k = 0; k < SCALE_CALLS; k++) {
    pyhost_value *r = NULL;
    check(pyhost_plugin_call(h, p, "hook", NULL, NULL, &r), "hook");
    pyhost_value_free(r);
  }
}

/* N fast host functions in one module: registration per function, then calls of the
 * last one registered from a Python loop (the same loop for every N). */
static void scale_fns(unsigned long n) {
  char src[96];
  check(pyhost_module_new(h, "pyhost_scale", NULL, &module), "pyhost_module_new");
  double t0 = bench_now();
  scale_register_fns(n);
  bench_result("scale_fns_register", bench_now() - t0, n);
  snprintf(src, sizeof src, "from pyhost_scale import g%lu as g", n - 1);
  check(pyhost_exec(h, src, NULL), src);
  check(pyhost_gil_enter(h), "pyhost_gil_enter");
  t0 = bench_now();
  scale_call_fn();
  bench_result("scale_fns_call", bench_now() - t0, SCALE_CALLS);
  check(pyhost_gil_leave(h), "pyhost_gil_leave");
}

/* N plugins (one small file each): load time per plugin, then hook calls on the last. */
static void scale_plugins(unsigned long n) {
  char dir[] = "/tmp/pyhost_bench_XXXXXX", path[128];
  if (!mkdtemp(dir)) bench_die("mkdtemp", NULL);
  for (unsigned long i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/p%lu.py", dir, i);
    FILE *f = fopen(path, "w");
    if (!f) bench_die(path, "cannot write");
    fprintf(f, "def hook():\n    return %lu\n", i);
    fclose(f);
  }
  pyhost_plugin **ps = calloc(n, sizeof *ps);
  if (!ps) bench_die("calloc", NULL);
  double t0 = bench_now();
  scale_load_plugins(dir, ps, n);
  bench_result("scale_plugins_load", bench_now() - t0, n);
  check(pyhost_gil_enter(h), "pyhost_gil_enter");
  t0 = bench_now();
  scale_call_hook(ps[n - 1]);
  bench_result("scale_plugins_call", bench_now() - t0, SCALE_CALLS);
  check(pyhost_gil_leave(h), "pyhost_gil_leave");
  for (unsigned long i = 0; i < n; i++) {
    pyhost_plugin_unload(ps[i]);
    snprintf(path, sizeof path, "%s/p%lu.py", dir, i);
    remove(path);
  }
  free(ps);
  rmdir(dir);
}

/* N host threads calling the prepared f at once, in GIL scopes of 100 calls (a
 * thread without a scope of its own pays a thread state per call): the total
 * throughput (ns per call over all threads). */
static void *scale_thread(void *attach) {
  if (attach) check(pyhost_thread_attach(h), "pyhost_thread_attach");
  for (unsigned long k = 0; k < SCALE_CALLS; k += 100) {
    check(pyhost_gil_enter(h), "pyhost_gil_enter");
    for (unsigned long j = 0; j < 100; j++) check(pyhost_prepared_call(h, pfn, NULL, 0), "f()");
    check(pyhost_gil_leave(h), "pyhost_gil_leave");
  }
  if (attach) check(pyhost_thread_detach(h), "pyhost_thread_detach");
  return NULL;
}

/* The threads attached (pyhost_thread_attach, the route for a thread that calls in a
 * loop) and, for reference, not: then every scope makes and frees a thread state. */
static void scale_threads(unsigned long n) {
  static const char *names[2] = {"scale_threads_call_unattached", "scale_threads_call"};
  pthread_t t[64];
  if (n > 64) bench_die("scale_threads", "at most 64 threads");
  for (int attach = 0; attach < 2; attach++) {
    double t0 = bench_now();
    for (unsigned long i = 0; i < n; i++)
      if (pthread_create(&t[i], NULL, scale_thread, attach ? (void *)names : NULL))
        bench_die("pthread_create", NULL);
    for (unsigned long i = 0; i < n; i++) pthread_join(t[i], NULL);
    bench_result(names[attach], bench_now() - t0, n * SCALE_CALLS);
  }
}

static void make_values(void) {
  check(pyhost_prepare_name(h, "keep", &pkeep), "keep");
  check(pyhost_prepare_name(h, "get_s", &pget_s), "get_s");
  check(pyhost_prepare_name(h, "get_l", &pget_l), "get_l");
  str_data = malloc(BENCH_STR_BYTES);
  list_data = malloc(sizeof *list_data * BENCH_LIST_LEN);
  if (!str_data || !list_data) bench_die("malloc", NULL);
  for (unsigned i = 0; i < BENCH_STR_BYTES; i++) str_data[i] = "0123456789abcdef"[i % 16];
  for (unsigned i = 0; i < BENCH_LIST_LEN; i++) list_data[i] = i;
}

static void start(const char *lib) {
  pyhost_config *c = pyhost_config_new();
  if (!c || pyhost_config_set_library(c, lib)) bench_die("config", "out of memory");
  int rc = pyhost_init(c, &h);
  pyhost_config_free(c);
  check(rc, "pyhost_init");
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: bench_pyhost MODE N LIBPYTHON\n");
    return 2;
  }
  const char *mode = argv[1], *lib = argv[3];
  unsigned long n = bench_count(argv[2]);
  if (!strcmp(mode, "startup")) {
    double t0 = bench_now(); /* once: CPython starts once per process */
    start(lib);
    pyhost_free(h);
    bench_result("startup_inproc", bench_now() - t0, 1);
    return 0;
  }
  start(lib);
  check(pyhost_exec(h, BENCH_SETUP_PY, "<bench>"), "setup");
  if (!strncmp(mode, "scale_", 6)) { /* N is the size of the set-up, not a count */
    if (!strcmp(mode, "scale_fns")) scale_fns(n);
    else if (!strcmp(mode, "scale_plugins")) scale_plugins(n);
    else if (!strcmp(mode, "scale_threads")) {
      check(pyhost_get_global(h, "f", &fn), "f");
      check(pyhost_prepare(h, fn, &pfn), "pyhost_prepare");
      scale_threads(n);
      pyhost_callable_free(pfn);
      pyhost_value_free(fn);
    } else bench_die(mode, "unknown mode");
    pyhost_module_free(h, module);
    pyhost_free(h);
    return 0;
  }
  if (!strncmp(mode, "call", 4)) {
    check(pyhost_get_global(h, "f", &fn), "f");
    check(pyhost_prepare(h, fn, &pfn), "pyhost_prepare");
    check(pyhost_prepare_name(h, "f2", &pfn2), "pyhost_prepare_name");
    check(pyhost_prepare_name(h, "fk", &pfk), "pyhost_prepare_name");
    static const char *const y[] = {"y"};
    check(pyhost_prepare_keywords(h, pfk, 1, y, 1, &pfk_y), "pyhost_prepare_keywords");
  }
  if (!strncmp(mode, "hostfn", 6) || !strncmp(mode, "hosttype", 8) || !strcmp(mode, "g2_typed"))
    bind_g(mode);
  if (strstr(mode, "_trip")) {
    check(pyhost_prepare_name(h, "ident", &pident), "pyhost_prepare_name");
    trip = malloc(BENCH_TRIP_BYTES);
    if (!trip) bench_die("malloc", NULL);
    for (unsigned i = 0; i < BENCH_TRIP_BYTES; i++) trip[i] = "0123456789abcdef"[i % 16];
  }
  if (!strcmp(mode, "expr_inputs"))
    check(pyhost_prepare_expression(h, "x", BENCH_EXPR, &pexpr), "pyhost_prepare_expression");
  /* (b), (c), (e), (f) run inside a host-held GIL scope; *_noscope and eval_cached
   * let every call take the GIL itself, for (h). */
  int scoped = !strncmp(mode, "conv_", 5) || mode[0] == 'g' || !strcmp(mode, "eval_scope") ||
               !strcmp(mode, "call") || !strncmp(mode, "call2", 5) || !strncmp(mode, "call_kw", 7) || !strcmp(mode, "expr_inputs") || strstr(mode, "_trip") || !strcmp(mode, "callv") || !strncmp(mode, "hostfn", 6) || !strncmp(mode, "hosttype", 8) ||
               !strcmp(mode, "loop_empty") || !strcmp(mode, "loop_fn_empty");
  if (scoped) check(pyhost_gil_enter(h), "pyhost_gil_enter");
  if (!strncmp(mode, "conv_", 5) || !strncmp(mode, "g3", 2)) make_values();
  if (!strncmp(mode, "g1", 2) || !strncmp(mode, "g2", 2)) {
    check(pyhost_exec(h, BENCH_BULK_PY, "<bench>"), "bulk setup");
    check(pyhost_prepare_name(h, "first", &pfirst), "first");
    check(pyhost_prepare_name(h, "get_small", &pget_small), "get_small");
    check(pyhost_prepare_name(h, "get_big", &pget_big), "get_big");
    check(pyhost_prepare_name(h, "get_np", &pget_np), "get_np");
    if (!(bulk = calloc(1, BENCH_BULK_LARGE))) bench_die("calloc", NULL);
    bulk[0] = 7;
  }
  bench_loop(mode, n / 10 + 1); /* warm-up: caches, allocator, branch predictors */
  double t0 = bench_now();
  bench_loop(mode, n);
  double t = bench_now() - t0;
  bench_result(mode, t, n);
  pyhost_callable_free(pkeep);
  pyhost_callable_free(pget_s);
  pyhost_callable_free(pget_l);
  pyhost_callable_free(pfirst);
  pyhost_callable_free(pget_small);
  pyhost_callable_free(pget_big);
  pyhost_callable_free(pget_np);
  free(bulk);
  free(str_data);
  free(list_data);
  pyhost_value_free(fn);
  pyhost_callable_free(pfn);
  pyhost_callable_free(pfn2);
  pyhost_callable_free(pfk_y);
  pyhost_callable_free(pfk);
  pyhost_callable_free(pexpr);
  pyhost_callable_free(pident);
  free(trip);
  if (scoped) check(pyhost_gil_leave(h), "pyhost_gil_leave");
  pyhost_type_free(h, type);
  pyhost_module_free(h, module);
  pyhost_free(h);
  return 0;
}
