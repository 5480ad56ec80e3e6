/* Box-box: separating-axis test over the 15 axes (3 + 3 face normals, 9 edge cross products),
 * then a face-contact manifold by clipping the incident face against the side planes of the
 * reference face (Sutherland-Hodgman), or one edge-edge point (closest points of the two edges).
 * Points within the margin are kept and reduced to 4. When the boxes are apart (Φ_N > 0) and
 * the closest features are not found by the axes (vertex-edge, vertex-vertex), the separating
 * distance along an axis underestimates the gap: the general convex routine (convex.c) then gives
 * the exact contacts. */
#include <math.h>

#include "collision/narrow.h"

typedef struct {
  mr_vec3 c, ax[3];
  const double *h;
} obb;

static obb make_obb(const shape *s) {
  obb o = {s->X.p, {{{0}}}, s->g->size};
  for (int k = 0; k < 3; ++k)
    o.ax[k] = mr_v3(s->X.R.m[0][k], s->X.R.m[1][k], s->X.R.m[2][k]);
  return o;
}

/* half projection of a box on unit axis L */
static double radius(const obb *o, mr_vec3 L) {
  double r = 0;
  for (int k = 0; k < 3; ++k)
    r += o->h[k] * fabs(mr_v3_dot(o->ax[k], L));
  return r;
}

/* the axis of largest separation: index 0-2 faces of a, 3-5 faces of b, 6-14 edges. A face of b
 * must beat the faces of a by tol = 1e-9 of the boxes' size: two faces resting on each other are
 * parallel to round-off and their separations equal to round-off, where the larger of the two
 * changed from step to step; the reference face (and with it every contact's key, so its warm
 * start) then flipped between the boxes while nothing moved. Φ_N is then underestimated by at
 * most tol. Edge axes must beat face axes clearly (they are ill-conditioned near parallel
 * edges). */
static int best_axis(const obb *A, const obb *B, mr_vec3 *n, double *sep) {
  mr_vec3 d = mr_v3_sub(A->c, B->c);
  int best = -1;
  double bs = -INFINITY;
  double tol = 1e-9 * (A->h[0] + A->h[1] + A->h[2] + B->h[0] + B->h[1] + B->h[2]);
  for (int i = 0; i < 15; ++i) {
    mr_vec3 L = i < 3   ? A->ax[i]
                : i < 6 ? B->ax[i - 3]
                        : mr_v3_cross(A->ax[(i - 6) / 3], B->ax[(i - 6) % 3]);
    double len = mr_v3_norm(L);
    if (len < 1e-6) continue;
    L = mr_v3_scale(L, 1.0 / len);
    double t = mr_v3_dot(d, L), s = fabs(t) - radius(A, L) - radius(B, L);
    double bias = i >= 6 ? 1e-9 + 1e-6 * fabs(s) : i >= 3 && best < 3 ? tol : 0.0;
    if (s > bs + bias) {
      bs = s, best = i;
      *n = t >= 0 ? L : mr_v3_neg(L);
    }
  }
  *sep = bs;
  return best;
}

/* the vertex index (bits x, y, z) of a box's corner furthest along d */
static int corner_bits(const obb *o, mr_vec3 d) {
  int v = 0;
  for (int k = 0; k < 3; ++k)
    if (mr_v3_dot(o->ax[k], d) >= 0) v |= 1 << k;
  return v;
}

static mr_vec3 corner(const obb *o, int v) {
  mr_vec3 x = o->c;
  for (int k = 0; k < 3; ++k)
    x = mr_v3_madd(x, v >> k & 1 ? o->h[k] : -o->h[k], o->ax[k]);
  return x;
}

/* one point for the edge i of A (in -n) against the edge k of B (in +n); *inside is set when the
 * closest points of the two lines lie on both edges (then their distance is the axis's
 * separation, exactly) */
static int edge_edge(const obb *A, const obb *B, int i, int k, mr_vec3 n, double sep, double margin,
                     int *inside, raw_contact *out) {
  mr_vec3 pa = corner(A, corner_bits(A, mr_v3_neg(n)) & ~(1 << i)),
          pb = corner(B, corner_bits(B, n) & ~(1 << k));
  /* pa, pb are the edges' low ends; lines pa + s ua, pb + t ub */
  mr_vec3 ua = A->ax[i], ub = B->ax[k], r = mr_v3_sub(pa, pb);
  double b = mr_v3_dot(ua, ub), den = 1.0 - b * b, e = mr_v3_dot(ua, r), f = mr_v3_dot(ub, r);
  double s = den > 1e-12 ? (b * f - e) / den : 0.0;
  double t = b * s + f;
  *inside = den > 1e-12 && s >= 0 && s <= 2 * A->h[i] && t >= 0 && t <= 2 * B->h[k];
  s = fmin(fmax(s, 0.0), 2 * A->h[i]);
  t = fmin(fmax(t, 0.0), 2 * B->h[k]);
  if (sep > margin) return 0;
  mr_vec3 x = mr_v3_madd(pa, s, ua), y = mr_v3_madd(pb, t, ub);
  out->n = n;
  out->phi = sep;
  out->p = mr_v3_scale(mr_v3_add(x, y), 0.5);
  out->feature = 100 + 3 * i + k;
  return 1;
}

typedef struct {
  mr_vec3 x;
  int tag;
} poly_pt;

