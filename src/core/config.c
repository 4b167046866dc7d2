/* config.c: the opaque configuration builder and its deep copy into a handle. */
#include "core.h"

#include <string.h>

pyhost_config *pyhost_config_new(void) {
  return pyhost__calloc(1, sizeof(pyhost_config));
}

static void free_list(char **list, size_t n) {
  for (size_t i = 0; i < n; i++) pyhost__free(list[i]);
  pyhost__free(list);
}

static void config_clear(pyhost_config *c) {
  pyhost__free(c->library);
  pyhost__free(c->home);
  pyhost__free(c->program_name);
  pyhost__free(c->executable);
  pyhost__free(c->interpreter);
  free_list(c->sys_path, c->n_sys_path);
  free_list(c->argv, (size_t)c->argc);
  memset(c, 0, sizeof *c);
}

void pyhost_config_free(pyhost_config *c) {
  if (!c) return;
  config_clear(c);
  pyhost__free(c);
}

static int set_string(char **slot, const char *value) {
  char *copy = NULL;
  if (value && !(copy = pyhost__strdup(value))) return PYHOST_NOMEM;
  pyhost__free(*slot);
  *slot = copy;
  return PYHOST_OK;
}

int pyhost_config_set_library(pyhost_config *c, const char *path) {
  return c ? set_string(&c->library, path) : PYHOST_MISUSE;
}

int pyhost_config_set_home(pyhost_config *c, const char *home) {
  return c ? set_string(&c->home, home) : PYHOST_MISUSE;
}

int pyhost_config_set_program_name(pyhost_config *c, const char *name) {
  return c ? set_string(&c->program_name, name) : PYHOST_MISUSE;
}

int pyhost_config_set_executable(pyhost_config *c, const char *path) {
  return c ? set_string(&c->executable, path) : PYHOST_MISUSE;
}

int pyhost_config_add_sys_path(pyhost_config *c, const char *dir) {
  if (!c) return PYHOST_MISUSE;
  if (!dir) {
    free_list(c->sys_path, c->n_sys_path);
    c->sys_path = NULL;
    c->n_sys_path = 0;
    return PYHOST_OK;
  }
  char **grown = pyhost__realloc(c->sys_path, (c->n_sys_path + 1) * sizeof *grown);
  if (!grown) return PYHOST_NOMEM;
  c->sys_path = grown;
  if (!(grown[c->n_sys_path] = pyhost__strdup(dir))) return PYHOST_NOMEM;
  c->n_sys_path++;
  return PYHOST_OK;
}

static int copy_list(char ***out, char *const *in, size_t n) {
  *out = NULL;
  if (!n) return PYHOST_OK;
  char **list = pyhost__calloc(n, sizeof *list);
  if (!list) return PYHOST_NOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!(list[i] = pyhost__strdup(in[i] ? in[i] : ""))) {
      free_list(list, i);
      return PYHOST_NOMEM;
    }
  }
  *out = list;
  return PYHOST_OK;
}

int pyhost_config_set_argv(pyhost_config *c, int argc, const char *const *argv) {
  if (!c || argc < 0 || (argc && !argv)) return PYHOST_MISUSE;
  char **copy;
  int rc = copy_list(&copy, (char *const *)argv, (size_t)argc);
  if (rc) return rc;
  free_list(c->argv, (size_t)c->argc);
  c->argv = copy;
  c->argc = argc;
  return PYHOST_OK;
}

/* The scalar setters, one row each: field, argument type, the value stored. */
#define PYHOST_CONFIG_SCALARS(X)                 \
  X(min_python, unsigned long, v)                \
  X(max_python, unsigned long, v)                \
  X(python_minor, unsigned long, v)              \
  X(flags, unsigned, v)                          \
  X(prefer_newest, int, v != 0)                  \
  X(allow_debug, int, v != 0)                    \
  X(no_subprocess, int, v != 0)                  \
  X(isolated, int, v != 0)

#define DEFINE_SCALAR_SETTER(field, type, stored)                \
  int pyhost_config_set_##field(pyhost_config *c, type v) {      \
    if (!c) return PYHOST_MISUSE;                                \
    c->field = (stored);                                         \
    return PYHOST_OK;                                            \
  }
PYHOST_CONFIG_SCALARS(DEFINE_SCALAR_SETTER)
#undef DEFINE_SCALAR_SETTER

int pyhost_config_set_interpreter(pyhost_config *c, const char *path) {
  return c ? set_string(&c->interpreter, path) : PYHOST_MISUSE;
}

/* Deep copy for pyhost_init; dst is zeroed on failure. */
int pyhost__config_copy(pyhost_config *dst, const pyhost_config *src) {
  memset(dst, 0, sizeof *dst);
  if (!src) return PYHOST_OK;
  int rc = PYHOST_OK;
  if ((src->library && !(dst->library = pyhost__strdup(src->library))) ||
      (src->home && !(dst->home = pyhost__strdup(src->home))) ||
      (src->program_name && !(dst->program_name = pyhost__strdup(src->program_name))) ||
      (src->executable && !(dst->executable = pyhost__strdup(src->executable))) ||
      (src->interpreter && !(dst->interpreter = pyhost__strdup(src->interpreter))))
    rc = PYHOST_NOMEM;
  if (!rc && !(rc = copy_list(&dst->sys_path, src->sys_path, src->n_sys_path)))
    dst->n_sys_path = src->n_sys_path;
  if (!rc && !(rc = copy_list(&dst->argv, src->argv, (size_t)src->argc))) dst->argc = src->argc;
  dst->min_python = src->min_python;
  dst->flags = src->flags;
  dst->max_python = src->max_python;
  dst->python_minor = src->python_minor;
  dst->prefer_newest = src->prefer_newest;
  dst->allow_debug = src->allow_debug;
  dst->no_subprocess = src->no_subprocess;
  dst->isolated = src->isolated;
  if (rc) config_clear(dst);
  return rc;
}

void pyhost__config_clear(pyhost_config *c) {
  config_clear(c);
}
