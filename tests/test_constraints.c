/* Joint limits, bilateral point constraints and effort limits: a bilateral block solved by every
 * solver against a direct solve, the 4-bar linkage's loop closure over 2 s, an arm falling
 * against its joint limit with every solver (the limit force against the static gravity
 * torque), effort limits on commanded and PD torques, and the scene keys' errors. */
#include "test_util.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "core/arena.h"
#include "contact/problem_io.h"
#include "core/linalg.h"
#include "moreau/sim.h"
#include "sim_util.h"

#define G_ACC 9.81

/* ---- the solvers on a problem with a bilateral block ---- */

/* G = A Aᵀ + 0.1 I (6 x 6, deterministic), g = −G λ*: λ* solves the problem when its contact
 * block sticks strictly inside the cone (c = 0 everywhere) */
static void mixed_problem(double *G, double *g, const double *lstar) {
  uint64_t seed = 7;
  double A[36];
  for (int k = 0; k < 36; ++k)
    A[k] = test_rand(&seed, -1.0, 1.0);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) {
      double s = r == c ? 0.1 : 0.0;
      for (int k = 0; k < 6; ++k)
        s += A[6 * r + k] * A[6 * c + k];
      G[6 * r + c] = s;
    }
  mr_matvec(g, G, lstar, 6, 6);
  for (int k = 0; k < 6; ++k)
    g[k] = -g[k];
}

/* every solver: a bilateral block (λ free in R³, here with a negative normal entry, which no
 * cone allows) and a sticking contact; the solution is λ* to the solver's tolerance, ccp-newton
 * to its compliance (R = 1e-6 diag G: relative error ~1e-6 · cond(G) ≈ 1e-3 here), soft only on
 * the bilateral block (its contact is a penalty force) */
static void test_every_solver_bilateral_block(void **state) {
  const double lstar[6] = {1.0, -2.0, -0.5, 0.1, -0.1, 2.0};
  double G[36], g[6], mu[2] = {0.0, 0.5};
  unsigned char kind[2] = {MR_KIND_BILATERAL, MR_KIND_CONTACT};
  mixed_problem(G, g, lstar);
  mr_contact_problem p = {.nc = 2, .G = G, .g = g, .mu = mu, .kind = kind};
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(2, 0)), 0);
  for (int k = 0; k < mr_solver_count(); ++k) {
    const mr_solver_info *info = mr_solver_at(k);
    mr_solver_settings set = mr_solver_settings_default();
    set.eps_abs = 1e-10;
    set.max_iter = 100000;
    double lambda[6] = {0}, c[6], y[6];
    mr_solver_state st = {.cap = 6, .y = y};
    mr_solver_stats stats;
    mr_error err = {0};
    mr_arena_reset(&work, 0);
    if (mr_solve(info->name, &p, &set, &st, &work, lambda, c, &stats, &err))
      fail_msg("%s: %s", info->name, err.msg);
    int soft = strcmp(info->name, "soft") == 0, newton = strcmp(info->name, "ccp-newton") == 0;
    double tol = newton ? 5e-3 : 1e-6;
    print_message("%-13s iterations %6d  |lambda - lambda*|_inf %.2e  |c_B| %.2e\n", info->name,
                  stats.iterations, fabs(lambda[2] - lstar[2]), fabs(c[2]));
    /* soft: the bilateral rows alone, with its penalty contact force fixed */
    if (soft) {
      assert_true(sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) <= set.eps_abs * 10);
      continue;
    }
    assert_vec_near(lambda, lstar, 6, tol);
  }
  mr_arena_destroy(&work);
}

