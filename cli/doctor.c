/* doctor.c: `pyhost --list [--json] [--requires-python SPEC]` and `pyhost --check LIB`,
 * built only on the public API (pyhost_discover, pyhost_python_for,
 * pyhost_inspect_library), so a host can do the same. */
#include "doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

struct row {
  char *num, *status, *version, *kind, *source, *path, *reason, *meets;
};

struct table {
  struct row *rows;
  size_t n, cap;
  int json, first, oom;
  int binding;              /* the first binding candidate's index, 0 when none */
  char binding_text[2400];  /* its source, path and reason */
  const char *spec;         /* --requires-python, or NULL */
  char chosen[4096];        /* the library the process level would run for spec, or "" */
  int chosen_index;         /* its row, 0 when not listed */
};

/* The sources only one of which can be taken (docs/discovery.md, "binding"). */
static int is_binding(const char *source) {
  static const char *const names[] = {"configured", "PYHOST_PYTHON_LIBRARY", "interpreter", "PYHOST_PYTHON"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(source, names[i])) return 1;
  return 0;
}

static void version_text(unsigned long v, int ft, int dbg, char *out, size_t cap) {
  if (!v) snprintf(out, cap, "?");
  else if ((v >> 8 & 0xFF) || (v & 0xFF))
    snprintf(out, cap, "%lu.%lu.%lu%s%s", v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF, ft ? "t" : "",
             dbg ? "d" : "");
  else snprintf(out, cap, "%lu.%lu%s%s", v >> 24, (v >> 16) & 0xFF, ft ? "t" : "", dbg ? "d" : "");
}

