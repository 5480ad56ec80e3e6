/* lcp-lemke (src/contact/lcp_lemke.c): Lemke's pivoting on the Stewart-Trinkle LCP. Closed forms
 * (a block on a slope below and above tan⁻¹ μ, a sliding block, an oblique slide on the
 * diamond), a stack of cubes against lcp-pgs, random frictionless problems against lcp-pgs,
 * degenerate problems (contacts carrying no force, duplicated contacts) and the contact cap. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "contact/solvers.h"
#include "contact_problems.h"
#include "core/arena.h"
#include "moreau/contact.h"

/* solve p with solver name (defaults, cold), λ and c (3 nc) out */
static mr_status solve(const char *name, const mr_contact_problem *p, double *lambda, double *c,
                       mr_solver_stats *stats, mr_error *err) {
  mr_arena a;
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = 0;
  if (!strcmp(name, "lcp-pgs")) s.eps_abs = 0, s.eps_rel = 0, s.max_iter = 200000;
  const mr_solver_info *info = mr_solver_find(name);
  assert_non_null(info);
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size_for(info, p->nc, 0, 0, 0)), 0);
  mr_status st = mr_solve(name, p, &s, NULL, &a, lambda, c, stats, err);
  mr_arena_destroy(&a);
  return st;
}

/* the slack of a few pivots on a tableau whose entries are Δt/m and 1: each pivot's row
 * operations lose a few ulps relative to the largest value (Higham §9: Gauss-Jordan elimination
 * with the ratio test's pivots, growth ≤ the tableau's entries' ratio, here ≤ 1e3); so force
 * errors ≤ 1e3 · 8 ε · |λ| and velocity errors ≤ that times Δt/m */
static double pivot_tol(double scale) {
  return 1e3 * 8 * DBL_EPSILON * scale;
}

/* A block (point mass m) at rest on a slope of angle θ, t₁ downhill: one step of gravity gives
 * the free velocity g = Δt 9.81 (sin θ, 0, −cos θ). Below tan⁻¹ μ it sticks: λ = m 9.81 (−sin θ,
 * 0, cos θ), c = 0; above it slides: λ_N = m 9.81 cos θ, λ_t1 = −μ λ_N, c_t1 = Δt 9.81 (sin θ −
 * μ cos θ). Along an axis the diamond and the box agree, so lcp-pgs gives the same. */
static void test_slope(void **state) {
  const double m = 2.0, mu = 0.5, gr = CP_GRAVITY;
  const double angles[2] = {0.9 * atan(mu), 1.2 * atan(mu)};
  for (int k = 0; k < 2; ++k) {
    double th = angles[k], lambda[3], c[3];
    cp_problem cp;
    cp_single(&cp, m, CP_DT * gr * sin(th), 0.0, -CP_DT * gr * cos(th), mu);
    mr_solver_stats st;
    mr_error err;
    assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
    assert_true(st.converged);
    double tol = pivot_tol(m * gr), vtol = tol * CP_DT / m;
    assert_near(lambda[2], m * gr * cos(th), tol);
    assert_near(lambda[1], 0.0, tol);
    assert_near(c[2], 0.0, vtol);
    if (k == 0) {
      assert_near(lambda[0], -m * gr * sin(th), tol);
      assert_near(c[0], 0.0, vtol);
    } else {
      assert_near(lambda[0], -mu * m * gr * cos(th), tol);
      assert_near(c[0], CP_DT * gr * (sin(th) - mu * cos(th)), vtol);
    }
    /* the criterion's terms are forces times velocities: |λ| times the velocities' error */
    assert_true(st.eps_model <= m * gr * vtol);
    print_message("slope %.3f rad: %d pivots\n", th, st.iterations);
  }
}

/* A block sliding at v₀ along t₁ (v₀ > μ 9.81 Δt: it keeps sliding this step): λ_N = m 9.81,
 * λ_t1 = −μ λ_N, c_t1 = v₀ − μ 9.81 Δt. Sliding obliquely at 45° (v₀ along t₁ + t₂), the
 * diamond's friction is the midpoint of its edge, λ_T = −(μ λ_N / 2)(1, 1) (both directions
 * −t₁, −t₂ are most opposed to c_T, which stays on the diagonal), of magnitude μ λ_N/√2: the
 * diamond's known anisotropy, where lcp-pgs's box gives the corner −μ λ_N (1, 1). */
