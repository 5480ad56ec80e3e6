/* Behaviours a user relies on, each against its closed form or its exact discrete sequence:
 *
 * - A world wrench on a turned body (90° about z, x, y, 120° about the diagonal, a generic
 *   rotation; the body spinning), through the scene's `forces:` and through mr_sim_set_wrench:
 *   the centre of mass moves by the semi-implicit sum Δt² F/m n(n + 1)/2, i.e. F t²/(2m) plus the
 *   scheme's first-order term F Δt t/(2m), and the world angular momentum gains Δt τ per step.
 * - The contact wrench of a body whose centre of mass is off its origin, resting on the floor
 *   with a second such body on it: its moment about the body's origin at the step's start equals
 *   Σ ±(p_i − o) × f_i over the contacts list (mr_sim_contacts, f = C λ), and static
 *   equilibrium: Σ f = m g e_z, moment (c − o) × m g e_z.
 * - Time-dependent PD targets (pd.sine, and targets written through the control API) and
 *   time-dependent forces (a sine force, and a controller writing the same wrench): the state
 *   against the scheme's recurrence with the targets at the step's end t_{k+1}
 *   (docs/scene-format.md, pd) and the forces at its start t_k, at frequencies where one step of
 *   lag moves the state by more than 10⁶ times the tolerance. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "moreau/control.h"
#include "moreau/dynamics.h"
#include "moreau/scene.h"
#include "moreau/world.h"
#include "sim_util.h"

#define EPS DBL_EPSILON

static void ok(mr_status st, const mr_error *err) {
  if (st) fail_msg("%s", err->msg);
}

static mr_world *world_of(const char *text) {
  mr_scene sc = tsim_parse(text, ".");
  mr_error err = {0};
  mr_world *w = mr_scene_compile(&sc, &err);
  mr_scene_free(&sc);
  if (!w) fail_msg("compile: %s", err.msg);
  return w;
}

static mr_sim *sim_of(const mr_world *w) {
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  if (!s) fail_msg("simulator: %s", err.msg);
  return s;
}

static mr_vec3 load3(const double *x) {
  return mr_v3(x[0], x[1], x[2]);
}

/* a free body's rotation from its q (x y z w quaternion at q + 3) */
static mr_mat3 rotation_of(const double *q) {
  mr_quat o = {q[3], q[4], q[5], q[6]};
  return mr_quat_to_m3(mr_quat_normalize(o));
}

/* ---- a world wrench on a turned body ---- */

#define WRENCH_STEPS 200
#define WRENCH_DT 1e-3

/* the box (2 kg, 0.4 x 0.3 x 0.2 m: three distinct moments, so the gyroscopic step runs) turned
 * by quaternion o, spinning at 0.5, -1, 2 rad/s (world), in zero gravity; force and torque as a
 * scene force when forced */
static mr_world *turned_box(mr_quat o, mr_vec3 F, mr_vec3 tq, int forced) {
  char text[2048];
  int n = snprintf(text, sizeof text,
                   "timestep: 0.001\n"
                   "gravity: [0, 0, 0]\n"
                   "bodies: [{name: box, mass: 2.0, position: [0.1, -0.2, 1.0],\n"
                   "          orientation: [%.17g, %.17g, %.17g, %.17g],\n"
                   "          angular_velocity: [0.5, -1.0, 2.0],\n"
                   "          geoms: [{type: box, size: [0.4, 0.3, 0.2]}]}]\n",
                   o.x, o.y, o.z, o.w);
  if (forced)
    snprintf(text + n, sizeof text - (size_t)n,
             "forces: [{body: box, type: constant, force: [%.17g, %.17g, %.17g],\n"
             "          torque: [%.17g, %.17g, %.17g]}]\n",
             F.v[0], F.v[1], F.v[2], tq.v[0], tq.v[1], tq.v[2]);
  return world_of(text);
}

