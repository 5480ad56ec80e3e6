/* Controlling a simulator and reading it out: the state (q, v, time), the actuation (commanded
 * torques, PD targets and gains per joint), external wrenches, resets, and what a controller
 * observes (contacts with their forces, body poses, centres of mass, contact wrenches per body).
 *
 * Every change made between two calls of mr_sim_step takes effect at the next step; nothing is
 * cached across it. The arrays returned by mr_sim_qpos ... mr_sim_ctrl_kd are views into the
 * simulator (valid until mr_sim_free): write them in place, e.g. from a numpy array over the
 * same memory. The setters check their values and report errors instead.
 *
 * The actuation of a robot's 1-dof joint k (a dof index, into v) over a step of Δt is
 *   τ_k = τ_cmd,k + k_p,k (q_t,k − q⁺_k) − k_d,k v⁺_k,
 * integrated implicitly (sim.h) and clamped to the URDF effort limit; q_t is the target
 * (plus the world's pd.sine offsets, if any). Units: N m and rad for revolute joints, N and m for
 * prismatic ones; gains N m/rad and N m s/rad (N/m, N s/m). Gains and targets act on robots'
 * 1-dof joints only: the free-flyer and spherical joints are actuated by torques alone.
 *
 * Frames: q and v follow DESIGN.md §3 — a free-flyer's q is [x, y, z, qx, qy, qz, qw] (world
 * position of the base origin and orientation), its v is [linear, angular] velocity of the base
 * expressed in the base's own (local) frame. Wrenches, poses, COM and contact forces are in the
 * world frame. */
#ifndef MOREAU_CONTROL_H
#define MOREAU_CONTROL_H

#include "moreau/sim.h"

/* ---- state ---- */

/* Views of the configuration q [nq] and velocity v [nv]: written values are the state the next
 * step starts from (a quaternion written unnormalised is used as written; mr_sim_set_state
 * normalises). */
double *mr_sim_qpos(mr_sim *s);
double *mr_sim_qvel(mr_sim *s);
/* Set q [nq] and/or v [nv] (either may be NULL: kept); quaternions are normalised.
 * MR_ERR_INVALID (state unchanged) on a non-finite entry or a zero quaternion. */
mr_status mr_sim_set_state(mr_sim *s, const double *q, const double *v, mr_error *err);
/* Set the simulated time (s): the world's forces and pd.sine targets are functions of it. */
void mr_sim_set_time(mr_sim *s, double t);

/* ---- actuation, whole vectors ---- */

/* Views of the commanded torques τ_cmd [nv], the PD target configuration q_t [nq] and the gains
 * k_p, k_d [nv]. Entries of dofs that are not a robot's 1-dof joint: τ_cmd acts on every dof;
 * k_p, k_d must stay 0 there (mr_sim_set_joint_gains refuses them). */
double *mr_sim_ctrl_torque(mr_sim *s);
double *mr_sim_ctrl_target(mr_sim *s);
double *mr_sim_ctrl_kp(mr_sim *s);
double *mr_sim_ctrl_kd(mr_sim *s);

/* ---- actuation, per joint ---- */

/* By dof index (mr_world_joint_dof gives it from a name). The torque may be set on any dof;
 * targets and gains on a robot's 1-dof joint. MR_ERR_INVALID names the dof and the value on
 * an index out of range, a dof of another joint type, a non-finite value or a negative gain. */
mr_status mr_sim_set_joint_torque(mr_sim *s, int dof, double tau, mr_error *err);
mr_status mr_sim_set_joint_target(mr_sim *s, int dof, double q, mr_error *err);
mr_status mr_sim_set_joint_gains(mr_sim *s, int dof, double kp, double kd, mr_error *err);
/* The same by joint name ("ROBOT/JOINT"); an unknown name is an error naming it. */
mr_status mr_sim_set_joint_torque_named(mr_sim *s, const char *joint, double tau, mr_error *err);
mr_status mr_sim_set_joint_target_named(mr_sim *s, const char *joint, double q, mr_error *err);
mr_status mr_sim_set_joint_gains_named(mr_sim *s, const char *joint, double kp, double kd,
                                       mr_error *err);

/* ---- external wrenches ---- */

/* A world-frame force (N) and torque (N m) applied at the origin of body (a model body index,
 * > 0) at every step until changed (it adds to the world's scheduled forces). */
mr_status mr_sim_set_wrench(mr_sim *s, int body, mr_vec3 force, mr_vec3 torque, mr_error *err);
/* Remove every wrench set with mr_sim_set_wrench. */
void mr_sim_clear_wrenches(mr_sim *s);

/* ---- resets ---- */

/* mr_sim_reset (sim.h), then put robot `robot` in its SRDF posture `posture`: its q and PD
 * targets become the posture's configuration, its v zero. MR_ERR_INVALID (nothing changed)
 * names the robot or posture and lists the available ones when either is unknown. */
mr_status mr_sim_reset_posture(mr_sim *s, const char *robot, const char *posture, mr_error *err);

/* ---- read-outs ---- */

/* A contact of the last step with its force. */
typedef struct {
  int geom[2];      /* geometry indices (first, second) */
  int body[2];      /* their bodies */
  mr_vec3 point;    /* world point (m), midway between the surfaces at the step's start */
  mr_vec3 normal;   /* world unit normal, from geom[1] towards geom[0] */
  double phi;       /* signed distance at the step's start (m), negative in penetration */
  double lambda[3]; /* force in the contact frame (t₁, t₂, n), N; λ_N ≥ 0 */
  mr_vec3 force;    /* the same force in the world frame, on body[0] (body[1] gets −force), N */
} mr_contact_force;

/* The last step's contacts: writes min(n, cap) into out (out may be NULL when cap is 0) and
 * returns n, the number of contacts. */
int mr_sim_contact_forces(const mr_sim *s, mr_contact_force *out, int cap);
/* The last step's contact wrench on every body [nbodies]: the sum of its contacts' world-frame
 * forces (N) and their moments (N m) about the body's origin at the step's start. */
const mr_force *mr_sim_contact_wrenches(const mr_sim *s);
/* The world placement of every body at the current state [nbodies] (forward kinematics at q;
 * valid until the next call or step). */
const mr_se3 *mr_sim_body_poses(mr_sim *s);
/* The centre of mass of robot r (r = -1: of every body) at the current state, world frame (m). */
mr_vec3 mr_sim_com(mr_sim *s, int r);

/* ---- checked steps (src/integrate/sim_check.c) ---- */

/* Check what the next step reads and a caller may have written in place through control.h's
 * views: q, v, the commanded torques and the PD targets finite, every quaternion of q of norm
 * above 1e-12, the gains finite, ≥ 0 and 0 on dofs that are not a 1-dof joint's.
 * MR_ERR_INVALID names the array, the entry, its joint and the value. */
mr_status mr_sim_check_inputs(mr_sim *s, mr_error *err);
/* mr_sim_check_inputs, then n steps (stopping at the first failure, whose error it returns).
 * MR_ERR_INVALID for n < 0; n = 0 only checks. */
mr_status mr_sim_step_n(mr_sim *s, long n, mr_error *err);
/* The wrench set on body with mr_sim_set_wrench (zero when none, or after mr_sim_reset or
 * mr_sim_clear_wrenches): world-frame force (N) and torque (N m) at the body origin.
 * MR_ERR_INVALID when body is not in [1, nbodies). */
mr_status mr_sim_get_wrench(mr_sim *s, int body, mr_vec3 *force, mr_vec3 *torque, mr_error *err);

#endif
