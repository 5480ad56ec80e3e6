/* Internal interface of the narrowphase: shapes placed in the world, raw contacts, the pair
 * routines (analytic, libccd, heightfield) and the dispatch table. */
#ifndef MOREAU_COLLISION_NARROW_H
#define MOREAU_COLLISION_NARROW_H

#include "moreau/collision.h"

/* a geometry at its world placement */
typedef struct {
  const mr_geom *g;
  mr_se3 X;
} shape;

/* a contact before its frame and material: normal from b towards a, point midway */
typedef struct {
  mr_vec3 p, n;
  double phi;
  int feature;
} raw_contact;

/* per-query narrowphase settings and warning counters */
typedef struct {
  double margin;
  int force_ccd;
  int ccd_max_iter;
  double ccd_tolerance;
  int ccd_failures;
  int unsupported;
} narrow_ctx;

/* a pair routine: contacts between a and b (normal from b to a), at most MR_PAIR_MAX_CONTACTS */
typedef int (*pair_fn)(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* dispatch: contacts of the pair in either order (swapped routines flip the normal) */
int narrow_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* libccd between two bounded convex shapes: at most one contact */
int ccd_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* GJK distance of separated shapes: 1 with the distance and witness points, 0 if they touch
 * or overlap */
int gjk_distance(const shape *a, const shape *b, double *dist, mr_vec3 *pa, mr_vec3 *pb);

/* analytic routines (pairs.c, box.c) */
int sphere_sphere(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int sphere_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int sphere_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int sphere_capsule(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int capsule_capsule(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int capsule_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int box_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int cylinder_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int mesh_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int convex_halfspace(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int box_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
/* heightfield routines (hfield.c): b is the heightfield */
int convex_hfield(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* signed distance from local point x to the box of half extents h, its closest surface point q
 * and the outward normal there (inside: the nearest face) */
double box_closest(const double *h, mr_vec3 x, mr_vec3 *q, mr_vec3 *n);

/* keep at most 4 of n contacts (deepest first, then spread), in place; returns the count */
int reduce_contacts(raw_contact *rc, int n, int keep);

/* world support point of a bounded shape along d */
mr_vec3 shape_support(const shape *s, mr_vec3 d);

#endif
