/* Collision in simulation: bodies resting on the manifolds of the general convex pairs, with
 * every rigid NCP solver (ncp-pgs, ncp-admm, ncp-stagproj), and a box and a plate settling on
 * sine, bumpy and file heightfields; resting sets and rolling on the short exact routines
 * (capsules and cylinders on the ground, on boxes, on each other) at their closed-form heights.
 *
 * - A capsule dropped 2 cm onto a box comes to rest on it: over the last 4 s of 5 s its centre
 *   stays within 1 mm of the resting height r + box top (the tolerance of the acceptance
 *   criterion; the exact rest height is a closed form, the 1 mm bounds the margin-deep
 *   penetration the contact model allows plus the solvers' residual).
 * - A cylinder and a convex mesh cube standing on a box or on a halfspace, started exactly
 *   resting, sink by at most 0.1 mm and drift horizontally by at most 0.1 mm over 5 s (a
 *   resting body under a 4-point manifold has a static equilibrium with zero motion; 0.1 mm is
 *   the acceptance bound, well above the solvers' per-step residual times 5000 steps).
 * - Heightfields: a box and a thin plate dropped 1 cm onto the sine, bumpy and file grounds for
 *   2 s: every step succeeds, the state stays finite, and the lowest point never sinks more than
 *   the geometry's depth can tolerate (Φ_N ≥ −5 mm: a body tunnelling through the surface would
 *   show Φ_N of the order of its own size). */
#include "test_util.h"

#include <string.h>

#include "moreau/collision.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

static const char *const solvers[] = {"ncp-pgs", "ncp-admm", "ncp-stagproj"};

/* a unit cube of half side 0.05 as OBJ (a convex mesh body) */
static void write_cube(const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int v = 0; v < 8; ++v)
    fprintf(f, "v %g %g %g\n", v & 1 ? 0.05 : -0.05, v & 2 ? 0.05 : -0.05, v & 4 ? 0.05 : -0.05);
  static const int q[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                              {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (int k = 0; k < 6; ++k)
    fprintf(f, "f %d %d %d %d\n", q[k][0] + 1, q[k][1] + 1, q[k][2] + 1, q[k][3] + 1);
  fclose(f);
}

static mr_sim *open_scene(const char *text, const char *solver, mr_scene *sc) {
  mr_error err = {0};
  if (mr_scene_parse(text, "collision_sim.yaml", ".", sc, &err)) fail_msg("scene: %s", err.msg);
  mr_sim *s = mr_sim_from_scene(sc, solver, &err);
  if (!s) fail_msg("%s: %s", solver, err.msg);
  return s;
}

/* run n steps; the free body's position history bounds: min and max z, max horizontal drift
 * from its start, from step `from` on */
typedef struct {
  double zmin, zmax, drift;
} track;

static track run(mr_sim *s, int n, int from, const char *what) {
  track t = {INFINITY, -INFINITY, 0};
  const double *q = mr_sim_q(s);
  double x0 = q[0], y0 = q[1];
  for (int k = 0; k < n; ++k) {
    mr_error err = {0};
    if (mr_sim_step(s, &err)) fail_msg("%s: step %d: %s", what, k, err.msg);
    q = mr_sim_q(s);
    if (!(isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]))) fail_msg("%s: NaN at %d", what, k);
    if (k < from) continue;
    t.zmin = fmin(t.zmin, q[2]), t.zmax = fmax(t.zmax, q[2]);
    t.drift = fmax(t.drift, hypot(q[0] - x0, q[1] - y0));
  }
  return t;
}

/* a capsule (r 0.05, length 0.6, lying along x) dropped 2 cm onto a fixed box (top z = 0.1):
 * rest height 0.15 ± 1 mm over the last 4 s */
