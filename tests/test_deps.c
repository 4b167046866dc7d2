/* test_deps.c: each plugin's own dependencies (issue 35): the cases that need no
 * installer (an entry made by hand, malformed metadata, the lock), on every Python of
 * the matrix, and the helpers test_deps_pip.c's cases share (deps_test.h).
 * Arguments: CASE LIB VERSION.  Each case has its own cache (PYHOST_DEPS_CACHE,
 * inside its folder). */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "deps_test.h"
#include "isolation.h"
#include "reliab.h"

#include "deps.h" /* white-box: an entry's key, made by hand */
#include "platform.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- plugins and progress ---- */

const char *script(const char *deps, const char *requires_python) {
  static char buf[4][1024];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, 1024,
           "# a plugin with its own dependencies\n"
           "# /// script\n"
           "%s%s%s"
           "# dependencies = [%s]\n"
           "# ///\n"
           "import sys\n"
           "def version():\n"
           "    import pyhostdemo\n"
           "    return pyhostdemo.VERSION\n"
           "def python():\n"
           "    return '%%d.%%d' %% sys.version_info[:2]\n"
           "def demo_file():\n"
           "    import pyhostdemo\n"
           "    return pyhostdemo.__file__\n",
           requires_python ? "# requires-python = \"" : "", requires_python ? requires_python : "",
           requires_python ? "\"\n" : "", deps);
  return b;
}


void record(void *ctx, const pyhost_deps_progress *ev) {
  struct events *e = ctx;
  if (e->n < 256) {
    e->phase[e->n] = ev->phase;
    e->done[e->n] = ev->done;
    e->total[e->n] = ev->total;
    e->n++;
  }
  if (ev->phase == PYHOST_DEPS_WAITING) atomic_store(&e->waiting, 1);
  if (ev->phase == PYHOST_DEPS_READY) {
    e->fresh = ev->fresh;
    snprintf(e->env, sizeof e->env, "%s", ev->env);
  }
}

int saw(const struct events *e, int phase) {
  for (int i = 0; i < e->n; i++)
    if (e->phase[i] == phase) return 1;
  return 0;
}

/* Options for level with the plugin's declared dependencies and progress into e. */
pyhost_plugin_options *deps_options(int level, struct events *e) {
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  CHECK_RC(pyhost_plugin_options_set_isolation(o, level), PYHOST_OK);
  CHECK_RC(pyhost_plugin_options_set_deps(o, PYHOST_DEPS_DECLARED), PYHOST_OK);
  if (e) {
    memset(e, 0, sizeof *e);
    CHECK_RC(pyhost_plugin_options_set_progress(o, record, e), PYHOST_OK);
  }
  return o;
}

/* Loads rel at level with its declared dependencies: the status, *p on success. */
int load(pyhost *h, const char *rel, int level, struct events *e, pyhost_plugin **p) {
  pyhost_plugin_options *o = deps_options(level, e);
  *p = NULL;
  int rc = pyhost_plugin_load_with(h, iso_at(rel), o, p);
  pyhost_plugin_options_free(o);
  return rc;
}

const char *str_of(pyhost *h, pyhost_plugin *p, const char *hook) {
  static char out[4][512];
  static int next;
  char *o = out[next++ % 4];
  const char *s = NULL;
  size_t n = 0;
  int rc = pyhost_plugin_callf(h, p, hook, ">s", &s, &n);
  if (rc != PYHOST_OK) snprintf(o, 512, "<%s: %s>", pyhost_status_name(rc), pyhost_errmsg(h));
  else snprintf(o, 512, "%.*s", (int)n, s);
  return o;
}

/* The case's cache, and pip needed for the cases that install. */
void use_cache(void) {
  setenv("PYHOST_DEPS_CACHE", iso_at("cache"), 1);
}

void need_wheelhouse(void) {
  const char *links = getenv("PIP_FIND_LINKS");
  if (!links || !links[0]) SKIP("no wheelhouse (PIP_FIND_LINKS): run through ctest");
}

/* Entries (and install directories left over) in a cache (NULL: the case's). */
int cache_dirs_in(const char *cache, int *temps) {
  DIR *d = opendir(cache ? cache : iso_at("cache"));
  int n = 0;
  if (temps) *temps = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, ".."))) continue;
    if (strstr(e->d_name, ".lock")) continue;
    if (!strncmp(e->d_name, ".tmp-", 5) && temps) ++*temps;
    else n++;
  }
  if (d) closedir(d);
  return n;
}

int cache_dirs(int *temps) {
  return cache_dirs_in(NULL, temps);
}

/* ---- cases with an entry made by hand (no installer): every Python ---- */

/* The entry a load of `pyhostdemo==1.0` for the Python under test looks for, made as
 * pip would have made it: the tag computed from the library agrees with the one a
 * running handle computes (a load finds it). */
