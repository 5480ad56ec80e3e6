/* Free-flyer joints inside the time step: exact torque-free translation, conservative
 * gyroscopic torque, and a centre of mass that moves on the chord Δt u, never on an arc.
 *
 * Pinocchio's free-flyer velocity v = (v_o, ω) is the velocity of the body origin and the
 * angular velocity, both in the body frame; q ⊕ Δt v (liegroup.c) moves the body along the
 * screw exp6(Δt v). The step uses instead, per free joint with rotation R and centre of mass c
 * (body frame),
 *   u = T(q) v = (R (v_o + ω × c), ω):  the world velocity of the centre of mass, and ω.
 * For one body M_u = T⁻ᵀ M T⁻¹ = diag(m 1, I_c) and the bias is (0, ω × I_c ω): no ω × v term,
 * so torque-free translation is exact. With a = Ṫ⁻¹ u at constant u,
 *   a_lin = −ω × Rᵀ u_lin = −ω × (v_o + ω × c),  a_ang = 0,
 * semi-implicit Euler in u, M_u (u⁺ − u) = Δt T⁻ᵀ (τ − b − M a), multiplied by Tᵀ reads
 *   M (w⁺ − v) = Δt (τ − RNEA(q, v, a)),   w⁺ = T(q)⁻¹ u⁺,
 * the step of sim.c with a in place of 0; contacts see J(q) w⁺, the true velocity of their
 * points. Positions: c⁺ = c_w + Δt u_lin⁺, R⁺ = R exp(Δt ω⁺), origin p⁺ = c⁺ − R⁺ c; the
 * velocity handed back is v⁺ = T(q⁺)⁻¹ u⁺ = (R⁺ᵀ u_lin⁺ − ω⁺ × c, ω⁺).
 *
 * Gyroscopic torque: the explicit −Δt ω × I_c ω of each free body is replaced by the impulse
 *   G = (exp(−Δt [ω_m]×) − 1) I_c ω_e,   ω_m = (ω_e + ω⁺)/2,
 * ω_e the velocity with every impulse of the step but G (applied forces and torques, contact and
 * constraint impulses), ω⁺ = ω_e + K G (K the angular block of M̃⁻¹, I_c⁻¹ for a body alone),
 * and the rotation is R⁺ = R exp(Δt (ω⁺ − ½ K G)) = R exp(Δt ω_m). Then I_c ω⁺ =
 * exp(−Δt [ω_m]×) I_c ω_e and
 *   R⁺ I_c ω⁺ = R I_c ω_e = R I_c ω + R P     (Euler's law: the world momentum changes by the
 *                                             step's impulses P, exactly, for any Δt)
 *   ω⁺ᵀ I_c ω⁺ = ω_eᵀ I_c ω_e                 (ω_mᵀ exp(−Δt [ω_m]×) = ω_mᵀ: the rotation does
 *                                             no work)
 * so a torque-free body (ω_e = ω) keeps |I_c ω|, its energy and its world momentum exactly, and a
 * constant torque adds Δt τ per step to the world momentum whatever the spin. An impulse taken
 * before the midpoint rotation and rotated with it is what this gets right: G of I_c ω alone,
 * with P added in the body frame of q, leaves R⁺ I_c ω⁺ = R I_c ω + R exp(Δt ω_m) P, the impulse
 * turned by the step's rotation (4.6 % of |L| after 1 s for a body spinning at 150 rad/s under
 * a constant torque; a heavy top on a pivot fell from 20° to 29° within 1 s).
 * The contact problem is solved before its impulse is known: it sees the free velocity with G_f,
 * the G of the velocity without contact impulses; once they are known, G is recomputed on the
 * velocity with them (mr_free_flyer_impulse_gyroscopic), which changes the contact velocities by
 * J K (G − G_f) = O(Δt |ω| |Δω_c|) (a resting body, ω = 0, has G = 0: none). A body with
 * I_c = k 1 has ω × I_c ω ≡ 0 and is left to semi-implicit Euler (G = 0 for it is exact, and
 * cheaper).
 *
 * Free bodies only: a floating base that carries other bodies (a robot) keeps Pinocchio's
 * semi-implicit Euler and q ⊕ Δt v. Its centre of mass is not the robot's, so the chord gains
 * no exactness there, while it lifts feet pinned below a turning base by ½ Δt² ω² r per step:
 * tiny positive gaps on part of a resting foot, which the contact problem's gap term turns into
 * stalls (TALOS standing: 87 → 1962 of 2000 steps at the iteration limit). */
