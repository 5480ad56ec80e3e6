/* The YAML scene loader: top-level keys, solver settings, contact and record options, scene
 * bodies and the initial state (docs/scene-format.md is the reference). Free bodies become
 * MR_JOINT_FREE bodies hanging from the world; their initial twist is given in the world frame
 * and converted to the free-flyer's local-frame velocity v = (Rᵀ v_world, Rᵀ ω_world). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/file.h"
#include "dynamics/model_inertia.h"
#include "io/scene_internal.h"
#include "moreau/assembly.h"
#include "moreau/collision.h"

/* the registered solver names, NULL-terminated, into names (capacity cap) */
static const char *const *solver_names(const char **names, int cap) {
  int n = 0;
  for (int i = 0; i < mr_solver_count() && n < cap - 1; ++i)
    names[n++] = mr_solver_at(i)->name;
  names[n] = NULL;
  return names;
}

/* the settable fields of mr_solver_settings, by name */
/* the settable fields of mr_solver_settings, by name, with the range of the integer ones:
 * iteration counts are capped so that one step's work stays bounded (docs/scene-format.md) */
typedef enum { F_INT, F_DOUBLE, F_BOOL, F_CRITERION } field_kind;
static const struct {
  const char *name;
  field_kind kind;
  size_t offset;
  int imin, imax;
} settings_fields[] = {
#define FIELD(n, k, lo, hi)                                                                        \
  { #n, k, offsetof(mr_solver_settings, n), lo, hi }
    FIELD(max_iter, F_INT, 1, 10000000),
    FIELD(eps_abs, F_DOUBLE, 0, 0),
    FIELD(eps_rel, F_DOUBLE, 0, 0),
    FIELD(omega, F_DOUBLE, 0, 0),
    FIELD(warm_start, F_BOOL, 0, 1),
    FIELD(rho, F_DOUBLE, 0, 0),
    FIELD(rho_ratio, F_DOUBLE, 0, 0),
    FIELD(rho_power, F_DOUBLE, 0, 0),
    FIELD(rho_update_every, F_INT, 0, 10000000),
    FIELD(power_iter, F_INT, 0, 1000),
    FIELD(alpha0, F_DOUBLE, 0, 0),
    FIELD(alpha_decay, F_DOUBLE, 0, 0),
    FIELD(alpha_min, F_DOUBLE, 0, 0),
    FIELD(bisection_iter, F_INT, 0, 1000),
    FIELD(compliance_eps, F_DOUBLE, 0, 0),
    FIELD(armijo_c, F_DOUBLE, 0, 0),
    FIELD(backtrack, F_DOUBLE, 0, 0),
    FIELD(inner_iter, F_INT, 0, 100000),
    FIELD(soft_k, F_DOUBLE, 0, 0),
    FIELD(soft_d, F_DOUBLE, 0, 0),
    FIELD(soft_vreg, F_DOUBLE, 0, 0),
    FIELD(max_work, F_INT, 0, 2000000000),
    FIELD(max_time, F_DOUBLE, 0, 0),
    FIELD(criterion, F_CRITERION, 0, 0),
    FIELD(pyramid_facets, F_INT, 4, MR_PYRAMID_MAX_FACETS),
    FIELD(eps_scale, F_DOUBLE, 0, 0),
#undef FIELD
};
#define NFIELDS ((int)(sizeof settings_fields / sizeof settings_fields[0]))

mr_status scene_status(const mr_scene_ctx *c) {
  return c->err ? c->err->status : MR_ERR_INVALID;
}

/* ---- paths ---- */

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void scene_join(char *out, size_t len, const char *dir, const char *rel) {
  size_t ld = strlen(dir), lr = strlen(rel), k = 0;
  if (!len) return;
  for (size_t i = 0; i < ld && k + 1 < len; ++i)
    out[k++] = dir[i];
  if (ld && k + 1 < len) out[k++] = '/';
  for (size_t i = 0; i < lr && k + 1 < len; ++i)
    out[k++] = rel[i];
  out[k] = '\0';
}

int scene_resolve(const mr_scene_ctx *c, const char *rel, char *out, size_t len) {
  if (rel[0] == '/' || !c->dir[0]) {
    snprintf(out, len, "%s", rel);
    return file_exists(out) ? 0 : -1;
  }
  scene_join(out, len, c->dir, rel);
  if (file_exists(out)) return 0;
  if (file_exists(rel)) return snprintf(out, len, "%s", rel), 0;
  return -1;
}

mr_status scene_grow_state(mr_scene_ctx *c, int nq, int nv) {
  mr_scene *s = c->s;
  if (nq > c->cap_q) {
    double *q = realloc(s->q0, (size_t)(2 * nq) * sizeof *q);
    if (!q) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", s->path);
    s->q0 = q, c->cap_q = 2 * nq;
  }
  if (nv > c->cap_v) {
    double *v = realloc(s->v0, (size_t)(2 * nv) * sizeof *v);
    if (!v) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", s->path);
    s->v0 = v, c->cap_v = 2 * nv;
  }
  return MR_OK;
}

/* ---- poses ---- */

mr_status scene_pose(mr_scene_ctx *c, const mr_ynode *map, mr_se3 *X, mr_quat *q) {
  double p[3] = {0, 0, 0}, o[4] = {0, 0, 0, 1};
  if (mr_yaml_opt_vec(&c->y, map, "position", p, 3) ||
      mr_yaml_opt_vec(&c->y, map, "orientation", o, 4))
    return scene_status(c);
  mr_quat qq = {o[0], o[1], o[2], o[3]};
  double n = mr_quat_norm(qq);
  if (!(fabs(n - 1.0) < 1e-6))
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, map, "orientation"), MR_ERR_INVALID,
                         "'orientation': quaternion [%g, %g, %g, %g] (x y z w) has norm %.9g, "
                         "expected a unit quaternion (|norm - 1| < 1e-6)",
                         o[0], o[1], o[2], o[3], n);
  qq = mr_quat_normalize(qq);
  *X = mr_se3_make(mr_quat_to_m3(qq), mr_v3(p[0], p[1], p[2]));
  if (q) *q = qq;
  return MR_OK;
}

