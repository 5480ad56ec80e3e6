/* Analytical derivatives of RNEA and ABA (Carpentier & Mansard, RSS 2018), every spatial
 * quantity in the world frame at the world origin (as in aba.c and crba.c).
 *
 * RNEA in the world frame, with Sₖ the world columns of joint k and λ(i) the parent of body i:
 *   vᵢ = v_λ + Sᵢ q̇ᵢ,  aᵢ = a_λ + Sᵢ q̈ᵢ + vᵢ × Sᵢ q̇ᵢ (a₀ = (−g, 0)),
 *   fᵢ = Yᵢ aᵢ + vᵢ ×* Yᵢ vᵢ − fᵢᵉˣᵗ,   Fᵢ = Σ_{sub(i)} f,   τⱼ = Sⱼᵀ F_body(j) + armature q̈ⱼ.
 * Moving q ⊕ ε eₖ (k a dof of body b, λ = λ(b)) turns the whole subtree of b by the twist Sₖ:
 * its columns, inertias and external forces are carried along (δX = Sₖ × X, δY = Sₖ ×* Y −
 * Y Sₖ×), and for i in sub(b)
 *   ∂vᵢ/∂qₖ = Sₖ × vᵢ + dVₖ,              dVₖ = v_λ × Sₖ,
 *   ∂aᵢ/∂qₖ = Sₖ × aᵢ + dAₖ + dVₖ × vᵢ,   dAₖ = a_λ × Sₖ + v_λ × dVₖ,
 *   ∂fᵢ/∂qₖ = Sₖ ×* fᵢ + Yᵢ dAₖ + Dᵢ dVₖ,
 *   ∂vᵢ/∂q̇ₖ = Sₖ,  ∂aᵢ/∂q̇ₖ = dAvₖ + Sₖ × vᵢ,  dAvₖ = v_b × Sₖ + dVₖ,
 *   ∂fᵢ/∂q̇ₖ = Yᵢ dAvₖ + Dᵢ Sₖ,
 * where Dᵢ x = vᵢ ×* Yᵢ x − Yᵢ (vᵢ × x) + x ×* hᵢ (hᵢ = Yᵢ vᵢ) is the Coriolis operator of body i;
 * with Yᵢ in origin form (m, first moment c, I about the origin), Ω = [ω]×, V = [v]×, C = [c]×:
 *   D = [[0, −2 [h_f]×], [0, Ω I − I Ω − V C − C V − [h_n]×]]  (it reads only x's angular part).
 * The rotation part Sₖ ×* fᵢ cancels against δSⱼ for the columns carried with the subtree, so
 * with composites Yᶜ, Dᶜ, F summed over subtrees:
 *   body(j) in sub(b):        ∂τⱼ/∂qₖ = Sⱼᵀ (Yᶜ_body(j) dAₖ + Dᶜ_body(j) dVₖ),
 *                             ∂τⱼ/∂q̇ₖ = Sⱼᵀ (Yᶜ_body(j) dAvₖ + Dᶜ_body(j) Sₖ),
 *   body(j) above b:          ∂τⱼ/∂qₖ = Sⱼᵀ (Yᶜ_b dAₖ + Dᶜ_b dVₖ + Sₖ ×* F_b),
 *                             ∂τⱼ/∂q̇ₖ = Sⱼᵀ (Yᶜ_b dAvₖ + Dᶜ_b Sₖ),
 * and zero elsewhere. One backward pass fills, at body i, its rows against the columns of its
 * ancestors (through Pⱼ = Yᶜᵢ Sⱼ and Qⱼ = Dᶜᵢᵀ Sⱼ) and its columns against its ancestors' rows,
 * so the cost is O(nv · depth); ∂τ/∂q̈ = Pⱼᵀ Sₖ = M comes out of the same pass.
 *
 * ABA derivatives: q̈ = ABA(q, v, τ), then the RNEA derivatives at a = q̈ on ABA's placements
 * and world terms (RNEA(q, v, q̈) = τ identically, so ∂q̈ = −M⁻¹ ∂τ), and M⁻¹ applied to whole
 * matrices with the tree-sparse LDLᵀ factor. ∂τ/∂q and ∂τ/∂v are solved together, interleaved
 * column by column: both are nonzero only where row and column dofs lie on one path from the
 * root, so under U⁻¹ row k stays zero beyond its subtree's last column and that sweep stops
 * there; each row then gathers its subtree's (U⁻¹) or its ancestors' (U⁻ᵀ) rows block by block
 * in registers. */
