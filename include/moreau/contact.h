/* The frictional contact problem, its accuracy criteria, and the family of contact solvers.
 *
 * A problem with nc contacts is, in force units (DESIGN.md §4):
 *   c = (G + R) λ + g,   λ, c ∈ R^{3nc}, each contact ordered (t₁, t₂, n),
 * and the NCP asks, for every contact i,
 *   K_μ ∋ λ⁽ⁱ⁾ ⟂ c⁽ⁱ⁾ + Γ(c⁽ⁱ⁾) ∈ K_μ*,  K_μ = {‖λ_T‖ ≤ μ λ_N},  Γ(c) = (0, 0, μ‖c_T‖).
 * Every solver consumes an mr_contact_problem and fills λ, c and mr_solver_stats; solvers are
 * rows of one registry, chosen by name. */
#ifndef MOREAU_CONTACT_H
#define MOREAU_CONTACT_H

#include <stddef.h>

#include "moreau/error.h"

struct mr_arena_s;

/* A contact problem, independent of any model (so it can be saved, loaded and solved alone).
 * Arrays are borrowed, not owned. */
typedef struct {
  int nc;           /* number of contacts */
  const double *G;  /* Delassus matrix, 3nc x 3nc, row-major, symmetric positive semi-definite;
                     * may be NULL when Gb is given */
  const double *g;  /* free contact velocity (with the gap/Baumgarte/restitution correction), 3nc */
  const double *mu; /* friction coefficients, nc */
  const double *R;  /* compliance (diagonal), 3nc; NULL means rigid (R = 0) */
  /* optional primal data, used by ccp-newton when present: c = J v − (J v_f − g) with
   * M v = M v_f + Jᵀ λ; without them ccp-newton works on a factor of G */
  int nv;           /* velocity dimension (0 when J and M are absent) */
  const double *J;  /* contact Jacobian, 3nc x nv */
  const double *M;  /* mass matrix, nv x nv (times 1/Δt to match force units) */
  /* optional, used by the soft model: gap Φ_N (nc), the contact velocity J v at the start of
   * the step (3nc, m/s) and the time step */
  const double *phi;
  const double *vel;
  double dt;
  /* optional kind of each constraint (nc entries, MR_KIND_*); NULL means every one is a
   * frictional contact. A bilateral constraint has λ ∈ R³ (its "cone" is R³, the dual cone
   * {0}): every solver leaves its three rows unbounded, and its criteria are ε_p = 0,
   * ε_d = ‖c‖, ε_c = 0. A unilateral constraint (a joint limit) needs no kind: it is a
   * frictionless contact (μ = 0) whose tangential rows of J are zero (docs/solvers.md). A box
   * constraint (joint dry friction) has λ_T = 0 and |λ_N| ≤ mu[i] (mu holds the bound, in the
   * force units of λ: N m or N); its criteria are ε_p = max(|λ_N| − mu, ‖λ_T‖, 0),
   * ε_d = |mid(λ_N + mu, λ_N − mu, c_N)| (0 iff c_N = 0 inside the box, c_N ≤ 0 at +mu,
   * c_N ≥ 0 at −mu), ε_c = 0 (docs/physics.md, "Joint friction"). */
  const unsigned char *kind;
  /* optional block-sparse G (used when G is NULL): the 3x3 blocks (i, j) that may be nonzero, in
   * block-CSR with both triangles stored: row i's blocks are Gb_col[Gb_row[i] .. Gb_row[i+1]),
   * column indices ascending, the diagonal block always present; block k is Gb[9k .. 9k+9),
   * row-major. A block absent from the pattern is zero. The island assembly gives the blocks of
   * contacts whose kinematic paths share a dof (docs/solvers.md, "The block-sparse G"). */
  int nnzb;
  const int *Gb_row; /* nc + 1 */
  const int *Gb_col; /* nnzb */
  const double *Gb;  /* 9 nnzb */
} mr_contact_problem;

