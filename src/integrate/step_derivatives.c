/* One free-motion time step and its derivatives (moreau/sim_derivatives.h).
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
 * Free bodies (a free joint carrying no other body) follow mr_sim's map (free_flyer.c): the
 * RNEA takes their bias acceleration a(v), which adds M ∂a/∂v to ∂τ/∂v; a spinning body's
 * midpoint gyroscopic impulse G, a function of its velocity ω_e with every impulse but G, is
 * differentiated implicitly through ω⁺ = ω_e + K G (gyro_step); their rows of ∂q⁺ and ∂v⁺
 * follow the chord of the centre of mass, the rotation R exp(Δt (ω⁺ − ½ K G)) and v⁺ turned to
 * the frame of q⁺ (free_body_rows).
 *
 * With contacts (mr_step_contact_derivatives), at fixed configuration: v⁺ = v_f + Δt M̃⁻¹ Jᵀ λ
 * and g = (J v_f + cor) / Δt, so dv⁺ = (1 + M̃⁻¹ Jᵀ (dλ/dg) J) dv_f, the correction held fixed;
 * a spinning free body's G is that of its velocity with the contact forces (the solver's v_f
 * has G of the velocity without them), so G is differentiated after dλ/dx. */
#include "moreau/sim_derivatives.h"

#include <stdlib.h>
#include <string.h>

#include "contact/active_set.h"
#include "contact/consistency.h"
#include "dynamics/derivatives_internal.h"
#include "integrate/free_flyer.h"
#include "integrate/free_motion.h"

enum { SERIES_MAX = 60 };

/* ---- creation ---- */

mr_step_derivatives *mr_step_derivatives_create(const mr_model *m) {
  mr_step_derivatives *sd = calloc(1, sizeof *sd);
  const size_t nv = (size_t)m->nv, n2 = nv * nv;
  /* six nv x nv results; scratch: one nv x nv, seven nv vectors, the impulses' three nv x nv
   * derivatives (layout: work_vector, impulse_rows) */
  double *p = sd ? calloc(10 * n2 + 7 * nv + 1, sizeof(double)) : NULL;
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

/* sd->work: an nv x nv scratch, then nv vectors: 0 the free bodies' bias acceleration, 1 the
 * RNEA's acceleration, 2 v⁺, 3 a copy of v⁺, 4 scratch, 5 the rotation lag, 6 the PD error */
static double *work_vector(const mr_step_derivatives *sd, int k) {
  return sd->work + (size_t)sd->nv * (size_t)sd->nv + (size_t)k * (size_t)sd->nv;
}

/* ∂G/∂x (x = q, v, τ; nv x nv, rows at the angular dofs of the spinning free bodies) */
static double *impulse_rows(const mr_step_derivatives *sd, int x) {
  const size_t n2 = (size_t)sd->nv * (size_t)sd->nv;
  return sd->work + n2 + 7 * (size_t)sd->nv + (size_t)x * n2;
}

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
      return mr_error_set(err, MR_ERR_INVALID, "step: k_p of dof %d is %g but no q_target given", k,
                          p->kp[k]);
  }
  return MR_OK;
}

/* v⁺ before the free bodies' gyroscopic impulse into vn (the step's free-motion stage,
 * free_motion.h); M̃'s factor left in d; a (nv) receives the free bodies' bias acceleration,
 * e (nv) the PD error q_target − q on the dofs with gains */
static mr_status velocity(const mr_model *m, mr_data *d, const mr_step_params *p, const double *q,
                          const double *v, const double *tau, double *a, double *e, double *vn,
                          mr_error *err) {
  mr_status st = check_params(m, p, err);
  if (st != MR_OK) return st;
  for (int k = 0; k < m->nv; ++k)
    e[k] = gain(p->kp, k) != 0.0 ? p->q_target[k] - q[m->bodies[m->dof_body[k]].joint.idx_q] : 0.0;
  const mr_free_motion f = {p->dt, tau, p->kp, p->kd, e};
  if ((st = mr_free_motion_factor(m, d, &f, q, err)) != MR_OK) return st;
  mr_free_motion_velocity(m, d, &f, q, v, a, vn);
  return MR_OK;
}

mr_status mr_step_free(const mr_model *m, mr_data *d, const mr_step_params *p, const double *q,
                       const double *v, const double *tau, double *q_next, double *v_next,
                       mr_error *err) {
  /* scratch: d->a the bias acceleration, d->ddq the gyroscopic solve, d->tau the lag */
  mr_status st = velocity(m, d, p, q, v, tau, d->a, d->ddq, v_next, err);
  if (st != MR_OK) return st;
  mr_free_flyer_gyroscopic(m, d, v, p->dt, v_next, d->ddq, d->tau);
  mr_free_flyer_integrate(m, d, q, v_next, d->tau, p->dt, q_next);
  return MR_OK;
}

/* ---- derivatives of the velocity update ---- */

/* M (1 − Δt ∂a/∂v) into A (nv x nv, holding M), a the free bodies' bias acceleration
 * a_lin = −ω × (v_o + ω × c): ∂a_lin/∂v_o = −[ω]×, ∂a_lin/∂ω = [v_o + ω × c]× + [ω]× [c]× */
static void bias_slope(const mr_model *m, const mr_data *d, const double *v, double dt, double *A) {
  const int nv = m->nv;
  for (int i = 1; i < m->nbodies; ++i) {
    if (!mr_free_flyer_is_free(m, d, i)) continue;
    const int iv = m->bodies[i].joint.idx_v;
    const mr_vec3 w = mr_v3(v[iv + 3], v[iv + 4], v[iv + 5]), c = m->bodies[i].inertia.c;
    const mr_vec3 vc = mr_v3_add(mr_v3(v[iv], v[iv + 1], v[iv + 2]), mr_v3_cross(w, c));
    const mr_mat3 Ao = mr_m3_skew(mr_v3_neg(w)), Sw = mr_m3_skew(w), Sc = mr_m3_skew(c);
    const mr_mat3 WC = mr_m3_mul(&Sw, &Sc), Svc = mr_m3_skew(vc), Aw = mr_m3_add(&Svc, &WC);
    for (int r = 0; r < nv; ++r) {
      double *row = A + (size_t)r * nv;
      const double m0[3] = {row[iv], row[iv + 1], row[iv + 2]};
      for (int j = 0; j < 3; ++j) {
        double s0 = 0.0, s1 = 0.0;
        for (int k = 0; k < 3; ++k) {
          s0 += m0[k] * Ao.m[k][j];
          s1 += m0[k] * Aw.m[k][j];
        }
        row[iv + j] -= dt * s0;
        row[iv + 3 + j] -= dt * s1;
      }
    }
  }
}

