/* Live viewing (include/moreau/live.h, moreau run --live; docs/viewer.md), end to end: a live
 * server on a simulator stepped by this program (the C API) or by the moreau command, and a
 * page in headless Chromium driven by viewer/test/live.mjs (playwright-core over Debian's
 * chromium; MOREAU_CHROMIUM overrides the browser), which prints what it saw as JSON.
 *
 * What is checked: the page's frames advance while the simulation runs, the pause button holds
 * the simulation (its time and step count do not move for 2 s), single steps advance it by one
 * step each, the walking robot stays in the following camera's view, a drag on a body moves it
 * by the amount the spring law predicts, the server refuses foreign Host headers and a port in
 * use with a clear message, and a run's server exits with the run (or serves on with
 * --keep-serving until SIGINT). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "moreau/control.h"
#include "moreau/live.h"
#include "moreau/scene.h"
#include "viewer_util.h"

static char workdir[64];

static void make_workdir(void) {
  if (workdir[0]) return;
  snprintf(workdir, sizeof workdir, "/tmp/moreau_live_XXXXXX");
  assert_non_null(mkdtemp(workdir));
}

/* the page driver: node viewer/test/live.mjs URL SCENARIO ARG OUT, its JSON line in out_path */
static pid_t start_driver(const char *url, const char *scenario, const char *arg, const char *png,
                          const char *out_path) {
  char *argv[] = {
      "node", "viewer/test/live.mjs", (char *)url, (char *)scenario, (char *)arg, (char *)png,
      NULL};
  return spawn(argv, out_path);
}

/* the driver's JSON result, after it exited; fails on an error the page reported */
static char *driver_result(const char *out_path) {
  char *s = read_text(out_path);
  assert_non_null(s);
  char *json = strstr(s, "{\"scenario\"");
  if (!json) {
    fail_msg("the page driver printed no result: %s", s);
    return NULL;
  }
  printf("  page: %s", json);
  if (!strstr(json, "\"errors\":[]")) fail_msg("the page reported errors: %s", json);
  char *copy = strdup(json);
  free(s);
  return copy;
}

/* ---- the C API: a slider dragged from the page ---- */

/* a 2 kg cart on a prismatic joint along x from a fixed base: free of gravity and friction
 * along its axis, so that the drag's spring is the only force on it */
static const char slider_urdf[] =
    "<robot name=\"slider\"><link name=\"base\"/>\n"
    "<joint name=\"x\" type=\"prismatic\"><parent link=\"base\"/><child link=\"cart\"/>"
    "<axis xyz=\"1 0 0\"/><limit lower=\"-50\" upper=\"50\" effort=\"1000\" velocity=\"100\"/>"
    "</joint>\n<link name=\"cart\"><inertial><mass value=\"2\"/><inertia ixx=\"0.01\" "
    "iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>\n"
    "<collision><geometry><box size=\"0.2 0.2 0.2\"/></geometry></collision></link></robot>\n";

static mr_world *slider_world(void) {
  char urdf[128], scene[128];
  snprintf(urdf, sizeof urdf, "%s/slider.urdf", workdir);
  snprintf(scene, sizeof scene, "%s/slider.yaml", workdir);
  FILE *f = fopen(urdf, "w");
  assert_non_null(f);
  fputs(slider_urdf, f);
  fclose(f);
  f = fopen(scene, "w");
  assert_non_null(f);
  fprintf(f, "timestep: 0.001\nduration: 100\nrobots:\n  - {name: s, urdf: %s, floating: false}\n",
          urdf);
  fclose(f);
  mr_error err = {0};
  mr_world *w = mr_world_load(scene, &err);
  if (!w) fail_msg("%s", err.msg);
  return w;
}

/* one step of the drag as mr_live_poll applied it */
typedef struct {
  int active;    /* the cart was dragged during this step */
  double anchor; /* x of the grabbed point in the cart's frame (m) */
  double target; /* x of the pointer's world point (m) */
} drag_step;

