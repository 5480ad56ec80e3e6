/* Cones, projections and the accuracy criteria of the frictional contact problem.
 *
 * K_μ = {(t, n) : ‖t‖ ≤ μ n}. Its dual is K_μ* = {(t, n) : μ ‖t‖ ≤ n} = K_{1/μ} and its polar is
 * −K_μ*. The projection of x = (t, n) on K_μ is x inside K_μ, 0 inside the polar cone, and
 * otherwise the projection on the boundary ray through t: ((μ‖t‖ + n) / (1 + μ²)) (μ t/‖t‖, 1).
 * The criteria are those of "Contact Models in Robotics" (§IV): primal feasibility
 * ε_p = dist_K(λ), dual feasibility ε_d = dist_K*(c + Γ(c)), complementarity
 * ε_c = |⟨λ, c + Γ(c)⟩|, and ε_abs their maximum over contacts. A bilateral constraint's set is
 * R³ and its dual {0}: ε_p = 0, ε_d = ‖c‖, and ε_c = 0 (implied by c = 0). A box's (joint
 * friction, |λ_N| ≤ f) are its distance ε_p to the box and the natural-map residual
 * ε_d = |λ_N − clamp(λ_N − c_N, −f, f)| = |mid(λ_N + f, λ_N − f, c_N)|, ε_c = 0. */
#include "moreau/contact.h"

#include <float.h>
#include <math.h>

#include "contact/solvers.h"
#include "core/lanes.h"
#include "core/linalg.h"

/* the projection of x on K_mu, t = ‖x_T‖ given; 1 when x is inside (out = x) */
static int cone_project_at(double mu, const double *x, double t, double *out) {
  double n = x[2];
  /* inside (n ≥ 0 matters only for μ = 0, where t = 0 satisfies t ≤ μ n for any n) */
  if (t <= mu * n && n >= 0.0) {
    out[0] = x[0], out[1] = x[1], out[2] = x[2];
    return 1;
  }
  if (mu * t <= -n) {
    out[0] = out[1] = out[2] = 0.0;
  } else {
    double a = (mu * t + n) / (1.0 + mu * mu);
    double s = mu * a / t; /* t > 0 here */
    out[0] = s * x[0], out[1] = s * x[1], out[2] = a;
  }
  return 0;
}

void mr_cone_project(double mu, const double *x, double *out) {
  cone_project_at(mu, x, mr_norm2d(x[0], x[1]), out);
}

void mr_dual_cone_project(double mu, const double *x, double *out) {
  if (mu > 0.0) {
    mr_cone_project(1.0 / mu, x, out);
  } else { /* K_0 = the normal ray, its dual the half-space n ≥ 0 */
    out[0] = x[0], out[1] = x[1], out[2] = fmax(x[2], 0.0);
  }
}

int mr_problem_has_box(const mr_contact_problem *p) {
  for (int i = 0; p->kind && i < p->nc; ++i)
    if (p->kind[i] == MR_KIND_BOX) return 1;
  return 0;
}

void mr_constraint_project(const mr_contact_problem *p, int i, const double *x, double *out) {
  if (mr_problem_box(p, i))
    out[0] = out[1] = 0.0, out[2] = fmin(fmax(x[2], -p->mu[i]), p->mu[i]);
  else if (mr_problem_bilateral(p, i))
    out[0] = x[0], out[1] = x[1], out[2] = x[2];
  else
    mr_cone_project(p->mu[i], x, out);
}

void mr_desaxce(double mu, const double *c, double *out) {
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2] + mu * mr_norm2d(c[0], c[1]);
}

static double dist3(const double *a, const double *b) {
  return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
              (a[2] - b[2]) * (a[2] - b[2]));
}

/* dist3(x, x): 0, or NaN for an infinite x, without the square root */
static double self_distance(const double *x) {
  return (x[0] - x[0]) + (x[1] - x[1]) + (x[2] - x[2]);
}

/* the distance from x to its projection on K_m, ‖x_T‖ = t given: dist3(x, mr_cone_project(x))
 * bit for bit, without the square root inside the cone */
static double cone_distance(double m, const double *x, double t) {
  double proj[3];
  return cone_project_at(m, x, t, proj) ? self_distance(x) : dist3(x, proj);
}

