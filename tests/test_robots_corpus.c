/* The example-robot-data collection as published ($MOREAU_SHARED/reference/example-robot-data;
 * the test fails when it is absent and CI=true, and is skipped otherwise).
 *
 * Every URDF file of the collection:
 * - loads as `moreau rbd` loads it (mr_urdf_load, collision meshes read), with inertia_fix and
 *   lock_massless only where the file needs them: for those files, loading without the option
 *   must be refused with the inertia or massless-joint message; M(q) and ABA at the neutral
 *   configuration are finite. Files broken as published are refused with their reason.
 * - legged robots (free-flyer) and fixed-root robots (arms, hands, mobile manipulators on their
 *   world root) get a scene written by the test: a ground halfspace, the robot at its SRDF
 *   posture (neutral where there is none), lowered or raised so that its lowest collision point
 *   is on the ground (z = 0), PD gains scaled from its mass and size (see pd_gains), the
 *   default solver (capped at CORPUS_MAX_ITER iterations). The scene loads as `moreau check` loads it (mr_scene_load), and is stepped
 *   2 s (2000 steps of 1 ms) without an error or a non-finite state; a floating base must not
 *   fall (base below half its start height, or its z axis tilted over 60° from the start).
 * Vehicles (drones, underwater vehicles, flying arms) are loaded only.
 *
 * The robots run in parallel worker processes (MOREAU_TEST_JOBS, default 2). With
 * MOREAU_ROBOTS_TABLE=FILE the results are written as the Markdown table of docs/robots.md
 * (`make robots-table`).
 *
 * The MJCF reference models ($MOREAU_SHARED/reference/mjcf): each loads as `moreau check` loads
 * it and steps 1 s with the default solver and zero controls, or is refused with its reason;
 * MOREAU_MJCF_TABLE=FILE writes their table of docs/robots.md. */
#include "test_util.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "moreau/collision.h"
#include "moreau/dynamics.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "moreau/urdf.h"

typedef enum { LOAD_ONLY, FLOATING, FIXED } corpus_kind;

typedef struct {
  const char *file;    /* under example-robot-data/robots */
  corpus_kind kind;    /* what is done with it */
  int fix, lock;       /* the file needs inertia_fix / lock_massless (docs/robots.md) */
  const char *srdf;    /* under robots/, NULL: neutral posture */
  const char *posture; /* a group_state of the SRDF */
  const char *refused; /* a file broken as published: a substring of its error */
  int point_feet;      /* a biped on point feet: statically unstable, it balances by stepping,
                          so it is stepped but not required to stay up */
} corpus_case;

