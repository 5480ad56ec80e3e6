/* Rigid-body dynamics of a model's kinematic tree: forward kinematics, RNEA, CRBA, ABA, the
 * tree-sparse LDLᵀ factorisation of M, Jacobians, energies, centre of mass, and integration on
 * the configuration manifold. Every function writes only into mr_data, which holds all the
 * memory they need (sized once by mr_data_create): none of them allocates.
 *
 * Velocities and accelerations of bodies are spatial motions expressed in the body frame;
 * q and v follow Pinocchio's conventions (DESIGN.md §3). */
#ifndef MOREAU_DYNAMICS_H
#define MOREAU_DYNAMICS_H

#include <stddef.h>
#include <stdint.h>

#include "moreau/model.h"

/* The frame in which a Jacobian or a velocity is expressed. */
typedef enum {
  MR_WORLD,               /* world frame, at the world origin */
  MR_LOCAL,               /* the body's (or frame's) own frame */
  MR_LOCAL_WORLD_ALIGNED  /* at the frame's origin, with the world's axes */
} mr_reference;

/* Everything the dynamics algorithms write. Sizes: nq, nv, nb = nbodies, nf = nframes. */
typedef struct mr_data {
  int nq, nv, nbodies, nframes;
  double *q;         /* configuration used by the last kinematics call (nq) */
  double *v;         /* velocity (nv) */
  double *a;         /* acceleration (nv) */
  double *tau;       /* joint torques (nv) */

  mr_se3 *liMi;      /* body placement in its parent (nb) */
  mr_se3 *oMi;       /* body placement in the world (nb) */
  mr_se3 *oMf;       /* frame placements in the world (nf), after mr_update_frames */
  mr_motion *vb;     /* body spatial velocity, body frame (nb) */
  mr_motion *ab;     /* body spatial acceleration, body frame (nb) */
  mr_force *fb;      /* body spatial force transmitted by its joint, body frame (nb) */
  mr_force *f_ext;   /* external spatial force on each body, body frame (nb); input, default 0 */

  /* M and its factor U are stored by rows over each dof's envelope ("tree-sparse"): row k
   * holds the upper-triangle entries (k, k) … (k, k + row_len[k] − 4) at row_at[k], i.e. dof k
   * and its descendants (contiguous for the depth-first numbering of URDFs; dofs in between that
   * are not descendants hold 0), then 3 zeros read by the four-way products of the factor.
   * Entry (i, k), i ≤ k, is at mr_tri_at(d, i, k). The storage is Σ per tree of its dofs'
   * subtree sizes and 3 per dof (21 + 18 per free body, about n²/2 for a chain of n), never
   * nv² for many trees; mr_mass_dense expands M. */
  double *M;         /* joint-space inertia matrix (CRBA), upper triangle in the row storage */
  double *nle;       /* nonlinear effects b(q, v) = C(q, v) v + g(q) (nv) */
  double *grav;      /* generalized gravity g(q) (nv) */
  double *ddq;       /* forward dynamics result of mr_aba (nv) */
  double *tau_id;    /* inverse dynamics result of mr_rnea (nv) */

  /* tree-sparse LDLᵀ factor of M: M = U D Uᵀ with U unit upper triangular whose sparsity
   * follows the parent-of-dof array (Featherstone, RBDA §6.3) */
  double *U;         /* unit upper triangular, in the row storage of M (diagonal 1) */
  double *D, *Dinv;  /* nv */
  size_t *row_at;    /* start of each dof's row in M and U (nv + 1: the last is their size) */
  int *row_len;      /* length of each dof's row, its 3 trailing zeros included (nv) */
  int *parent_dof;   /* parent of each dof in the tree, -1 at a root (nv) */
  int *nvSubtree;    /* number of dofs in the subtree of each dof, itself included (nv) */

  int singular;      /* count of mr_aba calls that met a joint whose Sᵀ Iᴬ S + armature is not
                        positive definite (massless leaf without armature): q̈ is then NaN */

  void *work;        /* algorithm workspaces (ABA articulated inertias, Jacobian scratch...) */
} mr_data;

/* Allocate a data block for the model; NULL when out of memory. q is set to neutral. */
mr_data *mr_data_create(const mr_model *m);
void mr_data_free(mr_data *d);

/* ---- configuration space ---- */

void mr_neutral(const mr_model *m, double *q);
/* a configuration drawn uniformly within the limits (±π, or ±1 m, where unlimited; a one-sided
 * limit keeps at least π or 1 m beyond its bound; uniform rotations for quaternions); *seed is
 * advanced (deterministic, splitmix64) */
void mr_random_configuration(const mr_model *m, uint64_t *seed, double *q);
/* qout = q ⊕ v dt: exponential map for free-flyer (SE(3)) and spherical (SO(3)) joints */
void mr_integrate(const mr_model *m, const double *q, const double *v, double dt, double *qout);
/* v = q1 ⊖ q0, the velocity that integrates q0 into q1 in unit time */
void mr_difference(const mr_model *m, const double *q0, const double *q1, double *v);
/* renormalize the quaternions of q */
void mr_normalize(const mr_model *m, double *q);

