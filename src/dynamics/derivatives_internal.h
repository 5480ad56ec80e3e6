/* Products with M⁻¹ on whole matrices, shared by the dynamics derivatives and the step
 * derivatives (src/integrate/step_derivatives.c). Both use the tree-sparse factor M = U D Uᵀ
 * left in d by mr_ldlt_factor (which may be of any SPD matrix with M's sparsity, e.g. M plus a
 * diagonal). */
#ifndef MOREAU_DYNAMICS_DERIVATIVES_INTERNAL_H
#define MOREAU_DYNAMICS_DERIVATIVES_INTERNAL_H

#include "moreau/derivatives.h"

/* X ← M⁻¹ X and Y ← M⁻¹ Y for row-major nv x nv X and Y */
void mr_ldlt_solve_rows(const mr_data *d, int nv, double *restrict X, double *restrict Y);
/* X = M⁻¹ (row-major nv x nv) */
void mr_ldlt_inverse_rows(const mr_data *d, int nv, double *restrict X);

/* The active-set system A dλ = B dg of a contact solution (src/contact/contact_derivatives.c):
 * every contact's rows of A and B (3nc x 3nc each) in its mode, the modes into modes (may be
 * NULL) */
void mr_contact_active_set(const mr_contact_problem *p, const double *lambda, const double *c,
                           double tol, double *A, double *B, int *modes);
/* LU of A in place; -1 when a pivot falls to the rounding of A's entries (A singular) */
int mr_active_set_factor(double *A, int n, int *piv);
/* X ← A⁻¹ X for an n x ncols row-major X from the factor (col: n scratch) */
void mr_active_set_solve(const double *LU, int n, const int *piv, double *X, int ncols,
                         double *col);

#endif
