/* The collision context: settings, filters (same body, parent/child, group/mask, explicit
 * include/exclude lists), the broadphase, and contact generation (frame, material, stable key).
 * Every buffer is allocated in mr_collision_create.
 *
 * Broadphases over the world AABBs of bounded geometries (unbounded halfspaces and heightfields
 * are tested against every bounded geometry outside them):
 * - dynamic AABB tree (src/collision/bvh.c): fat boxes refitted incrementally, the pairs of
 *   overlapping fat boxes found by one traversal of the tree against itself, then the tight
 *   boxes tested;
 * - sweep and prune along the axis of largest spread, kept sorted by insertion sort between
 *   queries to exploit temporal coherence, merge sort on the first query and after an axis change;
 * - brute force over every pair (reference).
 * Every broadphase hands the candidate pairs to the narrowphase in the same order, sorted by
 * (first id, second id), so that switching broadphase never changes the contacts or their order:
 * the sweep and the tree's self-traversal collect their pairs, then counting-sort them by first
 * id (in chunks of first ids, collecting once per chunk, in the rare case that they exceed the
 * pair buffer). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/bvh.h"
#include "collision/narrow.h"

/* geometries up to which the include, exclude, same-body and parent/child rules of every pair are
 * tabulated at creation (2 bits a pair: 128 KB and half a million pairs at most); a robot's
 * pairs are then one lookup each instead of two searches and the body tests. The group and mask
 * are read on every query */
#define RULE_TABLE_MAX_GEOMS 1024

/* an AABB and its geometry, stored in sweep order */
typedef struct {
  double lo[3], hi[3];
  int id;
} sweep_box;

struct mr_collision_s {
  const mr_model *m;
  mr_collision_settings s;
  uint64_t *exclude, *include; /* sorted pair keys */
  unsigned char *rules;        /* pair_rule of every pair, tabulated (tabulate_rules), or NULL:
                                * read per pair */
  mr_pair_material *materials; /* sorted by pair key */
  uint64_t *material_keys;
  int max_contacts, ncontacts;
  mr_contact *contacts;
  mr_se3 *X;        /* world placement per geometry */
  mr_vec3 *lo, *hi; /* world AABB per geometry (inflated by half the margin, at least its skin,
                       and by its reach) */
  double *skin;     /* contact skin per geometry (m, geom_skin) */
  double *radius;   /* bound on the distance of a geometry's points from its body's origin (m;
                       0 for the unbounded) */
  double *reach;    /* speculative reach per geometry (m, mr_collision_set_motion; 0 default) */
  int nbounded, nunbounded;
  int *bounded, *unbounded; /* geometry ids */
  int *order;               /* bounded geometries sorted by lo.x (persistent) */
  sweep_box *sorted;        /* their AABBs copied in sweep order (sequential access) */
  int *scratch;             /* merge sort buffer */
  int axis;                 /* sweep axis: the one of largest spread of the AABB centres */
  int have_order;           /* order holds a sort along axis from a previous query */
  int npairs, cap_pairs;
  mr_geom_pair *pairs;     /* candidate pairs listed for mr_collision_pairs (cap_pairs) */
  mr_geom_pair *cand;      /* broadphase pairs before sorting (cap_pairs) */
  int *cand_j;             /* their second ids bucketed by first id (cap_pairs) */
  int *count;              /* pairs per first id, then bucket offsets (ngeoms) */
  mr_broadphase_kind kind; /* the broadphase run (settings, AUTO resolved) */
  bvh_tree *tree;          /* dynamic AABB tree (when kind is MR_BROADPHASE_TREE) */
  int from, to, ncand;     /* first-id range being collected, pairs found in it */
  mr_collision_stats stats;
};

mr_collision_settings mr_collision_settings_default(void) {
  mr_collision_settings s;
  memset(&s, 0, sizeof s);
  s.margin = 0.0;
  s.skip_parent_child = 1;
  s.broadphase = MR_BROADPHASE_AUTO;
  s.ccd_max_iter = 1000;
  s.ccd_tolerance = 1e-9;
  return s;
}

