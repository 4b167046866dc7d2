/* pins.c: the version a tool would run, read from its pin files without running it
 * (tools.h).  Each reader replays the tool's own rule, cited where it is implemented:
 *   uv    UV_PYTHON, .python-version / .python-versions upwards, then the user config;
 *   asdf  ASDF_PYTHON_VERSION, .tool-versions upwards, then ~/.tool-versions;
 *   mise  MISE_PYTHON_VERSION, mise.toml's [tools] and .tool-versions upwards, then the
 *         global config.
 * The current directory is only read here, never searched for programs or libraries. */
#include "tools.h"
#include "platform.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ---- requests ---- */

static int prefix_ci(const char *s, const char *p) {
  for (; *p; s++, p++)
    if (tolower((unsigned char)*s) != *p) return 0;
  return 1;
}

static unsigned digits(const char **p) {
  unsigned v = 0;
  while (isdigit((unsigned char)**p)) v = v * 10 + (unsigned)(*(*p)++ - '0');
  return v;
}

int pyhost__parse_request(const char *text, struct pyhost__request *r) {
  memset(r, 0, sizeof *r);
  r->patch = -1;
  const char *p = text;
  while (*p == ' ' || *p == '\t') p++;
  int impl = 0;
  if (prefix_ci(p, "cpython")) p += 7, impl = 1;
  else if (prefix_ci(p, "cp") && isdigit((unsigned char)p[2])) p += 2, impl = 1;
  if (impl && (*p == '@' || *p == '-')) p++;
  if (prefix_ci(p, "latest") && !p[6]) { /* mise: the newest installed */
    r->major = 3;
    return 0;
  }
  if (!isdigit((unsigned char)*p)) return -1;
  if (impl && p[0] == '3' && isdigit((unsigned char)p[1])) { /* cp312, cpython312 */
    r->major = 3;
    p++;
    r->minor = digits(&p);
  } else {
    r->major = digits(&p);
    if (*p == '.' && isdigit((unsigned char)p[1])) {
      p++;
      r->minor = digits(&p);
      if (*p == '.' && isdigit((unsigned char)p[1])) {
        p++;
        r->patch = (int)digits(&p);
        /* a pre-release ("3.15.0a5", "3.14.0rc1") is that patch level */
        if ((*p == 'a' || *p == 'b' || (p[0] == 'r' && p[1] == 'c')) && (isdigit((unsigned char)p[1]) || isdigit((unsigned char)p[2]))) {
          p += *p == 'r' ? 2 : 1;
          digits(&p);
        }
      }
    }
  }
  if (*p == 't') r->freethreaded = 1, p++;
  else if (*p == 'd' && !isalpha((unsigned char)p[1])) r->debug = 1, p++;
  while (*p == '+') {
    p++;
    if (prefix_ci(p, "freethreaded")) r->freethreaded = 1, p += 12;
    else if (prefix_ci(p, "debug")) r->debug = 1, p += 5;
    else if (prefix_ci(p, "gil")) p += 3;
    else return -1;
  }
  if (*p == '-' && impl) return 0; /* -<os>-<arch>-<libc>: uv's full key */
  while (*p == ' ' || *p == '\t' || *p == '\r') p++;
  return *p ? -1 : 0;
}

int pyhost__request_matches(const struct pyhost__request *r, unsigned major, unsigned minor,
                            int patch, int freethreaded, int debug) {
  return major == r->major && (!r->minor || minor == r->minor) &&
         (r->patch < 0 || patch == r->patch) && !freethreaded == !r->freethreaded &&
         !debug == !r->debug;
}

/* ---- files ---- */

/* The text of file (own), or NULL when it is not a readable regular file. */
static char *read_text(const char *file) {
  char *text, err[128];
  size_t len;
  if (pyhost__fs_kind(file) != PYHOST__FS_FILE || pyhost__fs_read(file, &text, &len, err, sizeof err) != 0)
    return NULL;
  return text;
}

