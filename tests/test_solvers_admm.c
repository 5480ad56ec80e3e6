/* Tests of ccp-admm, ncp-admm, ccp-newton and ncp-stagproj on hand-built problems with known
 * answers (tests/contact_problems.h): one contact sticking, sliding, taking off; a resting box
 * on four contacts; a box sliding on four contacts; a heavy box (1e3 kg) on a light one (1e-3
 * kg); the ρ adaptation; warm starts; ccp-newton's compliance checks; degenerate problems.
 *
 * Tolerances. The solvers stop at ε ≤ EPS = 1e-8 on their model's criterion. On a problem whose
 * G restricted to the active directions has smallest eigenvalue σ, a criterion ε bounds the
 * force error by about ε/σ: σ = Δt/m = 1e-3 for the unit masses (force error ~1e-5 N), and
 * σ ≈ Δt/m_heavy = 1e-6 for the heavy-on-light stack (force error ~1e-2 N on 9810 N).
 * ccp-newton solves the compliant problem, R = 1e-6·diag(G): its forces are off the rigid ones
 * by a relative 1e-6 on the unit-mass problems (G and R are both diagonal multiples there). */
#include "test_util.h"

#include <string.h>

#include "contact_problems.h"
#include "core/arena.h"
#include "moreau/contact.h"

#define EPS 1e-8
#define MU 0.5

static const char *const solvers[] = {"ccp-admm", "ncp-admm", "ccp-newton", "ncp-stagproj"};
#define N_MINE 4

typedef struct {
  double lambda[CP_MAX_N], c[CP_MAX_N], y[CP_MAX_N];
  mr_solver_stats stats;
  mr_solver_state state;
  mr_status status;
  mr_error err;
} result;

static mr_solver_settings settings(void) {
  mr_solver_settings s = mr_solver_settings_default();
  s.eps_abs = EPS;
  s.warm_start = 0;
  return s;
}

/* solve p with the named solver through the registry, arena sized by mr_solver_work_size */
static void solve(const char *name, const mr_contact_problem *p, const mr_solver_settings *s,
                  result *r) {
  mr_arena a;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(p->nc, p->nv)), 0);
  if (!r->state.y) {
    r->state.y = r->y;
    r->state.cap = CP_MAX_N;
  }
  r->status = mr_solve(name, p, s, &r->state, &a, r->lambda, r->c, &r->stats, &r->err);
  mr_arena_destroy(&a);
}

static void solve_ok(const char *name, const mr_contact_problem *p, const mr_solver_settings *s,
                     result *r) {
  memset(r, 0, sizeof *r);
  solve(name, p, s, r);
  if (r->status != MR_OK) fail_msg("%s: %s", name, r->err.msg);
  if (!r->stats.converged)
    fail_msg("%s: not converged, eps_model %g after %d iterations", name, r->stats.eps_model,
             r->stats.iterations);
  assert_true(r->stats.eps_model <= EPS);
  print_message("  %-13s iterations %4d  factorisations %4d  eps_model %.2e  eps_abs %.2e\n", name,
                r->stats.iterations, r->stats.factorizations, r->stats.eps_model, r->stats.eps_abs);
}

static int is_ncp(const char *name) {
  return strncmp(name, "ncp", 3) == 0;
}

/* sticking: λ = −G⁻¹g = (−1, 0, 9.81) inside the cone (1 ≤ 0.5·9.81), c = 0 */
static void test_single_sticking(void **unused) {
  cp_problem cp;
  cp_single(&cp, 1.0, 1e-3, 0.0, -9.81e-3, MU);
  mr_solver_settings s = settings();
  for (int k = 0; k < N_MINE; ++k) {
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    double want[3] = {-1.0, 0.0, 9.81};
    assert_vec_near(r.lambda, want, 3, 2e-5); /* ε/σ = 1e-5 N, compliance shift 1e-5 N */
    /* c: ε = 1e-8, plus ccp-newton's compliant velocity R λ = 1e-6 · 1e-3 · 9.81 ≈ 1e-8 */
    for (int i = 0; i < 3; ++i)
      assert_near(r.c[i], 0.0, 2e-8);
  }
}

