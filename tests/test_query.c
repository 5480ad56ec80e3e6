/* The flat read-outs and checked steps of moreau/query.h: a model's bodies, frames, geometries and
 * limits as the scene built them, the centre-of-mass Jacobian against finite differences, the
 * checks of what a caller writes in place, the user wrench read back, a scene's record options. */
#include "test_util.h"

#include <float.h>
#include <string.h>

#include "moreau/moreau.h"

static mr_world *solo(void) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_stand.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  return w;
}

/* Solo's knee as the URDF writes it (robots/solo12/solo12.urdf: origin 0 0.03745 -0.16, axis
 * y, limits ±10), the foot frame 0.16 m below the lower leg, the foot sphere of radius 0.0191 */
static void test_model_info(void **state) {
  mr_world *w = solo();
  const mr_model *m = mr_world_model(w);
  int b = mr_world_body_index(w, "solo/FL_LOWER_LEG");
  mr_body_info info;
  mr_error err = {0};
  assert_int_equal(mr_model_body_info(m, b, &info, &err), MR_OK);
  assert_int_equal(info.joint_type, MR_JOINT_REVOLUTE);
  assert_string_equal(mr_model_joint_name(m, b), "solo/FL_KFE");
  assert_int_equal(info.idx_v, mr_world_joint_dof(w, "solo/FL_KFE"));
  assert_int_equal(info.nq * info.nv, 1);
  double pos[3] = {0, 0.03745, -0.16}, axis[3] = {0, 1, 0};
  assert_vec_near(info.placement + 9, pos, 3, 0.0);
  assert_vec_near(info.axis, axis, 3, 0.0);
  assert_true(info.mass > 0.03);
  double lower[64], upper[64], effort[64];
  mr_model_get_limits(m, lower, upper, NULL, effort, NULL, NULL);
  assert_near(lower[info.idx_q], -10, 0);
  assert_near(upper[info.idx_q], 10, 0);
  assert_near(effort[info.idx_v], 1000, 0);
  assert_true(isinf(lower[0]) && lower[0] < 0); /* the free-flyer: unlimited */
  int f = mr_model_frame_index(m, "solo/FL_FOOT"), body = -1;
  double X[12];
  assert_string_equal(mr_model_frame_name(m, f), "solo/FL_FOOT");
  assert_int_equal(mr_model_frame_info(m, f, &body, X, &err), MR_OK);
  assert_int_equal(body, b);
  assert_near(X[11], -0.16, 0);
  assert_int_equal(mr_model_nframes(m), m->nframes);
  mr_geom_info g;
  int foot = -1;
  for (int k = 0; k < m->ngeoms; ++k)
    if (!strcmp(mr_world_geom_name(w, k), "solo/FL_foot")) foot = k;
  assert_int_equal(mr_model_geom_info(m, foot, &g, &err), MR_OK);
  assert_int_equal(g.type, MR_GEOM_SPHERE);
  assert_int_equal(g.body, b);
  assert_near(g.size[0], 0.0191, 0);
  /* out of range: an error naming the index, nothing read */
  assert_int_equal(mr_model_body_info(m, m->nbodies, &info, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "body 14 out of range [0, 14)"));
  assert_int_equal(mr_model_frame_info(m, -1, &body, X, &err), MR_ERR_INVALID);
  assert_int_equal(mr_model_geom_info(m, m->ngeoms, &g, &err), MR_ERR_INVALID);
  assert_null(mr_model_joint_name(m, -1));
  mr_world_free(w);
}

/* the centre of mass and its Jacobian: the position is mr_center_of_mass's (the same sum, bit
 * for bit); J v against the central difference along q ⊕ h v (h = 1e-6: truncation h² |c'''|
 * ~ 1e-11, rounding 1e-16 / h ~ 1e-10: 1e-8); the placements read back are the kinematics' */
static void test_com_jacobian(void **state) {
  mr_world *w = solo();
  const mr_model *m = mr_world_model(w);
  mr_data *d = mr_data_create(m);
  int nv = m->nv;
  double q[32], v[32], qp[32], qm[32], J[3 * 32], X[12 * 32];
  uint64_t seed = 7;
  mr_random_configuration(m, &seed, q);
  for (int k = 0; k < nv; ++k)
    v[k] = test_rand(&seed, -1, 1);
  mr_forward_kinematics(m, d, q, NULL, NULL);
  mr_vec3 c = mr_center_of_mass_jacobian(m, d, 1, m->nbodies - 1, J);
  mr_vec3 ref = mr_center_of_mass(m, d, q);
  assert_vec_near(c.v, ref.v, 3, 0.0);
  mr_data_body_placements(d, X);
  assert_vec_near(X + 12 * 3 + 9, d->oMi[3].p.v, 3, 0.0);
  const double h = 1e-6;
  mr_integrate(m, q, v, h, qp);
  mr_integrate(m, q, v, -h, qm);
  mr_vec3 cp = mr_center_of_mass(m, d, qp), cm = mr_center_of_mass(m, d, qm);
  for (int r = 0; r < 3; ++r) {
    double jv = 0.0;
    for (int k = 0; k < nv; ++k)
      jv += J[r * nv + k] * v[k];
    assert_near(jv, (cp.v[r] - cm.v[r]) / (2 * h), 1e-8);
  }
  /* no mass in the range: zero, and a zero Jacobian */
  c = mr_center_of_mass_jacobian(m, d, m->nbodies, 3, J);
  assert_near(c.v[0] + c.v[1] + c.v[2], 0.0, 0.0);
  mr_data_free(d);
  mr_world_free(w);
}

