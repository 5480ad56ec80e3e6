/* The locomotion MPC (mpc.h; the equations are in docs/mpc.md).
 *
 * State of the single rigid body, 12 entries: x = (θ, p, ω, ṗ) — roll, pitch, yaw; centre of
 * mass; angular velocity and centre-of-mass velocity in the world frame. Linearised about zero
 * roll and pitch and the reference yaw ψ_k of step k, over a step Δ with the forces held:
 *
 *   θ⁺ = θ + Δ R_z(ψ_k)ᵀ ω + ½Δ² R_z(ψ_k)ᵀ I_k⁻¹ Σ rᵢ × fᵢ     ω⁺ = ω + Δ I_k⁻¹ Σ rᵢ × fᵢ
 *   p⁺ = p + Δ ṗ + ½Δ² (Σ fᵢ / m + g)                          ṗ⁺ = ṗ + Δ (Σ fᵢ / m + g)
 *
 * with I_k = R_z(ψ_k) I_yaw R_z(ψ_k)ᵀ and rᵢ the foothold relative to the reference centre of
 * mass. The predicted states are affine in the stacked forces U of the feet in stance, X = X_free
 * + Γ U, and the cost Σ ‖x_k − x_ref,k‖²_Q + α ‖U‖² is the QP ½ Uᵀ H U + gᵀ U with
 * H = Γᵀ Q Γ + α I, g = Γᵀ Q (X_free − X_ref), each force in its friction cone (mpc_qp.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/linalg.h"
#include "control/mpc_internal.h"
#include "control/mpc_qp.h"
#include "moreau/dynamics.h"

#define NX 12           /* θ, p, ω, ṗ */
#define BLOCK_FROM 2    /* the first step whose forces are held over two steps */
#define IK_ITERS 4      /* Gauss-Newton iterations of a swing leg's inverse kinematics */
#define IK_DAMPING 1e-4 /* m²: Levenberg-Marquardt damping of the leg's 3x3 system */
#define IK_STEP 0.2     /* rad: largest Gauss-Newton step */
#define IK_REACH 0.5    /* rad: largest distance of a joint target from the joint */
#define FALL_TILT (M_PI / 3.0)
#define FALL_DWELL 0.3    /* s: the body on the ground this long without a break is down */
#define POS_LEAD_MAX 0.1  /* m: the integrated reference position stays this close */
#define YAW_LEAD_MAX 0.3  /* rad: the integrated reference yaw stays this close */
#define FORCE_WEIGHT 2e-4 /* α, 1/N² relative to the state weights below */
#define TOUCHDOWN_DEPTH                                                                            \
  0.01 /* m: a swing ends this far below the ground estimate, so that                              \
           the foot meets ground a little lower than estimated */
#define LATE_DEPTH                                                                                 \
  0.03                     /* m: a foot in stance that has not met the ground yet reaches this     \
                               far below itself or the ground estimate, whichever is lower */
#define CONTACT_FORCE 0.5  /* N: a foot whose body the ground pushed harder is in contact */
#define MAX_SLOPE 0.6      /* the ground estimate's largest gradient (31°) */
#define LOAD_FLOOR 0.01    /* a planted leg's force bound is at least this share of the weight */
#define INT_MAX_SHARE 0.8  /* the integral correction stays within this share of the command */
#define INT_MAX_FLOOR 0.1  /* m/s: plus this (a command of 0 may still need a correction) */

/* the state weights Q: roll, pitch, yaw; x, y, z; ω; ṗ */
static const double q_weight[NX] = {10, 10, 20, 2, 2, 50, 0.1, 0.1, 0.5, 2, 2, 1};

typedef struct {
  int frame, body;
  int dof[3], coord[3]; /* the leg's joints: velocity and configuration indices */
  mr_vec3 hip;          /* nominal foot position relative to the centre of mass, yaw frame */
  mr_vec3 lift;         /* world position at the last lift-off */
  int stance;           /* in stance by the gait's schedule */
  int contact;          /* touched down: the ground pushed on the foot's body since its last
                           lift-off (latched: a resting foot's contact may come and go) */
} mpc_foot;

struct mr_mpc {
  const mr_model *m;
  mr_data *d;
  mr_mpc_settings cfg;
  int base, first_body, nbodies;
  int N, nb_max; /* horizon steps; most force blocks */
  double mass;
  double com_height; /* standing: centre of mass above the mean foot height */
  mpc_foot foot[MR_MPC_FEET];
  int started;
  double t_prev, t_next, t_plan; /* last control, next solve, first step of the plan */
  double yaw_des;
  mr_vec3 p_des;
  double v_int[2];    /* the integral action: the plan's command minus the user's, heading frame */
  double down_since;  /* s: since when the trunk or a thigh bears on the ground, NAN if not */
  double plane[3];    /* the ground estimate z = a + b x + c y through the feet */
  mr_mat3 cone_frame; /* its frame (t₁, t₂, n) as columns: the MPC's friction cones */
  double *plan;       /* [N][feet][3] the last solve's forces */
  double *gam;        /* NX N x 3 nb_max: Γ, row-major with 3 nb columns */
  double *H, *g, *u, *y, *work, *mu, *fmax;
  double *xfree, *xref;   /* NX (N + 1) */
  double *yaw_ref;        /* N + 1 */
  mr_vec3 *rel;           /* nb_max: rᵢ of each block */
  int *blk_k, *blk_foot;  /* nb_max: first step and foot of each block */
  int *blk_len;           /* nb_max: steps the block's force is held (1 or 2) */
  double *blk_td;         /* nb_max: the touchdown that starts the block's stance, s */
  mr_vec3 *rel2;          /* nb_max: the lever arm at the block's second step */
  double *J, *qik, *grav; /* 3 nv; nq; nv */
  mr_mpc_status status;
};

/* ---- settings ---- */

