/* lcp-pgs: projected Gauss-Seidel on the LCP with a friction pyramid ("Contact Models in
 * Robotics", §III-A, Algorithm 1).
 *
 * The cone K_μ is replaced by the pyramid {λ_N ≥ 0, λ_T ∈ P_k(μ λ_N)}, P_k the regular k-gon
 * circumscribed about the disc ‖λ_T‖ ≤ μ λ_N (pyramid.h; k = mr_solver_settings.pyramid_facets,
 * default 4: the box |λ_t1|, |λ_t2| ≤ μ λ_N). Per contact, with B = (G + R)⁽ⁱⁱ⁾ and c kept
 * current after each component:
 *   λ_N  ← max(0, λ_N − ω c_N / B_NN),
 * then, on the box (k = 4),
 *   λ_tj ← clamp(λ_tj − ω c_tj / B_tjtj, −μ λ_N, μ λ_N),  j = 1, 2,
 * i.e. each tangential component is clamped separately. Algorithm 1 updates both tangential
 * components with one step 1 / min(B_t1t1, B_t2t2); here they are updated one after the other
 * with their own diagonal (the classic PGS of ODE/Bullet, exact coordinate minimisation, so
 * never unstable). With k > 4 facets the polygon does not separate into coordinates, and the
 * tangential pair is updated as one block: λ_T ← argmin over P_k(μ λ_N) of the model's
 * quadratic ½ λ_Tᵀ B_TT λ_T + (c_T − B_TT λ_T)ᵀ λ_T with the other unknowns fixed (the exact
 * minimiser in the G metric, mr_pyramid_qp: block Gauss-Seidel, again never unstable; a
 * Euclidean projection after a step 1/B_tt would not be the block's minimiser when B_TT is not
 * isotropic), then over-relaxed by ω and projected back on the polygon when ω ≠ 1.
 * Fixed points satisfy Signorini and maximum dissipation over the pyramid: on the box
 * −λ_tj c_tj = μ λ_N |c_tj| for each j, on P_k −λ_T·c_T = μ λ_N max_j w_j·(−c_T) (its
 * support function); it stops on that LCP criterion.
 * Known failure modes: friction is anisotropic, biased towards the pyramid's corners (a contact
 * sliding at 30° from t₁ gets λ_T = −μλ_N (1, 1) on the box, 15° off the direction opposite
 * c_T; on P_k the error is at most π/k and the force's magnitude up to 1/cos(π/k) of Coulomb's);
 * first-order convergence, slow on ill-conditioned G. */
#include <math.h>

#include "contact/pyramid.h"
#include "contact/solvers.h"

/* one coordinate update of component a of contact i, keeping c current */
static void lcp_coordinate(const mr_contact_problem *p, const double *B, int i, int a, double lo,
                           double hi, double omega, double *lambda, double *c) {
  double d = B[4 * a];
  if (!(d > 0.0)) return;
  double x = lambda[3 * i + a] - omega * c[3 * i + a] / d;
  x = fmin(fmax(x, lo), hi);
  double delta[3] = {0.0, 0.0, 0.0};
  delta[a] = x - lambda[3 * i + a];
  mr_gs_apply(p, i, delta, lambda, c);
}

/* one sweep: the normal component, then each tangential component clamped to ±μ λ_N */
static void lcp_sweep(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                      double *lambda, double *c) {
  for (int i = 0; i < p->nc; ++i) {
    double B[9];
    if (mr_gs_other_kind(p, i, s->omega, lambda, c)) continue;
    mr_gs_block(p, i, B);
    lcp_coordinate(p, B, i, 2, 0.0, INFINITY, s->omega, lambda, c);
    double f = p->mu[i] * lambda[3 * i + 2];
    lcp_coordinate(p, B, i, 0, -f, f, s->omega, lambda, c);
    lcp_coordinate(p, B, i, 1, -f, f, s->omega, lambda, c);
  }
}

/* one sweep on the k-facet pyramid (ctx: the pyramid): the normal component, then the
 * tangential pair as one block */
static void lcp_sweep_k(const mr_contact_problem *p, const mr_solver_settings *s, void *ctx,
                        double *lambda, double *c) {
  const mr_pyramid *py = ctx;
  for (int i = 0; i < p->nc; ++i) {
    double B[9];
    if (mr_gs_other_kind(p, i, s->omega, lambda, c)) continue;
    mr_gs_block(p, i, B);
    lcp_coordinate(p, B, i, 2, 0.0, INFINITY, s->omega, lambda, c);
    double *l = lambda + 3 * i, r = p->mu[i] * l[2], x[2];
    /* the block's quadratic: B_TT, and b = c_T − B_TT λ_T (c_T = B_TT λ_T + b) */
    const double BT[4] = {B[0], B[1], B[3], B[4]};
    double b[2] = {c[3 * i] - B[0] * l[0] - B[1] * l[1], c[3 * i + 1] - B[3] * l[0] - B[4] * l[1]};
    mr_pyramid_qp(py, r, BT, b, x);
    if (s->omega != 1.0) {
      x[0] = l[0] + s->omega * (x[0] - l[0]), x[1] = l[1] + s->omega * (x[1] - l[1]);
      mr_pyramid_project(py, r, x, x);
    }
    double delta[3] = {x[0] - l[0], x[1] - l[1], 0.0};
    mr_gs_apply(p, i, delta, lambda, c);
  }
}

/* the problem with its pyramid, so that the criterion (which sees only the problem) finds it:
 * the problem is the first member, and a pointer to it converts back to the whole */
typedef struct {
  mr_contact_problem p;
  mr_pyramid py;
} lcp_problem;

/* the LCP criterion on the k-facet pyramid (box and bilateral constraints as the box's) */
static double lcp_criterion_k(const mr_contact_problem *p, const double *lambda, const double *c) {
  const lcp_problem *lp = (const lcp_problem *)p;
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i) {
    if (mr_problem_box(p, i) || mr_problem_bilateral(p, i)) {
      mr_contact_problem one = *p;
      one.nc = 1, one.kind = p->kind + i, one.mu = p->mu + i;
      e = fmax(e, mr_gs_criterion_lcp(&one, lambda + 3 * i, c + 3 * i));
      continue;
    }
    e = fmax(e, mr_pyramid_contact_criterion(&lp->py, p->mu[i], lambda + 3 * i, c + 3 * i));
  }
  return e;
}

mr_status mr_solver_lcp_pgs(MR_SOLVER_ARGS) {
  (void)state;
  int k = 4;
  mr_status st = s ? mr_pyramid_facets(s, "lcp-pgs", &k, err) : MR_OK;
  if (st) return st;
  if (k == 4)
    return mr_gs_run(p, s, work, lcp_sweep, NULL, mr_gs_criterion_lcp, lambda, c, stats, err);
  if (!p) return mr_gs_check(p, s, err);
  lcp_problem lp = {.p = *p};
  mr_pyramid_init(&lp.py, k);
  return mr_gs_run(&lp.p, s, work, lcp_sweep_k, &lp.py, lcp_criterion_k, lambda, c, stats, err);
}