/* The drag's spring on the cart (live.h, mr_live_poll): with the cart at x (its origin, the
 * joint's coordinate: the base is at the origin), speed v, the grabbed point at x + a and the
 * pointer at x_t, f = m (ω² (x_t − x − a) − 2 ζ ω v) along x, m = 2 kg the mass the drag moves,
 * and the step (semi-implicit Euler; M = m on the prismatic dof, no gravity along it) is
 * v⁺ = v + Δt f / m, x⁺ = x + Δt v⁺. Iterated over the recorded steps from the state at the
 * first drag, this predicts the final position; the simulator computes the same products in
 * another order: the two agree to round-off, ~1e-12 m over 10⁴ steps of values below 10. */
static double predicted_x(const drag_step *d, long n, double x, double v, double dt) {
  double w = 2.0 * M_PI * 2.0, zeta = 1.0; /* the defaults: 2 Hz, critical damping */
  for (long k = 0; k < n; ++k) {
    double a = d[k].active ? w * w * (d[k].target - x - d[k].anchor) - 2.0 * zeta * w * v : 0.0;
    v += dt * a;
    x += dt * v;
  }
  return x;
}

static void test_c_api_drag(void **state) {
  make_workdir();
  mr_world *w = slider_world();
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  assert_non_null(s);
  mr_live *live = mr_live_create(s, NULL, &err);
  if (!live) fail_msg("%s", err.msg);
  int cart = mr_world_body_index(w, "s/cart");
  assert_true(cart > 0);
  char url[160], out[128];
  /* the camera stays put (follow=none): the pointer's target is then a fixed world point */
  snprintf(url, sizeof url, "%s#follow=none", mr_live_url(live));
  snprintf(out, sizeof out, "%s/drag.json", workdir);
  pid_t driver = start_driver(url, "perturb", "s/cart", "", out);
  long cap = 400000, n = 0, first = -1;
  drag_step *d = calloc((size_t)cap, sizeof *d);
  double x0 = 0, v0 = 0, t_end = wall_seconds() + 300;
  mr_live_stats *st = malloc(sizeof *st);
  /* step in real time until the page is done */
  while (waitpid(driver, NULL, WNOHANG) == 0 && wall_seconds() < t_end && n < cap) {
    if (mr_live_poll(live, 0.05) != MR_LIVE_STEP) continue;
    mr_live_get_stats(live, st);
    drag_step k = {st->perturb_body == cart, st->perturb_anchor[0], st->perturb_target[0]};
    if (k.active && first < 0) first = n, x0 = mr_sim_q(s)[0], v0 = mr_sim_v(s)[0];
    if (first >= 0) d[n++] = k;
    assert_int_equal(mr_sim_step(s, &err), MR_OK);
    mr_live_publish(live);
  }
  char *json = driver_result(out);
  assert_true(first >= 0);
  long active = 0;
  double reach = 0.0; /* how far the pointer went from where the cart was grabbed */
  for (long k = 0; k < n; ++k)
    if (d[k].active) active++, reach = fmax(reach, d[k].target - d[0].target);
  double x = mr_sim_q(s)[0], xp = predicted_x(d, n, x0, v0, w->timestep);
  printf("  dragged for %ld steps (the pointer %.4f m to the right at most): the cart moved "
         "%.6f m, predicted %.6f m\n",
         active, reach, x - x0, xp - x0);
  /* held 1.5 s at about real time: hundreds of steps at least, even on a loaded machine */
  assert_true(active >= 100);
  assert_near(x, xp, 1e-9);
  /* dragged 120 px to the right of the cart, seen from the fitted camera: +x, by centimetres */
  assert_true(reach > 0.01);
  assert_true(x - x0 > 0.01);
  mr_live_end(live, "done");
  mr_live_free(live);
  mr_sim_free(s);
  mr_world_free(w);
  free(d), free(st), free(json);
}

/* ---- the command line ---- */

