/* Tests of ncp-hybrid (src/contact/hybrid.c: ncp-pgs, then ncp-admm, then staggered projections,
 * then an active-set Newton polish and a semismooth Newton on the natural map,
 * src/contact/natmap.c; a failed warm solve is retried cold by mr_solve) on hand-built problems
 * with known answers (tests/contact_problems.h), of its warm-start guarantee, and of the
 * natural-map Newton alone.
 *
 * Tolerances. ncp-hybrid stops at ε_abs ≤ 1e-6 on the NCP criteria (its own model's). A criterion
 * ε bounds the force error by about ε/σ, σ the smallest eigenvalue of G on the active directions:
 * σ = Δt/m = 1e-3 for the unit masses, so Σλ_N = m g is asserted to 1e-3 N per box; on the
 * heavy-on-light stack σ ≈ Δt/m_heavy = 1e-6, so the 9810 N interface force to 1 N
 * (1e-4 relative). */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "contact/natmap.h"
#include "contact/problem_io.h"
#include "contact/solvers.h"
#include "contact_problems.h"
#include "core/arena.h"
#include "core/linalg.h"
#include "moreau/contact.h"

typedef struct {
  double lambda[CP_MAX_N], c[CP_MAX_N], y[CP_MAX_N];
  mr_solver_stats stats;
  mr_solver_state state;
} result;

/* solve with ncp-hybrid from lambda (warm when warm != 0), fresh state */
static void solve(const mr_contact_problem *p, int warm, result *r) {
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = warm;
  mr_arena a;
  mr_error err = {0};
  memset(&r->state, 0, sizeof r->state);
  r->state.y = r->y, r->state.cap = CP_MAX_N;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(p->nc, p->nv)), 0);
  if (mr_solve("ncp-hybrid", p, &s, &r->state, &a, r->lambda, r->c, &r->stats, &err))
    fail_msg("ncp-hybrid: %s", err.msg);
  mr_arena_destroy(&a);
  print_message("  ncp-hybrid: %5d iterations, eps_abs %.2e\n", r->stats.iterations,
                r->stats.eps_abs);
}

static void expect_converged(const result *r, const char *what) {
  if (!(r->stats.converged && r->stats.eps_abs <= 1e-6 && r->stats.eps_model == r->stats.eps_abs))
    fail_msg("%s: eps_abs %.3g (model %.3g) after %d iterations", what, r->stats.eps_abs,
             r->stats.eps_model, r->stats.iterations);
}

/* one contact sliding, one sticking (G = Δt/m I): the closed forms λ_T = −μλ_N ĉ_T, λ = −G⁻¹g */
static void test_single(void **unused) {
  cp_problem cp;
  result r;
  cp_single(&cp, 1.0, 0.1, 0.0, -9.81e-3, 0.5); /* pushed 0.1 m/s: slides */
  memset(r.lambda, 0, sizeof r.lambda);
  solve(&cp.p, 0, &r);
  expect_converged(&r, "sliding");
  assert_near(r.lambda[2], 9.81, 1e-3);
  assert_near(r.lambda[0], -0.5 * 9.81, 1e-3);
  cp_single(&cp, 1.0, 1e-3, 0.0, -9.81e-3, 0.5); /* pushed 1 mm/s: sticks, λ = −g m/Δt */
  memset(r.lambda, 0, sizeof r.lambda);
  solve(&cp.p, 0, &r);
  expect_converged(&r, "sticking");
  assert_near(r.lambda[0], -1.0, 1e-3);
  assert_near(r.lambda[2], 9.81, 1e-3);
}

/* stacks of 1 to 3 unit boxes (hyperstatic: 4 contacts per box): Σλ_N per interface = weight
 * above it */
