/* wire.c: the encoding of the process level's messages (wire.h): values, error
 * records, the worker's config, and receiving whole messages from a channel.  Plain C:
 * no Python here, so the host encodes and decodes without taking the GIL. */
#include "wire.h"

#include <string.h>

/* ---- writing ---- */

static char *room(struct pyhost__wbuf *b, size_t n) {
  if (b->nomem) return NULL;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n) cap *= 2;
    char *p = pyhost__realloc(b->p, cap);
    if (!p) {
      b->nomem = 1;
      return NULL;
    }
    b->p = p;
    b->cap = cap;
  }
  char *at = b->p + b->len;
  b->len += n;
  return at;
}

static void put(struct pyhost__wbuf *b, const void *v, size_t n) {
  char *at = room(b, n);
  if (at && n) memcpy(at, v, n);
}

void pyhost__wbuf_start(struct pyhost__wbuf *b, int type) {
  b->len = 0;
  b->nomem = 0;
  pyhost__wbuf_u32(b, 0); /* the length, filled in by send */
  pyhost__wbuf_u8(b, (unsigned)type);
}

void pyhost__wbuf_u8(struct pyhost__wbuf *b, unsigned v) {
  unsigned char c = (unsigned char)v;
  put(b, &c, 1);
}

void pyhost__wbuf_u32(struct pyhost__wbuf *b, uint32_t v) {
  put(b, &v, sizeof v);
}

void pyhost__wbuf_i64(struct pyhost__wbuf *b, int64_t v) {
  put(b, &v, sizeof v);
}

void pyhost__wbuf_f64(struct pyhost__wbuf *b, double v) {
  put(b, &v, sizeof v);
}

void pyhost__wbuf_str(struct pyhost__wbuf *b, const char *s, size_t len) {
  if (!s) s = "", len = 0;
  if (len == PYHOST_STRLEN) len = strlen(s);
  if (len > PYHOST__WIRE_MAX) { /* cannot be sent: the reader would refuse it */
    b->nomem = 1;
    return;
  }
  pyhost__wbuf_u32(b, (uint32_t)len);
  put(b, s, len);
  pyhost__wbuf_u8(b, 0);
}

/* Value tags; TYPED is or-ed in when the value's Python type name follows. */
enum { V_NONE, V_FALSE, V_TRUE, V_INT, V_BIGINT, V_FLOAT, V_STR, V_BYTES, V_LIST, V_TUPLE, V_DICT };
#define V_TYPED 0x80u