/* ---- kinematics ---- */

/* Placements (and body velocities / accelerations when v / a are non-NULL) of every body.
 * Every algorithm below that takes q also updates d->q, d->liMi and d->oMi; mr_rnea also fills
 * d->vb, d->ab (gravity included: a₀ = −g) and d->fb. The placements are computed once per q:
 * a call at the q of the last placements, bit for bit, reuses d->liMi and d->oMi as they are
 * (so they must not be written by the caller). */
void mr_forward_kinematics(const mr_model *m, mr_data *d, const double *q, const double *v,
                           const double *a);
/* d->oMf from d->oMi */
void mr_update_frames(const mr_model *m, mr_data *d);

/* ---- dynamics ---- */

/* τ = M(q) a + b(q, v) − Σ Jᵢᵀ f_ext,i, into d->tau_id (and returned) */
const double *mr_rnea(const mr_model *m, mr_data *d, const double *q, const double *v,
                      const double *a);
/* b(q, v) into d->nle */
const double *mr_nonlinear_effects(const mr_model *m, mr_data *d, const double *q,
                                   const double *v);
/* g(q) into d->grav */
const double *mr_generalized_gravity(const mr_model *m, mr_data *d, const double *q);
/* M(q) (armature on the diagonal) into d->M, in its row storage (returned) */
const double *mr_crba(const mr_model *m, mr_data *d, const double *q);
/* where entry (i, k), i ≤ k and i an ancestor of k or k itself, of M and U is stored */
static inline size_t mr_tri_at(const mr_data *d, int i, int k) {
  return d->row_at[i] + (size_t)(k - i);
}
/* entry (i, k) of M, in either order; 0 for dofs on different branches */
double mr_mass_entry(const mr_data *d, int i, int k);
/* M as a full row-major nv x nv matrix, both triangles, into out */
void mr_mass_dense(const mr_data *d, double *out);
/* ddq = M⁻¹ (τ − b(q, v) + Σ Jᵢᵀ f_ext,i), into d->ddq (articulated-body algorithm) */
const double *mr_aba(const mr_model *m, mr_data *d, const double *q, const double *v,
                     const double *tau);

/* ---- tree-sparse factorisation of M ---- */

/* Factor d->M (after mr_crba) as U D Uᵀ; MR_ERR_NUMERIC if a pivot is not positive. */
mr_status mr_ldlt_factor(const mr_model *m, mr_data *d, mr_error *err);
/* x ← M⁻¹ x with the factor */
void mr_ldlt_solve(const mr_model *m, const mr_data *d, double *x);
/* The same solve restricted to the dofs listed (ascending), a union of whole kinematic trees:
 * x has nv entries, those outside the list are neither read nor written. Bit for bit the
 * full solve's values on the listed dofs when x is zero elsewhere (the factor does not couple
 * trees), at a cost proportional to the listed trees only. */
void mr_ldlt_solve_dofs(const mr_model *m, const mr_data *d, const int *dofs, int n, double *x);
/* Its second half, x ← U⁻ᵀ D⁻¹ x over the listed dofs (M⁻¹ = U⁻ᵀ D⁻¹ U⁻¹). */
void mr_ldlt_solve_dofs_dut(const mr_model *m, const mr_data *d, const int *dofs, int n,
                            double *x);
/* mr_ldlt_solve_dofs on four right-hand sides at once, interleaved: x4[4k + l] is dof k of
 * right-hand side l (4 nv doubles); each one's result the same as alone, bit for bit */
void mr_ldlt_solve_dofs4(const mr_model *m, const mr_data *d, const int *dofs, int n, double *x4);
/* y = M x with the tree-sparse factor (y and x may not alias) */
void mr_ldlt_mul(const mr_model *m, const mr_data *d, const double *x, double *y);

/* ---- Jacobians ---- */

/* 6 x nv Jacobian (rows: linear then angular) of a frame, after mr_forward_kinematics and
 * mr_update_frames. */
void mr_frame_jacobian(const mr_model *m, mr_data *d, int frame, mr_reference ref, double *J);
/* 6 x nv Jacobian of a body's frame */
void mr_body_jacobian(const mr_model *m, mr_data *d, int body, mr_reference ref, double *J);
/* 3 x nv Jacobian of the world velocity of a point moving with body, the point given in world
 * coordinates (after mr_forward_kinematics): v_point = J v */
void mr_point_jacobian(const mr_model *m, mr_data *d, int body, mr_vec3 point, double *J);
/* The last dof on body's path to the root (its own joint's last, or the nearest ancestor's), −1
 * for the world and bodies fixed to it; the path's dofs follow d->parent_dof from there. */
