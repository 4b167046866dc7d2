/* test_lifetimes.c: tier 2, Python code that removes or replaces what pyhost keeps
 * between calls (issue 13): __main__, sys.modules, builtins, a plugin's package, a host
 * module and its functions and types.  After each removal, allocation churn (thousands
 * of evals and execs that create and drop objects, so freed memory is reused) must
 * find pyhost's own references intact, and finalize must go through.  The last case
 * runs seeded random sequences of removals between pyhost calls.
 * Arguments: CASE LIB VERSION [SEED]. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "reliab.h"

#include <stdint.h>
#include <unistd.h>

/* ---- running code, checked ---- */

static void exec_ok(pyhost *h, const char *code) {
  int rc = pyhost_exec(h, code, "<lifetimes>");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "exec(%.300s): %s: %s\n", code, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
}

/* Allocation churn: objects of many sizes made and dropped through every way in to
 * __main__'s namespace (exec, eval, get/set_global), so memory a dangling pointer
 * might point at is handed out again.  Checks every result. */
static void churn(pyhost *h, int rounds) {
  rounds = reliab_iterations(rounds);
  for (int i = 0; i < rounds; i++) {
    char src[256];
    snprintf(src, sizeof src,
             "_c = [bytearray(%d) for _ in range(%d)]\n"
             "_d = {str(k): object() for k in range(%d)}\n"
             "_n = len(_c) + len(_d)\n"
             "del _c, _d",
             (i * 37) % 500 + 1, i % 11 + 1, i % 23 + 1);
    exec_ok(h, src);
    snprintf(src, sizeof src, "_n + len([str(j) * %d for j in range(%d)])", i % 5 + 1, i % 17);
    reliab_expect_int(h, src, (i % 11 + 1) + (i % 23 + 1) + i % 17);
    pyhost_value *v = pyhost_value_int(i);
    CHECK_RC(pyhost_set_global(h, "_churn", v), PYHOST_OK);
    pyhost_value_free(v);
    v = NULL;
    int64_t got = -1;
    CHECK_RC(pyhost_get_global(h, "_churn", &v), PYHOST_OK);
    CHECK(v && pyhost_value_to_int(h, v, &got) == PYHOST_OK && got == i);
    pyhost_value_free(v);
    if (i % 500 == 0) exec_ok(h, "import gc; gc.collect()");
  }
}

