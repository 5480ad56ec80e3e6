/* The analytical cases A1–A11 (EXPERIMENTS.md §A) as runnable measurements, shared by
 * tests/test_physics*.c (which assert them) and bench/physics_table.c (which prints the table of
 * docs/physics.md). Each pc_run_* simulates one case with one registered solver and fills a
 * pc_result with the case's errors against its closed form, measured over the whole run (every
 * step), plus the figures of the known artifacts of the contact models (CCP contact at a
 * distance, the LCP pyramid's drift, RaiSim's dissipation, the soft model's penetration and
 * creep). Nothing here asserts: the tests and the table classify the figures.
 *
 * Scenes are written inline (from scenes/a*.yaml, shortened to keep the suite fast, and with a
 * contact margin of 1 mm so that a resting body has its contacts from the first step). The
 * pendulum cases load the URDFs in scenes/models relative to the current directory (the repository
 * root, where make runs the tests). */
#ifndef MOREAU_TESTS_PHYSICS_CASES_H
#define MOREAU_TESTS_PHYSICS_CASES_H

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "moreau/assembly.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "moreau/spatial.h"

#define PC_G 9.81
#define PC_NX 8

/* what a case measured; x[] holds case-specific figures documented at each pc_run_* */
typedef struct {
  int ok;          /* 1 when every step ran */
  char msg[600];   /* the failure otherwise */
  double err;      /* the main error against the closed form (its unit in each case) */
  double x[PC_NX]; /* further figures */
  long steps;      /* steps run */
  long not_converged;
} pc_result;

/* ---- harness ---- */

static inline int pc_open(const char *text, const char *solver, mr_scene *sc, mr_sim **s,
                          pc_result *r) {
  mr_error err = {0};
  memset(r, 0, sizeof *r);
  *s = NULL;
  if (mr_scene_parse(text, "physics.yaml", ".", sc, &err)) {
    snprintf(r->msg, sizeof r->msg, "scene: %s", err.msg);
    return 0;
  }
  *s = mr_sim_from_scene(sc, solver, &err);
  if (!*s) {
    snprintf(r->msg, sizeof r->msg, "simulator: %s", err.msg);
    mr_scene_free(sc);
    return 0;
  }
  return 1;
}

static inline int pc_step(mr_sim *s, pc_result *r) {
  mr_error err = {0};
  if (mr_sim_step(s, &err)) {
    snprintf(r->msg, sizeof r->msg, "step %ld: %s", mr_sim_steps(s), err.msg);
    return 0;
  }
  r->steps = mr_sim_steps(s);
  return 1;
}

static inline void pc_close(mr_scene *sc, mr_sim *s, pc_result *r, int ok) {
  r->ok = ok;
  if (s) r->not_converged = mr_sim_get_warnings(s)->not_converged;
  mr_sim_free(s);
  mr_scene_free(sc);
}

static inline double pc_max(double a, double b) {
  return a > b ? a : b;
}

/* rotation of the free body whose configuration starts at q */
static inline mr_mat3 pc_rot(const double *q) {
  mr_quat o = {q[3], q[4], q[5], q[6]};
  return mr_quat_to_m3(o);
}

/* world-frame linear and angular velocity of a free body (v is in its local frame) */
static inline void pc_world_vel(const double *q, const double *v, mr_vec3 *lin, mr_vec3 *ang) {
  mr_mat3 R = pc_rot(q);
  *lin = mr_m3_mulv(&R, mr_v3(v[0], v[1], v[2]));
  *ang = mr_m3_mulv(&R, mr_v3(v[3], v[4], v[5]));
}

/* the scene header shared by the contact cases: Δt, margin, Baumgarte k_B */
#define PC_HEAD(dt, dur, kb)                                                                       \
  "timestep: " #dt "\nduration: " #dur "\ncontact: {margin: 0.001, baumgarte: " #kb "}\n"

/* ---- A1: free fall from rest ----
 * err: max_k |z_k − (z₀ − g Δt² k(k+1)/2)| (m); x[0]: max_k |v_k + g Δt k| (m/s) */
static inline void pc_run_a1(const char *solver, pc_result *r) {
  static const char text[] = "timestep: 0.001\nduration: 1.0\n"
                             "bodies:\n"
                             "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
                             "  - name: ball\n    mass: 1.0\n    position: [0, 0, 10.0]\n"
                             "    geoms: [{type: sphere, radius: 0.1}]\n";
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  int ok = 1;
  double dt = 1e-3;
  for (int k = 1; k <= 1000 && (ok = pc_step(s, r)); ++k) {
    double z = 10.0 - PC_G * dt * dt * k * (k + 1) / 2.0;
    r->err = pc_max(r->err, fabs(mr_sim_q(s)[2] - z));
    r->x[0] = pc_max(r->x[0], fabs(mr_sim_v(s)[2] + PC_G * dt * k));
  }
  pc_close(&sc, s, r, ok);
}

/* ---- A2: projectile with spin, an asymmetric brick ----
 * err: max_k |p_k − p_exact(t_k)| (m) against the continuous parabola;
 * x[0]: max_k ‖L_k − L₀‖/‖L₀‖, L = R I ω the world angular momentum about the COM;
 * x[1]: max_k |E_k − (E₀ − k m g² Δt²/2)|/E₀, against semi-implicit Euler's energy on a fall
 * (the spin keeps its energy); x[2]: max_k |p_k − p_discrete(k)| (m) against semi-implicit
 * Euler's own parabola p₀ + v₀ t_k − g Δt² k(k+1)/2 (the centre of mass moves in the world frame,
 * independently of the spin) */
static inline void pc_run_a2(const char *solver, double dt, pc_result *r) {
  char text[640];
  snprintf(text, sizeof text,
           "timestep: %.17g\nduration: 1.0\n"
           "bodies:\n"
           "  - name: brick\n    mass: 1.0\n    position: [0, 0, 1.0]\n"
           "    linear_velocity: [3.0, 0, 5.0]\n    angular_velocity: [1.0, 2.0, 3.0]\n"
           "    geoms: [{type: box, size: [0.3, 0.2, 0.1]}]\n",
           dt);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  const mr_inertia *I = &mr_sim_model(s)->bodies[1].inertia;
  const double *q = mr_sim_q(s), *v = mr_sim_v(s);
  mr_vec3 lin, ang;
  pc_world_vel(q, v, &lin, &ang);
  mr_mat3 R = pc_rot(q);
  mr_vec3 L0 = mr_m3_mulv(&R, mr_m3_mulv(&I->I, mr_v3(v[3], v[4], v[5])));
  double E0 = mr_sim_energy(s), p0[3] = {q[0], q[1], q[2]}, v0[3] = {lin.v[0], lin.v[1], lin.v[2]};
  int ok = 1, n = (int)lround(1.0 / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    double t = k * dt;
    q = mr_sim_q(s), v = mr_sim_v(s);
    for (int i = 0; i < 3; ++i) {
      double gi = i == 2 ? -PC_G : 0.0;
      double pc = p0[i] + v0[i] * t + 0.5 * gi * t * t;
      double pd = p0[i] + v0[i] * t + gi * dt * dt * k * (k + 1) / 2.0;
      r->err = pc_max(r->err, fabs(q[i] - pc));
      r->x[2] = pc_max(r->x[2], fabs(q[i] - pd));
    }
    R = pc_rot(q);
    mr_vec3 L = mr_m3_mulv(&R, mr_m3_mulv(&I->I, mr_v3(v[3], v[4], v[5])));
    r->x[0] = pc_max(r->x[0], mr_v3_norm(mr_v3_sub(L, L0)) / mr_v3_norm(L0));
    double Ek = E0 - k * PC_G * PC_G * dt * dt / 2.0; /* m = 1 */
    r->x[1] = pc_max(r->x[1], fabs(mr_sim_energy(s) - Ek) / E0);
  }
  pc_close(&sc, s, r, ok);
}

/* ---- A3 and A4: block sliding on a plane, v₀ at angle θ to x, μ = 0.5 ----
 * Semi-implicit Euler with a constant friction force μ m g is exact on the velocity:
 * v_k = max(v₀ − μ g Δt k, 0) along the initial direction, position p_k = Δt Σ v_j.
 * err: max_k |v_k − v_exact,k| (m/s, the velocity vector); x[0]: max_k |p_k − p_exact,k| (m);
 * x[1]: max_k |z_k − z₀| (m, height); x[2]: final lateral offset (m), signed, positive to the
 * left of v₀ (towards +y rotated); x[3]: final distance along v₀ (m); x[4]: the height gained in
 * the first step over Δt μ ‖v_T‖ (1 for the CCP's contact at a distance c_N = μ‖c_T‖, 0 for
 * rigid Signorini); x[5]: energy error max_k |E_k − E_exact,k| (J);
 * x[6]: final x, x[7]: final y (m) */
