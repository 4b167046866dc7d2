/* tree_win32.c: tree.h on Windows, with the UTF-16 file APIs. */
#include "tree.h"

#include "alloc.h"
#include "strbuf.h"

#include <windows.h>
#include <string.h>

static wchar_t *widen(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  if (n <= 0) return NULL;
  wchar_t *w = pyhost__malloc((size_t)n * sizeof *w);
  if (w && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) != n) {
    pyhost__free(w);
    w = NULL;
  }
  if (!w) SetLastError(ERROR_NOT_ENOUGH_MEMORY);
  return w;
}

void pyhost__fs_error(char *out, size_t cap) {
  DWORD e = GetLastError();
  char text[256] = "";
  FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, text,
                 sizeof text, NULL);
  size_t n = strlen(text);
  while (n && (text[n - 1] == '\r' || text[n - 1] == '\n' || text[n - 1] == '.')) text[--n] = '\0';
  pyhost__fmt(out, cap, "%s (error %lu)", text, (unsigned long)e);
}

static int is_sep(char c) { return c == '\\' || c == '/'; }

int pyhost__fs_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) {
    SetLastError(ERROR_FILENAME_EXCED_RANGE);
    return -1;
  }
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (!is_sep(buf[i]) && buf[i] != '\0') continue;
    if (i == 2 && buf[1] == ':') continue; /* "C:" */
    char c = buf[i];
    buf[i] = '\0';
    wchar_t *w = widen(buf);
    BOOL ok = w && (CreateDirectoryW(w, NULL) || GetLastError() == ERROR_ALREADY_EXISTS);
    DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    pyhost__free(w);
    if (!ok) return -1;
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) {
      SetLastError(ERROR_DIRECTORY);
      return -1;
    }
    buf[i] = c;
  }
  return 0;
}

int pyhost__fs_rename_new(const char *from, const char *to) {
  wchar_t *wf = widen(from), *wt = widen(to);
  BOOL ok = wf && wt && MoveFileExW(wf, wt, 0); /* no MOVEFILE_REPLACE_EXISTING */
  DWORD e = GetLastError();
  pyhost__free(wf);
  pyhost__free(wt);
  if (ok) return 0;
  SetLastError(e);
  return e == ERROR_ALREADY_EXISTS || e == ERROR_FILE_EXISTS ? 1 : -1;
}

int pyhost__fs_remove_tree(const char *path) {
  wchar_t *w = widen(path);
  DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  if (a == INVALID_FILE_ATTRIBUTES) {
    DWORD e = GetLastError();
    pyhost__free(w);
    return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? 0 : -1;
  }
  if (a & FILE_ATTRIBUTE_READONLY) SetFileAttributesW(w, a & ~(DWORD)FILE_ATTRIBUTE_READONLY);
  int rc = 0;
  if (!(a & FILE_ATTRIBUTE_DIRECTORY)) {
    rc = DeleteFileW(w) ? 0 : -1;
  } else if (a & FILE_ATTRIBUTE_REPARSE_POINT) { /* a junction or link: not followed */
    rc = RemoveDirectoryW(w) ? 0 : -1;
  } else {
    char pattern[4096];
    pyhost__fmt(pattern, sizeof pattern, "%s\\*", path);
    wchar_t *wp = widen(pattern);
    WIN32_FIND_DATAW fd;
    HANDLE h = wp ? FindFirstFileW(wp, &fd) : INVALID_HANDLE_VALUE;
    pyhost__free(wp);
    if (h != INVALID_HANDLE_VALUE) {
      do {
        if (!wcscmp(fd.cFileName, L".") || !wcscmp(fd.cFileName, L"..")) continue;
        char name[1024], child[4096];
        if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, sizeof name, NULL, NULL) <= 0) {
          rc = -1;
          continue;
        }
        pyhost__fmt(child, sizeof child, "%s\\%s", path, name);
        if (pyhost__fs_remove_tree(child) != 0) rc = -1;
      } while (FindNextFileW(h, &fd));
      FindClose(h);
    }
    if (rc == 0 && !RemoveDirectoryW(w)) rc = -1;
  }
  pyhost__free(w);
  return rc;
}

int pyhost__fs_write_file(const char *path, const void *data, size_t len) {
  wchar_t *w = widen(path);
  HANDLE h = w ? CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL)
               : INVALID_HANDLE_VALUE;
  pyhost__free(w);
  if (h == INVALID_HANDLE_VALUE) return -1;
  DWORD done;
  BOOL ok = WriteFile(h, data, (DWORD)len, &done, NULL) && done == (DWORD)len && FlushFileBuffers(h);
  DWORD e = GetLastError();
  CloseHandle(h);
  SetLastError(e);
  return ok ? 0 : -1;
}

/* 100 ns intervals since 1601 in seconds since 1970 */
static int64_t unix_seconds(const FILETIME *ft) {
  uint64_t t = ((uint64_t)ft->dwHighDateTime << 32) | ft->dwLowDateTime;
  return (int64_t)(t / 10000000u) - INT64_C(11644473600);
}

int pyhost__fs_touch(const char *path) {
  wchar_t *w = widen(path);
  HANDLE h = w ? CreateFileW(w, FILE_WRITE_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                             NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL)
               : INVALID_HANDLE_VALUE;
  pyhost__free(w);
  if (h == INVALID_HANDLE_VALUE) return -1;
  FILETIME now;
  GetSystemTimeAsFileTime(&now);
  BOOL ok = SetFileTime(h, NULL, NULL, &now);
  CloseHandle(h);
  return ok ? 0 : -1;
}

int64_t pyhost__fs_mtime(const char *path) {
  wchar_t *w = widen(path);
  WIN32_FILE_ATTRIBUTE_DATA d;
  BOOL ok = w && GetFileAttributesExW(w, GetFileExInfoStandard, &d);
  pyhost__free(w);
  return ok ? unix_seconds(&d.ftLastWriteTime) : -1;
}

int64_t pyhost__fs_now(void) {
  FILETIME now;
  GetSystemTimeAsFileTime(&now);
  return unix_seconds(&now);
}

struct pyhost__fs_lock {
  HANDLE h;
};

int pyhost__fs_lock(const char *path, int wait, struct pyhost__fs_lock **out) {
  *out = NULL;
  wchar_t *w = widen(path);
  HANDLE h = w ? CreateFileW(w, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                             NULL, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL)
               : INVALID_HANDLE_VALUE;
  pyhost__free(w);
  if (h == INVALID_HANDLE_VALUE) return -1;
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (wait ? 0 : LOCKFILE_FAIL_IMMEDIATELY);
  if (!LockFileEx(h, flags, 0, 1, 0, &ov)) {
    DWORD e = GetLastError();
    CloseHandle(h);
    SetLastError(e);
    return e == ERROR_LOCK_VIOLATION || e == ERROR_IO_PENDING ? 1 : -1;
  }
  if (!(*out = pyhost__malloc(sizeof **out))) {
    CloseHandle(h);
    SetLastError(ERROR_NOT_ENOUGH_MEMORY);
    return -1;
  }
  (*out)->h = h;
  return 0;
}

void pyhost__fs_unlock(struct pyhost__fs_lock *l) {
  if (!l) return;
  CloseHandle(l->h); /* the lock goes with the handle */
  pyhost__free(l);
}