mr_mpc_settings mr_mpc_settings_default(void) {
  mr_mpc_settings c = {.gait = MR_GAIT_TROT,
                       .period = 0.2,
                       .duty = 0.5,
                       .step_height = 0.05,
                       .horizon = 0.3,
                       .dt = 0.025,
                       .mu = 0.5,
                       .kp = 20.0,
                       .kd = 0.3,
                       .stance_kd = 0.02,
                       .torque_limit = 2.7,
                       .raibert_gain = 0.15,
                       .integral_gain = 1.0,
                       .max_iter = 50,
                       .max_load = 1.5};
  static const char *const feet[MR_MPC_FEET] = {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"};
  for (int i = 0; i < MR_MPC_FEET; ++i)
    strcpy(c.feet[i], feet[i]);
  return c;
}

mr_status mr_mpc_settings_check(const mr_mpc_settings *c, mr_error *err) {
  const struct {
    const char *name;
    double x, lo;
  } pos[] = {{"period", c->period, 0.0},
             {"horizon", c->horizon, 0.0},
             {"dt", c->dt, 0.0},
             {"max_load", c->max_load, 0.0}};
  for (size_t k = 0; k < sizeof pos / sizeof pos[0]; ++k)
    if (!(isfinite(pos[k].x) && pos[k].x > pos[k].lo))
      return mr_error_set(err, MR_ERR_INVALID, "mpc: '%s' must be finite and > 0, got %g",
                          pos[k].name, pos[k].x);
  const struct {
    const char *name;
    double x;
  } nonneg[] = {{"step_height", c->step_height},
                {"mu", c->mu},
                {"kp", c->kp},
                {"kd", c->kd},
                {"stance_kd", c->stance_kd},
                {"torque_limit", c->torque_limit},
                {"raibert_gain", c->raibert_gain},
                {"integral_gain", c->integral_gain}};
  for (size_t k = 0; k < sizeof nonneg / sizeof nonneg[0]; ++k)
    if (!(isfinite(nonneg[k].x) && nonneg[k].x >= 0.0))
      return mr_error_set(err, MR_ERR_INVALID, "mpc: '%s' must be finite and >= 0, got %g",
                          nonneg[k].name, nonneg[k].x);
  for (int k = 0; k < 3; ++k)
    if (!isfinite(c->velocity[k]))
      return mr_error_set(err, MR_ERR_INVALID, "mpc: velocity[%d] is not finite", k);
  if (!(c->duty > 0.0 && c->duty < 1.0))
    return mr_error_set(err, MR_ERR_INVALID, "mpc: 'duty' must be in (0, 1), got %g", c->duty);
  if (c->horizon < c->dt || c->horizon > 100 * c->dt)
    return mr_error_set(err, MR_ERR_INVALID,
                        "mpc: 'horizon' %g s must span 1 to 100 steps of dt = %g s", c->horizon,
                        c->dt);
  if (c->gait != MR_GAIT_TROT && c->gait != MR_GAIT_STAND)
    return mr_error_set(err, MR_ERR_INVALID, "mpc: unknown gait %d", (int)c->gait);
  if (c->max_iter < 1)
    return mr_error_set(err, MR_ERR_INVALID, "mpc: 'iterations' must be >= 1, got %d", c->max_iter);
  return MR_OK;
}

/* ---- gait ---- */

/* the phase of foot i at time t in [0, 1): stance on [0, duty) */
static double phase(const mr_mpc *c, int i, double t) {
  double offset = (i == 0 || i == 3) ? 0.0 : 0.5;
  double x = t / c->cfg.period + offset;
  return x - floor(x);
}

static int in_stance(const mr_mpc *c, int i, double t) {
  return c->cfg.gait == MR_GAIT_STAND || phase(c, i, t) < c->cfg.duty;
}

/* the start of the stance of foot i that contains time t */
static double touchdown_before(const mr_mpc *c, int i, double t) {
  return t - phase(c, i, t) * c->cfg.period;
}

/* ---- kinematics ---- */

static void kinematics(mr_mpc *c, const double *q) {
  mr_forward_kinematics(c->m, c->d, q, NULL, NULL);
  mr_update_frames(c->m, c->d);
}

static mr_vec3 foot_position(const mr_mpc *c, int i) {
  return c->d->oMf[c->foot[i].frame].p;
}

static double yaw_of(const mr_mat3 *R) {
  return atan2(R->m[1][0], R->m[0][0]);
}

static mr_mat3 rot_z(double yaw) {
  return mr_m3_axis_angle(mr_v3(0, 0, 1), yaw);
}

/* The robot's centre of mass and, when I is given, the rotational inertia the MPC predicts with:
 * the trunk's, about the centre of mass, world frame (after kinematics). With the feet planted
 * the legs do not turn with the trunk, and the composite inertia of the whole robot (about 5 times
 * the trunk's in roll on Solo-12) makes the controller over-correct the trunk's rotation by that
 * factor, which diverges at the re-solve rate. */
static mr_vec3 composite(const mr_mpc *c, mr_mat3 *I) {
  mr_vec3 com = mr_v3_zero();
  for (int b = c->first_body; b < c->first_body + c->nbodies; ++b) {
    const mr_inertia *Y = &c->m->bodies[b].inertia;
    const mr_se3 *X = &c->d->oMi[b];
    com = mr_v3_madd(com, Y->m, mr_v3_add(X->p, mr_m3_mulv(&X->R, Y->c)));
  }
  com = mr_v3_scale(com, 1.0 / c->mass);
  if (!I) return com;
  *I = mr_m3_zero();
  for (int b = c->base; b == c->base; ++b) {
    const mr_inertia *Y = &c->m->bodies[b].inertia;
    const mr_se3 *X = &c->d->oMi[b];
    mr_vec3 r = mr_v3_sub(mr_v3_add(X->p, mr_m3_mulv(&X->R, Y->c)), com);
    mr_mat3 Ib = mr_m3_rotate(&X->R, &Y->I), S = mr_m3_skew(r);
    mr_mat3 SS = mr_m3_mul(&S, &S); /* [r]×² = r rᵀ − ‖r‖² 1 */
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k)
        I->m[a][k] += Ib.m[a][k] - Y->m * SS.m[a][k];
  }
  return com;
}

