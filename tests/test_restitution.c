/* Restitution at every impact speed: Newton's law v⁺_N = −e v⁻_N, with v⁻_N the speed at which
 * the contact reaches its surface, and the deferred rebound of docs/physics.md.
 *
 * A ball of radius 0.1 m dropped from rest at h above touch onto a halfspace, contact margin
 * 1 mm plus the speculative reach, Δt = 1, 5, 10 ms. Semi-implicit Euler from rest puts the
 * ball at z_n = h − g Δt² n(n+1)/2: exact samples at t = n Δt of the parabola
 * h + g Δt²/8 − g (t + Δt/2)²/2, whose apex is H = h + g Δt²/8 and which reaches the surface at
 * u = √(2 g H). The impact is decided in the step whose free motion closes the gap, still open
 * (Φ > 0); that step lands the ball on the surface (at −d, d = 1e-12 m the rest depth) and the
 * next leaves it at w = e u − g Δt/2, so that the positions from the landing on are samples of
 * the parabola launched from the surface at e u: its apex is e² H − d, and the largest sample
 * lies within g Δt²/8 below it (the samples' spacing around the apex). Closed-form checks:
 * - until the landing step the ball falls freely: v_k = −g Δt k, to round-off;
 * - the first apex lies in [e² H − d − g Δt²/8, e² H − d], widened by the solver's tolerance:
 *   ε_abs = 1e-6 N on λ gives |δv| ≤ ε Δt/m per step, 1e-8 m/s at 10 ms, which moves the apex
 *   by at most (w/g) δv + Δt δv ≤ 1e-8 m (w ≤ 4.5 m/s), and the round-off of positions near
 *   1 m over 1000 steps (1e-12 m): tolerance 2e-8 m;
 * - the apex comes at most one step late: the ball leaves the surface at the end of the landing
 *   step, t_l, while the exact bounce is at some t in (t_l − Δt, t_l]; the largest sample is
 *   within Δt/2 of its parabola's apex, so the apex time lies in [t_b + e u/g − Δt/2,
 *   t_b + e u/g + 3Δt/2], t_b = √(2H/g) − Δt/2 the exact bounce;
 * - below the threshold speed (0.01 m/s) the ball does not rebound. */
#include "sim_util.h"

#include <string.h>

static const char *solvers[] = {"ncp-pgs",   "ncp-admm", "ncp-stagproj", "raisim",
                                "raisim-ds", "ccp-pgs",  "ccp-admm",     "lcp-pgs"};

#define GRAV 9.81

/* the ball scene with drop height h above touch, restitution e, time step dt, floor friction
 * mu and horizontal velocity vx */
static mr_scene ball_scene_at(double h, double e, double dt, double mu, double vx) {
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: %.17g\nduration: 1.0\n"
           "contact: {margin: 0.001, baumgarte: 0.0, restitution_threshold: 0.01}\n"
           "materials:\n  bouncy: {friction: %.17g, restitution: %.17g}\n"
           "bodies:\n"
           "  - name: ground\n    fixed: true\n    geoms:\n"
           "      - {type: halfspace, material: bouncy}\n"
           "  - name: ball\n    mass: 1.0\n    position: [0, 0, %.17g]\n"
           "    linear_velocity: [%.17g, 0, 0]\n    geoms:\n"
           "      - {type: sphere, radius: 0.1, material: bouncy}\n",
           dt, mu, e, 0.1 + h, vx);
  return tsim_parse(text, ".");
}

static mr_scene ball_scene(double h, double e) {
  return ball_scene_at(h, e, 0.001, 0.5, 0.0);
}

/* the world velocity of a free body from its Pinocchio velocity (body frame) and quaternion */
static mr_vec3 world_velocity(const mr_sim *s) {
  const double *q = mr_sim_q(s) + 3, *v = mr_sim_v(s);
  mr_vec3 u = mr_v3(q[0], q[1], q[2]), x = mr_v3(v[0], v[1], v[2]);
  mr_vec3 t = mr_v3_scale(mr_v3_cross(u, x), 2.0);
  return mr_v3_add(mr_v3_add(x, mr_v3_scale(t, q[3])), mr_v3_cross(u, t));
}

/* the first apex after the first bounce: its height above touch and time (the last rising
 * sample; the resting height when the ball does not rise within 10 steps of landing), and the
 * gap and vertical velocity at the start of the landing step (the first step with a contact
 * force); checks free fall
 * before the landing */
