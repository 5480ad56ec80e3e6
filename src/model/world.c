/* The compiled world (see world.h): deep copy and release, name look-ups, and the two pieces of
 * the world a step evaluates — external forces over time and per-pair contact parameters.
 *
 * Forces (world frame, at a body origin), with τ = t − start and T the duration:
 *   constant  F = f0                                  for 0 ≤ τ < T
 *   ramp      F = f0 + (f1 − f0) min(τ/T, 1)          for τ ≥ 0 (saturates at f1 after T)
 *   sine      F = f0 + f1 sin(2π ν τ + φ)            for 0 ≤ τ < T
 *   impulse   F = f0 = J / T (J the impulse in N s)   for 0 ≤ τ < T
 * and zero outside these windows; torques follow the same rules with t0, t1.
 *
 * Pair parameters: without an override, μ = sqrt(μ1 μ2), e = max(e1, e2), R = R1 + R2,
 * R_T = R_T1 + R_T2; an override names two geometries or two bodies, geometry-named ones take
 * precedence, and the last matching one wins. */
#include "moreau/world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- copy and free ---- */

/* a malloc'ed copy of n elements of size elem (NULL when n == 0) */
static void *dup_array(const void *src, int n, size_t elem, int *fail) {
  if (n <= 0 || !src) return NULL;
  void *d = malloc((size_t)n * elem);
  if (!d) return *fail = 1, NULL;
  return memcpy(d, src, (size_t)n * elem);
}

static void free_robot(mr_world_robot *r) {
  free(r->kp);
  free(r->kd);
  free(r->q_target);
  free(r->sines);
  free(r->torque);
  free(r->controller_settings);
  free(r->spring_k);
  free(r->spring_ref);
  for (int k = 0; k < r->npostures; ++k)
    free(r->postures[k].q);
  free(r->postures);
}

/* the arrays of one robot (the struct itself already copied) */
static void copy_robot(mr_world_robot *r, int *fail) {
  r->kp = dup_array(r->kp, r->nv, sizeof(double), fail);
  r->kd = dup_array(r->kd, r->nv, sizeof(double), fail);
  r->q_target = dup_array(r->q_target, r->nq, sizeof(double), fail);
  r->torque = dup_array(r->torque, r->nv, sizeof(double), fail);
  r->sines = dup_array(r->sines, r->nsines, sizeof *r->sines, fail);
  r->controller_settings = r->controller_settings
                               ? dup_array(r->controller_settings, 1, r->controller_size, fail)
                               : NULL;
  r->spring_k = dup_array(r->spring_k, r->nv, sizeof(double), fail);
  r->spring_ref = dup_array(r->spring_ref, r->nv, sizeof(double), fail);
  if (!r->sines) r->nsines = 0;
  mr_world_posture *src = r->postures;
  r->postures = dup_array(src, r->npostures, sizeof *src, fail);
  if (!r->postures) r->npostures = 0;
  for (int k = 0; k < r->npostures; ++k)
    r->postures[k].q = dup_array(src[k].q, r->nq, sizeof(double), fail);
}

/* the actuators and keyframes (the struct itself and the robots already copied) */
static void copy_actuation(mr_world *w, int *fail) {
  w->actuators = dup_array(w->actuators, w->nactuators, sizeof *w->actuators, fail);
  if (!w->actuators) w->nactuators = 0;
  w->coupled_limits =
      dup_array(w->coupled_limits, w->ncoupled_limits, sizeof *w->coupled_limits, fail);
  if (!w->coupled_limits) w->ncoupled_limits = 0;
  mr_world_keyframe *src = w->keyframes;
  w->keyframes = dup_array(src, w->nkeyframes, sizeof *src, fail);
  if (!w->keyframes) w->nkeyframes = 0;
  for (int k = 0; k < w->nkeyframes; ++k) {
    const mr_world_robot *r = &w->robots[src[k].robot];
    w->keyframes[k].q = dup_array(src[k].q, r->nq, sizeof(double), fail);
    w->keyframes[k].v = dup_array(src[k].v, r->nv, sizeof(double), fail);
    w->keyframes[k].ctrl = dup_array(src[k].ctrl, src[k].nctrl, sizeof(double), fail);
  }
}