static void test_stacks(void **unused) {
  const double ones[4] = {1, 1, 1, 1};
  static cp_problem cp;
  result r;
  for (int k = 1; k <= 3; ++k) {
    cp_stack(&cp, k, ones, 0.5);
    memset(r.lambda, 0, sizeof r.lambda);
    solve(&cp.p, 0, &r);
    expect_converged(&r, "stack");
    /* an interface sums four contacts, each within ε/σ = 1e-3 N */
    for (int b = 0; b < k; ++b)
      assert_near(cp_interface_normal(r.lambda, b), (k - b) * CP_GRAVITY, 4e-3);
  }
}

/* a 1e3 kg box on a 1e-3 kg box (mass ratio 1e6): ncp-pgs alone stalls; the cascade converges */
static void test_heavy_on_light(void **unused) {
  const double m[2] = {1e-3, 1e3};
  static cp_problem cp;
  result r;
  cp_stack(&cp, 2, m, 0.5);
  memset(r.lambda, 0, sizeof r.lambda);
  solve(&cp.p, 0, &r);
  expect_converged(&r, "heavy on light");
  assert_near(cp_interface_normal(r.lambda, 1), 1e3 * CP_GRAVITY, 1.0);
  assert_near(cp_interface_normal(r.lambda, 0), (1e3 + 1e-3) * CP_GRAVITY, 1.0);
}

/* warm start: from the solution it returns at once (0 iterations); from a wrong warm start
 * (forces 100 times too large, on the wrong side of the cone) it reaches the cold result's
 * accuracy: the warm start can only cost iterations, never accuracy */
static void test_warm_never_worse(void **unused) {
  const double ones[4] = {1, 1, 1, 1};
  static cp_problem cp;
  result cold, warm;
  cp_stack(&cp, 2, ones, 0.5);
  memset(cold.lambda, 0, sizeof cold.lambda);
  solve(&cp.p, 0, &cold);
  expect_converged(&cold, "cold");
  memcpy(warm.lambda, cold.lambda, sizeof warm.lambda);
  solve(&cp.p, 1, &warm);
  assert_int_equal(warm.stats.iterations, 0);
  for (int k = 0; k < cp.p.nc * 3; ++k)
    warm.lambda[k] = (k % 3 == 2 ? 100.0 : -300.0) * cold.lambda[k];
  solve(&cp.p, 1, &warm);
  expect_converged(&warm, "wrong warm start");
  assert_true(warm.stats.eps_abs <= fmax(cold.stats.eps_abs, 1e-6));
}

/* random rank-deficient problems G = J Jᵀ (J 30 x 24: 10 contacts, rank 24 < 30), g = J v_f
 * plus a gap on the normal rows (a physical free velocity: a solution exists) */
static void test_random_rank_deficient(void **unused) {
  enum { NC = 10, N = 30, NV = 24 };
  static double J[N * NV], G[N * N], g[N], mu[NC], vf[NV];
  uint64_t seed = 7;
  for (int trial = 0; trial < 4; ++trial) {
    for (int i = 0; i < N * NV; ++i)
      J[i] = test_rand(&seed, -1.0, 1.0);
    for (int v = 0; v < NV; ++v)
      vf[v] = test_rand(&seed, -1.0, 1.0);
    for (int i = 0; i < N; ++i) {
      g[i] = i % 3 == 2 ? test_rand(&seed, 0.0, 0.5) : 0.0;
      for (int v = 0; v < NV; ++v)
        g[i] += J[i * NV + v] * vf[v];
      for (int j = 0; j < N; ++j) {
        double acc = 0.0;
        for (int v = 0; v < NV; ++v)
          acc += J[i * NV + v] * J[j * NV + v];
        G[i * N + j] = acc;
      }
    }
    for (int i = 0; i < NC; ++i)
      mu[i] = test_rand(&seed, 0.2, 1.0);
    mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu};
    result r;
    memset(r.lambda, 0, sizeof r.lambda);
    solve(&p, 0, &r);
    expect_converged(&r, "random");
  }
}

