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
 * v_f = v − g Δt), an impact:
 *   cor = (Φ + d)/Δt as above            if Φ > 0 (it lands on the surface, and defers the
 *                                        rebound w = max(0, e u − g Δt/2) to the next step,
 *                                        u = √((v − g Δt/2)² + 2 g Φ) the speed at which the
 *                                        step's free motion reaches the surface),
 *   cor = k_B Φ/Δt + e v                 if Φ ≤ 0 (at once, an impact that starts in
 *                                        penetration);
 * and in the step after a landing with w > 0, the contact carrying force (or its gap closed):
 *   cor = min(0, k_B Φ/Δt) − w           (it leaves at w).
 * A carried contact takes no restitution even while it still approaches (the step after a
 * plastic landing, test_carried_contact_no_rebound).
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
  double threshold;  /* contact.restitution_threshold (0: THRESHOLD) */
} gap_case;

static double threshold_of(const gap_case *c) {
  return c->threshold > 0.0 ? c->threshold : THRESHOLD;
}

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
           DT, MARGIN, c->kb, threshold_of(c), band, d, c->e, RADIUS + c->phi0, c->v0, RADIUS);
  return tsim_parse(text, ".");
}

/* whether the law above decides an impact: a new contact approaching faster than the threshold
 * whose free motion closes the gap within the step */
static int impact_law(double phi, double v, int is_new, const gap_case *c) {
  return is_new && c->e > 0.0 && v < -threshold_of(c) && phi <= -(v - GRAV * DT) * DT;
}

/* the rebound an impact decided at Φ > 0 defers to the next step (m/s) */
static double deferred_law(double phi, double v, const gap_case *c) {
  double vc = v - GRAV * DT / 2.0, u = sqrt(vc * vc + 2.0 * GRAV * phi);
  return fmax(c->e * u - GRAV * DT / 2.0, 0.0);
}

/* the normal correction of the law above (velocity units); w the rebound deferred to this step
 * (0: none) */
static double correction(double phi, double v, int is_new, double w, const gap_case *c) {
  double band, d;
  band_of(c, &band, &d);
  if (w > 0.0 && (!is_new || phi <= 1e-6 * w * DT)) return fmin(0.0, c->kb * phi / DT) - w;
  if (impact_law(phi, v, is_new, c) && phi <= 0.0)
    return phi >= 0.0 ? c->e * v : c->kb * phi / DT + c->e * v;
  if (phi >= -band) return (phi + d) / DT;
  return (-band + c->kb * (phi + band)) / DT;
}

/* run one case with one solver, checking every step; counts the steps within the margin in
 * each branch of the law: on the band, below it, a landing from above (the impact deferred),
 * one in penetration, a deferred rebound */
static void run_case(const gap_case *c, const char *solver, int branches[5]) {
  mr_scene sc = ball(c);
  mr_sim *s = tsim_create(&sc, solver);
  mr_error err = {0};
  int carried = 0;
  double band, d, w = 0.0;
  band_of(c, &band, &d);
  for (int k = 0; k < c->steps; ++k) {
    double phi = mr_sim_q(s)[2] - RADIUS, v = mr_sim_v(s)[2], vf = v - GRAV * DT;
    int is_new = !carried;
    double pred = vf, w_next = 0.0;
    if (phi <= MARGIN + DT * (fabs(v) + GRAV * DT)) {
      pred = fmax(vf, -correction(phi, v, is_new, w, c));
      int impact = impact_law(phi, v, is_new, c), rebound = correction(phi, v, is_new, w, c) < 0.0;
      if (impact && phi > 0.0) w_next = deferred_law(phi, v, c);
      branches[rebound && w > 0.0 ? 4 : impact ? (phi > 0.0 ? 2 : 3) : (phi >= -band ? 0 : 1)]++;
    }
    if (mr_sim_step(s, &err)) fail_msg("%s, step %d: %s", solver, k + 1, err.msg);
    double v1 = mr_sim_v(s)[2];
    if (!(fabs(v1 - pred) <= 1e-9 + 1e-14))
      fail_msg("%s, Φ₀ = %g, v₀ = %g, k_B = %g, e = %g, step %d: Φ = %.9g m, v = %.9g m/s, "
               "%s contact, rebound %.9g m/s: v⁺ = %.12g m/s, the law gives %.12g m/s",
               solver, c->phi0, c->v0, c->kb, c->e, k + 1, phi, v, is_new ? "new" : "carried", w,
               v1, pred);
    const mr_contact *con;
    const double *lambda;
    int nc = mr_sim_contacts(s, &con, &lambda);
    carried = nc > 0 && lambda[2] > 0.0;
    w = w_next;
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
      gap_case c = {-5e-3, 0.0, kbs[j], 0.0, 400, 0.0, 0.0, 0.0};
      int branches[5] = {0, 0, 0, 0, 0};
      run_case(&c, solvers[i], branches);
      /* both branches of the gap law were exercised */
      assert_true(branches[0] > 0 && branches[1] > 0);
    }
}

