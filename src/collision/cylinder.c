/* Pairs with a cylinder (sphere, capsule, cylinder, box against a cylinder) and capsule–box:
 * short exact routines in place of the general convex search (convex.c), with the same manifold.
 *
 * With Φ(n) = min_A ⟨n, x⟩ − max_B ⟨n, x⟩ on the cores (a capsule's segment, a sphere's centre:
 * the radii are subtracted at the end), Φ_N = max over unit n of Φ(n), apart or overlapping, and
 * every Φ(n) is a lower bound. The maximiser n* is the normal at the point p* of the boundary of
 * the Minkowski difference A − B nearest the origin, and that boundary is made of patches, one per
 * pair of features (one of A, one of B) whose normal cones meet. So n* is the normal of one such
 * pair at its stationary point, and the normals of all feature pairs, each at its stationary
 * points, contain it: their best is Φ_N exactly. The features of a cylinder (centre c, unit axis
 * a, radius r) are its two caps (normal ±a), its side (normals radial, ⊥ a) and its two rims
 * (circles); of a box its faces, edges and vertices; of a segment its two ends and itself. The
 * pairs and their normals:
 *   - a face with anything: the face normal (box faces, ±a for the caps);
 *   - the side with an edge or a segment: a × e, and for a parallel edge the radial direction;
 *   - the side with a vertex or an end: the radial direction of the point (closest point of the
 *     side);
 *   - a rim with a vertex or an end: towards the rim's closest point (closed form);
 *   - a rim with an edge or a segment (inside its length): the stationary points of the distance
 *     of the circle to the line, a trigonometric polynomial of degree 2 in the rim's angle θ:
 *     sampled at 16 angles, each sign change of its derivative refined (Illinois);
 *   - the side with a rim: the stationary points of the rim's distance to the side's axis (the
 *     same polynomial), along the side's radial direction;
 *   - a rim with a rim: the stationary points of the distance of one circle to the other
 *     (closed form for a point), found in the first rim's angle as above.
 * Every direction is tried with both signs (a stationary point of an overlapping pair points the
 * other way). The cheap normals come first: as soon as one separates the cores by more than the
 * margin the pair has no contact (most candidate pairs of a scene). Capsule–box: the segment's
 * exact distance to the box (its squared distance along the segment is a convex piecewise
 * quadratic, minimised piece by piece), or, where the segment enters the box, separating-axis
 * theory on the 6 axes of the segment against the box (3 face normals, 3 cross products: the
 * Minkowski difference of two polytopes has no other faces). Sphere–cylinder: the closest point
 * of the cylinder (inside: the nearer of the cap and the side). Then convex_manifold (convex.c)
 * clips the support features along n* into at most 4 points, as for the general pairs. */
#include <math.h>

#include "collision/narrow.h"

enum { SAMPLES = 16 };

static mr_vec3 col(const mr_se3 *X, int k) {
  return mr_v3(X->R.m[0][k], X->R.m[1][k], X->R.m[2][k]);
}

/* ---- the search over candidate normals ---- */

typedef struct {
  convex A, B;  /* the cores */
  mr_vec3 n;    /* best normal so far, from B towards A */
  double phi;   /* Φ of the cores along it */
  double stop;  /* a core Φ beyond this separates the shapes by more than the margin */
  double tiny;  /* directions shorter than this are not tried */
  double apart; /* an upper bound of the cores' distance when they are apart (set_reach) */
} search;

/* Pruning. The feature pair that holds the maximiser has two points x_A, x_B with
 * |x_A − x_B| = |Φ_N|: apart, Φ_N is the distance between the cores, at most the distance from
 * any point of A to B (S->apart); overlapping, |Φ_N| is the depth, at most −Φ of the best normal
 * so far. So a feature pair farther apart than both bounds cannot hold it: far() says so from a
 * lower bound of the two features' distance (with 1e-9 of the shapes' size for round-off: the
 * bounds are equal when the pair is the active one). */
static int far(const search *S, double lower) {
  return lower > fmax(S->apart, -S->phi) + 1e3 * S->tiny;
}

static double gap(const search *S, mr_vec3 n) {
  mr_vec3 xa = convex_support(&S->A, mr_v3_neg(n)), xb = convex_support(&S->B, n);
  return mr_v3_dot(n, mr_v3_sub(xa, xb));
}

