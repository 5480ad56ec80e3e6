/* Lemke's complementary pivoting method for the linear complementarity problem
 *
 *   w = Q z + q,   z ≥ 0,   w ≥ 0,   zᵀ w = 0,
 *
 * with covering vector 1 (Cottle, Pang & Stone, "The Linear Complementarity Problem", §4.4). It
 * terminates with a solution for the contact LCPs of Stewart & Trinkle (1996) and for Q positive
 * semi-definite when the LCP is feasible; on other matrices it may end on a secondary ray,
 * reported as MR_ERR_NUMERIC. Degenerate problems (ties in the ratio test: contacts carrying no
 * force, duplicated contacts) cannot make it cycle: ties are broken by the lexicographic
 * minimum-ratio rule (§4.9), which is Lemke's method on the perturbed q + (ε, ε², …, εᵐ) and
 * visits no basis twice; max_pivots is a second guard. Dense tableau, O(m²) per pivot, at most
 * a few m pivots in practice (O(m³) per solve); the tableau comes from an arena (no malloc).
 * Used by the lcp-lemke solver (lcp_lemke.c) and the QPCC's mixed-LCP initial guess. */
#ifndef MOREAU_CONTACT_LEMKE_H
#define MOREAU_CONTACT_LEMKE_H

#include <stddef.h>

#include "core/arena.h"
#include "moreau/error.h"

/* arena bytes mr_lemke_solve needs for an m x m problem */
size_t mr_lemke_bytes(int m);

/* Solve; Q is m x m row-major. z, w (m each) receive the solution. Returns MR_OK, MR_ERR_NOMEM
 * (arena too small), MR_ERR_NUMERIC (ray termination: no solution found), or MR_ERR_LIMIT (more
 * than max_pivots pivots; 0 means 50 m + 50); on the last two z, w hold the last basis's point,
 * which solves the LCP of q + z₀ 1 (*z0, may be NULL, receives z₀; 0 on success). *pivots (may
 * be NULL) receives the count. */
mr_status mr_lemke_solve(const double *Q, const double *q, int m, int max_pivots, mr_arena *arena,
                         double *z, double *w, int *pivots, double *z0, mr_error *err);

#endif
