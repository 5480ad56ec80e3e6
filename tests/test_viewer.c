/* The HTML replay viewer (moreau view, run --html, compare --html; docs/viewer.md), end to end:
 * the pages are written by the moreau binary (MOREAU_BIN) and opened in headless Chromium
 * (Debian chromium, software WebGL through SwiftShader; MOREAU_CHROMIUM overrides the command).
 * A page logs one console line once its frame is drawn; any other console line (an error, an
 * uncaught exception, a warning) fails the test. Screenshots are decoded here (PNG: zlib inflate
 * and the five scanline filters) and their non-background pixels counted.
 *
 * Pixel bounds. The page fits its camera to the moving bodies' bounding box at frame 0 (diagonal
 * D, the "size" it logs): the camera sits at 1.5764 D from the box centre with a 40° vertical
 * field of view, so every body point is at distance d ≤ (1.5764 + 0.5) D from the camera and in
 * view. A sphere of radius r at distance d projects to an ellipse whose semi-minor axis is at
 * least r / d · (H/2) / tan 20° pixels (H the view height); its area is a lower bound for the
 * pixels of any convex body containing that sphere, and occluders are non-background pixels
 * too, so the bound holds for the count of non-background pixels. */
#include <fcntl.h>
#include <zlib.h>

#include "cli_util.h"

#define VIEW_W 1280
#define VIEW_H 800

/* ---- a small PNG reader: 8-bit RGB or RGBA, not interlaced ---- */

typedef struct {
  int w, h;
  unsigned char *rgb; /* w * h * 3 */
} image;

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, len = 0;
  unsigned char *d = malloc(cap);
  for (size_t k; d && (k = fread(d + len, 1, cap - len, f)) > 0;)
    if ((len += k) == cap) d = realloc(d, cap *= 2);
  fclose(f);
  *n = len;
  return d;
}

/* Paeth predictor (PNG specification, filter type 4) */
static int paeth(int a, int b, int c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* undo the filter of one scanline of n bytes, bpp bytes per pixel, given the previous one */
static void unfilter(int type, unsigned char *row, const unsigned char *prev, size_t n, int bpp) {
  for (size_t i = 0; i < n; ++i) {
    int a = i >= (size_t)bpp ? row[i - (size_t)bpp] : 0, b = prev ? prev[i] : 0;
    int c = prev && i >= (size_t)bpp ? prev[i - (size_t)bpp] : 0;
    int add = type == 1   ? a
              : type == 2 ? b
              : type == 3 ? (a + b) / 2
              : type == 4 ? paeth(a, b, c)
                          : 0;
    row[i] = (unsigned char)(row[i] + add);
  }
}

static image read_png(const char *path) {
  image im = {0};
  size_t n = 0, zlen = 0;
  unsigned char *d = read_all(path, &n), *z = malloc(n);
  assert_non_null(d);
  assert_true(n > 33 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8));
  int depth = d[24], color = d[25], interlace = d[28];
  im.w = (int)be32(d + 16), im.h = (int)be32(d + 20);
  assert_int_equal(depth, 8);
  assert_true(color == 2 || color == 6);
  assert_int_equal(interlace, 0);
  for (size_t p = 8; p + 12 <= n;) {
    uint32_t len = be32(d + p);
    if (!memcmp(d + p + 4, "IDAT", 4)) memcpy(z + zlen, d + p + 8, len), zlen += len;
    p += 12 + len;
  }
  int bpp = color == 6 ? 4 : 3;
  size_t stride = (size_t)im.w * (size_t)bpp;
  uLongf raw_len = (uLongf)((stride + 1) * (size_t)im.h);
  unsigned char *raw = malloc(raw_len);
  assert_int_equal(uncompress(raw, &raw_len, z, (uLong)zlen), Z_OK);
  assert_int_equal(raw_len, (stride + 1) * (size_t)im.h);
  im.rgb = malloc((size_t)im.w * (size_t)im.h * 3);
  for (int y = 0; y < im.h; ++y) {
    unsigned char *row = raw + (size_t)y * (stride + 1);
    unfilter(row[0], row + 1, y ? row + 1 - (stride + 1) : NULL, stride, bpp);
    for (int x = 0; x < im.w; ++x)
      memcpy(im.rgb + 3 * ((size_t)y * (size_t)im.w + (size_t)x), row + 1 + (size_t)x * (size_t)bpp,
             3);
  }
  free(raw), free(z), free(d);
  return im;
}

