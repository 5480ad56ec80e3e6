/* Rigid-body dynamics: closed forms (pendulums, a free body) and cross-checks between
 * independent algorithms on random trees (ABA vs CRBA + dense Cholesky vs RNEA, the tree-sparse
 * LDLᵀ vs dense Cholesky, Jacobians vs finite differences, energy balance along ABA). */
#include "dyn_checks.h"
#include "test_random.h"
#include "dynamics/internal.h"

static mr_inertia point_mass(double m, mr_vec3 c) {
  mr_inertia Y = {m, c, mr_m3_zero()};
  return Y;
}

/* a random tree of nb bodies (numbered depth-first or in any topological order) with every joint
 * type, random axes, placements, inertias, armature and some position limits */
static mr_model *random_tree(uint64_t *s, int nb, int depth_first) {
  static const mr_joint_type types[] = {MR_JOINT_FREE, MR_JOINT_REVOLUTE, MR_JOINT_SPHERICAL,
                                        MR_JOINT_PRISMATIC, MR_JOINT_CONTINUOUS};
  mr_model *m = mr_model_create("random");
  mr_error err;
  for (int k = 1; k <= nb; ++k) {
    int parent = k == 1 ? 0 : (int)(test_rand_u64(s) % (uint64_t)k);
    /* depth-first numbering: the parent is on the path from the previous body to the root */
    for (parent = depth_first ? k - 1 : parent; depth_first && parent > 0 && test_rand_u64(s) % 2;)
      parent = m->bodies[parent].parent;
    mr_joint_type t = types[(k - 1) % 5];
    mr_vec3 axis = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    if (k % 3 == 0) axis = mr_v3(k % 4 == 0, k % 4 == 1, k % 4 >= 2); /* x, y, z kernels */
    char name[32];
    snprintf(name, sizeof name, "b%d", k);
    int id = mr_model_add_body(m, parent, name, t, test_random_se3(s, 0.5), axis, name,
                               test_random_inertia(s), &err);
    assert_int_equal(id, k);
    const mr_joint *j = &m->bodies[id].joint;
    for (int i = 0; i < j->nv; ++i)
      m->armature[j->idx_v + i] = test_rand(s, 0, 0.1);
    if (t == MR_JOINT_REVOLUTE || t == MR_JOINT_PRISMATIC)
      assert_int_equal(mr_model_set_limits(m, id, -0.7, 0.4, 1, 1, &err), MR_OK);
  }
  int tool = mr_model_add_frame(m, nb, test_random_se3(s, 0.5), "tool", &err);
  assert_int_equal(tool, m->nframes - 1);
  return m;
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
    assert_near(mr_mass_entry(d, 0, 0), M11, 1e-12);
    assert_near(mr_mass_entry(d, 0, 1), M12, 1e-12);
    assert_near(mr_mass_entry(d, 1, 0), M12, 1e-12);
    assert_near(mr_mass_entry(d, 1, 1), M22, 1e-12);
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
  mr_inertia Y = test_random_inertia(&s);
  assert_int_equal(mr_model_add_body(m, 0, "root", MR_JOINT_FREE, test_random_se3(&s, 0.5),
                                     mr_v3(0, 0, 1), "body", Y, &err),
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
        assert_near(mr_mass_entry(d, r, c), I6[r][c], 1e-13);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* 1,000 free bodies (1,000 trees): M and U take 39 doubles per body each, not (6000)², and
 * M x = y solved with the tree-sparse factor gives x with I₆ x = y for every body, I₆ its
 * spatial inertia (mr_inertia_matrix, the closed form of a free body's M) */
static void test_many_trees(void **state) {
  enum { NB = 1000 };
  uint64_t s = 5;
  mr_model *m = mr_model_create("many");
  mr_error err;
  static mr_inertia Y[NB];
  for (int b = 0; b < NB; ++b) {
    char name[32];
    snprintf(name, sizeof name, "b%d", b);
    Y[b] = test_random_inertia(&s);
    assert_int_equal(mr_model_add_body(m, 0, name, MR_JOINT_FREE, test_random_se3(&s, 0.5),
                                       mr_v3(0, 0, 1), name, Y[b], &err),
                     b + 1);
  }
  mr_data *d = mr_data_create(m);
  /* row k of a free joint's dof k (0..5 within the joint): 6 − k entries and 3 zeros */
  assert_int_equal(d->row_at[m->nv], (size_t)NB * 39);
  static double q[7 * NB], x[6 * NB], y[6 * NB];
  mr_random_configuration(m, &s, q);
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_OK);
  for (int k = 0; k < 6 * NB; ++k)
    x[k] = y[k] = test_rand(&s, -1, 1);
  mr_ldlt_solve(m, d, x);
  for (int b = 0; b < NB; ++b) {
    double I6[6][6], xn = 0.0;
    mr_inertia_matrix(&Y[b], I6);
    for (int r = 0; r < 6; ++r)
      xn = fmax(xn, fabs(x[6 * b + r]));
    for (int r = 0; r < 6; ++r) {
      double t = 0.0;
      for (int c = 0; c < 6; ++c)
        t += I6[r][c] * x[6 * b + c];
      /* a backward-stable 6 × 6 solve: residual within 6 terms × a few ε of |I₆| |x|, entries
       * of I₆ of order 1: 64 ε (measured 3.4e-15) */
      assert_near(t, y[6 * b + r], 1.4e-14 * (1.0 + xn));
    }
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* a chain of 2,000 rods (point mass m at c below each joint, joints L apart, all about y) held
 * horizontal by its first joint (q₁ = π/2, the others 0): rod j's centre is (j − k) L + c from
 * joint k, so the torque holding joint k is g(q)_k = m g Σ_{j ≥ k} ((j − k) L + c)
 *   = m g (L (n − k)(n − k + 1)/2 + c (n − k + 1)),
 * and turning the whole rigid rod about joint 1 at ω gives T = ½ ω² Σ_j m ((j − 1) L + c)².
 * RNEA and the energy are O(n); M (n² entries) is never asked for. */
static void test_long_chain(void **state) {
  enum { N = 2000 };
  const double mass = 0.5, L = 0.1, c = 0.05, g = 9.81, w = 0.3;
  mr_model *m = mr_model_create("chain");
  mr_error err;
  const mr_inertia Y = point_mass(mass, mr_v3(0, 0, -c));
  for (int k = 1; k <= N; ++k) {
    char name[32];
    snprintf(name, sizeof name, "j%d", k);
    mr_se3 X = mr_se3_make(mr_m3_identity(), mr_v3(0, 0, k == 1 ? 0.0 : -L));
    assert_int_equal(mr_model_add_body(m, k - 1, name, MR_JOINT_REVOLUTE, X, mr_v3(0, 1, 0),
                                       name, Y, &err),
                     k);
  }
  mr_data *d = mr_data_create(m);
  static double q[N], v[N];
  q[0] = M_PI / 2;
  const double *tau = mr_generalized_gravity(m, d, q);
  for (int k = 1; k <= N; ++k) {
    const double r = N - k + 1, exact = mass * g * (L * (r - 1) * r / 2 + c * r);
    /* a sum of up to 2,000 positive terms through 2,000 frames: relative round-off below n ε
     * = 4.4e-13 (measured 2.3e-14); cos(π/2) ≈ 6e-17 tilts the rod by far less */
    assert_near(tau[k - 1], exact, 4.4e-13 * exact);
  }
  v[0] = w;
  double I1 = 0.0;
  for (int j = 1; j <= N; ++j)
    I1 += mass * ((j - 1) * L + c) * ((j - 1) * L + c);
  const double T = 0.5 * I1 * w * w;
  /* 2,000 positive terms: n ε = 4.4e-13 relative (measured 3.7e-14) */
  assert_near(mr_kinetic_energy(m, d, q, v), T, 4.4e-13 * T);
  mr_data_free(d);
  mr_model_free(m);
}

/* four right-hand sides solved side by side (mr_ldlt_solve_dofs4) give each one's solve alone,
 * bit for bit, in both forms of the factor */
static void check_solve4(const mr_model *m, mr_data *d, const rstate *x, uint64_t *s) {
  int nv = m->nv, dofs[NMAX];
  static double r[4][NMAX], x4[4 * NMAX];
  mr_error err;
  mr_crba(m, d, x->q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_OK);
  for (int k = 0; k < nv; ++k)
    dofs[k] = k;
  for (int l = 0; l < 4; ++l)
    for (int k = 0; k < nv; ++k)
      x4[4 * k + l] = r[l][k] = test_rand(s, -1, 1);
  mr_ldlt_solve_dofs4(m, d, dofs, nv, x4);
  for (int l = 0; l < 4; ++l) {
    mr_ldlt_solve_dofs(m, d, dofs, nv, r[l]);
    for (int k = 0; k < nv; ++k)
      assert_memory_equal(&x4[4 * k + l], &r[l][k], sizeof(double));
  }
}

static void test_random_trees(void **state) {
  uint64_t s = 42;
  static rstate x;
  for (int t = 0; t < 6; ++t) {
    mr_model *m = random_tree(&s, 10 + 2 * t, t % 2);
    mr_data *d = mr_data_create(m);
    assert_non_null(d);
    /* depth-first trees take the row-oriented LDLᵀ, the others the λ-chain form */
    if (t % 2) assert_true(((mr_dyn_work *)d->work)->contiguous);
    for (int k = 0; k < 5; ++k) {
      random_state(m, &s, &x);
      check_algorithms(m, d, &x, &s);
      check_fk_acceleration(m, d, &x);
      check_solve4(m, d, &x, &s);
    }
    mr_data_free(d);
    mr_model_free(m);
  }
}

/* the placements are computed once per q and reused while q is the same bits: a call at
 * another q, at q written into d->q in place, or at the first q again gives what a fresh data
 * gives, bit for bit (M from CRBA, τ from RNEA, every oMi) */
static void check_same_as_fresh(const mr_model *m, mr_data *d, const double *q, const rstate *x) {
  mr_data *f = mr_data_create(m);
  assert_non_null(f);
  int nv = m->nv;
  mr_crba(m, d, q), mr_crba(m, f, q);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k < nv; ++k)
      assert_true(mr_mass_entry(d, i, k) == mr_mass_entry(f, i, k));
  const double *t = mr_rnea(m, d, q, x->v, x->a), *tf = mr_rnea(m, f, q, x->v, x->a);
  for (int k = 0; k < nv; ++k)
    assert_true(t[k] == tf[k]);
  for (int b = 1; b < m->nbodies; ++b)
    assert_memory_equal(&d->oMi[b], &f->oMi[b], sizeof(mr_se3));
  mr_data_free(f);
}

static void test_placements_reused(void **state) {
  uint64_t s = 11;
  static rstate x, y;
  mr_model *m = random_tree(&s, 12, 1);
  mr_data *d = mr_data_create(m);
  assert_non_null(d);
  random_state(m, &s, &x);
  random_state(m, &s, &y);
  check_same_as_fresh(m, d, x.q, &x);
  check_same_as_fresh(m, d, y.q, &y);
  check_same_as_fresh(m, d, x.q, &x);
  /* q changed in place, through d->q itself: one coordinate, by one unit in the last place */
  d->q[m->nq - 1] = nextafter(d->q[m->nq - 1], INFINITY);
  check_same_as_fresh(m, d, d->q, &x);
  mr_data_free(d);
  mr_model_free(m);
}

/* J₁ − J₂ by mr_point_jacobian_add over the two paths into zeroed rows, with the dofs stored
 * in reversed columns: the difference of the two point Jacobians, the same bits */
static void check_relative_jacobian(const mr_model *m, mr_data *d, int b1, int b2) {
  int nv = m->nv;
  double *J1 = calloc(3 * (size_t)nv, sizeof *J1), *J2 = calloc(3 * (size_t)nv, sizeof *J2);
  double *J = calloc(3 * (size_t)nv, sizeof *J);
  int *col = calloc((size_t)nv, sizeof *col);
  assert_true(J1 && J2 && J && col);
  mr_vec3 p = mr_v3(0.3, -0.2, 0.1);
  mr_point_jacobian(m, d, b1, p, J1);
  mr_point_jacobian(m, d, b2, p, J2);
  for (int k = 0; k < nv; ++k)
    col[k] = nv - 1 - k;
  mr_point_jacobian_add(m, d, b1, p, col, nv, 1, J);
  mr_point_jacobian_add(m, d, b2, p, col, nv, -1, J);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < nv; ++k)
      assert_true(J[r * nv + col[k]] == J1[r * nv + k] - J2[r * nv + k]);
  free(J1), free(J2), free(J), free(col);
}

/* frame, body and point Jacobians times v equal finite-differenced velocities */
static void test_jacobians(void **state) {
  uint64_t s = 5;
  static rstate x;
  mr_model *m = random_tree(&s, 14, 0);
  mr_data *d = mr_data_create(m);
  for (int k = 0; k < 4; ++k) {
    random_state(m, &s, &x);
    for (int body = 1; body < m->nbodies; body += 3)
      check_jacobians(m, d, &x, body, -1);
    check_jacobians(m, d, &x, 0, m->nframes - 1);
    for (int body = 2; body < m->nbodies; body += 4)
      check_relative_jacobian(m, d, body, body - 1);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* external forces: RNEA with f_ext equals RNEA without minus Σ J_LOCAL,iᵀ f_i */
static void test_external_forces(void **state) {
  uint64_t s = 9;
  static rstate x;
  static double J[6 * NMAX];
  mr_model *m = random_tree(&s, 12, 0);
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

/* total energy changes at the rate vᵀτ along ABA (gravity, armature) */
static void test_power_balance(void **state) {
  uint64_t s = 13;
  static rstate x;
  mr_model *m = random_tree(&s, 12, 0);
  mr_data *d = mr_data_create(m);
  for (int k = 0; k < 4; ++k) {
    random_state(m, &s, &x);
    check_power(m, d, &x);
  }
  mr_data_free(d);
  mr_model_free(m);
}

/* generalized gravity is the gradient of the potential energy (central differences, O(h²)).
 * Tolerance: the truncation error c h², estimated by Richardson from the difference at 2h,
 * (D(2h) − D(h))/3, taken twice; plus the round-off of the two potentials, each a sum over the
 * bodies of m g z with z at the end of a chain of up to 10 transforms (relative 10 × 2.2e-16
 * on Σ|m g z| ≤ Σ m g · max |z|, |z| ≤ |p_body| + |c|), divided by 2h, taken twice */
static void test_gravity_gradient(void **state) {
  uint64_t s = 17;
  static rstate x;
  mr_model *m = random_tree(&s, 10, 0);
  mr_data *d = mr_data_create(m);
  const int nv = m->nv;
  const double h = 1e-5;
  random_state(m, &s, &x);
  double g[NMAX], qp[NMAX], qm[NMAX];
  memcpy(g, mr_generalized_gravity(m, d, x.q), (size_t)nv * sizeof(double));
  mr_integrate(m, x.q, x.v, h, qp);
  mr_integrate(m, x.q, x.v, -h, qm);
  double Vp = mr_potential_energy(m, d, qp), Vm = mr_potential_energy(m, d, qm);
  double dV = (Vp - Vm) / (2 * h);
  mr_integrate(m, x.q, x.v, 2 * h, qp);
  mr_integrate(m, x.q, x.v, -2 * h, qm);
  double dV2 = (mr_potential_energy(m, d, qp) - mr_potential_energy(m, d, qm)) / (4 * h);
  double reach = 0.0, mg = 0.0;
  mr_forward_kinematics(m, d, x.q, NULL, NULL);
  for (int b = 1; b < m->nbodies; ++b) {
    reach = fmax(reach, mr_v3_norm(d->oMi[b].p) + mr_v3_norm(m->bodies[b].inertia.c));
    mg += 9.81 * m->bodies[b].inertia.m;
  }
  double tol = 2.0 * fabs(dV2 - dV) / 3.0 + 2.0 * 10.0 * 2.220446049250313e-16 * mg * reach / h;
  print_message("gravity gradient: |FD - g·v| %.2e, bound %.2e (truncation %.2e)\n",
                fabs(dV - mr_dot(g, x.v, nv)), tol, fabs(dV2 - dV) / 3.0);
  assert_near(dV, mr_dot(g, x.v, nv), tol);
  mr_data_free(d);
  mr_model_free(m);
}

/* q ⊕ (q₁ ⊖ q) = q₁; q ⊕ v ⊖ q = v; random configurations respect limits. Each joint's exp and
 * log are a few tens of operations on angles and offsets up to ~3: round-off 20 × 2.2e-16 × 3
 * ≈ 1.3e-14, asserted 2e-14 */
static void test_lie_group(void **state) {
  uint64_t s = 21;
  static rstate x;
  mr_model *m = random_tree(&s, 15, 0);
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
      assert_near(back[i], 0.0, 2e-14);
    mr_integrate(m, x.q, x.v, 0.3, q2);
    mr_difference(m, x.q, q2, back);
    for (int i = 0; i < nv; ++i)
      assert_near(back[i], 0.3 * x.v[i], 2e-14);
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
  /* normalisation restores unit quaternions and leaves the other coordinates alone */
  double q3[NMAX];
  memcpy(q3, x.q, sizeof q3);
  for (int i = 0; i < nq; ++i)
    q3[i] *= 1.5;
  mr_normalize(m, q3);
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    for (int c = 0; c < j->nq; ++c) {
      int iq = j->idx_q + c, quat = j->nq >= 4 && c >= j->nq - 4;
      assert_near(q3[iq], quat ? x.q[iq] : 1.5 * x.q[iq], 1e-15);
    }
  }
  mr_model_free(m);
}

/* one-sided limits: the missing bound is ±π (±1 m), or that far beyond the finite bound */
static void test_one_sided_limits(void **state) {
  mr_model *m = mr_model_create("limits");
  mr_error err;
  mr_inertia Y = point_mass(1.0, mr_v3(0, 0, 1));
  assert_int_equal(mr_model_add_body(m, 0, "p", MR_JOINT_PRISMATIC, mr_se3_identity(),
                                     mr_v3(1, 0, 0), "a", Y, &err),
                   1);
  assert_int_equal(mr_model_add_body(m, 1, "r", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 0, 1), "b", Y, &err),
                   2);
  assert_int_equal(mr_model_set_limits(m, 1, 2.0, INFINITY, 1, 1, &err), MR_OK);
  assert_int_equal(mr_model_set_limits(m, 2, -INFINITY, -5.0, 1, 1, &err), MR_OK);
  uint64_t s = 3;
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  for (int k = 0; k < 200; ++k) {
    double q[2];
    mr_random_configuration(m, &s, q);
    for (int i = 0; i < 2; ++i)
      lo[i] = fmin(lo[i], q[i]), hi[i] = fmax(hi[i], q[i]);
  }
  /* 200 uniform draws cover each interval to within a few percent of its ends */
  assert_true(lo[0] >= 2.0 && hi[0] <= 3.0 && hi[0] - lo[0] > 0.9);
  assert_true(lo[1] >= -5.0 - M_PI && hi[1] <= -5.0 && hi[1] - lo[1] > 0.9 * M_PI);
  mr_model_free(m);
}

/* a model holding only the world: every algorithm runs on empty vectors */
static void test_world_only(void **state) {
  mr_model *m = mr_model_create("empty");
  mr_data *d = mr_data_create(m);
  assert_non_null(d);
  double q[1] = {0}, v[1] = {0};
  mr_forward_kinematics(m, d, q, v, v);
  mr_update_frames(m, d);
  mr_rnea(m, d, q, v, v);
  mr_aba(m, d, q, v, v);
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, NULL), MR_OK);
  mr_ldlt_solve(m, d, v);
  assert_near(mr_kinetic_energy(m, d, q, v), 0.0, 0.0);
  assert_near(mr_potential_energy(m, d, q), 0.0, 0.0);
  assert_near(mr_center_of_mass(m, d, q).v[2], 0.0, 0.0);
  assert_int_equal(d->singular, 0);
  mr_data_free(d);
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

/* a massless leaf without armature makes M singular: ABA counts it and returns NaN, the LDLᵀ
 * factorisation reports MR_ERR_NUMERIC; armature makes both regular again */
static void test_singular(void **state) {
  mr_model *m = mr_model_create("singular");
  mr_error err;
  assert_int_equal(mr_model_add_body(m, 0, "j1", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 0, 1), "a", point_mass(1.0, mr_v3(1, 0, 0)), &err),
                   1);
  assert_int_equal(mr_model_add_body(m, 1, "j2", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 0, 1), "b", mr_inertia_zero(), &err),
                   2);
  mr_data *d = mr_data_create(m);
  double q[2] = {0.1, 0.2}, v[2] = {0.3, 0.4}, tau[2] = {1, 0};
  mr_aba(m, d, q, v, tau);
  assert_int_equal(d->singular, 1);
  assert_true(isnan(d->ddq[0]) && isnan(d->ddq[1]));
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_ERR_NUMERIC);
  m->armature[1] = 0.01;
  mr_aba(m, d, q, v, tau);
  assert_int_equal(d->singular, 1);
  assert_true(isfinite(d->ddq[0]) && isfinite(d->ddq[1]));
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_OK);
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
      cmocka_unit_test(test_singular),      cmocka_unit_test(test_one_sided_limits),
      cmocka_unit_test(test_world_only),    cmocka_unit_test(test_many_trees),
      cmocka_unit_test(test_long_chain),    cmocka_unit_test(test_placements_reused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