/* ---- top-level options ---- */

/* criterion: own | ncp (mr_solver_settings.criterion) */
static mr_status criterion_value(mr_ydoc *y, const mr_ynode *n, const char *key, int *out) {
  const char *v = NULL;
  mr_status st = mr_yaml_string(y, n, key, &v);
  if (st) return st;
  if (!strcmp(v, "own") || !strcmp(v, "ncp")) return *out = v[0] == 'n', MR_OK;
  return mr_yaml_error(y, n, MR_ERR_INVALID, "'%s': must be 'own' or 'ncp', got '%s'", key, v);
}

static mr_status set_field(mr_ydoc *y, const mr_ynode *n, int f, mr_solver_settings *s) {
  char *base = (char *)s + settings_fields[f].offset;
  const char *key = settings_fields[f].name;
  int iv = 0;
  double dv = 0;
  mr_status st = MR_OK;
  switch (settings_fields[f].kind) {
  case F_INT:
    st = mr_yaml_int(y, n, key, &iv);
    break;
  case F_BOOL:
    st = mr_yaml_bool(y, n, key, &iv);
    break;
  case F_DOUBLE:
    st = mr_yaml_double(y, n, key, &dv);
    break;
  case F_CRITERION:
    st = criterion_value(y, n, key, &iv);
    break;
  }
  if (st) return st;
  int lo = settings_fields[f].imin, hi = settings_fields[f].imax;
  if (settings_fields[f].kind == F_INT && (iv < lo || iv > hi))
    return mr_yaml_error(y, n, MR_ERR_INVALID, "'%s': must be in [%d, %d], got '%s'", key, lo, hi,
                         mr_yaml_text(n));
  if (base == (char *)&s->pyramid_facets && iv % 2)
    return mr_yaml_error(y, n, MR_ERR_INVALID, "'%s': must be even, got '%s'", key,
                         mr_yaml_text(n));
  if (dv < 0)
    return mr_yaml_error(y, n, MR_ERR_INVALID, "'%s': must be >= 0, got '%s'", key,
                         mr_yaml_text(n));
  if (settings_fields[f].kind == F_DOUBLE)
    memcpy(base, &dv, sizeof dv);
  else
    memcpy(base, &iv, sizeof iv);
  return MR_OK;
}

static mr_status solver_name(mr_scene_ctx *c, const mr_ynode *n) {
  const char *name = NULL, *buf[64];
  if (mr_yaml_string(&c->y, n, "solver.name", &name)) return scene_status(c);
  if (mr_solver_find(name)) return snprintf(c->s->solver, sizeof c->s->solver, "%s", name), MR_OK;
  const char *const *known = solver_names(buf, 64);
  const char *near = mr_yaml_nearest(name, known);
  char list[512] = "";
  for (int i = 0; known[i]; ++i)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", known[i]);
  if (near)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "'solver.name': unknown solver '%s': did you mean '%s'? (known: %s)", name,
                         near, list);
  return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'solver.name': unknown solver '%s' (known: %s)",
                       name, list);
}

