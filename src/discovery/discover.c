/* discover.c: choosing a Python when the host configured no library (docs/discovery.md,
 * whose table of sources this follows; gather() below adds them in this order):
 *   configured library, PYHOST_PYTHON_LIBRARY   (binding: only it can be taken)
 *   configured interpreter, PYHOST_PYTHON       (binding too)
 *   VIRTUAL_ENV's python; the active pixi environment, CONDA_PREFIX (not a base)
 *   uv's pin (.python-version, as uv reads it)
 *   python3, then python, on PATH (pyenv, mise and asdf shims followed, interp.c)
 *   conda's base installations, only when no environment is active
 *   the standard places, pyenv's versions, the frameworks, then the installations of
 *   uv, mise and asdf: all newest first
 *   PEP 514 registry entries (Windows).
 * Every candidate is judged by the one verdict pyhost_init and pyhost_inspect_library
 * give too (loader/verdict.c): the file, then the library opened with RTLD_LOCAL
 * (nothing in it runs but Py_GetVersion) and closed again, then its home.  What is
 * discovery's own: the order, the binding sources, relative paths and duplicates.  The
 * first acceptable candidate is taken (or the newest, with prefer_newest), and every
 * candidate keeps the reason it was taken or passed over, for pyhost_discover, the
 * init error message and `pyhost --list`.
 */
#include "discovery.h"
#include "interp.h"
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cand {
  const char *source, *kind, *code;
  char interpreter[PYHOST__IPATH], resolved[PYHOST__IPATH], venv[PYHOST__IPATH];
  char program[PYHOST__IPATH], library[PYHOST__IPATH], how[512];
  char reason[sizeof ((struct pyhost__verdict *)0)->reason];
  unsigned long hexversion;
  int free_threaded, debug, taken, binding, exact;
};

struct disc {
  const pyhost_config *cfg;
  struct cand **c;
  size_t n, cap;
  int nomem, binding;   /* binding: index+1 of a configured candidate */
  size_t std_start;     /* first candidate from the standard places */
  const char *place_source;
};

static const char *base_name(const char *path) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') b = p + 1;
  return b;
}

static struct cand *add(struct disc *d, const char *source, const char *kind) {
  if (d->nomem) return NULL;
  if (d->n == d->cap) {
    size_t ncap = d->cap ? d->cap * 2 : 16;
    struct cand **grown = pyhost__realloc(d->c, ncap * sizeof *grown);
    if (!grown) {
      d->nomem = 1;
      return NULL;
    }
    d->c = grown;
    d->cap = ncap;
  }
  struct cand *c = pyhost__calloc(1, sizeof *c);
  if (!c) {
    d->nomem = 1;
    return NULL;
  }
  c->source = source;
  c->kind = kind;
  d->c[d->n++] = c;
  return c;
}

static void reject(struct cand *c, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(PYHOST__PRINTF_DIALECT, 3, 4)))
#endif
    ;
static void reject(struct cand *c, const char *code, const char *fmt, ...) {
  struct pyhost__strbuf sb;
  va_list ap;
  c->code = code;
  pyhost__strbuf_init(&sb, c->reason, sizeof c->reason);
  va_start(ap, fmt);
  pyhost__strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
}

static void *lookup(void *lib, const char *name) {
  return pyhost__dl_sym(lib, name);
}

/* ---- judging one library (verdict.h: the rule is there, not here) ---- */

void pyhost__policy_of(const pyhost_config *cfg, int binding, struct pyhost__policy *pol) {
  pol->min_python = cfg->min_python;
  pol->max_python = cfg->max_python;
  pol->python_minor = cfg->python_minor;
  pol->allow_debug = cfg->allow_debug || binding;
}

static void judged(struct cand *c, const struct pyhost__verdict *v) {
  if (v->status) reject(c, v->code, "%s", v->reason);
}

