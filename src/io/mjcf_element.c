/* Default classes and element attributes, with MuJoCo 2.2.2's rules: an element starts from its
 * class (its class attribute, else its body's childclass, inherited down the tree, else "main"),
 * a class starts as a copy of its parent, and each attribute given overwrites the field. Number
 * lists marked "up to n" (size, friction, gear, the actuator parameters) overwrite only the
 * entries given. The actuator shortcuts (motor, position, velocity, ...) set MuJoCo's general
 * actuator fields as MuJoCo does, in a class or on an element. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io/mjcf_internal.h"

static const char *const joint_types[] = {"free", "ball", "slide", "hinge", NULL};
static const char *const geom_types[] = {"plane",    "hfield", "sphere", "capsule", "ellipsoid",
                                         "cylinder", "box",    "mesh",   NULL};

/* ---- MuJoCo's own defaults ---- */

static void alt_init(mj_alt *a) {
  a->axisangle[0] = a->xyaxes[0] = a->zaxis[0] = a->euler[0] = a->fullinertia[0] = NAN;
}

static void joint_init(mj_joint *j) {
  memset(j, 0, sizeof *j);
  j->type = MJ_HINGE;
  j->axis[2] = 1.0;
  j->limited = MJ_AUTO;
}

static void geom_init(mj_geom *g) {
  memset(g, 0, sizeof *g);
  g->type = MJ_SPHERE;
  g->contype = g->conaffinity = 1;
  g->condim = 3;
  g->friction[0] = 1.0, g->friction[1] = 0.005, g->friction[2] = 0.0001;
  g->solmix = 1.0;
  g->density = 1000.0;
  g->mass = NAN;
  g->fitscale = 1.0;
  g->fromto[0] = NAN;
  g->quat[0] = 1.0;
  alt_init(&g->alt);
}

static void site_init(mj_site *s) {
  memset(s, 0, sizeof *s);
  s->type = MJ_SPHERE;
  s->size[0] = s->size[1] = s->size[2] = 0.005;
  s->quat[0] = 1.0;
  s->fromto[0] = NAN;
  alt_init(&s->alt);
}

static void actuator_init(mj_actuator *a) {
  memset(a, 0, sizeof *a);
  a->ctrllimited = a->forcelimited = a->actlimited = MJ_AUTO;
  a->gear[0] = 1.0;
  a->dynprm[0] = 1.0;
  a->gainprm[0] = 1.0;
}

static void tendon_init(mj_tendon *t) {
  memset(t, 0, sizeof *t);
  t->limited = MJ_AUTO;
  t->width = 0.003;
  t->springlength = -1.0;
}

static void pair_init(mj_pair *p) {
  memset(p, 0, sizeof *p);
  p->condim = 3;
  p->friction[0] = p->friction[1] = 1.0;
  p->friction[2] = 0.005;
  p->friction[3] = p->friction[4] = 0.0001;
}

void mj_class_init(mj_class *d) {
  memset(d, 0, sizeof *d);
  snprintf(d->name, sizeof d->name, "main");
  d->parent = -1;
  joint_init(&d->joint);
  geom_init(&d->geom);
  site_init(&d->site);
  actuator_init(&d->actuator);
  tendon_init(&d->tendon);
  pair_init(&d->pair);
  d->eq_active = 1;
  d->mesh_scale[0] = d->mesh_scale[1] = d->mesh_scale[2] = 1.0;
}

/* ---- soft-constraint parameters: noted once ---- */

void mj_note_soft(mj_ctx *c, const xmlNode *n) {
  static const char *const soft[] = {
      "solref",         "solimp",         "solreflimit", "solimplimit",
      "solreffriction", "solimpfriction", "solmix",      NULL};
  if (c->soft_first) return;
  for (int k = 0; soft[k]; ++k)
    if (mj_has(n, soft[k])) {
      c->soft_first = n;
      snprintf(c->soft_attr, sizeof c->soft_attr, "%s", soft[k]);
      return;
    }
}

/* ---- elements ---- */

mr_status mj_joint_attrs(mj_ctx *c, const xmlNode *n, mj_joint *j) {
  mj_note_soft(c, n);
  if (mj_read_keyword(c, n, "type", joint_types, NULL, &j->type) ||
      mj_read_tfauto(c, n, "limited", &j->limited) || mj_read_int(c, n, "group", &j->group) ||
      mj_read(c, n, "pos", j->pos, 3, 1, NULL) || mj_read(c, n, "axis", j->axis, 3, 1, NULL) ||
      mj_read(c, n, "springdamper", j->springdamper, 2, 1, NULL) ||
      mj_read(c, n, "stiffness", &j->stiffness, 1, 1, NULL) ||
      mj_read(c, n, "range", j->range, 2, 1, NULL) ||
      mj_read(c, n, "margin", &j->margin, 1, 1, NULL) ||
      mj_read(c, n, "ref", &j->ref, 1, 1, NULL) ||
      mj_read(c, n, "springref", &j->springref, 1, 1, NULL) ||
      mj_read(c, n, "armature", &j->armature, 1, 1, NULL) ||
      mj_read(c, n, "damping", &j->damping, 1, 1, NULL) ||
      mj_read(c, n, "frictionloss", &j->frictionloss, 1, 1, NULL))
    return mj_status(c);
  return MR_OK;
}

