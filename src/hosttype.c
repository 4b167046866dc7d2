/* hosttype.c: host types, classes built from a PyType_Spec at run time (see pyhost.h,
 * "host types").
 *
 * Reference counting, the same code on every runtime 3.6-3.13:
 *  - instances are allocated through the type's tp_alloc (PyType_GenericAlloc), which
 *    INCREFs a heap type on every version (PyObject_New does not before 3.8);
 *  - tp_dealloc calls the type's tp_free and then DECREFs the type;
 *  - a Python subclass would get its type DECREFed twice on 3.6/3.7 (bpo-37879: fixed
 *    in 3.8), so Py_TPFLAGS_BASETYPE is only ever set on 3.8 and later;
 *  - tp_traverse visits the type only from 3.9 (before, subtype_traverse did not expect
 *    it and the type's refcount would be visited once too often).
 * Weak references: the "__weaklistoffset__" member is honoured from 3.9 only.
 *
 * Methods are not tp_methods (a PyMethodDef has no closure to tell the methods
 * apart): each is a small descriptor object in the class dict whose __get__ makes a
 * bound method, the way Python functions work.
 *
 * A type's C record (names, the getset and member arrays the type points at) lives
 * until the process ends: the type object keeps pointers into it and may outlive the
 * host's handle.  The record also keeps a reference to the type while Python runs.
 */
#include "bridge.h"

#include <stddef.h>
#include <string.h>
#include <structmember.h>

/* structmember.h's T_PYSSIZET and READONLY (never renumbered). */
#define HT_T_PYSSIZET 19
#define HT_READONLY 1

struct typerec;

struct methrec {
  struct typerec *t;
  char *name, *doc;
  pyhost_method fn;
};

struct proprec {
  struct typerec *t;
  char *name, *doc;
  pyhost_getter get;
  pyhost_setter set;
};

struct typerec {
  pyhost *h;
  char *tp_name;             /* "myapp.Buffer": tp_name points here before 3.12 */
  char *doc;
  pyhost_constructor ctor;
  pyhost_destructor dtor;
  pyhost_traverse traverse;
  void *userdata;
  struct methrec *methods;
  size_t n_methods;
  struct proprec *props;
  size_t n_props;
  PyGetSetDef *getset;       /* n_props + 1, referenced by the type */
  PyMemberDef members[2];    /* referenced by the type */
  PyTypeObject *type;        /* strong while Python runs */
  int weakrefs;
  struct typerec *next;
};

struct pyhost_type {
  struct typerec *rec;
};

typedef struct {
  PyObject_HEAD
  void *payload;
  struct typerec *t;
  PyObject *weaklist;
  int valid;                 /* 0 once invalidated or cleared: no callback runs */
} hostobj;

/* Every record ever made; read and written with the GIL held. */
static struct typerec *all_types;

/* ---- helpers shared by the callbacks ---- */

static int usable(hostobj *o) {
  if (!o->valid) {
    PY.PyErr_Format(*PY.PyExc_ReferenceError, "%s object was invalidated by the host",
                    o->t->tp_name);
    return 0;
  }
  if (!pyhost__handle_running(o->t->h)) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError,
                    "%s used while Python is being finalized; the host no longer takes calls",
                    o->t->tp_name);
    return 0;
  }
  return 1;
}

static void run_destructor(struct typerec *t, void *payload) {
  if (!t->dtor) return;
  PyObject *et, *ev, *etb;
  PY.PyErr_Fetch(&et, &ev, &etb); /* a destructor may run while an exception unwinds */
  t->dtor(payload, t->userdata);
  PY.PyErr_Restore(et, ev, etb);
}

static struct typerec *record_of(PyTypeObject *type) {
  for (struct typerec *r = all_types; r; r = r->next)
    if (r->type == type) return r;
  for (struct typerec *r = all_types; r; r = r->next)
    if (r->type && PY.PyType_IsSubtype(type, r->type)) return r;
  return NULL;
}

static int is_instance(PyObject *o, struct typerec *t) {
  return Py_TYPE(o) == t->type || PY.PyType_IsSubtype(Py_TYPE(o), t->type);
}

static PyObject *alloc(PyTypeObject *type) {
  allocfunc a = (allocfunc)PY.PyType_GetSlot(type, Py_tp_alloc);
  return a ? a(type, 0) : NULL;
}

