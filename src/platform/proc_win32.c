/* proc_win32.c: proc.h on Windows.
 *
 * A worker is made with CreateProcessW, suspended until it is in a job object of its
 * own: the job carries the limits (committed memory, user time), ends the worker
 * when the host's handle on it closes (the host ended, however), and turns an
 * unhandled exception into the end of the process instead of an error dialog.  Only
 * the handles meant for the worker are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST;
 * where the system refuses the list, every inheritable handle is, and pyhost makes
 * none but these).  The channel is a named pipe, overlapped on the host's end so that
 * a receive can wait with a deadline; the control channel and the output are
 * anonymous pipes.  Anonymous pipes cannot be waited on, and a thread blocked reading
 * one would take what pyhost__proc_drain must deliver on the caller's thread: so the
 * output is only ever read as far as PeekNamedPipe says it holds, under the worker's
 * monitor, by the drain or by one thread per worker that looks every few
 * milliseconds.
 */
#include "proc.h"
#include "proc_tail.h"

#include "alloc.h"
#include "platform.h"
#include "strbuf.h"
#include "sync.h"

#include <process.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

int pyhost__proc_deathsig = 1; /* the job object ends a worker with its host here */

/* ---- channels ---- */

struct pyhost__chan {
  HANDLE h;
  HANDLE ev;      /* overlapped I/O's event: the host's end only */
  int overlapped;
};

static struct pyhost__chan *chan_new(HANDLE h, int overlapped) {
  struct pyhost__chan *c = pyhost__calloc(1, sizeof *c);
  if (!c) return NULL;
  c->h = h;
  c->overlapped = overlapped;
  if (overlapped && !(c->ev = CreateEventW(NULL, TRUE, FALSE, NULL))) {
    pyhost__free(c);
    return NULL;
  }
  return c;
}

int pyhost__chan_send(struct pyhost__chan *c, const void *p, size_t len) {
  const char *b = p;
  while (len) {
    DWORD chunk = len > 0x10000000 ? 0x10000000 : (DWORD)len, done = 0;
    if (c->overlapped) {
      OVERLAPPED ov;
      memset(&ov, 0, sizeof ov);
      ov.hEvent = c->ev;
      ResetEvent(c->ev);
      if (!WriteFile(c->h, b, chunk, NULL, &ov) && GetLastError() != ERROR_IO_PENDING) return -1;
      if (!GetOverlappedResult(c->h, &ov, &done, TRUE)) return -1;
    } else if (!WriteFile(c->h, b, chunk, &done, NULL)) {
      return -1;
    }
    b += done;
    len -= done;
  }
  return 0;
}

long pyhost__chan_recv(struct pyhost__chan *c, void *p, size_t cap, int64_t deadline) {
  DWORD chunk = cap > 0x10000000 ? 0x10000000 : (DWORD)cap, got = 0;
  if (!c->overlapped) {
    if (ReadFile(c->h, p, chunk, &got, NULL)) return (long)got;
    DWORD e = GetLastError();
    return e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED ? 0 : -1;
  }
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  ov.hEvent = c->ev;
  ResetEvent(c->ev);
  if (!ReadFile(c->h, p, chunk, NULL, &ov)) {
    DWORD e = GetLastError();
    if (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED) return 0;
    if (e != ERROR_IO_PENDING) return -1;
    DWORD ms = (DWORD)pyhost__ms_until(deadline, INFINITE);
    if (WaitForSingleObject(c->ev, ms) == WAIT_TIMEOUT) {
      CancelIoEx(c->h, &ov);
      /* it may have completed meanwhile: then those bytes count */
      if (!GetOverlappedResult(c->h, &ov, &got, TRUE) || got == 0) return PYHOST__CHAN_TIMEOUT;
      return (long)got;
    }
  }
  if (!GetOverlappedResult(c->h, &ov, &got, TRUE)) {
    DWORD e = GetLastError();
    return e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED ? 0 : -1;
  }
  return (long)got;
}

