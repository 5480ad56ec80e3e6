/* Restitution at every impact speed: Newton's law v⁺_N = −e v⁻_N at the step in which a
 * contact's gap closes, whether the contact appeared in that step or earlier within the margin.
 *
 * A ball of radius 0.1 m dropped from h onto a halfspace, contact margin 1 mm, Δt = 1 ms: the
 * contact enters the problem as soon as Φ ≤ 1 mm, i.e. one step before the gap closes whenever
 * the impact speed is below margin/Δt = 1 m/s. The step that closes the gap imposes
 * c_N = v⁺_N + e v_N ≥ 0 with v_N the normal velocity at the start of that step, so the ball
 * leaves with exactly v⁺ = e |v_N|; the step before imposes only the gap term and leaves the
 * ball in free fall. Closed-form checks:
 * - the rebound velocity is e times the velocity at the start of the closing step, to the
 *   solver's tolerance: ε_abs = 1e-6 N on λ/Δt gives |δv| ≤ ε Δt / m = 1e-9 m/s (round-off of
 *   forces up to m v/Δt = 4.4e3 N adds 4.4 m/s · 1e-15, below that);
 * - the approach speed is the discrete fall's: the closing step k + 1 has
 *   g Δt² k(k+1)/2 < h ≤ g Δt² (k+1)(k+2)/2 and starts at |v| = g Δt k, which lies in
 *   [√(2gh) − 1.5 g Δt, √(2gh)];
 * - until the closing step the ball falls freely: v_k = −g Δt k (semi-implicit Euler), to
 *   round-off;
 * - below the threshold speed (0.01 m/s) the ball does not rebound. */
#include "sim_util.h"

#include <string.h>

static const char *solvers[] = {"ncp-pgs",   "ncp-admm", "ncp-stagproj", "raisim",
                                "raisim-ds", "ccp-pgs",  "ccp-admm",     "lcp-pgs"};

/* the ball scene with drop height h above touch and restitution e */
static mr_scene ball_scene(double h, double e) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 1.0\n"
           "contact: {margin: 0.001, baumgarte: 0.0, restitution_threshold: 0.01}\n"
           "materials:\n  bouncy: {friction: 0.5, restitution: %.17g}\n"
           "bodies:\n"
           "  - name: ground\n    fixed: true\n    geoms:\n"
           "      - {type: halfspace, material: bouncy}\n"
           "  - name: ball\n    mass: 1.0\n    position: [0, 0, %.17g]\n    geoms:\n"
           "      - {type: sphere, radius: 0.1, material: bouncy}\n",
           e, 0.1 + h);
  return tsim_parse(text, ".");
}

/* step until the ball first moves up; *v_before is the vertical velocity at the start of that
 * step and *v_after after it; checks free fall before it */
static void first_rebound(mr_sim *s, double *v_before, double *v_after) {
  mr_error err = {0};
  const double g = 9.81, dt = 0.001;
  for (long k = 0; k < 1000; ++k) {
    double vz = mr_sim_v(s)[2];
    if (mr_sim_step(s, &err)) fail_msg("step %ld: %s", k + 1, err.msg);
    double vz1 = mr_sim_v(s)[2];
    if (vz1 > 0.0) {
      *v_before = vz, *v_after = vz1;
      return;
    }
    /* free fall until the closing step: v = −g Δt (k + 1) to round-off */
    if (vz1 < -1e-12) assert_near(vz1, -g * dt * (double)(k + 1), 1e-12 * (k + 1));
  }
  *v_before = *v_after = 0.0;
}

/* rebound = e × approach at impact speeds from 4.4 m/s down to 0.07 m/s, every solver */
static void test_rebound_every_speed(void **state) {
  (void)state;
  const double heights[] = {1.0, 0.2, 0.03, 0.01, 0.002, 3e-4};
  const double es[] = {0.5, 0.8};
  for (size_t si = 0; si < sizeof solvers / sizeof *solvers; ++si)
    for (size_t hi = 0; hi < sizeof heights / sizeof *heights; ++hi)
      for (size_t ei = 0; ei < 2; ++ei) {
        mr_scene sc = ball_scene(heights[hi], es[ei]);
        mr_sim *s = tsim_create(&sc, solvers[si]);
        double vb, va;
        first_rebound(s, &vb, &va);
        double vf = sqrt(2.0 * 9.81 * heights[hi]);
        if (!(-vb <= vf && -vb >= vf - 1.5 * 9.81 * 1e-3))
          fail_msg("%s, h = %g: approach %.9g m/s, discrete fall gives [%.9g, %.9g]", solvers[si],
                   heights[hi], vb, -vf, -(vf - 1.5 * 9.81e-3));
        if (fabs(va + es[ei] * vb) > 1e-9)
          fail_msg("%s, h = %g, e = %g: rebound %.12g m/s, expected e·|v| = %.12g m/s", solvers[si],
                   heights[hi], es[ei], va, -es[ei] * vb);
        mr_sim_free(s);
        mr_scene_free(&sc);
      }
}

/* an approach slower than the threshold does not rebound */
static void test_no_rebound_below_threshold(void **state) {
  (void)state;
  /* dropped from 2e-6 m: v = √(2 g h) ≈ 0.006 m/s < 0.01 m/s */
  mr_scene sc = ball_scene(2e-6, 0.8);
  mr_sim *s = tsim_create(&sc, "ncp-pgs");
  tsim_steps(s, 200);
  double vmax = 0.0;
  for (int k = 0; k < 200; ++k) {
    tsim_steps(s, 1);
    vmax = fmax(vmax, mr_sim_v(s)[2]);
  }
  assert_true(vmax <= 1e-9);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rebound_every_speed),
      cmocka_unit_test(test_no_rebound_below_threshold),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
