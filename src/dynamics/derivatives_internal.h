/* Products with M⁻¹ on whole matrices, shared by the dynamics derivatives and the step
 * derivatives (src/integrate/step_derivatives.c). Both use the tree-sparse factor M = U D Uᵀ
 * left in d by mr_ldlt_factor (which may be of any SPD matrix with M's sparsity, e.g. M plus a
 * diagonal). */
#ifndef MOREAU_DYNAMICS_DERIVATIVES_INTERNAL_H
#define MOREAU_DYNAMICS_DERIVATIVES_INTERNAL_H

#include "moreau/dynamics.h"

/* X ← M⁻¹ X and Y ← M⁻¹ Y for row-major nv x nv X and Y */
void mr_ldlt_solve_rows(const mr_data *d, int nv, double *restrict X, double *restrict Y);
/* X = M⁻¹ (row-major nv x nv) */
void mr_ldlt_inverse_rows(const mr_data *d, int nv, double *restrict X);

#endif
