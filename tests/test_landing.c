/* Landings at the time steps MPC and RL users run (Δt = 1, 5, 10 ms): speculative contacts
 * (mr_collision_set_motion, docs/collision.md) bring a contact into the problem in the step
 * before its gap would close, so a falling corner is caught at Φ = 0 instead of being found a
 * step's travel deep.
 *
 * A 1 kg box (0.2 × 0.2 × 0.1 m), a standing cylinder (r = 0.1 m, length 0.1 m) and a capsule
 * lying along x (r = 0.05 m, length 0.2 m), tilted 0.01 rad about y, released with their lowest
 * edge (point) touching a halfspace or dropped from 0.4 m above it, default scene settings, 3 s.
 * Without speculative contacts they rock for the whole run (0.2–1 mm deep, tilts of 1e-3–1e-2
 * rad, points moving at 0.3–1 m/s, the cylinder sinking through the floor at 5 and 10 ms): the
 * falling side is found a whole step's travel deep, the push-out is capped at δ/Δt per step and
 * lifts the shallow side out of the contact set. Over the last second each must be at rest on
 * its face (its side), against the closed forms of rest and the gap law:
 * - no point moving faster than one step's solver residual allows: |v_o| + |ω| ρ ≤ u = n ε Δt
 *   (1/m + ρ²/I_min), n = 8 contacts at most, ε = 1e-6 N (the NCP tolerance in force units), ρ
 *   the bounding radius of the body about its origin (the centre of mass here), I_min its
 *   smallest principal inertia: each step's velocity is the solver's answer to within that;
 * - a resting contact ends each step at Φ = −d (the rest depth, 1e-12 m) up to that step's
 *   velocity error: penetration ≤ d + u Δt, the centre at the resting height h (half the box's
 *   or cylinder's height, the capsule's radius) to d + u Δt, and the tilt (the face's normal
 *   from the vertical, the capsule's axis from the horizontal) below 2 (d + u Δt) / 0.2 m, the
 *   width across the tilt axis. */
#include "sim_util.h"

#include "moreau/assembly.h"

enum { NSHAPES = 3 };
static const char *const shapes[NSHAPES] = {"box", "cylinder", "capsule"};

/* a scene of one shape tilted 0.01 rad about y, its lowest point `drop` above the floor */
static mr_scene landing_scene(int shape, double dt, double drop) {
  const double th = 0.01;
  static const char *const geoms[NSHAPES] = {
      "{type: box, size: [0.2, 0.2, 0.1]}", "{type: cylinder, radius: 0.1, length: 0.1}",
      "{type: capsule, radius: 0.05, length: 0.2, "
      "orientation: [0, 0.70710678118654752, 0, 0.70710678118654752]}"};
  /* the lowest point: a bottom edge (x = ±0.1, z = −0.05) turned by th, or the capsule's end
   * sphere (its centre at x = ±0.1) */
  double low = shape == 2 ? 0.1 * sin(th) + 0.05 : 0.1 * sin(th) + 0.05 * cos(th);
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: %.17g\n"
           "bodies:\n"
           "  - {name: floor, fixed: true, geoms: [{type: halfspace}]}\n"
           "  - {name: b, mass: 1.0, position: [0, 0, %.17g], orientation: [0, %.17g, 0, %.17g],\n"
           "     geoms: [%s]}\n",
           dt, low + drop, sin(th / 2), cos(th / 2), geoms[shape]);
  return tsim_parse(text, ".");
}

/* the smallest principal inertia (I is diagonal for these shapes about their centre) */
static double smallest_inertia(const mr_mat3 *I) {
  return fmin(I->m[0][0], fmin(I->m[1][1], I->m[2][2]));
}

/* what the last second of a 3 s run measured */
typedef struct {
  double pen, dz, tilt, speed, speed_bound;
} landing;

