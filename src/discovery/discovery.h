/* discovery.h: what the discovery layer offers the folders above it: choosing a
 * Python library when none was configured, the version policy a configured one gets
 * too, and the home (standard library) that goes with a library.  Never installed.
 */
#ifndef PYHOST_DISCOVERY_H
#define PYHOST_DISCOVERY_H

#include "core.h"

/* ---- home and program name (home.c) ---- */
/* Decides the home and program name for the library at lib_path (real path) and
 * checks that a standard library is there.  Fills h->home, h->w_home, h->w_program. */
int pyhost__choose_home(pyhost *h, unsigned runtime);
/* The nearest ancestor of library (a real path) with a standard library for runtime
 * (PYHOST__V form) into home: 1, or 0 with the places looked at in tried. */
int pyhost__find_home(const char *library, unsigned runtime, char *home, size_t cap, char *tried,
                      size_t tcap);

/* ---- a library file before the loader sees it (interp.c) ---- */
/* pyhost__libcheck_path (libcheck.h), and when the file is a program, not a library:
 * if it is a Python interpreter, why goes on to name its library (found from its files,
 * never by running it) and to say how to give it instead. */
int pyhost__libcheck_explained(const char *path, char *why, size_t cap);

/* ---- discovery (discover.c) ---- */
/* Chooses a library when none was configured.  Writes its path into out and a
 * description of where it came from into origin.  PYHOST_OK or NOTFOUND with the
 * candidates tried in the message. */
int pyhost__discover(pyhost *h, char *out, size_t cap, char *origin, size_t origin_cap);
/* The policy checks a configured library gets too (max, exact minor): PYHOST_OK or
 * PYHOST_VERSION with the message set. */
int pyhost__check_policy(pyhost *h, const char *path, unsigned long hexversion);

#endif
