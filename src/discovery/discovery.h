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
/* The installation's own interpreter under home (bin/python3.X, bin/python3,
 * python.exe) for runtime (0x0312 style) into out: 0, or -1 when it has none. */
int pyhost__installation_program(const char *home, unsigned runtime, char *out, size_t cap);
/* The third step of the library verdict (verdict.h): a standard library for runtime
 * near the library (a real path), found into home (may be NULL), or NOHOME "no-home"
 * with the places looked at in tried (may be NULL). */
int pyhost__verdict_home(const char *library, unsigned runtime, char *home, size_t cap,
                         char *tried, size_t tcap, struct pyhost__verdict *v);

/* ---- a library file before the loader sees it (interp.c) ---- */
/* The file's verdict (pyhost__verdict_file, verdict.h), and when the file is a
 * program, not a library: if it is a Python interpreter, the reason goes on to name its
 * library (found from its files, never by running it) and to say how to give it
 * instead.  Every caller judges a file through this. */
int pyhost__verdict_file_explained(const char *path, struct pyhost__verdict *v);

/* The first `program` (a bare name) on PATH into out, skipping relative or empty PATH
 * entries and the directory skip_dir (may be NULL).  0, or -1 when none (interp.c). */
int pyhost__find_on_path(const char *program, const char *skip_dir, char *out, size_t cap);

/* ---- discovery (discover.c) ---- */
/* Chooses a library when none was configured.  Writes its path into out and a
 * description of where it came from into origin.  PYHOST_OK or NOTFOUND with the
 * candidates tried in the message. */
int pyhost__discover(pyhost *h, char *out, size_t cap, char *origin, size_t origin_cap);
/* The policy a handle's configuration sets (min, max, exact minor, debug builds).
 * binding: the library was named by the host or the user, so a debug build is fine. */
void pyhost__policy_of(const pyhost_config *cfg, int binding, struct pyhost__policy *pol);

#endif
