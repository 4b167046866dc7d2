/* interp.c: from an interpreter to its libpython (interp.h).
 *
 * Files first, in the order that answers fastest and never runs foreign code:
 *   1. a virtual environment: pyvenv.cfg beside or above the executable names the base
 *      installation's bin directory (`home`) and its version;
 *   2. a pyenv shim (a shell script): pyenv's own version choice is replayed, i.e.
 *      PYENV_VERSION, then .python-version from the current directory upwards, then
 *      $PYENV_ROOT/version, "system" meaning the next one on PATH;
 *   3. another wrapper script that ends in `exec /absolute/python...`;
 *   4. symlinks resolved, the executable's ELF DT_NEEDED libpython looked for in its
 *      DT_RUNPATH and its installation's lib directories; an executable that needs no
 *      libpython is statically linked and usable only if its installation also ships
 *      the shared library of the same version (Debian's /usr/bin/python3.11 does).
 * Only when all that says nothing, and the host allows it, the interpreter is asked.
 */
#include "discovery.h" /* first: Python.h must precede system headers */
#include "interp.h"
#include "platform.h"
#include "tools.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 8

static const char *base_name(const char *path) {
  const char *b = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') b = p + 1;
  return b;
}

static void dir_name(const char *path, char *out, size_t cap) {
  pyhost__fmt(out, cap, "%s", path);
  char *b = (char *)base_name(out);
  if (b > out + 1) b[-1] = '\0';
  else if (b == out + 1) b[0] = '\0'; /* "/x" -> "/" */
  else out[0] = '\0';
}

/* Appends to o->how, which may already hold the start of the chain ("pyenv ...: "). */
static void how(struct pyhost__interp *o, const char *fmt, const char *a) {
  size_t l = strlen(o->how);
  pyhost__fmt(o->how + l, sizeof o->how - l, fmt, a);
}

/* strsep, which C11 lacks: the next sep-delimited field of *cursor (cut in place), or
 * NULL at the end.  Reentrant, unlike strtok: discovery may run in several threads. */
static char *next_field(char **cursor, char sep) {
  char *start = *cursor;
  if (!start) return NULL;
  char *end = strchr(start, sep);
  if (end) {
    *end = '\0';
    *cursor = end + 1;
  } else {
    *cursor = NULL;
  }
  return start;
}

static int fail(struct pyhost__interp *o, const char *code, const char *fmt, const char *a,
                const char *b) {
  o->code = code;
  pyhost__fmt(o->reason, sizeof o->reason, fmt, a, b ? b : "");
  return -1;
}

/* "python3.11" -> 3, 11; "python3" and "python" say nothing: 0, 0 */
static void version_of_name(const char *name, unsigned *major, unsigned *minor) {
  if (strncmp(name, "python", 6) != 0 || name[6] < '0' || name[6] > '9') return;
  char *end;
  unsigned ma = (unsigned)strtoul(name + 6, &end, 10);
  if (*end != '.' || end[1] < '0' || end[1] > '9') return;
  *major = ma;
  *minor = (unsigned)strtoul(end + 1, NULL, 10);
}

/* ---- lib directories ---- */

struct libsearch {
  unsigned major, minor;
  char *out;
  size_t cap;
  int found;
};

static void try_lib_dir(void *ctx, const char *dir) {
  struct libsearch *s = ctx;
  if (s->found) return;
  char names[512], p[PYHOST__IPATH];
  pyhost__sys_lib_names_for(s->major, s->minor, names, sizeof names);
  for (const char *n = names; *n; n += strlen(n) + 1) {
    pyhost__fmt(p, sizeof p, "%s%c%s", dir, pyhost__fs_sep, n);
    if (pyhost__fs_kind(p) == PYHOST__FS_FILE) {
      pyhost__fmt(s->out, s->cap, "%s", p);
      s->found = 1;
      return;
    }
  }
}

int pyhost__prefix_library(const char *prefix, unsigned major, unsigned minor, char *out,
                           size_t cap) {
  struct libsearch s = {major, minor, out, cap, 0};
  /* a macOS framework installation: Versions/3.X/Python is the library */
  char p[PYHOST__IPATH];
  pyhost__fmt(p, sizeof p, "%s/Python", prefix);
  if (pyhost__fs_kind(p) == PYHOST__FS_FILE && strstr(prefix, ".framework/")) {
    pyhost__fmt(out, cap, "%s", p);
    return 0;
  }
  pyhost__sys_prefix_lib_dirs(prefix, try_lib_dir, &s);
  return s.found ? 0 : -1;
}