static int put_value(struct pyhost__wbuf *b, const pyhost_value *v, int depth, char *why,
                     size_t cap) {
  if (!v) {
    pyhost__wbuf_u8(b, V_NONE);
    return 0;
  }
  if (depth > PYHOST__WIRE_DEPTH) {
    pyhost__fmt(why, cap, "a value nested deeper than %d levels", PYHOST__WIRE_DEPTH);
    return -1;
  }
  unsigned typed = v->type_name ? V_TYPED : 0;
  switch (v->kind) {
  case PYHOST_KIND_NONE: pyhost__wbuf_u8(b, V_NONE | typed); break;
  case PYHOST_KIND_BOOL: pyhost__wbuf_u8(b, (v->u.b ? V_TRUE : V_FALSE) | typed); break;
  case PYHOST_KIND_INT: pyhost__wbuf_u8(b, (v->big ? V_BIGINT : V_INT) | typed); break;
  case PYHOST_KIND_FLOAT: pyhost__wbuf_u8(b, V_FLOAT | typed); break;
  case PYHOST_KIND_STR: pyhost__wbuf_u8(b, V_STR | typed); break;
  case PYHOST_KIND_BYTES: pyhost__wbuf_u8(b, V_BYTES | typed); break;
  case PYHOST_KIND_LIST: pyhost__wbuf_u8(b, V_LIST | typed); break;
  case PYHOST_KIND_TUPLE: pyhost__wbuf_u8(b, V_TUPLE | typed); break;
  case PYHOST_KIND_DICT: pyhost__wbuf_u8(b, V_DICT | typed); break;
  default:
    pyhost__fmt(why, cap, "a %s object", pyhost_value_type_name(v));
    return -1;
  }
  if (typed) pyhost__wbuf_str(b, v->type_name, PYHOST_STRLEN);
  switch (v->kind) {
  case PYHOST_KIND_INT:
    if (v->big) pyhost__wbuf_str(b, v->u.s.p, v->u.s.len);
    else pyhost__wbuf_i64(b, v->u.i);
    break;
  case PYHOST_KIND_FLOAT: pyhost__wbuf_f64(b, v->u.d); break;
  case PYHOST_KIND_STR:
  case PYHOST_KIND_BYTES: pyhost__wbuf_str(b, v->u.s.p, v->u.s.len); break;
  case PYHOST_KIND_LIST:
  case PYHOST_KIND_TUPLE:
  case PYHOST_KIND_DICT: {
    size_t n = v->u.seq.n; /* a dict's items are its keys and values, in pairs */
    pyhost__wbuf_u32(b, (uint32_t)(v->kind == PYHOST_KIND_DICT ? n / 2 : n));
    for (size_t i = 0; i < n; i++)
      if (put_value(b, v->u.seq.items[i], depth + 1, why, cap) < 0) return -1;
    break;
  }
  default: break;
  }
  return 0;
}

int pyhost__wbuf_value(struct pyhost__wbuf *b, const pyhost_value *v, char *why, size_t cap) {
  return put_value(b, v, 0, why, cap);
}

void pyhost__wbuf_tuple(struct pyhost__wbuf *b, size_t n) {
  pyhost__wbuf_u8(b, V_TUPLE);
  pyhost__wbuf_u32(b, (uint32_t)n);
}

int pyhost__wbuf_arg(struct pyhost__wbuf *b, const pyhost_arg *a, char *why, size_t cap) {
  switch (a->kind) {
  case PYHOST_ARG_NONE: pyhost__wbuf_u8(b, V_NONE); return 0;
  case PYHOST_ARG_BOOL: pyhost__wbuf_u8(b, a->u.b ? V_TRUE : V_FALSE); return 0;
  case PYHOST_ARG_INT:
    pyhost__wbuf_u8(b, V_INT);
    pyhost__wbuf_i64(b, a->u.i);
    return 0;
  case PYHOST_ARG_FLOAT:
    pyhost__wbuf_u8(b, V_FLOAT);
    pyhost__wbuf_f64(b, a->u.d);
    return 0;
  case PYHOST_ARG_STR:
  case PYHOST_ARG_BYTES: {
    size_t len;
    if (pyhost__arg_text(a, &len) < 0) break;
    pyhost__wbuf_u8(b, a->kind == PYHOST_ARG_STR ? V_STR : V_BYTES);
    pyhost__wbuf_str(b, len ? a->u.s : "", len);
    return 0;
  }
  case PYHOST_ARG_VALUE: return put_value(b, a->u.v, 0, why, cap);
  default: break;
  }
  pyhost__arg_misuse(a, why, cap);
  return -1;
}

int pyhost__wbuf_send(struct pyhost__wbuf *b, struct pyhost__chan *c) {
  if (b->nomem || b->len < 5) return -1;
  uint32_t n = (uint32_t)(b->len - 4);
  memcpy(b->p, &n, sizeof n);
  return pyhost__chan_send(c, b->p, b->len);
}

