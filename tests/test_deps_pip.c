/* test_deps_pip.c: each plugin's own dependencies (issue 35), installed for real by
 * the Python's own pip, offline: the environment names the wheelhouse the tests made
 * (tests/deps_wheelhouse.py) the way a user names a private one (PIP_NO_INDEX=1,
 * PIP_FIND_LINKS=DIR), and PYHOST_DEPS_INSTALLER=pip.  Slow (pip takes a second or
 * more per install): registered for a few Pythons (tests/CMakeLists.txt).
 * Arguments: CASE LIB VERSION [PYHOST_CLI]. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "deps_test.h"
#include "isolation.h"
#include "reliab.h"

#include <sys/wait.h>
#include <unistd.h>

/* ---- cases that install (pip) ---- */

/* Two plugins pinning 1.0 and 2.0 of one package at the process level work side by
 * side in one host; a shared plugin sees neither environment. */
TEST_CASE(process_two_versions) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("a.py", script("\"pyhostdemo==1.0\"", NULL));
  iso_put("b.py", script("\"pyhostdemo == 2.0\"", NULL));
  iso_put("c.py", script("", NULL));
  pyhost_plugin *a, *b, *c;
  struct events ea, eb;
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &ea, &a), PYHOST_OK);
  CHECK_RC(load(h, "b.py", PYHOST_ISOLATION_PROCESS, &eb, &b), PYHOST_OK);
  CHECK(a && b);
  if (a && b) {
    CHECK_STREQ(str_of(h, a, "version"), "1.0");
    CHECK_STREQ(str_of(h, b, "version"), "2.0");
    CHECK_STREQ(str_of(h, a, "version"), "1.0");
    CHECK_CONTAINS(str_of(h, a, "demo_file"), pyhost_plugin_deps_env(a));
    CHECK(strcmp(pyhost_plugin_deps_env(a), pyhost_plugin_deps_env(b)) != 0);
  }
  /* nothing declared: no environment; the host's interpreter has no pyhostdemo */
  CHECK_RC(load(h, "c.py", PYHOST_ISOLATION_SHARED, NULL, &c), PYHOST_OK);
  CHECK_STREQ(pyhost_plugin_deps_env(c), "");
  CHECK_CONTAINS(str_of(h, c, "version"), "No module named");
  pyhost_plugin_unload(a);
  pyhost_plugin_unload(b);
  pyhost_plugin_unload(c);
  iso_stop(h);
}

/* At the shared level two plugins whose environments disagree: the second is refused,
 * naming both plugins, the package, both versions and the levels that allow it; the
 * first keeps working, and once it is unloaded the second loads. */
TEST_CASE(shared_conflict) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("one.py", script("\"pyhostdemo==1.0\"", NULL));
  iso_put("two.py", script("\"pyhostuser\"", NULL)); /* pyhostuser needs pyhostdemo 2.0 */
  pyhost_plugin *a, *b;
  CHECK_RC(load(h, "one.py", PYHOST_ISOLATION_SHARED, NULL, &a), PYHOST_OK);
  CHECK_STREQ(str_of(h, a, "version"), "1.0");
  CHECK_RC(load(h, "two.py", PYHOST_ISOLATION_SHARED, NULL, &b), PYHOST_DEPS);
  const char *msg = pyhost_errmsg(h);
  CHECK_CONTAINS(msg, "plugin two");
  CHECK_CONTAINS(msg, "plugin one");
  CHECK_CONTAINS(msg, "pyhostdemo 2.0");
  CHECK_CONTAINS(msg, "pyhostdemo 1.0");
  CHECK_CONTAINS(msg, "interpreter or process level");
  CHECK(b == NULL);
  CHECK_STREQ(str_of(h, a, "version"), "1.0");
  /* the same set again agrees with itself */
  pyhost_plugin *a2;
  CHECK_RC(load(h, "one.py", PYHOST_ISOLATION_SHARED, NULL, &a2), PYHOST_OK);
  pyhost_plugin_unload(a2);
  pyhost_plugin_unload(a);
  reliab_expect_int(h, "sum(1 for p in __import__('sys').path if 'pyhostdemo' in p or 'cache' in p)", 0);
  CHECK_RC(load(h, "two.py", PYHOST_ISOLATION_SHARED, NULL, &b), PYHOST_OK);
  pyhost_plugin_unload(b);
  iso_stop(h);
}

/* A second load of the same set finds it ready: it installs nothing (the wheelhouse
 * is gone by then, so an install would fail), and reports READY only. */
TEST_CASE(cached_second_load) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("a.py", script("\"pyhostdemo==1.0\"", NULL));
  pyhost_plugin *a;
  struct events e;
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &a), PYHOST_OK);
  CHECK(e.fresh == 1 && saw(&e, PYHOST_DEPS_PREPARING));
  pyhost_plugin_unload(a);
  setenv("PIP_FIND_LINKS", iso_at("nothing-here"), 1);
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &a), PYHOST_OK);
  CHECK(e.n == 1 && e.phase[0] == PYHOST_DEPS_READY && e.fresh == 0);
  CHECK(e.done[0] == 1 && e.total[0] == 1);
  CHECK_STREQ(str_of(h, a, "version"), "1.0");
  pyhost_plugin_unload(a);
  CHECK(cache_dirs(NULL) == 1);
  iso_stop(h);
}

