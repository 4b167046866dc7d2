/* fuzz_api.c: libFuzzer target for the public API as a whole, against hostile Python
 * (issue 22).  The input is a program: each byte pair is one operation (eval/exec of a
 * snippet from a fixed table of hostile Python, values and their conversions, calls,
 * prepared calls, GIL scopes, interrupts, frees, plugin calls, host objects) on a few
 * slots of values and prepared callables.  The snippets make Python code run inside
 * pyhost's conversions and calls: dunder methods and metaclasses that mutate what is
 * being converted, __del__ that frees handles or calls back, reentrant calls through
 * host functions and a host type, deep recursion, exceptions whose __new__
 * misbehaves, dicts cleared during calls, huge ints; host memory lent to Python (kept,
 * sliced, released under it) and Python's buffers and lists read in place.  Whatever the program, no call may
 * crash, leak or trip a sanitizer; a Python exception is a normal outcome, and every
 * failing call must say why.  Finalize cannot run in the fuzzing process (CPython
 * starts once per process), so the "finalize" operation forks: the child finalizes
 * while a thread of it is inside a call of a prepared callable it frees, and must exit
 * cleanly.  A watchdog interrupts an operation that runs for over a second. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "fuzz_python.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { NVALUES = 6, NCALLABLES = 3, MAX_OPS = 64 };

static pyhost *h;
static pyhost_value *values[NVALUES];
static pyhost_callable *callables[NCALLABLES];
static pyhost_plugin *plugin;
static pyhost_type *box;
static pyhost_module *module; /* fz: kept for the process */
static unsigned long scopes; /* this thread's open pyhost_gil_enter scopes */

static pyhost_callable *take_callable(int i) {
  pyhost_callable *c = callables[i];
  callables[i] = NULL; /* before the free: a __del__ it runs may free the slot again */
  return c;
}

/* ---- hostile Python: a fixed table (globals V, F, L, D are what the ops use) ---- */

