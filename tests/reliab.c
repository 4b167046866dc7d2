/* reliab.c: see reliab.h. */
#define _GNU_SOURCE
#include "reliab.h"
#include "check.h"

#include <stdatomic.h>
#include <time.h>

pyhost *reliab_start(void) {
  return check_start(NULL);
}

/* valgrind's preload library is the one sign every valgrind version leaves. */
int reliab_under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p && strstr(p, "vgpreload") != NULL;
}

int reliab_iterations(int want) {
  if (!reliab_under_valgrind()) return want;
  return want / 50 > 20 ? want / 50 : 20;
}

int64_t reliab_eval_int(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t got = -1;
  int rc = pyhost_eval(h, expr, &v);
  if (rc == PYHOST_OK) rc = pyhost_value_to_int(h, v, &got);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "eval(%s): %s: %s\n", expr, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
  return got;
}

void reliab_expect_int(pyhost *h, const char *expr, int64_t want) {
  int64_t got = reliab_eval_int(h, expr);
  if (got != want) {
    fprintf(stderr, "eval(%s) gave %lld, expected %lld\n", expr, (long long)got, (long long)want);
    check_failures++;
  }
}

int reliab_eval_true(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int b = 0;
  if (pyhost_eval(h, expr, &v) == PYHOST_OK && pyhost_value_to_bool(h, v, &b) != PYHOST_OK) {
    int64_t i = 0;
    b = pyhost_value_to_int(h, v, &i) == PYHOST_OK && i != 0;
  }
  pyhost_value_free(v);
  return b;
}

int reliab_wait(int (*cond)(void *ctx), void *ctx, const char *what) {
  struct timespec start, now, pause = {0, 1000000};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (cond(ctx)) return 1;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= RELIAB_WAIT_SECONDS) break;
    nanosleep(&pause, NULL);
  }
  fprintf(stderr, "waited %d s for %s: it never happened\n", RELIAB_WAIT_SECONDS, what);
  check_failures++;
  return 0;
}

struct expr_wait {
  pyhost *h;
  const char *expr;
  _Atomic int *stop;
};

static int expr_true(void *ctx) {
  struct expr_wait *w = ctx;
  return (w->stop && atomic_load(w->stop)) || reliab_eval_true(w->h, w->expr);
}

int reliab_wait_true(pyhost *h, const char *expr, _Atomic int *stop) {
  struct expr_wait w = {h, expr, stop};
  return reliab_wait(expr_true, &w, expr);
}

/* ---- host functions for the stress test and the recursion cases ---- */

/* reliab.add(a, b) -> a + b */
static int fn_add(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                  const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  int64_t a, b;
  if (nargs != 2 || pyhost_value_to_int(h, args[0], &a) || pyhost_value_to_int(h, args[1], &b))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "add(a, b) takes two ints");
  *result = pyhost_value_int(a + b);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

/* reliab.fadd(a, b, tag='') -> a + b, or tag + str(a + b): the fast form */
static int fn_fadd(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t a, b;
  int rc;
  if ((rc = pyhost_args_int(h, args, 0, &a)) || (rc = pyhost_args_int(h, args, 1, &b))) return rc;
  if (pyhost_args_kwcount(args) == 0) return pyhost_ret_int(h, ret, a + b);
  const char *tag;
  size_t n;
  if ((rc = pyhost_args_str(h, args, 2, &tag, &n))) return rc;
  char buf[128];
  int len = snprintf(buf, sizeof buf, "%.*s%lld", (int)n, tag, (long long)(a + b));
  return pyhost_ret_str(h, ret, buf, (size_t)len);
}

/* reliab.tadd(a, b, *, tag=None): the typed form of fadd */
static int fn_tadd(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  int64_t sum = argv[0].u.i + argv[1].u.i;
  if (argv[2].kind == PYHOST_ARG_NONE) return pyhost_ret_int(h, ret, sum);
  char buf[128];
  int len = snprintf(buf, sizeof buf, "%.*s%lld", (int)argv[2].len, argv[2].u.s, (long long)sum);
  return pyhost_ret_str(h, ret, buf, (size_t)len);
}

