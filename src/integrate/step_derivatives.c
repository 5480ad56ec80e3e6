/* One free-motion time step and its derivatives (moreau/derivatives.h).
 *
 * The step is mr_sim's semi-implicit Euler step without contacts, constraints or effort limits,
 * written from its documented equations (sim.h): with K_p = diag(k_p), K_d' = diag(k_d +
 * damping), e = q_target − q on the dofs with gains and b̂(q, v) = RNEA(q, v, 0) (gravity,
 * velocity terms and −Σ Jᵀ f_ext),
 *   M̃ = M + Δt K_d' + Δt² K_p,   v⁺ = v + Δt M̃⁻¹ (τ + K_p e − b̂ − (K_d' + Δt K_p) v),
 *   q⁺ = q ⊕ Δt v⁺.
 * Multiplying out, v⁺ is the root of the residual
 *   r(q, v, τ, v⁺) = RNEA(q, v, (v⁺ − v)/Δt) − τ − K_p e(q) + (K_d' + Δt K_p) v⁺ = 0,
 * whose Jacobian in v⁺ is M/Δt + K_d' + Δt K_p = M̃/Δt. Implicit differentiation, with the RNEA
 * derivatives at a = (v⁺ − v)/Δt (∂e/∂q = −1 on the dofs with gains):
 *   ∂v⁺/∂q = −Δt M̃⁻¹ (∂τ/∂q + K_p),   ∂v⁺/∂v = M̃⁻¹ (M − Δt ∂τ/∂v),   ∂v⁺/∂τ = Δt M̃⁻¹.
 * The configuration update q⁺ = q ⊕ w, w = Δt v⁺, is differentiated joint by joint in the
 * tangent space at q⁺: for a 1-dof joint ∂q⁺ = ∂q + Δt ∂v⁺; for a spherical or free joint,
 * with X = ad(w) ([w]× on SO(3), [[Ω, V], [0, Ω]] on SE(3)),
 *   ∂q⁺ = exp(−X) ∂q + Jr(w) Δt ∂v⁺,   Jr(w) = Σₙ (−X)ⁿ / (n + 1)!,   exp(−X) = Σₙ (−X)ⁿ / n!
 * (exp(−X) is the adjoint of exp(w)⁻¹, Jr the right Jacobian of the exponential), both summed
 * as series: |X| = Δt |v⁺| is small in a time step, and the series converge for any w.
 *
 * With contacts (mr_step_contact_derivatives), at fixed configuration: v⁺ = v_f + Δt M̃⁻¹ Jᵀ λ
 * and g = (J v_f + cor) / Δt, so dv⁺ = (1 + M̃⁻¹ Jᵀ (dλ/dg) J) dv_f, the correction held fixed. */
#include <stdlib.h>
#include <string.h>

#include "dynamics/derivatives_internal.h"

enum { SERIES_MAX = 60 };

/* ---- creation ---- */

mr_step_derivatives *mr_step_derivatives_create(const mr_model *m) {
  mr_step_derivatives *sd = calloc(1, sizeof *sd);
  const size_t nv = (size_t)m->nv, n2 = nv * nv;
  /* six nv x nv results, one nv x nv scratch, four nv vectors */
  double *p = sd ? calloc(7 * n2 + 4 * nv + 1, sizeof(double)) : NULL;
  mr_derivatives *rbd = p ? mr_derivatives_create(m) : NULL;
  if (!rbd) {
    free(p), free(sd);
    return NULL;
  }
  double **mats[] = {&sd->dvn_dq, &sd->dvn_dv, &sd->dvn_dtau,
                     &sd->dqn_dq, &sd->dqn_dv, &sd->dqn_dtau};
  for (int k = 0; k < 6; ++k)
    *mats[k] = p + (size_t)k * n2;
  sd->work = p + 6 * n2;
  sd->rbd = rbd;
  sd->nv = m->nv;
  return sd;
}

void mr_step_derivatives_free(mr_step_derivatives *sd) {
  if (!sd) return;
  mr_derivatives_free(sd->rbd);
  free(sd->dvn_dq);
  free(sd);
}

