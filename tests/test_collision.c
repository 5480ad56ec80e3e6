/* Collision: analytic pairs against closed forms, libccd against the analytic pairs, swap
 * symmetry, manifolds (box on plane, box on box, cylinder), heightfields, the collision
 * context (filters, materials, overflow) and the broadphase against brute force.
 * Closed-form tolerances: the routine and the closed form each take a few tens of operations on
 * coordinates ≤ 1 m, through rotation matrices from quaternions (≈ 10 ε per entry): at most
 * about 45 ε = 1e-14 (measured within 1e-15 on every case); the contact frame has its own bound
 * (check_frame). */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "moreau/collision.h"
#include "test_random.h"

static mr_geom geom(mr_geom_type t, double a, double b, double c) {
  mr_geom g = mr_geom_default(t, 0);
  g.size[0] = a, g.size[1] = b, g.size[2] = c;
  return g;
}

static mr_vec3 normal_of(const mr_contact *c) {
  return mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
}

/* unit direction uniformly-ish on the sphere */
static mr_vec3 random_dir(uint64_t *s) {
  return mr_v3_normalize(mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)));
}

/* the frame is a rotation with n as third column, to round-off. Frisvad's basis divides by
 * 1 + n_z, which carries an absolute error ε: the terms n_x²/(1 + n_z) ≤ 2 then err by about
 * 2ε/(1 + n_z), an entry of t₁ or t₂ by 4ε/(1 + n_z), an entry of FᵀF (three products) or of
 * t₁ × t₂ by 24ε/(1 + n_z), with n itself unit to 2ε: 32 ε/(1 + n_z) (below n_z = −1 + 1e-7 the
 * same construction about −z, dividing by 1 − n_z ≥ 2: 16 ε) */
static void check_frame_of(mr_mat3 F) {
  mr_mat3 FtF = mr_m3_tmul(&F, &F);
  double nz = F.m[2][2], tol = 32.0 * DBL_EPSILON / (nz < -0.9999999 ? 2.0 : fmin(1.0, 1.0 + nz));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      assert_near(FtF.m[i][j], i == j ? 1.0 : 0.0, tol);
  /* right-handed: t1 x t2 = n */
  mr_vec3 t1 = mr_v3(F.m[0][0], F.m[1][0], F.m[2][0]), t2 = mr_v3(F.m[0][1], F.m[1][1], F.m[2][1]);
  mr_vec3 n = mr_v3_cross(t1, t2);
  for (int k = 0; k < 3; ++k)
    assert_near(n.v[k], F.m[k][2], tol);
}

static void check_frame(const mr_contact *c) {
  check_frame_of(c->frame);
}

/* normals within 4.5e-4 rad of −z (n_z below −0.9999999, where Frisvad's 1/(1 + n_z) is
 * replaced): the frame stays a rotation with n as third column (a fixed basis there is off by
 * the tilt, up to 4.5e-4), and at the pole itself it is (0, −1, 0), (−1, 0, 0), exactly */
