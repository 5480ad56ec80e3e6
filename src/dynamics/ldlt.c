/* Tree-sparse factorisation M = U D Uᵀ (U unit upper triangular) of the joint-space inertia
 * matrix (Featherstone, RBDA §6.3, the LTDL algorithm written for U = Lᵀ). Because M[i, k] ≠ 0
 * only when dof i is an ancestor of dof k (or k of i), every loop walks the parent-of-dof chain
 * λ and the factor has no fill-in:
 *   for k = n−1 … 0:  D_k = M_kk;  for i = λ(k), λ(λ(k)), …:
 *       a = M_ik / D_k;  M_ji −= a M_jk for j = i, λ(i), …;  U_ik = a.
 * Solving M x = y is U z = y (backward), z ← D⁻¹ z, Uᵀ x = z (forward), all along λ. */
#include "dynamics/internal.h"

mr_status mr_ldlt_factor(const mr_model *m, mr_data *d, mr_error *err) {
  const int nv = m->nv;
  const int *restrict par = d->parent_dof;
  double *restrict U = d->U;
  const double *restrict M = d->M;
  /* copy the pattern of M's upper triangle */
  for (int k = 0; k < nv; ++k)
    for (int r = k; r >= 0; r = par[r])
      U[r * nv + k] = M[r * nv + k];
  for (int k = nv - 1; k >= 0; --k) {
    double Dk = U[k * nv + k];
    if (!(Dk > 0.0))
      return mr_error_set(err, MR_ERR_NUMERIC, "ldlt: pivot %g of dof %d is not positive", Dk, k);
    double Dinv = 1.0 / Dk;
    d->D[k] = Dk, d->Dinv[k] = Dinv;
    U[k * nv + k] = 1.0;
    for (int i = par[k]; i >= 0; i = par[i]) {
      double Uik = U[i * nv + k], a = Uik * Dinv;
      for (int j = i; j >= 0; j = par[j])
        U[j * nv + i] -= a * U[j * nv + k];
      U[i * nv + k] = a;
    }
  }
  return MR_OK;
}

/* x ← U⁻¹ x (backward, column by column along λ) */
static void solve_u(const mr_data *d, int nv, double *restrict x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  for (int k = nv - 1; k >= 0; --k) {
    double xk = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      x[i] -= U[i * nv + k] * xk;
  }
}

/* x ← U⁻ᵀ x (forward, row by row along λ) */
static void solve_ut(const mr_data *d, int nv, double *restrict x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  for (int k = 0; k < nv; ++k) {
    double s = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      s -= U[i * nv + k] * x[i];
    x[k] = s;
  }
}

void mr_ldlt_solve(const mr_model *m, const mr_data *d, double *x) {
  const int nv = m->nv;
  solve_u(d, nv, x);
  for (int k = 0; k < nv; ++k)
    x[k] *= d->Dinv[k];
  solve_ut(d, nv, x);
}

void mr_ldlt_mul(const mr_model *m, const mr_data *d, const double *x, double *y) {
  const int nv = m->nv;
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  /* y = D Uᵀ x */
  for (int k = nv - 1; k >= 0; --k) {
    double s = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      s += U[i * nv + k] * x[i];
    y[k] = d->D[k] * s;
  }
  /* y ← U y, ascending so that each y_k is final before it is spread to its ancestors */
  for (int k = 0; k < nv; ++k) {
    double yk = y[k];
    for (int i = par[k]; i >= 0; i = par[i])
      y[i] += U[i * nv + k] * yk;
  }
}
