/* Trajectory CSV columns named after the world (columns.h). A joint J contributes, in q order
 *   1-dof        J_q
 *   free-flyer   J_x J_y J_z J_qx J_qy J_qz J_qw   (world position and orientation of the body)
 *   spherical    J_qx J_qy J_qz J_qw
 * and in v order
 *   1-dof        J_v
 *   free-flyer   J_vx J_vy J_vz J_wx J_wy J_wz     (linear and angular velocity, body frame)
 *   spherical    J_wx J_wy J_wz                    (body frame)
 * Optional groups: J_world_vx ... J_world_wz, the free-flyer's velocity in the world frame
 * (v_w = R v, ω_w = R ω with R the body's orientation); B_px B_py B_pz B_qx B_qy B_qz B_qw, the
 * world pose of body B; R/com_x R/com_y R/com_z, robot R's centre of mass. Quaternions from
 * rotation matrices by Shepperd's method (the largest of 4w², 4x², 4y², 4z² first). */
#include "cli/columns.h"

#include <math.h>

static const char *const free_q[] = {"x", "y", "z", "qx", "qy", "qz", "qw"};
static const char *const free_v[] = {"vx", "vy", "vz", "wx", "wy", "wz"};

/* the suffixes of a joint's q (v) coordinates */
static const char *const *suffixes(const mr_joint *j, int velocity) {
  static const char *const one_q[] = {"q"}, *const one_v[] = {"v"};
  if (j->type == MR_JOINT_FREE) return velocity ? free_v : free_q;
  if (j->type == MR_JOINT_SPHERICAL) return velocity ? free_v + 3 : free_q + 3;
  return velocity ? one_v : one_q;
}

static void joint_columns(FILE *f, const mr_model *m, int velocity) {
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    const char *const *sfx = suffixes(j, velocity);
    for (int k = 0; k < (velocity ? j->nv : j->nq); ++k)
      fprintf(f, ",%s_%s", j->name, sfx[k]);
  }
}

void mr_columns_header(FILE *f, const mr_world *w, const mr_columns *o) {
  const mr_model *m = w->model;
  joint_columns(f, m, 0);
  joint_columns(f, m, 1);
  for (int b = 1; o->world_velocity && b < m->nbodies; ++b)
    for (int k = 0; m->bodies[b].joint.type == MR_JOINT_FREE && k < 6; ++k)
      fprintf(f, ",%s_world_%s", m->bodies[b].joint.name, free_v[k]);
  for (int b = 1; o->poses && b < m->nbodies; ++b)
    for (int k = 0; k < 7; ++k)
      fprintf(f, ",%s_%s%s", m->bodies[b].name, k < 3 ? "p" : "", free_q[k]);
  for (int r = 0; o->com && r < w->nrobots; ++r)
    fprintf(f, ",%s/com_x,%s/com_y,%s/com_z", w->robots[r].name, w->robots[r].name,
            w->robots[r].name);
}

/* the unit quaternion (x, y, z, w) of a rotation matrix */
static mr_quat quat_of(const mr_mat3 *R) {
  const double(*m)[3] = R->m;
  double t[4] = {1 + m[0][0] + m[1][1] + m[2][2], 1 + m[0][0] - m[1][1] - m[2][2],
                 1 - m[0][0] + m[1][1] - m[2][2], 1 - m[0][0] - m[1][1] + m[2][2]};
  int k = 0;
  for (int i = 1; i < 4; ++i)
    if (t[i] > t[k]) k = i;
  double s = 0.5 / sqrt(t[k]), a = m[2][1] - m[1][2], b = m[0][2] - m[2][0], c = m[1][0] - m[0][1];
  double d = m[0][1] + m[1][0], e = m[0][2] + m[2][0], g = m[1][2] + m[2][1];
  mr_quat q[4] = {{a * s, b * s, c * s, 0.25 / s},
                  {0.25 / s, d * s, e * s, a * s},
                  {d * s, 0.25 / s, g * s, b * s},
                  {e * s, g * s, 0.25 / s, c * s}};
  mr_quat r = q[k];
  if (r.w < 0) r = (mr_quat){-r.x, -r.y, -r.z, -r.w}; /* the same rotation, w >= 0 */
  return r;
}

static void vec3(FILE *f, mr_vec3 x) {
  fprintf(f, ",%.17g,%.17g,%.17g", x.v[0], x.v[1], x.v[2]);
}

void mr_columns_row(FILE *f, mr_sim *s, const mr_columns *o) {
  const mr_model *m = mr_sim_model(s);
  for (int k = 0; k < m->nq; ++k)
    fprintf(f, ",%.17g", mr_sim_q(s)[k]);
  for (int k = 0; k < m->nv; ++k)
    fprintf(f, ",%.17g", mr_sim_v(s)[k]);
  if (!o->world_velocity && !o->poses && !o->com) return;
  const mr_se3 *X = mr_sim_body_poses(s);
  for (int b = 1; o->world_velocity && b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->type != MR_JOINT_FREE) continue;
    const double *v = mr_sim_v(s) + j->idx_v;
    vec3(f, mr_m3_mulv(&X[b].R, mr_v3(v[0], v[1], v[2])));
    vec3(f, mr_m3_mulv(&X[b].R, mr_v3(v[3], v[4], v[5])));
  }
  for (int b = 1; o->poses && b < m->nbodies; ++b) {
    mr_quat q = quat_of(&X[b].R);
    vec3(f, X[b].p);
    fprintf(f, ",%.17g,%.17g,%.17g,%.17g", q.x, q.y, q.z, q.w);
  }
  for (int r = 0; o->com && r < mr_sim_world(s)->nrobots; ++r)
    vec3(f, mr_sim_com(s, r));
}
