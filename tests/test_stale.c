/* test_stale.c: handles used after their pyhost was freed (issue 39, defect 5), one
 * case per handle type.  Every call answers PYHOST_MISUSE (or its documented empty
 * answer) without reading the freed handle's memory: valgrind (memcheck.stale.*) and
 * ASan report any read, and the handles' own frees stay clean.
 * Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What every pyhost_errmsg of a freed handle says. */
#define STALE "not a live pyhost handle"

/* Calls on the freed handle h itself. */
static void pyhost_calls_refused(pyhost *h) {
  pyhost_value *v = (pyhost_value *)1;
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  CHECK_RC(pyhost_exec(h, "x = 1", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_eval(h, "1", &v), PYHOST_MISUSE);
  CHECK(v == NULL);
  CHECK_RC(pyhost_import(h, "os", &v), PYHOST_MISUSE);
  CHECK_RC(pyhost_set_global(h, "x", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_gil_leave(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_thread_attach(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_thread_detach(h), PYHOST_MISUSE);
  CHECK_RC(pyhost_interrupt(h), PYHOST_MISUSE);
  CHECK(pyhost_exit_code(h) == 0);
  CHECK(pyhost_python_version(h) == 0);
  CHECK_STREQ(pyhost_library_path(h), "");
  CHECK_STREQ(pyhost_python_version_text(h), "");
  CHECK_STREQ(pyhost_python_home(h), "");
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK_CONTAINS(pyhost_errtext(h), STALE);
  CHECK(pyhost_errframe_count(h) == 0);
  CHECK_RC(pyhost_errframe(h, 0, NULL, NULL, NULL), PYHOST_MISUSE);
  pyhost_free(h); /* a second free is a no-op */
}

TEST_CASE(interpreter) {
  /* a handle whose init failed, freed */
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent/libpython3.99.so");
  pyhost *failed = NULL;
  CHECK_RC(pyhost_init(c, &failed), PYHOST_NOTFOUND);
  pyhost_config_free(c);
  CHECK_CONTAINS(pyhost_errmsg(failed), "/nonexistent/libpython3.99.so");
  pyhost_free(failed);
  CHECK_CONTAINS(pyhost_errmsg(failed), STALE);
  CHECK_RC(pyhost_exec(failed, "x = 1", NULL), PYHOST_MISUSE);
  pyhost_free(failed);
  /* the running one */
  pyhost *h = check_start(NULL);
  CHECK_RC(pyhost_exec(h, "1/0", NULL), PYHOST_PYEXC); /* a message and data to free */
  pyhost_free(h);
  pyhost_calls_refused(h);
}

/* Freed inside its own GIL scope: the scope ends with it, and Python is finalized. */
TEST_CASE(interpreter_freed_in_a_gil_scope) {
  pyhost *h = check_start(NULL);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  CHECK_RC(pyhost_gil_enter(h), PYHOST_OK);
  pyhost_free(h);
  pyhost_calls_refused(h);
  /* finalized: a new init is refused as after any finalize */
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost *again = NULL;
  CHECK_RC(pyhost_init(c, &again), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(again), "already finalized");
  pyhost_config_free(c);
  pyhost_free(again);
}

TEST_CASE(value) {
  pyhost *h = check_start(NULL);
  pyhost_value *obj = NULL, *num = NULL;
  CHECK_RC(pyhost_eval(h, "object()", &obj), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "[1, 'two', 3.0]", &num), PYHOST_OK);
  pyhost_free(h);
  CHECK(pyhost_value_repr(h, obj) == NULL);
  CHECK(pyhost_value_copy(obj) == NULL); /* an object value needs Python */
  pyhost_value *copy = pyhost_value_copy(num); /* plain C data does not */
  CHECK(pyhost_value_count(copy) == 3);
  int64_t i = 0;
  CHECK_RC(pyhost_value_to_int(h, pyhost_value_item(num, 0), &i), PYHOST_OK);
  CHECK(i == 1);
  CHECK_RC(pyhost_value_to_int(h, pyhost_value_item(num, 1), &i), PYHOST_TYPE); /* no message to set */
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_call(h, obj, NULL, NULL, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_getattr(h, obj, "x", &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  pyhost_value_free(copy);
  pyhost_value_free(num);
  pyhost_value_free(obj);
}

TEST_CASE(callable) {
  pyhost *h = check_start(NULL);
  pyhost_callable *c = NULL, *e = NULL;
  CHECK_RC(pyhost_prepare_name(h, "len", &c), PYHOST_OK);
  CHECK_RC(pyhost_prepare_expression(h, "x", "x * 2", &e), PYHOST_OK);
  pyhost_free(h);
  pyhost_arg a = pyhost_arg_str("abc", PYHOST_STRLEN);
  int64_t n = -1;
  double d = -1;
  int b = -1;
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_prepared_call(h, c, &a, 1), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call(h, c, NULL, 0), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call_int(h, c, &a, 1, &n), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call_float(h, e, &a, 1, &d), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call_bool(h, e, &a, 1, &b), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_call_value(h, e, &a, 1, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_prepared_callf(h, c, "s>i", "abc", &n), PYHOST_MISUSE);
  CHECK_RC(pyhost_call_namef(h, "len", "s>i", "abc", &n), PYHOST_MISUSE);
  CHECK(n == -1 && d == -1 && b == -1 && r == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  pyhost_callable_free(c);
  pyhost_callable_free(e);
}

TEST_CASE(plugin) {
  pyhost *h = check_start(NULL);
  char dir[256];
  snprintf(dir, sizeof dir, "%s/pyhost-stale-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  char path[512];
  snprintf(path, sizeof path, "%s/greeter.py", dir);
  FILE *f = fopen(path, "w");
  fputs("def hello(name='x'):\n    return 'hello ' + name\n", f);
  fclose(f);
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_load(h, path, &p), PYHOST_OK);
  pyhost_free(h);
  unlink(path);
  rmdir(dir);
  pyhost_value *r = NULL;
  double d = -1;
  CHECK_RC(pyhost_plugin_call(h, p, "hello", NULL, NULL, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_callf(h, p, "hello", ">d", &d), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_has_hook(h, p, "hello"), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_hooks(h, p, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_module(h, p, &r), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_MISUSE);
  CHECK(r == NULL && d == -1);
  CHECK_STREQ(pyhost_plugin_name(p), "greeter"); /* the plugin's own memory */
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  pyhost_plugin_unload(p);
}

static int answer(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                  const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)ud, (void)args, (void)nargs, (void)kwargs;
  *result = pyhost_value_int(42);
  return PYHOST_OK;
}

TEST_CASE(module) {
  pyhost *h = check_start(NULL);
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "app", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "answer", answer, NULL, NULL), PYHOST_OK);
  pyhost_free(h);
  pyhost_value *v = pyhost_value_int(1), *r = NULL;
  CHECK_RC(pyhost_module_add_function(h, m, "again", answer, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_value(h, m, "x", v), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_exception(h, m, "Error", PYHOST_EXC_EXCEPTION, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_remove(h, m, "answer"), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_value(h, m, &r), PYHOST_MISUSE);
  pyhost_module *other = (pyhost_module *)1;
  CHECK_RC(pyhost_module_new(h, "other", NULL, &other), PYHOST_MISUSE);
  CHECK(other == NULL); /* *out is NULL on failure */
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  pyhost_value_free(v);
  pyhost_module_free(h, m);
}

struct point {
  int64_t x, y;
};

TEST_CASE(type) {
  pyhost *h = check_start(NULL);
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "geo", NULL, &m), PYHOST_OK);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Point", .payload_size = sizeof(struct point)};
  CHECK_RC(pyhost_type_new(h, m, &spec, &t), PYHOST_OK);
  struct point pt = {1, 2};
  pyhost_value *obj = NULL, *cls = NULL;
  CHECK_RC(pyhost_object_new(h, t, &pt, &obj), PYHOST_OK);
  pyhost_free(h);
  void *payload = (void *)1;
  CHECK_RC(pyhost_object_new(h, t, &pt, &cls), PYHOST_MISUSE);
  CHECK_RC(pyhost_object_payload(h, obj, t, &payload), PYHOST_MISUSE);
  CHECK(payload == NULL);
  CHECK_RC(pyhost_object_invalidate(h, obj, t), PYHOST_MISUSE);
  CHECK_RC(pyhost_type_value(h, t, &cls), PYHOST_MISUSE);
  CHECK(cls == NULL);
  pyhost_type *t2 = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec, &t2), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  pyhost_value_free(obj);
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
}

/* ---- handles freed on a live pyhost: a second free, a call, another kind ---- */

/* What a freed (or foreign) handle of kind K is refused with. */
#define NOT_LIVE(K) "is not a live pyhost_" K " handle"

/* Writes a plugin file into a fresh directory: path (of cap bytes) names it. */
static void plugin_file(char *dir, size_t dcap, char *path, size_t cap) {
  snprintf(dir, dcap, "%s/pyhost-stale-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, cap, "%s/greeter.py", dir);
  FILE *f = fopen(path, "w");
  fputs("def hello(name='x'):\n    return 'hello ' + name\n", f);
  fclose(f);
}

static void plugin_file_remove(const char *dir, const char *path) {
  unlink(path);
  rmdir(dir);
}

/* One host buffer of 8 bytes. */
static pyhost_buffer *buffer_of(pyhost *h, unsigned char *mem) {
  pyhost_buffer_spec spec = {.data = mem, .ndim = 1, .shape = {8}};
  pyhost_buffer *b = NULL;
  CHECK_RC(pyhost_buffer_new(h, &spec, &b), PYHOST_OK);
  return b;
}

/* Every handle kind freed twice, then used: each refused with its kind named, the
 * pyhost still working (the frees and calls read only quarantined memory: valgrind
 * and ASan say so). */
TEST_CASE(double_free_every_handle) {
  pyhost *h = check_start(NULL);
  char dir[256], path[512];
  plugin_file(dir, sizeof dir, path, sizeof path);
  pyhost_callable *c = NULL;
  pyhost_plugin *p = NULL;
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  unsigned char mem[8] = {0};
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  CHECK_RC(pyhost_prepare_name(h, "len", &c), PYHOST_OK);
  CHECK_RC(pyhost_plugin_load(h, path, &p), PYHOST_OK);
  CHECK_RC(pyhost_module_new(h, "stale_app", NULL, &m), PYHOST_OK);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Point", .payload_size = sizeof(struct point)};
  CHECK_RC(pyhost_type_new(h, m, &spec, &t), PYHOST_OK);
  pyhost_buffer *b = buffer_of(h, mem);
  plugin_file_remove(dir, path);
  for (int twice = 0; twice < 2; twice++) {
    pyhost_callable_free(c);
    pyhost_plugin_unload(p);
    pyhost_type_free(h, t);
    pyhost_module_free(h, m);
    pyhost_plugin_options_free(o);
    size_t exports = 99;
    CHECK_RC(pyhost_buffer_release(h, b, &exports), twice ? PYHOST_MISUSE : PYHOST_OK);
    CHECK(exports == 0);
  }
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_buffer_release: buffer " NOT_LIVE("buffer"));
  pyhost_value *r = (pyhost_value *)1;
  int64_t n = -1;
  CHECK_RC(pyhost_prepared_call(h, c, NULL, 0), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_prepared_call: callable " NOT_LIVE("callable"));
  CHECK_RC(pyhost_prepared_callf(h, c, ">L", &n), PYHOST_MISUSE);
  CHECK(n == -1);
  CHECK_RC(pyhost_plugin_call(h, p, "hello", NULL, NULL, &r), PYHOST_MISUSE);
  CHECK(r == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_plugin_call: plugin " NOT_LIVE("plugin"));
  CHECK_STREQ(pyhost_plugin_name(p), "");
  CHECK_RC(pyhost_module_add_value(h, m, "x", NULL), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_module_add_value: module " NOT_LIVE("module"));
  struct point pt = {1, 2};
  CHECK_RC(pyhost_object_new(h, t, &pt, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_object_new: type " NOT_LIVE("type"));
  CHECK(pyhost_type_has_weakrefs(t) == 0);
  CHECK_RC(pyhost_buffer_value(h, b, &r), PYHOST_MISUSE);
  CHECK(pyhost_buffer_in_place(b) == 0);
  CHECK_RC(pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_SHARED), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_load_with(h, "x.py", o, &p), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_plugin_load_with: plugin_options " NOT_LIVE("plugin_options"));
  /* the pyhost goes on */
  CHECK_RC(pyhost_eval(h, "6 * 7", &r), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int(h, r, &n), PYHOST_OK);
  CHECK(n == 42);
  pyhost_value_free(r);
  pyhost_free(h);
}

/* A handle freed, then a new one of the same kind: the new one never gets the freed
 * one's address, so the stale handle stays refused and its second free leaves the new
 * one alone (the allocator would hand the address straight back). */
TEST_CASE(freed_address_not_reused) {
  pyhost *h = check_start(NULL);
  pyhost_arg a = pyhost_arg_str("abcd", PYHOST_STRLEN);
  int64_t n = 0;
  for (int i = 0; i < 8; i++) {
    pyhost_callable *old = NULL, *c = NULL;
    CHECK_RC(pyhost_prepare_name(h, "len", &old), PYHOST_OK);
    pyhost_callable_free(old);
    CHECK_RC(pyhost_prepare_name(h, "len", &c), PYHOST_OK);
    CHECK(c != old);
    pyhost_callable_free(old); /* a second free of the stale one */
    CHECK_RC(pyhost_prepared_call_int(h, old, &a, 1, &n), PYHOST_MISUSE);
    CHECK_RC(pyhost_prepared_call_int(h, c, &a, 1, &n), PYHOST_OK);
    CHECK(n == 4);
    pyhost_callable_free(c);

    pyhost_module *m0 = NULL, *m = NULL;
    CHECK_RC(pyhost_module_new(h, "stale_m0", NULL, &m0), PYHOST_OK);
    pyhost_module_free(h, m0);
    CHECK_RC(pyhost_module_new(h, "stale_m1", NULL, &m), PYHOST_OK);
    CHECK(m != m0);
    pyhost_module_free(h, m0);
    CHECK_RC(pyhost_module_add_value(h, m, "x", NULL), PYHOST_OK); /* None */
    pyhost_module_free(h, m);

    pyhost_plugin_options *o0 = pyhost_plugin_options_new(), *o = NULL;
    pyhost_plugin_options_free(o0);
    o = pyhost_plugin_options_new();
    CHECK(o != o0);
    pyhost_plugin_options_free(o0);
    CHECK_RC(pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_SHARED), PYHOST_OK);
    pyhost_plugin_options_free(o);
  }
  pyhost_free(h);
  /* the pyhost handle itself: handles of failed inits, freed and made again */
  for (int i = 0; i < 4; i++) {
    pyhost_config *c = pyhost_config_new();
    pyhost_config_set_library(c, check_lib);
    pyhost *old = NULL, *again = NULL;
    CHECK_RC(pyhost_init(c, &old), PYHOST_MISUSE); /* finalized above */
    pyhost_free(old);
    CHECK_RC(pyhost_init(c, &again), PYHOST_MISUSE);
    CHECK(again != old);
    CHECK_CONTAINS(pyhost_errmsg(old), STALE);
    CHECK_CONTAINS(pyhost_errmsg(again), "already finalized");
    pyhost_free(again);
    pyhost_config_free(c);
  }
}

/* A handle passed where another kind is wanted: refused, naming the kind wanted. */
TEST_CASE(handle_of_another_kind) {
  pyhost *h = check_start(NULL);
  pyhost_module *m = NULL;
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_module_new(h, "stale_kinds", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_prepare_name(h, "len", &c), PYHOST_OK);
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  pyhost_value *r = (pyhost_value *)1;
  CHECK_RC(pyhost_prepared_call(h, (pyhost_callable *)m, NULL, 0), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "callable " NOT_LIVE("callable"));
  CHECK_RC(pyhost_plugin_call(h, (pyhost_plugin *)c, "x", NULL, NULL, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin " NOT_LIVE("plugin"));
  CHECK(r == NULL);
  CHECK_RC(pyhost_module_add_value(h, (pyhost_module *)o, "x", NULL), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "module " NOT_LIVE("module"));
  pyhost_type *t = NULL;
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "P", .payload_size = 8};
  CHECK_RC(pyhost_type_new(h, (pyhost_module *)c, &spec, &t), PYHOST_MISUSE);
  CHECK(t == NULL);
  CHECK_RC(pyhost_type_value(h, (pyhost_type *)m, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "type " NOT_LIVE("type"));
  CHECK_RC(pyhost_buffer_value(h, (pyhost_buffer *)c, &r), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "buffer " NOT_LIVE("buffer"));
  CHECK_RC(pyhost_plugin_options_set_deps(( pyhost_plugin_options *)m, PYHOST_DEPS_OFF), PYHOST_MISUSE);
  /* frees of the wrong kind free nothing: every handle still works */
  pyhost_callable_free((pyhost_callable *)m);
  pyhost_plugin_unload((pyhost_plugin *)c);
  pyhost_module_free(h, (pyhost_module *)c);
  pyhost_plugin_options_free((pyhost_plugin_options *)c);
  CHECK_RC(pyhost_prepared_call(h, c, NULL, 0), PYHOST_PYEXC); /* len() */
  CHECK_RC(pyhost_module_add_value(h, m, "x", NULL), PYHOST_OK);
  CHECK_RC(pyhost_plugin_options_set_deps(o, PYHOST_DEPS_OFF), PYHOST_OK);
  pyhost_plugin_options_free(o);
  pyhost_callable_free(c);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Buffers and plugin options after their pyhost was freed. */
TEST_CASE(buffer_and_options) {
  pyhost *h = check_start(NULL);
  unsigned char mem[8] = {0};
  pyhost_buffer *b = buffer_of(h, mem), *b2 = buffer_of(h, mem);
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  CHECK_RC(pyhost_buffer_release(h, b2, NULL), PYHOST_OK);
  pyhost_free(h);
  pyhost_value *v = (pyhost_value *)1;
  CHECK_RC(pyhost_buffer_value(h, b, &v), PYHOST_MISUSE);
  CHECK(v == NULL);
  CHECK_RC(pyhost_buffer_release(h, b2, NULL), PYHOST_MISUSE); /* released before */
  pyhost_plugin *p = (pyhost_plugin *)1;
  CHECK_RC(pyhost_plugin_load_with(h, "x.py", o, &p), PYHOST_MISUSE);
  CHECK(p == NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), STALE);
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK); /* Python is gone: only the memory */
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_PROCESS), PYHOST_OK);
  pyhost_plugin_options_free(o);
  pyhost_plugin_options_free(o);
}

/* A view of a Python buffer held across its pyhost's free: released after, and twice. */
TEST_CASE(view) {
  pyhost *h = check_start(NULL);
  pyhost_value *obj = NULL;
  CHECK_RC(pyhost_eval(h, "bytearray(b'abcdef')", &obj), PYHOST_OK);
  pyhost_view v, again;
  CHECK_RC(pyhost_view_get(h, obj, 0, &v), PYHOST_OK);
  CHECK(v.len == 6);
  pyhost_free(h);
  CHECK_RC(pyhost_view_get(h, obj, 0, &again), PYHOST_MISUSE);
  pyhost_view_release(h, &v); /* Python is gone: only pyhost's memory */
  pyhost_view_release(h, &v); /* a second release: the view was emptied by the first */
  CHECK(v.len == 0 && v.data == NULL);
  pyhost_value_free(obj);
}

/* A fast host function's args and ret used outside it: on another thread while the
 * callback waits (that thread runs no callback and holds no GIL), and after it
 * returned.  Refused with PYHOST_MISUSE, nothing read. */
static pyhost *lent_h;
static const pyhost_args *lent_args;
static pyhost_ret *lent_ret;
static int other_rc[3];
static void *use_lent(void *unused) {
  (void)unused;
  int64_t i = -1;
  other_rc[0] = pyhost_args_int(lent_h, lent_args, 0, &i);
  other_rc[1] = pyhost_ret_int(lent_h, lent_ret, 2);
  other_rc[2] = i == -1 && strstr(pyhost_errmsg(lent_h), "called outside a host callback") != NULL;
  return NULL;
}
static int lend(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  lent_h = h, lent_args = args, lent_ret = ret;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, use_lent, NULL) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  return pyhost_ret_int(h, ret, 1);
}

TEST_CASE(args_outside_their_callback) {
  pyhost *h = check_start(NULL);
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "stale_lend", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "lend", lend, NULL, NULL), PYHOST_OK);
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('stale_lend').lend(5)", &r), PYHOST_OK);
  int64_t n = 0;
  CHECK_RC(pyhost_value_to_int(h, r, &n), PYHOST_OK);
  CHECK(n == 1); /* the other thread's ret_int did not land */
  pyhost_value_free(r);
  CHECK_RC(other_rc[0], PYHOST_MISUSE);
  CHECK_RC(other_rc[1], PYHOST_MISUSE);
  CHECK(other_rc[2] == 1);
  /* after the callback returned, on its own thread */
  CHECK_RC(pyhost_args_int(h, lent_args, 0, &n), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost_args_int: called outside a host callback");
  CHECK_RC(pyhost_ret_none(h, lent_ret), PYHOST_MISUSE);
  pyhost_module_free(h, m);
  pyhost_free(h);
}
