/* error.c: turning a pending Python exception into a status and a message.
 *
 * Never PyErr_Print: it calls exit() for SystemExit.  The traceback is formatted by
 * the traceback module; if that fails (hostile code may have broken it), the message
 * falls back to "Type: str(value)", and then to the type name alone.
 */
#include "runtime.h"

#include <string.h>

void pyhost__type_name(PyObject *type, char *out, size_t cap) {
  /* held: a metaclass's __getattribute__ may drop the last other reference to type */
  PY.Py_IncRef(type);
  PyObject *mod = PY.PyObject_GetAttrString(type, "__module__");
  PyObject *qual = PY.PyObject_GetAttrString(type, "__qualname__");
  char *m = mod ? pyhost__utf8_copy(mod, NULL) : NULL;
  char *q = qual ? pyhost__utf8_copy(qual, NULL) : NULL;
  PY.PyErr_Clear();
  if (q && m && strcmp(m, "builtins") != 0) pyhost__fmt(out, cap, "%s.%s", m, q);
  else pyhost__fmt(out, cap, "%s", q ? q : "<unknown type>");
  pyhost__free(m);
  pyhost__free(q);
  PY.Py_DecRef(mod);
  PY.Py_DecRef(qual);
  PY.Py_DecRef(type);
}

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
  char *text = joined ? pyhost__utf8_copy(joined, len) : NULL;
  PY.Py_DecRef(joined);
  PY.Py_DecRef(empty);
  PY.Py_DecRef(lines);
  PY.Py_DecRef(fn);
  PY.Py_DecRef(mod);
  PY.PyErr_Clear();
  return text;
}

static void short_form(PyObject *type, PyObject *value, struct pyhost__strbuf *sb) {
  char name[256];
  pyhost__type_name(type, name, sizeof name);
  PyObject *s = value ? PY.PyObject_Str(value) : NULL;
  char *text = s ? pyhost__utf8_copy(s, NULL) : NULL;
  PY.PyErr_Clear();
  if (text && text[0]) pyhost__strbuf_printf(sb, "%s: %s", name, text);
  else pyhost__strbuf_printf(sb, "%s", name);
  pyhost__free(text);
  PY.Py_DecRef(s);
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
    PyObject *s = PY.PyObject_Str(code);
    char *text = s ? pyhost__utf8_copy(s, NULL) : NULL;
    PY.PyErr_Clear();
    pyhost__strbuf_printf(sb, "SystemExit: %s (exit code 1)", text ? text : "?");
    pyhost__free(text);
    PY.Py_DecRef(s);
    result = 1;
  }
  PY.Py_DecRef(code);
  return result;
}

static int take_exception(pyhost *h, const char *context);

/* The formatting below runs Python code: pyhost_interrupt must not stop it halfway. */
int pyhost__take_exception(pyhost *h, const char *context) {
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
      short_form(type, value, &sb);
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
  PY.Py_DecRef(type);
  PY.Py_DecRef(value);
  PY.Py_DecRef(tb);
  return status;
}
