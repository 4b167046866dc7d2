/* hostfn.c: host modules and host functions (see pyhost.h, "host functions").
 *
 * A host function is a builtin function object whose self is a small private object
 * (struct fnself) holding its C record: reading the record back is one load, where a
 * capsule costs a call and its checks on every call.  The record outlives both sides:
 * the self object (Python's references) and the module's index (the host's) each count
 * as one reference, so a function Python keeps after the host unregistered it still
 * finds its record, sees fn == NULL and raises instead of calling into freed host
 * state.
 *
 * The checks live off the fast form's hot path: its function's PyMethodDef points at a
 * door with no check while the record may run, and at the checking door from the
 * moment it may not (unregistered, or finalize begun); see close_door.
 *
 * Calling convention: METH_FASTCALL | METH_KEYWORDS (no argument tuple) from 3.10, where
 * it is stable ABI; METH_VARARGS | METH_KEYWORDS before.  The floor's headers do not
 * define METH_FASTCALL, hence the local constant (its value never changed).
 */
#include "bridge.h"

#include <string.h>

#define HOSTFN_METH_FASTCALL 0x0080

struct hostfn {
  struct pyhost__callee callee; /* who is qualname; first, so the hot path stores the
                                 * record's own address as the view's callee */
  PyMethodDef def;         /* points at name and doc below; lives as long as the record */
  /* The host's callback, one of the three forms, and its userdata: the only copies
   * (the signature keeps none), all NULL once unregistered, so a door that looks at
   * the record after Python code ran (can_run) never reaches the host's state. */
  pyhost_function fn;
  pyhost_fast_function ffn;
  pyhost_typed_function tfn;
  void *userdata;
  struct pyhost__sig *sig; /* a typed function's declared signature, or NULL */
  char *name, *qualname, *doc;
  PyObject *func;          /* the module index's reference to the function object */
  int crefs;               /* self object + module index; freed at 0 (GIL held) */
  struct hostfn *next;     /* the module's index: the next record in its bucket */
  /* Every record is on the records list, so finalize can close them all.  Once
   * unregistered while Python still holds the function, a record is an orphan: if
   * Python never frees the function at exit (CPython does not free everything), pyhost
   * frees the record after Py_FinalizeEx. */
  struct hostfn *rec_next, *rec_prev;
  int orphan;
  /* A host function in a sub-interpreter is a replica: a record of its own (its own
   * PyMethodDef, function and self object there) calling the host's function with the
   * host's userdata and signature, which its origin owns.  The origin counts each
   * replica in crefs and lists it, so unregistering the origin closes them too. */
  struct hostfn *origin;           /* a replica's; NULL for the host's own records */
  struct hostfn *replicas;         /* an origin's, linked by rep_next/rep_prev */
  struct hostfn *rep_next, *rep_prev;
};

/* A module's host functions, indexed by name (chained buckets, doubled as it grows):
 * registering n functions stays linear, and a name is found whatever Python code did
 * to the module's attributes meanwhile. */
struct pyhost_module {
  pyhost *h;
  char *name;
  PyObject *mod;           /* strong */
  struct hostfn **buckets; /* nbuckets chains, or NULL before the first function */
  size_t nbuckets, nfns;
  /* on pyhost__bridge.modules, in the order made (GIL-protected) */
  struct pyhost_module *mod_next, *mod_prev;
};

/* A host module changed: a plugin's worker process is told before its next call. */
static void changed(void) {
  atomic_fetch_add(&pyhost__bridge.modules_gen, 1);
}

/* Every record is on pyhost__bridge.hostfns (GIL-protected). */

static void close_all(void);
static void free_orphans(void);

/* A zeroed record on the records list, or NULL. */
static struct hostfn *record_new(void) {
  struct hostfn *f = pyhost__calloc(1, sizeof *f);
  if (f) {
    /* finalize closes every host function as it begins, frees the orphans after */
    pyhost__teardown_add(&pyhost__bridge.hostfn_close_hook, close_all, PYHOST__AT_CLOSE);
    pyhost__teardown_add(&pyhost__bridge.hostfn_orphans_hook, free_orphans, PYHOST__AFTER_FINALIZE);
    f->rec_next = pyhost__bridge.hostfns;
    if (pyhost__bridge.hostfns) pyhost__bridge.hostfns->rec_prev = f;
    pyhost__bridge.hostfns = f;
  }
  return f;
}

/* Takes replica r off its origin's list; returns the origin, its count not yet
 * dropped. */