/* An interpreter named only python3: its installation's lib directories decide. */
static int prefix_only_library(const char *prefix, struct pyhost__interp *o) {
  return pyhost__prefix_only_library(prefix, o->library, sizeof o->library, &o->major, &o->minor);
}

/* Looks for the DT_NEEDED name in each absolute DT_RUNPATH entry ($ORIGIN expanded). */
static int in_runpath(const char *runpath, const char *origin, const char *needed, char *out,
                      size_t cap) {
  const char *p = runpath;
  while (p && *p) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char dir[PYHOST__IPATH];
    if (n < sizeof dir) {
      memcpy(dir, p, n);
      dir[n] = '\0';
      char expanded[PYHOST__IPATH];
      if (!strncmp(dir, "$ORIGIN", 7)) pyhost__fmt(expanded, sizeof expanded, "%s%s", origin, dir + 7);
      else if (!strncmp(dir, "${ORIGIN}", 9)) pyhost__fmt(expanded, sizeof expanded, "%s%s", origin, dir + 9);
      else pyhost__fmt(expanded, sizeof expanded, "%s", dir);
      if (pyhost__sys_is_absolute(expanded)) {
        pyhost__fmt(out, cap, "%s/%s", expanded, needed);
        if (pyhost__fs_kind(out) == PYHOST__FS_FILE) return 0;
      }
    }
    p = end ? end + 1 : NULL;
  }
  return -1;
}

/* ---- PATH ---- */

int pyhost__find_on_path(const char *program, const char *skip_dir, char *out, size_t cap) {
  const char *p = getenv("PATH");
  while (p && *p) {
    const char *end = strchr(p, pyhost__sys_list_sep);
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char dir[PYHOST__IPATH];
    if (n && n < sizeof dir) {
      memcpy(dir, p, n);
      dir[n] = '\0';
      while (n > 1 && (dir[n - 1] == '/' || dir[n - 1] == '\\')) dir[--n] = '\0';
      /* a relative or empty entry means the current directory: never searched */
      if (pyhost__sys_is_absolute(dir) && !(skip_dir && !strcmp(dir, skip_dir))) {
        pyhost__fmt(out, cap, "%s%c%s%s", dir, pyhost__fs_sep, program, pyhost__sys_exe_suffix);
        if (pyhost__sys_is_executable(out)) return 0;
      }
    }
    p = end ? end + 1 : NULL;
  }
  return -1;
}

/* ---- pyvenv.cfg ---- */

/* The value of `key = value` in a pyvenv.cfg text, into out; 0 or -1. */
static int cfg_value(const char *text, const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  for (const char *line = text; line && *line;) {
    const char *eol = strchr(line, '\n');
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (!strncmp(p, key, klen)) {
      const char *q = p + klen;
      while (*q == ' ' || *q == '\t') q++;
      if (*q == '=') {
        q++;
        while (*q == ' ' || *q == '\t') q++;
        size_t n = eol ? (size_t)(eol - q) : strlen(q);
        while (n && (q[n - 1] == '\r' || q[n - 1] == ' ' || q[n - 1] == '\t')) n--;
        if (n >= cap) return -1;
        memcpy(out, q, n);
        out[n] = '\0';
        return 0;
      }
    }
    line = eol ? eol + 1 : NULL;
  }
  return -1;
}

/* Finds pyvenv.cfg next to the executable's directory (POSIX bin/, Windows Scripts/)
 * or in it; fills venv prefix and the cfg text (own). */
static char *find_pyvenv(const char *exe, char *venv, size_t cap) {
  char dir[PYHOST__IPATH], p[PYHOST__IPATH], err[128];
  dir_name(exe, dir, sizeof dir);
  for (int up = 0; up < 2; up++) {
    pyhost__fmt(p, sizeof p, "%s%cpyvenv.cfg", dir, pyhost__fs_sep);
    char *text;
    size_t len;
    if (pyhost__fs_kind(p) == PYHOST__FS_FILE && pyhost__fs_read(p, &text, &len, err, sizeof err) == 0) {
      pyhost__fmt(venv, cap, "%s", dir);
      return text;
    }
    char parent[PYHOST__IPATH];
    dir_name(dir, parent, sizeof parent);
    pyhost__fmt(dir, sizeof dir, "%s", parent);
  }
  return NULL;
}

