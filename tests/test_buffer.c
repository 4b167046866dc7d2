/* test_buffer.c: bulk data without copies (issue 37): host memory lent to Python as a
 * memoryview with a safe lifetime, Python buffers read by the host in place, arrays of
 * numbers, and the letters of the calls in one line.  The memory lent is malloc'd and
 * freed by the free callback, so under ASan any read after the host's release fails. */
#include "pyhost.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int freed;
static void free_data(void *data, void *userdata) {
  (void)userdata;
  free(data);
  freed++;
}

/* A 1-D buffer of n items of letter fmt, copied from src into malloc'd memory that
 * free_data frees; bound to the global `name`. */
static pyhost_buffer *lend(pyhost *h, const char *name, const char *fmt, const void *src,
                           size_t itemsize, size_t n, int writable) {
  void *data = malloc(itemsize * n + 1);
  memcpy(data, src, itemsize * n);
  pyhost_buffer_spec s = {data, fmt, 1, {n}, writable, free_data, NULL};
  pyhost_buffer *b = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_buffer_value(h, b, &v), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, name, v), PYHOST_OK);
  pyhost_value_free(v);
  return b;
}

static int in_place(void) { return check_minor() >= 11; }

TEST_CASE(formats_and_shapes) {
  pyhost *h = check_start(NULL);
  int64_t q[4] = {1, -2, INT64_MAX, INT64_MIN};
  double d[3] = {0.5, -1.25, 1e300};
  unsigned char bytes[5] = {0, 1, 2, 254, 255};
  pyhost_buffer *bq = lend(h, "q", "q", q, 8, 4, 0);
  pyhost_buffer *bd = lend(h, "d", "d", d, 8, 3, 0);
  pyhost_buffer *bb = lend(h, "b", NULL, bytes, 1, 5, 0);
  CHECK(pyhost_buffer_in_place(bq) == in_place());
  check_expect_py(h, "(q.format, q.itemsize, q.ndim, q.shape, q.readonly, q.tolist())",
            "('q', 8, 1, (4,), True, [1, -2, 9223372036854775807, -9223372036854775808])");
  check_expect_py(h, "(d.format, d.tolist())", "('d', [0.5, -1.25, 1e+300])");
  check_expect_py(h, "(b.format, b.tolist(), bytes(b[3:]))", "('B', [0, 1, 2, 254, 255], b'\\xfe\\xff')");
  /* a 2 x 3 matrix of int32, C order */
  int32_t *m = malloc(6 * sizeof *m);
  for (int i = 0; i < 6; i++) m[i] = i * 10;
  pyhost_buffer_spec s = {m, "i", 2, {2, 3}, 0, free_data, NULL};
  pyhost_buffer *bm = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &bm), PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_buffer_value(h, bm, &v), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "m", v), PYHOST_OK);
  pyhost_value_free(v);
  check_expect_py(h, "(m.shape, m.strides, m.tolist(), m[1, 2], m.nbytes)",
            "((2, 3), (12, 4), [[0, 10, 20], [30, 40, 50]], 50, 24)");
  /* slices and casts of the view read the same memory */
  check_expect_py(h, "(q[1:3].tolist(), q[::-2].tolist(), b.cast('B', [5]).tolist()[4])",
            "([-2, 9223372036854775807], [-9223372036854775808, -2], 255)");
  check_expect_py(h, "m.cast('B').cast('i', [3, 2]).tolist()", "[[0, 10], [20, 30], [40, 50]]");
  check_run(h, "del q, d, b, m");
  size_t left = 9;
  freed = 0;
  pyhost_buffer *all[] = {bq, bd, bb, bm};
  for (int i = 0; i < 4; i++) {
    CHECK_RC(pyhost_buffer_release(h, all[i], &left), PYHOST_OK);
    CHECK(left == 0);
  }
  CHECK(freed == 4);
  pyhost_free(h);
}

TEST_CASE(readonly_and_writable) {
  pyhost *h = check_start(NULL);
  int64_t q[3] = {1, 2, 3};
  pyhost_buffer *ro = lend(h, "ro", "q", q, 8, 3, 0);
  pyhost_buffer *rw = lend(h, "rw", "q", q, 8, 3, 1);
  check_run(h, "try:\n    ro[0] = 5\nexcept TypeError as e:\n    err = str(e)\n");
  check_expect_py(h, "err", "'cannot modify read-only memory'");
  check_expect_py(h, "(ro.readonly, rw.readonly)", "(True, False)");
  check_run(h, "rw[1] = 42\nrw[2] = -7");
  check_expect_py(h, "rw.tolist()", "[1, 42, -7]");
  if (in_place()) {
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_eval(h, "rw.obj", &v), PYHOST_OK); /* the exporter */
    CHECK_STREQ(pyhost_value_type_name(v), "pyhost.HostMemory");
    pyhost_value_free(v);
    check_expect_py(h, "rw.obj.__class__.__name__", "'HostMemory'");
    /* a consumer asking the exporter itself for writable memory is refused */
    check_run(h, "import io\ntry:\n    io.BytesIO(b'x' * 8).readinto(ro.obj)\n    err = None\n"
           "except (BufferError, TypeError) as e:\n    err = type(e).__name__\n");
    check_expect_py(h, "(err, ro[0])", "('TypeError', 1)");
  }
  check_run(h, "del ro, rw");
  freed = 0;
  CHECK_RC(pyhost_buffer_release(h, ro, NULL), PYHOST_OK);
  CHECK_RC(pyhost_buffer_release(h, rw, NULL), PYHOST_OK);
  CHECK(freed == 2);
  pyhost_free(h);
}