#include <stdlib.h>
#include <string.h>

#include "dynamics/derivatives_internal.h"
#include "dynamics/internal.h"

/* the Coriolis operator of a body or a subtree: D x = (−2 h_f × x_w, D22 x_w) */
typedef struct {
  mr_vec3 hf;
  mr_mat3 D22;
} coriolis;

typedef struct {
  void *block;
  mr_motion *ov, *oa;   /* world velocity and acceleration of each body (nb) */
  mr_force *F;          /* body force, then composite over the subtree (nb) */
  coriolis *D;          /* Coriolis operator, then composite (nb) */
  mr_motion *dV, *dA;   /* per dof: v_λ × S, a_λ × S + v_λ × dV (nv) */
  mr_motion *dAv;       /* per dof: v_b × S + dV (nv) */
  double *W;            /* ∂τ/∂q and ∂τ/∂v interleaved by column, then −M⁻¹ of it (nv x 2nv) */
  int *lead;            /* per dof: columns of W's row that may be nonzero before U⁻ᵀ (nv) */
} deriv_work;

/* columns per block of the M⁻¹ kernels (products with M⁻¹ below) */
enum { BLOCK = 16 };

/* row i of the factor's U, indexed by the column: U(i, k) = factor_row(d, nv, i)[k] for k = i
 * or a descendant of i */
static inline const double *factor_row(const mr_data *d, int nv, int i) {
  return d->U + mr_tri_at(d, i, 0);
}

static inline double factor_u(const mr_data *d, int nv, int i, int k) {
  return factor_row(d, nv, i)[k];
}

/* ---- creation ---- */

/* row width of the workspace W: 2 nv rounded up to whole blocks of the M⁻¹ kernels */
static size_t padded_width(int nv) {
  return (size_t)(2 * nv + BLOCK - 1) / BLOCK * BLOCK;
}

mr_derivatives *mr_derivatives_create(const mr_model *m) {
  mr_derivatives *dd = calloc(1, sizeof *dd);
  deriv_work *w = calloc(1, sizeof *w);
  const size_t nv = (size_t)m->nv, nb = (size_t)m->nbodies, n2 = nv * nv;
  size_t bytes = (5 * n2 + nv * padded_width(m->nv)) * sizeof(double) +
                 3 * nb * sizeof(mr_motion) + nb * sizeof(mr_force) + nb * sizeof(coriolis) +
                 3 * nv * sizeof(mr_motion) + nv * sizeof(int);
  unsigned char *p = dd && w ? calloc(1, bytes ? bytes : 1) : NULL;
  if (!p) {
    free(dd), free(w);
    return NULL;
  }
  w->block = p;
  double **mats[] = {&dd->dtau_dq, &dd->dtau_dv, &dd->dddq_dq, &dd->dddq_dv, &dd->dddq_dtau};
  for (int k = 0; k < 5; ++k, p += n2 * sizeof(double))
    *mats[k] = (double *)p;
  w->W = (double *)p, p += nv * padded_width(m->nv) * sizeof(double);
  /* doubles first, then structs of doubles: every piece stays aligned for double */
  w->ov = (mr_motion *)p, p += nb * sizeof(mr_motion);
  w->oa = (mr_motion *)p, p += nb * sizeof(mr_motion);
  w->F = (mr_force *)p, p += nb * sizeof(mr_force);
  w->D = (coriolis *)p, p += nb * sizeof(coriolis);
  w->dV = (mr_motion *)p, p += nv * sizeof(mr_motion);
  w->dA = (mr_motion *)p, p += nv * sizeof(mr_motion);
  w->dAv = (mr_motion *)p, p += nv * sizeof(mr_motion);
  w->lead = (int *)p;
  dd->nv = m->nv;
  dd->work = w;
  return dd;
}

