/* Collision benchmark: the narrowphase per pair type (random poses near contact and resting
 * poses, and the pairs met in the mixed drop and the cube bin of bench/scale.c), contacts per
 * second for n random spheres, boxes and capsules resting on a plane (n = 1, 10, 100, 1000), and
 * the cost of a query (broadphase + narrowphase) as n grows
 * at constant density (n = 100..10000, shapes jittered between frames so that the insertion sort
 * exploits coherence), with the growth exponent from a least-squares fit of log t on log n,
 * for sweep and prune, the dynamic AABB tree and brute force; and a humanoid-like robot of 40
 * geometries (the small scene the default broadphase must not slow down). Run: make bench (or
 * build/bench/bench/collision). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "moreau/collision.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "scale_scenes.h"

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

/* ---- the narrowphase per pair type ---- */

static mr_se3 random_placement(uint64_t *s) {
  mr_quat q = {urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1)};
  return mr_se3_make(mr_quat_to_m3(mr_quat_normalize(q)),
                     mr_v3(urand(s, -1, 1), urand(s, -1, 1), urand(s, -1, 1)));
}

/* the gap of a and b along unit u: min_A ⟨u, x⟩ − max_B ⟨u, x⟩ */
static double gap_along(const mr_geom *a, const mr_se3 *Xa, const mr_geom *b, const mr_se3 *Xb,
                        mr_vec3 u) {
  mr_vec3 sa = mr_se3_act_point(Xa, mr_geom_support(a, mr_m3_tmulv(&Xa->R, mr_v3_neg(u))));
  if (b->type == MR_GEOM_HALFSPACE) return mr_v3_dot(u, sa) - mr_v3_dot(u, Xb->p);
  mr_vec3 sb = mr_se3_act_point(Xb, mr_geom_support(b, mr_m3_tmulv(&Xb->R, u)));
  return mr_v3_dot(u, mr_v3_sub(sa, sb));
}

enum { POSES = 2000 };

/* POSES poses of the pair (ta, tb): random rotations (resting = 0) or b's rotation turned by
 * quarter turns with a lying along one of b's axes (resting = 1); a moved along u (a halfspace's
 * normal) to a gap in [lo, hi] */
static void pair_poses(mr_geom_type ta, mr_geom_type tb, int resting, mr_geom *ga, mr_geom *gb,
                       mr_se3 *Xa, mr_se3 *Xb) {
  uint64_t s = 17 + 31 * (uint64_t)ta + 7 * (uint64_t)tb + (uint64_t)resting;
  static const double rpy[4][3] = {{0, 0, 0}, {M_PI / 2, 0, 0}, {0, M_PI / 2, 0}, {0, 0, M_PI}};
  for (int k = 0; k < POSES; ++k) {
    ga[k] = mr_geom_default(ta, 0), gb[k] = mr_geom_default(tb, 0);
    for (int q = 0; q < 3; ++q)
      ga[k].size[q] = urand(&s, 0.04, 0.15), gb[k].size[q] = urand(&s, 0.04, 0.15);
    Xb[k] = tb == MR_GEOM_HALFSPACE ? mr_se3_identity() : random_placement(&s);
    Xa[k] = random_placement(&s);
    Xa[k].p = Xb[k].p;
    mr_vec3 u = mr_v3_normalize(mr_v3(urand(&s, -1, 1), urand(&s, -1, 1), urand(&s, -1, 1)));
    if (resting) {
      mr_mat3 Q = mr_m3_rpy(rpy[k % 4][0], rpy[k % 4][1], rpy[k % 4][2]);
      Xa[k].R = mr_m3_mul(&Xb[k].R, &Q);
      u = mr_v3(Xb[k].R.m[0][k % 3], Xb[k].R.m[1][k % 3], Xb[k].R.m[2][k % 3]);
    }
    if (tb == MR_GEOM_HALFSPACE) u = mr_v3(0, 0, 1);
    double target = resting ? urand(&s, -1e-6, 0) : urand(&s, -5e-3, 1e-3);
    Xa[k].p = mr_v3_madd(Xa[k].p, target - gap_along(&ga[k], &Xa[k], &gb[k], &Xb[k], u), u);
  }
}

