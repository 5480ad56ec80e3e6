/* Composite rigid body algorithm in the world frame (Featherstone, RBDA §6.2, in the form
 * Pinocchio uses): with Sᵢ in world coordinates and composite inertias Iᶜᵢ = Σ over the subtree
 * of i of the world-frame body inertias (a plain sum, no frame changes),
 *   M[j, k] = Sⱼᵀ Iᶜ_body(k) S_k   for every dof j on the path from dof k to the root,
 * then the armature is added to the diagonal. M is written in its row storage (upper triangle,
 * row r over r's descendants, moreau/dynamics.h); entries of a row that are not descendants
 * (other numberings than depth-first) are zero from mr_data_create and never written. */
#include "dynamics/internal.h"

/* the world motion of a one-axis joint's column: rotation (p × R a, R a), translation (R a, 0);
 * R a is a column of R for the x, y, z kinds */
static inline mr_motion world_axis(const mr_se3 *X, int kind, mr_vec3 axis, mr_vec3 S_v) {
  mr_motion r;
  if (kind == JK_PRISMATIC) {
    r.v = mr_m3_mulv(&X->R, S_v);
    r.w = mr_v3_zero();
    return r;
  }
  if (kind == JK_REV)
    r.w = mr_m3_mulv(&X->R, axis);
  else {
    const int c = kind - JK_REV_X;
    r.w = mr_v3(X->R.m[0][c], X->R.m[1][c], X->R.m[2][c]);
  }
  r.v = mr_v3_cross(X->p, r.w);
  return r;
}

void mr_dyn_world_terms(const mr_model *m, mr_data *d) {
  mr_dyn_work *w = mr_work(d);
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    const mr_se3 *X = &d->oMi[i];
    const int kind = w->kind[i];
    if (kind >= JK_REV_X && kind <= JK_PRISMATIC)
      w->oS[j->idx_v] = world_axis(X, kind, j->axis, w->S[j->idx_v].v);
    else
      for (int k = j->idx_v; k < j->idx_v + j->nv; ++k)
        w->oS[k] = mr_se3_act_motion(X, w->S[k]);
    w->oY[i] = mr_oinertia_from(X, &m->bodies[i].inertia);
  }
}

/* M[path(k), k] for the dofs k of body i, walking λ chains (any numbering) */
static void columns_chains(const mr_model *m, mr_data *d, int i) {
  mr_dyn_work *w = mr_work(d);
  const mr_joint *j = &m->bodies[i].joint;
  double *restrict M = d->M;
  for (int k = j->idx_v; k < j->idx_v + j->nv; ++k) {
    const mr_force F = w->F[k];
    for (int r = k; r >= 0; r = d->parent_dof[r])
      M[mr_tri_at(d, r, k)] = mr_force_dot(F, w->oS[r]);
  }
}

/* M[r, sub(r)] for the dofs r of body i when subtrees are contiguous ranges: independent
 * products over a range, no chain to chase; F of every descendant is already final */
static void rows_contiguous(const mr_model *m, mr_data *d, int i) {
  mr_dyn_work *w = mr_work(d);
  const mr_joint *j = &m->bodies[i].joint;
  for (int r = j->idx_v; r < j->idx_v + j->nv; ++r) {
    const mr_motion S = w->oS[r];
    double *restrict Mr = d->M + d->row_at[r];
    for (int t = 0; t < d->nvSubtree[r]; ++t)
      Mr[t] = mr_force_dot(w->F[r + t], S);
  }
}

const double *mr_crba(const mr_model *m, mr_data *d, const double *q) {
  mr_dyn_work *w = mr_work(d);
  mr_dyn_placements(m, d, q);
  mr_dyn_world_terms(m, d);
  for (int i = m->nbodies - 1; i > 0; --i) {
    const mr_body *b = &m->bodies[i];
    const mr_joint *j = &b->joint;
    /* F_k = Iᶜᵢ S_k, Iᶜᵢ final since every descendant was merged */
    for (int k = j->idx_v; k < j->idx_v + j->nv; ++k)
      w->F[k] = mr_oinertia_mul(&w->oY[i], w->oS[k]);
    if (w->contiguous)
      rows_contiguous(m, d, i);
    else
      columns_chains(m, d, i);
    for (int k = j->idx_v; k < j->idx_v + j->nv; ++k)
      d->M[d->row_at[k]] += m->armature[k];
    /* Iᶜ_λ(i) += Iᶜᵢ */
    if (b->parent > 0) mr_oinertia_add(&w->oY[b->parent], &w->oY[i]);
  }
  return d->M;
}