/* the NCP ε_abs of λ evaluated here independently of criteria.c: c = (G + R)λ + g summed in
 * long double (64-bit mantissa: on these problems |G_ij λ_j| ≤ 300 N·m/s², so the sum errs by
 * at most n·300·2⁻⁶⁴ ≈ 5e-16, below the 1e-6 target by ten orders), then per contact the
 * distance of λ to the cone, of s = c + (0, 0, μ‖c_T‖) to the dual cone, and |λ·s|, by the closed
 * forms of the projections on the Coulomb cone and its dual (the cone of 1/μ) */
static double cone_dist(double mu, const long double *x) {
  long double t = sqrtl(x[0] * x[0] + x[1] * x[1]), n = x[2];
  if (t <= mu * n) return 0.0;                                 /* inside */
  if (mu * t <= -n) return (double)sqrtl(t * t + n * n);       /* in the polar cone */
  return (double)(fabsl(t - mu * n) / sqrtl(1.0L + mu * mu)); /* to the boundary */
}

static double independent_eps(const mr_contact_problem *p, const double *lambda) {
  int n = 3 * p->nc;
  double e = 0.0;
  for (int i = 0; i < p->nc; ++i) {
    long double c[3], l[3], s[3];
    for (int a = 0; a < 3; ++a) {
      int r = 3 * i + a;
      long double sum = p->g[r] + (p->R ? (long double)p->R[r] * lambda[r] : 0.0L);
      for (int j = 0; j < n; ++j)
        sum += (long double)p->G[(size_t)r * n + j] * lambda[j];
      c[a] = sum, l[a] = lambda[r];
    }
    double mu = p->mu[i];
    s[0] = c[0], s[1] = c[1], s[2] = c[2] + mu * sqrtl(c[0] * c[0] + c[1] * c[1]);
    double ec = (double)fabsl(l[0] * s[0] + l[1] * s[1] + l[2] * s[2]);
    double ed = mu > 0.0 ? cone_dist(1.0 / mu, s) : (double)fmaxl(-s[2], 0.0L);
    e = fmax(e, fmax(cone_dist(mu, l), fmax(ed, ec)));
  }
  return e;
}

/* a recorded problem solved cold within the cap, to 1e-6 on the reported ε_abs and on the
 * independent evaluation above (which may differ from the reported one by its round-off,
 * about 1e-12 here) */
static int fixture_solved(const char *path, int warm) {
  mr_problem_file f;
  mr_error err = {0};
  if (mr_problem_file_load(path, &f, &err)) fail_msg("%s", err.msg);
  assert_true(f.problem.nc * 3 <= CP_MAX_N);
  result r;
  memset(r.lambda, 0, sizeof r.lambda);
  if (warm) {
    assert_non_null(f.lambda0);
    memcpy(r.lambda, f.lambda0, sizeof(double) * 3 * (size_t)f.problem.nc);
  }
  solve(&f.problem, warm, &r);
  expect_converged(&r, path);
  assert_true(r.stats.iterations <= 10000);
  double e = independent_eps(&f.problem, r.lambda);
  if (!(e <= 1e-6 + 1e-12)) fail_msg("%s: independent eps_abs %.3g", path, e);
  mr_problem_file_free(&f);
  return r.stats.iterations;
}

static void expect_fixture_solved(const char *path) {
  fixture_solved(path, 0);
}

/* TALOS standing, steps 7, 8, 9 and 30 recorded under the former gap law (tests/fixtures): the
 * gap term taken only for the corners above the ground puts g outside range(G) (a warping of
 * each foot's corner velocities), so no all-sticking solution exists and the exact one lifts or
 * slides corners. ncp-pgs and ncp-admm stall at ε_abs 1e-3–5e-2 within 10⁴ iterations
 * (docs/solvers.md); ncp-hybrid reaches 1e-6 within its cap. Step 30's solution pivots each foot
 * about one sticking corner, two corners sliding at 4–8 µm/s under 110–150 N and one lifted:
 * the staggered projections end just above 1e-6 there and the active-set polish, solving for the
 * sliding directions, finishes it */
