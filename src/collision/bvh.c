/* Dynamic AABB tree (bounding-volume hierarchy) for the broadphase.
 *
 * Leaves hold one item (a geometry id) and its FAT box: the tight world AABB enlarged on every
 * side by f = 0.1 × the box's largest edge. A leaf is left alone while its tight box stays inside
 * the fat box, so small motions cost one containment test; it is removed and reinserted when the
 * tight box leaves the fat box (motion, teleport, growth) or shrinks so that the fat box exceeds
 * it by more than 4 f on some side (a stale, oversized box would only add false candidates).
 * Internal nodes hold the union of their two children's boxes. Boxes are stored in single
 * precision (fat boxes rounded outwards: still conservative), halving the tree's memory traffic;
 * the exact test on the double-precision tight boxes comes after, in collision.c.
 *
 * Insertion (surface-area heuristic, greedy descent as in Goldsmith & Salmon 1987 and Box2D's
 * dynamic tree): at an internal node N with box B, making the new leaf L a sibling of N costs
 * SA(B ∪ L); descending into a child C costs SA(C ∪ L) (− SA(C) when C is internal, whose own
 * area is already paid) plus the area every ancestor gains, SA(B ∪ L) − SA(B). The descent stops
 * at the cheapest choice, ties going to the first child, so that the tree is a deterministic
 * function of the sequence of updates.
 *
 * Balance and quality: after an insertion or removal every node A on the path to the root is
 * refitted, then
 * - surface-area rotation (Kopta, Ize, Spjut, Brunvand, Davis & Kensler 2012, "Fast, effective
 *   BVH updates for animated scenes"): A's child B may trade places with a grandchild under A's
 *   other child C; the trade that shrinks C's box the most is made, if any does and both C and
 *   A stay balanced. Alone, height rotations (below) ignore areas and nearly tripled the sum of
 * internal areas on random scenes (10⁴ boxes); these rotations undo that;
 * - height rotation (as in AVL trees, Adelson-Velsky & Landis 1962, with a skew of 2): when the
 *   children's heights differ by more than MAX_SKEW = 2, the taller child takes A's place,
 *   keeping its taller grandchild and giving the shorter one to A. The fewest leaves under
 *   height h then obey N(h) = N(h−1) + N(h−3), so h ≤ 1.81 log₂ n.
 * Rebuild (bvh_refresh): on the first query, and once the reinsertions since the last rebuild
 * reach the number of leaves, the tree is rebuilt top-down (split at the median of the box
 * centres along their longest spread, quickselect with ties broken by id) and laid out in
 * pre-order so that every subtree is contiguous in memory: O(n log n), amortised O(log n) per
 * reinsertion, and it restores the quality the incremental updates slowly lose.
 *
 * Pairs (bvh_pairs): one traversal of the tree against itself. The pairs inside a node are those
 * inside each child plus those across the two; the pairs across two overlapping subtrees come
 * from splitting the larger (by area) and keeping the children that still overlap. Each pair of
 * items is reported once, every internal node is visited once as a self entry, and in a scene
 * of bounded density the number of overlapping node pairs is O(n) (about 10 per leaf measured
 * at n = 10³..10⁴). A single query (bvh_query) visits O(log n + k) nodes for k hits.
 *
 * Memory: 2 n − 1 nodes (free list threaded through the parent field), the leaf of each id,
 * traversal stacks and a copy of the leaves for rebuilds, all allocated in bvh_create. */
#include "collision/bvh.h"

#include <math.h>
#include <stdlib.h>

/* relative fattening of a leaf box, and the slack beyond which a shrunk box is refitted */
#define FAT_REL 0.1
#define SHRINK_SLACK 4.0
/* largest height difference between the two children of a node */
#define MAX_SKEW 2

typedef struct {
  float lo[3], hi[3]; /* fat box (leaf, rounded outwards) or union of the children */
  int parent;         /* parent node, -1 at the root; next free node when free */
  int child[2];       /* children, -1 for a leaf */
  int height;         /* 0 for a leaf */
  int item;           /* id of a leaf's item */
} node;

