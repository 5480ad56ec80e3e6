/* The locomotion MPC (mpc.h): its cone QP meets the KKT conditions and agrees with the dense
 * active-set QP on polyhedral cones that enclose and are enclosed by the friction cone; Solo-12
 * tracks commanded velocities on flat and bumpy ground with the default solver; a fall is
 * detected and counted; the controller's YAML and API refuse bad values. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "control/qp.h"
#include "control/mpc_qp.h"
#include "moreau/control.h"
#include "moreau/mpc.h"
#include "sim_util.h"

/* ---- the cone QP ---- */

#define QP_FACETS 64 /* sides of the polygons that bracket the friction cone */

/* a random strictly convex instance: H = AᵀA + 0.1 I (A 3nb x 3nb in [-1, 1]), g in [-5, 5],
 * μ in [0.2, 1] */
static void random_qp(uint64_t *seed, int nb, double *H, double *g, double *mu) {
  int n = 3 * nb;
  double A[144];
  for (int k = 0; k < n * n; ++k)
    A[k] = test_rand(seed, -1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    g[i] = test_rand(seed, -5.0, 5.0);
    for (int j = 0; j < n; ++j) {
      double s = i == j ? 0.1 : 0.0;
      for (int k = 0; k < n; ++k)
        s += A[k * n + i] * A[k * n + j];
      H[i * n + j] = s;
    }
  }
  for (int b = 0; b < nb; ++b)
    mu[b] = test_rand(seed, 0.2, 1.0);
}

/* the dense QP with each cone replaced by the polygon cos θⱼ t₁ + sin θⱼ t₂ ≤ r μ n
 * (θⱼ = 2πj/P): r = cos(π/P) is inscribed in the cone, r = 1 encloses it; with fmax (or NULL)
 * the rows n ≤ fmax too; returns ½uᵀHu + gᵀu */
static double polygon_qp(int nb, const double *H, const double *g, const double *mu,
                         const double *fmax, double r, double *u) {
  int n = 3 * nb, rows = QP_FACETS + 1, m = nb * rows;
  static double A[4 * (QP_FACETS + 1) * 12], b[4 * (QP_FACETS + 1)];
  memset(A, 0, sizeof A);
  for (int k = 0; k < nb; ++k) {
    for (int j = 0; j < QP_FACETS; ++j) {
      double th = 2.0 * M_PI * j / QP_FACETS, *row = A + (size_t)(k * rows + j) * n;
      /* r μ n − cos θ t₁ − sin θ t₂ ≥ 0 */
      row[3 * k] = -cos(th), row[3 * k + 1] = -sin(th), row[3 * k + 2] = r * mu[k];
      b[k * rows + j] = 0.0;
    }
    /* −n ≥ −fmax (a huge bound without one) */
    A[(size_t)(k * rows + QP_FACETS) * n + 3 * k + 2] = -1.0;
    b[k * rows + QP_FACETS] = fmax ? -fmax[k] : -1e12;
  }
  mr_qp_workspace ws;
  mr_error err = {0};
  if (mr_qp_workspace_init(&ws, n, 0, m, &err)) fail_msg("%s", err.msg);
  mr_qp_problem p = {.n = n, .m_in = m, .H = H, .c = g, .A_in = A, .b_in = b};
  mr_qp_settings s = mr_qp_settings_default();
  mr_qp_info info;
  if (mr_qp_solve(&p, &s, &ws, u, NULL, NULL, &info, &err)) fail_msg("qp: %s", err.msg);
  assert_int_equal(info.outcome, MR_QP_OPTIMAL);
  mr_qp_workspace_destroy(&ws);
  return info.fval;
}

static double objective(int n, const double *H, const double *g, const double *u) {
  double f = 0.0;
  for (int i = 0; i < n; ++i) {
    f += g[i] * u[i];
    for (int j = 0; j < n; ++j)
      f += 0.5 * u[i] * H[i * n + j] * u[j];
  }
  return f;
}

