/* fuzz_api.h: what fuzz_api.c (the program of operations) and fuzz_api_host.c (the
 * host module `fz` that its Python code calls back into) share. */
#ifndef PYHOST_FUZZ_API_H
#define PYHOST_FUZZ_API_H

#include "pyhost.h"

#include <stdint.h>

enum { NVALUES = 6, NCALLABLES = 3, MAX_OPS = 64, NTYPED = 3 };

/* A borrowed result (>s, >y) of a callable's last pyhost_prepared_callf, with a copy of
 * what it read then: it must read the same until that callable's next callf or free. */
struct fz_borrowed {
  const char *p;
  size_t len;
  char copy[48];
};

struct fz_state {
  pyhost *h;
  pyhost_value *values[NVALUES];
  pyhost_callable *callables[NCALLABLES];
  struct fz_borrowed borrowed[NCALLABLES];
  pyhost_plugin *plugin;
  pyhost_module *module;   /* fz: kept for the process */
  pyhost_type *box;        /* fz.Box: fast methods, inline payload */
  pyhost_type *tbox;       /* fz.TBox: typed constructor and methods, a payload of its own */
  unsigned long scopes;    /* this thread's open pyhost_gil_enter scopes */
  unsigned long attached;  /* this thread's pyhost_thread_attach count */
};
extern struct fz_state fz;

/* fuzz_api_host.c */
void fz_setup(void);            /* fz, its types, the globals the snippets use */
void fz_load_plugin(uint8_t how); /* fuzz_api_host.c says how */
void fz_readd_typed(void);      /* adds back the typed functions Python removed */
pyhost_callable *fz_take_callable(int i); /* empties slot i (the caller frees) */
pyhost_value *fz_tbox_new(int64_t n);     /* a TBox made by pyhost_object_new, or NULL */
/* Reads a TBox's payload (checking it is live) and, when asked, invalidates the
 * instance and frees the payload as the host does; nothing when v is no TBox. */
void fz_tbox_poke(const pyhost_value *v, int invalidate);
/* Aborts, naming what, when the status is not PYHOST_OK and the message is empty, or
 * when the exception data (pyhost_errtype, _errtext, _errframe*) disagrees with it. */
void fz_checked(int rc, const char *what);

#endif
