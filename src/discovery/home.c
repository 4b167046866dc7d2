/* home.c: which installation a library runs on.
 *
 * Given only a library, Python would look for its standard library next to the
 * *host* executable or through `python3` on PATH, and could mix one version's runtime
 * with another's stdlib.  So the home is derived from the library's real path: the
 * nearest ancestor directory that holds lib/python3.X (POSIX, macOS frameworks) or
 * Lib (Windows).  A home without a standard library makes CPython abort or exit the
 * process, so it is refused here, before Py_Initialize.
 */
#include "discovery.h"

#include <stdlib.h>
#include <string.h>

static int has_stdlib(const char *prefix, unsigned runtime, char *probe, size_t cap) {
  unsigned major = runtime >> 8, minor = runtime & 0xFF;
  char p[PYHOST__PATH_MAX];
  static const char *const layouts[] = {"%s/lib/python%u.%u/encodings", "%s/lib64/python%u.%u/encodings",
                                        "%s/Lib/encodings"};
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
    pyhost__fmt(p, sizeof p, layouts[i], prefix, major, minor);
    if (pyhost__fs_kind(p) == PYHOST__FS_DIR) return 1;
  }
  pyhost__fmt(p, sizeof p, "%s/lib/python%u%u.zip", prefix, major, minor);
  if (pyhost__fs_kind(p) == PYHOST__FS_FILE) return 1;
  pyhost__fmt(probe, cap, "%s/lib/python%u.%u/encodings", prefix, major, minor);
  return 0;
}

/* Cuts path at its last separator; 0 when there is none left. */
static int parent_dir(char *path) {
  char *cut = NULL;
  for (char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') cut = p;
  if (!cut) return 0;
  if (cut == path) cut[1] = '\0'; /* "/" */
  else *cut = '\0';
  return cut != path;
}

int pyhost__verdict_home(const char *library, unsigned runtime, char *home, size_t cap,
                         char *tried, size_t tcap, struct pyhost__verdict *v) {
  char dir[PYHOST__PATH_MAX], probe[PYHOST__PATH_MAX], looked[2048];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, looked, sizeof looked);
  pyhost__fmt(dir, sizeof dir, "%s", library);
  /* the library's directory, then up to three parents: lib/, lib/<multiarch>/,
   * Python.framework/Versions/3.X/ and a Windows install dir are all covered */
  for (int up = 0; up < 4 && parent_dir(dir); up++) {
    if (has_stdlib(dir, runtime, probe, sizeof probe)) {
      if (home) pyhost__fmt(home, cap, "%s", dir);
      if (tried) pyhost__fmt(tried, tcap, "%s", dir);
      return pyhost__verdict_ok(v);
    }
    pyhost__strbuf_printf(&sb, "%s%s", up ? ", " : "", probe);
  }
  if (home) home[0] = '\0';
  if (tried) pyhost__fmt(tried, tcap, "%s", looked);
  return pyhost__verdict_set(v, PYHOST_NOHOME, "no-home",
                             "no standard library for Python %u.%u near it (looked for %s); set "
                             "the home with pyhost_config_set_home",
                             runtime >> 8, runtime & 0xFF, looked);
}

int pyhost__installation_program(const char *home, unsigned runtime, char *out, size_t cap) {
  static const char *const names[] = {"%s/bin/python%u.%u", "%s/bin/python%u", "%s/python.exe"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    pyhost__fmt(out, cap, names[i], home, runtime >> 8, runtime & 0xFF);
    if (pyhost__fs_kind(out) == PYHOST__FS_FILE) return 0;
  }
  out[0] = '\0';
  return -1;
}

/* The installation's own interpreter.  Without one (a library copied into an
 * application's folder with its standard library), Python left to itself would take
 * whatever `python3` PATH finds, an unrelated interpreter, for sys.executable: it is
 * given the host program instead, so nothing is searched, and sys.executable is set
 * to "" after init (pyhost.c), Python's own answer when it has no interpreter. */
static void choose_program(pyhost *h, unsigned runtime, char *out, size_t cap) {
  if (pyhost__installation_program(h->home, runtime, out, cap) == 0) return;
  h->no_executable = 1;
  if (pyhost__dl_program_path(out, cap) != 0) out[0] = '\0';
}

int pyhost__choose_home(pyhost *h, unsigned runtime) {
  char probe[PYHOST__PATH_MAX];
  /* isolated: PYTHONHOME is one of the PYTHON* variables Python must not see */
  const char *env = h->cfg.isolated ? NULL : getenv("PYTHONHOME");
  int set_home = 1;
  if (h->cfg.home) {
    pyhost__fmt(h->home, sizeof h->home, "%s", h->cfg.home);
    if (!has_stdlib(h->home, runtime, probe, sizeof probe))
      return pyhost__set_error(h, PYHOST_NOHOME,
                               "the configured Python home %s has no standard library for Python "
                               "%u.%u (no %s); CPython would abort the process",
                               h->home, runtime >> 8, runtime & 0xFF, probe);
  } else if (env && env[0]) {
    /* PYTHONHOME may be "prefix:exec_prefix"; Python itself reads it */
    pyhost__fmt(h->home, sizeof h->home, "%s", env);
    char *colon = strchr(h->home, ':');
    if (colon && colon != h->home + 1) *colon = '\0'; /* not a drive letter */
    if (!has_stdlib(h->home, runtime, probe, sizeof probe))
      return pyhost__set_error(h, PYHOST_NOHOME,
                               "PYTHONHOME=%s has no standard library for Python %u.%u (no %s); "
                               "unset it or point it at that Python's prefix",
                               env, runtime >> 8, runtime & 0xFF, probe);
    set_home = 0;
  } else {
    struct pyhost__verdict v;
    if (pyhost__verdict_home(h->library_path, runtime, h->home, sizeof h->home, NULL, 0, &v))
      return pyhost__set_error(h, v.status, "cannot use %s: %s", h->library_path, v.reason);
    /* A host-chosen program name (a venv's python) lets Python find its own prefix. */
    set_home = h->cfg.program_name == NULL;
  }
  char program[PYHOST__PATH_MAX];
  if (h->cfg.program_name) pyhost__fmt(program, sizeof program, "%s", h->cfg.program_name);
  else choose_program(h, runtime, program, sizeof program);
  if ((set_home && !(h->w_home = pyhost__widen(h->home))) ||
      (program[0] && !(h->w_program = pyhost__widen(program))))
    return pyhost__set_error(h, PYHOST_NOMEM, "out of memory");
  return PYHOST_OK;
}
