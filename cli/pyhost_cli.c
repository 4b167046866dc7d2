/* pyhost_cli.c: the `pyhost` command: `python` on any libpython3.x.
 *
 *   pyhost [pyhost options] [python's options and arguments]
 *   pyhost [pyhost options] -e EXPR | --info | --list [--json] | --check LIB
 *   pyhost [pyhost options] --deps FILE [ARGS...] | --deps-list | --deps-prune[=DAYS]
 *
 * pyhost's own options come first; the first argument that is not one of them starts
 * python's command line, which goes unchanged to the chosen Python's own main
 * (pyhost_main): its options, REPL, exit statuses and sys.orig_argv are that
 * version's python's (docs/command.md says why this design).  -e and --info run
 * through pyhost_init; errors of pyhost's own print one line and exit 1.
 */
#include "pyhost.h"
#include "deps.h"
#include "doctor.h"
#include "executable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to) {
  fputs("usage: pyhost [pyhost options] [python's options and arguments]\n"
        "       pyhost [pyhost options] -e EXPR | --info | --list [--json] | --check LIB\n"
        "       pyhost [pyhost options] --deps FILE [ARGS...] | --deps-list | --deps-prune[=DAYS]\n"
        "\n"
        "pyhost's options come first; everything from the first other argument on is\n"
        "python's command line, run by the chosen Python's own main (Py_BytesMain, Py_Main\n"
        "before 3.8) exactly as python3.X runs it: -c, -m, FILE, -, the REPL, and every\n"
        "option of that version (pyhost -h lists them).  Nothing of python's is emulated,\n"
        "so no option is missing or approximate on any version (docs/command.md).\n"
        "\n"
        "  --python LIB         the libpython3.X shared library to load (default:\n"
        "                       $PYHOST_PYTHON_LIBRARY, then discovery)\n"
        "  --executable PATH    sys.executable (and python's argv[0]) is PATH, a command\n"
        "                       that runs this same Python through pyhost\n"
        "  --executable-wrapper sys.executable names a script (written once, in the venv's\n"
        "                       bin/ or $XDG_CACHE_HOME/pyhost/executables) that runs this\n"
        "                       pyhost with this library: child processes run through\n"
        "                       pyhost too (not on Windows, nor when pyhost runs through a\n"
        "                       loader such as ld.so: use --executable there)\n"
        "  --executable-script FILE  (first) how the kernel runs that script: pyhost's\n"
        "                       options from FILE's lines, FILE as --executable\n"
        "  -e EXPR              evaluate an expression (sys is imported) and print its repr()\n"
        "  --info               print the runtime's version, library path and build\n"
        "  --list               every Python discovery examines, taken or passed over and\n"
        "                       why (docs/discovery.md); --json for tools\n"
        "  --check LIB          what pyhost knows about a library, then whether it starts\n"
        "  --deps FILE [ARGS]   run the script FILE with the dependencies its PEP 723 block\n"
        "                       declares, prepared once in a cache (docs/plugins.md)\n"
        "  --deps-list          the cache's environments ($PYHOST_DEPS_CACHE, else\n"
        "                       $XDG_CACHE_HOME/pyhost/deps)\n"
        "  --deps-prune[=DAYS]  remove environments not used for DAYS days (30; 0: all)\n"
        "  --pyhost-version     print pyhost's version and stable-ABI floor (-V and\n"
        "                       --version are python's: the chosen Python's version)\n"
        "  --pyhost-help        this text (-h and --help are python's, after two lines)\n",
        to);
  fputs(pyhost_cli_policy_usage, to);
}

/* What -h, -? and --help print before python's own help: the test suites of CPython
 * want "usage" on the first line and fewer than 50 lines in all. */
static const char help_prelude[] =
    "usage: pyhost [pyhost options] [python's options and arguments, as below]\n"
    "pyhost's own options come first: pyhost --pyhost-help lists them.  Python's:\n";

static int fail(pyhost *h, int rc) {
  fprintf(stderr, "pyhost: %s\n", h ? pyhost_errmsg(h) : pyhost_errstr(rc));
  return 1;
}

