/* executable.c: `pyhost --executable-wrapper` and the script it writes.
 *
 * sys.executable must name one program that runs this Python: subprocess,
 * multiprocessing's spawn and test runners start it with python's own options and
 * often a cleared environment.  `pyhost` alone would find its Python again by
 * discovery, maybe another one, so the command is a file that holds what it needs, with
 * pyhost itself as its #! interpreter:
 *
 *     #!/usr/local/bin/pyhost --executable-script
 *     --python /usr/lib/libpython3.12.so.1.0
 *
 * The kernel runs it as `pyhost --executable-script FILE ARGS...`; pyhost takes its
 * options from FILE's lines and FILE as --executable (sys.executable, and argv[0] as
 * python's orig_argv gives it).  No shell comes between: a shell would drop the
 * environment variables whose names are no shell identifiers (CPython's test_os and
 * test_subprocess pass such names to their children).
 *
 * The file is named after a hash of what it runs, written once (to a temporary name,
 * then renamed: concurrent pyhosts never see half of it) and reused.  In a venv it goes
 * into the venv's bin/: Python makes a venv sys.prefix only when pyvenv.cfg is beside
 * (or one up from) sys.executable.
 */
#if !defined(_WIN32)
#  define _DEFAULT_SOURCE /* realpath, readlink */
#endif
#include "executable.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(_WIN32)
#  include <direct.h>
#  define getcwd _getcwd
#else
#  include <unistd.h>
#endif

static const char script_option[] = "--executable-script";

/* the expanded command line and the words it owns (the file's, the absolute path) */
static char **expanded;
static int owned;

void pyhost_cli_executable_script_free(void) {
  for (int i = 1; i <= owned; i++) free(expanded[i]);
  free(expanded);
  expanded = NULL;
  owned = 0;
}

static int push(char ***words, int *n, const char *w) {
  char **grown = realloc(*words, ((size_t)*n + 1) * sizeof *grown);
  if (!grown) return -1;
  *words = grown;
  size_t len = strlen(w) + 1;
  if (!(grown[*n] = malloc(len))) return -1;
  memcpy(grown[(*n)++], w, len);
  return 0;
}

/* FILE's pyhost options: one "--name" or "--name value" a line after the #! line;
 * comments and empty lines skipped.  0, or the number of the line that is none. */
static int read_options(FILE *f, char ***words, int *n) {
  char line[8192];
  for (int number = 1; fgets(line, sizeof line, f); number++) {
    size_t len = strlen(line);
    if (len && line[len - 1] == '\n') line[--len] = '\0';
    else if (!feof(f)) return number; /* longer than a path can be */
    if (number == 1 || !len || line[0] == '#') continue;
    if (strncmp(line, "--", 2) != 0) return number;
    char *value = strchr(line, ' ');
    if (value) *value++ = '\0';
    if (push(words, n, line) != 0 || (value && push(words, n, value) != 0)) return -1;
  }
  return 0;
}

int pyhost_cli_executable_script(int *argc, char ***argv) {
  char **av = *argv;
  if (*argc < 2 || strcmp(av[1], script_option) != 0) return 0;
  if (*argc < 3) {
    fprintf(stderr, "pyhost: %s needs the script's path (the kernel gives it when it runs one)\n", script_option);
    return -1;
  }
  const char *file = av[2];
  FILE *f = fopen(file, "r");
  if (!f) {
    fprintf(stderr, "pyhost: cannot read the executable script %s: %s\n", file, strerror(errno));
    return -1;
  }
  char **words = NULL;
  int n = 0, bad = read_options(f, &words, &n);
  fclose(f);
  char where[4096] = "";
  if (!bad && file[0] != '/' && (!getcwd(where, sizeof where - 1) || !strcat(where, "/"))) bad = -1;
  if (!bad && (push(&words, &n, "--executable") != 0 || push(&words, &n, "") != 0)) bad = -1;
  char *path = bad ? NULL : malloc(strlen(where) + strlen(file) + 1);
  char **all = path ? malloc(((size_t)n + (size_t)*argc - 1) * sizeof *all) : NULL; /* and NULL */
  if (bad || !all) {
    if (bad > 0)
      fprintf(stderr, "pyhost: %s, line %d: not a pyhost option (one \"--name value\" a line)\n", file, bad);
    else fprintf(stderr, "pyhost: cannot read the executable script %s: out of memory or no current directory\n", file);
    for (int i = 0; i < n; i++) free(words[i]);
    free(words);
    free(path);
    return -1;
  }
  strcat(strcpy(path, where), file);
  free(words[n - 1]);
  words[n - 1] = path; /* --executable's value: the script, absolute */
  all[0] = av[0];
  memcpy(all + 1, words, (size_t)n * sizeof *all);
  memcpy(all + 1 + n, av + 3, (size_t)(*argc - 3) * sizeof *all);
  all[n + *argc - 2] = NULL;
  free(words);
  expanded = all;
  owned = n;
  *argv = all;
  *argc = n + *argc - 2;
  return 0;
}

