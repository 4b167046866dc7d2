/* sync_win32.c: sync.h on Windows. */
#include "sync.h"

#include <windows.h>

void pyhost__sleep_ms(unsigned ms) {
  Sleep(ms);
}

void pyhost__on_fork_child(void (*fn)(void)) {
  (void)fn; /* Windows processes do not fork */
}
