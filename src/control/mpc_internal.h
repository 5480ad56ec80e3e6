/* The MPC controller's object (mpc.c) as the simulator drives it (sim.c, mpc_sim.c). */
#ifndef MOREAU_INTEGRATE_MPC_INTERNAL_H
#define MOREAU_INTEGRATE_MPC_INTERNAL_H

#include "moreau/mpc.h"
#include "moreau/world.h"

typedef struct mr_mpc mr_mpc;

/* a controller of world robot r (settings checked, foot frames found), or NULL with err */
mr_mpc *mr_mpc_create(const mr_world *w, int r, const mr_mpc_settings *c, mr_error *err);
void mr_mpc_free(mr_mpc *c);
/* forget the gait's history: the controller restarts from configuration q at time t */
void mr_mpc_reset(mr_mpc *c, const double *q, double t);
void mr_mpc_set_velocity(mr_mpc *c, const double velocity[3]);
const mr_mpc_status *mr_mpc_get_status(const mr_mpc *c);
/* The actuation of the robot at time t in state (q, v) given the last step's contact wrenches
 * per body (world frame; NULL: feet in contact as scheduled): its slices of τ_cmd, q_t, k_p, k_d
 * (whole-model arrays). Returns 1 at the step a fall is first detected, else 0. */
int mr_mpc_control(mr_mpc *c, double t, const double *q, const double *v, const mr_force *wrench,
                   double *tau_cmd, double *q_target, double *kp, double *kd);

#endif
