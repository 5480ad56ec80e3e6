/* The scene description of a viewer page (viewer.h; docs/viewer.md, "Data format").
 *
 * Meshes are stored once: every mesh of the page (collision geometries and visual elements) is
 * keyed by its vertex and face arrays (FNV-1a hash, then compared byte for byte), so a file
 * used by several links, or as both a link's collision and visual mesh, is written once and
 * referenced by index. A stored mesh is welded (vertices with exactly equal coordinates become
 * one: an STL file repeats each vertex in every triangle that uses it) and its vertices
 * quantised to 16 bits per axis over its bounding box [lo, hi]: vertex = lo + (hi − lo) u /
 * 65535, an error of at most (hi − lo) / 131070 per axis (3.4 µm on Solo-12's 0.45 m base), far
 * below a pixel; faces are 16-bit indices when the welded mesh has at most 65535 vertices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/viewer.h"

/* ---- mesh table ---- */

typedef struct {
  const mr_mesh *mesh;
  uint64_t hash;
} mesh_entry;

typedef struct {
  mesh_entry *e;
  int n;
} mesh_table;

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 1099511628211u;
  return h;
}

static uint64_t mesh_hash(const mr_mesh *m) {
  uint64_t h = fnv(14695981039346656037u, &m->nvert, sizeof m->nvert);
  h = fnv(h, &m->nface, sizeof m->nface);
  h = fnv(h, m->vert, 3 * (size_t)m->nvert * sizeof *m->vert);
  return fnv(h, m->face, 3 * (size_t)m->nface * sizeof *m->face);
}

static int mesh_equal(const mr_mesh *a, const mr_mesh *b) {
  return a->nvert == b->nvert && a->nface == b->nface &&
         !memcmp(a->vert, b->vert, 3 * (size_t)a->nvert * sizeof *a->vert) &&
         !memcmp(a->face, b->face, 3 * (size_t)a->nface * sizeof *a->face);
}

/* the index of m in the table, added when new; -1 when out of memory */
static int mesh_index(mesh_table *t, const mr_mesh *m) {
  uint64_t h = mesh_hash(m);
  for (int k = 0; k < t->n; ++k)
    if (t->e[k].hash == h && (t->e[k].mesh == m || mesh_equal(t->e[k].mesh, m))) return k;
  mesh_entry *e = realloc(t->e, (size_t)(t->n + 1) * sizeof *e);
  if (!e) return -1;
  t->e = e;
  t->e[t->n] = (mesh_entry){m, h};
  return t->n++;
}

/* ---- one stored mesh: welded, quantised, packed ---- */

typedef struct {
  double x[3];
  int i;
} vkey;

static int vkey_cmp(const void *pa, const void *pb) {
  const vkey *a = pa, *b = pb;
  for (int k = 0; k < 3; ++k)
    if (a->x[k] != b->x[k]) return a->x[k] < b->x[k] ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* the welded vertex of every original vertex into id; returns the welded count, -1 on NOMEM;
 * the welded vertices go to *out (3 per vertex) */
static int weld(const mr_mesh *m, int *id, double **out) {
  vkey *k = malloc((size_t)m->nvert * sizeof *k + 1);
  double *w = malloc(3 * (size_t)m->nvert * sizeof *w + 1);
  if (!k || !w) return free(k), free(w), -1;
  for (int i = 0; i < m->nvert; ++i) {
    memcpy(k[i].x, m->vert + 3 * i, sizeof k[i].x);
    k[i].i = i;
  }
  qsort(k, (size_t)m->nvert, sizeof *k, vkey_cmp);
  int n = 0;
  for (int i = 0; i < m->nvert; ++i) {
    if (!i || memcmp(k[i].x, k[i - 1].x, sizeof k[i].x)) memcpy(w + 3 * n++, k[i].x, sizeof k[i].x);
    id[k[i].i] = n - 1;
  }
  free(k);
  *out = w;
  return n;
}

/* the welded vertices quantised to 16 bits over [lo, hi] */
static void quantise(const double *w, int n, double lo[3], double hi[3], uint16_t *u) {
  for (int k = 0; k < 3; ++k)
    lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)
      lo[k] = fmin(lo[k], w[3 * i + k]), hi[k] = fmax(hi[k], w[3 * i + k]);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      double span = hi[k] - lo[k], x = span > 0.0 ? (w[3 * i + k] - lo[k]) / span : 0.0;
      u[3 * i + k] = (uint16_t)lround(65535.0 * x);
    }
}

