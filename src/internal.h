/* internal.h: what pyhost's source files share: the handle, the config, the GIL
 * entry/exit pair, messages and conversions.  Never installed. */
#ifndef PYHOST_INTERNAL_H
#define PYHOST_INTERNAL_H

#include "pyapi.h" /* first: Python.h must precede system headers */
#include "pyhost.h"
#include "alloc.h"
#include "strbuf.h"

#include <stdatomic.h>

#define PYHOST__PATH_MAX 4096

/* For the per-call paths: the rare branches out of line (their registers and stack do
 * not burden the common one), the common one inlined whole.  NOINLINE for a rare path
 * taken as a tail call (a cold one is not: GCC moves its call into the cold section). */
#if defined(__GNUC__)
#  define PYHOST__COLD __attribute__((noinline, cold))
#  define PYHOST__NOINLINE __attribute__((noinline))
#  define PYHOST__HOT_INLINE inline __attribute__((always_inline))
#else
#  define PYHOST__COLD
#  define PYHOST__NOINLINE
#  define PYHOST__HOT_INLINE inline
#endif

struct pyhost_config {
  char *library, *home, *program_name;
  char **sys_path;
  size_t n_sys_path;
  char **argv;
  int argc;
  unsigned long min_python;
  unsigned flags;
  /* discovery and version policy (discover.c) */
  char *interpreter;
  unsigned long max_python, python_minor;
  int prefer_newest, allow_debug, no_subprocess, isolated;
};

int pyhost__config_copy(pyhost_config *dst, const pyhost_config *src);
void pyhost__config_clear(pyhost_config *c);

enum pyhost__state {
  PYHOST__FAILED = 1,   /* init failed; only errmsg and free make sense */
  PYHOST__RUNNING,      /* Python runs; every call may go */
  PYHOST__FINALIZED     /* Python was finalized through this handle */
};

/* A per-thread message slot.  Slots are pushed at the head of a list and never moved
 * or removed until the handle is freed, so readers need no lock. */
struct pyhost__msg {
  const void *thread;        /* address of a _Thread_local: unique per live thread */
  struct pyhost__msg *next;
  char *text;
  size_t cap;
};

struct pyhost {
  unsigned magic;            /* PYHOST__MAGIC while the memory is a live handle */
  _Atomic int state;         /* enum pyhost__state */
  struct pyhost_config cfg;  /* deep copy of what init was given */
  void *lib;                 /* the library handle; never closed once Python ran */
  char library_path[PYHOST__PATH_MAX];
  char version_text[256];
  char home[PYHOST__PATH_MAX];
  wchar_t *w_home, *w_program; /* handed to Py_Set*, kept alive until pyhost_free */
  unsigned long hexversion;
  const void *init_thread;     /* the thread that called pyhost_init (pyhost.c) */
  int exit_code;
  _Atomic(struct pyhost__msg *) msgs;
  /* pyhost's namespace: the __main__ module of init and its dict, strong references
   * (Python code may remove or replace sys.modules['__main__'] at any time; pyhost
   * keeps running code in this one).  Dropped by pyhost_finalize before Py_FinalizeEx. */
  PyObject *main_module, *main_dict;
};

#define PYHOST__MAGIC 0x70794854u /* "pyHT" */

