/* Scene robots: a URDF model appended to the scene's model under the prefix "NAME/", its base
 * placed (fixed base) or its free-flyer configuration set (floating base), an initial posture
 * from an SRDF group_state and/or joint values by name, and PD gains and targets per degree of
 * freedom. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scene_internal.h"
#include "moreau/mpc.h"
#include "moreau/urdf.h"

static const char *const robot_keys[] = {"name",
                                         "urdf",
                                         "srdf",
                                         "floating",
                                         "self_collision",
                                         "position",
                                         "orientation",
                                         "posture",
                                         "joints",
                                         "pd",
                                         "package_roots",
                                         "friction",
                                         "material",
                                         "linear_velocity",
                                         "angular_velocity",
                                         "joint_limits",
                                         "torques",
                                         "armature",
                                         "inertia_fix",
                                         "lock_joints",
                                         "lock_massless",
                                         "controller",
                                         "joint_friction",
                                         "joint_friction_scale",
                                         NULL};
static const char *const pd_keys[] = {"kp", "kd", "targets", "sine", NULL};
static const char *const sine_keys[] = {"joint", "amplitude", "frequency", "phase", NULL};
static const char *const controller_keys[] = {"type",
                                              "velocity",
                                              "gait",
                                              "period",
                                              "duty",
                                              "step_height",
                                              "horizon",
                                              "dt",
                                              "mu",
                                              "kp",
                                              "kd",
                                              "stance_kd",
                                              "torque_limit",
                                              "raibert_gain",
                                              "integral_gain",
                                              "iterations",
                                              "feet",
                                              "max_load",
                                              NULL};
static const char *const controller_types[] = {"mpc", NULL};
static const char *const gait_names[] = {"trot", "stand", NULL};

/* ---- configuration helpers ---- */

/* neutral configuration of src into q (free-flyer and spherical: identity quaternion) */
static void neutral(const mr_model *m, double *q) {
  for (int i = 0; i < m->nq; ++i)
    q[i] = 0.0;
  for (int b = 1; b < m->nbodies; ++b) {
    const mr_joint *j = &m->bodies[b].joint;
    if (j->type == MR_JOINT_FREE || j->type == MR_JOINT_SPHERICAL) q[j->idx_q + j->nq - 1] = 1.0;
  }
}

/* the names of src's 1-dof joints, NULL-terminated, into a malloc'ed array */
static const char **joint_names(const mr_model *m) {
  const char **names = calloc((size_t)m->nbodies + 1, sizeof *names);
  int k = 0;
  for (int b = 1; names && b < m->nbodies; ++b)
    if (m->bodies[b].joint.nq == 1) names[k++] = m->bodies[b].joint.name;
  return names;
}

/* q of the 1-dof joint `name` of m, or NULL (with the nearest name in *near) */
static double *joint_q(const mr_model *m, double *q, const char *name, const char **near) {
  int b = mr_model_joint_index(m, name);
  if (b > 0 && m->bodies[b].joint.nq == 1) return &q[m->bodies[b].joint.idx_q];
  const char **names = joint_names(m);
  *near = names ? mr_yaml_nearest(name, names) : NULL;
  free(names);
  return NULL;
}

/* ---- SRDF postures ---- */

static xmlNode *child_named(xmlNode *n, const char *tag, xmlNode *after) {
  for (xmlNode *c = after ? after->next : n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, tag) == 0) return c;
  return NULL;
}

static int attr_is(xmlNode *n, const char *attr, const char *value) {
  xmlChar *v = xmlGetProp(n, (const xmlChar *)attr);
  int eq = v && strcmp((const char *)v, value) == 0;
  xmlFree(v);
  return eq;
}

/* the numbers of an SRDF value attribute (at most max); -1 when one is not a number */
static int parse_values(const char *text, double *out, int max) {
  int n = 0;
  char *end = NULL;
  for (const char *p = text; n <= max;) {
    while (*p == ' ' || *p == '\t' || *p == '\n')
      ++p;
    if (!*p) return n;
    double x = strtod(p, &end);
    if (end == p || !isfinite(x) || n == max) return -1;
    out[n++] = x, p = end;
  }
  return -1;
}

/* apply the joint values of one group_state: a joint the model has, with as many values as its
 * configuration (a quaternion part renormalised); other entries are skipped */
static void apply_state(const mr_model *m, xmlNode *gs, double *q) {
  for (xmlNode *j = child_named(gs, "joint", NULL); j; j = child_named(gs, "joint", j)) {
    xmlChar *name = xmlGetProp(j, (const xmlChar *)"name");
    xmlChar *value = xmlGetProp(j, (const xmlChar *)"value");
    double x[7];
    int b = name ? mr_model_joint_index(m, (const char *)name) : -1;
    int n = value ? parse_values((const char *)value, x, 7) : -1;
    const mr_joint *jt = b > 0 ? &m->bodies[b].joint : NULL;
    if (jt && n == jt->nq) {
      double *qj = q + jt->idx_q;
      for (int k = 0; k < n; ++k)
        qj[k] = x[k];
      if (n >= 4) {
        double *qq = qj + n - 4,
               nrm = sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
        for (int k = 0; k < 4; ++k)
          qq[k] = nrm > 0 ? qq[k] / nrm : (k == 3);
      }
    }
    xmlFree(name);
    xmlFree(value);
  }
}

