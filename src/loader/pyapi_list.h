/* pyapi_list.h: THE list of every libpython symbol pyhost uses.
 *
 * One row per stable-ABI function or data symbol.  Everything else is expanded from
 * here: the table struct (src/pyapi.h), the loader's descriptor array (src/pyapi.c),
 * the compile-time prototype check (tests/check_prototypes.c) and the manifest test
 * (tests/check_manifest.py, fed by tests/dump_pyapi.c).  Nothing outside the table
 * calls libpython.  No include guard: include it after defining the row macros.
 *
 *   PYAPI_FN(ret, name, params, major, minor, need)
 *   PYAPI_DATA(type, name, major, minor, need)   the table stores `type *name`
 *
 * major.minor is the row's `added` in CPython's Misc/stable_abi.toml.
 * need: REQ  the library is refused without it; `added` must be <= the build floor.
 *       OPT  resolved only when the runtime is >= `added` (and then it must be there);
 *            left NULL below, and every use is gated on pyhost__runtime_at_least().
 * Append new rows at the end of their group; the order carries no meaning.
 */

/* ---- version and lifecycle ---- */
PYAPI_FN(const char *, Py_GetVersion, (void), 3, 2, REQ)
PYAPI_DATA(const unsigned long, Py_Version, 3, 11, OPT)
PYAPI_FN(int, Py_IsInitialized, (void), 3, 2, REQ)
PYAPI_FN(void, Py_InitializeEx, (int), 3, 2, REQ)
PYAPI_FN(int, Py_FinalizeEx, (void), 3, 6, REQ)
PYAPI_FN(void, Py_SetPythonHome, (const wchar_t *), 3, 2, REQ)
PYAPI_FN(void, Py_SetProgramName, (const wchar_t *), 3, 2, REQ)
PYAPI_FN(void, PyEval_InitThreads, (void), 3, 2, REQ)
PYAPI_DATA(int, Py_UTF8Mode, 3, 8, OPT)
PYAPI_FN(int, Py_Main, (int, wchar_t **), 3, 2, REQ)       /* pyhost_main (main.c) */
PYAPI_FN(int, Py_BytesMain, (int, char **), 3, 8, OPT)

/* ---- threads and the GIL ---- */
PYAPI_FN(PyThreadState *, PyEval_SaveThread, (void), 3, 2, REQ)
PYAPI_FN(void, PyEval_RestoreThread, (PyThreadState *), 3, 2, REQ)
PYAPI_FN(PyGILState_STATE, PyGILState_Ensure, (void), 3, 2, REQ)
PYAPI_FN(void, PyGILState_Release, (PyGILState_STATE), 3, 2, REQ)
PYAPI_FN(PyThreadState *, PyGILState_GetThisThreadState, (void), 3, 2, REQ)
PYAPI_FN(void, PyErr_SetInterrupt, (void), 3, 2, REQ)
PYAPI_FN(int, PyErr_CheckSignals, (void), 3, 2, REQ)
PYAPI_FN(int, PyThreadState_SetAsyncExc, (unsigned long, PyObject *), 3, 2, REQ)
PYAPI_FN(unsigned long, PyThread_get_thread_ident, (void), 3, 2, REQ)
PYAPI_FN(int, Py_GetRecursionLimit, (void), 3, 2, REQ)
/* sub-interpreters and their thread states (runtime/subinterp.c) */
PYAPI_FN(PyThreadState *, Py_NewInterpreter, (void), 3, 2, REQ)
PYAPI_FN(void, Py_EndInterpreter, (PyThreadState *), 3, 2, REQ)
PYAPI_FN(PyThreadState *, PyThreadState_Swap, (PyThreadState *), 3, 2, REQ)
PYAPI_FN(PyThreadState *, PyThreadState_New, (PyInterpreterState *), 3, 2, REQ)
PYAPI_FN(void, PyThreadState_Clear, (PyThreadState *), 3, 2, REQ)
PYAPI_FN(void, PyThreadState_Delete, (PyThreadState *), 3, 2, REQ)
PYAPI_FN(PyThreadState *, PyThreadState_Get, (void), 3, 2, REQ)
PYAPI_FN(PyInterpreterState *, PyInterpreterState_Get, (void), 3, 9, OPT)