static int resolve(const char *path, int allow_sub, struct pyhost__interp *o, int depth);

static int via_venv(const char *path, const char *cfg, int allow_sub, struct pyhost__interp *o,
                    int depth) {
  char home[PYHOST__IPATH], ver[64], base[PYHOST__IPATH];
  if (!o->venv[0]) return -2;
  if (cfg_value(cfg, "home", home, sizeof home) != 0)
    return fail(o, "no-home", "%s: the virtual environment's pyvenv.cfg has no `home` line%s",
                path, NULL);
  unsigned major = 0, minor = 0;
  if (cfg_value(cfg, "version_info", ver, sizeof ver) == 0 || cfg_value(cfg, "version", ver, sizeof ver) == 0) {
    char *end;
    major = (unsigned)strtoul(ver, &end, 10);
    if (*end == '.') minor = (unsigned)strtoul(end + 1, NULL, 10);
  }
  if (!major) version_of_name(base_name(path), &major, &minor);
  o->major = major;
  o->minor = minor;
  if (!o->program[0]) pyhost__fmt(o->program, sizeof o->program, "%s", path);
  if (!strcmp(o->kind, "interpreter")) pyhost__fmt(o->kind, sizeof o->kind, "venv");
  /* the base interpreter in `home`, most specific name first */
  char names[3][64];
  int nn = 0;
  if (major && minor) pyhost__fmt(names[nn++], 64, "python%u.%u%s", major, minor, pyhost__sys_exe_suffix);
  if (major) pyhost__fmt(names[nn++], 64, "python%u%s", major, pyhost__sys_exe_suffix);
  pyhost__fmt(names[nn++], 64, "python%s", pyhost__sys_exe_suffix);
  for (int i = 0; i < nn; i++) {
    pyhost__fmt(base, sizeof base, "%s%c%s", home, pyhost__fs_sep, names[i]);
    if (pyhost__fs_kind(base) == PYHOST__FS_FILE) {
      how(o, "pyvenv.cfg home %s: ", home);
      return resolve(base, allow_sub, o, depth + 1);
    }
  }
  /* home is the base's bin/ (POSIX) or its install dir (Windows): the prefix is near */
  char prefix[PYHOST__IPATH];
  dir_name(home, prefix, sizeof prefix);
  if (major && (pyhost__prefix_library(prefix, major, minor, o->library, sizeof o->library) == 0 ||
                pyhost__prefix_library(home, major, minor, o->library, sizeof o->library) == 0)) {
    how(o, "pyvenv.cfg home %s, its installation's lib directory", home);
    return 0;
  }
  return fail(o, "missing", "%s: the virtual environment's base interpreter is gone (pyvenv.cfg home = %s)",
              path, home);
}

/* ---- scripts ---- */

static int pyenv_version_file(const char *file, char *out, size_t cap) {
  char *text, err[128];
  size_t len;
  if (pyhost__fs_kind(file) != PYHOST__FS_FILE || pyhost__fs_read(file, &text, &len, err, sizeof err) != 0)
    return -1;
  /* one name per line or separated by blanks; '#' starts a comment; joined with ':' */
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  char *cursor = text;
  for (char *line; (line = next_field(&cursor, '\n'));) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char word[256];
    for (const char *p = line; *p;) {
      while (*p == ' ' || *p == '\t' || *p == '\r') p++;
      size_t n = 0;
      while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\r') n++;
      if (!n) break;
      if (n < sizeof word) {
        memcpy(word, p, n);
        word[n] = '\0';
        pyhost__strbuf_printf(&sb, "%s%s", sb.len ? ":" : "", word);
      }
      p += n;
    }
  }
  pyhost__free(text);
  return sb.len ? 0 : -1;
}

/* pyenv's `pyenv version-name` logic: which version(s) the shim will run, ':' separated,
 * and where that came from. */
