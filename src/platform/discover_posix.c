/* discover_posix.c: discover_sys.h on Linux, the BSDs and macOS. */
#define _GNU_SOURCE
#include "discover_sys.h"
#include "alloc.h"
#include "fs.h"
#include "names.h"
#include "strbuf.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

const char pyhost__sys_list_sep = ':';
const char *const pyhost__sys_exe_suffix = "";

int pyhost__sys_is_absolute(const char *path) {
  return path[0] == '/';
}

int pyhost__sys_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct pyhost__names names = {0};
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && pyhost__names_add(&names, e->d_name) != 0)
      break;
  closedir(d);
  pyhost__names_emit(&names, fn, ctx);
  return 0;
}

int pyhost__sys_is_executable(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* libpython3.11.so.1.0, libpython3.11.so, libpython3.6m.so.1.0, libpython3.13t.so,
 * libpython3.12.dylib */
int pyhost__sys_lib_name(const char *name, unsigned *major, unsigned *minor, char *flags,
                         size_t flags_cap) {
  if (strncmp(name, "libpython", 9) != 0) return 0;
  const char *p = name + 9;
  if (*p < '0' || *p > '9') return 0;
  *major = (unsigned)strtoul(p, (char **)&p, 10);
  if (*p++ != '.' || *p < '0' || *p > '9') return 0;
  *minor = (unsigned)strtoul(p, (char **)&p, 10);
  size_t nf = 0;
  while (*p >= 'a' && *p <= 'z' && nf + 1 < flags_cap) flags[nf++] = *p++;
  flags[nf] = '\0';
  return !strcmp(p, ".so") || !strcmp(p, ".so.1.0") || !strcmp(p, ".so.1") ||
         !strcmp(p, ".dylib");
}

void pyhost__sys_lib_names_for(unsigned major, unsigned minor, char *out, size_t cap) {
  /* 3.6 and 3.7 carry the pymalloc ABI flag 'm' in the name; later versions do not */
  const char *m = (major == 3 && minor < 8) ? "m" : "";
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  static const char *const forms[] = {"libpython%u.%u%s.so.1.0", "libpython%u.%u%s.so",
                                      "libpython%u.%u%s.dylib"};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    pyhost__strbuf_printf(&sb, forms[i], major, minor, m);
    pyhost__strbuf_printf(&sb, "%c", '\0');
  }
  if (sb.len + 1 < cap) out[sb.len + 1] = '\0';
  else if (cap >= 2) out[cap - 2] = out[cap - 1] = '\0';
}

/* The directory of the C library, such as /lib/x86_64-linux-gnu, names the multiarch
 * triple without a compile-time table. */
static int multiarch(char *out, size_t cap) {
  Dl_info info;
  if (!dladdr((void *)&fopen, &info) || !info.dli_fname) return -1;
  const char *f = info.dli_fname, *slash = strrchr(f, '/');
  if (!slash) return -1;
  const char *prev = slash;
  while (prev > f && prev[-1] != '/') prev--;
  size_t n = (size_t)(slash - prev);
  if (!memchr(prev, '-', n) || n + 1 > cap) return -1; /* plain /lib64: no triple */
  memcpy(out, prev, n);
  out[n] = '\0';
  return 0;
}

void pyhost__sys_prefix_lib_dirs(const char *prefix, void (*fn)(void *ctx, const char *dir),
                                 void *ctx) {
  char dir[4096], triple[128];
  if (multiarch(triple, sizeof triple) == 0) {
    pyhost__fmt(dir, sizeof dir, "%s/lib/%s", prefix, triple);
    fn(ctx, dir);
  }
  pyhost__fmt(dir, sizeof dir, "%s/lib", prefix);
  fn(ctx, dir);
  pyhost__fmt(dir, sizeof dir, "%s/lib64", prefix);
  fn(ctx, dir);
}

const char *pyhost__sys_ld_conf = "/etc/ld.so.conf";

struct ldconf {
  void (*fn)(void *ctx, const char *dir, const char *kind);
  void *ctx;
  int depth;
  const char *dir, *prefix, *suffix; /* of an include pattern being expanded */
};

static void ld_conf_file(struct ldconf *lc, const char *file);