int mr_body_last_dof(const mr_model *m, int body);
/* The point Jacobian with dof k stored in column col[k] of a 3 x ncols matrix (col NULL: k, and
 * ncols = nv); only the columns of the body's path are written besides the zeroing. */
void mr_point_jacobian_cols(const mr_model *m, mr_data *d, int body, mr_vec3 point,
                            const int *col, int ncols, double *J);
/* The same columns added to J (sign > 0) or subtracted from it (sign < 0), J's other entries
 * left as they are: a relative Jacobian J₁ − J₂ over the two paths alone. */
void mr_point_jacobian_add(const mr_model *m, mr_data *d, int body, mr_vec3 point,
                           const int *col, int ncols, int sign, double *J);
/* The world motion columns (linear then angular velocity at the world origin) of the dofs on the
 * path from dof last to the root, descending: dof dofs[t]'s six entries at cols[6t]; returns
 * their number (0 for last = −1). The velocity of a world point x moving with the path's end body
 * is then v + ω × x per column. */
int mr_path_world_columns(const mr_model *m, mr_data *d, int last, double *cols, int *dofs);

/* ---- energy and centre of mass ---- */

/* ½ vᵀ M v, the rotor (armature) energy included */
double mr_kinetic_energy(const mr_model *m, mr_data *d, const double *q, const double *v);
/* −Σ mᵢ gᵀ cᵢ, i.e. m g z for gravity along −z */
double mr_potential_energy(const mr_model *m, mr_data *d, const double *q);
/* the centre of mass in the world frame */
mr_vec3 mr_center_of_mass(const mr_model *m, mr_data *d, const double *q);

/* ---- analytical derivatives ----
 *
 * Analytical derivatives of the rigid-body dynamics (Carpentier & Mansard, "Analytical
 * derivatives of rigid body dynamics algorithms", RSS 2018), in Pinocchio's conventions:
 *
 *   inverse dynamics  τ = RNEA(q, v, a)          ∂τ/∂q, ∂τ/∂v (and ∂τ/∂a = M)
 *   forward dynamics  q̈ = ABA(q, v, τ)           ∂q̈/∂q = −M⁻¹ ∂τ/∂q |_{a = q̈},
 *                                                 ∂q̈/∂v = −M⁻¹ ∂τ/∂v |_{a = q̈},  ∂q̈/∂τ = M⁻¹.
 *
 * Derivatives with respect to q are taken in the tangent space (nv columns): column k is
 * d/dε at ε = 0 of the function at q ⊕ ε e_k, with ⊕ the exponential map of mr_integrate
 * (free-flyer and spherical joints move by a twist in their local frame). The external forces
 * d->f_ext (body frames, so they turn with their bodies) are included, as in mr_rnea and mr_aba.
 *
 * All matrices are nv x nv, row-major: entry [i * nv + k] is ∂(output i)/∂(input k). Memory is
 * allocated once by mr_derivatives_create; the functions allocate nothing. docs/derivatives.md
 * has the derivation, the accuracy measured against finite differences and the timings. */
typedef struct mr_derivatives {
  int nv;
  double *dtau_dq;   /* ∂τ/∂q of the inverse dynamics (nv x nv) */
  double *dtau_dv;   /* ∂τ/∂v of the inverse dynamics (nv x nv) */
  double *dddq_dq;   /* ∂q̈/∂q of the forward dynamics (nv x nv) */
  double *dddq_dv;   /* ∂q̈/∂v of the forward dynamics (nv x nv) */
  double *dddq_dtau; /* ∂q̈/∂τ = M⁻¹ (nv x nv) */
  void *work;        /* per-body and per-dof workspace */
} mr_derivatives;

/* Memory for the derivatives of a model; NULL when out of memory. */
mr_derivatives *mr_derivatives_create(const mr_model *m);
void mr_derivatives_free(mr_derivatives *dd);

/* ∂τ/∂q and ∂τ/∂v of τ = RNEA(q, v, a) with d->f_ext, into dd->dtau_dq and dd->dtau_dv. Also
 * writes τ into d->tau_id and ∂τ/∂a = M(q) into d->M (its row storage, armature included), and
 * the placements into d->liMi, d->oMi. Cost O(nv · depth). */
void mr_rnea_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                         const double *v, const double *a);

/* ∂q̈/∂q, ∂q̈/∂v and ∂q̈/∂τ of q̈ = ABA(q, v, τ) with d->f_ext, into dd->dddq_*. Also writes q̈
 * into d->ddq, leaves dd->dtau_dq and dd->dtau_dv at a = q̈, d->M and its LDLᵀ factor in d.
 * MR_ERR_NUMERIC (err may be NULL) when M(q) is not positive definite. */
mr_status mr_aba_derivatives(const mr_model *m, mr_data *d, mr_derivatives *dd, const double *q,
                             const double *v, const double *tau, mr_error *err);

#endif