/* try ±d; 1 when the pair is proven apart beyond the margin. The cores are symmetric about
 * their centres c (s(−n) = 2c − s(n)), so Φ(−n) = Φ(n) − 2 ⟨n, c_A − c_B⟩ */
static int try_dir(search *S, mr_vec3 d) {
  double len = mr_v3_norm(d);
  if (!(len > S->tiny)) return S->phi > S->stop;
  mr_vec3 n = mr_v3_scale(d, 1.0 / len);
  double p = gap(S, n), q = p - 2 * mr_v3_dot(n, mr_v3_sub(S->A.s->X.p, S->B.s->X.p));
  if (p > S->phi) S->phi = p, S->n = n;
  if (q > S->phi) S->phi = q, S->n = mr_v3_neg(n);
  return S->phi > S->stop;
}

/* the component of d perpendicular to the unit axis a */
static mr_vec3 perp(mr_vec3 d, mr_vec3 a) {
  return mr_v3_madd(d, -mr_v3_dot(d, a), a);
}

/* a cylinder in the world: centre, axis, two unit vectors across it, radius, half length */
typedef struct {
  mr_vec3 c, a, u, v;
  double r, h;
} cyl;

static cyl cyl_of(const shape *s) {
  cyl y = {s->X.p, col(&s->X, 2), col(&s->X, 0), col(&s->X, 1), s->g->size[0], s->g->size[1]};
  return y;
}

static mr_vec3 rim_centre(const cyl *y, int k) {
  return mr_v3_madd(y->c, k ? y->h : -y->h, y->a);
}

/* the side's normal at point x: its radial direction (the side lies |ρ − r| from x at least) */
static int side_point(search *S, const cyl *y, mr_vec3 x) {
  mr_vec3 w = perp(mr_v3_sub(x, y->c), y->a);
  if (far(S, fabs(mr_v3_norm(w) - y->r))) return S->phi > S->stop;
  return try_dir(S, w);
}

/* the distance of point x to rim k */
static double rim_distance(const cyl *y, int k, mr_vec3 x) {
  mr_vec3 w = mr_v3_sub(x, rim_centre(y, k));
  double z = mr_v3_dot(w, y->a);
  return hypot(mr_v3_norm(perp(w, y->a)) - y->r, z);
}

/* rim k against point x: towards the rim's closest point */
static int rim_point(search *S, const cyl *y, int k, mr_vec3 x) {
  mr_vec3 q = rim_centre(y, k), w = perp(mr_v3_sub(x, q), y->a);
  double len = mr_v3_norm(w);
  if (!(len > S->tiny) || far(S, rim_distance(y, k, x))) return S->phi > S->stop;
  return try_dir(S, mr_v3_sub(x, mr_v3_madd(q, y->r / len, w)));
}

/* the distance of point x to the segment p0 + t e, t in [0, len] */
static double segment_distance(mr_vec3 x, mr_vec3 p0, mr_vec3 e, double len) {
  double t = fmin(fmax(mr_v3_dot(mr_v3_sub(x, p0), e), 0.0), len);
  return mr_v3_norm(mr_v3_sub(x, mr_v3_madd(p0, t, e)));
}

/* ---- stationary points along a rim ---- */

/* a point of the unit circle: cos θ, sin θ */
typedef struct {
  double c, s;
} unit2;

/* u turned by the angle d, |d| ≤ 1 (Taylor series to d⁹, then normalised: the angle is exact to
 * 3e-8 at d = 1, and the point stays on the circle, which is all the searches below need) */
static unit2 turn(unit2 u, double d) {
  double d2 = d * d;
  double c = 1 - d2 / 2 * (1 - d2 / 12 * (1 - d2 / 30 * (1 - d2 / 56)));
  double s = d * (1 - d2 / 6 * (1 - d2 / 20 * (1 - d2 / 42 * (1 - d2 / 72))));
  unit2 r = {u.c * c - u.s * s, u.s * c + u.c * s};
  double k = 1.0 / sqrt(r.c * r.c + r.s * r.s);
  r.c *= k, r.s *= k;
  return r;
}

/* a function of the rim angle whose roots are sought (the derivative of a distance) */
typedef double (*angle_fn)(const void *ctx, double c, double s);

/* the root of f between u0 and u0 turned by w (f0 = f(u0), f1 = f(end) of opposite signs), on
 * the angle t from u0, to 1e-13 rad: Newton's method on f when its derivative df is given,
 * falling back to bisection when a step leaves the bracket; else the Illinois variant of regula
 * falsi */
