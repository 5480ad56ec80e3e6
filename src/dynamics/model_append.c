/* Appending one model to another (scenes combine free bodies and several robots into a single
 * kinematic tree). Bodies keep their order, so the topological numbering (parent < child) holds;
 * the roots of the appended tree hang from a chosen body at a chosen placement. Joint limits,
 * damping, armature, frames, geometries (meshes and heightfields deep-copied) and mimic
 * couplings follow. mr_model_copy duplicates a whole model, array by array (indices unchanged). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "moreau/model.h"

static void prefixed(char dst[MR_NAME_MAX], const char *prefix, const char *name) {
  if (prefix && prefix[0]) {
    /* truncated to fit: the prefix to half the room, the name to what is left */
    size_t lp = strlen(prefix), ln = strlen(name);
    if (lp > MR_NAME_MAX / 2 - 1) lp = MR_NAME_MAX / 2 - 1;
    if (lp + 1 + ln >= MR_NAME_MAX) ln = MR_NAME_MAX - 2 - lp;
    memcpy(dst, prefix, lp);
    dst[lp] = '/';
    memcpy(dst + lp + 1, name, ln);
    dst[lp + 1 + ln] = '\0';
  } else {
    snprintf(dst, MR_NAME_MAX, "%s", name);
  }
}

/* a malloc'ed copy of n doubles (NULL when n == 0) */
static double *dup_doubles(const double *src, int n, int *fail) {
  if (n <= 0 || !src) return NULL;
  double *d = malloc((size_t)n * sizeof *d);
  if (!d)
    *fail = 1;
  else
    memcpy(d, src, (size_t)n * sizeof *d);
  return d;
}

static mr_mesh *copy_mesh(const mr_mesh *s, int *fail) {
  mr_mesh *m = calloc(1, sizeof *m);
  if (!m) return *fail = 1, NULL;
  *m = *s;
  m->vert = dup_doubles(s->vert, 3 * s->nvert, fail);
  m->hull = dup_doubles(s->hull, 3 * s->nhull, fail);
  m->face = NULL;
  if (s->nface > 0 && s->face) {
    m->face = malloc((size_t)s->nface * 3 * sizeof(int));
    if (!m->face)
      *fail = 1;
    else
      memcpy(m->face, s->face, (size_t)s->nface * 3 * sizeof(int));
  }
  return m;
}

static mr_hfield *copy_hfield(const mr_hfield *s, int *fail) {
  mr_hfield *h = calloc(1, sizeof *h);
  if (!h) return *fail = 1, NULL;
  *h = *s;
  h->h = dup_doubles(s->h, s->nx * s->ny, fail);
  return h;
}

/* copy the bodies of src (1..) into dst; body_map[i] is the dst index of src body i */
static int append_bodies(mr_model *dst, const mr_model *src, int parent_body, mr_se3 placement,
                         const char *prefix, int *body_map, mr_error *err) {
  body_map[0] = parent_body;
  for (int i = 1; i < src->nbodies; ++i) {
    const mr_body *b = &src->bodies[i];
    mr_se3 X = b->placement;
    if (b->parent == 0) X = mr_se3_mul(&placement, &b->placement);
    char bname[MR_NAME_MAX], jname[MR_NAME_MAX];
    prefixed(bname, prefix, b->name);
    prefixed(jname, prefix, b->joint.name);
    int id = mr_model_add_body(dst, body_map[b->parent], jname, b->joint.type, X, b->joint.axis,
                               bname, b->inertia, err);
    if (id < 0) return -1;
    body_map[i] = id;
    /* limits and joint properties, coordinate by coordinate */
    const mr_joint *js = &b->joint, *jd = &dst->bodies[id].joint;
    for (int k = 0; k < js->nq; ++k) {
      dst->lower[jd->idx_q + k] = src->lower[js->idx_q + k];
      dst->upper[jd->idx_q + k] = src->upper[js->idx_q + k];
    }
    for (int k = 0; k < js->nv; ++k) {
      dst->velocity_limit[jd->idx_v + k] = src->velocity_limit[js->idx_v + k];
      dst->effort_limit[jd->idx_v + k] = src->effort_limit[js->idx_v + k];
      dst->damping[jd->idx_v + k] = src->damping[js->idx_v + k];
      dst->armature[jd->idx_v + k] = src->armature[js->idx_v + k];
      dst->joint_friction[jd->idx_v + k] = src->joint_friction[js->idx_v + k];
    }
  }
  return 0;
}

/* frames other than the one mr_model_add_body made for each body */
static int append_frames(mr_model *dst, const mr_model *src, const int *body_map, mr_se3 placement,
                         const char *prefix, mr_error *err) {
  for (int f = 0; f < src->nframes; ++f) {
    const mr_frame *fr = &src->frames[f];
    char name[MR_NAME_MAX];
    prefixed(name, prefix, fr->name);
    int body = body_map[fr->body];
    if (fr->body > 0 && strcmp(fr->name, src->bodies[fr->body].name) == 0 &&
        mr_model_frame_index(dst, name) >= 0)
      continue;
    mr_se3 X = fr->placement;
    if (fr->body == 0) X = mr_se3_mul(&placement, &fr->placement);
    if (mr_model_add_frame(dst, body, X, name, err) < 0) return -1;
  }
  return 0;
}

/* free what copy_mesh / copy_hfield made for a geometry that was not added */
static void drop_copies(mr_geom *g) {
  if (g->mesh) free(g->mesh->vert), free(g->mesh->face), free(g->mesh->hull);
  free(g->mesh);
  if (g->hfield) free(g->hfield->h);
  free(g->hfield);
}