/* world angular momentum R I_c ω of the free body at the state of s */
static mr_vec3 world_momentum(const mr_sim *s, const mr_inertia *Y) {
  mr_mat3 R = rotation_of(mr_sim_q(s));
  mr_vec3 Lb = mr_m3_mulv(&Y->I, load3(mr_sim_v(s) + 3));
  return mr_m3_mulv(&R, Lb);
}

/* Checks of one run of WRENCH_STEPS steps under world force F and torque τ at the centre of mass
 * (the box's origin), from centre p0 at rest and world momentum L0.
 *
 * Translation: semi-implicit Euler on the centre's world velocity u (free_flyer.c) gives
 * u_k = k Δt F/m and p_n = p0 + Δt Σ u_k = p0 + Δt² F/m n(n+1)/2 exactly; each step rotates u into
 * the body frame and back (v is local) and the force into the body frame, a few roundings of |u|
 * (at most 16 ε |u|: two 3 x 3 products of an orthonormal-to-ε matrix), so u_k is off by at most
 * 16 k ε |u_n| and p_n by Δt Σ 16 k ε |u_n| ≤ 16 n ε |p_n − p0| (|p_n − p0| ≈ n Δt |u_n|/2), plus
 * the sums' own rounding ε (|p0| + |p_n − p0|) per step. The continuous F t²/(2m) is the sum
 * less F Δt t/(2m), the scheme's first-order term: asserted as that difference, and |p_n − p0 −
 * F t²/2m| as at most that term (its order), to the same round-off.
 * Rotation: the free-body step changes the world momentum R I_c ω by the step's angular impulse
 * exactly (docs/physics.md, "free bodies"), here Δt τ: L_n = L0 + n Δt τ to the documented
 * round-off bound 10 n ε (|L0| + n Δt |τ|).
 * Local velocity: v_lin = Rᵀ u_n, one product more: 4 ε |u_n| beyond u_n's own bound. */
static void check_turned_run(const mr_sim *s, const mr_inertia *Y, mr_vec3 p0, mr_vec3 L0,
                             mr_vec3 F, mr_vec3 tq, const char *what) {
  const int n = WRENCH_STEPS;
  const double dt = WRENCH_DT, m = Y->m, t = n * dt;
  const double *q = mr_sim_q(s);
  mr_vec3 dp = mr_v3_sub(load3(q), p0);
  mr_vec3 dp_exact = mr_v3_scale(F, dt * dt / m * n * (n + 1) / 2.0);
  mr_vec3 un = mr_v3_scale(F, n * dt / m);
  double tol_p = 16.0 * n * EPS * mr_v3_norm(dp_exact) + n * EPS * (mr_v3_norm(p0) + 1.0);
  double tol_u = 16.0 * n * EPS * mr_v3_norm(un) + 4.0 * EPS * mr_v3_norm(un);
  mr_mat3 R = rotation_of(q);
  mr_vec3 v_local = mr_m3_tmulv(&R, un);
  mr_vec3 L = world_momentum(s, Y), L_exact = mr_v3_madd(L0, n * dt, tq);
  double tol_L = 10.0 * n * EPS * (mr_v3_norm(L0) + n * dt * mr_v3_norm(tq));
  for (int k = 0; k < 3; ++k) {
    double cont = F.v[k] * t * t / (2.0 * m), first_order = F.v[k] * dt * t / (2.0 * m);
    if (!(fabs(dp.v[k] - dp_exact.v[k]) <= tol_p))
      fail_msg("%s: displacement[%d] %.17g, the scheme's sum %.17g (tolerance %.3g)", what, k,
               dp.v[k], dp_exact.v[k], tol_p);
    assert_near(dp.v[k] - cont, first_order, tol_p);
    if (!(fabs(dp.v[k] - cont) <= fabs(first_order) + tol_p))
      fail_msg("%s: displacement[%d] %.17g, F t²/2m = %.17g beyond the first-order term", what, k,
               dp.v[k], cont);
    if (!(fabs(mr_sim_v(s)[k] - v_local.v[k]) <= tol_u))
      fail_msg("%s: local velocity[%d] %.17g, Rᵀ u = %.17g", what, k, mr_sim_v(s)[k], v_local.v[k]);
    if (!(fabs(L.v[k] - L_exact.v[k]) <= tol_L))
      fail_msg("%s: world momentum[%d] %.17g, L0 + n Δt τ = %.17g (tolerance %.3g)", what, k,
               L.v[k], L_exact.v[k], tol_L);
  }
}

