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

/* Expressions that compute for minutes inside one C call cannot be interrupted: big
 * powers and shifts, long literals, and repetitions whose numbers multiply into a
 * result of millions of items (8488*488*[...]: converting it is one C call of seconds
 * and gigabytes), so the product of the numbers of two digits or more stays small. */
static int too_costly(const char *s, size_t n) {
  size_t digits = 0;
  unsigned long number = 0, product = 1;
  for (size_t i = 0; i <= n; i++) {
    int digit = i < n && s[i] >= '0' && s[i] <= '9';
    if (digit) {
      digits++;
      number = number * 10 + (unsigned long)(s[i] - '0');
      if (digits > 4) return 1;
      continue;
    }
    if (digits >= 2 && (product *= number) > 100000) return 1;
    digits = 0;
    number = 0;
    if (i < n && (s[i] == '*' || s[i] == '<') && i + 1 < n && s[i + 1] == s[i]) return 1;
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
