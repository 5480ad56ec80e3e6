/* lcp-stagproj: staggered projections on the LCP ("Contact Models in Robotics", Table III; the
 * scheme of ncp-stagproj, stagproj.c, with the friction set the pyramid).
 *
 * With A = G + R split into normal and tangential rows, each outer iteration solves
 *   λ_N ← argmin_{λ_N ≥ 0}               ½ λ_Nᵀ A_NN λ_N + (g_N + A_NT λ_T)ᵀ λ_N   (Signorini)
 *   λ_T ← argmin_{λ_T⁽ⁱ⁾ ∈ P_k(μᵢ λ_N⁽ⁱ⁾)} ½ λ_Tᵀ A_TT λ_T + (g_T + A_TN λ_N)ᵀ λ_T   (maximum
 *                                                                       dissipation)
 * P_k the friction pyramid of pyramid.h (k = pyramid_facets; 4: the box |λ_tj| ≤ μ λ_N). A fixed
 * point satisfies λ_N ⟂ c_N ≥ 0 and λ_T maximally dissipative on the pyramid: the LCP of
 * lcp-pgs, whose criterion (eps_model) it stops on. The subproblems are ncp-stagproj's
 * (stagproj.h: ADMM, Cholesky of A_BB + ρI, dense or sparse), with the Euclidean projection on
 * the pyramid (per contact: a clamp of each component on the box, mr_pyramid_project on P_k) in
 * place of the disc's. Bilateral constraints are unbounded in both subproblems.
 * Failure modes: those of ncp-stagproj (no convergence guarantee for the fixed point, the most
 * expensive per iteration) and of the LCP (the pyramid's anisotropy: docs/solvers.md). */
#include <math.h>

#include "contact/pyramid.h"
#include "contact/solvers.h"
#include "contact/stagproj.h"
#include "core/linalg.h"

/* the projections' data: the problem, the current λ_N and the pyramid */
typedef struct {
  const mr_contact_problem *p;
  double *lambda_n;
  mr_pyramid py;
} pyr_ctx;

/* Π on λ_N ≥ 0 (free on a bilateral constraint) */
static void project_normal(const void *ctx, const double *x, double *out) {
  const pyr_ctx *pc = ctx;
  for (int i = 0; i < pc->p->nc; ++i)
    out[i] = mr_problem_bilateral(pc->p, i) ? x[i] : fmax(x[i], 0.0);
}

/* Π of one contact's x on P_k(r): a clamp of each component on the box */
static void project_one(const mr_pyramid *py, double r, const double *x, double *out) {
  if (py->k == 4) {
    out[0] = fmin(fmax(x[0], -r), r), out[1] = fmin(fmax(x[1], -r), r);
    return;
  }
  mr_pyramid_project(py, r, x, out);
}

/* Π on the pyramids λ_T⁽ⁱ⁾ ∈ P_k(μᵢ λ_N⁽ⁱ⁾) (no bound on a bilateral constraint) */
static void project_pyramids(const void *ctx, const double *x, double *out) {
  const pyr_ctx *pc = ctx;
  for (int i = 0; i < pc->p->nc; ++i) {
    if (mr_problem_bilateral(pc->p, i)) {
      out[2 * i] = x[2 * i], out[2 * i + 1] = x[2 * i + 1];
      continue;
    }
    project_one(&pc->py, fmax(pc->p->mu[i] * pc->lambda_n[i], 0.0), x + 2 * i, out + 2 * i);
  }
}

/* the LCP criterion at λ, c = (G + R)λ + g: lcp-pgs's, on the box or on P_k */
static double lcp_criterion(const mr_contact_problem *p, const mr_pyramid *py, const double *lambda,
                            double *c) {
  mr_problem_velocity(p, lambda, c);
  if (py->k == 4) return mr_gs_criterion_lcp(p, lambda, c);
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i)
    e = fmax(e, mr_problem_bilateral(p, i)
                    ? mr_norm_inf(c + 3 * i, 3)
                    : mr_pyramid_contact_criterion(py, p->mu[i], lambda + 3 * i, c + 3 * i));
  return e;
}

static mr_status check(const mr_contact_problem *p, const mr_solver_settings *s, int *k,
                       mr_error *err) {
  if (!p || !s || p->nc < 0) return mr_error_set(err, MR_ERR_INVALID, "lcp-stagproj: no problem");
  if (p->nc > 0 && (!mr_problem_has_G(p) || !p->g || !p->mu))
    return mr_error_set(err, MR_ERR_INVALID, "lcp-stagproj: problem lacks G, g or mu");
  for (int i = 0; i < p->nc; ++i)
    if (!(p->mu[i] >= 0.0) || !isfinite(p->mu[i]))
      return mr_error_set(err, MR_ERR_INVALID, "lcp-stagproj: contact %d has mu = %g", i, p->mu[i]);
  if (mr_problem_has_box(p))
    return mr_error_set(err, MR_ERR_UNSUPPORTED, "lcp-stagproj: box constraints not supported");
  return mr_pyramid_facets(s, "lcp-stagproj", k, err);
}

/* the LCP criterion as lcp-stagproj's own model (mr_stagproj_model; ctx: the pyramid) */
static double lcp_model(const mr_contact_problem *p, const void *ctx, const double *lambda,
                        double *c) {
  const pyr_ctx *pc = ctx;
  return lcp_criterion(p, &pc->py, lambda, c);
}

/* the starting point: the warm start (or zero) with λ_N ≥ 0 and λ_T on its pyramid */
static void start(const mr_contact_problem *p, const mr_solver_settings *s, const mr_pyramid *py,
                  double *lambda) {
  for (int q = 0; q < 3 * p->nc; ++q)
    lambda[q] = s->warm_start && isfinite(lambda[q]) ? lambda[q] : 0.0;
  for (int i = 0; i < p->nc; ++i) {
    if (mr_problem_bilateral(p, i)) continue;
    double *l = lambda + 3 * i;
    l[2] = fmax(l[2], 0.0);
    project_one(py, p->mu[i] * l[2], l, l);
  }
}

mr_status mr_solver_lcp_stagproj(MR_SOLVER_ARGS) {
  int k = 4;
  mr_status status = check(p, s, &k, err);
  if (status != MR_OK) return status;
  int n = 3 * p->nc;
  stats->iterations = stats->factorizations = 0;
  stats->converged = n == 0;
  stats->eps_model = 0.0;
  if (n == 0) return MR_OK;
  mr_stagproj_run r;
  if ((status = mr_stagproj_begin(&r, "lcp-stagproj", p, state, work, err))) return status;
  pyr_ctx pc = {p, r.lambda_n, {0}};
  mr_pyramid_init(&pc.py, k);
  r.sn.qp.project = project_normal, r.sn.qp.ctx = &pc;
  r.st.qp.project = project_pyramids, r.st.qp.ctx = &pc;
  start(p, s, &pc.py, lambda);
  int rc = mr_stagproj_loop(&r, p, s, lcp_model, &pc, lambda, c, stats);
  return mr_stagproj_end(&r, "lcp-stagproj", rc, p, work, lambda, c, stats, err);
}
