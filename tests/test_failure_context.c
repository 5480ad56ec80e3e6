/* Numerical failures say where they happened: the LDLᵀ factorisation names the dof's body and
 * joint, a solver's non-finite force names the contact and its component, and moreau run puts
 * the step and the time in front and names the contact's geometries and bodies. */
#include "test_util.h"

#include <string.h>

#include "cli_util.h"
#include "moreau/dynamics.h"
#include "moreau/model.h"

#define OUT 65536

/* a pendulum of two links; M's entry of the elbow dof set to −5: the factorisation (from the
 * last dof up) meets D₁ = −5 first and names the elbow */
static void test_ldlt_names_joint(void **state) {
  mr_model *m = mr_model_create("arm");
  mr_inertia Y = {1.0, mr_v3(0, 0, -0.25), mr_m3_diag(0.01, 0.01, 0.001)};
  mr_error err = {0};
  mr_se3 down = mr_se3_make(mr_m3_identity(), mr_v3(0, 0, -0.5));
  assert_int_equal(mr_model_add_body(m, 0, "shoulder", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 1, 0), "upper", Y, &err),
                   1);
  assert_int_equal(
      mr_model_add_body(m, 1, "elbow", MR_JOINT_REVOLUTE, down, mr_v3(0, 1, 0), "lower", Y, &err),
      2);
  mr_data *d = mr_data_create(m);
  double q[2] = {0.3, -0.2};
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_OK);
  d->M[mr_tri_at(d, 1, 1)] = -5.0;
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_ERR_NUMERIC);
  assert_non_null(strstr(err.msg, "ldlt: pivot -5 of dof 1 (body 'lower', joint 'elbow' "
                                  "coordinate 0 of 1) is not positive"));
  mr_data_free(d);
  mr_model_free(m);
}

/* two arms numbered breadth-first (shoulder 1, shoulder 2, then the first arm's elbow): the
 * first shoulder's subtree {0, 2} is not a contiguous range, so the factorisation walks λ
 * chains (ldlt.c, factor_chains); the elbow's entry set to −5 is met first and named */
static void test_ldlt_chains_names_joint(void **state) {
  mr_model *m = mr_model_create("arms");
  mr_inertia Y = {1.0, mr_v3(0, 0, -0.25), mr_m3_diag(0.01, 0.01, 0.001)};
  mr_error err = {0};
  mr_se3 down = mr_se3_make(mr_m3_identity(), mr_v3(0, 0, -0.5));
  assert_int_equal(mr_model_add_body(m, 0, "shoulder1", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(0, 1, 0), "upper1", Y, &err),
                   1);
  assert_int_equal(mr_model_add_body(m, 0, "shoulder2", MR_JOINT_REVOLUTE, mr_se3_identity(),
                                     mr_v3(1, 0, 0), "upper2", Y, &err),
                   2);
  assert_int_equal(
      mr_model_add_body(m, 1, "elbow", MR_JOINT_REVOLUTE, down, mr_v3(0, 1, 0), "lower", Y, &err),
      3);
  mr_data *d = mr_data_create(m);
  double q[3] = {0.3, 0.1, -0.2};
  mr_crba(m, d, q);
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_OK);
  d->M[mr_tri_at(d, 2, 2)] = -5.0;
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_ERR_NUMERIC);
  assert_non_null(strstr(err.msg, "ldlt: pivot -5 of dof 2 (body 'lower', joint 'elbow' "
                                  "coordinate 0 of 1) is not positive"));
  mr_data_free(d);
  mr_model_free(m);
}

/* a free body: dof 3 is the first angular coordinate of its 6 */
static void test_ldlt_names_free_coordinate(void **state) {
  mr_model *m = mr_model_create("ball");
  mr_inertia Y = {2.0, mr_v3(0, 0, 0), mr_m3_diag(0.1, 0.1, 0.1)};
  mr_error err = {0};
  assert_int_equal(mr_model_add_body(m, 0, "ball_root", MR_JOINT_FREE, mr_se3_identity(),
                                     mr_v3(0, 0, 1), "ball", Y, &err),
                   1);
  mr_data *d = mr_data_create(m);
  double q[7] = {0, 0, 0, 0, 0, 0, 1};
  mr_crba(m, d, q);
  /* M is diag(m, m, m, I) for a body at its centre of mass: D₃ = M₃₃ exactly */
  d->M[mr_tri_at(d, 3, 3)] = -24.0;
  assert_int_equal(mr_ldlt_factor(m, d, &err), MR_ERR_NUMERIC);
  assert_non_null(strstr(err.msg, "pivot -24 of dof 3 (body 'ball', joint 'ball_root' "
                                  "coordinate 3 of 6)"));
  mr_data_free(d);
  mr_model_free(m);
}

/* gravity of 1e308 m/s² overflows the Newton solver's residual in the first step: the run fails
 * with the step, the time, the contact's component and its geometries and bodies */
static void test_run_names_contact(void **state) {
  char scene[64], args[256], out[OUT];
  cli_write_temp("gravity: [0, 0, -1e308]\nbodies:\n"
                 "  - {name: ground, fixed: true, geoms: [{type: halfspace, name: floor}]}\n"
                 "  - {name: ball, mass: 1.0, position: [0, 0, 0.1],"
                 " geoms: [{type: sphere, radius: 0.1, name: shell}]}\n",
                 ".yaml", scene);
  snprintf(args, sizeof args, "run %s --quiet --solver ccp-newton", scene);
  assert_int_equal(cli_run(args, 1, out, sizeof out), 1);
  const char *parts[] = {"moreau run: step 1 (t = 0.001 s): ccp-newton: non-finite contact force "
                         "or velocity at contact 0: lambda_",
                         "[contact 0: geometry 'shell' of body 'ball' against 'floor' of body "};
  for (int k = 0; k < 2; ++k)
    if (!strstr(out, parts[k])) fail_msg("expected '%s' in: %s", parts[k], out);
  remove(scene);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ldlt_names_joint),
      cmocka_unit_test(test_ldlt_chains_names_joint),
      cmocka_unit_test(test_ldlt_names_free_coordinate),
      cmocka_unit_test(test_run_names_contact),
  };
  return cmocka_run_group_tests_name("failure_context", tests, NULL, NULL);
}
