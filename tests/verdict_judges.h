/* verdict_judges.h: one library file put before pyhost's three judges, which must agree
 * (src/loader/verdict.h): pyhost_inspect_library (what `pyhost --check` prints),
 * pyhost_discover with the file configured (what `pyhost --list` prints) and
 * pyhost_init (what `pyhost --python` does).  Used by test_verdict.c (copies of every
 * matrix library, renamed, cut, moved) and test_verdict_files.c (odd files). */
#ifndef PYHOST_VERDICT_JUDGES_H
#define PYHOST_VERDICT_JUDGES_H

#include <stddef.h>

/* Keeps discovery to the configured file: no PATH, pyenv, conda or tool folders of the
 * machine (they are judged too, but they are not what the cases look at).  dir is
 * a directory of the case's own. */
void verdict_quiet_discovery(const char *dir);

/* What the three judges must all say about path: the status, the reason code, and
 * whether the library is a debug build (-1: not known, as for a file never opened).
 * Init comes last: when the verdict is PYHOST_OK, it starts Python in this process and
 * finalizes it, so a case judges one file that starts. */
void verdict_expect(const char *path, int status, const char *code, int debug);

/* A scratch directory of the case's own, made once. */
const char *verdict_scratch(void);

/* Copies src to dst, at most limit bytes (0: all), and returns dst. */
const char *verdict_copy(const char *src, const char *dst, size_t limit);

#endif