void pyhost__chan_close(struct pyhost__chan *c) {
  if (!c) return;
  CloseHandle(c->h);
  if (c->ev) CloseHandle(c->ev);
  pyhost__free(c);
}

/* ---- workers ---- */

struct pyhost__proc {
  HANDLE process, job;
  DWORD pid;
  struct pyhost__chan *chan;
  HANDLE control;          /* the write end */
  HANDLE out[3];           /* [1] stdout (when captured), [2] stderr: read ends or NULL */
  HANDLE pump;             /* the thread that looks at them */
  int eof[3];              /* under m */
  int leaving;             /* under m: pyhost__proc_free asks the pump to end */
  int killed, reaped;      /* under m */
  struct pyhost__proc_exit how;
  int64_t reaped_at;
  pyhost__proc_output_fn output;
  void *output_ctx;
  struct pyhost__monitor *m; /* this worker's state, its output and tail */
  struct pyhost__tail tail;  /* the last bytes of stderr */
  size_t delivered;          /* bytes of output so far (the pump's pace) */
};

static void deliver(struct pyhost__proc *p, int stream, const char *data, size_t n) {
  if (stream == 2) pyhost__tail_put(&p->tail, data, n);
  p->delivered += n;
  if (p->output) {
    p->output(p->output_ctx, stream, data, n);
    return;
  }
  HANDLE to = GetStdHandle(stream == 1 ? STD_OUTPUT_HANDLE : STD_ERROR_HANDLE);
  DWORD done;
  while (n && to && to != INVALID_HANDLE_VALUE && WriteFile(to, data, (DWORD)n, &done, NULL) && done) {
    data += done;
    n -= done;
  }
}

/* Under p->m: delivers what stream s holds now, without blocking.  1 at its end. */
static int pump_once(struct pyhost__proc *p, int s) {
  char buf[16384];
  for (;;) {
    DWORD avail = 0, got = 0;
    if (!PeekNamedPipe(p->out[s], NULL, 0, NULL, &avail, NULL)) return 1; /* broken: ended */
    if (!avail) return 0;
    if (!ReadFile(p->out[s], buf, avail < sizeof buf ? avail : sizeof buf, &got, NULL) || !got)
      return 1;
    deliver(p, s, buf, got);
  }
}

/* Under p->m: one look at every stream still open; 1 when all have ended. */
static int pump_all(struct pyhost__proc *p) {
  for (int s = 1; s <= 2; s++)
    if (!p->eof[s] && pump_once(p, s)) {
      p->eof[s] = 1;
      pyhost__monitor_notify(p->m);
    }
  return p->eof[1] && p->eof[2];
}

static unsigned __stdcall pump_main(void *arg) {
  struct pyhost__proc *p = arg;
  unsigned wait = 1;
  for (;;) {
    pyhost__monitor_enter(p->m);
    size_t before = p->delivered;
    int done = p->leaving || pump_all(p);
    int moved = p->delivered != before;
    pyhost__monitor_leave(p->m);
    if (done) return 0;
    wait = moved ? 1 : wait < 50 ? wait * 2 : 50; /* quick while it writes */
    Sleep(wait);
  }
}

static HANDLE inheritable_nul(void) {
  SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
  return CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
                     OPEN_EXISTING, 0, NULL);
}

/* The worker's command line: "program" --pyhost-worker CHAN CONTROL args... */
static wchar_t *command_line(const struct pyhost__proc_spec *spec, HANDLE chan, HANDLE control) {
  struct pyhost__strbuf sb;
  char line[8192];
  pyhost__strbuf_init(&sb, line, sizeof line);
  pyhost__strbuf_printf(&sb, "\"%s\" --pyhost-worker %llu %llu", spec->program,
                        (unsigned long long)(uintptr_t)chan, (unsigned long long)(uintptr_t)control);
  for (size_t i = 0; spec->args && spec->args[i]; i++) pyhost__strbuf_printf(&sb, " \"%s\"", spec->args[i]);
  return pyhost__widen(line);
}

static void close_h(HANDLE *h) {
  if (*h && *h != INVALID_HANDLE_VALUE) CloseHandle(*h);
  *h = NULL;
}