void mr_contact_criteria(double mu, const double *lambda, const double *c, int desaxce,
                         double *eps_p, double *eps_d, double *eps_c) {
  double s[3], tc = mr_norm2d(c[0], c[1]), n = lambda[2];
  /* inside the cone without ‖λ_T‖ (a solver's iterate, projected on the cone, is inside) */
  if (n >= 0.0 && mr_disk_surely_holds(lambda[0], lambda[1], mu * n))
    *eps_p = self_distance(lambda);
  else
    *eps_p = cone_distance(mu, lambda, mr_norm2d(lambda[0], lambda[1]));
  /* s = c + Γ(c) (mr_desaxce), whose tangential part is c's */
  s[0] = c[0], s[1] = c[1], s[2] = desaxce ? c[2] + mu * tc : c[2];
  if (mu > 0.0) {
    *eps_d = cone_distance(1.0 / mu, s, tc);
  } else {
    double proj[3];
    mr_dual_cone_project(mu, s, proj);
    *eps_d = dist3(s, proj);
  }
  *eps_c = fabs(lambda[0] * s[0] + lambda[1] * s[1] + lambda[2] * s[2]);
}

void mr_problem_velocity(const mr_contact_problem *p, const double *lambda, double *c) {
  int n = 3 * p->nc;
  mr_problem_G_mul(p, lambda, c);
  for (int i = 0; i < n; ++i)
    c[i] += p->g[i] + (p->R ? p->R[i] * lambda[i] : 0.0);
}

/* one term x y of a Dot2 sum in each of four lanes: s takes the rounded sum, sig the product's
 * error (fma) and the sum's (Knuth's TwoSum: t + e = s + h exactly, no branch); each lane the
 * scalar operations in their order */
static inline void dot2_add4(const lanes4 *xp, const lanes4 *yp, lanes4 *s, lanes4 *sig) {
  const lanes4 x = *xp, y = *yp;
  lanes4 h = x * y, r;
  lanes4_fms(&x, &y, &h, &r);
  lanes4 t = *s + h, z = t - *s;
  *sig += ((*s - (t - z)) + (h - z)) + r;
  *s = t;
}

/* c = (G + R) λ + g as if computed in twice the working precision: Ogita, Rump and Oishi's Dot2
 * ("Accurate sum and dot product", SIAM J. Sci. Comput. 26, 2005, Algorithm 5.3) with the
 * product's error from fma, one row at a time with g_i and R_i λ_i as two more terms. The
 * result is within u |c_i| + γ_n² Σ_j |G_ij λ_j| of the exact value (u = 2⁻⁵³), where the plain
 * sum is within γ_n Σ_j |G_ij λ_j|: at a solution, where the terms cancel, the error falls from
 * about u times the size of the terms to u times the size of c (docs/solvers.md, "Accuracy
 * criteria"). About 11n flops per row against mr_problem_velocity's 2n. */
void mr_problem_velocity_dot2(const mr_contact_problem *p, const double *lambda, double *c) {
  /* the three rows of a contact summed side by side in three lanes: each row's terms in its own
   * order (so the same c as one row at a time) */
  int n = 3 * p->nc;
  for (int i = 0; i < p->nc; ++i) {
    int r0 = 3 * i;
    lanes4 s = {p->g[r0], p->g[r0 + 1], p->g[r0 + 2], 0.0}, sig = {0.0, 0.0, 0.0, 0.0};
    if (p->G) {
      const double *row = p->G + (size_t)r0 * n;
      for (int j = 0; j < n; ++j) {
        lanes4 x = {row[j], row[n + j], row[2 * (size_t)n + j], 0.0},
               y = {lambda[j], lambda[j], lambda[j], 0.0};
        dot2_add4(&x, &y, &s, &sig);
      }
    } else { /* the stored blocks of the rows in ascending columns: the dense terms in the
              * dense order without its exact zeros, which add nothing */
      for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
        const double *B = p->Gb + 9 * (size_t)k, *l = lambda + 3 * p->Gb_col[k];
        for (int b = 0; b < 3; ++b) {
          lanes4 x = {B[b], B[3 + b], B[6 + b], 0.0}, y = {l[b], l[b], l[b], 0.0};
          dot2_add4(&x, &y, &s, &sig);
        }
      }
    }
    if (p->R) {
      lanes4 x = {p->R[r0], p->R[r0 + 1], p->R[r0 + 2], 0.0},
             y = {lambda[r0], lambda[r0 + 1], lambda[r0 + 2], 0.0};
      dot2_add4(&x, &y, &s, &sig);
    }
    lanes4 out = s + sig;
    c[r0] = out[0], c[r0 + 1] = out[1], c[r0 + 2] = out[2];
  }
}

