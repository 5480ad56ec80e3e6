/* Rigid-body dynamics: closed forms (pendulums, a free body) and cross-checks between
 * independent algorithms on random trees (ABA vs CRBA + dense Cholesky vs RNEA, the tree-sparse
 * LDLᵀ vs dense Cholesky, Jacobians vs finite differences, energy balance along ABA). */
#include "test_util.h"

#include <string.h>

#include "core/linalg.h"
#include "moreau/dynamics.h"

enum { NMAX = 128 };

static mr_inertia point_mass(double m, mr_vec3 c) {
  mr_inertia Y = {m, c, mr_m3_zero()};
  return Y;
}

static mr_se3 random_se3(uint64_t *s) {
  mr_quat q = {test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)};
  return mr_se3_make(
      mr_quat_to_m3(mr_quat_normalize(q)),
      mr_v3(test_rand(s, -0.5, 0.5), test_rand(s, -0.5, 0.5), test_rand(s, -0.5, 0.5)));
}

/* a physically valid random inertia: principal moments satisfying the triangle inequality */
static mr_inertia random_inertia(uint64_t *s) {
  double a = test_rand(s, 0.05, 1), b = test_rand(s, 0.05, 1), c = test_rand(s, 0.05, 1);
  mr_mat3 D = mr_m3_diag(a + b, b + c, a + c);
  mr_se3 X = random_se3(s);
  mr_inertia Y = {test_rand(s, 0.5, 3), X.p, mr_m3_rotate(&X.R, &D)};
  return Y;
}

/* a random tree of nb bodies with every joint type, random axes, placements, inertias,
 * armature and some position limits */
static mr_model *random_tree(uint64_t *s, int nb) {
  static const mr_joint_type types[] = {MR_JOINT_FREE, MR_JOINT_REVOLUTE, MR_JOINT_SPHERICAL,
                                        MR_JOINT_PRISMATIC, MR_JOINT_CONTINUOUS};
  mr_model *m = mr_model_create("random");
  mr_error err;
  for (int k = 1; k <= nb; ++k) {
    int parent = k == 1 ? 0 : (int)(test_rand_u64(s) % (uint64_t)k);
    mr_joint_type t = types[(k - 1) % 5];
    mr_vec3 axis = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    if (k % 3 == 0) axis = mr_v3(k % 4 == 0, k % 4 == 1, k % 4 >= 2); /* x, y, z kernels */
    char name[32];
    snprintf(name, sizeof name, "b%d", k);
    int id =
        mr_model_add_body(m, parent, name, t, random_se3(s), axis, name, random_inertia(s), &err);
    assert_int_equal(id, k);
    const mr_joint *j = &m->bodies[id].joint;
    for (int i = 0; i < j->nv; ++i)
      m->armature[j->idx_v + i] = test_rand(s, 0, 0.1);
    if (t == MR_JOINT_REVOLUTE || t == MR_JOINT_PRISMATIC)
      assert_int_equal(mr_model_set_limits(m, id, -0.7, 0.4, 1, 1, &err), MR_OK);
  }
  int tool = mr_model_add_frame(m, nb, random_se3(s), "tool", &err);
  assert_int_equal(tool, m->nframes - 1);
  return m;
}

static void random_vec(uint64_t *s, double *x, int n, double r) {
  for (int i = 0; i < n; ++i)
    x[i] = test_rand(s, -r, r);
}

static double max_abs_diff(const double *a, const double *b, int n) {
  double e = 0.0;
  for (int i = 0; i < n; ++i)
    e = fmax(e, fabs(a[i] - b[i]));
  return e;
}

/* dense M⁻¹ x by Cholesky of a copy of M */
static void dense_solve(const double *M, int n, double *x) {
  static double L[NMAX * NMAX];
  memcpy(L, M, (size_t)n * n * sizeof(double));
  assert_int_equal(mr_cholesky(L, n), 0);
  mr_cholesky_solve(L, n, x);
}

/* a single rod of mass m, length L hanging from a y revolute joint: M = m L²/3,
 * b = m g (L/2) sin q (potential −m g (L/2) cos q), no velocity term */
