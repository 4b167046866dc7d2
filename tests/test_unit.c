/* test_unit.c: tier 1, no Python.  The loader is driven through a fake symbol look-up
 * (missing symbols, version gating, build detection), plus the value API, messages,
 * misuse of NULL handles and the UTF-8 decoder. */
#include "internal.h"
#include "check.h"

#include <locale.h>

/* ---- a fake libpython ---- */

struct fake {
  const char *version;          /* NULL: no Py_GetVersion */
  const char *missing[8];       /* table rows it lacks */
  const char *extra[4];         /* marker symbols it has */
};
static struct fake *current;
static char dummy_object[64];
static const char *fake_get_version(void) { return current->version; }

static int in_list(const char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n && list[i]; i++)
    if (!strcmp(list[i], name)) return 1;
  return 0;
}

static void *fake_sym(void *ctx, const char *name) {
  struct fake *f = ctx;
  current = f;
  if (!strcmp(name, "Py_GetVersion")) {
    if (!f->version) return NULL;
    void *p;
    const char *(*fn)(void) = fake_get_version;
    memcpy(&p, &fn, sizeof p);
    return p;
  }
  if (in_list(f->extra, 4, name)) return dummy_object;
  if (in_list(f->missing, 8, name)) return NULL;
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++)
    if (!strcmp(pyhost__pyapi_rows[i].name, name)) return dummy_object;
  return NULL;
}

static int probe(struct fake *f, struct pyapi_probe *pr, char *err) {
  return pyhost__pyapi_probe(fake_sym, f, pr, err, 512);
}

static const struct pyapi_row *row_named(const char *name) {
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++)
    if (!strcmp(pyhost__pyapi_rows[i].name, name)) return &pyhost__pyapi_rows[i];
  return NULL;
}

static void *member(const struct pyapi *t, const char *name) {
  void *p;
  memcpy(&p, (const char *)t + row_named(name)->offset, sizeof p);
  return p;
}

TEST_CASE(parse_version) {
  CHECK(pyhost__parse_version("3.11.7 (main, Jan 1 2026) [GCC 12.2.0]") == 0x030B07F0UL);
  CHECK(pyhost__parse_version("3.6.15 (default)\n[GCC 12]") == 0x03060FF0UL);
  CHECK(pyhost__parse_version("3.13.0a1+") == 0x030D00A1UL);
  CHECK(pyhost__parse_version("3.10.0rc2") == 0x030A00C2UL);
  CHECK(pyhost__parse_version("3.12.0b4 (tags)") == 0x030C00B4UL);
  CHECK(pyhost__parse_version("2.7.18") == 0x020712F0UL);
  CHECK(pyhost__parse_version("3.9") == 0x030900F0UL);
  CHECK(pyhost__parse_version("PyPy 7.3") == 0);
  CHECK(pyhost__parse_version("") == 0);
  CHECK(pyhost__parse_version(NULL) == 0);
  CHECK(pyhost__parse_version("3") == 0);
  CHECK(pyhost__parse_version("3.") == 0);
  CHECK(pyhost__parse_version("300.1.1") == 0);
  CHECK(pyhost__parse_version("3.99999999999999999999") == 0);
}

TEST_CASE(probe_without_py_getversion_is_not_python) {
  struct fake f = {0};
  struct pyapi_probe pr;
  char err[512];
  CHECK_RC(probe(&f, &pr, err), PYHOST_NOTPYTHON);
  CHECK_CONTAINS(err, "no Py_GetVersion");
}

TEST_CASE(probe_unparsable_version_is_not_python) {
  struct fake f = {.version = "PyPy 7.3.15"};
  struct pyapi_probe pr;
  char err[512];
  CHECK_RC(probe(&f, &pr, err), PYHOST_NOTPYTHON);
  CHECK_CONTAINS(err, "PyPy 7.3.15");
}

