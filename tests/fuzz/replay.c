/* replay.c: runs a fuzz target on files without libFuzzer, so that the seed corpus and
 * every crash ever found (tests/fuzz/regressions/) are plain CTest regression tests in
 * any build.  Each input must end within UNIT_LIMIT seconds (the targets bound their
 * units to a few seconds, fuzz_python.h): one that runs longer fails the replay naming
 * its file, as libFuzzer's -timeout fails the fuzzing run.
 * Usage: fuzz_<target>_replay FILE_OR_DIR... */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C"
#endif
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { UNIT_LIMIT = 60 }; /* seconds: over ten times a unit's budget under ASan and load */

static char running[4096]; /* the input being run, for the alarm's message */

static void too_long(int sig) {
  (void)sig;
  static const char msg[] = "replay: this input ran for over 60 seconds: ";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  ignored = write(2, running, strlen(running));
  ignored = write(2, "\n", 1);
  (void)ignored;
  abort();
}

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
  snprintf(running, sizeof running, "%s", path);
  alarm(UNIT_LIMIT);
  LLVMFuzzerTestOneInput(buf, n);
  alarm(0);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  int files = 0, bad = 0;
  signal(SIGALRM, too_long);
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