static void test_pendulum(void **state) {
  const double mass = 1.3, L = 0.8, g = 9.81;
  mr_model *m = mr_model_create("pendulum");
  mr_inertia Y = {mass, mr_v3(0, 0, -L / 2), mr_m3_diag(mass * L * L / 12, mass * L * L / 12, 0)};
  mr_error err;
  assert_int_equal(mr_model_add_body(m, 0, "j", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 1, 0), "rod", Y, &err),
                   1);
  mr_data *d = mr_data_create(m);
  for (double q = -2.0; q < 2.0; q += 0.37) {
    double v = 0.9 - q;
    mr_crba(m, d, &q);
    /* closed forms are exact; 1e-12 covers the round-off of a few products */
    assert_near(d->M[0], mass * L * L / 3, 1e-12);
    assert_near(mr_nonlinear_effects(m, d, &q, &v)[0], mass * g * L / 2 * sin(q), 1e-12);
    assert_near(mr_potential_energy(m, d, &q), -mass * g * L / 2 * cos(q), 1e-12);
    double tau = 0.3;
    assert_near(mr_aba(m, d, &q, &v, &tau)[0], (tau - mass * g * L / 2 * sin(q)) / d->M[0], 1e-11);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* the textbook double pendulum (point masses at the link ends, relative angles) */
static void test_double_pendulum(void **state) {
  const double m1 = 1.2, m2 = 0.7, l1 = 0.9, l2 = 0.6, g = 9.81;
  mr_model *m = mr_model_create("double");
  mr_error err;
  assert_int_equal(mr_model_add_body(m, 0, "j1", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 1, 0), "l1", point_mass(m1, mr_v3(0, 0, -l1)), &err),
                   1);
  assert_int_equal(mr_model_add_body(m, 1, "j2", MR_JOINT_REVOLUTE,
                                     mr_se3_make(mr_m3_identity(), mr_v3(0, 0, -l1)),
                                     mr_v3(0, 1, 0), "l2", point_mass(m2, mr_v3(0, 0, -l2)), &err),
                   2);
  mr_data *d = mr_data_create(m);
  uint64_t s = 7;
  for (int k = 0; k < 20; ++k) {
    double q[2], v[2];
    random_vec(&s, q, 2, 3), random_vec(&s, v, 2, 2);
    double c2 = cos(q[1]), h = m2 * l1 * l2 * sin(q[1]);
    double M11 = (m1 + m2) * l1 * l1 + m2 * l2 * l2 + 2 * m2 * l1 * l2 * c2;
    double M12 = m2 * l2 * l2 + m2 * l1 * l2 * c2, M22 = m2 * l2 * l2;
    double g1 = (m1 + m2) * g * l1 * sin(q[0]) + m2 * g * l2 * sin(q[0] + q[1]);
    double g2 = m2 * g * l2 * sin(q[0] + q[1]);
    double b1 = -h * (2 * v[0] * v[1] + v[1] * v[1]) + g1, b2 = h * v[0] * v[0] + g2;
    mr_crba(m, d, q);
    /* closed forms: round-off of O(10) terms of size O(10) */
    assert_near(d->M[0], M11, 1e-12);
    assert_near(d->M[1], M12, 1e-12);
    assert_near(d->M[2], M12, 1e-12);
    assert_near(d->M[3], M22, 1e-12);
    const double *b = mr_nonlinear_effects(m, d, q, v);
    assert_near(b[0], b1, 1e-11);
    assert_near(b[1], b2, 1e-11);
    const double *gq = mr_generalized_gravity(m, d, q);
    assert_near(gq[0], g1, 1e-11);
    assert_near(gq[1], g2, 1e-11);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* a free body's M is its 6x6 spatial inertia in the local frame, whatever q; b is the
 * gyroscopic term plus the weight expressed locally */
static void test_free_body(void **state) {
  uint64_t s = 11;
  mr_model *m = mr_model_create("free");
  mr_error err;
  mr_inertia Y = random_inertia(&s);
  assert_int_equal(mr_model_add_body(m, 0, "root", MR_JOINT_FREE, random_se3(&s), mr_v3(0, 0, 1),
                                     "body", Y, &err),
                   1);
  mr_data *d = mr_data_create(m);
  double I6[6][6], q[7];
  mr_inertia_matrix(&Y, I6);
  for (int k = 0; k < 5; ++k) {
    mr_random_configuration(m, &s, q);
    mr_crba(m, d, q);
    /* entries are sums of O(1) products */
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c)
        assert_near(d->M[r * 6 + c], I6[r][c], 1e-13);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* a random state of a model */
typedef struct {
  double q[NMAX], v[NMAX], tau[NMAX], a[NMAX];
} rstate;

static void random_state(const mr_model *m, uint64_t *s, rstate *x) {
  mr_random_configuration(m, s, x->q);
  random_vec(s, x->v, m->nv, 1.0);
  random_vec(s, x->tau, m->nv, 2.0);
  random_vec(s, x->a, m->nv, 1.0);
}

/* ABA = M⁻¹ (τ − b) with M by CRBA and a dense Cholesky; RNEA(ABA(τ)) = τ, also with external
 * forces; nle = RNEA(q, v, 0); LDLᵀ solve and product agree with the dense ones */
static void check_algorithms(const mr_model *m, mr_data *d, const rstate *x, uint64_t *s) {
  const int nv = m->nv;
  double rhs[NMAX], ddq[NMAX], y[NMAX], z[NMAX];
  for (int i = 0; i < m->nbodies; ++i)
    d->f_ext[i] = mr_force_zero();
  mr_crba(m, d, x->q);
  const double *b = mr_nonlinear_effects(m, d, x->q, x->v);
  for (int k = 0; k < nv; ++k)
    rhs[k] = x->tau[k] - b[k];
  dense_solve(d->M, nv, rhs);
  memcpy(ddq, mr_aba(m, d, x->q, x->v, x->tau), (size_t)nv * sizeof(double));
  /* two O(n) recursions against an O(n³) dense solve: agreement to 1e-10 of the size of q̈
   * (the random trees have condition numbers of M below ~1e4) */
  double scale = 1.0 + mr_norm_inf(ddq, nv);
  assert_true(max_abs_diff(ddq, rhs, nv) <= 1e-10 * scale);
  /* RNEA inverts ABA, with and without external forces */
  const double *tau = mr_rnea(m, d, x->q, x->v, ddq);
  assert_true(max_abs_diff(tau, x->tau, nv) <= 1e-10 * (1.0 + mr_norm_inf(x->tau, nv)));
  for (int i = 1; i < m->nbodies; ++i) {
    d->f_ext[i].f = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    d->f_ext[i].n = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
  }
  memcpy(ddq, mr_aba(m, d, x->q, x->v, x->tau), (size_t)nv * sizeof(double));
  tau = mr_rnea(m, d, x->q, x->v, ddq);
  assert_true(max_abs_diff(tau, x->tau, nv) <= 1e-10 * (1.0 + mr_norm_inf(x->tau, nv)));
  for (int i = 0; i < m->nbodies; ++i)
    d->f_ext[i] = mr_force_zero();
  /* nle is RNEA at zero acceleration (exactly the same operations up to the armature term) */
  double zero[NMAX] = {0};
  mr_rnea(m, d, x->q, x->v, zero);
  assert_true(max_abs_diff(d->tau_id, b, nv) <= 1e-12 * (1.0 + mr_norm_inf(b, nv)));
  /* LDLᵀ: solve and product against dense */
  mr_crba(m, d, x->q);
  assert_int_equal(mr_ldlt_factor(m, d, NULL), MR_OK);
  memcpy(y, x->tau, (size_t)nv * sizeof(double));
  memcpy(z, x->tau, (size_t)nv * sizeof(double));
  mr_ldlt_solve(m, d, y);
  dense_solve(d->M, nv, z);
  assert_true(max_abs_diff(y, z, nv) <= 1e-10 * (1.0 + mr_norm_inf(z, nv)));
  mr_ldlt_mul(m, d, x->a, y);
  mr_matvec(z, d->M, x->a, nv, nv);
  assert_true(max_abs_diff(y, z, nv) <= 1e-12 * (1.0 + mr_norm_inf(z, nv)));
  /* kinetic energy is ½ vᵀ M v */
  mr_matvec(z, d->M, x->v, nv, nv);
  double T = 0.5 * mr_dot(x->v, z, nv);
  assert_near(mr_kinetic_energy(m, d, x->q, x->v), T, 1e-12 * (1 + T));
}

static void test_random_trees(void **state) {
  uint64_t s = 42;
  static rstate x;
  for (int t = 0; t < 6; ++t) {
    mr_model *m = random_tree(&s, 10 + 2 * t);
    mr_data *d = mr_data_create(m);
    assert_non_null(d);
    for (int k = 0; k < 5; ++k) {
      random_state(m, &s, &x);
      check_algorithms(m, d, &x, &s);
    }
    mr_data_free(d);
    mr_model_free(m);
  }
}

/* world placement of body i's frame (or of a model frame when frame >= 0) at q */
static mr_se3 placement_at(const mr_model *m, mr_data *d, const double *q, int body, int frame) {
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_update_frames(m, d);
  return frame >= 0 ? d->oMf[frame] : d->oMi[body];
}

/* (v_p, ω): the world velocity of the frame origin and the world angular velocity, by central
 * differences of the placement along q ⊕ ±h v (truncation O(h²) ≈ 1e-10 for h = 1e-5, round-off
 * ≈ 1e-16 / h ≈ 1e-11) */
static mr_motion fd_velocity(const mr_model *m, mr_data *d, const double *q, const double *v,
                             int body, int frame) {
  const double h = 1e-5;
  double qp[NMAX], qm[NMAX];
  mr_integrate(m, q, v, h, qp);
  mr_integrate(m, q, v, -h, qm);
  mr_se3 P = placement_at(m, d, qp, body, frame), Q = placement_at(m, d, qm, body, frame);
  mr_se3 O = placement_at(m, d, q, body, frame);
  mr_motion r;
  r.v = mr_v3_scale(mr_v3_sub(P.p, Q.p), 0.5 / h);
  mr_mat3 Rd, W;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      Rd.m[i][j] = (P.R.m[i][j] - Q.R.m[i][j]) * 0.5 / h;
  W = mr_m3_mult(&Rd, &O.R); /* Ṙ Rᵀ = [ω]x */
  r.w = mr_v3(0.5 * (W.m[2][1] - W.m[1][2]), 0.5 * (W.m[0][2] - W.m[2][0]),
              0.5 * (W.m[1][0] - W.m[0][1]));
  return r;
}

static void jac_times(const double *J, int rows, int nv, const double *v, double *out) {
  mr_matvec(out, J, v, rows, nv);
}

/* frame, body and point Jacobians times v equal finite-differenced velocities */
static void test_jacobians(void **state) {
  uint64_t s = 5;
  static rstate x;
  static double J[6 * NMAX];
  mr_model *m = random_tree(&s, 14);
  mr_data *d = mr_data_create(m);
  const int nv = m->nv, tool = m->nframes - 1;
  for (int k = 0; k < 4; ++k) {
    random_state(m, &s, &x);
    for (int body = 1; body < m->nbodies; body += 3) {
      for (int pass = 0; pass < 2; ++pass) {
        int frame = pass ? tool : -1, b = pass ? m->frames[tool].body : body;
        mr_motion fd = fd_velocity(m, d, x.q, x.v, b, frame);
        mr_se3 O = placement_at(m, d, x.q, b, frame);
        double jv[6];
        /* LOCAL_WORLD_ALIGNED: (v_p, ω) */
        if (pass)
          mr_frame_jacobian(m, d, frame, MR_LOCAL_WORLD_ALIGNED, J);
        else
          mr_body_jacobian(m, d, b, MR_LOCAL_WORLD_ALIGNED, J);
        jac_times(J, 6, nv, x.v, jv);
        double want[6] = {fd.v.v[0], fd.v.v[1], fd.v.v[2], fd.w.v[0], fd.w.v[1], fd.w.v[2]};
        assert_vec_near(jv, want, 6, 1e-6);
        /* WORLD: the velocity of the point at the world origin, v_p − ω × p */
        mr_vec3 v0 = mr_v3_sub(fd.v, mr_v3_cross(fd.w, O.p));
        if (pass)
          mr_frame_jacobian(m, d, frame, MR_WORLD, J);
        else
          mr_body_jacobian(m, d, b, MR_WORLD, J);
        jac_times(J, 6, nv, x.v, jv);
        double want0[6] = {v0.v[0], v0.v[1], v0.v[2], fd.w.v[0], fd.w.v[1], fd.w.v[2]};
        assert_vec_near(jv, want0, 6, 1e-6);
        /* LOCAL: Rᵀ (v_p, ω) */
        mr_vec3 vl = mr_m3_tmulv(&O.R, fd.v), wl = mr_m3_tmulv(&O.R, fd.w);
        if (pass)
          mr_frame_jacobian(m, d, frame, MR_LOCAL, J);
        else
          mr_body_jacobian(m, d, b, MR_LOCAL, J);
        jac_times(J, 6, nv, x.v, jv);
        double wantl[6] = {vl.v[0], vl.v[1], vl.v[2], wl.v[0], wl.v[1], wl.v[2]};
        assert_vec_near(jv, wantl, 6, 1e-6);
      }
      /* a point fixed on the body, given in world coordinates */
      mr_vec3 r = mr_v3(0.3, -0.2, 0.5);
      double qp[NMAX], qm[NMAX], h = 1e-5;
      mr_integrate(m, x.q, x.v, h, qp);
      mr_integrate(m, x.q, x.v, -h, qm);
      mr_se3 P = placement_at(m, d, qp, body, -1), Q = placement_at(m, d, qm, body, -1);
      mr_vec3 fd =
          mr_v3_scale(mr_v3_sub(mr_se3_act_point(&P, r), mr_se3_act_point(&Q, r)), 0.5 / h);
      mr_se3 O = placement_at(m, d, x.q, body, -1);
      mr_point_jacobian(m, d, body, mr_se3_act_point(&O, r), J);
      double jv[3];
      jac_times(J, 3, nv, x.v, jv);
      assert_vec_near(jv, fd.v, 3, 1e-6);
    }
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* external forces: RNEA with f_ext equals RNEA without minus Σ J_LOCAL,iᵀ f_i */
static void test_external_forces(void **state) {
  uint64_t s = 9;
  static rstate x;
  static double J[6 * NMAX];
  mr_model *m = random_tree(&s, 12);
  mr_data *d = mr_data_create(m);
  const int nv = m->nv;
  double tau0[NMAX], jtf[NMAX] = {0};
  random_state(m, &s, &x);
  memcpy(tau0, mr_rnea(m, d, x.q, x.v, x.a), (size_t)nv * sizeof(double));
  mr_forward_kinematics(m, d, x.q, NULL, NULL);
  for (int i = 1; i < m->nbodies; ++i) {
    mr_force f = {mr_v3(test_rand(&s, -2, 2), test_rand(&s, -2, 2), test_rand(&s, -2, 2)),
                  mr_v3(test_rand(&s, -2, 2), test_rand(&s, -2, 2), test_rand(&s, -2, 2))};
    d->f_ext[i] = f;
    mr_body_jacobian(m, d, i, MR_LOCAL, J);
    double fa[6] = {f.f.v[0], f.f.v[1], f.f.v[2], f.n.v[0], f.n.v[1], f.n.v[2]};
    for (int r = 0; r < 6; ++r)
      mr_axpy(jtf, fa[r], J + r * nv, nv);
  }
  const double *tau = mr_rnea(m, d, x.q, x.v, x.a);
  /* two exact linear computations of the same quantity: round-off only */
  for (int k = 0; k < nv; ++k)
    assert_near(tau[k], tau0[k] - jtf[k], 1e-11);
  mr_data_free(d);
  mr_model_free(m);
}

/* total energy E = T + V changes at the rate vᵀτ along ABA (gravity, armature, no damping):
 * central differences along (q ⊕ ±h v, v ± h q̈) have error O(h²) ≈ 1e-8 relative for h = 1e-4 */
static void test_power_balance(void **state) {
  uint64_t s = 13;
  static rstate x;
  mr_model *m = random_tree(&s, 12);
  mr_data *d = mr_data_create(m);
  const int nv = m->nv;
  const double h = 1e-4;
  for (int k = 0; k < 4; ++k) {
    random_state(m, &s, &x);
    double ddq[NMAX], qp[NMAX], qm[NMAX], vp[NMAX], vm[NMAX];
    memcpy(ddq, mr_aba(m, d, x.q, x.v, x.tau), (size_t)nv * sizeof(double));
    mr_integrate(m, x.q, x.v, h, qp);
    mr_integrate(m, x.q, x.v, -h, qm);
    for (int i = 0; i < nv; ++i)
      vp[i] = x.v[i] + h * ddq[i], vm[i] = x.v[i] - h * ddq[i];
    double Ep = mr_kinetic_energy(m, d, qp, vp) + mr_potential_energy(m, d, qp);
    double Em = mr_kinetic_energy(m, d, qm, vm) + mr_potential_energy(m, d, qm);
    double power = mr_dot(x.v, x.tau, nv);
    assert_near((Ep - Em) / (2 * h), power, 1e-6 * (1 + fabs(power) + mr_norm_inf(ddq, nv)));
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* generalized gravity is the gradient of the potential energy (central differences, O(h²)) */
static void test_gravity_gradient(void **state) {
  uint64_t s = 17;
  static rstate x;
  mr_model *m = random_tree(&s, 10);
  mr_data *d = mr_data_create(m);
  const int nv = m->nv;
  const double h = 1e-5;
  random_state(m, &s, &x);
  double g[NMAX], qp[NMAX], qm[NMAX];
  memcpy(g, mr_generalized_gravity(m, d, x.q), (size_t)nv * sizeof(double));
  mr_integrate(m, x.q, x.v, h, qp);
  mr_integrate(m, x.q, x.v, -h, qm);
  double dV = (mr_potential_energy(m, d, qp) - mr_potential_energy(m, d, qm)) / (2 * h);
  assert_near(dV, mr_dot(g, x.v, nv), 1e-6);
  mr_data_free(d);
  mr_model_free(m);
}

/* q ⊕ (q₁ ⊖ q) = q₁; q ⊕ v ⊖ q = v; random configurations respect limits */
static void test_lie_group(void **state) {
  uint64_t s = 21;
  static rstate x;
  mr_model *m = random_tree(&s, 15);
  const int nq = m->nq, nv = m->nv;
  for (int k = 0; k < 20; ++k) {
    double q1[NMAX], q2[NMAX], dv[NMAX], back[NMAX];
    random_state(m, &s, &x);
    mr_random_configuration(m, &s, q1);
    mr_difference(m, x.q, q1, dv);
    mr_integrate(m, x.q, dv, 1.0, q2);
    /* quaternions may come back with the opposite sign: compare through the difference */
    mr_difference(m, q1, q2, back);
    for (int i = 0; i < nv; ++i)
      assert_near(back[i], 0.0, 1e-9);
    mr_integrate(m, x.q, x.v, 0.3, q2);
    mr_difference(m, x.q, q2, back);
    for (int i = 0; i < nv; ++i)
      assert_near(back[i], 0.3 * x.v[i], 1e-9);
    for (int i = 0; i < nq; ++i) {
      assert_true(q1[i] >= m->lower[i] && q1[i] <= m->upper[i]);
      assert_true(fabs(q1[i]) <= M_PI + 1e-12 || !isfinite(m->upper[i]));
    }
  }
  /* revolute limits are [-0.7, 0.4] in random_tree */
  int limited = 0;
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    if (j->type == MR_JOINT_REVOLUTE) {
      assert_near(m->lower[j->idx_q], -0.7, 0);
      assert_near(m->upper[j->idx_q], 0.4, 0);
      limited++;
    }
    if (j->type == MR_JOINT_SPHERICAL || j->type == MR_JOINT_FREE) {
      double n = 0.0;
      for (int c = 0; c < 4; ++c)
        n += x.q[j->idx_q + j->nq - 4 + c] * x.q[j->idx_q + j->nq - 4 + c];
      assert_near(n, 1.0, 1e-14);
    }
  }
  assert_true(limited > 0);
  mr_model_free(m);
}

/* centre of mass of two point masses, and the neutral configuration */
static void test_center_of_mass(void **state) {
  mr_model *m = mr_model_create("com");
  mr_error err;
  assert_int_equal(mr_model_add_body(m, 0, "j", MR_JOINT_PRISMATIC, mr_se3_identity(),
                                     mr_v3(1, 0, 0), "a", point_mass(1.0, mr_v3(0, 0, 1)), &err),
                   1);
  assert_int_equal(mr_model_add_body(m, 1, "k", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 0, 1), "b", point_mass(3.0, mr_v3(1, 0, 0)), &err),
                   2);
  mr_data *d = mr_data_create(m);
  double q[2] = {0.5, M_PI / 2};
  mr_vec3 c = mr_center_of_mass(m, d, q);
  /* a at (0.5, 0, 1), b at (0.5, 1, 0): weighted mean, exact up to round-off */
  assert_near(c.v[0], 0.5, 1e-15);
  assert_near(c.v[1], 0.75, 1e-15);
  assert_near(c.v[2], 0.25, 1e-15);
  mr_neutral(m, q);
  assert_near(q[0], 0, 0);
  assert_near(q[1], 0, 0);
  mr_data_free(d);
  mr_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pendulum),      cmocka_unit_test(test_double_pendulum),
      cmocka_unit_test(test_free_body),     cmocka_unit_test(test_random_trees),
      cmocka_unit_test(test_jacobians),     cmocka_unit_test(test_external_forces),
      cmocka_unit_test(test_power_balance), cmocka_unit_test(test_gravity_gradient),
      cmocka_unit_test(test_lie_group),     cmocka_unit_test(test_center_of_mass),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
