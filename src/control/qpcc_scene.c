/* A QPCC built from a simulator's state (qpcc.h, docs/qpcc.md): the mass matrix and bias from
 * the dynamics, the contacts from the collision pipeline with their Jacobian rows as the normal
 * and the 4-facet pyramid's tangent rows, the controlled dofs as the decision inputs, and a
 * target-velocity objective with a torque penalty. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/contact_rows.h"
#include "moreau/qpcc.h"

mr_qpcc_scene_options mr_qpcc_scene_options_default(void) {
  return (mr_qpcc_scene_options){NULL, 0, NULL, NULL, 1e-4};
}

void mr_qpcc_scene_free(mr_qpcc_scene *q) {
  if (!q) return;
  free(q->dofs), free(q->contacts), free(q->M), free(q->f), free(q->A), free(q->u_lb);
  free(q->u_ub), free(q->N), free(q->D), free(q->mu), free(q->H), free(q->c), free(q->nd);
  memset(q, 0, sizeof *q);
}

/* 1 when velocity coordinate k belongs to a 1-dof joint */
static int one_dof(const mr_model *m, int k) {
  const mr_joint *j = &m->bodies[m->dof_body[k]].joint;
  return j->nv == 1 && j->type != MR_JOINT_NONE;
}

/* the controlled dofs into dofs (NULL: count only), checked against the model */
static mr_status controlled(const mr_model *m, const mr_qpcc_scene_options *o, int *dofs, int *nu,
                            mr_error *err) {
  int n = 0;
  if (!o->dofs) {
    for (int k = 0; k < m->nv; ++k)
      if (one_dof(m, k) && m->effort_limit[k] > 0) {
        if (dofs) dofs[n] = k;
        ++n;
      }
    *nu = n;
    return MR_OK;
  }
  if (o->ndofs < 0 || o->ndofs > m->nv)
    return mr_error_set(err, MR_ERR_INVALID, "qpcc from a scene: %d controlled dofs for nv = %d",
                        o->ndofs, m->nv);
  for (int i = 0; i < o->ndofs; ++i) {
    int k = o->dofs[i];
    if (k < 0 || k >= m->nv || !one_dof(m, k))
      return mr_error_set(err, MR_ERR_INVALID,
                          "qpcc from a scene: controlled dof %d is not a 1-dof joint's velocity "
                          "coordinate (nv = %d)",
                          k, m->nv);
    for (int j = 0; j < i; ++j)
      if (o->dofs[j] == k)
        return mr_error_set(err, MR_ERR_INVALID, "qpcc from a scene: dof %d is listed twice", k);
    if (dofs) dofs[i] = k;
  }
  *nu = o->ndofs;
  return MR_OK;
}

static mr_status check_options(const mr_model *m, const mr_qpcc_scene_options *o, mr_error *err) {
  if (!(o->torque_weight >= 0) || !isfinite(o->torque_weight))
    return mr_error_set(err, MR_ERR_INVALID,
                        "qpcc from a scene: torque_weight %g must be a finite number >= 0",
                        o->torque_weight);
  for (int k = 0; k < m->nv; ++k) {
    if (o->v_target && !isfinite(o->v_target[k]))
      return mr_error_set(err, MR_ERR_INVALID, "qpcc from a scene: v_target[%d] = %g", k,
                          o->v_target[k]);
    if (o->v_weight && (!(o->v_weight[k] >= 0) || !isfinite(o->v_weight[k])))
      return mr_error_set(err, MR_ERR_INVALID,
                          "qpcc from a scene: v_weight[%d] = %g must be a finite number >= 0", k,
                          o->v_weight[k]);
  }
  return MR_OK;
}

static mr_status allocate(mr_qpcc_scene *q, int nv, int nu, int nc) {
  size_t v = (size_t)nv, u = (size_t)nu, c = (size_t)nc, y = v + u;
  q->dofs = calloc(u + 1, sizeof *q->dofs);
  q->contacts = calloc(c + 1, sizeof *q->contacts);
  q->M = calloc(v * v, sizeof *q->M), q->f = calloc(v, sizeof *q->f);
  q->A = calloc(v * u + 1, sizeof *q->A);
  q->u_lb = calloc(u + 1, sizeof *q->u_lb), q->u_ub = calloc(u + 1, sizeof *q->u_ub);
  q->N = calloc(c * v + 1, sizeof *q->N), q->D = calloc(4 * c * v + 1, sizeof *q->D);
  q->mu = calloc(c + 1, sizeof *q->mu), q->nd = calloc(c + 1, sizeof *q->nd);
  q->H = calloc(y * y, sizeof *q->H), q->c = calloc(y, sizeof *q->c);
  int ok = q->dofs && q->contacts && q->M && q->f && q->A && q->u_lb && q->u_ub && q->N && q->D &&
           q->mu && q->nd && q->H && q->c;
  return ok ? MR_OK : MR_ERR_NOMEM;
}