static const char *const snippets[] = {
    /* __hash__ / __eq__ that empty the containers being converted */
    "class EqMut:\n"
    "    def __hash__(s):\n"
    "        D.clear(); L.clear(); return 1\n"
    "    def __eq__(s, o):\n"
    "        D.clear(); return True\n"
    "D = {EqMut(): 1, 2: EqMut()}\nL = [EqMut(), D]\nV = D\n",
    /* __index__ / __int__ / __float__ that lie and mutate */
    "class Idx:\n"
    "    def __index__(s):\n"
    "        L.append(s); return 10 ** 30\n"
    "    def __int__(s): return 'no'\n"
    "    def __float__(s):\n"
    "        L.clear(); return 'x'\n"
    "L = [Idx(), Idx()]\nV = L\n",
    /* __str__ that raises, __repr__ that returns a non-str and drops V */
    "class S:\n"
    "    def __str__(s): raise ValueError('str')\n"
    "    def __repr__(s):\n"
    "        global V\n"
    "        V = None; return 42\n"
    "V = [S(), {1: S()}]\n",
    /* __del__ that frees a running callable, calls back and interrupts */
    "class Del:\n"
    "    def __del__(s):\n"
    "        fz.free_callable(0); fz.eval('1 + 1'); fz.interrupt()\n"
    "V = [Del() for _ in range(3)]\nL = V\n",
    /* a metaclass whose __getattribute__ mutates the containers being converted */
    "class Meta(type):\n"
    "    def __getattribute__(c, n):\n"
    "        if n in ('__module__', '__name__', '__qualname__'):\n"
    "            L.clear(); D.clear()\n"
    "        return type.__getattribute__(c, n)\n"
    "class Odd(metaclass=Meta): pass\n"
    "L = [Odd() for _ in range(4)]\nD = {i: Odd() for i in range(4)}\nV = L\n",
    /* a callable that clears what it was called with, then calls back through the host */
    "def F(*a, **k):\n"
    "    D.clear(); L.clear()\n"
    "    return fz.call(lambda *b, **c: len(b) + len(c), *a, **k)\n",
    /* deep recursion in Python */
    "def F(*a):\n"
    "    return F(*a)\n",
    /* recursion through a host function */
    "def F(*a):\n"
    "    return fz.call(F, *a)\n",
    /* an exception class whose __new__ returns a non-exception, raised by name */
    "class E(Exception):\n"
    "    def __new__(c, *a): return 42\n"
    "try:\n"
    "    fz.raise_named('__main__.E')\n"
    "except BaseException as e:\n"
    "    V = e\n",
    /* huge ints */
    "V = 10 ** 5000\nL = [V, -V, 2 ** 100]\nF = int\n",
    /* a dict passed as **kwargs cleared during a fast call */
    "D = {'a': b'x' * 100, 'b': 2}\n"
    "def cb(): D.clear()\n"
    "V = fz.fkw(cb, **D)\n",
    /* a host method bound to a foreign object */
    "m = Box.__dict__.get('m')\n"
    "try:\n"
    "    V = m.__get__(b'x' * 200)(lambda *a: 1)\n"
    "except Exception as e:\n"
    "    V = e\n",
    /* recursion through a host method */
    "b = Box()\n"
    "try:\n"
    "    b.m(b.m)\n"
    "except RecursionError as e:\n"
    "    V = e\n",
    /* nested host calls and conversions */
    "V = [fz.echo({1: [2.5, 'x', b'y', None, (True,)]}) for _ in range(3)]\n"
    "P = fz.eval('[1, 2, 3]')\n",
    /* a GIL scope opened and closed inside a host function */
    "V = fz.scope()\n",
    /* a collected cycle whose __del__ hands itself to a host function (no Python
     * threads here: clang-14's LeakSanitizer tracer faults while one is alive; threads
     * are test_threads.c's) */
    "import gc\n"
    "class Cyc:\n"
    "    def __del__(s):\n"
    "        global V\n"
    "        V = fz.echo(s)\n"
    "a = Cyc(); a.me = a; del a\n"
    "gc.collect()\n",
    /* a callable that frees the prepared callables, the running one included */
    "def F(*a):\n"
    "    fz.free_callable(0); fz.free_callable(1); fz.free_callable(2)\n"
    "    return a\n",
    /* a callable that interrupts its own call */
    "def F(*a):\n"
    "    fz.interrupt()\n"
    "    return sum(range(1000))\n",
    /* a plugin hook that unloads its plugin and raises */
    "try:\n"
    "    V = fz.plugin_call('run')\n"
    "except Exception as e:\n"
    "    V = e\n",
    /* subclasses of containers that lie about their size and contents */
    "class BadLen(list):\n"
    "    def __len__(s):\n"
    "        s.clear(); return 10 ** 6\n"
    "class BadDict(dict):\n"
    "    def keys(s):\n"
    "        s.clear(); return []\n"
    "    def __iter__(s):\n"
    "        s.clear(); return iter([])\n"
    "V = [BadLen([1, 2, 3]), BadDict(a=1, b=[1, 2])]\nL = V[0]\n",
    /* a subclass of the host type, and instances invalidated under Python */
    "class Sub(Box):\n"
    "    def extra(s): return 1\n"
    "V = [Sub(), Box(), Sub()]\nF = Box\n",
    /* a prepared call made from inside a host function */
    "def F(*a):\n"
    "    return fz.prepared()\n",
    /* a callable that raises SystemExit and KeyboardInterrupt */
    "def F(*a):\n"
    "    raise (SystemExit if a else KeyboardInterrupt)(3)\n",
    /* the builtins and the host module tampered with */
    "import builtins, sys\n"
    "sys.modules.pop('fz', None)\n"
    "try:\n"
    "    import fz as fz2\n"
    "except ImportError as e:\n"
    "    V = e\n"
    "V = builtins.len\n",
};
enum { NSNIPPETS = sizeof snippets / sizeof snippets[0] };

/* PYHOST_FUZZ_API_SKIP="4,8": snippets left out (by table index), to fuzz on past a
 * known defect until its fix lands. */
