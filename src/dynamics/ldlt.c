/* Tree-sparse factorisation M = U D Uᵀ (U unit upper triangular) of the joint-space inertia
 * matrix (Featherstone, RBDA §6.3). M[i, k] ≠ 0 only when dof i is an ancestor of dof k (or k of
 * i), so the factor has no fill-in. Two forms of the same algorithm:
 *
 * - depth-first numbering (every subtree a contiguous range k+1 … k+nₖ, the URDF order), the
 *   row-oriented form whose inner loops are contiguous dot products and axpys:
 *     D_k = M_kk − Σ_{j ∈ sub(k)} U_kj² D_j,
 *     U_ik = (M_ik − Σ_{j ∈ sub(k)} U_ij D_j U_kj) / D_k   for i = λ(k), λ(λ(k)), …
 * - any topological numbering, the LTDL algorithm written for U = Lᵀ, walking λ chains:
 *     for k = n−1 … 0: for i = λ(k), …: a = M_ik / D_k; M_ji −= a M_jk (j = i, λ(i), …); U_ik = a.
 * Solving M x = y is U z = y (backward), z ← D⁻¹ z, Uᵀ x = z (forward). M and U are in the row
 * storage of moreau/dynamics.h (row i over i's descendants), so every loop touches the tree's
 * entries only: the cost and the memory are Σ per tree, however many trees the model has. */
#include <string.h>

#include "core/lanes.h"
#include "dynamics/internal.h"

/* a · b */
static inline double dot(const double *restrict a, const double *restrict b, int n) {
  double s = 0.0;
  for (int t = 0; t < n; ++t)
    s += a[t] * b[t];
  return s;
}

/* a · b over n rounded up to a multiple of 4 (b zero-padded by the caller, a readable that far)
 * with four partial sums in a fixed order: deterministic, no data-dependent tail loop, not bound
 * by the latency of one chain of additions */
static inline double dot4(const double *restrict a, const double *restrict b, int n) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  for (int t = 0; t < n; t += 4) {
    s0 += a[t] * b[t];
    s1 += a[t + 1] * b[t + 1];
    s2 += a[t + 2] * b[t + 2];
    s3 += a[t + 3] * b[t + 3];
  }
  return (s0 + s1) + (s2 + s3);
}

/* a pivot D_k <= 0: M is not positive definite; name the dof's body and joint */
static mr_status pivot_error(const mr_model *m, mr_error *err, double Dk, int k) {
  const mr_body *b = &m->bodies[m->dof_body[k]];
  return mr_error_set(err, MR_ERR_NUMERIC,
                      "ldlt: pivot %g of dof %d (body '%s', joint '%s' coordinate %d of %d) is not "
                      "positive: the mass matrix is not positive definite",
                      Dk, k, b->name, b->joint.name, k - b->joint.idx_v, b->joint.nv);
}

/* row-oriented factorisation for contiguous subtrees; short rows (fingers, leaves) take plain
 * dot products, long ones the padded four-way products */
static mr_status factor_rows(const mr_model *m, mr_data *d, mr_error *err) {
  const int nv = m->nv;
  const int *restrict par = d->parent_dof;
  double *restrict U = d->U, *restrict tmp = mr_work(d)->tmp;
  const double *restrict M = d->M;
  for (int k = nv - 1; k >= 0; --k) {
    const int nt = d->nvSubtree[k] - 1;
    const double *Uk = U + mr_tri_at(d, k, k + 1);
    for (int t = 0; t < nt; ++t)
      tmp[t] = d->D[k + 1 + t] * Uk[t];
    tmp[nt] = tmp[nt + 1] = tmp[nt + 2] = 0.0;
    const int shortrow = nt < 4;
    double Dk = M[d->row_at[k]] - (shortrow ? dot(Uk, tmp, nt) : dot4(Uk, tmp, nt));
    if (!(Dk > 0.0)) return pivot_error(m, err, Dk, k);
    double Dinv = 1.0 / Dk;
    d->D[k] = Dk, d->Dinv[k] = Dinv;
    if (shortrow)
      for (int i = par[k]; i >= 0; i = par[i])
        U[mr_tri_at(d, i, k)] =
            (M[mr_tri_at(d, i, k)] - dot(U + mr_tri_at(d, i, k + 1), tmp, nt)) * Dinv;
    else
      for (int i = par[k]; i >= 0; i = par[i])
        U[mr_tri_at(d, i, k)] =
            (M[mr_tri_at(d, i, k)] - dot4(U + mr_tri_at(d, i, k + 1), tmp, nt)) * Dinv;
  }
  return MR_OK;
}