/* reliab.reenter(expr) -> pyhost_eval(expr), from inside the callback */
static int fn_reenter(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                      const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *expr;
  if (nargs != 1 || pyhost_value_to_str(h, args[0], &expr, NULL))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "reenter(expr) takes a str");
  return pyhost_eval(h, expr, result);
}

/* reliab.finalize() -> the status pyhost_finalize gave inside the callback */
static int fn_finalize(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  *result = pyhost_value_int(pyhost_finalize(h));
  return PYHOST_OK;
}

/* reliab.Acc(start=0): a fast host type with an inline payload; add(n) -> the total */
static int acc_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  return pyhost_args_count(args) ? pyhost_args_int(h, args, 0, *payload) : PYHOST_OK;
}
static int acc_add(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t n;
  int rc = pyhost_args_int(h, args, 0, &n);
  if (rc) return rc;
  *(int64_t *)payload += n;
  return pyhost_ret_int(h, ret, *(int64_t *)payload);
}
static int acc_total(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, *(int64_t *)payload);
}

/* reliab.TAcc(start: int = 0): the typed form of Acc; add(n: int, times: int = 1) */
static int tacc_new(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  *(int64_t *)*payload = argv[0].u.i;
  return PYHOST_OK;
}
static int tacc_add(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  *(int64_t *)payload += argv[0].u.i * argv[1].u.i;
  return pyhost_ret_int(h, ret, *(int64_t *)payload);
}

static pyhost_module *module;
static pyhost_type *acc_type, *tacc_type;

int reliab_callbacks_available(void) {
  return 1;
}

