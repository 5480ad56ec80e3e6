/* The HTML replay viewer (moreau view, run --html, compare --html; docs/viewer.md), end to end:
 * the pages are written by the moreau binary (MOREAU_BIN) and opened in headless Chromium
 * (Debian chromium, software WebGL through SwiftShader; MOREAU_CHROMIUM overrides the command).
 * A page logs one console line once its frame is drawn; any other console line (an error, an
 * uncaught exception, a warning) fails the test. Screenshots are decoded by libspng and their
 * non-background pixels counted.
 *
 * Pixel bounds. The page fits its camera to the moving bodies' bounding box at frame 0 (diagonal
 * D, the "size" it logs): the camera sits at 1.5764 D from the box centre with a 40° vertical
 * field of view, so every body point is at distance d ≤ (1.5764 + 0.5) D from the camera and in
 * view. A sphere of radius r at distance d projects to an ellipse whose semi-minor axis is at
 * least r / d · (H/2) / tan 20° pixels (H the view height); its area is a lower bound for the
 * pixels of any convex body containing that sphere, and occluders are non-background pixels
 * too, so the bound holds for the count of non-background pixels. */
#include <zlib.h>

#include "viewer_util.h"

#define VIEW_W 1280
#define VIEW_H 800

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
  double size;           /* D, the camera fit's box diagonal (m) */
  int vw, vh;            /* the 3D view (pixels) */
  int follow;            /* the body the camera follows, -1 when none */
  int inview;            /* the followed robot's box inside the view: 1, 0; -1: no robot */
  int missing, fallback; /* visual elements not loaded; bodies drawn with collision geometry */
} ready_line;

/* the console lines of a log: exactly one, the page's ready line */
static ready_line check_console(const char *log_path) {
  size_t n = 0;
  char *log = (char *)read_all(log_path, &n);
  assert_non_null(log);
  log = realloc(log, n + 1);
  log[n] = '\0';
  ready_line r = {-1, 0, 0, 0, -1, -1, 0, 0};
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
    assert_int_equal(sscanf(strstr(m, "size="),
                            "size=%lf view=%dx%d follow=%d inview=%d missing=%d "
                            "fallback=%d",
                            &r.size, &r.vw, &r.vh, &r.follow, &r.inview, &r.missing, &r.fallback),
                     7);
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
  /* the camera stays where it was fitted (follow=none): the bounds of the header hold */
  ready_line la = screenshot(page, "frame=0&ui=0&static=0&contacts=0&follow=none", a);
  ready_line lb = screenshot(page, "frame=15&ui=0&static=0&contacts=0&follow=none", b);
  ready_line lr =
      screenshot(page, "frame=0&ui=0&static=0&contacts=0&follow=none&hide=cube,ball", robot);
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
  char *s = read_text(path);
  assert_non_null(s);
  return s;
}

/* the packed array named key ("key":{"t":T,"n":N,"s":S,"z":"BASE64"}, src/viewer/pack.c) of
 * the page's first such key: base64, inflate, unshuffle; n values of 4 (or 2) bytes */
static void *page_array(const char *page, const char *key, size_t *n) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":{\"t\":\"", key);
  const char *p = strstr(page, pat);
  assert_non_null(p);
  int w = !strncmp(p + strlen(pat), "u16", 3) ? 2 : 4, shuffled = 0;
  assert_int_equal(sscanf(strstr(p, "\"n\":"), "\"n\":%zu,\"s\":%d", n, &shuffled), 2);
  p = strstr(p, "\"z\":\"") + 5;
  size_t len = strcspn(p, "\"");
  unsigned char *z = malloc(len * 3 / 4 + 4);
  size_t k = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len && p[i] != '='; ++i) {
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *c = strchr(tab, p[i]);
    assert_non_null(c);
    acc = acc << 6 | (uint32_t)(c - tab), bits += 6;
    if (bits >= 8) z[k++] = (unsigned char)(acc >> (bits -= 8));
  }
  uLongf raw_len = (uLongf)(*n * (size_t)w);
  unsigned char *raw = malloc(raw_len + 1), *out = malloc(raw_len + 1);
  if (*n) assert_int_equal(uncompress(raw, &raw_len, z, (uLong)k), Z_OK);
  assert_int_equal(raw_len, *n * (size_t)w);
  for (size_t i = 0; i < *n; ++i)
    for (int b = 0; b < w; ++b)
      out[i * (size_t)w + (size_t)b] =
          shuffled ? raw[(size_t)b * *n + i] : raw[i * (size_t)w + (size_t)b];
  free(z), free(raw);
  return out;
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
  /* the mesh is stored once in the page's mesh table and referenced by the drawable */
  assert_int_equal(count_substr(s, "\"mesh\":0"), 1);
  size_t nface = 0;
  void *face = page_array(s, "face", &nface);
  assert_true(nface >= 3 && nface % 3 == 0);
  free(face), free(s);
}