#include "integrate/free_flyer.h"

#include <math.h>

#include "core/linalg.h"

/* Newton iterations on ω⁺: quadratic convergence from an O(Δt² ω³) start; step halvings when a
 * full step does not reduce the residual */
#define GYRO_MAX_ITER 30
#define GYRO_MAX_HALVINGS 30
#define GYRO_TOL 1e-15

static mr_vec3 load3(const double *x) {
  return mr_v3(x[0], x[1], x[2]);
}

static void store3(mr_vec3 a, double *x) {
  x[0] = a.v[0], x[1] = a.v[1], x[2] = a.v[2];
}

/* a free body: a free joint whose body carries no other body, i.e. whose six dofs are the whole
 * subtree of the first one (every joint but the free one has dofs of its own) */
static int is_free(const mr_model *m, const mr_data *d, int i) {
  const mr_joint *j = &m->bodies[i].joint;
  return j->type == MR_JOINT_FREE && d->nvSubtree[j->idx_v] == 6;
}

int mr_free_flyer_is_free(const mr_model *m, const mr_data *d, int i) {
  return is_free(m, d, i);
}

void mr_free_flyer_bias(const mr_model *m, const mr_data *d, const double *v, double *a) {
  mr_zero(a, m->nv);
  for (int i = 1; i < m->nbodies; ++i) {
    if (!is_free(m, d, i)) continue;
    int iv = m->bodies[i].joint.idx_v;
    mr_vec3 vo = load3(v + iv), w = load3(v + iv + 3), c = m->bodies[i].inertia.c;
    mr_vec3 vc = mr_v3_add(vo, mr_v3_cross(w, c)); /* Rᵀ u_lin */
    store3(mr_v3_neg(mr_v3_cross(w, vc)), a + iv);
  }
}

/* g(x) = x × I x */
static mr_vec3 gyro(const mr_mat3 *I, mr_vec3 x) {
  return mr_v3_cross(x, mr_m3_mulv(I, x));
}

/* the coefficients of exp([φ]×) and of its right Jacobian at one φ, θ = |φ|: s = sin θ / θ and
 * c = (1 − cos θ) / θ² (Rodrigues' formula; c is also the Jacobian's first), j = (θ − sin θ) / θ³
 * (its second), by their series below θ = 1e-4 */
typedef struct {
  mr_vec3 phi;
  double s, c, j;
} so3_terms;

static so3_terms so3_at(mr_vec3 phi) {
  double t2 = mr_v3_dot(phi, phi), t = sqrt(t2);
  so3_terms k = {.phi = phi};
  if (t < 1e-4) {
    k.s = 1.0 - t2 / 6.0;
    k.c = 0.5 - t2 / 24.0;
    k.j = 1.0 / 6.0 - t2 / 120.0;
  } else {
    double sn = sin(t), cs = cos(t);
    k.s = sn / t;
    k.c = (1.0 - cs) / t2;
    k.j = (t - sn) / (t2 * t);
  }
  return k;
}

/* exp([φ]×) b by Rodrigues' formula */
static mr_vec3 rotate(const so3_terms *k, mr_vec3 b) {
  mr_vec3 pb = mr_v3_cross(k->phi, b);
  return mr_v3_add(mr_v3_madd(b, k->s, pb), mr_v3_scale(mr_v3_cross(k->phi, pb), k->c));
}

/* A⁻¹ b by Cramer's rule (A is 1 + O(Δt ω), far from singular) */
static mr_vec3 solve3(const mr_mat3 *A, mr_vec3 b) {
  mr_vec3 c0 = mr_v3(A->m[0][0], A->m[1][0], A->m[2][0]);
  mr_vec3 c1 = mr_v3(A->m[0][1], A->m[1][1], A->m[2][1]);
  mr_vec3 c2 = mr_v3(A->m[0][2], A->m[1][2], A->m[2][2]);
  double det = mr_v3_dot(c0, mr_v3_cross(c1, c2));
  return mr_v3(mr_v3_dot(b, mr_v3_cross(c1, c2)) / det, mr_v3_dot(c0, mr_v3_cross(b, c2)) / det,
               mr_v3_dot(c0, mr_v3_cross(c1, b)) / det);
}

