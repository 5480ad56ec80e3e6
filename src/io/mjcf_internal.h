/* Shared state of the MJCF loader's files (docs/mjcf.md is the reference):
 *   mjcf.c          documents, <include>, messages, attribute readers, the file's sections
 *   mjcf_schema.c   the element and attribute names MuJoCo 2.2.2 accepts, and what moreau does
 *                   with each element (use, ignore, refuse)
 *   mjcf_element.c  default classes and the attributes of joints, geoms, sites, actuators,
 *                   tendons, pairs (MuJoCo's defaults, then the class, then the element)
 *   mjcf_compile.c  the bodies as MuJoCo's compiler leaves them: frames, geom sizes, masses and
 *                   inertias, joints, settotalmass
 *   mjcf_model.c    the compiled bodies as an mr_model (multi-joint bodies as chains, static
 *                   bodies merged), collision filters, friction overrides
 *   mjcf_scene.c    the model as a robot of a scene: actuators, springs, keyframes, options
 *
 * Angles are converted to radians where MuJoCo converts them (compiler angle="degree"). Object
 * ids (bodies, joints, geoms, sites) are MuJoCo's: pre-order over the body tree, document order
 * inside a body. */
#ifndef MOREAU_IO_MJCF_INTERNAL_H
#define MOREAU_IO_MJCF_INTERNAL_H

#include <libxml/tree.h>

#include "moreau/mjcf.h"
#include "moreau/scene.h"

/* MuJoCo's constants (mjmodel.h, user_util.h) */
#define MJ_PI 3.14159265358979323846
#define MJ_MINVAL 1e-15
#define MJ_EPS 1e-14

enum { MJ_FREE = 0, MJ_BALL, MJ_SLIDE, MJ_HINGE };
enum { MJ_PLANE = 0, MJ_HFIELD, MJ_SPHERE, MJ_CAPSULE, MJ_ELLIPSOID, MJ_CYLINDER, MJ_BOX, MJ_MESH };
enum {
  MJ_TRN_NONE = 0,
  MJ_TRN_JOINT,
  MJ_TRN_JOINTINPARENT,
  MJ_TRN_TENDON,
  MJ_TRN_SLIDERCRANK,
  MJ_TRN_SITE,
  MJ_TRN_BODY
};
enum { MJ_DYN_NONE = 0, MJ_DYN_INTEGRATOR, MJ_DYN_FILTER, MJ_DYN_MUSCLE, MJ_DYN_USER };
enum { MJ_GAIN_FIXED = 0, MJ_GAIN_AFFINE, MJ_GAIN_MUSCLE, MJ_GAIN_USER };
enum { MJ_BIAS_NONE = 0, MJ_BIAS_AFFINE, MJ_BIAS_MUSCLE, MJ_BIAS_USER };
enum { MJ_AUTO = 2 }; /* limited / ctrllimited ... : false, true, auto */

/* <option><flag>: the disable bits MuJoCo names */
enum {
  MJ_DSBL_CONSTRAINT = 1 << 0,
  MJ_DSBL_EQUALITY = 1 << 1,
  MJ_DSBL_FRICTIONLOSS = 1 << 2,
  MJ_DSBL_LIMIT = 1 << 3,
  MJ_DSBL_CONTACT = 1 << 4,
  MJ_DSBL_PASSIVE = 1 << 5,
  MJ_DSBL_GRAVITY = 1 << 6,
  MJ_DSBL_CLAMPCTRL = 1 << 7,
  MJ_DSBL_WARMSTART = 1 << 8,
  MJ_DSBL_FILTERPARENT = 1 << 9,
  MJ_DSBL_ACTUATION = 1 << 10,
  MJ_DSBL_REFSAFE = 1 << 11,
  MJ_DSBL_SENSOR = 1 << 12
};
enum { MJ_ENBL_OVERRIDE = 1 << 0 };

#define MJ_NPRM 10 /* dynprm, gainprm, biasprm */
#define MJ_NAME 96 /* longest name kept (MR_NAME_MAX) */
#define MJ_MAX_TENDON_JOINTS 16

/* orientation alternatives of a frame; NAN in [0] when not given */
typedef struct {
  double axisangle[4], xyaxes[6], zaxis[3], euler[3], fullinertia[6];
} mj_alt;

/* ---- the fields default classes carry ---- */

typedef struct {
  int type, group, limited;
  double pos[3], axis[3], range[2], springdamper[2];
  double stiffness, margin, ref, springref, armature, damping, frictionloss;
} mj_joint;

