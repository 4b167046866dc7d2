/* fuzz_typed.c: libFuzzer target for typed signatures (issue 39): a signature of any
 * text, read by pyhost_module_add_typed_function, as a typed method of a host type
 * (pyhost_type_new) or as its typed constructor, then called from Python with the
 * arguments the rest of the input chooses.
 *
 * Input: one mode byte (bits 0-1: 0 a function, 1 a method, 2 a constructor named after
 * the type, 3 a constructor under the signature's own name), the signature up to a NUL
 * (at most 300 bytes), then the calls (fuzz_typed_oracle.py reads them).
 *
 * Checks: a refused signature is PYHOST_MISUSE (or PYHOST_PYEXC when Python refuses the
 * name) with a message, and a message naming a column names one inside the text; an
 * accepted one reads back through inspect.signature and binds every call as
 * inspect.Signature.bind does, giving the callback each argument and each default
 * exactly as Python shows it, running no Python code to read one
 * (fuzz_typed_oracle.py).  The callback's str arguments end in a NUL at their length;
 * its buffer and rwbuffer arguments (bytes, bytearray, memoryviews, array.array,
 * read-only, writable, strided, released) are C-contiguous views whose release by the
 * host is refused. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "fuzz_python.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef PYHOST_FUZZ_DIR
#  define PYHOST_FUZZ_DIR "."
#endif

enum { SIG_MAX = 300, MAGIC = 0x51617ed };

static pyhost *h;
static pyhost_module *ty;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_typed: %s\n%s\n", what, detail);
  abort();
}

/* A buffer or rwbuffer argument (a borrowed view) as the tuple (bytes, readonly,
 * format, itemsize, shape) the oracle compares; its own invariants checked here: the
 * argument's len is the view's, the shape and itemsize make that len C-contiguously,
 * and the host's release of a borrowed view is refused, leaving it whole. */
static pyhost_value *view_tuple(const pyhost_arg *a) {
  const pyhost_view *v = a->u.p;
  if (!v || a->len != v->len) die("a buffer argument's len is not its view's", "");
  size_t items = 1;
  ptrdiff_t stride = (ptrdiff_t)v->itemsize;
  pyhost_value *shape = pyhost_value_tuple();
  for (int d = v->ndim - 1; d >= 0; d--) {
    if (v->shape[d] > 1 && v->strides[d] != stride) die("a buffer argument is not C-contiguous", "");
    stride *= v->shape[d];
    items *= (size_t)v->shape[d];
  }
  for (int d = 0; d < v->ndim; d++) pyhost_value_append(shape, pyhost_value_int(v->shape[d]));
  if (items * v->itemsize != v->len) die("a buffer argument's shape does not make its len", v->format);
  if (v->len && !v->data) die("a buffer argument without its data", "");
  void *data = v->data;
  pyhost_view_release(h, (pyhost_view *)v);
  if (v->data != data || !strstr(pyhost_errmsg(h), "borrowed view"))
    die("the host released a borrowed view", pyhost_errmsg(h));
  pyhost_value *t = pyhost_value_tuple();
  pyhost_value_append(t, pyhost_value_bytes(v->data, v->len));
  pyhost_value_append(t, pyhost_value_bool(v->readonly));
  pyhost_value_append(t, pyhost_value_str(v->format, strlen(v->format)));
  pyhost_value_append(t, pyhost_value_int((int64_t)v->itemsize));
  pyhost_value_append(t, shape);
  return t;
}

/* The callback's arguments as a tuple (argv has as many as the signature declares:
 * the oracle compares the length). */
static pyhost_value *args_tuple(const pyhost_arg *argv, size_t n) {
  pyhost_value *t = pyhost_value_tuple();
  for (size_t i = 0; t && i < n; i++) {
    const pyhost_arg *a = &argv[i];
    if (a->kind == PYHOST_ARG_STR && memchr(a->u.s, 0, a->len + 1) != a->u.s + a->len &&
        strlen(a->u.s) > a->len)
      die("a str argument does not end in a NUL at its length", a->u.s);
    pyhost_value_append(t, a->kind == PYHOST_ARG_INT     ? pyhost_value_int(a->u.i)
                           : a->kind == PYHOST_ARG_FLOAT ? pyhost_value_float(a->u.d)
                           : a->kind == PYHOST_ARG_BOOL  ? pyhost_value_bool(a->u.b)
                           : a->kind == PYHOST_ARG_STR   ? pyhost_value_str(a->u.s, a->len)
                           : a->kind == PYHOST_ARG_BYTES ? pyhost_value_bytes(a->u.p, a->len)
                           : a->kind == PYHOST_ARG_VIEW  ? view_tuple(a)
                           : a->kind == PYHOST_ARG_NONE  ? pyhost_value_none()
                                                         : NULL);
  }
  return t;
}

