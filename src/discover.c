/* discover.c: choosing a Python library when the host configured none.
 *
 * Well-known library names, newest first, left to the system loader's search (which
 * never includes the current directory).  The first one that loads and is Python
 * 3.floor or newer is taken.
 */
#include "internal.h"
#include "dl.h"

static const char *const sonames[] = {
  "libpython3.13.so.1.0", "libpython3.12.so.1.0", "libpython3.11.so.1.0",
  "libpython3.10.so.1.0", "libpython3.9.so.1.0",  "libpython3.8.so.1.0",
  "libpython3.7m.so.1.0", "libpython3.6m.so.1.0", "libpython3.so",
  "python3.dll",          "libpython3.dylib",
};

int pyhost__discover(pyhost *h, char *out, size_t cap, char *origin, size_t ocap) {
  char tried[2048], err[512];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, tried, sizeof tried);
  for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
    void *lib = pyhost__dl_open(sonames[i], 0, err, sizeof err);
    pyhost__strbuf_printf(&sb, "%s%s", i ? ", " : "", sonames[i]);
    if (!lib) continue;
    pyhost__dl_close(lib);
    pyhost__fmt(out, cap, "%s", sonames[i]);
    pyhost__fmt(origin, ocap, " (found by the system loader)");
    return PYHOST_OK;
  }
  return pyhost__set_error(h, PYHOST_NOTFOUND,
                           "no Python library configured and none found: set "
                           "PYHOST_PYTHON_LIBRARY or pyhost_config_set_library (tried %s)",
                           tried);
}