/* A package the index does not have, and a build that fails: PYHOST_DEPS with pip's
 * own words, and nothing left in the cache. */
TEST_CASE(missing_package_and_failing_build) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("missing.py", script("\"pyhostdemo\", \"pyhost-no-such-package>=1\"", NULL));
  iso_put("broken.py", script("\"pyhostbroken\"", NULL));
  pyhost_plugin *p;
  CHECK_RC(load(h, "missing.py", PYHOST_ISOLATION_PROCESS, NULL, &p), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "loading plugin missing from");
  CHECK_CONTAINS(pyhost_errmsg(h), "pip install exited with status");
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhost-no-such-package");
  CHECK_CONTAINS(pyhost_errmsg(h), "No matching distribution");
  CHECK_RC(load(h, "broken.py", PYHOST_ISOLATION_SHARED, NULL, &p), PYHOST_DEPS);
  CHECK_CONTAINS(pyhost_errmsg(h), "pyhostbroken: this build fails on purpose");
  int temps;
  CHECK(cache_dirs(&temps) == 0 && temps == 0);
  iso_stop(h);
}

/* A damaged entry (its marker removed, then one for another key) is made again. */
TEST_CASE(damaged_entry_rebuilt) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("a.py", script("\"pyhostdemo==2.0\"", NULL));
  pyhost_plugin *a;
  struct events e;
  CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &a), PYHOST_OK);
  char marker[1200];
  snprintf(marker, sizeof marker, "%s/.pyhost-env", e.env);
  pyhost_plugin_unload(a);
  for (int round = 0; round < 2; round++) {
    if (round == 0) CHECK(unlink(marker) == 0);
    else iso_put(marker + strlen(iso_at("")), "pyhost dependency environment 1\npython cp27-other\n");
    CHECK_RC(load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &a), PYHOST_OK);
    CHECK(saw(&e, PYHOST_DEPS_REBUILDING) && e.fresh == 1);
    CHECK_STREQ(str_of(h, a, "version"), "2.0");
    pyhost_plugin_unload(a);
  }
  iso_stop(h);
}

/* The progress of a fresh install, in order: the installer starts, looks at each
 * package, installs both (0 of 2, then 2 of 2), and the environment is ready. */
TEST_CASE(progress_sequence) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  iso_put("u.py", script("\"pyhostuser\"", NULL));
  pyhost_plugin *p;
  struct events e;
  CHECK_RC(load(h, "u.py", PYHOST_ISOLATION_SHARED, &e, &p), PYHOST_OK);
  int order[] = {PYHOST_DEPS_PREPARING, PYHOST_DEPS_RESOLVING, PYHOST_DEPS_INSTALLING, PYHOST_DEPS_READY};
  int at = 0, resolving = 0;
  for (int i = 0; i < e.n; i++) {
    while (at < 4 && e.phase[i] != order[at]) at++;
    CHECK(at < 4); /* every event in the expected order */
    resolving += e.phase[i] == PYHOST_DEPS_RESOLVING;
  }
  CHECK(e.n >= 5 && e.phase[0] == PYHOST_DEPS_PREPARING && e.phase[e.n - 1] == PYHOST_DEPS_READY);
  CHECK(resolving == 2); /* pyhostuser, then pyhostdemo it needs */
  CHECK(e.done[e.n - 2] == 2 && e.total[e.n - 2] == 2);
  CHECK(e.done[e.n - 1] == 2 && e.total[e.n - 1] == 2 && e.fresh == 1);
  CHECK_STREQ(str_of(h, p, "version"), "2.0");
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* Two hosts (two processes, each starting its Python) prepare the same set at once,
 * released together: both load it, exactly one installs. */
