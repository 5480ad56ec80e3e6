/* The control API (control.h): changes made between two steps act at the next one and equal
 * the same controls given in the scene; state writes, wrenches, resets, read-outs (contacts,
 * contact wrenches, poses, centre of mass); one world shared by simulators, also across
 * threads, gives the runs of separate worlds bit for bit; bad values are errors. */
#include "test_util.h"

#include <float.h>
#include <pthread.h>
#include <string.h>

#include "moreau/control.h"
#include "moreau/scene.h"
#include "moreau/world.h"
#include "sim_util.h"

/* a fixed-base Solo-12 hanging in the air (no contact), so that only the controls act */
#define SOLO_AIR                                                                                   \
  "timestep: 0.001\n"                                                                              \
  "robots:\n"                                                                                      \
  "  - name: solo\n"                                                                               \
  "    urdf: robots/solo12/solo12.urdf\n"                                                          \
  "    position: [0, 0, 1.0]\n"

static mr_world *world_of(const char *text) {
  mr_scene sc = tsim_parse(text, ".");
  mr_error err = {0};
  mr_world *w = mr_scene_compile(&sc, &err);
  mr_scene_free(&sc);
  if (!w) fail_msg("compile: %s", err.msg);
  return w;
}

static mr_sim *sim_of(const mr_world *w) {
  mr_error err = {0};
  mr_sim *s = mr_sim_create(w, NULL, &err);
  if (!s) fail_msg("simulator: %s", err.msg);
  return s;
}

static void assert_same_state(const mr_sim *a, const mr_sim *b) {
  const mr_model *m = mr_sim_model(a);
  assert_memory_equal(mr_sim_q(a), mr_sim_q(b), (size_t)m->nq * sizeof(double));
  assert_memory_equal(mr_sim_v(a), mr_sim_v(b), (size_t)m->nv * sizeof(double));
}

static void ok(mr_status st, const mr_error *err) {
  if (st) fail_msg("%s", err->msg);
}

/* torques set after creation act at the next step, exactly as the scene's torques key does
 * (same arithmetic, so bitwise); without them the run differs */
static void test_torque_after_creation(void **state) {
  mr_world *w = world_of(SOLO_AIR);
  mr_world *wt = world_of(SOLO_AIR "    torques: {FL_KFE: 0.4, HR_HAA: -0.2}\n");
  mr_sim *a = sim_of(w), *b = sim_of(wt), *c = sim_of(w);
  mr_error err = {0};
  tsim_steps(a, 10), tsim_steps(b, 10), tsim_steps(c, 10);
  assert_same_state(a, c);
  /* the scene's torques act from step 1: give a the same from step 1 of a fresh run */
  mr_sim_reset(a), mr_sim_reset(b), mr_sim_reset(c);
  ok(mr_sim_set_joint_torque_named(a, "solo/FL_KFE", 0.4, &err), &err);
  int dof = mr_world_joint_dof(w, "solo/HR_HAA");
  ok(mr_sim_set_joint_torque(a, dof, -0.2, &err), &err);
  tsim_steps(a, 50), tsim_steps(b, 50), tsim_steps(c, 50);
  assert_same_state(a, b);
  assert_true(memcmp(mr_sim_q(a), mr_sim_q(c), sizeof(double) * (size_t)w->model->nq) != 0);
  /* the commanded vector is a view: writing it is the same as the setter */
  mr_sim_reset(c);
  mr_sim_ctrl_torque(c)[mr_world_joint_dof(w, "solo/FL_KFE")] = 0.4;
  mr_sim_ctrl_torque(c)[dof] = -0.2;
  tsim_steps(c, 50);
  assert_same_state(a, c);
  mr_sim_free(a), mr_sim_free(b), mr_sim_free(c);
  mr_world_free(w), mr_world_free(wt);
}

