/* loader.h: what the loader layer offers the folders above it, in one header.
 *
 * The loader turns a library file into the function table: the checks a file passes
 * before the system loader maps it (libcheck.h), then the probe and the table of
 * stable-ABI symbols (pyapi.h, expanded from pyapi_list.h), and the one rule on which
 * libraries are acceptable (verdict.h).  It uses only the platform layer.
 */
#ifndef PYHOST_LOADER_H
#define PYHOST_LOADER_H

#include "pyapi.h" /* first: Python.h must precede system headers */
#include "libcheck.h"
#include "verdict.h"

#endif
