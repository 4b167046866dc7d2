/* keywords.c: the keyword-plan example of docs/calling.md.  A host formats sensor
 * readings through a user's Python formatter that takes its options by keyword,
 * fmt(value, unit=..., digits=...).  The call's layout (one positional argument, then
 * unit and digits by keyword) is prepared once with pyhost_prepare_keywords; each call
 * passes only values, and the str result is read in place (pyhost_prepared_call_str).
 *   example_keywords [PYTHON_LIBRARY] */
#include "common.h"

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  run(py, "def fmt(value, *, unit='', digits=2):\n"
          "    return f'{value:.{digits}f} {unit}'.rstrip()\n");

  pyhost_callable *fmt = NULL, *fmt_unit_digits = NULL;
  static const char *const names[] = {"unit", "digits"};
  if (pyhost_prepare_name(py, "fmt", &fmt) != PYHOST_OK ||
      pyhost_prepare_keywords(py, fmt, 1, names, 2, &fmt_unit_digits) != PYHOST_OK) {
    printf("prepare failed: %s\n", last_line(py));
    return 1;
  }

  static const struct {
    double value;
    const char *unit;
    int digits;
  } readings[] = {{21.456, "C", 1}, {1013.25, "hPa", 0}, {0.5, "", 3}};
  pyhost_gil_enter(py); /* the loop holds the GIL: each call only checks the handle */
  for (size_t i = 0; i < sizeof readings / sizeof readings[0]; i++) {
    pyhost_arg args[3] = {pyhost_arg_float(readings[i].value),
                          pyhost_arg_str(readings[i].unit, PYHOST_STRLEN),
                          pyhost_arg_int(readings[i].digits)};
    const char *text = NULL;
    size_t len = 0;
    if (pyhost_prepared_call_str(py, fmt_unit_digits, args, 3, &text, &len) == PYHOST_OK)
      printf("reading %zu: %s (%zu bytes, lent until the next call)\n", i, text, len);
    else
      printf("reading %zu: %s\n", i, last_line(py));
  }
  /* the plan fixes the count: three values, no more, no fewer */
  pyhost_arg one = pyhost_arg_float(1.0);
  int rc = pyhost_prepared_call_str(py, fmt_unit_digits, &one, 1, &(const char *){NULL}, &(size_t){0});
  printf("one value: %s\n", pyhost_status_name(rc));
  pyhost_gil_leave(py);

  pyhost_callable_free(fmt_unit_digits); /* the plan and the plain callable are independent */
  pyhost_callable_free(fmt);
  pyhost_free(py);
  return 0;
}
