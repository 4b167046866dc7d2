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
 * bound method, the way Python functions work.  From 3.8 the descriptor type says
 * Py_TPFLAGS_METHOD_DESCRIPTOR, so `obj.m(...)` calls it with obj first and no bound
 * method is made; from 3.12, where vectorcall is stable ABI, it is called without an
 * argument tuple (the tuple form before).  The exception: typed methods are tp_methods
 * after all, each through a C function of a fixed set that knows its record
 * ("trampolines" below), so CPython calls them as its own builtin methods.
 *
 * Construction: `T(...)` goes through type_call and tp_new, with a tuple, up to 3.13;
 * from 3.14 the type has a tp_vectorcall (obj_vectorcall) that takes the call's array.
 *
 * Instances: a type with payload_size keeps the payload inside the object, after the
 * header at a 16-byte boundary (INLINE_AT), so creating one allocates the object and
 * nothing else.  The record of an instance's type is found from the type through a
 * hash table of every host type (subclasses go up their bases to one).
 *
 * A type's C record (names, the getset and member arrays the type points at) lives
 * until the process ends: the type object keeps pointers into it and may outlive the
 * host's handle.  The record also keeps a reference to the type while Python runs.
 *
 * Per interpreter: the record's type is the main interpreter's.  A plugin's
 * sub-interpreter (the interpreter level) gets a type object of its own made there
 * from the same record, with method descriptor types of its own, all kept in that
 * interpreter's pyhost__istate and released as it ends; the table of types maps each
 * to the one record, so every callback serves every interpreter's instances alike.
 * An instance is only ever made of the current interpreter's type, and never enters
 * another interpreter (hostobj_elsewhere, which convert.c asks through
 * pyhost__bridge as a value becomes Python).
 */
#include "bridge.h"
#include "hosttype_buffer.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

/* structmember.h's T_PYSSIZET and READONLY, and type flags and the vectorcall bit the
 * floor's headers lack (never renumbered; stable ABI from the versions they are used). */
#define HT_T_PYSSIZET 19
#define HT_T_OBJECT 6
#define HT_READONLY 1
#define HT_TPFLAGS_HAVE_VECTORCALL (1UL << 11)  /* stable ABI 3.12 */
#define HT_TP_VECTORCALL 82                      /* Py_tp_vectorcall: stable ABI 3.14 */
#define HT_METH_FASTCALL 0x0080                  /* stable ABI 3.10 */
#define HT_TPFLAGS_METHOD_DESCRIPTOR (1UL << 17) /* stable ABI 3.8 */
#define HT_TPFLAGS_IMMUTABLETYPE (1UL << 8)      /* 3.10 */
#define HT_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))
typedef PyObject *(*ht_vectorcallfunc)(PyObject *, PyObject *const *, size_t, PyObject *);

/* The slow ways out of tp_new and tp_dealloc stay out of line, so that the short
 * ways save and restore no more registers than they use. */
#if defined(__GNUC__)
#define HT_NOINLINE __attribute__((noinline))
#else
#define HT_NOINLINE
#endif
#define HT_COLD HT_NOINLINE

/* The largest inline payload a spec may ask for. */
#define PAYLOAD_MAX ((size_t)1 << 20)

struct typerec;

struct methrec {
  struct pyhost__callee callee; /* who is qualname */
  struct typerec *t;
  char *name, *doc;
  char *qualname;            /* "myapp.Buffer.take": fast forms' argument errors */
  pyhost_method fn;          /* one of fn, ffn and tfn */
  pyhost_fast_method ffn;
  pyhost_typed_method tfn;   /* the typed form, bound against sig */
  struct pyhost__sig *sig;   /* own, or NULL */
  char *textsig;             /* __text_signature__: "($self, ...)" */
  int native;                /* a method descriptor of CPython's calls it (trampolines) */
};

struct proprec {
  struct pyhost__callee callee; /* who is qualname */
  struct typerec *t;
  char *name, *doc, *qualname;
  pyhost_getter get;         /* the value form, or */
  pyhost_setter set;
  pyhost_fast_getter fget;   /* the fast form */
  pyhost_fast_setter fset;
};

struct typerec {
  struct pyhost__callee callee; /* who is tp_name */
  char *tp_name;             /* "myapp.Buffer": tp_name points here before 3.12 */
  char *doc;
  pyhost_constructor ctor;   /* at most one of ctor, fctor and tctor */
  pyhost_fast_constructor fctor;
  pyhost_typed_constructor tctor;
  struct pyhost__sig *ctor_sig; /* tctor's (own), its doc the type's */
  pyhost_destructor dtor;
  pyhost_traverse traverse;
  struct pyhost__type_exporter exporter; /* the payload's buffer (3.11+) */
  size_t payload_size;       /* > 0: the payload is inline, at INLINE_AT */
  allocfunc alloc;           /* the type's tp_alloc and tp_free, read once */
  freefunc free;
  PyTypeObject *plain;       /* type when it has no traverse or dtor (else NULL):
                              * obj_dealloc's short way for an instance no weak
                              * reference points to */
  void *userdata;
  struct methrec *methods;
  size_t n_methods;
  struct proprec *props;
  size_t n_props;
  PyGetSetDef *getset;       /* n_props + 1, referenced by the type */
  PyMethodDef *methdefs;     /* the typed methods CPython calls itself (see
                              * "trampolines"), NULL-terminated, referenced by the type */
  PyMemberDef members[2];    /* referenced by the type */
  PyTypeObject *type;        /* the main interpreter's, strong while Python runs */
  unsigned flags;            /* the spec's (PYHOST_TYPE_*) */
  int weakrefs;
  /* The view of a call with no arguments: the same for every `T()`, so it is made once
   * (a view of nothing is never written: only a str argument keeps a temporary). */
  struct pyhost_args no_args;
};

struct pyhost_type {
  uint32_t tag; /* PYHOST__TAG_TYPE (core.h) */
  struct typerec *rec;
};
/* 1 when t is a live type handle. */
static int type_live(const pyhost_type *t) { return pyhost__tagged(t, PYHOST__TAG_TYPE); }

typedef struct {
  PyObject_HEAD
  void *payload;             /* points at INLINE_AT for an inline payload */
  PyObject *weaklist;        /* (between payload and t: the two stored side by side
                              * on each `T(...)` become a slower vector store) */
  struct typerec *t;
  int valid;                 /* 0 once invalidated or cleared: no callback runs */
} hostobj;

/* Where an inline payload starts: after the header, aligned for any C type. */
#define INLINE_ALIGN _Alignof(max_align_t)
#define INLINE_AT ((sizeof(hostobj) + INLINE_ALIGN - 1) / INLINE_ALIGN * INLINE_ALIGN)

/* ---- the record of a type: a hash table keyed by the type object ----
 * Every host type object with its record, read and written with the GIL held.  Open
 * addressing, at most half full.  A record and its main interpreter's type are never
 * removed; a sub-interpreter's type of a record is removed as that interpreter ends
 * (pyhost__hosttypes_drop), before its type object can be freed, so an entry never
 * goes stale. */
/* (pyhost__bridge.by_type: before the first type, a table of one free slot) */

/* A host type in one sub-interpreter (pyhost__istate's types). */
struct pyhost__type_here {
  struct typerec *rec;
  PyTypeObject *type; /* strong */
  struct pyhost__type_here *next;
};

static size_t slot_of(const PyTypeObject *tp, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)tp * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(x >> 32) & (cap - 1);
}

static void index_put(struct pyhost__type_slot *tab, size_t cap, PyTypeObject *type,
                      struct typerec *t) {
  size_t i = slot_of(type, cap);
  while (tab[i].type) i = (i + 1) & (cap - 1);
  tab[i].type = type;
  tab[i].rec = t;
}

/* Removes type's entry; the entries after it in its run move up to where a look-up
 * starting at their own slot still finds them (linear probing's deletion). */
static void index_remove(const PyTypeObject *type) {
  struct pyhost__type_slot *tab = pyhost__bridge.by_type;
  size_t mask = pyhost__bridge.by_type_cap - 1, i = slot_of(type, mask + 1);
  while (tab[i].type != type) {
    if (!tab[i].type) return;
    i = (i + 1) & mask;
  }
  tab[i].type = NULL;
  pyhost__bridge.by_type_n--;
  for (size_t j = (i + 1) & mask; tab[j].type; j = (j + 1) & mask) {
    size_t home = slot_of(tab[j].type, mask + 1);
    /* j's entry stays when its home lies cyclically in (i, j] */
    int stays = i < j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    tab[i] = tab[j];
    tab[j].type = NULL;
    i = j;
  }
}

/* Room for one more type; -1 when out of memory. */
static int index_reserve(void) {
  PYHOST__ASSERT_GIL();
  if (2 * (pyhost__bridge.by_type_n + 1) <= pyhost__bridge.by_type_cap) return 0;
  size_t cap = pyhost__bridge.by_type_cap < 16 ? 16 : 2 * pyhost__bridge.by_type_cap;
  struct pyhost__type_slot *tab = pyhost__calloc(cap, sizeof *tab);
  if (!tab) return -1;
  for (size_t i = 0; i < pyhost__bridge.by_type_cap; i++)
    if (pyhost__bridge.by_type[i].type)
      index_put(tab, cap, pyhost__bridge.by_type[i].type, pyhost__bridge.by_type[i].rec);
  if (pyhost__bridge.by_type != pyhost__bridge.by_type_none)
    pyhost__free(pyhost__bridge.by_type);
  pyhost__bridge.by_type = tab;
  pyhost__bridge.by_type_cap = cap;
  return 0;
}

