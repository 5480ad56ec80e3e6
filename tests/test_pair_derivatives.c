/* The step's Jacobians (mr_sim_step_derivatives) for contacts between two moving bodies, against
 * static geometry other than a halfspace, and for point constraints, against
 * Richardson-combined central differences of mr_sim_step with the solver converged to ε 1e-12:
 *
 * - a ball on a cube that slides on three static sphere pegs (two free bodies: the ball on the
 *   cube's top face, a moving face; the cube's bottom face on the pegs, a static curved side),
 *   at random velocities of the cube and offsets of the ball; three pegs rather than the ground
 *   because a cube sliding on four corners has a statically indeterminate normal-force
 *   distribution, and with it its friction torque;
 * - the Allegro hand holding a ball (scenes/b8_allegro_hold.yaml after 200 steps: the ball
 *   sliding on the static palm box's edge and held by a finger box's face), at random joint
 *   velocities;
 * - a ball on a static box's edge, a capsule lying on a static box's face, a sphere on a static
 *   mesh's face; an ellipsoid's contact refused with an error;
 * - the four-bar linkage of scenes/four_bar.yaml, closed by a point constraint;
 * - a box of anisotropic inertia spinning in free flight, and the same box on three feet
 *   spinning about the vertical while it slides on the ground.
 *
 * Compared: ∂v⁺ and ∂q⁺ for every input (q, v, joint torques but a free body's own), free bodies
 * included with their spin (mr_sim integrates them in the world velocity of their centre of
 * mass, with a midpoint gyroscopic impulse, on the chord of the centre of mass, and hands v⁺
 * back in the frame of q⁺: docs/physics.md; the step derivatives follow that map).
 *
 * A column is compared only where the step is smooth: the largest h of 1e-6, 1e-7, 1e-8 for
 * which the four perturbed steps keep the nominal contacts, features and modes and the central
 * differences with h and 2h agree to the tolerance (a contact near a change of mode moves λ by
 * ~1e5 h here, so h = 1e-6 can cross it); at most a third of the columns may be skipped.
 *
 * The tolerance at h = 1e-6, scaled by 1e-6 / h. The differences' truncation is O(h⁴); their
 * round-off is the step's rounding, ε times the largest terms that cancel (the gap correction
 * Φ/Δt = 1000 per metre, the PD gains over Δt), over 2h: ≲ 1e-8 (1 + |∂|); and the solve's
 * accuracy: ncp-pgs stops at ε ≈ 1e-12 (force units), which moves v⁺ by up to
 * Δt ‖M̃⁻¹ Jᵀ‖ ε ≈ 1e-3 · 1e3 · 1e-12 = 1e-12 (the lightest links of the hand weigh tens of
 * grams, their inertia about the joint 1e-5 kg m²), over 2h: 5e-7. Tolerance 1e-5 (1 + |∂|) on
 * the hand, 1e-6 elsewhere; the largest error over its tolerance is printed.
 */
#include "test_step_inputs.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moreau/assembly.h"
#include "moreau/control.h"
#include "moreau/sim_derivatives.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

enum { NMAX = 64 };

typedef struct {
  mr_scene sc;
  double q[NMAX], v[NMAX], t;
} pair_case;

static mr_sim *case_sim(pair_case *c) {
  mr_error e;
  mr_sim *sim = mr_sim_from_scene(&c->sc, NULL, &e);
  if (!sim) fail_msg("%s", e.msg);
  return sim;
}

/* the scene (file when text is NULL) converged to ε 1e-12, settled for `settle` steps */
static void case_load(pair_case *c, const char *file, const char *text, int settle) {
  mr_error e;
  mr_status st = text ? mr_scene_parse(text, "pair", NULL, &c->sc, &e)
                      : mr_scene_load(file, &c->sc, &e);
  if (st != MR_OK) fail_msg("%s", e.msg);
  c->sc.settings.eps_abs = 1e-12;
  c->sc.settings.eps_rel = 0.0;
  c->sc.settings.max_iter = 1000000;
  mr_sim *sim = case_sim(c);
  for (int k = 0; k < settle; ++k)
    if (mr_sim_step(sim, &e) != MR_OK) fail_msg("%s", e.msg);
  const mr_model *m = c->sc.model;
  assert_true(m->nv <= NMAX && m->nq <= NMAX);
  memcpy(c->q, mr_sim_q(sim), (size_t)m->nq * sizeof(double));
  memcpy(c->v, mr_sim_v(sim), (size_t)m->nv * sizeof(double));
  c->t = mr_sim_time(sim);
  mr_sim_free(sim);
}

