/* config_discover.c: the config setters for discovery and the version policy. */
#include "internal.h"

int pyhost_config_set_interpreter(pyhost_config *c, const char *path) {
  if (!c) return PYHOST_MISUSE;
  char *copy = NULL;
  if (path && !(copy = pyhost__strdup(path))) return PYHOST_NOMEM;
  pyhost__free(c->interpreter);
  c->interpreter = copy;
  return PYHOST_OK;
}

int pyhost_config_set_max_python(pyhost_config *c, unsigned long hexversion) {
  if (!c) return PYHOST_MISUSE;
  c->max_python = hexversion;
  return PYHOST_OK;
}

int pyhost_config_set_python_minor(pyhost_config *c, unsigned long hexversion) {
  if (!c) return PYHOST_MISUSE;
  c->python_minor = hexversion;
  return PYHOST_OK;
}

int pyhost_config_set_prefer_newest(pyhost_config *c, int on) {
  if (!c) return PYHOST_MISUSE;
  c->prefer_newest = on != 0;
  return PYHOST_OK;
}

int pyhost_config_set_allow_debug(pyhost_config *c, int on) {
  if (!c) return PYHOST_MISUSE;
  c->allow_debug = on != 0;
  return PYHOST_OK;
}

int pyhost_config_set_no_subprocess(pyhost_config *c, int on) {
  if (!c) return PYHOST_MISUSE;
  c->no_subprocess = on != 0;
  return PYHOST_OK;
}

int pyhost_config_set_isolated(pyhost_config *c, int on) {
  if (!c) return PYHOST_MISUSE;
  c->isolated = on != 0;
  return PYHOST_OK;
}
