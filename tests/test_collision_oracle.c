/* The general convex pairs and the short exact routines (capsule–box, capsule–capsule,
 * sphere–cylinder and every pair with a cylinder) against an exact support-function oracle, and
 * resting manifolds.
 *
 * Oracle: for convex A and B, Φ* = max over unit n of Φ(n), Φ(n) = min_A ⟨n, x⟩ − max_B ⟨n, x⟩
 * (the separation of the two shadows on the axis n; negative, the overlap, when they
 * penetrate). It is computed here independently of src/collision: the shapes' support functions
 * are written again below, Φ is sampled on a dense Fibonacci set of directions, and the best
 * samples (1500 directions) are refined by a compass search on the sphere (the ascent direction
 * and 16 turning tangent directions, step halved down to 1e-10 rad), as is the normal under
 * test: Φ* is the best of them. So the test establishes that the reported Φ equals Φ along the
 * reported normal (to 1e-9, the oracle's own supports) and that no direction of the dense
 * search, refined, does better by more than 1e-6. Contact points: p ± Φ n / 2 must lie on the
 * two surfaces (closed-form signed distances of spheres, boxes, capsules and cylinders; for meshes
 * the largest distance to the hull's face planes, found by brute force).
 *
 * Per pair kind, 2000 poses (1000 for the closed forms): random, face-on-face and parallel edges
 * (rotations equal up to a quarter turn), exactly touching, coincident centres; and for the short
 * exact routines 500 near-degenerate poses (quarter turns turned by 1e-9 to 1e-4 rad more: caps
 * nearly flat on faces, axes nearly parallel to edges, sides and other axes, end caps on faces).
 * Tolerances are the accuracy targets of
 * docs/collision.md: Φ within 1e-6 m, normal within 0.1° (or any normal achieving Φ* to 1e-9,
 * where the maximiser is not unique), the surface points p ± Φ n / 2 within 1e-4 m of the
 * surfaces. The measured worst cases are printed. */
#include "test_util.h"

#include <string.h>

#include "moreau/collision.h"

/* ---- the oracle's own supports ---- */

static mr_vec3 local_support(const mr_geom *g, mr_vec3 d) {
  const double *s = g->size;
  double len = mr_v3_norm(d);
  mr_vec3 u = len > 0 ? mr_v3_scale(d, 1.0 / len) : mr_v3(0, 0, 1);
  double rho = hypot(d.v[0], d.v[1]);
  switch (g->type) {
  case MR_GEOM_SPHERE:
    return mr_v3_scale(u, s[0]);
  case MR_GEOM_BOX:
    return mr_v3(d.v[0] >= 0 ? s[0] : -s[0], d.v[1] >= 0 ? s[1] : -s[1],
                 d.v[2] >= 0 ? s[2] : -s[2]);
  case MR_GEOM_CAPSULE:
    return mr_v3(s[0] * u.v[0], s[0] * u.v[1], (d.v[2] >= 0 ? s[1] : -s[1]) + s[0] * u.v[2]);
  case MR_GEOM_CYLINDER:
    return mr_v3(rho > 0 ? s[0] * d.v[0] / rho : 0, rho > 0 ? s[0] * d.v[1] / rho : 0,
                 d.v[2] >= 0 ? s[1] : -s[1]);
  case MR_GEOM_ELLIPSOID: { /* the point of the surface whose normal is d: D² d / |D d| */
    mr_vec3 Dd = mr_v3(s[0] * d.v[0], s[1] * d.v[1], s[2] * d.v[2]);
    double n = mr_v3_norm(Dd);
    return n > 0 ? mr_v3(s[0] * Dd.v[0] / n, s[1] * Dd.v[1] / n, s[2] * Dd.v[2] / n)
                 : mr_v3(0, 0, s[2]);
  }
  case MR_GEOM_MESH: {
    const mr_mesh *m = g->mesh;
    int best = 0;
    double bd = -INFINITY;
    for (int i = 0; i < m->nvert; ++i) {
      double t =
          d.v[0] * m->vert[3 * i] + d.v[1] * m->vert[3 * i + 1] + d.v[2] * m->vert[3 * i + 2];
      if (t > bd) bd = t, best = i;
    }
    return mr_v3(m->vert[3 * best], m->vert[3 * best + 1], m->vert[3 * best + 2]);
  }
  default:
    return mr_v3_zero();
  }
}