/* the faces over the welded vertices, as 16-bit indices when they fit */
static int write_faces(FILE *f, const mr_mesh *m, const int *id, int nw) {
  size_t n = 3 * (size_t)m->nface;
  if (nw > 65535) {
    uint32_t *x = malloc(n * sizeof *x + 1);
    for (size_t i = 0; x && i < n; ++i)
      x[i] = (uint32_t)id[m->face[i]];
    int bad = !x || mr_pack_write(f, x, n, MR_PACK_U32, 0);
    free(x);
    return bad ? -1 : 0;
  }
  uint16_t *x = malloc(n * sizeof *x + 1);
  for (size_t i = 0; x && i < n; ++i)
    x[i] = (uint16_t)id[m->face[i]];
  int bad = !x || mr_pack_write(f, x, n, MR_PACK_U16, 0);
  free(x);
  return bad ? -1 : 0;
}

static int write_mesh(FILE *f, const mr_mesh *m) {
  int *id = malloc((size_t)m->nvert * sizeof *id + 1);
  double *w = NULL, lo[3], hi[3];
  int nw = id ? weld(m, id, &w) : -1;
  uint16_t *u = nw >= 0 ? malloc(3 * (size_t)nw * sizeof *u + 1) : NULL;
  int bad = !u;
  if (!bad) {
    quantise(w, nw, lo, hi, u);
    fprintf(f, "{\"nv\":%d,\"nf\":%d,\"lo\":", nw, m->nface);
    mr_json_numbers(f, lo, nw ? 3 : 0);
    fputs(",\"hi\":", f);
    mr_json_numbers(f, hi, nw ? 3 : 0);
    fputs(",\"vert\":", f);
    bad = mr_pack_write(f, u, 3 * (size_t)nw, MR_PACK_U16, 1);
    if (!bad) fputs(",\"face\":", f), bad = write_faces(f, m, id, nw);
    fputc('}', f);
  }
  free(id), free(w), free(u);
  return bad ? -1 : 0;
}

/* ---- drawables ---- */

/* placement as "pos":[x,y,z],"quat":[x,y,z,w] */
static void write_placement(FILE *f, const mr_se3 *X) {
  mr_quat q = mr_m3_to_quat(&X->R);
  double qv[4] = {q.x, q.y, q.z, q.w};
  fputs("\"pos\":", f);
  mr_json_numbers(f, X->p.v, 3);
  fputs(",\"quat\":", f);
  mr_json_numbers(f, qv, 4);
}

/* the keys every drawable has */
static void write_shape(FILE *f, const char *name, mr_geom_type type, int body, const mr_se3 *X,
                        const double *size, int visual) {
  fputs("{\"name\":", f);
  mr_json_string(f, name);
  fprintf(f, ",\"type\":\"%s\",\"body\":%d,\"visual\":%d,", mr_geom_type_name(type), body, visual);
  write_placement(f, X);
  fputs(",\"size\":", f);
  mr_json_numbers(f, size, 3);
}

static int write_hfield(FILE *f, const mr_hfield *h) {
  size_t n = (size_t)h->nx * (size_t)h->ny;
  float *z = malloc(n * sizeof *z + 1);
  if (!z) return -1;
  for (size_t k = 0; k < n; ++k)
    z[k] = (float)h->h[k];
  fprintf(f, "{\"nx\":%d,\"ny\":%d,\"x0\":%.9g,\"y0\":%.9g,\"dx\":%.9g,\"dy\":%.9g,\"h\":", h->nx,
          h->ny, h->x0, h->y0, h->dx, h->dy);
  int bad = mr_pack_write(f, z, n, MR_PACK_F32, 1);
  fputc('}', f);
  free(z);
  return bad;
}