/* LTDL along λ chains for any topological numbering */
static mr_status factor_chains(const mr_model *m, mr_data *d, mr_error *err) {
  const int nv = m->nv;
  const int *restrict par = d->parent_dof;
  double *restrict U = d->U;
  const double *restrict M = d->M;
  /* copy the pattern of M's upper triangle */
  for (int k = 0; k < nv; ++k)
    for (int r = k; r >= 0; r = par[r])
      U[mr_tri_at(d, r, k)] = M[mr_tri_at(d, r, k)];
  for (int k = nv - 1; k >= 0; --k) {
    double Dk = U[d->row_at[k]];
    if (!(Dk > 0.0)) return pivot_error(m, err, Dk, k);
    double Dinv = 1.0 / Dk;
    d->D[k] = Dk, d->Dinv[k] = Dinv;
    U[d->row_at[k]] = 1.0;
    for (int i = par[k]; i >= 0; i = par[i]) {
      double a = U[mr_tri_at(d, i, k)] * Dinv;
      for (int j = i; j >= 0; j = par[j])
        U[mr_tri_at(d, j, i)] -= a * U[mr_tri_at(d, j, k)];
      U[mr_tri_at(d, i, k)] = a;
    }
  }
  return MR_OK;
}

mr_status mr_ldlt_factor(const mr_model *m, mr_data *d, mr_error *err) {
  return mr_work(d)->contiguous ? factor_rows(m, d, err) : factor_chains(m, d, err);
}

/* x ← U⁻¹ x */
static void solve_u(const mr_data *d, int nv, double *restrict x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  if (mr_work(d)->contiguous) {
    for (int k = nv - 2; k >= 0; --k)
      x[k] -= dot(U + d->row_at[k] + 1, x + k + 1, d->nvSubtree[k] - 1);
    return;
  }
  for (int k = nv - 1; k >= 0; --k) {
    double xk = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      x[i] -= U[mr_tri_at(d, i, k)] * xk;
  }
}