static void posture_list(xmlNode *root, char *buf, size_t len) {
  buf[0] = '\0';
  for (xmlNode *g = child_named(root, "group_state", NULL); g;
       g = child_named(root, "group_state", g)) {
    xmlChar *n = xmlGetProp(g, (const xmlChar *)"name");
    size_t used = strlen(buf);
    if (n && used < len) snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (char *)n);
    xmlFree(n);
  }
}

static mr_status srdf_posture(mr_scene_ctx *c, const mr_ynode *pn, const char *srdf,
                              const mr_model *m, double *q) {
  const char *posture = mr_yaml_text(pn);
  xmlDoc *doc = xmlReadFile(srdf, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc)
    return mr_yaml_error(&c->y, pn, MR_ERR_PARSE, "'posture': cannot parse the SRDF file '%s'",
                         srdf);
  xmlNode *root = xmlDocGetRootElement(doc), *found = NULL;
  for (xmlNode *g = root ? child_named(root, "group_state", NULL) : NULL; g && !found;
       g = child_named(root, "group_state", g))
    if (attr_is(g, "name", posture)) found = g;
  mr_status st = MR_OK;
  if (found) {
    apply_state(m, found, q);
  } else {
    char list[256] = "";
    if (root) posture_list(root, list, sizeof list);
    st = mr_yaml_error(&c->y, pn, MR_ERR_INVALID,
                       "'posture': no posture '%s' in '%s' (available: %s)", posture, srdf,
                       list[0] ? list : "none");
  }
  xmlFreeDoc(doc);
  return st;
}

/* the candidate SRDF files of a URDF: X.srdf beside X.urdf, then the layout of robot
 * description packages, NAME/srdf/X.srdf beside NAME/urdf/X.urdf (or NAME/robots/X.urdf) */
static int srdf_candidates(const char *urdf, char out[2][MR_SCENE_PATH_MAX]) {
  char stem[MR_SCENE_PATH_MAX];
  snprintf(stem, sizeof stem, "%s", urdf);
  char *dot = strrchr(stem, '.'), *slash = strrchr(stem, '/');
  if (dot && (!slash || dot > slash)) *dot = '\0';
  snprintf(out[0], MR_SCENE_PATH_MAX, "%.*s.srdf", MR_SCENE_PATH_MAX - 6, stem);
  if (!slash) return 1;
  /* the package: the URDF's directory's parent (the current directory's parent for "d/X") */
  const char *base = slash + 1;
  *slash = '\0';
  char *up = strrchr(stem, '/');
  int n = snprintf(out[1], MR_SCENE_PATH_MAX, "%.*s%ssrdf/%s.srdf", up ? (int)(up - stem + 1) : 0,
                   stem, up ? "" : "", base);
  return n > 0 && n < MR_SCENE_PATH_MAX ? 2 : 1;
}

int scene_default_srdf(const char *urdf, char *out, size_t len) {
  char cand[2][MR_SCENE_PATH_MAX];
  int n = srdf_candidates(urdf, cand);
  for (int i = 0; i < n; ++i) {
    FILE *f = fopen(cand[i], "r");
    if (f) return fclose(f), snprintf(out, len, "%s", cand[i]), 0;
  }
  if (n == 2)
    snprintf(out, len, "'%s' nor '%s'", cand[0], cand[1]);
  else
    snprintf(out, len, "'%s'", cand[0]);
  return -1;
}

/* the SRDF path: the 'srdf' key, or the default SRDF of the URDF (scene_default_srdf) */
static mr_status srdf_path(mr_scene_ctx *c, const mr_ynode *n, const char *urdf, char *out) {
  mr_ynode *sn = mr_yaml_get(&c->y, n, "srdf");
  if (sn) {
    const char *rel = NULL;
    if (mr_yaml_string(&c->y, sn, "srdf", &rel)) return scene_status(c);
    if (scene_resolve(c, rel, out, MR_SCENE_PATH_MAX))
      return mr_yaml_error(&c->y, sn, MR_ERR_IO, "'srdf': file '%s' not found", rel);
    return MR_OK;
  }
  if (scene_default_srdf(urdf, out, MR_SCENE_PATH_MAX))
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "posture"), MR_ERR_IO,
                         "'posture': needs an SRDF file; %s%s found (set 'srdf')",
                         strstr(out, " nor ") ? "neither " : "", out);
  return MR_OK;
}

/* the SRDF file of a robot for its named postures: the 'srdf' key, or the default SRDF of the
 * URDF when there is one; "" when there is none */
static void postures_file(mr_scene_ctx *c, const mr_ynode *n, const char *urdf, char *out) {
  mr_ynode *sn = mr_yaml_get(&c->y, n, "srdf");
  out[0] = '\0';
  if (sn) {
    if (scene_resolve(c, mr_yaml_text(sn), out, MR_SCENE_PATH_MAX)) out[0] = '\0';
    return;
  }
  if (scene_default_srdf(urdf, out, MR_SCENE_PATH_MAX)) out[0] = '\0';
}

/* every SRDF group_state as a named posture: the robot's initial configuration q with the
 * group_state's joint values applied */
