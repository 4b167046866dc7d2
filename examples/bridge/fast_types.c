/* fast_types.c: the hot-path example of docs/host-types.md.  A host type in the fast
 * form: the C struct lives inside each Python object (payload_size: creating one
 * allocates the object and nothing else), the constructor, methods and properties read
 * their arguments on demand straight into C and set their results in place, and a
 * wrong argument reaches Python as TypeError.
 *   example_fast_types [PYTHON_LIBRARY] */
#include "common.h"

/* The payload: pyhost zeroes it, the constructor fills it in place. */
struct vec {
  double x, y;
};

/* Vec(x=0.0, y=0.0) */
static int vec_new(pyhost *py, void *userdata, const pyhost_args *args, void **payload) {
  (void)userdata;
  struct vec *v = *payload; /* inside the new object */
  int rc;
  if (pyhost_args_kwcount(args) || pyhost_args_count(args) > 2)
    return pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "Vec(x=0.0, y=0.0)");
  if (pyhost_args_count(args) > 0 && (rc = pyhost_args_float(py, args, 0, &v->x))) return rc;
  if (pyhost_args_count(args) > 1 && (rc = pyhost_args_float(py, args, 1, &v->y))) return rc;
  return PYHOST_OK;
}

/* v.scale(factor) -> v, scaled in place */
static int vec_scale(pyhost *py, void *payload, void *userdata, const pyhost_args *args,
                     pyhost_ret *ret) {
  (void)userdata;
  (void)ret;
  struct vec *v = payload;
  double f;
  int rc = pyhost_args_float(py, args, 0, &f); /* TypeError for anything but a number */
  if (rc) return rc;
  v->x *= f;
  v->y *= f;
  return PYHOST_OK; /* None */
}

/* v.dot(w) -> float: w is another Vec, read through its payload */
static pyhost_type *vec_type;
static int vec_dot(pyhost *py, void *payload, void *userdata, const pyhost_args *args,
                   pyhost_ret *ret) {
  (void)userdata;
  const struct vec *v = payload;
  pyhost_value *other = NULL;
  void *w = NULL;
  int rc = pyhost_args_value(py, args, 0, &other);
  if (!rc && pyhost_object_payload(py, other, vec_type, &w) != PYHOST_OK)
    rc = pyhost_raise(py, PYHOST_EXC_TYPE_ERROR, "dot(): %s", pyhost_errmsg(py));
  pyhost_value_free(other);
  if (rc) return rc;
  const struct vec *u = w;
  return pyhost_ret_float(py, ret, v->x * u->x + v->y * u->y);
}

static int vec_get_x(pyhost *py, void *payload, void *userdata, pyhost_ret *ret) {
  (void)userdata;
  return pyhost_ret_float(py, ret, ((struct vec *)payload)->x);
}
static int vec_set_x(pyhost *py, void *payload, void *userdata, const pyhost_args *value) {
  (void)userdata;
  return pyhost_args_float(py, value, 0, &((struct vec *)payload)->x); /* the new value */
}
static int vec_get_norm2(pyhost *py, void *payload, void *userdata, pyhost_ret *ret) {
  (void)userdata;
  const struct vec *v = payload;
  return pyhost_ret_float(py, ret, v->x * v->x + v->y * v->y);
}

static const pyhost_fast_method_def vec_methods[] = {
    {"scale", vec_scale, "scale(factor): scales the vector in place"},
    {"dot", vec_dot, "dot(w) -> the dot product"},
};
static const pyhost_fast_property_def vec_props[] = {
    {"x", vec_get_x, vec_set_x, "the x coordinate"},
    {"norm2", vec_get_norm2, NULL, "the squared length (read-only)"},
};

int main(int argc, char **argv) {
  pyhost *py = example_start(argc, argv);
  pyhost_module *geo = NULL;
  pyhost_module_new(py, "geo", "Geometry done in C.", &geo);
  pyhost_type_spec spec = {PYHOST_TYPE_SPEC_INIT};
  spec.name = "Vec";
  spec.doc = "A 2-D vector kept inside the object.";
  spec.fast_methods = vec_methods;
  spec.n_fast_methods = 2;
  spec.fast_properties = vec_props;
  spec.n_fast_properties = 2;
  spec.fast_constructor = vec_new;
  spec.payload_size = sizeof(struct vec); /* inline: no allocation of its own */
  spec.flags = PYHOST_TYPE_SUBCLASSABLE;
  if (pyhost_type_new(py, geo, &spec, &vec_type) != PYHOST_OK) {
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    return 1;
  }

  run(py, "import geo\n"
          "v = geo.Vec(3, 4)\n"
          "print(v.norm2, v.dot(geo.Vec(1, 1)))\n"
          "v.scale(2)\n"
          "v.x = 0.5\n"
          "print(v.x, v.norm2)\n"
          "print(sum(geo.Vec(i, i).dot(geo.Vec(1, 0)) for i in range(100)))\n");
  run(py, "v.scale('twice')");
  run(py, "v.dot(3)");
  run(py, "v.norm2 = 1");
  run(py, "geo.Vec(1, 2, 3)");

  /* the host makes one too: payload_size bytes copied in, then the C struct is its own */
  struct vec unit = {1, 0};
  pyhost_value *u = NULL;
  void *p = NULL;
  pyhost_object_new(py, vec_type, &unit, &u);
  pyhost_set_global(py, "u", u);
  run(py, "u.scale(5)\nprint(u.x, v.dot(u))\n");
  pyhost_object_payload(py, u, vec_type, &p);
  printf("from C: x = %g, the host's struct still %g\n", ((struct vec *)p)->x, unit.x);
  pyhost_value_free(u);

  pyhost_type_free(py, vec_type);
  pyhost_module_free(py, geo);
  pyhost_free(py);
  return 0;
}
