/* inspect.c: pyhost_inspect_library, what `pyhost --check LIB` prints before it tries
 * to start the library: the same checks pyhost_init makes, each one reported instead
 * of stopping at the first failure. */
#include "discovery.h"
#include "elf.h"
#include "tools.h"

#include <string.h>

struct info {
  pyhost_library_info pub; /* first: the public pointer is the allocation */
  char message[2048], real[PYHOST__PATH_MAX], version_text[256], arch[64];
  char missing[8192], home[PYHOST__PATH_MAX], probe[2048], tool[PYHOST__PATH_MAX];
};

static int verdict(struct info *i, int status, const char *fmt, const char *a) {
  if (i->pub.status == PYHOST_OK) {
    i->pub.status = status;
    pyhost__fmt(i->message, sizeof i->message, fmt, a);
  }
  return status;
}

static void count_rows(struct info *i, void *lib, unsigned runtime) {
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, i->missing, sizeof i->missing);
  for (size_t r = 0; r < pyhost__pyapi_nrows; r++) {
    const struct pyapi_row *row = &pyhost__pyapi_rows[r];
    int present = pyhost__dl_sym(lib, row->name) != NULL;
    if (row->need == PYAPI_NEED_REQ) {
      i->pub.required++;
      if (present) continue;
      i->pub.required_missing++;
    } else if (row->added > runtime) {
      i->pub.optional_later++;
      continue;
    } else {
      i->pub.optional++;
      if (present) continue;
      i->pub.optional_missing++;
    }
    pyhost__strbuf_printf(&sb, "%s%s", sb.len ? " " : "", row->name);
  }
}

static void examine(struct info *i, const char *path) {
  pyhost_library_info *p = &i->pub;
  if (pyhost__fs_has_dir(path)) {
    char why[1024], text[PYHOST__PATH_MAX + 1100];
    int rc = pyhost__libcheck_explained(path, why, sizeof why);
    if (rc) {
      pyhost__fmt(text, sizeof text, "%s: %s%s", path, rc == PYHOST_DAMAGED ? "the file is damaged: " : "", why);
      return (void)verdict(i, rc, "%s", text);
    }
    if (pyhost__fs_realpath(path, i->real, sizeof i->real) != 0) pyhost__fmt(i->real, sizeof i->real, "%s", path);
    struct pyhost__elf e;
    char machine[32];
    unsigned mine = pyhost__sys_machine(machine, sizeof machine);
    if (pyhost__elf_read(i->real, &e) == 0 && e.is_elf) {
      int wide = sizeof(void *) == 8 ? 2 : 1;
      const char *name = e.machine == 62 ? "x86_64" : e.machine == 3 ? "i386" : e.machine == 183 ? "aarch64"
                       : e.machine == 40 ? "arm" : e.machine == 243 ? "riscv" : "other";
      pyhost__fmt(i->arch, sizeof i->arch, "%s (ELF%d)", name, e.elf_class == 2 ? 64 : 32);
      p->architecture_ok = (!mine || e.machine == mine) && e.elf_class == wide;
      if (!p->architecture_ok)
        return (void)verdict(i, PYHOST_NOLIB, "%s is built for another architecture", i->real);
    } else {
      p->architecture_ok = 1; /* not ELF: the loader decides */
    }
  } else {
    pyhost__fmt(i->real, sizeof i->real, "%s", path);
    p->architecture_ok = 1;
  }
  char err[2048];
  void *lib = pyhost__dl_open(path, 0, err, sizeof err);
  if (!lib) return (void)verdict(i, PYHOST_NOLIB, "the system loader says: %s", err);
  struct pyapi_probe pr;
  if (pyhost__pyapi_probe(pyhost__dl_sym, lib, &pr, err, sizeof err) != 0) {
    verdict(i, PYHOST_NOTPYTHON, "not a CPython library: %s", err);
    pyhost__dl_close(lib);
    return;
  }
  char real[PYHOST__PATH_MAX];
  void *addr = pyhost__dl_sym(lib, "Py_GetVersion");
  if (pyhost__dl_path(lib, addr, real, sizeof real) == 0 &&
      pyhost__fs_realpath(real, i->real, sizeof i->real) != 0)
    pyhost__fmt(i->real, sizeof i->real, "%s", real);
  p->hexversion = pr.hexversion;
  pyhost__fmt(i->version_text, sizeof i->version_text, "%s", pr.version_text);
  p->free_threaded = pr.free_threaded;
  p->debug = pr.debug;
  p->trace_refs = pr.trace_refs;
  unsigned major = (unsigned)(pr.hexversion >> 24), minor = (unsigned)((pr.hexversion >> 16) & 0xFF);
  unsigned runtime = PYHOST__V(major, minor);
  count_rows(i, lib, runtime);
  pyhost__dl_close(lib);
  if (major == 2) verdict(i, PYHOST_PYTHON2, "%s", "Python 2; pyhost embeds Python 3");
  else if (major != 3 || pr.hexversion < PYHOST_LIMITED_API_HEX)
    verdict(i, PYHOST_VERSION, "%s", "older than the stable-ABI floor this pyhost was built for");
  if (pr.free_threaded) verdict(i, PYHOST_FREETHREADED, "%s", "a free-threaded build: no stable ABI before 3.15");
  if (pr.trace_refs) verdict(i, PYHOST_BUILD, "%s", "built with Py_TRACE_REFS");
  if (p->required_missing || p->optional_missing)
    verdict(i, PYHOST_NOSYM, "stable-ABI symbols are missing: %s", i->missing);
  if (major == 3 && !pyhost__find_home(i->real, runtime, i->home, sizeof i->home, i->probe, sizeof i->probe)) {
    i->home[0] = '\0';
    verdict(i, PYHOST_NOHOME, "no standard library near it (looked for %s)", i->probe);
  } else if (major == 3) {
    pyhost__fmt(i->probe, sizeof i->probe, "%s", i->home);
  }
}

int pyhost_inspect_library(const char *path, pyhost_library_info **out) {
  if (!out) return PYHOST_MISUSE;
  *out = NULL;
  if (!path) return PYHOST_MISUSE;
  struct info *i = pyhost__calloc(1, sizeof *i);
  if (!i) return PYHOST_NOMEM;
  pyhost_library_info *p = &i->pub;
  p->message = i->message;
  p->real_path = i->real;
  p->version_text = i->version_text;
  p->architecture = i->arch;
  p->missing = i->missing;
  p->home = i->home;
  p->home_probe = i->probe;
  p->tool = i->tool;
  examine(i, path);
  pyhost__tool_of(i->real[0] ? i->real : path, i->tool, sizeof i->tool);
  *out = p;
  return PYHOST_OK;
}

void pyhost_library_info_free(pyhost_library_info *info) {
  pyhost__free(info); /* the struct info it starts */
}
