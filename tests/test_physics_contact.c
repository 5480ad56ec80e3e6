/* The analytical cases with contact (EXPERIMENTS.md §A: A3–A8, A11) with every registered
 * solver, against their closed forms over the whole run. The measurements and the tolerances
 * (with their derivations) are in tests/physics_cases.h; the expected verdict per solver in
 * tests/physics_expect.h: a model that cannot pass a case by design must show its known
 * artifact, with the magnitude the check derives (CCP: a contact at a distance Δt μ‖c_T‖; the LCP
 * pyramid: each tangential axis decelerated on its own; raisim: under-dissipation, internal
 * forces that saturate the cones at stiction; soft: penetration m g/(n k), creep, its spring-damper
 * restitution). */
#include "test_util.h"

#include "physics_expect.h"

static void test_a3_slide(void **state) {
  pc_check_case(PC_A3);
}
static void test_a4_oblique_slide(void **state) {
  pc_check_case(PC_A4);
}
static void test_a5_incline_slides(void **state) {
  pc_check_case(PC_A5S);
}
static void test_a5_incline_sticks(void **state) {
  pc_check_case(PC_A5K);
}
static void test_a6_pushed_block(void **state) {
  pc_check_case(PC_A6);
}
static void test_a7_bouncing_ball(void **state) {
  pc_check_case(PC_A7);
}
static void test_a8_rolling_sphere(void **state) {
  pc_check_case(PC_A8);
}
static void test_a11_resting_box(void **state) {
  pc_check_case(PC_A11);
}

/* A8 in Δt: the penetration left by the free-flyer's exponential map is one step's sinking,
 * ½ v² Δt²/r, second order (ratio 4 when Δt halves, within 3.6–4.4: v at the last step differs
 * by a Δt), and the speed error (5/7) Δt a³ T⁴/(8 r²) is first order (ratio 1.8–2.2: the next
 * term is O(Δt²)) */
static void test_a8_first_order(void **state) {
  pc_result a, b;
  pc_run_roll("ncp-pgs", 1e-3, 0.5, &a);
  pc_run_roll("ncp-pgs", 5e-4, 0.5, &b);
  assert_true(a.ok && b.ok);
  double qd = a.x[3] / b.x[3], qv = a.err / b.err;
  if (!(qd >= 3.6 && qd <= 4.4 && qv >= 1.8 && qv <= 2.2))
    fail_msg("A8: penetration %.3g / %.3g m (ratio %.3f), speed error %.3g / %.3g m/s (ratio %.3f)",
             a.x[3], b.x[3], qd, a.err, b.err, qv);
}

/* A11, the forces: a box on four corners is hyperstatic, so the per-contact solvers may leave
 * internal tangential forces; physics requires only that they cancel, Σλ_T = 0 (up to the
 * 4 ε_abs of the solver tolerance, ×10 for ccp-newton's compliance), that Σλ_N = m g (the box is
 * at rest), and that each λ lies in the friction cone (the pyramid for the LCP: |λ_tj| ≤ μλ_N,
 * up to ε) */
static void test_a11_forces(void **state) {
  static const char text[] =
      PC_HEAD(0.001, 1.0, 0.1) "bodies:\n"
                               "  - {name: ground, fixed: true, geoms: [{type: halfspace, "
                               "friction: 0.5}]}\n"
                               "  - name: box\n    mass: 2.0\n    position: [0, 0, 0.05]\n"
                               "    geoms: [{type: box, size: [0.4, 0.3, 0.1], friction: 0.5}]\n";
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    if (pc_is(name, "soft")) continue; /* penalty forces: checked by its A11 verdict */
    mr_scene sc;
    mr_sim *s;
    pc_result r;
    if (!pc_open(text, name, &sc, &s, &r)) fail_msg("%s", r.msg);
    for (int k = 0; k < 300; ++k)
      if (!pc_step(s, &r)) fail_msg("%s: %s", name, r.msg);
    const mr_contact *c;
    const double *lam;
    int nc = mr_sim_contacts(s, &c, &lam);
    double sum[3] = {0, 0, 0}, tol = 4e-5;
    for (int j = 0; j < nc; ++j) {
      const double *l = lam + 3 * j;
      double mu = 0.5, lim = pc_is(name, "LCP") ? mu * l[2] * sqrt(2.0) : mu * l[2];
      if (!(hypot(l[0], l[1]) <= lim + 1e-6))
        fail_msg("%s: contact %d outside the cone: λ = (%g, %g, %g)", name, j, l[0], l[1], l[2]);
      for (int d = 0; d < 3; ++d)
        sum[d] += l[d];
    }
    if (nc != 4 || fabs(sum[0]) > tol || fabs(sum[1]) > tol || fabs(sum[2] - 2 * PC_G) > tol)
      fail_msg("%s: %d contacts, Σλ = (%g, %g, %g), m g = %g", name, nc, sum[0], sum[1], sum[2],
               2 * PC_G);
    pc_close(&sc, s, &r, 1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_a3_slide),          cmocka_unit_test(test_a4_oblique_slide),
      cmocka_unit_test(test_a5_incline_slides), cmocka_unit_test(test_a5_incline_sticks),
      cmocka_unit_test(test_a6_pushed_block),   cmocka_unit_test(test_a7_bouncing_ball),
      cmocka_unit_test(test_a8_rolling_sphere), cmocka_unit_test(test_a8_first_order),
      cmocka_unit_test(test_a11_resting_box),   cmocka_unit_test(test_a11_forces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
