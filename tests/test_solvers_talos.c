/* Regression tests of ccp-admm, ncp-admm and ncp-stagproj on the contact problems of Talos
 * standing on its two box feet (tests/fixtures/talos_stand_step{7,8,9}.json: steps 7-9 of
 * scenes/talos_stand.yaml run with ncp-pgs, dumped by `moreau run --dump-problems`). Eight
 * contacts, G 24 x 24 of rank 12 (hyperstatic feet), and g with a small component outside the
 * range of G (the gap term φ/Δt of the contacts inside the margin is not affine over a foot's
 * corners), so that an exact solution lifts or slides corners: the hard case of the ADMM ρ rule.
 *
 * What is checked, with the measured values the bounds leave room around:
 * - ncp-stagproj reaches the NCP criterion 1e-6 (measured 52, 7586 and 2708 outer iterations);
 * - ccp-admm stays finite and reaches its CCP criterion 1e-4 in 1e4 iterations (measured
 *   6e-6, 4e-5, 1e-5; before the fix 8e-6, 9e-5, 1e-5);
 * - ncp-admm warm started along the three steps as the simulator does (λ and the solver state
 *   carried over) stays finite and bounded: before the fix it returned |λ| ≈ 8.5e6 N at step 8
 *   (criterion 9e13); now the best iterate, criterion ≤ 0.1 (measured 4.4e-2, 5.5e-4, 1.0e-3);
 * - the total normal force of ncp-admm agrees with ncp-stagproj's converged one within 2 %:
 *   Σλ_N is the base's vertical force, a linear function of Jᵀλ, which is unique on the
 *   solution set; a criterion ε bounds its error by about ε/σ⁺·√n with σ⁺ ≈ 0.075 the smallest
 *   nonzero eigenvalue of G: 0.1/0.075·5 ≈ 7 N, under 2 % of the
 * 500-640 N totals (measured agreement: 0.08 N at step 7, < 1e-3 N at steps 8 and 9). */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "contact/problem_io.h"
#include "core/arena.h"
#include "moreau/contact.h"

#define NSTEPS 3
#define NMAX 24

static const char *const fixtures[NSTEPS] = {"tests/fixtures/talos_stand_step7.json",
                                             "tests/fixtures/talos_stand_step8.json",
                                             "tests/fixtures/talos_stand_step9.json"};

typedef struct {
  double lambda[NMAX], c[NMAX], y[NMAX];
  mr_solver_state state;
  mr_solver_stats stats;
} run;

static void load(int k, mr_problem_file *f) {
  mr_error err;
  if (mr_problem_file_load(fixtures[k], f, &err) != MR_OK) fail_msg("%s", err.msg);
  assert_int_equal(f->nc, 8);
}

/* solve fixture k with the named solver, warm from r when warm (λ and state kept in r) */
static void solve(const char *name, int k, int warm, run *r) {
  mr_problem_file f;
  load(k, &f);
  if (!warm) {
    memset(r, 0, sizeof *r);
  }
  r->state.y = r->y;
  r->state.cap = NMAX;
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = warm;
  mr_arena a;
  mr_error err;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(f.nc, 0)), 0);
  mr_status st = mr_solve(name, &f.problem, &s, &r->state, &a, r->lambda, r->c, &r->stats, &err);
  mr_arena_destroy(&a);
  mr_problem_file_free(&f);
  if (st != MR_OK) fail_msg("%s step %d: %s", name, k, err.msg);
  for (int i = 0; i < NMAX; ++i) {
    assert_true(isfinite(r->lambda[i]));
    assert_true(isfinite(r->c[i]));
  }
  print_message("  %-13s %s fixture %d: converged %d, iterations %5d, own criterion %.2e\n", name,
                warm ? "warm" : "cold", k, r->stats.converged, r->stats.iterations,
                r->stats.eps_model);
}

static double total_normal(const double *lambda) {
  double t = 0.0;
  for (int i = 0; i < NMAX / 3; ++i)
    t += lambda[3 * i + 2];
  return t;
}

static double max_abs(const double *x) {
  double m = 0.0;
  for (int i = 0; i < NMAX; ++i)
    m = fmax(m, fabs(x[i]));
  return m;
}

static void test_stagproj_converges(void **unused) {
  (void)unused;
  for (int k = 0; k < NSTEPS; ++k) {
    run r;
    solve("ncp-stagproj", k, 0, &r);
    assert_true(r.stats.converged);
    assert_true(r.stats.eps_abs <= 1e-6);
  }
}

static void test_ccp_admm_cold_and_warm(void **unused) {
  (void)unused;
  static run warm;
  for (int k = 0; k < NSTEPS; ++k) {
    run cold;
    solve("ccp-admm", k, 0, &cold);
    assert_true(cold.stats.eps_model <= 1e-4);
    solve("ccp-admm", k, k > 0, &warm);
    assert_true(warm.stats.eps_model <= 1e-4);
    /* no corner force beyond twice the total normal force (500-640 N) */
    assert_true(max_abs(cold.lambda) < 1000.0);
    assert_true(max_abs(warm.lambda) < 1000.0);
  }
}

static void test_ncp_admm_warm_chain_bounded(void **unused) {
  (void)unused;
  static run warm;
  for (int k = 0; k < NSTEPS; ++k) {
    run ref;
    solve("ncp-stagproj", k, 0, &ref);
    solve("ncp-admm", k, k > 0, &warm);
    assert_true(warm.stats.eps_abs <= 0.1);
    assert_true(max_abs(warm.lambda) < 1000.0);
    double t = total_normal(warm.lambda), t_ref = total_normal(ref.lambda);
    print_message("    total normal force %.3f N (ncp-stagproj %.3f N)\n", t, t_ref);
    assert_near(t, t_ref, 0.02 * t_ref);
  }
}

static void test_ncp_admm_cold_bounded(void **unused) {
  (void)unused;
  for (int k = 0; k < NSTEPS; ++k) {
    run r;
    solve("ncp-admm", k, 0, &r);
    assert_true(r.stats.eps_abs <= 0.1);
    assert_true(max_abs(r.lambda) < 1000.0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stagproj_converges),
      cmocka_unit_test(test_ccp_admm_cold_and_warm),
      cmocka_unit_test(test_ncp_admm_warm_chain_bounded),
      cmocka_unit_test(test_ncp_admm_cold_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