#define FLT FLOATING
#define FIX FIXED
#define VEH LOAD_ONLY
static const corpus_case cases[] = {
    {"a1_description/urdf/a1.urdf", FLT, 0, 0, "a1_description/srdf/a1.srdf", "standing", NULL, 0},
    {"alex_description/urdf/alex_nub_hands.urdf", FIX, 0, 0,
     "alex_description/srdf/alex_nub_hands.srdf", "default", NULL, 0},
    {"alex_description/urdf/alex_psyonic_hands.urdf", FIX, 1, 0,
     "alex_description/srdf/alex_psyonic_hands.srdf", "default",
     "joint \"Left_index_q2\": <mimic> joint=\"index_q1\" does not exist", 0},
    {"alex_description/urdf/alex_sake_hands.urdf", FIX, 0, 0,
     "alex_description/srdf/alex_sake_hands.srdf", "default", NULL, 0},
    {"allegro_hand_description/urdf/allegro_left_hand.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"allegro_hand_description/urdf/allegro_right_hand.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"anymal_b_simple_description/robots/anymal.urdf", FLT, 1, 0,
     "anymal_b_simple_description/srdf/anymal.srdf", "standing", NULL, 0},
    {"anymal_b_simple_description/robots/anymal-kinova.urdf", FLT, 1, 0,
     "anymal_b_simple_description/srdf/anymal-kinova.srdf", "standing_with_arm_up", NULL, 0},
    {"anymal_c_simple_description/urdf/anymal.urdf", FLT, 1, 0,
     "anymal_c_simple_description/srdf/anymal.srdf", "standing", NULL, 0},
    {"asr_twodof_description/urdf/TwoDofs.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"b1_description/urdf/b1.urdf", FLT, 1, 0, "b1_description/srdf/b1.srdf", "standing", NULL, 0},
    {"b1_description/urdf/b1-z1.urdf", FLT, 1, 0, "b1_description/srdf/b1-z1.srdf",
     "standing_with_arm_home", NULL, 0},
    {"bluevolta_description/urdf/bluevolta.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"bluevolta_description/urdf/bluevolta_bravo7_gripper.urdf", VEH, 0, 1, NULL, NULL, NULL, 0},
    {"bluevolta_description/urdf/bluevolta_bravo7_no_ee.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"bolt_description/robots/bolt.urdf", FLT, 0, 0, "bolt_description/srdf/bolt.srdf",
     "standing", NULL, 1},
    {"borinot_description/urdf/borinot_flying_arm_2.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"bravo7_description/urdf/bravo7_gripper.urdf", FIX, 0, 1,
     "bravo7_description/srdf/bravo7_gripper.srdf", "standing", NULL, 0},
    {"bravo7_description/urdf/bravo7_no_ee.urdf", FIX, 0, 0,
     "bravo7_description/srdf/bravo7_no_ee.srdf", "standing", NULL, 0},
    {"double_pendulum_description/urdf/double_pendulum.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"double_pendulum_description/urdf/double_pendulum_continuous.urdf", FIX, 0, 0, NULL, NULL,
     NULL, 0},
    {"double_pendulum_description/urdf/double_pendulum_simple.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"falcon_description/urdf/falcon.urdf", VEH, 0, 0, NULL, NULL,
     "joint \"top_propeller_joint\": child link=\"Z_propeller\" does not exist", 0},
    {"falcon_description/urdf/falcon_bravo7_gripper.urdf", VEH, 0, 1, NULL, NULL, NULL, 0},
    {"falcon_description/urdf/falcon_bravo7_no_ee.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"finger_edu_description/robots/finger_edu.urdf", FIX, 0, 0,
     "finger_edu_description/srdf/finger_edu.srdf", "hanging", NULL, 0},
    {"go1_description/urdf/go1.urdf", FLT, 1, 0, "go1_description/srdf/go1.srdf", "standing",
     NULL, 0},
    {"hector_description/robots/quadrotor_base.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"hextilt_description/urdf/hextilt_flying_arm_5.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"icub_description/robots/icub.urdf", FLT, 1, 1, "icub_description/srdf/icub.srdf",
     "half_sitting", NULL, 0},
    {"icub_description/robots/icub_reduced.urdf", FLT, 1, 0, "icub_description/srdf/icub.srdf",
     "half_sitting", NULL, 0},
    {"iris_description/robots/iris.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"iris_description/robots/iris_simple.urdf", VEH, 0, 0, NULL, NULL, NULL, 0},
    {"laikago_description/urdf/laikago.urdf", FLT, 0, 0, NULL, NULL, NULL, 0},
    {"panda_description/urdf/panda.urdf", FIX, 0, 0, "panda_description/srdf/panda.srdf",
     "default", NULL, 0},
    {"panda_description/urdf/panda_collision.urdf", FIX, 0, 0,
     "panda_description/srdf/panda.srdf", "default", NULL, 0},
    {"pr2_description/urdf/pr2.urdf", FIX, 1, 0, "pr2_description/srdf/pr2.srdf",
     "tuck_left_arm", NULL, 0},
    {"quadruped_description/urdf/quadruped.urdf", FLT, 0, 0, NULL, NULL, NULL, 0},
    {"romeo_description/urdf/romeo.urdf", FLT, 1, 1, "romeo_description/srdf/romeo.srdf",
     "half_sitting", NULL, 0},
    {"romeo_description/urdf/romeo_laas_small.urdf", FLT, 1, 1, NULL, NULL, NULL, 0},
    {"romeo_description/urdf/romeo_small.urdf", FLT, 1, 0,
     "romeo_description/srdf/romeo_small.srdf", "half_sitting", NULL, 0},
    {"simple_humanoid_description/urdf/simple_humanoid.urdf", FLT, 0, 0,
     "simple_humanoid_description/srdf/simple_humanoid.srdf", "half_sitting", NULL, 0},
    {"simple_humanoid_description/urdf/simple_humanoid_classical.urdf", FLT, 0, 0,
     "simple_humanoid_description/srdf/simple_humanoid_classical.srdf", "half_sitting", NULL, 0},
    {"solo_description/robots/solo.urdf", FLT, 0, 0, "solo_description/srdf/solo.srdf",
     "standing", NULL, 0},
    {"solo_description/robots/solo12.urdf", FLT, 0, 0, "solo_description/srdf/solo.srdf",
     "standing", NULL, 0},
    {"talos_data/robots/talos_full_v2.urdf", FLT, 0, 0, "talos_data/srdf/talos.srdf",
     "half_sitting", NULL, 0},
    {"talos_data/robots/talos_full_v2_box.urdf", FLT, 0, 0, "talos_data/srdf/talos.srdf",
     "half_sitting", NULL, 0},
    {"talos_data/robots/talos_left_arm.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"talos_data/robots/talos_reduced.urdf", FLT, 1, 0, "talos_data/srdf/talos.srdf",
     "half_sitting", NULL, 0},
    {"talos_data/robots/talos_reduced_box.urdf", FLT, 1, 0, "talos_data/srdf/talos.srdf",
     "half_sitting", NULL, 0},
    {"talos_data/robots/talos_reduced_corrected.urdf", FLT, 1, 0, "talos_data/srdf/talos.srdf",
     "half_sitting", NULL, 0},
    {"tiago_description/robots/tiago.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"tiago_description/robots/tiago_dual.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"tiago_description/robots/tiago_no_hand.urdf", FIX, 1, 0, NULL, NULL, NULL, 0},
    {"tiago_pro_description/robots/tiago_pro.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur3.urdf", FIX, 0, 0, NULL, NULL, "<robot> has no <link>", 0},
    {"ur_description/urdf/ur3_gripper.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur3_joint_limited_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur3_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur5_gripper.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur5_joint_limited_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur5_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur10_joint_limited_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"ur_description/urdf/ur10_robot.urdf", FIX, 0, 0, NULL, NULL, NULL, 0},
    {"z1_description/urdf/z1.urdf", FIX, 0, 0, "z1_description/srdf/z1.srdf", "home", NULL, 0},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* what one robot did; written by a worker process into a pipe */
typedef struct {
  int index;
  int nq, nv, ngeoms;
  int loaded;             /* 1: as expected (a model, or the documented refusal) */
  int stepped;            /* steps done (0 for vehicles and refused files) */
  int stands;             /* 1: no error, finite, not fallen over the 2 s */
  int fell;               /* the step it fell at (point-feet bipeds), 0 when it did not */
  long unconverged;       /* steps whose solver stopped before its tolerance */
  double steps_per_s;     /* wall clock, informative only */
  double mass, kp, kd;    /* the robot's mass and its PD gains */
  char msg[2 * MR_ERROR_MSG_MAX]; /* the first failure, empty when none */
} corpus_result;

typedef struct {
  const char *ref; /* the collection */
  char pkg[4200];  /* the folder holding example-robot-data/ (the package root) */
  char tmp[64];    /* where the scenes are written */
} corpus_env;

/* ---- loading as moreau rbd does ---- */

static mr_status load_urdf(const corpus_env *e, const corpus_case *c, int fix, int lock,
                           int collision, mr_model **m, mr_error *err) {
  const char *roots[1] = {e->pkg};
  char path[4600];
  snprintf(path, sizeof path, "%s/robots/%s", e->ref, c->file);
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = c->kind == FLOATING;
  o.package_roots = roots;
  o.npackage_roots = 1;
  o.collision = collision;
  o.inertia_fix = fix;
  o.lock_massless = lock;
  return mr_urdf_load(path, &o, m, err);
}

/* M and ABA at the neutral configuration are finite (what rbd checks) */
static int dynamics_finite(const mr_model *m) {
  mr_data *d = mr_data_create(m);
  double *q = calloc((size_t)m->nq + 1, sizeof *q), *z = calloc((size_t)m->nv + 1, sizeof *z);
  int ok = d && q && z;
  if (ok) {
    mr_neutral(m, q);
    const double *M = mr_crba(m, d, q);
    for (size_t i = 0; i < d->row_at[m->nv]; ++i)
      ok = ok && isfinite(M[i]);
    const double *a = mr_aba(m, d, q, z, z);
    for (int i = 0; i < m->nv; ++i)
      ok = ok && isfinite(a[i]);
  }
  mr_data_free(d);
  free(q), free(z);
  return ok;
}

/* the file loads as documented: refused as published, or loads with (and only with) its
 * repairs; fills nq, nv */
static void check_load(const corpus_env *e, const corpus_case *c, corpus_result *r) {
  mr_model *m = NULL;
  mr_error err = {MR_OK, ""};
  mr_status st = load_urdf(e, c, c->fix, c->lock, 1, &m, &err);
  if (c->refused) {
    r->loaded = st != MR_OK && strstr(err.msg, c->refused) != NULL;
    if (!r->loaded) snprintf(r->msg, sizeof r->msg, "expected refusal, got: %s", err.msg);
    return;
  }
  if (st) {
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    return;
  }
  r->nq = m->nq, r->nv = m->nv, r->ngeoms = m->ngeoms;
  r->loaded = dynamics_finite(m);
  if (!r->loaded) snprintf(r->msg, sizeof r->msg, "non-finite M or ABA at neutral");
  mr_model_free(m);
  /* the repairs are needed: without them the file is refused for that reason */
  const char *why[2] = {"inertia_fix", "lock_massless"};
  for (int k = 0; k < 2 && r->loaded; ++k) {
    if (!(k == 0 ? c->fix : c->lock)) continue;
    st = load_urdf(e, c, k == 0 ? 0 : c->fix, k == 0 ? c->lock : 0, 0, &m, &err);
    if (st == MR_OK) mr_model_free(m);
    if (st == MR_OK || !strstr(err.msg, why[k])) {
      r->loaded = 0;
      snprintf(r->msg, sizeof r->msg, "loads without %s: %s", why[k], st ? err.msg : "ok");
    }
  }
}

/* ---- scenes ---- */

/* the lowest and highest collision points at the scene's initial configuration (support
 * points of every convex geometry of the robot along ∓z) */
static void vertical_extent(const mr_scene *s, double *zmin, double *zmax) {
  const mr_model *m = s->model;
  mr_data *d = mr_data_create(m);
  mr_forward_kinematics(m, d, s->q0, NULL, NULL);
  *zmin = INFINITY, *zmax = -INFINITY;
  for (int g = 0; g < m->ngeoms; ++g) {
    const mr_geom *G = &m->geoms[g];
    if (G->body == 0 || G->type == MR_GEOM_HALFSPACE || G->type == MR_GEOM_HEIGHTFIELD) continue;
    mr_se3 X = mr_se3_mul(&d->oMi[G->body], &G->placement);
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      mr_vec3 dl = mr_m3_tmulv(&X.R, mr_v3(0, 0, sgn));
      double z = mr_se3_act_point(&X, mr_geom_support(G, dl)).v[2];
      if (sgn < 0) *zmin = fmin(*zmin, z);
      if (sgn > 0) *zmax = fmax(*zmax, z);
    }
  }
  mr_data_free(d);
  if (!(*zmin <= *zmax)) *zmin = *zmax = 0.0; /* no collision geometry: placed as it is */
}

/* PD gains from the robot's mass m and height h (highest minus lowest collision point at the
 * posture): kp = 3 m g h N m/rad, the stiffness at which the whole weight acting at a lever
 * arm h deflects a joint by 1/3 rad; kd = 0.01 s · kp. For TALOS (93 kg, 1.6 m: kp ≈ 4400)
 * this is the order of its hand-tuned scene (3000, 30); h is at least 0.1 m. */
static void pd_gains(double mass, double h, double *kp, double *kd) {
  *kp = 3.0 * mass * 9.81 * fmax(h, 0.1);
  *kd = 0.01 * *kp;
}

/* The iteration cap of the default solver in the corpus scenes. The test asks for stable
 * stepping (finite, not fallen), not for convergence, which bench/corpus.c measures; a step
 * that does not converge costs the cap twice (the warm solve, then the cold one that mr_solve
 * runs to keep the better, docs/solvers.md), and at the default 10⁴ the few robots the solver
 * finds hard (alex_sake_hands, z1, double_pendulum_continuous) would take most of make test. */
#define CORPUS_MAX_ITER 1000

/* the scene text: a ground, the robot at pos / orientation (NULL: the posture's or the
 * origin), PD gains (kp < 0: none) */
static void write_scene(const corpus_env *e, const corpus_case *c, const char *path,
                        const double *pos, const double *quat, double kp, double kd) {
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("%s: %s", path, strerror(errno));
  fprintf(f, "# generated by tests/test_robots_corpus.c\ntimestep: 0.001\nduration: 2.0\n"
             "solver: {max_iter: %d}\nbodies:\n  - name: ground\n    fixed: true\n    geoms:\n"
             "      - {type: halfspace, friction: 0.9}\nrobots:\n  - name: r\n"
             "    urdf: %s/robots/%s\n    package_roots: [%s]\n    floating: %s\n"
             "    friction: 0.9\n",
          CORPUS_MAX_ITER, e->ref, c->file, e->pkg, c->kind == FLOATING ? "true" : "false");
  if (c->fix) fprintf(f, "    inertia_fix: true\n");
  if (c->lock) fprintf(f, "    lock_massless: true\n");
  if (c->srdf) fprintf(f, "    srdf: %s/robots/%s\n    posture: %s\n", e->ref, c->srdf, c->posture);
  if (pos) fprintf(f, "    position: [%.17g, %.17g, %.17g]\n", pos[0], pos[1], pos[2]);
  if (quat)
    fprintf(f, "    orientation: [%.17g, %.17g, %.17g, %.17g]\n", quat[0], quat[1], quat[2],
            quat[3]);
  if (kp >= 0) fprintf(f, "    pd: {kp: %.17g, kd: %.17g}\n", kp, kd);
  fclose(f);
}

static int load_scene(const char *path, mr_scene *s, corpus_result *r) {
  mr_error err = {MR_OK, ""};
  if (mr_scene_load(path, s, &err) == MR_OK) return 0;
  snprintf(r->msg, sizeof r->msg, "%s", err.msg);
  return -1;
}

/* the free-flyer's configuration index in the scene's q, -1 when fixed */
static int base_index(const mr_scene *s) {
  int b = mr_model_joint_index(s->model, "r/root_joint");
  return b > 0 ? s->model->bodies[b].joint.idx_q : -1;
}

/* the scene, in its posture with the lowest collision point on the ground: a first scene at
 * the posture gives the extent and the mass, the second is placed and has its gains */
static int make_scene(const corpus_env *e, const corpus_case *c, mr_scene *s, corpus_result *r) {
  char path[256];
  snprintf(path, sizeof path, "%s/%d.yaml", e->tmp, r->index);
  write_scene(e, c, path, NULL, NULL, -1, 0);
  if (load_scene(path, s, r)) return -1;
  double zmin, zmax, pos[3] = {0, 0, 0}, quat[4] = {0, 0, 0, 1};
  vertical_extent(s, &zmin, &zmax);
  int ib = base_index(s);
  if (ib >= 0)
    for (int k = 0; k < 3; ++k)
      pos[k] = s->q0[ib + k], quat[k] = s->q0[ib + 3 + k];
  if (ib >= 0) quat[3] = s->q0[ib + 6];
  pos[2] -= zmin;
  r->mass = mr_model_total_mass(s->model);
  pd_gains(r->mass, zmax - zmin, &r->kp, &r->kd);
  mr_scene_free(s);
  write_scene(e, c, path, pos, quat, r->kp, r->kd);
  return load_scene(path, s, r);
}

/* the base's z axis in the world, from the quaternion (x y z w) at q[3..6] */
static mr_vec3 base_z(const double *q) {
  double x = q[3], y = q[4], z = q[5], w = q[6];
  return mr_v3(2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y));
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 2 s of simulation with the default solver: no error, finite, not fallen */
static void check_steps(const mr_scene *s, corpus_result *r) {
  mr_error err = {MR_OK, ""};
  mr_sim *sim = mr_sim_from_scene(s, NULL, &err);
  if (!sim) {
    snprintf(r->msg, sizeof r->msg, "simulator: %s", err.msg);
    return;
  }
  int ib = base_index(s), n = (int)lround(s->duration / s->timestep), nq = s->model->nq;
  double z0 = ib >= 0 ? s->q0[ib + 2] : 0.0;
  mr_vec3 up0 = ib >= 0 ? base_z(s->q0 + ib) : mr_v3(0, 0, 1);
  double t0 = now_s();
  r->stands = 1;
  for (int k = 0; k < n && r->stands && !r->fell; ++k) {
    if (mr_sim_step(sim, &err)) {
      snprintf(r->msg, sizeof r->msg, "step %d: %s", k + 1, err.msg);
      r->stands = 0;
      break;
    }
    r->stepped = k + 1;
    const double *q = mr_sim_q(sim);
    for (int i = 0; i < nq && r->stands; ++i)
      if (!isfinite(q[i])) r->stands = 0, snprintf(r->msg, sizeof r->msg, "step %d: q not finite", k + 1);
    if (ib < 0 || !r->stands) continue;
    double cos_tilt = mr_v3_dot(base_z(q + ib), up0);
    if (q[ib + 2] < 0.5 * z0 || cos_tilt < 0.5) {
      r->fell = k + 1;
      r->stands = cases[r->index].point_feet; /* stepped on, but not required to stand */
      if (r->stands) continue;
      snprintf(r->msg, sizeof r->msg, "fell at step %d: base at %.3f m (start %.3f m), tilt %.0f deg",
               k + 1, q[ib + 2], z0, acos(fmax(-1.0, fmin(1.0, cos_tilt))) * 180.0 / M_PI);
    }
  }
  double dt = now_s() - t0;
  r->steps_per_s = dt > 0 ? r->stepped / dt : 0.0;
  r->unconverged = mr_sim_get_warnings(sim)->not_converged;
  mr_sim_free(sim);
}

/* one robot, start to end */
static void run_case(const corpus_env *e, int i, corpus_result *r) {
  const corpus_case *c = &cases[i];
  memset(r, 0, sizeof *r);
  r->index = i;
  check_load(e, c, r);
  if (!r->loaded || c->refused || c->kind == LOAD_ONLY) return;
  /* a floating robot without collision geometry has nothing to stand on */
  if (c->kind == FLOATING && r->ngeoms == 0) return;
  mr_scene s;
  if (make_scene(e, c, &s, r)) {
    r->loaded = 0;
    return;
  }
  check_steps(&s, r);
  mr_scene_free(&s);
}

/* ---- workers ---- */

/* write all of buf, or exit the worker */
static void write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) _exit(3);
    p += w, n -= (size_t)w;
  }
}

/* run the cases i ≡ w (mod nw) in a child process writing its results to fd */
static pid_t spawn_worker(const corpus_env *e, int w, int nw, int fd[2]) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  close(fd[0]);
  for (int i = w; i < NCASES; i += nw) {
    corpus_result r;
    run_case(e, i, &r);
    write_all(fd[1], &r, sizeof r);
  }
  _exit(0);
}