static mr_status robot_postures(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                                const double *q, mr_scene_robot *r) {
  char srdf[MR_SCENE_PATH_MAX];
  postures_file(c, n, r->urdf, srdf);
  if (!srdf[0]) return MR_OK;
  xmlDoc *doc = xmlReadFile(srdf, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  int count = 0;
  for (xmlNode *g = root ? child_named(root, "group_state", NULL) : NULL; g;
       g = child_named(root, "group_state", g))
    ++count;
  mr_status st = MR_OK;
  r->postures = calloc((size_t)(count ? count : 1), sizeof *r->postures);
  if (!r->postures) st = mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (xmlNode *g = root && !st ? child_named(root, "group_state", NULL) : NULL; g && !st;
       g = child_named(root, "group_state", g)) {
    mr_world_posture *p = &r->postures[r->npostures];
    if (!(p->q = malloc((size_t)(m->nq ? m->nq : 1) * sizeof *p->q))) {
      st = mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
      break;
    }
    r->npostures++;
    xmlChar *name = xmlGetProp(g, (const xmlChar *)"name");
    snprintf(p->name, sizeof p->name, "%s", name ? (const char *)name : "");
    xmlFree(name);
    memcpy(p->q, q, (size_t)m->nq * sizeof *q);
    apply_state(m, g, p->q);
  }
  if (doc) xmlFreeDoc(doc);
  return st;
}

/* joints: {NAME: value, ...} */
static mr_status joint_values(mr_scene_ctx *c, const mr_ynode *map, const mr_model *m, double *q,
                              const char *key) {
  if (mr_yaml_need_map(&c->y, map, key)) return scene_status(c);
  for (int i = 0; i < mr_yaml_map_size(map); ++i) {
    mr_ynode *k = mr_yaml_map_key(&c->y, map, i);
    const char *near = NULL;
    double *qi = joint_q(m, q, mr_yaml_text(k), &near);
    if (!qi)
      return mr_yaml_error(&c->y, k, MR_ERR_INVALID,
                           "'%s': the robot has no 1-dof joint '%s'%s%s%s", key, mr_yaml_text(k),
                           near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
    if (mr_yaml_double(&c->y, mr_yaml_map_value(&c->y, map, i), mr_yaml_text(k), qi))
      return scene_status(c);
  }
  return MR_OK;
}

/* one sine offset of a joint's target: {joint, amplitude, frequency, phase} */
static mr_status robot_sine(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                            mr_scene_sine *out) {
  const char *joint = NULL, *near = NULL;
  out->phase = 0.0;
  if (mr_yaml_check_map(&c->y, n, sine_keys, "'pd.sine' entry") ||
      mr_yaml_string(&c->y, mr_yaml_get(&c->y, n, "joint"), "joint", &joint) ||
      mr_yaml_double(&c->y, mr_yaml_get(&c->y, n, "amplitude"), "amplitude", &out->amplitude) ||
      mr_yaml_double(&c->y, mr_yaml_get(&c->y, n, "frequency"), "frequency", &out->frequency) ||
      mr_yaml_opt_double(&c->y, n, "phase", &out->phase))
    return scene_status(c);
  int b = mr_model_joint_index(m, joint);
  if (b <= 0 || m->bodies[b].joint.nq != 1) {
    double probe = 0.0;
    joint_q(m, &probe, joint, &near);
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "'pd.sine': the robot has no 1-dof joint '%s'%s%s%s", joint,
                         near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
  }
  if (!(out->frequency >= 0.0))
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'pd.sine': frequency %g must be >= 0 Hz",
                         out->frequency);
  out->idx_q = m->bodies[b].joint.idx_q;
  out->idx_v = m->bodies[b].joint.idx_v;
  return MR_OK;
}

/* pd.sine: a list of sine offsets of joint targets (a gait, a periodic motion) */
static mr_status robot_sines(mr_scene_ctx *c, const mr_ynode *sn, const mr_model *m,
                             mr_scene_robot *r) {
  if (mr_yaml_need_seq(&c->y, sn, "pd.sine")) return scene_status(c);
  int n = mr_yaml_seq_size(sn);
  r->sines = calloc((size_t)(n ? n : 1), sizeof *r->sines);
  if (!r->sines) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i)
    if (robot_sine(c, mr_yaml_seq_at(&c->y, sn, i), m, &r->sines[i])) return scene_status(c);
  r->nsines = n;
  return MR_OK;
}

/* ---- loading ---- */

/* package roots: the listed ones (resolved like other paths), then every ancestor directory of
 * the URDF file, so that package://NAME/... finds a package NAME above the file */
