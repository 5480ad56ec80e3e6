/* The consistent correction (src/contact/consistency.c): the correction part of g projected onto
 * range(J), checked against closed forms and against the eigendecomposition of G (Jacobi sweeps,
 * mr_sym_eigen: an algorithm independent of the pivoted Cholesky the projection uses). */
#include "test_util.h"

#include <string.h>

#include "contact/consistency.h"
#include "control/qp.h"
#include "core/linalg.h"
#include "moreau/assembly.h"

enum { MAXC = 40, MAXN = 3 * MAXC, MAXV = 108 };
static const double DT = 1e-3, SIDE = 0.2, BAND = 1e-4; /* the assembly's default band */

typedef struct {
  mr_model *m;
  mr_data *d;
  mr_contact_assembly a;
  mr_arena work;
  double vf[MAXV];
} fixture;

/* a free cube of side SIDE and 1 kg, or (link) a 1 m link of 2 kg on a continuous joint about y
 * at the world origin */
static void fixture_init(fixture *f, int link) {
  memset(f, 0, sizeof *f);
  f->m = mr_model_create(link ? "link" : "cube");
  double I = SIDE * SIDE / 6.0;
  mr_inertia Y = {1.0, mr_v3_zero(), mr_m3_diag(I, I, I)};
  mr_inertia L = {2.0, mr_v3(0.5, 0, 0), mr_m3_diag(1e-3, 2.0 / 12.0, 2.0 / 12.0)};
  int b = link ? mr_model_add_body(f->m, 0, "hinge", MR_JOINT_CONTINUOUS, mr_se3_identity(),
                                   mr_v3(0, 1, 0), "link", L, NULL)
               : mr_model_add_body(f->m, 0, "root", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(),
                                   "cube", Y, NULL);
  assert_int_equal(b, 1);
  f->d = mr_data_create(f->m);
  assert_int_equal(mr_contact_assembly_init(&f->a, MAXC, f->m->nv, NULL), MR_OK);
  assert_int_equal(mr_arena_init(&f->work, mr_solver_work_size(MAXC, 0)), 0);
}

static void fixture_free(fixture *f) {
  mr_arena_destroy(&f->work);
  mr_contact_assembly_free(&f->a);
  mr_data_free(f->d);
  mr_model_free(f->m);
}

/* the problem of contacts c at configuration q, settings s */
static void assemble(fixture *f, const double *q, const mr_contact_geometry *c, int nc,
                     const mr_assembly_settings *s) {
  double v[MAXV] = {0};
  mr_forward_kinematics(f->m, f->d, q, NULL, NULL);
  mr_crba(f->m, f->d, q);
  assert_int_equal(mr_ldlt_factor(f->m, f->d, NULL), MR_OK);
  assert_int_equal(mr_contact_assemble(f->m, f->d, c, nc, v, f->vf, s, &f->a, NULL), MR_OK);
}

/* a ground contact on body 1 at point p (normal +z), gap phi */
static mr_contact_geometry ground_contact(mr_vec3 p, double phi) {
  mr_contact_geometry c;
  memset(&c, 0, sizeof c);
  c.body1 = 1;
  c.point = p;
  c.frame = mr_m3_identity();
  c.phi = phi;
  c.mu = 0.5;
  return c;
}

/* the correction part of g: g − J v_f/Δt */
static void correction(const fixture *f, double *b) {
  int n = 3 * f->a.problem.nc, m = f->a.nv;
  for (int i = 0; i < n; ++i)
    b[i] = f->a.g[i] - mr_dot(f->a.J + (size_t)i * m, f->vf, m) / DT;
}

/* P b by eigendecompositions: V_r = the eigenvectors of G of eigenvalues above 1e-10 of the
 * largest (an orthonormal basis of range(G), the projection's own rank threshold); the no-slip
 * subspace S = {V_r z : (V_r z)_T = 0} has the orthonormal basis V_r Z, Z the eigenvectors of
 * V_r,Tᵀ V_r,T (eigenvalues in [0, 1]) of eigenvalue below 1e-10; P b = (V_r Z)(V_r Z)ᵀ b */
static void eigen_projection(const double *G, int n, const double *b, double *Pb) {
  static double A[MAXN * MAXN], V[MAXN * MAXN], eig[MAXN], Q[MAXN * MAXN], K[MAXN * MAXN],
      W[MAXN * MAXN], kw[MAXN];
  memcpy(A, G, sizeof(double) * (size_t)n * n);
  mr_sym_eigen(A, n, eig, V);
  double big = 0.0;
  for (int i = 0; i < n; ++i)
    big = fmax(big, fabs(eig[i]));
  int r = 0;
  for (int i = 0; i < n; ++i)
    if (eig[i] > 1e-10 * big) {
      for (int k = 0; k < n; ++k)
        Q[k * n + r] = V[k * n + i];
      ++r;
    }
  /* K = Q_Tᵀ Q_T over the tangential rows */
  for (int a = 0; a < r; ++a)
    for (int c = 0; c < r; ++c) {
      double s = 0.0;
      for (int k = 0; k < n; ++k)
        if (k % 3 < 2) s += Q[k * n + a] * Q[k * n + c];
      K[a * r + c] = s;
    }
  if (r > 0) mr_sym_eigen(K, r, kw, W);
  mr_zero(Pb, n);
  for (int j = 0; j < r; ++j) {
    if (kw[j] > 1e-10) continue;
    double col[MAXN], pr = 0.0;
    for (int k = 0; k < n; ++k) {
      col[k] = 0.0;
      for (int a = 0; a < r; ++a)
        col[k] += Q[k * n + a] * W[a * r + j];
      pr += col[k] * b[k];
    }
    for (int k = 0; k < n; ++k)
      Pb[k] += pr * col[k];
  }
}