static unit2 refine(angle_fn f, angle_fn df, const void *ctx, unit2 u0, double w, double f0,
                    double f1) {
  int side = 0;
  double lo = 0.0, hi = w, t = 0.5 * w;
  unit2 x = u0;
  for (int it = 0; it < 60 && hi - lo > 1e-13; ++it) {
    if (!df) {
      t = (lo * f1 - hi * f0) / (f1 - f0);
      if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    }
    x = turn(u0, t);
    double fx = f(ctx, x.c, x.s);
    if (fx == 0) return x;
    int below = (fx < 0) == (f0 < 0);
    if (below)
      lo = t;
    else
      hi = t;
    if (df) {
      /* Newton, or bisection when it leaves the bracket */
      double d = df(ctx, x.c, x.s), next = d != 0 ? t - fx / d : NAN;
      if (fabs(next - t) < 1e-13) return turn(u0, fmin(fmax(next, 0.0), w));
      t = next > lo && next < hi ? next : 0.5 * (lo + hi);
      continue;
    }
    if (below) {
      f0 = fx;
      if (side == -1) f1 *= 0.5;
      side = -1;
    } else {
      f1 = fx;
      if (side == 1) f0 *= 0.5;
      side = 1;
    }
  }
  return x;
}

/* the roots of f over a turn: sign changes between SAMPLES equally spaced angles and the extra
 * angles in [0, 2π), increasing (where f turns sharply), refined; only those where f goes from
 * negative to positive (the minima of a distance) when minima is set; df, when given, is f's
 * derivative; scale is the size of f's terms. At most SAMPLES + nextra, as points of the unit
 * circle */
static int roots(angle_fn f, angle_fn df, const void *ctx, double scale, const double *extra,
                 int nextra, int minima, unit2 *out) {
  /* cos and sin of 2π i / SAMPLES */
  static const double cs[SAMPLES][2] = {
      {1, 0},
      {0.92387953251128674, 0.38268343236508978},
      {0.70710678118654757, 0.70710678118654746},
      {0.38268343236508984, 0.92387953251128674},
      {6.123233995736766e-17, 1},
      {-0.38268343236508973, 0.92387953251128674},
      {-0.70710678118654746, 0.70710678118654757},
      {-0.92387953251128674, 0.38268343236508989},
      {-1, 1.2246467991473532e-16},
      {-0.92387953251128685, -0.38268343236508967},
      {-0.70710678118654768, -0.70710678118654746},
      {-0.38268343236509034, -0.92387953251128652},
      {-1.8369701987210297e-16, -1},
      {0.38268343236509, -0.92387953251128663},
      {0.70710678118654735, -0.70710678118654768},
      {0.92387953251128652, -0.38268343236509039},
  };
  enum { MAX = SAMPLES + 4 };
  double t[MAX], fs[MAX];
  unit2 u[MAX];
  int m = 0, e = 0;
  /* the samples in increasing angle, the extra angles merged in */
  for (int i = 0; i <= SAMPLES && m < MAX; ++i) {
    double ti = 2 * M_PI * i / SAMPLES;
    for (; e < nextra && extra[e] < ti && m < MAX; ++e) {
      t[m] = extra[e], u[m] = (unit2){cos(extra[e]), sin(extra[e])};
      fs[m] = f(ctx, u[m].c, u[m].s), ++m;
    }
    if (i < SAMPLES)
      t[m] = ti, u[m] = (unit2){cs[i][0], cs[i][1]}, fs[m] = f(ctx, cs[i][0], cs[i][1]), ++m;
  }
  /* f constant to round-off (a rim coaxial with the line or circle): every angle is stationary,
   * and one stands for all */
  double big = 0.0;
  for (int i = 0; i < m; ++i)
    big = fmax(big, fabs(fs[i]));
  if (big <= 1e-13 * scale) {
    out[0] = u[0];
    return 1;
  }
  /* a sample where f vanishes to round-off is a root itself */
  double zero = 1e-13 * scale;
  int n = 0;
  for (int i = 0; i < m; ++i) {
    int j = (i + 1) % m;
    double f0 = fs[i], f1 = fs[j], w = (j ? t[j] : t[j] + 2 * M_PI) - t[i];
    if (fabs(f0) <= zero) {
      if (!minima || fs[(i + m - 1) % m] < 0 || f1 > 0) out[n++] = u[i];
    } else if (fabs(f1) > zero && (f0 < 0) != (f1 < 0) && (!minima || f0 < 0)) {
      out[n++] = refine(f, df, ctx, u[i], w, f0, f1);
    }
  }
  return n;
}