static void pyenv_version_name(const char *root, char *out, size_t cap, char *origin, size_t ocap) {
  const char *env = getenv("PYENV_VERSION");
  if (env && env[0]) {
    pyhost__fmt(out, cap, "%s", env);
    pyhost__fmt(origin, ocap, "PYENV_VERSION");
    return;
  }
  char dir[PYHOST__IPATH], file[PYHOST__IPATH];
  const char *pdir = getenv("PYENV_DIR");
  if (pdir && pyhost__sys_is_absolute(pdir)) pyhost__fmt(dir, sizeof dir, "%s", pdir);
  else if (pyhost__sys_cwd(dir, sizeof dir) != 0) dir[0] = '\0';
  while (dir[0]) {
    pyhost__fmt(file, sizeof file, "%s%c.python-version", strcmp(dir, "/") ? dir : "", pyhost__fs_sep);
    if (pyenv_version_file(file, out, cap) == 0) {
      pyhost__fmt(origin, ocap, "%s", file);
      return;
    }
    char parent[PYHOST__IPATH];
    dir_name(dir, parent, sizeof parent);
    if (!strcmp(parent, dir) || !parent[0]) break;
    pyhost__fmt(dir, sizeof dir, "%s", parent);
  }
  pyhost__fmt(file, sizeof file, "%s/version", root);
  if (pyenv_version_file(file, out, cap) == 0) {
    pyhost__fmt(origin, ocap, "%s", file);
    return;
  }
  pyhost__fmt(out, cap, "system");
  pyhost__fmt(origin, ocap, "pyenv's default");
}

struct prefix_pick {
  const char *want;
  char best[256];
  unsigned long best_key;
};

/* "3.11" names the newest installed 3.11.x, as pyenv 2.3+ does */
static void pick_prefix(void *ctx, const char *name) {
  struct prefix_pick *p = ctx;
  size_t n = strlen(p->want);
  if (strncmp(name, p->want, n) != 0 || name[n] != '.') return;
  unsigned long key = strtoul(name + n + 1, NULL, 10) + 1;
  if (key > p->best_key) {
    p->best_key = key;
    pyhost__fmt(p->best, sizeof p->best, "%s", name);
  }
}

static int via_pyenv(const char *path, const char *text, int allow_sub, struct pyhost__interp *o,
                     int depth) {
  char root[PYHOST__IPATH], names[1024], origin[PYHOST__IPATH], target[PYHOST__IPATH];
  const char *env = getenv("PYENV_ROOT");
  const char *ex = strstr(text, "export PYENV_ROOT=\"");
  if (env && pyhost__sys_is_absolute(env)) pyhost__fmt(root, sizeof root, "%s", env);
  else if (ex) {
    ex += strlen("export PYENV_ROOT=\"");
    const char *q = strchr(ex, '"');
    pyhost__fmt(root, sizeof root, "%.*s", q ? (int)(q - ex) : 0, ex);
  } else {
    char shims[PYHOST__IPATH];
    dir_name(path, shims, sizeof shims);
    dir_name(shims, root, sizeof root);
  }
  const char *program = base_name(path);
  pyhost__fmt(o->kind, sizeof o->kind, "pyenv shim");
  pyenv_version_name(root, names, sizeof names, origin, sizeof origin);
  char *cursor = names;
  for (char *name; (name = next_field(&cursor, ':'));) {
    if (!name[0]) continue;
    if (!strcmp(name, "system")) {
      char shims[PYHOST__IPATH];
      dir_name(path, shims, sizeof shims);
      if (pyhost__find_on_path(program, shims, target, sizeof target) == 0) {
        how(o, "pyenv version \"system\" (%s): ", origin);
        return resolve(target, allow_sub, o, depth + 1);
      }
      continue;
    }
    char vdir[PYHOST__IPATH];
    pyhost__fmt(vdir, sizeof vdir, "%s/versions/%s", root, name);
    if (pyhost__fs_kind(vdir) != PYHOST__FS_DIR) {
      struct prefix_pick pick = {name, "", 0};
      char versions[PYHOST__IPATH];
      pyhost__fmt(versions, sizeof versions, "%s/versions", root);
      pyhost__sys_list_dir(versions, pick_prefix, &pick);
      if (!pick.best[0]) continue;
      pyhost__fmt(vdir, sizeof vdir, "%s/%s", versions, pick.best);
    }
    pyhost__fmt(target, sizeof target, "%s/bin/%s", vdir, program);
    if (pyhost__sys_is_executable(target)) {
      how(o, "pyenv version %s", base_name(vdir));
      how(o, " (%s): ", origin);
      return resolve(target, allow_sub, o, depth + 1);
    }
  }
  return fail(o, "missing", "%s is a pyenv shim, but pyenv's version (%s) has no such program",
              path, origin);
}