/* ‖x − V_r V_rᵀ x‖: the part of x outside range(G), V_r as in eigen_projection */
static double outside_range(const double *G, int n, const double *x) {
  static double A[MAXN * MAXN], V[MAXN * MAXN], eig[MAXN];
  memcpy(A, G, sizeof(double) * (size_t)n * n);
  mr_sym_eigen(A, n, eig, V);
  double big = 0.0, r[MAXN];
  for (int i = 0; i < n; ++i)
    big = fmax(big, fabs(eig[i]));
  memcpy(r, x, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    if (!(eig[i] > 1e-10 * big)) continue;
    double pr = 0.0;
    for (int k = 0; k < n; ++k)
      pr += V[k * n + i] * x[k];
    for (int k = 0; k < n; ++k)
      r[k] -= pr * V[k * n + i];
  }
  return mr_norm(r, n);
}

/* the problem of contacts c is left as assembled, bit for bit */
static void assert_kept(fixture *f, const double *q, const mr_contact_geometry *c, int nc,
                        const mr_assembly_settings *s) {
  double g[MAXN];
  assemble(f, q, c, nc, s);
  memcpy(g, f->a.g, sizeof(double) * 3 * (size_t)nc);
  assert_int_equal(mr_contact_consistent(&f->a, f->vf, BAND, NULL, NULL, &f->work),
                   MR_CONSISTENT_NOOP);
  assert_memory_equal(g, f->a.g, sizeof(double) * 3 * (size_t)nc);
}

/* A box on its 4 bottom corners in penetration. Planar depths (Φ = −12, −8, −4, 0 µm: a tilt):
 * the correction is already the normal velocity of a rigid motion without slip (a heave and a
 * tilt about axes in the sole plane), so g is kept bit for bit, and the eigen projection agrees
 * with it to round-off: the normal equations of J_S (JᵀJ diagonal 4 for translations, 4 · 0.02
 * m² for rotations, condition ≈ 50) solved in double, ≈ 50 · 12 ε ≈ 1e-13 of ‖b‖, asserted
 * 1e-11. Twisted depths (Φ = −6, −2, −2, −6 µm: Φ₀₀ − Φ₁₀ − Φ₀₁ + Φ₁₁ ≠ 0, no rigid motion
 * makes them) are projected: the result matches the eigen projection (same bound) and the
 * twist is removed (the projected depths' twist is 0 to 1e-11 of ‖b‖). */
static void test_box_planar(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 0);
  const double q[7] = {0.3, -0.2, SIDE / 2, 0, 0, 0, 1};
  const double phis[2][4] = {{-12e-6, -8e-6, -4e-6, 0.0}, {-6e-6, -2e-6, -2e-6, -6e-6}};
  mr_contact_geometry c[4];
  f.vf[2] = -9.81 * DT;
  mr_assembly_settings s = mr_assembly_settings_default();
  double b[12], b2[12], Pb[12];
  static const int one_pair[4] = {0, 0, 0, 0}, cols[6] = {0, 1, 2, 3, 4, 5};
  const mr_consistency_pairs by_pair = {1, one_pair, cols};
  for (int pass = 0; pass < 4; ++pass) {
    const mr_consistency_pairs *pairs = pass >= 2 ? &by_pair : NULL;
    for (int i = 0; i < 4; ++i)
      c[i] = ground_contact(
          mr_v3(q[0] + (i & 1 ? 0.5 : -0.5) * SIDE, q[1] + (i & 2 ? 0.5 : -0.5) * SIDE, 0.0),
          phis[pass % 2][i]);
    assemble(&f, q, c, 4, &s);
    correction(&f, b);
    eigen_projection(f.a.G, 12, b, Pb);
    double g[12];
    memcpy(g, f.a.g, sizeof g);
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, pairs, NULL, &f.work),
                     pass % 2 ? MR_CONSISTENT_PROJECTED : MR_CONSISTENT_NOOP);
    correction(&f, b2);
    double nb = mr_norm(b, 12);
    assert_vec_near(b2, Pb, 12, 1e-11 * nb);
    if (pass % 2 == 0) assert_memory_equal(g, f.a.g, sizeof g); /* in S: kept bit for bit */
    if (pass % 2 == 1) assert_near(b2[2] - b2[5] - b2[8] + b2[11], 0.0, 1e-11 * nb);
  }
  assert_int_equal(f.work.top, 0); /* scratch released */
  fixture_free(&f);
}