/* the writes Python made are in the host's memory when the free callback gets it */
static int64_t written[3];
static void keep_then_free(void *data, void *userdata) {
  (void)userdata;
  memcpy(written, data, sizeof written);
  free(data);
  freed++;
}

TEST_CASE(writes_reach_the_host) {
  pyhost *h = check_start(NULL);
  int64_t *q = malloc(3 * sizeof *q);
  q[0] = 1, q[1] = 2, q[2] = 3;
  pyhost_buffer_spec s = {q, "q", 1, {3}, 1, keep_then_free, NULL};
  pyhost_buffer *b = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_OK);
  CHECK_RC(pyhost_call_namef(h, "operator.setitem", "mLL", b, (int64_t)1, (int64_t)99), PYHOST_OK);
  if (in_place()) CHECK(q[1] == 99); /* read while lent: the host's memory itself */
  freed = 0;
  size_t left = 5;
  CHECK_RC(pyhost_buffer_release(h, b, &left), PYHOST_OK);
  CHECK(left == 0 && freed == 1);
  CHECK(written[0] == 1 && written[1] == 99 && written[2] == 3);
  pyhost_free(h);
}

TEST_CASE(views_kept_past_release) {
  pyhost *h = check_start(NULL);
  int64_t q[6] = {10, 11, 12, 13, 14, 15};
  pyhost_buffer *b = lend(h, "v", "q", q, 8, 6, 1);
  check_run(h, "kept = v\nsl = v[2:5]\nca = v.cast('B')\n");
  freed = 0;
  size_t left = 0;
  CHECK_RC(pyhost_buffer_release(h, b, &left), PYHOST_OK);
  /* pyhost's own memoryview is released: the name Python kept raises */
  check_run(h, "try:\n    kept[0]\n    err = None\nexcept ValueError as e:\n    err = str(e)\n");
  check_expect_py(h, "'released' in err", "True");
  if (in_place()) {
    /* slices and casts still read the memory, which waits for them */
    CHECK(left == 1); /* both derive from pyhost's memoryview: one Py_buffer of it */
    CHECK(freed == 0);
    check_expect_py(h, "(sl.tolist(), ca[8])", "([12, 13, 14], 11)");
    /* and the released loan hands out no new buffer */
    check_run(h, "try:\n    memoryview(sl.obj)\n    err = None\nexcept BufferError as e:\n    err = str(e)\n");
    check_expect_py(h, "err", "'the host has released this memory'");
    check_run(h, "del sl");
    CHECK(freed == 0);
    check_run(h, "del ca");
    CHECK(freed == 1);
  } else {
    /* before 3.11 Python reads its own copy: the host's memory is free at once */
    CHECK(left == 0);
    CHECK(freed == 1);
    check_expect_py(h, "(sl.tolist(), ca[8])", "([12, 13, 14], 11)");
  }
  pyhost_free(h);
}

/* A released loan's exporter serves the next loan only when Python kept nothing of it:
 * an exporter Python can still reach (view.obj kept, a slice's managed buffer) stays
 * the released loan's, refusing new buffers, and never reads the next loan's memory. */
TEST_CASE(exporter_reused_only_when_unreached) {
  pyhost *h = check_start(NULL);
  uint8_t one[4] = {1, 2, 3, 4}, two[4] = {5, 6, 7, 8}, three[4] = {9, 10, 11, 12};
  const char *refused = in_place() ? "'the host has released this memory'" : "None";
  /* Python keeps the exporter itself (no Py_buffer of it) */
  pyhost_buffer *b = lend(h, "a", "B", one, 1, 4, 0);
  check_run(h, "obj_a = a.obj\n");
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  b = lend(h, "b", "B", two, 1, 4, 0);
  check_expect_py(h, "(b.tolist(), b.obj is obj_a)", "([5, 6, 7, 8], False)");
  check_run(h, "try:\n    memoryview(obj_a)\n    err = None\nexcept BufferError as e:\n    err = str(e)\n");
  check_expect_py(h, "err", refused);
  /* Python keeps a slice: its managed buffer holds the exporter */
  check_run(h, "del obj_a\nsl = b[1:3]\n");
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  b = lend(h, "c", "B", three, 1, 4, 0);
  check_expect_py(h, "(c.tolist(), sl.tolist(), c.obj is sl.obj)", "([9, 10, 11, 12], [6, 7], False)");
  check_run(h, "try:\n    memoryview(sl.obj)\n    err = None\nexcept BufferError as e:\n    err = str(e)\n");
  check_expect_py(h, "err", refused);
  freed = 0;
  check_run(h, "del sl\n");
  CHECK(freed == (in_place() ? 1 : 0)); /* the second loan's memory, once its slice went */
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  if (check_numpy(h)) { /* a numpy array holds a Py_buffer of the exporter */
    b = lend(h, "d", "B", one, 1, 4, 0);
    check_run(h, "arr = np.asarray(d)\n");
    CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
    b = lend(h, "e", "B", two, 1, 4, 0);
    check_expect_py(h, "(arr.tolist(), e.tolist(), e.obj is arr.base.obj)",
                    "([1, 2, 3, 4], [5, 6, 7, 8], False)");
    freed = 0;
    check_run(h, "del arr\n");
    CHECK(freed == (in_place() ? 1 : 0));
    CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  }
  pyhost_free(h);
}

