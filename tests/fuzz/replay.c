/* replay.c: runs a fuzz target on files without libFuzzer, so that the seed corpus and
 * every crash ever found (tests/fuzz/regressions/) are plain CTest regression tests in
 * any build.  Usage: fuzz_<target>_replay FILE_OR_DIR... */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return perror(path), 1;
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) continue; /* an empty regressions/ may be absent */
    if (!S_ISDIR(st.st_mode)) {
      bad |= run_file(argv[i]), files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *e;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
      bad |= run_file(p), files++;
    }
    if (d) closedir(d);
  }
  printf("replayed %d inputs\n", files);
  return bad;
}
