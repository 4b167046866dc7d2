/* discover_win32.c: discover_sys.h on Windows.
 *
 * Python installs in its own directory (python311.dll beside python.exe), so the
 * "standard places" are the PEP 514 registry entries, the python.org per-user and
 * all-users install roots, and nothing relative: the current directory is never a
 * candidate.  Strings cross the API as UTF-16 and are converted here.
 */
#include "discover_sys.h"
#include "alloc.h"
#include "names.h"
#include "strbuf.h"

#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char pyhost__sys_list_sep = ';';
const char *const pyhost__sys_exe_suffix = ".exe";
const char *pyhost__sys_ld_conf = NULL; /* no such thing on Windows */

static wchar_t *widen(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
  if (n <= 0) return NULL;
  wchar_t *w = pyhost__malloc((size_t)n * sizeof *w);
  if (w && MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n) != n) {
    pyhost__free(w);
    w = NULL;
  }
  return w;
}

static int narrow(const wchar_t *w, char *out, size_t cap) {
  int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)cap, NULL, NULL);
  if (n <= 0) {
    if (cap) out[0] = '\0';
    return -1;
  }
  return 0;
}

int pyhost__sys_is_absolute(const char *p) {
  return (p[0] && p[1] == ':' && (p[2] == '\\' || p[2] == '/')) || (p[0] == '\\' && p[1] == '\\');
}

int pyhost__sys_list_dir(const char *dir, void (*fn)(void *ctx, const char *name), void *ctx) {
  char pattern[4096];
  pyhost__fmt(pattern, sizeof pattern, "%s\\*", dir);
  wchar_t *w = widen(pattern);
  WIN32_FIND_DATAW fd;
  HANDLE h = w ? FindFirstFileW(w, &fd) : INVALID_HANDLE_VALUE;
  pyhost__free(w);
  if (h == INVALID_HANDLE_VALUE) return -1;
  struct pyhost__names names = {0};
  do {
    char name[1024];
    if (narrow(fd.cFileName, name, sizeof name) == 0 && strcmp(name, ".") && strcmp(name, "..") &&
        pyhost__names_add(&names, name) != 0)
      break;
  } while (FindNextFileW(h, &fd));
  FindClose(h);
  pyhost__names_emit(&names, fn, ctx);
  return 0;
}

