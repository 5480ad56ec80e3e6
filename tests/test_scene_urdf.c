/* A URDF where a scene is expected: the default scene (ground, floating base unless rooted at the
 * world, the first SRDF posture, robot and ground touching), the SRDF found in the layout of
 * robot description packages (NAME/srdf/X.srdf beside NAME/urdf/X.urdf), files that are neither
 * scene nor URDF, and the command line (run, view, check) on real robots of example-robot-data
 * (those tests are skipped when the collection is absent). */
#include "test_util.h"

#include "cli_util.h"
#include "sim_util.h"

#include <float.h>
#include <string.h>

#include "moreau/scene.h"
#include "moreau/sim.h"

/* the smallest signed distance between the robot and the ground at the initial state, from the
 * narrowphase with a 1 mm margin (contacts up to 1 mm apart are reported) */
static double min_gap(mr_scene *sc) {
  sc->contact.margin = 1e-3;
  mr_sim *s = tsim_create(sc, NULL);
  const mr_contact *c = NULL;
  int n = 0;
  mr_error err = {0};
  if (mr_sim_collide(s, &c, &n, &err)) fail_msg("%s", err.msg);
  double phi = INFINITY;
  for (int i = 0; i < n; ++i)
    phi = fmin(phi, c[i].phi);
  mr_sim_free(s);
  return phi;
}

/* the project's Solo-12 (robots/solo12): floating (its root is not the world), the first
 * posture of solo12.srdf beside it ('standing': the knees bent, FL_KFE = -1.6), and lowered
 * or raised until its lowest point touches the ground: the narrowphase's smallest gap is 0 to
 * round-off of the coordinates (1e-12 m: positions of order 1 m, a few operations each) */
static void test_solo_default_scene(void **state) {
  mr_scene sc = tsim_load("robots/solo12/solo12.urdf");
  assert_int_equal(sc.nrobots, 1);
  assert_true(sc.robots[0].floating);
  assert_string_equal(sc.solver, "ncp-hybrid");
  assert_non_null(strstr(sc.default_scene, "solo12.urdf is a URDF robot"));
  assert_non_null(strstr(sc.default_scene, "posture 'standing' of solo12.srdf"));
  int b = mr_model_joint_index(sc.model, "solo12/FL_KFE");
  assert_true(b > 0);
  assert_near(sc.q0[sc.model->bodies[b].joint.idx_q], -1.6, 0);
  assert_near(min_gap(&sc), 0.0, 1e-12);
  mr_scene_free(&sc);
}

/* the published UR5 is rooted at 'world': fixed; at q = 0 its arm reaches out horizontally below
 * its base, so the ground goes down to its lowest point (about -0.0485 m) */
static void test_ur5_default_scene(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char path[4200];
  snprintf(path, sizeof path, "%s/robots/ur_description/urdf/ur5_robot.urdf", ref);
  mr_scene sc = tsim_load(path);
  assert_false(sc.robots[0].floating);
  assert_int_equal(sc.model->nv, 6);
  assert_non_null(strstr(sc.default_scene, "fixed to the world"));
  assert_non_null(strstr(sc.default_scene, "the neutral posture")); /* ur5.srdf: no group_state */
  assert_near(min_gap(&sc), 0.0, 1e-12);
  mr_scene_free(&sc);
}

/* A1: a1_description/urdf/a1.urdf with its postures in a1_description/srdf/a1.srdf. A scene
 * naming the posture alone finds that file; so does the default scene of the bare URDF */