static void test_inconsistent_g(void **unused) {
  static const char *files[] = {
      "tests/fixtures/talos_stand_step7.json", "tests/fixtures/talos_stand_step8.json",
      "tests/fixtures/talos_stand_step9.json", "tests/fixtures/talos_stand_step30.json"};
  for (int k = 0; k < 4; ++k)
    expect_fixture_solved(files[k]);
}

/* Solo-12 trotting on rough ground (scenes/solo_trot_torture.yaml, steps 1011 and 1020 at
 * kp 20, 8 contacts, μ = 0.3, feet sliding on slopes up to ~78°; tests/fixtures/hybrid, as
 * `moreau run --dump-problems` wrote them): ncp-pgs stalls at ε_abs ~ 300, ncp-admm ends near
 * 90–300 and the staggered projections reach 1e-6 only after ~9,300 outer iterations (the
 * cascade used 9973 and 9980 of its 10⁴ when they ran to the end). The Newton stages end them
 * from ncp-pgs's iterate (step 1020: two rounds, 53 iterations) or from the staggered
 * projections' iterate after a probe of 250 outer iterations (step 1011: 795). Solved cold,
 * checked by the independent ε_abs, and within 2000 iterations: a fifth of the budget, far
 * below the ~9,300 the staggered projections need alone, so the test fails if they return */
static void test_rough_trot_hard_steps(void **unused) {
  static const char *files[] = {"tests/fixtures/hybrid/solo_torture_step1020.json",
                                "tests/fixtures/hybrid/solo_torture_step1011.json"};
  for (int k = 0; k < 2; ++k) {
    int it = fixture_solved(files[k], 0);
    if (it > 2000) fail_msg("%s: %d iterations", files[k], it);
  }
}

/* step 911 of the same trot with the warm start the step had (the previous step's forces,
 * ε_abs 957 against 496 at λ = 0; solo_torture_step911_warm.json): from it ncp-pgs stalls at
 * once and the Newton stages fail, and the cascade ran 9979 iterations (stages 2–3); stages 1
 * and 1b repeated from λ = 0 end it. Solved warm within 2000 iterations and checked by the
 * independent ε_abs */
static void test_rough_trot_warm_start(void **unused) {
  const char *path = "tests/fixtures/hybrid/solo_torture_step911_warm.json";
  int it = fixture_solved(path, 1);
  if (it > 2000) fail_msg("%s: %d iterations", path, it);
}

/* step 1011 of the same trot, cold: it ends in the staggered projections (stage 3's probe of
 * 250 outer iterations of two inner runs each, then the Newton stages). Under a simulator's
 * share of a step's work (work_iter: the stage gets (max_iter − used) / (2 inner_iter) outer
 * iterations) the solve stops unconverged below max_iter, and must say it stopped at its budget
 * (stats.budget), which max_iter alone does not show; without the share it converges, checked
 * independently */
static void test_work_share_is_a_budget(void **unused) {
  mr_problem_file f;
  mr_error err = {0};
  const char *path = "tests/fixtures/hybrid/solo_torture_step1011.json";
  if (mr_problem_file_load(path, &f, &err)) fail_msg("%s", err.msg);
  static result r;
  mr_arena a;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(f.problem.nc, f.problem.nv)), 0);
  for (int share = 1; share >= 0; --share) {
    mr_solver_settings s = mr_solver_settings_default();
    s.warm_start = 0;
    s.work_iter = share ? s.max_iter : 0;
    memset(&r.state, 0, sizeof r.state);
    r.state.y = r.y, r.state.cap = CP_MAX_N;
    memset(r.lambda, 0, sizeof r.lambda);
    if (mr_solve("ncp-hybrid", &f.problem, &s, &r.state, &a, r.lambda, r.c, &r.stats, &err))
      fail_msg("%s", err.msg);
    print_message("  work share %d: %d iterations, eps_abs %.3g, budget %d\n", share,
                  r.stats.iterations, r.stats.eps_abs, r.stats.budget);
    if (share) {
      assert_false(r.stats.converged);
      assert_true(r.stats.iterations < s.max_iter);
      assert_int_equal(r.stats.budget, 1);
    } else {
      expect_converged(&r, path);
      assert_int_equal(r.stats.budget, 0);
      double e = independent_eps(&f.problem, r.lambda);
      if (!(e <= 1e-6 + 1e-12)) fail_msg("%s: independent eps_abs %.3g", path, e);
    }
  }
  mr_arena_destroy(&a);
  mr_problem_file_free(&f);
}