/* A release that succeeds says so, as every call does: the message and the exception
 * data of the call before it are gone (fuzz_api found pyhost_errtype still "TypeError"
 * after a PYHOST_OK release). */
TEST_CASE(release_clears_the_last_error) {
  pyhost *h = check_start(NULL);
  uint8_t bytes[4] = {1, 2, 3, 4};
  pyhost_buffer *b = lend(h, "v", "B", bytes, 1, 4, 0);
  CHECK_RC(pyhost_exec(h, "raise TypeError('before')", "<test>"), PYHOST_PYEXC);
  CHECK_STREQ(pyhost_errtype(h), "TypeError");
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  CHECK_STREQ(pyhost_errtype(h), "");
  CHECK_STREQ(pyhost_errmsg(h), "not an error");
  pyhost_free(h);
}

/* A call whose argument fails reads no result pointer: a >w view is zeroed only through
 * the pointer the call was given after all its arguments (fuzz_callf found the view
 * zeroed through the next, unread argument: a write of sizeof(pyhost_view) bytes into
 * whatever that argument pointed at). */
TEST_CASE(callf_view_after_a_failed_argument) {
  pyhost *h = check_start(NULL);
  check_run(h, "def make(*a): return bytearray(4)\n");
  char second[2 * sizeof(pyhost_view)];
  memset(second, 'x', sizeof second);
  second[sizeof second - 1] = '\0';
  pyhost_view view;
  memset(&view, 0xA5, sizeof view);
  /* "\xff" is no UTF-8: the first argument fails, the second is never read */
  int rc = pyhost_call_namef(h, "make", "ss>w", "\xff", second, &view);
  CHECK(rc != PYHOST_OK);
  for (size_t i = 0; i + 1 < sizeof second; i++) CHECK(second[i] == 'x');
  pyhost_free(h);
}

TEST_CASE(export_held_by_a_consumer) {
  /* a Py_buffer taken from pyhost's own memoryview (what numpy.frombuffer does): the
   * view cannot be released, the memory waits */
  pyhost *h = check_start(NULL);
  int64_t q[2] = {5, 6};
  pyhost_buffer *b = lend(h, "v", "q", q, 8, 2, 0);
  check_run(h, "import array\nheld = memoryview(v)\nbio = __import__('io').BytesIO(v)\n");
  freed = 0;
  size_t left = 0;
  CHECK_RC(pyhost_buffer_release(h, b, &left), PYHOST_OK);
  CHECK(in_place() ? left >= 1 && freed == 0 : left == 0 && freed == 1);
  check_expect_py(h, "(held.tolist(), bio.getvalue()[:1])", "([5, 6], b'\\x05')");
  check_run(h, "del held, bio, v");
  CHECK(freed == 1);
  pyhost_free(h);
}

TEST_CASE(threads_read_while_the_host_releases) {
  pyhost *h = check_start(NULL);
  enum { N = 4096 };
  int64_t *src = malloc(N * sizeof *src);
  for (int i = 0; i < N; i++) src[i] = i;
  pyhost_buffer *b = lend(h, "v", "q", src, 8, N, 0);
  free(src);
  check_run(h, "import threading\n"
         "reads = 0\nerrors = []\nsums = []\n"
         "def reader(view, sliced):\n"
         "    global reads\n"
         "    while True:\n"
         "        try:\n"
         "            s = view[N - 1] + (sliced[0] if sliced is not None else 0)\n"
         "        except ValueError:\n"
         "            break\n"
         "        except Exception as e:\n"
         "            errors.append(repr(e)); break\n"
         "        if s != N - 1 + (1 if sliced is not None else 0): errors.append(s); break\n"
         "        reads += 1\n"
         "        if sliced is not None and reads > 20000: break\n"
         "ts = [threading.Thread(target=reader, args=(v, None)),\n"
         "      threading.Thread(target=reader, args=(v, v[1:]))]\n");
  check_run(h, "N = 4096\nfor t in ts: t.start()");
  /* wait until both read, then release under them */
  for (;;) {
    pyhost_value *r = NULL;
    CHECK_RC(pyhost_eval(h, "reads > 1000", &r), PYHOST_OK);
    int done = r && pyhost_value_kind(r) == PYHOST_KIND_BOOL && (pyhost_value_to_bool(h, r, &done), done);
    pyhost_value_free(r);
    if (done) break;
  }
  freed = 0;
  size_t left = 0;
  CHECK_RC(pyhost_buffer_release(h, b, &left), PYHOST_OK);
  check_run(h, "for t in ts: t.join()\ndel ts, v");
  check_expect_py(h, "errors", "[]");
  CHECK(freed == 1);
  pyhost_free(h);
}

