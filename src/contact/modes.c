/* ncp-hybrid's stage 5b: a search over the contacts' stick/separate modes (docs/solvers.md,
 * "The crushed stack: solutions exist, and the mode search").
 *
 * With S the sticking contacts (and every bilateral constraint) and F the separated ones, a
 * solution of the NCP with no sliding contact is λ_F = 0 and
 *   (G + R)_SS λ_S = −g_S,   λ⁽ⁱ⁾ ∈ K_μ (i ∈ S),   c_F,N = ((G + R)_FS λ_S + g_F)_N ≥ 0.
 * The pivoted Cholesky (G + R)_SS[p, p] = L Lᵀ of rank r gives a particular solution λ_p on
 * the r pivots and the null space Z = Π [−L₁₁⁻ᵀ L₂₁ᵀ; I] (internal forces, null(J_Sᵀ) for a
 * rigid problem). For R = 0, (G)_FS Z = J_F M⁻¹ J_Sᵀ Z = 0, so c_F does not depend on the
 * internal forces and is checked at λ_p; the internal forces are then searched by alternating
 * projections between the affine set λ_p + range(Z) (Z orthonormalised) and the cones shrunk
 * to 0.999 μ, which meet exactly when such forces exist. Modes are tried with the fewest
 * separated contacts first, at most MR_MODES_MAX_TRIED of them; the first that passes gives
 * the point returned. It is what the cascade's stages miss on a crushed stack whose 1000 kg box
 * must be stopped through a 1 g one by forces of 10⁵ N (directions of G 10⁸ times slower than
 * the others for first-order methods) while one floor corner has to separate (so that the
 * all-sticking Newton system is inconsistent): the mode fixes which contact lifts, and the
 * Newton stages finish from its point. Cost per mode: the factor, (3|S|)³/3 flops, and the
 * projections, 3|S| · dim Z flops each. Known limits: sliding modes are not searched (a problem
 * whose solution slides is left to the other stages); the search is exponential, so it stops
 * after MR_MODES_MAX_TRIED modes and skips problems above MR_MODES_MAX_NC contacts; sticking
 * forces that must lie exactly on a cone's boundary fail the shrunk cones. */
#include "contact/modes.h"

#include <math.h>
#include <string.h>

#include "contact/consistency.h"
#include "core/arena.h"
#include "core/linalg.h"

/* scratch of one mode, S-indexed */
typedef struct {
  int n, ns, r, d;    /* rows of the problem, of S, rank of the factor, internal forces */
  int *idx, *perm;    /* S's rows in the problem; the factor's pivots */
  double *S;          /* (G + R)_SS and its factor, ns x ns */
  double *Z;          /* orthonormal internal forces, ns x d (column stride ns) */
  double *lp, *x, *y; /* particular solution, iterate, trial (ns) */
} mode_ws;

static int sticks(const mr_contact_problem *p, unsigned sep, int i) {
  return mr_problem_bilateral(p, i) || !(sep >> i & 1);
}

/* (G + R)_SS from the dense A, S the contacts not in sep */
static void stick_system(const mr_contact_problem *p, const double *A, unsigned sep, mode_ws *m) {
  m->ns = 0;
  for (int i = 0; i < p->nc; ++i)
    for (int k = 0; k < 3 && sticks(p, sep, i); ++k)
      m->idx[m->ns++] = 3 * i + k;
  for (int a = 0; a < m->ns; ++a)
    for (int b = 0; b < m->ns; ++b)
      m->S[(size_t)a * m->ns + b] = A[(size_t)m->idx[a] * m->n + m->idx[b]];
}

/* λ_p on the r pivots from the factor; 1 when (G + R)_SS λ_p = −g_S to 1e-8 of |g_S| */
static int particular(const mr_contact_problem *p, const double *A, mode_ws *m) {
  int ns = m->ns, r = m->r;
  double *y = m->y;
  for (int k = 0; k < r; ++k)
    y[k] = -p->g[m->idx[m->perm[k]]];
  mr_pivoted_cholesky_solve(m->S, m->ns, m->r, y);
  mr_zero(m->lp, ns);
  for (int k = 0; k < r; ++k)
    m->lp[m->perm[k]] = y[k];
  double res = 0.0, size = 0.0;
  for (int a = 0; a < ns; ++a) {
    double v = p->g[m->idx[a]];
    for (int b = 0; b < ns; ++b)
      v += A[(size_t)m->idx[a] * m->n + m->idx[b]] * m->lp[b];
    res += v * v, size += p->g[m->idx[a]] * p->g[m->idx[a]];
  }
  return res <= 1e-16 * size;
}