/* the median of a, b, c */
static double mid3(double a, double b, double c) {
  return fmax(fmin(a, b), fmin(fmax(a, b), c));
}

void mr_box_criteria(double f, const double *lambda, const double *c, double *eps_p,
                     double *eps_d) {
  double ln = lambda[2];
  *eps_p = fmax(fmax(fabs(ln) - f, mr_norm2d(lambda[0], lambda[1])), 0.0);
  *eps_d = fabs(mid3(ln + f, ln - f, c[2]));
}

/* ε less what its scale allows above eps_abs, tol = max(eps_abs, eps_scale S) − eps_abs (0:
 * ε itself), not below 0: at most eps_abs exactly when ε ≤ tol */
static double judged(double e, double eps_abs, double scaled) {
  double over = scaled - eps_abs;
  return over > 0.0 ? fmax(e - over, 0.0) : e;
}

/* V_i: the largest over constraint i's rows of |g_r| + Σ_j |(G + R)_rj| |λ_j|, the size of the
 * terms that c_r sums */
static double terms_size(const mr_contact_problem *p, const double *lambda, int i) {
  int n = 3 * p->nc;
  double v = 0.0;
  for (int a = 0; a < 3; ++a) {
    int r = 3 * i + a;
    double sum = fabs(p->g[r]) + (p->R ? fabs(p->R[r] * lambda[r]) : 0.0);
    if (p->G) {
      const double *row = p->G + (size_t)r * n;
      for (int j = 0; j < n; ++j)
        sum += fabs(row[j] * lambda[j]);
    } else {
      for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
        const double *B = p->Gb + 9 * (size_t)k + 3 * a, *l = lambda + 3 * p->Gb_col[k];
        sum += fabs(B[0] * l[0]) + fabs(B[1] * l[1]) + fabs(B[2] * l[2]);
      }
    }
    v = fmax(v, sum);
  }
  return v;
}

/* the largest diagonal entry of G + R over constraint i's rows */
static double diagonal_max(const mr_contact_problem *p, int i) {
  double B[9];
  mr_gs_block(p, i, B);
  return fmax(B[0], fmax(B[4], B[8]));
}

/* D ‖λ‖₁, D the largest diagonal entry of G + R: a bound on Σ_j |(G + R)_rj λ_j| for every row r
 * (G + R is positive semi-definite, so no entry exceeds D) */
static double terms_bound(const mr_contact_problem *p, const double *lambda) {
  double d = 0.0, sum = 0.0;
  for (int j = 0; j < p->nc; ++j)
    d = fmax(d, diagonal_max(p, j));
  for (int k = 0; k < 3 * p->nc; ++k)
    sum += fabs(lambda[k]);
  return d * sum;
}

void mr_problem_roundoff_scales(const mr_contact_problem *p, const double *lambda, double *f,
                                double *v) {
  double g = 0.0;
  *f = 0.0;
  for (int k = 0; k < 3 * p->nc; ++k)
    *f = fmax(*f, fabs(lambda[k])), g = fmax(g, fabs(p->g[k]));
  *v = g + terms_bound(p, lambda);
}

/* a row of m terms (its stored blocks' columns, or all 3nc, then R and g; exact zeros add no
 * rounding) is summed within γ_m V of its exact value, γ_m = m u / (1 − m u); ε_p does not read
 * c, a distance to a cone is 1-Lipschitz and c ↦ c + Γ(c) (1 + μ)-Lipschitz, so ε_d moves by at
 * most (1 + μ) and ε_c by at most (1 + μ) ‖λ_i‖ times √3 γ_m V (a box's and a bilateral row's
 * parts are 1-Lipschitz in c), and the scaled criterion's judgement, a shift that depends on λ
 * alone, by no more than its parts; twice that, the compensated product being itself within
 * u |c| + γ_m² V of the exact one */
double mr_problem_plain_slack(const mr_contact_problem *p, const double *lambda) {
  int m = 3 * p->nc;
  if (p->Gb) {
    m = 0;
    for (int i = 0; i < p->nc; ++i)
      m = m > p->Gb_row[i + 1] - p->Gb_row[i] ? m : p->Gb_row[i + 1] - p->Gb_row[i];
    m *= 3;
  }
  m += 2;
  double mu = 0.0, f, v, u = 0.5 * DBL_EPSILON;
  for (int i = 0; i < p->nc; ++i)
    if (!mr_problem_bilateral(p, i) && !mr_problem_box(p, i)) mu = fmax(mu, p->mu[i]);
  mr_problem_roundoff_scales(p, lambda, &f, &v);
  return 2.0 * sqrt(3.0) * (1.0 + mu) * fmax(f, 1.0) * (m * u / (1.0 - m * u)) * v;
}

