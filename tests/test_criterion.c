/* The stopping criterion (mr_solver_settings.criterion): each solver stops on its own model's
 * criterion by default, on the NCP criterion ε_abs under MR_CRITERION_NCP.
 *
 * The problem: a point mass m = 1 kg sliding at 1 m/s on a plane and pressed into it, one
 * contact, G = (Δt/m) I₃ = 1e-3 I₃ (m/(N s)), g = (1, 0, −0.01) m/s, μ = 0.5. Closed forms:
 *   NCP: sliding, λ_N = 0.01/1e-3 = 10 N, λ_T = (−5, 0) N, c = (0.995, 0, 0).
 *   CCP: λ = Π_K(−G⁻¹g) = Π_K(−1000, 0, 10): on the cone's boundary with
 *        λ_N = (μ·1000 + 10)/(1 + μ²) = 408 N, λ_T = (−204, 0) N, c = (0.796, 0, 0.398)
 *        (contact at a distance, c_N = μ‖c_T‖). Its NCP criterion: λ ∈ K, c + Γ(c) =
 *        (0.796, 0, 0.796) ∈ K*, and ε_c = ⟨λ, c + Γ(c)⟩ = −204·0.796 + 408·0.796 = 162.384.
 * So ccp-pgs, ccp-admm and ccp-newton meet their own criterion with ε_abs = 162 ≫ eps_abs: under
 * the NCP criterion they do not converge (at max_iter, or on their stall test), and say so. lcp-pgs
 * sliding along a pyramid facet's axis has the NCP solution: it meets the NCP criterion too. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact_problems.h"
#include "core/arena.h"
#include "moreau/contact.h"

#define MU 0.5
/* ε_c of the CCP solution, closed form (header) */
#define CCP_EPS_C (204.0 * 0.796)

typedef struct {
  mr_solver_stats st;
  double lambda[3], c[3];
  mr_status status;
} result;

/* solve the sliding point mass with solver name; criterion, max_iter and eps_rel given */
static result solve_slide(const char *name, int criterion, int max_iter, double eps_rel) {
  cp_problem cp;
  cp_single(&cp, 1.0, 1.0, 0.0, -0.01, MU);
  mr_solver_settings s = mr_solver_settings_default();
  s.criterion = criterion, s.max_iter = max_iter, s.eps_rel = eps_rel, s.warm_start = 0;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(1, 0)), 0);
  result r;
  memset(&r, 0, sizeof r);
  mr_error err;
  r.status = mr_solve(name, &cp.p, &s, NULL, &work, r.lambda, r.c, &r.st, &err);
  mr_arena_destroy(&work);
  return r;
}

/* ccp-pgs: its own criterion is met by its first sweep (exact on this diagonal G) at the CCP
 * solution, whose NCP ε_abs is 162 N (closed form); on the NCP criterion the same sweep is not
 * converged and the solve reports the budget. Tolerances: each sweep is the projection itself
 * to round-off (ulps of 1000), so 1e-3 N on forces of 408 N and 1e-3 on ε_c are wide margins. */
static void test_ccp_pgs_parts(void **state) {
  (void)state;
  result own = solve_slide("ccp-pgs", MR_CRITERION_OWN, 1, 1e-12);
  assert_int_equal(own.status, MR_OK);
  assert_true(own.st.converged);
  assert_false(own.st.budget);
  assert_true(own.st.eps_model <= 1e-6);
  assert_near(own.lambda[2], 408.0, 1e-3);
  assert_near(own.lambda[0], -204.0, 1e-3);
  assert_near(own.st.eps_abs, CCP_EPS_C, 1e-3);
  result ncp = solve_slide("ccp-pgs", MR_CRITERION_NCP, 1, 1e-12);
  assert_int_equal(ncp.status, MR_OK);
  assert_false(ncp.st.converged);
  assert_true(ncp.st.budget);
  assert_int_equal(ncp.st.iterations, 1);
  /* the same iterate, and eps_model still the model's own criterion */
  assert_near(ncp.lambda[2], 408.0, 1e-3);
  assert_near(ncp.st.eps_abs, CCP_EPS_C, 1e-3);
  assert_true(ncp.st.eps_model <= 1e-6);
}

/* with the default stall test the CCP fixed point stops the sweeps early, still unconverged on
 * the NCP criterion, and not at the budget */
static void test_ccp_pgs_stall(void **state) {
  (void)state;
  result r = solve_slide("ccp-pgs", MR_CRITERION_NCP, 1000, 1e-12);
  assert_int_equal(r.status, MR_OK);
  assert_false(r.st.converged);
  assert_false(r.st.budget);
  assert_true(r.st.iterations < 1000);
}

