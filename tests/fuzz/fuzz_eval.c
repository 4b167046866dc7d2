/* fuzz_eval.c: libFuzzer target for pyhost_eval with arbitrary source.  Whatever the
 * bytes, the call returns a status with a message and the runtime keeps answering.
 * The expressions run with a small set of builtins (no import, open, exec, pow...):
 * the fuzzer explores the compiler, the conversions and the error paths, not the
 * machine.  A watchdog thread interrupts an expression that runs for over a second. */
#include "pyhost.h"
#include "fuzz_python.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Expressions that compute for minutes inside one C call cannot be interrupted. */
static int too_costly(const char *s, size_t n) {
  size_t digits = 0;
  for (size_t i = 0; i < n; i++) {
    if ((s[i] == '*' || s[i] == '<') && i + 1 < n && s[i + 1] == s[i]) return 1;
    digits = s[i] >= '0' && s[i] <= '9' ? digits + 1 : 0;
    if (digits > 4) return 1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pyhost *h = fuzz_python();
  char *src = malloc(size + 1);
  if (!src) return 0;
  memcpy(src, data, size);
  src[size] = '\0';
  if (!too_costly(src, strlen(src))) {
    pyhost_value *v = NULL;
    fuzz_watch(1);
    int rc = pyhost_eval(h, src, &v);
    fuzz_watch(0);
    if ((rc == PYHOST_OK) != (v != NULL)) abort();
    if (rc != PYHOST_OK && !pyhost_errmsg(h)[0]) abort();
    if (rc == PYHOST_OK) pyhost_value_repr(h, v);
    pyhost_value_free(v);
    /* still answering (a late watchdog interrupt may hit this one: then ask again) */
    int64_t i = 0;
    for (int tries = 0; tries < 3 && i != 2; tries++) {
      pyhost_value *two = NULL;
      rc = pyhost_eval(h, "1 + 1", &two);
      if (rc == PYHOST_OK && pyhost_value_to_int(h, two, &i)) abort();
      if (rc != PYHOST_OK && rc != PYHOST_INTERRUPTED) abort();
      pyhost_value_free(two);
    }
    if (i != 2) abort();
  }
  free(src);
  return 0;
}