/* tp_free then DECREF of the type: right for tp_alloc'd objects on every version. */
static void free_instance(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  freefunc f = (freefunc)PY.PyType_GetSlot(tp, Py_tp_free);
  f(self);
  PY.Py_DecRef((PyObject *)tp);
}

/* ---- instances ---- */

static void obj_dealloc(PyObject *self) {
  hostobj *o = (hostobj *)self;
  if (PY.PyType_GetFlags(Py_TYPE(self)) & Py_TPFLAGS_HAVE_GC) PY.PyObject_GC_UnTrack(self);
  if (o->weaklist) PY.PyObject_ClearWeakRefs(self);
  if (o->valid) {
    o->valid = 0;
    run_destructor(o->t, o->payload);
  }
  free_instance(self);
}

struct visit_ctx {
  visitproc visit;
  void *arg;
  int rc;
};

static void visit_value(const pyhost_value *v, void *arg) {
  struct visit_ctx *c = arg;
  if (!v || c->rc) return;
  if (v->kind == PYHOST_KIND_OBJECT) {
    if (v->u.obj) c->rc = c->visit(v->u.obj, c->arg);
  } else if (v->kind == PYHOST_KIND_LIST || v->kind == PYHOST_KIND_TUPLE ||
             v->kind == PYHOST_KIND_DICT) {
    for (size_t i = 0; i < v->u.seq.n && !c->rc; i++) visit_value(v->u.seq.items[i], arg);
  }
}

static int obj_traverse(PyObject *self, visitproc visit, void *arg) {
  hostobj *o = (hostobj *)self;
  if (o->valid && o->t && o->t->traverse) {
    struct visit_ctx c = {visit, arg, 0};
    o->t->traverse(o->payload, o->t->userdata, visit_value, &c);
    if (c.rc) return c.rc;
  }
  if (pyhost__runtime_at_least(3, 9)) return visit((PyObject *)Py_TYPE(self), arg);
  return 0;
}

/* The cycle collector breaks a cycle through a payload by destroying the payload. */
static int obj_clear(PyObject *self) {
  hostobj *o = (hostobj *)self;
  if (o->valid) {
    void *p = o->payload;
    o->valid = 0;
    o->payload = NULL;
    run_destructor(o->t, p);
  }
  return 0;
}

static PyObject *obj_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  struct typerec *t = record_of(type);
  if (!t) {
    PY.PyErr_SetString(*PY.PyExc_TypeError, "not a pyhost host type");
    return NULL;
  }
  if (!t->ctor) {
    PY.PyErr_Format(*PY.PyExc_TypeError, "cannot create '%s' instances from Python",
                    t->tp_name);
    return NULL;
  }
  if (!pyhost__handle_running(t->h)) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s created while Python is being finalized",
                    t->tp_name);
    return NULL;
  }
  struct pyhost__args a;
  if (pyhost__args_from_tuple(&a, args, 0, kwargs) < 0) return NULL;
  struct pyhost__frame frame;
  void *payload = NULL;
  pyhost__frame_push(&frame);
  int rc = t->ctor(t->h, t->userdata, (const pyhost_value *const *)a.argv, a.nargs, a.kwargs,
                   &payload);
  pyhost__frame_pop(&frame);
  pyhost__args_clear(&a);
  if (pyhost__frame_finish(t->h, &frame, rc, t->tp_name) < 0) return NULL;
  hostobj *o = (hostobj *)alloc(type);
  if (!o) {
    run_destructor(t, payload);
    return NULL;
  }
  o->payload = payload;
  o->t = t;
  o->valid = 1;
  return (PyObject *)o;
}

/* ---- properties ---- */

static PyObject *prop_get(PyObject *self, void *closure) {
  struct proprec *p = closure;
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  struct pyhost__frame frame;
  pyhost_value *result = NULL;
  pyhost__frame_push(&frame);
  int rc = p->get(p->t->h, o->payload, p->t->userdata, &result);
  pyhost__frame_pop(&frame);
  if (pyhost__frame_finish(p->t->h, &frame, rc, p->name) < 0) {
    pyhost_value_free(result);
    return NULL;
  }
  return pyhost__result_to_python(p->t->h, result);
}