static int package_roots(mr_scene_ctx *c, const mr_ynode *n, const char *urdf,
                         char roots[][MR_SCENE_PATH_MAX], int cap) {
  int k = 0;
  mr_ynode *pr = mr_yaml_get(&c->y, n, "package_roots");
  for (int i = 0; i < mr_yaml_seq_size(pr) && k < cap; ++i) {
    const char *r = mr_yaml_text(mr_yaml_seq_at(&c->y, pr, i));
    scene_join(roots[k++], MR_SCENE_PATH_MAX, r[0] == '/' ? "" : c->dir, r);
  }
  char dir[MR_SCENE_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", urdf);
  char *slash;
  while (k < cap && (slash = strrchr(dir, '/')) && slash != dir) {
    *slash = '\0';
    snprintf(roots[k++], MR_SCENE_PATH_MAX, "%s", dir);
  }
  return k;
}

/* ---- repairs of published files: inertia_fix, lock_joints, lock_massless ---- */

#define MR_SCENE_MAX_LOCKS 64

/* a URDF warning becomes a scene warning (the count, and the last one's text) */
static void robot_warning(void *user, const char *msg) {
  mr_scene *s = user;
  s->nwarnings++;
  snprintf(s->warning, sizeof s->warning, "%s", msg);
}

/* the robot keys that repair a file as published, into the URDF options (locks: the joint names,
 * pointing into the YAML document) */
static mr_status robot_repair_options(mr_scene_ctx *c, const mr_ynode *n, mr_urdf_options *opt,
                                      const char **locks) {
  mr_ynode *ln = mr_yaml_get(&c->y, n, "lock_joints");
  if (mr_yaml_opt_bool(&c->y, n, "inertia_fix", &opt->inertia_fix) ||
      mr_yaml_opt_bool(&c->y, n, "lock_massless", &opt->lock_massless) ||
      (ln && mr_yaml_need_seq(&c->y, ln, "lock_joints")))
    return scene_status(c);
  int nl = ln ? mr_yaml_seq_size(ln) : 0;
  if (nl > MR_SCENE_MAX_LOCKS)
    return mr_yaml_error(&c->y, ln, MR_ERR_INVALID, "'lock_joints': %d joints, at most %d", nl,
                         MR_SCENE_MAX_LOCKS);
  for (int i = 0; i < nl; ++i)
    if (mr_yaml_string(&c->y, mr_yaml_seq_at(&c->y, ln, i), "lock_joints", &locks[i]))
      return scene_status(c);
  opt->lock_joints = locks;
  opt->nlock_joints = nl;
  opt->warn = robot_warning;
  opt->warn_user = c->s;
  return MR_OK;
}

static mr_status load_urdf(mr_scene_ctx *c, const mr_ynode *n, mr_scene_robot *r, mr_model **out) {
  mr_ynode *un = mr_yaml_get(&c->y, n, "urdf");
  mr_ynode *pr = mr_yaml_get(&c->y, n, "package_roots");
  const char *rel = NULL;
  if (!un) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "robot '%s': missing 'urdf'", r->name);
  if (mr_yaml_string(&c->y, un, "urdf", &rel) ||
      (pr && mr_yaml_need_seq(&c->y, pr, "package_roots")) ||
      mr_yaml_opt_bool(&c->y, n, "floating", &r->floating) ||
      mr_yaml_opt_bool(&c->y, n, "self_collision", &r->self_collision))
    return scene_status(c);
  if (scene_resolve(c, rel, r->urdf, sizeof r->urdf))
    return mr_yaml_error(&c->y, un, MR_ERR_IO,
                         "'urdf': file '%s' not found (looked relative to the scene file, then to "
                         "the current directory)",
                         rel);
  char(*roots)[MR_SCENE_PATH_MAX] = malloc(16 * sizeof *roots);
  if (!roots) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  const char *rp[16];
  int nr = package_roots(c, n, r->urdf, roots, 16);
  for (int i = 0; i < nr; ++i)
    rp[i] = roots[i];
  mr_urdf_options opt = mr_urdf_options_default();
  opt.floating = r->floating;
  opt.package_roots = rp;
  opt.npackage_roots = nr;
  const char *locks[MR_SCENE_MAX_LOCKS];
  mr_status st = robot_repair_options(c, n, &opt, locks);
  if (st) {
    free(roots);
    return st;
  }
  mr_error uerr;
  mr_error_clear(&uerr);
  st = mr_urdf_load(r->urdf, &opt, out, &uerr);
  free(roots);
  if (st) return mr_yaml_error(&c->y, un, uerr.status, "'urdf': %s", uerr.msg);
  return MR_OK;
}

/* mimic joints follow their leaders in q: q_f = multiplier q_l + offset */
static void apply_mimics(const mr_model *m, double *q) {
  for (int k = 0; k < m->nmimics; ++k) {
    const mr_mimic *c = &m->mimics[k];
    q[m->bodies[c->follower].joint.idx_q] =
        c->multiplier * q[m->bodies[c->leader].joint.idx_q] + c->offset;
  }
}

/* initial configuration of the robot (its own coordinates) */
static mr_status robot_posture(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m, double *q) {
  mr_ynode *pn = mr_yaml_get(&c->y, n, "posture"), *jn = mr_yaml_get(&c->y, n, "joints");
  const char *urdf = c->s->robots[c->s->nrobots - 1].urdf;
  char srdf[MR_SCENE_PATH_MAX];
  neutral(m, q);
  /* an explicit srdf must exist even without a posture */
  if (!pn && mr_yaml_get(&c->y, n, "srdf") && srdf_path(c, n, urdf, srdf)) return scene_status(c);
  if (pn) {
    const char *name = NULL;
    if (mr_yaml_string(&c->y, pn, "posture", &name) || srdf_path(c, n, urdf, srdf) ||
        srdf_posture(c, pn, srdf, m, q))
      return scene_status(c);
  }
  return jn ? joint_values(c, jn, m, q, "joints") : MR_OK;
}

