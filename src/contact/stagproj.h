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
  double limit; /* charged (ws.charge): the ws.work at which its inner iterations stop */
} mr_stagproj_sub;

/* b = the block's rows of (G + R) λ' + g, λ' = λ with the block's entries zeroed; tmp, tmp2:
 * 3nc doubles each */
void mr_stagproj_sub_linear_term(mr_stagproj_sub *sp, const mr_contact_problem *p, int normal,
                                 const double *lambda, double *tmp, double *tmp2);
/* solve the block's QP from λ's block (first: dual and ρ from scratch, and the first factor)
 * by at most s->inner_iter ADMM iterations, stopping at residuals ≤ eps_abs/10; the result
 * written into λ. 0, or -1 when A_BB + ρI is not positive definite */
int mr_stagproj_sub_solve(mr_stagproj_sub *sp, const mr_contact_problem *p,
                          const mr_solver_settings *s, int normal, int first, double *lambda);

/* A staggered-projection solve's scratch: the two subproblems, three vectors and the sparse
 * factors (the state's, kept across solves, or a private one). */
typedef struct {
  mr_stagproj_sub sn, st;        /* the normal and the tangential subproblem */
  double *tmp, *prev, *lambda_n; /* 3nc, 3nc and nc doubles */
  mr_sparse_chol *own;           /* the private factors, NULL with a state */
  size_t mark;                   /* the arena's mark before the solve */
} mr_stagproj_run;

/* the scratch of a solve of p named `name` (errors), from work, with state's factors when it
 * pays; the caller sets the subproblems' qp.project and qp.ctx. MR_ERR_NOMEM, the arena reset */
mr_status mr_stagproj_begin(mr_stagproj_run *r, const char *name, const mr_contact_problem *p,
                            mr_solver_state *state, mr_arena *work, mr_error *err);
/* a solver's own criterion at λ, c ← (G + R)λ + g computed first; ctx the solver's data */
typedef double (*mr_stagproj_model)(const mr_contact_problem *p, const void *ctx,
                                    const double *lambda, double *c);
/* the staggered projections' outer loop from λ: the normal subproblem with λ_T fixed, then the
 * tangential one with λ_N fixed (r->lambda_n, which the tangential projection reads), until
 * eps_abs on the criterion in use (the model's own, or the NCP's under MR_CRITERION_NCP:
 * stats->eps_model stays the model's), an iterate that moves by at most eps_rel, max_iter or
 * the deadline; returns 0, or -1 when a subproblem is not positive definite */
int mr_stagproj_loop(mr_stagproj_run *r, const mr_contact_problem *p, const mr_solver_settings *s,
                     mr_stagproj_model model, const void *ctx, double *lambda, double *c,
                     mr_solver_stats *stats);
/* the end of a solve whose loop returned rc (−1: a subproblem not positive definite): the
 * factorisations counted, the scratch released, and either the NCP criteria at λ or, after a
 * failure, λ = 0 and the error */
mr_status mr_stagproj_end(mr_stagproj_run *r, const char *name, int rc, const mr_contact_problem *p,
                          mr_arena *work, double *lambda, double *c, mr_solver_stats *stats,
                          mr_error *err);

#endif