/* Cuts the next line out of *cursor (in place), trimmed of blanks; NULL at the end. */
static char *next_line(char **cursor) {
  char *line = *cursor;
  if (!line || !*line) return NULL;
  char *eol = strchr(line, '\n');
  if (eol) {
    *eol = '\0';
    *cursor = eol + 1;
  } else {
    *cursor = line + strlen(line);
  }
  while (*line == ' ' || *line == '\t') line++;
  size_t n = strlen(line);
  while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) line[--n] = '\0';
  return line;
}

static void add_version(struct pyhost__strbuf *sb, const char *v, size_t n) {
  pyhost__strbuf_printf(sb, "%s%.*s", sb->len ? " " : "", (int)n, v);
}

/* uv's .python-version (first request) and .python-versions (all): lines trimmed,
 * empty ones and those starting with '#' skipped (version_files.rs try_from_path). */
static int read_uv_file(const char *file, int all, char *out, size_t cap) {
  char *text = read_text(file);
  if (!text) return -1;
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  char *cursor = text;
  for (char *line; (line = next_line(&cursor));) {
    if (!line[0] || line[0] == '#') continue;
    add_version(&sb, line, strlen(line));
    if (!all) break;
  }
  pyhost__free(text);
  return sb.len ? 0 : -1;
}

/* .tool-versions (asdf, and mise reads it too): "python 3.12.1 3.11.0 system", '#'
 * starts a comment. */
static int read_tool_versions(const char *file, char *out, size_t cap) {
  char *text = read_text(file);
  if (!text) return -1;
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  char *cursor = text;
  for (char *line; !sb.len && (line = next_line(&cursor));) {
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    if (strncmp(line, "python", 6) != 0 || (line[6] != ' ' && line[6] != '\t')) continue;
    for (const char *p = line + 6; *p;) {
      while (*p == ' ' || *p == '\t' || *p == '\r') p++;
      size_t n = strcspn(p, " \t\r");
      if (n) add_version(&sb, p, n);
      p += n;
    }
  }
  pyhost__free(text);
  return sb.len ? 0 : -1;
}

/* mise.toml's [tools] table: python = "3.12", python = ["3.12", "3.11"] or
 * python = { version = "3.12", ... } (mise.jdx.dev/configuration.html).  Only the
 * table form is read; a dotted `tools.python` key at the top is not. */
static int read_mise_toml(const char *file, char *out, size_t cap) {
  char *text = read_text(file);
  if (!text) return -1;
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, out, cap);
  int in_tools = 0;
  char *cursor = text;
  for (char *line; !sb.len && (line = next_line(&cursor));) {
    if (line[0] == '[') {
      in_tools = !strncmp(line, "[tools]", 7);
      continue;
    }
    if (!in_tools) continue;
    const char *p = line;
    if (*p == '"' || *p == '\'') p++;
    if (strncmp(p, "python", 6) != 0) continue;
    p += 6;
    if (*p == '"' || *p == '\'') p++;
    while (*p == ' ' || *p == '\t') p++;
    if (*p++ != '=') continue;
    const char *v = strstr(p, "version");
    if (strchr(p, '{') && v) p = v + 7; /* the table form: its version key */
    for (int more = 1; more;) {
      const char *q = strpbrk(p, "\"'");
      if (!q) break;
      const char *end = strchr(q + 1, *q);
      if (!end) break;
      add_version(&sb, q + 1, (size_t)(end - q - 1));
      p = end + 1;
      more = strchr(line, '[') != NULL; /* a list: every string in it */
    }
  }
  pyhost__free(text);
  return sb.len ? 0 : -1;
}

typedef int (*pin_reader)(const char *file, char *out, size_t cap);

static int read_uv_first(const char *file, char *out, size_t cap) { return read_uv_file(file, 0, out, cap); }
static int read_uv_all(const char *file, char *out, size_t cap) { return read_uv_file(file, 1, out, cap); }

struct pin_file {
  const char *name;
  pin_reader read;
};

