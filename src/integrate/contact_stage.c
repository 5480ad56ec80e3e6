/* The contact stage (see contact_stage.h). Each island's J, M⁻¹Jᵀ and G live in one pool of
 * doubles, laid out island after island at every step; its g, μ, R, gaps, velocities and
 * restitution targets in per-block arrays at its first block; its solver state (ADMM's y, ρ,
 * eigenvalue estimates, a sparse Cholesky) follows the island into the next step when that
 * step has an island of the same blocks, their keys in the same order, wherever either is
 * numbered. A speculative contact that cannot close within the step sits out its island's solve
 * (the island's problem restricted to its other rows) and is checked against the solution. */
#include "integrate/contact_stage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/consistency.h"
#include "core/linalg.h"
#include "integrate/islands.h"

/* islands with more dofs than this (more than two free bodies, or a robot) are assembled
 * tree-sparse (mr_assembly_subset.sparse); smaller ones densely, which costs less there */
#define SPARSE_MIN_DOFS 12

struct mr_contact_stage {
  int nv, max_blocks;
  mr_islands *groups;
  mr_island_set set;  /* the last grouping */
  double *x;          /* zeroed scratch (nv) */
  double *x4;         /* zeroed scratch of four right-hand sides (4 nv) */
  int *gb_work;       /* tree-sparse products' and the block pattern's scratch (3 nv + 10 blocks) */
  mr_contact_assembly *as;   /* per island: the assembly's views into the pools */
  mr_solver_state *states;   /* per island */
  size_t *gb_bound;          /* per island, a bound on the stored blocks of its G */
  /* last step's islands, found by the next step through its blocks' keys: blocks grouped by
   * island, each block's island, offsets; the step they were solved at, −2 when forgotten */
  int *prev_blocks, *prev_block_island, *prev_first_block, prev_nislands;
  long prev_step;
  int *match;                   /* per island, last step's island it continues, −1 none */
  unsigned char *taken;         /* per island of last step: continued by one of this step */
  mr_solver_state *states_next; /* the states in this step's island order, while reordered */
  /* per block, in island order (3 per block, or 1: mu, phi, rest, kind, nsupport) */
  double *g, *mu, *R, *phi, *vel, *rest, *rebound, *y, *y_prev, *lambda, *c, *lambda_alt, *c_alt,
      *g_first;
  unsigned char *kind;
  int *nsupport;
  /* rows that sit out the solve: per block in island order this step, per block in last step's
   * block order; the restricted problem's arrays (per block, and its G's pool) */
  unsigned char *dormant, *was_dormant, *sub_kind;
  double *sub_g, *sub_R, *sub_vel, *sub_mu, *sub_phi;
  int *sub_rows, *sub_pos, *sub_gb;
  double *sub_G;
  size_t sub_G_cap, sub_gb_cap;
  /* the pools, grown between steps */
  double *mat;  /* J, M⁻¹Jᵀ and G of every island */
  size_t mat_cap;
  int *support; /* the tree-sparse islands' block supports (blocks x dofs of each island) */
  size_t support_cap;
  int *gb_idx;  /* the tree-sparse islands' block-sparse G: row offsets and columns */
  size_t gb_idx_cap;
  mr_arena work; /* the solvers' and the consistent law's workspace */
  mr_consistency_factor *cons; /* the consistent law's sparse factor of the large islands */
  /* what the solver keeps from one step to the next per island (mr_solver_state.keep): the
   * pool, at keep_at[k] for island k (last step's at prev_keep_at), and a second one of the same
   * size that islands move into when they are reordered */
  double *keep, *keep_next;
  size_t keep_cap, *keep_at, *prev_keep_at;
  /* the islands as one problem (mr_contact_stage_problem) */
  double *full_G, *full_g, *full_mu, *full_R, *full_phi, *full_vel;
  unsigned char *full_kind;
  size_t full_cap;
  mr_contact_problem full;
};

/* ---- memory ---- */

/* *p resized to n elements of size z, the new part zeroed; 0, or −1 (p unchanged) */
static int resize(void *p, size_t old, size_t n, size_t z) {
  void **pp = p;
  unsigned char *q = realloc(*pp, n * z);
  if (!q) return -1;
  if (n > old) memset(q + old * z, 0, (n - old) * z);
  *pp = q;
  return 0;
}

/* the per-block and per-island arrays for max_blocks blocks (only grows) */
static mr_status grow_blocks(mr_contact_stage *st, int max_blocks, mr_error *err) {
  if (max_blocks <= st->max_blocks) return MR_OK;
  size_t o = (size_t)st->max_blocks, n = (size_t)max_blocks, d = sizeof(double);
  double **vec3[] = {&st->g,          &st->R,     &st->vel,     &st->y,     &st->y_prev,
                     &st->lambda,     &st->c,     &st->lambda_alt, &st->c_alt, &st->g_first,
                     &st->sub_g,      &st->sub_R, &st->sub_vel};
  double **vec1[] = {&st->mu, &st->phi, &st->rest, &st->rebound, &st->sub_mu, &st->sub_phi};
  int ok = 1;
  for (size_t k = 0; k < sizeof vec3 / sizeof *vec3; ++k)
    ok = ok && !resize(vec3[k], 3 * o, 3 * n, d);
  for (size_t k = 0; k < sizeof vec1 / sizeof *vec1; ++k)
    ok = ok && !resize(vec1[k], o, n, d);
  /* the states: a realloc keeps each state's own sparse Cholesky, which it owns */
  ok = ok && !resize(&st->states, o, n, sizeof *st->states) &&
       !resize(&st->states_next, o, n, sizeof *st->states_next) &&
       !resize(&st->as, o, n, sizeof *st->as) && !resize(&st->gb_bound, o, n, sizeof(size_t)) &&
       !resize(&st->prev_blocks, o, n, sizeof(int)) &&
       !resize(&st->prev_block_island, o, n, sizeof(int)) &&
       !resize(&st->prev_first_block, o + 1, n + 1, sizeof(int)) &&
       !resize(&st->match, o, n, sizeof(int)) && !resize(&st->taken, o, n, 1) &&
       !resize(&st->keep_at, o, n, sizeof(size_t)) &&
       !resize(&st->prev_keep_at, o, n, sizeof(size_t)) && !resize(&st->kind, o, n, 1) &&
       !resize(&st->nsupport, o, n, sizeof(int)) && !resize(&st->dormant, o, n, 1) &&
       !resize(&st->was_dormant, o, n, 1) && !resize(&st->sub_kind, o, n, 1) &&
       !resize(&st->sub_rows, o, n, sizeof(int)) && !resize(&st->sub_pos, o, n, sizeof(int)) &&
       !resize(&st->gb_work, 3 * (size_t)st->nv + 10 * o, 3 * (size_t)st->nv + 10 * n, sizeof(int));
  if (!ok || mr_islands_grow(st->groups, max_blocks, err))
    return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %d blocks", max_blocks);
  st->max_blocks = max_blocks;
  return MR_OK;
}