static int read_results(int fd, corpus_result *res) {
  int got = 0;
  corpus_result r;
  for (;;) {
    size_t n = 0;
    while (n < sizeof r) {
      ssize_t k = read(fd, (char *)&r + n, sizeof r - n);
      if (k <= 0) return got;
      n += (size_t)k;
    }
    if (r.index >= 0 && r.index < NCASES) res[r.index] = r, got++;
  }
}

/* ---- the table (docs/robots.md) ---- */

/* "DESCRIPTION/FILE": the package without "_description", the file without ".urdf" */
static const char *robot_name(const corpus_case *c, char *buf, size_t len) {
  const char *slash = strchr(c->file, '/'), *last = strrchr(c->file, '/');
  int np = (int)(slash - c->file), nf = (int)strlen(last + 1) - 5;
  const char *suffix = strstr(c->file, "_description/");
  if (suffix && suffix < slash) np = (int)(suffix - c->file);
  snprintf(buf, len, "%.*s/%.*s", np, c->file, nf, last + 1);
  return buf;
}

static void write_table(const char *path, const corpus_result *res) {
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("%s: %s", path, strerror(errno));
  fprintf(f, "| robot | nq / nv | loads | stands | steps/s | unconverged steps | mass (kg) | kp / kd |\n"
             "|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < NCASES; ++i) {
    const corpus_case *c = &cases[i];
    const corpus_result *r = &res[i];
    const char *loads = c->refused ? "refused as published" : !r->loaded ? "**no**"
                        : c->fix && c->lock ? "yes (inertia_fix, lock_massless)"
                        : c->fix            ? "yes (inertia_fix)"
                        : c->lock           ? "yes (lock_massless)"
                                            : "yes";
    char name[128];
    fprintf(f, "| %s | ", robot_name(c, name, sizeof name));
    if (r->nv) fprintf(f, "%d / %d", r->nq, r->nv);
    fprintf(f, " | %s | ", loads);
    if (c->refused || c->kind == LOAD_ONLY || (c->kind == FLOATING && r->ngeoms == 0))
      fprintf(f, "(%s) | | | | |\n",
              c->refused ? "-"
              : c->kind == LOAD_ONLY ? "vehicle, not stepped"
                                     : "no collision geometry, not stepped");
    else
      fprintf(f, "%s | %.0f | %ld | %.3g | %.4g / %.3g |\n",
              r->fell ? "falls (point feet, see below)"
              : r->stands ? (c->kind == FLOATING ? "yes" : "yes (fixed root)")
                          : "**no**",
              r->steps_per_s, r->unconverged, r->mass, r->kp, r->kd);
  }
  fclose(f);
}