/* ---- reference counts and generic objects ---- */
PYAPI_FN(void, Py_IncRef, (PyObject *), 3, 2, REQ)
PYAPI_FN(void, Py_DecRef, (PyObject *), 3, 2, REQ)
PYAPI_FN(void, _Py_Dealloc, (PyObject *), 3, 2, REQ) /* abi_only: what old limited Py_DECREF calls */
PYAPI_FN(Py_ssize_t, Py_REFCNT, (PyObject *), 3, 14, OPT) /* before 3.14 a read of ob_refcnt */
PYAPI_FN(PyObject *, PyObject_Repr, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_Str, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_GetAttrString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(int, PyObject_SetAttrString, (PyObject *, const char *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyObject_HasAttrString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_GetAttr, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyObject_SetAttr, (PyObject *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_Call, (PyObject *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_CallObject, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_CallFunctionObjArgs, (PyObject *, ...), 3, 2, REQ)
PYAPI_FN(int, PyObject_IsTrue, (PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyObject_IsInstance, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_Type, (PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyCallable_Check, (PyObject *), 3, 2, REQ)
PYAPI_FN(unsigned long, PyType_GetFlags, (PyTypeObject *), 3, 2, REQ)
PYAPI_FN(int, PyType_IsSubtype, (PyTypeObject *, PyTypeObject *), 3, 2, REQ)
PYAPI_FN(void, PyObject_ClearWeakRefs, (PyObject *), 3, 2, REQ)
PYAPI_FN(void, PyObject_GC_UnTrack, (void *), 3, 2, REQ)
PYAPI_FN(void *, PyType_GetSlot, (PyTypeObject *, int), 3, 4, REQ)
PYAPI_FN(PyObject *, PyType_FromSpecWithBases, (PyType_Spec *, PyObject *), 3, 3, REQ)
PYAPI_FN(PyObject *, PyType_FromModuleAndSpec, (PyObject *, PyType_Spec *, PyObject *), 3, 10, OPT)
PYAPI_FN(PyObject *, PyCFunction_NewEx, (PyMethodDef *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyObject_CallNoArgs, (PyObject *), 3, 10, OPT)
PYAPI_FN(PyObject *, PyObject_Vectorcall, (PyObject *, PyObject *const *, size_t, PyObject *), 3, 12, OPT)
PYAPI_FN(int, PyObject_RichCompareBool, (PyObject *, PyObject *, int), 3, 2, REQ)

/* ---- numbers ---- */
PYAPI_FN(PyObject *, PyLong_FromLongLong, (long long), 3, 2, REQ)
PYAPI_FN(long long, PyLong_AsLongLongAndOverflow, (PyObject *, int *), 3, 2, REQ)
PYAPI_FN(long long, PyLong_AsLongLong, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyLong_FromString, (const char *, char **, int), 3, 2, REQ)
PYAPI_FN(PyObject *, PyNumber_ToBase, (PyObject *, int), 3, 2, REQ)
PYAPI_FN(PyObject *, PyFloat_FromDouble, (double), 3, 2, REQ)
PYAPI_FN(double, PyFloat_AsDouble, (PyObject *), 3, 2, REQ)
PYAPI_FN(double, PyLong_AsDouble, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyBool_FromLong, (long), 3, 2, REQ)

/* ---- strings and bytes ---- */
PYAPI_FN(PyObject *, PyUnicode_FromString, (const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyUnicode_DecodeUTF8, (const char *, Py_ssize_t, const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyUnicode_AsUTF8String, (PyObject *), 3, 2, REQ)
PYAPI_FN(const char *, PyUnicode_AsUTF8AndSize, (PyObject *, Py_ssize_t *), 3, 10, OPT)
PYAPI_FN(PyObject *, PyUnicode_InternFromString, (const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyUnicode_Join, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyUnicode_CompareWithASCIIString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyBytes_FromStringAndSize, (const char *, Py_ssize_t), 3, 2, REQ)
PYAPI_FN(int, PyBytes_AsStringAndSize, (PyObject *, char **, Py_ssize_t *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyByteArray_FromStringAndSize, (const char *, Py_ssize_t), 3, 2, REQ)
PYAPI_FN(char *, PyByteArray_AsString, (PyObject *), 3, 2, REQ)
PYAPI_FN(Py_ssize_t, PyByteArray_Size, (PyObject *), 3, 2, REQ)

/* ---- buffers (bridge/buffer*.c): Py_buffer is pyapi.h's mirror below 3.11's headers ---- */
PYAPI_FN(PyObject *, PyMemoryView_FromObject, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyMemoryView_FromMemory, (char *, Py_ssize_t, int), 3, 7, OPT)
PYAPI_FN(int, PyObject_GetBuffer, (PyObject *, Py_buffer *, int), 3, 11, OPT)
PYAPI_FN(void, PyBuffer_Release, (Py_buffer *), 3, 11, OPT)
PYAPI_FN(int, PyObject_CheckBuffer, (PyObject *), 3, 11, OPT)
/* a callback's borrowed view, held by the call's temporaries (buffer_view.c) */
PYAPI_FN(PyObject *, PyCapsule_New, (void *, const char *, PyCapsule_Destructor), 3, 2, REQ)
PYAPI_FN(void *, PyCapsule_GetPointer, (PyObject *, const char *), 3, 2, REQ)

/* ---- containers ---- */
PYAPI_FN(PyObject *, PyList_New, (Py_ssize_t), 3, 2, REQ)
PYAPI_FN(Py_ssize_t, PyList_Size, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyList_GetItem, (PyObject *, Py_ssize_t), 3, 2, REQ)
PYAPI_FN(int, PyList_SetItem, (PyObject *, Py_ssize_t, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyList_Append, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyList_Insert, (PyObject *, Py_ssize_t, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyTuple_New, (Py_ssize_t), 3, 2, REQ)
PYAPI_FN(Py_ssize_t, PyTuple_Size, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyTuple_GetItem, (PyObject *, Py_ssize_t), 3, 2, REQ)
PYAPI_FN(int, PyTuple_SetItem, (PyObject *, Py_ssize_t, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyDict_New, (void), 3, 2, REQ)
PYAPI_FN(int, PyDict_SetItem, (PyObject *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyDict_SetItemString, (PyObject *, const char *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyDict_GetItemString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyDict_GetItemWithError, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyDict_DelItemString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(int, PyDict_Next, (PyObject *, Py_ssize_t *, PyObject **, PyObject **), 3, 2, REQ)
PYAPI_FN(Py_ssize_t, PyDict_Size, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyDict_Copy, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyDict_Items, (PyObject *), 3, 2, REQ)

/* ---- exceptions ---- */
PYAPI_FN(PyObject *, PyErr_Occurred, (void), 3, 2, REQ)
PYAPI_FN(void, PyErr_Fetch, (PyObject **, PyObject **, PyObject **), 3, 2, REQ)
PYAPI_FN(void, PyErr_Restore, (PyObject *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(void, PyErr_NormalizeException, (PyObject **, PyObject **, PyObject **), 3, 2, REQ)
PYAPI_FN(void, PyErr_Clear, (void), 3, 2, REQ)
PYAPI_FN(void, PyErr_SetString, (PyObject *, const char *), 3, 2, REQ)
PYAPI_FN(void, PyErr_SetObject, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyErr_Format, (PyObject *, const char *, ...), 3, 2, REQ)
PYAPI_FN(PyObject *, PyErr_NoMemory, (void), 3, 2, REQ)
PYAPI_FN(int, PyErr_ExceptionMatches, (PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyErr_GivenExceptionMatches, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyException_GetTraceback, (PyObject *), 3, 2, REQ)
PYAPI_FN(int, PyException_SetTraceback, (PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyErr_NewException, (const char *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_BaseException, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_Exception, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_SystemExit, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_KeyboardInterrupt, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_TypeError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_ValueError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_RuntimeError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_OverflowError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_MemoryError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_KeyError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_IndexError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_AttributeError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_ImportError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_NameError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_SyntaxError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_OSError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_LookupError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_ZeroDivisionError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_NotImplementedError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_RecursionError, 3, 7, OPT)
PYAPI_DATA(PyObject *, PyExc_ReferenceError, 3, 2, REQ)
PYAPI_DATA(PyObject *, PyExc_BufferError, 3, 2, REQ)

/* ---- well-known objects and types (the symbols are the objects) ---- */
PYAPI_DATA(PyObject, _Py_NoneStruct, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyBool_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyLong_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyFloat_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyUnicode_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyBytes_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyList_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyTuple_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyDict_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyByteArray_Type, 3, 2, REQ)
PYAPI_DATA(PyTypeObject, PyMemoryView_Type, 3, 2, REQ)

/* ---- compiling, evaluating and importing ---- */
PYAPI_FN(PyObject *, Py_CompileString, (const char *, const char *, int), 3, 2, REQ)
PYAPI_FN(PyObject *, PyEval_EvalCode, (PyObject *, PyObject *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyEval_GetBuiltins, (void), 3, 2, REQ)
PYAPI_FN(PyObject *, PyImport_AddModule, (const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyImport_ImportModule, (const char *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyImport_GetModuleDict, (void), 3, 2, REQ)
PYAPI_FN(PyObject *, PyModule_GetDict, (PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PySys_GetObject, (const char *), 3, 2, REQ)
PYAPI_FN(int, PySys_SetObject, (const char *, PyObject *), 3, 2, REQ)
PYAPI_FN(PyObject *, PyModule_New, (const char *), 3, 2, REQ)
