/* Articulated-body algorithm in the world frame (Featherstone, RBDA Table 7.1, with every
 * spatial quantity expressed at the world origin as in Pinocchio, so that articulated inertias
 * are summed without frame changes):
 *   pass 1:  vᵢ = v_λ + Sᵢ q̇ᵢ,  cᵢ = vᵢ × Sᵢ q̇ᵢ,  Iᴬᵢ = Iᵢ,  pᴬᵢ = vᵢ ×* Iᵢ vᵢ − fᵢᵉˣᵗ
 *   pass 2 (leaves to root):  Uᵢ = Iᴬᵢ Sᵢ,  Dᵢ = Sᵢᵀ Uᵢ + armature,  uᵢ = τᵢ − Sᵢᵀ pᴬᵢ,
 *            Iᵃ = Iᴬᵢ − Uᵢ Dᵢ⁻¹ Uᵢᵀ,  pᵃ = pᴬᵢ + Iᵃ cᵢ + Uᵢ Dᵢ⁻¹ uᵢ,
 *            Iᴬ_λ += Iᵃ,  pᴬ_λ += pᵃ
 *   pass 3 (root to leaves):  a′ = a_λ + cᵢ,  q̈ᵢ = Dᵢ⁻¹ (uᵢ − Uᵢᵀ a′),  aᵢ = a′ + Sᵢ q̈ᵢ,
 * with a₀ = (−g, 0). One-dof joints take a scalar path; multi-dof joints (spherical, free) invert
 * their Dᵢ by a small Cholesky factorisation. */
#include "dynamics/internal.h"

/* y = A x for a 6x6 row-major A and a motion x, as a force */
static inline mr_force mat6_mul(const double *restrict A, mr_motion x) {
  const double xs[6] = {x.v.v[0], x.v.v[1], x.v.v[2], x.w.v[0], x.w.v[1], x.w.v[2]};
  double y[6];
  for (int r = 0; r < 6; ++r) {
    const double *a = A + 6 * r;
    y[r] = a[0] * xs[0] + a[1] * xs[1] + a[2] * xs[2] + a[3] * xs[3] + a[4] * xs[4] + a[5] * xs[5];
  }
  mr_force f = {{{y[0], y[1], y[2]}}, {{y[3], y[4], y[5]}}};
  return f;
}

static inline void force_array(mr_force f, double *y) {
  y[0] = f.f.v[0], y[1] = f.f.v[1], y[2] = f.f.v[2];
  y[3] = f.n.v[0], y[4] = f.n.v[1], y[5] = f.n.v[2];
}

/* pass 1: velocities, bias accelerations, inertias and bias forces in the world frame */
static void pass1(const mr_model *m, mr_data *d, const double *v) {
  mr_dyn_work *w = mr_work(d);
  w->ov[0] = mr_motion_zero();
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_body *b = &m->bodies[i];
    const mr_joint *j = &b->joint;
    mr_motion vj = mr_joint_motion(w->oS + j->idx_v, v + j->idx_v, j->nv);
    mr_motion vi = mr_motion_add(w->ov[b->parent], vj);
    w->ov[i] = vi;
    w->oc[i] = mr_motion_cross(vi, vj);
    mr_force p = mr_motion_cross_force(vi, mr_oinertia_mul(&w->oY[i], vi));
    p = mr_force_sub(p, mr_se3_act_force(&d->oMi[i], d->f_ext[i]));
    w->opA[i] = p;
    mr_oinertia_matrix(&w->oY[i], w->Ia + 36 * i);
  }
}

/* in-place inverse of a small SPD matrix (n <= 6) by Cholesky; 0 on success */
static int spd_inverse(double *A, int n) {
  double L[36] = {0}, X[36];
  for (int c = 0; c < n; ++c) {
    double s = A[c * n + c];
    for (int k = 0; k < c; ++k)
      s -= L[c * 6 + k] * L[c * 6 + k];
    if (!(s > 0.0)) return -1;
    L[c * 6 + c] = sqrt(s);
    for (int r = c + 1; r < n; ++r) {
      double t = A[r * n + c];
      for (int k = 0; k < c; ++k)
        t -= L[r * 6 + k] * L[c * 6 + k];
      L[r * 6 + c] = t / L[c * 6 + c];
    }
  }
  /* columns of A⁻¹: L Lᵀ x = e_c */
  for (int c = 0; c < n; ++c) {
    double y[6];
    for (int r = 0; r < n; ++r) {
      double t = r == c ? 1.0 : 0.0;
      for (int k = 0; k < r; ++k)
        t -= L[r * 6 + k] * y[k];
      y[r] = t / L[r * 6 + r];
    }
    for (int r = n - 1; r >= 0; --r) {
      double t = y[r];
      for (int k = r + 1; k < n; ++k)
        t -= L[k * 6 + r] * X[k * 6 + c];
      X[r * 6 + c] = t / L[r * 6 + r];
    }
  }
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      A[r * n + c] = X[r * 6 + c];
  return 0;
}

