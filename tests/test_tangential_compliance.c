/* Tangential compliance R_T (DESIGN.md §4: G + R, R = diag(R_T, R_T, R_N) per contact): the scene
 * keys and their combination, a standalone sticking problem, and the creep of a pushed block.
 *
 * The creep, derived. The problem is in force units: the velocity after the step is
 * c = Δt (G λ + g), and a contact that sticks in the compliant problem has (G + R) λ + g = 0
 * (inside the cone, for every model: LCP, CCP, RaiSim, NCP all reduce to it), so its actual
 * tangential velocity is c_T = −Δt R_T λ_T: the compliance turns stiction into a viscous law of
 * damping 1/(Δt R_T). A box of mass m on four corner contacts, pushed by a constant horizontal F
 * through its centre (no yaw by symmetry, no pitch when R_N = 0), translates with one velocity
 * v, so each contact carries λ_T = −v/(Δt R_T). Newton, m (v⁺ − v) = Δt (F + Σλ_T), then gives
 *   v⁺ (1 + 4/(m R_T)) = v + Δt F/m,
 * a contraction of ratio m R_T/(m R_T + 4) towards the creep velocity v* = Δt R_T F / 4 (each
 * contact carries F/4). With R_T = 0 the contacts stick and the block does not move. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "core/linalg.h"
#include "moreau/contact.h"
#include "moreau/scene.h"
#include "sim_util.h"

#define DT 1e-3
#define MASS 1.0
#define PUSH 2.0 /* N, below μ m g / 4 per contact even on the unloaded side (see below) */

static int is_soft(const char *name) {
  return strcmp(name, "soft") == 0;
}
static int is_newton(const char *name) {
  return strcmp(name, "ccp-newton") == 0;
}

/* a 0.2 m box of 1 kg on a plane (μ = 0.5 for both), pushed by PUSH along x from t = 0; the box
 * and the ground each carry half of rt (in series: R_T = rt) and of rn */
static mr_scene block_scene(double rt, double rn) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 1.0\ncontact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5, "
           "compliance: %.17g, tangential_compliance: %.17g}]}\n"
           "  - name: block\n    mass: 1.0\n    position: [0, 0, 0.1]\n"
           "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.5, compliance: %.17g, "
           "tangential_compliance: %.17g}]\n"
           "forces:\n  - {body: block, type: constant, force: [%g, 0, 0]}\n",
           rn / 2, rt / 2, rn / 2, rt / 2, PUSH);
  return tsim_parse(text, ".");
}

/* the block's x velocity after n steps, and its displacement */
static void run_block(const char *solver, double rt, double rn, int n, double *vx, double *dx) {
  mr_scene sc = block_scene(rt, rn);
  mr_sim *s = tsim_create(&sc, solver);
  double x0 = mr_sim_q(s)[0];
  tsim_steps(s, n);
  *vx = mr_sim_v(s)[0];
  *dx = mr_sim_q(s)[0] - x0;
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* R_T = 0: every rigid solver holds the block (soft ignores R and creeps by design; ccp-newton
 * has no rigid contact). The friction F acts 0.1 m below the centre: its moment 0.2 N m is
 * balanced by the normal forces, 2 d · 0.1 m, so front and back corners differ by d = 1 N
 * (2.95 and 1.95 N): μ λ_N ≥ 0.97 N > F/4 = 0.5 N at every corner, sticking. Tolerance: the
 * solvers stop at ε_abs = 1e-6 on the criterion in m/s² (velocity / Δt), a velocity error of ≤ Δt ε
 * = 1e-9 m/s per step; a sticking step starts from the previous step's velocity and ends at its
 * own residual, so v stays within 1e-9 m/s and x within 500 Δt · 1e-9 = 5e-10 m (measured ≤
 * 1e-12). */
static void test_rigid_sticks(void **state) {
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    if (is_soft(name) || is_newton(name)) continue;
    double vx, dx;
    run_block(name, 0.0, 0.0, 500, &vx, &dx);
    print_message("  rigid  %-12s v = %.3e m/s, dx = %.3e m\n", name, vx, dx);
    if (!(fabs(vx) <= 1e-9 && fabs(dx) <= 5e-10))
      fail_msg("%s: rigid block moves: v = %g m/s, dx = %g m", name, vx, dx);
  }
}

