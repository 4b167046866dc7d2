/* test_discover_tools.c: discovery of the Pythons uv, python-build-standalone, conda,
 * pixi, mise and asdf install (docs/discovery.md), on every Python of the matrix.
 * Arguments: CASE LIB VERSION STATIC_PYTHON_FIXTURE.
 *
 * Each case builds the tool's folders in its own temporary directory from the Python
 * under test: its library hard-linked into the layout's lib/ (so that the library's
 * real path is inside the layout, as it is in a real installation), its standard
 * library entries linked one by one into lib/python3.X/ with fresh, empty
 * site-packages, and the tool's marker files written as the tool writes them (each
 * format's source is named where it is written).  Then discovery must find the layout,
 * take it in the documented order, and Python must start on the layout's own prefix,
 * standard library and site-packages; broken and static layouts are refused with
 * their reason. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "discover_util.h"

#include <sys/stat.h>
#include <unistd.h>

/* ---- the Python under test ---- */

static struct {
  char lib[PATHBUF], libname[256], stdlib[PATHBUF], exe[PATHBUF], xy[16], xyz[32];
  unsigned minor;
  int debug;
} py;

static const char *const tool_vars[] = {
    "PYHOST_PYTHON_LIBRARY", "PYHOST_PYTHON", "VIRTUAL_ENV", "PYENV_VERSION", "PYENV_DIR",
    "PYTHONHOME", "PYTHONPATH", "LD_LIBRARY_PATH", "UV_PYTHON_INSTALL_DIR", "UV_PYTHON",
    "XDG_DATA_HOME", "XDG_CONFIG_HOME", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE",
    "MAMBA_ROOT_PREFIX", "PIXI_PROJECT_ROOT", "PIXI_ENVIRONMENT_NAME", "MISE_DATA_DIR",
    "MISE_CONFIG_DIR", "MISE_PYTHON_VERSION", "ASDF_DATA_DIR", "ASDF_PYTHON_VERSION", NULL};

/* A fresh temporary directory, the Python under test examined, and an environment in
 * which only what the case builds is found: no tool's variables, HOME inside tmp, no
 * PATH. */
static const char *setup(void) {
  const char *tmp = make_tmp("pyhost-tools", tool_vars);
  char dir[PATHBUF];
  fmtbuf(dir, sizeof dir, "%s/home", tmp);
  sh("mkdir -p %s", dir);
  setenv("HOME", dir, 1);
  setenv("PYENV_ROOT", dir, 1); /* no versions/ there */
  setenv("PATH", "/nonexistent", 1);
  CHECK(chdir(dir) == 0);

  pyhost_library_info *in = NULL;
  if (pyhost_inspect_library(check_lib, &in) != PYHOST_OK || !in->home[0]) {
    fprintf(stderr, "cannot examine %s\n", check_lib);
    exit(1);
  }
  fmtbuf(py.lib, sizeof py.lib, "%s", in->real_path);
  fmtbuf(py.libname, sizeof py.libname, "%s", strrchr(in->real_path, '/') + 1);
  py.minor = (unsigned)((in->hexversion >> 16) & 0xFF);
  py.debug = in->debug;
  fmtbuf(py.xy, sizeof py.xy, "3.%u", py.minor);
  fmtbuf(py.xyz, sizeof py.xyz, "3.%u.%lu", py.minor, (in->hexversion >> 8) & 0xFF);
  fmtbuf(py.stdlib, sizeof py.stdlib, "%s/lib/python%s", in->home, py.xy);
  fmtbuf(py.exe, sizeof py.exe, "%s/bin/python%s", in->home, py.xy);
  if (access(py.exe, X_OK) != 0) py.exe[0] = '\0';
  pyhost_library_info_free(in);
  return tmp;
}

/* An installation of the Python under test at prefix, with WHERE = where in a package
 * of its own site-packages (and Debian's dist-packages, which Debian's site.py reads
 * instead). */
