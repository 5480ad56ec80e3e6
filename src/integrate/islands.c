/* Islands (see islands.h). A tree is the subtree under the highest body with dofs on a body's
 * path to the world; bodies with no dof on that path are static and join nothing. The trees of
 * a block's bodies (or dofs) are united by union-find over arrays sized at creation; blocks and
 * dofs are then grouped by island in their global order (a stable counting sort), so an
 * island's J, M⁻¹Jᵀ and G are computed by the same operations as the whole model's problem
 * restricted to it, and its Gauss-Seidel sweeps visit its blocks in the same order. */
#include "integrate/islands.h"

#include <stdlib.h>
#include <string.h>

struct mr_islands {
  int nv, max_blocks, ntrees;
  int *dof_tree;     /* tree of each dof (nv), from the model */
  int *body_tree;    /* tree of each body, −1 static (nbodies) */
  int *uf;           /* union-find parents over trees (ntrees) */
  int *tree_island;  /* island of a root tree, −1 none (ntrees) */
  int *tree_count;   /* blocks touching each tree in the island being bounded (ntrees) */
  int *block_tree;   /* a tree of each block, −1 on static bodies only; then fill cursors */
  int *block_island; /* max_blocks */
  int *first_block, *first_dof; /* per island, n + 1 offsets (max_blocks + 1) */
  int *blocks;                  /* block indices grouped by island (max_blocks) */
  int *dofs, *col;              /* dofs grouped by island (nv); column of each dof (nv) */
  int nislands;
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

/* the trees numbered by their root body: dof_tree and body_tree; 0 or −1 out of memory */
static int number_trees(mr_islands *is, const mr_model *m) {
  int nb = m->nbodies, nv = m->nv, *tree = body_trees(m);
  int *index = malloc((size_t)nb * sizeof *index);
  is->dof_tree = malloc((size_t)(nv ? nv : 1) * sizeof(int));
  if (!tree || !index || !is->dof_tree) return free(tree), free(index), -1;
  for (int b = 0; b < nb; ++b)
    index[b] = tree[b] == b ? is->ntrees++ : -1;
  for (int k = 0; k < nv; ++k)
    is->dof_tree[k] = index[tree[m->dof_body[k]]];
  /* the body → tree map, in index's place */
  for (int b = 0; b < nb; ++b)
    index[b] = tree[b] >= 0 ? index[tree[b]] : -1;
  free(tree);
  is->body_tree = index;
  return 0;
}

mr_islands *mr_islands_create(const mr_model *m, int max_blocks) {
  mr_islands *is = calloc(1, sizeof *is);
  if (!is) return NULL;
  is->nv = m->nv;
  if (number_trees(is, m)) return mr_islands_free(is), NULL;
  size_t nt = (size_t)(is->ntrees ? is->ntrees : 1), nvc = (size_t)(m->nv ? m->nv : 1);
  is->uf = malloc(nt * sizeof(int));
  is->tree_island = malloc(nt * sizeof(int));
  is->tree_count = calloc(nt, sizeof(int));
  is->dofs = malloc(nvc * sizeof(int));
  is->col = malloc(nvc * sizeof(int));
  if (!is->uf || !is->tree_island || !is->tree_count || !is->dofs || !is->col ||
      mr_islands_grow(is, max_blocks > 0 ? max_blocks : 1, NULL))
    return mr_islands_free(is), NULL;
  return is;
}

void mr_islands_free(mr_islands *is) {
  if (!is) return;
  void *ps[] = {is->dof_tree,   is->body_tree,    is->uf,          is->tree_island,
                is->tree_count, is->block_tree,   is->block_island, is->first_block,
                is->first_dof,  is->blocks,       is->dofs,         is->col};
  for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k)
    free(ps[k]);
  free(is);
}

/* *p resized to n ints; 0, or −1 (p unchanged) */
static int resize(int **p, size_t n) {
  int *q = realloc(*p, n * sizeof **p);
  if (!q) return -1;
  *p = q;
  return 0;
}

mr_status mr_islands_grow(mr_islands *is, int max_blocks, mr_error *err) {
  if (max_blocks <= is->max_blocks) return MR_OK;
  size_t n = (size_t)max_blocks;
  if (resize(&is->block_tree, n) || resize(&is->block_island, n) ||
      resize(&is->first_block, n + 1) || resize(&is->first_dof, n + 1) ||
      resize(&is->blocks, n))
    return mr_error_set(err, MR_ERR_NOMEM, "islands: out of memory for %d blocks", max_blocks);
  is->max_blocks = max_blocks;
  return MR_OK;
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
  if (g->type == MR_ROWS_LIMIT || g->type == MR_ROWS_MIMIC || g->type == MR_ROWS_FRICTION) {
    *a = is->dof_tree[g->dof];
    int two = g->type == MR_ROWS_MIMIC || g->ratio != 0.0;
    *b = two ? is->dof_tree[g->dof2] : -1;
    return;
  }
  *a = is->body_tree[g->body1];
  *b = is->body_tree[g->body2];
}

/* the islands of the n blocks, numbered by their first block: block_island, nislands */
static void number_islands(mr_islands *is, const mr_contact_geometry *cg, int n, int one) {
  int nt = is->ntrees, ni = 0;
  for (int t = 0; t < nt; ++t)
    is->uf[t] = t, is->tree_island[t] = -1;
  for (int i = 0; i < n; ++i) {
    int a, b;
    block_trees(is, &cg[i], &a, &b);
    unite(is->uf, a, b);
    is->block_tree[i] = a >= 0 ? a : b;
  }
  for (int i = 0; i < n; ++i) {
    int t = is->block_tree[i];
    if (one) {
      is->block_island[i] = 0, ni = 1;
      if (t >= 0) is->tree_island[find(is->uf, t)] = 0;
    } else if (t < 0) {
      is->block_island[i] = ni++; /* static bodies only: an island without dofs */
    } else {
      int r = find(is->uf, t);
      if (is->tree_island[r] < 0) is->tree_island[r] = ni++;
      is->block_island[i] = is->tree_island[r];
    }
  }
  is->nislands = ni;
}

/* blocks and dofs listed by island: stable counting sorts */
static void list_by_island(mr_islands *is, int n) {
  int ni = is->nislands;
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

mr_island_set mr_islands_group(mr_islands *is, const mr_contact_geometry *cg, int n, int one) {
  number_islands(is, cg, n, one);
  list_by_island(is, n);
  return (mr_island_set){is->nislands, is->first_block, is->blocks, is->first_dof, is->dofs,
                         is->col,      is->block_island};
}

size_t mr_islands_block_bound(mr_islands *is, const mr_contact_geometry *cg, int k) {
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