/* An asdf shim (a bash script running `asdf exec "python3" "$@"` under `# asdf-plugin:`
 * comments, asdf's internal/shims) or a mise shim (a symlink to the mise binary, mise's
 * src/shims.rs): the version the tool would choose is read from its pins, and that
 * installation's library taken.  Neither tool is run.  The shims folder sits in the
 * tool's data folder, beside installs/python/<version>. */
static int via_manager_shim(const char *path, const char *tool, int allow_sub, struct pyhost__interp *o,
                            int depth) {
  char shims[PYHOST__IPATH], root[PYHOST__IPATH], installs[PYHOST__IPATH], target[PYHOST__IPATH];
  char msg[1024];
  struct pyhost__pin pin;
  int mise = !strcmp(tool, "mise");
  dir_name(path, shims, sizeof shims);
  dir_name(shims, root, sizeof root);
  pyhost__fmt(o->kind, sizeof o->kind, "%s shim", tool);
  if ((mise ? pyhost__mise_pin(&pin) : pyhost__asdf_pin(&pin)) != 0)
    return fail(o, "missing", "%s is a %s shim, but no python version is set for it", path, tool);
  pyhost__fmt(installs, sizeof installs, "%s%cinstalls%cpython", root, pyhost__fs_sep, pyhost__fs_sep);
  /* mise's shims may live elsewhere (MISE_SHIMS_DIR): then its data folder decides */
  if (mise && pyhost__fs_kind(installs) != PYHOST__FS_DIR && pyhost__sys_tool_dir("mise", root, sizeof root) == 0)
    pyhost__fmt(installs, sizeof installs, "%s%cinstalls%cpython", root, pyhost__fs_sep, pyhost__fs_sep);
  char *cursor = pin.versions;
  for (char *v; (v = next_field(&cursor, ' '));) {
    if (!v[0]) continue;
    if (!strcmp(v, "system")) {
      if (pyhost__find_on_path(base_name(path), shims, target, sizeof target) == 0) {
        pyhost__fmt(msg, sizeof msg, "%s version \"system\" (%s): ", tool, pin.origin);
        how(o, "%s", msg);
        return resolve(target, allow_sub, o, depth + 1);
      }
      continue;
    }
    /* asdf runs exactly the version named; mise also takes "3.12" or "latest" as the
     * newest installed match */
    char prefix[PYHOST__IPATH];
    pyhost__fmt(prefix, sizeof prefix, "%s%c%s", installs, pyhost__fs_sep, v);
    if (pyhost__fs_kind(prefix) != PYHOST__FS_DIR &&
        (!mise || pyhost__pick_install(installs, v, 0, prefix, sizeof prefix) != 0))
      continue;
    pyhost__fmt(o->resolved, sizeof o->resolved, "%s%cbin%c%s", prefix, pyhost__fs_sep, pyhost__fs_sep,
                base_name(path));
    const char *code = "missing";
    if (pyhost__install_library(prefix, o->library, sizeof o->library, &code, msg, sizeof msg) != 0) {
      size_t l = strlen(msg);
      pyhost__fmt(msg + l, sizeof msg - l, " (the %s version from %s)", tool, pin.origin);
      return fail(o, code, "%s%s", msg, NULL);
    }
    unsigned ma, mi;
    char flags[8];
    if (pyhost__sys_lib_name(base_name(o->library), &ma, &mi, flags, sizeof flags)) {
      o->major = ma;
      o->minor = mi;
    }
    pyhost__fmt(msg, sizeof msg, "%s version %s (%s): its installation's library", tool, base_name(prefix),
                pin.origin);
    how(o, "%s", msg);
    return 0;
  }
  pyhost__fmt(msg, sizeof msg, "%s is a %s shim, but %s (the python version from %s) is not installed in %s", path,
              tool, pin.versions, pin.origin, installs);
  return fail(o, "missing", "%s%s", msg, NULL);
}

