/* layouts.c: the installation folders of uv, python-build-standalone, conda / mamba /
 * pixi, mise and asdf (tools.h), and which tool a path belongs to.
 *
 * Where each format comes from:
 *   uv      installations named cpython-<version>[+variant]-<os>-<arch>-<libc> in
 *           `uv python dir` (docs.astral.sh/uv/concepts/python-versions), each a
 *           python-build-standalone install_only tree: bin/, lib/libpython3.X.so.1.0,
 *           lib/python3.X/;
 *   pbs     a full archive's python/PYTHON.json beside python/install/ (docs/
 *           distributions.rst), whose link mode says whether libpython is shared; the
 *           musl builds are static, with no libpython at all (docs/running.rst: "These
 *           binaries are static");
 *   conda   every environment holds conda-meta/ (its history and package records);
 *           conda's base installation also holds condabin/; pixi's environments are
 *           conda environments in <workspace>/.pixi/envs/<name> (pixi docs, Environments);
 *   mise, asdf  installs/python/<version>/ in their data folders.
 */
#include "loader.h" /* first: Python.h must precede system headers */
#include "tools.h"
#include "platform.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') b = p + 1;
  return b;
}

static int has(const char *dir, const char *name, enum pyhost__fs_kind kind) {
  char p[PYHOST__IPATH];
  pyhost__fmt(p, sizeof p, "%s%c%s", dir, pyhost__fs_sep, name);
  return pyhost__fs_kind(p) == kind;
}

int pyhost__install_version(const char *name, int uv_names, unsigned *major, unsigned *minor,
                            int *patch, int *freethreaded, int *debug) {
  struct pyhost__request r;
  if (name[0] == '.') return -1; /* uv's .lock, .cache, .temp */
  if (uv_names ? strncmp(name, "cpython-", 8) != 0 : !strncmp(name, "latest", 6)) return -1;
  if (pyhost__parse_request(name, &r) != 0 || !r.minor) return -1;
  *major = r.major;
  *minor = r.minor;
  *patch = r.patch;
  *freethreaded = r.freethreaded;
  *debug = r.debug;
  return 0;
}

struct pick {
  struct pyhost__request want;
  int uv_names;
  long best;
  char name[256];
};

static void pick_entry(void *ctx, const char *name) {
  struct pick *p = ctx;
  unsigned major, minor;
  int patch, ft, dbg;
  if (pyhost__install_version(name, p->uv_names, &major, &minor, &patch, &ft, &dbg) != 0 ||
      !pyhost__request_matches(&p->want, major, minor, patch, ft, dbg))
    return;
  /* newest first, as uv picks managed versions; a minor-version link (no patch) last */
  long key = (long)minor * 10000 + patch + 1;
  if (key > p->best) {
    p->best = key;
    pyhost__fmt(p->name, sizeof p->name, "%s", name);
  }
}

int pyhost__pick_install(const char *dir, const char *request, int uv_names, char *out, size_t cap) {
  struct pick p;
  memset(&p, 0, sizeof p);
  p.uv_names = uv_names;
  p.best = -1;
  if (pyhost__parse_request(request, &p.want) != 0) return -1;
  pyhost__sys_list_dir(dir, pick_entry, &p);
  if (!p.name[0]) return -1;
  pyhost__fmt(out, cap, "%s%c%s", dir, pyhost__fs_sep, p.name);
  return 0;
}

/* ---- an installation's library, or why it has none ---- */

struct anysearch {
  unsigned major, minor, versions;
  char *out;
  size_t cap;
  const char *dir;
  int debug; /* a debug build counts (when no other is there) */
};

static void any_entry(void *ctx, const char *name) {
  struct anysearch *s = ctx;
  unsigned ma, mi;
  char flags[8];
  if (!pyhost__sys_lib_name(name, &ma, &mi, flags, sizeof flags) || ma != 3 || flags[0] == 't' ||
      (flags[0] == 'd' && !flags[1] && !s->debug))
    return;
  if (s->versions && mi == s->minor) return;
  s->versions++;
  s->minor = mi;
  s->major = ma;
  pyhost__fmt(s->out, s->cap, "%s%c%s", s->dir, pyhost__fs_sep, name);
}

static void any_dir(void *ctx, const char *dir) {
  struct anysearch *s = ctx;
  s->dir = dir;
  pyhost__sys_list_dir(dir, any_entry, s);
}

