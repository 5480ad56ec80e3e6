/* Spatial algebra, double precision, as static inline value functions.
 *
 * Conventions (Featherstone's algebra in Pinocchio's ordering):
 *   mr_se3 {R, p} is the placement of frame B in frame A: x_A = R x_B + p.
 *   mr_motion {v, w}: linear then angular velocity, both expressed in one frame at its origin.
 *   mr_force {f, n}: force then moment about the frame origin.
 *   mr_inertia {m, c, I}: mass, centre of mass and rotational inertia about the centre of mass,
 *   all expressed in the body frame.
 *   mr_quat {x, y, z, w}: unit quaternion, the storage order of free-flyer configurations.
 * Matrices are row-major: m[row][col]. */
#ifndef MOREAU_SPATIAL_H
#define MOREAU_SPATIAL_H

#include <math.h>

typedef struct {
  double v[3];
} mr_vec3;
typedef struct {
  double m[3][3];
} mr_mat3;
typedef struct {
  double x, y, z, w;
} mr_quat;
typedef struct {
  mr_mat3 R;
  mr_vec3 p;
} mr_se3;
typedef struct {
  mr_vec3 v, w;
} mr_motion;
typedef struct {
  mr_vec3 f, n;
} mr_force;
typedef struct {
  double m;
  mr_vec3 c;
  mr_mat3 I;
} mr_inertia;

/* ---- 3-vectors ---- */

static inline mr_vec3 mr_v3(double x, double y, double z) {
  mr_vec3 r = {{x, y, z}};
  return r;
}
static inline mr_vec3 mr_v3_zero(void) { return mr_v3(0, 0, 0); }
static inline mr_vec3 mr_v3_add(mr_vec3 a, mr_vec3 b) {
  return mr_v3(a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2]);
}
static inline mr_vec3 mr_v3_sub(mr_vec3 a, mr_vec3 b) {
  return mr_v3(a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2]);
}
static inline mr_vec3 mr_v3_scale(mr_vec3 a, double s) {
  return mr_v3(a.v[0] * s, a.v[1] * s, a.v[2] * s);
}
static inline mr_vec3 mr_v3_neg(mr_vec3 a) { return mr_v3(-a.v[0], -a.v[1], -a.v[2]); }
/* a + s b */
static inline mr_vec3 mr_v3_madd(mr_vec3 a, double s, mr_vec3 b) {
  return mr_v3(a.v[0] + s * b.v[0], a.v[1] + s * b.v[1], a.v[2] + s * b.v[2]);
}
static inline double mr_v3_dot(mr_vec3 a, mr_vec3 b) {
  return a.v[0] * b.v[0] + a.v[1] * b.v[1] + a.v[2] * b.v[2];
}
static inline mr_vec3 mr_v3_cross(mr_vec3 a, mr_vec3 b) {
  return mr_v3(a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2],
               a.v[0] * b.v[1] - a.v[1] * b.v[0]);
}
static inline double mr_v3_norm(mr_vec3 a) { return sqrt(mr_v3_dot(a, a)); }
/* a / |a|, or the zero vector when |a| == 0 */
static inline mr_vec3 mr_v3_normalize(mr_vec3 a) {
  double n = mr_v3_norm(a);
  return n > 0.0 ? mr_v3_scale(a, 1.0 / n) : mr_v3_zero();
}

/* ---- 3x3 matrices ---- */

