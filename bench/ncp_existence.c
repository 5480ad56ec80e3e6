/* Does a contact problem have an exact NCP solution? An answer independent of moreau's solvers.
 *
 * For c = G λ + g (G = J M⁻¹ Jᵀ, g = J v_f/Δt + b), per contact K_μ ∋ λ ⟂ c + Γ(c) ∈ K_μ*, three
 * computations in long double, from G, g and μ alone:
 * 1. range: the eigen-decomposition of G (cyclic Jacobi), its rank and the part of g outside
 *    range(G) = range(J) (a velocity no contact force changes);
 * 2. strict feasibility (Acary, Cadoux, Lemaréchal and Malick, "A formulation of the linear
 *    discrete Coulomb friction problem via convex optimization", ZAMM 91, 2011): if some x ∈
 *    range(J) lies in the interior of K* (every contact opening inside its dual cone), then
 *    b + s x does too for s large, so v with J v + b ∈ int K* exists and the problem has a
 *    solution. A witness is searched by alternating projections between {x ∈ range(G) :
 *    Σ x_N = nc} and the product of the cones {μ' ‖x_T‖ ≤ x_N}, μ' = 1.05 μ; when the search
 *    fails, a witness of the alternative (y ∈ K ∩ null(G), y ≠ 0: internal forces inside the
 *    friction cones, under which no such x exists) is searched the same way;
 * 3. a constructive solution: every assignment of the contacts to stick (c = 0, λ ∈ K) or
 *    separate (λ = 0, c_N ≥ 0), 2^nc of them. With S the sticking set, G_SS λ_S = −g_S must be
 *    consistent (λ_S = λ_p + N w, N a basis of null(G_SS) = null(J_Sᵀ)); the separating
 *    contacts' velocities c_F = G_FS λ_p + g_F do not depend on w (G_FS N = J_F M⁻¹ J_Sᵀ N = 0)
 *    and need c_F,N ≥ 0; then internal forces w placing every λ_i inside K_μ are searched by
 *    alternating projections between the affine set and the cones shrunk to 0.999 μ. A point
 *    found is checked by evaluating the NCP criteria at it (src/contact/criteria.c, with
 *    mr_problem_velocity_dot2), once in long double and once rounded to double. Sliding modes
 *    (3^nc with a direction per sliding contact) are not enumerated: a problem with no
 *    stick/separate solution but a strict-feasibility witness has one that slides.
 * Usage: build/bench/bench/ncp_existence [FILE.json ...]; without files, the problems of
 * scenes/b5_heavy_on_light.yaml stepped with its own solver (ncp-pgs) at steps 123, 164, 205
 * and 246 (those the corpus benchmark takes and ncp-hybrid leaves unsolved). With
 * NCP_EXISTENCE_SAVE=DIR, each problem is written to DIR with the solution found as lambda0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem_io.h"
#include "core/linalg.h"
#include "moreau/contact.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define MAXN 36 /* 3 nc: at most 12 contacts (4096 modes) */

typedef long double ld;

/* A (n x n, stride MAXN) ← its eigenvalues on the diagonal, V the eigenvectors (columns) */
static void jacobi(ld A[MAXN][MAXN], ld V[MAXN][MAXN], int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      V[i][j] = i == j;
  for (int sweep = 0; sweep < 60; ++sweep) {
    ld off = 0.0L, on = 0.0L;
    for (int i = 0; i < n; ++i) {
      on += A[i][i] * A[i][i];
      for (int j = i + 1; j < n; ++j)
        off += A[i][j] * A[i][j];
    }
    if (off <= 1e-38L * on) return;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (A[p][q] == 0.0L) continue;
        ld th = (A[q][q] - A[p][p]) / (2.0L * A[p][q]);
        ld t = (th >= 0.0L ? 1.0L : -1.0L) / (fabsl(th) + sqrtl(th * th + 1.0L));
        ld c = 1.0L / sqrtl(t * t + 1.0L), s = t * c;
        for (int k = 0; k < n; ++k) {
          ld a = A[k][p], b = A[k][q];
          A[k][p] = c * a - s * b, A[k][q] = s * a + c * b;
        }
        for (int k = 0; k < n; ++k) {
          ld a = A[p][k], b = A[q][k];
          A[p][k] = c * a - s * b, A[q][k] = s * a + c * b;
        }
        for (int k = 0; k < n; ++k) {
          ld a = V[k][p], b = V[k][q];
          V[k][p] = c * a - s * b, V[k][q] = s * a + c * b;
        }
      }
  }
}

