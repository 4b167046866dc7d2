/* pyrun.c: the `pyhost` command runs code as `python` does.
 *
 * python's main() does more than exec the file: sys.path[0] is the script's folder ('' for
 * -c and standard input, the current directory for -m); __file__, __cached__ and a
 * SourceFileLoader are set on __main__; a directory or zip with __main__.py and -m go
 * through runpy; SystemExit becomes the exit status (its message alone on stderr); any
 * other uncaught exception goes to sys.excepthook, which the script may have replaced.
 * The library's pyhost_exec_file reports errors to a host instead, so the command runs
 * this small driver (one Python function, in a module of its own so that __main__ holds
 * only what the script defines) and exits with what it returns.
 */
#define _POSIX_C_SOURCE 200809L
#include "pyrun.h"

#include <locale.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char driver[] =
    "__name__ = '_pyhost_run'  # frames of the driver name a module, as runpy's do\n"
    "import sys\n"
    "\n"
    "KEYBOARD_INTERRUPT = -(1 << 40)\n"
    "_OWN = '<pyhost run>'\n"
    "\n"
    "\n"
    "def _without_own_frames(tb):\n"
    "    while tb is not None and tb.tb_frame.f_code.co_filename == _OWN:\n"
    "        tb = tb.tb_next\n"
    "    return tb\n"
    "\n"
    "\n"
    "def _exit_status(exc):\n"
    "    code = exc.code\n"
    "    if code is None:\n"
    "        return 0\n"
    "    if isinstance(code, int):\n"
    "        return code\n"
    "    try:\n"
    "        sys.stderr.write(str(code) + '\\n')\n"
    "        sys.stderr.flush()\n"
    "    except Exception:\n"
    "        pass\n"
    "    return 1\n"
    "\n"
    "\n"
    "def _report(exc):\n"
    "    tb = _without_own_frames(exc.__traceback__)\n"
    "    exc.__traceback__ = tb\n"
    "    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb\n"
    "    if sys.version_info >= (3, 12):\n"
    "        sys.last_exc = exc\n"
    "    hook = getattr(sys, 'excepthook', None)\n"
    "    try:\n"
    "        if hook is None:\n"
    "            raise RuntimeError('lost sys.excepthook')\n"
    "        hook(type(exc), exc, tb)\n"
    "    except SystemExit as inner:\n"
    "        return _exit_status(inner)\n"
    "    except BaseException as inner:\n"
    "        import traceback\n"
    "        sys.stderr.write('Error in sys.excepthook:\\n')\n"
    "        traceback.print_exception(type(inner), inner, _without_own_frames(inner.__traceback__))\n"
    "        sys.stderr.write('\\nOriginal exception was:\\n')\n"
    "        traceback.print_exception(type(exc), exc, tb)\n"
    "    return KEYBOARD_INTERRUPT if isinstance(exc, KeyboardInterrupt) else 1\n"
    "\n"
    "\n"
    "def _path0(entry):\n"
    "    if not getattr(sys.flags, 'safe_path', False):\n"
    "        sys.path.insert(0, entry)\n"
    "\n"
    "\n"
    "def _run_source(source, filename, main):\n"
    "    code = compile(source, filename, 'exec')\n"
    "    if filename == '<string>' and sys.version_info >= (3, 13):\n"
    "        import linecache\n"
    "        if sys.version_info >= (3, 14):\n"
    "            linecache._register_code(code, source, filename)\n"
    "        else:\n"
    "            lines = [line + '\\n' for line in source.splitlines()]\n"
    "            linecache.cache[filename] = (len(source), None, lines, filename)\n"
    "    exec(code, main)\n"
    "\n"
    "\n"
    "def _run_script(path, main):\n"
    "    import os\n"
    "    shown = os.path.abspath(path) if sys.version_info >= (3, 9) else path\n"
    "    try:\n"
    "        with open(path, 'rb') as f:\n"
    "            source = f.read()\n"
    "    except OSError as e:\n"
    "        sys.stderr.write(\"pyhost: can't open file %r: [Errno %d] %s\\n\" % (shown, e.errno, e.strerror))\n"
    "        return 2\n"
    "    from importlib.machinery import SourceFileLoader\n"
    "    _path0(os.path.dirname(os.path.realpath(path)))\n"
    "    main['__file__'] = shown\n"
    "    if sys.version_info < (3, 15):\n"
    "        main['__cached__'] = None\n"
    "    main['__loader__'] = SourceFileLoader('__main__', shown)\n"
    "    try:\n"
    "        _run_source(source, shown, main)\n"
    "    finally:\n"
    "        main.pop('__file__', None)\n"
    "        main.pop('__cached__', None)\n"
    "    return 0\n"
    "\n"
    "\n"
    "def _main_importer(path):\n"
    "    import os\n"
    "    if os.path.isdir(path):\n"
    "        return True\n"
    "    if not os.path.isfile(path):\n"
    "        return False\n"
    "    import zipimport\n"
    "    try:\n"
    "        zipimport.zipimporter(path)\n"
    "    except Exception:\n"
    "        return False\n"
    "    return True\n"
    "\n"
    "\n"
    "def run(kind, target):\n"
    "    import os\n"
    "    main = sys.modules['__main__'].__dict__\n"
    "    try:\n"
    "        if kind == 'c':\n"
    "            _path0('')\n"
    "            if sys.version_info >= (3, 14) and target[:1] in (' ', '\\t'):\n"
    "                import textwrap\n"
    "                target = textwrap.dedent(target)\n"
    "            _run_source(target, '<string>', main)\n"
    "        elif kind == 'm':\n"
    "            _path0(os.getcwd() if sys.version_info >= (3, 7) else '')\n"
    "            import runpy\n"
    "            runpy._run_module_as_main(target, True)\n"
    "        elif kind == '-':\n"
    "            _path0('')\n"
    "            main['__file__'] = '<stdin>'\n"
    "            main['__cached__'] = None\n"
    "            try:\n"
    "                _run_source(sys.stdin.buffer.read(), '<stdin>', main)\n"
    "            finally:\n"
    "                main.pop('__file__', None)\n"
    "                main.pop('__cached__', None)\n"
    "        elif _main_importer(target):\n"
    "            entry = os.path.abspath(target) if sys.version_info >= (3, 9) else target\n"
    "            sys.path.insert(0, entry)\n"
    "            import runpy\n"
    "            runpy._run_module_as_main('__main__', False)\n"
    "        else:\n"
    "            return _run_script(target, main)\n"
    "    except SystemExit as e:\n"
    "        return _exit_status(e)\n"
    "    except BaseException as e:\n"
    "        return _report(e)\n"
    "    return 0\n"
    "\n"
    "\n"
    "_module = type(sys)('_pyhost_run')\n"
    "_module.run = run\n"
    "sys.modules['_pyhost_run'] = _module\n";

