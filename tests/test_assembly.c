/* Contact problem assembly on a free box resting on the ground at its 4 bottom corners. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "core/linalg.h"
#include "moreau/assembly.h"

enum { NC = 4 };
static const double MASS = 1.0, SIDE = 0.2, DT = 1e-3;

/* a free cube of side SIDE, uniform density */
static mr_model *make_cube(void) {
  mr_model *m = mr_model_create("cube");
  double I = MASS * SIDE * SIDE / 6.0;
  mr_inertia Y = {MASS, mr_v3_zero(), mr_m3_diag(I, I, I)};
  assert_int_equal(mr_model_add_body(m, 0, "root", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(),
                                     "cube", Y, NULL),
                   1);
  return m;
}

/* the 4 bottom corners of the cube at height SIDE/2 (q translation), gap phi */
static void corners(const double *q, double phi, mr_contact_geometry *c) {
  mr_mat3 R = mr_quat_to_m3((mr_quat){q[3], q[4], q[5], q[6]});
  for (int i = 0; i < NC; ++i) {
    mr_vec3 local = mr_v3((i & 1 ? 0.5 : -0.5) * SIDE, (i & 2 ? 0.5 : -0.5) * SIDE, -SIDE / 2);
    memset(&c[i], 0, sizeof c[i]);
    c[i].body1 = 1;
    c[i].body2 = 0;
    c[i].point = mr_v3_add(mr_m3_mulv(&R, local), mr_v3(q[0], q[1], q[2]));
    c[i].frame = mr_m3_identity();
    c[i].phi = phi;
    c[i].mu = 0.4;
  }
}

typedef struct {
  mr_model *m;
  mr_data *d;
  mr_contact_assembly a;
  double q[7], v[6], vf[6];
  mr_contact_geometry c[NC];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->m = make_cube();
  f->d = mr_data_create(f->m);
  assert_int_equal(mr_contact_assembly_init(&f->a, NC, 6, NULL), MR_OK);
  double q[7] = {0.3, -0.2, SIDE / 2, 0, 0, 0, 1};
  memcpy(f->q, q, sizeof q);
  /* free velocity after one step of gravity from rest: linear velocity −g Δt along z */
  f->vf[2] = -9.81 * DT;
  mr_forward_kinematics(f->m, f->d, f->q, NULL, NULL);
  mr_crba(f->m, f->d, f->q);
  assert_int_equal(mr_ldlt_factor(f->m, f->d, NULL), MR_OK);
  corners(f->q, 0.0, f->c);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  mr_contact_assembly_free(&f->a);
  mr_data_free(f->d);
  mr_model_free(f->m);
  free(f);
  return 0;
}

/* G is symmetric and equals J M⁻¹ Jᵀ computed with a dense Cholesky of M: the solves err by
 * cond(M) n ε relative, cond(M) = m/I = 150 (I = m s²/6), n = 6, on entries up to
 * 1/m + r²/I = 4: 8e-13, asserted 1e-12 */
static void test_delassus_dense(void **state) {
  fixture *f = *state;
  mr_assembly_settings s = mr_assembly_settings_default();
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, f->v, f->vf, &s, &f->a, NULL), MR_OK);
  enum { n = 3 * NC, nv = 6 };
  double L[nv * nv], X[n * nv];
  mr_mass_dense(f->d, L);
  assert_int_equal(mr_cholesky(L, nv), 0);
  memcpy(X, f->a.J, sizeof X);
  for (int r = 0; r < n; ++r)
    mr_cholesky_solve(L, nv, X + r * nv);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k) {
      double gij = mr_dot(f->a.J + r * nv, X + k * nv, nv);
      assert_near(f->a.G[r * n + k], gij, 1e-12);
      assert_near(f->a.G[r * n + k], f->a.G[k * n + r], 0);
    }
  /* for a point mass part: the normal-normal entry of one corner is 1/m + |r × n|²/I */
  double I = MASS * SIDE * SIDE / 6.0, r2 = 2 * (SIDE / 2) * (SIDE / 2);
  assert_near(f->a.G[2 * n + 2], 1.0 / MASS + r2 / I, 1e-12);
}

