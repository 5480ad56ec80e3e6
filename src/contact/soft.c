/* soft: a spring-damper contact, the penalty baseline (DESIGN.md §4). Not an NCP solver: it
 * computes forces in closed form, in one pass, and does not solve any complementarity problem.
 *
 * Normal force, per contact:  λ_N = max(−k Φ_N − d Φ̇_N, 0)
 *   Φ_N  the signed gap from p->phi (negative in penetration); Φ_N = 0 when phi is NULL;
 *   Φ̇_N  estimated by the free normal velocity g_N (the velocity the contact would have without
 *        contact forces this step; with the gap correction of g included, as assembled);
 *   k = soft_k (N/m), d = soft_d (N s/m).
 * Friction, regularised Coulomb:  λ_T = −μ λ_N c_T / max(‖c_T‖, v_reg), v_reg = soft_vreg (m/s),
 *   with c_T estimated by the free tangential velocity g_T (explicit: forces do not feed back).
 * Then c = (G + R) λ + g. iterations = 1; converged = 1 (nothing to converge); eps_model = 0.
 * Known failure modes: penetration depends on k and the load; stiff k needs small Δt; friction
 * creeps at rest (|c_T| < v_reg gives a viscous, not a sticking, force). */
#include <math.h>

#include "contact/solvers.h"

/* the spring-damper and regularised-friction force of one contact */
static void soft_contact(const mr_solver_settings *s, double mu, double phi, const double *g,
                         double *l) {
  double ln = fmax(-s->soft_k * phi - s->soft_d * g[2], 0.0);
  double vt = hypot(g[0], g[1]);
  double scale = -mu * ln / fmax(vt, s->soft_vreg);
  l[0] = scale * g[0], l[1] = scale * g[1], l[2] = ln;
}

mr_status mr_solver_soft(MR_SOLVER_ARGS) {
  mr_status st = mr_gs_check(p, s, err);
  if (st) return st;
  if (!(s->soft_k >= 0.0) || !(s->soft_d >= 0.0) || !(s->soft_vreg > 0.0))
    return mr_error_set(err, MR_ERR_INVALID,
                        "soft: need k >= 0, d >= 0, v_reg > 0 (got %g, %g, %g)", s->soft_k,
                        s->soft_d, s->soft_vreg);
  for (int i = 0; i < p->nc; ++i)
    soft_contact(s, p->mu[i], p->phi ? p->phi[i] : 0.0, p->g + 3 * i, lambda + 3 * i);
  mr_problem_velocity(p, lambda, c);
  stats->iterations = 1;
  stats->converged = 1;
  stats->eps_model = 0.0;
  return MR_OK;
}