/* The driver's sentinel for an uncaught KeyboardInterrupt (no exit status is that low). */
#define KEYBOARD_INTERRUPT (-((int64_t)1 << 40))

void pyhost_cli_run_setup(pyhost_config *cfg) {
  /* python sets LC_CTYPE from the environment and keeps it: open() and subprocess
   * text then use the user's encoding (and the library turns the UTF-8 mode on where
   * python would, in a C/POSIX locale) */
  setlocale(LC_CTYPE, "");
  /* Py_InitializeEx(1), as python: SIGPIPE and SIGXFSZ ignored, SIGINT handled */
  pyhost_config_set_flags(cfg, PYHOST_INIT_SIGNALS | PYHOST_INIT_KEEP_LOCALE);
}

void pyhost_cli_run_coerce_locale(pyhost *h) {
#ifndef _WIN32
  const char *all = getenv("LC_ALL"), *opt = getenv("PYTHONCOERCECLOCALE");
  const char *now = setlocale(LC_CTYPE, NULL);
  if (pyhost_python_version(h) < 0x03070000UL || (all && *all) || (opt && !strcmp(opt, "0")) ||
      !now || (strcmp(now, "C") && strcmp(now, "POSIX")))
    return;
  static const char *const targets[] = {"C.UTF-8", "C.utf8", "UTF-8"};
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    if (!setlocale(LC_CTYPE, targets[i])) continue;
    pyhost_value *key = pyhost_value_str("LC_CTYPE", 8);
    pyhost_value *value = pyhost_value_str(targets[i], strlen(targets[i])), *ignored = NULL;
    const pyhost_value *args[] = {key, value};
    /* os.environ's own setter: the mapping and the process environment agree */
    if (pyhost_call_namev(h, "os.environ.__setitem__", args, 2, NULL, &ignored) != PYHOST_OK)
      fprintf(stderr, "pyhost: %s\n", pyhost_errmsg(h));
    pyhost_value_free(ignored);
    pyhost_value_free(value);
    pyhost_value_free(key);
    if (opt && !strcmp(opt, "warn"))
      fprintf(stderr, "Python detected LC_CTYPE=C: LC_CTYPE coerced to %s (set another locale "
                      "or PYTHONCOERCECLOCALE=0 to disable this locale coercion behavior).\n",
              targets[i]);
    return;
  }