TEST_CASE(probe_detects_free_threaded_builds) {
  struct pyapi_probe pr;
  char err[512];
  struct fake by_text = {.version = "3.13.0 experimental free-threading build (main)"};
  CHECK_RC(probe(&by_text, &pr, err), PYHOST_OK);
  CHECK(pr.free_threaded);
  struct fake by_symbol = {.version = "3.13.0 (main)", .extra = {"_Py_DecRefShared"}};
  CHECK_RC(probe(&by_symbol, &pr, err), PYHOST_OK);
  CHECK(pr.free_threaded);
  struct fake plain = {.version = "3.13.0 (main)"};
  CHECK_RC(probe(&plain, &pr, err), PYHOST_OK);
  CHECK(!pr.free_threaded && !pr.trace_refs && !pr.debug);
}

TEST_CASE(probe_detects_trace_refs_only_where_layout_changes) {
  struct pyapi_probe pr;
  char err[512];
  struct fake old = {.version = "3.8.18", .extra = {"_Py_PrintReferences"}};
  CHECK_RC(probe(&old, &pr, err), PYHOST_OK);
  CHECK(pr.trace_refs);
  struct fake renamed = {.version = "3.9.1", .extra = {"PyModule_Create2TraceRefs"}};
  CHECK_RC(probe(&renamed, &pr, err), PYHOST_OK);
  CHECK(pr.trace_refs);
  struct fake compatible = {.version = "3.13.0", .extra = {"_Py_PrintReferences"}};
  CHECK_RC(probe(&compatible, &pr, err), PYHOST_OK);
  CHECK(!pr.trace_refs);
  struct fake debug = {.version = "3.11.0", .extra = {"_Py_RefTotal"}};
  CHECK_RC(probe(&debug, &pr, err), PYHOST_OK);
  CHECK(pr.debug && !pr.trace_refs);
}

TEST_CASE(load_lists_every_missing_symbol_at_once) {
  struct fake f = {.version = "3.11.7", .missing = {"PyList_New", "Py_IncRef", "PyExc_TypeError"}};
  struct pyapi t;
  char err[2048];
  CHECK_RC(pyhost__pyapi_load(&t, 0x030B07F0UL, fake_sym, &f, err, sizeof err), PYHOST_NOSYM);
  CHECK_CONTAINS(err, "3 stable-ABI symbols are missing for Python 3.11");
  CHECK_CONTAINS(err, "PyList_New (stable ABI 3.2)");
  CHECK_CONTAINS(err, "Py_IncRef (stable ABI 3.2)");
  CHECK_CONTAINS(err, "PyExc_TypeError (stable ABI 3.2)");
  /* never a half-filled table */
  static const struct pyapi zero;
  CHECK(memcmp(&t, &zero, sizeof t) == 0);
}

TEST_CASE(load_leaves_newer_optional_rows_null) {
  struct fake f = {.version = "3.6.15"};
  struct pyapi t;
  char err[512];
  CHECK_RC(pyhost__pyapi_load(&t, 0x03060FF0UL, fake_sym, &f, err, sizeof err), PYHOST_OK);
  CHECK(t.runtime == 0x0306);
  CHECK(member(&t, "PyUnicode_AsUTF8AndSize") == NULL);
  CHECK(member(&t, "PyExc_RecursionError") == NULL);
  CHECK(member(&t, "Py_Version") == NULL);
  CHECK(member(&t, "PyList_New") != NULL);
  CHECK_RC(pyhost__pyapi_load(&t, 0x030907F0UL, fake_sym, &f, err, sizeof err), PYHOST_OK);
  CHECK(member(&t, "PyExc_RecursionError") != NULL);
  CHECK(member(&t, "PyUnicode_AsUTF8AndSize") == NULL);
  CHECK_RC(pyhost__pyapi_load(&t, 0x030A00F0UL, fake_sym, &f, err, sizeof err), PYHOST_OK);
  CHECK(member(&t, "PyUnicode_AsUTF8AndSize") != NULL);
}

TEST_CASE(load_refuses_missing_optional_row_at_its_version) {
  /* An OPT row is gated on the version, so at that version it must be there. */
  struct fake f = {.version = "3.10.13", .missing = {"PyUnicode_AsUTF8AndSize"}};
  struct pyapi t;
  char err[512];
  CHECK_RC(pyhost__pyapi_load(&t, 0x030A0DF0UL, fake_sym, &f, err, sizeof err), PYHOST_NOSYM);
  CHECK_CONTAINS(err, "PyUnicode_AsUTF8AndSize (stable ABI 3.10)");
  CHECK_RC(pyhost__pyapi_load(&t, 0x03090FF0UL, fake_sym, &f, err, sizeof err), PYHOST_OK);
}

