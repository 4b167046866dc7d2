/* hostmods.c: the host's modules as a process-level plugin sees them.  The host
 * describes its live host modules (pyhost_module_new) on the wire; the worker makes
 * modules of the same names from that description: a proxy for each host function
 * (calling it runs the host's function, in the host), the plain values, the exception
 * classes, and for each host type a stand-in that says host types are in-process
 * only.  Both halves of the description's format are here.
 *
 *   u32 modules, each: str name, str doc, u32 entries, each: u8 kind, str name, and
 *     FUNCTION: str doc | VALUE: a value | EXCEPTION: str base class | TYPE: nothing
 *
 * The worker applies a description again whenever the host's modules changed (their
 * generation counter moved): what is new is added, what went is removed, so Python
 * code in the worker that holds a module keeps a working one. */
#include "hostmods.h"

#include <string.h>

enum { E_FUNCTION = 1, E_VALUE = 2, E_EXCEPTION = 3, E_TYPE = 4 };

/* ---- the host's side ---- */

static int is_class(PyObject *o) {
  return (PY.PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_TYPE_SUBCLASS) != 0;
}

/* One attribute of host module m as an entry, or nothing when it has no form a
 * worker can show (a Python object, a dunder). */
static void describe_entry(pyhost *h, pyhost_module *m, PyObject *key, PyObject *value,
                           struct pyhost__wbuf *b, uint32_t *count) {
  char *name = pyhost__utf8_copy(key, NULL);
  if (!name) {
    PY.PyErr_Clear();
    return;
  }
  const char *doc;
  size_t mark = b->len;
  if (name[0] == '_' && name[1] == '_') {
    /* the module's own dunders: the worker's module has its own */
  } else if (pyhost__module_function(m, name, value, &doc)) {
    pyhost__wbuf_u8(b, E_FUNCTION);
    pyhost__wbuf_str(b, name, PYHOST_STRLEN);
    pyhost__wbuf_str(b, doc, PYHOST_STRLEN);
    ++*count;
  } else if (is_class(value)) {
    if (PY.PyType_IsSubtype((PyTypeObject *)value, (PyTypeObject *)*PY.PyExc_BaseException)) {
      PyObject *bases = PY.PyObject_GetAttrString(value, "__bases__");
      PyObject *base = bases ? PY.PyTuple_GetItem(bases, 0) : NULL; /* borrowed */
      char bname[512] = "Exception";
      if (base) pyhost__type_name(base, bname, sizeof bname);
      PY.PyErr_Clear();
      PY.Py_DecRef(bases);
      pyhost__wbuf_u8(b, E_EXCEPTION);
      pyhost__wbuf_str(b, name, PYHOST_STRLEN);
      pyhost__wbuf_str(b, bname, PYHOST_STRLEN);
    } else {
      pyhost__wbuf_u8(b, E_TYPE);
      pyhost__wbuf_str(b, name, PYHOST_STRLEN);
    }
    ++*count;
  } else {
    pyhost_value *v = pyhost__from_python(h, value);
    char why[64];
    pyhost__wbuf_u8(b, E_VALUE);
    pyhost__wbuf_str(b, name, PYHOST_STRLEN);
    if (v && pyhost__wbuf_value(b, v, why, sizeof why) == 0) ++*count;
    else b->len = mark; /* not data: the worker goes without it */
    PY.PyErr_Clear();
    pyhost_value_free(v);
  }
  pyhost__free(name);
}

void pyhost__hostmods_describe(pyhost *h, struct pyhost__wbuf *b) {
  uint32_t n = 0;
  for (pyhost_module *m = pyhost__modules_next(NULL); m; m = pyhost__modules_next(m)) n++;
  pyhost__wbuf_u32(b, n);
  for (pyhost_module *m = pyhost__modules_next(NULL); m; m = pyhost__modules_next(m)) {
    PyObject *mod = pyhost__module_object(m);
    pyhost__wbuf_str(b, pyhost__module_name(m), PYHOST_STRLEN);
    PyObject *doc = PY.PyObject_GetAttrString(mod, "__doc__");
    char *d = doc && doc != PY._Py_NoneStruct ? pyhost__utf8_copy(doc, NULL) : NULL;
    PY.PyErr_Clear();
    pyhost__wbuf_str(b, d, PYHOST_STRLEN);
    pyhost__free(d);
    PY.Py_DecRef(doc);
    /* the items as they are now: converting a value may run code that changes them */
    PyObject *dict = PY.PyModule_GetDict(mod); /* borrowed */
    PyObject *items = dict ? PY.PyDict_Items(dict) : NULL;
    size_t count_at = b->len;
    uint32_t count = 0;
    pyhost__wbuf_u32(b, 0);
    Py_ssize_t k = items ? PY.PyList_Size(items) : 0;
    for (Py_ssize_t i = 0; i < k; i++) {
      PyObject *kv = PY.PyList_GetItem(items, i); /* borrowed, held by items */
      PyObject *key = kv ? PY.PyTuple_GetItem(kv, 0) : NULL;
      PyObject *value = kv ? PY.PyTuple_GetItem(kv, 1) : NULL;
      if (key && value && (PY.PyType_GetFlags(Py_TYPE(key)) & Py_TPFLAGS_UNICODE_SUBCLASS))
        describe_entry(h, m, key, value, b, &count);
    }
    PY.PyErr_Clear();
    PY.Py_DecRef(items);
    if (!b->nomem) memcpy(b->p + count_at, &count, sizeof count);
  }
}

