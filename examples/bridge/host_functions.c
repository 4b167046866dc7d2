/* host_functions.c: the example of docs/host-functions.md.  A host module "calc"
 * with C functions that take values, return values, raise Python exceptions and call
 * back into Python.
 *   example_host_functions [PYTHON_LIBRARY] */
#include "common.h"

#include <inttypes.h>

/* calc.div(a, b): integer division; dividing by zero raises calc.Error. */
static int calc_div(pyhost *py, void *userdata, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)userdata;
  (void)kwargs;
  int64_t a, b;
  if (nargs != 2) return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "div() takes 2 arguments, got %zu", nargs);
  if (pyhost_value_to_int(py, args[0], &a) != PYHOST_OK || pyhost_value_to_int(py, args[1], &b) != PYHOST_OK)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "div(): %s", pyhost_errmsg(py));
  if (b == 0) return pyhost_raise_named(py, "calc.Error", "division of %" PRId64 " by zero", a);
  *result = pyhost_value_int(a / b);
  return PYHOST_OK;
}

/* calc.count(): how often it was called; the counter is the userdata. */
static int calc_count(pyhost *py, void *userdata, const pyhost_value *const *args, size_t nargs,
                      const pyhost_value *kwargs, pyhost_value **result) {
  (void)py;
  (void)args;
  (void)nargs;
  (void)kwargs;
  int *n = userdata;
  *result = pyhost_value_int(++*n);
  return PYHOST_OK;
}

/* calc.apply(f, *xs, twice=False): calls the Python callable f on each x. */
static int calc_apply(pyhost *py, void *userdata, const pyhost_value *const *args, size_t nargs,
                      const pyhost_value *kwargs, pyhost_value **result) {
  (void)userdata;
  if (nargs < 1) return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "apply(f, *xs)");
  const pyhost_value *twice = pyhost_value_lookup(kwargs, "twice");
  int rep = 1;
  if (twice && pyhost_value_to_bool(py, twice, &rep) != PYHOST_OK)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "apply(): twice: %s", pyhost_errmsg(py));
  pyhost_value *out = pyhost_value_list();
  for (size_t i = 1; i < nargs; i++) {
    pyhost_value *x = pyhost_value_copy(args[i]);
    for (int k = 0; k < (rep ? 2 : 1); k++) {
      const pyhost_value *one[1] = {x};
      pyhost_value *y = NULL;
      int rc = pyhost_callv(py, args[0], one, 1, NULL, &y);
      pyhost_value_free(x);
      if (rc != PYHOST_OK) {
        pyhost_value_free(out);
        return rc; /* the Python exception goes back to the caller as it was */
      }
      x = y;
    }
    pyhost_value_append(out, x);
  }
  *result = out;
  return PYHOST_OK;
}

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  int calls = 0;
  pyhost_module *calc = NULL;
  pyhost_module_new(py, "calc", "Arithmetic done in C.", &calc);
  pyhost_module_add_function(py, calc, "div", calc_div, NULL, "div(a, b) -> a // b");
  pyhost_module_add_function(py, calc, "count", calc_count, &calls, NULL);
  pyhost_module_add_function(py, calc, "apply", calc_apply, NULL, NULL);
  pyhost_module_add_exception(py, calc, "Error", PYHOST_EXC_VALUE_ERROR, NULL);

  run(py,
      "import calc\n"
      "print('div(17, 5) =', calc.div(17, 5), '|', calc.div.__doc__)\n"
      "print('count:', calc.count(), calc.count(), calc.count())\n"
      "print('apply:', calc.apply(lambda x: x * 10, 1, 2, 3))\n"
      "print('apply twice:', calc.apply(lambda s: s + '!', 'hi', twice=True))\n"
      "for bad in ['calc.div(1, 0)', 'calc.div(1)', 'calc.div(1, \"x\")', 'calc.apply(int, \"x\")']:\n"
      "    try:\n"
      "        eval(bad)\n"
      "    except (calc.Error, TypeError, ValueError) as e:\n"
      "        print('%s -> %s: %s' % (bad, type(e).__name__, e))\n"
      "try:\n"
      "    calc.div(1, 0)\n"
      "except ValueError:\n"
      "    print('calc.Error is a ValueError')\n");
  printf("the C side counted %d calls\n", calls);

  /* uncaught, the exception comes back to C with its traceback */
  int rc = pyhost_exec(py, "def mean(xs):\n    return calc.div(sum(xs), len(xs))\nmean([])\n", "stats.py");
  printf("%s: %s\n", pyhost_status_name(rc), last_line(py));
  printf("traceback names stats.py line 2: %s\n",
         strstr(pyhost_errmsg(py), "File \"stats.py\", line 2, in mean") ? "yes" : "no");

  pyhost_module_free(py, calc);
  pyhost_free(py);
  return 0;
}
