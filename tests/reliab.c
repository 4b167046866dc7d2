/* reliab.c: see reliab.h. */
#define _GNU_SOURCE
#include "reliab.h"
#include "check.h"

pyhost *reliab_start(void) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, check_lib);
  pyhost *h = NULL;
  int rc = pyhost_init(c, &h);
  pyhost_config_free(c);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "pyhost_init(%s): %s: %s\n", check_lib, pyhost_status_name(rc),
            pyhost_errmsg(h));
    exit(1);
  }
  return h;
}

/* valgrind's preload library is the one sign every valgrind version leaves. */
int reliab_under_valgrind(void) {
  const char *p = getenv("LD_PRELOAD");
  return p && strstr(p, "vgpreload") != NULL;
}

int reliab_iterations(int want) {
  if (!reliab_under_valgrind()) return want;
  return want / 50 > 20 ? want / 50 : 20;
}

int64_t reliab_eval_int(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int64_t got = -1;
  int rc = pyhost_eval(h, expr, &v);
  if (rc == PYHOST_OK) rc = pyhost_value_to_int(h, v, &got);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "eval(%s): %s: %s\n", expr, pyhost_status_name(rc), pyhost_errmsg(h));
    check_failures++;
  }
  pyhost_value_free(v);
  return got;
}

void reliab_expect_int(pyhost *h, const char *expr, int64_t want) {
  int64_t got = reliab_eval_int(h, expr);
  if (got != want) {
    fprintf(stderr, "eval(%s) gave %lld, expected %lld\n", expr, (long long)got, (long long)want);
    check_failures++;
  }
}

int reliab_eval_true(pyhost *h, const char *expr) {
  pyhost_value *v = NULL;
  int b = 0;
  if (pyhost_eval(h, expr, &v) == PYHOST_OK && pyhost_value_to_bool(h, v, &b) != PYHOST_OK) {
    int64_t i = 0;
    b = pyhost_value_to_int(h, v, &i) == PYHOST_OK && i != 0;
  }
  pyhost_value_free(v);
  return b;
}

/* ---- host functions: filled in once issue 3's API is in pyhost.h ---- */

int reliab_callbacks_available(void) {
  return 0;
}

void reliab_callback_setup(pyhost *h) {
  (void)h;
}

int reliab_callback_step(pyhost *h, int thread, int i) {
  (void)h, (void)thread, (void)i;
  return PYHOST_OK;
}

int reliab_finalize_from_callback(pyhost *h) {
  (void)h;
  return PYHOST_ERROR;
}
