/* test_typed.c: host functions with declared arguments (issue 24, item 1):
 * pyhost_module_add_typed_function binds and converts the arguments in one pass,
 * raises CPython's TypeErrors, shows the signature to inspect, and stays correct
 * under hostile Python (dunder methods that run code, mutated keyword dicts,
 * recursion, removal during a call). */
#include "pyhost.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static pyhost *start(void) { return check_start(NULL); }

/* The last line of the traceback of a statement that must raise. */
static void expect_raise(pyhost *h, const char *code, const char *want) {
  int rc = pyhost_exec(h, code, "<test>");
  CHECK_RC(rc, PYHOST_PYEXC);
  const char *msg = pyhost_errmsg(h);
  const char *last = msg, *nl;
  while ((nl = strchr(last, '\n')) && nl[1]) last = nl + 1;
  if (strncmp(last, want, strlen(want)) != 0) fprintf(stderr, "%s\n  got:  %s\n  want: %s\n", code, last, want);
  CHECK(strncmp(last, want, strlen(want)) == 0);
}

/* Appends argument a to buf as text. */
static size_t show(char *buf, size_t cap, const pyhost_arg *a) {
  switch (a->kind) {
  case PYHOST_ARG_NONE: return (size_t)snprintf(buf, cap, "None");
  case PYHOST_ARG_BOOL: return (size_t)snprintf(buf, cap, "b%d", a->u.b);
  case PYHOST_ARG_INT: return (size_t)snprintf(buf, cap, "i%lld", (long long)a->u.i);
  case PYHOST_ARG_FLOAT: return (size_t)snprintf(buf, cap, "f%g", a->u.d);
  case PYHOST_ARG_STR:
    return (size_t)snprintf(buf, cap, "s%.*s/%zu/%d", (int)a->len, a->u.s, a->len,
                            a->u.s[a->len] == 0);
  case PYHOST_ARG_BYTES: return (size_t)snprintf(buf, cap, "y%zu", a->len);
  default: return (size_t)snprintf(buf, cap, "?");
  }
}

/* Every argument it got, as text; userdata is the number of parameters. */
static int typed_show(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  char buf[512];
  size_t n = 0;
  for (size_t i = 0; i < (size_t)(intptr_t)ud; i++) {
    if (i) buf[n++] = ' ';
    n += show(buf + n, sizeof buf - n, &argv[i]);
  }
  return pyhost_ret_str(h, ret, buf, n);
}

static double scale_of(const pyhost_arg *argv) { return argv[0].u.d * argv[1].u.d; }
static int typed_scale(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_float(h, ret, scale_of(argv));
}

static pyhost_module *setup(pyhost *h) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "tm", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(
               h, m, "mix(i: int, x: float = 2.5, /, flag: bool = False, *, "
                     "s: str = None, b: bytes = None, t: str = 'a, b')",
               typed_show, (void *)6, "Mixes."),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "scale(x: float, factor: float)", typed_scale,
                                            NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import tm", NULL), PYHOST_OK);
  return m;
}

TEST_CASE(typed_arguments_and_defaults) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  check_expect_py(h, "tm.scale(3, 2.5)", "7.5");
  check_expect_py(h, "tm.scale(x=3, factor=0.5)", "1.5");
  check_expect_py(h, "tm.scale(2.0, factor=4)", "8.0");
  check_expect_py(h, "tm.mix(1)", "'i1 f2.5 b0 None None sa, b/4/1'");
  check_expect_py(h, "tm.mix(-7, 1, True, s='h\\u00e9', b=b'\\x00xy', t='')",
            "'i-7 f1 b1 sh\xc3\xa9/3/1 y3 s/0/1'");
  check_expect_py(h, "tm.mix(2, flag=True, s=None)", "'i2 f2.5 b1 None None sa, b/4/1'");
  check_expect_py(h, "tm.mix(2**63-1, -0.5, False)", "'i9223372036854775807 f-0.5 b0 None None sa, b/4/1'");
  check_expect_py(h, "tm.mix(*[3], **{'t': 'kw', 'flag': True})", "'i3 f2.5 b1 None None skw/2/1'");
  /* subclasses of the declared types are taken, by their value */
  check_expect_py(h, "(lambda I, S: tm.mix(I(5), s=S('sub')))(type('I', (int,), {}), "
               "type('S', (str,), {}))",
            "'i5 f2.5 b0 ssub/3/1 None sa, b/4/1'");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(typed_errors_name_the_function_and_parameter) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  expect_raise(h, "tm.scale(1)", "TypeError: tm.scale() missing required argument 'factor' (pos 2)");
  expect_raise(h, "tm.scale()", "TypeError: tm.scale() missing required argument 'x' (pos 1)");
  expect_raise(h, "tm.scale(1, 2, 3)",
               "TypeError: tm.scale() takes at most 2 positional arguments (3 given)");
  expect_raise(h, "tm.scale('1', 2)", "TypeError: tm.scale() argument 'x' must be float, not str");
  expect_raise(h, "tm.scale(1, factor=None)",
               "TypeError: tm.scale() argument 'factor' must be float, not NoneType");
  expect_raise(h, "tm.scale(1, 2, z=3)", "TypeError: tm.scale() got an unexpected keyword argument 'z'");
  expect_raise(h, "tm.scale(1, 2, x=3)",
               "TypeError: argument for tm.scale() given by name ('x') and position (1)");
  expect_raise(h, "tm.mix(i=1)",
               "TypeError: 'i' is an invalid keyword argument for tm.mix() (positional-only)");
  expect_raise(h, "tm.mix(True)", "TypeError: tm.mix() argument 'i' must be int, not bool");
  expect_raise(h, "tm.mix(1, 2, 3)", "TypeError: tm.mix() argument 'flag' must be bool, not int");
  expect_raise(h, "tm.mix(1, 2, True, 's')",
               "TypeError: tm.mix() takes at most 3 positional arguments (4 given)");
  expect_raise(h, "tm.mix(1, s=b'x')", "TypeError: tm.mix() argument 's' must be str or None, not bytes");
  expect_raise(h, "tm.mix(1, b='x')", "TypeError: tm.mix() argument 'b' must be bytes or None, not str");
  expect_raise(h, "tm.mix(2**64)", "OverflowError: tm.mix() argument 'i': int does not fit in 64 bits");
  expect_raise(h, "tm.mix(1, s='\\udcff')", "UnicodeEncodeError");
  /* caught by Python like any exception */
  CHECK_RC(pyhost_exec(h, "try:\n    tm.scale(1)\nexcept TypeError as e:\n    caught = str(e)\n", NULL),
           PYHOST_OK);
  check_expect_py(h, "caught", "\"tm.scale() missing required argument 'factor' (pos 2)\"");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* The quick binding (3.10+ reads the arguments straight from the call's vector and
 * keeps the last call's keyword names): keyword names in every order, alternating
 * call sites, names that are not the interned ones, and the ints it reads with a
 * call that has no overflow flag. */
TEST_CASE(typed_quick_binding_keywords) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "four(a: int, b: float = 0.5, c: int = 3, d: str = 'd')",
                                            typed_show, (void *)4, NULL),
           PYHOST_OK);
  /* each call site's names, in turn, many times: a kept match from another site (or
   * a stale one) would put a value in the wrong parameter */
  CHECK_RC(pyhost_exec(h, "def sites(k):\n"
                          "    return [tm.four(a=-k, c=k), tm.four(c=k, a=-k), tm.four(k, d='x', c=k),\n"
                          "            tm.four(k, 2.0, d='y'), tm.four(d='z', b=1.5, a=k, c=7),\n"
                          "            tm.four(k, c=k + 1)]\n"
                          "got = [sites(k) for k in range(3)]\n", NULL),
           PYHOST_OK);
  check_expect_py(h, "got[2]", "['i-2 f0.5 i2 sd/1/1', 'i-2 f0.5 i2 sd/1/1', 'i2 f0.5 i2 sx/1/1', "
                         "'i2 f2 i3 sy/1/1', 'i2 f1.5 i7 sz/1/1', 'i2 f0.5 i3 sd/1/1']");
  check_expect_py(h, "got[0] == sites(0) and got[1] == sites(1)", "True");
  /* names made at run time (not interned), and ** from dicts built per call */
  check_expect_py(h, "tm.four(1, **{''.join(['c']): 9, 'd': ''.join(['q'])})", "'i1 f0.5 i9 sq/1/1'");
  check_expect_py(h, "[tm.four(**{'a': k, 'c': -k}) for k in (4, 5)]",
            "['i4 f0.5 i-4 sd/1/1', 'i5 f0.5 i-5 sd/1/1']");
  /* errors after a kept match: each is still worded by the full binder */
  check_expect_py(h, "tm.scale(x=2, factor=3)", "6.0");
  expect_raise(h, "tm.scale(1, x=2)",
               "TypeError: argument for tm.scale() given by name ('x') and position (1)");
  expect_raise(h, "tm.scale(factor=2)", "TypeError: tm.scale() missing required argument 'x' (pos 1)");
  check_expect_py(h, "tm.mix(1, t='z', flag=True)", "'i1 f2.5 b1 None None sz/1/1'");
  expect_raise(h, "tm.mix(1, t='z', i=2)",
               "TypeError: 'i' is an invalid keyword argument for tm.mix() (positional-only)");
  expect_raise(h, "tm.four(1, e=2)", "TypeError: tm.four() got an unexpected keyword argument 'e'");
  /* -1 and the ends of the 64-bit range read as ints, one past them refused */
  check_expect_py(h, "[tm.four(-1, c=-1), tm.four(-2**63, c=2**63-1)]",
            "['i-1 f0.5 i-1 sd/1/1', 'i-9223372036854775808 f0.5 i9223372036854775807 sd/1/1']");
  expect_raise(h, "tm.four(-2**63-1)", "OverflowError: tm.four() argument 'a': int does not fit in 64 bits");
  expect_raise(h, "tm.four(1, c=2**63)", "OverflowError: tm.four() argument 'c': int does not fit in 64 bits");
  check_expect_py(h, "tm.four(2**40, 1)", "'i1099511627776 f1 i3 sd/1/1'");
  /* more positional arguments than parameters, or than positional parameters, each of
   * a type the quick binding reads */
  CHECK_RC(pyhost_module_add_typed_function(h, m, "kwo(a: int, *, b: int = 0)", typed_show,
                                            (void *)2, NULL),
           PYHOST_OK);
  check_expect_py(h, "tm.kwo(1, b=2)", "'i1 i2'");
  expect_raise(h, "tm.kwo(1, 2)", "TypeError: tm.kwo() takes at most 1 positional argument (2 given)");
  expect_raise(h, "tm.four(1, 2.0, 3, 'x', 5)",
               "TypeError: tm.four() takes at most 4 positional arguments (5 given)");
  expect_raise(h, "tm.four(1, 2.0, 3, 'x', 'y')",
               "TypeError: tm.four() takes at most 4 positional arguments (5 given)");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Sets its result in turn by every setter its mode (argv[0]) names, the last one
 * winning; mode 'n' calls tm.turns itself through Python between two setters. */
