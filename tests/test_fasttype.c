/* test_fasttype.c: tier 2, host types in the fast form (pyhost.h, "host types with
 * borrowed arguments"): fast methods, getters, setters and constructors reading a
 * pyhost_args view and setting a pyhost_ret, and payloads kept inline in the object.
 * Arguments: CASE LIB VERSION. */
#include "pyhost.h"
#include "check.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ACC_LIVE 0x41434321

/* The inline payload of myapp.Acc. */
struct acc {
  int magic; /* ACC_LIVE once constructed; the destructor checks and clears it */
  int64_t total;
  double scale;
  char label[16];
};

struct counts {
  int destroyed, bad_destroy;
};

/* Calls of acc_new, acc_add and acc_get_total: none may run during finalize. */
static int acc_calls;

static pyhost *start(void) { return check_start(NULL); }

static void run(pyhost *h, const char *code) {
  int rc = pyhost_exec(h, code, "<test>");
  if (rc != PYHOST_OK) {
    fprintf(stderr, "exec failed (%s):\n%s\n--- code:\n%s\n", pyhost_status_name(rc),
            pyhost_errmsg(h), code);
    check_failures++;
  }
}

static void expect(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, expr, &v);
  const char *r = rc == PYHOST_OK ? pyhost_value_repr(h, v) : NULL;
  if (!r || strcmp(r, want) != 0) {
    fprintf(stderr, "eval(%s) gave %s, expected %s\n", expr, r ? r : pyhost_errmsg(h), want);
    check_failures++;
  }
  pyhost_value_free(v);
}

/* Acc(start=0, scale=1.0, *, label='') */
static int acc_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  struct acc *a = *payload;
  int rc;
  acc_calls++;
  if (!a || a->magic || a->total || a->label[0])
    return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "the inline payload is not zeroed");
  if (pyhost_args_count(args) > 2)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Acc(start=0, scale=1.0, *, label='')");
  a->scale = 1.0;
  if (pyhost_args_count(args) > 0 && (rc = pyhost_args_int(h, args, 0, &a->total))) return rc;
  if (pyhost_args_count(args) > 1 && (rc = pyhost_args_float(h, args, 1, &a->scale))) return rc;
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name, *s;
    size_t len;
    if ((rc = pyhost_args_kwname(h, args, k, &name, NULL))) return rc;
    if (strcmp(name, "label"))
      return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "Acc() got an unexpected keyword %s", name);
    if ((rc = pyhost_args_str(h, args, pyhost_args_count(args) + k, &s, &len))) return rc;
    snprintf(a->label, sizeof a->label, "%.*s", (int)len, s);
  }
  if (a->total < 0) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "Acc(): start must be >= 0");
  *payload = NULL; /* ignored for an inline payload */
  a->magic = ACC_LIVE;
  return PYHOST_OK;
}

static void acc_free(void *payload, void *ud) {
  struct acc *a = payload;
  struct counts *c = ud;
  if (a->magic != ACC_LIVE) c->bad_destroy++;
  a->magic = 0;
  c->destroyed++;
}

/* mix(i, x, flag, s, b, **kw): every argument kind; i picks the result's kind. */
static int acc_mix(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  struct acc *a = payload;
  int64_t i;
  double x;
  int flag, rc;
  const char *s;
  const void *b;
  size_t sn, bn;
  char buf[512];
  if ((rc = pyhost_args_int(h, args, 0, &i)) || (rc = pyhost_args_float(h, args, 1, &x)) ||
      (rc = pyhost_args_bool(h, args, 2, &flag)) || (rc = pyhost_args_str(h, args, 3, &s, &sn)) ||
      (rc = pyhost_args_bytes(h, args, 4, &b, &bn)))
    return rc;
  int n = snprintf(buf, sizeof buf, "%lld|%.2f|%d|%.*s|%zu|%zu|%lld", (long long)i, x, flag,
                   (int)sn, s, bn, pyhost_args_kwcount(args), (long long)a->total);
  for (size_t k = 0; k < pyhost_args_kwcount(args); k++) {
    const char *name;
    size_t len;
    pyhost_value *v = NULL;
    if ((rc = pyhost_args_kwname(h, args, k, &name, &len))) return rc;
    if ((rc = pyhost_args_value(h, args, pyhost_args_count(args) + k, &v))) return rc;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "|%.*s=%s:%s", (int)len, name,
                  pyhost_kind_name(pyhost_args_kind(args, pyhost_args_count(args) + k)),
                  pyhost_value_repr(h, v));
    pyhost_value_free(v);
  }
  switch (i) {
  case 0: return PYHOST_OK; /* None */
  case 1: return pyhost_ret_int(h, ret, a->total * 1000);
  case 2: return pyhost_ret_float(h, ret, x * 2);
  case 3: return pyhost_ret_bool(h, ret, !flag);
  case 4: return pyhost_ret_bytes(h, ret, b, bn);
  case 5: return pyhost_ret_str(h, ret, "\xff", 1); /* invalid UTF-8: UnicodeDecodeError */
  case 6: {
    pyhost_value *l = pyhost_value_list();
    pyhost_value_append(l, pyhost_value_int(6));
    rc = pyhost_ret_value(h, ret, l);
    pyhost_value_free(l);
    return rc;
  }
  case 7: /* a result set, then the callback fails: the result is dropped */
    pyhost_ret_int(h, ret, 1);
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "seven");
  case 8: /* a failed pyhost call: its exception reaches Python with the traceback */
    return pyhost_exec(h, "def inner():\n    raise KeyError('deep')\ninner()", "<inner>");
  case 9: /* another status: RuntimeError naming the method */
    return PYHOST_NOTFOUND;
  case 10: /* the none setter resets an earlier result */
    pyhost_ret_int(h, ret, 10);
    return pyhost_ret_none(h, ret);
  default: return pyhost_ret_str(h, ret, buf, (size_t)n);
  }
}