static void velocity_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                 const mr_step_params *p, const double *v) {
  const int nv = m->nv;
  const size_t n2 = (size_t)nv * (size_t)nv;
  const double dt = p->dt;
  const mr_derivatives *rbd = sd->rbd;
  /* d->M holds M (written by mr_rnea_derivatives), d->U etc. the factor of M̃ */
  mr_mass_dense(d, sd->dvn_dv);
  bias_slope(m, d, v, dt, sd->dvn_dv);
  for (size_t r = 0; r < n2; ++r) {
    sd->dvn_dq[r] = -dt * rbd->dtau_dq[r];
    sd->dvn_dv[r] -= dt * rbd->dtau_dv[r];
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

/* ---- free bodies (free_flyer.c) ---- */

static mr_vec3 vec_at(const double *x) {
  return mr_v3(x[0], x[1], x[2]);
}

static mr_mat3 mat_of(const double *A) {
  mr_mat3 M;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      M.m[r][c] = A[r * 3 + c];
  return M;
}

/* exp(−[φ]×) into E and the right Jacobian Jr(φ) into J */
static void so3_series(mr_vec3 phi, mr_mat3 *E, mr_mat3 *J) {
  double X[9], e[36], j[36];
  const mr_mat3 S = mr_m3_skew(phi);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      X[r * 3 + c] = S.m[r][c];
  lie_series(X, 3, e, j);
  *E = mat_of(e);
  if (J) *J = mat_of(j);
}

/* A⁻¹ (A = 1 + O(Δt |ω|), far from singular) */
static mr_mat3 inverse3(const mr_mat3 *A) {
  mr_mat3 B;
  const double(*a)[3] = A->m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int c1 = (c + 1) % 3, c2 = (c + 2) % 3, r1 = (r + 1) % 3, r2 = (r + 2) % 3;
      B.m[r][c] = a[c1][r1] * a[c2][r2] - a[c1][r2] * a[c2][r1];
    }
  const double det = a[0][0] * B.m[0][0] + a[0][1] * B.m[1][0] + a[0][2] * B.m[2][0];
  return mr_m3_scale(&B, 1.0 / det);
}

/* the columns of M̃⁻¹ at the angular dofs ia .. ia + 2 of an isolated free body, rows iv ..
 * iv + 5, into C (6 x 3; rows 3 .. 5 are K, the angular block); x (nv) is scratch */
static void angular_columns(const mr_model *m, const mr_data *d, int iv, double *x,
                            double C[6][3]) {
  for (int k = 0; k < 3; ++k) {
    memset(x, 0, (size_t)m->nv * sizeof(double));
    x[iv + 3 + k] = 1.0;
    mr_ldlt_solve(m, d, x);
    for (int r = 0; r < 6; ++r)
      C[r][k] = x[iv + r];
  }
}

static mr_mat3 lower_block(double C[6][3]) {
  return mat_of(&C[3][0]);
}

/* ∂(Δt ω × I ω)/∂ω = Δt ([ω]× I − [I ω]×) */
static mr_mat3 gyro_slope(const mr_mat3 *I, mr_vec3 w, double dt) {
  const mr_mat3 Sw = mr_m3_skew(w), SIw = mr_m3_skew(mr_m3_mulv(I, w));
  const mr_mat3 WI = mr_m3_mul(&Sw, I), neg = mr_m3_scale(&SIw, -1.0), D = mr_m3_add(&WI, &neg);
  return mr_m3_scale(&D, dt);
}

/* The free bodies' gyroscopic impulse added to vn, the free velocity (mr_free_flyer_gyroscopic,
 * its rotation lag into work_vector(sd, 5)), and ∂G/∂x of each spinning body into impulse_rows
 * from ∂v_f/∂x in sd->dvn_*. G = (E − 1) b, E = exp(φ), φ = −Δt (ω_e + ω⁺)/2, b = I ω_e,
 * ω_e = ω_f + K Δt ω × I ω, ω⁺ = ω_e + K G: with d(E b) = E db − E [b]× Jr(φ) dφ,
 *   (1 − Q K) dG = (P + 2 Q) dω_e,   P = (E − 1) I,   Q = (Δt/2) E [b]× Jr(φ).
 * K is constant in q for a body hanging from the world (its M̃ block is its spatial inertia in
 * its own frame); another spinning free body is refused. */
static mr_status gyro_step(const mr_model *m, mr_data *d, mr_step_derivatives *sd, double dt,
                           const double *v, double *vn, mr_error *err) {
  const int nv = m->nv;
  const size_t n2 = (size_t)nv * (size_t)nv;
  double *pre = work_vector(sd, 3), *x = work_vector(sd, 4), *lag = work_vector(sd, 5);
  for (int k = 0; k < 3; ++k)
    memset(impulse_rows(sd, k), 0, n2 * sizeof(double));
  memcpy(pre, vn, (size_t)nv * sizeof(double));
  mr_free_flyer_gyroscopic(m, d, v, dt, vn, x, lag);
  const double *const dv[3] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau};
  for (int i = 1; i < m->nbodies; ++i) {
    if (!mr_free_flyer_spins(m, d, i)) continue;
    const mr_joint *j = &m->bodies[i].joint;
    const int ia = j->idx_v + 3;
    if (d->parent_dof[j->idx_v] >= 0)
      return mr_error_set(err, MR_ERR_INVALID,
                          "step derivatives: free joint '%s' hangs from a moving body: its "
                          "gyroscopic impulse is differentiated only under the world",
                          j->name);
    const mr_mat3 *I = &m->bodies[i].inertia.I;
    double C[6][3];
    angular_columns(m, d, j->idx_v, x, C);
    const mr_mat3 K = lower_block(C);
    const mr_vec3 w = vec_at(v + ia), wp = vec_at(vn + ia);
    const mr_mat3 Dg = gyro_slope(I, w, dt);
    const mr_vec3 g0 = mr_v3_scale(mr_v3_cross(w, mr_m3_mulv(I, w)), dt);
    const mr_vec3 we = mr_v3_add(vec_at(pre + ia), mr_m3_mulv(&K, g0)), b = mr_m3_mulv(I, we);
    const mr_vec3 phi = mr_v3_scale(mr_v3_add(we, wp), -0.5 * dt);
    mr_mat3 E, Em, Jr;
    so3_series(mr_v3_neg(phi), &E, NULL); /* exp([φ]×) */
    so3_series(phi, &Em, &Jr);
    const mr_mat3 EI = mr_m3_mul(&E, I), negI = mr_m3_scale(I, -1.0), P = mr_m3_add(&EI, &negI);
    const mr_mat3 Sb = mr_m3_skew(b), ESb = mr_m3_mul(&E, &Sb), ESbJ = mr_m3_mul(&ESb, &Jr);
    const mr_mat3 Q = mr_m3_scale(&ESbJ, 0.5 * dt), QK = mr_m3_mul(&Q, &K);
    const mr_mat3 negQK = mr_m3_scale(&QK, -1.0), one = mr_m3_identity();
    const mr_mat3 Q2 = mr_m3_scale(&Q, 2.0);
    const mr_mat3 A = mr_m3_add(&one, &negQK), Ainv = inverse3(&A), PQ = mr_m3_add(&P, &Q2);
    const mr_mat3 KDg = mr_m3_mul(&K, &Dg);
    for (int xi = 0; xi < 3; ++xi) {
      double *Gx = impulse_rows(sd, xi);
      for (int c = 0; c < nv; ++c) {
        mr_vec3 dwe = mr_v3(dv[xi][(size_t)ia * nv + c], dv[xi][(size_t)(ia + 1) * nv + c],
                            dv[xi][(size_t)(ia + 2) * nv + c]);
        if (xi == 1 && c >= ia && c < ia + 3)
          dwe = mr_v3_add(dwe, mr_m3_mulv(&KDg, mr_v3(c == ia, c == ia + 1, c == ia + 2)));
        const mr_vec3 dG = mr_m3_mulv(&Ainv, mr_m3_mulv(&PQ, dwe));
        for (int r = 0; r < 3; ++r)
          Gx[(size_t)(ia + r) * nv + c] = dG.v[r];
      }
    }
  }
  return MR_OK;
}

/* 1 when a free body receives a gyroscopic impulse */
static int any_spin(const mr_model *m, const mr_data *d) {
  for (int i = 1; i < m->nbodies; ++i)
    if (mr_free_flyer_spins(m, d, i)) return 1;
  return 0;
}

/* ∂v⁺/∂x += M̃⁻¹ E (∂G/∂x + ∂(Δt ω × I ω)/∂x) on each spinning free body's rows; x (nv) is
 * scratch */
