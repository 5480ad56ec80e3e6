/* Collision benchmark: contacts per second for n random spheres, boxes and capsules resting on
 * a plane (n = 1, 10, 100, 1000), and the cost of a query (broadphase + narrowphase) as n grows
 * at constant density (n = 100..10000, shapes jittered between frames so that the insertion sort
 * exploits coherence), with the growth exponent from a least-squares fit of log t on log n,
 * for sweep and prune, the dynamic AABB tree and brute force; and a humanoid-like robot of 40
 * geometries (the small scene the default broadphase must not slow down). Run: make bench (or
 * build/bench/bench/collision). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "moreau/collision.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* deterministic uniform numbers in [lo, hi) (splitmix64) */
static double urand(uint64_t *s, double lo, double hi) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* n shapes on bodies hanging from the world, and the ground. layout 1: resting on the plane on a
 * grid; 0: random in a cube of side spacing n^(1/3); 2: random in a strip along x of length
 * spacing n (2 m wide and high) */
static mr_model *scene(int n, int layout, double spacing, mr_se3 *X, uint64_t *s) {
  mr_model *m = mr_model_create("bench");
  mr_error err;
  mr_inertia I = {1.0, mr_v3_zero(), mr_m3_diag(0.01, 0.01, 0.01)};
  mr_geom ground = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_model_add_geom(m, &ground, &err);
  X[0] = mr_se3_identity();
  int side = (int)ceil(cbrt((double)n));
  int side2 = (int)ceil(sqrt((double)n));
  for (int i = 0; i < n; ++i) {
    int b = mr_model_add_body(m, 0, "j", MR_JOINT_FREE, mr_se3_identity(), mr_v3(0, 0, 1), "b", I,
                              &err);
    mr_geom_type t = i % 3 == 0 ? MR_GEOM_SPHERE : i % 3 == 1 ? MR_GEOM_BOX : MR_GEOM_CAPSULE;
    mr_geom g = mr_geom_default(t, b);
    for (int k = 0; k < 3; ++k)
      g.size[k] = urand(s, 0.05, 0.15);
    mr_model_add_geom(m, &g, &err);
    double yaw = urand(s, -3.1, 3.1), z;
    mr_mat3 R = mr_m3_rpy(t == MR_GEOM_CAPSULE ? M_PI / 2 : 0, 0, yaw);
    if (layout == 1) {
      z = t == MR_GEOM_BOX ? g.size[2] : g.size[0];
      X[i + 1] = mr_se3_make(R, mr_v3(spacing * (i % side2), spacing * (i / side2), z));
    } else if (layout == 2) {
      X[i + 1] = mr_se3_make(R, mr_v3(urand(s, 0, spacing * n), urand(s, 0, 2), urand(s, 0, 2)));
    } else {
      X[i + 1] = mr_se3_make(R, mr_v3(spacing * urand(s, 0, side), spacing * urand(s, 0, side),
                                      spacing * urand(s, 0, side)));
    }
  }
  return m;
}

static void bench_resting(void) {
  printf("resting on a plane (spheres, boxes, capsules; margin 1 mm)\n");
  printf("%8s %10s %14s %16s\n", "n", "contacts", "query (us)", "contacts/s");
  int ns[] = {1, 10, 100, 1000};
  for (int k = 0; k < 4; ++k) {
    int n = ns[k];
    uint64_t s = 7;
    mr_se3 *X = malloc((size_t)(n + 1) * sizeof *X);
    mr_model *m = scene(n, 1, 0.5, X, &s);
    mr_error err;
    mr_collision *c = mr_collision_create(m, NULL, 8 * n + 8, &err);
    int reps = 0;
    long contacts = 0;
    double t0 = now(), t;
    do {
      mr_collision_detect_geoms(c, X, &err);
      contacts += mr_collision_ncontacts(c);
      reps++;
    } while ((t = now() - t0) < 0.3);
    printf("%8d %10d %14.2f %16.3g\n", n, mr_collision_ncontacts(c), 1e6 * t / reps, contacts / t);
    mr_collision_free(c);
    mr_model_free(m);
    free(X);
  }
}

