/* Semismooth Newton on the natural map of the NCP (the last stage of ncp-hybrid, hybrid.c).
 *
 * With A = G + R, c = A λ + g, s = c + Γ(c) (de Saxcé, Γ(c) = (0, 0, μ‖c_T‖)) and per contact
 * h = 1/A_NN, the NCP K_μ ∋ λ ⟂ s ∈ K_μ* holds if and only if
 *   F(λ) = λ − Π_K(λ − h s) = 0
 * (Π_K the projection on the cone; a bilateral block projects by the identity and has no Γ).
 * F is semismooth; a generalised Jacobian is
 *   J = I − P + P H (I + DΓ) A,   P = blockdiag DΠ_K(x), x = λ − h s, H = blockdiag h I₃,
 * with DΠ_K = I inside the cone, 0 in the polar cone, and on the boundary region, for
 * x = (t, n), r = ‖t‖, t̂ = t/r, a = (μ r + n)/(1 + μ²):
 *   ∂p_T/∂t = μ² t̂t̂ᵀ/(1 + μ²) + μ a (I − t̂t̂ᵀ)/r,  ∂p_T/∂n = μ t̂/(1 + μ²),
 *   ∂p_N/∂t = μ t̂ᵀ/(1 + μ²),                       ∂p_N/∂n = 1/(1 + μ²);
 * and DΓ has the single row ∂Γ_N/∂c_T = μ ĉ_Tᵀ. The Newton system J Δ = −F is solved by LU with
 * a ridge 1e-10 max|J_ii| and iterated refinement (J is singular on the internal forces of a
 * hyperstatic contact set), then a backtracking line search on ‖F‖² (Armijo, constant 1e-4,
 * halving up to 20 times). Each step is one dense LU of a 3nc × 3nc matrix. */
#include <math.h>
#include <string.h>

#include "contact/natmap.h"
#include "core/linalg.h"

#define NM_REFINE 6
#define NM_HALVINGS 20
#define NM_ARMIJO 1e-4

/* the cone-projection Jacobian at x (3 x 3, row-major) */
static void cone_jacobian(double mu, const double *x, double *D) {
  double t = hypot(x[0], x[1]), n = x[2];
  memset(D, 0, 9 * sizeof(double));
  if (t <= mu * n && n >= 0.0) {
    D[0] = D[4] = D[8] = 1.0;
    return;
  }
  if (mu * t <= -n || !(t > 0.0)) return;
  double k = 1.0 / (1.0 + mu * mu), a = (mu * t + n) * k, u[2] = {x[0] / t, x[1] / t};
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j)
      D[3 * i + j] = mu * mu * k * u[i] * u[j] + mu * a / t * ((i == j) - u[i] * u[j]);
    D[3 * i + 2] = mu * k * u[i];
    D[6 + i] = mu * k * u[i];
  }
  D[8] = k;
}

/* F(λ) into F, c = A λ + g; returns ‖F‖² */
double mr_natmap_residual(const mr_contact_problem *p, const double *lambda, double *c, double *F) {
  int n = 3 * p->nc;
  mr_problem_velocity_dot2(p, lambda, c);
  double sum = 0.0;
  for (int i = 0; i < p->nc; ++i) {
    const double *l = lambda + 3 * i, *ci = c + 3 * i;
    double bnn = p->G[(size_t)(3 * i + 2) * n + 3 * i + 2] + (p->R ? p->R[3 * i + 2] : 0.0);
    double h = bnn > 0.0 ? 1.0 / bnn : 0.0, x[3], px[3];
    int bil = mr_problem_bilateral(p, i);
    double gam = bil ? 0.0 : p->mu[i] * hypot(ci[0], ci[1]);
    x[0] = l[0] - h * ci[0], x[1] = l[1] - h * ci[1], x[2] = l[2] - h * (ci[2] + gam);
    mr_constraint_project(p, i, x, px);
    for (int a = 0; a < 3; ++a) {
      F[3 * i + a] = l[a] - px[a];
      sum += F[3 * i + a] * F[3 * i + a];
    }
  }
  return sum;
}

