/* test_discover.c: discovery, interpreter resolution, policy, isolation, the doctor API.
 * Arguments: CASE FIXTURE_DIR PYENV_ROOT STATIC_PYTHON_FIXTURE.
 * The environment variable PYHOST_TEST_LIBS holds the matrix (lib:lib:...).  Cases
 * build their own trees (PATH directories, pyenv roots, venvs, wrapper scripts) in a
 * fresh temporary directory and point the environment at them. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "alloc.h"
#include "discover_sys.h"
#include "libcheck.h"
#include "discover_util.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fix_dir(void) { return check_lib; }
static const char *pyenv_root(void) { return check_version; }
static const char *static_fixture(void) { return check_arg4; }

static const char *const discovery_vars[] = {
    "PYHOST_PYTHON_LIBRARY", "PYHOST_PYTHON", "VIRTUAL_ENV", "PYENV_VERSION", "PYENV_DIR",
    "PYTHONHOME", "PYTHONPATH", "LD_LIBRARY_PATH", "CONDA_PREFIX", "PIXI_PROJECT_ROOT",
    "UV_PYTHON", "MISE_PYTHON_VERSION", "ASDF_PYTHON_VERSION", NULL};

/* A fresh temporary directory and an environment without discovery settings. */
static const char *setup(void) {
  return make_tmp("pyhost-discover", discovery_vars);
}

/* The installed pyenv version whose name starts with minor ("3.11" -> "3.11.7"), as a
 * path under PYENV_ROOT/versions; skips the case when there is none. */
static const char *pyenv_version(const char *minor, char *out, size_t cap) {
  char pattern[PATHBUF];
  glob_t g;
  fmtbuf(pattern, sizeof pattern, "%s/versions/%s.*/bin/python%s", pyenv_root(), minor, minor);
  if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) SKIP("no pyenv Python %s", minor);
  fmtbuf(out, cap, "%s", g.gl_pathv[g.gl_pathc - 1]);
  globfree(&g);
  char *bin = strstr(out, "/bin/python");
  *bin = '\0';
  return out;
}

static int discover(pyhost_config *cfg) { return record_discovery(cfg); }

/* The first candidate whose interpreter or library contains needle, or NULL. */
static const struct seen_one *find(const char *needle) { return find_in(NULL, needle); }

static unsigned minor_of(unsigned long hex) { return (unsigned)((hex >> 16) & 0xFF); }

/* A PATH of only dir (plus /bin for the shell that wrapper scripts need, which holds
 * no python on the test machines' images or is passed over as a duplicate). */
static void only_path(const char *dir) {
  setenv("PATH", dir, 1);
}

/* ---- the headline: no configuration picks what `python3` on PATH runs ---- */

TEST_CASE(picks_python3_on_path) {
  setup();
  FILE *p = popen("python3 -c \"import sys, os, sysconfig as s; "
                  "print(os.path.realpath(os.path.join(s.get_config_var('LIBDIR'), "
                  "s.get_config_var('INSTSONAME')))); print(sys.version)\"",
                  "r");
  char lib[PATHBUF] = "", version[512] = "";
  if (!p || !fgets(lib, sizeof lib, p) || !fgets(version, sizeof version, p)) SKIP("no python3 on PATH");
  pclose(p);
  lib[strcspn(lib, "\n")] = '\0';
  version[strcspn(version, "\n")] = '\0';
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_STREQ(taken()->library, lib);
  CHECK(!strncmp(taken()->source, "PATH python3", 12));
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_OK);
  CHECK_STREQ(pyhost_library_path(h), lib);
  pyhost_value *v = NULL;
  const char *s = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('sys').version", &v), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, v, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, version);
  pyhost_value_free(v);
  pyhost_free(h);
}

/* Every Python 3 of the matrix is listed, with its version. */
TEST_CASE(lists_every_python) {
  setup();
  const char *libs = getenv("PYHOST_TEST_LIBS");
  if (!libs || !libs[0]) SKIP("no matrix");
  CHECK_RC(discover(NULL), PYHOST_OK);
  char copy[16384];
  fmtbuf(copy, sizeof copy, "%s", libs);
  for (char *lib = strtok(copy, ":"); lib; lib = strtok(NULL, ":")) {
    const struct seen_one *c = NULL;
    for (int i = 0; i < n_seen && !c; i++)
      if (!strcmp(seen[i].library, lib)) c = &seen[i];
    /* a library given with -DPYHOST_TEST_PYTHONS may live anywhere: not a standard place */
    if (!c && strncmp(lib, pyenv_root(), strlen(pyenv_root())) != 0 && strncmp(lib, "/usr/", 5) != 0) {
      fprintf(stderr, "%s: not in a standard place, not expected in the list\n", lib);
      continue;
    }
    if (!c) {
      fprintf(stderr, "%s is not listed\n", lib);
      dump();
      check_failures++;
      continue;
    }
    /* "libpython3.11.so.1.0" and "/versions/3.11.7/": the version reported matches */
    unsigned want = (unsigned)atoi(strstr(lib, "libpython3.") + 11);
    CHECK(c->hex >> 24 == 3);
    CHECK(minor_of(c->hex) == want);
  }
}

/* ---- PATH ---- */

