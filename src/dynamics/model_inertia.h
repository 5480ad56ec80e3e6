/* Physical validity of rotational inertias and of a model's degrees of freedom (used by the
 * URDF loader; see model_inertia.c and docs/urdf.md, "Inertia policy"). */
#ifndef MOREAU_DYNAMICS_MODEL_INERTIA_H
#define MOREAU_DYNAMICS_MODEL_INERTIA_H

#include <stddef.h>

#include "moreau/model.h"

/* eigenvalues of the symmetric I, ascending, in lam; the columns of R the eigenvectors
 * (I = R diag(lam) Rᵀ) */
void mr_inertia_principal(const mr_mat3 *I, double lam[3], mr_mat3 *R);

/* the nearest tensor in Frobenius norm to the symmetric I whose principal moments satisfy the
 * triangle inequalities A + B >= C (hence A, B, C >= 0); lam_out gets its principal moments */
mr_mat3 mr_inertia_nearest_physical(const mr_mat3 *I, double lam_out[3]);

/* Whether I is physical up to round-off: positive semi-definite (smallest principal moment >=
 * -tol) and A + B >= C for its principal moments A <= B <= C within tol + 1e-6 C (seven
 * significant digits, what files print), tol = 1e-12 scale (kg m^2; scale: the largest principal
 * moment of the model the tensor belongs to). Returns 1 when physical; otherwise 0 with what
 * (len bytes) saying how it fails, its principal moments and the shortfall. The one rule of the
 * URDF and YAML loaders (docs/urdf.md, "Inertia policy"). */
int mr_inertia_physical(const mr_mat3 *I, double scale, char *what, size_t len);

/* the dofs of m without inertia at the neutral configuration: the pivots D_k of M = Uᵀ D U
 * (eliminating children before parents, so that D_k is the inertia felt along dof k when every
 * descendant dof moves freely) with D_k <= rel · max_j M_jj. Writes the first such dofs into bad
 * (at most cap), returns their number, or -1 when out of memory. */
int mr_model_dofs_without_inertia(const mr_model *m, double rel, int *bad, int cap);

#endif
