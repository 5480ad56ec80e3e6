/* The contact modes of an active set, shared by the default solver's Newton stages
 * (hybrid.c), its lattice polish (polish.c) and the derivative of a contact solution
 * (contact_derivatives.c, and through it the step derivatives): one mode per contact
 * (mr_contact_mode, contact.h: separated, sticking, sliding; a bilateral constraint is
 * sticking), three rules for deciding it — each suited to where it is asked — and the
 * active-set system A dλ = B dg with its factorisation. */
#ifndef MOREAU_CONTACT_ACTIVE_SET_H
#define MOREAU_CONTACT_ACTIVE_SET_H

#include "moreau/contact.h"

/* the mode at a point (λ, c) within tol (force and velocity units): separated when λ_N <= tol,
 * sliding when ‖c_T‖ > tol or μ = 0, sticking otherwise (the derivatives' rule) */
mr_contact_mode mr_contact_mode_at(const mr_contact_problem *p, int i, const double *lambda,
                                   const double *c, double tol);

/* the mode from the natural map of the NCP at an iterate (λ, c): with h = 1/(G + R)_NN of the
 * contact (0 when that is not positive) and x = λ − h (c + Γ(c)), Γ(c) = (0, 0, μ‖c_T‖),
 * Π_K(x) = λ at a solution, and the piece of the projection x falls in is the mode — the polar
 * cone: separated; the interior of K_μ: sticking; otherwise sliding, with the friction
 * direction x_T/‖x_T‖ into dir (0 for μ = 0): the semismooth Newton methods' rule */
mr_contact_mode mr_contact_mode_natural(const mr_contact_problem *p, int i, const double *lambda,
                                        const double *c, double h, double dir[2]);

/* the mode from the force alone: separated at λ = 0 exactly, sliding on the cone's boundary
 * (to a relative 1e-12) or for μ = 0, sticking inside the cone (the lattice polish's rule, for
 * a solution whose λ is already at rounding accuracy) */
mr_contact_mode mr_contact_mode_of_force(const mr_contact_problem *p, int i, const double *lambda);

/* The active-set system A dλ = B dg of a contact solution (3nc x 3nc each, row-major): every
 * contact's rows in its mode_at(tol) (contact_derivatives.c has the equations), the modes
 * into modes (may be NULL) */
void mr_contact_active_set(const mr_contact_problem *p, const double *lambda, const double *c,
                           double tol, double *A, double *B, int *modes);
/* LU of A in place; -1 when a pivot falls to the rounding of A's entries (A singular) */
int mr_active_set_factor(double *A, int n, int *piv);
/* X ← A⁻¹ X for an n x ncols row-major X from the factor (col: n scratch) */
void mr_active_set_solve(const double *LU, int n, const int *piv, double *X, int ncols,
                         double *col);

#endif
