/* The compiled MJCF bodies as an mr_model (docs/mjcf.md, "Bodies and joints"):
 *
 * - a body without joints is welded to its parent: its inertia and a frame of its name join
 *   the parent's model body (mr_model_add_fixed), its geoms and sites move there;
 * - a body with joints j1 … jn becomes a chain of n model bodies, the first n − 1 massless and
 *   named "BODY#JOINT", the last carrying the body's name, inertia, geoms and sites. MuJoCo moves
 *   the body by T(p1) J1(q1 − ref1) T(−p1) … T(pn) Jn(qn − refn) T(−pn) after its frame at qpos0
 *   (pk the joint's anchor, Jk a rotation about its axis or a translation along it, each joint's
 *   axis and anchor in the frame the previous joints moved); joint k's model frame is therefore
 *   placed at T(pk − pk−1) Jk(−refk) in the previous one, and the body's content at T(−pn) in
 *   the last, so that moreau's q equals MuJoCo's qpos coordinate for coordinate (hinge and slide
 *   limits, springref and keyframes keep MuJoCo's values).
 * - free joint: a free-flyer placed at the world origin, its q0 the body's pose; ball joint: a
 *   spherical joint at its anchor.
 * - geoms: plane → halfspace, sphere, capsule, cylinder, ellipsoid, box → the same shapes,
 *   hfield → heightfield; sites → frames (named "NAME#site" when a body has the name).
 * Then the contact filters and friction (mj_build_contacts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "io/mjcf_internal.h"

/* ---- small helpers ---- */

static mr_se3 se3_of(const double pos[3], const double quat[4]) {
  mr_quat q = {quat[1], quat[2], quat[3], quat[0]};
  return mr_se3_make(mr_quat_to_m3(mr_quat_normalize(q)), mr_v3(pos[0], pos[1], pos[2]));
}

static mr_se3 translation(mr_vec3 p) {
  return mr_se3_make(mr_m3_identity(), p);
}

/* the name of an object: its own, or KIND#ID */
static void object_name(char out[MR_NAME_MAX], const char *name, const char *kind, int id) {
  if (name[0])
    snprintf(out, MR_NAME_MAX, "%s", name);
  else
    snprintf(out, MR_NAME_MAX, "%s#%d", kind, id);
}

/* the inertia of a compiled body about its inertial frame, in the frame X_content of its
 * content (the MuJoCo body frame) */
static mr_inertia body_inertia(const mj_body *b, mr_se3 content) {
  mr_inertia Y = mr_inertia_zero();
  Y.m = b->mass;
  mr_se3 Xi = se3_of(b->locipos, b->lociquat);
  Y.c = Xi.p;
  mr_mat3 D = mr_m3_diag(b->inertia[0], b->inertia[1], b->inertia[2]);
  Y.I = mr_m3_rotate(&Xi.R, &D);
  return mr_se3_act_inertia(&content, &Y);
}

