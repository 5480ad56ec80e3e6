/* Mesh files, read by the Open Asset Import Library (assimp): STL (binary and ASCII) and
 * Wavefront OBJ from the file's bytes, Collada (.dae) and the other formats assimp knows (.ply,
 * .3ds, .fbx, .gltf, ...) from the file, polygons triangulated (aiProcess_Triangulate) and every
 * node's transform applied (aiProcess_PreTransformVertices). assimp reads in single precision
 * (Debian's build: ai_real is float), as binary STL stores its vertices, and its text readers
 * skip a malformed number silently, so the bytes of STL and OBJ files are checked first: every
 * number of a vertex is a whole finite number, every face index names a vertex, every facet has
 * three vertices; an error names the file, the line (text) or triangle (binary) and the value.
 * STL keeps one vertex per triangle corner, in file order; OBJ, which assimp unshares per corner,
 * has its exactly equal vertices merged again, in order of first use. Collada's <unit meter> is
 * applied by assimp and its <up_axis> turned to +z: assimp rotates every Collada scene to +y up,
 * and moreau's frames are z-up, so the vertices are then turned by Rx(+90°), (x, y, z) ->
 * (x, -z, y). The scale s is applied per axis; a negative scale mirrors the mesh, and when
 * s_x s_y s_z < 0 every triangle's winding is reversed so that its normal still points outwards.
 * Then the convex hull of the vertices by qhull (libqhull_r, "Qt"), the hull volume
 * (qh_getarea), the mesh volume by the divergence theorem Σ v₀·(v₁ × v₂)/6 when the mesh is
 * closed (every edge of the welded mesh shared by exactly two triangles), and the non-convexity
 * test |volume| < 0.9 · hull volume, returned to the caller as a flag.
 * Loading code: it allocates. */
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

#include "core/file.h"
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
    if (n > MR_FILE_MAX) {
      free(buf), fclose(f);
      mr_error_set(err, MR_ERR_LIMIT, "%s: larger than %zu bytes", path, MR_FILE_MAX);
      return NULL;
    }
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

/* ---- checks of the bytes of STL and OBJ files, before assimp reads them ---- */

/* binary STL: 80-byte header, count, then 50 bytes per triangle; every coordinate finite */
static mr_status check_stl_binary(const unsigned char *d, const char *path, mr_error *err) {
  uint32_t n = le32(d + 80);
  if (n == 0) return mr_error_set(err, MR_ERR_PARSE, "%s: empty mesh (no triangles)", path);
  for (uint32_t t = 0; t < n; ++t) {
    const unsigned char *p = d + 84 + 50 * (size_t)t + 12;
    for (int k = 0; k < 9; k += 3) {
      double x = lef32(p + 4 * k), y = lef32(p + 4 * k + 4), z = lef32(p + 4 * k + 8);
      if (!isfinite(x) || !isfinite(y) || !isfinite(z))
        return mr_error_set(err, MR_ERR_PARSE, "%s: triangle %u has a non-finite vertex (%g %g %g)",
                            path, t, x, y, z);
    }
  }
  return MR_OK;
}

/* the end of the line at s (its '\n' or the final NUL) */
static const char *line_end(const char *s) {
  const char *e = strchr(s, '\n');
  return e ? e : s + strlen(s);
}

/* n whole, finite numbers from s on one line; an error names the line and the token */
static mr_status check_numbers(const char *s, int n, const char *path, int line, mr_error *err) {
  for (int k = 0; k < n; ++k) {
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '\n' || *s == '\r' || *s == '\0')
      return mr_error_set(err, MR_ERR_PARSE, "%s:%d: %d numbers, expected %d", path, line, k, n);
    char *end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x) || (*end && !isspace((unsigned char)*end))) {
      int len = (int)strcspn(s, " \t\r\n");
      return mr_error_set(err, MR_ERR_PARSE, "%s:%d: bad number '%.*s'", path, line,
                          len > 40 ? 40 : len, s);
    }
    s = end;
  }
  return MR_OK;
}