/* mean seconds per query over coherent frames */
static double query_time(mr_collision *c, mr_se3 *X, int n, uint64_t *s) {
  mr_error err;
  int reps = 0;
  double t0 = now(), t;
  do {
    for (int i = 1; i <= n; ++i)
      X[i].p.v[0] += urand(s, -0.002, 0.002);
    mr_collision_detect_geoms(c, X, &err);
    reps++;
  } while ((t = now() - t0) < 0.2);
  return t / reps;
}

/* slope of the least-squares line through (log n, log t) */
static double slope(const double *n, const double *t, int k) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < k; ++i) {
    double x = log(n[i]), y = log(t[i]);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

/* the slope that t = n log n would give over the same n */
static double nlogn_slope(const double *n, int k) {
  double t[16];
  for (int i = 0; i < k; ++i)
    t[i] = n[i] * log(n[i]);
  return slope(n, t, k);
}

/* one query's time with broadphase kind b, from the poses X0 and the generator state s (left
 * unchanged, so that every method sees the same frames); masks 0 leave the broadphase alone (no
 * pair passes the group/mask filter, so no narrowphase runs) */
static double timed(mr_model *m, const mr_se3 *X0, int n, mr_broadphase_kind b, uint64_t *s,
                    int *pairs) {
  mr_error err;
  mr_collision_settings cs = mr_collision_settings_default();
  cs.broadphase = b;
  mr_collision *c = mr_collision_create(m, &cs, 16 * n, &err);
  mr_se3 *X = malloc((size_t)m->ngeoms * sizeof *X);
  for (int i = 0; i < m->ngeoms; ++i)
    X[i] = X0[i];
  uint64_t seed = *s;
  double t = query_time(c, X, n, &seed);
  if (pairs) *pairs = mr_collision_get_stats(c).npairs;
  mr_collision_free(c);
  free(X);
  return t;
}

static void bench_growth(int layout) {
  printf("\ncost at constant density, %s, jittered frames\n",
         layout ? "random poses in a strip along x (0.1 m of strip per shape)"
                : "random poses in a cube (0.125 m^3 per shape)");
  printf("%6s %6s %11s %11s %10s %10s %11s\n", "n", "pairs", "query SAP", "query tree", "SAP only",
         "tree only", "brute only");
  enum { K = 5 };
  int ns[K] = {100, 300, 1000, 3000, 10000};
  double nn[K], tq[K], tqt[K], ts[K], tt[K], tb[K];
  for (int k = 0; k < K; ++k) {
    int n = ns[k], pairs = 0;
    uint64_t s = 9;
    mr_se3 *X = malloc((size_t)(n + 1) * sizeof *X);
    mr_model *m = scene(n, layout, layout ? 0.1 : 0.5, X, &s);
    nn[k] = n;
    tq[k] = timed(m, X, n, MR_BROADPHASE_SAP, &s, &pairs);
    tqt[k] = timed(m, X, n, MR_BROADPHASE_TREE, &s, NULL);
    for (int i = 0; i < m->ngeoms; ++i)
      m->geoms[i].mask = 0;
    ts[k] = timed(m, X, n, MR_BROADPHASE_SAP, &s, NULL);
    tt[k] = timed(m, X, n, MR_BROADPHASE_TREE, &s, NULL);
    tb[k] = timed(m, X, n, MR_BROADPHASE_BRUTE, &s, NULL);
    printf("%6d %6d %11.1f %11.1f %10.1f %10.1f %11.1f\n", n, pairs, 1e6 * tq[k], 1e6 * tqt[k],
           1e6 * ts[k], 1e6 * tt[k], 1e6 * tb[k]);
    mr_model_free(m);
    free(X);
  }
  printf("growth exponent (log-log fit): query SAP %.2f, query tree %.2f, SAP only %.2f, tree "
         "only %.2f, brute only %.2f (n log n on this range: %.2f)\n",
         slope(nn, tq, K), slope(nn, tqt, K), slope(nn, ts, K), slope(nn, tt, K), slope(nn, tb, K),
         nlogn_slope(nn, K));
}

/* a humanoid-like robot (Talos: ~40 collision geometries): a chain-structured tree of 20 bodies
 * (torso, head, two arms, two legs) with two geometries each, packed in a 0.6 x 0.4 x 1.8 m
 * volume, standing on a ground plane; the poses are jittered between frames */
static mr_model *robot(mr_se3 *X, uint64_t *s) {
  mr_model *m = mr_model_create("robot");
  mr_error err;
  mr_inertia I = {1.0, mr_v3_zero(), mr_m3_diag(0.01, 0.01, 0.01)};
  mr_geom ground = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_model_add_geom(m, &ground, &err);
  X[0] = mr_se3_identity();
  /* limbs: torso chain (4 bodies), head, 2 arms and 2 legs of 4 bodies as chains off the torso */
  int parent_of[20] = {0, 1, 2, 3, 4, 3, 6, 7, 8, 3, 10, 11, 12, 1, 14, 15, 16, 1, 18, 19};
  double cx[5] = {0, 0, -0.25, 0.25, 0};
  int ng = 1;
  for (int b = 0; b < 20; ++b) {
    int id = mr_model_add_body(m, parent_of[b], "j", MR_JOINT_REVOLUTE, mr_se3_identity(),
                               mr_v3(0, 1, 0), "b", I, &err);
    int limb = b < 5 ? 0 : b < 9 ? 2 : b < 13 ? 3 : b < 17 ? 2 : 3;
    double z = b < 5    ? 1.0 + 0.15 * b
               : b < 13 ? 1.4 - 0.15 * ((b - 5) % 4)
                        : 0.9 - 0.25 * ((b - 13) % 4);
    double x = cx[limb] * (b < 13 ? 1.0 : 0.4);
    for (int k = 0; k < 2; ++k) {
      mr_geom g = mr_geom_default(k ? MR_GEOM_BOX : MR_GEOM_CAPSULE, id);
      g.size[0] = urand(s, 0.04, 0.08), g.size[1] = urand(s, 0.04, 0.08);
      g.size[2] = urand(s, 0.05, 0.1);
      mr_model_add_geom(m, &g, &err);
      X[ng++] = mr_se3_make(mr_m3_identity(),
                            mr_v3(x + urand(s, -0.05, 0.05), urand(s, -0.1, 0.1), z + 0.05 * k));
    }
  }
  return m;
}

static void bench_robot(void) {
  uint64_t s = 5;
  mr_se3 X[41];
  mr_model *m = robot(X, &s);
  int n = m->ngeoms - 1, pairs = 0;
  double q[3], b[3];
  mr_broadphase_kind kinds[3] = {MR_BROADPHASE_SAP, MR_BROADPHASE_TREE, MR_BROADPHASE_BRUTE};
  for (int k = 0; k < 3; ++k)
    q[k] = timed(m, X, n, kinds[k], &s, k == 0 ? &pairs : NULL);
  for (int i = 0; i < m->ngeoms; ++i)
    m->geoms[i].mask = 0;
  for (int k = 0; k < 3; ++k)
    b[k] = timed(m, X, n, kinds[k], &s, NULL);
  printf("\nhumanoid-like robot, %d geometries on 20 bodies and a ground plane, %d pairs\n", n,
         pairs);
  printf("%8s %12s %12s\n", "", "query (us)", "broadphase only (us)");
  const char *names[3] = {"SAP", "tree", "brute"};
  for (int k = 0; k < 3; ++k)
    printf("%8s %12.2f %12.2f\n", names[k], 1e6 * q[k], 1e6 * b[k]);
  mr_model_free(m);
}

int main(void) {
  bench_resting();
  bench_growth(0);
  bench_growth(2);
  bench_robot();
  return 0;
}
