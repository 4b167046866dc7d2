/* executable.h: `pyhost --executable-wrapper`, a command that runs this same Python
 * through pyhost, for sys.executable (executable.c). */
#ifndef PYHOST_CLI_EXECUTABLE_H
#define PYHOST_CLI_EXECUTABLE_H

#include "pyhost.h"

#include <stddef.h>

/* Finds the Python cfg chooses (as pyhost_discover does) and writes, or finds already
 * written, a small script that runs this pyhost program with that library, pyhost
 * being its #! interpreter (`#!PYHOST --executable-script`, then `--python LIB`):
 * PREFIX/bin/python3.X-pyhost-HASH in a venv (so that Python finds the venv beside it),
 * $XDG_CACHE_HOME/pyhost/executables/python3.X-pyhost-HASH otherwise.  argv0 is the
 * command's argv[0], for systems without /proc/self/exe.  Returns 1 with the script's
 * absolute path in out; 0 when discovery finds no Python (pyhost_main then says why);
 * -1 with the reason printed. */
int pyhost_cli_executable_wrapper(const pyhost_config *cfg, const char *argv0, char *out, size_t cap);

/* `pyhost --executable-script FILE ARGS...`, how the kernel runs that script, becomes
 * `pyhost OPTIONS-FROM-FILE --executable /ABSOLUTE/FILE ARGS...` in *argc and *argv
 * (then owned here until pyhost_cli_executable_script_free).  Any other command line
 * is left alone.  0, or -1 with the reason printed. */
int pyhost_cli_executable_script(int *argc, char ***argv);
void pyhost_cli_executable_script_free(void);

#endif
