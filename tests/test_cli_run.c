/* moreau run and moreau compare, run as programs: outputs, failures and their exit codes. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "cli_util.h"
#include "core/json.h"
#include "moreau/contact.h"
#include "moreau/model.h"

#define OUT 65536

static const char sliding_cube[] =
    "timestep: 0.001\n"
    "duration: 0.2\n"
    "contact: {margin: 0.001}\n"
    "bodies:\n"
    "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.4}]}\n"
    "  - name: cube\n"
    "    mass: 1.0\n"
    "    position: [0, 0, 0.1]\n"
    "    linear_velocity: [1.0, 0, 0]\n"
    "    geoms: [{type: box, size: [0.2, 0.2, 0.2], friction: 0.4}]\n";

/* the CSV has the documented columns and one row per step; the summary has the documented keys
 * and its energy matches the CSV's last row */
static void test_run_outputs(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(sliding_cube, ".yaml", scene);
  char csvb[128], sumb[128];
  const char *csv = cli_tmp(csvb, "run.csv"), *sum = cli_tmp(sumb, "run.json");
  snprintf(args, sizeof args, "run %s --out %s --summary %s --quiet", scene, csv, sum);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  FILE *f = fopen(csv, "r");
  assert_non_null(f);
  static char line[1 << 16];
  assert_non_null(fgets(line, sizeof line, f));
  const char *cols[] = {"t,",
                        "cube/root_joint_x,",
                        "cube/root_joint_qw,",
                        "cube/root_joint_vx,",
                        "cube/root_joint_wz,",
                        "energy,",
                        "ncontacts,",
                        "iterations,",
                        "eps_abs,",
                        "penetration,",
                        "solve_us"};
  for (size_t k = 0; k < sizeof cols / sizeof cols[0]; ++k)
    if (!strstr(line, cols[k])) fail_msg("CSV header lacks %s: %s", cols[k], line);
  int rows = 0;
  double energy_last = 0.0;
  while (fgets(line, sizeof line, f)) {
    ++rows;
    /* energy is the 15th column (t, 7 q, 6 v, energy) */
    char *p = line;
    for (int c = 0; c < 14; ++c)
      p = strchr(p, ',') + 1;
    energy_last = strtod(p, NULL);
  }
  fclose(f);
  assert_int_equal(rows, 200);
  mr_json *js = NULL;
  mr_error err;
  assert_int_equal(mr_json_load(sum, &js, &err), MR_OK);
  const char *keys[] = {"steps",        "sim_time",        "wall_time",       "realtime_factor",
                        "max_eps_abs",  "max_penetration", "mean_iterations", "max_iterations",
                        "energy_start", "energy_end",      "warnings"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
    if (!mr_json_get(js, keys[k])) fail_msg("summary lacks '%s'", keys[k]);
  assert_near(mr_json_get(js, "steps")->number, 200, 0);
  /* the same double printed with 17 digits in both files: read back exactly */
  assert_near(mr_json_get(js, "energy_end")->number, energy_last, 0);
  /* the stages' shares of the step: the step's time is the sum of its stages (sim.h), so the
   * shares add up to 1 to round-off (7 sums of 200 terms and 7 divisions: 1e-12) */
  const char *shares[] = {"collision_share",  "assembly_share", "consistency_share",
                          "solver_share",     "dynamics_share", "kinematics_share",
                          "integration_share"};
  double total = 0.0;
  for (size_t k = 0; k < sizeof shares / sizeof shares[0]; ++k) {
    const mr_json *v = mr_json_get(js, shares[k]);
    if (!v) fail_msg("summary lacks '%s'", shares[k]);
    assert_true(v->number >= 0.0 && v->number <= 1.0);
    total += v->number;
  }
  assert_near(total, 1.0, 1e-12);
  assert_true(mr_json_get(js, "mean_step_us")->number > 0.0);
  mr_json_free(js);
  remove(csv), remove(sum), remove(scene);
}

/* the summary counts unconverged steps on both criteria: lcp-pgs stops on its own (pyramid)
 * criterion and converges at every step of the cube sliding at 30° from its tangent axes, while
 * its friction force sits on a corner of the pyramid, outside the cone by a fraction of μλ_N —
 * far above eps_abs = 1e-6 on the NCP criterion, so every step with contact counts there; ncp-pgs
 * meets both at every step */
static void test_run_ncp_not_converged(void **state) {
  char scene[64], args[512], out[OUT], text[sizeof sliding_cube + 64];
  const char *v = strstr(sliding_cube, "linear_velocity: [1.0, 0, 0]");
  assert_non_null(v);
  snprintf(text, sizeof text, "%.*slinear_velocity: [0.866, 0.5, 0]%s", (int)(v - sliding_cube),
           sliding_cube, v + strlen("linear_velocity: [1.0, 0, 0]"));
  cli_write_temp(text, ".yaml", scene);
  char sumb[128];
  const char *sum = cli_tmp(sumb, "run_ncp.json");
  static const char *solvers[] = {"lcp-pgs", "ncp-pgs"};
  for (int k = 0; k < 2; ++k) {
    snprintf(args, sizeof args, "run %s --solver %s --summary %s --quiet", scene, solvers[k], sum);
    assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
    mr_json *js = NULL;
    mr_error err;
    assert_int_equal(mr_json_load(sum, &js, &err), MR_OK);
    assert_non_null(mr_json_get(js, "ncp_not_converged"));
    double own = mr_json_get(js, "not_converged")->number;
    double ncp = mr_json_get(js, "ncp_not_converged")->number;
    print_message("%s: not_converged %g, ncp_not_converged %g\n", solvers[k], own, ncp);
    assert_true(own == 0.0);
    if (k == 0)
      assert_true(ncp == 200.0); /* the cube slides the whole 0.2 s (it stops at 0.255 s) */
    else
      assert_true(ncp == 0.0);
    mr_json_free(js);
  }
  remove(sum), remove(scene);
}

/* the contacts CSV of the sliding cube: 4 rows a step, and the world forces sum to the weight
 * (Σf_z = m g) and to Coulomb's sliding friction against the motion (Σf_x = −μ m g). ncp-pgs stops
 * at ε_abs ≤ 1e-6 N per contact, so the 4 contacts leave at most 4e-6 N on each sum (measured
 * 1.0e-6); the CSV's 17 digits read back exactly */
static void test_run_contacts_csv(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(sliding_cube, ".yaml", scene);
  char csvb[128];
  const char *csv = cli_tmp(csvb, "contacts.csv");
  snprintf(args, sizeof args, "run %s --contacts %s --quiet --duration 0.1", scene, csv);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  FILE *f = fopen(csv, "r");
  assert_non_null(f);
  char line[1024];
  assert_non_null(fgets(line, sizeof line, f));
  assert_non_null(strstr(line, "lambda_t1,lambda_t2,lambda_n,fx,fy,fz"));
  double t_prev = -1, fx = 0, fz = 0;
  int rows = 0, steps = 0;
  while (fgets(line, sizeof line, f)) {
    double t, v[16];
    char g1[64], g2[64];
    int k;
    if (sscanf(line, "%lf,%d,%63[^,],%63[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf",
               &t, &k, g1, g2, v, v + 1, v + 2, v + 3, v + 4, v + 5, v + 6, v + 7, v + 8, v + 9,
               v + 10, v + 11, v + 12) != 17)
      fail_msg("bad row: %s", line);
    if (t != t_prev) {
      if (steps > 1) { /* the first step's forces also stop the initial settling */
        assert_near(fz, 9.81, 4 * 1e-6);
        assert_near(fx, -0.4 * 9.81, 4 * 1e-6);
      }
      t_prev = t, fx = fz = 0, ++steps;
    }
    fx += v[10], fz += v[12];
    ++rows;
  }
  fclose(f);
  assert_int_equal(steps, 100);
  assert_int_equal(rows, 400);
  remove(csv), remove(scene);
}

/* a diverging run exits 1, names the step, and leaves no trajectory behind */
static void test_run_divergence(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp("timestep: 0.001\nduration: 1.0\nbodies:\n"
                 "  - {name: ball, mass: 1.0, geoms: [{type: sphere, radius: 0.1}]}\n"
                 "forces:\n  - {body: ball, type: constant, force: [1.0e9, 0, 0]}\n",
                 ".yaml", scene);
  char csvb[128];
  const char *csv = cli_tmp(csvb, "div.csv");
  snprintf(args, sizeof args, "run %s --out %s --quiet", scene, csv);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 1);
  assert_non_null(strstr(out, "diverged at step 1"));
  assert_int_equal(access(csv, F_OK), -1);
  remove(scene);
}

