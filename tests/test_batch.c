/* The batch API (batch.h): n Solo-12 simulators on one world stepped on 1, 2 and 3 threads give,
 * bit for bit (memcmp), the trajectories of the same simulators stepped alone with mr_sim_step
 * (whichever thread steps which environment),
 * with controls set through each environment's simulator or in bulk; a diverging environment is
 * reported and the others go on unchanged; bulk state and control copies; bad values are
 * errors naming the environment and the entry. */
#include "test_util.h"

#include <string.h>

#include "moreau/batch.h"
#include "moreau/control.h"
#include "moreau/world.h"

#define NENV 8
#define NSTEPS 200

static mr_world *trot_world(void) {
  mr_error err = {0};
  mr_world *w = mr_world_load("scenes/solo_trot_pd.yaml", &err);
  if (!w) fail_msg("%s", err.msg);
  return w;
}

/* environment i's controls: a knee torque and a hip target offset that differ per environment
 * (by joint name, through the control API) */
static void control_env(mr_sim *s, int i) {
  mr_error err = {0};
  const mr_world *w = mr_sim_world(s);
  int hip = mr_world_dof_coordinate(w, mr_world_joint_dof(w, "solo/HL_HFE"));
  if (mr_sim_set_joint_torque_named(s, "solo/FR_KFE", 0.1 * (i - NENV / 2), &err) ||
      mr_sim_set_joint_target_named(s, "solo/HL_HFE", mr_sim_ctrl_target(s)[hip] + 0.05 * i, &err))
    fail_msg("%s", err.msg);
}

/* NENV simulators each stepped alone NSTEPS times with control_env's controls */
static void reference_runs(const mr_world *w, mr_sim **ref) {
  mr_error err = {0};
  for (int i = 0; i < NENV; ++i) {
    ref[i] = mr_sim_create(w, NULL, &err);
    if (!ref[i]) fail_msg("%s", err.msg);
    control_env(ref[i], i);
    for (int k = 0; k < NSTEPS; ++k)
      if (mr_sim_step(ref[i], &err)) fail_msg("reference %d: %s", i, err.msg);
  }
}

/* bitwise equality of the state, time and step count of two simulators */
static void assert_bitwise(const mr_sim *a, const mr_sim *b, int env) {
  const mr_model *m = mr_sim_model(a);
  if (memcmp(mr_sim_q(a), mr_sim_q(b), (size_t)m->nq * sizeof(double)) ||
      memcmp(mr_sim_v(a), mr_sim_v(b), (size_t)m->nv * sizeof(double)))
    fail_msg("environment %d: the batch state differs from the simulator stepped alone", env);
  assert_true(mr_sim_time(a) == mr_sim_time(b));
  assert_int_equal(mr_sim_steps(a), mr_sim_steps(b));
}

/* controls through mr_batch_sim and the control API; steps in two calls (120 + 80) so that the
 * pool runs two generations; 1, 2 and 3 threads */
static void test_bitwise_any_threads(void **state) {
  mr_world *w = trot_world();
  mr_sim *ref[NENV];
  reference_runs(w, ref);
  /* the environments end in different states: the controls matter */
  assert_true(memcmp(mr_sim_q(ref[0]), mr_sim_q(ref[1]), 7 * sizeof(double)) != 0);
  for (int threads = 1; threads <= 3; ++threads) {
    mr_error err = {0};
    mr_batch *b = mr_batch_create(w, NENV, threads, NULL, &err);
    if (!b) fail_msg("%s", err.msg);
    assert_int_equal(mr_batch_threads(b), threads);
    mr_batch_time_threads(b, 1);
    for (int i = 0; i < NENV; ++i)
      control_env(mr_batch_sim(b, i), i);
    if (mr_batch_step(b, 120, &err) || mr_batch_step(b, NSTEPS - 120, &err))
      fail_msg("%d threads: %s", threads, err.msg);
    for (int i = 0; i < NENV; ++i) {
      assert_int_equal(mr_batch_status(b)[i], MR_OK);
      assert_bitwise(mr_batch_sim(b, i), ref[i], i);
    }
    /* the threads' CPU clocks over the last call (80 Solo-12 steps per environment: at least
     * tens of µs, far above the clock's ns resolution): each thread's time on the environments
     * it stepped, 0 for a thread that stepped none — the caller too: the workers it wakes may
     * take the core from it and then its share, which the pool allows — and together the whole
     * call's work; none out of range */
    double sum = 0.0;
    for (int t = 0; t < threads; ++t) {
      assert_true(mr_batch_thread_cpu(b, t) >= 0.0);
      sum += mr_batch_thread_cpu(b, t);
    }
    assert_true(sum > 0.0);
    assert_true(mr_batch_thread_cpu(b, threads) == 0.0 && mr_batch_thread_cpu(b, -1) == 0.0);
    mr_batch_time_threads(b, 0);
    assert_true(mr_batch_thread_cpu(b, 0) == 0.0);
    mr_batch_free(b);
  }
  for (int i = 0; i < NENV; ++i)
    mr_sim_free(ref[i]);
  mr_world_free(w);
}