/* 1 when I = k 1 (then g ≡ 0) */
static int isotropic(const mr_mat3 *I) {
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k)
      if (I->m[r][k] != (r == k ? I->m[0][0] : 0.0)) return 0;
  return 1;
}

/* 1 when dofs iv..iv+5 form a block of M̃ of their own (a free body hanging from the world): then
 * M̃⁻¹ on them needs only their part of the factor */
static int isolated(const mr_data *d, int iv) {
  return d->parent_dof[iv] < 0 && d->nvSubtree[iv] == 6;
}

/* y ← M̃⁻¹ y on an isolated block of 6 dofs from iv: the solves of mr_ldlt_solve restricted to
 * the block (U z = y backward, D⁻¹, Uᵀ x = z forward) */
static void block_solve(const mr_model *m, const mr_data *d, int iv, double *y) {
  const double *U = d->U;
  for (int k = 5; k >= 0; --k)
    for (int i = k - 1; i >= 0; --i)
      y[i] -= U[mr_tri_at(d, iv + i, iv + k)] * y[k];
  for (int k = 0; k < 6; ++k)
    y[k] *= d->Dinv[iv + k];
  for (int k = 0; k < 6; ++k)
    for (int i = 0; i < k; ++i)
      y[k] -= U[mr_tri_at(d, iv + i, iv + k)] * y[i];
}

/* M̃⁻¹ E t into x (nv), E placing t at the angular dofs of the free joint from iv; on an isolated
 * block only x[iv..iv+5] is written */
static void solve_torque(const mr_model *m, const mr_data *d, int iv, mr_vec3 t, double *x) {
  if (isolated(d, iv)) {
    double y[6] = {0.0, 0.0, 0.0, t.v[0], t.v[1], t.v[2]};
    block_solve(m, d, iv, y);
    for (int k = 0; k < 6; ++k)
      x[iv + k] = y[k];
    return;
  }
  mr_zero(x, m->nv);
  store3(t, x + iv + 3);
  mr_ldlt_solve(m, d, x);
}

/* the angular block of M̃⁻¹ for the free joint from iv, column by column through x (nv) */
static mr_mat3 angular_block(const mr_model *m, const mr_data *d, int iv, double *x) {
  mr_mat3 K;
  for (int k = 0; k < 3; ++k) {
    solve_torque(m, d, iv, mr_v3(k == 0, k == 1, k == 2), x);
    for (int r = 0; r < 3; ++r)
      K.m[r][k] = x[iv + 3 + r];
  }
  return K;
}

/* the right Jacobian of the exponential, Jr(φ) = 1 − (1 − cos θ)/θ² [φ]× + (θ − sin θ)/θ³ [φ]×²,
 * θ = |φ|: exp([φ + δ]×) = exp([φ]×) exp([Jr(φ) δ]×) to first order in δ */
static mr_mat3 right_jacobian(const so3_terms *k) {
  mr_mat3 S = mr_m3_skew(k->phi), S2 = mr_m3_mul(&S, &S), J = mr_m3_identity();
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < 3; ++q)
      J.m[r][q] += -k->c * S.m[r][q] + k->j * S2.m[r][q];
  return J;
}

/* F(x) = x − ω_e − K G(x) and its Jacobian 1 − K (Δt/2) exp([φ]×) [b]× Jr(φ), φ = −Δt ω_m,
 * G(x) = exp([φ]×) b − b, ω_m = (ω_e + x)/2 */
static mr_vec3 gyro_residual(const mr_mat3 *K, mr_vec3 we, mr_vec3 b, double dt, mr_vec3 x,
                             mr_mat3 *J) {
  so3_terms e = so3_at(mr_v3_scale(mr_v3_add(we, x), -0.5 * dt));
  mr_mat3 Jr = right_jacobian(&e), D;
  for (int k = 0; k < 3; ++k) { /* column k of exp([φ]×) [b]× Jr */
    mr_vec3 c = rotate(&e, mr_v3_cross(b, mr_v3(Jr.m[0][k], Jr.m[1][k], Jr.m[2][k])));
    for (int r = 0; r < 3; ++r)
      D.m[r][k] = c.v[r];
  }
  mr_mat3 KD = mr_m3_mul(K, &D);
  *J = mr_m3_scale(&KD, -0.5 * dt);
  for (int k = 0; k < 3; ++k)
    J->m[k][k] += 1.0;
  mr_vec3 G = mr_v3_sub(rotate(&e, b), b);
  return mr_v3_sub(mr_v3_sub(x, we), mr_m3_mulv(K, G));
}

