/* dl.h: the platform interface for loading a shared library.  One implementation is
 * compiled: dl_posix.c (dlopen), dl_win32.c (LoadLibraryExW) or dl_none.c (fails
 * clearly).  No other file knows which. */
#ifndef PYHOST_DL_H
#define PYHOST_DL_H

#include <stddef.h>

/* Opens the library at path (UTF-8).  global: make its symbols visible to libraries
 * loaded later (RTLD_GLOBAL; C extension modules need libpython's symbols that way);
 * opening an already open library again with global=1 promotes it.  On failure returns
 * NULL and copies the system loader's own message into err. */
void *pyhost__dl_open(const char *path, int global, char *err, size_t errlen);

/* The library file formats (the loader's libcheck.h has a parser for each). */
enum pyhost__lib_format { PYHOST__FMT_NONE, PYHOST__FMT_ELF, PYHOST__FMT_PE, PYHOST__FMT_MACHO };

/* The file format this loader reads (enum pyhost__lib_format): the one whose headers
 * are checked before a file is handed to pyhost__dl_open. */
extern const int pyhost__dl_format;

/* The address of a symbol (function or data), or NULL. */
void *pyhost__dl_sym(void *lib, const char *name);

/* Writes the file path of the library that contains addr into out (UTF-8).  Returns 0
 * on success, -1 when the system cannot tell. */
int pyhost__dl_path(void *lib, void *addr, char *out, size_t cap);

/* Writes the file path of the running program (the host's executable) into out
 * (UTF-8).  0, or -1 when the system cannot tell. */
int pyhost__dl_program_path(char *out, size_t cap);

/* Drops one reference to lib.  Only ever called for a library Python never ran in. */
void pyhost__dl_close(void *lib);

#endif