static mr_mat3 inverse3(const mr_mat3 *A) {
  const double(*a)[3] = A->m;
  mr_mat3 B;
  B.m[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
  B.m[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
  B.m[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
  B.m[1][0] = a[1][2] * a[2][0] - a[1][0] * a[2][2];
  B.m[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
  B.m[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
  B.m[2][0] = a[1][0] * a[2][1] - a[1][1] * a[2][0];
  B.m[2][1] = a[0][1] * a[2][0] - a[0][0] * a[2][1];
  B.m[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  double det = a[0][0] * B.m[0][0] + a[0][1] * B.m[1][0] + a[0][2] * B.m[2][0];
  return mr_m3_scale(&B, 1.0 / det);
}

/* the body-state of the robot: x0 (NX) from q, v (after kinematics at q); returns the COM */
static mr_vec3 body_state(const mr_mpc *c, const double *v, double yaw_near, double *x0,
                          mr_mat3 *I) {
  const mr_se3 *X = &c->d->oMi[c->base];
  const double *vb = v + c->m->bodies[c->base].joint.idx_v;
  mr_vec3 com = composite(c, I);
  mr_vec3 w = mr_m3_mulv(&X->R, mr_v3(vb[3], vb[4], vb[5]));
  mr_vec3 vo = mr_m3_mulv(&X->R, mr_v3(vb[0], vb[1], vb[2]));
  mr_vec3 vc = mr_v3_add(vo, mr_v3_cross(w, mr_v3_sub(com, X->p)));
  double yaw = yaw_of(&X->R);
  yaw += 2.0 * M_PI * round((yaw_near - yaw) / (2.0 * M_PI));
  double r[3] = {atan2(X->R.m[2][1], X->R.m[2][2]), asin(fmax(-1.0, fmin(1.0, -X->R.m[2][0]))),
                 yaw};
  for (int k = 0; k < 3; ++k) {
    x0[k] = r[k];
    x0[3 + k] = com.v[k];
    x0[6 + k] = w.v[k];
    x0[9 + k] = vc.v[k];
  }
  return com;
}

/* the ground estimate's height at (x, y) */
static double ground_at(const mr_mpc *c, double x, double y) {
  return c->plane[0] + c->plane[1] * x + c->plane[2] * y;
}

/* The ground plane through the feet — where each stands, or stood last — by least squares,
 * z = a + b x + c y, its slope capped at MAX_SLOPE; the MPC's cones are about its normal. A
 * degenerate fit (feet in a line) keeps the previous plane. */
static void ground_plane(mr_mpc *c) {
  double A[9] = {0}, r[3] = {0};
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    mr_vec3 p = c->foot[i].contact ? foot_position(c, i) : c->foot[i].lift;
    double row[3] = {1.0, p.v[0], p.v[1]};
    for (int a = 0; a < 3; ++a) {
      r[a] += row[a] * p.v[2];
      for (int b = 0; b < 3; ++b)
        A[3 * a + b] += row[a] * row[b];
    }
  }
  if (mr_cholesky(A, 3)) return;
  mr_cholesky_solve(A, 3, r);
  double slope = hypot(r[1], r[2]);
  if (slope > MAX_SLOPE) r[1] *= MAX_SLOPE / slope, r[2] *= MAX_SLOPE / slope;
  mr_copy(c->plane, r, 3);
  mr_vec3 n = mr_v3_normalize(mr_v3(-r[1], -r[2], 1.0));
  mr_vec3 t1 = mr_v3_normalize(mr_v3_madd(mr_v3(1, 0, 0), -n.v[0], n));
  mr_vec3 t2 = mr_v3_cross(n, t1);
  for (int k = 0; k < 3; ++k)
    c->cone_frame.m[k][0] = t1.v[k], c->cone_frame.m[k][1] = t2.v[k],
    c->cone_frame.m[k][2] = n.v[k];
}

/* the velocity the plan commands (the user's command and the integral action) in the world
 * frame at heading yaw */
static mr_vec3 command_world(const mr_mpc *c, double yaw) {
  double vx = c->cfg.velocity[0] + c->v_int[0], vy = c->cfg.velocity[1] + c->v_int[1];
  return mr_v3(cos(yaw) * vx - sin(yaw) * vy, sin(yaw) * vx + cos(yaw) * vy, 0.0);
}

/* Raibert's foothold of foot i for a touchdown at t_td: the hip's predicted position at the
 * touchdown, plus half the stance's travel at the commanded velocity, plus a correction of the
 * velocity error; on the ground estimate */
static mr_vec3 foothold(const mr_mpc *c, int i, double t, double t_td, mr_vec3 com, mr_vec3 vcom) {
  double dt = t_td - t, wz = c->cfg.velocity[2];
  double yaw_td = c->yaw_des + wz * dt;
  mr_vec3 travel = mr_v3_scale(command_world(c, c->yaw_des + 0.5 * wz * dt), dt);
  mr_mat3 Rz = rot_z(yaw_td);
  mr_vec3 hip = mr_m3_mulv(&Rz, c->foot[i].hip);
  mr_vec3 vcmd = command_world(c, c->yaw_des);
  double half_stance = 0.5 * c->cfg.duty * c->cfg.period;
  mr_vec3 p = mr_v3_add(mr_v3_add(com, travel), hip);
  p = mr_v3_madd(p, half_stance, command_world(c, yaw_td));
  p = mr_v3_madd(p, c->cfg.raibert_gain, mr_v3_sub(vcom, vcmd));
  p.v[2] = ground_at(c, p.v[0], p.v[1]);
  return p;
}

/* ---- creation ---- */

static mr_status find_foot(mr_mpc *c, const mr_world_robot *rb, int i, mr_error *err) {
  char name[2 * MR_NAME_MAX + 2];
  snprintf(name, sizeof name, "%s/%s", rb->name, c->cfg.feet[i]);
  mpc_foot *f = &c->foot[i];
  f->frame = mr_model_frame_index(c->m, name);
  if (f->frame < 0)
    return mr_error_set(err, MR_ERR_INVALID, "mpc: robot '%s' has no foot frame '%s'", rb->name,
                        c->cfg.feet[i]);
  f->body = c->m->frames[f->frame].body;
  int n = 0;
  for (int b = f->body; b > c->base && b > 0; b = c->m->bodies[b].parent) {
    const mr_joint *j = &c->m->bodies[b].joint;
    if (j->nv != 1 || n == 3)
      return mr_error_set(err, MR_ERR_INVALID,
                          "mpc: the leg of foot '%s' is not three 1-dof "
                          "joints from the base",
                          c->cfg.feet[i]);
    f->dof[2 - n] = j->idx_v, f->coord[2 - n] = j->idx_q, ++n;
  }
  if (n != 3)
    return mr_error_set(err, MR_ERR_INVALID,
                        "mpc: the leg of foot '%s' has %d joints; the MPC needs 3", c->cfg.feet[i],
                        n);
  return MR_OK;
}

static int alloc_all(mr_mpc *c) {
  int n = 3 * c->nb_max, N = c->N;
  c->plan = calloc((size_t)N * MR_MPC_FEET * 3, sizeof(double));
  c->gam = calloc((size_t)NX * N * n, sizeof(double));
  c->H = calloc((size_t)n * n, sizeof(double));
  c->g = calloc((size_t)n, sizeof(double));
  c->u = calloc((size_t)n, sizeof(double));
  c->y = calloc((size_t)n, sizeof(double));
  c->work = calloc((size_t)mr_cone_qp_work_size(c->nb_max), sizeof(double));
  c->mu = calloc((size_t)c->nb_max, sizeof(double));
  c->fmax = calloc((size_t)c->nb_max, sizeof(double));
  c->xfree = calloc((size_t)NX * (N + 1), sizeof(double));
  c->xref = calloc((size_t)NX * (N + 1), sizeof(double));
  c->yaw_ref = calloc((size_t)N + 1, sizeof(double));
  c->rel = calloc((size_t)c->nb_max, sizeof *c->rel);
  c->blk_k = calloc((size_t)c->nb_max, sizeof(int));
  c->blk_foot = calloc((size_t)c->nb_max, sizeof(int));
  c->blk_len = calloc((size_t)c->nb_max, sizeof(int));
  c->blk_td = calloc((size_t)c->nb_max, sizeof(double));
  c->rel2 = calloc((size_t)c->nb_max, sizeof *c->rel2);
  c->J = calloc((size_t)3 * c->m->nv, sizeof(double));
  c->qik = calloc((size_t)c->m->nq, sizeof(double));
  c->grav = calloc((size_t)c->m->nv, sizeof(double));
  c->d = mr_data_create(c->m);
  return c->plan && c->gam && c->H && c->g && c->u && c->y && c->work && c->mu && c->fmax &&
         c->xfree && c->xref && c->yaw_ref && c->rel && c->blk_k && c->blk_foot && c->blk_len &&
         c->blk_td && c->rel2 && c->J && c->qik && c->grav && c->d;
}

void mr_mpc_free(mr_mpc *c) {
  if (!c) return;
  void *p[] = {c->plan,     c->gam,  c->H,     c->g,    c->u,       c->y,      c->work,
               c->mu,       c->fmax, c->xfree, c->xref, c->yaw_ref, c->rel,    c->blk_k,
               c->blk_foot, c->J,    c->qik,   c->grav, c->blk_len, c->blk_td, c->rel2};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; ++k)
    free(p[k]);
  mr_data_free(c->d);
  free(c);
}

/* the standing geometry at q: heights above the feet and the feet's nominal placement */
static void standing_geometry(mr_mpc *c, const double *q) {
  kinematics(c, q);
  mr_vec3 com = composite(c, NULL);
  const mr_se3 *X = &c->d->oMi[c->base];
  mr_mat3 Rz = rot_z(yaw_of(&X->R));
  double zf = 0.0;
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    mr_vec3 p = foot_position(c, i);
    zf += p.v[2] / MR_MPC_FEET;
    c->foot[i].hip = mr_m3_tmulv(&Rz, mr_v3_sub(p, com));
    c->foot[i].hip.v[2] = 0.0;
  }
  c->com_height = com.v[2] - zf;
}

mr_mpc *mr_mpc_create(const mr_world *w, int r, const mr_mpc_settings *cfg, mr_error *err) {
  if (r < 0 || r >= w->nrobots) {
    mr_error_set(err, MR_ERR_INVALID, "mpc: robot %d out of range", r);
    return NULL;
  }
  if (mr_mpc_settings_check(cfg, err)) return NULL;
  const mr_world_robot *rb = &w->robots[r];
  if (!rb->floating) {
    mr_error_set(err, MR_ERR_INVALID, "mpc: robot '%s' needs a floating base", rb->name);
    return NULL;
  }
  mr_mpc *c = calloc(1, sizeof *c);
  if (!c) return mr_error_set(err, MR_ERR_NOMEM, "mpc: out of memory"), NULL;
  c->m = w->model;
  c->cfg = *cfg;
  c->base = rb->first_body;
  c->first_body = rb->first_body;
  c->nbodies = rb->nbodies;
  c->N = (int)lround(cfg->horizon / cfg->dt);
  c->nb_max = MR_MPC_FEET * c->N;
  for (int b = c->first_body; b < c->first_body + c->nbodies; ++b)
    c->mass += c->m->bodies[b].inertia.m;
  for (int i = 0; i < MR_MPC_FEET; ++i)
    if (find_foot(c, rb, i, err)) return mr_mpc_free(c), NULL;
  if (!alloc_all(c)) {
    mr_mpc_free(c);
    return mr_error_set(err, MR_ERR_NOMEM, "mpc: out of memory"), NULL;
  }
  if (!(c->mass > 0.0)) {
    mr_mpc_free(c);
    return mr_error_set(err, MR_ERR_INVALID, "mpc: robot '%s' has no mass", rb->name), NULL;
  }
  standing_geometry(c, w->q0);
  return c;
}

void mr_mpc_reset(mr_mpc *c, const double *q, double t) {
  (void)q;
  c->started = 0;
  c->t_prev = c->t_next = c->t_plan = t;
  memset(&c->status, 0, sizeof c->status);
  mr_zero(c->plan, c->N * MR_MPC_FEET * 3);
}

void mr_mpc_set_velocity(mr_mpc *c, const double velocity[3]) {
  memcpy(c->cfg.velocity, velocity, sizeof c->cfg.velocity);
}

const mr_mpc_status *mr_mpc_get_status(const mr_mpc *c) {
  return &c->status;
}

/* the first control after a reset: the references start at the current state */
static void start(mr_mpc *c, double t) {
  const mr_se3 *X = &c->d->oMi[c->base];
  c->yaw_des = yaw_of(&X->R);
  c->p_des = composite(c, NULL);
  c->v_int[0] = c->v_int[1] = 0.0;
  c->down_since = NAN;
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    c->foot[i].lift = foot_position(c, i);
    c->foot[i].stance = 1;
    c->foot[i].contact = 0;
  }
  c->cone_frame = mr_m3_identity();
  ground_plane(c);
  c->t_prev = c->t_next = c->t_plan = t;
  c->started = 1;
}

/* ---- the QP ---- */

/* out = A_k x: θ += Δ R_z(ψ)ᵀ ω (roll, pitch) and Δ ω_z (yaw); p += Δ ṗ */
static void apply_a(const double *x, double yaw, double dt, double *out) {
  double cy = cos(yaw), sy = sin(yaw);
  mr_copy(out, x, NX);
  out[0] += dt * (cy * x[6] + sy * x[7]);
  out[1] += dt * (-sy * x[6] + cy * x[7]);
  out[2] += dt * x[8];
  for (int k = 0; k < 3; ++k)
    out[3 + k] += dt * x[9 + k];
}

/* the reference trajectory and the free response (no force) over the horizon */
static void references(mr_mpc *c, const double *x0) {
  double dt = c->cfg.dt, wz = c->cfg.velocity[2];
  double z = ground_at(c, x0[3], x0[4]) + c->com_height;
  mr_vec3 p = c->p_des;
  mr_copy(c->xfree, x0, NX);
  for (int k = 0; k <= c->N; ++k) {
    double yaw = c->yaw_des + wz * k * dt, *xr = c->xref + NX * k;
    mr_vec3 v = command_world(c, yaw);
    c->yaw_ref[k] = yaw;
    mr_zero(xr, NX);
    xr[2] = yaw, xr[3] = p.v[0], xr[4] = p.v[1], xr[5] = z, xr[8] = wz;
    xr[9] = v.v[0], xr[10] = v.v[1];
    p = mr_v3_madd(p, dt, command_world(c, yaw + 0.5 * wz * dt));
    if (k == c->N) break;
    double *xn = c->xfree + NX * (k + 1);
    apply_a(c->xfree + NX * k, c->yaw_ref[k], dt, xn);
    for (int a = 0; a < 3; ++a) {
      xn[3 + a] += 0.5 * dt * dt * c->m->gravity.v[a];
      xn[9 + a] += dt * c->m->gravity.v[a];
    }
  }
}

static void leg_jacobian(mr_mpc *c, int i, double J3[9]);

/* The most force along the cones' normal that foot i's leg gives within torque_limit at its
 * present posture: τ = g_leg − J_legᵀ n N within ±τ_max at each of its joints (after kinematics
 * at q, with the legs' gravity torques in c->grav), at least LOAD_FLOOR of the weight */
static double leg_capacity(mr_mpc *c, int i) {
  double J3[9], weight = -c->mass * c->m->gravity.v[2], cap = INFINITY, tl = c->cfg.torque_limit;
  leg_jacobian(c, i, J3);
  for (int a = 0; a < 3; ++a) {
    double jn = 0.0, g = c->grav[c->foot[i].dof[a]];
    for (int r = 0; r < 3; ++r)
      jn += J3[3 * r + a] * c->cone_frame.m[r][2];
    if (jn > 0.0) cap = fmin(cap, (g + tl) / jn);
    if (jn < 0.0) cap = fmin(cap, (g - tl) / jn);
  }
  return fmax(cap, LOAD_FLOOR * weight);
}

/* the force blocks: every (step, foot) in stance, with its lever arm; from step BLOCK_FROM on, a
 * foot's force is held over two steps of the same stance (one block for both: fewer variables
 * where the plan matters least, as the far steps are re-planned before they come); a planted
 * foot's force bound is also its leg's capacity (leg_capacity) */
static int blocks(mr_mpc *c, double t, mr_vec3 com, mr_vec3 vcom) {
  int nb = 0, last[MR_MPC_FEET] = {-1, -1, -1, -1};
  double capacity[MR_MPC_FEET] = {NAN, NAN, NAN, NAN}; /* a planted leg's, once per solve */
  for (int k = 0; k < c->N; ++k) {
    double tk = t + (k + 0.5) * c->cfg.dt;
    /* the lever arms about the centre of mass moving from where it is at the reference's
       velocity (the reference position itself may lead it by up to POS_LEAD_MAX) */
    const double *xr = c->xref + NX * k;
    mr_vec3 pk = mr_v3(com.v[0] + xr[3] - c->xref[3], com.v[1] + xr[4] - c->xref[4],
                       k == 0 ? com.v[2] : xr[5]);
    for (int i = 0; i < MR_MPC_FEET; ++i) {
      if (!in_stance(c, i, tk)) {
        last[i] = -1;
        continue;
      }
      double t_td = touchdown_before(c, i, tk);
      int planted = c->cfg.gait == MR_GAIT_STAND || (t_td <= t && c->foot[i].stance);
      mr_vec3 p = planted ? foot_position(c, i) : foothold(c, i, t, t_td, com, vcom);
      int b = last[i];
      if (b >= 0 && c->blk_len[b] == 1 && c->blk_k[b] == k - 1 && c->blk_k[b] >= BLOCK_FROM &&
          (c->blk_k[b] - BLOCK_FROM) % 2 == 0 && fabs(c->blk_td[b] - t_td) < 1e-9) {
        c->blk_len[b] = 2, c->rel2[b] = mr_v3_sub(p, pk);
        continue;
      }
      c->blk_k[nb] = k, c->blk_foot[nb] = i, c->blk_len[nb] = 1, c->blk_td[nb] = t_td;
      c->rel[nb] = mr_v3_sub(p, pk);
      c->mu[nb] = c->cfg.mu;
      c->fmax[nb] = -c->cfg.max_load * c->mass * c->m->gravity.v[2];
      if (planted && isnan(capacity[i])) capacity[i] = leg_capacity(c, i);
      if (planted) c->fmax[nb] = fmin(c->fmax[nb], capacity[i]);
      last[i] = nb++;
    }
  }
  return nb;
}

/* B_{k} e for a unit force e at lever arm r, step k: the state's change over the step */
static void input_column(const mr_mpc *c, const mr_mat3 *Iinv_yaw, int k, mr_vec3 r, mr_vec3 e,
                         double *col) {
  double dt = c->cfg.dt;
  mr_mat3 Rz = rot_z(c->yaw_ref[k]);
  mr_mat3 Iinv = mr_m3_rotate(&Rz, Iinv_yaw), S = mr_m3_skew(r);
  mr_mat3 W = mr_m3_mul(&Iinv, &S); /* angular acceleration per unit force */
  mr_mat3 RW = mr_m3_tmul(&Rz, &W);
  mr_vec3 we = mr_m3_mulv(&W, e), rwe = mr_m3_mulv(&RW, e);
  for (int a = 0; a < 3; ++a) {
    col[a] = 0.5 * dt * dt * rwe.v[a];
    col[3 + a] = 0.5 * dt * dt / c->mass * e.v[a];
    col[6 + a] = dt * we.v[a];
    col[9 + a] = dt / c->mass * e.v[a];
  }
}

/* Γ: the column triple of block b is B_{k,i} at step k (plus B_{k+1,i} at the next step for a
 * block held over two), propagated by A_j */
static void input_matrix(mr_mpc *c, int nb, const mr_mat3 *I_yaw) {
  int n = 3 * nb;
  double dt = c->cfg.dt;
  mr_mat3 Iinv_yaw = inverse3(I_yaw);
  memset(c->gam, 0, (size_t)NX * c->N * n * sizeof *c->gam);
  for (int b = 0; b < nb; ++b) {
    int k = c->blk_k[b];
    for (int a = 0; a < 3; ++a) {
      /* the world force of a unit u along the cone frame's axis a */
      mr_vec3 e = mr_v3(c->cone_frame.m[0][a], c->cone_frame.m[1][a], c->cone_frame.m[2][a]);
      double col[NX], next[NX], add[NX];
      input_column(c, &Iinv_yaw, k, c->rel[b], e, col);
      for (int j = k; j < c->N; ++j) {
        for (int r = 0; r < NX; ++r)
          c->gam[((size_t)NX * j + r) * n + 3 * b + a] = col[r];
        if (j + 1 == c->N) break;
        apply_a(col, c->yaw_ref[j + 1], dt, next), mr_copy(col, next, NX);
        if (j + 1 < k + c->blk_len[b]) {
          input_column(c, &Iinv_yaw, j + 1, c->rel2[b], e, add);
          mr_axpy(col, 1.0, add, NX);
        }
      }
    }
  }
}

/* H = Γᵀ Q Γ + α I and g = Γᵀ Q (X_free − X_ref); step j's rows only reach the blocks of
 * steps ≤ j, which come first */
static void cost(mr_mpc *c, int nb) {
  int n = 3 * nb;
  mr_zero(c->H, n * n);
  mr_zero(c->g, n);
  int end = 0;
  for (int j = 0; j < c->N; ++j) {
    while (end < nb && c->blk_k[end] <= j)
      ++end;
    int m = 3 * end;
    const double *xf = c->xfree + NX * (j + 1), *xr = c->xref + NX * (j + 1);
    for (int r = 0; r < NX; ++r) {
      const double *G = c->gam + ((size_t)NX * j + r) * n;
      double qe = q_weight[r] * (xf[r] - xr[r]);
      for (int a = 0; a < m; ++a) {
        if (G[a] == 0.0) continue;
        double qa = q_weight[r] * G[a];
        c->g[a] += G[a] * qe;
        for (int b = a; b < m; ++b)
          c->H[(size_t)a * n + b] += qa * G[b];
      }
    }
  }
  for (int a = 0; a < n; ++a) {
    c->H[(size_t)a * n + a] += FORCE_WEIGHT;
    for (int b = 0; b < a; ++b)
      c->H[(size_t)a * n + b] = c->H[(size_t)b * n + a];
  }
}

/* the calling thread's CPU time, s */
static double thread_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* solve the MPC at time t from state x0; the plan keeps every step's forces */
static void solve(mr_mpc *c, double t, const double *x0, mr_vec3 com, const mr_mat3 *I) {
  mr_mat3 Rz = rot_z(x0[2]);
  mr_mat3 I_yaw = mr_m3_tmul(&Rz, I);
  I_yaw = mr_m3_mul(&I_yaw, &Rz);
  mr_vec3 vcom = mr_v3(x0[9], x0[10], x0[11]);
  references(c, x0);
  int nb = blocks(c, t, com, vcom);
  input_matrix(c, nb, &I_yaw);
  cost(c, nb);
  mr_cone_qp p = {.nb = nb, .H = c->H, .g = c->g, .mu = c->mu, .fmax = c->fmax};
  mr_cone_qp_settings s = mr_cone_qp_settings_default();
  s.max_iter = c->cfg.max_iter;
  mr_cone_qp_info info;
  mr_zero(c->plan, c->N * MR_MPC_FEET * 3);
  c->status.solves++;
  double t0 = thread_seconds();
  int bad = mr_cone_qp_solve(&p, &s, c->work, c->u, &info);
  c->status.qp_time = thread_seconds() - t0;
  if (bad) return;
  c->status.not_converged += !info.converged;
  c->status.iterations = info.iterations;
  if (info.iterations > c->status.max_iterations) c->status.max_iterations = info.iterations;
  c->status.kkt = mr_cone_qp_kkt(&p, c->u, c->y);
  for (int b = 0; b < nb; ++b) {
    mr_vec3 f = mr_m3_mulv(&c->cone_frame, mr_v3(c->u[3 * b], c->u[3 * b + 1], c->u[3 * b + 2]));
    for (int k = c->blk_k[b]; k < c->blk_k[b] + c->blk_len[b]; ++k)
      mr_copy(c->plan + 3 * (MR_MPC_FEET * k + c->blk_foot[b]), f.v, 3);
  }
  c->t_plan = t;
}

/* ---- the legs ---- */

/* the foot's 3x3 leg Jacobian (world velocity per joint rate), after kinematics */
static void leg_jacobian(mr_mpc *c, int i, double J3[9]) {
  int nv = c->m->nv;
  mr_point_jacobian(c->m, c->d, c->foot[i].body, foot_position(c, i), c->J);
  for (int r = 0; r < 3; ++r)
    for (int a = 0; a < 3; ++a)
      J3[3 * r + a] = c->J[(size_t)r * nv + c->foot[i].dof[a]];
}

/* stance: τ = g_leg − Jᵀ f, the plan's force at the current step over the leg's own weight
 * (the leg's entries of the generalised gravity: the torques holding the leg up) */
static void stance_leg(mr_mpc *c, int i, double t, const double *grav, double *tau, double *kp,
                       double *kd) {
  int k = (int)floor((t - c->t_plan) / c->cfg.dt + 1e-9);
  k = k < 0 ? 0 : (k >= c->N ? c->N - 1 : k);
  const double *f = c->plan + 3 * (MR_MPC_FEET * k + i);
  double J3[9];
  leg_jacobian(c, i, J3);
  for (int a = 0; a < 3; ++a) {
    int dof = c->foot[i].dof[a];
    double x = grav[dof] - (J3[a] * f[0] + J3[3 + a] * f[1] + J3[6 + a] * f[2]);
    tau[dof] = fmax(-c->cfg.torque_limit, fmin(c->cfg.torque_limit, x));
    kp[dof] = 0.0, kd[dof] = c->cfg.stance_kd;
  }
}

/* minimum-jerk blend 0 → 1 and a bump 0 → 1 → 0 over s ∈ [0, 1] */
static double blend(double s) {
  return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s);
}
static double bump(double s) {
  return 16.0 * s * s * (1.0 - s) * (1.0 - s);
}

/* the joint angles putting foot i at world point target (base fixed at q), from q */
static void leg_ik(mr_mpc *c, int i, const double *q, mr_vec3 target) {
  mr_copy(c->qik, q, c->m->nq);
  for (int it = 0; it < IK_ITERS; ++it) {
    kinematics(c, c->qik);
    mr_vec3 e = mr_v3_sub(target, foot_position(c, i));
    if (mr_v3_norm(e) < 1e-6) break;
    double J3[9], A[9], rhs[3];
    leg_jacobian(c, i, J3);
    /* (JᵀJ + λ 1) δ = Jᵀ e */
    for (int a = 0; a < 3; ++a) {
      rhs[a] = J3[a] * e.v[0] + J3[3 + a] * e.v[1] + J3[6 + a] * e.v[2];
      for (int b = 0; b < 3; ++b)
        A[3 * a + b] = J3[a] * J3[b] + J3[3 + a] * J3[3 + b] + J3[6 + a] * J3[6 + b] +
                       (a == b ? IK_DAMPING : 0.0);
    }
    if (mr_cholesky(A, 3)) break;
    mr_cholesky_solve(A, 3, rhs);
    /* a bounded step, and the target within IK_REACH of the leg's present angles: an
       unreachable point leaves the leg stretched towards it instead of a wild target */
    double step = sqrt(rhs[0] * rhs[0] + rhs[1] * rhs[1] + rhs[2] * rhs[2]);
    double scale = step > IK_STEP ? IK_STEP / step : 1.0;
    for (int a = 0; a < 3; ++a) {
      int iq = c->foot[i].coord[a];
      double x = c->qik[iq] + scale * rhs[a];
      c->qik[iq] = fmax(q[iq] - IK_REACH, fmin(q[iq] + IK_REACH, x));
    }
  }
}

/* the joint PD to the world point p by inverse kinematics, the leg's weight compensated */
static void place_foot(mr_mpc *c, int i, const double *q, mr_vec3 p, const double *grav,
                       double *tau, double *q_target, double *kp, double *kd) {
  leg_ik(c, i, q, p);
  for (int k = 0; k < 3; ++k) {
    int dof = c->foot[i].dof[k], iq = c->foot[i].coord[k];
    q_target[iq] = c->qik[iq];
    tau[dof] = grav[dof], kp[dof] = c->cfg.kp, kd[dof] = c->cfg.kd;
  }
}

/* swing: a smooth curve from the lift-off point to the foothold, tracked by the joint PD */
static void swing_leg(mr_mpc *c, int i, double t, const double *q, mr_vec3 com, mr_vec3 vcom,
                      const double *grav, double *tau, double *q_target, double *kp, double *kd) {
  double T = c->cfg.period, ph = phase(c, i, t);
  double s = (ph - c->cfg.duty) / (1.0 - c->cfg.duty);
  double t_td = t + (1.0 - ph) * T;
  mr_vec3 a = c->foot[i].lift, b = foothold(c, i, t, t_td, com, vcom);
  b.v[2] -= TOUCHDOWN_DEPTH;
  mr_vec3 p = mr_v3_add(a, mr_v3_scale(mr_v3_sub(b, a), blend(s)));
  p.v[2] += c->cfg.step_height * bump(s);
  place_foot(c, i, q, p, grav, tau, q_target, kp, kd);
}

/* a late touchdown: the foot in stance keeps reaching down where it is until it meets ground
 * (a target fixed in the world would fold the leg up as the trunk sinks) */
static void reach_down(mr_mpc *c, int i, const double *q, const double *grav, double *tau,
                       double *q_target, double *kp, double *kd) {
  mr_vec3 p = foot_position(c, i);
  p.v[2] = fmin(p.v[2], ground_at(c, p.v[0], p.v[1])) - LATE_DEPTH;
  place_foot(c, i, q, p, grav, tau, q_target, kp, kd);
}

/* ---- the control step ---- */

/* The integral action: the legs' unmodelled effects (their mass swinging, the stance's
 * compliance) leave the walk a few per cent short of its command, a share that grows with the
 * speed; the plan's command grows by integral_gain times the velocity error (the centre of
 * mass's, in the heading frame) per second, within INT_MAX_SHARE of the command plus
 * INT_MAX_FLOOR, plus, in a turn, the change ω v of the other component's velocity over a gait
 * period (the heading frame turns under it). The error oscillates with the gait; the integral
 * averages it out. */
static void integrate_error(mr_mpc *c, double dt, const double *x0) {
  double cy = cos(c->yaw_des), sy = sin(c->yaw_des), wz = c->cfg.velocity[2];
  double v[2] = {cy * x0[9] + sy * x0[10], -sy * x0[9] + cy * x0[10]};
  for (int k = 0; k < 2; ++k) {
    double bound = INT_MAX_SHARE * fabs(c->cfg.velocity[k]) + INT_MAX_FLOOR +
                   c->cfg.period * fabs(wz * c->cfg.velocity[1 - k]);
    double x = c->v_int[k] + c->cfg.integral_gain * dt * (c->cfg.velocity[k] - v[k]);
    c->v_int[k] = fmax(-bound, fmin(bound, x));
  }
}

/* advance the integrated references by the elapsed time, kept near the state */
static void advance_references(mr_mpc *c, double t, const double *x0) {
  double dt = t - c->t_prev, wz = c->cfg.velocity[2];
  integrate_error(c, dt, x0);
  c->p_des = mr_v3_madd(c->p_des, dt, command_world(c, c->yaw_des + 0.5 * wz * dt));
  c->yaw_des += wz * dt;
  c->t_prev = t;
  c->yaw_des = x0[2] + fmax(-YAW_LEAD_MAX, fmin(YAW_LEAD_MAX, c->yaw_des - x0[2]));
  for (int k = 0; k < 2; ++k)
    c->p_des.v[k] = x0[3 + k] + fmax(-POS_LEAD_MAX, fmin(POS_LEAD_MAX, c->p_des.v[k] - x0[3 + k]));
}

/* lift-offs: the foot's position is kept */
static void update_gait(mr_mpc *c, double t) {
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    int st = in_stance(c, i, t);
    if (c->foot[i].stance && !st) {
      c->foot[i].lift = foot_position(c, i);
      c->foot[i].contact = 0;
    }
    c->foot[i].stance = st;
  }
}

