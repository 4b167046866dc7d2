/* eval.c: pyhost_exec, pyhost_exec_file and pyhost_eval.
 *
 * The limited API has no PyRun_*: code is compiled with Py_CompileString and run with
 * PyEval_EvalCode in __main__'s dict, which carries __builtins__ (3.6 to 3.9 fail
 * with NameError on a dict without it).
 */
#include "internal.h"

#include <string.h>

/* ---- the compiled-expression cache ----
 * Compiling costs far more than evaluating a short expression, and hosts evaluate the
 * same few expressions again and again.  pyhost_eval keeps the code objects of the
 * last CACHE_SIZE distinct expressions, keyed by their source text (a code object is
 * immutable and does not depend on the namespace it runs in), and evicts the least
 * recently used.  The GIL guards the cache; compiling may run Python code (warnings),
 * so no slot is held across Py_CompileString, and a running code object holds its
 * own reference in case another thread evicts it meanwhile. */
#define CACHE_SIZE PYHOST__EVAL_CACHE_SIZE /* the cache is the bridge's (registries.h) */
#define CACHE_MAX_SOURCE 4096 /* longer sources are compiled each time: bounded memory */

static size_t hash_source(const char *s, size_t len) {
  size_t x = (size_t)14695981039346656037ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) x = (x ^ (unsigned char)s[i]) * (size_t)1099511628211ull;
  return x;
}

static struct pyhost__eval_entry *cache_find(struct pyhost__istate *is, const char *src,
                                             size_t len, size_t hash) {
  for (size_t i = 0; i < CACHE_SIZE; i++) {
    struct pyhost__eval_entry *e = &is->eval_cache[i];
    if (e->src && e->hash == hash && e->len == len && memcmp(e->src, src, len) == 0) return e;
  }
  return NULL;
}

static void main_cache_clear(void);

/* Stores code (borrowed) for src; on no memory the cache is just not filled. */
static void cache_store(struct pyhost__istate *is, const char *src, size_t len, size_t hash,
                        PyObject *code) {
  if (cache_find(is, src, len, hash)) return; /* another thread stored it meanwhile */
  struct pyhost__eval_entry *cache = is->eval_cache, *victim = &cache[0];
  for (size_t i = 0; i < CACHE_SIZE && victim->src; i++)
    if (!cache[i].src || cache[i].last_use < victim->last_use) victim = &cache[i];
  char *copy = pyhost__memdup(src, len);
  if (!copy) return;
  PyObject *old = victim->code;
  pyhost__free(victim->src);
  victim->src = copy;
  victim->len = len;
  victim->hash = hash;
  victim->last_use = ++is->eval_clock;
  PY.Py_IncRef(code);
  victim->code = code;
  if (is == &pyhost__bridge.main) /* a sub-interpreter's goes with it (plugin_interp.c) */
    pyhost__teardown_add(&pyhost__bridge.eval_cache_hook, main_cache_clear, PYHOST__AT_DROP);
  PY.Py_DecRef(old); /* last: the slot is consistent if this runs any code */
}

/* A new reference to expr's code object, from the cache or compiled; NULL with a
 * Python exception set. */
static PyObject *compile_expression(const char *expr) {
  struct pyhost__istate *is = pyhost__istate();
  size_t len = strlen(expr);
  size_t hash = 0;
  if (len <= CACHE_MAX_SOURCE) {
    hash = hash_source(expr, len);
    struct pyhost__eval_entry *e = cache_find(is, expr, len, hash);
    if (e) {
      is->eval_hits++;
      e->last_use = ++is->eval_clock;
      PY.Py_IncRef(e->code);
      return e->code;
    }
  }
  is->eval_misses++;
  PyObject *code = PY.Py_CompileString(expr, "<eval>", Py_eval_input);
  if (code && len <= CACHE_MAX_SOURCE) cache_store(is, expr, len, hash, code);
  return code;
}

/* With the GIL, in is's interpreter: before Py_FinalizeEx for the main one (its
 * teardown hook), before a sub-interpreter ends for that one. */
void pyhost__eval_cache_clear(struct pyhost__istate *is) {
  for (size_t i = 0; i < CACHE_SIZE; i++) {
    struct pyhost__eval_entry *e = &is->eval_cache[i];
    PyObject *code = e->code;
    pyhost__free(e->src);
    memset(e, 0, sizeof *e);
    PY.Py_DecRef(code);
  }
  is->eval_clock = is->eval_hits = is->eval_misses = 0;
}

static void main_cache_clear(void) { pyhost__eval_cache_clear(&pyhost__bridge.main); }

void pyhost__eval_cache_stats(unsigned long *hits, unsigned long *misses) {
  struct pyhost__istate *is = pyhost__istate();
  *hits = is->eval_hits;
  *misses = is->eval_misses;
}

/* Runs code (borrowed) in __main__; *result gets a new reference when not NULL. */
static int run_code(pyhost *h, PyObject *code, PyObject **result) {
  PyObject *r = code ? PY.PyEval_EvalCode(code, pyhost__main_dict(h), pyhost__main_dict(h)) : NULL;
  if (!r) return pyhost__take_exception(h, NULL);
  if (result) *result = r;
  else PY.Py_DecRef(r);
  return PYHOST_OK;
}

/* Compiles and runs src; *result gets a new reference when want_result. */
static int run(pyhost *h, const char *src, const char *filename, int mode, PyObject **result) {
  PyObject *code = PY.Py_CompileString(src, filename, mode);
  int rc = run_code(h, code, result);
  PY.Py_DecRef(code);
  return rc;
}

int pyhost_exec(pyhost *h, const char *code, const char *filename) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  if (!code) rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_exec: code is NULL");
  else rc = run(h, code, filename ? filename : "<pyhost>", Py_file_input, NULL);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_exec_file(pyhost *h, const char *path) {
  PyGILState_STATE gil;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  char *src = NULL, err[256];
  size_t len;
  if (!path) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_exec_file: path is NULL");
  } else if (pyhost__fs_read(path, &src, &len, err, sizeof err) != 0) {
    rc = pyhost__set_error(h, PYHOST_NOTFOUND, "cannot read %s: %s", path, err);
  } else if (strlen(src) != len) {
    rc = pyhost__set_error(h, PYHOST_PYEXC, "%s: source code contains a NUL byte", path);
  } else {
    PyObject *file = PY.PyUnicode_DecodeUTF8(path, (Py_ssize_t)strlen(path), "surrogateescape");
    if (!file || PY.PyDict_SetItemString(pyhost__main_dict(h), "__file__", file) < 0)
      rc = pyhost__take_exception(h, "setting __file__ failed");
    else
      rc = run(h, src, path, Py_file_input, NULL);
    PY.Py_DecRef(file);
  }
  pyhost__free(src);
  pyhost__leave(h, gil);
  return rc;
}

int pyhost_eval(pyhost *h, const char *expr, pyhost_value **result) {
  PyGILState_STATE gil;
  if (result) *result = NULL;
  int rc = pyhost__enter(h, &gil);
  if (rc) return rc;
  PyObject *r = NULL;
  if (!expr || !result) {
    rc = pyhost__set_error(h, PYHOST_MISUSE, "pyhost_eval: %s is NULL", expr ? "result" : "expr");
  } else {
    PyObject *code = compile_expression(expr);
    rc = run_code(h, code, &r);
    PY.Py_DecRef(code);
  }
  if (rc == PYHOST_OK) {
    if (!(*result = pyhost__from_python(h, r)))
      rc = pyhost__take_exception(h, "converting the result failed");
  }
  PY.Py_DecRef(r);
  pyhost__leave(h, gil);
  return rc;
}