static void test_srdf_package_layout(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char text[8800], path[4200];
  snprintf(path, sizeof path, "%s/robots/a1_description/urdf/a1.urdf", ref);
  snprintf(text, sizeof text,
           "robots:\n  - {name: a1, urdf: '%s', floating: true, posture: standing}\n", path);
  mr_scene sc = tsim_parse(text, NULL);
  int b = mr_model_joint_index(sc.model, "a1/FL_thigh_joint");
  assert_true(b > 0);
  assert_near(sc.q0[sc.model->bodies[b].joint.idx_q], 0.8, 0); /* the SRDF's value */
  assert_near(sc.q0[2], 0.26, 0);                              /* its root_joint z */
  mr_scene_free(&sc);
  sc = tsim_load(path);
  assert_non_null(strstr(sc.default_scene, "posture 'standing' of a1.srdf"));
  b = mr_model_joint_index(sc.model, "a1/FL_calf_joint");
  assert_near(sc.q0[sc.model->bodies[b].joint.idx_q], -1.81, 0);
  assert_near(min_gap(&sc), 0.0, 1e-12);
  mr_scene_free(&sc);
}

/* what is neither: an XML document whose root is <mujoco> is an MJCF model (after a prolog and
 * comments), another XML document is refused by its root element; a damaged .urdf gets the URDF
 * reader's message, not the YAML parser's; a URDF that needs a repair fails with the loader's
 * message and where such keys go */
static void test_not_a_scene(void **state) {
  char path[64];
  mr_scene sc;
  mr_error err;
  cli_write_temp("<?xml version='1.0'?>\n<!-- a model -->\n<mujoco model='m'><option "
                 "timestep='0.004'/></mujoco>\n",
                 ".xml", path);
  assert_int_equal(mr_scene_load(path, &sc, &err), MR_OK);
  assert_near(sc.timestep, 0.004, 0); /* the model's own option */
  mr_scene_free(&sc);
  remove(path);
  cli_write_temp("<?xml version='1.0'?>\n<!-- a model -->\n<sdf version='1.6'/>\n", ".xml", path);
  assert_int_equal(mr_scene_load(path, &sc, &err), MR_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "root element is <sdf>"));
  assert_non_null(strstr(err.msg, "MJCF model (<mujoco>)"));
  remove(path);
  cli_write_temp("robot: {name: r\n", ".urdf", path);
  assert_int_equal(mr_scene_load(path, &sc, &err), MR_ERR_PARSE);
  assert_null(strstr(err.msg, "YAML"));
  assert_non_null(strstr(err.msg, path));
  remove(path);
  const char *ref = test_reference_root();
  if (!ref) return;
  char anymal[4200];
  snprintf(anymal, sizeof anymal, "%s/robots/anymal_b_simple_description/robots/anymal.urdf", ref);
  assert_int_equal(mr_scene_load(anymal, &sc, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "inertia_fix"));
  assert_non_null(strstr(err.msg, "a bare URDF: such keys go in a scene file naming it"));
  assert_null(strstr(err.msg, "(default scene):")); /* no position in the generated text */
}

/* the command line: run and check on a bare URDF say what they loaded; view writes its page */
static void test_cli_on_urdf(void **state) {
  const char *ref = test_reference_root();
  if (!ref) skip();
  char args[9000], page[128];
  static char out[1 << 16];
  snprintf(args, sizeof args, "run '%s/robots/a1_description/urdf/a1.urdf' --duration 0.01 --quiet",
           ref);
  if (cli_run(args, 1, out, sizeof out) || !strstr(out, "moreau run: a1.urdf is a URDF robot"))
    fail_msg("moreau %s:\n%s", args, out);
  assert_int_equal(cli_run("check robots/solo12/solo12.urdf", 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "moreau check: solo12.urdf is a URDF robot"));
  snprintf(args, sizeof args, "view robots/solo12/solo12.urdf --duration 0.01 -o %s",
           cli_tmp(page, "solo12.html"));
  if (cli_run(args, 1, out, sizeof out)) fail_msg("moreau %s:\n%s", args, out);
  FILE *f = fopen(page, "r");
  assert_non_null(f);
  fclose(f);
  remove(page);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_solo_default_scene),  cmocka_unit_test(test_ur5_default_scene),
      cmocka_unit_test(test_srdf_package_layout), cmocka_unit_test(test_not_a_scene),
      cmocka_unit_test(test_cli_on_urdf),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
