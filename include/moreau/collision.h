/* Collision detection: from the world placements of a model's geometries to contact points,
 * frames and signed distances (DESIGN.md §3-§4).
 *
 * A contact between geometries a (first) and b (second) carries a world point (midway between
 * the two surfaces), a frame whose columns are (t₁, t₂, n) with the normal n pointing FROM b
 * TOWARDS a, and the signed distance Φ_N (< 0 in penetration). Pairs within the security margin
 * (0 ≤ Φ_N ≤ margin, at least the two geometries' contact skins: 1e-6 of each half-diagonal,
 * docs/collision.md) are reported with their true Φ_N. The tangent basis is a fixed function of
 * the normal (Frisvad's construction), so a persisting contact keeps its basis.
 *
 * Usage: mr_collision_create once per model (every buffer is sized there), then per step
 * mr_collision_detect(c, body placements) or mr_collision_detect_geoms(c, geom placements); the
 * contacts are in mr_collision_contacts. No allocation happens in a query (GJK and EPA work in
 * fixed buffers). See docs/collision.md. */
#ifndef MOREAU_COLLISION_H
#define MOREAU_COLLISION_H

#include <stddef.h>
#include <stdint.h>

#include "moreau/error.h"
#include "moreau/model.h"
#include "moreau/spatial.h"

/* the largest number of contacts one pair of geometries produces */
#define MR_PAIR_MAX_CONTACTS 8

/* the collision range (m): geometry sizes, mesh vertices and placements must stay within ±1e6 m
 * (far beyond any robot scene; past it, round-off in the narrowphase's 1e-9 tolerances would
 * exceed the quantities being compared). Meshes and sizes outside it are rejected with an
 * error; a placement outside it skips its pairs (stats.out_of_range). */
#define MR_COLLISION_MAX_COORD 1e6

/* One contact point. */
typedef struct {
  int geom[2];        /* geometry ids (first, second) */
  int body[2];        /* their bodies */
  mr_vec3 point;      /* world point, midway between the two surfaces */
  mr_mat3 frame;      /* columns (t₁, t₂, n); n from geom[1] towards geom[0] */
  double phi;         /* signed distance Φ_N (m), negative in penetration */
  double mu;          /* friction coefficient of the pair */
  double restitution; /* restitution e of the pair */
  double compliance;  /* normal compliance R of the pair */
  double tangential_compliance; /* tangential compliance R_T of the pair */
  int feature;        /* feature of the pair that made the contact (box vertex, triangle...) */
  uint64_t key;       /* stable identity: geom[0], geom[1] and feature packed (warm start) */
} mr_contact;

/* A pair of geometry ids (unordered for filters). */
typedef struct {
  int a, b;
} mr_geom_pair;

/* A per-pair material that overrides the combination rule. */
typedef struct {
  int a, b; /* geometry ids (either order) */
  double mu, restitution, compliance;
  double tangential_compliance; /* R_T (0 when not given) */
} mr_pair_material;

typedef enum {
  MR_BROADPHASE_SAP = 0, /* sweep and prune along the axis of largest spread, insertion sort */
  MR_BROADPHASE_BRUTE,   /* every pair (reference, for tests) */
  MR_BROADPHASE_TREE,    /* dynamic AABB tree of fat boxes, incremental (src/collision/bvh.c) */
  MR_BROADPHASE_AUTO     /* SAP below MR_BROADPHASE_AUTO_TREE_MIN bounded geometries, else the
                            tree (default; see docs/collision.md for the measurements) */
} mr_broadphase_kind;

/* bounded geometries from which MR_BROADPHASE_AUTO uses the tree */
#define MR_BROADPHASE_AUTO_TREE_MIN 1024