/* Random instances of 1 to 4 cones. The interior-point solution u meets the KKT conditions
 * (u ∈ K, y = Hu + g ∈ K*, complementarity): the method stops when its residuals are below
 * eps (1 + ‖g‖∞) and its mean complementarity below eps, eps = 1e-9 (in double precision its
 * iterates end near 1e-10: the scalings' condition grows as the complementarity falls); u is its
 * iterate projected on K, which moves it by about the constraints' residual, and y differs from
 * its dual iterate's image in K* by the stationarity residual plus ‖H‖∞ times that move, and
 * complementarity multiplies that by 1 + ‖u‖∞: at most eps (1 + ‖g‖∞)(1 + ‖H‖∞)(1 + ‖u‖∞) (the
 * bound is 50 to 10⁵ times the measured residual). The polygon QPs bracket the
 * optimum f*: f_out ≤ f* ≤ f(u) (K_in ⊂ K ⊂ K_out, u ∈ K), and f(u) − f* ≤ ⟨y, u − u*⟩ with
 * ⟨y, u⟩ ≤ r (1 + ‖y‖∞) per block (complementarity) and −⟨y, u*⟩ ≤ r (1 + ‖y‖∞) ‖u*‖₁ (u* ∈ K,
 * y within r (1 + ‖y‖∞) of K*), r the KKT residual and u* taken as u_in; so f ≤ f_in + that gap,
 * and f_out ≤ f up to the rounding of the two objectives (n² ε times ‖H‖ ‖u‖² + ‖g‖ ‖u‖). By strong
 * convexity (λ_min the least eigenvalue of H) ‖u* − u_in‖² ≤ 2 (f_in − f*) / λ_min and ‖u − u*‖² ≤
 * 2 gap / λ_min, u_in being feasible for the true cone. */
static void test_cone_qp_kkt_and_active_set(void **state) {
  (void)state;
  uint64_t seed = 19;
  int bound_active = 0;
  for (int trial = 0; trial < 80; ++trial) {
    int nb = 1 + trial % 4, n = 3 * nb, bounded = trial >= 40;
    double H[144], Hc[144], g[12], mu[4], u[12] = {0}, y[12], u_in[12], u_out[12], eig[12];
    double cap[4];
    random_qp(&seed, nb, H, g, mu);
    for (int b = 0; b < nb; ++b)
      cap[b] = test_rand(&seed, 0.2, 2.0);
    long nw = mr_cone_qp_work_size(nb);
    double *work = malloc((size_t)nw * sizeof *work);
    mr_cone_qp p = {.nb = nb, .H = H, .g = g, .mu = mu, .fmax = bounded ? cap : NULL};
    mr_cone_qp_settings s = {.max_iter = 100, .eps = 1e-9};
    mr_cone_qp_info info;
    assert_int_equal(mr_cone_qp_solve(&p, &s, work, u, &info), 0);
    free(work);
    assert_true(info.converged);
    double hn = 0.0, un = 0.0, gn = 0.0, yn = 0.0, u1 = 0.0;
    for (int i = 0; i < n; ++i) {
      double row = 0.0;
      for (int j = 0; j < n; ++j)
        row += fabs(H[i * n + j]);
      hn = fmax(hn, row), un = fmax(un, fabs(u[i])), gn = fmax(gn, fabs(g[i]));
    }
    double r = mr_cone_qp_kkt(&p, u, y);
    assert_near(r, 0.0, s.eps * (1 + gn) * (1 + hn) * (1 + un));
    for (int i = 0; i < n; ++i)
      yn = fmax(yn, fabs(y[i]));
    double f = objective(n, H, g, u);
    double f_in = polygon_qp(nb, H, g, mu, p.fmax, cos(M_PI / QP_FACETS), u_in);
    double f_out = polygon_qp(nb, H, g, mu, p.fmax, 1.0, u_out);
    for (int i = 0; i < n; ++i)
      u1 += fabs(u_in[i]);
    for (int b = 0; bounded && b < nb; ++b) {
      assert_true(u[3 * b + 2] <= cap[b] * (1.0 + 1e-12));
      bound_active += u[3 * b + 2] > cap[b] * (1.0 - 1e-9);
    }
    /* a bound's multiplier λ adds λ (fmax − u_n) ≤ r (1 + ‖y‖∞) per block (mpc_qp.h) */
    double gap = r * (1 + yn) * ((bounded ? 2 : 1) * nb + u1),
           fround = n * n * DBL_EPSILON * (hn * un * un + gn * un);
    assert_true(f_out <= f + fround && f <= f_in + gap);
    memcpy(Hc, H, sizeof H);
    mr_sym_eigen(Hc, n, eig, NULL);
    double lmin = eig[0];
    for (int k = 1; k < n; ++k)
      lmin = fmin(lmin, eig[k]);
    double d2 = 0.0;
    for (int k = 0; k < n; ++k)
      d2 += (u[k] - u_in[k]) * (u[k] - u_in[k]);
    assert_true(sqrt(d2) <=
                sqrt(2.0 * (fmax(f_in - f, 0.0) + gap) / lmin) + sqrt(2.0 * gap / lmin));
  }
  /* the bounded instances do press on their bounds */
  assert_true(bound_active >= 10);
}

