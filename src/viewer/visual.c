/* The visual elements of a world's URDF robots, for the viewer (viewer.h).
 *
 * The model keeps only collision geometry (the URDF loader skips <visual>); here each robot's
 * URDF is read again with libxml2 and every <link>'s <visual> elements become drawables: a
 * <mesh> (any file mr_mesh_load reads: STL, OBJ, Collada .dae and the other formats of assimp,
 * the same importer as collision meshes; a file that is missing or unreadable is recorded with
 * its link and the reason, and the page draws that link's collision geometry), <box>,
 * <sphere> or <cylinder>, at
 * origin ∘ (the link's frame in its body), with the rgba of its <material> (inline, or a
 * robot-level material of that name). The link named L of robot R is the model frame "R/L" (a body,
 * or a link merged into one by a fixed joint), whose placement in its body composes with the
 * visual's origin: ᵇX_v = ᵇX_L · ᴸX_v. Mesh paths resolve as collision meshes do:
 * package://NAME/REST under every ancestor directory of the URDF file, then under the
 * MOREAU_PACKAGE_PATH roots; file:// and relative paths against the URDF's directory. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "moreau/collision.h"
#include "viewer/viewer.h"

typedef struct {
  const mr_world *world;
  const mr_world_robot *robot;
  xmlNode *root; /* <robot> */
  mr_viewer_visuals *out;
  int cap, capm;
  const mr_frame *link; /* the link being read */
  int nomem;            /* a missing element could not be recorded */
} visual_ctx;

