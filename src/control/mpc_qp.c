/* ADMM for the MPC's cone-constrained QP (mpc_qp.h). */
#include "control/mpc_qp.h"

#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "moreau/contact.h"

/* residual ratio beyond which ρ is rebalanced, and the factor it changes by */
#define RHO_RATIO 5.0
#define RHO_STEP 5.0
#define RHO_CHECK 10

mr_cone_qp_settings mr_cone_qp_settings_default(void) {
  return (mr_cone_qp_settings){.max_iter = 400, .eps = 1e-6};
}

long mr_cone_qp_work_size(int nb) {
  long n = 3L * nb;
  return 2 * n * n + 6 * n + nb;
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

/* L Lᵀ = H + ρ I into L; 0 on success */
static int factor(const double *H, int n, double rho, double *L) {
  memcpy(L, H, (size_t)n * (size_t)n * sizeof *L);
  for (int i = 0; i < n; ++i)
    L[(size_t)i * n + i] += rho;
  return mr_cholesky(L, n);
}

static void project(const mr_cone_qp *p, const double *x, double *out) {
  for (int i = 0; i < p->nb; ++i)
    mr_cone_project(p->mu[i], x + 3 * i, out + 3 * i);
}

/* the starting penalty: the mean diagonal of H, the scale of its curvature */
static double initial_rho(const double *H, int n) {
  double tr = 0.0;
  for (int i = 0; i < n; ++i)
    tr += H[(size_t)i * n + i];
  return tr > 0.0 ? tr / n : 1.0;
}

int mr_cone_qp_solve(const mr_cone_qp *p, const mr_cone_qp_settings *s, double *work, double *u,
                     mr_cone_qp_info *info) {
  int n = 3 * p->nb;
  double *L = work, *Hs = L + (size_t)n * n, *gs = Hs + (size_t)n * n, *z = gs + n, *w = z + n,
         *zprev = w + n, *x = zprev + n, *d = x + n;
  memset(info, 0, sizeof *info);
  if (n == 0) return info->converged = 1, 0;
  block_scaling(p, d, Hs, gs);
  mr_cone_qp sp = {.nb = p->nb, .H = Hs, .g = gs, .mu = p->mu};
  p = &sp;
  double scale = 1.0 + mr_norm_inf(p->g, n);
  double rho = s->rho > 0.0 ? s->rho : initial_rho(p->H, n);
  for (int k = 0; k < n; ++k)
    u[k] /= d[k / 3];
  project(p, u, z);
  mr_zero(w, n);
  if (factor(p->H, n, rho, L)) return -1;
  for (int it = 1; it <= s->max_iter; ++it) {
    /* u-step: (H + ρ I) u = ρ (z − w) − g */
    for (int k = 0; k < n; ++k)
      u[k] = rho * (z[k] - w[k]) - p->g[k];
    mr_cholesky_solve(L, n, u);
    /* z-step and multiplier */
    mr_copy(zprev, z, n);
    for (int k = 0; k < n; ++k)
      x[k] = u[k] + w[k];
    project(p, x, z);
    double rp = 0.0, rd = 0.0;
    for (int k = 0; k < n; ++k) {
      w[k] += u[k] - z[k];
      rp = fmax(rp, fabs(u[k] - z[k]));
      rd = fmax(rd, rho * fabs(z[k] - zprev[k]));
    }
    info->iterations = it, info->primal = rp, info->dual = rd;
    if (rp <= s->eps * scale && rd <= s->eps * scale) {
      info->converged = 1;
      break;
    }
    /* residual balancing: the multiplier keeps y = ρ w across a change of ρ */
    if (it % RHO_CHECK == 0 && (rp > RHO_RATIO * rd || rd > RHO_RATIO * rp)) {
      double f = rp > rd ? RHO_STEP : 1.0 / RHO_STEP;
      rho *= f;
      mr_scale(w, 1.0 / f, n);
      if (factor(p->H, n, rho, L)) return -1;
    }
  }
  info->rho = rho;
  for (int k = 0; k < n; ++k)
    u[k] = d[k / 3] * z[k];
  return 0;
}

double mr_cone_qp_kkt(const mr_cone_qp *p, const double *u, double *y) {
  int n = 3 * p->nb;
  mr_matvec(y, p->H, u, n, n);
  mr_axpy(y, 1.0, p->g, n);
  double ys = 1.0 + mr_norm_inf(y, n), r = 0.0;
  for (int i = 0; i < p->nb; ++i) {
    const double *ui = u + 3 * i, *yi = y + 3 * i;
    double pu[3], py[3];
    mr_cone_project(p->mu[i], ui, pu);
    mr_dual_cone_project(p->mu[i], yi, py);
    for (int k = 0; k < 3; ++k) {
      r = fmax(r, fabs(pu[k] - ui[k]));
      r = fmax(r, fabs(py[k] - yi[k]) / ys);
    }
    r = fmax(r, fabs(ui[0] * yi[0] + ui[1] * yi[1] + ui[2] * yi[2]) / ys);
  }
  return r;
}