/* ---- the step ---- */

static double gain(const double *g, int k) {
  return g ? g[k] : 0.0;
}

/* Δt > 0, gains only on 1-dof joints, targets given where k_p ≠ 0 */
static mr_status check_params(const mr_model *m, const mr_step_params *p, mr_error *err) {
  if (!(p->dt > 0.0) || !isfinite(p->dt))
    return mr_error_set(err, MR_ERR_INVALID, "step: time step %g is not positive", p->dt);
  for (int k = 0; k < m->nv; ++k) {
    const mr_joint *j = &m->bodies[m->dof_body[k]].joint;
    if ((gain(p->kp, k) != 0.0 || gain(p->kd, k) != 0.0) && j->nv != 1)
      return mr_error_set(err, MR_ERR_INVALID,
                          "step: PD gains on dof %d of joint '%s' (%s): only 1-dof joints take "
                          "gains",
                          k, j->name, mr_joint_type_name(j->type));
    if (gain(p->kp, k) != 0.0 && !p->q_target)
      return mr_error_set(err, MR_ERR_INVALID, "step: k_p of dof %d is %g but no q_target given",
                          k, p->kp[k]);
  }
  return MR_OK;
}

/* v⁺ into vn; M̃'s factor left in d; zero (nv) is scratch */
static mr_status velocity(const mr_model *m, mr_data *d, const mr_step_params *p,
                          const double *q, const double *v, const double *tau, double *zero,
                          double *vn, mr_error *err) {
  const int nv = m->nv;
  const double dt = p->dt;
  mr_status st = check_params(m, p, err);
  if (st != MR_OK) return st;
  mr_crba(m, d, q);
  for (int k = 0; k < nv; ++k)
    d->M[(size_t)k * nv + k] +=
        dt * (gain(p->kd, k) + m->damping[k]) + dt * dt * gain(p->kp, k);
  if ((st = mr_ldlt_factor(m, d, err)) != MR_OK) return st;
  memset(zero, 0, (size_t)nv * sizeof(double));
  const double *b = mr_rnea(m, d, q, v, zero);
  for (int k = 0; k < nv; ++k) {
    const double kp = gain(p->kp, k);
    const int iq = m->bodies[m->dof_body[k]].joint.idx_q;
    const double e = kp != 0.0 ? p->q_target[k] - q[iq] : 0.0;
    vn[k] = tau[k] + kp * e - b[k] - (gain(p->kd, k) + m->damping[k] + dt * kp) * v[k];
  }
  mr_ldlt_solve(m, d, vn);
  for (int k = 0; k < nv; ++k)
    vn[k] = v[k] + dt * vn[k];
  return MR_OK;
}

mr_status mr_step_free(const mr_model *m, mr_data *d, const mr_step_params *p, const double *q,
                       const double *v, const double *tau, double *q_next, double *v_next,
                       mr_error *err) {
  mr_status st = velocity(m, d, p, q, v, tau, d->a, v_next, err); /* d->a: zero acceleration */
  if (st == MR_OK) mr_integrate(m, q, v_next, p->dt, q_next);
  return st;
}

/* ---- derivatives of the velocity update ---- */

static void velocity_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                 const mr_step_params *p) {
  const int nv = m->nv;
  const size_t n2 = (size_t)nv * (size_t)nv;
  const double dt = p->dt;
  const mr_derivatives *rbd = sd->rbd;
  /* d->M holds M (written by mr_rnea_derivatives), d->U etc. the factor of M̃ */
  for (size_t r = 0; r < n2; ++r) {
    sd->dvn_dq[r] = -dt * rbd->dtau_dq[r];
    sd->dvn_dv[r] = d->M[r] - dt * rbd->dtau_dv[r];
  }
  for (int k = 0; k < nv; ++k)
    sd->dvn_dq[(size_t)k * nv + k] -= dt * gain(p->kp, k);
  mr_ldlt_solve_rows(d, nv, sd->dvn_dq, sd->dvn_dv);
  mr_ldlt_inverse_rows(d, nv, sd->dvn_dtau);
  for (size_t r = 0; r < n2; ++r)
    sd->dvn_dtau[r] *= dt;
}