static struct typerec *exact_record(const PyTypeObject *tp) {
  size_t mask = pyhost__bridge.by_type_cap - 1;
  for (size_t i = slot_of(tp, pyhost__bridge.by_type_cap);; i = (i + 1) & mask) {
    const struct pyhost__type_slot *e = &pyhost__bridge.by_type[i];
    if (!e->type || e->type == tp) return e->rec;
  }
}

/* The record of a host type or of a (Python) subclass of one, or NULL. */
static struct typerec *record_of(PyTypeObject *type) {
  for (PyTypeObject *tp = type; tp; tp = PY.PyType_GetSlot(tp, Py_tp_base)) {
    struct typerec *r = exact_record(tp);
    if (r) return r;
    if (!(PY.PyType_GetFlags(tp) & Py_TPFLAGS_HEAPTYPE)) break; /* GetSlot wants one */
  }
  return NULL;
}

/* ---- helpers shared by the callbacks ---- */

/* usable's refusal, out of line: 0 with the exception set. */
static HT_COLD int unusable(hostobj *o) {
  if (!o->valid)
    PY.PyErr_Format(*PY.PyExc_ReferenceError, "%s object was invalidated by the host",
                    o->t->tp_name);
  else
    PY.PyErr_Format(*PY.PyExc_RuntimeError,
                    "%s used while Python is being finalized; the host no longer takes calls",
                    o->t->tp_name);
  return 0;
}

static inline int usable(hostobj *o) {
  if (PYHOST__UNLIKELY(!o->valid || !pyhost__python_running())) return unusable(o);
  return 1;
}

static void run_destructor(struct typerec *t, void *payload) {
  if (!t->dtor) return;
  PyObject *et, *ev, *etb;
  PY.PyErr_Fetch(&et, &ev, &etb); /* a destructor may run while an exception unwinds */
  t->dtor(payload, t->userdata);
  PY.PyErr_Restore(et, ev, etb);
}

/* t's type in the current interpreter: its own in the main one, the one made for a
 * plugin's sub-interpreter there (NULL when that interpreter has none, or no longer). */
static PyTypeObject *type_here(struct typerec *t) {
  struct pyhost__istate *is = pyhost__istate();
  if (is == &pyhost__bridge.main) return t->type;
  for (struct pyhost__type_here *x = is->types; x; x = x->next)
    if (x->rec == t) return x->type;
  return NULL;
}

static int is_instance(PyObject *o, struct typerec *t) {
  if (Py_TYPE(o) == t->type) return 1;
  PyTypeObject *here = pyhost__process.subs ? type_here(t) : t->type;
  return here && (Py_TYPE(o) == here || PY.PyType_IsSubtype(Py_TYPE(o), here));
}

/* ---- instances ---- */

/* A new instance of type (t's type or a subclass) with no payload yet, or NULL with
 * the Python exception set.  An inline payload is there, zeroed by tp_alloc. */
static inline hostobj *new_instance(struct typerec *t, PyTypeObject *type) {
  hostobj *o = (hostobj *)(type == t->type ? t->alloc(type, 0) : pyhost__heap_alloc(type));
  if (!o) return NULL;
  o->t = t;
  if (t->payload_size) o->payload = (char *)o + INLINE_AT;
  return o;
}

static HT_COLD void obj_dealloc_any(PyObject *self) {
  hostobj *o = (hostobj *)self;
  struct typerec *t = o->t;
  PyTypeObject *tp = Py_TYPE(self);
  if (t->traverse) PY.PyObject_GC_UnTrack(self); /* a subclass's dealloc untracked it */
  if (o->weaklist) PY.PyObject_ClearWeakRefs(self);
  if (o->valid) {
    o->valid = 0;
    if (t->dtor) run_destructor(t, o->payload);
  }
  if (tp == t->type) {
    t->free(self);
    PY.Py_DecRef((PyObject *)tp);
  } else {
    pyhost__heap_free(self);
  }
}

/* tp_dealloc: an instance of a type without GC or destructor that no weak reference
 * points to (the usual instance of a type that allows them: the C++ layer's always
 * do) has nothing to run before its memory goes but the drop of its reference to the
 * type (tp_alloc's): inline before 3.12, where the runtime's own Py_DECREF is
 * (obj_dealloc_counted; a type is never None, so no test for it either way). */
static inline void obj_dealloc_as(PyObject *self, int inline_refcounts) {
  struct typerec *t = ((hostobj *)self)->t;
  PyTypeObject *tp = Py_TYPE(self);
  if (tp == t->plain && !((hostobj *)self)->weaklist) {
    t->free(self);
    if (inline_refcounts) pyhost__drop_as((PyObject *)tp, 1);
    else PY.Py_DecRef((PyObject *)tp);
    return;
  }
  obj_dealloc_any(self);
}
static void obj_dealloc(PyObject *self) { obj_dealloc_as(self, 0); }
static void obj_dealloc_counted(PyObject *self) { obj_dealloc_as(self, 1); }

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
  /* an exported payload waits for its dealloc (its views hold the instance) */
  if (o->valid && !pyhost__type_exporter_views(&o->t->exporter, o->payload)) {
    void *p = o->payload;
    o->valid = 0;
    o->payload = NULL;
    run_destructor(o->t, p);
  }
  return 0;
}

/* The buffer protocol's slots (a type with getbuffer): hosttype_buffer.c does the work. */
static int obj_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) {
    view->obj = NULL;
    return -1;
  }
  return pyhost__type_exporter_get(&o->t->exporter, o->payload, self, view, flags);
}

static void obj_releasebuffer(PyObject *self, Py_buffer *view) {
  pyhost__type_exporter_release(&((hostobj *)self)->t->exporter, view);
}

/* Runs the fast constructor in the form of a fast function, for pyhost__run_fast. */
struct ctor_call {
  struct typerec *t;
  void **payload;
  int typed; /* for ctor_fn: the typed constructor, else the fast one as `T()` */
};
static int fast_ctor_entry(pyhost *h, void *userdata, const pyhost_args *args, pyhost_ret *ret) {
  struct ctor_call *c = userdata;
  (void)ret;
  return c->t->fctor(h, c->t->userdata, args, c->payload);
}

/* A constructor as pyhost__run_typed calls it: the typed one over the bound arguments,
 * or a fast one called as `T()` (over a view of no arguments, made once), which needs
 * nothing else either: no result, no temporaries. */
static inline int ctor_fn(void *ctx, const pyhost_arg *argv, pyhost_ret *ret) {
  struct ctor_call *c = ctx;
  (void)ret;
  return c->typed ? c->t->tctor(c->t->callee.h, c->t->userdata, argv, c->payload)
                  : c->t->fctor(c->t->callee.h, c->t->userdata, &c->t->no_args, c->payload);
}
/* A constructor may run while Python runs (its type's record lives as long as the
 * process, the new instance is the call's own). */
static int ctor_live(void *ctx) {
  struct ctor_call *c = ctx;
  if (pyhost__python_running()) return 1;
  PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s created while Python is being finalized",
                  c->t->tp_name);
  return 0;
}

/* The value-form constructor as pyhost__run_value calls it. */
struct value_ctor_call {
  struct typerec *t;
  void **payload;
  struct pyhost__args a;
};
static int value_ctor_entry(pyhost *h, void *ctx, pyhost_value **result) {
  struct value_ctor_call *c = ctx;
  (void)result;
  return c->t->ctor(h, c->t->userdata, (const pyhost_value *const *)c->a.argv, c->a.nargs,
                    c->a.kwargs, c->payload);
}

/* A call with no arguments (args is the tuple type_call passes). */
static inline int no_arguments(PyObject *args, PyObject *kwargs) {
  return ((PyVarObject *)args)->ob_size == 0 && !kwargs;
}

/* A constructor whose call keeps no temporaries and gives no result, so a frame is all
 * it needs: the typed form on the arguments the quick binding put in c->argv (typed),
 * or else the fast form called as `T()`. */
static inline int construct_bare(struct typerec *t, struct pyhost__typed_call *c, int typed,
                                 void **payload) {
  struct ctor_call x = {t, payload, typed};
  return pyhost__run_typed(&t->callee, c, NULL, NULL, ctor_fn, ctor_live, &x, 1, 0, NULL);
}

/* A new instance of t's own type (with an inline payload) made by construct_bare, or
 * NULL with the Python exception set. */
static inline PyObject *new_bare(struct typerec *t, PyTypeObject *type,
                                 struct pyhost__typed_call *c, int typed) {
  hostobj *o = (hostobj *)t->alloc(type, 0);
  if (!o) return NULL;
  o->t = t;
  void *payload = o->payload = (char *)o + INLINE_AT;
  if (construct_bare(t, c, typed, &payload) < 0) {
    PY.Py_DecRef((PyObject *)o); /* not valid yet: no destructor */
    return NULL;
  }
  o->valid = 1;
  return (PyObject *)o;
}

/* Runs t's constructor (either form) on args and kwargs: 0 with *payload set, or -1
 * with the Python exception set.  Converting the arguments (the value form) or copying
 * the caller's keyword dict (before 3.9) may run Python code: the constructor runs only
 * while Python still does (ctor_live). */