static void install_at(const char *prefix, const char *where) {
  sh("mkdir -p '%s/lib/python%s' '%s/bin' '%s/lib/python3/dist-packages'", prefix, py.xy, prefix, prefix);
  /* a hard link keeps the library's real path inside the layout; copy across devices */
  sh("ln '%s' '%s/lib/%s' 2>/dev/null || cp '%s' '%s/lib/%s'", py.lib, prefix, py.libname, py.lib, prefix, py.libname);
  sh("for f in '%s'/*; do case \"${f##*/}\" in site-packages|dist-packages) ;; *) ln -s \"$f\" '%s/lib/python%s/';; esac; done",
     py.stdlib, prefix, py.xy);
  if (py.exe[0]) sh("ln -s '%s' '%s/bin/python%s' && ln -s 'python%s' '%s/bin/python3'", py.exe, prefix, py.xy, py.xy, prefix);
  char text[256];
  fmtbuf(text, sizeof text, "WHERE = '%s'\n", where);
  static const char *const sites[] = {"lib/python%s/site-packages", "lib/python3/dist-packages"};
  for (int i = 0; i < 2; i++) {
    char dir[PATHBUF], sub[64], file[PATHBUF];
    fmtbuf(sub, sizeof sub, sites[i], py.xy);
    fmtbuf(dir, sizeof dir, "%s/%s/pyhost_layout_pkg", prefix, sub);
    sh("mkdir -p '%s'", dir);
    fmtbuf(file, sizeof file, "%s/__init__.py", dir);
    write_file(file, text, 0644);
  }
}

/* A statically linked build at prefix: bin/python3.12 needs no libpython, lib/ has none. */
static void static_at(const char *prefix) {
  sh("mkdir -p '%s/bin' '%s/lib/python3.12/encodings' && cp '%s' '%s/bin/python3.12'", prefix, prefix, check_arg4, prefix);
}

/* ---- what discovery reports ---- */

/* Runs discovery with the policy the case needs (this Python's version; its debug
 * build allowed); returns the status. */
static int discover(void) {
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, py.minor));
  pyhost_config_set_allow_debug(cfg, py.debug);
  int rc = record_discovery(cfg);
  pyhost_config_free(cfg);
  return rc;
}

static const struct seen_one *find(const char *source, const char *needle) { return find_in(source, needle); }

static void expect(const char *source, const char *needle, const char *code, const char *in_reason) {
  const struct seen_one *c = find(source, needle);
  if (!c || strcmp(c->code, code) != 0 || (in_reason && !strstr(c->reason, in_reason))) {
    fprintf(stderr, "expected a %s candidate%s%s with %s%s%s; got:\n", source, needle ? " at " : "",
            needle ? needle : "", code, in_reason ? " mentioning " : "", in_reason ? in_reason : "");
    dump();
    check_failures++;
  }
}