static int skipped(unsigned i) {
  static char skip[NSNIPPETS + 1];
  static int read;
  if (!read) {
    read = 1;
    const char *e = getenv("PYHOST_FUZZ_API_SKIP");
    while (e && *e) {
      char *end;
      unsigned long k = strtoul(e, &end, 10);
      if (end == e) break;
      if (k < NSNIPPETS) skip[k] = 1;
      e = *end ? end + 1 : end;
    }
  }
  return skip[i];
}

/* expressions whose values go into slots */
static const char *const exprs[] = {
    "V", "F", "L", "D", "[1, 'two', 3.0, b'4', None, True, (5,), {6: 7}]",
    "{'k': [1, 2], 2: {3: 4}}", "10 ** 50", "-1.5", "'h\\u00e9' * 3", "Box()", "len",
    "print", "object()", "lambda *a, **k: (a, k)", "1 / 0", "[[[[[]]]]]",
};
enum { NEXPRS = sizeof exprs / sizeof exprs[0] };

static const char *const names[] = {"F", "len", "fz.call", "fz.echo", "Box", "time.sleep",
                                    "builtins.sorted", "no.such.name"};
enum { NNAMES = sizeof names / sizeof names[0] };

/* ---- host functions and the host type ---- */

static int fn_call(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud;
  if (!nargs) return pyhost_raise(hh, PYHOST_EXC_TYPE_ERROR, "call(f, *args)");
  int rc = pyhost_callv(hh, args[0], args + 1, nargs - 1, kwargs, result);
  return rc == PYHOST_PYEXC ? pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh)) : rc;
}

static int fn_eval(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *src = NULL;
  if (nargs != 1 || pyhost_value_to_str(hh, args[0], &src, NULL))
    return pyhost_raise(hh, PYHOST_EXC_TYPE_ERROR, "eval(src)");
  int rc = pyhost_eval(hh, src, result);
  return rc == PYHOST_PYEXC ? pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh)) : rc;
}

static int fn_free_callable(pyhost *hh, void *ud, const pyhost_value *const *args,
                            size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  int64_t i = 0;
  if (nargs == 1 && !pyhost_value_to_int(hh, args[0], &i) && i >= 0 && i < NCALLABLES) {
    pyhost_callable_free(take_callable((int)i));
  }
  return PYHOST_OK;
}

static int fn_interrupt(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                        const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  return pyhost_interrupt(hh);
}

static int fn_echo(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                   const pyhost_value *kwargs, pyhost_value **result) {
  (void)hh, (void)ud, (void)kwargs;
  *result = nargs ? pyhost_value_copy(args[0]) : NULL;
  return PYHOST_OK;
}

static int fn_raise_named(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs, (void)result;
  const char *name = "ValueError";
  if (nargs) pyhost_value_to_str(hh, args[0], &name, NULL);
  return pyhost_raise_named(hh, name, "raised by name from the host");
}

static int fn_scope(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  int rc = pyhost_gil_enter(hh);
  if (rc) return rc;
  rc = pyhost_eval(hh, "[fz.echo(i) for i in range(3)]", result);
  pyhost_gil_leave(hh);
  return rc == PYHOST_PYEXC ? pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh)) : rc;
}

static int fn_unload_plugin(pyhost *hh, void *ud, const pyhost_value *const *args,
                            size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)hh, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  pyhost_plugin_unload(plugin);
  plugin = NULL;
  return PYHOST_OK;
}

static int fn_plugin_call(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                          const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)kwargs;
  const char *hook = "val";
  if (nargs) pyhost_value_to_str(hh, args[0], &hook, NULL);
  if (!plugin) return pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "no plugin loaded");
  int rc = pyhost_plugin_call(hh, plugin, hook, NULL, NULL, result);
  return rc == PYHOST_PYEXC ? pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh)) : rc;
}

static int fn_prepared(pyhost *hh, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  if (!callables[0]) return PYHOST_OK;
  int rc = pyhost_prepared_call_value(hh, callables[0], NULL, 0, result);
  return rc == PYHOST_PYEXC ? pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh)) : rc;
}