typedef struct {
  int type, contype, conaffinity, condim, group, priority, fluidshape, shellinertia;
  double size[3], friction[3], solmix, margin, gap, mass, density, fitscale;
  double fromto[6], pos[3], quat[4];
  mj_alt alt;
  char mesh[MJ_NAME], hfield[MJ_NAME];
} mj_geom;

typedef struct {
  int type, group;
  double size[3], pos[3], quat[4], fromto[6];
  mj_alt alt;
} mj_site;

typedef struct {
  int ctrllimited, forcelimited, actlimited, dyntype, gaintype, biastype, group;
  double ctrlrange[2], forcerange[2], actrange[2], lengthrange[2], gear[6], cranklength;
  double dynprm[MJ_NPRM], gainprm[MJ_NPRM], biasprm[MJ_NPRM];
} mj_actuator;

typedef struct {
  int limited, group;
  double range[2], margin, stiffness, damping, frictionloss, springlength, width;
} mj_tendon;

typedef struct {
  int condim;
  double friction[5], margin, gap;
} mj_pair;

/* a default class (MuJoCo's mjCDef): a nested class starts as a copy of its parent */
typedef struct {
  char name[MJ_NAME];
  int parent;
  mj_joint joint;
  mj_geom geom;
  mj_site site;
  mj_actuator actuator;
  mj_tendon tendon;
  mj_pair pair;
  int eq_active;
  double mesh_scale[3];
} mj_class;

/* ---- elements of the file ---- */

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int id, body;
  mj_joint j;
  double locpos[3], locaxis[3]; /* compiled: anchor and axis in the body frame */
} mj_joint_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int id, body;
  mj_geom g;
  int mesh_id, hfield_id;
  double mass, inertia[3];      /* compiled (the class's mass is g.mass, NAN when not given) */
  double locpos[3], locquat[4]; /* compiled: frame in the body frame */
} mj_geom_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int id, body;
  mj_site s;
  double locpos[3], locquat[4]; /* compiled: frame in the body frame */
} mj_site_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int id, parent, cls; /* cls: the class its elements default to (childclass, inherited) */
  int has_pos, mocap, explicit_inertial;
  double pos[3], quat[4], ipos[3], iquat[4], mass, inertia[3];
  mj_alt alt, ialt;
  int njoints, ngeoms, nsites, cap_j, cap_g, cap_s;
  mj_joint_el *joints;
  mj_geom_el *geoms;
  mj_site_el *sites;
  /* compiled: the frame in the parent body, the inertial frame in the body */
  double locpos[3], locquat[4], locipos[3], lociquat[4];
  int weld; /* the body it is welded to (itself when it has joints, 0 for the world) */
} mj_body;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int kind; /* 0 fixed, 1 spatial */
  mj_tendon t;
  int njoints;
  char joint[MJ_MAX_TENDON_JOINTS][MJ_NAME];
  double coef[MJ_MAX_TENDON_JOINTS];
} mj_tendon_el;

typedef struct {
  char name[MJ_NAME], type[16];
  const xmlNode *node;
  mj_actuator a;
  int trntype;
  char target[MJ_NAME];
} mj_actuator_el;

typedef struct {
  char name[MJ_NAME], type[16], obj1[MJ_NAME], obj2[MJ_NAME];
  const xmlNode *node;
  int active;
  double polycoef[5];
} mj_equality_el;

typedef struct {
  char name[MJ_NAME], geom1[MJ_NAME], geom2[MJ_NAME];
  const xmlNode *node;
  mj_pair p;
} mj_pair_el;

typedef struct {
  char body1[MJ_NAME], body2[MJ_NAME];
  const xmlNode *node;
} mj_exclude_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  double time;
  int nqpos, nqvel, nctrl, nact, nmpos;
  double *qpos, *qvel, *ctrl;
} mj_key_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
  int nrow, ncol;
  double size[4];
  char file[MR_PATH_MAX];
} mj_hfield_el;

typedef struct {
  char name[MJ_NAME];
  const xmlNode *node;
} mj_mesh_el;

/* an element kind moreau ignores, counted for the one warning (name and first occurrence) */
typedef struct {
  const char *what;
  int count;
  const xmlNode *first;
} mj_ignored;

#define MJ_MAX_IGNORED 48

