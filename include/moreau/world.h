/* The world: the compiled, immutable description of everything a simulation steps — the
 * kinematic tree with its geometries (mr_model, materials already resolved into each geometry's
 * friction, restitution and compliance), per-pair contact overrides, robots with their PD
 * controllers and named postures, external forces over time, point constraints, the initial
 * state and the step settings. It is the "model" half of MuJoCo's model/data split
 * (DESIGN.md §1): a loader fills it (mr_world_load, or mr_scene_compile from a loaded scene),
 * nothing changes it afterwards, and any number of simulators (mr_sim, one per thread) may read
 * one world at the same time. Everything a step writes, and every control a user changes,
 * lives in the simulator.
 *
 * Layering of the names: mr_model is the kinematic tree alone (model.h) and mr_data the memory
 * of the dynamics algorithms (dynamics.h); mr_world wraps one mr_model with the rest of the
 * scene; mr_sim (sim.h) owns one mr_data plus the collision, contact and control state.
 *
 * Indices: bodies are model body indices (0 = the world body); a dof is an index into v
 * (model->nv) and a coordinate an index into q (model->nq). A robot's joint "FL_KFE" is named
 * "ROBOT/FL_KFE" in the world. Units SI; forces in the world frame. */
#ifndef MOREAU_WORLD_H
#define MOREAU_WORLD_H

#include "moreau/contact.h"
#include "moreau/model.h"

#define MR_PATH_MAX 1024

struct mr_sim; /* sim.h */

/* a body of the scene file */
typedef struct {
  char name[MR_NAME_MAX];
  int fixed;        /* 1: geometries attached to the world */
  int body;         /* index in the model (0 for a fixed body) */
  int idx_q, idx_v; /* first index in q and v (-1 for a fixed body) */
} mr_world_body;

/* A sinusoidal offset of one joint's PD target: q_t += amplitude sin(2π frequency t + phase). */
typedef struct {
  int idx_q, idx_v; /* the joint's coordinate and dof in the robot's q and v slices */
  double amplitude; /* rad (or m for a prismatic joint) */
  double frequency; /* Hz */
  double phase;     /* rad */
} mr_world_sine;

/* A named posture of a robot (an SRDF group_state): the robot's initial configuration with the
 * group_state's joint values applied (root_joint included for a floating base). */
typedef struct {
  char name[MR_NAME_MAX];
  double *q; /* [robot nq] */
} mr_world_posture;

/* a robot: its slice of the model and state, and its PD posture controller */
typedef struct {
  char name[MR_NAME_MAX];
  char urdf[MR_PATH_MAX];   /* resolved path */
  int floating;             /* 1: free-flyer base */
  int self_collision;       /* 1: the robot's own geometries collide with each other
                               (default 0: only with other bodies and robots) */
  int first_body, nbodies;  /* model bodies [first_body, first_body + nbodies) */
  int idx_q, idx_v, nq, nv; /* slice of the world's q and v */
  int pd;                   /* 1 when a pd block was given */
  double *kp;               /* [nv] proportional gains, N m / rad (0 on the free-flyer) */
  double *kd;               /* [nv] derivative gains, N m s / rad (0 on the free-flyer) */
  double *q_target;         /* [nq] target configuration (default: the initial one) */
  int nsines;               /* time-varying targets: sine offsets (pd.sine), e.g. a gait */
  mr_world_sine *sines;
  int joint_limits;          /* 1 (default): the URDF position limits of its 1-dof joints are
                                unilateral constraints of the contact problem */
  double *spring_k, *spring_ref; /* [nv] joint springs τ = k (ref − q) (N m/rad, N/m; rad,
                                    m) of an MJCF model, folded into the PD gains and targets
                                    (actuator.h); NULL when it has none */
  double *torque;            /* [nv] commanded joint torques, N m or N (default 0), clamped
                                with the PD torque to the URDF effort limits */
  char controller[16];       /* the controller the scene declares for the robot ("" none, "mpc":
                                the locomotion MPC) */
  void *controller_settings; /* its settings (for "mpc" an mr_mpc_settings), data here */
  size_t controller_size;    /* bytes of controller_settings */
  /* attaches that controller to a new simulator: set by the layer that made the world (the
   * scene loader sets the control layer's, mpc.h), called by mr_sim_create; NULL: none */
  mr_status (*controller_attach)(struct mr_sim *s, int robot, mr_error *err);
  int npostures; /* the SRDF's named postures (0 without an SRDF file) */
  mr_world_posture *postures;
} mr_world_robot;