/* torques: {JOINT: value, ...}, the commanded torque of 1-dof joints (N m or N); joint_limits */
static mr_status robot_torques(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                               mr_scene_robot *r) {
  mr_ynode *tn = mr_yaml_get(&c->y, n, "torques");
  r->joint_limits = 1;
  if (mr_yaml_opt_bool(&c->y, n, "joint_limits", &r->joint_limits)) return scene_status(c);
  if (!tn) return MR_OK;
  if (mr_yaml_need_map(&c->y, tn, "torques")) return scene_status(c);
  for (int i = 0; i < mr_yaml_map_size(tn); ++i) {
    mr_ynode *k = mr_yaml_map_key(&c->y, tn, i);
    int b = mr_model_joint_index(m, mr_yaml_text(k));
    if (b <= 0 || m->bodies[b].joint.nv != 1)
      return mr_yaml_error(&c->y, k, MR_ERR_INVALID, "'torques': the robot has no 1-dof joint '%s'",
                           mr_yaml_text(k));
    double *t = &r->torque[m->bodies[b].joint.idx_v];
    if (mr_yaml_double(&c->y, mr_yaml_map_value(&c->y, tn, i), mr_yaml_text(k), t))
      return scene_status(c);
  }
  return MR_OK;
}

/* a per-joint value ≥ 0 (kp, kd, armature) into out[dof of m]: one number for every 1-dof
 * joint, or a map {JOINT: value} (joints not named keep 0) */
static mr_status per_joint(mr_scene_ctx *c, const mr_ynode *v, const char *key, const mr_model *m,
                           double *out) {
  double x = 0.0;
  if (mr_yaml_is_scalar(v)) {
    if (mr_yaml_double(&c->y, v, key, &x)) return scene_status(c);
    if (!(x >= 0.0) || !isfinite(x))
      return mr_yaml_error(&c->y, v, MR_ERR_INVALID, "'%s': must be a finite number >= 0, got %g",
                           key, x);
    for (int b = 1; b < m->nbodies; ++b)
      if (m->bodies[b].joint.nv == 1) out[m->bodies[b].joint.idx_v] = x;
    return MR_OK;
  }
  if (mr_yaml_need_map(&c->y, v, key)) return scene_status(c);
  for (int i = 0; i < mr_yaml_map_size(v); ++i) {
    mr_ynode *k = mr_yaml_map_key(&c->y, v, i);
    const char *near = NULL;
    double probe = 0.0;
    int b = mr_model_joint_index(m, mr_yaml_text(k));
    if (b <= 0 || m->bodies[b].joint.nv != 1) {
      joint_q(m, &probe, mr_yaml_text(k), &near);
      return mr_yaml_error(&c->y, k, MR_ERR_INVALID,
                           "'%s': the robot has no 1-dof joint '%s'%s%s%s", key, mr_yaml_text(k),
                           near ? ": did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    mr_ynode *vn = mr_yaml_map_value(&c->y, v, i);
    if (mr_yaml_double(&c->y, vn, mr_yaml_text(k), &x)) return scene_status(c);
    if (!(x >= 0.0) || !isfinite(x))
      return mr_yaml_error(&c->y, vn, MR_ERR_INVALID,
                           "'%s.%s': must be a finite number >= 0, got %g", key, mr_yaml_text(k),
                           x);
    out[m->bodies[b].joint.idx_v] = x;
  }
  return MR_OK;
}

/* armature: rotor inertia added to the diagonal of M on the robot's dofs (the scene model dst,
 * the robot's dofs from r->idx_v) */
static mr_status robot_armature(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                                const mr_scene_robot *r, mr_model *dst) {
  mr_ynode *an = mr_yaml_get(&c->y, n, "armature");
  if (!an) return MR_OK;
  double *a = malloc((size_t)(m->nv ? m->nv : 1) * sizeof *a);
  if (!a) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int k = 0; k < m->nv; ++k)
    a[k] = NAN; /* not given: the model's value stays */
  mr_status st = per_joint(c, an, "armature", m, a);
  for (int k = 0; !st && k < m->nv; ++k)
    if (!isnan(a[k])) dst->armature[r->idx_v + k] = a[k];
  free(a);
  return st;
}

/* joint_friction: a robot's dry joint friction (N m or N), overriding the URDF's <dynamics
 * friction> (a number for every 1-dof joint, a mapping for the joints it names); then
 * joint_friction_scale (≥ 0, default 1; 0 disables it) multiplies every one of the robot's */
static mr_status robot_joint_friction(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                                      const mr_scene_robot *r, mr_model *dst) {
  mr_ynode *fn = mr_yaml_get(&c->y, n, "joint_friction");
  mr_ynode *sn = mr_yaml_get(&c->y, n, "joint_friction_scale");
  double scale = 1.0, *f = dst->joint_friction + r->idx_v;
  if (sn && mr_yaml_double(&c->y, sn, "joint_friction_scale", &scale)) return scene_status(c);
  if (!(scale >= 0.0) || !isfinite(scale))
    return mr_yaml_error(&c->y, sn, MR_ERR_INVALID,
                         "'joint_friction_scale': must be a finite number >= 0, got %g", scale);
  if (fn) {
    double *a = malloc((size_t)(m->nv ? m->nv : 1) * sizeof *a);
    if (!a) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < m->nv; ++k)
      a[k] = NAN; /* not given: the model's value stays */
    mr_status st = per_joint(c, fn, "joint_friction", m, a);
    for (int k = 0; !st && k < m->nv; ++k)
      if (!isnan(a[k])) f[k] = a[k];
    free(a);
    if (st) return st;
  }
  for (int k = 0; k < m->nv; ++k)
    f[k] *= scale;
  return MR_OK;
}