/* pixels other than the white background */
static long count_foreground(const image *im) {
  long n = 0;
  for (long k = 0; k < (long)im->w * im->h; ++k)
    n += memcmp(im->rgb + 3 * k, "\xff\xff\xff", 3) != 0;
  return n;
}

static long count_different(const image *a, const image *b) {
  assert_int_equal(a->w, b->w);
  assert_int_equal(a->h, b->h);
  long n = 0;
  for (long k = 0; k < (long)a->w * a->h; ++k)
    n += memcmp(a->rgb + 3 * k, b->rgb + 3 * k, 3) != 0;
  return n;
}

/* ---- running the pages ---- */

static char workdir[64];

static void make_workdir(void) {
  if (workdir[0]) return;
  snprintf(workdir, sizeof workdir, "/tmp/moreau_viewer_XXXXXX");
  assert_non_null(mkdtemp(workdir));
}

static const char *chromium(void) {
  const char *c = getenv("MOREAU_CHROMIUM");
  return c ? c : "chromium";
}

typedef struct {
  int frame;
  double size; /* D, the camera fit's box diagonal (m) */
  int vw, vh;  /* the 3D view (pixels) */
} ready_line;

/* the console lines of a log: exactly one, the page's ready line */
static ready_line check_console(const char *log_path) {
  size_t n = 0;
  char *log = (char *)read_all(log_path, &n);
  assert_non_null(log);
  log = realloc(log, n + 1);
  log[n] = '\0';
  ready_line r = {-1, 0, 0, 0};
  int lines = 0;
  for (char *p = log; (p = strstr(p, ":CONSOLE")); ++p) {
    char *eol = strchr(p, '\n');
    if (eol) *eol = '\0';
    ++lines;
    const char *m = strstr(p, "moreau-viewer: ready ");
    if (!m) {
      fail_msg("console message from the page: %s", p);
      break;
    }
    assert_int_equal(sscanf(strstr(m, "frame="), "frame=%d", &r.frame), 1);
    assert_int_equal(sscanf(strstr(m, "size="), "size=%lf view=%dx%d", &r.size, &r.vw, &r.vh), 3);
    printf("  %s\n", m);
    if (eol) p = eol;
  }
  assert_int_equal(lines, 1);
  free(log);
  return r;
}

/* screenshot PAGE#HASH into OUT.png; returns the page's ready line */
static ready_line screenshot(const char *page, const char *hash, const char *out) {
  char profile[96], cmd[4096], log[128];
  snprintf(profile, sizeof profile, "%s/profile_XXXXXX", workdir);
  assert_non_null(mkdtemp(profile));
  snprintf(log, sizeof log, "%s/chromium.log", workdir);
  snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null", chromium());
  if (system(cmd))
    fail_msg("'%s' not found: 'make deps' installs the Debian package chromium", chromium());
  snprintf(cmd, sizeof cmd,
           "timeout 240 '%s' --headless --no-sandbox --use-angle=swiftshader "
           "--enable-unsafe-swiftshader --disable-background-networking "
           "--disable-component-update --disable-sync --no-first-run --user-data-dir='%s' "
           "--enable-logging=stderr --window-size=%d,%d --screenshot='%s' 'file://%s#%s' "
           ">'%s' 2>&1; rm -rf '%s'",
           chromium(), profile, VIEW_W, VIEW_H, out, page, hash, log, profile);
  remove(out);
  assert_int_equal(system(cmd), 0);
  return check_console(log);
}

