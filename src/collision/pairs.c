/* Analytic pairs: closed-form signed distances, normals and points for spheres, capsules (as
 * swept spheres: closest points of segments, Ericson "Real-Time Collision Detection" §5.1.9),
 * boxes against spheres, and every shape against a halfspace (vertices or support points below
 * the plane + margin). Normals point from the second shape to the first; points lie midway. */
#include <math.h>

#include "collision/narrow.h"

/* world axis k of a placement */
static mr_vec3 axis(const mr_se3 *X, int k) {
  return mr_v3(X->R.m[0][k], X->R.m[1][k], X->R.m[2][k]);
}

/* a contact from a sphere (ca, ra) on a and a sphere (cb, rb) on b */
static int two_spheres(mr_vec3 ca, double ra, mr_vec3 cb, double rb, double margin, int feature,
                       raw_contact *out) {
  mr_vec3 d = mr_v3_sub(ca, cb);
  double dist = mr_v3_norm(d), phi = dist - ra - rb;
  if (phi > margin) return 0;
  /* coincident centres: a fixed normal */
  out->n = dist > 1e-12 ? mr_v3_scale(d, 1.0 / dist) : mr_v3(0, 0, 1);
  out->phi = phi;
  mr_vec3 pa = mr_v3_madd(ca, -ra, out->n), pb = mr_v3_madd(cb, rb, out->n);
  out->p = mr_v3_scale(mr_v3_add(pa, pb), 0.5);
  out->feature = feature;
  return 1;
}

int sphere_sphere(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  return two_spheres(a->X.p, a->g->size[0], b->X.p, b->g->size[0], c->margin, 0, out);
}

/* a sphere (centre x, radius r) against the plane of halfspace b */
static int sphere_plane(mr_vec3 x, double r, const shape *b, double margin, int feature,
                        raw_contact *out) {
  mr_vec3 n = axis(&b->X, 2);
  double phi = mr_v3_dot(mr_v3_sub(x, b->X.p), n) - r;
  if (phi > margin) return 0;
  out->n = n;
  out->phi = phi;
  out->p = mr_v3_madd(x, -(r + 0.5 * phi), n);
  out->feature = feature;
  return 1;
}

int sphere_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  return sphere_plane(a->X.p, a->g->size[0], b, c->margin, 0, out);
}

/* closest point to x in the box of half extents h (local frame); inside: the nearest face */
double box_closest(const double *h, mr_vec3 x, mr_vec3 *q, mr_vec3 *n) {
  int inside = 1;
  for (int k = 0; k < 3; ++k) {
    q->v[k] = fmin(fmax(x.v[k], -h[k]), h[k]);
    if (q->v[k] != x.v[k]) inside = 0;
  }
  if (!inside) {
    mr_vec3 d = mr_v3_sub(x, *q);
    double dist = mr_v3_norm(d);
    *n = mr_v3_scale(d, 1.0 / dist);
    return dist;
  }
  /* the face of least penetration, lowest axis first on ties */
  int best = 0;
  for (int k = 1; k < 3; ++k)
    if (h[k] - fabs(x.v[k]) < h[best] - fabs(x.v[best])) best = k;
  double s = x.v[best] >= 0 ? 1.0 : -1.0;
  *q = x;
  q->v[best] = s * h[best];
  *n = mr_v3_zero();
  n->v[best] = s;
  return -(h[best] - fabs(x.v[best]));
}

/* sphere a against box b */
int sphere_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  double r = a->g->size[0];
  mr_vec3 x = mr_se3_inv_act_point(&b->X, a->X.p), q, nl;
  double phi = box_closest(b->g->size, x, &q, &nl) - r;
  if (phi > c->margin) return 0;
  out->n = mr_m3_mulv(&b->X.R, nl);
  out->phi = phi;
  out->p = mr_v3_madd(mr_se3_act_point(&b->X, q), 0.5 * phi, out->n);
  out->feature = 0;
  return 1;
}

