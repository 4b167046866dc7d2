/* prepared.c: the hot-loop example of docs/calling.md.  A Python function is prepared
 * once and called per "frame" with C arguments read in place, inside one GIL scope;
 * results are read straight into C scalars, a value is built only where asked for,
 * and an exception arrives with its message as any call's does.
 *   example_prepared [PYTHON_LIBRARY] */
#include "common.h"

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  run(py, "def step(frame, dt, name):\n"
          "    if frame == 3 and name == 'boom':\n"
          "        raise ValueError(f'bad frame {frame}')\n"
          "    return frame * dt\n"
          "def label(frame, name):\n"
          "    return f'{name}#{frame}'\n"
          "log = []\n");

  pyhost_callable *step = NULL, *label = NULL, *append = NULL;
  if (pyhost_prepare_name(py, "step", &step) != PYHOST_OK ||
      pyhost_prepare_name(py, "label", &label) != PYHOST_OK ||
      pyhost_prepare_name(py, "log.append", &append) != PYHOST_OK) {
    printf("prepare failed: %s\n", last_line(py));
    return 1;
  }

  pyhost_gil_enter(py); /* the loop holds the GIL: each call only checks the handle */
  double total = 0;
  for (int frame = 0; frame < 5; frame++) {
    const char *name = frame == 3 ? "boom" : "ship";
    pyhost_arg args[3] = {pyhost_arg_int(frame), pyhost_arg_float(0.5),
                          pyhost_arg_str(name, PYHOST_STRLEN)};
    double x = 0;
    int rc = pyhost_prepared_call_float(py, step, args, 3, &x);
    if (rc != PYHOST_OK) {
      printf("frame %d: %s: %s\n", frame, pyhost_status_name(rc), last_line(py));
      continue;
    }
    total += x;
    pyhost_arg item = pyhost_arg_float(x);
    pyhost_prepared_call(py, append, &item, 1); /* result (None) discarded */
  }
  printf("total %.1f\n", total);

  /* a value only when the host asks for one */
  pyhost_value *r = NULL;
  pyhost_arg args[2] = {pyhost_arg_int(7), pyhost_arg_str("ship", 4)};
  if (pyhost_prepared_call_value(py, label, args, 2, &r) == PYHOST_OK) {
    const char *s;
    pyhost_value_to_str(py, r, &s, NULL);
    printf("label -> %s\n", s);
  }
  pyhost_value_free(r);

  /* the wrong result type is a status, not a conversion */
  int64_t n = 0;
  int rc = pyhost_prepared_call_int(py, label, args, 2, &n);
  printf("label as int: %s: %s\n", pyhost_status_name(rc), last_line(py));
  pyhost_gil_leave(py);

  run(py, "print('log', log)");
  pyhost_callable_free(step);
  pyhost_callable_free(label);
  pyhost_callable_free(append);
  pyhost_free(py);
  return 0;
}