void mr_derivatives_free(mr_derivatives *dd) {
  if (!dd) return;
  free(((deriv_work *)dd->work)->block);
  free(dd->work);
  free(dd);
}

/* ---- the Coriolis operator ---- */

/* D of a body with origin-form inertia Y, velocity v and momentum h = Y v */
static coriolis coriolis_of(const mr_oinertia *Y, mr_motion v, mr_force h) {
  coriolis D;
  const mr_mat3 W = mr_m3_skew(v.w), V = mr_m3_skew(v.v), C = mr_m3_skew(Y->h);
  const mr_mat3 WI = mr_m3_mul(&W, &Y->I), VC = mr_m3_mul(&V, &C);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      D.D22.m[r][c] = WI.m[r][c] + WI.m[c][r] - VC.m[r][c] - VC.m[c][r];
  /* Ω I − I Ω = Ω I + (Ω I)ᵀ and C V = (V C)ᵀ since I is symmetric and Ω, V, C skew */
  const mr_vec3 n = h.n;
  D.D22.m[0][1] += n.v[2], D.D22.m[0][2] -= n.v[1];
  D.D22.m[1][0] -= n.v[2], D.D22.m[1][2] += n.v[0];
  D.D22.m[2][0] += n.v[1], D.D22.m[2][1] -= n.v[0];
  D.hf = h.f;
  return D;
}

static inline void coriolis_add(coriolis *a, const coriolis *b) {
  a->hf = mr_v3_add(a->hf, b->hf);
  a->D22 = mr_m3_add(&a->D22, &b->D22);
}

/* D x */
static inline mr_force coriolis_mul(const coriolis *D, mr_motion x) {
  mr_force f;
  f.f = mr_v3_scale(mr_v3_cross(D->hf, x.w), -2.0);
  f.n = mr_m3_mulv(&D->D22, x.w);
  return f;
}

/* Dᵀ s, as the force whose pairing with x is sᵀ D x */
static inline mr_force coriolis_tmul(const coriolis *D, mr_motion s) {
  mr_force f;
  f.f = mr_v3_zero();
  f.n = mr_v3_add(mr_v3_scale(mr_v3_cross(s.v, D->hf), -2.0), mr_m3_tmulv(&D->D22, s.w));
  return f;
}

/* ---- RNEA derivatives ---- */

/* forward pass: world velocities, accelerations, body forces, Coriolis operators, and the
 * per-dof terms dV, dA, dAv */
static void forward(const mr_model *m, mr_data *d, deriv_work *w, const double *v,
                    const double *a) {
  const mr_dyn_work *dw = mr_work(d);
  w->ov[0] = mr_motion_zero();
  w->oa[0].v = mr_v3_neg(m->gravity), w->oa[0].w = mr_v3_zero();
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_body *b = &m->bodies[i];
    const int iv = b->joint.idx_v, n = b->joint.nv, p = b->parent;
    const mr_motion *S = dw->oS + iv;
    const mr_oinertia *Y = &dw->oY[i];
    mr_motion vj = mr_joint_motion(S, v + iv, n);
    mr_motion vi = mr_motion_add(w->ov[p], vj);
    mr_motion ai = mr_motion_add(w->oa[p], mr_joint_motion(S, a + iv, n));
    ai = mr_motion_add(ai, mr_motion_cross(vi, vj));
    w->ov[i] = vi, w->oa[i] = ai;
    mr_force h = mr_oinertia_mul(Y, vi);
    mr_force f = mr_force_add(mr_oinertia_mul(Y, ai), mr_motion_cross_force(vi, h));
    w->F[i] = mr_force_sub(f, mr_se3_act_force(&d->oMi[i], d->f_ext[i]));
    w->D[i] = coriolis_of(Y, vi, h);
    for (int k = iv; k < iv + n; ++k) {
      const mr_motion Sk = dw->oS[k];
      w->dV[k] = mr_motion_cross(w->ov[p], Sk);
      w->dA[k] = mr_motion_add(mr_motion_cross(w->oa[p], Sk), mr_motion_cross(w->ov[p], w->dV[k]));
      w->dAv[k] = mr_motion_add(mr_motion_cross(vi, Sk), w->dV[k]);
    }
  }
}

