/* fast_functions.c: the hot-path example of docs/host-functions.md.  A host function
 * of the fast form reads its arguments on demand straight into C (no pyhost_value per
 * argument), takes a keyword argument, sets its result in place, and lets a wrong
 * argument reach Python as TypeError.
 *   example_fast_functions [PYTHON_LIBRARY] */
#include "common.h"

/* scale(x, factor, *, label=None) -> x * factor, or "label: x * factor" */
static int geo_scale(pyhost *py, void *userdata, const pyhost_args *args, pyhost_ret *ret) {
  const double *limit = userdata;
  double x, factor;
  int rc;
  if (pyhost_args_count(args) != 2)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "scale() takes 2 positional arguments, got %zu",
                        pyhost_args_count(args));
  /* a wrong type raises TypeError in the callback's frame: returning rc hands it on */
  if ((rc = pyhost_args_float(py, args, 0, &x)) || (rc = pyhost_args_float(py, args, 1, &factor)))
    return rc;
  if (x * factor > *limit)
    return pyhost_raise(py, PYHOST_EXC_VALUE_ERROR, "%g is over the limit %g", x * factor, *limit);
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name, *label;
    size_t len;
    if ((rc = pyhost_args_kwname(py, args, k, &name, NULL))) return rc;
    if (strcmp(name, "label") != 0)
      return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "scale() got an unexpected keyword %s", name);
    if ((rc = pyhost_args_str(py, args, 2 + k, &label, &len))) return rc; /* borrowed */
    char text[128];
    int n = snprintf(text, sizeof text, "%.*s: %g", (int)len, label, x * factor);
    return pyhost_ret_str(py, ret, text, (size_t)n);
  }
  return pyhost_ret_float(py, ret, x * factor); /* no allocation */
}

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  static const double limit = 1000;
  pyhost_module *geo = NULL;
  pyhost_module_new(py, "geo", "Geometry done in C.", &geo);
  pyhost_module_add_fast_function(py, geo, "scale", geo_scale, (void *)&limit,
                                  "scale(x, factor, *, label=None)");

  run(py, "import geo\n"
          "print(geo.scale(2, 1.5))\n"
          "print(sum(geo.scale(i, 2) for i in range(100)))\n"
          "print(geo.scale(3, 4, label='area'))\n");
  run(py, "geo.scale('3', 4)");
  run(py, "geo.scale(3, 4, colour='red')");
  run(py, "geo.scale(100, 20)");
  run(py, "try:\n"
          "    geo.scale(1)\n"
          "except TypeError as e:\n"
          "    print('caught:', e)\n");

  pyhost_module_free(py, geo);
  pyhost_free(py);
  return 0;
}