static inline void pc_run_slide(const char *solver, double theta, double duration, pc_result *r) {
  char text[900];
  double v0 = 2.0, mu = 0.5, dt = 1e-3, c = cos(theta), sn = sin(theta);
  snprintf(text, sizeof text,
           PC_HEAD(0.001, 1.0, 0.0) "bodies:\n"
                                    "  - {name: ground, fixed: true, geoms: [{type: halfspace, "
                                    "friction: 0.5}]}\n"
                                    "  - name: block\n    mass: 1.0\n    position: [0, 0, 0.1]\n"
                                    "    linear_velocity: [%.17g, %.17g, 0]\n"
                                    "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: "
                                    "0.5}]\n",
           v0 * c, v0 * sn);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double vex = v0, px = 0.0, E0 = mr_sim_energy(s);
  int ok = 1, n = (int)lround(duration / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_vec3 lin, ang;
    pc_world_vel(q, v, &lin, &ang);
    vex = pc_max(vex - mu * PC_G * dt, 0.0);
    px += dt * vex;
    double ev = hypot(lin.v[0] - vex * c, lin.v[1] - vex * sn);
    double ep = hypot(q[0] - px * c, q[1] - px * sn);
    r->err = pc_max(r->err, ev);
    r->x[0] = pc_max(r->x[0], ep);
    r->x[1] = pc_max(r->x[1], fabs(q[2] - 0.1));
    if (k == 1) r->x[4] = (q[2] - 0.1) / (dt * mu * hypot(lin.v[0], lin.v[1]));
    double Eex = E0 - 0.5 * (v0 * v0 - vex * vex);
    r->x[5] = pc_max(r->x[5], fabs(mr_sim_energy(s) - Eex));
    r->x[2] = -sn * q[0] + c * q[1];
    r->x[3] = c * q[0] + sn * q[1];
    r->x[6] = q[0], r->x[7] = q[1];
  }
  pc_close(&sc, s, r, ok);
}

/* ---- A5: block on an incline of α = 30°, μ = 0.3 (slides) or 0.7 (sticks) ----
 * Down-slope direction d = (cos α, 0, −sin α). Sliding: a = g (sin α − μ cos α), exact on the
 * velocity for semi-implicit Euler: v_k = a Δt k, s_k = a Δt² k(k+1)/2. Sticking: s = 0.
 * err: max_k |v_k·d − v_exact,k| (m/s); x[0]: max_k |s_k − s_exact,k| (m); x[1]: max_k |offset
 * normal to the incline| (m); x[2]: final velocity along d (m/s); x[3]: final s (m) */
static inline void pc_run_incline(const char *solver, double mu, double duration, pc_result *r) {
  char text[1000];
  double dt = 1e-3, al = M_PI / 6.0;
  snprintf(text, sizeof text,
           PC_HEAD(0.001, 1.0, 0.0) "bodies:\n"
                                    "  - name: incline\n    fixed: true\n"
                                    "    geoms: [{type: halfspace, normal: [0.5, 0, "
                                    "0.866025403784439], friction: %.17g}]\n"
                                    "  - name: block\n    mass: 1.0\n"
                                    "    position: [0.05, 0, 0.0866025403784439]\n"
                                    "    orientation: [0, 0.2588190451025207, 0, "
                                    "0.9659258262890683]\n"
                                    "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: "
                                    "%.17g}]\n",
           mu, mu);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double a = PC_G * (sin(al) - mu * cos(al));
  if (a < 0.0) a = 0.0;
  double d[3] = {cos(al), 0.0, -sin(al)}, nrm[3] = {sin(al), 0.0, cos(al)};
  const double *q0 = mr_sim_q(s);
  double p0[3] = {q0[0], q0[1], q0[2]};
  int ok = 1, n = (int)lround(duration / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_vec3 lin, ang;
    pc_world_vel(q, v, &lin, &ang);
    double vd = lin.v[0] * d[0] + lin.v[2] * d[2], sd = 0.0, sn = 0.0;
    for (int i = 0; i < 3; ++i)
      sd += (q[i] - p0[i]) * d[i], sn += (q[i] - p0[i]) * nrm[i];
    r->err = pc_max(r->err, fabs(vd - a * dt * k));
    r->x[0] = pc_max(r->x[0], fabs(sd - a * dt * dt * k * (k + 1) / 2.0));
    r->x[1] = pc_max(r->x[1], fabs(sn));
    r->x[2] = vd, r->x[3] = sd;
  }
  pc_close(&sc, s, r, ok);
}

/* ---- A6: block pushed by F = k t (k = 10 N/s), m = 1, μ = 0.5 ----
 * At rest until t₀ = μ m g / k, then v = k (t − t₀)²/(2m), x = k (t − t₀)³/(6m).
 * err: max_k |v_k − v(t_k)| (m/s); x[0]: max_k |x_k − x(t_k)| (m); x[1]: the first time the
 * block moves faster than 1e-4 m/s (s); x[2]: max |v_y| (m/s); x[3]: max |x_k| before t₀ − 10 Δt
 * (m); x[4]: max height gain max_k (z_k − z₀) (m); x[5]: final v_x (m/s) */
static inline void pc_run_push(const char *solver, double duration, pc_result *r) {
  static const char text[] =
      PC_HEAD(0.001, 1.0, 0.0) "bodies:\n"
                               "  - {name: ground, fixed: true, geoms: [{type: halfspace, "
                               "friction: 0.5}]}\n"
                               "  - name: block\n    mass: 1.0\n    position: [0, 0, 0.1]\n"
                               "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.5}]\n"
                               "forces:\n"
                               "  - {body: block, type: ramp, start: 0.0, duration: 2.0, from: "
                               "[0, 0, 0], to: [20, 0, 0]}\n";
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double dt = 1e-3, kf = 10.0, t0 = 0.5 * PC_G / kf;
  int ok = 1, n = (int)lround(duration / dt);
  r->x[1] = -1.0;
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    double t = k * dt, tt = pc_max(t - t0, 0.0);
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_vec3 lin, ang;
    pc_world_vel(q, v, &lin, &ang);
    r->err = pc_max(r->err, fabs(lin.v[0] - kf * tt * tt / 2.0));
    r->x[0] = pc_max(r->x[0], fabs(q[0] - kf * tt * tt * tt / 6.0));
    if (r->x[1] < 0.0 && fabs(lin.v[0]) > 1e-4) r->x[1] = t;
    r->x[2] = pc_max(r->x[2], fabs(lin.v[1]));
    if (t < t0 - 10 * dt) r->x[3] = pc_max(r->x[3], fabs(q[0]));
    r->x[4] = pc_max(r->x[4], q[2] - 0.1);
    r->x[5] = lin.v[0];
  }
  pc_close(&sc, s, r, ok);
}

/* ---- A7: ball dropped from h = 1 m (lowest point) with restitution e = 0.8 ----
 * Apex heights h e^{2n}. err: max over the first four apexes of |h_n − h e^{2n}| (m); x[0..3]:
 * the apex heights h_1..h_4 (m); x[4]: apexes found; x[5]: max penetration (m). Over the
 * rebound steps (v_z from < 0 to > 0): x[6]: max |v_z⁺ − w|, the restitution law
 * (src/contact/assembly.c, docs/physics.md "Deferred rebound"): w = e |v_z⁻| for an impact that
 * starts in penetration (v_z⁻ at the start of the step), else, after the landing step that
 * started at the gap Φ > 0 falling at v, w = e √((v − g Δt/2)² + 2 g Φ) − g Δt/2; x[7]: max
 * |v_z⁺ − (e |v_z⁻| − max(Φ, 0)/Δt)| over the steps where v_z turns, the law before the rebound
 * was deferred that added the gap term Φ/Δt to the restitution target (DESIGN.md §4 as written)
 * and lost up to margin/Δt of rebound speed at each bounce */
