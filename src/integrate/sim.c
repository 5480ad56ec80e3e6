/* The simulator (see sim.h): creation from a world, its storage, reset, the detection that
 * starts each step and the only growth of memory after creation, and the accessors. The step
 * itself, its stage list, is step.c. */
#include "moreau/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/linalg.h"
#include "integrate/sim_internal.h"

/* a solve left above this many times eps_abs is solved again without push-out */
#define RETRY_FACTOR 1e3
/* a model of at most this many kinematic trees whose worst case (one island of every block,
 * every pair coupled) fits in this many bytes reserves it at creation and never grows; any
 * other reserves its initial state's islands and grows when larger ones appear */
#define RESERVE_TREES 8
#define RESERVE_BYTES ((size_t)128 << 20)

/* ---- creation ---- */

double mr_sim_clock_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

/* the step's context from the world (sim_internal.h) */
static mr_step_ctx step_context(const mr_world *w, const mr_solver_info *solver) {
  mr_step_ctx c;
  memset(&c, 0, sizeof c);
  c.dt = w->timestep;
  c.inv_dt = 1.0 / w->timestep;
  c.assembly = mr_assembly_settings_default();
  c.assembly.dt = w->timestep;
  c.assembly.baumgarte = w->contact.baumgarte;
  c.assembly.restitution_threshold = w->contact.restitution_threshold;
  c.assembly.band = w->contact.band;
  c.assembly.rest_depth = w->contact.rest_depth;
  c.limit_margin = w->contact.limit_margin;
  c.speculative = w->contact.speculative;
  c.accel = mr_v3_norm(w->model->gravity);
  c.solver = solver;
  c.settings = w->settings;
  c.retry = w->contact.no_retry ? 0.0 : RETRY_FACTOR; /* 0: no retry (a fixed budget) */
  c.contact_cap = w->contact.max_contacts;
  return c;
}

/* the initial room for contacts: the world's cap, or 8 per geometry (at least 64) */
static int contact_bound(const mr_world *w) {
  if (w->contact.max_contacts > 0) return w->contact.max_contacts;
  int n = 8 * w->model->ngeoms;
  return n < 64 ? 64 : n;
}

/* the number of 1-dof joints whose position limits are constraints, and of dofs with friction */
static int limit_bound(const mr_world *w) {
  int n = mr_sim_friction_dofs(w->model);
  for (int r = 0; r < w->nrobots; ++r) {
    const mr_world_robot *rb = &w->robots[r];
    for (int b = rb->first_body; rb->joint_limits && b < rb->first_body + rb->nbodies; ++b)
      n += w->model->bodies[b].joint.nv == 1;
  }
  return n;
}

/* the world's initial controls: per-dof PD gains, commanded torques and targets over the model
 * from the robots' slices (targets elsewhere: the initial configuration); no user wrench */
void mr_sim_initial_controls(mr_sim *s) {
  const mr_world *w = s->w;
  mr_zero(s->kp, s->m->nv);
  mr_zero(s->kd, s->m->nv);
  mr_zero(s->tau_cmd, s->m->nv);
  mr_copy(s->q_target, w->q0, s->m->nq);
  for (int r = 0; r < w->nrobots; ++r) {
    const mr_world_robot *rb = &w->robots[r];
    for (int k = 0; rb->torque && k < rb->nv; ++k)
      s->tau_cmd[rb->idx_v + k] = rb->torque[k];
    if (rb->q_target) mr_copy(s->q_target + rb->idx_q, rb->q_target, rb->nq);
    if (!rb->pd) continue;
    for (int k = 0; k < rb->nv; ++k) {
      s->kp[rb->idx_v + k] = rb->kp[k];
      s->kd[rb->idx_v + k] = rb->kd[k];
    }
  }
  memset(s->wrench, 0, (size_t)s->m->nbodies * sizeof *s->wrench);
}

/* the robot a geometry belongs to (its name is "ROBOT/..."), or -1 */
static int geom_robot(const mr_world *w, const mr_geom *g) {
  for (int r = 0; r < w->nrobots; ++r) {
    size_t n = strlen(w->robots[r].name);
    if (!strncmp(g->name, w->robots[r].name, n) && g->name[n] == '/') return r;
  }
  return -1;
}

