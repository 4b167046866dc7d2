/* fuzz_api.c: libFuzzer target for the public API as a whole, against hostile Python
 * (issues 22 and 39).  The input is a program: each byte pair is one operation (eval or
 * exec of a snippet from a fixed table of hostile Python, values and their conversions,
 * calls, prepared calls, calls in one line with borrowed results, prepared expressions,
 * GIL scopes, thread attachments, threads of the host calling in and interrupting, frees,
 * plugin calls, host objects, module and reflection calls) on a few slots of values and
 * prepared callables.  The snippets make Python code run inside pyhost's conversions and
 * calls: dunder methods and metaclasses that mutate what is being converted, __del__ that
 * frees handles or calls back, keyword names whose __eq__ removes the typed function
 * being bound or invalidates the instance whose method is being bound, reentrant calls
 * through host functions and host types, deep recursion, exceptions whose __new__ or
 * __str__ misbehaves, dicts cleared during calls, huge ints; host memory lent to Python
 * (kept, sliced, released under it) and Python's buffers and lists read in place.
 * Whatever the program, no call may crash, leak or trip a sanitizer; a Python exception
 * is a normal outcome, and every status must agree with its message and exception data (fz_checked).  Outputs
 * are checked to be written only on PYHOST_OK, and borrowed results to stay readable
 * until their callable's next callf.  Finalize cannot run in the fuzzing process
 * (CPython starts once per process), so the "finalize" operation forks: the child
 * finalizes while a thread of it is inside a call of a prepared callable it frees, and
 * must exit cleanly.  Each unit is bounded (fuzz_python.h): past its budget the
 * watchdog interrupts what runs and no further operation starts. */
#define _GNU_SOURCE
#include "fuzz_api.h"
#include "fuzz_python.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { UNIT_BUDGET_MS = 2000 };

#define h (fz.h)
#define values (fz.values)
#define callables (fz.callables)

/* ---- hostile Python: a fixed table (globals V, F, L, D, T are what the ops use) ---- */

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
     * are test_threads.c's and the host threads of the ops below) */
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
    /* 24: typed parameters given int subclasses whose __float__, __index__ and __int__
     * remove the function being called: pyhost reads the value an int stores and runs
     * none of them (issue 39 defects 1 and 2) */
    "class RmF(int):\n"
    "    def __float__(s):\n"
    "        fz.remove('tf'); return 99.0\n"
    "    def __index__(s):\n"
    "        fz.remove('tg'); return 1\n"
    "    def __int__(s):\n"
    "        fz.remove('th'); return 2\n"
    "for f in ('tf', 'tg'):\n"
    "    try:\n"
    "        V = getattr(fz, f)(RmF(3), RmF(4))\n"
    "    except Exception as e:\n"
    "        V = e\n"
    "    if isinstance(V, tuple) and V[:2] != (3, 4):\n"
    "        fz.fail('an int subclass was read through its dunder: %r' % (V,))\n",
    /* 25: keyword names whose __eq__ removes the typed function and invalidates the
     * instance being bound (the host frees its userdata and payload at once) */
    "class K(str):\n"
    "    def __eq__(s, o):\n"
    "        fz.remove('tf'); fz.invalidate(T)\n"
    "        return str.__eq__(s, o)\n"
    "    __hash__ = str.__hash__\n"
    "T = fz.TBox(5)\n"
    "try:\n"
    "    V = fz.tf(1.5, **{K('s'): 'v', 'b': True})\n"
    "except Exception as e:\n"
    "    V = e\n"
    "try:\n"
    "    L = [T.add(**{K('k'): 2}), T.get()]\n"
    "except Exception as e:\n"
    "    L = [e]\n",
    /* 26: typed constructor and methods at the 64-bit edges and with wrong types */
    "V = []\n"
    "for a, k in (((0,), {'label': 'a'}), ((2**63 - 1,), {}), ((-2**63,), {'label': 'h\\u00e9'}),\n"
    "             ((2**63,), {}), ((True,), {}), ((), {'label': b'x'}), ((1, 'x', 3), {}),\n"
    "             ((), {'n': 1, 'm': 2}), ((1.0,), {}), ((), {'label': 'x\\ud800'})):\n"
    "    try:\n"
    "        t = fz.TBox(*a, **k)\n"
    "        V.append((t, t.add(1, 0.5), t.add(k=-1, f=2), t.get()))\n"
    "    except Exception as e:\n"
    "        V.append(e)\n"
    "T = V[0][0]\n"
    "if V[0][1:] != (2, 3, 3):\n"
    "    fz.fail('TBox: %r' % (V[0],))\n",
    /* 27: typed functions called every way: positional, keyword, missing, too many */
    "V = []\n"
    "for a, k in (((1,), {}), ((1.5, 2, 's'), {'b': True, 'y': b'z'}), ((), {}),\n"
    "             ((1, 2, 3, 4), {}), ((1,), {'x': 1}), ((1,), {'n': 2}), ((2**1100,), {}),\n"
    "             ((1,), {'y': None, 'b': False}), ((float('nan'), -2**63), {'s': ''})):\n"
    "    for f in (fz.tf, fz.tg, fz.th):\n"
    "        try:\n"
    "            V.append(f(*a, **k))\n"
    "        except Exception as e:\n"
    "            V.append(e)\n"
    "if fz.tf(2) != (2.0, 3, 'd', False, None):\n"
    "    fz.fail('tf defaults: %r' % (fz.tf(2),))\n"
    "L = [inspect.signature(f) for f in (fz.tf, fz.tg, fz.th, fz.TBox, fz.TBox.add)]\n",
    /* 28: a function removed from inside a call through the host, then called again */
    "def F(*a):\n"
    "    g = fz.tf\n"
    "    fz.remove('tf'); fz.remove('echo')\n"
    "    try:\n"
    "        return g(1.0)\n"
    "    except RuntimeError as e:\n"
    "        return e\n",
    /* 29: a borrowed result read by the host inside a call whose callable frees itself */
    "def F(*a):\n"
    "    fz.free_callable(0); fz.free_callable(1); fz.free_callable(2)\n"
    "    return 'x' * 40\n"
    "V = [fz.callf(i) for i in range(3)]\n",
    /* 30: a thread attachment inside a call */
    "V = [fz.attach() for _ in range(3)]\n",
    /* 31: exceptions that break their own formatting: str() raising KeyboardInterrupt,
     * a deep chain, a SyntaxError (issue 39 defect 6) */
    "class E(Exception):\n"
    "    def __str__(self): raise KeyboardInterrupt\n"
    "def deep(n):\n"
    "    if n: return deep(n - 1)\n"
    "    try:\n"
    "        compile('x = (1,', 'bad.py', 'exec')\n"
    "    except SyntaxError as e:\n"
    "        raise E() from e\n"
    "deep(20)\n",
    /* 32: a str default and a str argument that are not ASCII, through a TBox subclass */
    "class TS(fz.TBox):\n"
    "    def more(s): return s.add(1)\n"
    "V = [TS(7, 'h\\u00e9\\u20ac'), TS(label='\\U0001f600')]\n"
    "L = [v.more() for v in V]\n"
    "T = V[0]\n",
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
    "fz.tf", "fz.TBox(3)", "T", "-2 ** 63", "2 ** 63 - 1", "'x' * 40", "b'\\0\\xff'", "fz",
};
enum { NEXPRS = sizeof exprs / sizeof exprs[0] };

