/* Mesh files: binary and ASCII STL, Wavefront OBJ (vertices and faces, polygons fanned into
 * triangles) read here; Collada (.dae) and the other formats of the Open Asset Import Library
 * (assimp: .ply, .3ds, .fbx, .gltf, ...) read through it, every node's transform applied
 * (aiProcess_PreTransformVertices), Collada's <unit meter> applied by assimp and its <up_axis>
 * turned to +z: assimp rotates every Collada scene to +y up, and moreau's frames are z-up, so the
 * vertices are then turned by Rx(+90°), (x, y, z) -> (x, -z, y). The scale s is applied per axis;
 * a negative scale mirrors the mesh, and when s_x s_y s_z < 0 every triangle's winding is
 * reversed so that its normal still points outwards. Then the convex hull of the vertices by
 * qhull (libqhull_r, "Qt"), the
 * hull volume (qh_getarea), the mesh volume by the divergence theorem Σ v₀·(v₁ × v₂)/6 when the
 * mesh is closed (every edge of the welded mesh shared by exactly two triangles), and the
 * non-convexity test |volume| < 0.9 · hull volume, returned to the caller as a flag.
 * Loading code: it allocates. Errors name the file, the line (text formats) and the value. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <libqhull_r/qhull_ra.h>

#include "moreau/collision.h"

/* a growing mesh under construction */
typedef struct {
  double *v;
  int nv, cv;
  int *f;
  int nf, cf;
} builder;

static int add_vertex(builder *b, double x, double y, double z) {
  if (b->nv == b->cv) {
    int c = b->cv ? 2 * b->cv : 256;
    double *p = realloc(b->v, (size_t)c * 3 * sizeof(double));
    if (!p) return -1;
    b->v = p, b->cv = c;
  }
  b->v[3 * b->nv] = x, b->v[3 * b->nv + 1] = y, b->v[3 * b->nv + 2] = z;
  b->nv++;
  return 0;
}

static int add_face(builder *b, int i, int j, int k) {
  if (b->nf == b->cf) {
    int c = b->cf ? 2 * b->cf : 256;
    int *p = realloc(b->f, (size_t)c * 3 * sizeof(int));
    if (!p) return -1;
    b->f = p, b->cf = c;
  }
  b->f[3 * b->nf] = i, b->f[3 * b->nf + 1] = j, b->f[3 * b->nf + 2] = k;
  b->nf++;
  return 0;
}