/* a placed shape, or a point (g NULL) */
typedef struct {
  const mr_geom *g;
  mr_se3 X;
} body;

static double support_value(const body *b, mr_vec3 n) {
  if (!b->g) return mr_v3_dot(n, b->X.p);
  mr_vec3 x = local_support(b->g, mr_m3_tmulv(&b->X.R, n));
  return mr_v3_dot(n, mr_se3_act_point(&b->X, x));
}

static double gap(const body *a, const body *b, mr_vec3 n) {
  return -support_value(a, mr_v3_neg(n)) - support_value(b, n);
}

/* the tangential part of w = s_A(−n) − s_B(n), an ascent direction where Φ is smooth
 * (envelope theorem: ∇Φ = w) */
static mr_vec3 ascent(const body *a, const body *b, mr_vec3 n) {
  mr_vec3 wa =
      a->g ? mr_se3_act_point(&a->X, local_support(a->g, mr_m3_tmulv(&a->X.R, mr_v3_neg(n))))
           : a->X.p;
  mr_vec3 wb =
      b->g ? mr_se3_act_point(&b->X, local_support(b->g, mr_m3_tmulv(&b->X.R, n))) : b->X.p;
  mr_vec3 w = mr_v3_sub(wa, wb);
  return mr_v3_madd(w, -mr_v3_dot(w, n), n);
}

/* compass search from n on the sphere: the ascent direction, then 16 tangent directions turned
 * by a fresh angle at each trial (so that a narrow ascent wedge along a kink of Φ, which is
 * piecewise linear for polytopes, is eventually hit); the step halved after 4 failed trials */
static double climb(const body *a, const body *b, mr_vec3 *n, double step) {
  enum { DIRS = 16 };
  double best = gap(a, b, *n);
  uint64_t rs = 99;
  int fails = 0;
  while (step > 1e-10) {
    mr_mat3 F = mr_contact_frame(*n);
    mr_vec3 t1 = mr_v3(F.m[0][0], F.m[1][0], F.m[2][0]),
            t2 = mr_v3(F.m[0][1], F.m[1][1], F.m[2][1]);
    mr_vec3 g = ascent(a, b, *n);
    double off = test_rand(&rs, 0, 2 * M_PI / DIRS);
    int moved = 0;
    for (int k = -1; k < DIRS && !moved; ++k) {
      double a0 = off + 2 * M_PI * k / DIRS;
      mr_vec3 t = k < 0 ? mr_v3_scale(g, 1.0 / fmax(mr_v3_norm(g), 1e-300))
                        : mr_v3_add(mr_v3_scale(t1, cos(a0)), mr_v3_scale(t2, sin(a0)));
      mr_vec3 m = mr_v3_normalize(mr_v3_madd(*n, step, t));
      double v = gap(a, b, m);
      if (v > best) best = v, *n = m, moved = 1;
    }
    fails = moved ? 0 : fails + 1;
    if (fails == 4) step *= 0.5, fails = 0;
  }
  return best;
}

/* Φ* and its maximiser: the best of ndirs Fibonacci directions, the top 4 refined, and the
 * extra seed (when not NULL) refined too */
