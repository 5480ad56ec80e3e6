/* The time step (see sim.h): the stages of DESIGN.md §1 in order, each in its own function,
 * over memory allocated once in mr_sim_create. */
#include "moreau/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/consistency.h"
#include "core/linalg.h"
#include "integrate/free_flyer.h"
#include "integrate/sim_internal.h"

/* a velocity above this (m/s or rad/s) is taken as divergence */
#define DIVERGENCE_VELOCITY 1e4

/* ---- creation ---- */

static mr_status alloc_doubles(double **p, size_t n, mr_error *err) {
  *p = calloc(n ? n : 1, sizeof(double));
  return *p ? MR_OK : mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
}

/* the bound on simultaneous contacts: the world's, or 8 per geometry (at least 64) */
static int contact_bound(const mr_world *w) {
  if (w->contact.max_contacts > 0) return w->contact.max_contacts;
  int n = 8 * w->model->ngeoms;
  return n < 64 ? 64 : n;
}

/* the number of 1-dof joints whose position limits are constraints */
static int limit_bound(const mr_world *w) {
  int n = 0;
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

static mr_status create_buffers(mr_sim *s, mr_error *err) {
  int nq = s->m->nq, nv = s->m->nv, n3 = 3 * s->max_rows, nk = s->max_rows - s->max_contacts;
  double **vecs[] = {&s->q,       &s->q_next,  &s->v,       &s->v_next, &s->tau,
                     &s->rhs,     &s->dv,      &s->kp,      &s->kd,     &s->q_err,
                     &s->kp_step, &s->kd_step, &s->tau_cmd, &s->tau_act, &s->q_target};
  size_t sizes[] = {nq, nq, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nv, nq};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k)
    if (alloc_doubles(vecs[k], sizes[k], err)) return MR_ERR_NOMEM;
  if (alloc_doubles(&s->lambda, n3, err) || alloc_doubles(&s->c, n3, err) ||
      alloc_doubles(&s->lambda_alt, n3, err) || alloc_doubles(&s->c_alt, n3, err) ||
      alloc_doubles(&s->g_first, n3, err) ||
      alloc_doubles(&s->prev_lambda, n3, err) || alloc_doubles(&s->state.y, n3 + nv, err))
    return MR_ERR_NOMEM;
  s->state.cap = n3 + nv;
  s->cg = calloc((size_t)s->max_rows, sizeof *s->cg);
  s->keys = calloc((size_t)s->max_rows, sizeof *s->keys);
  s->prev_keys = calloc((size_t)s->max_rows, sizeof *s->prev_keys);
  s->prev_order = calloc((size_t)s->max_rows + 1, sizeof *s->prev_order);
  s->cons = calloc((size_t)(nk ? nk : 1), sizeof *s->cons);
  s->prev_cons = calloc((size_t)(nk ? nk : 1), sizeof *s->prev_cons);
  int npts = s->w->nconstraints;
  s->anchor1 = calloc((size_t)(npts ? npts : 1), sizeof *s->anchor1);
  s->anchor2 = calloc((size_t)(npts ? npts : 1), sizeof *s->anchor2);
  s->wrench = calloc((size_t)s->m->nbodies, sizeof *s->wrench);
  s->contact_wrench = calloc((size_t)s->m->nbodies, sizeof *s->contact_wrench);
  if (!s->cg || !s->keys || !s->prev_keys || !s->prev_order || !s->cons || !s->prev_cons ||
      !s->anchor1 || !s->anchor2 || !s->wrench || !s->contact_wrench)
    return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  /* sized for a few blocks: the islands grow it to the largest island met */
  if (mr_arena_init(&s->work, mr_solver_work_size(8, 0)))
    return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for the solver workspace");
  s->islands = 1;
  s->isl = mr_islands_create(s->m, s->max_rows);
  if (!s->isl) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  return mr_islands_reserve(s, err);
}

mr_status mr_sim_set_islands(mr_sim *s, int on, mr_error *err) {
  s->islands = on != 0;
  if (on || s->as.J) return MR_OK;
  /* the whole problem's buffers, for every block the simulator can meet */
  size_t work = mr_solver_work_size(s->max_rows, 0);
  if (work > s->work.size) {
    mr_arena_destroy(&s->work);
    if (mr_arena_init(&s->work, work))
      return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for the solver workspace");
  }
  return mr_contact_assembly_init(&s->as, s->max_rows, s->m->nv, err);
}