/* PD gains and targets set per joint by name equal the scene's pd block */
static void test_pd_by_name_equals_scene(void **state) {
  mr_world *w = world_of(SOLO_AIR);
  mr_world *wp = world_of(SOLO_AIR "    pd: {kp: 3.0, kd: 0.1, targets: {FL_KFE: -1.0}}\n");
  mr_sim *a = sim_of(w), *b = sim_of(wp);
  mr_error err = {0};
  const char *legs[] = {"FL", "FR", "HL", "HR"}, *joints[] = {"HAA", "HFE", "KFE"};
  for (int l = 0; l < 4; ++l)
    for (int j = 0; j < 3; ++j) {
      char name[64];
      snprintf(name, sizeof name, "solo/%s_%s", legs[l], joints[j]);
      ok(mr_sim_set_joint_gains_named(a, name, 3.0, 0.1, &err), &err);
    }
  ok(mr_sim_set_joint_target_named(a, "solo/FL_KFE", -1.0, &err), &err);
  tsim_steps(a, 200), tsim_steps(b, 200);
  assert_same_state(a, b);
  mr_sim_free(a), mr_sim_free(b);
  mr_world_free(w), mr_world_free(wp);
}

/* one step from a written state: semi-implicit Euler of a free body in gravity is exact,
 * x⁺ = x + Δt v⁺ and v⁺ = v − g Δt e_z, up to one rounding per operation: two operations on
 * each, so 4 ulp of the result's magnitude (|x| ≤ 5, |t| ≤ 3) */
static void test_state_write(void **state) {
  mr_world *w = world_of("timestep: 0.001\n"
                         "bodies: [{name: ball, mass: 2.0, position: [0, 0, 10],\n"
                         "          geoms: [{type: sphere, radius: 0.1}]}]\n");
  mr_sim *s = sim_of(w);
  mr_error err = {0};
  double q[7] = {1.0, 2.0, 5.0, 0, 0, 0, 2.0}, v[6] = {0.5, 0, 0, 0, 0, 0};
  ok(mr_sim_set_state(s, q, v, &err), &err);
  assert_near(mr_sim_qpos(s)[6], 1.0, 0); /* quaternion (0, 0, 0, 2) normalised */
  mr_sim_set_time(s, 3.0);
  tsim_steps(s, 1);
  double dt = 1e-3, vz = -9.81 * dt;
  assert_near(mr_sim_q(s)[0], 1.0 + dt * 0.5, 4 * DBL_EPSILON * 1.0);
  assert_near(mr_sim_q(s)[2], 5.0 + dt * vz, 4 * DBL_EPSILON * 5.0);
  assert_near(mr_sim_v(s)[2], vz, 4 * DBL_EPSILON * fabs(vz));
  assert_near(mr_sim_time(s), 3.0 + dt, 4 * DBL_EPSILON * 3.0);
  /* the views write the state too */
  mr_sim_qvel(s)[1] = 2.0;
  tsim_steps(s, 1);
  assert_near(mr_sim_v(s)[1], 2.0, 0);
  /* bad values are refused, the state unchanged */
  double bad[7] = {0, 0, NAN, 0, 0, 0, 1};
  assert_int_equal(mr_sim_set_state(s, bad, NULL, &err), MR_ERR_INVALID);
  double zero_quat[7] = {0, 0, 1, 0, 0, 0, 0};
  assert_int_equal(mr_sim_set_state(s, zero_quat, NULL, &err), MR_ERR_INVALID);
  assert_true(isfinite(mr_sim_q(s)[2]));
  mr_sim_free(s);
  mr_world_free(w);
}

/* a wrench set through the API equals the scene's constant force; a force alone on a free
 * body without gravity gives v_k = k Δt F/m exactly up to rounding (k = 100 additions, each
 * rounded to half an ulp of v ≤ 0.2, plus one of Δt F/m: 101 ulp of 0.2;
 * with a torque too the body turns and the local-frame velocity has no such closed form) */
static void test_wrench(void **state) {
  const char *base = "timestep: 0.001\n"
                     "gravity: [0, 0, 0]\n"
                     "bodies: [{name: ball, mass: 2.0, position: [0, 0, 1],\n"
                     "          geoms: [{type: sphere, radius: 0.1}]}]\n";
  char forced[1024];
  snprintf(forced, sizeof forced,
           "%sforces: [{body: ball, type: constant, force: [4, 0, 0], "
           "torque: [0, 0, 0.3]}]\n",
           base);
  mr_world *w = world_of(base), *wf = world_of(forced);
  mr_sim *a = sim_of(w), *b = sim_of(wf), *c = sim_of(w);
  mr_error err = {0};
  int ball = mr_world_body_index(w, "ball");
  ok(mr_sim_set_wrench(a, ball, mr_v3(4, 0, 0), mr_v3(0, 0, 0.3), &err), &err);
  ok(mr_sim_set_wrench(c, ball, mr_v3(4, 0, 0), mr_v3_zero(), &err), &err);
  tsim_steps(a, 100), tsim_steps(b, 100), tsim_steps(c, 100);
  assert_same_state(a, b);
  assert_near(mr_sim_v(c)[0], 100 * 1e-3 * 4.0 / 2.0, 101 * DBL_EPSILON * 0.2);
  mr_sim_clear_wrenches(c);
  double v0 = mr_sim_v(c)[0];
  tsim_steps(c, 10);
  assert_near(mr_sim_v(c)[0], v0, 0);
  assert_int_equal(mr_sim_set_wrench(a, 0, mr_v3(1, 0, 0), mr_v3_zero(), &err), MR_ERR_INVALID);
  mr_sim_free(a), mr_sim_free(b), mr_sim_free(c);
  mr_world_free(w), mr_world_free(wf);
}

