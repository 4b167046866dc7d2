/* error.c: turning a pending Python exception into a status, a message and the
 * exception as data (pyhost_errtype, pyhost_errtext, pyhost_errframe).
 *
 * Never PyErr_Print: it calls exit() for SystemExit.  The traceback is formatted by
 * the traceback module; if that fails (hostile code may have broken it), the message
 * falls back to "Type: str(value)", and then to the type name alone.  The data is read
 * from the objects themselves, never from the text: the type's __module__ and
 * __qualname__, str(value), and the traceback's own frames.
 *
 * Reading an exception runs its Python code (__str__, a metaclass's __getattribute__,
 * a __module__ property), which may raise anything, KeyboardInterrupt included.  Each
 * step here that can run Python code clears what it raised before the next begins, and
 * a helper that may be called with an exception pending sets it aside meanwhile: no
 * Python API is called with an exception set (debug builds assert it), and none is
 * left set for the host's next call.
 */
#include "runtime.h"

#include <limits.h>
#include <string.h>

/* ---- reading Python objects without leaving an exception set ---- */

/* The UTF-8 text of s (own) when s is a str, lone surrogates written as \udcxx (as
 * Python writes them to stderr); NULL otherwise.  Runs no Python code. */
static char *text_of(PyObject *s, size_t *len) {
  if (!s || !(PY.PyType_GetFlags(Py_TYPE(s)) & Py_TPFLAGS_UNICODE_SUBCLASS)) return NULL;
  char *t = pyhost__utf8_copy(s, len);
  if (t) return t;
  PY.PyErr_Clear();
  /* str.encode itself, never a subclass's own */
  PyObject *encode = PY.PyObject_GetAttrString((PyObject *)PY.PyUnicode_Type, "encode");
  PyObject *utf8 = encode ? PY.PyUnicode_FromString("utf-8") : NULL;
  PyObject *how = utf8 ? PY.PyUnicode_FromString("backslashreplace") : NULL;
  PyObject *bytes = how ? PY.PyObject_CallFunctionObjArgs(encode, s, utf8, how, NULL) : NULL;
  char *p;
  Py_ssize_t n;
  if (bytes && PY.PyBytes_AsStringAndSize(bytes, &p, &n) == 0 && (t = pyhost__memdup(p, (size_t)n)))
    if (len) *len = (size_t)n;
  PY.PyErr_Clear();
  PY.Py_DecRef(bytes);
  PY.Py_DecRef(how);
  PY.Py_DecRef(utf8);
  PY.Py_DecRef(encode);
  return t;
}

/* obj.name's text (own), or NULL when it is missing or no str. */
static char *attr_text(PyObject *obj, const char *name, size_t *len) {
  PyObject *a = PY.PyObject_GetAttrString(obj, name);
  if (!a) PY.PyErr_Clear();
  char *t = text_of(a, len);
  PY.Py_DecRef(a);
  return t;
}

/* str(o)'s text (own), or NULL when str() fails. */
static char *str_text(PyObject *o, size_t *len) {
  PyObject *s = PY.PyObject_Str(o);
  if (!s) PY.PyErr_Clear();
  char *t = text_of(s, len);
  PY.Py_DecRef(s);
  return t;
}

/* obj.name as an int: 0 when it is missing, not an int, or beyond an int. */
static int attr_int(PyObject *obj, const char *name) {
  PyObject *a = PY.PyObject_GetAttrString(obj, name);
  int r = 0;
  if (a && (PY.PyType_GetFlags(Py_TYPE(a)) & Py_TPFLAGS_LONG_SUBCLASS)) {
    int overflow = 0;
    long long v = PY.PyLong_AsLongLongAndOverflow(a, &overflow); /* an int: no Python code */
    if (!overflow && v >= INT_MIN && v <= INT_MAX) r = (int)v;
  }
  PY.PyErr_Clear();
  PY.Py_DecRef(a);
  return r;
}