mr_contact_stage *mr_contact_stage_create(const mr_model *m, int max_blocks) {
  mr_contact_stage *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->nv = m->nv;
  st->prev_step = -2;
  st->groups = mr_islands_create(m, max_blocks);
  st->x = calloc((size_t)(m->nv ? m->nv : 1), sizeof(double));
  st->x4 = calloc(4 * (size_t)(m->nv ? m->nv : 1), sizeof(double));
  st->cons = mr_consistency_factor_create();
  if (!st->groups || !st->x || !st->x4 || !st->cons ||
      grow_blocks(st, max_blocks > 0 ? max_blocks : 1, NULL) ||
      mr_arena_init(&st->work, mr_solver_work_size(8, 0)))
    return mr_contact_stage_free(st), NULL;
  return st;
}

void mr_contact_stage_free(mr_contact_stage *st) {
  if (!st) return;
  for (int i = 0; st->states && i < st->max_blocks; ++i)
    mr_solver_state_release(&st->states[i]);
  mr_islands_free(st->groups);
  mr_arena_destroy(&st->work);
  mr_consistency_factor_free(st->cons);
  void *ps[] = {st->x,
                st->x4,
                st->gb_work,
                st->as,
                st->states,
                st->gb_bound,
                st->prev_blocks,
                st->prev_block_island,
                st->prev_first_block,
                st->match,
                st->taken,
                st->states_next,
                st->g,
                st->mu,
                st->R,
                st->phi,
                st->vel,
                st->rest,
                st->y,
                st->y_prev,
                st->lambda,
                st->c,
                st->lambda_alt,
                st->c_alt,
                st->g_first,
                st->kind,
                st->nsupport,
                st->mat,
                st->support,
                st->gb_idx,
                st->full_G,
                st->full_g,
                st->full_mu,
                st->full_R,
                st->full_phi,
                st->full_vel,
                st->full_kind,
                st->rebound,
                st->dormant,
                st->was_dormant,
                st->sub_kind,
                st->sub_g,
                st->sub_R,
                st->sub_vel,
                st->sub_mu,
                st->sub_phi,
                st->sub_rows,
                st->sub_pos,
                st->sub_gb,
                st->sub_G};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k)
    free(ps[k]);
  free(st->keep), free(st->keep_next), free(st->keep_at), free(st->prev_keep_at);
  free(st);
}

/* the warm-start data go, and the islands they belonged to; a sparse Cholesky stays, reused
 * when its pattern comes back */
void mr_contact_stage_invalidate(mr_contact_stage *st) {
  for (int i = 0; i < st->max_blocks; ++i)
    st->states[i] = (mr_solver_state){.chol = st->states[i].chol};
  st->prev_nislands = 0;
  st->prev_step = -2; /* never the step before one */
}

int mr_contact_stage_islands(const mr_contact_stage *st) {
  return st->set.n;
}

const mr_contact_problem *mr_contact_stage_island(const mr_contact_stage *st, int k,
                                                  const int **blocks) {
  *blocks = st->set.blocks + st->set.first_block[k];
  return &st->as[k].problem;
}

/* does an island of nc blocks over nv dofs store G block-sparse (the assembly's rule)? */
static int stores_blocks(size_t nc, size_t nv) {
  return nv > SPARSE_MIN_DOFS && nc >= MR_SPARSE_G_MIN_NC;
}

/* the matrix pool of an island of nc blocks over nv dofs with at most nnzb stored blocks: J (6
 * rows more: a tree-sparse island's six path columns after it), M⁻¹Jᵀ, and G (dense, or its
 * stored blocks) */
static size_t pool_doubles(size_t nc, size_t nv, size_t nnzb) {
  return (2 * 3 * nc + 6) * nv + 9 * (stores_blocks(nc, nv) ? nnzb : nc * nc);
}

/* the block-sparse G's row offsets and columns for an island of nc blocks */
static size_t pool_gb_ints(size_t nc, size_t nnzb) {
  return nnzb + nc + 1;
}

/* the restricted problem's G (sub doubles) and block-sparse indices (sub_gb ints); 1 when
 * either grew, −1 out of memory */
static int grow_sub(mr_contact_stage *st, size_t sub, size_t sub_gb, mr_error *err) {
  int grew = 0;
  if (sub > st->sub_G_cap) {
    double *p = realloc(st->sub_G, sub * sizeof(double));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu doubles", sub), -1;
    st->sub_G = p, st->sub_G_cap = sub, grew = 1;
  }
  if (sub_gb > st->sub_gb_cap) {
    int *p = realloc(st->sub_gb, sub_gb * sizeof(int));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu ints", sub_gb), -1;
    st->sub_gb = p, st->sub_gb_cap = sub_gb, grew = 1;
  }
  return grew;
}

