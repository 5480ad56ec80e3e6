/* MuJoCo's contact filters and friction on the model (docs/mjcf.md, "Contacts").
 *
 * MuJoCo tests two geoms when (contype1 & conaffinity2) || (contype2 & conaffinity1), their
 * bodies are not welded together, not parent and child (weld bodies, the world excepted; option
 * flag filterparent), and their body pair is not in <contact><exclude>; a <pair> is always
 * tested with its own parameters (collision="predefined": only pairs; "dynamic": no pairs).
 * moreau's filter requires (group1 & mask2) && (group2 & mask1): each distinct (contype,
 * conaffinity) gets one group bit (bits 1..31) and a mask of the bits it may touch, plus bit 0,
 * the group of the scene's other bodies, when contype or conaffinity is non-zero. What remains
 * (welds and parents that moreau's own filters do not see across a multi-joint chain, excluded
 * bodies, pairs) goes to the model's filter pairs.
 *
 * Friction: the geom of higher priority gives condim and friction, else the larger of each;
 * condim 1 is frictionless, 3 sliding friction (at least MuJoCo's 1e-5); 4 and 6 (torsional and
 * rolling friction) are refused. Where μ differs from moreau's rule sqrt(μ1 μ2), a pair override
 * carries it (by body where a whole body pair agrees, else by geom). margin differing from gap
 * (a contact surface offset by margin − gap) is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/mjcf_internal.h"

#define MJ_MINMU 1e-5

/* a model geom with what the filters need */
typedef struct {
  const mj_geom_el *e;
  int mj_body, weld, weldparent, body, idx;
} cgeom;

/* one pair moreau tests, with MuJoCo's friction */
typedef struct {
  int a, b;  /* indices into the cgeom list */
  double mu; /* MuJoCo's sliding friction of the pair */
  long key;  /* the two sides (body, or world geom) */
} tested;

static int find_geom(const mj_ctx *c, const char *name, cgeom *g, int n) {
  for (int i = 0; i < n; ++i)
    if (g[i].e->name[0] && !strcmp(g[i].e->name, name)) return i;
  (void)c;
  return -1;
}

static int find_body(const mj_ctx *c, const char *name) {
  for (int i = 1; i < c->nbodies; ++i)
    if (!strcmp(c->bodies[i].name, name)) return i;
  return !strcmp(name, "world") ? 0 : -1;
}

/* the model's geoms with their MuJoCo bodies, welds and model bodies */
static cgeom *collect(mj_ctx *c, mj_result *r, int *n) {
  cgeom *g = malloc((size_t)(c->ngeoms + 1) * sizeof *g);
  *n = 0;
  if (!g) return NULL;
  for (int b = 0; b < c->nbodies; ++b) {
    const mj_body *B = &c->bodies[b];
    int wp = c->bodies[B->weld].parent >= 0 ? c->bodies[c->bodies[B->weld].parent].weld : 0;
    for (int k = 0; k < B->ngeoms; ++k) {
      int idx = r->geom_of_mj[B->geoms[k].id];
      if (idx < 0) continue;
      g[(*n)++] =
          (cgeom){&B->geoms[k], b, B->weld, B->weld ? wp : 0, r->model->geoms[idx].body, idx};
    }
  }
  return g;
}

/* ---- groups and masks ---- */

static mr_status set_masks(mj_ctx *c, mj_result *r, cgeom *g, int n, int off) {
  int ct[31], ca[31], nt = 0;
  for (int i = 0; i < n; ++i) {
    int t = 0;
    while (t < nt && !(ct[t] == g[i].e->g.contype && ca[t] == g[i].e->g.conaffinity))
      ++t;
    if (t < nt) continue;
    if (nt == 31)
      return mj_fail(c, g[i].e->node, MR_ERR_UNSUPPORTED,
                     "more than 31 distinct (contype, conaffinity) combinations");
    ct[nt] = g[i].e->g.contype, ca[nt] = g[i].e->g.conaffinity, ++nt;
  }
  for (int i = 0; i < n; ++i) {
    int t = 0, gt = g[i].e->g.contype, ga = g[i].e->g.conaffinity;
    while (!(ct[t] == gt && ca[t] == ga))
      ++t;
    mr_geom *G = &r->model->geoms[g[i].idx];
    G->group = 1u << (t + 1);
    G->mask = 0;
    if (off || c->collision == 1) continue; /* contacts off, or predefined pairs only */
    if (gt || ga) G->mask |= 1u;
    for (int s = 0; s < nt; ++s)
      if ((gt & ca[s]) || (ct[s] & ga)) G->mask |= 1u << (s + 1);
  }
  return MR_OK;
}

/* ---- per pair ---- */

static int moreau_skips(const mr_model *m, int b1, int b2) {
  if (b1 == b2) return 1;
  return b1 && b2 && (m->bodies[b1].parent == b2 || m->bodies[b2].parent == b1);
}

