/* fuzz_api_host.c: the host side of fuzz_api: the module `fz` whose functions the
 * hostile snippets call back into (value, fast and typed forms), its host types (Box:
 * fast methods on an inline payload; TBox: a typed constructor and typed methods on a
 * payload the host allocates and frees), the plugin, and the checks every status goes
 * through.  Python may remove any of fz's functions (fz.remove) and invalidate a TBox
 * (fz.invalidate) while a call of it is binding its arguments: the host then frees that
 * function's userdata or that instance's payload at once, as pyhost.h allows, so a
 * callback that still ran would read freed memory under ASan. */
#define _GNU_SOURCE
#include "fuzz_api.h"
#include "fuzz_python.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fz_state fz;

pyhost_callable *fz_take_callable(int i) {
  pyhost_callable *c = fz.callables[i];
  fz.callables[i] = NULL; /* before the free: a __del__ it runs may free the slot again */
  fz.borrowed[i].p = NULL;
  return c;
}

static void die(const char *what, const char *why) {
  fprintf(stderr, "fuzz_api: %s: %s\n", what, why);
  abort();
}

/* ---- the checks on every status: the message and the exception's data ---- */

void fz_checked(int rc, const char *what) {
  pyhost *h = fz.h;
  const char *type = pyhost_errtype(h), *text = pyhost_errtext(h);
  if (!type || !text) die(what, "pyhost_errtype or pyhost_errtext answered NULL");
  int pyexc = rc == PYHOST_PYEXC || rc == PYHOST_EXIT || rc == PYHOST_INTERRUPTED;
  if (rc != PYHOST_OK && !pyhost_errmsg(h)[0]) die(what, "a failure without a message");
  if (pyexc != (type[0] != '\0')) {
    fprintf(stderr, "fuzz_api: %s: %s with pyhost_errtype \"%s\"\n", what,
            pyhost_status_name(rc), type);
    abort();
  }
  size_t n = pyhost_errframe_count(h);
  if (!pyexc && n) die(what, "frames for a call that raised nothing");
  for (size_t i = 0; i < n; i++) {
    const char *file = NULL, *function = NULL;
    int line = -1;
    if (pyhost_errframe(h, i, &file, &line, &function) != PYHOST_OK || !file || !function ||
        line < 0)
      die(what, "a frame below the count cannot be read");
  }
  const char *file = "unwritten";
  int line = -7;
  if (pyhost_errframe(h, n, &file, &line, NULL) != PYHOST_RANGE || line != -7 ||
      strcmp(file, "unwritten") != 0)
    die(what, "the frame past the count is not PYHOST_RANGE with nothing written");
}

/* A callback's failure as Python sees it: the exception of a failed nested call goes on
 * as it is, anything else is a RuntimeError with the message. */
static int passed_on(pyhost *h, int rc) {
  return rc == PYHOST_PYEXC ? pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(h)) : rc;
}

/* ---- host functions of the value form ---- */

static int fn_call(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  if (!nargs) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "call(f, *args)");
  return passed_on(h, pyhost_callv(h, args[0], args + 1, nargs - 1, kwargs, result));
}

static int fn_eval(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *src = NULL;
  if (nargs != 1 || pyhost_value_to_str(h, args[0], &src, NULL))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "eval(src)");
  return passed_on(h, pyhost_eval(h, src, result));
}

static int fn_free_callable(pyhost *h, void *ud, const pyhost_value *const *args,
                            size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  int64_t i = 0;
  if (nargs == 1 && !pyhost_value_to_int(h, args[0], &i) && i >= 0 && i < NCALLABLES)
    pyhost_callable_free(fz_take_callable((int)i));
  return PYHOST_OK;
}

static int fn_interrupt(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  return pyhost_interrupt(h);
}

static int fn_echo(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)kwargs;
  *result = nargs ? pyhost_value_copy(args[0]) : NULL;
  return PYHOST_OK;
}

static int fn_raise_named(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *name = "ValueError";
  if (nargs) pyhost_value_to_str(h, args[0], &name, NULL);
  return pyhost_raise_named(h, name, "raised by name from the host");
}