/* kinds of constraint in mr_contact_problem.kind */
enum { MR_KIND_CONTACT = 0, MR_KIND_BILATERAL = 1, MR_KIND_BOX = 2 };

/* 1 when constraint i of p is bilateral */
static inline int mr_problem_bilateral(const mr_contact_problem *p, int i) {
  return p->kind && p->kind[i] == MR_KIND_BILATERAL;
}

/* 1 when constraint i of p is a box (joint friction) */
static inline int mr_problem_box(const mr_contact_problem *p, int i) {
  return p->kind && p->kind[i] == MR_KIND_BOX;
}

/* 1 when some constraint of p is a box */
int mr_problem_has_box(const mr_contact_problem *p);

/* ---- access to G, dense or block-sparse ---- */

/* 1 when the problem carries G in some form (dense G, or the block-sparse Gb arrays) */
int mr_problem_has_G(const mr_contact_problem *p);
/* the 3x3 block (i, j) of G, row-major, into B; returns 0 (and B = 0) for a block outside the
 * sparse pattern */
int mr_problem_G_block(const mr_contact_problem *p, int i, int j, double *B);
/* y = G x (3nc); y must not alias x */
void mr_problem_G_mul(const mr_contact_problem *p, const double *x, double *y);
/* G as a dense 3nc x 3nc row-major matrix, into caller memory */
void mr_problem_G_dense(const mr_contact_problem *p, double *G);