/* the whole file in memory (NUL-terminated) */
static char *read_file(const char *path, size_t *size, mr_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    mr_error_set(err, MR_ERR_IO, "%s: cannot open mesh file", path);
    return NULL;
  }
  char *buf = NULL;
  size_t n = 0, cap = 0, got;
  do {
    if (n + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 1 << 17;
      char *p = realloc(buf, cap);
      if (!p) {
        free(buf), fclose(f);
        mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
      }
      buf = p;
    }
    got = fread(buf + n, 1, 65536, f);
    n += got;
  } while (got > 0);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    mr_error_set(err, MR_ERR_IO, "%s: read error", path);
    return NULL;
  }
  buf[n] = '\0';
  *size = n;
  return buf;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float lef32(const unsigned char *p) {
  uint32_t u = le32(p);
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* binary STL: 80-byte header, count, then 50 bytes per triangle */
static mr_status parse_stl_binary(const unsigned char *d, size_t size, const char *path, builder *b,
                                  mr_error *err) {
  uint32_t n = le32(d + 80);
  for (uint32_t t = 0; t < n; ++t) {
    const unsigned char *p = d + 84 + 50 * (size_t)t + 12;
    for (int k = 0; k < 3; ++k) {
      double x = lef32(p + 12 * k), y = lef32(p + 12 * k + 4), z = lef32(p + 12 * k + 8);
      if (!isfinite(x) || !isfinite(y) || !isfinite(z))
        return mr_error_set(err, MR_ERR_PARSE, "%s: triangle %u has a non-finite vertex (%g %g %g)",
                            path, t, x, y, z);
      if (add_vertex(b, x, y, z)) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
    }
    if (add_face(b, b->nv - 3, b->nv - 2, b->nv - 1))
      return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  }
  return MR_OK;
}

/* n numbers after position s on one line; error names the token */
static mr_status parse_numbers(const char *s, double *x, int n, const char *path, int line,
                               mr_error *err) {
  for (int k = 0; k < n; ++k) {
    while (*s == ' ' || *s == '\t')
      s++;
    char *end;
    x[k] = strtod(s, &end);
    if (end == s || !isfinite(x[k]) || (*end && !isspace((unsigned char)*end))) {
      int len = (int)strcspn(s, " \t\r\n");
      return mr_error_set(err, MR_ERR_PARSE, "%s:%d: bad number '%.*s'", path, line,
                          len > 40 ? 40 : len, s);
    }
    s = end;
  }
  return MR_OK;
}

/* the next line of a text buffer: NUL-terminates it in place, returns the following one */
static char *next_line(char *s) {
  char *e = strchr(s, '\n');
  if (!e) return s + strlen(s);
  *e = '\0';
  return e + 1;
}

/* ASCII STL: "vertex x y z" lines, three per facet */
static mr_status parse_stl_ascii(char *text, const char *path, builder *b, mr_error *err) {
  int line = 0, infacet = 0;
  for (char *s = text, *nx; *s; s = nx) {
    nx = next_line(s);
    line++;
    while (isspace((unsigned char)*s))
      s++;
    if (strncmp(s, "vertex", 6) == 0) {
      double x[3];
      if (parse_numbers(s + 6, x, 3, path, line, err)) return err ? err->status : MR_ERR_PARSE;
      if (add_vertex(b, x[0], x[1], x[2]))
        return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
      if (++infacet == 3) {
        infacet = 0;
        if (add_face(b, b->nv - 3, b->nv - 2, b->nv - 1))
          return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
      }
    }
  }
  if (infacet)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d: facet with %d vertices", path, line, infacet);
  return MR_OK;
}

/* an OBJ face index token "i", "i/t", "i//n", "i/t/n" (1-based, negative = relative) */
static int obj_index(const char *tok, int nv, int *idx) {
  char *end;
  long i = strtol(tok, &end, 10);
  if (end == tok || (*end && *end != '/')) return -1;
  i = i < 0 ? nv + i : i - 1;
  if (i < 0 || i >= nv) return -1;
  *idx = (int)i;
  return 0;
}

static mr_status parse_obj_face(char *s, const char *path, int line, builder *b, mr_error *err) {
  int first = -1, prev = -1, count = 0;
  for (char *tok = strtok(s, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
    int idx;
    if (obj_index(tok, b->nv, &idx))
      return mr_error_set(err, MR_ERR_PARSE, "%s:%d: bad face index '%s' (%d vertices so far)",
                          path, line, tok, b->nv);
    /* a fan from the first vertex */
    if (count >= 2 && add_face(b, first, prev, idx))
      return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
    if (count == 0) first = idx;
    prev = idx;
    count++;
  }
  if (count < 3)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d: face with %d vertices", path, line, count);
  return MR_OK;
}

static mr_status parse_obj(char *text, const char *path, builder *b, mr_error *err) {
  int line = 0;
  for (char *s = text, *nx; *s; s = nx) {
    nx = next_line(s);
    line++;
    while (*s == ' ' || *s == '\t')
      s++;
    if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
      double x[3];
      if (parse_numbers(s + 1, x, 3, path, line, err)) return err ? err->status : MR_ERR_PARSE;
      if (add_vertex(b, x[0], x[1], x[2]))
        return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
    } else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
      mr_status st = parse_obj_face(s + 1, path, line, b, err);
      if (st) return st;
    }
  }
  return MR_OK;
}