/* a world force along +x (then +y, +z) and a torque about each world axis in turn, on the box
 * turned 90° about z, x and y, 120° about (1, 1, 1) and by a generic rotation: through the
 * scene's forces and through mr_sim_set_wrench. A force turned by R instead of Rᵀ sends the box
 * along R² F (−x for the quarter turn about z), a torque so turned changes L along the wrong
 * axis: both far beyond the round-off tolerances above (0.08 m, 0.06 N m s). */
static void test_wrench_on_turned_body(void **state) {
  const double s2 = sqrt(0.5);
  const mr_vec3 axis = mr_v3_normalize(mr_v3(0.3, -0.5, 0.8));
  const double half = 0.5 * 2.1;
  const mr_quat turns[] = {
      {0, 0, s2, s2},
      {s2, 0, 0, s2},
      {0, s2, 0, s2},
      {0.5, 0.5, 0.5, 0.5},
      {sin(half) * axis.v[0], sin(half) * axis.v[1], sin(half) * axis.v[2], cos(half)}};
  const char *names[] = {"90° about z", "90° about x", "90° about y", "120° about (1,1,1)",
                         "2.1 rad about (0.3,-0.5,0.8)"};
  mr_error err = {0};
  for (int r = 0; r < 5; ++r)
    for (int a = 0; a < 3; ++a) {
      mr_vec3 F = mr_v3(a == 0 ? 4.0 : 0.0, a == 1 ? 4.0 : 0.0, a == 2 ? 4.0 : 0.0);
      int b = (a + 1) % 3;
      mr_vec3 tq = mr_v3(b == 0 ? 0.3 : 0.0, b == 1 ? 0.3 : 0.0, b == 2 ? 0.3 : 0.0);
      mr_world *wf = turned_box(turns[r], F, tq, 1), *w = turned_box(turns[r], F, tq, 0);
      mr_sim *sf = sim_of(wf), *s = sim_of(w);
      int box = mr_world_body_index(w, "box");
      const mr_inertia *Y = &w->model->bodies[box].inertia;
      assert_true(mr_v3_norm(Y->c) == 0.0); /* the origin is the centre of mass */
      mr_vec3 p0 = load3(mr_sim_q(s)), L0 = world_momentum(s, Y);
      ok(mr_sim_set_wrench(s, box, F, tq, &err), &err);
      tsim_steps(sf, WRENCH_STEPS), tsim_steps(s, WRENCH_STEPS);
      char what[128];
      snprintf(what, sizeof what, "%s, force along %c, scene forces", names[r], 'x' + a);
      check_turned_run(sf, Y, p0, L0, F, tq, what);
      snprintf(what, sizeof what, "%s, force along %c, mr_sim_set_wrench", names[r], 'x' + a);
      check_turned_run(s, Y, p0, L0, F, tq, what);
      mr_sim_free(sf), mr_sim_free(s);
      mr_world_free(wf), mr_world_free(w);
    }
}

/* ---- the moment of a contact wrench ---- */

/* a 3 kg slab (0.5 x 0.4 x 0.1 m) with its centre of mass 0.12, -0.07, 0.02 m off its origin,
 * turned 30° about z, on the floor; on it a 1 kg block (0.2 x 0.16 x 0.1 m) with its centre of
 * mass -0.05, 0.03, 0 m off, turned -20°: both rest on four corners with unequal loads. The whole
 * stack and the floor are tilted by T (the floor's normal T e_z; μ = 1 holds the stack on a
 * slope of tan 0.1), so that the contact frames are not the world axes. */