static int fn_scope(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  int rc = pyhost_gil_enter(h);
  if (rc) return rc;
  rc = pyhost_eval(h, "[fz.echo(i) for i in range(3)]", result);
  pyhost_gil_leave(h);
  return passed_on(h, rc);
}

static int fn_unload_plugin(pyhost *h, void *ud, const pyhost_value *const *args,
                            size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  pyhost_plugin_unload(fz.plugin);
  fz.plugin = NULL;
  return PYHOST_OK;
}

static int fn_plugin_call(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *hook = "val";
  if (nargs) pyhost_value_to_str(h, args[0], &hook, NULL);
  if (!fz.plugin) return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "no plugin loaded");
  return passed_on(h, pyhost_plugin_call(h, fz.plugin, hook, NULL, NULL, result));
}

static int fn_prepared(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  if (!fz.callables[0]) return PYHOST_OK;
  return passed_on(h, pyhost_prepared_call_value(h, fz.callables[0], NULL, 0, result));
}

/* fz.callf(i): callable i through pyhost_prepared_callf from inside a call, its result
 * borrowed (>s): nothing may be written unless it answers PYHOST_OK. */
static int fn_callf(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  int64_t i = 0;
  if (nargs != 1 || pyhost_value_to_int(h, args[0], &i) || i < 0 || i >= NCALLABLES)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "callf(slot)");
  if (!fz.callables[i]) return PYHOST_OK;
  const char *s = "unwritten";
  size_t n = 99;
  int rc = pyhost_prepared_callf(h, fz.callables[i], ">s", &s, &n);
  if (rc != PYHOST_OK && (strcmp(s, "unwritten") != 0 || n != 99))
    die("fz.callf", "a failed call wrote its borrowed result");
  if (rc == PYHOST_OK && (strlen(s) != n)) die("fz.callf", "a borrowed str's length is wrong");
  if (rc == PYHOST_OK) *result = pyhost_value_str(s, n);
  if (fz.callables[i]) fz.borrowed[i].p = NULL; /* this callf replaced the op's result */
  return passed_on(h, rc);
}

/* fz.attach(): a thread attachment opened and closed inside a call */
static int fn_attach(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                     const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  int rc = pyhost_thread_attach(h);
  if (rc) return rc;
  rc = pyhost_eval(h, "fz.echo(7)", result);
  if (pyhost_thread_detach(h) != PYHOST_OK) die("fz.attach", "detach refused");
  return passed_on(h, rc);
}

/* fz.fail(text): a check written in Python failed */
static int fn_fail(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *s = "(no text)";
  if (nargs) pyhost_value_to_str(h, args[0], &s, NULL);
  die("a check in Python failed", s);
  return PYHOST_OK;
}

/* fz.fkw(cb, **kw): calls cb, then reads its keyword arguments through the views */
static int fn_fkw(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  pyhost_value *cb = NULL, *r = NULL;
  if (pyhost_args_count(args) >= 1 && !pyhost_args_value(h, args, 0, &cb)) {
    pyhost_call(h, cb, NULL, NULL, &r);
    pyhost_value_free(r);
  }
  pyhost_value_free(cb);
  size_t n = pyhost_args_count(args), total = 0;
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name = NULL;
    size_t len = 0;
    const void *data = NULL;
    if (!pyhost_args_kwname(h, args, k, &name, &len)) total += len + (name ? (size_t)name[0] : 0);
    if (pyhost_args_kind(args, n + k) == PYHOST_KIND_BYTES &&
        !pyhost_args_bytes(h, args, n + k, &data, &len) && len)
      total += ((const unsigned char *)data)[len - 1];
  }
  return pyhost_ret_int(h, ret, (int64_t)total);
}

/* ---- typed functions: each has userdata of its own, freed when Python removes it ---- */

enum { MAGIC = 0x7ea1f00d };

struct typed_rec {
  unsigned magic;
  size_t nparams;
};

