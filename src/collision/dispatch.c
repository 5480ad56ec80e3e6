/* The pair dispatch table: one routine per (type a, type b), analytic where one exists, libccd
 * for the other convex pairs, the probe routine against heightfields. A routine written for
 * (A, B) also serves (B, A) with the normal reversed, so swapping two geometries gives the same
 * contacts with opposite normals. */
#include "collision/narrow.h"

typedef struct {
  pair_fn fn;
  int swap;     /* call fn(b, a) and reverse the normals */
  int analytic; /* replaced by libccd when force_ccd is set (convex pairs only) */
} pair_entry;

#define T MR_GEOM_TYPE_COUNT

/* fill both orders of a pair */
static void set(pair_entry tab[T][T], mr_geom_type a, mr_geom_type b, pair_fn fn, int analytic) {
  tab[a][b] = (pair_entry){fn, 0, analytic};
  if (a != b) tab[b][a] = (pair_entry){fn, 1, analytic};
}

/* the table, built on each call from constants (cheap; keeps no global mutable state) */
static pair_entry lookup(mr_geom_type ta, mr_geom_type tb) {
  pair_entry tab[T][T] = {{{0}}};
  const mr_geom_type convex[] = {MR_GEOM_SPHERE,   MR_GEOM_BOX,       MR_GEOM_CAPSULE,
                                 MR_GEOM_CYLINDER, MR_GEOM_ELLIPSOID, MR_GEOM_MESH};
  for (int i = 0; i < 6; ++i) {
    for (int j = i; j < 6; ++j)
      set(tab, convex[i], convex[j], ccd_collide, 0);
    set(tab, convex[i], MR_GEOM_HALFSPACE, convex_halfspace, 0);
    set(tab, convex[i], MR_GEOM_HEIGHTFIELD, convex_hfield, 0);
  }
  set(tab, MR_GEOM_SPHERE, MR_GEOM_SPHERE, sphere_sphere, 1);
  set(tab, MR_GEOM_SPHERE, MR_GEOM_BOX, sphere_box, 1);
  set(tab, MR_GEOM_SPHERE, MR_GEOM_CAPSULE, sphere_capsule, 1);
  set(tab, MR_GEOM_CAPSULE, MR_GEOM_CAPSULE, capsule_capsule, 1);
  set(tab, MR_GEOM_BOX, MR_GEOM_BOX, box_box, 1);
  set(tab, MR_GEOM_SPHERE, MR_GEOM_HALFSPACE, sphere_halfspace, 0);
  set(tab, MR_GEOM_CAPSULE, MR_GEOM_HALFSPACE, capsule_halfspace, 0);
  set(tab, MR_GEOM_BOX, MR_GEOM_HALFSPACE, box_halfspace, 0);
  set(tab, MR_GEOM_CYLINDER, MR_GEOM_HALFSPACE, cylinder_halfspace, 0);
  set(tab, MR_GEOM_MESH, MR_GEOM_HALFSPACE, mesh_halfspace, 0);
  return tab[ta][tb];
}

int narrow_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  if ((unsigned)a->g->type >= T || (unsigned)b->g->type >= T) return 0;
  pair_entry e = lookup(a->g->type, b->g->type);
  if (!e.fn) {
    /* halfspace/heightfield against each other: static ground, nothing to report */
    c->unsupported++;
    return 0;
  }
  pair_fn fn = e.analytic && c->force_ccd ? ccd_collide : e.fn;
  int n = e.swap ? fn(b, a, c, out) : fn(a, b, c, out);
  if (e.swap)
    for (int k = 0; k < n; ++k)
      out[k].n = mr_v3_neg(out[k].n);
  return n;
}
