/* soft: a spring-damper contact, the penalty baseline (DESIGN.md §4). Not an NCP solver: it
 * computes forces in closed form, in one pass, and does not solve any complementarity problem.
 *
 * Normal force, per contact:  λ_N = max(−k Φ_N − d Φ̇_N, 0) in penetration (Φ_N < 0), 0 above
 *   (a contact within the margin or a speculative one acts only once it penetrates; the damper
 *   alone would pull a fast approach to a stop at a distance)
 *   Φ_N  the signed gap from p->phi (negative in penetration); Φ_N = 0 when phi is NULL;
 *   Φ̇_N  the contact velocity at the start of the step, p->vel (an assembled problem has it);
 *        without it, the free velocity behind g: an assembled problem stores g in force units
 *        with the gap correction, g_N = (v_N + Φ_N/Δt [Φ_N ≥ 0]) / Δt, so v_N = Δt g_N −
 *        Φ_N/Δt [Φ_N ≥ 0]; a standalone problem without dt has g taken as the velocity;
 *   k = soft_k (N/m), d = soft_d (N s/m).
 * Friction, regularised Coulomb:  λ_T = −μ λ_N v_T / max(‖v_T‖, v_reg), v_reg = soft_vreg (m/s),
 *   with v_T from the same velocity (explicit: forces do not feed back).
 * Bilateral constraints are not penalised: their rows are solved as a linear system with the
 * contact forces fixed (Gauss-Seidel sweeps, mr_gs_bilateral, until ‖c‖ ≤ eps_abs on every
 * bilateral constraint or max_iter sweeps), so a loop closure or an anchor holds as it does
 * with the other solvers; a joint limit (μ = 0) is penalised like any contact (k in N m/rad
 * for a revolute joint).
 * Then c = (G + R) λ + g. iterations = 1; converged = 1 (nothing to converge); eps_model = 0.
 * Known failure modes: penetration depends on k and the load; stiff k needs small Δt; friction
 * creeps at rest (|c_T| < v_reg gives a viscous, not a sticking, force). */
#include <math.h>

#include "contact/solvers.h"

/* the spring-damper and regularised-friction force of one contact; v is its velocity */
static void soft_contact(const mr_solver_settings *s, double mu, double phi, const double *v,
                         double *l) {
  double ln = phi < 0.0 ? fmax(-s->soft_k * phi - s->soft_d * v[2], 0.0) : 0.0;
  double vt = hypot(v[0], v[1]);
  double scale = -mu * ln / fmax(vt, s->soft_vreg);
  l[0] = scale * v[0], l[1] = scale * v[1], l[2] = ln;
}

/* the contact velocity the forces respond to (see the header) */
static void contact_velocity(const mr_contact_problem *p, int i, double phi, double *v) {
  const double *g = p->g + 3 * i;
  if (p->vel) {
    v[0] = p->vel[3 * i], v[1] = p->vel[3 * i + 1], v[2] = p->vel[3 * i + 2];
    return;
  }
  if (!(p->dt > 0.0)) {
    v[0] = g[0], v[1] = g[1], v[2] = g[2];
    return;
  }
  v[0] = p->dt * g[0], v[1] = p->dt * g[1];
  v[2] = p->dt * g[2] - (phi >= 0.0 ? phi / p->dt : 0.0);
}

/* the largest ‖c‖ over the bilateral constraints */
static double bilateral_residual(const mr_contact_problem *p, const double *c) {
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i)
    if (mr_problem_bilateral(p, i))
      e = fmax(
          e, sqrt(c[3 * i] * c[3 * i] + c[3 * i + 1] * c[3 * i + 1] + c[3 * i + 2] * c[3 * i + 2]));
  return e;
}

/* Gauss-Seidel on the bilateral rows, the penalty forces fixed */
static void solve_bilateral(const mr_contact_problem *p, const mr_solver_settings *s,
                            double *lambda, double *c) {
  for (int k = 0; k < s->max_iter && bilateral_residual(p, c) > s->eps_abs; ++k)
    for (int i = 0; i < p->nc; ++i)
      if (mr_problem_bilateral(p, i)) mr_gs_bilateral(p, i, s->omega, lambda, c);
  mr_problem_velocity(p, lambda, c);
}

mr_status mr_solver_soft(MR_SOLVER_ARGS) {
  mr_status st = mr_gs_check(p, s, err);
  if (st) return st;
  if (!(s->soft_k >= 0.0) || !(s->soft_d >= 0.0) || !(s->soft_vreg > 0.0))
    return mr_error_set(err, MR_ERR_INVALID,
                        "soft: need k >= 0, d >= 0, v_reg > 0 (got %g, %g, %g)", s->soft_k,
                        s->soft_d, s->soft_vreg);
  int nbil = 0;
  for (int i = 0; i < p->nc; ++i) {
    double phi = p->phi ? p->phi[i] : 0.0, v[3];
    if (mr_problem_bilateral(p, i)) {
      nbil++;
      continue; /* keeps its warm start */
    }
    contact_velocity(p, i, phi, v);
    soft_contact(s, p->mu[i], phi, v, lambda + 3 * i);
  }
  for (int i = 0; i < p->nc; ++i)
    if (mr_problem_bilateral(p, i) && (!s->warm_start || !isfinite(lambda[3 * i])))
      lambda[3 * i] = lambda[3 * i + 1] = lambda[3 * i + 2] = 0.0;
  mr_problem_velocity(p, lambda, c);
  if (nbil > 0) solve_bilateral(p, s, lambda, c);
  stats->iterations = 1;
  stats->converged = 1;
  stats->eps_model = 0.0;
  return MR_OK;
}