static void gyro_apply(const mr_model *m, const mr_data *d, mr_step_derivatives *sd, double dt,
                       const double *v, double *x) {
  const int nv = m->nv;
  double *const dv[3] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau};
  for (int i = 1; i < m->nbodies; ++i) {
    if (!mr_free_flyer_spins(m, d, i)) continue;
    const int iv = m->bodies[i].joint.idx_v, ia = iv + 3;
    double C[6][3];
    angular_columns(m, d, iv, x, C);
    const mr_mat3 Dg = gyro_slope(&m->bodies[i].inertia.I, vec_at(v + ia), dt);
    for (int xi = 0; xi < 3; ++xi) {
      const double *Gx = impulse_rows(sd, xi);
      for (int c = 0; c < nv; ++c) {
        mr_vec3 t = mr_v3(Gx[(size_t)ia * nv + c], Gx[(size_t)(ia + 1) * nv + c],
                          Gx[(size_t)(ia + 2) * nv + c]);
        if (xi == 1 && c >= ia && c < ia + 3)
          t = mr_v3_add(t, mr_m3_mulv(&Dg, mr_v3(c == ia, c == ia + 1, c == ia + 2)));
        for (int r = 0; r < 6; ++r)
          dv[xi][(size_t)(iv + r) * nv + c] +=
              C[r][0] * t.v[0] + C[r][1] * t.v[1] + C[r][2] * t.v[2];
      }
    }
  }
}

/* a free body's rows of ∂q⁺ and ∂v⁺ (rows of ∂v⁺ on entry: ∂w⁺, the velocity update in the
 * frame of q), by the chain rule through free_flyer.c's positions: with
 * u_l = w_l + ω⁺ × c (body frame, u = R u_l), θ = Δt (ω⁺ − ½ K G), E_θ = exp(−[θ]×),
 *   δθ⁺ = E_θ δθ + Jr(θ) Δt (dω⁺ − ½ K dG),   du_l' = dw_l − [c]× dω⁺ − [u_l]× δθ   (Rᵀ du),
 *   δp⁺ = E_θ (δp − [c]× δθ + Δt du_l') + [c]× δθ⁺   (c⁺ = p + R c + Δt u, p⁺ = c⁺ − R⁺ c),
 *   dv⁺_l = [E_θ u_l]× δθ⁺ + E_θ du_l' + [c]× dω⁺,   dv⁺_ω = dω⁺   (v⁺_l = R⁺ᵀ u − ω⁺ × c),
 * δp, δθ the body's own columns of ∂q; x (nv) is scratch */
static void free_body_rows(const mr_model *m, const mr_data *d, mr_step_derivatives *sd, int i,
                           double dt, const double *vn, const double *lag, double *x) {
  const int nv = m->nv, iv = m->bodies[i].joint.idx_v, ia = iv + 3;
  const mr_vec3 c = m->bodies[i].inertia.c, wp = vec_at(vn + ia);
  const mr_vec3 ul = mr_v3_add(vec_at(vn + iv), mr_v3_cross(wp, c));
  mr_mat3 K = mr_m3_zero();
  if (mr_free_flyer_spins(m, d, i)) {
    double C[6][3];
    angular_columns(m, d, iv, x, C);
    K = lower_block(C);
  }
  mr_mat3 Et, Jt;
  so3_series(mr_v3_scale(mr_v3_sub(wp, vec_at(lag + ia)), dt), &Et, &Jt);
  const mr_vec3 u1 = mr_m3_mulv(&Et, ul);
  const mr_mat3 Sc = mr_m3_skew(c), Sul = mr_m3_skew(ul), Su1 = mr_m3_skew(u1);
  double *const dv[3] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau};
  double *const dq[3] = {sd->dqn_dq, sd->dqn_dv, sd->dqn_dtau};
  for (int xi = 0; xi < 3; ++xi) {
    const double *Gx = impulse_rows(sd, xi);
    for (int k = 0; k < nv; ++k) {
      double col[6];
      for (int r = 0; r < 6; ++r)
        col[r] = dv[xi][(size_t)(iv + r) * nv + k];
      const mr_vec3 dwl = vec_at(col), dwp = vec_at(col + 3);
      const mr_vec3 dG = mr_v3(Gx[(size_t)ia * nv + k], Gx[(size_t)(ia + 1) * nv + k],
                               Gx[(size_t)(ia + 2) * nv + k]);
      mr_vec3 dp = mr_v3_zero(), dth = mr_v3_zero();
      if (xi == 0 && k >= iv && k < iv + 3) dp = mr_v3(k == iv, k == iv + 1, k == iv + 2);
      if (xi == 0 && k >= ia && k < ia + 3) dth = mr_v3(k == ia, k == ia + 1, k == ia + 2);
      const mr_vec3 dul = mr_v3_sub(mr_v3_sub(dwl, mr_m3_mulv(&Sc, dwp)), mr_m3_mulv(&Sul, dth));
      const mr_vec3 dtheta = mr_v3_scale(mr_v3_madd(dwp, -0.5, mr_m3_mulv(&K, dG)), dt);
      const mr_vec3 dth1 = mr_v3_add(mr_m3_mulv(&Et, dth), mr_m3_mulv(&Jt, dtheta));
      const mr_vec3 moved = mr_v3_madd(mr_v3_sub(dp, mr_m3_mulv(&Sc, dth)), dt, dul);
      const mr_vec3 dp1 = mr_v3_add(mr_m3_mulv(&Et, moved), mr_m3_mulv(&Sc, dth1));
      const mr_vec3 dvl =
          mr_v3_add(mr_v3_add(mr_m3_mulv(&Su1, dth1), mr_m3_mulv(&Et, dul)), mr_m3_mulv(&Sc, dwp));
      for (int r = 0; r < 3; ++r) {
        dq[xi][(size_t)(iv + r) * nv + k] = dp1.v[r];
        dq[xi][(size_t)(ia + r) * nv + k] = dth1.v[r];
        dv[xi][(size_t)(iv + r) * nv + k] = dvl.v[r];
      }
    }
  }
}

/* ∂q⁺ of every joint, then the free bodies' rows of ∂q⁺ and ∂v⁺; vn (w⁺, the velocity update in
 * the frame of q) is turned into v⁺ by mr_free_flyer_integrate, as mr_sim does; q⁺ into q_next
 * when not NULL (else into work vectors 0 and 1, which hold 2 nv >= nq numbers) */
static void step_configuration(const mr_model *m, const mr_data *d, mr_step_derivatives *sd,
                               double dt, const double *q, double *vn, double *q_next) {
  const int nv = m->nv;
  double *w = work_vector(sd, 3), *x = work_vector(sd, 4), *lag = work_vector(sd, 5);
  configuration_derivatives(m, sd, dt, vn);
  memcpy(w, vn, (size_t)nv * sizeof(double));
  for (int i = 1; i < m->nbodies; ++i)
    if (mr_free_flyer_is_free(m, d, i)) free_body_rows(m, d, sd, i, dt, w, lag, x);
  mr_free_flyer_integrate(m, d, q, vn, lag, dt, q_next ? q_next : work_vector(sd, 0));
}

/* the free step's velocity v⁺ into vn and its derivatives into sd->dvn_*; extra (nv x nv, may be
 * NULL) is subtracted from ∂τ/∂q of the inverse dynamics before the solve (the part of the
 * external forces' q-derivative that does not turn with their bodies) */