/* pairs of geometries of one robot whose self-collision is off; *out is malloc'ed */
static int self_pairs(const mr_world *w, mr_geom_pair **out) {
  const mr_model *m = w->model;
  int n = 0, cap = 0;
  *out = NULL;
  for (int a = 0; a < m->ngeoms; ++a) {
    int ra = geom_robot(w, &m->geoms[a]);
    if (ra < 0 || w->robots[ra].self_collision) continue;
    for (int b = a + 1; b < m->ngeoms; ++b) {
      if (geom_robot(w, &m->geoms[b]) != ra) continue;
      if (n == cap) {
        mr_geom_pair *p = realloc(*out, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *p);
        if (!p) return free(*out), *out = NULL, -1;
        *out = p;
      }
      (*out)[n++] = (mr_geom_pair){a, b};
    }
  }
  return n;
}

static mr_status create_collision(mr_sim *s, mr_error *err) {
  mr_collision_settings cs = mr_collision_settings_default();
  cs.margin = s->w->contact.margin;
  mr_geom_pair *exclude = NULL;
  int nexclude = self_pairs(s->w, &exclude);
  if (nexclude < 0) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  cs.exclude = exclude;
  cs.nexclude = nexclude;
  s->col = mr_collision_create(s->m, &cs, s->max_contacts, err); /* copies the list */
  free(exclude);
  return s->col ? MR_OK : (err ? err->status : MR_ERR_NOMEM);
}

/* *p resized to n elements of size z (the old part kept, the new zeroed); 0 or −1 */
static int resize(void *p, size_t old, size_t n, size_t z) {
  void **pp = p;
  unsigned char *q = realloc(*pp, (n ? n : 1) * z);
  if (!q) return -1;
  if (n > old) memset(q + old * z, 0, (n - old) * z);
  *pp = q;
  return 0;
}

/* the per-block arrays for max_contacts contacts (plus the limits and constraints), keeping
 * their contents: the storage that grows between steps */
static mr_status grow_blocks(mr_sim *s, int max_contacts, mr_error *err) {
  int rows =
      max_contacts + s->max_limits + s->w->ncoupled_limits + s->w->nconstraints + s->m->nmimics;
  size_t o = s->cg ? (size_t)s->max_rows : 0, n = (size_t)rows, d = sizeof(double);
  size_t oc = s->prev_contacts ? (size_t)s->max_contacts : 0;
  if (resize(&s->cg, o, n, sizeof *s->cg) || resize(&s->lambda, 3 * o, 3 * n, d) ||
      resize(&s->c, 3 * o, 3 * n, d) || resize(&s->prev_lambda, 3 * o, 3 * n, d) ||
      resize(&s->rebound, o, n, d) || resize(&s->prev_rebound, o, n, d) ||
      resize(&s->keys, o, n, sizeof *s->keys) || resize(&s->prev_keys, o, n, sizeof *s->keys) ||
      resize(&s->prev_index, o, n, sizeof(int)) ||
      resize(&s->prev_order, o + 1, n + 1, sizeof(int)) ||
      resize(&s->cons, o, n, sizeof *s->cons) || resize(&s->prev_cons, o, n, sizeof *s->cons) ||
      resize(&s->prev_contacts, oc, (size_t)max_contacts, sizeof *s->prev_contacts))
    return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for %d contacts",
                        max_contacts);
  s->max_contacts = max_contacts;
  s->max_rows = rows;
  return MR_OK;
}

static mr_status alloc_doubles(double **p, size_t n, mr_error *err) {
  *p = calloc(n ? n : 1, sizeof(double));
  return *p ? MR_OK : mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
}