static void test_frame_near_pole(void **state) {
  (void)state;
  mr_mat3 P = mr_contact_frame(mr_v3(0, 0, -1));
  const double pole[3][3] = {{0, -1, 0}, {-1, 0, 0}, {0, 0, -1}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      assert_true(P.m[i][j] == pole[i][j]);
  for (int k = 0; k <= 8; ++k) {
    double tilt = 4.4e-4 * pow(10.0, -k); /* down to 4.4e-12 rad */
    for (int a = 0; a < 12; ++a) {
      double az = 2.0 * M_PI * a / 12.0;
      mr_vec3 n = mr_v3(sin(tilt) * cos(az), sin(tilt) * sin(az), -cos(tilt));
      mr_mat3 F = mr_contact_frame(n);
      for (int i = 0; i < 3; ++i)
        assert_true(F.m[i][2] == n.v[i]);
      check_frame_of(F);
    }
  }
}

/* swapping the geometries gives the same contacts (points, Φ) with reversed normals, in any
 * order. Mixed-type pairs run one routine on the same operands: bitwise equal. Same-type pairs
 * run it with the arguments exchanged: spheres and boxes a few tens of operations on unit-sized
 * coordinates, 45 ε < 1e-14 as in the closed-form checks (measured 1.1e-16 and 1.2e-15).
 * Capsules: the closest-point parameter s = (b f − c e)/(a e − b²) of segments d₁, d₂ at angle
 * θ, offset r between their starts, divides a numerator with round-off ≤ 8 ε L₁ L₂² |r| by
 * a e sin²θ computed to 3 ε a e, so the closest points move by ≤ (3 L + 8 |r|) ε / sin²θ
 * (L the longer segment), as do Φ and the midpoint; the normal, their difference over the core
 * distance d = Φ + r₁ + r₂, by twice that over d; both orders carry it: twice again. Measured at
 * most 0.83 ε (1 + 1/d) / sin²θ on the random capsules, 7.4e-14 at d = 2 mm */
static double swap_tol(const mr_geom *a, const mr_se3 *Xa, const mr_geom *b, const mr_se3 *Xb,
                       double phi) {
  if (a->type != b->type) return 0.0;
  if (a->type != MR_GEOM_CAPSULE) return 1e-14;
  mr_vec3 za = mr_v3(Xa->R.m[0][2], Xa->R.m[1][2], Xa->R.m[2][2]);
  mr_vec3 zb = mr_v3(Xb->R.m[0][2], Xb->R.m[1][2], Xb->R.m[2][2]);
  mr_vec3 cr = mr_v3_cross(za, zb);
  double s2 = mr_v3_dot(cr, cr), L = 2.0 * fmax(a->size[1], b->size[1]);
  mr_vec3 r = mr_v3_sub(mr_v3_madd(Xa->p, -a->size[1], za), mr_v3_madd(Xb->p, -b->size[1], zb));
  double d = phi + a->size[0] + b->size[0];
  return 2.0 * (3.0 * L + 8.0 * mr_v3_norm(r)) * DBL_EPSILON / s2 * (1.0 + 2.0 / d);
}

static void check_swap(const mr_geom *a, const mr_se3 *Xa, const mr_geom *b, const mr_se3 *Xb,
                       double margin) {
  mr_contact c1[MR_PAIR_MAX_CONTACTS], c2[MR_PAIR_MAX_CONTACTS];
  int n1 = mr_collide(a, Xa, b, Xb, margin, 0, c1, NULL);
  int n2 = mr_collide(b, Xb, a, Xa, margin, 0, c2, NULL);
  assert_int_equal(n1, n2);
  for (int i = 0; i < n1; ++i) {
    int match = 0;
    const double tol = swap_tol(a, Xa, b, Xb, c1[i].phi);
    for (int j = 0; j < n2 && !match; ++j) {
      double e = fabs(c1[i].phi - c2[j].phi);
      for (int k = 0; k < 3; ++k)
        e = fmax(e, fmax(fabs(c1[i].point.v[k] - c2[j].point.v[k]),
                         fabs(normal_of(&c1[i]).v[k] + normal_of(&c2[j]).v[k])));
      match = e <= tol;
    }
    if (!match)
      fail_msg("contact %d (phi %g) has no swapped counterpart within %g", i, c1[i].phi, tol);
  }
}

/* sphere-sphere: Φ = |ca − cb| − ra − rb, n along ca − cb, point midway; margin edges */
static void test_sphere_sphere(void **state) {
  uint64_t s = 11;
  mr_geom a = geom(MR_GEOM_SPHERE, 0.3, 0, 0), b = geom(MR_GEOM_SPHERE, 0.5, 0, 0);
  for (int k = 0; k < 200; ++k) {
    mr_se3 Xa = test_random_se3(&s, 1), Xb = test_random_se3(&s, 1);
    mr_vec3 d = mr_v3_sub(Xa.p, Xb.p);
    double phi = mr_v3_norm(d) - 0.8;
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(&a, &Xa, &b, &Xb, 0.01, 0, c, NULL);
    assert_int_equal(n, phi <= 0.01);
    if (!n) continue;
    /* closed form to round-off */
    assert_near(c[0].phi, phi, 1e-14);
    mr_vec3 nn = mr_v3_normalize(d), pm = mr_v3_madd(Xb.p, 0.5 + 0.5 * phi, nn);
    for (int i = 0; i < 3; ++i)
      assert_near(normal_of(&c[0]).v[i], nn.v[i], 1e-14);
    for (int i = 0; i < 3; ++i)
      assert_near(c[0].point.v[i], pm.v[i], 1e-14);
    check_frame(&c[0]);
    check_swap(&a, &Xa, &b, &Xb, 0.01);
  }
  /* exact touching, just inside and just outside the margin, coincident centres */
  mr_se3 Xa = mr_se3_identity(), Xb = mr_se3_identity();
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  double gaps[] = {0.0, 0.01 - 1e-9, 0.01 + 1e-9};
  for (int k = 0; k < 3; ++k) {
    Xa.p = mr_v3(0, 0, 0.8 + gaps[k]);
    int n = mr_collide(&a, &Xa, &b, &Xb, 0.01, 0, c, NULL);
    assert_int_equal(n, k < 2);
    if (n) assert_near(c[0].phi, gaps[k], 1e-15);
  }
  Xa.p = mr_v3_zero();
  assert_int_equal(mr_collide(&a, &Xa, &b, &Xb, 0.01, 0, c, NULL), 1);
  assert_near(c[0].phi, -0.8, 1e-15);
  assert_near(mr_v3_norm(normal_of(&c[0])), 1.0, 1e-15);
}

/* sphere, capsule, box, cylinder, ellipsoid on a tilted halfspace: Φ = distance of the lowest
 * point (closed form per shape) */
static void test_halfspace_pairs(void **state) {
  uint64_t s = 12;
  mr_geom plane = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_geom shapes[] = {geom(MR_GEOM_SPHERE, 0.2, 0, 0), geom(MR_GEOM_CAPSULE, 0.1, 0.3, 0),
                      geom(MR_GEOM_BOX, 0.1, 0.2, 0.3), geom(MR_GEOM_CYLINDER, 0.15, 0.25, 0),
                      geom(MR_GEOM_ELLIPSOID, 0.1, 0.2, 0.3)};
  for (int k = 0; k < 500; ++k) {
    mr_geom *g = &shapes[k % 5];
    mr_se3 Xp = test_random_se3(&s, 0.2), Xg = test_random_se3(&s, 0.5);
    mr_vec3 n = mr_v3(Xp.R.m[0][2], Xp.R.m[1][2], Xp.R.m[2][2]), nl = mr_m3_tmulv(&Xg.R, n);
    double h = mr_v3_dot(mr_v3_sub(Xg.p, Xp.p), n), r = g->size[0], depth;
    /* lowest point's depth below the centre, closed form per shape */
    switch (g->type) {
    case MR_GEOM_SPHERE:
      depth = r;
      break;
    case MR_GEOM_CAPSULE:
      depth = r + g->size[1] * fabs(nl.v[2]);
      break;
    case MR_GEOM_BOX:
      depth = 0.1 * fabs(nl.v[0]) + 0.2 * fabs(nl.v[1]) + 0.3 * fabs(nl.v[2]);
      break;
    case MR_GEOM_CYLINDER:
      depth = r * sqrt(nl.v[0] * nl.v[0] + nl.v[1] * nl.v[1]) + g->size[1] * fabs(nl.v[2]);
      break;
    default:
      depth = sqrt(pow(0.1 * nl.v[0], 2) + pow(0.2 * nl.v[1], 2) + pow(0.3 * nl.v[2], 2));
    }
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int m = mr_collide(g, &Xg, &plane, &Xp, 0.05, 0, c, NULL);
    if (h - depth > 0.05 + 1e-12) {
      assert_int_equal(m, 0);
      continue;
    }
    if (h - depth < 0.05 - 1e-12) assert_true(m >= 1);
    double mn = INFINITY;
    for (int i = 0; i < m; ++i) {
      mn = fmin(mn, c[i].phi);
      /* every point midway between the surfaces: its height is Φ/2 */
      assert_near(mr_v3_dot(mr_v3_sub(c[i].point, Xp.p), n), 0.5 * c[i].phi, 1e-14);
      for (int q = 0; q < 3; ++q)
        assert_near(normal_of(&c[i]).v[q], n.v[q], 1e-14);
      assert_true(c[i].phi <= 0.05 + 1e-12);
    }
    if (m) assert_near(mn, h - depth, 1e-14);
    check_swap(g, &Xg, &plane, &Xp, 0.05);
  }
}

/* a box resting on the plane: exactly 4 contacts at its bottom corners, Φ = 0 */
static void test_box_resting(void **state) {
  uint64_t s = 13;
  mr_geom plane = mr_geom_default(MR_GEOM_HALFSPACE, 0), box = geom(MR_GEOM_BOX, 0.2, 0.1, 0.05);
  for (int k = 0; k < 20; ++k) {
    double yaw = test_rand(&s, -3, 3);
    mr_se3 Xb =
        mr_se3_make(mr_m3_rpy(0, 0, yaw), mr_v3(test_rand(&s, -1, 1), test_rand(&s, -1, 1), 0.05));
    mr_se3 Xp = mr_se3_identity();
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(&box, &Xb, &plane, &Xp, 1e-3, 0, c, NULL);
    assert_int_equal(n, 4);
    int seen = 0;
    for (int i = 0; i < n; ++i) {
      assert_near(c[i].phi, 0.0, 1e-15);
      assert_int_equal(c[i].feature & 4, 0); /* a bottom vertex (z bit clear) */
      seen |= 1 << c[i].feature;
      mr_vec3 xl = mr_se3_inv_act_point(&Xb, c[i].point);
      assert_near(fabs(xl.v[0]), 0.2, 1e-14);
      assert_near(fabs(xl.v[1]), 0.1, 1e-14);
      assert_near(xl.v[2], -0.05, 1e-14);
    }
    assert_int_equal(seen, 0x0f);
  }
}

/* sphere-box at random poses near faces, edges and corners and inside: closed form from the
 * clamped local centre */
static void test_sphere_box(void **state) {
  uint64_t s = 14;
  mr_geom sph = geom(MR_GEOM_SPHERE, 0.1, 0, 0), box = geom(MR_GEOM_BOX, 0.3, 0.2, 0.1);
  for (int k = 0; k < 500; ++k) {
    mr_se3 Xb = test_random_se3(&s, 1);
    /* a local centre near the surface: each coordinate near a face or inside */
    mr_vec3 xl;
    for (int i = 0; i < 3; ++i) {
      double h = box.size[i], u = test_rand(&s, 0, 1);
      xl.v[i] =
          u < 0.5 ? test_rand(&s, -h, h) : (u < 0.75 ? 1 : -1) * (h + test_rand(&s, -0.05, 0.15));
    }
    mr_se3 Xs = mr_se3_make(mr_m3_identity(), mr_se3_act_point(&Xb, xl));
    mr_vec3 q;
    double out2 = 0, inside = INFINITY;
    for (int i = 0; i < 3; ++i) {
      q.v[i] = fmin(fmax(xl.v[i], -box.size[i]), box.size[i]);
      out2 += pow(xl.v[i] - q.v[i], 2);
      inside = fmin(inside, box.size[i] - fabs(xl.v[i]));
    }
    double phi = (out2 > 0 ? sqrt(out2) : -inside) - 0.1;
    mr_contact c[MR_PAIR_MAX_CONTACTS], cc[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(&sph, &Xs, &box, &Xb, 0.02, 0, c, NULL);
    assert_int_equal(n, phi <= 0.02);
    if (!n) continue;
    assert_near(c[0].phi, phi, 1e-14);
    check_frame(&c[0]);
    check_swap(&sph, &Xs, &box, &Xb, 0.02);
    /* the general path agrees: apart (GJK distance) to 1e-6 in Φ and normal; in penetration
     * EPA approximates the curved Minkowski difference by a polytope, 1e-4 */
    if (out2 > 1e-4) {
      double tol = phi >= 0 ? 1e-6 : 1e-4;
      assert_int_equal(mr_collide(&sph, &Xs, &box, &Xb, 0.02, 1, cc, NULL), 1);
      assert_near(cc[0].phi, c[0].phi, tol);
      /* an error ε in Φ allows a normal error O(sqrt(ε / r)) (second order in the angle) */
      double ntol = phi >= 0 ? 1e-6 : 2e-2;
      for (int i = 0; i < 3; ++i)
        assert_near(normal_of(&cc[0]).v[i], normal_of(&c[0]).v[i], ntol);
    }
  }
}

/* deep cases: a sphere centred in a box leaves by the nearest face; parallel capsules at
 * distance d have Φ = d − r₁ − r₂ along their common perpendicular; a box sunk in the plane
 * reports its 4 deepest corners */
static void test_deep_and_parallel(void **state) {
  mr_geom sph = geom(MR_GEOM_SPHERE, 0.1, 0, 0), box = geom(MR_GEOM_BOX, 0.3, 0.2, 0.25);
  mr_se3 Xb = mr_se3_make(mr_m3_rpy(0.2, -0.4, 1.0), mr_v3(0.5, -0.3, 0.2));
  mr_se3 Xs = mr_se3_make(mr_m3_identity(), Xb.p);
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  assert_int_equal(mr_collide(&sph, &Xs, &box, &Xb, 1e-3, 0, c, NULL), 1);
  assert_near(c[0].phi, -0.2 - 0.1, 1e-14);
  /* the normal is the box's local ±y axis */
  assert_near(fabs(mr_v3_dot(normal_of(&c[0]), mr_v3(Xb.R.m[0][1], Xb.R.m[1][1], Xb.R.m[2][1]))),
              1.0, 1e-14);
  mr_geom a = geom(MR_GEOM_CAPSULE, 0.1, 0.5, 0), b = geom(MR_GEOM_CAPSULE, 0.05, 0.3, 0);
  mr_mat3 R = mr_m3_rpy(0.3, 0.7, -0.2);
  mr_vec3 perp = mr_v3(R.m[0][0], R.m[1][0], R.m[2][0]); /* ⟂ to both axes (local z) */
  mr_se3 Xa = mr_se3_make(R, mr_v3_zero()), Xc = mr_se3_make(R, mr_v3_scale(perp, 0.12));
  /* parallel capsules lie on a line: the two ends of the segments' overlap (b's ends, ±0.3
   * along the axis), each at Φ = 0.12 − 0.15, midway between the surfaces (0.085 along perp) */
  mr_vec3 ax = mr_v3(R.m[0][2], R.m[1][2], R.m[2][2]);
  assert_int_equal(mr_collide(&a, &Xa, &b, &Xc, 1e-3, 0, c, NULL), 2);
  for (int k = 0; k < 2; ++k) {
    assert_near(c[k].phi, 0.12 - 0.15, 1e-14);
    for (int i = 0; i < 3; ++i)
      assert_near(normal_of(&c[k]).v[i], -perp.v[i], 1e-14);
    mr_vec3 p =
        mr_v3_madd(mr_v3_scale(perp, 0.085), mr_v3_dot(c[k].point, ax) > 0 ? 0.3 : -0.3, ax);
    for (int i = 0; i < 3; ++i)
      assert_near(c[k].point.v[i], p.v[i], 1e-14);
  }
  assert_true(mr_v3_dot(c[0].point, ax) * mr_v3_dot(c[1].point, ax) < 0);
  mr_geom plane = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_se3 I = mr_se3_identity(), Xd = mr_se3_make(mr_m3_rpy(0.1, 0, 0), mr_v3(0, 0, -0.1));
  int n = mr_collide(&box, &Xd, &plane, &I, 1e-3, 0, c, NULL);
  assert_int_equal(n, 4);
  for (int i = 0; i < n; ++i)
    assert_true(c[i].phi < -0.3);
}

/* capsule-capsule and sphere-capsule: crossing capsules have a closed form; random poses agree
 * with libccd */
static void test_capsules(void **state) {
  mr_geom a = geom(MR_GEOM_CAPSULE, 0.1, 0.5, 0), b = geom(MR_GEOM_CAPSULE, 0.05, 0.4, 0);
  /* a along x at height z, b along y at the origin: Φ = z − 0.15 */
  mr_se3 Xa = mr_se3_make(mr_m3_rpy(0, M_PI / 2, 0), mr_v3(0.1, 0.05, 0.3));
  mr_se3 Xb = mr_se3_make(mr_m3_rpy(M_PI / 2, 0, 0), mr_v3(0, 0, 0));
  mr_contact c[MR_PAIR_MAX_CONTACTS], cc[MR_PAIR_MAX_CONTACTS];
  assert_int_equal(mr_collide(&a, &Xa, &b, &Xb, 0.2, 0, c, NULL), 1);
  assert_near(c[0].phi, 0.15, 1e-14);
  assert_near(normal_of(&c[0]).v[2], 1.0, 1e-14);
  assert_near(c[0].point.v[0], 0.0, 1e-14);
  assert_near(c[0].point.v[1], 0.05, 1e-14);
  uint64_t s = 15;
  mr_geom sph = geom(MR_GEOM_SPHERE, 0.15, 0, 0);
  int compared = 0;
  for (int k = 0; k < 300; ++k) {
    Xa = test_random_se3(&s, 0.4), Xb = test_random_se3(&s, 0.4);
    const mr_geom *ga = k % 2 ? &a : &sph;
    int n = mr_collide(ga, &Xa, &b, &Xb, 0.05, 0, c, NULL);
    check_swap(ga, &Xa, &b, &Xb, 0.05);
    if (!n) continue;
    check_frame(&c[0]);
    /* the general path: GJK apart (1e-6), EPA in penetration (polytope approximation of the
     * rounded shapes, 1e-4), only where the core segments are apart (else the normal is not
     * unique) */
    if (c[0].phi < -0.05) continue;
    double tol = c[0].phi >= 0 ? 1e-6 : 1e-4;
    assert_int_equal(mr_collide(ga, &Xa, &b, &Xb, 0.05, 1, cc, NULL), 1);
    assert_near(cc[0].phi, c[0].phi, tol);
    /* an error ε in Φ allows a normal error O(sqrt(ε / r)) (second order in the angle) */
    double ntol = c[0].phi >= 0 ? 1e-6 : 2e-2;
    for (int i = 0; i < 3; ++i)
      assert_near(normal_of(&cc[0]).v[i], normal_of(&c[0]).v[i], ntol);
    compared++;
  }
  assert_true(compared > 20);
}

/* box on box: a face manifold of 4 points with the gap as Φ; random poses: the deepest point
 * agrees with libccd where the boxes are apart */
static void test_box_box(void **state) {
  mr_geom a = geom(MR_GEOM_BOX, 0.1, 0.1, 0.1), b = geom(MR_GEOM_BOX, 0.5, 0.5, 0.1);
  mr_se3 Xb = mr_se3_identity();
  mr_contact c[MR_PAIR_MAX_CONTACTS], cc[MR_PAIR_MAX_CONTACTS];
  double gaps[] = {-0.01, 0.0, 0.0009};
  for (int k = 0; k < 3; ++k) {
    mr_se3 Xa = mr_se3_make(mr_m3_rpy(0, 0, 0.3), mr_v3(0.1, -0.2, 0.2 + gaps[k]));
    int n = mr_collide(&a, &Xa, &b, &Xb, 1e-3, 0, c, NULL);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; ++i) {
      assert_near(c[i].phi, gaps[k], 1e-14);
      assert_near(normal_of(&c[i]).v[2], 1.0, 1e-14);
      assert_near(c[i].point.v[2], 0.1 + 0.5 * gaps[k], 1e-14);
    }
    check_swap(&a, &Xa, &b, &Xb, 1e-3);
  }
  /* a small box overhanging the edge of the big one: clipped to the big box's face */
  mr_se3 Xa = mr_se3_make(mr_m3_identity(), mr_v3(0.5, 0, 0.2));
  assert_int_equal(mr_collide(&a, &Xa, &b, &Xb, 1e-3, 0, c, NULL), 4);
  for (int i = 0; i < 4; ++i)
    assert_true(c[i].point.v[0] <= 0.5 + 1e-12);
  uint64_t s = 16;
  int compared = 0;
  for (int k = 0; k < 300; ++k) {
    Xa = test_random_se3(&s, 0.5);
    mr_se3 Xc = test_random_se3(&s, 0.5);
    int n = mr_collide(&a, &Xa, &b, &Xc, 0.05, 0, c, NULL);
    check_swap(&a, &Xa, &b, &Xc, 0.05);
    if (!n) continue;
    double mn = INFINITY;
    for (int i = 0; i < n; ++i)
      mn = fmin(mn, c[i].phi), check_frame(&c[i]);
    if (mn < 0) continue;
    int m = mr_collide(&a, &Xa, &b, &Xc, 0.05, 1, cc, NULL);
    assert_true(m >= 1);
    double mc = INFINITY;
    for (int i = 0; i < m; ++i)
      mc = fmin(mc, cc[i].phi);
    assert_near(mc, mn, 1e-9);
    compared++;
  }
  assert_true(compared > 5);
}

/* keys of a pair's contacts, sorted */
static int sorted_keys(const mr_contact *c, int n, uint64_t *k) {
  for (int i = 0; i < n; ++i)
    k[i] = c[i].key;
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && k[j - 1] > k[j]; --j) {
      uint64_t t = k[j];
      k[j] = k[j - 1], k[j - 1] = t;
    }
  return n;
}

