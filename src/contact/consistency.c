/* The consistent correction (see consistency.h; derivation in docs/solvers.md, "The consistent
 * law").
 *
 * The assembled g = (J v_f + cor)/Δt. J v_f lies in range(J) = range(G) (M ≻ 0); cor does only
 * when the requested push-out is a velocity the bodies can make. When it is not, G λ = −g has no
 * solution, the NCP has no all-sticking candidate, and a mechanism like a pendulum whose tip can
 * only move obliquely to the ground has no solution at all (Painlevé-like). The correction b =
 * cor/Δt, less the restitution targets (an impact law's demand on a velocity, not a push-out:
 * the assembly keeps them in a->rest and they are added back unprojected), is replaced by its
 * Euclidean projection b' onto
 *   S = { J δu : the tangential rows of the frictional contacts' J δu are 0 },
 * the contact velocities the bodies can make without slipping at any contact (a frictionless
 * contact's tangential rows carry no force: neither held nor corrected): b' is the closest
 * push-out (least squares over the corrected rows: contacts' and limits' normal rows, the three
 * rows of bilateral constraints) that asks no contact to slide. b' is written as B Z y, all its
 * rows: its tangential rows B_T Z y are 0 in exact arithmetic, and are kept as computed rather
 * than set to 0, so that g stays in range(J) even when Z takes in a slip below the rank
 * tolerance (a face tilted against its support by less than about √TOL: a rotation about an axis
 * in the face then moves its corners tangentially by the tilt times the rotation; zeroing those
 * rows left g outside range(G) by up to 1e-8 of |g| on landing cubes, and the all-sticking
 * candidate without a solution at the NCP's tolerance). Blocks
 * whose gap exceeds free_gap, the assembly's band δ (speculative contacts and limits: their
 * correction permits an approach, it pushes nothing out), are free: left out of S and their b
 * kept. Then
 * G λ = −g has a solution (c = 0: every contact sticking), and a resting rigid patch, whose
 * affine gaps are already the normal velocities of a rigid motion without slip, keeps its b.
 * Computed from a basis B (3nc x r) of range(J):
 *   - 3nc ≤ nv: the pivoted Cholesky G[p, p] = L Lᵀ of rank r, B = Πᵀ L; r = 3nc means S =
 *     {x : x_T = 0} ∋ b and nothing is done (a single contact with a full-rank block,
 *     independent rows);
 *   - 3nc > nv (rows always dependent: a box on four corners, a foot): the pivoted Cholesky of
 *     JᵀJ (nv x nv) selects r independent columns, B = J_S;
 * then S = B null(B_T): the pivoted Cholesky of B_TᵀB_T (rank h) gives the null space's basis
 * Z = Π [−L₁₁⁻ᵀ L₂₁ᵀ; I] (r x (r − h)), D = B Z spans S, and b' = D_s (D_sᵀ D_s)⁻¹ D_sᵀ b with
 * D_s the columns a third pivoted Cholesky (of DᵀD) keeps. Cost O(n r²) with r ≤ min(3nc, nv);
 * islands beyond MR_CONSISTENCY_MAX_DIM are left as assembled, and so are compliant problems
 * (R > 0 anywhere: with R ≻ 0 every g is reachable). */
#include "contact/consistency.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>

#include "contact/sparse_chol.h"
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

void mr_pivoted_cholesky_solve(const double *L, int n, int r, double *x) {
  for (int k = 0; k < r; ++k) {
    for (int j = 0; j < k; ++j)
      x[k] -= L[(size_t)k * n + j] * x[j];
    x[k] /= L[(size_t)k * n + k];
  }
  for (int k = r - 1; k >= 0; --k) {
    for (int j = k + 1; j < r; ++j)
      x[k] -= L[(size_t)j * n + k] * x[j];
    x[k] /= L[(size_t)k * n + k];
  }
}

/* K = Xᵀ X over the rows of X (rows x c, stride c) that use selects (NULL: all), lower triangle;
 * over each row's nonzero entries only (a zero product adds nothing: the same sums) */
static void gram(const double *X, int rows, int c, const unsigned char *use, int *nz, double *K) {
  memset(K, 0, (size_t)c * c * sizeof *K);
  for (int i = 0; i < rows; ++i) {
    const double *Xi = X + (size_t)i * c;
    if (use && !use[i]) continue;
    int m = 0;
    for (int k = 0; k < c; ++k)
      if (Xi[k] != 0.0) nz[m++] = k;
    for (int a = 0; a < m; ++a) {
      int k = nz[a];
      for (int b = 0; b <= a; ++b)
        K[(size_t)k * c + nz[b]] += Xi[k] * Xi[nz[b]];
    }
  }
}

/* B (n x r, stride r) = a basis of range(G) from its pivoted Cholesky; r, or −1 out of memory.
 * Left-looking: only the r columns of L the rank needs are formed (O(n r²) where
 * mr_pivoted_cholesky's trailing updates cost O(n² r)), stored by column so that a column's
 * updates run over contiguous rows, and each trailing entry comes from G when its column is
 * formed. Every entry sees the same operations in the same order as in mr_pivoted_cholesky (G's
 * lower triangle, then − L_ij L_kj for j = 0, 1, …, then / l_kk; the diagonal − L_ik² after each
 * column), so the pivots, the rank and L are the same bits. */
