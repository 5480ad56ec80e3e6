/* The configuration manifold: neutral and random configurations, integration q ⊕ v and
 * difference q1 ⊖ q0, per joint type through a table.
 *
 *   revolute, prismatic:  q ⊕ v = q + v
 *   spherical (SO(3)):    quat ⊕ w = quat ⊗ exp(w)           (w in the child frame)
 *   free (SE(3)):         M ⊕ ν = M · exp6(ν),  exp6(v, w) = (exp3(w), V(w) v),
 *                         V(w) = 1 + (1 − cos θ)/θ² [w]x + (θ − sin θ)/θ³ [w]x²
 * and the difference is the matching logarithm: log3 through the quaternion, and
 * V⁻¹(w) = 1 − ½[w]x + (1/θ²)(1 − θ sin θ / (2 (1 − cos θ))) [w]x². Random rotations are
 * uniform (Shoemake's subgroup algorithm); random numbers come from splitmix64. */
#include "dynamics/internal.h"

/* ---- SO(3) through unit quaternions ---- */

/* exp of a rotation vector as a quaternion */
static mr_quat quat_exp(mr_vec3 w) {
  double t2 = mr_v3_dot(w, w), t = sqrt(t2);
  double s = t < 1e-6 ? 0.5 - t2 / 48.0 : sin(0.5 * t) / t;
  mr_quat r = {s * w.v[0], s * w.v[1], s * w.v[2], cos(0.5 * t)};
  return r;
}

/* rotation vector of a unit quaternion, the shortest one (angle in [0, π]) */
static mr_vec3 quat_log(mr_quat q) {
  if (q.w < 0.0) q.x = -q.x, q.y = -q.y, q.z = -q.z, q.w = -q.w;
  mr_vec3 u = mr_v3(q.x, q.y, q.z);
  double n = mr_v3_norm(u);
  double k = n < 1e-6 ? 2.0 / q.w * (1.0 - n * n / (3.0 * q.w * q.w)) : 2.0 * atan2(n, q.w) / n;
  return mr_v3_scale(u, k);
}

static mr_quat quat_load(const double *q) {
  mr_quat r = {q[0], q[1], q[2], q[3]};
  return r;
}

static void quat_store(mr_quat r, double *q) {
  r = mr_quat_normalize(r);
  q[0] = r.x, q[1] = r.y, q[2] = r.z, q[3] = r.w;
}

/* ---- SE(3) translation part ---- */

/* coefficients (1 − cos θ)/θ², (θ − sin θ)/θ³ of V(w) */
static void v_coeffs(double t2, double *a, double *b) {
  double t = sqrt(t2);
  if (t < 1e-4) {
    *a = 0.5 - t2 / 24.0;
    *b = 1.0 / 6.0 - t2 / 120.0;
  } else {
    *a = (1.0 - cos(t)) / t2;
    *b = (t - sin(t)) / (t2 * t);
  }
}

/* x + a (w × x) + b (w × (w × x)) */
static mr_vec3 apply_v(mr_vec3 w, mr_vec3 x, double a, double b) {
  mr_vec3 wx = mr_v3_cross(w, x);
  return mr_v3_add(mr_v3_madd(x, a, wx), mr_v3_scale(mr_v3_cross(w, wx), b));
}

/* V⁻¹(w) x */
static mr_vec3 apply_vinv(mr_vec3 w, mr_vec3 x) {
  double t2 = mr_v3_dot(w, w), t = sqrt(t2);
  double c = t < 1e-4 ? 1.0 / 12.0 + t2 / 720.0 : (1.0 - t * sin(t) / (2.0 * (1.0 - cos(t)))) / t2;
  return apply_v(w, x, -0.5, c);
}

/* ---- per joint type ---- */

typedef struct {
  void (*neutral)(double *q);
  void (*integrate)(const double *q, const double *v, double dt, double *qout);
  void (*difference)(const double *q0, const double *q1, double *v);
  void (*random)(const double *lo, const double *hi, uint64_t *seed, double *q);
  void (*normalize)(double *q);
} lie_ops;

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double uniform01(uint64_t *s) {
  return (double)(splitmix64(s) >> 11) * 0x1.0p-53;
}

/* uniform in [lo, hi], a missing bound taken as ∓def (or def beyond the other bound) */
static double uniform_in(double lo, double hi, double def, uint64_t *s) {
  if (!isfinite(lo)) lo = fmin(-def, hi - def); /* at least def below a finite upper bound */
  if (!isfinite(hi)) hi = fmax(def, lo + def);
  return lo + (hi - lo) * uniform01(s);
}

static mr_quat random_quat(uint64_t *s) {
  double u1 = uniform01(s), u2 = 2.0 * M_PI * uniform01(s), u3 = 2.0 * M_PI * uniform01(s);
  double a = sqrt(1.0 - u1), b = sqrt(u1);
  mr_quat r = {a * sin(u2), a * cos(u2), b * sin(u3), b * cos(u3)};
  return r;
}

static void r1_neutral(double *q) {
  q[0] = 0.0;
}
static void r1_integrate(const double *q, const double *v, double dt, double *qout) {
  qout[0] = q[0] + v[0] * dt;
}
static void r1_difference(const double *q0, const double *q1, double *v) {
  v[0] = q1[0] - q0[0];
}
static void rev_random(const double *lo, const double *hi, uint64_t *s, double *q) {
  q[0] = uniform_in(lo[0], hi[0], M_PI, s);
}
static void prism_random(const double *lo, const double *hi, uint64_t *s, double *q) {
  q[0] = uniform_in(lo[0], hi[0], 1.0, s);
}
static void r1_normalize(double *q) {
  (void)q;
}

