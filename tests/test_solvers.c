/* Every registered contact solver against hand-built problems with known answers.
 *
 * The test iterates over the registry, so a solver added there is tested here too. What a
 * solver must return depends on the model it solves (its registry row's model):
 *   NCP, RaiSim: Signorini + Coulomb (+ maximum dissipation for NCP); on a decoupled block
 *                (G_NT = 0) RaiSim and the NCP agree;
 *   CCP:         the cone complementarity problem: a sliding contact pushes at a distance,
 *                c_N = μ‖c_T‖ > 0;
 *   LCP:         the 4-facet pyramid: friction is biased towards the pyramid's corners;
 *   soft:        a penalty force, not a solution of any of the above; tested on its formula.
 * Expected failures (table `expectations`): on the ill-conditioned stack (a 1e3 kg box on a
 * 1e-3 kg box, mass ratio 1e6), the per-contact Gauss-Seidel solvers (lcp-pgs, ccp-pgs, ncp-pgs,
 * raisim, raisim-ds) converge at a rate set by the condition number of G and do not reach
 * eps_abs in a few hundred sweeps; the solvers working on the whole G (ccp-admm, ncp-admm,
 * ncp-stagproj: factorisations of G) converge. ccp-newton converges on its own (compliant)
 * model only: its compliance R = 1e-6 diag(G) is set by the light box's large 1/m, which makes
 * the heavy box's support soft (Σλ_N = 2624 N instead of 9810 N, in closed form), so its NCP ε_abs
 * stays large; its forces are asserted against that closed form. raisim does not satisfy maximum
 * dissipation when G_NT ≠ 0 (eq. (10) of the RaiSim note); raisim-ds does.
 *
 * Units: G = Δt J M⁻¹ Jᵀ (force units, DESIGN.md §4), c in m/s, λ in N. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "contact/problem_io.h"
#include "contact/solvers.h"
#include "core/arena.h"
#include "core/linalg.h"
#include "moreau/contact.h"

#define MAX_NC 8
#define MAX_N (3 * MAX_NC)
#define DT 1e-3
#define GRAV 9.81

typedef struct {
  mr_contact_problem p;
  double G[MAX_N * MAX_N], g[MAX_N], mu[MAX_NC], R[MAX_N], phi[MAX_NC];
} tproblem;

enum { STACK_SKIP, STACK_FAILS, STACK_CONVERGES, STACK_OWN_MODEL };

/* per-solver expectations, keyed by name; a registered solver missing here is reported and
 * tested only on the model-independent checks */
typedef struct {
  const char *name;
  int answers;  /* 1: check the known answers of its model; 0: soft (own test) */
  int stack;    /* STACK_FAILS / STACK_CONVERGES on the ill-conditioned stack */
  double tol;   /* on λ for the unit problems (G ~ I), see below */
  int warm_max; /* iterations allowed when warm-started from its own solution */
} expectation;

/* tol: a residual ‖·‖ ≤ √3 ε_abs moves λ by at most √3 ε/σ_min = 2.5e-6 (σ_min = 0.68 for GM,
 * 0.69 for GC, 1 for I3) */
static const expectation expectations[] = {
    {"lcp-pgs", 1, STACK_FAILS, 2.5e-6, 2},
    {"ccp-pgs", 1, STACK_FAILS, 2.5e-6, 2},
    {"ncp-pgs", 1, STACK_FAILS, 2.5e-6, 2},
    {"raisim", 1, STACK_FAILS, 2.5e-6, 2},
    {"raisim-ds", 1, STACK_FAILS, 2.5e-6, 2},
    {"soft", 0, STACK_SKIP, 0.0, 1},
    /* whole-G solvers; ccp-newton adds a compliance R = 1e-6 diag(G), so its λ moves by 1e-6
     * relative, 1e-5 on forces up to 10: 2.5e-6 + 1e-5 */
    {"ccp-admm", 1, STACK_CONVERGES, 2.5e-6, 2},
    {"ncp-admm", 1, STACK_CONVERGES, 2.5e-6, 2},
    {"ccp-newton", 1, STACK_OWN_MODEL, 1.25e-5, 2},
    {"ncp-stagproj", 1, STACK_CONVERGES, 2.5e-6, 2},
    {"lcp-stagproj", 1, STACK_CONVERGES, 2.5e-6, 2},
};

static const expectation *expect_for(const char *name) {
  for (size_t k = 0; k < sizeof expectations / sizeof expectations[0]; ++k)
    if (strcmp(expectations[k].name, name) == 0) return &expectations[k];
  return NULL;
}

/* ---- problems ---- */

static void tp_init(tproblem *t, int nc) {
  memset(t, 0, sizeof *t);
  t->p.nc = nc;
  t->p.G = t->G, t->p.g = t->g, t->p.mu = t->mu;
  t->p.dt = DT;
}

/* one contact with a 3x3 block G, free velocity g and friction μ */
static void tp_single(tproblem *t, const double *G, const double *g, double mu) {
  tp_init(t, 1);
  memcpy(t->G, G, 9 * sizeof(double));
  memcpy(t->g, g, 3 * sizeof(double));
  t->mu[0] = mu;
}

static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
/* a coupled block, G_NT = (0.3, 0.2) ≠ 0; positive definite (minors 1, 1.19, 1.054) */
static const double GC[9] = {1, 0.1, 0.3, 0.1, 1.2, 0.2, 0.3, 0.2, 1};
/* a block with G_NT = (0, 0.4) across the sliding direction, where eq. (10)'s deviation is
 * largest; positive definite (minors 1, 1.19, 1.03) */
static const double GM[9] = {1, 0.1, 0, 0.1, 1.2, 0.4, 0, 0.4, 1};

/* boxes of half extents (A, B, H), frames aligned with the world; velocity of body k: v (world,
 * at the centre of mass) and ω (world), 6 entries at 6k */
#define BA 0.2
#define BB 0.15
#define BH 0.1

/* add sign · [I, −[r]×] (the velocity of the point r from the centre of body k) to J's rows */
static void jac_point(double *J, int nv, int row, int k, const double *r, double sign) {
  double S[3][3] = {{0, r[2], -r[1]}, {-r[2], 0, r[0]}, {r[1], -r[0], 0}};
  for (int a = 0; a < 3; ++a) {
    J[(row + a) * nv + 6 * k + a] += sign;
    for (int b = 0; b < 3; ++b)
      J[(row + a) * nv + 6 * k + 3 + b] += sign * S[a][b];
  }
}