/* Solver settings: one struct for every solver, each using the fields it needs. */
typedef struct {
  int max_iter;       /* iteration limit (default 10000) */
  double eps_abs;     /* target on the criterion in use (criterion below), force units (default
                       * 1e-6) */
  double eps_rel;     /* stop when the iterate moves less than this, relative (default 1e-12) */
  double omega;       /* over-relaxation of Gauss-Seidel sweeps / ADMM (default 1.0) */
  int warm_start;     /* start from the λ given on entry (default 1) */
  /* ADMM (ccp-admm, ncp-admm) */
  double rho;         /* initial penalty (default 1e-6 · ... , 0 = derived from G) */
  double rho_ratio;   /* primal/dual residual ratio that triggers a ρ update (default 10) */
  double rho_power;   /* ρ update factor cond(G)^rho_power (default 0.05) */
  int rho_update_every; /* iterations between ρ updates at most (default 1) */
  int power_iter;     /* power iterations for the eigenvalue estimates (default 20) */
  /* RaiSim (raisim, raisim-ds) */
  double alpha0;      /* initial relaxation (default 1.0) */
  double alpha_decay; /* α ← α · decay each sweep (default 0.99) */
  double alpha_min;   /* floor of α (default 0.01) */
  int bisection_iter; /* bisection steps on the ellipse (default 50) */
  /* Newton (ccp-newton) */
  double compliance_eps; /* R = eps · diag(G) when the problem has R = 0 (default 1e-6) */
  double armijo_c;    /* sufficient decrease (default 1e-4) */
  double backtrack;   /* step reduction (default 0.5) */
  int newton_armijo_only; /* 1: plain Armijo backtracking from the full step (the paper's
                           * implementation); 0 (default): first the exact minimiser along the
                           * Newton direction (as MuJoCo and Drake), kept when it passes Armijo */
  /* staggered projections (ncp-stagproj) */
  int inner_iter;     /* iterations of each inner subproblem (default 100) */
  /* soft */
  double soft_k;      /* normal stiffness N/m (default 1e5) */
  double soft_d;      /* normal damping N s/m (default 1e2; explicit, so d Δt / m_eff < 1) */
  double soft_vreg;   /* friction regularisation velocity m/s (default 1e-3) */
  /* the budget (docs/solvers.md, "The budget"): max_iter bounds the iterations of one island's
   * solve with its retries (the cold retry of a warm start, the retry without push-out);
   * max_work the iterations times contacts of a simulator step, shared by its islands (each
   * island may run max_work / (contacts not yet solved) iterations, at least MR_WORK_MIN_ITER);
   * max_time, when set, the wall time of a step's contact solve, shared by its islands in
   * proportion to their contacts. At the budget a solver returns the best iterate it has seen
   * with converged = 0 and stats.budget = 1. */
  int max_work;       /* contact-iterations of a simulator step (default 200000; 0: none) */
  double max_time;    /* wall-time budget in s of a simulator step's contact solve (default 0:
                       * none, so that a run is deterministic); a solve outside a simulator
                       * (mr_solve) has none */
  int work_iter;      /* the solve's share of max_work in sweeps of its problem (the simulator's
                       * contact stage sets it, and max_iter no larger, for each island; 0:
                       * none): the solvers on a sparse factor (ncp-admm, ccp-admm,
                       * ncp-stagproj and ncp-hybrid's stages) then count max_iter and report
                       * stats.iterations in sweeps, each factorisation, solve and product
                       * charged at its cost; on a dense G ncp-hybrid gives its staggered
                       * projections, whose outer iteration runs two inner ADMM solves of up to
                       * inner_iter iterations each, as many outer iterations as the sweeps
                       * left allow */
  double deadline;    /* the solve's end, CLOCK_MONOTONIC time in s (mr_solver_clock); 0: none.
                       * Set from max_time by the simulator's contact stage for each island;
                       * a caller of mr_solve may set it */
  int criterion;      /* what a solve stops on (docs/solvers.md, "The stopping criterion"):
                       * MR_CRITERION_OWN (default) each solver's own model's criterion
                       * (stats.eps_model ≤ eps_abs), MR_CRITERION_NCP the NCP criterion ε_abs of
                       * its iterate (stats.eps_abs ≤ eps_abs) for every solver; at the budget the
                       * best iterate is the best on the criterion in use */
  int no_cold_retry;  /* 1: mr_solve does not solve a warm start that did not converge again
                       * from λ = 0 (a fixed budget: one run of at most max_iter iterations);
                       * 0 (default): it does, and keeps the better result */
  /* the LCP's friction pyramid (lcp-pgs, lcp-stagproj): k facets, k even in
   * [4, MR_PYRAMID_MAX_FACETS] (default 4; 0 reads as 4). The regular k-gon circumscribed about
   * the disc ‖λ_T‖ ≤ μ λ_N, {λ_T : λ_T·d_j ≤ μ λ_N}, d_j = (cos 2πj/k, sin 2πj/k): k = 4 is
   * the box |λ_t1|, |λ_t2| ≤ μ λ_N; its vertices, at angles (2j+1)π/k and radius
   * μ λ_N / cos(π/k), are where a sliding contact's friction lands, within π/k of the
   * direction opposite the slip (docs/solvers.md, "Pyramids with k facets") */
  int pyramid_facets;
  /* the relative tolerance of ncp-hybrid's scaled NCP criterion (docs/solvers.md, "The scaled
   * criterion", mr_problem_criteria_scaled): it stops when each part of ε_abs is within
   * max(eps_abs, eps_scale S), S the part's own scale at λ (default 1e-15, about 9 units of
   * round-off u = 2⁻⁵³: what double precision can hold at any load; 0: eps_abs alone) */
  double eps_scale;
} mr_solver_settings;

/* values of mr_solver_settings.criterion */
enum { MR_CRITERION_OWN = 0, MR_CRITERION_NCP = 1 };

/* the most facets of the LCP's friction pyramid (mr_solver_settings.pyramid_facets) */
#define MR_PYRAMID_MAX_FACETS 64

/* the fewest iterations max_work leaves an island */
#define MR_WORK_MIN_ITER 25

/* the clock of mr_solver_settings.deadline: CLOCK_MONOTONIC in s */
double mr_solver_clock(void);
/* 1 when s has a deadline and it has passed */
int mr_solver_late(const mr_solver_settings *s);

