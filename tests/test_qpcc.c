/* The QPCC solver (src/contact/qpcc.c): the supplementary document's jumping particle, a block
 * pushed into sliding, infeasible / budget / non-convex outcomes, and the `moreau qpcc` command. */
#include "test_util.h"

#include "cli_util.h"

#include <float.h>
#include <string.h>
#include <unistd.h>

#include "moreau/qpcc.h"
#include "moreau/scene.h"

enum { NX = 3 + 1 + 2 + 4, TRACE = 8 };

/* iterates seen by the solve callback */
typedef struct {
  int count;
  int feasible[TRACE];
  double fval[TRACE];
  double x[TRACE][NX];
} trace;

static void record(void *user, int index, const unsigned char *mode, int npairs, int feasible,
                   double fval, const double *x, int n) {
  trace *t = user;
  t->count++;
  if (index >= TRACE || n > NX) return;
  t->feasible[index] = feasible, t->fval[index] = fval;
  memcpy(t->x[index], x, sizeof(double) * (size_t)n);
}

/* A particle of mass m on the ground (y up), 3D, one contact with a 4-direction pyramid
 * (±x, ±z) and a jumping force f N, 0 ≤ f ≤ f_ub: m ṗ = Δt (m g + N f⊥ + D f∥ + N f). */
typedef struct {
  double m, g, dt, fub, mu;
  double M[9], f[3], A[3], ulb[1], uub[1], N[3], D[12], muv[1], H[16], c[4];
  int nd[1];
  mr_qpcc_problem p;
} particle;

static void particle_init(particle *q, double m, double fub) {
  memset(q, 0, sizeof *q);
  q->m = m, q->g = 9.81, q->dt = 0.01, q->fub = fub, q->mu = 0.5;
  q->M[0] = q->M[4] = q->M[8] = m;
  q->f[1] = -q->dt * m * q->g; // Δt m g, particle at rest
  q->A[1] = 1, q->ulb[0] = 0, q->uub[0] = fub;
  q->N[1] = 1, q->nd[0] = 4, q->muv[0] = q->mu;
  double D[12] = {1, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, -1};
  memcpy(q->D, D, sizeof D);
  mr_qpcc_problem p = {3,     1,    1,      q->dt, q->M, q->f, q->A, q->ulb, q->uub, q->N,
                       q->nd, q->D, q->muv, NULL,  q->c, 0,    0,    NULL,   NULL};
  q->p = p;
}

/* the offsets of x = (ṗ 0..2, f 3, f⊥ 4, f∥ 5..8, λ 9) */
enum { PX = 0, PY = 1, PZ = 2, FU = 3, FN = 4, FT = 5, LAM = 9 };

/* the rounding bound of a mode's QP solution: each QP's optimum solves its active rows, a
 * backward-stable solve gets it to κ ε |x| (Higham §7.1); in the dynamics rows M ṗ − Δt (…) = f
 * velocities enter with m and forces with Δt, so the active matrices have κ ≈ m / Δt unless an
 * objective weight is smaller (then that weight's inverse) */
static double vertex_tol(double kappa, double scale) {
  return kappa * DBL_EPSILON * scale;
}

static mr_status run(const mr_qpcc_problem *p, int max_qp, trace *t, double *x,
                     mr_qpcc_contact_mode *mode, int *dir, mr_qpcc_result *res) {
  mr_error err;
  mr_qpcc_workspace *ws = NULL;
  mr_status st = mr_qpcc_workspace_create(p, 100, &ws, &err);
  if (st != MR_OK) print_message("%s\n", err.msg);
  if (st != MR_OK) return st;
  mr_qpcc_settings s = mr_qpcc_settings_default();
  s.max_qp = max_qp, s.on_qp = record, s.user = t;
  res->x = x, res->mode = mode, res->slide_dir = dir;
  st = mr_qpcc_solve(p, &s, ws, res, &err);
  if (st != MR_OK) print_message("%s\n", err.msg);
  mr_qpcc_workspace_destroy(ws);
  return st;
}

