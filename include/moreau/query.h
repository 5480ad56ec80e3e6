/* Flat read-outs of a model for bindings (python/moreau) and for programs that would rather not
 * read the library's structs: a model's bodies, joints, frames, geometries and limits as plain
 * numbers; the placements and centre of mass that the kinematics computed. (The checked steps
 * for bindings are in control.h and batch.h, a scene's record options in scene.h.)
 *
 * Placements are 12 doubles: the rotation R row-major (9), then the position p (3, m), with
 * x_parent = R x_child + p. Matrices are row-major. Units SI. Nothing here allocates. */
#ifndef MOREAU_QUERY_H
#define MOREAU_QUERY_H

#include "moreau/dynamics.h"

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

#endif