static int prop_set(PyObject *self, PyObject *value, void *closure) {
  struct proprec *p = closure;
  hostobj *o = (hostobj *)self;
  if (!value) {
    PY.PyErr_Format(*PY.PyExc_AttributeError, "cannot delete attribute '%s' of '%s' objects",
                    p->name, p->t->tp_name);
    return -1;
  }
  if (!usable(o)) return -1;
  pyhost_value *v = pyhost__from_python(NULL, value);
  if (!v) return -1;
  struct pyhost__frame frame;
  pyhost__frame_push(&frame);
  int rc = p->set(p->t->h, o->payload, p->t->userdata, v);
  pyhost__frame_pop(&frame);
  pyhost_value_free(v);
  return pyhost__frame_finish(p->t->h, &frame, rc, p->name);
}

/* ---- methods: a descriptor and its bound form ---- */

typedef struct {
  PyObject_HEAD
  struct methrec *m;
} methdescr;

typedef struct {
  PyObject_HEAD
  struct methrec *m;
  PyObject *self;
} boundmeth;

static PyTypeObject *descr_type, *bound_type;

static PyObject *invoke(struct methrec *m, PyObject *self, PyObject *args, size_t skip,
                        PyObject *kwargs) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  struct pyhost__args a;
  if (pyhost__args_from_tuple(&a, args, skip, kwargs) < 0) return NULL;
  struct pyhost__frame frame;
  pyhost_value *result = NULL;
  pyhost__frame_push(&frame);
  int rc = m->fn(m->t->h, o->payload, m->t->userdata, (const pyhost_value *const *)a.argv,
                 a.nargs, a.kwargs, &result);
  pyhost__frame_pop(&frame);
  pyhost__args_clear(&a);
  if (pyhost__frame_finish(m->t->h, &frame, rc, m->name) < 0) {
    pyhost_value_free(result);
    return NULL;
  }
  return pyhost__result_to_python(m->t->h, result);
}

static PyObject *descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == PY._Py_NoneStruct) {
    PY.Py_IncRef(self);
    return self;
  }
  boundmeth *b = (boundmeth *)alloc(bound_type);
  if (!b) return NULL;
  b->m = ((methdescr *)self)->m;
  PY.Py_IncRef(obj);
  b->self = obj;
  return (PyObject *)b;
}

/* Type.method(obj, ...): the unbound form checks obj itself. */
static PyObject *descr_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  struct methrec *m = ((methdescr *)self)->m;
  PyObject *first = PY.PyTuple_Size(args) > 0 ? PY.PyTuple_GetItem(args, 0) : NULL;
  if (!first || !is_instance(first, m->t)) {
    PY.PyErr_Format(*PY.PyExc_TypeError, "%s.%s() needs a '%s' object as its first argument",
                    m->t->tp_name, m->name, m->t->tp_name);
    return NULL;
  }
  return invoke(m, first, args, 1, kwargs);
}

static PyObject *bound_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  boundmeth *b = (boundmeth *)self;
  return invoke(b->m, b->self, args, 0, kwargs);
}

static void descr_dealloc(PyObject *self) { free_instance(self); }

static void bound_dealloc(PyObject *self) {
  PY.Py_DecRef(((boundmeth *)self)->self);
  free_instance(self);
}

static PyObject *descr_doc(PyObject *self, void *closure) {
  (void)closure;
  struct methrec *m = ((methdescr *)self)->m;
  if (m->doc) return PY.PyUnicode_FromString(m->doc);
  PY.Py_IncRef(PY._Py_NoneStruct);
  return PY._Py_NoneStruct;
}

static PyObject *bound_doc(PyObject *self, void *closure) {
  (void)closure;
  struct methrec *m = ((boundmeth *)self)->m;
  if (m->doc) return PY.PyUnicode_FromString(m->doc);
  PY.Py_IncRef(PY._Py_NoneStruct);
  return PY._Py_NoneStruct;
}

static PyObject *no_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  (void)type;
  PY.PyErr_SetString(*PY.PyExc_TypeError, "pyhost method objects cannot be created from Python");
  return NULL;
}

