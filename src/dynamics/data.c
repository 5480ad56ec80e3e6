/* Allocation of mr_data: every buffer the dynamics algorithms write, sized once from the model
 * (the algorithms themselves never allocate). Also the tree structure of the dofs used by the
 * tree-sparse factorisation: parent_dof and nvSubtree (Featherstone, RBDA §6.3), and the row
 * storage of M and U (moreau/dynamics.h): row k spans k to its last descendant. M and U are a
 * second allocation, zero pages from calloc, so that a long chain whose M is never asked for
 * (rbd without M) does not touch its n² storage. */
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "dynamics/internal.h"

/* one block holding all arrays, carved in order; 64-byte aligned pieces */
typedef struct {
  unsigned char *base;
  size_t off;
} carver;

static void *carve(carver *c, size_t bytes) {
  size_t at = (c->off + 63) & ~(size_t)63;
  c->off = at + bytes;
  return c->base ? c->base + at : NULL;
}

/* lay out every array of d and its workspace w (sizes only when c->base is NULL) */
static void layout(carver *c, mr_data *d, mr_dyn_work *w) {
  size_t nq = (size_t)d->nq, nv = (size_t)d->nv, nb = (size_t)d->nbodies;
  size_t nf = (size_t)(d->nframes > 0 ? d->nframes : 1);
  d->q = carve(c, nq * sizeof(double));
  d->v = carve(c, nv * sizeof(double));
  d->a = carve(c, nv * sizeof(double));
  d->tau = carve(c, nv * sizeof(double));
  d->liMi = carve(c, nb * sizeof(mr_se3));
  d->oMi = carve(c, nb * sizeof(mr_se3));
  d->oMf = carve(c, nf * sizeof(mr_se3));
  d->vb = carve(c, nb * sizeof(mr_motion));
  d->ab = carve(c, nb * sizeof(mr_motion));
  d->fb = carve(c, nb * sizeof(mr_force));
  d->f_ext = carve(c, nb * sizeof(mr_force));
  d->nle = carve(c, nv * sizeof(double));
  d->grav = carve(c, nv * sizeof(double));
  d->ddq = carve(c, nv * sizeof(double));
  d->tau_id = carve(c, nv * sizeof(double));
  d->D = carve(c, nv * sizeof(double));
  d->Dinv = carve(c, nv * sizeof(double));
  d->row_at = carve(c, (nv + 1) * sizeof(size_t));
  d->row_len = carve(c, nv * sizeof(int));
  d->parent_dof = carve(c, nv * sizeof(int));
  d->nvSubtree = carve(c, nv * sizeof(int));
  w->kind = carve(c, nb);
  w->dof_body = carve(c, nv * sizeof(int));
  w->S = carve(c, nv * sizeof(mr_motion));
  w->oS = carve(c, nv * sizeof(mr_motion));
  w->F = carve(c, nv * sizeof(mr_force));
  w->oY = carve(c, nb * sizeof(mr_oinertia));
  w->ov = carve(c, nb * sizeof(mr_motion));
  w->oa = carve(c, nb * sizeof(mr_motion));
  w->oc = carve(c, nb * sizeof(mr_motion));
  w->opA = carve(c, nb * sizeof(mr_force));
  w->Ia = carve(c, nb * 36 * sizeof(double));
  w->Dab = carve(c, nb * 36 * sizeof(double));
  w->u = carve(c, nv * sizeof(double));
  w->tmp = carve(c, (nv + 4) * sizeof(double));
  w->q_placed = carve(c, nq * sizeof(double));
}

/* parent of each dof: the previous dof of the same joint, else the last dof of the nearest
 * ancestor body that has dofs, else -1 */
static void dof_tree(const mr_model *m, mr_data *d) {
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    int p = m->bodies[i].parent, up = -1;
    while (p > 0 && m->bodies[p].joint.nv == 0)
      p = m->bodies[p].parent;
    if (p > 0) up = m->bodies[p].joint.idx_v + m->bodies[p].joint.nv - 1;
    for (int k = 0; k < j->nv; ++k)
      d->parent_dof[j->idx_v + k] = k ? j->idx_v + k - 1 : up;
  }
  for (int k = 0; k < d->nv; ++k)
    d->nvSubtree[k] = 1;
  for (int k = d->nv - 1; k >= 0; --k)
    if (d->parent_dof[k] >= 0) d->nvSubtree[d->parent_dof[k]] += d->nvSubtree[k];
}

