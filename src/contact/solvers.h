/* The solver functions of the registry (src/contact/registry.c) and the helpers shared by the
 * per-contact Gauss-Seidel solvers (src/contact/gauss_seidel.c). Internal to src/contact. */
#ifndef MOREAU_CONTACT_SOLVERS_H
#define MOREAU_CONTACT_SOLVERS_H

#include <float.h>
#include <math.h>

#include "moreau/contact.h"

struct mr_arena_s;

#define MR_SOLVER_ARGS                                                                             \
  const mr_contact_problem *p, const mr_solver_settings *s, mr_solver_state *state,                \
      struct mr_arena_s *work, double *lambda, double *c, mr_solver_stats *stats, mr_error *err

/* per-contact solvers: lcp.c, pgs.c, raisim.c; the spring-damper baseline: soft.c */
mr_status mr_solver_lcp_pgs(MR_SOLVER_ARGS);
mr_status mr_solver_ccp_pgs(MR_SOLVER_ARGS);
mr_status mr_solver_ncp_pgs(MR_SOLVER_ARGS);
mr_status mr_solver_raisim(MR_SOLVER_ARGS);
mr_status mr_solver_raisim_ds(MR_SOLVER_ARGS);
mr_status mr_solver_soft(MR_SOLVER_ARGS);

/* ---- ADMM, Newton and staggered projections (admm.c, newton.c, stagproj.c) ---- */
mr_status mr_solver_ccp_admm(MR_SOLVER_ARGS);
mr_status mr_solver_ncp_admm(MR_SOLVER_ARGS);
mr_status mr_solver_ccp_newton(MR_SOLVER_ARGS);
mr_status mr_solver_ncp_stagproj(MR_SOLVER_ARGS);
/* staggered projections on the LCP, the pyramid as the friction set (lcp_stagproj.c) */
mr_status mr_solver_lcp_stagproj(MR_SOLVER_ARGS);
/* the cascade ncp-pgs → ncp-admm → active-set Newton polish (hybrid.c) */
mr_status mr_solver_ncp_hybrid(MR_SOLVER_ARGS);
/* lcp-lemke: the Stewart-Trinkle LCP by Lemke's method (lcp_lemke.c); dense, at most
 * MR_LEMKE_MAX_CONTACTS contacts; its scratch bytes; its criterion (the LCP's, on the diamond
 * |λ_t1| + |λ_t2| ≤ μ λ_N: feasibility, Signorini, maximum dissipation, force x velocity) */
#define MR_LEMKE_MAX_CONTACTS 64
mr_status mr_solver_lcp_lemke(MR_SOLVER_ARGS);
size_t mr_lemke_work_size(int nc);
double mr_lemke_criterion(const mr_contact_problem *p, const double *lambda, const double *c);
/* bytes of scratch arena each needs (nv: velocity dimension when p->J, p->M are given, else 0) */
size_t mr_admm_work_size(int nc);
size_t mr_newton_work_size(int nc, int nv);
/* ccp-newton on a block-sparse G whose sparse factor pays (mr_sparse_chol_pays) */
size_t mr_newton_sparse_work_size(int nc);
size_t mr_stagproj_work_size(int nc, int sparse);
/* ncp-hybrid's own scratch on a block-sparse G whose sparse factor pays, beyond the vectors of
 * the per-contact stages */
size_t mr_hybrid_sparse_work_size(int nc);
/* the doubles ncp-hybrid keeps across solves (mr_solver_state.keep) for nc contacts: the LU factor
 * of its all-sticking active-set matrix and its pivots, up to HYB_REST_MAX_NC contacts; else 0 */
size_t mr_hybrid_keep_size(int nc);

/* ---- helpers of the Gauss-Seidel solvers (gauss_seidel.c) ---- */

/* the model criterion a Gauss-Seidel loop stops on */
typedef double (*mr_gs_criterion_fn)(const mr_contact_problem *p, const double *lambda,
                                     const double *c);

/* ‖(a, b)‖ as √(a² + b²), within two ulps of the norm: the iterations' hot loops (the criterion,
 * the sweeps' projections, ADMM's and the staggered projections' cone terms) take it for hypot,
 * whose guard against overflow and underflow (of squares beyond 1e±308: forces and velocities
 * of 1e154) cost 15 % of a 200-body drop's step */
static inline double mr_norm2d(double a, double b) {
  return sqrt(a * a + b * b);
}

/* whether the disk of radius r surely holds (a, b), without its norm: |a| + |b| ≥ ‖(a, b)‖, and
 * hypot and mr_norm2d are within two ulps of the norm, so 4 ulps below r leave their norm ≤ r
 * (0 when unsure, or for a NaN) */
static inline int mr_disk_surely_holds(double a, double b, double r) {
  return fabs(a) + fabs(b) <= r * (1.0 - 4.0 * DBL_EPSILON);
}

/* 1 when s stops every solver on the NCP criterion ε_abs (mr_solver_settings.criterion) */
static inline int mr_stop_on_ncp(const mr_solver_settings *s) {
  return s->criterion == MR_CRITERION_NCP;
}
/* the criterion a solve stops on and measures its best iterate by: the solver's own, or the
 * NCP criterion under MR_CRITERION_NCP (criteria.c) */
mr_gs_criterion_fn mr_stop_criterion(const mr_solver_settings *s, mr_gs_criterion_fn own);

