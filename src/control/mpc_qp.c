/* The MPC's cone-constrained QP (mpc_qp.h) by a primal-dual interior-point method.
 *
 * On the block-scaled problem (block_scaling), each block b's friction cone is the second-order
 * cone s_b = A_b x_b = (μ n, t₁, t₂) ∈ Q³ = {s₀ ≥ ‖(s₁, s₂)‖} and its cut the half-line
 * l_b = f_max − n ≥ 0: G x + s = h with G_b = −A_b, h_b = 0, and the cut's row e_n with
 * h = f_max. Mehrotra's predictor-corrector with Nesterov–Todd scaling (Vandenberghe, "The
 * CVXOPT linear and quadratic cone program solvers", 2010, §§ 4–5): each iteration solves the
 * Newton system reduced to (H + Σ_b G_bᵀ W_b⁻² G_b) Δx = r, one dense Cholesky factor of n × n
 * (the scalings W_b add 3 × 3 blocks on H's diagonal, the cuts a number), used twice (the
 * affine predictor, then the centred corrector), each solve refined once near the end. The number
 * of iterations hardly depends on the problem: how many blocks end on their cones' surfaces, at the
 * apex or on the cuts, and how far the start is, which is why it starts cold each time. */
#include "control/mpc_qp.h"

#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "moreau/contact.h"

/* the Newton solves are refined once (ipm_newton) from this mean complementarity down
 * (scaled problem): far from the solution the reduced system is well conditioned */
#define REFINE_BELOW 1e-6
/* a step goes this share of the way to the cones' boundary */
#define STEP_SHARE 0.99

mr_cone_qp_settings mr_cone_qp_settings_default(void) {
  return (mr_cone_qp_settings){.max_iter = 50, .eps = 1e-8};
}

/* Each block's scale d_b = 1 / √(mean of its diagonal of H): the problem in ũ = u / d (blocks
 * scaled by positive numbers keep their cones) has H̃ = D H D with unit mean diagonal blocks,
 * the same scale for every block's residuals and complementarity whatever its lever arm or step
 * in the horizon. */
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

/* A_b x (3) and A_bᵀ z (3) */
static inline void cone_map(double mu, const double *x, double *s) {
  s[0] = mu * x[2], s[1] = x[0], s[2] = x[1];
}
static inline void cone_map_t(double mu, const double *z, double *x) {
  x[0] = z[1], x[1] = z[2], x[2] = mu * z[0];
}

/* the Jordan product u ∘ v of Q³, and λ \ v (the x with λ ∘ x = v, λ inside the cone) */
static inline void jordan(const double *u, const double *v, double *o) {
  double w0 = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
  o[1] = u[0] * v[1] + v[0] * u[1], o[2] = u[0] * v[2] + v[0] * u[2], o[0] = w0;
}
static inline void jordan_div(const double *l, const double *v, double *o) {
  double det = l[0] * l[0] - l[1] * l[1] - l[2] * l[2];
  double x0 = (l[0] * v[0] - l[1] * v[1] - l[2] * v[2]) / det;
  o[1] = (v[1] - x0 * l[1]) / l[0], o[2] = (v[2] - x0 * l[2]) / l[0], o[0] = x0;
}

/* the largest α ≤ cap with u + α v in Q³ (u inside) */
static double soc_step(const double *u, const double *v, double cap) {
  double a = v[0] * v[0] - v[1] * v[1] - v[2] * v[2];
  double b = 2.0 * (u[0] * v[0] - u[1] * v[1] - u[2] * v[2]);
  double c = u[0] * u[0] - u[1] * u[1] - u[2] * u[2];
  double alpha = cap;
  /* the boundary: the smallest positive root of a α² + b α + c (c > 0), or where u₀ + α v₀ = 0 */
  if (v[0] < 0.0) alpha = fmin(alpha, -u[0] / v[0]);
  if (a == 0.0) {
    if (b < 0.0) alpha = fmin(alpha, -c / b);
  } else {
    double disc = b * b - 4.0 * a * c;
    if (disc >= 0.0) {
      double sq = sqrt(disc), q = -0.5 * (b + copysign(sq, b));
      double r1 = q / a, r2 = q != 0.0 ? c / q : INFINITY;
      if (r1 > 0.0) alpha = fmin(alpha, r1);
      if (r2 > 0.0) alpha = fmin(alpha, r2);
    }
  }
  return alpha;
}

