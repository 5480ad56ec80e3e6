/* The consistent correction (see consistency.h; derivation in docs/solvers.md, "The consistent
 * law").
 *
 * The assembled g = (J v_f + cor)/Δt. J v_f lies in range(J) = range(G) (M ≻ 0); cor does only
 * when the requested push-out is a velocity the bodies can make. When it is not, G λ = −g has no
 * solution, the NCP has no all-sticking candidate, and a mechanism like a pendulum whose tip can
 * only move along one direction has no solution at all (Painlevé-like). The correction is
 * replaced by b' = P b, b = cor/Δt, P the Euclidean projector onto range(J):
 *   b' = J δu,  δu = M⁻¹ Jᵀ G⁺ b  (the velocity change of least kinetic energy that makes it),
 * the same vector since J M⁻¹ Jᵀ G⁺ = G G⁺ = P. P is built from a basis of range(J):
 *   - 3nc ≤ nv: the pivoted Cholesky G[p, p] = L Lᵀ of rank r; r = 3nc means P = I (nothing to
 *     do: a single contact with a full-rank block, independent rows); otherwise B = Πᵀ L (3nc x
 *     r) spans range(G) and P b = B (LᵀL)⁻¹ Lᵀ (Π b);
 *   - 3nc > nv (rows always dependent: a box on four corners, a foot): the pivoted Cholesky of
 *     JᵀJ (nv x nv) selects r independent columns J_S of J, whose Gram matrix J_SᵀJ_S is the
 *     leading r x r factor, and P b = J_S (J_SᵀJ_S)⁻¹ J_Sᵀ b.
 * With a compliance R (diagonal, ≥ 0) the all-sticking candidate is (G + R) λ = −g: the first
 * form on G + R. Cost O(min(3nc, nv)² max(3nc, nv)); islands beyond MR_CONSISTENCY_MAX_DIM are
 * left as assembled. */
#include "contact/consistency.h"

#include <math.h>
#include <string.h>

#include "core/linalg.h"

/* swap indices k < p of a symmetric matrix whose lower triangle is stored (row stride n), after
 * k columns of the factor: rows k and p of the factor, then the trailing part */
static void sym_swap_lower(double *A, int n, int k, int p) {
  double t;
#define SWAP(a, b) (t = (a), (a) = (b), (b) = t)
  for (int j = 0; j < k; ++j)
    SWAP(A[(size_t)k * n + j], A[(size_t)p * n + j]);
  SWAP(A[(size_t)k * n + k], A[(size_t)p * n + p]);
  for (int i = k + 1; i < p; ++i)
    SWAP(A[(size_t)i * n + k], A[(size_t)p * n + i]);
  for (int i = p + 1; i < n; ++i)
    SWAP(A[(size_t)i * n + k], A[(size_t)i * n + p]);
#undef SWAP
}

int mr_pivoted_cholesky(double *A, int n, int *perm, double tol) {
  double dmax = 0.0;
  for (int i = 0; i < n; ++i)
    perm[i] = i, dmax = fmax(dmax, A[(size_t)i * n + i]);
  for (int k = 0; k < n; ++k) {
    /* the largest remaining pivot */
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (A[(size_t)i * n + i] > A[(size_t)p * n + p]) p = i;
    if (!(A[(size_t)p * n + p] > tol * dmax)) return k;
    if (p != k) {
      sym_swap_lower(A, n, k, p);
      int t = perm[k];
      perm[k] = perm[p], perm[p] = t;
    }
    /* column k of L, copied into the unused upper part of row k, then the lower triangle of
     * the Schur complement (contiguous rows) */
    double *restrict Ak = A + (size_t)k * n, lkk = sqrt(Ak[k]);
    Ak[k] = lkk;
    for (int i = k + 1; i < n; ++i)
      Ak[i] = A[(size_t)i * n + k] /= lkk;
    for (int i = k + 1; i < n; ++i) {
      double lik = Ak[i], *restrict Ai = A + (size_t)i * n;
      for (int j = k + 1; j <= i; ++j)
        Ai[j] -= lik * Ak[j];
    }
  }
  return n;
}

/* b ← P b in contact space: L (n x r, A's first r columns, rows permuted by perm) spans range */
static int project_contact_space(const double *A, int n, int r, const int *perm, double *b,
                                 mr_arena *work) {
  double *C = mr_arena_doubles(work, (size_t)r * r), *y = mr_arena_doubles(work, (size_t)r);
  if (!C || !y) return -1;
  /* C = Lᵀ L (Π is orthogonal), y = Lᵀ (Π b) */
  for (int i = 0; i < n; ++i) {
    const double *Li = A + (size_t)i * n;
    int top = i < r ? i + 1 : r;
    for (int k = 0; k < top; ++k) {
      y[k] += Li[k] * b[perm[i]];
      for (int j = 0; j <= k; ++j)
        C[(size_t)k * r + j] += Li[k] * Li[j];
    }
  }
  for (int k = 0; k < r; ++k)
    for (int j = 0; j < k; ++j)
      C[(size_t)j * r + k] = C[(size_t)k * r + j];
  if (mr_cholesky(C, r)) return -1;
  mr_cholesky_solve(C, r, y);
  /* Π b ← L x */
  for (int i = 0; i < n; ++i) {
    const double *Li = A + (size_t)i * n;
    int top = i < r ? i + 1 : r;
    double s = 0.0;
    for (int k = 0; k < top; ++k)
      s += Li[k] * y[k];
    b[perm[i]] = s;
  }
  return 0;
}