static struct hostfn *replica_detach(struct hostfn *r) {
  struct hostfn *o = r->origin;
  if (r->rep_prev) r->rep_prev->rep_next = r->rep_next;
  else o->replicas = r->rep_next;
  if (r->rep_next) r->rep_next->rep_prev = r->rep_prev;
  r->origin = NULL;
  return o;
}

static void record_unref(struct hostfn *f);

/* Frees f; a replica lets its origin go (which may free it too). */
static void record_free(struct hostfn *f) {
  if (f->rec_prev) f->rec_prev->rec_next = f->rec_next;
  else pyhost__bridge.hostfns = f->rec_next;
  if (f->rec_next) f->rec_next->rec_prev = f->rec_prev;
  struct hostfn *origin = f->origin ? replica_detach(f) : NULL;
  pyhost__free(f->name);
  pyhost__free(f->qualname);
  pyhost__free(f->doc);
  if (!origin) pyhost__sig_free(f->sig); /* a replica's is its origin's */
  pyhost__free(f);
  if (origin) record_unref(origin);
}

static void record_unref(struct hostfn *f) {
  if (--f->crefs == 0) record_free(f);
}

/* ---- the self object of a host function ---- */

/* Only pyhost makes these (Python cannot create one, nor rebind a builtin's self), so
 * the self of every entry below is always one. */
struct fnself {
  PyObject_HEAD
  struct hostfn *f;
};

/* The type pyhost.function_data is made once per interpreter (pyhost__istate). */

static void fnself_dealloc(PyObject *self) {
  struct hostfn *f = ((struct fnself *)self)->f;
  pyhost__heap_free(self);
  if (f) record_unref(f);
}

/* `type(fn.__self__)()` from Python gets this, not an object without a record. */
static PyObject *fnself_refuse_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)type, (void)args, (void)kwargs;
  PY.PyErr_SetString(*PY.PyExc_TypeError, "pyhost.function_data objects cannot be created from Python");
  return NULL;
}

/* A new self object for f (which it then counts in crefs), or NULL with the exception
 * set. */
static PyObject *fnself_new(struct hostfn *f) {
  struct pyhost__istate *is = pyhost__istate();
  if (!is->fnself_type) {
    PyType_Slot slots[] = {{Py_tp_dealloc, (void *)fnself_dealloc},
                           {Py_tp_new, (void *)fnself_refuse_new},
                           {0, NULL}};
    PyType_Spec spec = {"pyhost.function_data", (int)sizeof(struct fnself), 0,
                        (unsigned int)pyhost__tpflags_default(), slots};
    is->fnself_type = (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
    if (!is->fnself_type) return NULL;
  }
  PyObject *o = pyhost__heap_alloc(is->fnself_type);
  if (o) {
    ((struct fnself *)o)->f = f;
    f->crefs++;
  }
  return o;
}

static inline struct hostfn *record_of(PyObject *self) { return ((struct fnself *)self)->f; }

/* ---- calls from Python ---- */

/* 1 when f may run now; else 0 with the Python exception set.  Every door asks it
 * after any step that may run Python code (converting or binding the arguments,
 * copying the caller's keyword dict, CPython's own argument tuple on 3.6 and 3.7),
 * before it reads the callback and its userdata. */
static inline int can_run(struct hostfn *f) {
  if (!f->fn && !f->ffn && !f->tfn) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s was unregistered by the host", f->qualname);
    return 0;
  }
  if (!pyhost__python_running()) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError,
                    "%s called while Python is being finalized; the host no longer takes calls",
                    f->qualname);
    return 0;
  }
  return 1;
}

/* can_run as a door's liveness (pyhost__live_fn). */
static int record_live(void *f) { return can_run(f); }

/* can_run's refusal for a door that found f closed: NULL with the exception set. */
static PYHOST__COLD PyObject *refused(struct hostfn *f) {
  int open = can_run(f);
  PYHOST__ASSERT(!open);
  (void)open;
  return NULL;
}

/* The value form as pyhost__run_value calls it. */
struct value_call {
  struct hostfn *f;
  struct pyhost__args *a;
};
static int value_entry(pyhost *h, void *ctx, pyhost_value **result) {
  struct value_call *c = ctx;
  return c->f->fn(h, c->f->userdata, (const pyhost_value *const *)c->a->argv, c->a->nargs,
                  c->a->kwargs, result);
}

static PyObject *run(struct hostfn *f, struct pyhost__args *a) {
  struct value_call c = {f, a};
  PyObject *r = NULL;
  int rc = can_run(f) ? pyhost__run_value(f->callee.h, f->qualname, value_entry, &c, &r) : -1;
  pyhost__args_clear(a);
  return rc < 0 ? NULL : r;
}

