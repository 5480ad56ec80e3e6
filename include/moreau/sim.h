/* The simulator: one time step of a world (world.h; DESIGN.md §1 and §4).
 *
 *   kinematics → collision → M̃, b, LDLᵀ of M̃ → v_f → contact problem → solver →
 *   v⁺ = v_f + Δt M̃⁻¹ Jᵀ λ → q⁺ = q ⊕ Δt v⁺
 *
 * with semi-implicit Euler on the configuration manifold. Joint damping and the PD posture
 * controllers are integrated implicitly: with τ_pd = k_p (q_t − q⁺) − k_d v⁺ and
 * q⁺ ≈ q + Δt v⁺, the velocity update reads
 *   M̃ v⁺ = M v + Δt (τ + k_p (q_t − q) − b(q, v) + Σ Jₑᵀ fₑ) + Δt Jᵀ λ,
 *   M̃ = M + Δt diag(k_d + damping) + Δt² diag(k_p),
 * so stiff gains stay stable; M̃ keeps the tree-sparse structure of M (diagonal terms only) and
 * the contact problem is assembled with M̃. All memory is allocated by mr_sim_create: the step
 * allocates nothing.
 *
 * Constraints share the contact problem (same assembly, same solver, docs/solvers.md):
 * - joint limits: a robot's 1-dof joint (joint_limits, default on) within limit_margin + 2 Δt |v|
 *   of its nearer URDF bound is a frictionless contact (μ = 0, one nonzero row ±e_dofᵀ, λ ≥ 0)
 *   with gap Φ = the distance to the bound and the contacts' gap/Baumgarte correction;
 * - coupled limits (the world's coupled_limits, MJCF tendons of two joints): the same on
 *   q_dof − ratio q_dof2, one row ±(e_dof − ratio e_dof2)ᵀ;
 * - point constraints (the scene's constraints): three bilateral rows, the world-frame relative
 *   velocity of the two anchors, λ ∈ R³ unbounded (mr_contact_problem.kind), corrected by
 *   baumgarte (default 1) × the anchors' position error / Δt.
 * Effort limits: the commanded torque plus the PD torque is estimated explicitly at the start of
 * the step (τ_cmd + k_p (q_t − q) − k_d v); a dof whose estimate exceeds its URDF effort gets
 * that estimate clamped to ±effort as an explicit torque, and its gains are dropped from M̃ for
 * the step. An unsaturated dof keeps the implicit PD, whose torque at v⁺ differs from the
 * estimate by k_p Δt v⁺ + k_d (v⁺ − v): it can exceed the effort by that much (an
 * approximation, documented in docs/scene-format.md). */
#ifndef MOREAU_SIM_H
#define MOREAU_SIM_H

#include <stdint.h>

#include "moreau/assembly.h"
#include "moreau/collision.h"
#include "moreau/contact.h"
#include "moreau/dynamics.h"
#include "moreau/world.h"

/* Wall time of the stages of one step (µs, CLOCK_MONOTONIC), measured while
 * mr_sim_time_stages is on (off by default: about ten clock reads per step, and two around each
 * consistent law, solve and island velocity change: 8 % of the step of 100 resting spheres;
 * all zero while off): kinematics (forward
 * kinematics), collision (mr_collision_detect), dynamics (external forces, CRBA, LDLᵀ of M̃, RNEA,
 * free velocity), assembly (gathering the contacts and constraints with their warm start, grouping
 * them into islands, and J, G and g: mr_contact_assemble or its subset form), consistency (the
 * consistent law, mr_contact_consistent), solver (mr_solve: the solver and the NCP criterion the
 * registry certifies its result with; a warm start's cold retry and the retry without push-out
 * included), integration (the velocity change Δt M̃⁻¹Jᵀλ, q⁺ = q ⊕ Δt v⁺, state check, contact
 * wrenches, energies); total is the whole mr_sim_step, the sum of the others. */
typedef struct {
  double kinematics, collision, dynamics, assembly, consistency, solver, integration, total;
} mr_step_timing;

