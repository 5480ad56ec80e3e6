/* ADMM contact solvers: ccp-admm and ncp-admm ("Contact Models in Robotics", §III-B Alg. 3 and
 * the implementation details of §III-E), and the ADMM kernel of admm.h.
 *
 * ccp-admm solves the dual CCP (eq. 20) with compliance:  min_{λ ∈ K_μ} ½ λᵀ(G + R)λ + gᵀλ.
 * Its KKT conditions are K_μ ∋ λ ⟂ c = (G + R)λ + g ∈ K_μ*: the CCP, whose sliding solutions have
 * c_N = μ‖c_T‖ > 0 (contact at a distance).
 * ncp-admm runs the same iteration with the linear term g + Γ(c), Γ(c) = (0, 0, μ‖c_T‖)
 * recomputed from the current iterate every iteration; a fixed point satisfies
 * K_μ ∋ λ ⟂ c + Γ(c) ∈ K_μ*, the NCP (de Saxcé). No convergence guarantee for ncp-admm.
 *
 * Implementation: one Cholesky factor of G + R + ρI per value of ρ; over-relaxation ω (eq. 25);
 * the spectral ρ update of §III-E: when the primal residual dominates the dual one by more than
 * rho_ratio, ρ ← ρ·κ^rho_power, and ρ ← ρ/κ^rho_power conversely, with κ = λ_max/λ_min of G + R
 * estimated by power iteration (on A, then on λ_max I − A started in the range of A, so that a
 * singular G gives its smallest nonzero eigenvalue: a departure from the paper), cached in the
 * solver state. Bilateral constraints (mr_contact_problem.kind) project by the identity (their
 * set is R³) and get no de Saxcé term; box constraints (joint friction) project on their box
 * {0} x {0} x [−μ, μ] and get none either (the box QP is convex: ccp-admm's convergence holds).
 * Residuals are compared relative to the magnitudes of their terms (as OSQP does), so the rule
 * is independent of force and velocity units. Warm start: λ, the dual y (= −c at convergence),
 * ρ and the eigenvalue estimates. Stops on the model's criterion (CCP criteria without Γ for
 * ccp-admm, NCP criteria with Γ for ncp-admm; the NCP ones for both under
 * settings.criterion = MR_CRITERION_NCP) ≤ eps_abs, or on stall (z and y both move less
 * than eps_rel relative), or at max_iter. Safeguards (not in the paper): the iterate of smallest
 * criterion is kept and returned when unconverged; a runaway iterate (non-finite or ADMM_BLOWUP
 * times too large, seen when ρ falls to ~1e-7 on a singular G whose g leaves its range) restarts
 * from the best iterate with a floor on ρ above the value that ran away. Failure modes: infeasible
 * problems (e.g. g_N < 0 on a zero row of G) never meet the criterion and return at max_iter with
 * finite values. */
#include <float.h>
#include <math.h>

#include "contact/admm.h"
#include "contact/solvers.h"
#include "contact/sparse_chol.h"
#include "core/linalg.h"

/* condition numbers are floored at this ratio: a singular G (hyperstatic contacts) gives
 * κ = 1e8, a factor 1e8^0.05 ≈ 2.5 per update */
#define ADMM_KAPPA_MAX 1e8
/* the update factor is at least this, so that a well-conditioned G still adapts a poor ρ */
#define ADMM_FACTOR_MIN 1.5
/* relative residuals are floored here (round-off) before their ratio is taken */
#define ADMM_RES_FLOOR 1e-15
/* ρ stays within [1e-12, 1e6] · λ_max */
#define ADMM_RHO_MIN_REL 1e-12
#define ADMM_RHO_MAX_REL 1e6
/* an iterate this many times larger than the best one and the problem's force scale diverged */
#define ADMM_BLOWUP 1e6
/* restarts after a runaway, each with the floor of ρ raised to this times the runaway ρ */
#define ADMM_RESTARTS 8
#define ADMM_RESTART_RHO 10.0