/* Statistics of one solve. */
typedef struct {
  int converged;      /* reached eps_abs on the criterion in use (settings.criterion: its own
                       * model's by default, else the NCP criterion) */
  int iterations;
  double eps_abs, eps_p, eps_d, eps_c; /* NCP criteria at the returned λ */
  double eps_model;   /* the solver's own model's criterion (CCP without Γ, LCP on the pyramid)
                       * at the returned λ, whatever criterion it stopped on */
  double time_us;     /* wall time of the solve */
  double rho;         /* final ADMM penalty (ADMM solvers), for warm start */
  int budget;         /* 1 when the solve stopped at its budget (deadline or max_iter) before
                       * eps_abs: λ is the best iterate seen, converged = 0 */
  int factorizations; /* Cholesky factorisations done: of G + R + ρI (ADMM, once per ρ
                       * value), of the Newton Hessian (ccp-newton, once per iteration), of the
                       * two subproblem matrices (ncp-stagproj) */
  double eps_scaled; /* the scaled NCP criterion ε̂ (mr_problem_criteria_scaled, with the settings'
                      * eps_abs and eps_scale) at the returned λ, for every solver; ncp-hybrid stops
                      * on it */
} mr_solver_stats;

/* A solver's persistent state across solves (warm start of ADMM duals and ρ). May be NULL. */
typedef struct {
  int cap;            /* capacity of y, 3 nc max */
  double *y;          /* ADMM dual variable */
  double rho;         /* last ρ; 0 = none */
  int valid;          /* y and rho hold a previous solve's values */
  double eig_max, eig_min; /* ADMM: cached power-iteration estimates of the extreme eigenvalues
                            * of G + R (velocity/force units); 0 = none, re-estimated */
  int nu;                  /* ccp-newton: y holds its primal velocity u = v − v_f in its first nu
                            * entries (nu = nv, or r for a standalone problem), or, with nu = −3nc,
                            * its coordinates y of u = Jᵀy on a block-sparse G; 0 = y is ADMM's */
  struct mr_sparse_chol *chol; /* ccp-admm, ncp-admm, ccp-newton on a block-sparse G that pays
                                * (mr_sparse_chol_pays): the sparse Cholesky, kept
                                * across solves; analysed (allocating) by the first solve of
                                * each new sparsity pattern, reused without allocation while the
                                * pattern repeats. Owned: mr_solver_state_release frees it. */
  double *keep; /* the caller's storage for what a solver keeps from one solve to the next,
                 * keep_cap doubles (mr_solver_keep_size), or NULL: nothing kept. ncp-hybrid:
                 * the LU factor of its regularised G + R, the matrix of the active set where
                 * every contact sticks (docs/solvers.md, "Rest costs nothing") */
  size_t keep_cap;
  int keep_n; /* rows of the factor in keep; 0 = none */
} mr_solver_state;

/* The crossovers measured by bench/sparse_g.c (docs/solvers.md, "The block-sparse G"): the
 * island assembly stores G block-sparse from MR_SPARSE_G_MIN_NC contacts on (a Gauss-Seidel
 * sweep over the stored blocks is then faster than over dense rows); the ADMM solvers and
 * ccp-newton factor a block-sparse G sparse when mr_sparse_chol_pays, from MR_SPARSE_CHOL_MIN_NC
 * contacts with at most MR_SPARSE_CHOL_MAX_FILL of the nc² blocks stored, and densely below. */
#define MR_SPARSE_G_MIN_NC 16
#define MR_SPARSE_CHOL_MIN_NC 24
#define MR_SPARSE_CHOL_MAX_FILL 0.5
static inline int mr_sparse_chol_pays(int nc, int nnzb) {
  return nc >= MR_SPARSE_CHOL_MIN_NC && (double)nnzb <= MR_SPARSE_CHOL_MAX_FILL * nc * (double)nc;
}

/* free what a state owns (its sparse Cholesky) and set it to NULL; y is the caller's */
void mr_solver_state_release(mr_solver_state *state);

