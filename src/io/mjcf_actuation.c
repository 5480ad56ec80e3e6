/* Tendons, actuators and equality constraints of an MJCF file (docs/mjcf.md):
 *
 * - fixed tendons serve as transmissions (length L = Σ coef_k q_k); a tendon's own dynamics
 *   (limits, stiffness, damping, frictionloss) is refused, a spatial tendon is refused where it
 *   acts (limits, elasticity, an actuator or an equality on it) and ignored otherwise;
 * - actuators whose force is gain u + bias[0] + bias[1] L + bias[2] L' (motor, position,
 *   velocity, <general> with dyntype none, gaintype fixed, biastype none or affine) on a hinge or
 *   slide joint, or on a fixed tendon for a motor, become mr_world_actuator; anything else
 * (muscles, actuator dynamics, slider-crank, site and body transmissions, positive feedback) is
 * refused by name; forcerange maps to the dof's effort limit where one actuator drives a
 * spring-free dof;
 * - <equality>: joint couplings q1 = q1(0) + c0 + c1 (q2 − q2(0)) and fixed-tendon couplings
 *   linear in two joints become mimic joints; <connect> becomes a point constraint; welds,
 *   nonlinear polynomials and couplings of more joints are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mjcf_internal.h"
#include "moreau/dynamics.h"

/* ---- look-ups ---- */

static const mj_joint_el *find_joint(const mj_ctx *c, const char *name) {
  for (int b = 0; b < c->nbodies; ++b)
    for (int k = 0; k < c->bodies[b].njoints; ++k)
      if (!strcmp(c->bodies[b].joints[k].name, name)) return &c->bodies[b].joints[k];
  return NULL;
}

static int find_tendon(const mj_ctx *c, const char *name) {
  for (int i = 0; i < c->ntendons; ++i)
    if (!strcmp(c->tendons[i].name, name)) return i;
  return -1;
}

/* ---- tendons ---- */

/* resolve limited="auto" as MuJoCo 2.2.2 does (an error without autolimits) */
static mr_status tendon_limited(mj_ctx *c, mj_tendon_el *t) {
  if (t->t.limited != MJ_AUTO) return MR_OK;
  int has_range = !(t->t.range[0] == 0 && t->t.range[1] == 0);
  if (has_range && !c->autolimits)
    return mj_fail(c, t->node, MR_ERR_INVALID,
                   "tendon has a range but not limited: set compiler autolimits=\"true\", give "
                   "limited, or remove the range (MuJoCo 2.2.2)");
  t->t.limited = has_range;
  return MR_OK;
}

static mr_status check_tendon(mj_ctx *c, mj_tendon_el *t) {
  if (tendon_limited(c, t)) return mj_status(c);
  const char *why = t->t.limited && t->kind            ? "limited: a length limit"
                    : t->t.limited && t->t.margin != 0 ? "limited with a margin"
                    : t->t.stiffness != 0              ? "stiffness: a tendon spring"
                    : t->t.damping != 0                ? "damping: damping that couples its joints"
                    : t->t.frictionloss != 0           ? "frictionloss: tendon dry friction"
                                                       : NULL;
  if (why)
    return mj_fail(c, t->node, MR_ERR_UNSUPPORTED, "a %s tendon with %s is not modelled",
                   t->kind ? "spatial" : "fixed", why);
  for (int k = 0; !t->kind && k < t->njoints; ++k) {
    const mj_joint_el *j = find_joint(c, t->joint[k]);
    if (!j) return mj_fail(c, t->node, MR_ERR_INVALID, "unknown joint '%s'", t->joint[k]);
    if (j->j.type != MJ_HINGE && j->j.type != MJ_SLIDE)
      return mj_fail(c, t->node, MR_ERR_INVALID,
                     "joint '%s' of a fixed tendon must be a hinge or "
                     "a slide",
                     t->joint[k]);
  }
  return MR_OK;
}

/* the dofs and coefficients of a fixed tendon (repeated joints summed) */
static int tendon_dofs(const mj_ctx *c, const mj_result *r, const mj_tendon_el *t, int *dof,
                       double *coef) {
  int n = 0;
  for (int k = 0; k < t->njoints; ++k) {
    int d = r->dof_of_joint[find_joint(c, t->joint[k])->id], i = 0;
    while (i < n && dof[i] != d)
      ++i;
    if (i == n) dof[n] = d, coef[n++] = 0.0;
    coef[i] += t->coef[k];
  }
  return n;
}

static int tendon_at_q0(mj_ctx *c, mj_result *r, int t, int *dof, double *coef, double *L0);

/* ---- actuators ---- */