static int typed_turns(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  int rc = PYHOST_OK;
  for (const char *m = argv[0].u.s; *m && rc == PYHOST_OK; m++) {
    switch (*m) {
    case 'f': rc = pyhost_ret_float(h, ret, 1.5); break;
    case 'i': rc = pyhost_ret_int(h, ret, -7); break;
    case '0': rc = pyhost_ret_none(h, ret); break;
    case 'b': rc = pyhost_ret_bool(h, ret, 1); break;
    case 's': rc = pyhost_ret_str(h, ret, "s", 1); break;
    case 'y': rc = pyhost_ret_bytes(h, ret, "y", 1); break;
    case 'r': return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "after a result");
    case 'n': {
      pyhost_value *v = NULL;
      rc = pyhost_eval(h, "tm.turns('fi')", &v);
      pyhost_value_free(v);
      break;
    }
    default: rc = PYHOST_MISUSE;
    }
  }
  return rc;
}

/* A typed callback's scalar result is kept as a C value and made an object once it
 * returned: every order of setters gives the last one's result, and nothing leaks. */
TEST_CASE(typed_results_set_in_turn) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "turns(mode: str)", typed_turns, NULL, NULL),
           PYHOST_OK);
  check_expect_py(h, "[tm.turns(x) for x in ['', 'f', 'i', '0', 'fi', 'if', 'f0', 'sf', 'fs', 'iy', "
               "'fb', 'bf', 's0', 'nf', 'fn', 'fni', 'fsif']]",
            "[None, 1.5, -7, None, -7, 1.5, None, 1.5, 's', b'y', True, 1.5, None, 1.5, 1.5, -7, 1.5]");
  expect_raise(h, "tm.turns('fr')", "ValueError: after a result");
  expect_raise(h, "tm.turns('sr')", "ValueError: after a result");
  CHECK_RC(pyhost_exec(h, "for _ in range(3):\n    [tm.turns(x) for x in ['f', 'si', 'i0']]\n", NULL),
           PYHOST_OK);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* slen(s: str, k: int = 0) -> the length of s's UTF-8 plus k. */
static int typed_slen(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_int(h, ret, (int64_t)argv[0].len + argv[1].u.i);
}

/* A str argument read by the quick binding (3.10+: the UTF-8 the str caches, borrowed)
 * and everything it leaves to the full binder: a subclass, a lone surrogate (raised
 * once, by the binder, nothing left set by the quick read), a wrong type. */
TEST_CASE(typed_str_quick_binding) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "slen(s: str, k: int = 0)", typed_slen, NULL,
                                            NULL),
           PYHOST_OK);
  check_expect_py(h, "[tm.slen(x) for x in ['', 'ab', 'h\\u00e9llo', '\\u20ac' * 3, 'x' * 1000]]",
            "[0, 2, 6, 9, 1000]");
  check_expect_py(h, "(tm.slen('ab', 1), tm.slen(s='ab'), tm.slen('ab', k=2), tm.slen(k=3, s='\\u00e9'))",
            "(3, 2, 4, 5)");
  CHECK_RC(pyhost_exec(h, "class S(str): pass\n", NULL), PYHOST_OK);
  check_expect_py(h, "tm.slen(S('abc'))", "3");
  expect_raise(h, "tm.slen('a\\ud800')", "UnicodeEncodeError");
  check_expect_py(h, "[tm.slen('\\u00e9') for _ in range(3)]", "[2, 2, 2]");
  expect_raise(h, "tm.slen(3)", "TypeError");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* A callback of scalar parameters only, which every door binds without a view (the
 * common call): each way it can end, chosen by mode. */
static int typed_outcome(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  double x = argv[1].u.d;
  int rc;
  switch (argv[0].u.i) {
  case 0: return pyhost_ret_float(h, ret, x * 2);
  case 1: return pyhost_ret_int(h, ret, (int64_t)x);
  case 2: return PYHOST_OK; /* no result: None */
  case 3: return pyhost_ret_str(h, ret, "made", 4); /* an object, not a pending scalar */
  case 4:
    pyhost_ret_float(h, ret, x);
    return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "raised after a result (%g)", x);
  case 5: return PYHOST_MISUSE;
  case 6: { /* a nested call through Python between two results: its frame is its own */
    pyhost_value *v = NULL;
    pyhost_ret_int(h, ret, 1);
    rc = pyhost_eval(h, "tm.outcome(0, 10.0) + tm.outcome(2, 0.0).__class__.__name__.__len__()",
                     &v);
    double got = 0;
    if (rc == PYHOST_OK) rc = pyhost_value_to_float(h, v, &got);
    pyhost_value_free(v);
    return rc ? rc : pyhost_ret_float(h, ret, got + x);
  }
  case 7: { /* a nested call that raises, caught by the callback: nothing leaks out */
    rc = pyhost_exec(h, "tm.outcome(4, 1.0)", NULL);
    if (rc != PYHOST_PYEXC) return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "no exception");
    return pyhost_ret_float(h, ret, -x);
  }
  default: return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "mode %d", (int)argv[0].u.i);
  }
}

TEST_CASE(typed_scalar_calls_end_every_way) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "outcome(mode: int, x: float)", typed_outcome,
                                            NULL, NULL),
           PYHOST_OK);
  for (int round = 0; round < 3; round++) { /* the same calls again, with any cache warm */
    check_expect_py(h, "tm.outcome(0, 1.25)", "2.5");
    check_expect_py(h, "tm.outcome(1, 7.9)", "7");
    check_expect_py(h, "tm.outcome(2, 0.5)", "None");
    check_expect_py(h, "tm.outcome(3, 0.5)", "'made'");
    expect_raise(h, "tm.outcome(4, 0.5)", "ValueError: raised after a result (0.5)");
    expect_raise(h, "tm.outcome(5, 0.5)", "RuntimeError: tm.outcome: PYHOST_MISUSE");
    check_expect_py(h, "tm.outcome(6, 0.5)", "28.5");
    check_expect_py(h, "tm.outcome(7, 0.5)", "-0.5");
    expect_raise(h, "tm.outcome(9, 0.5)", "ValueError: mode 9");
    /* past the common call: an int for the float, keywords, a bool for the int */
    check_expect_py(h, "tm.outcome(0, 2)", "4.0");
    check_expect_py(h, "tm.outcome(x=1.5, mode=0)", "3.0");
    expect_raise(h, "tm.outcome(True, 2.5)",
                 "TypeError: tm.outcome() argument 'mode' must be int, not bool");
  }
  CHECK_RC(pyhost_exec(h, "def loop(n):\n    t = 0.0\n    for i in range(n):\n"
                          "        t += tm.outcome(0, i * 0.5)\n    return t\n"
                          "assert loop(1000) == 499500.0\n",
                       NULL),
           PYHOST_OK);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* A call that binds wrongly and carries a value out of range fails with the binding's
 * TypeError, as Python's own functions and inspect.signature(f).bind refuse it:
 * binding comes before converting (fuzz_typed found the OverflowError of the value
 * reported instead, through every door). */
TEST_CASE(typed_binding_errors_before_value_errors) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "outcome(mode: int, x: float = 0.0)",
                                            typed_outcome, NULL, NULL),
           PYHOST_OK);
  for (int round = 0; round < 2; round++) {
    expect_raise(h, "tm.outcome(2 ** 63, zz=1)",
                 "TypeError: tm.outcome() got an unexpected keyword argument 'zz'");
    expect_raise(h, "tm.outcome(2 ** 63, mode=1)",
                 "TypeError: argument for tm.outcome() given by name ('mode') and position (1)");
    expect_raise(h, "tm.outcome(x=10 ** 400)",
                 "TypeError: tm.outcome() missing required argument 'mode' (pos 1)");
    expect_raise(h, "tm.outcome(0, x='no', zz=1)",
                 "TypeError: tm.outcome() got an unexpected keyword argument 'zz'");
    /* binding alone right: the value's own error */
    expect_raise(h, "tm.outcome(2 ** 63)",
                 "OverflowError: tm.outcome() argument 'mode': int does not fit in 64 bits");
  }
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Every count of positional arguments to a function of 12 parameters (ints and floats
 * in turn, each with a default), and at each position an argument the quick binding
 * does not read (an int for a float: converted; a float for an int: refused): the same
 * binding whichever path reads it (straight-line up to 8 arguments, a loop past). */