void pyhost__wbuf_free(struct pyhost__wbuf *b) {
  pyhost__free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

void pyhost__wbuf_error(struct pyhost__wbuf *b, const struct pyhost__wire_error *e) {
  pyhost__wbuf_u8(b, (unsigned)e->status);
  if (e->message && (e->message_len || e->message[0])) {
    pyhost__wbuf_u8(b, PYHOST__WE_MESSAGE);
    pyhost__wbuf_str(b, e->message, e->message_len ? e->message_len : PYHOST_STRLEN);
  }
  if (e->has_exit_code) {
    pyhost__wbuf_u8(b, PYHOST__WE_EXIT_CODE);
    pyhost__wbuf_u32(b, 8);
    pyhost__wbuf_i64(b, e->exit_code);
    pyhost__wbuf_u8(b, 0);
  }
  if (e->exc_type && e->exc_type[0]) {
    pyhost__wbuf_u8(b, PYHOST__WE_EXC_TYPE);
    pyhost__wbuf_str(b, e->exc_type, PYHOST_STRLEN);
  }
  if (e->exc_text && e->exc_text[0]) {
    pyhost__wbuf_u8(b, PYHOST__WE_EXC_TEXT);
    pyhost__wbuf_str(b, e->exc_text, PYHOST_STRLEN);
  }
  for (size_t i = 0; i < e->nframes; i++) { /* a frame: its line, file NUL function */
    const struct pyhost__errframe *f = &e->frames[i];
    size_t nf = strlen(f->file), nn = strlen(f->function);
    int32_t line = f->line;
    pyhost__wbuf_u8(b, PYHOST__WE_FRAME);
    pyhost__wbuf_u32(b, (uint32_t)(sizeof line + nf + 1 + nn));
    put(b, &line, sizeof line);
    put(b, f->file, nf + 1);
    put(b, f->function, nn);
    pyhost__wbuf_u8(b, 0);
  }
  pyhost__wbuf_u8(b, PYHOST__WE_END);
}

void pyhost__wbuf_error_of(struct pyhost__wbuf *b, const pyhost *h, int status) {
  struct pyhost__wire_error e;
  struct pyhost__errframe small[32], *frames = small;
  memset(&e, 0, sizeof e);
  e.status = status;
  e.message = pyhost_errmsg(h);
  if (status == PYHOST_EXIT) {
    e.has_exit_code = 1;
    e.exit_code = pyhost_exit_code(h);
  }
  e.exc_type = pyhost_errtype(h);
  e.exc_text = e.exc_type[0] ? pyhost_errtext(h) : "";
  size_t n = pyhost_errframe_count(h);
  if (n > sizeof small / sizeof small[0] && !(frames = pyhost__calloc(n, sizeof *frames))) n = 0;
  for (size_t i = 0; i < n; i++)
    if (pyhost_errframe(h, i, &frames[i].file, &frames[i].line, &frames[i].function) != PYHOST_OK)
      n = i;
  e.frames = frames;
  e.nframes = n;
  pyhost__wbuf_error(b, &e);
  if (frames != small) pyhost__free(frames);
}

void pyhost__exc_snapshot(const pyhost *h, struct pyhost__excdata *d) {
  memset(d, 0, sizeof *d);
  const char *type = pyhost_errtype(h);
  if (!type[0]) return;
  struct pyhost__excbuild b;
  pyhost__excbuild_init(&b);
  b.type = pyhost__excbuild_str(&b, type, strlen(type));
  const char *text = pyhost_errtext(h);
  b.text = pyhost__excbuild_text(&b, text, strlen(text));
  for (size_t i = 0, n = pyhost_errframe_count(h); i < n; i++) {
    const char *file = "", *function = "";
    int line = 0;
    if (pyhost_errframe(h, i, &file, &line, &function) != PYHOST_OK) break;
    size_t fi = pyhost__excbuild_str(&b, file, strlen(file));
    pyhost__excbuild_frame(&b, fi, pyhost__excbuild_str(&b, function, strlen(function)), line);
  }
  pyhost__excbuild_finish(&b, d);
}

/* ---- reading ---- */

static const char *take(struct pyhost__rbuf *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
    return NULL;
  }
  const char *at = r->p;
  r->p += n;
  return at;
}