/* A typed callback's arguments as a tuple: (x, n, ...) as the callback got them. */
static int typed_cb(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  struct typed_rec *r = ud;
  if (r->magic != MAGIC) die("a typed callback", "its userdata is not its record");
  pyhost_value *t = pyhost_value_tuple();
  for (size_t i = 0; t && i < r->nparams; i++) {
    const pyhost_arg *a = &argv[i];
    pyhost_value *v = a->kind == PYHOST_ARG_INT     ? pyhost_value_int(a->u.i)
                      : a->kind == PYHOST_ARG_FLOAT ? pyhost_value_float(a->u.d)
                      : a->kind == PYHOST_ARG_BOOL  ? pyhost_value_bool(a->u.b)
                      : a->kind == PYHOST_ARG_STR   ? pyhost_value_str(a->u.s, a->len)
                      : a->kind == PYHOST_ARG_BYTES ? pyhost_value_bytes(a->u.p, a->len)
                                                    : pyhost_value_none();
    if (a->kind == PYHOST_ARG_STR && strlen(a->u.s) > a->len)
      die("a typed callback", "a str argument is not NUL-terminated at its length");
    pyhost_value_append(t, v);
  }
  int rc = t ? pyhost_ret_value(h, ret, t) : pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "tuple");
  pyhost_value_free(t);
  return rc;
}

static int fn_remove(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                     const pyhost_value *kwargs, pyhost_value **result);
static int fn_invalidate(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                         const pyhost_value *kwargs, pyhost_value **result);

/* Every function of fz, and whether it is in the module now. */
static const struct fz_fn {
  const char *name;
  pyhost_function fn;          /* value form */
  pyhost_fast_function fast;   /* or fast form */
  const char *signature;       /* or typed form */
  size_t nparams;
} fns[] = {
    {"call", fn_call, NULL, NULL, 0},
    {"eval", fn_eval, NULL, NULL, 0},
    {"free_callable", fn_free_callable, NULL, NULL, 0},
    {"interrupt", fn_interrupt, NULL, NULL, 0},
    {"echo", fn_echo, NULL, NULL, 0},
    {"raise_named", fn_raise_named, NULL, NULL, 0},
    {"scope", fn_scope, NULL, NULL, 0},
    {"unload_plugin", fn_unload_plugin, NULL, NULL, 0},
    {"plugin_call", fn_plugin_call, NULL, NULL, 0},
    {"prepared", fn_prepared, NULL, NULL, 0},
    {"callf", fn_callf, NULL, NULL, 0},
    {"attach", fn_attach, NULL, NULL, 0},
    {"remove", fn_remove, NULL, NULL, 0},
    {"invalidate", fn_invalidate, NULL, NULL, 0},
    {"fail", fn_fail, NULL, NULL, 0},
    {"fkw", NULL, fn_fkw, NULL, 0},
    {"tf", NULL, NULL, "tf(x: float, n: int = 3, /, s: str = 'd', *, b: bool = False, y: bytes = None)", 5},
    {"tg", NULL, NULL, "tg(a: int, b: int = -7, c: float = 0.5)", 3},
    {"th", NULL, NULL, "th()", 0},
};
enum { NFNS = sizeof fns / sizeof fns[0] };
static struct typed_rec *recs[NFNS]; /* a typed function's userdata */
static int present[NFNS];

static int add_fn(size_t i) {
  pyhost *h = fz.h;
  int rc;
  if (fns[i].signature) {
    struct typed_rec *r = malloc(sizeof *r);
    if (!r) abort();
    r->magic = MAGIC;
    r->nparams = fns[i].nparams;
    rc = pyhost_module_add_typed_function(h, fz.module, fns[i].signature, typed_cb, r, NULL);
    if (rc) free(r);
    else recs[i] = r;
  } else if (fns[i].fast) {
    rc = pyhost_module_add_fast_function(h, fz.module, fns[i].name, fns[i].fast, NULL, NULL);
  } else {
    rc = pyhost_module_add_function(h, fz.module, fns[i].name, fns[i].fn, NULL, NULL);
  }
  present[i] = rc == PYHOST_OK;
  return rc;
}

void fz_readd_typed(void) {
  for (size_t i = 0; i < NFNS; i++)
    if (!present[i]) fz_checked(add_fn(i), "adding a removed function back");
}

/* fz.remove(name): pyhost_module_remove, during whatever call is running; a typed
 * function's userdata is freed as soon as remove returns */