TEST_CASE(python_buffers_in_place) {
  pyhost *h = check_start(NULL);
  check_run(h, "import array\nba = bytearray(b'hello')\nar = array.array('d', [1.5, 2.5, 3.5])\n"
         "mv2 = memoryview(bytearray(range(12))).cast('B', [3, 4])\n");
  pyhost_value *ba = NULL, *ar = NULL, *mv2 = NULL, *by = NULL, *num = NULL;
  CHECK_RC(pyhost_get_global(h, "ba", &ba), PYHOST_OK);
  CHECK_RC(pyhost_get_global(h, "ar", &ar), PYHOST_OK);
  CHECK_RC(pyhost_get_global(h, "mv2", &mv2), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "b'bytes'", &by), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "7", &num), PYHOST_OK);
  pyhost_view view;
  /* bytearray: in place and writable on every version; resizing it is refused meanwhile */
  CHECK_RC(pyhost_view_get(h, ba, PYHOST_VIEW_WRITABLE, &view), PYHOST_OK);
  CHECK(view.len == 5 && !view.readonly && !view.copied && view.ndim == 1);
  CHECK_STREQ(view.format, "B");
  ((char *)view.data)[0] = 'j';
  check_run(h, "try:\n    ba.append(1)\n    err = None\nexcept BufferError as e:\n    err = 'BufferError'\n");
  check_expect_py(h, "(ba, err)", "(bytearray(b'jello'), 'BufferError')");
  pyhost_view_release(h, &view);
  check_run(h, "ba.append(33)");
  check_expect_py(h, "ba", "bytearray(b'jello!')");
  /* a bytes value: C data, read in place without Python */
  CHECK_RC(pyhost_view_get(h, by, 0, &view), PYHOST_OK);
  CHECK(view.len == 5 && view.readonly && memcmp(view.data, "bytes", 5) == 0);
  pyhost_view_release(h, &view);
  CHECK_RC(pyhost_view_get(h, by, PYHOST_VIEW_WRITABLE, &view), PYHOST_TYPE);
  /* array.array: format and item size kept; in place from 3.11, one copy before */
  CHECK_RC(pyhost_view_get(h, ar, 0, &view), PYHOST_OK);
  CHECK_STREQ(view.format, "d");
  CHECK(view.itemsize == 8 && view.len == 24 && view.ndim == 1 && view.shape[0] == 3);
  CHECK(((double *)view.data)[2] == 3.5);
  CHECK(view.copied == !in_place() && view.readonly == !in_place());
  pyhost_view_release(h, &view);
  CHECK(view.data == NULL);
  pyhost_view_release(h, &view); /* zeroed: a no-op */
  CHECK_RC(pyhost_view_get(h, ar, PYHOST_VIEW_WRITABLE, &view), in_place() ? PYHOST_OK : PYHOST_TYPE);
  if (!in_place()) CHECK_CONTAINS(pyhost_errmsg(h), "before Python 3.11");
  pyhost_view_release(h, &view);
  /* 2-D shape and strides */
  CHECK_RC(pyhost_view_get(h, mv2, PYHOST_VIEW_CONTIGUOUS, &view), PYHOST_OK);
  CHECK(view.ndim == 2 && view.shape[0] == 3 && view.shape[1] == 4 && view.strides[0] == 4 &&
        view.strides[1] == 1 && ((unsigned char *)view.data)[11] == 11);
  pyhost_view_release(h, &view);
  /* something that exports no buffer */
  CHECK_RC(pyhost_view_get(h, num, 0, &view), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "int");
  pyhost_value *o = NULL;
  CHECK_RC(pyhost_eval(h, "object()", &o), PYHOST_OK);
  CHECK_RC(pyhost_view_get(h, o, 0, &view), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "object");
  CHECK(view.data == NULL);
  pyhost_value_free(o);
  /* a strided view refused when the host wants contiguous memory */
  pyhost_value *st = NULL;
  CHECK_RC(pyhost_eval(h, "memoryview(bytearray(range(10)))[::2]", &st), PYHOST_OK);
  CHECK_RC(pyhost_view_get(h, st, PYHOST_VIEW_CONTIGUOUS, &view), in_place() ? PYHOST_TYPE : PYHOST_OK);
  if (in_place()) CHECK_CONTAINS(pyhost_errmsg(h), "not C-contiguous");
  pyhost_view_release(h, &view);
  CHECK_RC(pyhost_view_get(h, st, 0, &view), PYHOST_OK);
  CHECK(view.shape[0] == 5 && ((unsigned char *)view.data)[view.strides[0] * 4] == 8);
  pyhost_view_release(h, &view);
  pyhost_value_free(st);
  pyhost_value *vals[] = {ba, ar, mv2, by, num};
  for (int i = 0; i < 5; i++) pyhost_value_free(vals[i]);
  pyhost_free(h);
}

