/* Same file, two engines: every reference MJCF model ($MOREAU_SHARED/reference/mjcf; the test
 * fails when it is absent and CI=true, and is skipped otherwise) that moreau loads is loaded
 * again by MuJoCo 2.2.2 (Debian's libmujoco-dev) and compared:
 *
 * - body masses: each MuJoCo body's mass, summed over the bodies welded into one moreau body,
 *   and the total mass. moreau computes them with MuJoCo's own expressions in MuJoCo's order, so
 *   an unmerged body's mass is compared for equality; a merged body's sum and the total to
 *   4 n ulps of the total (the order of n additions differs).
 * - the joint-space inertia matrix M (armature included, mj_fullM) and the bias forces
 *   b = C(q, v) v + g (qfrc_bias) at qpos0 with zero velocity and at three random states (q
 *   within the limits, ±π where unlimited, uniform quaternions; v in [−2, 2]), to 1e-9 relative
 *   to the largest entry: both sides are O(ε) computations of the same quantities (moreau by
 *   CRBA and RNEA, MuJoCo by its composite-rigid-body and recursive Newton-Euler algorithms
 *   over the diagonalised inertias) whose round-off is ~1e-15 relative; 1e-9 leaves room for
 *   the conditioning of the bias terms without hiding a wrong inertia, frame or axis, each of
 *   which moves entries by far more. A free joint's velocity is MuJoCo's (world-frame linear)
 *   converted to moreau's (body-frame linear): v_mj = T v, T = diag(R, 1) on the free dofs, so
 *   M = Tᵀ M_mj T and b = Tᵀ (b_mj + M_mj Ṫ v) with Ṫ v = (R (ω × v_lin), 0).
 * - 1 s trajectories with zero controls, MuJoCo stepped with its Euler integrator (the scheme
 *   moreau uses: semi-implicit, damping implicit): for the models without contact from a random
 *   state, compared to 1e-9; for the models with contacts from qpos0, measured and printed only
 *   (MuJoCo's contacts are soft, moreau's hard: docs/mjcf.md, "Same file, two engines").
 * - the actuators: the same names in the same order, and at a random state under random
 *   controls (half beyond ctrlrange) the generalised force moreau's controls make (mr_sim_set_ctrl:
 *   torques, PD targets and gains, joint springs included) equals MuJoCo's qfrc_actuator plus its
 *   spring forces; the models without contact are also stepped 1 s under those controls and
 *   compared to 1e-9 as above.
 * The reference models moreau refuses to simulate but MuJoCo 2.2.2 loads are read as trees
 * (tree_only) and their masses, M and b compared all the same.
 * MOREAU_MJCF_FILES=A.xml:B.xml runs the same comparisons on other files (as trees when
 * refused). */
#include "test_util.h"

#include <mujoco/mujoco.h>
#include <float.h>
#include <string.h>

#include "moreau/actuator.h"
#include "moreau/control.h"
#include "moreau/dynamics.h"
#include "moreau/mjcf.h"

typedef struct {
  const char *file; /* under reference/mjcf */
  int trajectory;   /* 1: compare a 1 s trajectory with zero controls */
  double traj_tol;  /* on q (rad, m) after 1 s */
  int tree_only;    /* 1: a model moreau refuses to simulate, read as a tree (mr_mjcf_options'
                       tree_only, as moreau rbd does): masses, M and b only */
} mj_case;

/* Trajectory tolerances: where the schemes are the same (no spring, no contact, no limit
 * reached) the two trajectories differ by the round-off of ~10² – 10³ steps of two different
 * algorithms on a chaotic system (the double pendulums amplify 1e-16 differences by e^{λt});
 * 1e-9 rad is far below the O(Δt) = 1e-2 difference that a wrong term would make. */