unsigned pyhost__rbuf_u8(struct pyhost__rbuf *r) {
  const char *at = take(r, 1);
  return at ? (unsigned char)*at : 0;
}

uint32_t pyhost__rbuf_u32(struct pyhost__rbuf *r) {
  uint32_t v = 0;
  const char *at = take(r, sizeof v);
  if (at) memcpy(&v, at, sizeof v);
  return v;
}

int64_t pyhost__rbuf_i64(struct pyhost__rbuf *r) {
  int64_t v = 0;
  const char *at = take(r, sizeof v);
  if (at) memcpy(&v, at, sizeof v);
  return v;
}

double pyhost__rbuf_f64(struct pyhost__rbuf *r) {
  double v = 0;
  const char *at = take(r, sizeof v);
  if (at) memcpy(&v, at, sizeof v);
  return v;
}

const char *pyhost__rbuf_str(struct pyhost__rbuf *r, size_t *len) {
  uint32_t n = pyhost__rbuf_u32(r);
  const char *at = r->bad ? NULL : take(r, (size_t)n + 1);
  if (!at || at[n] != '\0') {
    r->bad = 1;
    if (len) *len = 0;
    return "";
  }
  if (len) *len = n;
  return at;
}

static pyhost_value *get_value(struct pyhost__rbuf *r, int depth) {
  unsigned tag = pyhost__rbuf_u8(r);
  if (r->bad || depth > PYHOST__WIRE_DEPTH) {
    r->bad = 1;
    return NULL;
  }
  const char *type_name = tag & V_TYPED ? pyhost__rbuf_str(r, NULL) : NULL;
  pyhost_value *v = NULL;
  size_t len;
  const char *s;
  switch (tag & ~V_TYPED) {
  case V_NONE: v = pyhost_value_none(); break;
  case V_FALSE: v = pyhost_value_bool(0); break;
  case V_TRUE: v = pyhost_value_bool(1); break;
  case V_INT: {
    int64_t i = pyhost__rbuf_i64(r);
    if (!r->bad) v = pyhost_value_int(i);
    break;
  }
  case V_BIGINT:
    s = pyhost__rbuf_str(r, &len);
    if (r->bad || !(v = pyhost__value_new(PYHOST_KIND_INT))) break;
    v->big = 1;
    if (!(v->u.s.p = pyhost__memdup(s, len))) {
      pyhost__free(v);
      v = NULL;
      break;
    }
    v->u.s.len = len;
    break;
  case V_FLOAT: {
    double d = pyhost__rbuf_f64(r);
    if (!r->bad) v = pyhost_value_float(d);
    break;
  }
  case V_STR:
  case V_BYTES:
    s = pyhost__rbuf_str(r, &len);
    if (!r->bad)
      v = (tag & ~V_TYPED) == V_STR ? pyhost_value_str(s, len) : pyhost_value_bytes(s, len);
    break;
  case V_LIST:
  case V_TUPLE:
  case V_DICT: {
    uint32_t n = pyhost__rbuf_u32(r);
    unsigned k = tag & ~V_TYPED;
    size_t items = k == V_DICT ? (size_t)n * 2 : n;
    /* each item takes at least one byte: a count beyond the message is a lie */
    if (r->bad || items > (size_t)(r->end - r->p)) {
      r->bad = 1;
      break;
    }
    v = k == V_LIST ? pyhost_value_list() : k == V_TUPLE ? pyhost_value_tuple() : pyhost_value_dict();
    for (size_t i = 0; v && i < items; i++) {
      pyhost_value *item = get_value(r, depth + 1);
      if (!item || pyhost__value_push(v, item) < 0) {
        pyhost_value_free(item);
        pyhost_value_free(v);
        v = NULL;
      }
    }
    break;
  }
  default: r->bad = 1; break;
  }
  if (v && type_name && !(v->type_name = pyhost__strdup(type_name))) {
    pyhost_value_free(v);
    v = NULL;
  }
  if (r->bad && v) {
    pyhost_value_free(v);
    v = NULL;
  }
  return v;
}