/* ---- derivatives of the configuration update ---- */

/* the matrix X = ad(w) of a joint (n = 3: [w]×; n = 6: w = (v, ω), [[Ω, V], [0, Ω]]) */
static void adjoint(const double *w, int n, double *X) {
  memset(X, 0, (size_t)(n * n) * sizeof(double));
  const double *om = n == 6 ? w + 3 : w;
  const mr_mat3 O = mr_m3_skew(mr_v3(om[0], om[1], om[2]));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      X[r * n + c] = O.m[r][c];
      if (n == 6) X[(r + 3) * n + c + 3] = O.m[r][c];
    }
  if (n == 6) {
    const mr_mat3 V = mr_m3_skew(mr_v3(w[0], w[1], w[2]));
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        X[r * n + c + 3] = V.m[r][c];
  }
}

/* E = exp(−X) and J = Σ (−X)ⁿ / (n + 1)! for an n x n X (n <= 6), summed until the terms fall
 * below the rounding of the leading 1 */
static void lie_series(const double *X, int n, double *E, double *J) {
  double P[36], T[36];
  memset(P, 0, sizeof P);
  for (int i = 0; i < n; ++i)
    P[i * n + i] = 1.0;
  memcpy(E, P, (size_t)(n * n) * sizeof(double));
  memcpy(J, P, (size_t)(n * n) * sizeof(double));
  for (int t = 1; t < SERIES_MAX; ++t) {
    double big = 0.0;
    /* P ← P (−X) / t */
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) {
        double s = 0.0;
        for (int k = 0; k < n; ++k)
          s -= P[r * n + k] * X[k * n + c];
        T[r * n + c] = s / t;
      }
    for (int i = 0; i < n * n; ++i) {
      P[i] = T[i];
      E[i] += P[i];
      J[i] += P[i] / (t + 1);
      big = fmax(big, fabs(P[i]));
    }
    if (big < 1e-18) break;
  }
}

/* rows iv .. iv + n − 1 of A ← Jr · rows of A (scratch: n x nv) */
static void mul_rows(const double *Jr, int n, int iv, int nv, double *A, double *scratch) {
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < nv; ++c) {
      double s = 0.0;
      for (int k = 0; k < n; ++k)
        s += Jr[r * n + k] * A[(size_t)(iv + k) * nv + c];
      scratch[r * nv + c] = s;
    }
  memcpy(A + (size_t)iv * nv, scratch, (size_t)(n * nv) * sizeof(double));
}

/* ∂q⁺ from ∂v⁺, joint by joint; vn = v⁺ */
static void configuration_derivatives(const mr_model *m, mr_step_derivatives *sd, double dt,
                                      const double *vn) {
  const int nv = m->nv;
  const size_t n2 = (size_t)nv * (size_t)nv;
  for (size_t r = 0; r < n2; ++r) {
    sd->dqn_dq[r] = dt * sd->dvn_dq[r];
    sd->dqn_dv[r] = dt * sd->dvn_dv[r];
    sd->dqn_dtau[r] = dt * sd->dvn_dtau[r];
  }
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    const int n = j->nv, iv = j->idx_v;
    if (n == 1) {
      sd->dqn_dq[(size_t)iv * nv + iv] += 1.0;
      continue;
    }
    if (n == 0) continue;
    double w[6] = {0}, X[36], E[36], Jr[36];
    for (int k = 0; k < n; ++k)
      w[k] = dt * vn[iv + k];
    adjoint(w, n, X);
    lie_series(X, n, E, Jr);
    mul_rows(Jr, n, iv, nv, sd->dqn_dq, sd->work);
    mul_rows(Jr, n, iv, nv, sd->dqn_dv, sd->work);
    mul_rows(Jr, n, iv, nv, sd->dqn_dtau, sd->work);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c)
        sd->dqn_dq[(size_t)(iv + r) * nv + iv + c] += E[r * n + c];
  }
}

