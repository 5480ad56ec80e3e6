/* Tests of the lattice polish (src/contact/polish.c): the last stage of ncp-hybrid, which moves
 * λ by integer numbers of ulps per entry when only the representation of λ in doubles stands
 * between the iterate and eps_abs.
 *
 * Independent evaluation. The criterion is recomputed here with c = (G + R) λ + g summed in
 * binary128: a product of two doubles is exact there (106 of 113 bits) and each of the ≤ 25
 * additions errs by at most 2⁻¹¹³ times a partial sum of at most Σ|G_ij λ_j| ≈ 3e7 (the 1e6
 * stack) or 5e9 (scenes/b5_heavy_on_light.yaml), i.e. ≤ 1e-24 m/s in all, 14 orders below the
 * c ~ 1e-10 m/s of these iterates: the criterion of the binary128 c is the exact one to 1e-14
 * relative, and it is not moreau's Dot2 (src/contact/criteria.c) that is checked against itself.
 *
 * Fixtures (tests/fixtures/polish): two problems that ncp-hybrid without the polish leaves above
 * 1e-6, saved with its iterate as lambda0: the heavy-on-light stack of mass ratio 1e6 at step 82
 * (exact ε_abs 1.39e-6, λ_N ≈ 2450 N) and scenes/b5_heavy_on_light.yaml at step 41 (3.7e-3,
 * λ_N ≈ 9.4e4 N), as bench/corpus dumps them. Four more of the 1e6 stack (bench/corpus's
 * heavy-on-light problems at steps 164, 369, 410 and 492), saved with the iterate that
 * ncp-hybrid with the lattice rounds alone ended on (exact ε_abs 2.3e-6, 1.3e-6, 3.2e-6,
 * 2.6e-6): there c keeps ~1e-9 m/s outside the range of G whatever the ulps, and only the
 * continuous stage reaches 1e-6. */
#include "test_util.h"

#include <string.h>

#include "contact/polish.h"
#include "contact/problem_io.h"
#include "core/arena.h"
#include "moreau/contact.h"

__extension__ typedef __float128 f128;

#define MAX_N 24

/* c = (G + R) λ + g in binary128, rounded to double at the end */
static void velocity_f128(const mr_contact_problem *p, const double *l, double *c) {
  int n = 3 * p->nc;
  for (int i = 0; i < n; ++i) {
    f128 s = p->g[i];
    for (int j = 0; j < n; ++j)
      s += (f128)p->G[(size_t)i * n + j] * (f128)l[j];
    if (p->R) s += (f128)p->R[i] * (f128)l[i];
    c[i] = (double)s;
  }
}

/* ε_abs at λ with the binary128 c */
static double eps_exact(const mr_contact_problem *p, const double *l) {
  double c[MAX_N];
  velocity_f128(p, l, c);
  return mr_problem_criteria(p, l, c, 1, NULL, NULL, NULL);
}

static void load(const char *path, mr_problem_file *f) {
  mr_error err = {0};
  if (mr_problem_file_load(path, f, &err)) fail_msg("%s", err.msg);
  assert_true(f->nc * 3 <= MAX_N && f->lambda0 != NULL);
}

/* the polish from the stored iterate: ε_abs ≤ 1e-6 by the exact criterion; the forces moved by
 * no more than dmax_rel of the largest, or with dmax_rel < 0 the contact velocities c (in
 * binary128) by no more than −dmax_rel m/s */
static void polish_fixture(const char *path, double dmax_rel) {
  mr_problem_file f;
  load(path, &f);
  const mr_contact_problem *p = &f.problem;
  int n = 3 * f.nc;
  double l[MAX_N], c[MAX_N], lmax = 0.0;
  memcpy(l, f.lambda0, sizeof(double) * n);
  double e0 = eps_exact(p, l);
  assert_true(e0 > 1e-6);
  mr_arena a;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(f.nc, 0)), 0);
  mr_problem_velocity_dot2(p, l, c);
  double e = mr_polish_lattice(p, 1e-6, &a, l, c, mr_problem_criteria(p, l, c, 1, 0, 0, 0));
  double ex = eps_exact(p, l);
  print_message("  %s: exact eps_abs %.3e -> %.3e (returned %.3e), arena peak %zu of %zu\n", path,
                e0, ex, e, a.peak, a.size);
  assert_true(a.top == 0);
  mr_arena_destroy(&a);
  assert_true(ex <= 1e-6);
  /* the returned ε_abs is the exact one: Dot2's c is within u|c| + γ²Σ|G_ij λ_j| ≈ 1e-20 of
   * the binary128 one, which moves ε_c by λ_N times that */
  assert_near(e, ex, 1e-12);
  double dmax = 0.0;
  for (int k = 0; k < n; ++k)
    lmax = fmax(lmax, fabs(f.lambda0[k])), dmax = fmax(dmax, fabs(l[k] - f.lambda0[k]));
  double c0[MAX_N], c1[MAX_N], cmax = 0.0;
  velocity_f128(p, f.lambda0, c0);
  velocity_f128(p, l, c1);
  for (int k = 0; k < n; ++k)
    cmax = fmax(cmax, fabs(c1[k] - c0[k]));
  print_message("  largest force change %.2e of the largest force, of c %.2e m/s\n", dmax / lmax,
                cmax);
  if (dmax_rel >= 0.0)
    assert_vec_near(l, f.lambda0, n, dmax_rel * lmax);
  else
    assert_true(cmax <= -dmax_rel);
  mr_problem_file_free(&f);
}

