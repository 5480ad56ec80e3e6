/* An MJCF file as a robot of a scene (moreau/mjcf.h, docs/mjcf.md): the model appended under
 * the robot's name, its initial state (qpos0, or a keyframe), its actuators, joint springs,
 * keyframes, friction overrides and point constraints, and the one warning that lists what was
 * ignored. Keyframes are converted to moreau's layout: quaternions (w x y z) → (x y z w), a free
 * joint's linear velocity from the world frame to the body frame. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mjcf_internal.h"
#include "io/scene_internal.h"

mr_mjcf_options mr_mjcf_options_default(void) {
  mr_mjcf_options o = {NULL, NULL, 0, NULL, NULL};
  return o;
}

/* ---- keyframes ---- */

/* one joint's coordinates and velocities from MuJoCo's key layout */
static void key_joint(int type, const double *qm, const double *vm, double *q, double *v) {
  if (type == MJ_FREE) {
    double quat[4] = {qm[3], qm[4], qm[5], qm[6]};
    mj_normvec(quat, 4);
    q[0] = qm[0], q[1] = qm[1], q[2] = qm[2];
    q[3] = quat[1], q[4] = quat[2], q[5] = quat[3], q[6] = quat[0];
    if (!vm) return;
    double inv[4] = {quat[0], -quat[1], -quat[2], -quat[3]};
    mj_rotvec(v, inv, vm); /* world → body frame */
    v[3] = vm[3], v[4] = vm[4], v[5] = vm[5];
  } else if (type == MJ_BALL) {
    double quat[4] = {qm[0], qm[1], qm[2], qm[3]};
    mj_normvec(quat, 4);
    q[0] = quat[1], q[1] = quat[2], q[2] = quat[3], q[3] = quat[0];
    if (vm) v[0] = vm[0], v[1] = vm[1], v[2] = vm[2];
  } else {
    q[0] = qm[0];
    if (vm) v[0] = vm[0];
  }
}

static mr_status one_key(mj_ctx *c, mj_result *r, const mj_key_el *k, mr_world_keyframe *out,
                         int index) {
  const mr_model *m = r->model;
  if ((k->nqpos && k->nqpos != m->nq) || (k->nqvel && k->nqvel != m->nv) ||
      (k->nctrl && k->nctrl != c->nactuators))
    return mj_fail(c, k->node, MR_ERR_INVALID, "%s has %d values, the model has %d",
                   k->nqpos && k->nqpos != m->nq   ? "qpos"
                   : k->nqvel && k->nqvel != m->nv ? "qvel"
                                                   : "ctrl",
                   k->nqpos && k->nqpos != m->nq   ? k->nqpos
                   : k->nqvel && k->nqvel != m->nv ? k->nqvel
                                                   : k->nctrl,
                   k->nqpos && k->nqpos != m->nq   ? m->nq
                   : k->nqvel && k->nqvel != m->nv ? m->nv
                                                   : c->nactuators);
  if (k->name[0])
    snprintf(out->name, sizeof out->name, "%s", k->name);
  else
    snprintf(out->name, sizeof out->name, "key#%d", index);
  out->time = k->time;
  out->q = malloc((size_t)(m->nq + 1) * sizeof *out->q);
  out->v = calloc((size_t)(m->nv + 1), sizeof *out->v);
  out->ctrl = calloc((size_t)(c->nactuators + 1), sizeof *out->ctrl);
  if (!out->q || !out->v || !out->ctrl)
    return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  memcpy(out->q, r->q0, (size_t)m->nq * sizeof *out->q);
  out->nctrl = c->nactuators;
  for (int i = 0; i < k->nctrl; ++i)
    out->ctrl[i] = k->ctrl[i];
  int qm = 0, vm = 0;
  for (int j = 0; j < c->njoints; ++j) { /* MuJoCo's layout is joint by joint, as moreau's */
    int t = r->type_of_joint[j], nq = t == MJ_FREE ? 7 : t == MJ_BALL ? 4 : 1;
    if (k->nqpos)
      key_joint(t, k->qpos + qm, k->nqvel ? k->qvel + vm : NULL, out->q + r->coord_of_joint[j],
                out->v + r->dof_of_joint[j]);
    else if (k->nqvel && t == MJ_FREE)
      key_joint(t,
                (double[7]){0, 0, 0, r->q0[r->coord_of_joint[j] + 6],
                            r->q0[r->coord_of_joint[j] + 3], r->q0[r->coord_of_joint[j] + 4],
                            r->q0[r->coord_of_joint[j] + 5]},
                k->qvel + vm, (double[7]){0}, out->v + r->dof_of_joint[j]);
    else if (k->nqvel)
      for (int i = 0; i < (t == MJ_BALL ? 3 : 1); ++i)
        out->v[r->dof_of_joint[j] + i] = k->qvel[vm + i];
    qm += nq, vm += t == MJ_FREE ? 6 : t == MJ_BALL ? 3 : 1;
  }
  return MR_OK;
}

