/* deps.h: what the deps layer offers the folders above it: a plugin's (or a script's)
 * own dependencies, declared where Python people declare them, prepared once into an
 * environment directory of a cache, keyed by the requirement set and the Python
 * (docs/plugins.md, "Dependencies").  Nothing here runs Python in the host: the
 * installer (uv, or the selected Python's own pip) runs as a child process.
 *
 *   meta.c     PEP 723 `# /// script` blocks and pyproject.toml's [project] (toml.c)
 *   pyspec.c   requirement names and requires-python specifiers
 *   target.c   the Python an environment is for: version, ABI, its interpreter
 *   cache.c    where the cache is, an entry's name and marker, list and prune
 *   install.c  running uv or pip and reading its progress
 *   prepare.c  an entry made once: lock, temporary directory, rename into place
 *   progress.c its progress events
 */
#ifndef PYHOST_DEPS_H
#define PYHOST_DEPS_H

#include "core.h"

/* ---- what a plugin declares (meta.c) ---- */
struct pyhost__deps_decl {
  char **reqs;           /* requirement strings as written */
  size_t n;
  char *requires_python; /* NULL: none declared */
  char source[PYHOST__PATH_MAX]; /* the file they came from, "" when none */
  int requires_python_line;      /* its line in source, for messages */
};

/* Reads what the plugin at path declares: a .py file's PEP 723 script block; a package
 * directory's pyproject.toml ([project] dependencies, requires-python), else the
 * script block of its __init__.py.  No metadata is an empty declaration.  0, or -1
 * with "FILE:LINE: what is wrong" in err. */
int pyhost__deps_read(const char *path, struct pyhost__deps_decl *d, char *err, size_t cap);
/* The same for text already read: PEP 723 (pyproject 0) or pyproject.toml (1); file
 * names the text in messages. */
int pyhost__deps_parse(const char *text, const char *file, int pyproject,
                       struct pyhost__deps_decl *d, char *err, size_t cap);
void pyhost__deps_decl_clear(struct pyhost__deps_decl *d);

/* ---- requirements and requires-python (pyspec.c) ---- */
/* The PEP 503 normalized name of requirement req ("Foo_Bar >= 1" -> "foo-bar") into
 * out: 0, or -1 when req does not start with a project name (an option such as
 * "--index-url=..." included: it would reach the installer as one). */
int pyhost__req_name(const char *req, char *out, size_t cap);
/* req with its name normalized and its spaces collapsed (own result; NULL out of
 * memory). */
char *pyhost__req_normal(const char *req);
/* 1 when Python hexversion meets the specifier set spec (">=3.8, !=3.9.*"), 0 when
 * not, -1 when spec is malformed (why says how). */
int pyhost__python_spec_match(const char *spec, unsigned long hexversion, char *why, size_t cap);

/* ---- the Python an environment is for (target.c) ---- */
struct pyhost__deps_python {
  unsigned long hexversion;
  int debug, free_threaded;
  char executable[PYHOST__PATH_MAX]; /* the installation's interpreter: runs pip */
  char library[PYHOST__PATH_MAX];    /* "" when not known */
  char tag[64];                      /* "cp312-linux-x86_64", "cp315d-win-amd64" */
};
/* Fills the tag from the version and build flags. */
void pyhost__deps_python_tag(struct pyhost__deps_python *py);
/* The Python handle h runs: 0, or -1 with err (its installation has no interpreter). */
int pyhost__deps_python_of_handle(const pyhost *h, struct pyhost__deps_python *py, char *err,
                                  size_t cap);
/* The Python at library (runtime 0x0308 style is read from it): 0, or -1 with err. */
int pyhost__deps_python_of_library(const char *library, struct pyhost__deps_python *py,
                                   char *err, size_t cap);
/* The Python cfg selects, as pyhost_init would choose it: 0, or -1 with err.  spec
 * (requires-python, may be NULL): the first acceptable Python discovery examines
 * whose version meets it (when cfg names no library); its library goes into
 * *chosen (own result) for the caller to start exactly that one. */