void reliab_callback_setup(pyhost *h) {
  if (module) return;
  int rc = pyhost_module_new(h, "reliab", NULL, &module);
  if (!rc) rc = pyhost_module_add_function(h, module, "add", fn_add, NULL, NULL);
  if (!rc) rc = pyhost_module_add_fast_function(h, module, "fadd", fn_fadd, NULL, NULL);
  if (!rc)
    rc = pyhost_module_add_typed_function(h, module, "tadd(a: int, b: int, *, tag: str = None)",
                                          fn_tadd, NULL, NULL);
  if (!rc) rc = pyhost_module_add_function(h, module, "reenter", fn_reenter, NULL, NULL);
  if (!rc) rc = pyhost_module_add_function(h, module, "finalize", fn_finalize, NULL, NULL);
  static const pyhost_fast_method_def methods[] = {{"add", acc_add, NULL}};
  static const pyhost_fast_property_def props[] = {{"total", acc_total, NULL, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Acc", .fast_methods = methods,
                           .n_fast_methods = 1, .fast_properties = props, .n_fast_properties = 1,
                           .fast_constructor = acc_new, .payload_size = sizeof(int64_t)};
  if (!rc) rc = pyhost_type_new(h, module, &spec, &acc_type);
  static const pyhost_typed_method_def tmethods[] = {{"add(n: int, times: int = 1)", tacc_add, NULL}};
  pyhost_type_spec tspec = {PYHOST_TYPE_SPEC_INIT, .name = "TAcc", .typed_methods = tmethods,
                            .n_typed_methods = 1, .typed_constructor = tacc_new,
                            .constructor_signature = "TAcc(start: int = 0)",
                            .payload_size = sizeof(int64_t)};
  if (!rc) rc = pyhost_type_new(h, module, &tspec, &tacc_type);
  if (!rc) rc = pyhost_exec(h, "import reliab", NULL);
  if (rc) {
    fprintf(stderr, "setting up module reliab: %s\n", pyhost_errmsg(h));
    exit(1);
  }
}

/* A host function called from Python, through pyhost_call_namev, re-entered, and as a
 * prepared callable (with and without a GIL scope); a fast host type's instance made,
 * used and dropped. */
int reliab_callback_step(pyhost *h, int thread, int i) {
  char src[96];
  pyhost_value *v = NULL;
  int64_t got = -1, want = (int64_t)thread * 7 + i;
  int rc;
  switch (i % 6) {
  case 5: /* the fast host type: constructor, method, property, with and without a bound
           * method object; or the typed one, a keyword and a default */
    if ((i / 6) % 2)
      snprintf(src, sizeof src, "(lambda a: (a.add(%d), a.add)[1](0, times=3))"
                                "(reliab.TAcc(%d * 7))", i, thread);
    else
      snprintf(src, sizeof src, "(lambda a: (a.add(%d), a.add)[1](0) == a.total and a.total)"
                                "(reliab.Acc(%d * 7))", i, thread);
    rc = pyhost_eval(h, src, &v);
    break;
  case 0: /* the value form, the fast form and the typed form (a keyword) in turn */
    snprintf(src, sizeof src, "reliab.%s(%d * 7, %s%d)",
             (const char *[]){"add", "fadd", "tadd"}[(i / 6) % 3], thread,
             (i / 6) % 3 == 2 ? "b=" : "", i);
    rc = pyhost_eval(h, src, &v);
    break;
  case 1: {
    pyhost_value *a = pyhost_value_int((int64_t)thread * 7), *b = pyhost_value_int(i);
    const pyhost_value *argv[2] = {a, b};
    rc = a && b ? pyhost_call_namev(h, "reliab.add", argv, 2, NULL, &v) : PYHOST_NOMEM;
    pyhost_value_free(a);
    pyhost_value_free(b);
    break;
  }
  case 2:
    snprintf(src, sizeof src, "reliab.reenter('reliab.add(%d * 7, %d)')", thread, i);
    rc = pyhost_eval(h, src, &v);
    break;
  default: { /* prepared: per call, or in a GIL scope, shared by this step's calls */
    pyhost_callable *c = NULL;
    pyhost_arg argv[2] = {pyhost_arg_int((int64_t)thread * 7), pyhost_arg_int(i)};
    int scoped = i % 6 == 4;
    rc = pyhost_prepare_name(h, "reliab.add", &c);
    if (!rc && scoped) rc = pyhost_gil_enter(h);
    for (int k = 0; !rc && k < 3; k++)
      if (!(rc = pyhost_prepared_call_int(h, c, argv, 2, &got)) && got != want) rc = PYHOST_ERROR;
    /* an expression with inputs */
    pyhost_callable *e = NULL;
    if (!rc && !(rc = pyhost_prepare_expression(h, "a, b", "a + b", &e)) &&
        !(rc = pyhost_prepared_callf(h, e, "L,b=i>L", (int64_t)thread * 7, i, &got)) && got != want)
      rc = PYHOST_ERROR;
    pyhost_callable_free(e);
    /* in one line, the typed form by name, the second argument by keyword */
    if (!rc && !(rc = pyhost_call_namef(h, "reliab.tadd", "L,b=i>L", (int64_t)thread * 7, i, &got)) &&
        got != want)
      rc = PYHOST_ERROR;
    if (scoped && rc != PYHOST_MISUSE) pyhost_gil_leave(h);
    pyhost_callable_free(c);
    return rc;
  }
  }
  if (rc == PYHOST_OK && (pyhost_value_to_int(h, v, &got) || got != want)) rc = PYHOST_ERROR;
  pyhost_value_free(v);
  return rc;
}

int reliab_finalize_from_callback(pyhost *h) {
  reliab_callback_setup(h);
  pyhost_value *v = NULL;
  int64_t st = PYHOST_ERROR;
  if (pyhost_eval(h, "reliab.finalize()", &v) == PYHOST_OK) pyhost_value_to_int(h, v, &st);
  else fprintf(stderr, "reliab.finalize(): %s\n", pyhost_errmsg(h));
  pyhost_value_free(v);
  return (int)st;
}