#if defined(_WIN32)

int pyhost_cli_executable_wrapper(const pyhost_config *cfg, const char *argv0, char *out, size_t cap) {
  (void)cfg, (void)argv0, (void)out, (void)cap;
  fprintf(stderr, "pyhost: --executable-wrapper writes a shell script, which Windows cannot run as "
                  "sys.executable; give a program with --executable PATH\n");
  return -1;
}

#else

#  include <fcntl.h>
#  include <limits.h>
#  include <sys/stat.h>

struct chosen {
  char library[PATH_MAX], venv[PATH_MAX];
  unsigned long hexversion;
  int found;
};

static void on_candidate(void *ctx, const pyhost_candidate *c) {
  struct chosen *ch = ctx;
  if (!c->taken) return;
  snprintf(ch->library, sizeof ch->library, "%s", c->library);
  snprintf(ch->venv, sizeof ch->venv, "%s", c->venv);
  ch->hexversion = c->hexversion;
  ch->found = 1;
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* This program's absolute path: /proc/self/exe, else argv[0] (with a directory, or
 * searched on PATH as the shell did).  0/-1. */
static int own_path(const char *argv0, char *out, size_t cap) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = '\0';
    snprintf(out, cap, "%s", buf);
    return 0;
  }
  if (strchr(argv0, '/')) return realpath(argv0, buf) ? snprintf(out, cap, "%s", buf), 0 : -1;
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char candidate[PATH_MAX];
    snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, p, argv0);
    if (len && is_file(candidate) && access(candidate, X_OK) == 0 && realpath(candidate, buf)) {
      snprintf(out, cap, "%s", buf);
      return 0;
    }
    p += len + (end != NULL);
  }
  return -1;
}

/* A program started through a dynamic loader (ld.so PROGRAM) is that loader to
 * /proc/self/exe, and the loader's own options are gone by now. */
static int is_loader(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return !strncmp(base, "ld-", 3) || !strncmp(base, "ld.so", 5) || !strncmp(base, "ld64.so", 7);
}

/* mkdir -p */
static int make_dirs(const char *dir) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    *s = '/';
  }
  return mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static unsigned long fnv1a(const char *s, unsigned long h) {
  for (; *s; s++) h = ((h ^ (unsigned char)*s) * 16777619UL) & 0xFFFFFFFFUL;
  return h;
}

/* 1 when path holds exactly text already */
static int holds(const char *path, const char *text) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t len = strlen(text);
  char *buf = malloc(len + 2);
  size_t n = buf ? fread(buf, 1, len + 1, f) : 0;
  fclose(f);
  int same = buf && n == len && !memcmp(buf, text, len);
  free(buf);
  return same;
}