/* a resting pair under round-off: a at Xa on b at Xb (a resting with Φ = −1e-12 m), then 199
 * poses moved by round-off-sized tilts and shifts (up to 1e-13 rad and 1e-13 m: the same
 * configuration to 1.3e-13 m at the contact points): 4 contacts with the same keys every time,
 * each at Φ = −1e-12 m within 2e-13 (the shift moves a point by up to 1e-13 m, each 1e-13 rad
 * tilt by 1.5e-14 m at the ≤ 0.15 m from a centre where the points lie, round-off of 0.4 m
 * coordinates 1e-16) */
static void same_keys_under_roundoff(const mr_geom *a, mr_se3 Xa0, const mr_geom *b, mr_se3 Xb0,
                                     double margin, uint64_t *s) {
  uint64_t k0[MR_PAIR_MAX_CONTACTS], k[MR_PAIR_MAX_CONTACTS];
  for (int trial = 0; trial < 200; ++trial) {
    mr_se3 Xa = Xa0, Xb = Xb0;
    if (trial > 0) {
      mr_mat3 Ta = mr_m3_axis_angle(random_dir(s), test_rand(s, -1e-13, 1e-13));
      mr_mat3 Tb = mr_m3_axis_angle(random_dir(s), test_rand(s, -1e-13, 1e-13));
      Xa.R = mr_m3_mul(&Ta, &Xa0.R), Xb.R = mr_m3_mul(&Tb, &Xb0.R);
      Xa.p = mr_v3_madd(Xa.p, test_rand(s, 0, 1e-13), random_dir(s));
    }
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(a, &Xa, b, &Xb, margin, 0, c, NULL);
    assert_int_equal(n, 4);
    for (int i = 0; i < n; ++i)
      assert_near(c[i].phi, -1e-12, 2e-13);
    sorted_keys(c, n, trial ? k : k0);
    for (int i = 0; trial && i < n; ++i)
      assert_true(k[i] == k0[i]);
  }
}