/* The paper's test: the static QP gives f = |m g|, ṗ = 0, f⊥ = 0; one pivot (contact breaks)
 * gives the optimum f = f_ub, ṗ = Δt/m (m g + N f_ub); exactly two QP solves. The objective is
 * −f, which has the same minimisers as the paper's −f² on every mode (f ≥ 0 there, and s ↦ −s²
 * is decreasing on s ≥ 0) but is convex, as each mode's QP must be. The iterates are vertices of
 * small LPs: κ = m / Δt = 200, values ≤ f_ub = 50 (vertex_tol). */
static void test_jumping_particle(void **state) {
  particle q;
  particle_init(&q, 2.0, 50.0);
  q.c[3] = -1; // G = −f
  trace t = {0};
  double x[NX];
  mr_qpcc_contact_mode mode[1];
  int dir[1];
  mr_qpcc_result res;
  assert_int_equal(run(&q.p, 100, &t, x, mode, dir, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
  assert_int_equal(res.qp_solved, 2);
  assert_int_equal(t.count, 2);
  assert_int_equal(res.pivots, 1);
  const double tol = vertex_tol(q.m / q.dt, q.fub);
  // first QP: static contact
  assert_true(t.feasible[0]);
  for (int i = 0; i < 3; ++i)
    assert_near(t.x[0][PX + i], 0.0, tol);
  assert_near(t.x[0][FU], q.m * q.g, tol);
  assert_near(t.x[0][FN], 0.0, tol);
  for (int k = 0; k < 4; ++k)
    assert_near(t.x[0][FT + k], 0.0, tol);
  assert_near(t.x[0][LAM], 0.0, tol);
  // second QP: the contact broken, the optimum
  double vy = q.dt / q.m * (q.fub - q.m * q.g);
  assert_true(t.feasible[1]);
  assert_near(t.x[1][FU], q.fub, tol);
  assert_near(t.x[1][PY], vy, tol);
  assert_near(t.x[1][PX], 0.0, tol);
  assert_near(t.x[1][FN], 0.0, tol);
  assert_near(res.fval, -q.fub, tol);
  assert_int_equal(res.best_qp, 1);
  assert_near(x[FU], q.fub, tol);
  assert_int_equal(mode[0], MR_QPCC_SEPARATING);
}

/* The strictly convex variant G = (f − f_ub)² = f² − 2 f_ub f + f_ub² reproduces the same two
 * iterates (closest f to f_ub in each mode); the literal −f² is refused as non-convex with the
 * eigenvalue −2 of its Hessian named, and no QP solved. */
static void test_jumping_objectives(void **state) {
  particle q;
  particle_init(&q, 2.0, 50.0);
  q.H[15] = 2, q.c[3] = -2 * q.fub, q.p.H = q.H, q.p.c0 = q.fub * q.fub;
  trace t = {0};
  double x[NX];
  mr_qpcc_result res;
  assert_int_equal(run(&q.p, 100, &t, x, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
  assert_int_equal(res.qp_solved, 2);
  /* H = 2 on f is of the order of M: κ ≈ m / Δt as before; the value f² − 2 f_ub f + f_ub²
   * cancels terms of f_ub² = 2500, each rounded: 4 ulp of 2500 */
  assert_near(t.x[0][FU], q.m * q.g, vertex_tol(q.m / q.dt, q.fub));
  assert_near(t.x[1][FU], q.fub, vertex_tol(q.m / q.dt, q.fub));
  assert_near(res.fval, 0.0, 4 * DBL_EPSILON * q.fub * q.fub);
  // −f²
  q.H[15] = -2, q.c[3] = 0, q.p.c0 = 0;
  trace t2 = {0};
  assert_int_equal(run(&q.p, 100, &t2, x, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_NONCONVEX);
  assert_int_equal(res.qp_solved, 0);
  assert_near(res.min_eig, -2.0,
              4 * DBL_EPSILON * 2.0); /* a diagonal Hessian: rotations are exact */
  assert_non_null(strstr(res.message, "not convex"));
}

/* A block of mass m on the ground pushed along +x by 0 ≤ u ≤ u_max must reach v* with
 * G = ½ (ṗ_x − v*)² + ½ ε (u − u_max)². Static: ṗ = 0, the push saturates friction
 * (u = μ m g, f∥₋ₓ = μ f⊥): the pivot to sliding along −x friction gives the closed form
 *   u = (a² μ m g + a v* + ε u_max) / (a² + ε),  a = Δt/m,  ṗ_x = a (u − μ m g),
 * f⊥ = m g, f∥₋ₓ = μ m g (on the pyramid boundary), λ = ṗ_x (sliding speed). */
static void test_block_sliding(void **state) {
  particle q;
  particle_init(&q, 1.0, 20.0);
  double vstar = 0.05, eps = 1e-5, umax = 20.0;
  q.A[0] = 1, q.A[1] = 0; // horizontal push
  q.uub[0] = umax;
  q.H[0] = 1, q.H[15] = eps, q.c[0] = -vstar, q.c[3] = -eps * umax;
  q.p.H = q.H, q.p.c0 = 0.5 * vstar * vstar + 0.5 * eps * umax * umax;
  trace t = {0};
  double x[NX];
  mr_qpcc_contact_mode mode[1];
  int dir[1];
  mr_qpcc_result res;
  assert_int_equal(run(&q.p, 100, &t, x, mode, dir, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
  double mg = q.m * q.g, a = q.dt / q.m;
  // static iterate: friction at the boundary (κ as the optimum's below)
  assert_near(t.x[0][FU], q.mu * mg, vertex_tol(1 / (a * a + eps), umax));
  assert_near(t.x[0][FT + 1], q.mu * mg, vertex_tol(1 / (a * a + eps), umax));
  assert_near(t.x[0][PX], 0.0, vertex_tol(1 / (a * a + eps), umax));
  // the optimum, sliding with friction along direction 1 (−x)
  double u = (a * a * q.mu * mg + a * vstar + eps * umax) / (a * a + eps);
  double vx = a * (u - q.mu * mg);
  assert_int_equal(mode[0], MR_QPCC_SLIDING);
  assert_int_equal(dir[0], 1);
  /* the sliding mode's QP in u has curvature a² + ε = 1.1e-4 against M's 1: κ ≈ 1 / (a² + ε),
   * values ≤ u_max = 20; G's gradient there is a (ṽ − v*) + ε (u − u_max), below 1e-4, so its
   * error is that times the tolerance */
  const double tol = vertex_tol(1 / (a * a + eps), umax);
  assert_near(x[FU], u, tol);
  assert_near(x[PX], vx, tol);
  assert_near(x[PY], 0.0, tol);
  assert_near(x[FN], mg, tol);
  assert_near(x[FT + 1], q.mu * x[FN], tol);
  assert_near(x[FT + 0] + x[FT + 2] + x[FT + 3], 0.0, tol);
  assert_near(x[LAM], vx, tol);
  double G = 0.5 * (vx - vstar) * (vx - vstar) + 0.5 * eps * (u - umax) * (u - umax);
  assert_near(res.fval, G, 1e-4 * tol + 4 * DBL_EPSILON * G);
  assert_true(vx > 0.0);
  assert_int_equal(res.qp_solved, 2);
}

/* largest violation of eq. 2-3 at x: dynamics residual, signs and products of every
 * complementarity pair, control bounds; computed from the problem data directly */
static double qpcc_violation(const mr_qpcc_problem *p, const double *x) {
  int nv = p->nv, nu = p->nu, nc = p->nc, t0 = 0, ntd = 0;
  for (int i = 0; i < nc; ++i)
    ntd += p->nd[i];
  const double *pd = x, *u = x + nv, *fn = u + nu, *ft = fn + nc, *lam = ft + ntd;
  double e = 0;
  for (int r = 0; r < nv; ++r) {
    double res = -p->f[r];
    for (int j = 0; j < nv; ++j)
      res += p->M[r * nv + j] * pd[j];
    for (int j = 0; j < nu; ++j)
      res -= p->dt * p->A[r * nu + j] * u[j];
    for (int i = 0; i < nc; ++i)
      res -= p->dt * p->N[i * nv + r] * fn[i];
    for (int t = 0; t < ntd; ++t)
      res -= p->dt * p->D[t * nv + r] * ft[t];
    e = fmax(e, fabs(res));
  }
  for (int j = 0; j < nu; ++j)
    e = fmax(e, fmax(p->u_lb[j] - u[j], u[j] - p->u_ub[j]));
  for (int i = 0; i < nc; t0 += p->nd[i++]) {
    double vn = 0, cone = p->mu[i] * fn[i];
    for (int j = 0; j < nv; ++j)
      vn += p->N[i * nv + j] * pd[j];
    e = fmax(e, fmax(fmax(-fn[i], -vn), fabs(fn[i] * vn)));
    for (int t = t0; t < t0 + p->nd[i]; ++t) {
      double vt = lam[i];
      for (int j = 0; j < nv; ++j)
        vt += p->D[t * nv + j] * pd[j];
      e = fmax(e, fmax(fmax(-ft[t], -vt), fabs(ft[t] * vt)));
      cone -= ft[t];
    }
    e = fmax(e, fmax(fmax(-lam[i], -cone), fabs(lam[i] * cone)));
  }
  return e;
}

/* the global minimum of the QPCC by enumerating all 2^npairs modes (tiny problems only) */
static double enumerate_modes(const mr_qpcc_problem *p, int npairs) {
  mr_error err;
  mr_qpcc_workspace *ws = NULL;
  double best = INFINITY, x[64], fval;
  unsigned char mode[16];
  int outcome;
  if (mr_qpcc_workspace_create(p, 1, &ws, &err) != MR_OK) return NAN;
  for (long code = 0; code < (1L << npairs); ++code) {
    for (int k = 0; k < npairs; ++k)
      mode[k] = (code >> k) & 1;
    if (mr_qpcc_solve_mode(p, ws, mode, x, &fval, &outcome, &err) != MR_OK) continue;
    if (outcome == 0 && fval < best) best = fval;
  }
  mr_qpcc_workspace_destroy(ws);
  return best;
}

/* The search's answers satisfy eq. 2-3 and, for the jumping
 * particle and the sliding block, equal the global minimum over all 64 modes found by
 * enumeration (an independent check that the best-first search did not stop early). For a planar
 * box on two contacts (256 modes) the search is a local method: its value is ≥ the global one,
 * and here strictly above it. The violation's largest terms are the signs of forces set to 0 by
 * the mode (−f∥ = 2.5e-13 on the jumping particle): within vertex_tol of each problem (its
 * products f v are smaller: velocities carry Δt/m of the forces' error); the two searches solve
 * the same mode's QP, their values agree to the objective's gradient (≤ 1) times that. */
static void test_against_enumeration(void **state) {
  particle q;
  double x[NX];
  mr_qpcc_result res;
  trace t = {0};
  particle_init(&q, 2.0, 50.0);
  q.c[3] = -1;
  assert_int_equal(run(&q.p, 100, &t, x, NULL, NULL, &res), MR_OK);
  assert_near(qpcc_violation(&q.p, x), 0.0, vertex_tol(q.m / q.dt, q.fub));
  assert_near(res.fval, enumerate_modes(&q.p, 6), vertex_tol(q.m / q.dt, q.fub));
  particle_init(&q, 1.0, 20.0);
  q.A[0] = 1, q.A[1] = 0, q.H[0] = 1, q.H[15] = 1e-5, q.c[0] = -0.05, q.c[3] = -2e-4;
  q.p.H = q.H;
  assert_int_equal(run(&q.p, 100, &t, x, NULL, NULL, &res), MR_OK);
  const double kb = 1 / (1e-4 + 1e-5); /* a² + ε as test_block_sliding */
  assert_near(qpcc_violation(&q.p, x), 0.0, vertex_tol(kb, q.fub));
  assert_near(res.fval, enumerate_modes(&q.p, 6), vertex_tol(kb, q.fub));
  // planar box (x, y, θ) on two corners, pushed and lifted
  double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0.2}, f[3] = {0, -0.0981, 0};
  double A[6] = {1, 0, 0, 1, 0, 0}, lb[2] = {-5, 0}, ub[2] = {5, 30};
  double N[6] = {0, 1, 0.5, 0, 1, -0.5}, D[12] = {1, 0, 0.1, -1, 0, -0.1, 1, 0, 0.1, -1, 0, -0.1};
  double mu[2] = {0.8, 0.3}, H[25] = {0}, c[5] = {-0.03, -0.02, 0.5, 0, 0}, xb[16];
  int nd[2] = {2, 2};
  for (int i = 0; i < 5; ++i)
    H[i * 6] = i < 3 ? 1 : 1e-6;
  mr_qpcc_problem p = {3, 2, 2, 0.01, M, f, A, lb, ub, N, nd, D, mu, H, c, 0, 0, NULL, NULL};
  assert_int_equal(run(&p, 100, &t, xb, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
  /* control weights 1e-6 against (Δt/m)² = 1e-4: κ ≈ 1 / (1e-4 + 1e-6), controls ≤ 30 */
  const double tolb = vertex_tol(1 / (1e-4 + 1e-6), 30.0);
  assert_near(qpcc_violation(&p, xb), 0.0, tolb);
  double global = enumerate_modes(&p, 8);
  assert_true(res.fval >= global - tolb);
  // locality, as documented: the static QP has both normal forces > 0 and friction inside the
  // cone, so no pivot applies and the search ends at 0 after one QP, while the global optimum
  // (found by enumeration) lifts off. In that mode no contact force acts: θ̇ = 0 and each axis
  // is a scalar QP, ṗ = v₀ + a u (a = Δt/m = 0.01, v₀ = 0 along x and −0.0981 along y) with
  // G = ½ ṗ² − t ṗ + ½ w u² (t = 0.03, 0.02; w = 1e-6): u = a (t − v₀) / (a² + w), within the
  // bounds, and ṗ_y > 0 so both corners separate: G = −5.765e-4 in closed form
  assert_int_equal(res.qp_solved, 1);
  assert_near(res.fval, 0.0, 0.5 * tolb); /* |c| ≤ 0.5 times the static iterate's error */
  const double a = 0.01, w = 1e-6, v0[2] = {0.0, -0.0981}, tg[2] = {0.03, 0.02};
  double lift = 0.0;
  for (int k = 0; k < 2; ++k) {
    double u = a * (tg[k] - v0[k]) / (a * a + w), v = v0[k] + a * u;
    assert_true(u >= lb[k] && u <= ub[k]);
    lift += 0.5 * v * v - tg[k] * v + 0.5 * w * u * u;
  }
  assert_near(global, lift, 0.5 * tolb); /* as res.fval above: |c| times the iterate's error */
}

/* No control, a block of mass 1 pushed along +x by F = 8 N > μ m g = 4.905 N: static contact is
 * infeasible, so the start comes from the mixed LCP of eq. 2-3 (Lemke), whose solution is
 * sliding; that mode's QP is the answer: ṗ_x = Δt (F − μ m g)/m, f⊥ = m g, f∥₋ₓ = μ m g,
 * λ = ṗ_x; two QP solves (the infeasible static one, then the mixed-LCP mode). The mode's QP
 * has κ = m / Δt = 100 and values ≤ m g (vertex_tol). */
static void test_mlcp_start(void **state) {
  double m = 1, g = 9.81, dt = 0.01, F = 8, mu = 0.5;
  double M[9] = {m, 0, 0, 0, m, 0, 0, 0, m}, f[3] = {dt * F, -dt * m * g, 0};
  double N[3] = {0, 1, 0}, D[12] = {1, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, -1}, muv[1] = {mu};
  double H[9] = {1, 0, 0, 0, 0, 0, 0, 0, 0}, x[16];
  int nd[1] = {4}, dir[1];
  mr_qpcc_contact_mode mode[1];
  mr_qpcc_problem p = {3,  0, 1,   dt, M,    f, NULL, NULL, NULL, N,
                       nd, D, muv, H,  NULL, 0, 0,    NULL, NULL};
  trace t = {0};
  mr_qpcc_result res;
  assert_int_equal(run(&p, 100, &t, x, mode, dir, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
  assert_int_equal(res.mlcp_start, 1);
  assert_int_equal(res.qp_solved, 2);
  assert_int_equal(res.qp_infeasible, 1);
  assert_false(t.feasible[0]);
  double vx = dt * (F - mu * m * g) / m;
  assert_int_equal(mode[0], MR_QPCC_SLIDING);
  assert_int_equal(dir[0], 1);
  const double tol = vertex_tol(m / dt, m * g);
  assert_near(x[0], vx, tol);
  assert_near(x[1], 0.0, tol);
  assert_near(x[3], m * g, tol);      // f⊥ (nu = 0: x = ṗ, f⊥, f∥, λ)
  assert_near(x[5], mu * m * g, tol); // f∥ along −x
  assert_near(x[8], vx, tol);         // λ
  assert_near(qpcc_violation(&p, x), 0.0, tol);
}

/* Task row ṗ_y ≥ v_min beyond what f_ub can give: the static QP (ṗ_y = 0) and the separating
 * QP (ṗ_y ≤ Δt (f_ub − m g)/m = 0.0519) are both infeasible (the mixed LCP with u = 0 gives
 * the static mode again, not re-solved): MR_QPCC_INFEASIBLE after 2 QPs.
 * With one QP allowed the jumping particle stops at the static iterate: MR_QPCC_BUDGET. */
static void test_infeasible_and_budget(void **state) {
  particle q;
  particle_init(&q, 2.0, 30.0);
  q.c[3] = -1;
  double C[4] = {0, 1, 0, 0}, d[1] = {0.1}, x[NX];
  q.p.m_task = 1, q.p.C = C, q.p.d = d;
  trace t = {0};
  mr_qpcc_result res;
  assert_int_equal(run(&q.p, 100, &t, x, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_INFEASIBLE);
  assert_int_equal(res.qp_solved, 2);
  assert_int_equal(res.qp_infeasible, 2);
  assert_non_null(strstr(res.message, "infeasible"));
  // the budget
  q.p.m_task = 0;
  trace t2 = {0};
  assert_int_equal(run(&q.p, 1, &t2, x, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_BUDGET);
  assert_int_equal(res.qp_solved, 1);
  assert_near(x[FU], q.m * q.g, vertex_tol(q.m / q.dt, q.fub));
  assert_non_null(strstr(res.message, "budget"));
}

/* A 1-D particle pressed onto a wall at x = 0 (normal +x) by an unbounded control u, with
 * G = −u: the static QP has f⊥ = m g + u growing without bound, so the search stops with
 * MR_QPCC_UNBOUNDED after that one QP. */
static void test_unbounded(void **state) {
  double M[1] = {1}, f[1] = {-0.0981}, A[1] = {-1}, lb[1] = {-HUGE_VAL}, ub[1] = {HUGE_VAL};
  double N[1] = {1}, D[1] = {0}, mu[1] = {0}, c[2] = {0, -1}, x[8];
  int nd[1] = {1};
  mr_qpcc_problem p = {1, 1, 1, 0.01, M, f, A, lb, ub, N, nd, D, mu, NULL, c, 0, 0, NULL, NULL};
  trace t = {0};
  mr_qpcc_result res;
  assert_int_equal(run(&p, 100, &t, x, NULL, NULL, &res), MR_OK);
  assert_int_equal(res.outcome, MR_QPCC_UNBOUNDED);
  assert_int_equal(res.qp_solved, 1);
  assert_non_null(strstr(res.message, "unbounded"));
}

/* ---------------------------------------------------------------- the command */

static const char *jump_json =
    "{\n"
    "  \"dt\": 0.01,\n"
    "  \"M\": [[2, 0, 0], [0, 2, 0], [0, 0, 2]],\n"
    "  \"f\": [0, -0.1962, 0],\n"
    "  \"A\": [[0], [1], [0]],\n"
    "  \"u_lower\": [0], \"u_upper\": [50],\n"
    "  \"contacts\": [{\"normal\": [0, 1, 0], \"mu\": 0.5,\n"
    "    \"tangents\": [[1, 0, 0], [-1, 0, 0], [0, 0, 1], [0, 0, -1]]}],\n"
    "  \"objective\": {\"c\": [0, 0, 0, -1]}\n"
    "}\n";

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

/* run "moreau qpcc ARGS" with stderr merged into out; the exit code */
static int run_cli(const char *args, char *out, size_t cap) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "qpcc %s", args);
  return cli_run(cmd, 1, out, cap);
}

static void test_cli(void **state) {
  char path[64], bad[64], args[256], out[8192];
  snprintf(path, sizeof path, "/tmp/moreau_qpcc_%d.json", (int)getpid());
  snprintf(bad, sizeof bad, "/tmp/moreau_qpcc_bad_%d.json", (int)getpid());
  assert_int_equal(write_file(path, jump_json), 0);
  snprintf(args, sizeof args, "%s --json", path);
  assert_int_equal(run_cli(args, out, sizeof out), 0);
  assert_non_null(strstr(out, "\"status\": \"optimum\""));
  assert_non_null(strstr(out, "\"qp_solved\": 2"));
  const char *u = strstr(out, "\"u\": [");
  assert_non_null(u);
  /* f = f_ub: the jumping particle's vertex (κ = 200, values ≤ 50), printed round-trip */
  assert_near(strtod(u + 6, NULL), 50.0, vertex_tol(2.0 / 0.01, 50.0));
  assert_non_null(strstr(out, "\"separating\""));
  // a budget of one QP: exit 1
  snprintf(args, sizeof args, "%s --json --max-qp 1", path);
  assert_int_equal(run_cli(args, out, sizeof out), 1);
  assert_non_null(strstr(out, "\"status\": \"budget\""));
  // bad input: a missing key and a syntax error, with file:line:col; a missing file
  assert_int_equal(write_file(bad, "{\n  \"dt\": 0.01,\n  \"M\": [[1]]\n}\n"), 0);
  assert_int_equal(run_cli(bad, out, sizeof out), 2);
  assert_non_null(strstr(out, ":1:1: missing key 'f'"));
  assert_int_equal(write_file(bad, "{\n  \"dt\": 0.01,\n  \"M\": [[1] [2]]\n}\n"), 0);
  assert_int_equal(run_cli(bad, out, sizeof out), 2);
  assert_non_null(strstr(out, ":3:"));
  assert_int_equal(run_cli("/nonexistent/problem.json", out, sizeof out), 2);
  assert_int_equal(run_cli("", out, sizeof out), 2);
  remove(path), remove(bad);
}

/* the hopper of scenes/qpcc/hopper.yaml with the given target velocities (NAN: the current 0) */
typedef struct {
  mr_scene sc;
  mr_sim *sim;
  mr_qpcc_scene q;
} hopper;

static void hopper_build(hopper *h, const double target[4]) {
  mr_error err;
  assert_int_equal(mr_scene_load("scenes/qpcc/hopper.yaml", &h->sc, &err), MR_OK);
  h->sim = mr_sim_from_scene(&h->sc, NULL, &err);
  assert_non_null(h->sim);
  double w[4] = {1, 1, 1, 1};
  mr_qpcc_scene_options o = mr_qpcc_scene_options_default();
  o.v_target = target, o.v_weight = w;
  mr_status st = mr_qpcc_from_sim(h->sim, &o, &h->q, &err);
  if (st) print_message("%s\n", err.msg);
  assert_int_equal(st, MR_OK);
}

static void hopper_free(hopper *h) {
  mr_qpcc_scene_free(&h->q);
  mr_sim_free(h->sim);
  mr_scene_free(&h->sc);
}

/* The QPCC of the planar hopper's first step, built from its scene (slides x, z; hip and knee
 * hinges; the foot under the hip, 0.55655 m below it with the sphere): the controls are the two
 * joints with an effort limit (40 N m), the dynamics and the contact rows are those of the
 * model in closed form, and the search's answer equals the best of the 64 contact modes solved
 * one by one, on targets (x, z velocity of the body) whose best mode is static or sliding:
 * standing still, forward 0.5 m/s, backwards 2 m/s, down 1 m/s. */
static void test_hopper_scene(void **state) {
  hopper h;
  double zero[4] = {0, 0, 0, 0};
  hopper_build(&h, zero);
  const mr_qpcc_problem *p = &h.q.problem;
  assert_int_equal(p->nv, 4);
  assert_int_equal(p->nu, 2);
  assert_int_equal(p->nc, 1);
  assert_int_equal(h.q.dofs[0], 2);
  assert_int_equal(h.q.dofs[1], 3);
  assert_near(p->u_ub[0], 40.0, 0.0);
  assert_near(p->u_lb[1], -40.0, 0.0);
  /* M: slide_x moves all 2.7 kg, slide_z the 2.6 kg below it; f̃ = −Δt g(q) at rest, the weight
   * on slide_z; sums of a few products of the URDF's numbers: 1e-14 */
  assert_near(p->M[0], 2.7, 1e-14);
  assert_near(p->M[5], 2.6, 1e-14);
  assert_near(p->f[0], 0.0, 1e-14);
  assert_near(p->f[1], -0.01 * 2.6 * 9.81, 1e-14);
  /* N: the contact point's normal velocity; the foot is under the hip (x = 0), so the hip's
   * rotation moves it along x only, the knee's with lever −(x_p − x_knee) = −0.3 sin 0.5.
   * x_p = 0 to round-off: 1e-12 */
  const double *N = p->N;
  assert_near(N[0], 0.0, 1e-12);
  assert_near(N[1], 1.0, 1e-12);
  assert_near(N[2], 0.0, 1e-12);
  assert_near(N[3], -0.3 * sin(0.5), 1e-12);
  /* the tangent rows span the contact point's x velocity (1, 0, z_p − z_hip, z_p − z_knee),
   * z_p − z_hip = −0.55655 to the point's height, midway in the 5e-5 m penetration: 1e-4 */
  const double xrow[4] = {1, 0, -(0.6 * cos(0.5) + 0.03), -(0.3 * cos(0.5) + 0.03)};
  for (int j = 0; j < 4; ++j) {
    const double *t1 = p->D + 0 * 4, *t2 = p->D + 2 * 4, *m1 = p->D + 1 * 4;
    assert_near(hypot(t1[j], t2[j]), fabs(xrow[j]), 1e-4);
    assert_near(t1[j], -m1[j], 0.0);
  }
  assert_near(p->mu[0], 0.4, 0.0);
  hopper_free(&h);
  /* targets: stand still, forward, backwards, down. Both the search
   * and the enumeration solve the same mode's QP with the same method; with the torque weight
   * 1e-4 against (Δt/m)², κ ≤ 1e4, torques ≤ 40: vertex_tol */
  const double targets[4][4] = {{0, 0, 0, 0}, {0.5, 0, 0, 0}, {-2, 0, 0, 0}, {0, -1, 0, 0}};
  const mr_qpcc_contact_mode want[4] = {MR_QPCC_STATIC, MR_QPCC_SLIDING, MR_QPCC_STATIC,
                                        MR_QPCC_STATIC};
  for (int k = 0; k < 4; ++k) {
    hopper_build(&h, targets[k]);
    double x[16];
    mr_qpcc_contact_mode mode[1];
    int dir[1];
    mr_qpcc_result res;
    trace t = {0};
    assert_int_equal(run(&h.q.problem, 100, &t, x, mode, dir, &res), MR_OK);
    assert_int_equal(res.outcome, MR_QPCC_OPTIMUM);
    assert_int_equal(mode[0], want[k]);
    const double tol = vertex_tol(1e4, 40.0);
    assert_near(qpcc_violation(&h.q.problem, x), 0.0, tol);
    double global = enumerate_modes(&h.q.problem, 6);
    print_message("hopper target (%g, %g): search %.17g, enumeration %.17g\n", targets[k][0],
                  targets[k][1], res.fval, global);
    assert_near(res.fval, global, tol);
    hopper_free(&h);
  }
  /* the command: the same problem from the scene, and errors naming the scene and the value */
  char out[8192];
  assert_int_equal(
      run_cli("--scene scenes/qpcc/hopper.yaml --target slide_x=0.5 --json", out, sizeof out), 0);
  assert_non_null(strstr(out, "\"joints\": [\"hopper/hip\", \"hopper/knee\"]"));
  assert_non_null(strstr(out, "\"mode\": \"sliding\""));
  assert_int_equal(run_cli("--scene scenes/qpcc/hopper.yaml --joints hip,ankle", out, sizeof out),
                   2);
  assert_non_null(strstr(out, "no 1-dof joint 'ankle' in scenes/qpcc/hopper.yaml"));
  assert_int_equal(run_cli("--scene scenes/qpcc/hopper.yaml --target knee=fast", out, sizeof out),
                   2);
  assert_non_null(strstr(out, "the value 'fast' must be a finite number"));
  assert_int_equal(run_cli("--scene /nonexistent.yaml", out, sizeof out), 2);
  assert_non_null(strstr(out, "/nonexistent.yaml"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jumping_particle),    cmocka_unit_test(test_jumping_objectives),
      cmocka_unit_test(test_block_sliding),       cmocka_unit_test(test_infeasible_and_budget),
      cmocka_unit_test(test_against_enumeration), cmocka_unit_test(test_unbounded),
      cmocka_unit_test(test_mlcp_start),          cmocka_unit_test(test_cli),
      cmocka_unit_test(test_hopper_scene),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