/* JSON string with the escapes RFC 8259 requires; bytes >= 0x80 pass (UTF-8 paths). */
static void json_str(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

void pyhost_cli_one_line(const char *text, char *out, size_t cap) {
  size_t n = 0;
  int space = 0;
  for (const char *p = text; *p && n + 1 < cap; p++) {
    int ws = *p == '\n' || *p == '\r' || *p == '\t' || *p == ' ';
    if (ws) {
      space = n > 0;
      continue;
    }
    if (space && n + 2 < cap) out[n++] = ' ';
    space = 0;
    out[n++] = *p;
  }
  if (cap) out[n] = '\0';
}

static const char *path_of(const pyhost_candidate *c) {
  return c->interpreter[0] ? c->interpreter : c->library;
}

/* Whether c meets --requires-python, in words ("" without a spec or a version); *yes
 * 1 when it does, 0 when not, -1 when not known. */
static void meets_text(const struct table *t, const pyhost_candidate *c, char *out, size_t cap,
                       int *yes) {
  char why[512];
  out[0] = '\0';
  *yes = -1;
  if (!t->spec || !c->hexversion) return;
  *yes = pyhost_python_meets(t->spec, c->hexversion, why, sizeof why) == PYHOST_OK;
  int chosen = t->chosen[0] && !strcmp(c->library, t->chosen);
  snprintf(out, cap, "%s%s", *yes ? "meets" : "no: ", *yes ? (chosen ? ", chosen" : "") : why);
}

static void on_candidate(void *ctx, const pyhost_candidate *c) {
  struct table *t = ctx;
  char ver[32], meets[600];
  int yes;
  version_text(c->hexversion, c->free_threaded, c->debug, ver, sizeof ver);
  meets_text(t, c, meets, sizeof meets, &yes);
  if (t->chosen[0] && !t->chosen_index && !strcmp(c->library, t->chosen)) t->chosen_index = c->index;
  if (!t->binding && is_binding(c->source)) {
    t->binding = c->index;
    snprintf(t->binding_text, sizeof t->binding_text, "%s %s: %s", c->source, path_of(c), c->reason);
  }
  if (t->json) {
    printf("%s\n  {\"index\": %d, \"taken\": %s, \"reason_code\": ", t->first ? "" : ",", c->index,
           c->taken ? "true" : "false");
    t->first = 0;
    json_str(c->reason_code);
    printf(", \"reason\": ");
    json_str(c->reason);
    printf(", \"version\": ");
    json_str(c->hexversion ? ver : "");
    printf(", \"hexversion\": %lu, \"free_threaded\": %s, \"debug\": %s, \"source\": ", c->hexversion,
           c->free_threaded ? "true" : "false", c->debug ? "true" : "false");
    json_str(c->source);
    const char *keys[] = {"kind", "interpreter", "resolved", "venv", "library", "how"};
    const char *vals[] = {c->kind, c->interpreter, c->resolved, c->venv, c->library, c->how};
    for (int i = 0; i < 6; i++) {
      printf(", \"%s\": ", keys[i]);
      json_str(vals[i]);
    }
    if (t->spec) printf(", \"meets_requires_python\": %s", yes < 0 ? "null" : yes ? "true" : "false");
    printf("}");
    return;
  }
  if (t->n == t->cap) {
    size_t ncap = t->cap ? t->cap * 2 : 16;
    struct row *grown = realloc(t->rows, ncap * sizeof *grown);
    if (!grown) {
      t->oom = 1;
      return;
    }
    t->rows = grown;
    t->cap = ncap;
  }
  char num[16], reason[2048], path[8400];
  snprintf(num, sizeof num, "%d", c->index);
  snprintf(reason, sizeof reason, "%s%s%s", c->reason_code,
           strcmp(c->reason_code, c->reason) ? ": " : "", strcmp(c->reason_code, c->reason) ? c->reason : "");
  if (c->interpreter[0] && c->library[0]) snprintf(path, sizeof path, "%s -> %s", c->interpreter, c->library);
  else snprintf(path, sizeof path, "%s", path_of(c));
  struct row r = {dup_str(num), dup_str(c->taken ? "taken" : "passed over"), dup_str(ver),
                  dup_str(c->kind), dup_str(c->source), dup_str(path), dup_str(reason),
                  dup_str(meets)};
  t->rows[t->n++] = r;
}

static size_t width(const struct table *t, size_t off, const char *head) {
  size_t w = strlen(head);
  for (size_t i = 0; i < t->n; i++) {
    const char *s = *(char *const *)((const char *)&t->rows[i] + off);
    if (s && strlen(s) > w) w = strlen(s);
  }
  return w;
}

static void cell(int column, int last, size_t w, const char *s) {
  if (column < last) printf("%-*s  ", (int)w, s);
  else printf("%s\n", s);
}

static void print_table(const struct table *t) {
  static const char *const heads[] = {"#", "STATUS", "VERSION", "KIND", "SOURCE",
                                      "REQUIRES-PYTHON", "PATH", "REASON"};
  static const size_t offs[] = {offsetof(struct row, num), offsetof(struct row, status),
                                offsetof(struct row, version), offsetof(struct row, kind),
                                offsetof(struct row, source), offsetof(struct row, meets),
                                offsetof(struct row, path), offsetof(struct row, reason)};
  size_t w[8];
  int last = 7;
  for (int c = 0; c <= last; c++) w[c] = width(t, offs[c], heads[c]);
  for (int c = 0; c <= last; c++)
    if (t->spec || c != 5) cell(c, last, w[c], heads[c]); /* the column of --requires-python */
  for (size_t i = 0; i < t->n; i++)
    for (int c = 0; c <= last; c++) {
      const char *s = *(char *const *)((const char *)&t->rows[i] + offs[c]);
      if (t->spec || c != 5) cell(c, last, w[c], s ? s : "");
    }
}

/* The closing line of --requires-python: which Python and why; 0, or 1 when none. */
static int print_choice(const struct table *t, int rc, const char *why) {
  if (t->json) {
    printf(", \"requires_python\": {\"spec\": ");
    json_str(t->spec);
    printf(", \"status\": ");
    json_str(pyhost_status_name(rc));
    printf(", \"index\": %d, \"library\": ", t->chosen_index);
    json_str(t->chosen);
    printf(", \"reason\": ");
    json_str(why);
    printf("}");
  } else if (rc == PYHOST_OK) {
    char num[16] = "";
    if (t->chosen_index) snprintf(num, sizeof num, "#%d ", t->chosen_index);
    printf("requires-python \"%s\": the process level runs a plugin on %s%s: %s\n", t->spec, num,
           t->chosen, why);
  } else {
    printf("requires-python \"%s\": no Python for it: %s\n", t->spec, why);
  }
  return rc == PYHOST_OK ? 0 : 1;
}

int pyhost_cli_list(const pyhost_config *cfg, int json, const char *requires_python) {
  static struct table t; /* chosen and binding_text: too big for the stack's comfort */
  memset(&t, 0, sizeof t);
  t.json = json;
  t.first = 1;
  t.spec = requires_python;
  char why[4096] = "";
  int for_rc = PYHOST_OK, choice = 0;
  if (t.spec) {
    for_rc = pyhost_python_for(cfg, t.spec, t.chosen, sizeof t.chosen, why, sizeof why);
    if (for_rc == PYHOST_MISUSE) { /* a malformed specifier: nothing to list against */
      fprintf(stderr, "pyhost: --requires-python \"%s\": %s\n", t.spec, why);
      return 1;
    }
  }
  if (json) printf("{\"candidates\": [");
  int rc = pyhost_discover(cfg, on_candidate, &t);
  if (json) {
    printf("%s], \"status\": ", t.first ? "" : "\n");
    json_str(pyhost_status_name(rc));
    if (t.spec) choice = print_choice(&t, for_rc, why);
    printf("}\n");
  } else {
    print_table(&t);
    /* a broken binding source hides every other candidate: name it as the cause */
    if (rc == PYHOST_NOTFOUND && t.binding)
      printf("no candidate is acceptable: #%d, %s; it is binding (only it can be taken): fix or "
             "unset it to let discovery choose\n",
             t.binding, t.binding_text);
    else if (rc == PYHOST_NOTFOUND) printf("no candidate is acceptable\n");
    if (t.spec) choice = print_choice(&t, for_rc, why);
  }
  for (size_t i = 0; i < t.n; i++) {
    struct row *r = &t.rows[i];
    free(r->num), free(r->status), free(r->version), free(r->kind), free(r->source), free(r->path),
        free(r->reason), free(r->meets);
  }
  free(t.rows);
  if (t.oom || rc == PYHOST_NOMEM) {
    fprintf(stderr, "pyhost: out of memory\n");
    return 1;
  }
  return rc == PYHOST_OK && !choice ? 0 : 1;
}

/* A str from Python, or "?" (the handle's error is then not needed: --info goes on). */
static void print_eval(pyhost *h, const char *label, const char *expr) {
  pyhost_value *v = NULL;
  const char *s = NULL;
  if (pyhost_eval(h, expr, &v) == PYHOST_OK) pyhost_value_to_str(h, v, &s, NULL);
  printf("%s%s\n", label, s ? s : "?");
  pyhost_value_free(v);
}

void pyhost_cli_info(pyhost *h) {
  unsigned long v = pyhost_python_version(h);
  char build[1024];
  pyhost_cli_one_line(pyhost_python_version_text(h), build, sizeof build);
  printf("python   %lu.%lu.%lu\n", v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF);
  printf("library  %s\n", pyhost_library_path(h));
  printf("home     %s\n", pyhost_python_home(h));
  /* home is the base installation's even in a venv: sys.prefix says which venv runs */
  print_eval(h, "venv     ", "(lambda s: s.prefix if s.prefix != s.base_prefix else 'none')(__import__('sys'))");
  printf("build    %s\n", build);
}

int pyhost_cli_check(const char *lib) {
  pyhost_library_info *in = NULL;
  int rc = pyhost_inspect_library(lib, &in);
  if (rc != PYHOST_OK) {
    fprintf(stderr, "pyhost: %s\n", pyhost_errstr(rc));
    return 1;
  }
  char ver[32];
  version_text(in->hexversion, 0, 0, ver, sizeof ver);
  /* only what was found: a file refused before it was loaded has no version, build or
   * symbols to show, and its reason is the verdict */
  int loaded = in->hexversion != 0;
  printf("library        %s\n", lib);
  if (loaded || (in->real_path[0] && strcmp(in->real_path, lib) != 0))
    printf("real path      %s\n", in->real_path);
  if (loaded) {
    char text[512];
    pyhost_cli_one_line(in->version_text, text, sizeof text);
    printf("version        %s%s%s\n", ver, text[0] ? "  " : "", text);
    printf("build          %s%s%s\n", in->free_threaded ? "free-threaded " : "",
           in->debug ? "debug " : "", in->trace_refs ? "Py_TRACE_REFS" : (in->free_threaded || in->debug) ? "" : "release (GIL)");
  }
  if (in->architecture[0])
    printf("architecture   %s%s\n", in->architecture, !in->architecture_ok ? "  (not this process's)" : "");
  if (loaded) {
    printf("required       %zu symbols, %zu missing\n", in->required, in->required_missing);
    printf("optional       %zu due on this version, %zu missing; %zu added later\n", in->optional,
           in->optional_missing, in->optional_later);
    if (in->missing[0]) printf("missing        %s\n", in->missing);
  }
  if (in->tool[0]) printf("tool           %s\n", in->tool);
  if (in->home[0] || in->home_probe[0])
    printf("stdlib         %s\n", in->home[0] ? in->home : "none found");
  if (!in->home[0] && in->home_probe[0]) printf("               looked for %s\n", in->home_probe);
  int ok = in->status == PYHOST_OK;
  printf("verdict        %s%s%s\n", ok ? "usable" : pyhost_status_name(in->status), ok ? "" : ": ",
         in->message);
  pyhost_library_info_free(in);
  fflush(stdout);
  /* and now for real: does it start?  (asked of an unusable one too, for the reason
   * pyhost_init gives: a bare name's loader search, where the file came from) */
  pyhost_config *cfg = pyhost_config_new();
  pyhost *h = NULL;
  pyhost_config_set_library(cfg, lib);
  rc = pyhost_init(cfg, &h);
  pyhost_config_free(cfg);
  if (rc == PYHOST_OK) {
    pyhost_value *v = NULL;
    rc = pyhost_eval(h, "__import__('sys').prefix", &v);
    const char *prefix = NULL;
    if (rc == PYHOST_OK) pyhost_value_to_str(h, v, &prefix, NULL);
    printf("initializes    yes (sys.prefix %s)\n", prefix ? prefix : "?");
    pyhost_value_free(v);
  } else {
    printf("initializes    no: %s\n", pyhost_errmsg(h));
  }
  pyhost_free(h);
  return ok && rc == PYHOST_OK ? 0 : 1;
}

/* ---- discovery options ---- */

static struct {
  const char *interpreter;
  unsigned long min, max, minor;
  int newest, debug, no_subprocess, isolated;
} policy;

const char pyhost_cli_policy_usage[] =
    "  discovery (with any mode; docs/discovery.md):\n"
    "  --interpreter PATH   take the library of this python (a venv's, a pyenv shim)\n"
    "  --min-python X.Y     --max-python X.Y     --python-minor X.Y\n"
    "  --prefer-newest      the newest acceptable Python, not the first found\n"
    "  --allow-debug        debug builds are acceptable\n"
    "  --no-subprocess      never run an interpreter to ask for its library\n"
    "  --isolated           hide PYTHON* variables and the user site from Python\n";

static int version_arg(const char *s, unsigned long *out) {
  unsigned major, minor;
  char tail;
  if (sscanf(s, "%u.%u%c", &major, &minor, &tail) != 2 || major > 255 || minor > 255) return -1;
  *out = PYHOST_PY(major, minor);
  return 0;
}

int pyhost_cli_policy_arg(int argc, char **argv, int *i) {
  const char *a = argv[*i];
  static const char *const flags[] = {"--prefer-newest", "--allow-debug", "--no-subprocess", "--isolated"};
  int *slots[] = {&policy.newest, &policy.debug, &policy.no_subprocess, &policy.isolated};
  for (int f = 0; f < 4; f++)
    if (!strcmp(a, flags[f])) {
      *slots[f] = 1;
      return 1;
    }
  static const char *const valued[] = {"--interpreter", "--min-python", "--max-python", "--python-minor"};
  unsigned long *versions[] = {NULL, &policy.min, &policy.max, &policy.minor};
  for (int v = 0; v < 4; v++) {
    if (strcmp(a, valued[v]) != 0) continue;
    if (*i + 1 >= argc) {
      fprintf(stderr, "pyhost: %s needs a value\n", a);
      return -1;
    }
    const char *val = argv[++*i];
    if (!versions[v]) policy.interpreter = val;
    else if (version_arg(val, versions[v]) != 0) {
      fprintf(stderr, "pyhost: %s wants a version like 3.11, not '%s'\n", a, val);
      return -1;
    }
    return 1;
  }
  return 0;
}

void pyhost_cli_policy_apply(pyhost_config *cfg) {
  if (policy.interpreter) pyhost_config_set_interpreter(cfg, policy.interpreter);
  if (policy.min) pyhost_config_set_min_python(cfg, policy.min);
  if (policy.max) pyhost_config_set_max_python(cfg, policy.max);
  if (policy.minor) pyhost_config_set_python_minor(cfg, policy.minor);
  pyhost_config_set_prefer_newest(cfg, policy.newest);
  pyhost_config_set_allow_debug(cfg, policy.debug);
  pyhost_config_set_no_subprocess(cfg, policy.no_subprocess);
  pyhost_config_set_isolated(cfg, policy.isolated);
}