/* reset replays a run bitwise; a posture reset puts the robot's q and targets at the SRDF
 * posture, and unknown names are errors listing what exists */
static void test_resets(void **state) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_stand.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  mr_sim *s = sim_of(w), *fresh = sim_of(w);
  ok(mr_sim_set_joint_torque_named(s, "solo/FL_HAA", 1.0, &err), &err);
  tsim_steps(s, 100);
  mr_sim_reset(s);
  tsim_steps(s, 100), tsim_steps(fresh, 100);
  assert_same_state(s, fresh);
  ok(mr_sim_reset_posture(s, "solo", "straight_standing", &err), &err);
  const mr_world_posture *p = mr_world_posture_find(w, 0, "straight_standing");
  const mr_world_robot *r = &w->robots[0];
  assert_memory_equal(mr_sim_q(s) + r->idx_q, p->q, (size_t)r->nq * sizeof(double));
  assert_memory_equal(mr_sim_ctrl_target(s) + r->idx_q, p->q, (size_t)r->nq * sizeof(double));
  assert_near(mr_sim_time(s), 0.0, 0);
  int hip = mr_world_dof_coordinate(w, mr_world_joint_dof(w, "solo/FL_HAA"));
  assert_near(mr_sim_q(s)[hip], 0.0, 0); /* straight: no abduction; "standing" has 0.1 rad */
  assert_near(w->q0[hip], 0.1, 0);
  assert_int_equal(mr_sim_reset_posture(s, "solo", "sitting", &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "straight_standing"));
  assert_int_equal(mr_sim_reset_posture(s, "talos", "standing", &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "solo"));
  mr_sim_free(s), mr_sim_free(fresh);
  mr_world_free(w);
}

/* a box resting on the ground: its contact wrench carries its weight, Σ f = (0, 0, m g), with
 * no moment about its origin (its centre of mass). At rest and in static equilibrium each of
 * the nc = 4 contact forces is within the solver's ε = 1e-6 N (NCP criterion, force units) of
 * an exact equilibrium solution, so Σ f is within nc ε of (0, 0, m g) (measured 2.8e-7 N after
 * 500 steps) and the moment within nc ε times the corners' lever arm |(0.2, 0.15)| = 0.25 m */
static void test_contact_read_outs(void **state) {
  mr_world *w = world_of("timestep: 0.001\n"
                         "contact: {margin: 0.001}\n"
                         "solver: {max_iter: 2000}\n"
                         "bodies:\n"
                         "  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
                         "  - name: box\n"
                         "    mass: 2.0\n"
                         "    position: [0, 0, 0.05]\n"
                         "    geoms: [{type: box, size: [0.4, 0.3, 0.1]}]\n");
  mr_sim *s = sim_of(w);
  tsim_steps(s, 500);
  double mg = 2.0 * 9.81, tol = 4 * 1e-6;
  int box = mr_world_body_index(w, "box");
  const mr_force *fw = mr_sim_contact_wrenches(s);
  assert_near(fw[box].f.v[2], mg, tol);
  assert_near(fw[box].f.v[0], 0.0, tol);
  assert_near(fw[box].f.v[1], 0.0, tol);
  for (int k = 0; k < 3; ++k)
    assert_near(fw[box].n.v[k], 0.0, 0.25 * tol);
  /* the ground (body 0) takes the opposite force: the same 4 terms of at most m g summed with
   * the other sign, so they differ by the sums' rounding, 4 ulp of m g */
  const double ulp_mg = DBL_EPSILON * mg;
  assert_near(fw[0].f.v[2], -fw[box].f.v[2], 4 * ulp_mg);
  /* the contact list: 4 corners, forces in the world frame equal to C λ, summing to f */
  mr_contact_force c[8];
  int n = mr_sim_contact_forces(s, c, 8);
  assert_int_equal(n, 4);
  double fz = 0.0;
  for (int i = 0; i < n; ++i) {
    fz += c[i].body[0] == box ? c[i].force.v[2] : -c[i].force.v[2];
    /* flat ground: n = ±e_z up to the rounding of the box's normalised rotation (1 ulp), and
     * f_z = λ_N up to the rounding of C λ (the tangents' z components are ulps, |λ_T| ≤ μ λ_N) */
    assert_near(fabs(c[i].normal.v[2]), 1.0, DBL_EPSILON);
    assert_near(fabs(c[i].force.v[2]), c[i].lambda[2], 3 * ulp_mg);
  }
  assert_near(fz, fw[box].f.v[2], 4 * ulp_mg); /* the same four terms, another order */
  assert_int_equal(mr_sim_contact_forces(s, NULL, 0), 4);
  mr_sim_free(s);
  mr_world_free(w);
}

