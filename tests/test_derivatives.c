/* Analytical derivatives of RNEA and ABA (mr_rnea_derivatives, mr_aba_derivatives) on the
 * project's robots (Solo-12 and TALOS with a free-flyer, the Allegro hand) and on random trees
 * with every joint type (free, spherical, revolute about any axis, prismatic), numbered
 * depth-first or not, at random states with random external forces:
 *
 * - against central finite differences of mr_rnea / mr_aba through the tangent space
 *   (q ⊕ ±h e_k with mr_integrate, v ± h e_k, τ ± h e_k);
 * - exact identities, independent of finite differences: ∂τ/∂a = M (CRBA), the τ it returns
 *   equals mr_rnea's, M ∂q̈/∂τ = 1, and (∂τ/∂v) v = 2 C(q, v) v = 2 (b(q, v) − g(q)) since the
 *   velocity terms are quadratic in v (Euler's theorem for homogeneous functions).
 *
 * Finite differences and their error (ε = 2.2e-16, |f| the size of the function's values and
 * derivatives, the reference scale of every comparison): RNEA is quadratic in v and ABA is
 * quadratic in v and linear in τ, so a central difference with a unit step is exact there but for
 * the round-off of the function, ε |f| for RNEA and ε κ(M) |f| for ABA (a solve with M). In q the
 * functions are smooth but not polynomial: Richardson's combination of central differences with
 * steps 2h and h, h = 1e-3, has truncation O(h⁴) = 1e-12 |f⁽⁵⁾| and round-off ε κ / h. Each
 * tolerance is that bound times 100 for the constants (derivatives of order five of products of
 * lever arms, rotations and velocities, sums over up to 38 dofs); κ(M) is the 1-norm condition
 * number ‖M‖₁ ‖M⁻¹‖₁. A sweep of h from 1e-3 to 1e-7 with plain central differences shows the
 * errors fall as h² down to the round-off floor (docs/derivatives.md), as they must when the
 * analytical derivative is right.
 *
 * moreau rbd --derivatives --json prints the same five matrices as the library at the same
 * state, to the last bit (%.17g round-trips a double).
 *
 * The free-motion step (mr_step_free, mr_step_free_derivatives) on the same robots with random PD
 * gains and targets and on random trees with spherical and free joints (Δt = 0.1, so that the
 * Jacobians of the exponential matter): its six Jacobians against the same Richardson
 * differences of mr_step_free, ∂q⁺ compared through q⁺(x ± h e_k) ⊖ q⁺(x) (mr_difference), the
 * tolerance tol_q(κ(M̃)) for all of them since q⁺ is not polynomial in any input; and bad
 * parameters (Δt <= 0, gains on a free-flyer dof, k_p without targets) give errors naming them.
 *
 * The contact solution's dλ/dg (mr_contact_solution_derivative): a block on the ground in each
 * mode against closed forms, random three-contact problems against central differences of a
 * solve converged to 1e-13, and a box sticking on four corners (non-unique λ) reported.
 *
 * The step with contacts (mr_step_contact_derivatives): a cube sliding (pushed or not) and
 * sticking on four corners, a sphere sliding, rolling and resting, ∂v⁺/∂(q, v₀, push) against
 * Richardson-combined central differences of mr_sim_step (solver converged to ε 1e-12) and the
 * closed forms of the sliding and sticking block and of the rolling ball.
 */
#include "cli_util.h"
#include "test_random.h"
#include "test_step_inputs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/json.h"
#include "core/linalg.h"
#include "moreau/control.h"
#include "moreau/sim_derivatives.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "moreau/urdf.h"

enum { NMAX = 64 };

/* finite-difference steps in q and in v, τ (header comment) */
#define FD_HQ 1e-3
#define FD_HV 1.0
#define EPS 2.2e-16
/* exact identities computed along different summation orders: up to a few hundred roundings
 * (sums over the subtree and the path of each dof, nv <= 38) of numbers of the size of the
 * largest entry, 500 ε */
#define EXACT_TOL (500 * EPS)

/* the finite-difference tolerances of the header comment, for a condition number kappa (1 for
 * RNEA, which solves nothing) */
static double tol_q(double kappa) {
  return 100.0 * (FD_HQ * FD_HQ * FD_HQ * FD_HQ + kappa * EPS / FD_HQ);
}
static double tol_v(double kappa) {
  return 100.0 * kappa * EPS / FD_HV;
}

typedef struct {
  double q[NMAX], v[NMAX], a[NMAX], tau[NMAX];
} dstate;

typedef struct {
  double f[NMAX * NMAX];
} mat;

/* ---- models ---- */

static mr_model *load_robot(const char *path, int floating) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = floating;
  o.collision = 0;
  mr_model *m = NULL;
  mr_error e;
  if (mr_urdf_load(path, &o, &m, &e) != MR_OK) fail_msg("%s: %s", path, e.msg);
  assert_true(m->nv <= NMAX);
  return m;
}

/* a random tree of nb bodies cycling through every joint type, with armature; depth_first = 0
 * lets a body hang from any earlier one (subtrees are then not contiguous dof ranges) */
static mr_model *random_tree(uint64_t *s, int nb, int depth_first) {
  static const mr_joint_type types[] = {MR_JOINT_FREE, MR_JOINT_SPHERICAL, MR_JOINT_REVOLUTE,
                                        MR_JOINT_PRISMATIC, MR_JOINT_SPHERICAL, MR_JOINT_CONTINUOUS};
  mr_model *m = mr_model_create("random");
  mr_error err;
  for (int k = 1; k <= nb; ++k) {
    int parent = k == 1 ? 0 : (int)(test_rand_u64(s) % (uint64_t)k);
    if (depth_first) parent = k - 1;
    mr_vec3 axis = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    if (k % 4 == 0) axis = mr_v3(0, 1, 0); /* the axis-aligned joint kernel */
    char name[32];
    snprintf(name, sizeof name, "b%d", k);
    int id = mr_model_add_body(m, parent, name, types[(k - 1) % 6], test_random_se3(s, 0.5), axis,
                               name, test_random_inertia(s), &err);
    assert_int_equal(id, k);
    const mr_joint *j = &m->bodies[id].joint;
    for (int i = 0; i < j->nv; ++i)
      m->armature[j->idx_v + i] = test_rand(s, 0, 0.1);
  }
  return m;
}

/* a random state (|v|, |a| <= 1, |τ| <= 2) and random external forces (|f| <= 1 N, N m) */
static void random_state(const mr_model *m, mr_data *d, uint64_t *s, dstate *x) {
  mr_random_configuration(m, s, x->q);
  for (int i = 0; i < m->nv; ++i) {
    x->v[i] = test_rand(s, -1, 1), x->a[i] = test_rand(s, -1, 1);
    x->tau[i] = test_rand(s, -2, 2);
  }
  d->f_ext[0] = mr_force_zero();
  for (int b = 1; b < m->nbodies; ++b) {
    d->f_ext[b].f = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
    d->f_ext[b].n = mr_v3(test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1));
  }
}

/* ---- finite differences ---- */

enum { WRT_Q, WRT_V, WRT_TAU };

/* the function at the state moved by t along input k: RNEA (aba = 0) or ABA */
static void eval(const mr_model *m, mr_data *d, const dstate *x, int wrt, int k, double t, int aba,
                 double *out) {
  double q[NMAX], v[NMAX], u[NMAX], e[NMAX] = {0};
  memcpy(v, x->v, sizeof v);
  memcpy(u, aba ? x->tau : x->a, sizeof u);
  memcpy(q, x->q, sizeof q);
  e[k] = 1.0;
  if (wrt == WRT_Q) mr_integrate(m, x->q, e, t, q);
  if (wrt == WRT_V) v[k] += t;
  if (wrt == WRT_TAU) u[k] += t;
  const double *r = aba ? mr_aba(m, d, q, v, u) : mr_rnea(m, d, q, v, u);
  memcpy(out, r, (size_t)m->nv * sizeof(double));
}

/* central differences with step h into J (nv x nv, row-major) */
static void fd_central(const mr_model *m, mr_data *d, const dstate *x, int wrt, int aba, double h,
                       double *J) {
  const int nv = m->nv;
  double fp[NMAX], fm[NMAX];
  for (int k = 0; k < nv; ++k) {
    eval(m, d, x, wrt, k, h, aba, fp);
    eval(m, d, x, wrt, k, -h, aba, fm);
    for (int i = 0; i < nv; ++i)
      J[i * nv + k] = (fp[i] - fm[i]) / (2.0 * h);
  }
}

