/* Small dense linear algebra on row-major double arrays. No allocation: every output is a
 * caller-provided array, and outputs must not alias inputs unless stated. */
#ifndef MOREAU_CORE_LINALG_H
#define MOREAU_CORE_LINALG_H

#include <stddef.h>

double mr_dot(const double *a, const double *b, int n);
double mr_norm(const double *a, int n);
double mr_norm_inf(const double *a, int n);
/* y += alpha x (y may equal x) */
void mr_axpy(double *y, double alpha, const double *x, int n);
void mr_scale(double *x, double alpha, int n);
void mr_copy(double *dst, const double *src, int n);
void mr_zero(double *x, int n);
/* the index of the first entry of x (n) that is not finite (NaN or ±∞), −1 when all are */
long mr_first_nonfinite(const double *x, long n);

/* y = A x, A rows x cols */
void mr_matvec(double *restrict y, const double *restrict A, const double *restrict x, int rows,
               int cols);
/* y = Aᵀ x, A rows x cols (y has cols entries) */
void mr_matvec_t(double *restrict y, const double *restrict A, const double *restrict x, int rows,
                 int cols);
/* C = A B, A n x k, B k x m, C n x m */
void mr_matmul(double *restrict C, const double *restrict A, const double *restrict B, int n,
               int k, int m);
/* C = A Bᵀ, A n x k, B m x k, C n x m */
void mr_matmul_abt(double *restrict C, const double *restrict A, const double *restrict B, int n,
                   int k, int m);
/* B = Aᵀ, A rows x cols */
void mr_transpose(double *restrict B, const double *restrict A, int rows, int cols);

/* In-place Cholesky A = L Lᵀ of a symmetric positive definite n x n matrix: the lower triangle
 * of A becomes L, the strict upper triangle is zeroed. Returns 0, or k+1 when the k-th pivot is
 * not positive (A is then left partially factored). */
int mr_cholesky(double *A, int n);
/* Solve L Lᵀ x = b in place (x holds b on entry). */
void mr_cholesky_solve(const double *L, int n, double *x);
/* Solve L x = b and Lᵀ x = b in place, L lower triangular. */
void mr_lower_solve(const double *L, int n, double *x);
void mr_lower_t_solve(const double *L, int n, double *x);

/* max |A - Aᵀ| over the entries of a square matrix */
double mr_asymmetry(const double *A, int n);

/* LU with partial pivoting in place (row-major m x m, piv[m]); -1 on a zero pivot; the solve
 * overwrites x with A⁻¹ x */
int mr_lu_factor(double *A, int m, int *piv);
void mr_lu_solve(const double *A, int m, const int *piv, double *x);
/* The same solve from the factor stored transposed (mr_transpose of mr_lu_factor's A: row k holds
 * column k of L and U), both triangular solves by columns over contiguous rows, without a
 * dependency chain along a row: the same result to round-off, U's terms taken in another order */
void mr_lu_solve_t(const double *restrict T, int m, const int *piv, double *restrict x);

#endif
