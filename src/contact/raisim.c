/* raisim and raisim-ds: the per-contact Gauss-Seidel of RaiSim (Hwangbo et al. 2018; "Contact
 * Models in Robotics", §III-C, Algorithm 5) and its de Saxcé correction ("Reconciling RaiSim
 * with the Maximum Dissipation Principle", Algorithm 1).
 *
 * For contact i, with B = (G + R)⁽ⁱⁱ⁾ and g̃ = g⁽ⁱ⁾ + Σ_{j≠i} G⁽ⁱʲ⁾λ⁽ʲ⁾ = c⁽ⁱ⁾ − B λ⁽ⁱ⁾:
 *   take-off  g̃_N > 0:                    λ* = 0;
 *   stick     λ_v0 = −B⁻¹ g̃ ∈ K_μ:        λ* = λ_v0 (c⁽ⁱ⁾ = 0);
 *   slide     otherwise:                   λ* = argmin ½ λᵀBλ + ĝᵀλ over the ellipse
 *             ∂K_μ ∩ {B_N λ + g̃_N = 0} (zero normal velocity), with ĝ = g̃ for raisim and
 *             ĝ = g̃ + Γ(c⁻), c⁻ = B λ⁽ⁱ⁾ + g̃ the current contact velocity, for raisim-ds;
 *   λ⁽ⁱ⁾ ← (1 − α) λ⁽ⁱ⁾ + α λ*, and after each sweep α ← max(γ α, α_min)
 *   (alpha0, alpha_decay = γ, alpha_min; the papers write γ α + (1 − γ) α_min, which has the
 *   same start, rate and limit).
 * The ellipse is parametrised by the polar angle θ of λ_T: λ(θ) = r(θ) (cos θ, sin θ, 1/μ) with
 * r(θ) = −g̃_N / (B_NN/μ + B_NT·(cos θ, sin θ)) (where the denominator is positive). 32 samples
 * of θ locate the minimum; bisection on the sign of df/dθ in the bracket around the best sample
 * refines it (bisection_iter steps).
 * A frictionless contact (μ = 0: a joint limit, whose tangential rows of G are zero) takes the
 * closed form λ* = (0, 0, −g̃_N / B_NN) without inverting B; a bilateral constraint takes
 * unbounded Gauss-Seidel steps on its rows (mr_gs_bilateral, not relaxed by α).
 * raisim stops on the RaiSim criterion (Coulomb cone, Signorini, stick/slide complementarity;
 * not the friction direction), raisim-ds on the NCP criterion.
 * Known failure modes: raisim violates maximum dissipation when B_NT ≠ 0: its sliding velocity
 * obeys c_T ∝ −λ_T − (μ² λ_N / B_NN) B_NT (eq. (10) of the note), so its NCP ε_abs does not go to
 * zero; both are first-order per-contact schemes (slow on ill-conditioned G) without a
 * convergence guarantee, and the decaying α can freeze the iterate before convergence. */
#include <math.h>

#include "contact/solvers.h"
#include "core/linalg.h"

#define N_SAMPLES 32

typedef struct {
  double alpha; /* current relaxation */
  int desaxce;  /* 1 for raisim-ds */
} raisim_ctx;

/* the sliding subproblem's data: B, the plane's g̃_N, the objective's linear term ĝ, μ */
typedef struct {
  const double *B;
  double gN, mu;
  double gh[3];
} ellipse;

/* the point λ(θ) of the ellipse; returns 0 when the denominator is not positive */
static int ellipse_point(const ellipse *e, double th, double *l, double *dl) {
  double u0 = cos(th), u1 = sin(th);
  double den = e->B[8] / e->mu + e->B[6] * u0 + e->B[7] * u1;
  if (!(den > 1e-12 * e->B[8] / e->mu)) return 0;
  double r = -e->gN / den, dden = -e->B[6] * u1 + e->B[7] * u0;
  double dr = e->gN * dden / (den * den);
  l[0] = r * u0, l[1] = r * u1, l[2] = r / e->mu;
  if (dl) dl[0] = dr * u0 - r * u1, dl[1] = dr * u1 + r * u0, dl[2] = dr / e->mu;
  return 1;
}

/* f(θ) = ½ λᵀBλ + ĝᵀλ, and into df its derivative in θ; +∞ off the ellipse */
static double ellipse_f(const ellipse *e, double th, double *df) {
  double l[3], dl[3], Bl[3];
  if (!ellipse_point(e, th, l, dl)) return INFINITY;
  mr_matvec(Bl, e->B, l, 3, 3);
  double f = 0.0, d = 0.0;
  for (int a = 0; a < 3; ++a)
    f += l[a] * (0.5 * Bl[a] + e->gh[a]), d += (Bl[a] + e->gh[a]) * dl[a];
  if (df) *df = d;
  return f;
}