TEST_CASE(typed_quick_binding_every_count) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  char sig[512];
  size_t n = (size_t)snprintf(sig, sizeof sig, "wide(");
  for (int k = 0; k < 12; k++)
    n += (size_t)snprintf(sig + n, sizeof sig - n, k % 2 ? "%sa%d: float = %d.25" : "%sa%d: int = %d",
                          k ? ", " : "", k, -k);
  snprintf(sig + n, sizeof sig - n, ")");
  CHECK_RC(pyhost_module_add_typed_function(h, m, sig, typed_show, (void *)12, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h,
                       "def shown(args):\n"
                       "    vals = list(args) + [-k if k % 2 == 0 else float('%d.25' % -k)\n"
                       "                         for k in range(len(args), 12)]\n"
                       "    return ' '.join(('i%d' if k % 2 == 0 else 'f%g') % v for k, v in enumerate(vals))\n"
                       "def every_count():\n"
                       "    for c in range(13):\n"
                       "        args = [k * 3 if k % 2 == 0 else k + 0.5 for k in range(c)]\n"
                       "        for rnd in range(2):\n"
                       "            assert tm.wide(*args) == shown(args), (c, tm.wide(*args))\n"
                       "        for k in range(c):\n"
                       "            odd = list(args)\n"
                       "            if k % 2:\n"
                       "                odd[k] = k * 7\n"
                       "                assert tm.wide(*odd) == shown(odd), (c, k)\n"
                       "            else:\n"
                       "                odd[k] = float(k)\n"
                       "                try:\n"
                       "                    tm.wide(*odd)\n"
                       "                except TypeError as e:\n"
                       "                    assert str(e) == \"tm.wide() argument 'a%d' must be int, not float\" % k, e\n"
                       "                else:\n"
                       "                    raise AssertionError((c, k))\n"
                       "every_count()\n",
                       "<every_count>"),
           PYHOST_OK);
  expect_raise(h, "tm.wide(*range(13))",
               "TypeError: tm.wide() takes at most 12 positional arguments (13 given)");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(typed_signature_seen_by_python) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_exec(h, "import inspect", NULL), PYHOST_OK);
  check_expect_py(h, "str(inspect.signature(tm.mix))",
            "\"(i, x=2.5, /, flag=False, *, s=None, b=None, t='a, b')\"");
  check_expect_py(h, "str(inspect.signature(tm.scale))", "'(x, factor)'");
  check_expect_py(h, "tm.mix.__doc__", "'Mixes.'");
  check_expect_py(h, "tm.mix.__text_signature__", "\"(i, x=2.5, /, flag=False, *, s=None, b=None, t='a, b')\"");
  check_expect_py(h, "tm.mix.__name__", "'mix'");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* A signature pyhost cannot read is refused at registration, saying what and where. */
/* A typed function, method or constructor without its C function is refused at
 * registration, naming the call, and nothing is added (Python would call NULL). */
TEST_CASE(typed_function_without_fn) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "tm", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "f(x: int)", NULL, NULL, NULL), PYHOST_MISUSE);
  CHECK_STREQ(pyhost_errmsg(h), "pyhost_module_add_typed_function: fn is NULL");
  CHECK_RC(pyhost_exec(h, "import tm\nassert not hasattr(tm, 'f')\n", "<test>"), PYHOST_OK);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(typed_bad_signatures) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "tm", NULL, &m), PYHOST_OK);
  static const struct {
    const char *sig, *msg;
  } bad[] = {
      {"", "expected the function's name at column 1"},
      {"f", "expected '(' at column 2"},
      {"f(x)", "expected ':' and the parameter's type at column 4"},
      {"f(x: list)", "the type must be int, float, bool, str, bytes, buffer or rwbuffer at column 6"},
      {"f(x: int = 'a')", "the default does not have the parameter's type"},
      {"f(x: int = 1, y: int)", "a parameter without a default follows one with a default"},
      {"f(x: int, x: int)", "a parameter named twice"},
      {"f(/, x: int)", "misplaced '/'"},
      {"f(x: int, *)", "'*' must be followed by a parameter"},
      {"f(x: int, *, *, y: int)", "a second '*'"},
      {"f(x: int) -> int", "unexpected text after ')'"},
      {"f(x: str = 'a)", "a string default needs its closing quote"},
      {"f(x: int = [])", "a default must be None, True, False, a number or a string"},
      {"f(x: int y: int)", "expected ',' or ')'"},
      {"f(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int, j: int, "
       "k: int, l: int, m: int, n: int, o: int, p: int, q: int)",
       "more parameters than pyhost takes (16)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_RC(pyhost_module_add_typed_function(h, m, bad[i].sig, typed_show, NULL, NULL),
             PYHOST_MISUSE);
    if (!strstr(pyhost_errmsg(h), bad[i].msg)) fprintf(stderr, "%s: %s\n", bad[i].sig, pyhost_errmsg(h));
    CHECK(strstr(pyhost_errmsg(h), bad[i].msg) != NULL);
  }
  CHECK_RC(pyhost_module_add_typed_function(h, m, NULL, typed_show, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "f()", NULL, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_typed_function(h, NULL, "f()", typed_show, NULL, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_module_add_typed_function(NULL, m, "f()", typed_show, NULL, NULL), PYHOST_MISUSE);
  /* 16 parameters and no parameter at all are fine */
  CHECK_RC(pyhost_module_add_typed_function(
               h, m, "f16(a: int, b: int, c: int, d: int, e: int, f: int, g: int, h: int, i: int, "
                     "j: int, k: int, l: int, m: int, n: int, o: int, p: int = 16)",
               typed_show, (void *)16, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, " none ( ) ", typed_show, (void *)0, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import tm", NULL), PYHOST_OK);
  check_expect_py(h, "tm.f16(*range(15), p=-1)", "'i0 i1 i2 i3 i4 i5 i6 i7 i8 i9 i10 i11 i12 i13 i14 i-1'");
  check_expect_py(h, "tm.none()", "''");
  expect_raise(h, "tm.none(1)", "TypeError: tm.none() takes at most 0 positional arguments (1 given)");
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* Python that runs code inside the conversions: none of it runs (the rules read type
 * flags), so nothing can change an argument between its check and its use. */
static int typed_clear_then_read(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  /* the caller's keyword dict is cleared; the str argument must still be readable */
  int rc = pyhost_exec(h, "d.clear(); import gc; gc.collect()", NULL);
  if (rc) return rc;
  return pyhost_ret_str(h, ret, argv[0].u.s, argv[0].len);
}

static int typed_clear_then_read_bytes(pyhost *h, void *ud, const pyhost_arg *argv,
                                       pyhost_ret *ret) {
  (void)ud;
  int rc = pyhost_exec(h, "d.clear(); import gc; gc.collect()", NULL);
  if (rc) return rc;
  return pyhost_ret_bytes(h, ret, argv[0].u.p, argv[0].len);
}

static int typed_recurse(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)ret;
  pyhost_value *r = NULL;
  int rc = pyhost_eval(h, "tm.rec(1)", &r); /* itself, without end */
  pyhost_value_free(r);
  (void)argv;
  return rc;
}

/* Objects whose dunders record that they ran (in `ran`): none of them may run while
 * an argument is bound. */
static void define_hostile(pyhost *h) {
  CHECK_RC(pyhost_exec(h,
                       "ran = []\n"
                       "class Idx:\n"
                       "    def __index__(self): ran.append('index'); return 1\n"
                       "    def __int__(self): ran.append('int'); return 1\n"
                       "    def __float__(self): ran.append('float'); return 1.0\n"
                       "class Str(str):\n"
                       "    def __str__(self): ran.append('str'); return 'other'\n"
                       "    def __eq__(self, o): ran.append('eq'); return False\n"
                       "    __hash__ = str.__hash__\n",
                       NULL),
           PYHOST_OK);
}

static int typed_remove_self(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  pyhost_module_remove(h, ud, "gone");
  return pyhost_ret_int(h, ret, argv[0].u.i + 1); /* its arguments stay valid */
}

TEST_CASE(typed_hostile_python) {
  pyhost *h = start();
  pyhost_module *m = setup(h);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "keep(s: str)", typed_clear_then_read, NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "keepb(b: bytes)", typed_clear_then_read_bytes,
                                            NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "rec(n: int)", typed_recurse, NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "gone(n: int)", typed_remove_self, m, NULL),
           PYHOST_OK);
  define_hostile(h);
  expect_raise(h, "tm.mix(Idx())", "TypeError: tm.mix() argument 'i' must be int, not __main__.Idx");
  expect_raise(h, "tm.scale(Idx(), 1)", "TypeError: tm.scale() argument 'x' must be float, not __main__.Idx");
  check_expect_py(h, "tm.mix(1, s=Str('mine'))", "'i1 f2.5 b0 smine/4/1 None sa, b/4/1'");
  /* a keyword whose name is a str subclass with its own __eq__ */
  check_expect_py(h, "tm.scale(2, **{Str('factor'): 3})", "6.0");
  check_expect_py(h, "ran", "[]");
  /* the keyword dict emptied by the callback while it holds a str from it */
  CHECK_RC(pyhost_exec(h, "d = {'s': ''.join(['x'] * 1000)}", NULL), PYHOST_OK);
  check_expect_py(h, "len(tm.keep(**d))", "1000");
  CHECK_RC(pyhost_exec(h, "d = {'b': bytes(range(200)) * 5}", NULL), PYHOST_OK);
  check_expect_py(h, "tm.keepb(**d) == bytes(range(200)) * 5", "True");
  /* endless recursion through the host: RecursionError, no crash */
  expect_raise(h, "tm.rec(0)", "RecursionError");
  /* removed by its own call: the call finishes, the next raises */
  CHECK_RC(pyhost_exec(h, "g = tm.gone", NULL), PYHOST_OK);
  check_expect_py(h, "g(41)", "42");
  expect_raise(h, "g(1)", "RuntimeError: tm.gone was unregistered by the host");
  CHECK_RC(pyhost_exec(h, "tm.gone", NULL), PYHOST_PYEXC); /* gone from the module */
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- typed methods and constructors of host types ---- */

/* An inline payload: the counter's value and how often add ran. */
struct counter {
  int64_t value;
  int adds;
};

static int counter_init(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  struct counter *c = *payload;
  (void)ud;
  if (argv[0].u.i < 0) return pyhost_raise(h, PYHOST_EXC_VALUE_ERROR, "start must be >= 0");
  c->value = argv[0].u.i;
  if (argv[1].kind == PYHOST_ARG_STR) c->value += (int64_t)argv[1].len;
  return PYHOST_OK;
}
static int counter_get(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  (void)argv;
  return pyhost_ret_int(h, ret, ((struct counter *)payload)->value);
}
static int counter_add(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  struct counter *c = payload;
  (void)ud;
  c->value += argv[0].u.i * argv[1].u.i;
  c->adds++;
  return pyhost_ret_int(h, ret, c->value);
}
/* Every argument as text, as typed_show does; ud is the number of parameters. */
static int counter_show(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)payload;
  return typed_show(h, ud, argv, ret);
}
/* Calls itself through Python with no Python frame between: the guard must stop it. */
static int counter_again(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)payload;
  (void)ud;
  (void)ret;
  (void)argv;
  pyhost_value *v = NULL;
  int rc = pyhost_eval(h, "tt.C(1).again()", &v);
  pyhost_value_free(v);
  return rc;
}