/* what moreau cannot do with an actuator's force law */
static mr_status check_force_law(mj_ctx *c, const mj_actuator_el *e) {
  const mj_actuator *a = &e->a;
  const char *t = e->type;
  if (!strcmp(t, "muscle") || a->dyntype == MJ_DYN_MUSCLE || a->gaintype == MJ_GAIN_MUSCLE)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "muscle actuators (activation dynamics, force-length-velocity curves) are "
                   "not modelled");
  if (!strcmp(t, "adhesion"))
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED, "adhesion actuators are not modelled");
  if (a->dyntype != MJ_DYN_NONE)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "actuator dynamics (dyntype %s: an activation state integrated in time) are "
                   "not modelled",
                   a->dyntype == MJ_DYN_INTEGRATOR ? "integrator"
                   : a->dyntype == MJ_DYN_FILTER   ? "filter"
                                                   : "user");
  if (a->gaintype != MJ_GAIN_FIXED)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "a gain that depends on the actuator's length or velocity (gaintype %s%s) is "
                   "not modelled",
                   a->gaintype == MJ_GAIN_AFFINE ? "affine" : "user",
                   !strcmp(t, "damper") ? ", a damper" : "");
  if (a->biastype != MJ_BIAS_NONE && a->biastype != MJ_BIAS_AFFINE)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED, "biastype user is not modelled");
  return MR_OK;
}

/* ctrllimited / forcelimited "auto" with MuJoCo 2.2.2's rule, and the range checks */
static mr_status actuator_limits(mj_ctx *c, mj_actuator_el *e) {
  int *lim[2] = {&e->a.ctrllimited, &e->a.forcelimited};
  const double *range[2] = {e->a.ctrlrange, e->a.forcerange};
  const char *what[2] = {"ctrl", "force"};
  for (int k = 0; k < 2; ++k) {
    if (*lim[k] != MJ_AUTO) continue;
    int has = !(range[k][0] == 0 && range[k][1] == 0);
    if (has && !c->autolimits)
      return mj_fail(c, e->node, MR_ERR_INVALID,
                     "actuator has %srange but not %slimited: set compiler autolimits=\"true\", "
                     "give %slimited, or remove %srange (MuJoCo 2.2.2)",
                     what[k], what[k], what[k], what[k]);
    *lim[k] = has;
  }
  for (int k = 0; k < 2; ++k)
    if (*lim[k] && range[k][0] >= range[k][1])
      return mj_fail(c, e->node, MR_ERR_INVALID, "invalid %srange [%g, %g]", what[k], range[k][0],
                     range[k][1]);
  return MR_OK;
}

/* the transmission: dofs and moment arms */
static mr_status transmission(mj_ctx *c, mj_result *r, const mj_actuator_el *e,
                              mr_world_actuator *a) {
  double g = e->a.gear[0];
  if (e->trntype == MJ_TRN_NONE)
    return mj_fail(c, e->node, MR_ERR_INVALID, "missing transmission target (joint or tendon)");
  if (e->trntype == MJ_TRN_JOINT || e->trntype == MJ_TRN_JOINTINPARENT) {
    const mj_joint_el *j = find_joint(c, e->target);
    if (!j) return mj_fail(c, e->node, MR_ERR_INVALID, "unknown joint '%s'", e->target);
    if (j->j.type != MJ_HINGE && j->j.type != MJ_SLIDE)
      return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                     "an actuator on the %s joint '%s' (a 6-entry gear) is not modelled",
                     j->j.type == MJ_FREE ? "free" : "ball", e->target);
    a->ndofs = 1, a->dof[0] = r->dof_of_joint[j->id], a->arm[0] = g;
    return MR_OK;
  }
  if (e->trntype == MJ_TRN_TENDON) {
    int t = find_tendon(c, e->target);
    if (t < 0) return mj_fail(c, e->node, MR_ERR_INVALID, "unknown tendon '%s'", e->target);
    if (c->tendons[t].kind)
      return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                     "an actuator on the spatial tendon '%s' (a path through sites and wrapping "
                     "geoms) is not modelled",
                     e->target);
    a->ndofs = tendon_dofs(c, r, &c->tendons[t], a->dof, a->arm);
    for (int k = 0; k < a->ndofs; ++k)
      a->arm[k] *= g;
    return MR_OK;
  }
  return mj_fail(c, e->node, MR_ERR_UNSUPPORTED, "a %s transmission is not modelled",
                 e->trntype == MJ_TRN_SLIDERCRANK ? "slider-crank"
                 : e->trntype == MJ_TRN_SITE      ? "site"
                                                  : "body");
}

