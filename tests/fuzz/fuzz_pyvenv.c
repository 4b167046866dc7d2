/* fuzz_pyvenv.c: libFuzzer target for the pyvenv.cfg reader.  Each input becomes the
 * pyvenv.cfg of a scratch virtual environment (<tmp>/bin/python, <tmp>/pyvenv.cfg)
 * and the interpreter resolver follows it, with running an interpreter forbidden. */
#define _GNU_SOURCE
#include "interp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char venv[256], cfg[300], python[300];

static void setup(void) {
  if (venv[0]) return;
  snprintf(venv, sizeof venv, "%s/pyhost_fuzz_venv_%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (long)getpid());
  snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", venv);
  snprintf(python, sizeof python, "%s/bin/python3", venv);
  char bin[300];
  snprintf(bin, sizeof bin, "%s/bin", venv);
  mkdir(venv, 0700);
  mkdir(bin, 0700);
  FILE *f = fopen(python, "w"); /* not an ELF file: the resolver must say so, not run it */
  if (f) fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  FILE *f = fopen(cfg, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  struct pyhost__interp o;
  memset(&o, 0, sizeof o);
  int rc = pyhost__interp_resolve(python, 0, &o);
  /* results are NUL-terminated and a failure names a reason */
  if (memchr(o.library, '\0', sizeof o.library) == NULL) abort();
  if (memchr(o.reason, '\0', sizeof o.reason) == NULL) abort();
  if (rc != 0 && !o.code) abort();
  return 0;
}
