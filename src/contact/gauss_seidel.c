/* The loop shared by the per-contact (Gauss-Seidel) solvers lcp-pgs, ccp-pgs, ncp-pgs, raisim and
 * raisim-ds ("Contact Models in Robotics", §III, Algorithms 1, 2, 5, 6).
 *
 * The contact velocity c = (G + R) λ + g is kept up to date incrementally: when contact i moves
 * by δ, c += (G + R)[:, i] δ, O(n) per contact like reading row block i. So every sweep costs
 * O(n²) on a dense G, and on a block-sparse G (mr_contact_problem.Gb) O(stored blocks): a
 * contact's update touches only the contacts it is coupled to. The stopping criterion, evaluated
 * on the exact c, costs only O(nc) per sweep. c is recomputed from scratch every 64 sweeps and at
 * the end, so round-off cannot drift.
 *
 * Stopping: the model's own criterion (the LCP, CCP, NCP or RaiSim residual below), or under
 * settings.criterion = MR_CRITERION_NCP the NCP criterion ε_abs for every solver, ≤ eps_abs,
 * checked before the first sweep (a warm start that already solves the problem costs 0
 * iterations) and after each sweep; or the iterate stalls, ‖λ_k − λ_{k−1}‖∞ ≤ eps_rel ‖λ_k‖∞;
 * or max_iter sweeps. The best iterate kept for the budget is the best on the criterion in use;
 * eps_model is the model's own criterion at the returned λ either way.
 *
 * Bilateral constraints (mr_contact_problem.kind): every sweep updates them by mr_gs_bilateral,
 * three unbounded coordinate steps λ_a ← λ_a − ω c_a / B_aa (Gauss-Seidel on a consistent
 * positive semi-definite linear system, which converges; rows with B_aa = 0 — directions the
 * mechanism cannot move, as the out-of-plane row of a planar loop — are skipped), and the model
 * criteria take ‖c‖ for them. Box constraints (joint friction, mr_contact_problem.kind) are
 * updated by mr_gs_box, one projected coordinate step λ_N ← clamp(λ_N − ω c_N / B_NN, −f, f)
 * (Gauss-Seidel on a box-constrained convex QP, which converges), λ_T held at 0, and every
 * model criterion takes their box criteria (mr_box_criteria). */
#include <math.h>
#include <string.h>

#include "contact/solvers.h"
#include "core/arena.h"
#include "core/lanes.h"
#include "core/linalg.h"

#define RESYNC_EVERY 64
/* sweeps between reads of the clock against the deadline (a read costs ~25 ns, a sweep of the
 * smallest island about as much) */
#define LATE_EVERY 8

