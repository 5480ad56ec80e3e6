/* Derivatives of the simulator's step (the integrate layer): one free-motion step and one step
 * with contacts written from their equations and differentiated with respect to q, v and τ,
 * and the Jacobians of an mr_sim_step taken with the step's own data. The rigid-body dynamics
 * derivatives they go through are in dynamics.h (mr_rnea_derivatives, mr_aba_derivatives) and
 * the derivative of a contact solution in contact.h (mr_contact_solution_derivative).
 * Conventions: nv x nv row-major, q in the tangent space (dynamics.h); docs/derivatives.md. */
#ifndef MOREAU_SIM_DERIVATIVES_H
#define MOREAU_SIM_DERIVATIVES_H

#include <stddef.h>

#include "moreau/assembly.h"
#include "moreau/collision.h"
#include "moreau/contact.h"
#include "moreau/dynamics.h"
#include "moreau/sim.h"

/* ---- one time step of the free motion ----
 *
 * The semi-implicit Euler step of mr_sim without contacts, constraints or effort limits
 * (sim.h's header comment), written here from its equations: with the PD gains k_p, k_d per dof
 * (1-dof joints only), the model's joint damping, e = q_target − q on the dofs with gains,
 *   M̃ = M(q) + Δt diag(k_d + damping) + Δt² diag(k_p),
 *   v⁺ = v + Δt M̃⁻¹ (τ + k_p e − b(q, v) + Σ Jᵀ f_ext − (k_d + damping + Δt k_p) v),
 *   q⁺ = q ⊕ Δt v⁺,
 * with the external forces d->f_ext held in their bodies' frames. */
typedef struct {
  double dt;        /* time step Δt (s), > 0 */
  const double *kp; /* PD stiffness per dof (nv), NULL for none; nonzero on 1-dof joints only */
  const double *kd; /* PD damping per dof (nv), NULL for none; nonzero on 1-dof joints only */
  const double *q_target; /* per dof (nv): the target of the dof's coordinate, read where kp ≠ 0 */
} mr_step_params;

typedef struct mr_step_derivatives {
  int nv;
  double *dvn_dq, *dvn_dv, *dvn_dtau; /* ∂v⁺/∂q (tangent), ∂v⁺/∂v, ∂v⁺/∂τ (nv x nv) */
  double *dqn_dq, *dqn_dv, *dqn_dtau; /* ∂q⁺/∂q, ∂q⁺/∂v, ∂q⁺/∂τ in the tangent space at q⁺ */
  mr_derivatives *rbd;                /* the RNEA derivatives the chain rule goes through */
  double *work;                       /* nv x nv scratch and nv vectors */
} mr_step_derivatives;

/* Memory for the step derivatives of a model; NULL when out of memory. */
mr_step_derivatives *mr_step_derivatives_create(const mr_model *m);
void mr_step_derivatives_free(mr_step_derivatives *sd);

/* One free-motion step from (q, v) under torques tau into q_next, v_next (d->a, d->ddq and
 * d->tau are used as scratch). MR_ERR_INVALID for dt <= 0, gains on a multi-dof joint or k_p
 * without targets; MR_ERR_NUMERIC when M̃ is not positive definite. */
mr_status mr_step_free(const mr_model *m, mr_data *d, const mr_step_params *p, const double *q,
                       const double *v, const double *tau, double *q_next, double *v_next,
                       mr_error *err);

/* The same step (q_next, v_next may be NULL) and its derivatives into sd; ∂x⁺/∂q_target is
 * ∂x⁺/∂τ diag(k_p). Columns in q are along q ⊕ ε e_k; rows of ∂q⁺ are tangent at q⁺ (the δ with
 * q⁺(x + ε e_k) = q⁺ ⊕ ε δ + O(ε²)). */
mr_status mr_step_free_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                   const mr_step_params *p, const double *q, const double *v,
                                   const double *tau, double *q_next, double *v_next,
                                   mr_error *err);

/* ---- the step with contacts ----
 *
 * One step with contacts, v⁺ = v_f + Δt M̃⁻¹ Jᵀ λ, q⁺ = q ⊕ Δt v⁺, with λ the solution of the
 * step's problem (force units: c = (G + R) λ + g, g = (J v_f + cor(Φ)) / Δt, moreau/assembly.h),
 * differentiated with respect to q, v and τ: λ by implicit differentiation of the NCP on its
 * active set (mr_contact_solution_derivative's modes), J, the contact points and the gaps Φ
 * through their dependence on q (docs/derivatives.md):
 * - a contact's point, normal and gap move with both bodies by a local model of each side
 *   (mr_contact_curvature, mr_contact_side): a curved side (sphere, capsule, cylinder side;
 *   radius 0: a vertex or an edge) has its centre of curvature attached to its body, sliding
 *   along the axis of a capsule's or cylinder's side or of a box edge; a flat side (a face, a
 *   halfspace, a heightfield triangle) turns the normal with its body; between two curved sides
 *   the normal is the line of centres. ∂Φ/∂q = J_N exactly; the frame (t₁, t₂, n) is the
 *   collision module's function of n, differentiated;
 * - a point constraint's anchors are attached to their bodies (rows in the world frame), its
 *   Baumgarte term baumgarte (point − point2)/Δt² differentiated with them;
 * - joint limits and joint couplings have constant rows (their gaps are linear in q);
 * - the restitution term e J_N v of a new contact, or a rebound deferred from the step before,
 *   is held fixed (exact for e = 0, the default);
 * - redundant sticking sets (a box on four corners: λ not unique) are solved with the active-set
 *   rows regularised by ρ = 1e-12 max diag G, which leaves Jᵀ dλ, hence dv⁺, unique. */