static mr_status parse_solver(mr_scene_ctx *c, const mr_ynode *n) {
  if (mr_yaml_is_scalar(n)) return solver_name(c, n);
  const char *keys[NFIELDS + 3];
  keys[0] = "name";
  for (int f = 0; f < NFIELDS; ++f)
    keys[f + 1] = settings_fields[f].name;
  keys[NFIELDS + 1] = "retry";
  keys[NFIELDS + 2] = NULL;
  if (mr_yaml_check_map(&c->y, n, keys, "'solver'")) return scene_status(c);
  mr_ynode *name = mr_yaml_get(&c->y, n, "name");
  if (name && solver_name(c, name)) return scene_status(c);
  /* retry: false, one solve per island at the solver's budget (world.h, no_retry) */
  int retry = !c->s->contact.no_retry;
  if (mr_yaml_opt_bool(&c->y, n, "retry", &retry)) return scene_status(c);
  c->s->contact.no_retry = !retry;
  for (int f = 0; f < NFIELDS; ++f) {
    mr_ynode *v = mr_yaml_get(&c->y, n, settings_fields[f].name);
    if (v && set_field(&c->y, v, f, &c->s->settings)) return scene_status(c);
  }
  return MR_OK;
}

mr_status mr_scene_step_count(double timestep, double duration, long *steps, mr_error *err) {
  *steps = 0;
  if (!(timestep >= MR_SCENE_TIMESTEP_MIN))
    return mr_error_set(err, MR_ERR_INVALID, "time step %g s is below %g s", timestep,
                        MR_SCENE_TIMESTEP_MIN);
  if (!(duration >= 0.0))
    return mr_error_set(err, MR_ERR_INVALID, "duration %g s is not >= 0", duration);
  double n = floor(duration / timestep + 0.5);
  if (!(n <= MR_SCENE_STEPS_MAX))
    return mr_error_set(err, MR_ERR_INVALID,
                        "duration %g s at time step %g s is %.3g steps, more than %.0e", duration,
                        timestep, n, MR_SCENE_STEPS_MAX);
  if (duration > 0.0 && n < 1.0)
    return mr_error_set(err, MR_ERR_INVALID,
                        "duration %g s is shorter than half the time step %g s: no step", duration,
                        timestep);
  *steps = (long)n;
  return MR_OK;
}

mr_status mr_scene_settings_set(mr_solver_settings *s, const char *field, const char *value,
                                mr_error *err) {
  for (int f = 0; f < NFIELDS; ++f) {
    if (strcmp(field, settings_fields[f].name)) continue;
    /* parse the value through a one-scalar YAML document for identical rules */
    mr_ydoc y;
    if (mr_yaml_parse(&y, value, strlen(value), "settings", err)) return err ? err->status : 1;
    mr_ynode *n = mr_yaml_root(&y);
    mr_status st = n ? set_field(&y, n, f, s)
                     : mr_error_set(err, MR_ERR_INVALID, "setting '%s': no value", field);
    mr_yaml_free(&y);
    return st;
  }
  const char *names[NFIELDS + 1];
  for (int f = 0; f <= NFIELDS; ++f)
    names[f] = mr_scene_settings_field(f);
  const char *near = mr_yaml_nearest(field, names);
  if (near)
    return mr_error_set(err, MR_ERR_INVALID, "unknown solver setting '%s': did you mean '%s'?",
                        field, near);
  return mr_error_set(err, MR_ERR_INVALID, "unknown solver setting '%s'", field);
}

const char *mr_scene_settings_field(int i) {
  return i >= 0 && i < NFIELDS ? settings_fields[i].name : NULL;
}

static mr_status nonneg(mr_scene_ctx *c, const mr_ynode *map, const char *key, double *out) {
  mr_ynode *n = mr_yaml_get(&c->y, map, key);
  if (!n) return MR_OK;
  if (mr_yaml_double(&c->y, n, key, out)) return scene_status(c);
  if (*out < 0)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "'%s': must be >= 0, got %g", key, *out);
  return MR_OK;
}