/* a bilateral point constraint: the point anchor1 of body1 and the point anchor2 of body2
 * (0 = the world) coincide; λ ∈ R³ */
typedef struct {
  char body1_name[MR_NAME_MAX], body2_name[MR_NAME_MAX];
  int body1, body2; /* model body indices (0 = world) */
  int world_point;  /* 1 (type point): anchors from a world point at the initial configuration,
                       computed by the simulator; 0 (type loop): anchors given */
  mr_vec3 point;    /* type point: the world point (m) */
  mr_vec3 anchor1;  /* the point in body1's frame (m; type point: set by the simulator) */
  mr_vec3 anchor2;  /* the point in body2's frame */
  double baumgarte; /* fraction of the position error removed per step, [0, 1] (default 1) */
} mr_world_constraint;

/* contact parameters overriding the combination rule for one pair (of geometries or bodies) */
typedef struct {
  char a[MR_NAME_MAX], b[MR_NAME_MAX]; /* the names as written */
  int geom_a, geom_b;                  /* geometry indices, or -1 when the side names a body */
  int body_a, body_b; /* model body indices, or -1 when the side names a geometry */
  double friction, restitution, compliance; /* NAN when not given */
  double tangential_compliance;             /* NAN when not given */
  double stiffness, dissipation; /* N/m and s (docs/physics.md, "Stiffness and dissipation");
                                  * NAN when not given; exclusive with compliance */
} mr_world_pair;

/* A limit on a linear combination of two 1-dof joints of a robot (an MJCF fixed tendon of two
 * joints with a range): lower <= q[coord] − ratio q[coord2] <= upper, a unilateral constraint of
 * the contact problem like a joint limit (sim.h), active when the robot's joint_limits is. With
 * ratio 0 it bounds the first joint alone. */
typedef struct {
  int robot;           /* the robot it belongs to */
  int dof, dof2;       /* the two joints' dofs (indices into v) */
  double ratio;        /* 0: dof alone */
  double lower, upper; /* rad or m (of the first joint's unit) */
} mr_world_coupled_limit;

/* An actuator (MJCF <motor>, <position>, <velocity>, <general>; docs/mjcf.md): a scalar control
 * u (clamped to ctrlrange when ctrllimited) gives the force F = gain u + bias[0] + bias[1] L +
 * bias[2] L', where L = Σ arm_k q_k is the actuator's length and L' its rate, and the force acts
 * on its dofs as τ_k = arm_k F. Motor: bias 0; position: gain kp, bias (0, −kp, 0); velocity:
 * gain kv, bias (0, 0, −kv). The terms in L and L' act as implicit PD gains (k_p = −bias[1]
 * arm², k_d = −bias[2] arm²), so they need a single dof. */
#define MR_ACTUATOR_DOFS_MAX 16
typedef struct {
  char name[MR_NAME_MAX];
  char type[16];                    /* "motor", "position", "velocity" or "general" */
  int ndofs;                        /* dofs it drives (1 for a joint, more for a fixed tendon) */
  int dof[MR_ACTUATOR_DOFS_MAX];    /* their indices in v */
  double arm[MR_ACTUATOR_DOFS_MAX]; /* moment arm on each: gear x tendon coefficient */
  double gain;                      /* N per unit of control (N m for a hinge arm of 1) */
  double bias[3];                   /* N, N/m (or N/rad), N s/m */
  int ctrllimited;                  /* 1: u is clamped to ctrlrange */
  double ctrlrange[2];
} mr_world_actuator;