static void ld_conf_include(void *ctx, const char *name) {
  struct ldconf *lc = ctx;
  size_t n = strlen(name), np = strlen(lc->prefix), ns = strlen(lc->suffix);
  if (n < np + ns || strncmp(name, lc->prefix, np) || strcmp(name + n - ns, lc->suffix)) return;
  char file[4096];
  pyhost__fmt(file, sizeof file, "%s/%s", lc->dir, name);
  struct ldconf inner = {lc->fn, lc->ctx, lc->depth + 1, NULL, NULL, NULL};
  ld_conf_file(&inner, file);
}

/* ld.so.conf: one directory per line, '#' comments, and `include` lines whose last
 * component may hold one '*' (what glibc's files use).  Relative names are taken
 * from the including file's directory, as ldconfig does. */
static void ld_conf_file(struct ldconf *lc, const char *file) {
  char *text, err[128];
  size_t len;
  if (lc->depth > 4 || pyhost__fs_read(file, &text, &len, err, sizeof err) != 0) return;
  char here[4096];
  pyhost__fmt(here, sizeof here, "%s", file);
  char *slash = strrchr(here, '/');
  if (slash) *slash = '\0';
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    while (*line == ' ' || *line == '\t') line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) line[--n] = '\0';
    if (!strncmp(line, "include", 7) && (line[7] == ' ' || line[7] == '\t')) {
      char pattern[4096], *p = line + 8;
      while (*p == ' ' || *p == '\t') p++;
      if (*p == '/') pyhost__fmt(pattern, sizeof pattern, "%s", p);
      else pyhost__fmt(pattern, sizeof pattern, "%s/%s", here, p);
      char *last = strrchr(pattern, '/'), *star = strchr(last, '*');
      *last = '\0';
      char prefix[256] = "", suffix[256] = "";
      if (star) {
        pyhost__fmt(prefix, sizeof prefix, "%.*s", (int)(star - last - 1), last + 1);
        pyhost__fmt(suffix, sizeof suffix, "%s", star + 1);
      } else {
        pyhost__fmt(prefix, sizeof prefix, "%s", last + 1);
      }
      struct ldconf inc = {lc->fn, lc->ctx, lc->depth, pattern, prefix, suffix};
      if (star) pyhost__sys_list_dir(pattern, ld_conf_include, &inc);
      else ld_conf_include(&inc, prefix);
    } else if (line[0] == '/') {
      lc->fn(lc->ctx, line, "dir");
    }
  }
  pyhost__free(text);
}

void pyhost__sys_std_places(const char *pyenv_root,
                            void (*fn)(void *ctx, const char *dir, const char *kind), void *ctx) {
  char dir[4096], triple[128];
  int have_triple = multiarch(triple, sizeof triple) == 0;
  /* LD_LIBRARY_PATH is part of the loader's default search: absolute entries only */
  const char *ld = getenv("LD_LIBRARY_PATH");
  while (ld && *ld) {
    const char *end = strchr(ld, ':');
    size_t n = end ? (size_t)(end - ld) : strlen(ld);
    if (n && ld[0] == '/' && n < sizeof dir) {
      memcpy(dir, ld, n);
      dir[n] = '\0';
      fn(ctx, dir, "dir");
    }
    ld = end ? end + 1 : NULL;
  }
  /* the directories ldconfig caches, as the loader's own default search has them */
  struct ldconf lc = {fn, ctx, 0, NULL, NULL, NULL};
  if (pyhost__sys_ld_conf && pyhost__sys_ld_conf[0]) ld_conf_file(&lc, pyhost__sys_ld_conf);
  static const char *const roots[] = {"/usr/local/lib", "/usr/lib", "/lib"};
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
    if (have_triple) {
      pyhost__fmt(dir, sizeof dir, "%s/%s", roots[i], triple);
      fn(ctx, dir, "dir");
    }
    fn(ctx, roots[i], "dir");
  }
  fn(ctx, "/usr/lib64", "dir");
  fn(ctx, "/usr/local/lib64", "dir");
  if (pyenv_root && pyenv_root[0]) {
    pyhost__fmt(dir, sizeof dir, "%s/versions", pyenv_root);
    fn(ctx, dir, "prefixes");
  }
  /* macOS: python.org installers, Homebrew (Apple silicon and Intel), Xcode tools */
  fn(ctx, "/Library/Frameworks/Python.framework/Versions", "framework");
  char home[4096];
  if (pyhost__sys_home(home, sizeof home) == 0) {
    pyhost__fmt(dir, sizeof dir, "%s/Library/Frameworks/Python.framework/Versions", home);
    fn(ctx, dir, "framework");
  }
  fn(ctx, "/opt/homebrew/Frameworks/Python.framework/Versions", "framework");
  fn(ctx, "/usr/local/Frameworks/Python.framework/Versions", "framework");
  fn(ctx, "/opt/homebrew/lib", "dir");
  fn(ctx, "/Library/Developer/CommandLineTools/Library/Frameworks/Python3.framework/Versions",
     "framework");
}