static mr_status parse_contact(mr_scene_ctx *c, const mr_ynode *n) {
  static const char *const keys[] = {"margin",       "baumgarte",    "restitution_threshold",
                                     "max_contacts", "limit_margin", "speculative",
                                     "band",         "rest_depth",   NULL};
  mr_scene_contact *o = &c->s->contact;
  if (mr_yaml_check_map(&c->y, n, keys, "'contact'") || nonneg(c, n, "margin", &o->margin) ||
      nonneg(c, n, "baumgarte", &o->baumgarte) ||
      nonneg(c, n, "restitution_threshold", &o->restitution_threshold) ||
      mr_yaml_opt_int(&c->y, n, "max_contacts", &o->max_contacts) ||
      nonneg(c, n, "limit_margin", &o->limit_margin) ||
      mr_yaml_opt_bool(&c->y, n, "speculative", &o->speculative) ||
      nonneg(c, n, "band", &o->band) || nonneg(c, n, "rest_depth", &o->rest_depth))
    return scene_status(c);
  if (o->band > MR_SCENE_BAND_MAX)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "band"), MR_ERR_INVALID,
                         "'band': must be in [0, %g] m, got %g", MR_SCENE_BAND_MAX, o->band);
  if (o->rest_depth > o->band)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "rest_depth"), MR_ERR_INVALID,
                         "'rest_depth': must be in [0, band = %g] m, got %g", o->band,
                         o->rest_depth);
  if (o->baumgarte > 1.0)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "baumgarte"), MR_ERR_INVALID,
                         "'baumgarte': must be in [0, 1], got %g", o->baumgarte);
  if (o->max_contacts < 0 || o->max_contacts > MR_SCENE_MAX_CONTACTS)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "max_contacts"), MR_ERR_INVALID,
                         "'max_contacts': must be in [0, %d], got %d", MR_SCENE_MAX_CONTACTS,
                         o->max_contacts);
  if (o->margin > MR_SCENE_MARGIN_MAX)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "margin"), MR_ERR_INVALID,
                         "'margin': must be in [0, %g] m, got %g", MR_SCENE_MARGIN_MAX, o->margin);
  return MR_OK;
}

static mr_status record_path(mr_scene_ctx *c, const mr_ynode *n, const char *key, char *out) {
  const char *s = NULL;
  if (mr_yaml_opt_string(&c->y, n, key, &s)) return scene_status(c);
  if (s) snprintf(out, MR_SCENE_PATH_MAX, "%s", s);
  return MR_OK;
}

static mr_status parse_record(mr_scene_ctx *c, const mr_ynode *n) {
  static const char *const keys[] = {
      "every",   "contact_forces", "solver_stats", "energy", "trajectory", "contacts",
      "summary", "world_velocity", "poses",        "com",    NULL};
  mr_scene_record *r = &c->s->record;
  if (mr_yaml_check_map(&c->y, n, keys, "'record'") ||
      mr_yaml_opt_int(&c->y, n, "every", &r->every) ||
      mr_yaml_opt_bool(&c->y, n, "contact_forces", &r->contact_forces) ||
      mr_yaml_opt_bool(&c->y, n, "solver_stats", &r->solver_stats) ||
      mr_yaml_opt_bool(&c->y, n, "energy", &r->energy) ||
      record_path(c, n, "trajectory", r->trajectory) ||
      record_path(c, n, "contacts", r->contacts) || record_path(c, n, "summary", r->summary) ||
      mr_yaml_opt_bool(&c->y, n, "world_velocity", &r->world_velocity) ||
      mr_yaml_opt_bool(&c->y, n, "poses", &r->poses) || mr_yaml_opt_bool(&c->y, n, "com", &r->com))
    return scene_status(c);
  if (r->every < 1)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, n, "every"), MR_ERR_INVALID,
                         "'every': must be >= 1, got %d", r->every);
  return MR_OK;
}

static mr_status parse_time(mr_scene_ctx *c, const mr_ynode *root) {
  mr_scene *s = c->s;
  double g[3] = {0, 0, -9.81};
  if (mr_yaml_opt_double(&c->y, root, "timestep", &s->timestep) ||
      mr_yaml_opt_double(&c->y, root, "duration", &s->duration) ||
      mr_yaml_opt_vec(&c->y, root, "gravity", g, 3))
    return scene_status(c);
  if (!(s->timestep >= MR_SCENE_TIMESTEP_MIN))
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, root, "timestep"), MR_ERR_INVALID,
                         "'timestep': must be >= %g s, got %g", MR_SCENE_TIMESTEP_MIN, s->timestep);
  if (s->duration < 0)
    return mr_yaml_error(&c->y, mr_yaml_get(&c->y, root, "duration"), MR_ERR_INVALID,
                         "'duration': must be >= 0, got %g", s->duration);
  long steps;
  mr_error e;
  if (mr_scene_step_count(s->timestep, s->duration, &steps, &e)) {
    mr_ynode *d = mr_yaml_get(&c->y, root, "duration");
    return mr_yaml_error(&c->y, d ? d : mr_yaml_get(&c->y, root, "timestep"), MR_ERR_INVALID, "%s",
                         e.msg);
  }
  s->model->gravity = mr_v3(g[0], g[1], g[2]);
  return MR_OK;
}