/* R_T = 4 kg⁻¹: creep at v* = Δt R_T F / 4 = 2e-3 m/s for every solver but soft. After 500 steps
 * the contraction (ratio 0.5) has converged to round-off; the solver tolerance moves Σλ_T by
 * ≤ 4 ε = 4e-6 N, hence v by Δt R_T · 4e-6 / 4 = 4e-9 m/s: 2e-6 of v* (measured ≤ 1.3e-7
 * relative), and x_n, a sum of such velocities, to the same relative error. The displacement is
 * checked against the contraction summed from
 * rest: x_n = Δt Σ v_k, v_k = v*(1 − ρ^k), ρ = m R_T / (m R_T + 4).
 * ccp-newton needs R_N > 0: with R_N = 1e-2 the front corners (d = 1 N more load than the back
 * ones, see test_rigid_sticks) sink by Δt R_N d per step more, but the gap correction Φ/Δt
 * (docs/solvers.md) pushes each corner back every step, so each settles at a constant depth
 * Δt² R_N λ_N: the box takes a constant tilt of Δt² R_N d / 0.2 m = 5e-8 rad within a few steps
 * and does not pitch on; tolerance 2e-5 relative (that tilt's transient: a few steps of pitching
 * at Δt R_N d / 0.2 m = 5e-5 rad/s move the centre 0.1 m above the contacts by 5e-9 m per step,
 * 5e-6 of x_n measured; v 3e-8). */
static void test_creep(void **state) {
  const double rt = 4.0, vstar = DT * rt * PUSH / 4.0, rho = MASS * rt / (MASS * rt + 4.0);
  const int n = 500;
  double xn = 0.0, rk = 1.0;
  for (int k = 1; k <= n; ++k)
    rk *= rho, xn += DT * vstar * (1.0 - rk);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    if (is_soft(name)) continue;
    double vx, dx, rn = is_newton(name) ? 1e-2 : 0.0, tol = is_newton(name) ? 2e-5 : 2e-6;
    double want_v = vstar, want_x = xn;
    run_block(name, rt, rn, n, &vx, &dx);
    print_message("  creep  %-12s v = %.9e m/s (want %.9e), dx = %.9e m (want %.9e)\n", name, vx,
                  want_v, dx, want_x);
    /* lcp-lemke pivots to a vertex of the rigid normal forces' family (the box on four corners
     * is hyperstatic): corners it leaves unloaded slide, so fewer corners stick and the creep is
     * faster, v* (4 sticking) ≤ v ≤ 4 v* (at least one sticks: F < μ m g); 3.0e-3 measured */
    if (!strcmp(name, "lcp-lemke")) {
      if (!(vx >= want_v * (1 - tol) && vx <= 4 * want_v))
        fail_msg("lcp-lemke: creep v = %.9g m/s outside [%.9g, %.9g]", vx, want_v, 4 * want_v);
      continue;
    }
    if (!(fabs(vx - want_v) <= tol * want_v && fabs(dx - want_x) <= tol * want_x))
      fail_msg("%s: creep v = %.9g m/s, want %.9g; dx = %.9g m, want %.9g", name, vx, want_v, dx,
               want_x);
  }
}

/* the creep is proportional to R_T: halving R_T halves v* (ncp-pgs; each speed within 2e-6
 * relative as above, the ratio within 4e-6) */
static void test_creep_linear(void **state) {
  double v1, v2, dx;
  run_block("ncp-pgs", 4.0, 0.0, 500, &v1, &dx);
  run_block("ncp-pgs", 2.0, 0.0, 500, &v2, &dx);
  assert_near(v1 / v2, 2.0, 4e-6);
}

