/* The cone-constrained QP of the locomotion MPC (mpc.c, docs/mpc.md):
 *
 *   minimise ½ uᵀ H u + gᵀ u   subject to   u_i ∈ K_μᵢ,  i = 0 … nb−1,
 *
 * u = (u_0, …, u_{nb−1}) in blocks of 3 (t₁, t₂, n), K_μ = {‖(t₁, t₂)‖ ≤ μ n} the friction cone,
 * optionally cut at n ≤ fmax, and H symmetric positive definite. Solved by a primal-dual
 * interior-point method on the problem scaled block by block (each block of u by a positive
 * number, which keeps its cone), from a cold start: Mehrotra's predictor-corrector with
 * Nesterov–Todd scaling of the second-order cones (mpc_qp.c), one dense Cholesky factor of
 * n × n per iteration. At the solution y = H u + g lies in the dual cone K* (plus λ e_n,
 * λ ≥ 0, at a cut) and uᵀy = 0 (the KKT conditions). Memory comes from the caller:
 * mr_cone_qp_work_size doubles. */
#ifndef MOREAU_INTEGRATE_MPC_QP_H
#define MOREAU_INTEGRATE_MPC_QP_H

typedef struct {
  int nb;             /* cone blocks; n = 3 nb variables */
  const double *H;    /* n x n row-major, symmetric positive definite */
  const double *g;    /* n */
  const double *mu;   /* nb friction coefficients */
  const double *fmax; /* nb upper bounds on the normal component n (N, INFINITY: none), or
                         NULL: none; the block's set is then K_μ ∩ {n ≤ fmax} */
} mr_cone_qp;

typedef struct {
  int max_iter; /* interior-point iterations (default 50) */
  double eps;   /* stop when the residuals of stationarity and of the constraints are at most
                   eps (1 + ‖g̃‖∞) and the mean complementarity at most eps, on the scaled
                   problem (default 1e-8) */
} mr_cone_qp_settings;

typedef struct {
  int iterations;
  int converged;
  double primal, dual; /* the residuals of the constraints and of stationarity at the solution
                          returned (the best iterate; scaled problem) */
  double gap;          /* its mean complementarity (scaled) */
} mr_cone_qp_info;

mr_cone_qp_settings mr_cone_qp_settings_default(void);
/* out = the projection of x (3: t₁, t₂, n) on K_μ ∩ {n ≤ fmax} (fmax may be INFINITY) */
void mr_cut_cone_project(double mu, double fmax, const double *x, double *out);
/* doubles of workspace for nb blocks */
long mr_cone_qp_work_size(int nb);
/* Solve; the solution (on the sets, projected there from the last iterate) into u, converged or
 * not (info). Returns 0, or -1 when H cannot be factored (not positive definite). */
int mr_cone_qp_solve(const mr_cone_qp *p, const mr_cone_qp_settings *s, double *work, double *u,
                     mr_cone_qp_info *info);
/* The KKT residual of u: max of the distance of u to its set, of ν = y + λ e_n to K* (y = H u + g,
 * λ = max(0, −u_iᵀy_i / u_n) the cut's multiplier where there is a cut, else 0), of the
 * complementarity |u_iᵀ ν_i| and of λ |fmax − u_n|, both over 1 + ‖y‖∞, over the blocks; y (n) is
 * scratch */
double mr_cone_qp_kkt(const mr_cone_qp *p, const double *u, double *y);

#endif
