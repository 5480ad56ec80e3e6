/* A locomotion controller for a floating-base robot with point feet (a quadruped such as
 * Solo-12): convex model-predictive control of its centroidal motion (docs/mpc.md).
 *
 * Every mpc.dt seconds the controller predicts the base as a single rigid body of the robot's
 * mass and composite inertia over a horizon of mpc.horizon seconds, linearised about the
 * reference (the commanded velocity), and chooses the feet's ground forces, each in its friction
 * cone, by a cone-constrained QP solved by an interior-point method. Feet follow a periodic
 * gait: a stance foot's planned force f becomes joint torques τ = −Jᵀ f; a swing foot follows a
 * smooth curve from its lift-off point to a foothold chosen by a Raibert heuristic, by inverse
 * kinematics and the joint PD. The controller writes the robot's commanded torques, PD targets and
 * gains (control.h) before each step; its memory is allocated when it is attached, none in the
 * step.
 *
 * A fall — the trunk or a thigh bearing on the ground for 0.3 s without a break, or the base
 * tilted more than 60° — is counted once in the simulator's warnings (falls) and kept in the
 * controller's status. Each foot's planned normal force is at most max_load times the robot's
 * weight. */
#ifndef MOREAU_MPC_H
#define MOREAU_MPC_H

#include "moreau/sim.h"

#define MR_MPC_FEET 4

typedef enum {
  MR_GAIT_TROT = 0, /* diagonal pairs (feet 0, 3) and (1, 2) alternate */
  MR_GAIT_STAND     /* every foot in stance: the MPC balances the base */
} mr_gait;

typedef struct mr_mpc_settings {
  double velocity[3]; /* commanded forward, sideways velocity (m/s, heading frame) and yaw rate
                         (rad/s) */
  mr_gait gait;
  double period;        /* gait period, s (default 0.2) */
  double duty;          /* fraction of the period a foot is in stance, (0, 1) (0.5) */
  double step_height;   /* swing apex above the lift-off height, m (0.05) */
  double horizon;       /* prediction horizon, s (0.3) */
  double dt;            /* MPC step and re-solve interval, s (0.025) */
  double mu;            /* friction coefficient of the MPC's cones (0.5) */
  double kp, kd;        /* swing-leg joint gains, N m/rad and N m s/rad (20, 0.3) */
  double stance_kd;     /* stance-leg joint damping, N m s/rad (0.02) */
  double torque_limit;  /* bound on a stance joint's commanded torque, N m (2.7: Solo-12's
                           actuators, 0.025 N m/A x 12 A x 9:1 gearing) */
  double raibert_gain;  /* foothold correction per unit velocity error, s (0.15: about √(h/g)) */
  double integral_gain; /* integral action on the velocity error: the command the plan uses
                           grows by this times the error per second, 1/s (1; 0 = off) */
  int max_iter;         /* interior-point iterations per solve at most (50) */
  char feet[MR_MPC_FEET][MR_NAME_MAX]; /* the robot's foot frames (FL_FOOT, FR_FOOT, HL_FOOT,
                                          HR_FOOT), without the robot prefix */
  double max_load; /* upper bound on a foot's planned normal force, in units of the robot's
                      weight m g (1.5); a planted foot's is also at most what its leg gives
                      within torque_limit at its posture */
} mr_mpc_settings;

typedef struct {
  int fallen;         /* 1 after a fall */
  double fall_time;   /* s, when fallen */
  long solves;        /* QP solves since the last reset */
  long not_converged; /* solves that stopped short of the QP's tolerance */
  int iterations;     /* interior-point iterations of the last solve */
  int max_iterations; /* most interior-point iterations of a solve since the last reset */
  double kkt;         /* KKT residual of the last solve (mpc_qp.h) */
  double height;      /* base height above the ground estimate, m */
  double tilt;        /* angle of the base's z axis from the vertical, rad */
  double qp_time;     /* thread CPU time of the last QP solve, s */
} mr_mpc_status;

mr_mpc_settings mr_mpc_settings_default(void);
/* MR_ERR_INVALID naming the first bad field (non-finite, period ≤ 0, duty outside (0, 1),
 * horizon < dt, mu < 0, a negative gain, ...). */
mr_status mr_mpc_settings_check(const mr_mpc_settings *c, mr_error *err);

/* Attach (or replace) robot's MPC controller with settings c (allocates: call it between steps,
 * not in a control loop). The robot must have a floating base and the four foot frames. The
 * robots' MPCs are together the simulator's controller (sim.h, mr_sim_set_controller): attaching
 * one replaces another kind of controller, and attaching another kind removes them. */
mr_status mr_sim_set_mpc(mr_sim *s, const char *robot, const mr_mpc_settings *c, mr_error *err);
/* The world's hook for a robot whose scene declares `controller: {type: mpc}`
 * (mr_world_robot.controller_attach): mr_sim_set_mpc with the world's settings. */
mr_status mr_mpc_attach_declared(mr_sim *s, int robot, mr_error *err);
/* Change the commanded velocity (vx, vy, yaw rate) of robot's controller from the next step. */
mr_status mr_sim_set_mpc_velocity(mr_sim *s, const char *robot, const double velocity[3],
                                  mr_error *err);
/* The status of robot's controller; MR_ERR_INVALID when it has none. */
mr_status mr_sim_get_mpc_status(const mr_sim *s, const char *robot, mr_mpc_status *out,
                                mr_error *err);

#endif
