/* msg.c: per-thread error messages on a handle, and the Python exception behind one.
 *
 * pyhost_errmsg(h) answers for the calling thread's last call, as Python's own
 * exception state is per thread: two host threads that fail at once each read their
 * own cause.  A message longer than PYHOST__MSG_MAX keeps its start and its end,
 * because a traceback's last line names the exception.  pyhost_errtype, pyhost_errtext
 * and pyhost_errframe read the same slot: the exception is kept while its message is,
 * and goes with it.
 */
#include "core.h"

#include <string.h>


/* A thread's slot is found by the address of a _Thread_local, which a thread started
 * after another ended often gets back (the C library reuses an ended thread's stack and
 * thread-local storage).  So a slot also keeps the number of the thread that took it:
 * a new thread never reads an ended one's message, and takes its slot over rather than
 * adding one, so that the list stays as long as the most threads alive at once. */
static _Thread_local char this_thread;

static unsigned long thread_number(void) {
  if (!pyhost__thread.number)
    pyhost__thread.number = atomic_fetch_add(&pyhost__process.threads_numbered, 1) + 1;
  return pyhost__thread.number;
}

/* The slot at this thread's address: its own, an ended thread's, or NULL. */
static struct pyhost__msg *slot_here(const pyhost *h) {
  struct pyhost__msg *m = atomic_load_explicit(&((pyhost *)h)->msgs, memory_order_acquire);
  for (; m; m = m->next)
    if (m->thread == &this_thread) return m;
  return NULL;
}

static struct pyhost__msg *find_slot(const pyhost *h) {
  struct pyhost__msg *m = slot_here(h);
  return m && m->number == pyhost__thread.number ? m : NULL;
}

static struct pyhost__msg *get_slot(const pyhost *h) {
  unsigned long number = thread_number();
  struct pyhost__msg *m = slot_here(h);
  if (m && m->number != number) { /* an ended thread's: no live thread reads it */
    if (m->text) m->text[0] = '\0';
    pyhost__excdata_free(&m->exc);
    m->number = number;
  }
  if (m) return m;
  m = pyhost__calloc(1, sizeof *m);
  if (!m) return NULL;
  m->thread = &this_thread;
  m->number = number;
  pyhost *mh = (pyhost *)h;
  struct pyhost__msg *head = atomic_load(&mh->msgs);
  do m->next = head;
  while (!atomic_compare_exchange_weak(&mh->msgs, &head, m));
  return m;
}

static int is_set(const struct pyhost__msg *m) {
  return m->text && m->text[0];
}

/* Keeps pyhost__thread.messages in step after m's text changed from was_set. */
static void count(const struct pyhost__msg *m, int was_set) {
  pyhost__thread.messages += (unsigned long)(is_set(m) - was_set);
}

static void store(struct pyhost__msg *m, const char *text, size_t len) {
  size_t need = pyhost__cut_size(len);
  if (m->cap < need) {
    char *t = pyhost__realloc(m->text, need);
    if (!t) {
      /* Keep whatever fits in the old buffer rather than nothing. */
      if (m->text && m->cap) pyhost__fmt(m->text, m->cap, "%.*s", (int)len, text);
      return;
    }
    m->text = t;
    m->cap = need;
  }
  pyhost__cut_text(m->text, text, len);
}

void pyhost__set_message(const pyhost *h, const char *text, size_t len) {
  if (!pyhost__handle_live(h)) return;
  struct pyhost__msg *m = get_slot(h);
  if (!m) return;
  int was_set = is_set(m);
  pyhost__excdata_free(&m->exc);
  store(m, text, len);
  count(m, was_set);
}

void pyhost__set_exception(const pyhost *h, struct pyhost__excdata *d) {
  struct pyhost__msg *m = pyhost__handle_live(h) ? find_slot(h) : NULL;
  if (!m || !is_set(m)) { /* no message to go with: the next call would not clear it */
    pyhost__excdata_free(d);
    return;
  }
  pyhost__excdata_free(&m->exc);
  m->exc = *d;
  memset(d, 0, sizeof *d);
}

int pyhost__set_error(const pyhost *h, int status, const char *fmt, ...) {
  char buf[8192];
  struct pyhost__strbuf sb;
  va_list ap;
  pyhost__strbuf_init(&sb, buf, sizeof buf);
  va_start(ap, fmt);
  pyhost__strbuf_vprintf(&sb, fmt, ap);
  va_end(ap);
  pyhost__set_message(h, buf, sb.len);
  return status;
}

/* Called by every pyhost call: with no message set on this thread (the usual case) it
 * reads one thread-local counter and returns. */
void pyhost__clear_message(const pyhost *h) {
  if (!pyhost__thread.messages) return;
  struct pyhost__msg *m = h ? find_slot(h) : NULL;
  if (m && is_set(m)) {
    m->text[0] = '\0';
    pyhost__excdata_free(&m->exc);
    pyhost__thread.messages--;
  }
}

void pyhost__free_messages(pyhost *h) {
  struct pyhost__msg *m = atomic_exchange(&h->msgs, NULL);
  while (m) {
    struct pyhost__msg *next = m->next;
    pyhost__free(m->text);
    pyhost__excdata_free(&m->exc);
    pyhost__free(m);
    m = next;
  }
}

const char *pyhost_errmsg(const pyhost *h) {
  if (!h) return "no pyhost handle (NULL)";
  if (!pyhost__handle_live(h))
    return "not a live pyhost handle: freed by pyhost_free, or never returned by pyhost_init";
  struct pyhost__msg *m = find_slot(h);
  return m && is_set(m) ? m->text : "not an error";
}

int pyhost_exit_code(const pyhost *h) {
  return pyhost__handle_live(h) ? h->exit_code : 0;
}

/* This thread's exception on h, or NULL: none, or h is no live handle. */
static const struct pyhost__excdata *exception_of(const pyhost *h) {
  struct pyhost__msg *m = pyhost__handle_live(h) ? find_slot(h) : NULL;
  return m && is_set(m) && m->exc.block ? &m->exc : NULL;
}

const char *pyhost_errtype(const pyhost *h) {
  const struct pyhost__excdata *e = exception_of(h);
  return e ? e->type : "";
}

const char *pyhost_errtext(const pyhost *h) {
  const struct pyhost__excdata *e = exception_of(h);
  return e ? e->text : pyhost_errmsg(h);
}

size_t pyhost_errframe_count(const pyhost *h) {
  const struct pyhost__excdata *e = exception_of(h);
  return e ? e->nframes : 0;
}

int pyhost_errframe(const pyhost *h, size_t i, const char **file, int *line,
                    const char **function) {
  if (!pyhost__handle_live(h)) return PYHOST_MISUSE;
  const struct pyhost__excdata *e = exception_of(h);
  if (!e || i >= e->nframes) return PYHOST_RANGE;
  const struct pyhost__errframe *f = &e->frames[i];
  if (file) *file = f->file;
  if (line) *line = f->line;
  if (function) *function = f->function;
  return PYHOST_OK;
}

/* Why p is refused as a handle of kind what (core.h's tags). */
int pyhost__tag_refused(const pyhost *h, const void *p, const char *fn, const char *what) {
  if (!p) return pyhost__set_error(h, PYHOST_MISUSE, "%s: %s is NULL", fn, what);
  return pyhost__set_error(h, PYHOST_MISUSE,
                           "%s: %s is not a live pyhost_%s handle (freed already, or a handle "
                           "of another kind)",
                           fn, what, what);
}
