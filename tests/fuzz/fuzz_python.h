/* fuzz_python.h: the Python the fuzz targets share (fuzz_python.c), and the bound on
 * every unit. */
#ifndef PYHOST_FUZZ_PYTHON_H
#define PYHOST_FUZZ_PYTHON_H

#include "pyhost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts Python on first use (PYHOST_FUZZ_PYTHON, else the build's default library)
 * with a small set of builtins in __main__; aborts when it cannot. */
pyhost *fuzz_python(void);
/* The same Python with every builtin (class statements, imports): fuzz_api's hostile
 * snippets are a fixed table, not arbitrary source. */
pyhost *fuzz_python_full(void);

/* The library the targets start (PYHOST_FUZZ_PYTHON, else the build's default), and
 * the same setup for a Python a target started itself (fuzz_cpp's pyh::interpreter):
 * the watchdog and the bounded sleep below act on h from then on. */
const char *fuzz_python_library(void);
void fuzz_python_adopt(pyhost *h);

/* Every unit is bounded.  fuzz_unit_begin starts its clock with a budget in
 * milliseconds; once the budget is spent the watchdog thread calls pyhost_interrupt
 * every 50 ms until fuzz_unit_end, and fuzz_unit_expired answers 1 so that a target
 * running a program of operations stops starting new ones.  Blocking is bounded too:
 * time.sleep, the one blocking call Python code reaches in the targets (pyhost_interrupt
 * cannot stop a blocking C call, pyhost.h), sleeps in slices of 20 ms there. */
void fuzz_unit_begin(unsigned budget_ms);
int fuzz_unit_expired(void);
void fuzz_unit_end(void);
/* 1: fuzz_unit_begin(1000); 0: fuzz_unit_end() (fuzz_eval, fuzz_values). */
void fuzz_watch(int on);

#ifdef __cplusplus
}
#endif

#endif