/* A solve stopped by its iteration cap returns its best iterate (by the merit it reports: the
 * larger of its residuals and its mean complementarity), projected on the sets. The iterations
 * do not depend on the cap, so every cap that reports the same best merit returns the same
 * point, bit for bit, and near the solution (merit ≤ 1e-7) that point meets the KKT conditions to
 * 1e-3 (an iterate at merit m is within about m (1 + ‖g‖∞)(1 + ‖H‖∞)(1 + ‖u‖∞) ≤ 1e-4 of them here:
 * the bound of test_cone_qp_kkt_and_active_set). eps 1e-14 is out of reach, so the late
 * iterations, whose Newton solves are refined, run until the cap. */
static void test_cone_qp_cap_returns_best(void **state) {
  (void)state;
  uint64_t seed = 5;
  for (int trial = 0; trial < 40; ++trial) {
    int nb = 1 + trial % 4, n = 3 * nb;
    double H[144], g[12], mu[4], cap[4], u[12], y[12], first[30][12], merit[30];
    random_qp(&seed, nb, H, g, mu);
    for (int b = 0; b < nb; ++b)
      cap[b] = test_rand(&seed, 0.2, 2.0);
    mr_cone_qp p = {.nb = nb, .H = H, .g = g, .mu = mu, .fmax = trial % 2 ? cap : NULL};
    double *work = malloc((size_t)mr_cone_qp_work_size(nb) * sizeof *work);
    for (int k = 1; k <= 30; ++k) {
      mr_cone_qp_settings s = {.max_iter = k, .eps = 1e-14};
      mr_cone_qp_info info;
      assert_int_equal(mr_cone_qp_solve(&p, &s, work, u, &info), 0);
      merit[k - 1] = fmax(fmax(info.primal, info.dual), info.gap);
      memcpy(first[k - 1], u, sizeof u);
      for (int j = 0; j < k - 1; ++j)
        if (merit[j] == merit[k - 1]) assert_memory_equal(first[j], u, (size_t)n * sizeof *u);
      if (merit[k - 1] <= 1e-7) assert_true(mr_cone_qp_kkt(&p, u, y) <= 1e-3);
    }
    free(work);
  }
}

/* The cut cone's projection p of x (mr_cut_cone_project) lies in K_μ ∩ {n ≤ fmax} and meets
 * the variational inequality (x − p)ᵀ(q − p) ≤ 0 for every q of the set, which characterises the
 * projection on a closed convex set: checked against the set's corners, its top disc's rim and
 * random inner points (the rounding allowance: 1e-12 (1 + ‖x‖²)). */
static void test_cut_cone_projection(void **state) {
  (void)state;
  uint64_t seed = 7;
  for (int trial = 0; trial < 2000; ++trial) {
    double mu = test_rand(&seed, 0.1, 1.5), F = test_rand(&seed, 0.1, 5.0), x[3], p[3];
    for (int k = 0; k < 3; ++k)
      x[k] = test_rand(&seed, -8.0, 8.0);
    mr_cut_cone_project(mu, F, x, p);
    assert_true(hypot(p[0], p[1]) <= mu * p[2] * (1 + 1e-12) + 1e-12);
    assert_true(p[2] <= F * (1 + 1e-12));
    double x2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    for (int j = 0; j < 64; ++j) {
      double q[3], th = 2.0 * M_PI * j / 64;
      if (j < 32) /* the rim of the top disc */
        q[0] = mu * F * cos(th), q[1] = mu * F * sin(th), q[2] = F;
      else { /* a random point of the set */
        double h = test_rand(&seed, 0.0, F), rr = test_rand(&seed, 0.0, mu * h);
        q[0] = rr * cos(th), q[1] = rr * sin(th), q[2] = h;
      }
      double vi = 0.0;
      for (int k = 0; k < 3; ++k)
        vi += (x[k] - p[k]) * (q[k] - p[k]);
      assert_true(vi <= 1e-12 * (1 + x2));
    }
    /* the apex too */
    assert_true(-(x[0] * p[0] + x[1] * p[1] + x[2] * p[2]) +
                    (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) <=
                1e-12 * (1 + x2));
  }
  /* without a bound it is the cone's projection */
  double x[3] = {3.0, -1.0, 0.5}, a[3], b[3];
  mr_cut_cone_project(0.4, INFINITY, x, a);
  mr_cone_project(0.4, x, b);
  for (int k = 0; k < 3; ++k)
    assert_true(a[k] == b[k]);
}