/* ns per mr_collide call and contacts per call over the poses (margin 0: the pair's skins) */
static void time_pair(const mr_geom *ga, const mr_se3 *Xa, const mr_geom *gb, const mr_se3 *Xb,
                      double *ns, double *contacts) {
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  long calls = 0, nc = 0;
  double t0 = now(), t;
  do {
    for (int k = 0; k < POSES; ++k)
      nc += mr_collide(&ga[k], &Xa[k], &gb[k], &Xb[k], 0.0, 0, c, NULL);
    calls += POSES;
  } while ((t = now() - t0) < 0.2);
  *ns = 1e9 * t / calls, *contacts = (double)nc / calls;
}

static const char *const type_name[] = {"halfspace", "sphere",    "box",  "capsule",
                                        "cylinder",  "ellipsoid", "mesh", "heightfield"};

static void bench_pairs(void) {
  static const mr_geom_type pairs[][2] = {
      {MR_GEOM_SPHERE, MR_GEOM_SPHERE},      {MR_GEOM_SPHERE, MR_GEOM_CAPSULE},
      {MR_GEOM_SPHERE, MR_GEOM_BOX},         {MR_GEOM_SPHERE, MR_GEOM_CYLINDER},
      {MR_GEOM_CAPSULE, MR_GEOM_CAPSULE},    {MR_GEOM_CAPSULE, MR_GEOM_BOX},
      {MR_GEOM_CAPSULE, MR_GEOM_CYLINDER},   {MR_GEOM_CYLINDER, MR_GEOM_CYLINDER},
      {MR_GEOM_CYLINDER, MR_GEOM_BOX},       {MR_GEOM_BOX, MR_GEOM_BOX},
      {MR_GEOM_SPHERE, MR_GEOM_HALFSPACE},   {MR_GEOM_CAPSULE, MR_GEOM_HALFSPACE},
      {MR_GEOM_CYLINDER, MR_GEOM_HALFSPACE}, {MR_GEOM_BOX, MR_GEOM_HALFSPACE}};
  printf("narrowphase per pair type: %d poses each, sizes 4-15 cm, margin 0; random: random "
         "rotations, gap in [-5, 1] mm; resting: axes aligned (quarter turns), gap in [-1e-6, 0] "
         "m along one of the second shape's axes\n",
         POSES);
  printf("| pair | random: ns per pair | contacts per pair | resting: ns per pair | contacts per "
         "pair |\n|---|---:|---:|---:|---:|\n");
  static mr_geom ga[POSES], gb[POSES];
  static mr_se3 Xa[POSES], Xb[POSES];
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; ++i) {
    double ns[2], nc[2];
    for (int resting = 0; resting < 2; ++resting) {
      pair_poses(pairs[i][0], pairs[i][1], resting, ga, gb, Xa, Xb);
      time_pair(ga, Xa, gb, Xb, &ns[resting], &nc[resting]);
    }
    printf("| %s–%s | %.0f | %.2f | %.0f | %.2f |\n", type_name[pairs[i][0]],
           type_name[pairs[i][1]], ns[0], nc[0], ns[1], nc[1]);
  }
}

/* the placement of every geometry of a scene of free bodies at configuration q */
static void geom_placements(const mr_model *m, const double *q, mr_se3 *X) {
  for (int g = 0; g < m->ngeoms; ++g) {
    const mr_geom *geom = &m->geoms[g];
    mr_se3 B = mr_se3_identity();
    const mr_joint *j = &m->bodies[geom->body].joint;
    if (geom->body > 0 && j->nq == 7) {
      const double *x = q + j->idx_q;
      mr_quat r = {x[3], x[4], x[5], x[6]};
      B = mr_se3_make(mr_quat_to_m3(r), mr_v3(x[0], x[1], x[2]));
    }
    X[g] = mr_se3_mul(&B, &geom->placement);
  }
}

/* a dropping scene of bench/scale.c (the mixed drop of 200 bodies, the bin of 100 cubes;
 * ncp-pgs), its configurations every 10 steps from step 200 to 1000; per pair type the candidate
 * pairs of those frames, each collided again and timed */