/* Figures of one step. */
typedef struct {
  int ncontacts;             /* contacts in the problem */
  int nconstraints;          /* joint limits and point constraints in the problem */
  int iterations;            /* solver iterations (the largest over the islands) */
  int converged;             /* solver reached its tolerance (1 when there was no contact) */
  double eps_abs;            /* NCP criterion at the solution (force units), 0 without contact */
  double penetration;        /* max(0, −Φ_N) over contacts (m) */
  double solve_us;           /* solver time (µs; measured whether or not the stages are timed) */
  double kinetic, potential; /* energies after the step (J), computed by mr_sim_last's first
                              call after the step (the step itself does not pay for them) */
  mr_step_timing timing;     /* stage times of the step (zero unless mr_sim_time_stages is on) */
  int islands;               /* independent problems solved (0 without contact, or with
                                islands off) */
  int iterations_sum;        /* solver iterations summed over the islands (= iterations with
                                one island or islands off): the step's work */
} mr_step_stats;

/* Counted warnings of a run. */
typedef struct {
  long not_converged;      /* steps whose solver stopped before its tolerance */
  long collision_failures; /* narrowphase failures (libccd), from the collision module */
  long falls;              /* falls the simulator's controller reported (mpc.h: a robot under
                            * the locomotion MPC that fell) */
  long ncp_not_converged;  /* steps whose NCP criterion ε_abs exceeds the solver's eps_abs
                            * (differs from not_converged for the LCP, CCP and RaiSim models,
                            * which stop on their own model's criterion) */
  long budget;             /* steps in which a solve stopped at its budget (max_iter or the
                            * time budget max_time, mr_solver_settings) before its tolerance:
                            * the best iterate was used, counted in not_converged too */
  long storage_grown;      /* times the storage of contacts and islands grew, at the start of
                            * a step, before its stages, when the step's contacts exceeded any
                            * met before (by half again each time: O(log n) times) */
} mr_sim_warnings;

typedef struct mr_sim mr_sim;

/* An active constraint of a step (joint limits enter the problem only near their bound). */
typedef enum {
  MR_SIM_LIMIT = 0,
  MR_SIM_POINT,
  MR_SIM_MIMIC,
  MR_SIM_COUPLED_LIMIT,
  MR_SIM_FRICTION /* a joint's dry friction (every step, on each dof with joint_friction > 0):
                     its force, N m or N, is the third entry of its λ */
} mr_sim_constraint_type;
typedef struct {
  mr_sim_constraint_type type;
  int index; /* MR_SIM_LIMIT, MR_SIM_FRICTION: the velocity dof; MR_SIM_POINT: the world's
                 constraint; MR_SIM_MIMIC: the model's mimic coupling; MR_SIM_COUPLED_LIMIT: the
                 world's coupled limit */
  int upper; /* MR_SIM_LIMIT: 1 at the upper bound, 0 at the lower one */
} mr_sim_constraint;

/* A controller attached to a simulator (mr_sim_set_controller): control runs at the start of
 * every step, before anything else, and writes the actuation through control.h (torques, PD
 * targets and gains, wrenches); it returns the number of falls it saw in that step (counted in
 * mr_sim_warnings.falls; 0 for most controllers). reset runs after mr_sim_reset, free when the
 * controller is replaced or the simulator freed (either may be NULL). A controller allocates
 * when attached, not when it runs. The control layer's (the locomotion MPC, mpc.h) attach
 * themselves this way; so may a user's, like MuJoCo's mjcb_control but per simulator. */
typedef struct mr_controller {
  int (*control)(mr_sim *s, void *data);
  void (*reset)(mr_sim *s, void *data);
  void (*free)(void *data);
  void *data;
} mr_controller;

/* A simulator on a compiled world (world.h; borrowed and only read: it must outlive the
 * simulator, and any number of simulators may share it, one per thread). All the memory a step
 * needs is allocated here. The state starts at the world's q0, v0 with its initial controls.
 * solver may be NULL (the world's) or a registry name. mr_sim_from_scene (scene.h) makes a
 * simulator that owns the world compiled from a scene. */