/* a NaN written into a view is refused before the step, naming the entry and its joint; the
 * state is unchanged and, repaired, the simulator steps */
static void test_checked_step(void **state) {
  mr_world *w = solo();
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  assert_int_equal(mr_sim_step_n(s, 3, &err), MR_OK);
  assert_int_equal(mr_sim_steps(s), 3);
  int knee = mr_world_dof_coordinate(w, mr_world_joint_dof(w, "solo/FL_KFE"));
  double before = mr_sim_qpos(s)[knee];
  mr_sim_qpos(s)[knee] = NAN;
  assert_int_equal(mr_sim_step_n(s, 1, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "q[9] = nan (joint 'solo/FL_KFE', coordinate 1 of 1)"));
  assert_int_equal(mr_sim_steps(s), 3);
  mr_sim_qpos(s)[knee] = before;
  mr_sim_ctrl_kp(s)[2] = 1.0; /* a gain on the free-flyer */
  assert_int_equal(mr_sim_check_inputs(s, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "kp[2] = 1 (joint 'solo/root_joint', dof 3 of 6)"));
  mr_sim_ctrl_kp(s)[2] = 0.0;
  mr_sim_ctrl_kd(s)[8] = -0.5;
  assert_int_equal(mr_sim_check_inputs(s, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "is negative"));
  mr_sim_ctrl_kd(s)[8] = 0.5;
  double qw = mr_sim_qpos(s)[6];
  memset(mr_sim_qpos(s) + 3, 0, 4 * sizeof(double));
  assert_int_equal(mr_sim_check_inputs(s, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "quaternion of zero norm"));
  mr_sim_qpos(s)[6] = qw;
  assert_int_equal(mr_sim_step_n(s, -1, &err), MR_ERR_INVALID);
  assert_int_equal(mr_sim_step_n(s, 2, &err), MR_OK);
  assert_int_equal(mr_sim_steps(s), 5);
  mr_sim_free(s);
  mr_world_free(w);
}

/* the user wrench read back; reset and clear remove it; a batch refuses to step when one
 * environment's inputs are bad and steps none */
static void test_wrench_and_batch(void **state) {
  mr_world *w = solo();
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  mr_vec3 f = mr_v3(1, 2, 3), t = mr_v3(4, 5, 6), f2, t2;
  assert_int_equal(mr_sim_set_wrench(s, 1, f, t, &err), MR_OK);
  assert_int_equal(mr_sim_get_wrench(s, 1, &f2, &t2, &err), MR_OK);
  assert_vec_near(f2.v, f.v, 3, 0.0);
  assert_vec_near(t2.v, t.v, 3, 0.0);
  mr_sim_reset(s);
  assert_int_equal(mr_sim_get_wrench(s, 1, &f2, &t2, &err), MR_OK);
  assert_near(f2.v[0] + t2.v[2], 0.0, 0.0);
  assert_int_equal(mr_sim_get_wrench(s, 0, &f2, &t2, &err), MR_ERR_INVALID);
  mr_sim_free(s);
  mr_batch *b = mr_batch_create(w, 3, 2, NULL, &err);
  mr_sim_qvel(mr_batch_sim(b, 2))[1] = INFINITY;
  assert_int_equal(mr_batch_step_checked(b, 4, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "environment 2: v[1] = inf"));
  for (int i = 0; i < 3; ++i)
    assert_int_equal(mr_sim_steps(mr_batch_sim(b, i)), 0);
  mr_sim_qvel(mr_batch_sim(b, 2))[1] = 0.0;
  assert_int_equal(mr_batch_step_checked(b, 4, &err), MR_OK);
  assert_int_equal(mr_sim_steps(mr_batch_sim(b, 2)), 4);
  /* no steps: only the check */
  assert_int_equal(mr_batch_step_checked(b, 0, &err), MR_OK);
  assert_int_equal(mr_sim_steps(mr_batch_sim(b, 0)), 4);
  assert_int_equal(mr_batch_step_checked(b, -1, &err), MR_ERR_INVALID);
  mr_batch_free(b);
  mr_world_free(w);
}

/* the record block of a scene: b8_allegro_hold records contacts and solver figures; the
 * defaults elsewhere (every 1, energy and solver figures on, the rest off) */
static void test_record_options(void **state) {
  mr_error err = {0};
  mr_record_options r;
  mr_world *w = mr_world_load_recorded("scenes/b8_allegro_hold.yaml", &r, &err);
  assert_non_null(w);
  assert_int_equal(r.every, 1);
  assert_int_equal(r.contact_forces, 1);
  assert_int_equal(r.solver_stats, 1);
  mr_world_free(w);
  w = mr_world_load_recorded("scenes/solo_stand.yaml", &r, &err);
  assert_int_equal(r.energy + r.solver_stats + r.every, 3);
  assert_int_equal(r.poses + r.com + r.world_velocity + r.contact_forces, 0);
  mr_world_free(w);
  assert_null(mr_world_load_recorded("scenes/none.yaml", &r, &err));
  assert_non_null(strstr(err.msg, "scenes/none.yaml"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model_info),     cmocka_unit_test(test_com_jacobian),
      cmocka_unit_test(test_checked_step),   cmocka_unit_test(test_wrench_and_batch),
      cmocka_unit_test(test_record_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
