/* cache.c: the cache of dependency environments.
 *
 *   <root>/                        PYHOST_DEPS_CACHE, or <user cache>/pyhost/deps
 *     cp312-linux-x86_64-<hash>/   an environment: what `pip install --target` made,
 *       .pyhost-env                and its marker (the key, then what was installed)
 *     cp312-linux-x86_64-<hash>.lock   held while it is prepared (prepare.c)
 *     .tmp-<entry>-<pid>/          an install in progress (or left by a crash)
 *
 * The key is the marker's first part: a format line, the Python's tag and the sorted,
 * normalized requirements; <hash> is 64 bits of FNV-1a over it.  An entry whose marker
 * is missing or does not start with its key is damaged: it is made again. */
#include "deps.h"

#include "platform.h"

#include <stdlib.h>
#include <string.h>

int pyhost__deps_cache_root(const char *configured, char *out, size_t cap) {
  const char *env = getenv("PYHOST_DEPS_CACHE");
  if (configured && configured[0]) return pyhost__fmt(out, cap, "%s", configured), 0;
  if (env && env[0]) return pyhost__fmt(out, cap, "%s", env), 0;
#if defined(_WIN32)
  const char *local = getenv("LOCALAPPDATA");
  if (!local || !local[0]) return -1;
  pyhost__fmt(out, cap, "%s\\pyhost\\cache\\deps", local);
  return 0;
#else
  const char *xdg = getenv("XDG_CACHE_HOME");
  char home[PYHOST__PATH_MAX];
#  if defined(__APPLE__)
  xdg = NULL;
#  endif
  if (xdg && xdg[0] == '/') { /* a relative one is to be ignored (XDG base directory spec) */
    pyhost__fmt(out, cap, "%s/pyhost/deps", xdg);
    return 0;
  }
  if (pyhost__sys_home(home, sizeof home) != 0) return -1;
#  if defined(__APPLE__)
  pyhost__fmt(out, cap, "%s/Library/Caches/pyhost/deps", home);
#  else
  pyhost__fmt(out, cap, "%s/.cache/pyhost/deps", home);
#  endif
  return 0;
#endif
}

int pyhost__deps_key(const struct pyhost__deps_python *py, char **reqs, size_t n, char **key,
                     char *name, size_t cap) {
  size_t len = strlen(PYHOST__DEPS_MARKER_HEAD) + strlen(py->tag) + 16;
  for (size_t i = 0; i < n; i++) len += strlen(reqs[i]) + 16;
  char *k = pyhost__malloc(len);
  if (!(*key = k)) return -1;
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, k, len);
  pyhost__strbuf_printf(&sb, "%spython %s\n", PYHOST__DEPS_MARKER_HEAD, py->tag);
  for (size_t i = 0; i < n; i++) pyhost__strbuf_printf(&sb, "requirement %s\n", reqs[i]);
  uint64_t h = UINT64_C(14695981039346656037);
  for (const unsigned char *p = (const unsigned char *)k; *p; p++) h = (h ^ *p) * UINT64_C(1099511628211);
  pyhost__fmt(name, cap, "%s-%016llx", py->tag, (unsigned long long)h);
  return 0;
}

int pyhost__deps_entry_ok(const char *dir, const char *key, char **installed) {
  if (installed) *installed = NULL;
  char marker[PYHOST__PATH_MAX], why[128];
  pyhost__fmt(marker, sizeof marker, "%s%c%s", dir, pyhost__fs_sep, PYHOST__DEPS_MARKER);
  char *text = NULL;
  size_t len = 0;
  if (pyhost__fs_read(marker, &text, &len, why, sizeof why) != 0) return 0;
  size_t klen = strlen(key);
  int ok = len >= klen && memcmp(text, key, klen) == 0;
  if (ok && installed) {
    const char *rest = strstr(text + klen, "installed ");
    *installed = pyhost__strdup(rest ? rest : "");
    ok = *installed != NULL;
  }
  pyhost__free(text);
  return ok;
}

/* ---- list and prune ---- */

struct walk {
  const char *root;
  pyhost_deps_entry_fn fn;
  void *ctx;
  int prune;        /* 1: remove what is old, damaged or left over */
  int64_t before;   /* last used before this: old */
  int failed;
  char failure[512];
};

/* The marker's lines that start with prefix, each without it (own result). */
static char *lines_of(const char *text, const char *prefix) {
  size_t cap = strlen(text) + 1, plen = strlen(prefix), k = 0;
  char *out = pyhost__malloc(cap);
  if (!out) return NULL;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n >= plen && memcmp(p, prefix, plen) == 0) {
      memcpy(out + k, p + plen, n - plen);
      k += n - plen;
      out[k++] = '\n';
    }
    p += e ? n + 1 : n;
  }
  out[k] = '\0';
  return out;
}

