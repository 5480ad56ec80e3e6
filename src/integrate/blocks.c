/* The step's blocks (sim_internal.h): its contacts, joint limits, point constraints and mimic
 * couplings as the assembly reads them (moreau/assembly.h), each warm started from last step's
 * block of the same identity, and the identities kept for the next step. */
#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "integrate/sim_internal.h"

/* index of key in the previous step's blocks (the first of equal keys), or -1: binary search
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

/* block n's identity and warm start from last step's block of the same key: last step's block n
 * when it has that key and last step's keys were distinct (a contact set that persists keeps its
 * order), else the look-up */
static void warm_start(mr_sim *s, int n, uint64_t key) {
  int prev =
      s->prev_distinct && n < s->prev_nc && s->prev_keys[n] == key ? n : find_previous(s, key);
  for (int k = 0; k < 3; ++k)
    s->lambda[3 * n + k] = prev < 0 ? 0.0 : s->prev_lambda[3 * prev + k];
  s->keys[n] = key;
  s->prev_index[n] = prev;
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
      mr_world_pair_params(s->w, c->geom[0], c->geom[1], &g->mu, &g->restitution, &g->compliance);
      mr_world_pair_tangential_compliance(s->w, c->geom[0], c->geom[1], &g->tangential_compliance);
    }
    mr_world_pair_stiffness(s->w, c->geom[0], c->geom[1], &g->stiffness, &g->dissipation);
    warm_start(s, i, c->key);
    /* an impact: the contact carried no normal force last step (absent, or present within the
     * margin but still open), so this step is the first that can close it */
    int prev = s->prev_index[i];
    g->is_new = prev < 0 || !(s->prev_lambda[3 * prev + 2] > 0.0);
    /* a rebound its impact deferred to this step (lost when the contact is gone) */
    g->rebound = prev < 0 ? 0.0 : s->prev_rebound[prev];
    pen = fmax(pen, -c->phi);
  }
  s->last.penetration = pen;
}

/* append block n: a constraint with key, warm started from last step's block of that key */
static mr_contact_geometry *add_block(mr_sim *s, int n, uint64_t key, mr_sim_constraint info) {
  mr_contact_geometry *g = &s->cg[n];
  memset(g, 0, sizeof *g);
  g->frame = mr_m3_identity();
  warm_start(s, n, key);
  s->cons[n - s->nc] = info;
  return g;
}

/* joint limits: a 1-dof joint of a robot with joint_limits, closer to its nearer bound than the
 * margin plus 2 Δt |v| (so that a bound cannot be crossed within a step unseen), becomes a
 * frictionless contact on its velocity with gap Φ = the distance to the bound */
static int gather_limits(mr_sim *s, int n) {
  const mr_model *m = s->m;
  double dt = s->ctx.dt, margin = s->ctx.limit_margin;
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

int mr_sim_friction_dofs(const mr_model *m) {
  int n = 0;
  for (int k = 0; k < m->nv; ++k)
    n += m->joint_friction[k] > 0.0;
  return n;
}

/* joint friction: every dof with friction f > 0 is a box |λ| ≤ f on its velocity, every step
 * (a friction force acts at rest as in motion) */
static int gather_friction(mr_sim *s, int n) {
  const mr_model *m = s->m;
  for (int k = 0; k < m->nv; ++k) {
    if (!(m->joint_friction[k] > 0.0)) continue;
    mr_sim_constraint info = {MR_SIM_FRICTION, k, 0};
    mr_contact_geometry *g = add_block(s, n++, (UINT64_C(1) << 60) | (uint64_t)k, info);
    g->type = MR_ROWS_FRICTION;
    g->dof = k;
    g->sign = 1.0;
    g->mu = m->joint_friction[k];
  }
  return n;
}

/* the world's limits on two coupled joints, as joint limits on q_dof − ratio q_dof2 */
static int gather_coupled_limits(mr_sim *s, int n) {
  double dt = s->ctx.dt, margin = s->ctx.limit_margin;
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
    uint64_t key = (UINT64_C(1) << 59) | ((uint64_t)k << 1) | (uint64_t)upper;
    mr_sim_constraint info = {MR_SIM_COUPLED_LIMIT, k, upper};
    mr_contact_geometry *g = add_block(s, n++, key, info);
    g->type = MR_ROWS_LIMIT;
    g->dof = l->dof, g->dof2 = l->dof2, g->ratio = l->ratio;
    g->sign = upper ? -1.0 : 1.0;
    g->phi = gap;
  }
  return n;
}

/* a point of body b's frame in the world (body 0: the world) */
static mr_vec3 body_to_world(const mr_data *d, int b, mr_vec3 p) {
  return b > 0 ? mr_v3_add(d->oMi[b].p, mr_m3_mulv(&d->oMi[b].R, p)) : p;
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

void mr_sim_gather_blocks(mr_sim *s) {
  s->nc = mr_collision_ncontacts(s->col);
  gather_contacts(s, mr_collision_contacts(s->col), s->nc);
  s->nk = gather_friction(s, gather_mimics(s, gather_points(s, gather_coupled_limits(
                                                                   s, gather_limits(s, s->nc))))) -
          s->nc;
}

int mr_sim_same_blocks(const mr_sim *s) {
  if (s->nc + s->nk != s->prev_nc) return 0;
  for (int i = 0; i < s->nc + s->nk; ++i)
    if (s->keys[i] != s->prev_keys[i]) return 0;
  return 1;
}

void mr_sim_remember_blocks(mr_sim *s) {
  int n = s->nc + s->nk;
  /* the same keys in the same order as last step's (a resting scene): the same sorted order */
  if (!(n == s->prev_nc && !memcmp(s->prev_keys, s->keys, (size_t)n * sizeof *s->keys))) {
    memcpy(s->prev_keys, s->keys, (size_t)n * sizeof *s->keys);
    sort_by_key(s->prev_keys, s->prev_order, n);
    s->prev_distinct = 1;
    for (int k = 1; k < n; ++k)
      if (s->prev_keys[s->prev_order[k]] == s->prev_keys[s->prev_order[k - 1]])
        s->prev_distinct = 0;
  }
  memcpy(s->prev_cons, s->cons, (size_t)s->nk * sizeof *s->cons);
  memcpy(s->prev_contacts, mr_collision_contacts(s->col), (size_t)s->nc * sizeof *s->prev_contacts);
  mr_copy(s->prev_lambda, s->lambda, 3 * n);
  mr_copy(s->prev_rebound, s->rebound, n);
  s->prev_nc = n;
  s->prev_nk = s->nk;
}