mr_status mj_build_keys(mj_ctx *c, mj_result *r) {
  if (!c->nkeys) return MR_OK;
  r->keys = calloc((size_t)c->nkeys, sizeof *r->keys);
  if (!r->keys) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  for (int k = 0; k < c->nkeys; ++k) {
    r->nkeys = k + 1;
    if (one_key(c, r, &c->keys[k], &r->keys[k], k)) return mj_status(c);
  }
  return MR_OK;
}

/* ---- warnings ---- */

/* one warning listing what was ignored, and the soft-constraint note */
static void summary_warning(mj_ctx *c, mr_scene *s) {
  char msg[MR_ERROR_MSG_MAX] = "";
  size_t len = 0;
  const xmlNode *first = NULL;
  for (int i = 0; i < c->nignored && len < sizeof msg; ++i) {
    if (!first) first = c->ignored[i].first;
    char where[32] = "";
    if (c->ignored[i].first)
      snprintf(where, sizeof where, " (line %ld)", mj_line_of(c->ignored[i].first));
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s x%d%s", i ? "; " : "",
                            c->ignored[i].what, c->ignored[i].count, where);
  }
  char full[2 * MR_ERROR_MSG_MAX];
  if (c->nignored) {
    snprintf(full, sizeof full, "%s:%ld: ignored, without effect on the dynamics: %s",
             mj_file_of(c, first), mj_line_of(first), msg);
    if (c->opt && c->opt->warn) c->opt->warn(c->opt->warn_user, full);
    s->nwarnings++;
    snprintf(s->warning, sizeof s->warning, "%.*s", MR_ERROR_MSG_MAX - 1, full);
  }
  if (c->soft_first) {
    snprintf(full, sizeof full,
             "%s:%ld: %s (and every solref / solimp / solmix): soft-constraint parameters have "
             "no rigid counterpart: moreau's contacts, limits and couplings are hard "
             "(docs/mjcf.md)",
             mj_file_of(c, c->soft_first), mj_line_of(c->soft_first), c->soft_attr);
    if (c->opt && c->opt->warn) c->opt->warn(c->opt->warn_user, full);
    s->nwarnings++;
    snprintf(s->warning, sizeof s->warning, "%.*s", MR_ERROR_MSG_MAX - 1, full);
  }
}

/* the options moreau does not model */
static mr_status check_options(mj_ctx *c) {
  if (c->density > 0 || c->viscosity > 0)
    return mj_fail(c, c->option_node, MR_ERR_UNSUPPORTED,
                   "density=\"%g\" viscosity=\"%g\": fluid forces (drag, lift, added mass) are "
                   "not modelled",
                   c->density, c->viscosity);
  if (c->enable & MJ_ENBL_OVERRIDE)
    return mj_fail(c, c->option_node, MR_ERR_UNSUPPORTED,
                   "<flag override=\"enable\">: contact parameters overridden by o_margin / "
                   "o_solref / o_solimp are not modelled");
  return MR_OK;
}

/* ---- the robot in the scene ---- */

enum { ROBOT_NAME_MAX = MR_NAME_MAX / 2 - 1 };

/* the robot's name: the option, else the file's stem */
static mr_status robot_name(const mj_ctx *c, const mr_scene *s, const mr_mjcf_options *opt,
                            char *out, mr_error *err) {
  const char *slash = strrchr(c->file, '/'), *base = slash ? slash + 1 : c->file;
  if (opt && opt->robot)
    snprintf(out, MR_NAME_MAX, "%s", opt->robot);
  else
    snprintf(out, MR_NAME_MAX, "%.*s", (int)strcspn(base, "."), base);
  if (!out[0] || strchr(out, '/') || strlen(out) > ROBOT_NAME_MAX)
    return mr_error_set(err, MR_ERR_INVALID,
                        "%s: robot name '%s' must be 1 to %d characters without '/'", c->file, out,
                        ROBOT_NAME_MAX);
  for (int i = 0; i < s->nbodies; ++i)
    if (!strcmp(s->bodies[i].name, out))
      return mr_error_set(err, MR_ERR_INVALID, "%s: robot name '%s' is already a body's name",
                          c->file, out);
  for (int i = 0; i + 1 < s->nrobots; ++i)
    if (!strcmp(s->robots[i].name, out))
      return mr_error_set(err, MR_ERR_INVALID, "%s: duplicate robot name '%s'", c->file, out);
  return MR_OK;
}