/* A cube tilted by θ = 1e-6 rad about x on its 4 bottom corners, 4 µm deep at its centre (a
 * landing cube meets its support so: corners at Φ = −4 µm ± 0.1 µm). The gaps are affine, a
 * heave and a tilt; but a rotation about x now slips the corners by the tilt times the rotation
 * (their heights differ by SIDE θ), a singular value of B_T of SIDE θ / √2 relative, below the
 * rank tolerance's √1e-10, so the tilt counts as a no-slip motion and is kept. b' = J δu must
 * then keep its tangential rows, ≈ θ times the tilt's rate: with them written as 0, b' differed
 * from b on the normal rows only by round-off, b was kept, and g was outside range(G) by 2.5e-8
 * of ‖b‖ (7e-9 of ‖g‖, against 2e-15 with them kept): no all-sticking λ solved G λ = −g. Asserted:
 * g in range(G) to 1e-11 of ‖g‖ (round-off: the kept part of G has condition ≈ 60 and 12 rows, ≈
 * 1e-13), the normal rows the eigen projection's (1e-11 of ‖b‖ as test_box_planar), the tangential
 * rows at most 10 θ ‖b‖ (the slip of the kept tilt). */
static void test_tilted_patch(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 0);
  const double th = 1e-6, h = SIDE / 2, depth = 4e-6;
  const double q[7] = {0, 0, h - depth, sin(th / 2), 0, 0, cos(th / 2)};
  mr_contact_geometry c[4];
  f.vf[2] = -9.81 * DT;
  for (int i = 0; i < 4; ++i) {
    double x = i & 1 ? h : -h, y = i & 2 ? h : -h;
    mr_vec3 p = mr_v3(x, y * cos(th) + h * sin(th), q[2] + y * sin(th) - h * cos(th));
    c[i] = ground_contact(p, p.v[2]);
  }
  mr_assembly_settings s = mr_assembly_settings_default();
  assemble(&f, q, c, 4, &s);
  double b[12], b2[12];
  correction(&f, b);
  assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work),
                   MR_CONSISTENT_PROJECTED);
  correction(&f, b2);
  double nb = mr_norm(b, 12);
  assert_true(outside_range(f.a.G, 12, f.a.g) <= 1e-11 * mr_norm(f.a.g, 12));
  for (int i = 0; i < 12; ++i)
    if (i % 3 == 2)
      assert_near(b2[i], b[i], 1e-11 * nb);
    else
      assert_true(fabs(b2[i]) <= 10 * th * nb);
  fixture_free(&f);
}

/* Two free cubes stacked (a on the ground, b on a, 4 corner contacts per face), checked pair by
 * pair (mr_consistency_pairs: each face over the six dofs of its upper cube; the pairs form a
 * tree of free bodies, so b's twist relative to a's is free and S splits into the faces' own).
 * Planar depths on both faces (a heave and a tilt each): every pair keeps its rows, so g is kept
 * bit for bit, as the whole projection keeps it. Twisted depths: a pair moves its rows, and the
 * whole projection runs: the eigen projection onto S (round-off as test_box_planar, asserted
 * 1e-11 of ‖b‖) and the same g as without pairs, bit for bit. */
