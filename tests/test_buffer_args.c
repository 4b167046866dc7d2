/* test_buffer_args.c: Python buffers as arguments of host callbacks (issue 37 item 2):
 * typed parameters of type buffer and rwbuffer, and pyhost_args_view in the fast form.
 * The view is borrowed for the call and released by pyhost after it, whatever the
 * callback does; a callback that keeps it (or releases it itself) is refused, so
 * nothing reads or releases the exporter's memory twice.  Under ASan (PYTHONMALLOC=
 * malloc there) a release of a freed exporter fails the run. */
#include "pyhost.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

static pyhost_module *mod;
static pyhost_type *crc_type;
static int calls;
static pyhost_view kept;             /* a copy a callback keeps past its call */
static const pyhost_view *kept_ptr;  /* and the pointer it was given */
static int release_inside;           /* keeper: release its own view during the call */

/* "len:sum:format:ndim:readonly:copied" of a view: what the callbacks answer. */
static int describe(pyhost *h, pyhost_ret *ret, const pyhost_view *v) {
  unsigned long sum = 0;
  for (size_t i = 0; i < v->len; i++) sum += ((const unsigned char *)v->data)[i];
  char out[128];
  int n = snprintf(out, sizeof out, "%zu:%lu:%s:%d:%d:%d", v->len, sum, v->format, v->ndim,
                   v->readonly, v->copied);
  return pyhost_ret_str(h, ret, out, (size_t)n);
}

/* checksum(data: buffer) */
static int checksum(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  calls++;
  const pyhost_view *v = argv[0].u.p;
  CHECK(argv[0].kind == PYHOST_ARG_VIEW && argv[0].len == v->len);
  return describe(h, ret, v);
}

/* fill(data: rwbuffer, byte: int): every byte set, in the caller's object */
static int fill(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  const pyhost_view *v = argv[0].u.p;
  CHECK(!v->readonly);
  memset(v->data, (int)argv[1].u.i, v->len);
  return pyhost_ret_int(h, ret, (int64_t)v->len);
}

/* maybe(data: buffer = None): the length, or -1 for None */
static int maybe(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  if (argv[0].kind == PYHOST_ARG_NONE) return pyhost_ret_int(h, ret, -1);
  return pyhost_ret_int(h, ret, (int64_t)argv[0].len);
}

/* keeper(data: buffer, fail: bool): keeps a copy of its view past the call (which
 * pyhost_view_release must refuse); with release_inside releases its own view during
 * the call (refused too: the bytearray stays unresizable); fail: raises afterwards */
static int keeper(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  calls++;
  const pyhost_view *v = argv[0].u.p;
  kept = *v;
  kept_ptr = v;
  if (release_inside) {
    pyhost_view_release(h, (pyhost_view *)v);
    CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
    CHECK(v->data != NULL);
    /* the exporter still lends its memory: a bytearray refuses to resize */
    CHECK_RC(pyhost_exec(h, "try:\n    ba.extend(b'0123456789' * 100)\n    inside = 'resized'\n"
                            "except BufferError:\n    inside = 'BufferError'\n", "<keeper>"),
             PYHOST_OK);
  }
  if (argv[1].u.b) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "keeper failed on purpose");
  return describe(h, ret, v);
}

/* a fast function: view(obj, flags) through pyhost_args_view */
static int fast_view(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  int64_t flags;
  const pyhost_view *v = NULL;
  int rc;
  if ((rc = pyhost_args_int(h, args, 1, &flags)) || (rc = pyhost_args_view(h, args, 0, (unsigned)flags, &v)))
    return rc;
  kept = *v;
  return describe(h, ret, v);
}

/* unregister(): removes checksum, from inside a __buffer__ */
static int unregister(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv, (void)ret;
  return pyhost_module_remove(h, mod, "checksum");
}

/* Crc.update(data: buffer): a typed method with a buffer parameter */
static int crc_update(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  const pyhost_view *v = argv[0].u.p;
  int64_t *acc = payload;
  for (size_t i = 0; i < v->len; i++) *acc += ((const unsigned char *)v->data)[i];
  return pyhost_ret_int(h, ret, *acc);
}