static const mj_case cases[] = {
    {"dm_control/suite/acrobot.xml", 1, 1e-9, 0},
    {"dm_control/suite/cartpole.xml", 1, 1e-9, 0},
    {"dm_control/suite/cheetah.xml", 0, 0, 0},
    {"dm_control/suite/hopper.xml", 0, 0, 0},
    {"dm_control/suite/humanoid.xml", 0, 0, 0},
    {"dm_control/suite/manipulator.xml", 0, 0, 0},
    {"dm_control/suite/pendulum.xml", 1, 1e-9, 0},
    {"dm_control/suite/point_mass.xml", 1, 1e-9, 0},
    {"dm_control/suite/reacher.xml", 1, 1e-9, 0},
    {"dm_control/suite/stacker.xml", 0, 0, 0},
    {"mujoco/model/humanoid/humanoid.xml", 0, 0, 0},
    {"dm_control/suite/finger.xml", 0, 0, 0},
    /* refused for simulation (docs/mjcf.md), their trees compared all the same */
    {"dm_control/suite/fish.xml", 0, 0, 1},
    {"dm_control/suite/swimmer.xml", 0, 0, 1},
    {"mujoco/model/tendon_arm/arm26.xml", 0, 0, 1},
    {"mujoco/model/slider_crank/slider_crank.xml", 0, 0, 1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const char *mjcf_root(void) {
  static char path[4096];
  const char *shared = getenv("MOREAU_SHARED");
  snprintf(path, sizeof path, "%s/reference/mjcf", shared ? shared : "../shared");
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/README.md", path);
  FILE *f = fopen(probe, "r");
  if (!f) return NULL;
  fclose(f);
  return path;
}

/* both engines on one file */
typedef struct {
  mr_scene sc;
  mjModel *mm;
  mjData *md;
  mr_data *d;
  int *qadr, *vadr; /* per MuJoCo joint: moreau's first coordinate and dof */
} pair;

static int load_pair(const char *file, int tree_only, pair *p) {
  char path[4400], err[1000];
  snprintf(path, sizeof path, "%s%s%s", file[0] == '/' ? "" : mjcf_root(),
           file[0] == '/' ? "" : "/", file);
  mr_error e = {MR_OK, ""};
  mr_mjcf_options opt = mr_mjcf_options_default();
  opt.tree_only = tree_only;
  if (mr_mjcf_load(path, &opt, &p->sc, &e)) fail_msg("moreau: %s", e.msg);
  p->mm = mj_loadXML(path, NULL, err, sizeof err);
  if (!p->mm) fail_msg("MuJoCo: %s", err);
  p->md = mj_makeData(p->mm);
  p->d = mr_data_create(p->sc.model);
  p->qadr = calloc((size_t)p->mm->njnt + 1, sizeof(int));
  p->vadr = calloc((size_t)p->mm->njnt + 1, sizeof(int));
  const char *robot = p->sc.robots[0].name;
  for (int j = 0; j < p->mm->njnt; ++j) {
    const char *n = mj_id2name(p->mm, mjOBJ_JOINT, j);
    char name[256];
    if (n)
      snprintf(name, sizeof name, "%s/%s", robot, n);
    else
      snprintf(name, sizeof name, "%s/joint#%d", robot, j);
    int b = mr_model_joint_index(p->sc.model, name);
    if (b < 0) fail_msg("%s: no moreau joint '%s'", file, name);
    p->qadr[j] = p->sc.model->bodies[b].joint.idx_q;
    p->vadr[j] = p->sc.model->bodies[b].joint.idx_v;
  }
  return 0;
}

static void free_pair(pair *p) {
  mr_scene_free(&p->sc);
  mj_deleteData(p->md);
  mj_deleteModel(p->mm);
  mr_data_free(p->d);
  free(p->qadr), free(p->vadr);
}

/* ---- state conversion ---- */

/* the rotation (row-major) of a MuJoCo quaternion w x y z */
static void quat_R(const double *q, double R[9]) {
  mju_quat2Mat(R, q);
}

/* moreau's q and v from MuJoCo's qpos and qvel */
static void to_moreau(const pair *p, const double *qm, const double *vm, double *q, double *v) {
  const mjModel *m = p->mm;
  for (int j = 0; j < m->njnt; ++j) {
    const double *a = qm + m->jnt_qposadr[j], *w = vm + m->jnt_dofadr[j];
    double *b = q + p->qadr[j], *u = v + p->vadr[j];
    switch (m->jnt_type[j]) {
    case mjJNT_FREE: {
      double R[9];
      quat_R(a + 3, R);
      b[0] = a[0], b[1] = a[1], b[2] = a[2], b[3] = a[4], b[4] = a[5], b[5] = a[6], b[6] = a[3];
      for (int i = 0; i < 3; ++i) /* Rᵀ v_world */
        u[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2];
      u[3] = w[3], u[4] = w[4], u[5] = w[5];
    } break;
    case mjJNT_BALL:
      b[0] = a[1], b[1] = a[2], b[2] = a[3], b[3] = a[0];
      u[0] = w[0], u[1] = w[1], u[2] = w[2];
      break;
    default:
      b[0] = a[0], u[0] = w[0];
    }
  }
}

/* a random MuJoCo state: q within limits (±π, ±1 m unlimited), unit quaternions, v in [−2, 2] */
static void random_state(const mjModel *m, uint64_t *seed, double *q, double *v) {
  for (int j = 0; j < m->njnt; ++j) {
    double *a = q + m->jnt_qposadr[j];
    int t = m->jnt_type[j], lim = m->jnt_limited[j];
    const double *r = m->jnt_range + 2 * j;
    if (t == mjJNT_FREE || t == mjJNT_BALL) {
      int o = t == mjJNT_FREE ? 3 : 0;
      for (int k = 0; k < o; ++k)
        a[k] = test_rand(seed, -1, 1);
      double n = 0;
      for (int k = 0; k < 4; ++k)
        a[o + k] = test_rand(seed, -1, 1), n += a[o + k] * a[o + k];
      for (int k = 0; k < 4; ++k)
        a[o + k] /= sqrt(n);
    } else {
      double span = t == mjJNT_HINGE ? M_PI : 1.0;
      a[0] = lim ? test_rand(seed, r[0], r[1]) : test_rand(seed, -span, span);
    }
  }
  for (int k = 0; k < m->nv; ++k)
    v[k] = test_rand(seed, -2, 2);
}

/* ---- comparisons ---- */

static double max_abs(const double *x, int n) {
  double a = 0;
  for (int i = 0; i < n; ++i)
    a = fmax(a, fabs(x[i]));
  return a;
}

/* masses: per moreau body, the sum of the MuJoCo bodies it carries; the total */
static void check_masses(const char *file, const pair *p) {
  const mjModel *m = p->mm;
  const mr_model *mo = p->sc.model;
  double *sum = calloc((size_t)mo->nbodies, sizeof *sum);
  int *count = calloc((size_t)mo->nbodies, sizeof *count);
  double total = 0; /* of the moving bodies: those welded to the world are fixed geometry */
  for (int i = 1; i < m->nbody; ++i)
    total += m->body_weldid[i] ? m->body_mass[i] : 0.0;
  double eps = 4.0 * m->nbody * DBL_EPSILON * total;
  for (int i = 1; i < m->nbody; ++i) {
    if (!m->body_weldid[i]) continue;
    char name[256];
    const char *n = mj_id2name(m, mjOBJ_BODY, i);
    if (n)
      snprintf(name, sizeof name, "%s/%s", p->sc.robots[0].name, n);
    else
      snprintf(name, sizeof name, "%s/body#%d", p->sc.robots[0].name, i);
    int f = mr_model_frame_index(mo, name);
    if (f < 0) fail_msg("%s: no moreau frame '%s'", file, name);
    int b = mo->frames[f].body;
    sum[b] += m->body_mass[i], count[b]++;
  }
  for (int b = 1; b < mo->nbodies; ++b) {
    if (count[b] == 1 && mo->bodies[b].inertia.m != sum[b])
      fail_msg("%s: body '%s' mass %.17g, MuJoCo %.17g", file, mo->bodies[b].name,
               mo->bodies[b].inertia.m, sum[b]);
    if (count[b] > 1) assert_near(mo->bodies[b].inertia.m, sum[b], eps);
  }
  assert_near(mr_model_total_mass(mo), total, eps);
  free(sum), free(count);
}

/* M and b of both engines at MuJoCo's state (qm, vm), converted, compared */
static void check_state(const char *file, pair *p, const double *qm, const double *vm,
                        const char *what) {
  const mjModel *m = p->mm;
  mjData *md = p->md;
  int nv = m->nv, nq = p->sc.model->nq;
  mju_copy(md->qpos, qm, m->nq);
  mju_copy(md->qvel, vm, nv);
  mju_zero(md->ctrl, m->nu);
  mj_forward(m, md);
  double *Mm = calloc((size_t)(nv * nv) + 1, sizeof *Mm),
         *T = calloc((size_t)(nv * nv) + 1, sizeof *T);
  double *Mc = calloc((size_t)(nv * nv) + 1, sizeof *Mc),
         *Mo = calloc((size_t)(nv * nv) + 1, sizeof *Mo);
  double *bm = calloc((size_t)nv + 1, sizeof *bm), *bo = calloc((size_t)nv + 1, sizeof *bo);
  double *q = calloc((size_t)nq + 1, sizeof *q), *v = calloc((size_t)nv + 1, sizeof *v);
  mj_fullM(m, Mm, md->qM);
  to_moreau(p, qm, vm, q, v);
  /* T (v_mj = T v): identity but the free joints' linear blocks R; Ṫ v into bm's correction */
  for (int k = 0; k < nv; ++k)
    T[k * nv + k] = 1.0;
  double *Tdv = calloc((size_t)nv + 1, sizeof *Tdv);
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] != mjJNT_FREE) continue;
    int a = m->jnt_dofadr[j], o = p->vadr[j];
    double R[9];
    quat_R(qm + m->jnt_qposadr[j] + 3, R);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        T[(a + r) * nv + a + c] = R[3 * r + c];
    const double *vl = v + o, *w = v + o + 3;
    double x[3] = {w[1] * vl[2] - w[2] * vl[1], w[2] * vl[0] - w[0] * vl[2],
                   w[0] * vl[1] - w[1] * vl[0]};
    for (int r = 0; r < 3; ++r)
      Tdv[a + r] = R[3 * r] * x[0] + R[3 * r + 1] * x[1] + R[3 * r + 2] * x[2];
  }
  /* moreau's dofs are MuJoCo's in the same order: Mc = Tᵀ Mm T, bc = Tᵀ (bm + Mm Ṫv) */
  for (int i = 0; i < nv; ++i) {
    double s = md->qfrc_bias[i];
    for (int k = 0; k < nv; ++k)
      s += Mm[i * nv + k] * Tdv[k];
    bm[i] = s;
  }
  double *bc = calloc((size_t)nv + 1, sizeof *bc);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k < nv; ++k)
      bc[i] += T[k * nv + i] * bm[k];
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) {
      double s = 0;
      for (int a = 0; a < nv; ++a)
        for (int b = 0; b < nv; ++b)
          s += T[a * nv + i] * Mm[a * nv + b] * T[b * nv + j];
      Mc[i * nv + j] = s;
    }
  mr_crba(p->sc.model, p->d, q);
  mr_mass_dense(p->d, Mo);
  memcpy(bo, mr_nonlinear_effects(p->sc.model, p->d, q, v), (size_t)nv * sizeof *bo);
  double sm = max_abs(Mc, nv * nv), sb = fmax(max_abs(bc, nv), 1e-300);
  for (int i = 0; i < nv * nv; ++i)
    if (!(fabs(Mo[i] - Mc[i]) <= 1e-9 * sm))
      fail_msg("%s (%s): M[%d][%d] = %.17g, MuJoCo %.17g (scale %.3g)", file, what, i / nv, i % nv,
               Mo[i], Mc[i], sm);
  for (int i = 0; i < nv; ++i)
    if (!(fabs(bo[i] - bc[i]) <= 1e-9 * sb))
      fail_msg("%s (%s): b[%d] = %.17g, MuJoCo %.17g (scale %.3g)", file, what, i, bo[i], bc[i],
               sb);
  free(Mm), free(T), free(Mc), free(Mo), free(bm), free(bo), free(q), free(v), free(Tdv), free(bc);
}