/* row j (a dof of body i) against column k (a dof of body i or of an ancestor); returns
 * M[j, k] */
static inline double row_entry(const mr_model *m, mr_data *d, mr_derivatives *dd, int j, int k,
                               mr_force P, mr_force Q) {
  const deriv_work *w = dd->work;
  const mr_motion Sk = mr_work(d)->oS[k];
  const size_t jk = (size_t)j * (size_t)m->nv + (size_t)k;
  dd->dtau_dq[jk] = mr_force_dot(P, w->dA[k]) + mr_force_dot(Q, w->dV[k]);
  dd->dtau_dv[jk] = mr_force_dot(P, w->dAv[k]) + mr_force_dot(Q, Sk);
  return mr_force_dot(P, Sk) + (j == k ? m->armature[j] : 0.0);
}

/* rows of body i's dofs against the columns of i and its ancestors; τ of those rows */
static void rows_of_body(const mr_model *m, mr_data *d, mr_derivatives *dd, int i,
                         const double *a) {
  const mr_dyn_work *dw = mr_work(d);
  const deriv_work *w = dd->work;
  const mr_joint *jt = &m->bodies[i].joint;
  for (int j = jt->idx_v; j < jt->idx_v + jt->nv; ++j) {
    const mr_motion Sj = dw->oS[j];
    const mr_force P = mr_oinertia_mul(&dw->oY[i], Sj), Q = coriolis_tmul(&w->D[i], Sj);
    d->tau_id[j] = mr_force_dot(w->F[i], Sj) + m->armature[j] * a[j];
    /* M's upper triangle: (j, k) within the joint, (k, j) for the ancestors */
    for (int k = jt->idx_v; k < jt->idx_v + jt->nv; ++k) {
      const double x = row_entry(m, d, dd, j, k, P, Q);
      if (k >= j) d->M[mr_tri_at(d, j, k)] = x;
    }
    for (int k = d->parent_dof[jt->idx_v]; k >= 0; k = d->parent_dof[k])
      d->M[mr_tri_at(d, k, j)] = row_entry(m, d, dd, j, k, P, Q);
  }
}

/* columns of body i's dofs against the rows of its strict ancestors */
static void columns_of_body(const mr_model *m, mr_data *d, mr_derivatives *dd, int i) {
  const mr_dyn_work *dw = mr_work(d);
  const deriv_work *w = dd->work;
  const mr_joint *jt = &m->bodies[i].joint;
  const size_t nv = (size_t)m->nv;
  const int top = d->parent_dof[jt->idx_v];
  if (top < 0) return;
  for (int k = jt->idx_v; k < jt->idx_v + jt->nv; ++k) {
    const mr_motion Sk = dw->oS[k];
    mr_force Tq = mr_force_add(mr_oinertia_mul(&dw->oY[i], w->dA[k]),
                               coriolis_mul(&w->D[i], w->dV[k]));
    Tq = mr_force_add(Tq, mr_motion_cross_force(Sk, w->F[i]));
    const mr_force Tv =
        mr_force_add(mr_oinertia_mul(&dw->oY[i], w->dAv[k]), coriolis_mul(&w->D[i], Sk));
    for (int j = top; j >= 0; j = d->parent_dof[j]) {
      const mr_motion Sj = dw->oS[j];
      dd->dtau_dq[j * nv + k] = mr_force_dot(Tq, Sj);
      dd->dtau_dv[j * nv + k] = mr_force_dot(Tv, Sj);
    }
  }
}

