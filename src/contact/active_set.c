/* Contact modes and the active-set system (active_set.h). */
#include "contact/active_set.h"

#include <float.h>
#include <math.h>

#include "core/linalg.h"

mr_contact_mode mr_contact_mode_natural(const mr_contact_problem *p, int i, const double *lambda,
                                        const double *c, double h, double dir[2]) {
  const double *li = lambda + 3 * i, *ci = c + 3 * i;
  double mu = p->mu[i], ct = hypot(ci[0], ci[1]);
  double x0 = li[0] - h * ci[0], x1 = li[1] - h * ci[1], x2 = li[2] - h * (ci[2] + mu * ct);
  double xt = hypot(x0, x1);
  dir[0] = dir[1] = 0.0;
  if (mr_problem_bilateral(p, i)) return MR_CONTACT_STICKING;
  if (mu * xt <= -x2 || (mu == 0.0 && x2 <= 0.0)) return MR_CONTACT_SEPARATED;
  if (mu == 0.0) return MR_CONTACT_SLIDING;
  if (xt < mu * x2) return MR_CONTACT_STICKING;
  dir[0] = x0 / xt, dir[1] = x1 / xt;
  return MR_CONTACT_SLIDING;
}

mr_contact_mode mr_contact_mode_of_force(const mr_contact_problem *p, int i, const double *lambda) {
  const double *li = lambda + 3 * i;
  if (mr_problem_bilateral(p, i)) return MR_CONTACT_STICKING;
  if (li[0] == 0.0 && li[1] == 0.0 && li[2] == 0.0) return MR_CONTACT_SEPARATED;
  double mu = p->mu[i];
  if (mu == 0.0 || hypot(li[0], li[1]) >= mu * li[2] * (1.0 - 1e-12)) return MR_CONTACT_SLIDING;
  return MR_CONTACT_STICKING;
}

mr_contact_mode mr_contact_mode_at(const mr_contact_problem *p, int i, const double *lambda,
                                   const double *c, double tol) {
  if (mr_problem_bilateral(p, i)) return MR_CONTACT_STICKING;
  const double *l = lambda + 3 * i, *ci = c + 3 * i;
  if (!(l[2] > tol)) return MR_CONTACT_SEPARATED;
  if (hypot(ci[0], ci[1]) > tol || p->mu[i] == 0.0) return MR_CONTACT_SLIDING;
  return MR_CONTACT_STICKING;
}

/* (G + R)[r, col] */
static double delassus(const mr_contact_problem *p, int r, int col) {
  const int n = 3 * p->nc;
  double gij, B[9];
  if (p->G) {
    gij = p->G[r * n + col];
  } else { /* block-sparse */
    mr_problem_G_block(p, r / 3, col / 3, B);
    gij = B[3 * (r % 3) + col % 3];
  }
  return gij + (p->R && r == col ? p->R[r] : 0.0);
}

/* rows 3i .. 3i + 2 of A and B for contact i in its mode */
static void contact_rows(const mr_contact_problem *p, int i, int mode, const double *lambda,
                         const double *c, double *A, double *B) {
  const int n = 3 * p->nc, r0 = 3 * i;
  for (int r = r0; r < r0 + 3; ++r)
    for (int col = 0; col < n; ++col)
      A[r * n + col] = B[r * n + col] = 0.0;
  if (mode == MR_CONTACT_SEPARATED) {
    for (int r = r0; r < r0 + 3; ++r)
      A[r * n + r] = 1.0;
    return;
  }
  /* the rows of dc = (G + R) dλ + dg that hold as equations: all three when sticking, the
   * normal one when sliding */
  for (int r = mode == MR_CONTACT_STICKING ? r0 : r0 + 2; r < r0 + 3; ++r) {
    for (int col = 0; col < n; ++col)
      A[r * n + col] = delassus(p, r, col);
    B[r * n + r] = -1.0;
  }
  if (mode == MR_CONTACT_STICKING) return;
  /* sliding: dλ_T + μ ĉ dλ_N + k P ((G + R) dλ)_T = −k P dg_T, k = μ λ_N / ‖c_T‖ */
  const double mu = p->mu[i], ct = hypot(c[r0], c[r0 + 1]);
  const double u[2] = {ct > 0.0 ? c[r0] / ct : 0.0, ct > 0.0 ? c[r0 + 1] / ct : 0.0};
  const double k = ct > 0.0 ? mu * lambda[r0 + 2] / ct : 0.0;
  for (int a = 0; a < 2; ++a) {
    const int r = r0 + a;
    A[r * n + r] = 1.0;
    A[r * n + r0 + 2] += mu * u[a];
    for (int b = 0; b < 2; ++b) {
      const double P = (a == b ? 1.0 : 0.0) - u[a] * u[b];
      if (P == 0.0 || k == 0.0) continue;
      for (int col = 0; col < n; ++col)
        A[r * n + col] += k * P * delassus(p, r0 + b, col);
      B[r * n + r0 + b] -= k * P;
    }
  }
}

/* the rows of A and B for every contact in its mode (into modes, may be NULL) */
void mr_contact_active_set(const mr_contact_problem *p, const double *lambda, const double *c,
                           double tol, double *A, double *B, int *modes) {
  for (int i = 0; i < p->nc; ++i) {
    const int mode = mr_contact_mode_at(p, i, lambda, c, tol);
    if (modes) modes[i] = mode;
    contact_rows(p, i, mode, lambda, c, A, B);
  }
}

/* LU of the n x n A in place (mr_lu_factor); -1 when A is singular: a zero pivot, or one at the
 * rounding of A's entries (16 n ε max|A|, measured before the factorisation) */
int mr_active_set_factor(double *A, int n, int *piv) {
  double amax = 0.0;
  for (int i = 0; i < n * n; ++i)
    amax = fmax(amax, fabs(A[i]));
  if (mr_lu_factor(A, n, piv)) return -1;
  const double small = 16.0 * n * DBL_EPSILON * amax;
  for (int k = 0; k < n; ++k)
    if (!(fabs(A[k * n + k]) > small)) return -1;
  return 0;
}

/* X ← A⁻¹ X for the n x n row-major X, column by column (col: n scratch) */
void mr_active_set_solve(const double *LU, int n, const int *piv, double *X, int ncols,
                         double *col) {
  for (int k = 0; k < ncols; ++k) {
    for (int r = 0; r < n; ++r)
      col[r] = X[r * ncols + k];
    mr_lu_solve(LU, n, piv, col);
    for (int r = 0; r < n; ++r)
      X[r * ncols + k] = col[r];
  }
}
