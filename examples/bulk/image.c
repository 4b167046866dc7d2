/* image.c: the example of docs/values.md, "Bulk data": a host lends a grayscale image
 * to a numpy plugin, which inverts it in place and returns a new image of its edges;
 * the host reads that result where numpy keeps it.  No pixel is copied from 3.11 on
 * (before 3.11 the loan is a copy; docs/values.md says why).
 *   example_image PYTHON_LIBRARY PLUGIN_DIR/filters.py
 * Exits 77 (skipped) when numpy does not import for that Python. */
#include <pyhost.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 12, H = 4 };

/* The loan's free callback: runs once Python reads the pixels no more; from then on
 * they are the host's alone again. */
static void image_returned(void *data, void *userdata) {
  (void)data;
  *(int *)userdata = 1;
}

/* One row of digits per image row: the pixel value / 26 (0-9). */
static void print_image(const char *title, const uint8_t *px, ptrdiff_t row_stride) {
  printf("%s:\n", title);
  for (int y = 0; y < H; y++) {
    printf("  ");
    for (int x = 0; x < W; x++) putchar('0' + px[y * row_stride + x] / 26);
    putchar('\n');
  }
}

static int fail(pyhost *py, const char *what) {
  fprintf(stderr, "%s: %s\n", what, pyhost_errmsg(py));
  pyhost_free(py);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: example_image PYTHON_LIBRARY PLUGIN\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  pyhost_config *cfg = pyhost_config_new();
  pyhost_config_set_library(cfg, argv[1]);
  pyhost *py = NULL;
  int rc = pyhost_init(cfg, &py);
  pyhost_config_free(cfg);
  if (rc != PYHOST_OK) return fail(py, "cannot start Python");

  pyhost_plugin *filters = NULL;
  if (pyhost_plugin_load(py, argv[2], &filters) != PYHOST_OK) {
    int no_numpy = strcmp(pyhost_errtype(py), "ModuleNotFoundError") == 0 &&
                   strstr(pyhost_errtext(py), "numpy") != NULL;
    fprintf(stderr, "%s\n", pyhost_errmsg(py));
    pyhost_free(py);
    return no_numpy ? 77 : 1;
  }

  /* A horizontal ramp with a bright square in it. */
  uint8_t *img = malloc(W * H);
  if (!img) return fail(py, "out of memory");
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) img[y * W + x] = (uint8_t)(x * 20);
  for (int y = 1; y < 3; y++)
    for (int x = 4; x < 7; x++) img[y * W + x] = 255;
  print_image("image", img, W);

  int returned = 0;
  pyhost_buffer_spec spec = {img, "B", 2, {H, W}, 1, image_returned, &returned};
  pyhost_buffer *loan = NULL;
  if (pyhost_buffer_new(py, &spec, &loan) != PYHOST_OK) return fail(py, "lending the image");

  /* The plugin writes into the host's image... */
  if (pyhost_plugin_callf(py, filters, "invert", "m", loan) != PYHOST_OK)
    return fail(py, "invert");
  /* ...and returns a new array, which the host reads where numpy keeps it. */
  pyhost_view edges;
  if (pyhost_plugin_callf(py, filters, "edges", "m>w", loan, &edges) != PYHOST_OK)
    return fail(py, "edges");
  printf("edges: format %s, %d dimensions, %td x %td\n", edges.format, edges.ndim,
         edges.shape[0], edges.shape[1]);
  print_image("edges", edges.data, edges.strides[0]);
  pyhost_view_release(py, &edges); /* numpy may free its array now */

  /* The plugin kept nothing: the image comes back at once (before 3.11 with the
   * plugin's writes copied into it first). */
  size_t exports = 0;
  pyhost_buffer_release(py, loan, &exports);
  printf("exports left: %zu, image returned: %s\n", exports, returned ? "yes" : "no");
  print_image("image after invert", img, W);
  free(img);
  pyhost_plugin_unload(filters);
  pyhost_free(py);
  return 0;
}
