/* External forces as functions of time, and per-pair contact overrides.
 *
 * Forces are world-frame wrenches applied at the origin of a body (a free scene body or a robot
 * body "ROBOT/LINK"); with τ the time since start and T the duration:
 *   constant  F = f0                                  for 0 ≤ τ < T
 *   ramp      F = f0 + (f1 − f0) min(τ/T, 1)          for τ ≥ 0 (saturates at f1 after T)
 *   sine      F = f0 + f1 sin(2π ν τ + φ)            for 0 ≤ τ < T
 *   impulse   F = f0 = J / T (J the impulse in N s)   for 0 ≤ τ < T (T defaults to one step)
 * and zero outside these windows; torques follow the same rules with t0, t1. This file parses
 * them; their evaluation, and that of the pair overrides, belongs to the world (world.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scene_internal.h"

static const char *const force_types[] = {"constant", "ramp", "sine", "impulse", NULL};
static const char *const keys_constant[] = {"body",  "type",   "start", "duration",
                                            "force", "torque", NULL};
static const char *const keys_ramp[] = {"body", "type",        "start",     "duration", "from",
                                        "to",   "torque_from", "torque_to", NULL};
static const char *const keys_sine[] = {"body",          "type",      "start",
                                        "duration",      "amplitude", "offset",
                                        "frequency",     "phase",     "torque_amplitude",
                                        "torque_offset", NULL};
static const char *const keys_impulse[] = {"body",    "type",  "start",  "duration",
                                           "impulse", "force", "torque", NULL};
static const char *const *const force_keys[] = {keys_constant, keys_ramp, keys_sine, keys_impulse};

/* ---- evaluation (world.c, over the scene's parts) ---- */

void mr_scene_force_at(const mr_scene *s, int k, double t, mr_vec3 *force, mr_vec3 *torque) {
  mr_world_force_at(&s->forces[k], t, force, torque);
}

/* the scene's model and pairs seen as a world, for the pair look-ups */
static mr_world pair_view(const mr_scene *s) {
  return (mr_world){.model = s->model, .npairs = s->npairs, .pairs = s->pairs};
}

int mr_scene_pair_tangential_compliance(const mr_scene *s, int g1, int g2, double *compliance) {
  mr_world w = pair_view(s);
  return mr_world_pair_tangential_compliance(&w, g1, g2, compliance);
}

int mr_scene_pair_params(const mr_scene *s, int g1, int g2, double *friction, double *restitution,
                         double *compliance) {
  mr_world w = pair_view(s);
  return mr_world_pair_params(&w, g1, g2, friction, restitution, compliance);
}

/* ---- parsing ---- */

static mr_status vec_key(mr_scene_ctx *c, const mr_ynode *n, const char *key, mr_vec3 *v) {
  return mr_yaml_opt_vec(&c->y, n, key, v->v, 3);
}