int pyhost__deps_python_of_config(const pyhost_config *cfg, const char *spec,
                                  struct pyhost__deps_python *py, char **chosen, char *err,
                                  size_t cap);

/* ---- the cache (cache.c) ---- */
/* The cache's root directory: configured (may be NULL), else $PYHOST_DEPS_CACHE, else
 * the platform's cache folder ($XDG_CACHE_HOME or ~/.cache, %LOCALAPPDATA%,
 * ~/Library/Caches) + pyhost/deps.  0, or -1 when none can be named. */
int pyhost__deps_cache_root(const char *configured, char *out, size_t cap);
/* The marker file every complete entry holds. */
#define PYHOST__DEPS_MARKER ".pyhost-env"
#define PYHOST__DEPS_MARKER_HEAD "pyhost dependency environment 1\n"
/* The entry for a requirement set: its key text (the marker's first part: the format
 * line, the Python's tag, the sorted normalized requirements) and its directory name
 * ("<tag>-<16 hex digits of the key's hash>").  Own results in *key; 0 or -1 NOMEM. */
int pyhost__deps_key(const struct pyhost__deps_python *py, char **reqs, size_t n, char **key,
                     char *name, size_t cap);
/* 1 when dir holds a complete entry for key (its marker starts with key), with
 * *installed (own result, may be NULL) the marker's "installed NAME VERSION" lines;
 * 0 when it is missing or damaged. */
int pyhost__deps_entry_ok(const char *dir, const char *key, char **installed);

/* ---- preparing (prepare.c, install.c) ---- */
struct pyhost__deps_job {
  const char *cache;          /* configured root, or NULL */
  char **reqs;                /* normalized, sorted, unique */
  size_t n;
  const struct pyhost__deps_python *py;
  pyhost_deps_progress_fn progress;
  void *progress_ctx;
  const char *who;            /* "plugin NAME" or "script FILE", for messages */
};
/* Makes sure the entry for job exists (installing it once) and writes its directory
 * into env and its "installed NAME VERSION" lines into *installed (own result; may be
 * NULL).  PYHOST_OK, or PYHOST_DEPS (the installer failed: its own message is in
 * err), PYHOST_NOTFOUND (no installer), PYHOST_ERROR (the cache), PYHOST_NOMEM. */
int pyhost__deps_prepare(const struct pyhost__deps_job *job, char *env, size_t cap,
                         char **installed, char *err, size_t errcap);
/* Runs the installer into dir (install.c): PYHOST_OK or a status with err. */
int pyhost__deps_install(const struct pyhost__deps_job *job, const char *dir, char *err,
                         size_t cap);
/* Reports one event to job's progress function (if any) (progress.c); READY says
 * how many packages env holds and whether this preparation installed them. */
void pyhost__deps_report(const struct pyhost__deps_job *job, int phase, const char *package,
                         long done, long total, const char *line, const char *env);
void pyhost__deps_report_ready(const struct pyhost__deps_job *job, const char *env, long count,
                               int fresh);

/* ---- what a load asks for (prepare.c): the declaration, the host's requirements,
 * and the Python, made into a job ---- */
struct pyhost__deps_want {
  int mode;                   /* PYHOST_DEPS_OFF, _DECLARED, _HOST_ONLY */
  char **host_reqs;           /* the host's additions and overrides */
  size_t host_n;
  const char *cache;
  pyhost_deps_progress_fn progress;
  void *progress_ctx;
};
/* The requirement set: decl's requirements, each one the host names replaced by the
 * host's, then the host's others, normalized, sorted, unique (own result in *out, *n;
 * *n 0: nothing to prepare).  0, -1 out of memory, -2 a requirement that is not one
 * (err names it). */
int pyhost__deps_merge(const struct pyhost__deps_decl *decl, const struct pyhost__deps_want *w,
                       char ***out, size_t *n, char *err, size_t cap);
void pyhost__deps_free_list(char **list, size_t n);

#endif