void pyhost__sys_loader_search(char *out, size_t cap) {
  const char *ld = getenv("LD_LIBRARY_PATH");
#if defined(__APPLE__)
  const char *dy = getenv("DYLD_LIBRARY_PATH");
  pyhost__fmt(out, cap, "DYLD_LIBRARY_PATH (%s%s%s), the loading program's rpaths, then "
              "DYLD_FALLBACK_LIBRARY_PATH or /usr/local/lib and /usr/lib; never the current directory",
              dy && dy[0] ? "\"" : "", dy && dy[0] ? dy : "unset", dy && dy[0] ? "\"" : "");
  (void)ld;
#else
  pyhost__fmt(out, cap, "LD_LIBRARY_PATH (%s%s%s), the runpath of the program, the cache of "
              "ldconfig (/etc/ld.so.cache, made from the directories in /etc/ld.so.conf), then "
              "/lib and /usr/lib and their multiarch directories; never the current directory",
              ld && ld[0] ? "\"" : "", ld && ld[0] ? ld : "unset", ld && ld[0] ? "\"" : "");
#endif
}

int pyhost__sys_home(char *out, size_t cap) {
  const char *h = getenv("HOME");
  if (!h || h[0] != '/') return -1;
  pyhost__fmt(out, cap, "%s", h);
  return 0;
}

/* An absolute variable's value, else `fallback_var`/`sub`, else ~/`home_sub`: the
 * XDG base-directory rule each tool applies. */
static int xdg_dir(const char *own_var, const char *xdg_var, const char *sub, const char *home_sub,
                   char *out, size_t cap) {
  const char *v = own_var ? getenv(own_var) : NULL;
  if (v && v[0] == '/') {
    pyhost__fmt(out, cap, "%s", v);
    return 0;
  }
  v = xdg_var ? getenv(xdg_var) : NULL;
  if (v && v[0] == '/') {
    pyhost__fmt(out, cap, "%s/%s", v, sub);
    return 0;
  }
  char home[4096];
  if (pyhost__sys_home(home, sizeof home) != 0) return -1;
  pyhost__fmt(out, cap, "%s/%s", home, home_sub);
  return 0;
}

int pyhost__sys_tool_dir(const char *tool, char *out, size_t cap) {
  /* uv: docs.astral.sh/uv/reference/storage (persistent data and user configuration);
   * mise: mise.jdx.dev/directories; asdf: asdf-vm.com configuration (ASDF_DATA_DIR) */
  if (!strcmp(tool, "uv")) return xdg_dir("UV_PYTHON_INSTALL_DIR", "XDG_DATA_HOME", "uv/python", ".local/share/uv/python", out, cap);
  if (!strcmp(tool, "uv-config")) return xdg_dir(NULL, "XDG_CONFIG_HOME", "uv", ".config/uv", out, cap);
  if (!strcmp(tool, "mise")) return xdg_dir("MISE_DATA_DIR", "XDG_DATA_HOME", "mise", ".local/share/mise", out, cap);
  if (!strcmp(tool, "mise-config")) return xdg_dir("MISE_CONFIG_DIR", "XDG_CONFIG_HOME", "mise", ".config/mise", out, cap);
  if (!strcmp(tool, "asdf")) return xdg_dir("ASDF_DATA_DIR", NULL, "", ".asdf", out, cap);
  return -1;
}

void pyhost__sys_conda_roots(void (*fn)(void *ctx, const char *dir), void *ctx) {
  static const char *const names[] = {"miniforge3", "miniconda3", "anaconda3", "mambaforge"};
  char home[4096], dir[4096];
  if (pyhost__sys_home(home, sizeof home) == 0)
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      pyhost__fmt(dir, sizeof dir, "%s/%s", home, names[i]);
      fn(ctx, dir);
    }
  fn(ctx, "/opt/conda");
}