/* Iᴬ −= U Dinv Uᵀ for a one-dof joint (U a 6-vector) */
static inline void rank1_down(double *restrict Ia, const double *restrict U, double Dinv) {
  for (int r = 0; r < 6; ++r) {
    double ur = U[r] * Dinv;
    for (int c = 0; c < 6; ++c)
      Ia[6 * r + c] -= ur * U[c];
  }
}

/* pass 2 for body i: U, D⁻¹, u, and the articulated terms handed to the parent; returns 1
 * when the joint is singular */
static int pass2_body(const mr_model *m, mr_data *d, int i, const double *tau) {
  mr_dyn_work *w = mr_work(d);
  const mr_body *b = &m->bodies[i];
  const int iv = b->joint.idx_v, n = b->joint.nv;
  double *restrict Ia = w->Ia + 36 * i, *restrict Dinv = w->Dab + 36 * i;
  double U[6][6], u[6];
  for (int k = 0; k < n; ++k) {
    mr_force Uk = mat6_mul(Ia, w->oS[iv + k]);
    w->F[iv + k] = Uk;
    force_array(Uk, U[k]);
    u[k] = tau[iv + k] - mr_force_dot(w->opA[i], w->oS[iv + k]);
    for (int l = 0; l <= k; ++l)
      Dinv[k * n + l] = Dinv[l * n + k] = mr_force_dot(Uk, w->oS[iv + l]);
    Dinv[k * n + k] += m->armature[iv + k];
  }
  /* a singular joint is counted and poisons q̈ with NaN rather than with garbage */
  int singular = n == 1 ? !(Dinv[0] > 0.0) : spd_inverse(Dinv, n) != 0;
  if (singular) {
    for (int k = 0; k < n * n; ++k)
      Dinv[k] = NAN;
  } else if (n == 1) {
    Dinv[0] = 1.0 / Dinv[0];
  }
  for (int k = 0; k < n; ++k) {
    double s = 0.0;
    for (int l = 0; l < n; ++l)
      s += Dinv[k * n + l] * u[l];
    w->u[iv + k] = s;
  }
  if (b->parent <= 0) return singular;
  /* Iᵃ = Iᴬ − U D⁻¹ Uᵀ */
  if (n == 1)
    rank1_down(Ia, U[0], Dinv[0]);
  else
    for (int k = 0; k < n; ++k)
      for (int l = 0; l < n; ++l) {
        double dkl = Dinv[k * n + l];
        for (int r = 0; r < 6; ++r)
          for (int c = 0; c < 6; ++c)
            Ia[6 * r + c] -= U[k][r] * dkl * U[l][c];
      }
  /* pᵃ = pᴬ + Iᵃ c + U D⁻¹ u */
  mr_force pa = mr_force_add(w->opA[i], mat6_mul(Ia, w->oc[i]));
  for (int k = 0; k < n; ++k)
    pa = mr_force_add(pa, mr_force_scale(w->F[iv + k], w->u[iv + k]));
  double *restrict Ip = w->Ia + 36 * b->parent;
  for (int r = 0; r < 36; ++r)
    Ip[r] += Ia[r];
  w->opA[b->parent] = mr_force_add(w->opA[b->parent], pa);
  return singular;
}

/* pass 3 for body i */
static void pass3_body(const mr_model *m, mr_data *d, int i) {
  mr_dyn_work *w = mr_work(d);
  const mr_body *b = &m->bodies[i];
  const int iv = b->joint.idx_v, n = b->joint.nv;
  const double *Dinv = w->Dab + 36 * i;
  mr_motion a = mr_motion_add(w->oa[b->parent], w->oc[i]);
  double r[6];
  for (int k = 0; k < n; ++k)
    r[k] = mr_force_dot(w->F[iv + k], a);
  for (int k = 0; k < n; ++k) {
    double s = w->u[iv + k];
    for (int l = 0; l < n; ++l)
      s -= Dinv[k * n + l] * r[l];
    d->ddq[iv + k] = s;
    a = mr_motion_add(a, mr_motion_scale(w->oS[iv + k], s));
  }
  w->oa[i] = a;
}

const double *mr_aba(const mr_model *m, mr_data *d, const double *q, const double *v,
                     const double *tau) {
  mr_dyn_work *w = mr_work(d);
  mr_dyn_placements(m, d, q);
  mr_dyn_world_terms(m, d);
  pass1(m, d, v);
  int singular = 0;
  for (int i = m->nbodies - 1; i > 0; --i)
    singular |= pass2_body(m, d, i, tau);
  d->singular += singular;
  w->oa[0].v = mr_v3_neg(m->gravity);
  w->oa[0].w = mr_v3_zero();
  for (int i = 1; i < m->nbodies; ++i)
    pass3_body(m, d, i);
  return d->ddq;
}