static void win_error(char *err, size_t cap, const char *program, const char *what) {
  DWORD e = GetLastError();
  char text[256] = "";
  FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, text,
                 sizeof text, NULL);
  size_t n = strlen(text);
  while (n && (text[n - 1] == '\r' || text[n - 1] == '\n' || text[n - 1] == '.')) text[--n] = '\0';
  pyhost__fmt(err, cap, "cannot start the worker program %s: %s: %s (error %lu)", program, what,
              text, (unsigned long)e);
}

/* Each worker has a thread of its own here (its pump); the service only names pipes. */
struct pyhost__proc_service {
  volatile LONG pipes; /* named so far: a part of each pipe's name */
};

int pyhost__proc_service_new(struct pyhost__proc_service **out, char *err, size_t cap) {
  if ((*out = pyhost__calloc(1, sizeof **out))) return 0;
  pyhost__fmt(err, cap, "cannot start pyhost's process service: out of memory");
  return -1;
}

int pyhost__proc_start(const struct pyhost__proc_spec *spec, struct pyhost__proc **out,
                       char *err, size_t cap) {
  int rc = -1;
  *out = NULL;
  struct pyhost__proc *p = pyhost__calloc(1, sizeof *p);
  HANDLE server = INVALID_HANDLE_VALUE, client = INVALID_HANDLE_VALUE, ctl_r = NULL, ctl_w = NULL;
  HANDLE out_r = NULL, out_w = NULL, err_r = NULL, err_w = NULL, nul = INVALID_HANDLE_VALUE;
  HANDLE std_out = NULL;
  LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
  wchar_t *wprogram = NULL, *wcmd = NULL, *wname = NULL;
  PROCESS_INFORMATION pi;
  memset(&pi, 0, sizeof pi);
  SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
  if (!p || !(p->m = pyhost__monitor_new())) {
    pyhost__fmt(err, cap, "cannot start the worker program %s: out of memory", spec->program);
    goto fail;
  }
  char name[128];
  pyhost__fmt(name, sizeof name, "\\\\.\\pipe\\pyhost-%lu-%ld-%llu", (unsigned long)GetCurrentProcessId(),
              (long)InterlockedIncrement(&spec->service->pipes), (unsigned long long)GetTickCount64());
  if (!(wname = pyhost__widen(name))) goto fail_mem;
  server = CreateNamedPipeW(wname, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE,
                            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                            1, 65536, 65536, 0, NULL);
  if (server == INVALID_HANDLE_VALUE) {
    win_error(err, cap, spec->program, "CreateNamedPipe");
    goto fail;
  }
  client = CreateFileW(wname, GENERIC_READ | GENERIC_WRITE, 0, &inherit, OPEN_EXISTING, 0, NULL);
  if (client == INVALID_HANDLE_VALUE) {
    win_error(err, cap, spec->program, "opening the pipe");
    goto fail;
  }
  if (!CreatePipe(&ctl_r, &ctl_w, &inherit, 0) || !CreatePipe(&err_r, &err_w, &inherit, 0) ||
      (spec->capture_stdout && !CreatePipe(&out_r, &out_w, &inherit, 0))) {
    win_error(err, cap, spec->program, "CreatePipe");
    goto fail;
  }
  /* the host's ends stay here */
  SetHandleInformation(ctl_w, HANDLE_FLAG_INHERIT, 0);
  SetHandleInformation(err_r, HANDLE_FLAG_INHERIT, 0);
  if (out_r) SetHandleInformation(out_r, HANDLE_FLAG_INHERIT, 0);
  nul = inheritable_nul();
  if (!out_w) { /* the host's own stdout, or nothing */
    HANDLE mine = GetStdHandle(STD_OUTPUT_HANDLE);
    if (!mine || mine == INVALID_HANDLE_VALUE ||
        !DuplicateHandle(GetCurrentProcess(), mine, GetCurrentProcess(), &std_out, 0, TRUE,
                         DUPLICATE_SAME_ACCESS))
      std_out = NULL;
  }
  STARTUPINFOEXW si;
  memset(&si, 0, sizeof si);
  si.StartupInfo.cb = sizeof si;
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = nul;
  si.StartupInfo.hStdOutput = out_w ? out_w : std_out ? std_out : nul;
  si.StartupInfo.hStdError = err_w;
  HANDLE list[5];
  DWORD nlist = 0;
  list[nlist++] = client;
  list[nlist++] = ctl_r;
  list[nlist++] = err_w;
  if (nul != INVALID_HANDLE_VALUE) list[nlist++] = nul;
  if (si.StartupInfo.hStdOutput != nul) list[nlist++] = si.StartupInfo.hStdOutput;
  SIZE_T size = 0;
  DWORD flags = CREATE_SUSPENDED | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT;
  InitializeProcThreadAttributeList(NULL, 1, 0, &size);
  if (size && (attrs = pyhost__malloc(size)) && InitializeProcThreadAttributeList(attrs, 1, 0, &size) &&
      UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, list,
                                nlist * sizeof list[0], NULL, NULL)) {
    si.lpAttributeList = attrs;
    flags |= EXTENDED_STARTUPINFO_PRESENT;
  } /* else: every inheritable handle goes, and pyhost's are only these */
  if (!(wprogram = pyhost__widen(spec->program)) || !(wcmd = command_line(spec, client, ctl_r)))
    goto fail_mem;
  if (!CreateProcessW(wprogram, wcmd, NULL, NULL, TRUE, flags, NULL, NULL, &si.StartupInfo, &pi)) {
    win_error(err, cap, spec->program, "CreateProcess");
    goto fail;
  }
  p->process = pi.hProcess;
  p->pid = pi.dwProcessId;
  if ((p->job = CreateJobObjectW(NULL, NULL))) {
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
    memset(&li, 0, sizeof li);
    li.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
    if (spec->memory_limit) {
      li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY;
      li.ProcessMemoryLimit = (SIZE_T)spec->memory_limit;
    }
    if (spec->cpu_seconds) {
      li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_TIME;
      li.BasicLimitInformation.PerProcessUserTimeLimit.QuadPart = (LONGLONG)spec->cpu_seconds * 10000000;
    }
    if (!SetInformationJobObject(p->job, JobObjectExtendedLimitInformation, &li, sizeof li) ||
        !AssignProcessToJobObject(p->job, pi.hProcess)) {
      win_error(err, cap, spec->program, "the job object");
      TerminateProcess(pi.hProcess, 1);
      goto fail;
    }
  } else {
    win_error(err, cap, spec->program, "CreateJobObject");
    TerminateProcess(pi.hProcess, 1);
    goto fail;
  }
  ResumeThread(pi.hThread);
  close_h(&pi.hThread);
  OVERLAPPED ov;
  memset(&ov, 0, sizeof ov);
  ConnectNamedPipe(server, &ov); /* the client is connected already: ERROR_PIPE_CONNECTED */
  if (!(p->chan = chan_new(server, 1))) goto fail_mem;
  server = INVALID_HANDLE_VALUE;
  p->control = ctl_w;
  ctl_w = NULL;
  p->out[1] = out_r;
  p->out[2] = err_r;
  out_r = err_r = NULL;
  p->eof[1] = p->out[1] == NULL;
  p->output = spec->output;
  p->output_ctx = spec->output_ctx;
  uintptr_t t = _beginthreadex(NULL, 0, pump_main, p, 0, NULL);
  if (t) p->pump = (HANDLE)t;
  else p->eof[1] = p->eof[2] = 1; /* its output is lost; the worker still runs */
  *out = p;
  p = NULL;
  pi.hProcess = NULL; /* the worker's now */
  rc = 0;
  goto done;

