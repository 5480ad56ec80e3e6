/* Small dense linear algebra (see linalg.h). */
#include "core/linalg.h"

#include <math.h>
#include <string.h>

double mr_dot(const double *a, const double *b, int n) {
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

double mr_norm(const double *a, int n) { return sqrt(mr_dot(a, a, n)); }

long mr_first_nonfinite(const double *x, long n) {
  for (long k = 0; k < n; ++k)
    if (!isfinite(x[k])) return k;
  return -1;
}

double mr_norm_inf(const double *a, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
  return m;
}

void mr_axpy(double *y, double alpha, const double *x, int n) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void mr_scale(double *x, double alpha, int n) {
  for (int i = 0; i < n; ++i) x[i] *= alpha;
}

void mr_copy(double *dst, const double *src, int n) {
  if (n > 0 && dst != src) memmove(dst, src, (size_t)n * sizeof(double));
}

void mr_zero(double *x, int n) {
  if (n > 0) memset(x, 0, (size_t)n * sizeof(double));
}

void mr_matvec(double *restrict y, const double *restrict A, const double *restrict x, int rows,
               int cols) {
  for (int i = 0; i < rows; ++i) y[i] = mr_dot(A + (size_t)i * cols, x, cols);
}

void mr_matvec_t(double *restrict y, const double *restrict A, const double *restrict x, int rows,
                 int cols) {
  mr_zero(y, cols);
  for (int i = 0; i < rows; ++i) mr_axpy(y, x[i], A + (size_t)i * cols, cols);
}

void mr_matmul(double *restrict C, const double *restrict A, const double *restrict B, int n,
               int k, int m) {
  for (int i = 0; i < n; ++i) {
    double *c = C + (size_t)i * m;
    mr_zero(c, m);
    for (int l = 0; l < k; ++l) mr_axpy(c, A[(size_t)i * k + l], B + (size_t)l * m, m);
  }
}

void mr_matmul_abt(double *restrict C, const double *restrict A, const double *restrict B, int n,
                   int k, int m) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) C[(size_t)i * m + j] = mr_dot(A + (size_t)i * k, B + (size_t)j * k, k);
}

void mr_transpose(double *restrict B, const double *restrict A, int rows, int cols) {
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) B[(size_t)j * rows + i] = A[(size_t)i * cols + j];
}

int mr_cholesky(double *A, int n) {
  for (int j = 0; j < n; ++j) {
    double *rj = A + (size_t)j * n;
    double d = rj[j] - mr_dot(rj, rj, j);
    if (!(d > 0.0)) return j + 1;
    d = sqrt(d);
    rj[j] = d;
    for (int i = j + 1; i < n; ++i) {
      double *ri = A + (size_t)i * n;
      ri[j] = (ri[j] - mr_dot(ri, rj, j)) / d;
    }
    for (int i = j + 1; i < n; ++i) rj[i] = 0.0;
  }
  return 0;
}

void mr_lower_solve(const double *L, int n, double *x) {
  for (int i = 0; i < n; ++i) {
    const double *ri = L + (size_t)i * n;
    x[i] = (x[i] - mr_dot(ri, x, i)) / ri[i];
  }
}

void mr_lower_t_solve(const double *L, int n, double *x) {
  for (int i = n - 1; i >= 0; --i) {
    x[i] /= L[(size_t)i * n + i];
    for (int k = 0; k < i; ++k) x[k] -= L[(size_t)i * n + k] * x[i];
  }
}

void mr_cholesky_solve(const double *L, int n, double *x) {
  mr_lower_solve(L, n, x);
  mr_lower_t_solve(L, n, x);
}

double mr_asymmetry(const double *A, int n) {
  double m = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) m = fmax(m, fabs(A[(size_t)i * n + j] - A[(size_t)j * n + i]));
  return m;
}

/* LU factorisation with partial pivoting of the m x m matrix A (row-major) in place; piv[m].
 * Returns -1 on a zero pivot. */
int mr_lu_factor(double *A, int m, int *piv) {
  for (int k = 0; k < m; ++k) {
    int q = k;
    for (int i = k + 1; i < m; ++i)
      if (fabs(A[i * m + k]) > fabs(A[q * m + k])) q = i;
    piv[k] = q;
    if (!(fabs(A[q * m + k]) > 0.0)) return -1;
    if (q != k)
      for (int j = 0; j < m; ++j) {
        double t = A[k * m + j];
        A[k * m + j] = A[q * m + j], A[q * m + j] = t;
      }
    for (int i = k + 1; i < m; ++i) {
      double f = A[i * m + k] /= A[k * m + k];
      for (int j = k + 1; j < m; ++j)
        A[i * m + j] -= f * A[k * m + j];
    }
  }
  return 0;
}

/* x ← A⁻¹ x from the factor of mr_lu_factor. The factorisation swaps whole rows, multipliers
 * included, so L is stored in the final row order: every interchange is applied to x first,
 * then the two triangular solves. */
void mr_lu_solve(const double *A, int m, const int *piv, double *x) {
  for (int k = 0; k < m; ++k) {
    double t = x[k];
    x[k] = x[piv[k]], x[piv[k]] = t;
  }
  /* L y = x by rows, four at a time: each row's terms in ascending columns as the column
   * sweep would take them, so the same bits, in four independent chains over contiguous rows */
  int i = 0;
  for (; i + 4 <= m; i += 4) {
    const double *a0 = A + (size_t)i * m, *a1 = a0 + m, *a2 = a1 + m, *a3 = a2 + m;
    double s0 = x[i], s1 = x[i + 1], s2 = x[i + 2], s3 = x[i + 3];
    for (int k = 0; k < i; ++k) {
      const double xk = x[k];
      s0 -= a0[k] * xk, s1 -= a1[k] * xk, s2 -= a2[k] * xk, s3 -= a3[k] * xk;
    }
    s1 -= a1[i] * s0;
    s2 -= a2[i] * s0, s2 -= a2[i + 1] * s1;
    s3 -= a3[i] * s0, s3 -= a3[i + 1] * s1, s3 -= a3[i + 2] * s2;
    x[i] = s0, x[i + 1] = s1, x[i + 2] = s2, x[i + 3] = s3;
  }
  for (; i < m; ++i) {
    double t = x[i];
    for (int k = 0; k < i; ++k)
      t -= A[(size_t)i * m + k] * x[k];
    x[i] = t;
  }
  for (int k = m - 1; k >= 0; --k) {
    double t = x[k];
    for (int j = k + 1; j < m; ++j)
      t -= A[(size_t)k * m + j] * x[j];
    x[k] = t / A[(size_t)k * m + k];
  }
}

void mr_lu_solve_t(const double *restrict T, int m, const int *piv, double *restrict x) {
  for (int k = 0; k < m; ++k) {
    double t = x[k];
    x[k] = x[piv[k]], x[piv[k]] = t;
  }
  /* L y = x: column k of L (row k of T, below the diagonal) spread from y_k */
  for (int k = 0; k < m; ++k) {
    const double xk = x[k], *t = T + (size_t)k * m;
    for (int i = k + 1; i < m; ++i)
      x[i] -= t[i] * xk;
  }
  /* U x = y: column j of U (row j of T, above the diagonal) spread from x_j */
  for (int j = m - 1; j >= 0; --j) {
    const double *t = T + (size_t)j * m;
    const double xj = x[j] /= t[j];
    for (int i = 0; i < j; ++i)
      x[i] -= t[i] * xj;
  }
}