/* ---- the test ---- */

static void test_corpus(void **state) {
  corpus_env e;
  e.ref = test_reference_root();
  if (!e.ref) {
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0)
      fail_msg("the example-robot-data collection is missing ($MOREAU_SHARED/reference)");
    skip();
  }
  snprintf(e.pkg, sizeof e.pkg, "%s/..", e.ref);
  snprintf(e.tmp, sizeof e.tmp, "/tmp/moreau_corpus_XXXXXX");
  assert_non_null(mkdtemp(e.tmp));
  const char *jobs = getenv("MOREAU_TEST_JOBS");
  int nw = jobs ? atoi(jobs) : 2;
  nw = nw < 1 ? 1 : nw > 16 ? 16 : nw;
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(stdout);
  pid_t pids[16];
  for (int w = 0; w < nw; ++w)
    pids[w] = spawn_worker(&e, w, nw, fd);
  close(fd[1]);
  static corpus_result res[NCASES];
  for (int i = 0; i < NCASES; ++i)
    res[i].index = -1;
  int got = read_results(fd[0], res);
  close(fd[0]);
  for (int w = 0; w < nw; ++w)
    waitpid(pids[w], NULL, 0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", e.tmp);
  if (system(cmd) != 0) printf("could not remove %s\n", e.tmp);
  const char *table = getenv("MOREAU_ROBOTS_TABLE");
  if (table) write_table(table, res);
  int failed = 0;
  for (int i = 0; i < NCASES; ++i) {
    const corpus_case *c = &cases[i];
    const corpus_result *r = &res[i];
    int ok = r->index == i && r->loaded &&
             (c->refused || c->kind == LOAD_ONLY || (c->kind == FLOATING && r->ngeoms == 0) ||
              r->stands);
    char name[128];
    printf("%-40s %s nq %3d nv %3d steps %4d %8.0f steps/s unconverged %4ld %s\n",
           robot_name(c, name, sizeof name), ok ? "ok  " : "FAIL", r->nq, r->nv, r->stepped, r->steps_per_s,
           r->unconverged, r->msg);
    failed += !ok;
  }
  assert_int_equal(got, NCASES);
  assert_int_equal(failed, 0);
}

