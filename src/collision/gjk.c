/* GJK distance between two separated convex shapes (Gilbert, Johnson and Keerthi 1988) on
 * their true support functions, with the closest point of each simplex found by enumerating its
 * faces (Johnson's distance sub-algorithm done by brute force: the minimum-norm point among the
 * sub-simplices whose affine closest point has positive barycentric weights). Gives the exact
 * distance and witness points of separated shapes. When the shapes overlap, the last simplex
 * (a tetrahedron enclosing the origin, or fewer vertices when the origin lies on its boundary) is
 * handed to EPA (epa.c). Bounded: at most 128 iterations. */
#include <math.h>

#include "collision/narrow.h"

/* min-norm point of the affine hull of the vertices in mask with weights lam; 0 if degenerate
 * or some weight is not positive */
static int affine_closest(const gjk_vertex *s, int mask, double *lam, mr_vec3 *v) {
  int idx[4], k = 0;
  for (int i = 0; i < 4; ++i)
    if (mask >> i & 1) idx[k++] = i;
  mr_vec3 p0 = s[idx[0]].w, e[3];
  double G[3][4];
  for (int i = 1; i < k; ++i)
    e[i - 1] = mr_v3_sub(s[idx[i]].w, p0);
  /* normal equations Gram μ = −Eᵀ p0, Gaussian elimination with partial pivoting */
  int m = k - 1;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j)
      G[i][j] = mr_v3_dot(e[i], e[j]);
    G[i][m] = -mr_v3_dot(e[i], p0);
  }
  for (int c = 0; c < m; ++c) {
    int piv = c;
    for (int r = c + 1; r < m; ++r)
      if (fabs(G[r][c]) > fabs(G[piv][c])) piv = r;
    if (fabs(G[piv][c]) < 1e-14 * (1.0 + fabs(G[0][0]))) return 0;
    for (int j = 0; j <= m; ++j) {
      double t = G[c][j];
      G[c][j] = G[piv][j], G[piv][j] = t;
    }
    for (int r = 0; r < m; ++r) {
      if (r == c) continue;
      double f = G[r][c] / G[c][c];
      for (int j = c; j <= m; ++j)
        G[r][j] -= f * G[c][j];
    }
  }
  double l0 = 1.0;
  for (int i = 0; i < 4; ++i)
    lam[i] = 0;
  *v = p0;
  for (int i = 0; i < m; ++i) {
    double mu = G[i][m] / G[i][i];
    if (!(mu > 0)) return 0;
    lam[idx[i + 1]] = mu;
    l0 -= mu;
    *v = mr_v3_madd(*v, mu, e[i]);
  }
  if (!(l0 > 0)) return 0;
  lam[idx[0]] = l0;
  return 1;
}

/* closest point of the simplex to the origin; keeps only the vertices it uses. Returns 1 if
 * the origin is inside a full tetrahedron. */
static int simplex_closest(gjk_vertex *s, int *n, mr_vec3 *v, double *lam) {
  int full = (1 << *n) - 1, best = 0;
  double bn = INFINITY, bl[4] = {0};
  mr_vec3 bv = s[0].w;
  for (int mask = 1; mask <= full; ++mask) {
    double l[4];
    mr_vec3 x;
    if (!affine_closest(s, mask, l, &x)) continue;
    if (mask == full && *n == 4) return 1;
    double nn = mr_v3_dot(x, x);
    if (nn < bn)
      bn = nn, best = mask, bv = x, bl[0] = l[0], bl[1] = l[1], bl[2] = l[2], bl[3] = l[3];
  }
  if (!best) best = 1, bl[0] = 1.0, bv = s[0].w;
  int k = 0;
  for (int i = 0; i < *n; ++i)
    if (best >> i & 1) s[k] = s[i], lam[k] = bl[i], k++;
  *n = k;
  *v = bv;
  return 0;
}

int gjk_run(const convex *a, const convex *b, gjk_vertex *s, int *ns, double *dist, mr_vec3 *pa,
            mr_vec3 *pb) {
  double lam[4] = {1, 0, 0, 0};
  mr_vec3 d = mr_v3_sub(a->s->X.p, b->s->X.p);
  if (mr_v3_norm(d) < 1e-12) d = mr_v3(0, 0, 1);
  /* first vertex along −d (closest direction guess) */
  s[0].a = convex_support(a, mr_v3_neg(d)), s[0].b = convex_support(b, d);
  s[0].w = mr_v3_sub(s[0].a, s[0].b);
  int n = 1;
  *ns = 1;
  mr_vec3 v = s[0].w;
  for (int it = 0; it < 128; ++it) {
    double vv = mr_v3_dot(v, v);
    if (vv < 1e-24) return 0;
    gjk_vertex w;
    w.a = convex_support(a, mr_v3_neg(v)), w.b = convex_support(b, v);
    w.w = mr_v3_sub(w.a, w.b);
    /* no progress: v is the closest point up to round-off */
    if (vv - mr_v3_dot(v, w.w) <= 1e-13 * vv + 1e-300) break;
    int dup = 0;
    for (int i = 0; i < n; ++i)
      if (mr_v3_norm(mr_v3_sub(s[i].w, w.w)) < 1e-15) dup = 1;
    if (dup) break;
    s[n++] = w;
    *ns = n;
    if (simplex_closest(s, &n, &v, lam)) return 0;
    *ns = n;
  }
  *pa = mr_v3_zero(), *pb = mr_v3_zero();
  for (int i = 0; i < n; ++i)
    *pa = mr_v3_madd(*pa, lam[i], s[i].a), *pb = mr_v3_madd(*pb, lam[i], s[i].b);
  *dist = mr_v3_norm(v);
  return *dist > 0;
}
