/* test_plugins.c: plugins (pyhost_plugin_*), run once per Python in the matrix.
 * Arguments: CASE LIB VERSION.  Each case writes its plugins into a fresh temporary
 * directory, so that it can edit them (reload) without touching the source tree. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "alloc.h"
#include "check.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static pyhost *start(void) {
  pyhost *h = check_start(NULL);
  snprintf(tmp, sizeof tmp, "%s/pyhost-plugins-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    exit(1);
  }
  return h;
}

/* Removes the temporary directory (through Python: it is running anyway). */
static void stop(pyhost *h) {
  char code[512];
  snprintf(code, sizeof code, "import shutil\nshutil.rmtree(r'%s')", tmp);
  CHECK_RC(pyhost_exec(h, code, NULL), PYHOST_OK);
  pyhost_free(h);
}

static int minor_at_least(int minor) {
  return atoi(strchr(check_version, '.') + 1) >= minor;
}

/* The absolute path of rel inside the case's directory (static buffer rotation). */
static const char *at(const char *rel) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, 512, "%s/%s", tmp, rel);
  return b;
}

/* Writes text to rel, making its directories. */
static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmp, rel);
  for (char *s = path + strlen(tmp) + 1; (s = strchr(s, '/')); s++) {
    *s = '\0';
    mkdir(path, 0700);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static pyhost_plugin *load(pyhost *h, const char *rel) {
  pyhost_plugin *p = NULL;
  int rc = pyhost_plugin_load(h, at(rel), &p);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "loading %s: %s: %s\n", rel, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
  return p;
}

/* Calls hook with no arguments and returns its str result's text (static copy), or
 * the status name when it failed. */
static const char *call_str(pyhost *h, pyhost_plugin *p, const char *hook) {
  static char out[256];
  pyhost_value *v = NULL;
  const char *s;
  int rc = pyhost_plugin_call(h, p, hook, NULL, NULL, &v);
  if (rc != PYHOST_OK) snprintf(out, sizeof out, "%s", pyhost_status_name(rc));
  else if (pyhost_value_to_str(h, v, &s, NULL) != PYHOST_OK) snprintf(out, sizeof out, "not a str");
  else snprintf(out, sizeof out, "%s", s);
  pyhost_value_free(v);
  return out;
}

/* The repr of a Python expression's value (static copy). */
static const char *eval_repr(pyhost *h, const char *expr) {
  static char out[512];
  pyhost_value *v = NULL;
  if (pyhost_eval(h, expr, &v) != PYHOST_OK) {
    snprintf(out, sizeof out, "error: %s", pyhost_errmsg(h));
  } else {
    const char *r = pyhost_value_repr(h, v);
    snprintf(out, sizeof out, "%s", r ? r : "repr failed");
  }
  pyhost_value_free(v);
  return out;
}

#define LEFTOVER "sorted(k for k in __import__('sys').modules if k.startswith('_pyhost_plugin_'))"

TEST_CASE(same_names) {
  pyhost *h = start();
  put("one/greet.py", "NAME = 'one'\ndef who():\n    return NAME\n");
  put("two/greet.py", "NAME = 'two'\ndef who():\n    return NAME\n");
  pyhost_plugin *a = load(h, "one/greet.py"), *b = load(h, "two/greet.py");
  pyhost_plugin *a2 = load(h, "one/greet.py"); /* the same file twice: two instances */
  CHECK_STREQ(call_str(h, a, "who"), "one");
  CHECK_STREQ(call_str(h, b, "who"), "two");
  CHECK_STREQ(pyhost_plugin_name(a), "greet");
  CHECK_STREQ(pyhost_plugin_name(b), "greet");
  CHECK(strcmp(pyhost_plugin_module_name(a), pyhost_plugin_module_name(b)) != 0);
  CHECK(strcmp(pyhost_plugin_module_name(a), pyhost_plugin_module_name(a2)) != 0);
  CHECK_STREQ(pyhost_plugin_path(b), at("two/greet.py"));
  /* changing one instance's global leaves the other alone */
  pyhost_value *mod = NULL;
  CHECK_RC(pyhost_plugin_module(h, a2, &mod), PYHOST_OK);
  CHECK(pyhost_value_kind(mod) == PYHOST_KIND_OBJECT);
  pyhost_value_free(mod);
  CHECK_RC(pyhost_plugin_module(h, a2, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_module(h, NULL, &mod), PYHOST_MISUSE);
  CHECK(mod == NULL);
  CHECK_STREQ(pyhost_plugin_name(NULL), "");
  char code[256];
  snprintf(code, sizeof code, "import sys\nsys.modules['%s'].NAME = 'changed'", pyhost_plugin_module_name(a2));
  CHECK_RC(pyhost_exec(h, code, NULL), PYHOST_OK);
  CHECK_STREQ(call_str(h, a2, "who"), "changed");
  CHECK_STREQ(call_str(h, a, "who"), "one");
  /* nothing leaks into __main__ */
  CHECK_STREQ(eval_repr(h, "'who' in globals() or 'NAME' in globals()"), "False");
  pyhost_plugin_unload(a);
  pyhost_plugin_unload(b);
  pyhost_plugin_unload(a2);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  stop(h);
}

TEST_CASE(sibling_imports) {
  pyhost *h = start();
  /* two file plugins, each with its own helper.py */
  put("a/main.py", "from . import helper\nfrom .helper import twice\n"
                   "def on_load():\n    return helper.WHO + twice('!')\n");
  put("a/helper.py", "WHO = 'a'\ndef twice(s):\n    return s * 2\n");
  put("b/main.py", "from . import helper\ndef on_load():\n    return helper.WHO\n");
  put("b/helper.py", "WHO = 'b'\n");
  /* a package with a module and a subpackage */
  put("pkg/__init__.py", "from .util import shout\nfrom .sub.deep import depth\n"
                         "def on_load():\n    return shout('pkg') + str(depth())\n");
  put("pkg/util.py", "def shout(s):\n    return s.upper()\n");
  put("pkg/sub/__init__.py", "");
  put("pkg/sub/deep.py", "from ..util import shout\ndef depth():\n    return len(shout('xy'))\n");
  pyhost_plugin *a = load(h, "a/main.py"), *b = load(h, "b/main.py"), *p = load(h, "pkg/");
  CHECK_STREQ(call_str(h, a, "on_load"), "a!!");
  CHECK_STREQ(call_str(h, b, "on_load"), "b");
  CHECK_STREQ(call_str(h, p, "on_load"), "PKG2");
  CHECK_STREQ(pyhost_plugin_name(p), "pkg");
  /* siblings stay private: no global "helper" or "util" module, no __pycache__ */
  CHECK_STREQ(eval_repr(h, "[m for m in ('helper', 'util', 'main') if m in __import__('sys').modules]"), "[]");
  CHECK(access(at("a/__pycache__"), F_OK) != 0);
  CHECK(access(at("pkg/__pycache__"), F_OK) != 0);
  /* the hook list of a plugin names its own functions, not imported ones */
  pyhost_value *names = NULL;
  CHECK_RC(pyhost_plugin_hooks(h, a, &names), PYHOST_OK);
  CHECK(pyhost_value_count(names) == 2);
  const char *s = NULL;
  if (pyhost_value_count(names) == 2) {
    CHECK_RC(pyhost_value_to_str(h, pyhost_value_item(names, 0), &s, NULL), PYHOST_OK);
    CHECK_STREQ(s, "twice"); /* defined by the plugin's helper.py */
    CHECK_RC(pyhost_value_to_str(h, pyhost_value_item(names, 1), &s, NULL), PYHOST_OK);
    CHECK_STREQ(s, "on_load");
  }
  pyhost_value_free(names);
  pyhost_plugin_unload(a);
  pyhost_plugin_unload(b);
  pyhost_plugin_unload(p);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  stop(h);
}

TEST_CASE(hooks_list) {
  pyhost *h = start();
  put("h.py", "import os\nfrom os.path import join\nclass Thing:\n    pass\nVALUE = 3\n"
              "def on_load():\n    pass\ndef _private():\n    pass\n"
              "def on_event(kind, *args):\n    return kind\nhandler = lambda: 1\n");
  pyhost_plugin *p = load(h, "h.py");
  pyhost_value *names = NULL;
  CHECK_RC(pyhost_plugin_hooks(h, p, &names), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, names), "['on_load', 'on_event', 'handler']");
  pyhost_value_free(names);
  CHECK_RC(pyhost_plugin_hooks(h, p, NULL), PYHOST_MISUSE);
  pyhost_plugin_unload(p);
  stop(h);
}

TEST_CASE(syntax_error) {
  pyhost *h = start();
  put("bad.py", "x = 1\n\ndef broken(:\n    pass\n");
  pyhost_plugin *p = (pyhost_plugin *)1;
  CHECK_RC(pyhost_plugin_load(h, at("bad.py"), &p), PYHOST_PYEXC);
  CHECK(p == NULL);
  const char *m = pyhost_errmsg(h);
  CHECK_CONTAINS(m, "loading plugin bad from ");
  CHECK_CONTAINS(m, "bad.py failed:\n  File "); /* the traceback on lines of its own */
  CHECK_CONTAINS(m, "SyntaxError");
  char want[600];
  snprintf(want, sizeof want, "File \"%s\", line 3", at("bad.py"));
  CHECK_CONTAINS(m, want);
  CHECK(strstr(m, "pyhost plugin loader") == NULL); /* starts at the plugin's file */
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  stop(h);
}

TEST_CASE(import_error) {
  pyhost *h = start();
  put("imp.py", "import os\nimport no_such_module_here\n");
  put("sib.py", "from . import missing_sibling\n");
  put("nopkg/readme.txt", "not a package\n");
  pyhost_plugin *p = NULL;
  CHECK_RC(pyhost_plugin_load(h, at("imp.py"), &p), PYHOST_PYEXC);
  const char *m = pyhost_errmsg(h);
  CHECK_CONTAINS(m, "No module named 'no_such_module_here'");
  char want[600];
  snprintf(want, sizeof want, "File \"%s\", line 2, in <module>", at("imp.py"));
  CHECK_CONTAINS(m, want);
  CHECK_RC(pyhost_plugin_load(h, at("sib.py"), &p), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "missing_sibling");
  snprintf(want, sizeof want, "File \"%s\", line 1", at("sib.py"));
  CHECK_CONTAINS(pyhost_errmsg(h), want);
  CHECK_RC(pyhost_plugin_load(h, at("nopkg"), &p), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "is a directory without __init__.py");
  CHECK_RC(pyhost_plugin_load(h, at("absent.py"), &p), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "absent.py: no such file or directory");
  put("exits.py", "import sys\nsys.exit(4)\n");
  CHECK_RC(pyhost_plugin_load(h, at("exits.py"), &p), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 4);
  CHECK(p == NULL);
  CHECK_RC(pyhost_plugin_load(h, NULL, &p), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_load(h, at("imp.py"), NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_load(NULL, at("imp.py"), &p), PYHOST_MISUSE);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  stop(h);
}

TEST_CASE(failing_plugin_isolated) {
  pyhost *h = start();
  put("good.py", "count = 0\ndef on_load():\n    return 'good loaded'\n"
                 "def on_event(n):\n    global count\n    count += n\n    return count\n");
  put("bad.py", "def on_load():\n    raise RuntimeError('bad plugin refuses to start')\n"
                "def on_event(n):\n    return 1 / 0\n");
  put("quits.py", "import sys\ndef on_load():\n    sys.exit(3)\n");
  pyhost_plugin *good = load(h, "good.py"), *bad = load(h, "bad.py"), *quits = load(h, "quits.py");
  CHECK_STREQ(call_str(h, good, "on_load"), "good loaded");
  CHECK_RC(pyhost_plugin_call(h, bad, "on_load", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin bad: hook on_load raised: Traceback");
  CHECK_CONTAINS(pyhost_errmsg(h), "RuntimeError: bad plugin refuses to start");
  CHECK_RC(pyhost_plugin_call(h, quits, "on_load", NULL, NULL, NULL), PYHOST_EXIT);
  CHECK(pyhost_exit_code(h) == 3);
  for (int i = 1; i <= 3; i++) {
    pyhost_value *args = pyhost_value_tuple(), *r = NULL;
    pyhost_value_append(args, pyhost_value_int(i));
    CHECK_RC(pyhost_plugin_call(h, bad, "on_event", args, NULL, NULL), PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "ZeroDivisionError");
    CHECK_RC(pyhost_plugin_call(h, good, "on_event", args, NULL, &r), PYHOST_OK);
    int64_t n = 0;
    CHECK_RC(pyhost_value_to_int(h, r, &n), PYHOST_OK);
    CHECK(n == (int64_t)(i * (i + 1) / 2));
    pyhost_value_free(r);
    pyhost_value_free(args);
  }
  pyhost_plugin_unload(bad);
  pyhost_plugin_unload(quits);
  CHECK_STREQ(call_str(h, good, "on_load"), "good loaded");
  pyhost_plugin_unload(good);
  stop(h);
}

TEST_CASE(missing_hook) {
  pyhost *h = start();
  put("few.py", "on_event = 42\ndef on_load():\n    return 'x'\n"
                "def __getattr__(name):\n    if name == 'odd':\n        raise KeyError(name)\n"
                "    raise AttributeError(name)\n");
  pyhost_plugin *p = load(h, "few.py");
  CHECK_RC(pyhost_plugin_has_hook(h, p, "on_load"), PYHOST_OK);
  CHECK_RC(pyhost_plugin_has_hook(h, p, "on_unload"), PYHOST_NOHOOK);
  CHECK_STREQ(pyhost_errmsg(h), "plugin few has no hook on_unload");
  CHECK_RC(pyhost_plugin_call(h, p, "on_unload", NULL, NULL, NULL), PYHOST_NOHOOK);
  CHECK_STREQ(pyhost_errmsg(h), "plugin few has no hook on_unload");
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", NULL, NULL, NULL), PYHOST_NOHOOK);
  CHECK_STREQ(pyhost_errmsg(h), "plugin few has no hook on_event (on_event is a int, not callable)");
  CHECK_RC(pyhost_plugin_has_hook(h, p, NULL), PYHOST_MISUSE);
  if (minor_at_least(7)) {
    CHECK_RC(pyhost_plugin_has_hook(h, p, "odd"), PYHOST_PYEXC); /* module __getattr__: 3.7+ */
    CHECK_CONTAINS(pyhost_errmsg(h), "plugin few: looking up hook odd failed");
    CHECK_CONTAINS(pyhost_errmsg(h), "KeyError: 'odd'");
  }
  CHECK_STREQ(call_str(h, p, "on_load"), "x"); /* still fine */
  CHECK_RC(pyhost_plugin_has_hook(h, NULL, "on_load"), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin is NULL");
  pyhost_plugin_unload(p);
  stop(h);
}

TEST_CASE(call_arguments) {
  pyhost *h = start();
  put("args.py", "def on_event(kind, *rest, **kw):\n"
                 "    return [kind, list(rest), sorted(kw.items())]\n");
  pyhost_plugin *p = load(h, "args.py");
  pyhost_value *args = pyhost_value_list(), *kw = pyhost_value_dict(), *r = NULL;
  pyhost_value_append(args, pyhost_value_str("key", PYHOST_STRLEN));
  pyhost_value_append(args, pyhost_value_int(7));
  pyhost_value_append(args, pyhost_value_float(0.5));
  pyhost_value_set(kw, pyhost_value_str("shift", PYHOST_STRLEN), pyhost_value_bool(1));
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", args, kw, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "['key', [7, 0.5], [('shift', True)]]");
  pyhost_value_free(r);
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "TypeError");
  pyhost_value *one = pyhost_value_int(1);
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", one, NULL, NULL), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "plugin args: the arguments must be a tuple or a list, not int");
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", args, one, NULL), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "plugin args: the keyword arguments must be a dict, not int");
  /* values that cannot go to Python */
  pyhost_value *badargs = pyhost_value_tuple();
  pyhost_value_append(badargs, pyhost_value_str("\xff\xfe", 2));
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", badargs, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin args: converting the arguments failed");
  pyhost_value *badkw = pyhost_value_dict();
  pyhost_value_set(badkw, pyhost_value_str("k", 1), pyhost_value_str("\xff", 1));
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", args, badkw, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin args: converting the keyword arguments failed");
  CHECK_RC(pyhost_plugin_call(h, p, NULL, NULL, NULL, NULL), PYHOST_MISUSE);
  pyhost_value_free(badkw);
  pyhost_value_free(badargs);
  pyhost_value_free(one);
  pyhost_value_free(args);
  pyhost_value_free(kw);
  pyhost_plugin_unload(p);
  stop(h);
}

TEST_CASE(hook_exception_traceback) {
  pyhost *h = start();
  put("tb/__init__.py", "from .inner import check\ndef on_event(name):\n    return check(name)\n");
  put("tb/inner.py", "def check(name):\n    if name != 'ok':\n        raise ValueError('bad event %r' % name)\n"
                     "    return name\n");
  pyhost_plugin *p = load(h, "tb");
  pyhost_value *args = pyhost_value_tuple();
  pyhost_value_append(args, pyhost_value_str("boom", PYHOST_STRLEN));
  CHECK_RC(pyhost_plugin_call(h, p, "on_event", args, NULL, NULL), PYHOST_PYEXC);
  const char *m = pyhost_errmsg(h);
  CHECK_CONTAINS(m, "plugin tb: hook on_event raised: Traceback (most recent call last):");
  char want[600];
  snprintf(want, sizeof want, "File \"%s\", line 3, in on_event", at("tb/__init__.py"));
  CHECK_CONTAINS(m, want);
  snprintf(want, sizeof want, "File \"%s\", line 3, in check", at("tb/inner.py"));
  CHECK_CONTAINS(m, want);
  CHECK_CONTAINS(m, "ValueError: bad event 'boom'");
  /* a result that cannot come back to C is an error too */
  put("res.py", "def deep():\n    x = []\n    for _ in range(300):\n        x = [x]\n    return x\n");
  pyhost_plugin *r = load(h, "res.py");
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_plugin_call(h, r, "deep", NULL, NULL, &v), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin res: converting the result of deep failed");
  CHECK(v == NULL);
  pyhost_value_free(args);
  pyhost_plugin_unload(r);
  pyhost_plugin_unload(p);
  stop(h);
}

TEST_CASE(reload_after_edit) {
  pyhost *h = start();
  /* the edits keep the files' sizes and land within the same second: a bytecode
   * cache keyed on size and mtime would serve the old code */
  put("dev/live.py", "from . import part\ndef version():\n    return 'v1' + part.TAG\n");
  put("dev/part.py", "TAG = 'a'\n");
  pyhost_plugin *p = load(h, "dev/live.py");
  CHECK_STREQ(call_str(h, p, "version"), "v1a");
  char first[256];
  snprintf(first, sizeof first, "%s", pyhost_plugin_module_name(p));
  put("dev/live.py", "from . import part\ndef version():\n    return 'v2' + part.TAG\n");
  put("dev/part.py", "TAG = 'b'\n");
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  CHECK_STREQ(call_str(h, p, "version"), "v2b");
  CHECK(strcmp(first, pyhost_plugin_module_name(p)) != 0);
  /* the old modules are gone from sys.modules, only the new ones remain */
  char expr[512];
  snprintf(expr, sizeof expr, "'%s' in __import__('sys').modules", first);
  CHECK_STREQ(eval_repr(h, expr), "False");
  snprintf(expr, sizeof expr, "'%s' in __import__('sys').modules", pyhost_plugin_module_name(p));
  CHECK_STREQ(eval_repr(h, expr), "True");
  /* a broken edit: reload fails with file and line, the plugin keeps its last code */
  put("dev/live.py", "from . import part\ndef version()\n    return 'v3'\n");
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "SyntaxError");
  CHECK_CONTAINS(pyhost_errmsg(h), "line 2");
  CHECK_STREQ(call_str(h, p, "version"), "v2b");
  /* a new hook appears after a good edit; a removed one is missing */
  put("dev/live.py", "def on_event():\n    return 'new hook'\n");
  CHECK_RC(pyhost_plugin_reload(h, p), PYHOST_OK);
  CHECK_STREQ(call_str(h, p, "on_event"), "new hook");
  CHECK_RC(pyhost_plugin_has_hook(h, p, "version"), PYHOST_NOHOOK);
  CHECK_RC(pyhost_plugin_reload(h, NULL), PYHOST_MISUSE);
  pyhost_plugin_unload(p);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  pyhost_plugin_unload(NULL);
  stop(h);
}

TEST_CASE(unload_keeps_held_objects) {
  pyhost *h = start();
  put("keep.py", "def make():\n    def cb():\n        return 'still here'\n    return cb\n");
  pyhost_plugin *p = load(h, "keep.py");
  pyhost_value *cb = NULL;
  CHECK_RC(pyhost_plugin_call(h, p, "make", NULL, NULL, &cb), PYHOST_OK);
  CHECK(pyhost_value_kind(cb) == PYHOST_KIND_OBJECT);
  pyhost_plugin_unload(p);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  /* a host holding the plugin's callable can still use it */
  CHECK_RC(pyhost_exec(h, "import gc\ngc.collect()", NULL), PYHOST_OK);
  put("user.py", "def run(f):\n    return f()\n");
  pyhost_plugin *u = load(h, "user.py");
  pyhost_value *args = pyhost_value_tuple(), *r = NULL;
  pyhost_value_append(args, cb);
  const char *s = NULL;
  CHECK_RC(pyhost_plugin_call(h, u, "run", args, NULL, &r), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, r, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, "still here");
  pyhost_value_free(r);
  pyhost_value_free(args);
  pyhost_plugin_unload(u);
  /* after finalize, unload only frees memory */
  pyhost_plugin *q = load(h, "keep.py");
  CHECK_RC(pyhost_finalize(h), PYHOST_OK);
  pyhost_plugin_unload(q);
  CHECK_RC(pyhost_plugin_load(h, at("keep.py"), &q), PYHOST_MISUSE);
  pyhost_free(h);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
  CHECK(system(cmd) == 0);
}

TEST_CASE(out_of_memory) {
  pyhost *h = start();
  put("m/oom.py", "from . import dep\ndef on_load():\n    return dep.X\n");
  put("m/dep.py", "X = 'loaded'\n");
  int loaded = 0, nomem = 0;
  for (long k = 0; k < 200 && !loaded; k++) {
    pyhost_plugin *p = NULL;
    pyhost__alloc_fail_after(k);
    int rc = pyhost_plugin_load(h, at("m/oom.py"), &p);
    pyhost__alloc_fail_after(-1);
    if (rc == PYHOST_OK) {
      loaded = 1;
      CHECK_STREQ(call_str(h, p, "on_load"), "loaded");
      pyhost__alloc_fail_after(0);
      rc = pyhost_plugin_reload(h, p);
      pyhost__alloc_fail_after(-1);
      CHECK(rc == PYHOST_NOMEM);
      CHECK_STREQ(call_str(h, p, "on_load"), "loaded");
      pyhost_plugin_unload(p);
    } else {
      CHECK(p == NULL);
      nomem += rc == PYHOST_NOMEM;
      if (rc != PYHOST_NOMEM && rc != PYHOST_PYEXC) {
        fprintf(stderr, "k=%ld: %s: %s\n", k, pyhost_status_name(rc), pyhost_errmsg(h));
        check_failures++;
      }
    }
  }
  CHECK(loaded);
  CHECK(nomem > 0);
  CHECK_STREQ(eval_repr(h, LEFTOVER), "[]");
  stop(h);
}

/* plugtest.run(hook): calls hook in the plugin passed as userdata, from inside a host
 * function (C -> Python -> C -> Python). */
static int run_in_plugin(pyhost *h, void *userdata, const pyhost_value *const *args,
                         size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)kwargs;
  const char *hook;
  if (nargs != 1 || pyhost_value_to_str(h, args[0], &hook, NULL) != PYHOST_OK)
    return pyhost_raise(h, PYHOST_EXC_TYPE_ERROR, "run(hook)");
  return pyhost_plugin_call(h, userdata, hook, NULL, NULL, result);
}