/* the model body a force names: a free scene body or a robot body "ROBOT/LINK" */
static mr_status force_body(mr_scene_ctx *c, const mr_ynode *n, mr_scene_force *f) {
  mr_ynode *bn = mr_yaml_get(&c->y, n, "body");
  const char *name = NULL;
  if (!bn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "force: missing 'body'");
  if (mr_yaml_string(&c->y, bn, "body", &name)) return scene_status(c);
  snprintf(f->body_name, sizeof f->body_name, "%s", name);
  for (int i = 0; i < c->s->nbodies; ++i)
    if (strcmp(c->s->bodies[i].name, name) == 0 && c->s->bodies[i].fixed)
      return mr_yaml_error(&c->y, bn, MR_ERR_INVALID,
                           "'body': '%s' is fixed; forces act on free "
                           "bodies and robot links",
                           name);
  f->body = mr_model_body_index(c->s->model, name);
  if (f->body > 0) return MR_OK;
  int fr = mr_model_frame_index(c->s->model, name);
  if (fr >= 0)
    return mr_yaml_error(&c->y, bn, MR_ERR_INVALID,
                         "'body': '%s' is a frame merged into body '%s'; name that body", name,
                         c->s->model->bodies[c->s->model->frames[fr].body].name);
  const char **names = calloc((size_t)c->s->model->nbodies + 1, sizeof *names);
  for (int b = 1; names && b < c->s->model->nbodies; ++b)
    names[b - 1] = c->s->model->bodies[b].name;
  const char *near = names ? mr_yaml_nearest(name, names) : NULL;
  mr_status st = mr_yaml_error(&c->y, bn, MR_ERR_INVALID, "'body': no body named '%s'%s%s%s", name,
                               near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
  free(names);
  return st;
}

static mr_status force_type(mr_scene_ctx *c, const mr_ynode *n, mr_force_type *t) {
  mr_ynode *tn = mr_yaml_get(&c->y, n, "type");
  if (!tn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "force: missing 'type'");
  for (int i = 0; force_types[i]; ++i)
    if (strcmp(mr_yaml_text(tn), force_types[i]) == 0) return *t = (mr_force_type)i, MR_OK;
  const char *near = mr_yaml_nearest(mr_yaml_text(tn), force_types);
  return mr_yaml_error(&c->y, tn, MR_ERR_INVALID,
                       "'type': unknown force type '%s'%s%s%s (known: constant, ramp, sine, "
                       "impulse)",
                       mr_yaml_text(tn), near ? ": did you mean '" : "", near ? near : "",
                       near ? "'?" : "");
}

/* type-specific values into f0, f1, t0, t1 */
static mr_status force_values(mr_scene_ctx *c, const mr_ynode *n, mr_scene_force *f) {
  switch (f->type) {
  case MR_FORCE_CONSTANT:
    return vec_key(c, n, "force", &f->f0) || vec_key(c, n, "torque", &f->t0);
  case MR_FORCE_RAMP:
    return vec_key(c, n, "from", &f->f0) || vec_key(c, n, "to", &f->f1) ||
           vec_key(c, n, "torque_from", &f->t0) || vec_key(c, n, "torque_to", &f->t1);
  case MR_FORCE_SINE:
    return vec_key(c, n, "offset", &f->f0) || vec_key(c, n, "amplitude", &f->f1) ||
           vec_key(c, n, "torque_offset", &f->t0) || vec_key(c, n, "torque_amplitude", &f->t1) ||
           mr_yaml_opt_double(&c->y, n, "frequency", &f->frequency) ||
           mr_yaml_opt_double(&c->y, n, "phase", &f->phase);
  case MR_FORCE_IMPULSE: {
    mr_ynode *jn = mr_yaml_get(&c->y, n, "impulse"), *fn = mr_yaml_get(&c->y, n, "force");
    mr_vec3 J = mr_v3_zero(), tq = mr_v3_zero();
    if (!jn == !fn)
      return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                           "impulse: give exactly one of 'impulse' (N s) and 'force' (N)");
    if (vec_key(c, n, "impulse", &J) || vec_key(c, n, "force", &f->f0) ||
        vec_key(c, n, "torque", &tq))
      return scene_status(c);
    if (jn) f->f0 = mr_v3_scale(J, 1.0 / f->duration);
    f->t0 = tq;
    return MR_OK;
  }
  }
  return MR_OK;
}

static mr_status parse_force(mr_scene_ctx *c, const mr_ynode *n, mr_scene_force *f) {
  if (mr_yaml_need_map(&c->y, n, "forces[]") || force_type(c, n, &f->type) ||
      mr_yaml_check_map(&c->y, n, force_keys[f->type], "a force") || force_body(c, n, f))
    return scene_status(c);
  f->start = 0.0;
  f->duration = f->type == MR_FORCE_IMPULSE ? c->s->timestep : INFINITY;
  if (f->type == MR_FORCE_RAMP) f->duration = 1.0;
  mr_ynode *dn = mr_yaml_get(&c->y, n, "duration");
  if (mr_yaml_opt_double(&c->y, n, "start", &f->start) ||
      mr_yaml_opt_double(&c->y, n, "duration", &f->duration))
    return scene_status(c);
  if (!(f->duration > 0) && !(f->type == MR_FORCE_RAMP && f->duration == 0))
    return mr_yaml_error(&c->y, dn, MR_ERR_INVALID, "'duration': must be > 0, got %g", f->duration);
  if (f->start < 0)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "start"), MR_ERR_INVALID,
                         "'start': must be >= 0, got %g", f->start);
  if (force_values(c, n, f)) return scene_status(c);
  if (f->type == MR_FORCE_SINE && f->frequency < 0)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "frequency"), MR_ERR_INVALID,
                         "'frequency': must be >= 0, got %g", f->frequency);
  return MR_OK;
}

mr_status scene_forces(mr_scene_ctx *c, const mr_ynode *seq) {
  mr_scene *s = c->s;
  if (mr_yaml_need_seq(&c->y, seq, "forces")) return scene_status(c);
  int n = mr_yaml_seq_size(seq);
  s->forces = calloc((size_t)(n ? n : 1), sizeof *s->forces);
  if (!s->forces) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i) {
    if (parse_force(c, mr_yaml_seq_at(&c->y, seq, i), &s->forces[i])) return scene_status(c);
    s->nforces = i + 1;
  }
  return MR_OK;
}

/* ---- pair overrides ---- */

