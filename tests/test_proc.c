/* test_proc.c: the platform side of the process isolation level (src/platform/proc.h),
 * without Python: a stand-in worker (fixtures/proc_child.c) started, talked to over
 * its channel and control channel, crashed, killed, limited; its output captured.
 * Runs natively and, in the Windows cross build, under wine.
 * Arguments: CASE PROC_CHILD_PROGRAM. */
#include "check.h"
#include "platform.h"

#include <stdint.h>
#if defined(_WIN32)
#  include <windows.h>
#endif

/* Wine runs job objects without their limits (memory, CPU time): the limit cases are
 * for Windows itself there. */
static void skip_limits_under_wine(void) {
#if defined(_WIN32)
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  if (ntdll && GetProcAddress(ntdll, "wine_get_version"))
    SKIP("wine does not enforce a job object's limits");
#endif
}

static const char *child_program(void) {
  if (!check_lib || !check_lib[0]) {
    fprintf(stderr, "usage: test_proc CASE PROC_CHILD\n");
    exit(1);
  }
  return check_lib;
}

static char seen[3][4096];
static size_t seen_len[3];

static void collect(void *ctx, int stream, const char *data, size_t len) {
  (void)ctx;
  if (stream < 1 || stream > 2) return;
  size_t room = sizeof seen[stream] - 1 - seen_len[stream];
  size_t n = len < room ? len : room;
  memcpy(seen[stream] + seen_len[stream], data, n);
  seen_len[stream] += n;
  seen[stream][seen_len[stream]] = '\0';
}

/* The service every worker of this test program is started with (one per process,
 * as the bridge keeps one). */
static struct pyhost__proc_service *service(void) {
  static struct pyhost__proc_service *svc;
  char err[512];
  if (!svc && pyhost__proc_service_new(&svc, err, sizeof err) != 0) {
    fprintf(stderr, "service: %s\n", err);
    exit(1);
  }
  return svc;
}

static struct pyhost__proc *start(uint64_t memory, unsigned cpu, int capture) {
  struct pyhost__proc_spec s;
  memset(&s, 0, sizeof s);
  s.service = service();
  s.program = child_program();
  s.memory_limit = memory;
  s.cpu_seconds = cpu;
  s.capture_stdout = capture;
  s.output = capture ? collect : NULL;
  struct pyhost__proc *p = NULL;
  char err[512];
  if (pyhost__proc_start(&s, &p, err, sizeof err) != 0) {
    fprintf(stderr, "start: %s\n", err);
    exit(1);
  }
  return p;
}

/* Sends cmd and a newline; reads one answer line into out (NULL: "" at the end). */
static const char *ask(struct pyhost__proc *p, const char *cmd) {
  static char out[512];
  struct pyhost__chan *c = pyhost__proc_chan(p);
  if (pyhost__chan_send(c, cmd, strlen(cmd)) != 0 || pyhost__chan_send(c, "\n", 1) != 0)
    return "";
  size_t n = 0;
  for (;;) {
    char ch;
    long got = pyhost__chan_recv(c, &ch, 1, pyhost__clock_ms() + 60000);
    if (got <= 0) return "";
    if (ch == '\n') break;
    if (n + 1 < sizeof out) out[n++] = ch;
  }
  out[n] = '\0';
  return out;
}

static void end_of(struct pyhost__proc *p, char *how_text, size_t cap, struct pyhost__proc_exit *how) {
  CHECK(pyhost__proc_wait(p, pyhost__clock_ms() + 60000, how) == 0);
  pyhost__proc_describe(how, how_text, cap);
}

TEST_CASE(proc_echo_and_exit_code) {
  struct pyhost__proc *p = start(0, 0, 0);
  CHECK(pyhost__proc_id(p) > 0 && pyhost__proc_id(p) != pyhost__proc_self());
  CHECK_STREQ(ask(p, "echo hello there"), "hello there");
  CHECK_STREQ(ask(p, "echo again"), "again");
  struct pyhost__chan *c = pyhost__proc_chan(p);
  CHECK(pyhost__chan_send(c, "exit 3\n", 7) == 0);
  char buf[8];
  CHECK(pyhost__chan_recv(c, buf, sizeof buf, pyhost__clock_ms() + 60000) == 0); /* its end */
  struct pyhost__proc_exit how;
  char text[128];
  end_of(p, text, sizeof text, &how);
  CHECK(!how.signaled && how.code == 3 && !how.killed);
  CHECK_STREQ(text, "exited with code 3");
  pyhost__proc_free(p);
}