/* does the path end with ext (case-insensitive) */
static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n >= m && strcasecmp(path + n - m, ext) == 0;
}

/* the triangles of every mesh of an assimp scene, node transforms already applied */
static mr_status take_assimp(const struct aiScene *sc, int z_up, const char *path, builder *b,
                             mr_error *err) {
  for (unsigned k = 0; k < sc->mNumMeshes; ++k) {
    const struct aiMesh *me = sc->mMeshes[k];
    int base = b->nv;
    for (unsigned i = 0; i < me->mNumVertices; ++i) {
      double x = me->mVertices[i].x, y = me->mVertices[i].y, z = me->mVertices[i].z;
      if (!isfinite(x) || !isfinite(y) || !isfinite(z))
        return mr_error_set(err, MR_ERR_PARSE, "%s: mesh %u, vertex %u is not finite (%g %g %g)",
                            path, k, i, x, y, z);
      if (z_up ? add_vertex(b, x, -z, y) : add_vertex(b, x, y, z))
        return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
    }
    for (unsigned f = 0; f < me->mNumFaces; ++f) {
      const struct aiFace *fa = &me->mFaces[f];
      if (fa->mNumIndices != 3) continue; /* points and lines left by the triangulation */
      if (add_face(b, base + (int)fa->mIndices[0], base + (int)fa->mIndices[1],
                   base + (int)fa->mIndices[2]))
        return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
    }
  }
  return MR_OK;
}

/* a file in any format assimp reads */
static mr_status parse_assimp(const char *path, builder *b, mr_error *err) {
  if (!aiIsExtensionSupported(strrchr(path, '.') ? strrchr(path, '.') : ""))
    return mr_error_set(err, MR_ERR_UNSUPPORTED,
                        "%s: unknown mesh format (moreau reads .stl and .obj, and through assimp "
                        ".dae and the other formats assimp knows)",
                        path);
  unsigned flags = aiProcess_Triangulate | aiProcess_PreTransformVertices |
                   aiProcess_JoinIdenticalVertices | aiProcess_SortByPType;
  const struct aiScene *sc = aiImportFile(path, flags);
  if (!sc || !sc->mRootNode)
    return mr_error_set(err, MR_ERR_PARSE, "%s: cannot read the mesh: %s", path,
                        aiGetErrorString());
  mr_status st = take_assimp(sc, has_ext(path, ".dae"), path, b, err);
  aiReleaseImport(sc);
  return st;
}

static mr_status parse_file(char *data, size_t size, const char *path, builder *b, mr_error *err) {
  if (has_ext(path, ".obj")) return parse_obj(data, path, b, err);
  if (!has_ext(path, ".stl")) return parse_assimp(path, b, err);
  /* binary STL when the size matches its triangle count, else ASCII */
  if (size >= 84 && size == 84 + 50 * (size_t)le32((unsigned char *)data + 80))
    return parse_stl_binary((unsigned char *)data, size, path, b, err);
  const char *s = data;
  while (isspace((unsigned char)*s))
    s++;
  if (strncmp(s, "solid", 5) == 0) return parse_stl_ascii(data, path, b, err);
  return mr_error_set(err, MR_ERR_PARSE, "%s: neither ASCII ('solid') nor binary STL (%zu bytes)",
                      path, size);
}

static int cmp_vert(const void *x, const void *y, void *ctx) {
  const double *v = ctx;
  int a = *(const int *)x, b = *(const int *)y;
  for (int k = 0; k < 3; ++k)
    if (v[3 * a + k] != v[3 * b + k]) return v[3 * a + k] < v[3 * b + k] ? -1 : 1;
  return a - b;
}

