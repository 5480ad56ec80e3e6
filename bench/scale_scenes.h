/* The scenes of bench/scale.c, shared with bench/corpus.c and bench/collision.c
 * (scale_scenes.c). Scaling scenes (N bodies):
 *   spheres  N spheres (r 5 cm, 1 kg) resting on a plane, one contact each, 0.15 m apart;
 *   stacks   N/4 columns of 4 cubes (10 cm, 1 kg) resting on a plane, 0.3 m apart;
 *   bin      N cubes (10 cm, 1 kg) dropped in layers into a bin (floor and four walls).
 * The scenes users build (N fixed by the scene):
 *   mixed    N = 200 spheres (r 5 cm), capsules (r 4 cm, 12 cm between the caps' centres) and
 *            cylinders (r 5 cm, 10 cm long), a third each, 1 kg, dropped tilted in layers into
 *            a bin;
 *   tower    one column of N = 10 cubes (10 cm, 1 kg) resting at touch;
 *   pyramid  N = 55 cubes (10 cm, 1 kg) in square layers of 5², 4², 3², 2², 1, 1 mm apart
 *            within a layer, each upper cube resting on four lower ones;
 *   chain    a chain of N = 50 capsule links (r 1 cm, 3 cm between joints, 50 g) on revolute
 *            joints with alternating axes, hanging from a fixed anchor 1 m up, released
 *            horizontal: it swings down and drapes on the ground;
 *   robots   N = 10 Solo-12 standing side by side under their PD posture controller (kp 20,
 *            kd 0.5, as scenes/solo_stand.yaml).
 * Δt = 1 ms, μ = 0.5 (robots: 0.9), no margin. */
#ifndef MOREAU_BENCH_SCALE_SCENES_H
#define MOREAU_BENCH_SCALE_SCENES_H

#include <stddef.h>

typedef enum {
  SCALE_SPHERES,
  SCALE_STACKS,
  SCALE_BIN,
  SCALE_MIXED,
  SCALE_TOWER,
  SCALE_PYRAMID,
  SCALE_CHAIN,
  SCALE_ROBOTS,
  SCALE_KINDS
} scale_kind;
extern const char *const scale_kind_name[SCALE_KINDS];

/* the scene's fixed size (mixed, tower, pyramid, chain, robots), 0 for the scaling scenes */
int scale_fixed_size(scale_kind kind);

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

/* body k of a scene of free bodies (spheres ... pyramid): its shape and initial pose */
typedef enum {
  SCALE_SHAPE_SPHERE,
  SCALE_SHAPE_BOX,
  SCALE_SHAPE_CAPSULE,
  SCALE_SHAPE_CYLINDER
} scale_shape;
typedef struct {
  scale_shape shape;
  double radius, half; /* sphere, capsule, cylinder: radius, half length (m) */
  double box[3];       /* box: full sizes (m) */
  scale_pos p;         /* centre (m) */
  double quat[4];      /* orientation x y z w */
} scale_body;
scale_body scale_body_at(scale_kind kind, int n, int k);

/* the bin's inner half width (m): bodies fill it about half in the horizontal */
double scale_bin_half(scale_kind kind, int n);

/* the scene as moreau YAML (caller frees); the chain's URDF is written to urdf_path (a writable
 * file name; unused by the other scenes) */
char *scale_moreau_scene(scale_kind kind, int n, const char *urdf_path);

/* the scene as MuJoCo MJCF (caller frees): the same bodies, shapes, masses and contacts, Newton
 * solver (tolerance 1e-8, at most 100 iterations), elliptic cones, condim 3; robots: the model
 * of solo_xml (bench/mjcf/solo_push.xml's text) replicated n times, names prefixed "rK/".
 * NULL when solo_xml lacks its base body. */
char *scale_mujoco_scene(scale_kind kind, int n, const char *solo_xml);

#endif