/* resting pairs keep one contact set under round-off (same_keys_under_roundoff):
 * - equal cubes (10 cm) face on face, in line, offset by 2 µm and by (2, −1) cm: the two faces'
 *   separations are equal to round-off, and the reference face must not change with its sign;
 * - a cube turned by 0.3 rad and by 45° on an equal cube: the clipped patch has 8 points at one
 *   depth, reduced to 4; the deepest and the farthest must not be chosen by the round-off;
 * - a cylinder (r 5 cm) standing on the plane and on a box, turned by 0.3 rad: its flat cap,
 *   as rim points or as an octagon, must not turn with the round-off of its tilt. */
static void test_resting_keys(void **state) {
  mr_geom cube = geom(MR_GEOM_BOX, 0.05, 0.05, 0.05), cyl = geom(MR_GEOM_CYLINDER, 0.05, 0.1, 0);
  mr_geom plane = mr_geom_default(MR_GEOM_HALFSPACE, 0), slab = geom(MR_GEOM_BOX, 0.5, 0.5, 0.1);
  mr_se3 Xb = mr_se3_make(mr_m3_identity(), mr_v3(0.3, -0.4, 0.25));
  uint64_t s = 23;
  const double offset[3][2] = {{0, 0}, {2e-6, -2e-6}, {0.02, -0.01}};
  for (int o = 0; o < 3; ++o) {
    mr_vec3 p = mr_v3(0.3 + offset[o][0], -0.4 + offset[o][1], 0.35 - 1e-12);
    same_keys_under_roundoff(&cube, mr_se3_make(mr_m3_identity(), p), &cube, Xb, 0.0, &s);
  }
  const double yaw[2] = {0.3, M_PI / 4};
  for (int k = 0; k < 2; ++k) {
    mr_se3 Xa = mr_se3_make(mr_m3_rpy(0, 0, yaw[k]), mr_v3(0.3, -0.4, 0.35 - 1e-12));
    same_keys_under_roundoff(&cube, Xa, &cube, Xb, 0.0, &s);
  }
  mr_se3 Xc = mr_se3_make(mr_m3_rpy(0, 0, 0.3), mr_v3(0.01, 0.02, 0.1 - 1e-12));
  same_keys_under_roundoff(&cyl, Xc, &plane, mr_se3_identity(), 1e-3, &s);
  same_keys_under_roundoff(&cyl, Xc, &slab, mr_se3_make(mr_m3_identity(), mr_v3(0, 0, -0.1)), 1e-3,
                           &s);
}

/* the contact skin: at margin 0 a cube whose step ended 1e-10 m above the cube or the plane it
 * rests on (the lift r (ω Δt)² / 2 of its corners at ω = 0.06 rad/s, Δt = 1 ms) is still reported,
 * its 4 corners at the true Φ = 1e-10 (closed form to 1e-14 as in test_box_box); 1e-6 m above,
 * beyond the skin (1e-6 of the half-diagonals, 1.7e-7 m for the pair, 8.7e-8 m on the plane),
 * it is not; a margin larger than the skin is kept as it is */
static void test_contact_skin(void **state) {
  mr_geom a = geom(MR_GEOM_BOX, 0.05, 0.05, 0.05), plane = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_se3 Xb = mr_se3_make(mr_m3_identity(), mr_v3(0.1, 0.2, 0.05)), I = mr_se3_identity();
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  const double gaps[] = {1e-10, 1e-6};
  for (int k = 0; k < 2; ++k) {
    mr_se3 Xa = mr_se3_make(mr_m3_identity(), mr_v3(0.1, 0.2, 0.15 + gaps[k]));
    int n = mr_collide(&a, &Xa, &a, &Xb, 0.0, 0, c, NULL);
    assert_int_equal(n, k ? 0 : 4);
    for (int i = 0; i < n; ++i)
      assert_near(c[i].phi, gaps[k], 1e-14);
    Xa.p.v[2] = 0.05 + gaps[k];
    n = mr_collide(&a, &Xa, &plane, &I, 0.0, 0, c, NULL);
    assert_int_equal(n, k ? 0 : 4);
    for (int i = 0; i < n; ++i)
      assert_near(c[i].phi, gaps[k], 1e-14);
  }
  mr_se3 Xa = mr_se3_make(mr_m3_identity(), mr_v3(0.1, 0.2, 0.15 + 2e-6));
  assert_int_equal(mr_collide(&a, &Xa, &a, &Xb, 1e-6, 0, c, NULL), 0);
  assert_int_equal(mr_collide(&a, &Xa, &a, &Xb, 3e-6, 0, c, NULL), 4);
}