/* the actuators (and joint springs) of both engines at MuJoCo's state (qm, vm) under the
 * controls u: moreau's per-dof controls after mr_sim_set_ctrl, τ + k_p (q_t − q) − k_d v,
 * against MuJoCo's qfrc_actuator + qfrc_passive with the joint damping added back (moreau's
 * damping is the model's, not a control), converted to moreau's free-joint velocity (f = Tᵀ f_mj).
 * Both are a few products and sums per dof (gear·u, k (ref − q), moreau's target a quotient):
 * 1e-12 relative is round-off with room, a wrong gear, sign, range or joint is O(1). */
static void check_actuation(const char *file, pair *p, const double *qm, const double *vm,
                            const double *u) {
  const mjModel *m = p->mm;
  mjData *md = p->md;
  int nv = m->nv, nq = p->sc.model->nq;
  mr_error e = {MR_OK, ""};
  mr_sim *s = mr_sim_from_scene(&p->sc, NULL, &e);
  if (!s) fail_msg("%s: %s", file, e.msg);
  const mr_world *w = mr_sim_world(s);
  /* the same actuators, in the same order, under the same names */
  assert_int_equal(mr_world_actuator_count(w), m->nu);
  for (int a = 0; a < m->nu; ++a) {
    const char *n = mj_id2name(m, mjOBJ_ACTUATOR, a);
    char name[300];
    snprintf(name, sizeof name, "%s/%s", p->sc.robots[0].name, n ? n : "");
    if (n && strcmp(mr_world_actuator_name(w, a), name))
      fail_msg("%s: actuator %d is '%s', MuJoCo's '%s'", file, a, mr_world_actuator_name(w, a),
               name);
  }
  if (mr_sim_set_ctrl(s, u, &e)) fail_msg("%s: %s", file, e.msg);
  mju_copy(md->qpos, qm, m->nq);
  mju_copy(md->qvel, vm, nv);
  mju_copy(md->ctrl, u, m->nu);
  mj_forward(m, md);
  double *f = calloc((size_t)nv + 1, sizeof *f), *fo = calloc((size_t)nv + 1, sizeof *fo);
  double *q = calloc((size_t)nq + 1, sizeof *q), *v = calloc((size_t)nv + 1, sizeof *v);
  for (int k = 0; k < nv; ++k)
    f[k] = md->qfrc_actuator[k] + md->qfrc_passive[k] + m->dof_damping[k] * vm[k];
  for (int j = 0; j < m->njnt; ++j) { /* Tᵀ: the free joints' linear rows rotated by Rᵀ */
    if (m->jnt_type[j] != mjJNT_FREE) continue;
    double R[9], x[3], *a = f + m->jnt_dofadr[j];
    quat_R(qm + m->jnt_qposadr[j] + 3, R);
    for (int i = 0; i < 3; ++i)
      x[i] = R[i] * a[0] + R[3 + i] * a[1] + R[6 + i] * a[2];
    a[0] = x[0], a[1] = x[1], a[2] = x[2];
  }
  to_moreau(p, qm, vm, q, v);
  const double *tau = mr_sim_ctrl_torque(s), *qt = mr_sim_ctrl_target(s), *kp = mr_sim_ctrl_kp(s),
               *kd = mr_sim_ctrl_kd(s);
  for (int d = 0; d < nv; ++d) {
    int c = mr_world_dof_coordinate(w, d);
    fo[d] = tau[d] - kd[d] * v[d] + (c >= 0 ? kp[d] * (qt[c] - q[c]) : 0.0);
    if (c < 0 && kp[d] != 0.0) fail_msg("%s: dof %d has a gain but no coordinate", file, d);
  }
  double scale = fmax(max_abs(f, nv), 1e-12), worst = 0;
  for (int d = 0; d < nv; ++d)
    worst = fmax(worst, fabs(fo[d] - f[d]));
  for (int d = 0; d < nv; ++d)
    if (!(fabs(fo[d] - f[d]) <= 1e-12 * scale))
      fail_msg("%s: actuation of dof %d = %.17g, MuJoCo %.17g (scale %.3g)", file, d, fo[d], f[d],
               scale);
  printf("  %-40s %d actuators: max |τ - τ_mujoco| = %.3g (max |τ| = %.3g)\n", file, m->nu, worst,
         scale);
  free(f), free(fo), free(q), free(v);
  mr_sim_free(s);
}

