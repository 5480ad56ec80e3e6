/* Islands (see islands.h). A tree is the subtree under the highest body with dofs on a body's
 * path to the world; bodies with no dof on that path are static and join nothing. The trees of
 * a block's bodies (or dofs) are united by union-find over arrays sized at creation; blocks and
 * dofs are then grouped by island in their global order (a stable counting sort), so an
 * island's J, M⁻¹Jᵀ and G are computed by the same operations as the whole model's problem
 * restricted to it, and its Gauss-Seidel sweeps visit its blocks in the same order. */
#include "integrate/islands.h"

#include <stdlib.h>
#include <string.h>

#include "contact/consistency.h"
#include "core/linalg.h"
#include "integrate/sim_internal.h"

/* a simulator of at most ISLANDS_RESERVE_TREES kinematic trees (robots, a few free bodies: its
 * contacts may all couple through one tree, so the bound's square is a real case) whose bound on
 * blocks makes the pools (J, M⁻¹Jᵀ, G and the solver's workspace for one problem of every block,
 * every pair coupled) smaller than ISLANDS_RESERVE_BYTES reserves them at creation and never
 * grows them; any other (stacks, piles, many bodies) reserves them at creation for the islands
 * of its initial state, half again (mr_islands_reserve_present: memory proportional to the
 * contacts present), and grows them, by half again, only when a step meets larger islands than
 * any before */
#define ISLANDS_RESERVE_BYTES ((size_t)128 << 20)
#define ISLANDS_RESERVE_TREES 8

/* islands with more dofs than this (more than two free bodies, or a robot) are assembled
 * tree-sparse (mr_assembly_subset.sparse); smaller ones densely, which costs less there */
#define SPARSE_MIN_DOFS 12

struct mr_islands {
  int nv, max_rows, ntrees;
  int *dof_tree;  /* tree of each dof (nv), from the model */
  int *body_tree; /* tree of each body, −1 static (nbodies) */
  int *uf;       /* union-find parents over trees (ntrees) */
  int *tree_island; /* island of a root tree this step, −1 none (ntrees) */
  int *block_tree;  /* a tree of each block, −1 for a block on static bodies only (max_rows) */
  int *block_island;             /* max_rows */
  int *first_block, *first_dof;  /* per island, nislands + 1 offsets */
  int *blocks;                   /* block indices grouped by island (max_rows) */
  int *dofs, *col;               /* dofs grouped by island (nv); column of each dof (nv) */
  double *x;                     /* zeroed scratch (nv) */
  int nislands;
  int iterations; /* the last solve's iterations summed over its islands */
  /* per island: the assembly views and solver states; pools in island order */
  mr_contact_assembly *as;
  mr_solver_state *states;
  /* the last solve's islands, which the next step's find by their blocks' keys (s->prev_keys):
   * blocks grouped by island, each block's island, offsets (max_rows, max_rows, max_rows + 1);
   * the step they were solved at (mr_sim steps before it), −2 when forgotten */
  int *prev_blocks, *prev_block_island, *prev_first_block, prev_nislands;
  long prev_step;
  int *match;                   /* per island, last step's island it continues, −1 none */
  unsigned char *taken;         /* per island of last step: continued by one of this step */
  mr_solver_state *states_next; /* the states in this step's island order, while reordered */
  double *y_prev;               /* last step's y, in its island order (3 max_rows) */
  double *mat; /* J, M⁻¹Jᵀ and G of every island */
  size_t mat_cap;
  int *support; /* the tree-sparse islands' block supports (blocks x dofs of each island) */
  size_t support_cap;
  int *nsupport; /* max_rows */
  int *gb_idx;   /* the tree-sparse islands' block-sparse G: row offsets and columns */
  size_t gb_idx_cap;
  int *gb_work;  /* the tree-sparse products' and the block pattern's scratch (3 nv + 10 max_rows) */
  int *tree_count;  /* blocks touching each tree in the island being bounded (ntrees) */
  size_t *gb_bound; /* per island, a bound on the stored blocks of its G (max_rows) */
  double *g, *mu, *R, *phi, *vel, *y, *lambda, *c, *lambda_alt, *c_alt, *g_first;
  unsigned char *kind;
  /* the islands as one problem (mr_islands_problem) */
  double *full_G, *full_g, *full_mu, *full_R, *full_phi, *full_vel;
  unsigned char *full_kind;
  size_t full_cap; /* blocks */
  mr_contact_problem full;
};

