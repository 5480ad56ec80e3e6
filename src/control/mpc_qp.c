/* ADMM for the MPC's cone-constrained QP (mpc_qp.h). */
#include "control/mpc_qp.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "moreau/contact.h"

/* residual ratio beyond which ρ is rebalanced (by the ratio, within a factor RHO_STEP), checked
 * every RHO_CHECK iterations */
#define RHO_RATIO 3.0
#define RHO_STEP 5.0
#define RHO_CHECK 10
/* the penalty of an inactive block, relative to ρ, and the margin that makes a block inactive */
#define SIGMA 0.1
#define INTERIOR 0.95

mr_cone_qp_settings mr_cone_qp_settings_default(void) {
  return (mr_cone_qp_settings){.max_iter = 400, .eps = 1e-6};
}

long mr_cone_qp_work_size(int nb) {
  long n = 3L * nb;
  return 2 * n * n + 6 * n + 3 * nb;
}

/* Each block's scale d_b = 1 / √(mean of its diagonal of H): the problem in ũ = u / d (blocks
 * scaled by positive numbers keep their cones) has H̃ = D H D with unit mean diagonal blocks,
 * which ADMM's single penalty suits far better than H's spread of curvatures (forces whose
 * lever arms differ, steps near and far in the horizon). */
static void block_scaling(const mr_cone_qp *p, double *d, double *Hs, double *gs) {
  int n = 3 * p->nb;
  for (int b = 0; b < p->nb; ++b) {
    double m = 0.0;
    for (int k = 3 * b; k < 3 * b + 3; ++k)
      m += p->H[(size_t)k * n + k] / 3.0;
    d[b] = m > 0.0 ? 1.0 / sqrt(m) : 1.0;
  }
  for (int i = 0; i < n; ++i) {
    gs[i] = d[i / 3] * p->g[i];
    for (int j = 0; j < n; ++j)
      Hs[(size_t)i * n + j] = d[i / 3] * p->H[(size_t)i * n + j] * d[j / 3];
  }
}

/* L Lᵀ = H + diag(ρ_b) into L (ρ_b per block of 3); 0 on success */
static int factor(const double *H, int n, const double *rb, double *L) {
  memcpy(L, H, (size_t)n * (size_t)n * sizeof *L);
  for (int i = 0; i < n; ++i)
    L[(size_t)i * n + i] += rb[i / 3];
  return mr_cholesky(L, n);
}

/* the projection on the cone K_μ cut at n ≤ f_max (f_max = ∞: the cone). The set is symmetric
 * about the normal, so the projection is the 2-d one of (‖t‖, n) on the triangle (0, 0),
 * (μ f_max, f_max), (0, f_max): the cone's projection when that lies below the cut; else the
 * top edge's point (t, f_max) when ‖t‖ ≤ μ f_max (x was then above the cut, inside the cone's
 * cylinder), or the corner μ f_max t/‖t‖ at f_max (x in the corner's normal cone: exactly where
 * its cone projection has n > f_max). */
void mr_cut_cone_project(double mu, double fmax, const double *x, double *out) {
  mr_cone_project(mu, x, out);
  if (!(out[2] > fmax)) return;
  double r = sqrt(x[0] * x[0] + x[1] * x[1]), rmax = mu * fmax;
  double s = r <= rmax ? 1.0 : rmax / r;
  out[0] = s * x[0], out[1] = s * x[1], out[2] = fmax;
}

static void project(const mr_cone_qp *p, const double *fmax, const double *x, double *out) {
  for (int i = 0; i < p->nb; ++i)
    mr_cut_cone_project(p->mu[i], fmax[i], x + 3 * i, out + 3 * i);
}

/* the starting penalty: the mean diagonal of H, the scale of its curvature */
static double initial_rho(const double *H, int n) {
  double tr = 0.0;
  for (int i = 0; i < n; ++i)
    tr += H[(size_t)i * n + i];
  return tr > 0.0 ? tr / n : 1.0;
}

/* a block whose point x lies inside its set with a margin: its constraint is not active */
static int inside(double mu, double fmax, const double *x) {
  return hypot(x[0], x[1]) <= INTERIOR * mu * x[2] && x[2] <= INTERIOR * fmax;
}

/* The penalties per block: ρ on the blocks whose constraint is active at x, SIGMA ρ on the
 * others, whose variables the u-step then solves almost exactly (ADMM's rate on a direction of
 * curvature λ is ρ_b / (λ + ρ_b): the free forces' small curvatures would take hundreds of
 * iterations at one ρ for all). The multiplier keeps y_b = −ρ_b w_b. Returns 1 when a penalty
 * changed. */
static int penalties(const mr_cone_qp *p, const double *fcap, const double *x, double rho,
                     double *rb, double *w) {
  int changed = 0;
  for (int b = 0; b < p->nb; ++b) {
    double r = inside(p->mu[b], fcap[b], x + 3 * b) ? SIGMA * rho : rho;
    if (r == rb[b]) continue;
    for (int k = 3 * b; k < 3 * b + 3; ++k)
      w[k] *= rb[b] / r;
    rb[b] = r, changed = 1;
  }
  return changed;
}

