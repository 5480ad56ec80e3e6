/* ncp-stagproj: staggered projections for the NCP ("Contact Models in Robotics", §III-D, Alg. 7;
 * Kaufman et al. 2008).
 *
 * With the components split into normal (N, nc of them) and tangential (T, 2nc), and A = G + R,
 * each outer iteration solves two convex QPs, each with the other block fixed:
 *   λ_N ← argmin_{λ_N ≥ 0}            ½ λ_Nᵀ A_NN λ_N + (g_N + A_NT λ_T)ᵀ λ_N   (Signorini)
 *   λ_T ← argmin_{‖λ_T⁽ⁱ⁾‖ ≤ μᵢ λ_N⁽ⁱ⁾} ½ λ_Tᵀ A_TT λ_T + (g_T + A_TN λ_N)ᵀ λ_T   (maximum
 * dissipation) A fixed point satisfies λ_N ⟂ c_N ≥ 0 and λ_T maximally dissipative on the disc of
 * radius μ λ_N, which is the NCP K_μ ∋ λ ⟂ c + Γ(c) ∈ K_μ*. Each QP is solved by the ADMM kernel of
 * admm.h (Cholesky of A_NN + ρI, A_TT + ρI, factored once per ρ value; ρ from the power-iteration
 * spectrum and adapted by the spectral rule), at most inner_iter iterations, warm started from the
 * previous outer iteration's primal and dual variables; an inner solve stops when both its
 * residuals are below eps_abs/10. The outer loop stops on the NCP criterion ≤ eps_abs (its own
 * model's: settings.criterion changes nothing here), on stall (λ moves less than eps_rel
 * relative), or at max_iter outer iterations.
 * Bilateral constraints (mr_contact_problem.kind) have their normal and tangential rows unbounded
 * in both subproblems (the projections are the identity on them).
 * A block-sparse G (mr_contact_problem.Gb) is read as it is, with no dense copy of G: the linear
 * terms come from block products, and the subproblem matrices are either filled densely from
 * the stored blocks (below the sparse factor's crossover, mr_sparse_chol_pays) or left in the
 * blocks, A_NN + ρI and A_TT + ρI factored by the sparse LDLᵀ of sparse_chol.h (the normal and
 * tangential parts of G, each pattern analysed once and kept in the state's factor, refactored
 * numerically per ρ) and the products A x taken block by block: memory O(nc + nnzb).
 * Failure modes: no convergence guarantee (a fixed-point iteration); each outer iteration costs
 * up to 2·inner_iter inner iterations, so it is the most expensive NCP solver per iteration. */
#include <math.h>

#include "contact/admm.h"
#include "contact/solvers.h"
#include "contact/sparse_chol.h"
#include "contact/stagproj.h"
#include "core/linalg.h"

/* inner residual target relative to eps_abs */
#define STAGPROJ_INNER_TOL 0.1

/* one subproblem (stagproj.h) */
typedef mr_stagproj_sub subproblem;

/* the disc constraint's data: the problem (μ, kinds) and the current λ_N */
typedef struct {
  const mr_contact_problem *p;
  double *lambda_n;
  int nc;
} disc_ctx;

/* Π on λ_N ≥ 0 (λ_N free on a bilateral constraint) */
static void project_nonneg(const void *ctx, const double *x, double *out) {
  const disc_ctx *dc = ctx;
  for (int i = 0; i < dc->nc; ++i)
    out[i] = mr_problem_bilateral(dc->p, i) ? x[i] : fmax(x[i], 0.0);
}

/* Π on the discs ‖λ_T⁽ⁱ⁾‖ ≤ μᵢ λ_N⁽ⁱ⁾ (no bound on a bilateral constraint) */
static void project_discs(const void *ctx, const double *x, double *out) {
  const disc_ctx *dc = ctx;
  for (int i = 0; i < dc->nc; ++i) {
    double r =
        mr_problem_bilateral(dc->p, i) ? INFINITY : fmax(dc->p->mu[i] * dc->lambda_n[i], 0.0);
    double t = mr_norm2d(x[2 * i], x[2 * i + 1]);
    double s = t > r ? r / t : 1.0;
    out[2 * i] = s * x[2 * i], out[2 * i + 1] = s * x[2 * i + 1];
  }
}