/* 1 when every separated contact's c_N at λ_p is ≥ 0 (to 1e-8 of |g|) */
static int separating(const mr_contact_problem *p, const double *A, unsigned sep,
                      const mode_ws *m) {
  double tol = 1e-8 * mr_norm(p->g, m->n);
  for (int i = 0; i < p->nc; ++i) {
    if (sticks(p, sep, i)) continue;
    double v = p->g[3 * i + 2];
    for (int b = 0; b < m->ns; ++b)
      v += A[(size_t)(3 * i + 2) * m->n + m->idx[b]] * m->lp[b];
    if (v < -tol) return 0;
  }
  return 1;
}

/* Z: the null space of the factor's matrix, columns orthonormalised (Gram-Schmidt twice) */
static void internal_forces(mode_ws *m) {
  int ns = m->ns, r = m->r;
  const double *L = m->S;
  m->d = 0;
  for (int j = r; j < ns; ++j) {
    double *z = m->Z + (size_t)m->d * ns, *w = m->y;
    /* w = L₁₁⁻ᵀ (row j of L₂₁) */
    for (int k = r - 1; k >= 0; --k) {
      w[k] = L[(size_t)j * ns + k];
      for (int l = k + 1; l < r; ++l)
        w[k] -= L[(size_t)l * ns + k] * w[l];
      w[k] /= L[(size_t)k * ns + k];
    }
    mr_zero(z, ns);
    z[m->perm[j]] = 1.0;
    for (int k = 0; k < r; ++k)
      z[m->perm[k]] = -w[k];
    double before = mr_norm(z, ns);
    for (int pass = 0; pass < 2; ++pass)
      for (int q = 0; q < m->d; ++q)
        mr_axpy(z, -mr_dot(z, m->Z + (size_t)q * ns, ns), m->Z + (size_t)q * ns, ns);
    double after = mr_norm(z, ns);
    if (!(after > 1e-8 * before)) continue;
    mr_scale(z, 1.0 / after, ns);
    ++m->d;
  }
}

/* each sticking contact's block of v projected on its cone K_{scale μ} */
static void cones(const mr_contact_problem *p, const mode_ws *m, double scale, double *v) {
  for (int a = 0; a < m->ns; a += 3) {
    int i = m->idx[a] / 3;
    if (!mr_problem_bilateral(p, i)) mr_cone_project(scale * p->mu[i], v + a, v + a);
  }
}

/* alternating projections from λ_p: 1 and x (in the cones) when the affine set meets them */
static int place(const mr_contact_problem *p, mode_ws *m) {
  int ns = m->ns;
  mr_copy(m->x, m->lp, ns);
  for (int it = 0; it < MR_MODES_POCS; ++it) {
    mr_copy(m->y, m->x, ns);
    cones(p, m, 0.999, m->y);
    double moved = 0.0;
    for (int a = 0; a < ns; ++a)
      moved = fmax(moved, fabs(m->y[a] - m->x[a]));
    if (moved <= 1e-12 * mr_norm_inf(m->x, ns)) {
      cones(p, m, 1.0, m->x);
      return 1;
    }
    /* x = λ_p + Z Zᵀ (y − λ_p) */
    mr_axpy(m->y, -1.0, m->lp, ns);
    mr_copy(m->x, m->lp, ns);
    for (int q = 0; q < m->d; ++q) {
      const double *z = m->Z + (size_t)q * ns;
      mr_axpy(m->x, mr_dot(z, m->y, ns), z, ns);
    }
  }
  return 0;
}

/* iterative refinement of the sticking equations at λ (c scratch): the particular solution
 * of an ill-conditioned (G + R)_SS (a mass ratio of 10⁶: condition 10⁸) leaves c_S at about
 * cond · u · |G| |λ|; corrections from the same factor against the Dot2 residual remove it */