/* a cylinder standing on the plane: 4 rim points at Φ = 0; lying: 2, one per cap */
static void test_cylinder_plane(void **state) {
  mr_geom plane = mr_geom_default(MR_GEOM_HALFSPACE, 0), cyl = geom(MR_GEOM_CYLINDER, 0.1, 0.2, 0);
  mr_se3 Xp = mr_se3_identity(), Xc = mr_se3_make(mr_m3_identity(), mr_v3(0.3, 0.4, 0.2));
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  assert_int_equal(mr_collide(&cyl, &Xc, &plane, &Xp, 1e-3, 0, c, NULL), 4);
  for (int i = 0; i < 4; ++i) {
    assert_near(c[i].phi, 0, 1e-15);
    assert_near(hypot(c[i].point.v[0] - 0.3, c[i].point.v[1] - 0.4), 0.1, 1e-15);
  }
  Xc = mr_se3_make(mr_m3_rpy(M_PI / 2, 0, 0), mr_v3(0, 0, 0.1));
  assert_int_equal(mr_collide(&cyl, &Xc, &plane, &Xp, 1e-3, 0, c, NULL), 2);
  for (int i = 0; i < 2; ++i)
    assert_near(c[i].phi, 0, 1e-15);
}

/* the frame depends on the normal only, is continuous, and equals the world axes for +z */
static void test_frame(void **state) {
  mr_mat3 F = mr_contact_frame(mr_v3(0, 0, 1));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      assert_near(F.m[i][j], i == j, 0.0);
  uint64_t s = 17;
  for (int k = 0; k < 100; ++k) {
    mr_vec3 n = random_dir(&s);
    if (n.v[2] < -0.9) continue;
    mr_vec3 n2 = mr_v3_normalize(mr_v3_madd(n, 1e-7, random_dir(&s)));
    mr_mat3 A = mr_contact_frame(n), B = mr_contact_frame(n2);
    /* Lipschitz away from the pole: a 1e-7 change of n moves the basis by O(1e-7) */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        assert_near(A.m[i][j], B.m[i][j], 1e-5);
  }
}

static double flat(double x, double y, void *u) {
  return 0.0;
}
static double wave(double x, double y, void *u) {
  return 0.05 * sin(7 * x) * cos(5 * y);
}

/* a flat heightfield gives the halfspace's contacts (sphere, box, capsule) */
static void test_hfield_flat(void **state) {
  mr_error err;
  mr_hfield *h = mr_hfield_from_function(flat, NULL, 41, 41, -1, -1, 0.05, 0.05, 0.1, &err);
  assert_non_null(h);
  mr_geom hf = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0),
          plane = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  hf.hfield = h;
  mr_geom shapes[] = {geom(MR_GEOM_SPHERE, 0.1, 0, 0), geom(MR_GEOM_BOX, 0.1, 0.07, 0.05),
                      geom(MR_GEOM_CAPSULE, 0.05, 0.1, 0)};
  uint64_t s = 18;
  mr_se3 I = mr_se3_identity();
  for (int k = 0; k < 90; ++k) {
    mr_geom *g = &shapes[k % 3];
    mr_se3 X = test_random_se3(&s, 0.5);
    X.p.v[2] = test_rand(&s, 0.0, 0.25);
    mr_contact c1[MR_PAIR_MAX_CONTACTS], c2[MR_PAIR_MAX_CONTACTS];
    int n1 = mr_collide(g, &X, &plane, &I, 0.01, 0, c1, NULL);
    int n2 = mr_collide(g, &X, &hf, &I, 0.01, 0, c2, NULL);
    double m1 = INFINITY, m2 = INFINITY;
    for (int i = 0; i < n1; ++i)
      m1 = fmin(m1, c1[i].phi);
    for (int i = 0; i < n2; ++i) {
      m2 = fmin(m2, c2[i].phi);
      assert_near(normal_of(&c2[i]).v[2], 1.0, 1e-14);
    }
    assert_int_equal(n1 > 0, n2 > 0);
    /* the deepest point is the same point: Φ equal to round-off */
    if (n1) assert_near(m1, m2, 1e-14);
    /* a box's contacts are its vertices in both cases */
    if (g->type == MR_GEOM_BOX) assert_int_equal(n1, n2);
  }
  mr_hfield_free(h);
}

/* ---- an independent distance to a heightfield: every triangle of a window, by brute force ----
 * The field's cells are split along the diagonal from (i, j) to (i + 1, j + 1) (the
 * interpolation of mr_hfield_height). Distance from p to a triangle: to its plane when the
 * projection's barycentric coordinates (solved from the 2 × 2 Gram system) are all ≥ 0, else
 * to the nearest of its three edges (clamped projection on each segment). */
static double segment_dist(mr_vec3 p, mr_vec3 a, mr_vec3 b, mr_vec3 *q) {
  mr_vec3 d = mr_v3_sub(b, a);
  double t = fmin(fmax(mr_v3_dot(mr_v3_sub(p, a), d) / mr_v3_dot(d, d), 0.0), 1.0);
  *q = mr_v3_madd(a, t, d);
  return mr_v3_norm(mr_v3_sub(p, *q));
}

static double triangle_dist(mr_vec3 p, const mr_vec3 v[3], mr_vec3 *q) {
  mr_vec3 e1 = mr_v3_sub(v[1], v[0]), e2 = mr_v3_sub(v[2], v[0]), w = mr_v3_sub(p, v[0]);
  double a = mr_v3_dot(e1, e1), b = mr_v3_dot(e1, e2), c = mr_v3_dot(e2, e2);
  double d = mr_v3_dot(w, e1), e = mr_v3_dot(w, e2), det = a * c - b * b;
  double s = (c * d - b * e) / det, t = (a * e - b * d) / det;
  if (s >= 0 && t >= 0 && s + t <= 1) {
    *q = mr_v3_add(v[0], mr_v3_add(mr_v3_scale(e1, s), mr_v3_scale(e2, t)));
    return mr_v3_norm(mr_v3_sub(p, *q));
  }
  double best = INFINITY;
  for (int k = 0; k < 3; ++k) {
    mr_vec3 qk = mr_v3(0, 0, 0);
    double dk = segment_dist(p, v[k], v[(k + 1) % 3], &qk);
    if (dk < best) best = dk, *q = qk;
  }
  return best;
}

/* the distance from p to the field's surface over the cells within `window` of p in x and y
 * (any closer point lies in them), and the closest point q */
static double hfield_brute_dist(const mr_hfield *h, mr_vec3 p, double window, mr_vec3 *q) {
  double best = INFINITY;
  for (int j = 0; j + 1 < h->ny; ++j)
    for (int i = 0; i + 1 < h->nx; ++i) {
      double x = h->x0 + i * h->dx, y = h->y0 + j * h->dy;
      if (x > p.v[0] + window || x + h->dx < p.v[0] - window || y > p.v[1] + window ||
          y + h->dy < p.v[1] - window)
        continue;
      const double *z = h->h + j * h->nx + i;
      mr_vec3 a = mr_v3(x, y, z[0]), b = mr_v3(x + h->dx, y, z[1]);
      mr_vec3 c = mr_v3(x + h->dx, y + h->dy, z[h->nx + 1]), d = mr_v3(x, y + h->dy, z[h->nx]);
      mr_vec3 tri[2][3] = {{a, b, c}, {a, c, d}};
      for (int t = 0; t < 2; ++t) {
        mr_vec3 qt = mr_v3(0, 0, 0);
        double dt = triangle_dist(p, tri[t], &qt);
        if (dt < best) best = dt, *q = qt;
      }
    }
  return best;
}