static void test_pairs_of_a_column(void **state) {
  (void)state;
  fixture f;
  memset(&f, 0, sizeof f);
  f.m = mr_model_create("column");
  double I = SIDE * SIDE / 6.0;
  mr_inertia Y = {1.0, mr_v3_zero(), mr_m3_diag(I, I, I)};
  assert_int_equal(
      mr_model_add_body(f.m, 0, "ra", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(), "a", Y, NULL),
      1);
  assert_int_equal(
      mr_model_add_body(f.m, 0, "rb", MR_JOINT_FREE, mr_se3_identity(), mr_v3_zero(), "b", Y, NULL),
      2);
  f.d = mr_data_create(f.m);
  assert_int_equal(mr_contact_assembly_init(&f.a, MAXC, f.m->nv, NULL), MR_OK);
  assert_int_equal(mr_arena_init(&f.work, mr_solver_work_size(MAXC, 0)), 0);
  const double h = SIDE / 2, q[14] = {0.1, 0, h, 0, 0, 0, 1, 0.1, 0, 3 * h, 0, 0, 0, 1};
  /* depths (µm) at the corners (x, y) = (−h, −h), (h, −h), (−h, h), (h, h) of each face: planar
   * (the twist Φ₀₀ − Φ₁₀ − Φ₀₁ + Φ₁₁ is 0 on both), then one corner of each face 2 µm off */
  const double phis[2][8] = {{-2, -12, -8, -18, -3, 1, -5, -1}, {-2, -12, -8, -16, -3, 1, -5, 1}};
  static const int pair[8] = {0, 0, 0, 0, 1, 1, 1, 1},
                   cols[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const mr_consistency_pairs by_pair = {2, pair, cols};
  mr_assembly_settings s = mr_assembly_settings_default();
  f.vf[2] = f.vf[8] = -9.81 * DT;
  for (int pass = 0; pass < 2; ++pass) {
    mr_contact_geometry c[8];
    for (int i = 0; i < 8; ++i) {
      double x = q[0] + (i & 1 ? h : -h), y = i & 2 ? h : -h, z = i < 4 ? 0.0 : SIDE;
      c[i] = ground_contact(mr_v3(x, y, z), 1e-6 * phis[pass][i]);
      if (i >= 4) c[i].body1 = 2, c[i].body2 = 1; /* b on a: the normal +z out of a */
    }
    double b[24], Pb[24], b2[24], g[24], g_whole[24];
    assemble(&f, q, c, 8, &s);
    correction(&f, b);
    eigen_projection(f.a.G, 24, b, Pb);
    memcpy(g, f.a.g, sizeof g);
    mr_consistent_result expect = pass ? MR_CONSISTENT_PROJECTED : MR_CONSISTENT_NOOP;
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work), expect);
    memcpy(g_whole, f.a.g, sizeof g_whole);
    memcpy(f.a.g, g, sizeof g);
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, &by_pair, NULL, &f.work), expect);
    assert_memory_equal(f.a.g, g_whole, sizeof g);
    if (pass == 0) assert_memory_equal(f.a.g, g, sizeof g);
    correction(&f, b2);
    assert_vec_near(b2, Pb, 24, 1e-11 * mr_norm(b, 24));
  }
  assert_int_equal(f.work.top, 0);
  fixture_free(&f);
}

/* A link on a hinge touching the ground at x₁ = 0.3 and x₂ = 0.7 m (Φ = −3 and −1 µm): its 6
 * rows have rank 1, J_N = −x (a rotation about y moves a point at x along z by −x ω), J_T = 0.
 * The only motion is the rotation, so the closest achievable push-out is the least-squares one,
 * b'_N,i = x_i (x₁ b₁ + x₂ b₂)/(x₁² + x₂²) and b'_T = 0: each contact gets a push-out
 * proportional to its distance from the hinge. Round-off of a 1-column normal equation: a few ε
 * of ‖b‖, asserted 1e-13. */
static void test_link_two_contacts(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 1);
  const double q[1] = {0.0}, x[2] = {0.3, 0.7};
  mr_contact_geometry c[2] = {ground_contact(mr_v3(x[0], 0, 0), -3e-6),
                              ground_contact(mr_v3(x[1], 0, 0), -1e-6)};
  mr_assembly_settings s = mr_assembly_settings_default();
  assemble(&f, q, c, 2, &s);
  double b[6], b2[6], expect[6] = {0};
  correction(&f, b);
  assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work),
                   MR_CONSISTENT_PROJECTED);
  correction(&f, b2);
  double s1 = (x[0] * b[2] + x[1] * b[5]) / (x[0] * x[0] + x[1] * x[1]);
  expect[2] = x[0] * s1, expect[5] = x[1] * s1;
  assert_vec_near(b2, expect, 6, 1e-13 * mr_norm(b, 6));
  /* the second contact above the band (Φ = 0.2 mm > δ: a permitted approach, not a push-out)
   * is free: the first alone is achievable, so g is kept */
  c[1].phi = 2e-4;
  assert_kept(&f, q, c, 2, &s);
  fixture_free(&f);
}

/* Two coincident contacts (the same corner, the same frame, Φ = −4 and 0 µm) on a free box: 6
 * rows, 6 dofs, rank 3 (the contact-space path: pivoted Cholesky of G). The rows are equal, so
 * range(J) = {(u, u)} and the projection gives each the mean, ((b₁ + b₂)/2, (b₁ + b₂)/2): the
 * two push-outs the corner cannot make at once are replaced by their average. Round-off: G's
 * dropped pivot is ε-small, the kept 3 x 3 block has condition ≈ 30 (1/m + r²/I terms), asserted
 * 1e-12 of ‖b‖. A single contact's full-rank block is left alone (bit for bit). */
static void test_coincident_contacts(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f, 0);
  const double q[7] = {0, 0, SIDE / 2, 0, 0, 0, 1};
  mr_vec3 p = mr_v3(-SIDE / 2, -SIDE / 2, 0);
  mr_contact_geometry c[2] = {ground_contact(p, -4e-6), ground_contact(p, 0.0)};
  f.vf[2] = -9.81 * DT;
  mr_assembly_settings s = mr_assembly_settings_default();
  assemble(&f, q, c, 2, &s);
  double b[6], b2[6], expect[6];
  correction(&f, b);
  assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work),
                   MR_CONSISTENT_PROJECTED);
  correction(&f, b2);
  for (int k = 0; k < 3; ++k)
    expect[k] = expect[k + 3] = 0.5 * (b[k] + b[k + 3]);
  assert_vec_near(b2, expect, 6, 1e-12 * mr_norm(b, 6));
  /* one contact: P = I, g untouched */
  assert_kept(&f, q, c, 1, &s);
  fixture_free(&f);
}