static void test_capsule_drop(void **state) {
  static const char text[] =
      "timestep: 0.001\nduration: 5.0\ncontact: {margin: 0.001, baumgarte: 0.1}\n"
      "bodies:\n"
      "  - name: table\n    fixed: true\n"
      "    geoms: [{type: box, size: [2.0, 2.0, 0.2], friction: 0.8}]\n"
      "  - name: bar\n    mass: 1.0\n    position: [0.1, -0.05, 0.17]\n"
      "    orientation: [0.70710678118654752, 0, 0.70710678118654752, 0]\n"
      "    geoms: [{type: capsule, radius: 0.05, length: 0.6, friction: 0.8}]\n";
  for (int k = 0; k < 3; ++k) {
    mr_scene sc;
    mr_sim *s = open_scene(text, solvers[k], &sc);
    track t = run(s, 5000, 1000, solvers[k]);
    printf("capsule on box, %-13s z in [%.6f, %.6f]\n", solvers[k], t.zmin, t.zmax);
    assert_true(fabs(t.zmin - 0.15) <= 1e-3 && fabs(t.zmax - 0.15) <= 1e-3);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* a body standing on a fixed box (top z = 0.1) or on the ground plane, started at rest exactly
 * touching: sinks and drifts by at most 0.1 mm over 5 s */
static void standing(const char *geom, double half_height, int on_box) {
  char text[1200];
  double z0 = (on_box ? 0.1 : 0.0) + half_height;
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 5.0\ncontact: {margin: 0.001, baumgarte: 0.1}\n"
           "bodies:\n"
           "  - name: support\n    fixed: true\n    geoms: [%s]\n"
           "  - name: body\n    mass: 1.0\n    inertia: [0.002, 0.002, 0.002]\n"
           "    position: [0.05, 0.02, %.17g]\n"
           "    orientation: [0, 0, 0.19866933079506122, 0.98006657784124163]\n"
           "    geoms: [%s]\n",
           on_box ? "{type: box, size: [1.0, 1.0, 0.2], friction: 0.8}"
                  : "{type: halfspace, friction: 0.8}",
           z0, geom);
  for (int k = 0; k < 3; ++k) {
    mr_scene sc;
    mr_sim *s = open_scene(text, solvers[k], &sc);
    track t = run(s, 5000, 0, solvers[k]);
    printf("%.40s on %s, %-13s sink %.3g m, drift %.3g m\n", geom, on_box ? "box" : "plane",
           solvers[k], z0 - t.zmin, t.drift);
    assert_true(z0 - t.zmin <= 1e-4 && t.zmax - z0 <= 1e-4);
    assert_true(t.drift <= 1e-4);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

static void test_cylinder_standing(void **state) {
  const char *g = "{type: cylinder, radius: 0.05, length: 0.2, friction: 0.8}";
  standing(g, 0.1, 1);
  standing(g, 0.1, 0);
}

static void test_mesh_standing(void **state) {
  write_cube("build/collision_sim_cube.obj");
  const char *g = "{type: mesh, file: build/collision_sim_cube.obj, friction: 0.8}";
  standing(g, 0.05, 1);
  standing(g, 0.05, 0);
}

/* whether the step's contacts have the keys of the previous step (key[0..*n) updated) */
static int same_keys(const mr_sim *s, uint64_t *key, int *n) {
  const mr_contact *c;
  int nc = mr_sim_contacts(s, &c, NULL), same = nc == *n;
  for (int i = 0; same && i < nc; ++i) {
    int found = 0;
    for (int j = 0; j < *n; ++j)
      found |= c[i].key == key[j];
    same = found;
  }
  for (int i = 0; i < nc && i < 16; ++i)
    key[i] = c[i].key;
  *n = nc;
  return same;
}

/* a cube (10 cm, 1 kg) resting on the ground and an equal cube dropped onto it, tilted: once
 * the pair has settled the column is at rest on two face-on-face manifolds, which a step must
 * not change: from step 500 to 1500 the same 8 keys every step (4 on the ground, 4 between the
 * cubes; an unchanged geometry has one contact set, and each persisting contact keeps its key,
 * docs/collision.md), and the centres at their rest heights 0.05 and 0.15 m within 1e-6 m (the
 * rest depth 1e-12 m per contact is far below it; a rocking or bouncing cube leaves it).
 * Margin 0 with a 0.05 rad tilt and 2 cm offset dropped from 5 cm: the rotation of a step lifts
 * resting corners 1e-10 m above the aimed depth, where a detection threshold exactly at Φ = 0
 * lost the contacts every other step (the contact skin keeps them). Margin 1 mm with a 1e-3 rad
 * tilt dropped 1 mm: the two faces at rest are parallel to round-off, where the reference face
 * of the box-box manifold changed sides every few steps. ccp-pgs is left out at margin 0: its
 * cone makes a sliding contact act at a distance, and the column keeps rocking. */
static void column_at_rest(const char *margin, double drop, double tilt, double offset) {
  char text[1200];
  snprintf(
      text, sizeof text,
      "timestep: 0.001\nduration: 2.0\ncontact: {margin: %s}\n"
      "bodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n"
      "  - {name: a, mass: 1, position: [0, 0, 0.05],\n"
      "     geoms: [{type: box, size: [0.1, 0.1, 0.1], friction: 0.5}]}\n"
      "  - {name: b, mass: 1, position: [%.17g, 0, %.17g], orientation: [%.17g, 0, 0, %.17g],\n"
      "     geoms: [{type: box, size: [0.1, 0.1, 0.1], friction: 0.5}]}\n",
      margin, offset, 0.15 + drop, sin(tilt / 2), cos(tilt / 2));
  static const char *const ncp[] = {"ncp-hybrid", "ncp-pgs", "ncp-admm", "ncp-stagproj"};
  for (int k = 0; k < 4; ++k) {
    mr_scene sc;
    mr_sim *s = open_scene(text, ncp[k], &sc);
    uint64_t key[16];
    int n = 0, changed = 0;
    double dz = 0.0;
    for (int step = 0; step < 1500; ++step) {
      mr_error err = {0};
      if (mr_sim_step(s, &err)) fail_msg("%s: step %d: %s", ncp[k], step, err.msg);
      int same = same_keys(s, key, &n);
      if (step <= 500) continue;
      const double *q = mr_sim_q(s);
      changed += !same || n != 8;
      dz = fmax(dz, fmax(fabs(q[2] - 0.05), fabs(q[9] - 0.15)));
    }
    printf("column, margin %s, %-12s steps 500-1500: %d with another contact set, |Δz| %.2g m\n",
           margin, ncp[k], changed, dz);
    assert_int_equal(changed, 0);
    assert_true(dz <= 1e-6);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

static void test_column_keeps_contacts(void **state) {
  column_at_rest("0.0", 0.05, 0.05, 0.02);
  column_at_rest("0.001", 0.001, 1e-3, 0.0);
}

/* A scene resting from its start, stepped 1500 steps with ncp-hybrid, ncp-pgs and ncp-admm: from
 * step 500 on, every step has the same contacts (keys, in any order) and nc of them, and free
 * body k's centre stays at height z[k] within 1e-6 m (the closed-form rest height; the contact
 * model aims at Φ = −1e-12 m per contact, and the solvers' residual moves a body by far less over
 * 1000 steps: measured below 1e-10 m). */
static void rests(const char *what, const char *bodies, int nc, int nbodies, const double *z) {
  char text[2000];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 1.5\ncontact: {margin: 0.0}\nbodies:\n"
           "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.8}]}\n%s",
           bodies);
  static const char *const ncp[] = {"ncp-hybrid", "ncp-pgs", "ncp-admm"};
  for (int k = 0; k < 3; ++k) {
    mr_scene sc;
    mr_sim *s = open_scene(text, ncp[k], &sc);
    uint64_t key[16];
    int n = 0, changed = 0;
    double dz = 0.0;
    for (int step = 0; step < 1500; ++step) {
      mr_error err = {0};
      if (mr_sim_step(s, &err)) fail_msg("%s, %s: step %d: %s", what, ncp[k], step, err.msg);
      int same = same_keys(s, key, &n);
      if (step < 500) continue;
      changed += !same || n != nc;
      for (int b = 0; b < nbodies; ++b)
        dz = fmax(dz, fabs(mr_sim_q(s)[7 * b + 2] - z[b]));
    }
    printf("%s, %-10s steps 500-1500: %d contacts, %d steps with another contact set, |z − z*| "
           "%.2g m\n",
           what, ncp[k], n, changed, dz);
    assert_int_equal(changed, 0);
    assert_true(dz <= 1e-6);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* resting on the short exact routines (cylinder.c) and capsule–capsule, each from its
 * closed-form rest pose: a capsule (r 5 cm, 30 cm between its end centres) on its side on the
 * ground: its two end contacts, centre at z = r; the same capsule on a box (top z = 0.1): centre
 * at 0.15 (capsule–box); a cylinder (r 5 cm, 20 cm long) standing on the box, turned 0.4 rad:
 * 4 contacts, z = 0.2 (box–cylinder); a cylinder standing on a cylinder standing on the ground:
 * 4 + 4 contacts, z = 0.1 and 0.3 (cylinder–cylinder); a capsule on its side in the groove of two
 * parallel capsules lying 12 cm apart on the ground: two line contacts of 2 points each and the
 * lower capsules' 2 + 2 on the ground, z = r for the lower and r + sqrt((2r)² − 0.06²) = 0.13 for
 * the upper one (capsule–capsule; μ = 0.8 holds the lower ones, which need tan(θ/2) = 0.33) */
static void test_resting_sets(void **state) {
  const char *lying = "orientation: [0, 0.70710678118654752, 0, 0.70710678118654752]";
  const char *cap = "geoms: [{type: capsule, radius: 0.05, length: 0.3, friction: 0.8}]";
  const char *cyl = "geoms: [{type: cylinder, radius: 0.05, length: 0.2, friction: 0.8}]";
  char b[1500];
  double z1[1] = {0.05};
  snprintf(b, sizeof b, "  - {name: c, mass: 1, position: [0.1, 0.2, 0.05], %s, %s}\n", lying, cap);
  rests("capsule on its side", b, 2, 1, z1);
  const char *table = "  - {name: table, fixed: true, position: [0, 0, 0.05], geoms: [{type: box, "
                      "size: [1, 1, 0.1], friction: 0.8}]}\n";
  double z2[1] = {0.15};
  snprintf(b, sizeof b, "%s  - {name: c, mass: 1, position: [0.1, 0.2, 0.15], %s, %s}\n", table,
           lying, cap);
  rests("capsule on a box", b, 2, 1, z2);
  double z3[1] = {0.2};
  snprintf(b, sizeof b,
           "%s  - {name: c, mass: 1, position: [0.1, 0.2, 0.2], orientation: [0, 0, "
           "0.19866933079506122, 0.98006657784124163], %s}\n",
           table, cyl);
  rests("cylinder on a box", b, 4, 1, z3);
  double z4[2] = {0.1, 0.3};
  snprintf(b, sizeof b,
           "  - {name: c1, mass: 1, position: [0.1, 0.2, 0.1], %s}\n"
           "  - {name: c2, mass: 1, position: [0.12, 0.21, 0.3], orientation: [0, 0, "
           "0.19866933079506122, 0.98006657784124163], %s}\n",
           cyl, cyl);
  rests("cylinder on a cylinder", b, 8, 2, z4);
  double z5[3] = {0.05, 0.05, 0.13};
  snprintf(b, sizeof b,
           "  - {name: l1, mass: 1, position: [0, -0.06, 0.05], %s, %s}\n"
           "  - {name: l2, mass: 1, position: [0, 0.06, 0.05], %s, %s}\n"
           "  - {name: top, mass: 1, position: [0, 0, 0.13], %s, %s}\n",
           lying, cap, lying, cap, lying, cap);
  rests("capsule on two capsules", b, 8, 3, z5);
}

/* the capsule on its side: its two contacts are its end spheres' lowest points, on the ground
 * (z = 0, Φ = 0 to the 1e-12 m the step aims at) 0.15 m either side of its centre along x */
static void test_capsule_end_contacts(void **state) {
  static const char text[] =
      "timestep: 0.001\nduration: 1.0\ncontact: {margin: 0.0}\nbodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.8}]}\n"
      "  - {name: c, mass: 1, position: [0.1, 0.2, 0.05], orientation: [0, 0.70710678118654752, "
      "0, 0.70710678118654752], geoms: [{type: capsule, radius: 0.05, length: 0.3, friction: "
      "0.8}]}\n";
  mr_scene sc;
  mr_sim *s = open_scene(text, "ncp-hybrid", &sc);
  for (int step = 0; step < 500; ++step) {
    mr_error err = {0};
    if (mr_sim_step(s, &err)) fail_msg("capsule: step %d: %s", step, err.msg);
  }
  const mr_contact *c;
  int nc = mr_sim_contacts(s, &c, NULL), ends = 0;
  assert_int_equal(nc, 2);
  for (int i = 0; i < nc; ++i) {
    assert_true(fabs(c[i].point.v[2]) <= 1e-9 && fabs(c[i].phi) <= 1e-9);
    assert_true(fabs(c[i].point.v[1] - 0.2) <= 1e-9);
    ends |= fabs(c[i].point.v[0] - 0.25) <= 1e-9 ? 1 : fabs(c[i].point.v[0] + 0.05) <= 1e-9 ? 2 : 0;
  }
  assert_int_equal(ends, 3);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a cylinder (r 5 cm, 20 cm long) lying along y, rolling without slipping along x at 1 m/s
 * (ω = v / r = 20 rad/s about y) on the ground and on a box's top (z = 0.1; box–cylinder): its
 * side line's two end contacts carry it; over 1 s its axis stays at z = r (+ 0.1 on the box)
 * within 1e-6 m and its speed within 1e-3 m/s of 1 m/s (rolling dissipates nothing; the
 * contact's Φ is exact, so the axis height is the rest height to the solver's residual) */
static void test_cylinder_rolling(void **state) {
  for (int on_box = 0; on_box < 2; ++on_box) {
    char text[1500];
    double z0 = on_box ? 0.15 : 0.05;
    snprintf(text, sizeof text,
             "timestep: 0.001\nduration: 1.0\ncontact: {margin: 0.0}\nbodies:\n"
             "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 1.0}]}\n"
             "%s"
             "  - {name: c, mass: 1, position: [-0.5, 0, %.17g], orientation: "
             "[-0.70710678118654752, 0, 0, 0.70710678118654752], linear_velocity: [1, 0, 0], "
             "angular_velocity: [0, 20, 0], geoms: [{type: cylinder, radius: 0.05, length: 0.2, "
             "friction: 1.0}]}\n",
             on_box ? "  - {name: table, fixed: true, position: [0, 0, 0.05], geoms: [{type: box, "
                      "size: [3, 1, 0.1], friction: 1.0}]}\n"
                    : "",
             z0);
    mr_scene sc;
    mr_sim *s = open_scene(text, "ncp-hybrid", &sc);
    double dz = 0.0, dv = 0.0;
    for (int step = 0; step < 1000; ++step) {
      mr_error err = {0};
      if (mr_sim_step(s, &err)) fail_msg("rolling: step %d: %s", step, err.msg);
      const double *q = mr_sim_q(s);
      dz = fmax(dz, fabs(q[2] - z0));
    }
    /* the speed: the position over the last 100 steps */
    double x0 = mr_sim_q(s)[0];
    for (int step = 0; step < 100; ++step) {
      mr_error err = {0};
      if (mr_sim_step(s, &err)) fail_msg("rolling: %s", err.msg);
    }
    dv = fabs((mr_sim_q(s)[0] - x0) / 0.1 - 1.0);
    printf("cylinder rolling on %s: |z − z*| %.2g m, |v − 1| %.2g m/s\n",
           on_box ? "a box" : "the ground", dz, dv);
    assert_true(dz <= 1e-6);
    assert_true(dv <= 1e-3);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* a box and a plate dropped onto heightfields: every step runs, Φ_N stays above −5 mm */
static void settle(const char *ground, const char *body, double z) {
  char text[1200];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 1.0\ncontact: {margin: 0.001, baumgarte: 0.1}\n"
           "solver: {max_iter: 3000}\n"
           "bodies:\n"
           "  - name: ground\n    fixed: true\n    geoms: [%s]\n"
           "  - name: body\n    mass: 1.0\n    position: [0.1, 0.05, %.17g]\n"
           "    geoms: [%s]\n",
           ground, z, body);
  for (int k = 0; k < 3; ++k) {
    mr_scene sc;
    mr_sim *s = open_scene(text, solvers[k], &sc);
    double worst = INFINITY;
    for (int i = 0; i < 1000; ++i) {
      mr_error err = {0};
      if (mr_sim_step(s, &err)) fail_msg("%s: step %d: %s", solvers[k], i, err.msg);
      const mr_contact *c;
      const double *lam;
      int nc = mr_sim_contacts(s, &c, &lam);
      for (int j = 0; j < nc; ++j)
        worst = fmin(worst, c[j].phi);
      assert_true(isfinite(mr_sim_q(s)[2]));
    }
    printf("%.30s on %.40s, %-13s min Φ %.3g m, final z %.4f\n", body, ground, solvers[k], worst,
           mr_sim_q(s)[2]);
    assert_true(worst >= -5e-3);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

static void test_hfield_settle(void **state) {
  FILE *f = fopen("build/collision_sim_ground.txt", "w");
  assert_non_null(f);
  for (int j = 0; j < 41; ++j) {
    for (int i = 0; i < 41; ++i)
      fprintf(f, "%s%.6f", i ? " " : "", 0.02 * sin(0.5 * i) * cos(0.3 * j));
    fprintf(f, "\n");
  }
  fclose(f);
  const char *grounds[3] = {
      "{type: heightfield, function: sine, extent: [-1, 1, -1, 1], step: 0.02, amplitude: 0.03, "
      "wavelength: 0.8, friction: 0.8}",
      "{type: heightfield, function: bumpy, extent: [-1, 1, -1, 1], step: 0.02, friction: 0.8}",
      "{type: heightfield, file: build/collision_sim_ground.txt, extent: [-1, 1, -1, 1], "
      "friction: 0.8}"};
  for (int g = 0; g < 3; ++g) {
    settle(grounds[g], "{type: box, size: [0.2, 0.2, 0.1], friction: 0.8}", 0.45);
    settle(grounds[g], "{type: box, size: [0.4, 0.3, 0.02], friction: 0.8}", 0.45);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_capsule_drop),     cmocka_unit_test(test_cylinder_standing),
      cmocka_unit_test(test_mesh_standing),    cmocka_unit_test(test_column_keeps_contacts),
      cmocka_unit_test(test_hfield_settle),    cmocka_unit_test(test_resting_sets),
      cmocka_unit_test(test_cylinder_rolling), cmocka_unit_test(test_capsule_end_contacts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