void make_entry(const char *version) {
  struct pyhost__deps_python py;
  char err[512];
  if (pyhost__deps_python_of_library(check_lib, &py, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    check_failures++;
    return;
  }
  char req[64], *reqs[1] = {req}, *key, name[128];
  snprintf(req, sizeof req, "pyhostdemo==%s", version);
  CHECK(pyhost__deps_key(&py, reqs, 1, &key, name, sizeof name) == 0);
  char rel[256], text[4096];
  snprintf(rel, sizeof rel, "cache/%s/pyhostdemo/__init__.py", name);
  snprintf(text, sizeof text, "VERSION = '%s (by hand)'\n", version);
  iso_put(rel, text);
  snprintf(rel, sizeof rel, "cache/%s/.pyhost-env", name);
  snprintf(text, sizeof text, "%sinstalled pyhostdemo %s\n", key, version);
  iso_put(rel, text);
  pyhost__free(key);
}

/* An environment is first on the plugin's sys.path at the shared and process levels
 * on every Python; PIP_FIND_LINKS names nothing, so nothing could be installed. */
TEST_CASE(cached_entry_every_level) {
  pyhost *h = iso_start();
  use_cache();
  setenv("PIP_NO_INDEX", "1", 1);
  setenv("PIP_FIND_LINKS", iso_at("nothing-here"), 1);
  make_entry("1.0");
  make_entry("2.0");
  iso_put("a.py", script("\"pyhostdemo==1.0\"", NULL));
  iso_put("b.py", script("\"pyhostdemo==2.0\"", NULL));
  pyhost_plugin *a, *b, *s;
  struct events e;
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &a), PYHOST_OK);
  CHECK(e.n == 1 && e.phase[0] == PYHOST_DEPS_READY && !e.fresh);
  CHECK_RC(load(h, "b.py", PYHOST_ISOLATION_SHARED, &e, &s), PYHOST_OK);
  CHECK(e.n == 1 && e.phase[0] == PYHOST_DEPS_READY && !e.fresh);
  CHECK_STREQ(str_of(h, a, "version"), "1.0 (by hand)");
  CHECK_STREQ(str_of(h, s, "version"), "2.0 (by hand)");
  /* the shared one's environment is on the host's sys.path, first */
  CHECK(reliab_eval_true(h, "__import__('sys').path[0].endswith(__import__('os').path.basename(" 
                            "__import__('sys').modules['pyhostdemo'].__file__.rsplit('/pyhostdemo/', 1)[0]))"));
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_SHARED, NULL, &b), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "plugin a needs pyhostdemo 1.0, plugin b has pyhostdemo 2.0");
  pyhost_plugin_unload(a);
  pyhost_plugin_unload(s);
  iso_stop(h);
}

/* Malformed metadata: an error naming file, line and what is wrong, at any level;
 * the plugin's code never ran. */
TEST_CASE(malformed_metadata) {
  pyhost *h = iso_start();
  use_cache();
  iso_put("bad.py",
          "import sys\n"
          "sys.pyhost_ran = 1\n"
          "# /// script\n"
          "# dependencies = [\"ok\", 3]\n"
          "# ///\n");
  iso_put("open.py", "# /// script\n# dependencies = []\nprint('x')\n");
  iso_put("inject.py", "# /// script\n# dependencies = [\"--index-url=http://evil\"]\n# ///\n");
  pyhost_plugin *p;
  CHECK_RC(load(h, "bad.py", PYHOST_ISOLATION_SHARED, NULL, &p), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "bad.py:4: dependencies must be an array of strings");
  CHECK_RC(load(h, "open.py", PYHOST_ISOLATION_PROCESS, NULL, &p), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "open.py:1: the `# /// script` block opened here is not closed");
  CHECK_RC(load(h, "inject.py", PYHOST_ISOLATION_PROCESS, NULL, &p), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "inject.py:2: dependencies: \"--index-url=http://evil\" is not a requirement");
  reliab_expect_int(h, "getattr(__import__('sys'), 'pyhost_ran', 0)", 0);
  /* without the option nothing is read: the plugin loads as before */
  CHECK_RC(pyhost_plugin_load(h, iso_at("bad.py"), &p), PYHOST_OK);
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* A process holding an entry's lock makes a load wait (WAITING reported, the entry not
 * made meanwhile) until it lets go. */
struct waiter {
  pyhost *h;
  struct events e;
  int rc;
};

static void *load_in_thread(void *arg) {
  struct waiter *w = arg;
  pyhost_plugin *p = NULL;
  pyhost_plugin_options *o = deps_options(PYHOST_ISOLATION_PROCESS, NULL);
  pyhost_plugin_options_set_progress(o, record, &w->e);
  w->rc = pyhost_plugin_load_with(w->h, iso_at("a.py"), o, &p);
  pyhost_plugin_options_free(o);
  pyhost_plugin_unload(p);
  return NULL;
}

static int is_waiting(void *ctx) {
  return atomic_load(&((struct events *)ctx)->waiting);
}

TEST_CASE(lock_makes_a_load_wait) {
  pyhost *h = iso_start();
  use_cache();
  setenv("PIP_NO_INDEX", "1", 1);
  setenv("PIP_FIND_LINKS", iso_at("nothing-here"), 1);
  iso_put("a.py", script("\"pyhostdemo==1.0\"", NULL));
  struct pyhost__deps_python py;
  char err[512], *reqs[1] = {"pyhostdemo==1.0"}, *key, name[128], lock[1024];
  CHECK(pyhost__deps_python_of_library(check_lib, &py, err, sizeof err) == 0);
  CHECK(pyhost__deps_key(&py, reqs, 1, &key, name, sizeof name) == 0);
  pyhost__free(key);
  iso_put("cache/x", "");
  snprintf(lock, sizeof lock, "%s/%s.lock", iso_at("cache"), name);
  struct pyhost__fs_lock *held;
  CHECK(pyhost__fs_lock(lock, 0, &held) == 0);
  struct waiter w;
  memset(&w, 0, sizeof w);
  w.h = h;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, load_in_thread, &w) == 0);
  reliab_wait(is_waiting, &w.e, "the load to wait for the lock");
  /* meanwhile the entry is made by hand, as another host would have made it */
  make_entry("1.0");
  pyhost__fs_unlock(held);
  pthread_join(t, NULL);
  CHECK_RC(w.rc, PYHOST_OK);
  CHECK(w.e.fresh == 0 && !saw(&w.e, PYHOST_DEPS_PREPARING));
  iso_stop(h);
}