/* one side of a pair: a geometry name first, then a body name (scene body or robot body) */
static mr_status pair_side(mr_scene_ctx *c, const mr_ynode *n, char *name, int *geom, int *body) {
  const mr_model *m = c->s->model;
  snprintf(name, MR_NAME_MAX, "%s", mr_yaml_text(n));
  *geom = *body = -1;
  for (int g = 0; g < m->ngeoms && *geom < 0; ++g)
    if (strcmp(m->geoms[g].name, name) == 0) *geom = g;
  if (*geom >= 0) return MR_OK;
  for (int i = 0; i < c->s->nbodies; ++i)
    if (strcmp(c->s->bodies[i].name, name) == 0) *body = c->s->bodies[i].body;
  if (*body < 0) *body = mr_model_body_index(m, name);
  if (*body >= 0) return MR_OK;
  return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                       "'between': '%s' is neither a geometry nor a body of the scene", name);
}

/* a pair's stiffness (> 0, N/m, finite) and dissipation (s): stiffness excludes compliance,
 * dissipation needs stiffness */
static mr_status pair_stiffness(mr_scene_ctx *c, const mr_ynode *n, mr_scene_pair *p, double k,
                                double tau) {
  mr_ynode *kn = mr_yaml_get(&c->y, n, "stiffness"), *dn = mr_yaml_get(&c->y, n, "dissipation");
  if (kn && !isnan(p->compliance))
    return mr_yaml_error(&c->y, kn, MR_ERR_INVALID,
                         "'stiffness': excludes 'compliance' (given %g), got '%s'", p->compliance,
                         mr_yaml_text(kn));
  if (kn && (!(k > 0.0) || !isfinite(k)))
    return mr_yaml_error(&c->y, kn, MR_ERR_INVALID,
                         "'stiffness': must be a finite number > 0 (N/m), got '%s'",
                         mr_yaml_text(kn));
  if (dn && !kn)
    return mr_yaml_error(&c->y, dn, MR_ERR_INVALID, "'dissipation': needs 'stiffness', got '%s'",
                         mr_yaml_text(dn));
  p->stiffness = k, p->dissipation = tau;
  return MR_OK;
}

static mr_status parse_pair(mr_scene_ctx *c, const mr_ynode *n, mr_scene_pair *p) {
  static const char *const keys[] = {
      "between",   "friction",    "restitution", "compliance", "tangential_compliance",
      "stiffness", "dissipation", NULL};
  if (mr_yaml_check_map(&c->y, n, keys, "a pair")) return scene_status(c);
  mr_ynode *bn = mr_yaml_get(&c->y, n, "between");
  char b[80];
  if (!bn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "pair: missing 'between'");
  if (mr_yaml_seq_size(bn) != 2)
    return mr_yaml_error(&c->y, bn, MR_ERR_INVALID, "'between': expected a list of 2 names, got %s",
                         mr_yaml_describe(bn, b, sizeof b));
  p->friction = p->restitution = p->compliance = p->tangential_compliance = NAN;
  p->stiffness = p->dissipation = NAN;
  if (pair_side(c, mr_yaml_seq_at(&c->y, bn, 0), p->a, &p->geom_a, &p->body_a) ||
      pair_side(c, mr_yaml_seq_at(&c->y, bn, 1), p->b, &p->geom_b, &p->body_b))
    return scene_status(c);
  double v[6] = {NAN, NAN, NAN, NAN, NAN, NAN};
  const char *names[6] = {"friction",  "restitution", "compliance", "tangential_compliance",
                          "stiffness", "dissipation"};
  for (int k = 0; k < 6; ++k) {
    mr_ynode *vn = mr_yaml_get(&c->y, n, names[k]);
    if (vn && mr_yaml_double(&c->y, vn, names[k], &v[k])) return scene_status(c);
    if (vn && (v[k] < 0 || (k == 1 && v[k] > 1)))
      return mr_yaml_error(&c->y, vn, MR_ERR_INVALID, "'%s': must be %s, got %g", names[k],
                           k == 1 ? "in [0, 1]" : ">= 0", v[k]);
  }
  p->friction = v[0], p->restitution = v[1], p->compliance = v[2], p->tangential_compliance = v[3];
  return pair_stiffness(c, n, p, v[4], v[5]);
}

mr_status scene_pairs(mr_scene_ctx *c, const mr_ynode *seq) {
  mr_scene *s = c->s;
  if (mr_yaml_need_seq(&c->y, seq, "pairs")) return scene_status(c);
  int n = mr_yaml_seq_size(seq);
  s->pairs = calloc((size_t)(n ? n : 1), sizeof *s->pairs);
  if (!s->pairs) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i) {
    mr_ynode *pn = mr_yaml_seq_at(&c->y, seq, i);
    if (mr_yaml_need_map(&c->y, pn, "pairs[]") || parse_pair(c, pn, &s->pairs[i]))
      return scene_status(c);
    s->npairs = i + 1;
  }
  return MR_OK;
}
