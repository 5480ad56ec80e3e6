/* Semismooth Newton on the natural map of the NCP (natmap.c), used by ncp-hybrid. Internal to
 * src/contact. */
#ifndef MOREAU_CONTACT_NATMAP_H
#define MOREAU_CONTACT_NATMAP_H

#include "moreau/contact.h"

/* scratch of one Newton run on n = 3nc rows: two n x n matrices, five n-vectors, n pivots */
typedef struct {
  double *J, *LU;             /* generalised Jacobian and its regularised LU factor */
  double *F, *d, *t, *l, *lt; /* residual, direction, scratch, iterate, trial */
  int *piv;
} natmap_ws;

/* F(λ) = λ − Π_K(λ − h (c + Γ(c))) per contact into F (3nc), c = (G + R) λ + g; returns ‖F‖² */
double mr_natmap_residual(const mr_contact_problem *p, const double *lambda, double *c, double *F);

/* At most max_steps Newton steps from best (NCP ε_abs e); best takes every iterate that lowers
 * ε_abs; stops at ε_abs ≤ eps or when the line search fails. Returns the ε_abs of best, c at
 * best; steps counted. ε_abs is the scaled criterion ε̂ (mr_problem_criteria_scaled) with eps and
 * eps_scale (0: ε_abs itself). */
double mr_natmap_newton(const mr_contact_problem *p, double eps, double eps_scale, int max_steps,
                        natmap_ws *w, double *best, double *c, double e, int *steps);

#endif
