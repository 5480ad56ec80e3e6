/* The viewer layer (above src/io, below src/cli): what the HTML viewer's pages are made of, for
 * the offline replay (src/cli/replay.c) and the live server (live.c) alike.
 *
 * - Visual elements: a world's URDF robots read again for their <visual> elements (visual.c),
 *   with every element that cannot be drawn recorded with its body and the reason.
 * - The scene description: the JSON keys every page starts from (describe.c): bodies, the body
 *   the camera follows, the meshes (each stored once, quantised and compressed), the drawables
 *   (collision geometries and visual elements), the missing visual elements, gravity.
 * - Packed arrays (pack.c): typed arrays as {"t": type, "n": count, "s": shuffled, "z": base64
 *   of their deflate stream}, which the page inflates with the browser's DecompressionStream.
 * - The page (page.c): the template viewer/page.html with the data and the bundled script
 *   (viewer/src, linked into the library as data by the Makefile).
 *
 * docs/viewer.md describes the format. Loading code only: everything here allocates. */
#ifndef MOREAU_VIEWER_VIEWER_H
#define MOREAU_VIEWER_VIEWER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "moreau/collision.h"
#include "moreau/world.h"

/* ---- visual elements (visual.c) ---- */

/* one drawable visual element of a URDF link */
typedef struct {
  mr_geom_type type; /* MR_GEOM_MESH, BOX, SPHERE or CYLINDER */
  int body;          /* model body */
  mr_se3 placement;  /* in the body frame */
  double size[3];    /* as mr_geom.size */
  mr_mesh *mesh;     /* MESH: the file's triangles (scaled), owned by the element */
  float rgba[4];     /* the URDF material colour, alpha 0 when none */
} mr_viewer_visual;

/* a visual element that is not drawn: its link's body is drawn with collision geometry */
typedef struct {
  int body;                      /* model body of the link */
  char link[2 * MR_NAME_MAX];    /* "ROBOT/LINK" */
  char reason[MR_ERROR_MSG_MAX]; /* why (the file and what failed), no URDF path in front */
} mr_viewer_missing;

typedef struct {
  mr_viewer_visual *v;
  int n;
  mr_viewer_missing *missing;
  int nmissing;
} mr_viewer_visuals;

/* Read the visual elements of every robot of w (robots[r].urdf). An element that cannot be
 * drawn (a mesh file missing or unreadable, an unknown shape) is recorded in out->missing, not
 * an error. MR_ERR_IO when a URDF cannot be read again, MR_ERR_NOMEM; out is then empty. */
mr_status mr_viewer_visuals_load(const mr_world *w, mr_viewer_visuals *out, mr_error *err);
void mr_viewer_visuals_free(mr_viewer_visuals *v);
/* "N visual element(s) not drawn ... the first: ..." for a terminal, into buf (size bytes) */
void mr_viewer_visuals_message(const mr_viewer_visuals *v, char *buf, size_t size);

/* ---- packed arrays and JSON pieces (pack.c) ---- */

typedef enum { MR_PACK_F32, MR_PACK_I32, MR_PACK_U16, MR_PACK_U32 } mr_pack_type;

/* n values of type t at x as a packed-array JSON object; shuffle 1 stores the k-th bytes of
 * every value together (better compression of floats). -1 when out of memory (nothing written
 * then), 0 otherwise. */
int mr_pack_write(FILE *f, const void *x, size_t n, mr_pack_type t, int shuffle);
/* a JSON string, with <, > and & escaped so that it cannot close a script element */
void mr_json_string(FILE *f, const char *s);
/* [x0,x1,...] with 9 significant digits (non-finite values written 0) */
void mr_json_numbers(FILE *f, const double *x, int n);
/* base64 of n bytes (RFC 4648, padded) */
void mr_base64_write(FILE *f, const unsigned char *d, size_t n);

/* ---- the scene description (describe.c) ---- */

/* The keys "bodies", "robots", "follow", "gravity", "meshes", "geoms" and "missing" of a
 * page (each followed by a comma) for world w with its visual elements vis (NULL: none).
 * -1 when out of memory. */
int mr_viewer_describe(FILE *f, const mr_world *w, const mr_viewer_visuals *vis);
/* the body a page's camera follows by default: the first robot's base, else the first free
 * body, else -1 (none: the camera stays where it is fitted) */
int mr_viewer_follow_body(const mr_world *w);

/* ---- the page (page.c) ---- */

/* what a build without the viewer layer says (CMake option MOREAU_VIEWER=OFF) */
#define MR_VIEWER_ABSENT_MSG                                                                       \
  "this moreau was built without the HTML viewer (CMake option MOREAU_VIEWER=OFF, the default "    \
  "when npm is missing): build it with npm installed, or with make"

/* 1 when the library holds the viewer (its page, the live server); 0 with MR_ERR_UNSUPPORTED
 * and MR_VIEWER_ABSENT_MSG in err otherwise (src/viewer/absent/absent.c) */
int mr_viewer_available(mr_error *err);

/* The page: viewer/page.html with @DATA@ replaced by what write_data writes (one JSON object)
 * and @SCRIPT@ by the bundled script. Returns write_data's result (0 or -1). */
int mr_viewer_page_write(FILE *f, int (*write_data)(FILE *f, void *ctx), void *ctx);

#endif
