/* Shared helpers for the cmocka test programs. */
#ifndef MOREAU_TEST_UTIL_H
#define MOREAU_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

/* assert |a − b| <= tol, printing both values and the tolerance on failure */
#define assert_near(a, b, tol)                                                                  \
  do {                                                                                          \
    double a_ = (a), b_ = (b), t_ = (tol);                                                      \
    if (!(fabs(a_ - b_) <= t_))                                                                 \
      fail_msg("%s = %.17g, %s = %.17g, |diff| = %.3g > %.3g", #a, a_, #b, b_, fabs(a_ - b_), \
               t_);                                                                             \
  } while (0)

/* assert max_i |a_i − b_i| <= tol over n entries */
#define assert_vec_near(a, b, n, tol)                                                          \
  do {                                                                                         \
    for (int i_ = 0; i_ < (int)(n); ++i_)                                                      \
      if (!(fabs((a)[i_] - (b)[i_]) <= (tol)))                                                 \
        fail_msg("%s[%d] = %.17g, %s[%d] = %.17g, |diff| = %.3g > %.3g", #a, i_, (a)[i_], #b, \
                 i_, (b)[i_], fabs((a)[i_] - (b)[i_]), (double)(tol));                         \
  } while (0)

/* deterministic pseudo-random numbers (splitmix64) */
static inline uint64_t test_rand_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* uniform in [lo, hi) */
static inline double test_rand(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(test_rand_u64(s) >> 11) * 0x1.0p-53;
}

/* ../shared/reference/example-robot-data (MOREAU_SHARED overrides ../shared); NULL when absent */
static inline const char *test_reference_root(void) {
  static char path[4096];
  const char *shared = getenv("MOREAU_SHARED");
  snprintf(path, sizeof path, "%s/reference/example-robot-data", shared ? shared : "../shared");
  FILE *f = NULL;
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/LICENSE", path);
  if (!(f = fopen(probe, "r"))) return NULL;
  fclose(f);
  return path;
}

#endif