int mr_cone_qp_solve(const mr_cone_qp *p, const mr_cone_qp_settings *s, double *work, double *u,
                     mr_cone_qp_info *info) {
  int n = 3 * p->nb;
  double *L = work, *Hs = L + (size_t)n * n, *gs = Hs + (size_t)n * n, *z = gs + n, *w = z + n,
         *zprev = w + n, *x = zprev + n, *d = x + n, *fcap = d + p->nb, *rb = fcap + p->nb;
  memset(info, 0, sizeof *info);
  if (n == 0) return info->converged = 1, 0;
  block_scaling(p, d, Hs, gs);
  for (int b = 0; b < p->nb; ++b)
    fcap[b] = p->fmax ? p->fmax[b] / d[b] : INFINITY;
  double *y = p->y;
  mr_cone_qp sp = {.nb = p->nb, .H = Hs, .g = gs, .mu = p->mu};
  p = &sp;
  double scale = 1.0 + mr_norm_inf(p->g, n);
  double rho = s->rho > 0.0 ? s->rho : initial_rho(p->H, n);
  for (int k = 0; k < n; ++k)
    u[k] /= d[k / 3];
  project(p, fcap, u, z);
  /* the multiplier's warm start w = −ỹ / ρ_b (ỹ = D y, the scaled problem's), the penalties
     from the warm start's activity */
  for (int b = 0; b < p->nb; ++b) {
    rb[b] = inside(p->mu[b], fcap[b], u + 3 * b) ? SIGMA * rho : rho;
    for (int k = 3 * b; k < 3 * b + 3; ++k)
      w[k] = y ? -d[b] * y[k] / rb[b] : 0.0;
  }
  if (factor(p->H, n, rb, L)) return -1;
  for (int it = 1; it <= s->max_iter; ++it) {
    /* u-step: (H + diag ρ_b) u = ρ_b (z − w) − g */
    for (int k = 0; k < n; ++k)
      u[k] = rb[k / 3] * (z[k] - w[k]) - p->g[k];
    mr_cholesky_solve(L, n, u);
    /* z-step and multiplier */
    mr_copy(zprev, z, n);
    for (int k = 0; k < n; ++k)
      x[k] = u[k] + w[k];
    project(p, fcap, x, z);
    double rp = 0.0, rd = 0.0;
    for (int k = 0; k < n; ++k) {
      w[k] += u[k] - z[k];
      rp = fmax(rp, fabs(u[k] - z[k]));
      rd = fmax(rd, rb[k / 3] * fabs(z[k] - zprev[k]));
    }
    info->iterations = it, info->primal = rp, info->dual = rd;
    if (rp <= s->eps * scale && rd <= s->eps * scale) {
      info->converged = 1;
      break;
    }
    if (it % RHO_CHECK) continue;
    /* residual balancing of ρ, and the blocks' activity */
    if (rp > RHO_RATIO * rd || rd > RHO_RATIO * rp)
      rho *= fmax(1.0 / RHO_STEP, fmin(RHO_STEP, rp / fmax(rd, DBL_MIN)));
    if (penalties(p, fcap, x, rho, rb, w) && factor(p->H, n, rb, L)) return -1;
  }
  info->rho = rho;
  for (int k = 0; k < n; ++k) {
    u[k] = d[k / 3] * z[k];
    if (y) y[k] = -rb[k / 3] * w[k] / d[k / 3];
  }
  return 0;
}

double mr_cone_qp_kkt(const mr_cone_qp *p, const double *u, double *y) {
  int n = 3 * p->nb;
  mr_matvec(y, p->H, u, n, n);
  mr_axpy(y, 1.0, p->g, n);
  double ys = 1.0 + mr_norm_inf(y, n), r = 0.0;
  for (int i = 0; i < p->nb; ++i) {
    const double *ui = u + 3 * i;
    double fm = p->fmax ? p->fmax[i] : INFINITY, pu[3], py[3],
           nu[3] = {y[3 * i], y[3 * i + 1], y[3 * i + 2]};
    /* a bound's multiplier λ ≥ 0: ν = y + λ e_n in K* with uᵀν = 0 when the bound holds u */
    double lam = isfinite(fm) && ui[2] > 0.0
                     ? fmax(0.0, -(ui[0] * nu[0] + ui[1] * nu[1] + ui[2] * nu[2]) / ui[2])
                     : 0.0;
    nu[2] += lam;
    mr_cut_cone_project(p->mu[i], fm, ui, pu);
    mr_dual_cone_project(p->mu[i], nu, py);
    for (int k = 0; k < 3; ++k) {
      r = fmax(r, fabs(pu[k] - ui[k]));
      r = fmax(r, fabs(py[k] - nu[k]) / ys);
    }
    r = fmax(r, fabs(ui[0] * nu[0] + ui[1] * nu[1] + ui[2] * nu[2]) / ys);
    if (lam > 0.0) r = fmax(r, lam * fabs(fm - ui[2]) / ys);
  }
  return r;
}