static void test_sliding(void **state) {
  const double m = 1.0, mu = 0.3, v0 = 0.5, gr = CP_GRAVITY;
  double lambda[3], c[3];
  cp_problem cp;
  mr_solver_stats st;
  mr_error err;
  double tol = pivot_tol(m * gr), vtol = tol * CP_DT / m;
  cp_single(&cp, m, v0, 0.0, -CP_DT * gr, mu);
  assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
  assert_near(lambda[2], m * gr, tol);
  assert_near(lambda[0], -mu * m * gr, tol);
  assert_near(lambda[1], 0.0, tol);
  assert_near(c[0], v0 - mu * gr * CP_DT, vtol);
  cp_single(&cp, m, v0, v0, -CP_DT * gr, mu);
  assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
  assert_true(st.converged);
  assert_near(lambda[2], m * gr, tol);
  assert_near(lambda[0], -0.5 * mu * m * gr, tol);
  assert_near(lambda[1], -0.5 * mu * m * gr, tol);
  assert_near(c[0], c[1], vtol);
  assert_near(c[0], v0 - 0.5 * mu * gr * CP_DT, vtol);
  double lp[3], cpgs[3];
  assert_int_equal(solve("lcp-pgs", &cp.p, lp, cpgs, &st, &err), MR_OK);
  assert_near(lp[0], -mu * m * gr, 1e-9 * m * gr); /* the box's corner, PGS to its stall */
}

/* A stack of two cubes on four corner contacts each (8 contacts, hyperstatic: the normal forces
 * are not unique): Lemke's answer is at rest (c = 0), carries the weights through each
 * interface (Σ λ_N = the weight above: closed form), and satisfies its LCP; lcp-pgs on the same
 * problem carries the same interface sums. Tolerances: pivot_tol on the forces of the heaviest
 * interface; velocities that times the largest entry of G. */
static void test_stack_against_pgs(void **state) {
  const double masses[2] = {1.0, 0.5}, mu = 0.6;
  cp_problem cp;
  cp_stack(&cp, 2, masses, mu);
  double lambda[24], c[24], lp[24], cpg[24];
  mr_solver_stats st, sp;
  mr_error err;
  assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
  assert_true(st.converged);
  assert_int_equal(solve("lcp-pgs", &cp.p, lp, cpg, &sp, &err), MR_OK);
  double W = (masses[0] + masses[1]) * CP_GRAVITY, gmax = 0;
  for (int k = 0; k < 24 * 24; ++k)
    gmax = fmax(gmax, fabs(cp.G[k]));
  for (int itf = 0; itf < 2; ++itf) {
    double want = (itf ? masses[1] : masses[0] + masses[1]) * CP_GRAVITY, sum = 0, sum_p = 0;
    for (int k = 0; k < 4; ++k)
      sum += lambda[3 * (4 * itf + k) + 2], sum_p += lp[3 * (4 * itf + k) + 2];
    assert_near(sum, want, pivot_tol(W));
    assert_near(sum_p, want, 1e-6 * W); /* PGS at its stall on a hyperstatic stack */
  }
  for (int k = 0; k < 24; ++k)
    assert_near(c[k], 0.0, pivot_tol(W) * gmax);
  print_message("stack: lcp-lemke %d pivots, eps_model %.3g; lcp-pgs %d sweeps\n", st.iterations,
                st.eps_model, sp.iterations);
}

/* Random frictionless problems (μ = 0: both solve the same LCP, 0 ≤ λ_N ⟂ c_N ≥ 0, whose
 * solution is unique for G positive definite): G = A Aᵀ + 0.1 I (eigenvalues ≥ 0.1, entries ≤
 * 4), g uniform in [−1, 1]: λ agrees with lcp-pgs run to its stall to 1e-9 (PGS converges
 * linearly to round-off on a positive definite G; the error of either ≤ κ(G) ε |λ| with κ(G) ≤
 * 1e3 and |λ| ≤ 1e2 is below 1e-10). */
