/* Stiffness and dissipation of a point contact (docs/physics.md, "Stiffness and dissipation"):
 * a geometry's (or a pair's) stiffness k (N/m) and dissipation time scale τ_d (s) make each
 * contact the spring-damper λ_N = k (−Φ_N − τ_d v_N) of Drake's SAP, discretised with the
 * end-of-step velocity: R_N = 1/(k (Δt + τ_d)), the velocity target −Φ_N/(Δt + τ_d).
 *
 * A box of mass m on four corner contacts moves without rotation (symmetry), so its height
 * z = z_c + Φ obeys, while every contact is closed (K = 4k),
 *   m (v⁺ − v) = Δt (−m g + K (−Φ − (Δt + τ_d) v⁺)),  Φ⁺ = Φ + Δt v⁺     (semi-implicit Euler)
 * a linear recurrence whose fixed point is the static penetration Φ* = −m g / K (each contact
 * carries m g / 4 = k |Φ*|), and which is the discretisation of the damped oscillator
 * m Φ'' + K τ_d Φ' + K Φ = −m g with the extra damping K Δt of the implicit step. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#include "moreau/scene.h"
#include "sim_util.h"

#define DT 1e-3
#define G 9.81
#define MASS 1.0

/* a 0.2 m box of MASS kg resting (Φ = phi0, v_z = v0) on a rigid plane; the box has the
 * stiffness k and dissipation tau; the solver stops at 1e-10 */
static mr_scene box_scene(double k, double tau, double phi0, double v0) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: %g\nduration: 1.0\ncontact: {margin: 0.01}\n"
           "solver: {name: ncp-pgs, eps_abs: 1e-10}\n"
           "bodies:\n"
           "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.5}]}\n"
           "  - name: box\n    mass: %g\n    position: [0, 0, %.17g]\n"
           "    linear_velocity: [0, 0, %.17g]\n"
           "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.5, stiffness: %.17g, "
           "dissipation: %.17g}]\n",
           DT, MASS, 0.1 + phi0, v0, k, tau);
  return tsim_parse(text, ".");
}

/* the recurrence above, one step */
static void recurrence(double K, double tau, double *phi, double *v) {
  double vp = (MASS * *v - MASS * G * DT - DT * K * *phi) / (MASS + DT * K * (DT + tau));
  *v = vp, *phi += DT * vp;
}

/* At rest the box sinks to Φ* = −m g / (4k) per contact share: the solver's compliant problem
 * at v = 0 gives λ_N = −Φ/(R_N (Δt + τ_d)) = −k Φ exactly, so the only error is the solver's
 * (ε = 1e-10 on velocities, Φ within Δt ε ≈ 1e-13 m) and what is left of the transient after
 * 2 s: at K = 4e4 N/m, τ_d = 0.01 s the oscillator is overdamped (ζ = K (Δt + τ_d)/(2 m ω) = 1.1),
 * its slow mode decays as e^{−t/1.1e-2}, nothing left. Tolerance 1e-9 m: 4e-6 of Φ*. */