int pyhost__prefix_only_library(const char *prefix, char *out, size_t cap, unsigned *major,
                                unsigned *minor) {
  struct anysearch s = {0, 0, 0, out, cap, NULL, 0};
  pyhost__sys_prefix_lib_dirs(prefix, any_dir, &s);
  if (!s.versions) { /* an installation of a debug build alone (Debian's python3.X-dbg) */
    s.debug = 1;
    pyhost__sys_prefix_lib_dirs(prefix, any_dir, &s);
  }
  if (s.versions != 1) {
    out[0] = '\0';
    return -1;
  }
  *major = s.major;
  *minor = s.minor;
  return 0;
}


struct exe_search {
  const char *bin;
  char static_exe[PYHOST__IPATH];
  int found;
};

static void exe_entry(void *ctx, const char *name) {
  struct exe_search *s = ctx;
  if (s->static_exe[0] || strncmp(name, "python3", 7) != 0) return;
  char p[PYHOST__IPATH];
  struct pyhost__elf e;
  pyhost__fmt(p, sizeof p, "%s%c%s", s->bin, pyhost__fs_sep, name);
  if (pyhost__elf_read(p, &e) != 0) return;
  s->found = 1;
  if (e.is_elf && !e.is_script && !e.needed_python[0]) pyhost__fmt(s->static_exe, sizeof s->static_exe, "%s", p);
}

/* How PYTHON.json says libpython is linked, "" when it does not: "link_mode" in format
 * 4 and 5 (docs/distributions.rst), "libpython_link_mode" in the later formats (as
 * PyOxidizer's parse_python_json reads them). */
static void pbs_link_mode(const char *dir, char *out, size_t cap) {
  char p[PYHOST__IPATH], err[128], *text;
  size_t len;
  out[0] = '\0';
  pyhost__fmt(p, sizeof p, "%s%cPYTHON.json", dir, pyhost__fs_sep);
  if (pyhost__fs_kind(p) != PYHOST__FS_FILE || pyhost__fs_read(p, &text, &len, err, sizeof err) != 0) return;
  const char *k = strstr(text, "\"libpython_link_mode\"");
  if (k) k += 10;
  else k = strstr(text, "\"link_mode\"");
  const char *q = k ? strchr(k + 11, '"') : NULL;
  const char *end = q ? strchr(q + 1, '"') : NULL;
  if (end) pyhost__fmt(out, cap, "%.*s", (int)(end - q - 1), q + 1);
  pyhost__free(text);
}

int pyhost__install_library(const char *prefix, char *lib, size_t cap, const char **code, char *why,
                            size_t wcap) {
  char root[PYHOST__IPATH], mode[32];
  pyhost__fmt(root, sizeof root, "%s", prefix);
  pbs_link_mode(prefix, mode, sizeof mode);
  /* a full python-build-standalone archive: the installation is python/install */
  if (has(prefix, "PYTHON.json", PYHOST__FS_FILE) && has(prefix, "install", PYHOST__FS_DIR))
    pyhost__fmt(root, sizeof root, "%s%cinstall", prefix, pyhost__fs_sep);
  /* reached from its interpreter, python/install/bin/python3: PYTHON.json is above */
  if (!mode[0] && !strcmp(base_name(root), "install")) {
    char up[PYHOST__IPATH];
    pyhost__fmt(up, sizeof up, "%.*s", (int)(base_name(root) - root - 1), root);
    pbs_link_mode(up, mode, sizeof mode);
  }
  unsigned major, minor;
  if (pyhost__prefix_only_library(root, lib, cap, &major, &minor) == 0) return 0;
  lib[0] = '\0';
  struct exe_search s;
  char bin[PYHOST__IPATH];
  memset(&s, 0, sizeof s);
  pyhost__fmt(bin, sizeof bin, "%s%cbin", root, pyhost__fs_sep);
  s.bin = bin;
  pyhost__sys_list_dir(bin, exe_entry, &s);
  if (s.static_exe[0] || !strcmp(mode, "static")) {
    *code = "no-shared-library";
    const char *exe = s.static_exe[0] ? s.static_exe : root;
    if (!strcmp(mode, "static"))
      pyhost__fmt(why, wcap, "%s is a statically linked python-build-standalone build (PYTHON.json: "
                  "libpython link mode static): there is no libpython to load; use a build with a shared "
                  "libpython (the -gnu builds on Linux)", exe);
    else if (strstr(root, "musl"))
      pyhost__fmt(why, wcap, "%s is statically linked (a musl build of python-build-standalone, which "
                  "has no libpython): use the -gnu build of that version", exe);
    else
      pyhost__fmt(why, wcap, "%s is statically linked (built without --enable-shared): it needs no "
                  "libpython and %s has none; install a build that ships its shared library", exe, root);
    return -1;
  }
  *code = "missing";
  pyhost__fmt(why, wcap, "%s holds no libpython in its lib directories%s", root,
              s.found ? "" : " and no python3 in bin/: a broken or partial installation");
  return -1;
}