static void examine_loaded(struct disc *d, struct cand *c) {
  char err[2048];
  struct pyhost__verdict v;
  void *lib = pyhost__dl_open(c->library, 0, err, sizeof err);
  if (!lib) return (void)pyhost__verdict_unloaded(c->library, err, &v), judged(c, &v);
  struct pyhost__policy pol;
  struct pyapi_probe pr;
  struct pyapi *table = pyhost__malloc(sizeof *table);
  if (!table) {
    d->nomem = 1;
    pyhost__dl_close(lib);
    return;
  }
  pyhost__policy_of(d->cfg, c->binding, &pol);
  int rc = pyhost__verdict_library(lookup, lib, &pol, &pr, table, &v);
  pyhost__free(table);
  if (rc != PYHOST_NOTPYTHON) { /* what the library is, not what its name said */
    c->hexversion = pr.hexversion;
    c->free_threaded = pr.free_threaded;
    c->debug = pr.debug;
  }
  if (!rc) {
    unsigned runtime = PYHOST__V(pr.hexversion >> 24, (pr.hexversion >> 16) & 0xFF);
    rc = pyhost__verdict_home(c->library, runtime, NULL, 0, NULL, 0, &v);
  }
  judged(c, &v);
  pyhost__dl_close(lib);
}

static void examine(struct disc *d, struct cand *c, size_t index) {
  if (c->code) return;
  if (!c->library[0]) {
    reject(c, "missing", "no library");
    return;
  }
  if (!pyhost__fs_has_dir(c->library)) {
    /* a bare name from the host or PYHOST_PYTHON_LIBRARY: the loader searches */
    examine_loaded(d, c);
    return;
  }
  if (!pyhost__sys_is_absolute(c->library) && !c->binding) {
    reject(c, "relative-path", "a relative path; pyhost loads only absolute paths it was not given");
    return;
  }
  struct pyhost__verdict v;
  if (pyhost__verdict_file_explained(c->library, &v)) return judged(c, &v);
  char real[PYHOST__IPATH];
  if (pyhost__fs_realpath(c->library, real, sizeof real) == 0)
    pyhost__fmt(c->library, sizeof c->library, "%s", real);
  for (size_t i = 0; i < index; i++) {
    struct cand *o = d->c[i];
    if (strcmp(o->library, c->library) != 0 || (o->code && !strcmp(o->code, "duplicate"))) continue;
    c->hexversion = o->hexversion;
    c->free_threaded = o->free_threaded;
    c->debug = o->debug;
    reject(c, "duplicate", "the same library as #%zu", i + 1);
    return;
  }
  if (pyhost__python_running()) {
    /* a Python already runs here: judge by the name alone rather than open another */
    unsigned major, minor;
    char flags[8];
    if (!pyhost__sys_lib_name(base_name(c->library), &major, &minor, flags, sizeof flags)) {
      reject(c, "unresolved", "not examined while a Python runs in this process");
      return;
    }
    struct pyapi_probe named = {0};
    struct pyhost__policy pol;
    named.hexversion = (unsigned long)major << 24 | (unsigned long)minor << 16;
    named.free_threaded = strchr(flags, 't') != NULL;
    named.debug = strchr(flags, 'd') != NULL;
    named.by_name = 1;
    c->hexversion = named.hexversion;
    c->free_threaded = named.free_threaded;
    c->debug = named.debug;
    pyhost__policy_of(d->cfg, c->binding, &pol);
    pyhost__verdict_build(&named, &pol, &v);
    return judged(c, &v);
  }
  examine_loaded(d, c);
}

/* ---- the sources ---- */

static struct cand *from_library(struct disc *d, const char *source, const char *path, int binding) {
  struct cand *c = add(d, source, "library");
  if (!c) return NULL;
  pyhost__fmt(c->library, sizeof c->library, "%s", path);
  c->binding = binding;
  if (binding && !d->binding) d->binding = (int)d->n;
  return c;
}

