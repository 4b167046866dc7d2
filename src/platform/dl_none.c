/* dl_none.c: dl.h where the platform cannot load libraries.  Every open fails with a
 * message saying so, so pyhost still builds and reports the cause. */
#include "dl.h"
#include "strbuf.h"

const int pyhost__dl_format = PYHOST__FMT_NONE;

void *pyhost__dl_open(const char *path, int global, char *err, size_t errlen) {
  (void)path;
  (void)global;
  pyhost__fmt(err, errlen, "this pyhost was built without dynamic library support");
  return NULL;
}

void *pyhost__dl_sym(void *lib, const char *name) {
  (void)lib;
  (void)name;
  return NULL;
}

int pyhost__dl_path(void *lib, void *addr, char *out, size_t cap) {
  (void)lib;
  (void)addr;
  (void)out;
  (void)cap;
  return -1;
}

int pyhost__dl_program_path(char *out, size_t cap) {
  (void)out;
  (void)cap;
  return -1;
}

void pyhost__dl_close(void *lib) {
  (void)lib;
}
