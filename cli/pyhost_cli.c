/* pyhost_cli.c: the `pyhost` command: run Python code on any libpython3.x.
 *
 *   pyhost [--python LIB] [-c CODE | -m MODULE | - | -e EXPR | FILE [ARGS...]]
 *   pyhost --version
 *   pyhost [--python LIB] --info
 *
 * Exit status: 0 on success; 1 with the message on stderr on any error; for -c, -m,
 * - and FILE, what python itself would exit with (pyrun.c runs them as python does).
 */
#include "pyhost.h"
#include "doctor.h"
#include "pyrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to) {
  fputs("usage: pyhost [--python LIB] [-c CODE | -m MODULE | - | -e EXPR | FILE [ARGS...]]\n"
        "       pyhost [--python LIB] --info\n"
        "       pyhost --version\n"
        "       pyhost --list [--json]\n"
        "       pyhost --check LIB\n"
        "\n"
        "  --python LIB  the libpython3.X shared library to load (default:\n"
        "                $PYHOST_PYTHON_LIBRARY, then discovery)\n"
        "  -c CODE       run statements (sys.argv = ['-c', ARGS...])\n"
        "  -m MODULE     run a module as __main__, as python -m does\n"
        "  -             run the script on standard input\n"
        "  -e EXPR       evaluate an expression (sys is imported) and print its repr()\n"
        "  FILE ARGS     run a script, or a directory or zip with __main__.py, with\n"
        "                sys.argv = [FILE, ARGS...]\n"
        "  --info        print the runtime's version, library path and build\n"
        "  --version     print pyhost's version and stable-ABI floor\n"
        "  --list        every Python discovery examines, taken or passed over and why\n"
        "                (docs/discovery.md); --json for tools\n"
        "  --check LIB   what pyhost knows about a library, then whether it starts\n",
        to);
  fputs(pyhost_cli_policy_usage, to);
}

static int fail(pyhost *h, int rc) {
  fprintf(stderr, "pyhost: %s\n", h ? pyhost_errmsg(h) : pyhost_errstr(rc));
  return 1;
}

/* One line naming what is wrong, and where the whole usage is. */
static int bad_usage(const char *what, const char *arg) {
  fprintf(stderr, "pyhost: %s%s; pyhost --help lists the options\n", what, arg);
  return 1;
}

int main(int argc, char **argv) {
  const char *lib = NULL, *target = NULL, *expr = NULL;
  enum pyhost_cli_run_kind kind = PYHOST_RUN_PATH;
  int info = 0, list = 0, json = 0, policy_rc, i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--version")) {
      unsigned long abi = pyhost_abi_version();
      printf("pyhost %s (stable ABI floor %lu.%lu)\n", pyhost_version_string(), abi >> 24,
             (abi >> 16) & 0xFF);
      return 0;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--python") && i + 1 < argc) {
      lib = argv[++i];
    } else if (!strcmp(a, "--info")) {
      info = 1;
    } else if (!strcmp(a, "--list")) {
      list = 1;
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--check") && i + 1 < argc) {
      return pyhost_cli_check(argv[i + 1]);
    } else if ((!strcmp(a, "-c") || !strcmp(a, "-m")) && i + 1 < argc) {
      kind = a[1] == 'c' ? PYHOST_RUN_CODE : PYHOST_RUN_MODULE;
      target = argv[++i];
      i++;
      break;
    } else if (!strcmp(a, "-")) {
      kind = PYHOST_RUN_STDIN;
      target = a;
      i++;
      break;
    } else if (!strcmp(a, "-e") && i + 1 < argc) {
      expr = argv[++i];
      i++;
      break;
    } else if ((policy_rc = pyhost_cli_policy_arg(argc, argv, &i)) != 0) {
      if (policy_rc < 0) return 1;
    } else if (a[0] == '-' && a[1]) {
      int known = !strcmp(a, "-c") || !strcmp(a, "-m") || !strcmp(a, "-e") ||
                  !strcmp(a, "--python") || !strcmp(a, "--check");
      return bad_usage(known ? "this option needs a value: " : "unknown option ", a);
    } else {
      target = a;
      i++;
      break;
    }
  }
  if (list) {
    pyhost_config *lc = pyhost_config_new();
    if (lib) pyhost_config_set_library(lc, lib);
    pyhost_cli_policy_apply(lc);
    int st = pyhost_cli_list(lc, json);
    pyhost_config_free(lc);
    return st;
  }
  if (json) return bad_usage("--json goes with --list", " (pyhost --list --json)");
  if (!info && !target && !expr) {
    if (argc > 1) return bad_usage("nothing to run", ": give FILE, -c CODE, -m MODULE or -");
    usage(stderr);
    return 1;
  }

  pyhost_config *cfg = pyhost_config_new();
  if (!cfg) return fail(NULL, PYHOST_NOMEM);
  if (lib) pyhost_config_set_library(cfg, lib);
  pyhost_cli_policy_apply(cfg);
  if (target) {
    pyhost_cli_run_setup(cfg);
    if (pyhost_cli_run_argv(cfg, kind, target, argc - i, argv + i) != PYHOST_OK) {
      pyhost_config_free(cfg);
      return fail(NULL, PYHOST_NOMEM);
    }
  }
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  int status, interrupted = 0;
  unsigned long version = 0;
  if (rc != PYHOST_OK) {
    status = fail(h, rc);
  } else if (info) {
    pyhost_cli_info(h);
    status = 0;
  } else if (expr) {
    pyhost_value *v = NULL;
    /* -e is for quick questions such as `sys.version_info[:2]`: sys is imported. */
    rc = pyhost_exec(h, "import sys", "<pyhost -e>");
    if (rc == PYHOST_OK) rc = pyhost_eval(h, expr, &v);
    const char *repr = rc == PYHOST_OK ? pyhost_value_repr(h, v) : NULL;
    if (repr) printf("%s\n", repr);
    status = repr ? 0 : fail(h, rc ? rc : PYHOST_PYEXC);
    pyhost_value_free(v);
  } else {
    version = pyhost_python_version(h);
    pyhost_cli_run_coerce_locale(h);
    status = pyhost_cli_run(h, kind, target, &interrupted);
    /* python exits 120 when finalizing cannot flush stdout (a reader that went away) */
    if (pyhost_finalize(h) != PYHOST_OK) status = 120;
  }
  fflush(stdout);
  pyhost_free(h);
  return pyhost_cli_run_exit(version, status, interrupted);
}