/* a point of body b's frame in the world (body 0: the world) */
static mr_vec3 body_to_world(const mr_data *d, int b, mr_vec3 p) {
  return b > 0 ? mr_v3_add(d->oMi[b].p, mr_m3_mulv(&d->oMi[b].R, p)) : p;
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

static mr_status reserve_present(mr_sim *s, mr_error *err);

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
  s->solver = info;
  s->settings = w->settings;
  s->max_contacts = contact_bound(w);
  s->max_limits = limit_bound(w);
  s->max_rows = s->max_contacts + s->max_limits + w->ncoupled_limits + w->nconstraints +
                s->m->nmimics;
  s->as_settings = mr_assembly_settings_default();
  s->as_settings.dt = w->timestep;
  s->as_settings.baumgarte = w->contact.baumgarte;
  s->as_settings.restitution_threshold = w->contact.restitution_threshold;
  s->d = mr_data_create(s->m);
  if (!s->d) mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory");
  if (!s->d || create_buffers(s, err) || create_collision(s, err) ||
      mr_sim_create_controllers(s, err)) {
    mr_sim_free(s);
    return NULL;
  }
  mr_sim_reset(s);
  constraint_anchors(s);
  if (reserve_present(s, err)) {
    mr_sim_free(s);
    return NULL;
  }
  return s;
}

void mr_sim_free(mr_sim *s) {
  if (!s) return;
  mr_sim_free_controllers(s);
  mr_collision_free(s->col);
  mr_contact_assembly_free(&s->as);
  mr_islands_free(s->isl);
  mr_arena_destroy(&s->work);
  mr_data_free(s->d);
  double *vecs[] = {s->q,       s->q_next,  s->v,       s->v_next,  s->tau,         s->rhs,
                    s->dv,      s->kp,      s->kd,      s->q_err,   s->lambda,      s->c,
                    s->kp_step, s->kd_step, s->tau_cmd, s->tau_act, s->prev_lambda, s->state.y,
                    s->lambda_alt, s->c_alt,    s->g_first};
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k)
    free(vecs[k]);
  free(s->cg);
  free(s->keys);
  free(s->prev_keys);
  free(s->prev_order);
  free(s->cons);
  free(s->prev_cons);
  free(s->anchor1);
  free(s->anchor2);
  free(s->wrench);
  free(s->contact_wrench);
  free(s->q_target);
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
  s->state.valid = 0;
  s->state.rho = 0.0;
  mr_islands_invalidate(s->isl);
  memset(&s->last, 0, sizeof s->last);
  memset(&s->warnings, 0, sizeof s->warnings);
  memset(s->contact_wrench, 0, (size_t)s->m->nbodies * sizeof *s->contact_wrench);
  mr_sim_initial_controls(s);
  mr_sim_reset_controllers(s);
}

/* ---- the stages of a step ---- */

/* monotonic clock in µs, for the stage times of mr_step_timing */
double mr_sim_clock_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

/* a world force and torque at body b's origin, added to d->f_ext in the body frame */
static void add_world_wrench(mr_data *d, int b, mr_vec3 f, mr_vec3 tq) {
  const mr_mat3 *R = &d->oMi[b].R;
  mr_force fb = {mr_m3_tmulv(R, f), mr_m3_tmulv(R, tq)};
  d->f_ext[b] = mr_force_add(d->f_ext[b], fb);
}

/* external forces at time t — the world's forces and the user's wrenches — as body-frame
 * spatial forces in d->f_ext */
static void apply_forces(mr_sim *s) {
  const mr_world *w = s->w;
  for (int i = 0; i < s->m->nbodies; ++i)
    s->d->f_ext[i] = mr_force_zero();
  for (int k = 0; k < w->nforces; ++k) {
    mr_vec3 f, tq;
    mr_world_force_at(&w->forces[k], s->t, &f, &tq);
    add_world_wrench(s->d, w->forces[k].body, f, tq);
  }
  for (int b = 1; b < s->m->nbodies; ++b)
    add_world_wrench(s->d, b, s->wrench[b].f, s->wrench[b].n);
}

/* q_t ⊖ q on the robots' 1-dof joints (the only ones with PD gains), q_t the simulator's
 * targets plus the world's sine offsets */