static mr_world *stack_world(mr_mat3 T) {
  const mr_vec3 pos[2] = {{{0.3, 0.1, 0.05}}, {{0.33, 0.08, 0.15}}};
  const double yaw[2] = {30.0 * M_PI / 180.0, -20.0 * M_PI / 180.0};
  mr_vec3 p[2], n = mr_m3_mulv(&T, mr_v3(0, 0, 1));
  mr_quat o[2];
  for (int k = 0; k < 2; ++k) {
    mr_mat3 Rz = mr_m3_axis_angle(mr_v3(0, 0, 1), yaw[k]), R = mr_m3_mul(&T, &Rz);
    p[k] = mr_m3_mulv(&T, pos[k]);
    o[k] = mr_m3_to_quat(&R);
  }
  char text[2048];
  snprintf(text, sizeof text,
           "timestep: 0.001\n"
           "contact: {margin: 0.001}\n"
           "solver: {max_iter: 2000}\n"
           "bodies:\n"
           "  - {name: ground, fixed: true, geoms: [{type: halfspace, normal: [%.17g, %.17g, "
           "%.17g]}]}\n"
           "  - {name: slab, mass: 3.0, inertia: [0.03, 0.05, 0.07], com: [0.12, -0.07, 0.02],\n"
           "     position: [%.17g, %.17g, %.17g], orientation: [%.17g, %.17g, %.17g, %.17g],\n"
           "     geoms: [{type: box, size: [0.5, 0.4, 0.1]}]}\n"
           "  - {name: block, mass: 1.0, inertia: [0.004, 0.006, 0.008], com: [-0.05, 0.03, 0],\n"
           "     position: [%.17g, %.17g, %.17g], orientation: [%.17g, %.17g, %.17g, %.17g],\n"
           "     geoms: [{type: box, size: [0.2, 0.16, 0.1]}]}\n",
           n.v[0], n.v[1], n.v[2], p[0].v[0], p[0].v[1], p[0].v[2], o[0].x, o[0].y, o[0].z, o[0].w,
           p[1].v[0], p[1].v[1], p[1].v[2], o[1].x, o[1].y, o[1].z, o[1].w);
  return world_of(text);
}

/* After 500 steps at rest (the stack settles within a few steps), one more step from recorded
 * origins o_b:
 * - the moment of each body's contact wrench about o_b is Σ ±(p_i − o_b) × f_i over the contacts
 *   touching it, f_i = C_i λ_i from mr_sim_contacts (+ on body[0], − on body[1]): the same sums in
 *   another order, each term a cross product of |r| |f| with 3 roundings of C λ and 3 of the
 *   product, so 8 ε Σ |r_i| |f_i| (and 4 ε Σ |f_i| for the forces);
 * - static equilibrium: each contact force is within the solver's ε_abs = 1e-6 N of an exact
 *   equilibrium solution (NCP criterion in force units), so Σ f is within nc ε_abs of m g e_z
 *   and the moment within nc ε_abs max |p_i − o| of (c − o) × m g e_z, c the world centre of
 *   mass: the moment of the weight about o cancels. An equilibrium of the slab's own
 *   four floor contacts would give the stack's weight instead: the block's contacts load it
 *   too, with −f, so the equilibrium also checks the second body's sign.
 * A lever arm o − p, the centre of mass as the point, or +f on the second body all fail both; on
 * the slope, so does λ turned by the transposed contact frame. */
