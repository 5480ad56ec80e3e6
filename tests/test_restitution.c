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

/* ---- impacts beside resting contacts ---- */

/* A body resting on a floor (friction mu, no restitution) moving at 1 m/s along +x into a wall
 * (restitution e, frictionless) 0.05 m ahead of it, or (bodies > 1) into a row of bodies 0.05 m
 * ahead, centres 0.1 m apart (touching), resting on the floor;
 * geoms is the YAML flow list of each moving body's geometry. The impact law acts on the wall's
 * (or the struck body's) normal rows only: a rebound is what it demands of a velocity, not a
 * push-out to be shared with the floor, and a frictionless floor constrains no tangential
 * motion. */
static mr_scene impact_scene(const char *geom, double mu, double e, double dt, int bodies) {
  char text[2048];
  int k = snprintf(text, sizeof text,
                   "timestep: %.17g\n"
                   "bodies:\n"
                   "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: %.17g}]}\n"
                   "  - {name: a, mass: 1.0, position: [0, 0, 0.05], linear_velocity: [1, 0, 0],\n"
                   "     geoms: [%s]}\n",
                   dt, mu, geom);
  if (bodies == 1)
    snprintf(text + k, sizeof text - (size_t)k,
             "  - {name: wall, fixed: true, geoms: [{name: wallgeom, type: halfspace, "
             "normal: [-1, 0, 0], offset: -0.1, friction: 0}]}\n"
             "pairs:\n  - {between: [a, wallgeom], restitution: %.17g}\n",
             e);
  else
    for (int b = 1; b < bodies; ++b)
      k += snprintf(text + k, sizeof text - (size_t)k,
                    "  - {name: b%d, mass: 1.0, position: [%.17g, 0, 0.05], geoms: [%s]}\n", b,
                    0.1 * b + 0.05, geom);
  if (bodies > 1) {
    k += snprintf(text + k, sizeof text - (size_t)k,
                  "pairs:\n  - {between: [a, b1], restitution: %.17g, friction: 0}\n", e);
    for (int b = 2; b < bodies; ++b)
      k += snprintf(text + k, sizeof text - (size_t)k,
                    "  - {between: [b%d, b%d], restitution: %.17g, friction: 0}\n", b - 1, b, e);
  }
  return tsim_parse(text, ".");
}

/* steps until body 1's x velocity falls below `below` (the impact step), at most 1 s */
static long impact_step(mr_sim *s, double below, double *v_before) {
  for (long k = 0; k < 100000 && mr_sim_time(s) < 1.0; ++k) {
    *v_before = mr_sim_v(s)[0];
    tsim_steps(s, 1);
    if (mr_sim_v(s)[0] < below) return k;
  }
  fail_msg("no impact within 1 s");
  return -1;
}

/* the largest |v| of the body's dofs from iv other than its x velocity: vertical, sideways and
 * angular (times a 5 cm lever) */
static double off_axis(const mr_sim *s, int iv) {
  const double *v = mr_sim_v(s);
  double w = 0.0;
  for (int k = 1; k < 6; ++k)
    w = fmax(w, fabs(v[iv + k]) * (k < 3 ? 1.0 : 0.05));
  return w;
}

static const char *impact_solvers[] = {NULL, "ncp-pgs", "ncp-admm", "ncp-stagproj"};
#define SPHERE "{type: sphere, radius: 0.05, friction: 0}"
#define CUBE "{type: box, size: [0.1, 0.1, 0.1], friction: 0}"

/* Into a wall, on a frictionless floor (a ball and a cube) and on a μ 0.3 floor (a cube): the
 * step that closes the wall's gap ends with v_x = −e v_x⁻ exactly (the wall's rows active, c_N
 * = 0: even the floor's friction over that step is taken up by the wall), and nothing else
 * moves: the velocity within the solver's tolerance, 4 nc ε Δt / m for nc ≤ 8 contacts at
 * ε = 1e-6 N (3.2e-8 m/s at Δt = 10 ms). The former law projected the rebound with the floor's
 * push-out: the ball came back at −0.5 m/s at e = 1, the cube at −0.25 spinning at 5 rad/s. */
