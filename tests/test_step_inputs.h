/* The inputs of a step's Jacobians for the tests of the step derivatives: the state moved along
 * input k by t. */
#ifndef MOREAU_TEST_STEP_INPUTS_H
#define MOREAU_TEST_STEP_INPUTS_H

#include <string.h>

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

#endif