/* a ball in penetration moving down at 0.5 m/s, restitution 0.5: an impact that starts in
 * penetration rebounds with e|v| plus k_B Φ/Δt, below the band (5 mm deep: up at 1.75 m/s,
 * back after 0.36 s) and on it (50 µm deep, within δ = 0.1 mm); then it lands from above the
 * surface, rebounds in the next step, and bounces down towards rest */
static void test_impact_in_penetration(void **state) {
  const double depths[] = {-5e-3, -5e-5};
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i)
    for (size_t j = 0; j < 2; ++j) {
      gap_case c = {depths[j], -0.5, 0.3, 0.5, 800, 0.0, 0.0, 0.0};
      int branches[5] = {0, 0, 0, 0, 0};
      run_case(&c, solvers[i], branches);
      assert_true(branches[2] > 0 && branches[3] > 0 && branches[4] > 0);
    }
}

/* a ball released at rest 5 µm above the floor (one step's fall is g Δt² = 9.8 µm), restitution
 * 0.5, threshold 1 mm/s: the step that closes the gap starts at rest, below the threshold, so it
 * lands plastically at −(Φ + d)/Δt = −5 mm/s; in the next step the contact, carried, still
 * approaches faster than the threshold but takes no restitution: the ball stays */
static void test_carried_contact_no_rebound(void **state) {
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i) {
    gap_case c = {5e-6, 0.0, 0.0, 0.5, 50, 0.0, 0.0, 1e-3};
    int branches[5] = {0, 0, 0, 0, 0};
    run_case(&c, solvers[i], branches);
    assert_true(branches[0] == 50 && branches[2] == 0 && branches[4] == 0);
  }
}

/* the scene's contact.band and contact.rest_depth reach the law: a 2 mm band and a 0.5 mm rest
 * depth, released 5 mm deep, push out at δ/Δt = 2 m/s plus k_B of the excess, and the ball
 * settles at Φ = −d (to the solver's tolerance over the last steps: ε Δt²/m per step) */
static void test_band_and_rest_depth(void **state) {
  for (size_t i = 0; i < sizeof solvers / sizeof *solvers; ++i) {
    gap_case c = {-5e-3, 0.0, 0.2, 0.0, 1500, 2e-3, 5e-4, 0.0};
    int branches[5] = {0, 0, 0, 0, 0};
    run_case(&c, solvers[i], branches);
    assert_true(branches[0] > 0 && branches[1] > 0);
  }
  /* at rest: Φ = −d */
  gap_case c = {-5e-4, 0.0, 0.0, 0.0, 200, 2e-3, 5e-4, 0.0};
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
      cmocka_unit_test(test_carried_contact_no_rebound),
      cmocka_unit_test(test_band_and_rest_depth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