/* x ← U⁻ᵀ x */
static void solve_ut(const mr_data *d, int nv, double *restrict x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  if (mr_work(d)->contiguous) {
    for (int k = 0; k < nv - 1; ++k) {
      const double xk = x[k], *Uk = U + d->row_at[k] + 1;
      double *xs = x + k + 1;
      for (int t = 0; t < d->nvSubtree[k] - 1; ++t)
        xs[t] -= xk * Uk[t];
    }
    return;
  }
  for (int k = 0; k < nv; ++k) {
    double s = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      s -= U[mr_tri_at(d, i, k)] * x[i];
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

/* x ← U⁻¹ x over the listed dofs */
static void solve_u_dofs(const mr_model *m, const mr_data *d, const int *dofs, int n, double *x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  const int contiguous = mr_work(d)->contiguous;
  /* each dof's subtree (contiguous form) or its λ chain lies within the set */
  for (int t = n - 1; t >= 0; --t) {
    int k = dofs[t];
    if (contiguous) {
      x[k] -= dot(U + d->row_at[k] + 1, x + k + 1, d->nvSubtree[k] - 1);
      continue;
    }
    double xk = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      x[i] -= U[mr_tri_at(d, i, k)] * xk;
  }
}

void mr_ldlt_solve_dofs_dut(const mr_model *m, const mr_data *d, const int *dofs, int n,
                            double *x) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  const int contiguous = mr_work(d)->contiguous;
  for (int t = 0; t < n; ++t)
    x[dofs[t]] *= d->Dinv[dofs[t]];
  /* x ← U⁻ᵀ x */
  for (int t = 0; t < n; ++t) {
    int k = dofs[t];
    if (contiguous) {
      const double xk = x[k], *Uk = U + d->row_at[k] + 1;
      double *xs = x + k + 1;
      for (int r = 0; r < d->nvSubtree[k] - 1; ++r)
        xs[r] -= xk * Uk[r];
      continue;
    }
    double s = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      s -= U[mr_tri_at(d, i, k)] * x[i];
    x[k] = s;
  }
}

void mr_ldlt_solve_dofs(const mr_model *m, const mr_data *d, const int *dofs, int n, double *x) {
  solve_u_dofs(m, d, dofs, n, x);
  mr_ldlt_solve_dofs_dut(m, d, dofs, n, x);
}

/* the four doubles of x4 at dof k into v, and back (through pointers: a 32-byte vector passed
 * or returned by value changes the call's ABI between targets) */
static inline void load4(lanes4 *v, const double *x4, int k) {
  memcpy(v, x4 + 4 * (size_t)k, sizeof *v);
}

static inline void store4(double *x4, int k, const lanes4 *v) {
  memcpy(x4 + 4 * (size_t)k, v, sizeof *v);
}

void mr_ldlt_solve_dofs4(const mr_model *m, const mr_data *d, const int *dofs, int n, double *x4) {
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  const int contiguous = mr_work(d)->contiguous;
  lanes4 xk, xi;
  /* x ← U⁻¹ x (solve_u_dofs) */
  for (int t = n - 1; t >= 0; --t) {
    int k = dofs[t];
    if (contiguous) {
      const double *a = U + d->row_at[k] + 1;
      lanes4 s = LANES(0.0);
      for (int j = 0; j < d->nvSubtree[k] - 1; ++j) {
        load4(&xi, x4, k + 1 + j);
        s += LANES(a[j]) * xi;
      }
      load4(&xk, x4, k);
      xk -= s;
      store4(x4, k, &xk);
      continue;
    }
    load4(&xk, x4, k);
    for (int i = par[k]; i >= 0; i = par[i]) {
      load4(&xi, x4, i);
      xi -= LANES(U[mr_tri_at(d, i, k)]) * xk;
      store4(x4, i, &xi);
    }
  }
  /* x ← U⁻ᵀ D⁻¹ x (mr_ldlt_solve_dofs_dut) */
  for (int t = 0; t < n; ++t) {
    load4(&xk, x4, dofs[t]);
    xk *= LANES(d->Dinv[dofs[t]]);
    store4(x4, dofs[t], &xk);
  }
  for (int t = 0; t < n; ++t) {
    int k = dofs[t];
    load4(&xk, x4, k);
    if (contiguous) {
      const double *Uk = U + d->row_at[k] + 1;
      for (int r = 0; r < d->nvSubtree[k] - 1; ++r) {
        load4(&xi, x4, k + 1 + r);
        xi -= xk * LANES(Uk[r]);
        store4(x4, k + 1 + r, &xi);
      }
      continue;
    }
    for (int i = par[k]; i >= 0; i = par[i]) {
      load4(&xi, x4, i);
      xk -= LANES(U[mr_tri_at(d, i, k)]) * xi;
    }
    store4(x4, k, &xk);
  }
}

void mr_ldlt_mul(const mr_model *m, const mr_data *d, const double *x, double *y) {
  const int nv = m->nv;
  const int *restrict par = d->parent_dof;
  const double *restrict U = d->U;
  /* y = D Uᵀ x */
  for (int k = nv - 1; k >= 0; --k) {
    double s = x[k];
    for (int i = par[k]; i >= 0; i = par[i])
      s += U[mr_tri_at(d, i, k)] * x[i];
    y[k] = d->D[k] * s;
  }
  /* y ← U y, ascending so that each y_k is final before it is spread to its ancestors */
  for (int k = 0; k < nv; ++k) {
    double yk = y[k];
    for (int i = par[k]; i >= 0; i = par[i])
      y[i] += U[mr_tri_at(d, i, k)] * yk;
  }
}
