/* lifetimes.c: the example of docs/lifetimes.md.  What happens when the host destroys
 * a C object that Python still holds, when Python keeps a host function the host
 * unregistered, and at finalize.
 *   example_lifetimes [PYTHON_LIBRARY] */
#include "common.h"

struct window {
  int id;
};

static int window_id(pyhost *py, void *payload, void *userdata, pyhost_value **result) {
  (void)py;
  (void)userdata;
  *result = pyhost_value_int(((struct window *)payload)->id);
  return PYHOST_OK;
}

static void window_gone(void *payload, void *userdata) {
  (void)userdata;
  printf("[C] destructor for window %d\n", ((struct window *)payload)->id);
}

static int hello(pyhost *py, void *userdata, const pyhost_value *const *args, size_t nargs,
                 const pyhost_value *kwargs, pyhost_value **result) {
  (void)py;
  (void)userdata;
  (void)args;
  (void)nargs;
  (void)kwargs;
  *result = pyhost_value_str("hello from C", PYHOST_STRLEN);
  return PYHOST_OK;
}

static const pyhost_property_def window_props[] = {{"id", window_id, NULL, NULL}};

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  pyhost_module *ed = NULL;
  pyhost_type *wt = NULL;
  pyhost_module_new(py, "editor", NULL, &ed);
  pyhost_module_add_function(py, ed, "hello", hello, NULL, NULL);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT, .name = "Window", .properties = window_props, .n_properties = 1,
                           .destructor = window_gone};
  pyhost_type_new(py, ed, &spec, &wt);

  /* 1. The host owns a window and gives Python a wrapper; it keeps its own reference. */
  struct window *w1 = malloc(sizeof *w1);
  w1->id = 1;
  pyhost_value *wrapper = NULL;
  pyhost_object_new(py, wt, w1, &wrapper);
  pyhost_set_global(py, "win", wrapper);
  run(py, "import editor\nkept = [win]\nprint('window id', win.id)\n");
  /* The user closes the window: invalidate the wrapper, then free the C object. */
  pyhost_object_invalidate(py, wrapper, wt);
  free(w1);
  pyhost_value_free(wrapper);
  run(py, "try:\n    kept[0].id\nexcept ReferenceError as e:\n    print('ReferenceError:', e)\n");

  /* 2. Python keeps a host function the host then unregisters. */
  run(py, "greet = editor.hello\nprint(greet())\n");
  pyhost_module_remove(py, ed, "hello");
  run(py, "try:\n    greet()\nexcept RuntimeError as e:\n    print('RuntimeError:', e)\n"
          "print('editor.hello still there:', hasattr(editor, 'hello'))\n");

  /* 3. Finalize: Python-owned payloads are destroyed as the interpreter frees them;
   * Python code running at exit may no longer call the host. */
  struct window *w2 = malloc(sizeof *w2);
  w2->id = 2;
  pyhost_object_new(py, wt, w2, &wrapper);
  pyhost_set_global(py, "last", wrapper);
  pyhost_value_free(wrapper); /* only __main__ holds it now */
  pyhost_module_add_function(py, ed, "hello", hello, NULL, NULL);
  run(py, "import atexit\n"
          "def bye():\n"
          "    try:\n"
          "        editor.hello()\n"
          "    except RuntimeError as e:\n"
          "        print('at exit:', e)\n"
          "atexit.register(bye)\n");
  fflush(stdout);
  printf("finalize: %s\n", pyhost_status_name(pyhost_finalize(py)));
  free(w2); /* the destructor printed; the host frees its memory */
  pyhost_value *r = NULL;
  printf("after finalize: %s\n", pyhost_status_name(pyhost_eval(py, "1", &r)));
  pyhost_type_free(py, wt);
  pyhost_module_free(py, ed); /* frees only C memory now */
  pyhost_free(py);
  return 0;
}