/* 1 when body b has a dof on its path to the world */
static int moving(const mr_model *m, int b) {
  for (; b > 0; b = m->bodies[b].parent)
    if (m->bodies[b].joint.nv > 0) return 1;
  return 0;
}

/* 1 when body b is a free body: a free joint carrying no other body */
static int free_body(const mr_model *m, int b) {
  if (m->bodies[b].joint.type != MR_JOINT_FREE) return 0;
  for (int i = 1; i < m->nbodies; ++i)
    if (m->bodies[i].parent == b) return 0;
  return 1;
}

/* dof k's body is a free body */
static int free_dof(const mr_model *m, int k) {
  return free_body(m, m->dof_body[k]);
}

/* the step's contacts and their modes, as a signature: the count, then each contact's geometry
 * pair, feature and mode (separated: λ_N <= 1e-9; sliding: ‖c_T‖ > 1e-9, force units) */
static uint64_t mode_signature(const mr_sim *sim) {
  const mr_contact *ct;
  const double *lambda;
  const int nc = mr_sim_contacts(sim, &ct, &lambda);
  double cv[3 * NMAX];
  assert_true(nc <= NMAX);
  mr_problem_velocity(mr_sim_problem(sim), lambda, cv);
  uint64_t sig = (uint64_t)nc;
  for (int i = 0; i < nc; ++i) {
    const int loaded = lambda[3 * i + 2] > 1e-9, slips = hypot(cv[3 * i], cv[3 * i + 1]) > 1e-9;
    const int mode = !loaded ? 0 : slips ? 2 : 1;
    sig = sig * 1000003u + (uint64_t)(ct[i].geom[0] * 7919 + ct[i].geom[1]) * 3u + (uint64_t)mode;
    sig = sig * 1000003u + (uint64_t)ct[i].feature;
  }
  return sig;
}

/* one step from the case moved along input k by t (k < nv: q ⊕ t e_k; < 2nv: v; else the torque
 * of dof k − 2nv): q⁺ ⊖ qref into dq, w⁺ into vn; returns the step's mode signature */
static uint64_t case_step(pair_case *c, int k, double t, const double *qref, double *dq,
                          double *vn) {
  const mr_model *m = c->sc.model;
  const int nv = m->nv;
  mr_error e;
  double q[NMAX], v[NMAX];
  test_moved_state(m, c->q, c->v, k, t, q, v);
  mr_sim *sim = case_sim(c);
  mr_sim_set_time(sim, c->t);
  assert_int_equal(mr_sim_set_state(sim, q, v, &e), MR_OK);
  if (k >= 2 * nv) assert_int_equal(mr_sim_set_joint_torque(sim, k - 2 * nv, t, &e), MR_OK);
  if (mr_sim_step(sim, &e) != MR_OK) fail_msg("%s", e.msg);
  memcpy(vn, mr_sim_v(sim), (size_t)nv * sizeof(double));
  mr_difference(m, qref, mr_sim_q(sim), dq);
  const uint64_t sig = mode_signature(sim);
  mr_sim_free(sim);
  return sig;
}

/* the analytical Jacobians against the differences, every input but the free bodies' spin
 * (torques only on dofs that are not a free body's); the largest error relative to 1 + |∂|.
 * want: the number of contacts between two moving bodies the step must contain (at least) */