static void first_apex(mr_sim *s, double dt, double *apex, double *t_apex, double *phi,
                       double *vn) {
  mr_error err = {0};
  long landed = -1;
  int rising = 0;
  for (long k = 0; k < 100000; ++k) {
    if (landed < 0) *phi = mr_sim_q(s)[2] - 0.1, *vn = world_velocity(s).v[2];
    if (mr_sim_step(s, &err)) fail_msg("step %ld: %s", k + 1, err.msg);
    double z = mr_sim_q(s)[2] - 0.1, vz = world_velocity(s).v[2];
    const mr_contact *con;
    const double *lambda;
    int nc = mr_sim_contacts(s, &con, &lambda);
    if (landed < 0 && !(nc > 0 && lambda[2] > 0.0)) {
      assert_near(vz, -GRAV * dt * (double)(k + 1), 1e-12 * (k + 1));
      continue;
    }
    if (landed < 0) landed = k;
    if (vz > 1e-8) { /* above the solver's velocity noise at rest, ε Δt/m */
      rising = 1, *apex = z, *t_apex = mr_sim_time(s);
      continue;
    }
    if (rising) return;
    *apex = z, *t_apex = mr_sim_time(s);
    if (k - landed > 10) return;
  }
  fail_msg("no apex in 1e5 steps (landed at step %ld, z %.9g)", landed, mr_sim_q(s)[2] - 0.1);
}

/* the first apex is e² H (H = h + g Δt²/8) within the samples' g Δt²/8, one step late at most,
 * at drop heights from 1 m to 0.3 mm (impact speeds 4.4 to 0.077 m/s), e from 0.25 to 1, every
 * solver and Δt 1–10 ms (heights whose fall lasts one step are left out: the closing step then
 * starts at rest, below the threshold, and lands plastically) */
static void test_apex_every_height(void **state) {
  (void)state;
  const double heights[] = {1.0, 0.2, 0.03, 0.005, 0.002, 3e-4};
  const double es[] = {0.25, 0.5, 0.8, 1.0}, dts[] = {1e-3, 5e-3, 1e-2};
  const double d = 1e-12, tol = 2e-8;
  for (size_t si = 0; si < sizeof solvers / sizeof *solvers; ++si)
    for (size_t hi = 0; hi < sizeof heights / sizeof *heights; ++hi)
      for (size_t ei = 0; ei < 4; ++ei)
        for (size_t di = 0; di < 3; ++di) {
          double h = heights[hi], e = es[ei], dt = dts[di];
          if (!(h > GRAV * dt * dt)) continue;
          mr_scene sc = ball_scene_at(h, e, dt, 0.5, 0.0);
          mr_sim *s = tsim_create(&sc, solvers[si]);
          double apex, t_apex, phi, vn, H = h + GRAV * dt * dt / 8.0, u = sqrt(2.0 * GRAV * H);
          first_apex(s, dt, &apex, &t_apex, &phi, &vn);
          double hi_b = e * e * H - d, lo_b = hi_b - GRAV * dt * dt / 8.0;
          if (!(apex >= lo_b - tol && apex <= hi_b + tol))
            fail_msg("%s, h = %g, e = %g, dt = %g: apex %.12g m, closed form [%.12g, %.12g] m",
                     solvers[si], h, e, dt, apex, lo_b, hi_b);
          /* the timing, when it rebounds at all (e u above the half step's g Δt/2) */
          double tb = sqrt(2.0 * H / GRAV) - dt / 2.0, tc = tb + e * u / GRAV;
          if (e * u > GRAV * dt / 2.0 &&
              !(t_apex >= tc - dt / 2.0 - 1e-9 && t_apex <= tc + 1.5 * dt + 1e-9))
            fail_msg("%s, h = %g, e = %g, dt = %g: apex at %.9g s, closed form %.9g s", solvers[si],
                     h, e, dt, t_apex, tc);
          mr_sim_free(s);
          mr_scene_free(&sc);
        }
}

/* On a frictional floor (μ 0.5) a ball thrown at v₀ = 1 m/s along x: the normal dynamics of a
 * sphere on a plane do not see the friction (the normal passes through the centre), so the apex
 * is e² H as above. The friction makes it roll. In the landing step the contact, found at the
 * gap Φ (the ball's height above touch at that step's start, falling at v), sits halfway across
 * the gap, at the lever ℓ = r + Φ/2 below the centre, and its normal impulse only stops the
 * fall at the surface, N₁ = m (g Δt − v − Φ/Δt) (d neglected): sticking there gives v₁ = ω₁ ℓ
 * with m (v₀ − v₁) ℓ = I ω₁ (I = (2/5) m r²), when m (v₀ − v₁) ≤ μ N₁; otherwise it slides,
 * v₁ = v₀ − μ N₁/m, ω₁ = μ N₁ ℓ/I. In the rebound step (normal impulse above m w) it sticks at
 * the lever r: the angular momentum about that point is kept, (7/5) m r v₂ = m r v₁ + I ω₁
 * ((5/7) v₀ when Φ = 0; 1.2e-3 relative above it at Φ = 0.85 mm). Tolerance: the solver's on
 * the two steps' tangential rows, 2 ε Δt (1/m + r²/I) = 7e-8 m/s at Δt = 10 ms. */
