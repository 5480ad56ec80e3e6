/* The step's stage timers (mr_step_timing in mr_step_stats) and the Allegro scenes of the step
 * benchmark: the stages partition the step's wall time, and the ball dropped into the hand ends
 * held where the hold scene starts it. */
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "sim_util.h"
#include "test_util.h"

/* the stages are consecutive clock differences: each is >= 0 (monotonic clock) and they add up
 * to the total up to rounding of µs values near 1e12 (1e-9 relative, well under 1e-3 µs) */
static void test_stages_partition_the_step(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_hold.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  for (int k = 0; k < 50; ++k) {
    tsim_steps(s, 1);
    const mr_step_stats *st = mr_sim_last(s);
    const mr_step_timing *t = &st->timing;
    double v[] = {t->kinematics, t->collision, t->dynamics, t->assembly, t->solver, t->integration};
    double sum = 0;
    for (int j = 0; j < 6; ++j) {
      assert_true(v[j] >= 0.0);
      sum += v[j];
    }
    assert_near(sum, t->total, 1e-3);
    /* the ball rests on 3 contacts, so the solver ran */
    assert_int_equal(st->ncontacts, 3);
    assert_true(t->solver > 0.0);
  }
  mr_sim_free(s);
  mr_scene_free(&sc);
}

/* the dropped ball (r = 0.035 m) ends in the hand, within 1 cm of the rest position the hold scene
 * starts from (-0.01467, 0, 0.14353), at rest (|v| < 1 cm/s) and still touching the hand */
static void test_ball_caught(void **state) {
  mr_scene sc = tsim_load("scenes/b8_allegro_ball.yaml");
  mr_sim *s = tsim_create(&sc, NULL);
  tsim_steps(s, 2000);
  const double *q = mr_sim_q(s), *v = mr_sim_v(s);
  /* the ball is the scene's only free body: its free-flyer comes first in q and v */
  assert_near(q[0], -0.01467, 0.01);
  assert_near(q[1], 0.0, 0.01);
  assert_near(q[2], 0.14353, 0.01);
  assert_true(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) < 0.01);
  assert_true(mr_sim_last(s)->ncontacts >= 2);
  mr_sim_free(s);
  mr_scene_free(&sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stages_partition_the_step),
      cmocka_unit_test(test_ball_caught),
  };
  return cmocka_run_group_tests_name("step_timing", tests, NULL, NULL);
}