static const pyhost_typed_method_def counter_methods[] = {
    {"get()", counter_get, "The value."},
    {"add(n: int, times: int = 1)", counter_add, NULL},
    {"show(x: float, /, s: str = None, *, flag: bool = False)", counter_show, NULL},
    {"again()", counter_again, NULL},
};

static pyhost_module *setup_types(pyhost *h, pyhost_type **out) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "tt", NULL, &m), PYHOST_OK);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT,
                           .name = "C",
                           .doc = "A counter.",
                           .typed_methods = counter_methods,
                           .n_typed_methods = 4,
                           .typed_constructor = counter_init,
                           .constructor_signature = "C(start: int, label: str = None)",
                           .payload_size = sizeof(struct counter),
                           .userdata = (void *)3};
  CHECK_RC(pyhost_type_new(h, m, &spec, out), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "import tt", NULL), PYHOST_OK);
  return m;
}

TEST_CASE(typed_methods_and_constructor) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup_types(h, &t);
  check_expect_py(h, "tt.C(5).get()", "5");
  check_expect_py(h, "tt.C(5, 'abc').get()", "8");
  check_expect_py(h, "tt.C(start=2, label='x').get()", "3");
  check_expect_py(h, "tt.C(5, None).get()", "5");
  CHECK_RC(pyhost_exec(h, "c = tt.C(1)", NULL), PYHOST_OK);
  check_expect_py(h, "c.add(2)", "3");
  check_expect_py(h, "c.add(2, 3)", "9");
  check_expect_py(h, "c.add(times=2, n=-1)", "7");
  check_expect_py(h, "tt.C.add(c, 1)", "8");
  check_expect_py(h, "(lambda f: f(1, times=2))(c.add)", "10"); /* a bound method */
  check_expect_py(h, "c.show(1, 's', flag=True)", "'f1 ss/1/1 b1'");
  check_expect_py(h, "c.show(2.5)", "'f2.5 None b0'");
  check_expect_py(h, "[tt.C(i).get() for i in range(3)]", "[0, 1, 2]");
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* A float payload scaled by the constructor's int; mul multiplies it by its float. */
static int scaled_init(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud;
  *(double *)*payload = argv[0].u.d * (double)argv[1].u.i;
  return PYHOST_OK;
}
static int scaled_mul(pyhost *h, void *payload, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_float(h, ret, *(double *)payload * argv[0].u.d);
}

/* The quick binding of a typed method's or constructor's common call (hosttype.c,
 * bind_exact) reads an int with one call: -1 is a value there, and an int past 64 bits
 * leaves the call to the binder in the frame, with nothing left raised. */
TEST_CASE(typed_methods_quick_ints_at_the_edges) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup_types(h, &t);
  CHECK_RC(pyhost_exec(h, "c = tt.C(0)", NULL), PYHOST_OK);
  check_expect_py(h, "c.add(-1, 1)", "-1");
  check_expect_py(h, "c.add(1, -1)", "-2");
  check_expect_py(h, "c.add(-2**63, 0)", "-2");
  expect_raise(h, "c.add(2**63, 1)", "OverflowError: tt.C.add() argument 'n': int does not fit in 64 bits");
  expect_raise(h, "c.add(1, -2**63-1)",
               "OverflowError: tt.C.add() argument 'times': int does not fit in 64 bits");
  check_expect_py(h, "[c.add(1, 1), c.add(-1, -1)]", "[-1, 0]");
  expect_raise(h, "tt.C(2**64, 'x')", "OverflowError: tt.C() argument 'start': int does not fit in 64 bits");
  expect_raise(h, "tt.C(-1, 'x')", "ValueError: start must be >= 0");
  check_expect_py(h, "tt.C(3, 'ab').get()", "5");
  /* floats and ints mixed, every argument given: the constructor's quick binding too */
  static const pyhost_typed_method_def scaled_methods[] = {{"mul(y: float)", scaled_mul, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "S", .typed_methods = scaled_methods,
                           .n_typed_methods = 1, .typed_constructor = scaled_init,
                           .constructor_signature = "S(x: float, n: int)",
                           .payload_size = sizeof(double)};
  pyhost_type *st = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec, &st), PYHOST_OK);
  check_expect_py(h, "[tt.S(1.5, 2).mul(0.5), tt.S(2.0, -1).mul(-1.0), tt.S(1, 2).mul(2)]", "[1.5, 2.0, 4.0]");
  expect_raise(h, "tt.S(1.5, -2**63-1)", "OverflowError: tt.S() argument 'n': int does not fit in 64 bits");
  expect_raise(h, "tt.S(1.5, 2).mul(2**1100)", "OverflowError: ");
  expect_raise(h, "tt.S(2, 1.5)", "TypeError: tt.S() argument 'n' must be int, not float");
  check_expect_py(h, "tt.S(-0.5, -1).mul(4.0)", "2.0");
  pyhost_type_free(h, st);
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

static int fast_ctor_unused(pyhost *h, void *ud, const pyhost_args *args, void **payload) {
  (void)h, (void)ud, (void)args, (void)payload;
  return PYHOST_OK;
}

/* 1 on Python 3.minor or later. */
static int at_least(pyhost *h, int minor) {
  pyhost_value *v = NULL;
  char expr[64];
  snprintf(expr, sizeof expr, "sys.version_info >= (3, %d)", minor);
  CHECK_RC(pyhost_exec(h, "import sys", NULL), PYHOST_OK);
  CHECK_RC(pyhost_eval(h, expr, &v), PYHOST_OK);
  int yes = v && strcmp(pyhost_value_repr(h, v), "True") == 0;
  pyhost_value_free(v);
  return yes;
}