static inline int construct(struct typerec *t, PyObject *args, PyObject *kwargs,
                            void **payload) {
  struct ctor_call x = {t, payload, 1};
  if (t->tctor) { /* a typed constructor converts every argument but bytes ones */
    struct pyhost__typed_call c;
    struct pyhost_args view;
    if (pyhost__args_tuple_as(&view, &t->callee, args, 0, kwargs,
                              t->ctor_sig->borrows_bytes) < 0)
      return -1;
    return pyhost__run_typed(&t->callee, &c, t->ctor_sig, &view, ctor_fn, ctor_live, &x, 1, 0,
                             NULL);
  }
  if (t->fctor) {
    struct pyhost__fast_call v;
    if (no_arguments(args, kwargs)) {
      struct pyhost__typed_call c;
      return construct_bare(t, &c, 0, payload);
    }
    int made = pyhost__args_tuple(&v.args, &t->callee, args, 0, kwargs);
    if (!pyhost__args_made(made, &v.args, ctor_live, &x)) return -1;
    PyObject *none = pyhost__run_fast(fast_ctor_entry, &x, &v);
    if (!none) return -1;
    PY.Py_DecRef(none);
    return 0;
  }
  struct value_ctor_call c;
  c.t = t;
  c.payload = payload;
  if (pyhost__args_from_tuple(&c.a, args, 0, kwargs) < 0) return -1;
  int rc = ctor_live(&x) ? pyhost__run_value(t->callee.h, t->tp_name, value_ctor_entry, &c, NULL) : -1;
  pyhost__args_clear(&c.a);
  return rc;
}

static HT_COLD PyObject *obj_new_any(PyTypeObject *type, PyObject *args, PyObject *kwargs);

/* The last type (not a subclass) with a fast or typed constructor and an inline
 * payload that obj_new_any made an instance of: `T(...)` in a loop finds its record
 * here. */
/* (pyhost__bridge.fast_type and fast_rec) */

/* tp_new.  `T(...)` of that type, with any arguments, costs the allocation, a frame
 * and the constructor. */
static PyObject *obj_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  struct typerec *t = pyhost__bridge.fast_rec;
  if (type == pyhost__bridge.fast_type && pyhost__python_running()) {
    hostobj *o = (hostobj *)t->alloc(type, 0);
    if (!o) return NULL;
    o->t = t;
    void *payload = o->payload = (char *)o + INLINE_AT;
    if (construct(t, args, kwargs, &payload) < 0) {
      PY.Py_DecRef((PyObject *)o); /* not valid yet: no destructor */
      return NULL;
    }
    o->valid = 1;
    return (PyObject *)o;
  }
  return obj_new_any(type, args, kwargs);
}

/* tp_new of a type with a typed constructor (a tp_new of its own, so that the other
 * forms' pay no test for it).  Its common call, every argument by position and of
 * its parameter's exact type, is bound here straight from the tuple; any other call
 * is bound in the constructor's frame, as obj_new does it. */
static PyObject *obj_new_typed(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  struct typerec *t = pyhost__bridge.fast_rec;
  if (type != pyhost__bridge.fast_type || !pyhost__python_running())
    return obj_new_any(type, args, kwargs);
  struct pyhost__typed_call c;
  if (kwargs) return obj_new(type, args, kwargs);
  /* (kwargs is known NULL here: the binding keeps no register for it) */
  if (!pyhost__typed_bind_exact(t->ctor_sig, NULL, args, 0,
                                (size_t)((PyVarObject *)args)->ob_size, c.argv))
    return obj_new(type, args, NULL);
  return new_bare(t, type, &c, 1);
}

/* tp_new of a type with a fast constructor (a tp_new of its own, as the typed one's):
 * its common call `T()` (the fast form's constructor reads its arguments itself, and
 * most take none) goes straight to new_bare, with no view to make and no result to
 * drop; any other call is obj_new's. */
static PyObject *obj_new_fast(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  struct typerec *t = pyhost__bridge.fast_rec;
  if (type != pyhost__bridge.fast_type || !no_arguments(args, kwargs) ||
      !pyhost__python_running())
    return obj_new(type, args, kwargs);
  struct pyhost__typed_call c;
  return new_bare(t, type, &c, 0);
}

/* `T(...)` as type_call makes it, a tuple and a dict to the type's tp_new and then its
 * tp_init (both read now: Python code may have replaced __new__ or __init__): every
 * call obj_vectorcall does not take itself. */
static HT_COLD PyObject *obj_vectorcall_any(PyTypeObject *type, PyObject *const *args,
                                            size_t nargs, PyObject *kwnames) {
  PyObject *tuple = PY.PyTuple_New((Py_ssize_t)nargs), *kwargs = NULL, *o = NULL;
  if (!tuple) return NULL;
  for (size_t i = 0; i < nargs; i++) {
    PY.Py_IncRef(args[i]);
    PY.PyTuple_SetItem(tuple, (Py_ssize_t)i, args[i]);
  }
  Py_ssize_t nkw = kwnames ? PY.PyTuple_Size(kwnames) : 0;
  if (nkw > 0 && !(kwargs = PY.PyDict_New())) goto done;
  for (Py_ssize_t k = 0; k < nkw; k++)
    if (PY.PyDict_SetItem(kwargs, PY.PyTuple_GetItem(kwnames, k), args[nargs + (size_t)k]) < 0)
      goto done;
  newfunc new_fn = (newfunc)PY.PyType_GetSlot(type, Py_tp_new);
  if (!new_fn) { /* type_call's check (CPython drops the vectorcall before it matters) */
    PY.PyErr_SetString(*PY.PyExc_TypeError, "cannot create instances of this host type");
    goto done;
  }
  if (!(o = new_fn(type, tuple, kwargs)) ||
      (Py_TYPE(o) != type && !PY.PyType_IsSubtype(Py_TYPE(o), type)))
    goto done; /* type_call runs no __init__ then either */
  initproc init = (initproc)PY.PyType_GetSlot(type, Py_tp_init);
  if (init && init(o, tuple, kwargs) < 0) {
    PY.Py_DecRef(o);
    o = NULL;
  }
done:
  PY.Py_DecRef(tuple);
  if (kwargs) PY.Py_DecRef(kwargs);
  return o;
}

/* tp_vectorcall, from 3.14 (where a type from a spec may have one): `T(...)` without
 * the argument tuple type_call makes.  CPython never inherits it, so only T itself
 * comes here (a subclass goes through type_call); it drops it when Python code sets
 * T.__new__ or T.__init__.  The quick calls are obj_new_typed's and obj_new_fast's `T()`:
 * the type's own tp_new and object's __init__, which takes any arguments of a type
 * whose __new__ is not object's and does nothing. */
static PyObject *obj_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames) {
  PyTypeObject *type = (PyTypeObject *)callable;
  struct typerec *t = pyhost__bridge.fast_rec;
  size_t nargs = nargsf & ~HT_VECTORCALL_ARGUMENTS_OFFSET;
  struct pyhost__typed_call c;
  if (type == pyhost__bridge.fast_type && !kwnames && pyhost__python_running() &&
      (t->tctor ? pyhost__typed_bind_exact(t->ctor_sig, args, NULL, 0, nargs, c.argv) : !nargs && t->fctor)) {
    return new_bare(t, type, &c, t->tctor != NULL);
  }
  return obj_vectorcall_any(type, args, nargs, kwnames);
}

/* Every other case: subclasses, arguments, the value form, payload pointers, and the
 * errors. */
static HT_COLD PyObject *obj_new_any(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  struct typerec *t = record_of(type);
  if (!t) {
    PY.PyErr_SetString(*PY.PyExc_TypeError, "not a pyhost host type");
    return NULL;
  }
  if (!t->ctor && !t->fctor && !t->tctor) {
    PY.PyErr_Format(*PY.PyExc_TypeError, "cannot create '%s' instances from Python",
                    t->tp_name);
    return NULL;
  }
  if (!pyhost__python_running()) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s created while Python is being finalized",
                    t->tp_name);
    return NULL;
  }
  if (t->payload_size) { /* the object first: the constructor fills its payload */
    if ((t->fctor || t->tctor) && exact_record(type) == t) { /* this interpreter's own */
      pyhost__bridge.fast_type = type;
      pyhost__bridge.fast_rec = t;
    }
    hostobj *o = new_instance(t, type);
    if (!o) return NULL;
    void *payload = o->payload; /* a pointer the constructor stores here is ignored */
    if (construct(t, args, kwargs, &payload) < 0) {
      PY.Py_DecRef((PyObject *)o); /* not valid yet: no destructor */
      return NULL;
    }
    o->valid = 1;
    return (PyObject *)o;
  }
  void *payload = NULL;
  if (construct(t, args, kwargs, &payload) < 0) return NULL;
  hostobj *o = new_instance(t, type);
  if (!o) {
    run_destructor(t, payload);
    return NULL;
  }
  o->payload = payload;
  o->valid = 1;
  return (PyObject *)o;
}

/* ---- properties ---- */

/* A fast getter or setter in the form of a fast function, for pyhost__run_fast. */
struct prop_call {
  struct proprec *p;
  void *payload;
};
static int fast_get_entry(pyhost *h, void *userdata, const pyhost_args *args, pyhost_ret *ret) {
  struct prop_call *c = userdata;
  (void)args;
  return c->p->fget(h, c->payload, c->p->t->userdata, ret);
}
static int fast_set_entry(pyhost *h, void *userdata, const pyhost_args *args, pyhost_ret *ret) {
  struct prop_call *c = userdata;
  (void)ret;
  return c->p->fset(h, c->payload, c->p->t->userdata, args);
}

/* The value-form getter and setter as pyhost__run_value calls them. */
struct value_prop_call {
  struct proprec *p;
  void *payload;
  pyhost_value *v; /* the setter's value */
};
static int value_get_entry(pyhost *h, void *ctx, pyhost_value **result) {
  struct value_prop_call *c = ctx;
  return c->p->get(h, c->payload, c->p->t->userdata, result);
}
static int value_set_entry(pyhost *h, void *ctx, pyhost_value **result) {
  struct value_prop_call *c = ctx;
  (void)result;
  return c->p->set(h, c->payload, c->p->t->userdata, c->v);
}

