/* One free-motion time step and its derivatives (moreau/derivatives.h).
 *
 * The step is mr_sim's semi-implicit Euler step without contacts, constraints or effort limits
 * (for a free body only its velocity update without spin: mr_sim moves free bodies on the chord
 * of their centre of mass, free_flyer.c, which this file does not follow yet;
 * docs/derivatives.md),
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
    d->M[d->row_at[k]] += dt * (gain(p->kd, k) + m->damping[k]) + dt * dt * gain(p->kp, k);
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
  mr_mass_dense(d, sd->dvn_dv);
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

/* the free step's velocity v⁺ into vn and its derivatives into sd->dvn_*; extra (nv x nv, may be
 * NULL) is subtracted from ∂τ/∂q of the inverse dynamics before the solve (the part of the
 * external forces' q-derivative that does not turn with their bodies) */
static mr_status velocity_step_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                           const mr_step_params *p, const double *q,
                                           const double *v, const double *tau,
                                           const double *extra, double *vn, mr_error *err) {
  const int nv = m->nv;
  double *zero = sd->work + (size_t)nv * (size_t)nv, *a = zero + nv;
  mr_status st = velocity(m, d, p, q, v, tau, zero, vn, err);
  if (st != MR_OK) return st;
  for (int k = 0; k < nv; ++k)
    a[k] = (vn[k] - v[k]) / p->dt;
  mr_rnea_derivatives(m, d, sd->rbd, q, v, a);
  if (extra)
    for (size_t r = 0; r < (size_t)nv * (size_t)nv; ++r)
      sd->rbd->dtau_dq[r] -= extra[r];
  velocity_derivatives(m, d, sd, p);
  return MR_OK;
}

mr_status mr_step_free_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                   const mr_step_params *p, const double *q, const double *v,
                                   const double *tau, double *q_next, double *v_next,
                                   mr_error *err) {
  const int nv = m->nv;
  double *vn = sd->work + (size_t)nv * (size_t)nv + 2 * (size_t)nv;
  mr_status st = velocity_step_derivatives(m, d, sd, p, q, v, tau, NULL, vn, err);
  if (st != MR_OK) return st;
  configuration_derivatives(m, sd, p->dt, vn);
  if (v_next) memcpy(v_next, vn, (size_t)nv * sizeof(double));
  if (q_next) mr_integrate(m, q, vn, p->dt, q_next);
  return MR_OK;
}

/* ---- the step with contacts ---- */

/* 1 when body b moves with no dof (the world, or a body welded to it) */
static int is_static(const mr_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent)
    if (m->bodies[b].joint.nv > 0) return 0;
  return 1;
}