typedef struct {
  const mr_contact_problem *prob;       /* the step's problem (G, R, μ, kind) */
  const mr_contact_geometry *rows;      /* its prob->nc blocks as assembled (contacts, limits) */
  const double *radius;                 /* per block: body1's side model at the point: its radius
                                           of curvature (0 for a vertex or an edge) or
                                           MR_CONTACT_FLAT (a face); NULL: all 0 */
  const double *J;                      /* 3nc x nv contact Jacobian at q (mr_contact_jacobian) */
  const double *lambda, *c;             /* the solution and c = (G + R) λ + g */
  const mr_assembly_settings *assembly; /* Δt, band, rest depth, k_B: the gap correction */
  double tol;                           /* mode tolerance, as in mr_contact_solution_derivative */
  const struct mr_contact_side *sides;  /* per block: both sides' models (2 per block; when
                                        given, radius is not read); NULL: body1's from radius,
                                        body2 flat (a halfspace, the ground) */
  const double *rest;                   /* per block: the restitution target of the assembly
                                           (mr_contact_assembly.rest), nonzero on an impact; NULL:
                                           an impact decided from J_N v alone */
} mr_contact_step;

/* a side of a contact that is a face: the normal turns with its body */
#define MR_CONTACT_FLAT (-1.0)

/* One side of a contact at its point: its radius of curvature (>= 0; 0 for a vertex or an
 * edge) about a centre attached to its body, or MR_CONTACT_FLAT; axis: the world direction
 * along which the centre slides (a capsule's or cylinder's side, a box edge), zero if none. */
typedef struct mr_contact_side {
  double radius;
  mr_vec3 axis;
} mr_contact_side;

/* bytes of the work buffer for a model and nc blocks */
size_t mr_step_contact_work_size(const mr_model *m, int nc);

/* the local model of both sides of a collision contact at its point (mr_contact_step.sides),
 * d after mr_forward_kinematics at the contact's configuration: a sphere's or a capsule's
 * radius, a cylinder's on its side (sliding along the axis when the outward normal is
 * perpendicular to it, to 1e-9); a box's, a mesh's or a cylinder's face (the outward normal
 * along a face normal, to 1e-9), a halfspace or a heightfield: MR_CONTACT_FLAT; a box's edge
 * (sliding along it), a box's or mesh's vertex or a mesh's edge, a cylinder's rim: 0. Two
 * faces make the first side a vertex. MR_ERR_INVALID for an ellipsoid (its curvature varies
 * along the surface) and for two vertices touching (the normal is not defined) */
mr_status mr_contact_curvature(const mr_model *m, const mr_data *d, const mr_contact *c,
                               mr_contact_side side[2], mr_error *err);

/* the radius of curvature of the first surface of a contact on a static halfspace: a sphere's
 * or capsule's radius, 0 for a box or mesh (a vertex); MR_ERR_INVALID for another pair or shape
 * (mr_contact_curvature covers every pair) */
mr_status mr_contact_radius(const mr_model *m, const mr_contact *c, double *radius, mr_error *err);

/* The six Jacobians of the step with contacts from (q, v, τ) into sd (dvn_dq, dvn_dv, dvn_dtau,
 * dqn_dq, dqn_dv, dqn_dtau, conventions of mr_step_free_derivatives), and the step's v⁺ and q⁺
 * computed from the given λ (q_next, v_next may be NULL). d->f_ext (body frames) are the other
 * external forces, left as they were. work holds mr_step_contact_work_size(m, nc) bytes,
 * aligned for double. MR_ERR_NUMERIC when M̃ is not positive definite or the active-set system
 * stays singular. */
mr_status mr_step_contact_derivatives(const mr_model *m, mr_data *d, mr_step_derivatives *sd,
                                      const mr_step_params *p, const double *q, const double *v,
                                      const double *tau, const mr_contact_step *cs, double *q_next,
                                      double *v_next, void *work, mr_error *err);

/* ---- the simulator's step ----
 *
 * mr_sim_step_derivatives takes one mr_sim_step and gives the Jacobians of that step at the
 * state it started from, through mr_step_contact_derivatives with the step's own data: its
 * explicit torques and implicit gains (after the effort limits), PD targets, external forces
 * (held in their bodies' frames), contacts, joint limits and couplings, Jacobian, problem and
 * solution. mr_sim integrates free bodies (a free joint carrying no other body) in the world
 * velocity of their centre of mass and hands v⁺ back in the frame of q⁺; for them the Jacobians
 * are those of the velocity update w⁺ in the frame of q and of q ⊕ Δt w⁺, which agree with
 * mr_sim's when the body does not turn (docs/derivatives.md).
 * All memory is allocated by mr_sim_derivatives_create; the call allocates nothing. */
typedef struct mr_sim_derivatives mr_sim_derivatives;

/* memory for the derivatives of s's steps; NULL with err set when out of memory */
mr_sim_derivatives *mr_sim_derivatives_create(const mr_sim *s, mr_error *err);
void mr_sim_derivatives_free(mr_sim_derivatives *x);
/* one step of s, and its Jacobians (read with mr_sim_derivatives_get); on an error of the step
 * the simulator is left as mr_sim_step leaves it, on an error of the derivatives (an
 * ellipsoid's contact, two vertices touching) after the step */
mr_status mr_sim_step_derivatives(mr_sim *s, mr_sim_derivatives *x, mr_error *err);
/* the last step's Jacobians: dvn_dq, dvn_dv, dvn_dtau, dqn_dq, dqn_dv, dqn_dtau (nv x nv) */
const mr_step_derivatives *mr_sim_derivatives_get(const mr_sim_derivatives *x);

#endif
