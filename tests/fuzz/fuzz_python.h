/* fuzz_python.h: the Python the fuzz targets share (fuzz_python.c). */
#ifndef PYHOST_FUZZ_PYTHON_H
#define PYHOST_FUZZ_PYTHON_H

#include "pyhost.h"

/* Starts Python on first use (PYHOST_FUZZ_PYTHON, else the build's default library)
 * with a small set of builtins in __main__; aborts when it cannot. */
pyhost *fuzz_python(void);
/* The same Python with every builtin (class statements, imports): fuzz_api's hostile
 * snippets are a fixed table, not arbitrary source. */
pyhost *fuzz_python_full(void);
/* 1: an eval starts (the watchdog interrupts it after a second); 0: it ended. */
void fuzz_watch(int on);

#endif