/* sliding, g = (0.1, 0, −9.81e-3): the NCP gives λ_N = 9.81 (c_N = 0), λ_T = −μ λ_N t̂, and
 * c_T = 0.1 − 1e-3·4.905. The CCP gives λ = a(−μ, 0, 1) with c_N = μ c_T (contact at a
 * distance): c_N = 1e-3 a − 9.81e-3 and c_T = 0.1 − 1e-3 μ a, so a = (0.1 μ + 9.81e-3)/(1e-3(1 +
 * μ²)) */
static void test_single_sliding(void **unused) {
  cp_problem cp;
  cp_single(&cp, 1.0, 0.1, 0.0, -9.81e-3, MU);
  mr_solver_settings s = settings();
  double a = (0.1 * MU + 9.81e-3) / (1e-3 * (1.0 + MU * MU));
  for (int k = 0; k < N_MINE; ++k) {
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    if (is_ncp(solvers[k])) {
      double want[3] = {-MU * 9.81, 0.0, 9.81};
      /* as for sticking: ε/σ = 1e-5 N; c to ε plus a compliance R λ ≤ 1e-6 · 1e-3 · 9.81 */
      assert_vec_near(r.lambda, want, 3, 2e-5);
      assert_near(r.c[0], 0.1 - 1e-3 * MU * 9.81, 2e-8);
      assert_near(r.c[2], 0.0, 2e-8); /* Signorini: no contact at a distance */
    } else {
      double want[3] = {-MU * a, 0.0, a};
      assert_vec_near(r.lambda, want, 3, 1e-3 * a * 1e-2); /* 1e-5 relative, see above */
      assert_true(r.c[2] > 0.03);                          /* it leaves the plane... */
      /* ...at c_N = μ‖c_T‖, to ε plus ccp-newton's compliance R = 1e-6 · 1e-3 on both parts,
       * R_N a + μ R_T μ a = 1e-9 (1 + μ²) a = 6e-8 */
      assert_near(r.c[2], MU * hypot(r.c[0], r.c[1]), EPS + 1e-9 * (1.0 + MU * MU) * a);
    }
    assert_near(r.lambda[1], 0.0, 1e-9);
  }
}

/* take-off, g = (0.02, 0, 0.05) ∈ K_μ* (μ‖g_T‖ = 0.01 ≤ 0.05): λ = 0 and c = g for both models */
static void test_single_takeoff(void **unused) {
  cp_problem cp;
  cp_single(&cp, 1.0, 0.02, 0.0, 0.05, MU);
  mr_solver_settings s = settings();
  for (int k = 0; k < N_MINE; ++k) {
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    double zero[3] = {0, 0, 0};
    assert_vec_near(r.lambda, zero, 3, 1e-12);
    assert_vec_near(r.c, cp.g, 3, 1e-12);
  }
}

/* a 1 kg box on four contacts: Σ λ_N = m g = 9.81 N, c = 0 (G is rank 6 of 12). Σλ_N: four
 * force errors ε/σ = 1e-5 N and ccp-newton's compliance shift 1e-6 · 9.81 N, 5e-5 N; c: ε plus
 * ccp-newton's R λ ≤ 1e-6 · G_NN · 9.81 N ≈ 1e-8 (G_NN ≈ 1e-3 (1/m + r²/I) < 1e-3), 2e-8 */
static void test_resting_box(void **unused) {
  static cp_problem cp;
  double m[1] = {1.0};
  cp_stack(&cp, 1, m, MU);
  mr_solver_settings s = settings();
  for (int k = 0; k < N_MINE; ++k) {
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    assert_near(cp_interface_normal(r.lambda, 0), 9.81, 5e-5);
    for (int i = 0; i < 12; ++i)
      assert_near(r.c[i], 0.0, 2e-8);
  }
}

/* the same box pushed at 0.1 m/s along x: it keeps sliding (friction removes μ g Δt = 4.9e-3
 * m/s in a step) without tipping (μ h = 0.05 < half width 0.1), so the NCP gives Σλ_N = m g and
 * Σλ_x = −μ m g; the CCP lifts the box (every c_N = μ‖c_T‖ > 0). Sums of four forces: 4 ε/σ =
 * 4e-5 N (+ 1e-5 N of ccp-newton's compliance), Σλ_x also μ times the Σλ_N error: 6e-5 N; the
 * CCP's c_N = μ‖c_T‖ at the criterion ε (+ ccp-newton's R λ, below) */
