/* Scenes: a YAML file (docs/scene-format.md) describing free and fixed bodies, robots loaded from
 * URDF, materials, external forces, the solver and its settings, the time step and what to
 * record. mr_scene_load reads it into one combined mr_model plus the initial state and the
 * options a simulation run needs; it does not step anything. mr_scene_compile turns a loaded
 * scene (after any overrides, e.g. the command line's --dt) into the immutable mr_world that
 * simulators read (world.h); the scene keeps what only a run needs (record paths, warnings).
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
#include "moreau/world.h"

#define MR_SCENE_PATH_MAX MR_PATH_MAX

/* Bounds on a scene's numbers, checked where they are read (docs/scene-format.md, "Limits"). */
#define MR_SCENE_TIMESTEP_MIN 1e-9  /* s: smallest time step */
#define MR_SCENE_STEPS_MAX 1e9      /* most steps in a run: duration / timestep */
#define MR_SCENE_MAX_CONTACTS 10000 /* largest contact.max_contacts: G is (3n)² doubles */
#define MR_SCENE_MARGIN_MAX 1e3     /* m: largest contact.margin */
#define MR_SCENE_BAND_MAX 0.1       /* m: largest contact.band */

/* The scene's parts are the world's (world.h): mr_scene_compile copies them into a world. */
typedef mr_world_body mr_scene_body;
typedef mr_world_sine mr_scene_sine;
typedef mr_world_robot mr_scene_robot;
typedef mr_world_constraint mr_scene_constraint;
typedef mr_world_pair mr_scene_pair;
typedef mr_world_force mr_scene_force;
typedef mr_world_contact mr_scene_contact;

/* a named material */
typedef struct {
  char name[MR_NAME_MAX];
  double friction, restitution, compliance;
  double tangential_compliance;
  double stiffness, dissipation; /* N/m and s (0: none; docs/physics.md, "Stiffness and
                                  * dissipation") */
} mr_scene_material;

/* what to record */
typedef struct {
  int every;                          /* record every N steps (default 1) */
  int contact_forces;                 /* record contact points and forces (default 0) */
  int solver_stats;                   /* record iterations and criteria (default 1) */
  int energy;                         /* record kinetic and potential energy (default 1) */
  char trajectory[MR_SCENE_PATH_MAX]; /* CSV path, "" = none (default "") */
  char contacts[MR_SCENE_PATH_MAX];   /* CSV path of contact forces, "" = none */
  char summary[MR_SCENE_PATH_MAX];    /* JSON summary path, "" = none */
  int world_velocity; /* trajectory: free-flyers' velocities also in the world frame (0) */
  int poses;          /* trajectory: every body's world pose (default 0) */
  int com;            /* trajectory: every robot's centre of mass (default 0) */
} mr_scene_record;

typedef struct {
  char path[MR_SCENE_PATH_MAX]; /* the scene file */
  mr_model *model;              /* combined model (gravity set) */
  double *q0, *v0;              /* [model->nq], [model->nv] initial state */
  double timestep, duration;    /* s */
  char solver[32];              /* solver name (default "ncp-hybrid") */
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
  int nactuators; /* actuators and keyframes of MJCF models (world.h) */
  mr_world_actuator *actuators;
  int nkeyframes;
  mr_world_keyframe *keyframes;
  int ncoupled_limits; /* limits on two coupled joints (MJCF tendons, world.h) */
  mr_world_coupled_limit *coupled_limits;
  mr_scene_record record;
  int nwarnings;                  /* load warnings (a collision mesh far from convex: collision
                                     uses its hull) */
  char warning[MR_ERROR_MSG_MAX]; /* the last one */
  char default_scene[MR_ERROR_MSG_MAX]; /* a bare URDF loaded as a scene: one line saying what
                                           its default scene holds; "" for a scene file */
} mr_scene;

/* Load a scene. On failure the scene is left empty (safe to mr_scene_free) and err names
 * file:line:column, the key and the offending value. A URDF file (an XML document whose root
 * element is <robot>, or a .urdf file) loads as the robot in its default scene: a ground plane,
 * a floating base unless the root link is the world, the first posture of its SRDF when one is
 * found, no controller, the default solver; default_scene then says so (docs/scene-format.md,
 * "A URDF as a scene"). An XML document whose root element
 * is <mujoco> is an MJCF model (mr_mjcf_load with default options, mjcf.h: the model as one
 * robot with its own timestep, gravity and initial state). Another XML document is
 * MR_ERR_UNSUPPORTED. */
mr_status mr_scene_load(const char *path, mr_scene *scene, mr_error *err);
/* Start a loaded scene from a keyframe of one of its MJCF robots ("ROBOT/NAME", or NAME when
 * one robot has it): the robot's initial q, v and controls become the keyframe's.
 * MR_ERR_INVALID lists the keyframes when the name is unknown. */
mr_status mr_scene_set_keyframe(mr_scene *scene, const char *name, mr_error *err);
/* The same from text; name is used in messages and relative paths resolve against dir (NULL:
 * the current directory). */
mr_status mr_scene_parse(const char *text, const char *name, const char *dir, mr_scene *scene,
                         mr_error *err);
/* free what a loaded scene owns (the struct itself is the caller's) */
void mr_scene_free(mr_scene *scene);

/* The world of a loaded scene: a deep copy of its model, initial state, settings, robots,
 * pairs, forces and constraints. NULL with err filled when out of memory. */
mr_world *mr_scene_compile(const mr_scene *scene, mr_error *err);

/* A simulator (sim.h) on the scene's compiled world, which the simulator owns and frees: the
 * scene may be freed or changed afterwards without effect on it. solver may be NULL (the
 * scene's) or a registry name. NULL with err filled on failure. */
typedef struct mr_sim mr_sim;
mr_sim *mr_sim_from_scene(const mr_scene *scene, const char *solver, mr_error *err);

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

/* The name of the i-th settable field of mr_solver_settings (the keys of a scene's solver block
 * and of mr_scene_settings_set), or NULL when i is past the last. */
const char *mr_scene_settings_field(int i);

/* The number of steps of a run, round(duration / timestep). Fails with MR_ERR_INVALID when
 * the time step is below MR_SCENE_TIMESTEP_MIN, the count exceeds MR_SCENE_STEPS_MAX, or a
 * positive duration rounds to no step; the message names the two values. */
mr_status mr_scene_step_count(double timestep, double duration, long *steps, mr_error *err);

/* Levenshtein distance between two strings (for "did you mean" suggestions). */
int mr_edit_distance(const char *a, const char *b);

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