/* does the line at s (leading blanks skipped) start with word followed by a blank */
static int keyword(const char *s, const char *word) {
  size_t n = strlen(word);
  return strncmp(s, word, n) == 0 && (s[n] == ' ' || s[n] == '\t');
}

/* ASCII STL: "vertex x y z" lines, three per facet */
static mr_status check_stl_ascii(const char *text, const char *path, mr_error *err) {
  int line = 0, infacet = 0, nfacets = 0;
  for (const char *s = text; *s; s = *line_end(s) ? line_end(s) + 1 : line_end(s)) {
    line++;
    while (*s == ' ' || *s == '\t' || *s == '\r')
      s++;
    if (keyword(s, "vertex")) {
      if (check_numbers(s + 6, 3, path, line, err)) return err ? err->status : MR_ERR_PARSE;
      infacet++;
    } else if (strncmp(s, "endloop", 7) == 0) {
      if (infacet != 3)
        return mr_error_set(err, MR_ERR_PARSE, "%s:%d: facet with %d vertices", path, line,
                            infacet);
      infacet = 0, nfacets++;
    }
  }
  if (infacet)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d: facet with %d vertices", path, line, infacet);
  if (!nfacets) return mr_error_set(err, MR_ERR_PARSE, "%s: empty mesh (no triangles)", path);
  return MR_OK;
}

/* an OBJ face index token "i", "i/t", "i//n", "i/t/n" (1-based, negative = relative to the
 * vertices so far); -1 when it names no vertex */
static int obj_index(const char *tok, int nv) {
  char *end;
  long i = strtol(tok, &end, 10);
  if (end == tok || (*end && *end != '/' && !isspace((unsigned char)*end))) return -1;
  i = i < 0 ? nv + i : i - 1;
  return i < 0 || i >= nv ? -1 : 0;
}

/* "f i j k ...": at least three indices, each naming one of the nv vertices so far */
static mr_status check_obj_face(const char *s, const char *path, int line, int nv, mr_error *err) {
  int count = 0;
  for (;;) {
    while (*s == ' ' || *s == '\t' || *s == '\r')
      s++;
    if (*s == '\n' || *s == '\0') break;
    int len = (int)strcspn(s, " \t\r\n");
    if (obj_index(s, nv))
      return mr_error_set(err, MR_ERR_PARSE, "%s:%d: bad face index '%.*s' (%d vertices so far)",
                          path, line, len > 40 ? 40 : len, s, nv);
    count++, s += len;
  }
  if (count < 3)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d: face with %d vertices", path, line, count);
  return MR_OK;
}

/* OBJ: "v x y z" lines (three numbers checked; w or a colour may follow) and "f" lines */
static mr_status check_obj(const char *text, const char *path, mr_error *err) {
  int line = 0, nv = 0, nf = 0;
  for (const char *s = text; *s; s = *line_end(s) ? line_end(s) + 1 : line_end(s)) {
    line++;
    while (*s == ' ' || *s == '\t')
      s++;
    mr_status st = keyword(s, "v")   ? check_numbers(s + 1, 3, path, line, err)
                   : keyword(s, "f") ? check_obj_face(s + 1, path, line, nv, err)
                                     : MR_OK;
    if (st) return st;
    nv += keyword(s, "v"), nf += keyword(s, "f");
  }
  if (!nf) return mr_error_set(err, MR_ERR_PARSE, "%s: empty mesh (no faces)", path);
  return MR_OK;
}

/* does the path end with ext (case-insensitive) */
static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n >= m && strcasecmp(path + n - m, ext) == 0;
}

/* the bytes of an STL file are binary STL when the size matches its triangle count */
static int stl_is_binary(const char *data, size_t size) {
  return size >= 84 && size == 84 + 50 * (size_t)le32((const unsigned char *)data + 80);
}

