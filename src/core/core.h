/* core.h: the handle and the state every layer above shares: the config, the handle's
 * per-thread messages, this thread's call state and the process's Python state.
 *
 * The core is the floor of the runtime (docs/design.md): discovery reports through a
 * handle's messages, the runtime and the bridge run calls on it.  It uses the loader
 * (Python's types) and the platform.  Never installed.
 */
#ifndef PYHOST_CORE_H
#define PYHOST_CORE_H

#include "loader.h" /* first: Python.h must precede system headers */
#include "pyhost.h"
#include "platform.h"

#include <stdatomic.h>

#define PYHOST__PATH_MAX 4096

/* Invariants that comments state, checked as Lua's lua_assert and SQLite's assert
 * wherever tests run (every build but Release and MinSizeRel: CMake's PYHOST_ASSERTS
 * keeps NDEBUG unset in RelWithDebInfo); never a cost in a release build. */
#ifndef NDEBUG
#  include <assert.h>
#  define PYHOST__ASSERT(cond) assert(cond)
#else
#  define PYHOST__ASSERT(cond) ((void)0)
#endif

/* API checks, as Lua's api_check: a rule of a public entry point (include/pyhost.h)
 * that the host broke where no status can say so, and going on would read freed
 * memory or corrupt state.  With asserts on, pyhost__api_misuse reports
 * "pyhost: API misuse in <entry>: <rule>" on stderr and aborts; in a release build
 * the check costs nothing and the entry does what it documents (or its best).  Misuse
 * the header gives a status for (a NULL or freed handle, a finalized Python) is not
 * checked here: it answers PYHOST_MISUSE in every build, a result hosts and tests rely
 * on. */
#ifndef NDEBUG
#  define PYHOST__API_CHECK(cond, entry, rule)                                   \
    do {                                                                         \
      if (!(cond)) pyhost__api_misuse(entry, rule);                              \
    } while (0)
#else
#  define PYHOST__API_CHECK(cond, entry, rule) ((void)0)
#endif

/* For the per-call paths: the rare branches out of line (their registers and stack do
 * not burden the common one), the common one inlined whole.  NOINLINE for a rare path
 * taken as a tail call (a cold one is not: GCC moves its call into the cold section). */
#if defined(__GNUC__)
#  define PYHOST__COLD __attribute__((noinline, cold))
#  define PYHOST__NOINLINE __attribute__((noinline))
#  define PYHOST__HOT_INLINE inline __attribute__((always_inline))
#  define PYHOST__UNREACHABLE() __builtin_unreachable() /* a case the callers exclude */
#  define PYHOST__FALLTHROUGH __attribute__((fallthrough))
#else
#  define PYHOST__COLD
#  define PYHOST__NOINLINE
#  define PYHOST__HOT_INLINE inline
#  define PYHOST__UNREACHABLE() ((void)0)
#  define PYHOST__FALLTHROUGH ((void)0)
#endif

