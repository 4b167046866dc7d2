/* test_faults.c: tier 2, fault injection.  Each walk runs one operation with
 * pyhost__alloc_fail_after(n) for n = 0, 1, 2, ... (allocation n and every later one
 * fail) until the operation runs with no failure injected.  Every injected failure must
 * come back as an error status with a message (never a crash, never OK with a missing
 * result), and the runtime must work right after it.  Leaks show under ASan and
 * valgrind, which run these cases too.  Each case prints how many distinct injection
 * points it exercised.  Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "internal.h" /* white-box: the allocator seam and the conversions */
#include "check.h"
#include "reliab.h"

#include <pthread.h>
#include <unistd.h>

/* One operation under injection: returns its status.  ctx is the case's state. */
typedef int (*fault_op)(pyhost *h, void *ctx);

static int total_points;

/* Walks op; `normal` is the status it gives without injection (PYHOST_OK for most,
 * PYHOST_PYEXC for an operation that raises on purpose). */
static int walk(const char *name, pyhost *h, fault_op op, void *ctx, int normal) {
  int points = 0;
  for (long n = 0; n < 100000; n++) {
    pyhost__alloc_fail_after(n);
    int rc = op(h, ctx);
    long failed = pyhost__alloc_fail_after(-1);
    if (failed == 0) {
      if (rc != normal) {
        fprintf(stderr, "%s without injection: %s: %s\n", name, pyhost_status_name(rc),
                pyhost_errmsg(h));
        check_failures++;
      }
      break;
    }
    points++;
    if (rc == PYHOST_OK && normal != PYHOST_OK) {
      fprintf(stderr, "%s: allocation %ld failed but the call succeeded\n", name, n);
      check_failures++;
    }
    if (rc != PYHOST_OK && !pyhost_errmsg(h)[0]) {
      fprintf(stderr, "%s: allocation %ld failed with %s and no message\n", name, n,
              pyhost_status_name(rc));
      check_failures++;
    }
    if (h) reliab_expect_int(h, "40 + 2", 42); /* still usable */
  }
  printf("%-28s %3d injection points, each survived\n", name, points);
  total_points += points;
  return points;
}

static void report(void) {
  printf("faults injected and survived: %d\n", total_points);
}

/* ---- init: every allocation before and while Python starts ---- */

static int op_init(pyhost *unused, void *ctx) {
  (void)unused;
  pyhost **out = ctx;
  pyhost_config *c = pyhost_config_new();
  if (!c) return PYHOST_NOMEM;
  const char *argv[] = {"prog", "arg"};
  int rc = pyhost_config_set_library(c, check_lib);
  if (!rc) rc = pyhost_config_set_argv(c, 2, argv);
  if (!rc) rc = pyhost_config_add_sys_path(c, "/nonexistent/dir");
  if (!rc) rc = pyhost_init(c, out);
  pyhost_config_free(c);
  if (rc != PYHOST_OK) {
    /* an injected failure must leave a handle (or NULL for NOMEM) with a message */
    if (*out && !pyhost_errmsg(*out)[0]) rc = -1;
    pyhost_free(*out);
    *out = NULL;
  }
  return rc;
}

TEST_CASE(walk_init) {
  pyhost *h = NULL;
  int points = walk("init", NULL, op_init, &h, PYHOST_OK);
  CHECK(points > 0);
  CHECK(h != NULL);
  if (h) reliab_expect_int(h, "len(__import__('sys').argv)", 2);
  report();
  pyhost_free(h);
}

/* ---- running code and converting results ---- */

static int op_eval(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "[1, 'two', {'three': 3.0, 4: b'four'}, (None, True, 1 << 70), "
                          "object(), bytearray(b'x')]",
                       &v);
  if (rc == PYHOST_OK && (!v || pyhost_value_count(v) != 6)) rc = -1;
  if (rc != PYHOST_OK && v) rc = -2; /* no result on failure */
  pyhost_value_free(v);
  return rc;
}

