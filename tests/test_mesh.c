/* Meshes: STL (binary, ASCII), OBJ and Collada (units, up axis) loading of meshes written here,
 * mirroring by a negative scale, hull volumes, the
 * non-convexity warning, load errors naming file, line and value, mesh collisions, and the
 * reference robots' meshes (skipped when absent). */
#include "test_util.h"

#include <dirent.h>
#include <float.h>
#include <string.h>
#include <strings.h>

#include "moreau/collision.h"

/* a prism: polygon (CCW, n ≤ 8 points) extruded over z ∈ [0, 1], caps fanned from vertex c */
typedef struct {
  double v[16][3];
  int nv, f[40][3], nf;
} prism;

static prism extrude(const double (*p)[2], int n, int c) {
  prism m = {.nv = 2 * n};
  for (int i = 0; i < n; ++i)
    for (int z = 0; z < 2; ++z)
      m.v[i + z * n][0] = p[i][0], m.v[i + z * n][1] = p[i][1], m.v[i + z * n][2] = z;
  for (int i = 0; i < n; ++i) {
    int a = i, b = (i + 1) % n;
    m.f[m.nf][0] = a, m.f[m.nf][1] = b, m.f[m.nf++][2] = b + n;
    m.f[m.nf][0] = a, m.f[m.nf][1] = b + n, m.f[m.nf++][2] = a + n;
  }
  for (int k = 1; k < n - 1; ++k) {
    int a = (c + k) % n, b = (c + k + 1) % n;
    m.f[m.nf][0] = c + n, m.f[m.nf][1] = a + n, m.f[m.nf++][2] = b + n; /* top, CCW from +z */
    m.f[m.nf][0] = c, m.f[m.nf][1] = b, m.f[m.nf++][2] = a;             /* bottom, reversed */
  }
  return m;
}

static const double square[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
static const double ell[6][2] = {{1, 1}, {1, 2}, {0, 2}, {0, 0}, {2, 0}, {2, 1}};

static void write_stl_ascii(const char *path, const prism *m) {
  FILE *f = fopen(path, "w");
  fprintf(f, "solid test\n");
  for (int t = 0; t < m->nf; ++t) {
    fprintf(f, "  facet normal 0 0 0\n    outer loop\n");
    for (int k = 0; k < 3; ++k) {
      const double *x = m->v[m->f[t][k]];
      fprintf(f, "      vertex %.17g %.17g %.17g\n", x[0], x[1], x[2]);
    }
    fprintf(f, "    endloop\n  endfacet\n");
  }
  fprintf(f, "endsolid test\n");
  fclose(f);
}

static void put32(FILE *f, uint32_t u) {
  unsigned char b[4] = {u & 255, u >> 8 & 255, u >> 16 & 255, u >> 24 & 255};
  fwrite(b, 1, 4, f);
}

static void putf(FILE *f, double x) {
  float y = (float)x;
  uint32_t u;
  memcpy(&u, &y, 4);
  put32(f, u);
}

static void write_stl_binary(const char *path, const prism *m) {
  FILE *f = fopen(path, "wb");
  char header[80] = "binary test mesh";
  fwrite(header, 1, 80, f);
  put32(f, (uint32_t)m->nf);
  for (int t = 0; t < m->nf; ++t) {
    for (int k = 0; k < 3; ++k)
      putf(f, 0);
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 3; ++j)
        putf(f, m->v[m->f[t][k]][j]);
    fputc(0, f), fputc(0, f);
  }
  fclose(f);
}