/* Crc(seed: buffer = None): a typed constructor with a buffer parameter */
static int crc_new(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  int64_t *acc = *payload;
  *acc = 0;
  if (argv[0].kind == PYHOST_ARG_VIEW) {
    const pyhost_view *v = argv[0].u.p;
    for (size_t i = 0; i < v->len; i++) *acc += ((const unsigned char *)v->data)[i];
  }
  return PYHOST_OK;
}

static pyhost *start(void) {
  pyhost *h = check_start(NULL);
  calls = 0;
  release_inside = 0;
  CHECK_RC(pyhost_module_new(h, "bufargs", NULL, &mod), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "checksum(data: buffer)", checksum, NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "fill(data: rwbuffer, byte: int = 0)", fill,
                                            NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "maybe(data: buffer = None)", maybe, NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "keeper(data: buffer, fail: bool = False)",
                                            keeper, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "unregister()", unregister, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, mod, "view", fast_view, NULL, NULL), PYHOST_OK);
  static const pyhost_typed_method_def methods[] = {{"update(data: buffer)", crc_update, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Crc", .typed_methods = methods,
                           .n_typed_methods = 1, .typed_constructor = crc_new,
                           .constructor_signature = "Crc(seed: buffer = None)",
                           .payload_size = sizeof(int64_t)};
  CHECK_RC(pyhost_type_new(h, mod, &spec, &crc_type), PYHOST_OK);
  check_run(h, "import bufargs, sys, array\n"
         "def err(f, *a, **k):\n"
         "    try:\n        f(*a, **k)\n    except Exception as e:\n"
         "        return type(e).__name__ + ': ' + str(e)\n");
  return h;
}

static void finish(pyhost *h) {
  pyhost_type_free(h, crc_type);
  pyhost_free(h);
}

static int in_place(void) { return check_minor() >= 11; }