/* one body of the 50-body drop of bench/scale.c against the bin at step 1726 (6 contacts, G of
 * rank 6; tests/fixtures/hybrid/mixed50_step1726_warm.json, with the warm start the step had):
 * ncp-pgs, ncp-admm and the staggered projections stall at ε_abs 1e-4–7e-4 within 10⁴
 * iterations carrying 1.6–1.7 N on contact 1, and Newton's method from their iterates stays
 * there, while the solution leaves contact 1 open and carries 4–6 N on contact 3 (the cascade
 * ended its 10⁴ iterations at ε_abs 2.3e-4). Stage 2a, the Newton stages from the CCP's solution,
 * ends it. Solved warm and cold, checked by the independent ε_abs, within 2000 iterations */
static void test_ccp_start(void **unused) {
  for (int warm = 1; warm >= 0; --warm) {
    int it = fixture_solved("tests/fixtures/hybrid/mixed50_step1726_warm.json", warm);
    if (it > 2000) fail_msg("mixed50_step1726 (warm %d): %d iterations", warm, it);
  }
}

/* a pile of cubes in the 100-cube bin of bench/scale.c (15 contacts of three cubes, face-face
 * patches: hyperstatic, G singular on the internal forces), warm started as the step was from
 * the previous step's forces (ε_abs 26 at the start; tests/fixtures/hybrid/bin100_pile.json):
 * ncp-pgs lowers ε_abs only to ~10 in its first 25 sweeps, a rate that needs thousands, so it
 * hands over; the active-set polish ends in a few steps once its refinement stops at the
 * round-off of r (refined further, the singular directions amplified that round-off into the
 * internal forces, the classification cycled, and the solve took 100 sweeps and 10 Newton
 * steps). Asserted: solved (independent ε_abs) within 25 sweeps + HYB_POLISH + HYB_NEWTON = 53
 * iterations, one handover round */
static void test_pile_island(void **unused) {
  int it = fixture_solved("tests/fixtures/hybrid/bin100_pile.json", 1);
  if (it > 53) fail_msg("bin100_pile: %d iterations", it);
}

/* ContactBench's recorded sliding cube (tests/fixtures/contactbench, converted to force units):
 * a box pushed along the ground, all four corners sliding; solved cold, checked independently,
 * and maximum dissipation in closed form: every corner's friction is μλ_N against its slip,
 * λ_T = −μ λ_N c_T/‖c_T‖, to 1e-6 relative (an ε_abs of 1e-6 on λ_N ≈ 1e3 N and slips of about
 * 1 m/s² bounds the angle between λ_T and −c_T by about 1e-9) */
static void test_contactbench_sliding(void **unused) {
  const char *path = "tests/fixtures/contactbench/sliding_cube.json";
  expect_fixture_solved(path);
  mr_problem_file f;
  mr_error err = {0};
  if (mr_problem_file_load(path, &f, &err)) fail_msg("%s", err.msg);
  result r;
  memset(r.lambda, 0, sizeof r.lambda);
  solve(&f.problem, 0, &r);
  for (int i = 0; i < f.problem.nc; ++i) {
    const double *l = r.lambda + 3 * i, *c = r.c + 3 * i;
    double ct = hypot(c[0], c[1]), mu = f.problem.mu[i], scale = mu * l[2];
    assert_true(l[2] > 0.0 && ct > 1e-3);
    assert_near(l[0], -scale * c[0] / ct, 1e-6 * scale);
    assert_near(l[1], -scale * c[1] / ct, 1e-6 * scale);
  }
  mr_problem_file_free(&f);
}