/* a sphere over a heightfield (centre above the surface): its deepest contact has Φ = the
 * brute-force distance − r and the normal from the closest point to the centre. Both are
 * computed from the same samples by different formulas: round-off of coordinates of at most
 * 5 m over a few dozen operations, 1e-13 m; the normal's components, that over the distance
 * (≥ 1 mm here: 1e-10) */
static void check_sphere_over_hfield(const mr_geom *sph, const mr_geom *hf, mr_vec3 x,
                                     double margin) {
  mr_se3 I = mr_se3_identity(), X = mr_se3_make(mr_m3_identity(), x);
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  int n = mr_collide(sph, &X, hf, &I, margin, 0, c, NULL);
  double r = sph->size[0];
  mr_vec3 q = mr_v3(0, 0, 0);
  double dist = hfield_brute_dist(hf->hfield, x, r + margin + 1e-9, &q);
  if (dist - r > margin) {
    assert_int_equal(n, 0);
    return;
  }
  assert_true(n >= 1);
  int k = 0;
  for (int i = 0; i < n; ++i) {
    check_frame(&c[i]);
    if (c[i].phi < c[k].phi) k = i;
  }
  if (!(fabs(c[k].phi - (dist - r)) <= 1e-13))
    fail_msg("sphere at (%.6f, %.6f, %.6f): Φ %.17g, brute-force %.17g", x.v[0], x.v[1], x.v[2],
             c[k].phi, dist - r);
  mr_vec3 nb = mr_v3_scale(mr_v3_sub(x, q), 1.0 / dist), nc = normal_of(&c[k]);
  for (int a = 0; a < 3; ++a)
    assert_near(nc.v[a], nb.v[a], 1e-13 / dist);
}

/* a sphere rolling over a wavy heightfield: Φ (deepest contact) is continuous across cell
 * edges and is the exact distance to the surface where the surface is locally one triangle */
static void test_hfield_rolling(void **state) {
  mr_error err;
  mr_hfield *h = mr_hfield_from_function(wave, NULL, 101, 101, -1, -1, 0.02, 0.02, 0.1, &err);
  assert_non_null(h);
  mr_geom hf = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0), sph = geom(MR_GEOM_SPHERE, 0.05, 0, 0);
  hf.hfield = h;
  mr_se3 I = mr_se3_identity();
  double prev = NAN;
  int steps = 2000;
  for (int k = 0; k <= steps; ++k) {
    double x = -0.3 + 0.6 * k / steps, y = 0.013 + 0.1 * x;
    mr_se3 X = mr_se3_make(mr_m3_identity(), mr_v3(x, y, mr_hfield_height(h, x, y) + 0.05));
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(&sph, &X, &hf, &I, 0.02, 0, c, NULL);
    assert_true(n >= 1);
    double mn = INFINITY;
    for (int i = 0; i < n; ++i)
      mn = fmin(mn, c[i].phi);
    /* the centre sits on the surface + r: Φ is the exact distance minus r */
    check_sphere_over_hfield(&sph, &hf, X.p, 0.02);
    /* Φ is 1-Lipschitz in the centre position; the centre moves by at most 0.0003 · (1 + 0.1 +
     * slope 0.6) per step */
    if (k) assert_true(fabs(mn - prev) <= 0.0006);
    prev = mn;
  }
  mr_hfield_free(h);
}

static double spike(double x, double y, void *u) {
  return fabs(x) < 1e-9 && fabs(y) < 1e-9 ? 0.03 : 0.0;
}

/* a box over a spike of the terrain (one grid vertex 3 cm up, between its corners): the spike
 * gives a contact under the box's bottom face, Φ = −(0.03 − 0.02) with the normal +z */
static void test_hfield_box_spike(void **state) {
  mr_error err;
  mr_hfield *h = mr_hfield_from_function(spike, NULL, 21, 21, -0.5, -0.5, 0.05, 0.05, 0.1, &err);
  mr_geom hf = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0), box = geom(MR_GEOM_BOX, 0.2, 0.2, 0.05);
  hf.hfield = h;
  mr_se3 I = mr_se3_identity(), X = mr_se3_make(mr_m3_rpy(0, 0, 0.3), mr_v3(0.01, -0.02, 0.07));
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  int n = mr_collide(&box, &X, &hf, &I, 1e-3, 0, c, NULL);
  assert_true(n >= 1);
  double mn = INFINITY;
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (c[i].phi < mn) mn = c[i].phi, k = i;
  /* the spike tip (0, 0, 0.03) is 0.01 above the bottom face z = 0.02 */
  assert_near(mn, -0.01, 1e-14);
  assert_near(normal_of(&c[k]).v[2], 1.0, 1e-14);
  assert_near(c[k].point.v[2], 0.025, 1e-14);
  mr_hfield_free(h);
}

static double dome(double x, double y, void *u) {
  return 0.004 - 0.2 * (x * x + y * y);
}

/* a box resting on its 4 corners over a dome sampled every 1 cm: about 400 grid vertices lie
 * under its bottom face, all deeper than the corners. The contacts stay within the pair's
 * bound (they stream through a reduced buffer) and the deepest is the dome's top, exactly:
 * bottom face at z = 0.001, top 0.004, so Φ = −0.003 with the face normal +z */
static void test_hfield_box_many_vertices(void **state) {
  mr_error err;
  mr_hfield *h = mr_hfield_from_function(dome, NULL, 61, 61, -0.3, -0.3, 0.01, 0.01, 0.1, &err);
  assert_non_null(h);
  mr_geom hf = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0), box = geom(MR_GEOM_BOX, 0.1, 0.1, 0.02);
  hf.hfield = h;
  mr_se3 I = mr_se3_identity(), X = mr_se3_make(mr_m3_identity(), mr_v3(0, 0, 0.021));
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  int n = mr_collide(&box, &X, &hf, &I, 2e-3, 0, c, NULL);
  assert_true(n >= 1 && n <= MR_PAIR_MAX_CONTACTS);
  double mn = INFINITY;
  int k = 0;
  for (int i = 0; i < n; ++i) {
    check_frame(&c[i]);
    if (c[i].phi < mn) mn = c[i].phi, k = i;
  }
  /* exact samples of a quadratic: round-off of the sums only */
  assert_near(mn, -0.003, 1e-14);
  assert_near(normal_of(&c[k]).v[2], 1.0, 1e-14);
  mr_hfield_free(h);
}

/* the bumpy ground of the reference study (EXPERIMENTS.md B10): 501 x 501 samples; spheres of
 * Solo's foot radius placed r + 1 mm above the surface everywhere find a contact with
 * Φ ≤ 1 mm (the surface may rise closer elsewhere under the foot) and Φ > −r */
static double bumpy(double x, double y, void *u) {
  return sin(30 * x) / 5 + cos(30 * y * y) / 20 + sin(50 * x * y) / 10;
}