/* the pools for mat doubles, gb_ints block-sparse indices and work bytes; 1 when any grew */
static int grow_pools(mr_contact_stage *st, size_t mat, size_t gb_ints, size_t work,
                      mr_error *err) {
  int grew = 0;
  if (gb_ints > st->gb_idx_cap) {
    size_t cap = gb_ints + gb_ints / 2;
    int *p = realloc(st->gb_idx, cap * sizeof(int));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu ints", cap), -1;
    st->gb_idx = p, st->gb_idx_cap = cap, grew = 1;
  }
  /* the supports take a third of J's entries */
  size_t ints = mat / 6 + 1;
  if (ints > st->support_cap) {
    int *p = realloc(st->support, ints * sizeof(int));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu ints", ints), -1;
    st->support = p, st->support_cap = ints, grew = 1;
  }
  if (mat > st->mat_cap) {
    size_t cap = mat + mat / 2;
    double *p = realloc(st->mat, cap * sizeof(double));
    if (!p)
      return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu doubles", cap), -1;
    st->mat = p, st->mat_cap = cap, grew = 1;
  }
  if (work > st->work.size) {
    mr_arena_destroy(&st->work);
    if (mr_arena_init(&st->work, work + work / 2))
      return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for the solver workspace"),
             -1;
    grew = 1;
  }
  return grew;
}

/* the kept pools for n doubles (keep's content stays); 1 when they grew, −1 out of memory */
static int grow_keep(mr_contact_stage *st, size_t n, mr_error *err) {
  if (n <= st->keep_cap) return 0;
  double *a = realloc(st->keep, n * sizeof(double)), *b = NULL;
  if (a) st->keep = a, b = realloc(st->keep_next, n * sizeof(double));
  if (!a || !b)
    return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu doubles", n), -1;
  st->keep_next = b, st->keep_cap = n;
  return 1;
}

/* the solver's and the consistent law's workspace for an island */
static size_t island_work(const mr_solver_info *solver, size_t nc, size_t nv, size_t nnzb) {
  size_t w = mr_solver_work_size_for(solver, (int)nc, 0, stores_blocks(nc, nv), nnzb);
  size_t cw = mr_contact_consistent_work_size((int)nc, (int)nv); /* before the solve */
  return cw > w ? cw : w;
}

int mr_contact_stage_reserve_whole(mr_contact_stage *st, const mr_solver_info *solver, int n,
                                   int nv, size_t bytes, mr_error *err) {
  size_t rows = (size_t)n, v = (size_t)nv;
  /* the worst case: one island of every block with every pair coupled */
  size_t mat = pool_doubles(rows, v, rows * rows), work = island_work(solver, rows, v, rows * rows);
  /* and what the solver keeps: at most that of n/k islands of k blocks, k its largest kept */
  size_t keep = 0;
  for (int k = 1; k <= n; ++k) {
    size_t per = mr_solver_keep_size(solver, k);
    if (per > 0) keep = ((size_t)n + (size_t)k - 1) / (size_t)k * per;
  }
  if ((mat + 2 * keep) * sizeof(double) + work > bytes) return 0;
  return grow_blocks(st, n, err) || grow_keep(st, keep, err) < 0 ||
                 grow_pools(st, mat, pool_gb_ints(rows, rows * rows), work, err) < 0
             ? 0
             : 1;
}

mr_status mr_contact_stage_reserve(mr_contact_stage *st, const mr_contact_input *in, int *grew,
                                   mr_error *err) {
  *grew = in->n > st->max_blocks;
  mr_status s = grow_blocks(st, in->n, err);
  if (s) return s;
  st->set = mr_islands_group(st->groups, in->cg, in->n, in->one);
  size_t need = 0, gb = 0, work = 0, sub = 0, sub_gb = 0, keep = 0;
  for (int k = 0; k < st->set.n; ++k) {
    size_t nc = (size_t)(st->set.first_block[k + 1] - st->set.first_block[k]);
    st->keep_at[k] = keep;
    keep += mr_solver_keep_size(in->solver, (int)nc);
    size_t nv = (size_t)(st->set.first_dof[k + 1] - st->set.first_dof[k]);
    size_t nnzb = st->gb_bound[k] = mr_islands_block_bound(st->groups, in->cg, k);
    need += pool_doubles(nc, nv, nnzb);
    gb += pool_gb_ints(nc, nnzb);
    size_t w = island_work(in->solver, nc, nv, nnzb);
    if (w > work) work = w;
    /* the restricted problem: at most the island's G and indices */
    size_t gk = 9 * (stores_blocks(nc, nv) ? nnzb : nc * nc), ik = pool_gb_ints(nc, nnzb);
    sub = gk > sub ? gk : sub, sub_gb = ik > sub_gb ? ik : sub_gb;
    /* an island beyond the consistent law's dense bound: its sparse projection's scratch */
    int r = mr_consistency_dense(nc, nv)
                ? 0
                : mr_consistency_factor_reserve(st->cons, (int)nc, (int)nv);
    if (r < 0) return mr_error_set(err, MR_ERR_NOMEM, "contacts: out of memory for %zu blocks", nc);
    *grew |= r;
  }
  int g = grow_pools(st, need, gb, work, err), h = g < 0 ? g : grow_sub(st, sub, sub_gb, err);
  int q = g < 0 || h < 0 ? -1 : grow_keep(st, keep, err);
  if (g < 0 || h < 0 || q < 0) return MR_ERR_NOMEM;
  *grew |= g | h | q;
  return MR_OK;
}

/* island k's assembly view over the pools and its subset; at: the offsets in the matrix,
 * support and block-sparse index pools */
static void island_view(mr_contact_stage *st, int k, size_t *at, mr_assembly_subset *sub) {
  const mr_island_set *is = &st->set;
  int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
  int d0 = is->first_dof[k], nv = is->first_dof[k + 1] - d0;
  size_t n = 3 * (size_t)nc;
  mr_contact_assembly *a = &st->as[k];
  a->max_contacts = nc;
  a->nv = nv;
  a->J = st->mat + at[0];
  a->MiJt = a->J + (n + 6) * (size_t)nv;
  a->G = a->MiJt + n * (size_t)nv;
  at[0] += pool_doubles((size_t)nc, (size_t)nv, st->gb_bound[k]);
  a->g = st->g + 3 * b0, a->mu = st->mu + b0, a->R = st->R + 3 * b0;
  a->phi = st->phi + b0, a->vel = st->vel + 3 * b0, a->kind = st->kind + b0;
  a->rest = st->rest + b0, a->rebound = st->rebound + b0;
  *sub = (mr_assembly_subset){.blocks = is->blocks + b0,
                              .dofs = is->dofs + d0,
                              .ndofs = nv,
                              .col = is->col,
                              .x = st->x,
                              .x4 = st->x4};
  sub->sparse = nv > SPARSE_MIN_DOFS;
  /* beyond the consistent law's dense bound J is read on the supports alone */
  sub->rows_on_supports = sub->sparse && !mr_consistency_dense((size_t)nc, (size_t)nv);
  sub->support = st->support + at[1];
  sub->nsupport = st->nsupport + b0;
  at[1] += (size_t)nc * (size_t)nv;
  /* a tree-sparse island stores G block-sparse in G's place */
  a->Gb = sub->sparse ? a->G : NULL;
  a->Gb_row = st->gb_idx + at[2];
  a->Gb_col = a->Gb_row + nc + 1;
  a->Gb_cap = st->gb_bound[k];
  a->Gb_work = st->gb_work;
  at[2] += pool_gb_ints((size_t)nc, st->gb_bound[k]);
}