/* the lower bound (pixels) on the projected area of a sphere of radius r (header comment) */
static double sphere_pixels(double r, const ready_line *l) {
  double d = (1.5764 + 0.5) * l->size;
  double a = r / d * (0.5 * l->vh) / tan(20.0 * M_PI / 180.0);
  return M_PI * a * a;
}

static void write_page(const char *args, const char *path) {
  char cmd[2048], out[8192];
  snprintf(cmd, sizeof cmd, "%s -o '%s'", args, path);
  int code = cli_run(cmd, 1, out, sizeof out);
  if (code) fail_msg("moreau %s: exit %d: %s", cmd, code, out);
}

/* ---- tests ---- */

/* The demo (Solo-12, a sliding cube, a falling ball): screenshots of frames 0 and of t = 0.25 s
 * with the world geometry and contacts hidden, and of frame 0 with the robot alone. */
static void test_demo_in_chromium(void **state) {
  make_workdir();
  char page[128], a[128], b[128], robot[128];
  snprintf(page, sizeof page, "%s/demo.html", workdir);
  snprintf(a, sizeof a, "%s/a.png", workdir);
  snprintf(b, sizeof b, "%s/b.png", workdir);
  snprintf(robot, sizeof robot, "%s/robot.png", workdir);
  write_page("view scenes/demo.yaml", page);
  /* 60 frames per second: frame 15 is the step at t = 0.25 s */
  ready_line la = screenshot(page, "frame=0&ui=0&static=0&contacts=0", a);
  ready_line lb = screenshot(page, "frame=15&ui=0&static=0&contacts=0", b);
  ready_line lr = screenshot(page, "frame=0&ui=0&static=0&contacts=0&hide=cube,ball", robot);
  assert_int_equal(la.frame, 0);
  assert_int_equal(lb.frame, 15);
  assert_int_equal(lr.frame, 0);
  image ia = read_png(a), ib = read_png(b), ir = read_png(robot);
  /* the 3D view fills the page's width and the top of the screenshot */
  assert_int_equal(ia.w, la.vw);
  assert_true(ia.h >= la.vh);
  /* the ball (radius 0.05 m) is drawn */
  double ball = sphere_pixels(0.05, &la);
  long na = count_foreground(&ia), nr = count_foreground(&ir), nd = count_different(&ia, &ib);
  printf("  foreground %ld px (ball bound %.0f), robot alone %ld px, frames differ in %ld px\n", na,
         ball, nr, nd);
  assert_true(na >= ball);
  /* the robot alone: Solo's base box (half extents 0.224, 0.1095, 0.0265 m) contains a sphere
   * of radius 0.0265 m; hiding the cube and the ball removes pixels */
  assert_true(nr >= sphere_pixels(0.0265, &lr));
  assert_true(nr < na);
  /* between t = 0 and 0.25 s the ball falls freely from z = 0.8 m (its first contact comes at
   * t = sqrt(2 · 0.75 / 9.81) = 0.39 s) by g t²/2 = 0.31 m, more than its diameter: its disc
   * at frame 0 and at t = 0.25 s are disjoint, so every pixel of the first changes */
  assert_true(nd >= ball);
  free(ia.rgb), free(ib.rgb), free(ir.rgb);
}

/* the text of a page */
static char *read_page(const char *path) {
  size_t n = 0;
  char *s = (char *)read_all(path, &n);
  assert_non_null(s);
  s = realloc(s, n + 1);
  s[n] = '\0';
  return s;
}

static int count_substr(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
    ++n;
  return n;
}