/* inverse of the diagonal mass matrix of box k of mass m */
static void box_minv(double *minv, int k, double m) {
  double I[3] = {m / 3 * (BB * BB + BH * BH), m / 3 * (BA * BA + BH * BH),
                 m / 3 * (BA * BA + BB * BB)};
  for (int a = 0; a < 3; ++a)
    minv[6 * k + a] = 1.0 / m, minv[6 * k + 3 + a] = 1.0 / I[a];
}

/* G = Δt J M⁻¹ Jᵀ and g = J v_f, v_f = the velocity after one free step from rest */
static void assemble(tproblem *t, const double *J, const double *minv, int nv) {
  int n = 3 * t->p.nc;
  double vf[12] = {0};
  for (int k = 0; k < nv / 6; ++k)
    vf[6 * k + 2] = -GRAV * DT;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      double s = 0.0;
      for (int j = 0; j < nv; ++j)
        s += J[a * nv + j] * minv[j] * J[b * nv + j];
      t->G[a * n + b] = DT * s;
    }
    t->g[a] = mr_dot(J + a * nv, vf, nv);
  }
}

/* the four bottom corners of a box at height z0 = 0 resting on the ground */
static void corners(double r[4][3], double z) {
  for (int c = 0; c < 4; ++c)
    r[c][0] = (c & 1) ? BA : -BA, r[c][1] = (c & 2) ? BB : -BB, r[c][2] = z;
}

/* one box of mass m resting on four corner contacts */
static void tp_box(tproblem *t, double m, double mu) {
  double J[12 * 6] = {0}, minv[6], r[4][3];
  tp_init(t, 4);
  corners(r, -BH);
  for (int c = 0; c < 4; ++c)
    jac_point(J, 6, 3 * c, 0, r[c], 1.0), t->mu[c] = mu;
  box_minv(minv, 0, m);
  assemble(t, J, minv, 6);
}

/* box 1 (mass m1) on the ground, box 2 (mass m2) on box 1: contacts 0-3 ground/box 1, 4-7
 * box 1/box 2 (normal up: c = velocity of box 2's corner − box 1's corner) */
static void tp_stack(tproblem *t, double m1, double m2, double mu) {
  double J[24 * 12] = {0}, minv[12], r[4][3];
  tp_init(t, 8);
  corners(r, -BH);
  for (int c = 0; c < 4; ++c)
    jac_point(J, 12, 3 * c, 0, r[c], 1.0);
  for (int c = 0; c < 4; ++c) {
    double up[3] = {r[c][0], r[c][1], BH};
    jac_point(J, 12, 12 + 3 * c, 1, r[c], 1.0);
    jac_point(J, 12, 12 + 3 * c, 0, up, -1.0);
  }
  for (int c = 0; c < 8; ++c)
    t->mu[c] = mu;
  box_minv(minv, 0, m1), box_minv(minv, 1, m2);
  assemble(t, J, minv, 12);
}

/* ---- running a solver ---- */

typedef struct {
  double lambda[MAX_N], c[MAX_N];
  mr_solver_stats st;
  mr_status status;
} result;

/* a solve through mr_solve, or (direct) through the solver's table function itself, without
 * mr_solve's preparation (its zeroing of λ when warm_start is 0): each solver keeps the contract
 * of mr_solver_info.solve */
static void solve_any(const char *name, int direct, const tproblem *t, const mr_solver_settings *s,
                      const double *warm, result *out) {
  mr_arena work;
  mr_error err;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(t->p.nc, 0)), 0);
  memset(out, 0, sizeof *out);
  if (warm) memcpy(out->lambda, warm, 3 * t->p.nc * sizeof(double));
  out->status = direct ? mr_solver_find(name)->solve(&t->p, s, NULL, &work, out->lambda, out->c,
                                                     &out->st, &err)
                       : mr_solve(name, &t->p, s, NULL, &work, out->lambda, out->c, &out->st, &err);
  if (out->status) print_message("%s: %s\n", name, err.msg);
  mr_arena_destroy(&work);
}

static void solve_with(const char *name, const tproblem *t, const mr_solver_settings *s,
                       const double *warm, result *out) {
  solve_any(name, 0, t, s, warm, out);
}

static void solve(const char *name, const tproblem *t, result *out) {
  mr_solver_settings s = mr_solver_settings_default();
  solve_with(name, t, &s, NULL, out);
}

/* the registered solvers of a model ("" = all) with known answers */
static const mr_solver_info *solver_of(int i, const char *model) {
  const mr_solver_info *info = mr_solver_at(i);
  const expectation *e = expect_for(info->name);
  if (!e) {
    print_message("note: solver '%s' has no row in the expectation table\n", info->name);
    return NULL;
  }
  if (!e->answers || (model[0] && strcmp(info->model, model) != 0)) return NULL;
  return info;
}

static void print_result(const char *test, const char *name, const result *r) {
  print_message("  %-14s %-12s its %5d  eps_abs %.2e  model %.2e\n", test, name, r->st.iterations,
                r->st.eps_abs, r->st.eps_model);
}

/* angle tolerance between −λ_T and c_T at a solution with ε_c ≤ 1e-6: ε_c bounds
 * ‖λ_T‖‖c_T‖(1 − cos θ), so θ ≤ sqrt(2e-6 / (‖λ_T‖‖c_T‖)) = 3.65e-3 rad for ‖λ_T‖‖c_T‖ ≥ 0.15 */
#define ANGLE_TOL 3.7e-3

/* angle between two 2-vectors */
static double angle2(const double *a, const double *b) {
  return atan2(fabs(a[0] * b[1] - a[1] * b[0]), a[0] * b[0] + a[1] * b[1]);
}

/* ---- tests ---- */

/* sticking: λ = −G⁻¹g, inside the cone, c = 0, for every model (the stick solution solves the
 * LCP, the CCP, RaiSim and the NCP alike) */
static void test_stick(void **state) {
  tproblem t;
  double g[3] = {0.1, -0.05, -1.0}, ref[3] = {-0.1, 0.05, 1.0}, L[9];
  tp_single(&t, GC, g, 0.5);
  memcpy(L, GC, sizeof L);
  assert_int_equal(mr_cholesky(L, 3), 0);
  mr_cholesky_solve(L, 3, ref);
  assert_true(hypot(ref[0], ref[1]) < 0.5 * ref[2]); /* inside the cone */
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("stick", info->name, &r);
    assert_int_equal(r.status, MR_OK);
    assert_true(r.st.converged);
    assert_vec_near(r.lambda, ref, 3, expect_for(info->name)->tol);
  }
}

