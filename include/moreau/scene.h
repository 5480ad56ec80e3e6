/* Scenes: a YAML file (docs/scene-format.md) describing free and fixed bodies, robots loaded from
 * URDF, materials, external forces, the solver and its settings, the time step and what to
 * record. mr_scene_load reads it into one combined mr_model plus the initial state and the
 * options a simulation run needs; it does not step anything.
 *
 * Model layout: body 0 is the world and carries the geometries of every fixed scene body (placed
 * at the body's pose); each free scene body follows, in scene order, as a body hanging from the
 * world by an MR_JOINT_FREE joint (joint name "NAME/root_joint"); then each robot's model is
 * appended with every name prefixed "ROBOT/". The state vector follows the same order: 7 q / 6 v
 * per free body, then each robot's q / v. */
#ifndef MOREAU_SCENE_H
#define MOREAU_SCENE_H

#include "moreau/contact.h"
#include "moreau/model.h"

#define MR_SCENE_PATH_MAX 1024

/* Bounds on a scene's numbers, checked where they are read (docs/scene-format.md, "Limits"). */
#define MR_SCENE_TIMESTEP_MIN 1e-9  /* s: smallest time step */
#define MR_SCENE_STEPS_MAX 1e9      /* most steps in a run: duration / timestep */
#define MR_SCENE_MAX_CONTACTS 10000 /* largest contact.max_contacts: G is (3n)² doubles */
#define MR_SCENE_MARGIN_MAX 1e3     /* m: largest contact.margin */

/* a body of the scene file */
typedef struct {
  char name[MR_NAME_MAX];
  int fixed;        /* 1: geometries attached to the world */
  int body;         /* index in the model (0 for a fixed body) */
  int idx_q, idx_v; /* first index in q and v (-1 for a fixed body) */
} mr_scene_body;

/* a robot: its slice of the model and state, and its PD posture controller */
/* A sinusoidal offset of one joint's PD target: q_t += amplitude sin(2π frequency t + phase). */
typedef struct {
  int idx_q, idx_v; /* the joint's coordinate and dof in the robot's q and v slices */
  double amplitude; /* rad (or m for a prismatic joint) */
  double frequency; /* Hz */
  double phase;     /* rad */
} mr_scene_sine;

typedef struct {
  char name[MR_NAME_MAX];
  char urdf[MR_SCENE_PATH_MAX]; /* resolved path */
  int floating;                 /* 1: free-flyer base */
  int self_collision;           /* 1: the robot's own geometries collide with each other
                                   (default 0: only with other bodies and robots) */
  int first_body, nbodies;      /* model bodies [first_body, first_body + nbodies) */
  int idx_q, idx_v, nq, nv;     /* slice of the scene's q and v */
  int pd;                       /* 1 when a pd block was given */
  double *kp;                   /* [nv] proportional gains, N m / rad (0 on the free-flyer) */
  double *kd;                   /* [nv] derivative gains, N m s / rad (0 on the free-flyer) */
  double *q_target;             /* [nq] target configuration (default: the initial one) */
  int nsines;                   /* time-varying targets: sine offsets (pd.sine), e.g. a gait */
  mr_scene_sine *sines;
  int joint_limits; /* 1 (default): the URDF position limits of its 1-dof joints are
                       unilateral constraints of the contact problem */
  double *torque;   /* [nv] commanded joint torques, N m or N (default 0), clamped
                       with the PD torque to the URDF effort limits */
} mr_scene_robot;

/* a bilateral point constraint (the scene's constraints list): the point anchor1 of body1 and
 * the point anchor2 of body2 (0 = the world) coincide; λ ∈ R³ */
typedef struct {
  char body1_name[MR_NAME_MAX], body2_name[MR_NAME_MAX];
  int body1, body2; /* model body indices (0 = world) */
  int world_point;  /* 1 (type point): anchors from a world point at the initial configuration,
                       computed by the simulator; 0 (type loop): anchors given */
  mr_vec3 point;    /* type point: the world point (m) */
  mr_vec3 anchor1;  /* the point in body1's frame (m; type point: set by mr_sim_create) */
  mr_vec3 anchor2;  /* the point in body2's frame */
  double baumgarte; /* fraction of the position error removed per step, [0, 1] (default 1) */
} mr_scene_constraint;

/* a named material */
typedef struct {
  char name[MR_NAME_MAX];
  double friction, restitution, compliance;
  double tangential_compliance;
} mr_scene_material;

/* contact parameters overriding the combination rule for one pair (of geometries or bodies) */
typedef struct {
  char a[MR_NAME_MAX], b[MR_NAME_MAX]; /* the names as written */
  int geom_a, geom_b;                  /* geometry indices, or -1 when the side names a body */
  int body_a, body_b; /* model body indices, or -1 when the side names a geometry */
  double friction, restitution, compliance; /* NAN when not given */
  double tangential_compliance;             /* NAN when not given */
} mr_scene_pair;

