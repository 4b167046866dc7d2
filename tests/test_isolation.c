/* test_isolation.c: plugins at the process isolation level (issue 34), on every
 * Python of the matrix.  Arguments: CASE LIB VERSION [OTHER_LIB].  Every case ends
 * with iso_stop, which fails it when a worker process is left behind. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "isolation.h"
#include "reliab.h"

#include "wire.h" /* white-box: pyhost__proc_deathsig (a test seam), the protocol */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- state, values, errors ---- */

static const char STATEFUL[] =
    "import json, sys\n"
    "marker = None\n"
    "def set_marker(v):\n"
    "    global marker\n"
    "    marker = v\n"
    "    json.dumps = lambda *a, **k: 'patched by ' + v\n"
    "    sys.pyhost_test_flag = v\n"
    "    return v\n"
    "def get_marker():\n"
    "    return marker\n"
    "def json_of(x):\n"
    "    return json.dumps(x)\n"
    "def flag():\n"
    "    return getattr(sys, 'pyhost_test_flag', None)\n"
    "def pid():\n"
    "    import os\n"
    "    return os.getpid()\n";

static const char *str_of(pyhost *h, pyhost_plugin *p, const char *hook, const char *arg) {
  static char out[4][256];
  static int next;
  char *o = out[next++ % 4];
  const char *s = NULL;
  size_t n = 0;
  int rc = arg ? pyhost_plugin_callf(h, p, hook, "s>s", arg, &s, &n)
               : pyhost_plugin_callf(h, p, hook, ">s", &s, &n);
  if (rc != PYHOST_OK) {
    snprintf(o, 256, "<%s: %s>", pyhost_status_name(rc), pyhost_errmsg(h));
    return o;
  }
  snprintf(o, 256, "%.*s", (int)n, s);
  return o;
}

/* Two process-level plugins and a shared one: each sees its own globals, its own
 * json and sys; the host's are untouched. */
TEST_CASE(state_isolated_between_plugins) {
  pyhost *h = iso_start();
  iso_put("a.py", STATEFUL);
  iso_put("b.py", STATEFUL);
  iso_put("c.py", STATEFUL);
  pyhost_plugin *a = iso_load(h, "a.py", NULL), *b = iso_load(h, "b.py", NULL);
  pyhost_plugin *c = iso_load_shared(h, "c.py");
  CHECK(a && b && c);
  CHECK(pyhost_plugin_isolation(a) == PYHOST_ISOLATION_PROCESS);
  CHECK(pyhost_plugin_isolation(c) == PYHOST_ISOLATION_SHARED);
  CHECK_STREQ(str_of(h, a, "set_marker", "A"), "A");
  CHECK_STREQ(str_of(h, b, "set_marker", "B"), "B");
  CHECK_STREQ(str_of(h, a, "json_of", "x"), "patched by A");
  CHECK_STREQ(str_of(h, b, "json_of", "x"), "patched by B");
  CHECK_STREQ(str_of(h, a, "flag", NULL), "A");
  CHECK_STREQ(str_of(h, b, "flag", NULL), "B");
  /* the shared plugin and the host see neither */
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_plugin_call(h, c, "flag", NULL, NULL, &v), PYHOST_OK);
  CHECK(pyhost_value_kind(v) == PYHOST_KIND_NONE);
  pyhost_value_free(v);
  reliab_expect_int(h, "1 if __import__('json').dumps(1) == '1' else 0", 1);
  long pa = (long)iso_int(h, a, "pid"), pb = (long)iso_int(h, b, "pid");
  CHECK(pa > 0 && pb > 0 && pa != pb && pa != (long)getpid());
  CHECK(pa == pyhost_plugin_process_id(a) && pb == pyhost_plugin_process_id(b));
  CHECK(pyhost_plugin_process_id(c) == 0);
  pyhost_plugin_unload(a);
  iso_wait_gone(pa);
  pyhost_plugin_unload(b);
  pyhost_plugin_unload(c);
  iso_stop(h);
}

static const char VALUES[] =
    "import collections\n"
    "class Color(int):\n"
    "    pass\n"
    "def echo(*args, **kwargs):\n"
    "    return [list(args), kwargs]\n"
    "def sample():\n"
    "    return {'none': None, 't': True, 'f': False, 'i': -7, 'big': 2 ** 100,\n"
    "            'neg': -(3 ** 90), 'x': 1.5, 's': 'h\\u00e9\\x00llo', 'b': b'\\x00\\xff',\n"
    "            'l': [1, [2, (3, {'k': 'v'})]], 't2': (), 'od': collections.OrderedDict(a=1),\n"
    "            'sub': Color(5), 'nested': [[[[[[1]]]]]]}\n"
    "def an_object():\n"
    "    return collections.deque([1])\n";

/* The same hook returns the same values, with the same Python type names, at both
 * levels; objects do not cross, and say so. */