mr_status mr_gs_check(const mr_contact_problem *p, const mr_solver_settings *s, mr_error *err) {
  if (!p || !s) return mr_error_set(err, MR_ERR_INVALID, "contact solver: no problem or settings");
  if (p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "contact solver: nc = %d < 0", p->nc);
  if (p->nc > 0 && (!mr_problem_has_G(p) || !p->g || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "contact solver: G, g or mu missing (nc = %d)", p->nc);
  if (!(s->omega > 0.0 && s->omega < 2.0))
    return mr_error_set(err, MR_ERR_INVALID, "contact solver: omega = %g is not in (0, 2)",
                        s->omega);
  if (s->max_iter < 0)
    return mr_error_set(err, MR_ERR_INVALID, "contact solver: max_iter = %d < 0", s->max_iter);
  for (int i = 0; i < p->nc; ++i)
    if (!(p->mu[i] >= 0.0) || !isfinite(p->mu[i]))
      return mr_error_set(err, MR_ERR_INVALID,
                          "contact solver: mu[%d] = %g is not a finite value >= 0", i, p->mu[i]);
  return MR_OK;
}

void mr_gs_start(const mr_contact_problem *p, const mr_solver_settings *s, double *lambda,
                 double *c) {
  int n = 3 * p->nc;
  for (int k = 0; k < n; ++k)
    if (!s->warm_start || !isfinite(lambda[k])) lambda[k] = 0.0;
  mr_problem_velocity(p, lambda, c);
}

void mr_gs_block(const mr_contact_problem *p, int i, double *B) {
  mr_problem_G_block(p, i, i, B);
  if (p->R)
    for (int a = 0; a < 3; ++a)
      B[4 * a] += p->R[3 * i + a];
}

void mr_gs_apply(const mr_contact_problem *p, int i, const double *delta, double *lambda,
                 double *c) {
  int n = 3 * p->nc;
  if (!p->G) {
    /* the stored blocks of row i in one pass: column j of G's rows 3i..3i+2 (G symmetric), each
     * entry of c updated in the dense order (a = 0, 1, 2, with R's term after G's on the
     * diagonal); a zero δ_a adds exact zeros */
    const double d[3] = {delta[0], delta[1], delta[2]};
    const lanes4 d0 = LANES(d[0]), d1 = LANES(d[1]), d2 = LANES(d[2]);
    const double r[3] = {p->R ? p->R[3 * i] : 0.0, p->R ? p->R[3 * i + 1] : 0.0,
                         p->R ? p->R[3 * i + 2] : 0.0};
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      const double *B = p->Gb + 9 * (size_t)k;
      double *cj = c + 3 * p->Gb_col[k];
      if (p->Gb_col[k] != i) { /* the three entries side by side, each in its order */
        /* the block's rows read as four entries each, the fourth (the next entry, left out)
         * within Gb: an off-diagonal block is never the last stored one, the last row ending
         * with its diagonal block (columns ascending, the diagonal present) */
        lanes4 x = {cj[0], cj[1], cj[2], 0.0}, b[3];
        for (int a = 0; a < 3; ++a)
          memcpy(b + a, B + 3 * a, sizeof(lanes4));
        x += b[0] * d0;
        x += b[1] * d1;
        x += b[2] * d2;
        cj[0] = x[0], cj[1] = x[1], cj[2] = x[2];
        continue;
      }
      for (int b = 0; b < 3; ++b)
        for (int a = 0; a < 3; ++a) {
          cj[b] += B[3 * a + b] * d[a];
          if (a == b) cj[b] += r[a] * d[a];
        }
    }
    for (int a = 0; a < 3; ++a)
      lambda[3 * i + a] += d[a];
    return;
  }
  for (int a = 0; a < 3; ++a) {
    double d = delta[a];
    if (d == 0.0) continue;
    const double *row = p->G + (size_t)(3 * i + a) * n; /* = column 3i+a, G symmetric */
    for (int k = 0; k < n; ++k)
      c[k] += row[k] * d;
    if (p->R) c[3 * i + a] += p->R[3 * i + a] * d;
    lambda[3 * i + a] += d;
  }
}

void mr_gs_bilateral(const mr_contact_problem *p, int i, double omega, double *lambda, double *c) {
  double B[9];
  mr_gs_block(p, i, B);
  for (int a = 0; a < 3; ++a) {
    /* a row the velocities cannot move (zero Jacobian row) is skipped */
    if (!(B[4 * a] > 0.0)) continue;
    double delta[3] = {0.0, 0.0, 0.0};
    delta[a] = -omega * c[3 * i + a] / B[4 * a];
    mr_gs_apply(p, i, delta, lambda, c);
  }
}

int mr_gs_other_kind(const mr_contact_problem *p, int i, double omega, double *lambda, double *c) {
  if (mr_problem_box(p, i))
    mr_gs_box(p, i, omega, lambda, c);
  else if (mr_problem_bilateral(p, i))
    mr_gs_bilateral(p, i, omega, lambda, c);
  else
    return 0;
  return 1;
}

void mr_gs_box(const mr_contact_problem *p, int i, double omega, double *lambda, double *c) {
  double B[9], *l = lambda + 3 * i, f = p->mu[i];
  mr_gs_block(p, i, B);
  double delta[3] = {-l[0], -l[1], 0.0};
  /* a row the velocities cannot move: only projected */
  double x = B[8] > 0.0 ? l[2] - omega * c[3 * i + 2] / B[8] : l[2];
  delta[2] = fmin(fmax(x, -f), f) - l[2];
  mr_gs_apply(p, i, delta, lambda, c);
}

