/* registries.h: everything the bridge keeps for the whole process, in one object.
 *
 * The runtime's process state is pyhost__process (core.h); the bridge owns its own:
 * the records of host functions and host types, the trampolines of typed methods,
 * pyhost_eval's compiled-code cache and the plugin loader's module.  Finalize never
 * names them: each file of the bridge adds its teardown hook (runtime.h; the hooks are
 * in this object too) the first time it keeps something, as libuv's loop closes
 * handles it never includes, so the runtime reaches this object only through them.
 * Every field is read and written with the GIL held (or, after Py_FinalizeEx, by the
 * one thread that finalized), save the atomic ones and the process isolation level's
 * state, which has a lock of its own.
 */
#ifndef PYHOST_REGISTRIES_H
#define PYHOST_REGISTRIES_H

#include "runtime.h" /* first: Python.h must precede system headers */

struct hostfn;
struct pyhost_module;
struct pyhost__procs;
struct pyhost__pi;
struct typerec;
struct methrec;
struct pyhost_buffer;
struct pyhost__lent_slot;
struct pyhost__type_here;

/* One entry of the host types' table (hosttype.c): a type object and its record. */
struct pyhost__type_slot {
  PyTypeObject *type; /* NULL: a free slot */
  struct typerec *rec;
};

#define PYHOST__TRAMPOLINES 512 /* typed methods made CPython's own (hosttype.c) */
#define PYHOST__EVAL_CACHE_SIZE 64 /* code objects pyhost_eval keeps (eval.c) */

/* One cached code object, keyed by its source text (eval.c). */
struct pyhost__eval_entry {
  char *src;                 /* pyhost__malloc'd copy; NULL: free slot */
  size_t len;
  size_t hash;
  unsigned long last_use;
  PyObject *code;            /* strong reference */
};

/* What the bridge keeps for one interpreter: an object of one interpreter never serves
 * another (a heap type, a module, a code object, a namespace belong to the interpreter
 * that made them).  The main interpreter's is pyhost__bridge.main; a sub-interpreter's
 * is part of its plugin's record (plugin_interp.c), found through the runtime's record
 * of the interpreter (pyhost__sub_data).  pyhost__istate() is the current one. */
struct pyhost__istate {
  PyTypeObject *fnself_type;       /* pyhost.function_data (hostfn.c) */
  PyTypeObject *hostmem_type;      /* pyhost.HostMemory, 3.11+ (buffer_host.c) */
  PyObject *hostmem_spare;         /* a released loan's exporter Python never reached, for
                                    * the next loan here (buffer_host.c), strong, or NULL */
  /* the host types made in this interpreter (hosttype.c): the method descriptor and
   * bound method types, and in a sub-interpreter each host type's own type object there
   * (the main interpreter's are their records' own), strong */
  PyTypeObject *descr_type, *bound_type; /* pyhost.method, pyhost.bound_method */
  struct pyhost__type_here *types;
  /* pyhost_eval's cache of the last distinct expressions, least recently used out
   * (eval.c) */
  struct pyhost__eval_entry eval_cache[PYHOST__EVAL_CACHE_SIZE];
  unsigned long eval_clock, eval_hits, eval_misses;
  /* the plugin loader's module, strong (plugin.c) */
  PyObject *plugin_loader;
  /* the shared-level plugins whose dependencies' environment is on this interpreter's
   * sys.path, newest first, linked through their handles (plugin.c; under the GIL) */
  struct pyhost_plugin *shared_deps;
  /* where pyhost_exec, _eval and name look-ups run: the main interpreter's is the
   * handle's (pyhost.c); a sub-interpreter's is its own __main__'s, strong */
  PyObject *main_dict;
};