mr_world *mr_world_copy(const mr_world *src, mr_error *err) {
  if (!src || !src->model)
    return mr_error_set(err, MR_ERR_INVALID, "world: no model to copy"), NULL;
  mr_world *w = calloc(1, sizeof *w);
  if (!w) return mr_error_set(err, MR_ERR_NOMEM, "world: out of memory"), NULL;
  *w = *src;
  int fail = 0, nq = src->model->nq, nv = src->model->nv;
  w->model = mr_model_copy(src->model, err);
  w->q0 = dup_array(src->q0, nq, sizeof(double), &fail);
  w->v0 = dup_array(src->v0, nv, sizeof(double), &fail);
  w->bodies = dup_array(src->bodies, src->nbodies, sizeof *w->bodies, &fail);
  w->pairs = dup_array(src->pairs, src->npairs, sizeof *w->pairs, &fail);
  w->forces = dup_array(src->forces, src->nforces, sizeof *w->forces, &fail);
  w->constraints = dup_array(src->constraints, src->nconstraints, sizeof *w->constraints, &fail);
  w->robots = dup_array(src->robots, src->nrobots, sizeof *w->robots, &fail);
  if (!w->robots) w->nrobots = 0;
  for (int r = 0; r < w->nrobots; ++r)
    copy_robot(&w->robots[r], &fail);
  copy_actuation(w, &fail);
  if (w->model && !fail) return w;
  mr_world_free(w);
  if (fail) mr_error_set(err, MR_ERR_NOMEM, "world: out of memory");
  return NULL;
}

void mr_world_free(mr_world *w) {
  if (!w) return;
  mr_model_free(w->model);
  free(w->q0);
  free(w->v0);
  free(w->bodies);
  for (int r = 0; r < w->nrobots; ++r)
    free_robot(&w->robots[r]);
  free(w->robots);
  free(w->pairs);
  free(w->forces);
  free(w->constraints);
  free(w->actuators);
  free(w->coupled_limits);
  for (int k = 0; k < w->nkeyframes; ++k)
    free(w->keyframes[k].q), free(w->keyframes[k].v), free(w->keyframes[k].ctrl);
  free(w->keyframes);
  free(w);
}

/* ---- names ---- */

int mr_world_robot_index(const mr_world *w, const char *name) {
  for (int r = 0; name && r < w->nrobots; ++r)
    if (!strcmp(w->robots[r].name, name)) return r;
  return -1;
}

int mr_world_joint_dof(const mr_world *w, const char *name) {
  int b = name ? mr_model_joint_index(w->model, name) : -1;
  if (b <= 0 || w->model->bodies[b].joint.nv != 1) return -1;
  return w->model->bodies[b].joint.idx_v;
}

int mr_world_dof_coordinate(const mr_world *w, int dof) {
  if (dof < 0 || dof >= w->model->nv) return -1;
  const mr_joint *j = &w->model->bodies[w->model->dof_body[dof]].joint;
  return j->nv == 1 && j->nq == 1 ? j->idx_q : -1;
}

int mr_world_body_index(const mr_world *w, const char *name) {
  return name ? mr_model_body_index(w->model, name) : -1;
}

const mr_world_posture *mr_world_posture_find(const mr_world *w, int r, const char *name) {
  if (r < 0 || r >= w->nrobots || !name) return NULL;
  for (int k = 0; k < w->robots[r].npostures; ++k)
    if (!strcmp(w->robots[r].postures[k].name, name)) return &w->robots[r].postures[k];
  return NULL;
}

mr_world_info mr_world_get_info(const mr_world *w) {
  const mr_model *m = w->model;
  return (mr_world_info){m->nq, m->nv, m->nbodies, m->ngeoms, w->nrobots, w->timestep, w->duration};
}

const char *mr_world_body_name(const mr_world *w, int b) {
  return b >= 0 && b < w->model->nbodies ? w->model->bodies[b].name : NULL;
}

const char *mr_world_dof_name(const mr_world *w, int k) {
  const mr_model *m = w->model;
  return k >= 0 && k < m->nv ? m->bodies[m->dof_body[k]].joint.name : NULL;
}

const char *mr_world_geom_name(const mr_world *w, int g) {
  return g >= 0 && g < w->model->ngeoms ? w->model->geoms[g].name : NULL;
}

const char *mr_world_robot_name(const mr_world *w, int r) {
  return r >= 0 && r < w->nrobots ? w->robots[r].name : NULL;
}

int mr_world_robot_slice(const mr_world *w, int r, int *idx_q, int *nq, int *idx_v, int *nv,
                         int *first_body, int *nbodies) {
  if (r < 0 || r >= w->nrobots) return -1;
  const mr_world_robot *rb = &w->robots[r];
  *idx_q = rb->idx_q, *nq = rb->nq, *idx_v = rb->idx_v, *nv = rb->nv;
  *first_body = rb->first_body, *nbodies = rb->nbodies;
  return 0;
}

/* ---- forces ---- */

static mr_vec3 lerp(mr_vec3 a, mr_vec3 b, double s) {
  return mr_v3_madd(a, s, mr_v3_sub(b, a));
}