TEST_CASE(values_cross_as_in_process) {
  pyhost *h = iso_start();
  iso_put("v.py", VALUES);
  pyhost_plugin *p = iso_load(h, "v.py", NULL), *s = iso_load_shared(h, "v.py");
  pyhost_value *a = NULL, *b = NULL;
  CHECK_RC(pyhost_plugin_call(h, p, "sample", NULL, NULL, &a), PYHOST_OK);
  CHECK_RC(pyhost_plugin_call(h, s, "sample", NULL, NULL, &b), PYHOST_OK);
  char ra[2048], rb[2048];
  snprintf(ra, sizeof ra, "%s", pyhost_value_repr(h, a));
  snprintf(rb, sizeof rb, "%s", pyhost_value_repr(h, b));
  CHECK_STREQ(ra, rb);
  CHECK_STREQ(pyhost_value_type_name(pyhost_value_lookup(a, "od")), "collections.OrderedDict");
  CHECK_STREQ(pyhost_value_type_name(pyhost_value_lookup(a, "sub")),
              pyhost_value_type_name(pyhost_value_lookup(b, "sub")));
  char digits[64];
  size_t len = 0;
  CHECK_RC(pyhost_value_to_int_text(h, pyhost_value_lookup(a, "big"), digits, sizeof digits, &len),
           PYHOST_OK);
  CHECK_STREQ(digits, "1267650600228229401496703205376");
  const void *bytes = NULL;
  CHECK_RC(pyhost_value_to_bytes(h, pyhost_value_lookup(a, "b"), &bytes, &len), PYHOST_OK);
  CHECK(len == 2 && memcmp(bytes, "\0\xff", 2) == 0);
  pyhost_value_free(b);
  /* the values go back in as arguments, positional and by keyword */
  pyhost_value *args = pyhost_value_tuple(), *kw = pyhost_value_dict(), *r1 = NULL, *r2 = NULL;
  pyhost_value_append(args, pyhost_value_copy(a));
  pyhost_value_append(args, pyhost_value_int(-1));
  pyhost_value_set(kw, pyhost_value_str("key", PYHOST_STRLEN), pyhost_value_copy(a));
  CHECK_RC(pyhost_plugin_call(h, p, "echo", args, kw, &r1), PYHOST_OK);
  CHECK_RC(pyhost_plugin_call(h, s, "echo", args, kw, &r2), PYHOST_OK);
  snprintf(ra, sizeof ra, "%s", pyhost_value_repr(h, r1));
  snprintf(rb, sizeof rb, "%s", pyhost_value_repr(h, r2));
  CHECK_STREQ(ra, rb);
  pyhost_value_free(r1);
  pyhost_value_free(r2);
  pyhost_value_free(a);
  /* an object cannot cross, either way */
  CHECK_RC(pyhost_plugin_call(h, p, "an_object", NULL, NULL, &r1), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "returned a collections.deque object");
  CHECK(r1 == NULL);
  pyhost_value *obj = NULL, *args2 = pyhost_value_list();
  CHECK_RC(pyhost_eval(h, "object()", &obj), PYHOST_OK);
  pyhost_value_append(args2, obj);
  CHECK_RC(pyhost_plugin_call(h, p, "echo", args2, NULL, &r1), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a object object, which cannot cross");
  /* arguments of the wrong kind: the shared level's statuses */
  CHECK_RC(pyhost_plugin_call(h, p, "echo", kw, NULL, NULL), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "the arguments must be a tuple or a list, not dict");
  CHECK_RC(pyhost_plugin_call(h, p, "echo", NULL, args, NULL), PYHOST_TYPE);
  CHECK_CONTAINS(pyhost_errmsg(h), "the keyword arguments must be a dict, not tuple");
  pyhost_value_free(args2);
  pyhost_value_free(args);
  pyhost_value_free(kw);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(s);
  iso_stop(h);
}

static const char FORMATS[] =
    "def mix(i, L, d, b, n, s, z, y, o, key=None):\n"
    "    return repr((i, L, d, b, n, s, z, y, o, key))\n"
    "def half(x):\n"
    "    return x / 2\n"
    "def big():\n"
    "    return 2 ** 40\n"
    "def text(n):\n"
    "    return 'x' * n\n"
    "def data(n):\n"
    "    return b'\\x01' * n\n"
    "def truth(v):\n"
    "    return v\n"
    "def nothing():\n"
    "    pass\n";

/* pyhost_plugin_callf means the same at both levels: every argument letter, keywords,
 * every result letter, the same errors with the same messages, borrowed results. */
TEST_CASE(callf_as_in_process) {
  pyhost *h = iso_start();
  iso_put("f.py", FORMATS);
  pyhost_plugin *lv[2] = {iso_load(h, "f.py", NULL), iso_load_shared(h, "f.py")};
  char msgs[2][6][1024];
  char reprs[2][512];
  for (int k = 0; k < 2; k++) {
    pyhost_plugin *p = lv[k];
    pyhost_value *o = pyhost_value_list(), *r = NULL;
    pyhost_value_append(o, pyhost_value_int(9));
    const char *s = NULL;
    size_t n = 0;
    CHECK_RC(pyhost_plugin_callf(h, p, "mix", "iLdbnszyO,key=s>s", 1, (int64_t)1 << 40, 2.5, 1,
                                 "str", "zz-ignored", (size_t)2, "a\0b", (size_t)3, o, "kw", &s, &n),
             PYHOST_OK);
    snprintf(reprs[k], sizeof reprs[k], "%.*s", (int)n, s);
    int i = 0;
    double d = 0;
    int64_t L = 0;
    int b = -1;
    CHECK_RC(pyhost_plugin_callf(h, p, "half", "i>d", 5, &d), PYHOST_OK);
    CHECK(d == 2.5);
    CHECK_RC(pyhost_plugin_callf(h, p, "big", ">L", &L), PYHOST_OK);
    CHECK(L == (int64_t)1 << 40);
    CHECK_RC(pyhost_plugin_callf(h, p, "truth", "b>b", 1, &b), PYHOST_OK);
    CHECK(b == 1);
    CHECK_RC(pyhost_plugin_callf(h, p, "nothing", ""), PYHOST_OK);
    CHECK_RC(pyhost_plugin_callf(h, p, "truth", "O>O", o, &r), PYHOST_OK);
    CHECK_STREQ(pyhost_value_repr(h, r), "[9]");
    pyhost_value_free(r);
    /* borrowed results: valid until the plugin's next callf */
    const char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    CHECK_RC(pyhost_plugin_callf(h, p, "text", "i>s", 3, &t1, &n1), PYHOST_OK);
    CHECK(n1 == 3 && memcmp(t1, "xxx", 3) == 0 && t1[3] == '\0');
    CHECK_RC(pyhost_plugin_callf(h, p, "data", "i>y", 4, &t2, &n2), PYHOST_OK);
    CHECK(n2 == 4 && memcmp(t2, "\1\1\1\1", 4) == 0);
    /* errors, with their messages compared below */
    CHECK_RC(pyhost_plugin_callf(h, p, "big", ">i", &i), PYHOST_RANGE);
    snprintf(msgs[k][0], 1024, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_callf(h, p, "text", "i>i", 2, &i), PYHOST_TYPE);
    snprintf(msgs[k][1], 1024, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_callf(h, p, "truth", "i>b", 1, &b), PYHOST_TYPE);
    snprintf(msgs[k][2], 1024, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_callf(h, p, "half", "s>d", "x", &d), PYHOST_PYEXC);
    snprintf(msgs[k][3], 1024, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_callf(h, p, "half", "q>d", 1, &d), PYHOST_MISUSE);
    snprintf(msgs[k][4], 1024, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_callf(h, p, "text", "z>s", (const char *)NULL, (size_t)3, &t1, &n1),
             PYHOST_MISUSE);
    snprintf(msgs[k][5], 1024, "%s", pyhost_errmsg(h));
    pyhost_value_free(o);
  }
  CHECK_STREQ(reprs[0], reprs[1]);
  CHECK_CONTAINS(reprs[0], "(1, 1099511627776, 2.5, True, None, 'str', 'zz', b'a\\x00b', [9], 'kw')");
  for (int m = 0; m < 6; m++) CHECK_STREQ(msgs[0][m], msgs[1][m]);
  pyhost_plugin_unload(lv[0]);
  pyhost_plugin_unload(lv[1]);
  iso_stop(h);
}

static const char ERRORS[] =
    "def boom():\n"
    "    raise ValueError('boom in the plugin')\n"
    "def leave():\n"
    "    raise SystemExit(3)\n"
    "not_callable = 5\n";

/* Errors read as at the shared level: the same status, the same message with its
 * traceback, exit codes, missing hooks, load failures. */
TEST_CASE(errors_as_in_process) {
  pyhost *h = iso_start();
  iso_put("e.py", ERRORS);
  iso_put("bad.py", "x = 1\ndef f(:\n    pass\n");
  iso_put("raises.py", "import nosuchmodule_pyhost\n");
  pyhost_plugin *lv[2] = {iso_load(h, "e.py", NULL), iso_load_shared(h, "e.py")};
  char msgs[2][5][2048];
  char data[2][1024]; /* the exception as data: type, text, every frame */
  for (int k = 0; k < 2; k++) {
    pyhost_plugin *p = lv[k];
    CHECK_RC(pyhost_plugin_call(h, p, "boom", NULL, NULL, NULL), PYHOST_PYEXC);
    snprintf(msgs[k][0], 2048, "%s", pyhost_errmsg(h));
    int n = snprintf(data[k], sizeof data[k], "%s|%s|%zu", pyhost_errtype(h), pyhost_errtext(h),
                     pyhost_errframe_count(h));
    for (size_t i = 0; i < pyhost_errframe_count(h) && n < (int)sizeof data[k]; i++) {
      const char *file = "", *fn = "";
      int line = 0;
      CHECK_RC(pyhost_errframe(h, i, &file, &line, &fn), PYHOST_OK);
      n += snprintf(data[k] + n, sizeof data[k] - (size_t)n, "|%s:%d:%s", file, line, fn);
    }
    CHECK_RC(pyhost_plugin_call(h, p, "leave", NULL, NULL, NULL), PYHOST_EXIT);
    CHECK(pyhost_exit_code(h) == 3);
    CHECK_RC(pyhost_plugin_has_hook(h, p, "missing"), PYHOST_NOHOOK);
    snprintf(msgs[k][1], 2048, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_call(h, p, "not_callable", NULL, NULL, NULL), PYHOST_NOHOOK);
    snprintf(msgs[k][2], 2048, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_has_hook(h, p, "boom"), PYHOST_OK);
    pyhost_value *hooks = NULL;
    CHECK_RC(pyhost_plugin_hooks(h, p, &hooks), PYHOST_OK);
    CHECK_STREQ(pyhost_value_repr(h, hooks), "['boom', 'leave']");
    pyhost_value_free(hooks);
  }
  CHECK_CONTAINS(msgs[0][0], "plugin e: hook boom raised: Traceback");
  CHECK_CONTAINS(msgs[0][0], "e.py\", line 2, in boom");
  CHECK_STREQ(data[0], data[1]);
  CHECK_CONTAINS(data[0], "ValueError|boom in the plugin|1|");
  CHECK_CONTAINS(data[0], "e.py:2:boom");
  for (int m = 0; m < 3; m++) CHECK_STREQ(msgs[0][m], msgs[1][m]);
  /* load failures: the same message at both levels */
  pyhost_plugin_options *o = iso_proc_options();
  const char *files[] = {"bad.py", "raises.py", "missing.py"};
  for (int f = 0; f < 3; f++) {
    pyhost_plugin *p = NULL;
    CHECK_RC(pyhost_plugin_load_with(h, iso_at(files[f]), o, &p), PYHOST_PYEXC);
    CHECK(p == NULL);
    snprintf(msgs[0][3], 2048, "%s", pyhost_errmsg(h));
    CHECK_RC(pyhost_plugin_load(h, iso_at(files[f]), &p), PYHOST_PYEXC);
    snprintf(msgs[1][3], 2048, "%s", pyhost_errmsg(h));
    CHECK_STREQ(msgs[0][3], msgs[1][3]);
  }
  pyhost_plugin_options_free(o);
  /* the module is in the plugin's process */
  pyhost_value *mod = NULL;
  CHECK_RC(pyhost_plugin_module(h, lv[0], &mod), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "runs in a process of its own");
  CHECK(mod == NULL);
  CHECK_STREQ(pyhost_plugin_module_name(lv[0]), pyhost_plugin_module_name(lv[1]) /* both _1? */
              [0] ? pyhost_plugin_module_name(lv[0]) : "");
  CHECK_CONTAINS(pyhost_plugin_module_name(lv[0]), "_pyhost_plugin_e_");
  CHECK_STREQ(pyhost_plugin_path(lv[0]), pyhost_plugin_path(lv[1]));
  CHECK_STREQ(pyhost_plugin_name(lv[0]), "e");
  pyhost_plugin_unload(lv[0]);
  pyhost_plugin_unload(lv[1]);
  iso_stop(h);
}

/* Reload picks up edits in the plugin's process; a broken edit keeps the old code. */
TEST_CASE(reload_in_process) {
  pyhost *h = iso_start();
  iso_put("r.py", "def v():\n    return 1\n");
  pyhost_plugin *p = iso_load(h, "r.py", NULL);
  long pid = pyhost_plugin_process_id(p);
  CHECK(iso_int(h, p, "v") == 1);
  char first[256];
  snprintf(first, sizeof first, "%s", pyhost_plugin_module_name(p));
  iso_put("r.py", "def v():\n    return 2\n");
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  CHECK(iso_int(h, p, "v") == 2);
  CHECK(strcmp(first, pyhost_plugin_module_name(p)) != 0);
  iso_put("r.py", "def v(:\n");
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
  CHECK(iso_int(h, p, "v") == 2);
  CHECK(pyhost_plugin_process_id(p) == pid); /* reload is not a restart */
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* ---- crashes ---- */

static const char CRASHER[] =
    "import os, sys\n"
    "state = []\n"
    "def add():\n"
    "    state.append(1)\n"
    "    return len(state)\n"
    "def segv():\n"
    "    import ctypes\n"
    "    ctypes.string_at(0)\n"
    "def abort():\n"
    "    sys.stderr.write('about to abort\\n')\n"
    "    os.abort()\n"
    "def exit3():\n"
    "    sys.stderr.write('leaving with 3\\n')\n"
    "    sys.stderr.flush()\n"
    "    os._exit(3)\n"
    "def killed():\n"
    "    import signal\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n";

static void crash_case(const char *hook, int status, const char *says, const char *tail) {
  pyhost *h = iso_start();
  iso_put("crash.py", CRASHER);
  iso_put("other.py", "def ok():\n    return 7\n");
  pyhost_plugin *p = iso_load(h, "crash.py", NULL), *other = iso_load(h, "other.py", NULL);
  CHECK(iso_int(h, p, "add") == 1);
  long pid = pyhost_plugin_process_id(p);
  CHECK_RC(pyhost_plugin_call(h, p, hook, NULL, NULL, NULL), status);
  const char *msg = pyhost_errmsg(h);
  CHECK_CONTAINS(msg, "plugin crash: its process (pid");
  CHECK_CONTAINS(msg, says);
  if (tail) CHECK_CONTAINS(msg, tail);
  iso_wait_gone(pid);
  CHECK(pyhost_plugin_process_id(p) == 0);
  /* the host and the other plugin go on */
  reliab_expect_int(h, "6 * 7", 42);
  CHECK(iso_int(h, other, "ok") == 7);
  /* every later call fails the same way, without hanging */
  CHECK_RC(pyhost_plugin_call(h, p, "add", NULL, NULL, NULL), PYHOST_PROCESS);
  CHECK_CONTAINS(pyhost_errmsg(h), "is not running: its process");
  CHECK_RC(pyhost_plugin_has_hook(h, p, "add"), PYHOST_PROCESS);
  /* a restart starts it afresh */
  CHECK_RC(pyhost_plugin_restart(h, p), PYHOST_OK);
  CHECK(pyhost_plugin_process_id(p) > 0 && pyhost_plugin_process_id(p) != pid);
  CHECK(iso_int(h, p, "add") == 1);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(other);
  iso_stop(h);
}

TEST_CASE(crash_segfault) {
  /* faulthandler's traceback names the plugin's line */
  crash_case("segv", PYHOST_PROCESS, "killed by signal 11 (SIGSEGV)", "crash.py\", line 8 in segv");
}

TEST_CASE(crash_abort) {
  crash_case("abort", PYHOST_PROCESS, "killed by signal 6 (SIGABRT)", "about to abort");
}

TEST_CASE(crash_exit_code) {
  crash_case("exit3", PYHOST_PROCESS, "exited with code 3", "leaving with 3");
}

/* A kill from outside (the out-of-memory killer's way) is named as such. */
TEST_CASE(crash_killed_from_outside) {
  crash_case("killed", PYHOST_PROCESS, "killed by signal 9 (SIGKILL), not by pyhost", NULL);
}

/* Reload brings back a plugin whose process ended, as restart does. */
TEST_CASE(reload_restarts_an_ended_plugin) {
  pyhost *h = iso_start();
  iso_put("crash.py", CRASHER);
  pyhost_plugin *p = iso_load(h, "crash.py", NULL);
  CHECK_RC(pyhost_plugin_call(h, p, "exit3", NULL, NULL, NULL), PYHOST_PROCESS);
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  CHECK(iso_int(h, p, "add") == 1);
  /* restart of a running plugin: a new process, fresh state */
  long pid = pyhost_plugin_process_id(p);
  CHECK_RC(pyhost_plugin_restart(h, p), PYHOST_OK);
  CHECK(pyhost_plugin_process_id(p) != pid);
  iso_wait_gone(pid);
  CHECK(iso_int(h, p, "add") == 1);
  /* the shared level has no fresh start */
  iso_put("s.py", "x = 1\n");
  pyhost_plugin *s = iso_load_shared(h, "s.py");
  CHECK_RC(pyhost_plugin_restart(h, s), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "shared level");
  pyhost_plugin_unload(s);
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* ---- host functions ---- */

static pyhost_plugin *nest_p, *nest_q;
static pyhost *nest_h;
static pyhost_plugin *nest_busy; /* worker_ends_with_its_host_whatever_it_runs */

/* host.down(n): calls the plugin's hook down(n - 1) (alternating plugins) */
static int host_down(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  int64_t n = argv[0].u.i;
  if (n <= 0) return pyhost_ret_int(h, ret, 0);
  pyhost_plugin *next = n % 2 ? nest_q : nest_p;
  int64_t r = 0;
  int rc = pyhost_plugin_callf(h, next, "down", "L>L", n - 1, &r);
  if (rc) return pyhost_raise(h, PYHOST_EXC_RUNTIME_ERROR, "nested call: %s", pyhost_errmsg(h));
  return pyhost_ret_int(h, ret, r + 1);
}

static int host_scale(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  return pyhost_ret_float(h, ret, argv[0].u.d * argv[1].u.d);
}

static int host_shout(pyhost *h, void *ud, const pyhost_args *a, pyhost_ret *ret) {
  (void)ud;
  const char *s;
  size_t n;
  int rc = pyhost_args_str(h, a, 0, &s, &n);
  if (rc) return rc;
  char buf[256];
  size_t i = 0;
  for (; i < n && i < sizeof buf - 2; i++) buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
  buf[i++] = '!';
  return pyhost_ret_str(h, ret, buf, i);
}

static int host_fail(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                     const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs, (void)result;
  return pyhost_raise_named(h, "app.Error", "the host says no");
}

static int host_object(pyhost *h, void *ud, const pyhost_value *const *args, size_t nargs,
                       const pyhost_value *kwargs, pyhost_value **result) {
  (void)ud, (void)args, (void)nargs, (void)kwargs;
  return pyhost_eval(h, "object()", result);
}

static int host_counter_new(pyhost *h, void *ud, const pyhost_arg *argv, void **payload) {
  (void)h, (void)ud, (void)argv, (void)payload;
  return PYHOST_OK;
}

static const char USES_HOST[] =
    "import app\n"
    "at_load = app.scale(2.0, 3)\n"
    "def down(n):\n"
    "    return app.down(n)\n"
    "def use():\n"
    "    return [app.scale(1.5, factor=2), app.shout('hi'), app.VERSION, at_load]\n"
    "def typed_error():\n"
    "    try:\n"
    "        app.scale('x')\n"
    "    except TypeError as e:\n"
    "        return str(e)\n"
    "def fails():\n"
    "    try:\n"
    "        app.fail()\n"
    "    except app.Error as e:\n"
    "        return 'caught ' + type(e).__name__ + ': ' + str(e)\n"
    "def host_type():\n"
    "    try:\n"
    "        app.Counter()\n"
    "    except TypeError as e:\n"
    "        return str(e)\n"
    "def object_result():\n"
    "    try:\n"
    "        app.make_object()\n"
    "    except TypeError as e:\n"
    "        return str(e)\n"
    "def late():\n"
    "    return app.late()\n"
    "def from_thread():\n"
    "    import threading\n"
    "    out = []\n"
    "    def run():\n"
    "        try:\n"
    "            app.scale(1.0, 1.0)\n"
    "        except RuntimeError as e:\n"
    "            out.append(str(e))\n"
    "    t = threading.Thread(target=run)\n"
    "    t.start()\n"
    "    t.join()\n"
    "    return out[0]\n";

static int host_late(pyhost *h, void *ud, const pyhost_args *a, pyhost_ret *ret) {
  (void)ud, (void)a;
  return pyhost_ret_str(h, ret, "late", PYHOST_STRLEN);
}

static pyhost_module *make_app(pyhost *h) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "app", "the test host", &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "down(n: int)", host_down, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "scale(x: float, factor: float = 1.0)", host_scale,
                                            NULL, "multiplies"),
           PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "shout", host_shout, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "fail", host_fail, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "make_object", host_object, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_exception(h, m, "Error", PYHOST_EXC_VALUE_ERROR, NULL), PYHOST_OK);
  pyhost_value *ver = pyhost_value_str("1.2", PYHOST_STRLEN);
  CHECK_RC(pyhost_module_add_value(h, m, "VERSION", ver), PYHOST_OK);
  pyhost_value_free(ver);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Counter",
                           .typed_constructor = host_counter_new,
                           .constructor_signature = "Counter()"};
  pyhost_type *t = NULL;
  CHECK_RC(pyhost_type_new(h, m, &spec, &t), PYHOST_OK);
  pyhost_type_free(h, t);
  return m;
}