/* the tree of each body: the highest body with dofs on its path, −1 when none */
static int *body_trees(const mr_model *m) {
  int *tree = malloc((size_t)m->nbodies * sizeof *tree);
  if (!tree) return NULL;
  tree[0] = -1;
  for (int b = 1; b < m->nbodies; ++b) {
    int p = m->bodies[b].parent, up = p > 0 ? tree[p] : -1;
    tree[b] = up >= 0 ? up : (m->bodies[b].joint.nv > 0 ? b : -1);
  }
  return tree;
}

mr_islands *mr_islands_create(const mr_model *m, int max_rows) {
  mr_islands *is = calloc(1, sizeof *is);
  int *tree = body_trees(m);
  if (!is || !tree) return free(is), free(tree), NULL;
  is->nv = m->nv;
  is->max_rows = max_rows;
  /* number the trees by their root body */
  int nb = m->nbodies, nv = m->nv, nr = max_rows > 0 ? max_rows : 1, n3 = 3 * nr;
  int *tree_index = malloc((size_t)nb * sizeof *tree_index);
  is->dof_tree = malloc((size_t)(nv ? nv : 1) * sizeof(int));
  if (!tree_index || !is->dof_tree) {
    free(tree), free(tree_index);
    mr_islands_free(is);
    return NULL;
  }
  for (int b = 0; b < nb; ++b)
    tree_index[b] = tree[b] == b ? is->ntrees++ : -1;
  for (int k = 0; k < nv; ++k)
    is->dof_tree[k] = tree_index[tree[m->dof_body[k]]];
  /* the body → tree map the step reads, in tree_index's place */
  for (int b = 0; b < nb; ++b)
    tree_index[b] = tree[b] >= 0 ? tree_index[tree[b]] : -1;
  free(tree);
  is->body_tree = tree_index;
  int nt = is->ntrees ? is->ntrees : 1, nvc = nv ? nv : 1;
  is->uf = malloc((size_t)nt * sizeof(int));
  is->tree_island = malloc((size_t)nt * sizeof(int));
  is->block_tree = malloc((size_t)nr * sizeof(int));
  is->block_island = malloc((size_t)nr * sizeof(int));
  is->first_block = malloc((size_t)(nr + 1) * sizeof(int));
  is->first_dof = malloc((size_t)(nr + 1) * sizeof(int));
  is->blocks = malloc((size_t)nr * sizeof(int));
  is->dofs = malloc((size_t)nvc * sizeof(int));
  is->col = malloc((size_t)nvc * sizeof(int));
  is->x = calloc((size_t)nvc, sizeof(double));
  is->as = calloc((size_t)nr, sizeof *is->as);
  is->states = calloc((size_t)nr, sizeof *is->states);
  is->prev_blocks = malloc((size_t)nr * sizeof(int));
  is->prev_block_island = malloc((size_t)nr * sizeof(int));
  is->prev_first_block = malloc((size_t)(nr + 1) * sizeof(int));
  is->match = malloc((size_t)nr * sizeof(int));
  is->taken = malloc((size_t)nr);
  is->states_next = calloc((size_t)nr, sizeof *is->states_next);
  is->prev_step = -2; /* never the step before one */
  double **vecs[] = {&is->g,      &is->mu,     &is->R,          &is->phi,
                     &is->vel,    &is->y,      &is->lambda,     &is->c,
                     &is->lambda_alt, &is->c_alt, &is->g_first, &is->y_prev};
  int ok = is->uf && is->tree_island && is->block_tree && is->block_island && is->first_block &&
           is->first_dof && is->blocks && is->dofs && is->col && is->x && is->as && is->states &&
           is->prev_blocks && is->prev_block_island && is->prev_first_block && is->match &&
           is->taken && is->states_next;
  for (size_t k = 0; k < sizeof vecs / sizeof vecs[0]; ++k)
    ok = ok && (*vecs[k] = calloc((size_t)n3, sizeof(double))) != NULL;
  ok = ok && (is->kind = calloc((size_t)nr, 1)) != NULL;
  ok = ok && (is->nsupport = calloc((size_t)nr, sizeof(int))) != NULL;
  ok = ok && (is->gb_work = malloc((3 * (size_t)nvc + 10 * (size_t)nr) * sizeof(int))) != NULL;
  ok = ok && (is->tree_count = calloc((size_t)nt, sizeof(int))) != NULL;
  ok = ok && (is->gb_bound = calloc((size_t)nr, sizeof(size_t))) != NULL;
  if (!ok) {
    mr_islands_free(is);
    return NULL;
  }
  return is;
}