/* a box constraint's residual, max(ε_p, ε_d) */
static double box_residual(const mr_contact_problem *p, int i, const double *lambda,
                           const double *c) {
  double ep, ed;
  mr_box_criteria(p->mu[i], lambda + 3 * i, c + 3 * i, &ep, &ed);
  return fmax(ep, ed);
}

int mr_gs_stalled(const double *lambda, const double *prev, int n, double eps_rel) {
  double dmax = 0.0, lmax = 0.0;
  for (int k = 0; k < n; ++k) {
    /* fmax inline (libm's is a call): a NaN difference is ignored as fmax ignores it */
    double d = fabs(lambda[k] - prev[k]), l = fabs(lambda[k]);
    dmax = d > dmax ? d : dmax;
    lmax = l > lmax ? l : lmax;
  }
  return dmax <= eps_rel * fmax(lmax, 1e-300);
}

/* a bilateral constraint's residual ‖c‖ (its force is free) */
static double bilateral_residual(const double *c) {
  return sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
}

/* per contact: pyramid feasibility, Signorini, and maximum dissipation on the box
 * (−λ_tj c_tj = μ λ_N |c_tj| for each tangent direction j) */
static double lcp_contact(double mu, const double *l, const double *c) {
  double ep = fmax(fmax(-l[2], 0.0), fmax(fabs(l[0]) - mu * l[2], fabs(l[1]) - mu * l[2]));
  double ed = fmax(-c[2], 0.0);
  double ec = fabs(l[2] * c[2]);
  for (int j = 0; j < 2; ++j)
    ec = fmax(ec, fabs(mu * fmax(l[2], 0.0) * fabs(c[j]) + l[j] * c[j]));
  return fmax(ep, fmax(ed, ec));
}

double mr_gs_criterion_lcp(const mr_contact_problem *p, const double *lambda, const double *c) {
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i)
    e = fmax(e, mr_problem_box(p, i)         ? box_residual(p, i, lambda, c)
                : mr_problem_bilateral(p, i) ? bilateral_residual(c + 3 * i)
                                             : lcp_contact(p->mu[i], lambda + 3 * i, c + 3 * i));
  return e;
}

double mr_gs_criterion_ccp(const mr_contact_problem *p, const double *lambda, const double *c) {
  return mr_problem_criteria(p, lambda, c, 0, NULL, NULL, NULL);
}

double mr_gs_criterion_ncp(const mr_contact_problem *p, const double *lambda, const double *c) {
  return mr_problem_criteria(p, lambda, c, 1, NULL, NULL, NULL);
}

mr_gs_criterion_fn mr_stop_criterion(const mr_solver_settings *s, mr_gs_criterion_fn own) {
  return mr_stop_on_ncp(s) ? mr_gs_criterion_ncp : own;
}

/* per contact: Coulomb cone, Signorini, and stick (c_T = 0 unless λ is on the cone's boundary);
 * the direction of friction is not checked: RaiSim does not enforce maximum dissipation */
static double raisim_contact(double mu, const double *l, const double *c) {
  double proj[3];
  mr_cone_project(mu, l, proj);
  double ep = sqrt((l[0] - proj[0]) * (l[0] - proj[0]) + (l[1] - proj[1]) * (l[1] - proj[1]) +
                   (l[2] - proj[2]) * (l[2] - proj[2]));
  double ed = fmax(-c[2], 0.0);
  double slack = fmax(mu * l[2] - mr_norm2d(l[0], l[1]), 0.0);
  double ec = fmax(fabs(l[2] * c[2]), slack * mr_norm2d(c[0], c[1]));
  return fmax(ep, fmax(ed, ec));
}