/* clip polygon in[0..n) to {⟨u, x − c⟩ ≤ e}; returns the new count. A corner within tol = 1e-9 e
 * of the plane is on it: kept with its tag, no crossing made next to it. Faces of equal boxes
 * stacked in line put the incident corners on the side planes, where round-off would otherwise
 * choose step by step between the corner and a crossing at the same point, under another tag,
 * so that the contact's key (and its warm start) changed every few steps; the point moves by at
 * most tol. */
static int clip(const poly_pt *in, int n, mr_vec3 u, mr_vec3 c, double e, int plane, poly_pt *out) {
  int m = 0;
  double tol = 1e-9 * e;
  for (int i = 0; i < n; ++i) {
    const poly_pt *p = &in[i], *q = &in[(i + 1) % n];
    double dp = mr_v3_dot(u, mr_v3_sub(p->x, c)) - e, dq = mr_v3_dot(u, mr_v3_sub(q->x, c)) - e;
    if (dp <= tol) out[m++] = *p;
    if ((dp < -tol && dq > tol) || (dp > tol && dq < -tol)) {
      double t = dp / (dp - dq);
      out[m].x = mr_v3_add(p->x, mr_v3_scale(mr_v3_sub(q->x, p->x), t));
      out[m++].tag = 64 + 8 * plane + (p->tag & 7);
    }
  }
  return m;
}

/* the incident face of I (outward normal most along o) as 4 corners in order */
static void incident_face(const obb *I, mr_vec3 o, poly_pt *f) {
  int best = 0;
  double bd = -1;
  for (int k = 0; k < 3; ++k)
    if (fabs(mr_v3_dot(I->ax[k], o)) > bd) bd = fabs(mr_v3_dot(I->ax[k], o)), best = k;
  int sgn = mr_v3_dot(I->ax[best], o) >= 0 ? 1 : 0;
  int k1 = (best + 1) % 3, k2 = (best + 2) % 3;
  static const int order[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int j = 0; j < 4; ++j) {
    int v = sgn << best | order[j][0] << k1 | order[j][1] << k2;
    f[j].x = corner(I, v);
    f[j].tag = v;
  }
}

/* face manifold: reference box R with face axis k and outward normal ro (towards I) */
static int face_contacts(const obb *R, int k, mr_vec3 ro, const obb *I, double nsign, int tag0,
                         double margin, raw_contact *out) {
  poly_pt buf[2][16];
  incident_face(I, mr_v3_neg(ro), buf[0]);
  int n = 4, cur = 0;
  mr_vec3 fc = mr_v3_madd(R->c, R->h[k], ro);
  /* the four side planes of the reference face */
  for (int j = 0; j < 4 && n > 0; ++j) {
    int kk = (k + 1 + j / 2) % 3;
    mr_vec3 u = j % 2 ? mr_v3_neg(R->ax[kk]) : R->ax[kk];
    n = clip(buf[cur], n, u, R->c, R->h[kk], j, buf[1 - cur]);
    cur = 1 - cur;
  }
  raw_contact tmp[16];
  int m = 0;
  for (int i = 0; i < n; ++i) {
    double phi = mr_v3_dot(mr_v3_sub(buf[cur][i].x, fc), ro);
    if (phi > margin) continue;
    tmp[m].n = mr_v3_scale(ro, nsign);
    tmp[m].phi = phi;
    tmp[m].p = mr_v3_madd(buf[cur][i].x, -0.5 * phi, ro);
    tmp[m].feature = tag0 + buf[cur][i].tag;
    m++;
  }
  m = reduce_contacts(tmp, m, 4);
  for (int i = 0; i < m; ++i)
    out[i] = tmp[i];
  return m;
}

int box_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  obb A = make_obb(a), B = make_obb(b);
  mr_vec3 n;
  double sep;
  int ax = best_axis(&A, &B, &n, &sep);
  if (ax < 0 || sep > c->margin) return 0;
  int m, exact = 0;
  if (ax < 3)
    m = face_contacts(&A, ax, mr_v3_neg(n), &B, -1.0, 0, c->margin, out);
  else if (ax < 6)
    m = face_contacts(&B, ax - 3, n, &A, 1.0, 200, c->margin, out);
  else
    m = edge_edge(&A, &B, (ax - 6) / 3, (ax - 6) % 3, n, sep, c->margin, &exact, out);
  /* a face axis whose clipped manifold keeps a point at the axis's separation: that point lies
   * over the reference face, sep from it, so the distance is sep (at least sep by separating-axis
   * theory, at most the point's) */
  if (ax < 6 && m > 0) {
    double low = INFINITY, tol = 1e-9 * (A.h[0] + A.h[1] + A.h[2] + B.h[0] + B.h[1] + B.h[2]);
    for (int i = 0; i < m; ++i)
      low = fmin(low, out[i].phi);
    exact = low <= sep + tol;
  }
  /* apart: unless exact as above, check that the axis distance is the true distance, else the
   * general routine's exact contacts (vertex-edge, vertex-vertex closest features) */
  if ((sep > 0 && !exact) || m == 0) {
    raw_contact e[MR_PAIR_MAX_CONTACTS];
    int ne = convex_collide(a, b, c, e);
    if (ne == 0) return m;
    double best = INFINITY, eb = INFINITY;
    for (int i = 0; i < m; ++i)
      best = fmin(best, out[i].phi);
    for (int i = 0; i < ne; ++i)
      eb = fmin(eb, e[i].phi);
    if (m == 0 || fabs(best - eb) > 1e-9) {
      for (int i = 0; i < ne; ++i)
        out[i] = e[i], out[i].feature = 300 + i;
      return ne;
    }
  }
  return m;
}