/* ---- walking ---- */

#define SOLO_MPC(ground, mu, velocity, extra)                                                      \
  "timestep: 0.001\n"                                                                              \
  "contact: {margin: 0.001, baumgarte: 0.0}\n"                                                     \
  "bodies:\n"                                                                                      \
  "  - name: ground\n"                                                                             \
  "    fixed: true\n"                                                                              \
  "    geoms:\n"                                                                                   \
  "      - " ground "\n"                                                                           \
  "robots:\n"                                                                                      \
  "  - name: solo\n"                                                                               \
  "    urdf: robots/solo12/solo12.urdf\n"                                                          \
  "    floating: true\n"                                                                           \
  "    posture: standing\n" extra "    friction: " mu "\n"                                         \
  "    controller: {type: mpc, velocity: " velocity ", gait: trot}\n"

#define FLAT "{type: halfspace, friction: 0.9}"

typedef struct {
  double v[3];      /* mean forward, sideways velocity (heading frame), yaw rate */
  double yaw_drift; /* yaw at the end minus yaw at the start of the window, rad */
  long falls;
  long solves, not_converged; /* the controller's QP solves, and those short of tolerance */
  double kkt_max;             /* the largest KKT residual of a solve (mpc_qp.h) */
} walk_result;

static double yaw_of(const double *q) {
  return atan2(2.0 * (q[6] * q[5] + q[3] * q[4]), 1.0 - 2.0 * (q[4] * q[4] + q[5] * q[5]));
}

/* one step, the controller's QP solves counted and their largest KKT residual kept */
static void step_watching_qp(mr_sim *s, walk_result *r, mr_mpc_status *st) {
  mr_error err = {0};
  tsim_steps(s, 1);
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", st, &err), MR_OK);
  if (st->solves > r->solves) r->kkt_max = fmax(r->kkt_max, st->kkt);
  r->solves = st->solves;
}

/* Run the scene (default solver) for t_start + window seconds; the means are over the window,
 * after the first t_start seconds in which the gait starts from standing. */
static walk_result walk(const char *text, double t_start, double window) {
  mr_scene sc = tsim_parse(text, ".");
  mr_sim *s = tsim_create(&sc, NULL);
  walk_result r = {{0, 0, 0}, 0, 0, 0, 0, 0};
  long n0 = lround(t_start / 0.001), n = lround(window / 0.001);
  mr_mpc_status st;
  for (long k = 0; k < n0; ++k)
    step_watching_qp(s, &r, &st);
  double yaw0 = yaw_of(mr_sim_q(s)), yaw_prev = yaw0, turn = 0.0;
  for (long k = 0; k < n; ++k) {
    step_watching_qp(s, &r, &st);
    const double *q = mr_sim_q(s), *v = mr_sim_v(s);
    mr_quat qb = {q[3], q[4], q[5], q[6]};
    mr_mat3 R = mr_quat_to_m3(qb);
    mr_vec3 vw = mr_m3_mulv(&R, mr_v3(v[0], v[1], v[2]));
    mr_vec3 ww = mr_m3_mulv(&R, mr_v3(v[3], v[4], v[5]));
    double yaw = yaw_of(q);
    turn += remainder(yaw - yaw_prev, 2.0 * M_PI);
    yaw_prev = yaw;
    r.v[0] += (cos(yaw) * vw.v[0] + sin(yaw) * vw.v[1]) / n;
    r.v[1] += (-sin(yaw) * vw.v[0] + cos(yaw) * vw.v[1]) / n;
    r.v[2] += ww.v[2] / n;
  }
  (void)yaw0;
  r.yaw_drift = turn;
  r.falls = mr_sim_get_warnings(s)->falls;
  r.not_converged = st.not_converged;
  mr_sim_free(s);
  mr_scene_free(&sc);
  return r;
}

/* each commanded component within tol of its value; an uncommanded one within tol of the
 * command's largest speed (m/s, for the linear ones) */