TEST_CASE(rows_are_consistent) {
  for (size_t i = 0; i < pyhost__pyapi_nrows; i++) {
    const struct pyapi_row *r = &pyhost__pyapi_rows[i];
    CHECK(r->added >= 0x0302);
    if (r->need == PYAPI_NEED_REQ) CHECK(((unsigned long)r->added << 16) <= PYHOST_LIMITED_API_HEX);
    for (size_t j = 0; j < i; j++) CHECK(strcmp(r->name, pyhost__pyapi_rows[j].name) != 0);
  }
  CHECK(pyhost__pyapi_nrows > 100);
}

TEST_CASE(status_names_and_texts) {
  CHECK_STREQ(pyhost_status_name(PYHOST_OK), "PYHOST_OK");
  CHECK_STREQ(pyhost_status_name(PYHOST_NOSYM), "PYHOST_NOSYM");
  CHECK_STREQ(pyhost_status_name(12345), "PYHOST_UNKNOWN");
  CHECK_STREQ(pyhost_errstr(PYHOST_OK), "success");
  CHECK_STREQ(pyhost_errstr(-1), "unknown status code");
  for (int s = 0; s <= PYHOST_BUSY; s++) {
    CHECK(strcmp(pyhost_status_name(s), "PYHOST_UNKNOWN") != 0);
    for (int t = 0; t < s; t++) CHECK(strcmp(pyhost_errstr(s), pyhost_errstr(t)) != 0);
  }
}

TEST_CASE(versions_agree) {
  CHECK(pyhost_version() == PYHOST_VERSION_HEX);
  CHECK_STREQ(pyhost_version_string(), PYHOST_VERSION_STRING);
  CHECK(pyhost_abi_version() == PYHOST_LIMITED_API_HEX);
  CHECK(PYHOST_AT_LEAST_VERSION(0, 1, 0));
  /* the hex form and the string are made of the same three numbers */
  CHECK(PYHOST_VERSION_HEX == ((PYHOST_VERSION_MAJOR << 16) | (PYHOST_VERSION_MINOR << 8) |
                               PYHOST_VERSION_PATCH));
  char text[32];
  snprintf(text, sizeof text, "%d.%d.%d", PYHOST_VERSION_MAJOR, PYHOST_VERSION_MINOR,
           PYHOST_VERSION_PATCH);
  CHECK_STREQ(pyhost_version_string(), text);
  CHECK(PYHOST_AT_LEAST_VERSION(PYHOST_VERSION_MAJOR, PYHOST_VERSION_MINOR, PYHOST_VERSION_PATCH));
  CHECK(!PYHOST_AT_LEAST_VERSION(PYHOST_VERSION_MAJOR, PYHOST_VERSION_MINOR, PYHOST_VERSION_PATCH + 1));
  CHECK(PYHOST_PY(3, 10) == 0x030A0000UL);
}

TEST_CASE(misuse_of_null_handles) {
  pyhost_value *v = (pyhost_value *)1;
  CHECK_RC(pyhost_exec(NULL, "x = 1", NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_exec_file(NULL, "x.py"), PYHOST_MISUSE);
  CHECK_RC(pyhost_eval(NULL, "1", &v), PYHOST_MISUSE);
  CHECK(v == NULL);
  CHECK_RC(pyhost_finalize(NULL), PYHOST_MISUSE);
  pyhost_free(NULL);
  CHECK_RC(pyhost_init(NULL, NULL), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(NULL), "NULL");
  CHECK(pyhost_python_version(NULL) == 0);
  CHECK_STREQ(pyhost_library_path(NULL), "");
  CHECK(pyhost_exit_code(NULL) == 0);
  CHECK(pyhost_value_repr(NULL, NULL) == NULL);
  CHECK_RC(pyhost_config_set_library(NULL, "x"), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_argv(NULL, 0, NULL), PYHOST_MISUSE);
  CHECK_RC(pyhost_config_set_min_python(NULL, 0), PYHOST_MISUSE);
  pyhost_config_free(NULL);
  pyhost_value_free(NULL);
}

TEST_CASE(failed_handle_answers_misuse) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent/libpython3.11.so.1.0");
  pyhost *h = NULL;
  CHECK_RC(pyhost_init(c, &h), PYHOST_NOTFOUND);
  CHECK(h != NULL);
  CHECK_CONTAINS(pyhost_errmsg(h), "/nonexistent/libpython3.11.so.1.0");
  pyhost_value *v = NULL;
  CHECK_RC(pyhost_eval(h, "1", &v), PYHOST_MISUSE);
  CHECK_CONTAINS(pyhost_errmsg(h), "failed to initialize");
  CHECK_RC(pyhost_finalize(h), PYHOST_MISUSE);
  CHECK(pyhost_python_version(h) == 0);
  pyhost_free(h);
  pyhost_config_free(c);
}

