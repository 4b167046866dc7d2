/* pyrun.h: running a script, -c code, -m module or standard input as `python` does
 * (pyrun.c), so the `pyhost` command can stand in for `python` for scripts. */
#ifndef PYHOST_CLI_PYRUN_H
#define PYHOST_CLI_PYRUN_H

#include "pyhost.h"

/* What to run: the forms of `python [-c CODE | -m MODULE | - | FILE] ARGS...`. */
enum pyhost_cli_run_kind { PYHOST_RUN_CODE, PYHOST_RUN_MODULE, PYHOST_RUN_STDIN, PYHOST_RUN_PATH };

/* The process-wide set-up `python` makes before it starts: LC_CTYPE from the
 * environment, and Python's signal dispositions (SIGPIPE and SIGXFSZ ignored, so a
 * closed pipe raises BrokenPipeError; SIGINT raises KeyboardInterrupt).  Sets the
 * init flags on cfg. */
void pyhost_cli_run_setup(pyhost_config *cfg);

/* After init, python 3.7+'s C locale coercion (PEP 538): a C or POSIX LC_CTYPE, with
 * LC_ALL unset and PYTHONCOERCECLOCALE not 0, becomes C.UTF-8, in os.environ too so
 * that child processes inherit it.  Nothing on Windows, as python. */
void pyhost_cli_run_coerce_locale(pyhost *h);

/* sys.argv as python gives it: argv[0] "-c", "-m" or "-" (the script's path for
 * PYHOST_RUN_PATH), then every argument that follows. */
int pyhost_cli_run_argv(pyhost_config *cfg, enum pyhost_cli_run_kind kind, const char *target,
                        int argc, char **args);

/* Runs target in the started h as python would, and returns python's exit status
 * (SystemExit's code, 1 after an uncaught exception printed by sys.excepthook, 2 for a
 * script that cannot be opened).  An uncaught KeyboardInterrupt sets *interrupted:
 * the caller, after pyhost_free, ends the process as python 3.8+ does. */
int pyhost_cli_run(pyhost *h, enum pyhost_cli_run_kind kind, const char *target, int *interrupted);

/* After pyhost_free: python 3.8+ ends by SIGINT after an uncaught KeyboardInterrupt
 * (the shell sees 130); earlier versions exit 1.  Returns the status to exit with. */
int pyhost_cli_run_exit(unsigned long python_version, int status, int interrupted);

#endif
