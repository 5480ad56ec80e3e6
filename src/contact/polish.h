/* The lattice polish of an NCP iterate whose exact criterion is limited by the representation
 * of λ in double precision (polish.c, docs/solvers.md "Accuracy criteria"). */
#ifndef MOREAU_CONTACT_POLISH_H
#define MOREAU_CONTACT_POLISH_H

#include <stddef.h>

#include "moreau/contact.h"

struct mr_arena_s;

/* ratio of ε_abs to the criterion's one-ulp resolution below which the polish runs */
#define MR_POLISH_TRIGGER 8.0
/* most λ entries moved (generators of the lattice); a larger coupled set is left as it is */
#define MR_POLISH_MAX_MOVES 96

/* bytes of work arena the polish takes for nc contacts (at most; it takes less when fewer
 * contacts offend or couple) */
size_t mr_polish_work_size(int nc);

/* When λ (ε_abs e on entry, exact Dot2 criterion) misses eps_abs by less than
 * MR_POLISH_TRIGGER times what a one-ulp move of one entry of λ changes ε_c by, λ is moved
 * by an integer number of ulps per entry, λ + diag(u) z, z the closest vector found by LLL
 * reduction and Babai's nearest plane, from λ and, when that misses eps_abs, from the rounded
 * solution of a continuous (Levenberg–Marquardt) solve of the same equations; a move is kept
 * only when it lowers the exact ε_abs.
 * Needs a dense G; leaves λ unchanged without one, on too little work arena, on more than
 * MR_POLISH_MAX_MOVES moved entries or on an overflow of the integer basis. c ← (G + R) λ + g
 * (Dot2) on return. Returns ε_abs at the returned λ. */
double mr_polish_lattice(const mr_contact_problem *p, double eps_abs, struct mr_arena_s *work,
                         double *lambda, double *c, double e);

#endif