/* the finite-difference Jacobian (header comment): in q, Richardson's combination of the
 * central differences with steps 2h and h, (4 D(h) − D(2h)) / 3, whose truncation is O(h⁴);
 * in v and τ, where the functions are quadratic and linear, one central difference with a unit
 * step, exact but for round-off */
static void fd_matrix(const mr_model *m, mr_data *d, const dstate *x, int wrt, int aba, double *J) {
  const int n2 = m->nv * m->nv;
  static mat J2;
  if (wrt != WRT_Q) {
    fd_central(m, d, x, wrt, aba, FD_HV, J);
    return;
  }
  fd_central(m, d, x, wrt, aba, FD_HQ, J);
  fd_central(m, d, x, wrt, aba, 2.0 * FD_HQ, J2.f);
  for (int i = 0; i < n2; ++i)
    J[i] = (4.0 * J[i] - J2.f[i]) / 3.0;
}

static double max_abs(const double *a, int n) {
  double r = 0.0;
  for (int i = 0; i < n; ++i)
    r = fmax(r, fabs(a[i]));
  return r;
}

/* the 1-norm condition number ‖A‖₁ ‖A⁻¹‖₁ of an nv x nv matrix given with its inverse */
static double cond1(const double *A, const double *Ainv, int nv) {
  double a = 0.0, b = 0.0;
  for (int c = 0; c < nv; ++c) {
    double sa = 0.0, sb = 0.0;
    for (int r = 0; r < nv; ++r)
      sa += fabs(A[r * nv + c]), sb += fabs(Ainv[r * nv + c]);
    a = fmax(a, sa), b = fmax(b, sb);
  }
  return a * b;
}

/* max |A − B| relative to max(1, |B|, |f|): the scale of the finite-difference error */
static double rel_error(const double *A, const double *B, int n, double fscale) {
  double e = 0.0;
  for (int i = 0; i < n; ++i)
    e = fmax(e, fabs(A[i] - B[i]));
  return e / fmax(1.0, fmax(max_abs(B, n), fscale));
}

static void expect_fd(const char *what, const double *analytic, const double *fd, int nv,
                      double fscale, double tol) {
  double e = rel_error(analytic, fd, nv * nv, fscale);
  if (!(e <= tol)) fail_msg("%s: relative error %.3g against finite differences > %.3g", what, e, tol);
}

/* ---- checks ---- */

/* RNEA derivatives against finite differences and the exact identities */
static void check_rnea(const mr_model *m, mr_data *d, mr_derivatives *dd, const dstate *x) {
  const int nv = m->nv;
  static mat fd, M, Mc;
  double tau[NMAX], b[NMAX], g[NMAX], dv_v[NMAX];
  mr_rnea_derivatives(m, d, dd, x->q, x->v, x->a);
  memcpy(tau, d->tau_id, sizeof tau);
  mr_mass_dense(d, M.f);
  const double fscale = max_abs(mr_rnea(m, d, x->q, x->v, x->a), nv);
  assert_vec_near(tau, d->tau_id, nv, EXACT_TOL * fmax(1.0, fscale));
  mr_crba(m, d, x->q);
  mr_mass_dense(d, Mc.f);
  assert_vec_near(M.f, Mc.f, nv * nv, EXACT_TOL * fmax(1.0, max_abs(Mc.f, nv * nv)));
  /* (∂τ/∂v) v = 2 (b − g), f_ext left out of b and g as it is of ∂τ/∂v */
  memcpy(b, mr_nonlinear_effects(m, d, x->q, x->v), sizeof b);
  memcpy(g, mr_generalized_gravity(m, d, x->q), sizeof g);
  for (int i = 0; i < nv; ++i) {
    dv_v[i] = 0.0;
    for (int k = 0; k < nv; ++k)
      dv_v[i] += dd->dtau_dv[i * nv + k] * x->v[k];
    b[i] = 2.0 * (b[i] - g[i]);
  }
  assert_vec_near(dv_v, b, nv, EXACT_TOL * fmax(1.0, max_abs(dd->dtau_dv, nv * nv) * nv));
  fd_matrix(m, d, x, WRT_Q, 0, fd.f);
  expect_fd("dtau_dq", dd->dtau_dq, fd.f, nv, fscale, tol_q(1.0));
  fd_matrix(m, d, x, WRT_V, 0, fd.f);
  expect_fd("dtau_dv", dd->dtau_dv, fd.f, nv, fscale, tol_v(1.0));
}

/* ABA derivatives against finite differences, and M ∂q̈/∂τ = 1 */
static void check_aba(const mr_model *m, mr_data *d, mr_derivatives *dd, const dstate *x) {
  const int nv = m->nv;
  static mat fd, M;
  double ddq[NMAX];
  assert_int_equal(mr_aba_derivatives(m, d, dd, x->q, x->v, x->tau, NULL), MR_OK);
  memcpy(ddq, d->ddq, sizeof ddq);
  const double fscale = max_abs(mr_aba(m, d, x->q, x->v, x->tau), nv);
  assert_memory_equal(ddq, d->ddq, (size_t)nv * sizeof(double));
  mr_crba(m, d, x->q);
  mr_mass_dense(d, M.f);
  const double kappa = cond1(M.f, dd->dddq_dtau, nv);
  for (int i = 0; i < nv; ++i)
    for (int k = 0; k < nv; ++k) {
      double s = 0.0;
      for (int j = 0; j < nv; ++j)
        s += M.f[i * nv + j] * dd->dddq_dtau[j * nv + k];
      /* error of a solve: the condition number times the rounding unit, nv terms */
      assert_near(s, i == k ? 1.0 : 0.0, nv * EPS * kappa);
    }
  fd_matrix(m, d, x, WRT_Q, 1, fd.f);
  expect_fd("dddq_dq", dd->dddq_dq, fd.f, nv, fscale, tol_q(kappa));
  fd_matrix(m, d, x, WRT_V, 1, fd.f);
  expect_fd("dddq_dv", dd->dddq_dv, fd.f, nv, fscale, tol_v(kappa));
  fd_matrix(m, d, x, WRT_TAU, 1, fd.f);
  expect_fd("dddq_dtau", dd->dddq_dtau, fd.f, nv, fscale, tol_v(kappa));
}

static void check_model(mr_model *m, uint64_t seed, int nstates) {
  mr_data *d = mr_data_create(m);
  mr_derivatives *dd = mr_derivatives_create(m);
  assert_non_null(d), assert_non_null(dd);
  for (int k = 0; k < nstates; ++k) {
    dstate x;
    random_state(m, d, &seed, &x);
    check_rnea(m, d, dd, &x);
    check_aba(m, d, dd, &x);
  }
  mr_derivatives_free(dd);
  mr_data_free(d);
  mr_model_free(m);
}

/* ---- tests ---- */

static void test_solo12(void **state) {
  (void)state;
  check_model(load_robot("robots/solo12/solo12.urdf", 1), 11, 10);
}

static void test_talos(void **state) {
  (void)state;
  check_model(load_robot("robots/talos/talos.urdf", 1), 12, 5);
}

static void test_allegro(void **state) {
  (void)state;
  check_model(load_robot("robots/allegro/allegro_right_hand.urdf", 0), 13, 10);
}

static void test_random_trees(void **state) {
  (void)state;
  uint64_t s = 14;
  for (int t = 0; t < 6; ++t)
    check_model(random_tree(&s, 4 + 3 * t, t % 2), 100 + (uint64_t)t, 3);
}

/* ---- one time step ---- */

/* the step's inputs and PD settings */
typedef struct {
  dstate x;
  double kp[NMAX], kd[NMAX], target[NMAX];
  mr_step_params p;
} step_case;

/* a random state, with PD gains (k_p in [0, 50], k_d in [0, 1]) and targets on every 1-dof
 * joint when pd */
static void step_setup(const mr_model *m, mr_data *d, uint64_t *s, int pd, double dt,
                       step_case *c) {
  random_state(m, d, s, &c->x);
  for (int k = 0; k < m->nv; ++k) {
    const int one = m->bodies[m->dof_body[k]].joint.nv == 1;
    c->kp[k] = pd && one ? test_rand(s, 0, 50) : 0.0;
    c->kd[k] = pd && one ? test_rand(s, 0, 1) : 0.0;
    c->target[k] = test_rand(s, -1, 1);
  }
  c->p = (mr_step_params){dt, c->kp, c->kd, c->target};
}