static void expect_tracking(walk_result r, const double cmd[3], double tol) {
  double speed = fmax(fabs(cmd[0]), fabs(cmd[1]));
  for (int k = 0; k < 3; ++k) {
    double scale = cmd[k] != 0.0 ? fabs(cmd[k]) : (k < 2 ? speed : 0.0);
    if (scale == 0.0) continue;
    if (fabs(r.v[k] - cmd[k]) > tol * scale)
      fail_msg("component %d: mean %.4f, commanded %.4f, off by more than %.0f%% of %.3f", k,
               r.v[k], cmd[k], 100 * tol, scale);
  }
  assert_int_equal(r.falls, 0);
}

/* Flat ground, mu 0.9, 5 s after a 1 s start: forward, sideways and turning walks, slow and
 * fast, within 5 % of each commanded component (the required bound; without the integral action
 * the walks lag by 6 % at 0.1 m/s to 14 % at 1 m/s); the straight walks' heading drifts less
 * than 10° over the 5 s; no fall. */
static void test_flat_tracking(void **state) {
  (void)state;
  static const double cmds[4][3] = {
      {0.3, 0.0, 0.0}, {0.0, -0.2, 0.0}, {0.2, 0.0, 0.5}, {1.0, 0.0, 0.0}};
  static const char *const texts[4] = {
      SOLO_MPC(FLAT, "0.9", "[0.3, 0.0, 0.0]", ""), SOLO_MPC(FLAT, "0.9", "[0.0, -0.2, 0.0]", ""),
      SOLO_MPC(FLAT, "0.9", "[0.2, 0.0, 0.5]", ""), SOLO_MPC(FLAT, "0.9", "[1.0, 0.0, 0.0]", "")};
  for (int c = 0; c < 4; ++c) {
    walk_result r = walk(texts[c], 1.0, 5.0);
    expect_tracking(r, cmds[c], 0.05);
    if (cmds[c][2] == 0.0) assert_true(fabs(r.yaw_drift) < 10.0 * M_PI / 180.0);
  }
}

/* B10's ground (0.1 m from trough to crest, slopes up to 8.9°, mu 0.3, the controller's cones
 * mu 0.25 as in scenes/b10_solo_trot_bumpy.yaml: within the ground's), 0.3 m/s forward and
 * 0.6 m/s to the left, and the steeper sine of wavelength 1.2 m (slopes up to 14.7°, B10's steep
 * variant) at 0.5 m/s forward: within 10 % of the command, the heading within 10°, no fall
 * (measured 0.305 m/s forward, 0.612 m/s to the left, 0.512 m/s forward on the steep ground). The
 * looser bound than the flat walks': the controller is blind — its ground is a plane through the
 * feet, which lags the terrain by a stride — and on these slopes each touchdown lands early or late
 * by up to slope × step, which the integral action makes up only on average. The steep walk is the
 * one that needs the default gait period of 0.2 s: with 0.3 s it averaged 0.347 m/s, 31 % short
 * (docs/mpc.md, "The gait period"). Every QP solved to its tolerance: the interior-point method
 * stops at residuals of 1e-8 on the scaled problem, and on the forty walks of bench/mpc.c the KKT
 * residual of a solve was at most 3.4e-7 (the ADMM it replaced left 1e-2 to 1 on this ground). */
#define SINE_GROUND(wavelength)                                                                    \
  "{type: heightfield, function: sine, amplitude: 0.05, wavelength: " wavelength ", extent: [-5, " \
  "5, -5, 5], step: 0.02, friction: 0.3}"
#define BUMPY(wavelength, velocity)                                                                \
  SOLO_MPC(SINE_GROUND(wavelength), "0.3", velocity ", mu: 0.25", "    position: [0, 0, 0.29]\n")
static void test_bumpy_tracking(void **state) {
  (void)state;
  static const double cmds[3][3] = {{0.3, 0.0, 0.0}, {0.0, 0.6, 0.0}, {0.5, 0.0, 0.0}};
  static const char *const texts[3] = {BUMPY("2.0", "[0.3, 0.0, 0.0]"),
                                       BUMPY("2.0", "[0.0, 0.6, 0.0]"),
                                       BUMPY("1.2", "[0.5, 0.0, 0.0]")};
  for (int c = 0; c < 3; ++c) {
    walk_result r = walk(texts[c], 1.0, 5.0);
    expect_tracking(r, cmds[c], 0.10);
    assert_true(fabs(r.yaw_drift) < 10.0 * M_PI / 180.0);
    assert_true(r.solves >= 190);
    assert_int_equal(r.not_converged, 0);
    assert_true(r.kkt_max <= 1e-5);
  }
}