#else
  (void)h;
#endif
}

int pyhost_cli_run_argv(pyhost_config *cfg, enum pyhost_cli_run_kind kind, const char *target,
                        int argc, char **args) {
  const char **argv = malloc(((size_t)argc + 1) * sizeof *argv);
  if (!argv) return PYHOST_NOMEM;
  static const char *const first[] = {"-c", "-m", "-", NULL};
  argv[0] = kind == PYHOST_RUN_PATH ? target : first[kind];
  for (int i = 0; i < argc; i++) argv[i + 1] = args[i];
  int rc = pyhost_config_set_argv(cfg, argc + 1, argv);
  free(argv);
  return rc;
}

/* The driver's run() as a callable value, or NULL with the message printed.  exec
 * gets a fresh dict (a C dict value becomes one); the driver hands run() over through
 * sys.modules, from which it is taken out again. */
static pyhost_value *load_driver(pyhost *h) {
  pyhost_value *src = pyhost_value_str(driver, sizeof driver - 1);
  pyhost_value *name = pyhost_value_str("<pyhost run>", strlen("<pyhost run>"));
  pyhost_value *mode = pyhost_value_str("exec", 4), *globals = pyhost_value_dict();
  pyhost_value *module_name = pyhost_value_str("_pyhost_run", strlen("_pyhost_run"));
  pyhost_value *code = NULL, *ignored = NULL, *fn = NULL;
  const pyhost_value *compile_args[] = {src, name, mode};
  int rc = pyhost_call_namev(h, "builtins.compile", compile_args, 3, NULL, &code);
  const pyhost_value *exec_args[] = {code, globals};
  if (rc == PYHOST_OK) rc = pyhost_call_namev(h, "builtins.exec", exec_args, 2, NULL, &ignored);
  if (rc == PYHOST_OK) rc = pyhost_resolve(h, "_pyhost_run.run", &fn);
  pyhost_value_free(ignored);
  ignored = NULL;
  const pyhost_value *pop_args[] = {module_name};
  if (rc == PYHOST_OK) rc = pyhost_call_namev(h, "sys.modules.pop", pop_args, 1, NULL, &ignored);
  if (rc != PYHOST_OK) fprintf(stderr, "pyhost: cannot start its runner: %s\n", pyhost_errmsg(h));
  pyhost_value_free(ignored);
  pyhost_value_free(module_name);
  pyhost_value_free(code);
  pyhost_value_free(globals);
  pyhost_value_free(mode);
  pyhost_value_free(name);
  pyhost_value_free(src);
  if (rc == PYHOST_OK) return fn;
  pyhost_value_free(fn);
  return NULL;
}

int pyhost_cli_run(pyhost *h, enum pyhost_cli_run_kind kind, const char *target, int *interrupted) {
  static const char *const kinds[] = {"c", "m", "-", "path"};
  *interrupted = 0;
  pyhost_value *fn = load_driver(h);
  if (!fn) return 1;
  pyhost_value *k = pyhost_value_str(kinds[kind], strlen(kinds[kind]));
  pyhost_value *t = pyhost_value_str(target ? target : "", target ? strlen(target) : 0);
  const pyhost_value *args[] = {k, t};
  pyhost_value *result = NULL;
  int64_t status = 1;
  int rc = pyhost_callv(h, fn, args, 2, NULL, &result);
  if (rc == PYHOST_OK) rc = pyhost_value_to_int(h, result, &status);
  if (rc != PYHOST_OK) fprintf(stderr, "pyhost: %s\n", pyhost_errmsg(h));
  pyhost_value_free(result);
  pyhost_value_free(t);
  pyhost_value_free(k);
  pyhost_value_free(fn);
  if (status == KEYBOARD_INTERRUPT) {
    *interrupted = 1;
    return 1;
  }
  /* python exits with the C int of the code: exit() keeps its low byte */
  return rc == PYHOST_OK ? (int)(status & 0xFF) : 1;
}

int pyhost_cli_run_exit(unsigned long python_version, int status, int interrupted) {
  if (interrupted && python_version >= 0x03080000UL) {
    /* the parent sees death by SIGINT, as after ^C in a C program (bpo-1054041) */
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
  return status;
}