static mr_status check_bytes(const char *data, size_t size, const char *path, mr_error *err) {
  int binary = has_ext(path, ".stl") && stl_is_binary(data, size);
  if (binary) return check_stl_binary((const unsigned char *)data, path, err);
  /* a text format: the checks read up to the first NUL, assimp reads every byte */
  if (memchr(data, '\0', size))
    return mr_error_set(err, MR_ERR_PARSE, "%s: a NUL byte at offset %zu of a text mesh file", path,
                        (size_t)((const char *)memchr(data, '\0', size) - data));
  if (has_ext(path, ".obj")) return check_obj(data, path, err);
  const char *s = data;
  while (isspace((unsigned char)*s))
    s++;
  if (strncmp(s, "solid", 5) == 0) return check_stl_ascii(data, path, err);
  return mr_error_set(err, MR_ERR_PARSE, "%s: neither ASCII ('solid') nor binary STL (%zu bytes)",
                      path, size);
}

/* ---- reading through assimp ---- */

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

/* an imported scene, or the reason assimp gave */
static mr_status take_scene(const struct aiScene *sc, int z_up, const char *path, builder *b,
                            mr_error *err) {
  if (!sc || !sc->mRootNode)
    return mr_error_set(err, MR_ERR_PARSE, "%s: cannot read the mesh: %s", path,
                        aiGetErrorString());
  mr_status st = take_assimp(sc, z_up, path, b, err);
  aiReleaseImport(sc);
  return st;
}

/* a file in any format assimp reads, from its path */
static mr_status parse_assimp(const char *path, builder *b, mr_error *err) {
  if (!aiIsExtensionSupported(strrchr(path, '.') ? strrchr(path, '.') : ""))
    return mr_error_set(err, MR_ERR_UNSUPPORTED,
                        "%s: unknown mesh format (moreau reads the formats assimp knows: .stl, "
                        ".obj, .dae, .ply, ...)",
                        path);
  unsigned flags = aiProcess_Triangulate | aiProcess_PreTransformVertices |
                   aiProcess_JoinIdenticalVertices | aiProcess_SortByPType;
  return take_scene(aiImportFile(path, flags), has_ext(path, ".dae"), path, b, err);
}

/* STL or OBJ from its bytes: checked, then read by assimp (no vertex joining: assimp's merges
 * positions within a few ulps and only with equal normals) */
static mr_status parse_stl_obj(const char *data, size_t size, const char *path, builder *b,
                               mr_error *err) {
  mr_status st = check_bytes(data, size, path, err);
  if (st) return st;
  if (size > UINT32_MAX)
    return mr_error_set(err, MR_ERR_LIMIT, "%s: %zu bytes, more than assimp reads", path, size);
  unsigned flags = aiProcess_Triangulate | aiProcess_PreTransformVertices | aiProcess_SortByPType;
  const char *hint = has_ext(path, ".obj") ? "obj" : "stl";
  return take_scene(aiImportFileFromMemory(data, (unsigned)size, flags, hint), 0, path, b, err);
}

static int cmp_vert(const void *x, const void *y, void *ctx) {
  const double *v = ctx;
  int a = *(const int *)x, b = *(const int *)y;
  for (int k = 0; k < 3; ++k)
    if (v[3 * a + k] != v[3 * b + k]) return v[3 * a + k] < v[3 * b + k] ? -1 : 1;
  return a - b;
}