/* the scales of the round-off in c = (G + R) λ + g at λ: *f = ‖λ‖∞ and *v = ‖g‖∞ + D ‖λ‖₁, D
 * the largest diagonal entry of G + R (which bounds every entry, G + R being positive
 * semi-definite), so that *v bounds the sum of the magnitudes of any row's terms */
void mr_problem_roundoff_scales(const mr_contact_problem *p, const double *lambda, double *f,
                                double *v);
/* how far the rounding of the plain product (mr_problem_velocity) can move the NCP criterion at
 * λ, ε_abs or the scaled ε̂ (mr_problem_criteria_scaled), from its value on the compensated one
 * (mr_problem_velocity_dot2): a plain ε̂ above eps_abs by more than this is above it on the
 * compensated c as well */
double mr_problem_plain_slack(const mr_contact_problem *p, const double *lambda);

/* Check the problem's arrays and sizes; MR_ERR_INVALID naming what is wrong. */
mr_status mr_gs_check(const mr_contact_problem *p, const mr_solver_settings *s, mr_error *err);
/* λ ← 0 unless warm starting (non-finite warm starts are zeroed too); c ← (G + R) λ + g */
void mr_gs_start(const mr_contact_problem *p, const mr_solver_settings *s, double *lambda,
                 double *c);
/* the 3x3 block (G + R)⁽ⁱⁱ⁾, row-major, into B */
void mr_gs_block(const mr_contact_problem *p, int i, double *B);
/* λ⁽ⁱ⁾ += δ and c += (G + R)[:, i] δ (G symmetric: its rows of block i) */
void mr_gs_apply(const mr_contact_problem *p, int i, const double *delta, double *lambda,
                 double *c);
/* bilateral constraint i: one unbounded Gauss-Seidel step on each of its rows (B_aa > 0), with
 * relaxation ω, keeping c current */
void mr_gs_bilateral(const mr_contact_problem *p, int i, double omega, double *lambda, double *c);
/* box constraint i (joint friction, |λ_N| ≤ μᵢ): one projected Gauss-Seidel step on its normal
 * row with relaxation ω, λ_T set to 0, keeping c current */
void mr_gs_box(const mr_contact_problem *p, int i, double omega, double *lambda, double *c);
/* constraint i stepped by mr_gs_box or mr_gs_bilateral when it is a box or bilateral one (1),
 * or left to the caller's contact update (0) */
int mr_gs_other_kind(const mr_contact_problem *p, int i, double omega, double *lambda, double *c);
/* ‖λ − λ_prev‖∞ ≤ eps_rel · max(‖λ‖∞, 1e-300): the iterate stalls */
int mr_gs_stalled(const double *lambda, const double *prev, int n, double eps_rel);
/* the LCP (4-facet pyramid) criterion, the CCP, NCP criteria, and the RaiSim one */
double mr_gs_criterion_lcp(const mr_contact_problem *p, const double *lambda, const double *c);
double mr_gs_criterion_ccp(const mr_contact_problem *p, const double *lambda, const double *c);
double mr_gs_criterion_ncp(const mr_contact_problem *p, const double *lambda, const double *c);
double mr_gs_criterion_raisim(const mr_contact_problem *p, const double *lambda, const double *c);

/* One Gauss-Seidel sweep over the contacts (updates λ and c through mr_gs_apply). ctx carries
 * the solver's per-solve data (e.g. RaiSim's α). */
typedef void (*mr_gs_sweep_fn)(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                               double *lambda, double *c);

/* The common loop: start, check the criterion before the first sweep and after each, stop on
 * eps_abs, on stall (eps_rel), at max_iter or at the deadline (the best iterate seen returned
 * when unconverged); resynchronise c every 64 sweeps against drift; fill iterations, converged
 * and eps_model. Needs 6nc doubles from work. */
mr_status mr_gs_run(const mr_contact_problem *p, const mr_solver_settings *s,
                    struct mr_arena_s *work, mr_gs_sweep_fn sweep, void *ctx,
                    mr_gs_criterion_fn criterion, double *lambda, double *c, mr_solver_stats *stats,
                    mr_error *err);

/* mr_gs_run's options for a caller that evaluates c itself (ncp-hybrid's chunks of ncp-pgs):
 * MR_GS_C_GIVEN, c is (G + R) λ + g by mr_problem_velocity on entry, λ warm and finite (the
 * start's product left out); MR_GS_C_LAZY, a run that meets its criterion returns with c as the
 * sweeps left it (its criterion on that c, converged = 1), the caller evaluating c at λ */
enum { MR_GS_C_GIVEN = 1, MR_GS_C_LAZY = 2 };
mr_status mr_gs_run_with(const mr_contact_problem *p, const mr_solver_settings *s,
                         struct mr_arena_s *work, mr_gs_sweep_fn sweep, void *ctx,
                         mr_gs_criterion_fn criterion, int options, double *lambda, double *c,
                         mr_solver_stats *stats, mr_error *err);
/* ncp-pgs (mr_solver_ncp_pgs) with mr_gs_run_with's options */
mr_status mr_ncp_pgs_with(const mr_contact_problem *p, const mr_solver_settings *s,
                          struct mr_arena_s *work, int options, double *lambda, double *c,
                          mr_solver_stats *stats, mr_error *err);

#endif
