/* A sparse LDLᵀ factor of A + ρI, A = G + diag(d), for a problem whose G is block-sparse
 * (mr_contact_problem.Gb), through CHOLMOD (SuiteSparse). Internal to src/contact.
 *
 * The analysis runs once per sparsity pattern (and part of G, below): a fill-reducing ordering of the contacts (AMD on
 * the block graph, so a contact's three rows stay together), the permuted upper triangle's
 * structure and CHOLMOD's symbolic factor. It allocates. The analyses of the last four patterns
 * are kept, so a later problem with one of them (the same contacts coupled the same way, as in
 * the steps of a resting scene, whose boxes may alternate between a few sets of corners in
 * contact) reuses its analysis and allocates nothing: the values are scattered into the permuted matrix, CHOLMOD refactors
 * it numerically for each ρ (simplicial LDLᵀ of the already-permuted matrix, which CHOLMOD does
 * in place), and the triangular solves run on the factor's arrays here. */
#ifndef MOREAU_CONTACT_SPARSE_CHOL_H
#define MOREAU_CONTACT_SPARSE_CHOL_H

#include "moreau/contact.h"

typedef struct mr_sparse_chol mr_sparse_chol;

/* which rows of G a factor covers: all 3nc, the nc normal ones (component 2 of each contact),
 * or the 2nc tangential ones (components 0, 1): ncp-stagproj's subproblems A_NN, A_TT. A part's
 * row w·i + a is component a of the part's components of contact i (w = 3, 1, 2). */
typedef enum { MR_CHOL_ALL = 0, MR_CHOL_NORMAL = 1, MR_CHOL_TANGENT = 2 } mr_chol_part;

/* a factor with no pattern yet; NULL when out of memory */
mr_sparse_chol *mr_chol_create(void);
void mr_chol_free(mr_sparse_chol *f);
/* make p's pattern (p->Gb_row, Gb_col) f's current one: 0 when it was among the kept analyses,
 * 1 when analysed anew (allocation; the least recently used analysis is replaced), −1 when out
 * of memory or CHOLMOD failed */
int mr_chol_analyze(mr_sparse_chol *f, const mr_contact_problem *p);
/* the same for one part of G (mr_chol_analyze: MR_CHOL_ALL); each (pattern, part) pair is an
 * analysis of its own, so switching back to one kept (with its values and factor) is a lookup */
int mr_chol_analyze_part(mr_sparse_chol *f, const mr_contact_problem *p, mr_chol_part part);
/* A = G + diag(d) (d NULL: 0) from p's blocks, on the analysed pattern and part (d indexed by
 * the part's rows) */
void mr_chol_values(mr_sparse_chol *f, const mr_contact_problem *p, const double *d);
/* A = Sᵀ G S from p's blocks, S block-diagonal (3x3 blocks, row-major, 9 nc), on the analysed
 * pattern, part MR_CHOL_ALL (ccp-newton's reduced Hessian) */
void mr_chol_values_congruent(mr_sparse_chol *f, const mr_contact_problem *p, const double *S);
/* A = the principal part of G on the rows with active[k] set (3nc flags), plus diag(d) on them (d
 * NULL: 0), the other rows and columns those of the identity, on the analysed pattern, part
 * MR_CHOL_ALL (ncp-hybrid's stage 4 on a block-sparse G) */
void mr_chol_values_active(mr_sparse_chol *f, const mr_contact_problem *p,
                           const unsigned char *active, const double *d);
/* about the flops of a factorisation of the analysed pattern, Σ_j (entries of column j of L)²
 * (known from the analysis, before the numeric factorisation) */
double mr_chol_flops(const mr_sparse_chol *f);
/* what a numeric factorisation and what a solve (mr_chol_solve) of the analysed pattern cost, in
 * Gauss-Seidel sweeps of a problem of nnzb stored blocks (the unit of a simulator step's work
 * budget, mr_solver_settings.work_iter) */
double mr_chol_factor_sweeps(const mr_sparse_chol *f, int nnzb);
double mr_chol_solve_sweeps(const mr_sparse_chol *f, int nnzb);
/* factor A + ρI; 0, or −1 when it is not positive definite */
int mr_chol_factor(mr_sparse_chol *f, double rho);
/* x ← (A + ρI)⁻¹ x (the part's w nc rows) */
void mr_chol_solve(mr_sparse_chol *f, double *x);

/* cholmod_start with the settings of moreau's factors: quiet (failures are reported by the
 * caller), simplicial LDLᵀ refactored in place; 0, or −1 */
struct cholmod_common_struct;
int mr_chol_start(struct cholmod_common_struct *cc);

/* AMD's fill-reducing order (postordered) of the symmetric pattern whose upper triangle is given
 * by columns (colp, n + 1; rows, ascending): permuted row k is row perm[k]; 0, or −1 out of
 * memory. The analysis allocates (CHOLMOD's workspace in cc). */
int mr_amd_order(struct cholmod_common_struct *cc, int n, const int *colp, const int *rows,
                 int *perm);

/* x ← A⁻¹ x (n) from the simplicial LDLᵀ factor, in CHOLMOD's layout (columns Lp, rows Li,
 * counts Lnz, values Lx: L's unit diagonal holding D), of P A Pᵀ, permuted row k being row
 * perm[k] of A; t is n doubles of scratch */
void mr_ldl_solve(int n, const int *Lp, const int *Li, const int *Lnz, const double *Lx,
                  const int *perm, double *x, double *t);

#endif