/* controls written in bulk (n × nv torques, n × nq targets) equal the same controls set joint
 * by joint; the bulk state read-out is the simulators' state */
static void test_bulk_controls_and_state(void **state) {
  mr_world *w = trot_world();
  int nq = w->model->nq, nv = w->model->nv;
  mr_sim *ref[NENV];
  reference_runs(w, ref);
  mr_error err = {0};
  mr_batch *b = mr_batch_create(w, NENV, 2, NULL, &err);
  if (!b) fail_msg("%s", err.msg);
  double *tau = calloc((size_t)NENV * nv, sizeof *tau), *qt = calloc((size_t)NENV * nq, 8);
  double *q = calloc((size_t)NENV * nq, 8), *v = calloc((size_t)NENV * nv, 8);
  mr_batch_get_controls(b, tau, qt);
  for (int i = 0; i < NENV; ++i) {
    tau[i * nv + mr_world_joint_dof(w, "solo/FR_KFE")] = 0.1 * (i - NENV / 2);
    qt[i * nq + mr_world_dof_coordinate(w, mr_world_joint_dof(w, "solo/HL_HFE"))] += 0.05 * i;
  }
  if (mr_batch_set_controls(b, tau, qt, &err) || mr_batch_step(b, NSTEPS, &err))
    fail_msg("%s", err.msg);
  mr_batch_get_state(b, q, v);
  for (int i = 0; i < NENV; ++i) {
    assert_bitwise(mr_batch_sim(b, i), ref[i], i);
    assert_memory_equal(q + i * nq, mr_sim_q(ref[i]), (size_t)nq * sizeof *q);
    assert_memory_equal(v + i * nv, mr_sim_v(ref[i]), (size_t)nv * sizeof *v);
  }
  /* the bulk write is mr_sim_set_state on each simulator: one more step still agrees */
  if (mr_batch_set_state(b, q, v, &err)) fail_msg("%s", err.msg);
  for (int i = 0; i < NENV; ++i) {
    mr_sim_set_state(ref[i], q + i * nq, v + i * nv, &err);
    if (mr_sim_step(ref[i], &err)) fail_msg("%s", err.msg);
  }
  if (mr_batch_step(b, 1, &err)) fail_msg("%s", err.msg);
  for (int i = 0; i < NENV; ++i)
    assert_bitwise(mr_batch_sim(b, i), ref[i], i);
  free(tau), free(qt), free(q), free(v);
  mr_batch_free(b);
  for (int i = 0; i < NENV; ++i)
    mr_sim_free(ref[i]);
  mr_world_free(w);
}

/* a force of 1e9 N on environment 3's base gives |v| = Δt F / m ≈ 1e-3 · 1e9 / 2.5 = 4e5 m/s >
 * 1e4 after one step: that environment fails at its first step, is named, keeps its initial
 * state; the other seven still equal their references bit for bit */