static inline void pc_run_bounce(const char *solver, double duration, pc_result *r) {
  static const char text[] =
      "timestep: 0.001\nduration: 3.0\n"
      "contact: {margin: 0.001, baumgarte: 0.0, restitution_threshold: 0.01}\n"
      "materials:\n  bouncy: {friction: 0.5, restitution: 0.8}\n"
      "bodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, material: bouncy}]}\n"
      "  - name: ball\n    mass: 1.0\n    position: [0, 0, 1.1]\n"
      "    geoms: [{type: sphere, radius: 0.1, material: bouncy}]\n";
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double dt = 1e-3, e = 0.8, h = 1.0, prev_v = 0.0, prev_z = mr_sim_q(s)[2] - 0.1;
  double prev2_v = 0.0, prev2_z = prev_z; /* the start of the step before */
  int ok = 1, n = (int)lround(duration / dt), na = 0;
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    double z = mr_sim_q(s)[2] - 0.1, vz = mr_sim_v(s)[2];
    if (prev_v < 0.0 && vz > 0.0) {
      double vc = prev2_v - PC_G * dt / 2.0;
      double w = prev_z > 0.0 || prev2_z <= 0.0
                     ? -e * prev_v
                     : pc_max(e * sqrt(vc * vc + 2.0 * PC_G * prev2_z) - PC_G * dt / 2.0, 0.0);
      r->x[6] = pc_max(r->x[6], fabs(vz - w));
      r->x[7] = pc_max(r->x[7], fabs(vz - (-e * prev_v - pc_max(prev_z, 0.0) / dt)));
    }
    r->x[5] = pc_max(r->x[5], -z);
    /* an apex: the vertical velocity changes sign from up to down; the sampled z lies within
     * 9 g Δt²/8 below the apex of the parabola through the samples (≤ 1.1e-5 m), counted below */
    if (prev_v > 0.0 && vz <= 0.0 && na < 4) {
      double hn = z;
      r->x[na] = hn;
      r->err = pc_max(r->err, fabs(hn - h * pow(e, 2.0 * (na + 1))));
      ++na;
    }
    prev2_v = prev_v, prev2_z = prev_z;
    prev_v = vz, prev_z = z;
  }
  r->x[4] = na;
  if (na < 4) r->err = INFINITY;
  pc_close(&sc, s, r, ok);
}

/* ---- A8: sphere (r = 0.1, m = 1) rolling down a 20° incline, μ = 1 ----
 * a = (5/7) g sin α along d = (cos α, 0, −sin α), exact on the velocity for semi-implicit Euler
 * when the contact sticks. err: max_k |v_k·d − a Δt k| (m/s); x[0]: max slip speed ‖c_T‖ of the
 * solved contact problem, c = (G + R) λ + g (m/s); x[1]: max |v·n| (m/s) of the centre after the
 * step; x[2]: final v·d (m/s); x[3]: final penetration (m) */
static inline void pc_run_roll(const char *solver, double dt, double duration, pc_result *r) {
  char text[900];
  snprintf(text, sizeof text,
           "timestep: %.17g\nduration: 1.0\ncontact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - name: incline\n    fixed: true\n"
           "    geoms: [{type: halfspace, normal: [0.342020143325669, 0, 0.939692620785908], "
           "friction: 1.0}]\n"
           "  - name: ball\n    mass: 1.0\n"
           "    position: [0.0342020143325669, 0, 0.0939692620785909]\n"
           "    geoms: [{type: sphere, radius: 0.1, friction: 1.0}]\n",
           dt);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double al = 20.0 * M_PI / 180.0;
  double a = 5.0 / 7.0 * PC_G * sin(al);
  mr_vec3 d = mr_v3(cos(al), 0.0, -sin(al)), nrm = mr_v3(sin(al), 0.0, cos(al));
  int ok = 1, n = (int)lround(duration / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    mr_vec3 lin, ang;
    pc_world_vel(mr_sim_q(s), mr_sim_v(s), &lin, &ang);
    r->x[1] = pc_max(r->x[1], fabs(mr_v3_dot(lin, nrm)));
    double vd = mr_v3_dot(lin, d), c[3];
    const mr_contact_problem *p = mr_sim_problem(s);
    const mr_contact *ct;
    const double *lam;
    if (mr_sim_contacts(s, &ct, &lam) == 1 && p && p->nc == 1) {
      mr_problem_velocity(p, lam, c);
      r->x[0] = pc_max(r->x[0], hypot(c[0], c[1]));
    }
    r->err = pc_max(r->err, fabs(vd - a * dt * k));
    r->x[2] = vd;
    r->x[3] = mr_sim_last(s)->penetration;
  }
  pc_close(&sc, s, r, ok);
}

/* complete elliptic integral of the first kind K(k) = π / (2 AGM(1, √(1 − k²))) */
static inline double pc_ellip_k(double k) {
  double a = 1.0, b = sqrt(1.0 - k * k);
  for (int i = 0; i < 40 && fabs(a - b) > 1e-16 * a; ++i) {
    double an = 0.5 * (a + b);
    b = sqrt(a * b);
    a = an;
  }
  return M_PI / (2.0 * a);
}

/* ---- A9: simple pendulum (l = 1 m, 1 kg bob of radius 0.01 m) released from θ₀ ----
 * Period measured from the downward zero crossings of θ (linear interpolation between steps),
 * averaged over the crossings of the run. err: |T − T_exact|/T_exact with T_exact =
 * 4 √(l'/g) K(sin(θ₀/2)), l' = l (1 + (2/5) r²/l²) the equivalent length of the bob with its
 * own inertia; x[0]: measured T (s); x[1]: T_exact; x[2]: the small-angle period 2π√(l'/g);
 * x[3]: max |E − E₀|/(m g l) */
static inline void pc_run_pendulum(const char *solver, double theta0, double duration,
                                   pc_result *r) {
  char text[512];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: %.17g\n"
           "robots:\n  - name: pendulum\n    urdf: scenes/models/pendulum.urdf\n"
           "    floating: false\n    position: [0, 0, 2.0]\n    joints: {hinge: %.17g}\n",
           duration, theta0);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double dt = 1e-3, lq = 1.0 * (1.0 + 0.4 * 1e-4), prev = mr_sim_q(s)[0], E0 = mr_sim_energy(s);
  double first = -1.0, last = -1.0;
  int ok = 1, n = (int)lround(duration / dt), nx = 0;
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    double th = mr_sim_q(s)[0];
    if (prev > 0.0 && th <= 0.0) {
      double t = (k - 1) * dt + dt * prev / (prev - th);
      if (first < 0.0) first = t;
      last = t, ++nx;
    }
    prev = th;
    r->x[3] = pc_max(r->x[3], fabs(mr_sim_energy(s) - E0) / (PC_G * 1.0));
  }
  r->x[1] = 4.0 * sqrt(lq / PC_G) * pc_ellip_k(sin(theta0 / 2.0));
  r->x[2] = 2.0 * M_PI * sqrt(lq / PC_G);
  r->x[0] = nx >= 2 ? (last - first) / (nx - 1) : 0.0;
  r->err = nx >= 2 ? fabs(r->x[0] - r->x[1]) / r->x[1] : INFINITY;
  pc_close(&sc, s, r, ok);
}

/* ---- A10: double pendulum, no damping, from (1.0, 0.5) rad ----
 * err: max_k |E_k − E₀| (J) over the run at time step dt */
static inline void pc_run_double(const char *solver, double dt, double duration, pc_result *r) {
  char text[512];
  snprintf(text, sizeof text,
           "timestep: %.17g\nduration: %.17g\n"
           "robots:\n  - name: chain\n    urdf: scenes/models/double_pendulum.urdf\n"
           "    floating: false\n    position: [0, 0, 2.0]\n"
           "    joints: {shoulder: 1.0, elbow: 0.5}\n",
           dt, duration);
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double E0 = mr_sim_energy(s);
  int ok = 1, n = (int)lround(duration / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k)
    r->err = pc_max(r->err, fabs(mr_sim_energy(s) - E0));
  pc_close(&sc, s, r, ok);
}

/* ---- A11: box 0.4 × 0.3 × 0.1, 2 kg, resting on a plane, k_B = 0.1 ----
 * err: max_k horizontal drift ‖(x, y)_k‖ (m); x[0]: max_k |z_k − z₀| (m); x[1]: max
 * penetration max(0, −Φ_N) over the run (m); x[2]: max tilt angle (rad); x[3]: max speed over
 * the second half of the run (m/s); x[4]: final Σλ_N (N); x[5]: contacts at the end;
 * x[6]: max internal tangential force ‖Σ_i λ_T,i‖ − ... : the largest single ‖λ_T,i‖ at the end
 * (N); x[7]: final penetration (m) */
