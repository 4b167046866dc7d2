/* eval.c: pyhost_exec, pyhost_exec_file and pyhost_eval.
 *
 * The limited API has no PyRun_*: code is compiled with Py_CompileString and run with
 * PyEval_EvalCode in __main__'s dict, which carries __builtins__ (3.6 to 3.9 fail
 * with NameError on a dict without it).
 */
#include "internal.h"
#include "fs.h"

#include <string.h>

/* Compiles and runs src; *result gets a new reference when want_result. */
static int run(pyhost *h, const char *src, const char *filename, int mode, PyObject **result) {
  PyObject *code = PY.Py_CompileString(src, filename, mode);
  PyObject *r = code ? PY.PyEval_EvalCode(code, h->main_dict, h->main_dict) : NULL;
  PY.Py_DecRef(code);
  if (!r) return pyhost__take_exception(h, NULL);
  if (result) *result = r;
  else PY.Py_DecRef(r);
  return PYHOST_OK;
}

int pyhost_exec(pyhost *h, const char *code, const char *filename) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!code) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_exec: code is NULL");
  else rc = run(h, code, filename ? filename : "<pyhost>", Py_file_input, NULL);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_exec_file(pyhost *h, const char *path) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  char *src = NULL, err[256];
  size_t len;
  if (!path) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_exec_file: path is NULL");
  } else if (pyhost__fs_read(path, &src, &len, err, sizeof err) != 0) {
    rc = pyhost__set_error(h, PYHOST_NOTFOUND, "cannot read %s: %s", path, err);
  } else if (strlen(src) != len) {
    rc = pyhost__set_error(h, PYHOST_PYEXC, "%s: source code contains a NUL byte", path);
  } else {
    PyObject *file = PY.PyUnicode_DecodeUTF8(path, (Py_ssize_t)strlen(path), "surrogateescape");
    if (!file || PY.PyDict_SetItemString(h->main_dict, "__file__", file) < 0)
      rc = pyhost__take_exception(h, "setting __file__ failed");
    else
      rc = run(h, src, path, Py_file_input, NULL);
    PY.Py_DecRef(file);
  }
  pyhost__free(src);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_eval(pyhost *h, const char *expr, pyhost_value **result) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyObject *r = NULL;
  if (!expr || !result) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_eval: %s is NULL", expr ? "result" : "expr");
  } else if ((rc = run(h, expr, "<eval>", Py_eval_input, &r)) == PYHOST_OK) {
    if (!(*result = pyhost__from_python(h, r)))
      rc = pyhost__take_exception(h, "converting the result failed");
  }
  PY.Py_DecRef(r);
  pyhost__leave(h, gil);
  return rc;
}