/* bad usage and bad input exit 2 with a message */
static void test_run_errors(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(sliding_cube, ".yaml", scene);
  struct {
    const char *args, *expect;
  } cases[] = {
      {"run", "missing SCENE.yaml"},
      {"run /nonexistent/scene.yaml", "/nonexistent/scene.yaml"},
      {"run %s --solver ncp-pgz", "ncp-pgz"},
      {"run %s --dt -1", "--dt needs a positive number"},
      {"run %s --set solver.max_itr=5", "max_itr"},
      {"run %s --set contact.margin=abc", "abc"},
      {"run %s --bogus", "unknown option '--bogus'"},
      {"compare %s --solvers ncp-pgs,nope", "unknown solver 'nope'"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    snprintf(args, sizeof args, cases[k].args, scene);
    int code = cli_run(args, 1, out, sizeof out);
    if (code != 2 || !strstr(out, cases[k].expect))
      fail_msg("'moreau %s': exit %d, output: %s", args, code, out);
  }
  remove(scene);
}

/* compare runs the scene once per solver: one table row for each, every column checked
 * against what the run must give. The cube (1 kg, μ = 0.4, v₀ = 1 m/s) slides for the whole
 * 0.05 s (it stops at v₀/(μ g) = 0.255 s): 50 steps; for the rigid Coulomb models (NCP, the
 * LCP pyramid sliding along its facet axis x, RaiSim with the de Saxcé term) semi-implicit
 * Euler reproduces E(t) = ½ m (v₀ − μ g t)² exactly at t = kΔt (A3), so the printed drift is
 * ½ m ((v₀ − μ g T)² − v₀²) = −0.17695 J up to its printing (%.3g: half a unit of the third
 * digit, 5e-4 J) plus the solver's share (≤ 2e-7 J, test_findings B1); their NCP residual is
 * within the default tolerance ε_abs = 1e-6 on every step. The CCP solvers solve one convex
 * problem whose velocities are unique (a strictly convex QP in v), so their drifts agree to
 * the printing; RaiSim without the de Saxcé term dissipates less than Coulomb (B1). */
static void test_compare_every_solver(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(sliding_cube, ".yaml", scene);
  snprintf(args, sizeof args, "compare %s --duration 0.05", scene);
  assert_int_equal(cli_run(args, 0, out, sizeof out), 0);
  const double mu = 0.4, v0 = 1.0, T = 0.05, vT = v0 - mu * 9.81 * T;
  const double coulomb = 0.5 * (vT * vT - v0 * v0), print = 5e-4;
  double ccp_drift = NAN;
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = mr_solver_at(i);
    char row[64], status[32];
    snprintf(row, sizeof row, "\n%s ", info->name);
    const char *at = strstr(out, row);
    if (!at) fail_msg("no row for %s in:\n%s", info->name, out);
    long steps, not_conv;
    int max_it;
    double us, mean_it, eps, pen, drift;
    if (sscanf(at + strlen(row), "%ld %lf %lf %d %lf %lf %lf %ld %31s", &steps, &us, &mean_it,
               &max_it, &eps, &pen, &drift, &not_conv, status) != 9)
      fail_msg("unreadable row for %s in:\n%s", info->name, out);
    if (steps != 50 || strcmp(status, "ok") != 0 || not_conv != 0 || max_it < mean_it)
      fail_msg("%s: %ld steps, status %s, %ld not converged, max_it %d < mean %g", info->name,
               steps, status, not_conv, max_it, mean_it);
    int coulomb_model = !strcmp(info->model, "NCP") || !strcmp(info->model, "LCP") ||
                        !strcmp(info->name, "raisim-ds");
    if (coulomb_model && !(fabs(drift - coulomb) <= print))
      fail_msg("%s: energy drift %g J, closed form %g J", info->name, drift, coulomb);
    if (!strcmp(info->model, "NCP") && !(eps <= 1e-6))
      fail_msg("%s: max NCP residual %g above the tolerance 1e-6", info->name, eps);
    if (!strcmp(info->model, "CCP")) {
      if (isnan(ccp_drift)) ccp_drift = drift;
      if (!(fabs(drift - ccp_drift) <= 2 * print))
        fail_msg("%s: energy drift %g J, another CCP solver %g J", info->name, drift, ccp_drift);
    }
    if (!strcmp(info->name, "raisim") && !(drift > coulomb + print))
      fail_msg("raisim: energy drift %g J, not above Coulomb's %g J", drift, coulomb);
  }
  remove(scene);
}