static struct cand *from_interpreter(struct disc *d, const char *source, const char *path,
                                     int binding) {
  struct cand *c = add(d, source, "interpreter");
  if (!c) return NULL;
  c->binding = binding;
  if (binding && !d->binding) d->binding = (int)d->n;
  pyhost__fmt(c->interpreter, sizeof c->interpreter, "%s", path);
  struct pyhost__interp *r = pyhost__malloc(sizeof *r);
  if (!r) {
    d->nomem = 1;
    return c;
  }
  int rc = pyhost__interp_resolve(path, !d->cfg->no_subprocess, r);
  static const char *const kinds[] = {"interpreter", "venv", "pyenv shim", "asdf shim", "mise shim", "script"};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (!strcmp(r->kind, kinds[i])) c->kind = kinds[i];
  pyhost__fmt(c->resolved, sizeof c->resolved, "%s", r->resolved);
  pyhost__fmt(c->venv, sizeof c->venv, "%s", r->venv);
  pyhost__fmt(c->program, sizeof c->program, "%s", r->program);
  pyhost__fmt(c->library, sizeof c->library, "%s", r->library);
  pyhost__fmt(c->how, sizeof c->how, "%s", r->how);
  if (r->major) c->hexversion = (unsigned long)r->major << 24 | (unsigned long)r->minor << 16;
  if (rc != 0) reject(c, r->code, "%s", r->reason);
  pyhost__free(r);
  return c;
}

static void on_path(struct disc *d, const char *program, const char *source) {
  char path[PYHOST__IPATH];
  if (pyhost__find_on_path(program, NULL, path, sizeof path) == 0)
    from_interpreter(d, source, path, 0);
}

struct place_ctx {
  struct disc *d;
  const char *dir;
};

static void place_entry(void *ctx, const char *name) {
  struct place_ctx *p = ctx;
  unsigned major, minor;
  char flags[8], path[PYHOST__IPATH], real[PYHOST__IPATH];
  if (!pyhost__sys_lib_name(name, &major, &minor, flags, sizeof flags)) return;
  pyhost__fmt(path, sizeof path, "%s%c%s", p->dir, pyhost__fs_sep, name);
  if (pyhost__fs_realpath(path, real, sizeof real) != 0) return; /* dangling link */
  /* libpython3.11.so and libpython3.11.so.1.0 in one place are one candidate */
  for (size_t i = p->d->std_start; i < p->d->n; i++)
    if (!strcmp(p->d->c[i]->library, real)) return;
  struct cand *c = from_library(p->d, p->d->place_source, real, 0);
  if (c) c->hexversion = (unsigned long)major << 24 | (unsigned long)minor << 16;
}

static void scan_dir(struct disc *d, const char *dir) {
  struct place_ctx p = {d, dir};
  pyhost__sys_list_dir(dir, place_entry, &p);
}

static void prefix_lib_dir(void *ctx, const char *dir) {
  scan_dir(ctx, dir);
}

struct prefixes_ctx {
  struct disc *d;
  const char *root;
  int framework;
};

static void prefix_entry(void *ctx, const char *name) {
  struct prefixes_ctx *p = ctx;
  char prefix[PYHOST__IPATH];
  pyhost__fmt(prefix, sizeof prefix, "%s%c%s", p->root, pyhost__fs_sep, name);
  if (!p->framework) {
    pyhost__sys_prefix_lib_dirs(prefix, prefix_lib_dir, p->d);
    return;
  }
  char lib[PYHOST__IPATH], real[PYHOST__IPATH];
  unsigned major = 0, minor = 0;
  if (sscanf(name, "%u.%u", &major, &minor) != 2) return;
  pyhost__fmt(lib, sizeof lib, "%s/Python", prefix);
  if (pyhost__fs_realpath(lib, real, sizeof real) != 0) return;
  for (size_t i = p->d->std_start; i < p->d->n; i++)
    if (!strcmp(p->d->c[i]->library, real)) return;
  struct cand *c = from_library(p->d, "framework", real, 0);
  if (c) c->hexversion = (unsigned long)major << 24 | (unsigned long)minor << 16;
}

