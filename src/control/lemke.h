/* Lemke's complementary pivoting method for the linear complementarity problem
 *
 *   w = Q z + q,   z ≥ 0,   w ≥ 0,   zᵀ w = 0,
 *
 * with covering vector 1 (Cottle, Pang & Stone, "The Linear Complementarity Problem", §4.4). It
 * terminates with a solution for the contact LCPs of Stewart & Trinkle (1996); on other matrices
 * it may end on a secondary ray, reported as MR_ERR_NUMERIC. Dense tableau, O(m²) per pivot; the
 * tableau comes from an arena (no malloc). Used by the QPCC solver for its mixed-LCP initial
 * guess. */
#ifndef MOREAU_CONTACT_LEMKE_H
#define MOREAU_CONTACT_LEMKE_H

#include <stddef.h>

#include "core/arena.h"
#include "moreau/error.h"

/* arena bytes mr_lemke_solve needs for an m x m problem */
size_t mr_lemke_bytes(int m);

/* Solve; Q is m x m row-major. z, w (m each) receive the solution. Returns MR_OK, MR_ERR_NOMEM
 * (arena too small), MR_ERR_NUMERIC (ray termination: no solution found), or MR_ERR_LIMIT (more
 * than max_pivots pivots; 0 means 50 m + 50). *pivots (may be NULL) receives the count. */
mr_status mr_lemke_solve(const double *Q, const double *q, int m, int max_pivots, mr_arena *arena,
                         double *z, double *w, int *pivots, mr_error *err);

#endif