static mr_status velocity_step_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                           const mr_step_params *p, const double *q,
                                           const double *v, const double *tau, const double *extra,
                                           double *vn, mr_error *err) {
  const int nv = m->nv;
  double *bias = work_vector(sd, 0), *a = work_vector(sd, 1);
  mr_status st = velocity(m, d, p, q, v, tau, bias, work_vector(sd, 6), vn, err);
  if (st != MR_OK) return st;
  for (int k = 0; k < nv; ++k)
    a[k] = (vn[k] - v[k]) / p->dt + bias[k];
  mr_rnea_derivatives(m, d, sd->rbd, q, v, a);
  if (extra)
    for (size_t r = 0; r < (size_t)nv * (size_t)nv; ++r)
      sd->rbd->dtau_dq[r] -= extra[r];
  velocity_derivatives(m, d, sd, p, v);
  return MR_OK;
}

mr_status mr_step_free_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                   const mr_step_params *p, const double *q, const double *v,
                                   const double *tau, double *q_next, double *v_next,
                                   mr_error *err) {
  const int nv = m->nv;
  double *vn = work_vector(sd, 2);
  mr_status st = velocity_step_derivatives(m, d, sd, p, q, v, tau, NULL, vn, err);
  if (st == MR_OK) st = gyro_step(m, d, sd, p->dt, v, vn, err);
  if (st != MR_OK) return st;
  gyro_apply(m, d, sd, p->dt, v, work_vector(sd, 4));
  step_configuration(m, d, sd, p->dt, q, vn, q_next);
  if (v_next) memcpy(v_next, vn, (size_t)nv * sizeof(double));
  return MR_OK;
}

/* ---- the step with contacts ---- */

/* 1 when body b moves with no dof (the world, or a body welded to it) */
static int is_static(const mr_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent)
    if (m->bodies[b].joint.nv > 0) return 0;
  return 1;
}

/* |cos| within this of 1 (or of 0) makes a direction a face normal (or perpendicular to an
 * axis): the narrowphase's normals of face contacts are the faces' axes to the rounding */
#define ALIGNED 1e-9

/* One side's local model at the contact (mr_contact_side): dir is the surface's outward normal
 * there (world) */
static mr_status side_model(const mr_model *m, const mr_data *d, int gi, mr_vec3 dir,
                            mr_contact_side *sd, mr_error *err) {
  const mr_geom *g = &m->geoms[gi];
  const mr_se3 X = mr_se3_mul(&d->oMi[g->body], &g->placement);
  const mr_vec3 u = mr_m3_tmulv(&X.R, dir); /* in the geometry frame */
  const mr_vec3 ez = mr_v3(X.R.m[0][2], X.R.m[1][2], X.R.m[2][2]);
  sd->radius = 0.0;
  sd->axis = mr_v3_zero();
  switch (g->type) {
  case MR_GEOM_HALFSPACE:
  case MR_GEOM_HEIGHTFIELD:
    sd->radius = MR_CONTACT_FLAT;
    return MR_OK;
  case MR_GEOM_SPHERE:
    sd->radius = g->size[0];
    return MR_OK;
  case MR_GEOM_CAPSULE:
  case MR_GEOM_CYLINDER:
    if (g->type == MR_GEOM_CYLINDER && fabs(u.v[2]) > 1.0 - ALIGNED) {
      sd->radius = MR_CONTACT_FLAT; /* a cap */
    } else if (fabs(u.v[2]) < ALIGNED) {
      sd->radius = g->size[0]; /* the side: the centre slides along the axis */
      sd->axis = ez;
    } else {
      sd->radius = g->type == MR_GEOM_CAPSULE ? g->size[0] : 0.0; /* a cap's sphere, a rim */
    }
    return MR_OK;
  case MR_GEOM_BOX: {
    int small = 0, axis = -1;
    double big = 0.0;
    for (int k = 0; k < 3; ++k) {
      big = fmax(big, fabs(u.v[k]));
      if (fabs(u.v[k]) < ALIGNED) ++small, axis = k;
    }
    if (big > 1.0 - ALIGNED)
      sd->radius = MR_CONTACT_FLAT;
    else if (small == 1) /* an edge along box axis `axis` */
      sd->axis = mr_v3(X.R.m[0][axis], X.R.m[1][axis], X.R.m[2][axis]);
    return MR_OK;
  }
  case MR_GEOM_MESH: {
    /* a face when three hull vertices or more lie on the supporting plane along u */
    const mr_mesh *mesh = g->mesh;
    const int nh = mesh ? mesh->nhull : 0;
    double top = -INFINITY, scale = 0.0;
    for (int k = 0; k < nh; ++k) {
      const double *x = mesh->hull + 3 * k;
      top = fmax(top, u.v[0] * x[0] + u.v[1] * x[1] + u.v[2] * x[2]);
      scale = fmax(scale, fabs(x[0]) + fabs(x[1]) + fabs(x[2]));
    }
    int on = 0;
    for (int k = 0; k < nh; ++k) {
      const double *x = mesh->hull + 3 * k;
      on += u.v[0] * x[0] + u.v[1] * x[1] + u.v[2] * x[2] >= top - ALIGNED * scale;
    }
    if (on >= 3) sd->radius = MR_CONTACT_FLAT;
    return MR_OK;
  }
  default:
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: geometry '%s' (%s): the motion of its contact point "
                        "is not modelled for this shape (its curvature varies along the surface)",
                        g->name, mr_geom_type_name(g->type));
  }
}

mr_status mr_contact_curvature(const mr_model *m, const mr_data *d, const mr_contact *c,
                               mr_contact_side side[2], mr_error *err) {
  const mr_vec3 n = mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
  mr_status st = side_model(m, d, c->geom[0], mr_v3_scale(n, -1.0), &side[0], err);
  if (st == MR_OK) st = side_model(m, d, c->geom[1], n, &side[1], err);
  if (st != MR_OK) return st;
  /* two faces: the normal turns with the second, the point is the first's vertex */
  if (side[0].radius < 0.0 && side[1].radius < 0.0) side[0].radius = 0.0;
  /* against a face, an edge or a side is a line contact or touches at an end: no sliding */
  if (side[0].radius < 0.0 || side[1].radius < 0.0) side[0].axis = side[1].axis = mr_v3_zero();
  if (side[0].radius >= 0.0 && side[1].radius >= 0.0 &&
      !(side[0].radius + side[1].radius + c->phi > 0.0))
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: contact of '%s' with '%s': two vertices or edges "
                        "touching (distance between centres %g), the normal is not defined",
                        m->geoms[c->geom[0]].name, m->geoms[c->geom[1]].name,
                        side[0].radius + side[1].radius + c->phi);
  return MR_OK;
}

mr_status mr_contact_radius(const mr_model *m, const mr_contact *c, double *radius, mr_error *err) {
  const mr_geom *g0 = &m->geoms[c->geom[0]], *g1 = &m->geoms[c->geom[1]];
  if (g1->type != MR_GEOM_HALFSPACE || !is_static(m, g1->body))
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: contact of '%s' with '%s' (%s%s): mr_contact_radius "
                        "takes contacts on a static halfspace (mr_contact_curvature any pair)",
                        g0->name, g1->name, mr_geom_type_name(g1->type),
                        is_static(m, g1->body) ? "" : " on a moving body");
  switch (g0->type) {
  case MR_GEOM_SPHERE:
  case MR_GEOM_CAPSULE:
    *radius = g0->size[0];
    return MR_OK;
  case MR_GEOM_BOX:
  case MR_GEOM_MESH:
    *radius = 0.0;
    return MR_OK;
  default:
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: contact of '%s' (%s) with '%s': the motion of its "
                        "contact point is not modelled for this shape",
                        g0->name, mr_geom_type_name(g0->type), g1->name);
  }
}

