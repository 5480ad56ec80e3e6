/* The compiled world (world.h): a deep, independent copy of a scene that simulators only read.
 * A world outlives its scene, a scene changed after compiling has no effect on it, a copied
 * model is the same model, and the step's sources never reach into the loader. */
#include "test_util.h"

#include <string.h>

#include "moreau/scene.h"
#include "moreau/sim.h"
#include "moreau/world.h"
#include "sim_util.h"

/* a simulator on w, with a failed test on error */
static mr_sim *world_sim(const mr_world *w) {
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  if (!s) fail_msg("simulator: %s", err.msg);
  return s;
}

/* the world keeps everything once the scene is freed: stepping it is bitwise the run of a
 * simulator made from a fresh scene (same inputs, same operations: DESIGN.md determinism) */
static void test_world_outlives_scene(void **state) {
  mr_scene sc = tsim_load("scenes/b9_solo_trot.yaml");
  mr_error err = {0};
  mr_world *w = mr_scene_compile(&sc, &err);
  assert_non_null(w);
  mr_scene_free(&sc);
  mr_sim *a = world_sim(w);
  mr_scene fresh = tsim_load("scenes/b9_solo_trot.yaml");
  mr_sim *b = tsim_create(&fresh, NULL);
  tsim_steps(a, 300);
  tsim_steps(b, 300);
  assert_memory_equal(mr_sim_q(a), mr_sim_q(b), (size_t)w->model->nq * sizeof(double));
  assert_memory_equal(mr_sim_v(a), mr_sim_v(b), (size_t)w->model->nv * sizeof(double));
  mr_sim_free(a);
  mr_sim_free(b);
  mr_scene_free(&fresh);
  mr_world_free(w);
}

/* a scene edited after mr_sim_from_scene does not reach the simulator: its world is a copy */
static void test_scene_edits_after_creation_do_not_leak(void **state) {
  mr_scene sc = tsim_load("scenes/solo_stand.yaml");
  mr_sim *a = tsim_create(&sc, NULL);
  mr_scene ref = tsim_load("scenes/solo_stand.yaml");
  mr_sim *b = tsim_create(&ref, NULL);
  for (int k = 0; k < sc.robots[0].nv; ++k)
    sc.robots[0].kp[k] = 0.0, sc.robots[0].torque[k] = 5.0;
  sc.timestep = 0.01;
  tsim_steps(a, 100);
  tsim_steps(b, 100);
  assert_memory_equal(mr_sim_q(a), mr_sim_q(b), (size_t)sc.model->nq * sizeof(double));
  mr_sim_free(a);
  mr_sim_free(b);
  mr_scene_free(&sc);
  mr_scene_free(&ref);
}

/* mr_model_copy: same sizes, names, joints, inertias, limits and geometries (meshes by value) */
static void test_model_copy_is_identical(void **state) {
  mr_scene sc = tsim_load("scenes/talos_stand.yaml");
  mr_error err = {0};
  const mr_model *m = sc.model;
  mr_model *c = mr_model_copy(m, &err);
  assert_non_null(c);
  assert_int_equal(c->nq, m->nq);
  assert_int_equal(c->nv, m->nv);
  assert_int_equal(c->nbodies, m->nbodies);
  assert_int_equal(c->nframes, m->nframes);
  assert_int_equal(c->ngeoms, m->ngeoms);
  assert_memory_equal(c->bodies, m->bodies, (size_t)m->nbodies * sizeof *m->bodies);
  assert_memory_equal(c->frames, m->frames, (size_t)m->nframes * sizeof *m->frames);
  assert_memory_equal(c->lower, m->lower, (size_t)m->nq * sizeof(double));
  assert_memory_equal(c->effort_limit, m->effort_limit, (size_t)m->nv * sizeof(double));
  assert_memory_equal(c->armature, m->armature, (size_t)m->nv * sizeof(double));
  for (int g = 0; g < m->ngeoms; ++g) {
    assert_string_equal(c->geoms[g].name, m->geoms[g].name);
    assert_int_equal(c->geoms[g].body, m->geoms[g].body);
    if (!m->geoms[g].mesh) continue;
    assert_ptr_not_equal(c->geoms[g].mesh, m->geoms[g].mesh);
    assert_int_equal(c->geoms[g].mesh->nhull, m->geoms[g].mesh->nhull);
    assert_memory_equal(c->geoms[g].mesh->hull, m->geoms[g].mesh->hull,
                        (size_t)m->geoms[g].mesh->nhull * 3 * sizeof(double));
  }
  mr_model_free(c);
  mr_scene_free(&sc);
}

/* names: robots, 1-dof joints (as dofs), bodies and SRDF postures */
static void test_world_names(void **state) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_stand.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  int r = mr_world_robot_index(w, "solo");
  assert_int_equal(r, 0);
  assert_int_equal(mr_world_robot_index(w, "nobody"), -1);
  int dof = mr_world_joint_dof(w, "solo/FL_KFE");
  assert_true(dof >= w->robots[0].idx_v && dof < w->robots[0].idx_v + w->robots[0].nv);
  assert_string_equal(w->model->bodies[w->model->dof_body[dof]].joint.name, "solo/FL_KFE");
  assert_int_equal(mr_world_joint_dof(w, "solo/root_joint"), -1); /* 6 dofs: not a joint dof */
  assert_int_equal(mr_world_joint_dof(w, "FL_KFE"), -1);          /* names carry the robot */
  int iq = mr_world_dof_coordinate(w, dof);
  assert_int_equal(w->model->bodies[w->model->dof_body[dof]].joint.idx_q, iq);
  assert_true(mr_world_body_index(w, "solo/base_link") > 0);
  assert_non_null(mr_world_posture_find(w, r, "standing"));
  assert_non_null(mr_world_posture_find(w, r, "straight_standing"));
  assert_null(mr_world_posture_find(w, r, "sitting"));
  mr_world_free(w);
}

/* a missing file is an error naming it, not a crash; so is a world without a model */
static void test_world_load_error(void **state) {
  mr_error err = {0};
  assert_null(mr_world_load("scenes/no_such_scene.yaml", &err));
  assert_non_null(strstr(err.msg, "no_such_scene.yaml"));
  mr_world empty = {0};
  assert_null(mr_world_copy(&empty, &err));
  assert_int_equal(err.status, MR_ERR_INVALID);
}

/* the step (src/integrate) and the world (src/model) never include the loader (src/io) */
static void test_step_does_not_include_the_loader(void **state) {
  const char *files[] = {"src/integrate/sim.c",          "src/integrate/control.c",
                         "src/integrate/sim_internal.h", "src/model/world.c",
                         "include/moreau/sim.h",         "include/moreau/control.h",
                         "include/moreau/world.h"};
  for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
    FILE *f = fopen(files[k], "r");
    if (!f) fail_msg("cannot open %s", files[k]);
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "#include", 8)) continue;
      if (strstr(line, "io/") || strstr(line, "moreau/scene.h"))
        fail_msg("%s includes the loader: %s", files[k], line);
    }
    fclose(f);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_world_outlives_scene),
      cmocka_unit_test(test_scene_edits_after_creation_do_not_leak),
      cmocka_unit_test(test_model_copy_is_identical),
      cmocka_unit_test(test_world_names),
      cmocka_unit_test(test_world_load_error),
      cmocka_unit_test(test_step_does_not_include_the_loader),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