TEST_CASE(callf_letters) {
  pyhost *h = check_start(NULL);
  check_run(h, "def first(v): return v[0]\n"
         "def make(n): return bytearray(i % 256 for i in range(n))\n"
         "def ints(n): return list(range(n))\n");
  int64_t q[2] = {77, 78};
  void *data = malloc(sizeof q);
  memcpy(data, q, sizeof q);
  pyhost_buffer_spec s = {data, "q", 1, {2}, 0, free_data, NULL};
  pyhost_buffer *b = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_OK);
  int64_t x = 0;
  CHECK_RC(pyhost_call_namef(h, "first", "m>L", b, &x), PYHOST_OK);
  CHECK(x == 77);
  pyhost_arg a = pyhost_arg_buffer(b);
  pyhost_callable *first = NULL;
  CHECK_RC(pyhost_prepare_name(h, "first", &first), PYHOST_OK);
  CHECK_RC(pyhost_prepared_call_int(h, first, &a, 1, &x), PYHOST_OK);
  CHECK(x == 77);
  a = pyhost_arg_buffer(NULL);
  CHECK_RC(pyhost_prepared_call_int(h, first, &a, 1, &x), PYHOST_MISUSE);
  pyhost_callable_free(first);
  freed = 0;
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  CHECK(freed == 1);
  pyhost_view view;
  CHECK_RC(pyhost_call_namef(h, "make", "i>w", 300, &view), PYHOST_OK);
  CHECK(view.len == 300 && ((unsigned char *)view.data)[255] == 255 && !view.copied);
  pyhost_view_release(h, &view);
  CHECK_RC(pyhost_call_namef(h, "ints", "i>w", 3, &view), PYHOST_TYPE); /* a list: no buffer */
  CHECK(view.data == NULL);
  pyhost_view_release(h, &view);
  pyhost_value *l = NULL;
  CHECK_RC(pyhost_call_namef(h, "ints", "i>o", 3, &l), PYHOST_OK);
  CHECK(pyhost_value_kind(l) == PYHOST_KIND_OBJECT);
  CHECK_STREQ(pyhost_value_type_name(l), "list");
  int64_t out[3];
  size_t n = 0;
  CHECK_RC(pyhost_value_to_int64s(h, l, out, 3, &n), PYHOST_OK);
  CHECK(n == 3 && out[2] == 2);
  pyhost_value_free(l);
  pyhost_free(h);
}

TEST_CASE(arrays_of_numbers) {
  pyhost *h = check_start(NULL);
  int64_t q[5] = {0, -1, INT64_MAX, INT64_MIN, 42};
  double d[3] = {0.5, -0.0, 1e-300};
  pyhost_value *lq = NULL, *ld = NULL, *le = NULL;
  CHECK_RC(pyhost_value_from_int64s(h, q, 5, &lq), PYHOST_OK);
  CHECK_RC(pyhost_value_from_doubles(h, d, 3, &ld), PYHOST_OK);
  CHECK_RC(pyhost_value_from_int64s(h, NULL, 0, &le), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "lq", lq), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "ld", ld), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "le", le), PYHOST_OK);
  check_expect_py(h, "(type(lq).__name__, lq, ld, le)",
            "('list', [0, -1, 9223372036854775807, -9223372036854775808, 42], [0.5, -0.0, 1e-300], [])");
  int64_t back[5] = {0};
  size_t n = 0;
  CHECK_RC(pyhost_value_to_int64s(h, lq, back, 5, &n), PYHOST_OK);
  CHECK(n == 5 && memcmp(back, q, sizeof q) == 0);
  CHECK_RC(pyhost_value_to_int64s(h, lq, back, 4, &n), PYHOST_RANGE);
  CHECK(n == 5);
  double dback[3];
  CHECK_RC(pyhost_value_to_doubles(h, ld, dback, 3, &n), PYHOST_OK);
  CHECK(n == 3 && dback[0] == 0.5 && dback[2] == 1e-300);
  CHECK_RC(pyhost_value_to_doubles(h, lq, dback, 3, &n), PYHOST_RANGE); /* ints as floats */
  pyhost_value *t = NULL, *bad = NULL, *big = NULL, *conv = NULL;
  check_run(h, "def ev(s): return eval(s)");
  CHECK_RC(pyhost_eval(h, "(1, 2.0, 3)", &t), PYHOST_OK); /* converted: read in C */
  CHECK_RC(pyhost_value_to_doubles(h, t, dback, 3, &n), PYHOST_OK);
  CHECK(n == 3 && dback[1] == 2.0 && dback[2] == 3.0);
  CHECK_RC(pyhost_value_to_int64s(h, t, back, 5, &n), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "item 1: expected int, got float");
  CHECK_RC(pyhost_call_namef(h, "list", "O>o", t, &conv), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int64s(h, conv, back, 5, &n), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "item 1: expected int, got float");
  CHECK_RC(pyhost_call_namef(h, "tuple", "O>o", lq, &bad), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int64s(h, bad, back, 5, &n), PYHOST_OK);
  CHECK(n == 5 && back[3] == INT64_MIN);
  pyhost_value_free(bad);
  CHECK_RC(pyhost_call_namef(h, "ev", "s>o", "[1, 'x']", &bad), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int64s(h, bad, back, 5, &n), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "item 1: expected int, got str");
  CHECK_RC(pyhost_call_namef(h, "ev", "s>o", "[1, 2**64]", &big), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int64s(h, big, back, 5, &n), PYHOST_RANGE);
  CHECK_CONTAINS(pyhost_errmsg(h), "item 1: int does not fit in 64 bits");
  CHECK_RC(pyhost_value_to_int64s(h, ld, back, 5, &n), PYHOST_TYPE); /* floats are not ints */
  pyhost_value_free(lq);
  CHECK_RC(pyhost_value_from_int64s(h, NULL, 3, &lq), PYHOST_MISUSE);
  CHECK(lq == NULL);
  pyhost_value *all[] = {ld, le, t, big, conv, bad};
  for (int i = 0; i < 6; i++) pyhost_value_free(all[i]);
  pyhost_free(h);
}

