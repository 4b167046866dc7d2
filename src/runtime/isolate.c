/* isolate.c: pyhost_config_set_isolated, as far as the stable ABI allows.
 *
 * The limited API has neither PyConfig nor Py_IgnoreEnvironmentFlag, so isolation works
 * on what Python reads: during Py_InitializeEx the process environment holds no PYTHON*
 * variable but two of pyhost's own.  PYTHONNOUSERSITE=1 turns the user site off on 3.7+
 * (sys.flags.no_user_site); 3.6 reads that variable only in python's main(), so
 * PYTHONUSERBASE is pointed below a regular file (a path that can never exist), and
 * site finds no user site directory on every version.  Right after init the two are
 * dropped from os.environ, site.ENABLE_USER_SITE is set False, and the host's
 * environment is put back.
 */
#include "runtime.h"

#include <stdlib.h>

static const char cleanup[] =
    "import os, site\n"
    "os.environ.pop('PYTHONNOUSERSITE', None)\n"
    "os.environ.pop('PYTHONUSERBASE', None)\n"
    "site.ENABLE_USER_SITE = False\n";

int pyhost__isolate_begin(pyhost *h, struct pyhost__env_saved **saved) {
  char nowhere[PYHOST__PATH_MAX];
  /* the library is a regular file: nothing can exist below it */
  pyhost__fmt(nowhere, sizeof nowhere, "%s%cpyhost-isolated", h->library_path, '/');
  if (pyhost__sys_env_isolate(saved, nowhere) != 0) {
    pyhost__sys_env_restore(*saved);
    *saved = NULL;
    return pyhost__set_error(h, PYHOST_NOMEM, "out of memory isolating the environment");
  }
  return PYHOST_OK;
}

int pyhost__isolate_finish(pyhost *h, struct pyhost__env_saved *saved) {
  PYHOST__ASSERT_GIL();
  int rc = PYHOST_OK;
  if (PY.Py_IsInitialized()) {
    PyObject *globals = PY.PyDict_New();
    PyObject *code = globals ? PY.Py_CompileString(cleanup, "<pyhost isolated>", Py_file_input) : NULL;
    PyObject *r = NULL;
    if (code && PY.PyDict_SetItemString(globals, "__builtins__", PY.PyEval_GetBuiltins()) == 0)
      r = PY.PyEval_EvalCode(code, globals, globals);
    if (!r) rc = pyhost__take_exception(h, "isolating Python from the environment failed");
    PY.Py_DecRef(r);
    PY.Py_DecRef(code);
    PY.Py_DecRef(globals);
  }
  pyhost__sys_env_restore(saved);
  return rc;
}