static void eval_is(pyhost *h, const char *expr, const char *want) {
  pyhost_value *v = NULL;
  const char *s = NULL;
  CHECK_RC(pyhost_eval(h, expr, &v), PYHOST_OK);
  if (v && pyhost_value_to_str(h, v, &s, NULL) == PYHOST_OK) {
    if (strcmp(s, want) != 0) {
      fprintf(stderr, "%s: \"%s\", expected \"%s\"\n", expr, s, want);
      check_failures++;
    }
  } else {
    fprintf(stderr, "%s failed: %s\n", expr, pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
}

/* pyhost_init with the same policy starts the taken candidate, on the layout at prefix:
 * sys.prefix, the standard library's os module and the site package all come from it. */
static void starts_on(const char *prefix, const char *where) {
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_python_minor(cfg, PYHOST_PY(3, py.minor));
  pyhost_config_set_allow_debug(cfg, py.debug);
  pyhost *h = start_or_fail(cfg);
  if (!h) return;
  CHECK_CONTAINS(pyhost_library_path(h), prefix);
  eval_is(h, "__import__('sys').prefix", prefix);
  char expr[PATHBUF];
  fmtbuf(expr, sizeof expr, "str(__import__('os').__file__.startswith(%s))", "__import__('sys').prefix + '/lib/'");
  eval_is(h, expr, "True");
  eval_is(h, "__import__('pyhost_layout_pkg').WHERE", where);
  fmtbuf(expr, sizeof expr, "'%%d.%%d' %% __import__('sys').version_info[:2]");
  eval_is(h, expr, py.xy);
  pyhost_free(h);
}

/* ---- uv ---- */

/* uv's managed installations (docs.astral.sh/uv/concepts/python-versions): folders
 * named cpython-<version>-<os>-<arch>-<libc>, plus, from uv 0.8, a minor-version link
 * cpython-3.X-<os>-<arch>-<libc> and uv's own .lock file and .cache folder. */
static void uv_folder(const char *dir) {
  char prefix[PATHBUF];
  fmtbuf(prefix, sizeof prefix, "%s/cpython-%s-linux-x86_64-gnu", dir, py.xyz);
  install_at(prefix, "uv");
  sh("cd '%s' && ln -s 'cpython-%s-linux-x86_64-gnu' 'cpython-%s-linux-x86_64-gnu' && : > .lock && mkdir .cache",
     dir, py.xyz, py.xy);
}

TEST_CASE(uv_pin_from_python_version_file) {
  const char *t = setup();
  char uv[PATHBUF], project[PATHBUF], file[PATHBUF], text[256], prefix[PATHBUF];
  fmtbuf(uv, sizeof uv, "%s/uvpython", t);
  uv_folder(uv);
  setenv("UV_PYTHON_INSTALL_DIR", uv, 1);
  /* `uv python pin 3.X` writes "3.X\n" (version_files.rs write); a comment line is
   * skipped as uv skips it.  The pin in a parent of the current directory counts. */
  fmtbuf(project, sizeof project, "%s/project", t);
  sh("mkdir -p '%s/src/deep'", project);
  fmtbuf(file, sizeof file, "%s/.python-version", project);
  fmtbuf(text, sizeof text, "# pinned by the test\n\n%s\n", py.xy);
  write_file(file, text, 0644);
  fmtbuf(file, sizeof file, "%s/src/deep", project);
  CHECK(chdir(file) == 0);
  /* python3 on PATH is another Python: the pin comes first */
  setenv("PATH", "/usr/bin:/bin", 1);
  fmtbuf(prefix, sizeof prefix, "%s/cpython-%s-linux-x86_64-gnu", uv, py.xyz);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "uv pin");
  CHECK_CONTAINS(taken()->library, prefix);
  CHECK_CONTAINS(taken()->how, ".python-version");
  starts_on(prefix, "uv");

  /* UV_PYTHON wins over the file, in uv's request forms */
  setenv("UV_PYTHON", "cpython@3.99", 1);
  discover();
  expect("uv pin", "UV_PYTHON", "missing", "uv python install");
  fmtbuf(text, sizeof text, "cpython@%s", py.xy);
  setenv("UV_PYTHON", text, 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "uv pin");
  CHECK_CONTAINS(taken()->how, "UV_PYTHON");
  setenv("UV_PYTHON", ">=3.8", 1); /* a specifier: not matched, said so */
  discover();
  expect("uv pin", "UV_PYTHON", "unresolved", "not a version pyhost can match");
  unsetenv("UV_PYTHON");

  /* .python-versions lists several; the first installed one is taken */
  fmtbuf(file, sizeof file, "%s/.python-version", project);
  unlink(file);
  fmtbuf(file, sizeof file, "%s/.python-versions", project);
  fmtbuf(text, sizeof text, "3.98\n%s\n", py.xy);
  write_file(file, text, 0644);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "uv pin");
  CHECK_CONTAINS(taken()->how, ".python-versions");
  expect("uv pin", ".python-versions", "missing", "3.98");
}