/* one sweep of a Gauss-Seidel solver from λ = 0 (warm start off); returns its ω */
static double one_sweep(const char *name, const tproblem *t, result *r) {
  mr_solver_settings s = mr_solver_settings_default();
  s.max_iter = 1;
  s.warm_start = 0;
  solve_with(name, t, &s, NULL, r);
  assert_int_equal(r->st.iterations, 1);
  return s.omega;
}

/* one ncp-pgs sweep from λ = 0 on the coupled block GC, against docs/solvers.md's update in
 * closed form: λ_N = max(0, −ω g_N/B_NN); the tangential velocity after that normal change,
 * c_T = g_T + B_TN λ_N; λ_T = proj_{‖·‖ ≤ μλ_N}(−ω c_T/λ_max(B_TT)). With G_TN = (0.3, 0.2) the
 * normal change moves c_T from (0.1, −0.05) to (0.4, 0.15), so a sweep that kept the stale c_T
 * would differ by 0.3 ω/λ_max ≈ 0.2 N. Each step is a few operations: round-off, 1e-15. */
static void test_ncp_pgs_sweep(void **state) {
  tproblem t;
  double g[3] = {0.1, -0.05, -1.0};
  for (int k = 0; k < 4; ++k) {
    /* k ≥ 2: with a compliance R = diag(0.5, 0.5, 0.2) the block is B = G + R (its diagonal
     * steps and λ_max(B_TT) = λ_max(G_TT) + 0.5); a block without R overshoots by R / G */
    int clip = k % 2;
    double mu = clip ? 0.2 : 0.9, rt = k >= 2 ? 0.5 : 0.0, rn = k >= 2 ? 0.2 : 0.0;
    tp_single(&t, GC, g, mu);
    if (k >= 2) t.R[0] = t.R[1] = rt, t.R[2] = rn, t.p.R = t.R;
    result r;
    double w = one_sweep("ncp-pgs", &t, &r), ln = fmax(0.0, -w * g[2] / (GC[8] + rn));
    double cT[2] = {g[0] + GC[2] * ln, g[1] + GC[5] * ln};
    double half = 0.5 * (GC[0] - GC[4]);
    double L = 0.5 * (GC[0] + GC[4]) + sqrt(half * half + GC[1] * GC[1]) + rt;
    double t0 = -w * cT[0] / L, t1 = -w * cT[1] / L, rr = hypot(t0, t1);
    if (rr > mu * ln) t0 *= mu * ln / rr, t1 *= mu * ln / rr;
    /* the case is what it claims: clipped on the disc or not */
    assert_int_equal(rr > mu * ln, clip);
    assert_near(r.lambda[2], ln, 1e-15);
    assert_near(r.lambda[0], t0, 1e-15);
    assert_near(r.lambda[1], t1, 1e-15);
  }
}

/* mr_gs_run_with's options on ncp-pgs (ncp-hybrid's chunks), from a start five sweeps from
 * λ = 0 on a stack of two boxes: a run given c = c(λ) makes the iterates of one
 * that computes it (the same arithmetic: the same bits), and the c given is the one it uses (at
 * c = 0 every λ in the cones meets the NCP: no sweep); a lazy run that converges returns the
 * same λ with the c its sweeps kept, within their round-off of c(λ), and one that does not,
 * c(λ) itself */
static void test_ncp_pgs_options(void **state) {
  tproblem t;
  tp_stack(&t, 1.0, 2.0, 0.5);
  int n = 3 * t.p.nc;
  size_t bytes = (size_t)n * sizeof(double);
  mr_arena work;
  mr_error err;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(t.p.nc, 0)), 0);
  mr_solver_settings s = mr_solver_settings_default();
  double l5[MAX_N] = {0}, c5[MAX_N], la[MAX_N], ca[MAX_N], lb[MAX_N], cb[MAX_N], cx[MAX_N];
  mr_solver_stats sa, sb;
  s.max_iter = 5;
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, 0, l5, c5, &sa, &err), MR_OK);
  assert_false(sa.converged);
  s.warm_start = 1, s.max_iter = 5000;
  memcpy(la, l5, bytes);
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, 0, la, ca, &sa, &err), MR_OK);
  assert_true(sa.converged);
  assert_true(sa.iterations > 5);
  /* given */
  memcpy(lb, l5, bytes);
  mr_problem_velocity(&t.p, lb, cb);
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, MR_GS_C_GIVEN, lb, cb, &sb, &err), MR_OK);
  assert_int_equal(sb.iterations, sa.iterations);
  assert_memory_equal(lb, la, bytes);
  assert_memory_equal(cb, ca, bytes);
  memcpy(lb, l5, bytes);
  mr_zero(cb, n);
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, MR_GS_C_GIVEN, lb, cb, &sb, &err), MR_OK);
  assert_int_equal(sb.iterations, 0);
  /* lazy, converging: every entry of c took one update per contact and sweep, three products
   * and three sums each rounded within u of the sizes they add (V = max|g| + n max|G| max|λ|,
   * the sweeps' iterates within twice the solution's size on this problem: checked a sweep at
   * a time) */
  double gmax = 0.0, lmax = mr_norm_inf(la, n);
  for (int k = 0; k < n * n; ++k)
    gmax = fmax(gmax, fabs(t.G[k]));
  mr_solver_settings one = s;
  one.max_iter = 1;
  memcpy(lb, l5, bytes);
  for (int k = 0; k < sa.iterations; ++k) {
    assert_int_equal(mr_ncp_pgs_with(&t.p, &one, &work, 0, lb, cb, &sb, &err), MR_OK);
    assert_true(mr_norm_inf(lb, n) <= 2.0 * lmax);
  }
  memcpy(lb, l5, bytes);
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, MR_GS_C_LAZY, lb, cb, &sb, &err), MR_OK);
  assert_true(sb.converged);
  assert_int_equal(sb.iterations, sa.iterations);
  assert_memory_equal(lb, la, bytes);
  mr_problem_velocity(&t.p, lb, cx);
  double v = mr_norm_inf(t.g, n) + n * gmax * 2.0 * lmax, dmax = 0.0;
  for (int k = 0; k < n; ++k)
    dmax = fmax(dmax, fabs(cb[k] - cx[k]));
  print_message("lazy c: %d sweeps, largest difference %.3g against %.3g\n", sb.iterations, dmax,
                6.0 * sb.iterations * t.p.nc * DBL_EPSILON * v);
  assert_true(dmax <= 6.0 * sb.iterations * t.p.nc * DBL_EPSILON * v);
  /* lazy, stopped at max_iter: the plain product at the returned λ */
  s.max_iter = 3;
  memcpy(lb, l5, bytes);
  assert_int_equal(mr_ncp_pgs_with(&t.p, &s, &work, MR_GS_C_LAZY, lb, cb, &sb, &err), MR_OK);
  assert_false(sb.converged);
  mr_problem_velocity(&t.p, lb, cx);
  assert_memory_equal(cb, cx, bytes);
  mr_arena_destroy(&work);
}