/* the natural map F(λ) = λ − Π_K(λ − h (c + Γ(c))) vanishes at the NCP solution and only there:
 * at the closed-form sliding solution of one contact (λ_T = −μ λ_N ĉ_T, c_N = 0) it is 0 to
 * round-off (1e-12 relative to λ = 9.81 N); moving λ_N by 1 N makes it non-zero. From λ = 0 the
 * semismooth Newton solves that problem and the resting box (hyperstatic: its Jacobian is
 * singular on the internal forces, handled by the ridge and refinement) to ε_abs ≤ 1e-6 in at
 * most 20 steps */
static void test_natmap_newton(void **unused) {
  static cp_problem cp;
  enum { N = CP_MAX_N };
  static double J[N * N], LU[N * N], F[N], d[N], t[N], l[N], lt[N], c[N], lam[N];
  int piv[N], steps = 0;
  natmap_ws w = {J, LU, F, d, t, l, lt, piv};
  cp_single(&cp, 1.0, 0.1, 0.0, -9.81e-3, 0.5);
  double sol[3] = {-0.5 * 9.81, 0.0, 9.81};
  assert_true(mr_natmap_residual(&cp.p, sol, c, F) <= 1e-24 * 9.81 * 9.81);
  sol[2] += 1.0;
  assert_true(mr_natmap_residual(&cp.p, sol, c, F) >= 1e-2);
  const double ones[4] = {1, 1, 1, 1};
  for (int k = 0; k < 2; ++k) {
    if (k) cp_stack(&cp, 1, ones, 0.5);
    memset(lam, 0, sizeof lam);
    steps = 0;
    double e0 = mr_problem_criteria(&cp.p, lam, cp.p.g, 1, NULL, NULL, NULL);
    double e = mr_natmap_newton(&cp.p, 1e-6, 0.0, 20, &w, lam, c, e0, &steps);
    print_message("  natural-map Newton: %d steps, eps_abs %.2e\n", steps, e);
    if (!(e <= 1e-6 && steps <= 20))
      fail_msg("natural-map Newton: eps_abs %g after %d steps", e, steps);
  }
  assert_near(cp_interface_normal(lam, 0), CP_GRAVITY, 1e-3);
}

/* c = (G + R)λ + g by compensated dot products (criteria.c) against exact integer arithmetic:
 * G and λ integers (|G_ij| < 2^40, |λ_j| < 2^30, so every product and sum is exact in 128-bit
 * integers), one row made to cancel about 40 bits by the last λ. The plain sum errs by about
 * u Σ|G_ij λ_j| ≈ 2^19 there; Dot2's error is u|c| + γ_n² Σ|G_ij λ_j| (Ogita–Rump–Oishi,
 * Prop. 5.5: γ_6² 2^73 < 2^-20), so c must equal the exact value rounded to double within one
 * unit in the last place of c plus 1e-6. A closed-form row too: 1 + 1e16 − 1e16 = 1 (plain: 0). */
__extension__ typedef __int128 i128; /* exact products of the integers below */