/* a raw HTTP GET of / with the given Host header; the status code */
static int http_status(int port, const char *host) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  char req[256], resp[64] = "";
  int n =
      snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host);
  assert_int_equal(write(fd, req, (size_t)n), n);
  ssize_t k = read(fd, resp, sizeof resp - 1);
  close(fd);
  int code = 0;
  if (k > 0) sscanf(resp, "HTTP/1.%*d %d", &code);
  return code;
}

/* the port of the "live viewer: http://127.0.0.1:PORT/" line in a command's output */
static int url_port(const char *out_path, char url[128]) {
  char *line = wait_text(out_path, "live viewer: http://", 60);
  if (!line) fail_msg("no live viewer line in %s: %s", out_path, read_text(out_path));
  int port = 0;
  assert_int_equal(sscanf(line, "live viewer: http://127.0.0.1:%d/", &port), 1);
  snprintf(url, 128, "http://127.0.0.1:%d/", port);
  free(line);
  return port;
}

/* moreau run --live: a session on the walking Solo-12 (b9, 0.3 m/s under MPC) */
static void test_cli_session(void **state) {
  make_workdir();
  char out[128], drv[128], png[128], url[128], page[200];
  snprintf(out, sizeof out, "%s/run.txt", workdir);
  snprintf(drv, sizeof drv, "%s/session.json", workdir);
  snprintf(png, sizeof png, "%s/session.png", workdir);
  char *argv[] = {(char *)cli_bin(), "run",    "scenes/b9_solo_trot.yaml",
                  "--live",          "--port", "0",
                  "--duration",      "600",    NULL};
  pid_t run = spawn(argv, out);
  int port = url_port(out, url);
  /* a foreign Host header (DNS rebinding) is refused, this server's own is served */
  assert_int_equal(http_status(port, "evil.example:80"), 403);
  char host[64];
  snprintf(host, sizeof host, "127.0.0.1:%d", port);
  assert_int_equal(http_status(port, host), 200);
  /* the run waits for a page: nothing stepped yet */
  snprintf(page, sizeof page, "%s#static=0&contacts=0&shadows=0", url);
  pid_t driver = start_driver(page, "session", "solo/", png, drv);
  assert_int_equal(wait_child(driver, 400), 0);
  char *json = driver_result(drv);
  /* frames advance: 2 s apart, more frames and a later simulated time */
  assert_true(json_number(json, "second", "frame") > json_number(json, "first", "frame"));
  assert_true(json_number(json, "second", "t") > json_number(json, "first", "t"));
  /* the pause holds: the same time and steps 2 s later, the page says so */
  assert_int_equal(json_number(json, "paused2", "steps"), json_number(json, "paused1", "steps"));
  assert_true(json_number(json, "paused2", "t") == json_number(json, "paused1", "t"));
  assert_string_equal(json_string(json, "paused2", "status"), "paused");
  assert_string_equal(json_string(json, "paused2", "paused"), "1");
  /* three single steps: three steps more */
  assert_int_equal(json_number(json, "stepped", "steps"),
                   json_number(json, "paused2", "steps") + 3);
  /* the robot stays in view: its projected box inside the 3D view, its pixels there */
  double x0 = json_number(json, "box", "x0"), x1 = json_number(json, "box", "x1");
  double y0 = json_number(json, "box", "y0"), y1 = json_number(json, "box", "y1");
  double W = json_number(json, "box", "width"), H = json_number(json, "box", "height");
  printf("  robot box [%.0f, %.0f] x [%.0f, %.0f] in a %.0f x %.0f view at t = %.3f s\n", x0, x1,
         y0, y1, W, H, json_number(json, "stepped", "t"));
  assert_true(x0 >= 0 && y0 >= 0 && x1 <= W && y1 <= H);
  image im = read_png(png);
  /* the world geometry, contacts and shadows hidden: only the robot differs from white; it
   * covers at least its base box's area seen edge-on from the camera's side, and touches no
   * border of the view */
  long fg = count_foreground(&im), border = count_border(&im);
  printf("  screenshot %dx%d: %ld robot pixels, %ld on the border\n", im.w, im.h, fg, border);
  assert_true(fg > 1000);
  assert_int_equal(border, 0);
  free(im.rgb);
  /* SIGINT ends the run cleanly: the summary is printed, marked interrupted, exit 130 */
  kill(run, SIGINT);
  assert_int_equal(wait_child(run, 60), 130);
  char *text = read_text(out);
  assert_non_null(strstr(text, "interrupted     yes"));
  free(text), free(json);
}