TEST_CASE(proc_crash_is_described) {
  struct pyhost__proc *p = start(0, 0, 0);
  CHECK(pyhost__chan_send(pyhost__proc_chan(p), "crash\n", 6) == 0);
  struct pyhost__proc_exit how;
  char text[128];
  end_of(p, text, sizeof text, &how);
  CHECK(how.signaled && !how.killed);
#if defined(_WIN32)
  CHECK_CONTAINS(text, "0xC0000005");
#else
  CHECK_STREQ(text, "killed by signal 11 (SIGSEGV)");
#endif
  CHECK(!pyhost__proc_killed_from_outside(&how));
  pyhost__proc_free(p);
}

TEST_CASE(proc_kill_and_timeout) {
  struct pyhost__proc *p = start(0, 0, 0);
  char buf[8];
  CHECK(pyhost__chan_send(pyhost__proc_chan(p), "silent\n", 7) == 0);
  int64_t t0 = pyhost__clock_ms();
  CHECK(pyhost__chan_recv(pyhost__proc_chan(p), buf, sizeof buf, t0 + 100) == PYHOST__CHAN_TIMEOUT);
  CHECK(pyhost__clock_ms() - t0 >= 100);
  struct pyhost__proc_exit how;
  CHECK(pyhost__proc_wait(p, pyhost__clock_ms() + 50, &how) == 1); /* still there */
  pyhost__proc_kill(p);
  char text[128];
  end_of(p, text, sizeof text, &how);
  CHECK(how.killed);
  CHECK(pyhost__chan_recv(pyhost__proc_chan(p), buf, sizeof buf, pyhost__clock_ms() + 60000) == 0);
  pyhost__proc_free(p);
}

TEST_CASE(proc_control_channel) {
  struct pyhost__proc *p = start(0, 0, 0);
  struct pyhost__chan *c = pyhost__proc_chan(p);
  CHECK(pyhost__chan_send(c, "control\n", 8) == 0);
  CHECK(pyhost__proc_control(p, "I1234", 5) == 0);
  char out[16] = "";
  size_t n = 0;
  while (n < 6) {
    long got = pyhost__chan_recv(c, out + n, sizeof out - 1 - n, pyhost__clock_ms() + 60000);
    if (got <= 0) break;
    n += (size_t)got;
  }
  out[n] = '\0';
  CHECK_STREQ(out, "I1234\n");
  pyhost__proc_free(p); /* kills it */
}

TEST_CASE(proc_output_captured_and_tail) {
  struct pyhost__proc *p = start(0, 0, 1);
  CHECK_STREQ(ask(p, "stdout to the host"), "ok");
  CHECK_STREQ(ask(p, "stderr first line"), "ok");
  CHECK_STREQ(ask(p, "stderr second line"), "ok");
  pyhost__proc_drain(p); /* written before the answers: delivered by now */
  CHECK_STREQ(seen[1], "to the host\n");
  CHECK_STREQ(seen[2], "first line\nsecond line\n");
  char tail[64];
  pyhost__proc_stderr_tail(p, tail, sizeof tail);
  CHECK_STREQ(tail, "first line\nsecond line\n");
  pyhost__proc_stderr_tail(p, tail, 8); /* the end of it, when it does not fit */
  CHECK_STREQ(tail, "d line\n");
  pyhost__proc_free(p);
}

TEST_CASE(proc_memory_limit) {
#if defined(__SANITIZE_ADDRESS__)
  SKIP("AddressSanitizer's shadow memory does not fit under an address-space limit");
#endif
  skip_limits_under_wine();
  struct pyhost__proc *p = start((uint64_t)256 << 20, 0, 0);
  CHECK_STREQ(ask(p, "alloc 16"), "ok");
  CHECK_STREQ(ask(p, "alloc 1024"), "no");
  CHECK_STREQ(ask(p, "alloc 16"), "ok");
  pyhost__proc_free(p);
}

TEST_CASE(proc_cpu_limit) {
  skip_limits_under_wine();
  struct pyhost__proc *p = start(0, 1, 0);
  CHECK(pyhost__chan_send(pyhost__proc_chan(p), "spin\n", 5) == 0);
  struct pyhost__proc_exit how;
  char text[128];
  end_of(p, text, sizeof text, &how);
  CHECK(pyhost__proc_cpu_limit_hit(&how, 1));
  CHECK(!how.killed);
  pyhost__proc_free(p);
}

/* The worker gets its two channel ends and nothing else of this process's. */
TEST_CASE(proc_no_leaked_descriptors) {
#if !defined(_WIN32)
  FILE *inherited = fopen("/dev/null", "r"); /* as from this process's own parent */
#endif
  struct pyhost__proc *p = start(0, 0, 1), *q = start(0, 0, 1);
  const char *n = ask(q, "fds");
  if (strcmp(n, "?") == 0) {
    pyhost__proc_free(p);
    pyhost__proc_free(q);
    SKIP("no descriptor listing on this system");
  }
  CHECK_STREQ(n, "2");
  pyhost__proc_free(p);
  pyhost__proc_free(q);
#if !defined(_WIN32)
  if (inherited) fclose(inherited);
#endif
}
