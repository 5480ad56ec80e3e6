/* Cross-checks of the dynamics algorithms shared by test_dynamics.c and test_robots.c: ABA
 * against CRBA + a dense Cholesky solve, RNEA against ABA, LDLᵀ against dense, Jacobians against
 * finite differences of placements, energy balance along ABA. */
#ifndef MOREAU_TEST_DYN_CHECKS_H
#define MOREAU_TEST_DYN_CHECKS_H

#include "test_util.h"

#include <float.h>
#include <string.h>

#include "core/linalg.h"
#include "moreau/dynamics.h"

enum { NMAX = 128 };

static void random_vec(uint64_t *s, double *x, int n, double r) {
  for (int i = 0; i < n; ++i)
    x[i] = test_rand(s, -r, r);
}

static double max_abs_diff(const double *a, const double *b, int n) {
  double e = 0.0;
  for (int i = 0; i < n; ++i)
    e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

/* dense M⁻¹ x by Cholesky of a copy of M */
static void dense_solve(const double *M, int n, double *x) {
  static double L[NMAX * NMAX];
  memcpy(L, M, (size_t)n * n * sizeof(double));
  assert_int_equal(mr_cholesky(L, n), 0);
  mr_cholesky_solve(L, n, x);
}

/* a random state of a model */
typedef struct {
  double q[NMAX], v[NMAX], tau[NMAX], a[NMAX];
} rstate;

static void random_state(const mr_model *m, uint64_t *s, rstate *x) {
  mr_random_configuration(m, s, x->q);
  random_vec(s, x->v, m->nv, 1.0);
  random_vec(s, x->tau, m->nv, 2.0);
  random_vec(s, x->a, m->nv, 1.0);
}

/* ‖A‖∞ of a dense n x n matrix */
static double mat_norm_inf(const double *A, int n) {
  double r = 0.0;
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int j = 0; j < n; ++j)
      s += fabs(A[i * n + j]);
    r = fmax(r, s);
  }
  return r;
}

/* κ∞(M) = ‖M‖∞ ‖M⁻¹‖∞, M⁻¹ column by column by the dense Cholesky solve */
static double cond_inf(const double *M, int n) {
  static double Minv[NMAX * NMAX];
  for (int j = 0; j < n; ++j) {
    double e[NMAX] = {0};
    e[j] = 1.0;
    dense_solve(M, n, e);
    for (int i = 0; i < n; ++i)
      Minv[i * n + j] = e[i];
  }
  return mat_norm_inf(M, n) * mat_norm_inf(Minv, n);
}

/* ABA = M⁻¹ (τ − b) with M by CRBA and a dense Cholesky; RNEA(ABA(τ)) = τ, also with external
 * forces; nle = RNEA(q, v, 0); LDLᵀ solve and product agree with the dense ones. Tolerances
 * from the standard round-off bounds with u = ε/2 and γ_k = k u/(1 − k u) ≈ k ε/2 (Higham,
 * Accuracy and Stability of Numerical Algorithms, §3, §10): a product M x or a recursion over
 * the tree's n dofs is accurate to γ_n ‖M‖ |x| (a residual: no cancellation is amplified),
 * a solve with M to κ∞(M) times that relative to |x| (a backward-stable solve's forward error);
 * each check compares two such computations, 2 γ_n = n ε (g2 below). κ∞ and ‖M‖∞ are computed
 * on each state. Measured on the random trees and the 65 reference robots, at most (as a
 * fraction of the bound): ABA 0.010, RNEA 0.05, LDLᵀ solve 0.002, product 0.05, energy 0.03 —
 * worst-case bounds, a few ulps where the bound allows n ε κ */