/* projection of x (t₁, t₂, n) on K_m = {‖t‖ ≤ m n} */
static void cone_proj(ld m, ld *x) {
  ld t = sqrtl(x[0] * x[0] + x[1] * x[1]), n = x[2];
  if (t <= m * n) return;
  if (m * t <= -n) {
    x[0] = x[1] = x[2] = 0.0L;
    return;
  }
  ld a = (m * t + n) / (1.0L + m * m), s = m * a / t;
  x[0] *= s, x[1] *= s, x[2] = a;
}

/* eigen-decomposition of the sub-matrix G[idx, idx]: V, eigenvalues d, and the rank r at a
 * relative tolerance of 1e-12 (columns of V sorted: range first, null space after) */
typedef struct {
  int n, r;
  ld V[MAXN][MAXN], d[MAXN];
} eig;

static void decompose(const double *G, int ng, const int *idx, int n, eig *e) {
  static ld A[MAXN][MAXN];
  ld V[MAXN][MAXN], dmax = 0.0L;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      A[i][j] = G[(size_t)idx[i] * ng + idx[j]];
  jacobi(A, V, n);
  for (int i = 0; i < n; ++i)
    dmax = fmaxl(dmax, fabsl(A[i][i]));
  e->n = n, e->r = 0;
  for (int k = 0; k < n; ++k)
    e->r += A[k][k] > 1e-12L * dmax;
  /* order the columns: range, then null */
  int c = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int k = 0; k < n; ++k) {
      int big = A[k][k] > 1e-12L * dmax;
      if (big != (pass == 0)) continue;
      for (int i = 0; i < n; ++i)
        e->V[i][c] = V[i][k];
      e->d[c++] = A[k][k];
    }
}

/* x ← its orthogonal projection onto span(V[:, from..to)) */
static void subspace_proj(const eig *e, int from, int to, ld *x) {
  ld y[MAXN] = {0}, z[MAXN];
  for (int k = from; k < to; ++k) {
    ld s = 0.0L;
    for (int i = 0; i < e->n; ++i)
      s += e->V[i][k] * x[i];
    z[k] = s;
  }
  for (int k = from; k < to; ++k)
    for (int i = 0; i < e->n; ++i)
      y[i] += e->V[i][k] * z[k];
  memcpy(x, y, (size_t)e->n * sizeof *x);
}

static ld norm(const ld *x, int n) {
  ld s = 0.0L;
  for (int i = 0; i < n; ++i)
    s += x[i] * x[i];
  return sqrtl(s);
}

/* alternating projections between {x ∈ span(V[:, from..to)) : Σ x_N = nc} and the cones
 * K_{m_i}: 1 and x in both (to 1e-13 of its size, then in the cones with the margin of
 * m_i against the caller's cones), 0 when they do not meet within the iteration cap */
static int cone_meets_subspace(const eig *e, int from, int to, const ld *m, ld *x) {
  int n = e->n, nc = n / 3;
  ld a[MAXN] = {0}, pa[MAXN], aa;
  for (int i = 0; i < nc; ++i)
    a[3 * i + 2] = 1.0L;
  memcpy(pa, a, sizeof pa);
  subspace_proj(e, from, to, pa);
  aa = 0.0L;
  for (int i = 0; i < n; ++i)
    aa += pa[i] * a[i];
  if (aa <= 1e-20L) return 0; /* the subspace has no normal component */
  for (int i = 0; i < n; ++i)
    x[i] = pa[i] * nc / aa;
  for (int it = 0; it < 200000; ++it) {
    ld k[MAXN], moved = 0.0L;
    memcpy(k, x, (size_t)n * sizeof *k);
    for (int i = 0; i < nc; ++i)
      cone_proj(m[i], k + 3 * i);
    for (int i = 0; i < n; ++i)
      moved += (k[i] - x[i]) * (k[i] - x[i]);
    if (sqrtl(moved) <= 1e-13L * norm(x, n)) return 1;
    subspace_proj(e, from, to, k);
    ld s = 0.0L;
    for (int i = 0; i < n; ++i)
      s += a[i] * k[i];
    for (int i = 0; i < n; ++i)
      x[i] = k[i] + (nc - s) * pa[i] / aa;
  }
  return 0;
}

