/* The k-facet friction pyramid of the LCP solvers (pyramid.h). */
#include "contact/pyramid.h"

#include <math.h>

mr_status mr_pyramid_facets(const mr_solver_settings *s, const char *solver, int *k,
                            mr_error *err) {
  int f = s->pyramid_facets == 0 ? 4 : s->pyramid_facets;
  if (f < 4 || f > MR_PYRAMID_MAX_FACETS || f % 2)
    return mr_error_set(err, MR_ERR_INVALID,
                        "%s: pyramid_facets = %d is not an even number in [4, %d]", solver,
                        s->pyramid_facets, MR_PYRAMID_MAX_FACETS);
  *k = f;
  return MR_OK;
}

void mr_pyramid_init(mr_pyramid *py, int k) {
  py->k = k;
  double sec = 1.0 / cos(M_PI / k);
  for (int j = 0; j < k; ++j) {
    double a = 2.0 * M_PI * j / k, b = (2.0 * j + 1.0) * M_PI / k;
    py->dx[j] = cos(a), py->dy[j] = sin(a);
    py->wx[j] = sec * cos(b), py->wy[j] = sec * sin(b);
  }
}

/* q(x) = ½ xᵀ B x + bᵀ x */
static double quad(const double *B, const double *b, double x, double y) {
  return 0.5 * (B[0] * x * x + 2.0 * B[1] * x * y + B[3] * y * y) + b[0] * x + b[1] * y;
}

/* 1 when x is inside P_k(r) up to round-off */
static int inside(const mr_pyramid *py, double r, double x, double y) {
  double tol = 1e-14 * (r + fabs(x) + fabs(y));
  for (int j = 0; j < py->k; ++j)
    if (x * py->dx[j] + y * py->dy[j] > r + tol) return 0;
  return 1;
}

void mr_pyramid_qp(const mr_pyramid *py, double r, const double *B, const double *b, double *x) {
  x[0] = x[1] = 0.0;
  if (!(r > 0.0)) return;
  /* the unconstrained minimiser, when B is positive definite and it is feasible */
  double det = B[0] * B[3] - B[1] * B[2];
  if (B[0] > 0.0 && det > 1e-14 * B[0] * B[3]) {
    double ux = (-B[3] * b[0] + B[1] * b[1]) / det, uy = (B[2] * b[0] - B[0] * b[1]) / det;
    if (inside(py, r, ux, uy)) {
      x[0] = ux, x[1] = uy;
      return;
    }
  }
  /* else the minimum is on the boundary (q convex): the best of the edges' minimisers */
  double best = INFINITY;
  for (int j = 0; j < py->k; ++j) {
    int n = j + 1 == py->k ? 0 : j + 1;
    double ax = r * py->wx[j], ay = r * py->wy[j];
    double ex = r * py->wx[n] - ax, ey = r * py->wy[n] - ay;
    /* q(a + t e) = q(a) + t eᵀ(B a + b) + ½ t² eᵀ B e, t ∈ [0, 1] */
    double slope = ex * (B[0] * ax + B[1] * ay + b[0]) + ey * (B[2] * ax + B[3] * ay + b[1]);
    double curv = ex * (B[0] * ex + B[1] * ey) + ey * (B[2] * ex + B[3] * ey);
    double t = curv > 0.0 ? -slope / curv : (slope < 0.0 ? 1.0 : 0.0);
    t = fmin(fmax(t, 0.0), 1.0);
    double px = ax + t * ex, py_ = ay + t * ey, q = quad(B, b, px, py_);
    if (q < best) best = q, x[0] = px, x[1] = py_;
  }
}

void mr_pyramid_project(const mr_pyramid *py, double r, const double *y, double *x) {
  const double I[4] = {1.0, 0.0, 0.0, 1.0};
  double b[2] = {-y[0], -y[1]};
  mr_pyramid_qp(py, r, I, b, x);
}

double mr_pyramid_contact_criterion(const mr_pyramid *py, double mu, const double *l,
                                    const double *c) {
  double r = mu * l[2], ep = fmax(-l[2], 0.0), h = -INFINITY;
  for (int j = 0; j < py->k; ++j) {
    ep = fmax(ep, l[0] * py->dx[j] + l[1] * py->dy[j] - r);
    h = fmax(h, -(py->wx[j] * c[0] + py->wy[j] * c[1]));
  }
  double ed = fmax(-c[2], 0.0);
  double ec = fmax(fabs(l[2] * c[2]), fabs(l[0] * c[0] + l[1] * c[1] + fmax(r, 0.0) * h));
  return fmax(ep, fmax(ed, ec));
}
