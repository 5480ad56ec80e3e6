/* EPA, the Expanding Polytope Algorithm (van den Bergen, "Proximity queries and penetration depth
 * computation on 3D game objects", GDC 2001): the penetration depth of two overlapping convex
 * objects A and B is the distance from the origin to the boundary of their Minkowski difference
 * D = A − B. Starting from a GJK tetrahedron enclosing the origin, the face of the polytope
 * closest to the origin (plane distance d, outward normal m) is pushed out by the support point
 * w = s_A(m) − s_B(−m) of D; the faces that w sees are removed and the horizon is fanned to w.
 * It stops when ⟨w, m⟩ − d ≤ tol: the face lies on D's boundary (exactly for polytopes, to tol
 * for curved shapes). The origin's projection d m onto that face, in barycentric coordinates λ,
 * gives the witness points a = Σ λ_i a_i and b = Σ λ_i b_i (a − b = d m): moving A by −d m makes
 * the objects touch, so the contact normal from B towards A is −m.
 *
 * Everything lives in fixed arrays on the stack (EPA_MAXV vertices, EPA_MAXF faces): no
 * allocation, and the iteration count is bounded by the vertex budget; when a budget runs out
 * the best face so far is returned (curved shapes: the caller refines the normal). */
#include <math.h>

#include "collision/narrow.h"

enum { EPA_MAXV = 96, EPA_MAXF = 320, EPA_MAXE = 128 };

typedef struct {
  int v[3];
  mr_vec3 n; /* outward unit normal */
  double d;  /* plane distance from the origin, ⟨n, v0⟩ */
  int alive;
} epa_face;

typedef struct {
  gjk_vertex v[EPA_MAXV];
  epa_face f[EPA_MAXF];
  int nv, nf;
  mr_vec3 inner; /* a point strictly inside the polytope (orients the faces) */
} polytope;

/* a face (a, b, c) oriented away from the inner point; 0 when the buffer is full */
static int add_face(polytope *P, int a, int b, int c) {
  if (P->nf == EPA_MAXF) return 0;
  mr_vec3 A = P->v[a].w, B = P->v[b].w, C = P->v[c].w;
  mr_vec3 n = mr_v3_cross(mr_v3_sub(B, A), mr_v3_sub(C, A));
  double len = mr_v3_norm(n);
  /* a sliver: orient it by the inner point, it never wins the closest-face test wrongly */
  n = len > 1e-300 ? mr_v3_scale(n, 1.0 / len) : mr_v3_normalize(mr_v3_sub(A, P->inner));
  epa_face *f = &P->f[P->nf++];
  if (mr_v3_dot(n, mr_v3_sub(A, P->inner)) < 0) {
    n = mr_v3_neg(n);
    int t = b;
    b = c, c = t;
  }
  f->v[0] = a, f->v[1] = b, f->v[2] = c;
  f->n = n;
  f->d = mr_v3_dot(n, A);
  f->alive = 1;
  return 1;
}

static gjk_vertex md_support(const convex *a, const convex *b, mr_vec3 m) {
  gjk_vertex w;
  w.a = convex_support(a, m), w.b = convex_support(b, mr_v3_neg(m));
  w.w = mr_v3_sub(w.a, w.b);
  return w;
}

/* distance of x from the affine hull of the first k vertices */
static double hull_gap(const polytope *P, int k, mr_vec3 x) {
  mr_vec3 d = mr_v3_sub(x, P->v[0].w);
  if (k == 1) return mr_v3_norm(d);
  mr_vec3 e = mr_v3_sub(P->v[1].w, P->v[0].w);
  if (k == 2) return mr_v3_norm(mr_v3_cross(d, e)) / fmax(mr_v3_norm(e), 1e-300);
  mr_vec3 n = mr_v3_cross(e, mr_v3_sub(P->v[2].w, P->v[0].w));
  return fabs(mr_v3_dot(d, n)) / fmax(mr_v3_norm(n), 1e-300);
}

/* a full tetrahedron from the GJK simplex, adding support points along fixed directions while
 * the simplex is flat; 0 if none is found */
static int tetrahedron(const convex *a, const convex *b, const gjk_vertex *s, int ns, polytope *P,
                       double scale) {
  static const double dirs[14][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},   {0, -1, 0}, {0, 0, 1},
                                     {0, 0, -1}, {1, 1, 1},  {-1, -1, -1}, {1, -1, 1}, {-1, 1, -1},
                                     {1, 1, -1}, {-1, -1, 1}, {-1, 1, 1},  {1, -1, -1}};
  P->nv = 0;
  for (int i = 0; i < ns && P->nv < 4; ++i)
    if (P->nv == 0 || hull_gap(P, P->nv, s[i].w) > 1e-9 * scale) P->v[P->nv++] = s[i];
  for (int k = 0; k < 14 && P->nv < 4; ++k) {
    gjk_vertex w = md_support(a, b, mr_v3(dirs[k][0], dirs[k][1], dirs[k][2]));
    if (hull_gap(P, P->nv, w.w) > 1e-9 * scale) P->v[P->nv++] = w;
  }
  if (P->nv < 4) return 0;
  P->inner = mr_v3_zero();
  for (int i = 0; i < 4; ++i)
    P->inner = mr_v3_madd(P->inner, 0.25, P->v[i].w);
  P->nf = 0;
  add_face(P, 0, 1, 2), add_face(P, 0, 1, 3), add_face(P, 0, 2, 3), add_face(P, 1, 2, 3);
  /* the origin must be inside (or on the boundary, to round-off) */
  for (int i = 0; i < 4; ++i)
    if (P->f[i].d < -1e-12 * scale) return 0;
  return 1;
}