static void test_sliding_box(void **unused) {
  static cp_problem cp;
  double m[1] = {1.0};
  cp_stack(&cp, 1, m, MU);
  cp_stack_push(&cp, 0, 0.1);
  mr_solver_settings s = settings();
  for (int k = 0; k < N_MINE; ++k) {
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    double fx = 0.0, fy = 0.0;
    for (int i = 0; i < 4; ++i)
      fx += r.lambda[3 * i], fy += r.lambda[3 * i + 1];
    assert_near(fy, 0.0, 5e-5);
    if (is_ncp(solvers[k])) {
      assert_near(cp_interface_normal(r.lambda, 0), 9.81, 4e-5);
      assert_near(fx, -MU * 9.81, 6e-5);
    } else {
      for (int i = 0; i < 4; ++i) {
        assert_true(r.c[3 * i + 2] > 1e-3);
        /* ccp-newton: its compliance R = 1e-6 diag G moves c by R λ, c_N − μ‖c_T‖ by at most
         * 1e-6 (G_NN λ_N + μ G_TT ‖λ_T‖) = 1e-6 (G_NN + μ² G_TT) λ_N on the cone */
        const double *Gi = cp.G + (3 * i) * 12 + 3 * i;
        double comp = 1e-6 * (Gi[2 * 12 + 2] + MU * MU * Gi[0]) * r.lambda[3 * i + 2];
        assert_near(r.c[3 * i + 2], MU * hypot(r.c[3 * i], r.c[3 * i + 1]), EPS + comp);
      }
    }
  }
}

/* a 1e3 kg box on a 1e-3 kg box (mass ratio 1e6): Σλ_N = 9810.00981 N on the ground and
 * 9810 N between the boxes, c = 0; ccp-newton (compliant) is checked against ccp-admm on the
 * same compliant problem */
static void test_heavy_on_light(void **unused) {
  static cp_problem cp;
  double m[2] = {1e-3, 1e3};
  cp_stack(&cp, 2, m, MU);
  mr_solver_settings s = settings();
  for (int k = 0; k < N_MINE; ++k) {
    if (strcmp(solvers[k], "ccp-newton") == 0) continue;
    result r;
    solve_ok(solvers[k], &cp.p, &s, &r);
    assert_near(cp_interface_normal(r.lambda, 0), (m[0] + m[1]) * 9.81, 2e-2);
    assert_near(cp_interface_normal(r.lambda, 1), m[1] * 9.81, 2e-2);
    for (int i = 0; i < 24; ++i)
      assert_near(r.c[i], 0.0, 1e-7);
  }
  /* ccp-newton's default compliance, given explicitly to ccp-admm */
  static double R[24];
  for (int i = 0; i < 8; ++i) {
    const double *G = cp.G + 3 * i * 24 + 3 * i;
    R[3 * i] = R[3 * i + 1] = 1e-6 * 0.5 * (G[0] + G[25]);
    R[3 * i + 2] = 1e-6 * G[50];
  }
  result rn, ra;
  solve_ok("ccp-newton", &cp.p, &s, &rn);
  cp.p.R = R;
  solve_ok("ccp-admm", &cp.p, &s, &ra);
  /* σ ≥ min R ≈ 1e-6 on this strongly convex problem: force error ≤ ε/σ = 1e-2 N each */
  assert_vec_near(rn.lambda, ra.lambda, 24, 2e-2);
  /* the compliant model lets the heavy box sink into the light one: far less than its weight
   * is carried (documented failure mode of R = ε diag(G) with a mass ratio) */
  assert_true(cp_interface_normal(rn.lambda, 1) < 0.5 * m[1] * 9.81);
}