struct bvh_tree {
  node *nodes;
  int cap, root, free_head, nleaves, max_leaves, nids;
  int *leaf; /* node of each id, -1 when absent */
  int *stack;
  int *pair_stack;          /* node pairs of the self-traversal (2 ints each) */
  node *old;                /* copies of the leaves during a rebuild */
  int *scratch;             /* leaf nodes during a rebuild */
  long reinserts, built_at; /* reinsertions since creation, and at the last rebuild */
  int built;                /* the tree has been rebuilt top-down once */
};

bvh_tree *bvh_create(int max_leaves, int nids) {
  bvh_tree *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->max_leaves = max_leaves > 0 ? max_leaves : 1;
  t->cap = 2 * t->max_leaves;
  t->nids = nids > 0 ? nids : 1;
  t->nodes = malloc((size_t)t->cap * sizeof *t->nodes);
  t->leaf = malloc((size_t)t->nids * sizeof *t->leaf);
  t->stack = malloc((size_t)t->cap * sizeof *t->stack);
  t->scratch = malloc((size_t)t->cap * sizeof *t->scratch);
  t->old = malloc((size_t)t->max_leaves * sizeof *t->old);
  t->pair_stack = malloc((size_t)(4 * t->cap + 16) * sizeof *t->pair_stack);
  if (!t->nodes || !t->leaf || !t->stack || !t->scratch || !t->pair_stack || !t->old) {
    bvh_free(t);
    return NULL;
  }
  /* every node on the free list, every id absent */
  for (int i = 0; i < t->cap; ++i) {
    t->nodes[i].parent = i + 1 < t->cap ? i + 1 : -1;
    t->nodes[i].item = -1, t->nodes[i].child[0] = t->nodes[i].child[1] = -1;
  }
  for (int i = 0; i < t->nids; ++i)
    t->leaf[i] = -1;
  t->free_head = 0;
  t->root = -1;
  return t;
}

void bvh_free(bvh_tree *t) {
  if (!t) return;
  free(t->nodes), free(t->leaf), free(t->stack), free(t->scratch), free(t->pair_stack),
      free(t->old);
  free(t);
}

static int alloc_node(bvh_tree *t) {
  int i = t->free_head;
  t->free_head = t->nodes[i].parent;
  t->nodes[i].parent = -1;
  t->nodes[i].child[0] = t->nodes[i].child[1] = -1;
  t->nodes[i].height = 0;
  t->nodes[i].item = -1;
  return i;
}

static void release_node(bvh_tree *t, int i) {
  t->nodes[i].parent = t->free_head;
  t->nodes[i].height = -1;
  t->nodes[i].item = -1, t->nodes[i].child[0] = -1;
  t->free_head = i;
}

/* half the surface area of a box (the SAH only compares areas) */
static double area(const float lo[3], const float hi[3]) {
  double x = (double)hi[0] - lo[0], y = (double)hi[1] - lo[1], z = (double)hi[2] - lo[2];
  return x * y + y * z + z * x;
}

/* half the surface area of the union of two boxes */
static double union_area(const node *a, const node *b) {
  float lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    lo[k] = a->lo[k] < b->lo[k] ? a->lo[k] : b->lo[k];
    hi[k] = a->hi[k] > b->hi[k] ? a->hi[k] : b->hi[k];
  }
  return area(lo, hi);
}

/* box and height of an internal node from its children */
static void refit(bvh_tree *t, int i) {
  node *n = &t->nodes[i];
  const node *a = &t->nodes[n->child[0]], *b = &t->nodes[n->child[1]];
  for (int k = 0; k < 3; ++k) {
    n->lo[k] = a->lo[k] < b->lo[k] ? a->lo[k] : b->lo[k];
    n->hi[k] = a->hi[k] > b->hi[k] ? a->hi[k] : b->hi[k];
  }
  n->height = 1 + (a->height > b->height ? a->height : b->height);
}

/* put node c where node old was under parent p (or at the root) */
static void replace_child(bvh_tree *t, int p, int old, int c) {
  t->nodes[c].parent = p;
  if (p < 0)
    t->root = c;
  else
    t->nodes[p].child[t->nodes[p].child[0] == old ? 0 : 1] = c;
}