/* ---- bodies ---- */

static const char *const free_body_keys[] = {
    "name",     "fixed",       "mass",  "density",         "inertia",          "com",
    "position", "orientation", "geoms", "linear_velocity", "angular_velocity", "inertia_fix",
    NULL};
static const char *const fixed_body_keys[] = {"name",        "fixed", "position",
                                              "orientation", "geoms", NULL};

/* the body's inertia: explicit (mass + inertia [+ com]), or from the geometries at uniform
 * density (mass, or density) */
/* the URDF loader's inertia policy (mr_inertia_physical): a tensor that is not physical is
 * refused, or with inertia_fix replaced by the nearest physical one and counted as a warning */
static mr_status physical_inertia(mr_scene_ctx *c, const mr_ynode *n, const mr_ynode *ni,
                                  const char *name, mr_inertia *Y) {
  double lam[3], fixed[3];
  mr_mat3 R;
  char what[240];
  int fix = 0;
  mr_inertia_principal(&Y->I, lam, &R);
  if (mr_inertia_physical(&Y->I, lam[2], what, sizeof what)) return MR_OK;
  if (mr_yaml_opt_bool(&c->y, n, "inertia_fix", &fix)) return scene_status(c);
  if (!fix)
    return mr_yaml_error(&c->y, ni, MR_ERR_INVALID,
                         "body '%s': inertia %s; to use the nearest physical tensor instead, set "
                         "'inertia_fix: true' on the body",
                         name, what);
  Y->I = mr_inertia_nearest_physical(&Y->I, fixed);
  /* the warning names the place as an error would */
  mr_error *err = c->y.err, w;
  c->y.err = &w;
  mr_yaml_error(&c->y, ni, MR_OK,
                "body '%s': inertia %s; inertia_fix: replaced by the nearest physical tensor, "
                "same principal axes, principal moments %g, %g, %g kg m^2",
                name, what, fixed[0], fixed[1], fixed[2]);
  c->y.err = err;
  c->s->nwarnings++;
  snprintf(c->s->warning, sizeof c->s->warning, "%s", w.msg);
  return MR_OK;
}

/* mass + inertia [+ com] as written: I = [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] */
static mr_status explicit_inertia(mr_scene_ctx *c, const mr_ynode *n, const mr_ynode *ni,
                                  const char *name, double mass, mr_inertia *Y) {
  double I[6] = {0}, com[3] = {0, 0, 0};
  int len = mr_yaml_seq_size(ni) == 6 ? 6 : 3;
  if (mr_yaml_vec(&c->y, ni, "inertia", I, len) || mr_yaml_opt_vec(&c->y, n, "com", com, 3))
    return scene_status(c);
  for (int k = 0; k < 3; ++k)
    if (!(I[k] > 0))
      return mr_yaml_error(&c->y, ni, MR_ERR_INVALID,
                           "'inertia' of body '%s': diagonal entry %g must be > 0", name, I[k]);
  Y->m = mass;
  Y->c = mr_v3(com[0], com[1], com[2]);
  Y->I = mr_m3_diag(I[0], I[1], I[2]);
  Y->I.m[0][1] = Y->I.m[1][0] = I[3];
  Y->I.m[0][2] = Y->I.m[2][0] = I[4];
  Y->I.m[1][2] = Y->I.m[2][1] = I[5];
  return physical_inertia(c, n, ni, name, Y);
}