/* row k of M and U: columns k … last descendant of k (parents precede children), 3 zeros */
static void tri_rows(mr_data *d) {
  int *last = d->row_len;
  for (int k = 0; k < d->nv; ++k)
    last[k] = k;
  for (int k = d->nv - 1; k >= 0; --k) {
    const int p = d->parent_dof[k];
    if (p >= 0 && last[k] > last[p]) last[p] = last[k];
  }
  d->row_at[0] = 0;
  for (int k = 0; k < d->nv; ++k) {
    d->row_len[k] = last[k] - k + 4;
    d->row_at[k + 1] = d->row_at[k] + (size_t)d->row_len[k];
  }
}

double mr_mass_entry(const mr_data *d, int i, int k) {
  if (i > k) {
    int t = i;
    i = k, k = t;
  }
  return k - i < d->row_len[i] - 3 ? d->M[mr_tri_at(d, i, k)] : 0.0;
}

void mr_mass_dense(const mr_data *d, double *out) {
  const size_t nv = (size_t)d->nv;
  memset(out, 0, nv * nv * sizeof *out);
  for (int i = 0; i < d->nv; ++i)
    for (int k = i; k < i + d->row_len[i] - 3; ++k) {
      const double x = d->M[mr_tri_at(d, i, k)];
      out[(size_t)i * nv + (size_t)k] = out[(size_t)k * nv + (size_t)i] = x;
    }
}

/* whether the dofs are numbered depth-first: the last descendant of every dof k is
 * k + nvSubtree[k] − 1 (then its nvSubtree[k] dofs, itself and its descendants, none below k,
 * are exactly that range) */
static int contiguous_subtrees(const mr_data *d) {
  for (int k = 0; k < d->nv; ++k)
    if (d->row_len[k] - 4 != d->nvSubtree[k] - 1) return 0;
  return 1;
}

/* joint kinds, subspaces and the dof owners */
static void fill_joints(const mr_model *m, mr_dyn_work *w) {
  w->kind[0] = JK_NONE;
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    w->kind[i] = (unsigned char)mr_joint_kind(j);
    mr_joint_subspace(j, w->S + j->idx_v);
    for (int k = 0; k < j->nv; ++k)
      w->dof_body[j->idx_v + k] = i;
  }
}

mr_data *mr_data_create(const mr_model *m) {
  mr_data *d = calloc(1, sizeof *d);
  mr_dyn_work *w = calloc(1, sizeof *w);
  if (!d || !w) goto fail;
  d->nq = m->nq, d->nv = m->nv, d->nbodies = m->nbodies, d->nframes = m->nframes;
  carver c = {NULL, 0};
  layout(&c, d, w);
  c.base = aligned_alloc(64, (c.off + 63) & ~(size_t)63);
  if (!c.base) goto fail;
  memset(c.base, 0, c.off);
  c.off = 0;
  layout(&c, d, w);
  d->work = w;
  w->block = c.base;
  dof_tree(m, d);
  tri_rows(d);
  /* M and U, 1 spare double for 64-byte alignment of U */
  const size_t ntri = (d->row_at[d->nv] + 7) & ~(size_t)7;
  w->tri = calloc(2 * ntri + 8, sizeof(double));
  if (!w->tri) goto fail;
  d->M = (double *)(((uintptr_t)w->tri + 63) & ~(uintptr_t)63);
  d->U = d->M + ntri;
  fill_joints(m, w);
  w->contiguous = contiguous_subtrees(d);
  for (int i = 0; i < m->nbodies; ++i)
    d->liMi[i] = d->oMi[i] = mr_se3_identity();
  for (int f = 0; f < m->nframes; ++f)
    d->oMf[f] = mr_se3_identity();
  for (int k = 0; k < d->nv; ++k)
    d->U[d->row_at[k]] = 1.0, d->D[k] = d->Dinv[k] = 1.0;
  mr_neutral(m, d->q);
  return d;
fail:
  if (w) free(w->block);
  free(d);
  free(w);
  return NULL;
}

void mr_data_free(mr_data *d) {
  if (!d) return;
  free(mr_work(d)->block);
  free(mr_work(d)->tri);
  free(d->work);
  free(d);
}