/* 1 s with zero controls, MuJoCo's integrator set to Euler: from a random state compared to
 * tol (random: q in the middle half of the limits, v in [−0.5, 0.5]), or from qpos0 and
 * measured only (tol INFINITY: the models with contacts, soft in MuJoCo and hard in moreau) */
static void check_trajectory(const char *file, pair *p, double tol, const double *ctrl) {
  mjModel *m = p->mm;
  mjData *md = p->md;
  m->opt.integrator = mjINT_EULER;
  mj_resetData(m, md);
  mr_error e = {MR_OK, ""};
  mr_sim *s = mr_sim_from_scene(&p->sc, NULL, &e);
  if (!s) fail_msg("%s: %s", file, e.msg);
  /* the same controls held in both (MuJoCo clamps them to ctrlrange as moreau does) */
  if (ctrl) {
    mju_copy(md->ctrl, ctrl, m->nu);
    if (mr_sim_set_ctrl(s, ctrl, &e)) fail_msg("%s: %s", file, e.msg);
  }
  uint64_t seed = 7;
  double *q0 = calloc((size_t)p->sc.model->nq + 1, sizeof *q0);
  double *v0 = calloc((size_t)m->nv + 1, sizeof *v0);
  if (isinf(tol))
    mju_copy(md->qpos, m->qpos0, m->nq);
  else
    random_state(m, &seed, md->qpos, md->qvel);
  for (int j = 0; j < m->njnt && !isinf(tol); ++j)
    if (m->jnt_limited[j] && m->jnt_type[j] != mjJNT_BALL) {
      const double *r = m->jnt_range + 2 * j;
      double *x = md->qpos + m->jnt_qposadr[j];
      *x = 0.5 * (r[0] + r[1]) + 0.5 * (*x - 0.5 * (r[0] + r[1]));
    }
  for (int k = 0; k < m->nv; ++k)
    md->qvel[k] *= isinf(tol) ? 0.0 : 0.25;
  to_moreau(p, md->qpos, md->qvel, q0, v0);
  if (mr_sim_set_state(s, q0, v0, &e)) fail_msg("%s: %s", file, e.msg);
  double *start = q0;
  free(v0);
  int n = (int)lround(1.0 / m->opt.timestep);
  assert_near(p->sc.timestep, m->opt.timestep, 0.0);
  int limited = 0; /* steps where MuJoCo had a constraint active (a joint limit reached) */
  for (int k = 0; k < n; ++k) {
    mj_step(m, md);
    limited += md->nefc > 0;
    if (mr_sim_step(s, &e)) fail_msg("%s: step %d: %s", file, k, e.msg);
  }
  /* from a random state (no contact) a limit reached: soft in MuJoCo, hard in moreau, the
   * trajectories part (measured only) */
  int random = !isinf(tol);
  if (limited) tol = INFINITY;
  int nq = p->sc.model->nq;
  double *q = calloc((size_t)nq + 1, sizeof *q), *v = calloc((size_t)m->nv + 1, sizeof *v);
  to_moreau(p, md->qpos, md->qvel, q, v);
  double worst = 0;
  for (int i = 0; i < nq; ++i)
    worst = fmax(worst, fabs(mr_sim_q(s)[i] - q[i]));
  double moved = 0;
  for (int i = 0; i < nq; ++i)
    moved = fmax(moved, fabs(mr_sim_q(s)[i] - start[i]));
  printf("  %-40s 1 s from %s%s: max |q - q_mujoco| = %.3g (max |q(1 s) - q(0)| = %.3g)%s\n", file,
         random ? "a random state" : "qpos0", ctrl ? ", driven" : "", worst, moved,
         !random   ? ", measured only: hard contacts against soft ones"
         : limited ? ", measured only: a joint limit reached (hard against soft)"
                   : "");
  for (int i = 0; i < nq; ++i)
    if (!(fabs(mr_sim_q(s)[i] - q[i]) <= tol))
      fail_msg("%s: after 1 s q[%d] = %.17g, MuJoCo %.17g", file, i, mr_sim_q(s)[i], q[i]);
  free(q), free(v), free(start);
  mr_sim_free(s);
}