static void check_contact_wrench_moment(mr_mat3 T) {
  mr_world *w = stack_world(T);
  mr_sim *s = sim_of(w);
  const mr_model *m = w->model;
  const double g = 9.81, eps_abs = 1e-6;
  tsim_steps(s, 500);
  int bodies[2] = {mr_world_body_index(w, "slab"), mr_world_body_index(w, "block")};
  const mr_se3 *X = mr_sim_body_poses(s);
  mr_se3 pose[2] = {X[bodies[0]], X[bodies[1]]};
  tsim_steps(s, 1);
  const mr_contact *cs;
  const double *lambda;
  int nc = mr_sim_contacts(s, &cs, &lambda);
  const mr_force *fw = mr_sim_contact_wrenches(s);
  for (int j = 0; j < 2; ++j) {
    int b = bodies[j];
    mr_vec3 o = pose[j].p, f = mr_v3_zero(), n = mr_v3_zero();
    double sum_rf = 0.0, sum_f = 0.0, lever = 0.0;
    int touching = 0;
    for (int i = 0; i < nc; ++i) {
      if (cs[i].body[0] != b && cs[i].body[1] != b) continue;
      mr_vec3 fi = mr_m3_mulv(&cs[i].frame, load3(lambda + 3 * i));
      if (cs[i].body[0] != b) fi = mr_v3_neg(fi);
      mr_vec3 r = mr_v3_sub(cs[i].point, o);
      f = mr_v3_add(f, fi);
      n = mr_v3_add(n, mr_v3_cross(r, fi));
      sum_rf += mr_v3_norm(r) * mr_v3_norm(fi), sum_f += mr_v3_norm(fi);
      lever = fmax(lever, mr_v3_norm(r));
      touching++;
    }
    assert_true(touching >= 8 - 4 * j); /* slab: 4 on the floor, 4 under the block */
    const mr_inertia *Y = &m->bodies[b].inertia;
    double mb = Y->m;
    mr_vec3 c = mr_v3_add(o, mr_m3_mulv(&pose[j].R, Y->c));
    mr_vec3 n_eq = mr_v3_cross(mr_v3_sub(c, o), mr_v3(0, 0, mb * g));
    double tol_f = touching * eps_abs, tol_n = touching * eps_abs * lever;
    for (int k = 0; k < 3; ++k) {
      assert_near(fw[b].f.v[k], f.v[k], 4 * EPS * sum_f);
      assert_near(fw[b].n.v[k], n.v[k], 8 * EPS * sum_rf);
      assert_near(fw[b].f.v[k], k == 2 ? mb * g : 0.0, tol_f);
      assert_near(fw[b].n.v[k], n_eq.v[k], tol_n);
    }
    /* the off-centre mass gives the moment a size far above its tolerance */
    assert_true(hypot(n_eq.v[0], n_eq.v[1]) > 1e4 * tol_n);
  }
  mr_sim_free(s);
  mr_world_free(w);
}

/* on a level floor, and with everything tilted 0.1 rad about (1, 2, 0)/√5 */
static void test_contact_wrench_moment(void **state) {
  check_contact_wrench_moment(mr_m3_identity());
  check_contact_wrench_moment(mr_m3_axis_angle(mr_v3_normalize(mr_v3(1, 2, 0)), 0.1));
}

/* ---- time-dependent targets and forces in discrete time ---- */

#define PD_STEPS 1000
#define PD_DT 1e-3
#define PD_KP 2500.0
#define PD_KD 50.0
#define PD_A 0.1
#define PD_F 5.0
#define PD_PHASE 0.3

/* the pendulum of scenes/models/pendulum.urdf without gravity: a 1-dof rotor of inertia
 * I = M(q) (constant), under PD */
#define PENDULUM(extra)                                                                            \
  "timestep: 0.001\n"                                                                              \
  "gravity: [0, 0, 0]\n"                                                                           \
  "robots:\n"                                                                                      \
  "  - name: p\n"                                                                                  \
  "    urdf: scenes/models/pendulum.urdf\n"                                                        \
  "    position: [0, 0, 2.0]\n"                                                                    \
  "    pd:\n"                                                                                      \
  "      kp: 2500.0\n"                                                                             \
  "      kd: 50.0\n" extra