/* one ccp-pgs sweep from λ = 0 on a block with an unequal diagonal, B = diag(1, 1, 10): the
 * paper's step 3 / tr B = 0.25 exceeds the stability limit 2 / λ_max = 0.2, so docs/solvers.md's
 * step is the Gershgorin cap 1.9 / 10 = 0.19; −ω h g lies inside the cone (|λ_T| = 0.021 ≤
 * μ λ_N = 0.095), so λ = −ω h g. A few operations: 4 ulp of the values ≤ 0.2. */
static void test_ccp_pgs_sweep(void **state) {
  static const double GD[9] = {1, 0, 0, 0, 1, 0, 0, 0, 10};
  tproblem t;
  double g[3] = {0.1, -0.05, -1.0};
  tp_single(&t, GD, g, 0.5);
  result r;
  double h = one_sweep("ccp-pgs", &t, &r) * 1.9 / 10.0;
  for (int a = 0; a < 3; ++a)
    assert_near(r.lambda[a], -h * g[a], 4 * DBL_EPSILON * 0.2);
}

/* compliance: with R = diag(0.5, 0.5, 0.2) the sticking force is λ = −(G + R)⁻¹ g for every
 * model (still inside the cone), so every solver must account for R */
static void test_compliance(void **state) {
  tproblem t;
  double g[3] = {0.1, -0.05, -1.0}, ref[3] = {-0.1, 0.05, 1.0}, L[9];
  tp_single(&t, GC, g, 0.5);
  t.R[0] = t.R[1] = 0.5, t.R[2] = 0.2, t.p.R = t.R;
  memcpy(L, GC, sizeof L);
  for (int a = 0; a < 3; ++a)
    L[4 * a] += t.R[a];
  assert_int_equal(mr_cholesky(L, 3), 0);
  mr_cholesky_solve(L, 3, ref);
  assert_true(hypot(ref[0], ref[1]) < 0.5 * ref[2]);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("compliance", info->name, &r);
    assert_int_equal(r.status, MR_OK);
    assert_true(r.st.converged);
    assert_vec_near(r.lambda, ref, 3, expect_for(info->name)->tol);
  }
}

/* relaxation: the Gauss-Seidel solvers reach the same resting-box load with ω = 0.8 and 1.3
 * (tolerance as in test_box) */
static void test_relaxation(void **state) {
  const char *names[] = {"lcp-pgs", "ccp-pgs", "ncp-pgs"};
  double omegas[] = {0.8, 1.3};
  tproblem t;
  tp_box(&t, 1.0, 0.7);
  for (int k = 0; k < 3; ++k)
    for (int w = 0; w < 2; ++w) {
      mr_solver_settings s = mr_solver_settings_default();
      s.omega = omegas[w];
      result r;
      solve_with(names[k], &t, &s, NULL, &r);
      print_result(w ? "omega-1.3" : "omega-0.8", names[k], &r);
      assert_true(r.st.converged);
      double sum = 0.0;
      for (int c = 0; c < 4; ++c)
        sum += r.lambda[3 * c + 2];
      assert_near(sum, GRAV, 1e-3);
    }
}

/* taking off: g_N > 0 and a small tangential velocity: λ = 0, c = g */
static void test_takeoff(void **state) {
  tproblem t;
  double g[3] = {0.3, 0.1, 1.0}, zero[3] = {0, 0, 0};
  tp_single(&t, GC, g, 0.5);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("takeoff", info->name, &r);
    assert_int_equal(r.status, MR_OK);
    assert_true(r.st.converged);
    assert_vec_near(r.lambda, zero, 3, expect_for(info->name)->tol);
  }
}

/* sliding along t₁ on G = I, μ = 0.5, g = (1, 0, −1): NCP, RaiSim and LCP give λ = (−0.5, 0, 1)
 * with c = (0.5, 0, 0); the CCP gives λ = proj_K(−g) = (−0.6, 0, 1.2), c = (0.4, 0, 0.2): the
 * contact pushes while separating at c_N = μ‖c_T‖ (contact at a distance) */
static void test_slide(void **state) {
  tproblem t;
  double g[3] = {1.0, 0.0, -1.0}, ncp[3] = {-0.5, 0, 1}, ccp[3] = {-0.6, 0, 1.2};
  tp_single(&t, I3, g, 0.5);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("slide", info->name, &r);
    double tol = expect_for(info->name)->tol;
    assert_int_equal(r.status, MR_OK);
    assert_true(r.st.converged);
    int is_ccp = strcmp(info->model, "CCP") == 0;
    assert_vec_near(r.lambda, is_ccp ? ccp : ncp, 3, tol);
    /* on the cone's boundary */
    assert_near(hypot(r.lambda[0], r.lambda[1]), 0.5 * r.lambda[2], tol);
    if (is_ccp)
      assert_near(r.c[2], 0.5 * hypot(r.c[0], r.c[1]), tol);
    else
      assert_near(r.c[2], 0.0, tol);
  }
}

/* sliding at 30° from t₁: the NCP's λ_T = −μλ_N (cos 30°, sin 30°) is antiparallel to c_T; the
 * pyramid LCP clamps each component to ±μλ_N and lands on the corner λ_T = (−0.5, −0.5), 45°
 * away from the sliding direction c_T = (0.366, 0) */