static PyGetSetDef descr_getset[] = {{"__doc__", descr_doc, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};
static PyGetSetDef bound_getset[] = {{"__doc__", bound_doc, NULL, NULL, NULL}, {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject *make_internal(const char *name, size_t size, int is_descr) {
  PyType_Slot slots[6];
  int n = 0;
  slots[n++] = (PyType_Slot){Py_tp_dealloc, (void *)(is_descr ? descr_dealloc : bound_dealloc)};
  slots[n++] = (PyType_Slot){Py_tp_call, (void *)(is_descr ? descr_call : bound_call)};
  slots[n++] = (PyType_Slot){Py_tp_new, (void *)no_new};
  slots[n++] = (PyType_Slot){Py_tp_getset, is_descr ? descr_getset : bound_getset};
  if (is_descr) slots[n++] = (PyType_Slot){Py_tp_descr_get, (void *)descr_get};
  slots[n] = (PyType_Slot){0, NULL};
  PyType_Spec spec = {name, (int)size, 0, Py_TPFLAGS_DEFAULT, slots};
  return (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
}

/* The two internal types, made once per process (Python starts only once). */
static int internal_types(void) {
  if (!descr_type && !(descr_type = make_internal("pyhost.method", sizeof(methdescr), 1)))
    return -1;
  if (!bound_type && !(bound_type = make_internal("pyhost.bound_method", sizeof(boundmeth), 0)))
    return -1;
  return 0;
}

/* ---- building a type ---- */

static int spec_error(pyhost *h, const char *what, const char *name) {
  return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_new: %s%s%s", what, name ? " " : "",
                           name ? name : "");
}

/* The fields of version 0.1, the oldest a caller's size may describe. */
#define SPEC_SIZE_0_1 (offsetof(pyhost_type_spec, flags) + sizeof(unsigned))

/* Copies the caller's spec into a zeroed one of this version's layout: fields a caller
 * compiled against an older header does not know stay 0. */
static int read_spec(pyhost *h, const pyhost_type_spec *in, pyhost_type_spec *out) {
  memset(out, 0, sizeof *out);
  if (!in) return spec_error(h, "spec is NULL", NULL);
  if (in->size < SPEC_SIZE_0_1)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_type_new: spec->size is %zu; set it to sizeof(pyhost_type_spec) "
                             "(PYHOST_TYPE_SPEC_INIT)",
                             in->size);
  memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
  return PYHOST_OK;
}

static int check_spec(pyhost *h, const pyhost_type_spec *s) {
  if (!s->name || !s->name[0] || strchr(s->name, '.')) return spec_error(h, "spec->name must be a plain name", NULL);
  if (s->n_methods && !s->methods) return spec_error(h, "methods is NULL but n_methods is not 0", NULL);
  if (s->n_properties && !s->properties) return spec_error(h, "properties is NULL but n_properties is not 0", NULL);
  for (size_t i = 0; i < s->n_methods; i++)
    if (!s->methods[i].name || !s->methods[i].fn) return spec_error(h, "a method has no name or no fn:", s->methods[i].name);
  for (size_t i = 0; i < s->n_properties; i++)
    if (!s->properties[i].name || (!s->properties[i].get && !s->properties[i].set))
      return spec_error(h, "a property has no name or neither get nor set:", s->properties[i].name);
  return PYHOST_OK;
}

static void rec_free(struct typerec *t) {
  for (size_t i = 0; t->methods && i < t->n_methods; i++) {
    pyhost__free(t->methods[i].name);
    pyhost__free(t->methods[i].doc);
  }
  for (size_t i = 0; t->props && i < t->n_props; i++) {
    pyhost__free(t->props[i].name);
    pyhost__free(t->props[i].doc);
  }
  pyhost__free(t->methods);
  pyhost__free(t->props);
  pyhost__free(t->getset);
  pyhost__free(t->tp_name);
  pyhost__free(t->doc);
  pyhost__free(t);
}

static int dup_opt(char **dst, const char *src) {
  return !src || (*dst = pyhost__strdup(src)) ? 0 : -1;
}

/* Copies the spec into a new record; NULL when out of memory. */
static struct typerec *rec_new(pyhost *h, const char *modname, const pyhost_type_spec *s) {
  struct typerec *t = pyhost__calloc(1, sizeof *t);
  if (!t) return NULL;
  size_t len = strlen(modname) + strlen(s->name) + 2;
  t->h = h;
  t->ctor = s->constructor;
  t->dtor = s->destructor;
  t->traverse = s->traverse;
  t->userdata = s->userdata;
  t->n_methods = s->n_methods;
  t->n_props = s->n_properties;
  if (!(t->tp_name = pyhost__malloc(len)) || dup_opt(&t->doc, s->doc) ||
      !(t->methods = pyhost__calloc(s->n_methods + 1, sizeof *t->methods)) ||
      !(t->props = pyhost__calloc(s->n_properties + 1, sizeof *t->props)) ||
      !(t->getset = pyhost__calloc(s->n_properties + 1, sizeof *t->getset)))
    goto fail;
  pyhost__fmt(t->tp_name, len, "%s.%s", modname, s->name);
  for (size_t i = 0; i < s->n_methods; i++) {
    struct methrec *m = &t->methods[i];
    m->t = t;
    m->fn = s->methods[i].fn;
    if (dup_opt(&m->name, s->methods[i].name) || dup_opt(&m->doc, s->methods[i].doc)) goto fail;
  }
  for (size_t i = 0; i < s->n_properties; i++) {
    struct proprec *p = &t->props[i];
    p->t = t;
    p->get = s->properties[i].get;
    p->set = s->properties[i].set;
    if (dup_opt(&p->name, s->properties[i].name) || dup_opt(&p->doc, s->properties[i].doc))
      goto fail;
    t->getset[i].name = p->name;
    t->getset[i].get = p->get ? prop_get : NULL;
    t->getset[i].set = p->set ? prop_set : NULL;
    t->getset[i].doc = p->doc;
    t->getset[i].closure = p;
  }
  return t;
fail:
  rec_free(t);
  return NULL;
}

static PyTypeObject *make_type(struct typerec *t, PyObject *module, unsigned flags) {
  PyType_Slot slots[8];
  int n = 0;
  slots[n++] = (PyType_Slot){Py_tp_dealloc, (void *)obj_dealloc};
  slots[n++] = (PyType_Slot){Py_tp_new, (void *)obj_new};
  if (t->doc) slots[n++] = (PyType_Slot){Py_tp_doc, t->doc};
  if (t->n_props) slots[n++] = (PyType_Slot){Py_tp_getset, t->getset};
  if ((flags & PYHOST_TYPE_WEAKREF) && pyhost__runtime_at_least(3, 9)) {
    t->members[0] = (PyMemberDef){(char *)"__weaklistoffset__", HT_T_PYSSIZET,
                                  offsetof(hostobj, weaklist), HT_READONLY, NULL};
    slots[n++] = (PyType_Slot){Py_tp_members, t->members};
    t->weakrefs = 1;
  }
  if (t->traverse) {
    slots[n++] = (PyType_Slot){Py_tp_traverse, (void *)obj_traverse};
    slots[n++] = (PyType_Slot){Py_tp_clear, (void *)obj_clear};
  }
  slots[n] = (PyType_Slot){0, NULL};
  unsigned int tpflags = Py_TPFLAGS_DEFAULT;
  /* bpo-37879: no Python subclasses before 3.8 */
  if ((flags & PYHOST_TYPE_SUBCLASSABLE) && pyhost__runtime_at_least(3, 8))
    tpflags |= Py_TPFLAGS_BASETYPE;
  if (t->traverse) tpflags |= Py_TPFLAGS_HAVE_GC;
  PyType_Spec spec = {t->tp_name, (int)sizeof(hostobj), 0, tpflags, slots};
  if (pyhost__runtime_at_least(3, 10))
    return (PyTypeObject *)PY.PyType_FromModuleAndSpec(module, &spec, NULL);
  return (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
}

static int add_methods(struct typerec *t) {
  for (size_t i = 0; i < t->n_methods; i++) {
    methdescr *d = (methdescr *)alloc(descr_type);
    if (!d) return -1;
    d->m = &t->methods[i];
    int rc = PY.PyObject_SetAttrString((PyObject *)t->type, t->methods[i].name, (PyObject *)d);
    PY.Py_DecRef((PyObject *)d);
    if (rc < 0) return -1;
  }
  return 0;
}

int pyhost_type_new(pyhost *h, pyhost_module *m, const pyhost_type_spec *spec, pyhost_type **out) {
  PyGILState_STATE gil;
  if (out) *out = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!m || !out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_new: %s is NULL", m ? "out" : "module");
    goto done;
  }
  pyhost_type_spec copy;
  if ((rc = read_spec(h, spec, &copy)) || (rc = check_spec(h, &copy))) goto done;
  spec = &copy;
  struct typerec *t = rec_new(h, pyhost__module_name(m), spec);
  pyhost_type *handle = t ? pyhost__calloc(1, sizeof *handle) : NULL;
  if (!handle) {
    if (t) rec_free(t);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating type %s", spec->name);
    goto done;
  }
  PyObject *module = pyhost__module_object(m);
  if (internal_types() < 0 || !(t->type = make_type(t, module, spec->flags))) {
    rc = pyhost__take_exception(h, "creating the type failed");
    rec_free(t);
    pyhost__free(handle);
    goto done;
  }
  /* From here the type points into t: t is kept even when the rest fails. */
  t->next = all_types;
  all_types = t;
  if (add_methods(t) < 0 || PY.PyObject_SetAttrString(module, spec->name, (PyObject *)t->type) < 0) {
    rc = pyhost__take_exception(h, "creating the type failed");
    pyhost__free(handle);
    goto done;
  }
  handle->rec = t;
  *out = handle;
done:
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_type_has_weakrefs(const pyhost_type *t) {
  return t && t->rec ? t->rec->weakrefs : 0;
}

int pyhost_type_value(pyhost *h, pyhost_type *t, pyhost_value **cls) {
  PyGILState_STATE gil;
  if (cls) *cls = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!t || !cls) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_value: %s is NULL", t ? "cls" : "type");
  else if (!(*cls = pyhost__from_python(h, (PyObject *)t->rec->type))) rc = pyhost__take_exception(h, NULL);
  pyhost__leave(h, gil);
  return rc;
}

void pyhost_type_free(pyhost *h, pyhost_type *t) {
  (void)h; /* the record stays: the class may outlive the handle */
  pyhost__free(t);
}

int pyhost_object_new(pyhost *h, pyhost_type *t, void *payload, pyhost_value **obj) {
  PyGILState_STATE gil;
  if (obj) *obj = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!t || !obj) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_object_new: %s is NULL", t ? "obj" : "type");
    goto done;
  }
  struct typerec *r = t->rec;
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_OBJECT);
  if (!v || !(v->type_name = pyhost__strdup(r->tp_name))) {
    pyhost_value_free(v);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating a %s", r->tp_name);
    goto done;
  }
  hostobj *o = (hostobj *)alloc(r->type);
  if (!o) {
    pyhost_value_free(v);
    rc = pyhost__take_exception(h, "creating the instance failed");
    goto done;
  }
  o->payload = payload;
  o->t = r;
  o->valid = 1;
  v->u.obj = (PyObject *)o;
  *obj = v;
