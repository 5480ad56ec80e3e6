/* Flat read-outs of a model and of the kinematics (moreau/query.h): plain numbers for bindings.
 * The centre-of-mass Jacobian sums, over the bodies and the dofs k on each body's path,
 * mᵢ (v_k + ω_k × cᵢ) / Σ mᵢ, with (v_k, ω_k) dof k's world motion column at the world origin
 * (as in jacobian.c) and cᵢ body i's centre of mass in the world frame. */
#include <string.h>

#include "moreau/query.h"

#include "dynamics/internal.h"

/* R row-major then p */
static void flat_se3(const mr_se3 *X, double *out) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      out[3 * r + c] = X->R.m[r][c];
  for (int r = 0; r < 3; ++r)
    out[9 + r] = X->p.v[r];
}

static mr_status out_of_range(mr_error *err, const char *what, int i, int n) {
  return mr_error_set(err, MR_ERR_INVALID, "%s %d out of range [0, %d)", what, i, n);
}

mr_status mr_model_body_info(const mr_model *m, int b, mr_body_info *out, mr_error *err) {
  if (b < 0 || b >= m->nbodies) return out_of_range(err, "body", b, m->nbodies);
  const mr_body *body = &m->bodies[b];
  const mr_joint *j = &body->joint;
  memset(out, 0, sizeof *out);
  out->parent = body->parent;
  out->joint_type = (int)j->type;
  out->idx_q = j->idx_q, out->nq = j->nq, out->idx_v = j->idx_v, out->nv = j->nv;
  memcpy(out->axis, j->axis.v, sizeof out->axis);
  flat_se3(&body->placement, out->placement);
  out->mass = body->inertia.m;
  memcpy(out->com, body->inertia.c.v, sizeof out->com);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      out->inertia[3 * r + c] = body->inertia.I.m[r][c];
  return MR_OK;
}

const char *mr_model_joint_name(const mr_model *m, int b) {
  return b >= 0 && b < m->nbodies ? m->bodies[b].joint.name : NULL;
}

int mr_model_nframes(const mr_model *m) {
  return m->nframes;
}

const char *mr_model_frame_name(const mr_model *m, int f) {
  return f >= 0 && f < m->nframes ? m->frames[f].name : NULL;
}

mr_status mr_model_frame_info(const mr_model *m, int f, int *body, double placement[12],
                              mr_error *err) {
  if (f < 0 || f >= m->nframes) return out_of_range(err, "frame", f, m->nframes);
  if (body) *body = m->frames[f].body;
  if (placement) flat_se3(&m->frames[f].placement, placement);
  return MR_OK;
}

mr_status mr_model_geom_info(const mr_model *m, int g, mr_geom_info *out, mr_error *err) {
  if (g < 0 || g >= m->ngeoms) return out_of_range(err, "geometry", g, m->ngeoms);
  const mr_geom *geom = &m->geoms[g];
  memset(out, 0, sizeof *out);
  out->type = (int)geom->type;
  out->body = geom->body;
  memcpy(out->size, geom->size, sizeof out->size);
  flat_se3(&geom->placement, out->placement);
  out->friction = geom->friction;
  out->restitution = geom->restitution;
  out->compliance = geom->compliance;
  return MR_OK;
}

/* n doubles from src into dst when dst is given */
static void copy_opt(double *dst, const double *src, int n) {
  if (dst && n > 0) memcpy(dst, src, (size_t)n * sizeof *dst);
}

void mr_model_get_limits(const mr_model *m, double *lower, double *upper, double *velocity,
                         double *effort, double *damping, double *armature) {
  copy_opt(lower, m->lower, m->nq);
  copy_opt(upper, m->upper, m->nq);
  copy_opt(velocity, m->velocity_limit, m->nv);
  copy_opt(effort, m->effort_limit, m->nv);
  copy_opt(damping, m->damping, m->nv);
  copy_opt(armature, m->armature, m->nv);
}

void mr_model_get_gravity(const mr_model *m, double g[3]) {
  memcpy(g, m->gravity.v, 3 * sizeof(double));
}

void mr_data_body_placements(const mr_data *d, double *out) {
  for (int b = 0; b < d->nbodies; ++b)
    flat_se3(&d->oMi[b], out + 12 * (size_t)b);
}

void mr_data_frame_placements(const mr_data *d, double *out) {
  for (int f = 0; f < d->nframes; ++f)
    flat_se3(&d->oMf[f], out + 12 * (size_t)f);
}

/* J[:, k] += scale (v_k + ω_k × c) for every dof k on body's path */
static void add_point_columns(const mr_model *m, const mr_data *d, int body, mr_vec3 c,
                              double scale, double *J) {
  const mr_dyn_work *w = mr_work(d);
  const int nv = m->nv;
  for (int k = mr_body_last_dof(m, body); k >= 0; k = d->parent_dof[k]) {
    mr_motion col = mr_se3_act_motion(&d->oMi[w->dof_body[k]], w->S[k]);
    mr_vec3 vp = mr_v3_add(col.v, mr_v3_cross(col.w, c));
    for (int r = 0; r < 3; ++r)
      J[r * nv + k] += scale * vp.v[r];
  }
}

mr_vec3 mr_center_of_mass_jacobian(const mr_model *m, mr_data *d, int first, int n, double *J) {
  int lo = first < 1 ? 1 : first, hi = first + n > m->nbodies ? m->nbodies : first + n;
  if (J) memset(J, 0, (size_t)3 * m->nv * sizeof(double));
  /* the total mass and the mass-weighted centres */
  double mass = 0.0;
  mr_vec3 s = mr_v3_zero();
  for (int i = lo; i < hi; ++i) {
    const mr_inertia *Y = &m->bodies[i].inertia;
    s = mr_v3_madd(s, Y->m, mr_se3_act_point(&d->oMi[i], Y->c));
    mass += Y->m;
  }
  if (!(mass > 0.0)) return mr_v3_zero();
  /* each body's centre-of-mass velocity columns, weighted by mᵢ / Σ m */
  for (int i = lo; J && i < hi; ++i) {
    const mr_inertia *Y = &m->bodies[i].inertia;
    if (Y->m > 0.0) add_point_columns(m, d, i, mr_se3_act_point(&d->oMi[i], Y->c), Y->m / mass, J);
  }
  return mr_v3_scale(s, 1.0 / mass);
}