mr_status mr_step_free_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                   const mr_step_params *p, const double *q, const double *v,
                                   const double *tau, double *q_next, double *v_next,
                                   mr_error *err) {
  const int nv = m->nv;
  double *zero = sd->work + (size_t)nv * (size_t)nv, *vn = zero + nv, *a = vn + nv;
  mr_status st = velocity(m, d, p, q, v, tau, zero, vn, err);
  if (st != MR_OK) return st;
  for (int k = 0; k < nv; ++k)
    a[k] = (vn[k] - v[k]) / p->dt;
  mr_rnea_derivatives(m, d, sd->rbd, q, v, a);
  velocity_derivatives(m, d, sd, p);
  configuration_derivatives(m, sd, p->dt, vn);
  if (v_next) memcpy(v_next, vn, (size_t)nv * sizeof(double));
  if (q_next) mr_integrate(m, q, vn, p->dt, q_next);
  return MR_OK;
}

/* ---- the step with contacts ---- */

size_t mr_step_contact_work_size(int nc, int nv) {
  const size_t n = 3 * (size_t)nc, v = (size_t)nv;
  return (n * n + n * v + 2 * v * v) * sizeof(double) + mr_contact_derivative_work_size(nc) + 64;
}

/* out ← dvf + M̃⁻¹ Jᵀ D J dvf for one input (D = dλ/dg, L: 3nc x nv scratch) */
static void contact_chain(const mr_model *m, int nc, const double *J, const double *D,
                          const double *dvf, double *L, double *out) {
  const int nv = m->nv, n = 3 * nc;
  /* L = J dvf (3nc x nv) */
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < nv; ++k) {
      double s = 0.0;
      for (int j = 0; j < nv; ++j)
        s += J[r * nv + j] * dvf[j * nv + k];
      L[r * nv + k] = s;
    }
  /* out = Jᵀ (D L), one row of D L at a time */
  memset(out, 0, (size_t)nv * (size_t)nv * sizeof(double));
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < nv; ++k) {
      double s = 0.0;
      for (int j = 0; j < n; ++j)
        s += D[r * n + j] * L[j * nv + k];
      if (s == 0.0) continue;
      for (int i = 0; i < nv; ++i)
        out[i * nv + k] += J[r * nv + i] * s;
    }
}

mr_status mr_step_contact_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                      const mr_step_params *p, const double *q, const double *v,
                                      const double *tau, const mr_contact_problem *prob,
                                      const double *J, const double *lambda, const double *c,
                                      double tol, double *dvn_dv, double *dvn_dtau, void *work,
                                      mr_error *err) {
  const int nv = m->nv, n = 3 * prob->nc;
  const size_t n2 = (size_t)nv * (size_t)nv;
  mr_status st = mr_step_free_derivatives(m, d, sd, p, q, v, tau, NULL, NULL, err);
  if (st != MR_OK) return st;
  memcpy(dvn_dv, sd->dvn_dv, n2 * sizeof(double));
  memcpy(dvn_dtau, sd->dvn_dtau, n2 * sizeof(double));
  if (n == 0) return MR_OK;
  double *D = (double *)work, *L = D + (size_t)n * (size_t)n;
  double *Wv = L + (size_t)n * (size_t)nv, *Wt = Wv + n2;
  void *cwork = Wt + n2;
  if ((st = mr_contact_solution_derivative(prob, lambda, c, tol, D, NULL, cwork, err)) != MR_OK)
    return st;
  /* Jᵀ D J dv_f for both inputs, then M̃⁻¹ on both */
  contact_chain(m, prob->nc, J, D, sd->dvn_dv, L, Wv);
  contact_chain(m, prob->nc, J, D, sd->dvn_dtau, L, Wt);
  mr_ldlt_solve_rows(d, nv, Wv, Wt);
  for (size_t r = 0; r < n2; ++r)
    dvn_dv[r] += Wv[r], dvn_dtau[r] += Wt[r];
  return MR_OK;
}