fail_mem:
  pyhost__fmt(err, cap, "cannot start the worker program %s: out of memory", spec->program);
fail:
  if (pi.hProcess) {
    WaitForSingleObject(pi.hProcess, INFINITE);
    close_h(&pi.hProcess);
  }
  if (p) {
    close_h(&p->job);
    pyhost__chan_close(p->chan);
    pyhost__monitor_free(p->m);
    pyhost__free(p);
  }
  if (server != INVALID_HANDLE_VALUE) CloseHandle(server);
  close_h(&ctl_w);
  close_h(&out_r);
  close_h(&err_r);
done: /* the worker's ends, and what starting it took */
  close_h(&pi.hThread);
  close_h(&client);
  close_h(&ctl_r);
  close_h(&err_w);
  close_h(&out_w);
  close_h(&nul);
  close_h(&std_out);
  if (attrs) DeleteProcThreadAttributeList(attrs);
  pyhost__free(attrs);
  pyhost__free(wprogram);
  pyhost__free(wcmd);
  pyhost__free(wname);
  return rc;
}

struct pyhost__chan *pyhost__proc_chan(struct pyhost__proc *p) {
  return p->chan;
}

int pyhost__proc_control(struct pyhost__proc *p, const void *msg, size_t len) {
  DWORD done = 0;
  return WriteFile(p->control, msg, (DWORD)len, &done, NULL) && done == len ? 0 : -1;
}

