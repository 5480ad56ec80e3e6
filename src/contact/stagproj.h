/* The subproblems of the staggered projections (stagproj.c), shared by ncp-stagproj and
 * lcp-stagproj (lcp_stagproj.c): with A = G + R split into its normal (nc) and tangential (2nc)
 * rows, one convex QP per block, min ½ xᵀ A_BB x + bᵀ x over the block's set (given by the
 * caller's projection in qp.project / qp.ctx), solved by the ADMM kernel of admm.h. Internal to
 * src/contact. */
#ifndef MOREAU_CONTACT_STAGPROJ_H
#define MOREAU_CONTACT_STAGPROJ_H

#include "contact/admm.h"
#include "contact/sparse_chol.h"

/* one subproblem: its matrix, diagonal, linear term, ADMM state */
typedef struct {
  int m; /* size: nc (normal) or 2nc (tangential) */
  const mr_contact_problem *p;
  mr_chol_part part; /* its rows of G (the sparse factor's part) */
  double *A;         /* m x m block of G, or NULL when factored sparse */
  double *d;         /* block of R, or NULL */
  double *b;         /* linear term */
  admm_qp qp;
  admm_ws ws;
} mr_stagproj_sub;

/* the block (normal = 1: the λ_N rows, 0: the λ_T rows) of p's G and R and its workspace,
 * from arena a (sparse: no matrix, the blocks read in place and factored sparse); 0, or -1
 * when the arena is too small. The caller sets qp.project and qp.ctx. */
int mr_stagproj_sub_alloc(mr_stagproj_sub *sp, const mr_contact_problem *p, int normal, int sparse,
                          mr_arena *a);
/* the sparse path: the block's pattern analysed in f (allocating for a new pattern) and its
 * values loaded; 0, or -1 out of memory */
int mr_stagproj_sub_sparse_load(mr_stagproj_sub *sp, mr_sparse_chol *f);
/* b = the block's rows of (G + R) λ' + g, λ' = λ with the block's entries zeroed; tmp, tmp2:
 * 3nc doubles each */
void mr_stagproj_sub_linear_term(mr_stagproj_sub *sp, const mr_contact_problem *p, int normal,
                                 const double *lambda, double *tmp, double *tmp2);
/* solve the block's QP from λ's block (first: dual and ρ from scratch, and the first factor)
 * by at most s->inner_iter ADMM iterations, stopping at residuals ≤ eps_abs/10; the result
 * written into λ. 0, or -1 when A_BB + ρI is not positive definite */
int mr_stagproj_sub_solve(mr_stagproj_sub *sp, const mr_contact_problem *p,
                          const mr_solver_settings *s, int normal, int first, double *lambda);

#endif