static int basis_from_G(const mr_contact_problem *p, double *B, mr_arena *work) {
  int n = 3 * p->nc, r = 0;
  size_t mark = mr_arena_mark(work);
  double *G = mr_arena_alloc(work, (size_t)n * n * sizeof *G); /* every entry written */
  double *L = mr_arena_alloc(work, (size_t)n * n * sizeof *L); /* column k at L + k n */
  double *dg = mr_arena_alloc(work, (size_t)n * sizeof *dg);   /* the Schur diagonal */
  int *perm = mr_arena_alloc(work, (size_t)n * sizeof *perm);
  if (!G || !L || !dg || !perm) return -1;
  mr_problem_G_dense(p, G);
  double dmax = 0.0;
  for (int i = 0; i < n; ++i)
    perm[i] = i, dg[i] = G[(size_t)i * n + i], dmax = fmax(dmax, dg[i]);
  for (; r < n; ++r) {
    int k = r, q = k;
    for (int i = k + 1; i < n; ++i) /* the largest remaining pivot */
      if (dg[i] > dg[q]) q = i;
    if (!(dg[q] > MR_CONSISTENCY_TOL * dmax)) break;
    if (q != k) {
      double t = dg[k];
      int tp = perm[k];
      dg[k] = dg[q], dg[q] = t, perm[k] = perm[q], perm[q] = tp;
      for (int j = 0; j < k; ++j)
        t = L[(size_t)j * n + k], L[(size_t)j * n + k] = L[(size_t)j * n + q],
        L[(size_t)j * n + q] = t;
    }
    /* column k: G's entries below the pivot, less the earlier columns' products, over l_kk */
    double *restrict c = L + (size_t)k * n, lkk = sqrt(dg[k]);
    for (int i = k + 1, pk = perm[k]; i < n; ++i) {
      int a = perm[i] > pk ? perm[i] : pk, b = perm[i] > pk ? pk : perm[i];
      c[i] = G[(size_t)a * n + b];
    }
    for (int j = 0; j < k; ++j) {
      const double *restrict lj = L + (size_t)j * n;
      double lkj = lj[k];
      for (int i = k + 1; i < n; ++i)
        c[i] -= lj[i] * lkj;
    }
    c[k] = lkk;
    for (int i = k + 1; i < n; ++i) {
      c[i] /= lkk;
      dg[i] -= c[i] * c[i];
    }
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < r; ++k)
      B[(size_t)perm[i] * r + k] = k <= i ? L[(size_t)k * n + i] : 0.0;
  mr_arena_reset(work, mark);
  return r;
}

/* B (n x r, stride r) = the r independent columns of J (n x m) that the pivoted Cholesky of JᵀJ
 * selects; r, or −1 out of memory */
static int basis_from_J(const double *J, int n, int m, double *B, mr_arena *work) {
  size_t mark = mr_arena_mark(work);
  double *A = mr_arena_alloc(work, (size_t)m * m * sizeof *A);
  int *perm = mr_arena_alloc(work, (size_t)m * sizeof *perm);
  int *nz = mr_arena_alloc(work, (size_t)m * sizeof *nz);
  if (!A || !perm || !nz) return -1;
  gram(J, n, m, NULL, nz, A);
  int r = mr_pivoted_cholesky(A, m, perm, MR_CONSISTENCY_TOL);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < r; ++k)
      B[(size_t)i * r + k] = J[(size_t)i * m + perm[k]];
  mr_arena_reset(work, mark);
  return r;
}

/* B ← B Z (n x d, stride d) on the corrected and held rows (the free ones are left undefined),
 * Z the basis of null(B_held) from the pivoted Cholesky of B_heldᵀ B_held; d, or −1 out of memory
 */
static int no_slip_basis(double *B, int n, int r, const unsigned char *held,
                         const unsigned char *corrected, mr_arena *work) {
  double *K = mr_arena_alloc(work, (size_t)r * r * sizeof *K);
  double *t = mr_arena_alloc(work, (size_t)r * sizeof *t);
  int *perm = mr_arena_alloc(work, (size_t)r * sizeof *perm);
  int *nz = mr_arena_alloc(work, (size_t)r * sizeof *nz);
  if (!K || !t || !perm || !nz) return -1;
  gram(B, n, r, held, nz, K);
  int h = mr_pivoted_cholesky(K, r, perm, MR_CONSISTENCY_TOL), d = r - h;
  /* Z column j: 1 at pivot h + j, −L₁₁⁻ᵀ (row h + j of L₂₁) at the first h pivots; kept in
   * K's rows h .. r (column j in row h + j, entries at the first h columns replaced) */
  for (int j = 0; j < d; ++j) {
    double *w = K + (size_t)(h + j) * r;
    for (int k = h - 1; k >= 0; --k) {
      for (int l = k + 1; l < h; ++l)
        w[k] -= K[(size_t)l * r + k] * w[l];
      w[k] /= K[(size_t)k * r + k];
    }
  }
  /* row i of B Z, in place, on the corrected rows: project_onto reads no other */
  for (int i = 0; i < n; ++i) {
    if (!corrected[i] && !held[i]) continue;
    double *Bi = B + (size_t)i * r;
    memcpy(t, Bi, (size_t)r * sizeof *t);
    for (int j = 0; j < d; ++j) {
      const double *w = K + (size_t)(h + j) * r;
      double s = t[perm[h + j]];
      for (int k = 0; k < h; ++k)
        s -= w[k] * t[perm[k]];
      B[(size_t)i * d + j] = s;
    }
  }
  return d;
}