TEST_CASE(typed_methods_errors) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup_types(h, &t);
  expect_raise(h, "tt.C()", "TypeError: tt.C() missing required argument 'start' (pos 1)");
  expect_raise(h, "tt.C('1')", "TypeError: tt.C() argument 'start' must be int, not str");
  expect_raise(h, "tt.C(1, 2)", "TypeError: tt.C() argument 'label' must be str or None, not int");
  expect_raise(h, "tt.C(1, z=2)", "TypeError: tt.C() got an unexpected keyword argument 'z'");
  expect_raise(h, "tt.C(-1)", "ValueError: start must be >= 0");
  expect_raise(h, "tt.C(2**64)", "OverflowError: tt.C() argument 'start': int does not fit in 64 bits");
  CHECK_RC(pyhost_exec(h, "c = tt.C(1)", NULL), PYHOST_OK);
  expect_raise(h, "c.get(1)", "TypeError: tt.C.get() takes at most 0 positional arguments (1 given)");
  expect_raise(h, "c.get(x=1)", "TypeError: tt.C.get() got an unexpected keyword argument 'x'");
  expect_raise(h, "c.add()", "TypeError: tt.C.add() missing required argument 'n' (pos 1)");
  expect_raise(h, "c.add(1.5)", "TypeError: tt.C.add() argument 'n' must be int, not float");
  expect_raise(h, "c.add(1, n=2)", "TypeError: argument for tt.C.add() given by name ('n') and position (1)");
  expect_raise(h, "c.show(x=1)", "TypeError: 'x' is an invalid keyword argument for tt.C.show() (positional-only)");
  expect_raise(h, "c.show(1, 's', True)", "TypeError: tt.C.show() takes at most 2 positional arguments (3 given)");
  /* the instance check of every method entry: a typed method is CPython's own method
   * descriptor (hosttype.c, "trampolines"), which checks self itself, with the words of
   * each version (those of `list.append(1, 2)` and `list.append()`) */
  if (at_least(h, 8)) {
    expect_raise(h, "tt.C.add(1, 2)",
                 "TypeError: descriptor 'add' for 'tt.C' objects doesn't apply to a 'int' object");
    expect_raise(h, "tt.C.__dict__['add'].__get__(5)",
                 "TypeError: descriptor 'add' for 'tt.C' objects doesn't apply to a 'int' object");
  } else {
    expect_raise(h, "tt.C.add(1, 2)",
                 "TypeError: descriptor 'add' requires a 'tt.C' object but received a 'int'");
    expect_raise(h, "tt.C.__dict__['add'].__get__(5)",
                 "TypeError: descriptor 'add' for 'tt.C' objects doesn't apply to 'int' object");
  }
  expect_raise(h, "tt.C.get()",
               at_least(h, 9) ? "TypeError: unbound method C.get() needs an argument"
                              : "TypeError: descriptor 'get' of 'tt.C' object needs an argument");
  expect_raise(h, "import types; types.MethodType(tt.C.__dict__['get'], 'x')()", "TypeError: ");
  expect_raise(h, "tt.C.__dict__['get'](object())", "TypeError: ");
  /* the signature Python sees */
  CHECK_RC(pyhost_exec(h, "import inspect", NULL), PYHOST_OK);
  /* a heap type's __text_signature__ comes from its doc, and inspect reads a class's,
   * from 3.10 (None and ValueError before) */
  check_expect_py(h, "tt.C.__text_signature__ if sys.version_info >= (3, 10) else 'old'",
            at_least(h, 10) ? "'(start, label=None)'" : "'old'");
  check_expect_py(h, "str(inspect.signature(tt.C)) if sys.version_info >= (3, 10) else 'old'",
            at_least(h, 10) ? "'(start, label=None)'" : "'old'");
  check_expect_py(h, "str(inspect.signature(tt.C.add))", "'(self, /, n, times=1)'");
  check_expect_py(h, "str(inspect.signature(c.add))", "'(n, times=1)'");
  check_expect_py(h, "str(inspect.signature(c.show))", "'(x, /, s=None, *, flag=False)'");
  check_expect_py(h, "str(inspect.signature(c.get))", "'()'");
  check_expect_py(h, "tt.C.get.__doc__", "'The value.'");
  check_expect_py(h, "tt.C.__doc__", "'A counter.'");
  check_expect_py(h, "c.add.__self__ is c", "True");
  /* the method descriptor's class is immutable from 3.10, so CPython caches the
   * method's look-up (its specializer refuses descriptors of mutable classes) */
  check_expect_py(h, "bool(type(tt.C.__dict__['add']).__flags__ & (1 << 8)) == (sys.version_info >= (3, 10))",
            "True");
  /* bad specs are refused, naming the cause */
  pyhost_type *bad = NULL;
  pyhost_typed_method_def broken[] = {{"add(n: integer)", counter_add, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "D", .typed_methods = broken,
                           .n_typed_methods = 1};
  CHECK_RC(pyhost_type_new(h, m, &spec, &bad), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "add(n: integer)") != NULL);
  pyhost_type_spec spec2 = {PYHOST_TYPE_SPEC_INIT, .name = "D", .typed_constructor = counter_init,
                            .constructor_signature = "E(start: int)"};
  CHECK_RC(pyhost_type_new(h, m, &spec2, &bad), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "names E, not the type D") != NULL);
  spec2.constructor_signature = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec2, &bad), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "go together") != NULL);
  spec2.constructor_signature = "D(start: int)";
  spec2.fast_constructor = fast_ctor_unused;
  CHECK_RC(pyhost_type_new(h, m, &spec2, &bad), PYHOST_MISUSE);
  CHECK(strstr(pyhost_errmsg(h), "typed_constructor and another constructor") != NULL);
  spec2.fast_constructor = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec2, &bad), PYHOST_OK); /* a pointer payload */
  pyhost_type_free(h, bad);
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

TEST_CASE(typed_methods_hostile_python) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup_types(h, &t);
  define_hostile(h);
  CHECK_RC(pyhost_exec(h, "c = tt.C(1)", NULL), PYHOST_OK);
  expect_raise(h, "tt.C(Idx())", "TypeError: tt.C() argument 'start' must be int, not __main__.Idx");
  expect_raise(h, "c.add(Idx())", "TypeError: tt.C.add() argument 'n' must be int, not __main__.Idx");
  expect_raise(h, "c.show(Idx())", "TypeError: tt.C.show() argument 'x' must be float, not __main__.Idx");
  check_expect_py(h, "tt.C(1, Str('ab')).get()", "3");
  check_expect_py(h, "c.add(2, **{Str('times'): 3})", "7");
  check_expect_py(h, "tt.C(**{Str('start'): 4}).get()", "4");
  check_expect_py(h, "ran", "[]");
  /* recursion through the host with no Python frame between the levels */
  expect_raise(h, "tt.C(1).again()", "RecursionError");
  check_expect_py(h, "tt.C(2).get()", "2"); /* and the next call runs */
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* `C(...)` takes quick ways past type_call (a typed constructor's common call; from
 * 3.14 the type's own vectorcall): they must do what type_call does, whatever Python
 * changed in the class or made of it. */
TEST_CASE(typed_constructor_calls_like_type_call) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup_types(h, &t);
  check_expect_py(h, "[tt.C(i).get() for i in range(3)]", "[0, 1, 2]"); /* the quick way */
  check_expect_py(h, "tt.C(*[4]).get(), tt.C(*(), **{'start': 5}).get(), tt.C(6, label=None).get()",
            "(4, 5, 6)");
  expect_raise(h, "tt.C(1, 2, 3)", "TypeError: tt.C() takes at most 2 positional arguments (3 given)");
  expect_raise(h, "tt.C(1, start=2)",
               "TypeError: argument for tt.C() given by name ('start') and position (1)");
  /* __init__ set on the class runs after the constructor, with the same arguments */
  CHECK_RC(pyhost_exec(h,
                       "seen = []\n"
                       "tt.C.__init__ = lambda self, *a, **k: seen.append((self.get(), a, k))\n"
                       "c = tt.C(7)\n"
                       "c = tt.C(8, label='ab')\n",
                       NULL),
           PYHOST_OK);
  check_expect_py(h, "seen", "[(7, (7,), {}), (10, (8,), {'label': 'ab'})]");
  CHECK_RC(pyhost_exec(h, "del tt.C.__init__", NULL), PYHOST_OK);
  check_expect_py(h, "tt.C(9).get(), len(seen)", "(9, 2)");
  /* a __new__ set on the class replaces the constructor (deleting it would leave
   * object's: CPython's rule) */
  CHECK_RC(pyhost_exec(h, "tt.C.__new__ = staticmethod(lambda cls, *a, **k: ('new', a, k))", NULL),
           PYHOST_OK);
  check_expect_py(h, "tt.C(1), tt.C(2, label='x')", "(('new', (1,), {}), ('new', (2,), {'label': 'x'}))");
  /* a subclass's own __init__ runs (3.8+: subclasses are refused before) */
  pyhost_type *sub = NULL;
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT,
                           .name = "K",
                           .typed_methods = counter_methods,
                           .n_typed_methods = 1,
                           .typed_constructor = counter_init,
                           .constructor_signature = "K(start: int, label: str = None)",
                           .payload_size = sizeof(struct counter),
                           .flags = PYHOST_TYPE_SUBCLASSABLE};
  CHECK_RC(pyhost_type_new(h, m, &spec, &sub), PYHOST_OK);
  if (at_least(h, 8)) {
    CHECK_RC(pyhost_exec(h,
                         "class S(tt.K):\n"
                         "    def __init__(self, start, label=None): self.twice = 2 * start\n"
                         "s = [tt.K(3), S(4)]\n",
                         NULL),
             PYHOST_OK);
    check_expect_py(h, "[type(x).__name__ for x in s], s[0].get(), s[1].get(), s[1].twice",
              "(['K', 'S'], 3, 4, 8)");
  }
  pyhost_type_free(h, sub);
  /* a keyword-only parameter is never bound by position, however many are given
   * (the quick binding from the tuple once took T(1, 2) for T(1, extra=2)) */
  pyhost_type *kwo = NULL;
  pyhost_type_spec kspec = {PYHOST_TYPE_SPEC_INIT,
                            .name = "K2",
                            .typed_methods = counter_methods,
                            .n_typed_methods = 1,
                            .typed_constructor = counter_init,
                            .constructor_signature = "K2(start: int, *, extra: int = 0)",
                            .payload_size = sizeof(struct counter)};
  CHECK_RC(pyhost_type_new(h, m, &kspec, &kwo), PYHOST_OK);
  check_expect_py(h, "tt.K2(1).get(), tt.K2(2, extra=5).get()", "(1, 2)");
  expect_raise(h, "tt.K2(1, 2)", "TypeError: tt.K2() takes at most 1 positional argument (2 given)");
  pyhost_type_free(h, kwo);
  pyhost_type_free(h, t);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* More typed methods than there are trampolines (512): the rest are pyhost's own
 * descriptors, and every method of every type still calls its own callback. */