static void visit(void *ctx, const char *name) {
  struct walk *w = ctx;
  size_t n = strlen(name);
  if (n > 5 && !strcmp(name + n - 5, ".lock")) return;
  char dir[PYHOST__PATH_MAX], marker[PYHOST__PATH_MAX], lock[PYHOST__PATH_MAX], why[128];
  pyhost__fmt(dir, sizeof dir, "%s%c%s", w->root, pyhost__fs_sep, name);
  if (pyhost__fs_kind(dir) != PYHOST__FS_DIR) return;
  pyhost__fmt(marker, sizeof marker, "%s%c%s", dir, pyhost__fs_sep, PYHOST__DEPS_MARKER);
  int temp = !strncmp(name, ".tmp-", 5);
  /* an entry's lock, also for its installs in progress (".tmp-<entry>-<pid>") */
  pyhost__fmt(lock, sizeof lock, "%s%c%s", w->root, pyhost__fs_sep, temp ? name + 5 : name);
  char *dash = temp ? strrchr(lock, '-') : NULL;
  if (dash) *dash = '\0';
  pyhost__fmt(lock + strlen(lock), sizeof lock - strlen(lock), ".lock");
  char *text = NULL;
  size_t len = 0;
  int complete = !temp && pyhost__fs_read(marker, &text, &len, why, sizeof why) == 0 &&
                 !strncmp(text, PYHOST__DEPS_MARKER_HEAD, strlen(PYHOST__DEPS_MARKER_HEAD));
  char *python = complete ? lines_of(text, "python ") : NULL;
  char *reqs = complete ? lines_of(text, "requirement ") : NULL;
  char *installed = complete ? lines_of(text, "installed ") : NULL;
  if (python && python[0]) python[strlen(python) - 1] = '\0';
  int64_t used = complete ? pyhost__fs_mtime(marker) : pyhost__fs_mtime(dir);
  pyhost_deps_entry e = {dir, name, python ? python : "", reqs ? reqs : "", installed ? installed : "",
                         complete, (long long)used};
  int remove = w->prune && (!complete || used < w->before);
  if (remove) {
    /* never what another host is preparing now: its lock is held */
    struct pyhost__fs_lock *held = NULL;
    if (pyhost__fs_lock(lock, 0, &held) == 0) {
      if (pyhost__fs_remove_tree(dir) != 0 && !w->failed) {
        char e2[256];
        pyhost__fs_error(e2, sizeof e2);
        pyhost__fmt(w->failure, sizeof w->failure, "cannot remove %s: %s", dir, e2);
        w->failed = 1;
      }
      pyhost__fs_unlock(held);
    } else {
      remove = 0;
    }
  }
  if (w->fn && (!w->prune || remove)) w->fn(w->ctx, &e);
  pyhost__free(python);
  pyhost__free(reqs);
  pyhost__free(installed);
  pyhost__free(text);
}

static int walk(const char *cache, struct walk *w, char *msg, size_t cap) {
  char root[PYHOST__PATH_MAX];
  if (pyhost__deps_cache_root(cache, root, sizeof root) != 0) {
    pyhost__fmt(msg, cap, "no cache directory: set PYHOST_DEPS_CACHE (or XDG_CACHE_HOME, or HOME)");
    return PYHOST_NOTFOUND;
  }
  w->root = root;
  if (pyhost__fs_kind(root) == PYHOST__FS_MISSING) return PYHOST_OK; /* nothing cached yet */
  if (pyhost__sys_list_dir(root, visit, w) != 0) {
    pyhost__fmt(msg, cap, "cannot read the cache directory %s", root);
    return PYHOST_ERROR;
  }
  if (w->failed) {
    pyhost__fmt(msg, cap, "%s", w->failure);
    return PYHOST_ERROR;
  }
  return PYHOST_OK;
}

int pyhost_deps_list(const char *cache, pyhost_deps_entry_fn fn, void *ctx, char *msg, size_t cap) {
  struct walk w;
  memset(&w, 0, sizeof w);
  w.fn = fn;
  w.ctx = ctx;
  return walk(cache, &w, msg, cap);
}

int pyhost_deps_prune(const char *cache, unsigned days, pyhost_deps_entry_fn fn, void *ctx,
                      char *msg, size_t cap) {
  struct walk w;
  memset(&w, 0, sizeof w);
  w.fn = fn;
  w.ctx = ctx;
  w.prune = 1;
  w.before = days ? pyhost__fs_now() - (int64_t)days * 86400 : INT64_MAX;
  return walk(cache, &w, msg, cap);
}