static void check_algorithms(const mr_model *m, mr_data *d, const rstate *x, uint64_t *s) {
  const int nv = m->nv;
  double rhs[NMAX], ddq[NMAX], y[NMAX], z[NMAX];
  for (int i = 0; i < m->nbodies; ++i)
    d->f_ext[i] = mr_force_zero();
  static double M[NMAX * NMAX];
  mr_crba(m, d, x->q);
  mr_mass_dense(d, M);
  const double Mn = mat_norm_inf(M, nv), kappa = cond_inf(M, nv), g2 = nv * DBL_EPSILON;
  const double *b = mr_nonlinear_effects(m, d, x->q, x->v);
  for (int k = 0; k < nv; ++k)
    rhs[k] = x->tau[k] - b[k];
  const double rn = mr_norm_inf(rhs, nv);
  dense_solve(M, nv, rhs);
  memcpy(ddq, mr_aba(m, d, x->q, x->v, x->tau), (size_t)nv * sizeof(double));
  /* two solves (ABA's recursion, Cholesky), each within κ γ_n (|q̈| + |τ − b|/‖M‖) (the
   * right side's own rounding through M⁻¹) */
  double scale = mr_norm_inf(ddq, nv) + rn / Mn;
  assert_true(max_abs_diff(ddq, rhs, nv) <= kappa * g2 * scale);
  /* RNEA inverts ABA, with and without external forces: a residual of ABA's solve,
   * γ_n (‖M‖ |q̈| + |τ| + |b|) for each of the two recursions */
  const double *tau = mr_rnea(m, d, x->q, x->v, ddq);
  double bn = mr_norm_inf(b, nv), tn = mr_norm_inf(x->tau, nv);
  assert_true(max_abs_diff(tau, x->tau, nv) <= g2 * (Mn * mr_norm_inf(ddq, nv) + tn + bn));
  for (int i = 1; i < m->nbodies; ++i) {
    d->f_ext[i].f = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    d->f_ext[i].n = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
  }
  memcpy(ddq, mr_aba(m, d, x->q, x->v, x->tau), (size_t)nv * sizeof(double));
  tau = mr_rnea(m, d, x->q, x->v, ddq);
  /* the external forces enter both recursions the same way (f_ext on each body), so the
   * residual bound is the same in |q̈| and |τ| (measured 0.048 of it) */
  assert_true(max_abs_diff(tau, x->tau, nv) <= g2 * (Mn * mr_norm_inf(ddq, nv) + tn + bn));
  for (int i = 0; i < m->nbodies; ++i)
    d->f_ext[i] = mr_force_zero();
  /* nle is RNEA at zero acceleration: the same operations (the armature term adds 0 · armature),
   * so bitwise equal (measured: equal on every state) */
  double zero[NMAX] = {0};
  mr_rnea(m, d, x->q, x->v, zero);
  assert_memory_equal(d->tau_id, b, (size_t)nv * sizeof(double));
  /* LDLᵀ: solve and product against dense */
  mr_crba(m, d, x->q);
  assert_int_equal(mr_ldlt_factor(m, d, NULL), MR_OK);
  memcpy(y, x->tau, (size_t)nv * sizeof(double));
  memcpy(z, x->tau, (size_t)nv * sizeof(double));
  mr_ldlt_solve(m, d, y);
  dense_solve(M, nv, z);
  /* two backward-stable solves of one system: κ γ_n (|z| + |τ|/‖M‖) each */
  assert_true(max_abs_diff(y, z, nv) <= kappa * g2 * (mr_norm_inf(z, nv) + tn / Mn));
  mr_ldlt_mul(m, d, x->a, y);
  mr_matvec(z, M, x->a, nv, nv);
  /* two products M a: γ_n ‖M‖ |a| each */
  double an = mr_norm_inf(x->a, nv);
  assert_true(max_abs_diff(y, z, nv) <= g2 * Mn * an);
  /* kinetic energy is ½ vᵀ M v: two quadratic forms, each within γ_n |v|ᵀ|M||v| / 2 ≤
   * γ_n n ‖M‖∞ |v|∞² / 2 */
  mr_matvec(z, M, x->v, nv, nv);
  double T = 0.5 * mr_dot(x->v, z, nv), vn = mr_norm_inf(x->v, nv);
  assert_near(mr_kinetic_energy(m, d, x->q, x->v), T, 0.5 * g2 * nv * Mn * vn * vn);
}

/* world placement of body i's frame (or of a model frame when frame >= 0) at q */
static mr_se3 placement_at(const mr_model *m, mr_data *d, const double *q, int body, int frame) {
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_update_frames(m, d);
  return frame >= 0 ? d->oMf[frame] : d->oMi[body];
}

/* (v_p, ω): the world velocity of the frame origin and the world angular velocity, by central
 * differences of the placement along q ⊕ ±h v (truncation O(h²), round-off ε |p| / h) */
