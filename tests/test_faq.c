/* test_faq.c: the behaviours docs/faq.md answers with, one case each, on every Python
 * of the matrix.  Arguments: CASE LIB VERSION. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static pyhost *start_flags(unsigned flags) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_flags(c, flags);
  return check_start(c);
}

/* Imports the first C extension module (a .so) of the installation's lib-dynload, by
 * name; sets it in __main__.name.  Skips when the installation has none. */
static int import_first_extension(pyhost *h) {
  int rc = pyhost_exec(h,
      "import os, sys\n"
      "d = [p for p in sys.path if p.endswith('lib-dynload') and os.path.isdir(p)]\n"
      "so = sorted(f for f in os.listdir(d[0]) if f.endswith('.so')) if d else []\n"
      "name = so[0].split('.')[0] if so else ''\n", NULL);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(h));
    exit(1);
  }
  pyhost_value *v = NULL;
  const char *name = "";
  CHECK_RC(pyhost_eval(h, "name", &v), PYHOST_OK);
  pyhost_value_to_str(h, v, &name, NULL);
  if (!name[0]) {
    pyhost_value_free(v);
    SKIP("no C extension module in lib-dynload");
  }
  rc = pyhost_exec(h, "import importlib\nm = importlib.import_module(name)", NULL);
  pyhost_value_free(v);
  return rc;
}

/* FAQ "import numpy fails": by default libpython is loaded RTLD_GLOBAL and C extension
 * modules import. */
TEST_CASE(c_extensions_import_by_default) {
  pyhost *h = start_flags(0);
  CHECK_RC(import_first_extension(h), PYHOST_OK);
  pyhost_free(h);
}

/* ... and with PYHOST_INIT_RTLD_LOCAL they do not, from 3.8 on (extension modules are
 * no longer linked to libpython): the "undefined symbol" of the FAQ. */
TEST_CASE(rtld_local_breaks_c_extensions) {
  pyhost *h = start_flags(PYHOST_INIT_RTLD_LOCAL);
  int rc = import_first_extension(h);
  if (pyhost_python_version(h) >= 0x03080000UL) {
    CHECK_RC(rc, PYHOST_PYEXC);
    CHECK_CONTAINS(pyhost_errmsg(h), "undefined symbol");
  } else {
    CHECK_RC(rc, PYHOST_OK); /* 3.6 and 3.7 link their extensions to libpython */
  }
  pyhost_free(h);
}

/* FAQ "Ctrl-C does nothing, or kills my application": a host that leaves SIGINT at
 * SIG_DFL keeps it after Python code imports signal (asyncio, subprocess and many
 * libraries do): SIGINT still ends the process.  In a child, which dies of it. */
TEST_CASE(default_sigint_survives_import_signal) {
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    pyhost *h = start_flags(0);
    if (pyhost_exec(h, "import signal\nassert signal.getsignal(signal.SIGINT) == signal.SIG_DFL",
                    NULL) != PYHOST_OK) {
      fprintf(stderr, "%s\n", pyhost_errmsg(h));
      _exit(3);
    }
    struct sigaction now;
    sigaction(SIGINT, NULL, &now);
    if (now.sa_handler != SIG_DFL) _exit(4);
    raise(SIGINT);
    pyhost_value *v = NULL;
    int rc = pyhost_eval(h, "1 + 1", &v); /* reached only when SIGINT did not end us */
    fprintf(stderr, "survived SIGINT; the next eval answered %s: %s\n", pyhost_status_name(rc),
            pyhost_errmsg(h));
    _exit(5);
  }
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  if (!WIFSIGNALED(st)) fprintf(stderr, "the child exited with %d\n", WEXITSTATUS(st));
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT);
}

/* The same for a host that ignores SIGINT: it stays ignored, no KeyboardInterrupt. */
TEST_CASE(ignored_sigint_survives_import_signal) {
  signal(SIGINT, SIG_IGN);
  pyhost *h = start_flags(0);
  CHECK_RC(pyhost_exec(h, "import signal\nassert signal.getsignal(signal.SIGINT) == signal.SIG_IGN",
                       NULL), PYHOST_OK);
  struct sigaction now;
  sigaction(SIGINT, NULL, &now);
  CHECK(now.sa_handler == SIG_IGN);
  raise(SIGINT);
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1 + 1", &v), PYHOST_OK);
  pyhost_value_free(v);
  pyhost_free(h);
}