static void place(void *ctx, const char *dir, const char *kind) {
  struct disc *d = ctx;
  if (!pyhost__sys_is_absolute(dir) || pyhost__fs_kind(dir) != PYHOST__FS_DIR) return;
  if (!strcmp(kind, "dir")) {
    d->place_source = "standard location";
    scan_dir(d, dir);
  } else {
    d->place_source = "pyenv";
    struct prefixes_ctx p = {d, dir, !strcmp(kind, "framework")};
    pyhost__sys_list_dir(dir, prefix_entry, &p);
  }
}

static void registry_entry(void *ctx, const char *company, const char *tag, const char *install,
                           const char *exe) {
  struct disc *d = ctx;
  (void)company;
  if (exe && exe[0]) {
    from_interpreter(d, "registry", exe, 0);
    return;
  }
  unsigned major = 0, minor = 0;
  char lib[PYHOST__IPATH];
  if (!install || sscanf(tag, "%u.%u", &major, &minor) != 2) return;
  pyhost__fmt(lib, sizeof lib, "%s\\python%u%u.dll", install, major, minor);
  from_library(d, "registry", lib, 0);
}

/* ---- environments and installations made by tools (tools.h) ---- */

/* 1 when an earlier candidate from index `from` on has this library or, for one that
 * has none, this installation: uv's minor-version links and several names for one
 * conda root are one candidate. */
static int seen_from(struct disc *d, size_t from, const char *library, const char *prefix) {
  for (size_t i = from; i < d->n; i++)
    if ((library[0] && !strcmp(d->c[i]->library, library)) ||
        (!library[0] && !d->c[i]->library[0] && !strcmp(d->c[i]->resolved, prefix)))
      return 1;
  return 0;
}

/* One installation or environment prefix, through its own library; a prefix without
 * one is a candidate with the reason (statically linked, broken).  dedupe_from: skip
 * it silently when a candidate from that index on is the same (SIZE_MAX: never). */
static struct cand *from_prefix(struct disc *d, const char *source, const char *kind, const char *prefix,
                                const char *how, size_t dedupe_from) {
  char lib[PYHOST__IPATH], real[PYHOST__IPATH], root[PYHOST__IPATH], why[1024];
  const char *code = "missing";
  int ok = pyhost__install_library(prefix, lib, sizeof lib, &code, why, sizeof why) == 0;
  if (!ok) lib[0] = '\0';
  else if (pyhost__fs_realpath(lib, real, sizeof real) == 0) pyhost__fmt(lib, sizeof lib, "%s", real);
  if (pyhost__fs_realpath(prefix, root, sizeof root) != 0) pyhost__fmt(root, sizeof root, "%s", prefix);
  if (dedupe_from != (size_t)-1 && seen_from(d, dedupe_from, lib, root)) return NULL;
  struct cand *c = ok ? from_library(d, source, lib, 0) : add(d, source, kind);
  if (!c) return NULL;
  c->kind = kind;
  pyhost__fmt(c->resolved, sizeof c->resolved, "%s", root);
  pyhost__fmt(c->how, sizeof c->how, "%s", how);
  unsigned major, minor;
  char flags[8];
  if (ok && pyhost__sys_lib_name(base_name(lib), &major, &minor, flags, sizeof flags))
    c->hexversion = (unsigned long)major << 24 | (unsigned long)minor << 16;
  if (!ok) {
    pyhost__fmt(c->interpreter, sizeof c->interpreter, "%s", prefix);
    reject(c, code, "%s", why);
  }
  return c;
}

/* A conda or pixi environment: a prefix with conda-meta/, run on its own library,
 * standard library and site-packages (the home is the prefix itself). */
