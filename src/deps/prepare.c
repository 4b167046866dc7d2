/* prepare.c: an environment made once.  A load that finds its entry complete (the
 * marker matches) reads one small file and goes on: no lock, no installer.  Otherwise
 * it takes the entry's lock (waiting, and saying so, while another host or thread
 * prepares it), looks again, removes a damaged entry, installs into a temporary
 * directory beside it, writes the marker last and renames the directory into place.
 * A failure removes the temporary directory: the cache never holds half an entry. */
#include "deps.h"

#include "platform.h"

#include <stdlib.h>
#include <string.h>

static int by_text(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int pyhost__deps_merge(const struct pyhost__deps_decl *decl, const struct pyhost__deps_want *w,
                       char ***out, size_t *n, char *err, size_t cap) {
  *out = NULL;
  *n = 0;
  size_t dn = w->mode == PYHOST_DEPS_DECLARED ? decl->n : 0;
  char **all = pyhost__calloc(dn + w->host_n + 1, sizeof *all);
  if (!all) return -1;
  size_t k = 0;
  for (size_t i = 0; i < dn + w->host_n; i++) {
    const char *req = i < dn ? decl->reqs[i] : w->host_reqs[i - dn];
    char name[256], other[256];
    if (pyhost__req_name(req, name, sizeof name) != 0) {
      pyhost__fmt(err, cap, "\"%s\" is not a requirement (PEP 508: a project name first)", req);
      pyhost__deps_free_list(all, k);
      return -2;
    }
    /* a declared requirement the host names too is the host's to decide */
    int overridden = 0;
    for (size_t j = 0; i < dn && j < w->host_n; j++)
      overridden |= pyhost__req_name(w->host_reqs[j], other, sizeof other) == 0 && !strcmp(name, other);
    if (overridden) continue;
    if (!(all[k] = pyhost__req_normal(req))) {
      pyhost__deps_free_list(all, k);
      return -1;
    }
    k++;
  }
  qsort(all, k, sizeof *all, by_text);
  size_t u = 0;
  for (size_t i = 0; i < k; i++) {
    if (u && !strcmp(all[u - 1], all[i])) pyhost__free(all[i]);
    else all[u++] = all[i];
  }
  *out = all;
  *n = u;
  return 0;
}

/* "installed NAME VERSION" lines for what dir holds (its NAME-VERSION.dist-info). */
struct dist_scan {
  struct pyhost__strbuf sb;
};

static void dist_info(void *ctx, const char *entry) {
  struct dist_scan *d = ctx;
  size_t n = strlen(entry);
  if (n < 11 || strcmp(entry + n - 10, ".dist-info") != 0) return;
  const char *dash = memchr(entry, '-', n - 10);
  if (!dash) return;
  char name[256];
  pyhost__fmt(name, sizeof name, "%.*s", (int)(dash - entry), entry);
  if (pyhost__req_name(name, name, sizeof name) != 0) return;
  pyhost__strbuf_printf(&d->sb, "installed %s %.*s\n", name, (int)(entry + n - 10 - dash - 1), dash + 1);
}

/* Writes dir's marker: key, then what was installed.  0 or -1 with err. */
static int write_marker(const char *dir, const char *key, char *err, size_t cap) {
  size_t klen = strlen(key), room = klen + 65536;
  char *text = pyhost__malloc(room);
  if (!text) {
    pyhost__fmt(err, cap, "out of memory");
    return -1;
  }
  struct dist_scan d;
  memcpy(text, key, klen);
  pyhost__strbuf_init(&d.sb, text + klen, room - klen);
  pyhost__sys_list_dir(dir, dist_info, &d);
  char marker[PYHOST__PATH_MAX];
  pyhost__fmt(marker, sizeof marker, "%s%c%s", dir, pyhost__fs_sep, PYHOST__DEPS_MARKER);
  int rc = pyhost__fs_write_file(marker, text, klen + d.sb.len);
  if (rc != 0) {
    char why[256];
    pyhost__fs_error(why, sizeof why);
    pyhost__fmt(err, cap, "cannot write %s: %s", marker, why);
  }
  pyhost__free(text);
  return rc;
}

static int fs_failed(char *err, size_t cap, const char *what, const char *path) {
  char why[256];
  pyhost__fs_error(why, sizeof why);
  pyhost__fmt(err, cap, "the dependency cache: cannot %s %s: %s", what, path, why);
  return PYHOST_ERROR;
}

/* Under the entry's lock, when no other holder of the lock made it: makes it. */
static int make_entry(const struct pyhost__deps_job *job, const char *root, const char *name,
                      const char *env, const char *key, char *err, size_t cap) {
  if (pyhost__fs_kind(env) != PYHOST__FS_MISSING) { /* damaged: made again */
    pyhost__deps_report(job, PYHOST_DEPS_REBUILDING, "", -1, -1, "", env);
    if (pyhost__fs_remove_tree(env) != 0) return fs_failed(err, cap, "remove the damaged entry", env);
  }
  char tmp[PYHOST__PATH_MAX];
  pyhost__fmt(tmp, sizeof tmp, "%s%c.tmp-%s-%ld", root, pyhost__fs_sep, name, pyhost__proc_self());
  if (pyhost__fs_remove_tree(tmp) != 0) return fs_failed(err, cap, "remove", tmp);
  if (pyhost__fs_mkdirs(tmp) != 0) return fs_failed(err, cap, "make", tmp);
  int rc = pyhost__deps_install(job, tmp, err, cap);
  if (rc == PYHOST_OK && write_marker(tmp, key, err, cap) != 0) rc = PYHOST_ERROR;
  if (rc == PYHOST_OK) {
    int r = pyhost__fs_rename_new(tmp, env);
    if (r != 0) rc = fs_failed(err, cap, r > 0 ? "replace (something is in the way)" : "rename into place", env);
  }
  if (rc != PYHOST_OK) pyhost__fs_remove_tree(tmp);
  return rc;
}

int pyhost__deps_prepare(const struct pyhost__deps_job *job, char *env, size_t cap,
                         char **installed, char *err, size_t errcap) {
  char root[PYHOST__PATH_MAX], name[128], lock[PYHOST__PATH_MAX];
  char *key = NULL;
  if (installed) *installed = NULL;
  if (pyhost__deps_cache_root(job->cache, root, sizeof root) != 0) {
    pyhost__fmt(err, errcap, "no dependency cache directory: set PYHOST_DEPS_CACHE, XDG_CACHE_HOME or HOME "
                "(or pyhost_plugin_options_set_deps_cache)");
    return PYHOST_NOTFOUND;
  }
  if (pyhost__deps_key(job->py, job->reqs, job->n, &key, name, sizeof name) != 0) {
    pyhost__fmt(err, errcap, "out of memory");
    return PYHOST_NOMEM;
  }
  pyhost__fmt(env, cap, "%s%c%s", root, pyhost__fs_sep, name);
  int rc = PYHOST_OK, fresh = 0;
  char *have = NULL;
  if (!pyhost__deps_entry_ok(env, key, &have)) {
    struct pyhost__fs_lock *held = NULL;
    pyhost__fmt(lock, sizeof lock, "%s.lock", env);
    int got = -1;
    if (pyhost__fs_mkdirs(root) != 0) {
      rc = fs_failed(err, errcap, "make", root);
    } else if ((got = pyhost__fs_lock(lock, 0, &held)) == 1) {
      pyhost__deps_report(job, PYHOST_DEPS_WAITING, "", -1, -1, "", env);
      got = pyhost__fs_lock(lock, 1, &held);
    }
    if (rc == PYHOST_OK && got != 0) rc = fs_failed(err, errcap, "lock", lock);
    if (rc == PYHOST_OK && (fresh = !pyhost__deps_entry_ok(env, key, NULL)))
      rc = make_entry(job, root, name, env, key, err, errcap);
    pyhost__fs_unlock(held);
    if (rc == PYHOST_OK && !pyhost__deps_entry_ok(env, key, &have)) {
      pyhost__fmt(err, errcap, "the dependency cache entry %s was removed as it was made", env);
      rc = PYHOST_ERROR;
    }
  }
  if (rc == PYHOST_OK) {
    char marker[PYHOST__PATH_MAX];
    pyhost__fmt(marker, sizeof marker, "%s%c%s", env, pyhost__fs_sep, PYHOST__DEPS_MARKER);
    pyhost__fs_touch(marker); /* last used: what pruning goes by */
    long count = 0;
    for (const char *p = have; p && *p; p++) count += *p == '\n';
    pyhost__deps_report_ready(job, env, count, fresh);
    if (installed) *installed = have;
    else pyhost__free(have);
  } else {
    pyhost__free(have);
  }
  pyhost__free(key);
  return rc;
}