static const char *const names[] = {"F", "len", "fz.call", "fz.echo", "Box", "time.sleep",
                                    "builtins.sorted", "no.such.name", "fz.tf", "fz.tg",
                                    "fz.th", "fz.TBox", "T.add", "fz.remove", "str", "."};
enum { NNAMES = sizeof names / sizeof names[0] };

/* inputs and expression of pyhost_prepare_expression: sound ones, ones that reach the
 * host, and ones that must be refused (not names, not one expression) */
static const char *const expressions[][2] = {
    {"x, y", "x * 2 + y"}, {"", "len(__import__('fz').__name__)"}, {"x", "x.__class__"},
    {"a,b", "[a] * 3 + [b]"}, {"x y", "x"}, {"x", "1)"}, {"x", "(yield)"}, {"1x", "0"},
    {"x,", "x"}, {" ", "1"}, {"x", "x # comment"},
    {"x", "__import__('fz').free_callable(0) or x"}, {"x", "__import__('fz').remove('tf') or x"},
    {"s", "__import__('fz').tf(s)"}, {"x", "x\n"}, {"x", ""}, {"__class__", "__class__"},
    {"x", "lambda: x"}, {"x", "[x for x in (x, x)]"}, {"x, *y", "y"}, {"x=1", "x"},
    {"x", "x) + (x"}, {"a, b, c", "a if b else c"}, {"x", "'x' * 40"},
};
enum { NEXPRESSIONS = sizeof expressions / sizeof expressions[0] };