static void environment(struct disc *d, const char *source, const char *kind, const char *prefix,
                        const char *named_by) {
  char how[512];
  if (!pyhost__is_conda_env(prefix)) {
    struct cand *c = add(d, source, kind);
    if (!c) return;
    pyhost__fmt(c->interpreter, sizeof c->interpreter, "%s", prefix);
    reject(c, "missing", "%s (%s) is not a conda environment: it has no conda-meta/", prefix, named_by);
    return;
  }
  pyhost__fmt(how, sizeof how, "%s: the environment's own library", named_by);
  struct cand *c = from_prefix(d, source, kind, prefix, how, (size_t)-1);
  if (c) pyhost__fmt(c->venv, sizeof c->venv, "%s", prefix);
}

static int same_path(const char *a, const char *b) {
  char ra[PYHOST__IPATH], rb[PYHOST__IPATH];
  return pyhost__fs_realpath(a, ra, sizeof ra) == 0 && pyhost__fs_realpath(b, rb, sizeof rb) == 0 &&
         !strcmp(ra, rb);
}

/* pixi (PIXI_PROJECT_ROOT/.pixi/envs/<PIXI_ENVIRONMENT_NAME>, what `pixi run` and
 * `pixi shell` set), then CONDA_PREFIX unless it is a base installation.  Returns 1
 * when one of them (or VIRTUAL_ENV) is active; *base gets an active base's prefix. */
static int active_environments(struct disc *d, char *base, size_t cap) {
  char prefix[PYHOST__IPATH] = "", named[PYHOST__IPATH];
  const char *venv = getenv("VIRTUAL_ENV"), *root = getenv("PIXI_PROJECT_ROOT");
  const char *name = getenv("PIXI_ENVIRONMENT_NAME"), *conda = getenv("CONDA_PREFIX");
  const char *conda_env = getenv("CONDA_DEFAULT_ENV");
  int active = venv && venv[0];
  base[0] = '\0';
  if (root && pyhost__sys_is_absolute(root)) {
    pyhost__fmt(prefix, sizeof prefix, "%s%c.pixi%cenvs%c%s", root, pyhost__fs_sep, pyhost__fs_sep,
                pyhost__fs_sep, name && name[0] ? name : "default");
    pyhost__fmt(named, sizeof named, "PIXI_PROJECT_ROOT=%s", root);
    environment(d, "pixi", "pixi env", prefix, named);
    active = 1;
  }
  if (!conda || !pyhost__sys_is_absolute(conda) || (prefix[0] && same_path(prefix, conda))) return active;
  pyhost__fmt(named, sizeof named, "CONDA_PREFIX=%s", conda);
  if (strstr(conda, ".pixi")) { /* pixi's environment, activated without its variables */
    environment(d, "pixi", "pixi env", conda, named);
    return 1;
  }
  if (pyhost__is_conda_base(conda) || (conda_env && !strcmp(conda_env, "base"))) {
    pyhost__fmt(base, cap, "%s", conda);
    return active;
  }
  environment(d, "CONDA_PREFIX", "conda env", conda, named);
  return 1;
}

/* uv's pin (.python-version, as uv reads it), when uv has a folder of managed Pythons:
 * the newest installed one the pin names. */