TEST_CASE(values_build_and_read) {
  pyhost_value *l = pyhost_value_list();
  CHECK_RC(pyhost_value_append(l, pyhost_value_int(INT64_MIN)), PYHOST_OK);
  CHECK_RC(pyhost_value_append(l, pyhost_value_str("a\0b", 3)), PYHOST_OK);
  CHECK_RC(pyhost_value_append(l, pyhost_value_bytes("\x00\xff", 2)), PYHOST_OK);
  pyhost_value *d = pyhost_value_dict();
  CHECK_RC(pyhost_value_set(d, pyhost_value_str("k", PYHOST_STRLEN), pyhost_value_float(2.5)), PYHOST_OK);
  CHECK_RC(pyhost_value_append(l, d), PYHOST_OK);
  CHECK(pyhost_value_count(l) == 4);
  CHECK(pyhost_value_kind(l) == PYHOST_KIND_LIST);
  int64_t i = 0;
  CHECK_RC(pyhost_value_to_int(NULL, pyhost_value_item(l, 0), &i), PYHOST_OK);
  CHECK(i == INT64_MIN);
  const char *s;
  size_t n;
  CHECK_RC(pyhost_value_to_str(NULL, pyhost_value_item(l, 1), &s, &n), PYHOST_OK);
  CHECK(n == 3 && memcmp(s, "a\0b", 3) == 0 && s[3] == '\0');
  const void *b;
  CHECK_RC(pyhost_value_to_bytes(NULL, pyhost_value_item(l, 2), &b, &n), PYHOST_OK);
  CHECK(n == 2 && ((const unsigned char *)b)[1] == 0xff);
  const pyhost_value *dd = pyhost_value_item(l, 3);
  CHECK(pyhost_value_count(dd) == 1);
  CHECK_RC(pyhost_value_to_str(NULL, pyhost_value_key(dd, 0), &s, &n), PYHOST_OK);
  CHECK_STREQ(s, "k");
  double x = 0;
  CHECK_RC(pyhost_value_to_float(NULL, pyhost_value_item(dd, 0), &x), PYHOST_OK);
  CHECK(x == 2.5);
  CHECK_RC(pyhost_value_to_float(NULL, pyhost_value_item(l, 0), &x), PYHOST_OK); /* int -> float */
  CHECK(pyhost_value_item(l, 4) == NULL);
  CHECK(pyhost_value_key(l, 0) == NULL);
  pyhost_value_free(l);
}

TEST_CASE(value_type_errors_name_both_types) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent.so");
  pyhost *h;
  pyhost_init(c, &h);
  pyhost_value *s = pyhost_value_str("x", 1);
  int64_t i;
  CHECK_RC(pyhost_value_to_int(h, s, &i), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "expected int, got str");
  int b;
  CHECK_RC(pyhost_value_to_bool(h, s, &b), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "expected bool, got str");
  CHECK_RC(pyhost_value_to_bool(h, NULL, &b), PYHOST_TYPE);
  CHECK_STREQ(pyhost_errmsg(h), "expected bool, got NoneType");
  CHECK_RC(pyhost_value_append(s, pyhost_value_none()), PYHOST_TYPE);
  CHECK_RC(pyhost_value_set(s, pyhost_value_none(), pyhost_value_none()), PYHOST_TYPE);
  pyhost_value_free(s);
  pyhost_free(h);
  pyhost_config_free(c);
}