/* x⁺ with input k moved by t (wrt q: q ⊕ t e_k), as (q⁺ ⊖ q⁺₀, v⁺) stacked: 2 nv numbers */
static void step_moved(const mr_model *m, mr_data *d, const step_case *c, const double *q0n,
                       int wrt, int k, double t, double *out) {
  double q[NMAX], v[NMAX], u[NMAX], e[NMAX] = {0}, qn[NMAX];
  memcpy(q, c->x.q, sizeof q), memcpy(v, c->x.v, sizeof v), memcpy(u, c->x.tau, sizeof u);
  e[k] = 1.0;
  if (wrt == WRT_Q) mr_integrate(m, c->x.q, e, t, q);
  if (wrt == WRT_V) v[k] += t;
  if (wrt == WRT_TAU) u[k] += t;
  assert_int_equal(mr_step_free(m, d, &c->p, q, v, u, qn, out + m->nv, NULL), MR_OK);
  mr_difference(m, q0n, qn, out);
}

/* Richardson-combined central differences of the step (header comment), into Jq (∂q⁺) and Jv
 * (∂v⁺) */
static void fd_step(const mr_model *m, mr_data *d, const step_case *c, const double *q0n, int wrt,
                    double *Jq, double *Jv) {
  const int nv = m->nv;
  double f[4][2 * NMAX];
  const double hs[4] = {FD_HQ, -FD_HQ, 2 * FD_HQ, -2 * FD_HQ};
  for (int k = 0; k < nv; ++k) {
    for (int s = 0; s < 4; ++s)
      step_moved(m, d, c, q0n, wrt, k, hs[s], f[s]);
    for (int i = 0; i < 2 * nv; ++i) {
      double d1 = (f[0][i] - f[1][i]) / (2 * FD_HQ), d2 = (f[2][i] - f[3][i]) / (4 * FD_HQ);
      (i < nv ? Jq : Jv)[(i % nv) * nv + k] = (4 * d1 - d2) / 3;
    }
  }
}

/* the step derivatives against finite differences of mr_step_free, and the step they return
 * against mr_step_free's */
static void check_step(mr_model *m, uint64_t seed, int nstates, int pd, double dt) {
  mr_data *d = mr_data_create(m);
  mr_step_derivatives *sd = mr_step_derivatives_create(m);
  assert_non_null(d), assert_non_null(sd);
  const int nv = m->nv;
  static mat Jq, Jv;
  for (int t = 0; t < nstates; ++t) {
    step_case c;
    step_setup(m, d, &seed, pd, dt, &c);
    double qn[NMAX], vn[NMAX], qn2[NMAX], vn2[NMAX];
    assert_int_equal(mr_step_free_derivatives(m, d, sd, &c.p, c.x.q, c.x.v, c.x.tau, qn, vn, NULL),
                     MR_OK);
    assert_int_equal(mr_step_free(m, d, &c.p, c.x.q, c.x.v, c.x.tau, qn2, vn2, NULL), MR_OK);
    assert_memory_equal(vn, vn2, (size_t)nv * sizeof(double));
    assert_memory_equal(qn, qn2, (size_t)m->nq * sizeof(double));
    /* κ(M̃) from M̃ and M̃⁻¹ = ∂v⁺/∂τ / Δt; the finite differences' round-off grows with it */
    static mat Mt, Mtinv;
    mr_crba(m, d, c.x.q);
    mr_mass_dense(d, Mt.f);
    for (int r = 0; r < nv * nv; ++r)
      Mtinv.f[r] = sd->dvn_dtau[r] / dt;
    for (int k = 0; k < nv; ++k)
      Mt.f[k * nv + k] += dt * (c.kd[k] + m->damping[k]) + dt * dt * c.kp[k];
    const double kappa = cond1(Mt.f, Mtinv.f, nv);
    const double fscale = fmax(max_abs(vn, nv), 1.0);
    const double *an[3][2] = {{sd->dqn_dq, sd->dvn_dq}, {sd->dqn_dv, sd->dvn_dv},
                              {sd->dqn_dtau, sd->dvn_dtau}};
    const char *names[3][2] = {{"dqn_dq", "dvn_dq"}, {"dqn_dv", "dvn_dv"},
                               {"dqn_dtau", "dvn_dtau"}};
    for (int w = 0; w < 3; ++w) {
      fd_step(m, d, &c, qn, w, Jq.f, Jv.f);
      expect_fd(names[w][0], an[w][0], Jq.f, nv, fscale, tol_q(kappa));
      expect_fd(names[w][1], an[w][1], Jv.f, nv, fscale, tol_q(kappa));
    }
  }
  mr_step_derivatives_free(sd);
  mr_data_free(d);
  mr_model_free(m);
}

static void test_step_robots(void **state) {
  (void)state;
  check_step(load_robot("robots/solo12/solo12.urdf", 1), 21, 3, 1, 0.01);
  check_step(load_robot("robots/talos/talos.urdf", 1), 22, 2, 1, 1e-3);
  check_step(load_robot("robots/allegro/allegro_right_hand.urdf", 0), 23, 3, 1, 0.01);
}

/* spherical and free joints take the SO(3) / SE(3) Jacobians of the exponential; a large step
 * (Δt = 0.1, rotations of up to 0.1 × |v| rad per step) exercises their nonlinear terms */
static void test_step_random_trees(void **state) {
  (void)state;
  uint64_t s = 24;
  for (int t = 0; t < 4; ++t)
    check_step(random_tree(&s, 4 + 2 * t, t % 2), 200 + (uint64_t)t, 2, 1, 0.1);
}

/* the Allegro hand alone (fixed base, no other body, no ground: no contact), PD gains toward
 * targets away from the start, commanded torques, joint limits off: mr_sim_step and
 * mr_step_free take the same step. They evaluate the same expressions in the same order and
 * agree bitwise after 100 steps; 1e-13 (|q|, |v| ~ 1) leaves room for a reordered sum in either,
 * a few hundred roundings over the run, and still catches any difference in the equations. No
 * joint limits and no joint friction: a step without constraint rows */
static const char allegro_free_scene[] =
    "timestep: 0.001\n"
    "duration: 0.1\n"
    "robots:\n"
    "  - name: hand\n"
    "    urdf: robots/allegro/allegro_right_hand.urdf\n"
    "    floating: false\n"
    "    orientation: [0, -0.7660444431, 0, 0.6427876097]\n"
    "    posture: open\n"
    "    joint_limits: false\n"
    "    joint_friction_scale: 0\n"
    "    torques: {joint_0.0: 0.05, joint_5.0: -0.03}\n"
    "    pd: {kp: 10.0, kd: 0.3, targets: {joint_1.0: 0.6, joint_9.0: 0.4, joint_13.0: 0.5}}\n";

static void test_step_matches_sim(void **state) {
  (void)state;
  mr_scene sc;
  mr_error e;
  if (mr_scene_parse(allegro_free_scene, "allegro_free", NULL, &sc, &e) != MR_OK)
    fail_msg("%s", e.msg);
  mr_sim *sim = mr_sim_from_scene(&sc, NULL, &e);
  assert_non_null(sim);
  const mr_model *m = sc.model;
  const mr_scene_robot *rb = &sc.robots[0];
  assert_int_equal(rb->idx_v, 0), assert_int_equal(m->nv, rb->nv);
  double kp[NMAX], kd[NMAX], target[NMAX], tau[NMAX], q[NMAX], v[NMAX];
  for (int k = 0; k < m->nv; ++k) {
    const mr_joint *j = &m->bodies[m->dof_body[k]].joint;
    kp[k] = rb->kp[k], kd[k] = rb->kd[k], tau[k] = rb->torque[k];
    target[k] = rb->q_target[j->idx_q - rb->idx_q];
  }
  memcpy(q, sc.q0, (size_t)m->nq * sizeof(double));
  memcpy(v, sc.v0, (size_t)m->nv * sizeof(double));
  mr_data *d = mr_data_create(m);
  const mr_step_params p = {sc.timestep, kp, kd, target};
  for (int t = 0; t < 100; ++t) {
    assert_int_equal(mr_sim_step(sim, &e), MR_OK);
    assert_int_equal(mr_sim_last(sim)->ncontacts + mr_sim_last(sim)->nconstraints, 0);
    double qn[NMAX], vn[NMAX];
    assert_int_equal(mr_step_free(m, d, &p, q, v, tau, qn, vn, &e), MR_OK);
    memcpy(q, qn, sizeof q), memcpy(v, vn, sizeof v);
  }
  assert_vec_near(q, mr_sim_q(sim), m->nq, 1e-13);
  assert_vec_near(v, mr_sim_v(sim), m->nv, 1e-13 * fmax(1.0, max_abs(v, m->nv)));
  /* the hand moved: the comparison is not between two rest states */
  assert_true(max_abs(v, m->nv) > 0.1);
  mr_data_free(d);
  mr_sim_free(sim);
  mr_scene_free(&sc);
}