done:
  pyhost__leave(h, gil);
  return rc;
}

/* The instance behind obj when it is one of t; NULL with the message set. */
static hostobj *instance_of(pyhost *h, const pyhost_value *obj, pyhost_type *t, const char *fn, int *rc) {
  if (!obj || !t) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, obj ? "type" : "obj");
    return NULL;
  }
  if (obj->kind != PYHOST_KIND_OBJECT || !obj->u.obj || !is_instance(obj->u.obj, t->rec)) {
    *rc = PYHOST_TYPE;
    if (h && h->magic == PYHOST__MAGIC)
      pyhost__set_error(h, PYHOST_TYPE, "expected %s, got %s", t->rec->tp_name,
                        pyhost_value_type_name(obj));
    return NULL;
  }
  return (hostobj *)obj->u.obj;
}

int pyhost_object_payload(pyhost *h, const pyhost_value *obj, pyhost_type *t, void **payload) {
  int rc = PYHOST_OK;
  if (payload) *payload = NULL;
  hostobj *o = instance_of(h, obj, t, "pyhost_object_payload", &rc);
  if (!o) return rc;
  if (!o->valid) {
    if (h && h->magic == PYHOST__MAGIC)
      pyhost__set_error(h, PYHOST_MISUSE, "the %s object was invalidated by the host",
                        t->rec->tp_name);
    return PYHOST_MISUSE;
  }
  if (payload) *payload = o->payload;
  return PYHOST_OK;
}

int pyhost_object_invalidate(pyhost *h, const pyhost_value *obj, pyhost_type *t) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  hostobj *o = instance_of(h, obj, t, "pyhost_object_invalidate", &rc);
  if (o) {
    o->valid = 0;
    o->payload = NULL;
  }
  pyhost__leave(h, gil);
  return rc;
}