TEST_CASE(path_symlink_and_relative_entries) {
  const char *t = setup();
  char v39[PATHBUF], v312[PATHBUF];
  pyenv_version("3.9", v39, sizeof v39);
  pyenv_version("3.12", v312, sizeof v312);
  /* bin/python3 -> ../opt/bin/python3 -> the real 3.9: a chain of symlinks */
  sh("mkdir -p %s/bin %s/opt/bin %s/cwd && ln -s %s/bin/python3.9 %s/opt/bin/python3 && "
     "ln -s ../opt/bin/python3 %s/bin/python3 && ln -s %s/bin/python3.12 %s/cwd/python3",
     t, t, t, v39, t, t, v312, t);
  char path[PATHBUF], dir[PATHBUF];
  /* "." and "cwd" (relative) come first and hold a 3.12: never used */
  fmtbuf(path, sizeof path, ".:cwd::%s/bin", t);
  setenv("PATH", path, 1);
  fmtbuf(dir, sizeof dir, "%s/cwd", t);
  CHECK(chdir(dir) == 0);
  setenv("PYENV_ROOT", t, 1); /* no versions/ there */
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->interpreter, "/bin/python3");
  CHECK_CONTAINS(taken()->library, "libpython3.9");
  CHECK_STREQ(taken()->source, "PATH python3");
  CHECK(find("/cwd/") == NULL);
}

TEST_CASE(path_python2_passed_over) {
  const char *t = setup();
  char v27[PATHBUF], v310[PATHBUF];
  pyenv_version("2.7", v27, sizeof v27);
  pyenv_version("3.10", v310, sizeof v310);
  sh("mkdir -p %s/a %s/b && ln -s %s/bin/python2.7 %s/a/python && ln -s %s/bin/python3.10 %s/b/python3",
     t, t, v27, t, v310, t);
  char path[PATHBUF];
  fmtbuf(path, sizeof path, "%s/a:%s/b", t, t);
  setenv("PATH", path, 1);
  setenv("PYENV_ROOT", t, 1);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.10");
  const struct seen_one *py2 = find("/a/python");
  CHECK(py2 != NULL);
  if (py2) CHECK_STREQ(py2->code, "python2");
}

/* ---- pyenv ---- */

/* A pyenv root of our own: shims/python3 is pyenv's shim text, versions/ links to the
 * real installations. */
static void fake_pyenv(const char *t, const char *const *versions, size_t n) {
  char shim[4 * PATHBUF], path[PATHBUF];
  sh("mkdir -p %s/pyenv/shims %s/pyenv/versions", t, t);
  for (size_t i = 0; i < n; i++) {
    char real[PATHBUF];
    pyenv_version(versions[i], real, sizeof real);
    sh("ln -s %s %s/pyenv/versions/%s", real, t, strrchr(real, '/') + 1);
  }
  fmtbuf(shim, sizeof shim,
           "#!/usr/bin/env bash\nset -e\n[ -n \"$PYENV_DEBUG\" ] && set -x\n\nprogram=\"${0##*/}\"\n\n"
           "export PYENV_ROOT=\"%s/pyenv\"\nexec \"%s/pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n",
           t, t);
  fmtbuf(path, sizeof path, "%s/pyenv/shims/python3", t);
  write_file(path, shim, 0755);
  fmtbuf(path, sizeof path, "%s/pyenv/shims", t);
  setenv("PATH", path, 1);
  unsetenv("PYENV_ROOT"); /* the shim's own export names the root */
}

/* A pyenv version file (global "version" or a local ".python-version") naming the
 * installed version of minor, with a comment line pyenv ignores. */
static void version_file(const char *file, const char *minor) {
  char v[PATHBUF], text[PATHBUF];
  pyenv_version(minor, v, sizeof v);
  fmtbuf(text, sizeof text, "# chosen by the test\n%s\n", strrchr(v, '/') + 1);
  write_file(file, text, 0644);
}

/* A fake pyenv with versions a and b, a global version file naming global, and the
 * current directory in the temporary tree (no .python-version above it). */
static void pyenv_with_global(const char *t, const char *a, const char *b, const char *global) {
  const char *const vs[] = {a, b};
  fake_pyenv(t, vs, 2);
  char file[PATHBUF];
  fmtbuf(file, sizeof file, "%s/pyenv/version", t);
  version_file(file, global);
  CHECK(chdir(t) == 0);
}

TEST_CASE(pyenv_shim_global_version) {
  pyenv_with_global(setup(), "3.8", "3.12", "3.8");
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_STREQ(taken()->kind, "pyenv shim");
  CHECK_CONTAINS(taken()->library, "libpython3.8");
  CHECK_CONTAINS(taken()->how, "pyenv/version");
}

TEST_CASE(pyenv_local_file_and_env) {
  const char *t = setup();
  static const char *const vs[] = {"3.8", "3.10", "3.12"};
  fake_pyenv(t, vs, 3);
  char dir[PATHBUF], file[PATHBUF];
  fmtbuf(file, sizeof file, "%s/pyenv/version", t);
  version_file(file, "3.8");
  /* .python-version in a parent of the current directory wins over the global one */
  sh("mkdir -p %s/project/src/deep", t);
  fmtbuf(file, sizeof file, "%s/project/.python-version", t);
  version_file(file, "3.12");
  fmtbuf(dir, sizeof dir, "%s/project/src/deep", t);
  CHECK(chdir(dir) == 0);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.12");
  CHECK_CONTAINS(taken()->how, ".python-version");
  /* PYENV_VERSION wins over both; a bare minor names the newest patch release */
  setenv("PYENV_VERSION", "3.10", 1);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.10");
  CHECK_CONTAINS(taken()->how, "PYENV_VERSION");
  /* a version pyenv does not have: the shim leads nowhere */
  setenv("PYENV_VERSION", "3.99.1", 1);
  discover(NULL);
  const struct seen_one *shim = find("shims/python3");
  CHECK(shim != NULL);
  if (shim) CHECK_STREQ(shim->code, "missing");
}

TEST_CASE(pyenv_system_version) {
  const char *t = setup();
  static const char *const vs[] = {"3.8"};
  fake_pyenv(t, vs, 1);
  char v[PATHBUF], path[PATHBUF];
  pyenv_version("3.11", v, sizeof v);
  /* "system": the next python3 on PATH after the shims */
  sh("mkdir -p %s/sys && ln -s %s/bin/python3.11 %s/sys/python3", t, v, t);
  fmtbuf(path, sizeof path, "%s/pyenv/shims:%s/sys", t, t);
  setenv("PATH", path, 1);
  setenv("PYENV_VERSION", "system", 1);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.11");
  CHECK_CONTAINS(taken()->how, "system");
}