static void uv_pin(struct disc *d) {
  char dir[PYHOST__IPATH], prefix[PYHOST__IPATH], how[1024];
  struct pyhost__pin pin;
  struct pyhost__request r;
  if (pyhost__sys_tool_dir("uv", dir, sizeof dir) != 0 || pyhost__fs_kind(dir) != PYHOST__FS_DIR ||
      pyhost__uv_pin(&pin) != 0)
    return;
  for (char *cursor = pin.versions, *v; (v = cursor) && *v;) {
    char *blank = strchr(v, ' ');
    if (blank) *blank = '\0';
    cursor = blank ? blank + 1 : v + strlen(v);
    if (pyhost__parse_request(v, &r) == 0 && pyhost__pick_install(dir, v, 1, prefix, sizeof prefix) == 0) {
      pyhost__fmt(how, sizeof how, "pin %s (%s): uv's %s", v, pin.origin, base_name(prefix));
      from_prefix(d, "uv pin", "library", prefix, how, (size_t)-1);
      continue;
    }
    struct cand *c = add(d, "uv pin", "library");
    if (!c) return;
    pyhost__fmt(c->interpreter, sizeof c->interpreter, "%s", pin.origin);
    if (pyhost__parse_request(v, &r) != 0)
      reject(c, "unresolved", "the uv pin \"%s\" (%s) is not a version pyhost can match; pin one such as 3.12",
             v, pin.origin);
    else
      reject(c, "missing", "the uv pin %s (%s) names no Python uv has installed in %s (`uv python install %s`)",
             v, pin.origin, dir, v);
  }
}

/* conda's base installations, only when no environment is active: an active base
 * (CONDA_PREFIX), the one CONDA_EXE belongs to, MAMBA_ROOT_PREFIX, the usual folders. */
struct roots_ctx {
  struct disc *d;
  size_t from;
};

static void conda_root(void *ctx, const char *dir) {
  struct roots_ctx *r = ctx;
  if (!pyhost__sys_is_absolute(dir) || !pyhost__is_conda_env(dir)) return;
  from_prefix(r->d, "conda base", "conda env", dir, "conda's base installation", r->from);
}

static void conda_bases(struct disc *d, const char *active_base) {
  struct roots_ctx r = {d, d->n};
  char root[PYHOST__IPATH];
  if (active_base[0]) conda_root(&r, active_base);
  const char *exe = getenv("CONDA_EXE"), *mamba = getenv("MAMBA_ROOT_PREFIX");
  if (exe && pyhost__sys_is_absolute(exe)) { /* <root>/bin/conda or <root>/condabin/conda */
    pyhost__fmt(root, sizeof root, "%s", exe);
    for (int up = 0; up < 2; up++) {
      char *b = (char *)base_name(root);
      if (b > root) b[-1] = '\0';
    }
    conda_root(&r, root);
  }
  if (mamba && mamba[0]) conda_root(&r, mamba);
  pyhost__sys_conda_roots(conda_root, &r);
}

/* The installations uv, mise and asdf keep, joining the standard places. */
struct installs_ctx {
  struct disc *d;
  const char *dir, *source;
  int uv_names;
};

static void install_entry(void *ctx, const char *name) {
  struct installs_ctx *t = ctx;
  unsigned major, minor;
  int patch, ft, dbg;
  char prefix[PYHOST__IPATH], how[512];
  if (pyhost__install_version(name, t->uv_names, &major, &minor, &patch, &ft, &dbg) != 0) return;
  pyhost__fmt(prefix, sizeof prefix, "%s%c%s", t->dir, pyhost__fs_sep, name);
  if (pyhost__fs_kind(prefix) != PYHOST__FS_DIR) return;
  char real[PYHOST__IPATH]; /* uv's minor-version link names its installation */
  if (pyhost__fs_realpath(prefix, real, sizeof real) != 0) pyhost__fmt(real, sizeof real, "%s", prefix);
  pyhost__fmt(how, sizeof how, "%s's %s", t->source, base_name(real));
  struct cand *c = from_prefix(t->d, t->source, "library", prefix, how, t->d->std_start);
  if (c && !c->hexversion) c->hexversion = (unsigned long)major << 24 | (unsigned long)minor << 16;
}

static void tool_installs(struct disc *d, const char *tool, const char *sub) {
  char dir[PYHOST__IPATH];
  if (pyhost__sys_tool_dir(tool, dir, sizeof dir) != 0) return;
  size_t n = strlen(dir);
  pyhost__fmt(dir + n, sizeof dir - n, "%s", sub);
  if (!pyhost__sys_is_absolute(dir) || pyhost__fs_kind(dir) != PYHOST__FS_DIR) return;
  struct installs_ctx t = {d, dir, tool, !strcmp(tool, "uv")};
  pyhost__sys_list_dir(dir, install_entry, &t);
}