static double oracle(const body *a, const body *b, int ndirs, const mr_vec3 *seed, mr_vec3 *nbest) {
  enum { TOP = 4 };
  mr_vec3 top[TOP];
  *nbest = mr_v3(0, 0, 1);
  double tv[TOP];
  for (int k = 0; k < TOP; ++k)
    tv[k] = -INFINITY, top[k] = mr_v3(0, 0, 1);
  for (int i = 0; i < ndirs; ++i) {
    double z = 1 - (2 * i + 1.0) / ndirs, r = sqrt(fmax(0, 1 - z * z)), ph = i * 2.399963229728653;
    mr_vec3 n = mr_v3(r * cos(ph), r * sin(ph), z);
    double g = gap(a, b, n);
    int k = TOP - 1;
    if (g <= tv[k]) continue;
    while (k > 0 && tv[k - 1] < g)
      tv[k] = tv[k - 1], top[k] = top[k - 1], k--;
    tv[k] = g, top[k] = n;
  }
  double best = -INFINITY, step = 2.0 * sqrt(4 * M_PI / ndirs);
  for (int k = 0; k < TOP; ++k) {
    mr_vec3 n = top[k];
    double g = climb(a, b, &n, step);
    if (g > best) best = g, *nbest = n;
  }
  if (seed) {
    mr_vec3 n = *seed;
    double g = climb(a, b, &n, 1e-3);
    if (g > best) best = g, *nbest = n;
  }
  return best;
}

/* an ellipsoid's signed distance: the nearest surface point x_i = a_i² p_i / (t + a_i²) where
 * f(t) = Σ (a_i p_i / (t + a_i²))² = 1, f decreasing on (−min a², ∞); outside the root is t > 0,
 * inside t ∈ (−min a², 0) (the nearest of the stationary points); bisection to round-off */
static double sdf_ellipsoid(const double *a, mr_vec3 p) {
  double lo = -fmin(a[0] * a[0], fmin(a[1] * a[1], a[2] * a[2])), hi = 0;
  double in = 0;
  for (int k = 0; k < 3; ++k)
    in += p.v[k] * p.v[k] / (a[k] * a[k]);
  if (in > 1) lo = 0, hi = mr_v3_norm(p) * fmax(a[0], fmax(a[1], a[2])) + 1;
  for (int it = 0; it < 200; ++it) {
    double t = 0.5 * (lo + hi), f = 0;
    for (int k = 0; k < 3; ++k)
      f += pow(a[k] * p.v[k] / (t + a[k] * a[k]), 2);
    if (f > 1) lo = t;
    else hi = t;
  }
  double t = 0.5 * (lo + hi), d2 = 0;
  for (int k = 0; k < 3; ++k)
    d2 += pow(p.v[k] - a[k] * a[k] * p.v[k] / (t + a[k] * a[k]), 2);
  return in > 1 ? sqrt(d2) : -sqrt(d2);
}

/* closed-form signed distances in a shape's frame: sphere, box, capsule, cylinder (an
 * ellipsoid's by bisection) */
static double sdf_local(const mr_geom *g, mr_vec3 x) {
  const double *s = g->size;
  if (g->type == MR_GEOM_ELLIPSOID) return sdf_ellipsoid(s, x);
  if (g->type == MR_GEOM_SPHERE) return mr_v3_norm(x) - s[0];
  if (g->type == MR_GEOM_BOX) {
    double q[3], out = 0, in = -INFINITY;
    for (int k = 0; k < 3; ++k)
      q[k] = fabs(x.v[k]) - s[k], out += fmax(q[k], 0) * fmax(q[k], 0), in = fmax(in, q[k]);
    return sqrt(out) + fmin(in, 0);
  }
  if (g->type == MR_GEOM_CAPSULE) {
    double z = fmin(fmax(x.v[2], -s[1]), s[1]);
    return mr_v3_norm(mr_v3(x.v[0], x.v[1], x.v[2] - z)) - s[0];
  }
  double d0 = hypot(x.v[0], x.v[1]) - s[0], d1 = fabs(x.v[2]) - s[1];
  return fmin(fmax(d0, d1), 0) + hypot(fmax(d0, 0), fmax(d1, 0));
}

