/* check.c: the harness's case table and main (see check.h). */
#include "check.h"

int check_failures;
const char *check_lib, *check_version, *check_arg4;

static struct { const char *name; void (*fn)(void); } cases[256];
static int ncases;

void check_register(const char *name, void (*fn)(void)) {
  if (ncases < 256) cases[ncases].name = name, cases[ncases++].fn = fn;
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--list")) {
    for (int i = 0; i < ncases; i++) printf("%s\n", cases[i].name);
    return argc < 2;
  }
  check_lib = argc > 2 ? argv[2] : NULL;
  check_version = argc > 3 ? argv[3] : NULL;
  check_arg4 = argc > 4 ? argv[4] : NULL;
  for (int i = 0; i < ncases; i++) {
    if (strcmp(cases[i].name, argv[1]) != 0) continue;
    cases[i].fn();
    if (check_failures) fprintf(stderr, "%s: %d check(s) failed\n", argv[1], check_failures);
    return check_failures ? 1 : 0;
  }
  fprintf(stderr, "no test case named %s\n", argv[1]);
  return 2;
}