static mr_status create_buffers(mr_sim *s, mr_error *err) {
  int nq = s->m->nq, nv = s->m->nv;
  double **vecs[] = {&s->q,       &s->q_next,  &s->v,        &s->v_next, &s->tau,     &s->lag,
                     &s->dv,      &s->kp,      &s->kd,       &s->q_err,  &s->kp_step, &s->kd_step,
                     &s->tau_cmd, &s->tau_act, &s->q_target, &s->accel,  &s->q_done,  &s->v_done};
  size_t sizes[] = {nq, nq, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nq, nv, nq, nv};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
    if (alloc_doubles(vecs[k], sizes[k], err)) return MR_ERR_NOMEM;
  int npts = s->w->nconstraints;
  s->anchor1 = calloc((size_t)(npts ? npts : 1), sizeof *s->anchor1);
  s->anchor2 = calloc((size_t)(npts ? npts : 1), sizeof *s->anchor2);
  s->wrench = calloc((size_t)s->m->nbodies, sizeof *s->wrench);
  s->contact_wrench = calloc((size_t)s->m->nbodies, sizeof *s->contact_wrench);
  if (!s->anchor1 || !s->anchor2 || !s->wrench || !s->contact_wrench)
    return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  if (grow_blocks(s, s->max_contacts, err)) return MR_ERR_NOMEM;
  s->islands = 1;
  s->contacts = mr_contact_stage_create(s->m, s->max_rows);
  if (!s->contacts) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  return MR_OK;
}

/* the model's kinematic trees: bodies with dofs whose ancestors have none */
static int count_trees(const mr_model *m) {
  int n = 0;
  for (int b = 1; b < m->nbodies; ++b) {
    int root = m->bodies[b].joint.nv > 0;
    for (int p = m->bodies[b].parent; root && p > 0; p = m->bodies[p].parent)
      root = m->bodies[p].joint.nv == 0;
    n += root;
  }
  return n;
}

void mr_sim_time_stages(mr_sim *s, int on) {
  s->time_stages = on != 0;
}

mr_status mr_sim_set_islands(mr_sim *s, int on, mr_error *err) {
  s->islands = on != 0;
  mr_contact_stage_invalidate(s->contacts);
  return MR_OK;
}

/* a world point in body b's frame */
static mr_vec3 world_to_body(const mr_data *d, int b, mr_vec3 p) {
  return b > 0 ? mr_m3_tmulv(&d->oMi[b].R, mr_v3_sub(p, d->oMi[b].p)) : p;
}

/* the point constraints' anchors; a world point is attached to both bodies at q0 */
static void constraint_anchors(mr_sim *s) {
  mr_forward_kinematics(s->m, s->d, s->q, s->v, NULL);
  for (int k = 0; k < s->w->nconstraints; ++k) {
    const mr_world_constraint *c = &s->w->constraints[k];
    s->anchor1[k] = c->world_point ? world_to_body(s->d, c->body1, c->point) : c->anchor1;
    s->anchor2[k] = c->world_point ? world_to_body(s->d, c->body2, c->point) : c->anchor2;
  }
}

/* room for the initial state's contacts and islands (memory proportional to the contacts
 * present); a detection that fails here is left to the first step to report. The state is left
 * as mr_sim_reset left it. */
static mr_status reserve_present(mr_sim *s, mr_error *err) {
  mr_error ignored = {MR_OK, ""};
  if (mr_sim_detect(s, NULL, &ignored)) return MR_OK;
  mr_copy(s->v_next, s->v, s->m->nv); /* the limits' speed bound reads it */
  mr_sim_gather_blocks(s);
  mr_status st = mr_sim_reserve_islands(s, err);
  mr_contact_stage_invalidate(s->contacts);
  s->nc = s->nk = 0;
  mr_zero(s->lambda, 3 * s->max_rows);
  s->last.penetration = 0.0;
  memset(&s->warnings, 0, sizeof s->warnings);
  return st;
}

/* the controllers the world declares, attached by the hooks of the layer that made it */
static mr_status attach_controllers(mr_sim *s, mr_error *err) {
  for (int r = 0; r < s->w->nrobots; ++r)
    if (s->w->robots[r].controller_attach) {
      mr_status st = s->w->robots[r].controller_attach(s, r, err);
      if (st) return st;
    }
  return MR_OK;
}

