/* The model: an immutable description of a kinematic tree (bodies, joints, inertias, limits),
 * its operational frames and its collision geometries. Built once, programmatically
 * (mr_model_add_body ...) or by a loader (URDF, scenes), then shared read-only, possibly across
 * threads. Everything a step writes lives in mr_data (dynamics.h).
 *
 * Bodies are numbered 0..nbodies-1; body 0 is the world (universe), fixed, with no joint. Every
 * other body i hangs from body parent[i] < i by one joint; the numbering is therefore a
 * topological order (parents before children), which every recursive algorithm relies on.
 * Configuration and velocity follow Pinocchio's conventions (DESIGN.md §3). */
#ifndef MOREAU_MODEL_H
#define MOREAU_MODEL_H

#include <stdint.h>

#include "moreau/error.h"
#include "moreau/spatial.h"

#define MR_NAME_MAX 96

typedef enum {
  MR_JOINT_NONE = 0,   /* the world body */
  MR_JOINT_REVOLUTE,   /* nq = nv = 1, rotation about axis, with limits */
  MR_JOINT_CONTINUOUS, /* nq = nv = 1, a revolute joint without position limits */
  MR_JOINT_PRISMATIC,  /* nq = nv = 1, translation along axis */
  MR_JOINT_SPHERICAL,  /* nq = 4 (quaternion x y z w), nv = 3 (angular velocity, local frame) */
  MR_JOINT_FREE,       /* nq = 7 (x y z qx qy qz qw), nv = 6 (linear, angular; local frame) */
  MR_JOINT_TYPE_COUNT
} mr_joint_type;

typedef enum {
  MR_GEOM_HALFSPACE = 0, /* {z <= 0} in the geometry frame: the outward normal is +z */
  MR_GEOM_SPHERE,        /* size[0] = radius */
  MR_GEOM_BOX,           /* size = half extents along x, y, z */
  MR_GEOM_CAPSULE,       /* size[0] = radius, size[1] = half length of the segment (along z) */
  MR_GEOM_CYLINDER,      /* size[0] = radius, size[1] = half length (along z) */
  MR_GEOM_ELLIPSOID,     /* size = radii along x, y, z */
  MR_GEOM_MESH,          /* convex hull of mr_geom.mesh */
  MR_GEOM_HEIGHTFIELD,   /* mr_geom.hfield, heights along +z */
  MR_GEOM_TYPE_COUNT
} mr_geom_type;

/* A triangle mesh (vertices already scaled), and its convex hull once computed. */
typedef struct mr_mesh {
  int nvert;        /* vertices */
  double *vert;     /* nvert x 3 */
  int nface;        /* triangles */
  int *face;        /* nface x 3 vertex indices */
  int nhull;        /* vertices of the convex hull (0 until computed) */
  double *hull;     /* nhull x 3 */
  double hull_volume, volume; /* hull volume; |mesh volume| (0 if the mesh is open) */
} mr_mesh;

/* A regular grid of heights: h[iy * nx + ix] is the height at
 * (x0 + ix dx, y0 + iy dy), in the geometry frame; the solid extends down to min(h) - base. */
typedef struct mr_hfield {
  int nx, ny;
  double x0, y0, dx, dy;
  double base;
  double *h; /* nx * ny */
  double hmin, hmax;
} mr_hfield;