/* a standalone sticking contact with a coupled G (G_NT ≠ 0) and R = (R_T, R_T, R_N): every
 * solver returns λ = −(G + R)⁻¹ g, which differs from the rigid answer by O(R_T) (so a solver
 * ignoring R_T fails). R_N = 0 except for ccp-newton (R_N = 0.1, its reference computed with
 * it). Tolerance: a residual ‖·‖ ≤ √3 ε_abs moves λ by at most √3 ε/σ_min(G + R), σ_min = 1.1
 * (G + R with R_N = 0; 1.2 with ccp-newton's R_N = 0.1): 1.6e-6, asserted 2e-6 for every
 * solver (ccp-newton's compliance is the R given, so its reference is exact too). */
static void test_standalone(void **state) {
  const double G[9] = {2.0, 0.3, 0.4, 0.3, 1.5, -0.2, 0.4, -0.2, 1.2};
  const double g[3] = {0.8, -0.6, -2.0}, mu[1] = {0.8}, phi[1] = {0.0}, rt = 1.5;
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    if (is_soft(name)) continue;
    double R[3] = {rt, rt, is_newton(name) ? 0.1 : 0.0}, L[9], ref[3], rigid[3];
    for (int pass = 0; pass < 2; ++pass) {
      double *x = pass ? rigid : ref;
      memcpy(L, G, sizeof L);
      for (int a = 0; a < 3; ++a)
        L[4 * a] += pass ? 0.0 : R[a], x[a] = -g[a];
      assert_int_equal(mr_cholesky(L, 3), 0);
      mr_cholesky_solve(L, 3, x);
    }
    /* inside the cone (sticking), and far from the rigid answer */
    assert_true(hypot(ref[0], ref[1]) < 0.9 * mu[0] * ref[2]);
    assert_true(fabs(ref[0] - rigid[0]) > 0.1);
    mr_contact_problem p = {.nc = 1, .G = G, .g = g, .mu = mu, .R = R, .phi = phi, .dt = DT};
    mr_solver_settings s = mr_solver_settings_default();
    mr_arena work;
    mr_error err;
    mr_solver_stats st;
    double lambda[3] = {0, 0, 0}, c[3];
    assert_int_equal(mr_arena_init(&work, mr_solver_work_size(1, 0)), 0);
    mr_status status = mr_solve(name, &p, &s, NULL, &work, lambda, c, &st, &err);
    mr_arena_destroy(&work);
    if (status) fail_msg("%s: %s", name, err.msg);
    print_message("  stick  %-12s λ = (%.8f, %.8f, %.8f), want (%.8f, %.8f, %.8f)\n", name,
                  lambda[0], lambda[1], lambda[2], ref[0], ref[1], ref[2]);
    assert_vec_near(lambda, ref, 3, 2e-6);
  }
}