/* ---- MJCF models ($MOREAU_SHARED/reference/mjcf, docs/mjcf.md) ---- */

/* Every reference MJCF model: loaded as `moreau check` loads it (mr_scene_load), then stepped 1 s
 * of its own timestep with the default solver and zero controls (no error, finite state), or
 * refused with its reason. */
typedef struct {
  const char *file;    /* under reference/mjcf */
  const char *refused; /* a substring of the refusal, NULL when the model loads */
} mjcf_case;

static const mjcf_case mjcf_cases[] = {
    {"dm_control/suite/acrobot.xml", NULL},
    {"dm_control/suite/cartpole.xml", NULL},
    {"dm_control/suite/cheetah.xml", NULL},
    {"dm_control/suite/finger.xml", NULL},
    {"dm_control/suite/fish.xml", "a fixed tendon with stiffness"},
    {"dm_control/suite/hopper.xml", NULL},
    {"dm_control/suite/humanoid.xml", NULL},
    {"dm_control/suite/manipulator.xml", NULL},
    {"dm_control/suite/pendulum.xml", NULL},
    {"dm_control/suite/point_mass.xml", NULL},
    {"dm_control/suite/reacher.xml", NULL},
    {"dm_control/suite/stacker.xml", NULL},
    {"dm_control/suite/swimmer.xml", "fluid forces"},
    {"mujoco/model/humanoid/humanoid.xml", NULL},
    {"mujoco/model/car/car.xml", "unrecognized attribute 'actuatorfrcrange'"},
    {"mujoco/model/balloons/balloons.xml", "unrecognized attribute 'gravcomp'"},
    {"mujoco/model/adhesion/active_adhesion.xml", "unrecognized attribute 'memory'"},
    {"mujoco/model/slider_crank/slider_crank.xml", "slider-crank transmission"},
    {"mujoco/model/tendon_arm/arm26.xml", "muscle actuators"},
};
#define NMJCF ((int)(sizeof mjcf_cases / sizeof mjcf_cases[0]))