/* a rim and a line p0 + t e (unit e): with w(θ) = q + r (cos θ u + sin θ v) − p0, the squared
 * distance of the rim point to the line is |w|² − ⟨w, e⟩², whose derivative in θ is
 * 2 ⟨w, w'⟩ − 2 ⟨w, e⟩ ⟨w', e⟩ */
typedef struct {
  double A, B, al, be, ga, r; /* ⟨w0, u⟩, ⟨w0, v⟩, ⟨w0, e⟩, r ⟨u, e⟩, r ⟨v, e⟩, r */
} rim_line;

static double rim_line_slope(const void *ctx, double c, double s) {
  const rim_line *L = ctx;
  return L->r * (-L->A * s + L->B * c) - (L->al + L->be * c + L->ga * s) * (-L->be * s + L->ga * c);
}

/* its derivative: r (−A c − B s) − (−β s + γ c)² + (α + β c + γ s)(β c + γ s) */
static double rim_line_curvature(const void *ctx, double c, double s) {
  const rim_line *L = ctx;
  double p = -L->be * s + L->ga * c;
  return -L->r * (L->A * c + L->B * s) - p * p +
         (L->al + L->be * c + L->ga * s) * (L->be * c + L->ga * s);
}

/* the rim points where the distance to the line is stationary (only its minima when minima is
 * set); 0 ... 4 of them in x */
static int rim_line_points(const cyl *y, int k, mr_vec3 p0, mr_vec3 e, int minima, mr_vec3 *x) {
  mr_vec3 q = rim_centre(y, k), w0 = mr_v3_sub(q, p0);
  rim_line L = {mr_v3_dot(w0, y->u),       mr_v3_dot(w0, y->v),       mr_v3_dot(w0, e),
                y->r * mr_v3_dot(y->u, e), y->r * mr_v3_dot(y->v, e), y->r};
  unit2 th[SAMPLES + 4];
  double scale = (y->r + mr_v3_norm(w0)) * (y->r + mr_v3_norm(w0));
  int n = roots(rim_line_slope, rim_line_curvature, &L, scale, NULL, 0, minima, th);
  for (int i = 0; i < n; ++i)
    x[i] = mr_v3_madd(mr_v3_madd(q, y->r * th[i].c, y->u), y->r * th[i].s, y->v);
  return n;
}

/* rim k against the segment p0 + t e, t in [0, len]: towards the line from each stationary rim
 * point whose foot lies on the segment */
static int rim_segment(search *S, const cyl *y, int k, mr_vec3 p0, mr_vec3 e, double len) {
  if (far(S, segment_distance(rim_centre(y, k), p0, e, len) - y->r)) return S->phi > S->stop;
  mr_vec3 x[SAMPLES + 4];
  int n = rim_line_points(y, k, p0, e, 1, x);
  for (int i = 0; i < n; ++i) {
    double t = mr_v3_dot(mr_v3_sub(x[i], p0), e);
    if (t < 0 || t > len) continue;
    if (try_dir(S, mr_v3_sub(x[i], mr_v3_madd(p0, t, e)))) return 1;
  }
  return S->phi > S->stop;
}

/* the side of cylinder s against rim k of cylinder y: the side's radial direction at each rim
 * point whose distance to the side's axis is stationary */
static int side_rim(search *S, const cyl *s, const cyl *y, int k) {
  mr_vec3 q = rim_centre(y, k);
  if (far(S, fabs(mr_v3_norm(perp(mr_v3_sub(q, s->c), s->a)) - s->r) - y->r))
    return S->phi > S->stop;
  mr_vec3 x[SAMPLES + 4];
  int n = rim_line_points(y, k, s->c, s->a, 0, x);
  for (int i = 0; i < n; ++i)
    if (side_point(S, s, x[i])) return 1;
  return S->phi > S->stop;
}

/* a rim (q1 + r1 (cos θ u1 + sin θ v1)) against another circle (q2, axis a2, r2): the squared
 * distance of the rim point x to the circle is |w|² − 2 r2 ρ + r2² (w = x − q2, ρ = |w ⊥ a2|),
 * whose derivative in θ is 2 ⟨w, x'⟩ − 2 r2 ⟨w⊥, x'⟩ / ρ */
typedef struct {
  mr_vec3 q1, u1, v1, q2, a2;
  double r1, r2;
} rim_rim;