mr_status mj_geom_attrs(mj_ctx *c, const xmlNode *n, mj_geom *g) {
  static const char *const fluid[] = {"none", "ellipsoid", NULL};
  double coef[5];
  mj_note_soft(c, n);
  if (mj_read_keyword(c, n, "type", geom_types, NULL, &g->type) ||
      mj_read(c, n, "size", g->size, 3, 0, NULL) || mj_read_int(c, n, "contype", &g->contype) ||
      mj_read_int(c, n, "conaffinity", &g->conaffinity) ||
      mj_read_int(c, n, "condim", &g->condim) || mj_read_int(c, n, "group", &g->group) ||
      mj_read_int(c, n, "priority", &g->priority) ||
      mj_read(c, n, "friction", g->friction, 3, 0, NULL) ||
      mj_read(c, n, "solmix", &g->solmix, 1, 1, NULL) ||
      mj_read(c, n, "margin", &g->margin, 1, 1, NULL) ||
      mj_read(c, n, "gap", &g->gap, 1, 1, NULL) ||
      mj_read_text(c, n, "hfield", g->hfield, sizeof g->hfield, NULL) ||
      mj_read_text(c, n, "mesh", g->mesh, sizeof g->mesh, NULL) ||
      mj_read(c, n, "fitscale", &g->fitscale, 1, 1, NULL) ||
      mj_read_keyword(c, n, "fluidshape", fluid, NULL, &g->fluidshape) ||
      mj_read(c, n, "fluidcoef", coef, 5, 0, NULL) || mj_read(c, n, "mass", &g->mass, 1, 1, NULL) ||
      mj_read(c, n, "density", &g->density, 1, 1, NULL) ||
      mj_read(c, n, "fromto", g->fromto, 6, 1, NULL) || mj_read(c, n, "pos", g->pos, 3, 1, NULL) ||
      mj_read(c, n, "quat", g->quat, 4, 1, NULL) || mj_read_alt(c, n, &g->alt, 0) ||
      mj_read_bool(c, n, "shellinertia", &g->shellinertia))
    return mj_status(c);
  return MR_OK;
}

mr_status mj_site_attrs(mj_ctx *c, const xmlNode *n, mj_site *s) {
  if (mj_read_keyword(c, n, "type", geom_types, NULL, &s->type) ||
      mj_read(c, n, "size", s->size, 3, 0, NULL) || mj_read_int(c, n, "group", &s->group) ||
      mj_read(c, n, "pos", s->pos, 3, 1, NULL) || mj_read(c, n, "quat", s->quat, 4, 1, NULL) ||
      mj_read(c, n, "fromto", s->fromto, 6, 1, NULL) || mj_read_alt(c, n, &s->alt, 0))
    return mj_status(c);
  return MR_OK;
}

mr_status mj_tendon_attrs(mj_ctx *c, const xmlNode *n, mj_tendon *t) {
  mj_note_soft(c, n);
  if (mj_read_int(c, n, "group", &t->group) || mj_read_tfauto(c, n, "limited", &t->limited) ||
      mj_read(c, n, "width", &t->width, 1, 1, NULL) ||
      mj_read(c, n, "range", t->range, 2, 1, NULL) ||
      mj_read(c, n, "margin", &t->margin, 1, 1, NULL) ||
      mj_read(c, n, "stiffness", &t->stiffness, 1, 1, NULL) ||
      mj_read(c, n, "damping", &t->damping, 1, 1, NULL) ||
      mj_read(c, n, "frictionloss", &t->frictionloss, 1, 1, NULL) ||
      mj_read(c, n, "springlength", &t->springlength, 1, 1, NULL))
    return mj_status(c);
  return MR_OK;
}

mr_status mj_pair_attrs(mj_ctx *c, const xmlNode *n, mj_pair *p) {
  mj_note_soft(c, n);
  if (mj_read_int(c, n, "condim", &p->condim) || mj_read(c, n, "margin", &p->margin, 1, 1, NULL) ||
      mj_read(c, n, "gap", &p->gap, 1, 1, NULL) ||
      mj_read(c, n, "friction", p->friction, 5, 0, NULL))
    return mj_status(c);
  return MR_OK;
}

/* ---- actuators ---- */