/* J v is the corner velocity of a spinning, moving cube, in the contact frame */
static void test_jacobian_velocity(void **state) {
  fixture *f = *state;
  double v[6] = {0.1, -0.2, 0.3, 0.7, -0.4, 0.9}; /* local linear, local angular (R = I) */
  double J[3 * 6], scratch[3 * 6], c[3];
  for (int i = 0; i < NC; ++i) {
    mr_contact_jacobian(f->m, f->d, &f->c[i], J, scratch);
    mr_matvec(c, J, v, 3, 6);
    mr_vec3 r = mr_v3_sub(f->c[i].point, mr_v3(f->q[0], f->q[1], f->q[2]));
    mr_vec3 w = mr_v3(v[3], v[4], v[5]);
    mr_vec3 expect = mr_v3_add(mr_v3(v[0], v[1], v[2]), mr_v3_cross(w, r));
    for (int k = 0; k < 3; ++k)
      assert_near(c[k], expect.v[k], 1e-14);
  }
}

/* a contact between two free cubes (unrotated, at x = 0 and 0.25 m) at the point p between them:
 * J v is body 1's point velocity minus body 2's, v₁ + ω₁ × r₁ − (v₂ + ω₂ × r₂), in the contact
 * frame (here turned by 90° about z); each entry sums at most 12 rounded products of values
 * ≤ 1 on both sides: 16 ulp of 1 */
static void test_jacobian_two_bodies(void **state) {
  mr_model *m = mr_model_create("two");
  double I = MASS * SIDE * SIDE / 6.0;
  mr_inertia Y = {MASS, mr_v3_zero(), mr_m3_diag(I, I, I)};
  assert_int_equal(
      mr_model_add_body(m, 0, "a", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(), "a", Y, NULL),
      1);
  assert_int_equal(
      mr_model_add_body(m, 0, "b", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(), "b", Y, NULL),
      2);
  mr_data *d = mr_data_create(m);
  double q[14] = {0, 0, 0.1, 0, 0, 0, 1, 0.25, 0, 0.1, 0, 0, 0, 1};
  double v[12] = {0.1, -0.2, 0.3, 0.7, -0.4, 0.9, -0.3, 0.5, 0.2, 0.1, 0.6, -0.8};
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_contact_geometry c;
  memset(&c, 0, sizeof c);
  c.body1 = 1, c.body2 = 2, c.point = mr_v3(0.125, 0.02, 0.13);
  c.frame = mr_m3_rpy(0, 0, M_PI / 2);
  double J[3 * 12], scratch[3 * 12], cv[3];
  mr_contact_jacobian(m, d, &c, J, scratch);
  mr_matvec(cv, J, v, 3, 12);
  mr_vec3 r1 = mr_v3_sub(c.point, mr_v3(0, 0, 0.1)), r2 = mr_v3_sub(c.point, mr_v3(0.25, 0, 0.1));
  mr_vec3 p1 = mr_v3_add(mr_v3(v[0], v[1], v[2]), mr_v3_cross(mr_v3(v[3], v[4], v[5]), r1));
  mr_vec3 p2 = mr_v3_add(mr_v3(v[6], v[7], v[8]), mr_v3_cross(mr_v3(v[9], v[10], v[11]), r2));
  mr_vec3 expect = mr_m3_tmulv(&c.frame, mr_v3_sub(p1, p2));
  for (int k = 0; k < 3; ++k)
    assert_near(cv[k], expect.v[k], 16 * DBL_EPSILON);
  mr_data_free(d);
  mr_model_free(m);
}

/* the free velocity in force units is −g per corner; equal normal forces m g / 4 cancel
 * gravity: v_f + Δt M⁻¹ Jᵀ λ = 0 */