/* from a poor ρ (1e5 times the derived one) ccp-admm refactors and still converges */
static void test_rho_adaptation(void **unused) {
  static cp_problem cp;
  double m[1] = {1.0};
  cp_stack(&cp, 1, m, MU);
  mr_solver_settings s = settings();
  result r0, r;
  solve_ok("ccp-admm", &cp.p, &s, &r0);
  s.rho = 10.0; /* λ_max(G) ≈ 7e-3 m/(N s) */
  solve_ok("ccp-admm", &cp.p, &s, &r);
  assert_true(r.stats.factorizations > 3);
  assert_true(r.stats.rho < 1e-2 * s.rho);
  assert_near(cp_interface_normal(r.lambda, 0), 9.81, 1e-4);
  /* without adaptation (ratio never met) the same start stalls far away in as many iterations */
  s.rho_ratio = 1e300;
  s.max_iter = r.stats.iterations;
  memset(&r0, 0, sizeof r0);
  solve("ccp-admm", &cp.p, &s, &r0);
  assert_int_equal(r0.stats.factorizations, 1);
  assert_false(r0.stats.converged);
}

/* warm start from the exact solution (λ and the state): ≤ 2 iterations; ccp-newton keeps its
 * primal velocity in the state. Without the state ccp-newton rebuilds u = M⁻¹Jᵀλ, which amplifies
 * round-off by R⁻¹G ≈ 1e6 (see newton.c) and may need a Newton step or two: ≤ 3 allowed */
static void test_warm_start(void **unused) {
  static cp_problem box, stack;
  double m1[1] = {1.0}, m2[2] = {1e-3, 1e3};
  cp_stack(&box, 1, m1, MU);
  cp_stack(&stack, 2, m2, MU);
  cp_stack_push(&box, 0, 0.1);
  const cp_problem *probs[2] = {&box, &stack};
  for (int k = 0; k < N_MINE; ++k)
    for (int j = 0; j < 2; ++j) {
      mr_solver_settings s = settings();
      static result r;
      solve_ok(solvers[k], &probs[j]->p, &s, &r);
      s.warm_start = 1;
      solve(solvers[k], &probs[j]->p, &s, &r);
      assert_int_equal(r.status, MR_OK);
      assert_true(r.stats.converged);
      print_message("  %-13s warm: %d iterations\n", solvers[k], r.stats.iterations);
      assert_true(r.stats.iterations <= 2);
      /* λ only */
      r.state.valid = 0;
      solve(solvers[k], &probs[j]->p, &s, &r);
      assert_int_equal(r.status, MR_OK);
      assert_true(r.stats.converged);
      assert_true(r.stats.iterations <= 3);
    }
}

/* ccp-newton refuses rigid contact: compliance_eps ≤ 0 with no R, an R with a zero entry, an
 * anisotropic tangential R; and accepts a valid R */
static void test_newton_compliance(void **unused) {
  cp_problem cp;
  cp_single(&cp, 1.0, 1e-3, 0.0, -9.81e-3, MU);
  mr_solver_settings s = settings();
  result r = {0};
  s.compliance_eps = 0.0;
  solve("ccp-newton", &cp.p, &s, &r);
  assert_int_equal(r.status, MR_ERR_INVALID);
  assert_non_null(strstr(r.err.msg, "compliance_eps"));
  double R0[3] = {1e-9, 1e-9, 0.0}, Ra[3] = {1e-9, 2e-9, 1e-9}, Rk[3] = {1e-4, 1e-4, 1e-4};
  s = settings();
  cp.p.R = R0;
  solve("ccp-newton", &cp.p, &s, &r);
  assert_int_equal(r.status, MR_ERR_INVALID);
  cp.p.R = Ra;
  solve("ccp-newton", &cp.p, &s, &r);
  assert_int_equal(r.status, MR_ERR_INVALID);
  /* a valid R: λ = −(G + R)⁻¹ g = −g / 1.1e-3 exactly */
  cp.p.R = Rk;
  solve_ok("ccp-newton", &cp.p, &s, &r);
  assert_near(r.lambda[2], 9.81e-3 / 1.1e-3, 1e-6);
  assert_near(r.lambda[0], -1e-3 / 1.1e-3, 1e-6);
}

/* zero rows of G (contact 1 with g_N < 0 cannot be satisfied), μ = 0, G = 0: finite outputs */
static void test_degenerate(void **unused) {
  static double G[36], g[6] = {0.01, 0.0, -0.01, 0.0, 0.0, -0.01}, mu[2] = {0.0, 0.5};
  for (int i = 0; i < 3; ++i)
    G[i * 6 + i] = 1e-3;
  mr_contact_problem p = {.nc = 2, .G = G, .g = g, .mu = mu};
  mr_solver_settings s = settings();
  s.max_iter = 200;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) memset(G, 0, sizeof G); /* G = 0 entirely */
    for (int k = 0; k < N_MINE; ++k) {
      result r = {0};
      solve(solvers[k], &p, &s, &r);
      for (int i = 0; i < 6; ++i) {
        assert_true(isfinite(r.lambda[i]));
        assert_true(isfinite(r.c[i]));
      }
      if (r.status == MR_OK) assert_true(isfinite(r.stats.eps_abs));
    }
  }
}