/* the gyroscopic impulse G = (exp(−Δt [ω_m]×) − 1) b, ω_m = (ω_e + ω⁺)/2, where ω⁺ = ω_e + K G:
 * Newton on ω⁺ from ω_e, quadratic once within reach, the step halved while it does not reduce
 * |F|; *wm receives ω_m. Beyond about two radians per step (|ω| Δt) a root need not exist: the
 * best iterate's ω_m and G are returned, which keep the world momentum (mr_free_flyer_integrate
 * turns the body by Δt ω_m) but not exactly the energy. */
static mr_vec3 gyro_impulse(const mr_mat3 *K, mr_vec3 we, mr_vec3 b, double dt, mr_vec3 *wm) {
  mr_mat3 J;
  mr_vec3 x = we, F = gyro_residual(K, we, b, dt, x, &J);
  for (int it = 0; it < GYRO_MAX_ITER && mr_v3_norm(F) > 0.0; ++it) {
    mr_vec3 step = solve3(&J, F), y;
    mr_mat3 Jy;
    mr_vec3 Fy = F;
    for (int h = 0; h < GYRO_MAX_HALVINGS; ++h, step = mr_v3_scale(step, 0.5)) {
      y = mr_v3_sub(x, step);
      Fy = gyro_residual(K, we, b, dt, y, &Jy);
      if (mr_v3_norm(Fy) < mr_v3_norm(F)) break;
    }
    if (!(mr_v3_norm(Fy) < mr_v3_norm(F))) break; /* at round-off */
    x = y, F = Fy, J = Jy;
    if (mr_v3_norm(step) <= GYRO_TOL * (1.0 + mr_v3_norm(x))) break;
  }
  *wm = mr_v3_scale(mr_v3_add(we, x), 0.5);
  so3_terms e = so3_at(mr_v3_scale(*wm, -dt));
  return mr_v3_sub(rotate(&e, b), b);
}

/* M̃⁻¹ E t added to v_next, E placing t at the angular dofs of the free joint from iv */
static void add_torque_velocity(const mr_model *m, const mr_data *d, int iv, mr_vec3 t,
                                double *v_next, double *x) {
  solve_torque(m, d, iv, t, x);
  if (isolated(d, iv))
    for (int k = 0; k < 6; ++k)
      v_next[iv + k] += x[iv + k];
  else
    mr_axpy(v_next, 1.0, x, m->nv);
}

/* G and the rotation lag ω⁺ − ω_m (½ K G at a root) stored at the free joint's dofs from iv */
static void store_impulse(mr_vec3 G, mr_vec3 wm, const double *v_next, int iv, double *lag) {
  store3(G, lag + iv);
  store3(mr_v3_sub(load3(v_next + iv + 3), wm), lag + iv + 3);
}

/* one free body: the explicit −Δt g(ω) in v_next replaced by G of the momentum I_c ω_e */
static void gyro_body(const mr_model *m, const mr_data *d, int i, const double *v, double dt,
                      double *v_next, double *x, double *lag) {
  const mr_mat3 *I = &m->bodies[i].inertia.I;
  if (isotropic(I)) return;
  int iv = m->bodies[i].joint.idx_v, ia = iv + 3;
  mr_mat3 K = angular_block(m, d, iv, x);
  mr_vec3 w = load3(v + ia), g0 = mr_v3_scale(gyro(I, w), dt), wm;
  mr_vec3 we = mr_v3_add(load3(v_next + ia), mr_m3_mulv(&K, g0)); /* without −Δt g(ω) */
  mr_vec3 G = gyro_impulse(&K, we, mr_m3_mulv(I, we), dt, &wm);
  add_torque_velocity(m, d, iv, mr_v3_add(G, g0), v_next, x);
  store_impulse(G, wm, v_next, iv, lag);
}

/* one free body after an impulse: G recomputed on the momentum I_c ω', ω' = ω⁺ − K G the
 * velocity with every impulse and without the gyroscopic one, and v_next moved by the change */
