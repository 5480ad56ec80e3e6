/* General convex pairs: separated shapes by GJK distance on the true shapes (gjk.c, exact
 * distance and witness points, so near contacts 0 < Φ_N <= margin carry their true Φ_N);
 * touching or overlapping shapes by libccd's GJK + EPA (ccdGJKPenetration), MPR as a fallback.
 *
 * For EPA each shape is inflated by half the security margin in its support function, so a
 * touching configuration (the degenerate case where EPA fails on a flat simplex) becomes a
 * margin-deep overlap; for convex A, B the inflated depth is margin − Φ_N exactly (offsetting a
 * convex set shifts every boundary distance by the offset). The normal found by libccd is then
 * improved by ascent on Φ(n) = min_A ⟨n, x⟩ − max_B ⟨n, x⟩ (Φ_N = max over unit n of Φ(n)), and
 * Φ_N = Φ(n) from the true supports. Equal inflation keeps libccd's midpoint the true midpoint.
 * EPA approximates curved shapes by polytopes: Φ_N to ~1e-5 in penetration (docs/collision.md).
 * Failures (return code -2 from an allocation in EPA, degenerate simplices, NaN) become
 * "no contact" plus a counted warning. libccd's EPA allocates internally: the one allowed
 * exception to no allocation in a query. */
#include <ccd/ccd.h>
#include <math.h>

#include "collision/narrow.h"

typedef struct {
  const shape *s;
  double inflate; /* radius added in every direction */
  mr_vec3 centre; /* a point inside the shape */
} ccd_obj;

static void support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out) {
  const ccd_obj *o = obj;
  mr_vec3 d = mr_v3(dir->v[0], dir->v[1], dir->v[2]);
  mr_vec3 x = shape_support(o->s, d);
  double n = mr_v3_norm(d);
  if (n > 0) x = mr_v3_madd(x, o->inflate / n, d);
  for (int k = 0; k < 3; ++k)
    out->v[k] = x.v[k];
}

static void centre(const void *obj, ccd_vec3_t *out) {
  const ccd_obj *o = obj;
  for (int k = 0; k < 3; ++k)
    out->v[k] = o->centre.v[k];
}

/* the world centre of a shape's local bounding box (inside a convex shape's hull) */
static mr_vec3 shape_centre(const shape *s) {
  mr_vec3 lo, hi;
  if (!mr_geom_local_aabb(s->g, &lo, &hi)) return s->X.p;
  return mr_se3_act_point(&s->X, mr_v3_scale(mr_v3_add(lo, hi), 0.5));
}

static int finite3(const ccd_vec3_t *v) {
  return isfinite(v->v[0]) && isfinite(v->v[1]) && isfinite(v->v[2]);
}

/* run one libccd penetration routine; 1 on a usable result, 0 on no overlap, -1 on failure */
static int run(int mpr, const ccd_obj *oa, const ccd_obj *ob, const ccd_t *cfg, mr_vec3 *dir,
               mr_vec3 *pos) {
  ccd_real_t depth = 0;
  ccd_vec3_t d = {{0, 0, 0}}, p = {{0, 0, 0}};
  int rc = mpr ? ccdMPRPenetration(oa, ob, cfg, &depth, &d, &p)
               : ccdGJKPenetration(oa, ob, cfg, &depth, &d, &p);
  if (rc == -1) return 0;
  if (rc != 0 || !isfinite(depth) || !finite3(&d) || !finite3(&p)) return -1;
  *dir = mr_v3(d.v[0], d.v[1], d.v[2]);
  *pos = mr_v3(p.v[0], p.v[1], p.v[2]);
  double n = mr_v3_norm(*dir);
  if (!(n > 0.5)) return -1;
  *dir = mr_v3_scale(*dir, 1.0 / n);
  return 1;
}

/* separation along n: Φ(n) = min_A ⟨n, x⟩ − max_B ⟨n, x⟩ (Φ_N = max over unit n of Φ(n)) */
static double axis_gap(const shape *a, const shape *b, mr_vec3 n, mr_vec3 *w) {
  mr_vec3 sa = shape_support(a, mr_v3_neg(n)), sb = shape_support(b, n);
  *w = mr_v3_sub(sa, sb);
  return mr_v3_dot(n, *w);
}

/* improve EPA's normal by ascent on Φ(n): step towards the witness direction ±(s_A − s_B)
 * (the optimum's fixed point), accepting only increases, halving the step otherwise */
static double refine(const shape *a, const shape *b, mr_vec3 *n) {
  mr_vec3 w, w2;
  double phi = axis_gap(a, b, *n, &w), step = 1.0;
  for (int it = 0; it < 60 && step > 1e-4; ++it) {
    double wn = mr_v3_norm(w);
    if (!(wn > 1e-14)) break;
    mr_vec3 d = mr_v3_scale(w, (phi >= 0 ? 1.0 : -1.0) / wn);
    mr_vec3 m = mr_v3_normalize(mr_v3_add(*n, mr_v3_scale(mr_v3_sub(d, *n), step)));
    double p2 = axis_gap(a, b, m, &w2);
    if (p2 > phi) {
      phi = p2, *n = m, w = w2;
    } else {
      step *= 0.5;
    }
  }
  return phi;
}

int ccd_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  /* separated: the exact distance by GJK on the true shapes */
  double dist;
  mr_vec3 pa, pb;
  if (gjk_distance(a, b, &dist, &pa, &pb) && dist > 1e-9) {
    if (dist > c->margin) return 0;
    out->n = mr_v3_scale(mr_v3_sub(pa, pb), 1.0 / dist);
    out->phi = dist;
    out->p = mr_v3_scale(mr_v3_add(pa, pb), 0.5);
    out->feature = 0;
    return 1;
  }
  /* touching or overlapping: EPA on the inflated shapes (never a touching configuration) */
  ccd_obj oa = {a, 0.5 * c->margin, shape_centre(a)}, ob = {b, 0.5 * c->margin, shape_centre(b)};
  ccd_t cfg;
  CCD_INIT(&cfg);
  cfg.support1 = support;
  cfg.support2 = support;
  cfg.center1 = centre;
  cfg.center2 = centre;
  cfg.max_iterations = (unsigned long)c->ccd_max_iter;
  cfg.epa_tolerance = c->ccd_tolerance;
  cfg.mpr_tolerance = c->ccd_tolerance;
  cfg.dist_tolerance = c->ccd_tolerance;
  mr_vec3 dir, pos;
  int r = run(0, &oa, &ob, &cfg, &dir, &pos);
  /* EPA failed on a degenerate configuration: try MPR before giving up */
  if (r < 0) r = run(1, &oa, &ob, &cfg, &dir, &pos);
  if (r < 0) c->ccd_failures++;
  if (r <= 0) return 0;
  /* libccd's direction moves b away from a: the normal from b to a is its opposite */
  mr_vec3 n = mr_v3_neg(dir);
  double phi = refine(a, b, &n);
  if (!isfinite(phi)) {
    c->ccd_failures++;
    return 0;
  }
  if (phi > c->margin) return 0;
  out->n = n;
  out->phi = phi;
  out->p = pos;
  out->feature = 0;
  return 1;
}