static PyObject *enter_typed_view(struct hostfn *f, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames, int none_counted);
static PyObject *enter_typed_tuple_view(struct hostfn *f, PyObject *args, PyObject *kwargs);

/* The value form, or a refusal, or a fast or typed function's call by the door that
 * checks everything: correct whatever state the record is in. */
static PYHOST__NOINLINE PyObject *run_values(struct hostfn *f, PyObject *const *args,
                                             size_t nargs, PyObject *kwnames, PyObject *tuple,
                                             PyObject *kwdict) {
  if (!can_run(f)) return NULL;
  if (f->fn) {
    struct pyhost__args a;
    if ((tuple ? pyhost__args_from_tuple(&a, tuple, 0, kwdict)
               : pyhost__args_from_vector(&a, args, nargs, kwnames)) < 0)
      return NULL;
    return run(f, &a); /* which asks can_run again: converting ran Python code */
  }
  if (f->tfn)
    return tuple ? enter_typed_tuple_view(f, tuple, kwdict)
                 : enter_typed_view(f, args, (Py_ssize_t)nargs, kwnames, pyhost__inline_refcounts());
  struct pyhost__fast_call v; /* the fast form */
  int made = 0;
  if (!tuple) pyhost__args_vector(&v.args, &f->callee, args, nargs, kwnames);
  else made = pyhost__args_tuple(&v.args, &f->callee, tuple, 0, kwdict);
  if (!pyhost__args_made(made, &v.args, record_live, f)) return NULL;
  return pyhost__run_fast(f->ffn, f->userdata, &v);
}

static PyObject *entry_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
  return run_values(record_of(self), args, (size_t)nargs, kwnames, NULL, NULL);
}

static PyObject *entry_values_tuple(PyObject *self, PyObject *args, PyObject *kwargs) {
  return run_values(record_of(self), NULL, 0, NULL, args, kwargs);
}

/* The fast form's door while it may run: no check at all.  A record's door is
 * entry_fast only while the record is registered and Python runs; unregistering and
 * finalize's start (both with the GIL, which every call from Python holds) turn it to
 * the checking door first, see close_door; from 3.10 (the only versions with these
 * doors) CPython calls the C function it read from the PyMethodDef without running
 * anything between.  One door per way the runtime counts None, so neither tests the
 * version per call. */
static inline PyObject *enter_fast(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames, int none_counted) {
  struct hostfn *f = record_of(self);
  /* the open door is only ever ml_meth while f is registered and Python runs */
  PYHOST__ASSERT(f->ffn && pyhost__python_running());
  struct pyhost__fast_call v;
  pyhost__args_vector(&v.args, &f->callee, args, (size_t)nargs, kwnames);
  return pyhost__run_fast_as(f->ffn, f->userdata, &v, none_counted, 0); /* 3.10+ */
}

/* A typed function's callback as pyhost__run_typed calls it, and its liveness. */
static inline int typed_fn(void *ctx, const pyhost_arg *argv, pyhost_ret *ret) {
  struct hostfn *f = ctx;
  return f->tfn(f->callee.h, f->userdata, argv, ret);
}

/* A typed function's call that the quick binding left (3.10+; also the checking
 * door's): bound over a view by the full binder, which words every error. */
static PYHOST__NOINLINE PyObject *enter_typed_view(struct hostfn *f, PyObject *const *args,
                                                   Py_ssize_t nargs, PyObject *kwnames,
                                                   int none_counted) {
  struct pyhost__typed_call c;
  struct pyhost_args view;
  PyObject *r;
  pyhost__args_vector(&view, &f->callee, args, (size_t)nargs, kwnames);
  return pyhost__run_typed(&f->callee, &c, f->sig, &view, typed_fn, record_live, f, 0,
                           none_counted, &r) < 0
             ? NULL
             : r;
}

/* A typed function's open door (3.10+): the arguments bound straight from the vector
 * (any signature, see pyhost__typed_bind_vector), then the callback in a frame. */
static PYHOST__HOT_INLINE PyObject *enter_typed(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames, int none_counted) {
  struct hostfn *f = record_of(self);
  PYHOST__ASSERT(f->tfn && pyhost__python_running());
  struct pyhost__sig *s = f->sig; /* read once: the binding runs no Python code */
  struct pyhost__typed_call c;
  PyObject *r;
  if (PYHOST__UNLIKELY(!pyhost__typed_bind_vector(s, args, (size_t)nargs, kwnames, c.argv)))
    return enter_typed_view(f, args, nargs, kwnames, none_counted);
  return pyhost__run_typed(&f->callee, &c, s, NULL, typed_fn, record_live, f, 0, none_counted,
                           &r) < 0
             ? NULL
             : r;
}

