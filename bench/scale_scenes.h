/* The scaling scenes of bench/scale.c, shared with bench/corpus.c (scale_scenes.c):
 *   spheres  N spheres (r 5 cm, 1 kg) resting on a plane, one contact each, 0.15 m apart;
 *   stacks   N/4 columns of 4 cubes (10 cm, 1 kg) resting on a plane, 0.3 m apart;
 *   bin      N cubes (10 cm, 1 kg) dropped in layers into a bin (floor and four walls).
 * Δt = 1 ms, μ = 0.5, no margin. */
#ifndef MOREAU_BENCH_SCALE_SCENES_H
#define MOREAU_BENCH_SCALE_SCENES_H

#include <stddef.h>

typedef enum { SCALE_SPHERES, SCALE_STACKS, SCALE_BIN } scale_kind;
extern const char *const scale_kind_name[3];

/* a growable text buffer */
typedef struct {
  char *s;
  size_t n, cap;
} scale_text;

/* append printf-formatted text (aborts when out of memory) */
void scale_put(scale_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* body k's initial centre (m) */
typedef struct {
  double x, y, z;
} scale_pos;
scale_pos scale_body_pos(scale_kind kind, int n, int k);

/* the bin's inner half width (m): cubes fill it about half in the horizontal */
double scale_bin_half(int n);

/* the scene as moreau YAML (caller frees) */
char *scale_moreau_scene(scale_kind kind, int n);

#endif