/* the transmission target: at most one of joint, jointinparent, tendon, cranksite, site, body */
static mr_status actuator_target(mj_ctx *c, const xmlNode *n, mj_actuator_el *a) {
  static const char *const keys[] = {"joint", "jointinparent", "tendon", "cranksite",
                                     "site",  "body",          NULL};
  static const int types[] = {MJ_TRN_JOINT,       MJ_TRN_JOINTINPARENT, MJ_TRN_TENDON,
                              MJ_TRN_SLIDERCRANK, MJ_TRN_SITE,          MJ_TRN_BODY};
  int count = 0;
  for (int k = 0; keys[k]; ++k) {
    int found = 0;
    if (mj_read_text(c, n, keys[k], a->target, sizeof a->target, &found)) return mj_status(c);
    if (found) a->trntype = types[k], ++count;
  }
  if (count > 1)
    return mj_fail(c, n, MR_ERR_PARSE, "an actuator can have at most one transmission target");
  if ((mj_has(n, "cranklength") || mj_has(n, "slidersite")) && a->trntype != MJ_TRN_SLIDERCRANK &&
      a->trntype != MJ_TRN_NONE)
    return mj_fail(c, n, MR_ERR_PARSE,
                   "cranklength and slidersite can only be used in a slider-crank transmission");
  if (mj_has(n, "refsite") && a->trntype != MJ_TRN_SITE && a->trntype != MJ_TRN_NONE)
    return mj_fail(c, n, MR_ERR_PARSE, "refsite can only be used with a site transmission");
  return MR_OK;
}

static mr_status general_attrs(mj_ctx *c, const xmlNode *n, mj_actuator *a) {
  static const char *const dyn[] = {"none", "integrator", "filter", "muscle", "user", NULL};
  static const char *const gain[] = {"fixed", "affine", "muscle", "user", NULL};
  static const char *const bias[] = {"none", "affine", "muscle", "user", NULL};
  if (mj_read_keyword(c, n, "dyntype", dyn, NULL, &a->dyntype) ||
      mj_read_keyword(c, n, "gaintype", gain, NULL, &a->gaintype) ||
      mj_read_keyword(c, n, "biastype", bias, NULL, &a->biastype) ||
      mj_read(c, n, "dynprm", a->dynprm, MJ_NPRM, 0, NULL) ||
      mj_read(c, n, "gainprm", a->gainprm, MJ_NPRM, 0, NULL) ||
      mj_read(c, n, "biasprm", a->biasprm, MJ_NPRM, 0, NULL))
    return mj_status(c);
  return MR_OK;
}

/* position / velocity / intvelocity: the gain (kp or kv) and the affine bias it implies */
static mr_status servo_attrs(mj_ctx *c, const xmlNode *n, mj_actuator *a, const char *type) {
  int velocity = !strcmp(type, "velocity");
  memset(a->biasprm, 0, sizeof a->biasprm);
  if (mj_read(c, n, velocity ? "kv" : "kp", a->gainprm, 1, 1, NULL)) return mj_status(c);
  a->biasprm[velocity ? 2 : 1] = -a->gainprm[0];
  a->dyntype = !strcmp(type, "intvelocity") ? MJ_DYN_INTEGRATOR : MJ_DYN_NONE;
  if (a->dyntype == MJ_DYN_INTEGRATOR) a->actlimited = 1;
  a->gaintype = MJ_GAIN_FIXED;
  a->biastype = MJ_BIAS_AFFINE;
  return MR_OK;
}

/* the types moreau refuses later keep MuJoCo's fields where they matter for the message */
static mr_status other_attrs(mj_ctx *c, const xmlNode *n, mj_actuator *a, const char *type) {
  if (!strcmp(type, "damper") || !strcmp(type, "adhesion")) {
    a->ctrllimited = 1;
    a->gaintype = !strcmp(type, "damper") ? MJ_GAIN_AFFINE : MJ_GAIN_FIXED;
    a->biastype = MJ_BIAS_NONE;
    a->dyntype = MJ_DYN_NONE;
  } else if (!strcmp(type, "cylinder")) {
    a->dyntype = MJ_DYN_FILTER;
  } else if (!strcmp(type, "muscle")) {
    a->dyntype = MJ_DYN_MUSCLE;
    a->gaintype = MJ_GAIN_MUSCLE;
    a->biastype = MJ_BIAS_MUSCLE;
  }
  return mj_read(c, n, "ctrlrange", a->ctrlrange, 2, 1, NULL);
}