/* bad parameters are reported, not computed */
static void test_step_errors(void **state) {
  (void)state;
  mr_model *m = load_robot("robots/solo12/solo12.urdf", 1);
  mr_data *d = mr_data_create(m);
  double q[NMAX], v[NMAX] = {0}, qn[NMAX], vn[NMAX], kp[NMAX] = {0};
  mr_neutral(m, q);
  mr_error e;
  mr_step_params p = {0.0, NULL, NULL, NULL};
  assert_int_equal(mr_step_free(m, d, &p, q, v, v, qn, vn, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "time step 0"));
  kp[2] = 1.0; /* a dof of the free-flyer */
  p = (mr_step_params){0.01, kp, NULL, v};
  assert_int_equal(mr_step_free(m, d, &p, q, v, v, qn, vn, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "dof 2 of joint 'root_joint'"));
  kp[2] = 0.0, kp[7] = 1.0;
  p.q_target = NULL;
  assert_int_equal(mr_step_free(m, d, &p, q, v, v, qn, vn, &e), MR_ERR_INVALID);
  assert_non_null(strstr(e.msg, "no q_target"));
  mr_data_free(d);
  mr_model_free(m);
}

/* ---- the contact solution ---- */

enum { NCMAX = 4 };

/* dλ/dg and dc/dg = (G + R) dλ/dg + 1 of a problem at (λ, c) */
static void contact_derivative(const mr_contact_problem *p, const double *lambda, const double *c,
                               double *dl, double *dc, int *modes) {
  static double work[(3 * NCMAX) * (3 * NCMAX) + 3 * NCMAX + 8];
  const int n = 3 * p->nc;
  assert_true(mr_contact_derivative_work_size(p->nc) <= sizeof work);
  assert_int_equal(mr_contact_solution_derivative(p, lambda, c, 1e-9, dl, modes, work, NULL),
                   MR_OK);
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k) {
      double x = r == k ? 1.0 : 0.0;
      for (int j = 0; j < n; ++j)
        x += p->G[r * n + j] * dl[j * n + k];
      dc[r * n + k] = x;
    }
}

/* a block on the ground, one contact, G = diag(a, a, b) (its inverse effective masses): the
 * three modes against their closed forms, at the exact solution. Sticking: λ = −G⁻¹ g, so
 * dλ/dg = −G⁻¹ and dc/dg = 0 (the block stays put whatever its initial velocity or push).
 * Sliding: λ_N = −g_N / b, λ_T = −μ λ_N ĝ_T, c_T = (‖g_T‖ − a μ λ_N) ĝ_T, so
 * dc_T/dg_T = ĝ ĝᵀ + (‖c_T‖ / ‖g_T‖)(1 − ĝ ĝᵀ) (the slip speed follows the push one for one,
 * its direction turns less) and dc_T/dg_N = (a μ / b) ĝ. Separated: dλ/dg = 0, dc/dg = 1. The
 * formulas are exact; the solver-free comparison has only rounding, 1e-15 */
static void test_contact_block(void **state) {
  (void)state;
  const double a = 2.0, b = 1.5, mu = 0.6;
  const double G[9] = {a, 0, 0, 0, a, 0, 0, 0, b};
  double lambda[3], c[3], dl[9], dc[9], expect[9];
  int mode;
  mr_contact_problem p = {.nc = 1, .G = G, .mu = &mu};
  /* sticking: g = (0.1, −0.05, −1) */
  const double gs[3] = {0.1, -0.05, -1.0};
  p.g = gs;
  for (int r = 0; r < 3; ++r)
    lambda[r] = -gs[r] / G[4 * r], c[r] = 0.0;
  contact_derivative(&p, lambda, c, dl, dc, &mode);
  assert_int_equal(mode, MR_CONTACT_STICKING);
  for (int r = 0; r < 9; ++r)
    expect[r] = r % 4 == 0 ? -1.0 / G[r] : 0.0;
  assert_vec_near(dl, expect, 9, 1e-15);
  for (int r = 0; r < 9; ++r)
    assert_near(dc[r], 0.0, 1e-15);
  /* sliding: g = (3, 2, −1) */
  const double gl[3] = {3.0, 2.0, -1.0};
  p.g = gl;
  const double gt = hypot(gl[0], gl[1]), u[2] = {gl[0] / gt, gl[1] / gt};
  const double ln = -gl[2] / b, ct = gt - a * mu * ln;
  lambda[0] = -mu * ln * u[0], lambda[1] = -mu * ln * u[1], lambda[2] = ln;
  c[0] = ct * u[0], c[1] = ct * u[1], c[2] = 0.0;
  contact_derivative(&p, lambda, c, dl, dc, &mode);
  assert_int_equal(mode, MR_CONTACT_SLIDING);
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k)
      assert_near(dc[r * 3 + k], u[r] * u[k] + ct / gt * ((r == k) - u[r] * u[k]), 1e-15);
    assert_near(dc[r * 3 + 2], a * mu / b * u[r], 1e-15);
  }
  for (int k = 0; k < 3; ++k)
    assert_near(dc[6 + k], 0.0, 1e-15);
  /* separated: g_N = +0.5 */
  const double gf[3] = {1.0, 0.0, 0.5};
  p.g = gf;
  memset(lambda, 0, sizeof lambda);
  memcpy(c, gf, sizeof c);
  contact_derivative(&p, lambda, c, dl, dc, &mode);
  assert_int_equal(mode, MR_CONTACT_SEPARATED);
  for (int r = 0; r < 9; ++r) {
    assert_near(dl[r], 0.0, 0.0);
    assert_near(dc[r], r % 4 == 0 ? 1.0 : 0.0, 0.0);
  }
}

/* a box (mass 2 kg, 0.4 x 0.3 x 0.2 m) resting on its four bottom corners, all sticking: G =
 * J M⁻¹ Jᵀ is 12 x 12 of rank 6, λ is not unique and neither is dλ/dg: reported, not computed */
static void test_contact_redundant(void **state) {
  (void)state;
  const double m = 2.0, hx = 0.2, hy = 0.15, hz = 0.1;
  const double I[3] = {m * (4 * hy * hy + 4 * hz * hz) / 12, m * (4 * hx * hx + 4 * hz * hz) / 12,
                       m * (4 * hx * hx + 4 * hy * hy) / 12};
  double J[12 * 6] = {0}, G[144], g[12], l[12], c[12] = {0}, mu[4] = {0.5, 0.5, 0.5, 0.5};
  static double dl[144], work[160 + 16];
  for (int i = 0; i < 4; ++i) {
    const double r[3] = {i & 1 ? hx : -hx, i & 2 ? hy : -hy, -hz};
    /* point velocity v + ω × r: rows [1, −[r]×] */
    const double S[3][3] = {{0, r[2], -r[1]}, {-r[2], 0, r[0]}, {r[1], -r[0], 0}};
    for (int a = 0; a < 3; ++a) {
      J[(3 * i + a) * 6 + a] = 1.0;
      for (int b = 0; b < 3; ++b)
        J[(3 * i + a) * 6 + 3 + b] = S[a][b];
    }
  }
  for (int r = 0; r < 12; ++r)
    for (int k = 0; k < 12; ++k) {
      double x = 0.0;
      for (int j = 0; j < 6; ++j)
        x += J[r * 6 + j] * J[k * 6 + j] / (j < 3 ? m : I[j - 3]);
      G[r * 12 + k] = x;
    }
  for (int i = 0; i < 12; ++i)
    l[i] = i % 3 == 2 ? m * 9.81 / 4 : 0.0, g[i] = 0.0;
  mr_contact_problem p = {.nc = 4, .G = G, .g = g, .mu = mu};
  assert_true(mr_contact_derivative_work_size(4) <= sizeof work);
  mr_error e;
  assert_int_equal(mr_contact_solution_derivative(&p, l, c, 1e-9, dl, NULL, work, &e),
                   MR_ERR_NUMERIC);
  assert_non_null(strstr(e.msg, "singular"));
}

/* solve a problem with ncp-pgs to ε 1e-13 into lambda, c; 1 when it converged */
static int solve_tight(const mr_contact_problem *p, double *lambda, double *c) {
  mr_solver_settings st = mr_solver_settings_default();
  st.eps_abs = 1e-13, st.eps_rel = 0.0, st.max_iter = 200000, st.warm_start = 0;
  mr_arena work;
  assert_int_equal(mr_arena_init(&work, mr_solver_work_size(p->nc, 0)), 0);
  mr_solver_stats stats;
  mr_status s = mr_solve("ncp-pgs", p, &st, NULL, &work, lambda, c, &stats, NULL);
  mr_arena_destroy(&work);
  return s == MR_OK && stats.converged;
}