static void refine(const mr_contact_problem *p, const mode_ws *m, double *lambda, double *c) {
  for (int it = 0; it < MR_MODES_REFINE; ++it) {
    mr_problem_velocity_dot2(p, lambda, c);
    for (int k = 0; k < m->r; ++k)
      m->y[k] = c[m->idx[m->perm[k]]];
    mr_pivoted_cholesky_solve(m->S, m->ns, m->r, m->y);
    for (int k = 0; k < m->r; ++k)
      lambda[m->idx[m->perm[k]]] -= m->y[k];
  }
}

/* one mode (sep: the separated contacts): 1 and λ (the problem's n entries) when it solves */
static int try_mode(const mr_contact_problem *p, const double *A, unsigned sep, mode_ws *m,
                    double *lambda, double *c) {
  stick_system(p, A, sep, m);
  m->r = m->ns ? mr_pivoted_cholesky(m->S, m->ns, m->perm, MR_CONSISTENCY_TOL) : 0;
  if (m->ns && !particular(p, A, m)) return 0;
  if (!separating(p, A, sep, m)) return 0;
  internal_forces(m);
  if (m->ns && !place(p, m)) return 0;
  mr_zero(lambda, m->n);
  for (int a = 0; a < m->ns; ++a)
    lambda[m->idx[a]] = m->x[a];
  refine(p, m, lambda, c);
  return 1;
}

/* the modes that separate no bilateral constraint, fewest separated first: the next after
 * *sep (k separated), 0 when none is left */
static int next_mode(const mr_contact_problem *p, unsigned *sep, int *k) {
  unsigned all = 1u << p->nc, bil = 0;
  for (int i = 0; i < p->nc; ++i)
    if (mr_problem_bilateral(p, i)) bil |= 1u << i;
  for (unsigned s = *sep + 1;; ++s) {
    if (s >= all) {
      if (++*k > p->nc) return 0;
      s = 0;
    }
    if (!(s & bil) && __builtin_popcount(s) == *k) {
      *sep = s;
      return 1;
    }
  }
}

int mr_contact_modes(const mr_contact_problem *p, double eps_abs, double eps_scale, double *A,
                     double *F, mr_arena *work, double *lambda, double *c, double *e) {
  int n = 3 * p->nc;
  if (p->nc == 0 || p->nc > MR_MODES_MAX_NC || !A || !F) return 0;
  size_t mark = mr_arena_mark(work);
  mode_ws m = {.n = n, .S = F};
  m.Z = mr_arena_doubles(work, (size_t)n * n);
  m.lp = mr_arena_doubles(work, (size_t)n);
  m.x = mr_arena_doubles(work, (size_t)n);
  m.y = mr_arena_doubles(work, (size_t)n);
  m.idx = (int *)mr_arena_doubles(work, (size_t)n);
  m.perm = (int *)mr_arena_doubles(work, (size_t)n);
  double *cand = mr_arena_doubles(work, (size_t)n), *cc = mr_arena_doubles(work, (size_t)n);
  int replaced = 0;
  if (m.Z && m.lp && m.x && m.y && m.idx && m.perm && cand && cc) {
    mr_problem_G_dense(p, A);
    for (int k = 0; k < n && p->R; ++k)
      A[(size_t)k * n + k] += p->R[k];
    unsigned sep = 0;
    int k = 0, found = 0;
    /* the first mode that solves, tried from all sticking on */
    for (int t = 0, more = 1; more && !found && t < MR_MODES_MAX_TRIED; ++t)
      if (!(found = try_mode(p, A, sep, &m, cand, cc))) more = next_mode(p, &sep, &k);
    if (found) {
      mr_problem_velocity_dot2(p, cand, cc);
      double ec = mr_problem_criteria_scaled(p, cand, cc, eps_abs, eps_scale, NULL, NULL, NULL);
      if (ec < *e) mr_copy(lambda, cand, n), mr_copy(c, cc, n), *e = ec, replaced = 1;
    }
  }
  mr_arena_reset(work, mark);
  return replaced;
}