TEST_CASE(two_hosts_at_once) {
  need_wheelhouse();
  char cache[256], go[300];
  snprintf(cache, sizeof cache, "%s/pyhost-deps-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(cache)) SKIP("mkdtemp failed");
  snprintf(go, sizeof go, "%s.go", cache);
  setenv("PYHOST_DEPS_CACHE", cache, 1);
  pid_t kids[2];
  for (int k = 0; k < 2; k++) {
    if ((kids[k] = fork()) == 0) {
      pyhost *h = iso_start();
      iso_put("a.py", script("\"pyhostuser\"", NULL));
      while (access(go, F_OK) != 0) usleep(1000);
      pyhost_plugin *p;
      struct events e;
      int rc = load(h, "a.py", PYHOST_ISOLATION_PROCESS, &e, &p);
      int ok = rc == PYHOST_OK && !strcmp(str_of(h, p, "version"), "2.0");
      if (!ok) fprintf(stderr, "host %d: %s: %s\n", k, pyhost_status_name(rc), pyhost_errmsg(h));
      pyhost_plugin_unload(p);
      iso_stop(h);
      _exit(ok && !check_failures ? 10 + e.fresh : 1);
    }
  }
  FILE *f = fopen(go, "w");
  CHECK(f && fclose(f) == 0);
  int fresh = 0;
  for (int k = 0; k < 2; k++) {
    int st;
    CHECK(waitpid(kids[k], &st, 0) == kids[k]);
    CHECK(WIFEXITED(st) && (WEXITSTATUS(st) == 10 || WEXITSTATUS(st) == 11));
    fresh += WIFEXITED(st) && WEXITSTATUS(st) == 11;
  }
  CHECK(fresh == 1);
  int temps;
  CHECK(cache_dirs_in(cache, &temps) == 1 && temps == 0);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", cache, go);
  CHECK(system(cmd) == 0);
}

/* requires-python the host's Python does not meet: at the shared level an error
 * naming the file and line; at the process level a Python that meets it, found by
 * discovery, runs the plugin with the environment made for it. */
TEST_CASE(requires_python_picks_another) {
  need_wheelhouse();
  unsigned other = check_minor() == 12 ? 8 : 12;
  char spec[32];
  snprintf(spec, sizeof spec, "==3.%u.*", other);
  pyhost *h = iso_start();
  use_cache();
  iso_put("rp.py", script("\"pyhostdemo==1.0\"", spec));
  pyhost_plugin *p;
  CHECK_RC(load(h, "rp.py", PYHOST_ISOLATION_SHARED, NULL, &p), PYHOST_VERSION);
  CHECK_CONTAINS(pyhost_errmsg(h), "does not meet requires-python");
  CHECK_CONTAINS(pyhost_errmsg(h), "rp.py:3");
  CHECK_CONTAINS(pyhost_errmsg(h), "process level");
  struct events e;
  CHECK_RC(load(h, "rp.py", PYHOST_ISOLATION_PROCESS, &e, &p), PYHOST_OK);
  char want[16];
  snprintf(want, sizeof want, "3.%u", other);
  if (p) {
    CHECK_STREQ(str_of(h, p, "python"), want);
    CHECK_STREQ(str_of(h, p, "version"), "1.0");
    snprintf(want, sizeof want, "cp3%u-", other);
    CHECK_CONTAINS(pyhost_plugin_deps_env(p), want);
  }
  pyhost_plugin_unload(p);
  iso_stop(h);
}


/* The output of `pyhost ARGS...` (stdout and stderr) into out; its exit status. */
static int cli(const char *args, char *out, size_t cap) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' --python '%s' %s 2>&1", PYHOST_TEST_CLI, check_lib, args);
  FILE *f = popen(cmd, "r");
  size_t n = f ? fread(out, 1, cap - 1, f) : 0;
  out[n] = '\0';
  int st = f ? pclose(f) : -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `pyhost --deps` runs two scripts pinning 1.0 and 2.0 (plain lines of progress: not
 * a terminal); plain `pyhost FILE` is python's (no environment); --deps-list lists
 * both environments and --deps-prune=0 removes them. */
TEST_CASE(cli_deps_two_scripts) {
  need_wheelhouse();
  pyhost *h = iso_start();
  use_cache();
  static const char body[] = "import pyhostdemo, sys\nprint('demo', pyhostdemo.VERSION, sys.argv[1:])\n";
  char text[1024], out[16384], args[1024];
  snprintf(text, sizeof text, "# /// script\n# dependencies = [\"pyhostdemo==1.0\"]\n# ///\n%s", body);
  iso_put("one.py", text);
  snprintf(text, sizeof text, "# /// script\n# dependencies = [\"pyhostdemo==2.0\"]\n# ///\n%s", body);
  iso_put("two.py", text);
  snprintf(args, sizeof args, "--deps '%s' x y", iso_at("one.py"));
  CHECK(cli(args, out, sizeof out) == 0);
  CHECK_CONTAINS(out, "demo 1.0 ['x', 'y']");
  CHECK_CONTAINS(out, "pyhost: dependencies of script");
  CHECK_CONTAINS(out, "installing");
  CHECK_CONTAINS(out, "installed now");
  snprintf(args, sizeof args, "--deps '%s'", iso_at("two.py"));
  CHECK(cli(args, out, sizeof out) == 0);
  CHECK_CONTAINS(out, "demo 2.0 []");
  CHECK(cli(args, out, sizeof out) == 0); /* again: cached */
  CHECK_CONTAINS(out, ", cached)");
  snprintf(args, sizeof args, "'%s'", iso_at("two.py"));
  CHECK(cli(args, out, sizeof out) == 1);
  CHECK_CONTAINS(out, "No module named");
  CHECK(cli("--deps-list", out, sizeof out) == 0);
  CHECK_CONTAINS(out, "    pyhostdemo==1.0\n");
  CHECK_CONTAINS(out, "    pyhostdemo==2.0\n");
  CHECK(cli("--deps-prune=0", out, sizeof out) == 0);
  CHECK_CONTAINS(out, "removed ");
  CHECK(cache_dirs(NULL) == 0);
  snprintf(args, sizeof args, "--deps '%s'", iso_at("nope.py"));
  CHECK(cli("--deps", out, sizeof out) == 1);
  CHECK_CONTAINS(out, "--deps runs a script");
  iso_stop(h);
}