/* A mise shim is a symlink to the mise binary itself. */
static int is_mise_shim(const char *path) {
  char real[PYHOST__IPATH];
  if (pyhost__fs_realpath(path, real, sizeof real) != 0) return 0;
  const char *b = base_name(real);
  return !strcmp(b, "mise") || !strcmp(b, "mise.exe");
}

/* `exec /abs/python3.8 "$@"` or `exec "/abs/python3"`: the program a wrapper runs. */
static int exec_target(const char *text, char *out, size_t cap) {
  for (const char *p = strstr(text, "exec "); p; p = strstr(p + 1, "exec ")) {
    if (p != text && p[-1] != '\n' && p[-1] != ' ' && p[-1] != '\t' && p[-1] != ';') continue;
    const char *q = p + 5;
    while (*q == ' ') q++;
    char quote = (*q == '"' || *q == '\'') ? *q++ : 0;
    size_t n = 0;
    while (q[n] && q[n] != '\n' && (quote ? q[n] != quote : (q[n] != ' ' && q[n] != '\t'))) n++;
    if (!n || n >= cap || q[0] != '/') continue; /* variables, relative names: unknown */
    memcpy(out, q, n);
    out[n] = '\0';
    if (!strncmp(base_name(out), "python", 6)) return 0;
  }
  return -1;
}

/* ---- asking the interpreter ---- */

static int ask(const char *path, struct pyhost__interp *o) {
  static const char code[] =
      "import sys, sysconfig as s\n"
      "g = s.get_config_var\n"
      "print('\\n'.join(str(x) for x in (sys.version_info[0], sys.version_info[1], g('LIBDIR'),"
      " g('INSTSONAME'), g('LDLIBRARY'), g('Py_ENABLE_SHARED'), sys.prefix,"
      " getattr(sys, 'base_prefix', sys.prefix), sys.executable)))\n";
  const char *argv[] = {path, "-E", "-s", "-c", code, NULL};
  char out[8192], err[512];
  int rc = pyhost__sys_run(argv, 10000, out, sizeof out, err, sizeof err);
  if (rc != 0) {
    if (rc > 0) pyhost__fmt(err, sizeof err, "it exited with status %d", rc);
    return fail(o, "unresolved", "%s: cannot tell its library from its files, and running it failed: %s",
                path, err);
  }
  char *f[9] = {0};
  int n = 0;
  char *cursor = out;
  for (char *line; n < 9 && (line = next_field(&cursor, '\n'));) f[n++] = line;
  if (n < 9) return fail(o, "unresolved", "%s: its answer about sysconfig was incomplete%s", path, NULL);
  o->major = (unsigned)atoi(f[0]);
  o->minor = (unsigned)atoi(f[1]);
  if (strcmp(f[6], f[7]) != 0 && !o->venv[0]) {
    pyhost__fmt(o->venv, sizeof o->venv, "%s", f[6]);
    pyhost__fmt(o->program, sizeof o->program, "%s", f[8]);
  }
  const char *names[] = {f[3], f[4]};
  for (int i = 0; i < 2; i++) {
    pyhost__fmt(o->library, sizeof o->library, "%s/%s", f[2], names[i]);
    unsigned ma, mi;
    char flags[8];
    if (strcmp(names[i], "None") && pyhost__sys_lib_name(names[i], &ma, &mi, flags, sizeof flags) &&
        pyhost__fs_kind(o->library) == PYHOST__FS_FILE) {
      how(o, "%s", "asked the interpreter (sysconfig LIBDIR)");
      return 0;
    }
  }
  o->library[0] = '\0';
  if (o->major == 2) return fail(o, "python2", "%s is Python 2%s", path, NULL);
  return fail(o, "no-shared-library",
              "%s was built without a shared library (Py_ENABLE_SHARED=0, no libpython in %s); "
              "rebuild it with --enable-shared",
              path, f[2]);
}

/* ---- the walk ---- */