/* The host's module is there in the plugin's process: typed, fast and value
 * functions, values, exception classes; host types refuse clearly; nested calls
 * host -> plugin -> host -> plugin ... across two plugins; changes reach it. */
TEST_CASE(host_functions_nested) {
  pyhost *h = iso_start();
  nest_h = h;
  pyhost_module *m = make_app(h);
  iso_put("u.py", USES_HOST);
  iso_put("w.py", USES_HOST);
  nest_p = iso_load(h, "u.py", NULL);
  nest_q = iso_load(h, "w.py", NULL);
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_plugin_call(h, nest_p, "use", NULL, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "[3.0, 'HI!', '1.2', 6.0]");
  pyhost_value_free(r);
  /* 40 levels: plugin u -> host -> plugin w -> host -> plugin u ... */
  int64_t depth = 0;
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "down", "L>L", (int64_t)40, &depth), PYHOST_OK);
  CHECK(depth == 40);
  /* the typed function's own TypeError, the host's exception class */
  const char *s = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "typed_error", ">s", &s, &n), PYHOST_OK);
  CHECK_CONTAINS(s, "app.scale() argument 'x' must be float, not str");
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "fails", ">s", &s, &n), PYHOST_OK);
  CHECK_STREQ(s, "caught Error: the host says no");
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "host_type", ">s", &s, &n), PYHOST_OK);
  CHECK_CONTAINS(s, "app.Counter is a host type, and host types are in-process only");
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "object_result", ">s", &s, &n), PYHOST_OK);
  CHECK_CONTAINS(s, "app.make_object() returned a object object, which cannot cross");
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "from_thread", ">s", &s, &n), PYHOST_OK);
  CHECK_CONTAINS(s, "on the thread running it (this is another thread)");
  /* a function added after the load is there at the next call; a removed one goes */
  CHECK_RC(pyhost_plugin_call(h, nest_p, "late", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "AttributeError");
  CHECK_RC(pyhost_module_add_fast_function(h, m, "late", host_late, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_plugin_callf(h, nest_p, "late", ">s", &s, &n), PYHOST_OK);
  CHECK_STREQ(s, "late");
  CHECK_RC(pyhost_module_remove(h, m, "late"), PYHOST_OK);
  CHECK_RC(pyhost_plugin_call(h, nest_p, "late", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "AttributeError");
  pyhost_plugin_unload(nest_p);
  pyhost_plugin_unload(nest_q);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* ---- threads ---- */

/* 8 host threads at once on four process-level plugins and a shared one (two threads
 * per plugin take turns), each call calling a host function back. */
TEST_CASE(threads_8_at_once) {
  pyhost *h = iso_start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "calc_host", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "add(a: int, b: int)", iso_host_add, NULL, NULL),
           PYHOST_OK);
  iso_put("t.py", "import calc_host\ndef calc(a, b):\n    return calc_host.add(a * 1000, b)\n");
  pyhost_plugin *ps[5];
  for (int i = 0; i < 4; i++) ps[i] = iso_load(h, "t.py", NULL);
  ps[4] = iso_load_shared(h, "t.py");
  pthread_t t[8];
  struct worker_arg w[8];
  int n = reliab_iterations(300);
  for (int i = 0; i < 8; i++) {
    w[i] = (struct worker_arg){h, ps[i < 6 ? i / 2 : 4], i + 1, n, 0};
    pthread_create(&t[i], NULL, iso_hammer, &w[i]);
  }
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    CHECK(w[i].failures == 0);
  }
  for (int i = 0; i < 5; i++) pyhost_plugin_unload(ps[i]);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* A call that would wait for a plugin held by a thread that waits for one this
 * thread holds answers PYHOST_MISUSE instead of deadlocking. */
static pyhost_plugin *dl_a, *dl_b;
static _Atomic int dl_inside[2];
static _Atomic int dl_status[2];
static char dl_msg[2][512];

static int host_enter(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)h, (void)ud, (void)ret;
  atomic_store(&dl_inside[argv[0].u.i != 0], 1);
  return PYHOST_OK;
}