mr_status mr_contact_radius(const mr_model *m, const mr_contact *c, double *radius,
                            mr_error *err) {
  const mr_geom *g0 = &m->geoms[c->geom[0]], *g1 = &m->geoms[c->geom[1]];
  if (g1->type != MR_GEOM_HALFSPACE || !is_static(m, g1->body))
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: contact of '%s' with '%s' (%s%s): only contacts on a "
                        "static halfspace are differentiated in q",
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

size_t mr_step_contact_work_size(const mr_model *m, int nc) {
  const size_t n = 3 * (size_t)(nc > 0 ? nc : 0), v = (size_t)m->nv, b = (size_t)m->nbodies;
  /* A, B; pivots and a column; T, three right-hand sides, E; four nv x nv; the body Jacobian,
   * partial velocities, saved forces, τ', v⁺ */
  return (2 * n * n + 2 * n + 5 * n * v + 4 * v * v + 12 * v + 6 * b + 2 * v) * sizeof(double) +
         64;
}

/* the slope ∂cor/∂Φ of a block's normal correction (moreau/assembly.h), vn0 = J_N v */
static double correction_slope(const mr_contact_geometry *c, double vn0,
                               const mr_assembly_settings *s) {
  if (c->type == MR_ROWS_MIMIC) return c->baumgarte / s->dt;
  const double gap = c->phi >= -s->band ? 1.0 / s->dt : s->baumgarte / s->dt;
  if (!(c->is_new && c->restitution > 0.0 && vn0 < -s->restitution_threshold)) return gap;
  if (c->phi > -vn0 * s->dt) return gap;
  return c->phi >= 0.0 ? 0.0 : s->baumgarte / s->dt;
}

static mr_vec3 v3_at(const double *J, int nv, int k, int row0) {
  return mr_v3(J[(size_t)row0 * nv + k], J[(size_t)(row0 + 1) * nv + k],
               J[(size_t)(row0 + 2) * nv + k]);
}

/* the contact point's displacement along a body twist (v_s, ω_s) (world, at the origin): the
 * support point moves with the body (a vertex) or with its centre of curvature (radius r), and
 * the point, midway between the surfaces, by half the gap's change less: P = 1 − ½ n nᵀ */
static mr_vec3 point_motion(mr_vec3 vs, mr_vec3 ws, mr_vec3 p, mr_vec3 n, double r) {
  mr_vec3 x = mr_v3_add(mr_v3_add(vs, mr_v3_cross(ws, p)), mr_v3_scale(mr_v3_cross(ws, n), r));
  return mr_v3_sub(x, mr_v3_scale(n, 0.5 * mr_v3_dot(n, x)));
}

/* contact i's force f = C λᵢ (world) on body1 at p: added to f_ext in its body frame (where it
 * turns with the body), and the correction to that turning in X (nv x nv, accumulated): with
 * the world frame held and the point moving by point_motion, the wrench at the origin
 * (f, p × f) changes along the body twist δ = J_a dq by (0, dp × f) instead of δ ×* (f, p × f),
 * so the generalized force J_aᵀ (f, p × f) gains J_aᵀ ΔW(δ) */
static void contact_force(const mr_model *m, mr_data *d, const mr_contact_geometry *c,
                          const double *lam, double r, const double *Ja, double *X) {
  const int nv = m->nv, a = c->body1;
  const mr_vec3 p = c->point, n = mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
  const mr_vec3 f = mr_m3_mulv(&c->frame, mr_v3(lam[0], lam[1], lam[2]));
  const mr_vec3 pf = mr_v3_cross(p, f);
  const mr_force W = {f, pf}, Wb = mr_se3_inv_act_force(&d->oMi[a], W);
  d->f_ext[a].f = mr_v3_add(d->f_ext[a].f, Wb.f);
  d->f_ext[a].n = mr_v3_add(d->f_ext[a].n, Wb.n);
  for (int k = 0; k < nv; ++k) {
    const mr_vec3 vs = v3_at(Ja, nv, k, 0), ws = v3_at(Ja, nv, k, 3);
    if (mr_v3_dot(vs, vs) + mr_v3_dot(ws, ws) == 0.0) continue;
    const mr_vec3 dp = point_motion(vs, ws, p, n, r);
    const mr_vec3 df = mr_v3_scale(mr_v3_cross(ws, f), -1.0);
    const mr_vec3 dn = mr_v3_sub(mr_v3_sub(mr_v3_cross(dp, f), mr_v3_cross(vs, f)),
                                 mr_v3_cross(ws, pf));
    for (int j = 0; j < nv; ++j)
      X[(size_t)j * nv + k] += mr_v3_dot(v3_at(Ja, nv, j, 0), df) +
                               mr_v3_dot(v3_at(Ja, nv, j, 3), dn);
  }
}

/* rows 3i .. 3i + 2 of E = ∂(J w)/∂q at w = v⁺ (world frame held, point by point_motion) for
 * contact i on body1 a; u: 6 nv scratch for the partial velocities */
static void contact_jacobian_rate(const mr_model *m, const mr_contact_geometry *c, double r,
                                  const double *Ja, const double *vn, double *u, double *E) {
  const int nv = m->nv;
  /* uₖ: the velocity of a contributed by the dofs of body(k)'s joint and of its descendants on
   * the path to a; moving qₖ turns them by Sₖ: ∂(J_a w)/∂qₖ = Sₖ × uₖ */
  double run[6] = {0};
  for (int b = c->body1; b > 0; b = m->bodies[b].parent) {
    const mr_joint *jt = &m->bodies[b].joint;
    for (int j = jt->idx_v; j < jt->idx_v + jt->nv; ++j)
      for (int e = 0; e < 6; ++e)
        run[e] += Ja[(size_t)e * nv + j] * vn[j];
    for (int j = jt->idx_v; j < jt->idx_v + jt->nv; ++j)
      memcpy(u + 6 * j, run, sizeof run);
  }
  double om[6] = {0};
  for (int e = 0; e < 6; ++e)
    for (int j = 0; j < nv; ++j)
      om[e] += Ja[(size_t)e * nv + j] * vn[j];
  const mr_vec3 wa = mr_v3(om[3], om[4], om[5]), p = c->point;
  const mr_vec3 n = mr_v3(c->frame.m[0][2], c->frame.m[1][2], c->frame.m[2][2]);
  for (int k = 0; k < nv; ++k) {
    const mr_vec3 vs = v3_at(Ja, nv, k, 0), ws = v3_at(Ja, nv, k, 3);
    if (mr_v3_dot(vs, vs) + mr_v3_dot(ws, ws) == 0.0) continue;
    const mr_vec3 uv = mr_v3(u[6 * k], u[6 * k + 1], u[6 * k + 2]);
    const mr_vec3 uw = mr_v3(u[6 * k + 3], u[6 * k + 4], u[6 * k + 5]);
    const mr_vec3 dv = mr_v3_add(mr_v3_cross(ws, uv), mr_v3_cross(vs, uw));
    const mr_vec3 dw = mr_v3_cross(ws, uw);
    const mr_vec3 dp = point_motion(vs, ws, p, n, r);
    const mr_vec3 rate =
        mr_v3_add(mr_v3_add(dv, mr_v3_cross(dw, p)), mr_v3_cross(wa, dp));
    const mr_vec3 in_frame = mr_m3_tmulv(&c->frame, rate);
    for (int e = 0; e < 3; ++e)
      E[(size_t)e * nv + k] = in_frame.v[e];
  }
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

/* the blocks' forces as external forces (f_ext, τ'), X the correction of their q-derivative */
static mr_status contact_forces(const mr_model *m, mr_data *d, const mr_contact_step *cs,
                                double *tau_eff, double *Ja, double *X, mr_error *err) {
  const int nv = m->nv;
  for (int i = 0; i < cs->prob->nc; ++i) {
    const mr_contact_geometry *c = &cs->rows[i];
    const double *lam = cs->lambda + 3 * i, *Ji = cs->J + (size_t)3 * i * nv;
    if (c->type == MR_ROWS_POINT)
      return mr_error_set(err, MR_ERR_INVALID,
                          "step derivatives: block %d is a point constraint, which is not "
                          "differentiated in q",
                          i);
    if (c->type == MR_ROWS_LIMIT || c->type == MR_ROWS_MIMIC) {
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < nv; ++k)
          tau_eff[k] += Ji[(size_t)r * nv + k] * lam[r];
      continue;
    }
    if (!is_static(m, c->body2))
      return mr_error_set(err, MR_ERR_INVALID,
                          "step derivatives: contact %d between bodies '%s' and '%s': the second "
                          "body moves, only contacts on static geometry are differentiated in q",
                          i, m->bodies[c->body1].name, m->bodies[c->body2].name);
    if (is_static(m, c->body1)) continue;
    mr_body_jacobian(m, d, c->body1, MR_WORLD, Ja);
    contact_force(m, d, c, lam, cs->radius ? cs->radius[i] : 0.0, Ja, X);
  }
  return MR_OK;
}

/* E = ∂(Δt g)/∂q at fixed v⁺ (3nc x nv): the rate of J at w = v⁺ and the gap correction's
 * slope times ∂Φ/∂q = J_N */
static void explicit_q_rate(const mr_model *m, mr_data *d, const mr_contact_step *cs,
                            const double *v, const double *vn, double *Ja, double *u, double *E) {
  const int nv = m->nv;
  memset(E, 0, (size_t)3 * cs->prob->nc * nv * sizeof(double));
  for (int i = 0; i < cs->prob->nc; ++i) {
    const mr_contact_geometry *c = &cs->rows[i];
    const double *Ji = cs->J + (size_t)3 * i * nv;
    double *Ei = E + (size_t)3 * i * nv;
    if (c->type == MR_ROWS_CONTACT && !is_static(m, c->body1)) {
      mr_body_jacobian(m, d, c->body1, MR_WORLD, Ja);
      contact_jacobian_rate(m, c, cs->radius ? cs->radius[i] : 0.0, Ja, vn, u, Ei);
    }
    double vn0 = 0.0;
    for (int k = 0; k < nv; ++k)
      vn0 += Ji[(size_t)2 * nv + k] * v[k];
    const double slope = correction_slope(c, vn0, cs->assembly);
    for (int k = 0; k < nv; ++k)
      Ei[(size_t)2 * nv + k] += slope * Ji[(size_t)2 * nv + k];
  }
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
                                      const double *tau, const mr_contact_step *cs,
                                      double *q_next, double *v_next, void *work, mr_error *err) {
  const int nv = m->nv, nc = cs->prob->nc, n = 3 * nc, nb = m->nbodies;
  const size_t n2 = (size_t)nv * (size_t)nv, nn = (size_t)n * (size_t)nv;
  if (cs->assembly->dt != p->dt)
    return mr_error_set(err, MR_ERR_INVALID,
                        "step derivatives: the assembly's time step %g differs from the step's %g",
                        cs->assembly->dt, p->dt);
  double *A = (double *)work, *B = A + (size_t)n * n, *col = B + (size_t)n * n;
  int *piv = (int *)(col + n);
  double *T = col + 2 * (size_t)n, *Lq = T + nn, *Lv = Lq + nn, *Lt = Lv + nn, *E = Lt + nn;
  double *X = E + nn, *Y = X + n2, *Z = Y + n2, *W = Z + n2, *Ja = W + n2, *u = Ja + 6 * (size_t)nv;
  double *fsave = u + 6 * (size_t)nv, *tau_eff = fsave + 6 * (size_t)nb, *vn = tau_eff + nv;
  /* the forces of λ as external forces: v⁺ is the free step under them */
  mr_forward_kinematics(m, d, q, NULL, NULL);
  memcpy(fsave, d->f_ext, (size_t)nb * sizeof(mr_force));
  memcpy(tau_eff, tau, (size_t)nv * sizeof(double));
  memset(X, 0, n2 * sizeof(double));
  mr_status st = contact_forces(m, d, cs, tau_eff, Ja, X, err);
  if (st == MR_OK) st = velocity_step_derivatives(m, d, sd, p, q, v, tau_eff, X, vn, err);
  memcpy(d->f_ext, fsave, (size_t)nb * sizeof(mr_force));
  if (st != MR_OK) return st;
  if (n > 0) {
    /* λ moves with x through g: dv⁺/dx = ∂ṽ/∂x + Δt M̃⁻¹ Jᵀ dλ/dx */
    explicit_q_rate(m, d, cs, v, vn, Ja, u, E);
    double *const L[3] = {Lq, Lv, Lt};
    const double *const dv[3] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau};
    st = solve_multipliers(cs, nv, p->dt, A, B, piv, col, T, L, dv, E, err);
    if (st != MR_OK) return st;
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
  configuration_derivatives(m, sd, p->dt, vn);
  if (v_next) memcpy(v_next, vn, (size_t)nv * sizeof(double));
  if (q_next) mr_integrate(m, q, vn, p->dt, q_next);
  return MR_OK;
}