pyhost_value *pyhost__rbuf_value(struct pyhost__rbuf *r) {
  return get_value(r, 0);
}

static int skip_value(struct pyhost__rbuf *r, int depth) {
  unsigned tag = pyhost__rbuf_u8(r);
  if (r->bad || depth > PYHOST__WIRE_DEPTH) return r->bad = 1, -1;
  if (tag & V_TYPED) pyhost__rbuf_str(r, NULL);
  switch (tag & ~V_TYPED) {
  case V_NONE:
  case V_FALSE:
  case V_TRUE: break;
  case V_INT: pyhost__rbuf_i64(r); break;
  case V_FLOAT: pyhost__rbuf_f64(r); break;
  case V_BIGINT:
  case V_STR:
  case V_BYTES: pyhost__rbuf_str(r, NULL); break;
  case V_LIST:
  case V_TUPLE:
  case V_DICT: {
    uint32_t n = pyhost__rbuf_u32(r);
    size_t items = (tag & ~V_TYPED) == V_DICT ? (size_t)n * 2 : n;
    for (size_t i = 0; !r->bad && i < items; i++) skip_value(r, depth + 1);
    break;
  }
  default: r->bad = 1; break;
  }
  return r->bad ? -1 : 0;
}

int pyhost__rbuf_skip_value(struct pyhost__rbuf *r) {
  return skip_value(r, 0);
}

void pyhost__rbuf_error(struct pyhost__rbuf *r, struct pyhost__wire_error *e,
                        struct pyhost__excbuild *frames) {
  memset(e, 0, sizeof *e);
  e->message = e->exc_type = e->exc_text = "";
  e->status = (int)pyhost__rbuf_u8(r);
  for (;;) {
    unsigned tag = pyhost__rbuf_u8(r);
    if (r->bad || tag == PYHOST__WE_END) break;
    size_t len;
    const char *s = pyhost__rbuf_str(r, &len); /* every field is a string of bytes */
    switch (tag) {
    case PYHOST__WE_MESSAGE:
      e->message = s;
      e->message_len = len;
      break;
    case PYHOST__WE_EXIT_CODE:
      if (len == sizeof(int64_t)) {
        memcpy(&e->exit_code, s, sizeof e->exit_code);
        e->has_exit_code = 1;
      }
      break;
    case PYHOST__WE_EXC_TYPE: e->exc_type = s; break;
    case PYHOST__WE_EXC_TEXT: e->exc_text = s; break;
    case PYHOST__WE_FRAME: {
      int32_t line;
      const char *file = s + sizeof line;
      const char *z = len > sizeof line ? memchr(file, 0, len - sizeof line) : NULL;
      size_t nf = z ? (size_t)(z - file) : 0;
      if (!z) { /* no NUL between file and function */
        r->bad = 1;
        break;
      }
      memcpy(&line, s, sizeof line);
      if (frames) {
        size_t fi = pyhost__excbuild_str(frames, file, nf);
        const char *function = file + nf + 1;
        size_t fn = pyhost__excbuild_str(frames, function, len - sizeof line - nf - 1);
        pyhost__excbuild_frame(frames, fi, fn, (int)line);
      }
      break;
    }
    default: break; /* a field of a later version */
    }
  }
}

