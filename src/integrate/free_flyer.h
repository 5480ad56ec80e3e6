/* Free bodies inside the time step (free_flyer.c): the step works in the velocity
 * u = (centre-of-mass velocity in the world, body angular velocity) of every free body (a free
 * joint whose body carries no other body), with Pinocchio's v = (origin velocity, angular
 * velocity), both in the body frame, at the interface; floating bases of robots keep
 * Pinocchio's semi-implicit Euler and q ⊕ Δt v. docs/physics.md "Free bodies" has the
 * derivation. */
#ifndef MOREAU_INTEGRATE_FREE_FLYER_H
#define MOREAU_INTEGRATE_FREE_FLYER_H

#include "moreau/dynamics.h"

/* 1 when body i is a free body: a free joint whose body carries no other body */
int mr_free_flyer_is_free(const mr_model *m, const mr_data *d, int i);

/* 1 when body i is a free body whose inertia about its centre of mass is not isotropic: the
 * bodies mr_free_flyer_gyroscopic gives an impulse (for the others it leaves v_next and lag) */
int mr_free_flyer_spins(const mr_model *m, const mr_data *d, int i);

/* a (nv): the acceleration Ṫ⁻¹ u of the coordinates v = T⁻¹(q) u at constant u, to pass to
 * mr_rnea so that b − Jᵀ f_ext + M a is the bias in the u coordinates (zero but on free bodies:
 * a_lin = −ω × (v_lin + ω × c), a_ang = 0) */
void mr_free_flyer_bias(const mr_model *m, const mr_data *d, const double *v, double *a);

/* the gyroscopic torque ω × I_c ω of each free body, taken explicitly in v_next = v + Δt M̃⁻¹ r,
 * replaced by the impulse G = (exp(−Δt [ω_m]×) − 1) I_c ω_e, ω_m = (ω_e + ω⁺)/2, ω_e the free
 * velocity without it (an implicit equation in ω⁺, by Newton); needs M̃'s factor in d. x is
 * scratch (nv); lag (nv) receives, at each spinning free body's dofs, G (first three) and the
 * rotation lag ½ K G (last three), K the angular block of M̃⁻¹, for mr_free_flyer_integrate */
void mr_free_flyer_gyroscopic(const mr_model *m, const mr_data *d, const double *v, double dt,
                              double *v_next, double *x, double *lag);

/* after the contact and constraint impulses' velocity change dv (nv) has been added to v_next:
 * each spinning free body that dv moves gets G recomputed on its whole momentum, the impulses
 * included (ω_e the velocity with them, without G), v_next and lag updated; x is scratch (nv) */
void mr_free_flyer_impulse_gyroscopic(const mr_model *m, const mr_data *d, double dt,
                                      const double *dv, double *v_next, double *x, double *lag);

/* q_next = q ⊕ Δt w for every joint but the free ones, whose centre of mass moves by Δt times
 * its world velocity u_lin = R (w_lin + ω × c) and whose rotation is R exp(Δt (ω − lag)); w
 * (v_next, the step's velocity in the frame of q) is converted in place to Pinocchio's velocity
 * at q_next */
void mr_free_flyer_integrate(const mr_model *m, const mr_data *d, const double *q,
                             double *v_next, const double *lag, double dt, double *q_next);

#endif