/* ---- type names ---- */

/* A type's __module__ and __qualname__ (own; NULL when unreadable). */
struct type_parts {
  char *module, *qualname;
};

static void type_parts_read(PyObject *type, struct type_parts *p) {
  /* held: a metaclass's __getattribute__ may drop the last other reference to type */
  PY.Py_IncRef(type);
  p->module = attr_text(type, "__module__", NULL);
  p->qualname = attr_text(type, "__qualname__", NULL);
  PY.Py_DecRef(type);
}

static void type_parts_free(struct type_parts *p) {
  pyhost__free(p->module);
  pyhost__free(p->qualname);
}

/* "module.qualname", or the qualname alone for builtins and for the module `also`
 * (NULL: none). */
static void type_parts_format(const struct type_parts *p, const char *also, char *out, size_t cap) {
  const char *m = p->module;
  if (p->qualname && m && strcmp(m, "builtins") != 0 && !(also && strcmp(m, also) == 0))
    pyhost__fmt(out, cap, "%s.%s", m, p->qualname);
  else pyhost__fmt(out, cap, "%s", p->qualname ? p->qualname : "<unknown type>");
}

void pyhost__type_name(PyObject *type, char *out, size_t cap) {
  PYHOST__ASSERT_GIL();
  /* callers may hold a pending exception of their own: it waits meanwhile */
  PyObject *et, *ev, *etb;
  PY.PyErr_Fetch(&et, &ev, &etb);
  struct type_parts p;
  type_parts_read(type, &p);
  type_parts_format(&p, NULL, out, cap);
  type_parts_free(&p);
  PY.PyErr_Restore(et, ev, etb);
}

/* ---- the message ---- */

/* traceback.format_exception(type, value, tb) joined; own result or NULL. */
static char *format_traceback(PyObject *type, PyObject *value, PyObject *tb, size_t *len) {
  PyObject *mod = PY.PyImport_ImportModule("traceback");
  PyObject *fn = mod ? PY.PyObject_GetAttrString(mod, "format_exception") : NULL;
  PyObject *none = PY._Py_NoneStruct;
  PyObject *lines = fn ? PY.PyObject_CallFunctionObjArgs(fn, type, value ? value : none,
                                                         tb ? tb : none, NULL)
                       : NULL;
  PyObject *empty = lines ? PY.PyUnicode_FromString("") : NULL;
  PyObject *joined = empty ? PY.PyUnicode_Join(empty, lines) : NULL;
  PY.PyErr_Clear();
  char *text = text_of(joined, len);
  PY.Py_DecRef(joined);
  PY.Py_DecRef(empty);
  PY.Py_DecRef(lines);
  PY.Py_DecRef(fn);
  PY.Py_DecRef(mod);
  PY.PyErr_Clear();
  return text;
}

static void short_form(const struct type_parts *type, const char *text, struct pyhost__strbuf *sb) {
  char name[256];
  type_parts_format(type, NULL, name, sizeof name);
  if (text && text[0]) pyhost__strbuf_printf(sb, "%s: %s", name, text);
  else pyhost__strbuf_printf(sb, "%s", name);
}

/* SystemExit.code as Python's own exit handling reads it. */
static int exit_code_of(PyObject *value, struct pyhost__strbuf *sb) {
  PyObject *code = value ? PY.PyObject_GetAttrString(value, "code") : NULL;
  PY.PyErr_Clear();
  int result = 0;
  if (!code || code == PY._Py_NoneStruct) {
    pyhost__strbuf_printf(sb, "SystemExit: exit code 0");
  } else if (PY.PyType_GetFlags(Py_TYPE(code)) & Py_TPFLAGS_LONG_SUBCLASS) {
    int overflow = 0;
    long long c = PY.PyLong_AsLongLongAndOverflow(code, &overflow);
    PY.PyErr_Clear();
    result = overflow ? -1 : (int)c;
    pyhost__strbuf_printf(sb, "SystemExit: exit code %d", result);
  } else {
    char *text = str_text(code, NULL);
    pyhost__strbuf_printf(sb, "SystemExit: %s (exit code 1)", text ? text : "?");
    pyhost__free(text);
    result = 1;
  }
  PY.Py_DecRef(code);
  return result;
}