static size_t align32(size_t b) {
  return (b + 31) & ~(size_t)31;
}

size_t admm_ws_bytes(int n) {
  size_t v = align32(((size_t)n + 1) * sizeof(double));
  return align32(((size_t)n * (size_t)n + 1) * sizeof(double)) + 7 * v + 32;
}

int admm_ws_alloc(admm_ws *w, int n, int dense, mr_arena *a) {
  double **vec[] = {&w->x, &w->z, &w->y, &w->zold, &w->yold, &w->w, &w->Az};
  w->n = n;
  w->L = dense ? mr_arena_doubles(a, (size_t)n * (size_t)n + 1) : NULL;
  if (dense && !w->L) return -1;
  for (size_t i = 0; i < sizeof vec / sizeof vec[0]; ++i)
    if (!(*vec[i] = mr_arena_doubles(a, (size_t)n + 1))) return -1;
  w->rho = 0.0;
  w->eig_max = w->eig_min = 0.0;
  w->factorizations = 0;
  w->rp = w->rd = INFINITY;
  w->diverged = 0;
  w->rho_min = 0.0;
  w->charge = 0;
  w->work = 0.0;
  return 0;
}

void admm_matvec(const admm_qp *q, const double *x, double *y) {
  if (q->G)
    mr_matvec(y, q->G, x, q->n, q->n);
  else if (q->matvec)
    q->matvec(q->mctx, x, y);
  else
    mr_problem_G_mul(q->blocks, x, y);
  if (q->d)
    for (int i = 0; i < q->n; ++i)
      y[i] += q->d[i] * x[i];
}

/* deterministic start vector of the power iterations, normalised */
static void power_start(double *v, int n) {
  for (int i = 0; i < n; ++i)
    v[i] = 1.0 + 0.1 * (double)(i % 7) - 0.03 * (double)(i % 3);
  mr_scale(v, 1.0 / mr_norm(v, n), n);
}

/* Rayleigh quotient iterations of v ← B v / ‖B v‖ with B = A (shift 0) or shift·I − A; the
 * shifted iteration starts from A v₀, in the range of A, which shift·I − A leaves invariant, so
 * that it estimates the smallest eigenvalue of A on its range (the nonzero spectrum) */
static double power_iterate(const admm_qp *q, double shift, int iters, double *v, double *t) {
  double est = 0.0;
  int n = q->n;
  power_start(v, n);
  if (shift != 0.0) {
    admm_matvec(q, v, t);
    double nt = mr_norm(t, n);
    if (nt > 0.0 && isfinite(nt))
      for (int i = 0; i < n; ++i)
        v[i] = t[i] / nt;
  }
  for (int k = 0; k < iters; ++k) {
    admm_matvec(q, v, t);
    if (shift != 0.0)
      for (int i = 0; i < n; ++i)
        t[i] = shift * v[i] - t[i];
    est = mr_dot(v, t, n);
    double nt = mr_norm(t, n);
    if (!(nt > 0.0) || !isfinite(nt)) break;
    for (int i = 0; i < n; ++i)
      v[i] = t[i] / nt;
  }
  return est;
}

void admm_eigs(const admm_qp *q, admm_ws *w, int iters) {
  if (iters < 1) iters = 1;
  if (w->charge) w->work += 2.0 * iters; /* a product of A a sweep */
  /* x and w are scratch here: x is recomputed by the next step */
  double emax = power_iterate(q, 0.0, iters, w->x, w->w);
  double emin = emax - power_iterate(q, emax, iters, w->x, w->w);
  w->eig_max = emax > 0.0 ? emax : 1.0; /* A = 0: any scale will do */
  w->eig_min = fmax(emin, w->eig_max / ADMM_KAPPA_MAX);
}