/* a mesh: the largest signed distance to its face planes, found by brute force over vertex
 * triples (exact inside and over faces; near an edge outside it can only be smaller than the
 * distance, by a factor of the dihedral angle's sine) */
static double sdf_mesh(const mr_mesh *m, mr_vec3 x) {
  double best = -INFINITY;
  int n = m->nvert;
  const double *v = m->vert;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      for (int k = j + 1; k < n; ++k) {
        mr_vec3 a = mr_v3(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
        mr_vec3 nn = mr_v3_cross(mr_v3_sub(mr_v3(v[3 * j], v[3 * j + 1], v[3 * j + 2]), a),
                                 mr_v3_sub(mr_v3(v[3 * k], v[3 * k + 1], v[3 * k + 2]), a));
        if (mr_v3_norm(nn) < 1e-12) continue;
        nn = mr_v3_normalize(nn);
        int pos = 0, neg = 0;
        for (int q = 0; q < n; ++q) {
          double t = mr_v3_dot(nn, mr_v3_sub(mr_v3(v[3 * q], v[3 * q + 1], v[3 * q + 2]), a));
          pos |= t > 1e-12, neg |= t < -1e-12;
        }
        if (pos && neg) continue;
        if (pos) nn = mr_v3_neg(nn);
        best = fmax(best, mr_v3_dot(nn, mr_v3_sub(x, a)));
      }
  return best;
}

/* signed distance of world point x to shape a */
static double sdf(const body *a, mr_vec3 x) {
  mr_vec3 xl = mr_se3_inv_act_point(&a->X, x);
  return a->g->type == MR_GEOM_MESH ? sdf_mesh(a->g->mesh, xl) : sdf_local(a->g, xl);
}

/* ---- shapes and poses ---- */

static mr_se3 random_rotation(uint64_t *s, mr_vec3 p) {
  mr_quat q = {test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)};
  return mr_se3_make(mr_quat_to_m3(mr_quat_normalize(q)), p);
}

static mr_geom make_geom(mr_geom_type t, double a, double b, double c) {
  mr_geom g = mr_geom_default(t, 0);
  g.size[0] = a, g.size[1] = b, g.size[2] = c;
  return g;
}

/* a convex mesh: the hull of 14 points on an ellipsoid (irregular faces and edges) */
static mr_mesh *random_mesh(uint64_t *s) {
  enum { NV = 14 };
  mr_mesh *m = calloc(1, sizeof *m);
  m->vert = malloc(3 * NV * sizeof(double));
  m->nvert = NV;
  for (int i = 0; i < NV; ++i) {
    mr_vec3 d =
        mr_v3_normalize(mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)));
    m->vert[3 * i] = 0.15 * d.v[0], m->vert[3 * i + 1] = 0.1 * d.v[1],
                m->vert[3 * i + 2] = 0.08 * d.v[2];
  }
  mr_error err;
  assert_int_equal(mr_mesh_compute_hull(m, "random", &err), MR_OK);
  return m;
}

/* the unit-free cube mesh of half side h */
static mr_mesh *cube_mesh(double h) {
  mr_mesh *m = calloc(1, sizeof *m);
  m->vert = malloc(24 * sizeof(double));
  m->nvert = 8;
  for (int v = 0; v < 8; ++v)
    for (int k = 0; k < 3; ++k)
      m->vert[3 * v + k] = v >> k & 1 ? h : -h;
  mr_error err;
  assert_int_equal(mr_mesh_compute_hull(m, "cube", &err), MR_OK);
  return m;
}

/* pose of a relative to b: random rotations, or b's rotation turned by quarter turns
 * (face-on-face, parallel edges); a moved along a random axis u to a gap target along u (which
 * bounds Φ* from below), 0 for touching along u, or onto b's centre */