/* Reads past the entries of a module that is not made. */
static void skip_entries(struct pyhost__rbuf *r, uint32_t entries) {
  for (uint32_t e = 0; e < entries && !r->bad; e++) {
    unsigned kind = pyhost__rbuf_u8(r);
    pyhost__rbuf_str(r, NULL);
    if (kind == E_FUNCTION || kind == E_EXCEPTION) pyhost__rbuf_str(r, NULL);
    else if (kind == E_VALUE) pyhost__rbuf_skip_value(r);
  }
}

/* ---- the worker's side ---- */

struct mirror_mod {
  pyhost_module *m;
  char *name;
  struct pyhost__mirror_fn *fns;
  int seen;
  struct mirror_mod *next;
};

struct pyhost__mirror {
  struct mirror_mod *mods;
  pyhost_function proxy;
  void *ctx;
};

static void fn_free(struct pyhost__mirror_fn *f) {
  pyhost__free(f->module);
  pyhost__free(f->name);
  pyhost__free(f);
}

static struct pyhost__mirror_fn *fn_find(struct mirror_mod *mm, const char *name) {
  struct pyhost__mirror_fn *f = mm->fns;
  while (f && strcmp(f->name, name) != 0) f = f->next;
  return f;
}

/* The class a base name names in the worker, or Exception: a new reference. */
static PyObject *base_class(pyhost *h, const char *name) {
  PyObject *b = pyhost__resolve(h, name);
  if (!b || !is_class(b) ||
      !PY.PyType_IsSubtype((PyTypeObject *)b, (PyTypeObject *)*PY.PyExc_BaseException)) {
    PY.PyErr_Clear();
    PY.Py_DecRef(b);
    b = *PY.PyExc_Exception;
    PY.Py_IncRef(b);
  }
  return b;
}

/* The exception class <modname>.<name> deriving from base, set on module mod (GIL). */
static void mirror_exception(pyhost *h, PyObject *mod, const char *modname, const char *name,
                             const char *base) {
  PyObject *old = PY.PyObject_GetAttrString(mod, name);
  PY.PyErr_Clear();
  int have = old && is_class(old);
  PY.Py_DecRef(old);
  if (have) return; /* made by an earlier sync: code may hold it */
  char full[512];
  pyhost__fmt(full, sizeof full, "%s.%s", modname, name);
  PyObject *b = base_class(h, base);
  PyObject *cls = PY.PyErr_NewException(full, b, NULL);
  if (!cls || PY.PyObject_SetAttrString(mod, name, cls) < 0) PY.PyErr_Clear();
  PY.Py_DecRef(cls);
  PY.Py_DecRef(b);
}

/* Adds (or keeps) the proxy of function or type name in mm.  0, or -1 out of memory. */
static int mirror_callable(pyhost *h, struct pyhost__mirror *mr, struct mirror_mod *mm,
                           const char *name, const char *doc, int is_type) {
  struct pyhost__mirror_fn *f = fn_find(mm, name);
  if (f && f->is_type == is_type) {
    f->seen = 1;
    return 0;
  }
  struct pyhost__mirror_fn *nf = pyhost__calloc(1, sizeof *nf);
  if (!nf || !(nf->module = pyhost__strdup(mm->name)) || !(nf->name = pyhost__strdup(name))) {
    if (nf) fn_free(nf);
    return -1;
  }
  nf->is_type = is_type;
  nf->ctx = mr->ctx;
  nf->seen = 1;
  if (pyhost_module_add_function(h, mm->m, name, mr->proxy, nf, doc && doc[0] ? doc : NULL) !=
      PYHOST_OK) {
    fn_free(nf);
    return -1;
  }
  if (f) { /* replaced (a function became a type, or the reverse): the old one is gone */
    struct pyhost__mirror_fn **l = &mm->fns;
    while (*l != f) l = &(*l)->next;
    *l = f->next;
    fn_free(f);
  }
  nf->next = mm->fns;
  mm->fns = nf;
  return 0;
}