static void test_rebound_off_a_wall(void **state) {
  const char *geoms[] = {SPHERE, CUBE, "{type: box, size: [0.1, 0.1, 0.1], friction: 0.3}"};
  const double es[] = {0.25, 0.5, 0.75, 1.0}, dts[] = {1e-3, 5e-3, 1e-2};
  for (size_t si = 0; si < sizeof impact_solvers / sizeof *impact_solvers; ++si)
    for (size_t gi = 0; gi < 3; ++gi)
      for (size_t ei = 0; ei < 4; ++ei)
        for (size_t di = 0; di < 3; ++di) {
          mr_scene sc = impact_scene(geoms[gi], gi == 2 ? 0.3 : 0.0, es[ei], dts[di], 1);
          mr_sim *s = tsim_create(&sc, impact_solvers[si]);
          double vb, tol = 4.0 * 8.0 * 1e-6 * dts[di] / 1.0;
          impact_step(s, 0.0, &vb);
          double va = mr_sim_v(s)[0], off = off_axis(s, 0);
          if (!(fabs(va + es[ei] * vb) <= tol && off <= tol))
            fail_msg("%s, geometry %zu, e %g, dt %g: v %.12g after %.12g (expected %.12g), "
                     "off-axis %.3g (tolerance %.3g)",
                     impact_solvers[si] ? impact_solvers[si] : sc.solver, gi, es[ei], dts[di], va,
                     vb, -es[ei] * vb, off, tol);
          mr_sim_free(s);
          mr_scene_free(&sc);
        }
}

/* Two equal cubes and two equal balls on a frictionless floor, the second at rest: Newton's law
 * with momentum conservation, v_a = (1 − e)/2 v, v_b = (1 + e)/2 v; three balls, the last two
 * touching at rest: that resting contact carries no impact, so they take the blow as one body
 * of mass 2: v_a = (1 − 2e)/3 v, v_b = v_c = (1 + e)/3 v (a Newton's cradle needs impacts in
 * sequence, which a velocity-level step does not resolve). Nothing leaves the floor (the former
 * law launched the middle ball upwards). Tolerance as above, per body. */
static void test_rebound_between_bodies(void **state) {
  const double es[] = {0.25, 0.5, 1.0}, dts[] = {1e-3, 1e-2};
  for (size_t si = 0; si < sizeof impact_solvers / sizeof *impact_solvers; ++si)
    for (int n = 2; n <= 3; ++n)
      for (int cube = 0; cube <= (n == 2); ++cube)
        for (size_t ei = 0; ei < 3; ++ei)
          for (size_t di = 0; di < 2; ++di) {
            mr_scene sc = impact_scene(cube ? CUBE : SPHERE, 0.0, es[ei], dts[di], n);
            mr_sim *s = tsim_create(&sc, impact_solvers[si]);
            double vb, e = es[ei], tol = 4.0 * 8.0 * 1e-6 * dts[di] / 1.0;
            impact_step(s, 0.99, &vb);
            double expect[3] = {(1 - e) / 2 * vb, (1 + e) / 2 * vb, 0.0};
            if (n == 3)
              expect[0] = (1 - 2 * e) / 3 * vb, expect[1] = expect[2] = (1 + e) / 3 * vb;
            for (int b = 0; b < n; ++b) {
              double vx = mr_sim_v(s)[6 * b], off = off_axis(s, 6 * b);
              if (!(fabs(vx - expect[b]) <= tol && off <= tol))
                fail_msg("%s, %d %s, e %g, dt %g: body %d at %.12g (expected %.12g), off-axis "
                         "%.3g (tolerance %.3g)",
                         impact_solvers[si] ? impact_solvers[si] : sc.solver, n,
                         cube ? "cubes" : "balls", e, dts[di], b, vx, expect[b], off, tol);
            }
            mr_sim_free(s);
            mr_scene_free(&sc);
          }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rebound_every_speed),
      cmocka_unit_test(test_no_rebound_below_threshold),
      cmocka_unit_test(test_rebound_off_a_wall),
      cmocka_unit_test(test_rebound_between_bodies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