mr_sim *mr_sim_create(const mr_world *w, const char *solver, mr_error *err) {
  const char *name = solver ? solver : w->solver;
  const mr_solver_info *info = mr_solver_find(name);
  if (!info) {
    mr_error_set(err, MR_ERR_INVALID, "unknown solver '%s' ('moreau solve --list' names them)",
                 name);
    return NULL;
  }
  mr_sim *s = calloc(1, sizeof *s);
  if (!s) {
    mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
    return NULL;
  }
  s->w = w;
  s->m = w->model;
  int nf = mr_sim_friction_dofs(w->model);
  char what[64];
  snprintf(what, sizeof what, "the world has joint friction on %d dof%s", nf, nf == 1 ? "" : "s");
  if (nf > 0 && mr_solver_check_box(info, what, err)) {
    free(s);
    return NULL;
  }
  s->ctx = step_context(w, info);
  s->max_contacts = contact_bound(w);
  s->max_limits = limit_bound(w);
  s->d = mr_data_create(s->m);
  if (!s->d) mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  if (!s->d || create_buffers(s, err) || create_collision(s, err)) {
    mr_sim_free(s);
    return NULL;
  }
  /* a small model reserves its worst case once */
  if (count_trees(s->m) <= RESERVE_TREES)
    mr_contact_stage_reserve_whole(s->contacts, info, s->max_rows, s->m->nv, RESERVE_BYTES, NULL);
  mr_sim_reset(s);
  constraint_anchors(s);
  if (reserve_present(s, err) || attach_controllers(s, err)) {
    mr_sim_free(s);
    return NULL;
  }
  return s;
}

void mr_sim_free(mr_sim *s) {
  if (!s) return;
  mr_sim_set_controller(s, NULL);
  mr_collision_free(s->col);
  mr_contact_stage_free(s->contacts);
  mr_data_free(s->d);
  void *ps[] = {s->q,
                s->q_next,
                s->v,
                s->v_next,
                s->tau,
                s->lag,
                s->dv,
                s->kp,
                s->kd,
                s->q_err,
                s->kp_step,
                s->kd_step,
                s->tau_cmd,
                s->tau_act,
                s->q_target,
                s->accel,
                s->q_done,
                s->v_done,
                s->cg,
                s->lambda,
                s->c,
                s->keys,
                s->prev_keys,
                s->prev_index,
                s->prev_order,
                s->prev_lambda,
                s->prev_contacts,
                s->cons,
                s->prev_cons,
                s->anchor1,
                s->anchor2,
                s->wrench,
                s->contact_wrench};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k)
    free(ps[k]);
  free(s->rebound);
  free(s->prev_rebound);
  mr_world_free(s->owned);
  free(s);
}

void mr_sim_adopt_world(mr_sim *s, mr_world *w) {
  s->owned = w;
}

void mr_sim_reset(mr_sim *s) {
  mr_copy(s->q, s->w->q0, s->m->nq);
  mr_copy(s->v, s->w->v0, s->m->nv);
  s->t = 0.0;
  s->steps = 0;
  s->nc = s->prev_nc = s->nk = s->prev_nk = 0;
  mr_zero(s->tau_act, s->m->nv);
  mr_contact_stage_invalidate(s->contacts);
  memset(&s->last, 0, sizeof s->last);
  s->energy_pending = 0;
  memset(&s->warnings, 0, sizeof s->warnings);
  memset(s->contact_wrench, 0, (size_t)s->m->nbodies * sizeof *s->contact_wrench);
  mr_sim_initial_controls(s);
  if (s->controller.reset) s->controller.reset(s, s->controller.data);
}

void mr_sim_set_controller(mr_sim *s, const mr_controller *c) {
  if (c && c->data == s->controller.data && c->data) { /* the same data: nothing to free */
    s->controller = *c;
    return;
  }
  if (s->controller.free) s->controller.free(s->controller.data);
  s->controller = c && c->control ? *c : (mr_controller){0};
}

const mr_controller *mr_sim_get_controller(const mr_sim *s) {
  return &s->controller;
}

/* ---- the step's boundary: detection, and storage that grows ---- */

/* room for n contacts, half again: the collision module's buffer and the per-block arrays */
static mr_status grow_contacts(mr_sim *s, int n, mr_error *err) {
  int cap = n + n / 2;
  mr_status st = mr_collision_reserve(s->col, cap, err);
  if (!st) st = grow_blocks(s, cap, err);
  if (!st) s->warnings.storage_grown++;
  return st;
}