/* a random problem: J = A B of rank k (n x m), M = diag in [0.5, 2], G = J M⁻¹ Jᵀ, R = 0 */
static void random_problem(mr_contact_assembly *a, double *vf, int nc, int m, int k,
                           uint64_t seed) {
  int n = 3 * nc;
  double A[MAXN * MAXV], B[MAXV * MAXV], Minv[MAXV];
  for (int i = 0; i < n * k; ++i)
    A[i] = test_rand(&seed, -1, 1);
  for (int i = 0; i < k * m; ++i)
    B[i] = test_rand(&seed, -1, 1);
  for (int j = 0; j < m; ++j)
    Minv[j] = 1.0 / test_rand(&seed, 0.5, 2.0), vf[j] = test_rand(&seed, -1, 1);
  a->nv = m;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) {
      double s = 0.0;
      for (int t = 0; t < k; ++t)
        s += A[i * k + t] * B[t * m + j];
      a->J[i * m + j] = s;
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int t = 0; t < m; ++t)
        s += a->J[i * m + t] * Minv[t] * a->J[j * m + t];
      a->G[i * n + j] = s;
    }
  for (int i = 0; i < n; ++i) {
    a->g[i] = mr_dot(a->J + i * m, vf, m) / DT + test_rand(&seed, -1, 1);
    a->R[i] = 0.0;
  }
  for (int i = 0; i < nc; ++i)
    a->mu[i] = 0.5, a->rest[i] = 0.0; /* frictional: the tangential rows are held */
  memset(&a->problem, 0, sizeof a->problem);
  a->problem =
      (mr_contact_problem){.nc = nc, .G = a->G, .g = a->g, .mu = a->mu, .R = a->R, .dt = DT};
}

/* Random rank-deficient J, both paths (3nc ≤ nv: G; 3nc > nv: JᵀJ), several seeds, with no-slip
 * subspaces of dimension 0 (rank 7 < 8 tangential rows: b' = 0), 2 and 4: b' is the eigen
 * projection onto S, in range(G), its tangential rows 0 to round-off, and the projection is
 * idempotent; the same correction is left bit for bit when its norm is within the options'
 * negligible bound (1.01 ‖b‖), and projected when it is not (0.99 ‖b‖).
 * Round-off: the kept part of G has a condition up to ~1e4 for these random factors, the
 * projector errs by about that times n ε ≈ 1e-10 of ‖b‖, the Jacobi sweeps by ε ‖G‖ over the
 * smallest kept eigenvalue, the same order: asserted 1e-8 ‖b‖ (idempotence 1e-9 ‖b‖). */
static void test_random_rank_deficient(void **state) {
  (void)state;
  static const int sizes[][3] = {{4, 20, 7}, {4, 20, 10}, {6, 20, 16}, {10, 24, 24}, {8, 22, 20}};
  fixture f;
  fixture_init(&f, 0);
  mr_contact_assembly_free(&f.a);
  assert_int_equal(mr_contact_assembly_init(&f.a, MAXC, MAXV, NULL), MR_OK);
  for (int t = 0; t < 5; ++t)
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      int nc = sizes[t][0], m = sizes[t][1], k = sizes[t][2], n = 3 * nc;
      random_problem(&f.a, f.vf, nc, m, k, seed * 7919 + (uint64_t)t);
      double b[MAXN], b2[MAXN], b3[MAXN], Pb[MAXN], g[MAXN];
      correction(&f, b);
      eigen_projection(f.a.G, n, b, Pb);
      /* a correction of norm within opt.negligible is left bit for bit */
      mr_consistency_options opt = {1.01 * mr_norm(b, n), NULL, NULL, 0, NULL, 0.0, NULL};
      memcpy(g, f.a.g, sizeof(double) * (size_t)n);
      assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, &opt, &f.work),
                       MR_CONSISTENT_NOOP);
      assert_memory_equal(g, f.a.g, sizeof(double) * (size_t)n);
      opt.negligible = 0.99 * mr_norm(b, n);
      assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, &opt, &f.work),
                       MR_CONSISTENT_PROJECTED);
      correction(&f, b2);
      double nb = mr_norm(b, n);
      assert_vec_near(b2, Pb, n, 1e-8 * nb);
      /* tangential rows: 0 up to the projection's round-off; b' in range(J) = range(G) to
       * round-off (the product B Z y: n ε ‖B‖ ‖Z y‖, far below 1e-10 of ‖b‖) */
      for (int i = 0; i < n; i += 3)
        assert_true(fabs(b2[i]) <= 1e-8 * nb && fabs(b2[i + 1]) <= 1e-8 * nb);
      assert_true(outside_range(f.a.G, n, b2) <= 1e-10 * nb);
      if (t == 0) assert_true(mr_norm(b2, n) == 0.0);
      mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work);
      correction(&f, b3);
      assert_vec_near(b3, b2, n, 1e-9 * nb);
    }
  fixture_free(&f);
}