/* a run's server ends with the run (view --live here); --keep-serving serves its last state
 * until SIGINT; a port in use is a clear error */
static void test_cli_end_and_port(void **state) {
  make_workdir();
  char out[128], out1[128], out2[128], url[128], host[64], port_s[16];
  snprintf(out1, sizeof out1, "%s/once.txt", workdir);
  snprintf(out, sizeof out, "%s/keep.txt", workdir);
  snprintf(out2, sizeof out2, "%s/busy.txt", workdir);
  char *once[] = {(char *)cli_bin(),
                  "run",
                  "scenes/a7_bouncing_ball.yaml",
                  "--live",
                  "--port",
                  "0",
                  "--no-wait",
                  "--fast",
                  "--duration",
                  "0.5",
                  "--quiet",
                  NULL};
  assert_int_equal(wait_child(spawn(once, out1), 60), 0);
  char *keep[] = {(char *)cli_bin(),
                  "run",
                  "scenes/a7_bouncing_ball.yaml",
                  "--live",
                  "--port",
                  "0",
                  "--no-wait",
                  "--fast",
                  "--duration",
                  "0.2",
                  "--keep-serving",
                  "--quiet",
                  NULL};
  pid_t run = spawn(keep, out);
  int port = url_port(out, url);
  char *line = wait_text(out, "serving its last state", 60);
  assert_non_null(line);
  free(line);
  snprintf(host, sizeof host, "localhost:%d", port);
  assert_int_equal(http_status(port, host), 200);
  /* the port is taken: a second server says so and exits 2 */
  snprintf(port_s, sizeof port_s, "%d", port);
  char *busy[] = {(char *)cli_bin(), "run",     "scenes/a7_bouncing_ball.yaml",
                  "--live",          "--port",  port_s,
                  "--no-wait",       "--quiet", NULL};
  int busy_code = wait_child(spawn(busy, out2), 60);
  /* SIGINT ends the serving one, exit 0 (before any assertion: no server left behind) */
  kill(run, SIGINT);
  assert_int_equal(wait_child(run, 60), 0);
  char *msg = read_text(out2), want[96];
  snprintf(want, sizeof want, "cannot listen on 127.0.0.1:%d: Address already in use", port);
  if (!strstr(msg, want)) fail_msg("expected '%s' in: %s", want, msg);
  assert_int_equal(busy_code, 2);
  free(msg);
}

/* bad options: clear messages, exit 2 */
static void test_cli_errors(void **state) {
  char out[4096];
  assert_int_equal(cli_run("run scenes/minimal.yaml --live --port 70000", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "--port: '70000' is not valid"));
  assert_int_equal(cli_run("view --live x.csv --scene scenes/minimal.yaml", 1, out, sizeof out), 2);
  assert_non_null(strstr(out, "--live serves a scene's run"));
  mr_error err = {0};
  mr_live_options o = mr_live_options_default();
  o.fps = 0;
  assert_null(mr_live_create(NULL, &o, &err));
  assert_non_null(strstr(err.msg, "fps = 0"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cli_errors),
      cmocka_unit_test(test_cli_end_and_port),
      cmocka_unit_test(test_c_api_drag),
      cmocka_unit_test(test_cli_session),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
  if (workdir[0] && !failed && system(cmd)) failed = 1;
  return failed;
}