/* 1 when every contact is at least margin away from a change of mode */
static int clear_of_boundaries(const mr_contact_problem *p, const double *l, const double *c,
                               double margin) {
  for (int i = 0; i < p->nc; ++i) {
    const double *li = l + 3 * i, *ci = c + 3 * i;
    const double lt = hypot(li[0], li[1]), ct = hypot(ci[0], ci[1]);
    if (li[2] < margin && ci[2] < margin) return 0; /* touching */
    if (li[2] >= margin && ct < margin && p->mu[i] * li[2] - lt < margin) return 0; /* onset */
  }
  return 1;
}

/* random problems of 3 contacts (G = B Bᵀ + 0.1, well conditioned, μ in [0.2, 1]) solved to
 * ε 1e-13 by ncp-pgs: dλ/dg against central differences of the solve with h = 1e-6. Every
 * contact is at least m = 1e-3 from a change of mode, so the differences stay on one smooth piece
 * of λ(g). Error bound: the solve's criterion 1e-13 with the smallest eigenvalue of G >= 0.1
 * leaves λ within 1e-12, 1e-12 / h = 1e-6 in the difference; the truncation h² |λ‴| / 6 with
 * |λ‴| <~ 1 / m² (the sliding direction ĉ_T turns at that rate) adds 1.7e-7. Every mode
 * occurs. */
static void test_contact_random(void **state) {
  (void)state;
  uint64_t s = 31;
  const int nc = 3, n = 9;
  int seen[3] = {0, 0, 0}, done = 0;
  for (int tries = 0; done < 12 && tries < 400; ++tries) {
    double B[81], G[81], g[9], mu[3], l[9], c[9], dl[81], dc[81], fd[81];
    for (int r = 0; r < n * n; ++r)
      B[r] = test_rand(&s, -1, 1);
    for (int r = 0; r < n; ++r)
      for (int k = 0; k < n; ++k) {
        double x = r == k ? 0.1 : 0.0;
        for (int j = 0; j < n; ++j)
          x += B[r * n + j] * B[k * n + j];
        G[r * n + k] = x;
      }
    for (int i = 0; i < nc; ++i) {
      mu[i] = test_rand(&s, 0.2, 1.0);
      g[3 * i] = test_rand(&s, -2, 2), g[3 * i + 1] = test_rand(&s, -2, 2);
      g[3 * i + 2] = test_rand(&s, -3, 1);
    }
    mr_contact_problem p = {.nc = nc, .G = G, .g = g, .mu = mu};
    if (!solve_tight(&p, l, c) || !clear_of_boundaries(&p, l, c, 1e-3)) continue;
    int modes[3];
    contact_derivative(&p, l, c, dl, dc, modes);
    const double h = 1e-6;
    for (int k = 0; k < n; ++k) {
      double gp[9], lp[9], lm[9], cc[9];
      memcpy(gp, g, sizeof gp);
      p.g = gp;
      gp[k] = g[k] + h;
      assert_true(solve_tight(&p, lp, cc));
      gp[k] = g[k] - h;
      assert_true(solve_tight(&p, lm, cc));
      for (int r = 0; r < n; ++r)
        fd[r * n + k] = (lp[r] - lm[r]) / (2 * h);
    }
    p.g = g;
    expect_fd("dlambda_dg", dl, fd, n, 1.0, 1e-12 / h + h * h / (6 * 1e-3 * 1e-3));
    for (int i = 0; i < nc; ++i)
      seen[modes[i]] = 1;
    ++done;
  }
  assert_int_equal(done, 12);
  assert_true(seen[0] && seen[1] && seen[2]);
}

/* ---- the step with contacts ---- */

/* One free body on the ground (a sphere of 1 kg and radius 0.1 m, or a cube of 1 kg and edge
 * 0.2 m on its four bottom corners; μ = 0.5), from the configuration q (nq = 7) and velocity v
 * (6), pushed at its centre by the world force (fx, fy, 0); one step of Δt = 1 ms with ncp-pgs
 * converged to ε 1e-14. */
typedef struct {
  int box;
  double q[7], v[6], push[2];
} body_case;

static void body_scene(const body_case *bc, mr_scene *sc) {
  char text[1400];
  snprintf(text, sizeof text,
           "timestep: 0.001\n"
           "duration: 0.001\n"
           "solver: {name: ncp-pgs, eps_abs: 1.0e-12, max_iter: 1000000}\n"
           "contact: {margin: 0.001, baumgarte: 0.0}\n"
           "bodies:\n"
           "  - name: ground\n"
           "    fixed: true\n"
           "    geoms:\n"
           "      - {type: halfspace, normal: [0, 0, 1], friction: 0.5}\n"
           "  - name: body\n"
           "    mass: 1.0\n"
           "    position: [0, 0, 0.1]\n"
           "    geoms:\n"
           "      - %s\n"
           "forces:\n"
           "  - {body: body, type: constant, force: [%.17g, %.17g, 0]}\n",
           bc->box ? "{type: box, size: [0.2, 0.2, 0.2], friction: 0.5}"
                   : "{type: sphere, radius: 0.1, friction: 0.5}",
           bc->push[0], bc->push[1]);
  mr_error e;
  if (mr_scene_parse(text, "body", NULL, sc, &e) != MR_OK) fail_msg("%s", e.msg);
}

/* one mr_sim_step of the case; *sim_out keeps the simulator when non-NULL */
static mr_sim *body_sim(const body_case *bc, mr_scene *sc) {
  mr_error e;
  body_scene(bc, sc);
  mr_sim *sim = mr_sim_from_scene(sc, NULL, &e);
  assert_non_null(sim);
  assert_int_equal(mr_sim_set_state(sim, bc->q, bc->v, &e), MR_OK);
  assert_int_equal(mr_sim_step(sim, &e), MR_OK);
  return sim;
}

/* the case's step v⁺, as mr_sim hands it back (in the frame of q⁺) */
static void body_step(const body_case *bc, double *vn) {
  mr_scene sc;
  mr_sim *sim = body_sim(bc, &sc);
  memcpy(vn, mr_sim_v(sim), 6 * sizeof(double));
  mr_sim_free(sim);
  mr_scene_free(&sc);
}

/* the case moved along input k by t: k < 6 the configuration (q ⊕ t e_k), k < 12 the velocity,
 * else the push */
static body_case body_moved(const mr_model *m, const body_case *bc, int k, double t) {
  body_case x = *bc;
  if (k < 6) {
    double e[6] = {0};
    e[k] = 1.0;
    mr_integrate(m, bc->q, e, t, x.q);
  } else if (k < 12) {
    x.v[k - 6] += t;
  } else {
    x.push[k - 12] += t;
  }
  return x;
}

/* The step's derivatives from mr_step_contact_derivatives on the problem and solution of the
 * case's mr_sim_step, into dq, dv (6 x 6) and dF (6 x 2, the push: ∂v⁺/∂τ on the linear dofs,
 * the body upright so that its frame is the world's); modes of the contacts into modes */
