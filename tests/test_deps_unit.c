/* test_deps_unit.c: the parts of plugin dependencies (issue 35) that need no Python:
 * PEP 723 and pyproject.toml metadata (with the file, line and reason of each error),
 * requirement names, the merge of the host's requirements, requires-python, the cache
 * key, the lock file, the tree operations, and a program run to its end.  Unit tests:
 * they run once, whichever Pythons the matrix has. */
#include "pyhost.h"
#include "check.h"

#include "deps.h"
#include "platform.h"

#include <stdio.h>
#include <string.h>

/* Parses text as PEP 723 (pyproject 0) or pyproject.toml: 0 or -1, the error into err. */
static int parse(const char *text, int pyproject, struct pyhost__deps_decl *d, char *err, size_t cap) {
  err[0] = '\0';
  return pyhost__deps_parse(text, "f.py", pyproject, d, err, cap);
}

/* text must be refused with an error holding want. */
static void refused(const char *text, int pyproject, const char *want) {
  struct pyhost__deps_decl d;
  char err[1024];
  CHECK(parse(text, pyproject, &d, err, sizeof err) == -1);
  CHECK_CONTAINS(err, want);
  CHECK(d.n == 0 && d.reqs == NULL);
}

TEST_CASE(pep723_block) {
  struct pyhost__deps_decl d;
  char err[1024];
  const char *text =
      "#!/usr/bin/env python\n"
      "# /// other\n"
      "# anything = 'is ignored'\n"
      "# ///\n"
      "import sys\n"
      "# /// script\n"
      "# requires-python = \">=3.8\"  # a comment\n"
      "# dependencies = [\n"
      "#   \"requests<3\",  # trailing commas and comments in arrays\n"
      "#   'rich',\n"
      "#   \"caf\\u00e9 >= 1\",\n"
      "# ]\n"
      "#\n"
      "# [tool.pyhost]\n"
      "# dependencies = 3   # not the script's: another table\n"
      "# x = { a = 1, b = [1, \"s\"] }\n"
      "# when = 1979-05-27T07:32:00Z\n"
      "# ///\n"
      "print('# /// script')\n";
  CHECK(parse(text, 0, &d, err, sizeof err) == 0);
  CHECK(d.n == 3);
  if (d.n == 3) {
    CHECK_STREQ(d.reqs[0], "requests<3");
    CHECK_STREQ(d.reqs[1], "rich");
    CHECK_STREQ(d.reqs[2], "caf\xc3\xa9 >= 1");
  }
  CHECK_STREQ(d.requires_python, ">=3.8");
  CHECK(d.requires_python_line == 7);
  pyhost__deps_decl_clear(&d);
  /* no block: an empty declaration */
  CHECK(parse("import os\n# // script\n", 0, &d, err, sizeof err) == 0 && d.n == 0 && !d.requires_python);
  /* the closing line is the last "# ///" of the comment run (PEP 723) */
  CHECK(parse("# /// script\n# dependencies = [\"a\"]\n# ///\n# ///\nx = 1\n", 0, &d, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "f.py:3: expected a key"); /* "# ///" on line 3 is content */
}

TEST_CASE(pep723_errors_name_file_line_and_what) {
  refused("x = 1\n# /// script\n# dependencies = [\"a\"]\nimport os\n", 0,
          "f.py:2: the `# /// script` block opened here is not closed by a `# ///` line");
  refused("# /// script\n# ///\nx = 1\n# /// script\n# ///\n", 0,
          "f.py:4: a second `# /// script` block (the first is on line 1)");
  refused("# /// script\n# dependencies = \"requests\"\n# ///\n", 0, "f.py:2: dependencies must be an array of strings");
  refused("# /// script\n# dependencies = [\n#  \"a\",\n#  3,\n# ]\n# ///\n", 0,
          "f.py:2: dependencies must be an array of strings; the item on line 4 is not a string");
  refused("# /// script\n# dependencies = [\"a\"\n# ///\n", 0, "f.py:3: expected ',' or ']'");
  refused("# /// script\n# dependencies = [\"a]\n# ///\n", 0, "f.py:2: a string is not closed on its line");
  refused("# /// script\n# dependencies = [\"-r evil.txt\"]\n# ///\n", 0,
          "f.py:2: dependencies: \"-r evil.txt\" is not a requirement");
  refused("# /// script\n# dependencies = []\n# dependencies = []\n# ///\n", 0,
          "f.py:3: dependencies is given twice (first on line 2)");
  refused("# /// script\n# requires-python = 3.8\n# ///\n", 0, "f.py:2: requires-python must be a string");
  refused("# /// script\n# requires-python = \"3.8\"\n# ///\n", 0,
          "f.py:2: requires-python \"3.8\": expected an operator");
  refused("# /// script\n# requires-python = \">=3.8,<\"\n# ///\n", 0, "f.py:2: requires-python");
  refused("# /// script\n# dependencies = [] x\n# ///\n", 0, "f.py:2: expected the end of the line");
  refused("# /// script\n# = 1\n# ///\n", 0, "f.py:2: expected a key");
  refused("# /// script\n# a = \"\\q\"\n# ///\n", 0, "f.py:2: unknown escape sequence");
  refused("# /// script\n# [tool\n# ///\n", 0, "f.py:2: a table header is not closed");
}

TEST_CASE(pyproject_project_table) {
  struct pyhost__deps_decl d;
  char err[1024];
  const char *text =
      "[build-system]\n"
      "requires = [\"setuptools\"]\n"
      "\n"
      "[project]\n"
      "name = \"plug\"\n"
      "requires-python = '>=3.9'\n"
      "dependencies = [\"numpy>=1.20\", \"\"\"attrs\"\"\"]\n"
      "\n"
      "[project.optional-dependencies]\n"
      "dependencies = [1]\n"
      "[[tool.x]]\n"
      "dependencies = 2\n";
  CHECK(parse(text, 1, &d, err, sizeof err) == 0);
  CHECK(d.n == 2);
  if (d.n == 2) {
    CHECK_STREQ(d.reqs[0], "numpy>=1.20");
    CHECK_STREQ(d.reqs[1], "attrs");
  }
  CHECK_STREQ(d.requires_python, ">=3.9");
  pyhost__deps_decl_clear(&d);
  refused("[project]\nname = \"x\"\ndependencies = {a = 1}\n", 1, "f.py:3: dependencies must be an array of strings");
}

TEST_CASE(requirements_normalized_and_merged) {
  char name[64];
  CHECK(pyhost__req_name("Foo_Bar.baz >= 1", name, sizeof name) == 0);
  CHECK_STREQ(name, "foo-bar-baz");
  CHECK(pyhost__req_name("--index-url=x", name, sizeof name) == -1);
  CHECK(pyhost__req_name("", name, sizeof name) == -1);
  CHECK(pyhost__req_name("a\nb", name, sizeof name) == -1);
  char *n1 = pyhost__req_normal("  Foo_Bar [x, y] >= 1.0 , < 2 ;  python_version  <  '3.9'");
  CHECK_STREQ(n1, "foo-bar[x,y]>=1.0,<2; python_version < '3.9'");
  pyhost__free(n1);
  n1 = pyhost__req_normal("pkg   @  https://example.org/p.whl");
  CHECK_STREQ(n1, "pkg @ https://example.org/p.whl");
  pyhost__free(n1);
  /* the host's requirement for a package the plugin names replaces the plugin's;
   * others are added; the set is sorted and unique */
  char *declared[] = {"Zeta", "alpha==1", "beta", "beta"};
  char *host[] = {"ALPHA>=2", "gamma"};
  struct pyhost__deps_decl decl;
  memset(&decl, 0, sizeof decl);
  decl.reqs = declared;
  decl.n = 4;
  struct pyhost__deps_want w;
  memset(&w, 0, sizeof w);
  w.mode = PYHOST_DEPS_DECLARED;
  w.host_reqs = host;
  w.host_n = 2;
  char **out, err[256];
  size_t n;
  CHECK(pyhost__deps_merge(&decl, &w, &out, &n, err, sizeof err) == 0);
  CHECK(n == 4);
  if (n == 4) {
    CHECK_STREQ(out[0], "alpha>=2");
    CHECK_STREQ(out[1], "beta");
    CHECK_STREQ(out[2], "gamma");
    CHECK_STREQ(out[3], "zeta");
  }
  pyhost__deps_free_list(out, n);
  w.mode = PYHOST_DEPS_HOST_ONLY;
  CHECK(pyhost__deps_merge(&decl, &w, &out, &n, err, sizeof err) == 0 && n == 2);
  pyhost__deps_free_list(out, n);
  /* the public setter refuses what is not a requirement */
  pyhost_plugin_options *o = pyhost_plugin_options_new();
  CHECK_RC(pyhost_plugin_options_add_requirement(o, "--extra-index-url=http://x"), PYHOST_MISUSE);
  CHECK_RC(pyhost_plugin_options_add_requirement(o, "numpy<2"), PYHOST_OK);
  CHECK_RC(pyhost_plugin_options_set_deps(o, 3), PYHOST_MISUSE);
  pyhost_plugin_options_free(o);
}

TEST_CASE(requires_python_specifiers) {
  char why[256];
  struct {
    const char *spec;
    unsigned long v;
    int want;
  } cases[] = {
      {">=3.8", 0x030812F0, 1},     {">=3.9", 0x030812F0, 0},      {"<3.12", 0x030C00F0, 0},
      {"<3.12", 0x030B07F0, 1},     {"==3.11.*", 0x030B07F0, 1},   {"==3.11.*", 0x030C01F0, 0},
      {"==3.11", 0x030B07F0, 0},    {"==3.11", 0x030B00F0, 1},     {"!=3.10.*", 0x030A0DF0, 0},
      {"~=3.9", 0x030D00F0, 1},     {"~=3.9", 0x040000F0, 0},      {"~=3.9.2", 0x03090AF0, 1},
      {"~=3.9.2", 0x030A00F0, 0},   {">=3.8, <3.10", 0x030912F0, 1}, {">=3.8,<3.10", 0x030A00F0, 0},
      {">3.8", 0x030800F0, 0},      {">3.8", 0x030801F0, 1},       {"<=3.8", 0x030812F0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int got = pyhost__python_spec_match(cases[i].spec, cases[i].v, why, sizeof why);
    if (got != cases[i].want) fprintf(stderr, "spec %s on %#lx: %d\n", cases[i].spec, cases[i].v, got);
    CHECK(got == cases[i].want);
  }
  CHECK(pyhost__python_spec_match("", 0x030800F0, why, sizeof why) == -1);
  CHECK(pyhost__python_spec_match(">=3.*", 0x030800F0, why, sizeof why) == -1);
  CHECK(pyhost__python_spec_match("~=3", 0x030800F0, why, sizeof why) == -1);
  CHECK(pyhost__python_spec_match(">=3.8 <3.9", 0x030800F0, why, sizeof why) == -1);
}

TEST_CASE(cache_key_and_marker) {
  struct pyhost__deps_python py;
  memset(&py, 0, sizeof py);
  py.hexversion = 0x030C01F0;
  pyhost__deps_python_tag(&py);
  CHECK(strncmp(py.tag, "cp312-", 6) == 0);
  py.debug = 1;
  pyhost__deps_python_tag(&py);
  CHECK(strncmp(py.tag, "cp312d-", 7) == 0);
  char *a[] = {"x==1", "y"}, *b[] = {"x==2", "y"}, *k1, *k2, *k3, n1[128], n2[128], n3[128];
  CHECK(pyhost__deps_key(&py, a, 2, &k1, n1, sizeof n1) == 0);
  CHECK(pyhost__deps_key(&py, a, 2, &k2, n2, sizeof n2) == 0);
  CHECK(pyhost__deps_key(&py, b, 2, &k3, n3, sizeof n3) == 0);
  CHECK_STREQ(n1, n2); /* the same set, the same entry */
  CHECK(strcmp(n1, n3) != 0);
  CHECK(strncmp(n1, py.tag, strlen(py.tag)) == 0);
  CHECK_CONTAINS(k1, "requirement x==1\nrequirement y\n");
  /* an entry is complete when its marker starts with its key */
  char dir[256], marker[300];
  snprintf(dir, sizeof dir, "%s/pyhost-deps-unit-%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           pyhost__proc_self());
  CHECK(pyhost__fs_mkdirs(dir) == 0);
  CHECK(pyhost__deps_entry_ok(dir, k1, NULL) == 0);
  snprintf(marker, sizeof marker, "%s/%s", dir, PYHOST__DEPS_MARKER);
  char text[1024];
  snprintf(text, sizeof text, "%sinstalled x 1\ninstalled y 3.0\n", k1);
  CHECK(pyhost__fs_write_file(marker, text, strlen(text)) == 0);
  char *installed;
  CHECK(pyhost__deps_entry_ok(dir, k1, &installed) == 1);
  CHECK_STREQ(installed, "installed x 1\ninstalled y 3.0\n");
  pyhost__free(installed);
  CHECK(pyhost__deps_entry_ok(dir, k3, NULL) == 0);
  CHECK(pyhost__fs_remove_tree(dir) == 0 && pyhost__fs_kind(dir) == PYHOST__FS_MISSING);
  pyhost__free(k1);
  pyhost__free(k2);
  pyhost__free(k3);
  /* the cache's root: configured, then PYHOST_DEPS_CACHE */
  char root[512];
  CHECK(pyhost__deps_cache_root("/some/where", root, sizeof root) == 0);
  CHECK_STREQ(root, "/some/where");
}

TEST_CASE(lock_rename_remove) {
  char base[256], a[300], b[300], lock[300];
  snprintf(base, sizeof base, "%s/pyhost-deps-tree-%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           pyhost__proc_self());
  snprintf(a, sizeof a, "%s/a/deep/er", base);
  snprintf(lock, sizeof lock, "%s/x.lock", base);
  CHECK(pyhost__fs_mkdirs(a) == 0);
  CHECK(pyhost__fs_mkdirs(a) == 0); /* there already: fine */
  /* two holders in one process exclude each other, as two processes do */
  struct pyhost__fs_lock *l1, *l2;
  CHECK(pyhost__fs_lock(lock, 0, &l1) == 0);
  CHECK(pyhost__fs_lock(lock, 0, &l2) == 1 && l2 == NULL);
  pyhost__fs_unlock(l1);
  CHECK(pyhost__fs_lock(lock, 0, &l2) == 0);
  pyhost__fs_unlock(l2);
  /* rename into place, never over what is there */
  snprintf(a, sizeof a, "%s/a", base);
  snprintf(b, sizeof b, "%s/b", base);
  CHECK(pyhost__fs_rename_new(a, b) == 0);
  CHECK(pyhost__fs_kind(b) == PYHOST__FS_DIR && pyhost__fs_kind(a) == PYHOST__FS_MISSING);
  CHECK(pyhost__fs_mkdirs(a) == 0);
  snprintf(lock, sizeof lock, "%s/a/file", base);
  CHECK(pyhost__fs_write_file(lock, "x", 1) == 0);
  CHECK(pyhost__fs_rename_new(a, b) == 1);
  CHECK(pyhost__fs_kind(lock) == PYHOST__FS_FILE);
  CHECK(pyhost__fs_mtime(lock) > 0 && pyhost__fs_touch(lock) == 0);
  CHECK(pyhost__fs_remove_tree(base) == 0 && pyhost__fs_kind(base) == PYHOST__FS_MISSING);
  CHECK(pyhost__fs_remove_tree(base) == 0); /* nothing there: fine */
}

struct lines {
  int n;
  char text[8][64];
};

static void take_line(void *ctx, const char *line, size_t len) {
  struct lines *l = ctx;
  if (l->n < 8) snprintf(l->text[l->n++], 64, "%.*s", (int)len, line);
}

TEST_CASE(run_to_the_end) {
#if defined(_WIN32)
  SKIP("a POSIX shell case");
#else
  const char *argv[] = {"/bin/sh", "-c", "printf 'one\\r\\ntwo\\rthree\\n' ; echo \"$PYHOST_T\" >&2; exit 3", NULL};
  const char *env[] = {"PYHOST_T=set by the caller", NULL};
  struct lines l;
  memset(&l, 0, sizeof l);
  int code;
  char err[256];
  CHECK(pyhost__run(argv, env, take_line, &l, &code, err, sizeof err) == 0);
  CHECK(code == 3);
  CHECK(l.n == 4);
  CHECK_STREQ(l.text[0], "one");
  CHECK_STREQ(l.text[1], "two");
  CHECK_STREQ(l.text[2], "three");
  CHECK_STREQ(l.text[3], "set by the caller");
  const char *missing[] = {"/no/such/program", NULL};
  CHECK(pyhost__run(missing, NULL, take_line, &l, &code, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "/no/such/program");
#endif
}