/* the RNEA derivatives at the placements and world terms already in d */
static void rnea_derivatives_at(const mr_model *m, mr_data *d, mr_derivatives *dd,
                                const double *v, const double *a) {
  mr_dyn_work *dw = mr_work(d);
  deriv_work *w = dd->work;
  forward(m, d, w, v, a);
  /* leaves to root: each body's composites are final when it is reached */
  for (int i = m->nbodies - 1; i > 0; --i) {
    rows_of_body(m, d, dd, i, a);
    columns_of_body(m, d, dd, i);
    const int p = m->bodies[i].parent;
    if (p <= 0) continue;
    mr_oinertia_add(&dw->oY[p], &dw->oY[i]);
    coriolis_add(&w->D[p], &w->D[i]);
    w->F[p] = mr_force_add(w->F[p], w->F[i]);
  }
}

void mr_rnea_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                         const double *v, const double *a) {
  mr_dyn_placements(m, d, q);
  mr_dyn_world_terms(m, d);
  rnea_derivatives_at(m, d, dd, v, a);
}

/* ---- products with M⁻¹ through the tree-sparse factor ---- */

/* The factor M = U D Uᵀ has U unit upper triangular with Uᵢₖ ≠ 0 only for i an ancestor of k,
 * so M⁻¹ X = U⁻ᵀ D⁻¹ U⁻¹ X is, on the rows of a row-major X, a sweep from the leaves in which
 * row i takes away Uᵢₖ times each row k of its subtree (U⁻¹), a scaling (D⁻¹), and a sweep from
 * the root in which row k takes away Uᵢₖ times each row i of its ancestors (U⁻ᵀ). Each pair of a
 * dof and an ancestor costs one row operation. The kernels below do all the pairs of one row
 * per block of BLOCK columns, the block of that row held in registers, so that each pair costs a
 * load and a multiply-subtract per column and the row is loaded and stored once. */

/* row k ← s row k − Σ Uᵢₖ row i over its ancestors i, nearest first, on columns c0 … c0 + nc
 * − 1 (nc ≤ BLOCK) of rows with stride ld */
static inline void gather_ancestors_block(const mr_data *d, int nv, int k, double s, double *X,
                                          size_t ld, size_t c0, size_t nc) {
  const int *par = d->parent_dof;
  double *restrict xk = X + (size_t)k * ld + c0;
  double acc[BLOCK];
  for (size_t j = 0; j < nc; ++j)
    acc[j] = s * xk[j];
  for (int i = par[k]; i >= 0; i = par[i]) {
    const double *restrict xi = X + (size_t)i * ld + c0;
    const double u = factor_u(d, nv, i, k);
    for (size_t j = 0; j < nc; ++j)
      acc[j] -= u * xi[j];
  }
  for (size_t j = 0; j < nc; ++j)
    xk[j] = acc[j];
}

/* D⁻¹ and U⁻ᵀ steps of row k on its columns c0 … len − 1: the row scaled by s = D⁻¹ₖ (times a
 * sign) less its ancestors' final rows */
static void gather_ancestors(const mr_data *d, int nv, int k, double s, double *X, size_t ld,
                             size_t c0, size_t len) {
  size_t c = c0;
  for (; c + BLOCK <= len; c += BLOCK)
    gather_ancestors_block(d, nv, k, s, X, ld, c, BLOCK);
  if (c < len) gather_ancestors_block(d, nv, k, s, X, ld, c, len - c);
}

