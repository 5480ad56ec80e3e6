/* The normal correction in simulation, step by step, for contacts that start in penetration
 * (docs/solvers.md, "The gap correction"; DESIGN.md §4).
 *
 * A ball (radius 0.1 m, 1 kg) over a halfspace, no tangential motion, contact margin 1 mm plus
 * the speculative reach Δt (|v| + g Δt) (mr_collision_set_motion: the ball does not turn),
 * Δt = 1 ms. Its one contact has Φ = z − r (exact for a sphere on a plane) and the normal
 * velocity v_z, so a rigid solver's answer is scalar: λ_N ≥ 0, c_N = v⁺ + cor ≥ 0,
 * λ_N c_N = 0, i.e.
 *     v⁺ = max(v − g Δt, −cor),
 * and semi-implicit Euler moves z by Δt v⁺. The correction cor, computed here from the law
 * and not from the library, with band δ and rest depth d (mr_assembly_settings_default, or the
 * scene's contact.band and contact.rest_depth):
 *   cor = (Φ + d)/Δt                     on the band Φ ≥ −δ,
 *   cor = (−δ + k_B (Φ + δ))/Δt          below it (push-out δ/Δt plus k_B of the excess);
 * and for a contact that carried no normal force last step (new) approaching faster than the
 * restitution threshold, once its free motion closes the gap within the step (Φ ≤ −v_f Δt,
 * v_f = v − g Δt):
 *   cor = e v                            if Φ ≥ 0 (the rebound alone),
 *   cor = k_B Φ/Δt + e v                 if Φ < 0 (an impact that starts in penetration).
 * Each step's v⁺ is predicted from the library's state at the step's start (Φ, v, and whether
 * the contact carried force), so errors do not accumulate; the tolerance is the solver's on one
 * contact, |δv| ≤ ε Δt/m = 1e-9 m/s (ε_abs = 1e-6 N), as in tests/test_restitution.c, plus the
 * round-off of a few operations on velocities up to 5 m/s (1e-14). */
#include "sim_util.h"

#include <string.h>

#include "moreau/assembly.h"

#define DT 1e-3
#define GRAV 9.81
#define MARGIN 1e-3
#define RADIUS 0.1
#define THRESHOLD 0.01

static const char *const solvers[] = {"ncp-pgs", "ccp-admm", "lcp-pgs", "raisim"};

typedef struct {
  double phi0, v0; /* initial gap (m) and vertical velocity (m/s) */
  double kb, e;    /* Baumgarte k_B, restitution */
  int steps;
  double band, rest; /* contact.band and contact.rest_depth (0, 0: the defaults) */
} gap_case;

/* the case's band δ and rest depth d */
static void band_of(const gap_case *c, double *band, double *d) {
  mr_assembly_settings as = mr_assembly_settings_default();
  *band = c->band > 0.0 ? c->band : as.band;
  *d = c->band > 0.0 ? c->rest : as.rest_depth;
}

static mr_scene ball(const gap_case *c) {
  char text[1024];
  double band, d;
  band_of(c, &band, &d);
  snprintf(text, sizeof text,
           "timestep: %g\nduration: 1.0\n"
           "contact: {margin: %g, baumgarte: %.17g, restitution_threshold: %g, band: %.17g, "
           "rest_depth: %.17g}\n"
           "materials:\n  m: {friction: 0.5, restitution: %.17g}\n"
           "bodies:\n"
           "  - {name: ground, fixed: true, geoms: [{type: halfspace, material: m}]}\n"
           "  - name: ball\n    mass: 1.0\n    position: [0, 0, %.17g]\n"
           "    linear_velocity: [0, 0, %.17g]\n"
           "    geoms: [{type: sphere, radius: %g, material: m}]\n",
           DT, MARGIN, c->kb, THRESHOLD, band, d, c->e, RADIUS + c->phi0, c->v0, RADIUS);
  return tsim_parse(text, ".");
}

/* the normal correction of the law above (velocity units) */
static double correction(double phi, double v, int is_new, const gap_case *c) {
  double band, d, vf = v - GRAV * DT;
  band_of(c, &band, &d);
  if (is_new && c->e > 0.0 && v < -THRESHOLD && phi <= -vf * DT)
    return phi >= 0.0 ? c->e * v : c->kb * phi / DT + c->e * v;
  if (phi >= -band) return (phi + d) / DT;
  return (-band + c->kb * (phi + band)) / DT;
}

/* run one case with one solver, checking every step; counts the steps within the margin in
 * each branch of the law: on the band, below it, an impact from above, one in penetration */