/* Settings, with defaults from mr_collision_settings_default. Arrays are copied at creation. */
typedef struct {
  double margin;         /* security margin (m): contacts with Φ_N ≤ margin, or ≤ the pair's
                            contact skin where larger (default 0, as a scene's
                            contact.margin) */
  int skip_parent_child; /* skip geometries on parent/child bodies (default 1) */
  mr_broadphase_kind broadphase; /* default MR_BROADPHASE_AUTO; every kind yields the same
                                    pairs in the same order, hence the same contacts */
  int force_ccd;        /* use the general convex routine (GJK, EPA, candidate axes, feature
                           clipping) for every convex pair, even analytic ones (default 0) */
  int ccd_max_iter;     /* iteration limit of libccd's MPR, the fallback when EPA cannot start
                           (default 1000) */
  double ccd_tolerance; /* libccd MPR tolerance (default 1e-9) */
  const mr_geom_pair *exclude;
  int nexclude; /* pairs never tested (besides the model's filter_exclude) */
  const mr_geom_pair *include;
  int ninclude; /* pairs always tested, bypassing other filters (besides the model's
                   filter_include) */
  const mr_pair_material *materials;
  int nmaterials; /* per-pair material overrides */
} mr_collision_settings;

/* Counters of one query (reset at each detect). */
typedef struct {
  int npairs;       /* candidate pairs after the broadphase and filters */
  int ncontacts;    /* contacts written */
  int overflow;     /* contacts that did not fit in max_contacts (warning) */
  int ccd_failures; /* general convex pairs with no usable normal (EPA and MPR both failed),
                       turned into "no contact" (warning) */
  int unsupported;  /* pairs of shape types without a collision routine (warning) */
  int out_of_range; /* pairs skipped: a placement non-finite or beyond MR_COLLISION_MAX_COORD */
} mr_collision_stats;

typedef struct mr_collision_s mr_collision;

mr_collision_settings mr_collision_settings_default(void);

/* A collision context for model m holding every buffer, for at most max_contacts contacts.
 * MESH geometries must have their mesh loaded (mr_model_load_meshes) and hulled.
 * Returns NULL with err filled on invalid settings or out of memory. */
mr_collision *mr_collision_create(const mr_model *m, const mr_collision_settings *s,
                                  int max_contacts, mr_error *err);
void mr_collision_free(mr_collision *c);

/* Detect contacts given the world placement of every body (indexed by body; geometry placement
 * = body placement * geom placement). Returns MR_OK, or MR_ERR_NOMEM when contacts overflowed
 * max_contacts (the first max_contacts are kept, stats.overflow counts the rest; err filled). */
mr_status mr_collision_detect(mr_collision *c, const mr_se3 *body_placements, mr_error *err);
/* The same with the world placement of every geometry given directly (indexed by geometry). */
mr_status mr_collision_detect_geoms(mr_collision *c, const mr_se3 *geom_placements, mr_error *err);

/* Room for max_contacts contacts (only grows; the contacts of the last detection are kept), and
 * the number the buffer holds now. */
mr_status mr_collision_reserve(mr_collision *c, int max_contacts, mr_error *err);
int mr_collision_capacity(const mr_collision *c);

/* Speculative contacts for the next detections: with the spatial velocity of every body (body
 * frame, indexed by body, as mr_data.vb) over a step of dt and a bound accel on the bodies'
 * acceleration (m/s², e.g. |gravity|), each bounded geometry of a moving body reaches
 *   r_g = dt (|v_o| + |ω| ρ_g + accel dt),   ρ_g a bound on its points' distance from the origin,
 * and a pair is reported below margin + r_a + r_b (broadphase boxes grow by r_g): a contact
 * enters the problem in the step before its gap would close. body_velocity NULL: no reach. */
void mr_collision_set_motion(mr_collision *c, const mr_motion *body_velocity, double dt,
                             double accel);

int mr_collision_ncontacts(const mr_collision *c);
const mr_contact *mr_collision_contacts(const mr_collision *c);
mr_collision_stats mr_collision_get_stats(const mr_collision *c);
/* candidate pairs of the last query (after broadphase and filtering), in a fixed order */
int mr_collision_pairs(const mr_collision *c, const mr_geom_pair **pairs);

/* ---- single pairs and shapes (also used by tests and tools) ---- */

/* Contacts between geometry a at world placement Xa and b at Xb within margin; writes at most
 * MR_PAIR_MAX_CONTACTS contacts in out (geom ids -1, bodies from the geoms, material combined)
 * and returns their number. force_ccd selects the general convex routine even where an
 * analytic one exists. Warnings (failures, unsupported pairs, out of range) are added to stats
 * when given. */