/* decode the base64 array named key ("key":"...") of the page's first run */
static float *page_array(const char *page, const char *key, size_t *n) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":\"", key);
  const char *p = strstr(page, pat);
  assert_non_null(p);
  p += strlen(pat);
  size_t len = strcspn(p, "\"");
  unsigned char *out = malloc(len * 3 / 4 + 4);
  size_t k = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len && p[i] != '='; ++i) {
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *c = strchr(tab, p[i]);
    assert_non_null(c);
    acc = acc << 6 | (uint32_t)(c - tab), bits += 6;
    if (bits >= 8) out[k++] = (unsigned char)(acc >> (bits -= 8));
  }
  *n = k / 4;
  return (float *)out;
}

/* A recorded run (trajectory CSV of moreau run) replays to the poses a scene run records: the
 * same q (written with 17 significant digits, read back exactly) through the same forward
 * kinematics gives the same Float32 placements, frame for frame. */
static void test_trajectory_replay(void **state) {
  make_workdir();
  char cmd[1024], out[8192], traj[128], pa[128], pb[128];
  snprintf(traj, sizeof traj, "%s/traj.csv", workdir);
  snprintf(pa, sizeof pa, "%s/scene.html", workdir);
  snprintf(pb, sizeof pb, "%s/traj.html", workdir);
  snprintf(cmd, sizeof cmd,
           "run scenes/demo.yaml --duration 0.1 --quiet --out '%s' --contacts '%s/c.csv'", traj,
           workdir);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  write_page("view scenes/demo.yaml --duration 0.1", pa);
  snprintf(cmd, sizeof cmd, "view '%s' --scene scenes/demo.yaml --contacts '%s/c.csv'", traj,
           workdir);
  write_page(cmd, pb);
  char *sa = read_page(pa), *sb = read_page(pb);
  size_t na, nb, ca, cb;
  float *xa = page_array(sa, "poses", &na), *xb = page_array(sb, "poses", &nb);
  float *ka = page_array(sa, "contacts", &ca), *kb = page_array(sb, "contacts", &cb);
  /* frames: the scene run starts at t = 0, the trajectory at its first row t = Δt; both then
   * take the steps at 1/60 s, 2/60 s, ... 0.1 s: 7 frames each, the last 6 the same steps */
  assert_non_null(strstr(sa, "\"nframes\":7,"));
  assert_non_null(strstr(sb, "\"nframes\":7,"));
  size_t per = na / 7;
  assert_int_equal(na, nb);
  assert_memory_equal(xa + per, xb + per, 6 * per * sizeof(float));
  /* contacts of the same 6 frames: the CSV's world force f splits into (n·f) n and the rest.
   * Written with 9 significant digits, n and f carry relative errors ≤ 5e-9, so the two split
   * forces differ from the simulator's by ≤ 3e-8 |f|, and each side's Float32 rounding adds
   * ≤ 6e-8 of the value: 1.5e-7 max(1, |p|, |f|) bounds the difference */
  size_t noa, nob;
  int32_t *oa = (int32_t *)page_array(sa, "contact_off", &noa);
  int32_t *ob = (int32_t *)page_array(sb, "contact_off", &nob);
  assert_int_equal(noa, 8);
  assert_int_equal(nob, 8);
  assert_int_equal(oa[7] - oa[1], ob[7] - ob[1]);
  assert_true(oa[7] - oa[1] > 0);
  for (int32_t i = 0; i < oa[7] - oa[1]; ++i) {
    const float *u = ka + 9 * (oa[1] + i), *w = kb + 9 * (ob[1] + i);
    double scale = 1.0;
    for (int k = 0; k < 9; ++k)
      scale = fmax(scale, fabs(u[k]));
    for (int k = 0; k < 9; ++k)
      assert_near(u[k], w[k], 1.5e-7 * scale);
  }
  assert_true(ca >= 9 * (size_t)oa[7] && cb >= 9 * (size_t)ob[7]);
  free(oa), free(ob);
  free(xa), free(xb), free(ka), free(kb), free(sa), free(sb);
}

