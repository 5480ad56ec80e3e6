/* General convex pairs: the exact signed distance Φ_N, the normal, and a manifold of up to 4
 * points for every pair without a closed form (capsule, cylinder, mesh, ellipsoid against box,
 * mesh, cylinder...).
 *
 * Cores. A capsule is its segment inflated by its radius r, a sphere its centre inflated by r;
 * since inflating a convex set by r shifts its support function by r, every query runs on the
 * cores and subtracts r_A + r_B (this keeps capsule–box and capsule–mesh polytope problems).
 *
 * Φ_N. With Φ(n) = min_A ⟨n, x⟩ − max_B ⟨n, x⟩ (the gap of the two shadows on the unit axis n),
 * Φ_N = max over unit n of Φ(n), apart or overlapping, and the maximiser is the contact normal
 * (from B towards A). Every Φ(n) is a lower bound of Φ_N. Apart, GJK gives the exact distance
 * and witness points (gjk.c). Touching or overlapping, EPA on the cores (epa.c; on the cores
 * inflated by a small δ when the origin sits on the boundary) gives a first normal, then the
 * best of:
 *   - the candidate axes of separating-axis theory for the features the shapes have: face
 *     normals (box faces, cylinder caps, the plane of a mesh's support feature), and cross
 *     products of edge directions (box edges, capsule and cylinder axes, mesh feature edges),
 *     which contain the exact maximiser whenever it is a face or edge-edge normal (the polytope
 *     pairs, cylinder caps and sides);
 *   - gradient ascent of Φ on the sphere: by the envelope theorem ∇Φ(n) = s_A(−n) − s_B(n), so
 *     its tangential part is an ascent direction (backtracking steps), which converges where Φ
 *     is smooth (curved contacts: cylinder rims, ellipsoids).
 *
 * Manifold. With n fixed, each shape's support feature (the points within a tolerance of its
 * supporting plane: box vertices, mesh hull vertices, a capsule's segment, a cylinder's cap as
 * an inscribed octagon starting at its lowest rim point, or its side line) is projected on the
 * plane ⊥ n. A polygon clips the other feature (Sutherland–Hodgman against its edges); two
 * parallel segments give their overlap; any point feature, or crossing segments, gives the one
 * witness contact. Each clipped point is lifted back onto both features along n, giving its own
 * Φ and the point midway between the two surfaces; points within the margin are kept and
 * reduced to 4 (the deepest first).
 *
 * If EPA cannot build a polytope (degenerate input), libccd's MPR gives the first normal; if
 * that fails too, the pair gives no contact and ccd_failures counts it. No allocation. */
#include <ccd/ccd.h>
#include <math.h>

#include "collision/narrow.h"

enum { FEAT_MAX = 16, CLIP_MAX = 48, RIM_POINTS = 8 };

/* ---- cores and supports ---- */

static mr_vec3 axis_of(const mr_se3 *X, int k) {
  return mr_v3(X->R.m[0][k], X->R.m[1][k], X->R.m[2][k]);
}

double core_radius(const shape *s) {
  mr_geom_type t = s->g->type;
  return t == MR_GEOM_CAPSULE || t == MR_GEOM_SPHERE ? s->g->size[0] : 0.0;
}

mr_vec3 convex_support(const convex *c, mr_vec3 d) {
  const shape *s = c->s;
  mr_vec3 x;
  if (c->core && s->g->type == MR_GEOM_SPHERE) {
    x = s->X.p;
  } else if (c->core && s->g->type == MR_GEOM_CAPSULE) {
    mr_vec3 z = axis_of(&s->X, 2);
    x = mr_v3_madd(s->X.p, mr_v3_dot(d, z) >= 0 ? s->g->size[1] : -s->g->size[1], z);
  } else {
    x = shape_support(s, d);
  }
  double len = mr_v3_norm(d);
  if (c->inflate > 0 && len > 0) x = mr_v3_madd(x, c->inflate / len, d);
  return x;
}

/* Φ of the cores along unit n: min_A ⟨n, x⟩ − max_B ⟨n, x⟩, and w = s_A(−n) − s_B(n) */
static double core_gap(const convex *a, const convex *b, mr_vec3 n, mr_vec3 *w) {
  *w = mr_v3_sub(convex_support(a, mr_v3_neg(n)), convex_support(b, n));
  return mr_v3_dot(n, *w);
}

/* a length scale of a shape (half the diagonal of its local box) */
static double extent(const shape *s) {
  mr_vec3 lo, hi;
  if (!mr_geom_local_aabb(s->g, &lo, &hi)) return 1.0;
  return 0.5 * mr_v3_norm(mr_v3_sub(hi, lo));
}

/* ---- the normal: candidate axes and ascent ---- */

typedef struct {
  const convex *a, *b;
  mr_vec3 n;
  double phi;
} best_axis;

/* the 3 best candidate axes (seeds for the ascent) */
typedef struct {
  mr_vec3 n[3];
  double phi[3];
} seeds;

static void add_seed(void *S, mr_vec3 n, double phi);

static void try_axis(best_axis *B, void *S, mr_vec3 n) {
  double len = mr_v3_norm(n);
  if (!(len > 1e-9)) return;
  n = mr_v3_scale(n, 1.0 / len);
  mr_vec3 w;
  for (int sgn = 0; sgn < 2; ++sgn, n = mr_v3_neg(n)) {
    double phi = core_gap(B->a, B->b, n, &w);
    add_seed(S, n, phi);
    if (phi > B->phi) B->phi = phi, B->n = n;
  }
}