/* kp, kd per dof (0 on multi-dof joints such as the free-flyer), targets per coordinate */
static mr_status robot_pd(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m, const double *q,
                          mr_scene_robot *r) {
  mr_ynode *pd = mr_yaml_get(&c->y, n, "pd");
  r->kp = calloc((size_t)(m->nv ? m->nv : 1), sizeof *r->kp);
  r->kd = calloc((size_t)(m->nv ? m->nv : 1), sizeof *r->kd);
  r->q_target = calloc((size_t)(m->nq ? m->nq : 1), sizeof *r->q_target);
  r->torque = calloc((size_t)(m->nv ? m->nv : 1), sizeof *r->torque);
  if (!r->kp || !r->kd || !r->q_target || !r->torque)
    return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  memcpy(r->q_target, q, (size_t)m->nq * sizeof *q);
  if (robot_torques(c, n, m, r)) return scene_status(c);
  if (!pd) return MR_OK;
  r->pd = 1;
  mr_ynode *kp = mr_yaml_get(&c->y, pd, "kp"), *kd = mr_yaml_get(&c->y, pd, "kd");
  if (mr_yaml_check_map(&c->y, pd, pd_keys, "'pd'") || (kp && per_joint(c, kp, "kp", m, r->kp)) ||
      (kd && per_joint(c, kd, "kd", m, r->kd)))
    return scene_status(c);
  mr_ynode *tn = mr_yaml_get(&c->y, pd, "targets");
  if (tn && joint_values(c, tn, m, r->q_target, "targets")) return scene_status(c);
  mr_ynode *sn = mr_yaml_get(&c->y, pd, "sine");
  return sn ? robot_sines(c, sn, m, r) : MR_OK;
}

/* the name node n among names[], or an error naming the known ones */
static int name_choice(mr_scene_ctx *c, const mr_ynode *n, const char *key,
                       const char *const *names, const char *known) {
  for (int k = 0; names[k]; ++k)
    if (!strcmp(mr_yaml_text(n), names[k])) return k;
  const char *near = mr_yaml_nearest(mr_yaml_text(n), names);
  mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'controller.%s': unknown value '%s'%s%s%s (known: %s)",
                key, mr_yaml_text(n), near ? ": did you mean '" : "", near ? near : "",
                near ? "'?" : "", known);
  return -1;
}

/* controller.feet: four foot frames of the robot */
static mr_status controller_feet(mr_scene_ctx *c, const mr_ynode *fn, const mr_model *m,
                                 mr_mpc_settings *cfg) {
  if (mr_yaml_need_seq(&c->y, fn, "controller.feet")) return scene_status(c);
  if (mr_yaml_seq_size(fn) != MR_MPC_FEET)
    return mr_yaml_error(&c->y, fn, MR_ERR_INVALID,
                         "'controller.feet': give %d foot frames (front left, front right, hind "
                         "left, hind right), got %d",
                         MR_MPC_FEET, mr_yaml_seq_size(fn));
  for (int i = 0; i < MR_MPC_FEET; ++i) {
    const mr_ynode *e = mr_yaml_seq_at(&c->y, fn, i);
    if (mr_model_frame_index(m, mr_yaml_text(e)) < 0)
      return mr_yaml_error(&c->y, e, MR_ERR_INVALID,
                           "'controller.feet': no frame '%s' in the robot", mr_yaml_text(e));
    snprintf(cfg->feet[i], sizeof cfg->feet[i], "%s", mr_yaml_text(e));
  }
  return MR_OK;
}