static PyObject *prop_get(PyObject *self, void *closure) {
  struct proprec *p = closure;
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  if (p->fget) {
    struct prop_call c = {p, o->payload};
    struct pyhost__fast_call v;
    pyhost__args_vector(&v.args, &p->callee, NULL, 0, NULL);
    return pyhost__run_fast(fast_get_entry, &c, &v);
  }
  struct value_prop_call c = {p, o->payload, NULL};
  PyObject *r = NULL;
  return pyhost__run_value(p->callee.h, p->name, value_get_entry, &c, &r) < 0 ? NULL : r;
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
  if (p->fset) { /* the value as a view of one argument */
    struct prop_call c = {p, o->payload};
    struct pyhost__fast_call v;
    PyObject *argv[1] = {value};
    pyhost__args_vector(&v.args, &p->callee, argv, 1, NULL);
    PyObject *none = pyhost__run_fast(fast_set_entry, &c, &v);
    if (!none) return -1;
    PY.Py_DecRef(none);
    return 0;
  }
  struct value_prop_call c = {p, NULL, pyhost__from_python(NULL, value)};
  if (!c.v) return -1;
  int rc = -1;
  if (usable(o)) { /* again: converting the value may have run Python code */
    c.payload = o->payload;
    rc = pyhost__run_value(p->callee.h, p->name, value_set_entry, &c, NULL);
  }
  pyhost_value_free(c.v);
  return rc;
}

/* ---- methods: a descriptor and its bound form ---- */

typedef struct {
  PyObject_HEAD
  struct methrec *m;
  ht_vectorcallfunc vectorcall; /* 3.12+: __vectorcalloffset__ */
} methdescr;

typedef struct {
  PyObject_HEAD
  struct methrec *m;
  PyObject *self;
  ht_vectorcallfunc vectorcall;
} boundmeth;

/* (pyhost__istate's descr_type and bound_type: the two types below, per interpreter) */

/* A fast method in the form of a fast function, for pyhost__run_fast. */
struct method_call {
  struct methrec *m;
  void *payload;
};
static int fast_method_entry(pyhost *h, void *userdata, const pyhost_args *args,
                             pyhost_ret *ret) {
  struct method_call *c = userdata;
  return c->m->ffn(h, c->payload, c->m->t->userdata, args, ret);
}

/* A typed method as pyhost__run_typed calls it, on the instance's payload as it is
 * when the callback starts; and its liveness: the instance still valid, Python still
 * running. */
struct typed_method_call {
  struct methrec *m;
  hostobj *o;
};
static inline int typed_method_fn(void *ctx, const pyhost_arg *argv, pyhost_ret *ret) {
  struct typed_method_call *c = ctx;
  return c->m->tfn(c->m->callee.h, c->o->payload, c->m->t->userdata, argv, ret);
}
static int typed_method_live(void *ctx) { return usable(((struct typed_method_call *)ctx)->o); }
/* usable as a door's liveness, the instance its ctx. */
static int instance_live(void *o) { return usable(o); }

/* Runs typed method m on the usable instance o over the arguments bound in c->argv
 * (the quick binding, which runs no Python code) or else over view's, inside the
 * recursion guard: an int, float or None result kept as a C value until the callback
 * returned. */
static inline PyObject *run_typed_method(struct methrec *m, hostobj *o,
                                         struct pyhost__typed_call *c, struct pyhost_args *view) {
  struct typed_method_call x = {m, o};
  PyObject *r;
  return pyhost__run_typed(&m->callee, c, m->sig, view, typed_method_fn, typed_method_live, &x, 1,
                           PYHOST__NONE_ASK, &r) < 0
             ? NULL
             : r;
}

/* The value-form method as pyhost__run_value calls it. */
struct value_method_call {
  struct methrec *m;
  void *payload;
  struct pyhost__args a;
};
static int value_method_entry(pyhost *h, void *ctx, pyhost_value **result) {
  struct value_method_call *c = ctx;
  return c->m->fn(h, c->payload, c->m->t->userdata, (const pyhost_value *const *)c->a.argv,
                  c->a.nargs, c->a.kwargs, result);
}
/* The value form on converted arguments (c->a, cleared here), on o's payload.  The
 * conversion may have run Python code (a metaclass's __getattribute__ asked for a type
 * name, a collection): o is looked at again first. */
static PyObject *run_value_method(struct value_method_call *c, hostobj *o) {
  PyObject *r = NULL;
  int rc = -1;
  if (usable(o)) {
    c->payload = o->payload;
    rc = pyhost__run_value(c->m->callee.h, c->m->name, value_method_entry, c, &r);
  }
  pyhost__args_clear(&c->a);
  return rc < 0 ? NULL : r;
}

/* A typed method's call that the quick binding left (keywords, conversions, errors):
 * bound in the frame over a view, which words every error (bytes are read in place). */
static HT_COLD PyObject *invoke_typed_view(struct methrec *m, hostobj *o, PyObject *args,
                                           size_t skip, PyObject *kwargs) {
  struct pyhost__typed_call c;
  struct pyhost_args view;
  if (pyhost__args_tuple_as(&view, &m->callee, args, skip, kwargs, m->sig->borrows_bytes) < 0)
    return NULL;
  return run_typed_method(m, o, &c, &view);
}
/* Typed method m on a usable instance o, called with an args tuple whose first skip
 * items are left out: its common call bound straight from the tuple, any other in the
 * frame. */
static PYHOST__HOT_INLINE PyObject *invoke_typed(struct methrec *m, hostobj *o, PyObject *args,
                                                 size_t skip, PyObject *kwargs) {
  struct pyhost__typed_call t;
  size_t n = (size_t)((PyVarObject *)args)->ob_size; /* the runtime's own tuple */
  if (kwargs) return invoke_typed_view(m, o, args, skip, kwargs);
  /* (kwargs is known NULL here: the binding keeps no register for it) */
  if (PYHOST__UNLIKELY(!pyhost__typed_bind_exact(m->sig, NULL, args, skip, n - skip, t.argv)))
    return invoke_typed_view(m, o, args, skip, NULL);
  return run_typed_method(m, o, &t, NULL); /* the common call: no view */
}

/* The same two with a vectorcall argument array (self not in it). */
static HT_COLD PyObject *invoke_typed_vector_view(struct methrec *m, hostobj *o,
                                                  PyObject *const *argv, size_t nargs,
                                                  PyObject *kwnames) {
  struct pyhost__typed_call c;
  struct pyhost_args view;
  pyhost__args_vector(&view, &m->callee, argv, nargs, kwnames);
  return run_typed_method(m, o, &c, &view);
}
static PYHOST__HOT_INLINE PyObject *invoke_typed_vector(struct methrec *m, hostobj *o,
                                                        PyObject *const *argv, size_t nargs,
                                                        PyObject *kwnames) {
  struct pyhost__typed_call t;
  if (kwnames) return invoke_typed_vector_view(m, o, argv, nargs, kwnames);
  if (PYHOST__UNLIKELY(!pyhost__typed_bind_exact(m->sig, argv, NULL, 0, nargs, t.argv)))
    return invoke_typed_vector_view(m, o, argv, nargs, NULL);
  return run_typed_method(m, o, &t, NULL); /* the common call: no view */
}

/* self (an instance of m's type) called with an args tuple whose first skip items are
 * left out. */
static PyObject *invoke(struct methrec *m, PyObject *self, PyObject *args, size_t skip,
                        PyObject *kwargs) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  if (m->tfn) return invoke_typed(m, o, args, skip, kwargs);
  if (m->ffn) {
    struct pyhost__fast_call v;
    int made = pyhost__args_tuple(&v.args, &m->callee, args, skip, kwargs);
    if (!pyhost__args_made(made, &v.args, instance_live, o)) return NULL; /* invalidated? */
    struct method_call c = {m, o->payload};
    return pyhost__run_fast(fast_method_entry, &c, &v);
  }
  struct value_method_call c;
  c.m = m;
  if (pyhost__args_from_tuple(&c.a, args, skip, kwargs) < 0) return NULL;
  return run_value_method(&c, o);
}

/* The same with a vectorcall argument array (self not in it). */
static PYHOST__HOT_INLINE PyObject *invoke_vector(struct methrec *m, PyObject *self, PyObject *const *argv,
                               size_t nargs, PyObject *kwnames) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  if (m->tfn) return invoke_typed_vector(m, o, argv, nargs, kwnames);
  if (m->ffn) {
    struct method_call c = {m, o->payload};
    struct pyhost__fast_call v;
    pyhost__args_vector(&v.args, &m->callee, argv, nargs, kwnames);
    return pyhost__run_fast(fast_method_entry, &c, &v);
  }
  struct value_method_call c;
  c.m = m;
  if (pyhost__args_from_vector(&c.a, argv, nargs, kwnames) < 0) return NULL;
  return run_value_method(&c, o);
}

/* Type.method(obj, ...) and, from 3.8, obj.method(...): the first argument must be an
 * instance. */
static int self_ok(struct methrec *m, PyObject *first) {
  if (first && is_instance(first, m->t)) return 1;
  PY.PyErr_Format(*PY.PyExc_TypeError, "%s.%s() needs a '%s' object as its first argument",
                  m->t->tp_name, m->name, m->t->tp_name);
  return 0;
}

static PyObject *descr_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  struct methrec *m = ((methdescr *)self)->m;
  PyObject *first = PY.PyTuple_Size(args) > 0 ? PY.PyTuple_GetItem(args, 0) : NULL;
  if (!self_ok(m, first)) return NULL;
  return invoke(m, first, args, 1, kwargs);
}