static double pd_target(double t) {
  return PD_A * sin(2.0 * M_PI * PD_F * t + PD_PHASE);
}

/* The step's recurrence for one dof without bias (sim.h: PD implicit, free_motion.c):
 *   M̃ = I + Δt (k_d + d) + Δt² k_p,   e = q_t(t_{k+1}) − q_k,
 *   v_{k+1} = v_k + Δt (k_p e − (k_d + d + Δt k_p) v_k)/M̃,   q_{k+1} = q_k + Δt v_{k+1},
 * with the target at the step's end (lag = 0) or, for comparison, at its start (lag = 1). The
 * clock is accumulated as the simulator's, t_{k+1} = t_k + Δt in double. */
static void pd_sequence(double I, double damping, int lag, double *q) {
  double dt = PD_DT, Mt = I + dt * (PD_KD + damping) + dt * dt * PD_KP;
  double qk = 0.0, vk = 0.0, t = 0.0;
  for (int k = 0; k < PD_STEPS; ++k) {
    double tt = lag ? t : t + dt;
    double e = pd_target(tt) - qk;
    vk = vk + dt * (PD_KP * e - (PD_KD + damping + dt * PD_KP) * vk) / Mt;
    qk = qk + dt * vk;
    t += dt;
    q[k] = qk;
  }
}

/* The round-off of the two computations of that recurrence: each step's q and Δt v differ by a
 * few roundings of the step's terms, δ ≤ 16 ε (|q_t| + |q| + Δt |v|) ≤ 16 ε · 3 A, and a
 * perturbation of (q, Δt v) made at step j is carried to step k by A_step^(k−j): the bound
 * δ Σ_k ‖A_step^k‖∞, the sum computed here from the 2 x 2 step matrix (bias- and target-free). */
static double pd_roundoff(double I, double damping) {
  double dt = PD_DT, Mt = I + dt * (PD_KD + damping) + dt * dt * PD_KP;
  double c = dt * (PD_KD + damping + dt * PD_KP) / Mt, kq = dt * dt * PD_KP / Mt;
  /* (q, w = Δt v) → w⁺ = w − kq q − c w, q⁺ = q + w⁺ */
  double A[2][2] = {{1.0 - kq, 1.0 - c}, {-kq, 1.0 - c}}, P[2][2] = {{1, 0}, {0, 1}};
  double sum = 0.0;
  for (int k = 0; k < PD_STEPS; ++k) {
    sum += fmax(fabs(P[0][0]) + fabs(P[0][1]), fabs(P[1][0]) + fabs(P[1][1]));
    double N[2][2];
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 2; ++j)
        N[r][j] = A[r][0] * P[0][j] + A[r][1] * P[1][j];
    memcpy(P, N, sizeof P);
  }
  return 16.0 * EPS * 3.0 * PD_A * sum;
}

/* The joint angle of a run against the recurrence with the targets at t_{k+1}; the recurrence
 * with the targets at t_k differs by about ω Δt A k_p/|K − I ω²| at ω = 2π 5 Hz (3e-3 rad),
 * asserted above 10⁶ tolerances: the test tells the two conventions apart. */
static void check_pd_run(mr_sim *s, int iq, const double *want, const double *lagged, double tol,
                         int set_targets, int dof) {
  mr_error err = {0};
  double worst_lag = 0.0;
  for (int k = 0; k < PD_STEPS; ++k) {
    if (set_targets) /* the control API: the target the step will reach, at its end */
      ok(mr_sim_set_joint_target(s, dof, pd_target(mr_sim_time(s) + PD_DT), &err), &err);
    tsim_steps(s, 1);
    double qk = mr_sim_q(s)[iq];
    if (!(fabs(qk - want[k]) <= tol))
      fail_msg("step %d: q = %.17g, the recurrence %.17g (|diff| %.3g > %.3g; one step late: "
               "%.17g)",
               k + 1, qk, want[k], fabs(qk - want[k]), tol, lagged[k]);
    worst_lag = fmax(worst_lag, fabs(lagged[k] - want[k]));
  }
  assert_true(worst_lag > 1e6 * tol);
}