/* world end points of a capsule's segment */
static void capsule_ends(const shape *s, mr_vec3 *p0, mr_vec3 *p1) {
  mr_vec3 z = mr_v3_scale(axis(&s->X, 2), s->g->size[1]);
  *p0 = mr_v3_sub(s->X.p, z);
  *p1 = mr_v3_add(s->X.p, z);
}

/* closest point on segment [p0, p1] to x */
static mr_vec3 segment_closest(mr_vec3 p0, mr_vec3 p1, mr_vec3 x) {
  mr_vec3 d = mr_v3_sub(p1, p0);
  double dd = mr_v3_dot(d, d);
  double t = dd > 0 ? mr_v3_dot(mr_v3_sub(x, p0), d) / dd : 0.0;
  return mr_v3_madd(p0, fmin(fmax(t, 0.0), 1.0), d);
}

/* sphere a against capsule b */
int sphere_capsule(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  mr_vec3 p0, p1;
  capsule_ends(b, &p0, &p1);
  mr_vec3 q = segment_closest(p0, p1, a->X.p);
  return two_spheres(a->X.p, a->g->size[0], q, b->g->size[0], c->margin, 0, out);
}

/* closest points s(t) on [p0, p1] and u(w) on [q0, q1] (Ericson §5.1.9) */
static void segments_closest(mr_vec3 p0, mr_vec3 p1, mr_vec3 q0, mr_vec3 q1, mr_vec3 *x,
                             mr_vec3 *y) {
  mr_vec3 d1 = mr_v3_sub(p1, p0), d2 = mr_v3_sub(q1, q0), r = mr_v3_sub(p0, q0);
  double a = mr_v3_dot(d1, d1), e = mr_v3_dot(d2, d2), f = mr_v3_dot(d2, r);
  double s = 0, t = 0;
  if (a <= 1e-300 && e <= 1e-300) {
    s = t = 0;
  } else if (a <= 1e-300) {
    t = fmin(fmax(f / e, 0.0), 1.0);
  } else {
    double cc = mr_v3_dot(d1, r);
    if (e <= 1e-300) {
      s = fmin(fmax(-cc / a, 0.0), 1.0);
    } else {
      double b = mr_v3_dot(d1, d2), den = a * e - b * b;
      /* parallel segments: start from s = 0 (deterministic) */
      s = den > 1e-14 * a * e ? fmin(fmax((b * f - cc * e) / den, 0.0), 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0)
        t = 0, s = fmin(fmax(-cc / a, 0.0), 1.0);
      else if (t > 1)
        t = 1, s = fmin(fmax((b - cc) / a, 0.0), 1.0);
    }
  }
  *x = mr_v3_madd(p0, s, d1);
  *y = mr_v3_madd(q0, t, d2);
}

/* capsules whose segments meet (at x = y): the normal is their common perpendicular (the
 * segments' difference is a flat parallelogram: no direction in its plane separates them more),
 * towards a's centre; parallel segments on one line: any direction across them */
static int crossing_segments(const shape *a, const shape *b, mr_vec3 x, mr_vec3 y, double margin,
                             raw_contact *out) {
  mr_vec3 za = axis(&a->X, 2), n = mr_v3_cross(za, axis(&b->X, 2));
  if (!(mr_v3_norm(n) > 1e-12))
    n = mr_v3_cross(za, fabs(za.v[0]) < 0.9 ? mr_v3(1, 0, 0) : mr_v3(0, 1, 0));
  n = mr_v3_normalize(n);
  if (mr_v3_dot(n, mr_v3_sub(a->X.p, b->X.p)) < 0) n = mr_v3_neg(n);
  double ra = a->g->size[0], rb = b->g->size[0], phi = mr_v3_dot(n, mr_v3_sub(x, y)) - ra - rb;
  if (phi > margin) return 0;
  out->n = n, out->phi = phi, out->feature = 0;
  out->p = mr_v3_scale(mr_v3_add(mr_v3_madd(x, -ra, n), mr_v3_madd(y, rb, n)), 0.5);
  return 1;
}