typedef struct {
  char name[MR_NAME_MAX];
  mr_geom_type type;
  int body;           /* the body it is attached to */
  mr_se3 placement;   /* geometry frame in the body frame */
  double size[3];     /* see mr_geom_type */
  mr_vec3 mesh_scale; /* MESH: scale applied to the file's vertices (already in mesh->vert) */
  char *mesh_file;    /* MESH: resolved path of the file, malloc'ed */
  mr_mesh *mesh;      /* MESH: loaded vertices (NULL until loaded) */
  mr_hfield *hfield;  /* HEIGHTFIELD: the grid */
  double friction;    /* Coulomb coefficient μ (default 1.0) */
  double restitution; /* e in [0, 1] (default 0) */
  double compliance;  /* normal compliance R (default 0: rigid) */
  double tangential_compliance; /* R_T of both tangent rows (default 0: rigid) */
  uint32_t group;     /* collision group bits (default 1) */
  uint32_t mask;      /* collides with geometries whose group & mask != 0 (default all bits) */
  /* a physically parametrised compliant contact (docs/physics.md, "Stiffness and dissipation"):
   * the normal force k (−Φ_N − τ_d v_N) of a point contact, regularised as Drake's SAP does.
   * 0 (default): not given, compliance applies; exclusive with compliance */
  double stiffness;   /* k, N/m (> 0 when given) */
  double dissipation; /* τ_d, the dissipation time scale, s (≥ 0; default 0) */
} mr_geom;

/* An operational frame attached to a body (a URDF link merged by a fixed joint, a foot, ...). */
typedef struct {
  char name[MR_NAME_MAX];
  int body;         /* the body it moves with */
  mr_se3 placement; /* frame in the body frame */
} mr_frame;

typedef struct {
  char name[MR_NAME_MAX];
  mr_joint_type type;
  mr_vec3 axis;       /* unit axis in the joint frame (REVOLUTE, CONTINUOUS, PRISMATIC) */
  int idx_q, idx_v;   /* first index in q and in v */
  int nq, nv;         /* sizes of this joint's configuration and velocity */
} mr_joint;

typedef struct {
  char name[MR_NAME_MAX];
  int parent;          /* parent body, -1 for the world */
  mr_se3 placement;    /* joint frame in the parent body frame (at q neutral) */
  mr_joint joint;      /* the joint from parent to this body */
  mr_inertia inertia;  /* in the body (joint) frame; merged fixed children included */
} mr_body;

/* A mimic joint (URDF <mimic>): the 1-dof joint of body follower moves with that of body leader,
 * q_follower = multiplier q_leader + offset; the simulator enforces it as a bilateral
 * constraint (docs/urdf.md, "Mimic joints"). */
typedef struct {
  int follower, leader; /* bodies whose 1-dof joints are coupled */
  double multiplier;    /* dimensionless (rad/rad, m/m, or mixed units for mixed joint types) */
  double offset;        /* rad or m */
} mr_mimic;

typedef struct {
  char name[MR_NAME_MAX];
  int nq, nv;          /* sizes of the configuration and velocity vectors */
  int nbodies;         /* including the world, body 0 */
  mr_body *bodies;     /* [nbodies] */
  int nframes;
  mr_frame *frames;    /* [nframes]; one per body plus one per merged fixed link */
  int ngeoms;
  mr_geom *geoms;      /* [ngeoms] collision geometries */
  mr_vec3 gravity;     /* (0, 0, -9.81) by default */

  /* per configuration coordinate [nq]: position limits, ±INFINITY where unlimited */
  double *lower, *upper;
  /* per velocity coordinate [nv] */
  double *velocity_limit; /* |v| bound, INFINITY where none */
  double *effort_limit;   /* |τ| bound, INFINITY where none */
  double *damping;        /* viscous joint damping (N m s / rad or N s / m), default 0 */
  double *armature;       /* rotor inertia added to the diagonal of M, default 0 */
  double *joint_friction; /* dry friction: the bound on the friction force of each dof, N m or N
                           * (URDF <dynamics friction>), default 0 (none; docs/physics.md) */
  int *dof_body;          /* the body whose joint owns each velocity coordinate */
  int nmimics;
  mr_mimic *mimics;       /* [nmimics] joint couplings */
  /* collision filters beyond groups and masks (an MJCF model's <contact> exclusions and
     pairs): geometry pairs never tested, and pairs always tested whatever the other filters
     say; 2 x n geometry indices each */
  int nfilter_exclude, nfilter_include;
  int *filter_exclude, *filter_include;

  /* capacities of the arrays above (building only) */
  int cap_bodies, cap_frames, cap_geoms, cap_q, cap_v, cap_mimics;
} mr_model;