TEST_CASE(long_messages_keep_start_and_end) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent.so");
  pyhost *h;
  pyhost_init(c, &h);
  size_t n = 200000;
  char *big = malloc(n);
  memset(big, 'x', n);
  memcpy(big, "START", 5);
  memcpy(big + n - 3, "END", 3);
  pyhost__set_message(h, big, n);
  const char *m = pyhost_errmsg(h);
  CHECK(strncmp(m, "START", 5) == 0);
  CHECK(strlen(m) < 70000);
  CHECK_CONTAINS(m, "bytes cut");
  CHECK(strcmp(m + strlen(m) - 3, "END") == 0);
  free(big);
  pyhost_free(h);
  pyhost_config_free(c);
}

/* The cut's boundary, exactly: PYHOST__MSG_MAX bytes are kept whole, one more is cut. */
TEST_CASE(long_messages_cut_past_the_limit_only) {
  pyhost_config *c = pyhost_config_new();
  pyhost_config_set_library(c, "/nonexistent.so");
  pyhost *h;
  pyhost_init(c, &h);
  char *big = malloc(PYHOST__MSG_MAX + 1);
  memset(big, 'y', PYHOST__MSG_MAX + 1);
  pyhost__set_message(h, big, PYHOST__MSG_MAX);
  CHECK(strlen(pyhost_errmsg(h)) == PYHOST__MSG_MAX);
  pyhost__set_message(h, big, PYHOST__MSG_MAX + 1);
  CHECK_CONTAINS(pyhost_errmsg(h), "[... 1 bytes cut ...]");
  char out[PYHOST__MSG_MAX + 64 + 1];
  CHECK(pyhost__cut_size(PYHOST__MSG_MAX) == PYHOST__MSG_MAX + 1);
  CHECK(pyhost__cut_text(out, big, PYHOST__MSG_MAX + 1) == strlen(out));
  CHECK(strlen(out) < pyhost__cut_size(PYHOST__MSG_MAX + 1));
  free(big);
  pyhost_free(h);
  pyhost_config_free(c);
}

TEST_CASE(strbuf_marks_truncation) {
  char small[8];
  pyhost__fmt(small, sizeof small, "%s", "0123456789");
  CHECK_STREQ(small, "0123...");
  pyhost__fmt(small, sizeof small, "%d", 42);
  CHECK_STREQ(small, "42");
}

TEST_CASE(widen_decodes_utf8_with_surrogateescape) {
  wchar_t *w = pyhost__widen("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  CHECK(w[0] == L'a' && w[1] == 0xE9 && w[2] == 0x20AC);
  if (sizeof(wchar_t) == 4) CHECK(w[3] == 0x1F600 && w[4] == 0);
  pyhost__free(w);
  w = pyhost__widen("\xff\xc3(");
  CHECK(w[0] == 0xDCFF && w[1] == 0xDCC3 && w[2] == L'(' && w[3] == 0);
  pyhost__free(w);
  w = pyhost__widen("\xed\xa0\x80"); /* an encoded surrogate is not UTF-8 */
  CHECK(w[0] == 0xDCED);
  pyhost__free(w);
}

TEST_CASE(out_of_memory_is_reported) {
  pyhost__alloc_fail_after(0);
  CHECK(pyhost_config_new() == NULL);
  pyhost *h = (pyhost *)1;
  CHECK_RC(pyhost_init(NULL, &h), PYHOST_NOMEM);
  CHECK(h == NULL);
  CHECK(pyhost_value_int(1) == NULL);
  CHECK(pyhost__alloc_fail_after(-1) == 3);
  pyhost_config *c = pyhost_config_new();
  pyhost__alloc_fail_after(0);
  CHECK_RC(pyhost_config_set_library(c, "x"), PYHOST_NOMEM);
  pyhost_value *l = pyhost_value_list();
  pyhost__alloc_fail_after(-1);
  CHECK(l == NULL);
  pyhost_config_free(c);
}