/* the whole-G CCP solvers: converged on their own model, not on the NCP's. ccp-newton (no best
 * iterate: a descent method) returns the CCP point, whose ε_abs is the closed form's to its
 * compliance R = 1e-6 diag(G) (λ off by ~1e-6 relative: 1e-3 relative bounds it); ccp-admm
 * returns the iterate of smallest NCP ε_abs it met, at most the CCP point's */
static void test_whole_g(void **state) {
  (void)state;
  static const char *const names[] = {"ccp-admm", "ccp-newton"};
  for (int k = 0; k < 2; ++k) {
    result own = solve_slide(names[k], MR_CRITERION_OWN, 200, 1e-12);
    result ncp = solve_slide(names[k], MR_CRITERION_NCP, 200, 1e-12);
    assert_int_equal(own.status, MR_OK);
    assert_int_equal(ncp.status, MR_OK);
    assert_true(own.st.converged);
    assert_false(ncp.st.converged);
    assert_near(own.st.eps_abs, CCP_EPS_C, 1e-3 * CCP_EPS_C);
    assert_true(ncp.st.eps_abs > 1e-6);
    if (k == 1) assert_near(ncp.st.eps_abs, CCP_EPS_C, 1e-3 * CCP_EPS_C);
    assert_true(ncp.st.eps_abs <= own.st.eps_abs * (1.0 + 1e-9));
  }
}

/* lcp-pgs sliding along t₁ (a facet axis of the pyramid) solves the NCP: the NCP criterion is
 * met, with the NCP closed form λ = (−5, 0, 10) N to the criterion's 1e-6 over σ_min(G) = 1e-3:
 * √3·1e-3 N */
static void test_lcp_reaches_ncp(void **state) {
  (void)state;
  result r = solve_slide("lcp-pgs", MR_CRITERION_NCP, 1000, 1e-12);
  assert_int_equal(r.status, MR_OK);
  assert_true(r.st.converged);
  assert_true(r.st.eps_abs <= 1e-6);
  assert_near(r.lambda[2], 10.0, 1.8e-3);
  assert_near(r.lambda[0], -5.0, 1.8e-3);
}

/* the NCP solvers stop on the NCP criterion either way: the same result bit for bit */
static void test_ncp_solvers_unchanged(void **state) {
  (void)state;
  static const char *const names[] = {"ncp-pgs", "raisim-ds", "ncp-admm", "ncp-stagproj"};
  for (int k = 0; k < 4; ++k) {
    result a = solve_slide(names[k], MR_CRITERION_OWN, 1000, 1e-12);
    result b = solve_slide(names[k], MR_CRITERION_NCP, 1000, 1e-12);
    assert_int_equal(a.status, MR_OK);
    assert_true(a.st.converged && b.st.converged);
    assert_int_equal(a.st.iterations, b.st.iterations);
    assert_memory_equal(a.lambda, b.lambda, sizeof a.lambda);
  }
}

/* a criterion other than 0 or 1 is refused by name */
static void test_bad_criterion(void **state) {
  (void)state;
  result r = solve_slide("ncp-pgs", 2, 10, 1e-12);
  assert_int_equal(r.status, MR_ERR_INVALID);
}

/* The scaled criterion (mr_problem_criteria_scaled) at the CCP solution λ = (−204, 0, 408) N, c =
 * (0.796, 0, 0.398) m/s: ε_p = ε_d = 0, ε_c = 162.384; F = 408 N, V = max(|1| + 1e-3·204, 0,
 * |−0.01| + 1e-3·408) = 1.204 m/s, F V = 491.232. Closed forms: with eps_scale 1e-15 the tolerance
 * is eps_abs and ε̂ = ε_abs bit for bit; with 0.1, ε̂ = 162.384 − (49.1232 − 1e-6); with 0.5 the
 * tolerance 245.6 covers ε_c and ε̂ = 0; with 0, ε_abs. (The entries of c are ulps from the
 * decimals, so 1e-9 on values of ~100.) */
