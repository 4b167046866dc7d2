/* pyhost_cli.c: the `pyhost` command: run Python code on any libpython3.x.
 *
 *   pyhost [--python LIB] [-c CODE | -e EXPR | FILE [ARGS...]]
 *   pyhost --version
 *   pyhost [--python LIB] --info
 *
 * Exit status: 0 on success; 1 with the message on stderr on any error; for -c and
 * FILE, SystemExit's code as python itself would exit.
 */
#include "pyhost.h"
#include "doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to) {
  fputs("usage: pyhost [--python LIB] [-c CODE | -e EXPR | FILE [ARGS...]]\n"
        "       pyhost [--python LIB] --info\n"
        "       pyhost --version\n"
        "       pyhost --list [--json]\n"
        "       pyhost --check LIB\n"
        "\n"
        "  --python LIB  the libpython3.X shared library to load (default:\n"
        "                $PYHOST_PYTHON_LIBRARY, then discovery)\n"
        "  -c CODE       run statements\n"
        "  -e EXPR       evaluate an expression (sys is imported) and print its repr()\n"
        "  FILE ARGS     run a script with sys.argv = [FILE, ARGS...]\n"
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

/* -c and FILE exit as python does: SystemExit's code, 1 for an exception. */
static int run_result(pyhost *h, int rc) {
  if (rc == PYHOST_OK) return 0;
  if (rc == PYHOST_EXIT) {
    int code = pyhost_exit_code(h);
    if (code != 0 && code != 1) return code;
    if (code == 1 && strstr(pyhost_errmsg(h), "(exit code 1)"))
      fprintf(stderr, "%s\n", pyhost_errmsg(h) + strlen("SystemExit: "));
    return code;
  }
  return fail(h, rc);
}

int main(int argc, char **argv) {
  const char *lib = NULL, *code = NULL, *expr = NULL, *file = NULL;
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
    } else if (!strcmp(a, "-c") && i + 1 < argc) {
      code = argv[++i];
      i++;
      break;
    } else if (!strcmp(a, "-e") && i + 1 < argc) {
      expr = argv[++i];
      i++;
      break;
    } else if ((policy_rc = pyhost_cli_policy_arg(argc, argv, &i)) != 0) {
      if (policy_rc < 0) return 1;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "pyhost: unknown or incomplete option %s\n", a);
      usage(stderr);
      return 1;
    } else {
      file = a;
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
  if (!info && !code && !expr && !file) {
    usage(stderr);
    return 1;
  }

  pyhost_config *cfg = pyhost_config_new();
  if (!cfg) return fail(NULL, PYHOST_NOMEM);
  if (lib) pyhost_config_set_library(cfg, lib);
  pyhost_cli_policy_apply(cfg);
  if (file) pyhost_config_set_argv(cfg, argc - i, (const char *const *)argv + i);
  else if (code) {
    /* python -c sets sys.argv[0] to "-c" */
    const char *args[64];
    int n = 0;
    args[n++] = "-c";
    for (; i < argc && n < 64; i++) args[n++] = argv[i];
    pyhost_config_set_argv(cfg, n, args);
  }
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  int status;
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
  } else if (code) {
    status = run_result(h, pyhost_exec(h, code, "<string>"));
  } else {
    status = run_result(h, pyhost_exec_file(h, file));
  }
  fflush(stdout);
  pyhost_free(h);
  return status;
}