static void random_pose(uint64_t *s, int k, int near, const mr_geom *ga, const mr_geom *gb,
                        mr_se3 *Xa, mr_se3 *Xb) {
  *Xb = random_rotation(s, mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)));
  int mode = near ? 2 + k % 2 : k % 8;
  *Xa = random_rotation(s, Xb->p);
  if (mode == 2 || mode == 3) {
    static const double rpy[4][3] = {{0, 0, 0}, {M_PI / 2, 0, 0}, {0, M_PI / 2, 0}, {0, 0, M_PI}};
    mr_mat3 Q = mr_m3_rpy(rpy[k / 8 % 4][0], rpy[k / 8 % 4][1], rpy[k / 8 % 4][2]);
    Xa->R = mr_m3_mul(&Xb->R, &Q);
  }
  if (near) {
    /* turned by 1e-9 to 1e-4 rad about a random axis: nearly parallel faces, axes, edges */
    mr_vec3 w =
        mr_v3_normalize(mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)));
    mr_mat3 T = mr_m3_axis_angle(w, pow(10.0, test_rand(s, -9, -4)));
    Xa->R = mr_m3_mul(&Xa->R, &T);
  }
  if (mode == 7) return; /* coincident centres */
  mr_vec3 u = mr_v3_normalize(mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)));
  if (mode == 3) u = mr_v3(Xb->R.m[0][k % 3], Xb->R.m[1][k % 3], Xb->R.m[2][k % 3]);
  body A = {ga, *Xa}, B = {gb, *Xb};
  double target = mode == 4 ? 0.0 : test_rand(s, -0.04, 0.006);
  double t = target - gap(&A, &B, u);
  Xa->p = mr_v3_madd(Xa->p, t, u);
}

static mr_vec3 normal_of(const mr_contact *c) {
  return mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
}

typedef struct {
  double phi, angle, point; /* worst Φ error (m), normal angle (deg), surface error (m) */
  int contacts, poses, multi;
  int bad_phi, bad_angle, bad_point; /* poses beyond the targets 1e-6 m, 0.1°, 1e-4 m */
} stats;

/* one pose: the pair's contacts against the oracle */
static void check_pose(const mr_geom *ga, const mr_se3 *Xa, const mr_geom *gb, const mr_se3 *Xb,
                       double margin, stats *st) {
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  mr_collision_stats cs = {0};
  int n = mr_collide(ga, Xa, gb, Xb, margin, 0, c, &cs);
  assert_int_equal(cs.ccd_failures, 0);
  body A = {ga, *Xa}, B = {gb, *Xb};
  mr_vec3 ns = mr_v3(0, 0, 1), seed = n > 0 ? normal_of(&c[0]) : ns;
  double phis = oracle(&A, &B, 1500, n > 0 ? &seed : NULL, &ns);
  st->poses++;
  if (phis > margin + 1e-6) {
    assert_int_equal(n, 0);
    return;
  }
  if (phis < margin - 1e-6 && n == 0) fail_msg("no contact, oracle Φ* = %.9g", phis);
  if (n == 0) return;
  double mn = INFINITY;
  for (int i = 0; i < n; ++i)
    mn = fmin(mn, c[i].phi);
  double e = fabs(mn - phis);
  st->phi = fmax(st->phi, e);
  st->bad_phi += e > 1e-6;
  mr_vec3 nc = normal_of(&c[0]);
  double ang = acos(fmin(1.0, mr_v3_dot(nc, ns))) * 180 / M_PI;
  /* a normal achieving Φ* is a maximiser too (ties between faces, coincident centres) */
  if (fabs(gap(&A, &B, nc) - phis) > 1e-9) {
    st->angle = fmax(st->angle, ang);
    st->bad_angle += ang > 0.1;
  }
  st->contacts += n;
  st->multi += n > 1;
  double pe = 0;
  for (int i = 0; i < n; ++i) {
    mr_vec3 pa = mr_v3_madd(c[i].point, 0.5 * c[i].phi, normal_of(&c[i]));
    mr_vec3 pb = mr_v3_madd(c[i].point, -0.5 * c[i].phi, normal_of(&c[i]));
    pe = fmax(pe, fmax(fabs(sdf(&A, pa)), fabs(sdf(&B, pb))));
    /* the manifold shares one normal; each point is within the margin */
    assert_true(c[i].phi <= margin + 1e-9);
    if (!(mr_v3_dot(normal_of(&c[i]), nc) > 1 - 1e-12))
      fail_msg("contact %d: normal (%g %g %g) vs (%g %g %g), phi %g", i, normal_of(&c[i]).v[0],
               normal_of(&c[i]).v[1], normal_of(&c[i]).v[2], nc.v[0], nc.v[1], nc.v[2], c[i].phi);
  }
  st->point = fmax(st->point, pe);
  st->bad_point += pe > 1e-4;
}