static void mod_free(pyhost *h, struct mirror_mod *mm) {
  pyhost_module_free(h, mm->m);
  while (mm->fns) {
    struct pyhost__mirror_fn *f = mm->fns;
    mm->fns = f->next;
    fn_free(f);
  }
  pyhost__free(mm->name);
  pyhost__free(mm);
}

int pyhost__hostmods_apply(pyhost *h, struct pyhost__mirror **state, struct pyhost__rbuf *r,
                           pyhost_function proxy, void *ctx, char *err, size_t cap) {
  struct pyhost__mirror *mr = *state;
  if (!mr) {
    if (!(mr = pyhost__calloc(1, sizeof *mr))) return pyhost__fmt(err, cap, "out of memory"), -1;
    mr->proxy = proxy;
    mr->ctx = ctx;
    *state = mr;
  }
  for (struct mirror_mod *mm = mr->mods; mm; mm = mm->next) {
    mm->seen = 0;
    for (struct pyhost__mirror_fn *f = mm->fns; f; f = f->next) f->seen = 0;
  }
  uint32_t n = pyhost__rbuf_u32(r);
  for (uint32_t i = 0; i < n && !r->bad; i++) {
    const char *name = pyhost__rbuf_str(r, NULL);
    const char *doc = pyhost__rbuf_str(r, NULL);
    uint32_t entries = pyhost__rbuf_u32(r);
    if (r->bad) break;
    struct mirror_mod *mm = mr->mods;
    while (mm && strcmp(mm->name, name) != 0) mm = mm->next;
    if (!mm) {
      pyhost_module *m = NULL;
      if (pyhost_module_new(h, name, doc[0] ? doc : NULL, &m) != PYHOST_OK) {
        /* a name this Python has already (a standard module): the plugin sees that one */
        pyhost__fmt(err, cap, "the host module %s: %s", name, pyhost_errmsg(h));
        skip_entries(r, entries);
        continue;
      }
      struct mirror_mod **tail = &mr->mods;
      while (*tail) tail = &(*tail)->next;
      if (!(mm = pyhost__calloc(1, sizeof *mm)) || !(mm->name = pyhost__strdup(name))) {
        pyhost_module_free(h, m);
        pyhost__free(mm);
        return pyhost__fmt(err, cap, "out of memory"), -1;
      }
      mm->m = m;
      *tail = mm;
    }
    mm->seen = 1;
    for (uint32_t e = 0; e < entries && !r->bad; e++) {
      unsigned kind = pyhost__rbuf_u8(r);
      const char *ename = pyhost__rbuf_str(r, NULL);
      if (kind == E_FUNCTION || kind == E_TYPE) {
        const char *fdoc = kind == E_FUNCTION ? pyhost__rbuf_str(r, NULL) : NULL;
        if (!r->bad && mirror_callable(h, mr, mm, ename, fdoc, kind == E_TYPE) < 0)
          return pyhost__fmt(err, cap, "%s.%s: %s", name, ename, pyhost_errmsg(h)), -1;
      } else if (kind == E_VALUE) {
        pyhost_value *v = pyhost__rbuf_value(r);
        if (v) pyhost_module_add_value(h, mm->m, ename, v);
        pyhost_value_free(v);
      } else if (kind == E_EXCEPTION) {
        const char *base = pyhost__rbuf_str(r, NULL);
        PyGILState_STATE gil;
        if (!r->bad && pyhost__enter(h, &gil) == PYHOST_OK) {
          mirror_exception(h, pyhost__module_object(mm->m), mm->name, ename, base);
          pyhost__leave(h, gil);
        }
      } else {
        r->bad = 1;
      }
    }
  }
  if (r->bad) return pyhost__fmt(err, cap, "a malformed description of the host's modules"), -1;
  /* what the host no longer has */
  for (struct mirror_mod **l = &mr->mods; *l;) {
    struct mirror_mod *mm = *l;
    if (!mm->seen) {
      *l = mm->next;
      mod_free(h, mm);
      continue;
    }
    for (struct pyhost__mirror_fn **fl = &mm->fns; *fl;) {
      struct pyhost__mirror_fn *f = *fl;
      if (f->seen) {
        fl = &f->next;
        continue;
      }
      pyhost_module_remove(h, mm->m, f->name);
      *fl = f->next;
      fn_free(f);
    }
    l = &mm->next;
  }
  return 0;
}