static int fn_remove(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                     const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *name = NULL;
  if (nargs != 1 || pyhost_value_to_str(h, args[0], &name, NULL))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "remove(name)");
  int rc = pyhost_module_remove(h, fz.module, name);
  if (rc == PYHOST_OK) {
    for (size_t i = 0; i < NFNS; i++) {
      if (strcmp(fns[i].name, name) != 0) continue;
      present[i] = 0;
      if (recs[i]) recs[i]->magic = 0;
      free(recs[i]);
      recs[i] = NULL;
    }
  }
  return rc == PYHOST_NOTFOUND ? PYHOST_OK : passed_on(h, rc);
}

/* ---- TBox: typed constructor and methods; the payload is malloc'd ---- */

struct tpay {
  unsigned magic;
  int64_t n;
};

static struct tpay *tpay_of(void *payload, const char *who) {
  struct tpay *p = payload;
  if (!p || p->magic != MAGIC) die(who, "called on a payload that is not live");
  return p;
}

static int tbox_new(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  struct tpay *p = malloc(sizeof *p);
  if (!p) abort();
  p->magic = MAGIC;
  p->n = (int64_t)((uint64_t)argv[0].u.i + argv[1].len);
  *payload = p;
  return PYHOST_OK;
}

static void tbox_free(void *payload, void *ud) {
  (void)ud;
  struct tpay *p = tpay_of(payload, "TBox's destructor");
  p->magic = 0;
  free(p);
}

static int tbox_add(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  struct tpay *p = tpay_of(payload, "TBox.add");
  double f = argv[1].u.d;
  p->n = (int64_t)((uint64_t)p->n + (uint64_t)argv[0].u.i + (f > -1e18 && f < 1e18 ? (uint64_t)(int64_t)f : 0));
  return pyhost_ret_int(h, ret, p->n);
}

static int tbox_get(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv;
  return pyhost_ret_int(h, ret, tpay_of(payload, "TBox.get")->n);
}

/* fz.invalidate(obj): the host destroys a TBox's payload itself */
static int fn_invalidate(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                         const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  void *payload = NULL;
  if (nargs != 1) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "invalidate(obj)");
  if (pyhost_object_payload(h, args[0], fz.tbox, &payload) != PYHOST_OK) return PYHOST_OK;
  int rc = pyhost_object_invalidate(h, args[0], fz.tbox);
  if (rc != PYHOST_OK) die("fz.invalidate", "a live instance could not be invalidated");
  tbox_free(payload, NULL);
  return PYHOST_OK;
}

pyhost_value *fz_tbox_new(int64_t n) {
  struct tpay *p = malloc(sizeof *p);
  if (!p) abort();
  p->magic = MAGIC;
  p->n = n;
  pyhost_value *v = NULL;
  int rc = pyhost_object_new(fz.h, fz.tbox, p, &v);
  fz_checked(rc, "pyhost_object_new");
  if (rc) free(p);
  return v;
}

void fz_tbox_poke(const pyhost_value *v, int invalidate) {
  void *payload = NULL;
  int rc = pyhost_object_payload(fz.h, v, fz.tbox, &payload);
  fz_checked(rc, "pyhost_object_payload");
  if (rc) return;
  tpay_of(payload, "pyhost_object_payload");
  if (!invalidate) return;
  fz_checked(rc = pyhost_object_invalidate(fz.h, v, fz.tbox), "pyhost_object_invalidate");
  if (rc) die("pyhost_object_invalidate", "a live instance could not be invalidated");
  tbox_free(payload, NULL);
  if (pyhost_object_payload(fz.h, v, fz.tbox, &payload) != PYHOST_MISUSE)
    die("pyhost_object_payload", "an invalidated instance still has its payload");
}

/* ---- Box: fast methods on an inline payload ---- */

/* Box.m(f): calls f(f) */
static int box_m(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  ++*(int64_t *)payload;
  pyhost_value *f = NULL, *r = NULL;
  int rc = pyhost_args_count(args) ? pyhost_args_value(h, args, 0, &f) : PYHOST_OK;
  if (!rc && f) {
    const pyhost_value *argv[1] = {f};
    rc = passed_on(h, pyhost_callv(h, f, argv, 1, NULL, &r));
    if (!rc) rc = pyhost_ret_value(h, ret, r);
  }
  pyhost_value_free(r);
  pyhost_value_free(f);
  return rc;
}

static int box_get(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, *(int64_t *)payload);
}