/* welded vertex ids (exactly equal coordinates share an id), by sorting */
static int *weld_points(const double *vert, int nvert) {
  const mr_mesh mesh = {.vert = (double *)vert, .nvert = nvert}, *m = &mesh;
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
  int *id = weld_points(m->vert, m->nvert);
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

/* exactly equal vertices merged, kept in order of first appearance, faces renumbered */
static mr_status merge_equal(builder *b, const char *path, mr_error *err) {
  int *id = weld_points(b->v, b->nv), *slot = malloc((size_t)(b->nv ? b->nv : 1) * sizeof(int));
  if (!id || !slot) {
    free(id), free(slot);
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  }
  int n = 0;
  for (int i = 0; i < b->nv; ++i)
    slot[id[i]] = -1;
  for (int i = 0; i < b->nv; ++i) {
    if (slot[id[i]] < 0) memmove(&b->v[3 * n], &b->v[3 * i], 3 * sizeof(double)), slot[id[i]] = n++;
    id[i] = slot[id[i]];
  }
  for (int k = 0; k < 3 * b->nf; ++k)
    b->f[k] = id[b->f[k]];
  b->nv = n;
  free(id), free(slot);
  return MR_OK;
}

mr_status mr_mesh_compute_hull(mr_mesh *m, const char *name, mr_error *err) {
  if (m->nvert < 4)
    return mr_error_set(err, MR_ERR_INVALID, "%s: mesh has %d vertices, a hull needs 4", name,
                        m->nvert);
  /* coordinates beyond the collision range would defeat the narrowphase's tolerances */
  for (int i = 0; i < 3 * m->nvert; ++i)
    if (!(fabs(m->vert[i]) <= MR_COLLISION_MAX_COORD))
      return mr_error_set(err, MR_ERR_INVALID,
                          "%s: vertex %d has coordinate %g, outside the collision range ±%g m",
                          name, i / 3, m->vert[i], MR_COLLISION_MAX_COORD);
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

static mr_mesh *mesh_build(char *data, size_t size, const char *path, mr_vec3 scale, int *nonconvex,
                           mr_error *err);

/* every scale factor positive and finite */
static int scale_ok(const char *path, mr_vec3 scale, mr_error *err) {
  for (int k = 0; k < 3; ++k)
    if (!(scale.v[k] != 0) || !isfinite(scale.v[k])) {
      mr_error_set(err, MR_ERR_INVALID, "%s: mesh scale %g must be finite and non-zero", path,
                   scale.v[k]);
      return 0;
    }
  return 1;
}

mr_mesh *mr_mesh_load(const char *path, mr_vec3 scale, int *nonconvex, mr_error *err) {
  if (nonconvex) *nonconvex = 0;
  if (!scale_ok(path, scale, err)) return NULL;
  size_t size;
  char *data = read_file(path, &size, err);
  if (!data) return NULL;
  mr_mesh *m = mesh_build(data, size, path, scale, nonconvex, err);
  free(data);
  return m;
}

mr_mesh *mr_mesh_parse(const char *data, size_t size, const char *name, mr_vec3 scale,
                       int *nonconvex, mr_error *err) {
  if (nonconvex) *nonconvex = 0;
  if (!scale_ok(name, scale, err)) return NULL;
  /* assimp's formats are read from a path: only STL and OBJ parse from memory */
  if (!has_ext(name, ".stl") && !has_ext(name, ".obj")) {
    mr_error_set(err, MR_ERR_UNSUPPORTED, "%s: only STL and OBJ parse from memory", name);
    return NULL;
  }
  char *copy = malloc(size + 1);
  if (!copy) {
    mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
    return NULL;
  }
  memcpy(copy, data, size);
  copy[size] = '\0';
  mr_mesh *m = mesh_build(copy, size, name, scale, nonconvex, err);
  free(copy);
  return m;
}

/* the mesh of a file's bytes (with a NUL after them) */
static mr_mesh *mesh_build(char *data, size_t size, const char *path, mr_vec3 scale, int *nonconvex,
                           mr_error *err) {
  builder b = {0};
  int stl_obj = has_ext(path, ".stl") || has_ext(path, ".obj");
  mr_status st = stl_obj ? parse_stl_obj(data, size, path, &b, err) : parse_assimp(path, &b, err);
  /* OBJ's vertices are shared by index; assimp gives one per corner */
  if (st == MR_OK && has_ext(path, ".obj")) st = merge_equal(&b, path, err);
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