/* uniform density over the geometries: ρ = mass / Σ V, or the given density */
static mr_status uniform_inertia(mr_scene_ctx *c, const mr_ynode *n, const char *name, double mass,
                                 double density, const mr_inertia *unit, int has_mesh,
                                 mr_inertia *Y) {
  mr_ynode *com = mr_yaml_get(&c->y, n, "com");
  if (com)
    return mr_yaml_error(&c->y, com, MR_ERR_INVALID,
                         "body '%s': 'com' needs 'inertia' (otherwise it comes from the geoms)",
                         name);
  if (has_mesh)
    return mr_yaml_error(&c->y, n, MR_ERR_UNSUPPORTED,
                         "body '%s': inertia of a mesh geometry is not computed; give 'inertia'",
                         name);
  if (!(unit->m > 0))
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID,
                         "body '%s': no solid geometry to compute the inertia from; give "
                         "'inertia'",
                         name);
  double rho = mass > 0 ? mass / unit->m : density;
  Y->m = rho * unit->m;
  Y->c = unit->c;
  Y->I = mr_m3_scale(&unit->I, rho);
  return MR_OK;
}

/* the body's inertia: explicit (mass + inertia [+ com]), or from the geometries at uniform
 * density (mass, or density) */
static mr_status body_inertia(mr_scene_ctx *c, const mr_ynode *n, const char *name,
                              const mr_inertia *unit, int has_mesh, mr_inertia *Y) {
  mr_ynode *nm = mr_yaml_get(&c->y, n, "mass"), *nd = mr_yaml_get(&c->y, n, "density");
  mr_ynode *ni = mr_yaml_get(&c->y, n, "inertia");
  double mass = -1, density = -1;
  if ((nm && mr_yaml_double(&c->y, nm, "mass", &mass)) ||
      (nd && mr_yaml_double(&c->y, nd, "density", &density)))
    return scene_status(c);
  if (nm && !(mass > 0))
    return mr_yaml_error(&c->y, nm, MR_ERR_INVALID, "'mass' of body '%s': must be > 0, got %g",
                         name, mass);
  if (nd && !(density > 0))
    return mr_yaml_error(&c->y, nd, MR_ERR_INVALID, "'density' of body '%s': must be > 0, got %g",
                         name, density);
  if (nm && nd)
    return mr_yaml_error(&c->y, nd, MR_ERR_INVALID, "body '%s': give 'mass' or 'density', not both",
                         name);
  if (ni && !nm)
    return mr_yaml_error(&c->y, ni, MR_ERR_INVALID, "body '%s': 'inertia' needs 'mass'", name);
  if (!nm && !nd)
    return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "body '%s': needs 'mass' or 'density'", name);
  if (ni) return explicit_inertia(c, n, ni, name, mass, Y);
  return uniform_inertia(c, n, name, mass, density, unit, has_mesh, Y);
}

static int has_geom_type(mr_scene_ctx *c, const mr_ynode *geoms, const char *type) {
  for (int i = 0; i < mr_yaml_seq_size(geoms); ++i) {
    mr_ynode *t = mr_yaml_get(&c->y, mr_yaml_seq_at(&c->y, geoms, i), "type");
    if (t && strcmp(mr_yaml_text(t), type) == 0) return 1;
  }
  return 0;
}

/* world-frame twist → local-frame free-flyer velocity */
static mr_status body_state(mr_scene_ctx *c, const mr_ynode *n, int body, mr_se3 X, mr_quat q) {
  mr_scene *s = c->s;
  double lv[3] = {0, 0, 0}, av[3] = {0, 0, 0};
  if (mr_yaml_opt_vec(&c->y, n, "linear_velocity", lv, 3) ||
      mr_yaml_opt_vec(&c->y, n, "angular_velocity", av, 3))
    return scene_status(c);
  const mr_joint *j = &s->model->bodies[body].joint;
  if (scene_grow_state(c, j->idx_q + 7, j->idx_v + 6)) return scene_status(c);
  double *qq = s->q0 + j->idx_q, *vv = s->v0 + j->idx_v;
  double qv[7] = {X.p.v[0], X.p.v[1], X.p.v[2], q.x, q.y, q.z, q.w};
  memcpy(qq, qv, sizeof qv);
  mr_vec3 vl = mr_m3_tmulv(&X.R, mr_v3(lv[0], lv[1], lv[2]));
  mr_vec3 wl = mr_m3_tmulv(&X.R, mr_v3(av[0], av[1], av[2]));
  for (int k = 0; k < 3; ++k)
    vv[k] = vl.v[k], vv[3 + k] = wl.v[k];
  return MR_OK;
}