/* each column x of X (n x ncols, row-major) ← D y on the corrected and held rows, y the least
 * squares fit of D's corrected rows (D n x d, stride d) to x's (the projection onto their range);
 * free rows unchanged; −1 out of memory */
static int project_onto(const double *D, int n, int d, const unsigned char *held,
                        const unsigned char *corrected, double *X, int ncols, mr_arena *work) {
  double *K = mr_arena_alloc(work, (size_t)d * d * sizeof *K);
  double *y = mr_arena_alloc(work, (size_t)d * sizeof *y);
  int *perm = mr_arena_alloc(work, (size_t)d * sizeof *perm);
  int *nz = mr_arena_alloc(work, (size_t)d * sizeof *nz);
  if (!K || !y || !perm || !nz) return -1;
  gram(D, n, d, corrected, nz, K);
  int e = mr_pivoted_cholesky(K, d, perm, MR_CONSISTENCY_TOL);
  for (int c = 0; c < ncols; ++c) {
    mr_zero(y, e);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < e && corrected[i]; ++k)
        y[k] += D[(size_t)i * d + perm[k]] * X[(size_t)i * ncols + c];
    mr_pivoted_cholesky_solve(K, d, e, y);
    for (int i = 0; i < n; ++i) {
      if (!corrected[i] && !held[i]) continue;
      double s = 0.0;
      for (int k = 0; k < e; ++k)
        s += D[(size_t)i * d + perm[k]] * y[k];
      X[(size_t)i * ncols + c] = s;
    }
  }
  return 0;
}

/* the rows' roles: a block whose gap exceeds free_gap (a speculative contact or limit, its
 * correction a permitted approach, not a push-out) is free; the tangential rows of the other
 * frictional contacts are held at 0; the rest (normal rows, bilateral constraints) are corrected.
 * A frictionless contact's tangential rows (μ = 0: a joint limit, a frictionless pair) are
 * neither: no force acts along them, so they constrain no motion and keep their b (0). A box
 * (joint friction) is free: its force is bounded, it holds no motion and has no correction. */
static void row_roles(const mr_contact_problem *p, double free_gap, unsigned char *held,
                      unsigned char *corrected) {
  for (int i = 0; i < 3 * p->nc; ++i) {
    int b = i / 3, bil = mr_problem_bilateral(p, b);
    int free = mr_problem_box(p, b) || (!bil && p->phi && p->phi[b] > free_gap);
    int tangent = !bil && i % 3 < 2;
    held[i] = !free && tangent && p->mu[b] > 0.0;
    corrected[i] = !free && !tangent;
  }
}

/* each column of X (n x ncols) ← its projection onto S = B null(B_held) (B n x r, a basis of
 * range(J), overwritten); 1 projected, −1 out of memory */
static int project_basis(double *B, int n, int r, const unsigned char *held,
                         const unsigned char *corrected, double *X, int ncols, mr_arena *work) {
  int d = no_slip_basis(B, n, r, held, corrected, work);
  if (d < 0) return -1;
  if (d == 0) {
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < ncols && (held[i] || corrected[i]); ++c)
        X[(size_t)i * ncols + c] = 0.0;
    return 1;
  }
  return project_onto(B, n, d, held, corrected, X, ncols, work) ? -1 : 1;
}

/* each column of X (n x ncols) ← its projection onto S (the file's opening comment), J (n x m)
 * and p's G; 1 projected, 0 when the rows are independent (X left as it is), −1 out of memory */
static int project(const mr_contact_problem *p, const double *J, int m, double free_gap, double *X,
                   int ncols, mr_arena *work) {
  int n = 3 * p->nc, dof_space = n > m;
  double *B = mr_arena_alloc(work, (size_t)n * (dof_space ? m : n) * sizeof *B);
  unsigned char *held = mr_arena_alloc(work, (size_t)n), *corrected = mr_arena_alloc(work, n);
  if (!B || !held || !corrected) return -1;
  int r = dof_space ? basis_from_J(J, n, m, B, work) : basis_from_G(p, B, work);
  if (r < 0) return -1;
  if (r == n) return 0;
  row_roles(p, free_gap, held, corrected);
  return project_basis(B, n, r, held, corrected, X, ncols, work);
}

/* the correction b (3nc) projected pair by pair (mr_consistency_pairs): each pair's rows onto
 * its own S, over the six columns of its free body; 1 when some pair was projected, 0 when none
 * was (every pair's rows independent), −1 out of memory */