/* A named initial state of a robot (MJCF <key>): its configuration, velocity and controls. */
typedef struct {
  char name[MR_NAME_MAX]; /* "ROBOT/NAME" */
  int robot;              /* the robot it sets */
  double time;            /* s */
  double *q;              /* [robot nq] */
  double *v;              /* [robot nv] */
  int first_actuator;     /* its controls: actuators first_actuator ... + nctrl − 1 */
  int nctrl;
  double *ctrl; /* [nctrl] */
} mr_world_keyframe;

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
} mr_world_force;

/* contact options */
typedef struct {
  double margin;                /* m: contacts are generated below this distance (default 0) */
  double baumgarte;             /* k_B in [0, 1] (default 0) */
  double restitution_threshold; /* m/s: no bounce below this approach speed (default 0.01) */
  int max_contacts;             /* bound on simultaneous contacts, 0 = derived (default 0) */
  double limit_margin; /* rad or m: a joint limit enters the problem when the joint is closer
                          than this (plus 2 Δt |v|) to its bound (default 0.01) */
  int speculative;     /* 1 (default): speculative contacts, each moving geometry's detection
                          distance grows by its reach over the step (mr_collision_set_motion) */
  double band;         /* δ (m): penetrations up to δ are removed within one step, deeper ones
                          at δ/Δt plus k_B of the excess (default 1e-4; assembly.h) */
  double rest_depth;   /* d in [0, δ] (m): the depth resting contacts settle at (default
                          1e-12; assembly.h) */
  int no_retry;        /* 1: each island solved once, at the solver's budget (scene key
                          solver.retry: false); 0 (default): a warm solve that did not converge
                          is solved again cold, a failed one again without push-out */
} mr_world_contact;

/* The compiled world. Read-only after mr_world_copy / mr_world_load returns it. */
typedef struct mr_world {
  mr_model *model;           /* the kinematic tree and geometries (gravity set) */
  double *q0, *v0;           /* [model->nq], [model->nv] initial state */
  double timestep, duration; /* s */
  char solver[32];           /* default solver name */
  mr_solver_settings settings;
  mr_world_contact contact;
  int nbodies;
  mr_world_body *bodies;
  int nrobots;
  mr_world_robot *robots;
  int npairs;
  mr_world_pair *pairs;
  int nforces;
  mr_world_force *forces;
  int nconstraints;
  mr_world_constraint *constraints;
  int nactuators;               /* actuators (actuator.h), 0 without an MJCF model */
  mr_world_actuator *actuators;
  int nkeyframes;
  mr_world_keyframe *keyframes;
  int ncoupled_limits;
  mr_world_coupled_limit *coupled_limits;
} mr_world;

/* ---- building and freeing ---- */

/* A deep copy of src (every array and the model are duplicated): this is how a loader turns its
 * parts into a world. NULL with err filled when out of memory. */
mr_world *mr_world_copy(const mr_world *src, mr_error *err);
/* Load a YAML scene file (docs/scene-format.md) into a new world (defined by the scene loader,
 * src/io). NULL with err naming file, line and value on failure. */
mr_world *mr_world_load(const char *path, mr_error *err);
/* free a world and everything it owns; NULL is a no-op */
void mr_world_free(mr_world *w);

/* ---- names ---- */

/* the robot of that name, -1 if none */
int mr_world_robot_index(const mr_world *w, const char *name);
/* the dof (index into v) of the 1-dof joint of that name ("ROBOT/JOINT"), -1 if none */
int mr_world_joint_dof(const mr_world *w, const char *name);
/* the coordinate (index into q) of the 1-dof joint owning dof, -1 if dof is not one */
int mr_world_dof_coordinate(const mr_world *w, int dof);
/* the model body of that name ("ROBOT/LINK", a free scene body, "universe"), -1 if none */
int mr_world_body_index(const mr_world *w, const char *name);
/* the named posture of robot r, NULL if none */
const mr_world_posture *mr_world_posture_find(const mr_world *w, int r, const char *name);