/* fz.fkw(cb, **kw): calls cb, then reads its keyword arguments through the views */
static int fn_fkw(pyhost *hh, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  pyhost_value *cb = NULL, *r = NULL;
  if (pyhost_args_count(args) >= 1 && !pyhost_args_value(hh, args, 0, &cb)) {
    pyhost_call(hh, cb, NULL, NULL, &r);
    pyhost_value_free(r);
  }
  pyhost_value_free(cb);
  size_t n = pyhost_args_count(args), total = 0;
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name = NULL;
    size_t len = 0;
    const void *data = NULL;
    if (!pyhost_args_kwname(hh, args, k, &name, &len)) total += len + (name ? (size_t)name[0] : 0);
    if (pyhost_args_kind(args, n + k) == PYHOST_KIND_BYTES &&
        !pyhost_args_bytes(hh, args, n + k, &data, &len) && len)
      total += ((const unsigned char *)data)[len - 1];
  }
  return pyhost_ret_int(hh, ret, (int64_t)total);
}

/* Box.m(f): calls f(f) */
static int box_m(pyhost *hh, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  ++*(int64_t *)payload;
  pyhost_value *f = NULL, *r = NULL;
  int rc = pyhost_args_count(args) ? pyhost_args_value(hh, args, 0, &f) : PYHOST_OK;
  if (!rc && f) {
    const pyhost_value *argv[1] = {f};
    rc = pyhost_callv(hh, f, argv, 1, NULL, &r);
    if (rc == PYHOST_PYEXC) rc = pyhost_raise(hh, PYHOST_EXC_RUNTIME_ERROR, "%s", pyhost_errmsg(hh));
    if (!rc) rc = pyhost_ret_value(hh, ret, r);
  }
  pyhost_value_free(r);
  pyhost_value_free(f);
  return rc;
}

static int box_get(pyhost *hh, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(hh, ret, *(int64_t *)payload);
}