TEST_CASE(pyenv_versions_are_standard_places) {
  const char *t = setup();
  static const char *const vs[] = {"3.9", "3.13", "2.7"};
  fake_pyenv(t, vs, 3);
  setenv("PATH", "/nonexistent", 1);
  char root[PATHBUF];
  fmtbuf(root, sizeof root, "%s/pyenv", t);
  setenv("PYENV_ROOT", root, 1);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_prefer_newest(cfg, 1);
  CHECK_RC(discover(cfg), PYHOST_OK);
  pyhost_config_free(cfg);
  CHECK_CONTAINS(taken()->library, "libpython3.13");
  const struct seen_one *a = find("libpython3.9"), *b = find("libpython2.7");
  CHECK(a && !strcmp(a->source, "pyenv") && !strcmp(a->code, "acceptable"));
  CHECK(b && !strcmp(b->code, "python2"));
}

/* ---- wrapper scripts ---- */

TEST_CASE(wrapper_script_exec_line) {
  const char *t = setup();
  char v[PATHBUF], path[PATHBUF], text[PATHBUF];
  pyenv_version("3.8", v, sizeof v);
  fmtbuf(text, sizeof text, "#!/bin/sh\n# a site's wrapper\nexport FOO=1\nexec \"%s/bin/python3.8\" \"$@\"\n", v);
  sh("mkdir -p %s/bin", t);
  fmtbuf(path, sizeof path, "%s/bin/python3", t);
  write_file(path, text, 0755);
  fmtbuf(path, sizeof path, "%s/bin", t);
  only_path(path);
  setenv("PYENV_ROOT", t, 1);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_no_subprocess(cfg, 1); /* read, never run */
  CHECK_RC(discover(cfg), PYHOST_OK);
  pyhost_config_free(cfg);
  CHECK_STREQ(taken()->kind, "script");
  CHECK_CONTAINS(taken()->library, "libpython3.8");
  CHECK_CONTAINS(taken()->how, "wrapper script");
}

TEST_CASE(wrapper_script_needs_subprocess) {
  const char *t = setup();
  char v[PATHBUF], path[PATHBUF], text[PATHBUF];
  pyenv_version("3.9", v, sizeof v);
  /* the target is in a variable: only running it tells */
  fmtbuf(text, sizeof text, "#!/bin/sh\nPY=%s/bin/python3.9\nexec \"$PY\" \"$@\"\n", v);
  sh("mkdir -p %s/bin", t);
  fmtbuf(path, sizeof path, "%s/bin/python3", t);
  write_file(path, text, 0755);
  char dirs[PATHBUF];
  fmtbuf(dirs, sizeof dirs, "%s/bin:/bin:/usr/bin", t);
  setenv("PATH", dirs, 1);
  setenv("PYENV_ROOT", t, 1);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_no_subprocess(cfg, 1);
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, 9));
  discover(cfg);
  const struct seen_one *w = find("/bin/python3");
  CHECK(w && !strcmp(w->code, "unresolved"));
  if (w) CHECK_CONTAINS(w->reason, "switched off");
  pyhost_config_set_no_subprocess(cfg, 0);
  CHECK_RC(discover(cfg), PYHOST_OK);
  pyhost_config_free(cfg);
  CHECK_CONTAINS(taken()->interpreter, t);
  CHECK_CONTAINS(taken()->library, "libpython3.9");
  CHECK_CONTAINS(taken()->how, "asked the interpreter");
}

/* ---- a fake installation prefix ---- */

TEST_CASE(fake_prefix_lib_dir) {
  const char *t = setup();
  /* a copied (not linked) executable: its RUNPATH still names the real lib dir */
  char v[PATHBUF], path[PATHBUF];
  pyenv_version("3.10", v, sizeof v);
  sh("mkdir -p %s/prefix/bin && cp %s/bin/python3.10 %s/prefix/bin/python3.10 && "
     "ln -s python3.10 %s/prefix/bin/python3",
     t, v, t, t);
  fmtbuf(path, sizeof path, "%s/prefix/bin", t);
  only_path(path);
  setenv("PYENV_ROOT", t, 1);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.10");
  CHECK_CONTAINS(taken()->how, "RUNPATH");
}

TEST_CASE(static_interpreter_with_shared_library) {
  const char *t = setup();
  /* Debian's /usr/bin/python3.11 links libpython statically, and the distribution also
   * ships libpython3.11.so.1.0: a copy of it in a fake prefix finds the prefix's lib */
  if (access("/usr/bin/python3.11", X_OK) != 0 || access("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0", R_OK) != 0)
    SKIP("no Debian python3.11");
  char path[PATHBUF];
  sh("mkdir -p %s/usr/bin %s/usr/lib && cp /usr/bin/python3.11 %s/usr/bin/python3 && "
     "ln -s /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 %s/usr/lib/libpython3.11.so.1.0",
     t, t, t, t);
  fmtbuf(path, sizeof path, "%s/usr/bin/python3", t);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_interpreter(cfg, path);
  pyhost_config_set_no_subprocess(cfg, 1);
  CHECK_RC(discover(cfg), PYHOST_OK);
  pyhost_config_free(cfg);
  /* the name says python3 only; the version comes from the lib directory's contents */
  CHECK_STREQ(taken()->library, "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
  CHECK_CONTAINS(taken()->how, "statically linked");
}

TEST_CASE(static_interpreter_fixture) {
  const char *t = setup();
  char path[PATHBUF];
  sh("mkdir -p %s/static/bin && cp %s %s/static/bin/python3.12", t, static_fixture(), t);
  fmtbuf(path, sizeof path, "%s/static/bin/python3.12", t);
  setenv("PYHOST_PYTHON", path, 1);
  CHECK_RC(discover(NULL), PYHOST_NOTFOUND);
  CHECK(n_seen >= 1);
  CHECK_STREQ(seen[0].code, "no-shared-library");
  CHECK_CONTAINS(seen[0].reason, "statically linked");
  CHECK_CONTAINS(seen[0].reason, "--enable-shared");
  /* PYHOST_PYTHON is binding: init reports it and loads nothing else */
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "statically linked");
  CHECK_CONTAINS(pyhost_errmsg(h), "PYHOST_PYTHON");
  pyhost_free(h);
}

