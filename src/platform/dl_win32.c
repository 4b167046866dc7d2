/* dl_win32.c: dl.h on Windows, with LoadLibraryExW.
 *
 * Paths arrive as UTF-8 and are converted to UTF-16.  An absolute path is loaded with
 * LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS, so that
 * python3.dll (the stable-ABI forwarder) binds the python3X.dll beside it and never
 * one from the current directory or PATH.  A bare name gets the default directories
 * only: the current directory is never searched.
 */
#include "dl.h"
#include "strbuf.h"

#include <windows.h>
#include <stdlib.h>
#include <string.h>

const int pyhost__dl_format = PYHOST__FMT_PE;

static wchar_t *utf8_to_utf16(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  if (n <= 0) return NULL;
  wchar_t *w = (wchar_t *)malloc((size_t)n * sizeof *w);
  if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
    free(w);
    w = NULL;
  }
  return w;
}

static int is_absolute(const char *p) {
  return (p[0] && p[1] == ':' && (p[2] == '\\' || p[2] == '/')) ||
         (p[0] == '\\' && p[1] == '\\');
}

static void last_error_text(DWORD code, char *err, size_t errlen) {
  wchar_t *w = NULL;
  DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                               FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, code, 0, (LPWSTR)&w, 0, NULL);
  char text[512];
  if (n && w && WideCharToMultiByte(CP_UTF8, 0, w, -1, text, (int)sizeof text, NULL, NULL) > 0) {
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
      text[--len] = '\0';
    pyhost__fmt(err, errlen, "%s (error %lu)", text, (unsigned long)code);
  } else {
    pyhost__fmt(err, errlen, "LoadLibraryExW failed with error %lu", (unsigned long)code);
  }
  if (w) LocalFree(w);
}

void *pyhost__dl_open(const char *path, int global, char *err, size_t errlen) {
  (void)global; /* a Windows DLL's exports are reachable by every module that asks */
  wchar_t *w = utf8_to_utf16(path);
  if (!w) {
    pyhost__fmt(err, errlen, "the path is not valid UTF-8");
    return NULL;
  }
  DWORD flags = is_absolute(path)
                    ? (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)
                    : LOAD_LIBRARY_SEARCH_DEFAULT_DIRS;
  HMODULE lib = LoadLibraryExW(w, NULL, flags);
  DWORD code = GetLastError();
  free(w);
  if (!lib) last_error_text(code, err, errlen);
  return (void *)lib;
}

void *pyhost__dl_sym(void *lib, const char *name) {
  /* GetProcAddress returns a function pointer type; data exports (PyExc_TypeError,
   * _Py_NoneStruct) come back through it too.  The round trip through uintptr_t keeps
   * compilers quiet about the function-to-object pointer conversion. */
  FARPROC p = GetProcAddress((HMODULE)lib, name);
  return (void *)(uintptr_t)p;
}

int pyhost__dl_path(void *lib, void *addr, char *out, size_t cap) {
  wchar_t w[32768];
  (void)addr;
  DWORD n = GetModuleFileNameW((HMODULE)lib, w, (DWORD)(sizeof w / sizeof w[0]));
  if (n == 0 || n >= sizeof w / sizeof w[0]) return -1;
  if (WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL) <= 0) return -1;
  return 0;
}

int pyhost__dl_program_path(char *out, size_t cap) {
  return pyhost__dl_path(NULL, NULL, out, cap); /* the module NULL is the program */
}

void pyhost__dl_close(void *lib) {
  if (lib) FreeLibrary((HMODULE)lib);
}
