/* Building and querying a model (see model.h). Allocation happens here, at load time only. */
#include "moreau/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int nq, nv;
} joint_info[MR_JOINT_TYPE_COUNT] = {
    [MR_JOINT_NONE] = {"none", 0, 0},           [MR_JOINT_REVOLUTE] = {"revolute", 1, 1},
    [MR_JOINT_CONTINUOUS] = {"continuous", 1, 1}, [MR_JOINT_PRISMATIC] = {"prismatic", 1, 1},
    [MR_JOINT_SPHERICAL] = {"spherical", 4, 3}, [MR_JOINT_FREE] = {"free", 7, 6},
};

static const char *const geom_names[MR_GEOM_TYPE_COUNT] = {
    "halfspace", "sphere", "box", "capsule", "cylinder", "ellipsoid", "mesh", "heightfield"};

int mr_joint_nq(mr_joint_type t) { return (unsigned)t < MR_JOINT_TYPE_COUNT ? joint_info[t].nq : 0; }
int mr_joint_nv(mr_joint_type t) { return (unsigned)t < MR_JOINT_TYPE_COUNT ? joint_info[t].nv : 0; }
const char *mr_joint_type_name(mr_joint_type t) {
  return (unsigned)t < MR_JOINT_TYPE_COUNT ? joint_info[t].name : "unknown";
}
const char *mr_geom_type_name(mr_geom_type t) {
  return (unsigned)t < MR_GEOM_TYPE_COUNT ? geom_names[t] : "unknown";
}

static void copy_name(char dst[MR_NAME_MAX], const char *src) {
  snprintf(dst, MR_NAME_MAX, "%s", src ? src : "");
}

/* grow *arr (elements of size elem) so that it holds at least need elements */
static int reserve(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int ncap = *cap ? *cap : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p) return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

static int reserve_q(mr_model *m, int nq) {
  int cap = m->cap_q;
  if (reserve((void **)&m->lower, &cap, nq, sizeof(double))) return -1;
  cap = m->cap_q;
  if (reserve((void **)&m->upper, &cap, nq, sizeof(double))) return -1;
  m->cap_q = cap;
  return 0;
}

static int reserve_v(mr_model *m, int nv) {
  double **arrays[] = {&m->velocity_limit, &m->effort_limit, &m->damping, &m->armature,
                       &m->joint_friction};
  int cap = m->cap_v;
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; ++k) {
    cap = m->cap_v;
    if (reserve((void **)arrays[k], &cap, nv, sizeof(double))) return -1;
  }
  cap = m->cap_v;
  if (reserve((void **)&m->dof_body, &cap, nv, sizeof(int))) return -1;
  m->cap_v = cap;
  return 0;
}

mr_model *mr_model_create(const char *name) {
  mr_model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  copy_name(m->name, name);
  m->gravity = mr_v3(0, 0, -9.81);
  if (reserve((void **)&m->bodies, &m->cap_bodies, 1, sizeof(mr_body))) {
    free(m);
    return NULL;
  }
  mr_body *world = &m->bodies[0];
  memset(world, 0, sizeof *world);
  copy_name(world->name, "universe");
  world->parent = -1;
  world->placement = mr_se3_identity();
  world->joint.type = MR_JOINT_NONE;
  world->inertia = mr_inertia_zero();
  m->nbodies = 1;
  return m;
}

void mr_model_free(mr_model *m) {
  if (!m) return;
  for (int i = 0; i < m->ngeoms; ++i) {
    mr_geom *g = &m->geoms[i];
    free(g->mesh_file);
    if (g->mesh) {
      free(g->mesh->vert);
      free(g->mesh->face);
      free(g->mesh->hull);
      free(g->mesh);
    }
    if (g->hfield) {
      free(g->hfield->h);
      free(g->hfield);
    }
  }
  free(m->bodies);
  free(m->frames);
  free(m->geoms);
  free(m->lower);
  free(m->upper);
  free(m->velocity_limit);
  free(m->effort_limit);
  free(m->damping);
  free(m->armature);
  free(m->joint_friction);
  free(m->dof_body);
  free(m->mimics);
  free(m->filter_exclude);
  free(m->filter_include);
  free(m);
}