TEST_CASE(typed_buffer_parameters) {
  pyhost *h = start();
  /* bytes and bytearray in place on every version */
  check_expect_py(h, "bufargs.checksum(b'abc')", "'3:294:B:1:1:0'");
  check_expect_py(h, "bufargs.checksum(bytearray(b'abc'))", "'3:294:B:1:0:0'");
  check_expect_py(h, "bufargs.checksum(data=b'')", "'0:0:B:1:1:0'");
  /* a contiguous memoryview slice: its own bytes; in place from 3.11, a copy before */
  check_run(h, "mv = memoryview(bytearray(range(10)))");
  check_expect_py(h, "bufargs.checksum(mv[2:5])", in_place() ? "'3:9:B:1:0:0'" : "'3:9:B:1:1:1'");
  /* array.array keeps its format */
  check_run(h, "ar = array.array('i', [1, 2, 3])");
  check_expect_py(h, "bufargs.checksum(ar).split(':')[2:4]", "['i', '1']");
  check_expect_py(h, "bufargs.checksum(ar).split(':')[0]", "'12'");
  /* a strided view is no contiguous buffer (3.11+; before, it arrives as a C-ordered copy) */
  if (in_place())
    check_expect_py(h, "err(bufargs.checksum, mv[::2])",
              "\"TypeError: bufargs.checksum() argument 'data' must be contiguous buffer, not memoryview\"");
  else
    check_expect_py(h, "bufargs.checksum(mv[::2])", "'5:20:B:1:1:1'");
  /* rwbuffer: the callback's writes reach the caller's object */
  check_run(h, "ba = bytearray(4)\nn = bufargs.fill(ba, 7)");
  check_expect_py(h, "(n, ba)", "(4, bytearray(b'\\x07\\x07\\x07\\x07'))");
  if (in_place())
    check_expect_py(h, "(bufargs.fill(mv[8:], 1), mv.tolist()[7:])", "(2, [7, 1, 1])");
  else /* a memoryview lends a copy before 3.11: only bytearray is writable in place */
    check_expect_py(h, "err(bufargs.fill, mv[8:], 1)",
              "\"TypeError: bufargs.fill() argument 'data' must be bytearray (other exporters lend "
              "no writable memory before Python 3.11), not memoryview\"");
  /* wrong arguments: CPython's words, the parameter named */
  check_expect_py(h, "err(bufargs.checksum, 5)",
            "\"TypeError: bufargs.checksum() argument 'data' must be bytes-like object, not int\"");
  check_expect_py(h, "err(bufargs.checksum, 'text')",
            "\"TypeError: bufargs.checksum() argument 'data' must be bytes-like object, not str\"");
  check_expect_py(h, "err(bufargs.fill, b'ro')",
            "\"TypeError: bufargs.fill() argument 'data' must be read-write bytes-like object, not bytes\"");
  check_expect_py(h, "err(bufargs.checksum)", "\"TypeError: bufargs.checksum() missing required argument 'data' (pos 1)\"");
  check_expect_py(h, "err(bufargs.maybe, 1.5)",
            "\"TypeError: bufargs.maybe() argument 'data' must be bytes-like object or None, not float\"");
  /* None as the default, and the signature Python reads */
  check_expect_py(h, "(bufargs.maybe(), bufargs.maybe(None), bufargs.maybe(b'xy'))", "(-1, -1, 2)");
  check_run(h, "import inspect");
  check_expect_py(h, "str(inspect.signature(bufargs.checksum))", "'(data)'");
  check_expect_py(h, "str(inspect.signature(bufargs.fill))", "'(data, byte=0)'");
  check_expect_py(h, "str(inspect.signature(bufargs.maybe))", "'(data=None)'");
  /* a typed method */
  check_expect_py(h, "(lambda c: (c.update(b'\\x01\\x02'), c.update(bytearray(b'\\x03'))))(bufargs.Crc())", "(3, 6)");
  check_expect_py(h, "bufargs.Crc(seed=b'\\x05').update(b'\\x01')", "6");
  check_expect_py(h, "err(bufargs.Crc, 2)",
            "\"TypeError: bufargs.Crc() argument 'seed' must be bytes-like object or None, not int\"");
  check_expect_py(h, "err(bufargs.Crc().update, 3)",
            "\"TypeError: bufargs.Crc.update() argument 'data' must be bytes-like object, not int\"");
  /* the fast form's getter, with pyhost_view_get's flags */
  check_expect_py(h, "bufargs.view(b'ab', 0)", "'2:195:B:1:1:0'");
  check_expect_py(h, "err(bufargs.view, 7, 0)", "'TypeError: bufargs.view() argument 0: expected bytes-like object, got int'");
  check_expect_py(h, "err(bufargs.view, b'ab', 1)",
            "'TypeError: bufargs.view() argument 0: expected read-write bytes-like object, got bytes'");
  check_expect_py(h, "bufargs.view(bytearray(b'ab'), 3)", "'2:195:B:1:0:0'");
  /* signatures pyhost refuses */
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "f(data: buffer = b'')", checksum, NULL, NULL),
           PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_typed_function(h, mod, "f(data: buffers)", checksum, NULL, NULL),
           PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "bytes, buffer or rwbuffer");
  /* a borrowed view is no argument of a call */
  pyhost_arg a = {PYHOST_ARG_VIEW, 0, {0}};
  pyhost_callable *c = NULL;
  CHECK_RC(pyhost_prepare_name(h, "len", &c), PYHOST_OK);
  CHECK_RC(pyhost_prepared_call(h, c, &a, 1), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "PYHOST_ARG_VIEW");
  pyhost_callable_free(c);
  finish(h);
}