/* ---- the data ---- */

/* The frames of traceback tb, outermost first (as traceback.extract_tb lists them):
 * file and function from the frame's code object, the line from the entry. */
static void gather_frames(struct pyhost__excbuild *b, PyObject *tb) {
  /* the strings of the last few code objects, for a recursion's repeated frames; each
   * held, so that its address is not another code object's meanwhile */
  enum { SEEN = 4 };
  struct {
    PyObject *code;
    size_t file, function;
  } seen[SEEN] = {{NULL, 0, 0}};
  size_t next_seen = 0;
  PyObject *none = PY._Py_NoneStruct;
  PyObject *entry = tb;
  PY.Py_IncRef(entry);
  while (entry && entry != none && !b->failed) {
    PyObject *frame = PY.PyObject_GetAttrString(entry, "tb_frame");
    PyObject *code = frame ? PY.PyObject_GetAttrString(frame, "f_code") : NULL;
    PY.PyErr_Clear();
    if (code) {
      size_t i = 0;
      while (i < SEEN && seen[i].code != code) i++;
      if (i == SEEN) {
        i = next_seen++ % SEEN;
        PY.Py_DecRef(seen[i].code);
        PY.Py_IncRef(code);
        seen[i].code = code;
        size_t n = 0;
        char *t = attr_text(code, "co_filename", &n);
        seen[i].file = t ? pyhost__excbuild_str(b, t, n) : 0;
        pyhost__free(t);
        t = attr_text(code, "co_name", &n);
        seen[i].function = t ? pyhost__excbuild_str(b, t, n) : 0;
        pyhost__free(t);
      }
      pyhost__excbuild_frame(b, seen[i].file, seen[i].function, attr_int(entry, "tb_lineno"));
    }
    PyObject *next = PY.PyObject_GetAttrString(entry, "tb_next");
    PY.PyErr_Clear();
    PY.Py_DecRef(code);
    PY.Py_DecRef(frame);
    PY.Py_DecRef(entry);
    entry = next;
  }
  PY.Py_DecRef(entry);
  for (size_t i = 0; i < SEEN; i++) PY.Py_DecRef(seen[i].code);
}

/* A SyntaxError's own place, innermost: its file and line, no function. */
static void gather_syntax_place(struct pyhost__excbuild *b, PyObject *value) {
  size_t n = 0;
  char *file = attr_text(value, "filename", &n);
  int line = attr_int(value, "lineno");
  if (file || line) pyhost__excbuild_frame(b, file ? pyhost__excbuild_str(b, file, n) : 0, 0, line);
  pyhost__free(file);
}

/* The exception as data: its type as Python's traceback names it, its text (a
 * SyntaxError's msg alone: its place is a frame), and its frames unless a host callback
 * runs on this thread (the exception goes back into Python, whose caller gathers
 * them where it leaves pyhost, as the message's traceback). */
static void gather(struct pyhost__excdata *d, const struct type_parts *parts, PyObject *type,
                   PyObject *value, PyObject *tb, const char *str, size_t str_len) {
  struct pyhost__excbuild b;
  pyhost__excbuild_init(&b);
  char name[512];
  type_parts_format(parts, "__main__", name, sizeof name);
  b.type = pyhost__excbuild_str(&b, name, strlen(name));
  int syntax = value && PY.PyErr_GivenExceptionMatches(type, *PY.PyExc_SyntaxError);
  size_t msg_len = 0;
  char *msg = syntax ? attr_text(value, "msg", &msg_len) : NULL;
  static const char failed[] = "<exception str() failed>";
  if (msg) b.text = pyhost__excbuild_text(&b, msg, msg_len);
  else if (str) b.text = pyhost__excbuild_text(&b, str, str_len);
  else if (value) b.text = pyhost__excbuild_str(&b, failed, sizeof failed - 1);
  pyhost__free(msg);
  if (!pyhost__thread.frame) {
    if (tb) gather_frames(&b, tb);
    if (syntax) gather_syntax_place(&b, value);
  }
  pyhost__excbuild_finish(&b, d);
}