/* hull vertices of a mesh within eps of its supporting plane along d (at most FEAT_MAX, the
 * closest to the plane), as world points and indices */
static int mesh_feature(const shape *s, mr_vec3 d, double eps, mr_vec3 *x, int *idx) {
  const mr_mesh *m = s->g->mesh;
  mr_vec3 dl = mr_m3_tmulv(&s->X.R, d);
  double h = -INFINITY, gap[FEAT_MAX];
  for (int i = 0; i < m->nhull; ++i)
    h = fmax(h, mr_v3_dot(dl, mr_v3(m->hull[3 * i], m->hull[3 * i + 1], m->hull[3 * i + 2])));
  int n = 0;
  for (int i = 0; i < m->nhull; ++i) {
    double g = h - mr_v3_dot(dl, mr_v3(m->hull[3 * i], m->hull[3 * i + 1], m->hull[3 * i + 2]));
    if (g > eps || (n == FEAT_MAX && g >= gap[n - 1])) continue;
    /* insertion by gap (stable: equal gaps keep index order) */
    int k = n < FEAT_MAX ? n++ : FEAT_MAX - 1;
    while (k > 0 && gap[k - 1] > g) {
      gap[k] = gap[k - 1], idx[k] = idx[k - 1];
      k--;
    }
    gap[k] = g, idx[k] = i;
  }
  for (int k = 0; k < n; ++k) {
    const double *v = &m->hull[3 * idx[k]];
    x[k] = mr_se3_act_point(&s->X, mr_v3(v[0], v[1], v[2]));
  }
  return n;
}

/* the face and edge directions of a shape near its support along d (for candidate axes) */
static void shape_dirs(const shape *s, mr_vec3 d, double eps, mr_vec3 *face, int *nf, mr_vec3 *edge,
                       int *ne) {
  *nf = *ne = 0;
  switch (s->g->type) {
  case MR_GEOM_BOX:
    for (int k = 0; k < 3; ++k)
      face[(*nf)++] = axis_of(&s->X, k), edge[(*ne)++] = axis_of(&s->X, k);
    return;
  case MR_GEOM_CYLINDER:
    face[(*nf)++] = axis_of(&s->X, 2);
    edge[(*ne)++] = axis_of(&s->X, 2);
    return;
  case MR_GEOM_CAPSULE:
    edge[(*ne)++] = axis_of(&s->X, 2);
    return;
  case MR_GEOM_MESH: {
    mr_vec3 x[FEAT_MAX];
    int idx[FEAT_MAX], n = mesh_feature(s, d, eps, x, idx);
    n = n > 6 ? 6 : n;
    /* the plane of the three points spanning the largest triangle (first point fixed) */
    double best = 0;
    for (int i = 1; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        mr_vec3 c = mr_v3_cross(mr_v3_sub(x[i], x[0]), mr_v3_sub(x[j], x[0]));
        if (mr_v3_norm(c) > best) best = mr_v3_norm(c), face[0] = c, *nf = 1;
      }
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        edge[(*ne)++] = mr_v3_sub(x[j], x[i]);
    return;
  }
  default:
    return;
  }
}

/* gradient ascent of Φ on the sphere with backtracking steps (angles from 1e-2 down to 1e-12) */
static void ascend(best_axis *B);

static void add_seed(void *Sv, mr_vec3 n, double phi) {
  seeds *S = Sv;
  int k = 2;
  if (!(phi > S->phi[k])) return;
  while (k > 0 && S->phi[k - 1] < phi)
    S->n[k] = S->n[k - 1], S->phi[k] = S->phi[k - 1], k--;
  S->n[k] = n, S->phi[k] = phi;
}

static void ascend(best_axis *B) {
  mr_vec3 w;
  double t = 1e-2;
  core_gap(B->a, B->b, B->n, &w);
  for (int it = 0; it < 200 && t > 1e-12; ++it) {
    mr_vec3 g = mr_v3_madd(w, -mr_v3_dot(w, B->n), B->n);
    double gn = mr_v3_norm(g);
    if (!(gn > 1e-300)) return;
    mr_vec3 m = mr_v3_normalize(mr_v3_madd(B->n, t / gn, g)), w2;
    double phi = core_gap(B->a, B->b, m, &w2);
    if (phi > B->phi) {
      B->phi = phi, B->n = m, w = w2;
      t = fmin(2 * t, 0.1);
    } else {
      t *= 0.5;
    }
  }
}