TEST_CASE(uv_managed_folder) {
  const char *t = setup();
  char data[PATHBUF], uv[PATHBUF], prefix[PATHBUF];
  /* uv's default: $XDG_DATA_HOME/uv/python (docs.astral.sh/uv/reference/storage) */
  fmtbuf(data, sizeof data, "%s/xdg", t);
  fmtbuf(uv, sizeof uv, "%s/uv/python", data);
  uv_folder(uv);
  fmtbuf(prefix, sizeof prefix, "%s/cpython-3.12.4-linux-x86_64-musl", uv);
  static_at(prefix); /* python-build-standalone's musl builds are static */
  fmtbuf(prefix, sizeof prefix, "%s/cpython-3.10.99-linux-x86_64-gnu", uv);
  sh("mkdir -p '%s/lib'", prefix); /* an interrupted install: nothing in it */
  setenv("XDG_DATA_HOME", data, 1);
  fmtbuf(prefix, sizeof prefix, "%s/cpython-%s-linux-x86_64-gnu", uv, py.xyz);
  discover();
  const struct seen_one *c = find("uv", prefix);
  CHECK(c != NULL);
  int links = 0;
  for (int i = 0; i < n_seen; i++) links += strstr(seen[i].library, uv) != NULL;
  CHECK(links == 1); /* the minor-version link is the same installation */
  if (c) CHECK_CONTAINS(c->how, py.xyz); /* named by the installation, not the link */
  expect("uv", "musl", "no-shared-library", "musl build of python-build-standalone");
  expect("uv", "cpython-3.10.99-", "missing", "no libpython");
  /* in the documented order: a standard location of the same version comes first (the
   * standard places, then pyenv, uv, mise, asdf); otherwise uv's is taken */
  const struct seen_one *std = find("standard location", NULL);
  if (std && (!strcmp(std->code, "taken") || !strcmp(std->code, "acceptable")) && c) {
    CHECK(std < c);
    CHECK_STREQ(c->code, "acceptable");
  } else if (c) {
    CHECK_STREQ(c->code, "taken");
    starts_on(prefix, "uv");
  }
  /* the same folder under ~/.local/share when XDG_DATA_HOME is unset */
  unsetenv("XDG_DATA_HOME");
  char home_data[PATHBUF];
  fmtbuf(home_data, sizeof home_data, "%s/home/.local/share", t);
  sh("mkdir -p '%s' && mv '%s/uv' '%s/'", home_data, data, home_data);
  discover();
  CHECK(find("uv", "/home/.local/share/uv/python/cpython-") != NULL);
}

/* ---- python-build-standalone ---- */

/* A full archive (docs/distributions.rst): python/PYTHON.json beside python/install/.
 * Format 5 names the link mode "link_mode"; later formats "libpython_link_mode" (the
 * key PyOxidizer's parse_python_json reads). */
static void pbs_full(const char *top, int format, const char *link_mode) {
  char file[PATHBUF], text[512];
  sh("mkdir -p '%s/python/build'", top);
  fmtbuf(file, sizeof file, "%s/python/PYTHON.json", top);
  fmtbuf(text, sizeof text,
         "{\"version\": \"%d\", \"target_triple\": \"x86_64-unknown-linux-gnu\", \"python_tag\": \"cp3%u\", "
         "\"python_version\": \"%s\", \"python_exe\": \"install/bin/python%s\", \"%s\": \"%s\"}\n",
         format, py.minor, py.xyz, py.xy, format > 5 ? "libpython_link_mode" : "link_mode", link_mode);
  write_file(file, text, 0644);
}

TEST_CASE(pbs_full_archive_layouts) {
  const char *t = setup();
  char top[PATHBUF], lib[PATHBUF], install[PATHBUF];
  fmtbuf(top, sizeof top, "%s/app", t);
  pbs_full(top, 5, "shared");
  fmtbuf(install, sizeof install, "%s/python/install", top);
  install_at(install, "bundled");
  /* an application names the bundled library: its home is python/install */
  fmtbuf(lib, sizeof lib, "%s/lib/%s", install, py.libname);
  setenv("PYHOST_PYTHON_LIBRARY", lib, 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->library, lib);
  starts_on(install, "bundled");
  pyhost_library_info *in = NULL;
  CHECK_RC(pyhost_inspect_library(lib, &in), PYHOST_OK);
  if (in) CHECK_CONTAINS(in->tool, "python-build-standalone");
  pyhost_library_info_free(in);
}

/* A static full archive: PYTHON.json says link_mode static, and there is no library;
 * named by its interpreter, it is refused with that reason, not "not found". */
TEST_CASE(pbs_static_build_refused) {
  const char *t = setup();
  char stop[PATHBUF], exe[PATHBUF], install[PATHBUF];
  fmtbuf(stop, sizeof stop, "%s/static", t);
  pbs_full(stop, 8, "static");
  fmtbuf(install, sizeof install, "%s/python/install", stop);
  static_at(install);
  fmtbuf(exe, sizeof exe, "%s/bin/python3.12", install);
  setenv("PYHOST_PYTHON", exe, 1);
  CHECK_RC(discover(), PYHOST_NOTFOUND);
  expect("PYHOST_PYTHON", exe, "no-shared-library", "libpython link mode static");
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_NOTFOUND);
  CHECK_CONTAINS(pyhost_errmsg(h), "statically linked python-build-standalone build");
  pyhost_free(h);
}

/* ---- conda, mamba, pixi ---- */