/* ---- venvs, from VIRTUAL_ENV and as a configured interpreter ---- */

static void venv_case(const char *minor, int through_config) {
  const char *t = setup();
  char v[PATHBUF], venv[PATHBUF], pkg[PATHBUF], path[PATHBUF];
  pyenv_version(minor, v, sizeof v);
  fmtbuf(venv, sizeof venv, "%s/venv%s", t, minor);
  sh("%s/bin/python%s -m venv --without-pip %s", v, minor, venv);
  fmtbuf(pkg, sizeof pkg, "%s/lib/python%s/site-packages/pyhost_venv_pkg", venv, minor);
  sh("mkdir -p %s", pkg);
  fmtbuf(path, sizeof path, "%s/__init__.py", pkg);
  write_file(path, "WHERE = 'venv'\n", 0644);
  only_path("/nonexistent");
  setenv("PYENV_ROOT", t, 1);
  pyhost_config *cfg = pyhost_config_new();
  fmtbuf(path, sizeof path, "%s/bin/python", venv);
  if (through_config) pyhost_config_set_interpreter(cfg, path);
  else setenv("VIRTUAL_ENV", venv, 1);
  CHECK_RC(discover(cfg), PYHOST_OK);
  CHECK_STREQ(taken()->kind, "venv");
  CHECK_STREQ(taken()->venv, venv);
  CHECK_STREQ(taken()->source, through_config ? "interpreter" : "VIRTUAL_ENV");
  char want_lib[64];
  fmtbuf(want_lib, sizeof want_lib, "libpython%s", minor);
  CHECK_CONTAINS(taken()->library, want_lib);
  pyhost *h = start_or_fail(cfg);
  if (!h) return;
  pyhost_value *val = NULL;
  const char *s = NULL;
  CHECK_RC(pyhost_eval(h, "__import__('sys').prefix", &val), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, val, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, venv);
  pyhost_value_free(val);
  CHECK_RC(pyhost_eval(h, "__import__('pyhost_venv_pkg').WHERE", &val), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, val, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, "venv");
  pyhost_value_free(val);
  char expr[128], want[32];
  fmtbuf(expr, sizeof expr, "'%%d.%%d' %% __import__('sys').version_info[:2]");
  fmtbuf(want, sizeof want, "%s", minor);
  CHECK_RC(pyhost_eval(h, expr, &val), PYHOST_OK);
  CHECK_RC(pyhost_value_to_str(h, val, &s, NULL), PYHOST_OK);
  CHECK_STREQ(s, want);
  pyhost_value_free(val);
  pyhost_free(h);
}

TEST_CASE(venv_3_8) { venv_case("3.8", 0); }
TEST_CASE(venv_3_11) { venv_case("3.11", 0); }
TEST_CASE(venv_3_13) { venv_case("3.13", 0); }
TEST_CASE(venv_configured_interpreter) { venv_case("3.11", 1); }

TEST_CASE(venv_base_gone) {
  const char *t = setup();
  char path[PATHBUF];
  sh("mkdir -p %s/venv/bin && ln -s %s/nowhere/python3.12 %s/venv/bin/python", t, t, t);
  fmtbuf(path, sizeof path, "%s/venv/pyvenv.cfg", t);
  char text[PATHBUF];
  fmtbuf(text, sizeof text, "home = %s/nowhere\nversion = 3.12.1\n", t);
  write_file(path, text, 0644);
  fmtbuf(path, sizeof path, "%s/venv", t);
  setenv("VIRTUAL_ENV", path, 1);
  only_path("/nonexistent");
  setenv("PYENV_ROOT", t, 1);
  discover(NULL);
  CHECK(n_seen >= 1);
  CHECK_STREQ(seen[0].source, "VIRTUAL_ENV");
  CHECK_STREQ(seen[0].code, "missing");
  CHECK_CONTAINS(seen[0].reason, "pyvenv.cfg home");
}

/* ---- version policy and rejections ---- */

static void pyenv_only(const char *t) {
  only_path("/nonexistent");
  setenv("PYENV_ROOT", pyenv_root(), 1);
  (void)t;
}

TEST_CASE(policy_exact_min_max_newest) {
  const char *t = setup();
  char v[PATHBUF];
  pyenv_version("3.9", v, sizeof v);
  pyenv_version("3.12", v, sizeof v);
  pyenv_only(t);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, 9));
  CHECK_RC(discover(cfg), PYHOST_OK);
  CHECK_CONTAINS(taken()->library, "libpython3.9");
  const struct seen_one *o = find("libpython3.12");
  CHECK(o && !strcmp(o->code, "out-of-range"));
  if (o) CHECK_CONTAINS(o->reason, "not 3.9");
  pyhost_config_set_python_minor(cfg, 0);
  pyhost_config_set_max_python(cfg, PYHOST_PY(3, 10));
  pyhost_config_set_prefer_newest(cfg, 1);
  CHECK_RC(discover(cfg), PYHOST_OK);
  CHECK(minor_of(taken()->hex) == 10);
  o = find("libpython3.12");
  CHECK(o && strstr(o->reason, "newer than 3.10"));
  pyhost_config_set_max_python(cfg, 0);
  pyhost_config_set_min_python(cfg, PYHOST_PY(3, 14));
  CHECK_RC(discover(cfg), PYHOST_NOTFOUND);
  /* init says the same, candidate by candidate */
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(cfg, &h), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "no usable Python 3 found");
  CHECK_CONTAINS(pyhost_errmsg(h), "older than 3.14");
  pyhost_free(h);
  pyhost_config_free(cfg);
}