/* ---- warm starts ---- */

/* last step's island that island k continues, −1 none: the one holding its first block's key,
 * with the same keys in the same order, not continued already */
static int previous_island(const mr_contact_stage *st, const mr_contact_input *in, int k) {
  const mr_island_set *is = &st->set;
  int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
  int p = in->prev_index[is->blocks[b0]];
  if (p < 0) return -1;
  int pi = st->prev_block_island[p], p0 = st->prev_first_block[pi];
  if (st->taken[pi] || st->prev_first_block[pi + 1] - p0 != nc) return -1;
  for (int j = 0; j < nc; ++j)
    if (in->keys[is->blocks[b0 + j]] != in->prev_keys[st->prev_blocks[p0 + j]]) return -1;
  return pi;
}

/* the states (and y) moved to the islands that continue them; the other islands' states
 * cleared, keeping the sparse Cholesky factors of the states nobody continues (each owned by
 * one state: a permutation of the first max(nislands, prev_nislands) states) */
static void follow_states(mr_contact_stage *st, const mr_contact_input *in) {
  const mr_island_set *is = &st->set;
  int ni = is->n, np = st->prev_step == in->step - 1 ? st->prev_nislands : 0;
  int nmax = ni > np ? ni : np;
  memset(st->taken, 0, (size_t)nmax);
  for (int k = 0; k < ni; ++k)
    if ((st->match[k] = np > 0 ? previous_island(st, in, k) : -1) >= 0) st->taken[st->match[k]] = 1;
  double *y_prev = st->y;
  st->y = st->y_prev, st->y_prev = y_prev;
  int spare = 0; /* the next state nobody continues */
  for (int k = 0; k < nmax; ++k) {
    int pi = k < ni ? st->match[k] : -1;
    if (pi >= 0) {
      int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
      st->states_next[k] = st->states[pi];
      mr_copy(st->y + 3 * b0, y_prev + 3 * st->prev_first_block[pi], 3 * nc);
      /* a kept factor moves with its island (its size is its own: the rows are the same) */
      if (st->states[pi].keep_n > 0)
        mr_copy(st->keep_next + st->keep_at[k], st->keep + st->prev_keep_at[pi],
                mr_solver_keep_size(in->solver, nc));
      continue;
    }
    while (st->taken[spare])
      ++spare;
    st->states_next[k] = (mr_solver_state){.chol = st->states[spare++].chol};
  }
  memcpy(st->states, st->states_next, (size_t)nmax * sizeof *st->states);
  double *keep = st->keep;
  st->keep = st->keep_next, st->keep_next = keep;
}

/* this step's islands, for the next step's to find */
static void remember_islands(mr_contact_stage *st, const mr_contact_input *in) {
  const mr_island_set *is = &st->set;
  memcpy(st->prev_blocks, is->blocks, (size_t)in->n * sizeof(int));
  memcpy(st->prev_block_island, is->block_island, (size_t)in->n * sizeof(int));
  memcpy(st->prev_first_block, is->first_block, (size_t)(is->n + 1) * sizeof(int));
  memcpy(st->prev_keep_at, st->keep_at, (size_t)is->n * sizeof(size_t));
  st->prev_nislands = is->n;
  st->prev_step = in->step;
}

/* ---- solving ---- */

/* the node of body b in the island's pair graph: −1 for a fixed body (no dof on its path), else
 * its index among the free bodies seen (added to seen, *ns of them); −2 when b is neither fixed
 * nor a free body of its own */
static int pair_node(const mr_model *m, int b, int *seen, int *ns, int cap) {
  if (mr_body_last_dof(m, b) < 0) return -1;
  if (m->bodies[b].parent != 0 || m->bodies[b].joint.type != MR_JOINT_FREE) return -2;
  for (int k = 0; k < *ns; ++k)
    if (seen[k] == b) return k;
  if (*ns == cap) return -2;
  seen[*ns] = b;
  return (*ns)++;
}

/* the island's blocks by body pair when they form a forest of free bodies (contact/consistency.h,
 * mr_consistency_pairs), from the arena; 0 when they do not (another kind of row, an articulated
 * body, a cycle) or out of memory */