/* bytes of the projection's scratch for n rows and v dofs */
static size_t consistency_bytes(size_t n, size_t v) {
  size_t basis = n * (n > v ? v : n), factor = n > v ? v * v : n * n;
  return (basis + factor + 2 * n * n + 8 * n) * sizeof(double) + 16 * 32;
}

size_t mr_step_contact_work_size(const mr_model *m, int nc) {
  const size_t n = 3 * (size_t)(nc > 0 ? nc : 0), v = (size_t)m->nv, b = (size_t)m->nbodies;
  /* A, B; pivots and a column; T, three right-hand sides, E; four nv x nv; two bodies'
   * Jacobians and partial velocities, saved forces, τ', v⁺ */
  /* and the consistent correction's scratch (contact/consistency.h): 2 n² doubles, a few
   * n-vectors and 32-byte alignment of its dozen blocks */
  return (2 * n * n + 2 * n + 5 * n * v + 4 * v * v + 24 * v + 6 * b + 2 * v) * sizeof(double) +
         64 + consistency_bytes(n, v);
}

/* the slope ∂cor/∂Φ of block i's correction (moreau/assembly.h), vn0 = J_N v: for a contact
 * the normal gap law's (an impact where the assembly put a restitution target), for a coupling
 * or a point constraint baumgarte/Δt (every row) */
static double correction_slope(const mr_contact_step *cs, int i, double vn0) {
  const mr_contact_geometry *c = &cs->rows[i];
  const mr_assembly_settings *s = cs->assembly;
  if (c->type == MR_ROWS_MIMIC || c->type == MR_ROWS_POINT) return c->baumgarte / s->dt;
  int impact = cs->rest ? cs->rest[i] != 0.0 : mr_contact_impact(c, vn0, vn0, s);
  return mr_contact_normal_correction(c, vn0, impact, s).slope;
}

static mr_vec3 v3_at(const double *J, int nv, int k, int row0) {
  return mr_v3(J[(size_t)row0 * nv + k], J[(size_t)(row0 + 1) * nv + k],
               J[(size_t)(row0 + 2) * nv + k]);
}

/* A block's geometry as a function of q, for the two bodies' Jacobians (world, at the origin;
 * a static body's are zero) */
typedef struct {
  const mr_contact_geometry *c;
  mr_mat3 C;               /* the frame of the rows: the contact frame, the world's for a point */
  mr_vec3 p[2];            /* where the rows act on each body */
  mr_vec3 n;               /* the normal (contact) */
  mr_contact_side side[2]; /* the sides' models (side_model), contacts only */
  int point;               /* a point constraint */
  const double *J[2];      /* 6 x nv body Jacobians (NULL for a static body) */
} block_geom;

/* the rate of the contact frame (t₁, t₂, n) = mr_contact_frame(n) (src/collision/shape.c) along
 * dn: Frisvad's basis t₁ = (1 − n_x² a, b, −n_x), t₂ = (b, 1 − n_y² a, −n_y) with a = 1/(1 + n_z),
 * b = −n_x n_y a, differentiated; near the pole n_z = −1 (below −0.9999999) the construction
 * about −z, t₁ = (b′, −1 + n_y² c, −n_y), t₂ = (−1 + n_x² c, b′, −n_x) with c = 1/(1 − n_z),
 * b′ = n_x n_y c */
static mr_mat3 frame_rate(mr_vec3 n, mr_vec3 dn) {
  mr_vec3 dt1, dt2;
  if (n.v[2] < -0.9999999) {
    const double c = 1.0 / (1.0 - n.v[2]), dc = dn.v[2] * c * c;
    const double x = n.v[0], y = n.v[1], dx = dn.v[0], dy = dn.v[1];
    const double db = dx * y * c + x * dy * c + x * y * dc;
    dt1 = mr_v3(db, 2.0 * y * dy * c + y * y * dc, -dy);
    dt2 = mr_v3(2.0 * x * dx * c + x * x * dc, db, -dx);
  } else {
    const double a = 1.0 / (1.0 + n.v[2]), da = -dn.v[2] * a * a;
    const double x = n.v[0], y = n.v[1], dx = dn.v[0], dy = dn.v[1];
    const double db = -(dx * y * a + x * dy * a + x * y * da);
    dt1 = mr_v3(-2.0 * x * dx * a - x * x * da, db, -dx);
    dt2 = mr_v3(db, -2.0 * y * dy * a - y * y * da, -dy);
  }
  mr_mat3 F;
  for (int i = 0; i < 3; ++i)
    F.m[i][0] = dt1.v[i], F.m[i][1] = dt2.v[i], F.m[i][2] = dn.v[i];
  return F;
}

/* The motion of block b along column k of the bodies' Jacobians (δₛ = Jₛ eₖ = (vₛ, ωₛ)): the
 * points' displacements dp[s] and the frame's rate dC.
 * A point constraint's anchors are attached to their bodies, the world frame held.
 * A contact, with x₁ = p + ½Φ n and x₂ = p − ½Φ n the surfaces' points, follows its sides'
 * models: a curved side s has its centre cₛ (x₁ + r₁ n, x₂ − r₂ n) attached to its body; a flat
 * side turns the normal with its body. So
 *   second side flat:  dn = ω₂ × n,  dp = dc₁ − r₁ dn − ½ dΦ n − ½ Φ dn,
 *   first side flat:   dn = ω₁ × n,  dp = dc₂ + r₂ dn + ½ dΦ n + ½ Φ dn,
 *   both curved:       dn = (1 − n nᵀ)(dc₁ − dc₂)/ℓ, ℓ = r₁ + r₂ + Φ,
 *                      dp = ½ (dc₁ + dc₂) − ½ (r₁ − r₂) dn,
 * with dΦ = nᵀ (δ₁ − δ₂ at p) (= J_N eₖ: the normal is the gradient of the distance). The frame
 * is the collision module's function of n (frame_rate), differentiated along dn. */
