/* fs_win32.c: fs.h on Windows, with the UTF-16 file APIs. */
#include "fs.h"
#include "alloc.h"
#include "strbuf.h"

#include <windows.h>
#include <stdio.h>
#include <string.h>

const char pyhost__fs_sep = '\\';

static wchar_t *widen(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  if (n <= 0) return NULL;
  wchar_t *w = pyhost__malloc((size_t)n * sizeof *w);
  if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
    pyhost__free(w);
    w = NULL;
  }
  return w;
}

enum pyhost__fs_kind pyhost__fs_kind(const char *path) {
  wchar_t *w = widen(path);
  DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  pyhost__free(w);
  if (a == INVALID_FILE_ATTRIBUTES) return PYHOST__FS_MISSING;
  if (a & FILE_ATTRIBUTE_DIRECTORY) return PYHOST__FS_DIR;
  if (a & FILE_ATTRIBUTE_DEVICE) return PYHOST__FS_OTHER;
  return PYHOST__FS_FILE;
}

int pyhost__fs_readable(const char *path) {
  wchar_t *w = widen(path);
  HANDLE f = w ? CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                             OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL)
               : INVALID_HANDLE_VALUE;
  pyhost__free(w);
  if (f == INVALID_HANDLE_VALUE) return 0;
  CloseHandle(f);
  return 1;
}

int pyhost__fs_realpath(const char *path, char *out, size_t cap) {
  wchar_t *w = widen(path);
  wchar_t full[32768];
  DWORD n = w ? GetFullPathNameW(w, (DWORD)(sizeof full / sizeof full[0]), full, NULL) : 0;
  pyhost__free(w);
  if (n == 0 || n >= sizeof full / sizeof full[0]) return -1;
  return WideCharToMultiByte(CP_UTF8, 0, full, -1, out, (int)cap, NULL, NULL) > 0 ? 0 : -1;
}

int pyhost__fs_has_dir(const char *path) {
  return strchr(path, '\\') != NULL || strchr(path, '/') != NULL || (path[0] && path[1] == ':');
}

int pyhost__fs_read(const char *path, char **data, size_t *len, char *err, size_t errlen) {
  wchar_t *w = widen(path);
  FILE *f = w ? _wfopen(w, L"rb") : NULL;
  pyhost__free(w);
  *data = NULL;
  *len = 0;
  if (!f) {
    pyhost__fmt(err, errlen, "cannot open the file");
    return -1;
  }
  return pyhost__fs_read_stream(f, data, len, err, errlen);
}
