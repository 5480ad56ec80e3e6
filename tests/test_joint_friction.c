/* Joint dry friction (docs/physics.md, "Joint friction"): a box |λ| ≤ f on a joint's velocity in
 * the contact problem. Closed forms: a pendulum held by its hinge's friction below the threshold
 * and released above it at (m g l cos q − f)/I; a carriage on a rail held by a force F ≤ f and
 * accelerated at (F − f)/m above; the scene keys (override, scale, 0 disables) and their errors;
 * the Z1 arm of the reference collection stepping with its URDF friction, and with the scale at 0
 * bit for bit as a copy of its URDF without friction; the solvers that cannot solve a box refuse
 * it by name, and so do the step derivatives. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "moreau/sim_derivatives.h"
#include "moreau/sim.h"
#include "sim_util.h"

#define DT 1e-3
/* the pendulum of scenes/models/friction_arm.urdf: m g l and I about the hinge */
#define MGL (1.0 * 9.81 * 0.5)
#define INERTIA (1.0 * 0.5 * 0.5 + 1e-4)
#define F_ARM 3.0

/* the pendulum scene at q0 with extra robot keys, stepped with solver (NULL: the default) */
static mr_sim *arm(double q0, const char *keys, const char *solver, mr_scene *sc) {
  char text[512];
  snprintf(text, sizeof text,
           "timestep: %g\nrobots:\n  - {name: arm, urdf: models/friction_arm.urdf, floating: "
           "false, joints: {hinge: %.17g}%s%s}\n",
           DT, q0, keys ? ", " : "", keys ? keys : "");
  *sc = tsim_parse(text, "scenes");
  return tsim_create(sc, solver);
}

/* the solvers that solve a box (mr_solver_info.no_box NULL) */
static int box_solver(int k) {
  return mr_solver_at(k)->no_box == NULL;
}

/* Held: at q0 = 1 rad the gravity torque m g l cos q0 = 2.650 N m is below f = 3 N m, so the
 * friction carries it and the arm stays. The solver meets c = v⁺/Δt to ε = eps_abs = 1e-6
 * (force units) inside the box, so |v⁺| ≤ ε Δt = 1e-9 rad/s and q drifts by at most
 * Δt · 1e-9 = 1e-12 rad per step, 1e-9 rad over 1000 steps (a single row is solved exactly by
 * one Gauss-Seidel step, so the measured drift is 0); the friction force is −m g l cos q0 within
 * ε / G_NN = ε I / Δt = 2.5e-4 N m. Every solver that takes a box. */
