/* wire.h: the protocol between a host and the worker of a process-level plugin
 * (plugin_proc.c on the host's side, worker.c on the worker's), and its encoding of
 * values (wire.c).  Both ends are built from one source tree (the worker says its
 * protocol version first), on one machine: numbers travel in the machine's own byte
 * order.
 *
 * A message is a u32 length (of what follows), a u8 type and the type's fields.
 * Strings are a u32 length, the bytes and a NUL (so a reader hands them out in
 * place).  docs/plugins.md ("Isolation") describes the exchange; in short:
 *
 *   worker -> host  HELLO   magic, version, pyhost version string       (unasked, first)
 *   host -> worker  START   tree, the worker's Python (a config), the plugin's
 *                           path, the host's modules, options
 *   worker -> host  LOADING (unasked, during START: its Python is up, the plugin's own
 *                           code runs next; the start's wall-clock limit counts from here)
 *   host -> worker  CALL / CALLF / HAS_HOOK / HOOKS / RELOAD / SYNC     (tree first)
 *   worker -> host  CALLBACK  module, function, args, kwargs: a host function called
 *                           during a request; the host answers with a REPLY, and may
 *                           send requests of its own first (nested calls)
 *   either way      REPLY   status, then the request's result or an error record
 *   host -> worker  EXIT    (the worker flushes its output and ends)
 *
 * A request carries the id of the host's outermost call (its "tree"): an interrupt,
 * sent on the control channel with that id, is dropped by the worker unless that
 * call is still running there.
 */
#ifndef PYHOST_WIRE_H
#define PYHOST_WIRE_H

#include "internal.h"

#define PYHOST__WIRE_MAGIC 0x70796877u /* "pyhw" */
#define PYHOST__WIRE_VERSION 1u
/* A message longer than this is the sign of a broken peer, not data. */
#define PYHOST__WIRE_MAX ((size_t)1 << 30)
/* How deeply values may nest on the wire (a recursive reader's stack). */
#define PYHOST__WIRE_DEPTH 1000

enum pyhost__wire_type {
  PYHOST__W_HELLO = 1,
  PYHOST__W_START = 2,
  PYHOST__W_CALL = 3,
  PYHOST__W_CALLF = 4,
  PYHOST__W_HAS_HOOK = 5,
  PYHOST__W_HOOKS = 6,
  PYHOST__W_RELOAD = 7,
  PYHOST__W_SYNC = 8,
  PYHOST__W_EXIT = 9,
  PYHOST__W_REPLY = 10,
  PYHOST__W_CALLBACK = 11,
  PYHOST__W_LOADING = 12
};

/* The control channel's one message: 'I' and the tree id to interrupt. */
#define PYHOST__W_INTERRUPT 'I'

/* ---- writing one message ---- */
struct pyhost__wbuf {
  char *p;
  size_t len, cap;
  int nomem; /* a write failed for memory: the message is not to be sent */
};
/* Empties b and starts a message of type. */
void pyhost__wbuf_start(struct pyhost__wbuf *b, int type);
void pyhost__wbuf_u8(struct pyhost__wbuf *b, unsigned v);
void pyhost__wbuf_u32(struct pyhost__wbuf *b, uint32_t v);
void pyhost__wbuf_i64(struct pyhost__wbuf *b, int64_t v);
void pyhost__wbuf_f64(struct pyhost__wbuf *b, double v);
/* s (NULL: "") and len bytes of it (PYHOST_STRLEN: up to the NUL). */
void pyhost__wbuf_str(struct pyhost__wbuf *b, const char *s, size_t len);
/* A value: 0, or -1 with why saying what cannot cross (an object value: "a
 * datetime.date object"; nesting deeper than PYHOST__WIRE_DEPTH).  NULL is None. */
int pyhost__wbuf_value(struct pyhost__wbuf *b, const pyhost_value *v, char *why, size_t cap);
/* The head of a tuple of n items; the n values follow. */
void pyhost__wbuf_tuple(struct pyhost__wbuf *b, size_t n);
/* A value built from a pyhost_arg (prepared-call and callf arguments): 0, or -1 with
 * why set as pyhost__arg_to_python would say it (an unknown kind, a NULL pointer). */
int pyhost__wbuf_arg(struct pyhost__wbuf *b, const pyhost_arg *a, char *why, size_t cap);
/* Sends the message: 0, or -1 (the peer is gone, or b->nomem). */
int pyhost__wbuf_send(struct pyhost__wbuf *b, struct pyhost__chan *c);
void pyhost__wbuf_free(struct pyhost__wbuf *b);