static mr_status actuator_fields(mj_ctx *c, const xmlNode *n, mj_actuator *a, const char *type) {
  if (mj_read_int(c, n, "group", &a->group) ||
      mj_read_tfauto(c, n, "ctrllimited", &a->ctrllimited) ||
      mj_read_tfauto(c, n, "forcelimited", &a->forcelimited) ||
      mj_read_tfauto(c, n, "actlimited", &a->actlimited) ||
      mj_read(c, n, "ctrlrange", a->ctrlrange, 2, 1, NULL) ||
      mj_read(c, n, "forcerange", a->forcerange, 2, 1, NULL) ||
      mj_read(c, n, "actrange", a->actrange, 2, 1, NULL) ||
      mj_read(c, n, "lengthrange", a->lengthrange, 2, 1, NULL) ||
      mj_read(c, n, "gear", a->gear, 6, 0, NULL) ||
      mj_read(c, n, "cranklength", &a->cranklength, 1, 1, NULL))
    return mj_status(c);
  if (!strcmp(type, "general")) return general_attrs(c, n, a);
  if (!strcmp(type, "motor")) {
    a->gainprm[0] = 1.0;
    a->dyntype = MJ_DYN_NONE, a->gaintype = MJ_GAIN_FIXED, a->biastype = MJ_BIAS_NONE;
    return MR_OK;
  }
  if (!strcmp(type, "position") || !strcmp(type, "velocity") || !strcmp(type, "intvelocity"))
    return servo_attrs(c, n, a, type);
  return other_attrs(c, n, a, type);
}

mr_status mj_actuator_attrs(mj_ctx *c, const xmlNode *n, mj_actuator_el *a) {
  if (actuator_target(c, n, a)) return mj_status(c);
  return actuator_fields(c, n, &a->a, mj_name(n));
}

/* ---- classes ---- */

int mj_class_find(const mj_ctx *c, const char *name) {
  for (int i = 0; i < c->nclasses; ++i)
    if (!strcmp(c->classes[i].name, name)) return i;
  return -1;
}

mr_status mj_class_of(mj_ctx *c, const xmlNode *n, int fallback, int *cls) {
  char name[MJ_NAME];
  int found = 0;
  *cls = fallback;
  if (mj_read_text(c, n, "class", name, sizeof name, &found)) return mj_status(c);
  if (!found) return MR_OK;
  if ((*cls = mj_class_find(c, name)) < 0)
    return mj_fail(c, n, MR_ERR_INVALID, "unknown default class '%s'", name);
  return MR_OK;
}

/* one element of a default class */
static mr_status class_element(mj_ctx *c, const xmlNode *n, mj_class *d) {
  const char *e = mj_name(n);
  if (!strcmp(e, "joint")) return mj_joint_attrs(c, n, &d->joint);
  if (!strcmp(e, "geom")) return mj_geom_attrs(c, n, &d->geom);
  if (!strcmp(e, "site")) return mj_site_attrs(c, n, &d->site);
  if (!strcmp(e, "tendon")) return mj_tendon_attrs(c, n, &d->tendon);
  if (!strcmp(e, "pair")) return mj_pair_attrs(c, n, &d->pair);
  if (!strcmp(e, "mesh")) return mj_read(c, n, "scale", d->mesh_scale, 3, 1, NULL);
  if (!strcmp(e, "equality")) {
    mj_note_soft(c, n);
    return mj_read_bool(c, n, "active", &d->eq_active);
  }
  if (!strcmp(e, "material") || !strcmp(e, "camera") || !strcmp(e, "light")) {
    mj_ignore(c, n, "<material>, <camera>, <light> defaults (rendering)");
    return MR_OK;
  }
  return actuator_fields(c, n, &d->actuator, e);
}

mr_status mj_parse_defaults(mj_ctx *c, const xmlNode *sec, int parent) {
  char name[MJ_NAME] = "";
  int found = 0, id = 0;
  if (mj_read_text(c, sec, "class", name, sizeof name, &found)) return mj_status(c);
  if (parent >= 0) {
    if (!found || !name[0]) return mj_fail(c, sec, MR_ERR_PARSE, "empty default class name");
    if (mj_class_find(c, name) >= 0)
      return mj_fail(c, sec, MR_ERR_INVALID, "repeated default class name '%s'", name);
    if (c->nclasses == c->cap_classes) {
      int cap = c->cap_classes ? 2 * c->cap_classes : 8;
      mj_class *p = realloc(c->classes, (size_t)cap * sizeof *p);
      if (!p) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
      c->classes = p, c->cap_classes = cap;
    }
    id = c->nclasses++;
    c->classes[id] = c->classes[parent];
    c->classes[id].parent = parent;
  }
  snprintf(c->classes[id].name, MJ_NAME, "%s", found && name[0] ? name : "main");
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n))
    if (!mj_is(n, "default") && class_element(c, n, &c->classes[id])) return mj_status(c);
  for (const xmlNode *n = mj_first(sec); n; n = mj_next(n))
    if (mj_is(n, "default") && mj_parse_defaults(c, n, id)) return mj_status(c);
  return MR_OK;
}