static void test_slide_pyramid_bias(void **state) {
  tproblem t;
  double u[2] = {cos(M_PI / 6), sin(M_PI / 6)}, g[3] = {u[0], u[1], -1.0};
  double corner[3] = {-0.5, -0.5, 1.0};
  tp_single(&t, I3, g, 0.5);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info || strcmp(info->model, "CCP") == 0) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("slide-30deg", info->name, &r);
    double tol = expect_for(info->name)->tol, mlt[2] = {-r.lambda[0], -r.lambda[1]};
    assert_true(r.st.converged);
    if (strcmp(info->model, "LCP") == 0) {
      assert_vec_near(r.lambda, corner, 3, tol);
      assert_near(angle2(mlt, r.c), M_PI / 4, ANGLE_TOL);
    } else {
      assert_near(r.lambda[0], -0.5 * u[0], tol);
      assert_near(r.lambda[1], -0.5 * u[1], tol);
      assert_true(angle2(mlt, r.c) < ANGLE_TOL);
    }
  }
}

/* CCP while sliding: the normal velocity equals μ‖c_T‖ at the solution (eq. (19) of the paper:
 * λ_N ⟂ c_N − μ‖c_T‖), here on the coupled block; and the separation is not zero */
static void test_ccp_distance(void **state) {
  tproblem t;
  double g[3] = {1.0, 0.5, -1.0};
  tp_single(&t, GC, g, 0.5);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "CCP");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("ccp-distance", info->name, &r);
    double tol = expect_for(info->name)->tol;
    assert_true(r.st.converged);
    assert_true(hypot(r.c[0], r.c[1]) > 0.1);
    assert_near(r.c[2], 0.5 * hypot(r.c[0], r.c[1]), tol);
  }
}

/* maximum dissipation on the coupled block GM (G_NT = (0, 0.4)): the NCP solvers and raisim-ds
 * return λ_T antiparallel to c_T with c_N = 0 (within ANGLE_TOL); raisim returns
 * c_T ∝ −λ_T − (μ²λ_N/G_NN) G_NT (eq. (10) of the RaiSim note; raisim solves its subproblem
 * exactly here, so 1e-4 rad), measurably not antiparallel (0.29 rad) */
static void test_raisim_mdp(void **state) {
  tproblem t;
  double g[3] = {1.0, 0.5, -1.0}, mu = 0.8;
  tp_single(&t, GM, g, mu);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    int ncp = strcmp(info ? info->model : "", "NCP") == 0;
    int rs = info && strcmp(info->name, "raisim") == 0;
    int ds = info && strcmp(info->name, "raisim-ds") == 0;
    if (!ncp && !rs && !ds) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("coupled-mdp", info->name, &r);
    double *l = r.lambda, mlt[2] = {-l[0], -l[1]};
    assert_true(r.st.eps_model <= 1e-6);
    assert_true(hypot(r.c[0], r.c[1]) > 0.1); /* sliding */
    assert_near(hypot(l[0], l[1]), mu * l[2], 1e-5);
    assert_near(r.c[2], 0.0, 1e-5);
    if (rs) {
      double pred[2] = {mlt[0] - mu * mu * l[2] / GM[8] * GM[6],
                        mlt[1] - mu * mu * l[2] / GM[8] * GM[7]};
      assert_true(angle2(pred, r.c) < 1e-4);
      /* c_T ∥ pred to 1e-4 rad, so −λ_T is θ = angle(−λ_T, pred) ± 1e-4 away from c_T (0.29 rad) */
      double th = angle2(mlt, pred);
      assert_true(th > 0.1);
      assert_near(angle2(mlt, r.c), th, 1e-4);
      /* the NCP criterion sees the violation: with c_N = 0 and ‖λ_T‖ = μλ_N, ε_c = |⟨λ, c + Γ(c)⟩|
       * = μλ_N ‖c_T‖ (1 − cos θ), less the 1e-5 residues of c_N and the cone times ‖λ‖, ‖c‖ */
      double ec = mu * l[2] * hypot(r.c[0], r.c[1]) * (1.0 - cos(th));
      double slack = 1e-5 * (hypot(hypot(l[0], l[1]), l[2]) + hypot(hypot(r.c[0], r.c[1]), 1.0));
      if (!(r.st.eps_abs >= ec - slack))
        fail_msg("raisim: NCP ε_abs %.6g below μλ_N‖c_T‖(1 − cos θ) = %.6g", r.st.eps_abs, ec);
    } else {
      assert_true(angle2(mlt, r.c) < ANGLE_TOL);
      assert_true(r.st.eps_abs <= 1e-5);
    }
  }
}

/* a box resting on four coplanar corner contacts: Σλ_N = m g. Tolerance: |c_N| ≤ 1e-6 m/s
 * bounds the vertical velocity error, hence Σλ_N to m/Δt · 1e-6 = 1e-3 N (m = 1 kg) */
static void test_box(void **state) {
  tproblem t;
  double m = 1.0;
  tp_box(&t, m, 0.7);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result r;
    solve(info->name, &t, &r);
    print_result("box", info->name, &r);
    assert_int_equal(r.status, MR_OK);
    assert_true(r.st.converged);
    double sum = 0.0;
    for (int c = 0; c < 4; ++c)
      sum += r.lambda[3 * c + 2];
    assert_near(sum, m * GRAV, 1e-3);
  }
}

/* warm start from the solver's own solution: at most warm_max iterations (0 when the criterion
 * holds already), on the sliding contact and on the box */
static void test_warm_start(void **state) {
  tproblem ts, tb;
  double g[3] = {1.0, 0.5, -1.0};
  tp_single(&ts, GC, g, 0.5);
  tp_box(&tb, 1.0, 0.7);
  const tproblem *probs[2] = {&ts, &tb};
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    for (int k = 0; k < 2; ++k) {
      result cold, warm;
      mr_solver_settings s = mr_solver_settings_default();
      solve_with(info->name, probs[k], &s, NULL, &cold);
      solve_with(info->name, probs[k], &s, cold.lambda, &warm);
      print_result("warm", info->name, &warm);
      assert_true(warm.st.converged);
      assert_true(warm.st.iterations <= expect_for(info->name)->warm_max);
    }
  }
}

/* warm start off: the initial forces passed in are ignored, so a solve from arbitrary forces is
 * the cold solve, bit for bit (same iterations, same λ), on the sliding contact and the box */