TEST_CASE(numpy_interop) {
  pyhost *h = check_start(NULL);
  if (!check_numpy(h)) {
    pyhost_free(h);
    SKIP("numpy is not installed for this Python");
  }
  /* a host image lent to numpy: numpy reads it in place and its result comes back */
  enum { H = 4, W = 5 };
  float *img = malloc(H * W * sizeof *img);
  for (int i = 0; i < H * W; i++) img[i] = (float)i;
  pyhost_buffer_spec s = {img, "f", 2, {H, W}, 1, free_data, NULL};
  pyhost_buffer *b = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_buffer_value(h, b, &v), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "img", v), PYHOST_OK);
  pyhost_value_free(v);
  check_run(h, "a = np.asarray(img)\nrow_sums = a.sum(axis=1)\n");
  check_expect_py(h, "(a.shape, a.dtype.str, row_sums.tolist())",
            "((4, 5), '<f4', [10.0, 35.0, 60.0, 85.0])");
  if (in_place()) {
    img[0] = 100.0f;
    check_expect_py(h, "float(a[0, 0])", "100.0");
    check_run(h, "a[3, 4] = -1");
    CHECK(img[19] == -1.0f);
  }
  /* the result array read by the host in place */
  pyhost_view view;
  /* a transposed array: strides say so, and a host that wants C order is refused */
  pyhost_value *tr = NULL;
  CHECK_RC(pyhost_eval(h, "a.T", &tr), PYHOST_OK);
  CHECK_RC(pyhost_view_get(h, tr, 0, &view), PYHOST_OK);
  CHECK(view.ndim == 2 && view.shape[0] == W && view.shape[1] == H);
  if (in_place()) CHECK(view.strides[0] == 4 && view.strides[1] == 4 * W);
  CHECK(*(float *)((char *)view.data + view.strides[0] * 2 + view.strides[1] * 1) == 7.0f);
  pyhost_view_release(h, &view);
  CHECK_RC(pyhost_view_get(h, tr, PYHOST_VIEW_CONTIGUOUS, &view), in_place() ? PYHOST_TYPE : PYHOST_OK);
  pyhost_view_release(h, &view);
  pyhost_value_free(tr);
  pyhost_value *rs = NULL;
  CHECK_RC(pyhost_get_global(h, "row_sums", &rs), PYHOST_OK);
  CHECK_RC(pyhost_view_get(h, rs, 0, &view), PYHOST_OK);
  CHECK(view.ndim == 1 && view.shape[0] == 4 && view.itemsize == 4);
  CHECK(((float *)view.data)[1] == 35.0f);
  CHECK(view.copied == !in_place());
  pyhost_view_release(h, &view);
  pyhost_value_free(rs);
  /* numpy keeps the array past the host's release: the memory waits for it */
  freed = 0;
  size_t left = 0;
  CHECK_RC(pyhost_buffer_release(h, b, &left), PYHOST_OK);
  if (in_place()) {
    CHECK(left == 1 && freed == 0);
    check_expect_py(h, "float(a[1, 1])", "6.0");
    check_run(h, "del a");
  }
  CHECK(freed == 1);
  pyhost_free(h);
}

TEST_CASE(bad_specs) {
  pyhost *h = check_start(NULL);
  char data[16] = {0};
  pyhost_buffer *b = NULL;
  pyhost_buffer_spec s = {data, "x", 1, {4}, 0, NULL, NULL};
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "format \"x\"");
  s.format = "qq";
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  s.format = "B";
  s.ndim = 0;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "ndim 0");
  s.ndim = PYHOST_BUFFER_MAXDIM + 1;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  s.ndim = 2;
  s.shape[0] = 2;
  s.shape[1] = 0;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "shape[1] is 0");
  s.ndim = 2;
  s.shape[0] = SIZE_MAX / 2;
  s.shape[1] = 4;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "overflows");
  s.ndim = 1;
  s.shape[0] = 4;
  s.data = NULL;
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "data is NULL");
  s.shape[0] = 0; /* empty: no data needed */
  CHECK_RC(pyhost_buffer_new(h, &s, &b), PYHOST_OK);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_buffer_value(h, b, &v), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "e", v), PYHOST_OK);
  check_expect_py(h, "(len(e), e.tolist())", "(0, [])");
  pyhost_value_free(v);
  CHECK_RC(pyhost_buffer_release(h, b, NULL), PYHOST_OK);
  CHECK(b != NULL);
  CHECK_RC(pyhost_buffer_new(h, NULL, &b), PYHOST_MISUSE);
  CHECK_RC(pyhost_buffer_release(h, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_view_get(h, NULL, 0, NULL), PYHOST_MISUSE);
  pyhost_free(h);
}

