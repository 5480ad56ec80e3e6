/* Contact inverse dynamics: the joint torques and contact forces that realise a given
 * acceleration of a robot touching its surroundings (docs/inverse.md).
 *
 * Given the state (q, v), an acceleration a (nv) and the contacts (collision.h, e.g. those of
 * mr_sim_contacts), it finds the contact forces f (one force per contact, in its frame
 * (t₁, t₂, n), N, each in its friction cone ‖f_t‖ ≤ μ f_n) and the generalised forces τ with
 *
 *   M(q) a + h(q, v) = τ + Jᵀ f,
 *
 * J the contacts' Jacobian (3 nc × nv, relative velocity of body1 − body2 in the contact frames)
 * and h the Coriolis, centrifugal, gravity and external forces (mr_rnea). The unactuated dofs
 * (the 6 of each floating base: joints MR_JOINT_FREE) get no torque: f must supply their share
 * of M a + h alone. f is the solution of the cone-constrained least squares
 *
 *   minimise ½ ‖(Jᵀ f − M a − h)_U‖² + ½ ε ‖f − f_ref‖²   subject to  f_i ∈ K_μᵢ,
 *
 * U the unactuated dofs and ε a small proximal weight (relative to the mean diagonal of the
 * first term's Hessian): among the forces that balance the floating base the one closest to
 * f_ref (the last call's forces in a control loop, or 0 for the smallest), unique; where no
 * forces in the cones can (an acceleration the friction cannot give), the closest balance, with
 * what is left over reported. Then τ = M a + h − Jᵀ f; its unactuated entries are that
 * remainder (0 when the acceleration is feasible). A fixed-base robot has U empty: f = the
 * projection of f_ref on the cones, and τ carries the rest. The cone QP is the MPC's
 * interior-point method (src/control/mpc_qp.c). */
#ifndef MOREAU_INVERSE_H
#define MOREAU_INVERSE_H

#include "moreau/collision.h"
#include "moreau/dynamics.h"

typedef struct {
  double proximal; /* ε, relative to the mean diagonal of (Jᵀ)_Uᵀ (Jᵀ)_U (default 1e-8) */
  int max_iter;    /* interior-point iterations of the cone QP at most (default 50) */
  double eps;      /* the QP's tolerance, relative to its gradient's scale (default 1e-9) */
} mr_contact_id_settings;

typedef struct {
  double residual; /* max |τ_U|: the generalised force on an unactuated dof the contacts could
                      not supply (N or N m), 0 when a is feasible */
  int iterations;  /* interior-point iterations */
  int converged;   /* the QP met eps within max_iter */
} mr_contact_id_info;

mr_contact_id_settings mr_contact_id_settings_default(void);

typedef struct mr_contact_id mr_contact_id;

/* A workspace for up to max_contacts contacts of model m (allocates; the solve does not). */
mr_contact_id *mr_contact_id_create(const mr_model *m, int max_contacts, mr_error *err);
void mr_contact_id_free(mr_contact_id *w);

/* Solve at (q, v, a) (nq, nv, nv) with nc contacts; f_ref (3 nc, NULL = 0) the proximal
 * reference, s NULL for the defaults. Writes tau (nv) and f (3 nc, NULL allowed) and info (NULL
 * allowed). MR_ERR_INVALID for nc beyond the workspace, a non-finite input, μ < 0; MR_ERR_NUMERIC
 * when the QP cannot be factored. d is scratch (its kinematics end at q). */
mr_status mr_contact_id_solve(mr_contact_id *w, mr_data *d, const double *q, const double *v,
                              const double *a, const mr_contact *contacts, int nc,
                              const double *f_ref, const mr_contact_id_settings *s, double *tau,
                              double *f, mr_contact_id_info *info, mr_error *err);

#endif
