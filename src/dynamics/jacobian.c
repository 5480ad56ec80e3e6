/* Jacobians from the placements of the last kinematics call. Column k of a body's Jacobian is
 * the world motion of dof k's subspace, ⁰X_body(k) S_k, for every dof on the body's path to the
 * root (zero elsewhere); it is then re-expressed in the requested frame:
 *   WORLD                 at the world origin, world axes
 *   LOCAL                 ᶠX₀ (the frame's own origin and axes)
 *   LOCAL_WORLD_ALIGNED   at the frame origin p with world axes: (v − p × ω, ω)
 * The point Jacobian maps v to the world velocity of a world point x moving with the body:
 * column k is v_k + ω_k × x. */
#include <string.h>

#include "dynamics/internal.h"

/* world motion column of dof k */
static inline mr_motion world_column(const mr_data *d, int k) {
  const mr_dyn_work *w = mr_work(d);
  return mr_se3_act_motion(&d->oMi[w->dof_body[k]], w->S[k]);
}

static inline void store_column(double *J, int nv, int k, mr_motion c) {
  for (int r = 0; r < 3; ++r)
    J[r * nv + k] = c.v.v[r], J[(r + 3) * nv + k] = c.w.v[r];
}

int mr_body_last_dof(const mr_model *m, int body) {
  while (body > 0 && m->bodies[body].joint.nv == 0)
    body = m->bodies[body].parent;
  return body > 0 ? m->bodies[body].joint.idx_v + m->bodies[body].joint.nv - 1 : -1;
}

/* Jacobian of a frame placed at oMf on body */
static void placed_jacobian(const mr_model *m, mr_data *d, int body, const mr_se3 *oMf,
                            mr_reference ref, double *J) {
  const int nv = m->nv;
  memset(J, 0, (size_t)6 * nv * sizeof(double));
  for (int k = mr_body_last_dof(m, body); k >= 0; k = d->parent_dof[k]) {
    mr_motion c = world_column(d, k);
    if (ref == MR_LOCAL)
      c = mr_se3_inv_act_motion(oMf, c);
    else if (ref == MR_LOCAL_WORLD_ALIGNED)
      c.v = mr_v3_sub(c.v, mr_v3_cross(oMf->p, c.w));
    store_column(J, nv, k, c);
  }
}

void mr_frame_jacobian(const mr_model *m, mr_data *d, int frame, mr_reference ref, double *J) {
  placed_jacobian(m, d, m->frames[frame].body, &d->oMf[frame], ref, J);
}

void mr_body_jacobian(const mr_model *m, mr_data *d, int body, mr_reference ref, double *J) {
  placed_jacobian(m, d, body, &d->oMi[body], ref, J);
}

/* the point's columns on the body's path written into J (sign 0), added (> 0) or subtracted
 * (< 0) */
static void path_columns(const mr_model *m, mr_data *d, int body, mr_vec3 point, const int *col,
                         int ncols, int sign, double *J) {
  for (int k = mr_body_last_dof(m, body); k >= 0; k = d->parent_dof[k]) {
    mr_motion c = world_column(d, k);
    mr_vec3 vp = mr_v3_add(c.v, mr_v3_cross(c.w, point));
    int j = col ? col[k] : k;
    for (int r = 0; r < 3; ++r) {
      double *x = &J[r * ncols + j];
      *x = sign == 0 ? vp.v[r] : sign > 0 ? *x + vp.v[r] : *x - vp.v[r];
    }
  }
}

void mr_point_jacobian_cols(const mr_model *m, mr_data *d, int body, mr_vec3 point,
                            const int *col, int ncols, double *J) {
  memset(J, 0, (size_t)3 * ncols * sizeof(double));
  path_columns(m, d, body, point, col, ncols, 0, J);
}

void mr_point_jacobian_add(const mr_model *m, mr_data *d, int body, mr_vec3 point,
                           const int *col, int ncols, int sign, double *J) {
  path_columns(m, d, body, point, col, ncols, sign > 0 ? 1 : -1, J);
}

void mr_point_jacobian(const mr_model *m, mr_data *d, int body, mr_vec3 point, double *J) {
  mr_point_jacobian_cols(m, d, body, point, NULL, m->nv, J);
}

int mr_path_world_columns(const mr_model *m, mr_data *d, int last, double *cols, int *dofs) {
  int n = 0;
  for (int k = last; k >= 0; k = d->parent_dof[k], ++n) {
    mr_motion c = world_column(d, k);
    double *col = cols + 6 * (size_t)n;
    for (int r = 0; r < 3; ++r)
      col[r] = c.v.v[r], col[r + 3] = c.w.v[r];
    dofs[n] = k;
  }
  return n;
}