typedef struct {
  int ok, nq, nv, nu, stepped;
  long unconverged;
  double mass, penetration;
  char msg[MR_ERROR_MSG_MAX];
} mjcf_result;

static void run_mjcf(const char *root, const mjcf_case *c, mjcf_result *r) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", root, c->file);
  memset(r, 0, sizeof *r);
  mr_scene s;
  mr_error e = {MR_OK, ""};
  if (mr_scene_load(path, &s, &e)) {
    snprintf(r->msg, sizeof r->msg, "%s", e.msg);
    r->ok = c->refused && strstr(e.msg, c->refused);
    return;
  }
  r->nq = s.model->nq, r->nv = s.model->nv, r->nu = s.nactuators;
  r->mass = mr_model_total_mass(s.model);
  mr_sim *sim = mr_sim_from_scene(&s, NULL, &e);
  int n = (int)lround(1.0 / s.timestep);
  r->ok = sim != NULL && !c->refused;
  for (int k = 0; r->ok && k < n; ++k) {
    if (mr_sim_step(sim, &e)) {
      snprintf(r->msg, sizeof r->msg, "step %d: %.480s", k + 1, e.msg);
      r->ok = 0;
    }
    for (int i = 0; r->ok && i < s.model->nq; ++i)
      r->ok = isfinite(mr_sim_q(sim)[i]);
    if (r->ok)
      r->stepped = k + 1, r->penetration = fmax(r->penetration, mr_sim_last(sim)->penetration);
  }
  if (sim) r->unconverged = mr_sim_get_warnings(sim)->not_converged;
  if (!sim) snprintf(r->msg, sizeof r->msg, "simulator: %.480s", e.msg);
  if (c->refused) snprintf(r->msg, sizeof r->msg, "loads, expected a refusal");
  mr_sim_free(sim);
  mr_scene_free(&s);
}