static int host_both_inside(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud, (void)argv;
  return pyhost_ret_bool(h, ret, atomic_load(&dl_inside[0]) && atomic_load(&dl_inside[1]));
}

/* While this thread's call holds one plugin, a call of the other. */
static int host_cross(pyhost *h, void *ud, const pyhost_arg *argv, pyhost_ret *ret) {
  (void)ud;
  int me = (int)argv[0].u.i;
  int rc = pyhost_plugin_call(h, me ? dl_a : dl_b, "plain", NULL, NULL, NULL);
  atomic_store(&dl_status[me], rc);
  snprintf(dl_msg[me], sizeof dl_msg[me], "%s", pyhost_errmsg(h));
  return pyhost_ret_int(h, ret, rc);
}

static void *cross_thread(void *arg) {
  int me = *(int *)arg;
  int64_t r;
  pyhost_plugin_callf(nest_h, me ? dl_b : dl_a, "cross", "L>L", (int64_t)me, &r);
  return NULL;
}

TEST_CASE(deadlock_is_refused) {
  pyhost *h = iso_start();
  nest_h = h;
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "dl_host", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "cross(me: int)", host_cross, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "enter(me: int)", host_enter, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_typed_function(h, m, "both_inside()", host_both_inside, NULL, NULL),
           PYHOST_OK);
  /* both calls hold their plugin (waiting in the plugins, GIL free) before crossing */
  iso_put("d.py",
          "import dl_host, time\n"
          "def cross(me):\n"
          "    dl_host.enter(me)\n"
          "    while not dl_host.both_inside():\n"
          "        time.sleep(0.001)\n"
          "    return dl_host.cross(me)\n"
          "def plain():\n"
          "    return 1\n");
  dl_a = iso_load(h, "d.py", NULL);
  dl_b = iso_load(h, "d.py", NULL);
  pthread_t t[2];
  int ids[2] = {0, 1};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, cross_thread, &ids[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  /* exactly one of the two waits would have closed the circle */
  int refused = (dl_status[0] == PYHOST_MISUSE) + (dl_status[1] == PYHOST_MISUSE);
  int ok = (dl_status[0] == PYHOST_OK) + (dl_status[1] == PYHOST_OK);
  CHECK(refused == 1 && ok == 1);
  CHECK_CONTAINS(dl_status[0] == PYHOST_MISUSE ? dl_msg[0] : dl_msg[1], "waiting would deadlock");
  pyhost_plugin_unload(dl_a);
  pyhost_plugin_unload(dl_b);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* ---- interrupts, unload and finalize while calls run ---- */

static _Atomic int started;

static int host_started(pyhost *h, void *ud, const pyhost_args *a, pyhost_ret *ret) {
  (void)h, (void)ud, (void)a, (void)ret;
  atomic_store(&started, 1);
  return PYHOST_OK;
}

static int is_started(void *ctx) {
  (void)ctx;
  return atomic_load(&started);
}

static const char SLEEPER[] =
    "import sig_host, time\n"
    "seen = []\n"
    "def sleep_long():\n"
    "    try:\n"
    "        sig_host.started()  # inside: the interrupt may come as soon as it returns\n"
    "        time.sleep(3600)\n"
    "    except KeyboardInterrupt:\n"
    "        seen.append('KeyboardInterrupt')\n"
    "        raise\n"
    "def spin():\n"
    "    sig_host.started()\n"
    "    while True:\n"
    "        pass\n"
    "def stubborn():\n"
    "    while True:\n"
    "        try:\n"
    "            sig_host.started()\n"
    "            time.sleep(3600)\n"
    "        except BaseException:\n"
    "            pass\n"
    "def what_was_seen():\n"
    "    return ','.join(seen)\n"
    "def quick():\n"
    "    return 5\n";

struct call_arg {
  pyhost *h;
  pyhost_plugin *p;
  const char *hook;
  int rc;
  char msg[2048];
};

static void *call_thread(void *arg) {
  struct call_arg *c = arg;
  c->rc = pyhost_plugin_call(c->h, c->p, c->hook, NULL, NULL, NULL);
  snprintf(c->msg, sizeof c->msg, "%s", pyhost_errmsg(c->h));
  return NULL;
}

static pyhost_module *sig_module(pyhost *h) {
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "sig_host", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "started", host_started, NULL, NULL), PYHOST_OK);
  iso_put("sleeper.py", SLEEPER);
  atomic_store(&started, 0);
  return m;
}

