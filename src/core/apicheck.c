/* apicheck.c: the report of a broken API rule (PYHOST__API_CHECK, core.h), as Lua's
 * api_check: in a build with asserts on, the host's misuse stops the process where it
 * happened, with the entry point and the rule named, before it turns into a crash
 * somewhere else.  One line on stderr, written whole (no allocation: the process may
 * be in any state), then abort() for the debugger or the core dump.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>

void pyhost__api_misuse(const char *entry, const char *rule) {
  fprintf(stderr, "pyhost: API misuse in %s: %s\n", entry, rule);
  fflush(stderr);
  abort();
}
