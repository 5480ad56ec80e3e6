/* Core: dense linear algebra, spatial algebra, JSON, arena, cones and criteria. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/linalg.h"
#include "moreau/contact.h"
#include "moreau/spatial.h"
#include "test_random.h"

/* the rounding bound of k floating-point operations on values of at most x: each rounds to
 * half an ulp of its result, so k/2 ulp; k ulp leaves room for the operands' own rounding */
static double ops_tol(int k, double x) {
  return k * DBL_EPSILON * x;
}

/* ‖·‖∞ of an n × n row-major matrix and of a vector */
static double mat_norm_inf(const double *A, int n) {
  double r = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j)
      row += fabs(A[i * n + j]);
    r = fmax(r, row);
  }
  return r;
}
static double vec_norm_inf(const double *x, int n) {
  double r = 0;
  for (int i = 0; i < n; ++i)
    r = fmax(r, fabs(x[i]));
  return r;
}

static mr_motion random_motion(uint64_t *s) {
  mr_motion m = {mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)),
                 mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1))};
  return m;
}

/* Cholesky of a random SPD matrix solves A x = b to round-off: the computed x solves
 * (A + ΔA) x = b with ‖ΔA‖∞ ≤ (n + 1) ε ‖A‖∞ (Higham, Thm 10.4, with ‖|L||Lᵀ|‖ ≤ n ‖A‖ for
 * SPD A), and the residual's own matrix-vector product adds n ε ‖A‖∞ ‖x‖∞ */
static void test_cholesky(void **state) {
  uint64_t s = 1;
  enum { n = 9 };
  double B[n * n], A[n * n], L[n * n], x[n], b[n], r[n];
  for (int i = 0; i < n * n; ++i)
    B[i] = test_rand(&s, -1, 1);
  mr_matmul_abt(A, B, B, n, n, n);
  for (int i = 0; i < n; ++i)
    A[i * n + i] += 0.1, b[i] = test_rand(&s, -1, 1);
  memcpy(L, A, sizeof A);
  assert_int_equal(mr_cholesky(L, n), 0);
  memcpy(x, b, sizeof b);
  mr_cholesky_solve(L, n, x);
  mr_matvec(r, A, x, n, n);
  assert_vec_near(r, b, n, ops_tol(2 * n + 1, mat_norm_inf(A, n) * vec_norm_inf(x, n)));
  /* an indefinite matrix is refused at its first bad pivot */
  double C[4] = {1, 2, 2, 1};
  assert_int_equal(mr_cholesky(C, 2), 2);
}

/* LU with partial pivoting solves unsymmetric systems whose elimination interchanges rows at
 * several stages (random entries in [−1, 1], and a matrix whose leading pivot is zero). A
 * backward-stable solve leaves |A x − b| ≤ 2 n ε ρ ‖A‖∞ ‖x‖∞ with ρ the growth factor
 * max |U| / max |A| (Higham, Thm 9.5), here computed from the factors; the residual's product
 * adds n ε ‖A‖∞ ‖x‖∞; the same for the solve by columns from the transposed factor. A misapplied
 * interchange gives O(1) */
static void test_lu(void **state) {
  uint64_t s = 11;
  enum { n = 9 };
  double A[n * n], LU[n * n], x[n], b[n], r[n];
  int piv[n];
  for (int t = 0; t < 20; ++t) {
    for (int i = 0; i < n * n; ++i)
      A[i] = test_rand(&s, -1, 1);
    if (t == 0) A[0] = 0.0; /* the first column must be pivoted */
    for (int i = 0; i < n; ++i)
      b[i] = test_rand(&s, -1, 1);
    memcpy(LU, A, sizeof A);
    assert_int_equal(mr_lu_factor(LU, n, piv), 0);
    memcpy(x, b, sizeof b);
    mr_lu_solve(LU, n, piv, x);
    mr_matvec(r, A, x, n, n);
    double umax = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i; j < n; ++j)
        umax = fmax(umax, fabs(LU[i * n + j]));
    double rho = umax / vec_norm_inf(A, n * n);
    assert_vec_near(r, b, n, ops_tol(2 * n * rho + n, mat_norm_inf(A, n) * vec_norm_inf(x, n)));
    /* the same from the factor stored transposed, solved by columns: the same bound */
    double T[n * n], y[n];
    mr_transpose(T, LU, n, n);
    memcpy(y, b, sizeof b);
    mr_lu_solve_t(T, n, piv, y);
    mr_matvec(r, A, y, n, n);
    assert_vec_near(r, b, n, ops_tol(2 * n * rho + n, mat_norm_inf(A, n) * vec_norm_inf(y, n)));
  }
  double Z[4] = {1, 2, 2, 4}; /* singular: a zero pivot */
  assert_int_equal(mr_lu_factor(Z, 2, piv), -1);
}