TEST_CASE(policy_configured_library_max) {
  setup();
  char v[PATHBUF], lib[PATHBUF];
  pyenv_version("3.12", v, sizeof v);
  fmtbuf(lib, sizeof lib, "%s/lib/libpython3.12.so.1.0", v);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, lib);
  pyhost_config_set_max_python(cfg, PYHOST_PY(3, 11));
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(cfg, &h), PYHOST_VERSION);
  CHECK_CONTAINS(pyhost_errmsg(h), "newer than 3.11");
  pyhost_free(h);
  pyhost_config_set_max_python(cfg, 0);
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, 8));
  CHECK_RC(pyhost_init(cfg, &h), PYHOST_VERSION);
  CHECK_CONTAINS(pyhost_errmsg(h), "not 3.8");
  pyhost_free(h);
  pyhost_config_free(cfg);
}

/* Free-threaded, debug, another architecture, not Python, missing symbols: each
 * passed over with its own reason, from LD_LIBRARY_PATH (a standard place). */
TEST_CASE(rejections_have_reasons) {
  const char *t = setup();
  char path[PATHBUF], ld[PATHBUF];
  sh("mkdir -p %s/arch && cp %s/libfake_ftsymbol.so %s/arch/libpython3.13t.so && cp %s/dbg/libpython3.12d.so %s/arch/ && "
     "cp %s/libfake_missing.so %s/arch/libpython3.11.so && cp %s/libnotpython.so %s/arch/libpython3.10.so",
     t, fix_dir(), t, fix_dir(), t, fix_dir(), t, fix_dir(), t);
  /* the ELF header of this test binary with another e_machine is all the check reads */
  unsigned char hdr[64] = {0};
  FILE *self = fopen("/proc/self/exe", "rb");
  CHECK(self && fread(hdr, 1, sizeof hdr, self) == sizeof hdr);
  if (self) fclose(self);
  hdr[18] = hdr[18] == 62 ? 183 : 62; /* x86_64 <-> aarch64 */
  hdr[19] = 0;
  fmtbuf(path, sizeof path, "%s/arch/libpython3.9.so.1.0", t);
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr);
  if (f) fclose(f);
  fmtbuf(ld, sizeof ld, "%s/arch:relative/dir", t);
  setenv("LD_LIBRARY_PATH", ld, 1);
  only_path("/nonexistent");
  setenv("PYENV_ROOT", t, 1);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_min_python(cfg, PYHOST_PY(3, 9));
  discover(cfg);
  struct { const char *lib, *code; } want[] = {
      {"libpython3.13t.so", "free-threaded"}, {"libpython3.12d.so", "debug"},
      {"libpython3.11.so", "missing-symbols"}, {"libpython3.10.so", "not-python"},
      {"libpython3.9.so.1.0", "wrong-architecture"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const struct seen_one *c = find(want[i].lib);
    if (!c || strcmp(c->code, want[i].code) != 0) {
      fprintf(stderr, "%s: expected %s\n", want[i].lib, want[i].code);
      dump();
      check_failures++;
    }
  }
  /* allow_debug lets the debug build through to the next check (its symbols) */
  pyhost_config_set_allow_debug(cfg, 1);
  discover(cfg);
  const struct seen_one *d = find("libpython3.12d.so");
  CHECK(d && !strcmp(d->code, "missing-symbols"));
  pyhost_config_free(cfg);
}

TEST_CASE(configured_interpreter_problems) {
  setup();
  only_path("/nonexistent");
  setenv("PYHOST_PYTHON", "bin/python3", 1);
  discover(NULL);
  CHECK(n_seen >= 1 && !strcmp(seen[0].code, "relative-path"));
  setenv("PYHOST_PYTHON", "/nonexistent/python3", 1);
  CHECK_RC(discover(NULL), PYHOST_NOTFOUND);
  CHECK(n_seen >= 1 && !strcmp(seen[0].code, "missing"));
  /* a configured library wins over everything and is reported first */
  char v[PATHBUF], lib[PATHBUF];
  pyenv_version("3.8", v, sizeof v);
  fmtbuf(lib, sizeof lib, "%s/lib/libpython3.8.so.1.0", v);
  setenv("PYHOST_PYTHON_LIBRARY", lib, 1);
  CHECK_RC(discover(NULL), PYHOST_OK);
  CHECK_STREQ(seen[0].source, "PYHOST_PYTHON_LIBRARY");
  CHECK(seen[0].taken);
}