static double rim_rim_slope(const void *ctx, double c, double s) {
  const rim_rim *R = ctx;
  mr_vec3 x = mr_v3_madd(mr_v3_madd(R->q1, R->r1 * c, R->u1), R->r1 * s, R->v1);
  mr_vec3 dx = mr_v3_madd(mr_v3_scale(R->u1, -R->r1 * s), R->r1 * c, R->v1);
  mr_vec3 w = mr_v3_sub(x, R->q2), wp = perp(w, R->a2);
  double rho = mr_v3_norm(wp), wd = mr_v3_dot(w, dx);
  return rho > 0 ? wd - R->r2 * mr_v3_dot(wp, dx) / rho : wd;
}

/* the derivative of ρ² / 2 along the first rim, ρ the distance to the second circle's axis:
 * ⟨w⊥, x'⊥⟩ (its roots are where the distance to the circle turns sharply, near its axis) */
static double rim_axis_slope(const void *ctx, double c, double s) {
  const rim_rim *R = ctx;
  mr_vec3 x = mr_v3_madd(mr_v3_madd(R->q1, R->r1 * c, R->u1), R->r1 * s, R->v1);
  mr_vec3 dx = mr_v3_madd(mr_v3_scale(R->u1, -R->r1 * s), R->r1 * c, R->v1);
  return mr_v3_dot(perp(mr_v3_sub(x, R->q2), R->a2), dx);
}

/* rim k1 of y1 against rim k2 of y2: towards the second rim's closest point from each stationary
 * point of the first; the distance to the second circle has a kink where the first rim crosses
 * its axis, so the angles closest to that axis split the search */
static int rim_rim_dirs(search *S, const cyl *y1, int k1, const cyl *y2, int k2) {
  if (far(S, rim_distance(y2, k2, rim_centre(y1, k1)) - y1->r)) return S->phi > S->stop;
  rim_rim R = {rim_centre(y1, k1), y1->u, y1->v, rim_centre(y2, k2), y2->a, y1->r, y2->r};
  unit2 th[SAMPLES + 4], kink[SAMPLES + 4];
  double ext[4];
  double d = y1->r + y2->r + mr_v3_norm(mr_v3_sub(R.q1, R.q2));
  int nk = roots(rim_axis_slope, NULL, &R, d * d, NULL, 0, 1, kink), ne = 0;
  for (int i = 0; i < nk && ne < 4; ++i) {
    double t = atan2(kink[i].s, kink[i].c);
    ext[ne++] = t < 0 ? t + 2 * M_PI : t;
  }
  for (int i = 1; i < ne; ++i)
    for (int j = i; j > 0 && ext[j] < ext[j - 1]; --j) {
      double x = ext[j];
      ext[j] = ext[j - 1], ext[j - 1] = x;
    }
  int n = roots(rim_rim_slope, NULL, &R, d * d, ext, ne, 1, th);
  for (int i = 0; i < n; ++i) {
    mr_vec3 x = mr_v3_madd(mr_v3_madd(R.q1, R.r1 * th[i].c, R.u1), R.r1 * th[i].s, R.v1);
    if (rim_point(S, y2, k2, x)) return 1;
  }
  return S->phi > S->stop;
}

/* ---- the pairs ---- */

/* the search on the cores of a and b; 0 when their bounding spheres are apart beyond it */
static int start(search *S, const shape *a, const shape *b, double ra, double rb, double bound_a,
                 double bound_b, double margin) {
  S->A = (convex){a, 1, 0.0}, S->B = (convex){b, 1, 0.0};
  S->stop = margin + ra + rb;
  S->phi = -INFINITY, S->n = mr_v3(0, 0, 1);
  S->tiny = 1e-12 * (1.0 + bound_a + bound_b);
  S->apart = INFINITY;
  double d = mr_v3_norm(mr_v3_sub(a->X.p, b->X.p));
  if (d - bound_a - bound_b > S->stop) return 0;
  /* the centres' direction first: it often separates */
  return !try_dir(S, mr_v3_sub(a->X.p, b->X.p));
}

/* points of the cores on their supporting planes along −n and n: the supports, where a flat
 * feature (a face, a cap, a side line, a segment) ties broken towards the other shape's centre */