double admm_rho_factor(const admm_ws *w, double power) {
  double kappa = fmin(w->eig_max / w->eig_min, ADMM_KAPPA_MAX);
  return fmax(pow(kappa, power), ADMM_FACTOR_MIN);
}

double admm_rho_default(const admm_ws *w) {
  return sqrt(w->eig_max * w->eig_min);
}

double admm_factor_sweeps(const admm_qp *q) {
  return mr_chol_factor_sweeps(q->chol, q->blocks->Gb_row[q->blocks->nc]);
}

double admm_iteration_sweeps(const admm_qp *q) {
  return 1.0 + mr_chol_solve_sweeps(q->chol, q->blocks->Gb_row[q->blocks->nc]);
}

int admm_factor(const admm_qp *q, admm_ws *w) {
  int n = q->n;
  if (q->chol) {
    w->factorizations++;
    if (w->charge) w->work += admm_factor_sweeps(q);
    return mr_chol_factor(q->chol, w->rho);
  }
  mr_copy(w->L, q->G, n * n);
  for (int i = 0; i < n; ++i)
    w->L[i * n + i] += w->rho + (q->d ? q->d[i] : 0.0);
  w->factorizations++;
  return mr_cholesky(w->L, n) == 0 ? 0 : -1;
}

/* ‖a − b‖∞ */
static double dist_inf(const double *a, const double *b, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i)
    m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

void admm_step(const admm_qp *q, admm_ws *w, double omega) {
  int n = q->n;
  double rho = w->rho;
  mr_copy(w->zold, w->z, n);
  mr_copy(w->yold, w->y, n);
  /* x = (A + ρI)⁻¹ (ρ z − y − b) */
  for (int i = 0; i < n; ++i)
    w->x[i] = rho * w->z[i] - w->y[i] - q->b[i];
  if (q->chol)
    mr_chol_solve(q->chol, w->x);
  else
    mr_cholesky_solve(w->L, n, w->x);
  /* over-relaxed x̂ in w, then z = Π_C(x̂ + y/ρ) and y += ρ (x̂ − z) */
  for (int i = 0; i < n; ++i)
    w->w[i] = omega * w->x[i] + (1.0 - omega) * w->zold[i];
  for (int i = 0; i < n; ++i)
    w->z[i] = w->w[i] + w->y[i] / rho;
  q->project(q->ctx, w->z, w->z);
  for (int i = 0; i < n; ++i)
    w->y[i] += rho * (w->w[i] - w->z[i]);
  /* residuals: primal x − z, dual ρ (z − z_old) (= A x + b + y when ω = 1) */
  w->rp = dist_inf(w->x, w->z, n);
  w->rd = rho * dist_inf(w->z, w->zold, n);
  admm_matvec(q, w->z, w->Az);
}

int admm_adapt(const admm_qp *q, admm_ws *w, const mr_solver_settings *s, int iters_eig) {
  int n = q->n;
  if (!(w->eig_max > 0.0)) admm_eigs(q, w, iters_eig);
  /* residuals relative to the size of their terms */
  double sp = fmax(mr_norm_inf(w->z, n), mr_norm_inf(w->x, n));
  double sd = fmax(mr_norm_inf(w->Az, n), fmax(mr_norm_inf(q->b, n), mr_norm_inf(w->y, n)));
  double rp = fmax(w->rp / fmax(sp, DBL_MIN), ADMM_RES_FLOOR);
  double rd = fmax(w->rd / fmax(sd, DBL_MIN), ADMM_RES_FLOOR);
  double f = admm_rho_factor(w, s->rho_power), rho = w->rho;
  if (rp > s->rho_ratio * rd)
    rho *= f;
  else if (rd > s->rho_ratio * rp)
    rho /= f;
  rho = fmax(rho, w->rho_min);
  rho = fmin(fmax(rho, ADMM_RHO_MIN_REL * w->eig_max), ADMM_RHO_MAX_REL * w->eig_max);
  if (rho == w->rho) return 0;
  w->rho = rho;
  return admm_factor(q, w) == 0 ? 1 : -1;
}