/* A solver: fill lambda (3nc; holds the warm start on entry when settings->warm_start) and
 * c = (G + R) λ + g (3nc). Scratch memory comes from work (no malloc). */
typedef mr_status (*mr_solve_fn)(const mr_contact_problem *p, const mr_solver_settings *s,
                                 mr_solver_state *state, struct mr_arena_s *work, double *lambda,
                                 double *c, mr_solver_stats *stats, mr_error *err);

typedef struct {
  const char *name;        /* as the CLI and scenes spell it */
  const char *model;       /* "LCP", "CCP", "RaiSim", "NCP", "soft" */
  const char *description; /* one line */
  mr_solve_fn solve;
  int block_sparse;        /* 1: works on the block-sparse Gb directly; 0: mr_solve gives it a
                            * dense copy of G (from the work arena) when only Gb is present */
  const char *no_box;      /* NULL: solves box constraints (MR_KIND_BOX, joint friction); else
                            * why it cannot (mr_solve and mr_sim_create refuse them by name) */
} mr_solver_info;

mr_solver_settings mr_solver_settings_default(void);

/* the registry */
int mr_solver_count(void);
const mr_solver_info *mr_solver_at(int i);
const mr_solver_info *mr_solver_find(const char *name); /* NULL if unknown */

/* MR_ERR_UNSUPPORTED when solver info cannot solve box constraints (joint friction), with a
 * message naming it, why, and the solvers that can; what names the source ("the world has joint
 * friction on 3 dofs"); MR_OK when it can */
mr_status mr_solver_check_box(const mr_solver_info *info, const char *what, mr_error *err);

/* Run a solver by name, with timing and the NCP criteria filled in stats. */
mr_status mr_solve(const char *name, const mr_contact_problem *p, const mr_solver_settings *s,
                   mr_solver_state *state, struct mr_arena_s *work, double *lambda, double *c,
                   mr_solver_stats *stats, mr_error *err);

/* Bytes of scratch memory a solver may need for nc contacts (and nv when J, M are given). */
size_t mr_solver_work_size(int nc, int nv);
/* The same for one solver (NULL: any), on a problem whose G is dense (block_sparse 0) or
 * block-sparse with at most nnzb stored blocks: proportional to nc and nnzb when the solver works
 * on the stored blocks (docs/solvers.md, "The block-sparse G"), at most mr_solver_work_size. */
size_t mr_solver_work_size_for(const mr_solver_info *info, int nc, int nv, int block_sparse,
                               size_t nnzb);

/* Doubles of mr_solver_state.keep that solver info keeps for a problem of nc contacts (0: it
 * keeps nothing) */
size_t mr_solver_keep_size(const mr_solver_info *info, int nc);

/* ---- cones and criteria ---- */

/* projection of x (t₁, t₂, n) on K_μ, into out (may alias x) */
void mr_cone_project(double mu, const double *x, double *out);
/* projection on the dual cone K_μ* = K_{1/μ} (μ = 0: the half-space n ≥ 0) */
void mr_dual_cone_project(double mu, const double *x, double *out);
/* projection of constraint i's x on its set: K_μ, R³ (identity) when bilateral, or
 * {0} x {0} x [−μ, μ] when a box */
void mr_constraint_project(const mr_contact_problem *p, int i, const double *x, double *out);
/* the de Saxcé shift Γ(c) = (0, 0, μ‖c_T‖) added to c */
void mr_desaxce(double mu, const double *c, double *out);

/* per-contact NCP criteria at (λ, c): ε_p = dist_K(λ), ε_d = dist_K*(c + Γ(c)),
 * ε_c = |⟨λ, c + Γ(c)⟩|; with desaxce = 0 the CCP criteria (no Γ) */
void mr_contact_criteria(double mu, const double *lambda, const double *c, int desaxce,
                         double *eps_p, double *eps_d, double *eps_c);
/* a box constraint's criteria at (λ, c), bound f (the mr_contact_problem.kind comment) */
void mr_box_criteria(double f, const double *lambda, const double *c, double *eps_p,
                     double *eps_d);