static void run_case(const mj_case *c) {
  pair p;
  memset(&p, 0, sizeof p);
  load_pair(c->file, c->tree_only, &p);
  check_masses(c->file, &p);
  double *zero = calloc((size_t)p.mm->nv + 1, sizeof *zero);
  check_state(c->file, &p, p.mm->qpos0, zero, "qpos0");
  uint64_t seed = 34;
  double *q = calloc((size_t)p.mm->nq + 1, sizeof *q), *v = calloc((size_t)p.mm->nv + 1, sizeof *v);
  for (int k = 0; k < 3; ++k) {
    random_state(p.mm, &seed, q, v);
    check_state(c->file, &p, q, v, "random state");
  }
  printf("  %-40s masses, M and b agree (nq %d, nv %d)%s\n", c->file, p.mm->nq, p.mm->nv,
         c->tree_only ? ", read as a tree" : "");
  if (!c->tree_only) {
    /* controls in [−2, 2]: half of them beyond the suite's ctrlrange [−1, 1], clamped */
    double *u = calloc((size_t)p.mm->nu + 1, sizeof *u);
    for (int a = 0; a < p.mm->nu; ++a)
      u[a] = test_rand(&seed, -2, 2);
    random_state(p.mm, &seed, q, v);
    check_actuation(c->file, &p, q, v, u);
    check_trajectory(c->file, &p, c->trajectory ? c->traj_tol : INFINITY, NULL);
    if (c->trajectory && p.mm->nu) check_trajectory(c->file, &p, c->traj_tol, u);
    free(u);
  }
  free(zero), free(q), free(v);
  free_pair(&p);
}