static inline void pc_run_rest(const char *solver, double duration, pc_result *r) {
  static const char text[] =
      PC_HEAD(0.001, 1.0, 0.1) "bodies:\n"
                               "  - {name: ground, fixed: true, geoms: [{type: halfspace, "
                               "friction: 0.5}]}\n"
                               "  - name: box\n    mass: 2.0\n    position: [0, 0, 0.05]\n"
                               "    geoms: [{type: box, size: [0.4, 0.3, 0.1], friction: 0.5}]\n";
  mr_scene sc;
  mr_sim *s;
  if (!pc_open(text, solver, &sc, &s, r)) return;
  double dt = 1e-3;
  int ok = 1, n = (int)lround(duration / dt);
  for (int k = 1; k <= n && (ok = pc_step(s, r)); ++k) {
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    r->err = pc_max(r->err, hypot(q[0], q[1]));
    r->x[0] = pc_max(r->x[0], fabs(q[2] - 0.05));
    r->x[1] = pc_max(r->x[1], mr_sim_last(s)->penetration);
    r->x[2] = pc_max(r->x[2], 2.0 * asin(fmin(1.0, hypot(q[3], q[4]))));
    if (2 * k > n) r->x[3] = pc_max(r->x[3], sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  }
  const mr_contact *c;
  const double *lam;
  int nc = ok ? mr_sim_contacts(s, &c, &lam) : 0;
  for (int j = 0; j < nc; ++j) {
    r->x[4] += lam[3 * j + 2];
    r->x[6] = pc_max(r->x[6], hypot(lam[3 * j], lam[3 * j + 1]));
  }
  r->x[5] = nc;
  r->x[7] = ok ? mr_sim_last(s)->penetration : 0.0;
  pc_close(&sc, s, r, ok);
}

/* ---- verdicts ---- */

typedef enum { PC_PASS = 0, PC_ARTIFACT, PC_BUG, PC_FAIL } pc_verdict;

enum {
  PC_A1,
  PC_A2,
  PC_A3,
  PC_A4,
  PC_A5S,
  PC_A5K,
  PC_A6,
  PC_A7,
  PC_A8,
  PC_A9,
  PC_A9L,
  PC_A10,
  PC_A11,
  PC_NCASES
};

static const char *const pc_case_names[PC_NCASES] = {
    "A1 free fall",       "A2 projectile, spin", "A3 slide along x",  "A4 slide at 30°",
    "A5 incline, slides", "A5 incline, sticks",  "A6 pushed block",   "A7 bouncing ball",
    "A8 rolling sphere",  "A9 pendulum 0.1 rad", "A9 pendulum 2 rad", "A10 double pendulum",
    "A11 resting box"};

/* the unit of each case's main error */
static const char *const pc_case_units[PC_NCASES] = {
    "max |z − z_k| (m)",       "max COM error vs the parabola (m)",
    "max |v − v(t)| (m/s)",    "max |v − v(t)| (m/s)",
    "max |v − v(t)| (m/s)",    "max |v − v(t)| (m/s)",
    "max |v − v(t)| (m/s)",    "max apex error (m), 4 apexes",
    "max |v − v(t)| (m/s)",    "|T − T_K|/T_K",
    "|T − T_K|/T_K",           "max |E − E₀| off the independent integration (J)",
    "max horizontal drift (m)"};

typedef struct {
  pc_verdict v;
  double err, tol; /* the main error and the tolerance a passing solver meets */
  char what[640];  /* the measured artifact, or why it failed */
} pc_outcome;

/* the solver's model as the registry names it */
static inline const char *pc_model(const char *solver) {
  const mr_solver_info *i = mr_solver_find(solver);
  return i ? i->model : "?";
}
static inline int pc_is(const char *solver, const char *model) {
  return !strcmp(pc_model(solver), model);
}

/* Solver tolerance in kinematic terms. Every rigid solver stops at ε_abs = 1e-6 (force units) per
 * contact; a force error ε on each of nc contacts moves the velocity of a body of mass m by at
 * most nc ε Δt / m per step, so over n steps by n nc ε Δt / m. ccp-newton solves the compliant
 * problem R = 1e-6 diag(G) and reaches about ten times that (it reports not converged on a few
 * steps), so the bound carries a factor 10. */
static inline double pc_tol_v(int nsteps, int nc, double m) {
  return 10.0 * nsteps * nc * 1e-6 * 1e-3 / m;
}

/* RaiSim's sliding friction on the cube of A3–A5 (side 2h, mass m, I = (2/3) m h² about each
 * axis), derived from the optimality of its sliding step, not from the solver: contact i
 * minimises ½ λᵀBλ + g̃ᵀλ on the ellipse {‖λ_T‖ = μ λ_N, B_N·λ + g̃_N = 0} with B = G⁽ⁱⁱ⁾, whose
 * KKT condition is c = a (λ_T, −μ² λ_N) + b B_N (c = Bλ + g̃ the contact velocity, B_N the
 * normal row); c_N = 0 gives b = a μ² λ_N / B_NN, so c_T ∝ −(λ_T + w) with
 * w = (μ² λ_N / B_NN) B_NT (the note's eq. (10)). For a corner r = (σ_x h, σ_y h, −h) from the
 * centre, B = I/m + (|r|² I − r rᵀ)/I: B_NN = 1/m + 2h²/I = 4/m, B_NT = (h/I) r_T = (3/(2m))
 * (σ_x, σ_y), so w = (3/8) μ² λ_N (σ_x, σ_y). A translating cube has one slip direction v̂ at
 * all corners; ‖λ_T‖ = μλ_N then gives the friction along −v̂ as λ_N μ √(1 − (3μ/8)² s²),
 * s = σ_y cos θ − σ_x sin θ the corner's offset across v̂ over h. Returns that factor for
 * s² (1 at μ = 0). */
static inline double pc_raisim_friction_factor(double mu, double s2) {
  double k = 3.0 * mu / 8.0;
  return sqrt(1.0 - k * k * s2);
}

/* how far the CCP's contact at a distance, c_N = μ‖c_T‖, may be off when it carries a total
 * normal force Λ on the cube of A3–A6 at a sliding speed v: the solver tolerance's velocity error
 * (pc_tol_v of one step), and for ccp-newton its compliance R = 1e-6 diag G, which shifts c_N by
 * R_N λ_N and μ‖c_T‖ by μ R_T ‖λ_T‖ = μ² R_T λ_N, with G_NN = G_TT = 4Δt/m at a corner of the
 * cube (1/m + 2h²/I, I = (2/3) m h²) and λ_N ≤ Λ at any corner; relative to μ v */
static inline double pc_ccp_distance_tol(const char *solver, double mu, double lam, double v) {
  double dv = pc_tol_v(1, 4, 1.0);
  if (!strcmp(solver, "ccp-newton")) dv += 1e-6 * 4.0 * 1e-3 * (1.0 + mu * mu) * lam;
  return dv / (mu * v);
}

/* discrete stopping distance of semi-implicit Euler, v_k = max(v₀ − a Δt k, 0), x = Δt Σ v_k */
static inline double pc_discrete_stop(double v0, double a, double dt) {
  double x = 0.0;
  for (int k = 1; v0 - a * dt * k > 0.0; ++k)
    x += dt * (v0 - a * dt * k);
  return x;
}

/* where a point sliding from (vx, vy) ≥ 0 stops under lcp-lemke's diamond friction of radius
 * a Δt per step: each step's LCP for a point mass is v⁺ = v − P(v), P the projection on the ℓ1
 * ball of radius a Δt (the diamond's support function is a Δt ‖v⁺‖∞): the larger component
 * decelerates alone until the two are equal, then both at a/2 on the diagonal */
static inline void pc_diamond_stop(double vx, double vy, double a, double dt, double *x,
                                   double *y) {
  double r = a * dt;
  *x = *y = 0.0;
  while (vx + vy > r) {
    double hi = pc_max(vx, vy), lo = fmin(vx, vy), t = 0.5 * (hi + lo - r);
    if (lo - t >= 0.0)
      vx = vy = t;
    else if (vx >= vy)
      vx -= r;
    else
      vy -= r;
    *x += dt * vx, *y += dt * vy;
  }
}

static inline pc_outcome pc_verdict_of(pc_result *r, double err, double tol) {
  pc_outcome o = {PC_FAIL, err, tol, ""};
  if (!r->ok)
    snprintf(o.what, sizeof o.what, "%s", r->msg);
  else if (err <= tol)
    o.v = PC_PASS;
  return o;
}

/* A1: semi-implicit Euler from rest is exact; round-off over k additions ≈ k ε |z| ≈ 1e-12 */
static inline pc_outcome pc_check_a1(const char *solver) {
  pc_result r;
  pc_run_a1(solver, &r);
  return pc_verdict_of(&r, pc_max(r.err, r.x[0]), 1e-11);
}

/* A2: against the continuous parabola, semi-implicit Euler lags by g Δt t/2 (z_k = z₀ + v₀ t −
 * g Δt² k(k+1)/2), at most g Δt T/2 over the run, and nothing else: the centre of mass moves
 * in the world frame, independently of the spin (x[2], against the discrete parabola, is
 * round-off: 1e-11 as in A1). The free-flyer's gyroscopic impulse keeps the world angular
 * momentum and the rotational energy exactly (docs/physics.md, free bodies): both within the
 * round-off of n steps, 10 n ε relative. */
static inline pc_outcome pc_check_a2(const char *solver, double dt, pc_result *r) {
  pc_run_a2(solver, dt, r);
  double T = 1.0, tol = PC_G * dt * T / 2.0 + 1e-11, tl = 10.0 * (T / dt) * 2.220446049250313e-16;
  pc_outcome o = pc_verdict_of(r, r->err, tol);
  if (o.v == PC_PASS && !(r->x[0] <= tl && r->x[1] <= tl && r->x[2] <= 1e-11)) o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what,
           "‖ΔL‖/‖L‖ %.1e, energy %.1e off E₀ − k m g²Δt²/2, %.1e m off the discrete parabola",
           r->x[0], r->x[1], r->x[2]);
  return o;
}