/* half the diagonal of a capsule's bounding box */
static double capsule_extent(const shape *s) {
  double r = s->g->size[0], l = r + s->g->size[1];
  return sqrt(2 * r * r + l * l);
}

/* capsule a against capsule b: the closest points of the segments; when both segments lie
 * within the feature tolerance of the plane ⊥ n (convex.c: the margin, at most 5 % of the size,
 * plus 1e-9), a line contact: the manifold of the two segments, their overlap's two ends (a
 * capsule lying beside another rests on two points, not one) */
int capsule_capsule(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  mr_vec3 p0, p1, q0, q1, x, y;
  capsule_ends(a, &p0, &p1);
  capsule_ends(b, &q0, &q1);
  segments_closest(p0, p1, q0, q1, &x, &y);
  double scale = fmax(capsule_extent(a), capsule_extent(b));
  if (mr_v3_norm(mr_v3_sub(x, y)) <= 1e-12 * (1.0 + scale))
    return crossing_segments(a, b, x, y, c->margin, out);
  if (!two_spheres(x, a->g->size[0], y, b->g->size[0], c->margin, 0, out)) return 0;
  double eps = fmin(c->margin, 0.05 * scale) + 1e-9 * (1.0 + scale);
  mr_vec3 n = out->n;
  if (2 * a->g->size[1] * fabs(mr_v3_dot(n, axis(&a->X, 2))) > eps ||
      2 * b->g->size[1] * fabs(mr_v3_dot(n, axis(&b->X, 2))) > eps)
    return 1;
  return convex_manifold(a, b, n, out->phi, x, y, c->margin, 1, out);
}

/* capsule a on halfspace b: each end sphere, up to 2 points */
int capsule_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  mr_vec3 p[2];
  capsule_ends(a, &p[0], &p[1]);
  int n = 0;
  for (int k = 0; k < 2; ++k)
    n += sphere_plane(p[k], a->g->size[0], b, c->margin, k, out + n);
  return n;
}

/* a world point x of a against the plane of b */
static int point_plane(mr_vec3 x, const shape *b, double margin, int feature, raw_contact *out) {
  return sphere_plane(x, 0.0, b, margin, feature, out);
}

/* box a on halfspace b: every vertex within the margin, at most 4 */
int box_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  raw_contact tmp[8];
  int n = 0;
  const double *h = a->g->size;
  for (int v = 0; v < 8; ++v) {
    mr_vec3 xl = mr_v3(v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]);
    n += point_plane(mr_se3_act_point(&a->X, xl), b, c->margin, v, tmp + n);
  }
  n = reduce_contacts(tmp, n, 4);
  for (int k = 0; k < n; ++k)
    out[k] = tmp[k];
  return n;
}

/* cylinder a on halfspace b: per cap, the exact lowest rim point (the rim point along the
 * radial part of −n), and when the cap is within the margin of flat (rim height spread
 * 2 r sin θ ≤ margin), the 7 further rim points at eighths of a turn from it, each with its own
 * exact Φ; reduced to 4 (a standing cylinder: 4 rim points at Φ = 0) */
