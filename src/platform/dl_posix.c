/* dl_posix.c: dl.h on POSIX systems, with dlopen.
 *
 * RTLD_NOW: a missing symbol shows at load time, not as a crash mid-call.
 * RTLD_GLOBAL: since Python 3.8, C extension modules in lib-dynload are not linked
 * against libpython and find PyFloat_Type & co. in the global scope; with RTLD_LOCAL
 * `import math` fails with "undefined symbol: PyFloat_Type".
 */
#define _GNU_SOURCE
#include "dl.h"
#include "strbuf.h"


#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#if defined(__APPLE__)
#  include <mach-o/dyld.h>
#endif

#if defined(__APPLE__)
const int pyhost__dl_format = PYHOST__FMT_MACHO;
#else
const int pyhost__dl_format = PYHOST__FMT_ELF;
#endif

void *pyhost__dl_open(const char *path, int global, char *err, size_t errlen) {
  dlerror(); /* clear a stale message */
  void *lib = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!lib) {
    const char *msg = dlerror();
    pyhost__fmt(err, errlen, "%s", msg ? msg : "dlopen failed without a message");
  }
  return lib;
}

void *pyhost__dl_sym(void *lib, const char *name) {
  return dlsym(lib, name);
}

int pyhost__dl_path(void *lib, void *addr, char *out, size_t cap) {
  Dl_info info;
  (void)lib;
  if (!addr || !dladdr(addr, &info) || !info.dli_fname || !info.dli_fname[0]) return -1;
  pyhost__fmt(out, cap, "%s", info.dli_fname);
  return 0;
}

int pyhost__dl_program_path(char *out, size_t cap) {
#if defined(__APPLE__)
  uint32_t size = (uint32_t)cap;
  return cap <= UINT32_MAX && _NSGetExecutablePath(out, &size) == 0 ? 0 : -1;
#elif defined(__linux__)
  ssize_t n = readlink("/proc/self/exe", out, cap);
  if (n <= 0 || (size_t)n >= cap) return -1;
  out[n] = '\0';
  return 0;
#else
  (void)out;
  (void)cap;
  return -1;
#endif
}

void pyhost__dl_close(void *lib) {
  if (lib) dlclose(lib);
}