/* collide --json: the 4 corners of a box resting on the ground, at Φ_N = 0, normal +z */
static void test_collide(void **state) {
  char scene[64], args[512], out[OUT];
  cli_write_temp(sliding_cube, ".yaml", scene);
  snprintf(args, sizeof args, "collide %s --json", scene);
  assert_int_equal(cli_run(args, 0, out, sizeof out), 0);
  mr_json *js = NULL;
  mr_error err;
  assert_int_equal(mr_json_parse(out, "stdout", &js, &err), MR_OK);
  const mr_json *cs = mr_json_get(js, "contacts");
  assert_non_null(cs);
  assert_int_equal(cs->count, 4);
  for (const mr_json *c = cs->child; c; c = c->next) {
    double p[3], n[3];
    assert_string_equal(mr_json_get(c, "geom1")->string, "cube/0");
    assert_string_equal(mr_json_get(c, "geom2")->string, "ground/0");
    assert_int_equal(mr_json_read_vector(mr_json_get(c, "point"), "o", "point", p, 3, &err), 0);
    assert_int_equal(mr_json_read_vector(mr_json_get(c, "normal"), "o", "normal", n, 3, &err), 0);
    /* an unrotated box: the corners are the centre ± the half extents 0.1 (one rounding each),
     * the ground's normal is e_z as built, printed with 17 digits */
    assert_near(fabs(p[0]), 0.1, DBL_EPSILON * 0.1);
    assert_near(fabs(p[1]), 0.1, DBL_EPSILON * 0.1);
    assert_near(n[2], 1.0, 0);
    assert_near(mr_json_get(c, "distance")->number, 0.0, DBL_EPSILON * 0.1);
  }
  mr_json_free(js);
  snprintf(args, sizeof args, "collide %s --bogus", scene);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  remove(scene);
}

/* list names every registered solver, geometry type and joint type */
static void test_list(void **state) {
  char out[OUT];
  assert_int_equal(cli_run("list", 0, out, sizeof out), 0);
  for (int i = 0; i < mr_solver_count(); ++i)
    if (!strstr(out, mr_solver_at(i)->name)) fail_msg("list lacks %s", mr_solver_at(i)->name);
  for (int t = 0; t < MR_GEOM_TYPE_COUNT; ++t)
    assert_non_null(strstr(out, mr_geom_type_name(t)));
  assert_non_null(strstr(out, "spherical"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_run_outputs),      cmocka_unit_test(test_run_ncp_not_converged),
      cmocka_unit_test(test_run_contacts_csv), cmocka_unit_test(test_run_divergence),
      cmocka_unit_test(test_run_errors),       cmocka_unit_test(test_compare_every_solver),
      cmocka_unit_test(test_collide),          cmocka_unit_test(test_list),
  };
  return cmocka_run_group_tests_name("cli_run", tests, NULL, NULL);
}