static int append_geoms(mr_model *dst, const mr_model *src, const int *body_map, mr_se3 placement,
                        const char *prefix, mr_error *err) {
  for (int k = 0; k < src->ngeoms; ++k) {
    mr_geom g = src->geoms[k];
    int fail = 0;
    prefixed(g.name, prefix, src->geoms[k].name);
    if (g.body == 0) g.placement = mr_se3_mul(&placement, &g.placement);
    g.body = body_map[g.body];
    g.mesh = g.mesh ? copy_mesh(g.mesh, &fail) : NULL;
    g.hfield = g.hfield ? copy_hfield(g.hfield, &fail) : NULL;
    if (fail) mr_error_set(err, MR_ERR_NOMEM, "out of memory copying geometry '%s'", g.name);
    if (fail || mr_model_add_geom(dst, &g, err) < 0) {
      drop_copies(&g);
      return -1;
    }
  }
  return 0;
}

int mr_model_append(mr_model *dst, const mr_model *src, int parent_body, mr_se3 placement,
                    const char *prefix, mr_error *err) {
  if (!dst || !src || parent_body < 0 || parent_body >= dst->nbodies) {
    mr_error_set(err, MR_ERR_INVALID, "model append: no parent body %d", parent_body);
    return -1;
  }
  int *body_map = malloc((size_t)src->nbodies * sizeof *body_map);
  if (!body_map) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory appending model '%s'", src->name);
    return -1;
  }
  int first = dst->nbodies, first_geom = dst->ngeoms;
  int rc = append_bodies(dst, src, parent_body, placement, prefix, body_map, err);
  if (!rc) rc = append_frames(dst, src, body_map, placement, prefix, err);
  if (!rc) rc = append_geoms(dst, src, body_map, placement, prefix, err);
  for (int inc = 0; inc < 2; ++inc) { /* collision filter pairs, their geometries renumbered */
    int n = inc ? src->nfilter_include : src->nfilter_exclude;
    const int *p = inc ? src->filter_include : src->filter_exclude;
    for (int k = 0; !rc && k < n; ++k)
      if (mr_model_add_filter_pair(dst, first_geom + p[2 * k], first_geom + p[2 * k + 1], inc,
                                   err))
        rc = -1;
  }
  for (int k = 0; !rc && k < src->nmimics; ++k) {
    const mr_mimic *c = &src->mimics[k];
    if (mr_model_add_mimic(dst, body_map[c->follower], body_map[c->leader], c->multiplier,
                           c->offset, err) < 0)
      rc = -1;
  }
  free(body_map);
  return rc ? -1 : (src->nbodies > 1 ? first : dst->nbodies);
}

/* a malloc'ed copy of n elements of size elem (NULL when n == 0) */
static void *dup_array(const void *src, int n, size_t elem, int *fail) {
  if (n <= 0 || !src) return NULL;
  void *d = malloc((size_t)n * elem);
  if (!d) return *fail = 1, NULL;
  return memcpy(d, src, (size_t)n * elem);
}

/* the geometries' owned parts: mesh file name, mesh, heightfield */
static void copy_geom_parts(mr_geom *g, int *fail) {
  if (g->mesh_file && !(g->mesh_file = strdup(g->mesh_file))) *fail = 1;
  g->mesh = g->mesh ? copy_mesh(g->mesh, fail) : NULL;
  g->hfield = g->hfield ? copy_hfield(g->hfield, fail) : NULL;
}

mr_model *mr_model_copy(const mr_model *src, mr_error *err) {
  mr_model *m = calloc(1, sizeof *m);
  if (!m) return mr_error_set(err, MR_ERR_NOMEM, "out of memory copying a model"), NULL;
  *m = *src;
  int fail = 0, nq = src->nq, nv = src->nv;
  m->bodies = dup_array(src->bodies, src->nbodies, sizeof *m->bodies, &fail);
  m->frames = dup_array(src->frames, src->nframes, sizeof *m->frames, &fail);
  m->geoms = dup_array(src->geoms, src->ngeoms, sizeof *m->geoms, &fail);
  for (int k = 0; m->geoms && k < src->ngeoms; ++k)
    copy_geom_parts(&m->geoms[k], &fail);
  if (!m->geoms) m->ngeoms = 0;
  m->lower = dup_array(src->lower, nq, sizeof(double), &fail);
  m->upper = dup_array(src->upper, nq, sizeof(double), &fail);
  m->velocity_limit = dup_array(src->velocity_limit, nv, sizeof(double), &fail);
  m->effort_limit = dup_array(src->effort_limit, nv, sizeof(double), &fail);
  m->damping = dup_array(src->damping, nv, sizeof(double), &fail);
  m->armature = dup_array(src->armature, nv, sizeof(double), &fail);
  m->joint_friction = dup_array(src->joint_friction, nv, sizeof(double), &fail);
  m->dof_body = dup_array(src->dof_body, nv, sizeof(int), &fail);
  m->mimics = dup_array(src->mimics, src->nmimics, sizeof *m->mimics, &fail);
  m->filter_exclude = dup_array(src->filter_exclude, 2 * src->nfilter_exclude, sizeof(int), &fail);
  m->filter_include = dup_array(src->filter_include, 2 * src->nfilter_include, sizeof(int), &fail);
  m->cap_bodies = src->nbodies, m->cap_frames = src->nframes, m->cap_geoms = src->ngeoms;
  m->cap_q = nq, m->cap_v = nv, m->cap_mimics = src->nmimics;
  if (!fail) return m;
  mr_model_free(m);
  return mr_error_set(err, MR_ERR_NOMEM, "out of memory copying model '%s'", src->name), NULL;
}
