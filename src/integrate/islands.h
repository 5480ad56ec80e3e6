/* Islands of the step (islands.c): the kinematic trees joined by this step's contacts, joint
 * limits, point constraints and mimic couplings (the world and bodies fixed to it join nothing),
 * each assembled over its own dofs and solved as its own problem. */
#ifndef MOREAU_INTEGRATE_ISLANDS_H
#define MOREAU_INTEGRATE_ISLANDS_H

#include "moreau/contact.h"
#include "moreau/model.h"

struct mr_sim;
typedef struct mr_islands mr_islands;

/* the model's trees and buffers linear in the model and in max_rows blocks; NULL when out of
 * memory */
mr_islands *mr_islands_create(const mr_model *m, int max_rows);
void mr_islands_free(mr_islands *is);

/* reserve the pools for every block at once when that is small (islands.c), so that stepping
 * never allocates; otherwise they grow with the islands met */
mr_status mr_islands_reserve(struct mr_sim *s, mr_error *err);
/* Size the pools for the islands of the n blocks in s->cg (the initial state's), half again;
 * they only grow. */
mr_status mr_islands_reserve_present(struct mr_sim *s, int n, mr_error *err);

/* forget the solver states kept for warm starts and the islands they belong to */
void mr_islands_invalidate(mr_islands *is);

/* Group s's blocks (s->cg, s->nc + s->nk of them) into islands, assemble and solve each with
 * s's solver, warm started from s->lambda; λ and c in s's block order, s->dv the velocity
 * change. An island whose blocks (their keys, in order) are those of one of last step's
 * islands keeps that island's solver state (y, ρ, factor), wherever either is numbered; the
 * others start fresh. same: every block is last step's, in order (the islands are then last
 * step's). stats: the largest iteration count and criterion, converged when every island is, the
 * summed solver time. The pools grow (allocation) only when this step needs more than any
 * step before. */
mr_status mr_islands_solve(struct mr_sim *s, int same, mr_solver_stats *stats, mr_error *err);

/* the number of islands of the last solve */
int mr_islands_count(const mr_islands *is);
/* the last solve's solver iterations summed over its islands */
int mr_islands_iterations(const mr_islands *is);

/* island k's problem of the last solve (block-sparse G when tree-sparse), and its blocks'
 * indices in the step's block order (nc of them) */
const mr_contact_problem *mr_islands_island(const mr_islands *is, int k, const int **blocks);

/* the last solve's islands as one problem over its blocks (block-diagonal G), in buffers
 * allocated here when larger than before; NULL when out of memory */
const mr_contact_problem *mr_islands_problem(mr_islands *is, int nblocks, double dt);

#endif