/* the poses of a pair kind: `count` of them, near-degenerate ones when near is set; the
 * figures printed under the name */
static stats run_poses(const char *name, mr_geom_type ta, mr_geom_type tb, uint64_t seed, int count,
                       int near) {
  uint64_t s = seed;
  stats st = {0};
  mr_mesh *ma = NULL, *mb = NULL;
  for (int k = 0; k < count; ++k) {
    if (k % 100 == 0) {
      if (ma) mr_mesh_free(ma);
      if (mb) mr_mesh_free(mb);
      ma = random_mesh(&s), mb = random_mesh(&s);
    }
    double sz[2][3];
    for (int j = 0; j < 2; ++j)
      for (int q = 0; q < 3; ++q)
        sz[j][q] = test_rand(&s, 0.04, 0.3);
    mr_geom ga = make_geom(ta, sz[0][0], sz[0][1], sz[0][2]);
    mr_geom gb = make_geom(tb, sz[1][0], sz[1][1], sz[1][2]);
    ga.mesh = ma, gb.mesh = mb;
    mr_se3 Xa, Xb;
    random_pose(&s, k, near, &ga, &gb, &Xa, &Xb);
    check_pose(&ga, &Xa, &gb, &Xb, 0.01, &st);
  }
  mr_mesh_free(ma), mr_mesh_free(mb);
  printf("%-18s %d poses%s, %d contacts (%d multi-point): max |Φ − Φ*| %.2e m (%d poses > 1e-6), "
         "normal %.2e° (%d > 0.1°), points %.2e m (%d > 1e-4)\n",
         name, st.poses, near ? " near-parallel" : "", st.contacts, st.multi, st.phi, st.bad_phi,
         st.angle, st.bad_angle, st.point, st.bad_point);
  return st;
}

/* `count` poses of a pair kind (2000; 1000 for the closed forms sphere–cylinder and
 * capsule–capsule), and for the short exact routines (capsule–box, capsule–capsule and every pair
 * with a cylinder: cylinder.c) 500 near-degenerate ones more: quarter turns as above
 * turned by 1e-9 to 1e-4 rad more (axes, faces and edges parallel to within that: caps on faces,
 * capsules and cylinders lying along edges and sides). max_bad is the number of poses measured
 * beyond a target with the current routines (docs/collision.md: mesh–mesh's spread manifold
 * points of tilted faces); every other kind meets every target on every pose (max_bad 0). The
 * count guards against regressions; the worst cases are printed. */
static void run_kind(const char *name, mr_geom_type ta, mr_geom_type tb, uint64_t seed,
                     int max_bad) {
  int closed = ta == MR_GEOM_SPHERE || (ta == MR_GEOM_CAPSULE && tb == MR_GEOM_CAPSULE);
  stats st = run_poses(name, ta, tb, seed, closed ? 1000 : 2000, 0);
  int exact = ta != MR_GEOM_MESH && tb != MR_GEOM_MESH;
  stats nd = exact ? run_poses(name, ta, tb, seed + 100, 500, 1) : (stats){0};
  assert_true(st.bad_phi + nd.bad_phi <= max_bad);
  assert_true(st.bad_angle + nd.bad_angle <= max_bad);
  assert_true(st.bad_point + nd.bad_point <= max_bad);
}