static mr_status add_free_body(mr_scene_ctx *c, const mr_ynode *n, mr_scene_body *b) {
  mr_ynode *geoms = mr_yaml_get(&c->y, n, "geoms");
  mr_se3 X;
  mr_quat q;
  if (mr_yaml_check_map(&c->y, n, free_body_keys, "a free body") || scene_pose(c, n, &X, &q))
    return scene_status(c);
  if (geoms && mr_yaml_need_seq(&c->y, geoms, "geoms")) return scene_status(c);
  /* the body first (unit inertia placeholder), geometries next, then the real inertia */
  char jname[MR_NAME_MAX + 16];
  snprintf(jname, sizeof jname, "%s/root_joint", b->name);
  mr_inertia Y0 = mr_inertia_zero();
  int id = mr_model_add_body(c->s->model, 0, jname, MR_JOINT_FREE, mr_se3_identity(),
                             mr_v3(0, 0, 1), b->name, Y0, c->err);
  if (id < 0) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "%s", c->err ? c->err->msg : "");
  b->body = id;
  b->idx_q = c->s->model->bodies[id].joint.idx_q;
  b->idx_v = c->s->model->bodies[id].joint.idx_v;
  mr_inertia unit = mr_inertia_zero();
  if (geoms && scene_geoms(c, geoms, b->name, id, mr_se3_identity(), 1, &unit))
    return scene_status(c);
  if (body_inertia(c, n, b->name, &unit, has_geom_type(c, geoms, "mesh"),
                   &c->s->model->bodies[id].inertia))
    return scene_status(c);
  return body_state(c, n, id, X, q);
}

static mr_status add_fixed_body(mr_scene_ctx *c, const mr_ynode *n, mr_scene_body *b) {
  mr_ynode *geoms = mr_yaml_get(&c->y, n, "geoms");
  mr_se3 X;
  if (mr_yaml_check_map(&c->y, n, fixed_body_keys, "a fixed body (fixed: true)") ||
      scene_pose(c, n, &X, NULL))
    return scene_status(c);
  if (geoms && mr_yaml_need_seq(&c->y, geoms, "geoms")) return scene_status(c);
  b->body = 0;
  b->idx_q = b->idx_v = -1;
  return geoms ? scene_geoms(c, geoms, b->name, 0, X, 0, NULL) : MR_OK;
}

static mr_status parse_body(mr_scene_ctx *c, const mr_ynode *n, int index) {
  mr_scene *s = c->s;
  mr_scene_body *b = &s->bodies[index];
  const char *name = NULL;
  if (mr_yaml_need_map(&c->y, n, "bodies[]")) return scene_status(c);
  mr_ynode *nn = mr_yaml_get(&c->y, n, "name");
  if (!nn) return mr_yaml_error(&c->y, n, MR_ERR_INVALID, "body %d: missing 'name'", index);
  if (mr_yaml_string(&c->y, nn, "name", &name) || mr_yaml_opt_bool(&c->y, n, "fixed", &b->fixed))
    return scene_status(c);
  if (strchr(name, '/'))
    return mr_yaml_error(&c->y, nn, MR_ERR_INVALID, "'name': '%s' may not contain '/'", name);
  for (int i = 0; i < index; ++i)
    if (strcmp(s->bodies[i].name, name) == 0)
      return mr_yaml_error(&c->y, nn, MR_ERR_INVALID, "'name': duplicate body name '%s'", name);
  snprintf(b->name, sizeof b->name, "%s", name);
  return b->fixed ? add_fixed_body(c, n, b) : add_free_body(c, n, b);
}

static mr_status parse_bodies(mr_scene_ctx *c, const mr_ynode *seq) {
  mr_scene *s = c->s;
  if (mr_yaml_need_seq(&c->y, seq, "bodies")) return scene_status(c);
  int n = mr_yaml_seq_size(seq);
  s->bodies = calloc((size_t)(n ? n : 1), sizeof *s->bodies);
  if (!s->bodies) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", s->path);
  for (int i = 0; i < n; ++i) {
    s->nbodies = i + 1;
    if (parse_body(c, mr_yaml_seq_at(&c->y, seq, i), i)) return scene_status(c);
  }
  return MR_OK;
}

/* ---- the whole file ---- */

static const char *const top_keys[] = {
    "timestep", "duration", "gravity", "solver", "contact",     "materials",   "pairs",
    "bodies",   "robots",   "forces",  "record", "description", "constraints", NULL};

static void scene_defaults(mr_scene *s) {
  memset(s, 0, sizeof *s);
  s->timestep = 1e-3;
  s->duration = 1.0;
  snprintf(s->solver, sizeof s->solver, "ncp-hybrid");
  s->settings = mr_solver_settings_default();
  s->contact.restitution_threshold = 0.01;
  s->contact.limit_margin = 0.01;
  s->contact.speculative = 1;
  s->contact.band = mr_assembly_settings_default().band;
  s->contact.rest_depth = mr_assembly_settings_default().rest_depth;
  s->record.every = 1;
  s->record.solver_stats = 1;
  s->record.energy = 1;
}