static void test_scaled_closed_form(void **state) {
  (void)state;
  cp_problem cp;
  cp_single(&cp, 1.0, 1.0, 0.0, -0.01, MU);
  double l[3] = {-204.0, 0.0, 408.0}, c[3], ep, ed, ec;
  mr_problem_velocity(&cp.p, l, c);
  double e = mr_problem_criteria(&cp.p, l, c, 1, &ep, &ed, &ec);
  assert_near(ec, CCP_EPS_C, 1e-9);
  assert_true(ep == 0.0 && ed == 0.0);
  static const double scales[] = {1e-15, 0.1, 0.5, 0.0};
  double want[] = {e, CCP_EPS_C - (0.1 * 408.0 * 1.204 - 1e-6), 0.0, e};
  for (int k = 0; k < 4; ++k) {
    double sp, sd, sc;
    double got = mr_problem_criteria_scaled(&cp.p, l, c, 1e-6, scales[k], &sp, &sd, &sc);
    assert_near(got, want[k], 1e-9);
    assert_true(sp == ep && sd == ed && sc == ec); /* the unscaled maxima */
    if (k == 0 || k == 3) assert_true(got == e);
  }
}

/* the distance from x to y, written out */
static double distance3(const double *x, const double *y) {
  return sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) +
              (x[2] - y[2]) * (x[2] - y[2]));
}

/* mr_contact_criteria's parts against their definitions with the cones' projections
 * (mr_cone_project, mr_dual_cone_project, mr_desaxce), bit for bit: points inside the cones, on
 * their boundaries to a few units in the last place (where the criteria skip a projection by a
 * bound), outside, in the polar cones, with μ = 0, infinite and NaN entries (NaN where the
 * definition gives NaN) */
static void test_contact_criteria_definition(void **state) {
  uint64_t s = 77;
  const double mus[] = {0.0, 0.3, 0.9, 1.0, 2.5, 1e-8};
  long checked = 0, inside = 0;
  for (int k = 0; k < 200000; ++k) {
    double mu = mus[test_rand_u64(&s) % 6], n = pow(10.0, test_rand(&s, -6, 6));
    double th = test_rand(&s, 0, 6.283185307179586), r = mu * n;
    int ulps = (int)(test_rand_u64(&s) % 13) - 6;
    for (int q = 0; q < abs(ulps); ++q)
      r = nextafter(r, ulps > 0 ? INFINITY : 0.0);
    double l[3] = {r * cos(th), r * sin(th), n}, c[3];
    for (int a = 0; a < 3; ++a)
      c[a] = test_rand(&s, -2, 2);
    switch (test_rand_u64(&s) % 8) { /* other points than the boundary's */
    case 0:
      l[0] = test_rand(&s, -3, 3), l[1] = test_rand(&s, -3, 3), l[2] = test_rand(&s, -3, 3);
      break;
    case 1:
      l[2] = -n;
      break;
    case 2:
      l[1] = INFINITY;
      break;
    case 3:
      l[2] = INFINITY;
      break;
    case 4:
      c[0] = NAN;
      break;
    case 5: /* along a tangent axis, where |λ_T1| + |λ_T2| is ‖λ_T‖ */
      l[0] = r, l[1] = 0.0;
      break;
    default:
      break;
    }
    int desaxce = k % 2;
    double ep, ed, ec, proj[3], sv[3];
    mr_contact_criteria(mu, l, c, desaxce, &ep, &ed, &ec);
    mr_cone_project(mu, l, proj);
    double want_p = distance3(l, proj);
    if (desaxce)
      mr_desaxce(mu, c, sv);
    else
      memcpy(sv, c, sizeof sv);
    mr_dual_cone_project(mu, sv, proj);
    double want_d = distance3(sv, proj), want_c = fabs(l[0] * sv[0] + l[1] * sv[1] + l[2] * sv[2]);
    assert_true(isnan(want_p) ? isnan(ep) : memcmp(&ep, &want_p, sizeof ep) == 0);
    assert_true(isnan(want_d) ? isnan(ed) : memcmp(&ed, &want_d, sizeof ed) == 0);
    assert_true(isnan(want_c) ? isnan(ec) : memcmp(&ec, &want_c, sizeof ec) == 0);
    inside += want_p == 0.0 && l[2] > 0.0;
    ++checked;
  }
  /* both sides of the boundary were exercised */
  assert_true(inside > 20000 && inside < checked - 20000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ccp_pgs_parts),
      cmocka_unit_test(test_ccp_pgs_stall),
      cmocka_unit_test(test_whole_g),
      cmocka_unit_test(test_lcp_reaches_ncp),
      cmocka_unit_test(test_ncp_solvers_unchanged),
      cmocka_unit_test(test_bad_criterion),
      cmocka_unit_test(test_scaled_closed_form),
      cmocka_unit_test(test_contact_criteria_definition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