static mr_motion fd_velocity(const mr_model *m, mr_data *d, const double *q, const double *v,
                             int body, int frame, double h) {
  double qp[NMAX], qm[NMAX];
  mr_integrate(m, q, v, h, qp);
  mr_integrate(m, q, v, -h, qm);
  mr_se3 P = placement_at(m, d, qp, body, frame), Q = placement_at(m, d, qm, body, frame);
  mr_se3 O = placement_at(m, d, q, body, frame);
  mr_motion r;
  r.v = mr_v3_scale(mr_v3_sub(P.p, Q.p), 0.5 / h);
  mr_mat3 Rd, W;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Rd.m[i][j] = (P.R.m[i][j] - Q.R.m[i][j]) * 0.5 / h;
  W = mr_m3_mult(&Rd, &O.R); /* Ṙ Rᵀ = [ω]x */
  r.w = mr_v3(0.5 * (W.m[2][1] - W.m[1][2]), 0.5 * (W.m[0][2] - W.m[2][0]),
              0.5 * (W.m[1][0] - W.m[0][1]));
  return r;
}

static void jac_times(const double *J, int rows, int nv, const double *v, double *out) {
  mr_matvec(out, J, v, rows, nv);
}

/* the Jacobians of body (frame < 0) or of a frame times v equal the finite-differenced velocity
 * in the three references; the point Jacobian that of a point fixed on the body */
static void check_jacobians(const mr_model *m, mr_data *d, const rstate *x, int body, int frame) {
  static double J[6 * NMAX];
  static const mr_reference refs[3] = {MR_LOCAL_WORLD_ALIGNED, MR_WORLD, MR_LOCAL};
  const int nv = m->nv;
  int b = frame >= 0 ? m->frames[frame].body : body;
  mr_motion fd = fd_velocity(m, d, x->q, x->v, b, frame, 1e-5);
  mr_motion f2 = fd_velocity(m, d, x->q, x->v, b, frame, 2e-5);
  mr_se3 O = placement_at(m, d, x->q, b, frame);
  /* LOCAL_WORLD_ALIGNED (v_p, ω); WORLD (v_p − ω × p, ω); LOCAL Rᵀ (v_p, ω) */
  mr_motion want[3] = {fd,
                       {mr_v3_sub(fd.v, mr_v3_cross(fd.w, O.p)), fd.w},
                       {mr_m3_tmulv(&O.R, fd.v), mr_m3_tmulv(&O.R, fd.w)}};
  for (int r = 0; r < 3; ++r) {
    double jv[6];
    if (frame >= 0)
      mr_frame_jacobian(m, d, frame, refs[r], J);
    else
      mr_body_jacobian(m, d, b, refs[r], J);
    jac_times(J, 6, nv, x->v, jv);
    double w6[6] = {want[r].v.v[0], want[r].v.v[1], want[r].v.v[2],
                    want[r].w.v[0], want[r].w.v[1], want[r].w.v[2]};
    /* finite differences at h = 1e-5: the truncation c h², estimated by Richardson from the
     * difference at 2h, (D(2h) − D(h))/3, taken twice, carried by the shift ω × p and the rotation
     * of the references; plus the round-off of the placements, 10 ε (|p| + 1)/h */
    double dv = mr_v3_norm(mr_v3_sub(f2.v, fd.v)), dw = mr_v3_norm(mr_v3_sub(f2.w, fd.w));
    double pn = mr_v3_norm(O.p) + 1.0;
    double tol = 2.0 * (dv + pn * dw) / 3.0 + 10.0 * DBL_EPSILON * pn / 1e-5;
    assert_vec_near(jv, w6, 6, tol);
  }
  /* a point fixed on the body, given in world coordinates */
  mr_vec3 r = mr_v3(0.3, -0.2, 0.5), vp[2];
  double qp[NMAX], qm[NMAX], h = 1e-5, jv[3];
  for (int k = 0; k < 2; ++k) {
    double hk = (k + 1) * h;
    mr_integrate(m, x->q, x->v, hk, qp);
    mr_integrate(m, x->q, x->v, -hk, qm);
    mr_se3 P = placement_at(m, d, qp, b, -1), Q = placement_at(m, d, qm, b, -1);
    vp[k] = mr_v3_scale(mr_v3_sub(mr_se3_act_point(&P, r), mr_se3_act_point(&Q, r)), 0.5 / hk);
  }
  O = placement_at(m, d, x->q, b, -1);
  mr_point_jacobian(m, d, b, mr_se3_act_point(&O, r), J);
  jac_times(J, 3, nv, x->v, jv);
  double pn = mr_v3_norm(mr_se3_act_point(&O, r)) + 1.0;
  assert_vec_near(jv, vp[0].v, 3,
                  2.0 * mr_v3_norm(mr_v3_sub(vp[1], vp[0])) / 3.0 + 10.0 * DBL_EPSILON * pn / h);
}

