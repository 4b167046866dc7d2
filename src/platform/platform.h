/* platform.h: what the platform layer offers the folders above it, in one header.
 *
 * The platform seam is the bottom layer (docs/design.md): allocation, strings,
 * dynamic loading, files, a sleep, threads and monitors, worker processes and their
 * channels (proc.h), a program run to its end (run.h), directory trees and lock
 * files (tree.h), the system's side of discovery, UTF-8 to wchar_t.
 * Files above include this header only; the per-piece headers it gathers are the
 * platform folder's own.  Nothing here knows Python.
 */
#ifndef PYHOST_PLATFORM_H
#define PYHOST_PLATFORM_H

#include "alloc.h"
#include "discover_sys.h"
#include "dl.h"
#include "fs.h"
#include "proc.h"
#include "run.h"
#include "strbuf.h"
#include "sync.h"
#include "tree.h"

#include <wchar.h>

/* ---- UTF-8 to wchar_t (wide.c) ---- */
/* own result; bytes that are not UTF-8 become U+DC80..U+DCFF (surrogateescape), as
 * Python's own decoding of file names does. */
wchar_t *pyhost__widen(const char *s);
/* own result; s decoded in the current LC_CTYPE locale, bytes it cannot decode becoming
 * U+DC80..U+DCFF, as Python's Py_DecodeLocale does (python's main() before 3.8). */
wchar_t *pyhost__widen_locale(const char *s);

#endif
