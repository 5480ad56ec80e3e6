/* Islands (islands.c): the kinematic trees of a model joined by a step's blocks — contacts,
 * joint limits, point constraints and mimic couplings (moreau/assembly.h) — each island a set
 * of blocks and the dofs of its trees, in their global orders. Pure grouping: no solver, no
 * simulator, no clock. */
#ifndef MOREAU_INTEGRATE_ISLANDS_H
#define MOREAU_INTEGRATE_ISLANDS_H

#include <stddef.h>

#include "moreau/assembly.h"

typedef struct mr_islands mr_islands;

/* The grouping of the last mr_islands_group, read-only views into the grouping's arrays:
 * island k's blocks are blocks[first_block[k] .. first_block[k + 1]) (indices into the blocks
 * given, ascending) and its dofs dofs[first_dof[k] .. first_dof[k + 1]) (ascending); col maps a
 * grouped dof to its column within its island. A block on static bodies only is an island of
 * its own without dofs. */
typedef struct {
  int n; /* islands */
  const int *first_block, *blocks;
  const int *first_dof, *dofs;
  const int *col;          /* nv entries, read at the grouped dofs only */
  const int *block_island; /* island of each block */
} mr_island_set;

/* the model's trees (a tree is the subtree under the highest body with dofs on a body's path to
 * the world) and arrays for max_blocks blocks; NULL when out of memory */
mr_islands *mr_islands_create(const mr_model *m, int max_blocks);
void mr_islands_free(mr_islands *is);
/* room for max_blocks blocks (only grows; MR_ERR_NOMEM) */
mr_status mr_islands_grow(mr_islands *is, int max_blocks, mr_error *err);

/* Group blocks cg[0 .. n): the trees each touches are united (union-find), islands are numbered
 * by their first block, and blocks and dofs are listed by island in their global order (a
 * stable counting sort). one ≠ 0: a single island of every block and the dofs of every tree
 * they touch. */
mr_island_set mr_islands_group(mr_islands *is, const mr_contact_geometry *cg, int n, int one);

/* a bound on the stored 3x3 blocks of island k's G in the last grouping of cg: blocks i and j
 * are coupled only when they touch a common tree, so row i stores at most the blocks touching
 * its (at most two) trees, its diagonal block alone when it touches none; at most nc² */
size_t mr_islands_block_bound(mr_islands *is, const mr_contact_geometry *cg, int k);

#endif