/* forcerange as the effort limit of the one spring-free dof the actuator alone drives */
static mr_status force_limit(mj_ctx *c, mj_result *r, const mj_actuator_el *e,
                             const mr_world_actuator *a, int index) {
  const double *fr = e->a.forcerange;
  int alone = a->ndofs == 1;
  for (int i = 0; alone && i < index; ++i)
    for (int k = 0; k < r->actuators[i].ndofs; ++k)
      alone &= r->actuators[i].dof[k] != a->dof[0];
  for (int i = index + 1; alone && i < c->nactuators; ++i)
    alone &= strcmp(c->actuators[i].target, e->target) || c->actuators[i].trntype != e->trntype;
  if (!alone || fr[0] != -fr[1] || r->spring_k[a->dof[0]] != 0)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "forcelimited: a force range is modelled only as the symmetric effort limit "
                   "of a joint driven by this actuator alone, without a joint spring");
  r->model->effort_limit[a->dof[0]] = fabs(a->arm[0]) * fr[1];
  return MR_OK;
}

static mr_status one_actuator(mj_ctx *c, mj_result *r, int index) {
  mj_actuator_el *e = &c->actuators[index];
  mr_world_actuator *a = &r->actuators[index];
  memset(a, 0, sizeof *a);
  if (e->name[0])
    snprintf(a->name, sizeof a->name, "%s", e->name);
  else
    snprintf(a->name, sizeof a->name, "actuator#%d", index);
  snprintf(a->type, sizeof a->type, "%s", e->type);
  if (check_force_law(c, e) || actuator_limits(c, e) || transmission(c, r, e, a))
    return mj_status(c);
  a->gain = e->a.gainprm[0];
  if (e->a.biastype == MJ_BIAS_AFFINE)
    for (int k = 0; k < 3; ++k)
      a->bias[k] = e->a.biasprm[k];
  if (a->bias[1] > 0 || a->bias[2] > 0)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "biasprm (%g %g %g): a force growing with the actuator's length or velocity "
                   "(negative stiffness or damping) is not modelled",
                   a->bias[0], a->bias[1], a->bias[2]);
  if (a->ndofs > 1 && (a->bias[1] != 0 || a->bias[2] != 0))
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "a servo on a tendon of %d joints couples them through its stiffness or "
                   "damping, which moreau's per-joint gains cannot represent",
                   a->ndofs);
  a->ctrllimited = e->a.ctrllimited && !(c->disable & MJ_DSBL_CLAMPCTRL);
  a->ctrlrange[0] = e->a.ctrlrange[0], a->ctrlrange[1] = e->a.ctrlrange[1];
  if (c->disable & MJ_DSBL_ACTUATION) a->gain = a->bias[0] = a->bias[1] = a->bias[2] = 0;
  if (e->a.forcelimited && force_limit(c, r, e, a, index)) return mj_status(c);
  return MR_OK;
}

/* ---- equality constraints ---- */

/* a mimic q_f = multiplier q_l + offset between the joints of two dofs */
static mr_status mimic(mj_ctx *c, mj_result *r, const xmlNode *n, int dof_f, int dof_l,
                       double multiplier, double offset) {
  const mr_model *m = r->model;
  if (multiplier == 0)
    return mj_fail(c, n, MR_ERR_UNSUPPORTED,
                   "a coupling that holds one joint at a constant value (a joint lock) is not "
                   "modelled");
  if (mr_model_add_mimic(r->model, m->dof_body[dof_f], m->dof_body[dof_l], multiplier, offset,
                         c->err) < 0) {
    char msg[MR_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", c->err ? c->err->msg : "");
    return mj_fail(c, n, MR_ERR_UNSUPPORTED, "as a mimic joint: %s", msg);
  }
  return MR_OK;
}

static mr_status check_poly(mj_ctx *c, const mj_equality_el *e) {
  if (e->polycoef[2] != 0 || e->polycoef[3] != 0 || e->polycoef[4] != 0)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "polycoef (%g %g %g %g %g): a nonlinear coupling is not modelled",
                   e->polycoef[0], e->polycoef[1], e->polycoef[2], e->polycoef[3], e->polycoef[4]);
  return MR_OK;
}

