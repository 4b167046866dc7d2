/* run_win32.c: run.h on Windows: CreateProcessW with one inheritable pipe for stdout
 * and stderr, the only handles the program inherits (an explicit handle list), and a
 * job object that kills it when the host ends. */
#include "run.h"
#include "run_lines.h"

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
  return w;
}

/* One argument quoted as CommandLineToArgvW reads it back. */
static void quote(struct pyhost__strbuf *sb, const char *a) {
  pyhost__strbuf_printf(sb, "\"");
  for (const char *p = a;; p++) {
    size_t slashes = 0;
    while (*p == '\\') {
      p++;
      slashes++;
    }
    if (!*p) {
      for (size_t i = 0; i < slashes * 2; i++) pyhost__strbuf_printf(sb, "\\");
      break;
    }
    size_t n = *p == '"' ? slashes * 2 + 1 : slashes;
    for (size_t i = 0; i < n; i++) pyhost__strbuf_printf(sb, "\\");
    pyhost__strbuf_printf(sb, "%c", *p);
  }
  pyhost__strbuf_printf(sb, "\"");
}

/* The host's environment block with env's entries set over it: own result or NULL. */
static wchar_t *env_block(const char *const *env) {
  wchar_t *base = GetEnvironmentStringsW();
  if (!base) return NULL;
  size_t blen = 0;
  while (base[blen]) blen += wcslen(base + blen) + 1;
  size_t extra = 0;
  for (size_t j = 0; env && env[j]; j++) extra += strlen(env[j]) + 1;
  wchar_t *out = pyhost__malloc((blen + extra + 2) * sizeof *out);
  size_t k = 0;
  for (size_t at = 0; out && at < blen; at += wcslen(base + at) + 1) {
    const wchar_t *e = base + at;
    int replaced = 0;
    for (size_t j = 0; env && env[j]; j++) {
      wchar_t *w = widen(env[j]);
      wchar_t *eq = w ? wcschr(w, L'=') : NULL;
      if (eq && _wcsnicmp(w, e, (size_t)(eq - w)) == 0 && e[eq - w] == L'=') replaced = 1;
      pyhost__free(w);
    }
    if (replaced) continue;
    wcscpy(out + k, e);
    k += wcslen(e) + 1;
  }
  for (size_t j = 0; out && env && env[j]; j++) {
    wchar_t *w = widen(env[j]);
    if (!w) continue;
    wcscpy(out + k, w);
    k += wcslen(w) + 1;
    pyhost__free(w);
  }
  if (out) out[k] = L'\0';
  FreeEnvironmentStringsW(base);
  return out;
}

int pyhost__run(const char *const *argv, const char *const *env, pyhost__run_line_fn fn,
                void *ctx, int *code, char *err, size_t cap) {
  *code = -1;
  char cmd[32768];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, cmd, sizeof cmd);
  for (size_t i = 0; argv[i]; i++) {
    if (i) pyhost__strbuf_printf(&sb, " ");
    quote(&sb, argv[i]);
  }
  SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
  HANDLE rd, wr;
  if (!CreatePipe(&rd, &wr, &sa, 0)) {
    pyhost__fmt(err, cap, "cannot run %s: CreatePipe failed (error %lu)", argv[0], (unsigned long)GetLastError());
    return -1;
  }
  SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
  HANDLE nul = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
  HANDLE inherit[2] = {wr, nul};
  SIZE_T size = 0;
  InitializeProcThreadAttributeList(NULL, 1, 0, &size);
  LPPROC_THREAD_ATTRIBUTE_LIST attrs = pyhost__malloc(size);
  BOOL ok = attrs && InitializeProcThreadAttributeList(attrs, 1, 0, &size) &&
            UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit,
                                      (nul != INVALID_HANDLE_VALUE ? 2 : 1) * sizeof(HANDLE), NULL, NULL);
  STARTUPINFOEXW si;
  memset(&si, 0, sizeof si);
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = nul;
  si.StartupInfo.hStdOutput = si.StartupInfo.hStdError = wr;
  si.lpAttributeList = attrs;
  wchar_t *wcmd = widen(cmd), *wexe = widen(argv[0]), *block = env_block(env);
  HANDLE job = CreateJobObjectW(NULL, NULL);
  if (job) {
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
    memset(&li, 0, sizeof li);
    li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof li);
  }
  PROCESS_INFORMATION pi;
  ok = ok && wcmd && wexe && block &&
       CreateProcessW(wexe, wcmd, NULL, NULL, TRUE,
                      CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT |
                          CREATE_SUSPENDED,
                      block, NULL, &si.StartupInfo, &pi);
  DWORD e = GetLastError();
  pyhost__free(wcmd);
  pyhost__free(wexe);
  pyhost__free(block);
  if (attrs) {
    DeleteProcThreadAttributeList(attrs);
    pyhost__free(attrs);
  }
  CloseHandle(wr);
  if (nul != INVALID_HANDLE_VALUE) CloseHandle(nul);
  if (!ok) {
    CloseHandle(rd);
    if (job) CloseHandle(job);
    pyhost__fmt(err, cap, "cannot run %s (error %lu)", argv[0], (unsigned long)e);
    return -1;
  }
  if (job) AssignProcessToJobObject(job, pi.hProcess);
  ResumeThread(pi.hThread);
  struct pyhost__run_lines lines;
  pyhost__run_lines_init(&lines, fn, ctx);
  DWORD got;
  char buf[4096];
  while (ReadFile(rd, buf, sizeof buf, &got, NULL) && got) pyhost__run_lines_feed(&lines, buf, got);
  pyhost__run_lines_end(&lines);
  CloseHandle(rd);
  WaitForSingleObject(pi.hProcess, INFINITE);
  DWORD status = 1;
  GetExitCodeProcess(pi.hProcess, &status);
  CloseHandle(pi.hProcess);
  CloseHandle(pi.hThread);
  if (job) CloseHandle(job);
  *code = (int)status;
  return 0;
}
