/* doctor.h: the `pyhost --list` and `pyhost --check` commands (doctor.c). */
#ifndef PYHOST_CLI_DOCTOR_H
#define PYHOST_CLI_DOCTOR_H

#include "pyhost.h"

#include <stddef.h>

/* Prints every discovery candidate as an aligned table, or JSON.  Exit status: 0 when
 * one would be taken, 1 otherwise. */
int pyhost_cli_list(const pyhost_config *cfg, int json);

/* Prints what pyhost knows about lib, then whether it initializes.  0 when it does. */
int pyhost_cli_check(const char *lib);

#endif