int pyhost__sys_is_executable(const char *path) {
  wchar_t *w = widen(path);
  DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  pyhost__free(w);
  return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* python311.dll, python313t.dll, python311_d.dll */
int pyhost__sys_lib_name(const char *name, unsigned *major, unsigned *minor, char *flags,
                         size_t flags_cap) {
  if (_strnicmp(name, "python", 6) != 0 || name[6] < '2' || name[6] > '9') return 0;
  *major = (unsigned)(name[6] - '0');
  const char *p = name + 7;
  if (*p < '0' || *p > '9') return 0;
  *minor = (unsigned)strtoul(p, (char **)&p, 10);
  size_t nf = 0;
  if (*p == 't' && nf + 1 < flags_cap) flags[nf++] = *p++;
  if (!_strnicmp(p, "_d", 2) && nf + 1 < flags_cap) {
    flags[nf++] = 'd';
    p += 2;
  }
  flags[nf < flags_cap ? nf : 0] = '\0';
  return !_stricmp(p, ".dll");
}

void pyhost__sys_lib_names_for(unsigned major, unsigned minor, char *out, size_t cap) {
  int n = snprintf(out, cap, "python%u%u.dll", major, minor);
  if (n > 0 && (size_t)n + 1 < cap) out[n + 1] = '\0';
}

void pyhost__sys_prefix_lib_dirs(const char *prefix, void (*fn)(void *ctx, const char *dir),
                                 void *ctx) {
  fn(ctx, prefix);
}

void pyhost__sys_std_places(const char *pyenv_root,
                            void (*fn)(void *ctx, const char *dir, const char *kind), void *ctx) {
  char dir[4096];
  /* pyenv-win keeps versions under %PYENV_ROOT%\versions\<v>\python3X.dll */
  if (pyenv_root && pyenv_root[0]) {
    pyhost__fmt(dir, sizeof dir, "%s\\versions", pyenv_root);
    fn(ctx, dir, "prefixes");
  }
  /* python.org installers: per user, then for all users */
  const char *local = getenv("LOCALAPPDATA");
  if (local && pyhost__sys_is_absolute(local)) {
    pyhost__fmt(dir, sizeof dir, "%s\\Programs\\Python", local);
    fn(ctx, dir, "prefixes");
  }
  const char *pf = getenv("ProgramFiles");
  if (pf && pyhost__sys_is_absolute(pf)) fn(ctx, pf, "prefixes");
}

void pyhost__sys_loader_search(char *out, size_t cap) {
  pyhost__fmt(out, cap, "the program's own directory, the directories added with AddDllDirectory "
              "or SetDllDirectory, then the system directory (System32); never PATH or the "
              "current directory (LOAD_LIBRARY_SEARCH_DEFAULT_DIRS)");
}

int pyhost__sys_home(char *out, size_t cap) {
  const char *h = getenv("USERPROFILE");
  if (!h || !pyhost__sys_is_absolute(h)) return -1;
  pyhost__fmt(out, cap, "%s", h);
  return 0;
}

/* %VAR%\sub when VAR is absolute; 0 or -1. */
static int env_dir(const char *var, const char *sub, char *out, size_t cap) {
  const char *v = getenv(var);
  if (!v || !pyhost__sys_is_absolute(v)) return -1;
  pyhost__fmt(out, cap, "%s%s%s", v, sub[0] ? "\\" : "", sub);
  return 0;
}

int pyhost__sys_tool_dir(const char *tool, char *out, size_t cap) {
  /* uv: docs.astral.sh/uv/reference/storage (FOLDERID_RoamingAppData);
   * mise: mise.jdx.dev/directories and its env.rs; asdf has no Windows port */
  if (!strcmp(tool, "uv"))
    return env_dir("UV_PYTHON_INSTALL_DIR", "", out, cap) == 0 ? 0 : env_dir("APPDATA", "uv\\data\\python", out, cap);
  if (!strcmp(tool, "uv-config")) return env_dir("APPDATA", "uv", out, cap);
  /* mise's env.rs: XDG_DATA_HOME, else LOCALAPPDATA; XDG_CONFIG_HOME, else ~/.config */
  if (!strcmp(tool, "mise"))
    return env_dir("MISE_DATA_DIR", "", out, cap) == 0 || env_dir("XDG_DATA_HOME", "mise", out, cap) == 0
               ? 0
               : env_dir("LOCALAPPDATA", "mise", out, cap);
  if (!strcmp(tool, "mise-config"))
    return env_dir("MISE_CONFIG_DIR", "", out, cap) == 0 || env_dir("XDG_CONFIG_HOME", "mise", out, cap) == 0
               ? 0
               : env_dir("USERPROFILE", ".config\\mise", out, cap);
  return -1;
}

void pyhost__sys_conda_roots(void (*fn)(void *ctx, const char *dir), void *ctx) {
  static const char *const names[] = {"miniforge3", "miniconda3", "anaconda3", "mambaforge"};
  static const char *const roots[] = {"USERPROFILE", "ProgramData"};
  char dir[4096];
  for (size_t r = 0; r < 2; r++)
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (env_dir(roots[r], names[i], dir, sizeof dir) == 0) fn(ctx, dir);
}

int pyhost__sys_cwd(char *out, size_t cap) {
  wchar_t w[4096];
  DWORD n = GetCurrentDirectoryW(4096, w);
  if (!n || n >= 4096) return -1;
  return narrow(w, out, cap);
}

int pyhost__sys_run(const char *const *argv, int timeout_ms, char *out, size_t cap, char *err,
                    size_t errlen) {
  /* one command line, each argument quoted (none of pyhost's contain quotes) */
  char cmd[16384];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, cmd, sizeof cmd);
  for (size_t i = 0; argv[i]; i++) pyhost__strbuf_printf(&sb, "%s\"%s\"", i ? " " : "", argv[i]);
  if (cap) out[0] = '\0';
  SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
  HANDLE rd, wr;
  if (!CreatePipe(&rd, &wr, &sa, 0)) {
    pyhost__fmt(err, errlen, "CreatePipe failed (%lu)", (unsigned long)GetLastError());
    return -1;
  }
  SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
  STARTUPINFOW si;
  PROCESS_INFORMATION pi;
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdOutput = wr;
  si.hStdInput = si.hStdError = INVALID_HANDLE_VALUE;
  wchar_t *wcmd = widen(cmd), *wexe = widen(argv[0]);
  BOOL ok = wcmd && wexe &&
            CreateProcessW(wexe, wcmd, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi);
  pyhost__free(wcmd);
  pyhost__free(wexe);
  CloseHandle(wr);
  if (!ok) {
    CloseHandle(rd);
    pyhost__fmt(err, errlen, "cannot run %s (error %lu)", argv[0], (unsigned long)GetLastError());
    return -1;
  }
  size_t len = 0;
  DWORD got;
  char buf[512];
  while (ReadFile(rd, buf, sizeof buf, &got, NULL) && got) {
    size_t take = got < cap - 1 - len ? got : cap - 1 - len;
    memcpy(out + len, buf, take);
    len += take;
  }
  CloseHandle(rd);
  out[len] = '\0';
  DWORD code = 1;
  if (WaitForSingleObject(pi.hProcess, (DWORD)timeout_ms) != WAIT_OBJECT_0) {
    TerminateProcess(pi.hProcess, 1);
    pyhost__fmt(err, errlen, "%s did not answer within %d ms", argv[0], timeout_ms);
    code = (DWORD)-1;
  } else {
    GetExitCodeProcess(pi.hProcess, &code);
  }
  CloseHandle(pi.hProcess);
  CloseHandle(pi.hThread);
  return code == (DWORD)-1 ? -1 : (int)code;
}

static int reg_string(HKEY key, const wchar_t *sub, const wchar_t *value, char *out, size_t cap) {
  wchar_t w[4096];
  DWORD size = sizeof w;
  if (RegGetValueW(key, sub, value, RRF_RT_REG_SZ, NULL, w, &size) != ERROR_SUCCESS) return -1;
  return narrow(w, out, cap);
}