static void test_random_frictionless(void **state) {
  uint64_t seed = 12345;
  for (int trial = 0; trial < 20; ++trial) {
    enum { NC = 4, N = 12 };
    double A[N * N], G[N * N], g[N], mu[NC] = {0}, lambda[N], c[N], lp[N], cpg[N];
    for (int k = 0; k < N * N; ++k)
      A[k] = test_rand(&seed, -0.5, 0.5);
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) {
        double s = i == j ? 0.1 : 0.0;
        for (int k = 0; k < N; ++k)
          s += A[i * N + k] * A[j * N + k];
        G[i * N + j] = s;
      }
    for (int k = 0; k < N; ++k)
      g[k] = test_rand(&seed, -1, 1);
    mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu};
    mr_solver_stats st, sp;
    mr_error err;
    assert_int_equal(solve("lcp-lemke", &p, lambda, c, &st, &err), MR_OK);
    assert_true(st.converged);
    assert_int_equal(solve("lcp-pgs", &p, lp, cpg, &sp, &err), MR_OK);
    for (int i = 0; i < NC; ++i)
      assert_near(lambda[3 * i + 2], lp[3 * i + 2], 1e-9);
  }
}

/* Degenerate problems terminate with a solution, in few pivots: contacts that carry no force
 * (separating, g_N > 0; touching, g = 0 exactly), and the resting block's contact duplicated 2,
 * 3 and 8 times (G singular, every ratio test a tie: the lexicographic rule). The duplicated
 * contacts' normal forces sum to the weight (closed form, pivot_tol). */
static void test_degenerate(void **state) {
  const double m = 1.5, mu = 0.4, gr = CP_GRAVITY;
  enum { MAXC = 8 };
  double G[9 * MAXC * MAXC], g[3 * MAXC], mus[MAXC], lambda[3 * MAXC], c[3 * MAXC];
  mr_solver_stats st;
  mr_error err;
  const int copies[4] = {2, 3, 8, 2};
  for (int t = 0; t < 4; ++t) {
    int nc = copies[t], n = 3 * nc;
    memset(G, 0, sizeof G);
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j)
        for (int a = 0; a < 3; ++a)
          G[(3 * i + a) * n + 3 * j + a] = CP_DT / m;
    for (int i = 0; i < nc; ++i) {
      g[3 * i] = t == 3 ? 0.2 : 0.0, g[3 * i + 1] = 0.0, g[3 * i + 2] = -CP_DT * gr;
      mus[i] = mu;
    }
    mr_contact_problem p = {.nc = nc, .G = G, .g = g, .mu = mus};
    assert_int_equal(solve("lcp-lemke", &p, lambda, c, &st, &err), MR_OK);
    assert_true(st.converged);
    assert_true(st.iterations <= 6 * n);
    double sum = 0, sumt = 0;
    for (int i = 0; i < nc; ++i)
      sum += lambda[3 * i + 2], sumt += lambda[3 * i];
    assert_near(sum, m * gr, pivot_tol(m * gr));
    if (t == 3) assert_near(sumt, -mu * m * gr, pivot_tol(m * gr)); /* sliding duplicates */
    print_message("%d duplicated contacts: %d pivots\n", nc, st.iterations);
  }
  // no force: separating (g_N > 0; the slack γ still pivots in, as the sliding speed 0.3) and
  // touching with g = 0 (q = 0: no pivot)
  cp_problem cp;
  cp_single(&cp, m, 0.3, 0.0, 0.01, mu);
  assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
  assert_true(st.converged);
  for (int a = 0; a < 3; ++a)
    assert_near(lambda[a], 0.0, 0.0);
  cp_single(&cp, m, 0.0, 0.0, 0.0, mu);
  assert_int_equal(solve("lcp-lemke", &cp.p, lambda, c, &st, &err), MR_OK);
  assert_int_equal(st.iterations, 0);
  assert_near(lambda[2], 0.0, 0.0);
}

/* More than MR_LEMKE_MAX_CONTACTS contacts: refused with an error naming the count and cap. */
static void test_cap(void **state) {
  enum { NC = MR_LEMKE_MAX_CONTACTS + 1, N = 3 * NC };
  static double G[N * N], g[N], mu[NC], lambda[N], c[N];
  for (int k = 0; k < N; ++k)
    G[k * N + k] = 1.0, g[k] = -1.0;
  mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu};
  mr_solver_stats st;
  mr_error err;
  assert_int_equal(solve("lcp-lemke", &p, lambda, c, &st, &err), MR_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "65 contacts, more than the 64"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slope),
      cmocka_unit_test(test_sliding),
      cmocka_unit_test(test_stack_against_pgs),
      cmocka_unit_test(test_random_frictionless),
      cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