/* P b with row roles (the generalisation of eigen_projection): S = {V_r z : (V_r z)_held = 0}
 * with the orthonormal basis D = V_r Z as there, then the least-squares fit of D's corrected
 * rows to b's (the normal equations solved on the eigenvectors of D_cᵀ D_c of eigenvalue above
 * 1e-10 of the largest); rows neither held nor corrected keep b */
static void eigen_projection_roles(const double *G, int n, const double *b,
                                   const unsigned char *held, const unsigned char *corrected,
                                   double *Pb) {
  static double A[MAXN * MAXN], V[MAXN * MAXN], eig[MAXN], Q[MAXN * MAXN], K[MAXN * MAXN],
      W[MAXN * MAXN], kw[MAXN], D[MAXN * MAXN], C[MAXN * MAXN], U[MAXN * MAXN], cw[MAXN];
  memcpy(A, G, sizeof(double) * (size_t)n * n);
  mr_sym_eigen(A, n, eig, V);
  double big = 0.0;
  for (int i = 0; i < n; ++i)
    big = fmax(big, fabs(eig[i]));
  int r = 0, d = 0;
  for (int i = 0; i < n; ++i)
    if (eig[i] > 1e-10 * big) {
      for (int k = 0; k < n; ++k)
        Q[k * n + r] = V[k * n + i];
      ++r;
    }
  for (int a = 0; a < r; ++a)
    for (int c = 0; c < r; ++c) {
      double t = 0.0;
      for (int k = 0; k < n; ++k)
        if (held[k]) t += Q[k * n + a] * Q[k * n + c];
      K[a * r + c] = t;
    }
  if (r > 0) mr_sym_eigen(K, r, kw, W);
  for (int j = 0; j < r; ++j) {
    if (kw[j] > 1e-10) continue;
    for (int k = 0; k < n; ++k) {
      D[k * n + d] = 0.0;
      for (int a = 0; a < r; ++a)
        D[k * n + d] += Q[k * n + a] * W[a * r + j];
    }
    ++d;
  }
  /* C = D_cᵀ D_c, its eigenvectors U; z = Σ u (uᵀ D_cᵀ b_c) / λ over the kept eigenvalues */
  for (int a = 0; a < d; ++a)
    for (int c = 0; c < d; ++c) {
      double t = 0.0;
      for (int k = 0; k < n; ++k)
        if (corrected[k]) t += D[k * n + a] * D[k * n + c];
      C[a * d + c] = t;
    }
  double z[MAXN] = {0}, cmax = 0.0;
  if (d > 0) mr_sym_eigen(C, d, cw, U);
  for (int j = 0; j < d; ++j)
    cmax = fmax(cmax, cw[j]);
  for (int j = 0; j < d; ++j) {
    if (!(cw[j] > 1e-10 * cmax)) continue;
    double t = 0.0;
    for (int k = 0; k < n; ++k)
      for (int a = 0; a < d && corrected[k]; ++a)
        t += U[a * d + j] * D[k * n + a] * b[k];
    for (int a = 0; a < d; ++a)
      z[a] += U[a * d + j] * t / cw[j];
  }
  for (int k = 0; k < n; ++k) {
    Pb[k] = b[k];
    if (!held[k] && !corrected[k]) continue;
    Pb[k] = 0.0;
    for (int a = 0; a < d; ++a)
      Pb[k] += D[k * n + a] * z[a];
  }
}

/* Frictionless contacts and restitution targets (random rank-deficient problems, both paths):
 * the tangential rows of a contact with μ = 0 are neither held nor corrected (no force acts
 * along them: they keep their b), and the restitution target, an impact law's demand on a
 * velocity, is left out of the projection and added back as it is. b' − the projection with
 * these roles computed by eigendecompositions: 1e-8 ‖b‖ as in test_random_rank_deficient. */
static void test_frictionless_and_restitution(void **state) {
  (void)state;
  static const int sizes[][3] = {{4, 20, 10}, {6, 20, 16}, {10, 24, 24}, {8, 22, 20}};
  fixture f;
  fixture_init(&f, 0);
  mr_contact_assembly_free(&f.a);
  assert_int_equal(mr_contact_assembly_init(&f.a, MAXC, MAXV, NULL), MR_OK);
  for (int t = 0; t < 4; ++t)
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      int nc = sizes[t][0], m = sizes[t][1], k = sizes[t][2], n = 3 * nc;
      random_problem(&f.a, f.vf, nc, m, k, seed * 104729 + (uint64_t)t);
      unsigned char held[MAXN], corrected[MAXN];
      double b[MAXN], b2[MAXN], Pb[MAXN], rest[MAXC];
      for (int i = 0; i < nc; ++i) {
        f.a.mu[i] = i % 3 == 0 ? 0.0 : 0.5;
        rest[i] = i % 4 == 1 ? 0.5 + 0.1 * i : 0.0;
        f.a.rest[i] = rest[i];
        f.a.g[3 * i + 2] += rest[i];
      }
      for (int i = 0; i < n; ++i)
        held[i] = i % 3 < 2 && f.a.mu[i / 3] > 0.0, corrected[i] = i % 3 == 2;
      correction(&f, b);
      for (int i = 0; i < nc; ++i)
        b[3 * i + 2] -= rest[i];
      eigen_projection_roles(f.a.G, n, b, held, corrected, Pb);
      assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work),
                       MR_CONSISTENT_PROJECTED);
      correction(&f, b2);
      for (int i = 0; i < nc; ++i)
        b2[3 * i + 2] -= rest[i];
      assert_vec_near(b2, Pb, n, 1e-8 * mr_norm(b, n));
      /* a frictionless contact's tangential rows keep b exactly */
      for (int i = 0; i < n; ++i)
        if (!held[i] && !corrected[i]) assert_true(b2[i] == b[i]);
    }
  fixture_free(&f);
}

