/* The cone-constrained QP of the locomotion MPC (mpc.c, docs/mpc.md):
 *
 *   minimise ½ uᵀ H u + gᵀ u   subject to   u_i ∈ K_μᵢ,  i = 0 … nb−1,
 *
 * u = (u_0, …, u_{nb−1}) in blocks of 3 (t₁, t₂, n), K_μ = {‖(t₁, t₂)‖ ≤ μ n} the friction cone,
 * optionally cut at n ≤ fmax, and H symmetric positive definite. Solved by ADMM on the splitting u
 * = z, z ∈ K:
 *
 *   u ← (H + ρ I)⁻¹ (ρ (z − w) − g),   z ← Π_K(u + w),   w ← w + u − z,
 *
 * on the problem scaled block by block (each block of u by a positive number, which keeps its cone:
 * mpc_qp.c), w the scaled multiplier, with a penalty ρ_b per block (ρ where the block's constraint
 * is active, 0.1 ρ elsewhere); at the solution y = H z + g = −ρ_b w lies in the dual cone K*
 * (plus λ e_n, λ ≥ 0, at a cut) and zᵀ y = 0 (the KKT conditions). ρ is balanced between the
 * primal and dual residuals, each change refactoring H + diag ρ_b (Cholesky). Memory comes from the
 * caller: mr_cone_qp_work_size doubles. */
#ifndef MOREAU_INTEGRATE_MPC_QP_H
#define MOREAU_INTEGRATE_MPC_QP_H

typedef struct {
  int nb;             /* cone blocks; n = 3 nb variables */
  const double *H;    /* n x n row-major, symmetric positive definite */
  const double *g;    /* n */
  const double *mu;   /* nb friction coefficients */
  const double *fmax; /* nb upper bounds on the normal component n (N, INFINITY: none), or
                         NULL: none; the block's set is then K_μ ∩ {n ≤ fmax} */
  double *y;          /* n, or NULL: in, a warm start of the multiplier y = H u + g (that of a
                         similar problem's solution); out, the solution's */
} mr_cone_qp;

typedef struct {
  int max_iter; /* ADMM iterations (default 400) */
  double eps; /* stop when ‖u − z‖∞ and ‖ρ (z − z_prev)‖∞ of the scaled problem are below
                 eps (1 + ‖g̃‖∞) (1e-6) */
  double rho; /* the starting penalty on the scaled problem (a previous solve's final ρ), or 0
                 for the mean diagonal of the scaled H (default 0) */
} mr_cone_qp_settings;

typedef struct {
  int iterations;
  int converged;
  double primal, dual; /* the final residuals ‖u − z‖∞, ‖ρ Δz‖∞ */
  double rho;          /* the final penalty */
} mr_cone_qp_info;

mr_cone_qp_settings mr_cone_qp_settings_default(void);
/* out = the projection of x (3: t₁, t₂, n) on K_μ ∩ {n ≤ fmax} (fmax may be INFINITY) */
void mr_cut_cone_project(double mu, double fmax, const double *x, double *out);
/* doubles of workspace for nb blocks */
long mr_cone_qp_work_size(int nb);
/* Solve from the warm start u (its projection on K; zeros are fine); the solution (in K) into u.
 * Returns 0, or -1 when H + ρ I cannot be factored (H not positive semi-definite). */
int mr_cone_qp_solve(const mr_cone_qp *p, const mr_cone_qp_settings *s, double *work, double *u,
                     mr_cone_qp_info *info);
/* The KKT residual of u: max of the distance of u to its set, of ν = y + λ e_n to K* (y = H u + g,
 * λ = max(0, −u_iᵀy_i / u_n) the cut's multiplier where there is a cut, else 0), of the
 * complementarity |u_iᵀ ν_i| and of λ |fmax − u_n|, both over 1 + ‖y‖∞, over the blocks; y (n) is
 * scratch */
double mr_cone_qp_kkt(const mr_cone_qp *p, const double *u, double *y);

#endif