static int op_exec_raise(pyhost *h, void *ctx) {
  (void)ctx;
  return pyhost_exec(h, "def f(n):\n    if n == 0: raise ValueError('deep ' * 50)\n"
                        "    f(n - 1)\nf(20)",
                     "<faults>");
}

static int op_exit(pyhost *h, void *ctx) {
  (void)ctx;
  return pyhost_exec(h, "raise SystemExit('a reason')", NULL);
}

static int op_syntax(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "1 +* 2", &v);
  pyhost_value_free(v);
  return rc;
}

static int op_repr(pyhost *h, void *ctx) {
  pyhost_value *v = ctx;
  const char *r = pyhost_value_repr(h, v);
  return r && strstr(r, "object at") ? PYHOST_OK : PYHOST_NOMEM;
}

static int op_exec_file(pyhost *h, void *ctx) {
  return pyhost_exec_file(h, ctx);
}

TEST_CASE(walk_running_code) {
  pyhost *h = reliab_start();
  CHECK(walk("eval + conversion", h, op_eval, NULL, PYHOST_OK) > 0);
  CHECK(walk("exec raising (traceback)", h, op_exec_raise, NULL, PYHOST_PYEXC) > 0);
  walk("SystemExit", h, op_exit, NULL, PYHOST_EXIT);
  walk("SyntaxError", h, op_syntax, NULL, PYHOST_PYEXC);
  pyhost_value *obj = NULL;
  CHECK_RC(pyhost_eval(h, "object()", &obj), PYHOST_OK);
  CHECK(walk("repr", h, op_repr, obj, PYHOST_OK) > 0);
  pyhost_value_free(obj);
  char path[] = "/tmp/pyhost_faults_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  const char src[] = "x = [1, 2, 3]\n";
  CHECK(write(fd, src, sizeof src - 1) == (ssize_t)(sizeof src - 1));
  close(fd);
  CHECK(walk("exec_file", h, op_exec_file, path, PYHOST_OK) > 0);
  unlink(path);
  report();
  pyhost_free(h);
}

/* ---- values: built in C, to Python and back ---- */

static pyhost_value *build_value(void) {
  pyhost_value *l = pyhost_value_list();
  pyhost_value *d = pyhost_value_dict();
  pyhost_value *t = pyhost_value_tuple();
  if (!l || !d || !t) {
    pyhost_value_free(l), pyhost_value_free(d), pyhost_value_free(t);
    return NULL;
  }
  int rc = pyhost_value_append(l, pyhost_value_int(-5));
  rc |= pyhost_value_append(l, pyhost_value_str("h\xc3\xa9llo\0x", 8));
  rc |= pyhost_value_append(l, pyhost_value_bytes("\0\xff", 2));
  rc |= pyhost_value_append(t, pyhost_value_float(2.5));
  rc |= pyhost_value_append(t, pyhost_value_none());
  rc |= pyhost_value_append(t, pyhost_value_bool(1));
  rc |= pyhost_value_set(d, pyhost_value_str("t", PYHOST_STRLEN), t);
  rc |= pyhost_value_append(l, d);
  if (rc) {
    pyhost_value_free(l);
    return NULL;
  }
  return l;
}

static int op_build(pyhost *h, void *ctx) {
  (void)h, (void)ctx;
  pyhost_value *v = build_value();
  int ok = v != NULL;
  pyhost_value_free(v);
  return ok ? PYHOST_OK : PYHOST_NOMEM;
}

/* C -> Python -> C, under a GIL scope; the result must equal the input's repr. */
static int op_round_trip(pyhost *h, void *ctx) {
  const char *want = ctx;
  pyhost_value *v = build_value();
  if (!v) return PYHOST_NOMEM;
  int rc = pyhost_gil_enter(h);
  if (rc) {
    pyhost_value_free(v);
    return rc;
  }
  PyObject *o = pyhost__to_python(h, v);
  pyhost_value *back = o ? pyhost__from_python(h, o) : NULL;
  if (!back) rc = pyhost__take_exception(h, "round trip");
  PY.Py_DecRef(o);
  pyhost_gil_leave(h);
  const char *r = back ? pyhost_value_repr(h, back) : NULL;
  if (back && !r) rc = PYHOST_NOMEM;
  if (r && strcmp(r, want) != 0) {
    fprintf(stderr, "round trip gave %s, expected %s\n", r, want);
    rc = -1;
  }
  pyhost_value_free(back);
  pyhost_value_free(v);
  return rc;
}