/* c = (G + R) λ + g */
void mr_problem_velocity(const mr_contact_problem *p, const double *lambda, double *c);
/* the same in compensated arithmetic (Dot2: as accurate as in twice the precision, then
 * rounded), for evaluating the criteria at a solution, where the terms of c cancel */
void mr_problem_velocity_dot2(const mr_contact_problem *p, const double *lambda, double *c);
/* the maxima over contacts of the criteria (bilateral constraints: ε_d = ‖c‖, ε_p = ε_c = 0);
 * returns ε_abs = max(ε_p, ε_d, ε_c) */
double mr_problem_criteria(const mr_contact_problem *p, const double *lambda, const double *c,
                           int desaxce, double *eps_p, double *eps_d, double *eps_c);

/* The scaled NCP criterion ε̂ (docs/solvers.md, "The scaled criterion"): each part of each
 * constraint's criteria judged against max(eps_abs, eps_scale S), S the size to which double
 * precision can know it at λ: F_i = ‖λ⁽ⁱ⁾‖∞ for ε_p, V_i = the largest over the constraint's
 * rows r of |g_r| + Σ_j |(G + R)_rj λ_j| for ε_d (the terms c_r sums: an evaluation, or a
 * rounding of λ, errs by u times it), F_i V_i for ε_c. ε̂ = the maximum over the constraints and
 * parts of max(0, part − (its tolerance − eps_abs)): ε̂ ≤ eps_abs exactly when every part is
 * within its tolerance, and ε̂ = ε_abs, bit for bit, where every tolerance is eps_abs
 * (eps_scale 0: always). At λ with c = (G + R) λ + g (both 3nc); the unscaled maxima as
 * mr_problem_criteria's (with Γ) into eps_p, eps_d, eps_c when not NULL. Its cost is the
 * criteria's but for the constraints above eps_abs: for those an O(nc) bound on V_i first, and
 * their rows of G where the bound leaves a tolerance above eps_abs. */
double mr_problem_criteria_scaled(const mr_contact_problem *p, const double *lambda,
                                  const double *c, double eps_abs, double eps_scale, double *eps_p,
                                  double *eps_d, double *eps_c);

/* ---- the contact solution ----
 *
 * dλ/dg of a contact problem's solution at (λ, c = (G + R) λ + g), by implicit differentiation
 * of the NCP conditions on the active set (src/contact/contact_derivatives.c): a separated
 * contact keeps λ = 0, a sticking one (and a bilateral constraint) keeps c = 0, a sliding one
 * keeps c_N = 0 and λ_T = −μ λ_N c_T / ‖c_T‖ on the cone boundary. tol (force and velocity
 * units) decides the modes: separated when λ_N <= tol, sliding when ‖c_T‖ > tol. On the
 * boundary between two modes λ(g) is not differentiable and the mode chosen gives one of the
 * one-sided derivatives. The contact velocity follows as dc/dg = (G + R) dλ/dg + 1. */
/* the mode of a contact in an active set (src/contact/active_set.h classifies; a bilateral
 * constraint is sticking) */
typedef enum { MR_CONTACT_SEPARATED = 0, MR_CONTACT_STICKING = 1, MR_CONTACT_SLIDING = 2 } mr_contact_mode;

/* bytes of the work buffer for nc contacts */
size_t mr_contact_derivative_work_size(int nc);

/* dλ/dg (3nc x 3nc, row-major) into dlambda_dg, and each contact's mode into modes (nc, may be
 * NULL); work holds mr_contact_derivative_work_size(nc) bytes, aligned for double.
 * MR_ERR_NUMERIC when the active-set system is singular (e.g. more sticking contacts than the
 * bodies' degrees of freedom, G singular). */
mr_status mr_contact_solution_derivative(const mr_contact_problem *p, const double *lambda,
                                         const double *c, double tol, double *dlambda_dg,
                                         int *modes, void *work, mr_error *err);

#endif
