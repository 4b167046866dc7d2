/* check_prototypes.c: compiled once per (header set, stable-ABI version) by
 * check_prototypes.cmake with -DPy_LIMITED_API=<that version> and
 * -DCHECK_MINOR=<minor>.  Each row whose `added` is exactly 3.CHECK_MINOR must be
 * declared by these headers at that limited-API version, with the type the table
 * gives it; a row that is missing or differs fails to compile. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h> /* PyThread_get_thread_ident: Python.h of 3.6 leaves it out */
#include <wchar.h>

#if defined(__GNUC__)
#  pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

#define SAME_TYPE(a, b) __builtin_types_compatible_p(a, b)

#if PY_VERSION_HEX < 0x03070000
/* 3.6's headers spell four rows differently: no const on the two setters, and a long
 * thread id (twice) (3.7 made it unsigned long, the type of threading.get_ident()).  Same
 * size, same registers: check the old spelling here, the table's on later headers. */
_Static_assert(SAME_TYPE(__typeof__(&Py_SetPythonHome), void (*)(wchar_t *)), "Py_SetPythonHome");
_Static_assert(SAME_TYPE(__typeof__(&Py_SetProgramName), void (*)(wchar_t *)), "Py_SetProgramName");
_Static_assert(SAME_TYPE(__typeof__(&PyThreadState_SetAsyncExc), int (*)(long, PyObject *)),
               "PyThreadState_SetAsyncExc");
int pyhost_legacy_async_exc(unsigned long, PyObject *);
#  define PyThreadState_SetAsyncExc pyhost_legacy_async_exc
_Static_assert(SAME_TYPE(__typeof__(&PyThread_get_thread_ident), long (*)(void)),
               "PyThread_get_thread_ident");
unsigned long pyhost_legacy_thread_ident(void);
#  define PyThread_get_thread_ident pyhost_legacy_thread_ident
void pyhost_legacy_home(const wchar_t *);
void pyhost_legacy_program(const wchar_t *);
#  define Py_SetPythonHome pyhost_legacy_home
#  define Py_SetProgramName pyhost_legacy_program
#endif

#define DO_FN(ret, name, params) \
  _Static_assert(SAME_TYPE(__typeof__(&name), ret(*) params), #name " has another prototype");
#define DO_DATA(type, name) \
  _Static_assert(SAME_TYPE(__typeof__(&name), type *), #name " has another type");
#define NO_FN(ret, name, params)
#define NO_DATA(type, name)

/* Pick the checking expansion for the minor under test, the empty one for the rest. */
#define PYAPI_FN(ret, name, params, major, minor, need) FN_SEL_##minor(ret, name, params)
#define PYAPI_DATA(type, name, major, minor, need) DATA_SEL_##minor(type, name)

#define SEL(m) (CHECK_MINOR == m)
#if SEL(2)
#  define FN_SEL_2 DO_FN
#  define DATA_SEL_2 DO_DATA
#else
#  define FN_SEL_2 NO_FN
#  define DATA_SEL_2 NO_DATA
#endif
#if SEL(3)
#  define FN_SEL_3 DO_FN
#  define DATA_SEL_3 DO_DATA
#else
#  define FN_SEL_3 NO_FN
#  define DATA_SEL_3 NO_DATA
#endif
#if SEL(4)
#  define FN_SEL_4 DO_FN
#  define DATA_SEL_4 DO_DATA
#else
#  define FN_SEL_4 NO_FN
#  define DATA_SEL_4 NO_DATA
#endif
#if SEL(5)
#  define FN_SEL_5 DO_FN
#  define DATA_SEL_5 DO_DATA
#else
#  define FN_SEL_5 NO_FN
#  define DATA_SEL_5 NO_DATA
#endif
#if SEL(6)
#  define FN_SEL_6 DO_FN
#  define DATA_SEL_6 DO_DATA
#else
#  define FN_SEL_6 NO_FN
#  define DATA_SEL_6 NO_DATA
#endif
#if SEL(7)
#  define FN_SEL_7 DO_FN
#  define DATA_SEL_7 DO_DATA
#else
#  define FN_SEL_7 NO_FN
#  define DATA_SEL_7 NO_DATA
#endif
#if SEL(8)
#  define FN_SEL_8 DO_FN
#  define DATA_SEL_8 DO_DATA
#else
#  define FN_SEL_8 NO_FN
#  define DATA_SEL_8 NO_DATA
#endif
#if SEL(9)
#  define FN_SEL_9 DO_FN
#  define DATA_SEL_9 DO_DATA
#else
#  define FN_SEL_9 NO_FN
#  define DATA_SEL_9 NO_DATA
#endif
#if SEL(10)
#  define FN_SEL_10 DO_FN
#  define DATA_SEL_10 DO_DATA
#else
#  define FN_SEL_10 NO_FN
#  define DATA_SEL_10 NO_DATA
#endif
#if SEL(11)
#  define FN_SEL_11 DO_FN
#  define DATA_SEL_11 DO_DATA
#else
#  define FN_SEL_11 NO_FN
#  define DATA_SEL_11 NO_DATA
#endif
#if SEL(12)
#  define FN_SEL_12 DO_FN
#  define DATA_SEL_12 DO_DATA
#else
#  define FN_SEL_12 NO_FN
#  define DATA_SEL_12 NO_DATA
#endif
#if SEL(13)
#  define FN_SEL_13 DO_FN
#  define DATA_SEL_13 DO_DATA
#else
#  define FN_SEL_13 NO_FN
#  define DATA_SEL_13 NO_DATA
#endif
#if SEL(14)
#  define FN_SEL_14 DO_FN
#  define DATA_SEL_14 DO_DATA
#else
#  define FN_SEL_14 NO_FN
#  define DATA_SEL_14 NO_DATA
#endif
#if SEL(15)
#  define FN_SEL_15 DO_FN
#  define DATA_SEL_15 DO_DATA
#else
#  define FN_SEL_15 NO_FN
#  define DATA_SEL_15 NO_DATA
#endif

#include "pyapi_list.h"

int check_prototypes_compiled;