/* the scene's q0, v0 grown to the model's sizes (the new entries zero) */
static mr_status grow_state(mr_scene *s, int old_nq, int old_nv, int *cap_q, int *cap_v,
                            mr_error *err) {
  int nq = s->model->nq, nv = s->model->nv;
  double *q = realloc(s->q0, (size_t)(nq + 1) * sizeof *q);
  if (q) s->q0 = q;
  double *v = realloc(s->v0, (size_t)(nv + 1) * sizeof *v);
  if (v) s->v0 = v;
  if (!q || !v) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  for (int i = old_nq; i < nq; ++i)
    s->q0[i] = 0.0;
  for (int i = old_nv; i < nv; ++i)
    s->v0[i] = 0.0;
  if (cap_q) *cap_q = nq + 1;
  if (cap_v) *cap_v = nv + 1;
  return MR_OK;
}

/* name → "ROBOT/name" */
static void prefixed(char *dst, const char *robot, const char *name) {
  char tmp[MR_NAME_MAX];
  snprintf(tmp, sizeof tmp, "%s", name); /* dst may be name */
  int lr = (int)strlen(robot);
  snprintf(dst, MR_NAME_MAX, "%.*s/%.*s", lr, robot, MR_NAME_MAX - 2 - lr, tmp);
}

/* actuators, pairs and constraints renumbered into the scene */
static mr_status add_parts(mr_scene *s, const mj_result *r, const mr_scene_robot *rb,
                           int first_geom, mr_error *err) {
  mr_world_actuator *a =
      realloc(s->actuators, (size_t)(s->nactuators + r->nactuators + 1) * sizeof *a);
  mr_world_pair *p = realloc(s->pairs, (size_t)(s->npairs + r->npairs + 1) * sizeof *p);
  if (a) s->actuators = a;
  if (p) s->pairs = p;
  mr_world_constraint *k =
      realloc(s->constraints, (size_t)(s->nconstraints + r->nconstraints + 1) * sizeof *k);
  if (k) s->constraints = k;
  if (!a || !p || !k) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < r->nactuators; ++i) {
    mr_world_actuator *x = &s->actuators[s->nactuators++];
    *x = r->actuators[i];
    prefixed(x->name, rb->name, r->actuators[i].name);
    for (int d = 0; d < x->ndofs; ++d)
      x->dof[d] += rb->idx_v;
  }
  for (int i = 0; i < r->npairs; ++i) {
    mr_world_pair *x = &s->pairs[s->npairs++];
    *x = r->pairs[i];
    prefixed(x->a, rb->name, r->pairs[i].a);
    prefixed(x->b, rb->name, r->pairs[i].b);
    if (x->geom_a >= 0) x->geom_a += first_geom;
    if (x->geom_b >= 0) x->geom_b += first_geom;
    if (x->body_a >= 0) x->body_a += rb->first_body - 1;
    if (x->body_b >= 0) x->body_b += rb->first_body - 1;
  }
  mr_world_coupled_limit *l =
      realloc(s->coupled_limits, (size_t)(s->ncoupled_limits + r->nlimits + 1) * sizeof *l);
  if (!l) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  s->coupled_limits = l;
  for (int i = 0; i < r->nlimits; ++i) {
    mr_world_coupled_limit *x = &s->coupled_limits[s->ncoupled_limits++];
    *x = r->limits[i];
    x->robot = (int)(rb - s->robots);
    x->dof += rb->idx_v, x->dof2 += rb->idx_v;
  }
  for (int i = 0; i < r->nconstraints; ++i) {
    mr_world_constraint *x = &s->constraints[s->nconstraints++];
    *x = r->constraints[i];
    if (x->body1) prefixed(x->body1_name, rb->name, r->constraints[i].body1_name);
    if (x->body2) prefixed(x->body2_name, rb->name, r->constraints[i].body2_name);
    x->body1 = x->body1 ? x->body1 + rb->first_body - 1 : 0;
    x->body2 = x->body2 ? x->body2 + rb->first_body - 1 : 0;
  }
  return MR_OK;
}