/* The first of files (in their order) that gives versions in dir. */
static int read_in_dir(const char *dir, const struct pin_file *files, size_t n, struct pyhost__pin *pin) {
  for (size_t i = 0; i < n; i++) {
    char file[PYHOST__IPATH];
    pyhost__fmt(file, sizeof file, "%s%c%s", strcmp(dir, "/") ? dir : "", pyhost__fs_sep, files[i].name);
    if (files[i].read(file, pin->versions, sizeof pin->versions) == 0) {
      pyhost__fmt(pin->origin, sizeof pin->origin, "%s", file);
      return 0;
    }
  }
  return -1;
}

static int parent_dir(char *dir) {
  char *cut = NULL;
  for (char *p = dir; *p; p++)
    if (*p == '/' || *p == '\\') cut = p;
  if (!cut || !cut[1]) return -1; /* no separator, or a root: "/", "C:\\" */
  if (cut == dir) cut[1] = '\0';
  else if (cut == dir + 2 && dir[1] == ':') cut[1] = '\0'; /* "C:\x" -> "C:\" */
  else *cut = '\0';
  return 0;
}

/* From the current directory upwards, the nearest directory with one of files. */
static int read_upwards(const struct pin_file *files, size_t n, struct pyhost__pin *pin) {
  char dir[PYHOST__IPATH];
  if (pyhost__sys_cwd(dir, sizeof dir) != 0) return -1;
  do {
    if (read_in_dir(dir, files, n, pin) == 0) return 0;
  } while (parent_dir(dir) == 0);
  return -1;
}

static int from_env(const char *var, struct pyhost__pin *pin) {
  const char *v = getenv(var);
  if (!v || !v[0]) return -1;
  pyhost__fmt(pin->versions, sizeof pin->versions, "%s", v);
  pyhost__fmt(pin->origin, sizeof pin->origin, "%s", var);
  return 0;
}

static int in_tool_dir(const char *tool, const struct pin_file *files, size_t n, struct pyhost__pin *pin) {
  char dir[PYHOST__IPATH];
  return pyhost__sys_tool_dir(tool, dir, sizeof dir) == 0 ? read_in_dir(dir, files, n, pin) : -1;
}

static int in_home(const struct pin_file *file, struct pyhost__pin *pin) {
  char dir[PYHOST__IPATH];
  return pyhost__sys_home(dir, sizeof dir) == 0 ? read_in_dir(dir, file, 1, pin) : -1;
}

int pyhost__uv_pin(struct pyhost__pin *pin) {
  static const struct pin_file files[] = {{".python-version", read_uv_first}, {".python-versions", read_uv_all}};
  memset(pin, 0, sizeof *pin);
  return from_env("UV_PYTHON", pin) == 0 || read_upwards(files, 2, pin) == 0 ||
                 in_tool_dir("uv-config", files, 1, pin) == 0
             ? 0
             : -1;
}

static const struct pin_file tool_versions[] = {{".tool-versions", read_tool_versions}};

int pyhost__asdf_pin(struct pyhost__pin *pin) {
  memset(pin, 0, sizeof *pin);
  return from_env("ASDF_PYTHON_VERSION", pin) == 0 || read_upwards(tool_versions, 1, pin) == 0 ||
                 in_home(tool_versions, pin) == 0
             ? 0
             : -1;
}

int pyhost__mise_pin(struct pyhost__pin *pin) {
  static const struct pin_file files[] = {
      {"mise.local.toml", read_mise_toml},  {"mise.toml", read_mise_toml},
      {".mise.local.toml", read_mise_toml}, {".mise.toml", read_mise_toml},
      {".config/mise.toml", read_mise_toml}, {".config/mise/config.toml", read_mise_toml},
      {".tool-versions", read_tool_versions}};
  static const struct pin_file global[] = {{"config.toml", read_mise_toml}};
  memset(pin, 0, sizeof *pin);
  return from_env("MISE_PYTHON_VERSION", pin) == 0 ||
                 read_upwards(files, sizeof files / sizeof files[0], pin) == 0 ||
                 in_tool_dir("mise-config", global, 1, pin) == 0 || in_home(tool_versions, pin) == 0
             ? 0
             : -1;
}