/* placements compose and invert; motions and forces keep their power across frames. Rotations
 * are orthonormal to 2 ulp, translations at most √3 (4 for a composition), motion and force
 * entries at most 1 (4 once moved); each result is a sum of at most 6 rounded products:
 * ops_tol of about 8 operations on those magnitudes */
static void test_se3_actions(void **state) {
  uint64_t s = 2;
  for (int k = 0; k < 100; ++k) {
    mr_se3 a = test_random_se3(&s, 1), b = test_random_se3(&s, 1);
    mr_se3 ab = mr_se3_mul(&a, &b), ai = mr_se3_inverse(&a), id = mr_se3_mul(&ai, &a);
    mr_se3 bb = mr_se3_inv_mul(&a, &ab);
    for (int i = 0; i < 3; ++i) {
      assert_near(id.p.v[i], 0.0, ops_tol(8, 2.0));
      assert_near(bb.p.v[i], b.p.v[i], ops_tol(8, 4.0));
      for (int j = 0; j < 3; ++j)
        assert_near(id.R.m[i][j], i == j, ops_tol(8, 1.0));
    }
    mr_motion m = random_motion(&s);
    mr_force f = {mr_v3(test_rand(&s, -1, 1), 0.3, -0.2), mr_v3(0.1, test_rand(&s, -1, 1), 0.5)};
    double p0 = mr_force_dot(f, m);
    double p1 = mr_force_dot(mr_se3_act_force(&a, f), mr_se3_act_motion(&a, m));
    assert_near(p0, p1, ops_tol(16, 4.0)); /* 6 products of moved entries ≤ 4 · 1 */
    mr_motion back = mr_se3_inv_act_motion(&a, mr_se3_act_motion(&a, m));
    assert_near(back.v.v[0], m.v.v[0], ops_tol(16, 4.0));
    assert_near(back.w.v[2], m.w.v[2], ops_tol(8, 1.0));
    /* the cross products are dual: ⟨m1 ×* f, m2⟩ = −⟨f, m1 × m2⟩ */
    mr_motion m2 = random_motion(&s);
    assert_near(mr_force_dot(mr_motion_cross_force(m, f), m2),
                -mr_force_dot(f, mr_motion_cross(m, m2)), ops_tol(16, 2.0));
  }
}

/* quaternion ↔ matrix round trip, rpy convention, inertia 6x6 against the momentum map */
static void test_rotations_and_inertia(void **state) {
  uint64_t s = 3;
  for (int k = 0; k < 100; ++k) {
    mr_se3 a = test_random_se3(&s, 1);
    mr_quat q = mr_m3_to_quat(&a.R);
    mr_mat3 R = mr_quat_to_m3(q);
    for (int i = 0; i < 3; ++i)
      /* the largest quaternion component (≥ 1/2) from a square root, the others by quotients
       * by it, then products: 16 ulp of the unit entries */
      for (int j = 0; j < 3; ++j)
        assert_near(R.m[i][j], a.R.m[i][j], ops_tol(16, 1.0));
  }
  /* rpy (0, 0, π/2) maps x to y */
  mr_mat3 Rz = mr_m3_rpy(0, 0, M_PI / 2);
  mr_vec3 y = mr_m3_mulv(&Rz, mr_v3(1, 0, 0));
  assert_near(y.v[1], 1.0, ops_tol(2, 1.0)); /* cos(π/2) = 6e-17, sin(π/2) = 1 rounded */
  mr_inertia Y = {2.0, mr_v3(0.1, -0.2, 0.3), mr_m3_diag(0.1, 0.2, 0.3)};
  Y.I.m[0][1] = Y.I.m[1][0] = 0.01;
  double M[6][6];
  mr_inertia_matrix(&Y, M);
  mr_motion m = random_motion(&s);
  mr_force f = mr_inertia_mul(&Y, m);
  double x[6] = {m.v.v[0], m.v.v[1], m.v.v[2], m.w.v[0], m.w.v[1], m.w.v[2]};
  double h[6] = {f.f.v[0], f.f.v[1], f.f.v[2], f.n.v[0], f.n.v[1], f.n.v[2]};
  for (int i = 0; i < 6; ++i) {
    double r = 0;
    for (int j = 0; j < 6; ++j)
      r += M[i][j] * x[j];
    assert_near(r, h[i], ops_tol(16, 2.0)); /* 6 products of entries ≤ m = 2 and ≤ 1 */
  }
  /* adding two point masses: the centre lies between them, inertia from the parallel axes */
  mr_inertia p1 = {1.0, mr_v3(1, 0, 0), mr_m3_zero()}, p2 = {1.0, mr_v3(-1, 0, 0), mr_m3_zero()};
  mr_inertia sum = mr_inertia_add(&p1, &p2);
  assert_near(sum.m, 2.0, 0);
  assert_near(sum.c.v[0], 0.0, 0);
  assert_near(sum.I.m[1][1], 2.0, 0); /* small integers: exact */
  assert_near(sum.I.m[0][0], 0.0, 0);
}

