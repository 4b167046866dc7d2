/* call.c: calling Python from C: imports, dotted names, attributes, __main__'s
 * globals and calls (see pyhost.h, "calling Python from C").
 *
 * Arguments go to Python as one tuple and one dict (PyObject_Call): the only call
 * that takes keyword arguments on every stable ABI from 3.6.
 */
#include "bridge.h"

#include <string.h>

/* ---- dotted names ---- */

/* obj.name, importing the submodule `prefix.name` when obj lacks the attribute (a
 * package does not import its submodules itself).  New reference or NULL. */
static PyObject *attr_or_submodule(PyObject *obj, const char *prefix, size_t plen,
                                   const char *name) {
  PyObject *r = PY.PyObject_GetAttrString(obj, name);
  if (r || !PY.PyErr_ExceptionMatches(*PY.PyExc_AttributeError)) return r;
  PyObject *t, *v, *tb;
  PY.PyErr_Fetch(&t, &v, &tb);
  size_t nlen = strlen(name);
  char *full = pyhost__malloc(plen + nlen + 2);
  if (!full) {
    PY.PyErr_Restore(t, v, tb);
    return NULL;
  }
  memcpy(full, prefix, plen);
  full[plen] = '.';
  memcpy(full + plen + 1, name, nlen + 1);
  PyObject *mod = PY.PyImport_ImportModule(full);
  pyhost__free(full);
  if (mod) {
    PY.Py_DecRef(t);
    PY.Py_DecRef(v);
    PY.Py_DecRef(tb);
    return mod;
  }
  if (PY.PyErr_ExceptionMatches(*PY.PyExc_ImportError)) {
    PY.PyErr_Clear();
    PY.PyErr_Restore(t, v, tb); /* no such submodule: the AttributeError is the news */
  } else {
    PY.Py_DecRef(t);
    PY.Py_DecRef(v);
    PY.Py_DecRef(tb);
  }
  return NULL;
}

/* The first part: __main__'s globals, builtins, then an import. */
static PyObject *first_part(pyhost *h, const char *name) {
  PyObject *key = PY.PyUnicode_FromString(name);
  if (!key) return NULL;
  PyObject *o = pyhost__main_dict(h) ? PY.PyDict_GetItemWithError(pyhost__main_dict(h), key) : NULL;
  if (!o && !PY.PyErr_Occurred()) {
    PyObject *builtins = PY.PyEval_GetBuiltins(); /* borrowed */
    o = builtins ? PY.PyDict_GetItemWithError(builtins, key) : NULL;
  }
  PY.Py_DecRef(key);
  if (o) {
    PY.Py_IncRef(o);
    return o;
  }
  return PY.PyErr_Occurred() ? NULL : PY.PyImport_ImportModule(name);
}

PyObject *pyhost__resolve(pyhost *h, const char *dotted) {
  PYHOST__ASSERT_GIL();
  size_t len = strlen(dotted);
  char *buf = pyhost__memdup(dotted, len);
  if (!buf) return PY.PyErr_NoMemory();
  char *part = buf, *dot = strchr(part, '.');
  if (dot) *dot = '\0';
  PyObject *obj = NULL;
  if (!part[0]) {
    PY.PyErr_Format(*PY.PyExc_ValueError, "empty name in %.200s", dotted);
  } else if ((obj = first_part(h, part))) {
    while (obj && dot) {
      part = dot + 1;
      if ((dot = strchr(part, '.'))) *dot = '\0';
      if (!part[0]) {
        PY.PyErr_Format(*PY.PyExc_ValueError, "empty name in %.200s", dotted);
        PY.Py_DecRef(obj);
        obj = NULL;
        break;
      }
      PyObject *next = attr_or_submodule(obj, dotted, (size_t)(part - 1 - buf), part);
      PY.Py_DecRef(obj);
      obj = next;
    }
  }
  pyhost__free(buf);
  return obj;
}

/* ---- common shape of the calls ---- */

static int need(pyhost *h, const void *p, const char *fn, const char *what) {
  if (p) return PYHOST_OK;
  return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, what);
}

/* Converts r (new reference, may be NULL with an exception) into *result. */
static int give(pyhost *h, PyObject *r, pyhost_value **result) {
  if (!r) return pyhost__take_exception(h, NULL);
  int rc = PYHOST_OK;
  if (result && !(*result = pyhost__from_python(h, r)))
    rc = pyhost__take_exception(h, "converting the result failed");
  PY.Py_DecRef(r);
  return rc;
}

/* pyhost_import and pyhost_resolve: a name in, an object value out. */
static int by_name(pyhost *h, const char *fn, const char *name, pyhost_value **result,
                   int import_only) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = need(h, name, fn, "name")) && !(rc = need(h, result, fn, "result")))
    rc = give(h, import_only ? PY.PyImport_ImportModule(name) : pyhost__resolve(h, name), result);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_import(pyhost *h, const char *name, pyhost_value **module) {
  return by_name(h, "pyhost_import", name, module, 1);
}