void mr_islands_free(mr_islands *is) {
  if (!is) return;
  for (int i = 0; is->states && i < is->max_rows; ++i)
    mr_solver_state_release(&is->states[i]);
  void *ps[] = {is->dof_tree,    is->body_tree,  is->uf,
                is->tree_island, is->block_tree, is->block_island,
                is->first_block, is->first_dof,  is->blocks,
                is->dofs,        is->col,        is->x,
                is->as,          is->states,     is->mat,
                is->g,           is->mu,         is->R,
                is->phi,         is->vel,        is->y,
                is->lambda,      is->c,          is->lambda_alt,
                is->c_alt,       is->g_first,    is->kind,
                is->full_G,      is->full_g,     is->full_mu,
                is->full_R,      is->full_phi,   is->full_vel,
                is->full_kind,   is->support,    is->nsupport,
                is->gb_idx,      is->gb_work,    is->tree_count,
                is->gb_bound,    is->prev_blocks, is->prev_block_island,
                is->prev_first_block, is->match, is->taken,
                is->states_next, is->y_prev};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k)
    free(ps[k]);
  free(is);
}

/* the warm-start data go, and the islands they belonged to; a sparse Cholesky stays, reused
 * when its pattern comes back */
void mr_islands_invalidate(mr_islands *is) {
  for (int i = 0; i < is->max_rows; ++i)
    is->states[i] = (mr_solver_state){.chol = is->states[i].chol};
  is->prev_nislands = 0;
  is->prev_step = -2; /* never the step before one */
}

int mr_islands_count(const mr_islands *is) {
  return is->nislands;
}

int mr_islands_iterations(const mr_islands *is) {
  return is->iterations;
}

const mr_contact_problem *mr_islands_island(const mr_islands *is, int k, const int **blocks) {
  *blocks = is->blocks + is->first_block[k];
  return &is->as[k].problem;
}

/* ---- grouping ---- */

static int find(int *uf, int t) {
  while (uf[t] != t)
    t = uf[t] = uf[uf[t]];
  return t;
}

static void unite(int *uf, int a, int b) {
  if (a < 0 || b < 0) return;
  a = find(uf, a), b = find(uf, b);
  if (a != b) uf[a > b ? a : b] = a < b ? a : b;
}

/* the trees a block touches (−1: none) */
static void block_trees(const mr_islands *is, const mr_contact_geometry *g, int *a, int *b) {
  const int *body_tree = is->body_tree;
  if (g->type == MR_ROWS_LIMIT || g->type == MR_ROWS_MIMIC) {
    *a = is->dof_tree[g->dof];
    int two = g->type == MR_ROWS_MIMIC || g->ratio != 0.0;
    *b = two ? is->dof_tree[g->dof2] : -1;
    return;
  }
  *a = body_tree[g->body1];
  *b = body_tree[g->body2];
}