/* controller: {type: mpc, velocity: [vx, vy, yaw rate], gait, period, ...} (mpc.h) */
static mr_status robot_controller(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m,
                                  mr_scene_robot *r) {
  mr_ynode *cn = mr_yaml_get(&c->y, n, "controller");
  if (!cn) return MR_OK;
  mr_ynode *tn = mr_yaml_get(&c->y, cn, "type"), *gn = mr_yaml_get(&c->y, cn, "gait");
  mr_ynode *fn = mr_yaml_get(&c->y, cn, "feet");
  if (mr_yaml_check_map(&c->y, cn, controller_keys, "'controller'")) return scene_status(c);
  if (!tn) return mr_yaml_error(&c->y, cn, MR_ERR_INVALID, "'controller': missing 'type' (mpc)");
  if (name_choice(c, tn, "type", controller_types, "mpc") < 0) return scene_status(c);
  if (mr_yaml_get(&c->y, n, "pd"))
    return mr_yaml_error(&c->y, cn, MR_ERR_INVALID,
                         "robot '%s': 'controller' and 'pd' exclude each other (the MPC sets the "
                         "leg gains: controller.kp, controller.kd)",
                         r->name);
  if (!r->floating)
    return mr_yaml_error(&c->y, cn, MR_ERR_INVALID,
                         "robot '%s': the mpc controller needs 'floating: true'", r->name);
  mr_mpc_settings cfg = mr_mpc_settings_default();
  int gait = 0;
  if (gn && (gait = name_choice(c, gn, "gait", gait_names, "trot, stand")) < 0)
    return scene_status(c);
  cfg.gait = gait == 1 ? MR_GAIT_STAND : MR_GAIT_TROT;
  const struct {
    const char *key;
    double *x;
  } numbers[] = {{"period", &cfg.period},
                 {"duty", &cfg.duty},
                 {"step_height", &cfg.step_height},
                 {"horizon", &cfg.horizon},
                 {"dt", &cfg.dt},
                 {"mu", &cfg.mu},
                 {"kp", &cfg.kp},
                 {"kd", &cfg.kd},
                 {"stance_kd", &cfg.stance_kd},
                 {"torque_limit", &cfg.torque_limit},
                 {"raibert_gain", &cfg.raibert_gain},
                 {"integral_gain", &cfg.integral_gain},
                 {"max_load", &cfg.max_load}};
  for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; ++k)
    if (mr_yaml_opt_double(&c->y, cn, numbers[k].key, numbers[k].x)) return scene_status(c);
  if (mr_yaml_opt_vec(&c->y, cn, "velocity", cfg.velocity, 3) ||
      mr_yaml_opt_int(&c->y, cn, "iterations", &cfg.max_iter) ||
      (fn && controller_feet(c, fn, m, &cfg)))
    return scene_status(c);
  mr_error e = {0};
  if (mr_mpc_settings_check(&cfg, &e))
    return mr_yaml_error(&c->y, cn, MR_ERR_INVALID, "'controller': %s", e.msg);
  for (int i = 0; !fn && i < MR_MPC_FEET; ++i)
    if (mr_model_frame_index(m, cfg.feet[i]) < 0)
      return mr_yaml_error(&c->y, cn, MR_ERR_INVALID,
                           "'controller': the robot has no foot frame '%s' (name them in "
                           "controller.feet)",
                           cfg.feet[i]);
  mr_mpc_settings *keep = malloc(sizeof *keep);
  if (!keep) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  *keep = cfg;
  snprintf(r->controller, sizeof r->controller, "mpc");
  r->controller_settings = keep, r->controller_size = sizeof *keep;
  r->controller_attach = mr_mpc_attach_declared;
  return MR_OK;
}

/* friction / material for every geometry of the robot */
static mr_status robot_contact(mr_scene_ctx *c, const mr_ynode *n, mr_model *dst, int first_geom) {
  mr_ynode *mn = mr_yaml_get(&c->y, n, "material"), *fn = mr_yaml_get(&c->y, n, "friction");
  const mr_scene_material *mat = NULL;
  double mu = -1;
  if (mn && !(mat = scene_material(c->s, mr_yaml_text(mn))))
    return mr_yaml_error(&c->y, mn, MR_ERR_INVALID, "'material': no material named '%s'",
                         mr_yaml_text(mn));
  if (fn && mr_yaml_double(&c->y, fn, "friction", &mu)) return scene_status(c);
  if (fn && !(mu >= 0))
    return mr_yaml_error(&c->y, fn, MR_ERR_INVALID, "'friction': must be >= 0, got %g", mu);
  for (int k = first_geom; k < dst->ngeoms; ++k) {
    mr_geom *g = &dst->geoms[k];
    if (mat)
      g->friction = mat->friction, g->restitution = mat->restitution,
      g->compliance = mat->compliance, g->tangential_compliance = mat->tangential_compliance,
      g->stiffness = mat->stiffness, g->dissipation = mat->dissipation;
    if (fn) g->friction = mu;
  }
  return MR_OK;
}

/* a floating base's initial twist, world frame → local frame (v = Rᵀ v_w, ω = Rᵀ ω_w) */
static mr_status base_twist(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m, mr_se3 X,
                            const mr_scene_robot *r) {
  mr_ynode *ln = mr_yaml_get(&c->y, n, "linear_velocity");
  mr_ynode *an = mr_yaml_get(&c->y, n, "angular_velocity");
  double lv[3] = {0, 0, 0}, av[3] = {0, 0, 0};
  if (!ln && !an) return MR_OK;
  int free_base = r->floating && m->nbodies > 1 && m->bodies[1].joint.type == MR_JOINT_FREE;
  if (!free_base)
    return mr_yaml_error(&c->y, ln ? ln : an, MR_ERR_INVALID,
                         "robot '%s': an initial base velocity needs 'floating: true'", r->name);
  if ((ln && mr_yaml_vec(&c->y, ln, "linear_velocity", lv, 3)) ||
      (an && mr_yaml_vec(&c->y, an, "angular_velocity", av, 3)))
    return scene_status(c);
  mr_vec3 vl = mr_m3_tmulv(&X.R, mr_v3(lv[0], lv[1], lv[2]));
  mr_vec3 wl = mr_m3_tmulv(&X.R, mr_v3(av[0], av[1], av[2]));
  double *v = c->s->v0 + r->idx_v + m->bodies[1].joint.idx_v;
  for (int k = 0; k < 3; ++k)
    v[k] = vl.v[k], v[3 + k] = wl.v[k];
  return MR_OK;
}

