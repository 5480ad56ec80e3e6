/* Physical validity of inertias and degrees of freedom.
 *
 * A rotational inertia about the centre of mass is physical when it is I = tr(Σ) 1 − Σ for a
 * positive semi-definite second moment Σ = ∫ r rᵀ dm; with principal moments A <= B <= C this is
 * exactly the triangle inequality A + B >= C (which implies A >= 0). The set of physical
 * tensors is convex and invariant under rotations, so the Frobenius-nearest physical tensor
 * keeps the principal axes and projects (A, B, C) onto the polyhedral cone
 * {x : x_i + x_j >= x_k} (Lewis, "Convex analysis on the Hermitian matrices", 1996); the cone
 * has three faces with normals n₁ = (1, 1, −1), n₂ = (1, −1, 1), n₃ = (−1, 1, 1), and the
 * projection is the nearest feasible point among the projections onto the intersections of
 * active faces (8 candidates).
 *
 * Principal moments by cyclic Jacobi rotations (Golub & Van Loan §8.5), to machine precision.
 *
 * A degree of freedom has no inertia when the pivot D_k of the joint-space inertia matrix M at
 * the neutral configuration vanishes, factoring M = Uᵀ D U from the last dof (leaves) to the
 * first (root): D_k = Sₖᵀ Iᴬₖ Sₖ is the articulated inertia about dof k (Featherstone, RBDA
 * §7.3), zero when the subtree below the joint has no mass or no inertia about its axis. */
#include "dynamics/model_inertia.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dynamics/internal.h"

/* one Jacobi rotation zeroing A[p][q], accumulated into R */
static void jacobi_rotate(double A[3][3], double R[3][3], int p, int q) {
  if (A[p][q] == 0.0) return;
  double theta = (A[q][q] - A[p][p]) / (2.0 * A[p][q]);
  double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
  double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
  for (int k = 0; k < 3; ++k) {
    double akp = A[k][p], akq = A[k][q];
    A[k][p] = c * akp - s * akq, A[k][q] = s * akp + c * akq;
  }
  for (int k = 0; k < 3; ++k) {
    double apk = A[p][k], aqk = A[q][k];
    A[p][k] = c * apk - s * aqk, A[q][k] = s * apk + c * aqk;
  }
  for (int k = 0; k < 3; ++k) {
    double rkp = R[k][p], rkq = R[k][q];
    R[k][p] = c * rkp - s * rkq, R[k][q] = s * rkp + c * rkq;
  }
}