static void block_motion(const block_geom *b, int nv, int k, mr_vec3 dp[2], mr_mat3 *dC) {
  mr_vec3 v[2], w[2];
  for (int s = 0; s < 2; ++s) {
    v[s] = b->J[s] ? v3_at(b->J[s], nv, k, 0) : mr_v3_zero();
    w[s] = b->J[s] ? v3_at(b->J[s], nv, k, 3) : mr_v3_zero();
  }
  *dC = (mr_mat3){{{0}}};
  if (b->point) {
    for (int s = 0; s < 2; ++s)
      dp[s] = mr_v3_add(v[s], mr_v3_cross(w[s], b->p[s]));
    return;
  }
  const mr_vec3 n = b->n, p = b->p[0];
  const double phi = b->c->phi, r1 = b->side[0].radius, r2 = b->side[1].radius;
  const mr_vec3 x1 = mr_v3_add(p, mr_v3_scale(n, 0.5 * phi));
  const mr_vec3 x2 = mr_v3_sub(p, mr_v3_scale(n, 0.5 * phi));
  const double dphi = mr_v3_dot(
      n, mr_v3_sub(mr_v3_add(v[0], mr_v3_cross(w[0], p)), mr_v3_add(v[1], mr_v3_cross(w[1], p))));
  mr_vec3 dn, q;
  if (r2 < 0.0) {
    const mr_vec3 c1 = mr_v3_add(x1, mr_v3_scale(n, r1));
    dn = mr_v3_cross(w[1], n);
    q = mr_v3_add(v[0], mr_v3_cross(w[0], c1));
    q = mr_v3_sub(q, mr_v3_scale(dn, r1 + 0.5 * phi));
    q = mr_v3_sub(q, mr_v3_scale(n, 0.5 * dphi));
  } else if (r1 < 0.0) {
    const mr_vec3 c2 = mr_v3_sub(x2, mr_v3_scale(n, r2));
    dn = mr_v3_cross(w[0], n);
    q = mr_v3_add(v[1], mr_v3_cross(w[1], c2));
    q = mr_v3_add(q, mr_v3_scale(dn, r2 + 0.5 * phi));
    q = mr_v3_add(q, mr_v3_scale(n, 0.5 * dphi));
  } else {
    const mr_vec3 c1 = mr_v3_add(x1, mr_v3_scale(n, r1));
    const mr_vec3 c2 = mr_v3_sub(x2, mr_v3_scale(n, r2));
    const double l = r1 + r2 + phi;
    mr_vec3 dc1 = mr_v3_add(v[0], mr_v3_cross(w[0], c1));
    mr_vec3 dc2 = mr_v3_add(v[1], mr_v3_cross(w[1], c2));
    /* a centre on an axis aₛ slides along it so that the line of centres stays perpendicular
     * to it: (dc₁ − dc₂)·aₛ + ℓ n·(ωₛ × aₛ) = 0 */
    const mr_vec3 a1 = b->side[0].axis, a2 = b->side[1].axis, D = mr_v3_sub(dc1, dc2);
    const double g1 = -(mr_v3_dot(D, a1) + l * mr_v3_dot(n, mr_v3_cross(w[0], a1)));
    const double g2 = -(mr_v3_dot(D, a2) + l * mr_v3_dot(n, mr_v3_cross(w[1], a2)));
    const double c = mr_v3_dot(a1, a2), det = c * c - 1.0;
    const int on1 = mr_v3_dot(a1, a1) > 0.0, on2 = mr_v3_dot(a2, a2) > 0.0;
    double s1 = 0.0, s2 = 0.0;
    if (on1 && on2) {
      if (fabs(det) > 1e-9) s2 = (g2 - c * g1) / det, s1 = g1 + c * s2; /* else parallel */
    } else if (on1) {
      s1 = g1;
    } else if (on2) {
      s2 = -g2;
    }
    dc1 = mr_v3_add(dc1, mr_v3_scale(a1, s1));
    dc2 = mr_v3_add(dc2, mr_v3_scale(a2, s2));
    const mr_vec3 dd = mr_v3_sub(dc1, dc2);
    dn = mr_v3_scale(mr_v3_sub(dd, mr_v3_scale(n, mr_v3_dot(n, dd))), 1.0 / l);
    q = mr_v3_sub(mr_v3_scale(mr_v3_add(dc1, dc2), 0.5), mr_v3_scale(dn, 0.5 * (r1 - r2)));
  }
  dp[0] = dp[1] = q;
  *dC = frame_rate(n, dn);
}

/* 1 when dof k moves one of block b's bodies */
static int column_moves(const block_geom *b, int nv, int k) {
  for (int s = 0; s < 2; ++s)
    if (b->J[s]) {
      const mr_vec3 vs = v3_at(b->J[s], nv, k, 0), ws = v3_at(b->J[s], nv, k, 3);
      if (mr_v3_dot(vs, vs) + mr_v3_dot(ws, ws) != 0.0) return 1;
    }
  return 0;
}

/* block b's force f = C λ on body 1 at p₁ and −f on body 2 at p₂: added to f_ext in the bodies'
 * frames (where the RNEA derivatives turn them with the bodies), and the correction to that
 * turning into X (nv x nv, accumulated): the wrench σ (f, pₛ × f) at the origin on body s
 * (σ = ±1) changes along column k by dW = σ (df, dpₛ × f + pₛ × df), df = dC λ, instead of
 * δₛ ×* W, so the generalized force Jₛᵀ W gains Jₛᵀ (dW − δₛ ×* W) */
static void block_force(const mr_model *m, mr_data *d, const block_geom *b, const double *lam,
                        double *X) {
  const int nv = m->nv;
  const mr_vec3 f = mr_m3_mulv(&b->C, mr_v3(lam[0], lam[1], lam[2]));
  const int body[2] = {b->c->body1, b->c->body2};
  for (int s = 0; s < 2; ++s) {
    if (!b->J[s]) continue;
    const double sg = s == 0 ? 1.0 : -1.0;
    const mr_force W = {mr_v3_scale(f, sg), mr_v3_scale(mr_v3_cross(b->p[s], f), sg)};
    const mr_force Wb = mr_se3_inv_act_force(&d->oMi[body[s]], W);
    d->f_ext[body[s]].f = mr_v3_add(d->f_ext[body[s]].f, Wb.f);
    d->f_ext[body[s]].n = mr_v3_add(d->f_ext[body[s]].n, Wb.n);
  }
  for (int k = 0; k < nv; ++k) {
    mr_vec3 dp[2];
    mr_mat3 dC;
    if (!column_moves(b, nv, k)) continue;
    block_motion(b, nv, k, dp, &dC);
    const mr_vec3 df = mr_m3_mulv(&dC, mr_v3(lam[0], lam[1], lam[2]));
    for (int s = 0; s < 2; ++s) {
      if (!b->J[s]) continue;
      const double sg = s == 0 ? 1.0 : -1.0;
      const mr_vec3 vs = v3_at(b->J[s], nv, k, 0), ws = v3_at(b->J[s], nv, k, 3);
      const mr_vec3 ps = b->p[s];
      /* dW − δₛ ×* W, with δ ×* (F, N) = (ω × F, ω × N + v × F) */
      const mr_vec3 cf = mr_v3_scale(mr_v3_sub(df, mr_v3_cross(ws, f)), sg);
      mr_vec3 cn = mr_v3_add(mr_v3_cross(dp[s], f), mr_v3_cross(ps, df));
      cn = mr_v3_sub(cn, mr_v3_add(mr_v3_cross(ws, mr_v3_cross(ps, f)), mr_v3_cross(vs, f)));
      cn = mr_v3_scale(cn, sg);
      for (int j = 0; j < nv; ++j)
        X[(size_t)j * nv + k] +=
            mr_v3_dot(v3_at(b->J[s], nv, j, 0), cf) + mr_v3_dot(v3_at(b->J[s], nv, j, 3), cn);
    }
  }
}

/* u (6 nv): for every dof k on the path of body a, the velocity of a at the origin contributed
 * by the dofs of body(k)'s joint and of its descendants on that path, at w; moving qₖ turns them
 * by Sₖ, so ∂(J_a w)/∂qₖ = Sₖ × uₖ. Also J_a w into Va. */
static void partial_velocities(const mr_model *m, int a, const double *Ja, const double *w,
                               double *u, double Va[6]) {
  const int nv = m->nv;
  double run[6] = {0};
  for (int b = a; b > 0; b = m->bodies[b].parent) {
    const mr_joint *jt = &m->bodies[b].joint;
    for (int j = jt->idx_v; j < jt->idx_v + jt->nv; ++j)
      for (int e = 0; e < 6; ++e)
        run[e] += Ja[(size_t)e * nv + j] * w[j];
    for (int j = jt->idx_v; j < jt->idx_v + jt->nv; ++j)
      memcpy(u + 6 * j, run, sizeof run);
  }
  memcpy(Va, run, sizeof run);
}

/* rows 3i .. 3i + 2 of E = ∂(J w)/∂q at w = v⁺: J w = Cᵀ (V₁(p₁) − V₂(p₂)), Vₛ(x) the velocity
 * of body s's point at x, so along column k
 *   d(J w) = Cᵀ (dV₁ − dV₂) + dCᵀ (V₁(p₁) − V₂(p₂)),  dVₛ = dvₛ + dωₛ × pₛ + ωₛ × dpₛ,
 * (dvₛ, dωₛ) = ∂(Jₛ w)/∂qₖ; u: 12 nv scratch */