static int project_pairs(const mr_contact_problem *p, const double *J, int m, double free_gap,
                         const mr_consistency_pairs *pairs, double *b, mr_arena *work) {
  int n = 3 * p->nc, any = 0;
  unsigned char *held = mr_arena_alloc(work, (size_t)n), *corrected = mr_arena_alloc(work, n);
  double *Jq = mr_arena_alloc(work, (size_t)n * 6 * sizeof *Jq);
  double *Bq = mr_arena_alloc(work, (size_t)n * 6 * sizeof *Bq);
  double *bq = mr_arena_alloc(work, (size_t)n * sizeof *bq);
  int *rows = mr_arena_alloc(work, (size_t)n * sizeof *rows);
  unsigned char *hq = mr_arena_alloc(work, (size_t)n), *cq = mr_arena_alloc(work, n);
  if (!held || !corrected || !Jq || !Bq || !bq || !rows || !hq || !cq) return -1;
  row_roles(p, free_gap, held, corrected);
  for (int q = 0; q < pairs->npairs; ++q) {
    const int *cols = pairs->cols + 6 * q;
    int nq = 0;
    for (int i = 0; i < n; ++i) {
      if (pairs->pair[i / 3] != q) continue;
      for (int t = 0; t < 6; ++t)
        Jq[(size_t)nq * 6 + t] = J[(size_t)i * m + cols[t]];
      bq[nq] = b[i], hq[nq] = held[i], cq[nq] = corrected[i], rows[nq++] = i;
    }
    size_t mark = mr_arena_mark(work);
    int r = nq > 0 ? basis_from_J(Jq, nq, 6, Bq, work) : nq;
    int st = r < 0 ? -1 : r == nq ? 0 : project_basis(Bq, nq, r, hq, cq, bq, 1, work);
    mr_arena_reset(work, mark);
    if (st < 0) return -1;
    if (st == 0) continue;
    any = 1;
    for (int k = 0; k < nq; ++k)
      b[rows[k]] = bq[k];
  }
  return any;
}

/* 1 when the projection bp of b moved it by more than its round-off (MR_CONSISTENCY_KEEP) */
static int moved(const double *b, const double *bp, int n) {
  double off = 0.0, all = 0.0;
  for (int i = 0; i < n; ++i)
    off += (b[i] - bp[i]) * (b[i] - bp[i]), all += b[i] * b[i];
  return off > MR_CONSISTENCY_KEEP * MR_CONSISTENCY_KEEP * all;
}

/* 1 when the problem is one the projection handles: rigid, and min(3nc, nv) within the bound */
static int handled(const mr_contact_problem *p, int m) {
  int n = 3 * p->nc;
  for (int i = 0; i < n && p->R; ++i)
    if (p->R[i] > 0.0) return 0;
  return mr_consistency_dense((size_t)p->nc, (size_t)m);
}

/* ---- Large islands: the projection through a sparse factor over the dofs ----
 *
 * Beyond MR_CONSISTENCY_MAX_DIM the dense bases cost more than the solve. There b' = J x (on the
 * corrected and held rows) with x the regularised least squares
 *   min ‖J_C x − b_C‖² + α xᵀ diag(J_CᵀJ_C + J_HᵀJ_H) x   subject to   J_H x = 0
 * (C the corrected rows, H the held ones), by augmented-Lagrangian rounds on the held rows:
 * A x_k = J_Cᵀ b_C − J_Hᵀ μ_k, μ_{k+1} = μ_k + κ J_H x_k, A = J_CᵀJ_C + κ J_HᵀJ_H + α diag(·)
 * factored once (a simplicial LDLᵀ through CHOLMOD of A in AMD's order: the factor of an
 * island of free bodies has the sparsity of its bodies' contact graph). b' = J x lies in range(J) =
 * range(G) whatever the rounds reach, so the all-sticking candidate exists exactly; the rounds
 * only bring the slip that candidate asks (b'_H) down. A motion that slips by s per unit of
 * normal motion has its slip reduced by 1/(1 + κ s²) a round, so after the SPARSE_ROUNDS rounds
 * a motion slipping by less than about 1/√κ keeps part of its slip, as the dense path counts a
 * slip below √TOL as none (measured on the 200-body drop of bench/scale.c: at most 8e-4 of the
 * correction). α is the dense path's rank tolerance: a direction whose rows move less than √α of
 * its columns' scale is left out, softly, where the dense path drops it. κ = 1e4 keeps A's
 * condition (κ/α) within what the factor resolves. */
#define SPARSE_PATTERNS 4
#define SPARSE_KAPPA 1e4
#define SPARSE_HOLD 1e-9
#define SPARSE_ROUNDS 6

/* one analysed pattern: A's upper triangle in the dofs' order (cp, ri: what a pattern is matched
 * against), its fill-reducing order (AMD), and the permuted matrix P A Pᵀ that CHOLMOD factors in
 * its own order, in place (a matrix in another order would be permuted into a copy made, and
 * allocated, at every factorisation) */
typedef struct {
  int m, nnz;
  int *cp, *ri;      /* the pattern: column pointers (m + 1) and rows (nnz) */
  int *perm;         /* permuted row k is dof perm[k] */
  int *map;          /* entry q of the pattern → its slot in A->x */
  double *xu;        /* the values in the pattern's order (nnz) */
  cholmod_sparse *A; /* triu(P A Pᵀ) */
  cholmod_factor *L; /* its simplicial LDLᵀ, natural order */
  long used;
} sparse_analysis;

struct mr_consistency_factor {
  cholmod_common cc;
  sparse_analysis slot[SPARSE_PATTERNS];
  long clock;
  /* scratch, grown: per dof the pattern's column pointers, its blocks' offsets, a stamp and a
   * slot, and two vectors; per row two vectors; the blocks of each dof; the pattern's rows */
  size_t cap_m, cap_n, cap_cb, cap_ri;
  int *cp, *cb, *stamp, *pos;
  double *x, *t;
  double *mu, *h;
  int *cbi, *ri;
};

mr_consistency_factor *mr_consistency_factor_create(void) {
  mr_consistency_factor *f = calloc(1, sizeof *f);
  if (f && mr_chol_start(&f->cc)) free(f), f = NULL;
  return f;
}

static void clear_analysis(cholmod_common *cc, sparse_analysis *a) {
  free(a->cp), free(a->ri), free(a->perm), free(a->map), free(a->xu);
  cholmod_free_sparse(&a->A, cc);
  cholmod_free_factor(&a->L, cc);
  *a = (sparse_analysis){0};
}

