/* Lemke's method (see lemke.h). The tableau holds [I  −Q  −1 | q] for the variables
 * (w, z, z₀); every pivot keeps the basic variables ≥ 0, and its first m columns hold the
 * inverse of the current basis, which the lexicographic ratio test reads. Start: z₀ enters at
 * the row of the most negative qᵢ (the last such row on ties: the perturbed q + (ε, …, εᵐ)'s
 * minimum); then the complement of the variable that just left enters, the minimum-ratio row
 * leaves (z₀ first on ties, then the lexicographic minimum), until z₀ leaves the basis. */
#include "contact/lemke.h"

#include <math.h>

size_t mr_lemke_bytes(int m) {
  return (size_t)m * (size_t)(2 * m + 2) * sizeof(double) + (size_t)m * sizeof(int) + 64;
}

/* Gauss-Jordan pivot on T[r][c] */
static void pivot(double *T, int m, int width, int r, int c) {
  double *row = T + (size_t)r * width, p = row[c];
  for (int j = 0; j < width; ++j)
    row[j] /= p;
  for (int i = 0; i < m; ++i) {
    double *ri = T + (size_t)i * width, f = ri[c];
    if (i == r || f == 0) continue;
    for (int j = 0; j < width; ++j)
      ri[j] -= f * row[j];
    ri[c] = 0;
  }
}

/* −1, 0 or 1 as row a's ratio vector (rhs, B⁻¹ row) / pivot entry is lexicographically below,
 * equal to or above row b's, each entry compared to a relative tolerance */
static int lex_compare(const double *T, int width, int m, int a, int b, int c) {
  const double *ra = T + (size_t)a * width, *rb = T + (size_t)b * width;
  double pa = ra[c], pb = rb[c];
  for (int j = -1; j < m; ++j) {
    int col = j < 0 ? 2 * m + 1 : j;
    double x = ra[col] / pa, y = rb[col] / pb, tol = 1e-12 * (1 + fmax(fabs(x), fabs(y)));
    if (x < y - tol) return -1;
    if (x > y + tol) return 1;
  }
  return 0;
}

/* minimum-ratio row for entering column c, or −1 (a ray): on a tie of the ratios z₀'s row
 * (that ends the method with a solution), else the lexicographic minimum */
static int ratio_row(const double *T, const int *basis, int m, int width, int c) {
  int r = -1, z0 = 2 * m, rhs = 2 * m + 1;
  double amax = 0;
  for (int i = 0; i < m; ++i)
    amax = fmax(amax, T[(size_t)i * width + c]);
  for (int i = 0; i < m; ++i) {
    double a = T[(size_t)i * width + c];
    // a pivot entry counts when above round-off of the column's largest
    if (a <= 1e-11 * amax) continue;
    if (r < 0) {
      r = i;
      continue;
    }
    double ri = T[(size_t)i * width + rhs] / a,
           rr = T[(size_t)r * width + rhs] / T[(size_t)r * width + c];
    if (fabs(ri - rr) > 1e-12 * (1 + fmax(fabs(ri), fabs(rr)))) {
      if (ri < rr) r = i;
    } else if (basis[r] != z0 && (basis[i] == z0 || lex_compare(T, width, m, i, r, c) < 0)) {
      r = i;
    }
  }
  return r;
}

static void extract(const double *T, const int *basis, int m, int width, double *z, double *w,
                    double *z0) {
  for (int i = 0; i < m; ++i)
    z[i] = w[i] = 0;
  if (z0) *z0 = 0;
  for (int i = 0; i < m; ++i) {
    double v = fmax(T[(size_t)i * width + 2 * m + 1], 0.0);
    if (basis[i] < m)
      w[basis[i]] = v;
    else if (basis[i] < 2 * m)
      z[basis[i] - m] = v;
    else if (z0)
      *z0 = v;
  }
}

/* the tableau [I  −Q  −1 | q] and the basis w */
static void tableau(const double *Q, const double *q, int m, double *T, int *basis) {
  int width = 2 * m + 2;
  for (int i = 0; i < m; ++i) {
    double *row = T + (size_t)i * width;
    for (int j = 0; j < width; ++j)
      row[j] = 0;
    row[i] = 1, row[2 * m] = -1, row[2 * m + 1] = q[i], basis[i] = i;
    for (int j = 0; j < m; ++j)
      row[m + j] = -Q[(size_t)i * m + j];
  }
}

mr_status mr_lemke_solve(const double *Q, const double *q, int m, int max_pivots, mr_arena *arena,
                         double *z, double *w, int *pivots, double *z0, mr_error *err) {
  int width = 2 * m + 2, r = 0, n_piv = 0;
  if (pivots) *pivots = 0;
  if (z0) *z0 = 0;
  for (int i = 1; i < m; ++i)
    if (q[i] <= q[r]) r = i;
  // q ≥ 0: z = 0 solves
  if (m == 0 || q[r] >= 0) {
    for (int i = 0; i < m; ++i)
      z[i] = 0, w[i] = q[i];
    return MR_OK;
  }
  size_t mark = mr_arena_mark(arena);
  double *T = mr_arena_doubles(arena, (size_t)m * width);
  int *basis = mr_arena_alloc(arena, sizeof(int) * (size_t)m);
  if (!T || !basis) {
    mr_arena_reset(arena, mark);
    return mr_error_set(err, MR_ERR_NOMEM, "lemke: arena too small for m = %d", m);
  }
  tableau(Q, q, m, T, basis);
  if (max_pivots <= 0) max_pivots = 50 * m + 50;
  // z₀ enters at the most negative qᵢ
  pivot(T, m, width, r, 2 * m);
  int leaving = basis[r];
  basis[r] = 2 * m;
  mr_status st = MR_ERR_LIMIT;
  for (n_piv = 1; n_piv < max_pivots; ++n_piv) {
    int entering = leaving < m ? leaving + m : leaving - m;
    r = ratio_row(T, basis, m, width, entering);
    if (r < 0) {
      st = mr_error_set(err, MR_ERR_NUMERIC, "lemke: ray termination after %d pivots", n_piv);
      break;
    }
    pivot(T, m, width, r, entering);
    leaving = basis[r], basis[r] = entering;
    if (leaving == 2 * m) {
      st = MR_OK;
      ++n_piv;
      break;
    }
  }
  extract(T, basis, m, width, z, w, z0);
  if (st == MR_ERR_LIMIT)
    mr_error_set(err, MR_ERR_LIMIT, "lemke: no solution in %d pivots (m = %d)", max_pivots, m);
  if (pivots) *pivots = n_piv;
  mr_arena_reset(arena, mark);
  return st;
}