/* the robot's q into the scene state: posture, then the floating base's pose */
static mr_status robot_state(mr_scene_ctx *c, const mr_ynode *n, const mr_model *m, double *q,
                             mr_se3 X, mr_quat qb, mr_scene_robot *r) {
  if (robot_posture(c, n, m, q)) return scene_status(c);
  apply_mimics(m, q);
  int given = mr_yaml_get(&c->y, n, "position") || mr_yaml_get(&c->y, n, "orientation");
  int srdf_base = mr_yaml_get(&c->y, n, "posture") != NULL;
  if (r->floating && m->nbodies > 1 && m->bodies[1].joint.type == MR_JOINT_FREE &&
      (given || !srdf_base)) {
    double *qf = q + m->bodies[1].joint.idx_q;
    double base[7] = {X.p.v[0], X.p.v[1], X.p.v[2], qb.x, qb.y, qb.z, qb.w};
    memcpy(qf, base, sizeof base);
  }
  if (robot_pd(c, n, m, q, r) || robot_controller(c, n, m, r) || robot_postures(c, n, m, q, r))
    return scene_status(c);
  if (scene_grow_state(c, r->idx_q + r->nq, r->idx_v + r->nv)) return scene_status(c);
  memcpy(c->s->q0 + r->idx_q, q, (size_t)r->nq * sizeof *q);
  for (int k = 0; k < r->nv; ++k)
    c->s->v0[r->idx_v + k] = 0.0;
  return base_twist(c, n, m, X, r);
}

enum { ROBOT_NAME_MAX = MR_NAME_MAX / 2 - 1 };

static mr_status robot_name(mr_scene_ctx *c, const mr_ynode *n, int index) {
  mr_scene *s = c->s;
  mr_ynode *nn = mr_yaml_get(&c->y, n, "name");
  const char *name = NULL;
  if (!nn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "robot %d: missing 'name'", index);
  if (mr_yaml_string(&c->y, nn, "name", &name)) return scene_status(c);
  if (strchr(name, '/'))
    return mr_yaml_error(&c->y, nn, MR_ERR_INVALID, "'name': '%s' may not contain '/'", name);
  /* the robot's bodies, joints and geometries are named "robot/part": half the name length */
  if (strlen(name) > ROBOT_NAME_MAX)
    return mr_yaml_error(&c->y, nn, MR_ERR_INVALID,
                         "'name': '%.20s...' has %zu characters, at most %d allowed", name,
                         strlen(name), ROBOT_NAME_MAX);
  for (int i = 0; i < s->nbodies; ++i)
    if (strcmp(s->bodies[i].name, name) == 0)
      return mr_yaml_error(&c->y, nn, MR_ERR_INVALID, "'name': '%s' is already a body's name",
                           name);
  for (int i = 0; i < index; ++i)
    if (strcmp(s->robots[i].name, name) == 0)
      return mr_yaml_error(&c->y, nn, MR_ERR_INVALID, "'name': duplicate robot name '%s'", name);
  snprintf(s->robots[index].name, MR_NAME_MAX, "%s", name);
  return MR_OK;
}

static mr_status parse_robot(mr_scene_ctx *c, const mr_ynode *n, int index) {
  mr_scene *s = c->s;
  mr_scene_robot *r = &s->robots[index];
  mr_model *m = NULL;
  mr_se3 X;
  mr_quat qb;
  if (mr_yaml_get(&c->y, n, "mjcf")) return scene_mjcf_robot(c, n, index);
  if (mr_yaml_check_map(&c->y, n, robot_keys, "a robot") || robot_name(c, n, index) ||
      scene_pose(c, n, &X, &qb) || load_urdf(c, n, r, &m))
    return scene_status(c);
  /* a fixed base is placed by the append; a floating base carries its pose in q */
  int first_geom = s->model->ngeoms;
  r->idx_q = s->model->nq, r->idx_v = s->model->nv, r->nq = m->nq, r->nv = m->nv;
  r->first_body = s->model->nbodies;
  mr_se3 place = r->floating ? mr_se3_identity() : X;
  mr_status st = MR_OK;
  if (mr_model_append(s->model, m, 0, place, r->name, c->err) < 0)
    st = mr_yaml_error(&c->y, n, scene_status(c), "robot '%s': %s", r->name,
                       c->err ? c->err->msg : "");
  r->nbodies = s->model->nbodies - r->first_body;
  double *q = st ? NULL : malloc((size_t)(m->nq ? m->nq : 1) * sizeof *q);
  if (!st && !q) st = mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  if (!st) st = robot_state(c, n, m, q, X, qb, r);
  if (!st) st = robot_contact(c, n, s->model, first_geom);
  if (!st) st = robot_armature(c, n, m, r, s->model);
  if (!st) st = robot_joint_friction(c, n, m, r, s->model);
  free(q);
  mr_model_free(m);
  return st;
}

mr_status scene_robots(mr_scene_ctx *c, const mr_ynode *seq) {
  mr_scene *s = c->s;
  if (mr_yaml_need_seq(&c->y, seq, "robots")) return scene_status(c);
  int n = mr_yaml_seq_size(seq);
  s->robots = calloc((size_t)(n ? n : 1), sizeof *s->robots);
  if (!s->robots) return mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  for (int i = 0; i < n; ++i) {
    mr_ynode *rn = mr_yaml_seq_at(&c->y, seq, i);
    s->nrobots = i + 1;
    if (mr_yaml_need_map(&c->y, rn, "robots[]") || parse_robot(c, rn, i)) return scene_status(c);
  }
  return MR_OK;
}