double mr_gs_criterion_raisim(const mr_contact_problem *p, const double *lambda, const double *c) {
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i)
    e = fmax(e, mr_problem_box(p, i)         ? box_residual(p, i, lambda, c)
                : mr_problem_bilateral(p, i) ? bilateral_residual(c + 3 * i)
                                             : raisim_contact(p->mu[i], lambda + 3 * i, c + 3 * i));
  return e;
}

/* true when every entry is finite */
static int all_finite(const double *x, int n) {
  for (int k = 0; k < n; ++k)
    if (!isfinite(x[k])) return 0;
  return 1;
}

mr_status mr_gs_run(const mr_contact_problem *p, const mr_solver_settings *s,
                    struct mr_arena_s *work, mr_gs_sweep_fn sweep, void *ctx,
                    mr_gs_criterion_fn criterion, double *lambda, double *c, mr_solver_stats *stats,
                    mr_error *err) {
  return mr_gs_run_with(p, s, work, sweep, ctx, criterion, 0, lambda, c, stats, err);
}

mr_status mr_gs_run_with(const mr_contact_problem *p, const mr_solver_settings *s,
                         struct mr_arena_s *work, mr_gs_sweep_fn sweep, void *ctx,
                         mr_gs_criterion_fn criterion, int options, double *lambda, double *c,
                         mr_solver_stats *stats, mr_error *err) {
  mr_status st = mr_gs_check(p, s, err);
  if (st) return st;
  int n = 3 * p->nc;
  size_t mark = mr_arena_mark(work);
  double *prev = mr_arena_doubles(work, (size_t)n > 0 ? (size_t)n : 1);
  double *best = mr_arena_doubles(work, (size_t)n > 0 ? (size_t)n : 1);
  if (!prev || !best)
    return mr_error_set(err, MR_ERR_NOMEM, "contact solver: work arena too small");
  if (!(options & MR_GS_C_GIVEN)) mr_gs_start(p, s, lambda, c);
  mr_gs_criterion_fn own = criterion;
  criterion = mr_stop_criterion(s, own);
  /* sweep until the criterion, a stall, the iteration limit or the deadline, keeping the
   * sweeps' iterate of smallest criterion: the starting point is not a candidate (a cold start's
   * λ = 0 can score better on the absolute criterion than any sweep of a stiff problem, and
   * returning it would let bodies fall through each other) */
  double e = criterion(p, lambda, c), e_best = INFINITY;
  int k = 0, best_at = -1; /* the sweep the best iterate came from */
  while (e > s->eps_abs && k < s->max_iter) {
    if (k % LATE_EVERY == LATE_EVERY - 1 && mr_solver_late(s)) break;
    mr_copy(prev, lambda, n);
    sweep(p, s, ctx, lambda, c);
    ++k;
    if (k % RESYNC_EVERY == 0) mr_problem_velocity(p, lambda, c);
    e = criterion(p, lambda, c);
    /* the best iterate is copied only when a sweep leaves it (prev holds it then): none while
     * the criterion decreases */
    if (e < e_best)
      e_best = e, best_at = k;
    else if (best_at == k - 1)
      mr_copy(best, prev, n);
    if (!(e == e) || mr_gs_stalled(lambda, prev, n, s->eps_rel)) break;
  }
  /* unconverged: the best iterate (its criterion on the drifting c, re-evaluated below) */
  if (e > s->eps_abs && best_at >= 1 && best_at != k && e_best < e) mr_copy(lambda, best, n);
  /* the exact velocity at the returned λ, unless the caller evaluates it */
  if (!((options & MR_GS_C_LAZY) && e <= s->eps_abs)) {
    mr_problem_velocity(p, lambda, c);
    e = criterion(p, lambda, c);
  }
  mr_arena_reset(work, mark);
  stats->iterations = k;
  stats->eps_model = criterion == own ? e : own(p, lambda, c);
  stats->converged = e <= s->eps_abs;
  if (!all_finite(lambda, n) || !all_finite(c, n))
    return mr_error_set(err, MR_ERR_NUMERIC, "contact solver: non-finite force after %d sweeps", k);
  return MR_OK;
}