/* ---- messages (msg.c) ---- */
/* Sets this thread's message on h (printf-style); returns status for tail calls. */
int pyhost__set_error(const pyhost *h, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;
/* Sets this thread's message on h to text of len bytes. */
void pyhost__set_message(const pyhost *h, const char *text, size_t len);
/* Empties this thread's message ("not an error"). */
void pyhost__clear_message(const pyhost *h);
void pyhost__free_messages(pyhost *h);

/* ---- per-thread state (gil.c) ---- */
/* One struct, so that the hot path computes one thread-local address. */
struct pyhost__thread {
  /* the handle of this thread's pyhost_gil_enter scope, or PYHOST__NO_SCOPE: never NULL,
   * so that scope_h == h also says h is not NULL */
  const pyhost *scope_h;
  unsigned long depth;     /* the scope's nesting count; 0 when no scope is open */
  PyGILState_STATE state;  /* what the outermost PyGILState_Ensure returned */
  unsigned long messages;  /* this thread's non-empty message slots (msg.c); 0 lets a call
                            * skip the reset.  Slots of a freed handle still count: that
                            * costs a look-up, never a stale message. */
  struct pyhost__frame *frame; /* the innermost host callback running (bridge.h) */
  int interrupted; /* pyhost_interrupt sent this thread an asynchronous exception during
                    * its current outermost call (inflight.c; GIL-protected) */
};
extern PYHOST__HIDDEN _Thread_local struct pyhost__thread pyhost__thread;
extern PYHOST__HIDDEN const char pyhost__no_scope;
#define PYHOST__NO_SCOPE ((const pyhost *)(const void *)&pyhost__no_scope)

/* ---- calls into Python (pyhost.c) ---- */
/* What pyhost__enter stores when this thread's pyhost_gil_enter scope already holds
 * the GIL: pyhost__leave then releases nothing.  Neither PyGILState value. */
#define PYHOST__GIL_SCOPED ((PyGILState_STATE)2)
/* pyhost__enter outside a scope: checks h, counts the call in flight, takes the GIL. */
int pyhost__enter_slow(pyhost *h, PyGILState_STATE *gil);
void pyhost__inflight_end(PyGILState_STATE gil);

/* 1 when this thread holds a pyhost_gil_enter scope on h. */
static inline int pyhost__gil_scoped(const pyhost *h) {
  return pyhost__thread.scope_h == h;
}

/* Checks h and takes the GIL.  Returns PYHOST_OK (then call pyhost__leave) or MISUSE
 * with the message set.  Inside a scope on h this is the whole cost of a call's
 * entry: the scope's handle is h (a scope is only opened on a live handle and closed
 * before it is freed) and h still runs, so only the state is read. */
static inline int pyhost__enter(pyhost *h, PyGILState_STATE *gil) {
  if (pyhost__gil_scoped(h) && atomic_load(&h->state) == PYHOST__RUNNING) {
    *gil = PYHOST__GIL_SCOPED; /* counted in flight by the scope's enter */
    if (pyhost__thread.messages) pyhost__clear_message(h);
    return PYHOST_OK;
  }
  return pyhost__enter_slow(h, gil);
}

/* 1 when a call on h costs nothing to enter or leave: inside this thread's scope on h,
 * h running, no message to reset.  The hot paths test it first and go through
 * pyhost__enter/leave otherwise. */
static inline int pyhost__entry_is_free(const pyhost *h) {
  return pyhost__gil_scoped(h) && !pyhost__thread.messages &&
         atomic_load_explicit(&h->state, memory_order_relaxed) == PYHOST__RUNNING;
}

/* The end of a call made inside this thread's scope that an interrupt reached
 * (inflight.c): a late interrupt is dropped once no outer call is left to stop. */
void pyhost__inflight_scoped_end(void);

static inline void pyhost__leave(pyhost *h, PyGILState_STATE gil) {
  (void)h;
  if (gil != PYHOST__GIL_SCOPED) pyhost__inflight_end(gil);
  else if (pyhost__thread.interrupted) pyhost__inflight_scoped_end();
}
/* The process's Python (pyhost.c): CPython starts once per process, so at most one
 * handle runs it, and it is RUNNING exactly while that handle is (finalize moves it to
 * DONE as it begins). */
enum { PYHOST__PROCESS_IDLE, PYHOST__PROCESS_STARTING, PYHOST__PROCESS_RUNNING, PYHOST__PROCESS_DONE };
extern PYHOST__HIDDEN _Atomic int pyhost__process_state;
/* 1 while a Python started by pyhost runs in this process: one load of a global, which
 * is what the callback entries test instead of their record's handle. */
static inline int pyhost__python_running(void) {
  return atomic_load_explicit(&pyhost__process_state, memory_order_relaxed) ==
         PYHOST__PROCESS_RUNNING;
}
/* Test seam: the library's symbol look-up answers NULL for name (NULL: off). */
void pyhost__fail_symbol(const char *name);

/* ---- calls in flight and interrupts (inflight.c) ---- */
/* With the GIL, once Python runs: creates pyhost.Interrupted and lets calls in.  0/-1
 * (Python exception set). */
int pyhost__inflight_open(void);
/* Counts a call and takes the GIL: 0, or -1 (nothing held) once finalize has begun.
 * pyhost__enter's core; value_free uses it directly (it has no handle). */
int pyhost__inflight_begin(PyGILState_STATE *gil);
/* For freeing a handle a call may be using (a callable, a plugin, a module) without
 * racing finalize: 1 with the GIL held (end with pyhost__inflight_free_end) while
 * Python takes calls or this thread is inside one; else 0, once every call in flight
 * has returned (it waits for them): then only the handle's memory may be freed. */
int pyhost__inflight_free_begin(PyGILState_STATE *gil);
void pyhost__inflight_free_end(PyGILState_STATE gil);
/* 1 in a child forked while other threads were inside pyhost calls: Python no longer
 * takes calls there, and finalize leaves it alone (docs/threads.md). */
int pyhost__inflight_forked_amid_calls(void);
/* How many pyhost calls this thread is inside (0 outside any). */
int pyhost__inflight_depth(void);
/* With the GIL: refuses new calls and interrupts the running ones; returns how many. */
int pyhost__inflight_close(void);
/* With the GIL: on (1) / off (0) around pyhost's own Python work on this thread
 * (formatting an exception), which pyhost_interrupt then leaves alone. */
void pyhost__inflight_protect(int on);
/* Without the GIL: waits until no call is in flight. */
void pyhost__inflight_drain(void);
/* With the GIL, before Py_FinalizeEx: drops pyhost.Interrupted. */
void pyhost__inflight_forget(void);
/* 1 when type is pyhost.Interrupted (what pyhost_interrupt raises). */
int pyhost__is_interrupt(PyObject *type);

/* ---- the compiled-expression cache (eval.c) ---- */
/* Drops every cached code object; called with the GIL before Py_FinalizeEx. */
void pyhost__eval_cache_clear(void);
/* Cache hits and misses since the last clear (for white-box tests). */
void pyhost__eval_cache_stats(unsigned long *hits, unsigned long *misses);

/* ---- plugins (plugin.c) ---- */
/* Drops the plugin loader's module; called with the GIL before Py_FinalizeEx. */
void pyhost__plugin_loader_clear(void);

/* ---- host functions (hostfn.c) ---- */
/* After Py_FinalizeEx: frees the records of unregistered host functions whose function
 * objects Python never freed (no self object will be freed any more). */
void pyhost__hostfn_free_orphans(void);
/* With the GIL as finalize begins: every host function refuses from its next call. */
void pyhost__hostfn_close_all(void);

/* ---- exceptions (error.c) ---- */
/* Takes the pending exception and turns it into h's message.  Returns PYHOST_EXIT for
 * SystemExit (exit code stored in h), PYHOST_NOMEM for MemoryError raised by pyhost
 * itself, PYHOST_PYEXC otherwise.  `context` prefixes the message when not NULL. */
int pyhost__take_exception(pyhost *h, const char *context);
/* The type's display name ("ValueError", "datetime.date") into out. */
void pyhost__type_name(PyObject *type, char *out, size_t cap);

/* Inside a host callback on this thread (callback.c), keeps a new reference to the
 * exception being taken so the callback's Python caller can get it back; else no-op. */
void pyhost__callback_keep(PyObject *type, PyObject *value, PyObject *tb);

/* ---- conversions (convert.c) ---- */
/* new reference, or NULL with a Python exception set */
PyObject *pyhost__to_python(pyhost *h, const pyhost_value *v);
/* own result, or NULL with a Python exception set */
pyhost_value *pyhost__from_python(pyhost *h, PyObject *o);
/* UTF-8 text of a str object, copied into a pyhost__malloc'd buffer (own). */
char *pyhost__utf8_copy(PyObject *str, size_t *len);

/* ---- C scalars (scalar.c) ---- */
/* Argument index of a call named fn, as a new reference; NULL with a Python exception
 * set, or with PYHOST_MISUSE in h's message (an unknown kind, a NULL pointer) and no
 * exception. */
PyObject *pyhost__arg_to_python(pyhost *h, const pyhost_arg *a, size_t index, const char *fn);
/* The result o of a call named fn read as an int, float or bool under pyhost_value's
 * rules: PYHOST_OK, or PYHOST_TYPE / PYHOST_RANGE / PYHOST_PYEXC with h's message set. */
int pyhost__read_int(pyhost *h, PyObject *o, const char *fn, int64_t *out);
int pyhost__read_float(pyhost *h, PyObject *o, const char *fn, double *out);
int pyhost__read_bool(pyhost *h, PyObject *o, const char *fn, int *out);

/* ---- values (value.c) ---- */
struct pyhost_value {
  unsigned char kind;    /* pyhost_kind */
  unsigned char big;     /* an int beyond 64 bits: its decimal digits are in u.s */
  unsigned char in_slab; /* 1: the struct lives in its parent's slab, never freed alone;
                          * 2: a shared constant (pyhost__value_constant), never freed
                          * and never written */
  union {
    int b;
    int64_t i;
    double d;
    struct { char *p; size_t len; } s;            /* str, bytes, big int */
    struct {
      pyhost_value **items;
      size_t n, cap;
      pyhost_value *slab; /* one block for the items converted from Python, or NULL */
    } seq;                /* list, tuple; dict: 2n */
    PyObject *obj;                                 /* strong reference */
  } u;
  char *type_name;       /* Python type name when it differs from the kind's */
  char *repr;            /* cache for pyhost_value_repr */
};
pyhost_value *pyhost__value_new(pyhost_kind kind);
/* The shared None, False or True (kind NONE or BOOL, b 0/1) that conversions hand out:
 * an "own" result the caller frees as any other, at no cost. */
pyhost_value *pyhost__value_constant(pyhost_kind kind, int b);
/* Adds to a list/tuple/dict's item array without kind checks; 0 or -1 (no memory). */
int pyhost__value_push(pyhost_value *seq, pyhost_value *item);

/* ---- home and program name (home.c) ---- */
/* Decides the home and program name for the library at lib_path (real path) and
 * checks that a standard library is there.  Fills h->home, h->w_home, h->w_program. */
int pyhost__choose_home(pyhost *h, unsigned runtime);
/* The nearest ancestor of library (a real path) with a standard library for runtime
 * (PYHOST__V form) into home: 1, or 0 with the places looked at in tried. */
int pyhost__find_home(const char *library, unsigned runtime, char *home, size_t cap, char *tried,
                      size_t tcap);

/* ---- UTF-8 to wchar_t (wide.c) ---- */
/* own result; bytes that are not UTF-8 become U+DC80..U+DCFF (surrogateescape), as
 * Python's own decoding of file names does. */
wchar_t *pyhost__widen(const char *s);

/* ---- discovery (discover.c) ---- */
/* Chooses a library when none was configured.  Writes its path into out and a
 * description of where it came from into origin.  PYHOST_OK or NOTFOUND with the
 * candidates tried in the message. */
int pyhost__discover(pyhost *h, char *out, size_t cap, char *origin, size_t origin_cap);
/* The policy checks a configured library gets too (max, exact minor): PYHOST_OK or
 * PYHOST_VERSION with the message set. */
int pyhost__check_policy(pyhost *h, const char *path, unsigned long hexversion);

/* ---- isolated init (isolate.c) ---- */
struct pyhost__env_saved;
/* Before Py_InitializeEx: hides PYTHON* variables (see isolate.c).  PYHOST_OK/NOMEM. */
int pyhost__isolate_begin(pyhost *h, struct pyhost__env_saved **saved);
/* After it, with the GIL: tidies os.environ and site, restores the environment. */
int pyhost__isolate_finish(pyhost *h, struct pyhost__env_saved *saved);

#endif