/* joint1 = joint1(0) + c0 + c1 (joint2 − joint2(0)) */
static mr_status joint_equality(mj_ctx *c, mj_result *r, const mj_equality_el *e) {
  const mj_joint_el *j1 = find_joint(c, e->obj1), *j2 = e->obj2[0] ? find_joint(c, e->obj2) : NULL;
  if (!j1 || (e->obj2[0] && !j2))
    return mj_fail(c, e->node, MR_ERR_INVALID, "unknown joint '%s'", !j1 ? e->obj1 : e->obj2);
  if (check_poly(c, e)) return mj_status(c);
  if (!j2)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "a joint equality without joint2 locks joint '%s' (not modelled)", e->obj1);
  if (j1->j.type != MJ_HINGE && j1->j.type != MJ_SLIDE)
    return mj_fail(c, e->node, MR_ERR_INVALID, "joint '%s' must be a hinge or a slide", e->obj1);
  if (j2->j.type != MJ_HINGE && j2->j.type != MJ_SLIDE)
    return mj_fail(c, e->node, MR_ERR_INVALID, "joint '%s' must be a hinge or a slide", e->obj2);
  double q1 = r->q0[r->coord_of_joint[j1->id]], q2 = r->q0[r->coord_of_joint[j2->id]];
  double c0 = e->polycoef[0], c1 = e->polycoef[1];
  return mimic(c, r, e->node, r->dof_of_joint[j1->id], r->dof_of_joint[j2->id], c1,
               q1 + c0 - c1 * q2);
}

/* a fixed tendon's dofs, coefficients and length at qpos0 */
static int tendon_at_q0(mj_ctx *c, mj_result *r, int t, int *dof, double *coef, double *L0) {
  int n = tendon_dofs(c, r, &c->tendons[t], dof, coef), k = 0;
  *L0 = 0;
  for (int i = 0; i < n; ++i) {
    const mr_joint *j = &r->model->bodies[r->model->dof_body[dof[i]]].joint;
    *L0 += coef[i] * r->q0[j->idx_q];
    if (coef[i] != 0) dof[k] = dof[i], coef[k++] = coef[i];
  }
  return k;
}

/* L1 − L1(0) = c0 + c1 (L2 − L2(0)), linear in two joints */
static mr_status tendon_equality(mj_ctx *c, mj_result *r, const mj_equality_el *e) {
  int t1 = find_tendon(c, e->obj1), t2 = e->obj2[0] ? find_tendon(c, e->obj2) : -1;
  if (t1 < 0 || (e->obj2[0] && t2 < 0))
    return mj_fail(c, e->node, MR_ERR_INVALID, "unknown tendon '%s'", t1 < 0 ? e->obj1 : e->obj2);
  if (check_poly(c, e)) return mj_status(c);
  if (c->tendons[t1].kind || (t2 >= 0 && c->tendons[t2].kind))
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED, "a coupling of spatial tendons is not modelled");
  int d1[MJ_MAX_TENDON_JOINTS], d2[MJ_MAX_TENDON_JOINTS];
  double a1[MJ_MAX_TENDON_JOINTS], a2[MJ_MAX_TENDON_JOINTS], L1, L2 = 0;
  int n1 = tendon_at_q0(c, r, t1, d1, a1, &L1),
      n2 = t2 >= 0 ? tendon_at_q0(c, r, t2, d2, a2, &L2) : 0;
  double c0 = e->polycoef[0], c1 = t2 >= 0 ? e->polycoef[1] : 0;
  /* one tendon of two joints: a1 q + b1 p = L1(0) + c0 */
  if (n1 == 2 && (n2 == 0 || c1 == 0))
    return mimic(c, r, e->node, d1[1], d1[0], -a1[0] / a1[1], (L1 + c0) / a1[1]);
  /* two tendons of one joint each: a q = L1(0) + c0 + c1 (b p − L2(0)) */
  if (n1 == 1 && n2 == 1)
    return mimic(c, r, e->node, d1[0], d2[0], c1 * a2[0] / a1[0], (L1 + c0 - c1 * L2) / a1[0]);
  return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                 "a tendon coupling of %d joints is not modelled (moreau couples two joints, as "
                 "mimic joints)",
                 n1 + n2);
}