/* the index in 0..3nc of entry k of a block: normal k → 3k+2, tangential k → 3(k/2) + k%2 */
static int full_index(int normal, int k) {
  return normal ? 3 * k + 2 : 3 * (k / 2) + k % 2;
}

/* y = A_BB x from the stored blocks (the sparse path's products) */
static void sub_matvec(const void *ctx, const double *x, double *y) {
  const subproblem *sp = ctx;
  const mr_contact_problem *p = sp->p;
  int w = sp->part == MR_CHOL_NORMAL ? 1 : 2, c0 = w == 1 ? 2 : 0;
  for (int i = 0; i < p->nc; ++i)
    for (int r = 0; r < w; ++r) {
      double acc = 0.0;
      for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
        const double *B = p->Gb + 9 * (size_t)k + 3 * (c0 + r) + c0;
        const double *xj = x + w * p->Gb_col[k];
        acc += w == 1 ? B[0] * xj[0] : B[0] * xj[0] + B[1] * xj[1];
      }
      y[w * i + r] = acc;
    }
}

/* extract the block of G (and R) and carve its workspace; from a block-sparse G, its stored
 * blocks' normal (or tangential) entries, the others zero as in the dense G, or (sparse) no
 * matrix: sub_matvec and the sparse factor read the blocks */
static int sub_alloc(subproblem *sp, const mr_contact_problem *p, int normal, int sparse,
                     mr_arena *a) {
  int n = 3 * p->nc, m = normal ? p->nc : 2 * p->nc;
  sp->m = m, sp->p = p, sp->part = normal ? MR_CHOL_NORMAL : MR_CHOL_TANGENT;
  sp->A = sparse ? NULL : mr_arena_doubles(a, (size_t)m * (size_t)m);
  sp->b = mr_arena_doubles(a, (size_t)m);
  sp->d = p->R ? mr_arena_doubles(a, (size_t)m) : NULL;
  if ((!sparse && !sp->A) || !sp->b || (p->R && !sp->d) ||
      admm_ws_alloc(&sp->ws, m, !sparse, a) != 0)
    return -1;
  if (p->G) {
    for (int r = 0; r < m; ++r)
      for (int s = 0; s < m; ++s)
        sp->A[r * m + s] = p->G[full_index(normal, r) * n + full_index(normal, s)];
  } else if (!sparse) {
    int w = normal ? 1 : 2, c0 = normal ? 2 : 0; /* entries per contact, first component */
    mr_zero(sp->A, m * m);
    for (int i = 0; i < p->nc; ++i)
      for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
        const double *B = p->Gb + 9 * (size_t)k;
        int j = p->Gb_col[k];
        for (int r = 0; r < w; ++r)
          for (int s = 0; s < w; ++s)
            sp->A[(size_t)(w * i + r) * m + w * j + s] = B[3 * (c0 + r) + c0 + s];
      }
  }
  for (int r = 0; sp->d && r < m; ++r)
    sp->d[r] = p->R[full_index(normal, r)];
  admm_qp q = {m, sp->A, sp->d, sp->b, NULL, NULL, NULL, NULL, NULL, NULL};
  if (sparse) q.blocks = p, q.matvec = sub_matvec, q.mctx = sp;
  sp->qp = q;
  return 0;
}

/* the sparse path: both parts analysed (allocating only for a pattern the factor has not kept)
 * and their values loaded; 0, or -1 out of memory */
static int sub_sparse_load(subproblem *sp, mr_sparse_chol *f) {
  if (mr_chol_analyze_part(f, sp->p, sp->part) < 0) return -1;
  mr_chol_values(f, sp->p, sp->d);
  sp->qp.chol = f;
  return 0;
}

/* b = g_B + A_{B,other} λ_other: the rows of (G + R)λ' + g with λ' = λ off the block */
static void sub_linear_term(subproblem *sp, const mr_contact_problem *p, int normal,
                            const double *lambda, double *tmp, double *tmp2) {
  int n = 3 * p->nc;
  mr_copy(tmp, lambda, n);
  for (int k = 0; k < sp->m; ++k)
    tmp[full_index(normal, k)] = 0.0;
  mr_problem_G_mul(p, tmp, tmp2);
  for (int k = 0; k < sp->m; ++k) {
    int q = full_index(normal, k);
    sp->b[k] = p->g[q] + tmp2[q];
  }
}

