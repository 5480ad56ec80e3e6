/* Internal interface of the dynamic AABB tree broadphase (src/collision/bvh.c): a bounding-volume
 * hierarchy of fattened AABBs over items (geometry ids), updated incrementally between queries.
 * Every buffer is allocated in bvh_create; updates and queries never allocate. */
#ifndef MOREAU_COLLISION_BVH_H
#define MOREAU_COLLISION_BVH_H

typedef struct bvh_tree bvh_tree;

/* a tree for at most max_leaves items with ids in [0, nids); NULL when out of memory */
bvh_tree *bvh_create(int max_leaves, int nids);
void bvh_free(bvh_tree *t);

/* set the tight box of item id (inserting it when absent): the leaf is removed and reinserted
 * with a new fat box only when the tight box leaves its fat box or has shrunk well inside it */
void bvh_update(bvh_tree *t, int id, const double lo[3], const double hi[3]);

/* rebuild the tree top-down (median splits) if it never was, or once the reinsertions since the
 * last rebuild reach the number of leaves; call after a round of updates */
void bvh_refresh(bvh_tree *t);

/* items whose fat boxes overlap [lo, hi], written to out (room for max_leaves ids) in the
 * tree's traversal order; returns their number */
int bvh_query(const bvh_tree *t, const double lo[3], const double hi[3], int *out);

/* call visit(user, a, b) once for every pair of distinct items whose fat boxes overlap (a and b
 * in the tree's order, not sorted) */
void bvh_pairs(const bvh_tree *t, void (*visit)(void *user, int a, int b), void *user);

/* counters for tests and benchmarks: leaves, tree height (0 for a single leaf, -1 empty),
 * reinsertions since creation, and the sum of internal node surface areas / root area */
typedef struct {
  int nleaves, height;
  long reinserts;
  double area_ratio;
} bvh_stats;
bvh_stats bvh_get_stats(const bvh_tree *t);

/* check the tree's invariants (parent links, boxes contain children, heights, children's heights
 * within 2); returns 0 when they hold */
int bvh_validate(const bvh_tree *t);

#endif