int pyhost__rbuf_error_to(struct pyhost__rbuf *r, pyhost *h) {
  struct pyhost__wire_error e;
  struct pyhost__excbuild b;
  pyhost__excbuild_init(&b);
  pyhost__rbuf_error(r, &e, &b);
  if (r->bad || e.status == PYHOST_OK) {
    struct pyhost__excdata d;
    pyhost__excbuild_finish(&b, &d);
    pyhost__excdata_free(&d);
    return -1;
  }
  if (e.has_exit_code) h->exit_code = (int)e.exit_code;
  pyhost__set_message(h, e.message, e.message_len);
  struct pyhost__excdata d;
  b.type = pyhost__excbuild_str(&b, e.exc_type, strlen(e.exc_type));
  b.text = pyhost__excbuild_text(&b, e.exc_text, strlen(e.exc_text));
  pyhost__excbuild_finish(&b, &d);
  if (e.exc_type[0]) pyhost__set_exception(h, &d); /* takes d */
  else pyhost__excdata_free(&d);
  return e.status;
}

/* ---- receiving ---- */

int pyhost__wire_recv(struct pyhost__wire_in *in, struct pyhost__chan *c, int64_t deadline,
                      int *type, struct pyhost__rbuf *msg) {
  in->start += in->taken;
  in->taken = 0;
  for (;;) {
    size_t have = in->end - in->start;
    if (have >= 4) {
      uint32_t n;
      memcpy(&n, in->buf + in->start, sizeof n);
      if (n < 1 || n > PYHOST__WIRE_MAX) return PYHOST__WIRE_BAD;
      if (have >= (size_t)n + 4) {
        *type = (unsigned char)in->buf[in->start + 4];
        msg->p = in->buf + in->start + 5;
        msg->end = in->buf + in->start + 4 + n;
        msg->bad = 0;
        in->taken = (size_t)n + 4;
        return PYHOST__WIRE_OK;
      }
      if ((size_t)n + 4 > in->cap) { /* grow to hold it whole */
        size_t cap = in->cap;
        while (cap < (size_t)n + 4) cap *= 2;
        char *b = pyhost__malloc(cap);
        if (!b) return PYHOST__WIRE_NOMEM;
        memcpy(b, in->buf + in->start, have);
        pyhost__free(in->buf);
        in->buf = b;
        in->cap = cap;
        in->start = 0;
        in->end = have;
      }
    }
    if (!in->buf) {
      if (!(in->buf = pyhost__malloc(in->cap = 65536))) return PYHOST__WIRE_NOMEM;
      in->start = in->end = 0;
    }
    if (in->start > 0 && (in->end == in->cap || in->start == in->end)) {
      memmove(in->buf, in->buf + in->start, in->end - in->start); /* room at the end */
      in->end -= in->start;
      in->start = 0;
    }
    long got = pyhost__chan_recv(c, in->buf + in->end, in->cap - in->end, deadline);
    if (got == PYHOST__CHAN_TIMEOUT) return PYHOST__WIRE_TIMEOUT;
    if (got == 0) return PYHOST__WIRE_EOF;
    if (got < 0) return PYHOST__WIRE_IOERR;
    in->end += (size_t)got;
  }
}

void pyhost__wire_in_free(struct pyhost__wire_in *in) {
  pyhost__free(in->buf);
  memset(in, 0, sizeof *in);
}

/* ---- the config ---- */

/* One source of truth: a field added to pyhost_config (core.h) must be sent to the
 * worker below too.  This copy of its fields fails the build until it is. */
struct config_fields {
  char *library, *home, *program_name;
  char *executable;
  char **sys_path;
  size_t n_sys_path;
  char **argv;
  int argc;
  unsigned long min_python;
  unsigned flags;
  char *interpreter;
  unsigned long max_python, python_minor;
  int prefer_newest, allow_debug, no_subprocess, isolated;
};
_Static_assert(sizeof(struct pyhost_config) == sizeof(struct config_fields),
               "pyhost_config changed: send the new field to the worker (wire.c)");