TEST_CASE(walk_values) {
  pyhost *h = reliab_start();
  CHECK(walk("values built in C", h, op_build, NULL, PYHOST_OK) > 0);
  const char *want = "[-5, 'h\xc3\xa9llo\\x00x', b'\\x00\\xff', {'t': (2.5, None, True)}]";
  CHECK(walk("C -> Python -> C", h, op_round_trip, (void *)want, PYHOST_OK) > 0);
  report();
  pyhost_free(h);
}

/* ---- errors on a thread that has no message slot yet ---- */

struct fresh {
  pyhost *h;
  int attach; /* the thread runs attached (pyhost_thread_attach) */
  int rc;
};

static void *fresh_main(void *arg) {
  struct fresh *f = arg;
  if (f->attach && (f->rc = pyhost_thread_attach(f->h)) != PYHOST_OK) return NULL;
  f->rc = pyhost_exec(f->h, "raise ValueError('from a new thread')", NULL);
  if (f->rc != PYHOST_OK && !pyhost_errmsg(f->h)[0]) f->rc = -1;
  if (f->attach && pyhost_thread_detach(f->h) != PYHOST_OK) f->rc = -1;
  return NULL;
}

static int op_new_thread(pyhost *h, void *ctx) {
  struct fresh f = {h, ctx != NULL, -1};
  pthread_t t;
  if (pthread_create(&t, NULL, fresh_main, &f) != 0) return -1;
  pthread_join(t, NULL);
  return f.rc;
}

TEST_CASE(walk_new_threads) {
  pyhost *h = reliab_start();
  CHECK(walk("errors on a new thread", h, op_new_thread, NULL, PYHOST_PYEXC) > 0);
  CHECK(walk("errors on a new attached thread", h, op_new_thread, "attached", PYHOST_PYEXC) > 0);
  report();
  pyhost_free(h);
}

/* ---- every symbol of the table missing in turn, on the real library ---- */

TEST_CASE(walk_missing_symbols) {
  unsigned minor = (unsigned)atoi(strchr(check_version, '.') + 1);
  int points = 0;
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++) {
    const struct pyapi_row *r = &pyhost__pyapi_rows[i];
    if (r->added > PYHOST__V(3, minor)) continue; /* not looked up on this version */
    /* under valgrind each refused dlopen costs seconds: every 8th row and the first */
    if (reliab_under_valgrind() && i % 8 != 0) continue;
    pyhost__fail_symbol(r->name);
    pyhost_config *c = pyhost_config_new();
    pyhost_config_set_library(c, check_lib);
    pyhost *h = NULL;
    int rc = pyhost_init(c, &h);
    pyhost_config_free(c);
    /* Py_GetVersion missing means "not a Python"; any other row is a missing symbol */
    if (rc != PYHOST_NOSYM && rc != PYHOST_NOTPYTHON) {
      fprintf(stderr, "without %s: %s: %s\n", r->name, pyhost_status_name(rc), pyhost_errmsg(h));
      check_failures++;
    } else if (!strstr(pyhost_errmsg(h), r->name) && rc == PYHOST_NOSYM) {
      fprintf(stderr, "without %s the message does not name it: %s\n", r->name,
              pyhost_errmsg(h));
      check_failures++;
    } else {
      points++;
    }
    pyhost_free(h);
  }
  pyhost__fail_symbol(NULL);
  printf("%-28s %3d injection points, each survived\n", "missing symbol", points);
  total_points += points;
  pyhost *h = reliab_start(); /* every refused library left nothing behind */
  reliab_expect_int(h, "1 + 1", 2);
  report();
  pyhost_free(h);
}