/* A3, A4: a block sliding, v₀ = 2 m/s at θ, μ = 0.5, 0.6 s (the block stops at 0.408 s). */
static inline pc_outcome pc_check_slide(const char *solver, double theta) {
  pc_result r;
  double mu = 0.5, v0 = 2.0, dt = 1e-3;
  pc_run_slide(solver, theta, 0.6, &r);
  /* rigid NCP: exact up to the solver tolerance, 4 contacts, 600 steps, m = 1 */
  double tol = pc_tol_v(600, 4, 1.0);
  pc_outcome o = pc_verdict_of(&r, r.err, tol);
  if (o.v == PC_PASS && !(r.x[0] <= tol && r.x[1] <= tol)) o.v = PC_FAIL;
  if (o.v == PC_PASS || !r.ok) return o;
  double d = pc_discrete_stop(v0, mu * PC_G, dt);
  /* the first step's total normal force: c_N = μ‖c_T‖ with v_z = Λ/m − gΔt, v_x = v₀ − μΛ/m
   * (impulses Λ Δt), so Λ Δt/m = (μ v₀ + gΔt)/(1 + μ²) */
  double lam1 = (mu * v0 + PC_G * dt) / (1.0 + mu * mu) / dt, v1 = v0 - mu * lam1 * dt;
  if (pc_is(solver, "CCP") && fabs(r.x[4] - 1.0) <= pc_ccp_distance_tol(solver, mu, lam1, v1)) {
    /* contact at a distance: the first step lifts the block at c_N = μ‖c_T‖ exactly (up to
     * the solver tolerance), so it rises Δt μ ‖v_T‖ = 1 mm, reaches the margin and flies off */
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what,
             "lift-off: first-step rise = %.4f Δt μ‖v_T‖, flight to %.1f mm, ΔE %.2f J", r.x[4],
             1e3 * r.x[1], r.x[5]);
  } else if (!strcmp(solver, "lcp-lemke")) {
    /* the diamond (Stewart-Trinkle's four directions): friction μλ_N along −t₁ alone while
     * |v_x| > |v_y|, then split evenly on the diagonal; the path bends away from x */
    double xe, ye;
    pc_diamond_stop(v0 * cos(theta), v0 * sin(theta), mu * PC_G, dt, &xe, &ye);
    if (fabs(r.x[6] - xe) <= 1e-6 && fabs(r.x[7] - ye) <= 1e-6 && r.x[2] > 0.0) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what,
               "diamond: stops at (%.4f, %.4f) = its closed form, lateral %+.1f mm (away from x)",
               r.x[6], r.x[7], 1e3 * r.x[2]);
    } else
      snprintf(o.what, sizeof o.what, "diamond: stops at (%.6f, %.6f), closed form (%.6f, %.6f)",
               r.x[6], r.x[7], xe, ye);
  } else if (pc_is(solver, "LCP")) {
    /* the pyramid: each tangential axis decelerates at μ g on its own (corner force
     * −μλ_N (1, 1)), so x and y stop at their own discrete distances: the path bends towards
     * the facet axis t₁ = x */
    double xe = pc_discrete_stop(v0 * cos(theta), mu * PC_G, dt);
    double ye = pc_discrete_stop(v0 * sin(theta), mu * PC_G, dt);
    if (fabs(r.x[6] - xe) <= 1e-6 && fabs(r.x[7] - ye) <= 1e-6 && r.x[2] < 0.0) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what,
               "pyramid: stops at (%.4f, %.4f) = per-axis closed form, lateral %+.1f mm "
               "(towards x)",
               r.x[6], r.x[7], 1e3 * r.x[2]);
    }
  } else if (!strcmp(solver, "raisim")) {
    /* no maximum dissipation with G_NT ≠ 0: the friction along the slip is μ_eff λ_N with
     * μ_eff = μ √(1 − (3μ/8)² s²) at each corner (pc_raisim_friction_factor), and Σλ_N = m g.
     * Along a face (θ = 0) every corner has s² = 1, so the cube decelerates at exactly μ_eff g
     * and stops at the discrete distance for that rate (+1.81 % for μ = 0.5); obliquely, s² is
     * (cos θ ∓ sin θ)² at the two diagonals and the share of λ_N between them is not fixed, so
     * the distance lies between the two rates'. Slack: the slip-velocity error of the solver
     * tolerance (tol above) over the run, T tol. The lateral offset is not bounded by RaiSim's
     * criterion (it does not test the friction direction); it must stay small against the
     * millimetre the path of the pyramid bends (LCP above). */
    double c = cos(theta), sn = sin(theta), T = 0.6, dx = T * tol;
    double f1 = pc_raisim_friction_factor(mu, (c - sn) * (c - sn));
    double f2 = pc_raisim_friction_factor(mu, (c + sn) * (c + sn));
    double lo = pc_discrete_stop(v0, pc_max(f1, f2) * mu * PC_G, dt);
    double hi = pc_discrete_stop(v0, fmin(f1, f2) * mu * PC_G, dt);
    if (r.x[3] >= lo - dx && r.x[3] <= hi + dx && fabs(r.x[2]) < 1e-3) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what,
               "under-dissipation: slides %+.2f %% further (closed form %+.2f … %+.2f %%), "
               "lateral %.1e m",
               100.0 * (r.x[3] / d - 1.0), 100.0 * (lo / d - 1.0), 100.0 * (hi / d - 1.0), r.x[2]);
    }
  } else if (pc_is(solver, "soft")) {
    /* penalty: the block first sinks to δ = m g/(n k) = 2.45e-5 m (4 springs); until the springs
     * carry the weight the normal impulse lags m g t by at most m √(4 g δ) (the fall through
     * 2δ), hence the friction impulse by μ times that; below v_reg friction is viscous */
    double delta = PC_G / (4.0 * 1e5), tl = mu * sqrt(4.0 * PC_G * delta) + 1e-3;
    if (r.err <= tl && r.x[1] <= 3.0 * delta && fabs(r.x[2]) < 1e-6) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what, "penalty: velocity error %.1e ≤ μ√(4gδ) + v_reg = %.1e",
               r.err, tl);
    }
  }
  return o;
}

/* A5: incline of 30°, 0.5 s. Sliding (μ = 0.3) and sticking (μ = 0.7). */
static inline pc_outcome pc_check_incline(const char *solver, double mu) {
  pc_result r;
  double al = M_PI / 6.0, dt = 1e-3, T = 0.5, a = pc_max(PC_G * (sin(al) - mu * cos(al)), 0.0);
  pc_run_incline(solver, mu, T, &r);
  double tol = pc_tol_v(500, 4, 1.0);
  pc_outcome o = pc_verdict_of(&r, r.err, tol);
  if (o.v == PC_PASS && !(r.x[0] <= T * tol && r.x[1] <= T * tol)) o.v = PC_FAIL;
  if (o.v == PC_PASS || !r.ok) return o;
  double hover = dt * mu * fabs(r.x[2]), delta = PC_G * cos(al) / (4.0 * 1e5);
  if (a > 0.0 && pc_is(solver, "CCP") &&
      fabs(r.x[1] - hover) <= hover * pc_ccp_distance_tol(solver, mu, PC_G * cos(al), r.x[2])) {
    /* contact at a distance: the gap settles at Φ = Δt μ ‖c_T‖ (c_N = μ‖c_T‖ with the gap term
     * Φ/Δt), largest at the final speed */
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what, "hovers %.3f mm = %.3f Δt μ‖v_T‖", 1e3 * r.x[1],
             r.x[1] / hover);
  } else if (a > 0.0 && !strcmp(solver, "raisim")) {
    /* the cube slides along a face (s² = 1 at every corner): friction μ_eff m g cos α with
     * μ_eff = μ √(1 − (3μ/8)²) (pc_raisim_friction_factor), so v(T) = g (sin α − μ_eff cos α) T
     * up to the solver tolerance (tol above; +0.69 % for μ = 0.3) */
    double ae = PC_G * (sin(al) - mu * pc_raisim_friction_factor(mu, 1.0) * cos(al));
    if (fabs(r.x[2] - ae * T) <= tol) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what,
               "under-dissipation: %+.2f %% faster at 0.5 s (closed form %+.2f %%)",
               100.0 * (r.x[2] / (a * T) - 1.0), 100.0 * (ae / a - 1.0));
    }
  } else if (pc_is(solver, "soft")) {
    double tl = mu * sqrt(4.0 * PC_G * cos(al) * delta) + 1e-3;
    if (a > 0.0 && r.err <= tl) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what, "penalty: velocity error %.1e ≤ μ√(4gδ) + v_reg = %.1e",
               r.err, tl);
    } else if (a == 0.0 && r.x[3] > 1e-4) {
      /* regularised friction has no true stiction: the block creeps */
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what, "creeps %.1f mm in 0.5 s, %.1e m/s at the end", 1e3 * r.x[3],
               r.x[2]);
    }
  }
  return o;
}