/* keyframes of robot index ri, the file's keys (robot-local) with prefixed names */
static mr_status add_keys(mr_scene *s, mj_result *r, int ri, int first_actuator, mr_error *err) {
  mr_world_keyframe *k = realloc(s->keyframes, (size_t)(s->nkeyframes + r->nkeys + 1) * sizeof *k);
  if (!k) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  s->keyframes = k;
  for (int i = 0; i < r->nkeys; ++i) {
    mr_world_keyframe *x = &s->keyframes[s->nkeyframes++];
    *x = r->keys[i];
    prefixed(x->name, s->robots[ri].name, r->keys[i].name);
    x->robot = ri;
    x->first_actuator = first_actuator;
    r->keys[i].q = r->keys[i].v = r->keys[i].ctrl = NULL; /* now the scene's */
  }
  r->nkeys = 0;
  return MR_OK;
}

/* the robot's initial controls: PD gains, targets and torques of its actuators and springs */
static mr_status initial_controls(mr_scene *s, mr_scene_robot *rb, int first_actuator,
                                  const double *ctrl, mr_error *err) {
  int nq = s->model->nq, nv = s->model->nv;
  double *tau = calloc((size_t)nv + 1, sizeof *tau), *kp = calloc((size_t)nv + 1, sizeof *kp);
  double *kd = calloc((size_t)nv + 1, sizeof *kd), *qt = malloc((size_t)(nq + 1) * sizeof *qt);
  double *u = calloc((size_t)s->nactuators + 1, sizeof *u);
  mr_status st = MR_OK;
  if (!tau || !kp || !kd || !qt || !u) {
    st = mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  } else {
    memcpy(qt, s->q0, (size_t)nq * sizeof *qt);
    for (int i = 0; ctrl && i < s->nactuators - first_actuator; ++i)
      u[first_actuator + i] = ctrl[i];
    mr_world w = {.model = s->model,
                  .nrobots = s->nrobots,
                  .robots = s->robots,
                  .nactuators = s->nactuators,
                  .actuators = s->actuators};
    mr_world_actuation(&w, u, tau, qt, kp, kd);
    for (int k = 0; k < rb->nv; ++k) {
      rb->kp[k] = kp[rb->idx_v + k], rb->kd[k] = kd[rb->idx_v + k];
      rb->torque[k] = tau[rb->idx_v + k];
      rb->pd |= rb->kp[k] != 0 || rb->kd[k] != 0;
    }
    memcpy(rb->q_target, qt + rb->idx_q, (size_t)rb->nq * sizeof *qt);
  }
  free(tau), free(kp), free(kd), free(qt), free(u);
  return st;
}

static mr_status robot_arrays(mr_scene_robot *rb, const mj_result *r, mr_error *err) {
  size_t nv = (size_t)rb->nv + 1, nq = (size_t)rb->nq + 1;
  rb->kp = calloc(nv, sizeof(double)), rb->kd = calloc(nv, sizeof(double));
  rb->torque = calloc(nv, sizeof(double)), rb->q_target = calloc(nq, sizeof(double));
  int springs = 0;
  for (int k = 0; k < rb->nv; ++k)
    springs |= r->spring_k[k] != 0;
  if (springs) {
    rb->spring_k = malloc(nv * sizeof(double)), rb->spring_ref = malloc(nv * sizeof(double));
    if (rb->spring_k && rb->spring_ref) {
      memcpy(rb->spring_k, r->spring_k, (size_t)rb->nv * sizeof(double));
      memcpy(rb->spring_ref, r->spring_ref, (size_t)rb->nv * sizeof(double));
    }
  }
  if (!rb->kp || !rb->kd || !rb->torque || !rb->q_target ||
      (springs && (!rb->spring_k || !rb->spring_ref)))
    return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  return MR_OK;
}

/* the keyframe chosen as the initial state, or NULL */
static const mr_world_keyframe *start_key(const mj_ctx *c, const mj_result *r,
                                          const mr_mjcf_options *opt, mr_error *err) {
  if (!opt || !opt->keyframe) return NULL;
  for (int k = 0; k < r->nkeys; ++k)
    if (!strcmp(r->keys[k].name, opt->keyframe)) return &r->keys[k];
  char list[400] = "";
  for (int k = 0; k < r->nkeys; ++k)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
             r->keys[k].name);
  mr_error_set(err, MR_ERR_INVALID, "%s: no keyframe '%s' (available: %s)", c->file, opt->keyframe,
               list[0] ? list : "none");
  return NULL;
}

