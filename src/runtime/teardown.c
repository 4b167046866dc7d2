/* teardown.c: the hooks finalize runs for the layer above the runtime.
 *
 * Finalize must drop what the bridge keeps (cached code, the plugin loader's module)
 * and close its host functions, without the runtime naming the bridge: the bridge adds
 * a hook when it first keeps such a thing, as libuv's loop closes handles it never
 * includes.  Hooks are added and run with the GIL (or, after Py_FinalizeEx, on the one
 * thread that finalizes), so the list needs no lock.
 */
#include "runtime.h"

void pyhost__teardown_add(struct pyhost__teardown *t, void (*run)(void), int phase) {
  PYHOST__ASSERT_GIL();
  if (t->added) return;
  t->added = 1;
  t->run = run;
  t->phase = phase;
  t->next = NULL;
  *pyhost__process.teardown_end = t;
  pyhost__process.teardown_end = &t->next;
}

void pyhost__teardown_run(int phase) {
  if (phase != PYHOST__AFTER_FINALIZE) PYHOST__ASSERT_GIL();
  for (struct pyhost__teardown *t = pyhost__process.teardown; t; t = t->next)
    if (t->phase == phase) t->run();
}