static void test_warm_start_off(void **state) {
  tproblem ts, tb;
  double g[3] = {1.0, 0.5, -1.0};
  tp_single(&ts, GC, g, 0.5);
  tp_box(&tb, 1.0, 0.7);
  const tproblem *probs[2] = {&ts, &tb};
  double junk[MAX_N];
  for (int k = 0; k < MAX_N; ++k)
    junk[k] = 1e3 * (k % 3 == 2 ? 1.0 : -0.3);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    for (int k = 0; k < 2; ++k) {
      result cold, junked;
      mr_solver_settings s = mr_solver_settings_default();
      s.warm_start = 0;
      solve_with(info->name, probs[k], &s, NULL, &cold);
      solve_with(info->name, probs[k], &s, junk, &junked);
      int n = 3 * probs[k]->p.nc;
      if (cold.st.iterations != junked.st.iterations ||
          memcmp(cold.lambda, junked.lambda, (size_t)n * sizeof(double)))
        fail_msg("%s: warm_start = 0 but the result depends on the initial forces", info->name);
      solve_any(info->name, 1, probs[k], &s, junk, &junked);
      if (cold.st.iterations != junked.st.iterations ||
          memcmp(cold.lambda, junked.lambda, (size_t)n * sizeof(double)))
        fail_msg("%s: its solve function, warm_start = 0, depends on the initial forces",
                 info->name);
    }
  }
}

/* the compliant stack's forces in closed form. With R = e·diag(G) (normal entry e G_NN, the
 * tangential pair averaged) the dual CCP min ½ λᵀ(G + R)λ + gᵀλ over the cones is strictly
 * convex, so its solution is unique and has the box's symmetry (reflections in x and y permute
 * the four corners of each level): one normal force L on every ground corner, U on every
 * interface corner. Equal normal forces at the corners give the boxes no torque, so no
 * tangential velocity: with λ_T = 0, c_T = 0 holds (checked below on G) and the cone is met with
 * c = 0, i.e. the two normal rows (sums over each level) (G_NN + R_NN) λ_N = −g_N:
 *   (Σ_lo G_0j + R_0) L + Σ_up G_0j U = −g_0,   Σ_lo G_4j L + (Σ_up G_4j + R_4) U = −g_4.
 * The solver reports its own criteria ε at its answer (each entry of the residual ≤ ε, in
 * velocity units), so its force vector is within √n ε / λ_min(G + R) ≤ √n ε / min R of that
 * solution (G ⪰ 0, so G + R is strongly monotone with constant min R). */
static void stack_compliant_forces(const tproblem *t, const mr_solver_settings *s,
                                   const result *r) {
  const int n = 24;
  double a[2][2] = {{0, 0}, {0, 0}}, b[2], rmin = INFINITY;
  for (int lv = 0; lv < 2; ++lv) {
    int i = 3 * (4 * lv) + 2;
    for (int c = 0; c < 8; ++c)
      a[lv][c / 4] += t->G[i * n + 3 * c + 2];
    a[lv][lv] += s->compliance_eps * t->G[i * n + i];
    b[lv] = -t->g[i];
  }
  for (int c = 0; c < 8; ++c) {
    const double *G = t->G + 3 * c * n + 3 * c;
    rmin = fmin(rmin, s->compliance_eps * fmin(0.5 * (G[0] + G[n + 1]), G[2 * n + 2]));
  }
  double det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  double L = (b[0] * a[1][1] - a[0][1] * b[1]) / det, U = (a[0][0] * b[1] - a[1][0] * b[0]) / det;
  assert_true(L > 0.0 && U > 0.0);
  /* the symmetric normal forces leave every tangential velocity at g_T = 0 (round-off of G) */
  for (int i = 0; i < n; ++i) {
    if (i % 3 == 2) continue;
    double cT = t->g[i];
    for (int c = 0; c < 8; ++c)
      cT += t->G[i * n + 3 * c + 2] * (c < 4 ? L : U);
    assert_true(fabs(cT) <= 1e-12 * (L + U));
  }
  double tol = sqrt((double)n) * r->st.eps_model / rmin;
  assert_true(r->st.eps_model <= s->eps_abs);
  print_message("ccp-newton stack: L %.6g N, U %.6g N (closed form); tolerance %.2g N\n", L, U,
                tol);
  for (int c = 0; c < 8; ++c) {
    assert_near(r->lambda[3 * c], 0.0, tol);
    assert_near(r->lambda[3 * c + 1], 0.0, tol);
    assert_near(r->lambda[3 * c + 2], c < 4 ? L : U, tol);
  }
}

/* a warm start never makes a solve worse than a cold one within the budget: from forces 1e3
 * times too large on the wrong side of the cone, a solve that does not converge from the warm
 * start is run again from λ = 0 by mr_solve on the iterations the warm run left, and the
 * better result kept. With the cap set to what the warm run alone takes plus what the cold
 * solve needed, the retry gets exactly the cold solve's iterations, so the result converges
 * whenever the cold solve does and is otherwise no less accurate (exact comparison: the cold
 * re-solve is the cold solve, bit for bit); with the cap the cold solve needed alone, the warm
 * run takes it all and the result is reported at the budget */