static int write_script(const char *path, const char *text) {
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  if (fd < 0) return -1;
  size_t len = strlen(text), done = 0;
  while (done < len) {
    ssize_t w = write(fd, text + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += (size_t)w;
  }
  int ok = done == len && fchmod(fd, 0755) == 0;
  ok = close(fd) == 0 && ok;
  if (ok && rename(tmp, path) == 0) return 0;
  int saved = errno;
  unlink(tmp);
  errno = saved;
  return -1;
}

int pyhost_cli_executable_wrapper(const pyhost_config *cfg, const char *argv0, char *out, size_t cap) {
  char self[PATH_MAX], library[PATH_MAX], dir[PATH_MAX];
  if (own_path(argv0, self, sizeof self) != 0) {
    fprintf(stderr, "pyhost: --executable-wrapper: cannot find this program's own path (from %s)\n", argv0);
    return -1;
  }
  if (is_loader(self)) {
    fprintf(stderr, "pyhost: --executable-wrapper: pyhost runs through the dynamic loader %s, whose "
                    "options cannot be read back; write a script that starts pyhost the same way "
                    "and give it with --executable PATH\n", self);
    return -1;
  }
  struct chosen ch;
  memset(&ch, 0, sizeof ch);
  if (pyhost_discover(cfg, on_candidate, &ch) != PYHOST_OK || !ch.found) return 0;
  if (!realpath(ch.library, library)) snprintf(library, sizeof library, "%s", ch.library);
  /* the kernel ends #!'s interpreter at white space and reads 255 bytes of the line
   * (127 before Linux 5.1); a line holds one option */
  if (strpbrk(self, " \t\n") || strlen(self) + sizeof script_option + 3 > 127 || strchr(library, '\n')) {
    fprintf(stderr, "pyhost: --executable-wrapper: %s cannot be a #! line's program (white space, or "
                    "longer than 127 bytes with its option) or the library's path holds a newline; "
                    "write a script that starts pyhost and give it with --executable PATH\n", self);
    return -1;
  }

  char cfg_path[PATH_MAX + 16];
  snprintf(cfg_path, sizeof cfg_path, "%s/pyvenv.cfg", ch.venv);
  const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int len;
  if (ch.venv[0] && is_file(cfg_path)) len = snprintf(dir, sizeof dir, "%s/bin", ch.venv);
  else if (cache && cache[0] == '/') len = snprintf(dir, sizeof dir, "%s/pyhost/executables", cache);
  else if (home && home[0] == '/') len = snprintf(dir, sizeof dir, "%s/.cache/pyhost/executables", home);
  else {
    fprintf(stderr, "pyhost: --executable-wrapper: neither XDG_CACHE_HOME nor HOME names a folder "
                    "to keep the script in\n");
    return -1;
  }
  unsigned long major = ch.hexversion >> 24, minor = (ch.hexversion >> 16) & 0xFF;
  unsigned long hash = fnv1a(library, fnv1a("\n", fnv1a(self, 2166136261UL)));
  char path[PATH_MAX];
  if (len > 0 && (size_t)len < sizeof dir)
    len = snprintf(path, sizeof path, "%s/python%lu.%lu-pyhost-%08lx", dir, major, minor, hash);
  if (len < 0 || (size_t)len >= sizeof path) {
    fprintf(stderr, "pyhost: --executable-wrapper: the script's path in %s is longer than %zu bytes\n",
            dir, sizeof path - 1);
    return -1;
  }
  if (make_dirs(dir) != 0) {
    fprintf(stderr, "pyhost: --executable-wrapper: cannot make the folder %s: %s\n", dir, strerror(errno));
    return -1;
  }

  char text[3 * PATH_MAX];
  snprintf(text, sizeof text,
           "#!%s %s\n"
           "# Written by pyhost --executable-wrapper: Python %lu.%lu through pyhost, as\n"
           "# sys.executable, so that child processes run through pyhost too.  The pyhost\n"
           "# options below are read by `pyhost %s THIS-FILE`, what the kernel runs.\n"
           "--python %s\n",
           self, script_option, major, minor, script_option, library);
  if (!holds(path, text) && write_script(path, text) != 0) {
    fprintf(stderr, "pyhost: --executable-wrapper: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  snprintf(out, cap, "%s", path);
  return 1;
}

#endif