static void body_derivatives(const body_case *bc, double *dq, double *dv, double *dF, int *modes,
                             int *nc_out) {
  mr_scene sc;
  mr_error e;
  mr_sim *sim = body_sim(bc, &sc);
  const mr_model *m = sc.model;
  const mr_contact_problem *prob = mr_sim_problem(sim);
  const double *lambda;
  const mr_contact *ct;
  const int nc = mr_sim_contacts(sim, &ct, &lambda);
  assert_int_equal(prob->nc, nc);
  enum { NB = 8 };
  assert_true(nc >= 1 && nc <= NB);
  double c[3 * NB], J[3 * NB * 6], scratch[18], radius[NB];
  mr_contact_geometry rows[NB];
  mr_problem_velocity(prob, lambda, c);
  mr_data *d = mr_data_create(m);
  mr_forward_kinematics(m, d, bc->q, NULL, NULL);
  for (int i = 0; i < nc; ++i) {
    rows[i] = (mr_contact_geometry){.type = MR_ROWS_CONTACT, .body1 = ct[i].body[0],
                                    .body2 = ct[i].body[1], .point = ct[i].point,
                                    .frame = ct[i].frame, .phi = ct[i].phi, .mu = ct[i].mu,
                                    .is_new = 1};
    mr_contact_jacobian(m, d, &rows[i], J + 18 * i, scratch);
    assert_int_equal(mr_contact_radius(m, &ct[i], &radius[i], &e), MR_OK);
  }
  mr_assembly_settings as = mr_assembly_settings_default();
  as.dt = sc.timestep;
  as.baumgarte = 0.0;
  const mr_contact_step cs = {prob, rows, radius, J, lambda, c, &as, 1e-9, NULL, NULL};
  mr_step_derivatives *sd = mr_step_derivatives_create(m);
  static double work[1 << 14];
  assert_true(mr_step_contact_work_size(m, nc) <= sizeof work);
  for (int b = 0; b < m->nbodies; ++b)
    d->f_ext[b] = mr_force_zero();
  d->f_ext[1].f = mr_v3(bc->push[0], bc->push[1], 0.0);
  const double tau[6] = {0};
  const mr_step_params p = {sc.timestep, NULL, NULL, NULL};
  static double dl[9 * NB * NB], cw[1024];
  if (mr_contact_solution_derivative(prob, lambda, c, 1e-9, dl, modes, cw, NULL) != MR_OK)
    for (int i = 0; i < nc; ++i) /* redundant: the modes alone */
      modes[i] = lambda[3 * i + 2] > 1e-9 ? (hypot(c[3 * i], c[3 * i + 1]) > 1e-9 ? 2 : 1) : 0;
  double vn[6], wn[6];
  assert_int_equal(
      mr_step_contact_derivatives(m, d, sd, &p, bc->q, bc->v, tau, &cs, NULL, vn, work, &e),
      MR_OK);
  body_step(bc, wn); /* the step's own v⁺, from the same λ up to the solve's accuracy */
  for (int r = 0; r < 6; ++r)
    assert_near(vn[r], wn[r], 1e-12);
  memcpy(dq, sd->dvn_dq, 36 * sizeof(double));
  memcpy(dv, sd->dvn_dv, 36 * sizeof(double));
  for (int r = 0; r < 6; ++r)
    for (int k = 0; k < 2; ++k)
      dF[r * 2 + k] = sd->dvn_dtau[r * 6 + k];
  *nc_out = nc;
  mr_step_derivatives_free(sd);
  mr_data_free(d);
  mr_sim_free(sim);
  mr_scene_free(&sc);
}

/* the analytical ∂v⁺/∂(q, v, push) against central differences of mr_sim_step, Richardson's
 * combination of steps 2h and h (h = 1e-6; truncation O(h⁴)). The error: v⁺ carries the rounding
 * of the step's operations, ε times the largest terms that cancel in it: with the gap
 * correction Φ/Δt (1000 per metre) a tilt of h moves ω⁺ by 1000 h, and the difference divides
 * the rounding of such terms (~1e-14 (1 + 1000 h ...)) by 2h: ≲ 1e-8 (1 + |∂|); the solve's
 * ε 1e-14 (force units) moves v⁺ by Δt ε / m = 1e-17. Tolerance 1e-8 (1 + |∂|) per entry, the
 * largest error printed. The q columns are tested without push (mr_sim holds a scene force
 * fixed in the world while the step derivatives take d->f_ext in the body frame). */
static double check_body(const body_case *bc, const int *want_modes) {
  mr_scene sc;
  body_scene(bc, &sc);
  double dq[36], dv[36], dF[12];
  int modes[8], nc;
  body_derivatives(bc, dq, dv, dF, modes, &nc);
  for (int i = 0; i < nc; ++i)
    assert_int_equal(modes[i], want_modes[0]);
  const double h = 1e-6;
  const int with_q = bc->push[0] == 0.0 && bc->push[1] == 0.0;
  double worst = 0.0;
  for (int k = with_q ? 0 : 6; k < 14; ++k) {
    double w[4][6]; /* at +2h, +h, −h, −2h */
    const double at[4] = {2 * h, h, -h, -2 * h};
    for (int t = 0; t < 4; ++t) {
      body_case x = body_moved(sc.model, bc, k, at[t]);
      body_step(&x, w[t]);
    }
    for (int r = 0; r < 6; ++r) {
      const double an = k < 6 ? dq[r * 6 + k] : k < 12 ? dv[r * 6 + k - 6] : dF[r * 2 + k - 12];
      const double d1 = (w[1][r] - w[2][r]) / (2 * h), d2 = (w[0][r] - w[3][r]) / (4 * h);
      const double fd = (4 * d1 - d2) / 3;
      worst = fmax(worst, fabs(an - fd) / (1 + fabs(an)));
      if (fabs(an - fd) > 1e-8 * (1 + fabs(an)))
        fail_msg("input %d, row %d: analytical %.12g, differences %.12g", k, r, an, fd);
    }
  }
  mr_scene_free(&sc);
  return worst;
}

static void test_step_contact_bodies(void **state) {
  (void)state;
  const double up[7] = {0, 0, 0.1, 0, 0, 0, 1};
  const int sliding[1] = {MR_CONTACT_SLIDING}, sticking[1] = {MR_CONTACT_STICKING};
  double worst = 0.0;
  /* a sliding block, pushed and not: v⁺_T = (|v_fT| − μ g Δt) v̂_fT, so
   * ∂v⁺_T/∂v₀_T = ĉĉᵀ + (|v⁺_T| / |v_fT|)(1 − ĉĉᵀ) and ∂v⁺_T/∂F = Δt/m the same, to the
   * regularisation of the redundant normal rows (ρ/σ: 1e-12 relative) and rounding: 1e-11 */
  for (int pushed = 0; pushed < 2; ++pushed) {
    body_case bc = {1, {0}, {1.0, 0.3, 0, 0, 0, 0}, {pushed ? 0.5 : 0.0, 0.0}};
    memcpy(bc.q, up, sizeof up);
    worst = fmax(worst, check_body(&bc, sliding));
    double dq[36], dv[36], dF[12];
    int modes[8], nc;
    body_derivatives(&bc, dq, dv, dF, modes, &nc);
    assert_int_equal(nc, 4);
    const double dt = 1e-3, vf[2] = {1.0 + dt * bc.push[0], 0.3};
    /* the normal impulse lowers the block to Φ = −d (the rest depth) within the step */
    const double g = 9.81 - mr_assembly_settings_default().rest_depth / (dt * dt);
    const double sf = hypot(vf[0], vf[1]), sn = sf - 0.5 * g * dt;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b) {
        const double cc = vf[a] * vf[b] / (sf * sf);
        const double want = cc + sn / sf * ((a == b) - cc);
        assert_near(dv[a * 6 + b], want, 1e-11);
        assert_near(dF[a * 2 + b], dt * want, 1e-14);
      }
  }
  /* a sticking block, at rest, pushed below the friction bound: v⁺ = 0 whatever v₀ and F, but
   * for the regularisation of its redundant sticking rows, which leaves ρ (G + ρ)⁻¹ of each
   * input on G's range: ρ / σ_min(G) with ρ = 1e-12 max Gᵢᵢ and max Gᵢᵢ / σ_min ≈ 10 for the
   * cube's corners (measured 1.0e-11): tolerance 2e-11, and Δt/m times it for the push */
  body_case st = {1, {0}, {0}, {2.0, 1.0}};
  memcpy(st.q, up, sizeof up);
  worst = fmax(worst, check_body(&st, sticking));
  double dq[36], dv[36], dF[12];
  int modes[8], nc;
  body_derivatives(&st, dq, dv, dF, modes, &nc);
  for (int r = 0; r < 6; ++r) {
    for (int k = 0; k < 6; ++k)
      assert_near(dv[r * 6 + k], 0.0, 2e-11);
    assert_near(dF[r * 2], 0.0, 2e-14);
    assert_near(dF[r * 2 + 1], 0.0, 2e-14);
  }
  /* a sphere resting (sticking, one contact), in q. (A cube resting on four corners is not
   * differentiable in its tilt: a tilt of ±h lowers its centre by ½ a h / Δt in the step either
   * way, and central differences give the mean of the one-sided derivatives.) */
  body_case rest = {0, {0}, {0}, {0.0, 0.0}};
  memcpy(rest.q, up, sizeof up);
  worst = fmax(worst, check_body(&rest, sticking));
  /* a sphere sliding and rolling (the rolling one pushed: dv⁺/dF = 5Δt/(7m)) and the sliding
   * one without push, tested in q */
  body_case ss = {0, {0}, {1.0, 0.3, 0, 0, 0, 0}, {0.0, 0.0}};
  memcpy(ss.q, up, sizeof up);
  worst = fmax(worst, check_body(&ss, sliding));
  body_case ro = {0, {0}, {0}, {2.0, 1.0}};
  memcpy(ro.q, up, sizeof up);
  worst = fmax(worst, check_body(&ro, sticking));
  body_derivatives(&ro, dq, dv, dF, modes, &nc);
  /* the closed form holds for the velocity in the world; v⁺ is in the frame of q⁺, turned by
   * θ = Δt ω⁺ = Δt |v⁺| / r = 1.6e-5 rad, which moves ∂v⁺ₓ/∂Fₓ by the second-order terms of R⁺ᵀ:
   * |θ|² ∂u/∂F + 2 |θ| |∂θ/∂F| |v⁺| = 1.8e-13 + 2 · 1.6e-5 · 7.1e-6 · 1.6e-3 = 5.5e-13 */
  assert_near(dF[0], 5.0 / 7.0 * 1e-3, 1e-12);
  assert_near(dF[1 * 2 + 1], 5.0 / 7.0 * 1e-3, 1e-12);
  print_message("step with contacts: largest |analytical - differences| / (1 + |analytical|) "
                "%.2g\n",
                worst);
}