/* add(n=1) -> the new total */
static int acc_add(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  struct acc *a = payload;
  int64_t by = 1;
  int rc;
  acc_calls++;
  if (pyhost_args_count(args) + pyhost_args_kwcount(args) > 1)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "add(n=1)");
  if (pyhost_args_count(args) + pyhost_args_kwcount(args) == 1 &&
      (rc = pyhost_args_int(h, args, 0, &by)))
    return rc;
  a->total += by;
  return pyhost_ret_int(h, ret, a->total);
}

/* where() -> the payload's address and whether it sits inside the object */
static int acc_where(pyhost *h, void *payload, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  (void)args;
  return pyhost_ret_int(h, ret, (int64_t)(uintptr_t)payload);
}

/* call_back(f) -> f(): Python code run from inside a fast method */
static int acc_call_back(pyhost *h, void *payload, void *ud, const pyhost_args *args,
                         pyhost_ret *ret) {
  (void)payload;
  (void)ud;
  pyhost_value *f = NULL, *r = NULL;
  int rc = pyhost_args_value(h, args, 0, &f);
  if (!rc) rc = pyhost_call(h, f, NULL, NULL, &r);
  if (!rc) rc = pyhost_ret_value(h, ret, r);
  pyhost_value_free(f);
  pyhost_value_free(r);
  return rc;
}

/* recur(f) -> f(f): with f a host callable, recursion through C alone (no Python
 * frame between the levels); must end in RecursionError, never a stack overflow. */
static int call_with_itself(pyhost *h, const pyhost_args *args, pyhost_ret *ret) {
  pyhost_value *f = NULL, *r = NULL, *argv = pyhost_value_tuple();
  int rc = pyhost_args_value(h, args, 0, &f);
  if (!rc) rc = pyhost_value_append(argv, f) == PYHOST_OK ? PYHOST_OK : PYHOST_NOMEM;
  if (!rc) f = NULL; /* the tuple owns it now */
  if (!rc) rc = pyhost_call(h, pyhost_value_item(argv, 0), argv, NULL, &r);
  if (!rc) rc = pyhost_ret_value(h, ret, r);
  pyhost_value_free(f);
  pyhost_value_free(argv);
  pyhost_value_free(r);
  return rc;
}
static int acc_recur(pyhost *h, void *payload, void *ud, const pyhost_args *args,
                     pyhost_ret *ret) {
  (void)payload;
  (void)ud;
  return call_with_itself(h, args, ret);
}
static int fn_recur(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud;
  return call_with_itself(h, args, ret);
}

/* The object the "loop" property reads and writes: the getter reads obj.loop and the
 * setter sets obj.loop, through pyhost alone (no Python frame between the levels). */
static pyhost_value *loop_obj;
static int acc_get_loop(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)payload;
  (void)ud;
  pyhost_value *r = NULL;
  int rc = pyhost_getattr(h, loop_obj, "loop", &r);
  if (!rc) rc = pyhost_ret_value(h, ret, r);
  pyhost_value_free(r);
  return rc;
}
static int acc_set_loop(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)payload;
  (void)ud;
  pyhost_value *v = NULL;
  int rc = pyhost_args_value(h, value, 0, &v);
  if (!rc) rc = pyhost_setattr(h, loop_obj, "loop", v);
  pyhost_value_free(v);
  return rc;
}

/* expect() on a thread with a 64 MiB stack: recursion through a host function's fast
 * door is bounded by CPython's own guard of builtin calls, whose C limit (from 3.12,
 * thousands of levels) may outlast a default 8 MiB stack when frames are big (ASan). */
struct expect_job {
  pyhost *h;
  const char *expr, *want;
};
static void *expect_thread(void *p) {
  struct expect_job *j = p;
  expect(j->h, j->expr, j->want);
  return NULL;
}
static void expect_on_big_stack(pyhost *h, const char *expr, const char *want) {
  struct expect_job j = {h, expr, want};
  pthread_attr_t a;
  pthread_t t;
  CHECK(pthread_attr_init(&a) == 0 && pthread_attr_setstacksize(&a, (size_t)64 << 20) == 0);
  CHECK(pthread_create(&t, &a, expect_thread, &j) == 0 && pthread_join(t, NULL) == 0);
  pthread_attr_destroy(&a);
}