static void test_velocity_dot2(void **unused) {
  enum { N = 6 };
  double G[N * N], g[N] = {0}, mu[2] = {0.5, 0.5}, lambda[N], c[N], cp[N];
  mr_contact_problem p = {.nc = 2, .G = G, .g = g, .mu = mu, .dt = 1e-3};
  uint64_t seed = 7;
  int plain_wrong = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (int k = 0; k < N * N; ++k)
      G[k] = (double)((int64_t)(test_rand_u64(&seed) >> 24) - ((int64_t)1 << 39));
    for (int k = 0; k < N; ++k)
      lambda[k] = (double)((int64_t)(test_rand_u64(&seed) >> 34) - ((int64_t)1 << 29));
    int r = trial % N;
    i128 part = 0;
    for (int j = 0; j < N - 1; ++j)
      part += (i128)(int64_t)G[r * N + j] * (int64_t)lambda[j];
    G[r * N + N - 1] = 4294967296.0; /* 2^32 */
    lambda[N - 1] = -(double)(int64_t)(part / ((i128)1 << 32));
    mr_problem_velocity_dot2(&p, lambda, c);
    mr_problem_velocity(&p, lambda, cp);
    for (int i = 0; i < N; ++i) {
      i128 exact = 0;
      for (int j = 0; j < N; ++j)
        exact += (i128)(int64_t)G[i * N + j] * (int64_t)lambda[j];
      double ex = (double)exact;
      assert_true(fabs(c[i] - ex) <= 0x1p-52 * fabs(ex) + 1e-6);
      plain_wrong |= !(fabs(cp[i] - ex) <= 0x1p-52 * fabs(ex) + 1e-6);
    }
  }
  assert_true(plain_wrong); /* the rows that cancel do defeat the plain sum */
  double G1[9] = {1.0, 1e16, -1e16, 0, 1, 0, 0, 0, 1}, g1[3] = {0}, l1[3] = {1, 1, 1}, c1[3];
  mr_contact_problem p1 = {.nc = 1, .G = G1, .g = g1, .mu = mu, .dt = 1e-3};
  mr_problem_velocity_dot2(&p1, l1, c1);
  assert_true(c1[0] == 1.0);
  mr_problem_velocity(&p1, l1, c1);
  assert_true(c1[0] == 0.0);
}

/* mr_problem_plain_slack bounds what the plain product's rounding does to the NCP criterion, as
 * ncp-hybrid's screen of an iterate (src/contact/hybrid.c) relies on. Random problems, G = J Jᵀ
 * (J 3nc x 40, entries in [−1, 1] times 1 or 1e3 per row: a mass ratio), forces from 1 to 1e5 N
 * inside the cones or 0, g = −G λ (compensated) plus a residual of 1e-9–1e3 (c(λ) small
 * against its terms, the cancellation where rounding shows, up to far from a solution). Dense and
 * block-sparse (every block stored): the plain and the compensated ε_abs differ by at most the
 * slack (ε_abs is 1-Lipschitz in c with the slack's constants); a plain ε̂ above eps_abs by more
 * than the slack is above it on the compensated c, tested at eps_abs = plain ε̂ − 2 slack (where the
 * claim bites: the problems far from a solution) and at 1e-6; and the plain sum errs on most of the
 * problems */
