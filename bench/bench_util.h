/* Timing and order statistics shared by the benchmark programs. */
#ifndef MOREAU_BENCH_UTIL_H
#define MOREAU_BENCH_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <time.h>

/* the monotonic clock in µs */
static inline double bench_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e6 * (double)ts.tv_sec + 1e-3 * (double)ts.tv_nsec;
}

/* qsort order of doubles */
static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the median of x[0..n) (sorted in place; the mean of the two middle values when n is even,
 * NAN when n = 0) */
static inline double bench_median(double *x, int n) {
  if (n == 0) return NAN;
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

#endif