/* solve the subproblem from λ's block (primal) and the previous dual; write back into λ */
static int sub_solve(subproblem *sp, const mr_contact_problem *p, const mr_solver_settings *s,
                     int normal, int first, double *lambda) {
  admm_ws *w = &sp->ws;
  /* the sparse factor's current part: a lookup of the kept analysis, values and factor */
  if (sp->qp.chol && mr_chol_analyze_part(sp->qp.chol, p, sp->part) < 0) return -1;
  for (int k = 0; k < sp->m; ++k)
    w->z[k] = lambda[full_index(normal, k)];
  sp->qp.project(sp->qp.ctx, w->z, w->z);
  if (first) {
    /* dual from the velocity of the start point; ρ from the spectrum */
    admm_matvec(&sp->qp, w->z, w->y);
    for (int k = 0; k < sp->m; ++k)
      w->y[k] = -(w->y[k] + sp->b[k]);
    admm_eigs(&sp->qp, w, s->power_iter);
    w->rho = s->rho > 0.0 ? s->rho : admm_rho_default(w);
    if (admm_factor(&sp->qp, w) != 0) return -1;
  }
  double tol = STAGPROJ_INNER_TOL * s->eps_abs;
  int every = s->rho_update_every > 0 ? s->rho_update_every : 1;
  /* charged: each iteration, and a refactorisation only where the limit affords it */
  double it_cost = w->charge ? admm_iteration_sweeps(&sp->qp) : 0.0;
  double f_cost = w->charge ? admm_factor_sweeps(&sp->qp) : 0.0;
  for (int k = 1; k <= s->inner_iter && (!w->charge || w->work + it_cost <= sp->limit); ++k) {
    admm_step(&sp->qp, w, s->omega);
    w->work += it_cost;
    if (w->rp <= tol && w->rd <= tol) break;
    if (k % 8 == 0 && mr_solver_late(s)) break;
    if (k % every == 0 && (!w->charge || w->work + f_cost + it_cost <= sp->limit) &&
        admm_adapt(&sp->qp, w, s, s->power_iter) < 0)
      return -1;
  }
  for (int k = 0; k < sp->m; ++k)
    lambda[full_index(normal, k)] = w->z[k];
  return 0;
}

/* the NCP criterion at λ, c = (G + R)λ + g */
static double ncp_criterion(const mr_contact_problem *p, const double *lambda, double *c) {
  mr_problem_velocity(p, lambda, c);
  return mr_problem_criteria(p, lambda, c, 1, NULL, NULL, NULL);
}