static PyObject *entry_typed(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  return enter_typed(self, args, nargs, kwnames, 0);
}

static PyObject *entry_typed_counted(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames) {
  return enter_typed(self, args, nargs, kwnames, 1);
}

static PyObject *entry_fast(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
  return enter_fast(self, args, nargs, kwnames, 0);
}

static PyObject *entry_fast_counted(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                    PyObject *kwnames) {
  return enter_fast(self, args, nargs, kwnames, 1);
}

/* A typed function's call before 3.10 that the quick binding left (and the checking
 * door's): the tuple form's view, which holds the UTF-8 copies of str arguments, bound
 * in the frame. */
static inline PyObject *enter_typed_tuple_view(struct hostfn *f, PyObject *args,
                                               PyObject *kwargs) {
  struct pyhost__typed_call c;
  struct pyhost_args view;
  PyObject *r;
  /* the arguments are converted before the callback runs: only a bytes argument is
   * still read from the caller's objects then */
  if (pyhost__args_tuple_as(&view, &f->callee, args, 0, kwargs, f->sig->borrows_bytes) < 0)
    return NULL;
  return pyhost__run_typed(&f->callee, &c, f->sig, &view, typed_fn, record_live, f, 0, 1, &r) < 0
             ? NULL
             : r;
}

/* The open door before 3.10 (no stable METH_FASTCALL), fast and typed: the tuple form,
 * None counted, temporaries possible (no UTF-8 view of a str).  3.6 and 3.7 make the
 * argument tuple (an allocation, where a collection may run Python code) after they
 * read this door from the PyMethodDef, so a call may arrive here for a record that code
 * unregistered (or finalize closed) meanwhile: the door first looks whether it is
 * still the record's door, which close_door changes in both cases. */
static PyObject *entry_fast_tuple(PyObject *self, PyObject *args, PyObject *kwargs) {
  struct hostfn *f = record_of(self);
  if (PYHOST__UNLIKELY(f->def.ml_meth != (PyCFunction)(void (*)(void))entry_fast_tuple))
    return refused(f);
  if (f->tfn) {
    struct pyhost__typed_call c;
    PyObject *r;
    /* the common call needs no view: its arguments read from the tuple, nothing kept */
    if (kwargs || !pyhost__typed_bind_exact(f->sig, NULL, args, 0,
                                            (size_t)((PyVarObject *)args)->ob_size, c.argv))
      return enter_typed_tuple_view(f, args, kwargs);
    return pyhost__run_typed(&f->callee, &c, f->sig, NULL, typed_fn, record_live, f, 0, 1, &r) < 0
               ? NULL
               : r;
  }
  struct pyhost__fast_call v;
  int made = pyhost__args_tuple_as(&v.args, &f->callee, args, 0, kwargs, 1);
  if (!pyhost__args_made(made, &v.args, record_live, f)) return NULL;
  return pyhost__run_fast_as(f->ffn, f->userdata, &v, 1, 0);
}

/* Before 3.10 the checking door is the tuple one. */
static PyCFunction checking_door(void) {
  return pyhost__runtime_at_least(3, 10) ? (PyCFunction)(void (*)(void))entry_values
                                         : (PyCFunction)(void (*)(void))entry_values_tuple;
}

static PyCFunction open_door(const struct hostfn *f) {
  if (!f->ffn && !f->tfn) return checking_door();
  if (!pyhost__runtime_at_least(3, 10)) return (PyCFunction)(void (*)(void))entry_fast_tuple;
  if (f->tfn)
    return pyhost__inline_refcounts() ? (PyCFunction)(void (*)(void))entry_typed_counted
                                      : (PyCFunction)(void (*)(void))entry_typed;
  return pyhost__inline_refcounts() ? (PyCFunction)(void (*)(void))entry_fast_counted
                                    : (PyCFunction)(void (*)(void))entry_fast;
}

/* CPython reads ml_meth through the function's PyMethodDef on every call (no cache
 * keeps it), so this takes effect at the next call.  GIL held. */
static void close_door(struct hostfn *f) {
  PYHOST__ASSERT_GIL();
  f->def.ml_meth = checking_door();
  PYHOST__ASSERT(f->def.ml_meth != open_door(f) || (!f->ffn && !f->tfn)); /* never a fast door again */
}

/* ---- the module handle ---- */