/* welded vertex ids (exactly equal coordinates share an id), by sorting */
static int *weld(const mr_mesh *m) {
  int *order = malloc((size_t)m->nvert * sizeof(int)), *id = malloc((size_t)m->nvert * sizeof(int));
  if (!order || !id) {
    free(order), free(id);
    return NULL;
  }
  for (int i = 0; i < m->nvert; ++i)
    order[i] = i;
  /* bottom-up merge sort of the indices (C11 qsort takes no context for the coordinates) */
  for (int w = 1; w < m->nvert; w *= 2) {
    int *tmp = malloc((size_t)m->nvert * sizeof(int));
    if (!tmp) {
      free(order), free(id);
      return NULL;
    }
    for (int lo = 0; lo < m->nvert; lo += 2 * w) {
      int mid = lo + w < m->nvert ? lo + w : m->nvert,
          hi = lo + 2 * w < m->nvert ? lo + 2 * w : m->nvert;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = cmp_vert(&order[i], &order[j], m->vert) <= 0 ? order[i++] : order[j++];
      while (i < mid)
        tmp[k++] = order[i++];
      while (j < hi)
        tmp[k++] = order[j++];
    }
    memcpy(order, tmp, (size_t)m->nvert * sizeof(int));
    free(tmp);
  }
  int u = -1;
  for (int i = 0; i < m->nvert; ++i) {
    if (i == 0 || memcmp(&m->vert[3 * order[i]], &m->vert[3 * order[i - 1]], 3 * sizeof(double)))
      u++;
    id[order[i]] = u;
  }
  free(order);
  return id;
}

static int cmp_u64(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* closed: every undirected edge of the welded mesh is used by exactly two triangles */
static int is_closed(const mr_mesh *m) {
  int *id = weld(m);
  uint64_t *e = malloc((size_t)m->nface * 3 * sizeof *e);
  int closed = id && e;
  for (int f = 0; closed && f < m->nface; ++f)
    for (int k = 0; k < 3; ++k) {
      uint32_t a = (uint32_t)id[m->face[3 * f + k]], b = (uint32_t)id[m->face[3 * f + (k + 1) % 3]];
      e[3 * f + k] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    }
  if (closed) qsort(e, (size_t)m->nface * 3, sizeof *e, cmp_u64);
  for (int i = 0; closed && i < 3 * m->nface;) {
    int j = i;
    while (j < 3 * m->nface && e[j] == e[i])
      j++;
    if (j - i != 2) closed = 0;
    i = j;
  }
  free(id), free(e);
  return closed;
}

/* signed volume Σ v₀ · (v₁ × v₂) / 6 */
static double signed_volume(const mr_mesh *m) {
  double vol = 0;
  for (int f = 0; f < m->nface; ++f) {
    const double *a = &m->vert[3 * m->face[3 * f]], *b = &m->vert[3 * m->face[3 * f + 1]],
                 *c = &m->vert[3 * m->face[3 * f + 2]];
    vol += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
           a[2] * (b[0] * c[1] - b[1] * c[0]);
  }
  return vol / 6.0;
}

mr_status mr_mesh_compute_hull(mr_mesh *m, const char *name, mr_error *err) {
  if (m->nvert < 4)
    return mr_error_set(err, MR_ERR_INVALID, "%s: mesh has %d vertices, a hull needs 4", name,
                        m->nvert);
  char msg[1024] = "";
  FILE *errfile = fmemopen(msg, sizeof msg - 1, "w");
  qhT qh_qh, *qh = &qh_qh;
  qh_zero(qh, errfile);
  double *pts = malloc((size_t)m->nvert * 3 * sizeof(double));
  if (!pts) {
    if (errfile) fclose(errfile);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
  }
  memcpy(pts, m->vert, (size_t)m->nvert * 3 * sizeof(double));
  int code = qh_new_qhull(qh, 3, m->nvert, pts, False, "qhull Qt", NULL, errfile);
  mr_status st = MR_OK;
  if (code) {
    if (errfile) fflush(errfile);
    char first[160];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(msg, "\n"), msg);
    st = mr_error_set(err, MR_ERR_INVALID, "%s: convex hull failed (flat or degenerate mesh?): %s",
                      name, first);
  } else {
    qh_getarea(qh, qh->facet_list);
    m->hull_volume = qh->totvol;
    m->hull = malloc((size_t)qh->num_vertices * 3 * sizeof(double));
    if (!m->hull) st = mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
    vertexT *vertex;
    m->nhull = 0;
    FORALLvertices {
      if (!m->hull) break;
      memcpy(&m->hull[3 * m->nhull], vertex->point, 3 * sizeof(double));
      m->nhull++;
    }
  }
  int curlong, totlong;
  qh_freeqhull(qh, !qh_ALL);
  qh_memfreeshort(qh, &curlong, &totlong);
  free(pts);
  if (errfile) fclose(errfile);
  if (st == MR_OK) m->volume = is_closed(m) ? fabs(signed_volume(m)) : 0.0;
  return st;
}