/* constraint i's part of ε̂ (the largest of ep, ed, ec, above a): its parts judged against their
 * scales when they can exceed a. G + R is positive semi-definite, so every |(G + R)_rj| is at
 * most the largest diagonal entry D and V_i ≤ max_r |g_r| + D ‖λ‖₁ (*bound = D ‖λ‖₁, computed
 * by the first call that needs it, < 0 before): a constraint whose tolerances this bound leaves
 * at a is judged as it is, without its rows of G */
static double scaled_part(const mr_contact_problem *p, const double *lambda, int i, double a,
                          double r, double ep, double ed, double ec, double *bound) {
  const double *l = lambda + 3 * i;
  if (*bound < 0.0) *bound = terms_bound(p, lambda);
  double fi = fmax(fabs(l[0]), fmax(fabs(l[1]), fabs(l[2])));
  double gi = fmax(fabs(p->g[3 * i]), fmax(fabs(p->g[3 * i + 1]), fabs(p->g[3 * i + 2])));
  if (!(r * fmax(fi, 1.0) * fmax(gi + *bound, 1.0) > a)) return fmax(ep, fmax(ed, ec));
  double vi = terms_size(p, lambda, i);
  return fmax(judged(ep, a, r * fi), fmax(judged(ed, a, r * vi), judged(ec, a, r * fi * vi)));
}

/* constraint i's criteria at (λ, c): a box (joint friction) the natural map of the box, a
 * bilateral constraint λ free and c = 0, a contact the cone's (with Γ when desaxce) */
static inline void constraint_criteria(const mr_contact_problem *p, int i, const double *lambda,
                                       const double *c, int desaxce, double *ep, double *ed,
                                       double *ec) {
  const double *l = lambda + 3 * i, *ci = c + 3 * i;
  *ep = *ec = 0.0;
  if (mr_problem_box(p, i))
    mr_box_criteria(p->mu[i], l, ci, ep, ed);
  else if (mr_problem_bilateral(p, i))
    *ed = sqrt(ci[0] * ci[0] + ci[1] * ci[1] + ci[2] * ci[2]);
  else
    mr_contact_criteria(p->mu[i], l, ci, desaxce, ep, ed, ec);
}

/* fmax(m, x) for an m that is not NaN, inline (libm's fmax is a call): m unless x is larger, a NaN
 * x ignored as fmax ignores it */
static inline double larger(double m, double x) {
  return x > m ? x : m;
}

double mr_problem_criteria(const mr_contact_problem *p, const double *lambda, const double *c,
                           int desaxce, double *eps_p, double *eps_d, double *eps_c) {
  double mp = 0.0, md = 0.0, mc = 0.0;
  for (int i = 0; i < p->nc; ++i) {
    double ep, ed, ec;
    constraint_criteria(p, i, lambda, c, desaxce, &ep, &ed, &ec);
    mp = larger(mp, ep), md = larger(md, ed), mc = larger(mc, ec);
  }
  if (eps_p) *eps_p = mp;
  if (eps_d) *eps_d = md;
  if (eps_c) *eps_c = mc;
  return fmax(mp, fmax(md, mc));
}

double mr_problem_criteria_scaled(const mr_contact_problem *p, const double *lambda,
                                  const double *c, double eps_abs, double eps_scale, double *eps_p,
                                  double *eps_d, double *eps_c) {
  double mp = 0.0, md = 0.0, mc = 0.0, worst = 0.0, bound = -1.0;
  for (int i = 0; i < p->nc; ++i) {
    double ep, ed, ec;
    constraint_criteria(p, i, lambda, c, 1, &ep, &ed, &ec);
    mp = larger(mp, ep), md = larger(md, ed), mc = larger(mc, ec);
    double part = ep > ed ? ep : ed;
    part = part > ec ? part : ec;
    if (part > eps_abs && eps_scale > 0.0)
      part = scaled_part(p, lambda, i, eps_abs, eps_scale, ep, ed, ec, &bound);
    worst = part > worst ? part : worst;
  }
  if (eps_p) *eps_p = mp;
  if (eps_d) *eps_d = md;
  if (eps_c) *eps_c = mc;
  return worst;
}