/* the criteria of a bilateral block: ε_p = ε_c = 0 whatever λ, ε_d = ‖c‖ */
static void test_bilateral_criteria(void **state) {
  double G[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, g[3] = {3, 0, -4}, mu[1] = {0.5};
  unsigned char kind[1] = {MR_KIND_BILATERAL};
  mr_contact_problem p = {.nc = 1, .G = G, .g = g, .mu = mu, .kind = kind};
  double lambda[3] = {0, 0, -7}, c[3], ep, ed, ec;
  mr_problem_velocity(&p, lambda, c); /* c = (3, 0, −11) */
  mr_problem_criteria(&p, lambda, c, 1, &ep, &ed, &ec);
  assert_near(ep, 0.0, 0.0);
  assert_near(ec, 0.0, 0.0);
  assert_near(ed, sqrt(9.0 + 121.0), 1e-12);
}

/* problem files: the optional kind list reads, writes back, and refuses other values */
static void test_problem_file_kind(void **state) {
  const char *text = "{\"nc\": 2, \"G\": [[1,0,0,0,0,0],[0,1,0,0,0,0],[0,0,1,0,0,0],"
                     "[0,0,0,1,0,0],[0,0,0,0,1,0],[0,0,0,0,0,1]],"
                     "\"g\": [0,0,-1,0,0,-1], \"mu\": [0.5, 0], \"kind\": [0, 1]}";
  mr_problem_file f, h;
  mr_error err = {0};
  assert_int_equal(mr_problem_file_parse(text, "k.json", &f, &err), MR_OK);
  assert_false(mr_problem_bilateral(&f.problem, 0));
  assert_true(mr_problem_bilateral(&f.problem, 1));
  /* a temporary file: the test runs from any build directory (make test, make check) */
  char path[] = "/tmp/moreau_test_kind_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(mr_problem_file_save(path, &f.problem, NULL, &err), MR_OK);
  assert_int_equal(mr_problem_file_load(path, &h, &err), MR_OK);
  assert_true(h.kind && h.kind[0] == 0 && h.kind[1] == 1);
  mr_problem_file_free(&f);
  mr_problem_file_free(&h);
  remove(path);
  const char *bad = "{\"nc\": 1, \"G\": [[1,0,0],[0,1,0],[0,0,1]], \"g\": [0,0,0],"
                    " \"mu\": [0.5], \"kind\": [3]}";
  assert_int_equal(mr_problem_file_parse(bad, "b.json", &f, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "'kind'[0] = 3 must be 0 (contact), 1 (bilateral) or 2 (box)"));
  /* a box (joint friction) reads as one */
  const char *box = "{\"nc\": 1, \"G\": [[0,0,0],[0,0,0],[0,0,1]], \"g\": [0,0,2],"
                    " \"mu\": [1], \"kind\": [2]}";
  assert_int_equal(mr_problem_file_parse(box, "x.json", &f, &err), MR_OK);
  assert_true(mr_problem_box(&f.problem, 0));
  mr_problem_file_free(&f);
}

/* ---- the 4-bar linkage ---- */

/* |tip of link3 − D| after each step over the scene's 2 s; returns the maximum; *swing gets the
 * range of q1 */
static double four_bar_closure(const char *solver, double *swing) {
  mr_scene sc = tsim_load("scenes/four_bar.yaml");
  mr_sim *s = tsim_create(&sc, solver);
  const mr_model *m = mr_sim_model(s);
  mr_data *d = mr_data_create(m);
  int link3 = mr_model_body_index(m, "four_bar/link3");
  assert_true(link3 > 0);
  mr_vec3 D = mr_v3(0.4, 0.0, 1.0), tip = mr_v3(0.0, 0.0, 0.35);
  double emax = 0.0, qmin = INFINITY, qmax = -INFINITY;
  for (int k = 0; k < 2000; ++k) {
    tsim_steps(s, 1);
    mr_forward_kinematics(m, d, mr_sim_q(s), NULL, NULL);
    mr_vec3 p = mr_v3_add(d->oMi[link3].p, mr_m3_mulv(&d->oMi[link3].R, tip));
    double e = sqrt(mr_v3_dot(mr_v3_sub(p, D), mr_v3_sub(p, D)));
    emax = fmax(emax, e);
    qmin = fmin(qmin, mr_sim_q(s)[0]), qmax = fmax(qmax, mr_sim_q(s)[0]);
    assert_int_equal(mr_sim_last(s)->nconstraints, 1);
  }
  *swing = qmax - qmin;
  mr_data_free(d);
  mr_sim_free(s);
  mr_scene_free(&sc);
  return emax;
}

/* The loop closes to 1e-6 m over 2 s (2000 steps). Per step the position error left by a
 * velocity-level constraint is the second-order drift of q ⊕ Δt v⁺ along the curved closure
 * manifold, ½ Δt² |J̇ v| ≲ ½ Δt² ω² r (ω ≲ 2 rad/s, r ≲ 0.5 m: ≲ 1e-6 m), and the default
 * Baumgarte factor 1 removes each step's error in the next one, so it does not accumulate
 * (measured: 8e-8 m). The linkage must also move: released at q1 = 0.4 rad it rocks to about
 * −0.09 rad (range > 0.4 rad). */
static void test_four_bar_closes(void **state) {
  const char *solvers[] = {NULL, "ncp-admm", "ccp-admm"};
  for (int k = 0; k < 3; ++k) {
    double swing, e = four_bar_closure(solvers[k], &swing);
    print_message("four-bar %-12s max closure error %.2e m, q1 range %.3f rad\n",
                  solvers[k] ? solvers[k] : "(scene)", e, swing);
    assert_true(e < 1e-6);
    assert_true(swing > 0.4);
  }
}

/* every registered solver closes the loop as well (the bilateral rows are solved the same way
 * by all: unbounded Gauss-Seidel steps, identity projections, or soft's linear solve);
 * ccp-newton's compliant bilateral rows (λ = −R⁻¹ c, R = 1e-6 diag G) are asserted to 1e-6 m
 * too */
static void test_four_bar_every_solver(void **state) {
  for (int k = 0; k < mr_solver_count(); ++k) {
    double swing, e = four_bar_closure(mr_solver_at(k)->name, &swing);
    print_message("four-bar %-12s max closure error %.2e m, q1 range %.3f rad\n",
                  mr_solver_at(k)->name, e, swing);
    assert_true(e < 1e-6);
    assert_true(swing > 0.4);
  }
}

/* without the constraint the chain does not close: the same check fails (the test can fail) */
static void test_four_bar_open_without_constraint(void **state) {
  mr_scene sc =
      tsim_parse("timestep: 0.001\n"
                 "robots:\n"
                 "  - {name: four_bar, urdf: models/four_bar.urdf, floating: false,\n"
                 "     position: [0, 0, 1.0],\n"
                 "     joints: {j1: 0.4, j2: -0.25352033088024517, j3: -0.0830657711712961}}\n",
                 "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  for (int k = 0; k < 300; ++k)
    tsim_steps(s, 1);
  /* link3's tip leaves D by centimetres */
  const mr_model *m = mr_sim_model(s);
  mr_data *d = mr_data_create(m);
  mr_forward_kinematics(m, d, mr_sim_q(s), NULL, NULL);
  int b = mr_model_body_index(m, "four_bar/link3");
  mr_vec3 p = mr_v3_add(d->oMi[b].p, mr_m3_mulv(&d->oMi[b].R, mr_v3(0, 0, 0.35)));
  mr_vec3 e = mr_v3_sub(p, mr_v3(0.4, 0.0, 1.0));
  assert_true(sqrt(mr_v3_dot(e, e)) > 1e-2);
  mr_data_free(d);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* A free box (1 kg, 0.2 m cube) anchored to the world at its corner by a point constraint (type
 * point, world point at the initial configuration): a spatial pendulum. The corner stays put up
 * to one step's drift: the centre of mass moves on the chord Δt u while the body turns by
 * exp(Δt ω), so a point at r from the centre, held at zero velocity, drifts by the centripetal
 * ½ Δt² |ω × (ω × r)| ≤ ½ Δt² ω² r per step (r = 0.1√3 m), which the default Baumgarte factor 1
 * removes in the next step: the error stays below the largest one-step drift, plus 1e-8 m for the
 * solver tolerance. Meanwhile the centre swings down: from the corner straight above the
 * centre's side, it falls by more than 1 cm in 0.5 s. */
static void test_point_anchor_free_body(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "bodies:\n"
                           "  - {name: box, mass: 1.0, position: [0, 0, 1],\n"
                           "     geoms: [{type: box, size: [0.2, 0.2, 0.2]}]}\n"
                           "constraints:\n"
                           "  - {type: point, body1: box, point: [0.1, 0.1, 1.1]}\n",
                           "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  const mr_model *m = mr_sim_model(s);
  mr_data *d = mr_data_create(m);
  int b = mr_model_body_index(m, "box");
  double emax = 0.0, zmin = INFINITY, drift = 0.0, r = 0.1 * sqrt(3.0), dt = 1e-3;
  for (int k = 0; k < 500; ++k) {
    const double *v = mr_sim_v(s);
    double w2 = v[3] * v[3] + v[4] * v[4] + v[5] * v[5];
    tsim_steps(s, 1);
    v = mr_sim_v(s);
    w2 = fmax(w2, v[3] * v[3] + v[4] * v[4] + v[5] * v[5]);
    drift = fmax(drift, 0.5 * dt * dt * w2 * r);
    mr_forward_kinematics(m, d, mr_sim_q(s), NULL, NULL);
    mr_vec3 p = mr_v3_add(d->oMi[b].p, mr_m3_mulv(&d->oMi[b].R, mr_v3(0.1, 0.1, 0.1)));
    mr_vec3 e = mr_v3_sub(p, mr_v3(0.1, 0.1, 1.1));
    emax = fmax(emax, sqrt(mr_v3_dot(e, e)));
    zmin = fmin(zmin, mr_sim_q(s)[2]);
  }
  print_message("anchored box: max anchor error %.2e m (one-step drift %.2e m), lowest centre z "
                "%.4f m\n",
                emax, drift, zmin);
  assert_true(emax <= drift + 1e-8);
  assert_true(zmin < 0.95);
  mr_data_free(d);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* ---- joint limits ---- */

typedef struct {
  double overshoot; /* max(q − upper) over the run */
  double lambda;    /* the limit force at the end */
  double v;         /* |v| at the end */
  int converged;    /* every step converged */
} limit_run;

static limit_run run_limit(const char *solver, double duration) {
  mr_scene sc = tsim_load("scenes/joint_limits.yaml");
  mr_sim *s = tsim_create(&sc, solver);
  limit_run r = {-INFINITY, 0.0, 0.0, 1};
  int steps = (int)lround(duration / sc.timestep);
  for (int k = 0; k < steps; ++k) {
    tsim_steps(s, 1);
    r.overshoot = fmax(r.overshoot, mr_sim_q(s)[0] - 0.5);
    r.converged &= mr_sim_last(s)->converged;
  }
  const mr_sim_constraint *cons;
  const double *lambda;
  int n = mr_sim_constraints(s, &cons, &lambda);
  assert_int_equal(n, 1);
  assert_int_equal(cons[0].type, MR_SIM_LIMIT);
  assert_int_equal(cons[0].upper, 1);
  r.lambda = lambda[2];
  r.v = fabs(mr_sim_v(s)[0]);
  mr_sim_free(s);
  mr_scene_free(&sc);
  return r;
}

/* The default solver: the hinge never passes its bound. Bound on the overshoot: the solver
 * meets c = −v⁺/Δt + Φ/Δt² ≥ −ε (force units, ε = eps_abs = 1e-6), so q⁺ = q + Δt v⁺ exceeds
 * the bound by at most Δt² ε = 1e-12; 1e-9 leaves room for round-off in q. At rest the limit
 * carries the static gravity torque m g l cos(0.5) (l = 0.5 m, m = 1 kg): its error is at most
 * ε / G_NN with G_NN = Δt / M̃ = 1e-3 / 0.2501 (M̃ = m l² + 1e-4), i.e. 2.5e-4 N m. */
static void test_limit_holds_under_gravity(void **state) {
  limit_run r = run_limit(NULL, 2.0);
  double tau = 1.0 * G_ACC * 0.5 * cos(0.5);
  print_message("limit (scene solver): overshoot %.2e rad, lambda %.6f N m (static %.6f)\n",
                r.overshoot, r.lambda, tau);
  assert_true(r.overshoot <= 1e-9);
  assert_true(r.overshoot > -1e-9); /* it does reach the bound */
  assert_near(r.lambda, tau, 2.5e-4);
  assert_true(r.v < 1e-9);
}

/* Every registered solver. Rigid solvers hold the bound as above; ccp-newton solves the
 * compliant problem (R = 1e-6 G_NN): static penetration R λ Δt² ~1e-14 rad, but at the impact
 * (λ ≈ I ω / Δt ≈ 1e3 N m) its criterion cannot reach 1e-6 in floating point (docs/solvers.md:
 * it stops on its fixed-point test) and lets 3e-8 rad through (asserted ≤ 1e-6 rad); soft is a
 * penalty spring of k = 1e5 N m/rad, so at rest it sits τ/k = 4.3e-5 rad past the bound (its
 * documented artifact), and the impact at ω ≈ √(2 g sin(0.5) / l) = 4.3 rad/s compresses the
 * spring by up to ω √(I/k) = 6.8e-3 rad undamped (I = 0.25 kg m²; asserted ≤ 1e-2 rad). Every one
 * ends at rest carrying the static torque within the 2.5e-4 N m bound above (ε / G_NN; the soft
 * model's spring is at its static deflection, which carries the same torque up to its damping
 * of the last 1e-9 rad/s). At rest |v| is the solver's residual velocity: c ≥ −ε gives
 * |v⁺| ≤ ε Δt = 1e-9 rad/s for the rigid solvers; ccp-newton's compliant contact keeps a
 * velocity of order R λ (R = 1e-6 G_NN in force units, λ ≈ 4.3 N m, G_NN = Δt / M̃ ≈ 4e-3:
 * 1.7e-8 rad/s), asserted below 1e-7 rad/s. */
static void test_limit_every_solver(void **state) {
  double tau = 1.0 * G_ACC * 0.5 * cos(0.5);
  for (int k = 0; k < mr_solver_count(); ++k) {
    const char *name = mr_solver_at(k)->name;
    limit_run r = run_limit(name, 1.5);
    int soft = strcmp(name, "soft") == 0, newton = strcmp(name, "ccp-newton") == 0;
    print_message("limit %-13s overshoot %9.2e rad, lambda %.6f N m, |v| %.1e, converged %d\n",
                  name, r.overshoot, r.lambda, r.v, r.converged);
    assert_true(r.overshoot <= (soft ? 1e-2 : newton ? 1e-6 : 1e-9));
    assert_near(r.lambda, tau, 2.5e-4);
    if (!(r.v <= (newton ? 1e-7 : 1e-9))) fail_msg("%s: |v| = %g at rest", name, r.v);
  }
}

/* joint_limits: false turns the limit off: the arm swings past 0.5 rad */
static void test_limit_off(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "robots:\n"
                           "  - {name: arm, urdf: models/limited_arm.urdf, floating: false,\n"
                           "     joint_limits: false}\n",
                           "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  double qmax = 0.0;
  for (int k = 0; k < 1000; ++k) {
    tsim_steps(s, 1);
    qmax = fmax(qmax, mr_sim_q(s)[0]);
  }
  assert_true(qmax > 1.0);
  assert_int_equal(mr_sim_last(s)->nconstraints, 0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* ---- effort limits ---- */

/* A commanded torque of −10 N m (lifting) is clamped to the URDF effort −2 N m exactly (no PD:
 * the torque is explicit); 2 N m cannot hold the 4.905 N m gravity torque, so the arm still
 * falls onto its limit, which then carries m g l cos(0.5) − 2 (error bound as above). */
static void test_effort_clamps_command(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "robots:\n"
                           "  - {name: arm, urdf: models/limited_arm.urdf, floating: false,\n"
                           "     torques: {hinge: -10.0}}\n",
                           "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  for (int k = 0; k < 2000; ++k) {
    tsim_steps(s, 1);
    assert_near(mr_sim_torque(s)[0], -2.0, 0.0);
  }
  const double *lambda;
  assert_int_equal(mr_sim_constraints(s, NULL, &lambda), 1);
  assert_near(lambda[2], G_ACC * 0.5 * cos(0.5) - 2.0, 2.5e-4);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* A stiff PD (k_p = 100, k_d = 5) holding the arm horizontal needs 4.905 N m, above the effort
 * 2 N m: the arm sags onto its limit. A saturated step applies exactly ±2 N m; an unsaturated
 * one keeps the implicit PD, whose torque at v⁺ may exceed the start-of-step estimate (≤ 2 N m)
 * by k_p Δt |v⁺| + k_d |v⁺ − v| (the documented approximation): asserted step by step. */
static void test_effort_limits_pd(void **state) {
  mr_scene sc = tsim_parse("timestep: 0.001\n"
                           "robots:\n"
                           "  - {name: arm, urdf: models/limited_arm.urdf, floating: false,\n"
                           "     pd: {kp: 100.0, kd: 5.0}}\n",
                           "scenes");
  mr_sim *s = tsim_create(&sc, NULL);
  double v = 0.0, worst = 0.0;
  for (int k = 0; k < 2000; ++k) {
    tsim_steps(s, 1);
    double vn = mr_sim_v(s)[0], tau = fabs(mr_sim_torque(s)[0]);
    double allowance = 100.0 * 1e-3 * fabs(vn) + 5.0 * fabs(vn - v);
    assert_true(tau <= 2.0 + allowance + 1e-12);
    worst = fmax(worst, tau - 2.0);
    v = vn;
  }
  print_message("effort: max excess of the PD torque over the effort %.2e N m\n", worst);
  assert_near(mr_sim_q(s)[0], 0.5, 1e-9); /* on its limit */
  const double *lambda;
  assert_int_equal(mr_sim_constraints(s, NULL, &lambda), 1);
  assert_near(mr_sim_torque(s)[0], -2.0, 1e-12); /* saturated at rest */
  assert_near(lambda[2], G_ACC * 0.5 * cos(0.5) - 2.0, 2.5e-4);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* ---- scene keys ---- */

static void expect_error(const char *text, const char *needle) {
  mr_scene sc;
  mr_error err = {0};
  assert_int_not_equal(mr_scene_parse(text, "bad.yaml", "scenes", &sc, &err), MR_OK);
  if (!strstr(err.msg, needle)) fail_msg("expected '%s' in: %s", needle, err.msg);
}

static void test_constraint_scene_errors(void **state) {
  const char *robot = "robots:\n"
                      "  - {name: fb, urdf: models/four_bar.urdf, floating: false}\n";
  char text[1024];
  snprintf(text, sizeof text, "%sconstraints:\n  - {type: pont, body1: fb/link3}\n", robot);
  expect_error(text, "did you mean");
  snprintf(text, sizeof text, "%sconstraints:\n  - {type: point, body1: fb/nope, point: [0,0,0]}\n",
           robot);
  expect_error(text, "no body or link named 'fb/nope'");
  snprintf(text, sizeof text, "%sconstraints:\n  - {type: point, body1: fb/link3}\n", robot);
  expect_error(text, "missing 'point'");
  snprintf(text, sizeof text, "%sconstraints:\n  - {type: loop, body1: fb/link3, baumgarte: 2}\n",
           robot);
  expect_error(text, "'baumgarte': must be in [0, 1]");
  snprintf(text, sizeof text, "%sconstraints:\n  - {type: point, body1: world, point: [0,0,0]}\n",
           robot);
  expect_error(text, "the same body");
  expect_error("robots:\n  - {name: a, urdf: models/limited_arm.urdf, floating: false,\n"
               "     torques: {elbow: 1}}\n",
               "no 1-dof joint 'elbow'");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_solver_bilateral_block),
      cmocka_unit_test(test_bilateral_criteria),
      cmocka_unit_test(test_problem_file_kind),
      cmocka_unit_test(test_four_bar_closes),
      cmocka_unit_test(test_four_bar_every_solver),
      cmocka_unit_test(test_four_bar_open_without_constraint),
      cmocka_unit_test(test_point_anchor_free_body),
      cmocka_unit_test(test_limit_holds_under_gravity),
      cmocka_unit_test(test_limit_every_solver),
      cmocka_unit_test(test_limit_off),
      cmocka_unit_test(test_effort_clamps_command),
      cmocka_unit_test(test_effort_limits_pd),
      cmocka_unit_test(test_constraint_scene_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
