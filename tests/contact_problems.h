/* Hand-built contact problems with known answers, shared by tests/test_solvers_admm.c and
 * bench/solvers.c.
 *
 * Units: λ in N (impulse / Δt), c in m/s, M given divided by Δt (DESIGN.md §4), so that
 * G = J (M/Δt)⁻¹ Jᵀ = Δt J M⁻¹ Jᵀ in m/(N s). Contact frames are (t₁, t₂, n) = (x, y, z).
 * - cp_single: a point mass on a plane, G = (Δt/m) I₃, g given.
 * - cp_stack: k cubes of half-size 0.1 m stacked on the ground, each resting on four corner
 *   contacts (4k contacts, velocities 6k: linear and angular velocity in the world frame at the
 *   centre of mass), falling from rest under gravity for one step: g = J v_f. The exact solution
 *   has c = 0 and, per interface, Σ λ_N = the weight of the boxes above it. */
#ifndef MOREAU_TESTS_CONTACT_PROBLEMS_H
#define MOREAU_TESTS_CONTACT_PROBLEMS_H

#include <string.h>

#include "moreau/contact.h"

#define CP_MAX_NC 16
#define CP_MAX_N (3 * CP_MAX_NC)
#define CP_MAX_NV 24
#define CP_DT 1e-3
#define CP_GRAVITY 9.81
#define CP_HALF 0.1

typedef struct {
  mr_contact_problem p;
  double G[CP_MAX_N * CP_MAX_N], g[CP_MAX_N], mu[CP_MAX_NC];
  double J[CP_MAX_N * CP_MAX_NV], M[CP_MAX_NV * CP_MAX_NV], vf[CP_MAX_NV];
} cp_problem;

/* point mass m on a plane with free contact velocity (g0, g1, g2) */
static inline void cp_single(cp_problem *cp, double m, double g0, double g1, double g2, double mu) {
  memset(cp, 0, sizeof *cp);
  for (int i = 0; i < 3; ++i)
    cp->G[4 * i] = CP_DT / m;
  cp->g[0] = g0, cp->g[1] = g1, cp->g[2] = g2;
  cp->mu[0] = mu;
  cp->p.nc = 1;
  cp->p.G = cp->G, cp->p.g = cp->g, cp->p.mu = cp->mu;
  cp->p.dt = CP_DT;
}

/* add J's 3x6 block of body k for the velocity of the point at r (from the centre of mass):
 * v + ω × r = v − [r]× ω, scaled by sign */
static inline void cp_point_block(cp_problem *cp, int row, int nv, int k, const double *r,
                                  double sign) {
  double S[3][3] = {{0, r[2], -r[1]}, {-r[2], 0, r[0]}, {r[1], -r[0], 0}}; /* −[r]× */
  for (int a = 0; a < 3; ++a) {
    double *Jr = cp->J + (row + a) * nv + 6 * k;
    Jr[a] += sign;
    for (int b = 0; b < 3; ++b)
      Jr[3 + b] += sign * S[a][b];
  }
}

/* k cubes (masses m[0] at the bottom ... m[k-1]), friction mu everywhere, k <= 4 */
static inline void cp_stack(cp_problem *cp, int k, const double *m, double mu) {
  memset(cp, 0, sizeof *cp);
  int nc = 4 * k, n = 3 * nc, nv = 6 * k;
  const double sx[4] = {1, -1, -1, 1}, sy[4] = {1, 1, -1, -1};
  for (int b = 0; b < k; ++b)
    for (int j = 0; j < 4; ++j) {
      double below[3] = {sx[j] * CP_HALF, sy[j] * CP_HALF, CP_HALF};
      double above[3] = {sx[j] * CP_HALF, sy[j] * CP_HALF, -CP_HALF};
      int row = 3 * (4 * b + j);
      cp_point_block(cp, row, nv, b, above, 1.0);
      if (b > 0) cp_point_block(cp, row, nv, b - 1, below, -1.0);
    }
  /* M/Δt: mass and the cube's inertia 2 m h² / 3 about any axis */
  for (int b = 0; b < k; ++b)
    for (int a = 0; a < 3; ++a) {
      int i = 6 * b + a, j = 6 * b + 3 + a;
      cp->M[i * nv + i] = m[b] / CP_DT;
      cp->M[j * nv + j] = 2.0 * m[b] * CP_HALF * CP_HALF / 3.0 / CP_DT;
      if (a == 2) cp->vf[i] = -CP_GRAVITY * CP_DT;
    }
  /* G = J (M/Δt)⁻¹ Jᵀ (M diagonal), g = J v_f */
  for (int r = 0; r < n; ++r) {
    for (int s = 0; s < n; ++s) {
      double acc = 0.0;
      for (int v = 0; v < nv; ++v)
        acc += cp->J[r * nv + v] * cp->J[s * nv + v] / cp->M[v * nv + v];
      cp->G[r * n + s] = acc;
    }
    for (int v = 0; v < nv; ++v)
      cp->g[r] += cp->J[r * nv + v] * cp->vf[v];
  }
  for (int i = 0; i < nc; ++i)
    cp->mu[i] = mu;
  cp->p.nc = nc, cp->p.nv = nv;
  cp->p.G = cp->G, cp->p.g = cp->g, cp->p.mu = cp->mu;
  cp->p.J = cp->J, cp->p.M = cp->M;
  cp->p.dt = CP_DT;
}

/* give box b a horizontal free velocity vx (a push) and recompute g = J v_f */
static inline void cp_stack_push(cp_problem *cp, int b, double vx) {
  int n = 3 * cp->p.nc, nv = cp->p.nv;
  cp->vf[6 * b] = vx;
  for (int r = 0; r < n; ++r) {
    cp->g[r] = 0.0;
    for (int v = 0; v < nv; ++v)
      cp->g[r] += cp->J[r * nv + v] * cp->vf[v];
  }
}

/* Σ λ_N over the four contacts of interface b (0: ground) */
static inline double cp_interface_normal(const double *lambda, int b) {
  double s = 0.0;
  for (int j = 0; j < 4; ++j)
    s += lambda[3 * (4 * b + j) + 2];
  return s;
}

#endif