int cylinder_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  mr_vec3 nw = axis(&b->X, 2), ax = axis(&a->X, 2);
  double r = a->g->size[0], hl = a->g->size[1];
  mr_vec3 radial = mr_v3_madd(mr_v3_neg(nw), mr_v3_dot(nw, ax), ax);
  double rn = mr_v3_norm(radial);
  /* in-cap unit axes: u towards the lowest rim point (local x when the cap is flat), v = ax × u */
  mr_vec3 u = rn > 1e-12 ? mr_v3_scale(radial, 1.0 / rn) : axis(&a->X, 0);
  mr_vec3 v = mr_v3_cross(ax, u);
  int flat = 2 * r * rn <= c->margin + 1e-12;
  raw_contact tmp[16];
  int n = 0;
  for (int cap = 0; cap < 2; ++cap) {
    mr_vec3 cc = mr_v3_madd(a->X.p, cap ? hl : -hl, ax);
    for (int k = 0; k < (flat ? 8 : 1); ++k) {
      double th = 2 * M_PI * k / 8;
      mr_vec3 x = mr_v3_madd(mr_v3_madd(cc, r * cos(th), u), r * sin(th), v);
      n += point_plane(x, b, c->margin, 8 * cap + k, tmp + n);
    }
  }
  n = reduce_contacts(tmp, n, 4);
  for (int k = 0; k < n; ++k)
    out[k] = tmp[k];
  return n;
}

/* convex mesh a on halfspace b: hull vertices within the margin, reduced to 4 */
int mesh_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  const mr_mesh *m = a->g->mesh;
  if (!m || m->nhull == 0) return 0;
  mr_vec3 nw = axis(&b->X, 2);
  /* keep the 4 deepest so far in a small buffer, then spread */
  raw_contact tmp[MR_PAIR_MAX_CONTACTS];
  int n = 0;
  for (int i = 0; i < m->nhull; ++i) {
    mr_vec3 x =
        mr_se3_act_point(&a->X, mr_v3(m->hull[3 * i], m->hull[3 * i + 1], m->hull[3 * i + 2]));
    double phi = mr_v3_dot(mr_v3_sub(x, b->X.p), nw);
    if (phi > c->margin) continue;
    if (n == MR_PAIR_MAX_CONTACTS) n = reduce_contacts(tmp, n, 4);
    n += point_plane(x, b, c->margin, i, tmp + n);
  }
  n = reduce_contacts(tmp, n, 4);
  for (int k = 0; k < n; ++k)
    out[k] = tmp[k];
  return n;
}

/* any bounded convex shape a on halfspace b: its support point along the inward normal */
int convex_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  mr_vec3 nw = axis(&b->X, 2);
  return point_plane(shape_support(a, mr_v3_neg(nw)), b, c->margin, 0, out);
}

/* squared distance between contact points */
static double dist2(const raw_contact *x, const raw_contact *y) {
  mr_vec3 d = mr_v3_sub(x->p, y->p);
  return mr_v3_dot(d, d);
}

/* Near ties count as ties, won by the lowest index: depths within 1e-9 of the patch's extent of
 * the deepest, squared distances within a relative 1e-9 of the farthest. A resting patch has
 * its points at one depth to round-off (a cube turned on another: 8 clipped points at
 * Φ = −1e-12 m to 1e-16), where the deepest and then the farthest points were chosen by the
 * sign of the round-off, so that the kept points (their keys, their warm start) changed under a
 * motion of 1e-13 m. */
int reduce_contacts(raw_contact *rc, int n, int keep) {
  if (n <= keep) return n;
  /* the deepest first: the first point within tol of the least Φ */
  double ext2 = 0.0, low = rc[0].phi;
  for (int i = 1; i < n; ++i)
    ext2 = fmax(ext2, dist2(&rc[i], &rc[0])), low = fmin(low, rc[i].phi);
  double tol = 1e-9 * sqrt(ext2);
  int best = 0;
  while (rc[best].phi > low + tol)
    ++best;
  raw_contact t = rc[0];
  rc[0] = rc[best], rc[best] = t;
  /* then each next maximises its distance to those kept */
  for (int k = 1; k < keep; ++k) {
    int arg = k;
    double far = -1.0;
    for (int i = k; i < n; ++i) {
      double dmin = INFINITY;
      for (int j = 0; j < k; ++j)
        dmin = fmin(dmin, dist2(&rc[i], &rc[j]));
      if (dmin > far * (1.0 + 1e-9)) far = dmin, arg = i;
    }
    t = rc[k], rc[k] = rc[arg], rc[arg] = t;
  }
  return keep;
}