/* toggle the directed edge (i, j) in the horizon list: its reverse cancels it */
static int toggle_edge(int (*e)[2], int ne, int i, int j) {
  for (int k = 0; k < ne; ++k)
    if (e[k][0] == j && e[k][1] == i) {
      e[k][0] = e[ne - 1][0], e[k][1] = e[ne - 1][1];
      return ne - 1;
    }
  if (ne == EPA_MAXE) return -1;
  e[ne][0] = i, e[ne][1] = j;
  return ne + 1;
}

/* drop dead faces to make room */
static void compact(polytope *P) {
  int k = 0;
  for (int i = 0; i < P->nf; ++i)
    if (P->f[i].alive) P->f[k++] = P->f[i];
  P->nf = k;
}

static int closest_face(const polytope *P) {
  int best = -1;
  for (int i = 0; i < P->nf; ++i)
    if (P->f[i].alive && (best < 0 || P->f[i].d < P->f[best].d)) best = i;
  return best;
}

/* add w: remove the faces it sees, fan the horizon to it; 0 when a budget runs out */
static int expand(polytope *P, const gjk_vertex *w, double eps) {
  int e[EPA_MAXE][2], ne = 0, iw = P->nv;
  P->v[P->nv++] = *w;
  for (int i = 0; i < P->nf; ++i) {
    epa_face *f = &P->f[i];
    if (!f->alive || mr_v3_dot(f->n, mr_v3_sub(w->w, P->v[f->v[0]].w)) <= eps) continue;
    f->alive = 0;
    for (int k = 0; k < 3 && ne >= 0; ++k)
      ne = toggle_edge(e, ne, f->v[k], f->v[(k + 1) % 3]);
    if (ne < 0) return 0;
  }
  if (P->nf + ne > EPA_MAXF) compact(P);
  if (P->nf + ne > EPA_MAXF) return 0;
  for (int k = 0; k < ne; ++k)
    add_face(P, e[k][0], e[k][1], iw);
  return 1;
}

/* barycentric coordinates of p in triangle (A, B, C), clamped to the triangle */
static void barycentric(mr_vec3 p, mr_vec3 A, mr_vec3 B, mr_vec3 C, double *l) {
  mr_vec3 n = mr_v3_cross(mr_v3_sub(B, A), mr_v3_sub(C, A));
  double nn = mr_v3_dot(n, n);
  if (!(nn > 1e-300)) {
    l[0] = 1, l[1] = l[2] = 0;
    return;
  }
  l[0] = mr_v3_dot(n, mr_v3_cross(mr_v3_sub(B, p), mr_v3_sub(C, p))) / nn;
  l[1] = mr_v3_dot(n, mr_v3_cross(mr_v3_sub(C, p), mr_v3_sub(A, p))) / nn;
  l[2] = 1.0 - l[0] - l[1];
  double s = 0;
  for (int k = 0; k < 3; ++k)
    l[k] = fmax(l[k], 0.0), s += l[k];
  for (int k = 0; k < 3; ++k)
    l[k] /= s;
}

int epa_run(const convex *a, const convex *b, const gjk_vertex *s, int ns, mr_vec3 *n,
            double *depth, mr_vec3 *pa, mr_vec3 *pb) {
  polytope P;
  double scale = 0;
  for (int i = 0; i < ns; ++i)
    scale = fmax(scale, mr_v3_norm(s[i].w));
  scale = fmax(scale, 1e-3);
  if (!tetrahedron(a, b, s, ns, &P, scale)) return 0;
  int best = closest_face(&P);
  while (P.nv < EPA_MAXV) {
    epa_face *f = &P.f[best];
    gjk_vertex w = md_support(a, b, f->n);
    /* no point of D beyond the face: it lies on D's boundary */
    if (mr_v3_dot(w.w, f->n) - f->d <= 1e-12 * scale) break;
    epa_face keep = *f;
    if (!expand(&P, &w, 1e-13 * scale)) {
      /* out of budget: the last closest face stands */
      P.nf = 0;
      P.f[P.nf++] = keep;
      best = 0;
      break;
    }
    best = closest_face(&P);
    if (best < 0) return 0;
  }
  const epa_face *f = &P.f[best];
  double l[3];
  mr_vec3 A = P.v[f->v[0]].w, B = P.v[f->v[1]].w, C = P.v[f->v[2]].w;
  barycentric(mr_v3_scale(f->n, f->d), A, B, C, l);
  *pa = mr_v3_zero(), *pb = mr_v3_zero();
  for (int k = 0; k < 3; ++k)
    *pa = mr_v3_madd(*pa, l[k], P.v[f->v[k]].a), *pb = mr_v3_madd(*pb, l[k], P.v[f->v[k]].b);
  *n = mr_v3_neg(f->n);
  *depth = f->d;
  return isfinite(f->d) && isfinite(pa->v[0] + pa->v[1] + pa->v[2] + pb->v[0] + pb->v[1] + pb->v[2]);
}