/* islands of the n blocks: block_island, blocks and dofs grouped, col */
static void group(mr_islands *is, const mr_contact_geometry *cg, int n) {
  int nt = is->ntrees, ni = 0;
  for (int t = 0; t < nt; ++t)
    is->uf[t] = t, is->tree_island[t] = -1;
  for (int i = 0; i < n; ++i) {
    int a, b;
    block_trees(is, &cg[i], &a, &b);
    unite(is->uf, a, b);
    is->block_tree[i] = a >= 0 ? a : b;
  }
  /* islands numbered by their first block */
  for (int i = 0; i < n; ++i) {
    int t = is->block_tree[i];
    if (t < 0) {
      is->block_island[i] = ni++; /* static bodies only: an island without dofs */
      continue;
    }
    int r = find(is->uf, t);
    if (is->tree_island[r] < 0) is->tree_island[r] = ni++;
    is->block_island[i] = is->tree_island[r];
  }
  is->nislands = ni;
  /* stable counting sorts of the blocks and of the dofs of the islands' trees */
  memset(is->first_block, 0, (size_t)(ni + 1) * sizeof(int));
  memset(is->first_dof, 0, (size_t)(ni + 1) * sizeof(int));
  for (int i = 0; i < n; ++i)
    is->first_block[is->block_island[i] + 1]++;
  for (int k = 0; k < is->nv; ++k) {
    int t = is->dof_tree[k], isl = t < 0 ? -1 : is->tree_island[find(is->uf, t)];
    is->col[k] = isl; /* the island for now, the column below */
    if (isl >= 0) is->first_dof[isl + 1]++;
  }
  for (int k = 0; k < ni; ++k) {
    is->first_block[k + 1] += is->first_block[k];
    is->first_dof[k + 1] += is->first_dof[k];
  }
  /* block_tree is free now: the cursors of the fills */
  int *cursor = is->block_tree;
  for (int k = 0; k < ni; ++k)
    cursor[k] = is->first_block[k];
  for (int i = 0; i < n; ++i)
    is->blocks[cursor[is->block_island[i]]++] = i;
  for (int k = 0; k < ni; ++k)
    cursor[k] = is->first_dof[k];
  for (int k = 0; k < is->nv; ++k) {
    int isl = is->col[k];
    if (isl < 0) continue;
    is->col[k] = cursor[isl] - is->first_dof[isl];
    is->dofs[cursor[isl]++] = k;
  }
}

/* ---- pools ---- */

/* a bound on the stored blocks of island k's G: blocks i and j are coupled only when they touch
 * a common tree (their kinematic paths then share the tree's root dof), so row i stores at most
 * the blocks touching its (at most two) trees, or its diagonal block alone when it touches none;
 * never more than nc² */