static void test_apex_frictional_floor(void **state) {
  (void)state;
  const char *names[] = {"ncp-pgs", "ncp-admm", "ncp-stagproj", NULL};
  const double dts[] = {1e-3, 5e-3, 1e-2}, h = 0.2, e = 0.5, d = 1e-12, tol = 2e-8, r = 0.1;
  for (size_t si = 0; si < sizeof names / sizeof *names; ++si)
    for (size_t di = 0; di < 3; ++di) {
      double dt = dts[di];
      mr_scene sc = ball_scene_at(h, e, dt, 0.5, 1.0);
      mr_sim *s = tsim_create(&sc, names[si]);
      double apex, t_apex, phi, vn, H = h + GRAV * dt * dt / 8.0;
      first_apex(s, dt, &apex, &t_apex, &phi, &vn);
      double hi_b = e * e * H - d, lo_b = hi_b - GRAV * dt * dt / 8.0;
      const char *name = names[si] ? names[si] : sc.solver;
      if (!(apex >= lo_b - tol && apex <= hi_b + tol))
        fail_msg("%s, dt = %g: apex %.12g m, closed form [%.12g, %.12g] m", name, dt, apex, lo_b,
                 hi_b);
      double l = r + phi / 2.0, inertia = 0.4 * r * r, mu = 0.5;
      double n1 = GRAV * dt - vn - phi / dt, v1 = 1.0 / (1.0 + inertia / (l * l)), w1 = v1 / l;
      if (1.0 - v1 > mu * n1) v1 = 1.0 - mu * n1, w1 = mu * n1 * l / inertia;
      double v2 = 5.0 / 7.0 * (v1 + inertia * w1 / r);
      mr_vec3 vw = world_velocity(s);
      double tolv = 2.0 * 1e-6 * dt * (1.0 + 2.5) + 1e-12;
      if (!(fabs(vw.v[0] - v2) <= tolv && fabs(vw.v[1]) <= tolv))
        fail_msg("%s, dt = %g: horizontal velocity (%.12g, %.3g) m/s, landing from the gap "
                 "%.6g m gives %.12g m/s",
                 name, dt, vw.v[0], vw.v[1], phi, v2);
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

/* whether a contact with a normal along x (the wall's, or between the bodies) carries force */
static int x_contact_pushes(const mr_sim *s) {
  const mr_contact *con;
  const double *lambda;
  int nc = mr_sim_contacts(s, &con, &lambda);
  for (int i = 0; i < nc; ++i)
    if (fabs(con[i].frame.m[0][2]) > 0.5 && lambda[3 * i + 2] > 0.0) return 1;
  return 0;
}

/* steps through the impact, at most 1 s: until a contact along x first carries force (the
 * impact decided in penetration, or the landing of one decided at a gap), *v_before the first
 * body's x velocity at the start of that step; after a landing (the first body still closing
 * on the second, v_a − v_b ≥ 0, or on the wall, v_a ≥ 0) one step more, the rebound */
static void impact(mr_sim *s, int bodies, double *v_before) {
  for (long k = 0; k < 100000 && mr_sim_time(s) < 1.0; ++k) {
    *v_before = mr_sim_v(s)[0];
    tsim_steps(s, 1);
    if (!x_contact_pushes(s)) continue;
    const double *v = mr_sim_v(s);
    if (v[0] - (bodies > 1 ? v[6] : 0.0) >= 0.0) tsim_steps(s, 1);
    return;
  }
  fail_msg("no impact within 1 s");
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
 * rebound step (the step that closes the wall's gap when it starts closed, else the step after
 * the one that lands on the wall: no acceleration along the wall's normal, so w = e u = e v_x⁻,
 * v_x⁻ at the start of the landing step) ends with v_x = −e v_x⁻ exactly (the wall's rows
 * active, c_N = 0: even the floor's friction over that step is taken up by the wall), and
 * nothing else
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
          impact(s, 1, &vb);
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
            impact(s, n, &vb);
            double expect[3] = {(1 - e) / 2 * vb, (1 + e) / 2 * vb, 0.0};
            if (n == 3) expect[0] = (1 - 2 * e) / 3 * vb, expect[1] = expect[2] = (1 + e) / 3 * vb;
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
      cmocka_unit_test(test_apex_every_height),
      cmocka_unit_test(test_apex_frictional_floor),
      cmocka_unit_test(test_no_rebound_below_threshold),
      cmocka_unit_test(test_rebound_off_a_wall),
      cmocka_unit_test(test_rebound_between_bodies),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