/* body poses and the centre of mass against the free-flyer's q and mr_center_of_mass */
static void test_poses_and_com(void **state) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_stand.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  mr_sim *s = sim_of(w);
  tsim_steps(s, 50);
  const mr_se3 *X = mr_sim_body_poses(s);
  int base = mr_world_body_index(w, "solo/base_link");
  for (int k = 0; k < 3; ++k)
    assert_near(X[base].p.v[k], mr_sim_q(s)[w->robots[0].idx_q + k], 0);
  mr_data *d = mr_data_create(w->model);
  mr_vec3 c = mr_center_of_mass(w->model, d, mr_sim_q(s));
  mr_vec3 cr = mr_sim_com(s, 0), ca = mr_sim_com(s, -1);
  /* the robot is all the mass: the two sums differ by rounding only (1e-15 m per body) */
  for (int k = 0; k < 3; ++k) {
    assert_near(cr.v[k], c.v[k], 1e-14);
    assert_near(ca.v[k], c.v[k], 1e-14);
  }
  mr_data_free(d);
  mr_sim_free(s);
  mr_world_free(w);
}

/* setters refuse what they cannot apply; on a floating base a joint's dof (index into v) and
 * coordinate (index into q) differ, and each setter writes the right one */
static void test_control_errors(void **state) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_stand.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  mr_sim *s = sim_of(w);
  int knee = mr_world_joint_dof(w, "solo/FL_KFE"), iq = mr_world_dof_coordinate(w, knee);
  assert_int_equal(iq, knee + 1); /* 7 free-flyer coordinates, 6 dofs */
  double before = mr_sim_ctrl_target(s)[knee];
  ok(mr_sim_set_joint_target(s, knee, -1.2, &err), &err);
  ok(mr_sim_set_joint_gains(s, knee, 7.0, 0.2, &err), &err);
  assert_near(mr_sim_ctrl_target(s)[iq], -1.2, 0);
  assert_near(mr_sim_ctrl_target(s)[knee], before, 0);
  assert_near(mr_sim_ctrl_kp(s)[knee], 7.0, 0);
  assert_near(mr_sim_ctrl_kd(s)[knee], 0.2, 0);
  assert_int_equal(mr_sim_set_joint_gains(s, 0, 1.0, 0.1, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "root_joint"));
  assert_int_equal(mr_sim_set_joint_torque_named(s, "FL_KFE", 1.0, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "'FL_KFE'"));
  assert_int_equal(mr_sim_set_joint_torque(s, 99, 1.0, &err), MR_ERR_INVALID);
  assert_int_equal(mr_sim_set_joint_target(s, 7, NAN, &err), MR_ERR_INVALID);
  assert_int_equal(mr_sim_set_joint_gains(s, 7, -1.0, 0.0, &err), MR_ERR_INVALID);
  assert_int_equal(mr_sim_set_joint_torque(s, 7, INFINITY, &err), MR_ERR_INVALID);
  mr_sim_free(s);
  mr_world_free(w);
}

/* the SRDF postures of the reference Solo-12 (example-robot-data's solo.srdf, named with the
 * 'srdf' key) put the reference robot's joints where the project's SRDF puts the project's
 * robot, joint by joint: both list the same reference postures (robots/README.md) */
