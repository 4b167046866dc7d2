/* verdict.c: is this library acceptable (verdict.h)?  Every refusal's status, reason
 * code and sentence is written here and nowhere else. */
#include "verdict.h"
#include "libcheck.h"
#include "pyhost.h"

#include <stdarg.h>
#include <string.h>

int pyhost__verdict_set(struct pyhost__verdict *v, int status, const char *code, const char *fmt, ...) {
  struct pyhost__strbuf sb;
  va_list ap;
  v->status = status;
  v->code = code;
  pyhost__strbuf_init(&sb, v->reason, sizeof v->reason);
  va_start(ap, fmt);
  pyhost__strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  return status;
}

int pyhost__verdict_ok(struct pyhost__verdict *v) {
  v->status = PYHOST_OK;
  v->code = "";
  v->reason[0] = '\0';
  return PYHOST_OK;
}

/* ---- 1. the file ---- */

int pyhost__verdict_file(const char *path, struct pyhost__verdict *v, int *kind) {
  char why[1024];
  int k, rc = pyhost__libcheck_path_ex(path, why, sizeof why, &k);
  if (kind) *kind = k;
  switch (rc) {
  case PYHOST_OK: return pyhost__verdict_ok(v);
  case PYHOST_NOTFOUND:
    return pyhost__verdict_set(v, rc, pyhost__fs_kind(path) == PYHOST__FS_MISSING ? "missing" : "unreadable",
                               "%s", why);
  case PYHOST_ISDIR:
    return pyhost__verdict_set(v, rc, "missing",
                               "it is a directory; name the libpython3.X shared library inside its "
                               "lib/ directory");
  case PYHOST_DAMAGED: return pyhost__verdict_set(v, rc, "damaged", "the file is damaged: %s", why);
  default: /* NOLIB */
    return pyhost__verdict_set(v, rc,
                               k == PYHOST__LIB_OTHER_MACHINE ? "wrong-architecture"
                               : k == PYHOST__LIB_PROGRAM     ? "not-python"
                                                              : "missing",
                               "%s", why);
  }
}

/* ---- 2. the library ---- */

int pyhost__verdict_unloaded(const char *path, const char *err, struct pyhost__verdict *v) {
  if (pyhost__fs_has_dir(path))
    return pyhost__verdict_set(v, PYHOST_NOLIB, "not-python", "the system loader says: %s", err);
  char where[1024], hint[256] = "";
  pyhost__sys_loader_search(where, sizeof where);
  if (pyhost__fs_kind(path) == PYHOST__FS_FILE)
    pyhost__fmt(hint, sizeof hint, "; a file of that name is in the current directory: give it as .%c%.200s",
                pyhost__fs_sep, path);
  return pyhost__verdict_set(v, PYHOST_NOLIB, "not-python",
                             "a bare name (no directory), which the system loader searched for in "
                             "%s; it says: %s%s",
                             where, err, hint);
}

static unsigned major_of(unsigned long v) { return (unsigned)(v >> 24); }
static unsigned minor_of(unsigned long v) { return (unsigned)((v >> 16) & 0xFF); }

int pyhost__verdict_build(const struct pyapi_probe *pr, const struct pyhost__policy *pol,
                          struct pyhost__verdict *v) {
  unsigned long hex = pr->hexversion, mm = hex >> 16, floor = PYHOST_LIMITED_API_HEX;
  unsigned major = major_of(hex), minor = minor_of(hex);
  /* a candidate judged before it was opened says so: its name may not tell the truth */
  const char *it = pr->by_name ? "its file name says it is" : "it is";
  const char *later = pr->by_name ? " (not opened: a Python already runs in this process)" : "";
  if (major == 2)
    return pyhost__verdict_set(v, PYHOST_PYTHON2, "python2", "%s Python %u.%u; pyhost embeds Python 3 (%u.%u or newer)%s",
                               it, major, minor, major_of(floor), minor_of(floor), later);
  if (major != 3)
    return pyhost__verdict_set(v, PYHOST_VERSION, "out-of-range", "%s Python %u.%u; pyhost embeds Python 3%s",
                               it, major, minor, later);
  if (pr->free_threaded)
    return pyhost__verdict_set(v, PYHOST_FREETHREADED, "free-threaded",
                               "%s a free-threaded Python %u.%u build (Py_GIL_DISABLED): its object "
                               "layout has no stable ABI before 3.15; use the GIL build of the same "
                               "version%s",
                               it, major, minor, later);
  if (pr->trace_refs)
    return pyhost__verdict_set(v, PYHOST_BUILD, "trace-refs",
                               "it is a Python %u.%u built with Py_TRACE_REFS, which changes the "
                               "object layout the stable ABI relies on (fixed only in 3.13)",
                               major, minor);
  if (hex < floor)
    return pyhost__verdict_set(v, PYHOST_VERSION, "out-of-range",
                               "%s Python %u.%u, older than %u.%u, the oldest this pyhost was built for%s",
                               it, major, minor, major_of(floor), minor_of(floor), later);
  if (pol->min_python && mm < (pol->min_python >> 16))
    return pyhost__verdict_set(v, PYHOST_VERSION, "out-of-range",
                               "%s Python %u.%u, older than %u.%u, the oldest the host accepts%s", it,
                               major, minor, major_of(pol->min_python), minor_of(pol->min_python), later);
  if (pol->max_python && mm > (pol->max_python >> 16))
    return pyhost__verdict_set(v, PYHOST_VERSION, "out-of-range",
                               "%s Python %u.%u, newer than %u.%u, the newest the host accepts%s", it,
                               major, minor, major_of(pol->max_python), minor_of(pol->max_python), later);
  if (pol->python_minor && mm != (pol->python_minor >> 16))
    return pyhost__verdict_set(v, PYHOST_VERSION, "out-of-range",
                               "%s Python %u.%u, not %u.%u, the version the host asks for%s", it, major,
                               minor, major_of(pol->python_minor), minor_of(pol->python_minor), later);
  if (pr->debug && !pol->allow_debug)
    return pyhost__verdict_set(v, PYHOST_BUILD, "debug",
                               "%s a debug build of Python %u.%u (Py_DEBUG); allow it with "
                               "pyhost_config_set_allow_debug%s",
                               it, major, minor, later);
  return pyhost__verdict_ok(v);
}

int pyhost__verdict_library(pyhost__sym_fn sym, void *lib, const struct pyhost__policy *pol,
                            struct pyapi_probe *probe, struct pyapi *table, struct pyhost__verdict *v) {
  char err[sizeof v->reason];
  memset(table, 0, sizeof *table);
  int rc = pyhost__pyapi_probe(sym, lib, probe, err, sizeof err);
  if (rc) return pyhost__verdict_set(v, rc, "not-python", "%s", err);
  if ((rc = pyhost__verdict_build(probe, pol, v))) return rc;
  rc = pyhost__pyapi_load(table, probe->hexversion, sym, lib, err, sizeof err);
  if (rc) return pyhost__verdict_set(v, rc, "missing-symbols", "%s", err);
  return pyhost__verdict_ok(v);
}