static mr_status stagproj_check(const mr_contact_problem *p, mr_error *err) {
  if (!p || p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "ncp-stagproj: no problem");
  if (p->nc > 0 && (!mr_problem_has_G(p) || !p->g || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "ncp-stagproj: problem lacks G, g or mu");
  for (int i = 0; i < p->nc; ++i)
    if (!(p->mu[i] >= 0.0) || !isfinite(p->mu[i]))
      return mr_error_set(err, MR_ERR_INVALID, "ncp-stagproj: contact %d has mu = %g", i, p->mu[i]);
  return MR_OK;
}

/* the NCP criterion as ncp-stagproj's own model (mr_stagproj_model) */
static double ncp_model(const mr_contact_problem *p, const void *ctx, const double *lambda,
                        double *c) {
  (void)ctx;
  return ncp_criterion(p, lambda, c);
}

/* the criterion a solve stops on at λ (c current): the model's own eps_model, or the NCP's under
 * MR_CRITERION_NCP */
static double stop_value(const mr_solver_settings *s, const mr_contact_problem *p,
                         const double *lambda, const double *c, double eps_model) {
  return mr_stop_on_ncp(s) ? mr_gs_criterion_ncp(p, lambda, c) : eps_model;
}

/* what the first outer iteration's start costs on the sparse factors, in sweeps: both
 * factorisations and the power iterations of both spectra, an iteration of each */
static double start_sweeps(mr_stagproj_run *r, const mr_contact_problem *p,
                           const mr_solver_settings *s) {
  double cost = 3.0 + 4.0 * fmax(s->power_iter, 1);
  subproblem *sub[2] = {&r->sn, &r->st};
  for (int k = 0; k < 2; ++k) {
    if (mr_chol_analyze_part(sub[k]->qp.chol, p, sub[k]->part) < 0) return INFINITY;
    cost += admm_factor_sweeps(&sub[k]->qp) + admm_iteration_sweeps(&sub[k]->qp);
  }
  return cost;
}

int mr_stagproj_loop(mr_stagproj_run *r, const mr_contact_problem *p, const mr_solver_settings *s,
                     mr_stagproj_model model, const void *ctx, double *lambda, double *c,
                     mr_solver_stats *stats) {
  int n = 3 * p->nc;
  subproblem *sn = &r->sn, *st = &r->st;
  stats->eps_model = model(p, ctx, lambda, c);
  stats->converged = stop_value(s, p, lambda, c, stats->eps_model) <= s->eps_abs;
  /* under a simulator step's work budget on the sparse factors, max_iter is that work in sweeps
   * (mr_solver_settings.work_iter): the subproblems' factorisations, solves and products, and
   * three products of G an outer iteration (the two linear terms, the criterion), charged at
   * their cost; the first outer iteration runs only when the budget affords both factors */
  int charge = s->work_iter > 0 && sn->qp.chol;
  sn->ws.charge = st->ws.charge = charge;
  stats->budget = 0;
  if (charge && start_sweeps(r, p, s) > s->max_iter) return stats->budget = !stats->converged, 0;
  for (int k = 1; k <= s->max_iter && !stats->converged; ++k) {
    double spent = sn->ws.work + st->ws.work + 3.0 * (k - 1);
    if (charge && spent + 3.0 >= s->max_iter) {
      stats->budget = 1;
      break;
    }
    mr_copy(r->prev, lambda, n);
    /* normal subproblem with λ_T fixed, then the tangential one with λ_N fixed */
    sub_linear_term(sn, p, 1, lambda, r->tmp, c);
    sn->limit = sn->ws.work + (s->max_iter - spent - 3.0);
    if (sub_solve(sn, p, s, 1, k == 1, lambda) != 0) return -1;
    for (int i = 0; i < p->nc; ++i)
      r->lambda_n[i] = lambda[3 * i + 2];
    sub_linear_term(st, p, 0, lambda, r->tmp, c);
    st->limit = st->ws.work + (s->max_iter - (sn->ws.work + st->ws.work + 3.0 * k));
    if (sub_solve(st, p, s, 0, k == 1, lambda) != 0) return -1;
    stats->iterations = charge ? (int)ceil(sn->ws.work + st->ws.work + 3.0 * k) : k;
    stats->eps_model = model(p, ctx, lambda, c);
    stats->converged = stop_value(s, p, lambda, c, stats->eps_model) <= s->eps_abs;
    double moved = 0.0;
    for (int q = 0; q < n; ++q)
      moved = fmax(moved, fabs(lambda[q] - r->prev[q]));
    if (moved <= s->eps_rel * mr_norm_inf(lambda, n) || mr_solver_late(s)) break;
  }
  return 0;
}

mr_status mr_solver_ncp_stagproj(const mr_contact_problem *p, const mr_solver_settings *s,
                                 mr_solver_state *state, mr_arena *work, double *lambda, double *c,
                                 mr_solver_stats *stats, mr_error *err) {
  mr_status status = stagproj_check(p, err);
  if (status != MR_OK) return status;
  int n = 3 * p->nc;
  stats->iterations = stats->factorizations = 0;
  stats->converged = n == 0;
  if (n == 0) return MR_OK;
  mr_stagproj_run r;
  if ((status = mr_stagproj_begin(&r, "ncp-stagproj", p, state, work, err))) return status;
  /* the projections and their data */
  disc_ctx dc = {p, r.lambda_n, p->nc};
  r.sn.qp.project = project_nonneg, r.sn.qp.ctx = &dc;
  r.st.qp.project = project_discs, r.st.qp.ctx = &dc;
  /* start: the warm start projected on K_μ, or zero */
  for (int q = 0; q < n; ++q)
    lambda[q] = s->warm_start && isfinite(lambda[q]) ? lambda[q] : 0.0;
  for (int i = 0; i < p->nc; ++i)
    mr_constraint_project(p, i, lambda + 3 * i, lambda + 3 * i);
  int rc = mr_stagproj_loop(&r, p, s, ncp_model, NULL, lambda, c, stats);
  return mr_stagproj_end(&r, "ncp-stagproj", rc, p, work, lambda, c, stats, err);
}

mr_status mr_stagproj_begin(mr_stagproj_run *r, const char *name, const mr_contact_problem *p,
                            mr_solver_state *state, mr_arena *work, mr_error *err) {
  size_t n = 3 * (size_t)p->nc;
  int sparse = !p->G && mr_sparse_chol_pays(p->nc, p->Gb_row[p->nc]);
  r->mark = mr_arena_mark(work);
  r->own = NULL;
  r->tmp = mr_arena_doubles(work, n), r->prev = mr_arena_doubles(work, n);
  r->lambda_n = mr_arena_doubles(work, (size_t)p->nc);
  if (!r->tmp || !r->prev || !r->lambda_n || sub_alloc(&r->sn, p, 1, sparse, work) != 0 ||
      sub_alloc(&r->st, p, 0, sparse, work) != 0) {
    mr_arena_reset(work, r->mark);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: scratch arena too small for nc = %d", name,
                        p->nc);
  }
  if (!sparse) return MR_OK;
  /* the sparse factors: the state's, kept across solves (a new pattern analysed once), or a
   * private one without a state */
  mr_sparse_chol **slot = state ? &state->chol : &r->own;
  if (!*slot) *slot = mr_chol_create();
  if (*slot && sub_sparse_load(&r->sn, *slot) == 0 && sub_sparse_load(&r->st, *slot) == 0)
    return MR_OK;
  mr_chol_free(r->own);
  mr_arena_reset(work, r->mark);
  return mr_error_set(err, MR_ERR_NOMEM,
                      "%s: out of memory analysing the sparse Cholesky of %d contacts", name,
                      p->nc);
}