typedef enum {
  MR_FORCE_CONSTANT = 0, /* f0 (torque t0) over [start, start + duration) */
  MR_FORCE_RAMP, /* 0 before start; f0 → f1 linearly over [start, start + duration]; f1 after */
  MR_FORCE_SINE, /* f0 + f1 sin(2π frequency (t − start) + phase) over [start, start + duration) */
  MR_FORCE_IMPULSE /* f0 over [start, start + duration): impulse f0 · duration */
} mr_force_type;

/* an external force on a body, a function of time; world frame, applied at the body origin */
typedef struct {
  int body; /* model body index */
  char body_name[MR_NAME_MAX];
  mr_force_type type;
  double start, duration;  /* s; duration INFINITY when open-ended */
  mr_vec3 f0, f1;          /* N: constant/impulse value; ramp from/to; sine offset/amplitude */
  mr_vec3 t0, t1;          /* N m: torques, same roles as f0, f1 */
  double frequency, phase; /* sine: Hz, rad */
} mr_scene_force;

/* contact options */
typedef struct {
  double margin;                /* m: contacts are generated below this distance (default 0) */
  double baumgarte;             /* k_B in [0, 1] (default 0) */
  double restitution_threshold; /* m/s: no bounce below this approach speed (default 0.01) */
  int max_contacts;             /* bound on simultaneous contacts, 0 = derived (default 0) */
  double limit_margin; /* rad or m: a joint limit enters the problem when the joint is closer
                          than this (plus 2 Δt |v|) to its bound (default 0.01) */
} mr_scene_contact;

/* what to record */
typedef struct {
  int every;                          /* record every N steps (default 1) */
  int contact_forces;                 /* record contact points and forces (default 0) */
  int solver_stats;                   /* record iterations and criteria (default 1) */
  int energy;                         /* record kinetic and potential energy (default 1) */
  char trajectory[MR_SCENE_PATH_MAX]; /* CSV path, "" = none (default "") */
  char contacts[MR_SCENE_PATH_MAX];   /* CSV path of contact forces, "" = none */
  char summary[MR_SCENE_PATH_MAX];    /* JSON summary path, "" = none */
} mr_scene_record;

typedef struct {
  char path[MR_SCENE_PATH_MAX]; /* the scene file */
  mr_model *model;              /* combined model (gravity set) */
  double *q0, *v0;              /* [model->nq], [model->nv] initial state */
  double timestep, duration;    /* s */
  char solver[32];              /* solver name (default "ncp-pgs") */
  mr_solver_settings settings;
  mr_scene_contact contact;
  int nbodies;
  mr_scene_body *bodies;
  int nrobots;
  mr_scene_robot *robots;
  int nmaterials;
  mr_scene_material *materials;
  int npairs;
  mr_scene_pair *pairs;
  int nforces;
  mr_scene_force *forces;
  int nconstraints;
  mr_scene_constraint *constraints;
  mr_scene_record record;
  int nwarnings;                  /* load warnings (a collision mesh far from convex: collision
                                     uses its hull) */
  char warning[MR_ERROR_MSG_MAX]; /* the last one */
} mr_scene;

/* Load a scene. On failure the scene is left empty (safe to mr_scene_free) and err names
 * file:line:column, the key and the offending value. */
mr_status mr_scene_load(const char *path, mr_scene *scene, mr_error *err);
/* The same from text; name is used in messages and relative paths resolve against dir (NULL:
 * the current directory). */
mr_status mr_scene_parse(const char *text, const char *name, const char *dir, mr_scene *scene,
                         mr_error *err);
void mr_scene_free(mr_scene *scene);

/* Force k at time t, world frame, applied at the origin of forces[k].body. */
void mr_scene_force_at(const mr_scene *s, int k, double t, mr_vec3 *force, mr_vec3 *torque);

/* Contact parameters of the geometry pair (g1, g2): the pair override if one matches (geometry
 * names first, then body names), otherwise friction sqrt(μ1 μ2), restitution max(e1, e2),
 * compliance R1 + R2. Returns 1 when an override was used. */
int mr_scene_pair_params(const mr_scene *s, int g1, int g2, double *friction, double *restitution,
                         double *compliance);
/* The tangential compliance of the pair (g1, g2): the override's `tangential_compliance` if the
 * override that mr_scene_pair_params picks gives one, otherwise R_T1 + R_T2. Returns 1 when an
 * override's value was used. */
int mr_scene_pair_tangential_compliance(const mr_scene *s, int g1, int g2, double *compliance);

/* Set one field of s by its C name from text (for command-line overrides), with the same
 * parsing and range rules as the scene's solver block. */
mr_status mr_scene_settings_set(mr_solver_settings *s, const char *field, const char *value,
                                mr_error *err);

/* The number of steps of a run, round(duration / timestep). Fails with MR_ERR_INVALID when
 * the time step is below MR_SCENE_TIMESTEP_MIN, the count exceeds MR_SCENE_STEPS_MAX, or a
 * positive duration rounds to no step; the message names the two values. */
mr_status mr_scene_step_count(double timestep, double duration, long *steps, mr_error *err);

/* Levenshtein distance between two strings (for "did you mean" suggestions). */
int mr_edit_distance(const char *a, const char *b);

#endif
