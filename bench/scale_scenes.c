/* The scaling scenes' generator (scale_scenes.h). */
#include "scale_scenes.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char *const scale_kind_name[3] = {"spheres", "stacks", "bin"};

void scale_put(scale_text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (t->s && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)k + 64);
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
}

static int grid_side(int n) {
  int s = (int)ceil(sqrt((double)n));
  return s < 1 ? 1 : s;
}

double scale_bin_half(int n) {
  int side = grid_side((n + 3) / 4);
  return 0.5 * 0.15 * side + 0.1;
}

scale_pos scale_body_pos(scale_kind kind, int n, int k) {
  if (kind == SCALE_SPHERES) {
    int side = grid_side(n);
    return (scale_pos){0.15 * (k % side), 0.15 * (k / side), 0.05};
  }
  if (kind == SCALE_STACKS) {
    int col = k / 4, level = k % 4, side = grid_side((n + 3) / 4);
    return (scale_pos){0.3 * (col % side), 0.3 * (col / side), 0.05 + 0.1 * level};
  }
  /* bin: layers of side × side cubes 0.15 m apart, the first 0.2 m above the floor */
  int side = grid_side((n + 3) / 4), layer = k / (side * side), r = k % (side * side);
  double h = scale_bin_half(n) - 0.1;
  return (scale_pos){-h + 0.05 + 0.15 * (r % side), -h + 0.05 + 0.15 * (r / side),
                     0.25 + 0.15 * layer};
}

/* one wall of the bin: a 1 m high box of the given horizontal size and centre */
static void wall(scale_text *t, double sx, double sy, double px, double py) {
  scale_put(t, ",\n      {type: box, size: [%g, %g, 1.0], position: [%g, %g, 0.5], friction: 0.5}",
            sx, sy, px, py);
}

char *scale_moreau_scene(scale_kind kind, int n) {
  scale_text t = {0};
  scale_put(&t, "timestep: 0.001\nduration: 10\ncontact: {margin: 0.0}\nbodies:\n");
  scale_put(&t, "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}");
  if (kind == SCALE_BIN) {
    double h = scale_bin_half(n), w = 2 * h + 0.2;
    wall(&t, 0.1, w, h + 0.05, 0.0);
    wall(&t, 0.1, w, -h - 0.05, 0.0);
    wall(&t, w, 0.1, 0.0, h + 0.05);
    wall(&t, w, 0.1, 0.0, -h - 0.05);
  }
  scale_put(&t, "]}\n");
  for (int k = 0; k < n; ++k) {
    scale_pos p = scale_body_pos(kind, n, k);
    if (kind == SCALE_SPHERES)
      scale_put(&t,
                "  - {name: b%d, mass: 1, position: [%.6f, %.6f, %.6f], geoms: [{type: sphere, "
                "radius: 0.05, friction: 0.5}]}\n",
                k, p.x, p.y, p.z);
    else
      scale_put(&t,
                "  - {name: b%d, mass: 1, position: [%.6f, %.6f, %.6f], geoms: [{type: box, "
                "size: [0.1, 0.1, 0.1], friction: 0.5}]}\n",
                k, p.x, p.y, p.z);
  }
  return t.s;
}
