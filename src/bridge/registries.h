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
struct typerec;
struct methrec;
struct pyhost_buffer;

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

struct pyhost__bridge {
  /* host functions (hostfn.c) */
  struct hostfn *hostfns;          /* every host function's record */
  struct pyhost_module *modules;   /* every live host module, in the order made */
  /* changes whenever a host module is made or freed, or gains or loses a function,
   * value, exception or type: a plugin's worker process syncs its copy then
   * (plugin_proc.c).  Atomic: read without the GIL. */
  _Atomic unsigned long modules_gen;
  PyTypeObject *fnself_type;       /* pyhost.function_data */
  /* host types (hosttype.c) */
  struct typerec **by_type;        /* every host type's record by type */
  size_t by_type_cap, by_type_n;
  struct typerec *by_type_none[1]; /* by_type before the first type: one free slot */
  const PyTypeObject *fast_type;   /* the last type `T()` made fast */
  struct typerec *fast_rec;        /* and its record */
  PyTypeObject *descr_type, *bound_type; /* pyhost.method, pyhost.bound_method */
  /* the typed method behind each trampoline in use, and how many are; never reused:
   * a type's record lives until exit */
  struct methrec *tramp_rec[PYHOST__TRAMPOLINES];
  size_t tramp_used;
  /* pyhost_eval's cache of the last distinct expressions, least recently used out
   * (eval.c) */
  struct pyhost__eval_entry eval_cache[PYHOST__EVAL_CACHE_SIZE];
  unsigned long eval_clock, eval_hits, eval_misses;
  /* the plugin loader's module, strong (plugin.c) */
  PyObject *plugin_loader;
  /* the shared-level plugins whose dependencies' environment is on sys.path, newest
   * first, linked through their handles (plugin.c; under the GIL) */
  struct pyhost_plugin *shared_deps;
  /* the process isolation level's state (plugin_proc.c): made by the first plugin
   * loaded at that level, with its own lock (it is used without the GIL) */
  struct pyhost__procs *procs;
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
  /* host memory lent to Python (buffer_host.c): every loan not yet freed, and the
   * exporter type of 3.11+ (pyhost.HostMemory); after Py_FinalizeEx the hook frees
   * what Python never handed back */
  struct pyhost_buffer *buffers;
  PyTypeObject *hostmem_type;
  struct pyhost__teardown buffers_drop_hook, buffers_after_hook;
};
extern PYHOST__HIDDEN struct pyhost__bridge pyhost__bridge;

#endif