mr_status mr_model_add_filter_pair(mr_model *m, int g1, int g2, int include, mr_error *err) {
  if (g1 < 0 || g1 >= m->ngeoms || g2 < 0 || g2 >= m->ngeoms)
    return mr_error_set(err, MR_ERR_INVALID, "collision filter pair (%d, %d): the model has %d "
                        "geometries", g1, g2, m->ngeoms);
  int *n = include ? &m->nfilter_include : &m->nfilter_exclude;
  int **arr = include ? &m->filter_include : &m->filter_exclude;
  int *p = realloc(*arr, (size_t)(*n + 1) * 2 * sizeof *p);
  if (!p) return mr_error_set(err, MR_ERR_NOMEM, "out of memory adding a collision filter pair");
  p[2 * *n] = g1, p[2 * *n + 1] = g2;
  *arr = p, ++*n;
  return MR_OK;
}

static mr_status check_inertia(const mr_inertia *Y, const char *body, mr_error *err) {
  if (!(Y->m >= 0.0) || !isfinite(Y->m))
    return mr_error_set(err, MR_ERR_INVALID, "body '%s': mass %g is not a finite value >= 0",
                        body, Y->m);
  for (int i = 0; i < 3; ++i) {
    if (!isfinite(Y->c.v[i]))
      return mr_error_set(err, MR_ERR_INVALID, "body '%s': centre of mass is not finite", body);
    for (int j = 0; j < 3; ++j)
      if (!isfinite(Y->I.m[i][j]))
        return mr_error_set(err, MR_ERR_INVALID, "body '%s': inertia is not finite", body);
  }
  for (int i = 0; i < 3; ++i)
    if (Y->I.m[i][i] < 0.0)
      return mr_error_set(err, MR_ERR_INVALID, "body '%s': inertia diagonal entry %g < 0", body,
                          Y->I.m[i][i]);
  return MR_OK;
}

int mr_model_add_frame(mr_model *m, int body, mr_se3 placement, const char *name, mr_error *err) {
  if (body < 0 || body >= m->nbodies) {
    mr_error_set(err, MR_ERR_INVALID, "frame '%s': no body %d", name, body);
    return -1;
  }
  if (reserve((void **)&m->frames, &m->cap_frames, m->nframes + 1, sizeof(mr_frame))) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory adding frame '%s'", name);
    return -1;
  }
  mr_frame *f = &m->frames[m->nframes];
  copy_name(f->name, name);
  f->body = body;
  f->placement = placement;
  return m->nframes++;
}

int mr_model_add_body(mr_model *m, int parent, const char *joint_name, mr_joint_type type,
                      mr_se3 placement, mr_vec3 axis, const char *body_name, mr_inertia inertia,
                      mr_error *err) {
  if (parent < 0 || parent >= m->nbodies) {
    mr_error_set(err, MR_ERR_INVALID, "joint '%s': parent body %d does not exist", joint_name,
                 parent);
    return -1;
  }
  if (type <= MR_JOINT_NONE || type >= MR_JOINT_TYPE_COUNT) {
    mr_error_set(err, MR_ERR_UNSUPPORTED, "joint '%s': unknown joint type %d", joint_name, type);
    return -1;
  }
  int one_axis = type == MR_JOINT_REVOLUTE || type == MR_JOINT_CONTINUOUS ||
                 type == MR_JOINT_PRISMATIC;
  if (one_axis) {
    double n = mr_v3_norm(axis);
    if (!(n > 1e-12) || !isfinite(n)) {
      mr_error_set(err, MR_ERR_INVALID, "joint '%s': axis (%g %g %g) has no direction",
                   joint_name, axis.v[0], axis.v[1], axis.v[2]);
      return -1;
    }
    axis = mr_v3_scale(axis, 1.0 / n);
  }
  if (check_inertia(&inertia, body_name, err)) return -1;
  int nq = mr_joint_nq(type), nv = mr_joint_nv(type);
  if (reserve((void **)&m->bodies, &m->cap_bodies, m->nbodies + 1, sizeof(mr_body)) ||
      reserve_q(m, m->nq + nq) || reserve_v(m, m->nv + nv)) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory adding body '%s'", body_name);
    return -1;
  }
  int id = m->nbodies;
  mr_body *b = &m->bodies[id];
  memset(b, 0, sizeof *b);
  copy_name(b->name, body_name);
  b->parent = parent;
  b->placement = placement;
  b->inertia = inertia;
  copy_name(b->joint.name, joint_name);
  b->joint.type = type;
  b->joint.axis = axis;
  b->joint.idx_q = m->nq;
  b->joint.idx_v = m->nv;
  b->joint.nq = nq;
  b->joint.nv = nv;
  for (int k = 0; k < nq; ++k) {
    m->lower[m->nq + k] = -INFINITY;
    m->upper[m->nq + k] = INFINITY;
  }
  for (int k = 0; k < nv; ++k) {
    m->velocity_limit[m->nv + k] = INFINITY;
    m->effort_limit[m->nv + k] = INFINITY;
    m->damping[m->nv + k] = 0.0;
    m->armature[m->nv + k] = 0.0;
    m->joint_friction[m->nv + k] = 0.0;
    m->dof_body[m->nv + k] = id;
  }
  m->nq += nq;
  m->nv += nv;
  m->nbodies++;
  if (mr_model_add_frame(m, id, mr_se3_identity(), body_name, err) < 0) {
    m->nbodies--, m->nq -= nq, m->nv -= nv;
    return -1;
  }
  return id;
}

