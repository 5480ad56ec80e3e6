/* The step's stage timers (mr_step_timing in mr_step_stats) and the Allegro scenes of the step
 * benchmark: timed (mr_sim_time_stages) the stages partition the step's wall time, untimed (the
 * default) they are 0 and the steps the same bits; the ball dropped into the hand ends held, at
 * rest and in static equilibrium. */
#include <string.h>

#include <float.h>

#include "moreau/scene.h"
#include "moreau/sim.h"
#include "sim_util.h"
#include "test_util.h"

/* the stages are clock differences (the consistency and solver stages sums of disjoint spans
 * inside [free velocity, solved], the assembly that span less them): each is >= 0 (monotonic
 * clock) and exact (two readings within a factor 2 of each other subtract exactly, Sterbenz;
 * differences of readings of one binade are multiples of its ulp, so their short sums are exact
 * too), so they add up to the total; their floating-point sum rounds 6 partial sums of at most
 * the total: 6 ulp */
static void test_stages_partition_the_step(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_hold.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  mr_sim_time_stages(s, 1);
  for (int k = 0; k < 50; ++k) {
    tsim_steps(s, 1);
    const mr_step_stats *st = mr_sim_last(s);
    const mr_step_timing *t = &st->timing;
    double v[] = {t->kinematics,  t->collision, t->dynamics,   t->assembly,
                  t->consistency, t->solver,    t->integration};
    double sum = 0;
    for (int j = 0; j < 7; ++j) {
      assert_true(v[j] >= 0.0);
      sum += v[j];
    }
    assert_near(sum, t->total, 6 * DBL_EPSILON * t->total);
    /* the ball rests on 3 contacts, so the solver ran */
    assert_int_equal(st->ncontacts, 3);
    assert_true(t->solver > 0.0);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* untimed (the default) every stage time is 0, and timing changes nothing of the step: two
 * simulators of the dropped ball, one timed, give the same q and v bit for bit over its landing
 * (the first 300 steps: the ball's first contacts come at step 40, 261 of the steps have some) */
static void test_untimed_same_steps(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_ball.yaml");
  mr_sim *s = tsim_create(&sc, NULL), *timed = tsim_create(&sc, NULL);
  mr_sim_time_stages(timed, 1);
  const mr_model *m = mr_sim_model(s);
  int contacts = 0;
  for (int k = 0; k < 300; ++k) {
    tsim_steps(s, 1), tsim_steps(timed, 1);
    const mr_step_stats *st = mr_sim_last(s);
    const mr_step_timing *t = &st->timing;
    double v[] = {t->kinematics,  t->collision, t->dynamics,    t->assembly,
                  t->consistency, t->solver,    t->integration, t->total};
    for (int j = 0; j < 8; ++j)
      assert_true(v[j] == 0.0);
    assert_true(mr_sim_last(timed)->timing.total > 0.0);
    assert_memory_equal(mr_sim_q(s), mr_sim_q(timed), (size_t)m->nq * sizeof(double));
    assert_memory_equal(mr_sim_v(s), mr_sim_v(timed), (size_t)m->nv * sizeof(double));
    contacts += st->ncontacts > 0;
  }
  assert_true(contacts > 100); /* the landing is in the compared steps */
  mr_sim_free(s), mr_sim_free(timed);
  mr_scene_free(&sc);
}

/* the dropped ball (r = 0.035 m, 0.1 kg) ends held by the hand: at rest and in static
 * equilibrium. On three contacts the caught ball rolls to and fro along the fingers' groove
 * (rolling without slip dissipates nothing) for about 7 s with the hand's physical inertias
 * (robots/README.md), until a fourth contact stops it (|v| 7e-8 m/s at 8 s); the test runs 9 s.
 * At rest each contact force is within the solver's ε = 1e-6 N (NCP criterion, force units) of
 * an exact equilibrium, so a step leaves the ball at most nc ε Δt / m = 4e-8 m/s (measured
 * 6.7e-10); in equilibrium the contact forces on the ball (each λ in its frame (t₁, t₂, n), the
 * normal pointing towards body1) add up to −m g, within nc ε. */
static void test_ball_caught(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_ball.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, 9000);
  const double *v = mr_sim_v(s);
  /* the ball is the scene's only free body: its free-flyer comes first in v */
  double speed = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  int ball = mr_model_body_index(mr_sim_model(s), "ball");
  assert_true(ball > 0);
  const mr_contact *c;
  const double *lambda;
  int nc = mr_sim_contacts(s, &c, &lambda);
  const double eps = 1e-6, m = 0.1, dt = 1e-3;
  if (!(speed <= nc * eps * dt / m)) fail_msg("ball not at rest: |v| = %g m/s", speed);
  double f[3] = {0, 0, 0};
  int touching = 0;
  for (int i = 0; i < nc; ++i) {
    double sign = c[i].body[0] == ball ? 1.0 : c[i].body[1] == ball ? -1.0 : 0.0;
    touching += sign != 0.0;
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k)
        f[r] += sign * c[i].frame.m[r][k] * lambda[3 * i + k];
  }
  assert_int_equal(touching, 4); /* the fourth contact that stopped it */
  const double mg = m * 9.81, tol = nc * eps;
  assert_near(f[0], 0.0, tol);
  assert_near(f[1], 0.0, tol);
  assert_near(f[2], mg, tol);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stages_partition_the_step),
      cmocka_unit_test(test_untimed_same_steps),
      cmocka_unit_test(test_ball_caught),
  };
  return cmocka_run_group_tests_name("step_timing", tests, NULL, NULL);
}