void mr_inertia_principal(const mr_mat3 *I, double lam[3], mr_mat3 *Rout) {
  double A[3][3], R[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      A[i][j] = 0.5 * (I->m[i][j] + I->m[j][i]);
  for (int sweep = 0; sweep < 50; ++sweep) {
    double off = fabs(A[0][1]) + fabs(A[0][2]) + fabs(A[1][2]);
    double diag = fabs(A[0][0]) + fabs(A[1][1]) + fabs(A[2][2]);
    if (off == 0.0 || off <= 1e-300 + 1e-17 * diag) break;
    jacobi_rotate(A, R, 0, 1), jacobi_rotate(A, R, 0, 2), jacobi_rotate(A, R, 1, 2);
  }
  int order[3] = {0, 1, 2};
  /* ascending order of the diagonal */
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      if (A[order[j]][order[j]] < A[order[i]][order[i]]) {
        int t = order[i];
        order[i] = order[j], order[j] = t;
      }
  for (int i = 0; i < 3; ++i) {
    lam[i] = A[order[i]][order[i]];
    for (int k = 0; k < 3; ++k)
      Rout->m[k][i] = R[k][order[i]];
  }
}

int mr_inertia_physical(const mr_mat3 *I, double scale, char *what, size_t len) {
  double lam[3];
  mr_mat3 R;
  mr_inertia_principal(I, lam, &R);
  double tol = 1e-12 * scale, excess = lam[2] - lam[0] - lam[1];
  int indefinite = lam[0] < -tol;
  if (!indefinite && !(excess > tol + 1e-6 * lam[2])) return 1;
  if (indefinite)
    snprintf(what, len,
             "is not positive semi-definite (principal moments %g, %g, %g kg m^2: the smallest is "
             "negative by %g)",
             lam[0], lam[1], lam[2], -lam[0]);
  else
    snprintf(what, len,
             "breaks the triangle inequality A + B >= C (principal moments A = %g, B = %g, C = %g "
             "kg m^2: A + B is short of C by %g, %.3g %% of C)",
             lam[0], lam[1], lam[2], excess, 100.0 * excess / lam[2]);
  return 0;
}

static const double face[3][3] = {{1, 1, -1}, {1, -1, 1}, {-1, 1, 1}};

static double dot3(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* the projection of x onto the subspace {y : n_i · y = 0 for the faces i in mask} */
static void project_faces(const double x[3], int mask, double y[3]) {
  int idx[3], n = 0;
  for (int i = 0; i < 3; ++i)
    if (mask >> i & 1) idx[n++] = i;
  for (int k = 0; k < 3; ++k)
    y[k] = n == 3 ? 0.0 : x[k];
  if (n == 1) {
    double s = dot3(face[idx[0]], x) / 3.0;
    for (int k = 0; k < 3; ++k)
      y[k] -= s * face[idx[0]][k];
  } else if (n == 2) {
    /* Gram matrix [[3, g], [g, 3]] of the two normals, solve for the multipliers */
    const double *a = face[idx[0]], *b = face[idx[1]];
    double g = dot3(a, b), ra = dot3(a, x), rb = dot3(b, x), det = 9.0 - g * g;
    double ma = (3.0 * ra - g * rb) / det, mb = (3.0 * rb - g * ra) / det;
    for (int k = 0; k < 3; ++k)
      y[k] -= ma * a[k] + mb * b[k];
  }
}

mr_mat3 mr_inertia_nearest_physical(const mr_mat3 *I, double lam_out[3]) {
  double lam[3], best[3] = {0, 0, 0}, best_d = INFINITY;
  mr_mat3 R;
  mr_inertia_principal(I, lam, &R);
  double scale = fabs(lam[0]) + fabs(lam[1]) + fabs(lam[2]);
  for (int mask = 0; mask < 8; ++mask) {
    double y[3];
    project_faces(lam, mask, y);
    int feasible = 1;
    for (int i = 0; i < 3; ++i)
      feasible = feasible && dot3(face[i], y) >= -1e-15 * scale;
    double d = (y[0] - lam[0]) * (y[0] - lam[0]) + (y[1] - lam[1]) * (y[1] - lam[1]) +
               (y[2] - lam[2]) * (y[2] - lam[2]);
    if (feasible && d < best_d) best_d = d, best[0] = y[0], best[1] = y[1], best[2] = y[2];
  }
  mr_mat3 out = mr_m3_zero();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        out.m[i][j] += R.m[i][k] * best[k] * R.m[j][k];
  for (int k = 0; k < 3; ++k)
    lam_out[k] = best[k];
  return out;
}

/* the pivots D of M = U D Uᵀ factored from the last dof to the first, a zero pivot eliminating
 * nothing, by the articulated-body recursion in the world frame (RBDA §7.3): from the leaves,
 * each joint's dofs, last first, take D_k = Sₖᵀ Iᴬ Sₖ + armature and, when D_k > 0, the rank-one
 * elimination Iᴬ −= (Iᴬ Sₖ)(Iᴬ Sₖ)ᵀ / D_k; the rest of Iᴬ is added to the parent's. Also the
 * largest diagonal entry of M, Sₖᵀ Iᶜ Sₖ + armature with the composite inertia Iᶜ. O(nv). */
static double articulated_pivots(const mr_model *m, mr_data *d, double *D) {
  mr_dyn_work *w = mr_work(d);
  double mmax = 0.0;
  for (int i = 1; i < m->nbodies; ++i)
    mr_oinertia_matrix(&w->oY[i], w->Ia + 36 * i);
  for (int i = m->nbodies - 1; i > 0; --i) {
    const mr_joint *j = &m->bodies[i].joint;
    double *Ia = w->Ia + 36 * i;
    for (int k = j->idx_v + j->nv - 1; k >= j->idx_v; --k) {
      const mr_motion S = w->oS[k];
      const double s[6] = {S.v.v[0], S.v.v[1], S.v.v[2], S.w.v[0], S.w.v[1], S.w.v[2]};
      double u[6], Dk = m->armature[k];
      for (int r = 0; r < 6; ++r) {
        u[r] = 0.0;
        for (int c = 0; c < 6; ++c)
          u[r] += Ia[6 * r + c] * s[c];
        Dk += s[r] * u[r];
      }
      mmax = fmax(mmax, mr_force_dot(mr_oinertia_mul(&w->oY[i], S), S) + m->armature[k]);
      D[k] = Dk;
      if (Dk > 0.0)
        for (int r = 0; r < 6; ++r)
          for (int c = 0; c < 6; ++c)
            Ia[6 * r + c] -= u[r] * u[c] / Dk;
    }
    const int p = m->bodies[i].parent;
    if (p > 0) {
      for (int t = 0; t < 36; ++t)
        w->Ia[36 * p + t] += Ia[t];
      mr_oinertia_add(&w->oY[p], &w->oY[i]);
    }
  }
  return mmax;
}

int mr_model_dofs_without_inertia(const mr_model *m, double rel, int *bad, int cap) {
  int nv = m->nv, count = 0;
  if (nv == 0) return 0;
  mr_data *d = mr_data_create(m);
  double *q = malloc((size_t)m->nq * sizeof *q), *D = malloc((size_t)nv * sizeof *D);
  if (!d || !q || !D) count = -1;
  if (count == 0) {
    mr_neutral(m, q);
    mr_dyn_placements(m, d, q);
    mr_dyn_world_terms(m, d);
    const double mmax = articulated_pivots(m, d, D);
    for (int k = 0; k < nv; ++k)
      if (!(D[k] > rel * mmax)) {
        if (count < cap) bad[count] = k;
        ++count;
      }
  }
  mr_data_free(d);
  free(q), free(D);
  return count;
}