int mr_model_add_fixed(mr_model *m, int body, mr_se3 placement, const char *name,
                       mr_inertia inertia, mr_error *err) {
  if (body < 0 || body >= m->nbodies) {
    mr_error_set(err, MR_ERR_INVALID, "fixed link '%s': no body %d", name, body);
    return -1;
  }
  if (check_inertia(&inertia, name, err)) return -1;
  mr_inertia moved = mr_se3_act_inertia(&placement, &inertia);
  m->bodies[body].inertia = mr_inertia_add(&m->bodies[body].inertia, &moved);
  return mr_model_add_frame(m, body, placement, name, err);
}

int mr_model_is_mimic_follower(const mr_model *m, int b) {
  for (int k = 0; k < m->nmimics; ++k)
    if (m->mimics[k].follower == b) return 1;
  return 0;
}

int mr_model_add_mimic(mr_model *m, int follower, int leader, double multiplier, double offset,
                       mr_error *err) {
  int ok = follower > 0 && follower < m->nbodies && leader > 0 && leader < m->nbodies &&
           follower != leader && m->bodies[follower].joint.nv == 1 &&
           m->bodies[leader].joint.nv == 1;
  if (!ok) {
    mr_error_set(err, MR_ERR_INVALID, "mimic: bodies %d and %d are not two distinct 1-dof joints",
                 follower, leader);
    return -1;
  }
  const char *fn = m->bodies[follower].joint.name, *ln = m->bodies[leader].joint.name;
  if (!isfinite(multiplier) || !isfinite(offset) || multiplier == 0.0) {
    mr_error_set(err, MR_ERR_INVALID, "joint '%s' mimics '%s' with multiplier %g, offset %g: "
                 "both must be finite, the multiplier non-zero", fn, ln, multiplier, offset);
    return -1;
  }
  if (mr_model_is_mimic_follower(m, follower) || mr_model_is_mimic_follower(m, leader)) {
    mr_error_set(err, MR_ERR_INVALID,
                 "joint '%s' mimics '%s': a joint follows at most one leader, and a leader "
                 "follows none", fn, ln);
    return -1;
  }
  for (int k = 0; k < m->nmimics; ++k)
    if (m->mimics[k].leader == follower) {
      mr_error_set(err, MR_ERR_INVALID, "joint '%s' mimics '%s' but is itself mimicked", fn, ln);
      return -1;
    }
  if (reserve((void **)&m->mimics, &m->cap_mimics, m->nmimics + 1, sizeof(mr_mimic))) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory adding a mimic joint");
    return -1;
  }
  m->mimics[m->nmimics] = (mr_mimic){follower, leader, multiplier, offset};
  return m->nmimics++;
}

mr_geom mr_geom_default(mr_geom_type type, int body) {
  mr_geom g;
  memset(&g, 0, sizeof g);
  g.type = type;
  g.body = body;
  g.placement = mr_se3_identity();
  g.mesh_scale = mr_v3(1, 1, 1);
  g.friction = 1.0;
  g.group = 1u;
  g.mask = 0xffffffffu;
  return g;
}