static void test_reference_srdf_posture(void **state) {
  const char *root = test_reference_root();
  if (!root) skip(); /* reference robots absent: reported by cmocka, an error under CI */
  static char text[16384];
  snprintf(text, sizeof text,
           "robots:\n  - name: solo\n    floating: true\n"
           "    urdf: %s/robots/solo_description/robots/solo12.urdf\n"
           "    srdf: %s/robots/solo_description/srdf/solo.srdf\n"
           "    package_roots: [%s/..]\n",
           root, root, root);
  mr_world *ref = world_of(text), *own = world_of(SOLO_AIR);
  mr_error err = {0};
  mr_sim *a = sim_of(ref), *b = sim_of(own);
  if (mr_sim_reset_posture(a, "solo", "straight_standing", &err)) fail_msg("%s", err.msg);
  const mr_world_posture *p = mr_world_posture_find(own, 0, "straight_standing");
  assert_non_null(p);
  int checked = 0;
  for (int k = 0; k < own->model->nv; ++k) {
    int iq = mr_world_dof_coordinate(own, k);
    if (iq < 0) continue;
    const char *name = own->model->bodies[own->model->dof_body[k]].joint.name;
    int kr = mr_world_joint_dof(ref, name);
    if (kr < 0) fail_msg("the reference robot has no joint %s", name);
    assert_near(mr_sim_q(a)[mr_world_dof_coordinate(ref, kr)], p->q[iq - own->robots[0].idx_q], 0);
    ++checked;
  }
  assert_int_equal(checked, 12);
  mr_sim_free(a), mr_sim_free(b);
  mr_world_free(ref), mr_world_free(own);
}

/* ---- one world, several simulators ---- */

typedef struct {
  mr_sim *s;
  double torque; /* on solo/FL_KFE */
  int failed;
} run_job;

static void *run_trot(void *arg) {
  run_job *j = arg;
  mr_error err = {0};
  j->failed = mr_sim_set_joint_torque_named(j->s, "solo/FL_KFE", j->torque, &err) != MR_OK;
  for (int k = 0; k < 300 && !j->failed; ++k)
    j->failed = mr_sim_step(j->s, &err) != MR_OK;
  return NULL;
}

/* two simulators on one world, stepped in two threads with different controls, give bit for
 * bit the runs of two simulators on two separate worlds: the world is only read */
static void test_shared_world_threads(void **state) {
  mr_error err = {0};
  mr_world *shared = mr_world_load("scenes/solo_trot_pd.yaml", &err);
  mr_world *w1 = mr_world_load("scenes/solo_trot_pd.yaml", &err);
  mr_world *w2 = mr_world_load("scenes/solo_trot_pd.yaml", &err);
  if (!shared || !w1 || !w2) fail_msg("%s", err.msg);
  run_job jobs[4] = {{sim_of(shared), 0.3, 0},
                     {sim_of(shared), -0.2, 0},
                     {sim_of(w1), 0.3, 0},
                     {sim_of(w2), -0.2, 0}};
  pthread_t th[2];
  for (int k = 0; k < 2; ++k)
    assert_int_equal(pthread_create(&th[k], NULL, run_trot, &jobs[k]), 0);
  for (int k = 0; k < 2; ++k)
    pthread_join(th[k], NULL);
  run_trot(&jobs[2]);
  run_trot(&jobs[3]);
  for (int k = 0; k < 4; ++k)
    assert_false(jobs[k].failed);
  assert_same_state(jobs[0].s, jobs[2].s);
  assert_same_state(jobs[1].s, jobs[3].s);
  size_t bytes = (size_t)shared->model->nq * sizeof(double);
  assert_true(memcmp(mr_sim_q(jobs[0].s), mr_sim_q(jobs[1].s), bytes) != 0);
  for (int k = 0; k < 4; ++k)
    mr_sim_free(jobs[k].s);
  mr_world_free(shared), mr_world_free(w1), mr_world_free(w2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_torque_after_creation),
      cmocka_unit_test(test_pd_by_name_equals_scene),
      cmocka_unit_test(test_state_write),
      cmocka_unit_test(test_wrench),
      cmocka_unit_test(test_resets),
      cmocka_unit_test(test_contact_read_outs),
      cmocka_unit_test(test_poses_and_com),
      cmocka_unit_test(test_control_errors),
      cmocka_unit_test(test_reference_srdf_posture),
      cmocka_unit_test(test_shared_world_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