void pyhost__wbuf_config(struct pyhost__wbuf *b, const pyhost_config *cfg) {
  pyhost__wbuf_str(b, cfg->library, PYHOST_STRLEN);
  pyhost__wbuf_str(b, cfg->home, PYHOST_STRLEN);
  pyhost__wbuf_str(b, cfg->program_name, PYHOST_STRLEN);
  pyhost__wbuf_str(b, cfg->interpreter, PYHOST_STRLEN);
  pyhost__wbuf_str(b, cfg->executable, PYHOST_STRLEN);
  pyhost__wbuf_u32(b, (uint32_t)cfg->n_sys_path);
  for (size_t i = 0; i < cfg->n_sys_path; i++) pyhost__wbuf_str(b, cfg->sys_path[i], PYHOST_STRLEN);
  pyhost__wbuf_u32(b, (uint32_t)(cfg->argc > 0 ? cfg->argc : 0));
  for (int i = 0; i < cfg->argc; i++) pyhost__wbuf_str(b, cfg->argv[i], PYHOST_STRLEN);
  pyhost__wbuf_i64(b, (int64_t)cfg->min_python);
  pyhost__wbuf_i64(b, (int64_t)cfg->max_python);
  pyhost__wbuf_i64(b, (int64_t)cfg->python_minor);
  pyhost__wbuf_u32(b, cfg->flags);
  pyhost__wbuf_u8(b, (unsigned)(cfg->prefer_newest != 0) | (unsigned)(cfg->allow_debug != 0) << 1 |
                         (unsigned)(cfg->no_subprocess != 0) << 2 | (unsigned)(cfg->isolated != 0) << 3);
}

pyhost_config *pyhost__rbuf_config(struct pyhost__rbuf *r) {
  pyhost_config *c = pyhost_config_new();
  if (!c) return NULL;
  const char *s[5];
  for (int i = 0; i < 5; i++) s[i] = pyhost__rbuf_str(r, NULL);
  int rc = PYHOST_OK;
  if (s[0][0]) rc |= pyhost_config_set_library(c, s[0]);
  if (s[1][0]) rc |= pyhost_config_set_home(c, s[1]);
  if (s[2][0]) rc |= pyhost_config_set_program_name(c, s[2]);
  if (s[3][0]) rc |= pyhost_config_set_interpreter(c, s[3]);
  if (s[4][0]) rc |= pyhost_config_set_executable(c, s[4]);
  uint32_t n = pyhost__rbuf_u32(r);
  for (uint32_t i = 0; !r->bad && i < n; i++) rc |= pyhost_config_add_sys_path(c, pyhost__rbuf_str(r, NULL));
  uint32_t argc = pyhost__rbuf_u32(r);
  if (!r->bad && argc && argc < (uint32_t)(r->end - r->p)) {
    const char **argv = pyhost__calloc(argc, sizeof *argv);
    if (!argv) rc |= PYHOST_NOMEM;
    for (uint32_t i = 0; argv && i < argc; i++) argv[i] = pyhost__rbuf_str(r, NULL);
    if (argv && !r->bad) rc |= pyhost_config_set_argv(c, (int)argc, argv);
    pyhost__free((void *)argv);
  } else if (argc) {
    r->bad = 1;
  }
  rc |= pyhost_config_set_min_python(c, (unsigned long)pyhost__rbuf_i64(r));
  rc |= pyhost_config_set_max_python(c, (unsigned long)pyhost__rbuf_i64(r));
  rc |= pyhost_config_set_python_minor(c, (unsigned long)pyhost__rbuf_i64(r));
  rc |= pyhost_config_set_flags(c, pyhost__rbuf_u32(r));
  unsigned bits = pyhost__rbuf_u8(r);
  rc |= pyhost_config_set_prefer_newest(c, bits & 1);
  rc |= pyhost_config_set_allow_debug(c, (bits >> 1) & 1);
  rc |= pyhost_config_set_no_subprocess(c, (bits >> 2) & 1);
  rc |= pyhost_config_set_isolated(c, (bits >> 3) & 1);
  if (rc != PYHOST_OK || r->bad) {
    pyhost_config_free(c);
    return NULL;
  }
  return c;
}
