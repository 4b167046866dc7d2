/* int_text.c: the decimal digits of an int value (pyhost_value_to_int_text).
 *
 * An int beyond 64 bits keeps Python's own text of it: decimal, or "0x..." when its
 * decimal form exceeds CPython's integer string conversion limit (power-of-two bases
 * are exempt, see convert.c).  The host always reads decimal: hexadecimal text is
 * turned into decimal here, in C, by schoolbook division (quadratic in the digits, as
 * Python's own str() of an int is; no limit, the host asked for it).
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decimal text of the hexadecimal digits hex[0..n): own, NUL-terminated, or NULL when
 * out of memory (or not hex digits). */
static char *hex_to_decimal(const char *hex, size_t n, size_t *len) {
  size_t nlimbs = n / 8 + 1;
  uint32_t *limb = pyhost__calloc(nlimbs, sizeof *limb); /* little-endian base 2^32 */
  /* each base-10^9 chunk takes 9 digits; 8 hex digits make < 9.64 decimal ones */
  size_t cap = 10 * nlimbs + 2;
  uint32_t *chunk = limb ? pyhost__malloc((cap / 9 + 1) * sizeof *chunk) : NULL;
  char *out = chunk ? pyhost__malloc(cap + 1) : NULL;
  if (!out) goto fail;
  for (size_t i = 0; i < n; i++) { /* digit i counts from the most significant */
    int d = hex_digit(hex[n - 1 - i]);
    if (d < 0) goto fail;
    limb[i / 8] |= (uint32_t)d << (4 * (i % 8));
  }
  size_t top = nlimbs, nchunks = 0;
  while (top && !limb[top - 1]) top--;
  while (top) { /* limb /= 10^9, the remainder is the next chunk */
    uint64_t rem = 0;
    for (size_t i = top; i-- > 0;) {
      uint64_t cur = (rem << 32) | limb[i];
      limb[i] = (uint32_t)(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    chunk[nchunks++] = (uint32_t)rem;
    while (top && !limb[top - 1]) top--;
  }
  /* the most significant chunk as it is, every other one with its leading zeros */
  size_t k = (size_t)sprintf(out, "%" PRIu32, nchunks ? chunk[nchunks - 1] : 0);
  for (size_t i = nchunks > 1 ? nchunks - 1 : 0; i-- > 0;)
    k += (size_t)sprintf(out + k, "%09" PRIu32, chunk[i]);
  *len = k;
  pyhost__free(chunk);
  pyhost__free(limb);
  return out;
fail:
  pyhost__free(out);
  pyhost__free(chunk);
  pyhost__free(limb);
  return NULL;
}

char *pyhost__int_decimal(const char *p, size_t n, size_t *len) {
  size_t neg = n && p[0] == '-';
  if (n < 2 + neg || p[neg] != '0' || (p[neg + 1] != 'x' && p[neg + 1] != 'X')) {
    *len = n; /* decimal already */
    return pyhost__memdup(p, n);
  }
  size_t dlen;
  char *digits = hex_to_decimal(p + neg + 2, n - neg - 2, &dlen);
  if (!digits || !neg) {
    if (digits) *len = dlen;
    return digits;
  }
  char *all = pyhost__malloc(dlen + 2);
  if (all) {
    all[0] = '-';
    memcpy(all + 1, digits, dlen + 1);
    *len = dlen + 1;
  }
  pyhost__free(digits);
  return all;
}