/* the forces move by no more than the stored iterate's own criterion leaves open, 1e-6 of the
 * largest: on b5, ε_c = 3.7e-3 at λ_N ≈ 9e4 N lets c be 4e-8 m/s off, which the heavy box's
 * directions of G (Δt/m = 1e-3 s / 1e3 kg = 1e-6 m/(N s)) turn into up to 0.04 N = 4.5e-7 of
 * λ (measured 3.5e-7); on the stack 6e-11 */
static void test_fixture_stack_1e6(void **unused) {
  (void)unused;
  polish_fixture("tests/fixtures/polish/heavy_on_light_1e6_step82.json", 1e-6);
}

static void test_fixture_b5(void **unused) {
  (void)unused;
  polish_fixture("tests/fixtures/polish/b5_heavy_on_light_step41.json", 1e-6);
}

static const char *const continuous_files[] = {
    "tests/fixtures/polish/heavy_on_light_1e6_step164.json",
    "tests/fixtures/polish/heavy_on_light_1e6_step369.json",
    "tests/fixtures/polish/heavy_on_light_1e6_step410.json",
    "tests/fixtures/polish/heavy_on_light_1e6_step492.json"};

/* the four problems the lattice rounds alone leave above 1e-6. The continuous stage makes every
 * contact approach by μ ‖c_T‖ while c_T slips, starting at 4 PL_SINK eps_abs / λ_N ≈ 2.6e-8
 * m/s, and its trust term keeps the change of c of that order: asserted ≤ 1e-7 m/s in
 * binary128 (measured 2.0e-8–3.3e-8), 1e-5 of the 9.8e-3 m/s that gravity adds per step. The
 * forces themselves move by up to 1.5e-2 of λ_N (36 N, tangential): along the internal forces
 * of the two four-corner contacts (the null space of G, 12 of the 24 directions), which no
 * body's motion sees and which the NCP leaves undetermined for a rigid resting box */
static void test_fixture_continuous(void **unused) {
  (void)unused;
  for (int t = 0; t < 4; ++t)
    polish_fixture(continuous_files[t], -1e-7);
}

/* ‖λ‖∞ (‖g‖∞ + ‖G‖∞ ‖λ‖∞): a bound on every contact's F_i V_i, the scale of its ε_c */
static double global_scale(const mr_contact_problem *p, const double *l) {
  int n = 3 * p->nc;
  double f = 0.0, g = 0.0, rows = 0.0;
  for (int r = 0; r < n; ++r) {
    double sum = 0.0;
    for (int j = 0; j < n; ++j)
      sum += fabs(p->G[(size_t)r * n + j]);
    rows = fmax(rows, sum), f = fmax(f, fabs(l[r])), g = fmax(g, fabs(p->g[r]));
  }
  return f * (g + rows * f);
}

/* end to end: ncp-hybrid from λ = 0 on the same problems. On the absolute criterion (eps_scale
 * 0, which the polish serves) it converges by the exact criterion; by default it stops on the
 * scaled criterion, sooner, at an exact ε_abs within 1e-15 of the problem's F V (the round-off
 * these forces leave: the stored iterates are at 0.07–0.3 u F_i V_i, docs/solvers.md) */