static void regyro_body(const mr_model *m, const mr_data *d, int i, double dt, double *v_next,
                        double *x, double *lag) {
  int iv = m->bodies[i].joint.idx_v;
  mr_mat3 K = angular_block(m, d, iv, x);
  mr_vec3 G0 = load3(lag + iv), wm;
  mr_vec3 wc = mr_v3_sub(load3(v_next + iv + 3), mr_m3_mulv(&K, G0));
  mr_vec3 G = gyro_impulse(&K, wc, mr_m3_mulv(&m->bodies[i].inertia.I, wc), dt, &wm);
  add_torque_velocity(m, d, iv, mr_v3_sub(G, G0), v_next, x);
  store_impulse(G, wm, v_next, iv, lag);
}

/* 1 when dv moves one of the six dofs from iv */
static int moved(const double *dv, int iv) {
  for (int k = 0; k < 6; ++k)
    if (dv[iv + k] != 0.0) return 1;
  return 0;
}

void mr_free_flyer_impulse_gyroscopic(const mr_model *m, const mr_data *d, double dt,
                                      const double *dv, double *v_next, double *x, double *lag) {
  for (int i = 1; i < m->nbodies; ++i)
    if (mr_free_flyer_spins(m, d, i) && moved(dv, m->bodies[i].joint.idx_v))
      regyro_body(m, d, i, dt, v_next, x, lag);
}

int mr_free_flyer_spins(const mr_model *m, const mr_data *d, int i) {
  return is_free(m, d, i) && !isotropic(&m->bodies[i].inertia.I);
}

void mr_free_flyer_gyroscopic(const mr_model *m, const mr_data *d, const double *v, double dt,
                              double *v_next, double *x, double *lag) {
  mr_zero(lag, m->nv);
  for (int i = 1; i < m->nbodies; ++i)
    if (is_free(m, d, i)) gyro_body(m, d, i, v, dt, v_next, x, lag);
}

/* a free joint's unit quaternion (x, y, z, w) */
static mr_quat quat_load(const double *x) {
  mr_quat r = {x[0], x[1], x[2], x[3]};
  return mr_quat_normalize(r);
}

/* quat ⊗ exp(φ), normalised, stored (x, y, z, w) */
static void quat_step(mr_quat o, mr_vec3 phi, double *out) {
  double t2 = mr_v3_dot(phi, phi), t = sqrt(t2);
  double s = t < 1e-6 ? 0.5 - t2 / 48.0 : sin(0.5 * t) / t;
  mr_quat e = {s * phi.v[0], s * phi.v[1], s * phi.v[2], cos(0.5 * t)};
  mr_quat r = mr_quat_normalize(mr_quat_mul(o, e));
  out[0] = r.x, out[1] = r.y, out[2] = r.z, out[3] = r.w;
}

/* one free body: R⁺ = R exp(Δt (ω⁺ − lag)), the centre of mass on the chord Δt u_lin, and
 * v_next to the frame of q_next */
static void integrate_body(const mr_model *m, int i, const double *q, double *v_next,
                           const double *lag, double dt, double *q_next) {
  const mr_joint *j = &m->bodies[i].joint;
  const double *q0 = q + j->idx_q;
  double *q1 = q_next + j->idx_q, *w = v_next + j->idx_v;
  mr_quat o0 = quat_load(q0 + 3);
  mr_vec3 c = m->bodies[i].inertia.c, om = load3(w + 3);
  quat_step(o0, mr_v3_scale(mr_v3_sub(om, load3(lag + j->idx_v + 3)), dt), q1 + 3);
  mr_mat3 R0 = mr_quat_to_m3(o0), R1 = mr_quat_to_m3(quat_load(q1 + 3));
  mr_vec3 u = mr_m3_mulv(&R0, mr_v3_add(load3(w), mr_v3_cross(om, c)));
  mr_vec3 com1 = mr_v3_madd(mr_v3_add(load3(q0), mr_m3_mulv(&R0, c)), dt, u);
  store3(mr_v3_sub(com1, mr_m3_mulv(&R1, c)), q1);
  store3(mr_v3_sub(mr_m3_tmulv(&R1, u), mr_v3_cross(om, c)), w);
}

void mr_free_flyer_integrate(const mr_model *m, const mr_data *d, const double *q,
                             double *v_next, const double *lag, double dt, double *q_next) {
  mr_integrate(m, q, v_next, dt, q_next);
  for (int i = 1; i < m->nbodies; ++i)
    if (is_free(m, d, i)) integrate_body(m, i, q, v_next, lag, dt, q_next);
}