static void posture_error(mr_sim *s) {
  mr_zero(s->q_err, s->m->nv);
  for (int r = 0; r < s->w->nrobots; ++r) {
    const mr_world_robot *rb = &s->w->robots[r];
    for (int b = rb->first_body; b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &s->m->bodies[b].joint;
      if (j->nq != 1) continue;
      s->q_err[j->idx_v] = s->q_target[j->idx_q] - s->q[j->idx_q];
    }
    /* time-varying targets, taken at the end of the step (the implicit PD acts on q⁺) */
    double t = s->t + s->w->timestep;
    for (int k = 0; k < rb->nsines; ++k) {
      const mr_world_sine *sn = &rb->sines[k];
      s->q_err[rb->idx_v + sn->idx_v] +=
          sn->amplitude * sin(2.0 * M_PI * sn->frequency * t + sn->phase);
    }
  }
}

/* effort limits: the torque of dof k is τ_cmd + k_p (q_t − q⁺) − k_d v⁺ (PD implicit). Its
 * explicit estimate at the start of the step, τ_cmd + k_p e − k_d v, decides: within the limit
 * the dof keeps its implicit gains; beyond it the dof is saturated for this step — its torque is
 * the estimate clamped to ±effort, explicit, and its gains leave M̃ (k_p = k_d = 0 this step) */
static void actuation(mr_sim *s) {
  const mr_model *m = s->m;
  for (int k = 0; k < m->nv; ++k) {
    double est = s->tau_cmd[k] + s->kp[k] * s->q_err[k] - s->kd[k] * s->v[k];
    double e = m->effort_limit[k];
    int saturated = fabs(est) > e;
    s->tau[k] = saturated ? copysign(e, est) : s->tau_cmd[k];
    s->kp_step[k] = saturated ? 0.0 : s->kp[k];
    s->kd_step[k] = saturated ? 0.0 : s->kd[k];
  }
}

/* M̃ = M + Δt diag(k_d + damping) + Δt² diag(k_p), factored; rhs = τ + k_p e − b + Σ Jᵀ f_ext
 * − M a, a the free joints' change of coordinates (free_flyer.c: their centre of mass moves
 * in the world frame, without the ω × v term of the body-frame velocity) */
static mr_status dynamics(mr_sim *s, mr_error *err) {
  const mr_model *m = s->m;
  mr_data *d = s->d;
  double dt = s->w->timestep;
  int nv = m->nv;
  posture_error(s);
  actuation(s);
  mr_crba(m, d, s->q);
  for (int k = 0; k < nv; ++k)
    d->M[d->row_at[k]] += dt * (s->kd_step[k] + m->damping[k]) + dt * dt * s->kp_step[k];
  mr_status st = mr_ldlt_factor(m, d, err);
  if (st) return st;
  mr_free_flyer_bias(m, d, s->v, s->dv);
  const double *b = mr_rnea(m, d, s->q, s->v, s->dv); /* b(q, v) − Σ Jᵀ f_ext + M a */
  for (int k = 0; k < nv; ++k)
    s->rhs[k] = s->tau[k] + s->kp_step[k] * s->q_err[k] - b[k];
  return MR_OK;
}

/* the actuation torque the step applied: τ + k_p (e − Δt v⁺) − k_d v⁺ */
static void applied_torque(mr_sim *s) {
  double dt = s->w->timestep;
  for (int k = 0; k < s->m->nv; ++k)
    s->tau_act[k] = s->tau[k] + s->kp_step[k] * (s->q_err[k] - dt * s->v_next[k]) -
                    s->kd_step[k] * s->v_next[k];
}

/* the free velocity: M̃ v_f = M v + Δt rhs with M = M̃ − Δt (k_d + damping + Δt k_p), i.e.
 * v_f = v + Δt M̃⁻¹ (rhs − (k_d + damping + Δt k_p) v); then the free bodies' gyroscopic
 * impulse at the midpoint, whose rotation lag rhs keeps for the integration (free_flyer.c) */
static void free_velocity(mr_sim *s) {
  const mr_model *m = s->m;
  double dt = s->w->timestep;
  for (int k = 0; k < m->nv; ++k)
    s->dv[k] = s->rhs[k] - (s->kd_step[k] + m->damping[k] + dt * s->kp_step[k]) * s->v[k];
  mr_ldlt_solve(m, s->d, s->dv);
  for (int k = 0; k < m->nv; ++k)
    s->v_next[k] = s->v[k] + dt * s->dv[k];
  mr_free_flyer_gyroscopic(m, s->d, s->v, dt, s->v_next, s->dv, s->rhs);
}