static double check_case(pair_case *c, double tol, int want_pairs, const char *name) {
  const mr_model *m = c->sc.model;
  const int nv = m->nv;
  mr_error e;
  mr_sim *sim = case_sim(c);
  mr_sim_set_time(sim, c->t);
  assert_int_equal(mr_sim_set_state(sim, c->q, c->v, &e), MR_OK);
  mr_sim_derivatives *x = mr_sim_derivatives_create(sim, &e);
  assert_non_null(x);
  if (mr_sim_step_derivatives(sim, x, &e) != MR_OK) fail_msg("%s: %s", name, e.msg);
  const mr_step_derivatives *sd = mr_sim_derivatives_get(x);
  const mr_contact *ct;
  const double *lambda;
  const int nc = mr_sim_contacts(sim, &ct, &lambda);
  int pairs = 0, active = 0, sliding = 0;
  double cv[3 * NMAX];
  mr_problem_velocity(mr_sim_problem(sim), lambda, cv);
  for (int i = 0; i < nc; ++i) {
    pairs += moving(m, ct[i].body[0]) && moving(m, ct[i].body[1]) && lambda[3 * i + 2] > 1e-9;
    active += lambda[3 * i + 2] > 1e-9;
    sliding += lambda[3 * i + 2] > 1e-9 && hypot(cv[3 * i], cv[3 * i + 1]) > 1e-9;
  }
  if (pairs < want_pairs)
    fail_msg("%s: %d loaded contacts between two bodies, wanted %d", name, pairs, want_pairs);
  double qref[NMAX], wref[NMAX];
  memcpy(qref, mr_sim_q(sim), (size_t)m->nq * sizeof(double));
  memcpy(wref, mr_sim_v(sim), (size_t)nv * sizeof(double));
  const uint64_t sig = mode_signature(sim);
  double worst = 0.0;
  int columns = 0, skipped = 0;
  for (int k = 0; k < 3 * nv; ++k) {
    if (k >= 2 * nv && free_dof(m, k - 2 * nv)) continue;
    /* the largest step of 1e-6, 1e-7, 1e-8 whose four steps keep the contacts, their features
     * and modes, and whose central differences with steps h and 2h agree (their difference is
     * O(h²) where the step is smooth: a disagreement is a kink within 2h that the signature
     * does not see, e.g. a contact's region on a box changing) */
    double dq[4][NMAX], vn[4][NMAX], h = 1e-5;
    int same = 0;
    while (!same && h > 2e-8) {
      h /= 10.0;
      const double at[4] = {2 * h, h, -h, -2 * h};
      same = 1;
      for (int t = 0; t < 4; ++t)
        same &= case_step(c, k, at[t], qref, dq[t], vn[t]) == sig;
      for (int r = 0; r < nv && same; ++r) {
        const double d1 = (vn[1][r] - vn[2][r]) / (2 * h), d2 = (vn[0][r] - vn[3][r]) / (4 * h);
        same = fabs(d1 - d2) <= tol * 1e-6 / h * (1 + fabs(d1));
      }
    }
    if (!same) {
      ++skipped;
      continue;
    }
    ++columns;
    const double tol_h = tol * 1e-6 / h; /* the solve's accuracy over h */
    const int in = k % nv;
    for (int r = 0; r < nv; ++r) {
      double an[2], fd[2];
      test_entry(sd, nv, k, r, (const double(*)[64])vn, (const double(*)[64])dq, h, an, fd);
      for (int o = 0; o < 2; ++o) {
        const double err = fabs(an[o] - fd[o]) / (1 + fabs(an[o]));
        worst = fmax(worst, err / tol_h);
        if (err > tol_h)
          fail_msg("%s: input %d (%s %d), %s row %d: analytical %.12g, differences %.12g", name,
                   k, k < nv ? "q" : k < 2 * nv ? "v" : "tau", in, o ? "q" : "v", r, an[o],
                   fd[o]);
      }
    }
  }
  print_message("%s: %d contacts (%d loaded, %d of them sliding, %d between two bodies), %d "
                "inputs compared, %d not smooth within 2e-8; largest error / tolerance %.2g\n",
                name, nc, active, sliding, pairs, columns, skipped, worst);
  assert_true(columns > 2 * skipped);
  mr_sim_derivatives_free(x);
  mr_sim_free(sim);
  return worst;
}

/* every free body moving horizontally at a random velocity in [−speed, speed]², without spin */
static void slide(pair_case *c, uint64_t seed, double speed) {
  const mr_model *m = c->sc.model;
  for (int b = 1; b < m->nbodies; ++b) {
    if (!free_body(m, b)) continue;
    double *v = c->v + m->bodies[b].joint.idx_v;
    v[0] = test_rand(&seed, -speed, speed);
    v[1] = test_rand(&seed, -speed, speed);
    for (int k = 2; k < 6; ++k)
      v[k] = 0.0;
  }
}

/* check_case on the states setup(seed) makes for seeds 1, 2, 3 */
static void check_seeds(void (*setup)(pair_case *, uint64_t), double tol, int want_pairs,
                        const char *name) {
  double worst = 0.0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    pair_case c;
    setup(&c, seed);
    worst = fmax(worst, check_case(&c, tol, want_pairs, name));
    mr_scene_free(&c.sc);
  }
  print_message("%s: largest error / tolerance %.2g\n", name, worst);
}

/* ---- a sphere on a sliding cube ---- */