/* rotate child `side` of node a (taller by 2) into a's place; returns the node now there */
static int rotate_up(bvh_tree *t, int a, int side) {
  int c = t->nodes[a].child[side];
  int f = t->nodes[c].child[0], g = t->nodes[c].child[1];
  /* c keeps its taller grandchild, a gets the shorter one */
  int keep = t->nodes[f].height > t->nodes[g].height ? f : g, give = keep == f ? g : f;
  replace_child(t, t->nodes[a].parent, a, c);
  t->nodes[c].child[0] = a, t->nodes[c].child[1] = keep;
  t->nodes[a].parent = c, t->nodes[keep].parent = c;
  t->nodes[a].child[side] = give, t->nodes[give].parent = a;
  refit(t, a);
  refit(t, c);
  return c;
}

/* height balance of internal node a (children's heights within MAX_SKEW); returns the node now
 * at its place */
static int balance(bvh_tree *t, int a) {
  int h0 = t->nodes[t->nodes[a].child[0]].height, h1 = t->nodes[t->nodes[a].child[1]].height;
  if (h1 > h0 + MAX_SKEW) return rotate_up(t, a, 1);
  if (h0 > h1 + MAX_SKEW) return rotate_up(t, a, 0);
  return a;
}

static int skew_ok(const bvh_tree *t, int x, int y) {
  int d = t->nodes[x].height - t->nodes[y].height;
  return d <= MAX_SKEW && -d <= MAX_SKEW;
}

/* after b (a child of a) swaps with f (a child of a's other child c, whose other child is g),
 * do c and a keep their children's heights within MAX_SKEW */
static int swap_balanced(const bvh_tree *t, int b, int f, int g) {
  int hb = t->nodes[b].height, hg = t->nodes[g].height, hc = 1 + (hb > hg ? hb : hg);
  int d = t->nodes[f].height - hc;
  return skew_ok(t, b, g) && d <= MAX_SKEW && -d <= MAX_SKEW;
}

/* surface-area rotation at internal node a (Kopta et al. 2012): exchange one child with a
 * grandchild under the other child when that shrinks the other child's box, the largest
 * shrink first, provided the node that receives the child stays balanced */
static void rotate_sah(bvh_tree *t, int a) {
  double best = 0;
  int best_side = -1, best_k = -1;
  for (int side = 0; side < 2; ++side) {
    int b = t->nodes[a].child[side], c = t->nodes[a].child[1 - side];
    if (t->nodes[c].child[0] < 0) continue;
    double ac = area(t->nodes[c].lo, t->nodes[c].hi);
    for (int k = 0; k < 2; ++k) {
      /* b swaps with c's child k; c keeps its child 1 − k */
      int f = t->nodes[c].child[k], g = t->nodes[c].child[1 - k];
      double gain = ac - union_area(&t->nodes[b], &t->nodes[g]);
      if (gain > best && swap_balanced(t, b, f, g)) best = gain, best_side = side, best_k = k;
    }
  }
  if (best_side < 0) return;
  int b = t->nodes[a].child[best_side], c = t->nodes[a].child[1 - best_side];
  int f = t->nodes[c].child[best_k];
  t->nodes[a].child[best_side] = f, t->nodes[f].parent = a;
  t->nodes[c].child[best_k] = b, t->nodes[b].parent = c;
  refit(t, c);
}

/* refit, rotate and balance every node from i up to the root */
static void fix_upwards(bvh_tree *t, int i) {
  while (i >= 0) {
    refit(t, i);
    rotate_sah(t, i);
    refit(t, i);
    i = balance(t, i);
    i = t->nodes[i].parent;
  }
}

/* cost of descending into child c for leaf l, given the ancestors' area increase */
static double descend_cost(const bvh_tree *t, int c, const node *l, double inherited) {
  const node *n = &t->nodes[c];
  double u = union_area(n, l);
  return (n->child[0] < 0 ? u : u - area(n->lo, n->hi)) + inherited;
}

/* the sibling chosen for leaf l by greedy SAH descent from the root */
static int best_sibling(const bvh_tree *t, int l) {
  const node *L = &t->nodes[l];
  int i = t->root;
  while (t->nodes[i].child[0] >= 0) {
    const node *n = &t->nodes[i];
    double u = union_area(n, L);
    double here = u, inherited = u - area(n->lo, n->hi);
    double c0 = descend_cost(t, n->child[0], L, inherited);
    double c1 = descend_cost(t, n->child[1], L, inherited);
    if (here <= c0 && here <= c1) break;
    i = c0 <= c1 ? n->child[0] : n->child[1];
  }
  return i;
}