/* A conda environment as conda writes it: conda-meta/history (one block per
 * transaction: "==> date <==", "# cmd: ...", "+channel::package-version-build") and a
 * package record; conda's base installation also has condabin/conda. */
static void conda_env(const char *prefix, const char *where, int base) {
  char file[PATHBUF], text[1024];
  install_at(prefix, where);
  sh("mkdir -p '%s/conda-meta'", prefix);
  fmtbuf(file, sizeof file, "%s/conda-meta/history", prefix);
  fmtbuf(text, sizeof text,
         "==> 2024-05-01 10:00:00 <==\n# cmd: /opt/conda/bin/conda create -n app python=%s\n"
         "# conda version: 24.3.0\n+conda-forge/linux-64::python-%s-hab00c5b_0_cpython\n",
         py.xy, py.xyz);
  write_file(file, text, 0644);
  fmtbuf(file, sizeof file, "%s/conda-meta/python-%s-hab00c5b_0_cpython.json", prefix, py.xyz);
  fmtbuf(text, sizeof text, "{\"name\": \"python\", \"version\": \"%s\", \"build\": \"hab00c5b_0_cpython\"}\n", py.xyz);
  write_file(file, text, 0644);
  if (base) sh("mkdir -p '%s/condabin' && : > '%s/condabin/conda' && chmod +x '%s/condabin/conda' && ln -s ../condabin/conda '%s/bin/conda'",
               prefix, prefix, prefix, prefix);
}

TEST_CASE(conda_environment_and_base) {
  const char *t = setup();
  char base[PATHBUF], env[PATHBUF], exe[PATHBUF];
  fmtbuf(base, sizeof base, "%s/home/miniforge3", t);
  fmtbuf(env, sizeof env, "%s/envs/app", base);
  conda_env(base, "conda-base", 1);
  conda_env(env, "conda-env", 0);
  /* `conda activate app`: CONDA_PREFIX, CONDA_DEFAULT_ENV, CONDA_EXE; python3 on PATH
   * is another Python, which the activated environment comes before */
  setenv("CONDA_PREFIX", env, 1);
  setenv("CONDA_DEFAULT_ENV", "app", 1);
  fmtbuf(exe, sizeof exe, "%s/bin/conda", base);
  setenv("CONDA_EXE", exe, 1);
  setenv("PATH", "/usr/bin:/bin", 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "CONDA_PREFIX");
  CHECK_STREQ(taken()->kind, "conda env");
  CHECK_STREQ(taken()->venv, env);
  CHECK(find("conda base", NULL) == NULL); /* an environment is active */
  starts_on(env, "conda-env");
  pyhost_library_info *in = NULL;
  char lib[PATHBUF];
  fmtbuf(lib, sizeof lib, "%s/lib/%s", env, py.libname);
  CHECK_RC(pyhost_inspect_library(lib, &in), PYHOST_OK);
  if (in) CHECK_CONTAINS(in->tool, "conda (environment");
  pyhost_library_info_free(in);
}

TEST_CASE(conda_base_only_when_nothing_is_active) {
  const char *t = setup();
  char base[PATHBUF], exe[PATHBUF], venv[PATHBUF];
  fmtbuf(base, sizeof base, "%s/opt/mc", t);
  conda_env(base, "conda-base", 1);
  fmtbuf(exe, sizeof exe, "%s/condabin/conda", base);
  setenv("CONDA_EXE", exe, 1); /* what `conda init` exports in every shell */
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "conda base");
  starts_on(base, "conda-base");
  /* `conda activate base` is not an environment of its own: still the base source */
  setenv("CONDA_PREFIX", base, 1);
  setenv("CONDA_DEFAULT_ENV", "base", 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "conda base");
  CHECK(find("CONDA_PREFIX", NULL) == NULL);
  /* with a venv active, the base is not a candidate at all */
  fmtbuf(venv, sizeof venv, "%s/venv", t);
  setenv("VIRTUAL_ENV", venv, 1);
  discover();
  CHECK(find("conda base", NULL) == NULL);
  unsetenv("VIRTUAL_ENV");
  /* an activated prefix that is no conda environment is refused, naming why */
  unsetenv("CONDA_DEFAULT_ENV");
  setenv("CONDA_PREFIX", t, 1);
  discover();
  expect("CONDA_PREFIX", t, "missing", "no conda-meta");
}