void fz_setup(void) {
  pyhost *h = fz.h = fuzz_python_full();
  static const pyhost_fast_method_def methods[] = {{"m", box_m, NULL}};
  static const pyhost_fast_property_def props[] = {{"n", box_get, NULL, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT};
  spec.name = "Box";
  spec.fast_methods = methods;
  spec.n_fast_methods = 1;
  spec.fast_properties = props;
  spec.n_fast_properties = 1;
  spec.payload_size = sizeof(int64_t);
  static const pyhost_typed_method_def tmethods[] = {
      {"add(k: int, f: float = 1.0)", tbox_add, NULL}, {"get()", tbox_get, NULL}};
  pyhost_type_spec tspec = {PYHOST_TYPE_SPEC_INIT};
  tspec.name = "TBox";
  tspec.typed_methods = tmethods;
  tspec.n_typed_methods = 2;
  tspec.typed_constructor = tbox_new;
  tspec.constructor_signature = "TBox(n: int = 0, label: str = 'x')";
  tspec.destructor = tbox_free;
  tspec.flags = PYHOST_TYPE_SUBCLASSABLE;
  int rc = pyhost_module_new(h, "fz", NULL, &fz.module);
  for (size_t i = 0; !rc && i < NFNS; i++) rc = add_fn(i);
  if (!rc) rc = pyhost_type_new(h, fz.module, &spec, &fz.box);
  if (!rc) rc = pyhost_type_new(h, fz.module, &tspec, &fz.tbox);
  if (!rc)
    rc = pyhost_exec(h,
                     "import fz, time, builtins, traceback, inspect\n"
                     "from fz import Box\n"
                     "import sys\n"
                     "sys.setrecursionlimit(400)\n" /* ASan's frames are large */
                     "V = F = len\nL = []\nD = {}\nT = None\n"
                     "_fuzz_keep = set(globals()) | {'_fuzz_keep'}\n",
                     "<fuzz setup>");
  if (rc) {
    fprintf(stderr, "fuzz_api: setup: %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(h));
    abort();
  }
}

/* how: the plain load, or pyhost_plugin_load_with at the shared level, at the
 * interpreter level (a sub-interpreter of its own; where the Python has none, a refusal
 * that says why), or with an option of the process level only (PYHOST_MISUSE).  The
 * process level itself is left to the isolation tests: a worker process per unit would
 * take the target's whole time. */
void fz_load_plugin(uint8_t how) {
  static char path[256];
  if (!path[0]) {
    snprintf(path, sizeof path, "%s/pyhost-fuzz-api-%ld.py",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs("import fz\n"
          "def run(*a):\n"
          "    fz.unload_plugin()\n"
          "    raise ValueError('after the unload')\n"
          "def val(*a):\n"
          "    return list(a) + [fz.echo(len(a))]\n"
          "def again(*a):\n"
          "    return fz.plugin_call('val')\n"
          "def text(*a, **k):\n"
          "    return repr((a, k))\n",
          f);
    fclose(f);
  }
  int rc;
  pyhost_plugin_options *o = how % 4 ? pyhost_plugin_options_new() : NULL;
  if (!o) {
    rc = pyhost_plugin_load(fz.h, path, &fz.plugin);
  } else {
    if (pyhost_plugin_options_set_isolation(o, how % 4 == 2 ? PYHOST_ISOLATION_INTERPRETER
                                                            : PYHOST_ISOLATION_SHARED) ||
        pyhost_plugin_options_set_isolation(o, 3 + how) != PYHOST_MISUSE)
      abort();
    if (how % 4 == 3 && pyhost_plugin_options_set_memory_limit(o, (uint64_t)64 << 20)) abort();
    rc = pyhost_plugin_load_with(fz.h, path, o, &fz.plugin);
    pyhost_plugin_options_free(o);
    if (how % 4 == 3 && rc != PYHOST_MISUSE) abort(); /* a process option at another level */
  }
  fz_checked(rc, "pyhost_plugin_load_with");
  if (rc == PYHOST_OK && pyhost_plugin_isolation(fz.plugin) != (how % 4 == 2)) abort();
  if (rc == PYHOST_OK) unlink(path), path[0] = '\0'; /* rewritten for the next load */
}