static void block_jacobian_rate(const mr_model *m, const block_geom *b, const double *w, double *u,
                                double *E) {
  const int nv = m->nv;
  const int body[2] = {b->c->body1, b->c->body2};
  double V[2][6] = {{0}};
  for (int s = 0; s < 2; ++s)
    if (b->J[s]) partial_velocities(m, body[s], b->J[s], w, u + 6 * (size_t)nv * s, V[s]);
  mr_vec3 rel = mr_v3_zero();
  for (int s = 0; s < 2; ++s) {
    const mr_vec3 Vp = mr_v3_add(mr_v3(V[s][0], V[s][1], V[s][2]),
                                 mr_v3_cross(mr_v3(V[s][3], V[s][4], V[s][5]), b->p[s]));
    rel = s == 0 ? Vp : mr_v3_sub(rel, Vp);
  }
  for (int k = 0; k < nv; ++k) {
    mr_vec3 dp[2], rate = mr_v3_zero();
    mr_mat3 dC;
    if (!column_moves(b, nv, k)) continue;
    block_motion(b, nv, k, dp, &dC);
    for (int s = 0; s < 2; ++s) {
      if (!b->J[s]) continue;
      const double *us = u + 6 * (size_t)nv * s + 6 * (size_t)k;
      const mr_vec3 vs = v3_at(b->J[s], nv, k, 0), ws = v3_at(b->J[s], nv, k, 3);
      mr_vec3 dv = mr_v3_zero(), dw = mr_v3_zero();
      if (mr_v3_dot(vs, vs) + mr_v3_dot(ws, ws) != 0.0) {
        const mr_vec3 uv = mr_v3(us[0], us[1], us[2]), uw = mr_v3(us[3], us[4], us[5]);
        dv = mr_v3_add(mr_v3_cross(ws, uv), mr_v3_cross(vs, uw));
        dw = mr_v3_cross(ws, uw);
      }
      const mr_vec3 om = mr_v3(V[s][3], V[s][4], V[s][5]);
      const mr_vec3 dV = mr_v3_add(mr_v3_add(dv, mr_v3_cross(dw, b->p[s])), mr_v3_cross(om, dp[s]));
      rate = s == 0 ? mr_v3_add(rate, dV) : mr_v3_sub(rate, dV);
    }
    const mr_vec3 in_frame = mr_v3_add(mr_m3_tmulv(&b->C, rate), mr_m3_tmulv(&dC, rel));
    for (int e = 0; e < 3; ++e)
      E[(size_t)e * nv + k] = in_frame.v[e];
  }
}

/* block i's geometry at q (J1, J2: 6 nv each, filled for the moving bodies) */
static block_geom block_at(const mr_model *m, mr_data *d, const mr_contact_step *cs, int i,
                           double *J1, double *J2) {
  const mr_contact_geometry *c = &cs->rows[i];
  block_geom b = {.c = c, .point = c->type == MR_ROWS_POINT};
  b.C = b.point ? mr_m3_identity() : c->frame;
  b.p[0] = c->point;
  b.p[1] = b.point ? c->point2 : c->point;
  b.n = mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
  if (cs->sides) {
    b.side[0] = cs->sides[2 * i], b.side[1] = cs->sides[2 * i + 1];
  } else {
    b.side[0] = (mr_contact_side){cs->radius ? cs->radius[i] : 0.0, mr_v3_zero()};
    b.side[1] = (mr_contact_side){MR_CONTACT_FLAT, mr_v3_zero()};
  }
  double *Js[2] = {J1, J2};
  const int body[2] = {c->body1, c->body2};
  for (int s = 0; s < 2; ++s) {
    b.J[s] = NULL;
    if (is_static(m, body[s])) continue;
    mr_body_jacobian(m, d, body[s], MR_WORLD, Js[s]);
    b.J[s] = Js[s];
  }
  return b;
}

/* C = A B (A: r x s, B: s x t, row-major; C may not alias) */
static void matmul(double *C, const double *A, const double *B, int r, int s, int t) {
  memset(C, 0, (size_t)r * (size_t)t * sizeof(double));
  for (int i = 0; i < r; ++i)
    for (int k = 0; k < s; ++k) {
      const double a = A[(size_t)i * s + k];
      if (a == 0.0) continue;
      for (int j = 0; j < t; ++j)
        C[(size_t)i * t + j] += a * B[(size_t)k * t + j];
    }
}

/* Y = Jᵀ L (J: n x nv, L: n x nv) */
static void transpose_mul(double *Y, const double *J, const double *L, int n, int nv) {
  memset(Y, 0, (size_t)nv * (size_t)nv * sizeof(double));
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < nv; ++j) {
      const double a = J[(size_t)r * nv + j];
      if (a == 0.0) continue;
      for (int k = 0; k < nv; ++k)
        Y[(size_t)j * nv + k] += a * L[(size_t)r * nv + k];
    }
}

/* the blocks' forces as external forces (f_ext, τ'), X the correction of their q-derivative
 * (J1, J2: 6 nv scratch each) */
static void contact_forces(const mr_model *m, mr_data *d, const mr_contact_step *cs,
                           double *tau_eff, double *J1, double *J2, double *X) {
  const int nv = m->nv;
  for (int i = 0; i < cs->prob->nc; ++i) {
    const mr_contact_geometry *c = &cs->rows[i];
    const double *lam = cs->lambda + 3 * i, *Ji = cs->J + (size_t)3 * i * nv;
    if (c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_MIMIC) {
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < nv; ++k)
          tau_eff[k] += Ji[(size_t)r * nv + k] * lam[r];
      continue;
    }
    const block_geom b = block_at(m, d, cs, i, J1, J2);
    block_force(m, d, &b, lam, X);
  }
}

/* E = ∂(Δt g)/∂q at fixed v⁺ (3nc x nv): the rate of J at w = v⁺ and the correction's slope
 * times ∂Φ/∂q (a contact's normal row: J_N; a point constraint's three rows: J, the anchors
 * attached to their bodies), the latter projected as the step projects the correction
 * (contact/consistency.h; the projector held fixed), in S (3nc x nv) with scratch ar */
static void explicit_q_rate(const mr_model *m, mr_data *d, const mr_contact_step *cs,
                            const double *v, const double *vn, double *J1, double *J2, double *u,
                            double *E, double *S, mr_arena *ar) {
  const int nv = m->nv;
  const size_t nn = (size_t)3 * cs->prob->nc * nv;
  memset(E, 0, nn * sizeof(double));
  memset(S, 0, nn * sizeof(double));
  for (int i = 0; i < cs->prob->nc; ++i) {
    const mr_contact_geometry *c = &cs->rows[i];
    const double *Ji = cs->J + (size_t)3 * i * nv;
    double *Ei = E + (size_t)3 * i * nv;
    if (c->type == MR_ROWS_CONTACT || c->type == MR_ROWS_POINT) {
      const block_geom b = block_at(m, d, cs, i, J1, J2);
      block_jacobian_rate(m, &b, vn, u, Ei);
    }
    double vn0 = 0.0;
    for (int k = 0; k < nv; ++k)
      vn0 += Ji[(size_t)2 * nv + k] * v[k];
    const double slope = correction_slope(cs, i, vn0);
    double *Si = S + (size_t)3 * i * nv;
    for (int r = c->type == MR_ROWS_POINT ? 0 : 2; r < 3; ++r)
      for (int k = 0; k < nv; ++k)
        Si[(size_t)r * nv + k] = slope * Ji[(size_t)r * nv + k];
  }
  if (mr_problem_has_G(cs->prob))
    mr_contact_consistent_columns(cs->prob, cs->J, nv, cs->assembly->band, S, nv, ar);
  for (size_t r = 0; r < nn; ++r)
    E[r] += S[r];
}

