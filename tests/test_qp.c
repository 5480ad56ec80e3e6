/* The dense convex QP solver (src/contact/qp.c) against closed forms and the KKT conditions, and
 * Lemke's method (src/contact/lemke.c) on small LCPs with known solutions. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "contact/lemke.h"
#include "control/qp.h"
#include "core/linalg.h"

enum { NMAX = 12, MEQ = 6, MIN = 24 };

typedef struct {
  mr_qp_workspace ws;
  double x[NMAX], y_eq[MEQ], y_in[MIN];
  mr_qp_info info;
  mr_error err;
} fixture;

static int setup(void **state) {
  static fixture f;
  memset(&f, 0, sizeof f);
  if (mr_qp_workspace_init(&f.ws, NMAX, MEQ, MIN, &f.err) != MR_OK) return -1;
  *state = &f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mr_qp_workspace_destroy(&f->ws);
  return 0;
}

static mr_status solve(fixture *f, const mr_qp_problem *qp) {
  return mr_qp_solve(qp, NULL, &f->ws, f->x, f->y_eq, f->y_in, &f->info, &f->err);
}

/* the rounding bound of a backward-stable solve of an n × n system of condition κ: κ n ε times
 * the solution's magnitude (Higham, Accuracy and Stability of Numerical Algorithms, §7.1); the
 * κ below are those of the KKT matrices [[H, Aᵀ], [A, 0]] of each problem's active set, and a
 * result computed on both sides (the test's own solve) doubles it */
static double solve_tol(double kappa, int n, double scale) {
  return kappa * n * DBL_EPSILON * scale;
}

/* max violation of the KKT conditions: stationarity, feasibility, dual sign, complementarity */
static double kkt_error(const mr_qp_problem *qp, const double *x, const double *ye,
                        const double *yi) {
  int n = qp->n;
  double g[NMAX], e = 0;
  if (qp->H)
    mr_matvec(g, qp->H, x, n, n);
  else
    mr_zero(g, n);
  for (int j = 0; j < n; ++j)
    g[j] += qp->c[j];
  for (int i = 0; i < qp->m_eq; ++i) {
    mr_axpy(g, -ye[i], qp->A_eq + i * n, n);
    e = fmax(e, fabs(mr_dot(qp->A_eq + i * n, x, n) - qp->b_eq[i]));
  }
  for (int i = 0; i < qp->m_in; ++i) {
    double s = mr_dot(qp->A_in + i * n, x, n) - qp->b_in[i];
    mr_axpy(g, -yi[i], qp->A_in + i * n, n);
    e = fmax(e, fmax(-s, fmax(-yi[i], fabs(s * yi[i]))));
  }
  return fmax(e, mr_norm_inf(g, n));
}

/* unconstrained: x = −H⁻¹c, f = −½ cᵀH⁻¹c (H⁻¹c by an independent Cholesky solve) */
static void test_unconstrained(void **state) {
  fixture *f = *state;
  double H[9] = {4, 1, 0, 1, 3, 1, 0, 1, 2}, c[3] = {1, -2, 3}, L[9], z[3];
  memcpy(L, H, sizeof H);
  assert_int_equal(mr_cholesky(L, 3), 0);
  memcpy(z, c, sizeof c);
  mr_cholesky_solve(L, 3, z);
  mr_qp_problem qp = {3, 0, 0, H, c, NULL, NULL, NULL, NULL};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  /* κ(H) = 2 + √3 (eigenvalues 2, 2 ± √3), |x| ≤ |c| / λ_min ≤ 3, both sides solved; f is
   * cᵀx/2 with |c| |x| ≤ 11 */
  for (int i = 0; i < 3; ++i)
    assert_near(f->x[i], -z[i], 2 * solve_tol(3.74, 3, 3.0));
  assert_near(f->info.fval, -0.5 * mr_dot(c, z, 3), 2 * solve_tol(3.74, 3, 11.0));
}

/* min ½ xᵀ diag(1,2,4) x s.t. x₁+x₂+x₃ = 1: KKT by hand x_i = y/h_i, y = 1/Σ 1/h_i = 4/7 */
static void test_equality(void **state) {
  fixture *f = *state;
  double H[9] = {1, 0, 0, 0, 2, 0, 0, 0, 4}, c[3] = {0}, A[3] = {1, 1, 1}, b[1] = {1};
  mr_qp_problem qp = {3, 1, 0, H, c, A, b, NULL, NULL};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  /* the 4 × 4 KKT matrix has |eigenvalues| from 1.02 to 4.28: κ = 4.2, values ≤ 1 */
  double xs[3] = {4.0 / 7, 2.0 / 7, 1.0 / 7};
  assert_vec_near(f->x, xs, 3, solve_tol(4.2, 4, 1.0));
  assert_near(f->y_eq[0], 4.0 / 7, solve_tol(4.2, 4, 1.0));
  assert_near(f->info.fval, 0.5 * 4.0 / 7, solve_tol(4.2, 4, 1.0));
}