/* A 60 N sideways shove (2.4 times the robot's weight) for 0.2 s tips the robot over: the fall
 * is counted once in the warnings and kept in the controller's status with its time, after the
 * shove's start; the same walk without the shove does not fall. */
static void test_fall_detected(void **state) {
  (void)state;
  mr_scene sc = tsim_parse(SOLO_MPC(FLAT, "0.9", "[0.0, 0.0, 0.0]", ""), ".");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_error err = {0};
  int base = mr_model_body_index(mr_sim_model(s), "solo/base_link");
  assert_true(base > 0);
  tsim_steps(s, 500);
  mr_mpc_status st;
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
  assert_int_equal(st.fallen, 0);
  assert_int_equal(mr_sim_set_wrench(s, base, mr_v3(0, 60, 0), mr_v3(0, 0, 0), &err), MR_OK);
  tsim_steps(s, 200);
  mr_sim_clear_wrenches(s);
  tsim_steps(s, 1300);
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
  assert_int_equal(st.fallen, 1);
  assert_true(st.fall_time > 0.5 && st.fall_time < 2.0);
  assert_int_equal(mr_sim_get_warnings(s)->falls, 1);
  /* a reset forgets the fall */
  mr_sim_reset(s);
  tsim_steps(s, 1000);
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
  assert_int_equal(st.fallen, 0);
  assert_int_equal(mr_sim_get_warnings(s)->falls, 0);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* Legs without torque (torque limit and gains 0) fold under the trunk's weight and the trunk
 * comes to rest on the ground nearly level: a fall by the trunk's contact, though the tilt stays
 * far below 60°. */
static void test_fall_by_trunk_contact(void **state) {
  (void)state;
  mr_scene sc = tsim_parse(
      SOLO_MPC(FLAT, "0.9", "[0.0, 0.0, 0.0], torque_limit: 0, kp: 0, kd: 0, stance_kd: 0", ""),
      ".");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_error err = {0};
  tsim_steps(s, 2000);
  mr_mpc_status st;
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
  assert_int_equal(st.fallen, 1);
  assert_true(st.tilt < M_PI / 6.0);
  assert_int_equal(mr_sim_get_warnings(s)->falls, 1);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* A 100 N press down on the standing robot's trunk (4 times its weight, beyond what its legs'
 * 2.7 N m hold) brings the trunk onto the ground; released after 0.2 s (the trunk on the ground
 * for ~0.1 s of it) the robot stands back up to its height within 1 cm: a touch, no fall. Held
 * 0.6 s (the trunk down ~0.5 s, beyond the 0.3 s dwell) it is a fall, dated when the trunk came
 * down: after the press's start, within its 0.6 s. */
static void test_brief_trunk_touch(void **state) {
  (void)state;
  const double hold[2] = {0.2, 0.6};
  for (int c = 0; c < 2; ++c) {
    mr_scene sc = tsim_parse(SOLO_MPC(FLAT, "0.9", "[0.0, 0.0, 0.0]", ""), ".");
    mr_sim *s = tsim_create(&sc, NULL);
    mr_error err = {0};
    int base = mr_model_body_index(mr_sim_model(s), "solo/base_link");
    tsim_steps(s, 500);
    double z0 = mr_sim_q(s)[2];
    assert_int_equal(mr_sim_set_wrench(s, base, mr_v3(0, 0, -100), mr_v3(0, 0, 0), &err), MR_OK);
    long down = 0, n = lround(hold[c] / 0.001);
    for (long k = 0; k < 2500; ++k) {
      if (k == n) mr_sim_clear_wrenches(s);
      tsim_steps(s, 1);
      down += mr_v3_norm(mr_sim_contact_wrenches(s)[base].f) > 0.5;
    }
    mr_mpc_status st;
    assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
    assert_true(down >= 50);
    if (c == 0) {
      assert_int_equal(st.fallen, 0);
      assert_near(mr_sim_q(s)[2], z0, 0.01);
    } else {
      assert_int_equal(st.fallen, 1);
      assert_true(st.fall_time > 0.5 && st.fall_time < 1.1);
    }
    mr_sim_free(s);
    mr_scene_free(&sc);
  }
}

/* ---- configuration ---- */

static void expect_scene_error(const char *text, const char *n1, const char *n2) {
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_parse(text, "test.yaml", ".", &sc, &err) == MR_OK) {
    mr_scene_free(&sc);
    fail_msg("expected an error containing '%s'", n1);
  }
  if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
    fail_msg("message '%s' lacks '%s' / '%s'", err.msg, n1, n2 ? n2 : "");
  mr_scene_free(&sc);
}

