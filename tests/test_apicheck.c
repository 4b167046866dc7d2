/* test_apicheck.c: API misuse checks at the public entry points (issue 33), on every
 * Python: with PYHOST_ASSERTS the misuse aborts with the entry point and the rule on
 * stderr; without, the entry does what its header documents. */
#include "death.h"
#include "pyhost.h"

static pyhost *h;

/* A host function that frees its own pyhost: the call it runs in would go on with
 * the handle freed under it. */
static int free_my_host(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  pyhost_free(hh);
  return PYHOST_OK;
}

static void free_inside_a_callback(void) {
  pyhost_module *m = NULL;
  if (pyhost_module_new(h, "apicheck", NULL, &m) ||
      pyhost_module_add_function(h, m, "free_host", free_my_host, NULL, NULL))
    _exit(3);
  int rc = pyhost_exec(h, "import apicheck; apicheck.free_host()", NULL);
  /* release build: refused, the handle still works and says why */
  if (rc != PYHOST_OK) _exit(4);
  pyhost_value *v = NULL;
  int64_t n = 0;
  if (pyhost_eval(h, "6 * 7", &v) != PYHOST_OK || pyhost_value_to_int(h, v, &n) || n != 42)
    _exit(5);
  pyhost_value_free(v);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(free_inside_a_call_is_misuse) {
  h = check_start(NULL);
  death_expect(free_inside_a_callback, "pyhost: API misuse in pyhost_free",
               "while a pyhost call runs on this thread");
  pyhost_free(h);
}
