/* test_stale.c: handles used after their pyhost was freed (issue 39, defect 5), one
 * case per handle type.  Every call answers PYHOST_MISUSE (or its documented empty
 * answer) without reading the freed handle's memory: valgrind (memcheck.stale.*) and
 * ASan report any read, and the handles' own frees stay clean.
 * Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <stdlib.h>
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
