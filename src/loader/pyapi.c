/* pyapi.c: the loader and the checks, expanded from pyapi_list.h.
 *
 * Order matters: Py_GetVersion is resolved and parsed first, so that a Python 2, a
 * too-old or a free-threaded library is refused before any other symbol is looked at
 * (a libpython2.7 lacks a sixth of the table; the real reason is its version).
 */
#include "pyapi.h"
#include "pyhost.h"
#include "platform.h"

#include <string.h>

struct pyapi pyhost__py;

#define PYAPI_NEED_ROW_REQ PYAPI_NEED_REQ
#define PYAPI_NEED_ROW_OPT PYAPI_NEED_OPT

const struct pyapi_row pyhost__pyapi_rows[] = {
#define PYAPI_FN(ret, name, params, major, minor, need) \
  {#name, offsetof(struct pyapi, name), PYHOST__V(major, minor), PYAPI_KIND_FN, PYAPI_NEED_ROW_##need},
#define PYAPI_DATA(type, name, major, minor, need) \
  {#name, offsetof(struct pyapi, name), PYHOST__V(major, minor), PYAPI_KIND_DATA, PYAPI_NEED_ROW_##need},
#include "pyapi_list.h"
#undef PYAPI_FN
#undef PYAPI_DATA
};
const size_t pyhost__pyapi_nrows = sizeof pyhost__pyapi_rows / sizeof pyhost__pyapi_rows[0];

/* A REQ row newer than the floor would make the floor a lie: refuse to compile. */
#define PYAPI_FN(ret, name, params, major, minor, need) PYAPI_FLOOR_CHECK_##need(name, major, minor)
#define PYAPI_DATA(type, name, major, minor, need) PYAPI_FLOOR_CHECK_##need(name, major, minor)
#define PYAPI_FLOOR_CHECK_REQ(name, major, minor) \
  _Static_assert((((major) << 24) | ((minor) << 16)) <= Py_LIMITED_API, \
                 #name " is REQ but newer than the build floor: make it OPT");
#define PYAPI_FLOOR_CHECK_OPT(name, major, minor)
#include "pyapi_list.h"
#undef PYAPI_FN
#undef PYAPI_DATA

unsigned long pyhost__parse_version(const char *text) {
  unsigned long part[3] = {0, 0, 0};
  int n = 0;
  const char *p = text;
  if (!p) return 0;
  while (n < 3) {
    if (*p < '0' || *p > '9') break;
    unsigned long v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 4) v = v * 10 + (unsigned long)(*p++ - '0'), digits++;
    if (*p >= '0' && *p <= '9') return 0; /* absurdly long component */
    part[n++] = v;
    if (*p != '.') break;
    p++;
  }
  if (n < 2 || part[0] > 255 || part[1] > 255 || part[2] > 255) return 0;
  unsigned long level = 0xF, serial = 0; /* final */
  if (*p == 'a' || *p == 'b' || (p[0] == 'r' && p[1] == 'c')) {
    level = *p == 'a' ? 0xA : *p == 'b' ? 0xB : 0xC;
    p += level == 0xC ? 2 : 1;
    while (*p >= '0' && *p <= '9' && serial < 16) serial = serial * 10 + (unsigned long)(*p++ - '0');
    if (serial > 15) serial = 15;
  }
  return (part[0] << 24) | (part[1] << 16) | (part[2] << 8) | (level << 4) | serial;
}

/* Symbols that only a free-threaded (Py_GIL_DISABLED) libpython exports: the inline
 * Py_DECREF of those headers calls them. */
static const char *const free_threaded_markers[] = {
  "_Py_MergeZeroLocalRefcount", "_Py_DecRefShared", "PyUnstable_Module_SetGIL",
};
/* Symbols exported only when Py_TRACE_REFS adds _ob_next/_ob_prev to every object. */
static const char *const trace_refs_markers[] = {"_Py_PrintReferences", "PyModule_Create2TraceRefs"};
static const char *const debug_markers[] = {"_Py_RefTotal", "_Py_NegativeRefcount"};

static int any_symbol(pyhost__sym_fn sym, void *ctx, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (sym(ctx, names[i])) return 1;
  return 0;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int pyhost__pyapi_probe(pyhost__sym_fn sym, void *ctx, struct pyapi_probe *probe,
                        char *err, size_t errlen) {
  memset(probe, 0, sizeof *probe);
  const char *(*get_version)(void) = (const char *(*)(void))sym(ctx, "Py_GetVersion");
  if (!get_version) {
    pyhost__fmt(err, errlen, "it exports no Py_GetVersion, so it is not a CPython library");
    return PYHOST_NOTPYTHON;
  }
  probe->version_text = get_version();
  probe->hexversion = pyhost__parse_version(probe->version_text);
  if (!probe->hexversion) {
    pyhost__fmt(err, errlen, "its Py_GetVersion() says \"%.60s\", which is not a CPython version",
                probe->version_text ? probe->version_text : "(null)");
    return PYHOST_NOTPYTHON;
  }
  /* 3.11+ also exports the number itself; where both exist they must agree. */
  const unsigned long *exact = (const unsigned long *)sym(ctx, "Py_Version");
  if (exact && (*exact >> 16) == (probe->hexversion >> 16)) probe->hexversion = *exact;
  probe->free_threaded = (probe->version_text && strstr(probe->version_text, "free-threading")) ||
                         any_symbol(sym, ctx, free_threaded_markers, COUNT(free_threaded_markers));
  probe->trace_refs = (probe->hexversion >> 16) < 0x030D &&
                      any_symbol(sym, ctx, trace_refs_markers, COUNT(trace_refs_markers));
  probe->debug = any_symbol(sym, ctx, debug_markers, COUNT(debug_markers));
  return PYHOST_OK;
}

int pyhost__pyapi_load(struct pyapi *t, unsigned long hexversion, pyhost__sym_fn sym, void *ctx,
                       char *err, size_t errlen) {
  unsigned runtime = (unsigned)(hexversion >> 16);
  size_t missing = 0;
  struct pyhost__strbuf names;
  pyhost__strbuf_init(&names, err, errlen);
  memset(t, 0, sizeof *t);
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++) {
    const struct pyapi_row *row = &pyhost__pyapi_rows[i];
    if (row->added > runtime) continue; /* OPT row newer than this runtime: stays NULL */
    void *addr = sym(ctx, row->name);
    if (!addr) {
      pyhost__strbuf_printf(&names, "%s%s (stable ABI %u.%u)", missing ? ", " : "", row->name,
                            row->added >> 8, row->added & 0xFF);
      missing++;
      continue;
    }
    /* Object pointers and function pointers share a representation on every platform
     * pyhost supports (POSIX requires it for dlsym); memcpy avoids the ISO C cast. */
    memcpy((char *)t + row->offset, &addr, sizeof addr);
  }
  if (missing) {
    char list[2048];
    pyhost__fmt(list, sizeof list, "%s", err);
    pyhost__fmt(err, errlen, "%zu stable-ABI symbol%s missing for Python %u.%u: %s", missing,
                missing == 1 ? " is" : "s are", runtime >> 8, runtime & 0xFF, list);
    memset(t, 0, sizeof *t);
    return PYHOST_NOSYM;
  }
  t->runtime = runtime;
  t->hexversion = hexversion;
  return PYHOST_OK;
}