/* dλ/dx for the three inputs: A dλ = B (J ∂ṽ/∂x + [x = q] E) / Δt, the rows of A that are
 * equations of c regularised by ρ when A is singular (redundant contacts) */
static mr_status solve_multipliers(const mr_contact_step *cs, int nv, double dt, double *A,
                                   double *B, int *piv, double *col, double *T, double *const L[3],
                                   const double *const dv[3], const double *E, mr_error *err) {
  const mr_contact_problem *p = cs->prob;
  const int n = 3 * p->nc;
  mr_contact_active_set(p, cs->lambda, cs->c, cs->tol, A, B, NULL);
  for (int x = 0; x < 3; ++x) {
    matmul(T, cs->J, dv[x], n, nv, nv);
    if (x == 0)
      for (size_t r = 0; r < (size_t)n * nv; ++r)
        T[r] += E[r];
    matmul(L[x], B, T, n, n, nv);
    for (size_t r = 0; r < (size_t)n * nv; ++r)
      L[x][r] /= dt;
  }
  if (mr_active_set_factor(A, n, piv) != 0) {
    double gmax = 0.0;
    for (int r = 0; r < n; ++r)
      gmax = fmax(gmax, p->G[(size_t)r * n + r]);
    mr_contact_active_set(p, cs->lambda, cs->c, cs->tol, A, B, NULL);
    /* a row of A holds an equation of c where B has its −1 */
    for (int r = 0; r < n; ++r)
      if (B[(size_t)r * n + r] == -1.0) A[(size_t)r * n + r] += 1e-12 * gmax;
    if (mr_active_set_factor(A, n, piv) != 0)
      return mr_error_set(err, MR_ERR_NUMERIC,
                          "step derivatives: the active-set system of %d blocks is singular",
                          p->nc);
  }
  for (int x = 0; x < 3; ++x)
    mr_active_set_solve(A, n, piv, L[x], nv, col);
  return MR_OK;
}

mr_status mr_step_contact_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                      const mr_step_params *p, const double *q, const double *v,
                                      const double *tau, const mr_contact_step *cs, double *q_next,
                                      double *v_next, void *work, mr_error *err) {
  const int nv = m->nv, nc = cs->prob->nc, n = 3 * nc, nb = m->nbodies;
  const size_t n2 = (size_t)nv * (size_t)nv, nn = (size_t)n * (size_t)nv;
  if (cs->assembly->dt != p->dt)
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: the assembly's time step %g differs from the step's %g",
                        cs->assembly->dt, p->dt);
  double *A = (double *)work, *B = A + (size_t)n * n, *col = B + (size_t)n * n;
  int *piv = (int *)(col + n);
  double *T = col + 2 * (size_t)n, *Lq = T + nn, *Lv = Lq + nn, *Lt = Lv + nn, *E = Lt + nn;
  double *X = E + nn, *Y = X + n2, *Z = Y + n2, *W = Z + n2, *J1 = W + n2;
  double *J2 = J1 + 6 * (size_t)nv, *u = J2 + 6 * (size_t)nv;
  double *fsave = u + 12 * (size_t)nv, *tau_eff = fsave + 6 * (size_t)nb, *vn = tau_eff + nv;
  /* the forces of λ as external forces: v⁺ is the free step under them */
  mr_forward_kinematics(m, d, q, NULL, NULL);
  memcpy(fsave, d->f_ext, (size_t)nb * sizeof(mr_force));
  memcpy(tau_eff, tau, (size_t)nv * sizeof(double));
  /* a spinning free body's gyroscopic impulse G: the solver sees v_f with G_f, the impulse of
   * the free velocity without the contact forces; v⁺ has G of the velocity with them (sim.c,
   * free_flyer.c). That first step and its derivatives, G_f's share of both kept in
   * work_vector(sd, 3) and Y, Z, W */
  const int spin = any_spin(m, d);
  double *const dv[3] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau}, *const Gf[3] = {Y, Z, W};
  double *gyro = work_vector(sd, 3);
  mr_status st = MR_OK;
  if (spin) {
    st = velocity_step_derivatives(m, d, sd, p, q, v, tau, NULL, vn, err);
    for (int x = 0; st == MR_OK && x < 3; ++x)
      memcpy(Gf[x], dv[x], n2 * sizeof(double));
    if (st == MR_OK) st = gyro_step(m, d, sd, p->dt, v, vn, err);
    if (st != MR_OK) return st;
    gyro_apply(m, d, sd, p->dt, v, work_vector(sd, 4));
    for (int x = 0; x < 3; ++x)
      for (size_t r = 0; r < n2; ++r)
        Gf[x][r] = dv[x][r] - Gf[x][r];
    for (int k = 0; k < nv; ++k)
      gyro[k] = vn[k] - gyro[k];
    mr_forward_kinematics(m, d, q, NULL, NULL);
  }
  memset(X, 0, n2 * sizeof(double));
  contact_forces(m, d, cs, tau_eff, J1, J2, X);
  st = velocity_step_derivatives(m, d, sd, p, q, v, tau_eff, X, vn, err);
  memcpy(d->f_ext, fsave, (size_t)nb * sizeof(mr_force));
  if (st != MR_OK) return st;
  if (n > 0) {
    /* λ moves with x through g: dv⁺/dx = ∂ṽ/∂x + Δt M̃⁻¹ Jᵀ dλ/dx, ṽ the solver's velocity at
     * fixed λ (with G_f) */
    for (int x = 0; spin && x < 3; ++x)
      for (size_t r = 0; r < n2; ++r)
        dv[x][r] += Gf[x][r];
    for (int k = 0; spin && k < nv; ++k)
      vn[k] += gyro[k];
    mr_arena ar = {(unsigned char *)(vn + nv), consistency_bytes((size_t)n, (size_t)nv), 0, 0};
    explicit_q_rate(m, d, cs, v, vn, J1, J2, u, E, T, &ar);
    double *const L[3] = {Lq, Lv, Lt};
    st = solve_multipliers(cs, nv, p->dt, A, B, piv, col, T, L, (const double *const *)dv, E, err);
    if (st != MR_OK) return st;
    for (int x = 0; spin && x < 3; ++x) /* G_f out again */
      for (size_t r = 0; r < n2; ++r)
        dv[x][r] -= Gf[x][r];
    for (int k = 0; spin && k < nv; ++k)
      vn[k] -= gyro[k];
    transpose_mul(X, cs->J, Lq, n, nv);
    transpose_mul(Y, cs->J, Lv, n, nv);
    transpose_mul(Z, cs->J, Lt, n, nv);
    mr_ldlt_solve_rows(d, nv, X, Y); /* the factor of M̃ from the free step */
    memset(W, 0, n2 * sizeof(double));
    mr_ldlt_solve_rows(d, nv, Z, W); /* W: a zero second operand */
    for (size_t r = 0; r < n2; ++r) {
      sd->dvn_dq[r] += p->dt * X[r];
      sd->dvn_dv[r] += p->dt * Y[r];
      sd->dvn_dtau[r] += p->dt * Z[r];
    }
  }
  /* v⁺: the velocity with the contact forces, then G of it (the lag only, without spin) */
  st = gyro_step(m, d, sd, p->dt, v, vn, err);
  if (st != MR_OK) return st;
  if (spin) gyro_apply(m, d, sd, p->dt, v, work_vector(sd, 4));
  step_configuration(m, d, sd, p->dt, q, vn, q_next);
  if (v_next) memcpy(v_next, vn, (size_t)nv * sizeof(double));
  return MR_OK;
}
