/* Flat read-outs and checked steps for bindings (python/moreau) and for programs that would
 * rather not read the library's structs: a model's bodies, joints, frames, geometries and limits
 * as plain numbers; the placements and centre of mass that the kinematics computed; the inputs a
 * caller writes in place, checked before a step; a scene's record options.
 *
 * Placements are 12 doubles: the rotation R row-major (9), then the position p (3, m), with
 * x_parent = R x_child + p. Matrices are row-major. Units SI. Nothing here allocates except
 * mr_world_load_recorded (which loads a world). */
#ifndef MOREAU_QUERY_H
#define MOREAU_QUERY_H

#include "moreau/dynamics.h"
#include "moreau/world.h"

/* the simulator and the batch (sim.h, batch.h) */
typedef struct mr_sim mr_sim;
typedef struct mr_batch mr_batch;

/* ---- the model (src/dynamics/query.c) ---- */

/* A body and the joint that carries it. */
typedef struct {
  int parent;           /* parent body, -1 for the world body 0 */
  int joint_type;       /* mr_joint_type of the joint from the parent (MR_JOINT_NONE for 0) */
  int idx_q, nq;        /* the joint's first coordinate in q and their number */
  int idx_v, nv;        /* its first dof in v and their number */
  double axis[3];       /* revolute, continuous, prismatic: the unit axis in the joint frame */
  double placement[12]; /* the joint frame in the parent body's frame, at the neutral q */
  double mass;          /* kg, merged fixed links included */
  double com[3];        /* centre of mass in the body frame (m) */
  double inertia[9];    /* rotational inertia about the centre of mass, body axes (kg m²) */
} mr_body_info;

/* A collision geometry. */
typedef struct {
  int type;             /* mr_geom_type */
  int body;             /* the body it moves with */
  double size[3];       /* as mr_geom_type says (radius, half lengths, radii; 0 where unused) */
  double placement[12]; /* the geometry frame in the body frame */
  double friction, restitution, compliance; /* its material (μ, e, R in m/N) */
} mr_geom_info;

/* Body b of m into out; MR_ERR_INVALID (err names b) when b is not in [0, nbodies). */
mr_status mr_model_body_info(const mr_model *m, int b, mr_body_info *out, mr_error *err);
/* the name of the joint carrying body b ("" for the world body); NULL out of range */
const char *mr_model_joint_name(const mr_model *m, int b);
/* the number of operational frames (one per body, one per merged fixed link, ...) */
int mr_model_nframes(const mr_model *m);
/* the name of frame f; NULL out of range */
const char *mr_model_frame_name(const mr_model *m, int f);
/* frame f's body and its placement in that body's frame; MR_ERR_INVALID out of range */
mr_status mr_model_frame_info(const mr_model *m, int f, int *body, double placement[12],
                              mr_error *err);
/* geometry g of m into out; MR_ERR_INVALID out of range */
mr_status mr_model_geom_info(const mr_model *m, int g, mr_geom_info *out, mr_error *err);
/* Copies of the per-coordinate position limits lower, upper [nq] (±INFINITY where unlimited) and
 * of the per-dof velocity and effort limits (INFINITY where none), joint damping (N m s/rad or
 * N s/m) and armature (kg m² or kg) [nv]; any pointer may be NULL. */
void mr_model_get_limits(const mr_model *m, double *lower, double *upper, double *velocity,
                         double *effort, double *damping, double *armature);
/* the gravity vector (m/s², world frame) */
void mr_model_get_gravity(const mr_model *m, double g[3]);

/* ---- kinematics read-outs (src/dynamics/query.c) ---- */

/* The world placement of every body [nbodies × 12], from the last call that computed the
 * placements (mr_forward_kinematics, or any algorithm given q). */
void mr_data_body_placements(const mr_data *d, double *out);
/* The world placement of every frame [nframes × 12], after mr_update_frames. */
void mr_data_frame_placements(const mr_data *d, double *out);
/* The centre of mass of the bodies [first, first + n) (world frame, m) from the placements of the
 * last kinematics call, and when J is not NULL its Jacobian (3 × nv): ċ = J v, i.e.
 * J = Σ mᵢ J_{cᵢ} / Σ mᵢ with J_{cᵢ} the point Jacobian of body i's centre of mass. Bodies
 * without mass give (0, 0, 0) and J = 0. Out-of-range bodies are skipped. */
mr_vec3 mr_center_of_mass_jacobian(const mr_model *m, mr_data *d, int first, int n, double *J);

/* ---- checked steps (src/integrate/sim_check.c) ---- */

/* the world's kinematic tree */
const mr_model *mr_world_model(const mr_world *w);

/* Check what the next step reads and a caller may have written in place through control.h's
 * views: q, v, the commanded torques and the PD targets finite, every quaternion of q of norm
 * above 1e-12, the gains finite, ≥ 0 and 0 on dofs that are not a 1-dof joint's.
 * MR_ERR_INVALID names the array, the entry, its joint and the value. */
mr_status mr_sim_check_inputs(mr_sim *s, mr_error *err);
/* mr_sim_check_inputs, then n steps (stopping at the first failure, whose error it returns).
 * MR_ERR_INVALID for n < 0; n = 0 only checks. */
mr_status mr_sim_step_n(mr_sim *s, long n, mr_error *err);
/* The wrench set on body with mr_sim_set_wrench (zero when none, or after mr_sim_reset or
 * mr_sim_clear_wrenches): world-frame force (N) and torque (N m) at the body origin.
 * MR_ERR_INVALID when body is not in [1, nbodies). */
mr_status mr_sim_get_wrench(mr_sim *s, int body, mr_vec3 *force, mr_vec3 *torque, mr_error *err);
/* mr_sim_check_inputs on every environment, then mr_batch_step. When an environment's inputs
 * are invalid nothing is stepped: MR_ERR_INVALID names the first such environment. nsteps = 0
 * only checks (the statuses stay those of the last step). */
mr_status mr_batch_step_checked(mr_batch *b, int nsteps, mr_error *err);

/* ---- a scene's record options (src/io/scene_record.c) ---- */

/* What `moreau run --out` records for a scene (docs/scene-format.md, `record`). */
typedef struct {
  int every;          /* a row every N steps (default 1) */
  int energy;         /* the energy column (default 1) */
  int solver_stats;   /* iterations, eps_abs, solve_us, iterations_sum (default 1) */
  int contact_forces; /* a contacts CSV (default 0) */
  int world_velocity; /* free-flyers' velocities in the world frame (default 0) */
  int poses;          /* every body's world pose (default 0) */
  int com;            /* every robot's centre of mass (default 0) */
} mr_record_options;

/* mr_world_load, with the scene's record options into rec (may be NULL). */
mr_world *mr_world_load_recorded(const char *path, mr_record_options *rec, mr_error *err);

#endif