static void setup(void) {
  h = fuzz_python_full();
  static const struct {
    const char *name;
    pyhost_function fn;
  } fns[] = {{"call", fn_call},           {"eval", fn_eval},
             {"free_callable", fn_free_callable}, {"interrupt", fn_interrupt},
             {"echo", fn_echo},           {"raise_named", fn_raise_named},
             {"scope", fn_scope},         {"unload_plugin", fn_unload_plugin},
             {"plugin_call", fn_plugin_call}, {"prepared", fn_prepared}};
  static const pyhost_fast_method_def methods[] = {{"m", box_m, NULL}};
  static const pyhost_fast_property_def props[] = {{"n", box_get, NULL, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT};
  spec.name = "Box";
  spec.fast_methods = methods;
  spec.n_fast_methods = 1;
  spec.fast_properties = props;
  spec.n_fast_properties = 1;
  spec.payload_size = sizeof(int64_t);
  pyhost_module *m = NULL;
  int rc = pyhost_module_new(h, "fz", NULL, &module);
  m = module;
  for (size_t i = 0; !rc && i < sizeof fns / sizeof fns[0]; i++)
    rc = pyhost_module_add_function(h, m, fns[i].name, fns[i].fn, NULL, NULL);
  if (!rc) rc = pyhost_module_add_fast_function(h, m, "fkw", fn_fkw, NULL, NULL);
  if (!rc) rc = pyhost_type_new(h, m, &spec, &box);
  if (!rc)
    rc = pyhost_exec(h,
                     "import fz, time, builtins, traceback\n"
                     "from fz import Box\n"
                     "import sys\n"
                     "sys.setrecursionlimit(400)\n" /* ASan's frames are large */
                     "V = F = len\nL = []\nD = {}\n"
                     "_fuzz_keep = set(globals()) | {'_fuzz_keep'}\n",
                     "<fuzz setup>");
  if (rc) {
    fprintf(stderr, "fuzz_api: setup: %s: %s\n", pyhost_status_name(rc), pyhost_errmsg(h));
    abort();
  }
}

static void load_plugin(void) {
  static char path[256];
  if (!path[0]) {
    snprintf(path, sizeof path, "%s/pyhost-fuzz-api-%ld.py",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs("import fz\n"
          "def run(*a):\n"
          "    fz.unload_plugin()\n"
          "    raise ValueError('after the unload')\n"
          "def val(*a):\n"
          "    return list(a) + [fz.echo(len(a))]\n"
          "def again(*a):\n"
          "    return fz.plugin_call('val')\n",
          f);
    fclose(f);
  }
  int rc = pyhost_plugin_load(h, path, &plugin);
  if (rc && !pyhost_errmsg(h)[0]) abort();
  if (rc == PYHOST_OK) unlink(path), path[0] = '\0'; /* rewritten for the next load */
}

/* ---- checks on every status ---- */

static void checked(int rc) {
  if (rc == PYHOST_OK) return;
  if (!pyhost_errmsg(h)[0]) {
    fprintf(stderr, "fuzz_api: %s without a message\n", pyhost_status_name(rc));
    abort();
  }
}

static void set_value(int slot, pyhost_value *v) {
  pyhost_value *old = values[slot];
  values[slot] = v;
  pyhost_value_free(old);
}

/* ---- bulk data: one loan of host memory at a time, views and arrays of the slots ---- */

static pyhost_buffer *loan;

static void free_loan_memory(void *data, void *userdata) {
  (void)userdata;
  free(data); /* ASan: a read of the loan after this is a use after free */
}

/* Lends 48 fresh bytes as (format, shape) chosen by arg, the view into a slot; or,
 * when a loan is out, releases it (Python may keep views: they must fail or wait). */
static void bulk_loan(int slot, uint8_t arg) {
  if (loan) {
    size_t left = 0;
    checked(pyhost_buffer_release(h, loan, &left));
    loan = NULL;
    return;
  }
  static const char *const formats[] = {"B", "q", "d", "i", "h", "?", "x", NULL};
  unsigned char *mem = malloc(48);
  if (!mem) return;
  for (int k = 0; k < 48; k++) mem[k] = (unsigned char)(k * 37 + arg);
  const char *f = formats[arg % 8];
  size_t item = !f || !strchr("qd", f[0]) ? (f && f[0] == 'i' ? 4 : f && f[0] == 'h' ? 2 : 1) : 8;
  pyhost_buffer_spec spec = {mem, f, 1 + (arg >> 3) % 2, {0}, (arg >> 4) & 1, free_loan_memory, NULL};
  spec.shape[0] = spec.ndim == 1 ? 48 / item : 2;
  spec.shape[1] = 48 / item / 2;
  if (pyhost_buffer_new(h, &spec, &loan) != PYHOST_OK) {
    checked(PYHOST_ERROR); /* must say why */
    free(mem);
    loan = NULL;
    return;
  }
  pyhost_value *v = NULL;
  checked(pyhost_buffer_value(h, loan, &v));
  set_value(slot, v);
  /* Python keeps the view and views derived from it past the release: reading them then
   * must raise or wait, never read freed memory */
  if (v && pyhost_set_global(h, "M", v) == PYHOST_OK)
    pyhost_exec(h, "K = [M, M[1:], M.cast('B') if M.c_contiguous else M]\nV = K[1]\n"
                   "L.append(K[-1])\n", "<bulk>");
  if (callables[arg % NCALLABLES]) checked(pyhost_prepared_callf(h, callables[arg % NCALLABLES], "m", loan));
}

/* A slot read as a buffer (every byte of it, so ASan sees a bad read) or as an array. */
static void bulk_read(int slot, uint8_t arg) {
  const pyhost_value *v = values[slot];
  if (!v) return;
  if (arg & 1) {
    pyhost_view view;
    unsigned flags = (arg & 2 ? PYHOST_VIEW_WRITABLE : 0) | (arg & 4 ? PYHOST_VIEW_CONTIGUOUS : 0);
    if (pyhost_view_get(h, v, flags, &view) == PYHOST_OK) {
      volatile unsigned char sum = 0;
      for (size_t k = 0; k < view.len; k++) sum += ((const unsigned char *)view.data)[k];
      (void)sum; /* read for ASan's sake only */
      if (view.ndim > 0 && (!view.shape || !view.strides)) abort();
      pyhost_view_release(h, &view);
    } else {
      checked(PYHOST_ERROR);
    }
    return;
  }
  int64_t ints[16];
  double doubles[16];
  size_t n = 0;
  pyhost_value *made = NULL;
  if (arg & 2) {
    if (pyhost_value_to_int64s(h, v, ints, (arg >> 2) % 17, &n) == PYHOST_OK)
      checked(pyhost_value_from_int64s(h, ints, n, &made));
  } else if (pyhost_value_to_doubles(h, v, doubles, (arg >> 2) % 17, &n) == PYHOST_OK) {
    checked(pyhost_value_from_doubles(h, doubles, n, &made));
  }
  if (made) set_value((slot + 1) % NVALUES, made);
}

static void read_value(const pyhost_value *v, int how) {
  int64_t i;
  double d;
  int b;
  const char *s;
  const void *p;
  size_t n;
  switch (how % 6) {
  case 0: pyhost_value_to_int(h, v, &i); break;
  case 1: pyhost_value_to_float(h, v, &d); break;
  case 2: pyhost_value_to_str(h, v, &s, &n); break;
  case 3: pyhost_value_to_bytes(h, v, &p, &n); break;
  case 4: pyhost_value_to_bool(h, v, &b); break;
  default:
    for (size_t k = 0; k < pyhost_value_count(v) && k < 8; k++)
      read_value(pyhost_value_item(v, k), (int)k);
  }
  pyhost_value_type_name(v);
}

static pyhost_arg arg_of(uint8_t b) {
  switch (b % 6) {
  case 0: return pyhost_arg_int((int64_t)b << 40);
  case 1: return pyhost_arg_float(b / 7.0);
  case 2: return pyhost_arg_str("h\xc3\xa9llo", b % 2 ? PYHOST_STRLEN : 2);
  case 3: return pyhost_arg_bytes("\x00\xff", 2);
  case 4: return pyhost_arg_value(values[b % NVALUES]);
  default: return pyhost_arg_none();
  }
}

/* ---- finalize, in a forked child ---- */

struct child_call {
  pyhost_callable *c;
  int rc;
};

static void *child_caller(void *arg) {
  struct child_call *cc = arg;
  cc->rc = pyhost_prepared_call(h, cc->c, NULL, 0);
  return NULL;
}

static void *child_freer(void *arg) {
  pyhost_callable_free(((struct child_call *)arg)->c); /* the call is running */
  return NULL;
}

static int child_started(void) {
  pyhost_value *v = NULL;
  int b = 0;
  int rc = pyhost_eval(h, "globals().get('_child_started', False)", &v);
  if (rc == PYHOST_OK) pyhost_value_to_bool(h, v, &b);
  pyhost_value_free(v);
  return rc != PYHOST_OK || b; /* a failing eval ends the wait too */
}

/* The child finalizes while one of its threads runs a prepared call that another thread
 * frees meanwhile; afterwards every handle must answer as the header says. */
static void finalize_in_child(uint8_t how) {
  if (scopes) return; /* finalize inside a scope is refused: nothing to race */
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    alarm(30);
    struct child_call cc = {NULL, 0};
    pthread_t caller, freer;
    int threads = pyhost_exec(h,
                              "def _child_f():\n"
                              "    global _child_started\n"
                              "    _child_started = True\n"
                              "    try:\n"
                              "        while True: pass\n"
                              "    finally:\n"
                              "        sum(range(10000))\n",
                              "<child>") == PYHOST_OK &&
                  pyhost_prepare_name(h, "_child_f", &cc.c) == PYHOST_OK &&
                  pthread_create(&caller, NULL, child_caller, &cc) == 0;
    while (threads && !child_started()) usleep(1000);
    int freeing = threads && pthread_create(&freer, NULL, child_freer, &cc) == 0;
    if (how & 0x40) pyhost_interrupt(h);
    int rc = pyhost_finalize(h);
    if (rc != PYHOST_OK && rc != PYHOST_ERROR) _exit(3);
    if (threads) pthread_join(caller, NULL);
    if (freeing) pthread_join(freer, NULL);
    else pyhost_callable_free(cc.c);
    for (int i = 0; i < NCALLABLES; i++) pyhost_callable_free(take_callable(i));
    void *payload = NULL;
    pyhost_value *v = NULL;
    if (values[0] && pyhost_object_payload(h, values[0], box, &payload) == PYHOST_OK) _exit(4);
    if (pyhost_eval(h, "1", &v) != PYHOST_MISUSE || pyhost_gil_enter(h) != PYHOST_MISUSE) _exit(5);
    for (int i = 0; i < NVALUES; i++) pyhost_value_free(values[i]);
    if (loan && pyhost_buffer_release(h, loan, NULL)) _exit(6); /* after finalize: frees it */
    pyhost_plugin_unload(plugin);
    pyhost_free(h);
    _exit(0);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "fuzz_api: the finalizing child %s %d\n",
            WIFEXITED(st) ? "exited with" : "died of signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    abort();
  }
}

/* ---- one operation ---- */

static void op(uint8_t code, uint8_t arg) {
  int slot = arg % NVALUES, cslot = arg % NCALLABLES;
  pyhost_value *v = NULL;
  int rc;
  switch (code % 22) {
  case 0:
    if (!skipped(arg % NSNIPPETS)) checked(pyhost_exec(h, snippets[arg % NSNIPPETS], "<snippet>"));
    break;
  case 1:
    checked(rc = pyhost_eval(h, exprs[arg % NEXPRS], &v));
    set_value(slot, v);
    break;
  case 2:
    set_value(slot, NULL);
    break;
  case 3:
    if (values[slot]) {
      read_value(values[slot], arg >> 3);
      pyhost_value_repr(h, values[slot]);
    }
    break;
  case 4:
    set_value((slot + 1) % NVALUES, pyhost_value_copy(values[slot]));
    break;
  case 5: { /* a call with the other slots as arguments and a dict of them as kwargs */
    pyhost_value *kw = arg & 1 ? pyhost_value_dict() : NULL;
    if (kw && values[(slot + 2) % NVALUES])
      pyhost_value_set(kw, pyhost_value_str("k", 1), pyhost_value_copy(values[(slot + 2) % NVALUES]));
    const pyhost_value *argv[2] = {values[(slot + 1) % NVALUES], values[(slot + 3) % NVALUES]};
    if (values[slot]) checked(pyhost_callv(h, values[slot], argv, (arg >> 1) % 3, kw, &v));
    pyhost_value_free(kw);
    set_value((slot + 4) % NVALUES, v);
    break;
  }
  case 6:
    pyhost_callable_free(take_callable(cslot));
    if (arg & 0x80) {
      rc = pyhost_prepare_name(h, names[(arg >> 2) % NNAMES], &callables[cslot]);
    } else {
      rc = pyhost_prepare(h, values[slot], &callables[cslot]);
      if (!values[slot] && rc != PYHOST_MISUSE) abort();
    }
    checked(rc);
    break;
  case 7: {
    pyhost_arg a[3] = {arg_of(arg), arg_of((uint8_t)(arg >> 1)), arg_of((uint8_t)(arg >> 2))};
    size_t n = (arg >> 4) % 4;
    int64_t i;
    double d;
    int b;
    switch ((arg >> 6) % 4) {
    case 0: checked(pyhost_prepared_call(h, callables[cslot], a, n)); break;
    case 1: checked(pyhost_prepared_call_int(h, callables[cslot], a, n, &i)); break;
    case 2: checked(pyhost_prepared_call_float(h, callables[cslot], a, n, &d)); break;
    default:
      checked(pyhost_prepared_call_bool(h, callables[cslot], a, n, &b));
      checked(pyhost_prepared_call_value(h, callables[cslot], a, n, &v));
      set_value(slot, v);
    }
    break;
  }
  case 8:
    pyhost_callable_free(take_callable(cslot));
    break;
  case 9:
    if (arg & 1 && scopes) {
      checked(pyhost_gil_leave(h));
      scopes--;
    } else if (scopes < 4) {
      checked(rc = pyhost_gil_enter(h));
      scopes += rc == PYHOST_OK;
    }
    break;
  case 10:
    checked(pyhost_interrupt(h));
    break;
  case 11:
    if (!plugin) load_plugin();
    if (plugin) {
      static const char *const hooks[] = {"run", "val", "again", "missing"};
      checked(pyhost_plugin_call(h, plugin, hooks[arg % 4], values[slot], NULL, &v));
      set_value((slot + 1) % NVALUES, v);
    }
    break;
  case 12:
    if (plugin && arg & 1) {
      checked(pyhost_plugin_reload(h, plugin));
    } else if (plugin) {
      pyhost_plugin_unload(plugin);
      plugin = NULL;
    }
    break;
  case 13: {
    void *payload = NULL;
    if (arg & 1) {
      checked(pyhost_object_new(h, box, NULL, &v));
      set_value(slot, v);
    } else if (values[slot] && arg & 2) {
      pyhost_object_invalidate(h, values[slot], box);
    } else if (values[slot]) {
      pyhost_object_payload(h, values[slot], box, &payload);
    }
    break;
  }
  case 14: { /* a list built by the host from the slots */
    pyhost_value *l = arg & 1 ? pyhost_value_tuple() : pyhost_value_list();
    for (int k = 0; l && k < NVALUES; k++)
      if (values[k]) pyhost_value_append(l, pyhost_value_copy(values[k]));
    set_value(slot, l);
    break;
  }
  case 15:
    checked(pyhost_call_name(h, names[arg % NNAMES], values[slot], NULL, &v));
    set_value((slot + 1) % NVALUES, v);
    break;
  case 16:
    checked(pyhost_exec(h, "for k in [k for k in globals() if k not in _fuzz_keep]: del globals()[k]",
                        "<reset>"));
    break;
  case 17:
    if (callables[cslot] && arg & 1) {
      /* the hot path: no arguments, inside a scope */
      if (pyhost_gil_enter(h) == PYHOST_OK) {
        for (int k = 0; k < (arg >> 1) % 8; k++) checked(pyhost_prepared_call(h, callables[cslot], NULL, 0));
        pyhost_gil_leave(h);
      }
    }
    break;
  case 18:
    if ((arg & 0x3f) == 0x2a) finalize_in_child(arg);
    break;
  case 19:
    bulk_loan(slot, arg);
    break;
  case 20:
    bulk_read(slot, arg);
    break;
  default:
    checked(pyhost_eval(h, "sum(fz.echo(i) for i in range(10))", &v));
    set_value(slot, v);
    break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!h) setup();
  fuzz_watch(1);
  for (size_t i = 0; i + 1 < size && i / 2 < MAX_OPS; i += 2) op(data[i], data[i + 1]);
  /* the input's state goes: slots, scopes, its globals; the runtime must still answer */
  while (scopes) {
    if (pyhost_gil_leave(h)) abort();
    scopes--;
  }
  for (int i = 0; i < NCALLABLES; i++) pyhost_callable_free(take_callable(i));
  for (int i = 0; i < NVALUES; i++) set_value(i, NULL);
  if (loan && pyhost_buffer_release(h, loan, NULL)) abort();
  loan = NULL;
  pyhost_plugin_unload(plugin);
  plugin = NULL;
  pyhost_exec(h,
              "import sys\n"
              "sys.modules.setdefault('fz', fz)\n"
              "for k in [k for k in globals() if k not in _fuzz_keep]: del globals()[k]\n"
              "V = F = len\nL = []\nD = {}\n",
              "<reset>");
  fuzz_watch(0);
  int64_t two = 0;
  pyhost_value *v = NULL;
  for (int tries = 0; tries < 3 && two != 2; tries++) {
    int rc = pyhost_eval(h, "1 + 1", &v);
    if (rc == PYHOST_OK && pyhost_value_to_int(h, v, &two)) abort();
    if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) {
      fprintf(stderr, "fuzz_api: the runtime stopped answering: %s\n", pyhost_errmsg(h));
      abort();
    }
    pyhost_value_free(v);
    v = NULL;
  }
  if (two != 2) abort();
  return 0;
}