/* A6: F = k t, 1 s. The discrete velocity is a Riemann sum of (k t − μ m g)/m with step Δt:
 * it differs from the integral by at most (k/m) Δt (t − t₀ + Δt), and the position by
 * (k/m) Δt (t − t₀)²/2 (+ the solver tolerance); the first step above 1e-4 m/s comes
 * √(2 m 1e-4/k) = 4.5 ms after t₀, ± 2 Δt. */
static inline pc_outcome pc_check_push(const char *solver) {
  pc_result r;
  double kf = 10.0, dt = 1e-3, T = 1.0, t0 = 0.5 * PC_G / kf, tv = pc_tol_v(1000, 4, 1.0);
  pc_run_push(solver, T, &r);
  double tol = kf * dt * (T - t0 + dt) + tv, tx = kf * dt * (T - t0) * (T - t0) / 2.0 + T * tv;
  double onset = t0 + sqrt(2.0 * 1e-4 / kf);
  pc_outcome o = pc_verdict_of(&r, r.err, tol);
  int ok = r.x[0] <= tx && fabs(r.x[1] - onset) <= 2 * dt && r.x[4] <= T * tv;
  if (o.v == PC_PASS && !ok) o.v = PC_FAIL;
  if (o.v == PC_PASS || !r.ok) return o;
  double hover = dt * 0.5 * r.x[5];
  if (pc_is(solver, "CCP") &&
      fabs(r.x[4] - hover) <= hover * pc_ccp_distance_tol(solver, 0.5, PC_G, r.x[5])) {
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what, "hovers %.3f mm = %.3f Δt μ‖v_T‖ (v error %.1e)", 1e3 * r.x[4],
             r.x[4] / hover, r.err);
  } else if (!strcmp(solver, "raisim") && r.x[1] > 0.0 && r.x[1] < t0 - 0.05) {
    /* per-contact stiction leaves internal forces along y (B2); once they saturate the four
     * cones, raisim's criterion (cone, Signorini, (μλ_N − ‖λ_T‖)‖c_T‖) is met at 0 iterations
     * although the friction no longer opposes the push: the block slips before t₀ (at
     * Σλ_x ≈ 3.7 N instead of μ m g = 4.9 N) */
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what,
             "internal forces saturate the cones: slips at %.3f s (t₀ = %.4f s)", r.x[1], t0);
  } else if (pc_is(solver, "soft") && r.x[3] > 1e-4) {
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what, "creeps %.1f mm before t₀ (moves at %.3f s)", 1e3 * r.x[3],
             r.x[1]);
  }
  return o;
}

/* The soft model on one contact whose normal carries a mass m alone (a sphere on a plane: the
 * normal force passes through the centre), by the same scheme in one dimension: in penetration
 * (Φ < 0), λ = max(−k Φ − d Φ̇, 0) from the state at the start of the step, then
 * Φ̇ += Δt (λ/m − g_n), Φ += Δt Φ̇. From (Φ₀, 0) at rest, n steps: the gap after each step into
 * phi[1 … n] (phi[0] = Φ₀); returns the number of steps spent in contact */
static inline int pc_soft_1d(double m, double gn, double phi0, double dt, int n, double *phi) {
  const mr_solver_settings s = mr_solver_settings_default();
  double x = phi0, v = 0.0;
  int nc = 0;
  phi[0] = x;
  for (int k = 1; k <= n; ++k) {
    double l = 0.0;
    if (x < 0.0) l = fmax(-s.soft_k * x - s.soft_d * v, 0.0), ++nc;
    v += dt * (l / m - gn);
    x += dt * v;
    phi[k] = x;
  }
  return nc;
}

/* A7's ball under the soft model in one dimension (pc_soft_1d, dropped from Φ₀ = 1 m): the
 * first four apexes sampled as in pc_run_bounce, into h[0 … 3] */
static inline void pc_soft_apexes(double phi0, double h[4], int ncontact[4]) {
  double ph[3001];
  pc_soft_1d(1.0, PC_G, phi0, 1e-3, 3000, ph);
  int na = 0, nc = 0;
  for (int k = 1; k <= 3000 && na < 4; ++k) {
    nc += ph[k - 1] < 0.0;
    if (k >= 2 && ph[k - 1] > ph[k - 2] && ph[k] <= ph[k - 1]) h[na] = ph[k], ncontact[na++] = nc;
  }
}

/* A7: apexes h e^{2n}. The deferred rebound (docs/physics.md) leaves the surface at e times the
 * speed at which the parabola through the samples meets it, so the parabola of bounce n peaks
 * at e^{2n} (h + g Δt²/8) (the drop's parabola peaks g Δt²/8 above h) less the rest depth; the
 * sample taken, the first after the velocity turns, is 1/2 to 3/2 Δt past that peak, up to
 * 9 g Δt²/8 below it: off h e^{2n} by at most 9 g Δt²/8 = 1.1e-5 m, plus the solver's error on
 * each rebound speed (ccp-newton's compliance: 1e-5 m/s) times v_max/g per bounce, 1.8e-5 m
 * over four. */
static inline pc_outcome pc_check_bounce(const char *solver) {
  pc_result r;
  double dt = 1e-3, vmax = sqrt(2.0 * PC_G);
  pc_run_bounce(solver, 3.0, &r);
  double tol = 9.0 * PC_G * dt * dt / 8.0 + 4.0 * 1e-5 * vmax / PC_G;
  pc_outcome o = pc_verdict_of(&r, r.err, tol);
  /* and each rebound is the law's w up to the solver tolerance (ccp-newton's compliance: 1e-5) */
  if (o.v == PC_PASS && !(r.x[6] <= 1e-5)) o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what, "h = %.4f %.4f %.4f %.4f; rebound law met to %.0e", r.x[0],
           r.x[1], r.x[2], r.x[3], r.x[6]);
  if (o.v == PC_PASS || !r.ok) return o;
  if (pc_is(solver, "soft")) {
    /* no restitution coefficient: the spring-damper's (continuous time e_s = exp(−ζπ/√(1 − ζ²)),
     * ζ = d/(2√(k m)), e_s² = 0.366 per bounce). The apexes against the same scheme in one
     * dimension (pc_soft_apexes): the free flights are the same operations; each contact step
     * evaluates Φ from the centre's height (≤ 1.1 m), one rounding of 1.1 ε m, and the
     * apex j moves with a gap error by S_j = ∂h_j/∂Φ₀ (15, 259, 2927, 758: the bounces amplify
     * it), computed from the reference moved by 1e-9 m; so |h_j − h_ref| ≤ S_j n_j 1.1 ε m with
     * n_j the contact steps before apex j (measured 1.8e-15 S_j m, a few contact steps' worth) */
    double h[4], hp[4];
    int nc[4], ncp[4], close = 1;
    pc_soft_apexes(1.0, h, nc);
    pc_soft_apexes(1.0 + 1e-9, hp, ncp);
    for (int j = 0; j < 4; ++j) {
      double S = fabs(hp[j] - h[j]) / 1e-9;
      close = close && fabs(r.x[j] - h[j]) <= S * nc[j] * 1.1 * 2.220446049250313e-16;
    }
    double z = 1e2 / (2.0 * sqrt(1e5)), es = exp(-z * M_PI / sqrt(1.0 - z * z));
    if (close) {
      o.v = PC_ARTIFACT;
      snprintf(o.what, sizeof o.what,
               "spring-damper restitution: h₂/h₁ = %.4f as the scheme in 1-D (e_s² = %.3f in "
               "continuous time)",
               r.x[1] / r.x[0], es * es);
    }
  } else if (r.x[7] <= 1e-5) {
    /* the former law, v⁺ = e|v⁻| − Φ/Δt, is back: each bounce loses Φ/Δt ∈ [0, margin/Δt) */
    o.v = PC_BUG;
    snprintf(o.what, sizeof o.what, "rebound e|v⁻| − Φ/Δt: h = %.3f %.3f %.3f %.3f", r.x[0], r.x[1],
             r.x[2], r.x[3]);
  }
  return o;
}