static int check_module(pyhost *h, pyhost_module *m, const char *fn) {
  if (!m) return pyhost__set_error(h, PYHOST_MISUSE, "%s: module is NULL", fn);
  if (m->h != h) return pyhost__set_error(h, PYHOST_MISUSE, "%s: the module belongs to another pyhost", fn);
  return PYHOST_OK;
}

static int check_name(pyhost *h, const char *name, const char *fn) {
  if (!name || !name[0]) return pyhost__set_error(h, PYHOST_MISUSE, "%s: empty or NULL name", fn);
  return PYHOST_OK;
}

int pyhost_module_new(pyhost *h, const char *name, const char *doc, pyhost_module **out) {
  PyGILState_STATE gil;
  if (out) *out = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if ((rc = check_name(h, name, "pyhost_module_new"))) goto done;
  if (!out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_module_new: out is NULL");
    goto done;
  }
  PyObject *modules = PY.PyImport_GetModuleDict(); /* borrowed */
  if (PY.PyDict_GetItemString(modules, name)) {
    rc = pyhost__set_error(h, PYHOST_MISUSE,
                           "pyhost_module_new: a module named %s is already in sys.modules", name);
    goto done;
  }
  PyObject *parent = NULL; /* strong while used: allocating may run code that drops it */
  const char *dot = strrchr(name, '.');
  if (dot) {
    char pname[512];
    pyhost__fmt(pname, sizeof pname, "%.*s", (int)(dot - name), name);
    if (!(parent = PY.PyDict_GetItemString(modules, pname))) {
      rc = pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_module_new: %s needs its parent module %s to exist first",
                             name, pname);
      goto done;
    }
    PY.Py_IncRef(parent);
  }
  pyhost_module *m = pyhost__calloc(1, sizeof *m);
  if (!m || !(m->name = pyhost__strdup(name))) {
    pyhost__free(m);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating module %s", name);
    PY.Py_DecRef(parent);
    goto done;
  }
  m->h = h;
  PyObject *d = doc ? PY.PyUnicode_FromString(doc) : NULL;
  if (!(m->mod = PY.PyModule_New(name)) || (doc && !d) ||
      (d && PY.PyObject_SetAttrString(m->mod, "__doc__", d) < 0) ||
      PY.PyDict_SetItemString(modules, name, m->mod) < 0 ||
      (parent && PY.PyObject_SetAttrString(parent, dot + 1, m->mod) < 0)) {
    rc = pyhost__take_exception(h, "creating the module failed");
    if (m->mod) PY.PyDict_DelItemString(modules, name);
    PY.PyErr_Clear();
    PY.Py_DecRef(m->mod);
    pyhost__free(m->name);
    pyhost__free(m);
  } else {
    *out = m;
    pyhost_module **l = &pyhost__bridge.modules;
    while (*l) {
      m->mod_prev = *l;
      l = &(*l)->mod_next;
    }
    *l = m;
    changed();
  }
  PY.Py_DecRef(d);
  PY.Py_DecRef(parent);
done:
  pyhost__leave(h, gil);
  return rc;
}

/* Unregisters f (in m's index at *link).  GIL held. */
static void unregister(pyhost_module *m, struct hostfn **link) {
  PYHOST__ASSERT_GIL();
  struct hostfn *f = *link;
  *link = f->next;
  m->nfns--;
  f->fn = NULL;
  f->ffn = NULL;
  f->tfn = NULL;
  f->userdata = NULL;
  pyhost__sig_release(f->sig);
  PY.Py_DecRef(f->func);
  f->func = NULL;
  close_door(f);
  for (struct hostfn *r = f->replicas; r; r = r->rep_next) { /* they refuse too */
    r->fn = NULL;
    r->ffn = NULL;
    r->tfn = NULL;
    r->userdata = NULL;
    close_door(r);
  }
  if (f->crefs > 1) f->orphan = 1; /* its self object (or a replica) still holds it */
  record_unref(f);
}

/* After Py_FinalizeEx: frees the records of unregistered host functions whose function
 * objects Python never freed (no self object will be freed any more). */
static void free_orphans(void) {
  /* the replicas first, as their origins may be orphans too */
  for (struct hostfn *f = pyhost__bridge.hostfns, *next; f; f = next) {
    next = f->rec_next;
    if (f->origin) {
      replica_detach(f)->crefs--;
      record_free(f);
    }
  }
  for (struct hostfn *f = pyhost__bridge.hostfns, *next; f; f = next) {
    next = f->rec_next;
    if (f->orphan) record_free(f);
  }
}