/* A constructor that calls loop_obj (its own class): T() inside T(). */
static int nest_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)ud;
  (void)args;
  (void)payload;
  pyhost_value *r = NULL;
  int rc = pyhost_call(h, loop_obj, NULL, NULL, &r);
  pyhost_value_free(r);
  return rc;
}

static int acc_get_total(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  acc_calls++;
  return pyhost_ret_int(h, ret, ((struct acc *)payload)->total);
}
static int acc_set_total(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  return pyhost_args_int(h, value, 0, &((struct acc *)payload)->total);
}
static int acc_get_label(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_str(h, ret, ((struct acc *)payload)->label, PYHOST_STRLEN);
}
static int acc_set_label(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  const char *s;
  size_t len;
  int rc = pyhost_args_str(h, value, 0, &s, &len);
  if (rc) return rc;
  if (len >= sizeof ((struct acc *)payload)->label)
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "label: at most 15 bytes, got %zu", len);
  snprintf(((struct acc *)payload)->label, 16, "%.*s", (int)len, s);
  return PYHOST_OK;
}
static int acc_get_scale(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_float(h, ret, ((struct acc *)payload)->scale);
}
static int acc_set_secret(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  double d;
  int rc = pyhost_args_float(h, value, 0, &d);
  if (!rc) ((struct acc *)payload)->scale = -d;
  return rc;
}
static int acc_get_broken(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)payload;
  (void)ud;
  (void)ret;
  return pyhost_exec(h, "def getter_inner():\n    raise LookupError('from the getter')\n"
                        "getter_inner()",
                     "<getter>");
}

/* A method of the value form on the same type: both forms live side by side. */
static int acc_legacy(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                      size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h;
  (void)ud;
  (void)args;
  (void)kwargs;
  *result = pyhost_value_int(((struct acc *)payload)->total + (int64_t)nargs);
  return PYHOST_OK;
}

static const pyhost_fast_method_def acc_methods[] = {
    {"mix", acc_mix, "mix(i, x, flag, s, b, **kw)"},
    {"add", acc_add, NULL},
    {"where", acc_where, NULL},
    {"call_back", acc_call_back, NULL},
    {"recur", acc_recur, NULL},
};
static const pyhost_method_def acc_value_methods[] = {{"legacy", acc_legacy, NULL}};
static const pyhost_fast_property_def acc_props[] = {
    {"total", acc_get_total, acc_set_total, "the running total"},
    {"label", acc_get_label, acc_set_label, NULL},
    {"scale", acc_get_scale, NULL, NULL},   /* read-only */
    {"secret", NULL, acc_set_secret, NULL}, /* write-only */
    {"broken", acc_get_broken, NULL, NULL},
    {"loop", acc_get_loop, acc_set_loop, NULL},
};

static pyhost_type_spec acc_spec(struct counts *c, unsigned flags) {
  pyhost_type_spec s = {PYHOST_TYPE_SPEC_INIT};
  s.name = "Acc";
  s.doc = "An accumulator kept inline.";
  s.methods = acc_value_methods;
  s.n_methods = 1;
  s.fast_methods = acc_methods;
  s.n_fast_methods = sizeof acc_methods / sizeof acc_methods[0];
  s.fast_properties = acc_props;
  s.n_fast_properties = sizeof acc_props / sizeof acc_props[0];
  s.fast_constructor = acc_new;
  s.destructor = acc_free;
  s.payload_size = sizeof(struct acc);
  s.userdata = c;
  s.flags = flags;
  return s;
}

static pyhost_type *make_acc(pyhost *h, pyhost_module **m, struct counts *c, unsigned flags) {
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, m), PYHOST_OK);
  pyhost_type_spec s = acc_spec(c, flags);
  CHECK_RC(pyhost_type_new(h, *m, &s, &t), PYHOST_OK);
  run(h, "import myapp, sys, gc\n"
         "def mix(i, **kw):\n    return a.mix(i, 1.5, True, 'h\\u00e9', b'\\x00b', **kw)\n");
  return t;
}

