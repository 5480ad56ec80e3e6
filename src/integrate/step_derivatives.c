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

mr_status mr_contact_radius(const mr_model *m, const mr_contact *c, double *radius,
                            mr_error *err) {
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

size_t mr_step_contact_work_size(const mr_model *m, int nc) {
  const size_t n = 3 * (size_t)(nc > 0 ? nc : 0), v = (size_t)m->nv, b = (size_t)m->nbodies;
  /* A, B; pivots and a column; T, three right-hand sides, E; four nv x nv; two bodies'
   * Jacobians and partial velocities, saved forces, τ', v⁺ */
  return (2 * n * n + 2 * n + 5 * n * v + 4 * v * v + 24 * v + 6 * b + 2 * v) * sizeof(double) +
         64;
}

/* the slope ∂cor/∂Φ of a block's correction (moreau/assembly.h), vn0 = J_N v: for a contact
 * the normal gap's, for a coupling or a point constraint baumgarte/Δt (every row) */
static double correction_slope(const mr_contact_geometry *c, double vn0,
                               const mr_assembly_settings *s) {
  if (c->type == MR_ROWS_MIMIC || c->type == MR_ROWS_POINT) return c->baumgarte / s->dt;
  const double gap = c->phi >= -s->band ? 1.0 / s->dt : s->baumgarte / s->dt;
  if (!(c->is_new && c->restitution > 0.0 && vn0 < -s->restitution_threshold)) return gap;
  if (c->phi > -vn0 * s->dt) return gap;
  return c->phi >= 0.0 ? 0.0 : s->baumgarte / s->dt;
}

static mr_vec3 v3_at(const double *J, int nv, int k, int row0) {
  return mr_v3(J[(size_t)row0 * nv + k], J[(size_t)(row0 + 1) * nv + k],
               J[(size_t)(row0 + 2) * nv + k]);
}

/* A block's geometry as a function of q, for the two bodies' Jacobians (world, at the origin;
 * a static body's are zero) */
typedef struct {
  const mr_contact_geometry *c;
  mr_mat3 C;          /* the frame of the rows: the contact frame, the world's for a point */
  mr_vec3 p[2];       /* where the rows act on each body */
  mr_vec3 n;          /* the normal (contact) */
  mr_contact_side side[2]; /* the sides' models (side_model), contacts only */
  int point;          /* a point constraint */
  const double *J[2]; /* 6 x nv body Jacobians (NULL for a static body) */
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
  const double dphi = mr_v3_dot(n, mr_v3_sub(mr_v3_add(v[0], mr_v3_cross(w[0], p)),
                                             mr_v3_add(v[1], mr_v3_cross(w[1], p))));
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
        X[(size_t)j * nv + k] += mr_v3_dot(v3_at(b->J[s], nv, j, 0), cf) +
                                 mr_v3_dot(v3_at(b->J[s], nv, j, 3), cn);
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
static void block_jacobian_rate(const mr_model *m, const block_geom *b, const double *w,
                                double *u, double *E) {
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
      const mr_vec3 dV = mr_v3_add(mr_v3_add(dv, mr_v3_cross(dw, b->p[s])),
                                   mr_v3_cross(om, dp[s]));
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
 * attached to their bodies) */
static void explicit_q_rate(const mr_model *m, mr_data *d, const mr_contact_step *cs,
                            const double *v, const double *vn, double *J1, double *J2, double *u,
                            double *E) {
  const int nv = m->nv;
  memset(E, 0, (size_t)3 * cs->prob->nc * nv * sizeof(double));
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
    const double slope = correction_slope(c, vn0, cs->assembly);
    for (int r = c->type == MR_ROWS_POINT ? 0 : 2; r < 3; ++r)
      for (int k = 0; k < nv; ++k)
        Ei[(size_t)r * nv + k] += slope * Ji[(size_t)r * nv + k];
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
  double *X = E + nn, *Y = X + n2, *Z = Y + n2, *W = Z + n2, *J1 = W + n2;
  double *J2 = J1 + 6 * (size_t)nv, *u = J2 + 6 * (size_t)nv;
  double *fsave = u + 12 * (size_t)nv, *tau_eff = fsave + 6 * (size_t)nb, *vn = tau_eff + nv;
  /* the forces of λ as external forces: v⁺ is the free step under them */
  mr_forward_kinematics(m, d, q, NULL, NULL);
  memcpy(fsave, d->f_ext, (size_t)nb * sizeof(mr_force));
  memcpy(tau_eff, tau, (size_t)nv * sizeof(double));
  memset(X, 0, n2 * sizeof(double));
  contact_forces(m, d, cs, tau_eff, J1, J2, X);
  mr_status st = velocity_step_derivatives(m, d, sd, p, q, v, tau_eff, X, vn, err);
  memcpy(d->f_ext, fsave, (size_t)nb * sizeof(mr_force));
  if (st != MR_OK) return st;
  if (n > 0) {
    /* λ moves with x through g: dv⁺/dx = ∂ṽ/∂x + Δt M̃⁻¹ Jᵀ dλ/dx */
    explicit_q_rate(m, d, cs, v, vn, J1, J2, u, E);
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