/* How many parameters a signature pyhost accepted declares: its ':'s outside quotes. */
static size_t nparams(const char *sig) {
  size_t n = 0;
  char quote = 0;
  for (const char *p = sig; *p; p++) {
    if (quote) quote = *p == quote ? 0 : quote;
    else if (*p == '\'' || *p == '"') quote = *p;
    else n += *p == ':';
  }
  return n;
}

struct rec {
  unsigned magic;
  size_t n;
};

static int returned(pyhost *hh, pyhost_ret *ret, const pyhost_arg *argv, size_t n) {
  pyhost_value *t = args_tuple(argv, n);
  int rc = pyhost_ret_value(hh, ret, t);
  pyhost_value_free(t);
  return rc;
}

static int function_cb(pyhost *hh, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  struct rec *r = ud;
  if (r->magic != MAGIC) die("a callback's userdata is not its record", "");
  return returned(hh, ret, argv, r->n);
}

static int method_cb(pyhost *hh, void *payload, void *ud, const pyhost_arg *argv,
                     pyhost_ret *ret) {
  (void)payload;
  return function_cb(hh, ud, argv, ret);
}

/* The constructor keeps its arguments in the payload; got() returns them. */
struct made {
  unsigned magic;
  pyhost_value *args;
};

static int ctor_cb(pyhost *hh, void *ud, const pyhost_arg *argv, void **payload) {
  (void)hh;
  struct rec *r = ud;
  struct made *m = malloc(sizeof *m);
  if (!m || r->magic != MAGIC) abort();
  m->magic = MAGIC;
  m->args = args_tuple(argv, r->n);
  *payload = m;
  return PYHOST_OK;
}

static void ctor_free(void *payload, void *ud) {
  (void)ud;
  struct made *m = payload;
  if (!m) return;
  if (m->magic != MAGIC) abort();
  pyhost_value_free(m->args);
  m->magic = 0;
  free(m);
}

static int got_cb(pyhost *hh, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv;
  struct made *m = payload;
  if (!m || m->magic != MAGIC) die("got() on a payload that is not live", "");
  return pyhost_ret_value(hh, ret, m->args);
}

static void setup(void) {
  h = fuzz_python_full();
  char path[4096];
  snprintf(path, sizeof path, "%s/fuzz_typed_oracle.py", PYHOST_FUZZ_DIR);
  int rc = pyhost_module_new(h, "ty", NULL, &ty);
  if (!rc) rc = pyhost_exec_file(h, path);
  if (!rc)
    rc = pyhost_exec(h,
                     "import ty, inspect, sys\n"
                     "def _fuzz_run(mode, text, program):\n"
                     "    text = text.decode('utf-8', 'surrogateescape')\n"
                     "    name = text.split('(')[0].strip()\n"
                     "    if mode == 0:\n"
                     "        f = getattr(ty, name)\n"
                     "        check(text, inspect.signature(f), f, program)\n"
                     "    elif mode == 1:\n"
                     "        f = getattr(_obj, name)\n"
                     "        check(text, inspect.signature(f), f, program)\n"
                     "    else:\n"
                     "        sig = inspect.signature(ty.TTsig)\n"
                     "        if sys.version_info >= (3, 10):\n"
                     "            assert inspect.signature(ty.TT) == sig, (inspect.signature(ty.TT), sig)\n"
                     "        check(text, sig, lambda *a, **k: ty.TT(*a, **k).got(), program)\n",
                     "<fuzz setup>");
  if (rc) die("setup", pyhost_errmsg(h));
}