/* row i −= Σ Uᵢₖ row k over the strict subtree k = i + 1 … end − 1 (contiguous), farthest
 * first, on columns c0 … c0 + nc − 1; rows k are zero from lead[k] on and are skipped there */
static inline void gather_subtree_block(const mr_data *d, int nv, int i, int end, double *X,
                                        size_t ld, const int *lead, size_t c0, size_t nc) {
  double *restrict xi = X + (size_t)i * ld + c0;
  const double *restrict Ui = factor_row(d, nv, i);
  double acc[BLOCK];
  for (size_t j = 0; j < nc; ++j)
    acc[j] = xi[j];
  for (int k = end - 1; k > i; --k) {
    if ((size_t)lead[k] <= c0) continue;
    const double *restrict xk = X + (size_t)k * ld + c0;
    const double u = Ui[k];
    for (size_t j = 0; j < nc; ++j)
      acc[j] -= u * xk[j];
  }
  for (size_t j = 0; j < nc; ++j)
    xi[j] = acc[j];
}

/* U⁻¹ step of row k for any numbering: row k spread to its ancestors on columns 0 … len − 1 */
static void spread_to_ancestors(const mr_data *d, int nv, int k, double *X, size_t ld,
                                size_t len) {
  const double *restrict xk = X + (size_t)k * ld;
  for (int i = d->parent_dof[k]; i >= 0; i = d->parent_dof[i]) {
    double *restrict xi = X + (size_t)i * ld;
    const double u = factor_u(d, nv, i, k);
    for (size_t c = 0; c < len; ++c)
      xi[c] -= u * xk[c];
  }
}

/* X ← s M⁻¹ X for a row-major nv x ld X (ld a multiple of BLOCK) whose row k is zero from
 * column lead[k] on (a multiple of BLOCK): so is row k after U⁻¹, and with contiguous subtrees
 * the U⁻¹ sweep stops there (the subtree's rows are summed in registers block by block) */
static void solve_rows(const mr_data *d, int nv, double *X, size_t ld, const int *lead,
                       double s) {
  const int contiguous = mr_work(d)->contiguous;
  for (int k = nv - 1; k >= 0; --k) {
    if (!contiguous) {
      spread_to_ancestors(d, nv, k, X, ld, ld);
      continue;
    }
    for (size_t c = 0; c < (size_t)lead[k]; c += BLOCK)
      gather_subtree_block(d, nv, k, k + d->nvSubtree[k], X, ld, lead, c, BLOCK);
  }
  for (int k = 0; k < nv; ++k)
    gather_ancestors(d, nv, k, s * d->Dinv[k], X, ld, 0, ld);
}

/* row_i −= u row_k over n entries, for two matrices at once */
static inline void axpy2(double *restrict xi, const double *restrict xk, double *restrict yi,
                         const double *restrict yk, double u, size_t n) {
  for (size_t c = 0; c < n; ++c)
    xi[c] -= u * xk[c];
  for (size_t c = 0; c < n; ++c)
    yi[c] -= u * yk[c];
}

/* X ← M⁻¹ X and Y ← M⁻¹ Y for any row-major nv x nv X and Y: the three stages as operations on
 * rows, both matrices in the same sweep (one walk of the dof chains for the two) */
void mr_ldlt_solve_rows(const mr_data *d, int nv, double *restrict X, double *restrict Y) {
  const int *par = d->parent_dof;
  const size_t n = (size_t)nv;
  /* U⁻¹: descending k, row k spread to its ancestors */
  for (int k = nv - 1; k >= 0; --k)
    for (int i = par[k]; i >= 0; i = par[i])
      axpy2(X + (size_t)i * n, X + (size_t)k * n, Y + (size_t)i * n, Y + (size_t)k * n,
            factor_u(d, nv, i, k), n);
  for (int k = 0; k < nv; ++k)
    for (size_t c = 0; c < n; ++c) {
      X[(size_t)k * n + c] *= d->Dinv[k];
      Y[(size_t)k * n + c] *= d->Dinv[k];
    }
  /* U⁻ᵀ: ascending k, row k gathers its ancestors */
  for (int k = 0; k < nv; ++k)
    for (int i = par[k]; i >= 0; i = par[i])
      axpy2(X + (size_t)k * n, X + (size_t)i * n, Y + (size_t)k * n, Y + (size_t)i * n,
            factor_u(d, nv, i, k), n);
}