/* ---- conda ---- */

int pyhost__is_conda_env(const char *prefix) {
  return has(prefix, "conda-meta", PYHOST__FS_DIR);
}

static int same_dir(const char *a, const char *b) {
  char ra[PYHOST__IPATH], rb[PYHOST__IPATH];
  if (pyhost__fs_realpath(a, ra, sizeof ra) != 0 || pyhost__fs_realpath(b, rb, sizeof rb) != 0) return 0;
  return !strcmp(ra, rb);
}

int pyhost__is_conda_base(const char *prefix) {
  const char *mamba = getenv("MAMBA_ROOT_PREFIX");
  return has(prefix, "condabin", PYHOST__FS_DIR) || (mamba && mamba[0] && same_dir(mamba, prefix));
}

/* ---- which tool ---- */

static int under_tool(const char *dir, const char *tool, const char *sub) {
  char t[PYHOST__IPATH];
  if (pyhost__sys_tool_dir(tool, t, sizeof t) != 0) return 0;
  size_t n = strlen(t);
  pyhost__fmt(t + n, sizeof t - n, "%s", sub);
  return same_dir(dir, t);
}

static void dir_name(const char *path, char *out, size_t cap) {
  const char *b = base_name(path);
  pyhost__fmt(out, cap, "%.*s", (int)(b > path + 1 ? b - path - 1 : b - path), path);
}

void pyhost__tool_of(const char *path, char *out, size_t cap) {
  char dir[PYHOST__IPATH], parent[PYHOST__IPATH], grand[PYHOST__IPATH], real[PYHOST__IPATH];
  out[0] = '\0';
  if (pyhost__fs_realpath(path, real, sizeof real) != 0) pyhost__fmt(real, sizeof real, "%s", path);
  pyhost__fmt(dir, sizeof dir, "%s", real);
  for (int up = 0; up < 8; up++) {
    dir_name(dir, parent, sizeof parent);
    if (!strcmp(parent, dir) || strlen(parent) < 2) return;
    pyhost__fmt(dir, sizeof dir, "%s", parent);
    const char *name = base_name(dir);
    dir_name(dir, parent, sizeof parent);
    dir_name(parent, grand, sizeof grand);
    const char *pname = base_name(parent), *gname = base_name(grand);
    unsigned ma, mi;
    int pa, ft, dbg;
    if (pyhost__is_conda_env(dir)) {
      const char *pixi = strstr(dir, ".pixi");
      if (pixi && !strcmp(pname, "envs"))
        pyhost__fmt(out, cap, "pixi (environment %s of the workspace %.*s)", name, (int)(pixi - dir - 1), dir);
      else
        pyhost__fmt(out, cap, "conda (%s %s)", pyhost__is_conda_base(dir) ? "base installation" : "environment", dir);
      return;
    }
    if (has(dir, "PYTHON.json", PYHOST__FS_FILE)) {
      pyhost__fmt(out, cap, "python-build-standalone (%s)", dir);
      return;
    }
    if (pyhost__install_version(name, 1, &ma, &mi, &pa, &ft, &dbg) == 0 &&
        (under_tool(parent, "uv", "") || (!strcmp(pname, "python") && !strcmp(gname, "uv")))) {
      pyhost__fmt(out, cap, "uv (managed Python %s, a python-build-standalone build)", name);
      return;
    }
    if (!strcmp(pname, "python") && !strcmp(gname, "installs")) {
      int asdf = under_tool(grand, "asdf", "/installs") || strstr(grand, "asdf");
      int mise = under_tool(grand, "mise", "/installs") || strstr(grand, "mise");
      if (asdf || mise) {
        pyhost__fmt(out, cap, "%s (python %s)", asdf ? "asdf" : "mise", name);
        return;
      }
    }
    if (!strcmp(pname, "versions") && strstr(grand, "pyenv")) {
      pyhost__fmt(out, cap, "pyenv (version %s)", name);
      return;
    }
  }
}
