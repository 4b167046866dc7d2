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

enum pyhost__fs_kind pyhost__fs_open_regular(const char *path, struct pyhost__fs_file *f,
                                             char *why, size_t cap) {
  f->handle = (intptr_t)INVALID_HANDLE_VALUE;
  f->size = 0;
  why[0] = '\0';
  wchar_t *w = widen(path);
  if (!w) return pyhost__fmt(why, cap, "the path is not valid UTF-8"), PYHOST__FS_MISSING;
  DWORD a = GetFileAttributesW(w);
  if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY)) {
    pyhost__free(w);
    return pyhost__fmt(why, cap, "it is a directory"), PYHOST__FS_DIR;
  }
  /* CreateFileW follows reparse points up to the system's own limit */
  HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                         NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
  DWORD code = GetLastError();
  pyhost__free(w);
  if (h == INVALID_HANDLE_VALUE) {
    if (code == ERROR_FILE_NOT_FOUND || code == ERROR_PATH_NOT_FOUND) pyhost__fmt(why, cap, "no such file");
    else if (code == ERROR_CANT_RESOLVE_FILENAME) pyhost__fmt(why, cap, "a symlink loop, or a chain of more symlinks than the system follows");
    else if (code == ERROR_ACCESS_DENIED) pyhost__fmt(why, cap, "the file is not readable");
    else pyhost__fmt(why, cap, "the file cannot be opened (error %lu)", (unsigned long)code);
    return PYHOST__FS_MISSING;
  }
  LARGE_INTEGER size;
  DWORD type = GetFileType(h);
  if (type != FILE_TYPE_DISK || !GetFileSizeEx(h, &size) || size.QuadPart < 0) {
    pyhost__fmt(why, cap, "it is %s, not a regular file",
                type == FILE_TYPE_PIPE ? "a pipe" : type == FILE_TYPE_CHAR ? "a character device" : "a special file");
    CloseHandle(h);
    return PYHOST__FS_OTHER;
  }
  f->handle = (intptr_t)h;
  f->size = (uint64_t)size.QuadPart;
  return PYHOST__FS_FILE;
}

int pyhost__fs_pread(const struct pyhost__fs_file *f, uint64_t off, void *buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    OVERLAPPED at;
    memset(&at, 0, sizeof at);
    at.Offset = (DWORD)(off + got);
    at.OffsetHigh = (DWORD)((off + got) >> 32);
    DWORD chunk = n - got > 0x40000000u ? 0x40000000u : (DWORD)(n - got), r = 0;
    if (!ReadFile((HANDLE)f->handle, (char *)buf + got, chunk, &r, &at) || r == 0) return -1;
    got += r;
  }
  return 0;
}

void pyhost__fs_close(struct pyhost__fs_file *f) {
  if ((HANDLE)f->handle != INVALID_HANDLE_VALUE) CloseHandle((HANDLE)f->handle);
  f->handle = (intptr_t)INVALID_HANDLE_VALUE;
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