/* The namespace still does everything a host asks of it. */
static void namespace_works(pyhost *h) {
  exec_ok(h, "answer = 6 * 7\ndef twice(x):\n    return 2 * x");
  reliab_expect_int(h, "twice(answer)", 84);
  pyhost_value *v = NULL;
  int64_t got = -1;
  CHECK_RC(pyhost_get_global(h, "answer", &v), PYHOST_OK);
  CHECK(v && pyhost_value_to_int(h, v, &got) == PYHOST_OK && got == 42);
  pyhost_value_free(v);
  pyhost_value *arg = pyhost_value_int(21);
  const pyhost_value *argv[1] = {arg};
  CHECK_RC(pyhost_call_namev(h, "twice", argv, 1, NULL, &v), PYHOST_OK); /* resolved there */
  CHECK(v && pyhost_value_to_int(h, v, &got) == PYHOST_OK && got == 42);
  pyhost_value_free(v);
  pyhost_value_free(arg);
  char path[] = "/tmp/pyhost-lifetimes-XXXXXX";
  int fd = mkstemp(path);
  static const char src[] = "from_file = __file__\n";
  CHECK(fd >= 0 && write(fd, src, strlen(src)) == (ssize_t)strlen(src) && close(fd) == 0);
  CHECK_RC(pyhost_exec_file(h, path), PYHOST_OK);
  CHECK(reliab_eval_true(h, "from_file == __file__"));
  unlink(path);
  CHECK_RC(pyhost_set_global(h, "answer", NULL), PYHOST_OK);
  CHECK_RC(pyhost_get_global(h, "answer", &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "NameError");
  /* an error is still formatted (the traceback module may have to be imported again) */
  CHECK_RC(pyhost_exec(h, "raise ValueError('still readable')", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "ValueError: still readable");
}

static void finish(pyhost *h) {
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost_free(h);
}

/* ---- __main__, sys.modules, builtins ---- */

TEST_CASE(main_removed) {
  pyhost *h = reliab_start();
  exec_ok(h, "kept = 'before'");
  exec_ok(h, "import sys; del sys.modules['__main__']");
  churn(h, 3000);
  namespace_works(h);
  /* pyhost's namespace is the one __main__ had: what ran before is still there */
  reliab_expect_int(h, "len(kept) + (__name__ == '__main__')", 7);
  finish(h);
}

TEST_CASE(main_replaced) {
  pyhost *h = reliab_start();
  exec_ok(h, "kept = 1");
  exec_ok(h, "import sys, types\nsys.modules['__main__'] = types.ModuleType('impostor')\n"
             "sys.modules['__main__'].kept = 2");
  churn(h, 3000);
  namespace_works(h);
  /* eval, exec and the globals keep using pyhost's namespace, not the impostor */
  reliab_expect_int(h, "kept", 1);
  reliab_expect_int(h, "__import__('sys').modules['__main__'].kept", 2);
  exec_ok(h, "import sys; sys.modules['__main__'] = 42");
  churn(h, 500);
  namespace_works(h);
  finish(h);
}

TEST_CASE(main_dict_cleared) {
  pyhost *h = reliab_start();
  /* the namespace itself emptied, __builtins__ included (what the next code then sees
   * differs between versions: a NameError, or builtins found elsewhere), and dropped */
  exec_ok(h, "import sys; del sys.modules['__main__']; globals().clear()");
  int rc = pyhost_exec(h, "x = len('abc')", NULL);
  CHECK(rc == PYHOST_OK || rc == PYHOST_PYEXC);
  /* the host can put builtins back through the API */
  pyhost_value *b = NULL;
  CHECK_RC(pyhost_import(h, "builtins", &b), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "__builtins__", b), PYHOST_OK);
  pyhost_value_free(b);
  churn(h, 2000);
  namespace_works(h);
  finish(h);
}

/* A call that Python itself may refuse after a removal: a status with a message. */
static void ok_or_clear_error(pyhost *h, int rc, const char *what) {
  if (rc == PYHOST_OK) return;
  if (rc != PYHOST_PYEXC || !pyhost_errmsg(h)[0]) {
    fprintf(stderr, "%s: %s: %s\n", what, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
}

TEST_CASE(modules_cleared) {
  pyhost *h = reliab_start();
  exec_ok(h, "import json, traceback");
  exec_ok(h, "import sys; sys.modules.clear()");
  churn(h, 3000);
  namespace_works(h);
  /* `import sys` now makes a new sys module without most of its attributes, so many
   * standard modules no longer import (3.13: json, traceback); Python's error, told */
  pyhost_value *v = NULL;
  ok_or_clear_error(h, pyhost_eval(h, "__import__('json').dumps([1, 2])", &v), "json");
  pyhost_value_free(v);
  v = NULL;
  ok_or_clear_error(h, pyhost_call_name(h, "os.getcwd", NULL, NULL, &v), "os.getcwd");
  pyhost_value_free(v);
  ok_or_clear_error(h, pyhost_exec(h, "import sys; sys.modules.clear()", NULL), "clear again");
  churn(h, 500);
  finish(h);
}

TEST_CASE(builtins_replaced) {
  pyhost *h = reliab_start();
  /* the builtins module swapped in sys.modules, __main__'s __builtins__ replaced by a
   * copy, then the original module's dict emptied of what the copy does not need */
  exec_ok(h, "import sys, types\nb = sys.modules['builtins']\n"
             "sys.modules['builtins'] = types.ModuleType('builtins')\n"
             "__builtins__ = dict(vars(b))\ndel b");
  churn(h, 2000);
  namespace_works(h);
  exec_ok(h, "import builtins\nbuiltins.len = None");
  churn(h, 500);
  reliab_expect_int(h, "len('abc')", 3); /* the copy is what __main__'s code sees */
  exec_ok(h, "import sys; del sys.modules['builtins']");
  churn(h, 500);
  finish(h);
}

/* ---- plugins ---- */

static char tmp[256];

static void tmp_make(void) {
  snprintf(tmp, sizeof tmp, "%s/pyhost-lifetimes-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    exit(1);
  }
}

static void tmp_remove(void) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
}

/* Writes tmp/name with text; returns the path (static buffer). */
static const char *write_file(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
  return path;
}

/* A file plugin with a sibling module and hooks that remove their own package. */
static const char PLUGIN[] =
    "import sys\n"
    "from . import helper\n"
    "TOP = __name__.split('.')[0]\n"
    "def value():\n"
    "    return helper.VALUE + len([object() for _ in range(10)])\n"
    "def vanish():\n"
    "    for k in [k for k in sys.modules if k == TOP or k.startswith(TOP + '.')]:\n"
    "        del sys.modules[k]\n"
    "    globals().pop('helper', None)\n"
    "    return 7\n"
    "def vanish_loader():\n"
    "    sys.modules.pop('_pyhost_plugins', None)\n"
    "    return 8\n";

static void expect_hook_int(pyhost *h, pyhost_plugin *p, const char *hook, int64_t want) {
  pyhost_value *v = NULL;
  int64_t got = -1;
  int rc = pyhost_plugin_call(h, p, hook, NULL, NULL, &v);
  if (rc != PYHOST_OK || pyhost_value_to_int(h, v, &got) != PYHOST_OK || got != want) {
    fprintf(stderr, "hook %s: %s (%lld, expected %lld): %s\n", hook, pyhost_status_name(rc),
            (long long)got, (long long)want, pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
}

static pyhost_plugin *load_plugin(pyhost *h, const char *path) {
  pyhost_plugin *p = NULL;
  int rc = pyhost_plugin_load(h, path, &p);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "loading %s: %s: %s\n", path, pyhost_status_name(rc), pyhost_errmsg(h));
    exit(1);
  }
  return p;
}

static const char *plugin_path(void) {
  write_file("helper.py", "VALUE = 100\n");
  return write_file("life.py", PLUGIN);
}

TEST_CASE(plugin_package_removed) {
  tmp_make();
  pyhost *h = reliab_start();
  pyhost_plugin *p = load_plugin(h, plugin_path());
  expect_hook_int(h, p, "value", 110);
  char code[512];
  snprintf(code, sizeof code,
           "import sys\nfor k in [k for k in sys.modules if k.startswith('%s')]:\n"
           "    del sys.modules[k]",
           pyhost_plugin_module_name(p));
  exec_ok(h, code);
  exec_ok(h, "import sys; sys.modules.pop('_pyhost_plugins')");
  churn(h, 2000);
  /* the plugin keeps its module (pyhost's reference) and the module its helper */
  expect_hook_int(h, p, "value", 110);
  pyhost_value *names = NULL;
  CHECK_RC(pyhost_plugin_hooks(h, p, &names), PYHOST_OK);
  CHECK(pyhost_value_count(names) == 3);
  pyhost_value_free(names);
  /* the loader is pyhost's too: a reload and a second plugin still load */
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  expect_hook_int(h, p, "value", 110);
  pyhost_plugin *q = load_plugin(h, plugin_path());
  CHECK(strcmp(pyhost_plugin_module_name(p), pyhost_plugin_module_name(q)) != 0);
  expect_hook_int(h, q, "value", 110);
  churn(h, 500);
  pyhost_plugin_unload(q);
  pyhost_plugin_unload(p);
  churn(h, 500);
  finish(h);
  tmp_remove();
}

TEST_CASE(plugin_removes_itself_in_hook) {
  tmp_make();
  pyhost *h = reliab_start();
  pyhost_plugin *p = load_plugin(h, plugin_path());
  expect_hook_int(h, p, "vanish", 7);
  churn(h, 2000);
  /* its helper went from the namespace: a clear NameError, nothing worse */
  CHECK_RC(pyhost_plugin_call(h, p, "value", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "helper");
  expect_hook_int(h, p, "vanish_loader", 8);
  churn(h, 1000);
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  expect_hook_int(h, p, "value", 110);
  expect_hook_int(h, p, "vanish", 7);
  pyhost_plugin_unload(p);
  churn(h, 500);
  finish(h);
  tmp_remove();
}

/* ---- host modules, functions and types ---- */

static int fn_echo(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  if (nargs != 1) return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "echo(x) takes one argument");
  *result = pyhost_value_copy(args[0]);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

static int destroyed;

static int box_ctor(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, void **payload) {
  (void)ud, (void)kwargs;
  int64_t n = 0;
  if (nargs != 1 || pyhost_value_to_int(h, args[0], &n) != PYHOST_OK)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Box(n) takes an int");
  int64_t *p = malloc(sizeof *p);
  if (!p) return PYHOST_NOMEM;
  *p = n;
  *payload = p;
  return PYHOST_OK;
}

static void box_dtor(void *payload, void *ud) {
  (void)ud;
  destroyed++;
  free(payload);
}

static int box_get(pyhost *h, void *payload, void *ud, pyhost_value **result) {
  (void)h, (void)ud;
  *result = pyhost_value_int(*(int64_t *)payload);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

static int box_bump(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                    size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs;
  *result = pyhost_value_int(++*(int64_t *)payload);
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

struct hostmod {
  pyhost_module *m;
  pyhost_type *t;
};

static struct hostmod hostmod_new(pyhost *h) {
  struct hostmod hm = {NULL, NULL};
  static const pyhost_method_def methods[] = {{"bump", box_bump, NULL}};
  static const pyhost_property_def props[] = {{"n", box_get, NULL, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Box", .methods = methods,
                           .n_methods = 1, .properties = props, .n_properties = 1,
                           .constructor = box_ctor, .destructor = box_dtor};
  int rc = pyhost_module_new(h, "lifemod", NULL, &hm.m);
  if (!rc) rc = pyhost_module_add_function(h, hm.m, "echo", fn_echo, NULL, NULL);
  if (!rc) rc = pyhost_type_new(h, hm.m, &spec, &hm.t);
  if (rc) {
    fprintf(stderr, "making lifemod: %s\n", pyhost_errmsg(h));
    exit(1);
  }
  return hm;
}

static void hostmod_free(pyhost *h, struct hostmod *hm) {
  pyhost_type_free(h, hm->t);
  pyhost_module_free(h, hm->m);
}

TEST_CASE(host_module_removed_and_reimported) {
  pyhost *h = reliab_start();
  struct hostmod hm = hostmod_new(h);
  exec_ok(h, "import lifemod\necho = lifemod.echo\nbox = lifemod.Box(5)");
  exec_ok(h, "import sys; del sys.modules['lifemod']; del lifemod");
  churn(h, 2000);
  /* what Python kept works; importing the name again is Python's own clear error */
  reliab_expect_int(h, "echo(3) + box.n + box.bump()", 3 + 5 + 6);
  CHECK_RC(pyhost_exec(h, "import lifemod", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "lifemod");
  /* the host's handle still owns the module: it grows, and the host can put it back */
  CHECK_RC(pyhost_module_add_function(h, hm.m, "echo2", fn_echo, NULL, NULL), PYHOST_OK);
  pyhost_value *mod = NULL;
  CHECK_RC(pyhost_module_value(h, hm.m, &mod), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "_m", mod), PYHOST_OK);
  pyhost_value_free(mod);
  exec_ok(h, "import sys; sys.modules['lifemod'] = _m; del _m");
  reliab_expect_int(h, "__import__('lifemod').echo2(4) + __import__('lifemod').Box(1).n", 5);
  /* removed again, then replaced by another module under the same name: freeing the
   * host module leaves the impostor alone */
  exec_ok(h, "import sys, types; sys.modules['lifemod'] = types.ModuleType('lifemod')");
  churn(h, 500);
  hostmod_free(h, &hm);
  CHECK(reliab_eval_true(h, "isinstance(__import__('sys').modules['lifemod'], type(__import__('sys')))"));
  CHECK_RC(pyhost_exec(h, "echo(1)", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "lifemod.echo was unregistered by the host");
  churn(h, 500);
  exec_ok(h, "del box");
  CHECK(destroyed == 2);
  finish(h);
}

TEST_CASE(host_functions_and_types_deleted) {
  pyhost *h = reliab_start();
  struct hostmod hm = hostmod_new(h);
  pyhost_value *fn = NULL, *cls = NULL, *obj = NULL;
  CHECK_RC(pyhost_resolve(h, "lifemod.echo", &fn), PYHOST_OK);
  CHECK_RC(pyhost_type_value(h, hm.t, &cls), PYHOST_OK);
  int64_t *payload = malloc(sizeof *payload);
  *payload = 40;
  CHECK_RC(pyhost_object_new(h, hm.t, payload, &obj), PYHOST_OK);
  /* Python drops every reference it has: attributes, the module, the module's dict */
  exec_ok(h, "import sys, lifemod\ndel lifemod.echo, lifemod.Box\n"
             "vars(lifemod).clear()\ndel sys.modules['lifemod'], lifemod\n"
             "import gc; gc.collect()");
  churn(h, 2000);
  /* the C values still hold the function, the class and the instance */
  pyhost_value *arg = pyhost_value_int(9), *r = NULL;
  const pyhost_value *argv[1] = {arg};
  int64_t got = -1;
  CHECK_RC(pyhost_callv(h, fn, argv, 1, NULL, &r), PYHOST_OK);
  CHECK(r && pyhost_value_to_int(h, r, &got) == PYHOST_OK && got == 9);
  pyhost_value_free(r);
  r = NULL;
  CHECK_RC(pyhost_callv(h, cls, argv, 1, NULL, &r), PYHOST_OK);
  void *pl = NULL;
  CHECK_RC(pyhost_object_payload(h, r, hm.t, &pl), PYHOST_OK);
  CHECK(pl && *(int64_t *)pl == 9);
  pyhost_value_free(r);
  r = NULL;
  pyhost_value *bump = NULL;
  CHECK_RC(pyhost_getattr(h, obj, "bump", &bump), PYHOST_OK);
  CHECK_RC(pyhost_callv(h, bump, NULL, 0, NULL, &r), PYHOST_OK);
  pyhost_value_free(bump);
  CHECK(r && pyhost_value_to_int(h, r, &got) == PYHOST_OK && got == 41);
  pyhost_value_free(r);
  pyhost_value_free(arg);
  /* the host lets go of everything while Python holds none of it */
  pyhost_value_free(fn);
  pyhost_value_free(obj);
  CHECK(destroyed == 2);
  hostmod_free(h, &hm);
  churn(h, 500);
  pyhost_value_free(cls);
  churn(h, 500);
  finish(h);
}

TEST_CASE(parent_dropped_while_creating_child) {
  pyhost *h = reliab_start();
  /* The next allocation of a GC object collects (3.6 to 3.11 collect right there; 3.12
   * and later at the next bytecode, after the call) and a __del__ then drops the
   * parent module that pyhost_module_new has looked up and not yet used. */
  exec_ok(h, "import gc, sys, types\ngc.disable()\ngc.set_threshold(1)\n"
             "sys.modules['lifeparent'] = types.ModuleType('lifeparent')\n"
             "class D(object):\n"
             "    def __del__(self):\n"
             "        sys.modules.pop('lifeparent', None)\n"
             "d = D(); d.me = d; del d");
  exec_ok(h, "gc.enable()");
  pyhost_module *m = NULL;
  int rc = pyhost_module_new(h, "lifeparent.child", NULL, &m);
  CHECK(rc == PYHOST_OK || rc == PYHOST_MISUSE);
  exec_ok(h, "gc.set_threshold(700); gc.collect()");
  churn(h, 1000);
  pyhost_module_free(h, m);
  finish(h);
}

/* ---- random sequences of removals between pyhost calls ---- */

static uint64_t rng_state;

static unsigned rnd(unsigned n) {
  rng_state ^= rng_state << 13; /* xorshift64: the same sequence on every platform */
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state % n);
}

/* Removals; {top} is the plugin's top-level package. */
static const char *const REMOVALS[] = {
    "import sys; sys.modules.pop('__main__', None)",
    "import sys, types; sys.modules['__main__'] = types.ModuleType('x')",
    "import sys; sys.modules.pop('lifemod', None)",
    "import sys; sys.modules.pop('_pyhost_plugins', None)",
    "import sys\nfor k in [k for k in sys.modules if k.startswith('_pyhost_plugin_')]:\n"
    "    del sys.modules[k]",
    "import sys; sys.modules.pop('traceback', None)",
    "import sys; sys.modules['traceback'] = 42",
    "import sys, types; sys.modules['builtins'] = types.ModuleType('builtins')",
    "__builtins__ = dict(vars(len.__self__))", /* a copy of the real builtins */
    "import sys\nfor k in [k for k in sys.modules if k not in ('sys', 'builtins')]:\n"
    "    del sys.modules[k]",
    "import gc; gc.collect()",
    "import sys; sys.modules = dict(sys.modules)",
    "globals().pop('echo', None); globals().pop('Box', None)",
    "_junk = [bytearray(256) for _ in range(200)]; del _junk",
};
#define N_REMOVALS (sizeof REMOVALS / sizeof *REMOVALS)

/* One pyhost call of a random kind: any status but a crash is acceptable, but a
 * failed call must say why, and the answers that must hold are checked. */
static void random_call(pyhost *h, pyhost_plugin **p, struct hostmod *hm, pyhost_value *fn) {
  pyhost_value *v = NULL;
  int rc;
  switch (rnd(9)) {
  case 0:
    reliab_expect_int(h, "6 * 7", 42);
    return;
  case 1:
    rc = pyhost_exec(h, "x = [str(i) for i in range(50)]; y = len(x)", NULL);
    break;
  case 2: {
    pyhost_value *i = pyhost_value_int(5);
    CHECK_RC(pyhost_set_global(h, "g", i), PYHOST_OK);
    pyhost_value_free(i);
    CHECK_RC(pyhost_get_global(h, "g", &v), PYHOST_OK);
    int64_t got = -1;
    CHECK(v && pyhost_value_to_int(h, v, &got) == PYHOST_OK && got == 5);
    rc = PYHOST_OK;
    break;
  }
  case 3: {
    pyhost_value *i = pyhost_value_int(3);
    const pyhost_value *argv[1] = {i};
    CHECK_RC(pyhost_callv(h, fn, argv, 1, NULL, &v), PYHOST_OK);
    pyhost_value_free(i);
    rc = PYHOST_OK;
    break;
  }
  case 4:
    expect_hook_int(h, *p, "value", 110);
    rc = PYHOST_OK;
    break;
  case 5:
    rc = pyhost_plugin_reload(h, *p);
    break;
  case 6:
    rc = pyhost_exec(h, "raise KeyError('boom')", NULL);
    CHECK(rc == PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "boom");
    rc = PYHOST_OK;
    break;
  case 7:
    rc = pyhost_module_add_value(h, hm->m, "n", fn);
    break;
  default:
    rc = pyhost_eval(h, "__import__('lifemod').echo(1)", &v);
    break;
  }
  if (rc != PYHOST_OK && !pyhost_errmsg(h)[0]) {
    fprintf(stderr, "a call failed with %s and no message\n", pyhost_status_name(rc));
    check_failures++;
  }
  pyhost_value_free(v);
}

TEST_CASE(random_removals) {
  /* the seed: argv[4] when given (to replay a failure), else a fixed one */
  rng_state = check_arg4 && check_arg4[0] ? strtoull(check_arg4, NULL, 0) : 0x13131313u;
  if (!rng_state) rng_state = 1;
  printf("seed: 0x%llx (replay: %s random_removals LIB VERSION 0x%llx)\n",
         (unsigned long long)rng_state, "test_lifetimes", (unsigned long long)rng_state);
  tmp_make();
  pyhost *h = reliab_start();
  struct hostmod hm = hostmod_new(h);
  pyhost_plugin *p = load_plugin(h, plugin_path());
  pyhost_value *fn = NULL;
  CHECK_RC(pyhost_resolve(h, "lifemod.echo", &fn), PYHOST_OK);
  int steps = reliab_iterations(3000);
  for (int i = 0; i < steps && !check_failures; i++) {
    if (rnd(4) == 0) {
      int rc = pyhost_exec(h, REMOVALS[rnd(N_REMOVALS)], "<removal>");
      if (rc != PYHOST_OK && rc != PYHOST_PYEXC) {
        fprintf(stderr, "step %d: a removal gave %s: %s\n", i, pyhost_status_name(rc),
                pyhost_errmsg(h));
        check_failures++;
      }
    }
    random_call(h, &p, &hm, fn);
  }
  printf("%d steps\n", steps);
  pyhost_value_free(fn);
  pyhost_plugin_unload(p);
  hostmod_free(h, &hm);
  churn(h, 200);
  finish(h);
  tmp_remove();
}

/* ---- issue 22: handles freed while a call of them runs, handles after finalize ---- */

/* unloader.unload_me(): unloads the plugin in userdata, from inside its own hook, then
 * reuses the small blocks the unload freed (as a host's next allocations would). */
static int fn_unload_me(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, pyhost_value **result) {
  (void)args, (void)nargs, (void)kwargs;
  pyhost_plugin_unload(*(pyhost_plugin **)ud);
  char *reuse[8];
  for (int i = 0; i < 8; i++)
    if ((reuse[i] = malloc(8))) memcpy(reuse[i], "XXXXXXX", 8);
  for (int i = 0; i < 8; i++) free(reuse[i]);
  (void)h;
  *result = pyhost_value_none();
  return *result ? PYHOST_OK : PYHOST_NOMEM;
}

TEST_CASE(plugin_unloaded_by_its_running_hook) {
  tmp_make();
  pyhost *h = reliab_start();
  static pyhost_plugin *p;
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "unloader", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "unload_me", fn_unload_me, &p, NULL), PYHOST_OK);
  p = load_plugin(h, write_file("gone.py",
                                "import unloader\n"
                                "def leave():\n"
                                "    unloader.unload_me()\n"
                                "    raise ValueError('raised after the unload')\n"));
  /* the running call still names its plugin; the plugin is freed on its way out */
  CHECK_RC(pyhost_plugin_call(h, p, "leave", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin gone: hook leave raised");
  CHECK_CONTAINS(pyhost_errmsg(h), "raised after the unload");
  churn(h, 200);
  /* the one-line form keeps the plugin alive under its hook the same way */
  p = load_plugin(h, write_file("gone2.py",
                                "import unloader\n"
                                "def leave():\n"
                                "    unloader.unload_me()\n"
                                "    raise ValueError('raised after the unload')\n"));
  CHECK_RC(pyhost_plugin_callf(h, p, "leave", ""), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin gone2: hook leave raised");
  CHECK_CONTAINS(pyhost_errmsg(h), "raised after the unload");
  churn(h, 200);
  /* a borrowed result (>s) would die with the plugin: the call fails, writing nothing */
  p = load_plugin(h, write_file("gone3.py",
                                "import unloader\n"
                                "def leave():\n"
                                "    unloader.unload_me()\n"
                                "    return 'text' * 100\n"));
  const char *text = "untouched";
  size_t len = 12345;
  CHECK_RC(pyhost_plugin_callf(h, p, "leave", ">s", &text, &len), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin gone3 was unloaded during its own call");
  CHECK(strcmp(text, "untouched") == 0 && len == 12345);
  churn(h, 200);
  pyhost_module_free(h, m);
  finish(h);
  tmp_remove();
}

/* pyhost_object_payload after finalize: MISUSE like every later call (the instance died
 * with the interpreter), not a read of freed memory. */
TEST_CASE(object_payload_after_finalize) {
  pyhost *h = reliab_start();
  struct hostmod hm = hostmod_new(h);
  pyhost_value *obj = NULL;
  static int64_t n = 5; /* the destructor never runs: the host's value keeps the instance */
  CHECK_RC(pyhost_object_new(h, hm.t, NULL, &obj), PYHOST_OK);
  void *payload = &n;
  CHECK_RC(pyhost_object_payload(h, obj, hm.t, &payload), PYHOST_OK);
  CHECK(payload == NULL);
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  payload = &n;
  CHECK_RC(pyhost_object_payload(h, obj, hm.t, &payload), PYHOST_MISUSE);
  CHECK(payload == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "finalized");
  pyhost_value_free(obj);
  hostmod_free(h, &hm);
  pyhost_free(h);
}