/* ---- small helpers ---- */

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
    fz_checked(pyhost_buffer_release(h, loan, &left), "buffer_release");
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
    fz_checked(PYHOST_ERROR, "buffer_new"); /* must say why */
    free(mem);
    loan = NULL;
    return;
  }
  if (pyhost_buffer_in_place(loan) != (pyhost_python_version(h) >= 0x030B0000)) abort();
  pyhost_value *v = NULL;
  fz_checked(pyhost_buffer_value(h, loan, &v), "buffer_value");
  set_value(slot, v);
  /* Python keeps the view and views derived from it past the release: reading them then
   * must raise or wait, never read freed memory */
  if (v && pyhost_set_global(h, "M", v) == PYHOST_OK)
    pyhost_exec(h, "K = [M, M[1:], M.cast('B') if M.c_contiguous else M]\nV = K[1]\n"
                   "L.append(K[-1])\n", "<bulk>");
  if (callables[arg % NCALLABLES])
    fz_checked(pyhost_prepared_callf(h, callables[arg % NCALLABLES], "m", loan), "callf m");
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
      size_t exports = 1;
      /* a view of a host type's instance is counted; of anything else, refused */
      int rc = pyhost_object_exports(h, v, arg & 8 ? fz.tbox : fz.box, &exports);
      if (rc != PYHOST_OK && rc != PYHOST_TYPE) abort();
      pyhost_view_release(h, &view);
    } else {
      fz_checked(PYHOST_ERROR, "view_get");
    }
    return;
  }
  int64_t ints[16];
  double doubles[16];
  size_t n = 0;
  pyhost_value *made = NULL;
  if (arg & 2) {
    if (pyhost_value_to_int64s(h, v, ints, (arg >> 2) % 17, &n) == PYHOST_OK)
      fz_checked(pyhost_value_from_int64s(h, ints, n, &made), "value_from_int64s");
  } else if (pyhost_value_to_doubles(h, v, doubles, (arg >> 2) % 17, &n) == PYHOST_OK) {
    fz_checked(pyhost_value_from_doubles(h, doubles, n, &made), "value_from_doubles");
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

/* A value's exact decimal text through pyhost_value_to_int_text, asked with no buffer,
 * with one exactly as long as the text (no room for the NUL: refused, nothing
 * written) and with room for it. */
static void int_text(const pyhost_value *v) {
  size_t len = 0, len2 = 0;
  int rc = pyhost_value_to_int_text(h, v, NULL, 0, &len);
  fz_checked(rc, "pyhost_value_to_int_text");
  if (rc != PYHOST_RANGE) return;
  char *buf = malloc(len + 1);
  if (!buf) abort();
  memset(buf, '#', len + 1);
  if (pyhost_value_to_int_text(h, v, buf, len, &len2) != PYHOST_RANGE || len2 != len ||
      memchr(buf, '#', len + 1) != buf || buf[len] != '#') {
    fprintf(stderr, "fuzz_api: pyhost_value_to_int_text wrote into a buffer one byte short\n");
    abort();
  }
  if (pyhost_value_to_int_text(h, v, buf, len + 1, &len2) != PYHOST_OK || len2 != len ||
      strlen(buf) != len) {
    fprintf(stderr, "fuzz_api: pyhost_value_to_int_text: %s\n", pyhost_errmsg(h));
    abort();
  }
  free(buf);
}

/* ---- calls in one line ---- */

static char unwritten_byte; /* an output left alone points here: never a value */
#define unwritten_value (*(pyhost_value *)&unwritten_byte)
#define unwritten_callable (*(pyhost_callable *)&unwritten_byte)

static void check_unwritten(int rc, int written, const char *what) {
  fz_checked(rc, what);
  if (rc != PYHOST_OK && written) {
    fprintf(stderr, "fuzz_api: %s: %s but its result was written\n", what, pyhost_status_name(rc));
    abort();
  }
}

/* The borrowed results still held must read as they did. */
static void check_borrowed(void) {
  for (int i = 0; i < NCALLABLES; i++) {
    const struct fz_borrowed *b = &fz.borrowed[i];
    size_t n = b->len < sizeof b->copy ? b->len : sizeof b->copy;
    if (b->p && memcmp(b->p, b->copy, n) != 0) {
      fprintf(stderr, "fuzz_api: callable %d's borrowed result changed before its next callf\n", i);
      abort();
    }
  }
}

static void keep_borrowed(int cslot, pyhost_callable *c, int rc, const char *p, size_t len) {
  struct fz_borrowed *b = &fz.borrowed[cslot];
  b->p = NULL;
  if (rc != PYHOST_OK) return;
  if (callables[cslot] != c) {
    fprintf(stderr, "fuzz_api: a callf whose callable was freed during it answered OK with a "
                    "borrowed result\n");
    abort();
  }
  b->p = p;
  b->len = len;
  memcpy(b->copy, p, len < sizeof b->copy ? len : sizeof b->copy);
}

static void callf_op(int cslot, int slot, uint8_t arg) {
  pyhost_callable *c = callables[cslot];
  const pyhost_value *v = values[slot], *w = values[(slot + 1) % NVALUES];
  const char *s = "unwritten", *was = fz.borrowed[cslot].p;
  size_t n = 77;
  int64_t L = -77;
  double d = -77.5;
  int i = -77, rc;
  pyhost_value *out = &unwritten_value;
  switch ((arg >> 2) % 10) {
  case 0: rc = pyhost_prepared_callf(h, c, ""); fz_checked(rc, "callf \"\""); break;
  case 1:
    rc = pyhost_prepared_callf(h, c, "iLd>d", (int)arg - 128, (int64_t)((uint64_t)arg << 56),
                               arg / 3.0, &d);
    check_unwritten(rc, d != -77.5, "callf iLd>d");
    break;
  case 2:
    rc = pyhost_prepared_callf(h, c, "s,k=i>O", "h\xc3\xa9", (int)arg, &out);
    check_unwritten(rc, out != &unwritten_value, "callf s,k=i>O");
    if (rc == PYHOST_OK) set_value(slot, out);
    break;
  case 3:
  case 4: /* borrowed: a str, or bytes */
    rc = (arg >> 2) % 10 == 3 ? pyhost_prepared_callf(h, c, ">s", &s, &n)
                              : pyhost_prepared_callf(h, c, "O>y", v, (const void **)&s, &n);
    check_unwritten(rc, n != 77 || strcmp(s, "unwritten") != 0, "callf >s / O>y");
    if (rc == PYHOST_OK && (arg >> 2) % 10 == 3 && strlen(s) != n) {
      fprintf(stderr, "fuzz_api: a borrowed str is not NUL-terminated at its length\n");
      abort();
    }
    keep_borrowed(cslot, c, rc, s, n);
    return;
  case 5:
    rc = pyhost_prepared_callf(h, c, "zyOnb>b", "abc", (size_t)(arg % 4), "\x00\x01\x02", (size_t)(arg % 3),
                               v, (int)(arg & 1), &i);
    check_unwritten(rc, i != -77, "callf zyOnb>b");
    break;
  case 6:
    rc = pyhost_prepared_callf(h, c, "O,a=O>L", v, w, &L);
    check_unwritten(rc, L != -77, "callf O,a=O>L");
    break;
  case 7: /* the last borrowed result as this call's argument */
    rc = pyhost_prepared_callf(h, c, "s>s", was ? was : "none", &s, &n);
    check_unwritten(rc, n != 77, "callf s>s");
    keep_borrowed(cslot, c, rc, s, n);
    return;
  case 8: /* refused before any call: a result pointer of NULL, a bad format */
    rc = pyhost_prepared_callf(h, c, arg & 1 ? ">i" : "i,=i>", NULL);
    if (rc != PYHOST_MISUSE) abort();
    fz_checked(rc, "callf refused");
    break;
  default:
    if (arg & 1) {
      rc = pyhost_call_namef(h, names[arg % NNAMES], "O>O", v, &out);
      check_unwritten(rc, out != &unwritten_value, "pyhost_call_namef");
      if (rc == PYHOST_OK) set_value(slot, out);
    } else { /* a borrowed result needs a callable that holds it */
      rc = pyhost_call_namef(h, names[arg % NNAMES], ">s", &s, &n);
      if (rc == PYHOST_OK) abort();
      check_unwritten(rc, n != 77 || strcmp(s, "unwritten") != 0, "pyhost_call_namef >s");
    }
    return; /* no callf of callable cslot */
  }
  if (c) fz.borrowed[cslot].p = NULL;
}

/* ---- keyword plans and prepared borrowed str results ---- */

/* A keyword plan of callable cslot (names that are sound, non-ASCII, empty, not UTF-8,
 * or no array at all; counts in and out of range), called through
 * pyhost_prepared_call_str with the right number of values or one fewer, its result
 * dropped early or with the plan; and pyhost_prepared_call_str, _bytes and
 * pyhost_prepared_release_result on the callable itself, whose borrowed result must
 * then read as it did until its next borrowed call. */
static void plan_op(int cslot, uint8_t arg, uint8_t more) {
  static const char *const kw[] = {"k", "h\xc3\xa9", "a", "", "\xff", "k"};
  pyhost_callable *c = callables[cslot], *plan = &unwritten_callable;
  const char *s = "unwritten";
  size_t n = 77, npos = more % 4, nkw = (more >> 2) % 4; /* 0 keywords or 9+ in all: refused */
  int rc;
  if (more & 0x80) { /* on the callable itself: a borrowed str or bytes, or its early release */
    if ((arg & 6) == 6) {
      pyhost_prepared_release_result(c);
      if (c) fz.borrowed[cslot].p = NULL;
      return;
    }
    pyhost_arg a[2] = {arg_of(more), arg_of(arg)};
    rc = arg & 4 ? pyhost_prepared_call_bytes(h, c, a, (more >> 4) % 3, (const void **)&s, &n)
                 : pyhost_prepared_call_str(h, c, a, (more >> 4) % 3, &s, &n);
    check_unwritten(rc, n != 77 || strcmp(s, "unwritten") != 0, "pyhost_prepared_call_str / _bytes");
    if (rc == PYHOST_OK && !(arg & 4) && strlen(s) != n) {
      fprintf(stderr, "fuzz_api: a borrowed str is not NUL-terminated at its length\n");
      abort();
    }
    keep_borrowed(cslot, c, rc, s, n);
    return;
  }
  if (more & 0x40) nkw += 6;
  const char *const *kwnames = (arg & 0x10) ? NULL : kw + (arg >> 5) % 3;
  rc = pyhost_prepare_keywords(h, c, npos, kwnames, nkw, &plan);
  check_unwritten(rc, plan != NULL, "pyhost_prepare_keywords");
  if (rc != PYHOST_OK) return;
  pyhost_arg a[8];
  size_t count = npos + nkw - ((arg >> 1) & 1); /* sometimes one short: refused */
  for (size_t i = 0; i < npos + nkw; i++) a[i] = arg_of((uint8_t)(arg + 7 * i));
  rc = pyhost_prepared_call_str(h, plan, a, count, &s, &n);
  check_unwritten(rc, n != 77 || strcmp(s, "unwritten") != 0, "pyhost_prepared_call_str (plan)");
  if (rc == PYHOST_OK && strlen(s) != n) abort();
  if (arg & 4) pyhost_prepared_release_result(plan);
  if (arg & 8) fz_checked(pyhost_prepare_keywords(h, plan, 0, kw, 1, &(pyhost_callable *){NULL}),
                          "a plan of a plan");
  pyhost_callable_free(plan);
}

/* ---- threads of the host ---- */

struct worker {
  uint8_t how;
};

/* A host thread's calls: attached or not, in a GIL scope or not, interrupting from
 * outside any scope. */
static void *worker(void *arg) {
  uint8_t how = ((struct worker *)arg)->how;
  int attached = how & 1 ? pyhost_thread_attach(h) == PYHOST_OK : 0;
  int scoped = how & 4 ? pyhost_gil_enter(h) == PYHOST_OK : 0;
  pyhost_value *v = NULL;
  fz_checked(pyhost_eval(h, exprs[how % NEXPRS], &v), "a host thread's eval");
  pyhost_value_free(v);
  if (how & 2) fz_checked(pyhost_interrupt(h), "pyhost_interrupt from a host thread");
  if (callables[0] && how & 8) fz_checked(pyhost_prepared_call(h, callables[0], NULL, 0), "a host thread's call");
  if (scoped && pyhost_gil_leave(h) != PYHOST_OK) abort();
  if (attached && pyhost_thread_detach(h) != PYHOST_OK) abort();
  if (!attached && pyhost_thread_detach(h) != PYHOST_MISUSE) abort();
  return NULL;
}

struct interrupter {
  unsigned delay_us;
};

static void *interrupter(void *arg) {
  usleep(((struct interrupter *)arg)->delay_us);
  if (pyhost_interrupt(h) != PYHOST_OK) abort();
  return NULL;
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
  if (fz.scopes) return; /* finalize inside a scope is refused: nothing to race */
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
    /* every handle answers PYHOST_MISUSE now, and reads nothing of Python */
    void *payload = NULL;
    pyhost_value *v = NULL;
    const char *s = "unwritten";
    size_t n = 0;
    if (values[0] && pyhost_object_payload(h, values[0], fz.box, &payload) == PYHOST_OK) _exit(4);
    if (pyhost_eval(h, "1", &v) != PYHOST_MISUSE || pyhost_gil_enter(h) != PYHOST_MISUSE) _exit(5);
    if (pyhost_thread_attach(h) != PYHOST_MISUSE || pyhost_errtype(h)[0]) _exit(6);
    if (callables[1] && (pyhost_prepared_callf(h, callables[1], ">s", &s, &n) != PYHOST_MISUSE ||
                         strcmp(s, "unwritten") != 0))
      _exit(7);
    int len = -1;
    if (pyhost_call_namef(h, "len", "s>i", "abc", &len) != PYHOST_MISUSE || len != -1) _exit(8);
    for (int i = 0; i < NCALLABLES; i++) pyhost_callable_free(fz_take_callable(i));
    for (int i = 0; i < NVALUES; i++) pyhost_value_free(values[i]);
    if (loan && pyhost_buffer_release(h, loan, NULL)) _exit(9); /* after finalize: frees it */
    pyhost_plugin_unload(fz.plugin);
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
  switch (code % 34) {
  case 0:
    if (!skipped(arg % NSNIPPETS)) fz_checked(pyhost_exec(h, snippets[arg % NSNIPPETS], "<snippet>"), "exec");
    break;
  case 1:
    fz_checked(pyhost_eval(h, exprs[arg % NEXPRS], &v), "eval");
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
    if (values[slot]) fz_checked(pyhost_callv(h, values[slot], argv, (arg >> 1) % 3, kw, &v), "callv");
    pyhost_value_free(kw);
    set_value((slot + 4) % NVALUES, v);
    break;
  }
  case 6:
    pyhost_callable_free(fz_take_callable(cslot));
    if (arg & 0x80) {
      rc = pyhost_prepare_name(h, names[(arg >> 2) % NNAMES], &callables[cslot]);
    } else {
      rc = pyhost_prepare(h, values[slot], &callables[cslot]);
      if (!values[slot] && rc != PYHOST_MISUSE) abort();
    }
    fz_checked(rc, "prepare");
    break;
  case 7: {
    pyhost_arg a[3] = {arg_of(arg), arg_of((uint8_t)(arg >> 1)), arg_of((uint8_t)(arg >> 2))};
    size_t n = (arg >> 4) % 4;
    int64_t i = -77;
    double d = -77.5;
    int b = -77;
    switch ((arg >> 6) % 4) {
    case 0: fz_checked(pyhost_prepared_call(h, callables[cslot], a, n), "prepared_call"); break;
    case 1:
      check_unwritten(rc = pyhost_prepared_call_int(h, callables[cslot], a, n, &i), i != -77, "prepared_call_int");
      break;
    case 2:
      check_unwritten(pyhost_prepared_call_float(h, callables[cslot], a, n, &d), d != -77.5, "prepared_call_float");
      break;
    default:
      check_unwritten(pyhost_prepared_call_bool(h, callables[cslot], a, n, &b), b != -77, "prepared_call_bool");
      fz_checked(pyhost_prepared_call_value(h, callables[cslot], a, n, &v), "prepared_call_value");
      set_value(slot, v);
    }
    break;
  }
  case 8:
    pyhost_callable_free(fz_take_callable(cslot));
    break;
  case 9:
    if (arg & 1 && fz.scopes) {
      fz_checked(pyhost_gil_leave(h), "gil_leave");
      fz.scopes--;
    } else if (fz.scopes < 4) {
      fz_checked(rc = pyhost_gil_enter(h), "gil_enter");
      fz.scopes += rc == PYHOST_OK;
    }
    break;
  case 10:
    fz_checked(pyhost_interrupt(h), "interrupt");
    break;
  case 11:
    if (!fz.plugin) fz_load_plugin(arg >> 2);
    if (fz.plugin) {
      static const char *const hooks[] = {"run", "val", "again", "missing"};
      fz_checked(pyhost_plugin_call(h, fz.plugin, hooks[arg % 4], values[slot], NULL, &v), "plugin_call");
      set_value((slot + 1) % NVALUES, v);
    }
    break;
  case 12:
    if (fz.plugin && arg & 2) {
      /* a fresh start: the interpreter level's, refused at the shared level */
      rc = pyhost_plugin_restart(h, fz.plugin);
      if (rc == PYHOST_OK && pyhost_plugin_isolation(fz.plugin) == PYHOST_ISOLATION_SHARED) abort();
      fz_checked(rc, "plugin_restart");
    } else if (fz.plugin && arg & 1) {
      fz_checked(pyhost_plugin_reload(h, fz.plugin), "plugin_reload");
    } else if (fz.plugin) {
      pyhost_plugin_unload(fz.plugin);
      fz.plugin = NULL;
    }
    break;
  case 13: {
    void *payload = NULL;
    if (arg & 1) {
      fz_checked(pyhost_object_new(h, fz.box, NULL, &v), "object_new");
      set_value(slot, v);
    } else if (values[slot] && arg & 2) {
      pyhost_object_invalidate(h, values[slot], fz.box);
    } else if (values[slot]) {
      pyhost_object_payload(h, values[slot], fz.box, &payload);
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
    fz_checked(pyhost_call_name(h, names[arg % NNAMES], values[slot], NULL, &v), "call_name");
    set_value((slot + 1) % NVALUES, v);
    break;
  case 16:
    fz_checked(pyhost_exec(h, "for k in [k for k in globals() if k not in _fuzz_keep]: del globals()[k]",
                           "<reset>"),
               "reset");
    break;
  case 17:
    if (callables[cslot] && arg & 1) {
      /* the hot path: no arguments, inside a scope */
      if (pyhost_gil_enter(h) == PYHOST_OK) {
        for (int k = 0; k < (arg >> 1) % 8; k++)
          fz_checked(pyhost_prepared_call(h, callables[cslot], NULL, 0), "hot prepared_call");
        pyhost_gil_leave(h);
      }
    }
    break;
  case 18:
    if ((arg & 0x3f) == 0x2a) finalize_in_child(arg);
    break;
  case 19:
    fz_checked(pyhost_eval(h, "sum(fz.echo(i) for i in range(10))", &v), "eval echo");
    set_value(slot, v);
    break;
  case 20:
    callf_op(cslot, slot, arg);
    break;
  case 21:
    check_borrowed();
    break;
  case 22: {
    const char *const *e = expressions[(arg >> 2) % NEXPRESSIONS];
    pyhost_callable_free(fz_take_callable(cslot));
    fz_checked(rc = pyhost_prepare_expression(h, e[0], e[1], &callables[cslot]), "prepare_expression");
    if ((rc == PYHOST_OK) != (callables[cslot] != NULL)) abort();
    break;
  }
  case 23: /* this thread's attachment */
    if (arg & 1 && fz.attached) {
      fz_checked(pyhost_thread_detach(h), "thread_detach");
      fz.attached--;
    } else if (fz.attached < 3) {
      fz_checked(rc = pyhost_thread_attach(h), "thread_attach");
      fz.attached += rc == PYHOST_OK;
    }
    break;
  case 24: { /* a host thread calling in while this one waits (outside any scope) */
    if (fz.scopes) break;
    struct worker w = {arg};
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &w) == 0) pthread_join(t, NULL);
    break;
  }
  case 25: { /* a host thread interrupting this one's call, outside any GIL scope */
    if (fz.scopes) break;
    struct interrupter it = {(unsigned)(arg % 16) * 250};
    pthread_t t;
    if (pthread_create(&t, NULL, interrupter, &it) != 0) break;
    if (callables[cslot] && arg & 0x80)
      fz_checked(pyhost_prepared_call(h, callables[cslot], NULL, 0), "interrupted prepared_call");
    else
      fz_checked(pyhost_exec(h, "for _ in range(20000): pass", "<busy>"), "interrupted exec");
    pthread_join(t, NULL);
    /* an interrupt that found nothing running, or came after the call ended, is
     * dropped: it never hits a later call (pyhost.h) */
    rc = pyhost_exec(h, "pass", "<after>");
    if (rc != PYHOST_OK && !fuzz_unit_expired()) {
      fprintf(stderr, "fuzz_api: a later call was hit by an interrupt: %s\n", pyhost_errmsg(h));
      abort();
    }
    break;
  }
  case 26: { /* the module from C */
    static const char *const fnames[] = {"tf", "tg", "th", "echo", "call", "nothing"};
    switch ((arg >> 2) % 5) {
    case 0:
      fz_checked(pyhost_call_namef(h, "fz.remove", "s", fnames[arg % 6]), "fz.remove from C");
      break;
    case 1: fz_readd_typed(); break;
    case 2: fz_checked(pyhost_module_add_value(h, fz.module, "val", values[slot]), "module_add_value"); break;
    case 3:
      fz_checked(pyhost_module_add_exception(h, fz.module, arg & 1 ? "Err" : "Err2",
                                             (pyhost_exc)(arg % 16), arg & 2 ? &v : NULL),
                 "module_add_exception");
      if (v) set_value(slot, v);
      break;
    default:
      fz_checked(pyhost_module_value(h, fz.module, &v), "module_value");
      set_value(slot, v);
      fz_checked(pyhost_type_value(h, arg & 1 ? fz.tbox : fz.box, &v), "type_value");
      set_value((slot + 1) % NVALUES, v);
      pyhost_type_has_weakrefs(fz.tbox);
    }
    break;
  }
  case 27: { /* looking things up */
    static const char *const attrs[] = {"real", "__class__", "n", "add", "nope", "__dict__"};
    static const char *const globs[] = {"V", "F", "T", "nope", "fz", "__builtins__"};
    const pyhost_value *w = values[(slot + 1) % NVALUES];
    switch ((arg >> 3) % 8) {
    case 0: fz_checked(pyhost_import(h, names[arg % NNAMES], &v), "import"); break;
    case 1: fz_checked(pyhost_resolve(h, names[arg % NNAMES], &v), "resolve"); break;
    case 2: fz_checked(pyhost_getattr(h, values[slot], attrs[arg % 6], &v), "getattr"); break;
    case 3: fz_checked(pyhost_setattr(h, values[slot], attrs[arg % 6], w), "setattr"); break;
    case 4: fz_checked(pyhost_get_global(h, globs[arg % 6], &v), "get_global"); break;
    case 5: fz_checked(pyhost_set_global(h, globs[arg % 6], w), "set_global"); break;
    case 6: if (values[slot]) int_text(values[slot]); break;
    default: pyhost_value_lookup(values[slot], attrs[arg % 6]); break;
    }
    if (v) set_value(slot, v);
    break;
  }
  case 28: /* the plugin's other calls */
    if (!fz.plugin) break;
    switch (arg % 4) {
    case 0:
      rc = pyhost_plugin_callf(h, fz.plugin, arg & 4 ? "text" : "val", "O,k=i>O", values[slot], 3, &v);
      check_unwritten(rc, rc != PYHOST_OK && v, "plugin_callf");
      break;
    case 1: fz_checked(pyhost_plugin_hooks(h, fz.plugin, &v), "plugin_hooks"); break;
    case 2: fz_checked(pyhost_plugin_module(h, fz.plugin, &v), "plugin_module"); break;
    default:
      rc = pyhost_plugin_has_hook(h, fz.plugin, arg & 4 ? "val" : "_no");
      fz_checked(rc, "has_hook");
      /* a module name while the plugin has one: an interpreter-level plugin whose restart
       * failed has no interpreter, and so no module (has_hook says MISUSE then) */
      if (!pyhost_plugin_name(fz.plugin)[0] || !pyhost_plugin_path(fz.plugin)[0] ||
          (rc != PYHOST_MISUSE && !pyhost_plugin_module_name(fz.plugin)[0]) ||
          pyhost_plugin_process_id(fz.plugin) != 0 || pyhost_plugin_deps_env(fz.plugin)[0])
        abort();
    }
    set_value(slot, v);
    break;
  case 29: /* TBox from C */
    if (arg & 1) set_value(slot, fz_tbox_new((int64_t)(arg % 8) << 60));
    else if (values[slot]) fz_tbox_poke(values[slot], arg & 2);
    break;
  case 30: /* calls out of place: raising outside a callback, leaving unopened scopes */
    if (pyhost_raise(h, (pyhost_exc)(arg % 16), "out of place") != PYHOST_MISUSE) abort();
    fz_checked(PYHOST_MISUSE, "pyhost_raise outside a callback");
    if (!fz.scopes && pyhost_gil_leave(h) != PYHOST_MISUSE) abort();
    if (!fz.attached && pyhost_thread_detach(h) != PYHOST_MISUSE) abort();
    if (!pyhost_status_name(arg - 64)[0] || !pyhost_errstr(arg - 64)[0] ||
        !pyhost_kind_name((pyhost_kind)(arg % 12))[0])
      abort();
    pyhost_exit_code(h);
    break;
  case 31:
    bulk_loan(slot, arg);
    break;
  case 32:
    bulk_read(slot, arg);
    break;
  default:
    if (arg & 1 && (code / 34) % 2) { /* code 67 and others past 34 (a corpus of before keeps its ops) */
      plan_op(cslot, arg, (uint8_t)(code ^ arg));
      break;
    }
    fz_checked(pyhost_eval(h, "[1, 2.5, 'x'] * 3", &v), "eval");
    set_value(slot, v);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!h) fz_setup();
  fuzz_unit_begin(UNIT_BUDGET_MS);
  for (size_t i = 0; i + 1 < size && i / 2 < MAX_OPS && !fuzz_unit_expired(); i += 2)
    op(data[i], data[i + 1]);
  fuzz_unit_end();
  /* the input's state goes: slots, scopes, attachments, its globals, removals; the
   * runtime must still answer */
  while (fz.scopes) {
    if (pyhost_gil_leave(h)) abort();
    fz.scopes--;
  }
  while (fz.attached) {
    if (pyhost_thread_detach(h)) abort();
    fz.attached--;
  }
  check_borrowed();
  for (int i = 0; i < NCALLABLES; i++) pyhost_callable_free(fz_take_callable(i));
  for (int i = 0; i < NVALUES; i++) set_value(i, NULL);
  if (loan && pyhost_buffer_release(h, loan, NULL)) abort();
  loan = NULL;
  pyhost_plugin_unload(fz.plugin);
  fz.plugin = NULL;
  pyhost_exec(h,
              "import sys\n"
              "sys.modules.setdefault('fz', fz)\n"
              "for k in [k for k in globals() if k not in _fuzz_keep]: del globals()[k]\n"
              "V = F = len\nL = []\nD = {}\nT = None\n",
              "<reset>");
  fz_readd_typed();
  int64_t two = 0;
  for (int tries = 0; tries < 3 && two != 2; tries++) {
    pyhost_value *v = NULL;
    int rc = pyhost_eval(h, "1 + 1", &v);
    if (rc == PYHOST_OK && pyhost_value_to_int(h, v, &two)) abort();
    if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) {
      fprintf(stderr, "fuzz_api: the runtime stopped answering: %s\n", pyhost_errmsg(h));
      abort();
    }
    pyhost_value_free(v);
  }
  if (two != 2) abort();
  return 0;
}