static void test_pendulum_held(void **state) {
  double tau = MGL * cos(1.0);
  for (int k = 0; k < mr_solver_count(); ++k) {
    if (!box_solver(k)) continue;
    mr_scene sc;
    mr_sim *s = arm(1.0, NULL, mr_solver_at(k)->name, &sc);
    tsim_steps(s, 1000);
    const mr_sim_constraint *cons;
    const double *lambda;
    assert_int_equal(mr_sim_constraints(s, &cons, &lambda), 1);
    assert_int_equal(cons[0].type, MR_SIM_FRICTION);
    double dq = fabs(mr_sim_q(s)[0] - 1.0);
    print_message("held %-11s |q - q0| %.1e rad  friction %.9f N m (gravity %.9f)\n",
                  mr_solver_at(k)->name, dq, lambda[2], tau);
    assert_true(dq <= 1e-9);
    assert_near(lambda[2], -tau, 2.5e-4);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* Released: at q0 = 0.3 rad the gravity torque 4.686 N m exceeds f = 3 N m. The first step is
 * v₁ = Δt (m g l cos q0 − f)/I exactly (the box sits at its bound −f; round-off only, 1e-15
 * rad/s asserted below 1e-12). Over the first N = 10 steps (t = 0.01 s) the mean acceleration
 * v_N/t differs from α₀ = (m g l cos q0 − f)/I = 6.741 rad/s² only by the change of the gravity
 * torque along the way: |dα/dq| = m g l sin q / I ≤ 19.6 s⁻², q moves at most ½ α₀ t² =
 * 3.4e-4 rad, so |v_N/t − α₀| ≤ 6.7e-3 rad/s² (asserted 7e-3). Every solver that takes a box. */
static void test_pendulum_released(void **state) {
  double alpha0 = (MGL * cos(0.3) - F_ARM) / INERTIA;
  for (int k = 0; k < mr_solver_count(); ++k) {
    if (!box_solver(k)) continue;
    mr_scene sc;
    mr_sim *s = arm(0.3, NULL, mr_solver_at(k)->name, &sc);
    tsim_steps(s, 1);
    double v1 = mr_sim_v(s)[0];
    tsim_steps(s, 9);
    double a = mr_sim_v(s)[0] / (10 * DT);
    print_message("released %-11s v1 error %.1e rad/s  mean acceleration %.6f (closed form "
                  "%.6f) rad/s^2\n",
                  mr_solver_at(k)->name, fabs(v1 - DT * alpha0), a, alpha0);
    assert_near(v1, DT * alpha0, 1e-12);
    assert_near(a, alpha0, 7e-3);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* The threshold: with the friction set (joint_friction) 0.1 % above the gravity torque at q0 =
 * 0.5 the arm holds (|q − q0| ≤ 1e-9 rad as above); 0.1 % below it moves by the closed form, its
 * first-step velocity Δt · 1e-3 m g l cos q0 / I = 1.7e-5 rad/s to round-off (1e-12) */
static void test_pendulum_threshold(void **state) {
  double tau = MGL * cos(0.5);
  for (int side = 0; side < 2; ++side) {
    double f = tau * (side ? 0.999 : 1.001);
    char keys[128];
    snprintf(keys, sizeof keys, "joint_friction: {hinge: %.17g}", f);
    mr_scene sc;
    mr_sim *s = arm(0.5, keys, NULL, &sc);
    tsim_steps(s, side ? 1 : 1000);
    double dq = fabs(mr_sim_q(s)[0] - 0.5), v = mr_sim_v(s)[0];
    print_message("f = %.4f m g l cos q0: |q - q0| %.2e rad, v %.3e rad/s\n", side ? 0.999 : 1.001,
                  dq, v);
    if (side)
      assert_near(v, DT * (tau - f) / INERTIA, 1e-12);
    else
      assert_true(dq <= 1e-9);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* joint_friction_scale: 0 removes the rows: the arm swings as without friction, its first-step
 * velocity Δt m g l cos q0 / I, and no constraint is in the problem */
static void test_scale_zero_disables(void **state) {
  mr_scene sc;
  mr_sim *s = arm(0.3, "joint_friction_scale: 0", NULL, &sc);
  tsim_steps(s, 1);
  assert_near(mr_sim_v(s)[0], DT * MGL * cos(0.3) / INERTIA, 1e-12);
  assert_int_equal(mr_sim_constraints(s, NULL, NULL), 0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* the carriage of scenes/models/friction_slider.urdf (m = 2 kg, URDF friction 3 N) under a
 * constant force F along the rail (the scene's torques key), stepped n times: its velocity */
static double slider(double force, const char *keys, long n) {
  char text[512];
  snprintf(text, sizeof text,
           "timestep: %g\nrobots:\n  - {name: cart, urdf: models/friction_slider.urdf, floating: "
           "false, torques: {slider: %.17g}%s%s}\n",
           DT, force, keys ? ", " : "", keys ? keys : "");
  mr_scene sc = tsim_parse(text, "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, n);
  double v = mr_sim_v(s)[0];
  mr_sim_free(s);
  mr_scene_free(&sc);
  return v;
}

/* A force on a prismatic joint: F = 2 N < f = 3 N holds the carriage (v = 0 to round-off,
 * 1e-12 asserted); F = 5 N accelerates it at (F − f)/m = 1 m/s², a constant acceleration that
 * semi-implicit Euler integrates exactly: v = 0.1 m/s after 100 steps (round-off, 1e-12). The
 * scene's per-joint override (6 N) holds F = 5 N; the scale 0.5 (f = 1.5 N) lets F = 2 N
 * accelerate at 0.25 m/s². */
static void test_slider_force(void **state) {
  double held = slider(2.0, NULL, 100), moving = slider(5.0, NULL, 100);
  double over = slider(5.0, "joint_friction: {slider: 6}", 100);
  double scaled = slider(2.0, "joint_friction_scale: 0.5", 100);
  print_message("slider: F=2 v %.1e, F=5 v %.15f (0.1), override v %.1e, scaled v %.15f (0.025)\n",
                held, moving, over, scaled);
  assert_near(held, 0.0, 1e-12);
  assert_near(moving, 0.1, 1e-12);
  assert_near(over, 0.0, 1e-12);
  assert_near(scaled, 0.025, 1e-12);
}

/* ---- a real robot: the Unitree Z1 arm of the reference collection (its 7 joints carry
 * friction 1 or 2 N m; the Panda's URDF gives 0.0) ---- */

/* text of a file, malloc'd */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

/* the Z1 from urdf (its meshes under root), fixed, at its neutral posture, falling under
 * gravity onto its joint limits for n steps with the default solver; keys appended to the robot */
static mr_sim *z1(const char *urdf, const char *root, const char *keys, mr_scene *sc) {
  char text[2048];
  snprintf(text, sizeof text,
           "timestep: %g\nrobots:\n  - {name: z1, urdf: %s, package_roots: [%s], floating: "
           "false%s%s}\n",
           DT, urdf, root, keys ? ", " : "", keys ? keys : "");
  *sc = tsim_parse(text, ".");
  return tsim_create(sc, NULL);
}

/* The Z1 loads with its URDF friction and steps 1 s with the default solver without an error, every
 * step converged; with joint_friction_scale: 0 it steps bit for bit as a copy of its URDF with the
 * friction attributes removed. */
static void test_z1(void **state) {
  const char *ref = test_reference_root();
  if (!ref) {
    if (getenv("CI")) fail_msg("the reference collection is absent");
    skip();
  }
  /* the package root holds example-robot-data (its meshes are package://example-robot-data/) */
  char root[4200], path[4300], copy[] = "/tmp/moreau_z1_XXXXXX.urdf";
  snprintf(root, sizeof root, "%s/..", ref);
  snprintf(path, sizeof path, "%s/robots/z1_description/urdf/z1.urdf", ref);
  char *text = read_text(path);
  assert_non_null(text);
  /* the copy without friction: the attribute renamed, which the URDF reader ignores */
  int nf = 0;
  for (char *p = text; (p = strstr(p, " friction=")); p += 10, ++nf)
    memcpy(p, " fricti0n=", 10);
  int fd = mkstemps(copy, 5);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  free(text);
  mr_scene sa, sb, sc;
  mr_sim *a = z1(path, root, NULL, &sa);
  mr_sim *b = z1(path, root, "joint_friction_scale: 0", &sb);
  mr_sim *c = z1(copy, root, NULL, &sc);
  int nv = sa.model->nv, friction_dofs = 0;
  for (int k = 0; k < nv; ++k)
    friction_dofs += sa.model->joint_friction[k] > 0.0;
  long unconverged = 0;
  double qmax = 0.0;
  for (int k = 0; k < 1000; ++k) {
    tsim_steps(a, 1), tsim_steps(b, 1), tsim_steps(c, 1);
    unconverged += !mr_sim_last(a)->converged;
    for (int j = 0; j < nv; ++j)
      qmax = fmax(qmax, fabs(mr_sim_q(a)[j] - mr_sim_q(c)[j]));
  }
  print_message("z1: %d friction attributes, %d dofs with friction, %ld unconverged steps, "
                "max |q_friction - q_none| %.3f rad\n",
                nf, friction_dofs, unconverged, qmax);
  assert_true(friction_dofs > 0);
  assert_int_equal(unconverged, 0);
  assert_memory_equal(mr_sim_q(b), mr_sim_q(c), sb.model->nq * sizeof(double));
  assert_memory_equal(mr_sim_v(b), mr_sim_v(c), sb.model->nv * sizeof(double));
  mr_sim_free(a), mr_sim_free(b), mr_sim_free(c);
  mr_scene_free(&sa), mr_scene_free(&sb), mr_scene_free(&sc);
  remove(copy);
}

/* ---- refusals and errors ---- */

/* every solver that cannot solve a box refuses the world at creation, naming itself, its reason
 * and the solvers that can; mr_solve refuses a box problem the same way */
static void test_refusing_solvers(void **state) {
  int refused = 0;
  for (int k = 0; k < mr_solver_count(); ++k) {
    const mr_solver_info *info = mr_solver_at(k);
    mr_scene sc = tsim_parse("robots:\n  - {name: arm, urdf: models/friction_arm.urdf, floating: "
                             "false}\n",
                             "scenes");
    mr_error err = {0};
    mr_sim *s = mr_sim_from_scene(&sc, info->name, &err);
    if (box_solver(k)) {
      if (!s) fail_msg("%s: %s", info->name, err.msg);
    } else {
      print_message("%s\n", err.msg);
      assert_null(s);
      assert_int_equal(err.status, MR_ERR_UNSUPPORTED);
      assert_non_null(strstr(err.msg, info->name));
      assert_non_null(strstr(err.msg, info->no_box));
      assert_non_null(strstr(err.msg, "ncp-hybrid"));
      ++refused;
    }
    mr_sim_free(s);
    mr_scene_free(&sc);
    /* a one-box problem: G = 1 on the normal row */
    double G[9] = {0, 0, 0, 0, 0, 0, 0, 0, 1}, g[3] = {0, 0, 2}, mu[1] = {1};
    unsigned char kind[1] = {MR_KIND_BOX};
    mr_contact_problem p = {.nc = 1, .G = G, .g = g, .mu = mu, .kind = kind};
    mr_arena work;
    assert_int_equal(mr_arena_init(&work, mr_solver_work_size(1, 0)), 0);
    mr_solver_settings set = mr_solver_settings_default();
    double lambda[3] = {0}, c[3], y[3];
    mr_solver_state st = {.cap = 3, .y = y};
    mr_solver_stats stats;
    mr_status rc = mr_solve(info->name, &p, &set, &st, &work, lambda, c, &stats, &err);
    if (box_solver(k)) {
      /* c = λ + 2 with |λ| ≤ 1: λ = −1 at the bound, c = 1 ≥ 0 */
      if (rc) fail_msg("%s: %s", info->name, err.msg);
      assert_near(lambda[2], -1.0, 1e-12);
    } else {
      assert_int_equal(rc, MR_ERR_UNSUPPORTED);
      assert_non_null(strstr(err.msg, info->name));
    }
    mr_arena_destroy(&work);
  }
  assert_true(refused >= 1);
}

/* the step derivatives refuse a world with joint friction (not silently without it) */
static void test_derivatives_refuse(void **state) {
  mr_scene sc;
  mr_sim *s = arm(1.0, NULL, NULL, &sc);
  mr_error err = {0};
  mr_sim_derivatives *x = mr_sim_derivatives_create(s, &err);
  print_message("%s\n", err.msg);
  assert_null(x);
  assert_int_equal(err.status, MR_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "joint friction"));
  mr_sim_free(s);
  mr_scene_free(&sc);
  /* with the scale at 0 they are available */
  s = arm(1.0, "joint_friction_scale: 0", NULL, &sc);
  x = mr_sim_derivatives_create(s, &err);
  assert_non_null(x);
  mr_sim_derivatives_free(x);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a scene error naming the file, line and value */
static void expect_error(const char *keys, const char *needle) {
  char text[512];
  snprintf(text, sizeof text,
           "robots:\n  - {name: arm, urdf: models/friction_arm.urdf, floating: false, %s}\n", keys);
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_parse(text, "test.yaml", "scenes", &sc, &err) == MR_OK)
    fail_msg("'%s' accepted", keys);
  print_message("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "test.yaml:2"));
  if (!strstr(err.msg, needle)) fail_msg("'%s' not in '%s'", needle, err.msg);
}

static void test_scene_errors(void **state) {
  expect_error("joint_friction_scale: -1", "'joint_friction_scale': must be a finite number >= 0, "
                                           "got -1");
  expect_error("joint_friction_scale: abc", "joint_friction_scale");
  expect_error("joint_friction: -2", "'joint_friction': must be a finite number >= 0, got -2");
  expect_error("joint_friction: {hinje: 1}", "did you mean 'hinge'?");
  expect_error("joint_friction: {hinge: -1}", "'joint_friction.hinge': must be a finite number");
}

/* a URDF friction that is negative is refused with the joint's name and the value */
static void test_urdf_negative_friction(void **state) {
  const char *path = "/tmp/moreau_bad_friction.urdf";
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("<robot name=\"r\"><link name=\"a\"/><link name=\"b\"><inertial><mass value=\"1\"/>"
        "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>"
        "<joint name=\"j\" type=\"continuous\"><parent link=\"a\"/><child link=\"b\"/>"
        "<dynamics friction=\"-0.5\"/></joint></robot>\n",
        f);
  fclose(f);
  char text[256];
  snprintf(text, sizeof text, "robots:\n  - {name: r, urdf: %s, floating: false}\n", path);
  mr_scene sc;
  mr_error err = {0};
  assert_int_not_equal(mr_scene_parse(text, "test.yaml", ".", &sc, &err), MR_OK);
  print_message("%s\n", err.msg);
  assert_non_null(strstr(err.msg, "friction=\"-0.5\""));
  assert_non_null(strstr(err.msg, "joint \"j\""));
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pendulum_held),      cmocka_unit_test(test_pendulum_released),
      cmocka_unit_test(test_pendulum_threshold), cmocka_unit_test(test_scale_zero_disables),
      cmocka_unit_test(test_slider_force),       cmocka_unit_test(test_z1),
      cmocka_unit_test(test_refusing_solvers),   cmocka_unit_test(test_derivatives_refuse),
      cmocka_unit_test(test_scene_errors),       cmocka_unit_test(test_urdf_negative_friction),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