/* b ← P b through the pivoted Cholesky of JᵀJ (m x m): its first r pivots select J_S; 1, or −1
 * out of memory (n > m: the rows are always dependent) */
static int project_dof_space(const double *J, int n, int m, double *b, mr_arena *work) {
  double *A = mr_arena_doubles(work, (size_t)m * m), *y = mr_arena_doubles(work, (size_t)m);
  int *perm = mr_arena_alloc(work, (size_t)m * sizeof *perm);
  if (!A || !y || !perm) return -1;
  /* JᵀJ, row by row of J */
  for (int i = 0; i < n; ++i) {
    const double *Ji = J + (size_t)i * m;
    for (int k = 0; k < m; ++k) {
      if (Ji[k] == 0.0) continue;
      for (int j = 0; j <= k; ++j)
        A[(size_t)k * m + j] += Ji[k] * Ji[j];
    }
  }
  int r = mr_pivoted_cholesky(A, m, perm, MR_CONSISTENCY_TOL);
  /* y = J_Sᵀ b, x = (L₁ L₁ᵀ)⁻¹ y with L₁ the leading r x r factor (row stride m) */
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < r; ++k)
      y[k] += J[(size_t)i * m + perm[k]] * b[i];
  for (int k = 0; k < r; ++k) {
    for (int j = 0; j < k; ++j)
      y[k] -= A[(size_t)k * m + j] * y[j];
    y[k] /= A[(size_t)k * m + k];
  }
  for (int k = r - 1; k >= 0; --k) {
    for (int j = k + 1; j < r; ++j)
      y[k] -= A[(size_t)j * m + k] * y[j];
    y[k] /= A[(size_t)k * m + k];
  }
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int k = 0; k < r; ++k)
      s += J[(size_t)i * m + perm[k]] * y[k];
    b[i] = s;
  }
  return 1;
}

/* b ← P b from G (+ R); 1 when rows were dependent, 0 when P = I, −1 out of memory */
static int project_from_G(const mr_contact_problem *p, int compliant, double *b, mr_arena *work) {
  int n = 3 * p->nc;
  double *A = mr_arena_alloc(work, (size_t)n * n * sizeof *A); /* every entry written */
  int *perm = mr_arena_alloc(work, (size_t)n * sizeof *perm);
  if (!A || !perm) return -1;
  mr_problem_G_dense(p, A);
  if (compliant)
    for (int i = 0; i < n; ++i)
      A[(size_t)i * n + i] += p->R[i];
  int r = mr_pivoted_cholesky(A, n, perm, MR_CONSISTENCY_TOL);
  if (r == n) return 0;
  return project_contact_space(A, n, r, perm, b, work) ? -1 : 1;
}

mr_consistent_result mr_contact_consistent(mr_contact_assembly *a, const double *vf,
                                           mr_arena *work) {
  const mr_contact_problem *p = &a->problem;
  int n = 3 * p->nc, m = a->nv, compliant = 0;
  if (n == 0) return MR_CONSISTENT_NOOP;
  for (int i = 0; i < n && p->R; ++i)
    compliant |= p->R[i] > 0.0;
  int dof_space = n > m && !compliant;
  if ((dof_space ? m : n) > MR_CONSISTENCY_MAX_DIM) return MR_CONSISTENT_TOO_LARGE;
  size_t mark = mr_arena_mark(work);
  double *b = mr_arena_alloc(work, (size_t)n * sizeof *b);
  double *jv = mr_arena_alloc(work, (size_t)n * sizeof *jv);
  if (!b || !jv) return mr_arena_reset(work, mark), MR_CONSISTENT_NO_MEMORY;
  /* b = the correction, g − J v_f/Δt; nothing to do when it is zero */
  double bmax = 0.0;
  for (int i = 0; i < n; ++i) {
    jv[i] = mr_dot(a->J + (size_t)i * m, vf, m) / p->dt;
    b[i] = a->g[i] - jv[i];
    bmax = fmax(bmax, fabs(b[i]));
  }
  if (bmax == 0.0) return mr_arena_reset(work, mark), MR_CONSISTENT_NOOP;
  int st =
      dof_space ? project_dof_space(a->J, n, m, b, work) : project_from_G(p, compliant, b, work);
  /* a correction already in range to round-off is kept bit for bit (a resting patch under the
   * gap law, an island solved alone or within the whole model) */
  double off = 0.0, all = 0.0;
  for (int i = 0; i < n && st == 1; ++i) {
    double bi = a->g[i] - jv[i];
    off += (bi - b[i]) * (bi - b[i]), all += bi * bi;
  }
  if (st == 1 && !(off > MR_CONSISTENCY_KEEP * MR_CONSISTENCY_KEEP * all)) st = 0;
  /* g = J v_f/Δt + P b */
  for (int i = 0; i < n && st == 1; ++i)
    a->g[i] = jv[i] + b[i];
  mr_arena_reset(work, mark);
  if (st < 0) return MR_CONSISTENT_NO_MEMORY;
  return st == 1 ? MR_CONSISTENT_PROJECTED : MR_CONSISTENT_NOOP;
}