static void test_rest_penetration(void **state) {
  (void)state;
  const double ks[] = {1e4, 1e5};
  for (int q = 0; q < 2; ++q) {
    double k = ks[q], tau = 0.01;
    mr_scene sc = box_scene(k, tau, 0.0, 0.0);
    mr_sim *s = tsim_create(&sc, NULL);
    tsim_steps(s, 2000);
    double phi = mr_sim_q(s)[2] - 0.1, want = -MASS * G / (4.0 * k);
    print_message("k = %g N/m: penetration %.9e m, m g / (4k) = %.9e m\n", k, phi, want);
    assert_near(phi, want, 1e-9);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* Pressed from the static penetration with v = −0.02 m/s (amplitude ≈ v/ω = 1e-4 m < |Φ*| =
 * 2.45e-4 m: every contact stays closed, the recurrence holds at every step), the box follows
 * the recurrence to the solver's error: 1e-10 on velocities, accumulated over 300 steps of the
 * contracting map to ≤ 300 Δt 1e-10, tolerance 1e-11 m on Φ (measured 5e-17). Then its
 * frequency and decay: the recurrence's eigenvalues e^{(−σ ± iω_d) Δt} against the damped
 * oscillator m Φ'' + c Φ' + K Φ with c = K (τ_d + Δt) (the implicit step's extra damping),
 * ω₀ = √(K/m) = 200 rad/s, σ_c = c/(2m) = 60 1/s. The recurrence's determinant is
 * m/(m + Δt c), so σ = ln(1 + Δt c/m)/(2Δt) = σ_c (1 − σ_c Δt + …): relative error σ_c Δt = 6 %
 * to first order (measured 5.6 %), tolerance 1.1 σ_c Δt; ω_d is first order in ω₀Δt = 0.2 as
 * well (measured 2.4 %), tolerance ω₀Δt/4 = 5 % */
static void test_drop_oscillator(void **state) {
  (void)state;
  const double k = 1e4, K = 4.0 * k, tau = 2e-3;
  double phi = -MASS * G / K, v = -0.02;
  mr_scene sc = box_scene(k, tau, phi, v);
  mr_sim *s = tsim_create(&sc, NULL);
  double emax = 0.0;
  for (int n = 0; n < 300; ++n) {
    tsim_steps(s, 1);
    recurrence(K, tau, &phi, &v);
    emax = fmax(emax, fabs((mr_sim_q(s)[2] - 0.1) - phi));
  }
  print_message("max |Phi_sim - Phi_recurrence| over 300 steps: %.3e m\n", emax);
  assert_true(emax <= 1e-11);
  mr_sim_free(s);
  mr_scene_free(&sc);
  /* the recurrence's matrix on (Φ, v) and its eigenvalues */
  double d = MASS + DT * K * (DT + tau);
  double a21 = -DT * K / d, a22 = MASS / d; /* v⁺ = a21 Φ + a22 v (+ const) */
  double a11 = 1.0 + DT * a21, a12 = DT * a22;
  double tr = a11 + a22, det = a11 * a22 - a12 * a21, disc = tr * tr / 4.0 - det;
  assert_true(disc < 0.0); /* underdamped */
  double modz = sqrt(det), argz = atan2(sqrt(-disc), tr / 2.0);
  double sigma = -log(modz) / DT, wd = argz / DT;
  double w0 = sqrt(K / MASS), c = K * (tau + DT), sig_c = c / (2.0 * MASS);
  double wd_c = sqrt(w0 * w0 - sig_c * sig_c);
  print_message("omega_d %.4f rad/s (continuous %.4f), sigma %.4f 1/s (continuous %.4f)\n", wd,
                wd_c, sigma, sig_c);
  assert_near(wd, wd_c, 0.25 * w0 * DT * wd_c);
  assert_near(sigma, sig_c, 1.1 * sig_c * DT * sig_c);
}

/* the same static depth when the stiffness comes from a material of the box, or from a pair
 * override between two rigid geometries (k alone), or from two geometries in series (k₁ = k₂ =
 * 2k: k₁k₂/(k₁ + k₂) = k); tolerance as test_rest_penetration's */
static void test_material_pair_series(void **state) {
  (void)state;
  const double k = 1e4, want = -MASS * G / (4.0 * k);
  const char *variants[3] = {
      "materials: {soft: {friction: 0.5, stiffness: 1e4, dissipation: 0.01}}\n",
      "pairs: [{between: [floor, cube], stiffness: 1e4, dissipation: 0.01}]\n", ""};
  const char *cube[3] = {"material: soft", "friction: 0.5",
                         "friction: 0.5, stiffness: 2e4, dissipation: 0.005"};
  const char *floor[3] = {"friction: 0.5", "friction: 0.5",
                          "friction: 0.5, stiffness: 2e4, dissipation: 0.005"};
  for (int q = 0; q < 3; ++q) {
    char text[1536];
    snprintf(text, sizeof text,
             "timestep: 0.001\nduration: 1.0\ncontact: {margin: 0.01}\n"
             "solver: {name: ncp-pgs, eps_abs: 1e-10}\n%s"
             "bodies:\n"
             "  - {name: ground, fixed: true, geoms: [{name: floor, type: halfspace, %s}]}\n"
             "  - name: box\n    mass: 1.0\n    position: [0, 0, 0.1]\n"
             "    geoms: [{name: cube, type: box, size: [0.2, 0.2, 0.2], %s}]\n",
             variants[q], floor[q], cube[q]);
    mr_scene sc = tsim_parse(text, ".");
    mr_sim *s = tsim_create(&sc, NULL);
    tsim_steps(s, 2000);
    double phi = mr_sim_q(s)[2] - 0.1;
    print_message("variant %d: penetration %.9e m (m g / (4k) = %.9e m)\n", q, phi, want);
    assert_near(phi, want, 1e-9);
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* the keys: stiffness excludes compliance, dissipation needs stiffness, stiffness > 0; each
 * error names the file, line and value */
static void expect_error(const char *geom, const char *where, const char *what) {
  char text[1024];
  snprintf(text, sizeof text,
           "bodies:\n  - name: b\n    mass: 1\n    geoms: [{type: sphere, radius: 0.1, %s}]\n",
           geom);
  mr_scene sc;
  mr_error err;
  mr_status st = mr_scene_parse(text, "s.yaml", ".", &sc, &err);
  if (st == MR_OK || !strstr(err.msg, where) || !strstr(err.msg, what))
    fail_msg("for '%s': status %d, message '%s' (wanted '%s' and '%s')", geom, st,
             st ? err.msg : "", where, what);
}

static void test_key_errors(void **state) {
  (void)state;
  expect_error("stiffness: 1e4, compliance: 1e-5", "s.yaml:4:", "excludes 'compliance'");
  expect_error("dissipation: 0.01", "s.yaml:4:", "'dissipation': needs 'stiffness', got '0.01'");
  expect_error("stiffness: -5", "s.yaml:4:", "'stiffness': must be a finite number > 0");
  expect_error("stiffness: 1e4, dissipation: -1", "s.yaml:4:", "'dissipation'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rest_penetration),
      cmocka_unit_test(test_drop_oscillator),
      cmocka_unit_test(test_material_pair_series),
      cmocka_unit_test(test_key_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
