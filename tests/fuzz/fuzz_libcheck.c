/* fuzz_libcheck.c: libFuzzer target for the pre-load checks (src/libcheck_*.c).  Each
 * input is a library file as the ELF, PE and Mach-O parsers see it, through the memory
 * seam (pyhost__libcheck_bytes): no file is written and nothing reaches a system
 * loader.  Each parser runs twice, accepting any machine (every branch) and only
 * x86_64 (the FOREIGN paths).  A verdict is one of the four, the reason is always
 * NUL-terminated, and DAMAGED and PROGRAM always say why; ASan/UBSan watch every read. */
#include "libcheck.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const struct pyhost__libwant any = {0, 0, 0, 0, 0},
                                      x86_64 = {2, 1, 62, 0x8664, 0x01000007u};
  static const int formats[] = {PYHOST__FMT_ELF, PYHOST__FMT_PE, PYHOST__FMT_MACHO};
  const struct pyhost__libwant *wants[] = {&any, &x86_64};
  for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
    for (size_t w = 0; w < 2; w++) {
      char why[512];
      memset(why, 'x', sizeof why);
      int rc = pyhost__libcheck_bytes(formats[f], data, size, wants[w], why, sizeof why);
      if (rc != PYHOST__LIB_SOUND && rc != PYHOST__LIB_FOREIGN && rc != PYHOST__LIB_DAMAGED &&
          rc != PYHOST__LIB_PROGRAM)
        abort();
      if (!memchr(why, '\0', sizeof why)) abort();
      if ((rc == PYHOST__LIB_DAMAGED || rc == PYHOST__LIB_PROGRAM) && !why[0]) abort();
    }
  return 0;
}