/* ---- calls, host functions, host types ---- */

static int fn_twice(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  int64_t i;
  if (nargs != 1 || pyhost_value_to_int(h, args[0], &i))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "twice(int)");
  *result = pyhost_value_int(2 * i);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

static int counter_new(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, void **payload) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs;
  static int64_t storage;
  *payload = &storage;
  return PYHOST_OK;
}

static int counter_get(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h, (void)ud;
  *result = pyhost_value_int(*(int64_t *)payload);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

static int counter_bump(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                        size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  ++*(int64_t *)payload;
  return PYHOST_OK;
}

/* A module with a function and a type, used from Python, then freed. */
static int op_module_and_type(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  static const pyhost_method_def methods[] = {{"bump", counter_bump, NULL}};
  static const pyhost_property_def props[] = {{"value", counter_get, NULL, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Counter",
                           .methods = methods, .n_methods = 1, .properties = props,
                           .n_properties = 1, .constructor = counter_new};
  int rc = pyhost_module_new(h, "faultmod", "fault injection", &m);
  if (!rc) rc = pyhost_module_add_function(h, m, "twice", fn_twice, NULL, NULL);
  if (!rc) rc = pyhost_type_new(h, m, &spec, &t);
  if (!rc)
    rc = pyhost_exec(h, "import faultmod\nc = faultmod.Counter()\nc.bump()\n"
                        "assert faultmod.twice(21) == 42 and c.value >= 1\ndel c",
                     NULL);
  if (t) pyhost_type_free(h, t);
  if (m) pyhost_module_free(h, m);
  return rc;
}

/* The fast form of a host type: an inline payload filled by a fast constructor, a fast
 * method and property, a TypeError from the view, an instance made by the host. */
static int vec_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  int64_t *p = *payload;
  int rc = pyhost_args_count(args) ? pyhost_args_int(h, args, 0, &p[0]) : PYHOST_OK;
  if (!rc && pyhost_args_kwcount(args)) rc = pyhost_args_int(h, args, pyhost_args_count(args), &p[1]);
  return rc;
}

static int vec_dot(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  const int64_t *p = payload;
  const char *label;
  size_t len;
  int rc = pyhost_args_str(h, args, 0, &label, &len);
  if (rc) return rc;
  char text[64];
  int n = snprintf(text, sizeof text, "%.*s=%lld", (int)len, label, (long long)(p[0] * p[1]));
  return pyhost_ret_str(h, ret, text, (size_t)n);
}

static int vec_get_x(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, *(int64_t *)payload);
}

static int vec_set_x(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  return pyhost_args_int(h, value, 0, payload);
}