/* sizes, for bindings that do not read the structs (python/moreau) */
typedef struct {
  int nq, nv;      /* configuration and velocity sizes */
  int nbodies;     /* model bodies, the world body 0 included */
  int ngeoms;      /* collision geometries */
  int nrobots;     /* robots */
  double timestep; /* s */
  double duration; /* s, the scene's run length */
} mr_world_info;
/* the world's sizes, time step and duration */
mr_world_info mr_world_get_info(const mr_world *w);
/* the name of body b; NULL out of range */
const char *mr_world_body_name(const mr_world *w, int b);
/* the name of the joint owning dof k; NULL out of range */
const char *mr_world_dof_name(const mr_world *w, int k);
/* the name of geometry g; NULL out of range */
const char *mr_world_geom_name(const mr_world *w, int g);
/* the name of robot r; NULL out of range */
const char *mr_world_robot_name(const mr_world *w, int r);
/* robot r's slices of q and v and its bodies; -1 when r is out of range */
int mr_world_robot_slice(const mr_world *w, int r, int *idx_q, int *nq, int *idx_v, int *nv,
                         int *first_body, int *nbodies);

/* ---- actuators and keyframes (actuator.h) ---- */

/* the number of actuators */
int mr_world_actuator_count(const mr_world *w);
/* the name of actuator a ("ROBOT/NAME"); NULL out of range */
const char *mr_world_actuator_name(const mr_world *w, int a);
/* the actuator of that name, -1 if none */
int mr_world_actuator_index(const mr_world *w, const char *name);
/* the keyframe of that name ("ROBOT/NAME"), -1 if none */
int mr_world_keyframe_index(const mr_world *w, const char *name);
/* The actuation of controls ctrl [nactuators] (NULL: all zero) written into tau, kp, kd [nv]
 * and qt [nq] for the dofs actuators and joint springs act on (formulas in actuator.h); other
 * entries are left as they are. Controls are clamped to their ranges here; they must be
 * finite. */
void mr_world_actuation(const mr_world *w, const double *ctrl, double *tau, double *qt,
                        double *kp, double *kd);

/* ---- evaluation ---- */

/* Force f at time t (s), world frame, applied at the origin of f->body (N, N m). */
void mr_world_force_at(const mr_world_force *f, double t, mr_vec3 *force, mr_vec3 *torque);

/* Contact parameters of the geometry pair (g1, g2): the pair override if one matches (geometry
 * names first, then body names; the last match wins), otherwise friction sqrt(μ1 μ2),
 * restitution max(e1, e2), compliance R1 + R2. Returns 1 when an override was used. */
int mr_world_pair_params(const mr_world *w, int g1, int g2, double *friction, double *restitution,
                         double *compliance);
/* The tangential compliance of the pair: the override's `tangential_compliance` if the override
 * mr_world_pair_params picks gives one, otherwise R_T1 + R_T2. Returns 1 when an override's
 * value was used. */
int mr_world_pair_tangential_compliance(const mr_world *w, int g1, int g2, double *compliance);
/* The stiffness k (N/m) and dissipation time scale τ_d (s) of the pair (g1, g2) when it is a
 * stiffness contact: the override's `stiffness` (and `dissipation`, default 0) if the override
 * gives one, else from the geometries' (a geometry without stiffness is rigid: k = k₁ k₂ /
 * (k₁ + k₂) in series, the given side's alone when one is rigid; τ_d = τ₁ + τ₂ of the sides
 * with a stiffness). Returns 1 and fills k, tau when the pair has a stiffness; 0 (k = tau = 0)
 * when it has none, or the override gives a compliance. */
int mr_world_pair_stiffness(const mr_world *w, int g1, int g2, double *k, double *tau);

/* the world's kinematic tree */
const mr_model *mr_world_model(const mr_world *w);

#endif
