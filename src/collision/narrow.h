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
  int out_of_range; /* pairs skipped: placement or shape beyond MR_COLLISION_MAX_COORD */
} narrow_ctx;

/* the contact skin of a geometry (m): 1e-6 of its half-diagonal r, 0 for the halfspace and the
 * heightfield. A pair is tested within max(margin, skin(a) + skin(b)), so that a contact at
 * rest stays detected at margin 0 (a scene's default; a 1 mm margin is far above any skin). The
 * step aims resting contacts at Φ = −1e-12 m through the velocity (J v, to first order), while the
 * body's rotation over the step lifts its corners by about r (ω Δt)² / 2 above that aim
 * (1.2e-10 m for a 10 cm cube rocking at 0.07 rad/s, Δt = 1 ms); at margin 0 the contact was
 * then lost, the body fell freely for a step and was pushed out again, and its contact set
 * changed every other step. The skin covers that lift up to ω Δt = sqrt(2e-6) ≈ 1.4e-3 rad,
 * whatever the size. */
double geom_skin(const mr_geom *g);

/* a pair routine: contacts between a and b (normal from b to a), at most MR_PAIR_MAX_CONTACTS */
typedef int (*pair_fn)(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* dispatch: contacts of the pair in either order (swapped routines flip the normal) */
int narrow_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);

/* a convex object for GJK and EPA: a shape, or its core (a capsule's segment, a sphere's
 * centre: the shape is the core inflated by its radius), inflated by a further radius */
typedef struct {
  const shape *s;
  int core;       /* use the core of a capsule or sphere */
  double inflate; /* radius added in every direction */
} convex;

/* world support point of a convex object along d */
mr_vec3 convex_support(const convex *c, mr_vec3 d);
/* the radius of a shape around its core (capsule, sphere), 0 for the others */
double core_radius(const shape *s);

/* a vertex of the Minkowski difference: w = a − b, a on object a, b on object b */
typedef struct {
  mr_vec3 w, a, b;
} gjk_vertex;

/* GJK: 1 when separated, with the distance and witness points; 0 when touching or overlapping,
 * with the last simplex in s[0..*ns) (a tetrahedron enclosing the origin when *ns = 4) */
int gjk_run(const convex *a, const convex *b, gjk_vertex *s, int *ns, double *dist, mr_vec3 *pa,
            mr_vec3 *pb);

/* EPA (Expanding Polytope Algorithm) from a GJK simplex enclosing the origin, in fixed buffers,
 * bounded: 1 with the unit normal n from b towards a, the depth (overlap along n) and the
 * witness points; 0 when no enclosing polytope could be built */
int epa_run(const convex *a, const convex *b, const gjk_vertex *s, int ns, mr_vec3 *n,
            double *depth, mr_vec3 *pa, mr_vec3 *pb);

/* general convex pairs (convex.c): exact signed distance and normal, manifold by clipping the
 * two shapes' support features; at most 4 contacts */
int convex_collide(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
/* the manifold of a pair for its exact normal n (from b towards a) and signed distance phi: the
 * two shapes' support features along n clipped against each other, each point lifted onto both
 * surfaces with its own Φ, reduced to 4 (or the one witness contact); wa and wb are points of
 * a's and b's cores on their supporting planes along −n and n: the witness points when witness
 * is 1 (GJK's closest points), else any (then a single contact's witness is where the two
 * features' projections meet) (convex.c) */
int convex_manifold(const shape *a, const shape *b, mr_vec3 n, double phi, mr_vec3 wa, mr_vec3 wb,
                    double margin, int witness, raw_contact *out);

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
/* pairs with a cylinder and capsule–box (cylinder.c): the exact normal among the normals the
 * pair's features can have, then the manifold of convex_manifold */
int sphere_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int capsule_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int cylinder_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int box_cylinder(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
int capsule_box(const shape *a, const shape *b, narrow_ctx *c, raw_contact *out);
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
