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
 * ABA derivatives: q̈ = ABA(q, v, τ), then the RNEA derivatives at a = q̈ (RNEA(q, v, q̈) = τ
 * identically, so ∂q̈ = −M⁻¹ ∂τ), and M⁻¹ applied to whole matrices with the tree-sparse LDLᵀ
 * factor (row operations on row-major matrices, contiguous inner loops). */
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
} deriv_work;

/* ---- creation ---- */

mr_derivatives *mr_derivatives_create(const mr_model *m) {
  mr_derivatives *dd = calloc(1, sizeof *dd);
  deriv_work *w = calloc(1, sizeof *w);
  const size_t nv = (size_t)m->nv, nb = (size_t)m->nbodies, n2 = nv * nv;
  size_t bytes = 5 * n2 * sizeof(double) + 3 * nb * sizeof(mr_motion) + nb * sizeof(mr_force) +
                 nb * sizeof(coriolis) + 3 * nv * sizeof(mr_motion);
  unsigned char *p = dd && w ? calloc(1, bytes ? bytes : 1) : NULL;
  if (!p) {
    free(dd), free(w);
    return NULL;
  }
  w->block = p;
  double **mats[] = {&dd->dtau_dq, &dd->dtau_dv, &dd->dddq_dq, &dd->dddq_dv, &dd->dddq_dtau};
  for (int k = 0; k < 5; ++k, p += n2 * sizeof(double))
    *mats[k] = (double *)p;
  /* doubles first, then structs of doubles: every piece stays aligned for double */
  w->ov = (mr_motion *)p, p += nb * sizeof(mr_motion);
  w->oa = (mr_motion *)p, p += nb * sizeof(mr_motion);
  w->F = (mr_force *)p, p += nb * sizeof(mr_force);
  w->D = (coriolis *)p, p += nb * sizeof(coriolis);
  w->dV = (mr_motion *)p, p += nv * sizeof(mr_motion);
  w->dA = (mr_motion *)p, p += nv * sizeof(mr_motion);
  w->dAv = (mr_motion *)p;
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

void mr_rnea_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                         const double *v, const double *a) {
  mr_dyn_work *dw = mr_work(d);
  deriv_work *w = dd->work;
  mr_dyn_placements(m, d, q);
  mr_dyn_world_terms(m, d);
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

/* ---- ABA derivatives ---- */

/* row_i −= u row_k over n entries, for two matrices at once */
static inline void axpy2(double *restrict xi, const double *restrict xk, double *restrict yi,
                         const double *restrict yk, double u, size_t n) {
  for (size_t c = 0; c < n; ++c)
    xi[c] -= u * xk[c];
  for (size_t c = 0; c < n; ++c)
    yi[c] -= u * yk[c];
}

/* X ← M⁻¹ X and Y ← M⁻¹ Y for row-major nv x nv X and Y, with the factor M = U D Uᵀ in d: the
 * three triangular stages of mr_ldlt_solve applied to every column at once as operations on
 * rows, both matrices in the same sweep (one walk of the dof chains for the two) */
void mr_ldlt_solve_rows(const mr_data *d, int nv, double *restrict X, double *restrict Y) {
  const int *par = d->parent_dof;
  const double *U = d->U;
  const size_t n = (size_t)nv;
  /* U⁻¹: descending k, row k spread to its ancestors */
  for (int k = nv - 1; k >= 0; --k)
    for (int i = par[k]; i >= 0; i = par[i])
      axpy2(X + (size_t)i * n, X + (size_t)k * n, Y + (size_t)i * n, Y + (size_t)k * n,
            U[mr_tri_at(d, i, k)], n);
  for (int k = 0; k < nv; ++k)
    for (size_t c = 0; c < n; ++c) {
      X[(size_t)k * n + c] *= d->Dinv[k];
      Y[(size_t)k * n + c] *= d->Dinv[k];
    }
  /* U⁻ᵀ: ascending k, row k gathers its ancestors */
  for (int k = 0; k < nv; ++k)
    for (int i = par[k]; i >= 0; i = par[i])
      axpy2(X + (size_t)k * n, X + (size_t)i * n, Y + (size_t)k * n, Y + (size_t)i * n,
            U[mr_tri_at(d, i, k)], n);
}

/* X = M⁻¹ from the factor, using its structure: W = D⁻¹ U⁻¹ has row k nonzero only on the
 * columns of sub(k) (k … k + nvSubtree[k] − 1 for contiguous subtrees, else k … nv − 1), and
 * M⁻¹ = U⁻ᵀ W is symmetric, so only its upper triangle is formed (row k of U⁻ᵀ W on columns ≥ k
 * needs its ancestors' rows on the same columns only) and then mirrored */
void mr_ldlt_inverse_rows(const mr_data *d, int nv, double *restrict X) {
  const int *par = d->parent_dof;
  const double *U = d->U;
  const size_t n = (size_t)nv;
  const int contiguous = mr_work(d)->contiguous;
  memset(X, 0, n * n * sizeof(double));
  for (int k = nv - 1; k >= 0; --k) {
    const size_t end = contiguous ? (size_t)(k + d->nvSubtree[k]) : n;
    const double *restrict xk = X + (size_t)k * n;
    X[(size_t)k * n + (size_t)k] = 1.0;
    for (int i = par[k]; i >= 0; i = par[i]) {
      const double u = U[mr_tri_at(d, i, k)];
      double *restrict xi = X + (size_t)i * n;
      for (size_t c = (size_t)k; c < end; ++c)
        xi[c] -= u * xk[c];
    }
  }
  for (int k = 0; k < nv; ++k) {
    double *restrict xk = X + (size_t)k * n;
    for (size_t c = (size_t)k; c < n; ++c)
      xk[c] *= d->Dinv[k];
    for (int i = par[k]; i >= 0; i = par[i]) {
      const double u = U[mr_tri_at(d, i, k)];
      const double *restrict xi = X + (size_t)i * n;
      for (size_t c = (size_t)k; c < n; ++c)
        xk[c] -= u * xi[c];
    }
  }
  for (size_t r = 0; r < n; ++r)
    for (size_t c = r + 1; c < n; ++c)
      X[c * n + r] = X[r * n + c];
}

mr_status mr_aba_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                             const double *v, const double *tau, mr_error *err) {
  const int nv = m->nv;
  const size_t n2 = (size_t)nv * (size_t)nv;
  mr_aba(m, d, q, v, tau);
  mr_rnea_derivatives(m, d, dd, q, v, d->ddq);
  mr_status st = mr_ldlt_factor(m, d, err);
  if (st != MR_OK) return st;
  for (size_t r = 0; r < n2; ++r) {
    dd->dddq_dq[r] = -dd->dtau_dq[r];
    dd->dddq_dv[r] = -dd->dtau_dv[r];
  }
  mr_ldlt_solve_rows(d, nv, dd->dddq_dq, dd->dddq_dv);
  mr_ldlt_inverse_rows(d, nv, dd->dddq_dtau);
  return MR_OK;
}