mr_status mr_sim_detect(mr_sim *s, double *t_kinematics, mr_error *err) {
  mr_forward_kinematics(s->m, s->d, s->q, s->v, NULL);
  if (t_kinematics) *t_kinematics = mr_sim_clock_us();
  if (s->ctx.speculative) mr_collision_set_motion(s->col, s->d->vb, s->ctx.dt, s->ctx.accel);
  mr_status st = mr_collision_detect(s->col, s->d->oMi, err);
  mr_collision_stats cs = mr_collision_get_stats(s->col);
  s->warnings.collision_failures += cs.ccd_failures;
  if (st != MR_ERR_NOMEM || cs.overflow == 0) return st;
  /* more contacts than the storage holds: grown, unless the world caps it */
  int n = cs.ncontacts + cs.overflow;
  if (s->ctx.contact_cap > 0)
    return mr_error_set(err, MR_ERR_NOMEM,
                        "%d contacts exceed contact.max_contacts = %d (leave max_contacts out, "
                        "or 0, to let the storage grow)",
                        n, s->ctx.contact_cap);
  if ((st = grow_contacts(s, n, err))) return st;
  st = mr_collision_detect(s->col, s->d->oMi, err);
  s->warnings.collision_failures += mr_collision_get_stats(s->col).ccd_failures;
  return st;
}

mr_status mr_sim_reserve_islands(mr_sim *s, mr_error *err) {
  int grew = 0;
  mr_contact_input in = {
      .m = s->m, .solver = s->ctx.solver, .cg = s->cg, .n = s->nc + s->nk, .one = !s->islands};
  mr_status st = mr_contact_stage_reserve(s->contacts, &in, &grew, err);
  if (!st && grew) s->warnings.storage_grown++;
  return st;
}

mr_status mr_sim_collide(mr_sim *s, const mr_contact **contacts, int *ncontacts, mr_error *err) {
  mr_status st = mr_sim_detect(s, NULL, err);
  *contacts = mr_collision_contacts(s->col);
  *ncontacts = st ? 0 : mr_collision_ncontacts(s->col);
  return st;
}

/* ---- accessors ---- */

const double *mr_sim_q(const mr_sim *s) {
  return s->q;
}
const double *mr_sim_v(const mr_sim *s) {
  return s->v;
}
double mr_sim_time(const mr_sim *s) {
  return s->t;
}
long mr_sim_steps(const mr_sim *s) {
  return s->steps;
}
const mr_step_stats *mr_sim_last(const mr_sim *s) {
  /* the energies of the state the step ended in, on the first read after the step: two
   * kinematics passes that a loop which never reads them does not pay. A cache filled through
   * a const handle (the simulator itself is never a const object) */
  if (s->energy_pending) {
    mr_sim *w = (mr_sim *)s;
    w->last.kinetic = mr_kinetic_energy(s->m, s->d, s->q_done, s->v_done);
    w->last.potential = mr_potential_energy(s->m, s->d, s->q_done);
    w->energy_pending = 0;
  }
  return &s->last;
}
const mr_sim_warnings *mr_sim_get_warnings(const mr_sim *s) {
  return &s->warnings;
}
const mr_model *mr_sim_model(const mr_sim *s) {
  return s->m;
}
const mr_world *mr_sim_world(const mr_sim *s) {
  return s->w;
}
const mr_contact_problem *mr_sim_problem(const mr_sim *s) {
  return mr_contact_stage_problem(s->contacts, s->prev_nc, s->ctx.dt);
}

int mr_sim_contacts(const mr_sim *s, const mr_contact **contacts, const double **lambda) {
  if (contacts) *contacts = s->prev_contacts;
  if (lambda) *lambda = s->prev_lambda;
  return s->prev_nc - s->prev_nk;
}

int mr_sim_constraints(const mr_sim *s, const mr_sim_constraint **constraints,
                       const double **lambda) {
  if (constraints) *constraints = s->prev_cons;
  if (lambda) *lambda = s->prev_lambda + 3 * (s->prev_nc - s->prev_nk);
  return s->prev_nk;
}

const double *mr_sim_torque(const mr_sim *s) {
  return s->tau_act;
}

double mr_sim_energy(mr_sim *s) {
  return mr_kinetic_energy(s->m, s->d, s->q, s->v) + mr_potential_energy(s->m, s->d, s->q);
}