static landing run_landing(int shape, double dt, double drop) {
  mr_scene sc = landing_scene(shape, dt, drop);
  mr_sim *s = tsim_create(&sc, NULL);
  const mr_model *m = mr_sim_model(s);
  const mr_inertia *Y = &m->bodies[1].inertia;
  const double rhos[NSHAPES] = {sqrt(0.1 * 0.1 + 0.1 * 0.1 + 0.05 * 0.05),
                                sqrt(0.1 * 0.1 + 0.05 * 0.05), 0.15};
  const double rho = rhos[shape];
  const double h = 0.05, n = 8.0, eps = 1e-6;
  landing r = {0};
  r.speed_bound = n * eps * dt * (1.0 / Y->m + rho * rho / smallest_inertia(&Y->I));
  long steps = lround(3.0 / dt);
  for (long k = 1; k <= steps; ++k) {
    tsim_steps(s, 1);
    if (k < 2 * steps / 3) continue;
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_mat3 R = mr_quat_to_m3((mr_quat){q[3], q[4], q[5], q[6]});
    /* the tilt: of the box's and cylinder's z axis from the vertical, of the capsule's axis (x)
     * from the horizontal */
    double tilt = shape == 2 ? asin(fmin(1.0, fabs(R.m[2][0])))
                             : asin(fmin(1.0, hypot(R.m[0][2], R.m[1][2])));
    r.pen = fmax(r.pen, mr_sim_last(s)->penetration);
    r.dz = fmax(r.dz, fabs(q[2] - h));
    r.tilt = fmax(r.tilt, tilt);
    r.speed = fmax(r.speed, mr_v3_norm(mr_v3(v[0], v[1], v[2])) +
                                mr_v3_norm(mr_v3(v[3], v[4], v[5])) * rho);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
  return r;
}

static void test_edge_landings(void **state) {
  const double dts[] = {1e-3, 5e-3, 1e-2}, drops[] = {0.0, 0.4};
  const double d = mr_assembly_settings_default().rest_depth;
  for (int shape = 0; shape < NSHAPES; ++shape)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        landing r = run_landing(shape, dts[i], drops[j]);
        if (getenv("MOREAU_TEST_VERBOSE"))
          printf("%-8s dt %.3f drop %.1f: penetration %.2e, |z − h| %.2e, tilt %.2e, speed %.2e "
                 "(bound %.2e)\n",
                 shapes[shape], dts[i], drops[j], r.pen, r.dz, r.tilt, r.speed, r.speed_bound);
        double dz = d + r.speed_bound * dts[i];
        if (!(r.pen <= dz && r.dz <= dz && r.tilt <= 2.0 * dz / 0.2 && r.speed <= r.speed_bound))
          fail_msg("%s, dt %g, dropped %g m: not at rest over the last second (penetration "
                   "%.3g m, |z − h| %.3g m, tilt %.3g rad, point speed %.3g m/s, bound %.3g)",
                   shapes[shape], dts[i], drops[j], r.pen, r.dz, r.tilt, r.speed, r.speed_bound);
      }
}

/* A speculative row that sits out its island's solve and that another row's impulse closes
 * (docs/physics.md, "Rows that cannot close sit out the solve"). On a frictionless floor at
 * Δt = 10 ms, ball B (r = 0.05 m, at rest) is 0.8 mm from a wall: within its reach g Δt² =
 * 0.98 mm, so the wall's contact is in the problem, but B's free motion does not close it (B is
 * at rest), so it sits out. Ball A (equal mass) comes at 1 m/s, 1 mm behind B: the gap law lets
 * A approach B by that 1 mm in the step, so A's impulse sends B off at about 0.45 m/s, 4.5 mm in
 * the step. Solved without the wall's row, B would end 3.7 mm into the wall; the check on the
 * solution finds the row closing and solves the island again with it, which lets B approach the
 * wall by its gap and no further. So after the step B's penetration of the wall is at most the
 * rest depth plus the step's solver residual (1e-6 N over 1 kg: 1e-8 m/s, 1e-10 m in the step),
 * and A and B end within the gaps the step allows: B at most 0.8 mm further, A behind B. */
static void test_row_closed_by_another(void **state) {
  (void)state;
  const double r = 0.05, gap_wall = 8e-4, gap_ab = 1e-3, wall = 0.1;
  double xb = wall - r - gap_wall, xa = xb - 2 * r - gap_ab;
  char text[1024];
  snprintf(text, sizeof text,
           "timestep: 0.01\n"
           "bodies:\n"
           "  - {name: floor, fixed: true, geoms: [{type: halfspace, friction: 0}]}\n"
           "  - {name: wall, fixed: true, geoms: [{type: halfspace, normal: [-1, 0, 0], "
           "offset: %.17g, friction: 0}]}\n"
           "  - {name: a, mass: 1.0, position: [%.17g, 0, %.17g], linear_velocity: [1, 0, 0],\n"
           "     geoms: [{type: sphere, radius: %.17g, friction: 0}]}\n"
           "  - {name: b, mass: 1.0, position: [%.17g, 0, %.17g],\n"
           "     geoms: [{type: sphere, radius: %.17g, friction: 0}]}\n",
           -wall, xa, r, r, xb, r, r);
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, 1);
  const double *q = mr_sim_q(s);
  double qa = q[0], qb = q[7];
  /* B's penetration of the wall: at most the rest depth and the residual's travel */
  assert_true(qb + r - wall <= 1e-12 + 1e-10);
  /* B moved toward the wall, by at most its gap; A did not pass into B by more than the same */
  assert_true(qb > xb && qb <= xb + gap_wall + 1e-10);
  assert_true(qb - qa >= 2 * r - 1e-12 - 1e-10);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_edge_landings),
      cmocka_unit_test(test_row_closed_by_another),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