static mr_status builder_error(mj_ctx *c, const xmlNode *n, const mr_model *m) {
  (void)m;
  char msg[MR_ERROR_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", c->err ? c->err->msg : "model building failed");
  return mj_fail(c, n, c->err ? c->err->status : MR_ERR_INVALID, "%s", msg);
}

/* ---- names ---- */

/* MuJoCo refuses two objects of one kind with the same name */
static mr_status unique_names(mj_ctx *c) {
  for (int i = 1; i < c->nbodies; ++i)
    for (int k = i + 1; c->bodies[i].name[0] && k < c->nbodies; ++k)
      if (!strcmp(c->bodies[i].name, c->bodies[k].name))
        return mj_fail(c, c->bodies[k].node, MR_ERR_INVALID, "repeated body name '%s'",
                       c->bodies[k].name);
  /* joints, geoms, sites: gather the named ones and compare (n is small) */
  for (int kind = 0; kind < 3; ++kind)
    for (int a = 0; a < c->nbodies; ++a) {
      const mj_body *A = &c->bodies[a];
      int na = kind == 0 ? A->njoints : kind == 1 ? A->ngeoms : A->nsites;
      for (int i = 0; i < na; ++i) {
        const char *ni = kind == 0   ? A->joints[i].name
                         : kind == 1 ? A->geoms[i].name
                                     : A->sites[i].name;
        if (!ni[0]) continue;
        for (int b = a; b < c->nbodies; ++b) {
          const mj_body *B = &c->bodies[b];
          int nb = kind == 0 ? B->njoints : kind == 1 ? B->ngeoms : B->nsites;
          for (int k = b == a ? i + 1 : 0; k < nb; ++k) {
            const char *nk = kind == 0   ? B->joints[k].name
                             : kind == 1 ? B->geoms[k].name
                                         : B->sites[k].name;
            const xmlNode *node = kind == 0   ? B->joints[k].node
                                  : kind == 1 ? B->geoms[k].node
                                              : B->sites[k].node;
            if (!strcmp(ni, nk))
              return mj_fail(c, node, MR_ERR_INVALID, "repeated %s name '%s'",
                             kind == 0   ? "joint"
                             : kind == 1 ? "geom"
                                         : "site",
                             nk);
          }
        }
      }
    }
  return MR_OK;
}

/* ---- joints ---- */

static mr_joint_type joint_type(int t, int limited) {
  switch (t) {
  case MJ_FREE:
    return MR_JOINT_FREE;
  case MJ_BALL:
    return MR_JOINT_SPHERICAL;
  case MJ_SLIDE:
    return MR_JOINT_PRISMATIC;
  default:
    return limited ? MR_JOINT_REVOLUTE : MR_JOINT_CONTINUOUS;
  }
}

/* what moreau cannot do with a joint */
static mr_status check_joint(mj_ctx *c, const mj_joint_el *e) {
  const mj_joint *j = &e->j;
  if (c->opt && c->opt->tree_only) return MR_OK;
  int passive = !(c->disable & MJ_DSBL_PASSIVE);
  if (j->type == MJ_BALL && j->limited && !(c->disable & (MJ_DSBL_LIMIT | MJ_DSBL_CONSTRAINT)))
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "a limited ball joint (a cone limit on its rotation) is not modelled");
  if ((j->type == MJ_BALL || j->type == MJ_FREE) && j->stiffness != 0 && passive)
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "stiffness=\"%g\" on a %s joint (a rotational spring on its quaternion) is "
                   "not modelled",
                   j->stiffness, j->type == MJ_BALL ? "ball" : "free");
  if (j->margin != 0 && j->limited && !(c->disable & (MJ_DSBL_LIMIT | MJ_DSBL_CONSTRAINT)))
    return mj_fail(c, e->node, MR_ERR_UNSUPPORTED,
                   "margin=\"%g\" (a limit active before the joint reaches its range) is not "
                   "modelled",
                   j->margin);
  if (!(j->frictionloss >= 0.0))
    return mj_fail(c, e->node, MR_ERR_INVALID, "frictionloss=\"%g\": must be >= 0",
                   j->frictionloss);
  return MR_OK;
}

/* the joint's dofs: damping, armature, spring, limits; its q0 */
static mr_status joint_dofs(mj_ctx *c, mj_result *r, const mj_joint_el *e, int body,
                            const mj_body *b) {
  mr_model *m = r->model;
  const mj_joint *j = &e->j;
  const mr_joint *jt = &m->bodies[body].joint;
  int passive = !(c->disable & MJ_DSBL_PASSIVE);
  /* frictionloss: dry friction on each of the joint's dofs, a box row of the contact problem
   * (docs/physics.md, "Joint friction"); MuJoCo's is a soft constraint, this one is hard */
  int friction = !(c->disable & (MJ_DSBL_FRICTIONLOSS | MJ_DSBL_CONSTRAINT));
  for (int k = 0; k < jt->nv; ++k) {
    m->damping[jt->idx_v + k] = passive ? j->damping : 0.0;
    m->armature[jt->idx_v + k] = j->armature;
    m->joint_friction[jt->idx_v + k] = friction ? j->frictionloss : 0.0;
    r->frictionloss[jt->idx_v + k] = j->frictionloss;
  }
  if (jt->nv == 1) {
    r->spring_k[jt->idx_v] = passive ? j->stiffness : 0.0;
    r->spring_ref[jt->idx_v] = j->springref;
    r->q0[jt->idx_q] = j->ref;
    if (j->limited &&
        mr_model_set_limits(m, body, j->range[0], j->range[1], INFINITY, INFINITY, c->err))
      return builder_error(c, e->node, m);
  } else if (j->type == MJ_BALL) {
    double *q = r->q0 + jt->idx_q;
    q[0] = q[1] = q[2] = 0, q[3] = 1;
  } else {
    double *q = r->q0 + jt->idx_q; /* MuJoCo's qpos0 of a free joint: the body's pose */
    q[0] = b->locpos[0], q[1] = b->locpos[1], q[2] = b->locpos[2];
    q[3] = b->locquat[1], q[4] = b->locquat[2], q[5] = b->locquat[3], q[6] = b->locquat[0];
  }
  r->dof_of_joint[e->id] = jt->idx_v;
  r->coord_of_joint[e->id] = jt->idx_q;
  r->type_of_joint[e->id] = j->type;
  return MR_OK;
}