/* With the GIL as finalize begins: every host function refuses from its next call. */
static void close_all(void) {
  for (struct hostfn *f = pyhost__bridge.hostfns; f; f = f->rec_next) {
    close_door(f);
    pyhost__sig_release(f->sig); /* no call binds it any more */
  }
}

static size_t name_hash(const char *name) {
  size_t x = (size_t)1469598103934665603ull; /* FNV-1a */
  for (; *name; name++) x = (x ^ (unsigned char)*name) * (size_t)1099511628211ull;
  return x;
}

/* The link to name's record in m's index, or NULL. */
static struct hostfn **find(pyhost_module *m, const char *name) {
  if (!m->nbuckets) return NULL;
  for (struct hostfn **l = &m->buckets[name_hash(name) & (m->nbuckets - 1)]; *l; l = &(*l)->next)
    if (strcmp((*l)->name, name) == 0) return l;
  return NULL;
}

static void index_put(struct hostfn **buckets, size_t nbuckets, struct hostfn *f) {
  struct hostfn **b = &buckets[name_hash(f->name) & (nbuckets - 1)];
  f->next = *b;
  *b = f;
}

/* Room for one more record: 0, or -1 when the index cannot grow (no memory). */
static int index_reserve(pyhost_module *m) {
  PYHOST__ASSERT_GIL();
  if (m->nfns < m->nbuckets) return 0;
  size_t n = m->nbuckets ? m->nbuckets * 2 : 16;
  struct hostfn **b = pyhost__calloc(n, sizeof *b);
  if (!b) return -1;
  for (size_t i = 0; i < m->nbuckets; i++)
    while (m->buckets[i]) {
      struct hostfn *f = m->buckets[i];
      m->buckets[i] = f->next;
      index_put(b, n, f);
    }
  pyhost__free(m->buckets);
  m->buckets = b;
  m->nbuckets = n;
  return 0;
}

/* Removes module attribute name when it is still f's function object. */
static void drop_attr(pyhost_module *m, struct hostfn *f) {
  PyObject *cur = PY.PyObject_GetAttrString(m->mod, f->name);
  if (cur == f->func) PY.PyObject_SetAttrString(m->mod, f->name, NULL);
  PY.Py_DecRef(cur);
  PY.PyErr_Clear();
}

/* Unregisters every function of m and removes it from the module. */
static void unregister_all(pyhost_module *m) {
  for (size_t i = 0; i < m->nbuckets; i++)
    while (m->buckets[i]) {
      drop_attr(m, m->buckets[i]);
      unregister(m, &m->buckets[i]);
    }
}

/* Adds fn, ffn or tfn (one of them) as name; sig is tfn's signature (the record owns
 * it from here, whatever happens); fname names the public function. */
static int add_function(pyhost *h, pyhost_module *m, const char *name, pyhost_function fn,
                        pyhost_fast_function ffn, pyhost_typed_function tfn, void *userdata,
                        const char *doc, struct pyhost__sig *sig, const char *fname) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) {
    pyhost__sig_free(sig);
    return rc;
  }
  if ((rc = check_module(h, m, fname)) || (rc = check_name(h, name, fname))) {
    pyhost__sig_free(sig);
    goto done;
  }
  if (!fn && !ffn && !tfn) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: fn is NULL for %s", fname, name);
    goto done;
  }
  struct hostfn *f = record_new();
  size_t qlen = strlen(m->name) + strlen(name) + 2;
  if (f) f->sig = sig;
  else pyhost__sig_free(sig);
  if (!f || !(f->name = pyhost__strdup(name)) || (doc && !(f->doc = pyhost__strdup(doc))) ||
      !(f->qualname = pyhost__malloc(qlen))) {
    if (f) record_free(f);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory adding %s.%s", m->name, name);
    goto done;
  }
  pyhost__fmt(f->qualname, qlen, "%s.%s", m->name, name);
  f->callee.h = h;
  f->callee.who = f->qualname;
  f->fn = fn;
  f->ffn = ffn;
  f->tfn = tfn;
  f->userdata = userdata;
  f->def.ml_name = f->name;
  f->def.ml_doc = sig ? sig->doc : f->doc;
  f->def.ml_flags =
      (pyhost__runtime_at_least(3, 10) ? HOSTFN_METH_FASTCALL : METH_VARARGS) | METH_KEYWORDS;
  f->def.ml_meth = open_door(f);
  PyObject *self = sig && pyhost__sig_intern(sig) < 0 ? NULL : fnself_new(f);
  if (!self) {
    pyhost__sig_release(sig);
    record_free(f);
    rc = pyhost__take_exception(h, "creating the function failed");
    goto done;
  }
  PyObject *modname = PY.PyUnicode_FromString(m->name);
  f->func = modname ? PY.PyCFunction_NewEx(&f->def, self, modname) : NULL;
  PY.Py_DecRef(modname);
  PY.Py_DecRef(self); /* the function holds it now (or it is gone, and f with it) */
  if (!f->func) {
    rc = pyhost__take_exception(h, "creating the function failed");
    goto done;
  }
  f->crefs++; /* the module index's */
  if (index_reserve(m) < 0) {
    f->crefs--;
    PY.Py_DecRef(f->func); /* frees f with the function */
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory adding %s.%s", m->name, name);
    goto done;
  }
  struct hostfn **old = find(m, name);
  if (old) unregister(m, old);
  index_put(m->buckets, m->nbuckets, f);
  m->nfns++;
  if (PY.PyObject_SetAttrString(m->mod, name, f->func) < 0) {
    rc = pyhost__take_exception(h, "adding the function to the module failed");
    unregister(m, find(m, name));
  }
  changed();