void mr_consistency_factor_free(mr_consistency_factor *f) {
  if (!f) return;
  for (int k = 0; k < SPARSE_PATTERNS; ++k)
    clear_analysis(&f->cc, &f->slot[k]);
  cholmod_finish(&f->cc);
  free(f->cp), free(f->cb), free(f->stamp), free(f->pos), free(f->x), free(f->t);
  free(f->mu), free(f->h), free(f->cbi), free(f->ri);
  free(f);
}

/* the arrays ps[0..k) (element sizes sz) grown to need elements when *cap is below it, contents
 * kept; 0, or −1 out of memory (the grown ones kept, *cap unchanged) */
static int grow(void **ps[], const size_t *sz, int k, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = need + need / 2;
  for (int i = 0; i < k; ++i) {
    void *q = realloc(*ps[i], c * sz[i]);
    if (!q) return -1;
    *ps[i] = q;
  }
  *cap = c;
  return 0;
}

/* the scratch for nc blocks over m dofs, sum_ns support entries; 1 when it grew, 0 when it had
 * room, −1 out of memory */
static int sparse_scratch(mr_consistency_factor *f, int nc, int m, size_t sum_ns) {
  void **pm[] = {(void **)&f->cp,  (void **)&f->cb, (void **)&f->stamp,
                 (void **)&f->pos, (void **)&f->x,  (void **)&f->t};
  size_t sm[] = {sizeof(int), sizeof(int),    sizeof(int),
                 sizeof(int), sizeof(double), sizeof(double)};
  void **pn[] = {(void **)&f->mu, (void **)&f->h};
  size_t sn[] = {sizeof(double), sizeof(double)};
  void **pc[] = {(void **)&f->cbi};
  size_t sc[] = {sizeof(int)};
  size_t caps = f->cap_m + f->cap_n + f->cap_cb;
  if (grow(pm, sm, 6, &f->cap_m, (size_t)m + 1) || grow(pn, sn, 2, &f->cap_n, 3 * (size_t)nc) ||
      grow(pc, sc, 1, &f->cap_cb, sum_ns + 1))
    return -1;
  return f->cap_m + f->cap_n + f->cap_cb != caps;
}

int mr_consistency_factor_reserve(mr_consistency_factor *f, int nc, int nv) {
  /* supports of at most nv dofs; the pattern's upper triangle at most nv (nv + 1) / 2 entries */
  int st = sparse_scratch(f, nc, nv, (size_t)nc * (size_t)nv);
  void **pr[] = {(void **)&f->ri};
  size_t sr[] = {sizeof(int)}, cap = f->cap_ri;
  if (st < 0 || grow(pr, sr, 1, &f->cap_ri, (size_t)nv * ((size_t)nv + 1) / 2 + 1)) return -1;
  return st || f->cap_ri != cap;
}

/* block i's t-th column of J in ascending order (its support is stored descending) */
static inline int block_col(const mr_consistency_options *s, int i, int t) {
  const int *S = s->support + (size_t)i * s->stride;
  return s->col[S[s->nsupport[i] - 1 - t]];
}

/* whether block i has a held or corrected row (a row of the least squares) */
static inline int block_used(const unsigned char *held, const unsigned char *corrected, int i) {
  return held[3 * i] | held[3 * i + 1] | held[3 * i + 2] | corrected[3 * i] | corrected[3 * i + 1] |
         corrected[3 * i + 2];
}

/* the upper triangle's pattern of A (m dofs) in f->cp, f->ri: the diagonal of every dof, and
 * (k, j), k < j, where a block with a corrected or held row has both in its support; each dof's
 * blocks in f->cb, f->cbi. 0, or −1 out of memory */
static int sparse_pattern(mr_consistency_factor *f, const mr_consistency_options *s, int nc, int m,
                          const unsigned char *held, const unsigned char *corrected) {
  int *cb = f->cb, *cbi = f->cbi, *stamp = f->stamp;
  memset(cb, 0, ((size_t)m + 1) * sizeof *cb);
  for (int i = 0; i < nc; ++i)
    for (int t = 0; block_used(held, corrected, i) && t < s->nsupport[i]; ++t)
      ++cb[block_col(s, i, t) + 1];
  for (int j = 0; j < m; ++j)
    cb[j + 1] += cb[j], stamp[j] = -1;
  int *at = f->pos;
  memcpy(at, cb, (size_t)m * sizeof *at);
  for (int i = 0; i < nc; ++i)
    for (int t = 0; block_used(held, corrected, i) && t < s->nsupport[i]; ++t)
      cbi[at[block_col(s, i, t)]++] = i;
  size_t nnz = 0;
  f->cp[0] = 0;
  for (int j = 0; j < m; ++j) {
    void **pr[] = {(void **)&f->ri};
    size_t sr[] = {sizeof(int)};
    if (grow(pr, sr, 1, &f->cap_ri, nnz + (size_t)j + 1)) return -1;
    size_t start = nnz;
    stamp[j] = j, f->ri[nnz++] = j;
    for (int q = cb[j]; q < cb[j + 1]; ++q) {
      int i = cbi[q];
      for (int t = 0; t < s->nsupport[i]; ++t) {
        int c = block_col(s, i, t);
        if (c >= j) break;
        if (stamp[c] != j) stamp[c] = j, f->ri[nnz++] = c;
      }
    }
    for (size_t a = start + 1; a < nnz; ++a) /* ascending rows (insertion: short columns) */
      for (size_t b = a; b > start && f->ri[b - 1] > f->ri[b]; --b) {
        int tmp = f->ri[b];
        f->ri[b] = f->ri[b - 1], f->ri[b - 1] = tmp;
      }
    f->cp[j + 1] = (int)nnz;
  }
  return 0;
}