static void bench_drop_pairs(scale_kind kind, int nbodies) {
  enum { STEPS = 1000, FROM = 200, EVERY = 10, FRAMES = (STEPS - FROM) / EVERY };
  char *yaml = scale_moreau_scene(kind, nbodies, NULL);
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_parse(yaml, "mixed.yaml", ".", &sc, &err)) {
    fprintf(stderr, "mixed: %s\n", err.msg);
    free(yaml);
    return;
  }
  free(yaml);
  mr_sim *s = mr_sim_from_scene(&sc, "ncp-pgs", &err);
  if (s) mr_sim_time_stages(s, 1);
  const mr_model *m = sc.model;
  int nq = m->nq, ng = m->ngeoms;
  double *qs = malloc((size_t)FRAMES * nq * sizeof *qs), tcoll = 0;
  for (int k = 0, f = 0; s && k < STEPS; ++k) {
    if (mr_sim_step(s, &err)) {
      fprintf(stderr, "mixed: %s\n", err.msg);
      break;
    }
    if (k >= FROM) tcoll += mr_sim_last(s)->timing.collision;
    if (k >= FROM && (k - FROM) % EVERY == 0 && f < FRAMES)
      memcpy(qs + (size_t)f++ * nq, mr_sim_q(s), (size_t)nq * sizeof *qs);
  }
  mr_collision_settings cs = mr_collision_settings_default();
  cs.margin = 0.0;
  mr_collision *c = mr_collision_create(m, &cs, 8 * ng, &err);
  mr_se3 *X = malloc((size_t)ng * sizeof *X);
  /* per unordered type pair: calls, contacts, seconds */
  double calls[8][8] = {{0}}, cts[8][8] = {{0}}, secs[8][8] = {{0}}, tq = 0;
  mr_contact out[MR_PAIR_MAX_CONTACTS];
  for (int f = 0; f < FRAMES; ++f) {
    geom_placements(m, qs + (size_t)f * nq, X);
    double t0 = now();
    mr_collision_detect_geoms(c, X, &err);
    tq += now() - t0;
    const mr_geom_pair *p;
    int np = mr_collision_pairs(c, &p);
    for (int i = 0; i < np; ++i) {
      const mr_geom *a = &m->geoms[p[i].a], *b = &m->geoms[p[i].b];
      int ta = a->type < b->type ? a->type : b->type, tb = a->type ^ b->type ^ ta;
      int reps = 20, n = 0;
      double t1 = now();
      for (int r = 0; r < reps; ++r)
        n = mr_collide(a, &X[p[i].a], b, &X[p[i].b], 0.0, 0, out, NULL);
      secs[ta][tb] += (now() - t1) / reps, calls[ta][tb] += 1, cts[ta][tb] += n;
    }
  }
  printf("\n%s drop (bench/scale.c, %d bodies, ncp-pgs), %d frames of steps %d-%d: query "
         "%.1f µs per frame (collision stage of the simulation: %.1f µs per step)\n",
         scale_kind_name[kind], nbodies, FRAMES, FROM, STEPS, 1e6 * tq / FRAMES,
         tcoll / (STEPS - FROM));
  printf("| pair | pairs per frame | contacts per pair | ns per pair | µs per frame |\n"
         "|---|---:|---:|---:|---:|\n");
  for (int a = 0; a < 8; ++a)
    for (int b = a; b < 8; ++b)
      if (calls[a][b] > 0)
        printf("| %s–%s | %.1f | %.2f | %.0f | %.1f |\n", type_name[b], type_name[a],
               calls[a][b] / FRAMES, cts[a][b] / calls[a][b], 1e9 * secs[a][b] / calls[a][b],
               1e6 * secs[a][b] / FRAMES);
  mr_collision_free(c);
  free(X), free(qs);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* one pass over the poses of one pair kind (for instruction counts under callgrind):
 * collision once TYPE_A TYPE_B RESTING, types as mr_geom_type numbers */
static int pairs_once(int ta, int tb, int resting) {
  static mr_geom ga[POSES], gb[POSES];
  static mr_se3 Xa[POSES], Xb[POSES];
  pair_poses(ta, tb, resting, ga, gb, Xa, Xb);
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  long nc = 0;
  for (int k = 0; k < POSES; ++k)
    nc += mr_collide(&ga[k], &Xa[k], &gb[k], &Xb[k], 0.0, 0, c, NULL);
  printf("%s–%s %s: %d calls, %ld contacts\n", type_name[ta], type_name[tb],
         resting ? "resting" : "random", POSES, nc);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 4 && !strcmp(argv[1], "once"))
    return pairs_once(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  bench_pairs();
  bench_drop_pairs(SCALE_MIXED, 200);
  bench_drop_pairs(SCALE_BIN, 100);
  if (argc > 1 && !strcmp(argv[1], "pairs")) return 0;
  bench_resting();
  bench_growth(0);
  bench_growth(2);
  bench_robot();
  return 0;
}
