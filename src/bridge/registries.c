/* registries.c: the bridge's process state (registries.h), defined once.  It names no
 * function: the files that keep something add their own teardown hooks. */
#include "internal.h"

struct pyhost__bridge pyhost__bridge = {
    .by_type = pyhost__bridge.by_type_none,
    .by_type_cap = 1,
};