/* the smallest relative margin of x in the cones K_{m_i}: min (m_i x_N − ‖x_T‖)/‖x_i‖ */
static ld cone_margin(const ld *x, const ld *m, int nc) {
  ld worst = INFINITY;
  for (int i = 0; i < nc; ++i) {
    const ld *xi = x + 3 * i;
    ld t = sqrtl(xi[0] * xi[0] + xi[1] * xi[1]), len = norm(xi, 3);
    worst = fminl(worst, len > 0.0L ? (m[i] * xi[2] - t) / len : -1.0L);
  }
  return worst;
}

/* part 1 and 2: range of G, strict feasibility or its alternative */
static void feasibility(const mr_contact_problem *p, const double *G) {
  int n = 3 * p->nc, idx[MAXN] = {0};
  static eig e;
  ld g[MAXN] = {0}, x[MAXN] = {0}, m[MAXN / 3] = {0};
  for (int i = 0; i < n; ++i)
    idx[i] = i, g[i] = p->g[i];
  decompose(G, n, idx, n, &e);
  subspace_proj(&e, e.r, n, g);
  printf("  rank(G) %d of %d, eigenvalues %.3Le … %.3Le; |g| %.4g, |g outside range(G)| %.4Lg\n",
         e.r, n, e.d[0], e.d[e.r - 1], mr_norm(p->g, n), norm(g, n));
  /* K* = K_{1/μ}; a witness with 1.05 μ ‖x_T‖ ≤ x_N is strictly inside */
  for (int i = 0; i < p->nc; ++i)
    m[i] = p->mu[i] > 0.0 ? 1.0L / (1.05L * p->mu[i]) : 1e30L;
  if (cone_meets_subspace(&e, 0, e.r, m, x)) {
    for (int i = 0; i < p->nc; ++i)
      m[i] = p->mu[i] > 0.0 ? 1.0L / p->mu[i] : 1e30L;
    ld out[MAXN];
    memcpy(out, x, sizeof out);
    subspace_proj(&e, e.r, n, out);
    printf("  strictly feasible: x ∈ range(G) (part outside %.1Le of |x|) in every int K*, margin"
           " min_i (x_N/μ − ‖x_T‖)/‖x_i‖ = %.3Lf: a solution exists\n",
           norm(out, n) / norm(x, n), cone_margin(x, m, p->nc));
    return;
  }
  for (int i = 0; i < p->nc; ++i)
    m[i] = 0.999L * p->mu[i];
  if (cone_meets_subspace(&e, e.r, n, m, x)) {
    ld s = 0.0L;
    for (int i = 0; i < n; ++i)
      s += x[i] * (ld)p->g[i];
    printf("  not strictly feasible: y ∈ K ∩ null(G) with Σ y_N = %d, ⟨y, g⟩ = %.4Lg\n", p->nc, s);
  } else {
    printf("  neither a strict-feasibility witness nor its alternative found\n");
  }
}

