/* inspect.c: pyhost_inspect_library, what `pyhost --check LIB` prints before it tries
 * to start the library: the same checks pyhost_init makes, each one reported instead
 * of stopping at the first failure. */
#include "discovery.h"
#include "tools.h"

#include <string.h>

struct info {
  pyhost_library_info pub; /* first: the public pointer is the allocation */
  char message[2048], real[PYHOST__PATH_MAX], version_text[256], arch[64];
  char missing[8192], home[PYHOST__PATH_MAX], probe[2048], tool[PYHOST__PATH_MAX];
};

/* The verdict is the first refusal (verdict.h); inspection goes on to report the rest. */
static void verdict(struct info *i, const struct pyhost__verdict *v) {
  if (i->pub.status == PYHOST_OK && v->status != PYHOST_OK) {
    i->pub.status = v->status;
    pyhost__fmt(i->message, sizeof i->message, "%s", v->reason);
  }
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
  struct pyhost__verdict v;
  p->architecture_ok = 1; /* not ELF, or a bare name: the loader decides */
  if (pyhost__fs_has_dir(path)) {
    struct pyhost__elf e;
    if (pyhost__elf_read(path, &e) == 0 && e.is_elf)
      pyhost__elf_arch_text(e.machine, e.elf_class, i->arch, sizeof i->arch);
    int resolved = pyhost__fs_realpath(path, i->real, sizeof i->real) == 0; /* "" when missing */
    if (pyhost__verdict_file_explained(path, &v)) {
      if (!strcmp(v.code, "wrong-architecture")) p->architecture_ok = 0;
      return verdict(i, &v);
    }
    if (!resolved) pyhost__fmt(i->real, sizeof i->real, "%s", path);
  } else {
    pyhost__fmt(i->real, sizeof i->real, "%s", path);
  }
  char err[2048];
  void *lib = pyhost__dl_open(path, 0, err, sizeof err);
  if (!lib) return (void)pyhost__verdict_unloaded(path, err, &v), verdict(i, &v);
  struct pyhost__policy any = {0, 0, 0, 1}; /* as pyhost_init takes a named library */
  struct pyapi_probe pr;
  struct pyapi *table = pyhost__malloc(sizeof *table);
  if (!table) {
    pyhost__verdict_set(&v, PYHOST_NOMEM, "", "out of memory inspecting the library");
    verdict(i, &v);
    pyhost__dl_close(lib);
    return;
  }
  int rc = pyhost__verdict_library(pyhost__dl_sym, lib, &any, &pr, table, &v);
  pyhost__free(table);
  verdict(i, &v);
  if (rc == PYHOST_NOTPYTHON) return (void)pyhost__dl_close(lib);
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
  if (major == 3) {
    pyhost__verdict_home(i->real, runtime, i->home, sizeof i->home, i->probe, sizeof i->probe, &v);
    verdict(i, &v);
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