/* <connect>: body1's anchor and the point of body2 (or the world) under it at qpos0 */
static mr_status connect_equality(mj_ctx *c, mj_result *r, const mj_equality_el *e,
                                  const double anchor[3]) {
  int b1 = -1, b2 = 0;
  for (int i = 1; i < c->nbodies; ++i) {
    if (!strcmp(c->bodies[i].name, e->obj1)) b1 = i;
    if (e->obj2[0] && !strcmp(c->bodies[i].name, e->obj2)) b2 = i;
  }
  if (b1 < 0 || (e->obj2[0] && !b2 && strcmp(e->obj2, "world")))
    return mj_fail(c, e->node, MR_ERR_INVALID, "unknown body '%s'", b1 < 0 ? e->obj1 : e->obj2);
  mr_world_constraint *p = realloc(r->constraints, (size_t)(r->nconstraints + 1) * sizeof *p);
  if (!p) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  r->constraints = p;
  mr_world_constraint *k = &p[r->nconstraints++];
  memset(k, 0, sizeof *k);
  k->body1 = r->body_of_mj[b1], k->body2 = r->body_of_mj[b2];
  snprintf(k->body1_name, MR_NAME_MAX, "%s", r->model->bodies[k->body1].name);
  snprintf(k->body2_name, MR_NAME_MAX, "%s", r->model->bodies[k->body2].name);
  k->world_point = 1;
  k->baumgarte = 1.0;
  mr_data *d = mr_data_create(r->model);
  if (!d) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  mr_forward_kinematics(r->model, d, r->q0, NULL, NULL);
  mr_se3 X = mr_se3_mul(&d->oMi[k->body1], &r->content_of_mj[b1]);
  k->point = mr_se3_act_point(&X, mr_v3(anchor[0], anchor[1], anchor[2]));
  mr_data_free(d);
  return MR_OK;
}

static mr_status one_equality(mj_ctx *c, mj_result *r, const mj_equality_el *e) {
  if (!e->active) return mj_ignore(c, e->node, "inactive <equality> constraints"), MR_OK;
  if (!strcmp(e->type, "joint")) return joint_equality(c, r, e);
  if (!strcmp(e->type, "tendon")) return tendon_equality(c, r, e);
  if (!strcmp(e->type, "connect")) {
    double anchor[3] = {0, 0, 0};
    int n = 0;
    if (mj_read(c, e->node, "anchor", anchor, 3, 1, &n)) return mj_status(c);
    if (!n) return mj_fail(c, e->node, MR_ERR_PARSE, "required attribute missing: 'anchor'");
    return connect_equality(c, r, e, anchor);
  }
  return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                 "a weld constraint (bodies held at a relative pose) is not modelled");
}

/* a limited fixed tendon of one or two joints: a limit on q1 − ratio q2 (ratio 0 for one) */
static mr_status tendon_limit(mj_ctx *c, mj_result *r, const mj_tendon_el *t) {
  int dof[MJ_MAX_TENDON_JOINTS], n = 0;
  double coef[MJ_MAX_TENDON_JOINTS], L0;
  n = tendon_at_q0(c, r, (int)(t - c->tendons), dof, coef, &L0);
  if (n < 1 || n > 2)
    return mj_fail(c, t->node, MR_ERR_UNSUPPORTED,
                   "a length limit on a tendon of %d joints is not modelled (one or two joints "
                   "are)",
                   n);
  mr_world_coupled_limit *p = realloc(r->limits, (size_t)(r->nlimits + 1) * sizeof *p);
  if (!p) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  r->limits = p;
  double c1 = coef[0], lo = t->t.range[0] / c1, hi = t->t.range[1] / c1;
  p[r->nlimits++] = (mr_world_coupled_limit){
      0,           dof[0], n == 2 ? dof[1] : dof[0], n == 2 ? -coef[1] / c1 : 0.0, fmin(lo, hi),
      fmax(lo, hi)};
  return MR_OK;
}

mr_status mj_build_actuation(mj_ctx *c, mj_result *r) {
  for (int t = 0; t < c->ntendons; ++t)
    if (check_tendon(c, &c->tendons[t])) return mj_status(c);
  r->actuators = calloc((size_t)(c->nactuators + 1), sizeof *r->actuators);
  if (!r->actuators) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  r->nactuators = c->nactuators;
  for (int i = 0; i < c->nactuators; ++i)
    if (one_actuator(c, r, i)) return mj_status(c);
  int eq_off = (c->disable & (MJ_DSBL_EQUALITY | MJ_DSBL_CONSTRAINT)) != 0;
  for (int i = 0; i < c->nequalities && !eq_off; ++i)
    if (one_equality(c, r, &c->equalities[i])) return mj_status(c);
  if (eq_off && c->nequalities) mj_ignore(c, c->equalities[0].node, "<equality> (disabled)");
  for (int t = 0; t < c->ntendons; ++t)
    if (c->tendons[t].kind) mj_ignore(c, c->tendons[t].node, "spatial tendons without effect");
  int limits_off = (c->disable & (MJ_DSBL_LIMIT | MJ_DSBL_CONSTRAINT)) != 0;
  for (int t = 0; t < c->ntendons && !limits_off; ++t)
    if (!c->tendons[t].kind && c->tendons[t].t.limited && tendon_limit(c, r, &c->tendons[t]))
      return mj_status(c);
  return MR_OK;
}