static void finish(pyhost *h, pyhost_type *t, pyhost_module *m) {
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(fast_methods_arguments_and_results) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  run(h, "a = myapp.Acc(7, 2.5, label='apples')\n");
  expect(h, "a.total, a.scale, a.label", "(7, 2.5, 'apples')");
  expect(h, "mix(0)", "None");
  expect(h, "mix(1)", "7000");
  expect(h, "mix(2)", "3.0");
  expect(h, "mix(3)", "False");
  expect(h, "mix(4)", "b'\\x00b'");
  expect(h, "mix(6)", "[6]");
  expect(h, "mix(10)", "None");
  expect(h, "mix(11, key=[1, 'a'], z=None)",
         "\"11|1.50|1|h\xc3\xa9|2|2|7|key=list:[1, 'a']|z=none:None\"");
  expect(h, "a.mix(12, 2, False, 's', b'')", "'12|2.00|0|s|0|0|7'"); /* an int as float */
  /* every way of calling a method: bound on the spot, kept bound, unbound */
  expect(h, "a.add(), a.add(2), a.add(n=3)", "(8, 10, 13)");
  run(h, "bound = a.add\n");
  expect(h, "bound(), bound(10)", "(14, 24)");
  expect(h, "myapp.Acc.add(a, 1), myapp.Acc.add(a, n=1)", "(25, 26)");
  expect(h, "a.legacy(1, 2), myapp.Acc.legacy(a)", "(28, 26)");
  expect(h, "a.call_back(lambda: 'from python')", "'from python'");
  expect(h, "myapp.Acc.mix.__doc__, a.mix.__doc__, myapp.Acc.total.__doc__, myapp.Acc.__doc__",
         "('mix(i, x, flag, s, b, **kw)', 'mix(i, x, flag, s, b, **kw)', 'the running total', "
         "'An accumulator kept inline.')");
  /* the view reads keyword-only calls and many arguments alike */
  expect(h, "[myapp.Acc(i).add(i) for i in range(5)]", "[0, 2, 4, 6, 8]");
  expect(h, "myapp.Acc(label='x').label, myapp.Acc().scale", "('x', 1.0)");
  run(h, "del a, bound\ngc.collect()\n");
  CHECK(c.bad_destroy == 0);
  finish(h, t, m);
}

TEST_CASE(fast_methods_errors) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  run(h, "a = myapp.Acc(1)\n");
  static const struct {
    const char *code, *want;
  } cases[] = {
      {"a.mix('x', 1.5, True, 's', b'')",
       "TypeError: myapp.Acc.mix() argument 0: expected int, got str"},
      {"a.mix(True, 1.5, True, 's', b'')", "expected int, got bool"},
      {"a.mix(2**64, 1.5, True, 's', b'')",
       "OverflowError: myapp.Acc.mix() argument 0: int does not fit in 64 bits"},
      {"a.mix(1, 's', True, 's', b'')", "myapp.Acc.mix() argument 1: expected float, got str"},
      {"a.mix(1, 1.5, 1, 's', b'')", "argument 2: expected bool, got int"},
      {"myapp.Acc.mix(a, 1, 1.5, True, b's', b'')", "argument 3: expected str, got bytes"},
      {"a.mix(1, 1.5, True, 's', 's')", "argument 4: expected bytes, got str"},
      {"a.mix(1, 1.5, True, 's')", "TypeError: myapp.Acc.mix() missing argument 4 (it was given 4)"},
      {"a.mix(1, 1.5, True, '\\ud800', b'')", "UnicodeEncodeError"},
      {"mix(5)", "UnicodeDecodeError"},
      {"mix(7)", "ValueError: seven"},
      {"mix(8)", "KeyError: 'deep'"},
      {"mix(9)", "RuntimeError: myapp.Acc.mix: PYHOST_NOTFOUND"},
      {"a.add('x')", "TypeError: myapp.Acc.add() argument 0: expected int, got str"},
      {"myapp.Acc.add(42)", "myapp.Acc.add() needs a 'myapp.Acc' object as its first argument"},
      {"myapp.Acc.add()", "myapp.Acc.add() needs a 'myapp.Acc' object as its first argument"},
      {"a.call_back(lambda: 1/0)", "ZeroDivisionError"},
      {"myapp.Acc('x')", "TypeError: myapp.Acc() argument 0: expected int, got str"},
      {"myapp.Acc(-1)", "ValueError: Acc(): start must be >= 0"},
      {"myapp.Acc(1, 2, 3)", "TypeError: Acc(start=0, scale=1.0, *, label='')"},
      {"myapp.Acc(colour=1)", "TypeError: Acc() got an unexpected keyword colour"},
      {"myapp.Acc(label=b'x')", "myapp.Acc() argument 0: expected str, got bytes"},
      {"a.broken", "LookupError: from the getter"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CHECK_RC(pyhost_exec(h, cases[k].code, "<fast>"), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), cases[k].want);
  }
  /* tracebacks run through the callback into the inner Python code, both ways */
  CHECK_RC(pyhost_exec(h, "mix(8)", "<fast>"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "<inner>");
  CHECK_CONTAINS(pyhost_errmsg(h), "<fast>");
  CHECK_RC(pyhost_exec(h, "a.broken", "<fast>"), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "getter_inner");
  CHECK_CONTAINS(pyhost_errmsg(h), "<getter>");
  run(h, "def outer():\n    return a.call_back(lambda: {}['missing'])\n"
         "try:\n    outer()\nexcept KeyError as e:\n"
         "    import traceback\n    tb = ''.join(traceback.format_tb(e.__traceback__))\n");
  expect(h, "'outer' in tb and '<lambda>' in tb", "True");
  /* Python catches what a fast method raises */
  run(h, "try:\n    a.add('x')\nexcept TypeError as e:\n    caught = str(e)\n");
  expect(h, "caught", "'myapp.Acc.add() argument 0: expected int, got str'");
  /* a failed constructor leaves no instance and runs no destructor */
  run(h, "gc.collect()\n");
  CHECK(c.destroyed == 0 && c.bad_destroy == 0);
  /* invalidated: every fast entry raises ReferenceError */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_get_global(h, "a", &v), PYHOST_OK);
  run(h, "kept = a.add\n");
  CHECK_RC(pyhost_object_invalidate(h, v, t), PYHOST_OK);
  static const char *const refused[] = {"a.add()", "kept()", "a.total", "a.total = 1",
                                        "myapp.Acc.mix(a, 1, 1.0, True, 's', b'')", "a.legacy()"};
  for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
    CHECK_RC(pyhost_exec(h, refused[k], "<fast>"), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "ReferenceError: myapp.Acc object was invalidated by the host");
  }
  pyhost_value_free(v);
  run(h, "del a, kept\ngc.collect()\n");
  CHECK(c.destroyed == 0); /* invalidated: no destructor */
  finish(h, t, m);
}

