/* Four doubles as one operand: a GNU C vector extension (gcc and clang), compiled to SIMD
 * instructions where the target has them and to scalar ones elsewhere. Its arithmetic is IEEE
 * lane by lane, so each lane gets the bits of the scalar expression. */
#ifndef MOREAU_CORE_LANES_H
#define MOREAU_CORE_LANES_H

typedef double lanes4 __attribute__((vector_size(4 * sizeof(double))));

/* x in every lane */
#define LANES(x) ((lanes4){(x), (x), (x), (x)})

#endif
