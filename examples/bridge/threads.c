/* threads.c: the worker-thread example of docs/threads.md.  Host threads call a
 * prepared Python function in a loop.  Two attach first (pyhost_thread_attach): their
 * Python thread states last from one call to the next, and with them a threading.local
 * counter; a third does not attach, so each of its calls starts with a new thread
 * state and the counter starts over.
 *   example_threads [PYTHON_LIBRARY] */
#include "common.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <pthread.h>
#endif

enum { CALLS = 1000 };

static pyhost *py;
static pyhost_callable *tick;

struct worker {
  int id, attach;
  int64_t last; /* what the last call returned */
  int rc;
};

static void work(struct worker *w) {
  if (w->attach && (w->rc = pyhost_thread_attach(py)) != PYHOST_OK) return;
  for (int i = 0; i < CALLS && w->rc == PYHOST_OK; i++) {
    pyhost_arg id = pyhost_arg_int(w->id);
    w->rc = pyhost_prepared_call_int(py, tick, &id, 1, &w->last);
  }
  if (w->attach) pyhost_thread_detach(py); /* frees the thread state */
}

#ifdef _WIN32
static DWORD WINAPI worker_main(LPVOID arg) {
  work(arg);
  return 0;
}
#else
static void *worker_main(void *arg) {
  work(arg);
  return NULL;
}
#endif

int main(int argc, char **argv) {
  py = example_start(argc, argv);
  run(py, "import threading\n"
          "state = threading.local()\n"
          "def tick(worker):\n"
          "    state.n = getattr(state, 'n', 0) + 1  # this thread's own counter\n"
          "    return state.n\n");
  if (pyhost_prepare_name(py, "tick", &tick) != PYHOST_OK) {
    printf("prepare failed: %s\n", last_line(py));
    return 1;
  }

  struct worker w[3] = {{1, 1, 0, 0}, {2, 1, 0, 0}, {3, 0, 0, 0}};
#ifdef _WIN32
  HANDLE t[3];
  for (int i = 0; i < 3; i++) t[i] = CreateThread(NULL, 0, worker_main, &w[i], 0, NULL);
  WaitForMultipleObjects(3, t, TRUE, INFINITE);
  for (int i = 0; i < 3; i++) CloseHandle(t[i]);
#else
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker_main, &w[i]);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
#endif

  for (int i = 0; i < 3; i++)
    printf("worker %d (%s): %s, its counter at %lld after %d calls\n", w[i].id,
           w[i].attach ? "attached" : "not attached", pyhost_status_name(w[i].rc),
           (long long)w[i].last, CALLS);
  pyhost_callable_free(tick);
  pyhost_free(py);
  return 0;
}