/* pd.sine in the scene, and the same targets written through mr_sim_set_joint_target before
 * each step */
static void test_sine_targets_discrete(void **state) {
  char sine[256];
  snprintf(sine, sizeof sine,
           "      sine: [{joint: hinge, amplitude: %.17g, frequency: %.17g, phase: %.17g}]\n", PD_A,
           PD_F, PD_PHASE);
  char text[1024];
  snprintf(text, sizeof text, PENDULUM("%s"), sine);
  mr_world *ws = world_of(text), *w = world_of(PENDULUM(""));
  const mr_model *m = w->model;
  assert_int_equal(m->nv, 1);
  mr_data *d = mr_data_create(m);
  double q0 = 0.0;
  const double I = mr_crba(m, d, &q0)[0], damping = m->damping[0];
  mr_data_free(d);
  double want[PD_STEPS], lagged[PD_STEPS];
  pd_sequence(I, damping, 0, want);
  pd_sequence(I, damping, 1, lagged);
  double tol = pd_roundoff(I, damping);
  mr_sim *ss = sim_of(ws), *s = sim_of(w);
  int dof = mr_world_joint_dof(w, "p/hinge");
  assert_true(dof == 0 && mr_sim_q(s)[0] == 0.0 && mr_sim_ctrl_target(s)[0] == 0.0);
  check_pd_run(ss, 0, want, lagged, tol, 0, dof);
  check_pd_run(s, 0, want, lagged, tol, 1, dof);
  mr_sim_free(ss), mr_sim_free(s);
  mr_world_free(ws), mr_world_free(w);
}

/* the sine force: offset + amplitude sin(2π f (t − start) + φ) for start ≤ t < start + T, at
 * 37 Hz; start and end fall mid-step so that the window's first and last steps are unambiguous */
#define FORCE_STEPS 100
static const double force_start = 0.0125, force_duration = 0.05, force_freq = 37.0,
                    force_phase = 0.4;
static const mr_vec3 force_offset = {{0.5, 0.0, -0.25}}, force_amp = {{4.0, -3.0, 2.0}};

static mr_vec3 sine_force(double t) {
  double tau = t - force_start;
  if (tau < 0 || !(tau < force_duration)) return mr_v3_zero();
  double sn = sin(2 * M_PI * force_freq * tau + force_phase);
  return mr_v3_madd(force_offset, sn, force_amp);
}

/* a controller writing the sine force as the body's wrench at the step's start time */
typedef struct {
  int body;
} force_ctrl;

static int write_force(mr_sim *s, void *data) {
  const force_ctrl *c = data;
  mr_error err = {0};
  ok(mr_sim_set_wrench(s, c->body, sine_force(mr_sim_time(s)), mr_v3_zero(), &err), &err);
  return 0;
}

/* The ball's velocity and position under the scene's sine force, and under a controller writing
 * the same wrench: forces act at the step's start t_k (world.c, step.c: the world's forces are
 * evaluated at the simulator's time, which advances after the step). For a ball (isotropic,
 * unturned, no gravity) the step is u_{k+1} = u_k + Δt F(t_k)/m, x_{k+1} = x_k + Δt u_{k+1}: each
 * a couple of roundings of the running value, so u_n is within 3 n ε max|u| and x_n within
 * 3 n ε (|x0| + Δt Σ|u_k|) + Δt Σ tol(u_k) of the recurrence. With the force one step late
 * (F(t_{k+1})) u_n differs by Δt (F(t_n) − F(t_{k0}))/m over the window, ~1e-3 m/s, asserted above
 * 10⁶ tolerances. Against the integral (the continuous closed form), the left rectangle rule:
 * within Δt (2 max|F| + ½ |a| 2π f T)/m, the window's two partial steps and half the total
 * variation. */