/* Newest first, stable: the standard places' order breaks ties. */
static void sort_newest_first(struct disc *d, size_t from) {
  for (size_t i = from + 1; i < d->n; i++) {
    struct cand *c = d->c[i];
    size_t j = i;
    while (j > from && (d->c[j - 1]->hexversion >> 16) < (c->hexversion >> 16)) {
      d->c[j] = d->c[j - 1];
      j--;
    }
    d->c[j] = c;
  }
}

static void gather(struct disc *d) {
  const pyhost_config *cfg = d->cfg;
  const char *env_lib = getenv("PYHOST_PYTHON_LIBRARY");
  const char *env_py = getenv("PYHOST_PYTHON");
  const char *venv = getenv("VIRTUAL_ENV");
  if (cfg->library) from_library(d, "configured", cfg->library, 1);
  if (env_lib && env_lib[0]) from_library(d, "PYHOST_PYTHON_LIBRARY", env_lib, 1);
  if (cfg->interpreter) from_interpreter(d, "interpreter", cfg->interpreter, 1);
  if (env_py && env_py[0]) from_interpreter(d, "PYHOST_PYTHON", env_py, 1);
  if (venv && venv[0]) {
    char exe[PYHOST__IPATH];
    pyhost__fmt(exe, sizeof exe, "%s%s", venv,
                pyhost__fs_sep == '/' ? "/bin/python" : "\\Scripts\\python.exe");
    from_interpreter(d, "VIRTUAL_ENV", exe, 0);
  }
  char base[PYHOST__IPATH];
  int active = active_environments(d, base, sizeof base);
  uv_pin(d);
  on_path(d, "python3", "PATH python3");
  on_path(d, "python", "PATH python");
  if (!active) conda_bases(d, base);
  char root[PYHOST__IPATH] = "";
  const char *pyenv = getenv("PYENV_ROOT");
  if (pyenv && pyhost__sys_is_absolute(pyenv)) pyhost__fmt(root, sizeof root, "%s", pyenv);
  else if (pyhost__sys_home(root, sizeof root) == 0) {
    size_t l = strlen(root);
    pyhost__fmt(root + l, sizeof root - l, "%c.pyenv", pyhost__fs_sep);
    if (pyhost__fs_kind(root) != PYHOST__FS_DIR) root[0] = '\0';
  }
  d->std_start = d->n;
  pyhost__sys_std_places(root, place, d);
  tool_installs(d, "uv", "");
  tool_installs(d, "mise", pyhost__fs_sep == '/' ? "/installs/python" : "\\installs\\python");
  tool_installs(d, "asdf", "/installs/python");
  sort_newest_first(d, d->std_start);
  pyhost__sys_registry(registry_entry, d);
}

/* Examines candidates and marks the one taken; returns its index or -1.  stop_early:
 * examine no further than needed (pyhost_init); else all (pyhost_discover). */
static long decide(struct disc *d, int stop_early) {
  long taken = -1;
  int newest = d->cfg->prefer_newest;
  for (size_t i = 0; i < d->n; i++) {
    struct cand *c = d->c[i];
    if (d->binding && (int)i + 1 != d->binding) {
      if (stop_early) break;
      examine(d, c, i);
      if (!c->code)
        reject(c, "acceptable", "#%d (%s) is binding: only it can be taken", d->binding,
               d->c[d->binding - 1]->source);
      continue;
    }
    if (taken >= 0 && stop_early && !newest) break;
    examine(d, c, i);
    if (c->code) continue;
    if (taken < 0) taken = (long)i;
    else if (newest && (c->hexversion >> 16) > (d->c[taken]->hexversion >> 16)) {
      reject(d->c[taken], "acceptable", "#%zu is newer (prefer newest)", i + 1);
      taken = (long)i;
    } else {
      reject(c, "acceptable", newest ? "#%ld is as new and comes first"
                                     : "#%ld comes first in the search order", taken + 1);
    }
  }
  if (taken >= 0) {
    d->c[taken]->taken = 1;
    d->c[taken]->code = "taken";
    pyhost__fmt(d->c[taken]->reason, sizeof d->c[taken]->reason, "%s",
                d->binding ? "configured" : newest ? "the newest acceptable candidate"
                                                   : "the first acceptable candidate");
  }
  return taken;
}

