/* The consistent correction (docs/solvers.md, "The consistent law"): the part of g that is not
 * the free velocity J v_f / Δt or a restitution target (the gap, Baumgarte and constraint-drift
 * terms) is replaced by its Euclidean projection onto S = {J δu : the frictional contacts'
 * tangential rows of J δu are 0}, the closest contact velocity the bodies can make without
 * slipping, so that the
 * all-sticking candidate G λ = −g has a solution. Blocks whose gap is above the band (p->phi)
 * are left out and keep their correction. */
#ifndef MOREAU_CONTACT_CONSISTENCY_H
#define MOREAU_CONTACT_CONSISTENCY_H

#include "core/arena.h"
#include "moreau/assembly.h"

/* the largest min(3 nc, nv) projected densely: beyond it (islands of tens of bodies) the dense
 * factorisation would cost more than the solve, and the sparse projection (mr_consistency_options)
 * takes over */
#define MR_CONSISTENCY_MAX_DIM 96

/* 1 when an island of nc blocks over nv dofs is within the dense projection's bound */
static inline int mr_consistency_dense(size_t nc, size_t nv) {
  return (3 * nc < nv ? 3 * nc : nv) <= MR_CONSISTENCY_MAX_DIM;
}

/* relative pivot below which a direction of G (or of JᵀJ) counts as absent: the dropped
 * directions have eigenvalues below this fraction of the largest diagonal entry */
#define MR_CONSISTENCY_TOL 1e-10

/* a correction whose part outside S is at most this fraction of its norm is left as
 * assembled: that part is the projection's own round-off (condition of the kept rows times n ε) */
#define MR_CONSISTENCY_KEEP 1e-10

/* what mr_contact_consistent did */
typedef enum {
  MR_CONSISTENT_NOOP = 0,  /* no correction, a negligible one, independent rows, a compliant
                              problem (R > 0 somewhere), or a correction already in S to
                              MR_CONSISTENCY_KEEP: g unchanged */
  MR_CONSISTENT_PROJECTED, /* the correction was projected onto S */
  MR_CONSISTENT_TOO_LARGE, /* min(3 nc, nv) > MR_CONSISTENCY_MAX_DIM and no sparse
                              projection given, or its correction below skip_below: left as
                              assembled */
  MR_CONSISTENT_NO_MEMORY  /* the arena was too small, or the sparse factor's memory or
                              factorisation failed: left as assembled */
} mr_consistent_result;

/* An island's blocks grouped by body pair, for the projection pair by pair. When every body of
 * the island is fixed or a free body of its own (a free joint on the world) and the pairs (the
 * fixed bodies one node) form a forest, the bodies' twists can be chosen pair by pair, so S is
 * the direct sum over the pairs of each pair's S, spanned over the six dofs of one free body of
 * the pair (its twist relative to the other body's takes every value): the projection onto S is
 * each pair's rows projected onto its own, from a 6-column basis (docs/solvers.md, "The
 * consistent law"). */
typedef struct {
  int npairs;
  const int *pair; /* per block, its pair */
  const int *cols; /* per pair, the six columns of J of one free body of the pair */
} mr_consistency_pairs;

/* An island beyond MR_CONSISTENCY_MAX_DIM (docs/solvers.md, "The consistent law", "Large
 * islands"): its correction is projected through a sparse factor over its dofs instead, the
 * columns of each block's rows being its support (the tree-sparse assembly's), and the factor's
 * analyses kept across steps in a mr_consistency_factor. */
typedef struct mr_consistency_factor mr_consistency_factor;

/* What the step gives the law beyond the problem: when a correction is too small to matter, and
 * what a large island is projected with. */