/* An error record: the status, and tagged fields (a reader skips tags it does not
 * know, so fields are added without a new protocol version).  The fields so far: the
 * message pyhost_errmsg gives, an exit code (PYHOST_EXIT), and the exception as data
 * (pyhost_errtype, pyhost_errtext, one field per frame of pyhost_errframe; for a host
 * function's exception, the type and text the worker raises it again with). */
enum {
  PYHOST__WE_END = 0,
  PYHOST__WE_MESSAGE = 1,
  PYHOST__WE_EXIT_CODE = 2,
  PYHOST__WE_EXC_TYPE = 3,
  PYHOST__WE_EXC_TEXT = 4,
  PYHOST__WE_FRAME = 5
};
struct pyhost__wire_error {
  int status;
  const char *message;  /* "" when absent */
  size_t message_len;
  int has_exit_code;
  int64_t exit_code;
  const char *exc_type, *exc_text; /* "" when absent */
  const struct pyhost__errframe *frames; /* writing only */
  size_t nframes;
};
void pyhost__wbuf_error(struct pyhost__wbuf *b, const struct pyhost__wire_error *e);
/* The error record of this thread's last failure on h (status, message, exit code,
 * the exception as data), as pyhost_errmsg and friends give them. */
void pyhost__wbuf_error_of(struct pyhost__wbuf *b, const pyhost *h, int status);

/* ---- reading one message ---- */
struct pyhost__rbuf {
  const char *p, *end;
  int bad; /* a read went past the end, or a field was malformed */
};
unsigned pyhost__rbuf_u8(struct pyhost__rbuf *r);
uint32_t pyhost__rbuf_u32(struct pyhost__rbuf *r);
int64_t pyhost__rbuf_i64(struct pyhost__rbuf *r);
double pyhost__rbuf_f64(struct pyhost__rbuf *r);
/* A string in place (NUL-terminated), its length in *len when len is not NULL; "" and
 * r->bad when malformed. */
const char *pyhost__rbuf_str(struct pyhost__rbuf *r, size_t *len);
/* A value (own result), or NULL: r->bad when malformed, else out of memory. */
pyhost_value *pyhost__rbuf_value(struct pyhost__rbuf *r);
/* Skips a value without making it: 0, or -1 (r->bad). */
int pyhost__rbuf_skip_value(struct pyhost__rbuf *r);
/* An error record into *e (its strings point into the message); its frames, when
 * frames is not NULL, appended to that build. */
void pyhost__rbuf_error(struct pyhost__rbuf *r, struct pyhost__wire_error *e,
                        struct pyhost__excbuild *frames);
/* Reads an error record and makes it this thread's failure on h: the message, the
 * exit code, the exception as data.  Its status, or -1 when malformed. */
int pyhost__rbuf_error_to(struct pyhost__rbuf *r, pyhost *h);

/* This thread's exception data on h, copied into *d (own; d->block NULL when none): to
 * keep it across a new message (pyhost__set_exception after). */
void pyhost__exc_snapshot(const pyhost *h, struct pyhost__excdata *d);

/* ---- receiving messages from a channel ---- */
struct pyhost__wire_in {
  char *buf;
  size_t cap, start, end; /* unread bytes are buf[start..end) */
  size_t taken;           /* the last message handed out: skipped by the next receive */
};
enum {
  PYHOST__WIRE_OK = 0,
  PYHOST__WIRE_EOF,     /* the peer closed its end (or is gone) */
  PYHOST__WIRE_TIMEOUT, /* the deadline passed */
  PYHOST__WIRE_IOERR,   /* the channel failed */
  PYHOST__WIRE_BAD,     /* a message too long to be one */
  PYHOST__WIRE_NOMEM
};
/* Receives one message: PYHOST__WIRE_OK with *type and its fields in *msg (valid until
 * the next receive on in), or why not.  A message cut by a timeout is kept for the
 * next receive. */
int pyhost__wire_recv(struct pyhost__wire_in *in, struct pyhost__chan *c, int64_t deadline,
                      int *type, struct pyhost__rbuf *msg);
void pyhost__wire_in_free(struct pyhost__wire_in *in);

/* ---- the config of the worker's Python ---- */
void pyhost__wbuf_config(struct pyhost__wbuf *b, const pyhost_config *cfg);
/* Fills a new config (pyhost_config_new's) from the message: own result, NULL when
 * out of memory or malformed (r->bad). */
pyhost_config *pyhost__rbuf_config(struct pyhost__rbuf *r);

#endif