static inline mr_mat3 mr_m3_identity(void) {
  mr_mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  return r;
}
static inline mr_mat3 mr_m3_zero(void) {
  mr_mat3 r = {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
  return r;
}
static inline mr_mat3 mr_m3_diag(double a, double b, double c) {
  mr_mat3 r = {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
  return r;
}
static inline mr_vec3 mr_m3_mulv(const mr_mat3 *A, mr_vec3 x) {
  return mr_v3(A->m[0][0] * x.v[0] + A->m[0][1] * x.v[1] + A->m[0][2] * x.v[2],
               A->m[1][0] * x.v[0] + A->m[1][1] * x.v[1] + A->m[1][2] * x.v[2],
               A->m[2][0] * x.v[0] + A->m[2][1] * x.v[1] + A->m[2][2] * x.v[2]);
}
/* Aᵀ x */
static inline mr_vec3 mr_m3_tmulv(const mr_mat3 *A, mr_vec3 x) {
  return mr_v3(A->m[0][0] * x.v[0] + A->m[1][0] * x.v[1] + A->m[2][0] * x.v[2],
               A->m[0][1] * x.v[0] + A->m[1][1] * x.v[1] + A->m[2][1] * x.v[2],
               A->m[0][2] * x.v[0] + A->m[1][2] * x.v[1] + A->m[2][2] * x.v[2]);
}
static inline mr_mat3 mr_m3_mul(const mr_mat3 *A, const mr_mat3 *B) {
  mr_mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C.m[i][j] = A->m[i][0] * B->m[0][j] + A->m[i][1] * B->m[1][j] + A->m[i][2] * B->m[2][j];
  return C;
}
/* Aᵀ B */
static inline mr_mat3 mr_m3_tmul(const mr_mat3 *A, const mr_mat3 *B) {
  mr_mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C.m[i][j] = A->m[0][i] * B->m[0][j] + A->m[1][i] * B->m[1][j] + A->m[2][i] * B->m[2][j];
  return C;
}
/* A Bᵀ */
static inline mr_mat3 mr_m3_mult(const mr_mat3 *A, const mr_mat3 *B) {
  mr_mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C.m[i][j] = A->m[i][0] * B->m[j][0] + A->m[i][1] * B->m[j][1] + A->m[i][2] * B->m[j][2];
  return C;
}
static inline mr_mat3 mr_m3_transpose(const mr_mat3 *A) {
  mr_mat3 T;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) T.m[i][j] = A->m[j][i];
  return T;
}
static inline mr_mat3 mr_m3_add(const mr_mat3 *A, const mr_mat3 *B) {
  mr_mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C.m[i][j] = A->m[i][j] + B->m[i][j];
  return C;
}
static inline mr_mat3 mr_m3_scale(const mr_mat3 *A, double s) {
  mr_mat3 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C.m[i][j] = A->m[i][j] * s;
  return C;
}
/* the matrix [a]x with [a]x b = a x b */
static inline mr_mat3 mr_m3_skew(mr_vec3 a) {
  mr_mat3 S = {{{0, -a.v[2], a.v[1]}, {a.v[2], 0, -a.v[0]}, {-a.v[1], a.v[0], 0}}};
  return S;
}
/* R A Rᵀ: a rotational inertia re-expressed in the rotated frame */
static inline mr_mat3 mr_m3_rotate(const mr_mat3 *R, const mr_mat3 *A) {
  mr_mat3 RA = mr_m3_mul(R, A);
  return mr_m3_mult(&RA, R);
}

/* ---- rotations ---- */

/* rotation about a unit axis by angle (Rodrigues) */
static inline mr_mat3 mr_m3_axis_angle(mr_vec3 axis, double angle) {
  double s = sin(angle), c = cos(angle), t = 1.0 - c;
  double x = axis.v[0], y = axis.v[1], z = axis.v[2];
  mr_mat3 R = {{{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
                {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
                {t * x * z - s * y, t * y * z + s * x, t * z * z + c}}};
  return R;
}
/* URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) */
static inline mr_mat3 mr_m3_rpy(double roll, double pitch, double yaw) {
  mr_mat3 Rx = mr_m3_axis_angle(mr_v3(1, 0, 0), roll);
  mr_mat3 Ry = mr_m3_axis_angle(mr_v3(0, 1, 0), pitch);
  mr_mat3 Rz = mr_m3_axis_angle(mr_v3(0, 0, 1), yaw);
  mr_mat3 Ryx = mr_m3_mul(&Ry, &Rx);
  return mr_m3_mul(&Rz, &Ryx);
}

/* ---- quaternions (x, y, z, w) ---- */

static inline mr_quat mr_quat_identity(void) {
  mr_quat q = {0, 0, 0, 1};
  return q;
}
static inline double mr_quat_norm(mr_quat q) {
  return sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
}
static inline mr_quat mr_quat_normalize(mr_quat q) {
  double n = mr_quat_norm(q);
  mr_quat r = {q.x / n, q.y / n, q.z / n, q.w / n};
  return r;
}
/* Hamilton product a b */
static inline mr_quat mr_quat_mul(mr_quat a, mr_quat b) {
  mr_quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
               a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
               a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
               a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
  return r;
}
static inline mr_quat mr_quat_conj(mr_quat q) {
  mr_quat r = {-q.x, -q.y, -q.z, q.w};
  return r;
}
static inline mr_mat3 mr_quat_to_m3(mr_quat q) {
  double x = q.x, y = q.y, z = q.z, w = q.w;
  mr_mat3 R = {{{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}}};
  return R;
}
/* rotation matrix to unit quaternion (Shepperd's method), with w >= 0 */
static inline mr_quat mr_m3_to_quat(const mr_mat3 *R) {
  double tr = R->m[0][0] + R->m[1][1] + R->m[2][2];
  mr_quat q;
  if (tr > 0.0) {
    double s = 2.0 * sqrt(tr + 1.0);
    q.w = 0.25 * s;
    q.x = (R->m[2][1] - R->m[1][2]) / s;
    q.y = (R->m[0][2] - R->m[2][0]) / s;
    q.z = (R->m[1][0] - R->m[0][1]) / s;
  } else if (R->m[0][0] > R->m[1][1] && R->m[0][0] > R->m[2][2]) {
    double s = 2.0 * sqrt(1.0 + R->m[0][0] - R->m[1][1] - R->m[2][2]);
    q.w = (R->m[2][1] - R->m[1][2]) / s;
    q.x = 0.25 * s;
    q.y = (R->m[0][1] + R->m[1][0]) / s;
    q.z = (R->m[0][2] + R->m[2][0]) / s;
  } else if (R->m[1][1] > R->m[2][2]) {
    double s = 2.0 * sqrt(1.0 + R->m[1][1] - R->m[0][0] - R->m[2][2]);
    q.w = (R->m[0][2] - R->m[2][0]) / s;
    q.x = (R->m[0][1] + R->m[1][0]) / s;
    q.y = 0.25 * s;
    q.z = (R->m[1][2] + R->m[2][1]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + R->m[2][2] - R->m[0][0] - R->m[1][1]);
    q.w = (R->m[1][0] - R->m[0][1]) / s;
    q.x = (R->m[0][2] + R->m[2][0]) / s;
    q.y = (R->m[1][2] + R->m[2][1]) / s;
    q.z = 0.25 * s;
  }
  if (q.w < 0.0) {
    q.x = -q.x, q.y = -q.y, q.z = -q.z, q.w = -q.w;
  }
  return mr_quat_normalize(q);
}

/* ---- SE(3) placements ---- */

static inline mr_se3 mr_se3_identity(void) {
  mr_se3 T = {mr_m3_identity(), {{0, 0, 0}}};
  return T;
}
static inline mr_se3 mr_se3_make(mr_mat3 R, mr_vec3 p) {
  mr_se3 T = {R, p};
  return T;
}
/* a b: placement of C in A from B in A (a) and C in B (b) */
static inline mr_se3 mr_se3_mul(const mr_se3 *a, const mr_se3 *b) {
  mr_se3 T;
  T.R = mr_m3_mul(&a->R, &b->R);
  T.p = mr_v3_add(mr_m3_mulv(&a->R, b->p), a->p);
  return T;
}
static inline mr_se3 mr_se3_inverse(const mr_se3 *a) {
  mr_se3 T;
  T.R = mr_m3_transpose(&a->R);
  T.p = mr_v3_neg(mr_m3_mulv(&T.R, a->p));
  return T;
}
/* aᵀ b = a⁻¹ b */
static inline mr_se3 mr_se3_inv_mul(const mr_se3 *a, const mr_se3 *b) {
  mr_se3 T;
  T.R = mr_m3_tmul(&a->R, &b->R);
  T.p = mr_m3_tmulv(&a->R, mr_v3_sub(b->p, a->p));
  return T;
}
/* point x_B to x_A */
static inline mr_vec3 mr_se3_act_point(const mr_se3 *a, mr_vec3 x) {
  return mr_v3_add(mr_m3_mulv(&a->R, x), a->p);
}
/* point x_A to x_B */
static inline mr_vec3 mr_se3_inv_act_point(const mr_se3 *a, mr_vec3 x) {
  return mr_m3_tmulv(&a->R, mr_v3_sub(x, a->p));
}

/* ---- spatial motion and force vectors ---- */

static inline mr_motion mr_motion_zero(void) {
  mr_motion m = {{{0, 0, 0}}, {{0, 0, 0}}};
  return m;
}
static inline mr_force mr_force_zero(void) {
  mr_force f = {{{0, 0, 0}}, {{0, 0, 0}}};
  return f;
}
static inline mr_motion mr_motion_add(mr_motion a, mr_motion b) {
  mr_motion r = {mr_v3_add(a.v, b.v), mr_v3_add(a.w, b.w)};
  return r;
}
static inline mr_motion mr_motion_sub(mr_motion a, mr_motion b) {
  mr_motion r = {mr_v3_sub(a.v, b.v), mr_v3_sub(a.w, b.w)};
  return r;
}
static inline mr_motion mr_motion_scale(mr_motion a, double s) {
  mr_motion r = {mr_v3_scale(a.v, s), mr_v3_scale(a.w, s)};
  return r;
}
static inline mr_force mr_force_add(mr_force a, mr_force b) {
  mr_force r = {mr_v3_add(a.f, b.f), mr_v3_add(a.n, b.n)};
  return r;
}
static inline mr_force mr_force_sub(mr_force a, mr_force b) {
  mr_force r = {mr_v3_sub(a.f, b.f), mr_v3_sub(a.n, b.n)};
  return r;
}
static inline mr_force mr_force_scale(mr_force a, double s) {
  mr_force r = {mr_v3_scale(a.f, s), mr_v3_scale(a.n, s)};
  return r;
}
/* power ⟨f, m⟩ */
static inline double mr_force_dot(mr_force f, mr_motion m) {
  return mr_v3_dot(f.f, m.v) + mr_v3_dot(f.n, m.w);
}
/* motion from frame B to frame A: (R v + p × R w, R w) */
static inline mr_motion mr_se3_act_motion(const mr_se3 *a, mr_motion m) {
  mr_motion r;
  r.w = mr_m3_mulv(&a->R, m.w);
  r.v = mr_v3_add(mr_m3_mulv(&a->R, m.v), mr_v3_cross(a->p, r.w));
  return r;
}
/* motion from frame A to frame B: (Rᵀ (v − p × w), Rᵀ w) */
static inline mr_motion mr_se3_inv_act_motion(const mr_se3 *a, mr_motion m) {
  mr_motion r;
  r.w = mr_m3_tmulv(&a->R, m.w);
  r.v = mr_m3_tmulv(&a->R, mr_v3_sub(m.v, mr_v3_cross(a->p, m.w)));
  return r;
}
/* force from frame B to frame A: (R f, R n + p × R f) */
static inline mr_force mr_se3_act_force(const mr_se3 *a, mr_force f) {
  mr_force r;
  r.f = mr_m3_mulv(&a->R, f.f);
  r.n = mr_v3_add(mr_m3_mulv(&a->R, f.n), mr_v3_cross(a->p, r.f));
  return r;
}
/* force from frame A to frame B: (Rᵀ f, Rᵀ (n − p × f)) */
static inline mr_force mr_se3_inv_act_force(const mr_se3 *a, mr_force f) {
  mr_force r;
  r.f = mr_m3_tmulv(&a->R, f.f);
  r.n = mr_m3_tmulv(&a->R, mr_v3_sub(f.n, mr_v3_cross(a->p, f.f)));
  return r;
}
/* motion cross product a × b = (wa × vb + va × wb, wa × wb) */
static inline mr_motion mr_motion_cross(mr_motion a, mr_motion b) {
  mr_motion r;
  r.v = mr_v3_add(mr_v3_cross(a.w, b.v), mr_v3_cross(a.v, b.w));
  r.w = mr_v3_cross(a.w, b.w);
  return r;
}
/* dual cross product a ×* f = (wa × f, wa × n + va × f) */
static inline mr_force mr_motion_cross_force(mr_motion a, mr_force f) {
  mr_force r;
  r.f = mr_v3_cross(a.w, f.f);
  r.n = mr_v3_add(mr_v3_cross(a.w, f.n), mr_v3_cross(a.v, f.f));
  return r;
}
/* velocity of a point at position r (relative to the frame origin) in the same frame */
static inline mr_vec3 mr_motion_point_velocity(mr_motion m, mr_vec3 r) {
  return mr_v3_add(m.v, mr_v3_cross(m.w, r));
}

/* ---- spatial inertias ---- */

static inline mr_inertia mr_inertia_zero(void) {
  mr_inertia Y = {0.0, {{0, 0, 0}}, mr_m3_zero()};
  return Y;
}
/* momentum I m: h = mass (v + w × c), n = I_c w + c × h */
static inline mr_force mr_inertia_mul(const mr_inertia *Y, mr_motion m) {
  mr_force r;
  r.f = mr_v3_scale(mr_v3_add(m.v, mr_v3_cross(m.w, Y->c)), Y->m);
  r.n = mr_v3_add(mr_m3_mulv(&Y->I, m.w), mr_v3_cross(Y->c, r.f));
  return r;
}
/* inertia of frame B expressed in frame A */
static inline mr_inertia mr_se3_act_inertia(const mr_se3 *a, const mr_inertia *Y) {
  mr_inertia r;
  r.m = Y->m;
  r.c = mr_se3_act_point(a, Y->c);
  r.I = mr_m3_rotate(&a->R, &Y->I);
  return r;
}
/* sum of two inertias expressed in the same frame (parallel axis theorem) */
static inline mr_inertia mr_inertia_add(const mr_inertia *a, const mr_inertia *b) {
  mr_inertia r = mr_inertia_zero();
  r.m = a->m + b->m;
  if (!(r.m > 0.0)) return r;
  r.c = mr_v3_scale(mr_v3_add(mr_v3_scale(a->c, a->m), mr_v3_scale(b->c, b->m)), 1.0 / r.m);
  mr_vec3 da = mr_v3_sub(a->c, r.c), db = mr_v3_sub(b->c, r.c);
  mr_mat3 Sa = mr_m3_skew(da), Sb = mr_m3_skew(db);
  mr_mat3 Pa = mr_m3_mul(&Sa, &Sa), Pb = mr_m3_mul(&Sb, &Sb);
  /* I = Ia + Ib − ma [da]x² − mb [db]x² */
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.I.m[i][j] = a->I.m[i][j] + b->I.m[i][j] - a->m * Pa.m[i][j] - b->m * Pb.m[i][j];
  return r;
}
/* the 6x6 matrix of an inertia, in (linear, angular) ordering */
static inline void mr_inertia_matrix(const mr_inertia *Y, double M[6][6]) {
  mr_mat3 C = mr_m3_skew(Y->c);
  mr_mat3 CC = mr_m3_mul(&C, &C);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      M[i][j] = (i == j) ? Y->m : 0.0;
      M[i][j + 3] = -Y->m * C.m[i][j];
      M[i + 3][j] = Y->m * C.m[i][j];
      M[i + 3][j + 3] = Y->I.m[i][j] - Y->m * CC.m[i][j];
    }
}

#endif