static void write_obj(const char *path, const prism *m) {
  FILE *f = fopen(path, "w");
  fprintf(f, "# test mesh\no cube\n");
  for (int i = 0; i < m->nv; ++i)
    fprintf(f, "v %g %g %g\n", m->v[i][0], m->v[i][1], m->v[i][2]);
  for (int t = 0; t < m->nf; ++t)
    fprintf(f, "f %d/1/1 %d//2 %d\n", m->f[t][0] + 1, m->f[t][1] + 1, m->f[t][2] + 1);
  fclose(f);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

/* a unit cube in the three formats: hull volume 1 and mesh volume 1 (closed), 8 hull vertices;
 * scale (2, 1, 0.5) gives volume 1 again and a 2 x 1 x 0.5 box */
static void test_cube_formats(void **state) {
  prism cube = extrude(square, 4, 0);
  write_stl_ascii("build/cube_ascii.stl", &cube);
  write_stl_binary("build/cube_binary.stl", &cube);
  write_obj("build/cube.obj", &cube);
  const char *files[] = {"build/cube_ascii.stl", "build/cube_binary.stl", "build/cube.obj"};
  for (int k = 0; k < 3; ++k) {
    mr_error err;
    int nc = -1;
    mr_mesh *m = mr_mesh_load(files[k], mr_v3(1, 1, 1), &nc, &err);
    if (!m) fail_msg("%s", err.msg);
    assert_int_equal(m->nface, 12);
    assert_int_equal(m->nhull, 8);
    /* exact vertices (floats in binary STL represent 0 and 1 exactly): each face's triple
     * product is exact, its sixth and the running sum round to half an ulp of the volume */
    const double tol = m->nface * DBL_EPSILON * 1.0;
    assert_near(m->hull_volume, 1.0, tol);
    assert_near(m->volume, 1.0, tol);
    assert_int_equal(nc, 0);
    mr_mesh_free(m);
    m = mr_mesh_load(files[k], mr_v3(2, 1, 0.5), &nc, &err);
    assert_near(m->hull_volume, 1.0, tol); /* powers of two: the same roundings */
    mr_geom g = mr_geom_default(MR_GEOM_MESH, 0);
    g.mesh = m;
    mr_vec3 lo, hi;
    mr_geom_local_aabb(&g, &lo, &hi);
    assert_near(hi.v[0] - lo.v[0], 2.0, 0);
    assert_near(hi.v[2] - lo.v[2], 0.5, 0);
    mr_mesh_free(m);
  }
}

/* what assimp gives is checked and reshaped: OBJ quads with texture and normal indices are
 * triangulated and the corners assimp unshares are merged back (8 vertices for the cube, the
 * hull and volume exact: coordinates 0 and 1), negative indices count back from the last vertex;
 * a binary STL whose 80-byte header starts with "solid" (as many exporters write it) reads as
 * binary (its size matches its triangle count) */
static void test_assimp_path(void **state) {
  write_text("build/quads.obj", "# cube of quads\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                "v 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\nvt 0 0\nvn 0 0 1\n"
                                "f 4/1/1 3/1/1 2/1/1 1/1/1\nf 5//1 6//1 7//1 8//1\nf 1 2 6 5\n"
                                "f 2 3 7 6\nf 3 4 8 7\nf -1 -5 -8 -4\n");
  mr_error err;
  mr_mesh *m = mr_mesh_load("build/quads.obj", mr_v3(1, 1, 1), NULL, &err);
  if (!m) fail_msg("%s", err.msg);
  assert_int_equal(m->nvert, 8);
  assert_int_equal(m->nface, 12);
  const double tol = m->nface * DBL_EPSILON; /* exact triple products, rounded sums */
  assert_near(m->volume, 1.0, tol);
  assert_near(m->hull_volume, 1.0, tol);
  mr_mesh_free(m);
  prism cube = extrude(square, 4, 0);
  write_stl_binary("build/solid_header.stl", &cube);
  FILE *f = fopen("build/solid_header.stl", "r+b");
  fwrite("solid exported", 1, 14, f);
  fclose(f);
  m = mr_mesh_load("build/solid_header.stl", mr_v3(1, 1, 1), NULL, &err);
  if (!m) fail_msg("%s", err.msg);
  assert_int_equal(m->nvert, 36); /* STL: one vertex per triangle corner */
  assert_near(m->volume, 1.0, tol);
  mr_mesh_free(m);
}

/* an L-shaped prism: area 3 against a hull area 3.5, flagged as far from convex */
static void test_nonconvex_warning(void **state) {
  prism l = extrude(ell, 6, 0);
  write_stl_ascii("build/ell.stl", &l);
  mr_error err;
  int nc = 0;
  mr_mesh *m = mr_mesh_load("build/ell.stl", mr_v3(1, 1, 1), &nc, &err);
  assert_non_null(m);
  /* integer vertices: exact triple products, a rounding per face of at most the volume */
  assert_near(m->volume, 3.0, m->nface * DBL_EPSILON * 3.0);
  assert_near(m->hull_volume, 3.5, m->nface * DBL_EPSILON * 3.5);
  assert_int_equal(nc, 1);
  mr_mesh_free(m);
  /* through the model: the warning is counted and named, never printed */
  mr_model *model = mr_model_create("meshes");
  mr_geom g = mr_geom_default(MR_GEOM_MESH, 0);
  g.mesh_file = "build/ell.stl";
  mr_model_add_geom(model, &g, &err);
  g.mesh_file = "build/cube.obj";
  mr_model_add_geom(model, &g, &err);
  int nw = 0;
  char warn[MR_ERROR_MSG_MAX] = "";
  assert_int_equal(mr_model_load_meshes(model, &nw, warn, &err), MR_OK);
  assert_int_equal(nw, 1);
  assert_non_null(strstr(warn, "build/ell.stl"));
  assert_int_equal(model->geoms[1].mesh->nhull, 8);
  mr_model_free(model);
}

/* errors: unreadable, empty, bad numbers (file, line and value), bad indices, bad scale, flat */
static void test_mesh_errors(void **state) {
  mr_error err;
  assert_null(mr_mesh_load("build/no_such_mesh.stl", mr_v3(1, 1, 1), NULL, &err));
  assert_int_equal(err.status, MR_ERR_IO);
  assert_non_null(strstr(err.msg, "build/no_such_mesh.stl"));
  write_text("build/empty.stl", "solid empty\nendsolid empty\n");
  assert_null(mr_mesh_load("build/empty.stl", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "empty mesh"));
  write_text("build/bad.stl", "solid bad\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n"
                              "vertex 1 0 0x\nvertex 0 1 0\nendloop\nendfacet\nendsolid\n");
  assert_null(mr_mesh_load("build/bad.stl", mr_v3(1, 1, 1), NULL, &err));
  assert_int_equal(err.status, MR_ERR_PARSE);
  assert_non_null(strstr(err.msg, "build/bad.stl:5"));
  assert_non_null(strstr(err.msg, "'0x'"));
  write_text("build/bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 nan\n");
  assert_null(mr_mesh_load("build/bad.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/bad.obj:3"));
  assert_non_null(strstr(err.msg, "'nan'"));
  /* what assimp would read silently (a missing number, a decimal comma, a NUL) names the line */
  write_text("build/short.obj", "v 0 0 0\nv 1 0\nv 0 1 0\nf 1 2 3\n");
  assert_null(mr_mesh_load("build/short.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/short.obj:2: 2 numbers, expected 3"));
  write_text("build/comma.obj", "v 0 0 0\nv 1 0 0\nv 0 1,5 0\nf 1 2 3\n");
  assert_null(mr_mesh_load("build/comma.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/comma.obj:3: bad number '1,5'"));
  const char nul[] = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\0\n";
  assert_null(mr_mesh_parse(nul, sizeof nul - 1, "nul.stl", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "nul.stl: a NUL byte at offset 50"));
  write_text("build/fourv.stl", "solid f\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\n"
                                "vertex 1 0 0\nvertex 0 1 0\nvertex 1 1 0\nendloop\nendfacet\n"
                                "endsolid f\n");
  assert_null(mr_mesh_load("build/fourv.stl", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/fourv.stl:8: facet with 4 vertices"));
  write_text("build/twov.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n");
  assert_null(mr_mesh_load("build/twov.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/twov.obj:4: face with 2 vertices"));
  write_text("build/badidx.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n");
  assert_null(mr_mesh_load("build/badidx.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/badidx.obj:4"));
  assert_non_null(strstr(err.msg, "'7'"));
  assert_null(mr_mesh_load("build/cube.obj", mr_v3(1, 0, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "mesh scale 0 must be finite and non-zero"));
  write_text("build/unknown.xyz1", "0 0 0\n");
  assert_null(mr_mesh_load("build/unknown.xyz1", mr_v3(1, 1, 1), NULL, &err));
  assert_int_equal(err.status, MR_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "build/unknown.xyz1: unknown mesh format"));
  write_text("build/broken.dae", "<?xml version=\"1.0\"?>\n<COLLADA><asset>\n");
  assert_null(mr_mesh_load("build/broken.dae", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/broken.dae: cannot read the mesh"));
  write_text("build/flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n");
  assert_null(mr_mesh_load("build/flat.obj", mr_v3(1, 1, 1), NULL, &err));
  assert_non_null(strstr(err.msg, "build/flat.obj"));
  /* zero and negative sizes are refused when the geometry is added */
  mr_model *model = mr_model_create("bad");
  mr_geom g = mr_geom_default(MR_GEOM_SPHERE, 0);
  g.size[0] = 0.0;
  assert_int_equal(mr_model_add_geom(model, &g, &err), -1);
  assert_non_null(strstr(err.msg, "size 0"));
  g = mr_geom_default(MR_GEOM_CAPSULE, 0);
  g.size[0] = 0.1, g.size[1] = -0.5;
  assert_int_equal(mr_model_add_geom(model, &g, &err), -1);
  assert_non_null(strstr(err.msg, "-0.5"));
  mr_model_free(model);
}

/* Σ v₀ · (v₁ × v₂) / 6 over the triangles: positive when the normals point outwards */
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

/* the axis-aligned bounds of a mesh's vertices */
static void bounds(const mr_mesh *m, double lo[3], double hi[3]) {
  for (int k = 0; k < 3; ++k)
    lo[k] = INFINITY, hi[k] = -INFINITY;
  for (int i = 0; i < m->nvert; ++i)
    for (int k = 0; k < 3; ++k)
      lo[k] = fmin(lo[k], m->vert[3 * i + k]), hi[k] = fmax(hi[k], m->vert[3 * i + k]);
}

/* a negative scale mirrors the mesh and keeps its normals outwards: the L prism (volume 3,
 * x, y in [0, 2], z in [0, 1]) scaled by (1, -1, 1) spans y in [-2, 0] with signed volume +3, and
 * by (-1, -1, 1) (a rotation, no reversal) also +3; exact vertices, so volumes to round-off */
static void test_mirror(void **state) {
  prism l = extrude(ell, 6, 0);
  write_stl_ascii("build/ell.stl", &l);
  const mr_vec3 scales[2] = {{{1, -1, 1}}, {{-1, -1, 1}}};
  for (int k = 0; k < 2; ++k) {
    mr_error err;
    mr_mesh *m = mr_mesh_load("build/ell.stl", scales[k], NULL, &err);
    if (!m) fail_msg("%s", err.msg);
    double lo[3], hi[3];
    bounds(m, lo, hi);
    assert_near(lo[1], -2.0, 0);
    assert_near(hi[1], 0.0, 0);
    assert_near(signed_volume(m), 3.0, m->nface * DBL_EPSILON * 3.0);
    assert_near(m->hull_volume, 3.5, m->nface * DBL_EPSILON * 3.5);
    mr_mesh_free(m);
  }
}

/* the L prism as a Collada file with the given <asset> contents */
static void write_dae(const char *path, const prism *m, const char *asset) {
  FILE *f = fopen(path, "w");
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
          "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
          "<asset>%s</asset>\n<library_geometries><geometry id=\"g\"><mesh>\n"
          "<source id=\"p\"><float_array id=\"pa\" count=\"%d\">",
          asset, 3 * m->nv);
  for (int i = 0; i < m->nv; ++i)
    fprintf(f, "%g %g %g ", m->v[i][0], m->v[i][1], m->v[i][2]);
  fprintf(f,
          "</float_array>\n<technique_common><accessor source=\"#pa\" count=\"%d\" "
          "stride=\"3\"><param name=\"X\" type=\"float\"/><param name=\"Y\" type=\"float\"/>"
          "<param name=\"Z\" type=\"float\"/></accessor></technique_common></source>\n"
          "<vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>\n"
          "<triangles count=\"%d\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>",
          m->nv, m->nf);
  for (int t = 0; t < m->nf; ++t)
    fprintf(f, "%d %d %d ", m->f[t][0], m->f[t][1], m->f[t][2]);
  fprintf(f, "</p></triangles>\n</mesh></geometry></library_geometries>\n"
             "<library_visual_scenes><visual_scene id=\"s\"><node id=\"n\">"
             "<instance_geometry url=\"#g\"/></node></visual_scene></library_visual_scenes>\n"
             "<scene><instance_visual_scene url=\"#s\"/></scene>\n</COLLADA>\n");
  fclose(f);
}

/* Collada through assimp: units and up axis from the file. The L prism written in millimetres
 * with y up comes out in metres with z up, (x, y, z) -> 1e-3 (x, -z, y): x in [0, 0.002],
 * y in [-0.001, 0], z in [0, 0.002], volume 3e-9 and hull volume 3.5e-9 m³, normals outwards;
 * written z up in metres it is unchanged. assimp stores vertices as floats (24-bit mantissa):
 * coordinates to 2^-24 relative, volumes (products of three) to 3 · 2^-24 ≈ 1.8e-7 relative */
static void test_collada(void **state) {
  prism l = extrude(ell, 6, 0);
  write_dae("build/ell_mm_yup.dae", &l,
            "<unit name=\"millimeter\" meter=\"0.001\"/><up_axis>Y_UP</up_axis>");
  write_dae("build/ell_zup.dae", &l, "<up_axis>Z_UP</up_axis>");
  const char *files[2] = {"build/ell_mm_yup.dae", "build/ell_zup.dae"};
  const double s[2] = {1e-3, 1.0};
  const double lo_x[2][3] = {{0, -1, 0}, {0, 0, 0}}, hi_x[2][3] = {{2, 0, 2}, {2, 2, 1}};
  for (int k = 0; k < 2; ++k) {
    mr_error err;
    int nc = 0;
    mr_mesh *m = mr_mesh_load(files[k], mr_v3(1, 1, 1), &nc, &err);
    if (!m) fail_msg("%s", err.msg);
    double lo[3], hi[3];
    bounds(m, lo, hi);
    for (int a = 0; a < 3; ++a) {
      assert_near(lo[a], s[k] * lo_x[k][a], 6e-8 * 2 * s[k]);
      assert_near(hi[a], s[k] * hi_x[k][a], 6e-8 * 2 * s[k]);
    }
    double s3 = s[k] * s[k] * s[k];
    assert_near(signed_volume(m), 3.0 * s3, 1.8e-7 * 3.0 * s3);
    assert_near(m->volume, 3.0 * s3, 1.8e-7 * 3.0 * s3);
    assert_near(m->hull_volume, 3.5 * s3, 1.8e-7 * 3.5 * s3);
    assert_int_equal(nc, 1);
    mr_mesh_free(m);
  }
}

static double zero(double x, double y, void *u) {
  return 0.0;
}

/* a cube mesh resting on the plane: 4 corner contacts at Φ = 0 (as the box); against a sphere
 * the general path (GJK) matches the analytic sphere-box pair: GJK stops when |v|² − v·w ≤
 * 1e-13 |v|² (src/collision/gjk.c), so its distance is within 1e-13 of itself, plus the rounding
 * of positions of at most 2 */
static void test_mesh_collisions(void **state) {
  mr_error err;
  mr_mesh *m = mr_mesh_load("build/cube.obj", mr_v3(1, 1, 1), NULL, &err);
  assert_non_null(m);
  /* centre the cube on its frame: shift the hull */
  for (int i = 0; i < 3 * m->nhull; ++i)
    m->hull[i] -= 0.5;
  mr_geom gm = mr_geom_default(MR_GEOM_MESH, 0), plane = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  gm.mesh = m;
  mr_geom box = mr_geom_default(MR_GEOM_BOX, 0), sph = mr_geom_default(MR_GEOM_SPHERE, 0);
  box.size[0] = box.size[1] = box.size[2] = 0.5;
  sph.size[0] = 0.2;
  mr_se3 I = mr_se3_identity(), X = mr_se3_make(mr_m3_rpy(0, 0, 0.4), mr_v3(0.3, 0.1, 0.5));
  mr_contact c[MR_PAIR_MAX_CONTACTS], d[MR_PAIR_MAX_CONTACTS];
  assert_int_equal(mr_collide(&gm, &X, &plane, &I, 1e-3, 0, c, NULL), 4);
  /* the corners (±0.5, ±0.5, −0.5) turned about z keep z = −0.5 up to the rotation's z row
   * (exactly (0, 0, 1) for a yaw), then 0.5 added: an ulp of 0.5 */
  for (int i = 0; i < 4; ++i)
    assert_near(c[i].phi, 0.0, 0.5 * DBL_EPSILON);
  /* the same on a flat heightfield (hull vertices as probes): 4 contacts at Φ = 0, normal +z */
  mr_hfield *hf = mr_hfield_from_function(zero, NULL, 41, 41, -1, -1, 0.05, 0.05, 0.1, &err);
  mr_geom gh = mr_geom_default(MR_GEOM_HEIGHTFIELD, 0);
  gh.hfield = hf;
  assert_int_equal(mr_collide(&gm, &X, &gh, &I, 1e-3, 0, c, NULL), 4);
  for (int i = 0; i < 4; ++i) {
    assert_near(c[i].phi, 0.0, 0.5 * DBL_EPSILON);
    assert_near(c[i].frame.m[2][2], 1.0, DBL_EPSILON); /* a flat cell's normalised normal */
  }
  mr_hfield_free(hf);
  uint64_t s = 21;
  int compared = 0;
  for (int k = 0; k < 200; ++k) {
    mr_quat q = {test_rand(&s, -1, 1), test_rand(&s, -1, 1), test_rand(&s, -1, 1),
                 test_rand(&s, -1, 1)};
    mr_se3 Xm = mr_se3_make(mr_quat_to_m3(mr_quat_normalize(q)), mr_v3_zero());
    mr_se3 Xs = mr_se3_make(
        mr_m3_identity(), mr_v3(test_rand(&s, -1, 1), test_rand(&s, -1, 1), test_rand(&s, -1, 1)));
    int n1 = mr_collide(&sph, &Xs, &gm, &Xm, 0.05, 0, c, NULL);
    int n2 = mr_collide(&sph, &Xs, &box, &Xm, 0.05, 0, d, NULL);
    assert_int_equal(n1, n2);
    if (!n1 || d[0].phi < 0) continue;
    assert_near(c[0].phi, d[0].phi, 1e-13 * (d[0].phi + 0.2) + 4 * DBL_EPSILON * 2.0);
    compared++;
  }
  assert_true(compared > 10);
  mr_mesh_free(m);
}

/* every STL mesh of Solo and Talos in the reference data loads and hulls (skip when absent) */
static void test_reference_meshes(void **state) {
  const char *root = test_reference_root();
  if (!root) skip();
  const char *dirs[] = {"robots/solo_description/meshes/stl/solo12",
                        "robots/solo_description/meshes/stl/with_foot",
                        "robots/talos_data/meshes/arm",
                        "robots/talos_data/meshes/gripper",
                        "robots/talos_data/meshes/head",
                        "robots/talos_data/meshes/torso",
                        "robots/talos_data/meshes/v2"};
  int loaded = 0;
  for (int d = 0; d < 7; ++d) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", root, dirs[d]);
    DIR *dir = opendir(path);
    if (!dir) continue;
    struct dirent *e;
    while ((e = readdir(dir)) && loaded < 200) {
      size_t n = strlen(e->d_name);
      if (n < 4 || strcasecmp(e->d_name + n - 4, ".stl")) continue;
      char file[4800];
      snprintf(file, sizeof file, "%s/%s", path, e->d_name);
      mr_error err;
      mr_mesh *m = mr_mesh_load(file, mr_v3(1, 1, 1), NULL, &err);
      if (!m) fail_msg("%s", err.msg);
      assert_true(m->nhull >= 4 && m->hull_volume > 0);
      mr_mesh_free(m);
      loaded++;
    }
    closedir(dir);
  }
  print_message("loaded %d reference meshes\n", loaded);
  assert_true(loaded > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cube_formats),
      cmocka_unit_test(test_assimp_path),
      cmocka_unit_test(test_nonconvex_warning),
      cmocka_unit_test(test_mesh_errors),
      cmocka_unit_test(test_mesh_collisions),
      cmocka_unit_test(test_reference_meshes),
      cmocka_unit_test(test_mirror),
      cmocka_unit_test(test_collada),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