/* the best normal from a first guess n0: candidate axes, then ascent */
static void best_normal(const shape *a, const shape *b, const convex *ca, const convex *cb,
                        mr_vec3 n0, double margin, best_axis *B) {
  B->a = ca, B->b = cb, B->n = n0;
  mr_vec3 w;
  B->phi = core_gap(ca, cb, n0, &w);
  seeds S = {{n0, n0, n0}, {B->phi, -INFINITY, -INFINITY}};
  mr_vec3 fa[3], ea[16], fb[3], eb[16];
  int nfa, nea, nfb, neb;
  shape_dirs(a, mr_v3_neg(n0), 1e-3 * extent(a) + margin, fa, &nfa, ea, &nea);
  shape_dirs(b, n0, 1e-3 * extent(b) + margin, fb, &nfb, eb, &neb);
  for (int i = 0; i < nfa; ++i)
    try_axis(B, &S, fa[i]);
  for (int i = 0; i < nfb; ++i)
    try_axis(B, &S, fb[i]);
  for (int i = 0; i < nea; ++i)
    for (int j = 0; j < neb; ++j)
      try_axis(B, &S, mr_v3_cross(mr_v3_normalize(ea[i]), mr_v3_normalize(eb[j])));
  /* ascent from the three best axes (a kink may stop one short of the maximum) */
  best_axis top = *B;
  for (int k = 0; k < 3 && isfinite(S.phi[k]); ++k) {
    best_axis C = *B;
    C.n = S.n[k], C.phi = S.phi[k];
    ascend(&C);
    if (C.phi > top.phi) top = C;
  }
  *B = top;
}

/* ---- the first normal of an overlapping pair ---- */

static void mpr_support(const void *obj, const ccd_vec3_t *dir, ccd_vec3_t *out) {
  mr_vec3 x = convex_support(obj, mr_v3(dir->v[0], dir->v[1], dir->v[2]));
  for (int k = 0; k < 3; ++k)
    out->v[k] = x.v[k];
}

static void mpr_centre(const void *obj, ccd_vec3_t *out) {
  const convex *c = obj;
  mr_vec3 lo, hi, x = c->s->X.p;
  if (mr_geom_local_aabb(c->s->g, &lo, &hi))
    x = mr_se3_act_point(&c->s->X, mr_v3_scale(mr_v3_add(lo, hi), 0.5));
  for (int k = 0; k < 3; ++k)
    out->v[k] = x.v[k];
}

/* libccd's MPR on the objects: its direction (from a to b) reversed, 0 on failure */
static int mpr_normal(const convex *a, const convex *b, const narrow_ctx *c, mr_vec3 *n) {
  ccd_t cfg;
  CCD_INIT(&cfg);
  cfg.support1 = cfg.support2 = mpr_support;
  cfg.center1 = cfg.center2 = mpr_centre;
  cfg.max_iterations = (unsigned long)c->ccd_max_iter;
  cfg.mpr_tolerance = c->ccd_tolerance;
  ccd_real_t depth;
  ccd_vec3_t d, p;
  if (ccdMPRPenetration(a, b, &cfg, &depth, &d, &p) != 0) return 0;
  mr_vec3 v = mr_v3(-d.v[0], -d.v[1], -d.v[2]);
  double len = mr_v3_norm(v);
  if (!(len > 0.5) || !isfinite(len)) return 0;
  *n = mr_v3_scale(v, 1.0 / len);
  return 1;
}

/* EPA on the cores, else on the cores inflated by δ (the origin on the boundary of the
 * difference: touching), else MPR; 0 when all fail */
static int first_normal(const convex *ca, const convex *cb, const gjk_vertex *s, int ns,
                        double scale, const narrow_ctx *c, mr_vec3 *n) {
  double depth;
  mr_vec3 pa, pb;
  if (ns == 4 && epa_run(ca, cb, s, ns, n, &depth, &pa, &pb)) return 1;
  convex ia = *ca, ib = *cb;
  ia.inflate = ib.inflate = 1e-4 * scale;
  gjk_vertex t[4];
  int nt;
  double dist;
  if (!gjk_run(&ia, &ib, t, &nt, &dist, &pa, &pb) && epa_run(&ia, &ib, t, nt, n, &depth, &pa, &pb))
    return 1;
  return mpr_normal(&ia, &ib, c, n);
}

/* ---- support features and clipping ---- */

typedef struct {
  int n;                 /* 1 point, 2 segment, >= 3 convex polygon (counter-clockwise in 2D) */
  mr_vec3 x[FEAT_MAX];   /* world points on the core */
  double u[FEAT_MAX][2]; /* their coordinates in the plane ⊥ n */
  int tag[FEAT_MAX];
  double disc[3]; /* a cylinder cap: its centre (2D) and radius, else radius 0 */
} feature;

/* the cylinder's support feature along d: its cap as an octagon from the lowest rim point when
 * the cap is within eps of flat (from the local x axis when it is flat within 1e-9 rad: the
 * lowest rim point of a cap at rest points wherever the round-off of its tilt does, and the
 * octagon, its points and its keys turned with it from step to step; the deepest point is then
 * missed by at most r 1e-9), its side line when the side is, else the support point */
static int cylinder_feature(const shape *s, mr_vec3 d, double eps, mr_vec3 *x, int *tag) {
  mr_vec3 dl = mr_m3_tmulv(&s->X.R, d);
  double r = s->g->size[0], hl = s->g->size[1], rho = hypot(dl.v[0], dl.v[1]);
  double th = rho > 1e-9 ? atan2(dl.v[1], dl.v[0]) : 0.0, z = dl.v[2] >= 0 ? hl : -hl;
  int cap = dl.v[2] >= 0;
  if (2 * r * rho <= eps && rho <= fabs(dl.v[2])) {
    for (int k = 0; k < RIM_POINTS; ++k) {
      double a = th + 2 * M_PI * k / RIM_POINTS;
      x[k] = mr_se3_act_point(&s->X, mr_v3(r * cos(a), r * sin(a), z));
      tag[k] = cap * RIM_POINTS + k;
    }
    return RIM_POINTS;
  }
  if (2 * hl * fabs(dl.v[2]) <= eps && rho > 0) {
    for (int k = 0; k < 2; ++k) {
      x[k] = mr_se3_act_point(&s->X, mr_v3(r * cos(th), r * sin(th), k ? hl : -hl));
      tag[k] = 2 * RIM_POINTS + k;
    }
    return 2;
  }
  x[0] = mr_se3_act_point(&s->X, mr_geom_support(s->g, dl));
  tag[0] = 3 * RIM_POINTS;
  return 1;
}