TEST_CASE(pixi_environment) {
  const char *t = setup();
  char ws[PATHBUF], prefix[PATHBUF], file[PATHBUF], text[1024];
  fmtbuf(ws, sizeof ws, "%s/workspace", t);
  fmtbuf(prefix, sizeof prefix, "%s/.pixi/envs/default", ws);
  conda_env(prefix, "pixi", 0);
  /* pixi writes conda-meta/pixi into each environment (pixi docs, Environments:
   * "Environment Installation Metadata") */
  fmtbuf(file, sizeof file, "%s/conda-meta/pixi", prefix);
  fmtbuf(text, sizeof text,
         "{\n  \"manifest_path\": \"%s/pixi.toml\",\n  \"environment_name\": \"default\",\n"
         "  \"pixi_version\": \"0.34.0\",\n  \"environment_lock_file_hash\": \"4f36ee620f10329d\"\n}\n", ws);
  write_file(file, text, 0644);
  fmtbuf(file, sizeof file, "%s/pixi.toml", ws);
  write_file(file, "[workspace]\nname = \"demo\"\nchannels = [\"conda-forge\"]\nplatforms = [\"linux-64\"]\n", 0644);
  /* `pixi shell` / `pixi run` set both (pixi docs, Environment Variables) */
  setenv("PIXI_PROJECT_ROOT", ws, 1);
  setenv("CONDA_PREFIX", prefix, 1);
  setenv("CONDA_DEFAULT_ENV", "demo", 1);
  setenv("PATH", "/usr/bin:/bin", 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "pixi");
  CHECK_STREQ(taken()->kind, "pixi env");
  CHECK(find("CONDA_PREFIX", NULL) == NULL); /* the same environment, once */
  starts_on(prefix, "pixi");
  pyhost_library_info *in = NULL;
  fmtbuf(file, sizeof file, "%s/lib/%s", prefix, py.libname);
  CHECK_RC(pyhost_inspect_library(file, &in), PYHOST_OK);
  if (in) CHECK_CONTAINS(in->tool, "pixi (environment default");
  pyhost_library_info_free(in);
  /* an environment pixi has not installed yet */
  setenv("PIXI_ENVIRONMENT_NAME", "cuda", 1);
  unsetenv("CONDA_PREFIX");
  discover();
  expect("pixi", "/.pixi/envs/cuda", "missing", "no conda-meta");
}

/* ---- mise and asdf ---- */

/* A case's tree with tool's data folder (data) holding this Python in
 * installs/python/<3.X.Y> (prefix), as both tools lay it out; returns the tree. */
static const char *manager_install(const char *tool, char *data, char *prefix) {
  const char *t = setup();
  fmtbuf(data, PATHBUF, "%s/%s", t, tool);
  fmtbuf(prefix, PATHBUF, "%s/installs/python/%s", data, py.xyz);
  install_at(prefix, tool);
  return t;
}

TEST_CASE(mise_shim_and_installs) {
  char data[PATHBUF], prefix[PATHBUF], proj[PATHBUF], file[PATHBUF], text[512];
  const char *t = manager_install("mise", data, prefix);
  /* mise links the partial version to the full one (installs/python/3.X -> 3.X.Y);
   * its shims are symlinks to the mise binary itself (mise src/shims.rs) */
  sh("cd '%s/installs/python' && ln -s '%s' '%s' && mkdir -p '%s/shims' '%s/bin' && cp /bin/true '%s/bin/mise' && "
     "ln -s '%s/bin/mise' '%s/shims/python3'",
     data, py.xyz, py.xy, data, t, t, t, data);
  setenv("MISE_DATA_DIR", data, 1);
  fmtbuf(file, sizeof file, "%s/misecfg", t);
  setenv("MISE_CONFIG_DIR", file, 1);
  fmtbuf(proj, sizeof proj, "%s/proj", t);
  sh("mkdir -p '%s'", proj);
  fmtbuf(file, sizeof file, "%s/mise.toml", proj);
  fmtbuf(text, sizeof text, "[env]\nFOO = \"bar\"\n\n[tools]\nnode = \"22\"\npython = \"%s\"\n", py.xy);
  write_file(file, text, 0644);
  CHECK(chdir(proj) == 0);
  fmtbuf(file, sizeof file, "%s/shims", data);
  setenv("PATH", file, 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->source, "PATH python3");
  CHECK_STREQ(taken()->kind, "mise shim");
  CHECK_CONTAINS(taken()->library, prefix);
  CHECK_CONTAINS(taken()->how, "mise.toml");
  expect("mise", prefix, "duplicate", NULL); /* and the installs folder lists it too */
  starts_on(prefix, "mise");
  /* the list form; the first version installed is the one */
  fmtbuf(file, sizeof file, "%s/mise.toml", proj);
  fmtbuf(text, sizeof text, "[tools]\npython = [\"%s\", \"3.9\"]\n", py.xyz);
  write_file(file, text, 0644);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->kind, "mise shim");
  /* a version mise does not have */
  setenv("MISE_PYTHON_VERSION", "3.97", 1);
  discover();
  expect("PATH python3", "shims/python3", "missing", "MISE_PYTHON_VERSION");
}

