/* Trajectory CSV columns named after joints, bodies and robots (src/cli/columns.c), with the
 * optional world-frame base velocity, body poses and centres of mass, checked against the
 * library run in process and against invariants of the rotation. */
#include "test_util.h"

#include <float.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "moreau/control.h"
#include "moreau/scene.h"

#define LINE (1 << 17)

static char header[LINE], row[LINE], text[1024];

/* the index of column name in the header, -1 if absent */
static int column(const char *name) {
  int k = 0;
  for (const char *p = header; p; p = strchr(p, ','), p = p ? p + 1 : NULL, ++k) {
    size_t n = strcspn(p, ",\n");
    if (n == strlen(name) && !strncmp(p, name, n)) return k;
  }
  return -1;
}

/* the value of column k of the row */
static double value(int k) {
  const char *p = row;
  for (int i = 0; i < k; ++i)
    p = strchr(p, ',') + 1;
  return strtod(p, NULL);
}

static int count_fields(const char *line) {
  int n = 1;
  for (const char *p = line; *p; ++p)
    n += *p == ',';
  return n;
}

/* run a 0.2 s Solo-12 trot with every optional group; keep the header and the last row */
static void run_solo(void) {
  char scene[64], args[512], out[4096], cwd[512];
  if (!getcwd(cwd, sizeof cwd)) fail_msg("getcwd failed");
  snprintf(text, sizeof text,
           "timestep: 0.001\nduration: 0.2\ncontact: {margin: 0.001}\n"
           "record: {world_velocity: true, poses: true, com: true}\n"
           "bodies: [{name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.9}]}]\n"
           "robots:\n  - name: solo\n    urdf: %s/robots/solo12/solo12.urdf\n"
           "    floating: true\n    posture: standing\n    linear_velocity: [0.2, 0.1, 0]\n"
           "    angular_velocity: [0, 0, 0.5]\n    pd: {kp: 20, kd: 0.5}\n",
           cwd);
  cli_write_temp(text, ".yaml", scene);
  char csvb[128];
  const char *csv = cli_tmp(csvb, "columns.csv");
  snprintf(args, sizeof args, "run %s --out %s --quiet", scene, csv);
  if (cli_run(args, 1, out, sizeof out)) fail_msg("moreau %s: %s", args, out);
  FILE *f = fopen(csv, "r");
  assert_non_null(f);
  assert_non_null(fgets(header, sizeof header, f));
  while (fgets(row, sizeof row, f))
    assert_int_equal(count_fields(row), count_fields(header));
  fclose(f);
  remove(csv);
  remove(scene);
}

/* the names: joints with their robot prefix and a suffix per coordinate, bodies, robots */
static void test_names(void **state) {
  run_solo();
  const char *names[] = {"t",
                         "solo/root_joint_x",
                         "solo/root_joint_qw",
                         "solo/FL_HAA_q",
                         "solo/HR_KFE_q",
                         "solo/root_joint_vx",
                         "solo/root_joint_wz",
                         "solo/FL_KFE_v",
                         "solo/root_joint_world_vx",
                         "solo/root_joint_world_wz",
                         "solo/base_link_px",
                         "solo/FL_LOWER_LEG_qw",
                         "solo/com_x",
                         "solo/com_z",
                         "energy",
                         "ncontacts"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
    if (column(names[k]) < 0) fail_msg("no column %s in %s", names[k], header);
  /* q before v: the first velocity column follows the last configuration one */
  assert_int_equal(column("solo/root_joint_vx"), column("solo/HR_KFE_q") + 1);
}

/* the values: the base pose columns are the free-flyer's q (position exactly; the quaternion
 * from the rotation matrix and back, with the sign fixed by w >= 0: the matrix entries are 3
 * operations each, the way back a square root and quotients by a component ≥ 1/2, 8 ulp in all);
 * the world-frame velocity has the local one's norm (a rotation orthonormal to 2 ulp, entries
 * of 3 products and the norms: 8 ulp relative);
 * the centre of mass is the library's mr_sim_com after the same steps (bitwise: the same
 * computation, printed with 17 digits) */
static void test_values(void **state) {
  run_solo();
  const char *xyz[3] = {"x", "y", "z"}, *quat[4] = {"qx", "qy", "qz", "qw"};
  char a[128], b[128];
  double sign = value(column("solo/root_joint_qw")) < 0 ? -1.0 : 1.0;
  for (int k = 0; k < 3; ++k) {
    snprintf(a, sizeof a, "solo/root_joint_%s", xyz[k]);
    snprintf(b, sizeof b, "solo/base_link_p%s", xyz[k]);
    assert_near(value(column(b)), value(column(a)), 0);
  }
  for (int k = 0; k < 4; ++k) {
    snprintf(a, sizeof a, "solo/root_joint_%s", quat[k]);
    snprintf(b, sizeof b, "solo/base_link_%s", quat[k]);
    assert_near(value(column(b)), sign * value(column(a)), 8 * DBL_EPSILON);
  }
  for (int part = 0; part < 2; ++part) {
    double nl = 0, nw = 0;
    for (int k = 0; k < 3; ++k) {
      snprintf(a, sizeof a, "solo/root_joint_%c%s", part ? 'w' : 'v', xyz[k]);
      snprintf(b, sizeof b, "solo/root_joint_world_%c%s", part ? 'w' : 'v', xyz[k]);
      nl += value(column(a)) * value(column(a));
      nw += value(column(b)) * value(column(b));
    }
    assert_true(nl > 1e-8); /* the base moves */
    assert_near(sqrt(nw), sqrt(nl), 8 * DBL_EPSILON * sqrt(nl));
  }
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_parse(text, "columns.yaml", NULL, &sc, &err)) fail_msg("%s", err.msg);
  mr_sim *s = mr_sim_from_scene(&sc, NULL, &err);
  assert_non_null(s);
  for (int k = 0; k < 200; ++k)
    assert_int_equal(mr_sim_step(s, &err), MR_OK);
  mr_vec3 c = mr_sim_com(s, 0);
  for (int k = 0; k < 3; ++k) {
    snprintf(a, sizeof a, "solo/com_%s", xyz[k]);
    assert_near(value(column(a)), c.v[k], 0);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