/* ---- building ---- */

/* An empty model holding only the world body. Returns NULL when out of memory. */
mr_model *mr_model_create(const char *name);
void mr_model_free(mr_model *m);

/* Add a body hanging from parent by a joint of the given type, whose frame sits at placement in
 * the parent's frame; axis (unit) is used by revolute, continuous and prismatic joints.
 * Position limits default to unlimited (revolute/prismatic: set them with mr_model_set_limits).
 * Returns the new body's index, or -1 with err filled (unknown parent, zero axis, bad inertia). */
int mr_model_add_body(mr_model *m, int parent, const char *joint_name, mr_joint_type type,
                      mr_se3 placement, mr_vec3 axis, const char *body_name, mr_inertia inertia,
                      mr_error *err);

/* Merge a rigidly attached link into body (fixed joint): its inertia (given in its own frame,
 * placed at placement in body's frame) is added to the body's, and a frame of that name is
 * recorded. Returns the frame index, or -1 with err filled. */
int mr_model_add_fixed(mr_model *m, int body, mr_se3 placement, const char *name,
                       mr_inertia inertia, mr_error *err);

/* Add an operational frame. Returns its index, or -1 with err filled. */
int mr_model_add_frame(mr_model *m, int body, mr_se3 placement, const char *name, mr_error *err);

/* Add a collision geometry (copied; mesh_file duplicated, mesh and hfield owned by the model).
 * Returns its index, or -1 with err filled (invalid sizes). */
int mr_model_add_geom(mr_model *m, const mr_geom *g, mr_error *err);

/* A geometry with defaults: identity placement, μ = 1, e = 0, rigid, group 1, mask all. */
mr_geom mr_geom_default(mr_geom_type type, int body);

/* Couple the 1-dof joint of body follower to that of body leader: q_f = multiplier q_l + offset.
 * Returns the coupling's index, or -1 with err filled (not two distinct 1-dof joints, a
 * follower coupled twice, a leader that is itself a follower, a non-finite number). */
/* 1 when body b's joint follows another through a mimic coupling of m */
int mr_model_is_mimic_follower(const mr_model *m, int b);
int mr_model_add_mimic(mr_model *m, int follower, int leader, double multiplier, double offset,
                       mr_error *err);

/* Add a geometry pair to the collision filters: never tested (include 0) or always tested
 * (include 1). MR_ERR_INVALID on an index out of range, MR_ERR_NOMEM. */
mr_status mr_model_add_filter_pair(mr_model *m, int g1, int g2, int include, mr_error *err);

/* Set the joint's position limits (per configuration coordinate of a 1-dof joint). */
mr_status mr_model_set_limits(mr_model *m, int body, double lower, double upper,
                              double velocity, double effort, mr_error *err);

/* Append src's bodies, joints, limits, frames and geometries to dst, the roots of src hanging
 * from parent_body at placement (composed with their own placements), names prefixed
 * "PREFIX/". Returns the index in dst of src's body 1 (dst->nbodies when src has no body but the
 * world), or -1 with err filled. */
int mr_model_append(mr_model *dst, const mr_model *src, int parent_body, mr_se3 placement,
                    const char *prefix, mr_error *err);

/* A deep copy of src (same indices; meshes and heightfields duplicated). NULL with err filled
 * when out of memory. */
mr_model *mr_model_copy(const mr_model *src, mr_error *err);

/* ---- queries ---- */

int mr_model_body_index(const mr_model *m, const char *name);  /* -1 if none */
int mr_model_joint_index(const mr_model *m, const char *name); /* body index, -1 if none */
int mr_model_frame_index(const mr_model *m, const char *name); /* -1 if none */
double mr_model_total_mass(const mr_model *m);

/* the configuration and velocity sizes of a joint type */
int mr_joint_nq(mr_joint_type t);
int mr_joint_nv(mr_joint_type t);
const char *mr_joint_type_name(mr_joint_type t);
const char *mr_geom_type_name(mr_geom_type t);

#endif