/* the minimiser of f over the ellipse: sampling, then bisection on the sign of f' */
static void ellipse_min(const ellipse *e, int iters, double *out) {
  double best = INFINITY, th_b = 0.0, h = 2.0 * M_PI / N_SAMPLES;
  for (int k = 0; k < N_SAMPLES; ++k) {
    double f = ellipse_f(e, k * h, NULL);
    if (f < best) best = f, th_b = k * h;
  }
  double lo = th_b - h, hi = th_b + h;
  for (int k = 0; k < iters; ++k) {
    double mid = 0.5 * (lo + hi), df = 0.0;
    double f = ellipse_f(e, mid, &df);
    int go_left = isfinite(f) ? df > 0.0 : mid > th_b;
    if (go_left)
      hi = mid;
    else
      lo = mid;
  }
  if (!ellipse_point(e, 0.5 * (lo + hi), out, NULL)) ellipse_point(e, th_b, out, NULL);
}

/* solve B x = b for a 3x3 block by Cholesky; returns 0 when B is not positive definite */
static int solve3(const double *B, const double *b, double *x) {
  double L[9];
  for (int k = 0; k < 9; ++k)
    L[k] = B[k];
  if (mr_cholesky(L, 3)) return 0;
  for (int a = 0; a < 3; ++a)
    x[a] = b[a];
  mr_cholesky_solve(L, 3, x);
  return 1;
}

/* λ* of contact i: take-off, stick or slide */
static void raisim_target(const mr_contact_problem *p, int i, const double *B, int desaxce,
                          int iters, const double *l, const double *ci, double *target) {
  double mu = p->mu[i], gt[3], Bl[3], ng[3], v0[3];
  mr_matvec(Bl, B, l, 3, 3);
  for (int a = 0; a < 3; ++a)
    gt[a] = ci[a] - Bl[a], ng[a] = -gt[a];
  target[0] = target[1] = target[2] = 0.0;
  if (gt[2] > 0.0) return; /* take-off */
  /* frictionless (a joint limit, whose tangential rows may be zero): λ_T = 0, closed form */
  if (mu == 0.0) {
    target[2] = B[8] > 0.0 ? -gt[2] / B[8] : 0.0;
    return;
  }
  /* a degenerate block */
  if (!solve3(B, ng, v0)) return;
  /* stick */
  if (v0[2] >= 0.0 && hypot(v0[0], v0[1]) <= mu * v0[2]) {
    for (int a = 0; a < 3; ++a)
      target[a] = v0[a];
    return;
  }
  /* slide: the ellipse, with the de Saxcé shift Γ(c⁻) for raisim-ds */
  ellipse e = {B, gt[2], mu, {gt[0], gt[1], gt[2]}};
  if (desaxce) e.gh[2] += mu * hypot(ci[0], ci[1]);
  ellipse_min(&e, iters, target);
}

/* one sweep with relaxation α, then α ← max(γ α, α_min) */
static void raisim_sweep(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                         double *lambda, double *c) {
  raisim_ctx *rc = ctx;
  for (int i = 0; i < p->nc; ++i) {
    double B[9], target[3], delta[3];
    double *l = lambda + 3 * i;
    /* a box (joint friction): a projected Gauss-Seidel step, not relaxed by α */
    /* box and bilateral constraints: Gauss-Seidel steps not relaxed by α */
    if (mr_gs_other_kind(p, i, 1.0, lambda, c)) continue;
    mr_gs_block(p, i, B);
    raisim_target(p, i, B, rc->desaxce, s->bisection_iter, l, c + 3 * i, target);
    for (int a = 0; a < 3; ++a)
      delta[a] = rc->alpha * (target[a] - l[a]);
    mr_gs_apply(p, i, delta, lambda, c);
  }
  rc->alpha = fmax(s->alpha_decay * rc->alpha, s->alpha_min);
}

/* the relaxation settings: 0 < α_min ≤ α0 ≤ 1, 0 < γ ≤ 1, bisection steps ≥ 0 */
static mr_status check_alpha(const mr_solver_settings *s, mr_error *err) {
  if (!s) return mr_error_set(err, MR_ERR_INVALID, "raisim: no settings");
  if (!(s->alpha_min > 0.0 && s->alpha_min <= s->alpha0 && s->alpha0 <= 1.0) ||
      !(s->alpha_decay > 0.0 && s->alpha_decay <= 1.0) || s->bisection_iter < 0)
    return mr_error_set(err, MR_ERR_INVALID,
                        "raisim: need 0 < alpha_min <= alpha0 <= 1, 0 < alpha_decay <= 1, "
                        "bisection_iter >= 0 (got %g, %g, %g, %d)",
                        s->alpha_min, s->alpha0, s->alpha_decay, s->bisection_iter);
  return MR_OK;
}

mr_status mr_solver_raisim(MR_SOLVER_ARGS) {
  mr_status st = check_alpha(s, err);
  if (st) return st;
  raisim_ctx ctx = {s->alpha0, 0};
  return mr_gs_run(p, s, work, raisim_sweep, &ctx, mr_gs_criterion_raisim, lambda, c, stats, err);
}

mr_status mr_solver_raisim_ds(MR_SOLVER_ARGS) {
  mr_status st = check_alpha(s, err);
  if (st) return st;
  raisim_ctx ctx = {s->alpha0, 1};
  return mr_gs_run(p, s, work, raisim_sweep, &ctx, mr_gs_criterion_ncp, lambda, c, stats, err);
}