static void test_warm_never_worse(void **state) {
  tproblem t;
  tp_box(&t, 1.0, 0.7);
  double junk[MAX_N];
  int retried = 0;
  for (int k = 0; k < 12; ++k)
    junk[k] = 1e3 * (k % 3 == 2 ? -1.0 : 0.3);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = solver_of(i, "");
    if (!info) continue;
    result cold, warm;
    mr_solver_settings s = mr_solver_settings_default();
    s.warm_start = 0;
    solve_with(info->name, &t, &s, NULL, &cold);
    s.warm_start = 1;
    int c_iter = cold.st.iterations > 0 ? cold.st.iterations : 1;
    s.max_iter = c_iter;
    solve_with(info->name, &t, &s, junk, &warm);
    print_result("warm from junk, the cold cap", info->name, &warm);
    assert_int_equal(warm.status, MR_OK);
    if (!warm.st.converged) assert_true(warm.st.budget);
    /* the warm run alone (the registry's function, no retry) on a cap the cold solve fits in */
    result alone;
    solve_any(info->name, 1, &t, &s, junk, &alone);
    assert_int_equal(alone.status, MR_OK);
    if (alone.st.converged) continue;
    s.max_iter = alone.st.iterations + c_iter;
    /* a warm run that stopped at the cold cap would go on with the larger one */
    if (alone.st.iterations >= c_iter) {
      mr_solver_settings big = s;
      big.max_iter = 1000000;
      solve_any(info->name, 1, &t, &big, junk, &alone);
      if (alone.st.converged) continue;
      s.max_iter = alone.st.iterations + c_iter;
    }
    solve_with(info->name, &t, &s, junk, &warm);
    print_result("warm from junk, warm + cold cap", info->name, &warm);
    if (warm.st.converged) continue;
    assert_false(cold.st.converged);
    assert_true(warm.st.eps_abs <= cold.st.eps_abs);
  }
  /* the retry draws on the budget: ncp-pgs from the junk start needs more than the cold sweeps,
   * so with the cold cap its warm run takes them all and no retry is left (the best iterate,
   * at the budget); with the cap its warm run takes plus the cold sweeps, the retry runs and
   * its result is the cold one, bit for bit */
  result cold, warm, alone;
  mr_solver_settings s = mr_solver_settings_default();
  s.warm_start = 0;
  solve_with("ncp-pgs", &t, &s, NULL, &cold);
  s.warm_start = 1, s.max_iter = cold.st.iterations;
  solve_with("ncp-pgs", &t, &s, junk, &warm);
  assert_int_equal(warm.st.iterations, s.max_iter);
  assert_true(!warm.st.converged && warm.st.budget);
  /* the warm run alone stopping short of a cap: a tolerance it stalls at (eps_rel) */
  s.eps_rel = 1e-3, s.max_iter = 1000000;
  solve_any("ncp-pgs", 1, &t, &s, junk, &alone);
  if (alone.st.converged) return;
  s.warm_start = 0;
  solve_with("ncp-pgs", &t, &s, NULL, &cold);
  s.warm_start = 1, s.max_iter = alone.st.iterations + cold.st.iterations;
  solve_with("ncp-pgs", &t, &s, junk, &warm);
  retried = warm.st.iterations > alone.st.iterations;
  assert_true(retried);
  if (cold.st.converged) assert_true(warm.st.converged);
  print_message("ncp-pgs from junk: warm run %d sweeps, cold %d, with the retry %d\n",
                alone.st.iterations, cold.st.iterations, warm.st.iterations);
}

/* the ill-conditioned stack: a 1e3 kg box on a 1e-3 kg box (mass ratio 1e6). Per-contact
 * solvers, limited to 300 sweeps here to keep the test fast, end not converged with ε_abs above
 * the tolerance; the whole-G solvers converge (default settings) to Σλ_N = (m1 + m2) g on the
 * ground and m2 g between the boxes (tolerance: 1e-6 m/s on c_N bounds the heavy box's force to
 * m2/Δt · 1e-6 = 1 N; 2 N allowed) */
static void test_stack(void **state) {
  tproblem t;
  double m1 = 1e-3, m2 = 1e3;
  tp_stack(&t, m1, m2, 0.7);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *info = mr_solver_at(i);
    const expectation *e = expect_for(info->name);
    if (!e || e->stack == STACK_SKIP) continue;
    mr_solver_settings s = mr_solver_settings_default();
    if (e->stack == STACK_FAILS) s.max_iter = 300;
    result r;
    solve_with(info->name, &t, &s, NULL, &r);
    print_result("stack-1e6", info->name, &r);
    assert_int_equal(r.status, MR_OK);
    if (e->stack == STACK_FAILS) {
      assert_false(r.st.converged);
      assert_true(r.st.eps_abs > s.eps_abs);
      continue;
    }
    assert_true(r.st.converged);
    if (e->stack == STACK_OWN_MODEL) {
      stack_compliant_forces(&t, &s, &r);
      continue;
    }
    double low = 0.0, up = 0.0;
    for (int c = 0; c < 4; ++c)
      low += r.lambda[3 * c + 2], up += r.lambda[12 + 3 * c + 2];
    assert_near(low, (m1 + m2) * GRAV, 2.0);
    assert_near(up, m2 * GRAV, 2.0);
  }
}

/* soft: λ_N = max(−kΦ − d g_N, 0), λ_T = −μ λ_N g_T / max(‖g_T‖, v_reg), in closed form */
static void test_soft(void **state) {
  tproblem t;
  double g[3] = {0.3, -0.4, -0.01};
  tp_single(&t, I3, g, 0.5);
  t.phi[0] = -2e-3, t.p.phi = t.phi;
  result r;
  mr_solver_settings s = mr_solver_settings_default();
  /* with the contact velocity given (an assembled problem): the law on that velocity */
  double vel[3] = {0.3, -0.4, -0.01};
  t.p.vel = vel;
  solve("soft", &t, &r);
  double ln = -s.soft_k * -2e-3 - s.soft_d * -0.01; /* 200 N spring + 1 N damping */
  assert_near(r.lambda[2], ln, 1e-9);
  assert_near(r.lambda[0], -0.5 * ln * 0.3 / 0.5, 1e-9);
  assert_near(r.lambda[1], -0.5 * ln * -0.4 / 0.5, 1e-9);
  /* without it, g is in force units: the velocity is Δt g (no gap correction in penetration) */
  t.p.vel = NULL;
  t.p.dt = 1e-3;
  solve("soft", &t, &r);
  ln = -s.soft_k * -2e-3 - s.soft_d * (1e-3 * -0.01);
  assert_near(r.lambda[2], ln, 1e-9);
  /* ‖v_T‖ = 5e-4 m/s is below v_reg: the viscous branch, λ_T = −μ λ_N v_T / v_reg */
  assert_near(r.lambda[0], -0.5 * ln * (1e-3 * 0.3) / s.soft_vreg, 1e-9);
  /* separating fast: no force */
  t.g[2] = 1e4;
  solve("soft", &t, &r);
  assert_near(r.lambda[2], 0.0, 0.0);
}

/* errors: unknown solver, negative μ, a work arena too small */
static void test_errors(void **state) {
  tproblem t;
  double g[3] = {1, 0, -1}, lambda[3], c[3];
  mr_solver_settings s = mr_solver_settings_default();
  mr_solver_stats st;
  mr_error err;
  mr_arena work;
  tp_single(&t, I3, g, 0.5);
  assert_int_equal(mr_arena_init(&work, 0), 0);
  assert_int_equal(mr_solve("ncp-pgz", &t.p, &s, NULL, &work, lambda, c, &st, &err),
                   MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "ncp-pgz"));
  assert_int_equal(mr_solve("ncp-pgs", &t.p, &s, NULL, &work, lambda, c, &st, &err), MR_ERR_NOMEM);
  mr_arena_destroy(&work);
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(1, 0)), 0);
  t.mu[0] = -1.0;
  for (int i = 0; i < mr_solver_count(); ++i) {
    mr_status status = mr_solve(mr_solver_at(i)->name, &t.p, &s, NULL, &work, lambda, c, &st, &err);
    assert_int_equal(status, MR_ERR_INVALID);
  }
  mr_arena_destroy(&work);
}