static void test_resting_forces_cancel_gravity(void **state) {
  fixture *f = *state;
  mr_assembly_settings s = mr_assembly_settings_default();
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, f->v, f->vf, &s, &f->a, NULL), MR_OK);
  double lambda[3 * NC] = {0}, dv[6];
  for (int i = 0; i < NC; ++i) {
    /* J v_f / Δt plus the rest depth's d / Δt² (docs/solvers.md) */
    assert_near(f->a.g[3 * i + 2], -9.81 + s.rest_depth / (DT * DT), 1e-12);
    lambda[3 * i + 2] = MASS * 9.81 / NC;
  }
  mr_contact_impulse_velocity(&f->a, lambda, DT, dv);
  for (int k = 0; k < 6; ++k)
    assert_near(f->vf[k] + dv[k], 0.0, 1e-15);
}

/* gap, Baumgarte and restitution corrections of g_N, and the contact bound (tolerances: the
 * round-off of g ≈ 2e3 m/s² computed in double) */
static void test_corrections(void **state) {
  fixture *f = *state;
  mr_assembly_settings s = mr_assembly_settings_default();
  s.baumgarte = 0.5;
  corners(f->q, 2e-3, f->c);
  f->c[1].phi = -4e-3;
  /* open contacts (no force last step) with e = 0.5: corner 2's 2 mm gap is not closed by
   * this step's 1 mm approach (gap term alone), corner 3's 0.5 mm is: an impact at a gap, which
   * lands with the gap term and defers its rebound w = e u − g Δt/2 to the next step, u the
   * speed at which the free motion reaches the surface (docs/physics.md, "Deferred rebound") */
  f->c[2].is_new = f->c[3].is_new = 1;
  f->c[2].restitution = f->c[3].restitution = 0.5;
  f->c[3].phi = 5e-4;
  double v[6] = {0, 0, -1.0, 0, 0, 0};              /* falling at 1 m/s: J_N v = −1 */
  double vf[6] = {0, 0, -1.0 - 9.81 * DT, 0, 0, 0}; /* and under gravity in the step */
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, v, vf, &s, &f->a, NULL), MR_OK);
  double gN = vf[2] / DT; /* J_N v_f / Δt */
  assert_near(f->a.g[2], gN + (2e-3 + s.rest_depth) / (DT * DT), 1e-9);
  /* below the band δ: the push-out δ/Δt plus k_B of the excess */
  assert_near(f->a.g[5], gN + (-s.band + 0.5 * (-4e-3 + s.band)) / (DT * DT), 1e-9);
  assert_near(f->a.g[8], gN + (2e-3 + s.rest_depth) / (DT * DT), 1e-9);
  assert_near(f->a.g[11], gN + (5e-4 + s.rest_depth) / (DT * DT), 1e-9);
  for (int i = 0; i < NC; ++i)
    assert_true(f->a.rest[i] == 0.0);
  double vc = -1.0 - 9.81 * DT / 2.0, w = 0.5 * sqrt(vc * vc + 2.0 * 9.81 * 5e-4) - 9.81 * DT / 2.0;
  assert_true(f->a.rebound[0] == 0.0 && f->a.rebound[1] == 0.0 && f->a.rebound[2] == 0.0);
  assert_near(f->a.rebound[3], w, 1e-12);
  /* the next step the landed contact (it carried force) takes the rebound target −w alone */
  f->c[3].is_new = 0, f->c[3].rebound = w, f->c[3].phi = -s.rest_depth;
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, v, vf, &s, &f->a, NULL), MR_OK);
  assert_near(f->a.g[11], gN + 0.5 * -s.rest_depth / (DT * DT) - w / DT, 1e-9);
  assert_true(f->a.rest[3] == -w / DT && f->a.rebound[3] == 0.0);
  f->c[3].rebound = 0.0, f->c[3].phi = 5e-4, f->c[3].is_new = 1;
  /* an impact that starts in penetration: the Baumgarte term plus the rebound target (no
   * push-out, which would add to the rebound) */
  f->c[1].is_new = 1;
  f->c[1].restitution = 0.5;
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, v, vf, &s, &f->a, NULL), MR_OK);
  assert_near(f->a.g[5], gN + (0.5 * -4e-3 / DT + 0.5 * -1.0) / DT, 1e-9);
  f->c[1].is_new = f->c[2].is_new = f->c[3].is_new = 0;
  f->c[1].restitution = f->c[2].restitution = f->c[3].restitution = 0.0;
  mr_error err;
  mr_contact_geometry many[NC + 1];
  corners(f->q, 0, many);
  many[NC] = many[0];
  assert_int_equal(mr_contact_assemble(f->m, f->d, many, NC + 1, v, f->vf, &s, &f->a, &err),
                   MR_ERR_NOMEM);
  corners(f->q, 0, f->c);
}