static void insert_leaf(bvh_tree *t, int l) {
  if (t->root < 0) {
    t->root = l;
    t->nodes[l].parent = -1;
    return;
  }
  /* a new parent joins the chosen sibling and the leaf */
  int s = best_sibling(t, l), old_parent = t->nodes[s].parent, p = alloc_node(t);
  replace_child(t, old_parent, s, p);
  t->nodes[p].child[0] = s, t->nodes[p].child[1] = l;
  t->nodes[s].parent = p, t->nodes[l].parent = p;
  fix_upwards(t, p);
}

static void remove_leaf(bvh_tree *t, int l) {
  if (t->root == l) {
    t->root = -1;
    return;
  }
  /* the sibling takes the parent's place */
  int p = t->nodes[l].parent, g = t->nodes[p].parent;
  int s = t->nodes[p].child[t->nodes[p].child[0] == l ? 1 : 0];
  replace_child(t, g, p, s);
  release_node(t, p);
  fix_upwards(t, g);
}

/* does the leaf's fat box still fit the tight box (contains it, not grossly larger) */
static int fat_fits(const node *n, const double lo[3], const double hi[3]) {
  for (int k = 0; k < 3; ++k) {
    if (!(lo[k] >= n->lo[k] && hi[k] <= n->hi[k])) return 0;
  }
  double e = 0;
  for (int k = 0; k < 3; ++k)
    e = hi[k] - lo[k] > e ? hi[k] - lo[k] : e;
  double slack = SHRINK_SLACK * FAT_REL * e;
  for (int k = 0; k < 3; ++k)
    if (lo[k] - n->lo[k] > slack || n->hi[k] - hi[k] > slack) return 0;
  return 1;
}

/* the fat box of a leaf around a tight box */
static void set_fat(node *n, const double lo[3], const double hi[3]) {
  double e = 0;
  for (int k = 0; k < 3; ++k)
    e = hi[k] - lo[k] > e ? hi[k] - lo[k] : e;
  double f = FAT_REL * e;
  /* single precision, rounded outwards so that the fat box still contains the tight one */
  for (int k = 0; k < 3; ++k) {
    float l = (float)(lo[k] - f), h = (float)(hi[k] + f);
    n->lo[k] = l > lo[k] - f ? nextafterf(l, -INFINITY) : l;
    n->hi[k] = h < hi[k] + f ? nextafterf(h, INFINITY) : h;
  }
}

void bvh_update(bvh_tree *t, int id, const double lo[3], const double hi[3]) {
  if (id < 0 || id >= t->nids) return;
  int l = t->leaf[id];
  if (l >= 0 && fat_fits(&t->nodes[l], lo, hi)) return;
  if (l >= 0) {
    remove_leaf(t, l);
    t->reinserts++;
  } else {
    if (t->nleaves == t->max_leaves) return; /* more items than max_leaves: refused */
    l = alloc_node(t);
    t->nodes[l].item = id;
    t->leaf[id] = l;
    t->nleaves++;
  }
  set_fat(&t->nodes[l], lo, hi);
  insert_leaf(t, l);
}

/* does leaf x come before leaf y along axis (box centres, ties by item id) */
static int before(const node *nodes, int x, int y, int axis) {
  const node *a = &nodes[x], *b = &nodes[y];
  double ca = a->lo[axis] + a->hi[axis], cb = b->lo[axis] + b->hi[axis];
  return ca < cb || (ca == cb && a->item < b->item);
}

static void swap_int(int *a, int i, int j) {
  int x = a[i];
  a[i] = a[j], a[j] = x;
}

/* quickselect: leaves a[0..n) partitioned so that a[m] is in its sorted place along axis
 * (Hoare partition around the median of three; keys are distinct thanks to the id ties) */