static int body_pairs(mr_contact_stage *st, const mr_contact_input *in,
                      const mr_contact_assembly *a, const mr_assembly_subset *sub,
                      mr_consistency_pairs *out) {
  int nc = a->problem.nc, nb = sub->ndofs / 6 + 1; /* free bodies of six dofs each, and one */
  int *pair = mr_arena_alloc(&st->work, (size_t)nc * sizeof *pair);
  int *cols = mr_arena_alloc(&st->work, (size_t)6 * nb * sizeof *cols);
  int *seen = mr_arena_alloc(&st->work, (size_t)nb * sizeof *seen);
  int *root = mr_arena_alloc(&st->work, (size_t)(nb + 1) * sizeof *root);
  int *ends = mr_arena_alloc(&st->work, (size_t)2 * nb * sizeof *ends);
  if (!pair || !cols || !seen || !root || !ends) return 0;
  int ns = 0, np = 0;
  for (int k = 0; k <= nb; ++k)
    root[k] = k; /* union-find over the fixed node (0) and the free bodies (1 + their index) */
  for (int i = 0; i < nc; ++i) {
    const mr_contact_geometry *c = &in->cg[sub->blocks ? sub->blocks[i] : i];
    if (c->type != MR_ROWS_CONTACT || mr_problem_bilateral(&a->problem, i) ||
        mr_problem_box(&a->problem, i))
      return 0;
    int u = pair_node(in->m, c->body1, seen, &ns, nb);
    int v = pair_node(in->m, c->body2, seen, &ns, nb);
    if (u == -2 || v == -2) return 0;
    if (u > v) {
      int t = u;
      u = v, v = t;
    }
    if (v < 0) return 0;
    int q = 0; /* the pair's index: an earlier pair of the same two nodes, or a new one */
    while (q < np && (ends[2 * q] != u || ends[2 * q + 1] != v))
      ++q;
    if (q == np) {
      /* a new pair joins two trees, or closes a cycle */
      int ru = u + 1, rv = v + 1;
      while (root[ru] != ru)
        ru = root[ru];
      while (root[rv] != rv)
        rv = root[rv];
      if (ru == rv || np == nb) return 0;
      root[ru] = rv;
      ends[2 * np] = u, ends[2 * np + 1] = v;
      /* the six dofs of the pair's free body (v ≥ 0: u may be the fixed node) */
      int first = in->m->bodies[seen[v]].joint.idx_v;
      for (int t = 0; t < 6; ++t)
        cols[6 * np + t] = sub->col[first + t];
      ++np;
    }
    pair[i] = q;
  }
  *out = (mr_consistency_pairs){np, pair, cols};
  return 1;
}

/* island k's correction made consistent (contact/consistency.h), the free velocity gathered at
 * its columns of J (both assemblies fill a->J with the island's rows), pair by pair when its
 * bodies are a forest of free bodies, through the sparse factor over its supports when it is
 * beyond the dense bound. A correction of norm within 0.1 ε_abs / max(1 N, the largest force of
 * the island's warm start) is left as it is: its part outside S, no larger, changes the
 * all-sticking candidate's criterion by at most a tenth of the tolerance (a resting column's
 * correction is the round-off of its gaps, 1e-4 ε_abs). Beyond the dense bound one
 * within ten times ε_abs is: a resting contact's correction is the residual the last solve left
 * in its velocity (its gap after the step is that residual times Δt²), within the tolerance the
 * criterion admits, where the piles' push-outs are 1e6 times larger and more (docs/solvers.md,
 * "Large islands") */
static void make_consistent(mr_contact_stage *st, const mr_contact_input *in, int k,
                            mr_contact_assembly *a, const mr_assembly_subset *sub, double band,
                            mr_contact_output *out) {
  double t = mr_stage_clock(in->timed);
  mr_arena_reset(&st->work, 0);
  size_t nv = (size_t)sub->ndofs;
  double *vf = mr_arena_doubles(&st->work, nv);
  for (size_t j = 0; vf && j < nv; ++j)
    vf[sub->col[sub->dofs[j]]] = in->vf[sub->dofs[j]];
  mr_consistency_pairs pairs;
  int n = 3 * a->problem.nc, small = mr_consistency_dense((size_t)a->problem.nc, nv);
  /* one pair (or one block): the whole projection is the pair's own, over the same columns */
  int by_pairs =
      vf && small && a->problem.nc > 1 && body_pairs(st, in, a, sub, &pairs) && pairs.npairs > 1;
  const double *lam = st->lambda + 3 * (size_t)st->set.first_block[k];
  double fmax_warm = 1.0;
  for (int i = 0; i < n; ++i)
    fmax_warm = fmax(fmax_warm, fabs(lam[i]));
  mr_consistency_options opt = {0.1 * in->settings->eps_abs / fmax_warm,
                                sub->support,
                                sub->nsupport,
                                sub->ndofs,
                                sub->col,
                                10.0 * in->settings->eps_abs,
                                sub->sparse ? st->cons : NULL};
  if (vf) mr_contact_consistent(a, vf, band, by_pairs ? &pairs : NULL, &opt, &st->work);
  mr_arena_reset(&st->work, 0);
  out->t_consistency += mr_stage_clock(in->timed) - t;
}

/* the registry's solver on a problem with settings set, from an emptied workspace, timed by
 * the registry itself (stats->time_us, its runs' wall time: no second pair of clock reads per
 * island); retry 0 (a fixed budget) without mr_solve's cold retry of a warm start */
static mr_status solve(mr_contact_stage *st, const mr_contact_input *in,
                       const mr_solver_settings *set, const mr_contact_problem *p,
                       mr_solver_state *state, double *lambda, double *c, mr_solver_stats *stats,
                       mr_contact_output *out, mr_error *err) {
  mr_arena_reset(&st->work, 0);
  mr_solver_settings once = *set;
  once.no_cold_retry |= !(in->retry > 0.0);
  mr_status s = mr_solve(in->solver->name, p, &once, state, &st->work, lambda, c, stats, err);
  if (in->timed && s == MR_OK) out->t_solver += stats->time_us;
  return s;
}

/* Island k solved again without the push-out of penetrations (band and rest depth 0:
 * penetrating contacts and limits only stop approaching), kept when its criterion is lower.
 * Pushing out is a rigid motion only when the bodies can make it: a kinematic loop locked by
 * other rows (an arm on its world root whose hand is on the ground, its shoulder on a limit)
 * makes the problem infeasible and the forces grow without bound, while v_N ≥ 0 is always
 * feasible (v = 0 meets it). */