/* An island beyond the dense bound (40 contacts over 18 free bodies: min(3nc, nv) = 108 > 96),
 * projected through the sparse factor over its supports (mr_consistency_options). Each contact
 * joins two bodies or a body and the world, and the contacts of one pair share a row space of
 * rank 3–5 (a random basis of the pair's 6 or 12 columns), so the rows are dependent as on
 * patches; a fifth of the contacts are frictionless. b' against the projection with these roles
 * computed by eigendecompositions (eigen_projection_roles), as in test_random_rank_deficient:
 * the regularisation α = 1e-10 of each column's scale shifts b' by about α times the condition
 * of the kept part (≤ 1e4 for these factors) and the six rounds leave the held rows' slip at
 * about 1e-9 of ‖b‖ (4.8e-8 and 1.2e-9 of ‖b‖ measured over the seeds): 1e-6 ‖b‖ asserted, and
 * 1e-8 ‖b‖ on the held rows; on the held and corrected rows b' is J x, in range(G_RR) to
 * round-off (1e-10 ‖b‖); a frictionless contact's tangential rows keep b exactly; projected
 * again, b' moves by no more than the first projection's error, and a correction below
 * skip_below is left as assembled. Without mr_consistency_options the island is too large. */
static void test_large_island(void **state) {
  (void)state;
  enum { NB = 18, NC = 40, NP = 16 };
  fixture f;
  fixture_init(&f, 0);
  mr_contact_assembly_free(&f.a);
  assert_int_equal(mr_contact_assembly_init(&f.a, MAXC, MAXV, NULL), MR_OK);
  static int support[NC * 6 * NB], nsupport[NC], col[6 * NB];
  static double Bq[NP][5 * 12], Minv[6 * NB];
  int m = 6 * NB, n = 3 * NC, pa[NP], pb[NP], rank[NP];
  for (int j = 0; j < m; ++j)
    col[j] = j;
  mr_consistency_factor *fac = mr_consistency_factor_create();
  assert_non_null(fac);
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    uint64_t s = seed * 6151;
    for (int q = 0; q < NP; ++q) {
      pa[q] = q % NB, pb[q] = q < NB - 1 ? q + 1 : -1; /* a chain of pairs, and the world */
      if (q % 5 == 4) pb[q] = -1;
      rank[q] = 3 + (int)test_rand(&s, 0, 2.999);
      for (int i = 0; i < 5 * 12; ++i)
        Bq[q][i] = test_rand(&s, -1, 1);
    }
    for (int j = 0; j < m; ++j)
      Minv[j] = 1.0 / test_rand(&s, 0.5, 2.0), f.vf[j] = test_rand(&s, -1, 1);
    memset(f.a.J, 0, sizeof(double) * (size_t)n * m);
    for (int i = 0; i < NC; ++i) {
      int q = i % NP, w = pb[q] < 0 ? 6 : 12, bodies[2] = {pa[q], pb[q]};
      for (int r = 0; r < 3; ++r) {
        double a[5];
        for (int t = 0; t < rank[q]; ++t)
          a[t] = test_rand(&s, -1, 1);
        for (int k = 0; k < w; ++k) {
          double v = 0.0;
          for (int t = 0; t < rank[q]; ++t)
            v += a[t] * Bq[q][t * 12 + k];
          f.a.J[(size_t)(3 * i + r) * m + 6 * bodies[k / 6] + k % 6] = v;
        }
      }
      /* the support: the pair's dofs, descending */
      int ns = 0, hi = pb[q] > pa[q] ? pb[q] : pa[q], lo = pb[q] > pa[q] ? pa[q] : pb[q];
      for (int k = 5; k >= 0; --k)
        support[i * m + ns++] = 6 * hi + k;
      for (int k = 5; lo >= 0 && k >= 0; --k)
        support[i * m + ns++] = 6 * lo + k;
      nsupport[i] = ns;
    }
    f.a.nv = m;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double g = 0.0;
        for (int t = 0; t < m; ++t)
          g += f.a.J[i * m + t] * Minv[t] * f.a.J[j * m + t];
        f.a.G[i * n + j] = g;
      }
    for (int i = 0; i < n; ++i)
      f.a.g[i] = mr_dot(f.a.J + i * m, f.vf, m) / DT + test_rand(&s, -1, 1), f.a.R[i] = 0.0;
    for (int i = 0; i < NC; ++i)
      f.a.mu[i] = i % 5 == 2 ? 0.0 : 0.5, f.a.rest[i] = 0.0;
    for (int i = 0; i < n; ++i) /* a frictionless contact's tangential rows: no correction */
      if (i % 3 < 2 && f.a.mu[i / 3] == 0.0) f.a.g[i] = mr_dot(f.a.J + i * m, f.vf, m) / DT;
    f.a.problem =
        (mr_contact_problem){.nc = NC, .G = f.a.G, .g = f.a.g, .mu = f.a.mu, .R = f.a.R, .dt = DT};
    mr_consistency_options large = {0.0, support, nsupport, m, col, 0.0, fac};
    unsigned char held[MAXN], corrected[MAXN];
    double b[MAXN], b2[MAXN], b3[MAXN], Pb[MAXN];
    for (int i = 0; i < n; ++i)
      held[i] = i % 3 < 2 && f.a.mu[i / 3] > 0.0, corrected[i] = i % 3 == 2;
    correction(&f, b);
    eigen_projection_roles(f.a.G, n, b, held, corrected, Pb);
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, NULL, &f.work),
                     MR_CONSISTENT_TOO_LARGE);
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, &large, &f.work),
                     MR_CONSISTENT_PROJECTED);
    correction(&f, b2);
    double nb = mr_norm(b, n), hmax = 0.0;
    for (int i = 0; i < n; ++i)
      hmax = held[i] ? fmax(hmax, fabs(b2[i])) : hmax;
    assert_vec_near(b2, Pb, n, 1e-6 * nb);
    assert_true(hmax <= 1e-8 * nb);
    /* on the rows the all-sticking candidate concerns (held and corrected): in range(G_RR) */
    static double GR[MAXN * MAXN];
    double bR[MAXN];
    int nr = 0;
    for (int i = 0; i < n; ++i) {
      if (!held[i] && !corrected[i]) {
        assert_true(b2[i] == b[i]);
        continue;
      }
      for (int j = 0, k = 0; j < n; ++j)
        if (held[j] || corrected[j]) GR[nr * n + k++] = f.a.G[i * n + j];
      bR[nr++] = b2[i];
    }
    for (int i = 0; i < nr; ++i) /* compact the rows of stride n to stride nr */
      memmove(GR + i * nr, GR + i * n, sizeof(double) * (size_t)nr);
    assert_true(outside_range(GR, nr, bR) <= 1e-10 * nb);
    /* projected again (the kept analysis): b' moves by no more than the first projection's error */
    mr_contact_consistent(&f.a, f.vf, BAND, NULL, &large, &f.work);
    correction(&f, b3);
    assert_vec_near(b3, b2, n, 1e-6 * nb);
    /* a correction below skip_below is left as assembled */
    large.skip_below = 1e3 * nb;
    assert_int_equal(mr_contact_consistent(&f.a, f.vf, BAND, NULL, &large, &f.work),
                     MR_CONSISTENT_TOO_LARGE);
  }
  mr_consistency_factor_free(fac);
  fixture_free(&f);
}