/* ---- the contact solvers ---- */

/* Π_K on every contact (the identity on a bilateral constraint); ctx is the problem */
static void project_cones(const void *ctx, const double *x, double *out) {
  const mr_contact_problem *p = ctx;
  for (int i = 0; i < p->nc; ++i)
    mr_constraint_project(p, i, x + 3 * i, out + 3 * i);
}

/* b = g + Γ(c) per contact (de Saxcé), or b = g */
static void linear_term(const mr_contact_problem *p, const double *c, int desaxce, double *b) {
  mr_copy(b, p->g, 3 * p->nc);
  if (!desaxce) return;
  for (int i = 0; i < p->nc; ++i)
    if (!mr_problem_bilateral(p, i) && !mr_problem_box(p, i))
      b[3 * i + 2] += p->mu[i] * mr_norm2d(c[3 * i], c[3 * i + 1]);
}

static int all_finite(const double *x, int n) {
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i])) return 0;
  return 1;
}

/* check the problem's arrays */
static mr_status check_problem(const mr_contact_problem *p, const char *name, mr_error *err) {
  if (!p || p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "%s: no problem", name);
  if (p->nc > 0 && (!mr_problem_has_G(p) || !p->g || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "%s: problem with nc = %d lacks G, g or mu", name,
                        p->nc);
  for (int i = 0; i < p->nc; ++i)
    if (!(p->mu[i] >= 0.0))
      return mr_error_set(err, MR_ERR_INVALID, "%s: contact %d has friction mu = %g", name, i,
                          p->mu[i]);
  return MR_OK;
}

/* initial y, ρ and eigenvalue estimates (z is set) from the state or the settings */
static int admm_start(const mr_solver_settings *s, const mr_solver_state *st, const admm_qp *q,
                      admm_ws *w) {
  int n = q->n;
  int use_state = st && st->valid && st->y && st->cap >= n && st->rho > 0.0;
  if (st && st->eig_max > 0.0 && st->eig_min > 0.0) {
    w->eig_max = st->eig_max;
    w->eig_min = st->eig_min;
  }
  if (use_state && all_finite(st->y, n)) {
    mr_copy(w->y, st->y, n);
    w->rho = st->rho;
  } else {
    /* y = −(A z + b): the velocity consistent with z */
    admm_matvec(q, w->z, w->y);
    for (int i = 0; i < n; ++i)
      w->y[i] = -(w->y[i] + q->b[i]);
    if (s->rho > 0.0) {
      w->rho = s->rho;
    } else {
      if (!(w->eig_max > 0.0)) admm_eigs(q, w, s->power_iter);
      w->rho = admm_rho_default(w);
    }
  }
  return admm_factor(q, w);
}

/* what admm_start and a first iteration cost on a sparse factor, in sweeps: the factorisation,
 * and the power iterations when neither the state nor the settings give ρ or the spectrum */
static double start_sweeps(const mr_solver_settings *s, const mr_solver_state *st,
                           const admm_qp *q) {
  int spectrum = s->rho > 0.0 || (st && st->eig_max > 0.0 && st->eig_min > 0.0) ||
                 (st && st->valid && st->rho > 0.0);
  return admm_factor_sweeps(q) + admm_iteration_sweeps(q) +
         (spectrum ? 0.0 : 2.0 * fmax(s->power_iter, 1));
}

/* the model's criterion at z with c = A z + g */
static double model_criterion(const mr_contact_problem *p, const double *z, const double *c,
                              int desaxce) {
  return mr_problem_criteria(p, z, c, desaxce, NULL, NULL, NULL);
}

/* the model's criterion at z, c ← A z + g; when it passes eps, c is evaluated again by
 * compensated dot products (criteria.c) and the criterion on that c decides, so that a converged
 * solve also passes on the exact c that mr_solve reports (on a Delassus matrix of condition 1e6
 * the plain product's error moves the criterion by several per cent of 1e-4 N) */
static double checked_criterion(const mr_contact_problem *p, const double *z, const double *Az,
                                double *c, int desaxce, double eps) {
  for (int i = 0; i < 3 * p->nc; ++i)
    c[i] = Az[i] + p->g[i];
  double e = model_criterion(p, z, c, desaxce);
  if (e > eps) return e;
  mr_problem_velocity_dot2(p, z, c);
  return model_criterion(p, z, c, desaxce);
}

/* has the iteration stopped moving? */
static int stalled(const admm_ws *w, double eps_rel) {
  int n = w->n;
  double dz = dist_inf(w->z, w->zold, n), dy = dist_inf(w->y, w->yold, n);
  return dz <= eps_rel * mr_norm_inf(w->z, n) && dy <= eps_rel * mr_norm_inf(w->y, n);
}

/* write λ, c, the stats and the state */
static void admm_finish(const mr_contact_problem *p, const admm_ws *w, mr_solver_state *st,
                        double *lambda, double *c, mr_solver_stats *stats) {
  int n = w->n;
  mr_copy(lambda, w->z, n);
  mr_problem_velocity(p, lambda, c);
  stats->eps_abs =
      mr_problem_criteria(p, lambda, c, 1, &stats->eps_p, &stats->eps_d, &stats->eps_c);
  stats->rho = w->rho;
  stats->factorizations = w->factorizations;
  if (!st) return;
  st->rho = w->rho;
  st->nu = 0;
  st->eig_max = w->eig_max;
  st->eig_min = w->eig_min;
  if (st->y && st->cap >= n && !w->diverged) {
    mr_copy(st->y, w->y, n);
    st->valid = 1;
  } else {
    st->valid = 0;
  }
}

/* zero output for a problem without contacts or a numerical failure */
static void clear_output(int n, double *lambda, double *c, mr_solver_stats *stats) {
  mr_zero(lambda, n);
  mr_zero(c, n);
  stats->eps_abs = stats->eps_p = stats->eps_d = stats->eps_c = stats->eps_model = 0.0;
}

/* z = best, y = −(A z + b), ρ and its floor rho_min raised to floor; refactor */
static int admm_restart(const admm_qp *q, admm_ws *w, const double *best, double floor) {
  int n = q->n;
  mr_copy(w->z, best, n);
  admm_matvec(q, w->z, w->Az);
  for (int i = 0; i < n; ++i)
    w->y[i] = -(w->Az[i] + q->b[i]);
  w->rho_min = fmax(w->rho_min, floor);
  w->rho = fmax(w->rho, w->rho_min);
  return admm_factor(q, w);
}

/* has the iterate run away: non-finite, or ADMM_BLOWUP times larger than both the best iterate
 * and the force scale ‖g‖∞/λ_max of the problem? */
static int diverged(const mr_contact_problem *p, const admm_ws *w, const double *best) {
  int n = w->n;
  double zn = mr_norm_inf(w->z, n);
  if (!isfinite(zn) || !all_finite(w->y, n)) return 1;
  double scale = fmax(mr_norm_inf(best, n), mr_norm_inf(p->g, n) / w->eig_max);
  return zn > ADMM_BLOWUP * scale;
}

/* the iteration loop, keeping the iterate of smallest criterion in best (the result when the
 * loop stops unconverged); returns MR_OK, or MR_ERR_NUMERIC on a failed factorisation */
static mr_status admm_loop(const mr_contact_problem *p, const mr_solver_settings *s, admm_qp *q,
                           admm_ws *w, double *b, double *cz, double *best, int desaxce,
                           mr_solver_stats *stats) {
  int n = q->n;
  /* the criterion in use: the model's (Γ for ncp-admm only), or the NCP one for both */
  int crit = mr_stop_on_ncp(s) ? 1 : desaxce;
  stats->eps_model = checked_criterion(p, w->z, w->Az, cz, crit, s->eps_abs);
  stats->converged = stats->eps_model <= s->eps_abs;
  double best_eps = stats->eps_model;
  mr_copy(best, w->z, n);
  int restarts = 0;
  int every = s->rho_update_every > 0 ? s->rho_update_every : 1;
  /* under a work budget: what an iteration and a refactorisation cost in sweeps */
  double it_cost = w->charge ? admm_iteration_sweeps(q) : 0.0;
  double f_cost = w->charge ? admm_factor_sweeps(q) : 0.0;
  for (int k = 1; k <= s->max_iter && !stats->converged && w->work + it_cost <= s->max_iter; ++k) {
    /* de Saxcé shift from the current iterate */
    if (desaxce) linear_term(p, cz, 1, b);
    admm_step(q, w, s->omega);
    w->work += it_cost;
    stats->iterations = w->charge ? (int)ceil(w->work) : k;
    if (diverged(p, w, best)) {
      if (++restarts > ADMM_RESTARTS) break;
      /* restart from the best iterate with ρ floored above the value that ran away */
      if (admm_restart(q, w, best, ADMM_RESTART_RHO * w->rho) != 0) return MR_ERR_NUMERIC;
    }
    stats->eps_model = checked_criterion(p, w->z, w->Az, cz, crit, s->eps_abs);
    stats->converged = stats->eps_model <= s->eps_abs;
    if (stats->eps_model < best_eps) {
      best_eps = stats->eps_model;
      mr_copy(best, w->z, n);
    }
    if (stats->converged || stalled(w, s->eps_rel) || mr_solver_late(s)) break;
    /* ρ adapted while the budget still affords the refactorisation and an iteration after it */
    if (k % every == 0 && w->work + f_cost + it_cost <= s->max_iter &&
        admm_adapt(q, w, s, s->power_iter) < 0)
      return MR_ERR_NUMERIC;
    if (w->charge) stats->iterations = (int)ceil(w->work);
  }
  /* charged: stopped where the next iteration would pass the budget */
  stats->budget = w->charge && !stats->converged && w->work + it_cost > s->max_iter;
  /* unconverged: the best iterate */
  if (!stats->converged) {
    w->diverged = diverged(p, w, best);
    mr_copy(w->z, best, n);
    stats->eps_model = best_eps;
  }
  return MR_OK;
}

static mr_status admm_solve(const mr_contact_problem *p, const mr_solver_settings *s,
                            mr_solver_state *st, mr_arena *work, double *lambda, double *c,
                            mr_solver_stats *stats, mr_error *err, int desaxce) {
  const char *name = desaxce ? "ncp-admm" : "ccp-admm";
  mr_status status = check_problem(p, name, err);
  if (status != MR_OK) return status;
  int n = 3 * p->nc;
  stats->iterations = 0;
  stats->factorizations = 0;
  stats->converged = 0;
  stats->budget = 0;
  if (n == 0) {
    stats->converged = 1;
    clear_output(0, lambda, c, stats);
    return MR_OK;
  }
  size_t mark = mr_arena_mark(work);
  admm_ws w;
  double *b = mr_arena_doubles(work, (size_t)n), *cz = mr_arena_doubles(work, (size_t)n);
  double *best = mr_arena_doubles(work, (size_t)n);
  /* a block-sparse G: factored sparse when that pays, else densified */
  int sparse = !p->G && mr_sparse_chol_pays(p->nc, p->Gb_row[p->nc]);
  double *G = p->G || sparse ? NULL : mr_arena_doubles(work, (size_t)n * (size_t)n);
  if (!b || !cz || !best || (!p->G && !sparse && !G) || admm_ws_alloc(&w, n, !sparse, work) != 0) {
    mr_arena_reset(work, mark);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: scratch arena too small for nc = %d", name, p->nc);
  }
  if (G) mr_problem_G_dense(p, G);
  admm_qp q = {n, p->G ? p->G : G, p->R, b, project_cones, p, p, NULL, NULL, NULL};
  mr_sparse_chol *own = NULL;
  if (sparse) {
    /* the state's factor, analysed again only for a new pattern; a private one without state */
    mr_sparse_chol **slot = st ? &st->chol : &own;
    if (!*slot) *slot = mr_chol_create();
    if (!*slot || mr_chol_analyze(*slot, p) < 0) {
      mr_chol_free(own);
      mr_arena_reset(work, mark);
      return mr_error_set(err, MR_ERR_NOMEM,
                          "%s: out of memory analysing the sparse Cholesky of %d contacts", name,
                          p->nc);
    }
    q.chol = *slot;
    mr_chol_values(q.chol, p, p->R);
  }
  /* initial linear term from the warm start's velocity */
  int warm = s->warm_start && all_finite(lambda, n);
  for (int i = 0; i < n; ++i)
    w.z[i] = warm ? lambda[i] : 0.0;
  project_cones(p, w.z, w.z);
  mr_problem_velocity(p, w.z, cz);
  linear_term(p, cz, desaxce, b);
  w.charge = sparse && s->work_iter > 0;
  if (w.charge && start_sweeps(s, st, &q) > s->max_iter) {
    /* the budget does not afford the factorisation: the start returned as it is */
    mr_chol_free(own);
    mr_copy(lambda, w.z, n), mr_copy(c, cz, n);
    stats->eps_abs =
        mr_problem_criteria(p, lambda, c, 1, &stats->eps_p, &stats->eps_d, &stats->eps_c);
    stats->eps_model = model_criterion(p, lambda, c, mr_stop_on_ncp(s) ? 1 : desaxce);
    stats->converged = stats->eps_model <= s->eps_abs;
    stats->budget = !stats->converged;
    stats->iterations = 1; /* the product */
    if (st) st->valid = 0;
    mr_arena_reset(work, mark);
    return MR_OK;
  }
  if (admm_start(s, st, &q, &w) == 0) {
    admm_matvec(&q, w.z, w.Az);
    status = admm_loop(p, s, &q, &w, b, cz, best, desaxce, stats);
  } else {
    status = MR_ERR_NUMERIC;
  }
  if (status == MR_OK && !all_finite(w.z, n)) status = MR_ERR_NUMERIC;
  mr_chol_free(own);
  if (status != MR_OK) {
    clear_output(n, lambda, c, stats);
    mr_arena_reset(work, mark);
    return mr_error_set(err, status,
                        "%s: G + R + rho I not positive definite or a non-finite iterate "
                        "(rho = %g)",
                        name, w.rho);
  }
  admm_finish(p, &w, st, lambda, c, stats);
  /* stopped on the NCP criterion: eps_model is still the model's own */
  if (mr_stop_on_ncp(s) && !desaxce) stats->eps_model = model_criterion(p, lambda, c, desaxce);
  mr_arena_reset(work, mark);
  return MR_OK;
}

mr_status mr_solver_ccp_admm(const mr_contact_problem *p, const mr_solver_settings *s,
                             mr_solver_state *state, mr_arena *work, double *lambda, double *c,
                             mr_solver_stats *stats, mr_error *err) {
  return admm_solve(p, s, state, work, lambda, c, stats, err, 0);
}

mr_status mr_solver_ncp_admm(const mr_contact_problem *p, const mr_solver_settings *s,
                             mr_solver_state *state, mr_arena *work, double *lambda, double *c,
                             mr_solver_stats *stats, mr_error *err) {
  return admm_solve(p, s, state, work, lambda, c, stats, err, 1);
}

size_t mr_admm_work_size(int nc) {
  size_t n = 3 * (size_t)(nc > 0 ? nc : 0);
  return admm_ws_bytes((int)n) + 3 * align32(n * sizeof(double)) + 64;
}
