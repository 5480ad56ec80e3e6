/* Derivative of the solution of a frictional contact problem (moreau/contact.h) with respect to
 * its free velocity g, by implicit differentiation of the NCP conditions on the active set at a
 * given solution (λ, c), c = (G + R) λ + g (each contact ordered t₁, t₂, n):
 *
 *   separated (λ_N <= tol):            λ = 0                         → dλ = 0
 *   sticking  (λ_N > tol, ‖c_T‖ <= tol, or a bilateral constraint):
 *                                     c = 0                          → (G + R) dλ + dg = 0
 *   sliding   (λ_N > tol, ‖c_T‖ > tol): c_N = 0 and, by maximum dissipation, λ_T on the cone
 *             boundary opposite to the slip, λ_T = −μ λ_N ĉ_T (ĉ_T = c_T / ‖c_T‖)
 *                                     → dc_N = 0,
 *                                       dλ_T = −μ ĉ_T dλ_N − (μ λ_N / ‖c_T‖) (1 − ĉ_T ĉ_Tᵀ) dc_T,
 *             with dc = (G + R) dλ + dg; a frictionless contact (μ = 0) has dλ_T = 0.
 * Stacking the rows gives A dλ = B dg, solved by the LU with partial pivoting of core/linalg
 * (A is not symmetric once a contact slides). The contact velocity follows as
 * dc/dg = (G + R) dλ/dg + 1.
 *
 * The classification is a choice where the solution sits on the boundary between two modes
 * (λ_N = 0 with c_N = 0: a contact just touching; ‖λ_T‖ = μ λ_N with c_T = 0: at the onset of
 * slip): there λ(g) is not differentiable, and the mode picked by tol gives one of the one-sided
 * derivatives. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "contact/active_set.h"

size_t mr_contact_derivative_work_size(int nc) {
  const size_t n = 3 * (size_t)nc;
  return (n * n + n) * sizeof(double) + n * sizeof(int) + 64;
}

mr_status mr_contact_solution_derivative(const mr_contact_problem *p, const double *lambda,
                                         const double *c, double tol, double *dlambda_dg,
                                         int *modes, void *work, mr_error *err) {
  const int n = 3 * p->nc;
  if (n == 0) return MR_OK;
  double *A = (double *)work, *col = A + (size_t)n * (size_t)n;
  int *piv = (int *)(col + n);
  mr_contact_active_set(p, lambda, c, tol, A, dlambda_dg, modes);
  if (mr_active_set_factor(A, n, piv) != 0)
    return mr_error_set(err, MR_ERR_NUMERIC,
                        "contact derivative: the active-set system is singular (%d contacts; "
                        "redundant sticking contacts make dλ/dg non-unique)",
                        p->nc);
  mr_active_set_solve(A, n, piv, dlambda_dg, n, col);
  return MR_OK;
}
