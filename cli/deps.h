/* deps.h: `pyhost --deps FILE`, `--deps-list` and `--deps-prune` (deps.c): a script's
 * PEP 723 dependencies prepared before it runs, as `uv run` does, and the cache. */
#ifndef PYHOST_CLI_DEPS_H
#define PYHOST_CLI_DEPS_H

#include "pyhost.h"

/* Prepares what script declares for the Python cfg selects (setting cfg's library to
 * the one chosen) and puts the environment first on the script's sys.path (through
 * PYTHONPATH, which python's own main reads).  Progress goes to stderr: a bar on a
 * terminal, plain lines otherwise.  0, or 1 after printing why not. */
int pyhost_cli_deps_prepare(pyhost_config *cfg, const char *script);

/* Prints the cache's entries (0), or why it cannot (1). */
int pyhost_cli_deps_list(void);

/* Removes entries not used for days days (0: all), printing each: 0, or 1. */
int pyhost_cli_deps_prune(unsigned days);

#endif