TEST_CASE(setters_misuse) {
  CHECK_RC(pyhost_config_set_interpreter(NULL, "/x"), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_max_python(NULL, 0), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_python_minor(NULL, 0), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_prefer_newest(NULL, 1), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_allow_debug(NULL, 1), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_no_subprocess(NULL, 1), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_isolated(NULL, 1), PYHOST_MISUSE);
  pyhost_config *cfg = pyhost_config_new();
  CHECK_RC(pyhost_config_set_interpreter(cfg, "/x"), PYHOST_OK);
  CHECK_RC(pyhost_config_set_interpreter(cfg, NULL), PYHOST_OK);
  /* on a configuration, every scalar setter answers OK (they share one definition) */
  CHECK_RC(pyhost_config_set_min_python(cfg, 0x03060000), PYHOST_OK);
  CHECK_RC(pyhost_config_set_max_python(cfg, 0x030f0000), PYHOST_OK);
  CHECK_RC(pyhost_config_set_python_minor(cfg, 0x030d0000), PYHOST_OK);
  CHECK_RC(pyhost_config_set_flags(cfg, 0), PYHOST_OK);
  CHECK_RC(pyhost_config_set_prefer_newest(cfg, 1), PYHOST_OK);
  CHECK_RC(pyhost_config_set_allow_debug(cfg, 1), PYHOST_OK);
  CHECK_RC(pyhost_config_set_no_subprocess(cfg, 1), PYHOST_OK);
  CHECK_RC(pyhost_config_set_isolated(cfg, 0), PYHOST_OK);
  pyhost_config_free(cfg);
  pyhost_library_info *info = NULL;
  CHECK_RC(pyhost_inspect_library(NULL, &info), PYHOST_MISUSE);
  CHECK_RC(pyhost_inspect_library("/x", NULL), PYHOST_MISUSE);
  pyhost_library_info_free(NULL);
}

/* ---- pyhost_inspect_library ---- */

TEST_CASE(inspect_library) {
  setup();
  char v[PATHBUF], lib[PATHBUF];
  pyenv_version("3.12", v, sizeof v);
  fmtbuf(lib, sizeof lib, "%s/lib/libpython3.12.so", v);
  pyhost_library_info *in = NULL;
  CHECK_RC(pyhost_inspect_library(lib, &in), PYHOST_OK);
  CHECK_RC(in->status, PYHOST_OK);
  CHECK(minor_of(in->hexversion) == 12);
  CHECK_CONTAINS(in->real_path, "libpython3.12.so.1.0");
  CHECK(in->required > 100 && in->required_missing == 0 && in->optional_missing == 0);
  CHECK(in->architecture_ok);
  CHECK_STREQ(in->home, v);
  pyhost_library_info_free(in);
  char fake[PATHBUF];
  fmtbuf(fake, sizeof fake, "%s/libfake_missing.so", fix_dir());
  CHECK_RC(pyhost_inspect_library(fake, &in), PYHOST_OK);
  CHECK_RC(in->status, PYHOST_NOSYM);
  CHECK(in->required_missing > 0 && in->missing[0]);
  pyhost_library_info_free(in);
  CHECK_RC(pyhost_inspect_library("/nonexistent/libpython3.12.so", &in), PYHOST_OK);
  CHECK_RC(in->status, PYHOST_NOTFOUND);
  pyhost_library_info_free(in);
}

/* ---- out of memory: every allocation of a discovery fails in turn ---- */

TEST_CASE(out_of_memory_everywhere) {
  pyenv_with_global(setup(), "3.9", "3.12", "3.9");
  int done = 0;
  /* every one of the first 40, then a sample (the directory listings allocate per
   * entry, thousands in all): the whole sweep would take a minute */
  for (long k = 0; k < 100000 && !done; k += k < 40 ? 1 : k / 6) {
    pyhost__alloc_fail_after(k);
    int rc = pyhost_discover(NULL, NULL, NULL);
    long failed = pyhost__alloc_fail_after(-1);
    if (!failed) {
      CHECK_RC(rc, PYHOST_OK);
      done = 1;
    } else if (rc != PYHOST_NOMEM && rc != PYHOST_OK && rc != PYHOST_NOTFOUND) {
      fprintf(stderr, "allocation %ld failing gave %s\n", k, pyhost_status_name(rc));
      check_failures++;
    }
  }
  CHECK(done);
  pyhost_library_info *in = (pyhost_library_info *)1;
  pyhost__alloc_fail_after(0);
  CHECK_RC(pyhost_inspect_library("/nonexistent", &in), PYHOST_NOMEM);
  pyhost__alloc_fail_after(-1);
  CHECK(in == NULL);
}

TEST_CASE(isolate_env_out_of_memory) {
  setup();
  setenv("PYTHONPATH", "/somewhere", 1);
  setenv("PYTHONSTARTUP", "/startup.py", 1);
  struct pyhost__env_saved *saved = NULL;
  pyhost__alloc_fail_after(1); /* the token, then no copy of a variable */
  CHECK(pyhost__sys_env_isolate(&saved, "/nowhere") == -1);
  pyhost__alloc_fail_after(-1);
  /* nothing was changed, and restoring puts nothing wrong back */
  CHECK_STREQ(getenv("PYTHONPATH"), "/somewhere");
  pyhost__sys_env_restore(saved);
  CHECK_STREQ(getenv("PYTHONPATH"), "/somewhere");
  CHECK_STREQ(getenv("PYTHONSTARTUP"), "/startup.py");
  CHECK(getenv("PYTHONNOUSERSITE") == NULL);
  /* and the normal round trip */
  CHECK(pyhost__sys_env_isolate(&saved, "/nowhere") == 0);
  CHECK(getenv("PYTHONPATH") == NULL);
  CHECK_STREQ(getenv("PYTHONNOUSERSITE"), "1");
  CHECK_STREQ(getenv("PYTHONUSERBASE"), "/nowhere");
  pyhost__sys_env_restore(saved);
  CHECK_STREQ(getenv("PYTHONPATH"), "/somewhere");
  CHECK(getenv("PYTHONUSERBASE") == NULL);
}