/* ---- taking the exception ---- */

static int take_exception(pyhost *h, const char *context);

/* The formatting below runs Python code: pyhost_interrupt must not stop it halfway. */
int pyhost__take_exception(pyhost *h, const char *context) {
  PYHOST__ASSERT_GIL();
  pyhost__inflight_protect(1);
  int status = take_exception(h, context);
  pyhost__inflight_protect(0);
  return status;
}

static int take_exception(pyhost *h, const char *context) {
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  PY.PyErr_Fetch(&type, &value, &tb);
  if (!type) return pyhost__set_error(h, PYHOST_ERROR, "%s: failed without a Python exception",
                                      context ? context : "Python");
  PY.PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PY.PyException_SetTraceback(value, tb);
  pyhost__callback_keep(type, value, tb);

  struct type_parts parts;
  type_parts_read(type, &parts);
  size_t str_len = 0;
  char *str = value ? str_text(value, &str_len) : NULL;
  struct pyhost__excdata data;
  gather(&data, &parts, type, value, tb, str, str_len);

  char head[4096];
  struct pyhost__strbuf sb;
  pyhost__strbuf_init(&sb, head, sizeof head);
  if (context) pyhost__strbuf_printf(&sb, "%s: ", context);
  size_t context_end = sb.len;
  int status = PYHOST_PYEXC;
  char *text = NULL;
  size_t len = 0;
  if (PY.PyErr_GivenExceptionMatches(type, *PY.PyExc_SystemExit)) {
    status = PYHOST_EXIT;
    h->exit_code = exit_code_of(value, &sb);
  } else {
    if (pyhost__is_interrupt(type)) {
      status = PYHOST_INTERRUPTED;
      pyhost__strbuf_printf(&sb, "interrupted by pyhost_interrupt; ");
    }
    /* Inside a host callback the exception goes back into Python (the frame keeps it,
     * traceback and all), so the traceback is formatted once, where the error leaves
     * pyhost for the host: formatting at every level made unwinding a deep recursion
     * through host functions quadratic, with interrupts held off. */
    if (pyhost__thread.frame || !(text = format_traceback(type, value, tb, &len)))
      short_form(&parts, str, &sb);
  }
  /* a SyntaxError's '  File "...", line N' (no "Traceback" line above it) starts on a
   * line of its own, not run onto the context's */
  if (text && context && context_end >= 2 && context_end <= sb.len && text[0] == ' ')
    head[context_end - 1] = '\n';
  if (text) {
    size_t total = sb.len + len;
    char *all = pyhost__malloc(total + 1);
    if (all) {
      memcpy(all, head, sb.len);
      memcpy(all + sb.len, text, len);
      /* format_exception ends with a newline; a message does not */
      while (total && all[total - 1] == '\n') total--;
      pyhost__set_message(h, all, total);
    } else {
      pyhost__set_message(h, text, len);
    }
    pyhost__free(all);
    pyhost__free(text);
  } else {
    pyhost__set_message(h, head, sb.len);
  }
  pyhost__set_exception(h, &data);
  pyhost__free(str);
  type_parts_free(&parts);
  PY.Py_DecRef(type);
  PY.Py_DecRef(value);
  PY.Py_DecRef(tb);
  PY.PyErr_Clear(); /* a destructor run by the drops above may raise; nothing stays set */
  return status;
}
