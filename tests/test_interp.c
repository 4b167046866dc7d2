/* test_interp.c: plugins at the interpreter isolation level (issue 34), on every
 * Python of the matrix.  Part of the test_isolation program (isolation.c's helpers);
 * arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "isolation.h"
#include "reliab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pyhost_plugin_options *interp_options(void) {
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  pyhost_plugin_options_set_isolation(o, PYHOST_ISOLATION_INTERPRETER);
  return o;
}

static pyhost_plugin *load_interp(pyhost *h, const char *rel) {
  pyhost_plugin_options *o = interp_options();
  pyhost_plugin *p = iso_load(h, rel, o);
  pyhost_plugin_options_free(o);
  return p;
}

/* 1 on Pythons that let any thread enter a sub-interpreter (3.9+). */
static int __attribute__((unused)) any_thread(pyhost *h) {
  return pyhost_python_version(h) >= 0x03090000;
}

static const char *str_of(pyhost *h, pyhost_plugin *p, const char *hook, const char *arg) {
  static char out[4][512];
  static int next;
  char *o = out[next++ % 4];
  const char *s = NULL;
  size_t n = 0;
  int rc = arg ? pyhost_plugin_callf(h, p, hook, "s>s", arg, &s, &n)
               : pyhost_plugin_callf(h, p, hook, ">s", &s, &n);
  if (rc != PYHOST_OK) {
    snprintf(o, 512, "<%s: %s>", pyhost_status_name(rc), pyhost_errmsg(h));
    return o;
  }
  snprintf(o, 512, "%.*s", (int)n, s);
  return o;
}

static const char STATEFUL[] =
    "import json, sys\n"
    "marker = None\n"
    "def set_marker(v):\n"
    "    global marker\n"
    "    marker = v\n"
    "    json.dumps = lambda *a, **k: 'patched by ' + v\n"
    "    sys.pyhost_test_flag = v\n"
    "    sys.path.append('/nonexistent/' + v)\n"
    "    return v\n"
    "def get_marker():\n"
    "    return str(marker)\n"
    "def json_of(x):\n"
    "    return json.dumps(x)\n"
    "def flag():\n"
    "    return str(getattr(sys, 'pyhost_test_flag', None))\n"
    "def paths():\n"
    "    return str(len([p for p in sys.path if p.startswith('/nonexistent/')]))\n";

/* Two interpreter-level plugins, a shared one and the host: each sees its own globals,
 * json, sys and sys.path. */
TEST_CASE(interp_state_isolated) {
  pyhost *h = iso_start();
  iso_put("a.py", STATEFUL);
  iso_put("b.py", STATEFUL);
  iso_put("c.py", STATEFUL);
  pyhost_plugin *a = load_interp(h, "a.py"), *b = load_interp(h, "b.py");
  pyhost_plugin *c = iso_load_shared(h, "c.py");
  CHECK(a && b && c);
  if (!a || !b || !c) goto out;
  CHECK(pyhost_plugin_isolation(a) == PYHOST_ISOLATION_INTERPRETER);
  CHECK_STREQ(str_of(h, a, "set_marker", "A"), "A");
  CHECK_STREQ(str_of(h, b, "set_marker", "B"), "B");
  CHECK_STREQ(str_of(h, a, "json_of", "x"), "patched by A");
  CHECK_STREQ(str_of(h, b, "json_of", "x"), "patched by B");
  CHECK_STREQ(str_of(h, a, "flag", NULL), "A");
  CHECK_STREQ(str_of(h, b, "flag", NULL), "B");
  CHECK_STREQ(str_of(h, a, "paths", NULL), "1");
  CHECK_STREQ(str_of(h, c, "flag", NULL), "None");
  CHECK_STREQ(str_of(h, c, "json_of", "x"), "\"x\"");
  CHECK_STREQ(str_of(h, c, "paths", NULL), "0");
  reliab_expect_int(h, "1 if __import__('json').dumps(1) == '1' else 0", 1);
  reliab_expect_int(h, "len([p for p in __import__('sys').path if p.startswith('/nonexistent/')])", 0);
  /* a shared plugin's monkeypatching does not reach them either */
  CHECK_STREQ(str_of(h, c, "set_marker", "C"), "C");
  CHECK_STREQ(str_of(h, a, "json_of", "x"), "patched by A");
  CHECK_STREQ(str_of(h, a, "get_marker", NULL), "A");
  /* the module's name there, no module object out */
  CHECK_CONTAINS(pyhost_plugin_module_name(a), "_pyhost_plugin_a_");
  pyhost_value *m = NULL;
  CHECK_RC(pyhost_plugin_module(h, a, &m), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "sub-interpreter");
out:
  pyhost_plugin_unload(a);
  pyhost_plugin_unload(b);
  pyhost_plugin_unload(c);
  iso_stop(h);
}