/* The loader's own directories: ld.so.conf and the files it includes. */
TEST_CASE(ld_so_conf_directories) {
  const char *t = setup();
  char v39[PATHBUF], v310[PATHBUF], file[PATHBUF], text[PATHBUF];
  pyenv_version("3.9", v39, sizeof v39);
  pyenv_version("3.10", v310, sizeof v310);
  sh("mkdir -p %s/conf.d %s/libs %s/other && ln -s %s/lib/libpython3.9.so.1.0 %s/libs/ && "
     "ln -s %s/lib/libpython3.10.so.1.0 %s/other/",
     t, t, t, v39, t, v310, t);
  fmtbuf(file, sizeof file, "%s/ld.so.conf", t);
  write_file(file, "# the top file\ninclude conf.d/*.conf\n", 0644);
  fmtbuf(text, sizeof text, "  %s/libs   # trailing comment\n\n", t);
  fmtbuf(file, sizeof file, "%s/conf.d/a.conf", t);
  write_file(file, text, 0644);
  fmtbuf(text, sizeof text, "%s/other\n", t);
  fmtbuf(file, sizeof file, "%s/conf.d/b.txt", t); /* not *.conf: not read */
  write_file(file, text, 0644);
  fmtbuf(file, sizeof file, "%s/ld.so.conf", t);
  pyhost__sys_ld_conf = file;
  only_path("/nonexistent");
  setenv("PYENV_ROOT", t, 1);
  discover(NULL);
  const struct seen_one *a = find("libpython3.9.so");
  CHECK(a && !strcmp(a->source, "standard location"));
  CHECK(find("libpython3.10.so") == NULL);
}

/* ---- the subprocess fallback's runner ---- */