TEST_CASE(hook_from_host_function) {
  pyhost *h = start();
  put("inner.py", "def works():\n    return 'inner ok'\ndef fails():\n    raise ValueError('inner failed')\n");
  put("outer.py", "import plugtest\n"
                  "def on_event():\n"
                  "    try:\n        plugtest.run('fails')\n"
                  "    except ValueError as e:\n        caught = str(e)\n"
                  "    return [plugtest.run('works'), caught]\n"
                  "def missing():\n    return plugtest.run('nope')\n");
  pyhost_plugin *inner = load(h, "inner.py");
  pyhost_module *m = NULL;
  CHECK_RC(pyhost_module_new(h, "plugtest", NULL, &m), PYHOST_OK);
  CHECK_RC(pyhost_module_add_function(h, m, "run", run_in_plugin, inner, NULL), PYHOST_OK);
  pyhost_plugin *outer = load(h, "outer.py");
  pyhost_value *r = NULL;
  CHECK_RC(pyhost_plugin_call(h, outer, "on_event", NULL, NULL, &r), PYHOST_OK);
  CHECK_STREQ(pyhost_value_repr(h, r), "['inner ok', 'inner failed']");
  pyhost_value_free(r);
  /* the inner plugin's exception reaches the outer plugin's caller with both tracebacks */
  put("outer2.py", "import plugtest\ndef on_event():\n    return plugtest.run('fails')\n");
  pyhost_plugin *outer2 = load(h, "outer2.py");
  CHECK_RC(pyhost_plugin_call(h, outer2, "on_event", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin outer2: hook on_event raised");
  CHECK_CONTAINS(pyhost_errmsg(h), "outer2.py\", line 3, in on_event");
  CHECK_CONTAINS(pyhost_errmsg(h), "inner.py\", line 4, in fails");
  CHECK_CONTAINS(pyhost_errmsg(h), "ValueError: inner failed");
  /* a missing hook inside the callback becomes a RuntimeError for Python */
  CHECK_RC(pyhost_plugin_call(h, outer, "missing", NULL, NULL, NULL), PYHOST_PYEXC);
  CHECK_CONTAINS(pyhost_errmsg(h), "PYHOST_NOHOOK");
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin inner has no hook nope");
  pyhost_plugin_unload(outer2);
  pyhost_plugin_unload(outer);
  pyhost_module_free(h, m);
  pyhost_plugin_unload(inner);
  stop(h);
}