/* M̃ = M + Δt diag(damping), f̃ = M v − Δt b */
static void dynamics(const mr_model *m, mr_data *d, const double *q, const double *v, double dt,
                     mr_qpcc_scene *out) {
  int nv = m->nv;
  mr_crba(m, d, q);
  mr_mass_dense(d, out->M);
  const double *b = mr_nonlinear_effects(m, d, q, v);
  for (int i = 0; i < nv; ++i) {
    double s = 0;
    for (int k = 0; k < nv; ++k)
      s += out->M[(size_t)i * nv + k] * v[k];
    out->f[i] = s - dt * b[i];
  }
  for (int i = 0; i < nv; ++i)
    out->M[(size_t)i * nv + i] += dt * m->damping[i];
}

/* N and the pyramid rows ±t₁, ±t₂ of each contact from its Jacobian (kinematics at q) */
static void contact_rows(const mr_model *m, mr_data *d, mr_qpcc_scene *out, double *J,
                         double *scratch) {
  int nv = m->nv;
  for (int i = 0; i < out->nc; ++i) {
    const mr_contact *c = &out->contacts[i];
    mr_detected_contact_jacobian(m, d, c, J, scratch);
    memcpy(out->N + (size_t)i * nv, J + 2 * (size_t)nv, sizeof(double) * (size_t)nv);
    for (int k = 0; k < 4; ++k) {
      double *row = out->D + (size_t)(4 * i + k) * nv, s = k % 2 ? -1.0 : 1.0;
      for (int j = 0; j < nv; ++j)
        row[j] = s * J[(size_t)(k / 2) * nv + j];
    }
    out->nd[i] = 4, out->mu[i] = c->mu;
  }
}

/* A, the bounds ± effort limit, and G = ½ Σ w (ṗ − v*)² + ½ r Σ u² as (H, c, c₀) */
static void controls_and_objective(const mr_model *m, const mr_qpcc_scene_options *o,
                                   const double *v, mr_qpcc_scene *out) {
  int nv = m->nv, nu = out->nu, ny = nv + nu;
  for (int j = 0; j < nu; ++j) {
    int k = out->dofs[j];
    double e = m->effort_limit[k];
    out->A[(size_t)k * nu + j] = 1;
    out->u_lb[j] = isfinite(e) ? -e : -HUGE_VAL, out->u_ub[j] = isfinite(e) ? e : HUGE_VAL;
    out->H[(size_t)(nv + j) * ny + nv + j] = o->torque_weight;
  }
  double c0 = 0;
  for (int k = 0; k < nv; ++k) {
    double w = o->v_weight ? o->v_weight[k] : 1.0, t = o->v_target ? o->v_target[k] : v[k];
    out->H[(size_t)k * ny + k] = w, out->c[k] = -w * t, c0 += 0.5 * w * t * t;
  }
  out->problem.c0 = c0;
}

mr_status mr_qpcc_from_sim(mr_sim *s, const mr_qpcc_scene_options *o, mr_qpcc_scene *out,
                           mr_error *err) {
  mr_qpcc_scene_options def = mr_qpcc_scene_options_default();
  if (!o) o = &def;
  memset(out, 0, sizeof *out);
  const mr_model *m = mr_sim_model(s);
  int nu = 0, nc = 0, nv = m->nv;
  const mr_contact *contacts = NULL;
  mr_status st = check_options(m, o, err);
  if (!st) st = controlled(m, o, NULL, &nu, err);
  if (!st) st = mr_sim_collide(s, &contacts, &nc, err);
  if (st) return st;
  mr_data *d = mr_data_create(m);
  double *J = calloc(3 * (size_t)nv + 1, sizeof *J),
         *scratch = calloc(3 * (size_t)nv + 1, sizeof *J);
  out->nv = nv, out->nu = nu, out->nc = nc;
  if (!d || !J || !scratch || allocate(out, nv, nu, nc)) {
    mr_data_free(d), free(J), free(scratch), mr_qpcc_scene_free(out);
    return mr_error_set(err, MR_ERR_NOMEM, "qpcc from a scene: out of memory (%d contacts)", nc);
  }
  controlled(m, o, out->dofs, &nu, err);
  memcpy(out->contacts, contacts, sizeof *contacts * (size_t)nc);
  const double *q = mr_sim_q(s), *v = mr_sim_v(s);
  double dt = mr_sim_world(s)->timestep;
  dynamics(m, d, q, v, dt, out);
  mr_forward_kinematics(m, d, q, NULL, NULL);
  contact_rows(m, d, out, J, scratch);
  controls_and_objective(m, o, v, out);
  mr_data_free(d), free(J), free(scratch);
  double c0 = out->problem.c0;
  out->problem = (mr_qpcc_problem){.nv = nv,
                                   .nu = nu,
                                   .nc = nc,
                                   .dt = dt,
                                   .M = out->M,
                                   .f = out->f,
                                   .A = nu ? out->A : NULL,
                                   .u_lb = out->u_lb,
                                   .u_ub = out->u_ub,
                                   .N = out->N,
                                   .nd = out->nd,
                                   .D = out->D,
                                   .mu = out->mu,
                                   .H = out->H,
                                   .c = out->c,
                                   .c0 = c0};
  return mr_qpcc_validate(&out->problem, err);
}
