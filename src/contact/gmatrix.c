/* Access to the Delassus matrix G of a problem, stored dense (3nc x 3nc, row-major) or
 * block-sparse (block-CSR of 3x3 blocks, both triangles, columns ascending; contact.h). The
 * block-sparse products visit the stored blocks in ascending column order, so they add the same
 * nonzero terms in the same order as the dense ones: equal to round-off, usually bit for bit. */
#include <string.h>

#include "core/linalg.h"
#include "moreau/contact.h"

int mr_problem_has_G(const mr_contact_problem *p) {
  return p->G || (p->Gb_row && p->Gb_col && p->Gb);
}

int mr_problem_G_block(const mr_contact_problem *p, int i, int j, double *B) {
  if (p->G) {
    size_t n = 3 * (size_t)p->nc;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        B[3 * a + b] = p->G[(3 * (size_t)i + a) * n + 3 * (size_t)j + b];
    return 1;
  }
  /* binary search of column j in row i */
  int lo = p->Gb_row[i], hi = p->Gb_row[i + 1];
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (p->Gb_col[mid] < j)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < p->Gb_row[i + 1] && p->Gb_col[lo] == j) {
    memcpy(B, p->Gb + 9 * (size_t)lo, 9 * sizeof(double));
    return 1;
  }
  memset(B, 0, 9 * sizeof(double));
  return 0;
}

void mr_problem_G_mul(const mr_contact_problem *p, const double *x, double *y) {
  int n = 3 * p->nc;
  if (p->G) {
    mr_matvec(y, p->G, x, n, n);
    return;
  }
  for (int i = 0; i < p->nc; ++i) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      const double *B = p->Gb + 9 * (size_t)k, *xj = x + 3 * p->Gb_col[k];
      s0 += B[0] * xj[0], s0 += B[1] * xj[1], s0 += B[2] * xj[2];
      s1 += B[3] * xj[0], s1 += B[4] * xj[1], s1 += B[5] * xj[2];
      s2 += B[6] * xj[0], s2 += B[7] * xj[1], s2 += B[8] * xj[2];
    }
    y[3 * i] = s0, y[3 * i + 1] = s1, y[3 * i + 2] = s2;
  }
}

void mr_problem_G_dense(const mr_contact_problem *p, double *G) {
  size_t n = 3 * (size_t)p->nc;
  if (p->G) {
    if (G != p->G) memcpy(G, p->G, n * n * sizeof(double));
    return;
  }
  memset(G, 0, n * n * sizeof(double));
  for (int i = 0; i < p->nc; ++i)
    for (int k = p->Gb_row[i]; k < p->Gb_row[i + 1]; ++k) {
      const double *B = p->Gb + 9 * (size_t)k;
      size_t j = (size_t)p->Gb_col[k];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          G[(3 * (size_t)i + a) * n + 3 * j + b] = B[3 * a + b];
    }
}