static void write_mjcf_table(const char *path, const mjcf_result *res) {
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("%s: %s", path, strerror(errno));
  fprintf(f, "| model | nq / nv | actuators | loads | steps (1 s, zero controls) | unconverged "
             "steps | max penetration (m) | mass (kg) |\n|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < NMJCF; ++i) {
    const mjcf_case *c = &mjcf_cases[i];
    const mjcf_result *r = &res[i];
    if (c->refused) {
      const char *why = strstr(r->msg, ": ");
      fprintf(f, "| %s | | | refused: %s | | | | |\n", c->file, why ? why + 2 : r->msg);
      continue;
    }
    fprintf(f, "| %s | %d / %d | %d | %s | %d | %ld | %.3g | %.4g |\n", c->file, r->nq, r->nv,
            r->nu, r->ok ? "yes" : "**no**", r->stepped, r->unconverged, r->penetration, r->mass);
  }
  fclose(f);
}

static void test_mjcf_corpus(void **state) {
  char root[4096];
  const char *shared = getenv("MOREAU_SHARED");
  snprintf(root, sizeof root, "%s/reference/mjcf", shared ? shared : "../shared");
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/README.md", root);
  FILE *f = fopen(probe, "r");
  if (!f) {
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) fail_msg("the MJCF reference models are missing");
    skip();
  }
  fclose(f);
  static mjcf_result res[NMJCF];
  int failed = 0;
  for (int i = 0; i < NMJCF; ++i) {
    run_mjcf(root, &mjcf_cases[i], &res[i]);
    printf("%-46s %s nq %3d nv %3d steps %4d unconverged %4ld %s\n", mjcf_cases[i].file,
           res[i].ok ? "ok  " : "FAIL", res[i].nq, res[i].nv, res[i].stepped, res[i].unconverged,
           res[i].ok && !mjcf_cases[i].refused ? "" : res[i].msg);
    failed += !res[i].ok;
  }
  const char *table = getenv("MOREAU_MJCF_TABLE");
  if (table) write_mjcf_table(table, res);
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),
      cmocka_unit_test(test_mjcf_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