/* One line naming what is wrong, and where the whole usage is. */
static int bad_usage(const char *what, const char *arg) {
  fprintf(stderr, "pyhost: %s%s; pyhost --pyhost-help lists pyhost's options\n", what, arg);
  return 1;
}

struct own {
  const char *lib, *expr, *executable;
  int info, list, json, wrapper, first; /* first: python's first argument */
  int deps, deps_list, deps_prune;      /* deps_prune: days + 1, 0 when not asked */
};

/* pyhost's options at the start of argv.  0, or 1 after printing why not, or -2 when
 * the command is done (it printed what was asked), with *status its exit status. */
static int parse_own(int argc, char **argv, struct own *o, int *status) {
  int i = 1, policy_rc;
  for (; i < argc; i++) {
    const char *a = argv[i];
    int valued = !strcmp(a, "--python") || !strcmp(a, "--check") || !strcmp(a, "-e") ||
                 !strcmp(a, "--executable");
    if (valued && i + 1 >= argc) return bad_usage("this option needs a value: ", a);
    if (!strcmp(a, "--pyhost-version")) {
      unsigned long abi = pyhost_abi_version();
      printf("pyhost %s (stable ABI floor %lu.%lu)\n", pyhost_version_string(), abi >> 24,
             (abi >> 16) & 0xFF);
      *status = 0;
      return -2;
    } else if (!strcmp(a, "--pyhost-help")) {
      usage(stdout);
      *status = 0;
      return -2;
    } else if (!strcmp(a, "--check")) {
      *status = pyhost_cli_check(argv[i + 1]);
      return -2;
    } else if (!strcmp(a, "--python")) {
      o->lib = argv[++i];
    } else if (!strcmp(a, "-e")) {
      o->expr = argv[++i];
    } else if (!strcmp(a, "--executable")) {
      o->executable = argv[++i];
    } else if (!strcmp(a, "--executable-wrapper")) {
      o->wrapper = 1;
    } else if (!strcmp(a, "--info")) {
      o->info = 1;
    } else if (!strcmp(a, "--list")) {
      o->list = 1;
    } else if (!strcmp(a, "--json")) {
      o->json = 1;
    } else if (!strcmp(a, "--deps")) {
      o->deps = 1;
    } else if (!strcmp(a, "--deps-list")) {
      o->deps_list = 1;
    } else if (!strcmp(a, "--deps-prune") || !strncmp(a, "--deps-prune=", 13)) {
      char *end = NULL;
      long days = a[12] ? strtol(a + 13, &end, 10) : 30;
      if (a[12] && (end == a + 13 || *end || days < 0 || days > 100000))
        return bad_usage("--deps-prune=DAYS takes a number of days: ", a);
      o->deps_prune = (int)days + 1;
    } else if ((policy_rc = pyhost_cli_policy_arg(argc, argv, &i)) == 0) {
      break; /* python's command line starts here */
    } else if (policy_rc < 0) {
      return 1;
    }
  }
  o->first = i;
  if (o->json && !o->list) return bad_usage("--json goes with --list", " (pyhost --list --json)");
  if (o->executable && o->wrapper) return bad_usage("--executable and --executable-wrapper", " exclude each other");
  const char *mode = o->list ? "--list" : o->info ? "--info" : o->expr ? "-e"
                     : o->deps_list ? "--deps-list" : o->deps_prune ? "--deps-prune" : NULL;
  if (o->deps && (mode || i >= argc))
    return bad_usage("--deps runs a script", mode ? " (not with another mode)" : ": pyhost --deps FILE [ARGS...]");
  if (mode && i < argc) {
    fprintf(stderr, "pyhost: %s takes no python arguments (%s); pyhost --pyhost-help lists pyhost's options\n",
            mode, argv[i]);
    return 1;
  }
  return 0;
}

/* 1 when python's command line asks for its help (-h, -? or --help before what it
 * runs), as python's own option parser reads it. */