/* random problems G = J Jᵀ (J 18 x 10: G of rank 10 < 18) with R = 1e-3·I: the compliant CCP is
 * strongly convex (σ ≥ 1e-3), so ccp-admm, ccp-newton on J with M = I, ccp-newton on the
 * pivoted factor of G (no J given) and ccp-newton with plain Armijo backtracking must find the
 * same λ: within 2ε/σ = 2e-5 */
static void test_random_ccp_agree(void **unused) {
  enum { NC = 6, N = 18, NV = 10 };
  static double J[N * NV], M[NV * NV], G[N * N], g[N], mu[NC], R[N];
  uint64_t seed = 42;
  for (int trial = 0; trial < 5; ++trial) {
    for (int i = 0; i < N * NV; ++i)
      J[i] = test_rand(&seed, -1.0, 1.0);
    for (int i = 0; i < NV * NV; ++i)
      M[i] = i % (NV + 1) == 0 ? 1.0 : 0.0;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        double acc = 0.0;
        for (int v = 0; v < NV; ++v)
          acc += J[i * NV + v] * J[j * NV + v];
        G[i * N + j] = acc;
      }
      g[i] = test_rand(&seed, -1.0, 1.0), R[i] = 1e-3;
    }
    for (int i = 0; i < NC; ++i)
      mu[i] = test_rand(&seed, 0.2, 1.0);
    mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu, .R = R, .nv = NV, .J = J, .M = M};
    mr_solver_settings s = settings();
    result ra, rj, rl;
    solve_ok("ccp-admm", &p, &s, &ra);
    solve_ok("ccp-newton", &p, &s, &rj);
    p.J = NULL, p.M = NULL, p.nv = 0;
    solve_ok("ccp-newton", &p, &s, &rl);
    assert_vec_near(rj.lambda, ra.lambda, N, 2e-5);
    assert_vec_near(rl.lambda, ra.lambda, N, 2e-5);
    /* the paper's plain Armijo backtracking reaches the same point */
    s.newton_armijo_only = 1;
    solve_ok("ccp-newton", &p, &s, &rl);
    assert_vec_near(rl.lambda, ra.lambda, N, 2e-5);
  }
}

/* the next step: the sliding box pushed 1 % harder, warm started from the previous step's λ and
 * state, needs fewer iterations than from λ = 0 (ADMM solvers) */
static void test_warm_next_step(void **unused) {
  static cp_problem cp;
  double m[1] = {1.0};
  for (int k = 0; k < 2; ++k) {
    const char *name = solvers[k];
    mr_solver_settings s = settings();
    static result prev, cold, warm;
    cp_stack(&cp, 1, m, MU);
    cp_stack_push(&cp, 0, 0.1);
    solve_ok(name, &cp.p, &s, &prev);
    cp_stack_push(&cp, 0, 0.101);
    solve_ok(name, &cp.p, &s, &cold);
    warm = prev;
    warm.state.y = warm.y;
    s.warm_start = 1;
    solve(name, &cp.p, &s, &warm);
    assert_true(warm.stats.converged);
    print_message("  %-13s next step: cold %d, warm %d iterations\n", name, cold.stats.iterations,
                  warm.stats.iterations);
    assert_true(warm.stats.iterations < cold.stats.iterations);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_single_sticking),   cmocka_unit_test(test_single_sliding),
      cmocka_unit_test(test_single_takeoff),    cmocka_unit_test(test_resting_box),
      cmocka_unit_test(test_sliding_box),       cmocka_unit_test(test_heavy_on_light),
      cmocka_unit_test(test_rho_adaptation),    cmocka_unit_test(test_warm_start),
      cmocka_unit_test(test_newton_compliance), cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_random_ccp_agree),  cmocka_unit_test(test_warm_next_step),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