/* pyhost_interrupt reaches the plugin's process: KeyboardInterrupt in the hook (also
 * inside time.sleep), PYHOST_INTERRUPTED with the traceback, and the plugin goes on. */
TEST_CASE(interrupt_reaches_worker) {
  pyhost *h = iso_start();
  pyhost_module *m = sig_module(h);
  pyhost_plugin *p = iso_load(h, "sleeper.py", NULL);
  const char *hooks[] = {"sleep_long", "spin"};
  for (int k = 0; k < 2; k++) {
    atomic_store(&started, 0);
    struct call_arg c = {h, p, hooks[k], -1, ""};
    pthread_t t;
    pthread_create(&t, NULL, call_thread, &c);
    reliab_wait(is_started, NULL, "the hook to start");
    CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
    pthread_join(t, NULL);
    CHECK_RC(c.rc, PYHOST_INTERRUPTED);
    CHECK_CONTAINS(c.msg, "interrupted by pyhost_interrupt");
    CHECK_CONTAINS(c.msg, k == 0 ? "in sleep_long" : "in spin");
  }
  const char *s = NULL;
  size_t n = 0;
  CHECK_RC(pyhost_plugin_callf(h, p, "what_was_seen", ">s", &s, &n), PYHOST_OK);
  CHECK_STREQ(s, "KeyboardInterrupt");
  /* an interrupt between calls hits nothing */
  CHECK_RC(pyhost_interrupt(h), PYHOST_OK);
  CHECK(iso_int(h, p, "quick") == 5);
  pyhost_plugin_unload(p);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* Unloading a plugin whose call runs on another thread stops that call and ends its
 * process; unload returns once the call has returned.  A hook that swallows the
 * interrupt is killed after the grace period. */
TEST_CASE(unload_while_a_call_runs) {
  pyhost *h = iso_start();
  pyhost_module *m = sig_module(h);
  const char *hooks[] = {"sleep_long", "stubborn"};
  const int expect[] = {PYHOST_INTERRUPTED, PYHOST_PROCESS};
  for (int k = 0; k < 2; k++) {
    pyhost_plugin_options *o = iso_proc_options();
    /* the grace period before the kill: ample for the one the interrupt stops */
    pyhost_plugin_options_set_call_timeout(o, 0, k == 0 ? 60000 : 200);
    pyhost_plugin *p = iso_load(h, "sleeper.py", o);
    pyhost_plugin_options_free(o);
    long pid = pyhost_plugin_process_id(p);
    atomic_store(&started, 0);
    struct call_arg c = {h, p, hooks[k], -1, ""};
    pthread_t t;
    pthread_create(&t, NULL, call_thread, &c);
    reliab_wait(is_started, NULL, "the hook to start");
    pyhost_plugin_unload(p);
    CHECK(!iso_alive(pid)); /* ended and reaped before unload returned */
    pthread_join(t, NULL);
    CHECK_RC(c.rc, expect[k]);
    if (k == 1) CHECK_CONTAINS(c.msg, "was ended by pyhost_plugin_unload during hook stubborn");
  }
  pyhost_module_free(h, m);
  iso_stop(h);
}

static pyhost_plugin *self_unloaded;

static int host_unload_me(pyhost *h, void *ud, const pyhost_args *a, pyhost_ret *ret) {
  (void)ud, (void)a;
  pyhost_plugin_unload(self_unloaded);
  /* calls on it meanwhile are refused; the running one finishes */
  int rc = pyhost_plugin_call(h, self_unloaded, "quick", NULL, NULL, NULL);
  return pyhost_ret_int(h, ret, rc);
}

/* Unload from a host function the plugin's own call reached: that call finishes,
 * then the plugin ends. */
TEST_CASE(unload_from_its_own_call) {
  pyhost *h = iso_start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "un_host", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "unload_me", host_unload_me, NULL, NULL), PYHOST_OK);
  iso_put("u.py", "import un_host\ndef go():\n    return un_host.unload_me() * 10 + 1\ndef quick():\n    return 5\n");
  self_unloaded = iso_load(h, "u.py", NULL);
  long pid = pyhost_plugin_process_id(self_unloaded);
  int64_t r = 0;
  CHECK_RC(pyhost_plugin_callf(h, self_unloaded, "go", ">L", &r), PYHOST_OK);
  CHECK(r == PYHOST_MISUSE * 10 + 1);
  iso_wait_gone(pid);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* Finalize with workers alive, one with a call running: the call returns, every
 * worker ends, unload afterwards frees memory only. */
TEST_CASE(finalize_with_live_workers) {
  pyhost *h = iso_start();
  pyhost_module *m = sig_module(h);
  iso_put("idle.py", "def f():\n    return 1\n");
  pyhost_plugin *p = iso_load(h, "sleeper.py", NULL);
  pyhost_plugin *q = iso_load(h, "idle.py", NULL), *r = iso_load(h, "idle.py", NULL);
  long pids[3] = {pyhost_plugin_process_id(p), pyhost_plugin_process_id(q),
                  pyhost_plugin_process_id(r)};
  struct call_arg c = {h, p, "stubborn", -1, ""};
  pthread_t t;
  pthread_create(&t, NULL, call_thread, &c);
  reliab_wait(is_started, NULL, "the hook to start");
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pthread_join(t, NULL);
  CHECK(c.rc == PYHOST_PROCESS || c.rc == PYHOST_INTERRUPTED);
  for (int i = 0; i < 3; i++) CHECK(!iso_alive(pids[i]));
  CHECK_RC(pyhost_plugin_call(h, q, "f", NULL, NULL, NULL), PYHOST_MISUSE);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(q);
  pyhost_plugin_unload(r);
  pyhost_module_free(h, m);
  iso_stop(h);
}

/* ---- starting ---- */

/* A worker that cannot start: no such program, a program that is not pyhost's
 * worker, a Python it cannot start. */
TEST_CASE(worker_cannot_start) {
  pyhost *h = iso_start();
  iso_put("p.py", "def f():\n    return 1\n");
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_options_set_worker(o, "/nonexistent/pyhost-worker"), PYHOST_OK);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), o, &p), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "the worker program /nonexistent/pyhost-worker (set in its options) does not exist");
  CHECK_RC(pyhost_plugin_options_set_worker(o, "/bin/true"), PYHOST_OK);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), o, &p), PYHOST_PROCESS);
  CHECK_CONTAINS(pyhost_errmsg(h), "exited with code 0");
  CHECK_RC(pyhost_plugin_options_set_worker(o, NULL), PYHOST_OK);
  setenv("PYHOST_WORKER", "/nonexistent/from-env", 1);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), o, &p), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "/nonexistent/from-env (from PYHOST_WORKER) does not exist");
  unsetenv("PYHOST_WORKER");
  /* a Python it cannot start: pyhost_init's status and message */
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, "/nonexistent/libpython3.99.so");
  CHECK_RC(pyhost_plugin_options_set_python(o, cfg), PYHOST_OK);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), o, &p), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "loading plugin p from ");
  CHECK_CONTAINS(pyhost_errmsg(h), "its process could not start Python: ");
  CHECK_CONTAINS(pyhost_errmsg(h), "libpython3.99.so");
  pyhost_config_set_library(cfg, NULL);
  pyhost_config_set_min_python(cfg, PYHOST_PY(3, 99));
  CHECK_RC(pyhost_plugin_options_set_python(o, cfg), PYHOST_OK);
  int rc = pyhost_plugin_load_with(h, iso_at("p.py"), o, &p);
  CHECK(rc == PYHOST_NOTFOUND || rc == PYHOST_VERSION);
  CHECK_CONTAINS(pyhost_errmsg(h), "its process could not start Python: ");
  pyhost_config_free(cfg);
  CHECK(p == NULL);
  /* options that do not fit the level */
  pyhost_plugin_options *s = pyhost_plugin_options_new();
  pyhost_plugin_options_set_memory_limit(s, 1 << 30);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), s, &p), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "a memory limit applies to the process isolation level only");
  pyhost_plugin_options_set_isolation(s, PYHOST_ISOLATION_INTERPRETER);
  CHECK_RC(pyhost_plugin_load_with(h, iso_at("p.py"), s, &p), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_options_set_isolation(s, 7), PYHOST_MISUSE);
  pyhost_plugin_options_free(s);
  pyhost_plugin_options_free(o);
  iso_stop(h);
}