static int via_executable(const char *path, int allow_sub, struct pyhost__interp *o) {
  char real[PYHOST__IPATH], prefix[PYHOST__IPATH], bindir[PYHOST__IPATH], machine[32];
  if (pyhost__fs_realpath(path, real, sizeof real) != 0) pyhost__fmt(real, sizeof real, "%s", path);
  pyhost__fmt(o->resolved, sizeof o->resolved, "%s", real);
  struct pyhost__elf e;
  if (pyhost__elf_read(real, &e) != 0) return fail(o, "unreadable", "%s cannot be read%s", real, NULL);
  unsigned mine = pyhost__elf_native_machine();
  if (e.is_elf && mine && e.machine != mine)
    return fail(o, "wrong-architecture", "%s is built for another architecture than this %s host",
                real, pyhost__elf_arch_text(mine, pyhost__elf_native_class(), machine, sizeof machine));
  unsigned major = 0, minor = 0;
  version_of_name(base_name(real), &major, &minor);
  if (!major) version_of_name(base_name(path), &major, &minor);
  if (!o->major) {
    o->major = major;
    o->minor = minor;
  }
  dir_name(real, bindir, sizeof bindir);
  dir_name(bindir, prefix, sizeof prefix);
  if (e.needed_python[0]) {
    unsigned ma, mi;
    char flags[8];
    if (pyhost__sys_lib_name(e.needed_python, &ma, &mi, flags, sizeof flags)) {
      o->major = ma;
      o->minor = mi;
    }
    if (in_runpath(e.runpath, bindir, e.needed_python, o->library, sizeof o->library) == 0) {
      how(o, "DT_NEEDED %s in its RUNPATH", e.needed_python);
      return 0;
    }
    char p[PYHOST__IPATH];
    static const char *const subs[] = {"lib", "lib64"};
    for (size_t i = 0; i < 2; i++) {
      pyhost__fmt(p, sizeof p, "%s/%s/%s", prefix, subs[i], e.needed_python);
      if (pyhost__fs_kind(p) == PYHOST__FS_FILE) {
        pyhost__fmt(o->library, sizeof o->library, "%s", p);
        how(o, "DT_NEEDED %s in its installation", e.needed_python);
        return 0;
      }
    }
    if (o->major && pyhost__prefix_library(prefix, o->major, o->minor, o->library, sizeof o->library) == 0) {
      how(o, "DT_NEEDED %s in its installation", e.needed_python);
      return 0;
    }
  } else {
    /* POSIX keeps the library in bin/../lib, Windows beside the executable */
    const char *const homes[] = {prefix, bindir};
    for (int i = 0; i < 2; i++) {
      int found = o->major ? pyhost__prefix_library(homes[i], o->major, o->minor, o->library,
                                                    sizeof o->library) == 0
                           : prefix_only_library(homes[i], o) == 0;
      if (found) {
        how(o, "%s", e.is_elf ? "statically linked interpreter; the shared library its "
                                "installation ships for the same version"
                              : "its installation's library");
        return 0;
      }
    }
    if (e.is_elf && o->major == 2) return fail(o, "python2", "%s is Python 2%s", real, NULL);
    /* a python-build-standalone build says why it is static (PYTHON.json, musl) */
    char why[1024], none[PYHOST__IPATH];
    const char *code = "missing";
    if (e.is_elf && pyhost__install_library(prefix, none, sizeof none, &code, why, sizeof why) != 0 &&
        strstr(why, "python-build-standalone"))
      return fail(o, "no-shared-library", "%s%s", why, NULL);
    if (e.is_elf && o->major)
      return fail(o, "no-shared-library",
                  "%s is statically linked (built without --enable-shared): it needs no libpython "
                  "and its installation %s has none; rebuild it with --enable-shared or install "
                  "its shared library",
                  real, prefix);
  }
  if (allow_sub) return ask(real, o);
  return fail(o, "unresolved",
              "%s: its files do not say which libpython it runs, and asking it is switched off%s",
              real, NULL);
}