/* c = G λ + g in long double and the NCP criterion ε_abs (criteria.c's definitions) */
static ld criterion_ld(const mr_contact_problem *p, const double *G, const ld *lambda) {
  int n = 3 * p->nc;
  ld worst = 0.0L;
  for (int i = 0; i < p->nc; ++i) {
    ld c[3], s[3], l[3], mu = p->mu[i];
    for (int r = 0; r < 3; ++r) {
      ld v = p->g[3 * i + r];
      for (int j = 0; j < n; ++j)
        v += (ld)G[(size_t)(3 * i + r) * n + j] * lambda[j];
      c[r] = v, l[r] = lambda[3 * i + r];
    }
    s[0] = c[0], s[1] = c[1], s[2] = c[2] + mu * sqrtl(c[0] * c[0] + c[1] * c[1]);
    ld q[3] = {l[0], l[1], l[2]}, d[3] = {s[0], s[1], s[2]};
    cone_proj(mu, q);
    cone_proj(mu > 0.0L ? 1.0L / mu : 1e30L, d);
    ld ep = sqrtl((q[0] - l[0]) * (q[0] - l[0]) + (q[1] - l[1]) * (q[1] - l[1]) +
                  (q[2] - l[2]) * (q[2] - l[2]));
    ld ed = sqrtl((d[0] - s[0]) * (d[0] - s[0]) + (d[1] - s[1]) * (d[1] - s[1]) +
                  (d[2] - s[2]) * (d[2] - s[2]));
    ld ec = fabsl(l[0] * s[0] + l[1] * s[1] + l[2] * s[2]);
    worst = fmaxl(worst, fmaxl(ep, fmaxl(ed, ec)));
  }
  return worst;
}

/* part 3 for one mode (bit i of stick set: contact i sticks): 1 and lambda when found */
static int try_mode(const mr_contact_problem *p, const double *G, unsigned stick, ld *lambda) {
  int n = 3 * p->nc, ns = 0, idx[MAXN];
  static eig e;
  for (int i = 0; i < p->nc; ++i)
    for (int r = 0; r < 3 && (stick >> i & 1); ++r)
      idx[ns++] = 3 * i + r;
  ld lp[MAXN] = {0}, gs[MAXN], m[MAXN / 3];
  memset(lambda, 0, (size_t)n * sizeof *lambda);
  if (ns > 0) {
    decompose(G, n, idx, ns, &e);
    for (int i = 0; i < ns; ++i)
      gs[i] = p->g[idx[i]];
    /* λ_p = −G_SS⁺ g_S, consistent when G_SS λ_p = −g_S to round-off */
    for (int k = 0; k < e.r; ++k) {
      ld s = 0.0L;
      for (int i = 0; i < ns; ++i)
        s += e.V[i][k] * gs[i];
      for (int i = 0; i < ns; ++i)
        lp[i] -= e.V[i][k] * s / e.d[k];
    }
    ld res = 0.0L, size = 0.0L;
    for (int i = 0; i < ns; ++i) {
      ld v = gs[i];
      for (int j = 0; j < ns; ++j)
        v += (ld)G[(size_t)idx[i] * n + idx[j]] * lp[j];
      res += v * v, size += gs[i] * gs[i];
    }
    if (res > 1e-16L * size + 1e-24L) return 0;
  }
  /* the separating contacts' normal velocities, independent of the internal forces */
  for (int i = 0; i < p->nc; ++i) {
    if (stick >> i & 1) continue;
    ld v = p->g[3 * i + 2];
    for (int j = 0; j < ns; ++j)
      v += (ld)G[(size_t)(3 * i + 2) * n + idx[j]] * lp[j];
    if (v < 0.0L) return 0;
  }
  if (ns > 0) {
    /* internal forces: alternating projections between λ_p + span(N) and the shrunk cones */
    ld x[MAXN];
    int nc_s = ns / 3, k = 0;
    for (int i = 0; i < p->nc; ++i)
      if (stick >> i & 1) m[k++] = 0.999L * p->mu[i];
    memcpy(x, lp, sizeof x);
    int found = 0;
    int it = 0;
    for (; it < 100000 && !found; ++it) {
      ld y[MAXN], moved = 0.0L;
      memcpy(y, x, sizeof y);
      for (int i = 0; i < nc_s; ++i)
        cone_proj(m[i], y + 3 * i);
      for (int i = 0; i < ns; ++i)
        moved += (y[i] - x[i]) * (y[i] - x[i]);
      if (sqrtl(moved) <= 1e-15L * norm(x, ns)) found = 1;
      for (int i = 0; i < ns; ++i)
        y[i] -= lp[i];
      subspace_proj(&e, e.r, ns, y);
      for (int i = 0; i < ns; ++i)
        x[i] = lp[i] + y[i];
    }
    if (!found) return 0;
    for (int i = 0; i < nc_s; ++i)
      cone_proj(p->mu[idx[3 * i] / 3], x + 3 * i); /* exactly in K */
    for (int i = 0; i < ns; ++i)
      lambda[idx[i]] = x[i];
  }
  return 1;
}