static void select_nth(const node *nodes, int *a, int n, int m, int axis) {
  int lo = 0, hi = n - 1;
  while (hi > lo) {
    int mid = lo + (hi - lo) / 2;
    if (before(nodes, a[mid], a[lo], axis)) swap_int(a, mid, lo);
    if (before(nodes, a[hi], a[lo], axis)) swap_int(a, hi, lo);
    if (before(nodes, a[hi], a[mid], axis)) swap_int(a, hi, mid);
    int pivot = a[mid], i = lo, j = hi;
    while (i <= j) {
      while (before(nodes, a[i], pivot, axis))
        i++;
      while (before(nodes, pivot, a[j], axis))
        j--;
      if (i <= j) swap_int(a, i++, j--);
    }
    if (m <= j)
      hi = j;
    else if (m >= i)
      lo = i;
    else
      return;
  }
}

/* the longest axis of the box centres of leaves a[0..n) */
static int split_axis(const node *nodes, const int *a, int n) {
  double lo[3], hi[3];
  for (int k = 0; k < 3; ++k)
    lo[k] = hi[k] = nodes[a[0]].lo[k] + nodes[a[0]].hi[k];
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double c = nodes[a[i]].lo[k] + nodes[a[i]].hi[k];
      lo[k] = c < lo[k] ? c : lo[k], hi[k] = c > hi[k] ? c : hi[k];
    }
  int axis = 0;
  for (int k = 1; k < 3; ++k)
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  return axis;
}

/* top-down build over the leaves a[0..n) of the copy old: split at the median along the longest
 * axis of the box centres (heights differ by at most one); nodes are written in pre-order from
 * *next, so that a subtree is contiguous in memory; returns the subtree's root */
static int build(bvh_tree *t, const node *old, int *a, int n, int *next) {
  int p = (*next)++;
  if (n == 1) {
    t->nodes[p] = old[a[0]];
    t->leaf[t->nodes[p].item] = p;
    return p;
  }
  int m = n / 2;
  select_nth(old, a, n, m, split_axis(old, a, n));
  int l = build(t, old, a, m, next), r = build(t, old, a + m, n - m, next);
  t->nodes[p].child[0] = l, t->nodes[p].child[1] = r, t->nodes[p].item = -1;
  t->nodes[l].parent = p, t->nodes[r].parent = p;
  refit(t, p);
  return p;
}

/* the leaves (in id order) copied aside and rebuilt top-down in pre-order at the start of the
 * node array; the rest becomes the free list */
static void rebuild(bvh_tree *t) {
  int n = 0;
  for (int id = 0; id < t->nids; ++id)
    if (t->leaf[id] >= 0) {
      t->old[n] = t->nodes[t->leaf[id]];
      t->scratch[n] = n;
      n++;
    }
  int next = 0;
  t->root = n > 0 ? build(t, t->old, t->scratch, n, &next) : -1;
  if (t->root >= 0) t->nodes[t->root].parent = -1;
  t->free_head = -1;
  for (int i = t->cap - 1; i >= next; --i)
    release_node(t, i);
  t->built_at = t->reinserts;
  t->built = 1;
}

void bvh_refresh(bvh_tree *t) {
  if (!t->built || t->reinserts - t->built_at >= t->nleaves) rebuild(t);
}

static int overlaps(const node *n, const double lo[3], const double hi[3]) {
  return !(n->lo[0] > hi[0] || lo[0] > n->hi[0] || n->lo[1] > hi[1] || lo[1] > n->hi[1] ||
           n->lo[2] > hi[2] || lo[2] > n->hi[2]);
}

static int nodes_overlap(const node *a, const node *b) {
  return !(a->lo[0] > b->hi[0] || b->lo[0] > a->hi[0] || a->lo[1] > b->hi[1] ||
           b->lo[1] > a->hi[1] || a->lo[2] > b->hi[2] || b->lo[2] > a->hi[2]);
}

int bvh_query(const bvh_tree *t, const double lo[3], const double hi[3], int *out) {
  int nout = 0, top = 0;
  if (t->root < 0) return 0;
  int *stack = t->stack;
  stack[top++] = t->root;
  /* depth first; a node's children are pushed only when its box overlaps */
  while (top > 0) {
    const node *n = &t->nodes[stack[--top]];
    if (!overlaps(n, lo, hi)) continue;
    if (n->child[0] < 0) {
      out[nout++] = n->item;
    } else {
      stack[top++] = n->child[1];
      stack[top++] = n->child[0];
    }
  }
  return nout;
}