static int op_fast_type(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  pyhost_value *v = NULL;
  static const pyhost_fast_method_def methods[] = {{"dot", vec_dot, NULL}};
  static const pyhost_fast_property_def props[] = {{"x", vec_get_x, vec_set_x, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Vec", .fast_methods = methods,
                           .n_fast_methods = 1, .fast_properties = props,
                           .n_fast_properties = 1, .fast_constructor = vec_new,
                           .payload_size = 2 * sizeof(int64_t),
                           .flags = PYHOST_TYPE_SUBCLASSABLE};
  int rc = pyhost_module_new(h, "faultvec", NULL, &m);
  if (!rc) rc = pyhost_type_new(h, m, &spec, &t);
  if (!rc)
    rc = pyhost_exec(h, "import faultvec\nv = faultvec.Vec(6, y=7)\nv.x = v.x + 0\n"
                        "assert v.dot('d') == 'd=42', v.dot('d')\n"
                        "try:\n    v.dot(1)\nexcept TypeError as e:\n"
                        "    assert 'faultvec.Vec.dot() argument 0: expected str' in str(e), e\n"
                        "else:\n    raise AssertionError('no TypeError')\ndel v",
                     NULL);
  int64_t init[2] = {2, 21};
  if (!rc) rc = pyhost_object_new(h, t, init, &v);
  if (!rc) rc = pyhost_set_global(h, "fv", v);
  if (!rc) rc = pyhost_exec(h, "assert fv.dot('h') == 'h=42'\ndel fv", NULL);
  pyhost_value_free(v);
  if (t) pyhost_type_free(h, t);
  if (m) pyhost_module_free(h, m);
  return rc;
}

/* The typed form of a host type: a typed constructor with arguments, typed methods
 * with keywords and defaults, a binding error. */
static int tvec_new(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  ((int64_t *)*payload)[0] = argv[0].u.i;
  ((int64_t *)*payload)[1] = argv[1].u.i;
  return PYHOST_OK;
}
static int tvec_dot(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  int64_t *v = payload;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%s=%lld", argv[0].u.s, (long long)(v[0] * v[1] * argv[1].u.i));
  return pyhost_ret_str(h, ret, buf, (size_t)n);
}
static int op_typed_type(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  static const pyhost_typed_method_def methods[] = {{"dot(tag: str, k: int = 1)", tvec_dot, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "TVec", .typed_methods = methods,
                           .n_typed_methods = 1, .typed_constructor = tvec_new,
                           .constructor_signature = "TVec(x: int, y: int = 1)",
                           .payload_size = 2 * sizeof(int64_t)};
  int rc = pyhost_module_new(h, "faulttvec", NULL, &m);
  if (!rc) rc = pyhost_type_new(h, m, &spec, &t);
  if (!rc)
    rc = pyhost_exec(h, "import faulttvec\nv = faulttvec.TVec(6, y=7)\n"
                        "assert v.dot('d') == 'd=42', v.dot('d')\n"
                        "assert faulttvec.TVec(3).dot(k=2, tag='e') == 'e=6'\n"
                        "try:\n    v.dot(1)\nexcept TypeError as e:\n"
                        "    assert \"faulttvec.TVec.dot() argument 'tag' must be str\" in str(e), e\n"
                        "else:\n    raise AssertionError('no TypeError')\ndel v",
                     NULL);
  if (t) pyhost_type_free(h, t);
  if (m) pyhost_module_free(h, m);
  return rc;
}

static int op_call(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *a = pyhost_value_int(20), *b = pyhost_value_str("x", 1), *r = NULL;
  const pyhost_value *argv[2] = {a, b};
  int rc = a && b ? pyhost_call_namev(h, "reliab.reenter", argv + 1, 0, NULL, &r) : PYHOST_NOMEM;
  pyhost_value_free(r);
  r = NULL;
  if (rc == PYHOST_PYEXC) /* reenter() without its argument: a TypeError, as wanted */
    rc = a && b ? pyhost_call_namev(h, "reliab.add", argv, 1, NULL, &r) : PYHOST_NOMEM;
  if (rc == PYHOST_PYEXC) { /* add(20) is a TypeError too; now the real call */
    pyhost_value *c = pyhost_value_int(22);
    const pyhost_value *two[2] = {a, c};
    rc = c ? pyhost_call_namev(h, "reliab.add", two, 2, NULL, &r) : PYHOST_NOMEM;
    int64_t got = 0;
    if (rc == PYHOST_OK && (pyhost_value_to_int(h, r, &got) || got != 42)) rc = -1;
    pyhost_value_free(c);
  } else if (rc == PYHOST_OK) {
    rc = -1;
  }
  pyhost_value_free(r);
  pyhost_value_free(a);
  pyhost_value_free(b);
  return rc;
}

/* The fast form of host functions: arguments read on demand, keywords, a str result,
 * and a TypeError raised for a wrong argument. */
static int op_fast_function(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  int rc = pyhost_exec(h, "try:\n    reliab.fadd('x', 1)\nexcept TypeError as e:\n"
                          "    assert 'expected int, got str' in str(e), e\n"
                          "else:\n    raise AssertionError('no TypeError')\n", NULL);
  if (!rc) rc = pyhost_eval(h, "[reliab.fadd(40, 2), reliab.fadd(1, 2, tag='t\u00e9')]", &v);
  if (!rc && pyhost_value_count(v) != 2) rc = -1;
  if (rc != PYHOST_OK && v) rc = -2;
  pyhost_value_free(v);
  return rc;
}

/* The typed form: registered (the signature read), called with a keyword and a
 * default, a TypeError for a wrong argument, removed with its module. */
static int t_join(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "%lld:%.*s:%g", (long long)argv[0].u.i, (int)argv[1].len,
                   argv[1].u.s, argv[2].u.d);
  return pyhost_ret_str(h, ret, buf, (size_t)n);
}
static int op_typed_function(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_module *m = NULL;
  pyhost_value *v = NULL;
  int rc = pyhost_module_new(h, "faults_typed", NULL, &m);
  if (!rc)
    rc = pyhost_module_add_typed_function(h, m, "join(n: int, s: str = 'd', *, x: float = 0.5)",
                                          t_join, NULL, "Joins.");
  if (!rc)
    rc = pyhost_exec(h, "import faults_typed as ft\ntry:\n    ft.join('x')\nexcept TypeError as e:\n"
                        "    assert \"argument 'n' must be int, not str\" in str(e), e\n"
                        "else:\n    raise AssertionError('no TypeError')\n", NULL);
  if (!rc) rc = pyhost_eval(h, "[ft.join(1), ft.join(2, 't\u00e9', x=2)]", &v);
  if (!rc && pyhost_value_count(v) != 2) rc = -1;
  if (rc != PYHOST_OK && v) rc = -2;
  pyhost_value_free(v);
  pyhost_module_free(h, m);
  return rc;
}

/* Registration alone: pyhost's own allocations for a typed function (its signature,
 * its docstring, its record), failed in turn, each answered PYHOST_NOMEM with a
 * message, as the header says of an allocation that fails. */
static int op_typed_register(pyhost *h, void *ctx) {
  pyhost_module *m = ctx;
  int rc = pyhost_module_add_typed_function(
      h, m, "reg(n: int, /, s: str = 'd é', *, x: float = 0.5, b: bytes = None)", t_join, NULL,
      "Registers.");
  if (rc == PYHOST_OK) rc = pyhost_module_remove(h, m, "reg");
  else if (rc != PYHOST_NOMEM) {
    fprintf(stderr, "typed registration answered %s (%s), not PYHOST_NOMEM\n",
            pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
  return rc;
}

/* Calls in one line: a prepared callable with keywords (the names kept), a dotted
 * name, a value result. */
static int op_callf(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_callable *c = NULL;
  pyhost_value *v = NULL;
  int64_t got = 0;
  int rc = pyhost_exec(h, "def cf_add(a, b=0, *, c=0):\n    return a + b + c\n", NULL);
  if (!rc) rc = pyhost_prepare_name(h, "cf_add", &c);
  if (!rc) rc = pyhost_prepared_callf(h, c, "L,c=i,b=i>L", (int64_t)40, 1, 1, &got);
  if (!rc && got != 42) rc = -1;
  if (!rc) rc = pyhost_prepared_callf(h, c, "L,c=i,b=i>L", (int64_t)1, 1, 1, &got);
  if (!rc && got != 3) rc = -1;
  if (!rc) rc = pyhost_call_namef(h, "cf_add", "s,b=s,c=s>O", "a", "b", "c", &v);
  if (!rc && pyhost_value_kind(v) != PYHOST_KIND_STR) rc = -1;
  if (rc != PYHOST_OK && v) rc = -2;
  pyhost_value_free(v);
  pyhost_callable_free(c);
  c = NULL; /* a borrowed str result, kept by its callable */
  const char *s = NULL;
  size_t n = 0;
  if (!rc) rc = pyhost_prepare_expression(h, "t", "t * 3", &c);
  if (!rc) rc = pyhost_prepared_callf(h, c, "s>s", "ab\xc3\xa9", &s, &n);
  if (!rc && (n != 12 || memcmp(s, "ab\xc3\xa9" "ab", 6) != 0)) rc = -1;
  pyhost_callable_free(c);
  c = NULL; /* an expression with inputs */
  if (!rc) rc = pyhost_prepare_expression(h, "x, y", "x * 2 + y", &c);
  if (!rc) rc = pyhost_prepared_callf(h, c, "L,y=i>L", (int64_t)20, 2, &got);
  if (!rc && got != 42) rc = -1;
  pyhost_callable_free(c);
  return rc;
}

static int op_reenter(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "reliab.reenter(\"[reliab.add(1, 2), 'x' * 3, {'k': None}]\")", &v);
  if (rc == PYHOST_OK && pyhost_value_count(v) != 3) rc = -1;
  pyhost_value_free(v);
  return rc;
}

/* A prepared callable: prepared by name, called with every argument kind, the result
 * read as an int and as a value, freed. */
static int op_prepared(pyhost *h, void *ctx) {
  (void)ctx;
  pyhost_callable *add = NULL, *echo = NULL;
  int64_t got = 0;
  pyhost_value *r = NULL, *v = pyhost_value_str("v", 1);
  if (!v) return PYHOST_NOMEM;
  pyhost_arg two[2] = {pyhost_arg_int(40), pyhost_arg_int(2)};
  pyhost_arg all[7] = {pyhost_arg_none(), pyhost_arg_bool(1), pyhost_arg_int(1 << 20),
                       pyhost_arg_float(0.5), pyhost_arg_str("s\xc3\xa9", 3),
                       pyhost_arg_bytes("b", 1), pyhost_arg_value(v)};
  int rc = pyhost_prepare_name(h, "reliab.fadd", &add);
  if (!rc) rc = pyhost_prepared_call_int(h, add, two, 2, &got);
  if (!rc && got != 42) rc = -1;
  if (!rc) rc = pyhost_prepare_name(h, "tuple", &echo);
  if (!rc) rc = pyhost_prepared_call_value(h, echo, all, 0, &r);
  if (!rc && pyhost_value_count(r) != 0) rc = -1;
  pyhost_value_free(r);
  r = NULL;
  if (!rc) rc = pyhost_exec(h, "def prep_echo(*a):\n    return a\n", NULL);
  pyhost_callable_free(echo);
  echo = NULL;
  if (!rc) rc = pyhost_prepare_name(h, "prep_echo", &echo);
  if (!rc) rc = pyhost_prepared_call_value(h, echo, all, 7, &r);
  if (!rc && pyhost_value_count(r) != 7) rc = -1;
  if (rc != PYHOST_OK && r) rc = -2;
  pyhost_value_free(r);
  pyhost_value_free(v);
  pyhost_callable_free(add);
  pyhost_callable_free(echo);
  return rc;
}

TEST_CASE(walk_bridge) {
  pyhost *h = reliab_start();
  reliab_callback_setup(h);
  CHECK(walk("calls (pyhost_call_namev)", h, op_call, NULL, PYHOST_OK) > 0);
  CHECK(walk("host function re-entered", h, op_reenter, NULL, PYHOST_OK) > 0);
  CHECK(walk("host module + type", h, op_module_and_type, NULL, PYHOST_OK) > 0);
  CHECK(walk("prepared calls", h, op_prepared, NULL, PYHOST_OK) > 0);
  CHECK(walk("fast host function", h, op_fast_function, NULL, PYHOST_OK) > 0);
  CHECK(walk("typed host function", h, op_typed_function, NULL, PYHOST_OK) > 0);
  pyhost_module *reg = NULL;
  CHECK_RC(pyhost_module_new(h, "faults_reg", NULL, &reg), PYHOST_OK);
  CHECK(walk("typed registration", h, op_typed_register, reg, PYHOST_OK) > 0);
  pyhost_module_free(h, reg);
  CHECK(walk("calls in one line", h, op_callf, NULL, PYHOST_OK) > 0);
  CHECK(walk("fast host type", h, op_fast_type, NULL, PYHOST_OK) > 0);
  CHECK(walk("typed host type", h, op_typed_type, NULL, PYHOST_OK) > 0);
  report();
  pyhost_free(h);
}
