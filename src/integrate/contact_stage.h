/* The contact stage of the step (contact_stage.c): the step's blocks — contacts, joint limits,
 * point constraints, mimic couplings — grouped into islands (islands.h), and for each island,
 * in order: its problem assembled over its dofs (moreau/assembly.h), the consistent law
 * (contact/consistency.h), the solve (the registry's solver, warm started; a solve that failed
 * by far retried once without the push-out of penetrations) and its velocity change
 * Δt M̃⁻¹ Jᵀ λ. Islands off is one island of every block. The stage owns the islands' memory:
 * sized by mr_contact_stage_reserve before the solve (growing only past any step before), so
 * that mr_contact_stage_solve allocates nothing. */
#ifndef MOREAU_INTEGRATE_CONTACT_STAGE_H
#define MOREAU_INTEGRATE_CONTACT_STAGE_H

#include <stdint.h>

#include "core/arena.h"
#include "moreau/assembly.h"
#include "moreau/contact.h"

typedef struct mr_contact_stage mr_contact_stage;

/* the step's monotonic clock (µs; sim.c) */
double mr_sim_clock_us(void);

/* a reading of it for the stage times, 0 while they are not measured (mr_sim_time_stages) */
static inline double mr_stage_clock(int timed) {
  return timed ? mr_sim_clock_us() : 0.0;
}

/* What the stage reads of a step. */
typedef struct {
  const mr_model *m;
  mr_data *d; /* the kinematics at q and M̃'s factor (the free-motion stage's) */
  const mr_assembly_settings *assembly;
  const mr_solver_info *solver;
  const mr_solver_settings *settings;
  double retry; /* a solve left above retry × eps_abs is solved again without push-out; 0: one
                 * run of the solver per island, neither that nor mr_solve's cold retry of a
                 * warm start (a fixed budget: at most max_iter iterations) */
  const mr_contact_geometry *cg; /* the blocks, n of them */
  int n;
  const uint64_t *keys;      /* their identities (n) */
  const uint64_t *prev_keys; /* last step's blocks' identities */
  const int *prev_index;     /* per block, last step's block of the same key, −1 none (n) */
  int same;                  /* every block is last step's, in order */
  long step;                 /* the step's number: islands of step − 1 are "last step's" */
  const double *v, *vf;      /* the velocity at the step's start and the free velocity (nv) */
  int one;                   /* 1: one island of every block (islands off) */
  int timed;                 /* 1: the consistent laws, solves and velocity changes timed
                              * (mr_contact_output's t_*; 0: those stay 0, no clock read) */
  double margin; /* the collision margin (m): a contact detected with its gap beyond it is
                  * speculative, and left out of its island's solve while its free motion closes
                  * less than half of its gap in the step (checked after the solve); INFINITY:
                  * every row solved */
} mr_contact_input;

/* What the stage did. */
typedef struct {
  int islands;        /* islands solved */
  int iterations;     /* the largest iteration count over the islands */
  int iterations_sum; /* summed over the islands */
  int converged;      /* every island converged (1 without blocks) */
  int budget;         /* islands whose solve stopped at its budget (mr_solver_stats.budget) */
  double eps_abs;     /* the largest NCP criterion */
  double solve_us;    /* summed solver time (µs) */
  double t_consistency, t_solver, t_impulse; /* wall time of the consistent laws, the solves (and
                                                their criteria) and the velocity changes (µs),
                                                while in.timed */
} mr_contact_output;

/* a stage for a model and at most max_blocks blocks; NULL when out of memory */
mr_contact_stage *mr_contact_stage_create(const mr_model *m, int max_blocks);
void mr_contact_stage_free(mr_contact_stage *st);
/* forget the solver states kept for warm starts and the islands they belong to */
void mr_contact_stage_invalidate(mr_contact_stage *st);

/* Room for the islands of in's blocks: the pools of J, M⁻¹Jᵀ and G, the block-sparse indices
 * and the solver's workspace. Grows (by half again) only past the largest need met before;
 * *grew is set to 1 when it did. MR_ERR_NOMEM. */
mr_status mr_contact_stage_reserve(mr_contact_stage *st, const mr_contact_input *in, int *grew,
                                   mr_error *err);
/* Room for one island of n blocks over nv dofs, every pair coupled, when its pools stay below
 * `bytes` (a small model reserves its worst case once). 1 when reserved, 0 when too large. */
int mr_contact_stage_reserve_whole(mr_contact_stage *st, const mr_solver_info *solver, int n,
                                   int nv, size_t bytes, mr_error *err);

/* Solve the step's blocks (after mr_contact_stage_reserve for the same blocks): λ is the warm
 * start on entry and the solution on return, c = (G + R) λ + g, both in the blocks' order (3 n);
 * dv (nv) receives the velocity change. Allocates nothing. */
mr_status mr_contact_stage_solve(mr_contact_stage *st, const mr_contact_input *in, double *lambda,
                                 double *c, double *dv, mr_contact_output *out, mr_error *err);

/* the rebound speeds (m/s) the last solve's impacts at Φ_N > 0 defer to the next step, per
 * block in the step's block order (n blocks; mr_contact_assembly.rebound) */
void mr_contact_stage_rebounds(const mr_contact_stage *st, int n, double *rebound);

/* the last solve's islands: their number, island k's problem (block-sparse G when tree-sparse)
 * and its blocks' indices in the step's block order */
int mr_contact_stage_islands(const mr_contact_stage *st);
const mr_contact_problem *mr_contact_stage_island(const mr_contact_stage *st, int k,
                                                  const int **blocks);
/* the last solve's islands as one problem over its blocks (block-diagonal G), in buffers
 * allocated here when larger than before; NULL when out of memory */
const mr_contact_problem *mr_contact_stage_problem(mr_contact_stage *st, int nblocks, double dt);

#endif