/* a's permuted matrix triu(P A Pᵀ) and where each entry of the pattern goes in it; 0, or −1 */
static int sparse_permuted(cholmod_common *cc, sparse_analysis *a) {
  int m = a->m, nnz = a->nnz;
  int *inv = malloc((size_t)m * sizeof(int)), *count = calloc((size_t)m + 1, sizeof(int));
  int *col = malloc((size_t)(nnz ? nnz : 1) * sizeof(int));
  int *src = malloc((size_t)(nnz ? nnz : 1) * sizeof(int)); /* slot → entry of the pattern */
  a->A = cholmod_allocate_sparse((size_t)m, (size_t)m, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL, cc);
  int ok = inv && count && col && src && a->A;
  for (int k = 0; ok && k < m; ++k)
    inv[a->perm[k]] = k;
  /* entry (i, j), i ≤ j, goes to column max(inv i, inv j) of the permuted upper triangle */
  for (int j = 0; ok && j < m; ++j)
    for (int q = a->cp[j]; q < a->cp[j + 1]; ++q) {
      int pi = inv[a->ri[q]], pj = inv[j];
      col[q] = pi > pj ? pi : pj;
      ++count[col[q] + 1];
    }
  if (ok) {
    int *Ap = a->A->p, *Ai = a->A->i;
    for (int k = 0; k < m; ++k)
      count[k + 1] += count[k];
    memcpy(Ap, count, ((size_t)m + 1) * sizeof(int));
    for (int j = 0; j < m; ++j)
      for (int q = a->cp[j]; q < a->cp[j + 1]; ++q) {
        int pi = inv[a->ri[q]], pj = inv[j], s = count[col[q]]++;
        Ai[s] = pi < pj ? pi : pj, src[s] = q;
      }
    /* rows ascending within each column (insertion: short columns), their entries following */
    for (int k = 0; k < m; ++k)
      for (int s = Ap[k] + 1; s < Ap[k + 1]; ++s)
        for (int t = s; t > Ap[k] && Ai[t - 1] > Ai[t]; --t) {
          int r = Ai[t], e = src[t];
          Ai[t] = Ai[t - 1], src[t] = src[t - 1], Ai[t - 1] = r, src[t - 1] = e;
        }
    for (int s = 0; s < nnz; ++s)
      a->map[src[s]] = s;
  }
  free(inv), free(count), free(col), free(src);
  return ok ? 0 : -1;
}

/* the analysis of the pattern in f->cp, f->ri (m dofs): a kept one, or a new one replacing the
 * least recently used (allocating); NULL out of memory or when CHOLMOD fails */
static sparse_analysis *sparse_analyse(mr_consistency_factor *f, int m) {
  int nnz = f->cp[m];
  sparse_analysis *a = f->slot;
  for (int k = 0; k < SPARSE_PATTERNS; ++k) {
    sparse_analysis *s = &f->slot[k];
    if (s->A && s->m == m && s->nnz == nnz &&
        !memcmp(s->cp, f->cp, ((size_t)m + 1) * sizeof(int)) &&
        !memcmp(s->ri, f->ri, (size_t)nnz * sizeof(int))) {
      s->used = ++f->clock;
      return s;
    }
    if (s->used < a->used) a = s;
  }
  clear_analysis(&f->cc, a);
  a->m = m, a->nnz = nnz;
  a->cp = malloc(((size_t)m + 1) * sizeof(int));
  a->ri = malloc((size_t)(nnz ? nnz : 1) * sizeof(int));
  a->perm = malloc((size_t)m * sizeof(int));
  a->map = malloc((size_t)(nnz ? nnz : 1) * sizeof(int));
  a->xu = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
  int ok = a->cp && a->ri && a->perm && a->map && a->xu;
  if (ok) {
    memcpy(a->cp, f->cp, ((size_t)m + 1) * sizeof(int));
    memcpy(a->ri, f->ri, (size_t)nnz * sizeof(int));
  }
  ok = ok && mr_amd_order(&f->cc, m, a->cp, a->ri, a->perm) == 0 && sparse_permuted(&f->cc, a) == 0;
  if (ok) {
    /* the permuted matrix's symbolic factor in its own order, not postordered: CHOLMOD then
     * factors A itself */
    f->cc.nmethods = 1;
    f->cc.method[0].ordering = CHOLMOD_NATURAL;
    f->cc.postorder = 0;
    a->L = cholmod_analyze(a->A, &f->cc);
    ok = a->L && f->cc.status == CHOLMOD_OK && a->L->ordering == CHOLMOD_NATURAL && !a->L->is_super;
  }
  if (!ok) {
    clear_analysis(&f->cc, a);
    return NULL;
  }
  a->used = ++f->clock;
  return a;
}

/* A = J_CᵀJ_C + κ J_HᵀJ_H + α diag(J_CᵀJ_C + J_HᵀJ_H) on the analysed pattern, factored; 0, or
 * −1 when it is not positive definite */