/* A8: rolling, 0.5 s. The contact sticks (c_T = 0 up to the solver tolerance, in velocity
 * units ≤ 1e-5). The centre of mass moves by Δt times its world velocity, which the rolling
 * contact keeps parallel to the incline, so nothing sinks: semi-implicit Euler is exact on the
 * velocity a Δt k, and both the velocity error and the penetration are the solver's alone:
 * pc_tol_v on one contact, and for the penetration T times one step's velocity bound (the
 * normal velocity is re-imposed each step, so its errors add up in position only). ccp-newton's
 * compliance R = 1e-6 G_nn lets the ball sink R λ_N = 1e-6 g cos α Δt per step, 4.6e-9 m in
 * 0.5 s, within that bound (5e-9 m). */
static inline pc_outcome pc_check_roll(const char *solver) {
  pc_result r;
  double T = 0.5, dt = 1e-3;
  pc_run_roll(solver, dt, T, &r);
  double tol = pc_tol_v((int)lround(T / dt), 1, 1.0), pen_tol = T * pc_tol_v(1, 1, 1.0);
  pc_outcome o = pc_verdict_of(&r, r.err, tol);
  if (o.v == PC_PASS && !(r.x[0] <= 1e-5 && r.x[3] <= pen_tol)) o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what, "slip ‖c_T‖ %.0e m/s, penetration %.1e m (bound %.0e m)", r.x[0],
           r.x[3], pen_tol);
  if (o.v == PC_PASS || !r.ok) return o;
  /* soft: the penetration the spring-damper reaches after T, by the same scheme in one
   * dimension (pc_soft_1d; its x[3] is the gap at the start of the last step); the deviation
   * from m g cos α/k decays by ρ = √(1 − Δt d/m) = 0.95 per step (the step matrix's determinant
   * 1 − Δt d/m, complex eigenvalues), 3.6e-12 after 500 steps, as measured. Each step's Φ is
   * one rounding of the ball's coordinates (≤ 1 m), ε m, kept by the spring with weight ρ^k:
   * ε m/(1 − ρ) = 4.3e-15 m (measured 9e-18 m) */
  double ph[501];
  pc_soft_1d(1.0, PC_G * cos(20.0 * M_PI / 180.0), 0.0, dt, 500, ph);
  double pen = -ph[499], rho = sqrt(1.0 - dt * mr_solver_settings_default().soft_d / 1.0);
  if (pc_is(solver, "soft") && fabs(r.x[3] - pen) <= 2.220446049250313e-16 / (1.0 - rho)) {
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what,
             "penalty: penetration %.6e m as the scheme in 1-D (%.6e m); v error %.1e", r.x[3], pen,
             r.err);
  }
  return o;
}

/* A9 by an independent integration: the scalar equation θ̈ = −(g/l_q) sin θ with the same
 * scheme (ω += Δt θ̈, θ += Δt ω) and the same interpolated downward zero crossings; returns the
 * mean period */
static inline double pc_pendulum_reference(double theta0, double duration) {
  double dt = 1e-3, lq = 1.0 * (1.0 + 0.4 * 1e-4), th = theta0, w = 0.0, prev = theta0;
  double first = -1.0, last = -1.0;
  int n = (int)lround(duration / dt), nx = 0;
  for (int k = 1; k <= n; ++k) {
    w += dt * (-PC_G / lq * sin(th));
    th += dt * w;
    if (prev > 0.0 && th <= 0.0) {
      double t = (k - 1) * dt + dt * prev / (prev - th);
      if (first < 0.0) first = t;
      last = t, ++nx;
    }
    prev = th;
  }
  return nx >= 2 ? (last - first) / (nx - 1) : 0.0;
}

/* the period shift of semi-implicit Euler on the linearised pendulum: its discrete frequency
 * solves 2 sin(ω_d Δt/2) = ω Δt, so T_d/T = x/asin(x), x = ω Δt/2: 1 − x/asin(x) ≈ (ωΔt)²/24
 * = 4.09e-7 at Δt = 1 ms. At a finite amplitude the pendulum runs at a lower effective
 * frequency, which shrinks the shift (measured 4.07e-7 at 0.1 rad, 1.70e-7 at 2 rad). */
static inline double pc_pendulum_shift(double dt) {
  double x = sqrt(PC_G / (1.0 * (1.0 + 0.4 * 1e-4))) * dt / 2.0;
  return 1.0 - x / asin(x);
}

/* A9: period against 4 √(l/g) K(sin(θ₀/2)), to the scheme's shift pc_pendulum_shift (the
 * interpolation of the zero crossings errs by O(Δt³ ω²) per crossing, 1e-11 relative); and
 * against the independent integration above to the round-off of n steps, n ε relative. */
static inline pc_outcome pc_check_pendulum(const char *solver, double theta0) {
  pc_result r;
  double T = theta0 < 1.0 ? 4.5 : 6.0, n = T / 1e-3;
  pc_run_pendulum(solver, theta0, T, &r);
  pc_outcome o = pc_verdict_of(&r, r.err, pc_pendulum_shift(1e-3) + 1e-11);
  double ref = pc_pendulum_reference(theta0, T);
  if (o.v == PC_PASS && !(fabs(r.x[0] - ref) <= n * 2.220446049250313e-16 * ref)) o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what, "T = %.5f s (elliptic %.5f, small-angle %.5f)", r.x[0], r.x[1],
           r.x[2]);
  return o;
}

/* A10 by an independent integration: the same scheme (v⁺ = v + Δt M(q)⁻¹(τ − b(q, v)),
 * q⁺ = q + Δt v⁺) on the double pendulum's closed-form equations in absolute angles
 * θ₁ = q₁, θ₂ = q₁ + q₂ (a constant linear change of coordinates, so the scheme is the same):
 * two uniform rods of mass m, length l, centre a = l/2 from the hinge, I_c = m l²/12,
 *   M θ̈ = f,  M = [I_c + m a² + m l², m l a cos(θ₁ − θ₂); m l a cos(θ₁ − θ₂), I_c + m a²],
 *   f₁ = −m l a sin(θ₁ − θ₂) θ̇₂² − (m a + m l) g sin θ₁,
 *   f₂ = m l a sin(θ₁ − θ₂) θ̇₁² − m a g sin θ₂,
 * and the energy T + V, V = −m g (a + l) cos θ₁ − m g a cos θ₂ */
static inline double pc_dp_energy(const double th[2], const double w[2]) {
  const double m = 1.0, l = 0.5, a = 0.25, Ic = m * l * l / 12.0;
  double M11 = Ic + m * a * a + m * l * l, M22 = Ic + m * a * a,
         M12 = m * l * a * cos(th[0] - th[1]);
  return 0.5 * (M11 * w[0] * w[0] + 2.0 * M12 * w[0] * w[1] + M22 * w[1] * w[1]) -
         m * PC_G * (a + l) * cos(th[0]) - m * PC_G * a * cos(th[1]);
}

static inline void pc_dp_acc(const double th[2], const double w[2], double acc[2]) {
  const double m = 1.0, l = 0.5, a = 0.25, Ic = m * l * l / 12.0;
  double c = cos(th[0] - th[1]), sn = sin(th[0] - th[1]);
  double M11 = Ic + m * a * a + m * l * l, M22 = Ic + m * a * a, M12 = m * l * a * c;
  double f1 = -(m * l * a * sn * w[1] * w[1] + (m * a + m * l) * PC_G * sin(th[0]));
  double f2 = -(-m * l * a * sn * w[0] * w[0] + m * a * PC_G * sin(th[1]));
  double det = M11 * M22 - M12 * M12;
  acc[0] = (M22 * f1 - M12 * f2) / det;
  acc[1] = (M11 * f2 - M12 * f1) / det;
}

/* max_k |E_k − E₀| of the scheme at step dt from (1.0, 1.5) rad at rest */
static inline double pc_double_reference(double dt, double duration) {
  double th[2] = {1.0, 1.5}, w[2] = {0.0, 0.0}, acc[2], worst = 0.0;
  const double E0 = pc_dp_energy(th, w);
  int n = (int)lround(duration / dt);
  for (int k = 0; k <= n; ++k) {
    worst = pc_max(worst, fabs(pc_dp_energy(th, w) - E0));
    if (k == n) break;
    pc_dp_acc(th, w, acc);
    w[0] += dt * acc[0], w[1] += dt * acc[1];
    th[0] += dt * w[0], th[1] += dt * w[1];
  }
  return worst;
}

