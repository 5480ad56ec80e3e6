/* Assembly of the frictional contact problem of a model at its current state (DESIGN.md §4):
 * the contact Jacobian J (3nc x nv), the Delassus matrix G = J M⁻¹ Jᵀ computed through the
 * tree-sparse LDLᵀ factor of M (M⁻¹ is never formed), and the corrected free velocity
 *   g = (J v_f + cor) / Δt,  cor_N = (Φ_N + d) / Δt           (Φ_N ≥ −δ: the step ends at Φ = −d)
 *                            cor_N = (−δ + k_B (Φ_N + δ)) / Δt  (Φ_N < −δ: push-out capped),
 * except at an impact: a contact open last step (no normal force) approaching faster than the
 * restitution threshold whose gap its free motion closes within the step (Φ_N ≤ −Δt J_N v_f).
 * Decided in penetration (Φ_N ≤ 0) it takes cor_N = e J_N v plus k_B Φ_N/Δt (no push-out) at
 * once. Decided while the gap is still open (Φ_N > 0, a speculative contact) it lands: this
 * step keeps the gap law, which ends it on the surface, and the rebound speed w (the speed at
 * which it reaches the surface times e, docs/physics.md "Deferred rebound") is handed back in
 * mr_contact_assembly.rebound; the caller gives it to the same contact at the next step
 * (mr_contact_geometry.rebound), which then takes cor_N = −w (plus k_B Φ_N/Δt below zero). The
 * rebound part is kept per block (mr_contact_assembly.rest) so that the consistent law leaves it
 * out of its projection (docs/solvers.md). The law is the same above and below Φ = 0, hence affine
 * over a rigid patch whose corners lie in [−δ, ∞): J v_f + cor then stays in range(J) = range(G)
 * for a resting foot or box and the NCP keeps its all-sticking solution (docs/solvers.md, "The gap
 * correction"). All in force units: the solution λ is a force (impulse / Δt) and the contact
 * velocity of the problem is c / Δt. The result is viewed as an mr_contact_problem. */
#ifndef MOREAU_ASSEMBLY_H
#define MOREAU_ASSEMBLY_H

#include "moreau/contact.h"
#include "moreau/dynamics.h"

/* What a block of three rows of the problem is (mr_contact_geometry.type). */
typedef enum {
  MR_ROWS_CONTACT = 0, /* a contact from the collision module */
  MR_ROWS_LIMIT,       /* a joint limit: a frictionless contact (μ = 0) on one velocity dof,
                          rows (0, 0, sign e_dofᵀ), Φ_N = the distance to the bound; with a
                          non-zero ratio, a limit on two joints: rows (0, 0, sign (e_dofᵀ −
                          ratio e_dof2ᵀ)), Φ_N the distance of q_dof − ratio q_dof2 to its bound */
  MR_ROWS_POINT,       /* a bilateral point constraint: rows = the world-frame relative
                          velocity of point (on body1) and point2 (on body2), λ ∈ R³ */
  MR_ROWS_MIMIC,       /* a bilateral joint coupling: rows (0, 0, e_dofᵀ − ratio e_dof2ᵀ),
                          Φ = q_dof − ratio q_dof2 − offset, corrected by baumgarte Φ / Δt² */
  MR_ROWS_FRICTION     /* a joint's dry friction: a box (MR_KIND_BOX) on one velocity dof, rows
                          (0, 0, e_dofᵀ), |λ_N| ≤ mu (the friction, N m or N), g_N = v_f,dof / Δt
                          with no gap correction (docs/physics.md, "Joint friction") */
} mr_rows_type;

/* One contact as the assembly needs it (filled from the collision module's contacts), or one
 * joint limit or bilateral point constraint (type; the fields below the contact ones). */
typedef struct {
  int body1, body2; /* the bodies of the first and second geometry (0 = world) */
  mr_vec3 point;    /* contact point, world frame */
  mr_mat3 frame;    /* contact frame in the world: columns (t₁, t₂, n), n from body2 to body1 */
  double phi;       /* signed distance Φ_N (< 0 in penetration) */
  double mu;        /* friction coefficient; MR_ROWS_FRICTION: the friction force bound f */
  double restitution; /* e in [0, 1] */
  double compliance;  /* normal compliance R_N (0 = rigid) */
  double tangential_compliance; /* R_T of rows t₁ and t₂ (0 = rigid) */
  int is_new;         /* 1 when the contact carried no normal force last step (restitution applies) */
  double rebound;     /* a rebound deferred to this step by the same contact's impact at Φ_N > 0
                         last step (mr_contact_assembly.rebound): the normal speed it must leave
                         with, m/s (0: none); it applies where the contact landed (it carried
                         force, or its gap is closed) */
  mr_rows_type type;  /* 0 (MR_ROWS_CONTACT) for a contact */
  int dof;            /* MR_ROWS_LIMIT, MR_ROWS_FRICTION: the velocity index of the joint */
  double sign;      /* MR_ROWS_LIMIT: +1 at a lower bound (gap q − lower), −1 at an upper one */
  int dof2;         /* MR_ROWS_MIMIC: the leader's velocity index (dof is the follower's);
                       MR_ROWS_LIMIT with a ratio: the second joint's */
  double ratio;     /* MR_ROWS_MIMIC: the multiplier; MR_ROWS_LIMIT: 0 for one joint */
  mr_vec3 point2;   /* MR_ROWS_POINT: the anchor on body2, world frame (point is body1's) */
  double baumgarte; /* MR_ROWS_POINT, MR_ROWS_MIMIC: fraction of the position error (point −
                       point2, or Φ) removed per step, g += baumgarte error / Δt² */
  /* a stiffness contact (docs/physics.md, "Stiffness and dissipation"): k > 0 replaces
   * compliance and the gap correction by R_N = 1/(k Δt (Δt + τ_d)) and cor_N = Φ_N/(Δt + τ_d) (m/s),
   * with no restitution */
  double stiffness;   /* k, N/m (0: none) */
  double dissipation; /* τ_d, s */
} mr_contact_geometry;