static mr_status solve_without_push_out(mr_contact_stage *st, const mr_contact_input *in,
                                        const mr_solver_settings *set, int k,
                                        const mr_assembly_subset *sub, mr_solver_stats *stats,
                                        mr_contact_output *out, mr_error *err) {
  mr_assembly_settings as = *in->assembly;
  if (as.band == 0.0 && as.rest_depth == 0.0) return MR_OK;
  /* the retry draws on what the first solve left of the island's budget */
  mr_solver_settings rest = *set;
  rest.max_iter = set->max_iter - stats->iterations;
  if (rest.max_iter <= 0 || mr_solver_late(set)) return MR_OK;
  as.band = as.rest_depth = 0.0;
  mr_contact_assembly *a = &st->as[k];
  int b0 = st->set.first_block[k], n = 3 * a->max_contacts;
  double *g_first = st->g_first + 3 * b0, *lam = st->lambda_alt + 3 * b0, *c = st->c_alt + 3 * b0;
  mr_copy(g_first, a->g, n); /* only g depends on the band: J, M⁻¹Jᵀ and G stay */
  mr_status s = mr_contact_assemble_subset(in->m, in->d, in->cg, sub, a->max_contacts, in->v,
                                           in->vf, &as, a, err);
  if (s) return s;
  make_consistent(st, in, k, a, sub, as.band, out);
  mr_solver_stats st2;
  mr_zero(lam, n);
  st->states[k].valid = 0;
  memset(st->dormant + b0, 0, (size_t)a->max_contacts); /* every row solved */
  if ((s = solve(st, in, &rest, &a->problem, &st->states[k], lam, c, &st2, out, err))) return s;
  /* the time of both runs, whichever is kept */
  double time_us = st2.time_us + stats->time_us;
  if (!(st2.eps_abs < stats->eps_abs)) {
    mr_copy(a->g, g_first, n); /* keep the first solution and its problem */
    stats->time_us = time_us;
    return MR_OK;
  }
  mr_copy(st->lambda + 3 * b0, lam, n);
  mr_copy(st->c + 3 * b0, c, n);
  st2.iterations += stats->iterations, st2.time_us = time_us;
  st2.budget = !st2.converged && (st2.budget || stats->budget);
  *stats = st2;
  return MR_OK;
}

/* ---- speculative rows that sit out the solve ---- */

/* Whether row i of island k (block `block`) sits out the island's solve: a speculative contact
 * (its gap Φ beyond the collision margin, no impact decided) whose free motion closes less than
 * half of its gap within the step: the free end-of-step gap Φ + Δt J_N v_f = Δt² g_N is at
 * least Φ/2. Such a row carries no force unless another row's impulse closes it, which
 * still_open checks on the solution. Solving without it spares the solvers the rows they
 * cannot use (docs/physics.md, "Speculative contacts"). */
static int sits_out(const mr_contact_input *in, const mr_contact_assembly *a, int i, int block) {
  double phi = a->phi[i], dt = in->assembly->dt;
  return in->cg[block].type == MR_ROWS_CONTACT && a->kind[i] == MR_KIND_CONTACT &&
         phi > in->margin && a->rest[i] == 0.0 && a->rebound[i] == 0.0 &&
         dt * dt * a->g[3 * i + 2] >= 0.5 * phi;
}

/* whether zero force is a solution at a row of velocity c (t₁, t₂, n) under the solver's model:
 * c in the dual cone of the zero force's (the NCP and RaiSim: c_N ≥ 0, the de Saxcé term
 * cancelling the tangential part; the CCP and the LCP, whose dual cones are narrower: c_N ≥
 * μ (|c_t1| + |c_t2|), which holds for K_μ* and every pyramid inside K_μ) */
static int still_open(const mr_solver_info *solver, double mu, const double *c) {
  int convex = strcmp(solver->model, "CCP") == 0 || strcmp(solver->model, "LCP") == 0;
  return c[2] >= (convex ? mu * (fabs(c[0]) + fabs(c[1])) : 0.0);
}

/* island k's rows that sit out (st->dormant at its blocks, sub_rows the others and sub_pos
 * their positions, −1 for a row out); the number of rows left in */
static int mark_rows(mr_contact_stage *st, const mr_contact_input *in, int k) {
  const mr_contact_assembly *a = &st->as[k];
  int b0 = st->set.first_block[k], nc = a->max_contacts, m = 0;
  int on = isfinite(in->margin) && strcmp(in->solver->model, "soft") != 0;
  for (int i = 0; i < nc; ++i) {
    int out = on && sits_out(in, a, i, st->set.blocks[b0 + i]);
    st->dormant[b0 + i] = (unsigned char)out;
    st->sub_pos[b0 + i] = out ? -1 : m;
    if (!out) st->sub_rows[b0 + m++] = i;
  }
  return m;
}

/* whether island k's rows out differ from last step's at the same blocks: a solver state kept
 * across steps (ADMM's y, ccp-newton's velocity, the eigenvalue estimates) belongs to the
 * problem it was computed on */
static int rows_changed(const mr_contact_stage *st, const mr_contact_input *in, int k) {
  int b0 = st->set.first_block[k], b1 = st->set.first_block[k + 1];
  for (int j = b0; j < b1; ++j) {
    int p = in->prev_index[st->set.blocks[j]];
    if ((p >= 0 ? st->was_dormant[p] : 0) != st->dormant[j]) return 1;
  }
  return 0;
}

/* island problem p restricted to its m rows sub_rows (sub_pos the inverse map), into the
 * stage's restricted arrays at block b0 */
static void restrict_problem(mr_contact_stage *st, const mr_contact_problem *p, int b0, int m,
                             mr_contact_problem *q) {
  const int *rows = st->sub_rows + b0, *pos = st->sub_pos + b0;
  double *g = st->sub_g + 3 * b0, *R = st->sub_R + 3 * b0, *vel = st->sub_vel + 3 * b0;
  double *mu = st->sub_mu + b0, *phi = st->sub_phi + b0;
  unsigned char *kind = st->sub_kind + b0;
  for (int a = 0; a < m; ++a) {
    int i = rows[a];
    mr_copy(g + 3 * a, p->g + 3 * i, 3);
    if (p->R) mr_copy(R + 3 * a, p->R + 3 * i, 3);
    if (p->vel) mr_copy(vel + 3 * a, p->vel + 3 * i, 3);
    mu[a] = p->mu[i];
    if (p->phi) phi[a] = p->phi[i];
    if (p->kind) kind[a] = p->kind[i];
  }
  *q = *p;
  q->nc = m;
  q->g = g, q->mu = mu;
  q->R = p->R ? R : NULL, q->vel = p->vel ? vel : NULL, q->phi = p->phi ? phi : NULL;
  q->kind = p->kind ? kind : NULL;
  if (p->G) { /* dense: the kept rows and columns */
    size_t n = 3 * (size_t)p->nc, r = 3 * (size_t)m;
    for (int a = 0; a < m; ++a)
      for (int ra = 0; ra < 3; ++ra)
        for (int b = 0; b < m; ++b)
          mr_copy(st->sub_G + (3 * a + ra) * r + 3 * b, p->G + (3 * rows[a] + ra) * n + 3 * rows[b],
                  3);
    q->G = st->sub_G;
    return;
  }
  int *row = st->sub_gb, *col = row + m + 1, nnzb = 0; /* block-sparse: the kept blocks */
  for (int a = 0; a < m; ++a) {
    row[a] = nnzb;
    for (int t = p->Gb_row[rows[a]]; t < p->Gb_row[rows[a] + 1]; ++t) {
      if (pos[p->Gb_col[t]] < 0) continue;
      col[nnzb] = pos[p->Gb_col[t]];
      mr_copy(st->sub_G + 9 * (size_t)nnzb++, p->Gb + 9 * (size_t)t, 9);
    }
  }
  row[m] = nnzb;
  q->nnzb = nnzb, q->Gb_row = row, q->Gb_col = col, q->Gb = st->sub_G;
}