/* the placement of joint k's frame in the previous one: T(p_k − p_{k−1}) J_k(−ref_k) */
static mr_se3 joint_step(const mj_joint_el *prev, const mj_joint_el *e) {
  mr_vec3 p = mr_v3(e->locpos[0], e->locpos[1], e->locpos[2]);
  if (prev) p = mr_v3_sub(p, mr_v3(prev->locpos[0], prev->locpos[1], prev->locpos[2]));
  mr_se3 X = translation(p);
  mr_vec3 u = mr_v3(e->locaxis[0], e->locaxis[1], e->locaxis[2]);
  if (e->j.type == MJ_HINGE) X.R = mr_m3_axis_angle(u, -e->j.ref);
  if (e->j.type == MJ_SLIDE) X.p = mr_v3_madd(X.p, -e->j.ref, u);
  return X;
}

/* a body with joints: the chain of model bodies; *content is where the MuJoCo body frame sits in
 * the last one */
static mr_status body_chain(mj_ctx *c, mj_result *r, int id, int parent, mr_se3 X, int *out,
                            mr_se3 *content) {
  const mj_body *b = &c->bodies[id];
  mr_model *m = r->model;
  char bname[MR_NAME_MAX], jname[MR_NAME_MAX], tmp[2 * MR_NAME_MAX];
  object_name(bname, b->name, "body", id);
  int prev_body = parent;
  for (int k = 0; k < b->njoints; ++k) {
    const mj_joint_el *e = &b->joints[k];
    if (check_joint(c, e)) return mj_status(c);
    object_name(jname, e->name, "joint", e->id);
    mr_se3 step = joint_step(k ? &b->joints[k - 1] : NULL, e);
    mr_se3 P = k ? step : mr_se3_mul(&X, &step);
    if (e->j.type == MJ_FREE) P = mr_se3_identity();
    int last = k == b->njoints - 1;
    snprintf(tmp, sizeof tmp, "%s#%s", bname, jname);
    mr_se3 cont = translation(mr_v3(-e->locpos[0], -e->locpos[1], -e->locpos[2]));
    mr_inertia Y = last ? body_inertia(b, cont) : mr_inertia_zero();
    mr_vec3 axis = mr_v3(e->locaxis[0], e->locaxis[1], e->locaxis[2]);
    int nb = mr_model_add_body(m, prev_body, jname, joint_type(e->j.type, e->j.limited), P, axis,
                               last ? bname : tmp, Y, c->err);
    if (nb < 0) return builder_error(c, e->node, m);
    if (joint_dofs(c, r, e, nb, b)) return mj_status(c);
    prev_body = nb;
    if (last) *content = cont;
  }
  *out = prev_body;
  return MR_OK;
}

/* ---- geoms and sites ---- */

static mr_geom_type geom_type(int t) {
  switch (t) {
  case MJ_PLANE:
    return MR_GEOM_HALFSPACE;
  case MJ_SPHERE:
    return MR_GEOM_SPHERE;
  case MJ_CAPSULE:
    return MR_GEOM_CAPSULE;
  case MJ_CYLINDER:
    return MR_GEOM_CYLINDER;
  case MJ_ELLIPSOID:
    return MR_GEOM_ELLIPSOID;
  case MJ_BOX:
    return MR_GEOM_BOX;
  case MJ_HFIELD:
    return MR_GEOM_HEIGHTFIELD;
  default:
    return MR_GEOM_MESH;
  }
}

/* a heightfield asset's grid: MuJoCo's custom binary file (int32 nrow, ncol, float32 data) or,
 * without a file, nrow x ncol zeros; elevations normalised to [0, 1] and scaled by size[2] */