/* JSON: values, positions, and error messages naming line and column */
static void test_json(void **state) {
  mr_json *v = NULL;
  mr_error err;
  assert_int_equal(
      mr_json_parse("{\"a\": [1, 2.5e0, -3],\n \"b\": \"x\\ny\", \"c\": true}", "t", &v, &err),
      MR_OK);
  double a[3];
  assert_int_equal(mr_json_read_vector(mr_json_get(v, "a"), "t", "a", a, 3, &err), MR_OK);
  assert_near(a[1], 2.5, 0);
  assert_string_equal(mr_json_get(v, "b")->string, "x\ny");
  assert_int_equal(mr_json_get(v, "b")->line, 2);
  assert_int_equal(mr_json_read_vector(mr_json_get(v, "a"), "t", "a", a, 2, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "3 entries, expected 2"));
  mr_json_free(v);
  assert_int_equal(mr_json_parse("[1,\n  2,,]", "bad.json", &v, &err), MR_ERR_PARSE);
  assert_non_null(strstr(err.msg, "bad.json:2:5"));
  assert_int_equal(mr_json_parse("[NaN]", "n", &v, &err), MR_ERR_PARSE);
  assert_int_equal(mr_json_parse("{\"a\" 1}", "n", &v, &err), MR_ERR_PARSE);
  assert_int_equal(mr_json_parse("\"open", "n", &v, &err), MR_ERR_PARSE);
  assert_int_equal(mr_json_parse("", "n", &v, &err), MR_ERR_PARSE);
  /* deep nesting is refused, not a stack overflow */
  char deep[300];
  memset(deep, '[', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  assert_int_equal(mr_json_parse(deep, "n", &v, &err), MR_ERR_PARSE);
  assert_int_equal(mr_json_load("/nonexistent/x.json", &v, &err), MR_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/x.json"));
  /* a duplicate key is refused where it stands; a number beyond the double range too */
  assert_int_equal(mr_json_parse("{\"a\": 1,\n \"a\": 2}", "d.json", &v, &err), MR_ERR_PARSE);
  assert_non_null(strstr(err.msg, "d.json:2:"));
  assert_non_null(strstr(err.msg, "duplicate"));
  assert_int_equal(mr_json_parse("[1e999]", "o.json", &v, &err), MR_ERR_PARSE);
  assert_non_null(strstr(err.msg, "out of range near '1e999'"));
}

/* JSON: escapes decode to UTF-8, columns count characters, nesting is bounded at 64 levels */
static void test_json_positions(void **state) {
  mr_json *v = NULL;
  mr_error err;
  assert_int_equal(
      mr_json_parse("{\"\\u00e9t\\u00e9\": \"\\u00e9\", \"b\": [1, {\"c\": null}]}", "u", &v, &err),
      MR_OK);
  assert_string_equal(mr_json_get(v, "\xc3\xa9t\xc3\xa9")->string, "\xc3\xa9");
  assert_int_equal(mr_json_get(v, "b")->col, 34);
  assert_int_equal(mr_json_at(mr_json_get(v, "b"), 1)->col, 38);
  assert_int_equal(mr_json_get(mr_json_at(mr_json_get(v, "b"), 1), "c")->col, 44);
  mr_json_free(v);
  /* a multi-byte character counts one column: "é" is two bytes */
  assert_int_equal(mr_json_parse("[\"\xc3\xa9\", 2]", "u", &v, &err), MR_OK);
  assert_int_equal(mr_json_at(v, 1)->col, 7);
  mr_json_free(v);
  char deep[200];
  for (int depth = 64; depth <= 65; ++depth) {
    memset(deep, '[', (size_t)depth);
    memset(deep + depth, ']', (size_t)depth);
    deep[2 * depth] = '\0';
    mr_status st = mr_json_parse(deep, "n", &v, &err);
    assert_int_equal(st, depth == 64 ? MR_OK : MR_ERR_PARSE);
    if (st) assert_non_null(strstr(err.msg, "n:1:65: nesting deeper than 64 levels"));
    mr_json_free(v);
  }
}

/* the arena aligns, runs out cleanly, and rewinds to a mark */
static void test_arena(void **state) {
  mr_arena a;
  assert_int_equal(mr_arena_init(&a, 1024), 0);
  size_t mark = mr_arena_mark(&a);
  double *x = mr_arena_doubles(&a, 10);
  assert_non_null(x);
  assert_int_equal((uintptr_t)x % 32, 0);
  assert_null(mr_arena_alloc(&a, 2000));
  mr_arena_reset(&a, mark);
  assert_non_null(mr_arena_alloc(&a, 1000));
  mr_arena_destroy(&a);
}

/* cone projection: fixed points, the polar cone, boundary, and the Moreau decomposition
 * x = P_K(x) + P_{K°}(x) with orthogonal parts, P_{K°}(x) = −P_{K*}(−x) */
static void test_cone(void **state) {
  uint64_t s = 4;
  double out[3];
  double inside[3] = {0.1, 0.1, 1.0};
  mr_cone_project(0.5, inside, out);
  assert_vec_near(out, inside, 3, 0);
  double polar[3] = {0.1, 0.0, -1.0};
  mr_cone_project(0.5, polar, out);
  assert_near(hypot(out[0], out[1]) + fabs(out[2]), 0.0, 0);
  /* μ = 0: K_0 is the normal ray, a pulling force projects to 0, a pushing one is kept */
  double pull[3] = {0.0, 0.0, -1.0}, push[3] = {0.3, 0.0, 2.0};
  mr_cone_project(0.0, pull, out);
  assert_near(fabs(out[0]) + fabs(out[1]) + fabs(out[2]), 0.0, 0);
  mr_cone_project(0.0, push, out);
  assert_near(out[0], 0.0, 0);
  assert_near(out[2], 2.0, 0);
  for (int k = 0; k < 1000; ++k) {
    double mu = k < 100 ? 0.0 : test_rand(&s, 0.0, 2.0);
    double x[3] = {test_rand(&s, -2, 2), test_rand(&s, -2, 2), test_rand(&s, -2, 2)};
    double p[3], mx[3] = {-x[0], -x[1], -x[2]}, q[3];
    mr_cone_project(mu, x, p);
    mr_dual_cone_project(mu, mx, q);
    /* each projection is a few products, a square root and a quotient by 1 + μ² on |x| ≤ 2√3
     * (< 4), with μ ≤ 2: 8 operations on values up to (1 + μ) 4 */
    const double t = ops_tol(8, (1 + mu) * 4.0);
    for (int i = 0; i < 3; ++i)
      assert_near(p[i] - q[i], x[i], t); /* x = P_K − P_K*(−x) */
    assert_near(p[0] * q[0] + p[1] * q[1] + p[2] * q[2], 0.0, 4.0 * 2 * t);
    assert_true(hypot(p[0], p[1]) <= mu * p[2] + t);
  }
}

/* criteria vanish at an exact sliding solution and measure a violation */
static void test_criteria(void **state) {
  /* sliding along +x with c_N = 0: λ_T = −μ λ_N x̂, and c + Γ(c) = (c_T, μ‖c_T‖) on ∂K* */
  double mu = 0.4, lambda[3] = {-0.4, 0.0, 1.0}, c[3] = {2.0, 0.0, 0.0};
  double ep, ed, ec;
  mr_contact_criteria(mu, lambda, c, 1, &ep, &ed, &ec);
  /* decimal μ = 0.4 and λ_T = −0.4: a few operations on values ≤ 2 */
  assert_near(ep, 0.0, ops_tol(4, 2.0));
  assert_near(ed, 0.0, ops_tol(4, 2.0));
  assert_near(ec, 0.0, ops_tol(4, 2.0));
  /* without Γ the same pair violates dual feasibility (c_N < μ‖c_T‖): c = (2, 0, 0) lies at
   * distance |c| sin(angle to the boundary ray (1, μ)) = 2 μ / √(1 + μ²) from K* */
  mr_contact_criteria(mu, lambda, c, 0, &ep, &ed, &ec);
  assert_near(ed, 2 * mu / sqrt(1 + mu * mu), ops_tol(8, 2.0));
  /* λ outside the cone: ε_p is its distance to the cone */
  double out[3] = {0.0, 0.0, -1.0};
  mr_contact_criteria(mu, out, (double[3]){0, 0, 0}, 1, &ep, &ed, &ec);
  assert_near(ep, 1.0, ops_tol(4, 1.0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cholesky),    cmocka_unit_test(test_lu),
      cmocka_unit_test(test_se3_actions), cmocka_unit_test(test_rotations_and_inertia),
      cmocka_unit_test(test_json),        cmocka_unit_test(test_json_positions),
      cmocka_unit_test(test_arena),       cmocka_unit_test(test_cone),
      cmocka_unit_test(test_criteria),
  };
  return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
