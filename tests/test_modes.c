/* ncp-hybrid's stick/separate mode search (src/contact/modes.c): a closed form, and the problems
 * of a crushed stack that every earlier stage leaves at ε_abs ≈ 450, checked by the NCP criteria
 * with c evaluated in binary128 (independent of the solvers and of Dot2).
 *
 * Fixtures (tests/fixtures/modes): scenes/b5_heavy_on_light.yaml stepped with its own solver
 * (ncp-pgs) at steps 123 and 246, as bench/corpus dumps them: a 1000 kg box 5 cm deep in a 1 g
 * box, itself up to 1 cm deep in the floor, after the failed solve's re-solve without push-out
 * (one floor corner, 3e-5 m above the floor, keeps its permitted approach: g has a part of
 * 16–79 m/s² outside range(G)). bench/ncp_existence shows that both have exact solutions
 * (strict feasibility, and a stick/separate point found in long double). */
#include "test_util.h"

#include <string.h>

#include "contact/modes.h"
#include "contact/problem_io.h"
#include "core/arena.h"
#include "core/linalg.h"
#include "moreau/contact.h"

__extension__ typedef __float128 f128;

#define MAX_N 24

/* c = G λ + g in binary128 (products of doubles exact), rounded to double at the end */
static void velocity_f128(const mr_contact_problem *p, const double *G, const double *l,
                          double *c) {
  int n = 3 * p->nc;
  for (int i = 0; i < n; ++i) {
    f128 s = p->g[i];
    for (int j = 0; j < n; ++j)
      s += (f128)G[(size_t)i * n + j] * (f128)l[j];
    c[i] = (double)s;
  }
}

/* ε_abs at λ with the binary128 c */
static double eps_exact(const mr_contact_problem *p, const double *G, const double *l) {
  double c[MAX_N];
  velocity_f128(p, G, l, c);
  return mr_problem_criteria(p, l, c, 1, NULL, NULL, NULL);
}

/* A 1 kg cube of side 0.2 m falling at 0.5 m/s onto its four bottom corners (0: (−a, −a),
 * 1: (a, −a), 2: (−a, a), 3: (a, a), a = 0.1 m, 0.1 m below the centre), corners 0–2 to stop,
 * corner 3 (3e-5 m above the ground) allowed to approach by 0.03 m/s: g = J v_f/Δt + b with
 * b = 30 m/s² on corner 3's normal row, a twist outside range(G), so no all-sticking solution.
 * Closed form: corner 3 separates and the cube stops on 0–2, the impulse m v balanced in
 * torque about the centre by vertical forces: Σ F = W = m v/Δt = 500 N, Σ x_i F_i = Σ y_i F_i
 * = 0 give F₀ = 0, F₁ = F₂ = W/2, no friction; corner 3's velocity is then b₃ (30 m/s² ≥ 0).
 * The three single-separation modes before it fail (separating 0 needs F₃ < 0 to turn the
 * cube; separating 1 or 2 drives that corner into the ground). G = J M⁻¹ Jᵀ has eigenvalues
 * between 1 and about 1.3e1 on its range, so the forces are exact to a few ulps of W: asserted
 * to 1e-9 N. */
static void test_box_corner_lifts(void **unused) {
  (void)unused;
  enum { NC = 4, N = 3 * NC };
  const double m = 1.0, side = 0.2, a = 0.1, dt = 1e-3, v = 0.5, I = m * side * side / 6.0;
  const double x[NC] = {-a, a, -a, a}, y[NC] = {-a, -a, a, a}, z = -0.1;
  double J[N * 6] = {0}, G[N * N], g[N], mu[NC] = {0.9, 0.9, 0.9, 0.9};
  /* row k of contact i: the velocity of the corner along axis k, v + ω × r */
  for (int i = 0; i < NC; ++i) {
    double r[3] = {x[i], y[i], z};
    for (int k = 0; k < 3; ++k) {
      double *row = J + (3 * i + k) * 6;
      row[k] = 1.0;
      /* (ω × r)_k = ε_kjl ω_j r_l */
      row[3 + (k + 1) % 3] = r[(k + 2) % 3];
      row[3 + (k + 2) % 3] = -r[(k + 1) % 3];
    }
  }
  double Minv[6] = {1.0 / m, 1.0 / m, 1.0 / m, 1.0 / I, 1.0 / I, 1.0 / I};
  for (int i = 0; i < N; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = 0.0;
      for (int k = 0; k < 6; ++k)
        s += J[i * 6 + k] * Minv[k] * J[j * 6 + k];
      G[i * N + j] = s;
    }
    g[i] = -J[i * 6 + 2] * v / dt; /* the free velocity (0, 0, −v) */
  }
  g[3 * 3 + 2] += 0.03 / dt;
  mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu, .dt = dt};
  double l[N] = {0}, c[N], A[N * N], F[N * N], e = INFINITY;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(NC, 0)), 0);
  assert_int_equal(mr_contact_modes(&p, 1e-6, 0.0, A, F, &work, l, c, &e), 1);
  assert_true(work.top == 0);
  mr_arena_destroy(&work);
  double W = m * v / dt;
  double expect[N] = {0, 0, 0, 0, 0, W / 2, 0, 0, W / 2, 0, 0, 0};
  print_message("  forces %.12g %.12g %.12g %.12g, eps_abs %.3e\n", l[2], l[5], l[8], l[11], e);
  assert_vec_near(l, expect, N, 1e-9);
  /* corner 3 separates at its permitted approach, the others are at rest */
  assert_near(c[11], 30.0, 1e-9);
  assert_true(eps_exact(&p, G, l) <= 1e-9);
}

