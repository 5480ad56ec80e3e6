/* The simulator's state between its files: sim.c (creation, reset, the storage that grows
 * between steps, accessors), step.c (the step's stage list), control.c (the control and
 * read-out API of control.h), sim_derivatives.c (the Jacobians of a step), and the scene loader
 * (a simulator made from a scene owns its world). */
#ifndef MOREAU_INTEGRATE_SIM_INTERNAL_H
#define MOREAU_INTEGRATE_SIM_INTERNAL_H

#include <stdint.h>

#include "integrate/contact_stage.h"
#include "moreau/sim.h"

/* The step's context: every constant a stage reads, filled once from the world when the
 * simulator is created (nothing keeps its own copy or its own default). */
typedef struct {
  double dt, inv_dt;                /* Δt (s) and 1/Δt */
  mr_assembly_settings assembly;    /* Δt, band δ, rest depth d, k_B, restitution threshold */
  double limit_margin;              /* a joint limit enters within this + 2 Δt |v| (rad, m) */
  int speculative;                  /* speculative contacts (mr_collision_set_motion) */
  double accel;                     /* |gravity|: the speculative reach's acceleration bound */
  const mr_solver_info *solver;     /* the registry's solver */
  mr_solver_settings settings;      /* its settings */
  double retry;                     /* a solve above retry × eps_abs is solved again without
                                       push-out; 0: no retry at all (contact_stage.h) */
  int contact_cap;                  /* the world's max_contacts: 0 lets storage grow */
} mr_step_ctx;

struct mr_sim {
  const mr_world *w;
  mr_world *owned; /* the world, when the simulator frees it (mr_sim_from_scene) */
  const mr_model *m;
  mr_data *d;
  mr_collision *col;
  mr_contact_stage *contacts; /* the contact stage: islands, their memory, solver states */
  int islands;                /* 1 (default): each island solved as its own problem */
  int time_stages;            /* 1: the step's stages timed (mr_sim_time_stages; default 0) */
  mr_step_ctx ctx;
  int max_contacts; /* contacts the storage holds now (grows between steps) */
  int max_limits;   /* 1-dof joints whose limits may enter the problem */
  int max_rows;     /* blocks of 3 rows the storage holds: contacts, limits, constraints */

  double *q, *v;              /* state (nq, nv) */
  double *q_done, *v_done;    /* the state the last step ended in (nq, nv), for its energies */
  int energy_pending;         /* last.kinetic and last.potential not computed yet: mr_sim_last
                                 fills them from q_done, v_done on its first call after a step */
  double *q_next, *v_next;    /* candidate state of the step (nq, nv) */
  double *tau, *lag, *dv;     /* nv: explicit torques; the free bodies' gyroscopic record
                                 (free_flyer.h); scratch, then the contacts' velocity change */
  double *kp, *kd;            /* PD gains over the whole model (nv) */
  double *kp_step, *kd_step;  /* this step's implicit gains: 0 on a dof saturated at its effort */
  double *tau_cmd, *tau_act;  /* commanded torques (nv); last step's actuation torques (nv) */
  double *q_err;              /* q_t ⊖ q per dof (nv), from each robot's slice */
  double *q_target;           /* PD target configuration (nq) */
  double *accel;              /* the free bodies' bias acceleration (nv, free_motion.h) */
  mr_force *wrench;           /* user wrenches: world-frame force and torque at each body's
                                 origin (nbodies), applied every step until changed */
  mr_force *contact_wrench;   /* last step's contact wrench on each body, world frame, about
                                 the body origin at the step's start (nbodies) */
  /* per block (max_rows): contacts, then constraints, as the assembly reads them */
  mr_contact_geometry *cg;
  double *lambda, *c;         /* 3 max_rows */
  uint64_t *keys, *prev_keys; /* contact and constraint identities this and last step */
  int *prev_index;            /* per block, last step's block of its key, −1 none */
  int *prev_order;            /* last step's blocks sorted by (key, index), for the look-up */
  int prev_distinct;          /* 1 when last step's keys were all distinct */
  double *prev_lambda;        /* last step's forces (3 max_rows) */
  double *rebound;            /* per block, the rebound speed its impact defers to the next
                                 step (m/s, 0 none; max_rows) */
  double *prev_rebound;       /* last step's, read through prev_index (max_rows) */
  mr_contact *prev_contacts;  /* last step's contacts (max_contacts) */
  mr_sim_constraint *cons;    /* this step's active constraints (max_rows) */
  mr_sim_constraint *prev_cons;
  mr_vec3 *anchor1, *anchor2; /* the scene constraints' anchors in their bodies' frames */
  int nc, prev_nc;            /* contacts this step, contacts and constraints last step */
  int nk, prev_nk;            /* active constraints (joint limits, points, couplings) */

  double t;
  long steps;
  mr_step_stats last;
  mr_sim_warnings warnings;
  mr_controller controller; /* attached by the layer above (control NULL: none) */
};

/* s frees w with itself; w must be the world s was created on */
void mr_sim_adopt_world(mr_sim *s, mr_world *w);

/* the world's initial controls (torques, gains, targets) and no user wrench */
void mr_sim_initial_controls(mr_sim *s);

/* The contacts of the current state into the collision module, and room for them and for the
 * step's blocks: kinematics at (q, v), detection (speculative when the context says so), the
 * storage grown when the contacts exceed any met before (the only place the simulator grows
 * memory after its creation, counted in warnings.storage_grown). *t_kinematics, when given,
 * receives the clock after the kinematics. */
mr_status mr_sim_detect(mr_sim *s, double *t_kinematics, mr_error *err);

/* the step's blocks (blocks.c): the contacts detected, then joint limits, point constraints and
 * mimic couplings, each warm started from last step's block of the same identity; s->nc, s->nk
 * (limits read s->v_next: gather after the free velocity) */
void mr_sim_gather_blocks(mr_sim *s);
/* the dofs of m with joint friction (each a box block every step) */
int mr_sim_friction_dofs(const mr_model *m);
/* 1 when this step's blocks are last step's, in the same order */
int mr_sim_same_blocks(const mr_sim *s);
/* keep this step's blocks, contacts and forces for the next step's warm start and read-outs */
void mr_sim_remember_blocks(mr_sim *s);

/* room in the contact stage for the step's blocks (grows only past any step before) */
mr_status mr_sim_reserve_islands(mr_sim *s, mr_error *err);

#endif