static void test_plain_slack(void **unused) {
  enum { NC = 20, N = 3 * NC, K = 40 };
  static double J[N * K], G[N * N], Gb[9 * NC * NC], g[N], lambda[N], cp[N], cd[N];
  static int row[NC + 1], col[NC * NC];
  double mu[NC];
  uint64_t seed = 11;
  int plain_wrong = 0, bites = 0;
  for (int i = 0; i <= NC; ++i)
    row[i] = NC * i;
  for (int k = 0; k < NC * NC; ++k)
    col[k] = k % NC;
  for (int trial = 0; trial < 100; ++trial) {
    for (int r = 0; r < N; ++r) {
      double scale = test_rand(&seed, 0.0, 1.0) < 0.2 ? 1e3 : 1.0;
      for (int k = 0; k < K; ++k)
        J[r * K + k] = scale * test_rand(&seed, -1.0, 1.0);
    }
    for (int r = 0; r < N; ++r)
      for (int q = 0; q < N; ++q) {
        double sum = 0.0;
        for (int k = 0; k < K; ++k)
          sum += J[r * K + k] * J[q * K + k];
        G[r * N + q] = sum;
      }
    for (int q = 0; q < N; ++q) /* exactly symmetric */
      for (int r = q + 1; r < N; ++r)
        G[r * N + q] = G[q * N + r];
    for (int i = 0; i < NC; ++i)
      for (int j = 0; j < NC; ++j)
        for (int a = 0; a < 9; ++a)
          Gb[9 * (NC * i + j) + a] = G[(3 * i + a / 3) * N + 3 * j + a % 3];
    for (int i = 0; i < NC; ++i) {
      double *l = lambda + 3 * i, ln = pow(10.0, test_rand(&seed, 0.0, 5.0));
      mu[i] = i % 5 == 4 ? 0.0 : 0.5;
      double f = mu[i] * ln * test_rand(&seed, 0.0, 0.99), th = test_rand(&seed, 0.0, 6.28);
      l[0] = f * cos(th), l[1] = f * sin(th), l[2] = ln;
      if (i % 7 == 3) l[0] = l[1] = l[2] = 0.0;
    }
    mr_contact_problem dense = {.nc = NC, .G = G, .g = g, .mu = mu, .dt = 1e-3};
    mr_zero(g, N);
    mr_problem_velocity_dot2(&dense, lambda, cd);
    double res = pow(10.0, test_rand(&seed, -9.0, 3.0));
    for (int k = 0; k < N; ++k)
      g[k] = -cd[k] + res * test_rand(&seed, -1.0, 1.0);
    mr_contact_problem sparse = dense;
    sparse.G = NULL, sparse.Gb = Gb, sparse.Gb_row = row, sparse.Gb_col = col;
    sparse.nnzb = NC * NC;
    const mr_contact_problem *ps[2] = {&dense, &sparse};
    for (int v = 0; v < 2; ++v) {
      const mr_contact_problem *p = ps[v];
      double slack = mr_problem_plain_slack(p, lambda);
      mr_problem_velocity(p, lambda, cp);
      mr_problem_velocity_dot2(p, lambda, cd);
      double ep = mr_problem_criteria(p, lambda, cp, 1, NULL, NULL, NULL);
      double ed = mr_problem_criteria(p, lambda, cd, 1, NULL, NULL, NULL);
      if (!(fabs(ep - ed) <= slack))
        fail_msg("trial %d (%s): plain %.17g, compensated %.17g, slack %.3g", trial,
                 v ? "block-sparse" : "dense", ep, ed, slack);
      plain_wrong += ep != ed;
      double eps[2] = {1e-6, 0.0};
      eps[1] =
          mr_problem_criteria_scaled(p, lambda, cp, 1e-6, 1e-15, NULL, NULL, NULL) - 2.0 * slack;
      for (int k = 0; k < 2; ++k) {
        if (!(eps[k] > 0.0)) continue;
        double sp = mr_problem_criteria_scaled(p, lambda, cp, eps[k], 1e-15, NULL, NULL, NULL);
        double sd = mr_problem_criteria_scaled(p, lambda, cd, eps[k], 1e-15, NULL, NULL, NULL);
        if (sp - eps[k] > slack) {
          bites += k;
          if (!(sd > eps[k]))
            fail_msg("trial %d: plain eps %.17g over eps_abs %.17g by more than the slack %.3g, "
                     "compensated %.17g",
                     trial, sp, eps[k], slack, sd);
        }
      }
    }
  }
  print_message("  plain criterion off the compensated one in %d of 200, the claim bit %d times\n",
                plain_wrong, bites);
  assert_true(plain_wrong >= 100);
  assert_true(bites >= 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_velocity_dot2),
      cmocka_unit_test(test_plain_slack),
      cmocka_unit_test(test_single),
      cmocka_unit_test(test_stacks),
      cmocka_unit_test(test_heavy_on_light),
      cmocka_unit_test(test_warm_never_worse),
      cmocka_unit_test(test_random_rank_deficient),
      cmocka_unit_test(test_natmap_newton),
      cmocka_unit_test(test_inconsistent_g),
      cmocka_unit_test(test_contactbench_sliding),
      cmocka_unit_test(test_rough_trot_hard_steps),
      cmocka_unit_test(test_rough_trot_warm_start),
      cmocka_unit_test(test_work_share_is_a_budget),
      cmocka_unit_test(test_pile_island),
      cmocka_unit_test(test_ccp_start),
  };
  return cmocka_run_group_tests_name("ncp-hybrid", tests, NULL, NULL);
}