void pyhost__proc_kill(struct pyhost__proc *p) {
  pyhost__monitor_enter(p->m);
  if (!p->reaped) {
    p->killed = 1;
    TerminateProcess(p->process, 1);
  }
  pyhost__monitor_leave(p->m);
}

/* Under p->m: records how it ended once it has. */
static void try_reap(struct pyhost__proc *p) {
  DWORD code;
  if (p->reaped || WaitForSingleObject(p->process, 0) != WAIT_OBJECT_0 ||
      !GetExitCodeProcess(p->process, &code))
    return;
  /* an NTSTATUS of severity error is an exception that ended it */
  p->how.signaled = (code & 0xC0000000u) == 0xC0000000u;
  p->how.code = (int)code;
  p->how.killed = p->killed;
  FILETIME c, e, k, u;
  p->how.cpu_seconds = -1;
  if (GetProcessTimes(p->process, &c, &e, &k, &u)) {
    ULARGE_INTEGER ku = {{k.dwLowDateTime, k.dwHighDateTime}}, uu = {{u.dwLowDateTime, u.dwHighDateTime}};
    p->how.cpu_seconds = (double)(ku.QuadPart + uu.QuadPart) / 1e7;
  }
  p->reaped = 1;
  p->reaped_at = pyhost__clock_ms();
}

int pyhost__proc_wait(struct pyhost__proc *p, int64_t deadline, struct pyhost__proc_exit *how) {
  if (WaitForSingleObject(p->process, (DWORD)pyhost__ms_until(deadline, INFINITE)) != WAIT_OBJECT_0)
    return 1;
  pyhost__monitor_enter(p->m);
  try_reap(p);
  int64_t enough = p->reaped_at + 500;
  while (!(p->eof[1] && p->eof[2]) && pyhost__clock_ms() < enough)
    pyhost__monitor_wait(p->m, enough);
  *how = p->how;
  pyhost__monitor_leave(p->m);
  return 0;
}

void pyhost__proc_describe(const struct pyhost__proc_exit *how, char *out, size_t cap) {
  static const struct {
    unsigned code;
    const char *name;
  } names[] = {{0xC0000005u, "access violation"},  {0xC00000FDu, "stack overflow"},
               {0xC0000409u, "fast fail (abort)"},  {0xC0000017u, "no memory"},
               {0xC000001Du, "illegal instruction"}, {0xC0000094u, "integer division by zero"},
               {0xC0000374u, "heap corruption"}};
  if (!how->signaled) {
    pyhost__fmt(out, cap, "exited with code %u", (unsigned)how->code);
    return;
  }
  const char *name = "";
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].code == (unsigned)how->code) name = names[i].name;
  if (name[0]) pyhost__fmt(out, cap, "ended by exception 0x%08X (%s)", (unsigned)how->code, name);
  else pyhost__fmt(out, cap, "ended by exception 0x%08X", (unsigned)how->code);
}