static void test_hybrid_end_to_end(void **unused) {
  (void)unused;
  static const char *files[] = {"tests/fixtures/polish/heavy_on_light_1e6_step82.json",
                                "tests/fixtures/polish/b5_heavy_on_light_step41.json",
                                "tests/fixtures/polish/heavy_on_light_1e6_step164.json",
                                "tests/fixtures/polish/heavy_on_light_1e6_step369.json",
                                "tests/fixtures/polish/heavy_on_light_1e6_step410.json",
                                "tests/fixtures/polish/heavy_on_light_1e6_step492.json"};
  for (int t = 0; t < 6; ++t) {
    mr_problem_file f;
    load(files[t], &f);
    int iters[2];
    for (int scaled = 0; scaled < 2; ++scaled) {
      double l[MAX_N] = {0}, c[MAX_N];
      mr_solver_settings s = mr_solver_settings_default();
      if (!scaled) s.eps_scale = 0.0;
      mr_solver_stats st;
      mr_error err = {0};
      mr_arena a;
      assert_int_equal(mr_arena_init(&a, mr_solver_work_size(f.nc, 0)), 0);
      if (mr_solve("ncp-hybrid", &f.problem, &s, NULL, &a, l, c, &st, &err))
        fail_msg("%s", err.msg);
      mr_arena_destroy(&a);
      double ex = eps_exact(&f.problem, l), fv = global_scale(&f.problem, l);
      print_message("  %s, eps_scale %g: ncp-hybrid eps_abs %.3e (exact %.3e, F V %.3e), scaled "
                    "%.3e, %d iterations\n",
                    files[t], s.eps_scale, st.eps_abs, ex, fv, st.eps_scaled, st.iterations);
      assert_true(st.converged);
      if (scaled)
        assert_true(st.eps_scaled <= 1e-6 && ex <= fmax(1e-6, 1e-15 * fv));
      else
        assert_true(ex <= 1e-6);
      iters[scaled] = st.iterations;
    }
    /* the absolute criterion needs the polish (or more Newton rounds) on every one of them */
    assert_true(iters[1] < iters[0]);
    /* and no more: what is left above 1e-6 before the polish is the round-off of λ, not the
     * wrong active set that ncp-hybrid's stage 2a is for (535–544 iterations; with stage 2a
     * running on b5_heavy_on_light_step41, whose 3.7e-3 N at forces of 9e4 N is below its
     * round-off of ~0.1 N, 838) */
    assert_true(iters[0] <= 600);
    mr_problem_file_free(&f);
  }
}

/* the polish never makes λ worse and leaves it alone when the trigger does not hold: the
 * stored iterate scaled by 1 + 1e-7 (ε_abs ~ 1e-2, far above what one ulp moves: the solver's
 * error, not the representation's) comes back bitwise unchanged; so does every λ when the
 * work arena is too small */
static void test_trigger_and_arena(void **unused) {
  (void)unused;
  mr_problem_file f;
  load("tests/fixtures/polish/heavy_on_light_1e6_step82.json", &f);
  const mr_contact_problem *p = &f.problem;
  int n = 3 * f.nc;
  double l[MAX_N], l0[MAX_N], c[MAX_N];
  for (int k = 0; k < n; ++k)
    l0[k] = f.lambda0[k] * (1.0 + 1e-7);
  memcpy(l, l0, sizeof l);
  mr_arena a;
  assert_int_equal(mr_arena_init(&a, mr_solver_work_size(f.nc, 0)), 0);
  mr_problem_velocity_dot2(p, l, c);
  double e0 = mr_problem_criteria(p, l, c, 1, NULL, NULL, NULL);
  double e = mr_polish_lattice(p, 1e-6, &a, l, c, e0);
  assert_true(e0 > 1e-4 && e == e0 && memcmp(l, l0, sizeof(double) * n) == 0);
  mr_arena_destroy(&a);
  /* a representation-limited iterate, an arena of 64 bytes */
  memcpy(l, f.lambda0, sizeof(double) * n);
  assert_int_equal(mr_arena_init(&a, 64), 0);
  mr_problem_velocity_dot2(p, l, c);
  e0 = mr_problem_criteria(p, l, c, 1, NULL, NULL, NULL);
  e = mr_polish_lattice(p, 1e-6, &a, l, c, e0);
  assert_true(e == e0 && memcmp(l, f.lambda0, sizeof(double) * n) == 0 && a.top == 0);
  mr_arena_destroy(&a);
  mr_problem_file_free(&f);
}