TEST_CASE(typed_buffer_released_after_the_call) {
  pyhost *h = start();
  check_run(h, "ba = bytearray(b'abcdef')\nbase = sys.getrefcount(ba)\n"
         "def resizable(b):\n    try:\n        b.append(0)\n        b.pop()\n"
         "        return True\n    except BufferError:\n        return False\n");
  check_expect_py(h, "bufargs.keeper(ba)", "'6:597:B:1:0:0'");
  /* released once, after the call: the bytearray resizes, the count is back */
  check_expect_py(h, "(resizable(ba), sys.getrefcount(ba) - base)", "(True, 0)");
  /* the copy kept past the call: its release is refused, nothing released twice */
  pyhost_view_release(h, &kept);
  CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
  /* the pointer kept: still pyhost's memory, an empty view, its release refused */
  CHECK(kept_ptr->data == NULL && kept_ptr->len == 0);
  pyhost_view_release(h, (pyhost_view *)kept_ptr);
  CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
  check_expect_py(h, "(resizable(ba), sys.getrefcount(ba) - base)", "(True, 0)");
  /* a failing callback: released all the same */
  check_expect_py(h, "err(bufargs.keeper, ba, True)", "'ValueError: keeper failed on purpose'");
  check_expect_py(h, "(resizable(ba), sys.getrefcount(ba) - base)", "(True, 0)");
  /* a callback that releases its view itself: refused, the export held to the end */
  release_inside = 1;
  check_expect_py(h, "bufargs.keeper(ba)", "'6:597:B:1:0:0'");
  check_expect_py(h, "(inside, resizable(ba), sys.getrefcount(ba) - base)", "('BufferError', True, 0)");
  release_inside = 0;
  /* the exporter gone after the call: a late release of the copy touches nothing (a
   * read after free under ASan otherwise) */
  check_expect_py(h, "bufargs.keeper(bytearray(b'x' * 1000))", "'1000:120000:B:1:0:0'");
  check_run(h, "import gc\ngc.collect()");
  pyhost_view_release(h, &kept);
  CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
  CHECK(kept_ptr->data == NULL);
  pyhost_view_release(h, (pyhost_view *)kept_ptr);
  CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
  /* the fast form's view likewise */
  check_expect_py(h, "bufargs.view(ba, 0)", "'6:597:B:1:0:0'");
  check_expect_py(h, "(resizable(ba), sys.getrefcount(ba) - base)", "(True, 0)");
  pyhost_view_release(h, &kept);
  CHECK_CONTAINS(pyhost_errmsg(h), "borrowed view");
  check_expect_py(h, "sys.getrefcount(ba) - base", "0");
  /* a refused call (too many arguments) after a view was taken: released too */
  check_expect_py(h, "err(bufargs.keeper, ba, False, 3)", "'TypeError: bufargs.keeper() takes at most 2 positional arguments (3 given)'");
  check_expect_py(h, "(resizable(ba), sys.getrefcount(ba) - base)", "(True, 0)");
  finish(h);
}

