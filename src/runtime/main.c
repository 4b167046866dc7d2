/* main.c: pyhost_main, the chosen Python's own `python` program.
 *
 * `python` is more than code run in an interpreter: its options set sys.flags,
 * warnings, -X options and sys.path before anything runs; it gives a REPL, turns every
 * way out into an exit status, sets sys.orig_argv.  Little of that can be set from
 * outside through the stable ABI (no PyConfig, no Py_*Flag variables), but python's
 * main itself is exported there: Py_Main (wchar_t arguments, every version) and
 * Py_BytesMain (3.8+, what python's own main() calls).  So pyhost_main does
 * pyhost_init's part before Python starts (the library chosen, checked and opened, the
 * home chosen), tells Python its home and program name, and hands the command line to
 * that main: the behaviour is the version's own, whatever the version (docs/command.md).
 */
#include "runtime.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

/* A program name with no directory that no PATH holds: Python finds no interpreter and
 * sets sys.executable to "", as pyhost_init does after init when the library has no
 * interpreter beside it (nothing of pyhost's runs between Python's start and the
 * script here). */
static const char no_interpreter[] = "python (no interpreter beside its library)";

/* The program name Python derives sys.executable (and a venv beside it) from: the
 * configured executable, else the interpreter pyhost__choose_home found.  Python's own
 * search from any other name than its interpreter's would miss the standard library,
 * so the home is then given too. */
static int choose_program(pyhost *h) {
  const char *name = h->cfg.executable ? h->cfg.executable : h->no_executable ? no_interpreter : NULL;
  if (!name) return PYHOST_OK;
  wchar_t *w = pyhost__widen(name);
  if (!w || (!h->w_home && !(h->w_home = pyhost__widen(h->home)))) {
    pyhost__free(w);
    return pyhost__set_error(h, PYHOST_NOMEM, "out of memory");
  }
  pyhost__free(h->w_program);
  h->w_program = w;
  return PYHOST_OK;
}

/* Frees what wide_arguments made (its second half holds the pointers). */
static void free_wide(wchar_t **w, int argc) {
  for (int i = 0; w && i < argc; i++) pyhost__free(w[argc + 1 + i]);
  pyhost__free(w);
}

#ifndef _WIN32
/* 3.7 decodes its arguments after the C locale coercion or the UTF-8 mode of a C or
 * POSIX locale (PEP 538, 540), so as UTF-8 there; 3.6 and other locales decode in the
 * locale. */
static int arguments_are_utf8(void) {
  if (!pyhost__runtime_at_least(3, 7)) return 0;
  const char *utf8 = getenv("PYTHONUTF8"), *ctype = setlocale(LC_CTYPE, NULL);
  if (utf8 && !strcmp(utf8, "1")) return 1;
  return ctype && (!strcmp(ctype, "C") || !strcmp(ctype, "POSIX"));
}
#endif

/* Py_Main's wchar_t arguments (own result: argc entries and a NULL, then the same
 * pointers again, which pyhost frees: 3.6's Py_Main overwrites the first half's entry
 * of -c with a literal), decoded as that version's python decodes its own: UTF-8 on
 * Windows (the command's manifest makes its arguments UTF-8), in the user's locale
 * before 3.8 elsewhere (python.c sets LC_ALL from the environment for that time only). */
static wchar_t **wide_arguments(pyhost *h, int argc, char **argv) {
  wchar_t **w = pyhost__calloc(2 * ((size_t)argc + 1), sizeof *w);
  if (!w) return NULL;
  int utf8 = 1;
#ifndef _WIN32
  char saved[256];
  const char *now = setlocale(LC_ALL, NULL);
  pyhost__fmt(saved, sizeof saved, "%s", now ? now : "C");
  setlocale(LC_ALL, "");
  utf8 = arguments_are_utf8();
#endif
  int ok = 1;
  for (int i = 0; ok && i < argc; i++) {
    if (i == 0 && !pyhost__runtime_at_least(3, 7) && h->w_program) {
      /* 3.6's Py_Main makes argv[0] the program name, overriding Py_SetProgramName */
      size_t n = (wcslen(h->w_program) + 1) * sizeof(wchar_t);
      if ((ok = (w[0] = pyhost__malloc(n)) != NULL)) memcpy(w[0], h->w_program, n);
    } else {
      ok = (w[i] = utf8 ? pyhost__widen(argv[i]) : pyhost__widen_locale(argv[i])) != NULL;
    }
  }
#ifndef _WIN32
  setlocale(LC_ALL, saved);
#endif
  memcpy(w + argc + 1, w, ((size_t)argc + 1) * sizeof *w);
  if (ok) return w;
  free_wide(w, argc);
  return NULL;
}

static int valid_arguments(int argc, char **argv) {
  if (argc < 1 || !argv) return 0;
  for (int i = 0; i < argc; i++)
    if (!argv[i]) return 0;
  return 1;
}

int pyhost_main(const pyhost_config *cfg, int argc, char **argv, pyhost **out, int *exit_status) {
  if (!out || !exit_status || !valid_arguments(argc, argv)) {
    if (out) *out = NULL;
    return PYHOST_MISUSE;
  }
  *exit_status = 1;
  int rc = pyhost__load(cfg, out);
  if (rc) return rc;
  pyhost *h = *out;
  struct pyhost__env_saved *env = NULL;
  wchar_t **wide = NULL;
  int bytes = pyhost__runtime_at_least(3, 8) && PY.Py_BytesMain;
#ifdef _WIN32
  bytes = 0; /* python.exe's own main is wmain: Py_Main */
#endif
  if (!(rc = choose_program(h)) && !bytes && !(wide = wide_arguments(h, argc, argv)))
    rc = pyhost__set_error(h, PYHOST_NOMEM, "out of memory");
  /* isolated: the PYTHON* variables stay hidden for the whole run (and from child
   * processes), PYTHONNOUSERSITE=1 turning the user site off on every version */
  if (!rc && h->cfg.isolated) rc = pyhost__isolate_begin(h, &env);
  if (rc) {
    free_wide(wide, argc);
    pyhost__load_undo(h);
    return rc;
  }
  if (h->w_home) PY.Py_SetPythonHome(h->w_home);
  if (h->w_program) PY.Py_SetProgramName(h->w_program);
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_RUNNING);
  *exit_status = bytes ? PY.Py_BytesMain(argc, argv) : PY.Py_Main(argc, wide);
  /* Python finalized itself: as after pyhost_finalize */
  atomic_store(&pyhost__process.state, PYHOST__PROCESS_DONE);
  atomic_store(&h->state, PYHOST__FINALIZED);
  pyhost__sys_env_restore(env);
  free_wide(wide, argc);
  pyhost__clear_message(h);
  return PYHOST_OK;
}