int mr_collide(const mr_geom *a, const mr_se3 *Xa, const mr_geom *b, const mr_se3 *Xb,
               double margin, int force_ccd, mr_contact *out, mr_collision_stats *stats);

/* Axis-aligned bounding box of a geometry in its own frame; returns 0 for unbounded shapes
 * (halfspace), 1 otherwise. */
int mr_geom_local_aabb(const mr_geom *g, mr_vec3 *lo, mr_vec3 *hi);
/* Support point of a bounded convex geometry in its own frame along direction d (not
 * necessarily unit): argmax over the shape of ⟨x, d⟩. */
mr_vec3 mr_geom_support(const mr_geom *g, mr_vec3 d);

/* The contact frame for a unit normal n: columns (t₁, t₂, n), right-handed, a continuous
 * function of n except at n = (0, 0, −1) (Frisvad, "Building an orthonormal basis from a 3D unit
 * vector without normalization", 2012). */
mr_mat3 mr_contact_frame(mr_vec3 n);

/* The combination rule for two geometries' materials: μ = sqrt(μ₁ μ₂), e = max(e₁, e₂),
 * R = R₁ + R₂ (compliances in series). */
void mr_material_combine(const mr_geom *a, const mr_geom *b, double *mu, double *e, double *R);
/* The same rule for the tangential compliances: R_T = R_T1 + R_T2 (in series). */
double mr_material_combine_tangential(const mr_geom *a, const mr_geom *b);

/* ---- heightfields ---- */

/* A heightfield of nx x ny samples h = f(x0 + i dx, y0 + j dy, user), solid down to
 * min(h) - base. Returns NULL with err filled (bad sizes, non-finite sample, no memory). */
mr_hfield *mr_hfield_from_function(double (*f)(double x, double y, void *user), void *user, int nx,
                                   int ny, double x0, double y0, double dx, double dy, double base,
                                   mr_error *err);
/* A heightfield from a text grid file: ny lines of nx numbers separated by spaces, tabs or
 * commas; line j holds the heights at y = y0 + j dy; lines starting with '#' are comments.
 * Errors name the file, line and offending text. */
mr_hfield *mr_hfield_load(const char *path, double x0, double y0, double dx, double dy, double base,
                          mr_error *err);
void mr_hfield_free(mr_hfield *h);
/* height of the piecewise-linear surface at (x, y) in the field's frame (clamped to the grid) */
double mr_hfield_height(const mr_hfield *h, double x, double y);

/* ---- meshes (src/io/mesh.c) ---- */

/* Load a binary or ASCII STL or a Wavefront OBJ file, scale its vertices, compute its convex
 * hull (qhull) and volumes. A mesh far from convex (closed, |volume| < 0.9 hull volume) sets
 * *nonconvex (if given) so that the caller can warn. Returns NULL with err filled. */
mr_mesh *mr_mesh_load(const char *path, mr_vec3 scale, int *nonconvex, mr_error *err);
/* The same from a file's bytes in memory, for STL and OBJ only: name gives the format (its
 * ".stl" or ".obj" extension; other names are MR_ERR_UNSUPPORTED) and prefixes messages. */
mr_mesh *mr_mesh_parse(const char *data, size_t size, const char *name, mr_vec3 scale,
                       int *nonconvex, mr_error *err);
/* Compute the hull of a mesh whose vert/face are filled (hull, nhull, hull_volume, volume). */
mr_status mr_mesh_compute_hull(mr_mesh *mesh, const char *name, mr_error *err);
void mr_mesh_free(mr_mesh *mesh);

/* Load every MESH geometry's mesh_file into geom->mesh (skipping those already loaded).
 * *nwarnings (if given) is increased by the number of non-convex meshes (earlier warnings, such
 * as the URDF loader's, are kept); the name of the last one goes to warn_msg (if given,
 * MR_ERROR_MSG_MAX bytes). */
mr_status mr_model_load_meshes(mr_model *m, int *nwarnings, char *warn_msg, mr_error *err);

#endif