/* scene keys: geometry, material, pair override; the series rule R_T1 + R_T2 */
static void test_scene_keys(void **state) {
  static const char text[] =
      "materials:\n  pad: {friction: 0.8, tangential_compliance: 0.25}\n"
      "bodies:\n"
      "  - {name: ground, fixed: true, geoms: [{type: halfspace, tangential_compliance: 0.5}]}\n"
      "  - {name: a, mass: 1, position: [0, 0, 1], geoms: [{type: sphere, radius: 0.1, "
      "material: pad}]}\n"
      "  - {name: b, mass: 1, position: [1, 0, 1], geoms: [{type: sphere, radius: 0.1, "
      "material: pad, tangential_compliance: 0.125}]}\n"
      "pairs:\n  - {between: [ground, b], tangential_compliance: 2.0}\n"
      "  - {between: [ground, a], friction: 0.1}\n";
  mr_scene sc = tsim_parse(text, ".");
  const mr_geom *gs = sc.model->geoms;
  assert_int_equal(sc.model->ngeoms, 3);
  /* exact binary fractions: the sums are exact */
  assert_near(gs[0].tangential_compliance, 0.5, 0);
  assert_near(gs[1].tangential_compliance, 0.25, 0);
  assert_near(gs[2].tangential_compliance, 0.125, 0);
  assert_near(gs[1].compliance, 0.0, 0);
  assert_near(mr_material_combine_tangential(&gs[0], &gs[1]), 0.75, 0);
  double rt;
  /* an override without the key keeps the combination; one with it replaces it */
  assert_int_equal(mr_scene_pair_tangential_compliance(&sc, 1, 0, &rt), 0);
  assert_near(rt, 0.75, 0);
  assert_int_equal(mr_scene_pair_tangential_compliance(&sc, 0, 2, &rt), 1);
  assert_near(rt, 2.0, 0);
  assert_int_equal(mr_scene_pair_tangential_compliance(&sc, 1, 2, &rt), 0);
  assert_near(rt, 0.375, 0);
  mr_scene_free(&sc);
  /* negative values are refused with the key in the message */
  mr_error err = {0};
  const char *bad[] = {"bodies:\n  - {name: g, fixed: true, geoms: [{type: halfspace, "
                       "tangential_compliance: -1}]}\n",
                       "materials:\n  m: {tangential_compliance: -0.5}\n",
                       "bodies:\n  - {name: g, fixed: true, geoms: [{type: halfspace}]}\n"
                       "  - {name: b, mass: 1, geoms: [{type: sphere, radius: 0.1}]}\n"
                       "pairs:\n  - {between: [g, b], tangential_compliance: -2}\n"};
  for (int k = 0; k < 3; ++k) {
    mr_scene x;
    memset(&err, 0, sizeof err);
    assert_int_not_equal(mr_scene_parse(bad[k], "bad.yaml", ".", &x, &err), MR_OK);
    if (!strstr(err.msg, "tangential_compliance")) fail_msg("message: %s", err.msg);
  }
}

/* a robot's `material` sets the tangential compliance of every geometry of the robot, and its
 * `friction` overrides only the friction */
static void test_robot_material(void **state) {
  mr_scene sc = tsim_parse("materials:\n  pad: {friction: 0.3, tangential_compliance: 0.75}\n"
                           "robots:\n"
                           "  - {name: p, urdf: models/pendulum.urdf, floating: false, "
                           "material: pad, friction: 0.6}\n",
                           "scenes");
  int n = 0;
  for (int k = 0; k < sc.model->ngeoms; ++k) {
    const mr_geom *g = &sc.model->geoms[k];
    if (g->body == 0) continue;
    assert_near(g->tangential_compliance, 0.75, 0);
    assert_near(g->friction, 0.6, 0);
    n++;
  }
  assert_int_equal(n, 1);
  mr_scene_free(&sc);
}

/* the assembled problem carries R_T in rows t₁, t₂ and R_N in row n of each contact */
static void test_assembled_R(void **state) {
  mr_scene sc = block_scene(4.0, 0.5);
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  tsim_steps(s, 2);
  const mr_contact_problem *p = mr_sim_problem(s);
  assert_int_equal(p->nc, 4);
  assert_non_null(p->R);
  /* 2 + 2 and 0.25 + 0.25: exact */
  for (int i = 0; i < p->nc; ++i) {
    assert_near(p->R[3 * i], 4.0, 0);
    assert_near(p->R[3 * i + 1], 4.0, 0);
    assert_near(p->R[3 * i + 2], 0.5, 0);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rigid_sticks), cmocka_unit_test(test_creep),
      cmocka_unit_test(test_creep_linear), cmocka_unit_test(test_standalone),
      cmocka_unit_test(test_scene_keys),   cmocka_unit_test(test_robot_material),
      cmocka_unit_test(test_assembled_R),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