/* the cone's Nesterov–Todd scaling at (s, z), both inside: the symmetric W with W z = W⁻¹ s = λ
 * (J = diag(1, −1, −1), s̄ = s / √(sᵀJs), z̄ likewise, γ = √((1 + z̄ᵀs̄) / 2), the scaling point
 * w̄ = (s̄ + J z̄) / (2γ), v = (w̄ + e) / √(2 (w̄₀ + 1)), β = (sᵀJs / zᵀJz)^¼:
 * W = β (2 v vᵀ − J), W⁻¹ = (2 J v vᵀ J − J) / β); W, W⁻¹ (9, row-major) and λ; 0, or −1 on a
 * point at the boundary */
static int nt_scaling(const double *s, const double *z, double *Winv, double *W, double *lam) {
  /* sᵀJs as (s₀ − ‖s₁‖)(s₀ + ‖s₁‖): accurate near the boundary, where s₀² − ‖s₁‖² cancels */
  double rs = hypot(s[1], s[2]), rz = hypot(z[1], z[2]);
  double ns = (s[0] - rs) * (s[0] + rs), nz = (z[0] - rz) * (z[0] + rz);
  if (!(ns > 0.0 && nz > 0.0)) return -1;
  ns = sqrt(ns), nz = sqrt(nz);
  double sb[3] = {s[0] / ns, s[1] / ns, s[2] / ns}, zb[3] = {z[0] / nz, z[1] / nz, z[2] / nz};
  double gam = sqrt(0.5 * (1.0 + sb[0] * zb[0] + sb[1] * zb[1] + sb[2] * zb[2]));
  double w[3] = {(sb[0] + zb[0]) / (2.0 * gam) + 1.0, (sb[1] - zb[1]) / (2.0 * gam),
                 (sb[2] - zb[2]) / (2.0 * gam)};
  double vs = 1.0 / sqrt(2.0 * w[0]);
  w[0] *= vs, w[1] *= vs, w[2] *= vs;
  double beta = sqrt(ns / nz);
  static const double J[3] = {1.0, -1.0, -1.0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double e = i == j ? J[i] : 0.0;
      W[3 * i + j] = beta * (2.0 * w[i] * w[j] - e);
      Winv[3 * i + j] = (2.0 * J[i] * w[i] * w[j] * J[j] - e) / beta;
    }
  for (int i = 0; i < 3; ++i)
    lam[i] = W[3 * i] * z[0] + W[3 * i + 1] * z[1] + W[3 * i + 2] * z[2];
  return 0;
}