static void test_divergence_isolated(void **state) {
  mr_world *w = trot_world();
  mr_sim *ref[NENV];
  reference_runs(w, ref);
  mr_error err = {0};
  mr_batch *b = mr_batch_create(w, NENV, 3, NULL, &err);
  if (!b) fail_msg("%s", err.msg);
  for (int i = 0; i < NENV; ++i)
    control_env(mr_batch_sim(b, i), i);
  mr_sim_ctrl_torque(mr_batch_sim(b, 3))[2] = 1e9; /* free-flyer dof 2: base force along z */
  assert_int_equal(mr_batch_step(b, NSTEPS, &err), MR_ERR_NUMERIC);
  assert_non_null(strstr(err.msg, "1 of 8 environments failed; environment 3"));
  for (int i = 0; i < NENV; ++i) {
    if (i == 3) continue;
    assert_int_equal(mr_batch_status(b)[i], MR_OK);
    assert_string_equal(mr_batch_error(b, i), "");
    assert_bitwise(mr_batch_sim(b, i), ref[i], i);
  }
  assert_int_equal(mr_batch_status(b)[3], MR_ERR_NUMERIC);
  /* the first step diverges on the base's vertical velocity, Δt F / m ≈ 4e5 m/s */
  assert_non_null(strstr(mr_batch_error(b, 3), "diverged at step 1"));
  assert_non_null(strstr(mr_batch_error(b, 3), "v[2]"));
  assert_int_equal(mr_sim_steps(mr_batch_sim(b, 3)), 0);
  assert_memory_equal(mr_sim_q(mr_batch_sim(b, 3)), w->q0, (size_t)w->model->nq * sizeof(double));
  /* after a reset the environment steps again as a new simulator */
  mr_batch_reset(b, 3);
  control_env(mr_batch_sim(b, 3), 3);
  if (mr_batch_step(b, 0, &err)) fail_msg("%s", err.msg);
  assert_int_equal(mr_batch_status(b)[3], MR_OK);
  mr_batch_free(b);
  for (int i = 0; i < NENV; ++i)
    mr_sim_free(ref[i]);
  mr_world_free(w);
}

/* bad arguments and values: clear errors, nothing changed */
static void test_errors(void **state) {
  mr_world *w = trot_world();
  int nq = w->model->nq, nv = w->model->nv;
  mr_error err = {0};
  assert_null(mr_batch_create(w, 0, 1, NULL, &err));
  assert_non_null(strstr(err.msg, "n = 0"));
  assert_null(mr_batch_create(w, 2, 0, NULL, &err));
  assert_non_null(strstr(err.msg, "threads = 0"));
  assert_null(mr_batch_create(w, 2, 1, "no-such-solver", &err));
  assert_non_null(strstr(err.msg, "no-such-solver"));
  mr_batch *b = mr_batch_create(w, 3, 5, NULL, &err);
  if (!b) fail_msg("%s", err.msg);
  assert_int_equal(mr_batch_threads(b), 3); /* no more threads than environments */
  assert_null(mr_batch_sim(b, 3));
  assert_null(mr_batch_sim(b, -1));
  assert_int_equal(mr_batch_step(b, -1, &err), MR_ERR_INVALID);
  double *tau = calloc((size_t)3 * nv, 8), *q = calloc((size_t)3 * nq, 8);
  tau[2 * nv + 7] = NAN;
  assert_int_equal(mr_batch_set_controls(b, tau, NULL, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "environment 2: torque[7] = nan"));
  for (int i = 0; i < 3; ++i)
    assert_true(mr_sim_ctrl_torque(mr_batch_sim(b, i))[7] == 0.0);
  mr_batch_get_state(b, q, NULL);
  q[1 * nq + 4] = INFINITY;
  assert_int_equal(mr_batch_set_state(b, q, NULL, &err), MR_ERR_INVALID);
  assert_non_null(strstr(err.msg, "environment 1"));
  assert_true(isfinite(mr_sim_q(mr_batch_sim(b, 1))[4]));
  free(tau), free(q);
  mr_batch_free(b);
  mr_batch_free(NULL);
  mr_world_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bitwise_any_threads),
      cmocka_unit_test(test_bulk_controls_and_state),
      cmocka_unit_test(test_divergence_isolated),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
