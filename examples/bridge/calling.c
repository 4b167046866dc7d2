/* calling.c: the example of docs/calling.md.  Imports a module, calls functions by
 * dotted name and by value with positional and keyword arguments, reads and writes
 * attributes and globals, and reports an exception.
 *   example_calling [PYTHON_LIBRARY] */
#include "common.h"

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  pyhost_value *r = NULL;

  /* json.dumps({"b": 1, "a": [1, 2]}, sort_keys=True): arguments as a tuple value */
  pyhost_value *obj = pyhost_value_dict(), *list = pyhost_value_list();
  pyhost_value_append(list, pyhost_value_int(1));
  pyhost_value_append(list, pyhost_value_int(2));
  pyhost_value_set(obj, pyhost_value_str("b", PYHOST_STRLEN), pyhost_value_int(1));
  pyhost_value_set(obj, pyhost_value_str("a", PYHOST_STRLEN), list);
  pyhost_value *args = pyhost_value_tuple(), *kwargs = pyhost_value_dict();
  pyhost_value_append(args, obj);
  pyhost_value_set(kwargs, pyhost_value_str("sort_keys", PYHOST_STRLEN), pyhost_value_bool(1));
  if (pyhost_call_name(py, "json.dumps", args, kwargs, &r) == PYHOST_OK) {
    const char *text;
    pyhost_value_to_str(py, r, &text, NULL);
    printf("json.dumps -> %s\n", text);
  }
  pyhost_value_free(r);
  pyhost_value_free(kwargs);
  pyhost_value_free(args);

  /* resolve once, call many times with a C array of arguments */
  pyhost_value *join = NULL;
  pyhost_resolve(py, "os.path.join", &join);
  const char *parts[] = {"usr", "lib", "python3"};
  pyhost_value *acc = pyhost_value_str("/", 1);
  for (int k = 0; k < 3; k++) {
    pyhost_value *part = pyhost_value_str(parts[k], PYHOST_STRLEN);
    const pyhost_value *argv2[2] = {acc, part};
    pyhost_callv(py, join, argv2, 2, NULL, &r);
    pyhost_value_free(part);
    pyhost_value_free(acc);
    acc = r;
    r = NULL;
  }
  printf("os.path.join -> %s\n", pyhost_value_repr(py, acc));
  pyhost_value_free(acc);
  pyhost_value_free(join);

  /* modules, attributes, globals */
  pyhost_value *math = NULL, *pi = NULL;
  pyhost_import(py, "math", &math);
  pyhost_getattr(py, math, "pi", &pi);
  pyhost_set_global(py, "radius", pi);
  run(py, "class Circle:\n    pass\nc = Circle()\nc.area = radius ** 2 * 3.14159\n");
  pyhost_value *c = NULL, *area = NULL, *label = pyhost_value_str("big", PYHOST_STRLEN);
  pyhost_get_global(py, "c", &c);
  pyhost_getattr(py, c, "area", &area);
  pyhost_setattr(py, c, "label", label);
  printf("c.area = %s, c.label = ", pyhost_value_repr(py, area));
  pyhost_eval(py, "c.label", &r);
  printf("%s\n", pyhost_value_repr(py, r));
  pyhost_value_free(r);
  pyhost_value_free(label);
  pyhost_value_free(area);
  pyhost_value_free(c);
  pyhost_value_free(pi);
  pyhost_value_free(math);

  /* errors come back as a status and a message with the traceback */
  run(py, "def parse(text):\n    return int(text)\n");
  pyhost_value *word = pyhost_value_str("seven", PYHOST_STRLEN);
  const pyhost_value *one[1] = {word};
  int rc = pyhost_callv(py, NULL, one, 1, NULL, &r);
  printf("NULL callable: %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(py));
  rc = pyhost_call_namev(py, "parse", one, 1, NULL, &r);
  printf("parse('seven'): %s, traceback mentions parse: %s\n  %s\n", pyhost_status_name(rc),
         strstr(pyhost_errmsg(py), ", in parse") ? "yes" : "no", last_line(py));
  rc = pyhost_call_name(py, "no_such_module.f", NULL, NULL, &r);
  printf("no_such_module.f: %s: %s\n", pyhost_status_name(rc), last_line(py));
  pyhost_value_free(word);
  pyhost_free(py);
  return 0;
}