static size_t blocks_bound(mr_islands *is, const mr_contact_geometry *cg, int k) {
  int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0, *count = is->tree_count;
  int a, b;
  for (int j = b0; j < b0 + nc; ++j) { /* clear the counts of the trees touched */
    block_trees(is, &cg[is->blocks[j]], &a, &b);
    if (a >= 0) count[a] = 0;
    if (b >= 0) count[b] = 0;
  }
  for (int j = b0; j < b0 + nc; ++j) { /* blocks per tree */
    block_trees(is, &cg[is->blocks[j]], &a, &b);
    if (a >= 0) count[a]++;
    if (b >= 0 && b != a) count[b]++;
  }
  size_t sum = 0;
  for (int j = b0; j < b0 + nc; ++j) {
    block_trees(is, &cg[is->blocks[j]], &a, &b);
    size_t row = (a >= 0 ? (size_t)count[a] : 0) + (b >= 0 && b != a ? (size_t)count[b] : 0);
    sum += row > 0 ? row : 1;
  }
  return sum < (size_t)nc * (size_t)nc ? sum : (size_t)nc * (size_t)nc;
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

static mr_status grow(mr_sim *s, size_t mat, size_t gb_ints, size_t work, mr_error *err) {
  mr_islands *is = s->isl;
  if (gb_ints > is->gb_idx_cap) {
    size_t cap = gb_ints + gb_ints / 2;
    int *p = realloc(is->gb_idx, cap * sizeof(int));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for %zu ints", cap);
    is->gb_idx = p, is->gb_idx_cap = cap;
  }
  /* the supports take a third of J's entries */
  size_t ints = mat / 6 + 1;
  if (ints > is->support_cap) {
    int *p = realloc(is->support, ints * sizeof(int));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for %zu ints", ints);
    is->support = p, is->support_cap = ints;
  }
  if (mat > is->mat_cap) {
    size_t cap = mat + mat / 2;
    double *p = realloc(is->mat, cap * sizeof(double));
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for %zu doubles", cap);
    is->mat = p, is->mat_cap = cap;
  }
  if (work > s->work.size) {
    mr_arena_destroy(&s->work);
    if (mr_arena_init(&s->work, work + work / 2))
      return mr_error_set(err, MR_ERR_NOMEM, "simulator: out of memory for the solver workspace");
  }
  return MR_OK;
}

mr_status mr_islands_reserve(mr_sim *s, mr_error *err) {
  size_t rows = (size_t)s->max_rows, nv = (size_t)s->m->nv;
  /* the worst case: one island of every block with every pair coupled */
  size_t mat = pool_doubles(rows, nv, rows * rows);
  size_t work = mr_solver_work_size_for(s->solver, s->max_rows, 0, 1, rows * rows);
  size_t cw = mr_contact_consistent_work_size(s->max_rows, (int)nv);
  if (cw > work) work = cw;
  if (s->isl->ntrees > ISLANDS_RESERVE_TREES || mat * sizeof(double) + work > ISLANDS_RESERVE_BYTES)
    return MR_OK;
  return grow(s, mat, pool_gb_ints(rows, rows * rows), work, err);
}

/* make room for this step's islands (their bounds on stored blocks kept for the views);
 * allocates only past the largest step so far */
static mr_status reserve(mr_sim *s, mr_error *err) {
  mr_islands *is = s->isl;
  size_t need = 0, gb = 0, work = 0;
  for (int k = 0; k < is->nislands; ++k) {
    size_t nc = (size_t)(is->first_block[k + 1] - is->first_block[k]);
    size_t nv = (size_t)(is->first_dof[k + 1] - is->first_dof[k]);
    size_t nnzb = is->gb_bound[k] = blocks_bound(is, s->cg, k);
    need += pool_doubles(nc, nv, nnzb);
    gb += pool_gb_ints(nc, nnzb);
    size_t w = mr_solver_work_size_for(s->solver, (int)nc, 0, stores_blocks(nc, nv), nnzb);
    size_t cw = mr_contact_consistent_work_size((int)nc, (int)nv); /* before the solve */
    if (cw > w) w = cw;
    if (w > work) work = w;
  }
  return grow(s, need, gb, work, err);
}

mr_status mr_islands_reserve_present(mr_sim *s, int n, mr_error *err) {
  group(s->isl, s->cg, n);
  mr_status st = reserve(s, err);
  mr_islands_invalidate(s->isl);
  return st;
}

/* island k's assembly view over the pools and its subset; at: the offsets in the matrix,
 * support and block-sparse index pools */
static void island_view(mr_islands *is, int k, size_t *at, mr_assembly_subset *sub) {
  size_t *mat_at = at, *support_at = at + 1;
  int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
  int d0 = is->first_dof[k], nv = is->first_dof[k + 1] - d0;
  size_t n = 3 * (size_t)nc;
  mr_contact_assembly *a = &is->as[k];
  a->max_contacts = nc;
  a->nv = nv;
  a->J = is->mat + *mat_at;
  a->MiJt = a->J + (n + 6) * (size_t)nv;
  a->G = a->MiJt + n * (size_t)nv;
  *mat_at += pool_doubles((size_t)nc, (size_t)nv, is->gb_bound[k]);
  a->g = is->g + 3 * b0, a->mu = is->mu + b0, a->R = is->R + 3 * b0;
  a->phi = is->phi + b0, a->vel = is->vel + 3 * b0, a->kind = is->kind + b0;
  *sub = (mr_assembly_subset){.blocks = is->blocks + b0, .dofs = is->dofs + d0, .ndofs = nv,
                              .col = is->col, .x = is->x};
  sub->sparse = nv > SPARSE_MIN_DOFS;
  sub->support = is->support + *support_at;
  sub->nsupport = is->nsupport + b0;
  *support_at += (size_t)nc * (size_t)nv;
  /* a tree-sparse island stores G block-sparse in G's place */
  a->Gb = sub->sparse ? a->G : NULL;
  a->Gb_row = is->gb_idx + at[2];
  a->Gb_col = a->Gb_row + nc + 1;
  a->Gb_cap = is->gb_bound[k];
  a->Gb_work = is->gb_work;
  at[2] += pool_gb_ints((size_t)nc, is->gb_bound[k]);
}

/* ---- warm starts ----
 * Island k keeps the solver state (ADMM's y, ρ and eigenvalue estimates, a sparse Cholesky) of
 * last step's island with the same blocks, their keys in the same order, wherever either is
 * numbered; an island that changed starts fresh, whatever the other islands did. */

/* last step's island that island k continues, −1 none: the one holding its first block's key,
 * with the same keys in the same order, not continued already */
static int previous_island(const mr_sim *s, const mr_islands *is, int k) {
  int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
  int p = mr_sim_previous_block(s, s->keys[is->blocks[b0]]);
  if (p < 0) return -1;
  int pi = is->prev_block_island[p], p0 = is->prev_first_block[pi];
  if (is->taken[pi] || is->prev_first_block[pi + 1] - p0 != nc) return -1;
  for (int j = 0; j < nc; ++j)
    if (s->keys[is->blocks[b0 + j]] != s->prev_keys[is->prev_blocks[p0 + j]]) return -1;
  return pi;
}

/* the states (and y) moved to the islands that continue them; the other islands' states
 * cleared, keeping the sparse Cholesky factors of the states nobody continues (each owned by
 * one state: a permutation of the first max(nislands, prev_nislands) states) */
static void follow_states(mr_sim *s) {
  mr_islands *is = s->isl;
  int ni = is->nislands, np = is->prev_step == s->steps - 1 ? is->prev_nislands : 0;
  int nmax = ni > np ? ni : np;
  memset(is->taken, 0, (size_t)nmax);
  for (int k = 0; k < ni; ++k)
    if ((is->match[k] = np > 0 ? previous_island(s, is, k) : -1) >= 0) is->taken[is->match[k]] = 1;
  double *y_prev = is->y;
  is->y = is->y_prev, is->y_prev = y_prev;
  int spare = 0; /* the next state nobody continues */
  for (int k = 0; k < nmax; ++k) {
    int pi = k < ni ? is->match[k] : -1;
    if (pi >= 0) {
      int b0 = is->first_block[k], nc = is->first_block[k + 1] - b0;
      is->states_next[k] = is->states[pi];
      mr_copy(is->y + 3 * b0, y_prev + 3 * is->prev_first_block[pi], 3 * nc);
      continue;
    }
    while (is->taken[spare])
      ++spare;
    is->states_next[k] = (mr_solver_state){.chol = is->states[spare++].chol};
  }
  memcpy(is->states, is->states_next, (size_t)nmax * sizeof *is->states);
}

/* this step's islands, for the next step's to find */
static void remember_islands(mr_sim *s) {
  mr_islands *is = s->isl;
  int n = s->nc + s->nk, ni = is->nislands;
  memcpy(is->prev_blocks, is->blocks, (size_t)n * sizeof(int));
  memcpy(is->prev_block_island, is->block_island, (size_t)n * sizeof(int));
  memcpy(is->prev_first_block, is->first_block, (size_t)(ni + 1) * sizeof(int));
  is->prev_nislands = ni;
  is->prev_step = s->steps;
}

/* ---- solving ---- */

/* the island's correction made consistent (contact/consistency.h), the free velocity gathered
 * at its columns of J; timed into the step's consistency stage */
static void make_consistent(mr_sim *s, mr_contact_assembly *a, const mr_assembly_subset *sub,
                            double band) {
  mr_arena_reset(&s->work, 0);
  size_t nv = (size_t)sub->ndofs;
  double *vf = mr_arena_doubles(&s->work, nv);
  for (size_t k = 0; vf && k < nv; ++k)
    vf[sub->col[sub->dofs[k]]] = s->v_next[sub->dofs[k]];
  /* J: the island's rows in a->J, which both assemblies fill */
  if (vf) mr_sim_consistent(s, a, vf, band);
  mr_arena_reset(&s->work, 0);
}

/* island k solved again without the push-out of penetrations, as sim.c does for the whole
 * problem: kept when its criterion is lower */
static mr_status solve_without_push_out(mr_sim *s, int k, const mr_assembly_subset *sub,
                                        mr_solver_stats *stats, mr_error *err) {
  mr_islands *is = s->isl;
  mr_assembly_settings as = s->as_settings;
  if (as.band == 0.0 && as.rest_depth == 0.0) return MR_OK;
  as.band = as.rest_depth = 0.0;
  mr_contact_assembly *a = &is->as[k];
  int b0 = is->first_block[k], n = 3 * a->max_contacts;
  double *g_first = is->g_first + 3 * b0, *lam = is->lambda_alt + 3 * b0, *c = is->c_alt + 3 * b0;
  mr_copy(g_first, a->g, n);
  mr_status st = mr_contact_assemble_subset(s->m, s->d, s->cg, sub, a->max_contacts, s->v,
                                            s->v_next, &as, a, err);
  if (st) return st;
  make_consistent(s, a, sub, as.band);
  mr_solver_stats st2;
  mr_zero(lam, n);
  is->states[k].valid = 0;
  st = mr_sim_solve(s, &a->problem, &is->states[k], lam, c, &st2, err);
  if (st) return st;
  if (!(st2.eps_abs < stats->eps_abs)) {
    mr_copy(a->g, g_first, n);
    return MR_OK;
  }
  mr_copy(is->lambda + 3 * b0, lam, n);
  mr_copy(is->c + 3 * b0, c, n);
  st2.iterations += stats->iterations;
  *stats = st2;
  return MR_OK;
}

/* assemble and solve island k; λ warm start and results in island order */
static mr_status solve_island(mr_sim *s, int k, size_t *at, mr_solver_stats *stats,
                              mr_error *err) {
  mr_islands *is = s->isl;
  mr_assembly_subset sub;
  island_view(is, k, at, &sub);
  mr_contact_assembly *a = &is->as[k];
  int b0 = is->first_block[k], nc = a->max_contacts;
  mr_status st = mr_contact_assemble_subset(s->m, s->d, s->cg, &sub, nc, s->v, s->v_next,
                                            &s->as_settings, a, err);
  if (st) return st;
  make_consistent(s, a, &sub, s->as_settings.band);
  mr_solver_state *state = &is->states[k];
  state->y = is->y + 3 * b0;
  state->cap = 3 * nc;
  st = mr_sim_solve(s, &a->problem, state, is->lambda + 3 * b0, is->c + 3 * b0, stats, err);
  /* a solve that failed by far (not one that stopped just short of its tolerance) */
  if (!st && !stats->converged && stats->eps_abs > 1e3 * s->settings.eps_abs)
    st = solve_without_push_out(s, k, &sub, stats, err);
  if (st) return st;
  /* the velocity change, timed into the step's integration stage as the whole problem's is */
  double t = mr_sim_clock_us();
  mr_contact_impulse_velocity_subset(s->m, s->d, a, &sub, is->lambda + 3 * b0, s->w->timestep,
                                     s->dv);
  s->t_impulse += mr_sim_clock_us() - t;
  return MR_OK;
}

mr_status mr_islands_solve(mr_sim *s, int same, mr_solver_stats *stats, mr_error *err) {
  mr_islands *is = s->isl;
  int n = s->nc + s->nk;
  group(is, s->cg, n);
  /* every block last step's: the same islands in the same order keep their states */
  if (!same || is->prev_step != s->steps - 1) follow_states(s);
  mr_status st = reserve(s, err);
  if (st) return st;
  /* warm start in island order */
  for (int j = 0; j < n; ++j)
    mr_copy(is->lambda + 3 * j, s->lambda + 3 * is->blocks[j], 3);
  *stats = (mr_solver_stats){.converged = 1};
  mr_zero(s->dv, s->m->nv);
  size_t at[3] = {0, 0, 0}; /* in the matrix, support and block-sparse index pools */
  is->iterations = 0;
  for (int k = 0; k < is->nislands; ++k) {
    mr_solver_stats sk;
    if ((st = solve_island(s, k, at, &sk, err))) return st;
    is->iterations += sk.iterations;
    stats->iterations = sk.iterations > stats->iterations ? sk.iterations : stats->iterations;
    stats->converged &= sk.converged;
    stats->eps_abs = sk.eps_abs > stats->eps_abs ? sk.eps_abs : stats->eps_abs;
    stats->time_us += sk.time_us;
  }
  for (int j = 0; j < n; ++j) {
    mr_copy(s->lambda + 3 * is->blocks[j], is->lambda + 3 * j, 3);
    mr_copy(s->c + 3 * is->blocks[j], is->c + 3 * j, 3);
  }
  remember_islands(s);
  return MR_OK;
}

/* ---- the islands as one problem ---- */

static int grow_full(mr_islands *is, int nblocks) {
  if ((size_t)nblocks <= is->full_cap) return 0;
  size_t nb = (size_t)nblocks, n = 3 * nb;
  free(is->full_G), free(is->full_g), free(is->full_mu), free(is->full_R);
  free(is->full_phi), free(is->full_vel), free(is->full_kind);
  is->full_G = malloc(n * n * sizeof(double));
  is->full_g = malloc(n * sizeof(double));
  is->full_mu = malloc(nb * sizeof(double));
  is->full_R = malloc(n * sizeof(double));
  is->full_phi = malloc(nb * sizeof(double));
  is->full_vel = malloc(n * sizeof(double));
  is->full_kind = malloc(nb);
  is->full_cap = nb;
  if (is->full_G && is->full_g && is->full_mu && is->full_R && is->full_phi && is->full_vel &&
      is->full_kind)
    return 0;
  is->full_cap = 0;
  return -1;
}

const mr_contact_problem *mr_islands_problem(mr_islands *is, int nblocks, double dt) {
  if (grow_full(is, nblocks)) return NULL;
  int n = 3 * nblocks, bilateral = 0;
  if (nblocks > 0) mr_zero(is->full_G, (size_t)n * n);
  for (int k = 0; nblocks > 0 && k < is->nislands; ++k) {
    const mr_contact_assembly *a = &is->as[k];
    int b0 = is->first_block[k], nc = a->max_contacts;
    for (int i = 0; i < nc; ++i) {
      int bi = is->blocks[b0 + i];
      for (int j = 0; j < nc; ++j) {
        int bj = is->blocks[b0 + j];
        double B[9];
        mr_problem_G_block(&a->problem, i, j, B);
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c)
            is->full_G[(size_t)(3 * bi + r) * n + 3 * bj + c] = B[3 * r + c];
      }
      for (int r = 0; r < 3; ++r) {
        is->full_g[3 * bi + r] = a->g[3 * i + r];
        is->full_R[3 * bi + r] = a->R[3 * i + r];
        is->full_vel[3 * bi + r] = a->vel[3 * i + r];
      }
      is->full_mu[bi] = a->mu[i];
      is->full_phi[bi] = a->phi[i];
      is->full_kind[bi] = a->kind[i];
      bilateral |= a->kind[i] == MR_KIND_BILATERAL;
    }
  }
  mr_contact_problem *p = &is->full;
  memset(p, 0, sizeof *p);
  p->nc = nblocks;
  p->G = is->full_G, p->g = is->full_g, p->mu = is->full_mu, p->R = is->full_R;
  p->phi = is->full_phi, p->vel = is->full_vel;
  p->dt = dt;
  p->kind = bilateral ? is->full_kind : NULL;
  return p;
}