/* the box's face, edge or vertex supporting it along d: an axis whose two faces are within eps
 * of each other along d (|d_k| 2 h_k <= eps) spans the feature, the others fix the sign; the
 * result is always a true face of the box (never a chord through it) */
static int box_feature(const shape *s, mr_vec3 d, double eps, mr_vec3 *x, int *tag) {
  const double *h = s->g->size;
  mr_vec3 dl = mr_m3_tmulv(&s->X.R, d);
  int free_axes = 0, fixed = 0, n = 0, top = 0;
  for (int k = 1; k < 3; ++k)
    if (fabs(dl.v[k]) > fabs(dl.v[top])) top = k;
  /* the axis most along d never frees (at most an edge's or a face's vertices) */
  for (int k = 0; k < 3; ++k) {
    if (k != top && 2 * h[k] * fabs(dl.v[k]) <= eps)
      free_axes |= 1 << k;
    else if (dl.v[k] > 0)
      fixed |= 1 << k;
  }
  for (int v = 0; v < 8; ++v) {
    if ((v & ~free_axes) != fixed) continue;
    x[n] = mr_se3_act_point(
        &s->X, mr_v3(v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]));
    tag[n++] = v;
  }
  return n;
}

/* a mesh's support feature along d: the hull vertices within eps of the supporting plane when
 * they lie on one supporting plane of the hull (a true face, maybe tilted from d), else the
 * vertices on the exact supporting plane (to round-off) */
static int mesh_face(const shape *s, mr_vec3 d, double eps, double tol, mr_vec3 *x, int *tag) {
  int n = mesh_feature(s, d, eps, x, tag);
  if (n >= 3) {
    /* the plane of the largest triangle through the deepest vertex */
    mr_vec3 pn = mr_v3_zero();
    double best = 0;
    for (int i = 1; i < n; ++i)
      for (int j = i + 1; j < n; ++j) {
        mr_vec3 c = mr_v3_cross(mr_v3_sub(x[i], x[0]), mr_v3_sub(x[j], x[0]));
        if (mr_v3_norm(c) > best) best = mr_v3_norm(c), pn = c;
      }
    if (best > 0) {
      pn = mr_v3_scale(pn, mr_v3_dot(pn, d) >= 0 ? 1.0 / best : -1.0 / best);
      /* a supporting plane: no hull vertex beyond it */
      convex c = {s, 0, 0.0};
      double top = mr_v3_dot(pn, convex_support(&c, pn)), h0 = mr_v3_dot(pn, x[0]);
      if (top - h0 <= tol) {
        int k = 0;
        for (int i = 0; i < n; ++i)
          if (fabs(mr_v3_dot(pn, x[i]) - h0) <= tol) x[k] = x[i], tag[k++] = tag[i];
        if (k >= 3) return k;
      }
    }
  }
  return n <= 1 ? n : mesh_feature(s, d, tol, x, tag);
}

/* the core's points within eps of its supporting plane along unit d */
static int core_feature(const shape *s, mr_vec3 d, double eps, double tol, mr_vec3 *x, int *tag) {
  switch (s->g->type) {
  case MR_GEOM_BOX:
    return box_feature(s, d, eps, x, tag);
  case MR_GEOM_MESH:
    return mesh_face(s, d, eps, tol, x, tag);
  case MR_GEOM_CYLINDER:
    return cylinder_feature(s, d, eps, x, tag);
  case MR_GEOM_CAPSULE: {
    mr_vec3 z = axis_of(&s->X, 2);
    double hl = s->g->size[1], dz = mr_v3_dot(d, z);
    if (2 * hl * fabs(dz) > eps) break;
    x[0] = mr_v3_madd(s->X.p, -hl, z), x[1] = mr_v3_madd(s->X.p, hl, z);
    tag[0] = 0, tag[1] = 1;
    return 2;
  }
  default:
    break;
  }
  convex c = {s, 1, 0.0};
  x[0] = convex_support(&c, d);
  tag[0] = 0;
  return 1;
}

