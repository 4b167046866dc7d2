/* state.c: the state shared by every layer above the core: this thread's call state
 * and the process's (core.h). */
#include "core.h"

/* Never a handle: what scope_h holds outside a scope (see core.h). */
const char pyhost__no_scope;

/* One scope per thread: CPython runs one interpreter per process, so one handle. */
_Thread_local struct pyhost__thread pyhost__thread = {.scope_h = PYHOST__NO_SCOPE};

/* The process (core.h): CPython is process-global, at most one Python started by
 * pyhost per process. */
struct pyhost__process pyhost__process = {
    .state = PYHOST__PROCESS_IDLE,
    .teardown_end = &pyhost__process.teardown,
    .live_first = {.h = PYHOST__NO_SCOPE},
};