/* the registry: unique names, a model and description each, defaults as documented */
static void test_registry(void **state) {
  assert_true(mr_solver_count() >= 6);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const mr_solver_info *a = mr_solver_at(i);
    assert_ptr_equal(mr_solver_find(a->name), a);
    assert_true(strlen(a->description) > 10);
    assert_non_null(a->model);
  }
  assert_null(mr_solver_find("nope"));
  assert_null(mr_solver_at(mr_solver_count()));
  mr_solver_settings s = mr_solver_settings_default();
  assert_int_equal(s.max_iter, 10000);
  assert_near(s.eps_abs, 1e-6, 0.0);
}

/* ---- problem files ---- */

static mr_status parse(const char *text, mr_problem_file *f, mr_error *err) {
  return mr_problem_file_parse(text, "p.json", f, err);
}

/* save then load gives back the same numbers (17 significant digits round-trip) */
static void test_io_roundtrip(void **state) {
  tproblem t;
  tp_box(&t, 1.0, 0.7);
  for (int k = 0; k < 12; ++k)
    t.R[k] = 1e-7 * (k + 1);
  t.p.R = t.R;
  double l0[12];
  for (int k = 0; k < 12; ++k)
    l0[k] = 0.1 * k - 0.3;
  char path[] = "/tmp/moreau_problem_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  mr_error err;
  assert_int_equal(mr_problem_file_save(path, &t.p, l0, &err), MR_OK);
  mr_problem_file f;
  assert_int_equal(mr_problem_file_load(path, &f, &err), MR_OK);
  remove(path);
  assert_int_equal(f.nc, 4);
  assert_vec_near(f.G, t.G, 144, 0.0);
  assert_vec_near(f.g, t.g, 12, 0.0);
  assert_vec_near(f.R, t.R, 12, 0.0);
  assert_vec_near(f.lambda0, l0, 12, 0.0);
  assert_vec_near(f.mu, t.mu, 4, 0.0);
  assert_ptr_equal(f.problem.G, f.G);
  mr_problem_file_free(&f);
}

/* a malformed problem gives MR_ERR_INVALID (or PARSE) and a message with the place and value */
static void expect_error(const char *text, mr_status status, const char *needle) {
  mr_problem_file f;
  mr_error err;
  mr_status st = parse(text, &f, &err);
  if (st != status || !strstr(err.msg, needle))
    fail_msg("for %s: status %d, message '%s' (wanted %d with '%s')", text, st, err.msg, status,
             needle);
  assert_null(f.G);
}

static void test_io_errors(void **state) {
  const char *g1 = "\"G\": [[1,0,0],[0,1,0],[0,0,1]], \"g\": [0,0,-1]";
  char buf[512];
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s, \"mu\": [0.5]}", g1);
  mr_problem_file f;
  mr_error err;
  assert_int_equal(parse(buf, &f, &err), MR_OK);
  mr_problem_file_free(&f);
  /* missing key, sizes, square, symmetry, μ, R, nc */
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s}", g1);
  expect_error(buf, MR_ERR_INVALID, "missing key 'mu'");
  expect_error("{\"nc\": 1, \"G\": [[1,0,0],[0,1,0]], \"g\": [0,0,-1], \"mu\": [0.5]}",
               MR_ERR_INVALID, "2 rows, expected 3");
  expect_error("{\"nc\": 1, \"G\": [[1,0,0],[0,1],[0,0,1]], \"g\": [0,0,-1], \"mu\": [0.5]}",
               MR_ERR_INVALID, "p.json:1:");
  expect_error("{\"nc\": 1, \"G\": [[1,0,0],[0,1,0],[0.5,0,1]], \"g\": [0,0,-1], \"mu\": [0.5]}",
               MR_ERR_INVALID, "G[2][0] = 0.5");
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s, \"mu\": [-0.5]}", g1);
  expect_error(buf, MR_ERR_INVALID, "'mu'[0] = -0.5 is negative");
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s, \"mu\": [1e999]}", g1);
  expect_error(buf, MR_ERR_PARSE, "out of range");
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s, \"mu\": [0.5], \"R\": [0, -1, 0]}", g1);
  expect_error(buf, MR_ERR_INVALID, "'R'[1] = -1 is negative");
  snprintf(buf, sizeof buf, "{\"nc\": -1, %s, \"mu\": [0.5]}", g1);
  expect_error(buf, MR_ERR_INVALID, "'nc' = -1");
  snprintf(buf, sizeof buf, "{\"nc\": 1e9, %s, \"mu\": [0.5]}", g1);
  expect_error(buf, MR_ERR_INVALID, "'nc' = 1e+09");
  snprintf(buf, sizeof buf, "{\"nc\": 1, %s, \"mu\": [0.5, 0.1]}", g1);
  expect_error(buf, MR_ERR_INVALID, "'mu' has 2 entries, expected 1");
  expect_error("{\"nc\": 1, \"G\": [[1,0,0],", MR_ERR_PARSE, "p.json:1:");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_registry),
      cmocka_unit_test(test_stick),
      cmocka_unit_test(test_compliance),
      cmocka_unit_test(test_takeoff),
      cmocka_unit_test(test_slide),
      cmocka_unit_test(test_slide_pyramid_bias),
      cmocka_unit_test(test_ccp_distance),
      cmocka_unit_test(test_raisim_mdp),
      cmocka_unit_test(test_box),
      cmocka_unit_test(test_relaxation),
      cmocka_unit_test(test_warm_start),
      cmocka_unit_test(test_warm_start_off),
      cmocka_unit_test(test_warm_never_worse),
      cmocka_unit_test(test_stack),
      cmocka_unit_test(test_ncp_pgs_sweep),
      cmocka_unit_test(test_ccp_pgs_sweep),
      cmocka_unit_test(test_ncp_pgs_options),
      cmocka_unit_test(test_soft),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_io_roundtrip),
      cmocka_unit_test(test_io_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