static void witnesses(const convex *A, const convex *B, mr_vec3 n, mr_vec3 *wa, mr_vec3 *wb) {
  mr_vec3 d = mr_v3_sub(B->s->X.p, A->s->X.p);
  double len = mr_v3_norm(d);
  d = len > 0 ? mr_v3_scale(perp(d, n), 1e-6 / len) : mr_v3_zero();
  *wa = convex_support(A, mr_v3_add(mr_v3_neg(n), d));
  *wb = convex_support(B, mr_v3_sub(n, d));
}

/* the distance of point x to the core of s (0 inside): a sphere's centre, a capsule's segment,
 * a box, a cylinder */
static double core_distance(const shape *s, mr_vec3 x) {
  const double *h = s->g->size;
  mr_vec3 l = mr_se3_inv_act_point(&s->X, x), q;
  switch (s->g->type) {
  case MR_GEOM_CAPSULE:
    l.v[2] -= fmin(fmax(l.v[2], -h[1]), h[1]);
    return mr_v3_norm(l);
  case MR_GEOM_BOX:
    for (int k = 0; k < 3; ++k)
      q.v[k] = l.v[k] - fmin(fmax(l.v[k], -h[k]), h[k]);
    return mr_v3_norm(q);
  case MR_GEOM_CYLINDER: {
    double rho = hypot(l.v[0], l.v[1]);
    return hypot(fmax(rho - h[0], 0.0), fmax(fabs(l.v[2]) - h[1], 0.0));
  }
  default:
    return mr_v3_norm(mr_v3_sub(x, s->X.p));
  }
}

/* the pruning bound of the cores apart: the distance to the other core from either witness */
static void set_reach(search *S) {
  mr_vec3 wa, wb;
  witnesses(&S->A, &S->B, S->n, &wa, &wb);
  S->apart = fmin(core_distance(S->B.s, wa), core_distance(S->A.s, wb));
}

/* the contacts of a finished search: Φ_N = the cores' Φ − the radii, then the manifold */
static int finish(const search *S, const shape *a, const shape *b, double ra, double rb,
                  narrow_ctx *c, raw_contact *out) {
  double phi = S->phi - ra - rb;
  if (!(phi <= c->margin)) return 0;
  mr_vec3 wa, wb;
  witnesses(&S->A, &S->B, S->n, &wa, &wb);
  return convex_manifold(a, b, S->n, phi, wa, wb, c->margin, 0, out);
}

static double cyl_bound(const cyl *y) {
  return hypot(y->r, y->h);
}

/* the cylinder's own normals: its axis */
static int cyl_axes(search *S, const cyl *y) {
  return try_dir(S, y->a);
}

/* sphere a against cylinder b: the closest point of the cylinder to the centre (inside: the
 * nearer of the cap and the side) */
int sphere_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  double R = a->g->size[0], r = b->g->size[0], h = b->g->size[1];
  mr_vec3 x = mr_se3_inv_act_point(&b->X, a->X.p), q = x, nl;
  double rho = hypot(x.v[0], x.v[1]), phi;
  /* the radial unit vector (the local x axis on the axis itself) */
  double ux = rho > 0 ? x.v[0] / rho : 1.0, uy = rho > 0 ? x.v[1] / rho : 0.0;
  if (rho <= r && fabs(x.v[2]) <= h) {
    double side = r - rho, cap = h - fabs(x.v[2]);
    if (cap <= side) {
      q.v[2] = x.v[2] >= 0 ? h : -h;
      nl = mr_v3(0, 0, x.v[2] >= 0 ? 1 : -1);
      phi = -cap;
    } else {
      q.v[0] = r * ux, q.v[1] = r * uy;
      nl = mr_v3(ux, uy, 0);
      phi = -side;
    }
  } else {
    if (rho > r) q.v[0] = r * ux, q.v[1] = r * uy;
    q.v[2] = fmin(fmax(x.v[2], -h), h);
    mr_vec3 d = mr_v3_sub(x, q);
    phi = mr_v3_norm(d);
    nl = mr_v3_scale(d, 1.0 / phi);
  }
  phi -= R;
  if (phi > c->margin) return 0;
  out->n = mr_m3_mulv(&b->X.R, nl);
  out->phi = phi;
  out->p = mr_v3_madd(mr_se3_act_point(&b->X, q), 0.5 * phi, out->n);
  out->feature = 0;
  return 1;
}

