/* Actuators: one scalar control per actuator of an MJCF model (world.h, mr_world_actuator;
 * docs/mjcf.md), mapped onto the simulator's controls (control.h): commanded torque, PD target
 * and gains per dof.
 *
 * For controls u (each clamped to its ctrlrange when ctrllimited, as MuJoCo does), every dof k
 * an actuator or a joint spring acts on gets
 *   τ_cmd,k = Σ over actuators without a length term (motors, velocity servos) of arm_k F0,
 *   k_p,k   = Σ −bias[1] arm_k² + spring_k,
 *   k_d,k   = Σ −bias[2] arm_k²,
 *   q_t,k   = (Σ over actuators with a length term (position servos) of arm_k F0
 *              + spring_k spring_ref) / k_p,k          (left unchanged when k_p,k = 0),
 * with F0 = gain u + bias[0]; i.e. a motor gives τ = gear u, a position servo k_p = kp gear² and
 * q_t = u / gear, a velocity servo τ = gear kv u and k_d = kv gear², a joint spring k_p = k and
 * q_t = springref; both servo terms and springs are then integrated implicitly (sim.h). */
#ifndef MOREAU_ACTUATOR_H
#define MOREAU_ACTUATOR_H

#include "moreau/sim.h"

/* (the world's actuator names, keyframes and mr_world_actuation are declared in world.h) */

/* Set the controls ctrl [nactuators] of the simulator's world: writes the commanded torques,
 * PD targets and gains of the actuated and sprung dofs through the control API (control.h),
 * effective from the next step. MR_ERR_INVALID (nothing changed) names the actuator of a
 * non-finite control. */
mr_status mr_sim_set_ctrl(mr_sim *s, const double *ctrl, mr_error *err);

/* mr_sim_reset (sim.h), then the keyframe's robot state, the time and the controls (the
 * keyframe's for its robot's actuators, zero for the others). MR_ERR_INVALID (nothing changed)
 * lists the keyframes when the name is unknown. */
mr_status mr_sim_reset_keyframe(mr_sim *s, const char *name, mr_error *err);

#endif