TEST_CASE(fast_properties) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  run(h, "a = myapp.Acc(3)\na.total = 40\na.total += 2\na.label = 'pears'\na.secret = 2.5\n");
  expect(h, "a.total, a.label, a.scale", "(42, 'pears', -2.5)");
  static const struct {
    const char *code, *want;
  } cases[] = {
      {"a.total = 'x'", "TypeError: myapp.Acc.total() argument 0: expected int, got str"},
      {"a.total = 2**70", "OverflowError"},
      {"a.label = 'far too long for it'", "ValueError: label: at most 15 bytes, got 19"},
      {"a.scale = 1.0", "AttributeError"},   /* read-only */
      {"a.secret", "AttributeError"},        /* write-only */
      {"del a.total", "AttributeError: cannot delete attribute 'total' of 'myapp.Acc' objects"},
      {"del a.scale", "AttributeError"},
      {"a.secret = 'x'", "myapp.Acc.secret() argument 0: expected float, got str"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CHECK_RC(pyhost_exec(h, cases[k].code, "<fast>"), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), cases[k].want);
  }
  expect(h, "a.total, a.label, a.scale", "(42, 'pears', -2.5)"); /* the failures changed nothing */
  run(h, "del a\n");
  CHECK(c.destroyed == 1 && c.bad_destroy == 0);
  finish(h, t, m);
}

TEST_CASE(inline_payload_lifetime) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  /* the destructor runs exactly once per instance, on the payload inside the object */
  run(h, "for i in range(1000):\n    x = myapp.Acc(i)\n    x.add(1)\ndel x\n");
  CHECK(c.destroyed == 1000 && c.bad_destroy == 0);
  run(h, "for i in range(100):\n    try:\n        myapp.Acc(-i - 1)\n    except ValueError:\n        pass\n");
  CHECK(c.destroyed == 1000); /* failed constructors: no destructor */
  /* the payload lives inside the object, aligned for any C type */
  pyhost_value *v = NULL;
  void *p = NULL;
  run(h, "a = myapp.Acc(5)\nwhere = a.where()\n");
  CHECK_RC(pyhost_get_global(h, "a", &v), PYHOST_OK);
  CHECK_RC(pyhost_object_payload(h, v, t, &p), PYHOST_OK);
  pyhost_value *w = NULL;
  int64_t where = 0;
  CHECK_RC(pyhost_get_global(h, "where", &w), PYHOST_OK);
  CHECK_RC(pyhost_value_to_int(h, w, &where), PYHOST_OK);
  pyhost_value_free(w);
  CHECK(p && (uintptr_t)p == (uintptr_t)where);
  CHECK(((struct acc *)p)->total == 5 && ((struct acc *)p)->magic == ACC_LIVE);
  CHECK((uintptr_t)p % (check_minor() >= 8 ? 16 : 8) == 0);
  expect(h, "id(a) < where < id(a) + sys.getsizeof(a)", "True");
  ((struct acc *)p)->total = 77; /* the host and Python see one payload */
  expect(h, "a.total", "77");
  /* invalidated: no destructor, the memory still goes with the object */
  CHECK_RC(pyhost_object_invalidate(h, v, t), PYHOST_OK);
  CHECK_RC(pyhost_object_payload(h, v, t, &p), PYHOST_MISUSE);
  pyhost_value_free(v);
  run(h, "del a\n");
  CHECK(c.destroyed == 1000);
  /* pyhost_object_new copies payload_size bytes, or zeroes them for NULL */
  struct acc init = {ACC_LIVE, 12, 0.5, "from C"};
  CHECK_RC(pyhost_object_new(h, t, &init, &v), PYHOST_OK);
  CHECK_RC(pyhost_object_payload(h, v, t, &p), PYHOST_OK);
  CHECK(p != &init && ((struct acc *)p)->total == 12);
  init.total = 13; /* the host's struct is its own */
  CHECK_RC(pyhost_set_global(h, "b", v), PYHOST_OK);
  expect(h, "b.total, b.label, b.scale, b.add(1)", "(12, 'from C', 0.5, 13)");
  pyhost_value_free(v);
  run(h, "del b\n");
  CHECK(c.destroyed == 1001 && c.bad_destroy == 0);
  CHECK_RC(pyhost_object_new(h, t, NULL, &v), PYHOST_OK);
  CHECK_RC(pyhost_object_payload(h, v, t, &p), PYHOST_OK);
  CHECK(((struct acc *)p)->total == 0 && ((struct acc *)p)->magic == 0);
  ((struct acc *)p)->magic = ACC_LIVE;
  pyhost_value_free(v); /* the last reference: the destructor runs */
  CHECK(c.destroyed == 1002 && c.bad_destroy == 0);
  /* the type's reference count stays where it was */
  run(h, "gc.collect()\nbase = sys.getrefcount(myapp.Acc)\n"
         "for i in range(10000):\n    myapp.Acc(i).add()\n"
         "gc.collect()\n");
  expect(h, "sys.getrefcount(myapp.Acc) - base", "0");
  CHECK(c.destroyed == 11002 && c.bad_destroy == 0);
  finish(h, t, m);
}

