/* Internal ADMM kernel shared by ccp-admm, ncp-admm and the subproblems of ncp-stagproj.
 *
 * It solves   min ½ xᵀ A x + bᵀ x  s.t. x ∈ C,   A = G + diag(d) symmetric positive
 * semi-definite, C a closed convex set given by its Euclidean projection, by the splitting
 * x = z, z ∈ C ("Contact Models in Robotics", Alg. 3 with the over-relaxation of eq. 25):
 *   x⁺ = (A + ρI)⁻¹ (ρ z − y − b)
 *   x̂ = ω x⁺ + (1 − ω) z
 *   z⁺ = Π_C(x̂ + y/ρ)
 *   y⁺ = y + ρ (x̂ − z⁺)
 * At a fixed point x = z and −y = A z + b lies in the normal cone of C at z: the KKT conditions.
 * The caller may change b between iterations (the de Saxcé fixed point, staggered projections). */
#ifndef MOREAU_CONTACT_ADMM_H
#define MOREAU_CONTACT_ADMM_H

#include <stddef.h>

#include "core/arena.h"
#include "moreau/contact.h"

typedef struct {
  int n;
  const double *G; /* n x n row-major, symmetric positive semi-definite */
  const double *d; /* diagonal added to G (compliance), n, or NULL */
  const double *b; /* linear term, n */
  void (*project)(const void *ctx, const double *x, double *out); /* Π_C, out may alias x */
  const void *ctx;
  /* G block-sparse (G NULL): the problem holding it, and its sparse factor (the values of
   * G + diag(d) already loaded by mr_chol_values) */
  const mr_contact_problem *blocks;
  struct mr_sparse_chol *chol;
  /* or, G NULL and matvec set, y = G x by matvec(mctx, x, y) (a part of a block-sparse G) */
  void (*matvec)(const void *mctx, const double *x, double *y);
  const void *mctx;
} admm_qp;

typedef struct {
  int n;
  double *L;               /* Cholesky factor of A + ρI, n x n (dense; unused when sparse) */
  double *x, *z, *y;       /* iterate, projected copy, dual variable (velocity units) */
  double *zold, *yold, *w; /* previous z and y, scratch */
  double *Az;              /* A z after the last step */
  double rho;              /* current penalty */
  double rho_min;          /* floor of ρ raised after a runaway iteration (0: none) */
  double eig_max, eig_min; /* power-iteration estimates of A's extreme eigenvalues (0: none) */
  int factorizations;      /* Cholesky factorisations so far */
  double rp, rd;           /* primal ‖x − z‖∞ and dual ρ‖z − z_old‖∞ residuals */
  int diverged;            /* the iteration ran away (the dual y is not worth keeping) */
  /* under a simulator step's work budget (mr_solver_settings.work_iter) on a sparse factor: the
   * work so far in sweeps, each factorisation, solve and product charged at its cost
   * (mr_chol_factor_sweeps); charge 0: not counted */
  int charge;
  double work;
} admm_ws;

/* on a sparse factor (q->chol, q->blocks), what a factorisation and what an iteration (a solve
 * and a product) cost in sweeps of q->blocks (mr_chol_factor_sweeps) */
double admm_factor_sweeps(const admm_qp *q);
double admm_iteration_sweeps(const admm_qp *q);
/* bytes of arena an admm_ws of size n takes (with alignment) */
size_t admm_ws_bytes(int n);
/* carve the workspace from the arena (with the dense factor's n x n when dense); 0 on success,
 * -1 when it does not fit */
int admm_ws_alloc(admm_ws *w, int n, int dense, mr_arena *a);
/* y = A x */
void admm_matvec(const admm_qp *q, const double *x, double *y);
/* estimate A's extreme eigenvalues by power iteration (iters each) into w->eig_max, eig_min */
void admm_eigs(const admm_qp *q, admm_ws *w, int iters);
/* the spectral factor cond(A)^power, cond floored as documented in admm.c */
double admm_rho_factor(const admm_ws *w, double power);
/* ρ derived from the spectrum, √(λ_max λ_min) with the floored λ_min */
double admm_rho_default(const admm_ws *w);
/* factor A + ρI into w->L; 0 on success, -1 when it is not positive definite */
int admm_factor(const admm_qp *q, admm_ws *w);
/* one iteration; fills w->rp, w->rd and w->Az */
void admm_step(const admm_qp *q, admm_ws *w, double omega);
/* the spectral ρ update of §III-E: when the relative primal residual exceeds ratio times the
 * relative dual one, ρ ← ρ·cond^power, and conversely; refactors. Returns 1 when ρ changed,
 * 0 when not, -1 when the refactorisation failed. */
int admm_adapt(const admm_qp *q, admm_ws *w, const mr_solver_settings *s, int iters_eig);

#endif