static mr_status hfield_grid(mj_ctx *c, const mj_geom_el *e, mr_hfield **out) {
  const mj_hfield_el *h = NULL;
  for (int i = 0; i < c->nhfields && !h; ++i)
    if (!strcmp(c->hfields[i].name, e->g.hfield)) h = &c->hfields[i];
  if (!h) return mj_fail(c, e->node, MR_ERR_INVALID, "unknown hfield '%s'", e->g.hfield);
  int nrow = h->nrow, ncol = h->ncol;
  float *data = NULL;
  char *text = NULL;
  if (h->file[0]) {
    char path[2 * MR_PATH_MAX];
    size_t len = 0;
    snprintf(path, sizeof path, "%s%s", h->file[0] == '/' ? "" : c->dir, h->file);
    mr_error fe = {MR_OK, ""};
    size_t ext = strlen(h->file);
    if (ext < 4 || strcmp(h->file + ext - 4, ".bin"))
      return mj_fail(c, h->node, MR_ERR_UNSUPPORTED,
                     "hfield file '%s': only MuJoCo's binary format (.bin) is read", h->file);
    if (mr_read_file(path, &text, &len, &fe)) return mj_fail(c, h->node, fe.status, "%s", fe.msg);
    int32_t dims[2] = {0, 0};
    if (len >= 8) memcpy(dims, text, 8);
    nrow = dims[0], ncol = dims[1];
    if (nrow < 2 || ncol < 2 || len != 8 + 4 * (size_t)nrow * (size_t)ncol) {
      free(text);
      return mj_fail(c, h->node, MR_ERR_PARSE,
                     "hfield file '%s': %zu bytes do not hold a %d x %d "
                     "grid",
                     h->file, len, nrow, ncol);
    }
    data = (float *)(void *)(text + 8);
  } else if (nrow < 2 || ncol < 2) {
    return mj_fail(c, h->node, MR_ERR_INVALID, "an hfield without a file needs nrow and ncol >= 2");
  }
  mr_hfield *g = calloc(1, sizeof *g);
  double *z = malloc((size_t)nrow * (size_t)ncol * sizeof *z);
  if (!g || !z)
    return free(g), free(z), free(text), mr_error_set(c->err, MR_ERR_NOMEM, "out of memory");
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < nrow * ncol; ++i)
    z[i] = data ? data[i] : 0.0, lo = fmin(lo, z[i]), hi = fmax(hi, z[i]);
  for (int i = 0; i < nrow * ncol; ++i)
    z[i] = (hi > lo ? (z[i] - lo) / (hi - lo) : 0.0) * h->size[2];
  free(text);
  *g = (mr_hfield){ncol,
                   nrow,
                   -h->size[0],
                   -h->size[1],
                   2 * h->size[0] / (ncol - 1),
                   2 * h->size[1] / (nrow - 1),
                   h->size[3],
                   z,
                   0,
                   0};
  g->hmin = INFINITY, g->hmax = -INFINITY;
  for (int i = 0; i < nrow * ncol; ++i)
    g->hmin = fmin(g->hmin, z[i]), g->hmax = fmax(g->hmax, z[i]);
  *out = g;
  return MR_OK;
}

static mr_status add_geom(mj_ctx *c, mj_result *r, const mj_geom_el *e, int body, mr_se3 X) {
  mr_geom g = mr_geom_default(geom_type(e->g.type), body);
  object_name(g.name, e->name, "geom", e->id);
  mr_se3 L = se3_of(e->locpos, e->locquat);
  g.placement = mr_se3_mul(&X, &L);
  memcpy(g.size, e->g.size, sizeof g.size);
  g.friction = e->g.friction[0];
  if (e->g.type == MJ_HFIELD && hfield_grid(c, e, &g.hfield)) return mj_status(c);
  int idx = mr_model_add_geom(r->model, &g, c->err);
  if (idx < 0) {
    if (g.hfield) free(g.hfield->h), free(g.hfield);
    return builder_error(c, e->node, r->model);
  }
  r->geom_of_mj[e->id] = idx;
  return MR_OK;
}

static mr_status add_site(mj_ctx *c, mj_result *r, const mj_site_el *e, int body, mr_se3 X) {
  char name[MR_NAME_MAX], base[MR_NAME_MAX];
  object_name(base, e->name, "site", e->id);
  int taken = mr_model_body_index(r->model, base) >= 0 || mr_model_frame_index(r->model, base) >= 0;
  snprintf(name, sizeof name, "%.*s%s", MR_NAME_MAX - 6, base, taken ? "#site" : "");
  mr_se3 L = se3_of(e->locpos, e->locquat);
  if (mr_model_add_frame(r->model, body, mr_se3_mul(&X, &L), name, c->err) < 0)
    return builder_error(c, e->node, r->model);
  return MR_OK;
}

/* ---- the tree ---- */