static void run_case(const gap_case *c, const char *solver, int branches[4]) {
  mr_scene sc = ball(c);
  mr_sim *s = tsim_create(&sc, solver);
  mr_error err = {0};
  int carried = 0;
  double band, d;
  band_of(c, &band, &d);
  for (int k = 0; k < c->steps; ++k) {
    double phi = mr_sim_q(s)[2] - RADIUS, v = mr_sim_v(s)[2], vf = v - GRAV * DT;
    int is_new = !carried;
    double pred = vf;
    if (phi <= MARGIN + DT * (fabs(v) + GRAV * DT)) {
      pred = fmax(vf, -correction(phi, v, is_new, c));
      int impact = is_new && c->e > 0.0 && v < -THRESHOLD && phi <= -vf * DT;
      branches[impact ? (phi < 0.0 ? 3 : 2) : (phi >= -band ? 0 : 1)]++;
    }
    if (mr_sim_step(s, &err)) fail_msg("%s, step %d: %s", solver, k + 1, err.msg);
    double v1 = mr_sim_v(s)[2];
    if (!(fabs(v1 - pred) <= 1e-9 + 1e-14))
      fail_msg("%s, Φ₀ = %g, v₀ = %g, k_B = %g, e = %g, step %d: Φ = %.9g m, v = %.9g m/s, "
               "%s contact: v⁺ = %.12g m/s, the law gives %.12g m/s",
               solver, c->phi0, c->v0, c->kb, c->e, k + 1, phi, v, is_new ? "new" : "carried", v1,
               pred);
    const mr_contact *con;
    const double *lambda;
    int nc = mr_sim_contacts(s, &con, &lambda);
    carried = nc > 0 && lambda[2] > 0.0;
    /* the ball moves by Δt v⁺ (semi-implicit Euler), to round-off of z ≈ 0.1 m */
    assert_near(mr_sim_q(s)[2] - RADIUS, phi + DT * v1, 1e-15);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* a ball released 5 mm deep: the band's δ/Δt and k_B of the excess push it out and it flies
 * off, falls back and settles at Φ = −d; with k_B = 0 only δ/Δt pushes (10 cm/s), with k_B = 1
 * the whole excess goes in one step; each k_B changes the first push-out */
static void test_released_in_penetration(void **state) {
  const double kbs[] = {0.0, 0.2, 0.5, 1.0};
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i)
    for (size_t j = 0; j < sizeof kbs / sizeof *kbs; ++j) {
      gap_case c = {-5e-3, 0.0, kbs[j], 0.0, 400, 0.0, 0.0};
      int branches[4] = {0, 0, 0, 0};
      run_case(&c, solvers[i], branches);
      /* both branches of the gap law were exercised */
      assert_true(branches[0] > 0 && branches[1] > 0);
    }
}

/* a ball in penetration moving down at 0.5 m/s, restitution 0.5: an impact that starts in
 * penetration rebounds with e|v| plus k_B Φ/Δt, below the band (5 mm deep: up at 1.75 m/s,
 * back after 0.36 s) and on it (50 µm deep, within δ = 0.1 mm); then it lands with an impact
 * from above the surface (rebound alone) and bounces down towards rest */
static void test_impact_in_penetration(void **state) {
  const double depths[] = {-5e-3, -5e-5};
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i)
    for (size_t j = 0; j < 2; ++j) {
      gap_case c = {depths[j], -0.5, 0.3, 0.5, 800, 0.0, 0.0};
      int branches[4] = {0, 0, 0, 0};
      run_case(&c, solvers[i], branches);
      assert_true(branches[2] > 0 && branches[3] > 0);
    }
}

/* the scene's contact.band and contact.rest_depth reach the law: a 2 mm band and a 0.5 mm rest
 * depth, released 5 mm deep, push out at δ/Δt = 2 m/s plus k_B of the excess, and the ball
 * settles at Φ = −d (to the solver's tolerance over the last steps: ε Δt²/m per step) */
static void test_band_and_rest_depth(void **state) {
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i) {
    gap_case c = {-5e-3, 0.0, 0.2, 0.0, 1500, 2e-3, 5e-4};
    int branches[4] = {0, 0, 0, 0};
    run_case(&c, solvers[i], branches);
    assert_true(branches[0] > 0 && branches[1] > 0);
  }
  /* at rest: Φ = −d */
  gap_case c = {-5e-4, 0.0, 0.0, 0.0, 200, 2e-3, 5e-4};
  mr_scene sc = ball(&c);
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, 200);
  assert_near(mr_sim_q(s)[2] - RADIUS, -5e-4, 1e-9);
  mr_sim_free(s);
  mr_scene_free(&sc);
  /* a rest depth beyond the band is refused, naming the line */
  mr_scene bad;
  mr_error err = {0};
  assert_int_equal(
      mr_scene_parse("contact: {band: 1e-4, rest_depth: 1e-3}\n", "bad.yaml", ".", &bad, &err),
      MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "bad.yaml:1:"));
  assert_non_null(strstr(err.msg, "'rest_depth': must be in [0, band"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_released_in_penetration),
      cmocka_unit_test(test_impact_in_penetration),
      cmocka_unit_test(test_band_and_rest_depth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