/* projection of t = (2, −1, 0.5) on the box [0, 1]³: x = (1, 0, 0.5), the upper bound of x₁
 * and the lower bound of x₂ active, each with multiplier |x − t| = 1 */
static void test_box(void **state) {
  fixture *f = *state;
  double H[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c[3] = {-2, 1, -0.5};
  double A[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, -1, 0, 0, 0, -1, 0, 0, 0, -1};
  double b[6] = {0, 0, 0, -1, -1, -1};
  mr_qp_problem qp = {3, 0, 6, H, c, NULL, NULL, A, b};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  /* H = I with two unit active rows: KKT eigenvalues 1, (1 ± √5)/2, κ = 2.62, values ≤ 2 */
  double xs[3] = {1, 0, 0.5}, ys[6] = {0, 1, 0, 1, 0, 0};
  assert_vec_near(f->x, xs, 3, solve_tol(2.62, 5, 2.0));
  assert_vec_near(f->y_in, ys, 6, solve_tol(2.62, 5, 2.0));
  assert_int_equal(f->info.active, 2);
}

/* x₁ ≥ 1 and x₁ ≤ 0: infeasible, least uniform violation t* = 0.5 (x₁ = 0.5); and two parallel
 * equalities x₁ + x₂ = 1, = 2: infeasible; the second row is dropped as dependent, the
 * min-norm point (0.5, 0.5) of the first leaves residual 1 on the second */
static void test_infeasible(void **state) {
  fixture *f = *state;
  double c[2] = {0, 0}, A[4] = {1, 0, -1, 0}, b[2] = {1, 0};
  mr_qp_problem qp = {2, 0, 2, NULL, c, NULL, NULL, A, b};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_INFEASIBLE);
  /* unit rows and one slack: the phase-one systems have κ ≤ 2 (rows (1, 1) of norm √2) */
  assert_near(f->info.infeasibility, 0.5, solve_tol(2.0, 3, 2.0));
  double Ae[4] = {1, 1, 1, 1}, be[2] = {1, 2};
  mr_qp_problem qe = {2, 2, 0, NULL, c, Ae, be, NULL, NULL};
  assert_int_equal(solve(f, &qe), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_INFEASIBLE);
  assert_near(f->info.infeasibility, 1.0, solve_tol(2.0, 3, 2.0));
}

/* min −x₁ − x₂ (H = 0) with x ≥ 0: unbounded; with x₁ ≤ 1, x₂ ≤ 2 added: optimum (1, 2), −3.
 * A PSD Hessian diag(1, 0) with c = (0.5, −1) and x₂ ≤ 5 has optimum (−0.5, 5). */
static void test_unbounded_and_psd(void **state) {
  fixture *f = *state;
  double c[2] = {-1, -1}, A[8] = {1, 0, 0, 1, -1, 0, 0, -1}, b[4] = {0, 0, -1, -2};
  mr_qp_problem qp = {2, 0, 2, NULL, c, NULL, NULL, A, b};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_UNBOUNDED);
  qp.m_in = 4;
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  /* unit active rows, H = 0 then diag(1, 0): every active set's KKT matrix is a signed
   * permutation plus H, κ ≤ 2.62 (as test_box), values ≤ 5 */
  assert_near(f->x[0], 1, solve_tol(2.62, 4, 5.0));
  assert_near(f->x[1], 2, solve_tol(2.62, 4, 5.0));
  assert_near(f->info.fval, -3, solve_tol(2.62, 4, 5.0));
  double H[4] = {1, 0, 0, 0}, c2[2] = {0.5, -1}, A2[2] = {0, -1}, b2[1] = {-5};
  mr_qp_problem q2 = {2, 0, 1, H, c2, NULL, NULL, A2, b2};
  assert_int_equal(solve(f, &q2), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  assert_near(f->x[0], -0.5, solve_tol(2.62, 4, 5.0));
  assert_near(f->x[1], 5, solve_tol(2.62, 4, 5.0));
}