typedef struct {
  const char *file;      /* the main file, as given */
  char dir[MR_PATH_MAX]; /* its directory with a trailing '/', "" for the current one */
  const mr_mjcf_options *opt;
  mr_error *err;
  xmlDoc *doc;
  int ndocs;
  xmlDoc **docs;   /* included documents, kept for their nodes' file names */
  char **included; /* their paths */
  char model_name[MJ_NAME];

  /* <compiler> */
  int degree, global, autolimits, inertiafromgeom, balanceinertia, discardvisual, strippath;
  int inertiagrouprange[2];
  double boundmass, boundinertia, settotalmass;
  char eulerseq[4], meshdir[MR_PATH_MAX];

  /* <option> */
  const xmlNode *option_node; /* the last <option>, for messages */
  double timestep, gravity[3], wind[3], density, viscosity, o_margin;
  int integrator, cone, collision, disable, enable;

  /* defaults, then the file's objects */
  int nclasses, cap_classes;
  mj_class *classes;
  int nbodies, cap_bodies;
  mj_body *bodies;
  int ntendons, nactuators, nequalities, npairs, nexcludes, nkeys, nhfields, nmeshes;
  int cap_tendons, cap_actuators, cap_equalities, cap_pairs, cap_excludes, cap_keys, cap_hfields,
      cap_meshes;
  mj_tendon_el *tendons;
  mj_actuator_el *actuators;
  mj_equality_el *equalities;
  mj_pair_el *pairs;
  mj_exclude_el *excludes;
  mj_key_el *keys;
  mj_hfield_el *hfields;
  mj_mesh_el *meshes;
  int njoints, ngeoms, nsites; /* MuJoCo's counts (ids) */

  /* what is ignored, for the one summary warning; the first soft-constraint parameter */
  int nignored;
  mj_ignored ignored[MJ_MAX_IGNORED];
  const xmlNode *soft_first;
  char soft_attr[32];
} mj_ctx;

/* ---- mjcf.c: messages and attributes ---- */