void mr_world_force_at(const mr_world_force *f, double t, mr_vec3 *force, mr_vec3 *torque) {
  double tau = t - f->start;
  *force = *torque = mr_v3_zero();
  if (tau < 0) return;
  int inside = tau < f->duration;
  switch (f->type) {
  case MR_FORCE_RAMP: {
    double a = f->duration > 0 ? fmin(tau / f->duration, 1.0) : 1.0;
    *force = lerp(f->f0, f->f1, a);
    *torque = lerp(f->t0, f->t1, a);
  } break;
  case MR_FORCE_SINE: {
    double sn = sin(2 * M_PI * f->frequency * tau + f->phase);
    if (inside) *force = mr_v3_madd(f->f0, sn, f->f1), *torque = mr_v3_madd(f->t0, sn, f->t1);
  } break;
  case MR_FORCE_CONSTANT:
  case MR_FORCE_IMPULSE:
    if (inside) *force = f->f0, *torque = f->t0;
    break;
  }
}

/* ---- pair parameters ---- */

/* does side (geom, body) of a pair match geometry g? */
static int side_matches(const mr_model *m, int geom, int body, int g) {
  return geom >= 0 ? geom == g : m->geoms[g].body == body;
}

static int pair_matches(const mr_model *m, const mr_world_pair *p, int g1, int g2) {
  return (side_matches(m, p->geom_a, p->body_a, g1) && side_matches(m, p->geom_b, p->body_b, g2)) ||
         (side_matches(m, p->geom_a, p->body_a, g2) && side_matches(m, p->geom_b, p->body_b, g1));
}

/* the override of pair (g1, g2): geometry-named overrides take precedence over body-named ones;
 * the last match wins; NULL when none matches */
static const mr_world_pair *pair_override(const mr_world *w, int g1, int g2) {
  const mr_world_pair *hit = NULL;
  for (int pass = 0; pass < 2 && !hit; ++pass)
    for (int i = 0; i < w->npairs; ++i) {
      const mr_world_pair *p = &w->pairs[i];
      int by_geom = p->geom_a >= 0 && p->geom_b >= 0;
      if ((pass == 0) == by_geom && pair_matches(w->model, p, g1, g2)) hit = p;
    }
  return hit;
}

int mr_world_pair_tangential_compliance(const mr_world *w, int g1, int g2, double *compliance) {
  const mr_geom *a = &w->model->geoms[g1], *b = &w->model->geoms[g2];
  *compliance = a->tangential_compliance + b->tangential_compliance;
  const mr_world_pair *hit = pair_override(w, g1, g2);
  if (!hit || isnan(hit->tangential_compliance)) return 0;
  *compliance = hit->tangential_compliance;
  return 1;
}

int mr_world_pair_stiffness(const mr_world *w, int g1, int g2, double *k, double *tau) {
  const mr_geom *a = &w->model->geoms[g1], *b = &w->model->geoms[g2];
  const mr_world_pair *hit = w->npairs > 0 ? pair_override(w, g1, g2) : NULL;
  *k = *tau = 0.0;
  /* the override's own stiffness, or its compliance, wins over the geometries' */
  if (hit && hit->stiffness > 0.0) {
    *k = hit->stiffness, *tau = isnan(hit->dissipation) ? 0.0 : hit->dissipation;
    return 1;
  }
  if (hit && !isnan(hit->compliance)) return 0;
  double ka = a->stiffness, kb = b->stiffness;
  if (!(ka > 0.0) && !(kb > 0.0)) return 0;
  /* springs in series; a rigid side (no stiffness) adds nothing */
  *k = ka > 0.0 && kb > 0.0 ? ka * kb / (ka + kb) : (ka > 0.0 ? ka : kb);
  *tau = (ka > 0.0 ? a->dissipation : 0.0) + (kb > 0.0 ? b->dissipation : 0.0);
  return 1;
}

int mr_world_pair_params(const mr_world *w, int g1, int g2, double *friction, double *restitution,
                         double *compliance) {
  const mr_geom *a = &w->model->geoms[g1], *b = &w->model->geoms[g2];
  *friction = sqrt(a->friction * b->friction);
  *restitution = fmax(a->restitution, b->restitution);
  *compliance = a->compliance + b->compliance;
  const mr_world_pair *hit = pair_override(w, g1, g2);
  if (!hit) return 0;
  if (!isnan(hit->friction)) *friction = hit->friction;
  if (!isnan(hit->restitution)) *restitution = hit->restitution;
  if (!isnan(hit->compliance)) *compliance = hit->compliance;
  return 1;
}

const mr_model *mr_world_model(const mr_world *w) {
  return w->model;
}
