/* Composite rigid body algorithm in the world frame (Featherstone, RBDA §6.2, in the form
 * Pinocchio uses): with Sᵢ in world coordinates and composite inertias Iᶜᵢ = Σ over the subtree
 * of i of the world-frame body inertias (a plain sum, no frame changes),
 *   M[j, k] = Sⱼᵀ Iᶜ_body(k) S_k   for every dof j on the path from dof k to the root,
 * then the armature is added to the diagonal. Entries of M outside that pattern are zero from
 * mr_data_create and never written. */
#include "dynamics/internal.h"

void mr_dyn_world_terms(const mr_model *m, mr_data *d) {
  mr_dyn_work *w = mr_work(d);
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    const mr_se3 *X = &d->oMi[i];
    for (int k = j->idx_v; k < j->idx_v + j->nv; ++k)
      w->oS[k] = mr_se3_act_motion(X, w->S[k]);
    w->oY[i] = mr_oinertia_from(X, &m->bodies[i].inertia);
  }
}

const double *mr_crba(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_work *w = mr_work(d);
  const int nv = m->nv;
  double *restrict M = d->M;
  mr_dyn_placements(m, d, q);
  mr_dyn_world_terms(m, d);
  for (int i = m->nbodies - 1; i > 0; --i) {
    const mr_body *b = &m->bodies[i];
    const mr_joint *j = &b->joint;
    /* M[path(k), k] = Sᵀ Iᶜ S_k for each dof k of this joint */
    for (int k = j->idx_v; k < j->idx_v + j->nv; ++k) {
      mr_force F = mr_oinertia_mul(&w->oY[i], w->oS[k]);
      for (int r = k; r >= 0; r = d->parent_dof[r]) {
        double x = mr_force_dot(F, w->oS[r]);
        M[r * nv + k] = x;
        M[k * nv + r] = x;
      }
      M[k * nv + k] += m->armature[k];
    }
    /* Iᶜ_λ(i) += Iᶜᵢ */
    if (b->parent > 0) mr_oinertia_add(&w->oY[b->parent], &w->oY[i]);
  }
  return d->M;
}
