/* target.c: the Python an environment is prepared for.  Its version and build flags
 * make the cache key's tag (an environment of pure-Python wheels would do for any
 * 3.X.y, but one with compiled extensions is for one minor version and ABI); its
 * installation's own interpreter runs pip. */
#include "deps.h"
#include "discovery.h"

#include "platform.h"

#include <string.h>

#if defined(_WIN32) && (defined(_M_ARM64) || defined(__aarch64__))
#  define PLATFORM_TAG "win-arm64"
#elif defined(_WIN32) && (defined(_M_X64) || defined(__x86_64__))
#  define PLATFORM_TAG "win-amd64"
#elif defined(_WIN32)
#  define PLATFORM_TAG "win32"
#elif defined(__APPLE__) && defined(__aarch64__)
#  define PLATFORM_TAG "macos-arm64"
#elif defined(__APPLE__)
#  define PLATFORM_TAG "macos-x86_64"
#elif defined(__linux__) && defined(__x86_64__)
#  define PLATFORM_TAG "linux-x86_64"
#elif defined(__linux__) && defined(__aarch64__)
#  define PLATFORM_TAG "linux-aarch64"
#elif defined(__linux__) && defined(__i386__)
#  define PLATFORM_TAG "linux-i686"
#else
#  define PLATFORM_TAG "other"
#endif

void pyhost__deps_python_tag(struct pyhost__deps_python *py) {
  pyhost__fmt(py->tag, sizeof py->tag, "cp%lu%lu%s%s-%s", (py->hexversion >> 24) & 0xFF,
              (py->hexversion >> 16) & 0xFF, py->free_threaded ? "t" : "", py->debug ? "d" : "",
              PLATFORM_TAG);
}

int pyhost__deps_python_of_library(const char *library, struct pyhost__deps_python *py,
                                   char *err, size_t cap) {
  memset(py, 0, sizeof *py);
  pyhost_library_info *info = NULL;
  if (pyhost_inspect_library(library, &info) != PYHOST_OK) {
    pyhost__fmt(err, cap, "out of memory");
    return -1;
  }
  int rc = -1;
  unsigned runtime = (unsigned)(info->hexversion >> 16);
  if (info->status != PYHOST_OK) {
    pyhost__fmt(err, cap, "cannot use %s: %s", library, info->message);
  } else if (pyhost__installation_program(info->home, runtime, py->executable, sizeof py->executable) != 0) {
    pyhost__fmt(err, cap, "Python %u.%u at %s has no interpreter of its own under %s to run pip with",
                runtime >> 8, runtime & 0xFF, library, info->home);
  } else {
    py->hexversion = info->hexversion;
    py->debug = info->debug;
    py->free_threaded = info->free_threaded;
    pyhost__fmt(py->library, sizeof py->library, "%s", info->real_path[0] ? info->real_path : library);
    pyhost__deps_python_tag(py);
    rc = 0;
  }
  pyhost_library_info_free(info);
  return rc;
}

int pyhost__deps_python_of_handle(const pyhost *h, struct pyhost__deps_python *py, char *err,
                                  size_t cap) {
  memset(py, 0, sizeof *py);
  unsigned runtime = (unsigned)(h->hexversion >> 16), major, minor;
  char flags[8] = "";
  const char *base = h->library_path + strlen(h->library_path);
  while (base > h->library_path && base[-1] != '/' && base[-1] != '\\') base--;
  /* the build flags from the library's name (libpython3.14d.so, python313t.dll): what
   * discovery reads too, and no file is opened on a cached load */
  if (pyhost__sys_lib_name(base, &major, &minor, flags, sizeof flags)) {
    py->debug = strchr(flags, 'd') != NULL;
    py->free_threaded = strchr(flags, 't') != NULL;
  }
  if (pyhost__installation_program(h->home, runtime, py->executable, sizeof py->executable) != 0) {
    pyhost__fmt(err, cap, "Python %u.%u at %s has no interpreter of its own under %s to run pip with",
                runtime >> 8, runtime & 0xFF, h->library_path, h->home);
    return -1;
  }
  py->hexversion = h->hexversion;
  pyhost__fmt(py->library, sizeof py->library, "%s", h->library_path);
  pyhost__deps_python_tag(py);
  return 0;
}

/* What discovery examined: the one it took, and the first acceptable one whose
 * version meets the specifier. */
struct pick {
  const char *spec;
  char taken[PYHOST__PATH_MAX], fit[PYHOST__PATH_MAX];
  int taken_fits;
  struct pyhost__strbuf seen; /* the acceptable ones, for the message */
  char seen_buf[2048];
};

static void pick_one(void *ctx, const pyhost_candidate *c) {
  struct pick *k = ctx;
  int ok = !strcmp(c->reason_code, "taken") || !strcmp(c->reason_code, "acceptable");
  if (!ok || !c->library[0]) return;
  char why[256];
  int fits = !k->spec || pyhost__python_spec_match(k->spec, c->hexversion, why, sizeof why) == 1;
  if (c->taken) {
    pyhost__fmt(k->taken, sizeof k->taken, "%s", c->library);
    k->taken_fits = fits;
  }
  if (fits && !k->fit[0]) pyhost__fmt(k->fit, sizeof k->fit, "%s", c->library);
  pyhost__strbuf_printf(&k->seen, "%s%lu.%lu (%s)", k->seen.len ? ", " : "", (c->hexversion >> 24) & 0xFF,
                        (c->hexversion >> 16) & 0xFF, c->library);
}

int pyhost__deps_python_of_config(const pyhost_config *cfg, const char *spec,
                                  struct pyhost__deps_python *py, char **chosen, char *err,
                                  size_t cap) {
  *chosen = NULL;
  if (cfg && cfg->library) return pyhost__deps_python_of_library(cfg->library, py, err, cap);
  struct pick *k = pyhost__calloc(1, sizeof *k);
  if (!k) {
    pyhost__fmt(err, cap, "out of memory");
    return -1;
  }
  k->spec = spec;
  pyhost__strbuf_init(&k->seen, k->seen_buf, sizeof k->seen_buf);
  int rc = pyhost_discover(cfg, pick_one, k);
  const char *lib = k->taken_fits ? k->taken : k->fit;
  if (rc == PYHOST_NOMEM) {
    pyhost__fmt(err, cap, "out of memory");
    rc = -1;
  } else if (!lib[0]) {
    if (spec)
      pyhost__fmt(err, cap, "no Python that discovery finds meets requires-python \"%s\" (acceptable ones: %s; "
                  "pyhost --list shows every one and why)", spec, k->seen.len ? k->seen_buf : "none");
    else
      pyhost__fmt(err, cap, "no usable Python found (pyhost --list shows why)");
    rc = -1;
  } else if ((rc = pyhost__deps_python_of_library(lib, py, err, cap)) == 0 &&
             !(*chosen = pyhost__strdup(lib))) {
    pyhost__fmt(err, cap, "out of memory");
    rc = -1;
  }
  pyhost__free(k);
  return rc;
}