/* J = I − P + P H (I + DΓ) A at (λ, c), n x n row-major */
static void jacobian(const mr_contact_problem *p, const double *lambda, const double *c,
                     double *J) {
  int n = 3 * p->nc;
  for (int i = 0; i < p->nc; ++i) {
    const double *l = lambda + 3 * i, *ci = c + 3 * i;
    double bnn = p->G[(size_t)(3 * i + 2) * n + 3 * i + 2] + (p->R ? p->R[3 * i + 2] : 0.0);
    double h = bnn > 0.0 ? 1.0 / bnn : 0.0, P[9], D[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Q[9];
    int bil = mr_problem_bilateral(p, i);
    double ct = hypot(ci[0], ci[1]), mu = bil ? 0.0 : p->mu[i];
    double x[3] = {l[0] - h * ci[0], l[1] - h * ci[1], l[2] - h * (ci[2] + mu * ct)};
    if (bil) {
      memcpy(P, D, sizeof P);
    } else {
      cone_jacobian(p->mu[i], x, P);
      if (ct > 0.0) D[6] = mu * ci[0] / ct, D[7] = mu * ci[1] / ct;
    }
    /* Q = h P D */
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        Q[3 * a + b] = h * (P[3 * a] * D[b] + P[3 * a + 1] * D[3 + b] + P[3 * a + 2] * D[6 + b]);
    for (int a = 0; a < 3; ++a) {
      double *row = J + (size_t)(3 * i + a) * n;
      const double *A0 = p->G + (size_t)(3 * i) * n, *A1 = A0 + n, *A2 = A1 + n;
      for (int k = 0; k < n; ++k)
        row[k] = Q[3 * a] * A0[k] + Q[3 * a + 1] * A1[k] + Q[3 * a + 2] * A2[k];
      if (p->R)
        for (int b = 0; b < 3; ++b)
          row[3 * i + b] += Q[3 * a + b] * p->R[3 * i + b];
      for (int b = 0; b < 3; ++b)
        row[3 * i + b] += (a == b) - P[3 * a + b];
    }
  }
}

/* Δ solving J Δ = −F: LU of J + εI, iterated refinement */
static int newton_direction(natmap_ws *w, int n) {
  double big = 0.0;
  for (int k = 0; k < n; ++k)
    big = fmax(big, fabs(w->J[(size_t)k * n + k]));
  memcpy(w->LU, w->J, sizeof(double) * (size_t)n * n);
  for (int k = 0; k < n; ++k)
    w->LU[(size_t)k * n + k] += 1e-10 * fmax(big, 1e-300);
  if (mr_lu_factor(w->LU, n, w->piv)) return -1;
  mr_zero(w->d, n);
  for (int it = 0; it < NM_REFINE; ++it) {
    mr_matvec(w->t, w->J, w->d, n, n);
    for (int k = 0; k < n; ++k)
      w->t[k] = -w->F[k] - w->t[k];
    mr_lu_solve(w->LU, n, w->piv, w->t);
    mr_axpy(w->d, 1.0, w->t, n);
  }
  return 0;
}

double mr_natmap_newton(const mr_contact_problem *p, double eps, double eps_scale, int max_steps,
                        natmap_ws *w, double *best, double *c, double e, int *steps) {
  int n = 3 * p->nc;
  mr_copy(w->l, best, n);
  double f = mr_natmap_residual(p, w->l, c, w->F);
  for (int k = 0; k < max_steps && e > eps && f > 0.0; ++k) {
    jacobian(p, w->l, c, w->J);
    if (newton_direction(w, n)) break;
    ++*steps;
    /* backtracking on ‖F‖² */
    double alpha = 1.0, ft = INFINITY;
    int h;
    for (h = 0; h < NM_HALVINGS; ++h, alpha *= 0.5) {
      for (int q = 0; q < n; ++q)
        w->lt[q] = w->l[q] + alpha * w->d[q];
      ft = mr_natmap_residual(p, w->lt, c, w->t);
      if (ft <= (1.0 - NM_ARMIJO * alpha) * f) break;
    }
    if (h == NM_HALVINGS) break;
    /* the accepted trial's F and c (= c(λ)) are the line search's last */
    mr_copy(w->l, w->lt, n), mr_copy(w->F, w->t, n), f = ft;
    double et = mr_problem_criteria_scaled(p, w->l, c, eps, eps_scale, NULL, NULL, NULL);
    if (et < e) mr_copy(best, w->l, n), e = et;
  }
  mr_problem_velocity_dot2(p, best, c);
  return e;
}