static double cross2(const double *o, const double *a, const double *b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/* reduce a projected point set to its convex hull, counter-clockwise (Andrew's monotone chain:
 * collinear points dropped), a segment (its two extreme points) or a point; tol is the 2D size
 * below which points coincide */
static void hull2d(feature *f, double tol) {
  int n = f->n, idx[FEAT_MAX] = {0}, h[2 * FEAT_MAX + 1], k = 0;
  if (n < 2) return;
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && (f->u[idx[j - 1]][0] > f->u[i][0] ||
                     (f->u[idx[j - 1]][0] == f->u[i][0] && f->u[idx[j - 1]][1] > f->u[i][1]));
         --j)
      idx[j] = idx[j - 1];
    idx[j] = i;
  }
  double span = hypot(f->u[idx[n - 1]][0] - f->u[idx[0]][0], f->u[idx[n - 1]][1] - f->u[idx[0]][1]);
  double tc = tol * fmax(span, tol);
  for (int i = 0; i < n; ++i) {
    while (k >= 2 && cross2(f->u[h[k - 2]], f->u[h[k - 1]], f->u[idx[i]]) <= tc)
      k--;
    h[k++] = idx[i];
  }
  for (int i = n - 2, t = k + 1; i >= 0; --i) {
    while (k >= t && cross2(f->u[h[k - 2]], f->u[h[k - 1]], f->u[idx[i]]) <= tc)
      k--;
    h[k++] = idx[i];
  }
  k = k > 1 ? k - 1 : k;
  feature g = *f;
  for (int i = 0; i < k; ++i) {
    f->x[i] = g.x[h[i]], f->tag[i] = g.tag[h[i]];
    f->u[i][0] = g.u[h[i]][0], f->u[i][1] = g.u[h[i]][1];
  }
  f->n = k;
  if (k == 2 && hypot(f->u[1][0] - f->u[0][0], f->u[1][1] - f->u[0][1]) <= tol) f->n = 1;
}

/* the support feature of a shape's core along d, projected on the plane (o; t1, t2) */
static void make_feature(const shape *s, mr_vec3 d, double eps, mr_vec3 o, mr_vec3 t1, mr_vec3 t2,
                         double tol, feature *f) {
  f->n = core_feature(s, d, eps, tol, f->x, f->tag);
  for (int i = 0; i < f->n; ++i) {
    mr_vec3 r = mr_v3_sub(f->x[i], o);
    f->u[i][0] = mr_v3_dot(r, t1), f->u[i][1] = mr_v3_dot(r, t2);
  }
  f->disc[2] = 0.0;
  if (s->g->type == MR_GEOM_CYLINDER && f->n == RIM_POINTS) {
    mr_vec3 r = mr_v3_sub(mr_v3_scale(mr_v3_add(f->x[0], f->x[RIM_POINTS / 2]), 0.5), o);
    f->disc[0] = mr_v3_dot(r, t1), f->disc[1] = mr_v3_dot(r, t2), f->disc[2] = s->g->size[0];
  }
  if (f->n > 1) hull2d(f, tol);
}

typedef struct {
  double u[2];
  int tag;
} clip_pt;

/* the point where p→q crosses the line a→b (signed areas dp, dq of opposite signs) */
static clip_pt crossing(const clip_pt *p, const clip_pt *q, double dp, double dq, int edge) {
  clip_pt x;
  double t = dp / (dp - dq);
  x.u[0] = p->u[0] + t * (q->u[0] - p->u[0]);
  x.u[1] = p->u[1] + t * (q->u[1] - p->u[1]);
  x.tag = 1 << 22 | edge << 12 | (p->tag & 0xfff);
  return x;
}

/* clip the polygon (or segment, n = 2) in[0..n) to the left of the directed edge a→b */
static int clip_edge(const clip_pt *in, int n, const double *a, const double *b, int edge,
                     clip_pt *out) {
  int m = 0;
  if (n == 2) {
    double d0 = cross2(a, b, in[0].u), d1 = cross2(a, b, in[1].u);
    if (d0 >= 0) out[m++] = in[0];
    if ((d0 > 0 && d1 < 0) || (d0 < 0 && d1 > 0)) out[m++] = crossing(&in[0], &in[1], d0, d1, edge);
    if (d1 >= 0) out[m++] = in[1];
    return m;
  }
  for (int i = 0; i < n && m < CLIP_MAX - 1; ++i) {
    const clip_pt *p = &in[i], *q = &in[(i + 1) % n];
    double dp = cross2(a, b, p->u), dq = cross2(a, b, q->u);
    if (dp >= 0) out[m++] = *p;
    if ((dp > 0 && dq < 0) || (dp < 0 && dq > 0)) out[m++] = crossing(p, q, dp, dq, edge);
  }
  return m;
}

/* the 3D point of a feature above 2D point u (along n) */
static mr_vec3 lift(const feature *f, const double *u, mr_vec3 o, mr_vec3 t1, mr_vec3 t2,
                    mr_vec3 n) {
  mr_vec3 q = mr_v3_madd(mr_v3_madd(o, u[0], t1), u[1], t2);
  if (f->n == 1) return f->x[0];
  if (f->n == 2) {
    double e0 = f->u[1][0] - f->u[0][0], e1 = f->u[1][1] - f->u[0][1], ee = e0 * e0 + e1 * e1;
    double s = ee > 0 ? ((u[0] - f->u[0][0]) * e0 + (u[1] - f->u[0][1]) * e1) / ee : 0.0;
    return mr_v3_madd(f->x[0], s, mr_v3_sub(f->x[1], f->x[0]));
  }
  /* the plane of the polygon: normal of its largest fan triangle */
  mr_vec3 pn = mr_v3_zero();
  for (int i = 1; i + 1 < f->n; ++i)
    pn = mr_v3_add(pn, mr_v3_cross(mr_v3_sub(f->x[i], f->x[0]), mr_v3_sub(f->x[i + 1], f->x[0])));
  double den = mr_v3_dot(n, pn);
  if (fabs(den) < 1e-300) return q;
  return mr_v3_madd(q, mr_v3_dot(mr_v3_sub(f->x[0], q), pn) / den, n);
}