/* moreau compare --html: one run per solver in one page; run --html writes the run */
static void test_html_options(void **state) {
  make_workdir();
  char cmd[1024], out[8192], page[128];
  snprintf(page, sizeof page, "%s/compare.html", workdir);
  snprintf(cmd, sizeof cmd,
           "compare scenes/a7_bouncing_ball.yaml --solvers ncp-pgs,ccp-admm --duration 0.2 "
           "--html '%s'",
           page);
  assert_int_equal(cli_run(cmd, 0, out, sizeof out), 0);
  assert_non_null(strstr(out, "replay written to"));
  char *s = read_page(page);
  assert_non_null(strstr(s, "{\"name\":\"ncp-pgs\",\"status\":\"ok\""));
  assert_non_null(strstr(s, "{\"name\":\"ccp-admm\",\"status\":\"ok\""));
  free(s);
  snprintf(page, sizeof page, "%s/run.html", workdir);
  snprintf(cmd, sizeof cmd, "run scenes/a7_bouncing_ball.yaml --quiet --duration 0.2 --html '%s'",
           page);
  assert_int_equal(cli_run(cmd, 0, out, sizeof out), 0);
  s = read_page(page);
  /* 0.2 s at 60 frames per second: t = 0, 1/60, ..., 12/60 */
  assert_non_null(strstr(s, "\"nframes\":13,"));
  assert_int_equal(count_substr(s, "\"name\":\"ncp-hybrid\""), 1);
  free(s);
}

/* URDF visual meshes: the reference Solo-12 has 17 STL visual elements, all drawn */
static void test_visual_meshes(void **state) {
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka */
  make_workdir();
  char scene[8192], path[128], page[128], out[8192];
  snprintf(scene, sizeof scene,
           "timestep: 0.001\nduration: 0.01\nbodies:\n  - name: ground\n    fixed: true\n"
           "    geoms: [{type: halfspace}]\nrobots:\n  - name: solo\n"
           "    urdf: %s/robots/solo_description/robots/solo12.urdf\n    floating: true\n"
           "    position: [0, 0, 0.4]\n",
           root);
  snprintf(path, sizeof path, "%s/solo_ref.yaml", workdir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(scene, f);
  fclose(f);
  snprintf(page, sizeof page, "%s/solo_ref.html", workdir);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "view '%s' -o '%s'", path, page);
  int code = cli_run(cmd, 1, out, sizeof out);
  if (code) fail_msg("%s", out);
  assert_null(strstr(out, "not drawn"));
  char *s = read_page(page);
  assert_int_equal(count_substr(s, "\"visual\":1"), 17);
  free(s);
}

/* a URDF's visual elements: a box with a robot-level material colour is drawn with its half
 * extents and rgba; a mesh file that does not exist is counted as not drawn, with the
 * reason */
static void test_visual_elements(void **state) {
  make_workdir();
  char urdf[128], scene[128], page[128], cmd[512], out[8192];
  snprintf(urdf, sizeof urdf, "%s/box.urdf", workdir);
  snprintf(scene, sizeof scene, "%s/box.yaml", workdir);
  snprintf(page, sizeof page, "%s/box.html", workdir);
  FILE *f = fopen(urdf, "w");
  assert_non_null(f);
  fputs("<robot name=\"r\"><material name=\"red\"><color rgba=\"1 0 0 1\"/></material>\n"
        "<link name=\"base\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" "
        "iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
        "<visual><geometry><box size=\"0.1 0.2 0.3\"/></geometry>"
        "<material name=\"red\"/></visual>\n"
        "<visual><geometry><mesh filename=\"part.dae\"/></geometry></visual>\n"
        "<collision><geometry><box size=\"0.1 0.2 0.3\"/></geometry></collision>"
        "</link></robot>\n",
        f);
  fclose(f);
  f = fopen(scene, "w");
  assert_non_null(f);
  fprintf(f, "timestep: 0.001\nduration: 0.01\nrobots:\n  - {name: r, urdf: %s, floating: true}\n",
          urdf);
  fclose(f);
  snprintf(cmd, sizeof cmd, "view '%s' -o '%s'", scene, page);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "1 visual element(s) not drawn"));
  assert_non_null(strstr(out, "visual mesh 'part.dae' not found"));
  char *s = read_page(page);
  assert_int_equal(count_substr(s, "\"visual\":1"), 1);
  assert_non_null(strstr(s, "\"size\":[0.05,0.1,0.15],\"rgba\":[1,0,0,1]"));
  free(s);
}