/* the ground pushes on the trunk or a thigh (a body of a leg other than the foot's) */
static int body_down(const mr_mpc *c, const mr_force *wrench) {
  if (mr_v3_norm(wrench[c->base].f) > CONTACT_FORCE) return 1;
  for (int i = 0; i < MR_MPC_FEET; ++i)
    for (int b = c->m->bodies[c->foot[i].body].parent; b > c->base; b = c->m->bodies[b].parent)
      if (mr_v3_norm(wrench[b].f) > CONTACT_FORCE) return 1;
  return 0;
}

/* A fall: the base tilted beyond 60° (turned over), or the trunk or a thigh bearing on the
 * ground for FALL_DWELL without a break (the robot down on its body or its knees, standing,
 * sliding or dragged). Not a brief touch: a stumble that brushes the trunk or a thigh on a
 * bump and walks on is no fall; nor the base's height, which over rough ground swings with
 * the terrain and the feet's plane. */
static int check_fall(mr_mpc *c, double t, const mr_force *wrench) {
  const mr_se3 *X = &c->d->oMi[c->base];
  c->status.height = X->p.v[2] - ground_at(c, X->p.v[0], X->p.v[1]);
  c->status.tilt = acos(fmax(-1.0, fmin(1.0, X->R.m[2][2])));
  if (c->status.fallen) return 0;
  if (!(wrench && body_down(c, wrench)))
    c->down_since = NAN;
  else if (isnan(c->down_since))
    c->down_since = t;
  int down = !isnan(c->down_since) && t - c->down_since >= FALL_DWELL;
  if (!down && c->status.tilt <= FALL_TILT) return 0;
  c->status.fallen = 1;
  c->status.fall_time = down ? c->down_since : t;
  return 1;
}