static void test_hfield_bumpy(void **state) {
  mr_error err;
  mr_hfield *h = mr_hfield_from_function(bumpy, NULL, 501, 501, -5, -5, 0.02, 0.02, 0.5, &err);
  assert_non_null(h);
  /* samples are the function's values, bit for bit */
  assert_near(h->h[250 * 501 + 300], bumpy(-5 + 300 * 0.02, -5 + 250 * 0.02, NULL), 0);
  mr_geom hf = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0), foot = geom(MR_GEOM_SPHERE, 0.0191, 0, 0);
  hf.hfield = h;
  mr_se3 I = mr_se3_identity();
  uint64_t s = 20;
  for (int k = 0; k < 200; ++k) {
    double x = test_rand(&s, -4.9, 4.9), y = test_rand(&s, -4.9, 4.9);
    mr_se3 X = mr_se3_make(mr_m3_identity(), mr_v3(x, y, mr_hfield_height(h, x, y) + 0.0201));
    mr_contact c[MR_PAIR_MAX_CONTACTS];
    int n = mr_collide(&foot, &X, &hf, &I, 2e-3, 0, c, NULL);
    assert_true(n >= 1);
    double mn = INFINITY;
    for (int i = 0; i < n; ++i)
      mn = fmin(mn, c[i].phi), check_frame(&c[i]);
    check_sphere_over_hfield(&foot, &hf, X.p, 2e-3);
    /* the same foot 5 mm below the surface: the centre's signed distance to the plane of the
     * triangle below it (cell split along its rising diagonal) is negative, and Φ is at most
     * that minus r (a neighbouring face may be deeper, never shallower: the deepest candidate
     * is kept); round-off as above, 1e-13 m */
    mr_vec3 y0 = mr_v3(x, y, mr_hfield_height(h, x, y) - 0.005);
    mr_se3 Y = mr_se3_make(mr_m3_identity(), y0);
    int i = (int)floor((x - h->x0) / h->dx), j = (int)floor((y - h->y0) / h->dy);
    double cx = h->x0 + i * h->dx, cy = h->y0 + j * h->dy;
    const double *z = h->h + j * h->nx + i;
    mr_vec3 a = mr_v3(cx, cy, z[0]), b = mr_v3(cx + h->dx, cy, z[1]),
            cc = mr_v3(cx + h->dx, cy + h->dy, z[h->nx + 1]), d = mr_v3(cx, cy + h->dy, z[h->nx]);
    int lower = (x - cx) / h->dx >= (y - cy) / h->dy;
    mr_vec3 nt = mr_v3_normalize(lower ? mr_v3_cross(mr_v3_sub(b, a), mr_v3_sub(cc, a))
                                       : mr_v3_cross(mr_v3_sub(cc, a), mr_v3_sub(d, a)));
    double sd = mr_v3_dot(mr_v3_sub(y0, a), nt);
    assert_true(sd < 0.0);
    n = mr_collide(&foot, &Y, &hf, &I, 2e-3, 0, c, NULL);
    assert_true(n >= 1);
    mn = INFINITY;
    for (int q = 0; q < n; ++q)
      mn = fmin(mn, c[q].phi);
    if (!(mn <= sd - 0.0191 + 1e-13))
      fail_msg("foot 5 mm under (%.6f, %.6f): Φ %.17g, plane distance − r %.17g", x, y, mn,
               sd - 0.0191);
  }
  mr_hfield_free(h);
}

/* heightfield text file: values, comments, errors naming file, line and value */
static void test_hfield_file(void **state) {
  const char *path = "build/test_hfield.txt";
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# a 3 x 2 grid\n0, 0.1, 0.2\n0.3 0.4 0.5\n");
  fclose(f);
  mr_error err;
  mr_hfield *h = mr_hfield_load(path, 0, 0, 0.5, 1.0, 0.1, &err);
  assert_non_null(h);
  assert_int_equal(h->nx, 3);
  assert_int_equal(h->ny, 2);
  assert_near(h->hmax, 0.5, 0);
  /* the piecewise-linear surface interpolates the corners */
  assert_near(mr_hfield_height(h, 1.0, 1.0), 0.5, 1e-15);
  assert_near(mr_hfield_height(h, 0.25, 0.0), 0.05, 1e-15);
  mr_hfield_free(h);
  f = fopen(path, "w");
  fprintf(f, "0 0.1 0.2\n0.3 abc 0.5\n");
  fclose(f);
  assert_null(mr_hfield_load(path, 0, 0, 0.5, 1.0, 0.1, &err));
  assert_int_equal(err.status, MR_ERR_PARSE);
  assert_non_null(strstr(err.msg, "test_hfield.txt:2"));
  assert_non_null(strstr(err.msg, "abc"));
  assert_null(mr_hfield_load("build/no/such/file", 0, 0, 0.5, 1.0, 0.1, &err));
  assert_int_equal(err.status, MR_ERR_IO);
  assert_non_null(strstr(err.msg, "build/no/such/file"));
}

/* coordinates beyond the collision range: a mesh of 1e20 m vertices is refused when its hull
 * is computed and when a context is created (a hull filled by hand); a placement at 1e20 m
 * gives no contact and counts as out of range, without running any iteration on it */
static void test_out_of_range(void **state) {
  double v[8 * 3];
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k)
      v[3 * i + k] = (i >> k & 1 ? 1e20 : -1e20) * (1 + 0.1 * k);
  mr_mesh mesh = {8, v, 0, NULL, 0, NULL, 0, 0};
  mr_error err;
  assert_int_equal(mr_mesh_compute_hull(&mesh, "huge.stl", &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "huge.stl"));
  assert_non_null(strstr(err.msg, "1e+20"));
  mr_model *m = mr_model_create("huge");
  mr_geom g = mr_geom_default(MR_GEOM_MESH, 0);
  g.mesh = &mesh;
  mesh.nhull = 8, mesh.hull = v;
  assert_true(mr_model_add_geom(m, &g, &err) >= 0);
  m->geoms[0].mesh = &mesh;
  assert_null(mr_collision_create(m, NULL, 8, &err));
  assert_non_null(strstr(err.msg, "1e+20"));
  m->geoms[0].mesh = NULL;
  mr_model_free(m);
  mr_geom box = geom(MR_GEOM_BOX, 0.1, 0.1, 0.1), cyl = geom(MR_GEOM_CYLINDER, 0.1, 0.2, 0);
  mr_se3 Xa = mr_se3_make(mr_m3_identity(), mr_v3(1e20, 0, 3e38)), Xb = mr_se3_identity();
  mr_contact c[MR_PAIR_MAX_CONTACTS];
  mr_collision_stats st = {0};
  assert_int_equal(mr_collide(&box, &Xa, &cyl, &Xb, 1e-3, 0, c, &st), 0);
  assert_int_equal(mr_collide(&cyl, &Xb, &box, &Xa, 1e-3, 1, c, &st), 0);
  assert_int_equal(st.out_of_range, 2);
  Xa.p = mr_v3(NAN, 0, 0);
  assert_int_equal(mr_collide(&box, &Xa, &cyl, &Xb, 1e-3, 0, c, &st), 0);
  assert_int_equal(st.out_of_range, 3);
}

/* a model of n free bodies with random shapes, plus a ground plane on the world */
static mr_model *random_scene(int n, uint64_t *s, mr_se3 *Xg, double span) {
  mr_model *m = mr_model_create("scene");
  mr_error err;
  mr_inertia I = {1.0, mr_v3_zero(), mr_m3_diag(0.01, 0.01, 0.01)};
  mr_geom ground = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  mr_model_add_geom(m, &ground, &err);
  Xg[0] = mr_se3_identity();
  for (int i = 0; i < n; ++i) {
    int b = mr_model_add_body(m, 0, "j", MR_JOINT_FREE, mr_se3_identity(), mr_v3(0, 0, 1), "b", I,
                              &err);
    mr_geom_type t = i % 3 == 0 ? MR_GEOM_SPHERE : i % 3 == 1 ? MR_GEOM_BOX : MR_GEOM_CAPSULE;
    mr_geom g = geom(t, test_rand(s, 0.05, 0.2), test_rand(s, 0.05, 0.2), test_rand(s, 0.05, 0.2));
    g.body = b;
    assert_true(mr_model_add_geom(m, &g, &err) >= 0);
    Xg[i + 1] = test_random_se3(s, span);
    Xg[i + 1].p.v[2] = fabs(Xg[i + 1].p.v[2]);
  }
  return m;
}

static int cmp_pair(const void *x, const void *y) {
  const mr_geom_pair *a = x, *b = y;
  return a->a != b->a ? a->a - b->a : a->b - b->b;
}

/* sweep and prune finds the same candidate pairs and contacts as brute force, over several
 * moving frames (insertion sort from the previous order) */