typedef struct {
  double dt;                    /* time step Δt (s) */
  double baumgarte;             /* k_B in [0, 1] (default 0) */
  double restitution_threshold; /* apply restitution only when |J_N v| exceeds this (m/s, default
                                   0.01) */
  double band; /* δ ≥ 0: penetrations up to δ are removed within one step (cor_N = Φ/Δt);
                  deeper ones at δ/Δt plus k_B of the excess (m, default 1e-4) */
  double rest_depth; /* d in [0, δ]: the depth resting contacts settle at, cor_N = (Φ + d)/Δt
                        on the band (m, or rad for a revolute limit; default 1e-12: at exactly
                        Φ = 0 the box-box contact flips between four points and one,
                        docs/solvers.md) */
} mr_assembly_settings;

/* Buffers of an assembled problem, sized for at most max_contacts contacts. */
typedef struct {
  int max_contacts, nv;
  double *J;    /* 3 nc x nv */
  double *MiJt; /* M⁻¹ Jᵀ, nv x 3 nc (column-major by contact row: row r of Jᵀ solved) */
  double *G;    /* 3 nc x 3 nc */
  double *g;    /* 3 nc */
  double *mu;   /* nc */
  double *R;    /* 3 nc */
  double *phi;  /* nc */
  double *vel;  /* contact velocity J v at the start of the step, 3 nc (m/s) */
  double *rest; /* nc: the restitution target's part of each block's g_N (force units), 0 but
                   on an impact; the consistent law leaves it out of its projection */
  double *rebound;     /* nc: the rebound speed (m/s) an impact decided at Φ_N > 0 defers to the
                          next step (mr_contact_geometry.rebound of the same contact), 0 none */
  unsigned char *kind; /* MR_KIND_* per block, nc (the problem's kind is NULL without bilateral) */
  /* optional block-sparse G, filled instead of G by a tree-sparse subset (mr_assembly_subset
   * .sparse) when Gb is not NULL: block-CSR as in mr_contact_problem, block (i, j) stored iff the
   * supports of blocks i and j share a dof (equivalently a tree root). The caller provides
   * Gb_row (max_contacts + 1), Gb_col and Gb (room for Gb_cap blocks; max_contacts² always
   * suffices) and Gb_work (3 sub->ndofs + 10 max_contacts ints of scratch). */
  int *Gb_row, *Gb_col, *Gb_work;
  double *Gb;
  size_t Gb_cap;
  mr_contact_problem problem; /* a view of the arrays above */
} mr_contact_assembly;

mr_assembly_settings mr_assembly_settings_default(void);

/* 1 when a contact takes its rebound target this step (the header comment): a rebound deferred
 * from last step (c->rebound > 0, where the contact landed), or an impact decided in
 * penetration (Φ_N ≤ 0): open last step, approaching faster than the restitution threshold
 * (vn = J_N v at the start of the step), its gap closed within the step by its free motion
 * (vnf = J_N v_f). */
int mr_contact_impact(const mr_contact_geometry *c, double vn, double vnf,
                      const mr_assembly_settings *s);

/* The rebound speed (m/s, ≥ 0) an impact decided at Φ_N > 0 defers to the next step, 0 when the
 * contact is no such impact: w = e u + (vnf − vn)/2, u the normal speed at which the step's free
 * motion (constant normal acceleration (vnf − vn)/Δt) reaches Φ_N = 0, u² = ((vn + vnf)/2)² −
 * 2 Φ_N (vnf − vn)/Δt; the half step of acceleration makes the launch speed off the surface
 * e u (docs/physics.md, "Deferred rebound"). */
double mr_contact_deferred_rebound(const mr_contact_geometry *c, double vn, double vnf,
                                   const mr_assembly_settings *s);

/* The normal row's correction of a contact (velocity units; g_N = (J_N v_f + gap + rest)/Δt):
 * the gap law's part and its slope ∂gap/∂Φ, and the restitution target of an impact (impact:
 * mr_contact_impact): −c->rebound for a deferred rebound, e J_N v otherwise. */