static void disc_init(struct disc *d, const pyhost_config *cfg) {
  static const pyhost_config defaults;
  memset(d, 0, sizeof *d);
  d->cfg = cfg ? cfg : &defaults;
}

static void disc_free(struct disc *d) {
  for (size_t i = 0; i < d->n; i++) pyhost__free(d->c[i]);
  pyhost__free(d->c);
}

static void to_public(const struct cand *c, size_t i, pyhost_candidate *p) {
  p->index = (int)i + 1;
  p->source = c->source;
  p->kind = c->kind;
  p->interpreter = c->interpreter;
  p->resolved = c->resolved;
  p->venv = c->venv;
  p->library = c->library;
  p->how = c->how;
  p->hexversion = c->hexversion;
  p->free_threaded = c->free_threaded;
  p->debug = c->debug;
  p->taken = c->taken;
  p->reason_code = c->code ? c->code : "unresolved";
  p->reason = c->reason;
}

int pyhost_discover(const pyhost_config *cfg, pyhost_candidate_fn fn, void *ctx) {
  struct disc d;
  disc_init(&d, cfg);
  gather(&d);
  long taken = d.nomem ? -1 : decide(&d, 0);
  for (size_t i = 0; fn && !d.nomem && i < d.n; i++) {
    pyhost_candidate p;
    to_public(d.c[i], i, &p);
    fn(ctx, &p);
  }
  int rc = d.nomem ? PYHOST_NOMEM : taken >= 0 ? PYHOST_OK : PYHOST_NOTFOUND;
  disc_free(&d);
  return rc;
}

int pyhost__discover(pyhost *h, char *out, size_t cap, char *origin, size_t ocap) {
  struct disc d;
  disc_init(&d, &h->cfg);
  gather(&d);
  long taken = d.nomem ? -1 : decide(&d, 1);
  int rc = PYHOST_OK;
  if (d.nomem) {
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory while looking for Python");
  } else if (taken < 0) {
    char msg[8192];
    struct pyhost__strbuf sb;
    pyhost__strbuf_init(&sb, msg, sizeof msg);
    pyhost__strbuf_printf(&sb, "no usable Python 3 found (see docs/discovery.md); pyhost looked at:");
    for (size_t i = 0; i < d.n; i++) {
      struct cand *c = d.c[i];
      if (!c->code) continue; /* not examined */
      pyhost__strbuf_printf(&sb, "\n  #%zu %s %s: %s", i + 1, c->source,
                            c->interpreter[0] ? c->interpreter : c->library, c->reason);
    }
    if (!d.n) pyhost__strbuf_printf(&sb, " nothing (no python3 on PATH, no libpython in the standard places)");
    rc = pyhost__set_error(h, PYHOST_NOTFOUND, "%s", msg);
  } else {
    struct cand *c = d.c[taken];
    pyhost__fmt(out, cap, "%s", c->library);
    pyhost__fmt(origin, ocap, " (found via %s%s%s)", c->source, c->interpreter[0] ? " " : "",
                c->interpreter);
    /* a venv's python as program name: Python then finds pyvenv.cfg and makes the
     * venv sys.prefix with its site-packages, as running that python would */
    if (c->program[0] && !h->cfg.program_name &&
        !(h->cfg.program_name = pyhost__strdup(c->program)))
      rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory");
  }
  disc_free(&d);
  return rc;
}
