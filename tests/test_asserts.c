/* test_asserts.c: pyhost's own invariants run where the tests run (issue 33).  White
 * box, no Python: PYHOST__ASSERT_GIL stops a function that needs the GIL on a thread
 * that pyhost's per-thread state says holds none, and the build the tests link has
 * its asserts compiled in whenever CMake's PYHOST_ASSERTS says so. */
#include "death.h"
#include "runtime.h"

static struct pyhost__teardown hook;
static void nothing(void) {}

/* The teardown list is the GIL's: adding to it outside any call is a bug pyhost's
 * record of this thread (no call, no callback frame, no init or finalize) sees. */
static void teardown_add_without_the_gil(void) {
  pyhost__teardown_add(&hook, nothing, PYHOST__AT_DROP);
}

TEST_CASE(gil_assertion_stops_a_call_without_the_gil) {
  death_expect(teardown_add_without_the_gil, "pyhost__teardown_add", "pyhost__gil_held()");
}

/* And the state it reads is the one the runtime keeps: inside a call (as pyhost__enter
 * counts it), a host callback's frame, init's or finalize's own hold. */
TEST_CASE(gil_assertion_reads_the_thread_record) {
  CHECK(!pyhost__gil_held());
  struct pyhost__call record = {.depth = 1};
  pyhost__thread.call = &record;
  CHECK(pyhost__gil_held());
  record.depth = 0;
  CHECK(!pyhost__gil_held());
  pyhost__thread.call = NULL;
  struct pyhost__frame f = {NULL, NULL, NULL};
  pyhost__thread.frame = &f;
  CHECK(pyhost__gil_held());
  pyhost__thread.frame = NULL;
  pyhost__thread.gil_own = 1;
  CHECK(pyhost__gil_held());
  pyhost__thread.gil_own = 0;
  CHECK(!pyhost__gil_held());
}

static void api_misuse(void) {
  pyhost__api_misuse("pyhost_example", "the rule it broke");
}

/* The one report every API check goes through names the entry point and the rule. */
TEST_CASE(api_misuse_names_the_entry_and_the_rule) {
  if (!PYHOST_TEST_ASSERTS) return; /* the checks are compiled out; the report is not */
  death_expect(api_misuse, "pyhost: API misuse in pyhost_example: the rule it broke", NULL);
}