TEST_CASE(release_after_finalize) {
  /* a loan the host still holds when Python ends: its free callback runs at release;
   * one the host released while numpy-like consumers held it: at finalize */
  pyhost *h = check_start(NULL);
  int64_t q[2] = {1, 2};
  pyhost_buffer *kept = lend(h, "k", "q", q, 8, 2, 0);
  pyhost_buffer *held = lend(h, "v", "q", q, 8, 2, 0);
  check_run(h, "import sys\nsys.keep_slice = v[1:]\n");
  freed = 0;
  CHECK_RC(pyhost_buffer_release(h, held, NULL), PYHOST_OK);
  CHECK(freed == (in_place() ? 0 : 1));
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(freed == 1);
  CHECK_RC(pyhost_buffer_release(h, kept, NULL), PYHOST_OK);
  CHECK(freed == 2);
  pyhost_free(h);
}

/* ---- host types exporting their payload (pyhost_type_spec.getbuffer, 3.11+) ---- */

/* A grayscale canvas the host owns: pixels it reallocates on resize. */
struct canvas {
  unsigned char *px;
  size_t w, hgt;
  int writable;
  const char *format; /* what getbuffer says: "B", or a bad letter to test the refusal */
  int refuse;         /* getbuffer answers this status when not 0 */
};
static pyhost_type *canvas_type;
static int canvas_destroyed;

static int canvas_getbuffer(void *payload, void *userdata, pyhost_buffer_info *info) {
  (void)userdata;
  struct canvas *c = payload;
  if (c->refuse) return c->refuse;
  info->data = c->px;
  info->format = c->format;
  info->ndim = 2;
  info->shape[0] = c->hgt;
  info->shape[1] = c->w;
  info->writable = c->writable;
  return PYHOST_OK;
}

/* Canvas.resize(w, h): refused while Python holds views of the pixels, as bytearray's. */
static int canvas_resize(pyhost *h, void *payload, void *userdata, const pyhost_value *const *args,
                         size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)userdata, (void)kwargs, (void)result;
  struct canvas *c = payload;
  int64_t w, hgt;
  if (nargs != 2 || pyhost_value_to_int(h, args[0], &w) || pyhost_value_to_int(h, args[1], &hgt))
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "resize(w, h) takes two ints");
  size_t views = 99;
  int rc = pyhost_payload_exports(h, canvas_type, payload, &views);
  if (rc) return rc;
  if (views)
    return pyhost_raise(h, PYHOST_EXC_BUFFER_ERROR, "Canvas has %zu exported view(s): cannot resize", views);
  unsigned char *px = realloc(c->px, (size_t)(w * hgt));
  if (!px) return pyhost_raise(h, PYHOST_EXC_MEMORY_ERROR, "no memory");
  memset(px, 0, (size_t)(w * hgt));
  c->px = px;
  c->w = (size_t)w;
  c->hgt = (size_t)hgt;
  return PYHOST_OK;
}

static void canvas_destroy(void *payload, void *userdata) {
  (void)payload, (void)userdata;
  canvas_destroyed++;
}

static size_t exports_of(pyhost *h, const pyhost_value *obj) {
  size_t n = 99;
  CHECK_RC(pyhost_object_exports(h, obj, canvas_type, &n), PYHOST_OK);
  return n;
}