static inline void mul3(const double *A, const double *x, double *y) {
  for (int i = 0; i < 3; ++i)
    y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

/* The interior-point state: per block the cone's s, z (3 each), λ, W, W⁻¹, and the cut's l, y
 * (its dual) where f_max is finite */
typedef struct {
  int nb, n, m;                 /* blocks, variables, degree (cones and cuts) */
  const double *mu, *cap;       /* the scaled problem's μ and f_max */
  double *s, *z, *lam, *W, *Wi; /* 3 nb, 3 nb, 3 nb, 9 nb, 9 nb */
  double *l, *y, *ll;           /* nb: the cut's slack, dual and λ = √(l y) */
  double *M;                    /* the reduced matrix, then its Cholesky factor, n × n */
  double *rx, *rz, *rl, *dx, *ds, *dz, *dl, *dy, *bs, *bl, *t; /* n or 3 nb, or nb */
  double *ex, *ez, *es, *ezl, *esl, *fx, *fs, *fz, *fl, *fy;   /* refinement: n or nb each */
  double *xbest;                                               /* the best iterate, n */
} ipm;

static size_t ipm_doubles(int nb) {
  size_t n = 3 * (size_t)nb;
  return n * n + 23 * n + 11 * (size_t)nb; /* the arrays of ipm_at */
}

static ipm ipm_at(double *w, int nb, const double *mu, const double *cap) {
  size_t n = 3 * (size_t)nb;
  ipm q = {.nb = nb, .n = (int)n, .mu = mu, .cap = cap};
  q.M = w, w += n * n;
  double **v[] = {&q.s, &q.z,  &q.lam, &q.rx, &q.rz, &q.dx, &q.ds, &q.dz,   &q.bs,
                  &q.t, &q.ex, &q.ez,  &q.es, &q.fx, &q.fs, &q.fz, &q.xbest};
  for (size_t k = 0; k < sizeof v / sizeof *v; ++k)
    *v[k] = w, w += n;
  q.W = w, w += 3 * n, q.Wi = w, w += 3 * n;
  double **c[] = {&q.l, &q.y, &q.ll, &q.rl, &q.dl, &q.dy, &q.bl, &q.ezl, &q.esl, &q.fl, &q.fy};
  for (size_t k = 0; k < sizeof c / sizeof *c; ++k)
    *c[k] = w, w += nb;
  q.m = nb;
  for (int b = 0; b < nb; ++b)
    q.m += isfinite(cap[b]);
  return q;
}

/* Solve the Newton system H Δx + Gᵀ Δz = bx, G Δx + Δs = bz, λ ∘ (W Δz + W⁻¹ Δs) = bs for the
 * right-hand sides bx (n), bz and bs (the cones', 3 nb) and bzl and bsl (the cuts', nb), into
 * dx, ds, dz (and the cuts' dl, dy): with M factored,
 *   Δx = M⁻¹ (bx − Gᵀ W⁻² (W (λ \ bs) − bz)),  Δz = W⁻² (G Δx + W (λ \ bs) − bz),
 *   Δs = bz − G Δx; the cuts the same with W = √(l / y), λ = √(l y); q->t is scratch. */
static void ipm_solve(ipm *q, const double *bx, const double *bz, const double *bzl,
                      const double *bs, const double *bsl) {
  int n = q->n;
  mr_copy(q->dx, bx, n);
  for (int b = 0; b < q->nb; ++b) {
    const double *Wi = q->Wi + 9 * b, *W = q->W + 9 * b;
    double u[3], v[3], r[3], a[3];
    jordan_div(q->lam + 3 * b, bs + 3 * b, u);
    mul3(W, u, v);
    for (int k = 0; k < 3; ++k)
      v[k] -= bz[3 * b + k];
    mul3(Wi, v, u), mul3(Wi, u, r); /* W⁻² (W (λ \ bs) − bz) */
    q->t[3 * b] = r[0], q->t[3 * b + 1] = r[1], q->t[3 * b + 2] = r[2];
    cone_map_t(q->mu[b], r, a); /* Gᵀ = −Aᵀ */
    for (int k = 0; k < 3; ++k)
      q->dx[3 * b + k] += a[k];
    if (!isfinite(q->cap[b])) continue;
    /* the cut: W² = l / y; −(Gᵀ) W⁻² (W (λ \ bs) − bz) with G = e_n */
    double w2 = q->l[b] / q->y[b], wl = sqrt(w2);
    double rl = (wl * bsl[b] / q->ll[b] - bzl[b]) / w2;
    q->dl[b] = rl; /* kept for Δy below */
    q->dx[3 * b + 2] -= rl;
  }
  mr_cholesky_solve(q->M, n, q->dx);
  for (int b = 0; b < q->nb; ++b) {
    const double *Wi = q->Wi + 9 * b;
    double gx[3], u[3], v[3];
    cone_map(q->mu[b], q->dx + 3 * b, gx); /* G Δx = −A Δx */
    for (int k = 0; k < 3; ++k)
      gx[k] = -gx[k];
    for (int k = 0; k < 3; ++k) {
      u[k] = gx[k];
      q->ds[3 * b + k] = bz[3 * b + k] - gx[k];
    }
    mul3(Wi, u, v), mul3(Wi, v, u); /* W⁻² G Δx */
    for (int k = 0; k < 3; ++k)
      q->dz[3 * b + k] = u[k] + q->t[3 * b + k];
    if (!isfinite(q->cap[b])) continue;
    double w2 = q->l[b] / q->y[b], gxl = q->dx[3 * b + 2];
    q->dy[b] = gxl / w2 + q->dl[b];
    q->dl[b] = bzl[b] - gxl; /* Δl */
  }
}

/* ipm_solve, and when refine is set one round of iterative refinement: the residuals of the
 * unreduced Newton system (H Δx + Gᵀ Δz = bx, G Δx + Δs = bz, λ ∘ (W Δz + W⁻¹ Δs) = bs, the cuts
 * likewise) solved again and added. Near the solution the scalings W grow without bound in some
 * directions and the reduced matrix with them: without it the residuals of stationarity stop
 * falling near 1e-9 while the complementarity still does. */
static void ipm_newton(ipm *q, const double *H, int refine, const double *bx, const double *bz,
                       const double *bzl, const double *bs, const double *bsl) {
  int n = q->n, nb = q->nb;
  ipm_solve(q, bx, bz, bzl, bs, bsl);
  if (!refine) return;
  mr_copy(q->fx, q->dx, n), mr_copy(q->fs, q->ds, n), mr_copy(q->fz, q->dz, n);
  mr_copy(q->fl, q->dl, nb), mr_copy(q->fy, q->dy, nb);
  mr_matvec(q->ex, H, q->dx, n, n);
  for (int k = 0; k < n; ++k)
    q->ex[k] = bx[k] - q->ex[k];
  for (int b = 0; b < nb; ++b) {
    double a[3], ax[3], u[3], v[3], o[3];
    cone_map_t(q->mu[b], q->dz + 3 * b, a);
    cone_map(q->mu[b], q->dx + 3 * b, ax);
    mul3(q->W + 9 * b, q->dz + 3 * b, u), mul3(q->Wi + 9 * b, q->ds + 3 * b, v);
    for (int k = 0; k < 3; ++k)
      u[k] += v[k];
    jordan(q->lam + 3 * b, u, o);
    for (int k = 0; k < 3; ++k) {
      q->ex[3 * b + k] += a[k];
      q->ez[3 * b + k] = bz[3 * b + k] - (q->ds[3 * b + k] - ax[k]);
      q->es[3 * b + k] = bs[3 * b + k] - o[k];
    }
    if (!isfinite(q->cap[b])) continue;
    double wl = sqrt(q->l[b] / q->y[b]);
    q->ex[3 * b + 2] -= q->dy[b];
    q->ezl[b] = bzl[b] - (q->dx[3 * b + 2] + q->dl[b]);
    q->esl[b] = bsl[b] - q->ll[b] * (wl * q->dy[b] + q->dl[b] / wl);
  }
  ipm_solve(q, q->ex, q->ez, q->ezl, q->es, q->esl);
  mr_axpy(q->dx, 1.0, q->fx, n), mr_axpy(q->ds, 1.0, q->fs, n), mr_axpy(q->dz, 1.0, q->fz, n);
  mr_axpy(q->dl, 1.0, q->fl, nb), mr_axpy(q->dy, 1.0, q->fy, nb);
}

/* the largest step ≤ 1 keeping s, z, l, y inside */
static double ipm_step(const ipm *q) {
  double a = 1.0;
  for (int b = 0; b < q->nb; ++b) {
    a = soc_step(q->s + 3 * b, q->ds + 3 * b, a);
    a = soc_step(q->z + 3 * b, q->dz + 3 * b, a);
    if (!isfinite(q->cap[b])) continue;
    if (q->dl[b] < 0.0) a = fmin(a, -q->l[b] / q->dl[b]);
    if (q->dy[b] < 0.0) a = fmin(a, -q->y[b] / q->dy[b]);
  }
  return a;
}

/* s, z (and l, y) pushed inside: v ← v + (1 + α) e where α = max over the cones of
 * ‖v₁‖ − v₀ (and −v for the cuts) is not negative */
static void ipm_inside(ipm *q, double *v, double *vl) {
  double a = -INFINITY;
  for (int b = 0; b < q->nb; ++b) {
    a = fmax(a, hypot(v[3 * b + 1], v[3 * b + 2]) - v[3 * b]);
    if (isfinite(q->cap[b])) a = fmax(a, -vl[b]);
  }
  if (a < 0.0) return;
  for (int b = 0; b < q->nb; ++b) {
    v[3 * b] += 1.0 + a;
    if (isfinite(q->cap[b])) vl[b] += 1.0 + a;
  }
}

/* factor M = H + Σ Gᵀ W⁻² G at the current scalings (−1: not positive definite) */
static int ipm_factor(ipm *q, const double *H) {
  int n = q->n;
  memcpy(q->M, H, (size_t)n * n * sizeof *H);
  for (int b = 0; b < q->nb; ++b) {
    const double *Wi = q->Wi + 9 * b;
    double W2[9], A[9] = {0, 0, q->mu[b], 1, 0, 0, 0, 1, 0}, T[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        W2[3 * i + j] = Wi[3 * i] * Wi[j] + Wi[3 * i + 1] * Wi[3 + j] + Wi[3 * i + 2] * Wi[6 + j];
    /* Aᵀ W⁻² A */
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        T[3 * i + j] = W2[3 * i] * A[j] + W2[3 * i + 1] * A[3 + j] + W2[3 * i + 2] * A[6 + j];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        q->M[(size_t)(3 * b + i) * n + 3 * b + j] +=
            A[i] * T[j] + A[3 + i] * T[3 + j] + A[6 + i] * T[6 + j];
    if (isfinite(q->cap[b])) q->M[(size_t)(3 * b + 2) * n + 3 * b + 2] += q->y[b] / q->l[b];
  }
  return mr_cholesky(q->M, n);
}

/* the residuals at (x, s, z, l, y): rx = H x + g + Gᵀ z, rz = G x + s − h (cones), rl the cuts';
 * returns the complementarity sᵀz + lᵀy */
static double ipm_residuals(ipm *q, const mr_cone_qp *p, const double *x) {
  int n = q->n;
  double gap = 0.0;
  mr_matvec(q->rx, p->H, x, n, n);
  mr_axpy(q->rx, 1.0, p->g, n);
  for (int b = 0; b < q->nb; ++b) {
    double a[3], ax[3];
    cone_map_t(q->mu[b], q->z + 3 * b, a);
    cone_map(q->mu[b], x + 3 * b, ax);
    for (int k = 0; k < 3; ++k) {
      q->rx[3 * b + k] -= a[k];
      q->rz[3 * b + k] = q->s[3 * b + k] - ax[k];
      gap += q->s[3 * b + k] * q->z[3 * b + k];
    }
    if (!isfinite(q->cap[b])) continue;
    q->rx[3 * b + 2] += q->y[b];
    q->rl[b] = x[3 * b + 2] + q->l[b] - q->cap[b];
    gap += q->l[b] * q->y[b];
  }
  return gap;
}

/* the scalings at (s, z, l, y) and M factored; −1 on a point at the boundary or no factor */
static int ipm_scale(ipm *q, const double *H) {
  for (int b = 0; b < q->nb; ++b) {
    if (nt_scaling(q->s + 3 * b, q->z + 3 * b, q->Wi + 9 * b, q->W + 9 * b, q->lam + 3 * b))
      return -1;
    if (isfinite(q->cap[b])) q->ll[b] = sqrt(q->l[b] * q->y[b]);
  }
  return ipm_factor(q, H);
}

/* the complementarity after a step α along the last direction */
static double ipm_gap_after(const ipm *q, double a) {
  double gap = 0.0;
  for (int b = 0; b < q->nb; ++b) {
    for (int k = 3 * b; k < 3 * b + 3; ++k)
      gap += (q->s[k] + a * q->ds[k]) * (q->z[k] + a * q->dz[k]);
    if (isfinite(q->cap[b])) gap += (q->l[b] + a * q->dl[b]) * (q->y[b] + a * q->dy[b]);
  }
  return gap;
}

/* x projected on the sets */
static void project_all(const mr_cone_qp *p, const double *cap, double *x) {
  for (int b = 0; b < p->nb; ++b) {
    double v[3] = {x[3 * b], x[3 * b + 1], x[3 * b + 2]};
    mr_cut_cone_project(p->mu[b], cap[b], v, x + 3 * b);
  }
}

/* Solve the scaled problem p (f_max in cap) from a cold start, at most s->max_iter iterations,
 * until the residuals (relative to 1 + ‖g‖∞) and the mean complementarity are at most s->eps;
 * the best iterate (by the larger of the two), projected on the sets, into x (w: ipm_doubles).
 * Returns 0, or −1 when the start's matrix cannot be factored (H not positive definite). */
static int ipm_run(const mr_cone_qp *p, const double *cap, const mr_cone_qp_settings *s, double *x,
                   double *w, mr_cone_qp_info *info) {
  ipm q = ipm_at(w, p->nb, p->mu, cap);
  int n = q.n, nb = q.nb;
  double scale = 1.0 + mr_norm_inf(p->g, n), *xbest = q.xbest;
  /* the start (W = I): [H Gᵀ; G −I] (x, z) = (−g, h), s = −z, both pushed inside */
  for (int b = 0; b < nb; ++b) {
    static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(q.W + 9 * b, I, sizeof I), memcpy(q.Wi + 9 * b, I, sizeof I);
    q.lam[3 * b] = 1.0, q.lam[3 * b + 1] = q.lam[3 * b + 2] = 0.0;
    q.l[b] = q.y[b] = q.ll[b] = 1.0;
    for (int k = 3 * b; k < 3 * b + 3; ++k)
      q.bs[k] = q.rz[k] = 0.0;
    q.bl[b] = 0.0, q.rl[b] = isfinite(cap[b]) ? cap[b] : 0.0;
  }
  if (ipm_factor(&q, p->H)) return -1;
  for (int k = 0; k < n; ++k)
    q.rx[k] = -p->g[k];
  ipm_solve(&q, q.rx, q.rz, q.rl, q.bs, q.bl);
  mr_copy(x, q.dx, n);
  mr_copy(q.s, q.ds, n), mr_copy(q.z, q.dz, n);
  mr_copy(q.l, q.dl, nb), mr_copy(q.y, q.dy, nb);
  ipm_inside(&q, q.s, q.l);
  ipm_inside(&q, q.z, q.y);
  /* the best iterate by the larger of its residuals (over 1 + ‖g‖∞) and its mean
     complementarity: near the cones' boundary the reduced system loses accuracy, and the
     residuals can grow again while the complementarity still falls */
  double best = INFINITY;
  for (int it = 0;; ++it) {
    double gap = ipm_residuals(&q, p, x), primal = mr_norm_inf(q.rz, n);
    for (int b = 0; b < nb; ++b)
      if (isfinite(cap[b])) primal = fmax(primal, fabs(q.rl[b]));
    double dual = mr_norm_inf(q.rx, n), mean = gap / q.m;
    double merit = fmax(fmax(primal, dual) / scale, mean);
    info->iterations = it;
    if (merit < best) {
      best = merit, mr_copy(xbest, x, n);
      info->primal = primal, info->dual = dual, info->gap = mean;
    }
    if (merit <= s->eps) {
      info->converged = 1;
      break;
    }
    /* out of iterations, or a point on the cones' boundary in floating point */
    if (it == s->max_iter || !(gap > 0.0) || ipm_scale(&q, p->H)) break;
    /* the predictor: bx = −rx, bz = −rz, bs = −λ ∘ λ */
    for (int k = 0; k < n; ++k)
      q.rx[k] = -q.rx[k], q.rz[k] = -q.rz[k];
    for (int b = 0; b < nb; ++b) {
      jordan(q.lam + 3 * b, q.lam + 3 * b, q.bs + 3 * b);
      for (int k = 3 * b; k < 3 * b + 3; ++k)
        q.bs[k] = -q.bs[k];
      q.rl[b] = -q.rl[b], q.bl[b] = -q.ll[b] * q.ll[b];
    }
    int refine = mean < REFINE_BELOW;
    ipm_newton(&q, p->H, refine, q.rx, q.rz, q.rl, q.bs, q.bl);
    double a = ipm_step(&q);
    /* Mehrotra's centring σ = (the predictor's complementarity / the present one)³; the
       corrector: bs −= (W⁻¹ Δs_a) ∘ (W Δz_a) − σ μ e (the cuts: their products) */
    double sigma = pow(ipm_gap_after(&q, a) / gap, 3.0), target = sigma * gap / q.m;
    for (int b = 0; b < nb; ++b) {
      double u[3], v[3], o[3];
      mul3(q.Wi + 9 * b, q.ds + 3 * b, u), mul3(q.W + 9 * b, q.dz + 3 * b, v);
      jordan(u, v, o);
      for (int k = 0; k < 3; ++k)
        q.bs[3 * b + k] -= o[k];
      q.bs[3 * b] += target;
      if (isfinite(cap[b])) q.bl[b] += target - q.dl[b] * q.dy[b];
    }
    ipm_newton(&q, p->H, refine, q.rx, q.rz, q.rl, q.bs, q.bl);
    a = fmin(1.0, STEP_SHARE * ipm_step(&q));
    mr_axpy(x, a, q.dx, n);
    mr_axpy(q.s, a, q.ds, n), mr_axpy(q.z, a, q.dz, n);
    mr_axpy(q.l, a, q.dl, nb), mr_axpy(q.y, a, q.dy, nb);
  }
  mr_copy(x, xbest, n);
  project_all(p, cap, x);
  return 0;
}

long mr_cone_qp_work_size(int nb) {
  long n = 3L * nb;
  return n * n + 2 * n + 2 * nb + (long)ipm_doubles(nb);
}

int mr_cone_qp_solve(const mr_cone_qp *p, const mr_cone_qp_settings *s, double *work, double *u,
                     mr_cone_qp_info *info) {
  int n = 3 * p->nb;
  double *Hs = work, *gs = Hs + (size_t)n * n, *x = gs + n, *d = x + n, *cap = d + p->nb,
         *w = cap + p->nb;
  memset(info, 0, sizeof *info);
  if (n == 0) return info->converged = 1, 0;
  block_scaling(p, d, Hs, gs);
  for (int b = 0; b < p->nb; ++b)
    cap[b] = p->fmax ? p->fmax[b] / d[b] : INFINITY;
  mr_cone_qp sp = {.nb = p->nb, .H = Hs, .g = gs, .mu = p->mu};
  if (ipm_run(&sp, cap, s, x, w, info)) return -1;
  for (int k = 0; k < n; ++k)
    u[k] = d[k / 3] * x[k];
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