static void test_capsule_box(void **state) {
  run_kind("capsule-box", MR_GEOM_CAPSULE, MR_GEOM_BOX, 1, 0);
}
static void test_cylinder_box(void **state) {
  run_kind("cylinder-box", MR_GEOM_CYLINDER, MR_GEOM_BOX, 2, 0);
}
static void test_mesh_box(void **state) {
  run_kind("mesh-box", MR_GEOM_MESH, MR_GEOM_BOX, 3, 0);
}
static void test_mesh_mesh(void **state) {
  run_kind("mesh-mesh", MR_GEOM_MESH, MR_GEOM_MESH, 4, 6);
}
static void test_cylinder_cylinder(void **state) {
  run_kind("cylinder-cylinder", MR_GEOM_CYLINDER, MR_GEOM_CYLINDER, 5, 0);
}
static void test_cylinder_capsule(void **state) {
  run_kind("cylinder-capsule", MR_GEOM_CYLINDER, MR_GEOM_CAPSULE, 6, 0);
}
static void test_capsule_mesh(void **state) {
  run_kind("capsule-mesh", MR_GEOM_CAPSULE, MR_GEOM_MESH, 7, 0);
}
static void test_capsule_capsule(void **state) {
  run_kind("capsule-capsule", MR_GEOM_CAPSULE, MR_GEOM_CAPSULE, 8, 0);
}
static void test_sphere_cylinder(void **state) {
  run_kind("sphere-cylinder", MR_GEOM_SPHERE, MR_GEOM_CYLINDER, 9, 0);
}
static void test_ellipsoid_box(void **state) {
  run_kind("ellipsoid-box", MR_GEOM_ELLIPSOID, MR_GEOM_BOX, 10, 9);
}
static void test_ellipsoid_ellipsoid(void **state) {
  run_kind("ellipsoid-ellipsoid", MR_GEOM_ELLIPSOID, MR_GEOM_ELLIPSOID, 11, 0);
}
static void test_ellipsoid_capsule(void **state) {
  run_kind("ellipsoid-capsule", MR_GEOM_ELLIPSOID, MR_GEOM_CAPSULE, 12, 21);
}

/* ---- resting manifolds: at least 3 points on the face, Φ = 0 ± 1e-9 ---- */

/* n contacts, each at Φ = 0 to 1e-9 with normal +z, on the plane z = ztop */
#define check_resting(c, n, min_points, ztop) check_resting_at(c, n, min_points, ztop, __LINE__)
static void check_resting_at(const mr_contact *c, int n, int min_points, double ztop, int line) {
  if (n < min_points) fail_msg("line %d: %d contacts, expected >= %d", line, n, min_points);
  for (int i = 0; i < n; ++i) {
    if (!(fabs(c[i].phi) <= 1e-9 && fabs(normal_of(&c[i]).v[2] - 1.0) <= 1e-9 &&
          fabs(c[i].point.v[2] - ztop) <= 1e-9))
      fail_msg("line %d: contact %d: Φ = %.3g, n_z − 1 = %.3g, z − z_top = %.3g", line, i, c[i].phi,
               normal_of(&c[i]).v[2] - 1.0, c[i].point.v[2] - ztop);
  }
}