typedef struct {
  double gap;   /* the gap (push-out) correction, m/s */
  double rest;  /* the restitution target, m/s (0 but on an impact; −(the rebound speed)) */
  double slope; /* ∂gap/∂Φ, 1/s */
} mr_normal_correction;
mr_normal_correction mr_contact_normal_correction(const mr_contact_geometry *c, double vn,
                                                  int impact, const mr_assembly_settings *s);

/* Allocate buffers for up to max_contacts contacts of a model with nv velocities. */
mr_status mr_contact_assembly_init(mr_contact_assembly *a, int max_contacts, int nv, mr_error *err);
void mr_contact_assembly_free(mr_contact_assembly *a);

/* 3 x nv Jacobian of the relative velocity (body1 − body2) at the contact point, in the contact
 * frame (rows t₁, t₂, n), after mr_forward_kinematics. scratch holds 3 nv doubles. A joint limit
 * gives rows (0, 0, sign e_dofᵀ); a point constraint the world-frame Jacobian of the velocity of
 * point on body1 minus that of point2 on body2. */
void mr_contact_jacobian(const mr_model *m, mr_data *d, const mr_contact_geometry *c, double *J,
                         double *scratch);

/* Assemble the problem of nc contacts, given the state velocity v (nv) and the free velocity
 * v_f (nv), after mr_forward_kinematics at q, mr_crba and mr_ldlt_factor. MR_ERR_NOMEM when nc
 * exceeds the buffers' bound. */
mr_status mr_contact_assemble(const mr_model *m, mr_data *d, const mr_contact_geometry *contacts,
                              int nc, const double *v, const double *vf,
                              const mr_assembly_settings *s, mr_contact_assembly *a, mr_error *err);

/* A part of the model's problem (an island): some blocks over some dofs. dofs (ascending, a
 * union of whole kinematic trees) are the columns of J, M⁻¹Jᵀ and the velocity change; col maps
 * a listed dof to its column; x is a zeroed nv scratch the assembly leaves zeroed. */
typedef struct {
  const int *blocks; /* indices of the assembled blocks into the contacts given; NULL: 0, 1, … */
  const int *dofs;
  int ndofs;
  const int *col; /* nv entries, read at the listed dofs only */
  double *x;
  double *x4; /* NULL, or a zeroed 4 nv scratch the assembly leaves zeroed: the dense products'
               * M⁻¹Jᵀ solved four rows at a time (mr_ldlt_solve_dofs4), the same values */
  /* 1: tree-sparse products. Y = U⁻¹ Jᵀ (M = U D Uᵀ) is nonzero only on the dofs of the block's
   * kinematic paths (its support, closed under ancestors), so G = Yᵀ D⁻¹ Y sums over the shared
   * part of two supports only (zero for blocks on different paths) and M⁻¹Jᵀλ = U⁻ᵀ D⁻¹ (Y λ)
   * is one solve; M⁻¹Jᵀ then holds Y's rows on their supports, by dof: block i's entry (k, t)
   * (row k at its support's t-th dof) at MiJt[3 (i s + t) + k], s the smaller of ndofs and twice
   * the longest path to a root among the subset's dofs. Equal to the dense products to
   * round-off (another order of summation). J's buffer has room for 3 nc + 6 rows: after J, the
   * scratch of the six world motion rows of one body's path, solved once per path for all the
   * blocks on it, then of one block's rows of D⁻¹ Y; Gb_work holds 3 ndofs + 10 max_contacts ints.
   */
  int sparse;
  int *support;  /* sparse: per block, its support's dofs (descending) at ndofs entries each */
  int *nsupport; /* sparse: per block, the support's size */
  int rows_on_supports; /* sparse: each row of J is written on its block's support only, the rest
                         * of the row left as it was (for readers that read the supports alone:
                         * zeroing a large island's J, 3 nc x nv, cost more than its solve) */
} mr_assembly_subset;

/* mr_contact_assemble over a subset: a's buffers hold J and M⁻¹Jᵀ with sub->ndofs columns (a->nv
 * = sub->ndofs); v and v_f have nv entries. Equal bit for bit to the corresponding rows, columns
 * and entries of the whole model's problem when no block couples the subset to other dofs. */
mr_status mr_contact_assemble_subset(const mr_model *m, mr_data *d,
                                     const mr_contact_geometry *contacts,
                                     const mr_assembly_subset *sub, int nc, const double *v,
                                     const double *vf, const mr_assembly_settings *s,
                                     mr_contact_assembly *a, mr_error *err);

/* The velocity change Δt M⁻¹ Jᵀ λ of a subset's solution, written at its dofs of dv (nv). */
void mr_contact_impulse_velocity_subset(const mr_model *m, const mr_data *d,
                                        const mr_contact_assembly *a,
                                        const mr_assembly_subset *sub, const double *lambda,
                                        double dt, double *dv);

/* The velocity change of a force solution: dv = Δt M⁻¹ Jᵀ λ (nv). */
void mr_contact_impulse_velocity(const mr_contact_assembly *a, const double *lambda, double dt,
                                 double *dv);

#endif