/* The worker runs another Python than the host's: by library, and by a version that
 * discovery resolves in the worker. */
TEST_CASE(worker_runs_another_python) {
  /* check_arg4: libraries separated by ':'; the first of another version than ours */
  char lib[1024] = "", pattern[32];
  snprintf(pattern, sizeof pattern, "python%s.", check_version);
  for (const char *s = check_arg4 ? check_arg4 : ""; *s;) {
    const char *e = strchr(s, ':');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    snprintf(lib, sizeof lib, "%.*s", (int)n, s);
    if (!strstr(lib, pattern)) break;
    lib[0] = '\0';
    s += n + (e != NULL);
  }
  if (!lib[0]) SKIP("no Python of another version given");
  pyhost *h = iso_start();
  iso_put("v.py", "import sys\ndef version():\n    return '%d.%d' % sys.version_info[:2]\n");
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, lib);
  pyhost_plugin_options_set_python(o, cfg);
  pyhost_plugin *p = iso_load(h, "v.py", o);
  char other[16];
  const char *v = p ? str_of(h, p, "version", NULL) : "";
  snprintf(other, sizeof other, "%s", v);
  CHECK(strcmp(other, check_version) != 0);
  CHECK(strstr(lib, other) != NULL); /* libpython3.X... */
  pyhost_plugin_unload(p);
  /* by version: the minor of the other one, found by discovery in the worker */
  unsigned minor = (unsigned)atoi(strchr(other, '.') + 1);
  pyhost_config_set_library(cfg, NULL);
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, minor));
  pyhost_plugin_options_set_python(o, cfg);
  p = NULL;
  int rc = pyhost_plugin_load_with(h, iso_at("v.py"), o, &p);
  if (rc == PYHOST_NOTFOUND) {
    fprintf(stderr, "discovery finds no %s here: %s\n", other, pyhost_errmsg(h));
  } else {
    CHECK_RC(rc, PYHOST_OK);
    if (p) CHECK_STREQ(str_of(h, p, "version", NULL), other);
    pyhost_plugin_unload(p);
  }
  pyhost_config_free(cfg);
  pyhost_plugin_options_free(o);
  iso_stop(h);
}

static char out_seen[3][4096];
static size_t out_len[3];
static _Atomic int out_calls_with_null, out_block, out_blocked, out_release;
static pthread_t out_main;

/* The output function: collects what plugin "o" writes; for the other plugin, once
 * the case says so and on pyhost's own thread, it holds that thread until the case
 * lets it go, so that only the calling thread can deliver "o"'s output.  (Holding it
 * while a call of that other plugin returns would keep the call waiting: a host's
 * function must return promptly.) */
static void collect(void *ctx, pyhost_plugin *p, int stream, const char *data, size_t len) {
  if (!p) atomic_fetch_add(&out_calls_with_null, 1);
  if (ctx) {
    if (atomic_load(&out_block) && !pthread_equal(pthread_self(), out_main)) {
      atomic_store(&out_blocked, 1);
      while (!atomic_load(&out_release)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
      }
    }
    return;
  }
  if (stream < 1 || stream > 2) return;
  size_t room = sizeof out_seen[stream] - 1 - out_len[stream];
  size_t n = len < room ? len : room;
  memcpy(out_seen[stream] + out_len[stream], data, n);
  out_len[stream] += n;
  out_seen[stream][out_len[stream]] = '\0';
}

static int out_is_blocked(void *ctx) {
  (void)ctx;
  return atomic_load(&out_blocked);
}

/* The worker's stdout and stderr go to the host's function, in order, a call's output
 * before the call returns: delivered on the calling thread (pyhost's own thread is
 * held in the function by another plugin's output meanwhile). */
TEST_CASE(output_to_a_callback) {
  pyhost *h = iso_start();
  out_main = pthread_self();
  iso_put("o.py",
          "import sys\nprint('loading')\n"
          "def say(n):\n"
          "    for i in range(n):\n"
          "        print('line', i)\n"
          "    sys.stderr.write('err %d\\n' % n)\n"
          "    return n\n");
  iso_put("ticker.py",
          "import threading, time\n"
          "def start():\n"
          "    def run():\n"
          "        while True:\n"
          "            print('tick')\n"
          "            time.sleep(0.01)\n"
          "    threading.Thread(target=run, daemon=True).start()\n");
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_plugin_options_set_output(o, collect, NULL);
  pyhost_plugin *p = iso_load(h, "o.py", o);
  pyhost_plugin_options_set_output(o, collect, (void *)"ticker");
  pyhost_plugin *t = iso_load(h, "ticker.py", o);
  pyhost_plugin_options_free(o);
  CHECK_RC(pyhost_plugin_call(h, t, "start", NULL, NULL, NULL), PYHOST_OK);
  atomic_store(&out_block, 1); /* no call of the ticker from now until the release */
  reliab_wait(out_is_blocked, NULL, "pyhost's output thread to be held");
  int64_t r = 0;
  CHECK_RC(pyhost_plugin_callf(h, p, "say", "i>L", 3, &r), PYHOST_OK);
  CHECK_STREQ(out_seen[1], "loading\nline 0\nline 1\nline 2\n");
  CHECK_STREQ(out_seen[2], "err 3\n");
  CHECK_RC(pyhost_plugin_callf(h, p, "say", "i>L", 1, &r), PYHOST_OK);
  CHECK_STREQ(out_seen[1], "loading\nline 0\nline 1\nline 2\nline 0\n");
  CHECK(atomic_load(&out_calls_with_null) >= 1); /* "loading", during the load */
  atomic_store(&out_release, 1);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(t);
  iso_stop(h);
}

/* ---- output, descriptors, lifetime ---- */

/* The descriptors a program the host starts finds open (counted by ls). */
static int child_fds(void) {
  FILE *ls = popen("ls /proc/self/fd | wc -l", "r");
  int count = -1;
  CHECK(ls && fscanf(ls, "%d", &count) == 1);
  if (ls) pclose(ls);
  return count;
}

/* Nothing of the host leaks into its workers or into the programs it starts: the
 * host's other children see what they saw before the workers existed; a worker sees
 * its two channel ends and nothing of the host's (nor of another worker's); what the
 * plugin starts sees neither. */
TEST_CASE(no_descriptor_leaks) {
  /* one descriptor this host got without close-on-exec, as from its own parent */
  int inherited = open("/dev/null", O_RDONLY);
  CHECK(inherited > 2);
  int before = child_fds();
  pyhost *h = iso_start();
  iso_put("fd.py",
          "import os, subprocess\n"
          "def own():\n"
          "    return sorted(int(f) for f in os.listdir('/proc/self/fd'))\n"
          "def child():\n"
          "    out = subprocess.run(['ls', '/proc/self/fd'], stdout=subprocess.PIPE,\n"
          "                         close_fds=False).stdout.split()\n"
          "    return sorted(int(f) for f in out)\n");
  pyhost_plugin *p = iso_load(h, "fd.py", NULL), *q = iso_load(h, "fd.py", NULL);
  CHECK(child_fds() == before);
  pyhost_value *own = NULL, *child = NULL;
  CHECK_RC(pyhost_plugin_call(h, q, "own", NULL, NULL, &own), PYHOST_OK);
  /* 0 1 2, the two channel ends, listdir's own, maybe one of Python's */
  CHECK(pyhost_value_count(own) <= 7);
  if (pyhost_value_count(own) > 7) fprintf(stderr, "the worker has %s\n", pyhost_value_repr(h, own));
  CHECK_RC(pyhost_plugin_call(h, q, "child", NULL, NULL, &child), PYHOST_OK);
  CHECK(pyhost_value_count(child) == 4); /* 0 1 2 and ls's directory */
  if (pyhost_value_count(child) != 4) fprintf(stderr, "child sees %s\n", pyhost_value_repr(h, child));
  pyhost_value_free(own);
  pyhost_value_free(child);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(q);
  close(inherited);
  iso_stop(h);
}