static PyObject *descr_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
  struct methrec *m = ((methdescr *)self)->m;
  size_t nargs = nargsf & ~HT_VECTORCALL_ARGUMENTS_OFFSET;
  if (!self_ok(m, nargs ? args[0] : NULL)) return NULL;
  return invoke_vector(m, args[0], args + 1, nargs - 1, kwnames);
}

/* ---- trampolines: typed methods as CPython's own method descriptors ----
 * A typed method is a PyMethodDef of its type (tp_methods), so CPython's method
 * descriptor calls it the way it calls any builtin method: from 3.10, where
 * METH_FASTCALL | METH_KEYWORDS is stable ABI, with the call's array (the interpreter's
 * specialized calls reach the C function without a call through PyObject_Vectorcall);
 * before, as METH_VARARGS | METH_KEYWORDS, with a tuple of the arguments after self
 * (the runtime's shared empty tuple for none; from 3.7 `obj.m(...)` makes no bound
 * method).  A PyMethodDef has no closure, so each such method gets one of a fixed set
 * of C functions, each of which knows its slot in a table of records; once the set is
 * used up, later typed methods are pyhost descriptors.  CPython's descriptor checks
 * that self is an instance of the type (or a subclass) before it calls, on every
 * version: a foreign object gets its TypeError. */
#define TRAMPOLINES PYHOST__TRAMPOLINES
#define TRAMP_REC(i) (pyhost__bridge.tramp_rec[i]) /* the record behind trampoline i */

/* What the trampolines jump to, out of line; the record comes last, so that a
 * trampoline leaves the call's own arguments where they are and adds its record. */
static HT_NOINLINE PyObject *method_fastcall(PyObject *self, PyObject *const *args,
                                             Py_ssize_t nargs, PyObject *kwnames,
                                             struct methrec *m) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  return invoke_typed_vector(m, o, args, (size_t)nargs, kwnames);
}
static HT_NOINLINE PyObject *method_varargs(PyObject *self, PyObject *args, PyObject *kwargs,
                                            struct methrec *m) {
  hostobj *o = (hostobj *)self;
  if (!usable(o)) return NULL;
  return invoke_typed(m, o, args, 0, kwargs);
}

/* Trampoline i in both conventions: tramp_<i> (3.10+) and trampv_<i> (before). */
#define TRAMP(a, b, c)                                                                   \
  static PyObject *tramp_##a##b##c(PyObject *self, PyObject *const *args, Py_ssize_t nargs, \
                                   PyObject *kwnames) {                                  \
    return method_fastcall(self, args, nargs, kwnames, TRAMP_REC((a) * 64 + (b) * 8 + (c))); \
  }                                                                                      \
  static PyObject *trampv_##a##b##c(PyObject *self, PyObject *args, PyObject *kwargs) {  \
    return method_varargs(self, args, kwargs, TRAMP_REC((a) * 64 + (b) * 8 + (c)));      \
  }
#define TRAMP8(a, b)                                                                     \
  TRAMP(a, b, 0) TRAMP(a, b, 1) TRAMP(a, b, 2) TRAMP(a, b, 3) TRAMP(a, b, 4) TRAMP(a, b, 5) \
  TRAMP(a, b, 6) TRAMP(a, b, 7)
#define TRAMP64(a)                                                                       \
  TRAMP8(a, 0) TRAMP8(a, 1) TRAMP8(a, 2) TRAMP8(a, 3) TRAMP8(a, 4) TRAMP8(a, 5) TRAMP8(a, 6) \
  TRAMP8(a, 7)
TRAMP64(0) TRAMP64(1) TRAMP64(2) TRAMP64(3) TRAMP64(4) TRAMP64(5) TRAMP64(6) TRAMP64(7)

/* The table of each convention, as PyMethodDef stores them (p: the prefix). */
#define TRAMP_PTR(p, a, b, c) (PyCFunction)(void (*)(void))p##a##b##c,
#define TRAMP_PTR8(p, a, b)                                                              \
  TRAMP_PTR(p, a, b, 0) TRAMP_PTR(p, a, b, 1) TRAMP_PTR(p, a, b, 2) TRAMP_PTR(p, a, b, 3)   \
  TRAMP_PTR(p, a, b, 4) TRAMP_PTR(p, a, b, 5) TRAMP_PTR(p, a, b, 6) TRAMP_PTR(p, a, b, 7)
#define TRAMP_PTR64(p, a)                                                                \
  TRAMP_PTR8(p, a, 0) TRAMP_PTR8(p, a, 1) TRAMP_PTR8(p, a, 2) TRAMP_PTR8(p, a, 3)           \
  TRAMP_PTR8(p, a, 4) TRAMP_PTR8(p, a, 5) TRAMP_PTR8(p, a, 6) TRAMP_PTR8(p, a, 7)
#define TRAMP_TABLE(p)                                                                   \
  {TRAMP_PTR64(p, 0) TRAMP_PTR64(p, 1) TRAMP_PTR64(p, 2) TRAMP_PTR64(p, 3)                  \
       TRAMP_PTR64(p, 4) TRAMP_PTR64(p, 5) TRAMP_PTR64(p, 6) TRAMP_PTR64(p, 7)}
static const PyCFunction tramps_fast[TRAMPOLINES] = TRAMP_TABLE(tramp_);
static const PyCFunction tramps_varargs[TRAMPOLINES] = TRAMP_TABLE(trampv_);

/* With the GIL, before the type is made: the PyMethodDef entries of t's typed methods
 * that get a trampoline (t->methdefs; the others stay pyhost descriptors).  0, or -1
 * when out of memory. */
static int native_methods(struct typerec *t) {
  size_t *used = &pyhost__bridge.tramp_used;
  size_t n = 0;
  for (size_t i = 0; i < t->n_methods; i++) n += t->methods[i].tfn != NULL;
  if (!n || *used == TRAMPOLINES) return 0;
  if (!(t->methdefs = pyhost__calloc(n + 1, sizeof *t->methdefs))) return -1;
  int fast = pyhost__runtime_at_least(3, 10);
  size_t k = 0;
  for (size_t i = 0; i < t->n_methods && *used < TRAMPOLINES; i++) {
    struct methrec *m = &t->methods[i];
    if (!m->tfn) continue;
    TRAMP_REC(*used) = m;
    t->methdefs[k].ml_name = m->name;
    t->methdefs[k].ml_meth = (fast ? tramps_fast : tramps_varargs)[(*used)++];
    t->methdefs[k].ml_flags = (fast ? HT_METH_FASTCALL : METH_VARARGS) | METH_KEYWORDS;
    t->methdefs[k++].ml_doc = m->sig->doc; /* "name($self, ...)\n--\n\n" + the doc */
    m->native = 1;
  }
  return 0;
}

/* After the type failed to be made: t's trampolines are free again (the last ones
 * taken; any taken since stay used, pointing at nothing that is ever called). */
static void native_methods_undo(struct typerec *t) {
  size_t *used = &pyhost__bridge.tramp_used;
  for (size_t i = t->n_methods; i-- > 0;)
    if (t->methods[i].native && *used > 0 && TRAMP_REC(*used - 1) == &t->methods[i])
      TRAMP_REC(--*used) = NULL;
}

/* A bound method's self is an instance of its method's type: descr_get makes bound
 * methods only for instances, and nothing else makes them (no_new). */
static PyObject *bound_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  boundmeth *b = (boundmeth *)self;
  PYHOST__ASSERT(is_instance(b->self, b->m->t));
  return invoke(b->m, b->self, args, 0, kwargs);
}

static PyObject *bound_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames) {
  boundmeth *b = (boundmeth *)self;
  PYHOST__ASSERT(is_instance(b->self, b->m->t));
  return invoke_vector(b->m, b->self, args, nargsf & ~HT_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
}

/* `T.__dict__['m'].__get__(obj)`: bound to an instance of m's type (or a subclass's)
 * only, as CPython's own method descriptors are; anything else would hand the callback
 * a payload pointer made from a foreign object. */
static PyObject *descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)type;
  if (!obj || obj == PY._Py_NoneStruct) {
    PY.Py_IncRef(self);
    return self;
  }
  struct methrec *m = ((methdescr *)self)->m;
  if (!is_instance(obj, m->t)) {
    char name[256];
    pyhost__type_name((PyObject *)Py_TYPE(obj), name, sizeof name);
    PY.PyErr_Format(*PY.PyExc_TypeError,
                    "descriptor '%s' for '%s' objects doesn't apply to a '%s' object", m->name,
                    m->t->tp_name, name);
    return NULL;
  }
  PyTypeObject *bound_type = pyhost__istate()->bound_type; /* made with the descriptor's */
  if (!bound_type) { /* an instance that came from another interpreter */
    PY.PyErr_Format(*PY.PyExc_TypeError, "%s: the object belongs to another interpreter",
                    m->qualname);
    return NULL;
  }
  boundmeth *b = (boundmeth *)pyhost__heap_alloc(bound_type);
  if (!b) return NULL;
  b->m = ((methdescr *)self)->m;
  PY.Py_IncRef(obj);
  b->self = obj;
  if (pyhost__runtime_at_least(3, 12)) b->vectorcall = bound_vectorcall;
  return (PyObject *)b;
}

static void descr_dealloc(PyObject *self) { pyhost__heap_free(self); }

static void bound_dealloc(PyObject *self) {
  PY.Py_DecRef(((boundmeth *)self)->self);
  pyhost__heap_free(self);
}