TEST_CASE(run_interpreter_outcomes) {
  char out[256], err[256];
  const char *echo[] = {"/bin/sh", "-c", "echo answer; exit 3", NULL};
  CHECK(pyhost__sys_run(echo, 10000, out, sizeof out, err, sizeof err) == 3);
  CHECK_STREQ(out, "answer\n");
  const char *missing[] = {"/nonexistent/python3", NULL};
  CHECK(pyhost__sys_run(missing, 10000, out, sizeof out, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "cannot run /nonexistent/python3");
  const char *killed[] = {"/bin/sh", "-c", "kill -9 $$", NULL};
  CHECK(pyhost__sys_run(killed, 10000, out, sizeof out, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "killed by signal 9");
  /* a hanging interpreter is given up on (50 times the limit would not be enough) */
  const char *hangs[] = {"/bin/sh", "-c", "exec sleep 30", NULL};
  CHECK(pyhost__sys_run(hangs, 100, out, sizeof out, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "did not answer within 100 ms");
  /* more output than fits is cut, never overflowing */
  const char *chatty[] = {"/bin/sh", "-c", "i=0; while [ $i -lt 200 ]; do echo 0123456789; i=$((i+1)); done", NULL};
  CHECK(pyhost__sys_run(chatty, 10000, out, sizeof out, err, sizeof err) == 0);
  CHECK(strlen(out) == sizeof out - 1);
}

/* ---- ELF files that lie ---- */

TEST_CASE(hostile_elf_headers) {
  const char *t = setup();
  unsigned char hdr[64] = {0};
  FILE *self = fopen("/proc/self/exe", "rb");
  CHECK(self && fread(hdr, 1, sizeof hdr, self) == sizeof hdr);
  if (self) fclose(self);
  struct { const char *name; int at, value; } lies[] = {
      {"phoff_beyond_eof", 32, 0x7f}, /* program headers far past the end */
      {"phnum_huge", 56, 0xff},       /* 65k program headers */
      {"phentsize_small", 54, 4},     /* entries too small to read */
      {"class_bogus", 4, 9}};
  for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
    unsigned char copy[64];
    memcpy(copy, hdr, sizeof copy);
    copy[lies[i].at] = (unsigned char)lies[i].value;
    if (lies[i].at == 56) copy[57] = 0xff;
    char path[PATHBUF];
    fmtbuf(path, sizeof path, "%s/%s", t, lies[i].name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(copy, 1, sizeof copy, f) == sizeof copy);
    if (f) fclose(f);
    struct pyhost__elf e;
    CHECK(pyhost__elf_read(path, &e) == 0);
    CHECK(!e.needed_python[0] && !e.runpath[0]);
    CHECK(e.is_elf == (lies[i].at != 4));
  }
  /* a real interpreter, for contrast: its libpython and RUNPATH are read */
  char v[PATHBUF], exe[PATHBUF];
  pyenv_version("3.12", v, sizeof v);
  fmtbuf(exe, sizeof exe, "%s/bin/python3.12", v);
  struct pyhost__elf e;
  CHECK(pyhost__elf_read(exe, &e) == 0);
  CHECK_STREQ(e.needed_python, "libpython3.12.so.1.0");
  CHECK(e.dynamic && e.is_elf && !e.is_script);
  CHECK(pyhost__elf_read("/nonexistent", &e) == -1);
}

/* ---- the tools' pins, read as the tools read them (src/discovery/pins.c) ---- */

#include "tools.h"

TEST_CASE(version_requests) {
  struct { const char *text; int ok; unsigned major, minor; int patch, ft, dbg; } cases[] = {
      {"3.12", 0, 3, 12, -1, 0, 0},          {"3.12.7", 0, 3, 12, 7, 0, 0},
      {"3", 0, 3, 0, -1, 0, 0},              {"cpython@3.12", 0, 3, 12, -1, 0, 0},
      {"CPython@3.11.2", 0, 3, 11, 2, 0, 0}, {"cp312", 0, 3, 12, -1, 0, 0},
      {"cpython3.12", 0, 3, 12, -1, 0, 0},   {"3.13t", 0, 3, 13, -1, 1, 0},
      {"3.12.0d", 0, 3, 12, 0, 0, 1},        {"3.13+freethreaded", 0, 3, 13, -1, 1, 0},
      {"3.14+debug", 0, 3, 14, -1, 0, 1},    {"3.15.0a5", 0, 3, 15, 0, 0, 0},
      {"cpython-3.12.7-linux-x86_64-gnu", 0, 3, 12, 7, 0, 0},
      {"cpython-3.13.0+freethreaded-linux-x86_64-gnu", 0, 3, 13, 0, 1, 0},
      {"latest", 0, 3, 0, -1, 0, 0},         {">=3.12,<3.13", -1, 0, 0, 0, 0, 0},
      {"pypy@3.10", -1, 0, 0, 0, 0, 0},      {"/usr/bin/python3", -1, 0, 0, 0, 0, 0},
      {"system", -1, 0, 0, 0, 0, 0},         {"3.12.7-linux", -1, 0, 0, 0, 0, 0},
      {"3.12+sparkly", -1, 0, 0, 0, 0, 0},   {"", -1, 0, 0, 0, 0, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct pyhost__request r;
    int rc = pyhost__parse_request(cases[i].text, &r);
    int good = rc == cases[i].ok;
    if (good && !rc)
      good = r.major == cases[i].major && r.minor == cases[i].minor && r.patch == cases[i].patch &&
             r.freethreaded == cases[i].ft && r.debug == cases[i].dbg;
    if (!good) {
      fprintf(stderr, "request \"%s\": rc %d, %u.%u.%d t%d d%d\n", cases[i].text, rc, r.major, r.minor, r.patch,
              r.freethreaded, r.debug);
      check_failures++;
    }
  }
  struct pyhost__request r;
  CHECK(pyhost__parse_request("3.12", &r) == 0);
  CHECK(pyhost__request_matches(&r, 3, 12, 7, 0, 0));
  CHECK(!pyhost__request_matches(&r, 3, 12, 7, 1, 0)); /* 3.12 is not 3.12t */
  CHECK(!pyhost__request_matches(&r, 3, 11, 7, 0, 0));
}

/* Pin files that are odd or hostile: no newline, only comments, a directory where a
 * file should be, a line longer than any buffer, TOML without the value, a list that
 * never closes.  Each gives a clean answer (or none), never a crash or a loop. */
TEST_CASE(odd_pin_files) {
  const char *t = setup();
  char dir[PATHBUF], file[PATHBUF];
  fmtbuf(dir, sizeof dir, "%s/a/b/c", t);
  sh("mkdir -p %s", dir);
  CHECK(chdir(dir) == 0);
  setenv("HOME", t, 1);
  setenv("XDG_CONFIG_HOME", t, 1);
  unsetenv("MISE_CONFIG_DIR");
  struct pyhost__pin pin;
  /* a directory named .python-version is no pin; an only-comments file neither */
  fmtbuf(file, sizeof file, "%s/a/b/c/.python-version", t);
  sh("mkdir -p %s", file);
  fmtbuf(file, sizeof file, "%s/a/b/.python-version", t);
  write_file(file, "# nothing\n\n   \n#3.12\n", 0644);
  CHECK(pyhost__uv_pin(&pin) == -1);
  /* no final newline, CRLF, leading blanks */
  fmtbuf(file, sizeof file, "%s/a/.python-version", t);
  write_file(file, "  3.11\r\n3.10", 0644);
  CHECK(pyhost__uv_pin(&pin) == 0);
  CHECK_STREQ(pin.versions, "3.11");
  CHECK_CONTAINS(pin.origin, "/a/.python-version");
  /* a line far longer than the buffers: cut, never overflowing */
  char *big = malloc(100000);
  memset(big, '7', 99998);
  big[99998] = '\n';
  big[99999] = '\0';
  write_file(file, big, 0644);
  CHECK(pyhost__uv_pin(&pin) == 0);
  CHECK(strlen(pin.versions) < sizeof pin.versions);
  free(big);
  /* .tool-versions: python only on a later line, with a comment; none at all */
  fmtbuf(file, sizeof file, "%s/a/b/.tool-versions", t);
  write_file(file, "nodejs 20\n# python 2.7\npythonista 1\npython\t3.12.1  3.11.0 # pinned\n", 0644);
  CHECK(pyhost__asdf_pin(&pin) == 0);
  CHECK_STREQ(pin.versions, "3.12.1 3.11.0");
  write_file(file, "python\n", 0644);
  CHECK(pyhost__asdf_pin(&pin) == -1);
  /* mise.toml: the value missing, an unclosed list, another table's python key */
  fmtbuf(file, sizeof file, "%s/a/b/c/mise.toml", t);
  write_file(file, "[env]\npython = \"9.9\"\n[tools]\npython =\n", 0644);
  CHECK(pyhost__mise_pin(&pin) == -1);
  write_file(file, "[tools]\npython = [\"3.13\", \"3.9\n", 0644);
  CHECK(pyhost__mise_pin(&pin) == 0);
  CHECK_STREQ(pin.versions, "3.13");
  write_file(file, "[env]\npython = \"9.9\"\n[tools]\n\"python\" = { version = \"3.12\", virtualenv = \".venv\" }\n", 0644);
  CHECK(pyhost__mise_pin(&pin) == 0);
  CHECK_STREQ(pin.versions, "3.12");
  /* mise reads .tool-versions too, in the same walk upwards */
  write_file(file, "[tools]\nnode = \"22\"\n", 0644);
  fmtbuf(file, sizeof file, "%s/a/b/.tool-versions", t);
  write_file(file, "python 3.10.4\n", 0644);
  CHECK(pyhost__mise_pin(&pin) == 0);
  CHECK_STREQ(pin.versions, "3.10.4");
  CHECK_CONTAINS(pin.origin, "/a/b/.tool-versions");
}

/* pyhost_init's "no usable Python" message names each candidate by its interpreter when
 * it has one, however short the name (a one-letter relative name included), else by
 * its library. */
TEST_CASE(refusal_names_a_one_letter_interpreter) {
  setup();
  pyhost_config *cfg = pyhost_config_new();
  CHECK_RC(pyhost_config_set_interpreter(cfg, "q"), PYHOST_OK);
  pyhost_config_set_no_subprocess(cfg, 1);
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  CHECK_RC(rc, PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), " q: ");
  pyhost_free(h);
}
