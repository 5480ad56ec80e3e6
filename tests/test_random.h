/* Random placements and inertias for the tests (from the seeded generator of test_util.h). */
#ifndef MOREAU_TEST_RANDOM_H
#define MOREAU_TEST_RANDOM_H

#include "test_util.h"

#include "moreau/spatial.h"

/* a rotation from a normalised random quaternion, a translation in [−span, span]³ */
static inline mr_se3 test_random_se3(uint64_t *s, double span) {
  mr_quat q = {test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1), test_rand(s, -1, 1)};
  return mr_se3_make(
      mr_quat_to_m3(mr_quat_normalize(q)),
      mr_v3(test_rand(s, -span, span), test_rand(s, -span, span), test_rand(s, -span, span)));
}

/* a physically valid inertia: principal moments satisfying the triangle inequality, turned and
 * offset at random (centre of mass within 0.5 m), mass in [0.5, 3] */
static inline mr_inertia test_random_inertia(uint64_t *s) {
  double a = test_rand(s, 0.05, 1), b = test_rand(s, 0.05, 1), c = test_rand(s, 0.05, 1);
  mr_mat3 D = mr_m3_diag(a + b, b + c, a + c);
  mr_se3 X = test_random_se3(s, 0.5);
  mr_inertia Y = {test_rand(s, 0.5, 3), X.p, mr_m3_rotate(&X.R, &D)};
  return Y;
}

#endif
