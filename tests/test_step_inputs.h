/* The inputs of a step's Jacobians for the tests of the step derivatives: the state moved along
 * input k by t. */
#ifndef MOREAU_TEST_STEP_INPUTS_H
#define MOREAU_TEST_STEP_INPUTS_H

#include <string.h>

#include "moreau/sim_derivatives.h"
#include "moreau/dynamics.h"

/* k < nv: (q ⊕ t e_k, v); k < 2 nv: (q, v + t e_{k − nv}); else (q, v), the input being the
 * torque of dof k − 2 nv (nv <= 64) */
static inline void test_moved_state(const mr_model *m, const double *q0, const double *v0, int k,
                                    double t, double *q, double *v) {
  const int nv = m->nv;
  double ek[64] = {0};
  memcpy(v, v0, (size_t)nv * sizeof(double));
  if (k < nv) {
    ek[k] = 1.0;
    mr_integrate(m, q0, ek, t, q);
  } else {
    memcpy(q, q0, (size_t)m->nq * sizeof(double));
    if (k < 2 * nv) v[k - nv] += t;
  }
}

/* entry r of input k (as in test_moved_state) of the Jacobians of v⁺ and q⁺: analytical into
 * an, from sd; Richardson's combination of the central differences with steps 2h and h into fd
 * (truncation O(h⁴)), from the samples vn and dq (q⁺ ⊖ q⁺₀) at +2h, +h, −h, −2h */
static inline void test_entry(const mr_step_derivatives *sd, int nv, int k, int r,
                              const double (*vn)[64], const double (*dq)[64], double h,
                              double an[2], double fd[2]) {
  const double *Av = k < nv ? sd->dvn_dq : k < 2 * nv ? sd->dvn_dv : sd->dvn_dtau;
  const double *Aq = k < nv ? sd->dqn_dq : k < 2 * nv ? sd->dqn_dv : sd->dqn_dtau;
  an[0] = Av[r * nv + k % nv], an[1] = Aq[r * nv + k % nv];
  const double (*x[2])[64] = {vn, dq};
  for (int o = 0; o < 2; ++o)
    fd[o] = (4 * (x[o][1][r] - x[o][2][r]) / (2 * h) - (x[o][0][r] - x[o][3][r]) / (4 * h)) / 3;
}

#endif
