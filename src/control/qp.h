/* A small dense convex QP solver (primal active-set method with a phase-1 linear program):
 *
 *   minimise ½ xᵀ H x + cᵀ x   subject to   A_eq x = b_eq,   A_in x ≥ b_in,
 *
 * with H symmetric positive SEMI-definite. Meant for tens of variables (the per-mode QPs of
 * the QPCC solver); every iteration refactors the working set from scratch (Householder QR of
 * the active rows, Jacobi eigen-decomposition of the reduced Hessian), so it is exact, simple and
 * O(n³) per iteration. Memory comes from a workspace created once; mr_qp_solve never allocates.
 */
#ifndef MOREAU_CONTACT_QP_H
#define MOREAU_CONTACT_QP_H

#include "core/arena.h"
#include "moreau/error.h"

/* The problem; arrays are borrowed, row-major. H may be NULL (H = 0: a linear program). */
typedef struct {
  int n;              /* number of variables */
  int m_eq;           /* number of equality rows */
  int m_in;           /* number of inequality rows (A_in x ≥ b_in) */
  const double *H;    /* n x n, symmetric positive semi-definite (not checked here), or NULL */
  const double *c;    /* n */
  const double *A_eq; /* m_eq x n */
  const double *b_eq; /* m_eq */
  const double *A_in; /* m_in x n */
  const double *b_in; /* m_in */
} mr_qp_problem;

/* What the solve found (when mr_qp_solve returns MR_OK). */
typedef enum {
  MR_QP_OPTIMAL = 0, /* x is a minimiser; the multipliers satisfy the KKT conditions */
  MR_QP_INFEASIBLE,  /* no x satisfies the constraints (phase 1 minimum > feasibility tolerance) */
  MR_QP_UNBOUNDED    /* the objective decreases without bound along a feasible ray */
} mr_qp_outcome;

typedef struct {
  int max_iter; /* active-set iterations per phase (default 0: 50 (n + m_in) + 100) */
  double tol;   /* relative tolerance on feasibility, stationarity and zero curvature
                   (default 1e-10) */
} mr_qp_settings;

typedef struct {
  mr_qp_outcome outcome;
  double fval;          /* ½ xᵀHx + cᵀx at x (OPTIMAL only) */
  double infeasibility; /* phase-1 minimum: the least uniform violation of the inequalities */
  int iterations;       /* active-set iterations, both phases */
  int active;           /* inequality rows in the final working set */
} mr_qp_info;

/* Workspace for problems up to n_max variables, m_eq_max equalities, m_in_max inequalities. */
typedef struct {
  int n_max, m_eq_max, m_in_max;
  mr_arena arena;
} mr_qp_workspace;

mr_qp_settings mr_qp_settings_default(void);

/* Allocate the workspace (MR_ERR_NOMEM when malloc fails, MR_ERR_INVALID for negative sizes). */
mr_status mr_qp_workspace_init(mr_qp_workspace *ws, int n_max, int m_eq_max, int m_in_max,
                               mr_error *err);
void mr_qp_workspace_destroy(mr_qp_workspace *ws);

/* Solve. x (n) receives the solution; y_eq (m_eq) and y_in (m_in, ≥ 0) receive multipliers with
 * H x + c = A_eqᵀ y_eq + A_inᵀ y_in (either may be NULL). Returns MR_OK with info->outcome set,
 * MR_ERR_INVALID when the problem exceeds the workspace, MR_ERR_LIMIT when the iteration cap
 * is hit (degenerate cycling), MR_ERR_NUMERIC on NaN input. */
mr_status mr_qp_solve(const mr_qp_problem *qp, const mr_qp_settings *settings, mr_qp_workspace *ws,
                      double *x, double *y_eq, double *y_in, mr_qp_info *info, mr_error *err);

/* Eigenvalues of a symmetric n x n matrix by cyclic Jacobi rotations: A is overwritten, eig (n)
 * receives the eigenvalues (unsorted), V (n x n, may be NULL) the eigenvectors as columns. */
void mr_sym_eigen(double *A, int n, double *eig, double *V);

const char *mr_qp_outcome_name(mr_qp_outcome o);

#endif