/* degenerate LP: eight constraints (three duplicated) pass through the optimum (1, 1) of
 * min −x₁ − x₂, plus a duplicated equality x₁ = x₂: no cycling, KKT to round-off */
static void test_degenerate(void **state) {
  fixture *f = *state;
  double c[2] = {-1, -1};
  double A[16] = {-1, 0, 0, -1, -1, -1, -2, -1, -1, -2, -1, 0, -1, -1, -2, -1};
  double b[8] = {-1, -1, -2, -3, -3, -1, -2, -3};
  double Ae[4] = {1, -1, 2, -2}, be[2] = {0, 0};
  mr_qp_problem qp = {2, 2, 8, NULL, c, Ae, be, A, b};
  assert_int_equal(solve(f, &qp), MR_OK);
  assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
  /* any two independent rows among (1, 0), (0, 1), (1, 1), (2, 1), (1, 2), (1, −1) (up to sign
   * and scale 2) fix x: the worst pair, (2, 1) and (1, 2), has κ = 3; values ≤ 3 */
  assert_near(f->x[0], 1, solve_tol(3.0, 4, 3.0));
  assert_near(f->x[1], 1, solve_tol(3.0, 4, 3.0));
  assert_near(kkt_error(&qp, f->x, f->y_eq, f->y_in), 0.0, solve_tol(3.0, 4, 3.0));
}

/* random rank-deficient PSD QPs on a box with random cuts through a known interior point:
 * the KKT conditions hold (an independent optimality certificate) to the residual a
 * backward-stable solve of the (n + m) × (n + m) KKT system leaves, (n + m) ε ‖K‖ ‖z‖ whatever
 * its condition (Higham §7.1): ‖H‖∞ ≤ 4n, |x| ≤ 1 (the box), |c| ≤ 3, rows of A of ∞-norm 1
 * times n entries, and the multipliers as returned */
static void test_random_kkt(void **state) {
  fixture *f = *state;
  uint64_t s = 7;
  enum { n = 8, mb = 2 * n, mc = 6, m = mb + mc };
  for (int trial = 0; trial < 50; ++trial) {
    double B[n * 4], H[n * n], c[n], A[m * n] = {0}, b[m], Ae[2 * n], be[2], x0[n];
    for (int i = 0; i < n * 4; ++i)
      B[i] = test_rand(&s, -1, 1);
    mr_matmul_abt(H, B, B, n, 4, n); // rank 4
    for (int i = 0; i < n; ++i)
      c[i] = test_rand(&s, -3, 3), x0[i] = test_rand(&s, -0.5, 0.5);
    for (int i = 0; i < n; ++i) {
      A[i * n + i] = 1, b[i] = -1;
      A[(n + i) * n + i] = -1, b[n + i] = -1;
    }
    for (int i = mb; i < m; ++i) {
      for (int j = 0; j < n; ++j)
        A[i * n + j] = test_rand(&s, -1, 1);
      b[i] = mr_dot(A + i * n, x0, n) - test_rand(&s, 0, 0.3);
    }
    for (int i = 0; i < 2 * n; ++i)
      Ae[i] = test_rand(&s, -1, 1);
    be[0] = mr_dot(Ae, x0, n), be[1] = mr_dot(Ae + n, x0, n);
    mr_qp_problem qp = {n, 2, m, H, c, Ae, be, A, b};
    assert_int_equal(solve(f, &qp), MR_OK);
    assert_int_equal(f->info.outcome, MR_QP_OPTIMAL);
    double ynorm = fmax(mr_norm_inf(f->y_eq, 2), mr_norm_inf(f->y_in, m));
    double scale = 4.0 * n * 1.0 + 3.0 + n * ynorm;
    assert_near(kkt_error(&qp, f->x, f->y_eq, f->y_in), 0.0, (n + 2 + m) * DBL_EPSILON * scale);
  }
}