/* Island k solved without its rows that sit out (m rows left in), then those rows' velocities
 * at zero force; when one of them would close (still_open fails), the island is solved again
 * with every row, from the forces found, on what is left of its budget. */
static mr_status solve_restricted(mr_contact_stage *st, const mr_contact_input *in,
                                  const mr_solver_settings *set, int k, int m,
                                  mr_solver_state *state, mr_solver_stats *stats,
                                  mr_contact_output *out, mr_error *err) {
  mr_contact_assembly *a = &st->as[k];
  int b0 = st->set.first_block[k], nc = a->max_contacts;
  const int *rows = st->sub_rows + b0;
  double *lam = st->lambda + 3 * b0, *c = st->c + 3 * b0;
  double *ls = st->lambda_alt + 3 * b0, *cs = st->c_alt + 3 * b0, *cf = st->g_first + 3 * b0;
  mr_contact_problem q;
  restrict_problem(st, &a->problem, b0, m, &q);
  for (int r = 0; r < m; ++r)
    mr_copy(ls + 3 * r, lam + 3 * rows[r], 3);
  mr_status s = MR_OK;
  if (m > 0)
    s = solve(st, in, set, &q, state, ls, cs, stats, out, err);
  else
    *stats = (mr_solver_stats){.converged = 1};
  if (s) return s;
  mr_zero(lam, 3 * (size_t)nc);
  for (int r = 0; r < m; ++r)
    mr_copy(lam + 3 * rows[r], ls + 3 * r, 3), mr_copy(c + 3 * rows[r], cs + 3 * r, 3);
  mr_problem_velocity(&a->problem, lam, cf);
  int closes = 0;
  for (int i = 0; i < nc; ++i)
    if (st->dormant[b0 + i]) {
      mr_copy(c + 3 * i, cf + 3 * i, 3);
      closes |= !still_open(in->solver, a->mu[i], c + 3 * i);
    }
  if (!closes) return MR_OK;
  mr_solver_settings again = *set;
  again.max_iter = set->max_iter - stats->iterations;
  if (again.max_iter <= 0 || mr_solver_late(set)) { /* no budget left: the forces found */
    stats->converged = 0, stats->budget = 1;
    return MR_OK;
  }
  memset(st->dormant + b0, 0, (size_t)nc);
  state->valid = 0, state->eig_max = state->eig_min = 0.0;
  mr_solver_stats s2;
  if ((s = solve(st, in, &again, &a->problem, state, lam, c, &s2, out, err))) return s;
  s2.iterations += stats->iterations, s2.time_us += stats->time_us;
  s2.budget = !s2.converged && (s2.budget || stats->budget);
  *stats = s2;
  return MR_OK;
}

/* assemble and solve island k; λ warm start and results in island order */
static mr_status solve_island(mr_contact_stage *st, const mr_contact_input *in,
                              const mr_solver_settings *set, int k, size_t *at, double *dv,
                              mr_solver_stats *stats, mr_contact_output *out, mr_error *err) {
  mr_assembly_subset sub;
  island_view(st, k, at, &sub);
  mr_contact_assembly *a = &st->as[k];
  int b0 = st->set.first_block[k], nc = a->max_contacts;
  mr_status s = mr_contact_assemble_subset(in->m, in->d, in->cg, &sub, nc, in->v, in->vf,
                                           in->assembly, a, err);
  if (s) return s;
  make_consistent(st, in, k, a, &sub, in->assembly->band, out);
  mr_solver_state *state = &st->states[k];
  state->y = st->y + 3 * b0;
  state->cap = 3 * nc;
  state->keep_cap = mr_solver_keep_size(in->solver, nc);
  state->keep = state->keep_cap > 0 ? st->keep + st->keep_at[k] : NULL;
  int m = mark_rows(st, in, k);
  if (rows_changed(st, in, k)) /* a state of another problem: start it afresh */
    state->valid = 0, state->eig_max = state->eig_min = 0.0, state->keep_n = 0;
  if (m < nc)
    s = solve_restricted(st, in, set, k, m, state, stats, out, err);
  else
    s = solve(st, in, set, &a->problem, state, st->lambda + 3 * b0, st->c + 3 * b0, stats, out,
              err);
  /* a solve that failed by far (not one that stopped just short of its tolerance) */
  if (!s && in->retry > 0.0 && !stats->converged && stats->eps_abs > in->retry * set->eps_abs)
    s = solve_without_push_out(st, in, set, k, &sub, stats, out, err);
  if (s) return s;
  double t = mr_stage_clock(in->timed);
  mr_contact_impulse_velocity_subset(in->m, in->d, a, &sub, st->lambda + 3 * b0,
                                     in->assembly->dt, dv);
  out->t_impulse += mr_stage_clock(in->timed) - t;
  return MR_OK;
}

/* the deadline of an island of nk of the left blocks still to solve (of n in the step), the
 * step's budget ending at t_end: its share of the time left, and at least a tenth of its share
 * of the whole budget (so an island after a slow one still gets some sweeps; the step then
 * takes at most 1.1 max_time) */