/* a Collada visual mesh (a link of example-robot-data's hextilt) is read through assimp and
 * drawn as its triangles */
static void test_visual_collada(void **state) {
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka */
  make_workdir();
  char urdf[128], scene[128], page[128], cmd[512], out[8192];
  snprintf(urdf, sizeof urdf, "%s/dae.urdf", workdir);
  snprintf(scene, sizeof scene, "%s/dae.yaml", workdir);
  snprintf(page, sizeof page, "%s/dae.html", workdir);
  FILE *f = fopen(urdf, "w");
  assert_non_null(f);
  fprintf(f,
          "<robot name=\"r\"><link name=\"base\"><inertial><mass value=\"1\"/><inertia "
          "ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
          "</inertial>\n<visual><geometry><mesh filename=\"file://%s/robots/hextilt_description/"
          "meshes/link_1.dae\"/></geometry></visual>\n</link></robot>\n",
          root);
  fclose(f);
  f = fopen(scene, "w");
  assert_non_null(f);
  fprintf(f, "timestep: 0.001\nduration: 0.01\nrobots:\n  - {name: r, urdf: %s, floating: true}\n",
          urdf);
  fclose(f);
  snprintf(cmd, sizeof cmd, "view '%s' -o '%s'", scene, page);
  int code = cli_run(cmd, 1, out, sizeof out);
  if (code) fail_msg("%s", out);
  assert_null(strstr(out, "not drawn"));
  char *s = read_page(page);
  assert_int_equal(count_substr(s, "\"visual\":1"), 1);
  size_t nface = 0;
  float *face = page_array(s, "face", &nface);
  assert_true(nface >= 3 && nface % 3 == 0);
  free(face), free(s);
}

/* bad input: a clear message and exit 2 */
static void test_view_errors(void **state) {
  make_workdir();
  char out[8192], csv[64], cmd[256];
  assert_int_equal(cli_run("view", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "missing SCENE.yaml or TRAJECTORY.csv"));
  assert_int_equal(cli_run("view x.csv", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "needs --scene"));
  assert_int_equal(cli_run("view scenes/demo.yaml --fps -1", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "--fps needs a non-negative number, got '-1'"));
  cli_write_temp("t,q0,q1\n0.001,1,2\n", ".csv", csv);
  snprintf(cmd, sizeof cmd, "view %s --scene scenes/demo.yaml -o /dev/null", csv);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, ":1: column 2 is 'q0', expected 'cube/root_joint_x' (the scene's "
                              "33 configuration columns follow t)"));
  remove(csv);
  /* the page goes through the atomic output of core/output.h: a directory is refused by name,
   * and a device that fails every write (/dev/full) is an error, not a silent success */
  snprintf(cmd, sizeof cmd, "view scenes/minimal.yaml --duration 0.01 -o '%s'", workdir);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, ": is a directory"));
  assert_int_equal(cli_run("view scenes/minimal.yaml --duration 0.01 -o /dev/full", 1, out,
                           sizeof out), 2);
  assert_non_null(strstr(out, "/dev/full"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_errors),       cmocka_unit_test(test_html_options),
      cmocka_unit_test(test_trajectory_replay), cmocka_unit_test(test_visual_meshes),
      cmocka_unit_test(test_visual_elements),   cmocka_unit_test(test_visual_collada),
      cmocka_unit_test(test_demo_in_chromium),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
  if (workdir[0] && !failed && system(cmd)) failed = 1;
  return failed;
}
