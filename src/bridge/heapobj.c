/* heapobj.c: allocating and freeing instances of pyhost's heap types, the one way
 * that is right on every runtime 3.6+: tp_alloc (PyType_GenericAlloc) INCREFs a heap
 * type on every version (PyObject_New does not before 3.8), so tp_dealloc frees
 * through tp_free and then DECREFs the type. */
#include "bridge.h"

PyObject *pyhost__heap_alloc(PyTypeObject *type) {
  allocfunc a = (allocfunc)PY.PyType_GetSlot(type, Py_tp_alloc);
  return a ? a(type, 0) : NULL;
}

void pyhost__heap_free(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  freefunc f = (freefunc)PY.PyType_GetSlot(tp, Py_tp_free);
  f(self);
  PY.Py_DecRef((PyObject *)tp);
}