/* ---- the simulator's step on Solo-12 ---- */

/* Solo-12 standing on its four sphere feet under its PD controller (scenes/solo_stand.yaml),
 * the solver converged to ε 1e-12; the state after 100 steps, plus a random joint velocity
 * (|q̇| <= qd) and, when sliding, a base velocity of (1, 0.5, 0) m/s that makes the feet slip */
typedef struct {
  mr_scene sc;
  double q[64], v[64], t;
} solo_case;

static mr_sim *solo_sim(solo_case *c) {
  mr_error e;
  mr_sim *sim = mr_sim_from_scene(&c->sc, NULL, &e);
  assert_non_null(sim);
  return sim;
}

static void solo_setup(solo_case *c, uint64_t seed, double qd, int sliding) {
  mr_error e;
  if (mr_scene_load("scenes/solo_stand.yaml", &c->sc, &e) != MR_OK) fail_msg("%s", e.msg);
  c->sc.settings.eps_abs = 1e-12;
  c->sc.settings.eps_rel = 0.0;
  c->sc.settings.max_iter = 1000000;
  mr_sim *sim = solo_sim(c);
  for (int k = 0; k < 100; ++k)
    assert_int_equal(mr_sim_step(sim, &e), MR_OK);
  const mr_model *m = c->sc.model;
  memcpy(c->q, mr_sim_q(sim), (size_t)m->nq * sizeof(double));
  memcpy(c->v, mr_sim_v(sim), (size_t)m->nv * sizeof(double));
  c->t = mr_sim_time(sim);
  for (int k = 6; k < m->nv; ++k)
    c->v[k] += qd * (2.0 * test_rand(&seed, 0, 1) - 1.0);
  if (sliding) c->v[0] += 1.0, c->v[1] += 0.5;
  mr_sim_free(sim);
}

/* one step from the case moved along input k by t (k < nv: q ⊕ t e_k; < 2nv: v; else the
 * torque of dof k − 2nv), its q⁺ and v⁺ */
static void solo_step(solo_case *c, int k, double t, double *qn, double *vn) {
  const mr_model *m = c->sc.model;
  const int nv = m->nv;
  mr_error e;
  double q[64], v[64];
  test_moved_state(m, c->q, c->v, k, t, q, v);
  mr_sim *sim = solo_sim(c);
  mr_sim_set_time(sim, c->t);
  assert_int_equal(mr_sim_set_state(sim, q, v, &e), MR_OK);
  if (k >= 2 * nv) assert_int_equal(mr_sim_set_joint_torque(sim, k - 2 * nv, t, &e), MR_OK);
  assert_int_equal(mr_sim_step(sim, &e), MR_OK);
  memcpy(qn, mr_sim_q(sim), (size_t)m->nq * sizeof(double));
  memcpy(vn, mr_sim_v(sim), (size_t)nv * sizeof(double));
  mr_sim_free(sim);
}

/* K = max over dofs r of Σ_c |(M̃⁻¹ Jᵀ)_rc|, the contacts' rows in their frames (t₁, t₂, n):
 * a force error δλ (|δλ_c| ≤ ε) moves v⁺_r by at most Δt K ε */
static double solo_response(mr_sim *sim, double dt, const mr_contact *ct, int nc) {
  const mr_model *m = mr_sim_model(sim);
  const int nv = m->nv;
  mr_data *d = mr_data_create(m);
  static double M[64 * 64], J[3 * 64], W[64][12];
  const double *q = mr_sim_q(sim), *kp = mr_sim_ctrl_kp(sim), *kd = mr_sim_ctrl_kd(sim);
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_crba(m, d, q);
  mr_mass_dense(d, M);
  for (int k = 0; k < nv; ++k)
    M[k * nv + k] += dt * (kd[k] + m->damping[k]) + dt * dt * kp[k];
  assert_int_equal(mr_cholesky(M, nv), 0);
  for (int i = 0; i < nc; ++i)
    for (int a = 0; a < 3; ++a) {
      double col[64] = {0};
      for (int side = 0; side < 2; ++side) {
        if (ct[i].body[side] <= 0) continue;
        mr_point_jacobian(m, d, ct[i].body[side], ct[i].point, J);
        for (int k = 0; k < nv; ++k)
          for (int x = 0; x < 3; ++x)
            col[k] += J[x * nv + k] * ct[i].frame.m[x][a];
      }
      mr_cholesky_solve(M, nv, col);
      for (int k = 0; k < nv; ++k)
        W[k][3 * i + a] = col[k];
    }
  double K = 0.0;
  for (int k = 0; k < nv; ++k) {
    double row = 0.0;
    for (int c = 0; c < 3 * nc; ++c)
      row += fabs(W[k][c]);
    K = fmax(K, row);
  }
  mr_data_free(d);
  return K;
}

/* mr_sim_step_derivatives against Richardson-combined central differences of mr_sim_step
 * (h = 1e-6, truncation O(h⁴): h⁴ |∂⁵| ≈ 1e-24, nothing). The combination
 * (4 D(h) − D(2h))/3 weighs the samples at ±h by 2/(3h) and those at ±2h by 1/(12h), so an
 * error δ in each sample of v⁺ or q⁺ ⊖ q⁺₀ reaches up to 1.5 δ/h in the difference. δ is the
 * step's rounding (~1e-14 on terms up to 1e3: the PD gains over Δt, the gap correction Φ/Δt) plus
 * the solve's: ncp-pgs stops at ε = 1e-12 (force units), which moves v⁺ by up to Δt K ε with
 * K = max_r Σ_c |(M̃⁻¹ Jᵀ)_rc| computed here (240 1/kg: a leg's joint rows, the feet's levers
 * over the legs' small inertias plus Δt k_d + Δt² k_p), so 1.5 (1e-14 + Δt K ε)/h = 3.7e-7,
 * asserted on err / (1 + |∂|) (measured 3.5e-7, a joint velocity against the base's yaw while
 * the feet slide; largest error printed) */
static double check_solo(uint64_t seed, double qd, int sliding, int want_modes, int half) {
  solo_case c;
  solo_setup(&c, seed, qd, sliding);
  const mr_model *m = c.sc.model;
  const int nv = m->nv;
  mr_error e;
  mr_sim *sim = solo_sim(&c);
  mr_sim_set_time(sim, c.t);
  assert_int_equal(mr_sim_set_state(sim, c.q, c.v, &e), MR_OK);
  mr_sim_derivatives *x = mr_sim_derivatives_create(sim, &e);
  assert_non_null(x);
  assert_int_equal(mr_sim_step_derivatives(sim, x, &e), MR_OK);
  const mr_step_derivatives *sd = mr_sim_derivatives_get(x);
  const mr_contact *ct;
  const double *lambda;
  const int nc = mr_sim_contacts(sim, &ct, &lambda);
  assert_int_equal(nc, 4);
  double cv[12];
  int seen = 0;
  mr_problem_velocity(mr_sim_problem(sim), lambda, cv);
  for (int i = 0; i < nc; ++i) {
    const int mode = hypot(cv[3 * i], cv[3 * i + 1]) > 1e-9 ? MR_CONTACT_SLIDING : MR_CONTACT_STICKING;
    assert_true(lambda[3 * i + 2] > 1e-9);
    seen |= 1 << mode;
  }
  assert_int_equal(seen, want_modes);
  const double h = 1e-6;
  const double tol = 1.5 * (1e-14 + c.sc.timestep * solo_response(sim, c.sc.timestep, ct, nc) * 1e-12) / h;
  double q0n[64], v0n[64];
  memcpy(q0n, mr_sim_q(sim), (size_t)m->nq * sizeof(double));
  memcpy(v0n, mr_sim_v(sim), (size_t)nv * sizeof(double));
  double worst = 0.0;
  for (int k = 0; k < 3 * nv; ++k) {
    if (k >= 2 * nv && k < 2 * nv + 6) continue; /* the base takes no joint torque */
    if (k % 2 != half) continue;                  /* every other input, to keep the test short */
    double qn[4][64], vn[4][64], dq[4][64];
    const double at[4] = {2 * h, h, -h, -2 * h};
    for (int t = 0; t < 4; ++t) {
      solo_step(&c, k, at[t], qn[t], vn[t]);
      mr_difference(m, q0n, qn[t], dq[t]);
    }
    for (int r = 0; r < nv; ++r) {
      double an[2], fd[2];
      test_entry(sd, nv, k, r, (const double(*)[64])vn, (const double(*)[64])dq, h, an, fd);
      for (int o = 0; o < 2; ++o) {
        const double err = fabs(an[o] - fd[o]) / (1 + fabs(an[o]));
        worst = fmax(worst, err);
        if (err > tol)
          fail_msg("Solo-12 %s: input %d, %s row %d: analytical %.12g, differences %.12g",
                   sliding ? "sliding" : "sticking", k, o ? "q" : "v", r, an[o], fd[o]);
      }
    }
  }
  mr_sim_derivatives_free(x);
  mr_sim_free(sim);
  mr_scene_free(&c.sc);
  return worst;
}