int pyhost_resolve(pyhost *h, const char *dotted, pyhost_value **result) {
  return by_name(h, "pyhost_resolve", dotted, result, 0);
}

int pyhost_getattr(pyhost *h, const pyhost_value *obj, const char *name, pyhost_value **result) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = need(h, obj, "pyhost_getattr", "obj")) &&
      !(rc = need(h, name, "pyhost_getattr", "name")) &&
      !(rc = need(h, result, "pyhost_getattr", "result"))) {
    PyObject *o = pyhost__to_python(h, obj);
    rc = give(h, o ? PY.PyObject_GetAttrString(o, name) : NULL, result);
    PY.Py_DecRef(o);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_setattr(pyhost *h, const pyhost_value *obj, const char *name, const pyhost_value *val) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = need(h, obj, "pyhost_setattr", "obj")) &&
      !(rc = need(h, name, "pyhost_setattr", "name"))) {
    PyObject *o = pyhost__to_python(h, obj);
    PyObject *x = o && val ? pyhost__to_python(h, val) : NULL;
    if (!o || (val && !x) || PY.PyObject_SetAttrString(o, name, x) < 0)
      rc = pyhost__take_exception(h, NULL);
    PY.Py_DecRef(x);
    PY.Py_DecRef(o);
  }
  pyhost__leave(h, gil);
  return rc;
}

static void name_error(const char *name) {
  PY.PyErr_Format(*PY.PyExc_NameError, "name '%.200s' is not defined", name);
}

int pyhost_get_global(pyhost *h, const char *name, pyhost_value **result) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = need(h, name, "pyhost_get_global", "name")) &&
      !(rc = need(h, result, "pyhost_get_global", "result"))) {
    PyObject *o = PY.PyDict_GetItemString(pyhost__main_dict(h), name); /* borrowed */
    if (o) PY.Py_IncRef(o);
    else name_error(name);
    rc = give(h, o, result);
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_set_global(pyhost *h, const char *name, const pyhost_value *val) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = need(h, name, "pyhost_set_global", "name"))) {
    int r;
    if (val) {
      PyObject *x = pyhost__to_python(h, val);
      r = x ? PY.PyDict_SetItemString(pyhost__main_dict(h), name, x) : -1;
      PY.Py_DecRef(x);
    } else if (!PY.PyDict_GetItemString(pyhost__main_dict(h), name)) {
      name_error(name);
      r = -1;
    } else {
      r = PY.PyDict_DelItemString(pyhost__main_dict(h), name);
    }
    if (r < 0) rc = pyhost__take_exception(h, NULL);
  }
  pyhost__leave(h, gil);
  return rc;
}

/* ---- calls ---- */

static PyObject *tuple_of(pyhost *h, const pyhost_value *const *argv, size_t n) {
  PyObject *t = PY.PyTuple_New((Py_ssize_t)n);
  for (size_t i = 0; t && i < n; i++) {
    PyObject *x = pyhost__to_python(h, argv[i]); /* a NULL item is None */
    if (!x || PY.PyTuple_SetItem(t, (Py_ssize_t)i, x) < 0) { /* steals x */
      PY.Py_DecRef(t);
      return NULL;
    }
  }
  return t;
}

/* pyhost__call_stack's calls of more than PYHOST__CALL_STACK_MAX arguments before 3.12:
 * a tuple.  Apart, so that the usual calls' body saves no registers. */
static PYHOST__NOINLINE PyObject *call_stack_tuple(PyObject *f, PyObject *const *stack, size_t n) {
  PyObject *args = PY.PyTuple_New((Py_ssize_t)n), *r = NULL;
  for (size_t i = 0; args && i < n; i++) {
    PY.Py_IncRef(stack[i]);
    PY.PyTuple_SetItem(args, (Py_ssize_t)i, stack[i]); /* steals; cannot fail here */
  }
  if (args) r = PY.PyObject_Call(f, args, NULL);
  if (args) PY.Py_DecRef(args);
  return r;
}

PyObject *pyhost__call_stack(PyObject *f, PyObject *const *stack, size_t n) {
  PYHOST__ASSERT_GIL();
  if (pyhost__runtime_at_least(3, 12)) return PY.PyObject_Vectorcall(f, stack, n | PYHOST__ARGS_OFFSET, NULL);
  if (n == 0 && pyhost__runtime_at_least(3, 10)) return PY.PyObject_CallNoArgs(f);
  return pyhost__call_objargs(f, stack, n);
}

PyObject *pyhost__call_objargs(PyObject *f, PyObject *const *stack, size_t n) {
  PyObject *(*const call)(PyObject *, ...) = PY.PyObject_CallFunctionObjArgs;
  PyObject *const *a = stack;
  switch (n) { /* the list ends at the first NULL: every argument is an object here */
  case 0: return call(f, NULL);
  case 1: return call(f, a[0], NULL);
  case 2: return call(f, a[0], a[1], NULL);
  case 3: return call(f, a[0], a[1], a[2], NULL);
  case 4: return call(f, a[0], a[1], a[2], a[3], NULL);
  case 5: return call(f, a[0], a[1], a[2], a[3], a[4], NULL);
  case 6: return call(f, a[0], a[1], a[2], a[3], a[4], a[5], NULL);
  case 7: return call(f, a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
  case 8: return call(f, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], NULL);
  default: return call_stack_tuple(f, stack, n);
  }
}