struct pyhost_config {
  char *library, *home, *program_name;
  char *executable; /* sys.executable, a command that runs this Python (pyhost_config_set_executable) */
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

/* ---- a Python exception as data (excdata.c): what pyhost_errtype, pyhost_errtext and
 * pyhost_errframe read ---- */
/* One traceback entry. */
struct pyhost__errframe {
  const char *file, *function;
  int line;
};
/* One exception, in one allocation: block holds the frames, then every string the
 * fields point to. */
struct pyhost__excdata {
  char *block;               /* own; NULL: no exception behind the message */
  const char *type, *text;
  const struct pyhost__errframe *frames;
  size_t nframes;
};
/* Gathering one: the strings are appended to one buffer and named by their offsets
 * until pyhost__excbuild_finish lays the block out.  Out of memory along the way, the
 * build fails as a whole (failed), and finish gives no data. */
struct pyhost__excbuild_frame {
  size_t file, function;
  int line;
};
struct pyhost__excbuild {
  char *strings;
  size_t len, cap;
  struct pyhost__excbuild_frame *frames;
  size_t nframes, frames_cap;
  size_t type, text; /* offsets */
  int failed;
};
void pyhost__excbuild_init(struct pyhost__excbuild *b);
/* Appends len bytes of s and a NUL; returns their offset (0 after a failure: the empty
 * string every build starts with). */
size_t pyhost__excbuild_str(struct pyhost__excbuild *b, const char *s, size_t len);
/* The same for a message text: a text longer than PYHOST__MSG_MAX keeps its start and
 * its end, as messages do. */
size_t pyhost__excbuild_text(struct pyhost__excbuild *b, const char *s, size_t len);
void pyhost__excbuild_frame(struct pyhost__excbuild *b, size_t file, size_t function, int line);
/* Lays out the data into *d (own; d->block NULL after a failure) and frees the build. */
void pyhost__excbuild_finish(struct pyhost__excbuild *b, struct pyhost__excdata *d);
void pyhost__excdata_free(struct pyhost__excdata *d);

/* A per-thread message slot.  Slots are pushed at the head of a list and never moved
 * or removed until the handle is freed, so readers need no lock. */
struct pyhost__msg {
  const void *thread;        /* address of a _Thread_local: unique per live thread */
  unsigned long number;      /* which thread of all that had that address (msg.c) */
  struct pyhost__msg *next;
  char *text;
  size_t cap;
  struct pyhost__excdata exc; /* the exception behind text, only while text is set */
};

struct pyhost {
  _Atomic int state;         /* enum pyhost__state */
  struct pyhost_config cfg;  /* deep copy of what init was given */
  void *lib;                 /* the library handle; never closed once Python ran */
  char library_path[PYHOST__PATH_MAX];
  char version_text[256];
  char home[PYHOST__PATH_MAX];
  wchar_t *w_home, *w_program; /* handed to Py_Set*, kept alive until pyhost_free */
  int no_executable;           /* no python beside the library: sys.executable is "" */
  unsigned long hexversion;
  const void *init_thread;     /* the thread that called pyhost_init (pyhost.c) */
  int exit_code;
  _Atomic(struct pyhost__msg *) msgs;
  /* pyhost's namespace: the __main__ module of init and its dict, strong references
   * (Python code may remove or replace sys.modules['__main__'] at any time; pyhost
   * keeps running code in this one).  Dropped by pyhost_finalize before Py_FinalizeEx. */
  PyObject *main_module, *main_dict;
};

/* ---- live handles (handles.c) ---- */
/* Counts h as live from pyhost_init until pyhost_free: 0, or -1 out of memory. */
int pyhost__handle_add(const pyhost *h);
void pyhost__handle_remove(const pyhost *h);
/* pyhost__handle_live past the first slot. */
PYHOST__COLD int pyhost__handle_live_slow(const pyhost *h);

/* ---- the kind of a handle, and a freed handle's quarantine (handles.c) ----
 * Every handle the bridge hands out (a callable, a plugin, a module, a type, a buffer,
 * plugin options) starts with a tag word naming its kind, set when it is made.  Its
 * free writes PYHOST__TAG_FREED there and gives the block to the quarantine instead of
 * the allocator: the last PYHOST__QUARANTINE freed handles stay pyhost's memory, so a
 * second free or a call on one of them reads a FREED tag from memory that is still
 * ours (valgrind- and ASan-clean) and is refused, and no new handle of any kind can be
 * given that address meanwhile (a stale handle never names a new one).  A pyhost
 * handle goes there too (its liveness is the live list's).  Checking a tag is a load
 * and a compare of a word the entry reads anyway: every build does it. */
enum {
  PYHOST__TAG_FREED = 0x46524545u, /* "FREE" */
  PYHOST__TAG_CALLABLE = 0x70794301u,
  PYHOST__TAG_PLUGIN,
  PYHOST__TAG_MODULE,
  PYHOST__TAG_TYPE,
  PYHOST__TAG_BUFFER,
  PYHOST__TAG_OPTIONS
};
#define PYHOST__QUARANTINE 64
/* 1 when p is a live handle of the kind tag names (reads p's first word: p must be
 * NULL or a handle pyhost made, live or quarantined). */
static inline int pyhost__tagged(const void *p, uint32_t tag) {
  return p && *(const uint32_t *)p == tag;
}
/* Why p is refused as a handle of kind tag (named what, e.g. "plugin"; msg.c): MISUSE with
 * h's message "<fn>: <what> is NULL" or "<fn>: <what> is not a live pyhost_<what>
 * handle (freed already, or a handle of another kind)". */
PYHOST__COLD int pyhost__tag_refused(const pyhost *h, const void *p, const char *fn,
                                     const char *what);
/* Frees the handle block p (its tag first) through the quarantine: its tag becomes
 * FREED now, its memory goes back to the allocator PYHOST__QUARANTINE frees later. */
void pyhost__handle_retire(void *p);

/* ---- messages (msg.c) ---- */
/* Sets this thread's message on h (printf-style); returns status for tail calls.
 * Nothing is set on a NULL or freed handle (pyhost__handle_live). */
int pyhost__set_error(const pyhost *h, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;
/* Sets this thread's message on h to text of len bytes. */
void pyhost__set_message(const pyhost *h, const char *text, size_t len);
/* Attaches the exception behind this thread's message on h, just set (own d: taken
 * in every case). */
void pyhost__set_exception(const pyhost *h, struct pyhost__excdata *d);
/* Empties this thread's message ("not an error"). */
void pyhost__clear_message(const pyhost *h);
void pyhost__free_messages(pyhost *h);

/* ---- per-thread state (state.c) ---- */
/* A thread's record for pyhost_interrupt (runtime/inflight.c): made by the thread's
 * first call, linked on pyhost__process.threads until the thread exits, on the heap
 * (so that no other thread reads a thread-local that is going away); depth > 0 says the
 * thread is inside a call now. */
struct pyhost__call {
  unsigned long ident;  /* PyThread_get_thread_ident(): the id SetAsyncExc matches */
  int depth;            /* nested calls (host function callbacks calling pyhost); GIL */
  struct pyhost__thread *thread; /* its thread's state (the interrupted flag): read only
                                  * while depth > 0, when the thread is alive */
  int protected;        /* inside pyhost's own Python work: not to be interrupted */
  struct pyhost__sub *sub; /* the sub-interpreter it runs in now (runtime/subinterp.c) */
  struct pyhost__call *prev, *next; /* under pyhost__process.threads_lock */
};

struct pyhost__pp;
struct pyhost__sub;
struct pyhost__sub_saved;

/* Everything pyhost keeps per thread, in one struct, so that the hot path computes
 * one thread-local address. */
struct pyhost__thread {
  /* the handle of this thread's pyhost_gil_enter scope, or PYHOST__NO_SCOPE: never NULL,
   * so that scope_h == h also says h is not NULL */
  const pyhost *scope_h;
  unsigned long depth;     /* the scope's nesting count; 0 when no scope is open */
  PyGILState_STATE state;  /* what the outermost PyGILState_Ensure returned */
  unsigned long messages;  /* this thread's non-empty message slots (msg.c); 0 lets a call
                            * skip the reset.  Slots of a freed handle still count: that
                            * costs a look-up, never a stale message. */
  unsigned long number;    /* which thread this is, for its message slots (msg.c); 0 until
                            * its first message */
  struct pyhost__frame *frame; /* the innermost host callback running (runtime.h) */
  unsigned long nesting;   /* entries from Python that pyhost guards (bridge.h), nested */
  int interrupted; /* pyhost_interrupt sent this thread an asynchronous exception during
                    * its current outermost call (inflight.c; GIL-protected) */
  struct pyhost__call *call; /* this thread's record (inflight.c), NULL before its first call */
  int nogil;               /* calls counted in flight without the GIL (inflight.c) */
  /* the process-level plugin whose turn this thread waits for, or NULL; a plugin's
   * turn is owned by a thread's pyhost__thread (bridge/plugin_proc.c: deadlock
   * detection; under that level's monitor) */
  struct pyhost__pp *plugin_waiting_for;
  /* pyhost_thread_attach calls not yet detached, and what the outermost one's
   * PyGILState_Ensure returned (attach.c) */
  unsigned long attached;
  PyGILState_STATE attach_pin;
  /* the sub-interpreter pyhost made current on this thread, whose thread state holds
   * the GIL here, or NULL (runtime/subinterp.c) */
  struct pyhost__sub *sub;
  struct pyhost__sub_saved *sub_chain; /* its entries into sub-interpreters, innermost first */
  /* this thread's number among the threads that entered a sub-interpreter (0: none
   * yet): unlike an address or an OS thread id, never given to another thread */
  unsigned long serial;
  /* pyhost_init's and pyhost_finalize's own holds of the GIL, outside any call (from
   * Py_InitializeEx to the release; from finalize's first take to its end, after
   * Py_FinalizeEx too: the thread that finalized owns what is left) */
  unsigned long gil_own;
};
extern PYHOST__HIDDEN _Thread_local struct pyhost__thread pyhost__thread;
extern PYHOST__HIDDEN const char pyhost__no_scope;
#define PYHOST__NO_SCOPE ((const pyhost *)(const void *)&pyhost__no_scope)

/* ---- the process (state.c) ---- */
/* Everything the layers up to the runtime keep for the whole process, in one object,
 * as Lua's global_State: CPython is process-global (one runtime, started at most
 * once), so is what pyhost keeps about it.  Finalize and the tests reset and inspect
 * this one object.  The bridge keeps its registries (host functions and types, the
 * eval cache, the plugin loader) in one object of its own, pyhost__bridge
 * (bridge/registries.h), which finalize reaches only through the teardown hooks the
 * bridge adds, as libuv keeps its few globals explicit.  Besides these two, pyhost has
 * per-thread state (pyhost__thread, above) and the platform layer's test seams (the
 * allocator's fault injection, the ld.so.conf path), below the core;
 * tests/check_state.py lists every exception with its reason, and consistency.state
 * keeps it so.  The fields after `state` are read and written with the GIL held (or,
 * after Py_FinalizeEx, by the one thread that finalized) unless they say otherwise. */
enum { PYHOST__PROCESS_IDLE, PYHOST__PROCESS_STARTING, PYHOST__PROCESS_RUNNING, PYHOST__PROCESS_DONE };
struct pyhost__teardown;
/* A slot of the live handles' list (handles.c). */
struct pyhost__live {
  _Atomic(const pyhost *) h;  /* NULL (the first slot: PYHOST__NO_SCOPE): free */
  struct pyhost__live *next;  /* set before the slot is published, then constant */
};
struct pyhost__process {
  struct pyapi py;                 /* the table behind PY (filled by pyhost_init) */
  /* The process's Python: RUNNING exactly while the one handle that started it is
   * (finalize moves it to DONE as it begins).  Atomic: read without the GIL. */
  _Atomic int state;               /* PYHOST__PROCESS_* */
  char library[PYHOST__PATH_MAX];  /* the library it was started from (pyhost.c) */
  const char *fail_symbol;         /* test seam: the look-up answers NULL for it */
  /* the live handles (handles.c): the first slot, never freed and read inline, then
   * the others */
  struct pyhost__live live_first;
  _Atomic(struct pyhost__live *) live;
  /* the last freed handles, held back from the allocator (handles.c; read and written
   * without the GIL, by atomic operations only) */
  _Atomic(void *) quarantine[PYHOST__QUARANTINE];
  _Atomic unsigned long quarantine_next;
  /* finalize's hooks for the bridge (runtime/teardown.c), in the order added */
  struct pyhost__teardown *teardown, **teardown_end;
  /* calls in flight (runtime/inflight.c) */
  /* the threads that made a call and have not exited, each once (their records, under
   * threads_lock: a spin lock, held for a few loads and stores, never across a wait) */
  struct pyhost__call *threads;
  atomic_flag threads_lock;
  struct pyhost__thread_exit thread_exit; /* unlists a thread when it exits */
  _Atomic long in_flight;          /* calls counted in, not yet out (read without the GIL) */
  _Atomic int gate_open;           /* 1 while calls may start (read without the GIL) */
  /* a child forked while other threads were inside calls: those threads do not exist
   * there, and one of them may have held the GIL for good (read without the GIL) */
  _Atomic int forked_amid_calls;
  _Atomic int traceback_ready;     /* pyhost_interrupt imported traceback once */
  _Atomic unsigned long threads_numbered; /* threads that had a message (msg.c) */
  PyObject *interrupted_type;      /* pyhost.Interrupted, strong reference */
  /* the live sub-interpreters pyhost made (runtime/subinterp.c), and the numbers it
   * gave threads and sub-interpreters */
  struct pyhost__sub *subs;
  _Atomic unsigned long serials;
};
extern PYHOST__HIDDEN struct pyhost__process pyhost__process;
/* The function table: every call into Python is PY.Name(...). */
#define PY (pyhost__process.py)


/* 1 when h is a live handle (from pyhost_init until pyhost_free); reads the list of
 * live handles only, never *h, so a freed handle (or any other pointer) is answered
 * safely.  A freed handle's address may be handed out again by a later pyhost_init:
 * then it names that new handle.  The first slot, where the running handle usually
 * is (the first handle takes it), is read inline. */
static inline int pyhost__handle_live(const pyhost *h) {
  /* an empty first slot holds PYHOST__NO_SCOPE, never a handle (nor NULL) */
  if (atomic_load_explicit(&pyhost__process.live_first.h, memory_order_acquire) == h) return 1;
  return pyhost__handle_live_slow(h);
}

/* ---- the GIL, as pyhost's own per-thread state knows it ---- */
/* 1 when this thread holds the GIL by pyhost's account: inside a pyhost call (counted
 * by pyhost__inflight_begin; a pyhost_gil_enter scope is one), inside a host callback
 * Python called (its frame), or in init's or finalize's own hold.  Python also holds it
 * where pyhost keeps no record (a tp_dealloc of pyhost's types, a buffer release):
 * code reached only from there does not assert it.  Three loads of this thread's
 * state, asked only by PYHOST__ASSERT_GIL. */
static inline int pyhost__gil_held(void) {
  const struct pyhost__thread *t = &pyhost__thread;
  return (t->call && t->call->depth > 0) || t->frame != NULL || t->gil_own > 0;
}
/* Every function whose comment says it runs with the GIL asserts it (docs/design.md). */
#define PYHOST__ASSERT_GIL() PYHOST__ASSERT(pyhost__gil_held())

/* Reports a broken API rule (PYHOST__API_CHECK) and aborts (apicheck.c). */
PYHOST__COLD void pyhost__api_misuse(const char *entry, const char *rule)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* True when the loaded runtime is at least major.minor: the only way call sites pick
 * an optional row or a version-specific behaviour. */
#define pyhost__runtime_at_least(major, minor) (PY.runtime >= PYHOST__V(major, minor))

/* 1 while a Python started by pyhost runs in this process: one load of a global, which
 * is what the callback entries test instead of their record's handle. */
static inline int pyhost__python_running(void) {
  return atomic_load_explicit(&pyhost__process.state, memory_order_relaxed) ==
         PYHOST__PROCESS_RUNNING;
}
#endif