int pyhost__proc_killed_from_outside(const struct pyhost__proc_exit *how) {
  (void)how; /* no out-of-memory killer: a job's memory limit fails allocations */
  return 0;
}

int pyhost__proc_cpu_limit_hit(const struct pyhost__proc_exit *how, unsigned cpu_seconds) {
  /* the job ends a process past its user time with ERROR_NOT_ENOUGH_QUOTA */
  if (!cpu_seconds || how->killed) return 0;
  return (unsigned)how->code == ERROR_NOT_ENOUGH_QUOTA ||
         how->cpu_seconds >= (double)cpu_seconds - 0.05;
}

void pyhost__proc_drain(struct pyhost__proc *p) {
  pyhost__monitor_enter(p->m);
  pump_all(p);
  pyhost__monitor_leave(p->m);
}

void pyhost__proc_stderr_tail(struct pyhost__proc *p, char *out, size_t cap) {
  if (!cap) return;
  pyhost__monitor_enter(p->m);
  pyhost__tail_get(&p->tail, out, cap);
  pyhost__monitor_leave(p->m);
}

long pyhost__proc_id(const struct pyhost__proc *p) {
  return (long)p->pid;
}

long pyhost__proc_self(void) {
  return (long)GetCurrentProcessId();
}

void pyhost__proc_free(struct pyhost__proc *p) {
  if (!p) return;
  struct pyhost__proc_exit how;
  pyhost__proc_kill(p);
  pyhost__proc_wait(p, PYHOST__FOREVER, &how);
  if (p->pump) { /* a descendant may keep the pipes open: the pump ends anyway */
    pyhost__monitor_enter(p->m);
    p->leaving = 1;
    pump_all(p); /* what is there now */
    pyhost__monitor_leave(p->m);
    WaitForSingleObject(p->pump, INFINITE);
    CloseHandle(p->pump);
  }
  pyhost__chan_close(p->chan);
  close_h(&p->control);
  close_h(&p->out[1]);
  close_h(&p->out[2]);
  close_h(&p->process);
  close_h(&p->job); /* kills anything left in it */
  pyhost__monitor_free(p->m);
  pyhost__free(p);
}

void pyhost__proc_forget(struct pyhost__proc *p) {
  (void)p; /* Windows processes do not fork: no child ever has another's worker */
}

/* ---- the worker's side ---- */

static HANDLE handle_arg(const char *s) {
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  DWORD flags;
  if (*end || !v || !GetHandleInformation((HANDLE)(uintptr_t)v, &flags)) return NULL;
  return (HANDLE)(uintptr_t)v;
}

int pyhost__proc_child_open(int argc, char **argv, struct pyhost__chan **chan,
                            struct pyhost__chan **control, char *err, size_t cap) {
  HANDLE a, b;
  if (argc < 4 || strcmp(argv[1], "--pyhost-worker") != 0 || !(a = handle_arg(argv[2])) ||
      !(b = handle_arg(argv[3]))) {
    pyhost__fmt(err, cap,
                "this is pyhost's worker program: pyhost starts it for plugins loaded with "
                "PYHOST_ISOLATION_PROCESS (it is not meant to be run by hand)");
    return -1;
  }
  /* what the plugin starts must not hold them */
  SetHandleInformation(a, HANDLE_FLAG_INHERIT, 0);
  SetHandleInformation(b, HANDLE_FLAG_INHERIT, 0);
  *chan = chan_new(a, 0);
  *control = chan_new(b, 0);
  if (!*chan || !*control) {
    pyhost__fmt(err, cap, "out of memory");
    return -1;
  }
  return 0;
}

struct pyhost__proc_waker {
  int unused;
};

struct pyhost__proc_waker *pyhost__proc_child_setup(void (*on_wake)(int)) {
  (void)on_wake; /* Python's own SIGINT handler does the work here (raise, below) */
  return pyhost__calloc(1, sizeof(struct pyhost__proc_waker));
}

void pyhost__proc_child_wake_main(struct pyhost__proc_waker *w) {
  (void)w;
  raise(SIGINT); /* Python's handler: the flag, and the event its blocking calls wait for */
}