#define SOLO_CONTROLLER(floating, extra, controller)                                               \
  "robots:\n"                                                                                      \
  "  - name: solo\n"                                                                               \
  "    urdf: robots/solo12/solo12.urdf\n"                                                          \
  "    floating: " floating "\n" extra "    controller: " controller "\n"

static void test_yaml_errors(void **state) {
  (void)state;
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, velocty: [0.1, 0, 0]}"),
                     "test.yaml:5", "velocity");
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mcp}"), "unknown value 'mcp'", "mpc");
  expect_scene_error(SOLO_CONTROLLER("true", "", "{velocity: [0.1, 0, 0]}"), "missing 'type'",
                     NULL);
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, gait: gallop}"),
                     "unknown value 'gallop'", "trot, stand");
  expect_scene_error(SOLO_CONTROLLER("false", "", "{type: mpc}"), "needs 'floating: true'", NULL);
  expect_scene_error(SOLO_CONTROLLER("true", "    pd: {kp: 1}\n", "{type: mpc}"),
                     "exclude each other", NULL);
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, duty: 1.5}"), "'duty'", "1.5");
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, horizon: 0.01, dt: 0.025}"),
                     "'horizon'", NULL);
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, velocity: [0.1, 0]}"), "velocity",
                     NULL);
  expect_scene_error(SOLO_CONTROLLER("true", "", "{type: mpc, feet: [FL_FOOT, FR_FOOT]}"),
                     "give 4 foot frames", NULL);
  expect_scene_error(
      SOLO_CONTROLLER("true", "", "{type: mpc, feet: [FL_FOOT, FR_FOOT, HL_FOOT, HR_TOE]}"),
      "no frame 'HR_TOE'", NULL);
}

/* the C API: attach a controller to a robot loaded without one, change its velocity; bad
 * robots and values are errors that change nothing */
static void test_api(void **state) {
  (void)state;
  mr_scene sc = tsim_parse(
      SOLO_CONTROLLER(
          "true", "    posture: standing\n",
          "{type: mpc}") "bodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n",
      ".");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_error err = {0};
  mr_mpc_settings c = mr_mpc_settings_default();
  c.duty = 0.0;
  assert_int_equal(mr_sim_set_mpc(s, "solo", &c, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "duty"));
  c = mr_mpc_settings_default();
  assert_int_equal(mr_sim_set_mpc(s, "robo", &c, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "robo"));
  assert_int_equal(mr_sim_set_mpc(s, "solo", &c, &err), MR_OK);
  double bad[3] = {NAN, 0, 0}, vel[3] = {0.0, 0.0, 0.4};
  assert_int_equal(mr_sim_set_mpc_velocity(s, "solo", bad, &err), MR_ERR_INVALID);
  assert_int_equal(mr_sim_set_mpc_velocity(s, "solo", vel, &err), MR_OK);
  tsim_steps(s, 2000);
  mr_mpc_status st;
  assert_int_equal(mr_sim_get_mpc_status(s, "solo", &st, &err), MR_OK);
  assert_int_equal(st.fallen, 0);
  assert_true(st.solves == 80); /* every 25 ms over 2 s */
  /* it turned: 2 s at 0.4 rad/s is 0.8 rad, 15 % */
  assert_near(yaw_of(mr_sim_q(s)), 0.8, 0.12);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cone_qp_kkt_and_active_set),
      cmocka_unit_test(test_cone_qp_cap_returns_best),
      cmocka_unit_test(test_cut_cone_projection),
      cmocka_unit_test(test_flat_tracking),
      cmocka_unit_test(test_bumpy_tracking),
      cmocka_unit_test(test_fall_detected),
      cmocka_unit_test(test_fall_by_trunk_contact),
      cmocka_unit_test(test_brief_trunk_touch),
      cmocka_unit_test(test_yaml_errors),
      cmocka_unit_test(test_api),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
