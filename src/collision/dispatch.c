/* The pair dispatch table: one routine per (type a, type b), analytic or a short exact routine
 * (cylinder.c) where one exists, the general convex routine (convex.c: GJK, EPA, candidate axes,
 * feature clipping) for the others,
 * the probe routine against heightfields. A routine written for (A, B) also serves (B, A) with
 * the normal reversed, so swapping two geometries gives the same contacts with opposite normals. */
#include <math.h>

#include "collision/narrow.h"

typedef struct {
  pair_fn fn;
  int swap;     /* call fn(b, a) and reverse the normals */
  int analytic; /* replaced by libccd when force_ccd is set (convex pairs only) */
} pair_entry;

enum {
  H = MR_GEOM_HALFSPACE,
  S = MR_GEOM_SPHERE,
  B = MR_GEOM_BOX,
  C = MR_GEOM_CAPSULE,
  Y = MR_GEOM_CYLINDER,
  E = MR_GEOM_ELLIPSOID,
  M = MR_GEOM_MESH,
  F = MR_GEOM_HEIGHTFIELD
};

/* a routine for (A, B) and its use for (B, A) */
#define FWD(f, an)                                                                                 \
  { f, 0, an }
#define REV(f, an)                                                                                 \
  { f, 1, an }

static const pair_entry table[MR_GEOM_TYPE_COUNT][MR_GEOM_TYPE_COUNT] = {
    [H] = {[S] = REV(sphere_halfspace, 0),
           [B] = REV(box_halfspace, 0),
           [C] = REV(capsule_halfspace, 0),
           [Y] = REV(cylinder_halfspace, 0),
           [E] = REV(convex_halfspace, 0),
           [M] = REV(mesh_halfspace, 0)},
    [S] = {[H] = FWD(sphere_halfspace, 0),
           [S] = FWD(sphere_sphere, 1),
           [B] = FWD(sphere_box, 1),
           [C] = FWD(sphere_capsule, 1),
           [Y] = FWD(sphere_cylinder, 1),
           [E] = FWD(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [B] = {[H] = FWD(box_halfspace, 0),
           [S] = REV(sphere_box, 1),
           [B] = FWD(box_box, 1),
           [C] = REV(capsule_box, 1),
           [Y] = FWD(box_cylinder, 1),
           [E] = FWD(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [C] = {[H] = FWD(capsule_halfspace, 0),
           [S] = REV(sphere_capsule, 1),
           [B] = FWD(capsule_box, 1),
           [C] = FWD(capsule_capsule, 1),
           [Y] = FWD(capsule_cylinder, 1),
           [E] = FWD(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [Y] = {[H] = FWD(cylinder_halfspace, 0),
           [S] = REV(sphere_cylinder, 1),
           [B] = REV(box_cylinder, 1),
           [C] = REV(capsule_cylinder, 1),
           [Y] = FWD(cylinder_cylinder, 1),
           [E] = FWD(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [E] = {[H] = FWD(convex_halfspace, 0),
           [S] = REV(convex_collide, 0),
           [B] = REV(convex_collide, 0),
           [C] = REV(convex_collide, 0),
           [Y] = REV(convex_collide, 0),
           [E] = FWD(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [M] = {[H] = FWD(mesh_halfspace, 0),
           [S] = REV(convex_collide, 0),
           [B] = REV(convex_collide, 0),
           [C] = REV(convex_collide, 0),
           [Y] = REV(convex_collide, 0),
           [E] = REV(convex_collide, 0),
           [M] = FWD(convex_collide, 0),
           [F] = FWD(convex_hfield, 0)},
    [F] = {[S] = REV(convex_hfield, 0),
           [B] = REV(convex_hfield, 0),
           [C] = REV(convex_hfield, 0),
           [Y] = REV(convex_hfield, 0),
           [E] = REV(convex_hfield, 0),
           [M] = REV(convex_hfield, 0)},
};

/* a finite placement, and sizes, within the collision range (NaN fails every comparison) */
static int in_range(const shape *s) {
  for (int k = 0; k < 3; ++k) {
    if (!(fabs(s->X.p.v[k]) <= MR_COLLISION_MAX_COORD)) return 0;
    if (!(fabs(s->g->size[k]) <= MR_COLLISION_MAX_COORD)) return 0;
    for (int j = 0; j < 3; ++j)
      if (!(fabs(s->X.R.m[k][j]) <= 1.0 + 1e-6)) return 0;
  }
  return 1;
}

int narrow_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out) {
  if ((unsigned)a->g->type >= MR_GEOM_TYPE_COUNT || (unsigned)b->g->type >= MR_GEOM_TYPE_COUNT)
    return 0;
  if (!in_range(a) || !in_range(b)) {
    c->out_of_range++;
    return 0;
  }
  pair_entry e = table[a->g->type][b->g->type];
  if (!e.fn) {
    /* halfspace/heightfield against each other: static ground, nothing to report */
    c->unsupported++;
    return 0;
  }
  pair_fn fn = e.analytic && c->force_ccd ? convex_collide : e.fn;
  int n = e.swap ? fn(b, a, c, out) : fn(a, b, c, out);
  if (e.swap)
    for (int k = 0; k < n; ++k)
      out[k].n = mr_v3_neg(out[k].n);
  return n;
}