static int excluded(const mj_ctx *c, const int *ex, int b1, int b2) {
  for (int k = 0; k < c->nexcludes; ++k)
    if ((ex[2 * k] == b1 && ex[2 * k + 1] == b2) || (ex[2 * k] == b2 && ex[2 * k + 1] == b1))
      return 1;
  return 0;
}

/* MuJoCo's dynamic filter past contype / conaffinity */
static int mujoco_allows(const mj_ctx *c, const int *ex, const cgeom *a, const cgeom *b) {
  if (a->weld == b->weld) return 0;
  int filterparent = !(c->disable & MJ_DSBL_FILTERPARENT);
  if (filterparent && a->weld && b->weld && (a->weld == b->weldparent || b->weld == a->weldparent))
    return 0;
  return !excluded(c, ex, a->mj_body, b->mj_body);
}

/* condim and sliding friction of a dynamic pair (priority, else the larger) */
static void mix(const mj_geom *a, const mj_geom *b, int *condim, double *mu) {
  if (a->priority != b->priority) {
    const mj_geom *p = a->priority > b->priority ? a : b;
    *condim = p->condim, *mu = p->friction[0];
  } else {
    *condim = a->condim > b->condim ? a->condim : b->condim;
    *mu = fmax(a->friction[0], b->friction[0]);
  }
}

/* the pair's friction, after the checks of what moreau does not model */
static mr_status pair_friction(mj_ctx *c, const xmlNode *where, const char *what, int condim,
                               double margin, double gap, double mu, double *out) {
  if (condim > 3)
    return mj_fail(c, where, MR_ERR_UNSUPPORTED,
                   "%s: condim %d (torsional%s friction) is not modelled: moreau's contacts have "
                   "sliding friction only (condim 1 or 3)",
                   what, condim, condim == 6 ? " and rolling" : "");
  if (margin != gap)
    return mj_fail(c, where, MR_ERR_UNSUPPORTED,
                   "%s: margin %g and gap %g differ: the contact surface would move by margin - "
                   "gap, which moreau does not model (margin = gap only widens detection)",
                   what, margin, gap);
  *out = condim == 1 ? 0.0 : fmax(MJ_MINMU, mu);
  return MR_OK;
}

/* ---- friction overrides ---- */

static long side_key(const cgeom *g) {
  return g->body ? g->body : -1 - g->idx;
}

static int cmp_tested(const void *x, const void *y) {
  const tested *a = x, *b = y;
  return a->key < b->key ? -1 : a->key > b->key;
}

static mr_status add_override(mj_ctx *c, mj_result *r, const cgeom *a, const cgeom *b, int by_body,
                              double mu) {
  mr_world_pair *p = realloc(r->pairs, (size_t)(r->npairs + 1) * sizeof *p);
  if (!p) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  r->pairs = p;
  mr_world_pair *o = &p[r->npairs++];
  const cgeom *s[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    int body = by_body && s[k]->body ? s[k]->body : -1;
    char *name = k ? o->b : o->a;
    snprintf(name, MR_NAME_MAX, "%s",
             body >= 0 ? r->model->bodies[body].name : r->model->geoms[s[k]->idx].name);
    if (k == 0) o->geom_a = body >= 0 ? -1 : s[k]->idx, o->body_a = body;
    if (k == 1) o->geom_b = body >= 0 ? -1 : s[k]->idx, o->body_b = body;
  }
  o->friction = mu;
  o->restitution = o->compliance = o->tangential_compliance = NAN;
  o->stiffness = o->dissipation = NAN;
  return MR_OK;
}

/* one override per side pair when its pairs agree, else one per geom pair that needs it */
static mr_status overrides(mj_ctx *c, mj_result *r, const cgeom *g, tested *t, int nt) {
  qsort(t, (size_t)nt, sizeof *t, cmp_tested);
  for (int i = 0, j; i < nt; i = j) {
    int same = 1, needed = 0;
    for (j = i; j < nt && t[j].key == t[i].key; ++j) {
      same &= t[j].mu == t[i].mu;
      double rule = sqrt(g[t[j].a].e->g.friction[0] * g[t[j].b].e->g.friction[0]);
      needed |= fabs(rule - t[j].mu) > 1e-12 * fmax(1.0, t[j].mu);
    }
    if (!needed) continue;
    for (int k = i; k < j; ++k) {
      double rule = sqrt(g[t[k].a].e->g.friction[0] * g[t[k].b].e->g.friction[0]);
      if (!same && fabs(rule - t[k].mu) <= 1e-12 * fmax(1.0, t[k].mu)) continue;
      if (add_override(c, r, &g[t[k].a], &g[t[k].b], same, t[k].mu)) return mj_status(c);
      if (same) break;
    }
  }
  return MR_OK;
}

/* ---- the pass over every pair ---- */

typedef struct {
  cgeom *g;
  int n, *ex, *pair_of; /* pair_of[a * n + b]: the <pair> of geoms a, b, or -1 */
  tested *t;
  int nt;
} pass;