/* capsule a (its segment) against cylinder b */
int capsule_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  cyl y = cyl_of(b);
  double ra = a->g->size[0], hl = a->g->size[1];
  mr_vec3 e = col(&a->X, 2), p0 = mr_v3_madd(a->X.p, -hl, e), p1 = mr_v3_madd(a->X.p, hl, e);
  search S;
  if (!start(&S, a, b, ra, 0.0, hl, cyl_bound(&y), c->margin)) return 0;
  /* faces, side against the segment; then, pruned, side and rims against the ends */
  if (cyl_axes(&S, &y) || try_dir(&S, mr_v3_cross(y.a, e)) ||
      try_dir(&S, perp(mr_v3_sub(a->X.p, y.c), y.a)))
    return 0;
  set_reach(&S);
  if (side_point(&S, &y, p0) || side_point(&S, &y, p1)) return 0;
  for (int k = 0; k < 2; ++k)
    if (rim_point(&S, &y, k, p0) || rim_point(&S, &y, k, p1)) return 0;
  /* rims against the segment */
  for (int k = 0; k < 2; ++k)
    if (rim_segment(&S, &y, k, p0, e, 2 * hl)) return 0;
  return finish(&S, a, b, ra, 0.0, c, out);
}

/* cylinder a against cylinder b */
int cylinder_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  cyl ya = cyl_of(a), yb = cyl_of(b);
  search S;
  if (!start(&S, a, b, 0.0, 0.0, cyl_bound(&ya), cyl_bound(&yb), c->margin)) return 0;
  /* caps, side against side (crossing, then parallel) */
  mr_vec3 d = mr_v3_sub(ya.c, yb.c);
  if (cyl_axes(&S, &ya) || cyl_axes(&S, &yb) || try_dir(&S, mr_v3_cross(ya.a, yb.a)) ||
      try_dir(&S, perp(d, ya.a)) || try_dir(&S, perp(d, yb.a)))
    return 0;
  /* sides against rims, rims against rims, pruned */
  set_reach(&S);
  for (int k = 0; k < 2; ++k)
    if (side_rim(&S, &ya, &yb, k) || side_rim(&S, &yb, &ya, k)) return 0;
  for (int k = 0; k < 4; ++k)
    if (rim_rim_dirs(&S, &ya, k & 1, &yb, k >> 1)) return 0;
  return finish(&S, a, b, 0.0, 0.0, c, out);
}

/* box corner v (bits x, y, z) in the world */
static mr_vec3 corner(const shape *s, int v) {
  const double *h = s->g->size;
  return mr_se3_act_point(&s->X,
                          mr_v3(v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]));
}

/* box a against cylinder b */
int box_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  cyl y = cyl_of(b);
  const double *h = a->g->size;
  search S;
  if (!start(&S, a, b, 0.0, 0.0, sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]), cyl_bound(&y),
             c->margin))
    return 0;
  /* faces of both, the side against the edges */
  if (cyl_axes(&S, &y)) return 0;
  for (int k = 0; k < 3; ++k)
    if (try_dir(&S, col(&a->X, k)) || try_dir(&S, mr_v3_cross(y.a, col(&a->X, k)))) return 0;
  /* the side and the rims against the vertices, pruned */
  set_reach(&S);
  mr_vec3 x[8];
  for (int v = 0; v < 8; ++v) {
    x[v] = corner(a, v);
    if (side_point(&S, &y, x[v]) || rim_point(&S, &y, 0, x[v]) || rim_point(&S, &y, 1, x[v]))
      return 0;
  }
  /* the rims against the edges: edge from vertex v along axis k (bit k of v clear) */
  for (int v = 0; v < 8; ++v)
    for (int k = 0; k < 3; ++k) {
      if (v >> k & 1) continue;
      for (int r = 0; r < 2; ++r)
        if (rim_segment(&S, &y, r, x[v], col(&a->X, k), 2 * h[k])) return 0;
    }
  return finish(&S, a, b, 0.0, 0.0, c, out);
}

/* ---- capsule–box ---- */

/* the squared distance of the segment P0 + t D, t in [0, 1], to the box of half extents h (box
 * frame): convex and piecewise quadratic in t, its pieces cut where a coordinate crosses ±h;
 * each piece's minimum, the least kept in *t; 0 when the segment meets the box */