static int resolve(const char *path, int allow_sub, struct pyhost__interp *o, int depth) {
  if (depth > MAX_DEPTH) return fail(o, "unresolved", "%s: too many levels of wrappers%s", path, NULL);
  if (!pyhost__sys_is_absolute(path))
    return fail(o, "relative-path", "%s is a relative path; pyhost never runs or loads from "
                "the current directory%s", path, NULL);
  /* a venv first: its bin/python may be a link to a base installation that is gone,
   * and pyvenv.cfg then says which */
  char venv[PYHOST__IPATH];
  char *cfg = o->venv[0] ? NULL : find_pyvenv(path, venv, sizeof venv);
  if (cfg) {
    pyhost__fmt(o->venv, sizeof o->venv, "%s", venv);
    int rc = via_venv(path, cfg, allow_sub, o, depth);
    pyhost__free(cfg);
    return rc;
  }
  if (is_mise_shim(path)) return via_manager_shim(path, "mise", allow_sub, o, depth);
  enum pyhost__fs_kind k = pyhost__fs_kind(path);
  if (k == PYHOST__FS_MISSING) return fail(o, "missing", "%s does not exist%s", path, NULL);
  if (k != PYHOST__FS_FILE) return fail(o, "missing", "%s is not a file%s", path, NULL);
  if (!pyhost__fs_readable(path)) return fail(o, "unreadable", "%s is not readable%s", path, NULL);
  struct pyhost__elf e;
  if (pyhost__elf_read(path, &e) != 0) return fail(o, "unreadable", "%s cannot be read%s", path, NULL);
  if (e.is_script) {
    char *text, err[128], target[PYHOST__IPATH];
    size_t len;
    if (pyhost__fs_read(path, &text, &len, err, sizeof err) != 0)
      return fail(o, "unreadable", "%s cannot be read: %s", path, err);
    int rc;
    if (strstr(text, "asdf exec")) {
      rc = via_manager_shim(path, "asdf", allow_sub, o, depth);
    } else if (strstr(text, "pyenv") && strstr(text, " exec ")) {
      rc = via_pyenv(path, text, allow_sub, o, depth);
    } else if (exec_target(text, target, sizeof target) == 0) {
      if (!strcmp(o->kind, "interpreter")) pyhost__fmt(o->kind, sizeof o->kind, "script");
      how(o, "wrapper script execs %s: ", target);
      rc = resolve(target, allow_sub, o, depth + 1);
    } else {
      if (!strcmp(o->kind, "interpreter")) pyhost__fmt(o->kind, sizeof o->kind, "script");
      pyhost__fmt(o->resolved, sizeof o->resolved, "%s", path);
      rc = allow_sub ? ask(path, o)
                     : fail(o, "unresolved",
                            "%s is a script pyhost cannot follow without running it, and "
                            "running interpreters is switched off%s",
                            path, NULL);
    }
    pyhost__free(text);
    return rc;
  }
  return via_executable(path, allow_sub, o);
}

int pyhost__verdict_file_explained(const char *path, struct pyhost__verdict *v) {
  int kind;
  int rc = pyhost__verdict_file(path, v, &kind);
  if (kind != PYHOST__LIB_PROGRAM) return rc;
  /* a python where its library was expected: name the library, from its files only
   * (any other program would be taken for one by its installation's library) */
  const char *base = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') base = p + 1;
  if (strncmp(base, "python", 6) != 0) return rc;
  struct pyhost__interp *r = pyhost__malloc(sizeof *r);
  if (!r) return rc;
  size_t used = strlen(v->reason), cap = sizeof v->reason;
  if (pyhost__interp_resolve(path, 0, r) == 0 && r->library[0])
    pyhost__fmt(v->reason + used, cap - used,
                "; it is a Python interpreter, whose library is %s: give pyhost that library, "
                "or this program as the interpreter (pyhost --interpreter, PYHOST_PYTHON, "
                "pyhost_config_set_interpreter)",
                r->library);
  else if (r->major)
    pyhost__fmt(v->reason + used, cap - used, "; it is a Python interpreter: %s", r->reason);
  pyhost__free(r);
  return rc;
}

int pyhost__interp_resolve(const char *path, int allow_subprocess, struct pyhost__interp *out) {
  memset(out, 0, sizeof *out);
  pyhost__fmt(out->kind, sizeof out->kind, "interpreter");
  if (path[0] && !pyhost__fs_has_dir(path)) {
    /* a bare name ("python3") has no directory: PATH's, as a shell finds it (never the
     * current directory); "./python" and "dir/python" stay relative paths, refused */
    char found[PYHOST__IPATH];
    if (pyhost__find_on_path(path, NULL, found, sizeof found) != 0)
      return fail(out, "missing", "%s is not on PATH (a bare name is looked up there, as a shell does)%s",
                  path, NULL);
    how(out, "%s on PATH: ", found);
    return resolve(found, allow_subprocess, out, 0);
  }
  return resolve(path, allow_subprocess, out, 0);
}