/* a synthetic problem whose moves form a known module: three frictionless contacts (μ = 0,
 * only normal rows in G) with G_NN = J Jᵀ, J = s [[1, 0], [0, 1], [−1, −r]], s = 100, r = 1/√2,
 * and λ_N = (3000, 3000 r, 3000) (one binade: u = 2⁻⁴¹ for all three), on which G_NN vanishes to
 * rounding. The columns satisfy G₃ = −G₁ − r G₂, so a move z changes c by
 * u ((z₁ − z₃) G₁ + (z₂ − r z₃) G₂): an integer multiple of u G₁ (a lattice direction) plus a
 * multiple of u G₂ that is dense in R (r irrational). With g such that c = J w = u (α G₁ + β G₂),
 * the best reachable c is u (α − round(α)) G₁, whence the closed form
 *   min ε_abs = 3000 |α − round(α)| s² u (ε_c = λ_N |c_N| at contacts 1 and 3; ε_d ≤ 1e-9),
 * reached with z₁ − z₃ = −round(α). One ulp of one λ_i moves ε_c by up to 3000 (1 + r²) s² u ≈
 * 2e-5: no single move reaches 1e-6. Two cases: α = 2.859 (floor 1.93e-6 > 1e-6: the polish
 * must end on the floor, to the 1e-8 the dense direction leaves) and α = 3.02 (floor 2.7e-7:
 * ≤ 1e-6 with z₁ − z₃ = −3). Brute force over z ∈ [−R, R]³ with the binary128 criterion is
 * printed for comparison (no point of the box beats the floor either). */
static void synthetic(double alpha, double beta, double *e_out, long *zd, double *floor) {
  enum { NC = 3, N = 9, R = 16 };
  double G[N * N] = {0}, g[N] = {0}, mu[NC] = {0, 0, 0}, J[3][2], l0[N] = {0}, l[N], c[N];
  double s = 100.0, r = 0.7071067811865476, u = 0x1p-41;
  double w[2] = {alpha * s * u, beta * s * u};
  J[0][0] = s, J[0][1] = 0.0, J[1][0] = 0.0, J[1][1] = s, J[2][0] = -s, J[2][1] = -s * r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      G[(3 * i + 2) * N + 3 * j + 2] = J[i][0] * J[j][0] + J[i][1] * J[j][1];
  l0[2] = 3000.0, l0[5] = 3000.0 * r, l0[8] = 3000.0;
  mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu, .dt = 1e-3};
  velocity_f128(&p, l0, c);
  for (int i = 0; i < 3; ++i)
    g[3 * i + 2] = (J[i][0] * w[0] + J[i][1] * w[1]) - c[3 * i + 2];
  double e0 = eps_exact(&p, l0);
  *floor = 3000.0 * fabs(alpha - round(alpha)) * s * s * u;
  /* brute force over the box */
  double best = INFINITY;
  for (int a = -R; a <= R; ++a)
    for (int b = -R; b <= R; ++b)
      for (int d = -R; d <= R; ++d) {
        memcpy(l, l0, sizeof l);
        l[2] += a * u, l[5] += b * u, l[8] += d * u;
        best = fmin(best, eps_exact(&p, l));
      }
  /* the polish */
  memcpy(l, l0, sizeof l);
  mr_arena ar;
  assert_int_equal(mr_arena_init(&ar, mr_solver_work_size(NC, 0)), 0);
  mr_problem_velocity_dot2(&p, l, c);
  double e = mr_polish_lattice(&p, 1e-6, &ar, l, c, mr_problem_criteria(&p, l, c, 1, 0, 0, 0));
  mr_arena_destroy(&ar);
  *e_out = eps_exact(&p, l);
  long z1 = lrint((l[2] - l0[2]) / u), z2 = lrint((l[5] - l0[5]) / u),
       z3 = lrint((l[8] - l0[8]) / u);
  *zd = z1 - z3;
  print_message("  alpha %.3f: eps_abs %.3e -> %.3e with z = (%ld, %ld, %ld); closed-form floor "
                "%.3e; best of |z| <= %d: %.3e\n",
                alpha, e0, *e_out, z1, z2, z3, *floor, R, best);
  assert_true(e0 > 1e-5 && best >= *floor * (1.0 - 1e-6));
  assert_near(e, *e_out, 1e-12);
}

static void test_synthetic_module(void **unused) {
  (void)unused;
  double e, floor;
  long zd;
  /* the floor above 1e-6: the polish ends on it (the dense direction to 1e-8), z₁ − z₃ = −3 */
  synthetic(2.859, -1.37, &e, &zd, &floor);
  assert_true(floor > 1e-6 && e >= floor * (1.0 - 1e-6) && e <= floor + 1e-8);
  assert_int_equal(zd, -3);
  /* the floor below 1e-6: certified */
  synthetic(3.02, -1.37, &e, &zd, &floor);
  assert_true(floor < 1e-6 && e <= 1e-6 && e >= floor * (1.0 - 1e-6));
  assert_int_equal(zd, -3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_stack_1e6), cmocka_unit_test(test_fixture_b5),
      cmocka_unit_test(test_fixture_continuous),
      cmocka_unit_test(test_hybrid_end_to_end), cmocka_unit_test(test_trigger_and_arena),
      cmocka_unit_test(test_synthetic_module),
  };
  return cmocka_run_group_tests_name("lattice polish", tests, NULL, NULL);
}