TEST_CASE(inline_payload_subclass) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, PYHOST_TYPE_SUBCLASSABLE | PYHOST_TYPE_WEAKREF);
  if (check_minor() < 8) { /* bpo-37879: the type stays final */
    CHECK_RC(pyhost_exec(h, "class Sub(myapp.Acc):\n    pass\n", NULL), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "not an acceptable base type");
    finish(h, t, m);
    return;
  }
  run(h, "import weakref\n"
         "class Sub(myapp.Acc):\n"
         "    def __init__(self, start=0, scale=1.0, **kw):\n"
         "        self.note = 'sub'\n"
         "    def twice(self):\n"
         "        self.add()\n"
         "        return self.add()\n"
         "s = Sub(5, label='lbl')\n");
  expect(h, "s.twice(), s.total, s.label, s.note, isinstance(s, myapp.Acc)",
         "(7, 7, 'lbl', 'sub', True)");
  expect(h, "myapp.Acc.add(s, 3), s.mix(12, 1, True, 's', b'')", "(10, '12|1.00|1|s|0|0|10')");
  pyhost_value *v = NULL;
  void *p = NULL;
  CHECK_RC(pyhost_get_global(h, "s", &v), PYHOST_OK);
  CHECK_RC(pyhost_object_payload(h, v, t, &p), PYHOST_OK);
  CHECK(p && ((struct acc *)p)->total == 10 && (uintptr_t)p % 16 == 0);
  pyhost_value_free(v);
  run(h, "r = weakref.ref(s)\ndel s\n");
  expect(h, "r() is None", "True");
  CHECK(c.destroyed == 1 && c.bad_destroy == 0);
  /* cycles through a subclass's __dict__, and the reference counts of both classes */
  run(h, "gc.collect()\nb1 = sys.getrefcount(myapp.Acc)\nb2 = sys.getrefcount(Sub)\n"
         "for i in range(3000):\n    s = Sub(i)\n    s.me = s\n    s.twice()\n"
         "del s\ngc.collect()\n");
  expect(h, "sys.getrefcount(myapp.Acc) - b1, sys.getrefcount(Sub) - b2", "(0, 0)");
  CHECK(c.destroyed == 3001 && c.bad_destroy == 0);
  /* a subclass instance's failed constructor runs no destructor */
  CHECK_RC(pyhost_exec(h, "Sub(-5)", NULL), PYHOST_PYEXC);
  run(h, "gc.collect()\n");
  CHECK(c.destroyed == 3001);
  finish(h, t, m);
}

/* myapp.Node: an inline payload holding an object value, seen by the cycle collector. */
struct node {
  pyhost_value *item;
};

static int node_get(pyhost *h, void *payload, void *ud, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_value(h, ret, ((struct node *)payload)->item);
}
static int node_set(pyhost *h, void *payload, void *ud, const pyhost_args *value) {
  (void)ud;
  struct node *n = payload;
  pyhost_value *v = NULL;
  int rc = pyhost_args_value(h, value, 0, &v);
  if (rc) return rc;
  pyhost_value_free(n->item);
  n->item = v;
  return PYHOST_OK;
}
static void node_free(void *payload, void *ud) {
  struct node *n = payload;
  pyhost_value_free(n->item);
  n->item = NULL;
  ((struct counts *)ud)->destroyed++;
}
static void node_traverse(void *payload, void *ud, pyhost_visit visit, void *arg) {
  (void)ud;
  visit(((struct node *)payload)->item, arg);
}
static int node_new(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)h;
  (void)ud;
  (void)args;
  (void)payload; /* zeroed: item NULL */
  return PYHOST_OK;
}