/* the overlap of two parallel segments along fa's direction: up to 2 points */
static int segment_overlap(const feature *fa, const feature *fb, clip_pt *out) {
  double e0 = fa->u[1][0] - fa->u[0][0], e1 = fa->u[1][1] - fa->u[0][1];
  double ee = e0 * e0 + e1 * e1;
  if (!(ee > 0)) return 0;
  double sb0 = ((fb->u[0][0] - fa->u[0][0]) * e0 + (fb->u[0][1] - fa->u[0][1]) * e1) / ee;
  double sb1 = ((fb->u[1][0] - fa->u[0][0]) * e0 + (fb->u[1][1] - fa->u[0][1]) * e1) / ee;
  double lo = fmax(0.0, fmin(sb0, sb1)), hi = fmin(1.0, fmax(sb0, sb1));
  if (lo > hi) return 0;
  for (int k = 0; k < 2; ++k) {
    double s = k ? hi : lo;
    out[k].u[0] = fa->u[0][0] + s * e0, out[k].u[1] = fa->u[0][1] + s * e1;
    out[k].tag = 1 << 21 | k;
  }
  return 2;
}

/* 2D points where the features overlap: the incident feature clipped by the reference polygon,
 * or the overlap of parallel segments; 0 when the features only cross or touch at a point */
static int overlap_points(const feature *fa, const feature *fb, double tol, clip_pt *out) {
  if (fa->n == 1 || fb->n == 1) return 0;
  if (fa->n == 2 && fb->n == 2) {
    double c = (fa->u[1][0] - fa->u[0][0]) * (fb->u[1][1] - fb->u[0][1]) -
               (fa->u[1][1] - fa->u[0][1]) * (fb->u[1][0] - fb->u[0][0]);
    double la = hypot(fa->u[1][0] - fa->u[0][0], fa->u[1][1] - fa->u[0][1]);
    double lb = hypot(fb->u[1][0] - fb->u[0][0], fb->u[1][1] - fb->u[0][1]);
    return fabs(c) <= tol * (la + lb) ? segment_overlap(fa, fb, out) : 0;
  }
  /* reference: B's polygon when it has one (else A's); the other is incident */
  int ref_b = fb->n >= 3;
  const feature *ref = ref_b ? fb : fa, *inc = ref_b ? fa : fb;
  clip_pt buf[2][CLIP_MAX];
  int n = inc->n, cur = 0;
  for (int i = 0; i < n; ++i)
    buf[0][i].u[0] = inc->u[i][0], buf[0][i].u[1] = inc->u[i][1],
    buf[0][i].tag = (ref_b ? 0 : 1 << 23) | (inc->tag[i] & 0xfff);
  for (int e = 0; e < ref->n && n > 0; ++e) {
    n = clip_edge(buf[cur], n, ref->u[e], ref->u[(e + 1) % ref->n], e, buf[1 - cur]);
    cur = 1 - cur;
  }
  for (int i = 0; i < n; ++i)
    out[i] = buf[cur][i];
  return n;
}

/* the offset s from the point x of a core feature to its surface along −n (x − s n on the
 * surface): r, or for a capsule's segment the lowest of its cylindrical part (r / cos α for a
 * segment tilted by α out of the plane ⊥ n, where the foot of x − s n stays on the segment) and
 * its two end spheres (|x − s n − end| = r) */
static double surface_offset(const feature *f, double r, mr_vec3 x, mr_vec3 n) {
  if (f->n != 2 || r == 0) return r;
  mr_vec3 e = mr_v3_sub(f->x[1], f->x[0]);
  double len = mr_v3_norm(e), best = -INFINITY;
  if (!(len > 0)) return r;
  mr_vec3 u = mr_v3_scale(e, 1.0 / len);
  double c2 = 1.0 - mr_v3_dot(n, u) * mr_v3_dot(n, u);
  if (c2 > 0) {
    double s = r / sqrt(c2), t = mr_v3_dot(mr_v3_sub(mr_v3_madd(x, -s, n), f->x[0]), u);
    if (t >= 0 && t <= len) best = s;
  }
  for (int k = 0; k < 2; ++k) {
    mr_vec3 w = mr_v3_sub(x, f->x[k]);
    double b = mr_v3_dot(w, n), disc = b * b - mr_v3_dot(w, w) + r * r;
    if (disc >= 0) best = fmax(best, b + sqrt(disc));
  }
  return isfinite(best) ? best : r;
}

/* the one contact of a vertex (or curved point) against anything, or of crossing edges: on the
 * point's surface, moved by Φ/2 along n (the other surface's supporting plane lies at Φ) */
