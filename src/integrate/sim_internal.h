/* Between the simulator's files (sim.c: creation and the step; control.c: the control and
 * read-out API of control.h) and the scene loader (a simulator made from a scene owns the world
 * compiled for it). */
#ifndef MOREAU_INTEGRATE_SIM_INTERNAL_H
#define MOREAU_INTEGRATE_SIM_INTERNAL_H

#include <stdint.h>

#include "core/arena.h"
#include "integrate/islands.h"
#include "moreau/sim.h"

struct mr_sim {
  const mr_world *w;
  mr_world *owned; /* the world, when the simulator frees it (mr_sim_from_scene) */
  const mr_model *m;
  mr_data *d;
  mr_collision *col;
  mr_contact_assembly as;     /* the whole problem, allocated when islands are off */
  mr_islands *isl;            /* the step's islands */
  int islands;                /* 1 (default): each island solved as its own problem */
  int islands_used;           /* the last step's problem is the islands' */
  mr_assembly_settings as_settings;
  const mr_solver_info *solver;
  mr_solver_settings settings;
  mr_solver_state state;
  mr_arena work;
  int max_contacts;
  int max_rows; /* blocks of 3 rows: contacts, joint limits and point constraints */
  int max_limits;

  double *q, *v;              /* state (nq, nv) */
  double *q_next, *v_next;    /* candidate state of the step (nq, nv) */
  double *tau, *rhs, *dv;     /* nv */
  double *kp, *kd;            /* PD gains over the whole model (nv) */
  double *kp_step, *kd_step;  /* this step's implicit gains: 0 on a dof saturated at its effort */
  double *tau_cmd, *tau_act;  /* commanded torques (nv); last step's actuation torques (nv) */
  double *q_err;              /* q_t ⊖ q per dof (nv), from each robot's slice */
  double *q_target;           /* PD target configuration (nq) */
  mr_force *wrench;           /* user wrenches: world-frame force and torque at each body's
                                 origin (nbodies), applied every step until changed */
  mr_force *contact_wrench;   /* last step's contact wrench on each body, world frame, about
                                 the body origin at the step's start (nbodies) */
  mr_contact_geometry *cg;    /* contacts, then constraints, as the assembly reads them */
  double *lambda, *c;         /* 3 max_rows */
  double *lambda_alt, *c_alt; /* 3 max_rows: the solve without push-out (solve_contacts) */
  double *g_first;            /* 3 max_rows: the first solve's g, while the second is tried */
  uint64_t *keys, *prev_keys; /* contact and constraint identities this and last step */
  int *prev_order;            /* last step's blocks sorted by (key, index), for the look-up */
  double *prev_lambda;        /* last step's forces (3 max_rows) */
  mr_sim_constraint *cons;    /* this step's active constraints (max_rows − max_contacts) */
  mr_sim_constraint *prev_cons;
  mr_vec3 *anchor1, *anchor2; /* the scene constraints' anchors in their bodies' frames */
  int nc, prev_nc;            /* contacts this step, contacts and constraints last step */
  int nk, prev_nk;            /* active constraints (joint limits, points) */

  double t;
  double t_solved;            /* clock of the step once its contact problem is solved (µs) */
  double t_consistency;       /* this step's time in the consistent law (µs) */
  double t_solver;            /* this step's time in mr_solve: solvers and their criterion (µs) */
  double t_impulse;           /* this step's time in the islands' velocity changes (µs) */
  long steps;
  mr_step_stats last;
  mr_sim_warnings warnings;
  struct mr_mpc **mpc; /* [nrobots] locomotion controllers (mpc.h), NULL where none */
};

/* last step's block with this key (the first of equal keys), −1 when none */
int mr_sim_previous_block(const mr_sim *s, uint64_t key);

/* s frees w with itself; w must be the world s was created on */
void mr_sim_adopt_world(mr_sim *s, mr_world *w);

/* the world's initial controls (torques, gains, targets) and no user wrench */
void mr_sim_initial_controls(mr_sim *s);

/* the robots' controllers (mpc_sim.c): created from the world's settings, reset, and run before
 * a step to write the robots' actuation */
mr_status mr_sim_create_controllers(mr_sim *s, mr_error *err);
void mr_sim_free_controllers(mr_sim *s);
void mr_sim_reset_controllers(mr_sim *s);
void mr_sim_run_controllers(mr_sim *s);

/* the step's monotonic clock (µs) */
double mr_sim_clock_us(void);

/* mr_solve with s's solver and settings from an emptied workspace, its wall time (the solver and
 * the registry's criterion) added to the step's solver stage */
mr_status mr_sim_solve(mr_sim *s, const mr_contact_problem *p, mr_solver_state *state,
                       double *lambda, double *c, mr_solver_stats *stats, mr_error *err);

/* a's correction made consistent (contact/consistency.h) for the free velocity vf at a's
 * columns, in s's workspace, its wall time added to the step's consistency stage */
void mr_sim_consistent(mr_sim *s, mr_contact_assembly *a, const double *vf, double band);

#endif