typedef struct {
  double negligible; /* a correction of norm at most this is left as assembled, on any island
                      * (the step: a tenth of the solver's tolerance over the island's largest
                      * warm-start force, when that exceeds 1 N: the part outside S of such a
                      * correction, no larger, leaves the all-sticking candidate within a tenth
                      * of the criterion's tolerance; docs/solvers.md) */
  /* an island beyond the dense bound */
  const int *support;  /* per block, the dofs its rows may be nonzero on, descending, at stride
                        * entries per block */
  const int *nsupport; /* per block, their number */
  int stride;
  const int *col;    /* dof → column of J */
  double skip_below; /* a correction no entry of which exceeds this is left as assembled (the
                      * step: ten times the solver's tolerance, what a resting island's last
                      * solve leaves) */
  mr_consistency_factor *factor; /* NULL: a large island is left as assembled */
} mr_consistency_options;

/* a factor with no analysis yet, NULL out of memory; freed with mr_consistency_factor_free (NULL:
 * nothing). It keeps the analyses of the last four sparsity patterns (the island's dofs coupled
 * by its rows: CHOLMOD's, allocated when a pattern is new, as the solvers' sparse factors are)
 * and the scratch of the projection. */
mr_consistency_factor *mr_consistency_factor_create(void);
void mr_consistency_factor_free(mr_consistency_factor *f);
/* the scratch for an island of nc blocks over nv dofs, grown ahead of the step (with the step's
 * storage) so that the projection allocates nothing but a new pattern's analysis: 1 when it
 * grew, 0 when it had room, −1 out of memory */
int mr_consistency_factor_reserve(mr_consistency_factor *f, int nc, int nv);

/* Make a's problem consistent in place: g ← J v_f/Δt + P (g − J v_f/Δt), P the orthogonal
 * projector onto S, from a basis of range(J) (pivoted Cholesky of G when 3nc ≤ nv, of JᵀJ
 * otherwise) and the null space of its tangential rows. Blocks whose gap exceeds free_gap (the
 * assembly's band δ: speculative contacts and limits) are left out and keep their correction.
 * J is a->J (which the dense and the tree-sparse assemblies fill), vf the free velocity at its
 * a->nv columns; pairs, when not NULL, the island's forest of body pairs (above); opt, when
 * not NULL, the negligible correction and what an island beyond MR_CONSISTENCY_MAX_DIM is
 * projected with (without its factor such an island is left as assembled:
 * MR_CONSISTENT_TOO_LARGE). Scratch
 * (mr_contact_consistent_work_size) comes from work and is released. */
mr_consistent_result mr_contact_consistent(mr_contact_assembly *a, const double *vf,
                                           double free_gap, const mr_consistency_pairs *pairs,
                                           const mr_consistency_options *opt, mr_arena *work);

/* Bytes of work that mr_contact_consistent may take for nc blocks over nv dofs, with the caller's
 * free velocity (nv) and body pairs (mr_consistency_pairs) on top; beyond MR_CONSISTENCY_MAX_DIM
 * vectors only (the sparse projection's scratch is its factor's). The step sizes its workspace by
 * it: a Gauss-Seidel solver's own is vectors only. */
size_t mr_contact_consistent_work_size(int nc, int nv);

/* Each column of X (3nc x ncols, row-major) projected onto S of p (G, kinds, gaps) and J (3nc x
 * nv), as mr_contact_consistent does: the step's derivatives take the correction's slope through
 * the same projection. Returns 1 when projected, 0 when X is left as it is (independent rows, a
 * compliant or too large problem), −1 when work is too small (X unchanged). */
int mr_contact_consistent_columns(const mr_contact_problem *p, const double *J, int nv,
                                  double free_gap, double *X, int ncols, mr_arena *work);

/* The pivoted Cholesky of a symmetric positive semi-definite n x n row-major matrix (its lower
 * triangle read), in place: A[perm, perm] = L Lᵀ on the r returned columns (L in the lower
 * triangle of A's first r columns; the strict upper triangle is overwritten), stopping when the
 * largest remaining pivot is at most tol times the largest diagonal entry. */
int mr_pivoted_cholesky(double *A, int n, int *perm, double tol);

/* x ← (L Lᵀ)⁻¹ x with L the leading r x r lower triangle of such a factor (row stride n), x in
 * pivot order */
void mr_pivoted_cholesky_solve(const double *L, int n, int r, double *x);

#endif
