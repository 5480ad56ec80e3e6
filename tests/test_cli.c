/* The moreau command, run as a program (MOREAU_BIN, set by make test): moreau rbd on a pendulum
 * against closed forms, on Solo-12 and the published UR5, and its usage errors. */
#include "test_util.h"

#include "cli_util.h"

#include <float.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"

#define OUT_MAX (1 << 20)

/* run "moreau ARGS" (stderr merged into out when merge); the exit code */
static int run(const char *args, int merge, char *out) {
  return cli_run(args, merge, out, OUT_MAX);
}

/* write text to a new temporary file; its path goes to path */
static void write_temp(const char *text, char path[64]) {
  snprintf(path, 64, "/tmp/moreau_cli_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static double num(const mr_json *obj, const char *key) {
  const mr_json *v = mr_json_get(obj, key);
  if (!v || v->type != MR_JSON_NUMBER) fail_msg("no number '%s' in the output", key);
  return v->number;
}

/* the i-th number of an array member (row r of a matrix when r >= 0) */
static double at(const mr_json *obj, const char *key, int r, int i) {
  const mr_json *v = mr_json_get(obj, key);
  if (v && r >= 0) v = mr_json_at(v, r);
  v = v ? mr_json_at(v, i) : NULL;
  if (!v || v->type != MR_JSON_NUMBER) fail_msg("no number %s[%d][%d] in the output", key, r, i);
  return v->number;
}

static mr_json *parse_output(const char *out) {
  mr_json *j = NULL;
  mr_error e = {MR_OK, ""};
  if (mr_json_parse(out, "stdout", &j, &e)) fail_msg("%s\n%s", e.msg, out);
  return j;
}

/* a point mass m at distance l below a hinge about x */
static const char pendulum[] =
    "<robot name=\"pendulum\">\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"hinge\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"bob\"/><axis xyz=\"1 0 0\"/>\n"
    "    <limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"10\"/>\n"
    "  </joint>\n"
    "  <link name=\"bob\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"2\"/>\n"
    "    <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial></link>\n"
    "</robot>\n";

/* rbd --json on the pendulum (printed with 17 digits: exact round trip): every quantity
 * against its closed form. One body: each quantity is at most 8 operations on values of at most
 * m g l + m l² < 10 (the sines and cosines of q as the test computes them): 8 ulp of 10 */
static void test_rbd_pendulum(void **state) {
  char path[64], args[256];
  static char out[OUT_MAX];
  write_temp(pendulum, path);
  const double m = 2, l = 0.5, g = 9.81, q = 0.3, v = 0.7, tol = 8 * DBL_EPSILON * 10;
  snprintf(args, sizeof args, "rbd %s --q 0.3 --v 0.7 --tau 0 --a 1 --json", path);
  assert_int_equal(run(args, 0, out), 0);
  mr_json *j = parse_output(out);
  assert_near(num(j, "nq"), 1, 0);
  assert_near(num(j, "nv"), 1, 0);
  const mr_json *joint = mr_json_at(mr_json_get(j, "joints"), 0);
  assert_non_null(joint);
  assert_string_equal(mr_json_get(joint, "name")->string, "hinge");
  assert_string_equal(mr_json_get(joint, "type")->string, "revolute");
  assert_near(at(j, "M", 0, 0), m * l * l, tol);
  assert_near(at(j, "gravity", -1, 0), m * g * l * sin(q), tol);
  /* one hinge: M is constant, no Coriolis term, b = g */
  assert_near(at(j, "nle", -1, 0), m * g * l * sin(q), tol);
  assert_near(at(j, "ddq", -1, 0), -g / l * sin(q), tol);
  assert_near(at(j, "tau_id", -1, 0), m * l * l + m * g * l * sin(q), tol);
  assert_near(num(j, "kinetic_energy"), 0.5 * m * l * l * v * v, tol);
  assert_near(num(j, "potential_energy"), -m * g * l * cos(q), tol);
  assert_near(num(j, "mass"), m, 0);
  assert_near(at(j, "com", -1, 1), l * sin(q), tol);
  assert_near(at(j, "com", -1, 2), -l * cos(q), tol);
  mr_json_free(j);
  /* the text output shows the same matrix */
  snprintf(args, sizeof args, "rbd %s --q 0.3", path);
  assert_int_equal(run(args, 0, out), 0);
  assert_non_null(strstr(out, "M (1 x 1)"));
  assert_non_null(strstr(out, "5.0000e-01"));
  /* --no-mass-matrix: no M in either output, the rest unchanged */
  snprintf(args, sizeof args, "rbd %s --q 0.3 --v 0.7 --tau 0 --a 1 --json --no-mass-matrix", path);
  assert_int_equal(run(args, 0, out), 0);
  j = parse_output(out);
  assert_null(mr_json_get(j, "M"));
  assert_near(at(j, "ddq", -1, 0), -g / l * sin(q), tol);
  assert_near(at(j, "tau_id", -1, 0), m * l * l + m * g * l * sin(q), tol);
  mr_json_free(j);
  snprintf(args, sizeof args, "rbd %s --q 0.3 --no-mass-matrix", path);
  assert_int_equal(run(args, 0, out), 0);
  assert_null(strstr(out, "M (1 x 1)"));
  remove(path);
}

/* Solo-12 with a free flyer: sizes, and the linear block of M is m 1 (local frame) */
static void test_rbd_solo(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char args[9000], pkg[4096];
  static char out[OUT_MAX];
  snprintf(pkg, sizeof pkg, "%s", ref);
  *strrchr(pkg, '/') = '\0';
  snprintf(args, sizeof args,
           "rbd '%s/robots/solo_description/robots/solo12.urdf' --floating --package-root '%s' "
           "--json",
           ref, pkg);
  assert_int_equal(run(args, 0, out), 0);
  mr_json *j = parse_output(out);
  assert_near(num(j, "nq"), 19, 0);
  assert_near(num(j, "nv"), 18, 0);
  assert_int_equal(mr_json_get(j, "joints")->count, 13);
  double mass = num(j, "mass");
  /* the sum of the file's 17 <mass> values: 17 additions, each rounding to half an ulp of the
   * total (the decimal 2.50000279 itself to half an ulp) */
  const double tol = 17 * DBL_EPSILON * 2.5;
  assert_near(mass, 2.50000279, tol);
  /* the composite inertia of 17 bodies sums their masses again (the base upright: the
   * off-diagonal terms are rounding of rotations by 0) */
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      assert_near(at(j, "M", r, c), r == c ? mass : 0.0, tol);
  /* at the neutral posture the base is upright: lifting it costs m g */
  assert_near(at(j, "gravity", -1, 2), mass * 9.81, 9.81 * tol);
  /* the lower triangle mirrors the upper: each entry is one composite-inertia product, computed
   * once per pair, or twice with 17 roundings each of at most the largest entry */
  double mmax = 0;
  for (int r = 0; r < 18; ++r)
    for (int c = 0; c < 18; ++c)
      mmax = fmax(mmax, fabs(at(j, "M", r, c)));
  for (int r = 0; r < 18; ++r)
    for (int c = 0; c < r; ++c)
      assert_near(at(j, "M", r, c), at(j, "M", c, r), 2 * 17 * DBL_EPSILON * mmax);
  mr_json_free(j);
}

/* Solo-12 away from neutral: ABA inverts CRBA + RNEA, M ddq + b = tau; the quaternion given is
 * normalised (to 4 ulp: a norm and four quotients). Independent algorithms agree to round-off
 * relative to the sizes of the terms: each of the 13 joints' recursions rounds its terms to 8 ulp,
 * so 18 · 8 ulp of Σ |terms| bounds the residual (Featherstone's algorithms are backward stable
 * per body) */
static void test_rbd_solo_consistency(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char args[9000], pkg[4096];
  static char out[OUT_MAX];
  snprintf(pkg, sizeof pkg, "%s", ref);
  *strrchr(pkg, '/') = '\0';
  snprintf(args, sizeof args,
           "rbd '%s/robots/solo_description/robots/solo12.urdf' --floating --package-root '%s' "
           "--q 0.1,0.2,0.3,0.2,-0.4,0.6,1.8,0.3,-0.8,1.6,-0.2,0.7,-1.5,0.1,-0.9,1.4,0.2,0.8,-1.3 "
           "--v 0.5,-0.3,0.2,1,-2,0.5,3,-1,2,0.5,1.5,-2,1,0.2,-0.4,-1,2.5,0.3 "
           "--tau 1,2,-3,0.1,0.2,-0.3,0.5,-0.4,0.3,0.2,-0.1,0.6,-0.5,0.4,-0.3,0.2,0.1,-0.6 --json",
           ref, pkg);
  assert_int_equal(run(args, 0, out), 0);
  mr_json *j = parse_output(out);
  double n = 0.0;
  for (int k = 3; k < 7; ++k)
    n += at(j, "q", -1, k) * at(j, "q", -1, k);
  assert_near(n, 1.0, 4 * DBL_EPSILON);
  for (int r = 0; r < 18; ++r) {
    double lhs = at(j, "nle", -1, r), scale = fabs(lhs) + fabs(at(j, "tau", -1, r));
    for (int c = 0; c < 18; ++c) {
      lhs += at(j, "M", r, c) * at(j, "ddq", -1, c);
      scale += fabs(at(j, "M", r, c) * at(j, "ddq", -1, c));
    }
    assert_near(lhs, at(j, "tau", -1, r), 18 * 8 * DBL_EPSILON * scale);
  }
  mr_json_free(j);
}

/* the pendulum with a tip frame at the bob (a massless link merged by a fixed joint) */
static const char pendulum_tip[] =
    "<robot name=\"pendulum\">\n"
    "  <link name=\"base\"/>\n"
    "  <joint name=\"hinge\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"bob\"/><axis xyz=\"1 0 0\"/>\n"
    "    <limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"10\"/>\n"
    "  </joint>\n"
    "  <link name=\"bob\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"2\"/>\n"
    "    <inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/></inertial></link>\n"
    "  <joint name=\"to_tip\" type=\"fixed\"><parent link=\"bob\"/><child link=\"tip\"/>\n"
    "    <origin xyz=\"0 0 -0.5\"/></joint>\n"
    "  <link name=\"tip\"/>\n"
    "</robot>\n";

/* rbd --frame tip: the tip at R_x(q) (0, 0, -l) = (0, l sin q, -l cos q); its Jacobian column
 * (the hinge's) is ω = e_x with the tip's velocity e_x × p = (0, l cos q, l sin q) at the tip
 * (local-world-aligned), 0 at the world origin (on the axis: world), and R_x(q)ᵀ of those in
 * the tip's axes (local: (0, l, 0), e_x). A few operations on numbers <= 1: 8 ulp */
static void test_rbd_frame(void **state) {
  char path[64], args[256];
  static char out[OUT_MAX];
  write_temp(pendulum_tip, path);
  const double l = 0.5, q = 0.3, tol = 8 * DBL_EPSILON;
  snprintf(args, sizeof args, "rbd %s --q 0.3 --json --frame tip --frame bob", path);
  assert_int_equal(run(args, 0, out), 0);
  mr_json *j = parse_output(out);
  const mr_json *tip = mr_json_at(mr_json_get(j, "frames"), 0);
  assert_non_null(tip);
  assert_string_equal(mr_json_get(tip, "name")->string, "tip");
  assert_string_equal(mr_json_get(tip, "body")->string, "bob");
  double p[3] = {0, l * sin(q), -l * cos(q)}, quat[4] = {sin(q / 2), 0, 0, cos(q / 2)};
  for (int i = 0; i < 3; ++i)
    assert_near(at(tip, "position", -1, i), p[i], tol);
  for (int i = 0; i < 4; ++i)
    assert_near(at(tip, "quaternion", -1, i), quat[i], tol);
  assert_near(at(tip, "rotation", 1, 1), cos(q), tol);
  assert_near(at(tip, "rotation", 1, 2), -sin(q), tol);
  double lwa[6] = {0, l * cos(q), l * sin(q), 1, 0, 0}, local[6] = {0, l, 0, 1, 0, 0};
  for (int r = 0; r < 6; ++r) {
    assert_near(at(tip, "jacobian_local_world_aligned", r, 0), lwa[r], tol);
    assert_near(at(tip, "jacobian_world", r, 0), r == 3 ? 1.0 : 0.0, tol);
    assert_near(at(tip, "jacobian_local", r, 0), local[r], tol);
  }
  mr_json_free(j);
  /* the text output names the frame; an unknown frame names the closest one */
  snprintf(args, sizeof args, "rbd %s --q 0.3 --frame tip", path);
  assert_int_equal(run(args, 0, out), 0);
  assert_non_null(strstr(out, "frame tip (body bob)"));
  assert_non_null(strstr(out, "jacobian_local_world_aligned (6 x 1)"));
  snprintf(args, sizeof args, "rbd %s --frame tipp", path);
  assert_int_equal(run(args, 1, out), 2);
  assert_non_null(strstr(out, "no body or frame 'tipp' in the model (closest: 'tip')"));
  remove(path);
}

/* the published UR5, whose collision meshes are package://example-robot-data/... paths: rbd
 * reads no mesh by default, so it needs no package root; the moving links' masses sum to
 * 3.7 + 8.393 + 2.275 + 1.219 + 1.219 + 0.1879 kg (six additions: 6 half-ulps of the total); the
 * collision geometry, read with --collision (the package found among the file's ancestors),
 * changes no dynamics result, bit for bit; away from the collection, --collision fails naming
 * --package-root and the package */
static void test_rbd_ur5_without_meshes(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char ur5[4200], args[9000], dir[] = "/tmp/moreau_ur5_XXXXXX", copy[64];
  static char out[OUT_MAX], out2[OUT_MAX];
  snprintf(ur5, sizeof ur5, "%s/robots/ur_description/urdf/ur5_robot.urdf", ref);
  snprintf(args, sizeof args, "rbd '%s' --q 0.1,-0.5,0.4,0.3,-0.2,0.6 --v 1,0,-1,0.5,0,2 --json",
           ur5);
  assert_int_equal(run(args, 0, out), 0);
  mr_json *j = parse_output(out);
  assert_near(num(j, "nv"), 6, 0);
  assert_near(num(j, "mass"), 3.7 + 8.393 + 2.275 + 1.219 + 1.219 + 0.1879, 6 * DBL_EPSILON * 17);
  snprintf(args + strlen(args), sizeof args - strlen(args), " --collision");
  assert_int_equal(run(args, 0, out2), 0);
  assert_string_equal(out, out2);
  mr_json_free(j);
  snprintf(args, sizeof args, "rbd '%s' --collision", ur5);
  assert_int_equal(run(args, 0, out), 0);
  assert_non_null(strstr(out, "geometries = 8"));
  /* a copy outside the collection: no ancestor holds example-robot-data */
  assert_non_null(mkdtemp(dir));
  snprintf(copy, sizeof copy, "%s/ur5.urdf", dir);
  snprintf(args, sizeof args, "cp '%s' %s", ur5, copy);
  assert_int_equal(system(args), 0);
  snprintf(args, sizeof args, "rbd %s", copy);
  assert_int_equal(run(args, 1, out), 0);
  snprintf(args, sizeof args, "rbd %s --collision", copy);
  assert_int_equal(run(args, 1, out), 2);
  if (!strstr(out, "--package-root DIR with DIR holding the package directory "
                   "'example-robot-data'"))
    fail_msg("%s", out);
  remove(copy), rmdir(dir);
}

typedef struct {
  const char *args; /* after "rbd"; %s is the pendulum file */
  int code;
  const char *msg[2]; /* substrings of the output */
} usage_case;

/* bad usage and bad input exit with 2 and say what is wrong */
static void test_rbd_errors(void **state) {
  char ok[64], bad[64], args[512];
  static char out[OUT_MAX];
  write_temp(pendulum, ok);
  write_temp("<robot name=\"r\">\n<link name=\"a\"><inertial>\n<mass value=\"heavy\"/>"
             "</inertial></link></robot>\n",
             bad);
  char bad_line[80];
  snprintf(bad_line, sizeof bad_line, "%s:3:", bad);
  const usage_case cases[] = {
      {"rbd %s --q 1,2", 2, {"expected 1 values (nq)", "got 2"}},
      {"rbd %s --v abc", 2, {"--v", "'abc'"}},
      {"rbd %s --tau 1,", 2, {"--tau", "entry 2"}},
      {"rbd %s --bogus", 2, {"unknown option", "--bogus"}},
      {"rbd %s --a", 2, {"--a", "needs a value"}},
      {"rbd /nonexistent/robot.urdf%s", 2, {"/nonexistent/robot.urdf", "cannot open"}},
      {"rbd %s", 2, {bad_line, "heavy"}},
      {"rbd%s", 2, {"no MODEL", "--help"}},
      {"rbd --help%s", 0, {"--package-root", "--json"}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    const char *file = k == 6 ? bad : (k >= 5 ? "" : ok);
    snprintf(args, sizeof args, cases[k].args, file);
    int code = run(args, 1, out);
    if (code != cases[k].code || !strstr(out, cases[k].msg[0]) || !strstr(out, cases[k].msg[1]))
      fail_msg("'%s': exit %d (expected %d), output:\n%s", args, code, cases[k].code, out);
  }
  remove(ok), remove(bad);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rbd_pendulum),         cmocka_unit_test(test_rbd_solo),
      cmocka_unit_test(test_rbd_solo_consistency), cmocka_unit_test(test_rbd_ur5_without_meshes),
      cmocka_unit_test(test_rbd_errors),
      cmocka_unit_test(test_rbd_frame),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