static int method_index(pyhost *h, void *payload, void *ud, const pyhost_arg *argv,
                        pyhost_ret *ret) {
  (void)payload, (void)ud, (void)argv;
  return pyhost_ret_int(h, ret, 0);
}
static int method_add(pyhost *h, void *payload, void *ud, const pyhost_arg *argv,
                      pyhost_ret *ret) {
  (void)payload, (void)ud;
  return pyhost_ret_int(h, ret, argv[0].u.i + argv[1].u.i);
}
TEST_CASE(typed_methods_past_the_trampolines) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "many", NULL, &m), PYHOST_OK);
  enum { PER_TYPE = 100, TYPES = 6 }; /* 600 methods */
  static char sigs[TYPES][PER_TYPE][32];
  static pyhost_typed_method_def defs[TYPES][PER_TYPE];
  pyhost_type *types[TYPES] = {NULL};
  for (int k = 0; k < TYPES; k++) {
    for (int i = 0; i < PER_TYPE; i++) {
      snprintf(sigs[k][i], sizeof sigs[k][i], "m%d(a: int, b: int = %d)", i, k * 1000 + i);
      defs[k][i] = (pyhost_typed_method_def){sigs[k][i], i % 2 ? method_add : method_index, NULL};
    }
    char name[8];
    snprintf(name, sizeof name, "T%d", k);
    pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = name, .typed_methods = defs[k],
                             .n_typed_methods = PER_TYPE, .typed_constructor = counter_init,
                             .constructor_signature = NULL, .payload_size = sizeof(struct counter)};
    char ctor[48];
    snprintf(ctor, sizeof ctor, "T%d(start: int, label: str = None)", k);
    spec.constructor_signature = ctor;
    CHECK_RC(pyhost_type_new(h, m, &spec, &types[k]), PYHOST_OK);
  }
  CHECK_RC(pyhost_exec(h,
                       "import many\n"
                       "got = []\n"
                       "for k in range(6):\n"
                       "    o = getattr(many, 'T%d' % k)(0)\n"
                       "    for i in range(1, 100, 2):\n"
                       "        got.append(getattr(o, 'm%d' % i)(1) == 1 + k * 1000 + i)\n"
                       "        got.append(getattr(o, 'm%d' % i)(1, b=2) == 3)\n"
                       /* every argument by position: bound straight from the call's
                        * tuple or array, after self when the tuple holds it */
                       "        got.append(getattr(o, 'm%d' % i)(1, 5) == 6)\n"
                       "        got.append(getattr(type(o), 'm%d' % i)(o, 2, 5) == 7)\n",
                       NULL),
           PYHOST_OK);
  check_expect_py(h, "len(got), all(got)", "(1200, True)");
  /* the last type's methods are past the 512 trampolines: the same errors either way,
   * but the unbound form's own message */
  expect_raise(h, "many.T5(0).m99()", "TypeError: many.T5.m99() missing required argument 'a' (pos 1)");
  expect_raise(h, "many.T0(0).m1()", "TypeError: many.T0.m1() missing required argument 'a' (pos 1)");
  expect_raise(h, "many.T5.m99(1, 2)",
               "TypeError: many.T5.m99() needs a 'many.T5' object as its first argument");
  check_expect_py(h, "type(many.T5.__dict__['m99']).__name__, type(many.T0.__dict__['m1']).__name__",
            "('method', 'method_descriptor')");
  /* up to 3.9 the runtime caches a look-up on a type only when the type has
   * Py_TPFLAGS_HAVE_VERSION_TAG (bit 18, in those versions' Py_TPFLAGS_DEFAULT): every
   * type pyhost makes has it there, so `obj.m` does not walk the class's MRO each time */
  check_expect_py(h,
            "__import__('sys').version_info >= (3, 10) or all(t.__flags__ & (1 << 18) for t in "
            "(many.T5, type(many.T5.__dict__['m99']), type(many.T5(0).m99)))",
            "True");
  for (int k = 0; k < TYPES; k++) pyhost_type_free(h, types[k]);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- reading scalars runs no Python code (issue 39, defect 1) ---- */

/* fast_floats(x, n): x read by pyhost_args_float, n by pyhost_args_int. */
static int fast_floats(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  double x;
  int64_t n;
  int rc;
  (void)ud;
  if ((rc = pyhost_args_float(h, args, 0, &x)) || (rc = pyhost_args_int(h, args, 1, &n))) return rc;
  return pyhost_ret_float(h, ret, x * (double)n);
}

/* Subclasses of int and float whose dunders would change the value (or fail) are read
 * by their value at every door that reads a C scalar: the typed functions' binding
 * (quick and full), typed methods and constructors, the fast form's getters and the
 * typed results of calls into Python.  None of their dunders runs. */