static void test_broadphase(void **state) {
  uint64_t s = 19;
  enum { n = 300 };
  static mr_se3 Xg[n + 1];
  mr_model *m = random_scene(n, &s, Xg, 2.0);
  mr_collision_settings cs = mr_collision_settings_default();
  mr_error err;
  mr_collision *sap = mr_collision_create(m, &cs, 10000, &err);
  cs.broadphase = MR_BROADPHASE_BRUTE;
  mr_collision *bf = mr_collision_create(m, &cs, 10000, &err);
  assert_non_null(sap);
  assert_non_null(bf);
  static mr_geom_pair p1[20000], p2[20000];
  for (int frame = 0; frame < 8; ++frame) {
    for (int i = 1; i <= n; ++i)
      Xg[i].p.v[0] += test_rand(&s, -0.05, 0.05);
    /* from frame 5 the scene stretches along y: the sweep switches axis (merge sort) */
    if (frame == 5)
      for (int i = 1; i <= n; ++i)
        Xg[i].p.v[1] *= 10;
    assert_int_equal(mr_collision_detect_geoms(sap, Xg, &err), MR_OK);
    assert_int_equal(mr_collision_detect_geoms(bf, Xg, &err), MR_OK);
    const mr_geom_pair *a, *b;
    int na = mr_collision_pairs(sap, &a), nb = mr_collision_pairs(bf, &b);
    assert_int_equal(na, nb);
    assert_true(na > (frame < 5 ? 50 : 5));
    memcpy(p1, a, (size_t)na * sizeof *a);
    memcpy(p2, b, (size_t)nb * sizeof *b);
    qsort(p1, (size_t)na, sizeof *p1, cmp_pair);
    qsort(p2, (size_t)nb, sizeof *p2, cmp_pair);
    for (int i = 0; i < na; ++i)
      assert_true(p1[i].a == p2[i].a && p1[i].b == p2[i].b);
    assert_int_equal(mr_collision_ncontacts(sap), mr_collision_ncontacts(bf));
  }
  mr_collision_free(sap);
  mr_collision_free(bf);
  mr_model_free(m);
}

/* filters (same body, parent/child, group/mask, exclude, include), materials, overflow */
static void test_context(void **state) {
  mr_model *m = mr_model_create("ctx");
  mr_error err;
  mr_inertia I = {1.0, mr_v3_zero(), mr_m3_diag(0.01, 0.01, 0.01)};
  int b1 = mr_model_add_body(m, 0, "j1", MR_JOINT_FREE, mr_se3_identity(), mr_v3(0, 0, 1), "b1", I,
                             &err);
  int b2 = mr_model_add_body(m, b1, "j2", MR_JOINT_REVOLUTE, mr_se3_identity(), mr_v3(0, 0, 1),
                             "b2", I, &err);
  mr_geom ground = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  ground.friction = 0.25;
  mr_model_add_geom(m, &ground, &err); /* 0 */
  mr_geom g = geom(MR_GEOM_SPHERE, 0.1, 0, 0);
  g.body = b1, g.friction = 1.0;
  mr_model_add_geom(m, &g, &err); /* 1 */
  g.body = b2;
  mr_model_add_geom(m, &g, &err); /* 2: child of 1's body */
  mr_geom bad = geom(MR_GEOM_BOX, 0.1, -0.2, 0.1);
  assert_int_equal(mr_model_add_geom(m, &bad, &err), -1);
  assert_non_null(strstr(err.msg, "-0.2"));
  mr_se3 Xb[3] = {mr_se3_identity(), mr_se3_make(mr_m3_identity(), mr_v3(0, 0, 0.1)),
                  mr_se3_make(mr_m3_identity(), mr_v3(0.1, 0, 0.1))};
  mr_collision_settings cs = mr_collision_settings_default();
  mr_collision *c = mr_collision_create(m, &cs, 8, &err);
  assert_int_equal(mr_collision_detect(c, Xb, &err), MR_OK);
  /* spheres on parent/child bodies are skipped: 2 ground contacts, μ = sqrt(0.25 · 1) */
  assert_int_equal(mr_collision_ncontacts(c), 2);
  const mr_contact *ct = mr_collision_contacts(c);
  for (int i = 0; i < 2; ++i) {
    assert_int_equal(ct[i].geom[1], 0);
    assert_near(ct[i].mu, 0.5, 1e-15);
    assert_near(ct[i].phi, 0.0, 1e-15);
    assert_near(ct[i].frame.m[2][2], 1.0, 0);
  }
  mr_collision_free(c);
  /* include the parent/child pair, override the material of (0, 1), exclude (0, 2) */
  mr_geom_pair inc = {2, 1}, exc = {0, 2};
  mr_pair_material mat = {1, 0, 0.9, 0.5, 1e-4, 2e-4};
  cs.include = &inc, cs.ninclude = 1, cs.exclude = &exc, cs.nexclude = 1;
  cs.materials = &mat, cs.nmaterials = 1;
  c = mr_collision_create(m, &cs, 8, &err);
  assert_int_equal(mr_collision_detect(c, Xb, &err), MR_OK);
  assert_int_equal(mr_collision_ncontacts(c), 2);
  ct = mr_collision_contacts(c);
  int seen = 0;
  for (int i = 0; i < 2; ++i) {
    if (ct[i].geom[1] == 0) {
      assert_near(ct[i].mu, 0.9, 0);
      assert_near(ct[i].restitution, 0.5, 0);
      assert_near(ct[i].compliance, 1e-4, 0);
      assert_near(ct[i].tangential_compliance, 2e-4, 0);
      seen |= 1;
    } else {
      /* sphere-sphere at distance 0.1: Φ = −0.1, normal from geom 2 to geom 1 (−x) */
      assert_int_equal(ct[i].geom[0], 1);
      assert_near(ct[i].phi, -0.1, 1e-15);
      assert_near(ct[i].frame.m[0][2], -1.0, 1e-15);
      seen |= 2;
    }
  }
  assert_int_equal(seen, 3);
  mr_collision_free(c);
  /* group/mask: geometry 1 no longer collides with the ground's group */
  m->geoms[1].mask = 2u;
  cs = mr_collision_settings_default();
  c = mr_collision_create(m, &cs, 1, &err);
  assert_int_equal(mr_collision_detect(c, Xb, &err), MR_OK);
  assert_int_equal(mr_collision_ncontacts(c), 1);
  assert_int_equal(mr_collision_contacts(c)[0].geom[0], 2);
  /* overflow is a status and a count, never a silent truncation */
  m->geoms[1].mask = 0xffffffffu;
  assert_int_equal(mr_collision_detect(c, Xb, &err), MR_ERR_NOMEM);
  assert_int_equal(mr_collision_get_stats(c).overflow, 1);
  assert_non_null(strstr(err.msg, "max_contacts"));
  mr_collision_free(c);
  mr_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_frame_near_pole),   cmocka_unit_test(test_sphere_sphere),
      cmocka_unit_test(test_halfspace_pairs),   cmocka_unit_test(test_box_resting),
      cmocka_unit_test(test_sphere_box),        cmocka_unit_test(test_capsules),
      cmocka_unit_test(test_deep_and_parallel), cmocka_unit_test(test_box_box),
      cmocka_unit_test(test_resting_keys),      cmocka_unit_test(test_contact_skin),
      cmocka_unit_test(test_cylinder_plane),    cmocka_unit_test(test_frame),
      cmocka_unit_test(test_hfield_flat),       cmocka_unit_test(test_hfield_rolling),
      cmocka_unit_test(test_hfield_file),       cmocka_unit_test(test_hfield_box_spike),
      cmocka_unit_test(test_hfield_bumpy),      cmocka_unit_test(test_hfield_box_many_vertices),
      cmocka_unit_test(test_out_of_range),      cmocka_unit_test(test_broadphase),
      cmocka_unit_test(test_context),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
