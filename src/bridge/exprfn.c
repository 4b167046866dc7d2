/* exprfn.c: an expression with named inputs as a function (see pyhost.h,
 * pyhost_prepare_expression): "x * 2 + y" with inputs "x, y" becomes
 * `lambda x, y: (x * 2 + y)`, compiled once, its globals a dict of its own holding
 * only the builtins, so evaluating it never reads or writes __main__ and one
 * evaluation leaves nothing for the next.  The inputs are checked to be identifiers
 * and the expression to compile alone as one expression before they are put
 * together, so neither can change the lambda's shape. */
#include "bridge.h"

#include <ctype.h>
#include <string.h>

/* 1 when inputs is empty or identifiers separated by commas (spaces allowed). */
static int inputs_ok(const char *s) {
  int want_name = 1, any = 0;
  for (; *s; s++) {
    if (*s == ' ') continue;
    if (want_name) {
      if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
      while (isalnum((unsigned char)s[1]) || s[1] == '_') s++;
      want_name = 0;
      any = 1;
    } else if (*s == ',') {
      want_name = 1;
    } else {
      return 0;
    }
  }
  return !any || !want_name;
}

PyObject *pyhost__expression_function(pyhost *h, const char *inputs, const char *expr,
                                      const char *fn, int *rc) {
  if (!expr || !inputs) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, expr ? "inputs" : "expr");
    return NULL;
  }
  if (!inputs_ok(inputs)) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE,
                            "%s: inputs \"%s\" must be names separated by commas", fn, inputs);
    return NULL;
  }
  PyObject *alone = PY.Py_CompileString(expr, "<expression>", Py_eval_input);
  if (!alone) {
    *rc = pyhost__take_exception(h, NULL); /* SyntaxError naming the expression */
    return NULL;
  }
  PY.Py_DecRef(alone);
  size_t cap = strlen(inputs) + strlen(expr) + 16;
  char *src = pyhost__malloc(cap);
  if (!src) {
    *rc = pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fn);
    return NULL;
  }
  /* the newline ends a trailing comment in expr before the closing parenthesis */
  pyhost__fmt(src, cap, "lambda %s: (%s\n)", inputs, expr);
  PyObject *code = PY.Py_CompileString(src, "<expression>", Py_eval_input);
  pyhost__free(src);
  PyObject *globals = code ? PY.PyDict_New() : NULL, *f = NULL;
  if (globals && PY.PyDict_SetItemString(globals, "__builtins__", PY.PyEval_GetBuiltins()) == 0)
    f = PY.PyEval_EvalCode(code, globals, globals);
  if (!f) *rc = pyhost__take_exception(h, NULL);
  if (globals) PY.Py_DecRef(globals); /* the function keeps it */
  if (code) PY.Py_DecRef(code);
  return f;
}