TEST_CASE(scalar_reads_run_no_python_code) {
  pyhost *h = start();
  pyhost_type *t = NULL;
  pyhost_module *m = setup(h);
  pyhost_module *tm2 = setup_types(h, &t);
  static const pyhost_typed_method_def scaled_methods[] = {{"mul(y: float)", scaled_mul, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "S", .typed_methods = scaled_methods,
                           .n_typed_methods = 1, .typed_constructor = scaled_init,
                           .constructor_signature = "S(x: float, n: int)",
                           .payload_size = sizeof(double)};
  pyhost_type *st = NULL;
  CHECK_RC(pyhost_type_new(h, tm2, &spec, &st), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "floats", fast_floats, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_exec(h,
                       "ran = []\n"
                       "class I(int):\n"
                       "    def __float__(self): ran.append('float'); return 99.0\n"
                       "    def __index__(self): ran.append('index'); return 98\n"
                       "    def __int__(self): ran.append('int'); return 97\n"
                       "    def __bool__(self): ran.append('bool'); return False\n"
                       "class F(float):\n"
                       "    def __float__(self): ran.append('ffloat'); raise ValueError('no')\n"
                       "    def __index__(self): ran.append('findex'); return 1\n"
                       "def give(x):\n"
                       "    return x\n",
                       NULL),
           PYHOST_OK);
  /* typed functions: by position (the full binder after the quick one) and keyword */
  check_expect_py(h, "tm.scale(I(3), I(2))", "6.0");
  check_expect_py(h, "tm.scale(x=I(3), factor=F(2.5))", "7.5");
  check_expect_py(h, "tm.scale(F(1.5), 2)", "3.0");
  check_expect_py(h, "tm.mix(I(-5), I(4))", "'i-5 f4 b0 None None sa, b/4/1'");
  expect_raise(h, "tm.scale(I(2**1100), 1)",
               "OverflowError: tm.scale() argument 'x': int too large to convert to float");
  expect_raise(h, "tm.scale(True, 1)", "TypeError: tm.scale() argument 'x' must be float, not bool");
  expect_raise(h, "tm.mix(False)", "TypeError: tm.mix() argument 'i' must be int, not bool");
  /* typed constructors and methods */
  check_expect_py(h, "tt.S(I(2), I(3)).mul(I(4))", "24.0");
  check_expect_py(h, "tt.S(x=F(0.5), n=I(2)).mul(y=F(3.0))", "3.0");
  check_expect_py(h, "tt.C(I(7), label=None).add(I(2), times=I(3))", "13");
  /* the fast form's getters */
  check_expect_py(h, "tm.floats(I(3), I(5))", "15.0");
  check_expect_py(h, "tm.floats(F(0.25), I(4))", "1.0");
  expect_raise(h, "tm.floats(I(2**1100), 1)",
               "OverflowError: tm.floats() argument 0: int too large to convert to float");
  expect_raise(h, "tm.floats(True, 1)", "TypeError: tm.floats() argument 0: expected float, got bool");
  check_expect_py(h, "ran", "[]");
  /* the typed results of calls into Python */
  pyhost_callable *give = NULL;
  CHECK_RC(pyhost_prepare_name(h, "give", &give), PYHOST_OK);
  CHECK_RC(pyhost_exec(h, "i3, f2 = I(3), F(2.5)", NULL), PYHOST_OK);
  pyhost_value *i3 = NULL, *f2 = NULL;
  CHECK_RC(pyhost_get_global(h, "i3", &i3), PYHOST_OK);
  CHECK_RC(pyhost_get_global(h, "f2", &f2), PYHOST_OK);
  pyhost_arg a = pyhost_arg_value(i3), b = pyhost_arg_value(f2);
  double d = 0;
  int64_t n = 0;
  CHECK_RC(pyhost_prepared_call_float(h, give, &a, 1, &d), PYHOST_OK);
  CHECK(d == 3.0);
  CHECK_RC(pyhost_prepared_call_float(h, give, &b, 1, &d), PYHOST_OK);
  CHECK(d == 2.5);
  CHECK_RC(pyhost_prepared_call_int(h, give, &a, 1, &n), PYHOST_OK);
  CHECK(n == 3);
  CHECK_RC(pyhost_prepared_callf(h, give, "O>d", i3, &d), PYHOST_OK);
  CHECK(d == 3.0);
  CHECK_RC(pyhost_call_namef(h, "give", "O>L", i3, &n), PYHOST_OK);
  CHECK(n == 3);
  /* arrays of numbers read from a Python list */
  pyhost_value *ints = NULL, *floats = NULL;
  CHECK_RC(pyhost_exec(h, "def ints(): return [I(3), -4]\n"
                          "def floats(): return [I(3), F(2.5), 1.0]\n", NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_call_namef(h, "ints", ">o", &ints), PYHOST_OK);
  CHECK_RC(pyhost_call_namef(h, "floats", ">o", &floats), PYHOST_OK);
  int64_t iv[2] = {0, 0};
  double dv[3] = {0, 0, 0};
  size_t count = 0;
  CHECK_RC(pyhost_value_to_int64s(h, ints, iv, 2, &count), PYHOST_OK);
  CHECK(count == 2 && iv[0] == 3 && iv[1] == -4);
  CHECK_RC(pyhost_value_to_doubles(h, floats, dv, 3, &count), PYHOST_OK);
  CHECK(count == 3 && dv[0] == 3.0 && dv[1] == 2.5 && dv[2] == 1.0);
  pyhost_value_free(ints);
  pyhost_value_free(floats);
  check_expect_py(h, "ran", "[]");
  pyhost_value_free(i3);
  pyhost_value_free(f2);
  pyhost_callable_free(give);
  pyhost_type_free(h, st);
  pyhost_type_free(h, t);
  pyhost_module_free(h, tm2);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- a removed function's callback never runs (issue 39, defect 2) ---- */

static int victim_removed; /* set by remove_victim: the host may free its state now */
static int victim_ran_after_removal;
static pyhost_module *victim_module;

static int typed_victim(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv;
  if (victim_removed) victim_ran_after_removal++;
  return pyhost_ret_int(h, ret, 1);
}
static int fast_victim(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args;
  if (victim_removed) victim_ran_after_removal++;
  return pyhost_ret_int(h, ret, 1);
}
/* remove_victim(): what a hostile callback of Python's does to the function being
 * called. */
static int fast_remove_victim(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args, (void)ret;
  int rc = pyhost_module_remove(h, victim_module, "victim");
  if (rc == PYHOST_OK) victim_removed = 1;
  return rc == PYHOST_NOTFOUND ? PYHOST_OK : rc;
}

static void add_victim(pyhost *h, int typed) {
  victim_removed = 0;
  CHECK_RC(typed ? pyhost_module_add_typed_function(h, victim_module, "victim(x: float, s: str = '')",
                                                    typed_victim, NULL, NULL)
                 : pyhost_module_add_fast_function(h, victim_module, "victim", fast_victim, NULL, NULL),
           PYHOST_OK);
}

/* Python code that runs while a call is on its way to the callback removes the
 * function: the int subclass whose __float__ removes it (no dunder runs now), and
 * a collection (gc.callbacks; threshold 1, so every other allocation of a tracked object
 * collects) at each allocation of the call in turn, CPython's own
 * argument tuple before 3.10 included (on 3.6-3.8 CPython reads the function's C
 * pointer before making the tuple, so the call arrives at the open door of a removed
 * function) and the temporaries of the binding (a str argument's UTF-8 before 3.10).
 * Either the call raises RuntimeError or the callback runs before the removal; never
 * after it. */
TEST_CASE(removed_function_never_runs) {
  pyhost *h = start();
  CHECK_RC(pyhost_module_new(h, "rv", NULL, &victim_module), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, victim_module, "remove_victim", fast_remove_victim,
                                           NULL, NULL),
           PYHOST_OK);
  CHECK_RC(pyhost_exec(h,
                       "import rv, gc\n"
                       "class I(int):\n"
                       "    def __float__(self):\n"
                       "        rv.remove_victim()\n"
                       "        return 2.0\n"
                       "state = {'armed': False, 'skip': 0, 'hits': 0}\n"
                       "def on_gc(phase, info):\n"
                       "    if phase == 'start' and state['armed']:\n"
                       "        if state['skip']:\n"
                       "            state['skip'] -= 1\n"
                       "            return\n"
                       "        state['armed'] = False\n"
                       "        state['hits'] += 1\n"
                       "        rv.remove_victim()\n"
                       "gc.callbacks.append(on_gc)\n"
                       "def trial(k, kw):\n"
                       "    f = rv.victim\n"
                       "    keep = []\n"
                       "    gc.collect()\n"
                       "    old = gc.get_threshold()\n"
                       "    gc.set_threshold(1)\n"
                       "    for _ in range(k % 2): keep.append([])\n"
                       "    state['skip'] = k // 2\n"
                       "    state['armed'] = True\n"
                       "    try:\n"
                       "        r = f(1.5, s='abc') if kw else f(1.5, 'abc')\n"
                       "    except RuntimeError as e:\n"
                       "        r = str(e)\n"
                       "    finally:\n"
                       "        state['armed'] = False\n"
                       "        gc.set_threshold(*old)\n"
                       "    return r\n",
                       NULL),
           PYHOST_OK);
  for (int typed = 0; typed < 2; typed++) {
    if (typed) {
      add_victim(h, 1);
      pyhost_value *v = NULL;
      CHECK_RC(pyhost_exec(h, "f = rv.victim", NULL), PYHOST_OK);
      int rc = pyhost_eval(h, "f(I(3))", &v); /* 1, or the refusal */
      CHECK(rc == PYHOST_OK || strstr(pyhost_errmsg(h), "rv.victim was unregistered") != NULL);
      pyhost_value_free(v);
      CHECK(victim_ran_after_removal == 0);
    }
    for (int k = 0; k < 8; k++) /* a collection at each allocation of the call in turn */
      for (int kw = 0; kw < 2; kw++) {
        add_victim(h, typed);
        char expr[32];
        snprintf(expr, sizeof expr, "trial(%d, %d)", k, kw);
        pyhost_value *v = NULL;
        CHECK_RC(pyhost_eval(h, expr, &v), PYHOST_OK);
        const char *r = pyhost_value_repr(h, v);
        CHECK(r && (strcmp(r, "1") == 0 || strcmp(r, "'rv.victim was unregistered by the host'") == 0));
        pyhost_value_free(v);
        if (victim_ran_after_removal) fprintf(stderr, "typed %d k %d kw %d: ran after removal\n", typed, k, kw);
        CHECK(victim_ran_after_removal == 0);
        victim_ran_after_removal = 0;
      }
  }
  /* before 3.10 a collection ran inside calls (from 3.10 the calls allocate nothing the
   * collector tracks) */
  check_expect_py(h, "state['hits'] > 0 or __import__('sys').version_info >= (3, 10)", "True");
  pyhost_module_free(h, victim_module);
  pyhost_free(h);
}

/* ---- an invalidated instance's callbacks never run (issue 39, defect 2) ---- */

static pyhost_value *inv_obj;  /* the instance the hostile code invalidates */
static pyhost_type *inv_type;
static int inv_done;           /* invalidated: the host may free the payload now */
static int inv_ran_after;      /* callbacks that ran on it after that */

static int inv_value_method(pyhost *h, void *payload, void *ud, const pyhost_value *const *args,
                            size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)h, (void)payload, (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  if (inv_done) inv_ran_after++;
  return PYHOST_OK;
}
static int inv_setter(pyhost *h, void *payload, void *ud, const pyhost_value *value) {
  (void)h, (void)payload, (void)ud, (void)value;
  if (inv_done) inv_ran_after++;
  return PYHOST_OK;
}
static int inv_typed_method(pyhost *h, void *payload, void *ud, const pyhost_arg *argv,
                            pyhost_ret *ret) {
  (void)h, (void)payload, (void)ud, (void)argv, (void)ret;
  if (inv_done) inv_ran_after++;
  return PYHOST_OK;
}
/* invalidate(): what a hostile piece of Python does to the instance being called. */
static int fast_invalidate(pyhost *h, void *ud, const pyhost_args *args, pyhost_ret *ret) {
  (void)ud, (void)args, (void)ret;
  int rc = pyhost_object_invalidate(h, inv_obj, inv_type);
  if (rc == PYHOST_OK) inv_done = 1;
  return rc;
}

/* Converting a value-form method's arguments or a setter's value runs Python code (a
 * metaclass's __getattribute__ asked for the type's name), and so may a typed method's
 * binding before 3.10 (a collection while a str's UTF-8 is kept): code that invalidates
 * the instance there gets ReferenceError, and the callback never sees the payload the
 * host may have freed. */
TEST_CASE(invalidated_instance_never_runs) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "inv", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "invalidate", fast_invalidate, NULL, NULL),
           PYHOST_OK);
  static const pyhost_method_def methods[] = {{"vm", inv_value_method, NULL}};
  static const pyhost_property_def props[] = {{"p", NULL, inv_setter, NULL}};
  static const pyhost_typed_method_def typed[] = {{"tm(x: float, s: str = '')", inv_typed_method, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "T", .methods = methods, .n_methods = 1,
                           .properties = props, .n_properties = 1, .typed_methods = typed,
                           .n_typed_methods = 1};
  CHECK_RC(pyhost_type_new(h, m, &spec, &inv_type), PYHOST_OK);
  CHECK_RC(pyhost_exec(h,
                       "import inv, gc\n"
                       "class M(type):\n"
                       "    def __getattribute__(cls, name):\n"
                       "        if name == '__module__': inv.invalidate()\n"
                       "        return type.__getattribute__(cls, name)\n"
                       "class A(metaclass=M): pass\n"
                       "state = {'armed': False, 'skip': 0, 'hits': 0}\n"
                       "def on_gc(phase, info):\n"
                       "    if phase == 'start' and state['armed']:\n"
                       "        if state['skip']:\n"
                       "            state['skip'] -= 1\n"
                       "            return\n"
                       "        state['armed'] = False\n"
                       "        state['hits'] += 1\n"
                       "        inv.invalidate()\n"
                       "gc.callbacks.append(on_gc)\n"
                       "def attempt(f):\n"
                       "    try:\n"
                       "        f()\n"
                       "        return 'ran'\n"
                       "    except ReferenceError as e:\n"
                       "        return str(e)\n"
                       "def trial(o, k, kw):\n"
                       "    keep = []\n"
                       "    gc.collect()\n"
                       "    old = gc.get_threshold()\n"
                       "    gc.set_threshold(1)\n"
                       "    for _ in range(k % 2): keep.append([])\n"
                       "    state['skip'] = k // 2\n"
                       "    state['armed'] = True\n"
                       "    try:\n"
                       "        return attempt(lambda: o.tm(1.5, s='abc') if kw else o.tm(1.5, 'abc'))\n"
                       "    finally:\n"
                       "        state['armed'] = False\n"
                       "        gc.set_threshold(*old)\n",
                       NULL),
           PYHOST_OK);
  static const char *const calls[] = {"attempt(lambda: o.vm(A()))", "attempt(lambda: o.vm(x=[A()]))",
                                      "attempt(lambda: inv.T.vm(o, A()))",
                                      "attempt(lambda: setattr(o, 'p', A()))"};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0] + 16; i++) {
    inv_done = 0;
    CHECK_RC(pyhost_object_new(h, inv_type, NULL, &inv_obj), PYHOST_OK);
    CHECK_RC(pyhost_set_global(h, "o", inv_obj), PYHOST_OK);
    char trial[64];
    size_t k = i - sizeof calls / sizeof calls[0];
    snprintf(trial, sizeof trial, "trial(o, %zu, %zu)", k / 2, k % 2);
    pyhost_value *v = NULL;
    CHECK_RC(pyhost_eval(h, i < sizeof calls / sizeof calls[0] ? calls[i] : trial, &v), PYHOST_OK);
    const char *r = pyhost_value_repr(h, v);
    if (i < sizeof calls / sizeof calls[0])
      CHECK_STREQ(r, "'inv.T object was invalidated by the host'");
    else
      CHECK(r && (strcmp(r, "'ran'") == 0 || strcmp(r, "'inv.T object was invalidated by the host'") == 0));
    if (inv_ran_after) fprintf(stderr, "call %zu ran on the invalidated instance\n", i);
    CHECK(inv_ran_after == 0);
    inv_ran_after = 0;
    pyhost_value_free(v);
    pyhost_value_free(inv_obj);
  }
  check_expect_py(h, "state['hits'] > 0 or __import__('sys').version_info >= (3, 10)", "True");
  pyhost_type_free(h, inv_type);
  pyhost_module_free(h, m);
  pyhost_free(h);
}