static void test_step_contact_solo(void **state) {
  (void)state;
  const int stick = 1 << MR_CONTACT_STICKING, slide = 1 << MR_CONTACT_SLIDING;
  double worst = check_solo(3, 0.5, 0, stick | slide, 0); /* some feet stick, some slip */
  worst = fmax(worst, check_solo(4, 0.5, 1, slide, 1));   /* four feet sliding */
  print_message("Solo-12 step: largest relative error against differences %.2g\n", worst);
}

/* a comma-separated list of n numbers for the command line, %.17g each */
static void write_list(char *out, size_t size, const double *x, int n) {
  size_t at = 0;
  for (int i = 0; i < n && at < size; ++i)
    at += (size_t)snprintf(out + at, size - at, i ? ",%.17g" : "%.17g", x[i]);
}

/* moreau rbd --derivatives --json on Solo-12 against the library */
static void test_cli(void **state) {
  (void)state;
  mr_model *m = load_robot("robots/solo12/solo12.urdf", 1);
  mr_data *d = mr_data_create(m);
  mr_derivatives *dd = mr_derivatives_create(m);
  uint64_t seed = 15;
  dstate x;
  random_state(m, d, &seed, &x);
  for (int b = 0; b < m->nbodies; ++b)
    d->f_ext[b] = mr_force_zero(); /* the command applies no external force */
  static char args[9000], lists[4][1000], out[1 << 18];
  write_list(lists[0], sizeof lists[0], x.q, m->nq);
  write_list(lists[1], sizeof lists[1], x.v, m->nv);
  write_list(lists[2], sizeof lists[2], x.a, m->nv);
  write_list(lists[3], sizeof lists[3], x.tau, m->nv);
  snprintf(args, sizeof args,
           "rbd robots/solo12/solo12.urdf --floating --derivatives --json --q %s --v %s --a %s "
           "--tau %s",
           lists[0], lists[1], lists[2], lists[3]);
  assert_int_equal(cli_run(args, 0, out, sizeof out), 0);
  mr_json *j = NULL;
  assert_int_equal(mr_json_parse(out, "rbd", &j, NULL), MR_OK);
  assert_int_equal(mr_aba_derivatives(m, d, dd, x.q, x.v, x.tau, NULL), MR_OK);
  mr_rnea_derivatives(m, d, dd, x.q, x.v, x.a);
  const char *keys[5] = {"dtau_dq", "dtau_dv", "dddq_dq", "dddq_dv", "dddq_dtau"};
  const double *mats[5] = {dd->dtau_dq, dd->dtau_dv, dd->dddq_dq, dd->dddq_dv, dd->dddq_dtau};
  for (int k = 0; k < 5; ++k) {
    const mr_json *A = mr_json_get(j, keys[k]);
    assert_non_null(A);
    assert_int_equal(A->count, m->nv);
    for (int r = 0; r < m->nv; ++r) {
      const mr_json *row = mr_json_at(A, r);
      assert_int_equal(row->count, m->nv);
      for (int c = 0; c < m->nv; ++c)
        assert_true(mr_json_at(row, c)->number == mats[k][r * m->nv + c]);
    }
  }
  mr_json_free(j);
  mr_derivatives_free(dd);
  mr_data_free(d);
  mr_model_free(m);
}

/* moreau derivatives SCENE --time T --json on Solo-12 standing against the library (the same
 * steps, bitwise), and its errors: a negative time, a missing scene, a scene whose point
 * constraint is not differentiated */
static void test_cli_derivatives(void **state) {
  (void)state;
  static char out[1 << 20];
  assert_int_equal(cli_run("derivatives scenes/solo_stand.yaml --time 0.05 --json", 0, out,
                           sizeof out),
                   0);
  mr_json *j = NULL;
  assert_int_equal(mr_json_parse(out, "derivatives", &j, NULL), MR_OK);
  mr_scene sc;
  mr_error e;
  assert_int_equal(mr_scene_load("scenes/solo_stand.yaml", &sc, &e), MR_OK);
  mr_sim *sim = mr_sim_from_scene(&sc, NULL, &e);
  for (int k = 0; k < 50; ++k)
    assert_int_equal(mr_sim_step(sim, &e), MR_OK);
  mr_sim_derivatives *x = mr_sim_derivatives_create(sim, &e);
  assert_int_equal(mr_sim_step_derivatives(sim, x, &e), MR_OK);
  const mr_step_derivatives *sd = mr_sim_derivatives_get(x);
  const int nv = sc.model->nv;
  assert_int_equal((int)mr_json_get(j, "nv")->number, nv);
  assert_int_equal((int)mr_json_get(j, "ncontacts")->number, 4);
  const char *keys[6] = {"dvn_dq", "dvn_dv", "dvn_dtau", "dqn_dq", "dqn_dv", "dqn_dtau"};
  const double *mats[6] = {sd->dvn_dq, sd->dvn_dv, sd->dvn_dtau,
                           sd->dqn_dq, sd->dqn_dv, sd->dqn_dtau};
  for (int k = 0; k < 6; ++k) {
    const mr_json *A = mr_json_get(j, keys[k]);
    assert_non_null(A);
    assert_int_equal(A->count, nv);
    for (int r = 0; r < nv; ++r)
      for (int c = 0; c < nv; ++c)
        assert_true(mr_json_at(mr_json_at(A, r), c)->number == mats[k][r * nv + c]);
  }
  const mr_json *vn = mr_json_get(j, "v_next");
  for (int r = 0; r < nv; ++r)
    assert_true(mr_json_at(vn, r)->number == mr_sim_v(sim)[r]);
  mr_json_free(j);
  mr_sim_derivatives_free(x);
  mr_sim_free(sim);
  mr_scene_free(&sc);
  assert_int_equal(cli_run("derivatives scenes/solo_stand.yaml --time -1", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "--time: '-1'"));
  assert_int_equal(cli_run("derivatives scenes/missing.yaml", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "missing.yaml"));
  /* a point constraint is differentiated; an ellipsoid's contact is refused, naming it */
  assert_int_equal(cli_run("derivatives scenes/four_bar.yaml --json", 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "\"nconstraints\": 1"));
  /* the scene in a directory of its own: the test runs from either build tree */
  char dir[] = "/tmp/moreau_egg_XXXXXX", egg[64];
  assert_non_null(mkdtemp(dir));
  snprintf(egg, sizeof egg, "%s/egg.yaml", dir);
  FILE *f = fopen(egg, "w");
  assert_non_null(f);
  fputs("timestep: 0.001\nduration: 0.01\nbodies:\n"
        "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
        "  - {name: egg, mass: 0.1, position: [0, 0, 0.0499],\n"
        "     geoms: [{type: ellipsoid, radii: [0.03, 0.04, 0.05]}]}\n",
        f);
  fclose(f);
  char args[256];
  snprintf(args, sizeof args, "derivatives %s", egg);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "ellipsoid"));
  remove(egg);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_solo12),
      cmocka_unit_test(test_talos),
      cmocka_unit_test(test_allegro),
      cmocka_unit_test(test_random_trees),
      cmocka_unit_test(test_cli),
      cmocka_unit_test(test_cli_derivatives),
      cmocka_unit_test(test_step_robots),
      cmocka_unit_test(test_step_random_trees),
      cmocka_unit_test(test_step_errors),
      cmocka_unit_test(test_step_matches_sim),
      cmocka_unit_test(test_contact_block),
      cmocka_unit_test(test_contact_random),
      cmocka_unit_test(test_contact_redundant),
      cmocka_unit_test(test_step_contact_bodies),
      cmocka_unit_test(test_step_contact_solo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