TEST_CASE(asdf_shim_and_installs) {
  char data[PATHBUF], prefix[PATHBUF], proj[PATHBUF], file[PATHBUF], text[512];
  const char *t = manager_install("asdf", data, prefix);
  sh("mkdir -p '%s/shims'", data);
  /* asdf's shim: a bash script with one `# asdf-plugin:` line per providing version
   * and `exec asdf exec "<name>" "$@"` (asdf internal/shims/shims.go) */
  fmtbuf(file, sizeof file, "%s/shims/python3", data);
  fmtbuf(text, sizeof text, "#!/usr/bin/env bash\n# asdf-plugin: python %s\n# asdf-plugin: python 3.12.0\n"
         "exec asdf exec \"python3\" \"$@\"\n", py.xyz);
  write_file(file, text, 0755);
  setenv("ASDF_DATA_DIR", data, 1);
  /* .tool-versions as `asdf set python 3.X.Y` writes it, found from a subfolder */
  fmtbuf(proj, sizeof proj, "%s/proj", t);
  sh("mkdir -p '%s/sub'", proj);
  fmtbuf(file, sizeof file, "%s/.tool-versions", proj);
  fmtbuf(text, sizeof text, "nodejs 22.1.0\npython %s system # the test's pin\n", py.xyz);
  write_file(file, text, 0644);
  fmtbuf(file, sizeof file, "%s/sub", proj);
  CHECK(chdir(file) == 0);
  fmtbuf(file, sizeof file, "%s/shims", data);
  setenv("PATH", file, 1);
  CHECK_RC(discover(), PYHOST_OK);
  CHECK_STREQ(taken()->kind, "asdf shim");
  CHECK_CONTAINS(taken()->library, prefix);
  CHECK_CONTAINS(taken()->how, ".tool-versions");
  starts_on(prefix, "asdf");
  /* asdf-python builds with python-build, without --enable-shared unless asked: such
   * an install is refused as statically linked, and asdf would run it, so nothing
   * later in the pin is taken instead */
  char stat[PATHBUF];
  fmtbuf(stat, sizeof stat, "%s/installs/python/3.12.0", data);
  static_at(stat);
  fmtbuf(file, sizeof file, "%s/.tool-versions", proj);
  fmtbuf(text, sizeof text, "python 3.12.0 %s\n", py.xyz);
  write_file(file, text, 0644);
  discover();
  expect("PATH python3", "shims/python3", "no-shared-library", "statically linked");
  expect("asdf", "3.12.0", "no-shared-library", NULL);
}

/* In a tool's folder of installations, only directories are installations: a file (or
 * a dangling link) named like one is passed over, not listed as a candidate. */
TEST_CASE(uv_folder_file_named_like_an_installation) {
  const char *t = setup();
  char data[PATHBUF], uv[PATHBUF];
  fmtbuf(data, sizeof data, "%s/xdg", t);
  fmtbuf(uv, sizeof uv, "%s/uv/python", data);
  sh("mkdir -p '%s' && echo not-an-install > '%s/cpython-3.11.77-linux-x86_64-gnu' && "
     "ln -s '%s/gone' '%s/cpython-3.11.78-linux-x86_64-gnu'", uv, uv, t, uv);
  setenv("XDG_DATA_HOME", data, 1);
  discover();
  CHECK(find("uv", "cpython-3.11.77") == NULL);
  CHECK(find("uv", "cpython-3.11.78") == NULL);
}
