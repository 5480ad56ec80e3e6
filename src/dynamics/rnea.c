/* Recursive Newton-Euler inverse dynamics in body frames (Featherstone, RBDA Table 5.1), with
 * gravity as a fictitious base acceleration a₀ = −g:
 *   forward:  vᵢ, aᵢ as in forward kinematics,  fᵢ = Iᵢ aᵢ + vᵢ ×* Iᵢ vᵢ − fᵢᵉˣᵗ
 *   backward: τᵢ = Sᵢᵀ fᵢ + armature q̈ᵢ,      f_λ(i) += λXᵢ* fᵢ.
 * Nonlinear effects b(q, v) are RNEA(q, v, 0) and generalized gravity RNEA(q, 0, 0), both
 * without external forces. */
#include <string.h>

#include "dynamics/internal.h"

/* forward pass; v or a may be NULL (zero); fext adds the external forces */
static void forward(const mr_model *m, mr_data *d, const double *v, const double *a, int fext) {
  const mr_dyn_work *w = mr_work(d);
  d->vb[0] = mr_motion_zero();
  d->ab[0].v = mr_v3_neg(m->gravity);
  d->ab[0].w = mr_v3_zero();
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_body *b = &m->bodies[i];
    const mr_joint *j = &b->joint;
    const mr_motion *S = w->S + j->idx_v;
    mr_motion vj = v ? mr_joint_motion(S, v + j->idx_v, j->nv) : mr_motion_zero();
    mr_motion aj = a ? mr_joint_motion(S, a + j->idx_v, j->nv) : mr_motion_zero();
    const mr_se3 *X = &d->liMi[i];
    mr_motion vi = mr_motion_add(mr_se3_inv_act_motion(X, d->vb[b->parent]), vj);
    mr_motion ai = mr_motion_add(mr_se3_inv_act_motion(X, d->ab[b->parent]), aj);
    if (v) ai = mr_motion_add(ai, mr_motion_cross(vi, vj));
    d->vb[i] = vi, d->ab[i] = ai;
    mr_force f = mr_inertia_mul(&b->inertia, ai);
    if (v) f = mr_force_add(f, mr_motion_cross_force(vi, mr_inertia_mul(&b->inertia, vi)));
    d->fb[i] = fext ? mr_force_sub(f, d->f_ext[i]) : f;
  }
}

/* backward pass into tau */
static void backward(const mr_model *m, mr_data *d, const double *a, double *tau) {
  const mr_dyn_work *w = mr_work(d);
  for (int i = m->nbodies - 1; i > 0; --i) {
    const mr_body *b = &m->bodies[i];
    const mr_joint *j = &b->joint;
    for (int k = 0; k < j->nv; ++k) {
      int iv = j->idx_v + k;
      tau[iv] = mr_force_dot(d->fb[i], w->S[iv]);
      if (a) tau[iv] += m->armature[iv] * a[iv];
    }
    if (b->parent > 0)
      d->fb[b->parent] = mr_force_add(d->fb[b->parent], mr_se3_act_force(&d->liMi[i], d->fb[i]));
  }
}

const double *mr_rnea(const mr_model *m, mr_data *d, const double *q, const double *v,
                      const double *a) {
  mr_dyn_placements(m, d, q);
  forward(m, d, v, a, 1);
  backward(m, d, a, d->tau_id);
  return d->tau_id;
}

const double *mr_nonlinear_effects(const mr_model *m, mr_data *d, const double *q,
                                   const double *v) {
  mr_dyn_placements(m, d, q);
  forward(m, d, v, NULL, 0);
  backward(m, d, NULL, d->nle);
  return d->nle;
}

const double *mr_generalized_gravity(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_placements(m, d, q);
  forward(m, d, NULL, NULL, 0);
  backward(m, d, NULL, d->grav);
  return d->grav;
}