int pyhost__sys_cwd(char *out, size_t cap) {
  return getcwd(out, cap) ? 0 : -1;
}

int pyhost__sys_run(const char *const *argv, int timeout_ms, char *out, size_t cap, char *err,
                    size_t errlen) {
  int fds[2];
  if (cap) out[0] = '\0';
  if (errlen) err[0] = '\0';
  /* posix_spawn cannot always report a failed exec (under valgrind it is a fork) */
  if (!pyhost__sys_is_executable(argv[0])) {
    pyhost__fmt(err, errlen, "cannot run %s: %s", argv[0], strerror(errno ? errno : ENOENT));
    return -1;
  }
  if (pipe(fds) != 0) {
    pyhost__fmt(err, errlen, "pipe: %s", strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    pyhost__fmt(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
    return -1;
  }
  fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  size_t len = 0;
  int status = 0, exited = 0, waited = 0;
  for (;;) {
    char buf[512];
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got > 0) {
      size_t take = (size_t)got < cap - 1 - len ? (size_t)got : cap - 1 - len;
      memcpy(out + len, buf, take);
      len += take;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got == 0 && exited) break; /* exited and the pipe is drained */
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = 1;
      continue;
    }
    if (waited >= timeout_ms) {
      if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
      }
      close(fds[0]);
      pyhost__fmt(err, errlen, "%s did not answer within %d ms", argv[0], timeout_ms);
      return -1;
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
    waited += 5;
  }
  close(fds[0]);
  out[len] = '\0';
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  pyhost__fmt(err, errlen, "%s was killed by signal %d", argv[0], WTERMSIG(status));
  return -1;
}

void pyhost__sys_registry(void (*fn)(void *ctx, const char *company, const char *tag,
                                     const char *install_path, const char *executable),
                          void *ctx) {
  (void)fn;
  (void)ctx;
}

struct pyhost__env_saved {
  int applied;    /* the environment was changed */
  size_t n;
  char **entries; /* "NAME=value" copies */
};

int pyhost__sys_env_isolate(struct pyhost__env_saved **out, const char *userbase) {
  struct pyhost__env_saved *s = pyhost__calloc(1, sizeof *s);
  *out = s;
  if (!s) return -1;
  size_t count = 0;
  for (char **e = environ; *e; e++)
    if (!strncmp(*e, "PYTHON", 6)) count++;
  if (count && !(s->entries = pyhost__calloc(count, sizeof *s->entries))) return -1;
  for (char **e = environ; *e && s->n < count; e++)
    if (!strncmp(*e, "PYTHON", 6) && !(s->entries[s->n++] = pyhost__strdup(*e))) return -1;
  s->applied = 1;
  for (size_t i = 0; i < s->n; i++) {
    char name[256];
    const char *eq = strchr(s->entries[i], '=');
    size_t n = eq ? (size_t)(eq - s->entries[i]) : strlen(s->entries[i]);
    if (n >= sizeof name) continue;
    memcpy(name, s->entries[i], n);
    name[n] = '\0';
    unsetenv(name);
  }
  return setenv("PYTHONNOUSERSITE", "1", 1) == 0 && setenv("PYTHONUSERBASE", userbase, 1) == 0 ? 0 : -1;
}

void pyhost__sys_env_restore(struct pyhost__env_saved *s) {
  if (!s) return;
  if (s->applied) {
    unsetenv("PYTHONNOUSERSITE");
    unsetenv("PYTHONUSERBASE");
  }
  for (size_t i = 0; i < s->n; i++) {
    char *eq = s->entries[i] ? strchr(s->entries[i], '=') : NULL;
    if (eq && s->applied) {
      *eq = '\0';
      setenv(s->entries[i], eq + 1, 1);
    }
    pyhost__free(s->entries[i]);
  }
  pyhost__free(s->entries);
  pyhost__free(s);
}

int pyhost__sys_env_codeset(char *out, size_t cap) {
  /* newlocale, not setlocale: the host's locale is the host's */
  locale_t loc = newlocale(LC_CTYPE_MASK, "", (locale_t)0);
  if (!loc) loc = newlocale(LC_CTYPE_MASK, "C", (locale_t)0);
  if (!loc) return -1;
  const char *cs = nl_langinfo_l(CODESET, loc);
  snprintf(out, cap, "%s", cs ? cs : "");
  freelocale(loc);
  return 0;
}