/* PEP 514: HKCU and HKLM \Software\Python\<Company>\<Tag>\InstallPath */
void pyhost__sys_registry(void (*fn)(void *ctx, const char *company, const char *tag,
                                     const char *install_path, const char *executable),
                          void *ctx) {
  static const struct { HKEY root; REGSAM view; } hives[] = {
      {HKEY_CURRENT_USER, 0},
      {HKEY_LOCAL_MACHINE, KEY_WOW64_64KEY},
      {HKEY_LOCAL_MACHINE, KEY_WOW64_32KEY},
  };
  for (size_t h = 0; h < sizeof hives / sizeof hives[0]; h++) {
    HKEY python;
    if (RegOpenKeyExW(hives[h].root, L"Software\\Python", 0, KEY_READ | hives[h].view, &python) != ERROR_SUCCESS)
      continue;
    wchar_t company[256];
    for (DWORD ci = 0;; ci++) {
      DWORD clen = 256;
      if (RegEnumKeyExW(python, ci, company, &clen, NULL, NULL, NULL, NULL) != ERROR_SUCCESS) break;
      if (!wcscmp(company, L"PyLauncher")) continue; /* PEP 514: not a Python */
      HKEY ck;
      if (RegOpenKeyExW(python, company, 0, KEY_READ | hives[h].view, &ck) != ERROR_SUCCESS) continue;
      wchar_t tag[256];
      for (DWORD ti = 0;; ti++) {
        DWORD tlen = 256;
        if (RegEnumKeyExW(ck, ti, tag, &tlen, NULL, NULL, NULL, NULL) != ERROR_SUCCESS) break;
        wchar_t sub[600];
        _snwprintf(sub, 600, L"%ls\\InstallPath", tag);
        char install[4096], exe[4096], c8[256], t8[256];
        if (reg_string(ck, sub, NULL, install, sizeof install) != 0) continue;
        if (reg_string(ck, sub, L"ExecutablePath", exe, sizeof exe) != 0) exe[0] = '\0';
        narrow(company, c8, sizeof c8);
        narrow(tag, t8, sizeof t8);
        fn(ctx, c8, t8, install, exe);
      }
      RegCloseKey(ck);
    }
    RegCloseKey(python);
  }
}

struct pyhost__env_saved {
  int applied;
  size_t n;
  wchar_t **entries; /* "NAME=value" copies */
};

int pyhost__sys_env_isolate(struct pyhost__env_saved **out, const char *userbase) {
  struct pyhost__env_saved *s = pyhost__calloc(1, sizeof *s);
  *out = s;
  if (!s) return -1;
  wchar_t *block = GetEnvironmentStringsW();
  if (!block) return -1;
  size_t count = 0;
  for (wchar_t *e = block; *e; e += wcslen(e) + 1)
    if (!_wcsnicmp(e, L"PYTHON", 6)) count++;
  if (count && !(s->entries = pyhost__calloc(count, sizeof *s->entries))) {
    FreeEnvironmentStringsW(block);
    return -1;
  }
  for (wchar_t *e = block; *e && s->n < count; e += wcslen(e) + 1) {
    if (_wcsnicmp(e, L"PYTHON", 6) != 0) continue;
    size_t bytes = (wcslen(e) + 1) * sizeof(wchar_t);
    if (!(s->entries[s->n] = pyhost__malloc(bytes))) break;
    memcpy(s->entries[s->n++], e, bytes);
  }
  FreeEnvironmentStringsW(block);
  if (s->n != count) return -1;
  s->applied = 1;
  for (size_t i = 0; i < s->n; i++) {
    wchar_t *eq = wcschr(s->entries[i], L'=');
    if (!eq) continue;
    *eq = L'\0';
    SetEnvironmentVariableW(s->entries[i], NULL);
    _wputenv_s(s->entries[i], L""); /* the CRT's copy, which Python reads */
    *eq = L'=';
  }
  wchar_t *wub = widen(userbase);
  int ok = wub && _wputenv_s(L"PYTHONNOUSERSITE", L"1") == 0 && _wputenv_s(L"PYTHONUSERBASE", wub) == 0;
  pyhost__free(wub);
  return ok ? 0 : -1;
}

void pyhost__sys_env_restore(struct pyhost__env_saved *s) {
  if (!s) return;
  if (s->applied) {
    _wputenv_s(L"PYTHONNOUSERSITE", L"");
    _wputenv_s(L"PYTHONUSERBASE", L"");
  }
  for (size_t i = 0; i < s->n; i++) {
    wchar_t *eq = s->entries[i] ? wcschr(s->entries[i], L'=') : NULL;
    if (eq && s->applied) {
      *eq = L'\0';
      _wputenv_s(s->entries[i], eq + 1);
    }
    pyhost__free(s->entries[i]);
  }
  pyhost__free(s->entries);
  pyhost__free(s);
}

int pyhost__sys_env_codeset(char *out, size_t cap) {
  (void)out;
  (void)cap;
  return -1;
}
