/* The stick/separate mode search of ncp-hybrid's stage 5b (modes.c, docs/solvers.md "The
 * crushed stack: solutions exist, and the mode search"). */
#ifndef MOREAU_CONTACT_MODES_H
#define MOREAU_CONTACT_MODES_H

#include "moreau/contact.h"

struct mr_arena_s;

/* ncp-hybrid searches only when its other stages end above this many times eps_abs: a wrong
 * active set, far from any solution (not the last digits of one, which the lattice polish and
 * the Newton stages handle, and which a new start would lose) */
#define MR_MODES_TRIGGER 1e3
/* the most contacts searched (2^nc modes at most) */
#define MR_MODES_MAX_NC 12
/* the most modes tried, fewest separated contacts first */
#define MR_MODES_MAX_TRIED 256
/* alternating projections per mode for the internal forces */
#define MR_MODES_POCS 400
/* refinement steps of the sticking equations at the point found */
#define MR_MODES_REFINE 3

/* Search the assignments of the contacts to sticking (c⁽ⁱ⁾ = 0, λ⁽ⁱ⁾ ∈ K_μ) or separated
 * (λ⁽ⁱ⁾ = 0, c_N ≥ 0), fewest separated first, for the first one whose equations are
 * consistent and whose internal forces can be placed inside the cones; when its point has a
 * lower NCP criterion than e (the scaled ε̂ with eps_abs and eps_scale, mr_problem_criteria_scaled;
 * ε_abs with eps_scale 0), λ and c (Dot2) take it and *e its value. A and F are n x n scratch (n =
 * 3 nc; NULL: nothing is searched); more scratch (n² + 7n doubles) from work. Returns 1 when λ was
 * replaced, 0 otherwise (no mode found, more than MR_MODES_MAX_NC contacts, too little work). */
int mr_contact_modes(const mr_contact_problem *p, double eps_abs, double eps_scale, double *A,
                     double *F, struct mr_arena_s *work, double *lambda, double *c, double *e);

#endif