/* index of key in the previous step's contacts (the first of equal keys), or -1: binary search
 * in prev_order, last step's blocks sorted by (key, index) */
static int find_previous(const mr_sim *s, uint64_t key) {
  int lo = 0, hi = s->prev_nc;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (s->prev_keys[s->prev_order[mid]] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < s->prev_nc && s->prev_keys[s->prev_order[lo]] == key ? s->prev_order[lo] : -1;
}

int mr_sim_previous_block(const mr_sim *s, uint64_t key) {
  return find_previous(s, key);
}

/* whether block a precedes block b by (key, index) */
static int order_before(const uint64_t *keys, int a, int b) {
  return keys[a] < keys[b] || (keys[a] == keys[b] && a < b);
}

/* o[0..n) ← 0..n−1 sorted by (key, index): heapsort, in place, O(n log n) */
static void sort_by_key(const uint64_t *keys, int *o, int n) {
  for (int i = 0; i < n; ++i)
    o[i] = i;
  for (int end = n, start = n / 2; end > 1;) {
    if (start > 0)
      --start; /* heapify */
    else {
      --end; /* the largest to the end */
      int t = o[end];
      o[end] = o[0], o[0] = t;
    }
    for (int r = start, c; (c = 2 * r + 1) < end; r = c) {
      if (c + 1 < end && order_before(keys, o[c], o[c + 1])) ++c;
      if (!order_before(keys, o[r], o[c])) break;
      int t = o[r];
      o[r] = o[c], o[c] = t;
    }
  }
}

/* the collision contacts as assembly input; warm start and restitution by identity */
static void gather_contacts(mr_sim *s, const mr_contact *cs, int nc) {
  double pen = 0.0;
  for (int i = 0; i < nc; ++i) {
    const mr_contact *c = &cs[i];
    mr_contact_geometry *g = &s->cg[i];
    g->type = MR_ROWS_CONTACT;
    g->body1 = c->body[0];
    g->body2 = c->body[1];
    g->point = c->point;
    g->frame = c->frame;
    g->phi = c->phi;
    g->mu = c->mu;
    g->restitution = c->restitution;
    g->compliance = c->compliance;
    g->tangential_compliance = c->tangential_compliance;
    if (s->w->npairs > 0) {
      mr_world_pair_params(s->w, c->geom[0], c->geom[1], &g->mu, &g->restitution,
                           &g->compliance);
      mr_world_pair_tangential_compliance(s->w, c->geom[0], c->geom[1],
                                          &g->tangential_compliance);
    }
    /* an impact: the contact carried no normal force last step (absent, or present within the
     * margin but still open), so this step is the first that can close it */
    int prev = find_previous(s, c->key);
    g->is_new = prev < 0 || !(s->prev_lambda[3 * prev + 2] > 0.0);
    for (int k = 0; k < 3; ++k)
      s->lambda[3 * i + k] = prev < 0 ? 0.0 : s->prev_lambda[3 * prev + k];
    s->keys[i] = c->key;
    pen = fmax(pen, -c->phi);
  }
  s->last.penetration = pen;
}

/* append block n: a constraint with key, warm started from last step's block of that key */
static mr_contact_geometry *add_block(mr_sim *s, int n, uint64_t key, mr_sim_constraint info) {
  mr_contact_geometry *g = &s->cg[n];
  memset(g, 0, sizeof *g);
  g->frame = mr_m3_identity();
  int prev = find_previous(s, key);
  for (int k = 0; k < 3; ++k)
    s->lambda[3 * n + k] = prev < 0 ? 0.0 : s->prev_lambda[3 * prev + k];
  s->keys[n] = key;
  s->cons[n - s->nc] = info;
  return g;
}

/* joint limits: a 1-dof joint of a robot with joint_limits, closer to its nearer bound than the
 * margin plus 2 Δt |v| (so that a bound cannot be crossed within a step unseen), becomes a
 * frictionless contact on its velocity with gap Φ = the distance to the bound */
static int gather_limits(mr_sim *s, int n) {
  const mr_model *m = s->m;
  double dt = s->w->timestep, margin = s->w->contact.limit_margin;
  for (int r = 0; r < s->w->nrobots; ++r) {
    const mr_world_robot *rb = &s->w->robots[r];
    for (int b = rb->first_body; rb->joint_limits && b < rb->first_body + rb->nbodies; ++b) {
      const mr_joint *j = &m->bodies[b].joint;
      /* a mimic follower's position is its leader's image: the leader's limits bound it, and a
       * coupling plus a limit on each side would over-constrain the pair */
      if (j->nv != 1 || j->nq != 1 || mr_model_is_mimic_follower(m, b)) continue;
      double q = s->q[j->idx_q], lo = m->lower[j->idx_q], hi = m->upper[j->idx_q];
      double vmax = fmax(fabs(s->v[j->idx_v]), fabs(s->v_next[j->idx_v]));
      int upper = hi - q < q - lo;
      double gap = upper ? hi - q : q - lo;
      if (!(gap < margin + 2.0 * dt * vmax)) continue; /* also skips unlimited joints */
      uint64_t key = (UINT64_C(1) << 63) | ((uint64_t)j->idx_v << 1) | (uint64_t)upper;
      mr_sim_constraint info = {MR_SIM_LIMIT, j->idx_v, upper};
      mr_contact_geometry *g = add_block(s, n++, key, info);
      g->type = MR_ROWS_LIMIT;
      g->dof = j->idx_v;
      g->sign = upper ? -1.0 : 1.0;
      g->phi = gap;
    }
  }
  return n;
}

/* the world's limits on two coupled joints, as joint limits on q_dof − ratio q_dof2 */
static int gather_coupled_limits(mr_sim *s, int n) {
  double dt = s->w->timestep, margin = s->w->contact.limit_margin;
  for (int k = 0; k < s->w->ncoupled_limits; ++k) {
    const mr_world_coupled_limit *l = &s->w->coupled_limits[k];
    if (!s->w->robots[l->robot].joint_limits) continue;
    int c1 = mr_world_dof_coordinate(s->w, l->dof), c2 = mr_world_dof_coordinate(s->w, l->dof2);
    double u = s->q[c1] - l->ratio * s->q[c2];
    double vmax = fmax(fabs(s->v[l->dof] - l->ratio * s->v[l->dof2]),
                       fabs(s->v_next[l->dof] - l->ratio * s->v_next[l->dof2]));
    int upper = l->upper - u < u - l->lower;
    double gap = upper ? l->upper - u : u - l->lower;
    if (!(gap < margin + 2.0 * dt * vmax)) continue;
    uint64_t key = (UINT64_C(1) << 60) | ((uint64_t)k << 1) | (uint64_t)upper;
    mr_sim_constraint info = {MR_SIM_COUPLED_LIMIT, k, upper};
    mr_contact_geometry *g = add_block(s, n++, key, info);
    g->type = MR_ROWS_LIMIT;
    g->dof = l->dof, g->dof2 = l->dof2, g->ratio = l->ratio;
    g->sign = upper ? -1.0 : 1.0;
    g->phi = gap;
  }
  return n;
}

/* the world's point constraints: anchors in the world at the current kinematics */
static int gather_points(mr_sim *s, int n) {
  for (int k = 0; k < s->w->nconstraints; ++k) {
    const mr_world_constraint *c = &s->w->constraints[k];
    mr_sim_constraint info = {MR_SIM_POINT, k, 0};
    mr_contact_geometry *g = add_block(s, n++, (UINT64_C(1) << 62) | (uint64_t)k, info);
    g->type = MR_ROWS_POINT;
    g->body1 = c->body1;
    g->body2 = c->body2;
    g->point = body_to_world(s->d, c->body1, s->anchor1[k]);
    g->point2 = body_to_world(s->d, c->body2, s->anchor2[k]);
    g->baumgarte = c->baumgarte;
  }
  return n;
}

/* the model's mimic joints: q_f = r q_l + o held by a bilateral row, its drift removed at once */
static int gather_mimics(mr_sim *s, int n) {
  const mr_model *m = s->m;
  for (int k = 0; k < m->nmimics; ++k) {
    const mr_mimic *c = &m->mimics[k];
    const mr_joint *f = &m->bodies[c->follower].joint, *l = &m->bodies[c->leader].joint;
    mr_sim_constraint info = {MR_SIM_MIMIC, k, 0};
    mr_contact_geometry *g = add_block(s, n++, (UINT64_C(1) << 61) | (uint64_t)k, info);
    g->type = MR_ROWS_MIMIC;
    g->dof = f->idx_v, g->dof2 = l->idx_v, g->ratio = c->multiplier;
    g->phi = s->q[f->idx_q] - c->multiplier * s->q[l->idx_q] - c->offset;
    g->baumgarte = 1.0;
  }
  return n;
}

/* 1 when this step's contacts are last step's, in the same order */
static int same_contacts(const mr_sim *s) {
  if (s->nc + s->nk != s->prev_nc) return 0;
  for (int i = 0; i < s->nc + s->nk; ++i)
    if (s->keys[i] != s->prev_keys[i]) return 0;
  return 1;
}

void mr_sim_consistent(mr_sim *s, mr_contact_assembly *a, const double *vf, double band) {
  double t = mr_sim_clock_us();
  mr_contact_consistent(a, vf, band, &s->work);
  s->t_consistency += mr_sim_clock_us() - t;
}

mr_status mr_sim_solve(mr_sim *s, const mr_contact_problem *p, mr_solver_state *state,
                       double *lambda, double *c, mr_solver_stats *stats, mr_error *err) {
  double t = mr_sim_clock_us();
  mr_arena_reset(&s->work, 0);
  mr_status st = mr_solve(s->solver->name, p, &s->settings, state, &s->work, lambda, c, stats, err);
  s->t_solver += mr_sim_clock_us() - t;
  return st;
}

/* A failed step (criterion above 10³ times its tolerance) solved again without the push-out of
 * penetrations (band and rest depth 0: penetrating contacts and limits only stop approaching).
 * Pushing out is a rigid motion only when the bodies can make it: a kinematic loop locked by other
 * rows (an arm on its world root whose hand is on the ground, its shoulder on a limit) makes the
 * problem infeasible and the forces grow without bound, while v_N ≥ 0 is always feasible (v = 0
 * meets it). The second solution is kept when its criterion is lower. */
static mr_status solve_without_push_out(mr_sim *s, mr_solver_stats *stats, mr_error *err) {
  mr_assembly_settings as = s->as_settings;
  if (as.band == 0.0 && as.rest_depth == 0.0) return MR_OK;
  as.band = as.rest_depth = 0.0;
  int n = 3 * (s->nc + s->nk);
  mr_contact_assembly *a = &s->as;
  mr_copy(s->g_first, a->g, n); /* only g depends on the band: J, M⁻¹Jᵀ and G stay */
  mr_status st = mr_contact_assemble(s->m, s->d, s->cg, s->nc + s->nk, s->v, s->v_next, &as, a,
                                     err);
  if (st) return st;
  mr_sim_consistent(s, a, s->v_next, as.band);
  mr_solver_stats st2;
  mr_zero(s->lambda_alt, n);
  s->state.valid = 0;
  st = mr_sim_solve(s, &a->problem, &s->state, s->lambda_alt, s->c_alt, &st2, err);
  if (st) return st;
  if (!(st2.eps_abs < stats->eps_abs)) {
    mr_copy(a->g, s->g_first, n); /* keep the first solution and its problem */
    return MR_OK;
  }
  mr_copy(s->lambda, s->lambda_alt, n);
  mr_copy(s->c, s->c_alt, n);
  st2.iterations += stats->iterations;
  *stats = st2;
  return MR_OK;
}

/* the step's solver statistics and the warnings they raise */
static void record_solve(mr_sim *s, const mr_solver_stats *stats) {
  s->last.iterations = stats->iterations;
  s->last.converged = stats->converged;
  s->last.eps_abs = stats->eps_abs;
  s->last.solve_us = stats->time_us;
  if (!stats->converged) s->warnings.not_converged++;
  if (stats->eps_abs > s->settings.eps_abs) s->warnings.ncp_not_converged++;
}

/* the step's problem solved island by island (islands.c), which times its consistent laws,
 * solves and velocity changes into the step's stages */
static mr_status solve_islands(mr_sim *s, mr_error *err) {
  mr_solver_stats stats;
  if (!s->solver->solve) return MR_ERR_UNSUPPORTED;
  mr_status st = mr_islands_solve(s, same_contacts(s), &stats, err);
  s->t_solved = mr_sim_clock_us();
  if (st) return st;
  record_solve(s, &stats);
  s->last.islands = mr_islands_count(s->isl);
  s->last.iterations_sum = mr_islands_iterations(s->isl);
  mr_axpy(s->v_next, 1.0, s->dv, s->m->nv);
  return MR_OK;
}

static mr_status solve_contacts(mr_sim *s, mr_error *err) {
  s->last.iterations = 0;
  s->last.converged = 1;
  s->last.eps_abs = 0.0;
  s->last.solve_us = 0.0;
  s->last.islands = 0;
  s->last.iterations_sum = 0;
  s->t_consistency = s->t_solver = s->t_impulse = 0.0;
  s->t_solved = mr_sim_clock_us();
  s->islands_used = s->islands;
  if (s->nc + s->nk == 0) return MR_OK;
  if (s->islands) return solve_islands(s, err);
  mr_status st = mr_contact_assemble(s->m, s->d, s->cg, s->nc + s->nk, s->v, s->v_next,
                                     &s->as_settings, &s->as, err);
  if (st) return st;
  mr_sim_consistent(s, &s->as, s->v_next, s->as_settings.band);
  if (!same_contacts(s)) s->state.valid = 0;
  mr_solver_stats stats;
  st = s->solver->solve ? mr_sim_solve(s, &s->as.problem, &s->state, s->lambda, s->c, &stats, err)
                        : MR_ERR_UNSUPPORTED;
  /* a solve that failed by far (not one that stopped just short of its tolerance) */
  if (!st && !stats.converged && stats.eps_abs > 1e3 * s->settings.eps_abs)
    st = solve_without_push_out(s, &stats, err);
  s->t_solved = mr_sim_clock_us();
  if (st) return st;
  record_solve(s, &stats);
  s->last.iterations_sum = stats.iterations;
  mr_contact_impulse_velocity(&s->as, s->lambda, s->w->timestep, s->dv);
  mr_axpy(s->v_next, 1.0, s->dv, s->m->nv);
  return MR_OK;
}

/* the first non-finite or runaway coordinate of the candidate state, as an error */
static mr_status check_state(const mr_sim *s, mr_error *err) {
  for (int k = 0; k < s->m->nv; ++k)
    if (!isfinite(s->v_next[k]) || fabs(s->v_next[k]) > DIVERGENCE_VELOCITY)
      return mr_error_set(err, MR_ERR_NUMERIC,
                          "diverged at step %ld (t = %.6g s): v[%d] = %g (dof of body '%s')",
                          s->steps + 1, s->t + s->w->timestep, k, s->v_next[k],
                          s->m->bodies[s->m->dof_body[k]].name);
  for (int k = 0; k < s->m->nq; ++k)
    if (!isfinite(s->q_next[k]))
      return mr_error_set(err, MR_ERR_NUMERIC, "diverged at step %ld (t = %.6g s): q[%d] = %g",
                          s->steps + 1, s->t + s->w->timestep, k, s->q_next[k]);
  return MR_OK;
}

/* keep this step's contacts, constraints and forces for the next warm start */
static void remember_contacts(mr_sim *s) {
  int n = s->nc + s->nk;
  memcpy(s->prev_keys, s->keys, (size_t)n * sizeof *s->keys);
  sort_by_key(s->prev_keys, s->prev_order, n);
  memcpy(s->prev_cons, s->cons, (size_t)s->nk * sizeof *s->cons);
  mr_copy(s->prev_lambda, s->lambda, 3 * n);
  s->prev_nc = n;
  s->prev_nk = s->nk;
}

/* the contact wrench on each body: world-frame forces f = C λ of its contacts (−f on the second
 * body) and their moments about the body origin, at the step's start kinematics */
static void contact_wrenches(mr_sim *s) {
  const mr_contact *cs = mr_collision_contacts(s->col);
  memset(s->contact_wrench, 0, (size_t)s->m->nbodies * sizeof *s->contact_wrench);
  for (int i = 0; i < s->nc; ++i) {
    const double *l = s->lambda + 3 * i;
    mr_vec3 f = mr_m3_mulv(&cs[i].frame, mr_v3(l[0], l[1], l[2]));
    for (int k = 0; k < 2; ++k) {
      int b = cs[i].body[k];
      mr_vec3 fk = k ? mr_v3_scale(f, -1.0) : f;
      mr_vec3 r = mr_v3_sub(cs[i].point, s->d->oMi[b].p);
      mr_force *w = &s->contact_wrench[b];
      w->f = mr_v3_add(w->f, fk);
      w->n = mr_v3_add(w->n, mr_v3_cross(r, fk));
    }
  }
}

/* kinematics and collision at the current state; *t_kinematics (if given) is the clock after
 * the kinematics */
static mr_status detect(mr_sim *s, double *t_kinematics, mr_error *err) {
  mr_forward_kinematics(s->m, s->d, s->q, s->v, NULL);
  if (t_kinematics) *t_kinematics = mr_sim_clock_us();
  /* more contacts than the bound is an error, never a truncation */
  return mr_collision_detect(s->col, s->d->oMi, err);
}

/* the pools of the islands sized at creation for the blocks of the initial state (memory
 * proportional to the contacts present, not to the bound on contacts), so that a scene whose
 * islands do not grow never allocates in a step; a detection that fails here is left to the
 * first step to report. The state is left as mr_sim_reset left it. */
static mr_status reserve_present(mr_sim *s, mr_error *err) {
  mr_error ignored = {MR_OK, ""};
  if (!s->islands || detect(s, NULL, &ignored)) return MR_OK;
  s->nc = mr_collision_ncontacts(s->col);
  gather_contacts(s, mr_collision_contacts(s->col), s->nc);
  int n = gather_mimics(s, gather_points(s, gather_coupled_limits(s, gather_limits(s, s->nc))));
  mr_status st = mr_islands_reserve_present(s, n, err);
  s->nc = s->nk = 0;
  mr_zero(s->lambda, 3 * n);
  s->last.penetration = 0.0;
  return st;
}

mr_status mr_sim_collide(mr_sim *s, const mr_contact **contacts, int *ncontacts, mr_error *err) {
  mr_status st = detect(s, NULL, err);
  *contacts = mr_collision_contacts(s->col);
  *ncontacts = st ? 0 : mr_collision_ncontacts(s->col);
  return st;
}

mr_status mr_sim_step(mr_sim *s, mr_error *err) {
  const mr_model *m = s->m;
  mr_data *d = s->d;
  double t0 = mr_sim_clock_us(), t1;
  mr_sim_run_controllers(s);
  mr_status st = detect(s, &t1, err);
  if (st) return st;
  double t2 = mr_sim_clock_us();
  apply_forces(s);
  s->nc = mr_collision_ncontacts(s->col);
  s->warnings.collision_failures += mr_collision_get_stats(s->col).ccd_failures;
  if ((st = dynamics(s, err))) return st;
  free_velocity(s);
  double t3 = mr_sim_clock_us();
  gather_contacts(s, mr_collision_contacts(s->col), s->nc);
  s->nk = gather_mimics(s, gather_points(s, gather_coupled_limits(s, gather_limits(s, s->nc)))) - s->nc;
  s->last.ncontacts = s->nc;
  s->last.nconstraints = s->nk;
  if ((st = solve_contacts(s, err))) return st;
  applied_torque(s);
  mr_free_flyer_integrate(m, d, s->q, s->v_next, s->rhs, s->w->timestep, s->q_next);
  if ((st = check_state(s, err))) return st;
  contact_wrenches(s);
  mr_copy(s->q, s->q_next, m->nq);
  mr_copy(s->v, s->v_next, m->nv);
  remember_contacts(s);
  s->t += s->w->timestep;
  s->steps++;
  s->last.kinetic = mr_kinetic_energy(m, d, s->q, s->v);
  s->last.potential = mr_potential_energy(m, d, s->q);
  /* stage times (mr_step_timing): the consistent laws, solves and islands' velocity changes
   * are disjoint spans of [t3, t_solved], the assembly its rest; clock readings are multiples of
   * their common ulp, so these sums and differences are exact and the stages add up to total */
  double t4 = mr_sim_clock_us();
  double inner = s->t_consistency + s->t_solver + s->t_impulse;
  s->last.timing = (mr_step_timing){.kinematics = t1 - t0,
                                    .collision = t2 - t1,
                                    .dynamics = t3 - t2,
                                    .assembly = s->t_solved - t3 - inner,
                                    .consistency = s->t_consistency,
                                    .solver = s->t_solver,
                                    .integration = t4 - s->t_solved + s->t_impulse,
                                    .total = t4 - t0};
  return MR_OK;
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
  if (s->islands_used) return mr_islands_problem(s->isl, s->nc + s->nk, s->w->timestep);
  return &s->as.problem;
}

int mr_sim_contacts(const mr_sim *s, const mr_contact **contacts, const double **lambda) {
  if (contacts) *contacts = mr_collision_contacts(s->col);
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