void scene_init(mr_scene *s, const char *path) {
  scene_defaults(s);
  snprintf(s->path, sizeof s->path, "%s", path ? path : "");
}

static mr_status parse_root(mr_scene_ctx *c, const mr_ynode *root) {
  mr_ydoc *y = &c->y;
  mr_ynode *n;
  if (!root) return MR_OK;
  if (mr_yaml_check_map(y, root, top_keys, "the scene") || parse_time(c, root))
    return scene_status(c);
  if ((n = mr_yaml_get(y, root, "solver")) && parse_solver(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "contact")) && parse_contact(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "record")) && parse_record(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "materials")) && scene_materials(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "bodies")) && parse_bodies(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "robots")) && scene_robots(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "pairs")) && scene_pairs(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "forces")) && scene_forces(c, n)) return scene_status(c);
  if ((n = mr_yaml_get(y, root, "constraints")) && scene_constraints(c, n)) return scene_status(c);
  return MR_OK;
}

mr_status mr_scene_parse(const char *text, const char *name, const char *dir, mr_scene *scene,
                         mr_error *err) {
  mr_scene_ctx c;
  memset(&c, 0, sizeof c);
  mr_error local;
  c.err = err ? err : &local;
  mr_error_clear(c.err);
  c.s = scene;
  scene_defaults(scene);
  snprintf(scene->path, sizeof scene->path, "%s", name);
  snprintf(c.dir, sizeof c.dir, "%s", dir ? dir : "");
  if (!(scene->model = mr_model_create(name)) || scene_grow_state(&c, 8, 8)) {
    mr_scene_free(scene);
    return mr_error_set(c.err, MR_ERR_NOMEM, "%s: out of memory", name);
  }
  mr_status st = mr_yaml_parse(&c.y, text, strlen(text), scene->path, c.err);
  if (!st) st = parse_root(&c, mr_yaml_root(&c.y));
  mr_yaml_free(&c.y);
  /* meshes: vertices and convex hulls, non-convex ones counted as warnings */
  if (!st) st = mr_model_load_meshes(scene->model, &scene->nwarnings, scene->warning, c.err);
  if (st) mr_scene_free(scene);
  return st;
}

/* the scene file as text; a NUL byte inside is an error */
static char *read_text(const char *path, mr_error *err) {
  char *buf = NULL;
  size_t len = 0;
  if (mr_read_file(path, &buf, &len, err)) return NULL;
  if (strlen(buf) != len) {
    free(buf);
    return mr_error_set(err, MR_ERR_PARSE, "%s: the file contains a NUL byte", path), NULL;
  }
  return buf;
}

mr_status mr_scene_load(const char *path, mr_scene *scene, mr_error *err) {
  scene_defaults(scene);
  char *text = read_text(path, err);
  if (!text) return err ? err->status : MR_ERR_IO;
  char dir[MR_SCENE_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    dir[0] = '\0';
  if (slash == dir) snprintf(dir, sizeof dir, "/");
  mr_status st = scene_load_file(path, text, dir, scene, err);
  free(text);
  return st;
}

void mr_scene_free(mr_scene *s) {
  if (!s) return;
  mr_model_free(s->model);
  free(s->q0);
  free(s->v0);
  free(s->bodies);
  for (int i = 0; i < s->nrobots; ++i) {
    free(s->robots[i].kp);
    free(s->robots[i].kd);
    free(s->robots[i].q_target);
    free(s->robots[i].sines);
    free(s->robots[i].torque);
    free(s->robots[i].controller_settings);
    free(s->robots[i].spring_k);
    free(s->robots[i].spring_ref);
    for (int k = 0; k < s->robots[i].npostures; ++k)
      free(s->robots[i].postures[k].q);
    free(s->robots[i].postures);
  }
  free(s->robots);
  free(s->materials);
  free(s->pairs);
  free(s->forces);
  free(s->constraints);
  free(s->actuators);
  free(s->coupled_limits);
  for (int k = 0; k < s->nkeyframes; ++k)
    free(s->keyframes[k].q), free(s->keyframes[k].v), free(s->keyframes[k].ctrl);
  free(s->keyframes);
  memset(s, 0, sizeof *s);
}