/* an unordered pair key */
static uint64_t pair_key(int a, int b) {
  if (a > b) {
    int t = a;
    a = b, b = t;
  }
  return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

static int has_key(const uint64_t *keys, int n, uint64_t k) {
  return n > 0 && bsearch(&k, keys, (size_t)n, sizeof k, cmp_u64) != NULL;
}

/* sorted keys of a pair list, checking the ids */
static uint64_t *pair_keys(const mr_geom_pair *p, int n, int ngeoms, const char *what,
                           mr_error *err) {
  uint64_t *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  if (!k) {
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory");
    return NULL;
  }
  for (int i = 0; i < n; ++i) {
    if (p[i].a < 0 || p[i].a >= ngeoms || p[i].b < 0 || p[i].b >= ngeoms) {
      mr_error_set(err, MR_ERR_INVALID,
                   "collision: %s pair %d has geometry ids (%d, %d), model has %d", what, i, p[i].a,
                   p[i].b, ngeoms);
      free(k);
      return NULL;
    }
    k[i] = pair_key(p[i].a, p[i].b);
  }
  qsort(k, (size_t)n, sizeof *k, cmp_u64);
  return k;
}

/* the settings' pairs followed by the model's filter pairs (2 x nm indices), as sorted keys */
static uint64_t *filter_keys(const mr_geom_pair *p, int n, const int *pm, int nm, int ngeoms,
                             const char *what, int *total, mr_error *err) {
  mr_geom_pair *all = malloc((size_t)(n + nm > 0 ? n + nm : 1) * sizeof *all);
  if (!all) return mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory"), NULL;
  for (int i = 0; i < n; ++i)
    all[i] = p[i];
  for (int i = 0; i < nm; ++i)
    all[n + i] = (mr_geom_pair){pm[2 * i], pm[2 * i + 1]};
  uint64_t *k = pair_keys(all, n + nm, ngeoms, what, err);
  free(all);
  *total = n + nm;
  return k;
}

/* per-pair materials sorted by key, with their keys */
static int copy_materials(mr_collision *c, mr_error *err) {
  int n = c->s.nmaterials;
  mr_geom_pair *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
  c->materials = malloc((size_t)(n > 0 ? n : 1) * sizeof *c->materials);
  if (!p || !c->materials) {
    free(p);
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory");
    return -1;
  }
  for (int i = 0; i < n; ++i)
    p[i] = (mr_geom_pair){c->s.materials[i].a, c->s.materials[i].b};
  c->material_keys = pair_keys(p, n, c->m->ngeoms, "material", err);
  free(p);
  if (!c->material_keys) return -1;
  /* place each material at its key's sorted position */
  for (int i = 0; i < n; ++i) {
    uint64_t k = pair_key(c->s.materials[i].a, c->s.materials[i].b);
    uint64_t *hit = bsearch(&k, c->material_keys, (size_t)n, sizeof k, cmp_u64);
    c->materials[hit - c->material_keys] = c->s.materials[i];
  }
  return 0;
}

/* sizes and hull vertices within the collision range (MR_COLLISION_MAX_COORD) */
static int check_range(const mr_geom *g, mr_error *err) {
  for (int k = 0; k < 3; ++k)
    if (!(fabs(g->size[k]) <= MR_COLLISION_MAX_COORD)) {
      mr_error_set(err, MR_ERR_INVALID,
                   "collision: geometry '%s' has size[%d] = %g, outside the collision range ±%g m",
                   g->name, k, g->size[k], MR_COLLISION_MAX_COORD);
      return -1;
    }
  if (g->type != MR_GEOM_MESH || !g->mesh) return 0;
  for (int i = 0; i < 3 * g->mesh->nhull; ++i)
    if (!(fabs(g->mesh->hull[i]) <= MR_COLLISION_MAX_COORD)) {
      mr_error_set(err, MR_ERR_INVALID,
                   "collision: mesh geometry '%s' (%s): hull vertex %d has coordinate %g, outside "
                   "the collision range ±%g m",
                   g->name, g->mesh_file ? g->mesh_file : "no file", i / 3, g->mesh->hull[i],
                   MR_COLLISION_MAX_COORD);
      return -1;
    }
  return 0;
}

static int check_settings(const mr_model *m, const mr_collision_settings *s, int max_contacts,
                          mr_error *err) {
  if (s->broadphase != MR_BROADPHASE_SAP && s->broadphase != MR_BROADPHASE_BRUTE &&
      s->broadphase != MR_BROADPHASE_TREE && s->broadphase != MR_BROADPHASE_AUTO) {
    mr_error_set(err, MR_ERR_INVALID, "collision: unknown broadphase %d", (int)s->broadphase);
    return -1;
  }
  if (!(s->margin >= 0) || !isfinite(s->margin) || max_contacts < 1 || s->ccd_max_iter < 1 ||
      !(s->ccd_tolerance > 0)) {
    mr_error_set(err, MR_ERR_INVALID,
                 "collision: margin %g must be >= 0, max_contacts %d >= 1, ccd_max_iter %d >= 1, "
                 "ccd_tolerance %g > 0",
                 s->margin, max_contacts, s->ccd_max_iter, s->ccd_tolerance);
    return -1;
  }
  for (int i = 0; i < m->ngeoms; ++i) {
    const mr_geom *g = &m->geoms[i];
    if (check_range(g, err)) return -1;
    if (g->type == MR_GEOM_MESH && (!g->mesh || g->mesh->nhull < 4)) {
      mr_error_set(err, MR_ERR_INVALID, "collision: mesh geometry '%s' (%s) has no convex hull",
                   g->name, g->mesh_file ? g->mesh_file : "no file");
      return -1;
    }
    if (g->type == MR_GEOM_HEIGHTFIELD && !g->hfield) {
      mr_error_set(err, MR_ERR_INVALID, "collision: heightfield geometry '%s' has no grid",
                   g->name);
      return -1;
    }
  }
  return 0;
}

/* a bound on the distance of a bounded geometry's points from its body's origin: its local
 * box's centre, placed in the body, plus the box's half-diagonal */
static double geom_radius(const mr_geom *g) {
  mr_vec3 lo, hi;
  if (!mr_geom_local_aabb(g, &lo, &hi)) return 0.0;
  mr_vec3 ctr = mr_se3_act_point(&g->placement, mr_v3_scale(mr_v3_add(lo, hi), 0.5));
  return mr_v3_norm(ctr) + 0.5 * mr_v3_norm(mr_v3_sub(hi, lo));
}

/* allocate the per-geometry and contact buffers */
static int alloc_buffers(mr_collision *c, int ng) {
  size_t n = (size_t)(ng > 0 ? ng : 1);
  c->cap_pairs = 16 * ng + 1024;
  c->contacts = malloc((size_t)c->max_contacts * sizeof *c->contacts);
  c->X = malloc(n * sizeof *c->X);
  c->lo = malloc(n * sizeof *c->lo);
  c->hi = malloc(n * sizeof *c->hi);
  c->skin = malloc(n * sizeof *c->skin);
  c->radius = calloc(n, sizeof *c->radius);
  c->reach = calloc(n, sizeof *c->reach);
  c->bounded = malloc(n * sizeof(int));
  c->unbounded = malloc(n * sizeof(int));
  c->order = malloc(n * sizeof(int));
  c->sorted = malloc(n * sizeof *c->sorted);
  c->scratch = malloc(n * sizeof(int));
  c->pairs = malloc((size_t)c->cap_pairs * sizeof *c->pairs);
  c->cand = malloc((size_t)c->cap_pairs * sizeof *c->cand);
  c->cand_j = malloc((size_t)c->cap_pairs * sizeof(int));
  c->count = calloc(n, sizeof(int));
  return c->contacts && c->X && c->lo && c->hi && c->skin && c->radius && c->reach && c->bounded &&
                 c->unbounded &&
                 c->order && c->sorted && c->scratch && c->pairs && c->cand && c->cand_j && c->count
             ? 0
             : -1;
}

static int tabulate_rules(mr_collision *c);

mr_collision *mr_collision_create(const mr_model *m, const mr_collision_settings *s,
                                  int max_contacts, mr_error *err) {
  mr_collision_settings def = mr_collision_settings_default();
  if (!s) s = &def;
  if (check_settings(m, s, max_contacts, err)) return NULL;
  mr_collision *c = calloc(1, sizeof *c);
  if (!c) {
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory");
    return NULL;
  }
  c->m = m;
  c->s = *s;
  c->max_contacts = max_contacts;
  if (alloc_buffers(c, m->ngeoms)) {
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory for %d geometries", m->ngeoms);
    mr_collision_free(c);
    return NULL;
  }
  if (!(c->exclude = filter_keys(s->exclude, s->nexclude, m->filter_exclude, m->nfilter_exclude,
                                  m->ngeoms, "exclude", &c->s.nexclude, err)) ||
      !(c->include = filter_keys(s->include, s->ninclude, m->filter_include, m->nfilter_include,
                                  m->ngeoms, "include", &c->s.ninclude, err)) ||
      copy_materials(c, err)) {
    mr_collision_free(c);
    return NULL;
  }
  c->s.exclude = NULL, c->s.include = NULL, c->s.materials = NULL;
  if (tabulate_rules(c)) {
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory for the pair rules");
    mr_collision_free(c);
    return NULL;
  }
  /* bounded geometries go through the sweep, the others are tested against all */
  for (int i = 0; i < m->ngeoms; ++i) {
    mr_geom_type t = m->geoms[i].type;
    c->skin[i] = geom_skin(&m->geoms[i]);
    if (t == MR_GEOM_HALFSPACE || t == MR_GEOM_HEIGHTFIELD)
      c->unbounded[c->nunbounded++] = i;
    else
      c->order[c->nbounded] = i, c->bounded[c->nbounded++] = i,
      c->radius[i] = geom_radius(&m->geoms[i]);
  }
  /* AUTO: the sweep for small scenes, the tree from MR_BROADPHASE_AUTO_TREE_MIN geometries */
  c->kind = s->broadphase;
  if (c->kind == MR_BROADPHASE_AUTO)
    c->kind = c->nbounded >= MR_BROADPHASE_AUTO_TREE_MIN ? MR_BROADPHASE_TREE : MR_BROADPHASE_SAP;
  if (c->kind == MR_BROADPHASE_TREE && !(c->tree = bvh_create(c->nbounded, m->ngeoms))) {
    mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory for the AABB tree");
    mr_collision_free(c);
    return NULL;
  }
  return c;
}

void mr_collision_free(mr_collision *c) {
  if (!c) return;
  free(c->exclude), free(c->include), free(c->rules), free(c->materials), free(c->material_keys);
  free(c->contacts), free(c->X), free(c->lo), free(c->hi), free(c->skin), free(c->radius);
  free(c->reach);
  free(c->bounded), free(c->unbounded), free(c->order), free(c->sorted), free(c->scratch),
      free(c->pairs);
  free(c->cand), free(c->cand_j), free(c->count);
  bvh_free(c->tree);
  free(c);
}

mr_status mr_collision_reserve(mr_collision *c, int max_contacts, mr_error *err) {
  if (max_contacts <= c->max_contacts) return MR_OK;
  mr_contact *p = realloc(c->contacts, (size_t)max_contacts * sizeof *p);
  if (!p) return mr_error_set(err, MR_ERR_NOMEM, "collision: out of memory for %d contacts",
                              max_contacts);
  c->contacts = p, c->max_contacts = max_contacts;
  return MR_OK;
}

int mr_collision_capacity(const mr_collision *c) {
  return c->max_contacts;
}

void mr_collision_set_motion(mr_collision *c, const mr_motion *body_velocity, double dt,
                             double accel) {
  for (int i = 0; i < c->m->ngeoms; ++i) {
    int b = c->m->geoms[i].body;
    c->reach[i] = 0.0;
    if (!body_velocity || b <= 0 || c->radius[i] == 0.0) continue;
    const mr_motion *v = &body_velocity[b];
    double r = dt * (mr_v3_norm(v->v) + mr_v3_norm(v->w) * c->radius[i] + accel * dt);
    c->reach[i] = r < MR_COLLISION_MAX_COORD ? r : MR_COLLISION_MAX_COORD; /* and NaN */
  }
}

/* the filters on pair (i, j) that do not read the geometries' group and mask: 1 the pair may
 * collide (an include), 0 it may not (an exclude, one body, parent and child), −1 the masks
 * decide */
static int pair_rule(const mr_collision *c, int i, int j) {
  uint64_t k = pair_key(i, j);
  if (has_key(c->include, c->s.ninclude, k)) return 1;
  if (has_key(c->exclude, c->s.nexclude, k)) return 0;
  const mr_geom *a = &c->m->geoms[i], *b = &c->m->geoms[j];
  if (a->body == b->body) return 0;
  /* parent/child bodies touch at their joint; the world is nobody's joint partner here */
  if (c->s.skip_parent_child && a->body != 0 && b->body != 0 &&
      (c->m->bodies[a->body].parent == b->body || c->m->bodies[b->body].parent == a->body))
    return 0;
  return -1;
}

/* pair (i ≠ j)'s place in the table of rules: j (j − 1) / 2 + i for i < j */
static size_t pair_index(int i, int j) {
  int lo = i < j ? i : j, hi = i < j ? j : i;
  return (size_t)hi * (size_t)(hi - 1) / 2 + (size_t)lo;
}

/* pair_rule of every pair, 2 bits each (the rule + 1), when the model has up to
 * RULE_TABLE_MAX_GEOMS geometries; 0, or −1 out of memory */
static int tabulate_rules(mr_collision *c) {
  int ng = c->m->ngeoms;
  if (ng < 2 || ng > RULE_TABLE_MAX_GEOMS) return 0;
  if (!(c->rules = calloc(pair_index(ng - 2, ng - 1) / 4 + 1, 1))) return -1;
  for (int j = 1; j < ng; ++j)
    for (int i = 0; i < j; ++i) {
      size_t k = pair_index(i, j);
      c->rules[k / 4] |= (unsigned char)((pair_rule(c, i, j) + 1) << 2 * (k % 4));
    }
  return 0;
}

/* may geometries i ≠ j collide (filters only, no geometry): the rules, else the group of each
 * against the mask of the other (read from the model on every query) */
static int pair_allowed(const mr_collision *c, int i, int j) {
  int rule;
  if (c->rules) {
    size_t k = pair_index(i, j);
    rule = (c->rules[k / 4] >> 2 * (k % 4) & 3) - 1;
  } else {
    rule = pair_rule(c, i, j);
  }
  if (rule >= 0) return rule;
  const mr_geom *a = &c->m->geoms[i], *b = &c->m->geoms[j];
  return (a->group & b->mask) && (b->group & a->mask);
}

/* world AABB of a geometry from its local one (centre moved, extents through |R|) */
static void world_aabb(mr_collision *c, int i) {
  mr_vec3 lo, hi;
  const mr_se3 *X = &c->X[i];
  if (!mr_geom_local_aabb(&c->m->geoms[i], &lo, &hi)) return;
  mr_vec3 ctr = mr_se3_act_point(X, mr_v3_scale(mr_v3_add(lo, hi), 0.5));
  mr_vec3 ext = mr_v3_scale(mr_v3_sub(hi, lo), 0.5);
  for (int r = 0; r < 3; ++r) {
    double e = fmax(0.5 * c->s.margin, c->skin[i]) + c->reach[i];
    for (int k = 0; k < 3; ++k)
      e += fabs(X->R.m[r][k]) * ext.v[k];
    c->lo[i].v[r] = ctr.v[r] - e;
    c->hi[i].v[r] = ctr.v[r] + e;
  }
}

static int overlap(const mr_collision *c, int i, int j) {
  for (int k = 0; k < 3; ++k)
    if (c->lo[i].v[k] > c->hi[j].v[k] || c->lo[j].v[k] > c->hi[i].v[k]) return 0;
  return 1;
}

/* narrowphase of one candidate pair: contacts appended to the context */
static void test_pair(mr_collision *c, int i, int j) {
  if (c->npairs < c->cap_pairs) c->pairs[c->npairs] = (mr_geom_pair){i, j};
  c->npairs++;
  const mr_model *m = c->m;
  shape a = {&m->geoms[i], c->X[i]}, b = {&m->geoms[j], c->X[j]};
  double margin = fmax(c->s.margin, c->skin[i] + c->skin[j]) + c->reach[i] + c->reach[j];
  narrow_ctx nc = {margin, c->s.force_ccd, c->s.ccd_max_iter, c->s.ccd_tolerance, 0, 0, 0};
  raw_contact rc[MR_PAIR_MAX_CONTACTS];
  int n = narrow_collide(&a, &b, &nc, rc);
  c->stats.ccd_failures += nc.ccd_failures;
  c->stats.unsupported += nc.unsupported;
  c->stats.out_of_range += nc.out_of_range;
  double mu, e, R, RT;
  uint64_t k = pair_key(i, j);
  int hit = -1;
  if (c->s.nmaterials > 0) {
    uint64_t *p = bsearch(&k, c->material_keys, (size_t)c->s.nmaterials, sizeof k, cmp_u64);
    if (p) hit = (int)(p - c->material_keys);
  }
  if (hit >= 0)
    mu = c->materials[hit].mu, e = c->materials[hit].restitution, R = c->materials[hit].compliance,
    RT = c->materials[hit].tangential_compliance;
  else
    mr_material_combine(a.g, b.g, &mu, &e, &R), RT = mr_material_combine_tangential(a.g, b.g);
  for (int q = 0; q < n; ++q) {
    if (c->ncontacts == c->max_contacts) {
      c->stats.overflow++;
      continue;
    }
    mr_contact *ct = &c->contacts[c->ncontacts++];
    ct->geom[0] = i, ct->geom[1] = j;
    ct->body[0] = a.g->body, ct->body[1] = b.g->body;
    ct->point = rc[q].p;
    ct->frame = mr_contact_frame(rc[q].n);
    ct->phi = rc[q].phi;
    ct->mu = mu, ct->restitution = e, ct->compliance = R, ct->tangential_compliance = RT;
    ct->feature = rc[q].feature;
    ct->key = (uint64_t)(i & 0xfffff) << 44 | (uint64_t)(j & 0xfffff) << 24 |
              (uint64_t)(rc[q].feature & 0xffffff);
  }
}

/* does bounded geometry g reach unbounded u (halfspace: AABB below the plane + margin) */
static int reaches_unbounded(const mr_collision *c, int g, int u) {
  const mr_se3 *X = &c->X[u];
  if (c->m->geoms[u].type == MR_GEOM_HEIGHTFIELD) return overlap(c, g, u);
  /* lowest AABB corner along the plane normal */
  double d = -X->p.v[0] * X->R.m[0][2] - X->p.v[1] * X->R.m[1][2] - X->p.v[2] * X->R.m[2][2];
  for (int k = 0; k < 3; ++k)
    d += X->R.m[k][2] * (X->R.m[k][2] >= 0 ? c->lo[g].v[k] : c->hi[g].v[k]);
  return d <= 0.5 * c->s.margin;
}

/* does geometry g come before h along the sweep axis (ties by id) */
static int before(const mr_collision *c, int g, int h) {
  double a = c->lo[g].v[c->axis], b = c->lo[h].v[c->axis];
  return a < b || (a == b && g < h);
}

/* insertion sort of the previous order (near-linear when the order barely changes) */
static void insertion_sort(mr_collision *c) {
  int *o = c->order;
  for (int i = 1; i < c->nbounded; ++i) {
    int g = o[i], j = i - 1;
    while (j >= 0 && before(c, g, o[j])) {
      o[j + 1] = o[j];
      j--;
    }
    o[j + 1] = g;
  }
}

/* bottom-up merge sort, O(n log n), for the first query and after an axis change */
static void merge_sort(mr_collision *c) {
  int n = c->nbounded, *a = c->order, *t = c->scratch;
  for (int w = 1; w < n; w *= 2) {
    for (int lo = 0; lo < n; lo += 2 * w) {
      int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        t[k++] = before(c, a[j], a[i]) ? a[j++] : a[i++];
      while (i < mid)
        t[k++] = a[i++];
      while (j < hi)
        t[k++] = a[j++];
    }
    memcpy(a, t, (size_t)n * sizeof(int));
  }
}

/* the axis of largest variance of the AABB centres; switch only when clearly better */
static void choose_axis(mr_collision *c) {
  double sum[3] = {0}, sq[3] = {0}, var[3];
  for (int p = 0; p < c->nbounded; ++p) {
    int g = c->bounded[p];
    for (int k = 0; k < 3; ++k) {
      double x = 0.5 * (c->lo[g].v[k] + c->hi[g].v[k]);
      sum[k] += x, sq[k] += x * x;
    }
  }
  int best = 0;
  for (int k = 0; k < 3; ++k) {
    var[k] = sq[k] - sum[k] * sum[k] / (c->nbounded > 0 ? c->nbounded : 1);
    if (var[k] > var[best]) best = k;
  }
  if (!c->have_order || var[best] > 2.0 * var[c->axis]) {
    c->axis = best;
    merge_sort(c);
    c->have_order = 1;
  } else {
    insertion_sort(c);
  }
}

/* ascending sort of a few ints in place (insertion sort; heap sort beyond 16, O(k log k)) */
static void sift_down(int *a, int i, int n) {
  for (int ch; (ch = 2 * i + 1) < n; i = ch) {
    if (ch + 1 < n && a[ch + 1] > a[ch]) ch++;
    if (a[i] >= a[ch]) return;
    int t = a[i];
    a[i] = a[ch], a[ch] = t;
  }
}

static void sort_ints(int *a, int n) {
  if (n > 16) {
    for (int i = n / 2 - 1; i >= 0; --i)
      sift_down(a, i, n);
    for (int e = n - 1; e > 0; --e) {
      int t = a[0];
      a[0] = a[e], a[e] = t;
      sift_down(a, 0, e);
    }
    return;
  }
  for (int i = 1; i < n; ++i) {
    int x = a[i], j = i - 1;
    for (; j >= 0 && a[j] > x; --j)
      a[j + 1] = a[j];
    a[j + 1] = x;
  }
}

/* the boxes in sweep order, contiguous, axes permuted so that the sweep axis comes first */
static void sweep_prepare(mr_collision *c) {
  choose_axis(c);
  int a0 = c->axis, a1 = (a0 + 1) % 3, a2 = (a0 + 2) % 3;
  sweep_box *b = c->sorted;
  for (int p = 0; p < c->nbounded; ++p) {
    int g = c->order[p];
    b[p].lo[0] = c->lo[g].v[a0], b[p].lo[1] = c->lo[g].v[a1], b[p].lo[2] = c->lo[g].v[a2];
    b[p].hi[0] = c->hi[g].v[a0], b[p].hi[1] = c->hi[g].v[a1], b[p].hi[2] = c->hi[g].v[a2];
    b[p].id = g;
  }
}

/* an overlapping pair of the broadphase: kept when its first id lies in [from, to) and the
 * filters allow it; counted per first id in count, stored in cand while there is room */
static void collect(mr_collision *c, int x, int y) {
  int i = x < y ? x : y, j = x < y ? y : x;
  if (i < c->from || i >= c->to || !pair_allowed(c, i, j)) return;
  c->count[i]++;
  if (c->ncand < c->cap_pairs) c->cand[c->ncand] = (mr_geom_pair){i, j};
  c->ncand++;
}

/* the sweep's overlapping pairs */
static void sweep_collect(mr_collision *c) {
  const sweep_box *b = c->sorted;
  for (int p = 0; p < c->nbounded; ++p) {
    const sweep_box *x = &b[p];
    for (int q = p + 1; q < c->nbounded && b[q].lo[0] <= x->hi[0]; ++q) {
      const sweep_box *y = &b[q];
      if (y->lo[1] > x->hi[1] || x->lo[1] > y->hi[1] || y->lo[2] > x->hi[2] || x->lo[2] > y->hi[2])
        continue;
      collect(c, x->id, y->id);
    }
  }
}

/* the tree's pairs of overlapping fat boxes, kept when the tight boxes overlap */
static void tree_visit(void *user, int a, int b) {
  mr_collision *c = user;
  if (overlap(c, a, b)) collect(c, a, b);
}

static void tree_collect(mr_collision *c) {
  bvh_pairs(c->tree, tree_visit, c);
}

/* narrowphase of np stored pairs with first id in [from, to) in (first, second) order:
 * counting sort by first id into buckets, each bucket sorted by second id */
static void emit_sorted(mr_collision *c, int from, int to, int np) {
  int pos = 0;
  for (int i = from; i < to; ++i) {
    int k = c->count[i];
    c->count[i] = pos, pos += k;
  }
  for (int p = 0; p < np; ++p)
    c->cand_j[c->count[c->cand[p].a]++] = c->cand[p].b;
  /* count[i] is now the end of bucket i */
  for (int i = from, start = 0; i < to; start = c->count[i++]) {
    sort_ints(c->cand_j + start, c->count[i] - start);
    for (int q = start; q < c->count[i]; ++q)
      test_pair(c, i, c->cand_j[q]);
  }
}

/* the broadphase's pairs in (first, second) order: collected once into the buffer; when they
 * exceed it, in chunks of first ids whose pairs fit, collecting again for each (a single id has
 * fewer than ngeoms < cap_pairs pairs, so every chunk holds one id at least) */
static void sorted_pairs(mr_collision *c, void (*collect_all)(mr_collision *)) {
  int ng = c->m->ngeoms;
  memset(c->count, 0, (size_t)ng * sizeof(int));
  c->from = 0, c->to = ng, c->ncand = 0;
  collect_all(c);
  if (c->ncand <= c->cap_pairs) {
    emit_sorted(c, 0, ng, c->ncand);
    return;
  }
  for (int from = 0, to; from < ng; from = to) {
    long sum = 0;
    for (to = from; to < ng && sum + c->count[to] <= c->cap_pairs; ++to)
      sum += c->count[to];
    if (to == from) to = from + 1;
    memset(c->count + from, 0, (size_t)(to - from) * sizeof(int));
    c->from = from, c->to = to, c->ncand = 0;
    collect_all(c);
    emit_sorted(c, from, to, c->ncand);
  }
}

static void sweep(mr_collision *c) {
  sweep_prepare(c);
  sorted_pairs(c, sweep_collect);
}

/* the tree: every box refitted (its leaf reinserted when it leaves its fat box), a top-down
 * rebuild when due, then the self-traversal */
static void tree(mr_collision *c) {
  for (int p = 0; p < c->nbounded; ++p) {
    int g = c->bounded[p];
    bvh_update(c->tree, g, c->lo[g].v, c->hi[g].v);
  }
  bvh_refresh(c->tree);
  sorted_pairs(c, tree_collect);
}

static void brute(mr_collision *c) {
  for (int p = 0; p < c->nbounded; ++p)
    for (int q = p + 1; q < c->nbounded; ++q) {
      int i = c->bounded[p], j = c->bounded[q];
      if (overlap(c, i, j) && pair_allowed(c, i, j)) test_pair(c, i, j);
    }
}

mr_status mr_collision_detect_geoms(mr_collision *c, const mr_se3 *Xg, mr_error *err) {
  const mr_model *m = c->m;
  memset(&c->stats, 0, sizeof c->stats);
  c->ncontacts = 0, c->npairs = 0;
  for (int i = 0; i < m->ngeoms; ++i) {
    c->X[i] = Xg[i];
    world_aabb(c, i);
  }
  if (c->kind == MR_BROADPHASE_BRUTE)
    brute(c);
  else if (c->kind == MR_BROADPHASE_TREE)
    tree(c);
  else
    sweep(c);
  /* unbounded geometries (ground) second, so that normals point away from them */
  for (int u = 0; u < c->nunbounded; ++u)
    for (int p = 0; p < c->nbounded; ++p) {
      int g = c->bounded[p], h = c->unbounded[u];
      if (pair_allowed(c, g, h) && reaches_unbounded(c, g, h)) test_pair(c, g, h);
    }
  c->stats.npairs = c->npairs;
  c->stats.ncontacts = c->ncontacts;
  if (c->stats.overflow > 0)
    return mr_error_set(err, MR_ERR_NOMEM,
                        "collision: %d contacts did not fit in max_contacts = %d",
                        c->stats.overflow, c->max_contacts);
  return MR_OK;
}

mr_status mr_collision_detect(mr_collision *c, const mr_se3 *Xb, mr_error *err) {
  const mr_model *m = c->m;
  /* compose into the contact buffer's placement array, then detect */
  for (int i = 0; i < m->ngeoms; ++i) {
    const mr_geom *g = &m->geoms[i];
    c->X[i] = mr_se3_mul(&Xb[g->body], &g->placement);
  }
  return mr_collision_detect_geoms(c, c->X, err);
}

int mr_collision_ncontacts(const mr_collision *c) {
  return c->ncontacts;
}
const mr_contact *mr_collision_contacts(const mr_collision *c) {
  return c->contacts;
}
mr_collision_stats mr_collision_get_stats(const mr_collision *c) {
  return c->stats;
}

int mr_collision_pairs(const mr_collision *c, const mr_geom_pair **pairs) {
  *pairs = c->pairs;
  return c->npairs < c->cap_pairs ? c->npairs : c->cap_pairs;
}

int mr_collide(const mr_geom *ga, const mr_se3 *Xa, const mr_geom *gb, const mr_se3 *Xb,
               double margin, int force_ccd, mr_contact *out, mr_collision_stats *stats) {
  mr_collision_settings s = mr_collision_settings_default();
  shape a = {ga, *Xa}, b = {gb, *Xb};
  margin = fmax(margin, geom_skin(ga) + geom_skin(gb));
  narrow_ctx nc = {margin, force_ccd, s.ccd_max_iter, s.ccd_tolerance, 0, 0, 0};
  raw_contact rc[MR_PAIR_MAX_CONTACTS];
  int n = narrow_collide(&a, &b, &nc, rc);
  if (stats)
    stats->ccd_failures += nc.ccd_failures, stats->unsupported += nc.unsupported,
        stats->out_of_range += nc.out_of_range;
  for (int q = 0; q < n; ++q) {
    mr_contact *ct = &out[q];
    memset(ct, 0, sizeof *ct);
    ct->geom[0] = ct->geom[1] = -1;
    ct->body[0] = ga->body, ct->body[1] = gb->body;
    ct->point = rc[q].p;
    ct->frame = mr_contact_frame(rc[q].n);
    ct->phi = rc[q].phi;
    mr_material_combine(ga, gb, &ct->mu, &ct->restitution, &ct->compliance);
    ct->tangential_compliance = mr_material_combine_tangential(ga, gb);
    ct->feature = rc[q].feature;
    ct->key = (uint64_t)(rc[q].feature & 0xffffff);
  }
  return n;
}
