/* host_types.c: the example of docs/host-types.md.  A host class "inventory.Item"
 * backed by a C struct: constructor, methods, properties, and a destructor that runs
 * when Python drops the last reference.
 *   example_host_types [PYTHON_LIBRARY] */
#include "common.h"

#include <inttypes.h>

struct item {
  char name[64];
  int64_t count;
};

/* Item(name, count=0) */
static int item_new(pyhost *py, void *userdata, const pyhost_value *const *args, size_t nargs,
                    const pyhost_value *kwargs, void **payload) {
  (void)userdata;
  const char *name;
  int64_t count = 0;
  const pyhost_value *c = nargs > 1 ? args[1] : pyhost_value_lookup(kwargs, "count");
  if (nargs < 1 || nargs > 2) return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "Item(name, count=0)");
  if (pyhost_value_to_str(py, args[0], &name, NULL) != PYHOST_OK)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "Item(): name: %s", pyhost_errmsg(py));
  if (c && pyhost_value_to_int(py, c, &count) != PYHOST_OK)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "Item(): count: %s", pyhost_errmsg(py));
  struct item *it = calloc(1, sizeof *it);
  snprintf(it->name, sizeof it->name, "%s", name);
  it->count = count;
  *payload = it;
  return PYHOST_OK;
}

static void item_free(void *payload, void *userdata) {
  struct item *it = payload;
  (*(int *)userdata)++;
  printf("[C] freeing item %s\n", it->name);
  free(it);
}

/* item.take(n=1) -> what is left; ValueError when there is not enough */
static int item_take(pyhost *py, void *payload, void *userdata, const pyhost_value *const *args,
                     size_t nargs, const pyhost_value *kwargs, pyhost_value **result) {
  (void)userdata;
  (void)kwargs;
  struct item *it = payload;
  int64_t n = 1;
  if (nargs > 1 || (nargs == 1 && pyhost_value_to_int(py, args[0], &n) != PYHOST_OK))
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "take(n=1)");
  if (n > it->count)
    return pyhost_raise(py, PYHOST_EXC_VALUE_ERROR, "only %" PRId64 " %s left", it->count, it->name);
  it->count -= n;
  *result = pyhost_value_int(it->count);
  return PYHOST_OK;
}

static int get_name(pyhost *py, void *payload, void *userdata, pyhost_value **result) {
  (void)py;
  (void)userdata;
  *result = pyhost_value_str(((struct item *)payload)->name, PYHOST_STRLEN);
  return PYHOST_OK;
}

static int get_count(pyhost *py, void *payload, void *userdata, pyhost_value **result) {
  (void)py;
  (void)userdata;
  *result = pyhost_value_int(((struct item *)payload)->count);
  return PYHOST_OK;
}

static int set_count(pyhost *py, void *payload, void *userdata, const pyhost_value *v) {
  (void)userdata;
  int64_t n;
  if (pyhost_value_to_int(py, v, &n) != PYHOST_OK || n < 0)
    return pyhost_raise(py, PYHOST_EXC_VALUE_ERROR, "count must be an int >= 0");
  ((struct item *)payload)->count = n;
  return PYHOST_OK;
}

static const pyhost_method_def item_methods[] = {
    {"take", item_take, "take(n=1) -> how many are left"},
};
static const pyhost_property_def item_props[] = {
    {"name", get_name, NULL, "the item's name (read-only)"},
    {"count", get_count, set_count, "how many are in stock"},
};

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  int freed = 0;
  pyhost_module *inv = NULL;
  pyhost_type *item = NULL;
  pyhost_module_new(py, "inventory", NULL, &inv);
  pyhost_type_spec spec = {
      PYHOST_TYPE_SPEC_INIT, .name = "Item", .doc = "A stock item kept in C.",
      .methods = item_methods, .n_methods = 1,
      .properties = item_props, .n_properties = 2,
      .constructor = item_new, .destructor = item_free, .userdata = &freed,
      .flags = PYHOST_TYPE_SUBCLASSABLE | PYHOST_TYPE_WEAKREF};
  if (pyhost_type_new(py, inv, &spec, &item) != PYHOST_OK) {
    printf("type: %s\n", pyhost_errmsg(py));
    return 1;
  }

  run(py,
      "from inventory import Item\n"
      "bolts = Item('bolts', 10)\n"
      "print(Item.__doc__, '|', Item.take.__doc__)\n"
      "print(bolts.name, bolts.count, bolts.take(3), bolts.take())\n"
      "bolts.count += 100\n"
      "print('after restock:', bolts.count)\n"
      "for bad in ['bolts.take(1000)', 'Item(42)', 'setattr(bolts, \"name\", \"x\")', 'setattr(bolts, \"count\", -1)']:\n"
      "    try:\n"
      "        eval(bad)\n"
      "    except (TypeError, ValueError, AttributeError) as e:\n"
      "        print(bad, '->', type(e).__name__)\n"
      "print('dropping a temporary:', flush=True)\n"
      "Item('washers', 1)\n"
      "print('dropping bolts:', flush=True)\n"
      "del bolts\n");

  /* instances made by the host, read back in C */
  struct item *nuts = calloc(1, sizeof *nuts);
  snprintf(nuts->name, sizeof nuts->name, "nuts");
  nuts->count = 7;
  pyhost_value *v = NULL;
  pyhost_object_new(py, item, nuts, &v);
  pyhost_set_global(py, "nuts", v);
  run(py, "nuts.take(2)\nprint('Python sees', nuts.name, nuts.count)\n");
  void *p = NULL;
  if (pyhost_object_payload(py, v, item, &p) == PYHOST_OK)
    printf("C sees %s %" PRId64 "\n", ((struct item *)p)->name, ((struct item *)p)->count);
  pyhost_value *five = pyhost_value_int(5);
  if (pyhost_object_payload(py, five, item, &p) != PYHOST_OK) printf("payload(5): %s\n", pyhost_errmsg(py));
  pyhost_value_free(five);
  pyhost_value_free(v);          /* the host's reference */
  run(py, "del nuts\n");         /* Python's: the destructor runs now */
  printf("%d destructors ran\n", freed);
  pyhost_type_free(py, item);
  pyhost_module_free(py, inv);
  pyhost_free(py);
  return 0;
}