static int write_collision(FILE *f, const mr_model *m, mesh_table *t) {
  int bad = 0;
  for (int g = 0; g < m->ngeoms && !bad; ++g) {
    const mr_geom *G = &m->geoms[g];
    if (g) fputc(',', f);
    write_shape(f, G->name, G->type, G->body, &G->placement, G->size, 0);
    if (G->type == MR_GEOM_MESH && G->mesh) {
      int k = mesh_index(t, G->mesh);
      bad = k < 0;
      fprintf(f, ",\"mesh\":%d", k);
    }
    if (G->type == MR_GEOM_HEIGHTFIELD && G->hfield)
      fputs(",\"hfield\":", f), bad |= write_hfield(f, G->hfield);
    fputc('}', f);
  }
  return bad ? -1 : 0;
}

static int write_visuals(FILE *f, const mr_model *m, const mr_viewer_visuals *vis, mesh_table *t) {
  for (int k = 0; vis && k < vis->n; ++k) {
    const mr_viewer_visual *v = &vis->v[k];
    char name[MR_NAME_MAX + 24];
    snprintf(name, sizeof name, "%.95s/visual%d", m->bodies[v->body].name, k);
    fputs(m->ngeoms || k ? "," : "", f);
    write_shape(f, name, v->type, v->body, &v->placement, v->size, 1);
    if (v->rgba[3] > 0.0f) {
      double c[4] = {v->rgba[0], v->rgba[1], v->rgba[2], v->rgba[3]};
      fputs(",\"rgba\":", f), mr_json_numbers(f, c, 4);
    }
    if (v->type == MR_GEOM_MESH) {
      int i = mesh_index(t, v->mesh);
      if (i < 0) return -1;
      fprintf(f, ",\"mesh\":%d", i);
    }
    fputc('}', f);
  }
  return 0;
}

/* ---- the other keys ---- */

static void write_bodies(FILE *f, const mr_world *w) {
  const mr_model *m = w->model;
  fputs("\"bodies\":[", f);
  for (int b = 0; b < m->nbodies; ++b) {
    if (b) fputc(',', f);
    mr_json_string(f, m->bodies[b].name);
  }
  fputs("],\"robots\":[", f);
  for (int r = 0; r < w->nrobots; ++r) {
    const mr_world_robot *R = &w->robots[r];
    fputs(r ? ",{\"name\":" : "{\"name\":", f);
    mr_json_string(f, R->name);
    fprintf(f, ",\"first_body\":%d,\"nbodies\":%d}", R->first_body, R->nbodies);
  }
  fputs("],", f);
}

static void write_missing(FILE *f, const mr_viewer_visuals *vis) {
  fputs("\"missing\":[", f);
  for (int k = 0; vis && k < vis->nmissing; ++k) {
    const mr_viewer_missing *m = &vis->missing[k];
    fprintf(f, "%s{\"body\":%d,\"link\":", k ? "," : "", m->body);
    mr_json_string(f, m->link);
    fputs(",\"reason\":", f);
    mr_json_string(f, m->reason);
    fputc('}', f);
  }
  fputs("],", f);
}

int mr_viewer_follow_body(const mr_world *w) {
  if (w->nrobots && w->robots[0].nbodies > 0) return w->robots[0].first_body;
  for (int b = 0; b < w->nbodies; ++b)
    if (!w->bodies[b].fixed && w->bodies[b].body > 0) return w->bodies[b].body;
  return -1;
}

int mr_viewer_describe(FILE *f, const mr_world *w, const mr_viewer_visuals *vis) {
  const mr_model *m = w->model;
  mesh_table t = {0};
  write_bodies(f, w);
  fprintf(f, "\"follow\":%d,\"gravity\":", mr_viewer_follow_body(w));
  mr_json_numbers(f, m->gravity.v, 3);
  fputs(",\"geoms\":[", f);
  int bad = write_collision(f, m, &t) || write_visuals(f, m, vis, &t);
  fputs("],", f);
  write_missing(f, vis);
  fputs("\"meshes\":[", f);
  for (int k = 0; k < t.n && !bad; ++k) {
    if (k) fputc(',', f);
    bad = write_mesh(f, t.e[k].mesh);
  }
  fputs("],", f);
  free(t.e);
  return bad ? -1 : 0;
}
