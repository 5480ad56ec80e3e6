/* Forward kinematics: body placements from q, and body velocities and accelerations in body
 * frames (Featherstone, RBDA §4.4; S is constant in the child frame, so Ṡ q̇ = v × S q̇):
 *   ᵢMⱼ = placement ∘ joint(qᵢ),   ⁰Mᵢ = ⁰M_λ(i) ᵢM,
 *   vᵢ = ᵢX_λ v_λ + Sᵢ q̇ᵢ,        aᵢ = ᵢX_λ a_λ + Sᵢ q̈ᵢ + vᵢ × Sᵢ q̇ᵢ. */
#include <string.h>

#include "dynamics/internal.h"

void mr_dyn_placements(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_work *w = mr_work(d);
  size_t bytes = (size_t)m->nq * sizeof(double);
  if (q != d->q) memcpy(d->q, q, bytes);
  if (w->placed && memcmp(w->q_placed, q, bytes) == 0) return;
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_body *b = &m->bodies[i];
    mr_joint_place[w->kind[i]](b, q + b->joint.idx_q, &d->liMi[i]);
    d->oMi[i] = b->parent > 0 ? mr_se3_mul(&d->oMi[b->parent], &d->liMi[i]) : d->liMi[i];
  }
  memcpy(w->q_placed, q, bytes);
  w->placed = 1;
}

void mr_forward_kinematics(const mr_model *m, mr_data *d, const double *q, const double *v,
                           const double *a) {
  const mr_dyn_work *w = mr_work(d);
  mr_dyn_placements(m, d, q);
  if (!v) return;
  d->vb[0] = d->ab[0] = mr_motion_zero();
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    const int p = m->bodies[i].parent;
    mr_motion vj = mr_joint_motion(w->S + j->idx_v, v + j->idx_v, j->nv);
    d->vb[i] = mr_motion_add(mr_se3_inv_act_motion(&d->liMi[i], d->vb[p]), vj);
    if (!a) continue;
    mr_motion aj = mr_joint_motion(w->S + j->idx_v, a + j->idx_v, j->nv);
    d->ab[i] = mr_motion_add(mr_se3_inv_act_motion(&d->liMi[i], d->ab[p]),
                             mr_motion_add(aj, mr_motion_cross(d->vb[i], vj)));
  }
  memcpy(d->v, v, (size_t)m->nv * sizeof(double));
  if (a) memcpy(d->a, a, (size_t)m->nv * sizeof(double));
}

void mr_update_frames(const mr_model *m, mr_data *d) {
  for (int f = 0; f < m->nframes; ++f)
    d->oMf[f] = mr_se3_mul(&d->oMi[m->frames[f].body], &m->frames[f].placement);
}