TEST_CASE(host_type_exports_its_payload) {
  pyhost *h = check_start(NULL);
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "img", NULL, &m), PYHOST_OK);
  pyhost_method_def methods[] = {{"resize", canvas_resize, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Canvas", .methods = methods,
                           .n_methods = 1, .destructor = canvas_destroy,
                           .getbuffer = canvas_getbuffer};
  int rc = pyhost_type_new(h, m, &spec, &canvas_type);
  if (!in_place()) {
    /* no buffer protocol in the stable ABI before 3.11: refused, and said why */
    CHECK_RC(rc, PYHOST_VERSION);
    CHECK_CONTAINS(pyhost_errmsg(h), "Canvas: spec->getbuffer needs Python 3.11 or later");
    CHECK(canvas_type == NULL);
    spec.getbuffer = NULL; /* the same type without it is fine */
    CHECK_RC(pyhost_type_new(h, m, &spec, &canvas_type), PYHOST_OK);
    pyhost_type_free(h, canvas_type);
    pyhost_free(h);
    return;
  }
  CHECK_RC(rc, PYHOST_OK);
  struct canvas c = {malloc(3 * 4), 4, 3, 1, "B", 0};
  for (int i = 0; i < 12; i++) c.px[i] = (unsigned char)i;
  pyhost_value *obj = NULL;
  CHECK_RC(pyhost_object_new(h, canvas_type, &c, &obj), PYHOST_OK);
  CHECK_RC(pyhost_set_global(h, "c", obj), PYHOST_OK);
  CHECK(exports_of(h, obj) == 0);

  /* a memoryview reads and writes the host's pixels in place */
  check_run(h, "mv = memoryview(c)");
  check_expect_py(h, "(mv.format, mv.shape, mv.strides, mv.readonly, mv[2, 3])",
            "('B', (3, 4), (4, 1), False, 11)");
  check_run(h, "mv[1, 2] = 200");
  CHECK(c.px[6] == 200);
  c.px[0] = 77;
  check_expect_py(h, "mv[0, 0]", "77");
  CHECK(exports_of(h, obj) == 1);

  /* while exported: resize is refused (BufferError), and so is invalidation */
  check_run(h, "try:\n    c.resize(8, 8)\nexcept BufferError as e:\n    err = str(e)\nelse:\n    err = None");
  check_expect_py(h, "err", "'Canvas has 1 exported view(s): cannot resize'");
  CHECK_RC(pyhost_object_invalidate(h, obj, canvas_type), PYHOST_BUSY);
  CHECK_CONTAINS(pyhost_errmsg(h), "Python holds 1 buffer view of the img.Canvas");
  check_expect_py(h, "mv[1, 2]", "200"); /* still valid: nothing changed */

  /* a cast and slice holds the export after the first view goes; each is counted */
  check_run(h, "row = memoryview(c).cast('B')[4:8]\ndel mv");
  CHECK(exports_of(h, obj) == 1);
  check_run(h, "two = (memoryview(c), memoryview(c))");
  CHECK(exports_of(h, obj) == 3);
  check_run(h, "del two");
  check_expect_py(h, "row.tolist()", "[4, 5, 200, 7]");

  /* release unblocks: the host resizes, and a new view sees the new memory */
  check_run(h, "row.release()");
  CHECK(exports_of(h, obj) == 0);
  check_run(h, "c.resize(5, 2)\nmv = memoryview(c)");
  check_expect_py(h, "(mv.shape, bytes(mv) == bytes(10))", "((2, 5), True)");
  CHECK(c.w == 5 && c.hgt == 2);
  check_run(h, "mv.release()");

  /* read-only: writes raise, and consumers asking for writable memory are refused */
  c.writable = 0;
  check_run(h, "mv = memoryview(c)");
  check_expect_py(h, "mv.readonly", "True");
  check_run(h, "try:\n    mv[0, 0] = 1\nexcept TypeError:\n    ok = True\nelse:\n    ok = False");
  check_expect_py(h, "ok", "True");
  pyhost_view v;
  CHECK_RC(pyhost_view_get(h, obj, PYHOST_VIEW_WRITABLE, &v), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "img.Canvas: the buffer is read-only");
  CHECK(exports_of(h, obj) == 1); /* mv's alone */
  check_run(h, "mv.release()");
  /* the host reads its own type's buffer as any other, in place */
  CHECK_RC(pyhost_view_get(h, obj, 0, &v), PYHOST_OK);
  CHECK(v.data == c.px && v.readonly && v.ndim == 2 && v.shape[0] == 2 && v.shape[1] == 5);
  CHECK(exports_of(h, obj) == 1);
  pyhost_view_release(h, &v);
  CHECK(exports_of(h, obj) == 0);
  c.writable = 1;

  /* the host's refusal and a description pyhost cannot read: BufferError, no view */
  c.refuse = PYHOST_BUSY;
  check_run(h, "try:\n    memoryview(c)\nexcept BufferError as e:\n    err = str(e)");
  check_expect_py(h, "err", "'img.Canvas: the host gives no buffer now (PYHOST_BUSY)'");
  c.refuse = 0;
  c.format = "x";
  check_run(h, "try:\n    memoryview(c)\nexcept BufferError as e:\n    err = str(e)");
  CHECK(exports_of(h, obj) == 0);
  check_expect_py(h, "err.startswith('img.Canvas: the host\\'s buffer: format \"x\" is not one')", "True");
  c.format = NULL; /* "B" */

  /* numpy, where it imports: the array is the host's memory, and holds an export */
  if (check_numpy(h)) {
    check_run(h, "a = np.asarray(c)\na[1, 4] = 9");
    CHECK(c.px[9] == 9);
    CHECK(exports_of(h, obj) == 1);
    check_run(h, "del a");
    CHECK(exports_of(h, obj) == 0);
  }

  /* Python drops the object while a view lives: the payload stays until the view ends */
  c.px[9] = 9;
  check_run(h, "mv = memoryview(c)\ndel c");
  pyhost_value_free(obj);
  CHECK(canvas_destroyed == 0);
  check_expect_py(h, "mv[1, 4]", "9");
  check_run(h, "mv.release()");
  CHECK(canvas_destroyed == 1);
  free(c.px);
  pyhost_type_free(h, canvas_type);
  pyhost_free(h);
}