/* ---- defaults are carried exactly or refused (issue 39, defect 4) ---- */

/* d(x: T = D): its argument back, as the Python value it was read as. */
static int typed_echo(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  switch (argv[0].kind) {
  case PYHOST_ARG_INT: return pyhost_ret_int(h, ret, argv[0].u.i);
  case PYHOST_ARG_FLOAT: return pyhost_ret_float(h, ret, argv[0].u.d);
  case PYHOST_ARG_BOOL: return pyhost_ret_bool(h, ret, argv[0].u.b);
  case PYHOST_ARG_STR: return pyhost_ret_str(h, ret, argv[0].u.s, argv[0].len);
  default: return pyhost_ret_none(h, ret);
  }
}

/* Registers d(x: <type> = <dflt>) and checks what came of it: refused, with the
 * column named; or carried exactly: inspect.signature reads the signature, and calling
 * d() gives what calling d with the default inspect shows gives.  1 when taken. */
static int try_default(pyhost *h, pyhost_module *m, const char *type, const char *dflt) {
  char sig[256];
  snprintf(sig, sizeof sig, "d(x: %s = %s)", type, dflt);
  int rc = pyhost_module_add_typed_function(h, m, sig, typed_echo, NULL, NULL);
  if (rc != PYHOST_OK) {
    CHECK_RC(rc, PYHOST_MISUSE);
    if (!strstr(pyhost_errmsg(h), "at column")) fprintf(stderr, "%s: %s\n", sig, pyhost_errmsg(h));
    CHECK_CONTAINS(pyhost_errmsg(h), "at column");
    return 0;
  }
  pyhost_value *v = NULL;
  rc = pyhost_eval(h, "exact()", &v);
  if (rc != PYHOST_OK || strcmp(pyhost_value_repr(h, v), "True") != 0)
    fprintf(stderr, "%s taken but not exact: %s\n", sig,
            rc ? pyhost_errmsg(h) : pyhost_value_repr(h, v));
  CHECK(rc == PYHOST_OK && strcmp(pyhost_value_repr(h, v), "True") == 0);
  pyhost_value_free(v);
  return 1;
}

/* A number below n from the generator seeded *seed. */
static uint32_t next_random(uint32_t *seed, uint32_t n) {
  *seed = *seed * 1103515245u + 12345u;
  return (*seed >> 16) % n;
}

TEST_CASE(typed_defaults_refused_or_exact) {
  pyhost *h = start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "dflt", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_exec(h,
                       "import dflt, inspect\n"
                       "def exact():\n"
                       "    p = inspect.signature(dflt.d).parameters['x']\n"
                       "    a, b, c = dflt.d(), dflt.d(p.default), dflt.d(x=p.default)\n"
                       "    return repr(a) == repr(b) == repr(c) and type(a) is type(b) is type(c)\n",
                       NULL),
           PYHOST_OK);
  static const char *const types[] = {"int", "float", "bool", "str"};
  /* taken by some type, exactly */
  static const struct {
    const char *type, *dflt;
  } good[] = {{"int", "0"}, {"int", "-0"}, {"int", "+5"}, {"int", "9223372036854775807"},
              {"int", "-9223372036854775808"}, {"float", "1.5"}, {"float", "-2.5e-3"},
              {"float", ".5"}, {"float", "5."}, {"float", "1e308"}, {"float", "-0.0"},
              {"float", "1e-400"}, {"float", "2.2250738585072011e-308"},
              {"float", "99999999999999999999"}, {"float", "0.1000000000000000055511151231257827"},
              {"float", "3"}, {"float", "007.5"}, {"bool", "True"}, {"str", "'a, b'"},
              {"str", "'h\xc3\xa9'"}, {"str", "\"x'y\""}, {"str", "'tab\there'"},
              {"str", "''"}, {"int", "None"}, {"str", "None"}};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    if (!try_default(h, m, good[i].type, good[i].dflt))
      fprintf(stderr, "refused: %s = %s: %s\n", good[i].type, good[i].dflt, pyhost_errmsg(h));
    CHECK(try_default(h, m, good[i].type, good[i].dflt));
  }
  /* refused for every type: what Python would read as another value, or not at all */
  static const char *const refused[] = {
      "99999999999999999999", "-9223372036854775809", "inf", "-inf", "nan", "+nan", "1e999",
      "-1e400", "0x10", "1_000", "007", "1e", "1e+", "--1", "'\xff'", "'\xed\xa0\x80'",
      "'a\x01b'", "'\xc0\x80'", "1.5.2", "1f", "True1", "Truex", "-True", "- 5", "."};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      /* (a float parameter takes the ints beyond 64 bits: rounded, as Python rounds) */
      int ok = try_default(h, m, types[t], refused[i]) == 0 ||
               (t == 1 && (strcmp(refused[i], "99999999999999999999") == 0 ||
                           strcmp(refused[i], "-9223372036854775809") == 0));
      if (!ok) fprintf(stderr, "taken: %s = %s\n", types[t], refused[i]);
      CHECK(ok);
    }
  /* and a few hundred made up, half of them shaped like numbers (up to 24 digits,
   * exponents up to 400: the edges of int64 and of a double), half from an alphabet
   * of odd characters: each refused or exact */
  static const char alphabet[] = "0123456789012345678901234567890123456789..eE+-_xXabinfTrue' \"";
  uint32_t seed = 20240601;
#define RAND(n) next_random(&seed, n)
  int taken = 0;
  for (int i = 0; i < 600; i++) {
    char dflt[64];
    size_t len = 0;
    if (i % 2) {
      size_t n = 1 + (size_t)(i % 14);
      for (size_t k = 0; k < n; k++) dflt[len++] = alphabet[RAND(sizeof alphabet - 1)];
    } else {
      if (RAND(3) == 0) dflt[len++] = RAND(2) ? '-' : '+';
      for (size_t k = 0, n = RAND(25); k < n; k++) dflt[len++] = (char)('0' + RAND(10));
      if (RAND(2)) {
        dflt[len++] = '.';
        for (size_t k = 0, n = RAND(6); k < n; k++) dflt[len++] = (char)('0' + RAND(10));
      }
      if (RAND(3) == 0) {
        const char *sign = RAND(2) ? "-" : "";
        len += (size_t)snprintf(dflt + len, sizeof dflt - len, "e%s%u", sign, (unsigned)RAND(400));
      }
    }
    dflt[len] = 0;
    taken += try_default(h, m, types[(i / 2) % 4 == 3 && i % 2 == 0 ? 1 : (i / 2) % 4], dflt);
  }
#undef RAND
  printf("made-up defaults taken: %d of 600\n", taken);
  CHECK(taken > 100); /* the generator makes numbers too */
  /* parameter names Python cannot read back, and self in a method */
  CHECK_RC(pyhost_module_add_typed_function(h, m, "k(class: int)", typed_echo, NULL, NULL), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a parameter named with a Python keyword at column 3");
  CHECK_RC(pyhost_module_add_typed_function(h, m, "k(x: int, lambda: int = 1)", typed_echo, NULL, NULL),
           PYHOST_MISUSE);
  pyhost_type *t = NULL;
  static const pyhost_typed_method_def selfish[] = {{"m(self: int)", counter_add, NULL}};
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "K", .typed_methods = selfish,
                           .n_typed_methods = 1};
  CHECK_RC(pyhost_type_new(h, m, &spec, &t), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a method's parameter named self");
  pyhost_module_free(h, m);
  pyhost_free(h);
}