static PyObject *doc_of(struct methrec *m) {
  if (m->doc) return PY.PyUnicode_FromString(m->doc);
  PY.Py_IncRef(PY._Py_NoneStruct);
  return PY._Py_NoneStruct;
}
/* The signature inspect reads: a typed method's own, "any arguments" for the others. */
static PyObject *textsig_of(struct methrec *m) {
  return PY.PyUnicode_FromString(m->textsig ? m->textsig : "($self, /, *args, **kwargs)");
}
static PyObject *descr_textsig(PyObject *self, void *closure) {
  (void)closure;
  return textsig_of(((methdescr *)self)->m);
}
static PyObject *bound_textsig(PyObject *self, void *closure) {
  (void)closure;
  return textsig_of(((boundmeth *)self)->m);
}
/* A bound method stays bound, as a builtin method does: its __get__ makes inspect read
 * it as a builtin (its __text_signature__, self left out as __self__ says). */
static PyObject *bound_get(PyObject *self, PyObject *obj, PyObject *type) {
  (void)obj;
  (void)type;
  PY.Py_IncRef(self);
  return self;
}
static PyObject *descr_doc(PyObject *self, void *closure) {
  (void)closure;
  return doc_of(((methdescr *)self)->m);
}
static PyObject *bound_doc(PyObject *self, void *closure) {
  (void)closure;
  return doc_of(((boundmeth *)self)->m);
}

static PyObject *no_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  (void)args;
  (void)kwargs;
  (void)type;
  PY.PyErr_SetString(*PY.PyExc_TypeError, "pyhost method objects cannot be created from Python");
  return NULL;
}