static int single_point(const feature *fa, const feature *fb, mr_vec3 wa, double ra, double rb,
                        mr_vec3 n, double phi, mr_vec3 o, mr_vec3 t1, mr_vec3 t2,
                        raw_contact *out) {
  out->n = n, out->phi = phi, out->feature = 0;
  if (fa->n != 1 && fb->n == 1) {
    out->p = mr_v3_madd(fb->x[0], rb + 0.5 * phi, n);
    return 1;
  }
  mr_vec3 xa = fa->n == 1 ? fa->x[0] : wa;
  xa = mr_v3_madd(xa, -surface_offset(fa, ra, xa, n), n);
  if (fa->n == 2 && fb->n == 2) {
    /* crossing edges: the lines' intersection in the plane, lifted on both */
    double ex = fa->u[1][0] - fa->u[0][0], ey = fa->u[1][1] - fa->u[0][1];
    double fx = fb->u[1][0] - fb->u[0][0], fy = fb->u[1][1] - fb->u[0][1];
    double den = ex * fy - ey * fx;
    if (fabs(den) > 1e-300) {
      double gx = fb->u[0][0] - fa->u[0][0], gy = fb->u[0][1] - fa->u[0][1];
      double t = (gx * fy - gy * fx) / den, v = (gx * ey - gy * ex) / den;
      double u[2] = {fa->u[0][0] + t * ex, fa->u[0][1] + t * ey};
      if (t >= -1e-9 && t <= 1 + 1e-9 && v >= -1e-9 && v <= 1 + 1e-9) {
        mr_vec3 la = lift(fa, u, o, t1, t2, n), lb = lift(fb, u, o, t1, t2, n);
        xa = mr_v3_madd(la, -surface_offset(fa, ra, la, n), n);
        mr_vec3 xb = mr_v3_madd(lb, surface_offset(fb, rb, lb, mr_v3_neg(n)), n);
        out->p = mr_v3_madd(xa, -0.5 * phi, n);
        out->p = mr_v3_scale(mr_v3_add(out->p, mr_v3_madd(xb, 0.5 * phi, n)), 0.5);
        return 1;
      }
      xa = mr_v3_madd(wa, -surface_offset(fa, ra, wa, n), n);
    }
  }
  out->p = mr_v3_madd(xa, -0.5 * phi, n);
  return 1;
}

/* the point of polygon (or segment, or point) f nearest to 2D point x, in y; its squared
 * distance (0 inside) */
static double polygon_nearest(const feature *f, const double *x, double *y) {
  double best = INFINITY;
  int edges = f->n == 1 ? 1 : f->n == 2 ? 1 : f->n, inside = f->n >= 3;
  for (int e = 0; e < edges; ++e) {
    const double *s0 = f->u[e], *s1 = f->u[(e + 1) % f->n];
    double d0 = s1[0] - s0[0], d1 = s1[1] - s0[1], dd = d0 * d0 + d1 * d1;
    double t = dd > 0 ? ((x[0] - s0[0]) * d0 + (x[1] - s0[1]) * d1) / dd : 0.0;
    t = fmin(fmax(t, 0.0), 1.0);
    double y0 = s0[0] + t * d0, y1 = s0[1] + t * d1;
    double d = (x[0] - y0) * (x[0] - y0) + (x[1] - y1) * (x[1] - y1);
    if (d < best) best = d, y[0] = y0, y[1] = y1;
    inside &= cross2(s0, s1, x) >= 0;
  }
  if (inside) y[0] = x[0], y[1] = x[1], best = 0.0;
  return best;
}

/* the 2D point where two features' projections meet (the midpoint of their closest pair), a
 * cylinder cap taken as its disc: the witness of a single contact whose features do not overlap
 * to round-off (a segment along a face's edge, a disc touching a face's edge); returns the
 * distance between the projections */
static double closest_2d(const feature *fa, const feature *fb, double *u) {
  const feature *f[2] = {fa, fb};
  if (fa->disc[2] > 0 && fb->disc[2] > 0) {
    /* two discs: along the line of their centres */
    double d0 = fb->disc[0] - fa->disc[0], d1 = fb->disc[1] - fa->disc[1], d = hypot(d0, d1);
    double ta = d > 0 ? fmin(fa->disc[2] / d, 1.0) : 0.0;
    double tb = d > 0 ? fmin(fb->disc[2] / d, 1.0) : 0.0;
    u[0] = 0.5 * (fa->disc[0] + ta * d0 + fb->disc[0] - tb * d0);
    u[1] = 0.5 * (fa->disc[1] + ta * d1 + fb->disc[1] - tb * d1);
    return fmax(d - fa->disc[2] - fb->disc[2], 0.0);
  }
  for (int k = 0; k < 2; ++k) {
    if (!(f[k]->disc[2] > 0)) continue;
    /* a disc and a polygon: the polygon's point nearest the centre, and the disc's nearest it */
    const double *c = f[k]->disc;
    double y[2], d = sqrt(polygon_nearest(f[1 - k], c, y));
    double t = d > c[2] ? c[2] / d : 1.0;
    u[0] = 0.5 * (y[0] + c[0] + t * (y[0] - c[0])), u[1] = 0.5 * (y[1] + c[1] + t * (y[1] - c[1]));
    return fmax(d - c[2], 0.0);
  }
  /* two polygons: every vertex of one against the other */
  double best = INFINITY;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < f[k]->n; ++i) {
      double y[2], d = polygon_nearest(f[1 - k], f[k]->u[i], y);
      if (d < best)
        best = d, u[0] = 0.5 * (y[0] + f[k]->u[i][0]), u[1] = 0.5 * (y[1] + f[k]->u[i][1]);
    }
  return sqrt(best);
}

