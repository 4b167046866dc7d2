/* textenc.c: the text encoding embedded Python gets is the one `python` would have.
 *
 * Most hosts never call setlocale, so their LC_CTYPE is "C" and Python inside them
 * would take ASCII as its default text encoding (open(), subprocess text, stdio),
 * where `python` in the same environment uses UTF-8: the C/POSIX locale turns its
 * UTF-8 mode on (PEP 540), and a UTF-8 locale in the environment gives UTF-8 through
 * the locale.  Py_InitializeEx's compat configuration does neither (3.8+ ignores
 * PYTHONUTF8 there), and pyhost puts the host's LC_CTYPE back after init, so pyhost
 * turns the UTF-8 mode on through the legacy Py_UTF8Mode global, the one stable-ABI
 * way before init, without touching the host's locale (docs/configuration.md).
 */
#include "runtime.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

static int is_c_locale(const char *name) {
  return !name || !strcmp(name, "C") || !strcmp(name, "POSIX");
}

/* The codesets under which `python` ends up with UTF-8: the C locale's (ASCII, then
 * the UTF-8 mode) and UTF-8 itself.  A legacy 8-bit locale keeps its own encoding. */
static int gives_utf8(const char *codeset) {
  static const char *const names[] = {"UTF-8", "utf8", "ANSI_X3.4-1968", "US-ASCII", "ASCII", ""};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(codeset, names[i])) return 1;
  return 0;
}

int pyhost__utf8_mode_choice(const pyhost *h) {
  /* 3.7's Py_InitializeEx already turns the mode on in a C locale; 3.6 has none */
  if (!pyhost__runtime_at_least(3, 8)) return -1;
  /* 3.15 has the mode on by default (PEP 686), and its compat init ignores both
   * Py_UTF8Mode = 0 and PYTHONUTF8=0: there the mode stays on whatever is asked */
  if (h->cfg.flags & PYHOST_INIT_LOCALE_ENCODING) return -1;
  /* python -I ignores PYTHONUTF8, as isolated init hides it */
  const char *env = h->cfg.isolated ? NULL : getenv("PYTHONUTF8");
  if (env && !strcmp(env, "0")) return -1;
  if (env && !strcmp(env, "1")) return 1;
  /* a host that chose a locale has Python read it, as `python` reads its environment */
  if (!is_c_locale(setlocale(LC_CTYPE, NULL))) return -1;
  char codeset[64];
  return pyhost__sys_env_codeset(codeset, sizeof codeset) == 0 && gives_utf8(codeset) ? 1 : -1;
}