/* part 3: every stick/separate mode, the best solution found reported */
static void enumerate(const mr_contact_problem *p, const double *G, const char *save) {
  int n = 3 * p->nc, found = 0;
  ld lambda[MAXN], best[MAXN];
  ld best_eps = INFINITY;
  unsigned best_mode = 0;
  for (unsigned mode = 0; mode < 1u << p->nc; ++mode) {
    if (!try_mode(p, G, mode, lambda)) continue;
    ld eps = criterion_ld(p, G, lambda);
    ++found;
    if (eps < best_eps) best_eps = eps, best_mode = mode, memcpy(best, lambda, sizeof best);
  }
  if (!found) {
    printf("  no stick/separate mode of %u has a solution\n", 1u << p->nc);
    return;
  }
  double l[MAXN], c[MAXN], ep, ed, ec;
  ld lmax = 0.0L;
  for (int i = 0; i < n; ++i)
    l[i] = (double)best[i], lmax = fmaxl(lmax, fabsl(best[i]));
  mr_problem_velocity_dot2(p, l, c);
  double eps = mr_problem_criteria(p, l, c, 1, &ep, &ed, &ec);
  printf("  %d of %u stick/separate modes solve it; best: stick set", found, 1u << p->nc);
  for (int i = 0; i < p->nc; ++i)
    if (best_mode >> i & 1) printf(" %d", i);
  printf(", max |λ| %.4Lg; ε_abs %.3Lg in long double, %.3g with λ rounded to double (Dot2)\n",
         lmax, best_eps, eps);
  if (save) {
    mr_error err = {0};
    if (mr_problem_file_save(save, p, l, &err)) fprintf(stderr, "%s\n", err.msg);
  }
}

static void analyse(const char *name, const mr_contact_problem *p, const char *save) {
  int n = 3 * p->nc;
  if (p->nc > MAXN / 3) {
    printf("%s: nc %d above %d, skipped\n", name, p->nc, MAXN / 3);
    return;
  }
  double *G = malloc((size_t)n * n * sizeof *G);
  if (!G) return;
  mr_problem_G_dense(p, G);
  printf("%s: nc %d\n", name, p->nc);
  feasibility(p, G);
  enumerate(p, G, save);
  free(G);
}

/* the problems of the heavy-on-light scene at the corpus's steps */
static int scene_problems(const char *save_dir) {
  static const long steps[] = {123, 164, 205, 246};
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load("scenes/b5_heavy_on_light.yaml", &sc, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  mr_sim *s = mr_sim_from_scene(&sc, NULL, &err);
  if (!s) return fprintf(stderr, "%s\n", err.msg), 1;
  for (long k = 1, next = 0; next < 4; ++k) {
    if (mr_sim_step(s, &err)) return fprintf(stderr, "step %ld: %s\n", k, err.msg), 1;
    if (k != steps[next]) continue;
    char name[64], path[512];
    snprintf(name, sizeof name, "b5_heavy_on_light step %ld", k);
    snprintf(path, sizeof path, "%s/b5_step%ld.json", save_dir ? save_dir : ".", k);
    analyse(name, mr_sim_problem(s), save_dir ? path : NULL);
    ++next;
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
  return 0;
}

int main(int argc, char **argv) {
  const char *save_dir = getenv("NCP_EXISTENCE_SAVE");
  if (argc < 2) return scene_problems(save_dir);
  for (int a = 1; a < argc; ++a) {
    mr_problem_file f;
    mr_error err = {0};
    if (mr_problem_file_load(argv[a], &f, &err)) {
      fprintf(stderr, "%s\n", err.msg);
      return 1;
    }
    char path[512];
    const char *base = strrchr(argv[a], '/');
    snprintf(path, sizeof path, "%s/%s", save_dir ? save_dir : ".", base ? base + 1 : argv[a]);
    analyse(argv[a], &f.problem, save_dir ? path : NULL);
    mr_problem_file_free(&f);
  }
  return 0;
}