/* Positional calls of up to PYHOST__CALL_STACK_MAX arguments, converted onto the
 * stack.  Steals f. */
static PyObject *call_fast(pyhost *h, PyObject *f, const pyhost_value *const *argv, size_t n) {
  PyObject *r = NULL;
  PyObject *stack[PYHOST__CALL_STACK_MAX + 1];
  size_t done = 0;
  while (done < n && (stack[done + 1] = pyhost__to_python(h, argv[done]))) done++;
  if (done == n) r = pyhost__call_stack(f, stack + 1, n);
  while (done) PY.Py_DecRef(stack[done--]);
  PY.Py_DecRef(f);
  return r;
}

/* The call itself; `fn` names the public function in messages.  The caller holds the
 * GIL.  callable is resolved from dotted when it is NULL. */
static int do_call(pyhost *h, const char *fn, const pyhost_value *callable, const char *dotted,
                   const pyhost_value *const *argv, size_t nargs, const pyhost_value *kwargs,
                   pyhost_value **result) {
  if (!result) return pyhost__set_error(h, PYHOST_MISUSE, "%s: result is NULL", fn);
  if (nargs && !argv) return pyhost__set_error(h, PYHOST_MISUSE, "%s: argv is NULL", fn);
  if (kwargs && kwargs->kind != PYHOST_KIND_DICT)
    return pyhost__set_error(h, PYHOST_TYPE, "%s: kwargs: expected dict, got %s", fn,
                             pyhost_value_type_name(kwargs));
  /* an object value (the usual callable) is passed on with one new reference, without
   * the conversion's dispatch */
  PyObject *f = !callable ? pyhost__resolve(h, dotted)
                : callable->kind == PYHOST_KIND_OBJECT ? (PY.Py_IncRef(callable->u.obj), callable->u.obj)
                : pyhost__to_python(h, callable);
  if (f && !kwargs && nargs <= PYHOST__CALL_STACK_MAX)
    return give(h, call_fast(h, f, argv, nargs), result);
  PyObject *args = f ? tuple_of(h, argv, nargs) : NULL;
  PyObject *kw = args && kwargs ? pyhost__to_python(h, kwargs) : NULL;
  PyObject *r = args && (kw || !kwargs) ? PY.PyObject_Call(f, args, kw) : NULL;
  PY.Py_DecRef(kw);
  PY.Py_DecRef(args);
  PY.Py_DecRef(f);
  return give(h, r, result);
}

/* The items of an args value (tuple or list); PYHOST_TYPE for another kind. */
static int items_of(pyhost *h, const char *fn, const pyhost_value *args,
                    const pyhost_value *const **argv, size_t *n) {
  *argv = NULL;
  *n = 0;
  if (!args) return PYHOST_OK;
  if (args->kind != PYHOST_KIND_TUPLE && args->kind != PYHOST_KIND_LIST)
    return pyhost__set_error(h, PYHOST_TYPE, "%s: args: expected tuple or list, got %s", fn,
                             pyhost_value_type_name(args));
  *argv = (const pyhost_value *const *)args->u.seq.items;
  *n = args->u.seq.n;
  return PYHOST_OK;
}

static int call_common(pyhost *h, const char *fn, const pyhost_value *callable,
                       const char *dotted, const pyhost_value *args,
                       const pyhost_value *const *argv, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result, int use_args) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!callable && !dotted)
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, strstr(fn, "_name") ? "dotted" : "callable");
  else if (!use_args || !(rc = items_of(h, fn, args, &argv, &nargs)))
    rc = do_call(h, fn, callable, dotted, argv, nargs, kwargs, result);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_call(pyhost *h, const pyhost_value *callable, const pyhost_value *args,
                const pyhost_value *kwargs, pyhost_value **result) {
  return call_common(h, "pyhost_call", callable, NULL, args, NULL, 0, kwargs, result, 1);
}

int pyhost_callv(pyhost *h, const pyhost_value *callable, const pyhost_value *const *argv,
                 size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  return call_common(h, "pyhost_callv", callable, NULL, NULL, argv, nargs, kwargs, result, 0);
}

int pyhost_call_name(pyhost *h, const char *dotted, const pyhost_value *args,
                     const pyhost_value *kwargs, pyhost_value **result) {
  return call_common(h, "pyhost_call_name", NULL, dotted, args, NULL, 0, kwargs, result, 2);
}

int pyhost_call_namev(pyhost *h, const char *dotted, const pyhost_value *const *argv,
                      size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  return call_common(h, "pyhost_call_namev", NULL, dotted, NULL, argv, nargs, kwargs, result, 0);
}
