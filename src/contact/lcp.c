/* lcp-pgs: projected Gauss-Seidel on the LCP with a 4-facet friction pyramid ("Contact Models
 * in Robotics", §III-A, Algorithm 1).
 *
 * The cone K_μ is replaced by the pyramid {λ_N ≥ 0, |λ_t1| ≤ μ λ_N, |λ_t2| ≤ μ λ_N}. Per contact,
 * with B = (G + R)⁽ⁱⁱ⁾ and c kept current after each component:
 *   λ_N  ← max(0, λ_N − ω c_N / B_NN),
 *   λ_tj ← clamp(λ_tj − ω c_tj / B_tjtj, −μ λ_N, μ λ_N),  j = 1, 2,
 * i.e. each tangential component is clamped separately. Algorithm 1 updates both tangential
 * components with one step 1 / min(B_t1t1, B_t2t2); here they are updated one after the other
 * with their own diagonal (the classic PGS of ODE/Bullet, exact coordinate minimisation, so
 * never unstable). Fixed points satisfy Signorini and maximum dissipation over the pyramid:
 * −λ_tj c_tj = μ λ_N |c_tj| for each j; it stops on that LCP criterion.
 * Known failure modes: friction is anisotropic, biased towards the pyramid's corners (a contact
 * sliding at 30° from t₁ gets λ_T = −μλ_N (1, 1), not antiparallel to c_T); first-order
 * convergence, slow on ill-conditioned G. */
#include <math.h>

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
    if (mr_problem_box(p, i)) {
      mr_gs_box(p, i, s->omega, lambda, c);
      continue;
    }
    if (mr_problem_bilateral(p, i)) {
      mr_gs_bilateral(p, i, s->omega, lambda, c);
      continue;
    }
    mr_gs_block(p, i, B);
    lcp_coordinate(p, B, i, 2, 0.0, INFINITY, s->omega, lambda, c);
    double f = p->mu[i] * lambda[3 * i + 2];
    lcp_coordinate(p, B, i, 0, -f, f, s->omega, lambda, c);
    lcp_coordinate(p, B, i, 1, -f, f, s->omega, lambda, c);
  }
}

mr_status mr_solver_lcp_pgs(MR_SOLVER_ARGS) {
  return mr_gs_run(p, s, work, lcp_sweep, NULL, mr_gs_criterion_lcp, lambda, c, stats, err);
}