/* X = M⁻¹ from the factor, using its structure: W = D⁻¹ U⁻¹ has row k nonzero only on the
 * columns of sub(k) (k … k + nvSubtree[k] − 1 for contiguous subtrees, else k … nv − 1), and
 * M⁻¹ = U⁻ᵀ W is symmetric, so only its upper triangle is formed (row k of U⁻ᵀ W on columns ≥ k
 * needs its ancestors' rows on the same columns only) and then mirrored */
void mr_ldlt_inverse_rows(const mr_data *d, int nv, double *restrict X) {
  const int *par = d->parent_dof;
  const size_t n = (size_t)nv;
  const int contiguous = mr_work(d)->contiguous;
  for (size_t k = 0; k < n; ++k) {
    memset(X + k * n + k, 0, (n - k) * sizeof(double));
    X[k * n + k] = 1.0;
  }
  for (int k = nv - 1; k >= 0; --k) {
    const size_t end = contiguous ? (size_t)(k + d->nvSubtree[k]) : n;
    const double *restrict xk = X + (size_t)k * n;
    for (int i = par[k]; i >= 0; i = par[i]) {
      const double u = factor_u(d, nv, i, k);
      double *restrict xi = X + (size_t)i * n;
      for (size_t c = (size_t)k; c < end; ++c)
        xi[c] -= u * xk[c];
    }
  }
  for (int k = 0; k < nv; ++k)
    gather_ancestors(d, nv, k, d->Dinv[k], X, n, (size_t)k, n);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = r + 1; c < n; ++c)
      X[c * n + r] = X[r * n + c];
}

mr_status mr_aba_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                             const double *v, const double *tau, mr_error *err) {
  const int nv = m->nv;
  const size_t n = (size_t)nv, ld = padded_width(nv);
  deriv_work *w = dd->work;
  double *W = w->W;
  /* ABA leaves the placements and world terms of q in d: the RNEA derivatives reuse them */
  mr_aba(m, d, q, v, tau);
  rnea_derivatives_at(m, d, dd, v, d->ddq);
  mr_status st = mr_ldlt_factor(m, d, err);
  if (st != MR_OK) return st;
  /* ∂q̈/∂(q, v) = −M⁻¹ [∂τ/∂q, ∂τ/∂v] on W, the two interleaved column by column: row k is
   * nonzero only on the columns of k's ancestors and subtree (0 … k + nvSubtree[k] − 1 for
   * contiguous subtrees), one range for both; rows padded with zeros to whole blocks */
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) {
      W[r * ld + 2 * c] = dd->dtau_dq[r * n + c];
      W[r * ld + 2 * c + 1] = dd->dtau_dv[r * n + c];
    }
  for (int k = 0; k < nv; ++k) /* 2 (k + nvSubtree[k]) up to a whole block */
    w->lead[k] = (2 * (k + d->nvSubtree[k]) + BLOCK - 1) / BLOCK * BLOCK;
  solve_rows(d, nv, W, ld, w->lead, -1.0);
  for (size_t r = 0; r < n; ++r)
    for (size_t c = 0; c < n; ++c) {
      dd->dddq_dq[r * n + c] = W[r * ld + 2 * c];
      dd->dddq_dv[r * n + c] = W[r * ld + 2 * c + 1];
    }
  mr_ldlt_inverse_rows(d, nv, dd->dddq_dtau);
  return MR_OK;
}