static mr_status add_loaded(mr_scene *s, mj_ctx *c, mj_result *r, mr_scene_robot *rb, int ri,
                            const mr_mjcf_options *opt, mr_se3 place, int *cap_q, int *cap_v,
                            mr_error *err) {
  const mr_world_keyframe *key = start_key(c, r, opt, err);
  if (opt && opt->keyframe && !key) return err ? err->status : MR_ERR_INVALID;
  if (robot_name(c, s, opt, rb->name, err)) return err ? err->status : MR_ERR_INVALID;
  snprintf(rb->urdf, sizeof rb->urdf, "%s", c->file);
  int first_geom = s->model->ngeoms, first_actuator = s->nactuators;
  rb->idx_q = s->model->nq, rb->idx_v = s->model->nv, rb->nq = r->model->nq, rb->nv = r->model->nv;
  rb->first_body = s->model->nbodies;
  rb->floating = r->floating;
  rb->self_collision = 1;
  rb->joint_limits = !r->limits_off;
  if (mr_model_append(s->model, r->model, 0, place, rb->name, err) < 0)
    return err ? err->status : MR_ERR_INVALID;
  rb->nbodies = s->model->nbodies - rb->first_body;
  if (grow_state(s, rb->idx_q, rb->idx_v, cap_q, cap_v, err)) return MR_ERR_NOMEM;
  memcpy(s->q0 + rb->idx_q, key ? key->q : r->q0, (size_t)rb->nq * sizeof *s->q0);
  if (key) memcpy(s->v0 + rb->idx_v, key->v, (size_t)rb->nv * sizeof *s->v0);
  if (robot_arrays(rb, r, err) || add_parts(s, r, rb, first_geom, err))
    return err ? err->status : MR_ERR_NOMEM;
  if (initial_controls(s, rb, first_actuator, key ? key->ctrl : NULL, err)) return MR_ERR_NOMEM;
  return add_keys(s, r, ri, first_actuator, err);
}

mr_status mj_scene_add_robot(mr_scene *s, const char *path, const mr_mjcf_options *opt,
                             mr_se3 place, int *cap_q, int *cap_v, double *timestep,
                             mr_error *err) {
  mj_ctx c;
  mj_result r;
  mr_scene_robot *rb = &s->robots[s->nrobots - 1];
  mr_status st = mj_load_result(path, opt, &r, &c, err);
  if (!st && !(opt && opt->tree_only)) st = check_options(&c);
  if (!st) st = add_loaded(s, &c, &r, rb, s->nrobots - 1, opt, place, cap_q, cap_v, err);
  if (!st) summary_warning(&c, s);
  if (!st && timestep) *timestep = c.timestep;
  if (!st && timestep) s->model->gravity = r.model->gravity;
  mj_result_free(&r);
  mj_ctx_free(&c);
  return st;
}

mr_status mr_mjcf_load(const char *path, const mr_mjcf_options *opt, mr_scene *scene,
                       mr_error *err) {
  mr_error local;
  if (!err) err = &local;
  mr_error_clear(err);
  scene_init(scene, path);
  mr_status st = MR_OK;
  if (!(scene->model = mr_model_create(path)) ||
      !(scene->robots = calloc(1, sizeof *scene->robots)))
    st = mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  if (!st) {
    scene->nrobots = 1;
    st = mj_scene_add_robot(scene, path, opt, mr_se3_identity(), NULL, NULL, &scene->timestep, err);
  }
  if (st) mr_scene_free(scene);
  return st;
}

mr_status mr_scene_set_keyframe(mr_scene *s, const char *name, mr_error *err) {
  int hit = -1, count = 0;
  for (int k = 0; name && k < s->nkeyframes; ++k) {
    const char *full = s->keyframes[k].name, *slash = strchr(full, '/');
    if (!strcmp(full, name)) {
      hit = k, count = 1;
      break;
    }
    if (slash && !strcmp(slash + 1, name)) hit = k, ++count;
  }
  if (count != 1) {
    char list[400] = "";
    for (int k = 0; k < s->nkeyframes; ++k)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
               s->keyframes[k].name);
    return mr_error_set(err, MR_ERR_INVALID, "%s: %s keyframe '%s' (available: %s)", s->path,
                        count ? "ambiguous" : "no", name ? name : "(null)",
                        list[0] ? list : "none");
  }
  const mr_world_keyframe *key = &s->keyframes[hit];
  mr_scene_robot *rb = &s->robots[key->robot];
  memcpy(s->q0 + rb->idx_q, key->q, (size_t)rb->nq * sizeof *key->q);
  memcpy(s->v0 + rb->idx_v, key->v, (size_t)rb->nv * sizeof *key->v);
  return initial_controls(s, rb, key->first_actuator, key->ctrl, err);
}