/* ncp-hybrid from λ = 0 converges on the crushed stack by the binary128 criterion; the mode
 * search alone gives a point within reach of the Newton stages (ε_abs 0.04–0.13 at forces of
 * 4–5e5 N, against the cascade's 450 at forces below 1 N) */
static void crushed(const char *path) {
  mr_problem_file f;
  mr_error err = {0};
  if (mr_problem_file_load(path, &f, &err)) fail_msg("%s", err.msg);
  assert_true(3 * f.nc <= MAX_N && f.problem.G);
  const mr_contact_problem *p = &f.problem;
  int n = 3 * f.nc;
  double l[MAX_N] = {0}, c[MAX_N], A[MAX_N * MAX_N], F[MAX_N * MAX_N], e = INFINITY, lmax = 0.0;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(f.nc, 0)), 0);
  assert_int_equal(mr_contact_modes(p, 1e-6, 0.0, A, F, &work, l, c, &e), 1);
  for (int k = 0; k < n; ++k)
    lmax = fmax(lmax, fabs(l[k]));
  double em = eps_exact(p, p->G, l);
  print_message("  %s: mode search eps_abs %.3e at forces up to %.3e N\n", path, em, lmax);
  assert_true(em < 1.0 && lmax > 1e5);
  /* the whole solver from λ = 0, on the absolute criterion (eps_scale 0: what the mode search
   * serves; by default the scaled criterion accepts the round-off these forces leave) */
  mr_solver_settings s = mr_solver_settings_default();
  s.eps_scale = 0.0;
  mr_solver_stats st;
  mr_zero(l, n);
  if (mr_solve("ncp-hybrid", p, &s, NULL, &work, l, c, &st, &err)) fail_msg("%s", err.msg);
  assert_true(work.top == 0);
  mr_arena_destroy(&work);
  double ex = eps_exact(p, p->G, l);
  print_message("  ncp-hybrid: eps_abs %.3e (binary128 %.3e), %d iterations\n", st.eps_model, ex,
                st.iterations);
  assert_true(st.converged);
  /* Dot2's c is within u|c| + γ²Σ|G_ij λ_j| ≈ 1e-20 of the binary128 one; ε_c scales it by λ_N
   * ≈ 5e5 N: the two criteria agree to 1e-12 */
  assert_true(ex <= 1e-6);
  assert_near(st.eps_model, ex, 1e-12);
  mr_problem_file_free(&f);
}

static void test_crushed_step123(void **unused) {
  (void)unused;
  crushed("tests/fixtures/modes/b5_heavy_on_light_step123.json");
}

static void test_crushed_step246(void **unused) {
  (void)unused;
  crushed("tests/fixtures/modes/b5_heavy_on_light_step246.json");
}

/* too many contacts: nothing searched, λ untouched */
static void test_too_many_contacts(void **unused) {
  (void)unused;
  enum { NC = MR_MODES_MAX_NC + 1, N = 3 * NC };
  static double G[N * N], g[N], mu[NC], l[N], c[N], A[N * N], F[N * N];
  for (int i = 0; i < N; ++i)
    G[i * N + i] = 1.0, g[i] = -1.0, l[i] = 7.0;
  for (int i = 0; i < NC; ++i)
    mu[i] = 0.5;
  mr_contact_problem p = {.nc = NC, .G = G, .g = g, .mu = mu, .dt = 1e-3};
  double e = 1e3;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(NC, 0)), 0);
  assert_int_equal(mr_contact_modes(&p, 1e-6, 0.0, A, F, &work, l, c, &e), 0);
  mr_arena_destroy(&work);
  assert_true(e == 1e3 && l[0] == 7.0 && l[N - 1] == 7.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_corner_lifts),
      cmocka_unit_test(test_crushed_step123),
      cmocka_unit_test(test_crushed_step246),
      cmocka_unit_test(test_too_many_contacts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