int convex_manifold(const shape *a, const shape *b, mr_vec3 n, double phi, mr_vec3 wa, mr_vec3 wb,
                    double margin, int witness, raw_contact *out) {
  double ra = core_radius(a), rb = core_radius(b), scale = fmax(extent(a), extent(b));
  /* features within the margin of their supporting plane (at most 5 % of the size: a margin
   * comparable to the shapes would take whole shapes for features) */
  double eps = fmin(margin, 0.05 * scale) + 1e-9 * (1.0 + scale), tol = 1e-9 * (1.0 + scale);
  mr_mat3 F = mr_contact_frame(n);
  mr_vec3 t1 = mr_v3(F.m[0][0], F.m[1][0], F.m[2][0]), t2 = mr_v3(F.m[0][1], F.m[1][1], F.m[2][1]);
  mr_vec3 o = mr_v3_scale(mr_v3_add(wa, wb), 0.5);
  feature fa, fb;
  make_feature(a, mr_v3_neg(n), eps, o, t1, t2, tol, &fa);
  make_feature(b, n, eps, o, t1, t2, tol, &fb);
  clip_pt pts[CLIP_MAX];
  int np = overlap_points(&fa, &fb, tol, pts);
  raw_contact tmp[CLIP_MAX + 1];
  double ku[CLIP_MAX][2];
  mr_vec3 flat[CLIP_MAX]; /* each point on the flatter feature's surface */
  int a_flat = fa.n >= 3 && fb.n < 3;
  int m = 0;
  for (int i = 0; i < np; ++i) {
    mr_vec3 ya = lift(&fa, pts[i].u, o, t1, t2, n), yb = lift(&fb, pts[i].u, o, t1, t2, n);
    mr_vec3 xa = mr_v3_madd(ya, -surface_offset(&fa, ra, ya, n), n);
    mr_vec3 xb = mr_v3_madd(yb, surface_offset(&fb, rb, yb, mr_v3_neg(n)), n);
    double p = mr_v3_dot(mr_v3_sub(xa, xb), n);
    if (p > margin + tol || !isfinite(p)) continue;
    /* a point already kept (an incident vertex on a reference edge) */
    int dup = 0;
    for (int j = 0; j < m; ++j)
      dup |= fabs(pts[i].u[0] - ku[j][0]) + fabs(pts[i].u[1] - ku[j][1]) <= tol;
    if (dup) continue;
    ku[m][0] = pts[i].u[0], ku[m][1] = pts[i].u[1];
    flat[m] = a_flat ? xa : xb;
    tmp[m].n = n, tmp[m].phi = p, tmp[m].feature = pts[i].tag & 0xffffff;
    tmp[m++].p = mr_v3_scale(mr_v3_add(xa, xb), 0.5);
  }
  /* the deepest contact is Φ_N itself. A point feature without it: the single exact contact.
   * Lifts onto a tilted curved side (capsule end caps, cylinder rims) err by a little: such a
   * point is clamped to Φ_N, or the deepest is set to Φ_N, kept on the flatter feature's
   * surface (exact) with the other half of Φ_N along n */
  double deepest = INFINITY, tphi = 1e-9 * (1.0 + scale);
  int arg = 0;
  for (int i = 0; i < m; ++i)
    if (tmp[i].phi < deepest) deepest = tmp[i].phi, arg = i;
  double u[2];
  if (m == 0 && !witness && fa.n >= 2 && fb.n >= 2 && closest_2d(&fa, &fb, u) <= eps) {
    /* the witness on A's feature where the features' projections meet (apart they must, to
     * round-off; overlapping shapes' supports may lie apart sideways, then wa stays) */
    wa = lift(&fa, u, o, t1, t2, n);
  }
  if (m == 0 || (deepest > phi + tphi && (fa.n == 1 || fb.n == 1)))
    return single_point(&fa, &fb, wa, ra, rb, n, phi, o, t1, t2, out);
  for (int i = 0; i < m; ++i)
    if (tmp[i].phi < phi - tphi || (i == arg && deepest > phi + tphi)) {
      tmp[i].phi = phi;
      tmp[i].p = mr_v3_madd(flat[i], a_flat ? -0.5 * phi : 0.5 * phi, n);
    }
  m = reduce_contacts(tmp, m, 4);
  for (int i = 0; i < m; ++i)
    out[i] = tmp[i];
  return m;
}

/* ---- the pair ---- */

int convex_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  convex ca = {a, 1, 0.0}, cb = {b, 1, 0.0};
  double ra = core_radius(a), rb = core_radius(b), scale = fmax(extent(a), extent(b));
  gjk_vertex s[4];
  int ns;
  double dist;
  mr_vec3 wa, wb, n;
  /* apart: the exact distance and witness points of the cores */
  if (gjk_run(&ca, &cb, s, &ns, &dist, &wa, &wb) && dist > 1e-9 * (1.0 + scale)) {
    double phi = dist - ra - rb;
    if (phi > c->margin) return 0;
    n = mr_v3_normalize(mr_v3_sub(wa, wb));
    /* a polytope's face or edge normal is exact to round-off; curved pairs gain nothing */
    return convex_manifold(a, b, n, phi, wa, wb, c->margin, 1, out);
  }
  /* touching or overlapping: a first normal, then the best axis */
  if (!first_normal(&ca, &cb, s, ns, scale, c, &n)) {
    c->ccd_failures++;
    return 0;
  }
  best_axis B;
  best_normal(a, b, &ca, &cb, n, c->margin, &B);
  double phi = B.phi - ra - rb;
  if (!isfinite(phi)) {
    c->ccd_failures++;
    return 0;
  }
  if (phi > c->margin) return 0;
  n = B.n;
  wa = convex_support(&ca, mr_v3_neg(n)), wb = convex_support(&cb, n);
  return convex_manifold(a, b, n, phi, wa, wb, c->margin, 1, out);
}
