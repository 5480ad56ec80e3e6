/* Per-joint PD gains and armature in a scene's robot entries: one number for every 1-dof joint
 * or a map joint name → value; errors name the file, line and joint. */
#include "test_util.h"

#include <string.h>

#include "moreau/dynamics.h"
#include "moreau/scene.h"
#include "moreau/world.h"

#define SOLO                                                                                       \
  "robots:\n"                                                                                      \
  "  - name: solo\n"                                                                               \
  "    urdf: robots/solo12/solo12.urdf\n"                                                          \
  "    floating: true\n"

static mr_status parse(const char *text, mr_scene *sc, mr_error *err) {
  return mr_scene_parse(text, "gains.yaml", ".", sc, err);
}

/* the robot-local dof of a joint */
static int dof(const mr_scene *sc, const char *joint) {
  mr_world w = {.model = sc->model};
  return mr_world_joint_dof(&w, joint) - sc->robots[0].idx_v;
}

static void test_gain_maps(void **state) {
  mr_scene sc;
  mr_error err = {0};
  if (parse(SOLO "    pd: {kp: {FL_KFE: 5.0, HR_HAA: 2.5}, kd: 0.3}\n", &sc, &err))
    fail_msg("%s", err.msg);
  const mr_scene_robot *r = &sc.robots[0];
  assert_near(r->kp[dof(&sc, "solo/FL_KFE")], 5.0, 0);
  assert_near(r->kp[dof(&sc, "solo/HR_HAA")], 2.5, 0);
  assert_near(r->kp[dof(&sc, "solo/FL_HFE")], 0.0, 0); /* not named: no stiffness */
  assert_near(r->kd[dof(&sc, "solo/FR_HFE")], 0.3, 0);
  for (int k = 0; k < 6; ++k) /* the free-flyer carries no gain */
    assert_near(r->kp[k] + r->kd[k], 0.0, 0);
  mr_scene_free(&sc);
}

static void test_gain_errors(void **state) {
  mr_scene sc;
  mr_error err = {0};
  assert_int_equal(parse(SOLO "    pd: {kp: {FL_KNEE: 5.0}}\n", &sc, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "gains.yaml:5:"));
  assert_non_null(strstr(err.msg, "'FL_KNEE'"));
  assert_non_null(strstr(err.msg, "did you mean 'FL_KFE'"));
  assert_int_equal(parse(SOLO "    pd: {kp: 1.0, kd: {FL_KFE: -0.1}}\n", &sc, &err),
                   MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "kd.FL_KFE"));
  assert_non_null(strstr(err.msg, "-0.1"));
  assert_int_equal(parse(SOLO "    armature: [1, 2]\n", &sc, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "armature"));
}

/* M(q) of a scene at its initial configuration, nv x nv, into a malloc'ed array */
static double *mass_matrix(const mr_scene *sc) {
  mr_data *d = mr_data_create(sc->model);
  mr_crba(sc->model, d, sc->q0);
  size_t n = (size_t)sc->model->nv * (size_t)sc->model->nv;
  double *out = malloc(n * sizeof *out);
  mr_mass_dense(d, out);
  mr_data_free(d);
  return out;
}

/* armature adds to the diagonal of M (CRBA) on the named dofs only: the difference to the same
 * robot without armature is the armature to rounding (|M_kk| < 1: 1e-15), elsewhere exactly 0 */
static void test_armature(void **state) {
  mr_scene a, b, c;
  mr_error err = {0};
  if (parse(SOLO, &a, &err) || parse(SOLO "    armature: {FL_KFE: 0.02}\n", &b, &err) ||
      parse(SOLO "    armature: 0.01\n", &c, &err))
    fail_msg("%s", err.msg);
  int nv = a.model->nv, knee = a.robots[0].idx_v + dof(&a, "solo/FL_KFE");
  double *Ma = mass_matrix(&a), *Mb = mass_matrix(&b), *Mc = mass_matrix(&c);
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) {
      size_t k = (size_t)i * nv + j;
      double want_b = i == j && i == knee ? 0.02 : 0.0;
      double want_c = i == j && i >= 6 ? 0.01 : 0.0; /* every joint but the free-flyer */
      assert_near(Mb[k] - Ma[k], want_b, 1e-15);
      assert_near(Mc[k] - Ma[k], want_c, 1e-15);
    }
  assert_near(b.model->armature[knee], 0.02, 0);
  free(Ma), free(Mb), free(Mc);
  mr_scene_free(&a), mr_scene_free(&b), mr_scene_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gain_maps),
      cmocka_unit_test(test_gain_errors),
      cmocka_unit_test(test_armature),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