/* write text to workdir/name; its path into path (128 bytes) */
static void write_file(const char *name, const char *text, char path[128]) {
  snprintf(path, 128, "%s/%s", workdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The follow camera: Solo-12 walking forward at 0.3 m/s under MPC (b9) is 0.9 m from its start
 * at t = 3 s, more than the fitted view's half width there. Followed (the default: the first
 * robot's base), the robot is in view: its projected box inside the view, at least its base's
 * inscribed sphere (radius 0.0265 m) of pixels, and none on the image's border; with the
 * camera left where it was fitted, its box leaves the view. */
static void test_follow_camera(void **state) {
  make_workdir();
  char page[128], a[128], b[128];
  snprintf(page, sizeof page, "%s/walk.html", workdir);
  snprintf(a, sizeof a, "%s/follow.png", workdir);
  snprintf(b, sizeof b, "%s/nofollow.png", workdir);
  write_page("view scenes/b9_solo_trot.yaml --duration 3.1", page);
  ready_line lf = screenshot(page, "t=3&ui=0&static=0&contacts=0", a);
  ready_line ln = screenshot(page, "t=3&ui=0&static=0&contacts=0&follow=none", b);
  assert_int_equal(lf.frame, 180);
  assert_true(lf.follow > 0);
  assert_int_equal(lf.inview, 1);
  assert_int_equal(ln.follow, -1);
  assert_int_equal(ln.inview, 0);
  image im = read_png(a);
  long fg = count_foreground(&im), border = count_border(&im);
  printf("  followed: %ld robot pixels (bound %.0f), %ld on the border\n", fg,
         sphere_pixels(0.0265, &lf), border);
  assert_true(fg >= sphere_pixels(0.0265, &lf));
  assert_int_equal(border, 0);
  free(im.rgb);
}

/* Never an invisible robot: a link whose visual mesh is missing is drawn with its collision
 * geometry (a 0.2 m box: at least its inscribed sphere's pixels), and the page lists the
 * missing element; the reference a1 (its 13 Collada visual meshes, the trunk's and each leg's
 * hip, thigh and calf, are not in the reference data) likewise shows its collision geometry,
 * at least its trunk box's inscribed sphere (radius 0.057 m). */
static void test_fallback_to_collision(void **state) {
  make_workdir();
  char urdf[128], scene[128], page[128], png[128], text[8192];
  write_file("lost.urdf",
             "<robot name=\"r\"><link name=\"base\"><inertial><mass value=\"1\"/><inertia "
             "ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
             "<visual><geometry><mesh filename=\"package://nowhere/base.dae\"/></geometry>"
             "</visual>\n<collision><geometry><box size=\"0.2 0.2 0.2\"/></geometry></collision>"
             "</link></robot>\n",
             urdf);
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 0.01\ngravity: [0, 0, 0]\nrobots:\n"
           "  - {name: r, urdf: %s, floating: true}\n",
           urdf);
  write_file("lost.yaml", text, scene);
  snprintf(page, sizeof page, "%s/lost.html", workdir);
  snprintf(png, sizeof png, "%s/lost.png", workdir);
  char cmd[512], out[8192];
  snprintf(cmd, sizeof cmd, "view '%s' -o '%s'", scene, page);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "1 visual element(s) not drawn, their links drawn with their "
                              "collision geometry instead; the first: link 'r/base': visual mesh "
                              "'package://nowhere/base.dae' not found"));
  char *s = read_page(page);
  assert_non_null(strstr(s, "\"missing\":[{\"body\":1,\"link\":\"r/base\",\"reason\":"));
  free(s);
  ready_line l = screenshot(page, "frame=0&ui=0&static=0&contacts=0&follow=none", png);
  assert_int_equal(l.missing, 1);
  assert_int_equal(l.fallback, 1);
  image im = read_png(png);
  long fg = count_foreground(&im);
  printf("  a missing visual mesh: %ld pixels of collision geometry (bound %.0f)\n", fg,
         sphere_pixels(0.1, &l));
  assert_true(fg >= sphere_pixels(0.1, &l));
  free(im.rgb);
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka */
  snprintf(
      text, sizeof text,
      "timestep: 0.001\nduration: 0.01\nrobots:\n  - {name: a1, urdf: %s/robots/a1_description/"
      "urdf/a1.urdf, floating: true, position: [0, 0, 0.45]}\n",
      root);
  write_file("a1.yaml", text, scene);
  snprintf(page, sizeof page, "%s/a1.html", workdir);
  snprintf(cmd, sizeof cmd, "view '%s' -o '%s'", scene, page);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "13 visual element(s) not drawn"));
  l = screenshot(page, "frame=0&ui=0&static=0&contacts=0&follow=none", png);
  assert_int_equal(l.missing, 13);
  assert_int_equal(l.fallback, 13);
  im = read_png(png);
  fg = count_foreground(&im);
  printf("  a1: %ld pixels of collision geometry (bound %.0f)\n", fg, sphere_pixels(0.057, &l));
  assert_true(fg >= sphere_pixels(0.057, &l));
  free(im.rgb);
}