/* the least-squares residual ‖J v − b‖ / ‖b‖ of the normal rows: b is the gap correction of the
 * four corners (tangential rows 0); v by the normal equations JᵀJ v = Jᵀ b (6 x 6, Cholesky) */
static double patch_residual(const fixture *f, const double *cor) {
  enum { n = 3 * NC, nv = 6 };
  double A[nv * nv] = {0}, rhs[nv] = {0}, b[n] = {0}, v[nv];
  for (int i = 0; i < NC; ++i)
    b[3 * i + 2] = cor[i];
  for (int a = 0; a < nv; ++a) {
    for (int r = 0; r < n; ++r)
      rhs[a] += f->a.J[r * nv + a] * b[r];
    for (int c = 0; c < nv; ++c)
      for (int r = 0; r < n; ++r)
        A[a * nv + c] += f->a.J[r * nv + a] * f->a.J[r * nv + c];
  }
  assert_int_equal(mr_cholesky(A, nv), 0);
  memcpy(v, rhs, sizeof v);
  mr_cholesky_solve(A, nv, v);
  double res = 0.0;
  for (int r = 0; r < n; ++r) {
    double e = mr_dot(f->a.J + r * nv, v, nv) - b[r];
    res += e * e;
  }
  return sqrt(res / mr_dot(b, b, n));
}

/* A resting patch: the box tilted so that its corners lie at Φ = ±2e-6 m and ±6e-6 m (a plane
 * through the corners, Φ affine in the corner position). The correction must be the normal
 * velocity of a rigid motion of the box (in range(J) = range(G)), or the NCP has no all-sticking
 * solution. The consistent law (Φ + d)/Δt on [−δ, ∞) gives such a correction (residual at
 * round-off: 1e-12); the former law (δ = d = 0: Φ/Δt above zero, k_B Φ/Δt below, here k_B = 0)
 * does not: its correction (Φ⁺/Δt) is not affine over the four corners, residual 0.32 */
static void test_patch_consistent(void **state) {
  fixture *f = *state;
  const double phis[NC] = {-6e-6, -2e-6, 2e-6, 6e-6}; /* Φ = a x + b y over the corners */
  corners(f->q, 0.0, f->c);
  for (int i = 0; i < NC; ++i)
    f->c[i].phi = phis[i];
  mr_assembly_settings s = mr_assembly_settings_default();
  double cor[NC];
  for (int pass = 0; pass < 2; ++pass) {
    s.band = pass ? 0.0 : mr_assembly_settings_default().band;
    s.rest_depth = pass ? 0.0 : mr_assembly_settings_default().rest_depth;
    assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, f->v, f->vf, &s, &f->a, NULL),
                     MR_OK);
    for (int i = 0; i < NC; ++i)
      cor[i] = (f->a.g[3 * i + 2] + 9.81) * DT;
    double res = patch_residual(f, cor);
    if (pass == 0)
      assert_true(res <= 1e-12);
    else
      assert_true(res >= 0.1);
  }
  mr_error err;
  s.band = -1.0;
  assert_int_equal(mr_contact_assemble(f->m, f->d, f->c, NC, f->v, f->vf, &s, &f->a, &err),
                   MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "band"));
  corners(f->q, 0, f->c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_delassus_dense),
      cmocka_unit_test(test_jacobian_velocity),
      cmocka_unit_test(test_jacobian_two_bodies),
      cmocka_unit_test(test_resting_forces_cancel_gravity),
      cmocka_unit_test(test_corrections),
      cmocka_unit_test(test_patch_consistent),
  };
  return cmocka_run_group_tests_name("assembly", tests, setup, teardown);
}