static mr_status build_body(mj_ctx *c, mj_result *r, int id, mr_se3 *T) {
  const mj_body *b = &c->bodies[id];
  int parent = id ? r->body_of_mj[b->parent] : 0, body = parent;
  mr_se3 content = mr_se3_identity();
  if (id > 0) {
    mr_se3 L = se3_of(b->locpos, b->locquat);
    mr_se3 X = mr_se3_mul(&T[b->parent], &L);
    if (b->mocap) mj_ignore(c, b->node, "mocap (bodies moved by the user: fixed in moreau)");
    if (b->njoints) {
      if (body_chain(c, r, id, parent, X, &body, &content)) return mj_status(c);
    } else {
      char name[MR_NAME_MAX];
      object_name(name, b->name, "body", id);
      /* welded to the world, a body is fixed geometry: its mass has no effect */
      int f = parent ? mr_model_add_fixed(r->model, parent, X, name,
                                          body_inertia(b, mr_se3_identity()), c->err)
                     : mr_model_add_frame(r->model, 0, X, name, c->err);
      if (f < 0) return builder_error(c, b->node, r->model);
      content = X;
    }
  }
  T[id] = content;
  r->body_of_mj[id] = body;
  r->content_of_mj[id] = content;
  for (int i = 0; i < b->ngeoms; ++i)
    if (add_geom(c, r, &b->geoms[i], body, content)) return mj_status(c);
  for (int i = 0; i < b->nsites; ++i)
    if (add_site(c, r, &b->sites[i], body, content)) return mj_status(c);
  return MR_OK;
}

static mr_status alloc_result(mj_ctx *c, mj_result *r) {
  int nv = 0, nq = 0;
  for (int i = 0; i < c->nbodies; ++i)
    for (int k = 0; k < c->bodies[i].njoints; ++k) {
      int t = c->bodies[i].joints[k].j.type;
      nv += t == MJ_FREE ? 6 : t == MJ_BALL ? 3 : 1;
      nq += t == MJ_FREE ? 7 : t == MJ_BALL ? 4 : 1;
    }
  size_t nb = (size_t)c->nbodies, nj = (size_t)(c->njoints + 1), ng = (size_t)(c->ngeoms + 1);
  r->q0 = calloc((size_t)nq + 1, sizeof *r->q0);
  r->spring_k = calloc((size_t)nv + 1, sizeof *r->spring_k);
  r->spring_ref = calloc((size_t)nv + 1, sizeof *r->spring_ref);
  r->frictionloss = calloc((size_t)nv + 1, sizeof *r->frictionloss);
  r->body_of_mj = calloc(nb, sizeof *r->body_of_mj);
  r->content_of_mj = calloc(nb, sizeof *r->content_of_mj);
  r->dof_of_joint = calloc(nj, sizeof(int));
  r->coord_of_joint = calloc(nj, sizeof(int));
  r->type_of_joint = calloc(nj, sizeof(int));
  r->geom_of_mj = malloc(ng * sizeof(int));
  if (!r->q0 || !r->spring_k || !r->content_of_mj || !r->spring_ref || !r->frictionloss ||
      !r->body_of_mj || !r->dof_of_joint || !r->coord_of_joint || !r->type_of_joint ||
      !r->geom_of_mj)
    return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  for (size_t i = 0; i < ng; ++i)
    r->geom_of_mj[i] = -1;
  return MR_OK;
}

mr_status mj_build_model(mj_ctx *c, mj_result *r) {
  if (unique_names(c)) return mj_status(c);
  const char *stem = strrchr(c->file, '/');
  r->model = mr_model_create(c->model_name[0] ? c->model_name : stem ? stem + 1 : c->file);
  if (!r->model) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  if (alloc_result(c, r)) return mj_status(c);
  double g[3] = {c->gravity[0], c->gravity[1], c->gravity[2]};
  if (c->disable & MJ_DSBL_GRAVITY) g[0] = g[1] = g[2] = 0;
  r->model->gravity = mr_v3(g[0], g[1], g[2]);
  mr_se3 *T = malloc((size_t)c->nbodies * sizeof *T);
  if (!T) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  mr_status st = MR_OK;
  for (int i = 0; i < c->nbodies && !st; ++i)
    st = build_body(c, r, i, T);
  free(T);
  if (st) return st;
  r->floating = r->model->nbodies > 1 && r->model->bodies[1].joint.type == MR_JOINT_FREE;
  r->limits_off = (c->disable & (MJ_DSBL_LIMIT | MJ_DSBL_CONSTRAINT)) != 0;
  return MR_OK;
}

void mj_result_free(mj_result *r) {
  mr_model_free(r->model);
  free(r->q0), free(r->body_of_mj), free(r->content_of_mj), free(r->dof_of_joint),
      free(r->coord_of_joint);
  free(r->type_of_joint), free(r->geom_of_mj), free(r->spring_k), free(r->spring_ref);
  free(r->frictionloss), free(r->actuators), free(r->pairs);
  for (int k = 0; k < r->nkeys; ++k)
    free(r->keys[k].q), free(r->keys[k].v), free(r->keys[k].ctrl);
  free(r->keys);
  free(r->constraints);
  free(r->limits);
  memset(r, 0, sizeof *r);
}
