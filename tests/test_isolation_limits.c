/* test_isolation_limits.c: the process level's limits (issue 34), the cases that
 * take a second or more; registered on a few Pythons of the matrix (CMakeLists.txt).
 * Linked into test_isolation with test_isolation.c. */
#define _GNU_SOURCE
#include "pyhost.h"
#include "check.h"
#include "isolation.h"
#include "reliab.h"

static const char HOG[] =
    "import time\n"
    "keep = []\n"
    "def hog():\n"
    "    try:\n"
    "        while True:\n"
    "            keep.append(bytearray(16 << 20))\n"
    "    except MemoryError:\n"
    "        del keep[:]  # room to format the traceback in\n"
    "        raise\n"
    "def release():\n"
    "    del keep[:]\n"
    "    return 1\n"
    "def spin():\n"
    "    while True:\n"
    "        pass\n"
    "def nap():\n"
    "    time.sleep(3600)\n"
    "def stubborn():\n"
    "    while True:\n"
    "        try:\n"
    "            time.sleep(3600)\n"
    "        except BaseException:\n"
    "            pass\n"
    "def fine():\n"
    "    return 2\n";

/* A memory hog against the memory limit: MemoryError in the plugin, PYHOST_LIMIT for
 * the call, and the plugin goes on. */
TEST_CASE(memory_limit) {
#if defined(__SANITIZE_ADDRESS__)
  SKIP("AddressSanitizer's shadow memory does not fit under an address-space limit");
#endif
  pyhost *h = iso_start();
  iso_put("hog.py", HOG);
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_plugin_options_set_memory_limit(o, (uint64_t)512 << 20);
  pyhost_plugin *p = iso_load(h, "hog.py", o);
  pyhost_plugin_options_free(o);
  CHECK_RC(pyhost_plugin_call(h, p, "hog", NULL, NULL, NULL), PYHOST_LIMIT);
  CHECK_CONTAINS(pyhost_errmsg(h), "MemoryError");
  CHECK_CONTAINS(pyhost_errmsg(h), "hog.py\", line 6, in hog");
  CHECK_CONTAINS(pyhost_errmsg(h), "has a memory limit of 536870912 bytes");
  CHECK_STREQ(pyhost_errtype(h), "MemoryError"); /* the exception behind the limit */
  CHECK(iso_int(h, p, "release") == 1);
  CHECK(iso_int(h, p, "fine") == 2);
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* An endless loop against the CPU time limit: the system ends the process,
 * PYHOST_LIMIT, and a restart works. */
TEST_CASE(cpu_limit) {
  pyhost *h = iso_start();
  iso_put("hog.py", HOG);
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_plugin_options_set_cpu_limit(o, 1);
  pyhost_plugin *p = iso_load(h, "hog.py", o);
  pyhost_plugin_options_free(o);
  CHECK_RC(pyhost_plugin_call(h, p, "spin", NULL, NULL, NULL), PYHOST_LIMIT);
  CHECK_CONTAINS(pyhost_errmsg(h), "used up its CPU time limit of 1 s during hook spin");
  CHECK_RC(pyhost_plugin_call(h, p, "fine", NULL, NULL, NULL), PYHOST_PROCESS);
  CHECK_RC(pyhost_plugin_restart(h, p), PYHOST_OK);
  CHECK(iso_int(h, p, "fine") == 2);
  pyhost_plugin_unload(p);
  iso_stop(h);
}

/* The wall-clock limit of a call: interrupted first (the traceback says where, the
 * plugin goes on), killed when the interrupt does not stop it. */
TEST_CASE(wall_clock_limit) {
  pyhost *h = iso_start();
  iso_put("hog.py", HOG);
  /* an ample grace period where the interrupt stops the hook (a loaded box takes its
   * time to format a debug build's traceback), a short one where nothing does.  The
   * limit holds for the load too (counted from the worker's LOADING, once its Python
   * is up): 1 s, so that a CI box at a load of 17 on 2 cores, which once held the
   * import of hog.py past 300 + 300 ms, still loads it */
  pyhost_plugin_options *o = iso_proc_options();
  pyhost_plugin_options_set_call_timeout(o, 1000, 60000);
  pyhost_plugin *p = iso_load(h, "hog.py", o);
  pyhost_plugin_options_set_call_timeout(o, 1000, 300);
  pyhost_plugin *q = iso_load(h, "hog.py", o);
  pyhost_plugin_options_free(o);
  CHECK_RC(pyhost_plugin_call(h, p, "nap", NULL, NULL, NULL), PYHOST_LIMIT);
  CHECK_CONTAINS(pyhost_errmsg(h), "ran past its wall-clock limit of 1000 ms and was interrupted");
  CHECK_CONTAINS(pyhost_errmsg(h), "in nap");
  CHECK_STREQ(pyhost_errtype(h), "pyhost.Interrupted");
  CHECK(iso_int(h, p, "fine") == 2);
  CHECK_RC(pyhost_plugin_call(h, p, "spin", NULL, NULL, NULL), PYHOST_LIMIT);
  CHECK_CONTAINS(pyhost_errmsg(h), "in spin");
  CHECK(iso_int(h, p, "fine") == 2);
  long pid = pyhost_plugin_process_id(q);
  CHECK_RC(pyhost_plugin_call(h, q, "stubborn", NULL, NULL, NULL), PYHOST_LIMIT);
  CHECK_CONTAINS(pyhost_errmsg(h), "did not stop within 300 ms of the interrupt: its process");
  iso_wait_gone(pid);
  CHECK_RC(pyhost_plugin_call(h, q, "fine", NULL, NULL, NULL), PYHOST_PROCESS);
  CHECK_RC(pyhost_plugin_restart(h, q), PYHOST_OK);
  CHECK(iso_int(h, q, "fine") == 2);
  pyhost_plugin_unload(p);
  pyhost_plugin_unload(q);
  iso_stop(h);
}