/* MOREAU_MJCF_FILES=A.xml:B.xml compares more files (absolute paths), e.g. other Control
 * Suite models */
static void test_more_files(void **state) {
  const char *env = getenv("MOREAU_MJCF_FILES");
  if (!env) skip();
  char buf[8192];
  snprintf(buf, sizeof buf, "%s", env);
  for (char *f = strtok(buf, ":"); f; f = strtok(NULL, ":")) {
    /* a model moreau refuses to simulate is compared as a tree */
    mr_scene sc;
    mr_error e = {MR_OK, ""};
    mr_status st = mr_mjcf_load(f, NULL, &sc, &e);
    mr_scene_free(&sc);
    if (st == MR_ERR_UNSUPPORTED) {
      printf("  %s: refused (%s)\n", f, e.msg);
      mr_mjcf_options opt = mr_mjcf_options_default();
      opt.tree_only = 1;
      st = mr_mjcf_load(f, &opt, &sc, &e);
      mr_scene_free(&sc);
      if (st == MR_ERR_UNSUPPORTED) { /* a tree moreau cannot read (a mesh file, ...) */
        printf("  %s: not compared, refused as a tree too (%s)\n", f, e.msg);
        continue;
      }
      st = MR_ERR_UNSUPPORTED;
    }
    mj_case c = {f, 0, 0, st == MR_ERR_UNSUPPORTED};
    run_case(&c);
  }
}

static void test_models(void **state) {
  if (!mjcf_root()) {
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) fail_msg("the MJCF reference models are missing");
    skip();
  }
  for (int i = 0; i < NCASES; ++i)
    run_case(&cases[i]);
}

/* MuJoCo's warnings printed, not appended to MUJOCO_LOG.TXT in the working directory */
static void mujoco_warning(const char *msg) {
  printf("  MuJoCo warning: %s\n", msg);
}

int main(void) {
  mju_user_warning = mujoco_warning;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_models),
      cmocka_unit_test(test_more_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