static void sphere_on_cube(pair_case *c, uint64_t seed) {
  char text[2000];
  const double ox = test_rand(&seed, -0.05, 0.05), oy = test_rand(&seed, -0.05, 0.05);
  snprintf(text, sizeof text,
           "timestep: 0.001\n"
           "duration: 0.1\n"
           "solver: {name: ncp-pgs}\n"
           "contact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - name: pegs\n"
           "    fixed: true\n"
           "    geoms:\n"
           "      - {type: sphere, radius: 0.02, position: [0.06, 0, 0.02], friction: 0.3}\n"
           "      - {type: sphere, radius: 0.02, position: [-0.03, 0.052, 0.02], friction: 0.3}\n"
           "      - {type: sphere, radius: 0.02, position: [-0.03, -0.052, 0.02], friction: 0.3}\n"
           "  - name: cube\n"
           "    mass: 1.0\n"
           "    position: [0, 0, 0.14]\n"
           "    geoms:\n"
           "      - {type: box, size: [0.2, 0.2, 0.2], friction: 0.3}\n"
           "  - name: ball\n"
           "    mass: 0.3\n"
           "    position: [%.17g, %.17g, 0.29]\n"
           "    geoms:\n"
           "      - {type: sphere, radius: 0.05, friction: 0.8}\n",
           ox, oy);
  case_load(c, NULL, text, 30);
  slide(c, seed, 0.5); /* the cube slides, the ball rolls along or slips */
}

static void test_sphere_on_cube(void **state) {
  (void)state;
  check_seeds(sphere_on_cube, 1e-6, 1, "sphere on a sliding cube");
}

/* ---- the Allegro hand holding a ball ---- */

static void allegro_ball(pair_case *c, uint64_t seed) {
  case_load(c, "scenes/b8_allegro_hold.yaml", NULL, 200);
  const mr_model *m = c->sc.model;
  for (int k = 0; k < m->nv; ++k)
    c->v[k] = free_dof(m, k) ? 0.0 : test_rand(&seed, -0.3, 0.3);
}

static void test_allegro_ball(void **state) {
  (void)state;
  check_seeds(allegro_ball, 1e-5, 1, "Allegro hand holding a ball");
}

/* ---- static geometry other than a halfspace ----
 *
 * Three free bodies, each on its own static geometry, placed touching it and settled for 20
 * steps, then sliding at a random velocity without spin: a ball on the top edge of a box turned
 * 45° about y (an edge contact: the ball's centre's closest point slides along the edge), a
 * capsule lying on a box's face (two contacts at its segment's ends), a pebble on the face of a
 * static mesh (the unit cube of fuzz/corpus/mesh). The capsule is given isotropic inertia, so
 * that mr_sim's midpoint gyroscopic impulse vanishes (header comment). */
static void static_geometry(pair_case *c, uint64_t seed) {
  const char *text =
      "timestep: 0.001\n"
      "duration: 0.1\n"
      "solver: {name: ncp-pgs}\n"
      "contact: {margin: 0.001, baumgarte: 0.0}\n"
      "bodies:\n"
      "  - name: tables\n"
      "    fixed: true\n"
      "    geoms:\n"
      "      - {type: box, size: [0.2, 0.2, 0.2], position: [0, 0, -0.1],\n"
      "         orientation: [0, 0.38268343236508984, 0, 0.9238795325112867], friction: 0.9}\n"
      "      - {type: box, size: [0.4, 0.4, 0.2], position: [1, 0, -0.1], friction: 0.5}\n"
      "      - {type: mesh, file: fuzz/corpus/mesh/cube.obj, position: [1.5, -0.5, -1],\n"
      "         friction: 0.5}\n"
      "  - name: ball\n"
      "    mass: 0.1\n"
      "    position: [0.003, 0, 0.07629254778563492]\n"
      "    geoms:\n"
      "      - {type: sphere, radius: 0.035, friction: 0.9}\n"
      "  - name: capsule\n"
      "    mass: 0.2\n"
      "    inertia: [1e-4, 1e-4, 1e-4]\n"
      "    position: [1, 0, 0.03]\n"
      "    orientation: [0, 0.7071067811865476, 0, 0.7071067811865476]\n"
      "    geoms:\n"
      "      - {type: capsule, radius: 0.03, length: 0.1, friction: 0.5}\n"
      "  - name: pebble\n"
      "    mass: 0.2\n"
      "    position: [2, 0, 0.03]\n"
      "    geoms:\n"
      "      - {type: sphere, radius: 0.03, friction: 0.5}\n";
  case_load(c, NULL, text, 20); /* settled: every contact loaded */
  slide(c, seed, 0.3);
}

static void test_static_geometry(void **state) {
  (void)state;
  check_seeds(static_geometry, 1e-6, 0, "static box edge, box face, mesh face");
}