done:
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_module_add_function(pyhost *h, pyhost_module *m, const char *name,
                               pyhost_function fn, void *userdata, const char *doc) {
  return add_function(h, m, name, fn, NULL, NULL, userdata, doc, NULL,
                      "pyhost_module_add_function");
}

int pyhost_module_add_fast_function(pyhost *h, pyhost_module *m, const char *name,
                                    pyhost_fast_function fn, void *userdata, const char *doc) {
  return add_function(h, m, name, NULL, fn, NULL, userdata, doc, NULL,
                      "pyhost_module_add_fast_function");
}

int pyhost_module_add_typed_function(pyhost *h, pyhost_module *m, const char *signature,
                                     pyhost_typed_function fn, void *userdata, const char *doc) {
  static const char fname[] = "pyhost_module_add_typed_function";
  if (!fn) return pyhost__set_error(h, PYHOST_MISUSE, "%s: fn is NULL", fname);
  struct pyhost__sig *sig = NULL;
  int rc = pyhost__sig_new(h, signature, doc, fname, &sig);
  if (rc) return rc;
  /* the name outlives sig, which a failing add_function frees before its message */
  char *name = pyhost__strdup(sig->name);
  if (!name) {
    pyhost__sig_free(sig);
    return pyhost__set_error(h, PYHOST_NOMEM, "%s: out of memory", fname);
  }
  rc = add_function(h, m, name, NULL, NULL, fn, userdata, doc, sig, fname);
  pyhost__free(name);
  return rc;
}

int pyhost_module_remove(pyhost *h, pyhost_module *m, const char *name) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = check_module(h, m, "pyhost_module_remove")) &&
      !(rc = check_name(h, name, "pyhost_module_remove"))) {
    struct hostfn **l = find(m, name);
    if (!l) {
      rc = pyhost__set_error(h, PYHOST_NOTFOUND, "%s has no host function %s", m->name, name);
    } else {
      drop_attr(m, *l);
      unregister(m, l);
      changed();
    }
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_module_add_value(pyhost *h, pyhost_module *m, const char *name, const pyhost_value *val) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = check_module(h, m, "pyhost_module_add_value")) &&
      !(rc = check_name(h, name, "pyhost_module_add_value"))) {
    PyObject *x = pyhost__to_python(h, val);
    if (!x || PY.PyObject_SetAttrString(m->mod, name, x) < 0) rc = pyhost__take_exception(h, NULL);
    PY.Py_DecRef(x);
    changed();
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_module_add_exception(pyhost *h, pyhost_module *m, const char *name, pyhost_exc base,
                                pyhost_value **cls) {
  PyGILState_STATE gil;
  if (cls) *cls = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = check_module(h, m, "pyhost_module_add_exception")) &&
      !(rc = check_name(h, name, "pyhost_module_add_exception"))) {
    PyObject *b = pyhost__exc_type(base);
    char full[512];
    pyhost__fmt(full, sizeof full, "%s.%s", m->name, name);
    PyObject *t = b ? PY.PyErr_NewException(full, b, NULL) : NULL;
    if (!b) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_module_add_exception: unknown base %d", (int)base);
    else if (!t || PY.PyObject_SetAttrString(m->mod, name, t) < 0) rc = pyhost__take_exception(h, NULL);
    else if (cls && !(*cls = pyhost__from_python(h, t))) rc = pyhost__take_exception(h, NULL);
    PY.Py_DecRef(t);
    changed();
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_module_value(pyhost *h, pyhost_module *m, pyhost_value **module) {
  PyGILState_STATE gil;
  if (module) *module = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!(rc = check_module(h, m, "pyhost_module_value"))) {
    if (!module) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_module_value: module is NULL");
    else if (!(*module = pyhost__from_python(h, m->mod))) rc = pyhost__take_exception(h, NULL);
  }
  pyhost__leave(h, gil);
  return rc;
}

