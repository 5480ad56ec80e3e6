/* Joint models: the placement of a body in its parent from the joint coordinates,
 * liMi = placement ∘ joint(q), and the motion subspace S (columns in the child frame).
 *
 *   revolute about a unit axis a:  joint(q) = (exp3(q a), 0),        S = (0, a)
 *   prismatic along a:             joint(q) = (1, q a),              S = (a, 0)
 *   spherical (quaternion x y z w): joint(q) = (R(quat), 0),         S = [0; 1₃]
 *   free ([p, quat]):              joint(q) = (R(quat), p),          S = 1₆ (local twist)
 * Revolute joints about the x, y or z axis have their own placement kernels (one sincos and
 * six multiply-adds per column instead of a full rotation product). */
#include "dynamics/internal.h"

/* R = Rp Rx(c, s) etc.: the columns of Rp mixed by the planar rotation */
static void rotate_columns(mr_mat3 *R, const mr_mat3 *Rp, int a, int b, double c, double s) {
  for (int r = 0; r < 3; ++r) {
    double pa = Rp->m[r][a], pb = Rp->m[r][b];
    R->m[r][a] = c * pa + s * pb;
    R->m[r][b] = -s * pa + c * pb;
  }
}

static void place_rev_x(const mr_body *b, const double *restrict q, mr_se3 *M) {
  double s = sin(q[0]), c = cos(q[0]);
  const mr_mat3 *Rp = &b->placement.R;
  for (int r = 0; r < 3; ++r)
    M->R.m[r][0] = Rp->m[r][0];
  rotate_columns(&M->R, Rp, 1, 2, c, s);
  M->p = b->placement.p;
}

static void place_rev_y(const mr_body *b, const double *restrict q, mr_se3 *M) {
  double s = sin(q[0]), c = cos(q[0]);
  const mr_mat3 *Rp = &b->placement.R;
  for (int r = 0; r < 3; ++r)
    M->R.m[r][1] = Rp->m[r][1];
  /* Ry: col0 = c e0 − s e2, col2 = s e0 + c e2, i.e. the (2, 0) pair rotated */
  rotate_columns(&M->R, Rp, 2, 0, c, s);
  M->p = b->placement.p;
}

static void place_rev_z(const mr_body *b, const double *restrict q, mr_se3 *M) {
  double s = sin(q[0]), c = cos(q[0]);
  const mr_mat3 *Rp = &b->placement.R;
  for (int r = 0; r < 3; ++r)
    M->R.m[r][2] = Rp->m[r][2];
  rotate_columns(&M->R, Rp, 0, 1, c, s);
  M->p = b->placement.p;
}

static void place_rev(const mr_body *b, const double *restrict q, mr_se3 *M) {
  mr_mat3 Rj = mr_m3_axis_angle(b->joint.axis, q[0]);
  M->R = mr_m3_mul(&b->placement.R, &Rj);
  M->p = b->placement.p;
}

static void place_prismatic(const mr_body *b, const double *restrict q, mr_se3 *M) {
  M->R = b->placement.R;
  M->p = mr_v3_add(b->placement.p, mr_m3_mulv(&b->placement.R, mr_v3_scale(b->joint.axis, q[0])));
}

static void place_spherical(const mr_body *b, const double *restrict q, mr_se3 *M) {
  mr_quat u = {q[0], q[1], q[2], q[3]};
  mr_mat3 Rj = mr_quat_to_m3(u);
  M->R = mr_m3_mul(&b->placement.R, &Rj);
  M->p = b->placement.p;
}

static void place_free(const mr_body *b, const double *restrict q, mr_se3 *M) {
  mr_quat u = {q[3], q[4], q[5], q[6]};
  mr_se3 J = {mr_quat_to_m3(u), mr_v3(q[0], q[1], q[2])};
  *M = mr_se3_mul(&b->placement, &J);
}

static void place_none(const mr_body *b, const double *restrict q, mr_se3 *M) {
  *M = b->placement;
}

const mr_joint_place_fn mr_joint_place[JK_COUNT] = {
    [JK_NONE] = place_none,           [JK_REV_X] = place_rev_x, [JK_REV_Y] = place_rev_y,
    [JK_REV_Z] = place_rev_z,         [JK_REV] = place_rev,     [JK_PRISMATIC] = place_prismatic,
    [JK_SPHERICAL] = place_spherical, [JK_FREE] = place_free,
};

/* an axis equal to +e_k exactly (after the model's normalisation), or -1 */
static int unit_axis(mr_vec3 a) {
  for (int k = 0; k < 3; ++k)
    if (a.v[k] == 1.0 && a.v[(k + 1) % 3] == 0.0 && a.v[(k + 2) % 3] == 0.0) return k;
  return -1;
}

int mr_joint_kind(const mr_joint *j) {
  switch (j->type) {
  case MR_JOINT_REVOLUTE:
  case MR_JOINT_CONTINUOUS: {
    int k = unit_axis(j->axis);
    return k < 0 ? JK_REV : JK_REV_X + k;
  }
  case MR_JOINT_PRISMATIC:
    return JK_PRISMATIC;
  case MR_JOINT_SPHERICAL:
    return JK_SPHERICAL;
  case MR_JOINT_FREE:
    return JK_FREE;
  default:
    return JK_NONE;
  }
}

void mr_joint_subspace(const mr_joint *j, mr_motion *S) {
  for (int k = 0; k < j->nv; ++k)
    S[k] = mr_motion_zero();
  switch (j->type) {
  case MR_JOINT_REVOLUTE:
  case MR_JOINT_CONTINUOUS:
    S[0].w = j->axis;
    break;
  case MR_JOINT_PRISMATIC:
    S[0].v = j->axis;
    break;
  case MR_JOINT_SPHERICAL:
    for (int k = 0; k < 3; ++k)
      S[k].w.v[k] = 1.0;
    break;
  case MR_JOINT_FREE:
    for (int k = 0; k < 3; ++k)
      S[k].v.v[k] = 1.0, S[k + 3].w.v[k] = 1.0;
    break;
  default:
    break;
  }
}