static void test_resting(void **state) {
  mr_mesh *cube = cube_mesh(0.05);
  mr_geom box = make_geom(MR_GEOM_BOX, 0.5, 0.5, 0.1),
          cyl = make_geom(MR_GEOM_CYLINDER, 0.05, 0.1, 0);
  mr_geom mesh = make_geom(MR_GEOM_MESH, 0, 0, 0), cap = make_geom(MR_GEOM_CAPSULE, 0.05, 0.3, 0);
  mr_geom plane = make_geom(MR_GEOM_HALFSPACE, 0, 0, 0),
          cyl2 = make_geom(MR_GEOM_CYLINDER, 0.2, 0.1, 0);
  mesh.mesh = cube;
  mr_se3 Xb = mr_se3_make(mr_m3_identity(), mr_v3(0.1, -0.2, 0.0)), I = mr_se3_identity();
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  double margins[2] = {0.0, 1e-3};
  for (int q = 0; q < 2; ++q) {
    double mg = margins[q];
    /* cylinder standing on the box's top face (z = 0.1), yawed */
    mr_se3 X = mr_se3_make(mr_m3_rpy(0, 0, 0.7), mr_v3(0.2, -0.1, 0.2));
    check_resting(c, mr_collide(&cyl, &X, &box, &Xb, mg, 0, c, NULL), 3, 0.1);
    /* upside down: the other cap */
    X.R = mr_m3_rpy(M_PI, 0, 0.3);
    check_resting(c, mr_collide(&cyl, &X, &box, &Xb, mg, 0, c, NULL), 3, 0.1);
    /* the mesh cube on the box, yawed and off-centre */
    X = mr_se3_make(mr_m3_rpy(0, 0, 0.4), mr_v3(0.3, 0.1, 0.15));
    check_resting(c, mr_collide(&mesh, &X, &box, &Xb, mg, 0, c, NULL), 3, 0.1);
    /* the mesh cube on another mesh cube */
    mr_se3 Xm = mr_se3_make(mr_m3_rpy(0, 0, 0.1), mr_v3(0.0, 0.0, 0.5));
    X = mr_se3_make(mr_m3_rpy(0, 0, 0.9), mr_v3(0.02, 0.01, 0.6));
    check_resting(c, mr_collide(&mesh, &X, &mesh, &Xm, mg, 0, c, NULL), 3, 0.55);
    /* cylinder on halfspace and cylinder cap on a wider cylinder's cap */
    X = mr_se3_make(mr_m3_rpy(0, 0, 0.2), mr_v3(0.3, 0.1, 0.1));
    check_resting(c, mr_collide(&cyl, &X, &plane, &I, mg, 0, c, NULL), 3, 0.0);
    mr_se3 Xc = mr_se3_make(mr_m3_rpy(0, 0, 1.0), mr_v3(0.35, 0.05, 0.3));
    check_resting(c, mr_collide(&cyl, &Xc, &cyl2, &X, mg, 0, c, NULL), 3, 0.2);
    /* a capsule lying on the box: its two end spheres touch (a line contact) */
    X = mr_se3_make(mr_m3_rpy(M_PI / 2, 0, 0.3), mr_v3(0.1, -0.2, 0.15));
    check_resting(c, mr_collide(&cap, &X, &box, &Xb, mg, 0, c, NULL), 2, 0.1);
    /* a cylinder lying on its side on the box: its side line */
    X = mr_se3_make(mr_m3_rpy(M_PI / 2, 0, 0.3), mr_v3(0.1, -0.2, 0.15));
    check_resting(c, mr_collide(&cyl, &X, &box, &Xb, mg, 0, c, NULL), 2, 0.1);
  }
  mr_mesh_free(cube);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resting),          cmocka_unit_test(test_capsule_box),
      cmocka_unit_test(test_cylinder_box),     cmocka_unit_test(test_mesh_box),
      cmocka_unit_test(test_mesh_mesh),        cmocka_unit_test(test_cylinder_cylinder),
      cmocka_unit_test(test_cylinder_capsule), cmocka_unit_test(test_capsule_mesh),
      cmocka_unit_test(test_capsule_capsule),  cmocka_unit_test(test_sphere_cylinder),
      cmocka_unit_test(test_ellipsoid_box), cmocka_unit_test(test_ellipsoid_ellipsoid),
      cmocka_unit_test(test_ellipsoid_capsule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