/* the pivoted Cholesky reveals the rank of G = J Jᵀ with J of rank k (8 x 8, k = 0 … 8) and
 * reproduces G on its pivots to round-off (entries of order 1: 1e-12) */
static void test_pivoted_cholesky_rank(void **state) {
  (void)state;
  uint64_t seed = 3;
  for (int k = 0; k <= 8; ++k) {
    double J[64], G[64], A[64];
    int perm[8];
    for (int i = 0; i < 8 * k; ++i)
      J[i] = test_rand(&seed, -1, 1);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        double s = 0.0;
        for (int t = 0; t < k; ++t)
          s += J[i * k + t] * J[j * k + t];
        G[i * 8 + j] = A[i * 8 + j] = s;
      }
    int r = mr_pivoted_cholesky(A, 8, perm, MR_CONSISTENCY_TOL);
    assert_int_equal(r, k);
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        double s = 0.0;
        for (int t = 0; t < r && t <= i && t <= j; ++t)
          s += A[i * 8 + t] * A[j * 8 + t];
        assert_near(s, G[perm[i] * 8 + perm[j]], 1e-12);
      }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_box_planar),
      cmocka_unit_test(test_pairs_of_a_column),
      cmocka_unit_test(test_tilted_patch),
      cmocka_unit_test(test_link_two_contacts),
      cmocka_unit_test(test_coincident_contacts),
      cmocka_unit_test(test_random_rank_deficient),
      cmocka_unit_test(test_frictionless_and_restitution),
      cmocka_unit_test(test_large_island),
      cmocka_unit_test(test_pivoted_cholesky_rank),
  };
  return cmocka_run_group_tests_name("consistency", tests, NULL, NULL);
}
