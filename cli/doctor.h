/* doctor.h: the `pyhost --list` and `pyhost --check` commands (doctor.c). */
#ifndef PYHOST_CLI_DOCTOR_H
#define PYHOST_CLI_DOCTOR_H

#include "pyhost.h"

#include <stddef.h>

/* Prints every discovery candidate as an aligned table, or JSON; with requires_python
 * (may be NULL) also whether each meets it and which one the process level would run
 * a plugin declaring it on, and why.  Exit status: 0 when one would be taken (and one
 * meets requires_python), 1 otherwise. */
int pyhost_cli_list(const pyhost_config *cfg, int json, const char *requires_python);

/* Prints what pyhost knows about lib, then whether it initializes.  0 when it does. */
int pyhost_cli_check(const char *lib);

/* `pyhost --info`: version, library, home, the venv in use, build (one line each). */
void pyhost_cli_info(pyhost *h);

/* text with every run of white space (newlines too: 3.6's and 2.7's version text
 * has one) turned into one space, so that it fits a column. */
void pyhost_cli_one_line(const char *text, char *out, size_t cap);

/* The discovery options, for every mode: --interpreter PATH, --min-python X.Y,
 * --max-python X.Y, --python-minor X.Y, --prefer-newest, --allow-debug,
 * --no-subprocess, --isolated.  Looks at argv[*i]: returns 1 when it is one of them
 * (*i then points at its last word), 0 when it is not, -1 when its value is missing or
 * malformed (the message is printed). */
int pyhost_cli_policy_arg(int argc, char **argv, int *i);

/* Applies the options seen so far to cfg. */
void pyhost_cli_policy_apply(pyhost_config *cfg);

/* The lines of the usage text that describe them. */
extern const char pyhost_cli_policy_usage[];

#endif