mr_sim *mr_sim_create(const mr_world *w, const char *solver, mr_error *err);
/* free the simulator (and the world it owns, if made by mr_sim_from_scene); NULL is a no-op */
void mr_sim_free(mr_sim *s);

/* Attach c (copied; NULL, or c->control NULL: none), freeing the previous controller. One
 * controller per simulator: attaching replaces. */
void mr_sim_set_controller(mr_sim *s, const mr_controller *c);
/* the attached controller (control NULL when none) */
const mr_controller *mr_sim_get_controller(const mr_sim *s);

/* One step of Δt. MR_ERR_NUMERIC when the state diverges (NaN, Inf, or a velocity above
 * 1e4): err names the step and the first offending coordinate, and the state is left as it was
 * before the step. */
mr_status mr_sim_step(mr_sim *s, mr_error *err);

/* The contacts of the current state, without stepping (kinematics and collision only); valid
 * until the next call or step. */
mr_status mr_sim_collide(mr_sim *s, const mr_contact **contacts, int *ncontacts, mr_error *err);

/* Reset to the world's initial state and controls (time 0, no warm start, no user wrench):
 * the simulator then steps exactly as a new one. */
void mr_sim_reset(mr_sim *s);

/* the configuration q [nq] (free-flyer: world position, quaternion x y z w) */
const double *mr_sim_q(const mr_sim *s);
/* the velocity v [nv] (free-flyer: linear then angular velocity, local frame) */
const double *mr_sim_v(const mr_sim *s);
/* the simulated time (s) */
double mr_sim_time(const mr_sim *s);
/* the steps done since creation or the last reset */
long mr_sim_steps(const mr_sim *s);
/* the last step's figures (mr_step_stats); the first call after a step computes its energies
 * (two kinematics passes, writing the simulator's workspace: not concurrently with other calls
 * on the same simulator) */
const mr_step_stats *mr_sim_last(const mr_sim *s);
/* the counted warnings since creation or the last reset */
const mr_sim_warnings *mr_sim_get_warnings(const mr_sim *s);
/* the world's kinematic tree */
const mr_model *mr_sim_model(const mr_sim *s);
/* the world the simulator reads */
const mr_world *mr_sim_world(const mr_sim *s);
/* The last step's contacts and their forces (3 per contact, contact frame (t₁, t₂, n), N). */
int mr_sim_contacts(const mr_sim *s, const mr_contact **contacts, const double **lambda);
/* The last step's active constraints and their forces (3 per constraint, after the contacts'
 * in the problem): a joint limit's force is its third entry (N m or N, ≥ 0, pushing away from
 * the bound), a joint friction's force its third entry (N m or N, in [−f, f], the generalized
 * force on its dof), a point constraint's three entries are the world-frame force on body1 (N). */
int mr_sim_constraints(const mr_sim *s, const mr_sim_constraint **constraints,
                       const double **lambda);
/* The actuation torques of the last step (nv): commanded torque plus the PD torque, after the
 * effort limits (see the header comment). */
const double *mr_sim_torque(const mr_sim *s);
/* The last step's contact problem (valid until the next step); with islands, their problems
 * gathered into one over every block (G block-diagonal by island), in buffers allocated on the
 * first call that needs them (NULL when out of memory). */
const mr_contact_problem *mr_sim_problem(const mr_sim *s);
/* Solve each island (kinematic trees joined by contacts or constraints) as its own problem
 * (on, the default), or every block as one problem over all dofs (off: allocates that problem's
 * buffers for the simulator's bound on blocks, quadratic in it). The two agree to round-off
 * when each island's solve is unique or the solver's iterations per block match; they differ
 * within the solver's tolerance otherwise (an island stops when it has converged). */
mr_status mr_sim_set_islands(mr_sim *s, int on, mr_error *err);
/* Measure the wall time of each stage of the following steps into mr_sim_last's timing (on ≠ 0)
 * or not (0, the default, as MuJoCo times its stages only when given a timer): the step's
 * results are the same either way. */
void mr_sim_time_stages(mr_sim *s, int on);
/* Total mechanical energy of the current state (kinetic + potential, J). */
double mr_sim_energy(mr_sim *s);

#endif