static double segment_box(mr_vec3 P0, mr_vec3 D, const double *h, double *tbest) {
  double ts[8] = {0.0, 1.0};
  int nt = 2;
  for (int k = 0; k < 3; ++k)
    for (int s = -1; D.v[k] != 0 && s <= 1; s += 2) {
      double t = (s * h[k] - P0.v[k]) / D.v[k];
      if (t > 0 && t < 1) ts[nt++] = t;
    }
  for (int i = 1; i < nt; ++i)
    for (int j = i; j > 0 && ts[j] < ts[j - 1]; --j) {
      double x = ts[j];
      ts[j] = ts[j - 1], ts[j - 1] = x;
    }
  double best = INFINITY;
  *tbest = 0.0;
  for (int i = 0; i + 1 < nt; ++i) {
    double lo = ts[i], hi = ts[i + 1], tm = 0.5 * (lo + hi), A = 0, B = 0;
    int out = 0;
    for (int k = 0; k < 3; ++k) {
      double x = P0.v[k] + tm * D.v[k], bound = x > h[k] ? h[k] : x < -h[k] ? -h[k] : 0;
      if (bound == 0) continue;
      double e = P0.v[k] - bound;
      A += D.v[k] * D.v[k], B += 2 * D.v[k] * e, out = 1;
    }
    if (!out) {
      *tbest = tm;
      return 0.0;
    }
    double t = A > 0 ? fmin(fmax(-B / (2 * A), lo), hi) : lo;
    /* the distance at t, from the point itself */
    double d2 = 0;
    for (int k = 0; k < 3; ++k) {
      double x = P0.v[k] + t * D.v[k], q = fmin(fmax(x, -h[k]), h[k]);
      d2 += (x - q) * (x - q);
    }
    if (d2 < best) best = d2, *tbest = t;
  }
  return best;
}

/* separating-axis theory for a segment (centre m, half vector e) entering the box: the best of
 * the 3 face normals and the 3 cross products with e; its Φ, the normal in nl (box frame) */
static double segment_box_sat(mr_vec3 m, mr_vec3 e, const double *h, mr_vec3 *nl) {
  double best = -INFINITY;
  for (int i = 0; i < 6; ++i) {
    mr_vec3 L = mr_v3_zero();
    if (i < 3) {
      L.v[i] = 1.0;
    } else {
      mr_vec3 ek = mr_v3_zero();
      ek.v[i - 3] = 1.0;
      L = mr_v3_cross(e, ek);
      double len = mr_v3_norm(L);
      if (!(len > 1e-9 * mr_v3_norm(e))) continue;
      L = mr_v3_scale(L, 1.0 / len);
    }
    double t = mr_v3_dot(m, L), sep = fabs(t) - fabs(mr_v3_dot(e, L));
    for (int k = 0; k < 3; ++k)
      sep -= h[k] * fabs(L.v[k]);
    if (sep > best) best = sep, *nl = t >= 0 ? L : mr_v3_neg(L);
  }
  return best;
}

/* capsule a against box b */
int capsule_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  const double *h = b->g->size;
  double r = a->g->size[0], hl = a->g->size[1];
  mr_vec3 z = mr_m3_tmulv(&b->X.R, col(&a->X, 2)), m = mr_se3_inv_act_point(&b->X, a->X.p);
  /* bounding spheres */
  if (mr_v3_norm(m) - hl - sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]) > c->margin + r) return 0;
  mr_vec3 P0 = mr_v3_madd(m, -hl, z), D = mr_v3_scale(z, 2 * hl), nl, x, q;
  double t, d2 = segment_box(P0, D, h, &t), phi, scale = hl + h[0] + h[1] + h[2];
  int apart = d2 > 1e-18 * scale * scale;
  if (apart) {
    /* apart: along the clamped coordinates from the box's closest point */
    x = mr_v3_madd(P0, t, D);
    for (int k = 0; k < 3; ++k)
      q.v[k] = fmin(fmax(x.v[k], -h[k]), h[k]), nl.v[k] = x.v[k] - q.v[k];
    phi = mr_v3_norm(nl);
    nl = mr_v3_scale(nl, 1.0 / phi);
  } else {
    phi = segment_box_sat(m, mr_v3_scale(z, hl), h, &nl);
  }
  phi -= r;
  if (phi > c->margin) return 0;
  mr_vec3 n = mr_m3_mulv(&b->X.R, nl), wa, wb;
  if (apart) {
    /* the closest points are the witnesses */
    wa = mr_se3_act_point(&b->X, x), wb = mr_se3_act_point(&b->X, q);
  } else {
    convex ca = {a, 1, 0.0}, cb = {b, 1, 0.0};
    witnesses(&ca, &cb, n, &wa, &wb);
  }
  return convex_manifold(a, b, n, phi, wa, wb, c->margin, apart, out);
}
