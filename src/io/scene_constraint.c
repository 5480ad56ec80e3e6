/* The scene's bilateral constraints (docs/scene-format.md, "constraints"): point constraints
 * that hold a point of one body on a point of another body or of the world, e.g. an anchor or
 * the closure of a kinematic loop (a 4-bar linkage written as an open chain).
 *
 *   type point: body1, body2 (default world) and a world point at the initial configuration;
 *               the simulator converts it into an anchor on each body.
 *   type loop:  body1, point1 (in body1's frame), body2 (default world), point2 (in body2's
 *               frame); the two points need not coincide initially (the Baumgarte term pulls
 *               them together).
 * Bodies are named "world", a free scene body, or a robot link or merged frame "ROBOT/LINK"
 * (a frame's points are moved into the frame's body). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scene_internal.h"

static const char *const types[] = {"point", "loop", NULL};
static const char *const keys_point[] = {"type", "body1", "body2", "point", "baumgarte", NULL};
static const char *const keys_loop[] = {"type",   "body1",     "body2", "point1",
                                        "point2", "baumgarte", NULL};

/* a body by name: the world, a model frame (a link, merged or not), or a model body; the
 * placement of the named frame in its body is returned in X */
static mr_status constraint_body(mr_scene_ctx *c, const mr_ynode *n, const char *key, char *name,
                                 int *body, mr_se3 *X) {
  mr_ynode *bn = mr_yaml_get(&c->y, n, key);
  const char *text = "world";
  *X = mr_se3_identity();
  if (bn && mr_yaml_string(&c->y, bn, key, &text)) return scene_status(c);
  if (!bn && strcmp(key, "body1") == 0)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "constraint: missing 'body1'");
  snprintf(name, MR_NAME_MAX, "%s", text);
  if (strcmp(text, "world") == 0) return *body = 0, MR_OK;
  const mr_model *m = c->s->model;
  int fr = mr_model_frame_index(m, text);
  if (fr >= 0) {
    *body = m->frames[fr].body;
    *X = m->frames[fr].placement;
    return MR_OK;
  }
  *body = mr_model_body_index(m, text);
  if (*body >= 0) return MR_OK;
  return mr_yaml_error(&c->y, bn, MR_ERR_INVALID,
                       "'%s': no body or link named '%s' (robot links are 'ROBOT/LINK')", key,
                       text);
}

/* a point given in a named frame, into its body's frame */
static mr_vec3 to_body(mr_se3 X, const double *p) {
  return mr_v3_add(X.p, mr_m3_mulv(&X.R, mr_v3(p[0], p[1], p[2])));
}

static mr_status parse_constraint(mr_scene_ctx *c, const mr_ynode *n, mr_scene_constraint *k) {
  mr_ynode *tn = mr_yaml_get(&c->y, n, "type");
  const char *type = tn ? mr_yaml_text(tn) : "";
  int loop = strcmp(type, "loop") == 0;
  if (!tn || (!loop && strcmp(type, "point") != 0)) {
    const char *near = mr_yaml_nearest(type, types);
    return mr_yaml_error(&c->y, tn ? tn : n, MR_ERR_INVALID,
                         "constraint: 'type' must be point or loop, got '%s'%s%s%s", type,
                         near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
  }
  mr_se3 X1, X2;
  double p[3] = {0, 0, 0}, p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0};
  k->baumgarte = 1.0;
  if (mr_yaml_check_map(&c->y, n, loop ? keys_loop : keys_point, "a constraint") ||
      constraint_body(c, n, "body1", k->body1_name, &k->body1, &X1) ||
      constraint_body(c, n, "body2", k->body2_name, &k->body2, &X2) ||
      mr_yaml_opt_double(&c->y, n, "baumgarte", &k->baumgarte))
    return scene_status(c);
  if (!(k->baumgarte >= 0.0 && k->baumgarte <= 1.0))
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "baumgarte"), MR_ERR_INVALID,
                         "'baumgarte': must be in [0, 1], got %g", k->baumgarte);
  if (k->body1 == k->body2)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "constraint: body1 '%s' and body2 '%s' are the same body", k->body1_name,
                         k->body2_name);
  if (!loop) {
    mr_ynode *pn = mr_yaml_get(&c->y, n, "point");
    if (!pn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "constraint: missing 'point'");
    if (mr_yaml_vec(&c->y, pn, "point", p, 3)) return scene_status(c);
    k->world_point = 1;
    k->point = mr_v3(p[0], p[1], p[2]);
    return MR_OK;
  }
  if (mr_yaml_opt_vec(&c->y, n, "point1", p1, 3) || mr_yaml_opt_vec(&c->y, n, "point2", p2, 3))
    return scene_status(c);
  k->anchor1 = to_body(X1, p1);
  k->anchor2 = to_body(X2, p2);
  return MR_OK;
}

mr_status scene_constraints(mr_scene_ctx *c, const mr_ynode *seq) {
  mr_scene *s = c->s;
  if (mr_yaml_need_seq(&c->y, seq, "constraints")) return scene_status(c);
  int n = mr_yaml_seq_size(seq);
  s->constraints = calloc((size_t)(n ? n : 1), sizeof *s->constraints);
  if (!s->constraints) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i) {
    mr_ynode *kn = mr_yaml_seq_at(&c->y, seq, i);
    s->nconstraints = i + 1;
    if (mr_yaml_need_map(&c->y, kn, "constraints[]") || parse_constraint(c, kn, &s->constraints[i]))
      return scene_status(c);
  }
  return MR_OK;
}