/* ---- a sub-interpreter's side (the interpreter level) ----
 * There the host's modules are modules of that interpreter: each host function a
 * replica calling the host's own (pyhost__hostfn_replica: the same C function, at full
 * speed), the values converted, the exception classes made there, and for each host
 * type a stand-in that refuses.  *state, a dict of that interpreter, maps each module
 * made to (module, names set); what the host no longer has is removed again. */

static const char STANDIN[] =
    "def standin(qual):\n"
    "    def refuse(*args, **kwargs):\n"
    "        raise TypeError(qual + ' is a host type, and host types are not available '\n"
    "                        'in a plugin\\'s sub-interpreter in this pyhost')\n"
    "    refuse.__name__ = refuse.__qualname__ = qual.rpartition('.')[2]\n"
    "    return refuse\n";

/* The stand-in for host type modname.name: a new reference, or NULL with an exception. */
static PyObject *standin(const char *modname, const char *name) {
  PyObject *ns = PY.PyDict_New();
  PyObject *code = ns && PY.PyDict_SetItemString(ns, "__builtins__", PY.PyEval_GetBuiltins()) == 0
                       ? PY.Py_CompileString(STANDIN, "<pyhost host type>", Py_file_input)
                       : NULL;
  PyObject *r = code ? PY.PyEval_EvalCode(code, ns, ns) : NULL;
  PyObject *fn = r ? PY.PyDict_GetItemString(ns, "standin") : NULL; /* borrowed */
  char qual[512];
  pyhost__fmt(qual, sizeof qual, "%s.%s", modname, name);
  PyObject *q = fn ? PY.PyUnicode_FromString(qual) : NULL;
  PyObject *out = q ? PY.PyObject_CallFunctionObjArgs(fn, q, NULL) : NULL;
  PY.Py_DecRef(q);
  PY.Py_DecRef(r);
  PY.Py_DecRef(code);
  PY.Py_DecRef(ns);
  return out;
}

static pyhost_module *host_module(const char *name) {
  pyhost_module *m = pyhost__modules_next(NULL);
  while (m && strcmp(pyhost__module_name(m), name) != 0) m = pyhost__modules_next(m);
  return m;
}

/* Module name in this interpreter: the one made before (prev's), or a new one entered
 * in sys.modules (and on its parent); NULL when the name is taken by a module of this
 * interpreter's own, or with an exception set.  New reference. */
static PyObject *sub_module(PyObject *prev, const char *name, const char *doc) {
  if (prev) {
    PyObject *m = PY.PyTuple_GetItem(prev, 0);
    PY.Py_IncRef(m);
    return m;
  }
  PyObject *modules = PY.PyImport_GetModuleDict(); /* borrowed */
  if (PY.PyDict_GetItemString(modules, name)) return NULL;
  PyObject *m = PY.PyModule_New(name);
  PyObject *d = m && doc[0] ? PY.PyUnicode_FromString(doc) : NULL;
  if (!m || (doc[0] && (!d || PY.PyObject_SetAttrString(m, "__doc__", d) < 0)) ||
      PY.PyDict_SetItemString(modules, name, m) < 0) {
    PY.Py_DecRef(d);
    PY.Py_DecRef(m);
    return NULL;
  }
  PY.Py_DecRef(d);
  const char *dot = strrchr(name, '.');
  if (dot) {
    char pname[512];
    pyhost__fmt(pname, sizeof pname, "%.*s", (int)(dot - name), name);
    PyObject *parent = PY.PyDict_GetItemString(modules, pname);
    if (parent) PY.PyObject_SetAttrString(parent, dot + 1, m);
  }
  PY.PyErr_Clear();
  return m;
}

/* One entry of modname (module mod) made there: a new reference to its object, or
 * NULL (left out: no longer the host's, or not convertible; the exception cleared). */