struct pyhost__bridge {
  /* host functions (hostfn.c) */
  struct hostfn *hostfns;          /* every host function's record */
  struct pyhost_module *modules;   /* every live host module, in the order made */
  /* changes whenever a host module is made or freed, or gains or loses a function,
   * value, exception or type: a plugin's worker process syncs its copy then
   * (plugin_proc.c).  Atomic: read without the GIL. */
  _Atomic unsigned long modules_gen;
  /* host types (hosttype.c) */
  /* every host type object's record, the main interpreter's and each sub-interpreter's
   * (one record serves a type in every interpreter) */
  struct pyhost__type_slot *by_type;
  size_t by_type_cap, by_type_n;
  struct pyhost__type_slot by_type_none[1]; /* by_type before the first type: one free slot */
  /* With the GIL: the type's name when o is an instance of a host type made in another
   * interpreter than the current one (it must not enter this one), else NULL; set by
   * hosttype.c once a sub-interpreter has host types (convert.c asks it then) */
  const char *(*hostobj_elsewhere)(PyObject *o);
  const PyTypeObject *fast_type;   /* the last type `T()` made fast */
  struct typerec *fast_rec;        /* and its record */
  /* the typed method behind each trampoline in use, and how many are; never reused:
   * a type's record lives until exit */
  struct methrec *tramp_rec[PYHOST__TRAMPOLINES];
  size_t tramp_used;
  /* the main interpreter's objects (main_dict unused: the handle has it) */
  struct pyhost__istate main;
  /* the process isolation level's state (plugin_proc.c): made by the first plugin
   * loaded at that level, with its own lock (it is used without the GIL) */
  struct pyhost__procs *procs;
  /* the interpreter level's plugins whose sub-interpreter lives (plugin_interp.c's
   * struct pyhost__pi), which finalize ends */
  struct pyhost__pi *interps;
  /* in pyhost's worker program (worker.c): an interrupt is wanted for the call running
   * there; read in a signal handler, so atomic */
  _Atomic int worker_interrupt;
  /* finalize's hooks for all of the above, each added by its file the first time it
   * keeps something: drop the cache and the loader before Py_FinalizeEx, close every
   * host function as finalize begins, free the orphaned records after it; end every
   * plugin's worker process as finalize begins, drop the level's kept references, and
   * pass pyhost_interrupt on to the calls in workers */
  struct pyhost__teardown eval_cache_hook, plugin_loader_hook;
  struct pyhost__teardown hostfn_close_hook, hostfn_orphans_hook;
  struct pyhost__teardown procs_close_hook, procs_drop_hook, procs_interrupt_hook;
  struct pyhost__teardown interps_hook;
  /* host memory lent to Python (buffer_host.c): every loan not yet freed, and the
   * exporter type of 3.11+ is per interpreter (pyhost__istate); after Py_FinalizeEx the
   * hook frees what Python never handed back */
  struct pyhost_buffer *buffers;
  struct pyhost__teardown buffers_drop_hook, buffers_after_hook;
  /* the structs of callbacks' borrowed views not in use (buffer_view.c): reused, never
   * freed while Python runs, so a pointer a callback kept reads pyhost's memory; the
   * hook frees them after Py_FinalizeEx */
  struct pyhost__lent_slot *lent_free;
  struct pyhost__teardown lent_hook;
};
extern PYHOST__HIDDEN struct pyhost__bridge pyhost__bridge;

/* With the GIL: the current interpreter's state.  One load while no sub-interpreter
 * lives. */
static inline struct pyhost__istate *pyhost__istate(void) {
  struct pyhost__sub *s = pyhost__process.subs ? pyhost__sub_current() : NULL;
  return s ? (struct pyhost__istate *)pyhost__sub_data(s) : &pyhost__bridge.main;
}

/* With the GIL: the namespace pyhost_exec and pyhost_eval run in, borrowed. */
static inline PyObject *pyhost__main_dict(pyhost *h) {
  struct pyhost__istate *is = pyhost__istate();
  return is == &pyhost__bridge.main ? h->main_dict : is->main_dict;
}

#endif
