/* dump_pyapi.c: prints the symbol list as the build expanded it, one row a line:
 * "name kind major.minor need", for check_manifest.py. */
#include "pyapi.h"

#include <stdio.h>

int main(void) {
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++) {
    const struct pyapi_row *r = &pyhost__pyapi_rows[i];
    printf("%s %s %u.%u %s\n", r->name, r->kind == PYAPI_KIND_FN ? "function" : "data",
           r->added >> 8, r->added & 0xFF, r->need == PYAPI_NEED_REQ ? "REQ" : "OPT");
  }
  return 0;
}