mr_status mr_stagproj_end(mr_stagproj_run *r, const char *name, int rc,
                          const mr_contact_problem *p, mr_arena *work, double *lambda, double *c,
                          mr_solver_stats *stats, mr_error *err) {
  stats->factorizations = r->sn.ws.factorizations + r->st.ws.factorizations;
  mr_chol_free(r->own);
  mr_arena_reset(work, r->mark);
  if (rc != 0) {
    mr_zero(lambda, 3 * p->nc);
    mr_problem_velocity(p, lambda, c);
    return mr_error_set(err, MR_ERR_NUMERIC,
                        "%s: a subproblem matrix plus rho I is not positive definite", name);
  }
  stats->eps_abs =
      mr_problem_criteria(p, lambda, c, 1, &stats->eps_p, &stats->eps_d, &stats->eps_c);
  return MR_OK;
}

size_t mr_stagproj_work_size(int nc, int sparse) {
  size_t m = nc > 0 ? (size_t)nc : 0;
  if (sparse) /* no subproblem matrices: the two workspaces' 7 vectors, b, d, 3 n-vectors */
    return (7 * 3 * m + 4 * 3 * m + 11 * m + 64) * sizeof(double) + 32 * 32;
  return 5 * m * m * sizeof(double) + admm_ws_bytes((int)m) + admm_ws_bytes(2 * (int)m) +
         (11 * m + 64) * sizeof(double) + 16 * 32;
}

/* ---- the subproblems, shared with lcp-stagproj (stagproj.h) ---- */

void mr_stagproj_sub_linear_term(mr_stagproj_sub *sp, const mr_contact_problem *p, int normal,
                                 const double *lambda, double *tmp, double *tmp2) {
  sub_linear_term(sp, p, normal, lambda, tmp, tmp2);
}

int mr_stagproj_sub_solve(mr_stagproj_sub *sp, const mr_contact_problem *p,
                          const mr_solver_settings *s, int normal, int first, double *lambda) {
  return sub_solve(sp, p, s, normal, first, lambda);
}