/* the number of size entries a geometry type uses */
static int geom_nsize(mr_geom_type t) {
  switch (t) {
  case MR_GEOM_SPHERE: return 1;
  case MR_GEOM_CAPSULE:
  case MR_GEOM_CYLINDER: return 2;
  case MR_GEOM_BOX:
  case MR_GEOM_ELLIPSOID: return 3;
  default: return 0;
  }
}

int mr_model_add_geom(mr_model *m, const mr_geom *g, mr_error *err) {
  if (g->body < 0 || g->body >= m->nbodies) {
    mr_error_set(err, MR_ERR_INVALID, "geometry '%s': no body %d", g->name, g->body);
    return -1;
  }
  if ((unsigned)g->type >= MR_GEOM_TYPE_COUNT) {
    mr_error_set(err, MR_ERR_UNSUPPORTED, "geometry '%s': unknown type %d", g->name, g->type);
    return -1;
  }
  for (int k = 0; k < geom_nsize(g->type); ++k)
    if (!(g->size[k] > 0.0) || !isfinite(g->size[k])) {
      mr_error_set(err, MR_ERR_INVALID, "geometry '%s' (%s): size %g must be positive", g->name,
                   mr_geom_type_name(g->type), g->size[k]);
      return -1;
    }
  if (!(g->friction >= 0.0) || !(g->restitution >= 0.0 && g->restitution <= 1.0) ||
      !(g->compliance >= 0.0) || !(g->tangential_compliance >= 0.0)) {
    mr_error_set(err, MR_ERR_INVALID,
                 "geometry '%s': friction %g must be >= 0, restitution %g in [0, 1], "
                 "compliance %g >= 0, tangential compliance %g >= 0",
                 g->name, g->friction, g->restitution, g->compliance, g->tangential_compliance);
    return -1;
  }
  if (reserve((void **)&m->geoms, &m->cap_geoms, m->ngeoms + 1, sizeof(mr_geom))) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory adding geometry '%s'", g->name);
    return -1;
  }
  mr_geom *dst = &m->geoms[m->ngeoms];
  *dst = *g;
  dst->mesh_file = NULL;
  if (g->mesh_file && !(dst->mesh_file = strdup(g->mesh_file))) {
    mr_error_set(err, MR_ERR_NOMEM, "out of memory adding geometry '%s'", g->name);
    return -1;
  }
  return m->ngeoms++;
}

mr_status mr_model_set_limits(mr_model *m, int body, double lower, double upper,
                              double velocity, double effort, mr_error *err) {
  if (body <= 0 || body >= m->nbodies)
    return mr_error_set(err, MR_ERR_INVALID, "limits: no joint on body %d", body);
  const mr_joint *j = &m->bodies[body].joint;
  if (j->nq != 1)
    return mr_error_set(err, MR_ERR_INVALID, "joint '%s': position limits need a 1-dof joint",
                        j->name);
  if (!(lower <= upper))
    return mr_error_set(err, MR_ERR_INVALID, "joint '%s': lower limit %g > upper limit %g",
                        j->name, lower, upper);
  if (!(velocity >= 0.0) || !(effort >= 0.0))
    return mr_error_set(err, MR_ERR_INVALID,
                        "joint '%s': velocity %g and effort %g limits must be >= 0", j->name,
                        velocity, effort);
  m->lower[j->idx_q] = lower;
  m->upper[j->idx_q] = upper;
  m->velocity_limit[j->idx_v] = velocity;
  m->effort_limit[j->idx_v] = effort;
  return MR_OK;
}

int mr_model_body_index(const mr_model *m, const char *name) {
  for (int i = 0; i < m->nbodies; ++i)
    if (strcmp(m->bodies[i].name, name) == 0) return i;
  return -1;
}

int mr_model_joint_index(const mr_model *m, const char *name) {
  for (int i = 1; i < m->nbodies; ++i)
    if (strcmp(m->bodies[i].joint.name, name) == 0) return i;
  return -1;
}

int mr_model_frame_index(const mr_model *m, const char *name) {
  for (int i = 0; i < m->nframes; ++i)
    if (strcmp(m->frames[i].name, name) == 0) return i;
  return -1;
}

double mr_model_total_mass(const mr_model *m) {
  double s = 0.0;
  for (int i = 1; i < m->nbodies; ++i) s += m->bodies[i].inertia.m;
  return s;
}