TEST_CASE(typed_buffer_hostile_exporters) {
  pyhost *h = start();
  /* not a buffer: none of its dunders runs, TypeError names it */
  check_run(h, "class Sneaky:\n    ran = []\n"
         "    def __index__(self): Sneaky.ran.append('index'); return 5\n"
         "    def __len__(self): Sneaky.ran.append('len'); return 5\n"
         "    def __iter__(self): Sneaky.ran.append('iter'); return iter(b'abcde')\n"
         "    def __bytes__(self): Sneaky.ran.append('bytes'); return b'abcde'\n");
  check_expect_py(h, "(err(bufargs.checksum, Sneaky()), err(bufargs.fill, Sneaky()), Sneaky.ran)",
            "(\"TypeError: bufargs.checksum() argument 'data' must be bytes-like object, not __main__.Sneaky\", "
            "\"TypeError: bufargs.fill() argument 'data' must be read-write bytes-like object, not __main__.Sneaky\", [])");
  CHECK(calls == 0);
  if (check_minor() < 12) { /* no buffer written in Python before 3.12 */
    finish(h);
    return;
  }
  /* an exporter written in Python (3.12+): its code runs inside the binding */
  check_run(h, "class Exporter:\n"
         "    def __init__(self, data, how=None):\n"
         "        self.data, self.how, self.released = bytearray(data), how, 0\n"
         "    def __buffer__(self, flags):\n"
         "        if self.how == 'raise': raise KeyError('no buffer today')\n"
         "        if self.how == 'recurse': assert bufargs.checksum(Exporter(b'z')) == '1:122:B:1:0:0'\n"
         "        if self.how == 'unregister': bufargs.unregister()\n"
         "        if self.how == 'other': return 42\n"
         "        return memoryview(self.data)\n"
         "    def __release_buffer__(self, view):\n"
         "        self.released += 1\n"
         "        view.release()\n"
         "        if self.how == 'release raises': raise RuntimeError('release boom')\n"
         "seen = []\n"
         "sys.unraisablehook = lambda u: seen.append(str(u.exc_value))\n");
  check_run(h, "e = Exporter(b'abc')\nr = bufargs.checksum(e)");
  check_expect_py(h, "(r, e.released)", "('3:294:B:1:0:0', 1)");
  check_run(h, "e = Exporter(b'abc', 'raise')");
  check_expect_py(h, "(err(bufargs.checksum, e), e.released)", "(\"KeyError: 'no buffer today'\", 0)");
  check_run(h, "e = Exporter(b'ab', 'recurse')\nr = bufargs.checksum(e)");
  check_expect_py(h, "(r, e.released)", "('2:195:B:1:0:0', 1)");
  check_run(h, "e = Exporter(b'ab', 'other')");
  check_expect_py(h, "(lambda m: m.startswith('TypeError') and '__buffer__' in m)(err(bufargs.checksum, e))", "True");
  check_run(h, "e = Exporter(b'ab', 'release raises')\nr = bufargs.checksum(e)");
  check_expect_py(h, "(r, e.released, seen)", "('2:195:B:1:0:0', 1, ['release boom'])");
  /* writable asked of a Python exporter: its memoryview is writable */
  check_run(h, "e = Exporter(b'ab')\nn = bufargs.fill(e, 5)");
  check_expect_py(h, "(n, e.data, e.released)", "(2, bytearray(b'\\x05\\x05'), 1)");
  /* the function unregistered by the exporter: the call is refused before the
   * callback, the view released */
  int before = calls;
  check_run(h, "e = Exporter(b'ab', 'unregister')\nf = bufargs.checksum\nmsg = err(f, e)");
  CHECK(calls == before);
  check_expect_py(h, "(msg.startswith('RuntimeError'), 'unregistered' in msg, e.released)", "(True, True, 1)");
  check_run(h, "del f, e");
  finish(h);
}

TEST_CASE(typed_buffer_numpy) {
  pyhost *h = start();
  if (!check_numpy(h)) {
    finish(h);
    SKIP("numpy is not installed for this Python");
  }
  check_run(h, "a = np.arange(6, dtype=np.int16).reshape(2, 3)");
  check_expect_py(h, "bufargs.checksum(a)", in_place() ? "'12:15:h:2:0:0'" : "'12:15:h:2:1:1'");
  /* a transposed array is strided: refused from 3.11, a C-ordered copy before */
  if (in_place())
    check_expect_py(h, "err(bufargs.checksum, a.T)",
              "\"TypeError: bufargs.checksum() argument 'data' must be contiguous buffer, not numpy.ndarray\"");
  check_run(h, "a.flags.writeable = False");
  check_expect_py(h, "err(bufargs.fill, a, 1)",
            in_place() ? "\"TypeError: bufargs.fill() argument 'data' must be read-write bytes-like object, not numpy.ndarray\""
                       : "\"TypeError: bufargs.fill() argument 'data' must be bytearray (other exporters lend no "
                         "writable memory before Python 3.11), not numpy.ndarray\"");
  check_run(h, "b = np.zeros(4, dtype=np.uint8)");
  if (in_place()) {
    check_run(h, "bufargs.fill(b, 9)");
    check_expect_py(h, "b.tolist()", "[9, 9, 9, 9]");
  }
  finish(h);
}
