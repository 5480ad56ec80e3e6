/* Four doubles as one operand: a GNU C vector extension (gcc and clang), compiled to SIMD
 * instructions where the target has them and to scalar ones elsewhere. Its arithmetic is IEEE
 * lane by lane, so each lane gets the bits of the scalar expression. */
#ifndef MOREAU_CORE_LANES_H
#define MOREAU_CORE_LANES_H

typedef double lanes4 __attribute__((vector_size(4 * sizeof(double))));

/* x in every lane */
#define LANES(x) ((lanes4){(x), (x), (x), (x)})

/* *r ← x y − z in every lane, rounded once (fma): the target's fused instruction where it has
 * one (the compiler leaves a lane loop of fma() scalar), the C library's fma elsewhere; the same
 * bits either way */
#if defined(__FMA__)
#include <immintrin.h>
static inline void lanes4_fms(const lanes4 *x, const lanes4 *y, const lanes4 *z, lanes4 *r) {
  *r = (lanes4)_mm256_fmsub_pd((__m256d)*x, (__m256d)*y, (__m256d)*z);
}
#else
#include <math.h>
static inline void lanes4_fms(const lanes4 *x, const lanes4 *y, const lanes4 *z, lanes4 *r) {
  for (int l = 0; l < 4; ++l)
    (*r)[l] = fma((*x)[l], (*y)[l], -(*z)[l]);
}
#endif

#endif