/* an ellipsoid's contact is refused with an error naming it */
static void test_ellipsoid_refused(void **state) {
  (void)state;
  pair_case c;
  case_load(&c, NULL,
            "timestep: 0.001\n"
            "duration: 0.1\n"
            "bodies:\n"
            "  - name: ground\n"
            "    fixed: true\n"
            "    geoms:\n"
            "      - {type: halfspace, normal: [0, 0, 1]}\n"
            "  - name: egg\n"
            "    mass: 0.1\n"
            "    position: [0, 0, 0.0499]\n"
            "    geoms:\n"
            "      - {type: ellipsoid, radii: [0.03, 0.04, 0.05]}\n",
            0);
  mr_error e;
  mr_sim *sim = case_sim(&c);
  mr_sim_derivatives *x = mr_sim_derivatives_create(sim, &e);
  assert_non_null(x);
  assert_int_equal(mr_sim_step_derivatives(sim, x, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "ellipsoid"));
  mr_sim_derivatives_free(x);
  mr_sim_free(sim);
  mr_scene_free(&c.sc);
}

/* ---- spinning free bodies ----
 *
 * A box of anisotropic inertia (0.3 x 0.2 x 0.1 m, 1.2 kg) in free flight at a random spin
 * (|ω_k| <= 8 rad/s) and velocity: the gyroscopic impulse, the chord and the re-expression of
 * v⁺, with no contact and no solve (the differences' error is their rounding, ≲ 1e-9 here). And
 * the same box resting on three small feet (sphere geoms of its own body, so that the normal
 * forces are determinate) on the ground, sliding at a random horizontal velocity and spinning
 * about the vertical at a random rate, the feet sliding. */
static const char *spin_text = "timestep: 0.001\n"
                               "duration: 0.1\n"
                               "solver: {name: ncp-pgs}\n"
                               "contact: {margin: 0.001, baumgarte: 0.0}\n"
                               "bodies:\n"
                               "%s"
                               "  - name: box\n"
                               "    mass: 1.2\n"
                               "    inertia: [0.005, 0.01, 0.013]\n"
                               "    position: [0.1, -0.2, %s]\n"
                               "    orientation: [0, 0, 0.25881904510252074, 0.9659258262890683]\n"
                               "    geoms:\n"
                               "      - {type: box, size: [0.3, 0.2, 0.1], friction: 0.4}\n"
                               "      - {type: sphere, radius: 0.01, position: [0.12, 0, -0.05],\n"
                               "         friction: 0.4}\n"
                               "      - {type: sphere, radius: 0.01, position: [-0.12, 0.08, -0.05],\n"
                               "         friction: 0.4}\n"
                               "      - {type: sphere, radius: 0.01, position: [-0.12, -0.08, -0.05],\n"
                               "         friction: 0.4}\n";

static void spinning_flight(pair_case *c, uint64_t seed) {
  char text[2000];
  snprintf(text, sizeof text, spin_text, "", "1.0");
  case_load(c, NULL, text, 0);
  for (int k = 0; k < 6; ++k)
    c->v[k] = test_rand(&seed, k < 3 ? -1.0 : -8.0, k < 3 ? 1.0 : 8.0);
}

static void test_spinning_flight(void **state) {
  (void)state;
  check_seeds(spinning_flight, 1e-6, 0, "spinning box in free flight");
}

static void spinning_slide(pair_case *c, uint64_t seed) {
  char text[2000];
  snprintf(text, sizeof text, spin_text,
           "  - name: ground\n"
           "    fixed: true\n"
           "    geoms:\n"
           "      - {type: halfspace, normal: [0, 0, 1], friction: 0.4}\n", "0.06");
  case_load(c, NULL, text, 30);
  slide(c, seed, 0.5);
  c->v[5] = test_rand(&seed, -3.0, 3.0);
}

static void test_spinning_slide(void **state) {
  (void)state;
  check_seeds(spinning_slide, 1e-6, 0, "spinning box sliding on the ground");
}

/* ---- a point constraint ----
 *
 * The four-bar linkage of scenes/four_bar.yaml: an open chain closed by a loop (point)
 * constraint with Baumgarte factor 1, rocking under gravity; after 100 steps, random joint
 * velocities (|q̇| <= 0.5). The constraint's rows and its Baumgarte term move with the chain. */
static void four_bar(pair_case *c, uint64_t seed) {
  case_load(c, "scenes/four_bar.yaml", NULL, 100);
  for (int k = 0; k < c->sc.model->nv; ++k)
    c->v[k] += test_rand(&seed, -0.5, 0.5);
}

static void test_point_constraint(void **state) {
  (void)state;
  check_seeds(four_bar, 1e-6, 0, "four-bar linkage");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sphere_on_cube),
      cmocka_unit_test(test_allegro_ball),
      cmocka_unit_test(test_static_geometry),
      cmocka_unit_test(test_ellipsoid_refused),
      cmocka_unit_test(test_point_constraint),
      cmocka_unit_test(test_spinning_flight),
      cmocka_unit_test(test_spinning_slide),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