TEST_CASE(inline_payload_gc) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_fast_property_def props[] = {{"item", node_get, node_set, NULL}};
  pyhost_type_spec s = {PYHOST_TYPE_SPEC_INIT};
  s.name = "Node";
  s.fast_properties = props;
  s.n_fast_properties = 1;
  s.fast_constructor = node_new;
  s.destructor = node_free;
  s.traverse = node_traverse;
  s.payload_size = sizeof(struct node);
  s.userdata = &c;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_OK);
  run(h, "import myapp, gc, sys\nclass Box:\n    pass\n"
         "gc.collect()\nbase = sys.getrefcount(myapp.Node)\n"
         "for i in range(1000):\n    x = myapp.Node()\n    b = Box()\n    b.x = x\n    x.item = b\n"
         "del x, b\ngc.collect()\n");
  CHECK(c.destroyed == 1000);
  expect(h, "sys.getrefcount(myapp.Node) - base", "0");
  run(h, "x = myapp.Node()\nx.item = x\nassert x.item is x\ndel x\ngc.collect()\n");
  CHECK(c.destroyed == 1001);
  run(h, "y = myapp.Node()\ny.item = [1, 2]\n");
  expect(h, "y.item", "[1, 2]");
  run(h, "del y\n");
  CHECK(c.destroyed == 1002);
  finish(h, t, m);
}

TEST_CASE(fast_spec_errors) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_type_spec s = acc_spec(&c, 0);
  s.payload_size = ((size_t)1 << 20) + 1;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "payload_size 1048577 is over 1048576 bytes");
  s = acc_spec(&c, 0);
  pyhost_fast_method_def bad_m[] = {{"x", NULL, NULL}};
  s.fast_methods = bad_m;
  s.n_fast_methods = 1;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a fast method has no name or no fn: x");
  s = acc_spec(&c, 0);
  pyhost_fast_property_def bad_p[] = {{"p", NULL, NULL, NULL}};
  s.fast_properties = bad_p;
  s.n_fast_properties = 1;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a fast property has no name or neither get nor set: p");
  s = acc_spec(&c, 0);
  s.fast_methods = NULL;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "fast_methods is NULL but n_fast_methods is not 0");
  s = acc_spec(&c, 0);
  s.fast_properties = NULL;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "fast_properties is NULL but n_fast_properties is not 0");
  CHECK(t == NULL);
  /* a caller whose size stops before the appended fields: they are never read */
  struct {
    pyhost_type_spec spec;
  } old = {acc_spec(&c, 0)};
  old.spec.size = offsetof(pyhost_type_spec, fast_methods);
  old.spec.name = "Old";
  old.spec.payload_size = (size_t)-1;                /* garbage past the caller's size */
  old.spec.fast_methods = (const void *)(uintptr_t)1;
  CHECK_RC(pyhost_type_new(h, m, &old.spec, &t), PYHOST_OK);
  run(h, "import myapp\n");
  expect(h, "hasattr(myapp.Old, 'mix'), hasattr(myapp.Old, 'legacy')", "(False, True)");
  CHECK_RC(pyhost_exec(h, "myapp.Old()", NULL), PYHOST_PYEXC); /* no constructor it knows */
  CHECK_CONTAINS(pyhost_errmsg(h), "cannot create 'myapp.Old' instances from Python");
  pyhost_type_free(h, t);
  /* no constructor and an inline payload: instances come from the host */
  s = acc_spec(&c, 0);
  s.name = "HostMade";
  s.fast_constructor = NULL;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "myapp.HostMade()", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "cannot create 'myapp.HostMade' instances from Python");
  pyhost_type_free(h, t);
  finish(h, NULL, m);
}

TEST_CASE(both_constructors_refused) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_type_spec s = acc_spec(&c, 0);
  s.constructor = (pyhost_constructor)(void (*)(void))acc_new; /* never called */
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "constructor and fast_constructor are both set");
  CHECK(t == NULL);
  finish(h, NULL, m);
}

/* a value-form constructor with an inline payload fills it in place too */
static int plain_ctor(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                      const pyhost_value *kwargs, void **payload) {
  (void)ud;
  (void)kwargs;
  struct acc *a = *payload;
  if (nargs == 1 && pyhost_value_to_int(h, args[0], &a->total)) return PYHOST_TYPE;
  a->magic = ACC_LIVE;
  return PYHOST_OK;
}

TEST_CASE(value_constructor_inline_payload) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_module_new(h, "myapp", NULL, &m), PYHOST_OK);
  pyhost_type_spec s = acc_spec(&c, 0);
  s.fast_constructor = NULL;
  s.constructor = plain_ctor;
  CHECK_RC(pyhost_type_new(h, m, &s, &t), PYHOST_OK);
  run(h, "import myapp\nv = myapp.Acc(9)\n");
  expect(h, "v.total, v.add()", "(9, 10)");
  CHECK_RC(pyhost_exec(h, "myapp.Acc('x')", NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "RuntimeError: myapp.Acc: PYHOST_TYPE");
  run(h, "del v\n");
  CHECK(c.destroyed == 1 && c.bad_destroy == 0);
  finish(h, t, m);
}

