/* msg.c: per-thread error messages on a handle.
 *
 * pyhost_errmsg(h) answers for the calling thread's last call, as Python's own
 * exception state is per thread: two host threads that fail at once each read their
 * own cause.  A message longer than MSG_MAX keeps its start and its end, because a
 * traceback's last line names the exception.
 */
#include "core.h"

#include <stdio.h>
#include <string.h>

#define MSG_MAX 65536
#define MSG_HEAD 8192

static _Thread_local char this_thread;

static struct pyhost__msg *find_slot(const pyhost *h) {
  struct pyhost__msg *m = atomic_load_explicit(&((pyhost *)h)->msgs, memory_order_acquire);
  for (; m; m = m->next)
    if (m->thread == &this_thread) return m;
  return NULL;
}

static struct pyhost__msg *get_slot(const pyhost *h) {
  struct pyhost__msg *m = find_slot(h);
  if (m) return m;
  m = pyhost__calloc(1, sizeof *m);
  if (!m) return NULL;
  m->thread = &this_thread;
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
  static const char cut_fmt[] = "\n[... %zu bytes cut ...]\n";
  size_t need = len < MSG_MAX ? len : MSG_MAX + sizeof cut_fmt + 24;
  if (m->cap < need + 1) {
    char *t = pyhost__realloc(m->text, need + 1);
    if (!t) {
      /* Keep whatever fits in the old buffer rather than nothing. */
      if (m->text && m->cap) pyhost__fmt(m->text, m->cap, "%.*s", (int)len, text);
      return;
    }
    m->text = t;
    m->cap = need + 1;
  }
  if (len < MSG_MAX) {
    memcpy(m->text, text, len);
    m->text[len] = '\0';
    return;
  }
  size_t tail = MSG_MAX - MSG_HEAD;
  memcpy(m->text, text, MSG_HEAD);
  int n = snprintf(m->text + MSG_HEAD, m->cap - MSG_HEAD, cut_fmt, len - MSG_HEAD - tail);
  memcpy(m->text + MSG_HEAD + n, text + len - tail, tail);
  m->text[MSG_HEAD + n + tail] = '\0';
}

void pyhost__set_message(const pyhost *h, const char *text, size_t len) {
  if (!h) return;
  struct pyhost__msg *m = get_slot(h);
  if (!m) return;
  int was_set = is_set(m);
  store(m, text, len);
  count(m, was_set);
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
    pyhost__thread.messages--;
  }
}

void pyhost__free_messages(pyhost *h) {
  struct pyhost__msg *m = atomic_exchange(&h->msgs, NULL);
  while (m) {
    struct pyhost__msg *next = m->next;
    pyhost__free(m->text);
    pyhost__free(m);
    m = next;
  }
}

const char *pyhost_errmsg(const pyhost *h) {
  if (!h) return "no pyhost handle (NULL)";
  if (h->magic != PYHOST__MAGIC) return "not a pyhost handle (freed or corrupted)";
  struct pyhost__msg *m = find_slot(h);
  return m && m->text && m->text[0] ? m->text : "not an error";
}

int pyhost_exit_code(const pyhost *h) {
  return h && h->magic == PYHOST__MAGIC ? h->exit_code : 0;
}
