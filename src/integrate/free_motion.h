/* The free-motion stage of the step (free_motion.c; DESIGN.md §4): semi-implicit Euler without
 * contact forces, the PD gains and joint damping implicit,
 *   M̃ = M(q) + Δt diag(k_d + damping) + Δt² diag(k_p),
 *   v_f = v + Δt M̃⁻¹ (τ + k_p e − b(q, v) − (k_d + damping + Δt k_p) v),
 * b the RNEA bias with the external forces d->f_ext (body frames) at the free bodies' bias
 * acceleration (free_flyer.c), then the free bodies' gyroscopic impulse. The simulator's step
 * and the step derivatives (step_derivatives.c, which differentiates it) both call these. */
#ifndef MOREAU_INTEGRATE_FREE_MOTION_H
#define MOREAU_INTEGRATE_FREE_MOTION_H

#include "moreau/dynamics.h"

typedef struct {
  double dt;            /* Δt (s), > 0 */
  const double *tau;    /* explicit joint torques (nv) */
  const double *kp;     /* implicit PD stiffness per dof (nv), NULL for none */
  const double *kd;     /* implicit PD damping per dof (nv), NULL for none */
  const double *q_err;  /* e = q_t ⊖ q per dof (nv), read where k_p ≠ 0 (NULL with kp NULL) */
} mr_free_motion;

/* M̃ at q into d->M (CRBA) and its tree-sparse LDLᵀ factor into d; MR_ERR_NUMERIC when M̃ is
 * not positive definite */
mr_status mr_free_motion_factor(const mr_model *m, mr_data *d, const mr_free_motion *f,
                                const double *q, mr_error *err);

/* v_f into vf (nv) after mr_free_motion_factor at q: a (nv) receives the free bodies' bias
 * acceleration, b is RNEA(q, v, a) with d->f_ext; without the gyroscopic impulse (the explicit
 * −Δt ω × I_c ω of each free body stays in it: mr_free_flyer_gyroscopic replaces it) */
void mr_free_motion_velocity(const mr_model *m, mr_data *d, const mr_free_motion *f,
                             const double *q, const double *v, double *a, double *vf);

#endif