static double island_deadline(const mr_solver_settings *set, double t_end, int nk, int left,
                              int n) {
  double now = mr_solver_clock(), share = (double)nk / (double)(left > 0 ? left : 1);
  double floor = 0.1 * set->max_time * (double)nk / (double)(n > 0 ? n : 1);
  return now + fmax(share * (t_end - now), floor);
}

/* the iterations of an island when work contact-iterations are left for the left blocks still
 * to solve: the same for each block, at least MR_WORK_MIN_ITER, at most max_iter */
static int island_iterations(int max_iter, double work, int left) {
  double it = fmax(floor(work / (double)(left > 0 ? left : 1)), MR_WORK_MIN_ITER);
  return it < max_iter ? (int)it : max_iter;
}

mr_status mr_contact_stage_solve(mr_contact_stage *st, const mr_contact_input *in, double *lambda,
                                 double *c, double *dv, mr_contact_output *out, mr_error *err) {
  const mr_island_set *is = &st->set;
  int n = in->n;
  *out = (mr_contact_output){.islands = is->n, .converged = 1};
  mr_zero(dv, st->nv);
  if (!in->solver->solve) return MR_ERR_UNSUPPORTED;
  /* every block last step's: the same islands in the same order keep their states */
  if (!in->same || st->prev_step != in->step - 1) follow_states(st, in);
  for (int j = 0; j < n; ++j) /* the warm start in island order */
    mr_copy(st->lambda + 3 * j, lambda + 3 * is->blocks[j], 3);
  size_t at[3] = {0, 0, 0}; /* in the matrix, support and block-sparse index pools */
  /* the step's budgets: work and time shared by the islands in proportion to their blocks */
  mr_solver_settings set = *in->settings;
  double t_end = set.max_time > 0.0 ? mr_solver_clock() + set.max_time : 0.0;
  double work = set.max_work;
  for (int k = 0, left = n; k < is->n; ++k) {
    mr_solver_stats sk;
    int nk = is->first_block[k + 1] - is->first_block[k];
    if (t_end > 0.0) set.deadline = island_deadline(&set, t_end, nk, left, n);
    if (work > 0.0)
      set.max_iter = set.work_iter = island_iterations(in->settings->max_iter, work, left);
    left -= nk;
    mr_status s = solve_island(st, in, &set, k, at, dv, &sk, out, err);
    if (s) return s;
    if (work > 0.0) work = fmax(work - (double)sk.iterations * nk, 1.0); /* 0: no budget */
    out->budget += sk.budget;
    out->iterations_sum += sk.iterations;
    out->iterations = sk.iterations > out->iterations ? sk.iterations : out->iterations;
    out->converged &= sk.converged;
    out->eps_abs = sk.eps_abs > out->eps_abs ? sk.eps_abs : out->eps_abs;
    out->solve_us += sk.time_us;
  }
  for (int j = 0; j < n; ++j) {
    mr_copy(lambda + 3 * is->blocks[j], st->lambda + 3 * j, 3);
    mr_copy(c + 3 * is->blocks[j], st->c + 3 * j, 3);
    st->was_dormant[is->blocks[j]] = st->dormant[j];
  }
  remember_islands(st, in);
  return MR_OK;
}

void mr_contact_stage_rebounds(const mr_contact_stage *st, int n, double *rebound) {
  for (int j = 0; j < n; ++j)
    rebound[st->set.blocks[j]] = st->rebound[j];
}

/* ---- the islands as one problem ---- */

static int grow_full(mr_contact_stage *st, int nblocks) {
  if ((size_t)nblocks <= st->full_cap) return 0;
  size_t nb = (size_t)nblocks, n = 3 * nb;
  free(st->full_G), free(st->full_g), free(st->full_mu), free(st->full_R);
  free(st->full_phi), free(st->full_vel), free(st->full_kind);
  st->full_G = malloc(n * n * sizeof(double));
  st->full_g = malloc(n * sizeof(double));
  st->full_mu = malloc(nb * sizeof(double));
  st->full_R = malloc(n * sizeof(double));
  st->full_phi = malloc(nb * sizeof(double));
  st->full_vel = malloc(n * sizeof(double));
  st->full_kind = malloc(nb);
  st->full_cap = nb;
  if (st->full_G && st->full_g && st->full_mu && st->full_R && st->full_phi && st->full_vel &&
      st->full_kind)
    return 0;
  st->full_cap = 0;
  return -1;
}

const mr_contact_problem *mr_contact_stage_problem(mr_contact_stage *st, int nblocks, double dt) {
  if (grow_full(st, nblocks)) return NULL;
  const mr_island_set *is = &st->set;
  int n = 3 * nblocks, bilateral = 0;
  if (nblocks > 0) mr_zero(st->full_G, (size_t)n * n);
  for (int k = 0; nblocks > 0 && k < is->n; ++k) {
    const mr_contact_assembly *a = &st->as[k];
    int b0 = is->first_block[k], nc = a->max_contacts;
    for (int i = 0; i < nc; ++i) {
      int bi = is->blocks[b0 + i];
      for (int j = 0; j < nc; ++j) {
        int bj = is->blocks[b0 + j];
        double B[9];
        mr_problem_G_block(&a->problem, i, j, B);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            st->full_G[(size_t)(3 * bi + r) * n + 3 * bj + c] = B[3 * r + c];
      }
      for (int r = 0; r < 3; ++r) {
        st->full_g[3 * bi + r] = a->g[3 * i + r];
        st->full_R[3 * bi + r] = a->R[3 * i + r];
        st->full_vel[3 * bi + r] = a->vel[3 * i + r];
      }
      st->full_mu[bi] = a->mu[i];
      st->full_phi[bi] = a->phi[i];
      st->full_kind[bi] = a->kind[i];
      bilateral |= a->kind[i] != MR_KIND_CONTACT; /* a bilateral or box row needs kinds */
    }
  }
  mr_contact_problem *p = &st->full;
  memset(p, 0, sizeof *p);
  p->nc = nblocks;
  p->G = st->full_G, p->g = st->full_g, p->mu = st->full_mu, p->R = st->full_R;
  p->phi = st->full_phi, p->vel = st->full_vel;
  p->dt = dt;
  p->kind = bilateral ? st->full_kind : NULL;
  return p;
}