static int sparse_factor(mr_consistency_factor *f, sparse_analysis *an,
                         const mr_consistency_options *s, const double *J, int m,
                         const unsigned char *held, const unsigned char *corrected) {
  const int *Ap = an->cp, *Ai = an->ri;
  double *Ax = an->xu;
  int *pos = f->pos;
  for (int j = 0; j < m; ++j) {
    double dj = 0.0; /* the column's scale, J_CᵀJ_C + J_HᵀJ_H's diagonal entry */
    for (int q = Ap[j]; q < Ap[j + 1]; ++q)
      pos[Ai[q]] = q, Ax[q] = 0.0;
    for (int q = f->cb[j]; q < f->cb[j + 1]; ++q) {
      int i = f->cbi[q];
      for (int k = 3 * i; k < 3 * i + 3; ++k) {
        double w = corrected[k] ? 1.0 : held[k] ? SPARSE_KAPPA : 0.0;
        const double *Jk = J + (size_t)k * m;
        if (w == 0.0 || Jk[j] == 0.0) continue;
        dj += Jk[j] * Jk[j];
        for (int t = 0; t < s->nsupport[i]; ++t) {
          int c = block_col(s, i, t);
          if (c > j) break;
          Ax[pos[c]] += w * Jk[c] * Jk[j];
        }
      }
    }
    /* the diagonal (the column's last row), regularised; a column no row reaches: 1 (x_j = 0) */
    Ax[Ap[j + 1] - 1] = dj > 0.0 ? Ax[Ap[j + 1] - 1] + MR_CONSISTENCY_TOL * dj : 1.0;
  }
  double *x = an->A->x;
  for (int q = 0; q < an->nnz; ++q)
    x[an->map[q]] = Ax[q];
  if (!cholmod_factorize(an->A, an->L, &f->cc) || f->cc.status != CHOLMOD_OK) return -1;
  const int *Lp = an->L->p;
  const double *Lx = an->L->x;
  for (int j = 0; j < m; ++j)
    if (!(Lx[Lp[j]] > 0.0) || !isfinite(Lx[Lp[j]])) return -1;
  return 0;
}

/* x ← A⁻¹ x through the factor of P A Pᵀ (t scratch) */
static void sparse_solve(const sparse_analysis *an, int m, double *x, double *t) {
  mr_ldl_solve(m, an->L->p, an->L->i, an->L->nz, an->L->x, an->perm, x, t);
}

/* row k of J times x over its block's support */
static double row_times(const mr_consistency_options *s, const double *J, int m, int k,
                        const double *x) {
  const double *Jk = J + (size_t)k * m;
  double sum = 0.0;
  for (int t = 0, i = k / 3; t < s->nsupport[i]; ++t) {
    int c = block_col(s, i, t);
    sum += Jk[c] * x[c];
  }
  return sum;
}

/* r = J_Cᵀ b_C − J_Hᵀ μ over the supports */
static void sparse_rhs(const mr_consistency_options *s, const double *J, int n, int m,
                       const unsigned char *held, const unsigned char *corrected, const double *b,
                       const double *mu, double *r) {
  mr_zero(r, m);
  for (int k = 0; k < n; ++k) {
    double w = corrected[k] ? b[k] : held[k] ? -mu[k] : 0.0;
    const double *Jk = J + (size_t)k * m;
    for (int t = 0, i = k / 3; w != 0.0 && t < s->nsupport[i]; ++t) {
      int c = block_col(s, i, t);
      r[c] += Jk[c] * w;
    }
  }
}

/* b (3nc) ← its projection through the sparse factor (the section's opening comment), on the
 * corrected and held rows; 1 projected, −1 out of memory or a failed factor (b unchanged) */
static int project_sparse(const mr_contact_problem *p, const double *J, int m, double free_gap,
                          const mr_consistency_options *s, double *b, mr_arena *work) {
  int n = 3 * p->nc;
  mr_consistency_factor *f = s->factor;
  unsigned char *held = mr_arena_alloc(work, (size_t)n), *corrected = mr_arena_alloc(work, n);
  if (!held || !corrected) return -1;
  row_roles(p, free_gap, held, corrected);
  size_t sum_ns = 0;
  for (int i = 0; i < p->nc; ++i)
    sum_ns += (size_t)s->nsupport[i];
  if (sparse_scratch(f, p->nc, m, sum_ns) < 0 || sparse_pattern(f, s, p->nc, m, held, corrected))
    return -1;
  sparse_analysis *an = sparse_analyse(f, m);
  if (!an || sparse_factor(f, an, s, J, m, held, corrected)) return -1;
  double bmax = 0.0, *x = f->x, *mu = f->mu, *h = f->h;
  for (int k = 0; k < n; ++k)
    bmax = corrected[k] ? fmax(bmax, fabs(b[k])) : bmax, mu[k] = 0.0;
  for (int round = 0;; ++round) {
    sparse_rhs(s, J, n, m, held, corrected, b, mu, x);
    sparse_solve(an, m, x, f->t);
    double hmax = 0.0;
    for (int k = 0; k < n; ++k) {
      h[k] = held[k] || corrected[k] ? row_times(s, J, m, k, x) : 0.0;
      if (held[k]) hmax = fmax(hmax, fabs(h[k]));
    }
    if (hmax <= SPARSE_HOLD * bmax || round + 1 == SPARSE_ROUNDS) break;
    for (int k = 0; k < n; ++k)
      mu[k] += held[k] ? SPARSE_KAPPA * h[k] : 0.0;
  }
  for (int k = 0; k < n; ++k)
    if (held[k] || corrected[k]) b[k] = h[k];
  return 1;
}