/* A refusal names its cause, and a column inside the text. */
static void refused(int rc, const char *sig) {
  const char *msg = pyhost_errmsg(h);
  if (rc != PYHOST_MISUSE && rc != PYHOST_PYEXC) die("a signature refused with an odd status", msg);
  if (!msg[0] || !strcmp(msg, "not an error")) die("a signature refused without a message", sig);
  /* the message quotes the signature before its reason: the last "at column " is the
   * reason's, whatever the signature's text holds */
  const char *col = NULL;
  for (const char *p = strstr(msg, "at column "); p; p = strstr(p + 1, "at column ")) col = p;
  if (rc == PYHOST_MISUSE && col) {
    long c = strtol(col + 10, NULL, 10);
    if (c < 1 || (size_t)c > strlen(sig) + 1) die("a refusal names a column outside the text", msg);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!h) setup();
  if (size < 1) return 0;
  int mode = data[0] & 3;
  size_t n = 0;
  while (1 + n < size && data[1 + n] && n < SIG_MAX) n++;
  char sig[SIG_MAX + 3 + 1];
  memcpy(sig, data + 1, n);
  sig[n] = '\0';
  const uint8_t *program = data + 1 + n + (1 + n < size);
  size_t plen = size - (size_t)(program - data);
  /* a constructor is named after its type: TT and the text after the signature's name */
  char ctor[sizeof sig + 2];
  const char *open = strchr(sig, '(');
  if (mode == 2) snprintf(ctor, sizeof ctor, "TT%s", open ? open : sig);
  else snprintf(ctor, sizeof ctor, "%s", sig);

  /* a function's record goes when it is removed (pyhost.h: its userdata is no longer
   * used then); a type's stays, as a class could outlive its handle */
  static struct rec type_rec;
  struct rec *r = mode == 0 ? malloc(sizeof *r) : &type_rec;
  if (!r) abort();
  r->magic = MAGIC;
  r->n = 0;
  pyhost_type *t = NULL;
  pyhost_value *obj = NULL;
  int rc;
  fuzz_unit_begin(2000);
  if (mode == 0) {
    rc = pyhost_module_add_typed_function(h, ty, sig, function_cb, r, NULL);
  } else {
    pyhost_typed_method_def methods[2] = {{sig, method_cb, NULL}, {"got()", got_cb, NULL}};
    pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT};
    spec.name = "TT";
    spec.userdata = r;
    spec.typed_methods = mode == 1 ? methods : methods + 1;
    spec.n_typed_methods = 1;
    if (mode >= 2) {
      spec.typed_constructor = ctor_cb;
      spec.constructor_signature = ctor;
      spec.destructor = ctor_free;
    }
    rc = pyhost_type_new(h, ty, &spec, &t);
    /* A class shows its constructor's signature from 3.10 only (docs/host-types.md:
     * CPython reads a heap type's doc for it from then on); the same text as a typed
     * function, TTsig, gives the oracle the signature to bind calls with, on every
     * version, and from 3.10 the two must agree. */
    if (rc == PYHOST_OK && mode >= 2) {
      char fn[sizeof ctor + 8];
      snprintf(fn, sizeof fn, "TTsig%s", open ? open : "");
      if (pyhost_module_add_typed_function(h, ty, fn, function_cb, r, NULL) != PYHOST_OK)
        die("a constructor's signature refused as a function's", pyhost_errmsg(h));
    }
    if (rc == PYHOST_OK && mode == 1) {
      rc = pyhost_object_new(h, t, NULL, &obj);
      if (!rc) rc = pyhost_set_global(h, "_obj", obj);
      if (rc) die("an instance of an accepted type", pyhost_errmsg(h));
    }
  }
  if (rc != PYHOST_OK) {
    refused(rc, mode >= 2 ? ctor : sig);
    if (mode == 0) free(r);
    fuzz_unit_end();
    return 0;
  }
  r->n = nparams(mode >= 2 ? ctor : sig);
  pyhost_value *text = pyhost_value_bytes(mode >= 2 ? ctor : sig, strlen(mode >= 2 ? ctor : sig));
  pyhost_value *prog = pyhost_value_bytes(program, plen);
  rc = pyhost_call_namef(h, "_fuzz_run", "iOO", mode, text, prog);
  fuzz_unit_end();
  if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) die("the oracle disagrees", pyhost_errmsg(h));
  pyhost_value_free(text);
  pyhost_value_free(prog);
  /* the function or type goes, and with it every use of r */
  if (mode == 0) {
    char name[SIG_MAX + 1];
    size_t k = strspn(sig, " \t\n");
    size_t len = strcspn(sig + k, " \t\n(");
    snprintf(name, sizeof name, "%.*s", (int)len, sig + k);
    if (pyhost_module_remove(h, ty, name) != PYHOST_OK) die("removing an accepted function", name);
    free(r);
  } else {
    if (obj) pyhost_set_global(h, "_obj", NULL);
    pyhost_value_free(obj);
    if (mode >= 2 && pyhost_module_remove(h, ty, "TTsig") != PYHOST_OK)
      die("removing the constructor's signature as a function", pyhost_errmsg(h));
    pyhost_exec(h, "import gc\nty.TT = None\ngc.collect()\n", "<fuzz reset>");
    pyhost_type_free(h, t);
  }
  return 0;
}
