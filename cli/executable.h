/* executable.h: `pyhost --executable-wrapper`, a command that runs this same Python
 * through pyhost, for sys.executable (executable.c). */
#ifndef PYHOST_CLI_EXECUTABLE_H
#define PYHOST_CLI_EXECUTABLE_H

#include "pyhost.h"

#include <stddef.h>

/* Finds the Python cfg chooses (as pyhost_discover does) and writes, or finds already
 * written, a small script that runs this pyhost program with that library:
 * PREFIX/bin/python3.X-pyhost-HASH in a venv (so that Python finds the venv beside it),
 * $XDG_CACHE_HOME/pyhost/executables/python3.X-pyhost-HASH otherwise.  argv0 is the
 * command's argv[0], for systems without /proc/self/exe.  Returns 1 with the script's
 * absolute path in out; 0 when discovery finds no Python (pyhost_main then says why);
 * -1 with the reason printed. */
int pyhost_cli_executable_wrapper(const pyhost_config *cfg, const char *argv0, char *out, size_t cap);

#endif
