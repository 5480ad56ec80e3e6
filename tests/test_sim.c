/* The simulator: stepping against closed forms, contact forces of a resting body with every
 * solver, determinism, divergence reporting, robots standing under PD. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "moreau/sim.h"
#include "sim_util.h"

static const char free_fall[] = "timestep: 0.001\n"
                                "duration: 1.0\n"
                                "bodies:\n"
                                "  - name: ball\n"
                                "    mass: 2.0\n"
                                "    position: [0, 0, 10]\n"
                                "    geoms: [{type: sphere, radius: 0.1}]\n";

/* semi-implicit Euler from rest: z_k = z₀ − g Δt² k (k + 1) / 2 exactly (A1); the only error is
 * round-off: k additions, each rounded to ε of the running value (|z| ≤ 10 m, |v_k| = g Δt k),
 * and one rounding of the closed form: (k + 1) ε |z₀| and (k + 1) ε |v_k| */
static void test_free_fall_discrete_closed_form(void **state) {
  mr_scene sc = tsim_parse(free_fall, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  double g = 9.81, dt = 1e-3;
  for (int k = 1; k <= 1000; ++k) {
    tsim_steps(s, 1);
    double z = 10.0 - g * dt * dt * k * (k + 1) / 2.0;
    assert_near(mr_sim_q(s)[2], z, (k + 1) * DBL_EPSILON * 10.0);
    assert_near(mr_sim_v(s)[2], -g * dt * k, (k + 1) * DBL_EPSILON * g * dt * k);
  }
  assert_int_equal(mr_sim_last(s)->ncontacts, 0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

static const char resting_box[] =
    "timestep: 0.001\n"
    "duration: 1.0\n"
    "contact: {margin: 0.001}\n"
    "solver: {max_iter: 2000}\n"
    "bodies:\n"
    "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n"
    "  - name: box\n"
    "    mass: 2.0\n"
    "    position: [0, 0, 0.05]\n"
    "    geoms: [{type: box, size: [0.4, 0.3, 0.1], friction: 0.5}]\n";

/* a box resting on 4 corners: after settling, Σλ_N = m g with every solver. The rigid solvers
 * stop at ε_abs ≤ 1e-6 per contact (force units), so Σλ_N is within 4 ε = 4e-6 N of the force
 * that stops the box; ccp-newton's compliant steady state and the soft model's spring steady
 * state (reached after 0.5 s of damping) also carry exactly m g, to the same tolerance. The LCP's
 * pyramid and RaiSim meet it too: at rest no friction is needed, so their artifacts vanish.
 * Height: Baumgarte is 0, so only the tolerance lets a rigid solver drift: c_N ≥ −ε means
 * v⁺_N ≥ −ε Δt = −1e-9 m/s, at most 500 Δt · 1e-9 = 5e-10 m over the run (1e-9 asserted). The
 * soft model sits at its spring's static deflection m g / (4 k) (k = soft_k = 1e5 N/m per
 * corner), to the same 1e-9 m. ccp-newton's compliance (R = 1e-6 diag G) lets the loaded
 * contacts creep at v_N = −Δt R_N λ_N per step (docs/solvers.md); asserted below 1e-7 m. */
static void test_resting_box_every_solver(void **state) {
  mr_scene sc = tsim_parse(resting_box, ".");
  double mg = 2.0 * 9.81;
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    mr_sim *s = tsim_create(&sc, name);
    tsim_steps(s, 500);
    const mr_contact *c;
    const double *lambda;
    int nc = mr_sim_contacts(s, &c, &lambda);
    double sum = 0.0;
    for (int j = 0; j < nc; ++j)
      sum += lambda[3 * j + 2];
    if (nc != 4 || !(fabs(sum - mg) <= 4e-6))
      fail_msg("%s: %d contacts, sum of normal forces %.12g N, m g = %.12g N", name, nc, sum, mg);
    /* and the box has not sunk */
    int soft = strcmp(name, "soft") == 0, newton = strcmp(name, "ccp-newton") == 0;
    double z = soft ? 0.05 - mg / (4 * 1e5) : 0.05;
    if (!(fabs(mr_sim_q(s)[2] - z) <= (newton ? 1e-7 : 1e-9)))
      fail_msg("%s: z = %.12g m, expected %.12g m", name, mr_sim_q(s)[2], z);
    mr_sim_free(s);
  }
  mr_scene_free(&sc);
}

/* FNV-1a over the bytes of the state */
static uint64_t hash_state(const mr_sim *s) {
  const mr_model *m = mr_sim_model(s);
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p[2] = {(const unsigned char *)mr_sim_q(s),
                               (const unsigned char *)mr_sim_v(s)};
  size_t n[2] = {(size_t)m->nq * sizeof(double), (size_t)m->nv * sizeof(double)};
  for (int k = 0; k < 2; ++k)
    for (size_t i = 0; i < n[k]; ++i)
      h = (h ^ p[k][i]) * 1099511628211ull;
  return h;
}

/* the same scene run twice gives a bitwise identical state, with every solver, and a reset
 * simulator replays it exactly */
static void test_determinism(void **state) {
  mr_scene sc =
      tsim_parse("timestep: 0.001\n"
                 "duration: 0.3\n"
                 "contact: {margin: 0.001}\n"
                 "bodies:\n"
                 "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.4}]}\n"
                 "  - name: cube\n"
                 "    mass: 1.0\n"
                 "    position: [0, 0, 0.12]\n"
                 "    orientation: [0.0499792, 0.0249896, 0, 0.9984367]\n"
                 "    linear_velocity: [1.0, 0.3, 0]\n"
                 "    angular_velocity: [0, 0, 2.0]\n"
                 "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.4}]\n"
                 "forces:\n"
                 "  - {body: cube, type: ramp, start: 0.0, duration: 1.0, from: [0, 0, 0], "
                 "to: [20, 0, 0]}\n",
                 ".");
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    mr_sim *a = tsim_create(&sc, name), *b = tsim_create(&sc, name);
    tsim_steps(a, 300);
    tsim_steps(b, 300);
    uint64_t ha = hash_state(a);
    if (ha != hash_state(b)) fail_msg("%s: two runs differ", name);
    mr_sim_reset(a);
    tsim_steps(a, 300);
    if (ha != hash_state(a)) fail_msg("%s: a reset run differs", name);
    mr_sim_free(a);
    mr_sim_free(b);
  }
  mr_scene_free(&sc);
}

/* a runaway state stops the run with a message naming the step and the coordinate, and leaves
 * the last good state in place */
static void test_divergence_reported(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "duration: 1.0\n"
                           "bodies:\n"
                           "  - name: ball\n"
                           "    mass: 1.0\n"
                           "    geoms: [{type: sphere, radius: 0.1}]\n"
                           "forces:\n"
                           "  - {body: ball, type: constant, start: 0.005, force: [1.0e9, 0, 0]}\n",
                           ".");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_error err = {0};
  mr_status st = MR_OK;
  long k = 0;
  while (k < 1000 && !(st = mr_sim_step(s, &err)))
    ++k;
  assert_int_equal(st, MR_ERR_NUMERIC);
  /* a = 1e9 m/s²: v exceeds 1e4 m/s on the first step of the force (step 6) */
  assert_int_equal(k, 5);
  assert_non_null(strstr(err.msg, "step 6"));
  assert_non_null(strstr(err.msg, "v[0]"));
  assert_int_equal(mr_sim_steps(s), 5);
  assert_true(isfinite(mr_sim_v(s)[0]) && fabs(mr_sim_v(s)[0]) < 1.0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* time-varying PD targets (pd.sine): a pendulum (m = 1 kg at l = 1 m, I = 1.00004 kg m²)
 * tracking 0.1 sin(πt) under gravity follows the steady state of the linearised system
 * I q̈ + k_d q̇ + (k_p + m g l) q = k_p A sin(ωt): amplitude k_p A / |Z|, phase lag
 * atan2(k_d ω, K − I ω²). Tolerance 1e-3 rad: small-angle error A³/6 ≈ 2e-4, the targets taken
 * at the end of each step and semi-implicit Euler shift the phase by O(ω Δt) ≈ 3e-3 of A
 * (3e-4 rad); the transient (ζ ≈ 1, ω_n ≈ 20 rad/s) has decayed by e^{-40} after 2 s */
static void test_sine_targets(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "duration: 4.0\n"
                           "robots:\n"
                           "  - name: p\n"
                           "    urdf: scenes/models/pendulum.urdf\n"
                           "    position: [0, 0, 2.0]\n"
                           "    pd:\n"
                           "      kp: 400.0\n"
                           "      kd: 40.0\n"
                           "      sine: [{joint: hinge, amplitude: 0.1, frequency: 0.5}]\n",
                           ".");
  assert_int_equal(sc.robots[0].nsines, 1);
  mr_sim *s = tsim_create(&sc, NULL);
  double I = 1.00004, kp = 400.0, kd = 40.0, K = kp + 9.81, w = M_PI, A = 0.1;
  double amp = kp * A / hypot(K - I * w * w, kd * w), lag = atan2(kd * w, K - I * w * w);
  for (int k = 1; k <= 4000; ++k) {
    tsim_steps(s, 1);
    double t = k * 1e-3;
    if (t >= 2.0) assert_near(mr_sim_q(s)[0], amp * sin(w * t - lag), 1e-3);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a robot holds its posture for 2 s with the default solver: the base stays within 1 cm of
 * its initial height (the requirement) and its feet stay on the ground */
static void stand(const char *path, int feet_contacts) {
  mr_scene sc = tsim_load(path);
  mr_sim *s = tsim_create(&sc, NULL);
  double z0 = mr_sim_q(s)[2];
  long n = (long)(sc.duration / sc.timestep + 0.5);
  for (long k = 0; k < n; ++k) {
    tsim_steps(s, 1);
    if (!(fabs(mr_sim_q(s)[2] - z0) < 0.01))
      fail_msg("%s: base at %.4f m after %ld steps, started at %.4f m", path, mr_sim_q(s)[2], k + 1,
               z0);
  }
  assert_true(mr_sim_last(s)->ncontacts >= feet_contacts);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

static void test_solo_stands(void **state) {
  stand("scenes/solo_stand.yaml", 4);
}
static void test_talos_stands(void **state) {
  stand("scenes/talos_stand.yaml", 8);
}

/* A tiny iteration budget (2 sweeps, cold start, so every step stops at the budget) on a stack
 * of three 0.1 m cubes: what a Gauss-Seidel solver returns at its budget is its best sweep,
 * never its starting point (λ = 0 cold), which can score better on the absolute criterion and
 * would let the cubes fall through each other (the top one ended 1.2 m down). Unconverged, the
 * stack may sink by a few millimetres (ccp-pgs: 1.2 mm); it must hold within 5 mm for 0.5 s,
 * where falling through a cube is 0.1 m, with each per-contact solver. */
static void test_budget_keeps_stack(void **state) {
  (void)state;
  static const char *const solvers[] = {"ncp-pgs", "ccp-pgs", "lcp-pgs", "raisim", "raisim-ds"};
  for (size_t k = 0; k < sizeof solvers / sizeof solvers[0]; ++k) {
    mr_scene sc = tsim_parse(
        "timestep: 0.001\n"
        "solver: {max_iter: 2, eps_abs: 1.0e-9, warm_start: false}\n"
        "bodies:\n"
        "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n"
        "  - {name: a, mass: 1.0, position: [0, 0, 0.05], geoms: [{type: box, size: [0.1, 0.1, "
        "0.1]}]}\n"
        "  - {name: b, mass: 1.0, position: [0, 0, 0.15], geoms: [{type: box, size: [0.1, 0.1, "
        "0.1]}]}\n"
        "  - {name: c, mass: 1.0, position: [0, 0, 0.25], geoms: [{type: box, size: [0.1, 0.1, "
        "0.1]}]}\n",
        ".");
    mr_sim *s = tsim_create(&sc, solvers[k]);
    tsim_steps(s, 500);
    const double *q = mr_sim_q(s);
    /* the top cube's height (its free joint's z: nq 7 per cube) */
    if (fabs(q[14 + 2] - 0.25) > 5e-3)
      fail_msg("%s: the top cube is at z = %g, not 0.25 within 5 mm", solvers[k], q[16]);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* max_work 0 is no work budget (mr_solver_settings): every island may run max_iter iterations.
 * Two identical stacks of three cubes side by side, two islands, solved cold by ncp-pgs to
 * 1e-9 N: each island needs the same sweeps (1089), the second as many as the first
 * (a work budget of 0 once read as exhausted after the first island, leaving the next ones
 * MR_WORK_MIN_ITER = 25 sweeps and unconverged). */
static void test_no_work_budget(void **state) {
  (void)state;
#define CUBE(name, x, z)                                                                           \
  "  - {name: " name ", mass: 1.0, position: [" x ", 0, " z "], geoms: [{type: box, size: [0.1, "  \
  "0.1, 0.1]}]}\n"
  mr_scene sc =
      tsim_parse("timestep: 0.001\n"
                 "solver: {max_iter: 5000, eps_abs: 1.0e-9, warm_start: false, "
                 "max_work: 0}\n"
                 "bodies:\n"
                 "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: "
                 "0.5}]}\n" CUBE("a", "0", "0.05") CUBE("b", "0", "0.15") CUBE("c", "0", "0.25")
                     CUBE("d", "1", "0.05") CUBE("e", "1", "0.15") CUBE("f", "1", "0.25"),
                 ".");
#undef CUBE
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  tsim_steps(s, 1);
  const mr_step_stats *st = mr_sim_last(s);
  assert_int_equal(st->islands, 2);
  assert_true(st->iterations > MR_WORK_MIN_ITER);
  assert_int_equal(st->iterations_sum, 2 * st->iterations);
  assert_true(st->converged);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_free_fall_discrete_closed_form),
      cmocka_unit_test(test_resting_box_every_solver),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_budget_keeps_stack),
      cmocka_unit_test(test_no_work_budget),
      cmocka_unit_test(test_divergence_reported),
      cmocka_unit_test(test_sine_targets),
      cmocka_unit_test(test_solo_stands),
      cmocka_unit_test(test_talos_stands),
  };
  return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