/* late in its swing a foot may touch down early */
static int late_swing(const mr_mpc *c, int i, double t) {
  return !c->foot[i].stance && phase(c, i, t) > 0.5 * (1.0 + c->cfg.duty);
}

/* Touchdowns from the last step's contact wrenches (NULL: the schedule's stances), latched
 * until the next lift-off, and only in stance or late in a swing (a foot lifting off still
 * touches the ground for a step). A touched-down foot bears the MPC's force; one that touched
 * down early rests on the ground with no planned force until the next solve. */
static void update_contacts(mr_mpc *c, double t, const mr_force *wrench) {
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    mpc_foot *f = &c->foot[i];
    if (!wrench)
      f->contact = f->stance;
    else if ((f->stance || late_swing(c, i, t)) && wrench[f->body].f.v[2] > CONTACT_FORCE)
      f->contact = 1;
  }
}

static int loaded(const mr_mpc *c, int i, double t) {
  return c->foot[i].contact && (c->foot[i].stance || late_swing(c, i, t));
}

int mr_mpc_control(mr_mpc *c, double t, const double *q, const double *v, const mr_force *wrench,
                   double *tau_cmd, double *q_target, double *kp, double *kd) {
  double x0[NX];
  mr_mat3 I;
  kinematics(c, q);
  if (!c->started) start(c, t);
  mr_vec3 com = body_state(c, v, c->yaw_des, x0, &I);
  update_gait(c, t);
  update_contacts(c, t, wrench);
  ground_plane(c);
  int fell = check_fall(c, t, wrench);
  advance_references(c, t, x0);
  /* the legs' gravity torques at q (the stance legs' torques, and their force capacities) */
  mr_copy(c->grav, mr_generalized_gravity(c->m, c->d, q), c->m->nv);
  if (t >= c->t_next - 1e-9) {
    solve(c, t, x0, com, &I);
    c->t_next = t + c->cfg.dt;
  }
  mr_vec3 vcom = mr_v3(x0[9], x0[10], x0[11]);
  for (int i = 0; i < MR_MPC_FEET; ++i)
    if (loaded(c, i, t)) stance_leg(c, i, t, c->grav, tau_cmd, kp, kd);
  /* the other legs last: their inverse kinematics moves the kinematics away from q */
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    if (loaded(c, i, t)) continue;
    if (c->foot[i].stance)
      reach_down(c, i, q, c->grav, tau_cmd, q_target, kp, kd);
    else
      swing_leg(c, i, t, q, com, vcom, c->grav, tau_cmd, q_target, kp, kd);
  }
  return fell;
}