static int is_element(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNode *child(const xmlNode *n, const char *name) {
  for (xmlNode *c = n->children; c; c = c->next)
    if (is_element(c, name)) return c;
  return NULL;
}

/* up to n numbers of an attribute into x (left as given when absent); 0 when all read */
static int attr_numbers(const xmlNode *n, const char *name, double *x, int count) {
  xmlChar *a = n ? xmlGetProp(n, (const xmlChar *)name) : NULL;
  if (!a) return 0;
  const char *s = (const char *)a;
  int k = 0;
  for (char *end; k < count; ++k, s = end) {
    x[k] = strtod(s, &end);
    if (end == s) break;
  }
  xmlFree(a);
  return k == count ? 0 : -1;
}

/* record an element of the current link that is not drawn, with the reason (fmt with one %s) */
static void skip(visual_ctx *c, const char *fmt, const char *what) {
  mr_viewer_visuals *o = c->out;
  if (o->nmissing == c->capm) {
    int cap = c->capm ? 2 * c->capm : 16;
    mr_viewer_missing *p = realloc(o->missing, (size_t)cap * sizeof *p);
    if (!p) {
      c->nomem = 1;
      return;
    }
    o->missing = p, c->capm = cap;
  }
  mr_viewer_missing *m = &o->missing[o->nmissing++];
  m->body = c->link->body;
  snprintf(m->link, sizeof m->link, "%s", c->link->name);
  if (snprintf(m->reason, sizeof m->reason, fmt, what) < 0) m->reason[0] = '\0';
}

static int file_exists(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

/* out = A/B (A cut to len bytes); 0 when it fits and names a file */
static int join_exists(char *out, size_t size, const char *a, int len, const char *b) {
  int n = snprintf(out, size, "%.*s/%s", len, a, b);
  return n >= 0 && (size_t)n < size && file_exists(out) ? 0 : -1;
}

/* package://NAME/REST under the URDF's ancestors, then MOREAU_PACKAGE_PATH (as collision
 * meshes without a scene's package_roots) */
static int resolve_package(const char *urdf, const char *rest, char *out, size_t size) {
  char dir[MR_PATH_MAX];
  snprintf(dir, sizeof dir, "%s", urdf);
  for (char *slash; (slash = strrchr(dir, '/')) && slash != dir;) {
    *slash = '\0';
    if (!join_exists(out, size, dir, (int)strlen(dir), rest)) return 0;
  }
  for (const char *l = getenv("MOREAU_PACKAGE_PATH"); l && *l;) {
    size_t len = strcspn(l, ":");
    if (len && !join_exists(out, size, l, (int)len, rest)) return 0;
    l += len + (l[len] == ':');
  }
  return -1;
}

static int resolve_mesh(const char *urdf, const char *name, char *out, size_t size) {
  if (!strncmp(name, "package://", 10)) return resolve_package(urdf, name + 10, out, size);
  if (!strncmp(name, "file://", 7)) name += 7;
  const char *slash = strrchr(urdf, '/');
  if (name[0] != '/' && slash) return join_exists(out, size, urdf, (int)(slash - urdf), name);
  int n = snprintf(out, size, "%s", name);
  return n >= 0 && (size_t)n < size && file_exists(out) ? 0 : -1;
}

/* <mesh filename scale>: loaded by mr_mesh_load (STL, OBJ, and through assimp Collada and the
 * other formats it reads), otherwise skipped (returns 1) */
static int read_mesh(visual_ctx *c, const xmlNode *s, mr_viewer_visual *v) {
  xmlChar *fn = xmlGetProp(s, (const xmlChar *)"filename");
  double scale[3] = {1, 1, 1};
  char path[MR_PATH_MAX];
  int bad = !fn || attr_numbers(s, "scale", scale, 3);
  if (bad)
    skip(c, "a visual <mesh> without a valid filename or scale%s", "");
  else if (resolve_mesh(c->robot->urdf, (const char *)fn, path, sizeof path))
    bad = 1, skip(c,
                  "visual mesh '%s' not found (package:// paths are looked up under the URDF's "
                  "folders and the MOREAU_PACKAGE_PATH folders)",
                  (const char *)fn);
  if (!bad) {
    mr_error err = {0};
    v->mesh = mr_mesh_load(path, mr_v3(scale[0], scale[1], scale[2]), NULL, &err);
    if (!v->mesh) bad = 1, skip(c, "visual mesh: %s", err.msg);
  }
  xmlFree(fn);
  return bad;
}

/* the shape in <geometry>; 1 when it cannot be drawn */
static int read_shape(visual_ctx *c, const xmlNode *g, mr_viewer_visual *v) {
  xmlNode *s;
  double x[3] = {0, 0, 0};
  if ((s = child(g, "mesh"))) return v->type = MR_GEOM_MESH, read_mesh(c, s, v);
  if ((s = child(g, "box"))) {
    v->type = MR_GEOM_BOX;
    int bad = attr_numbers(s, "size", x, 3);
    for (int k = 0; k < 3; ++k)
      v->size[k] = 0.5 * x[k];
    return bad;
  }
  if ((s = child(g, "sphere")))
    return v->type = MR_GEOM_SPHERE, attr_numbers(s, "radius", v->size, 1);
  if ((s = child(g, "cylinder"))) {
    v->type = MR_GEOM_CYLINDER;
    int bad = attr_numbers(s, "radius", v->size, 1) || attr_numbers(s, "length", x, 1);
    v->size[1] = 0.5 * x[0];
    return bad;
  }
  return 1;
}

/* rgba of <material>: its own <color>, else the robot-level material of its name */
static void read_color(visual_ctx *c, const xmlNode *vis, float rgba[4]) {
  xmlNode *m = child(vis, "material"), *col = m ? child(m, "color") : NULL;
  xmlChar *name = m && !col ? xmlGetProp(m, (const xmlChar *)"name") : NULL;
  for (xmlNode *t = c->root->children; name && t && !col; t = t->next) {
    xmlChar *tn = is_element(t, "material") ? xmlGetProp(t, (const xmlChar *)"name") : NULL;
    if (tn && !xmlStrcmp(tn, name)) col = child(t, "color");
    xmlFree(tn);
  }
  xmlFree(name);
  double x[4] = {0, 0, 0, 0};
  if (col && !attr_numbers(col, "rgba", x, 4))
    for (int k = 0; k < 4; ++k)
      rgba[k] = (float)x[k];
}

static mr_status push_visual(visual_ctx *c, const mr_viewer_visual *v, mr_error *err) {
  mr_viewer_visuals *o = c->out;
  if (o->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    mr_viewer_visual *p = realloc(o->v, (size_t)cap * sizeof *p);
    if (!p) return mr_error_set(err, MR_ERR_NOMEM, "out of memory");
    o->v = p, c->cap = cap;
  }
  o->v[o->n++] = *v;
  return MR_OK;
}

/* one <visual> of the link whose model frame is f */
static mr_status read_visual(visual_ctx *c, const xmlNode *vis, int f, mr_error *err) {
  const mr_frame *F = &c->world->model->frames[f];
  mr_viewer_visual v = {.body = F->body};
  double xyz[3] = {0, 0, 0}, rpy[3] = {0, 0, 0};
  xmlNode *o = child(vis, "origin"), *g = child(vis, "geometry");
  c->link = F;
  if (attr_numbers(o, "xyz", xyz, 3) || attr_numbers(o, "rpy", rpy, 3) || !g)
    return skip(c, "a <visual>%s has no valid origin or geometry", ""), MR_OK;
  if (read_shape(c, g, &v)) {
    /* a mesh that cannot be drawn was recorded by read_mesh */
    if (v.type != MR_GEOM_MESH)
      skip(c,
           "a <visual> shape%s is not drawn (not a mesh, box, "
           "sphere or cylinder, or a bad size)",
           "");
    return MR_OK;
  }
  mr_se3 X = mr_se3_make(mr_m3_rpy(rpy[0], rpy[1], rpy[2]), mr_v3(xyz[0], xyz[1], xyz[2]));
  v.placement = mr_se3_mul(&F->placement, &X);
  read_color(c, vis, v.rgba);
  mr_status st = push_visual(c, &v, err);
  if (st) mr_mesh_free(v.mesh);
  return st;
}

static mr_status read_links(visual_ctx *c, mr_error *err) {
  const mr_model *m = c->world->model;
  for (xmlNode *l = c->root->children; l; l = l->next) {
    if (!is_element(l, "link")) continue;
    xmlChar *ln = xmlGetProp(l, (const xmlChar *)"name");
    char name[2 * MR_NAME_MAX];
    snprintf(name, sizeof name, "%s/%s", c->robot->name, ln ? (const char *)ln : "");
    xmlFree(ln);
    int f = mr_model_frame_index(m, name);
    for (xmlNode *v = l->children; f >= 0 && v; v = v->next)
      if (is_element(v, "visual") && read_visual(c, v, f, err)) return err->status;
  }
  return MR_OK;
}

mr_status mr_viewer_visuals_load(const mr_world *w, mr_viewer_visuals *out, mr_error *err) {
  memset(out, 0, sizeof *out);
  visual_ctx c = {.world = w, .out = out};
  mr_status st = MR_OK;
  for (int r = 0; r < w->nrobots && !st; ++r) {
    c.robot = &w->robots[r];
    xmlDoc *doc =
        xmlReadFile(c.robot->urdf, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc) {
      st = mr_error_set(err, MR_ERR_IO, "%s: cannot read the URDF again for its visuals",
                        c.robot->urdf);
      break;
    }
    c.root = xmlDocGetRootElement(doc);
    if (c.root) st = read_links(&c, err);
    xmlFreeDoc(doc);
  }
  if (!st && c.nomem) st = mr_error_set(err, MR_ERR_NOMEM, "out of memory");
  if (st) mr_viewer_visuals_free(out);
  return st;
}

void mr_viewer_visuals_free(mr_viewer_visuals *v) {
  for (int k = 0; k < v->n; ++k)
    mr_mesh_free(v->v[k].mesh);
  free(v->v);
  free(v->missing);
  memset(v, 0, sizeof *v);
}

void mr_viewer_visuals_message(const mr_viewer_visuals *v, char *buf, size_t size) {
  if (!v->nmissing) {
    snprintf(buf, size, "every visual element drawn");
    return;
  }
  const mr_viewer_missing *m = &v->missing[0];
  snprintf(buf, size,
           "%d visual element(s) not drawn, their links drawn with their collision geometry "
           "instead; the first: link '%s': %s",
           v->nmissing, m->link, m->reason);
}