TEST_CASE(fast_type_at_finalize) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  run(h, "import atexit\nkeep = [myapp.Acc(i) for i in range(10)]\n"
         "def bye():\n"
         "    for f in (lambda: keep[0].add(), lambda: keep[0].total, lambda: myapp.Acc()):\n"
         "        try:\n            f()\n"
         "        except RuntimeError as e:\n            sys.stderr.write('at exit: %s\\n' % e)\n"
         "atexit.register(bye)\n");
  int before = acc_calls;
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  CHECK(acc_calls == before); /* refused during finalize, never called */
  fprintf(stderr, "destructors run at finalize: %d of 10\n", c.destroyed);
  CHECK(c.bad_destroy == 0 && c.destroyed <= 10);
  finish(h, t, m);
}

/* issue 22, defect 1: a method's descriptor bound to an object that is not an instance
 * of its type (bytes, or an instance of another host type) must refuse with TypeError:
 * the callback would run on a payload pointer made from a foreign object. */
TEST_CASE(method_bound_to_foreign_object) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, PYHOST_TYPE_SUBCLASSABLE);
  /* another host type with an inline payload: type confusion if its instance passes */
  pyhost_type_spec os = acc_spec(&c, 0);
  os.name = "Other";
  pyhost_type *other = NULL;
  CHECK_RC(pyhost_type_new(h, m, &os, &other), PYHOST_OK);
  run(h, "a = myapp.Acc(5)\n"
         "def refused(d, obj, *args):\n"
         "    try:\n"
         "        bound = d.__get__(obj)\n"
         "    except TypeError as e:\n"
         "        return 'TypeError at __get__: ' + str(e)\n"
         "    try:\n"
         "        bound(*args)\n"
         "    except TypeError as e:\n"
         "        return 'TypeError at the call: ' + str(e)\n"
         "    return 'ran'\n"
         "add = myapp.Acc.__dict__['add']\n"
         "legacy = myapp.Acc.__dict__['legacy']\n"
         "results = [refused(d, obj, *args) for d in (add, legacy)\n"
         "           for obj, args in ((b'x' * 200, ()), (myapp.Other(), (1,)), (42, ()),\n"
         "                             (object(), ()))]\n");
  expect(h, "[r.startswith('TypeError at __get__') for r in results]",
         "[True, True, True, True, True, True, True, True]");
  expect(h, "results[1]",
         "\"TypeError at __get__: descriptor 'add' for 'myapp.Acc' objects doesn't apply to "
         "a 'myapp.Other' object\"");
  /* what still works: an instance, a subclass's instance, None and the class */
  expect(h, "add.__get__(a)(2), add.__get__(a, myapp.Acc)(1), a.total", "(7, 8, 8)");
  expect(h, "add.__get__(None, myapp.Acc) is add", "True");
  expect(h, "myapp.Other.__dict__['add'].__get__(myapp.Other())()", "1");
  pyhost_type_free(h, other);
  finish(h, t, m);
  CHECK(c.bad_destroy == 0);
}

/* issue 22, defect 7: recursion through host callbacks with no Python frame between
 * the levels (C -> Python -> C ...) ends in RecursionError on every runtime, through
 * every entry: fast functions, methods in both call forms, properties. */
TEST_CASE(recursion_through_host_callbacks) {
  pyhost *h = start();
  struct counts c = {0, 0};
  pyhost_module *m = NULL;
  pyhost_type *t = make_acc(h, &m, &c, 0);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "recur", fn_recur, NULL, NULL), PYHOST_OK);
  run(h, "a = myapp.Acc(1)\n"
         "def outcome(f, *args):\n"
         "    try:\n"
         "        f(*args)\n"
         "    except RecursionError:\n"
         "        return 'RecursionError'\n"
         "    except Exception as e:\n"
         "        return type(e).__name__ + ': ' + str(e)\n"
         "    return 'returned'\n");
  /* a.recur(...) calls the descriptor (3.8+) and a.recur as the argument is a bound
   * method: both entries, as vectorcall from 3.12 and through tp_call before */
  expect(h, "outcome(a.recur, a.recur)", "'RecursionError'");
  expect_on_big_stack(h, "outcome(myapp.recur, myapp.recur)", "'RecursionError'"); /* function */
  CHECK_RC(pyhost_eval(h, "a", &loop_obj), PYHOST_OK);
  expect(h, "outcome(lambda: a.loop)", "'RecursionError'");             /* getter */
  expect(h, "outcome(setattr, a, 'loop', 1)", "'RecursionError'");      /* setter */
  pyhost_value_free(loop_obj);
  pyhost_type_spec ns = acc_spec(&c, 0); /* a constructor calling its own class */
  ns.name = "Nest";
  ns.fast_constructor = nest_new;
  pyhost_type *nest = NULL;
  CHECK_RC(pyhost_type_new(h, m, &ns, &nest), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, "myapp.Nest", &loop_obj), PYHOST_OK);
  expect(h, "outcome(myapp.Nest)", "'RecursionError'");                 /* constructor */
  /* the guard leaves nothing behind: the same thread runs callbacks normally after */
  expect(h, "a.add(1), myapp.recur.__name__", "(2, 'recur')");
  pyhost_value_free(loop_obj);
  loop_obj = NULL;
  pyhost_type_free(h, nest);
  finish(h, t, m);
}