static void sph_neutral(double *q) {
  q[0] = q[1] = q[2] = 0.0, q[3] = 1.0;
}
static void sph_integrate(const double *q, const double *v, double dt, double *qout) {
  mr_quat r = mr_quat_mul(quat_load(q), quat_exp(mr_v3(v[0] * dt, v[1] * dt, v[2] * dt)));
  quat_store(r, qout);
}
static void sph_difference(const double *q0, const double *q1, double *v) {
  mr_vec3 w = quat_log(mr_quat_mul(mr_quat_conj(quat_load(q0)), quat_load(q1)));
  v[0] = w.v[0], v[1] = w.v[1], v[2] = w.v[2];
}
static void sph_random(const double *lo, const double *hi, uint64_t *s, double *q) {
  quat_store(random_quat(s), q);
}
static void sph_normalize(double *q) {
  quat_store(quat_load(q), q);
}

static void free_neutral(double *q) {
  q[0] = q[1] = q[2] = 0.0, sph_neutral(q + 3);
}
static void free_integrate(const double *q, const double *v, double dt, double *qout) {
  mr_vec3 lin = mr_v3(v[0] * dt, v[1] * dt, v[2] * dt), w = mr_v3(v[3] * dt, v[4] * dt, v[5] * dt);
  double a, b;
  v_coeffs(mr_v3_dot(w, w), &a, &b);
  mr_mat3 R = mr_quat_to_m3(mr_quat_normalize(quat_load(q + 3)));
  mr_vec3 dp = mr_m3_mulv(&R, apply_v(w, lin, a, b));
  double p[3] = {q[0] + dp.v[0], q[1] + dp.v[1], q[2] + dp.v[2]};
  sph_integrate(q + 3, v + 3, dt, qout + 3);
  qout[0] = p[0], qout[1] = p[1], qout[2] = p[2];
}
static void free_difference(const double *q0, const double *q1, double *v) {
  mr_quat r0 = mr_quat_normalize(quat_load(q0 + 3));
  mr_vec3 w = quat_log(mr_quat_mul(mr_quat_conj(r0), quat_load(q1 + 3)));
  mr_mat3 R0 = mr_quat_to_m3(r0);
  mr_vec3 dp = mr_m3_tmulv(&R0, mr_v3(q1[0] - q0[0], q1[1] - q0[1], q1[2] - q0[2]));
  mr_vec3 lin = apply_vinv(w, dp);
  for (int k = 0; k < 3; ++k)
    v[k] = lin.v[k], v[k + 3] = w.v[k];
}
static void free_random(const double *lo, const double *hi, uint64_t *s, double *q) {
  for (int k = 0; k < 3; ++k)
    q[k] = uniform_in(lo[k], hi[k], 1.0, s);
  quat_store(random_quat(s), q + 3);
}
static void free_normalize(double *q) {
  sph_normalize(q + 3);
}

static const lie_ops lie_table[MR_JOINT_TYPE_COUNT] = {
    [MR_JOINT_REVOLUTE] = {r1_neutral, r1_integrate, r1_difference, rev_random, r1_normalize},
    [MR_JOINT_CONTINUOUS] = {r1_neutral, r1_integrate, r1_difference, rev_random, r1_normalize},
    [MR_JOINT_PRISMATIC] = {r1_neutral, r1_integrate, r1_difference, prism_random, r1_normalize},
    [MR_JOINT_SPHERICAL] = {sph_neutral, sph_integrate, sph_difference, sph_random, sph_normalize},
    [MR_JOINT_FREE] = {free_neutral, free_integrate, free_difference, free_random, free_normalize},
};

/* the operations of body i's joint, or NULL for the world */
static const lie_ops *ops(const mr_model *m, int i) {
  const lie_ops *o = &lie_table[m->bodies[i].joint.type];
  return o->neutral ? o : NULL;
}

void mr_neutral(const mr_model *m, double *q) {
  for (int i = 1; i < m->nbodies; ++i)
    if (ops(m, i)) ops(m, i)->neutral(q + m->bodies[i].joint.idx_q);
}

void mr_random_configuration(const mr_model *m, uint64_t *seed, double *q) {
  for (int i = 1; i < m->nbodies; ++i) {
    int iq = m->bodies[i].joint.idx_q;
    if (ops(m, i)) ops(m, i)->random(m->lower + iq, m->upper + iq, seed, q + iq);
  }
}

void mr_integrate(const mr_model *m, const double *q, const double *v, double dt, double *qout) {
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    if (ops(m, i)) ops(m, i)->integrate(q + j->idx_q, v + j->idx_v, dt, qout + j->idx_q);
  }
}

void mr_difference(const mr_model *m, const double *q0, const double *q1, double *v) {
  for (int i = 1; i < m->nbodies; ++i) {
    const mr_joint *j = &m->bodies[i].joint;
    if (ops(m, i)) ops(m, i)->difference(q0 + j->idx_q, q1 + j->idx_q, v + j->idx_v);
  }
}

void mr_normalize(const mr_model *m, double *q) {
  for (int i = 1; i < m->nbodies; ++i)
    if (ops(m, i)) ops(m, i)->normalize(q + m->bodies[i].joint.idx_q);
}