/* A worker whose host ends, however, ends too:
 *   0  the host is killed;
 *   1  the host exits without finalize or unload;
 *   2  the host is killed while a process it forked (without exec) still holds its
 *      descriptors, the end of the control channel among them: the parent-death
 *      signal ends the worker;
 *   3  the host is killed, its workers started without the parent-death signal (a
 *      test seam): the end of the control channel ends the worker.
 * Each time the plugin was loaded by a thread that ended long before: the worker
 * outlives that thread (Linux's parent-death signal belongs to the thread that forks,
 * which is pyhost's own). */
static void *load_on_a_thread(void *arg) {
  pyhost_plugin **p = arg;
  *p = iso_load(nest_h, "w.py", NULL);
  return NULL;
}

static void *spin_on_a_thread(void *arg) {
  pyhost_plugin_call(nest_h, arg, "spin", NULL, NULL, NULL);
  return NULL;
}

TEST_CASE(worker_never_outlives_host) {
  int fds[2], hold[2];
  CHECK(pipe(fds) == 0 && pipe(hold) == 0);
  for (int how = 0; how < 4; how++) {
    pid_t host = fork();
    if (host == 0) { /* a host of its own: Python was never started in this process */
      close(fds[0]);
      pyhost__proc_deathsig = how != 3;
      pyhost *h = iso_start();
      nest_h = h;
      pyhost_module *m = sig_module(h);
      /* busy when its host goes: only the control thread notices then */
      iso_put("w.py", "import sig_host\ndef f():\n    return 1\n"
                      "def spin():\n    sig_host.started()\n    while True:\n        pass\n");
      pyhost_plugin *p = NULL;
      pthread_t t;
      pthread_create(&t, NULL, load_on_a_thread, &p);
      pthread_join(t, NULL); /* the loading thread is gone */
      long pid = p ? pyhost_plugin_process_id(p) : 0;
      if (!p || pyhost_plugin_call(h, p, "f", NULL, NULL, NULL) != PYHOST_OK) pid = 0;
      if (p) {
        pthread_create(&t, NULL, spin_on_a_thread, p);
        reliab_wait(is_started, NULL, "the hook to start");
      }
      if (how == 2 && fork() == 0) { /* the holder: keeps every descriptor until told */
        char c;
        close(hold[1]);
        (void)!read(hold[0], &c, 1);
        _exit(0);
      }
      if (write(fds[1], &pid, sizeof pid) != sizeof pid) _exit(1);
      if (how != 1) kill(getpid(), SIGKILL);
      (void)m;
      _exit(0); /* no finalize, no unload, a call running */
    }
    long pid = 0;
    CHECK(read(fds[0], &pid, sizeof pid) == sizeof pid);
    CHECK(pid > 0);
    int status;
    waitpid(host, &status, 0);
    if (pid > 0) iso_wait_gone(pid);
  }
  close(hold[1]); /* the holder ends (it is reaped by init: it was the host's child) */
  close(hold[0]);
  close(fds[0]);
  close(fds[1]);
  CHECK(iso_children() == 0);
}

/* Whatever the worker is doing when its host ends, it ends too: a pure-Python loop,
 * time.sleep, or a C call that blocks holding the GIL (ctypes.PyDLL: only another
 * thread of the worker can notice anything then).  The host ends three ways: killed,
 * exit() without pyhost_finalize, and pyhost_finalize (which must end and reap the
 * worker itself, the host still alive).  Killed, it is tried with the parent-death
 * signal and without it (the test seam): then only the worker's watchdog, reading the
 * control channel, can end it.  The worker's pid must be gone within reliab's bound. */
static const char BUSY[] =
    "import ctypes, sig_host, time\n"
    "def spin():\n"
    "    sig_host.started()\n"
    "    while True:\n"
    "        pass\n"
    "def sleep():\n"
    "    sig_host.started()\n"
    "    time.sleep(3600)\n"
    "def c_call():\n"
    "    blocking = ctypes.PyDLL(None).sleep  # PyDLL: the GIL stays held\n"
    "    blocking.argtypes = [ctypes.c_uint]\n"
    "    sig_host.started()\n"
    "    blocking(3600)\n";

/* The system call pid's main thread is in, or -1 (running, or unknown). */
static long syscall_of(long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/syscall", pid);
  FILE *f = fopen(path, "r");
  long nr = -1;
  if (f) {
    if (fscanf(f, "%ld", &nr) != 1) nr = -1;
    fclose(f);
  }
  return nr;
}

/* pid's main thread sleeps in a system call (not in the read of its channel). */
static int in_a_sleep(void *ctx) {
  long nr = syscall_of(*(long *)ctx);
  return 0
#if defined(SYS_nanosleep)
         || nr == SYS_nanosleep
#endif
#if defined(SYS_clock_nanosleep)
         || nr == SYS_clock_nanosleep
#endif
#if defined(SYS_select)
         || nr == SYS_select
#endif
#if defined(SYS_pselect6)
         || nr == SYS_pselect6
#endif
      ;
}

static int worker_gone(void *ctx) {
  return !iso_alive(*(long *)ctx);
}

static void *busy_on_a_thread(void *arg) {
  const char *hook = arg;
  pyhost_plugin_call(nest_h, nest_busy, hook, NULL, NULL, NULL);
  return NULL;
}

enum { END_KILL, END_EXIT, END_FINALIZE };

struct orphan_report {
  long pid;        /* the worker's, 0 if it could not be started */
  char dir[400];   /* the host's plugin directory, for the test to remove */
};

/* A host of its own, in a child of the test (Python was never started in this
 * process): starts the worker, makes hook busy, tells the test the worker's pid, and
 * ends as `end` says.  Does not return. */
static void busy_host(int report, const char *hook, int end, int deathsig) {
  check_failures = 0; /* the test's, before this fork, are the test's to report */
  pyhost__proc_deathsig = deathsig;
  pyhost *h = iso_start();
  nest_h = h;
  pyhost_module *m = sig_module(h);
  iso_put("busy.py", BUSY);
  struct orphan_report rep;
  memset(&rep, 0, sizeof rep);
  snprintf(rep.dir, sizeof rep.dir, "%s", iso_at(""));
  nest_busy = iso_load(h, "busy.py", NULL);
  rep.pid = nest_busy ? pyhost_plugin_process_id(nest_busy) : 0;
  pthread_t t;
  if (nest_busy) {
    pthread_create(&t, NULL, busy_on_a_thread, (void *)hook);
    reliab_wait(is_started, NULL, "the hook to start");
    if (strcmp(hook, "spin") != 0) reliab_wait(in_a_sleep, &rep.pid, "the worker to block");
  }
  if (check_failures) rep.pid = 0;
  if (end == END_FINALIZE && rep.pid) {
    /* finalize ends and reaps it: gone at once, no zombie, the host still here */
    int bad = pyhost_finalize(h) != PYHOST_OK;
    pthread_join(t, NULL);
    bad |= iso_alive(rep.pid) || iso_children() != 0;
    if (bad) fprintf(stderr, "%s: pyhost_finalize left the worker %ld (or a zombie)\n", hook, rep.pid);
    (void)!write(report, &rep, sizeof rep);
    _exit(bad ? 3 : 0);
  }
  if (write(report, &rep, sizeof rep) != sizeof rep) _exit(1);
  (void)m;
  if (end == END_KILL) kill(getpid(), SIGKILL);
  exit(0); /* a call running, no finalize, no unload: atexit handlers run */
}

TEST_CASE(worker_ends_with_its_host_whatever_it_runs) {
  static const char *const hooks[] = {"spin", "sleep", "c_call"};
  static const char *const ends[] = {"killed", "exit() without finalize", "pyhost_finalize"};
  int fds[2];
  CHECK(pipe(fds) == 0);
  for (int i = 0; i < 3; i++)
    for (int end = END_KILL; end <= END_FINALIZE; end++)
      for (int deathsig = 1; deathsig >= (end == END_KILL ? 0 : 1); deathsig--) {
        fflush(NULL);
        pid_t host = fork();
        if (host == 0) {
          close(fds[0]);
          busy_host(fds[1], hooks[i], end, deathsig);
        }
        struct orphan_report rep;
        memset(&rep, 0, sizeof rep);
        int got = read(fds[0], &rep, sizeof rep) == (ssize_t)sizeof rep;
        int status = -1;
        waitpid(host, &status, 0);
        CHECK(got && rep.pid > 0);
        CHECK(end == END_FINALIZE ? WIFEXITED(status) && WEXITSTATUS(status) == 0
                                  : end == END_EXIT ? WIFEXITED(status)
                                                    : WIFSIGNALED(status));
        if (got && rep.pid > 0 && !reliab_wait(worker_gone, &rep.pid, "the worker to end with its host"))
          fprintf(stderr, "%s, host %s%s: worker %ld outlived its host\n", hooks[i], ends[end],
                  deathsig ? "" : " (no parent-death signal)", rep.pid);
        if (got && rep.pid > 0 && iso_alive(rep.pid)) kill((pid_t)rep.pid, SIGKILL);
        if (got && rep.dir[0]) {
          char cmd[500];
          snprintf(cmd, sizeof cmd, "rm -rf '%s'", rep.dir);
          if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", rep.dir);
        }
      }
  close(fds[0]);
  close(fds[1]);
  CHECK(iso_children() == 0);
}