/* the scheme's energy error to first order, from its local error: one step from (q, v) lands
 * at q + h v + h² a, v + h a, the exact flow at q + h v + h²/2 a, v + h a + h²/2 ȧ, so the step
 * changes the (exactly conserved) E by h²/2 g + O(h³), g = E_q · a − E_v · ȧ, and
 * E(t) − E₀ = (h/2) ∫₀ᵗ g + O(h²). Returns c = max_t |½ ∫₀ᵗ g| (J/s), g along the exact motion
 * (classical Runge-Kutta, step 1e-4 s: error ~1e-16 relative), E_q, E_v and ȧ by central
 * differences (step 1e-5: truncation ~1e-10, round-off ε |E| / 1e-5 ~ 2e-10) */
static inline double pc_dp_g(const double y[4]) {
  const double e = 1e-5;
  double acc[2], ap[2], am[2], g = 0.0;
  pc_dp_acc(y, y + 2, acc);
  /* ȧ along (v, a) */
  double tp[2] = {y[0] + e * y[2], y[1] + e * y[3]}, tm[2] = {y[0] - e * y[2], y[1] - e * y[3]};
  double vp[2] = {y[2] + e * acc[0], y[3] + e * acc[1]};
  double vm[2] = {y[2] - e * acc[0], y[3] - e * acc[1]};
  pc_dp_acc(tp, vp, ap), pc_dp_acc(tm, vm, am);
  for (int i = 0; i < 2; ++i) {
    double qp[2] = {y[0], y[1]}, qm[2] = {y[0], y[1]}, wp[2] = {y[2], y[3]}, wm[2] = {y[2], y[3]};
    qp[i] += e, qm[i] -= e, wp[i] += e, wm[i] -= e;
    double Eq = (pc_dp_energy(qp, y + 2) - pc_dp_energy(qm, y + 2)) / (2.0 * e);
    double Ev = (pc_dp_energy(y, wp) - pc_dp_energy(y, wm)) / (2.0 * e);
    g += Eq * acc[i] - Ev * (ap[i] - am[i]) / (2.0 * e);
  }
  return g;
}

static inline void pc_dp_rate(const double y[4], double dy[4]) {
  dy[0] = y[2], dy[1] = y[3];
  pc_dp_acc(y, y + 2, dy + 2);
}

static inline double pc_double_coefficient(double duration) {
  const double h = 1e-4;
  double y[4] = {1.0, 1.5, 0.0, 0.0}, C = 0.0, worst = 0.0, g0 = pc_dp_g(y);
  int n = (int)lround(duration / h);
  for (int k = 0; k < n; ++k) {
    double k1[4], k2[4], k3[4], k4[4], t[4];
    pc_dp_rate(y, k1);
    for (int i = 0; i < 4; ++i)
      t[i] = y[i] + 0.5 * h * k1[i];
    pc_dp_rate(t, k2);
    for (int i = 0; i < 4; ++i)
      t[i] = y[i] + 0.5 * h * k2[i];
    pc_dp_rate(t, k3);
    for (int i = 0; i < 4; ++i)
      t[i] = y[i] + h * k3[i];
    pc_dp_rate(t, k4);
    for (int i = 0; i < 4; ++i)
      y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    double g1 = pc_dp_g(y);
    C += 0.25 * h * (g0 + g1), g0 = g1;
    worst = pc_max(worst, fabs(C));
  }
  return worst;
}

/* A10: energy drift at Δt = 4, 2, 1 ms. The scheme is first order: max |ΔE| = c Δt (1 + δ(Δt)),
 * c from pc_double_coefficient (108.7 J/s), δ = O(Δt), so each halving of Δt at least halves δ
 * (measured δ = 6.1 %, 2.1 %, −0.5 %; with a wrong order or a wrong c, δ would not shrink);
 * and at each Δt the drift is the independent integration's above, to round-off: one rounding
 * of the state per step on energies below 10 J (|V| ≤ m g (2a + l) = 9.8 J), accumulated over
 * the 5000 steps at 1 ms, 5000 · 10 J · ε = 1.1e-11 J */
static inline pc_outcome pc_check_double(const char *solver) {
  pc_result r[3];
  double dev = 0.0, delta[3];
  const double c = pc_double_coefficient(5.0);
  for (int i = 0; i < 3; ++i) {
    const double dt = 4e-3 / (1 << i);
    pc_run_double(solver, dt, 5.0, &r[i]);
    dev = pc_max(dev, fabs(r[i].err - pc_double_reference(dt, 5.0)));
    delta[i] = r[i].err / (c * dt) - 1.0;
  }
  pc_outcome o = pc_verdict_of(&r[2], dev, 5000.0 * 10.0 * 2.220446049250313e-16);
  if (!(fabs(delta[1]) <= 0.5 * fabs(delta[0]) && fabs(delta[2]) <= 0.5 * fabs(delta[1])))
    o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what,
           "max |ΔE| %.3f / %.3f / %.3f J at 4 / 2 / 1 ms: %+.2f / %+.2f / %+.2f %% off c Δt "
           "(c = %.2f J/s); %.1e J off the independent integration",
           r[0].err, r[1].err, r[2].err, 100 * delta[0], 100 * delta[1], 100 * delta[2], c, dev);
  return o;
}

/* A11: 2 s at rest, k_B = 0.1. Drift bounded by the solver tolerance (n nc ε Δt/m per step
 * integrated over T). Height and penetration: the box starts on the plane and rests at the rest
 * depth d; a step's normal velocity error (pc_tol_v of one step) sinks it by Δt times that, and
 * k_B removes 10 % of the depth per step, so the depth stays below d + Δt tol₁/k_B = 2e-10 m
 * (measured 1.1e-12 m, 1.7e-11 m for ccp-newton's compliance). Σλ_N = m g: four contacts each
 * within ε_abs = 1e-6 N, ×10 for ccp-newton's compliance as in pc_tol_v (measured ≤ 3.6e-7 N).
 * Internal tangential forces are allowed (hyperstatic): reported. */
static inline pc_outcome pc_check_rest(const char *solver) {
  pc_result r;
  double T = 2.0, tv = pc_tol_v(2000, 4, 2.0);
  double zt = mr_assembly_settings_default().rest_depth + 1e-3 * pc_tol_v(1, 4, 2.0) / 0.1;
  double ft = 4.0 * 1e-6 * (strcmp(solver, "ccp-newton") ? 1.0 : 10.0);
  pc_run_rest(solver, T, &r);
  pc_outcome o = pc_verdict_of(&r, r.err, T * tv);
  if (o.v == PC_PASS &&
      !(r.x[0] <= zt && r.x[1] <= zt && r.x[3] <= tv && fabs(r.x[4] - 2.0 * PC_G) <= ft))
    o.v = PC_FAIL;
  snprintf(o.what, sizeof o.what, "|Φ_N| ≤ %.0e m, largest contact ‖λ_T‖ %.1e N", r.x[1], r.x[6]);
  if (o.v == PC_PASS || !r.ok) return o;
  /* the soft model's rest: 4 k Φ = m g; its vertical transient decays by √(1 − Δt 4d/m) =
   * 0.894 a step (1e-97 after 2000 steps), so the penetration is the fixed point to the
   * resolution of the box's height z ≈ 0.05 m it is computed from: 8 ε z = 8.9e-17 m (measured
   * 1.9e-18 m) */
  double pen = 2.0 * PC_G / (4.0 * 1e5);
  if (pc_is(solver, "soft") && fabs(r.x[7] - pen) <= 8.0 * DBL_EPSILON * 0.05 && r.err <= T * tv) {
    o.v = PC_ARTIFACT;
    snprintf(o.what, sizeof o.what, "penalty: penetration %.3e m = m g/(n k) = %.3e m", r.x[7],
             pen);
  }
  return o;
}

/* one case with one solver */
static inline pc_outcome pc_check(int id, const char *solver) {
  pc_result r;
  switch (id) {
  case PC_A1:
    return pc_check_a1(solver);
  case PC_A2:
    return pc_check_a2(solver, 1e-3, &r);
  case PC_A3:
    return pc_check_slide(solver, 0.0);
  case PC_A4:
    return pc_check_slide(solver, M_PI / 6.0);
  case PC_A5S:
    return pc_check_incline(solver, 0.3);
  case PC_A5K:
    return pc_check_incline(solver, 0.7);
  case PC_A6:
    return pc_check_push(solver);
  case PC_A7:
    return pc_check_bounce(solver);
  case PC_A8:
    return pc_check_roll(solver);
  case PC_A9:
    return pc_check_pendulum(solver, 0.1);
  case PC_A9L:
    return pc_check_pendulum(solver, 2.0);
  case PC_A10:
    return pc_check_double(solver);
  default:
    return pc_check_rest(solver);
  }
}

static inline const char *pc_verdict_name(pc_verdict v) {
  static const char *const n[] = {"pass", "artifact", "bug", "FAIL"};
  return n[v];
}

#endif