static PyGetSetDef descr_getset[] = {{"__doc__", descr_doc, NULL, NULL, NULL},
                                     {"__text_signature__", descr_textsig, NULL, NULL, NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};
static PyGetSetDef bound_getset[] = {{"__doc__", bound_doc, NULL, NULL, NULL},
                                     {"__text_signature__", bound_textsig, NULL, NULL, NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};
static PyMemberDef descr_members[] = {
    {(char *)"__vectorcalloffset__", HT_T_PYSSIZET, offsetof(methdescr, vectorcall), HT_READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};
static PyMemberDef bound_members[] = {
    {(char *)"__self__", HT_T_OBJECT, offsetof(boundmeth, self), HT_READONLY, NULL},
    {(char *)"__vectorcalloffset__", HT_T_PYSSIZET, offsetof(boundmeth, vectorcall), HT_READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};
/* before 3.12 (no vectorcall): __self__ only */
static PyMemberDef bound_members_plain[] = {
    {(char *)"__self__", HT_T_OBJECT, offsetof(boundmeth, self), HT_READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject *make_internal(const char *name, size_t size, int is_descr) {
  PyType_Slot slots[7];
  int n = 0;
  unsigned long flags = pyhost__tpflags_default();
  slots[n++] = (PyType_Slot){Py_tp_dealloc, (void *)(is_descr ? descr_dealloc : bound_dealloc)};
  slots[n++] = (PyType_Slot){Py_tp_call, (void *)(is_descr ? descr_call : bound_call)};
  slots[n++] = (PyType_Slot){Py_tp_new, (void *)no_new};
  slots[n++] = (PyType_Slot){Py_tp_getset, is_descr ? descr_getset : bound_getset};
  slots[n++] = (PyType_Slot){Py_tp_descr_get, (void *)(is_descr ? descr_get : bound_get)};
  if (is_descr && pyhost__runtime_at_least(3, 8)) flags |= HT_TPFLAGS_METHOD_DESCRIPTOR;
  /* CPython's specializing interpreter (3.11+) caches a method found on a class only
   * when the descriptor's own class is immutable: then `obj.m(...)` skips the look-up
   * of m on every call, as it does for a builtin method */
  if (pyhost__runtime_at_least(3, 10)) flags |= HT_TPFLAGS_IMMUTABLETYPE;
  if (pyhost__runtime_at_least(3, 12)) {
    slots[n++] = (PyType_Slot){Py_tp_members, is_descr ? descr_members : bound_members};
    flags |= HT_TPFLAGS_HAVE_VECTORCALL;
  } else if (!is_descr) {
    slots[n++] = (PyType_Slot){Py_tp_members, bound_members_plain};
  }
  slots[n] = (PyType_Slot){0, NULL};
  PyType_Spec spec = {name, (int)size, 0, (unsigned int)flags, slots};
  return (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
}

/* The two internal types of interpreter is, made once: the main interpreter's live as
 * long as the process (Python starts only once), a sub-interpreter's until it ends. */
static int internal_types(struct pyhost__istate *is) {
  if (!is->descr_type &&
      !(is->descr_type = make_internal("pyhost.method", sizeof(methdescr), 1)))
    return -1;
  if (!is->bound_type &&
      !(is->bound_type =
            make_internal("pyhost.bound_method", sizeof(boundmeth), 0)))
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
  if (s->n_fast_methods && !s->fast_methods)
    return spec_error(h, "fast_methods is NULL but n_fast_methods is not 0", NULL);
  if (s->n_fast_properties && !s->fast_properties)
    return spec_error(h, "fast_properties is NULL but n_fast_properties is not 0", NULL);
  for (size_t i = 0; i < s->n_fast_methods; i++)
    if (!s->fast_methods[i].name || !s->fast_methods[i].fn)
      return spec_error(h, "a fast method has no name or no fn:", s->fast_methods[i].name);
  for (size_t i = 0; i < s->n_fast_properties; i++)
    if (!s->fast_properties[i].name || (!s->fast_properties[i].get && !s->fast_properties[i].set))
      return spec_error(h, "a fast property has no name or neither get nor set:",
                        s->fast_properties[i].name);
  if (s->constructor && s->fast_constructor)
    return spec_error(h, "constructor and fast_constructor are both set (give one)", NULL);
  if (s->typed_constructor && (s->constructor || s->fast_constructor))
    return spec_error(h, "typed_constructor and another constructor are both set (give one)",
                      NULL);
  if (!s->typed_constructor != !s->constructor_signature)
    return spec_error(h, "typed_constructor and constructor_signature go together: one is NULL",
                      NULL);
  if (s->n_typed_methods && !s->typed_methods)
    return spec_error(h, "typed_methods is NULL but n_typed_methods is not 0", NULL);
  for (size_t i = 0; i < s->n_typed_methods; i++)
    if (!s->typed_methods[i].signature || !s->typed_methods[i].fn)
      return spec_error(h, "a typed method has no signature or no fn:",
                        s->typed_methods[i].signature);
  if (s->payload_size > PAYLOAD_MAX)
    return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_new: payload_size %zu is over %zu bytes",
                             s->payload_size, PAYLOAD_MAX);
  return PYHOST_OK;
}

static void rec_free(struct typerec *t) {
  for (size_t i = 0; t->methods && i < t->n_methods; i++) {
    pyhost__free(t->methods[i].name);
    pyhost__free(t->methods[i].doc);
    pyhost__free(t->methods[i].qualname);
    pyhost__free(t->methods[i].textsig);
    pyhost__sig_release(t->methods[i].sig); /* with the GIL: only pyhost_type_new frees */
    pyhost__sig_free(t->methods[i].sig);
  }
  for (size_t i = 0; t->props && i < t->n_props; i++) {
    pyhost__free(t->props[i].name);
    pyhost__free(t->props[i].doc);
    pyhost__free(t->props[i].qualname);
  }
  pyhost__free(t->methods);
  pyhost__free(t->props);
  pyhost__free(t->getset);
  pyhost__free(t->methdefs);
  pyhost__free(t->tp_name);
  pyhost__free(t->doc);
  pyhost__sig_release(t->ctor_sig);
  pyhost__sig_free(t->ctor_sig);
  pyhost__free(t);
}

static int dup_opt(char **dst, const char *src) {
  return !src || (*dst = pyhost__strdup(src)) ? 0 : -1;
}

/* "<tp_name>.<name>" into *dst, which becomes the callee's name; -1 when out of
 * memory. */
static int qualify(char **dst, struct pyhost__callee *callee, const struct typerec *t,
                   const char *name) {
  size_t len = strlen(t->tp_name) + strlen(name) + 2;
  if (!(*dst = pyhost__malloc(len))) return -1;
  pyhost__fmt(*dst, len, "%s.%s", t->tp_name, name);
  callee->h = t->callee.h;
  callee->who = *dst;
  return 0;
}

/* Method i of the record: the value-form ones first, then the fast ones, then the
 * typed ones.  PYHOST_OK, or a status with h's message set. */
static int method_from_spec(pyhost *h, struct typerec *t, const pyhost_type_spec *s, size_t i) {
  struct methrec *m = &t->methods[i];
  const char *name, *doc;
  m->t = t;
  if (i >= s->n_methods + s->n_fast_methods) {
    const pyhost_typed_method_def *d = &s->typed_methods[i - s->n_methods - s->n_fast_methods];
    int rc = pyhost__sig_new_as(h, d->signature, d->doc, "pyhost_type_new", 1, &m->sig);
    if (rc) return rc;
    m->tfn = d->fn;
    name = m->sig->name;
    doc = d->doc;
    if (!(m->textsig = pyhost__sig_text(m->sig))) return PYHOST_NOMEM;
  } else if (i < s->n_methods) {
    m->fn = s->methods[i].fn;
    name = s->methods[i].name;
    doc = s->methods[i].doc;
  } else {
    const pyhost_fast_method_def *d = &s->fast_methods[i - s->n_methods];
    m->ffn = d->fn;
    name = d->name;
    doc = d->doc;
  }
  return dup_opt(&m->name, name) || dup_opt(&m->doc, doc) ||
                 qualify(&m->qualname, &m->callee, t, name)
             ? PYHOST_NOMEM
             : PYHOST_OK;
}

/* Property i of the record and its getset entry, likewise. */
static int property_from_spec(struct typerec *t, const pyhost_type_spec *s, size_t i) {
  struct proprec *p = &t->props[i];
  const char *name, *doc;
  p->t = t;
  if (i < s->n_properties) {
    p->get = s->properties[i].get;
    p->set = s->properties[i].set;
    name = s->properties[i].name;
    doc = s->properties[i].doc;
  } else {
    const pyhost_fast_property_def *d = &s->fast_properties[i - s->n_properties];
    p->fget = d->get;
    p->fset = d->set;
    name = d->name;
    doc = d->doc;
  }
  if (dup_opt(&p->name, name) || dup_opt(&p->doc, doc) ||
      qualify(&p->qualname, &p->callee, t, name))
    return -1;
  t->getset[i].name = p->name;
  t->getset[i].get = p->get || p->fget ? prop_get : NULL;
  t->getset[i].set = p->set || p->fset ? prop_set : NULL;
  t->getset[i].doc = p->doc;
  t->getset[i].closure = p;
  return 0;
}

/* The typed constructor's signature into t, named after the type (the type's doc is
 * its docstring then, whose first line CPython reads as the class's
 * __text_signature__).  A status with h's message set. */
static int typed_ctor_from_spec(pyhost *h, struct typerec *t, const pyhost_type_spec *s) {
  int rc = pyhost__sig_new(h, s->constructor_signature, s->doc, "pyhost_type_new", &t->ctor_sig);
  if (rc) return rc;
  if (strcmp(t->ctor_sig->name, s->name) != 0)
    return pyhost__set_error(h, PYHOST_MISUSE,
                             "pyhost_type_new: constructor_signature \"%s\" names %s, not the "
                             "type %s",
                             s->constructor_signature, t->ctor_sig->name, s->name);
  t->tctor = s->typed_constructor;
  pyhost__free(t->doc);
  t->doc = NULL;
  return dup_opt(&t->doc, t->ctor_sig->doc) ? PYHOST_NOMEM : PYHOST_OK;
}

/* With the GIL: the interned parameter names of every signature in t. */
static int rec_intern(struct typerec *t) {
  if (t->ctor_sig && pyhost__sig_intern(t->ctor_sig) < 0) return -1;
  for (size_t i = 0; i < t->n_methods; i++)
    if (t->methods[i].sig && pyhost__sig_intern(t->methods[i].sig) < 0) return -1;
  return 0;
}

/* Copies the spec into a new record; NULL with *rc: PYHOST_NOMEM, or the status (and
 * h's message) of a signature pyhost cannot read. */
static struct typerec *rec_new(pyhost *h, const char *modname, const pyhost_type_spec *s,
                               int *rc) {
  struct typerec *t = pyhost__calloc(1, sizeof *t);
  *rc = PYHOST_NOMEM;
  if (!t) return NULL;
  size_t len = strlen(modname) + strlen(s->name) + 2;
  t->callee.h = h;
  t->ctor = s->constructor;
  t->fctor = s->fast_constructor;
  t->dtor = s->destructor;
  t->traverse = s->traverse;
  t->exporter.fn = s->getbuffer;
  t->exporter.userdata = s->userdata;
  t->payload_size = s->payload_size;
  t->userdata = s->userdata;
  t->n_methods = s->n_methods + s->n_fast_methods + s->n_typed_methods;
  t->n_props = s->n_properties + s->n_fast_properties;
  if (!(t->tp_name = pyhost__malloc(len)) || dup_opt(&t->doc, s->doc) ||
      !(t->methods = pyhost__calloc(t->n_methods + 1, sizeof *t->methods)) ||
      !(t->props = pyhost__calloc(t->n_props + 1, sizeof *t->props)) ||
      !(t->getset = pyhost__calloc(t->n_props + 1, sizeof *t->getset)))
    goto fail;
  pyhost__fmt(t->tp_name, len, "%s.%s", modname, s->name);
  t->callee.who = t->tp_name;
  t->exporter.tp_name = t->tp_name;
  pyhost__args_vector(&t->no_args, &t->callee, NULL, 0, NULL);
  if (s->typed_constructor && (*rc = typed_ctor_from_spec(h, t, s))) goto fail;
  for (size_t i = 0; i < t->n_methods; i++)
    if ((*rc = method_from_spec(h, t, s, i))) goto fail;
  *rc = PYHOST_NOMEM;
  for (size_t i = 0; i < t->n_props; i++)
    if (property_from_spec(t, s, i) < 0) goto fail;
  *rc = PYHOST_OK;
  return t;
fail:
  rec_free(t);
  return NULL;
}

/* A type object of t's, in the current interpreter, made from the record: a new
 * reference, or NULL with the exception set. */
static PyTypeObject *make_type(struct typerec *t, PyObject *module) {
  unsigned flags = t->flags;
  PyType_Slot slots[12];
  int n = 0;
  slots[n++] = (PyType_Slot){
      Py_tp_dealloc, (void *)(pyhost__inline_refcounts() ? obj_dealloc_counted : obj_dealloc)};
  slots[n++] = (PyType_Slot){
      Py_tp_new, (void *)(t->tctor ? obj_new_typed : t->fctor ? obj_new_fast : obj_new)};
  if (pyhost__runtime_at_least(3, 14))
    slots[n++] = (PyType_Slot){HT_TP_VECTORCALL, (void *)obj_vectorcall};
  if (t->doc) slots[n++] = (PyType_Slot){Py_tp_doc, t->doc};
  if (t->n_props) slots[n++] = (PyType_Slot){Py_tp_getset, t->getset};
  if (t->methdefs) slots[n++] = (PyType_Slot){Py_tp_methods, t->methdefs};
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
  pyhost__type_exporter_slots(&t->exporter, slots, &n, (void *)obj_getbuffer,
                              (void *)obj_releasebuffer);
  slots[n] = (PyType_Slot){0, NULL};
  unsigned int tpflags = (unsigned int)pyhost__tpflags_default();
  /* bpo-37879: no Python subclasses before 3.8 */
  if ((flags & PYHOST_TYPE_SUBCLASSABLE) && pyhost__runtime_at_least(3, 8))
    tpflags |= Py_TPFLAGS_BASETYPE;
  if (t->traverse) tpflags |= Py_TPFLAGS_HAVE_GC;
  size_t size = t->payload_size ? INLINE_AT + t->payload_size : sizeof(hostobj);
  PyType_Spec spec = {t->tp_name, (int)size, 0, tpflags, slots};
  PyTypeObject *type;
  if (pyhost__runtime_at_least(3, 10))
    type = (PyTypeObject *)PY.PyType_FromModuleAndSpec(module, &spec, NULL);
  else
    type = (PyTypeObject *)PY.PyType_FromSpecWithBases(&spec, NULL);
  return type;
}

/* t's methods in type's dict (t's type in interpreter is), each a descriptor of that
 * interpreter's. */
static int add_methods(struct typerec *t, PyTypeObject *type, struct pyhost__istate *is) {
  for (size_t i = 0; i < t->n_methods; i++) {
    if (t->methods[i].native) continue; /* in the type's dict already */
    methdescr *d = (methdescr *)pyhost__heap_alloc(is->descr_type);
    if (!d) return -1;
    d->m = &t->methods[i];
    if (pyhost__runtime_at_least(3, 12)) d->vectorcall = descr_vectorcall;
    int rc = PY.PyObject_SetAttrString((PyObject *)type, t->methods[i].name, (PyObject *)d);
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
  if (!out) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_new: out is NULL");
    goto done;
  }
  if (!pyhost__tagged(m, PYHOST__TAG_MODULE)) {
    rc = pyhost__tag_refused(h, m, "pyhost_type_new", "module");
    goto done;
  }
  pyhost_type_spec copy;
  if ((rc = read_spec(h, spec, &copy)) || (rc = check_spec(h, &copy)) ||
      (rc = pyhost__type_exporter_check(h, &copy)))
    goto done;
  spec = &copy;
  struct typerec *t = rec_new(h, pyhost__module_name(m), spec, &rc);
  if (rc == PYHOST_MISUSE) goto done; /* a signature: its message is set */
  pyhost_type *handle = t ? pyhost__calloc(1, sizeof *handle) : NULL;
  if (!handle) {
    if (t) rec_free(t);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating type %s", spec->name);
    goto done;
  }
  if (rec_intern(t) < 0) {
    rc = pyhost__take_exception(h, "creating the type failed");
    rec_free(t);
    pyhost__free(handle);
    goto done;
  }
  if (index_reserve() < 0) {
    rec_free(t);
    pyhost__free(handle);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating type %s", spec->name);
    goto done;
  }
  PyObject *module = pyhost__module_object(m);
  if (native_methods(t) < 0) {
    rec_free(t);
    pyhost__free(handle);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating type %s", spec->name);
    goto done;
  }
  t->flags = spec->flags;
  if (internal_types(&pyhost__bridge.main) < 0 || !(t->type = make_type(t, module))) {
    rc = pyhost__take_exception(h, "creating the type failed");
    native_methods_undo(t);
    rec_free(t);
    pyhost__free(handle);
    goto done;
  }
  /* From here the type points into t: t is kept even when the rest fails. */
  t->plain = !t->traverse && !t->dtor ? t->type : NULL;
  t->alloc = (allocfunc)PY.PyType_GetSlot(t->type, Py_tp_alloc);
  t->free = (freefunc)PY.PyType_GetSlot(t->type, Py_tp_free);
  index_put(pyhost__bridge.by_type, pyhost__bridge.by_type_cap, t->type, t);
  pyhost__bridge.by_type_n++;
  if (add_methods(t, t->type, &pyhost__bridge.main) < 0 ||
      PY.PyObject_SetAttrString(module, spec->name, (PyObject *)t->type) < 0) {
    rc = pyhost__take_exception(h, "creating the type failed");
    pyhost__free(handle);
    goto done;
  }
  handle->tag = PYHOST__TAG_TYPE;
  handle->rec = t;
  *out = handle;
  atomic_fetch_add(&pyhost__bridge.modules_gen, 1); /* a worker process shows it */
done:
  pyhost__leave(h, gil);
  return rc;
}

/* A type's refusal where the current interpreter has no type object of it. */
static int not_here(pyhost *h, const char *fn, const struct typerec *t) {
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "%s: %s is not in this plugin's sub-interpreter (its host module "
                           "is not there)", fn, t->tp_name);
}

int pyhost_type_has_weakrefs(const pyhost_type *t) {
  return type_live(t) ? t->rec->weakrefs : 0;
}

int pyhost_type_value(pyhost *h, pyhost_type *t, pyhost_value **cls) {
  PyGILState_STATE gil;
  if (cls) *cls = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyTypeObject *type = NULL;
  if (!cls) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_type_value: cls is NULL");
  else if (!type_live(t)) rc = pyhost__tag_refused(h, t, "pyhost_type_value", "type");
  else if (!(type = type_here(t->rec))) rc = not_here(h, "pyhost_type_value", t->rec);
  else if (!(*cls = pyhost__from_python(h, (PyObject *)type))) rc = pyhost__take_exception(h, NULL);
  pyhost__leave(h, gil);
  return rc;
}

void pyhost_type_free(pyhost *h, pyhost_type *t) {
  /* the record stays: the class may outlive the handle */
  if (type_live(t)) pyhost__handle_retire(t);
  else if (t) pyhost__tag_refused(h, t, "pyhost_type_free", "type"); /* a second free */
}

int pyhost_object_new(pyhost *h, pyhost_type *t, void *payload, pyhost_value **obj) {
  PyGILState_STATE gil;
  if (obj) *obj = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!obj) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_object_new: obj is NULL");
    goto done;
  }
  if (!type_live(t)) {
    rc = pyhost__tag_refused(h, t, "pyhost_object_new", "type");
    goto done;
  }
  struct typerec *r = t->rec;
  PyTypeObject *type = type_here(r); /* made where it is made: never handed elsewhere */
  if (!type) {
    rc = not_here(h, "pyhost_object_new", r);
    goto done;
  }
  pyhost_value *v = pyhost__value_new(PYHOST_KIND_OBJECT);
  if (!v || !(v->type_name = pyhost__strdup(r->tp_name))) {
    pyhost_value_free(v);
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory creating a %s", r->tp_name);
    goto done;
  }
  hostobj *o = new_instance(r, type);
  if (!o) {
    pyhost_value_free(v);
    rc = pyhost__take_exception(h, "creating the instance failed");
    goto done;
  }
  if (!r->payload_size) o->payload = payload;
  else if (payload) memcpy(o->payload, payload, r->payload_size);
  o->valid = 1;
  v->u.obj = (PyObject *)o;
  *obj = v;
done:
  pyhost__leave(h, gil);
  return rc;
}

/* The instance behind obj when it is one of t; NULL with the message set. */
static hostobj *instance_of(pyhost *h, const pyhost_value *obj, pyhost_type *t, const char *fn, int *rc) {
  if (!obj) {
    *rc = pyhost__set_error(h, PYHOST_MISUSE, "%s: obj is NULL", fn);
    return NULL;
  }
  if (!type_live(t)) {
    *rc = pyhost__tag_refused(h, t, fn, "type");
    return NULL;
  }
  if (obj->kind != PYHOST_KIND_OBJECT || !obj->u.obj || !is_instance(obj->u.obj, t->rec)) {
    *rc = PYHOST_TYPE;
    if (pyhost__handle_live(h))
      pyhost__set_error(h, PYHOST_TYPE, "expected %s, got %s", t->rec->tp_name,
                        pyhost_value_type_name(obj));
    return NULL;
  }
  return (hostobj *)obj->u.obj;
}

int pyhost_object_payload(pyhost *h, const pyhost_value *obj, pyhost_type *t, void **payload) {
  int rc = PYHOST_OK;
  if (payload) *payload = NULL;
  /* the instance died with the interpreter: finalize answers MISUSE to later calls */
  if (!pyhost__python_running()) {
    if (pyhost__handle_live(h))
      pyhost__set_error(h, PYHOST_MISUSE,
                        "pyhost_object_payload: Python was finalized (or is being finalized); "
                        "its instances are gone");
    return PYHOST_MISUSE;
  }
  hostobj *o = instance_of(h, obj, t, "pyhost_object_payload", &rc);
  if (!o) return rc;
  if (!o->valid) {
    if (pyhost__handle_live(h))
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
  size_t views = o && o->valid ? pyhost__type_exporter_views(&t->rec->exporter, o->payload) : 0;
  if (views) {
    rc = pyhost__set_error(h, PYHOST_BUSY,
                           "pyhost_object_invalidate: Python holds %zu buffer view%s of the %s "
                           "object's payload", views, views == 1 ? "" : "s", t->rec->tp_name);
  } else if (o) {
    o->valid = 0;
    o->payload = NULL;
  }
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_object_exports(pyhost *h, const pyhost_value *obj, pyhost_type *t, size_t *exports) {
  if (exports) *exports = 0;
  if (!exports) return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_object_exports: exports is NULL");
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  hostobj *o = instance_of(h, obj, t, "pyhost_object_exports", &rc);
  if (o && o->valid) *exports = pyhost__type_exporter_views(&t->rec->exporter, o->payload);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_payload_exports(pyhost *h, pyhost_type *t, const void *payload, size_t *exports) {
  if (exports) *exports = 0;
  if (!exports) return pyhost__set_error(h, PYHOST_MISUSE, "pyhost_payload_exports: exports is NULL");
  if (!type_live(t)) return pyhost__tag_refused(h, t, "pyhost_payload_exports", "type");
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  *exports = pyhost__type_exporter_views(&t->rec->exporter, payload);
  pyhost__leave(h, gil);
  return rc;
}

/* ---- host types in a plugin's sub-interpreter ---- */

static const char *hostobj_elsewhere(PyObject *o);

/* The record of the host type named modname.name, or NULL. */
static struct typerec *named_record(const char *modname, const char *name) {
  size_t ml = strlen(modname);
  for (size_t i = 0; i < pyhost__bridge.by_type_cap; i++) {
    const struct pyhost__type_slot *e = &pyhost__bridge.by_type[i];
    if (e->type && e->type == e->rec->type && !strncmp(e->rec->tp_name, modname, ml) &&
        e->rec->tp_name[ml] == '.' && !strcmp(e->rec->tp_name + ml + 1, name))
      return e->rec;
  }
  return NULL;
}

PyObject *pyhost__hosttype_here(PyObject *module, const char *modname, const char *name) {
  struct pyhost__istate *is = pyhost__istate();
  struct typerec *t = named_record(modname, name);
  if (!t) {
    PY.PyErr_Format(*PY.PyExc_RuntimeError, "%s.%s is not a host type of the host's", modname,
                    name);
    return NULL;
  }
  PyTypeObject *type = type_here(t);
  if (type) { /* made by an earlier sync: its instances live on */
    PY.Py_IncRef((PyObject *)type);
    return (PyObject *)type;
  }
  struct pyhost__type_here *x = pyhost__calloc(1, sizeof *x);
  if (!x || index_reserve() < 0) {
    pyhost__free(x);
    return PY.PyErr_NoMemory();
  }
  if (internal_types(is) < 0 || !(type = make_type(t, module))) {
    pyhost__free(x);
    return NULL;
  }
  index_put(pyhost__bridge.by_type, pyhost__bridge.by_type_cap, type, t);
  pyhost__bridge.by_type_n++;
  pyhost__bridge.hostobj_elsewhere = hostobj_elsewhere; /* instances may stray now */
  x->rec = t;
  x->type = type;
  x->next = is->types;
  is->types = x;
  if (add_methods(t, type, is) < 0) return NULL; /* x keeps it: dropped as the rest */
  PY.Py_IncRef((PyObject *)type);
  return (PyObject *)type;
}

void pyhost__hosttypes_drop(struct pyhost__istate *is) {
  while (is->types) {
    struct pyhost__type_here *x = is->types;
    is->types = x->next;
    index_remove(x->type);
    if (pyhost__bridge.fast_type == x->type) {
      pyhost__bridge.fast_type = NULL;
      pyhost__bridge.fast_rec = NULL;
    }
    PY.Py_DecRef((PyObject *)x->type);
    pyhost__free(x);
  }
  PyTypeObject *d = is->descr_type, *b = is->bound_type;
  is->descr_type = is->bound_type = NULL;
  PY.Py_DecRef((PyObject *)d);
  PY.Py_DecRef((PyObject *)b);
}

static const char *hostobj_elsewhere(PyObject *o) {
  struct typerec *t = record_of(Py_TYPE(o));
  if (!t) return NULL; /* no host type's */
  PyTypeObject *here = type_here(t);
  if (here && (Py_TYPE(o) == here || PY.PyType_IsSubtype(Py_TYPE(o), here))) return NULL;
  return t->tp_name;
}