/* the total energy T + V at (q ⊕ s v, v + s q̈) */
static double energy_along(const mr_model *m, mr_data *d, const rstate *x, const double *ddq,
                           double s) {
  double q1[NMAX], v1[NMAX];
  mr_integrate(m, x->q, x->v, s, q1);
  for (int i = 0; i < m->nv; ++i)
    v1[i] = x->v[i] + s * ddq[i];
  return mr_kinetic_energy(m, d, q1, v1) + mr_potential_energy(m, d, q1);
}

/* total energy E = T + V changes at the rate vᵀτ along ABA (no damping): central differences
 * along (q ⊕ ±h v, v ± h q̈), h = 1e-4. Tolerance: the truncation c h² estimated by Richardson
 * from the difference at 2h, (D(2h) − D(h))/3, taken twice, plus the round-off of the energies,
 * 10 ε (|T| + |V| + 1)/h */
static void check_power(const mr_model *m, mr_data *d, const rstate *x) {
  const int nv = m->nv;
  const double h = 1e-4;
  double ddq[NMAX];
  memcpy(ddq, mr_aba(m, d, x->q, x->v, x->tau), (size_t)nv * sizeof(double));
  double D1 = (energy_along(m, d, x, ddq, h) - energy_along(m, d, x, ddq, -h)) / (2 * h);
  double D2 = (energy_along(m, d, x, ddq, 2 * h) - energy_along(m, d, x, ddq, -2 * h)) / (4 * h);
  double E = fabs(mr_kinetic_energy(m, d, x->q, x->v)) + fabs(mr_potential_energy(m, d, x->q));
  double power = mr_dot(x->v, x->tau, nv);
  assert_near(D1, power, 2.0 * fabs(D2 - D1) / 3.0 + 10.0 * DBL_EPSILON * (E + 1.0) / h);
}

/* body velocities of forward kinematics at (q ⊕ s h v, v + s h a), s = ±1, ±2 */
static void fk_velocities_at(const mr_model *m, mr_data *d, const rstate *x, double sh,
                             mr_motion *out) {
  double q1[NMAX], v1[NMAX];
  mr_integrate(m, x->q, x->v, sh, q1);
  for (int i = 0; i < m->nv; ++i)
    v1[i] = x->v[i] + sh * x->a[i];
  mr_forward_kinematics(m, d, q1, v1, NULL);
  memcpy(out, d->vb, (size_t)m->nbodies * sizeof(mr_motion));
}

/* body accelerations of forward kinematics are the time derivatives of the body velocities
 * (body coordinates move with the body, so no transport term): central differences along
 * (q ⊕ ±h v, v ± h a), h = 1e-4. Tolerance per body: the truncation c h², estimated by Richardson
 * from the difference at 2h, (D(2h) − D(h))/3, taken twice (its size grows with |v|³: 1e-9 on
 * the random trees, 3e-8 on Talos), plus the round-off of velocities up to |v_b| divided by h,
 * 10 ε |v_b|/h */
static void check_fk_acceleration(const mr_model *m, mr_data *d, const rstate *x) {
  static mr_motion ab[NMAX], p1[NMAX], m1[NMAX], p2[NMAX], m2[NMAX];
  const int nb = m->nbodies;
  const double h = 1e-4;
  mr_forward_kinematics(m, d, x->q, x->v, x->a);
  memcpy(ab, d->ab, (size_t)nb * sizeof(mr_motion));
  fk_velocities_at(m, d, x, h, p1), fk_velocities_at(m, d, x, -h, m1);
  fk_velocities_at(m, d, x, 2 * h, p2), fk_velocities_at(m, d, x, -2 * h, m2);
  for (int b = 1; b < nb; ++b) {
    mr_motion fd = mr_motion_scale(mr_motion_sub(p1[b], m1[b]), 0.5 / h);
    mr_motion f2 = mr_motion_scale(mr_motion_sub(p2[b], m2[b]), 0.25 / h);
    double vb = fmax(mr_v3_norm(p1[b].v), mr_v3_norm(p1[b].w)) + 1.0;
    for (int k = 0; k < 3; ++k) {
      double tv = 2.0 * fabs(f2.v.v[k] - fd.v.v[k]) / 3.0 + 10.0 * DBL_EPSILON * vb / h;
      double tw = 2.0 * fabs(f2.w.v[k] - fd.w.v[k]) / 3.0 + 10.0 * DBL_EPSILON * vb / h;
      assert_near(fd.v.v[k], ab[b].v.v[k], tv);
      assert_near(fd.w.v[k], ab[b].w.v[k], tw);
    }
  }
}

#endif