/* "FILE:LINE: <element name="N">: message" as err; returns st */
mr_status mj_fail(mj_ctx *c, const xmlNode *n, mr_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* the file a node comes from (included files keep their own name) */
const char *mj_file_of(const mj_ctx *c, const xmlNode *n);
long mj_line_of(const xmlNode *n);
/* the error status in c->err */
mr_status mj_status(const mj_ctx *c);
/* record an ignored element kind (one summary warning lists them) */
void mj_ignore(mj_ctx *c, const xmlNode *n, const char *what);

/* attribute readers with MuJoCo's rules: absent → 0 returned and *out unchanged; present →
 * the count read (numbers: at most n, exactly n when exact; too many is an error) */
int mj_has(const xmlNode *n, const char *attr);
mr_status mj_read(mj_ctx *c, const xmlNode *n, const char *attr, double *out, int len, int exact,
                  int *count);
mr_status mj_read_int(mj_ctx *c, const xmlNode *n, const char *attr, int *out);
mr_status mj_read_text(mj_ctx *c, const xmlNode *n, const char *attr, char *out, size_t len,
                       int *found);
/* a keyword among names (NULL-terminated) with values vals; -1 names the allowed ones */
mr_status mj_read_keyword(mj_ctx *c, const xmlNode *n, const char *attr, const char *const *names,
                          const int *vals, int *out);
mr_status mj_read_bool(mj_ctx *c, const xmlNode *n, const char *attr, int *out);
/* false / true / auto into 0 / 1 / 2 */
mr_status mj_read_tfauto(mj_ctx *c, const xmlNode *n, const char *attr, int *out);
/* the orientation alternatives of an element; more than one of quat, axisangle, xyaxes, zaxis,
 * euler, fullinertia is an error */
mr_status mj_read_alt(mj_ctx *c, const xmlNode *n, mj_alt *alt, int with_fullinertia);
/* the element children of n, in order */
const xmlNode *mj_first(const xmlNode *n);
const xmlNode *mj_next(const xmlNode *n);
int mj_is(const xmlNode *n, const char *name);
const char *mj_name(const xmlNode *n);

/* ---- mjcf_schema.c ---- */

/* check element names and attributes against MuJoCo 2.2.2's schema (the whole tree below
 * root, includes expanded) */
mr_status mj_schema_check(mj_ctx *c, const xmlNode *root);

/* ---- mjcf_element.c ---- */

void mj_class_init(mj_class *d);
mr_status mj_parse_defaults(mj_ctx *c, const xmlNode *def, int parent);
/* the class named by an element's class attribute, or fallback */
mr_status mj_class_of(mj_ctx *c, const xmlNode *n, int fallback, int *cls);
int mj_class_find(const mj_ctx *c, const char *name);
mr_status mj_joint_attrs(mj_ctx *c, const xmlNode *n, mj_joint *j);
mr_status mj_geom_attrs(mj_ctx *c, const xmlNode *n, mj_geom *g);
mr_status mj_site_attrs(mj_ctx *c, const xmlNode *n, mj_site *s);
mr_status mj_actuator_attrs(mj_ctx *c, const xmlNode *n, mj_actuator_el *a);
mr_status mj_tendon_attrs(mj_ctx *c, const xmlNode *n, mj_tendon *t);
mr_status mj_pair_attrs(mj_ctx *c, const xmlNode *n, mj_pair *p);
/* note the soft-constraint attributes of n (solref, solimp, ...) */
void mj_note_soft(mj_ctx *c, const xmlNode *n);

/* ---- mjcf_compile.c ---- */

/* MuJoCo's compiler on the bodies: frames, geoms, inertias, joints; then settotalmass */
mr_status mj_compile(mj_ctx *c);
/* quaternion (w x y z) of an alternative orientation, when one is given (returns 1) */
int mj_alt_set(mj_ctx *c, const xmlNode *n, mj_alt *alt, double quat[4], double inertia[3],
               mr_status *st);
void mj_quat2mat(const double q[4], double R[9]);
void mj_mulquat(double res[4], const double a[4], const double b[4]);
void mj_rotvec(double res[3], const double q[4], const double v[3]);
double mj_normvec(double *v, int n);

/* ---- mjcf_model.c ---- */

/* the intermediate result of a file: the model (names unprefixed) and what the scene needs */
typedef struct {
  mr_model *model;
  double *q0;            /* [nq] qpos0 in moreau's layout */
  int *body_of_mj;       /* [nbodies of the file] the model body carrying each MuJoCo body */
  mr_se3 *content_of_mj; /* [nbodies] the MuJoCo body's frame in that model body's frame */
  int *dof_of_joint;     /* [njoints] first dof (index into v) of each MuJoCo joint */
  int *coord_of_joint;   /* [njoints] first coordinate (index into q) */
  int *type_of_joint;    /* [njoints] MJ_FREE ... */
  int *geom_of_mj;       /* [ngeoms] model geometry, -1 when not a collision geometry */
  double *spring_k, *spring_ref; /* [nv] joint springs (hinge and slide) */
  double *frictionloss;          /* [nv] each dof's frictionloss as written */
  int nactuators;
  mr_world_actuator *actuators;
  int nkeys;
  mr_world_keyframe *keys;
  int npairs;
  mr_world_pair *pairs; /* friction overrides (names unprefixed, indices of model) */
  int nconstraints;
  mr_world_constraint *constraints; /* <equality><connect> (body names unprefixed) */
  int nlimits;
  mr_world_coupled_limit *limits; /* limited fixed tendons (robot 0, model dofs) */
  int floating;                   /* the first tree has a free joint */
  int contact_off;                /* contacts disabled (option flag) */
  int limits_off;                 /* joint limits disabled */
} mj_result;

mr_status mj_build_model(mj_ctx *c, mj_result *r);
mr_status mj_build_contacts(mj_ctx *c, mj_result *r);
void mj_result_free(mj_result *r);

/* ---- mjcf_scene.c ---- */

mr_status mj_build_actuation(mj_ctx *c, mj_result *r);
mr_status mj_build_keys(mj_ctx *c, mj_result *r);

/* the scene side (mjcf_scene.c): append the file's model to scene s as robot `robot` (its
 * roots placed at place), with its actuators, springs, keyframes, pairs and constraints; q0 and
 * v0 are reallocated to the new sizes (*cap_q, *cap_v when not NULL receive their capacities).
 * Warnings go to opt->warn and are counted in s->nwarnings / s->warning. */
mr_status mj_scene_add_robot(mr_scene *s, const char *path, const mr_mjcf_options *opt,
                             mr_se3 place, int *cap_q, int *cap_v, double *timestep, mr_error *err);

/* ---- the whole file ---- */

/* parse and compile path into r (the caller frees it with mj_result_free); options as given */
mr_status mj_load_result(const char *path, const mr_mjcf_options *opt, mj_result *r, mj_ctx *c,
                         mr_error *err);
/* free what a context holds (after mj_load_result, whatever its status) */
void mj_ctx_free(mj_ctx *c);

#endif