/* The self-traversal: an entry (x, -1) stands for the pairs inside subtree x, (x, y) for the
 * pairs between subtrees x and y, descending the larger box (or the internal node) first. The
 * cross entries of one subtree pair are exhausted before the next self entry is popped, so at
 * most 2 self entries per level and 2 cross entries per level are pending: 4 h + 4 < 2 cap. A
 * cross entry is pushed only when its two boxes overlap. */
void bvh_pairs(const bvh_tree *t, void (*visit)(void *user, int a, int b), void *user) {
  const node *nd = t->nodes;
  int *st = t->pair_stack, top = 0;
  /* entries are pushed only when they can yield pairs: internal (self), overlapping (cross) */
  if (t->root >= 0 && nd[t->root].child[0] >= 0) st[top++] = t->root, st[top++] = -1;
  while (top > 0) {
    int y = st[--top], x = st[--top];
    const node *a = &nd[x];
    if (y < 0) {
      /* inside x: inside each child, then across them */
      int l = a->child[0], r = a->child[1];
      if (nd[r].child[0] >= 0) st[top++] = r, st[top++] = -1;
      if (nd[l].child[0] >= 0) st[top++] = l, st[top++] = -1;
      if (nodes_overlap(&nd[l], &nd[r])) st[top++] = l, st[top++] = r;
      continue;
    }
    const node *b = &nd[y];
    if (a->child[0] < 0 && b->child[0] < 0) {
      visit(user, a->item, b->item);
      continue;
    }
    /* split the internal one, the larger when both are */
    if (b->child[0] >= 0 && (a->child[0] < 0 || area(a->lo, a->hi) < area(b->lo, b->hi))) {
      const node *tmp = a;
      a = b, b = tmp;
      int ti = x;
      x = y, y = ti;
    }
    for (int k = 1; k >= 0; --k)
      if (nodes_overlap(&nd[a->child[k]], b)) st[top++] = a->child[k], st[top++] = y;
  }
}

bvh_stats bvh_get_stats(const bvh_tree *t) {
  bvh_stats s = {t->nleaves, t->root >= 0 ? t->nodes[t->root].height : -1, t->reinserts, 0};
  if (t->root < 0) return s;
  /* internal nodes: the reachable ones from the root */
  double sum = 0;
  int top = 0;
  t->stack[top++] = t->root;
  while (top > 0) {
    const node *n = &t->nodes[t->stack[--top]];
    if (n->child[0] < 0) continue;
    sum += area(n->lo, n->hi);
    t->stack[top++] = n->child[0];
    t->stack[top++] = n->child[1];
  }
  double a = area(t->nodes[t->root].lo, t->nodes[t->root].hi);
  s.area_ratio = a > 0 ? sum / a : 0;
  return s;
}

/* invariants of node i's subtree; returns its number of leaves, -1 when broken */
static int validate_node(const bvh_tree *t, int i, int parent, int depth) {
  const node *n = &t->nodes[i];
  if (n->parent != parent || depth > t->cap) return -1;
  if (n->child[0] < 0) return n->height == 0 && t->leaf[n->item] == i ? 1 : -1;
  const node *a = &t->nodes[n->child[0]], *b = &t->nodes[n->child[1]];
  int ha = a->height, hb = b->height;
  if (n->height != 1 + (ha > hb ? ha : hb) || ha - hb > MAX_SKEW || hb - ha > MAX_SKEW) return -1;
  for (int k = 0; k < 3; ++k)
    if (a->lo[k] < n->lo[k] || b->lo[k] < n->lo[k] || a->hi[k] > n->hi[k] || b->hi[k] > n->hi[k])
      return -1;
  int la = validate_node(t, n->child[0], i, depth + 1);
  int lb = validate_node(t, n->child[1], i, depth + 1);
  return la < 0 || lb < 0 ? -1 : la + lb;
}

int bvh_validate(const bvh_tree *t) {
  if (t->root < 0) return t->nleaves == 0 ? 0 : -1;
  return validate_node(t, t->root, -1, 0) == t->nleaves ? 0 : -1;
}