static int asks_help(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || !a[1] || !strcmp(a, "--")) return 0; /* what runs, or the end */
    if (a[1] == '-') {
      if (!strcmp(a, "--help")) return 1;
      if (!strcmp(a, "--check-hash-based-pycs")) i++;
      continue;
    }
    for (const char *c = a + 1; *c; c++) {
      if (*c == 'h' || *c == '?') return 1;
      if (*c == 'c' || *c == 'm') return 0;
      if (*c == 'W' || *c == 'X') {
        i += !c[1]; /* the value is the next argument */
        break;
      }
    }
  }
  return 0;
}

/* -e and --info: through pyhost_init, as a host would. */
static int run_library_mode(pyhost_config *cfg, const struct own *o) {
  pyhost *h = NULL;
  int rc = pyhost_init(cfg, &h), status;
  if (rc != PYHOST_OK) {
    status = fail(h, rc);
  } else if (o->info) {
    pyhost_cli_info(h);
    status = 0;
  } else {
    pyhost_value *v = NULL;
    /* -e is for quick questions such as `sys.version_info[:2]`: sys is imported. */
    rc = pyhost_exec(h, "import sys", "<pyhost -e>");
    if (rc == PYHOST_OK) rc = pyhost_eval(h, o->expr, &v);
    const char *repr = rc == PYHOST_OK ? pyhost_value_repr(h, v) : NULL;
    if (repr) printf("%s\n", repr);
    status = repr ? 0 : fail(h, rc ? rc : PYHOST_PYEXC);
    pyhost_value_free(v);
  }
  fflush(stdout);
  pyhost_free(h);
  return status;
}

/* python's command line through the chosen Python's own main. */
static int run_python(pyhost_config *cfg, const struct own *o, int argc, char **argv) {
  char wrapper[4096];
  const char *exe = o->executable;
  if (o->wrapper) {
    int w = pyhost_cli_executable_wrapper(cfg, argv[0], wrapper, sizeof wrapper);
    if (w < 0) return 1;
    if (w > 0) exe = wrapper;
  }
  if (exe && pyhost_config_set_executable(cfg, exe) != PYHOST_OK) return fail(NULL, PYHOST_NOMEM);
  int n = argc - o->first;
  char **args = malloc(((size_t)n + 2) * sizeof *args);
  if (!args) return fail(NULL, PYHOST_NOMEM);
  /* sys.orig_argv[0]: what started pyhost, or the command that stands for it */
  args[0] = exe ? (char *)exe : argv[0];
  memcpy(args + 1, argv + o->first, (size_t)n * sizeof *args);
  args[n + 1] = NULL;
  int help = asks_help(n, argv + o->first);
  if (help) {
    fputs(help_prelude, stdout);
    fflush(stdout);
  }
  pyhost *h = NULL;
  int status = 1;
  int rc = pyhost_main(cfg, n + 1, args, &h, &status);
  if (rc != PYHOST_OK) {
    if (help) usage(stdout);
    status = fail(h, rc);
  }
  pyhost_free(h);
  free(args);
  return status;
}

int main(int argc, char **argv) {
  struct own o;
  memset(&o, 0, sizeof o);
  int status = 1;
  if (pyhost_cli_executable_script(&argc, &argv) != 0) return 1;
  int parsed = parse_own(argc, argv, &o, &status);
  pyhost_config *cfg = parsed ? NULL : pyhost_config_new();
  if (!cfg) {
    pyhost_cli_executable_script_free();
    return parsed == -2 ? status : parsed ? 1 : fail(NULL, PYHOST_NOMEM);
  }
  if (o.lib) pyhost_config_set_library(cfg, o.lib);
  pyhost_cli_policy_apply(cfg);
  if (o.list) status = pyhost_cli_list(cfg, o.json);
  else if (o.deps_list) status = pyhost_cli_deps_list();
  else if (o.deps_prune) status = pyhost_cli_deps_prune((unsigned)o.deps_prune - 1);
  else if (o.deps && pyhost_cli_deps_prepare(cfg, argv[o.first]) != 0) status = 1;
  else if (o.info || o.expr) status = run_library_mode(cfg, &o);
  else status = run_python(cfg, &o, argc, argv);
  pyhost_config_free(cfg);
  pyhost_cli_executable_script_free();
  return status;
}