void mr_mesh_free(mr_mesh *m) {
  if (!m) return;
  free(m->vert), free(m->face), free(m->hull);
  free(m);
}

mr_mesh *mr_mesh_load(const char *path, mr_vec3 scale, int *nonconvex, mr_error *err) {
  if (nonconvex) *nonconvex = 0;
  for (int k = 0; k < 3; ++k)
    if (!(scale.v[k] != 0) || !isfinite(scale.v[k])) {
      mr_error_set(err, MR_ERR_INVALID, "%s: mesh scale %g must be finite and non-zero", path,
                   scale.v[k]);
      return NULL;
    }
  size_t size;
  char *data = read_file(path, &size, err);
  if (!data) return NULL;
  builder b = {0};
  mr_status st = parse_file(data, size, path, &b, err);
  free(data);
  if (st == MR_OK && b.nf == 0)
    st = mr_error_set(err, MR_ERR_PARSE, "%s: empty mesh (no triangles)", path);
  mr_mesh *m = st == MR_OK ? calloc(1, sizeof *m) : NULL;
  if (st == MR_OK && !m) mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  if (!m) {
    free(b.v), free(b.f);
    return NULL;
  }
  for (int i = 0; i < b.nv; ++i)
    for (int k = 0; k < 3; ++k)
      b.v[3 * i + k] *= scale.v[k];
  /* a mirror (odd number of negative factors) reverses orientation: restore outward normals */
  if (scale.v[0] * scale.v[1] * scale.v[2] < 0)
    for (int f = 0; f < b.nf; ++f) {
      int t = b.f[3 * f + 1];
      b.f[3 * f + 1] = b.f[3 * f + 2], b.f[3 * f + 2] = t;
    }
  m->vert = b.v, m->nvert = b.nv, m->face = b.f, m->nface = b.nf;
  if (mr_mesh_compute_hull(m, path, err)) {
    mr_mesh_free(m);
    return NULL;
  }
  if (nonconvex && m->volume > 0 && m->volume < 0.9 * m->hull_volume) *nonconvex = 1;
  return m;
}

mr_status mr_model_load_meshes(mr_model *model, int *nwarnings, char *warn_msg, mr_error *err) {
  for (int i = 0; i < model->ngeoms; ++i) {
    mr_geom *g = &model->geoms[i];
    if (g->type != MR_GEOM_MESH || g->mesh) continue;
    if (!g->mesh_file)
      return mr_error_set(err, MR_ERR_INVALID, "geometry '%s': mesh without a file", g->name);
    int nc = 0;
    g->mesh = mr_mesh_load(g->mesh_file, g->mesh_scale, &nc, err);
    if (!g->mesh) return err ? err->status : MR_ERR_IO;
    if (nc && nwarnings) (*nwarnings)++;
    if (nc && warn_msg)
      snprintf(warn_msg, MR_ERROR_MSG_MAX,
               "%s: mesh far from convex (volume %g, hull volume %g): colliding with its hull",
               g->mesh_file, g->mesh->volume, g->mesh->hull_volume);
  }
  return MR_OK;
}
