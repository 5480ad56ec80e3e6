/* The hand-written gripper of tests/fixtures/gripper (a robot no collection contains): a world
 * root, a Collada palm mesh in centimetres, and a right finger that mimics the left one. It
 * loads, its mesh has the file's size in metres, and under a closing force on the left finger
 * alone both fingers close together as one body of twice a finger's mass. */
#include "cli_util.h"

#include "moreau/scene.h"
#include "moreau/sim.h"

/* the scene, loaded from the repository root (as make test runs) */
static void load(mr_scene *s) {
  mr_error err;
  if (mr_scene_load("tests/fixtures/gripper/gripper.yaml", s, &err)) fail_msg("%s", err.msg);
}

/* a one-link arm whose link's inertia breaks A + B >= C (principal moments 1, 1, 3) */
static const char bad_inertia[] =
    "<robot name=\"bad\"><link name=\"base\"/>\n"
    "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/><child link=\"arm\"/>"
    "<axis xyz=\"0 0 1\"/></joint>\n"
    "<link name=\"arm\"><inertial><mass value=\"1\"/>\n"
    "<inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"3\"/></inertial></link>"
    "</robot>\n";

/* the inertia policy at the command line and in scenes: refused with the URDF line and the fix
 * named, repaired with --inertia-fix / inertia_fix: true and a warning; rbd notes a --floating
 * it ignores on the world-rooted gripper */
static void test_repairs_cli(void **state) {
  char urdf[64], scene[64], args[512], out[8192];
  cli_write_temp(bad_inertia, ".urdf", urdf);
  snprintf(args, sizeof args, "rbd %s", urdf);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, ":4: link \"arm\": inertia breaks the triangle inequality"));
  assert_non_null(strstr(out, "--inertia-fix"));
  snprintf(args, sizeof args, "rbd %s --inertia-fix", urdf);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "moreau rbd: warning: "));
  assert_non_null(strstr(out, "principal moments 1.33333, 1.33333, 2.66667"));
  char text[256];
  snprintf(text, sizeof text, "robots:\n  - name: b\n    urdf: %s\n", urdf);
  cli_write_temp(text, ".yaml", scene);
  snprintf(args, sizeof args, "check %s", scene);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 2);
  assert_non_null(strstr(out, ":3:11: 'urdf': "));
  assert_non_null(strstr(out, "set 'inertia_fix: true' on the scene's robot"));
  snprintf(text, sizeof text, "robots:\n  - name: b\n    urdf: %s\n    inertia_fix: true\n", urdf);
  FILE *f = fopen(scene, "w");
  fputs(text, f);
  fclose(f);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 0);
  assert_non_null(strstr(out, "1 warning(s), the last: "));
  assert_int_equal(cli_run("rbd tests/fixtures/gripper/gripper.urdf --floating", 1, out, sizeof out),
                   0);
  assert_non_null(strstr(out, "the floating option is ignored"));
  remove(urdf), remove(scene);
}

/* the model: world root (the palm is fixed: nq = nv = 2), one coupling, the palm mesh 8 x 6 x 4
 * cm from a file in centimetres; assimp stores floats, so the extents hold to 2^-24 relative */
static void test_gripper_model(void **state) {
  mr_scene s;
  load(&s);
  const mr_model *m = s.model;
  assert_int_equal(m->nq, 2);
  assert_int_equal(m->nmimics, 1);
  assert_string_equal(m->bodies[m->mimics[0].follower].joint.name, "gripper/right_finger_joint");
  assert_string_equal(m->bodies[m->mimics[0].leader].joint.name, "gripper/left_finger_joint");
  const mr_geom *g = &m->geoms[0];
  assert_int_equal(g->type, MR_GEOM_MESH);
  double lo[3] = {1, 1, 1}, hi[3] = {-1, -1, -1}, size[3] = {0.08, 0.06, 0.04};
  for (int i = 0; i < g->mesh->nhull; ++i)
    for (int k = 0; k < 3; ++k)
      lo[k] = fmin(lo[k], g->mesh->hull[3 * i + k]), hi[k] = fmax(hi[k], g->mesh->hull[3 * i + k]);
  for (int k = 0; k < 3; ++k)
    assert_near(hi[k] - lo[k], size[k], 2 * 6e-8 * size[k]);
  assert_near(lo[2], 0.0, 0.0);
  mr_scene_free(&s);
}

/* F = 1 N on the left finger joint only. With q_r = q_l the system is one prismatic dof of mass
 * m_l + m_r = 0.2 kg, so a = F / 0.2 = 5 m/s² and the semi-implicit Euler step gives exactly
 * v_n = n a Δt, q_n = a Δt² n (n + 1) / 2 (fingers along y, gravity along the fixed z). The
 * coupling row is solved to the solver's eps_abs = 1e-6 (force units, i.e. 1e-6 Δt = 1e-9 m/s
 * of velocity error per step, the position error of the previous step removed by the Baumgarte
 * term): over 50 steps the fingers agree, and follow the closed form, to 50 · 1e-9 · Δt = 5e-11
 * m; 1e-10 m is asked. The 50 steps stay before the upper limit (q_50 = 6.4 mm < 20 mm). */
static void test_gripper_closes(void **state) {
  mr_scene s;
  load(&s);
  mr_error err;
  mr_sim *sim = mr_sim_from_scene(&s, NULL, &err);
  if (!sim) fail_msg("%s", err.msg);
  const double a = 1.0 / 0.2, dt = s.timestep;
  for (int n = 1; n <= 50; ++n) {
    if (mr_sim_step(sim, &err)) fail_msg("step %d: %s", n, err.msg);
    const double *q = mr_sim_q(sim);
    assert_near(q[0], a * dt * dt * n * (n + 1) / 2.0, 1e-10);
    assert_near(q[1], q[0], 1e-10);
  }
  assert_true(mr_sim_q(sim)[1] > 6e-3); /* the follower moved: 6.4 mm */
  mr_sim_free(sim);
  mr_scene_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gripper_model),
      cmocka_unit_test(test_gripper_closes),
      cmocka_unit_test(test_repairs_cli),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