int mr_contact_consistent_columns(const mr_contact_problem *p, const double *J, int nv,
                                  double free_gap, double *X, int ncols, mr_arena *work) {
  if (p->nc == 0 || !handled(p, nv)) return 0;
  size_t mark = mr_arena_mark(work);
  int st = project(p, J, nv, free_gap, X, ncols, work);
  mr_arena_reset(work, mark);
  return st;
}

size_t mr_contact_consistent_work_size(int nc, int nv) {
  size_t n = nc > 0 ? 3 * (size_t)nc : 0, m = nv > 0 ? (size_t)nv : 0, k = n < m ? n : m;
  /* beyond the bound: b, its projection and J v_f/Δt, the caller's free velocity, the roles */
  if (k > MR_CONSISTENCY_MAX_DIM) return (3 * n + m + n / 4 + 2) * sizeof(double) + 8 * 64;
  /* a basis B (n x k), then from J a k x k factor and the null-space Gram matrix, or from G
   * G's copy and L's columns (n x n each, released before the Gram matrix), the caller's free
   * velocity, vectors, index arrays; alignment slack per allocation */
  size_t doubles = n * k + 2 * (n > m ? k * k : n * n) + 2 * m + 9 * n + 3 * k;
  /* or by pairs: the roles, a pair's rows of J and its basis (n x 6 each), its b, rows and
   * roles, its projection's scratch (6 x 6 matrices) */
  size_t pairs = 2 * m + 15 * n + 3 * 36 + 18;
  /* and the caller's pairs (mr_consistency_pairs, contact_stage.c): nc + 10 (nv / 6 + 1) + 1
   * ints in five arrays */
  size_t caller = (n / 3 + 10 * (m / 6 + 1) + 1) / 2 + 5;
  return ((doubles > pairs ? doubles : pairs) + caller) * sizeof(double) + 24 * 64;
}

mr_consistent_result mr_contact_consistent(mr_contact_assembly *a, const double *vf,
                                           double free_gap, const mr_consistency_pairs *pairs,
                                           const mr_consistency_options *opt, mr_arena *work) {
  const mr_contact_problem *p = &a->problem;
  const double *J = a->J;
  int n = 3 * p->nc, m = a->nv;
  if (n == 0) return MR_CONSISTENT_NOOP;
  for (int i = 0; i < n && p->R; ++i)
    if (p->R[i] > 0.0) return MR_CONSISTENT_NOOP;
  int dense = handled(p, m);
  if (!dense && !(opt && opt->factor)) return MR_CONSISTENT_TOO_LARGE;
  size_t mark = mr_arena_mark(work);
  double *b = mr_arena_alloc(work, (size_t)n * sizeof *b);
  double *jv = mr_arena_alloc(work, (size_t)n * sizeof *jv);
  double *bp = mr_arena_alloc(work, (size_t)n * sizeof *bp); /* b projected */
  if (!b || !jv || !bp) return mr_arena_reset(work, mark), MR_CONSISTENT_NO_MEMORY;
  /* b = the correction, g − J v_f/Δt less the restitution targets (what an impact law demands
   * of a velocity is not a push-out: kept as it is); nothing to do when it is zero */
  double bmax = 0.0;
  for (int i = 0; i < n; ++i) { /* a large island's rows over their supports */
    double Jv = dense ? mr_dot(J + (size_t)i * m, vf, m) : row_times(opt, J, m, i, vf);
    jv[i] = Jv / p->dt + (i % 3 == 2 ? a->rest[i / 3] : 0.0);
    b[i] = a->g[i] - jv[i];
    bmax = fmax(bmax, fabs(b[i]));
  }
  if (bmax == 0.0 || (opt && mr_norm(b, n) <= opt->negligible))
    return mr_arena_reset(work, mark), MR_CONSISTENT_NOOP;
  if (!dense && bmax <= opt->skip_below) return mr_arena_reset(work, mark), MR_CONSISTENT_TOO_LARGE;
  /* a correction already in S to round-off is kept bit for bit (a resting patch under the gap
   * law, an island solved alone or within the whole model). With the island's body pairs that is
   * checked first pair by pair: when no pair's own projection moves its rows, b is in S and is
   * kept; else the whole projection decides (near-singular directions, a slipping tilt below
   * the rank tolerance, are judged against the whole problem's pivots, as without pairs) */
  if (pairs) {
    mr_copy(bp, b, n);
    int sp = project_pairs(p, J, m, free_gap, pairs, bp, work);
    if (sp == 0 || (sp == 1 && !moved(b, bp, n)))
      return mr_arena_reset(work, mark), MR_CONSISTENT_NOOP;
  }
  mr_copy(bp, b, n);
  int st = dense ? project(p, J, m, free_gap, bp, 1, work)
                 : project_sparse(p, J, m, free_gap, opt, bp, work);
  if (st == 1 && !moved(b, bp, n)) st = 0;
  /* g = J v_f/Δt + rest + b' */
  for (int i = 0; i < n && st == 1; ++i)
    a->g[i] = jv[i] + bp[i];
  mr_arena_reset(work, mark);
  if (st < 0) return MR_CONSISTENT_NO_MEMORY;
  return st == 1 ? MR_CONSISTENT_PROJECTED : MR_CONSISTENT_NOOP;
}