PyObject *pyhost__module_object(pyhost_module *m) { return m->mod; }
const char *pyhost__module_name(pyhost_module *m) { return m->name; }

pyhost_module *pyhost__modules_next(pyhost_module *m) {
  return m ? m->mod_next : pyhost__bridge.modules;
}

int pyhost__module_function(pyhost_module *m, const char *name, PyObject *o, const char **doc) {
  struct hostfn **l = find(m, name);
  if (!l || (*l)->func != o) return 0;
  *doc = (*l)->doc ? (*l)->doc : "";
  return 1;
}

PyObject *pyhost__hostfn_replica(pyhost_module *m, const char *name) {
  struct hostfn **l = find(m, name);
  if (!l) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s.%s was unregistered by the host", m->name, name);
    return NULL;
  }
  struct hostfn *o = *l, *r = record_new();
  if (!r || !(r->name = pyhost__strdup(o->name)) || !(r->qualname = pyhost__strdup(o->qualname))) {
    if (r) record_free(r);
    return PY.PyErr_NoMemory();
  }
  r->callee.h = o->callee.h;
  r->callee.who = r->qualname;
  r->fn = o->fn;
  r->ffn = o->ffn;
  r->tfn = o->tfn;
  r->userdata = o->userdata;
  r->sig = o->sig;
  r->def = o->def;
  r->def.ml_name = r->name;
  r->def.ml_meth = open_door(r);
  r->orphan = 1; /* only its self object holds it: freed after finalize if Python keeps it */
  r->origin = o;
  o->crefs++;
  r->rep_next = o->replicas;
  if (o->replicas) o->replicas->rep_prev = r;
  o->replicas = r;
  PyObject *self = fnself_new(r);
  if (!self) {
    record_free(r);
    return NULL;
  }
  PyObject *modname = PY.PyUnicode_FromString(m->name);
  PyObject *fn = modname ? PY.PyCFunction_NewEx(&r->def, self, modname) : NULL;
  PY.Py_DecRef(modname);
  PY.Py_DecRef(self); /* the function holds it (or it is gone, and r with it) */
  return fn;
}

PyObject *pyhost__hostfn_find(const char *module, const char *name) {
  pyhost_module *m = pyhost__bridge.modules;
  while (m && strcmp(m->name, module) != 0) m = m->mod_next;
  struct hostfn **l = m ? find(m, name) : NULL;
  if (!l) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s.%s was unregistered by the host", module, name);
    return NULL;
  }
  PY.Py_IncRef((*l)->func);
  return (*l)->func;
}

void pyhost_module_free(pyhost *h, pyhost_module *m) {
  if (!m) return;
  PyGILState_STATE gil;
  if (m->h != h) {
    pyhost__set_error(h, PYHOST_MISUSE, "pyhost_module_free: the module belongs to another pyhost");
    return;
  }
  /* free_begin waits for the calls in flight once finalize has begun: a function of m
   * may still be running on another thread, interrupted, on its way out. */
  if (pyhost__inflight_free_begin(&gil)) {
    unregister_all(m);
    PyObject *modules = PY.PyImport_GetModuleDict();
    if (PY.PyDict_GetItemString(modules, m->name) == m->mod)
      PY.PyDict_DelItemString(modules, m->name);
    PY.PyErr_Clear();
    PY.Py_DecRef(m->mod);
    pyhost__inflight_free_end(gil);
  } else if (!pyhost__python_running()) {
    /* Python is gone: no self object is freed any more, so the records are ours. */
    for (size_t i = 0; i < m->nbuckets; i++)
      while (m->buckets[i]) {
        struct hostfn *f = m->buckets[i];
        m->buckets[i] = f->next;
        record_free(f);
      }
  }
  if (m->mod_prev) m->mod_prev->mod_next = m->mod_next;
  else if (pyhost__bridge.modules == m) pyhost__bridge.modules = m->mod_next;
  if (m->mod_next) m->mod_next->mod_prev = m->mod_prev;
  changed();
  pyhost__free(m->buckets);
  pyhost__free(m->name);
  pyhost__free(m);
}