static PyObject *sub_entry(pyhost *h, struct pyhost__rbuf *r, unsigned kind, PyObject *mod,
                           const char *modname, const char *ename) {
  PyObject *x = NULL;
  if (kind == E_FUNCTION) {
    pyhost__rbuf_str(r, NULL); /* its doc: the replica has the host's */
    pyhost_module *hm = host_module(modname);
    x = hm ? pyhost__hostfn_replica(hm, ename) : NULL;
  } else if (kind == E_VALUE) {
    pyhost_value *v = pyhost__rbuf_value(r);
    x = v ? pyhost__to_python(h, v) : NULL;
    pyhost_value_free(v);
  } else if (kind == E_EXCEPTION) {
    const char *base = pyhost__rbuf_str(r, NULL);
    if (!r->bad) mirror_exception(h, mod, modname, ename, base);
    x = PY.PyObject_GetAttrString(mod, ename);
  } else if (kind == E_TYPE) {
    x = standin(modname, ename);
  } else {
    r->bad = 1;
  }
  if (!x) PY.PyErr_Clear();
  return x;
}

int pyhost__hostmods_apply_here(pyhost *h, PyObject **state, struct pyhost__rbuf *r, char *err,
                                size_t cap) {
  PyObject *now = PY.PyDict_New();
  if (!now || (!*state && !(*state = PY.PyDict_New()))) {
    PY.Py_DecRef(now);
    PY.PyErr_Clear();
    return pyhost__fmt(err, cap, "out of memory"), -1;
  }
  uint32_t n = pyhost__rbuf_u32(r);
  for (uint32_t i = 0; i < n && !r->bad; i++) {
    const char *name = pyhost__rbuf_str(r, NULL);
    const char *doc = pyhost__rbuf_str(r, NULL);
    uint32_t entries = pyhost__rbuf_u32(r);
    if (r->bad) break;
    PyObject *prev = PY.PyDict_GetItemString(*state, name); /* borrowed */
    PyObject *mod = sub_module(prev, name, doc);
    PyObject *names = mod ? PY.PyDict_New() : NULL; /* the names set, each to None */
    if (!names) {
      PY.PyErr_Clear();
      pyhost__fmt(err, cap, "the host module %s: a module of that name exists there", name);
      PY.Py_DecRef(mod);
      skip_entries(r, entries);
      continue;
    }
    for (uint32_t e = 0; e < entries && !r->bad; e++) {
      unsigned kind = pyhost__rbuf_u8(r);
      const char *ename = pyhost__rbuf_str(r, NULL);
      PyObject *x = r->bad ? NULL : sub_entry(h, r, kind, mod, name, ename);
      PyObject *key = x ? PY.PyUnicode_FromString(ename) : NULL;
      if (key && PY.PyObject_SetAttr(mod, key, x) == 0)
        PY.PyDict_SetItem(names, key, PY._Py_NoneStruct);
      PY.PyErr_Clear();
      PY.Py_DecRef(key);
      PY.Py_DecRef(x);
    }
    /* what the host removed from it */
    PyObject *old = prev ? PY.PyTuple_GetItem(prev, 1) : NULL, *key, *val;
    for (Py_ssize_t pos = 0; old && PY.PyDict_Next(old, &pos, &key, &val);)
      if (!PY.PyDict_GetItemWithError(names, key)) PY.PyObject_SetAttr(mod, key, NULL);
    PY.PyErr_Clear();
    PyObject *pair = PY.PyTuple_New(2);
    if (pair) { /* the tuple takes both references */
      PY.PyTuple_SetItem(pair, 0, mod);
      PY.PyTuple_SetItem(pair, 1, names);
    } else {
      PY.Py_DecRef(names);
      PY.Py_DecRef(mod);
    }
    if (!pair || PY.PyDict_SetItemString(now, name, pair) < 0) PY.PyErr_Clear();
    PY.Py_DecRef(pair);
  }
  /* the modules the host freed leave this interpreter's sys.modules */
  PyObject *key, *pair;
  for (Py_ssize_t pos = 0; PY.PyDict_Next(*state, &pos, &key, &pair);) {
    if (PY.PyDict_GetItemWithError(now, key)) continue;
    char *name = pyhost__utf8_copy(key, NULL);
    PyObject *modules = PY.PyImport_GetModuleDict(); /* borrowed */
    if (name && PY.PyDict_GetItemString(modules, name) == PY.PyTuple_GetItem(pair, 0))
      PY.PyDict_DelItemString(modules, name);
    pyhost__free(name);
  }
  PY.PyErr_Clear();
  PY.Py_DecRef(*state);
  *state = now;
  if (r->bad) return pyhost__fmt(err, cap, "a malformed description of the host's modules"), -1;
  return 0;
}