/* sizes beyond the workspace and an iteration cap of 1 are reported, not crashed on */
static void test_limits(void **state) {
  fixture *f = *state;
  double H[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, c[3] = {-2, 1, -0.5};
  double A[18] = {1, 0, 0, 0, 1, 0, 0, 0, 1, -1, 0, 0, 0, -1, 0, 0, 0, -1};
  double b[6] = {0, 0, 0, -1, -1, -1};
  mr_qp_problem qp = {3, 0, 6, H, c, NULL, NULL, A, b};
  mr_qp_settings st = mr_qp_settings_default();
  st.max_iter = 1;
  assert_int_equal(mr_qp_solve(&qp, &st, &f->ws, f->x, NULL, NULL, &f->info, &f->err),
                   MR_ERR_LIMIT);
  assert_non_null(strstr(f->err.msg, "no convergence"));
  qp.n = NMAX + 1;
  assert_int_equal(solve(f, &qp), MR_ERR_INVALID);
}

/* Jacobi eigenvalues of [[2,1],[1,2]] are 1 and 3; A V = V diag(e) for a random 6x6 */
static void test_eigen(void **state) {
  double A[4] = {2, 1, 1, 2}, e[2];
  mr_sym_eigen(A, 2, e, NULL);
  /* one rotation (tan θ = 1) and its application: a few ulp of the eigenvalues' scale 3 */
  assert_near(fmin(e[0], e[1]), 1, 4 * DBL_EPSILON * 3.0);
  assert_near(fmax(e[0], e[1]), 3, 4 * DBL_EPSILON * 3.0);
  uint64_t s = 3;
  enum { n = 6 };
  double B[n * n], S[n * n], W[n * n], V[n * n], ev[n];
  for (int i = 0; i < n * n; ++i)
    B[i] = test_rand(&s, -1, 1);
  mr_matmul_abt(S, B, B, n, n, n);
  memcpy(W, S, sizeof S);
  mr_sym_eigen(W, n, ev, V);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sv = 0;
      for (int k = 0; k < n; ++k)
        sv += S[i * n + k] * V[k * n + j];
      /* each of the O(n²) rotations per sweep, applied to S and V, rounds by ε ‖S‖; the
       * residual of cyclic Jacobi is a small multiple of n² ε ‖S‖ (‖S‖ ≤ trace ≤ n² = 36) */
      assert_near(sv, ev[j] * V[i * n + j], n * n * DBL_EPSILON * 36.0);
    }
}

/* Lemke on Q = [[2,1],[1,2]]: q = (−5, −6) has z = (4/3, 7/3), w = 0 (solve Q z = −q);
 * q = (−1, 3) has z = (1/2, 0), w = (0, 7/2); q ≥ 0 has z = 0 with no pivot */
static void test_lemke(void **state) {
  mr_arena a;
  mr_error err;
  assert_int_equal(mr_arena_init(&a, mr_lemke_bytes(2)), 0);
  double Q[4] = {2, 1, 1, 2}, q1[2] = {-5, -6}, q2[2] = {-1, 3}, q3[2] = {1, 0}, z[2], w[2];
  int piv;
  assert_int_equal(mr_lemke_solve(Q, q1, 2, 0, &a, z, w, &piv, NULL, &err), MR_OK);
  /* pivots on Q (κ = 3, n = 2) and q of size ≤ 6: the solve's bound with values ≤ 3.5 */
  assert_near(z[0], 4.0 / 3, solve_tol(3.0, 2, 3.5));
  assert_near(z[1], 7.0 / 3, solve_tol(3.0, 2, 3.5));
  assert_near(w[0], 0, solve_tol(3.0, 2, 3.5));
  assert_near(w[1], 0, solve_tol(3.0, 2, 3.5));
  assert_int_equal(mr_lemke_solve(Q, q2, 2, 0, &a, z, w, &piv, NULL, &err), MR_OK);
  assert_near(z[0], 0.5, solve_tol(3.0, 2, 3.5));
  assert_near(z[1], 0, solve_tol(3.0, 2, 3.5));
  assert_near(w[1], 3.5, solve_tol(3.0, 2, 3.5));
  assert_int_equal(mr_lemke_solve(Q, q3, 2, 0, &a, z, w, &piv, NULL, &err), MR_OK);
  assert_int_equal(piv, 0);
  assert_near(z[0] + z[1], 0, 0);
  // Q = −I, q = (−1, −1) has no solution: ray termination
  double Qn[4] = {-1, 0, 0, -1}, qn[2] = {-1, -1};
  assert_int_equal(mr_lemke_solve(Qn, qn, 2, 0, &a, z, w, &piv, NULL, &err), MR_ERR_NUMERIC);
  mr_arena_destroy(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unconstrained),
      cmocka_unit_test(test_equality),
      cmocka_unit_test(test_box),
      cmocka_unit_test(test_infeasible),
      cmocka_unit_test(test_unbounded_and_psd),
      cmocka_unit_test(test_degenerate),
      cmocka_unit_test(test_random_kkt),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_eigen),
      cmocka_unit_test(test_lemke),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