/* A child forked from the host (no call in flight) cannot use the parent's
 * process-level plugins (their workers are the parent's) but loads its own; the
 * parent's go on. */
TEST_CASE(forked_child_of_the_host) {
  pyhost *h = iso_start();
  iso_put("f.py", "import os\ndef pid():\n    return os.getpid()\n");
  pyhost_plugin *p = iso_load(h, "f.py", NULL);
  long parent_worker = (long)iso_int(h, p, "pid");
  fflush(NULL);
  pid_t child = fork();
  if (child == 0) {
    int bad = 0;
    bad |= pyhost_plugin_call(h, p, "pid", NULL, NULL, NULL) != PYHOST_MISUSE;
    bad |= !strstr(pyhost_errmsg(h), "this one was forked from that one");
    pyhost_plugin_unload(p); /* memory only: the worker is the parent's */
    pyhost_plugin *q = iso_load(h, "f.py", NULL);
    long own = q ? (long)iso_int(h, q, "pid") : -1;
    bad |= own <= 0 || own == parent_worker || check_failures;
    pyhost_plugin_unload(q);
    pyhost_free(h);
    bad |= iso_children() != 0;
    _exit(bad);
  }
  int status = -1;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(iso_int(h, p, "pid") == parent_worker); /* the parent's plugin is untouched */
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* White-box, at the protocol (src/bridge/wire.h): an interrupt that reaches the worker
 * after the call it was sent for has ended is dropped there, whenever it comes, and
 * never stops the next call. */
static int wire_call(struct pyhost__proc *proc, struct pyhost__wire_in *in, uint32_t tree,
                     const char *hook, pyhost_value **result) {
  struct pyhost__wbuf b = {0};
  pyhost__wbuf_start(&b, PYHOST__W_CALL);
  pyhost__wbuf_u32(&b, tree);
  pyhost__wbuf_str(&b, hook, PYHOST_STRLEN);
  pyhost__wbuf_u8(&b, 1);
  char why[64];
  pyhost__wbuf_value(&b, NULL, why, sizeof why);
  pyhost__wbuf_value(&b, NULL, why, sizeof why);
  int rc = pyhost__wbuf_send(&b, pyhost__proc_chan(proc));
  pyhost__wbuf_free(&b);
  int type = -1;
  struct pyhost__rbuf r;
  if (rc || pyhost__wire_recv(in, pyhost__proc_chan(proc), pyhost__clock_ms() + 120000, &type, &r) ||
      type != PYHOST__W_REPLY)
    return -1;
  int status = (int)pyhost__rbuf_u8(&r);
  if (status == PYHOST_OK) *result = pyhost__rbuf_value(&r);
  return status;
}

TEST_CASE(stale_interrupt_dropped) {
  pyhost *h = iso_start();
  iso_put("s.py", "def quick():\n    return 5\n"
                  "def count():\n    i = 0\n    while i < 3000000:\n        i += 1\n    return i\n");
  struct pyhost__proc_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.program = PYHOST_TEST_WORKER;
  struct pyhost__proc *proc = NULL;
  char err[512];
  CHECK(pyhost__proc_service_new(&spec.service, err, sizeof err) == 0);
  CHECK(pyhost__proc_start(&spec, &proc, err, sizeof err) == 0);
  struct pyhost__wire_in in;
  memset(&in, 0, sizeof in);
  int type = -1;
  struct pyhost__rbuf r;
  CHECK(pyhost__wire_recv(&in, pyhost__proc_chan(proc), pyhost__clock_ms() + 60000, &type, &r) ==
            PYHOST__WIRE_OK && type == PYHOST__W_HELLO);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, check_lib);
  struct pyhost__wbuf b = {0};
  pyhost__wbuf_start(&b, PYHOST__W_START);
  pyhost__wbuf_u32(&b, 1);
  pyhost__wbuf_config(&b, cfg);
  pyhost__wbuf_str(&b, iso_at("s.py"), PYHOST_STRLEN);
  pyhost__wbuf_str(&b, "s", PYHOST_STRLEN);
  pyhost__wbuf_i64(&b, 0);
  pyhost__wbuf_u32(&b, 0); /* no host modules */
  CHECK(pyhost__wbuf_send(&b, pyhost__proc_chan(proc)) == 0);
  pyhost__wbuf_free(&b);
  pyhost_config_free(cfg);
  CHECK(pyhost__wire_recv(&in, pyhost__proc_chan(proc), pyhost__clock_ms() + 120000, &type, &r) ==
            PYHOST__WIRE_OK && type == PYHOST__W_LOADING); /* its Python is up */
  CHECK(pyhost__wire_recv(&in, pyhost__proc_chan(proc), pyhost__clock_ms() + 120000, &type, &r) ==
            PYHOST__WIRE_OK && type == PYHOST__W_REPLY && pyhost__rbuf_u8(&r) == PYHOST_OK);
  pyhost_value *v = NULL;
  int64_t n = 0;
  CHECK_RC(wire_call(proc, &in, 2, "quick", &v), PYHOST_OK);
  CHECK(pyhost_value_to_int(NULL, v, &n) == PYHOST_OK && n == 5);
  pyhost_value_free(v);
  /* call 2 is over; its interrupt comes now, while call 3 runs (or before it starts) */
  char msg[5] = {PYHOST__W_INTERRUPT};
  uint32_t stale = 2;
  memcpy(msg + 1, &stale, 4);
  CHECK(pyhost__proc_control(proc, msg, sizeof msg) == 0);
  v = NULL;
  CHECK_RC(wire_call(proc, &in, 3, "count", &v), PYHOST_OK);
  CHECK(pyhost_value_to_int(NULL, v, &n) == PYHOST_OK && n == 3000000);
  pyhost_value_free(v);
  pyhost__wire_in_free(&in);
  pyhost__proc_free(proc);
  iso_stop(h);
}

/* A crash while another thread's call of the plugin waits for its turn: both calls
 * return PYHOST_PROCESS, neither hangs. */
static _Atomic int waiter_ready;

static int host_waiter_ready(pyhost *h, void *ud, const pyhost_args *a, pyhost_ret *ret) {
  (void)ud, (void)a;
  return pyhost_ret_bool(h, ret, atomic_load(&waiter_ready));
}

static void *waiting_call(void *arg) {
  struct call_arg *c = arg;
  reliab_wait(is_started, NULL, "the other hook to start"); /* it holds the turn */
  atomic_store(&waiter_ready, 1);
  c->rc = pyhost_plugin_call(c->h, c->p, c->hook, NULL, NULL, NULL);
  snprintf(c->msg, sizeof c->msg, "%s", pyhost_errmsg(c->h));
  return NULL;
}

TEST_CASE(crash_fails_waiting_calls) {
  pyhost *h = iso_start();
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "wait_host", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "ready", host_waiter_ready, NULL, NULL), PYHOST_OK);
  CHECK_RC(pyhost_module_add_fast_function(h, m, "started", host_started, NULL, NULL), PYHOST_OK);
  atomic_store(&started, 0);
  iso_put("c.py", "import os, time, wait_host\n"
                  "def crash_when_another_waits():\n"
                  "    wait_host.started()\n"
                  "    while not wait_host.ready():\n"
                  "        time.sleep(0.001)\n"
                  "    time.sleep(0.05)  # likely waiting by then; either way it fails\n"
                  "    os._exit(7)\n"
                  "def quick():\n"
                  "    return 5\n");
  pyhost_plugin *p = iso_load(h, "c.py", NULL);
  struct call_arg a = {h, p, "crash_when_another_waits", -1, ""}, b = {h, p, "quick", -1, ""};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, call_thread, &a);
  pthread_create(&tb, NULL, waiting_call, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK_RC(a.rc, PYHOST_PROCESS);
  CHECK_CONTAINS(a.msg, "exited with code 7");
  /* the other call waited for its turn, or came after the crash: it fails either way */
  CHECK_RC(b.rc, PYHOST_PROCESS);
  CHECK_CONTAINS(b.msg, "is not running: its process");
  CHECK_RC(pyhost_plugin_restart(h, p), PYHOST_OK);
  CHECK(iso_int(h, p, "quick") == 5);
  pyhost_plugin_unload(p);
  pyhost_module_free(h, m);
  iso_stop(h);
}