/* Page size: the reference Solo-12 with its 17 STL visual meshes walking for 10 s (b9's
 * trajectory replayed on the reference model, whose joints have the same names) at 50 frames
 * per second is at most 2 MB (the page's target), each of its 10 mesh files stored once. */
static void test_page_size(void **state) {
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka */
  make_workdir();
  char scene[128], text[8192], cmd[1024], out[8192], page[128];
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 10\nbodies:\n  - {name: ground, fixed: true, geoms: "
           "[{type: halfspace}]}\nrobots:\n  - {name: solo, urdf: %s/robots/solo_description/"
           "robots/solo12.urdf, floating: true}\n",
           root);
  write_file("solo_ref.yaml", text, scene);
  snprintf(cmd, sizeof cmd,
           "run scenes/b9_solo_trot.yaml --duration 10 --quiet --out '%s/walk.csv' --contacts "
           "'%s/walk_c.csv'",
           workdir, workdir);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  snprintf(page, sizeof page, "%s/walk_ref.html", workdir);
  snprintf(cmd, sizeof cmd,
           "view '%s/walk.csv' --scene '%s' --contacts '%s/walk_c.csv' --fps 50 -o '%s'", workdir,
           scene, workdir, page);
  assert_int_equal(cli_run(cmd, 1, out, sizeof out), 0);
  struct stat st;
  assert_int_equal(stat(page, &st), 0);
  char *s = read_page(page);
  printf("  reference Solo-12, 10 s at 50 frames/s: %lld bytes\n", (long long)st.st_size);
  assert_true(st.st_size <= 2000000);
  assert_non_null(strstr(s, "\"nframes\":501,"));
  assert_int_equal(count_substr(s, "\"visual\":1"), 17);
  /* the mesh table: one entry ({"nv":...) per distinct file */
  assert_int_equal(count_substr(s, "{\"nv\":"), 10);
  free(s);
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
  assert_int_equal(
      cli_run("view scenes/minimal.yaml --duration 0.01 -o /dev/full", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "/dev/full"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_errors),           cmocka_unit_test(test_html_options),
      cmocka_unit_test(test_trajectory_replay),     cmocka_unit_test(test_visual_meshes),
      cmocka_unit_test(test_visual_elements),       cmocka_unit_test(test_visual_collada),
      cmocka_unit_test(test_demo_in_chromium),      cmocka_unit_test(test_follow_camera),
      cmocka_unit_test(test_fallback_to_collision), cmocka_unit_test(test_page_size),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
  if (workdir[0] && !failed && system(cmd)) failed = 1;
  return failed;
}