static mr_status resolve(mj_ctx *c, pass *p) {
  for (int k = 0; k < c->nexcludes; ++k) {
    const mj_exclude_el *x = &c->excludes[k];
    p->ex[2 * k] = find_body(c, x->body1), p->ex[2 * k + 1] = find_body(c, x->body2);
    if (p->ex[2 * k] < 0 || p->ex[2 * k + 1] < 0)
      return mj_fail(c, x->node, MR_ERR_INVALID, "unknown body '%s'",
                     p->ex[2 * k] < 0 ? x->body1 : x->body2);
  }
  for (int i = 0; i < p->n * p->n; ++i)
    p->pair_of[i] = -1;
  for (int k = 0; k < c->npairs; ++k) {
    const mj_pair_el *e = &c->pairs[k];
    int a = find_geom(c, e->geom1, p->g, p->n), b = find_geom(c, e->geom2, p->g, p->n);
    if (a < 0 || b < 0)
      return mj_fail(c, e->node, MR_ERR_INVALID, "unknown geom '%s'", a < 0 ? e->geom1 : e->geom2);
    if (c->collision != 2) p->pair_of[a * p->n + b] = p->pair_of[b * p->n + a] = k;
  }
  return MR_OK;
}

/* a geom pair: excluded, included, or tested with its friction */
static mr_status one_pair(mj_ctx *c, mj_result *r, pass *p, int a, int b) {
  const cgeom *A = &p->g[a], *B = &p->g[b];
  char what[3 * MR_NAME_MAX];
  snprintf(what, sizeof what, "geoms '%s' and '%s'", r->model->geoms[A->idx].name,
           r->model->geoms[B->idx].name);
  int pk = p->pair_of[a * p->n + b], skip = moreau_skips(r->model, A->body, B->body);
  double mu = 0;
  int condim = 3;
  if (pk >= 0) {
    const mj_pair_el *e = &c->pairs[pk];
    if (pair_friction(c, e->node, what, e->p.condim, e->p.margin, e->p.gap, e->p.friction[0],
                      &mu) ||
        mr_model_add_filter_pair(r->model, A->idx, B->idx, 1, c->err))
      return mj_status(c);
  } else {
    const mj_geom *ga = &A->e->g, *gb = &B->e->g;
    int compat = (ga->contype & gb->conaffinity) || (gb->contype & ga->conaffinity);
    if (c->collision == 1 || !compat) return MR_OK; /* the masks keep them apart */
    int ok = mujoco_allows(c, p->ex, A, B);
    if (!ok && !skip && mr_model_add_filter_pair(r->model, A->idx, B->idx, 0, c->err))
      return mj_status(c);
    if (ok && skip && A->body != B->body &&
        mr_model_add_filter_pair(r->model, A->idx, B->idx, 1, c->err))
      return mj_status(c);
    if (!ok || A->body == B->body) return MR_OK;
    double m0;
    mix(ga, gb, &condim, &m0);
    int b_rules =
        ga->priority != gb->priority ? gb->priority > ga->priority : gb->condim > ga->condim;
    if (pair_friction(c, (b_rules ? B : A)->e->node, what, condim, fmax(ga->margin, gb->margin),
                      fmax(ga->gap, gb->gap), m0, &mu))
      return mj_status(c);
  }
  long ka = side_key(A), kb = side_key(B);
  p->t[p->nt++] = (tested){a, b, mu, ka < kb ? ka * 1000003L + kb : kb * 1000003L + ka};
  return MR_OK;
}

mr_status mj_build_contacts(mj_ctx *c, mj_result *r) {
  int off = (c->disable & (MJ_DSBL_CONTACT | MJ_DSBL_CONSTRAINT)) != 0;
  r->contact_off = off;
  pass p = {0};
  p.g = collect(c, r, &p.n);
  if (!p.g) return mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
  mr_status st = set_masks(c, r, p.g, p.n, off);
  if (!st && !off && p.n > 1) {
    size_t np = (size_t)p.n * (size_t)(p.n - 1) / 2 + 1;
    p.ex = malloc((size_t)(2 * c->nexcludes + 1) * sizeof *p.ex);
    p.pair_of = malloc((size_t)p.n * (size_t)p.n * sizeof *p.pair_of);
    p.t = malloc(np * sizeof *p.t);
    if (!p.ex || !p.pair_of || !p.t)
      st = mr_error_set(c->err, MR_ERR_NOMEM, "%s: out of memory", c->file);
    if (!st) st = resolve(c, &p);
    for (int a = 0; !st && a < p.n; ++a)
      for (int b = a + 1; !st && b < p.n; ++b)
        st = one_pair(c, r, &p, a, b);
    if (!st) st = overrides(c, r, p.g, p.t, p.nt);
  }
  free(p.g), free(p.ex), free(p.pair_of), free(p.t);
  return st;
}
