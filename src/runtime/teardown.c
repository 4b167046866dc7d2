/* teardown.c: the hooks finalize runs for the layer above the runtime.
 *
 * Finalize must drop what the bridge keeps (cached code, the plugin loader's module)
 * and close its host functions, without the runtime naming the bridge: the bridge adds
 * a hook when it first keeps such a thing, as libuv's loop closes handles it never
 * includes.  Hooks are added and run with the GIL (or, after Py_FinalizeEx, on the one
 * thread that finalizes), so the list needs no lock.
 */
#include "runtime.h"

static struct pyhost__teardown *hooks, **hooks_end = &hooks;

void pyhost__teardown_add(struct pyhost__teardown *t) {
  if (t->added) return;
  t->added = 1;
  t->next = NULL;
  *hooks_end = t;
  hooks_end = &t->next;
}

void pyhost__teardown_run(int phase) {
  for (struct pyhost__teardown *t = hooks; t; t = t->next)
    if (t->phase == phase) t->run();
}