static void test_sine_force_discrete(void **state) {
  char text[1024];
  const char *ball = "timestep: 0.001\n"
                     "gravity: [0, 0, 0]\n"
                     "bodies: [{name: ball, mass: 2.0, position: [0, 0, 1],\n"
                     "          geoms: [{type: sphere, radius: 0.1}]}]\n";
  snprintf(text, sizeof text,
           "%sforces: [{body: ball, type: sine, start: %.17g, duration: %.17g, "
           "offset: [%.17g, %.17g, %.17g], amplitude: [%.17g, %.17g, %.17g], "
           "frequency: %.17g, phase: %.17g}]\n",
           ball, force_start, force_duration, force_offset.v[0], force_offset.v[1],
           force_offset.v[2], force_amp.v[0], force_amp.v[1], force_amp.v[2], force_freq,
           force_phase);
  mr_world *wf = world_of(text), *w = world_of(ball);
  mr_sim *sf = sim_of(wf), *s = sim_of(w);
  force_ctrl fc = {mr_world_body_index(w, "ball")};
  mr_controller ctrl = {write_force, NULL, NULL, &fc};
  mr_sim_set_controller(s, &ctrl);
  const double m = 2.0, dt = 1e-3;
  mr_vec3 u = mr_v3_zero(), ul = mr_v3_zero(), x = load3(mr_sim_q(s));
  double t = 0.0, umax = 0.0, path = 0.0, worst_lag = 0.0;
  for (int k = 0; k < FORCE_STEPS; ++k) {
    u = mr_v3_madd(u, dt / m, sine_force(t));
    ul = mr_v3_madd(ul, dt / m, sine_force(t + dt));
    x = mr_v3_madd(x, dt, u);
    t += dt;
    umax = fmax(umax, mr_v3_norm(u)), path += dt * mr_v3_norm(u);
    tsim_steps(sf, 1), tsim_steps(s, 1);
    double tol_u = 3.0 * (k + 1) * EPS * umax;
    double tol_x = 3.0 * (k + 1) * EPS * (1.0 + path) + (k + 1) * dt * tol_u;
    for (int i = 0; i < 3; ++i) {
      assert_near(mr_sim_v(sf)[i], u.v[i], tol_u);
      assert_near(mr_sim_v(s)[i], u.v[i], tol_u);
      assert_near(mr_sim_q(sf)[i], x.v[i], tol_x);
      assert_near(mr_sim_q(s)[i], x.v[i], tol_x);
      worst_lag = fmax(worst_lag, fabs(ul.v[i] - u.v[i]) / tol_u);
    }
  }
  assert_true(worst_lag > 1e6);
  /* the continuous closed form: ∫ F = offset T + a (cos φ − cos(2π f T + φ))/(2π f) */
  double om = 2 * M_PI * force_freq, T = force_duration;
  for (int i = 0; i < 3; ++i) {
    double impulse = force_offset.v[i] * T +
                     force_amp.v[i] * (cos(force_phase) - cos(om * T + force_phase)) / om;
    double fmax_i = fabs(force_offset.v[i]) + fabs(force_amp.v[i]);
    double tol = dt * (2.0 * fmax_i + 0.5 * fabs(force_amp.v[i]) * om * T) / m;
    assert_near(mr_sim_v(sf)[i], impulse / m, tol);
  }
  mr_sim_free(sf), mr_sim_free(s);
  mr_world_free(wf), mr_world_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wrench_on_turned_body),
      cmocka_unit_test(test_contact_wrench_moment),
      cmocka_unit_test(test_sine_targets_discrete),
      cmocka_unit_test(test_sine_force_discrete),
  };
  return cmocka_run_group_tests_name("closed_forms", tests, NULL, NULL);
}
