/* Dense convex QP by a primal active-set method (Nocedal & Wright, "Numerical Optimization",
 * 2nd ed., §16.5, Algorithm 16.3), extended to positive SEMI-definite Hessians:
 *
 *   phase 1: x₀ = minimum-norm solution of A_eq x = b_eq (Householder QR); then the linear
 *            program  min t  s.t. A_eq x = b_eq, A_in x + t 1 ≥ b_in, t ≥ 0  from (x₀, t₀)
 *            with the same active-set iteration (H = 0). Its minimum t* > tolerance means the
 *            constraints are infeasible.
 *   phase 2: from the phase-1 point, with working set W (all equalities + active inequalities):
 *            Z = null-space basis of A_W (Householder QR of A_Wᵀ), reduced gradient r = Zᵀ g,
 *            reduced Hessian Z ᵀH Z = V diag(e) Vᵀ (Jacobi). If r has a component along the
 *            zero-curvature eigenvectors, step along it (a ray of linear decrease: blocked by a
 *            constraint, or the problem is unbounded); otherwise take the Newton step
 *            p = −Z V diag(1/e) Vᵀ r restricted to the positive eigenvalues (a minimiser on the
 *            face, also when it is not unique). Steps are cut by the ratio test, which adds the
 *            blocking constraint (lowest index on ties); at a stationary point the multipliers
 *            A_Wᵀ y = g decide: all inequality multipliers ≥ 0 is optimal, else the most negative
 *            one leaves W (the lowest-index negative one after n degenerate steps in a row,
 *            Bland's rule, against cycling). An iteration cap turns residual cycling into
 *            MR_ERR_LIMIT.
 *
 * Every iteration recomputes the QR and the eigen-decomposition: O(n³) per iteration, exact and
 * robust for the tens of variables of a QPCC mode; no update formulas to drift. Rows of A_W that
 * are linearly dependent on earlier ones are dropped from W (harmless at a feasible point). */
#include "control/qp.h"

#include <math.h>
#include <string.h>

#include "core/linalg.h"

/* the problem as the iteration sees it (phase 1 or phase 2) */
typedef struct {
  int n, me, mi;
  const double *H, *c, *Ae, *be, *Ai, *bi;
} qp_view;

/* scratch carved from the workspace arena for one solve */
typedef struct {
  int n;      /* leading dimension: n_max + 1 */
  int k;      /* rows in the QR factor */
  double *hv; /* Householder vectors, one per row (k x n) */
  double *beta;
  double *R; /* upper triangular factor (n x n, R[i n + j]) */
  int *rows; /* working set: id < me is an equality, id ≥ me is inequality id − me */
  int nw;    /* entries of rows */
  int *in_w; /* inequality flags (mi) */
  double *Z, *HZ, *Hz, *V, *eig, *g, *r, *w, *d, *p, *y, *tmp;
} qp_scratch;

mr_qp_settings mr_qp_settings_default(void) {
  mr_qp_settings s = {0, 1e-10};
  return s;
}

const char *mr_qp_outcome_name(mr_qp_outcome o) {
  static const char *names[] = {"optimal", "infeasible", "unbounded"};
  return (o >= MR_QP_OPTIMAL && o <= MR_QP_UNBOUNDED) ? names[o] : "?";
}

/* bytes for the scratch of a problem with the workspace bounds */
static size_t scratch_bytes(int n_max, int me, int mi) {
  size_t n1 = (size_t)n_max + 1, mi1 = (size_t)mi + 1, pad = 32 * 40;
  size_t doubles = 8 * n1 * n1 + 10 * n1 + (me + n1) + me * n1 + mi1 * n1 + mi1 + 2 * n1;
  size_t ints = (me + mi1 + n1) + mi1;
  return doubles * sizeof(double) + ints * sizeof(int) + pad;
}

mr_status mr_qp_workspace_init(mr_qp_workspace *ws, int n_max, int m_eq_max, int m_in_max,
                               mr_error *err) {
  if (n_max < 1 || m_eq_max < 0 || m_in_max < 0)
    return mr_error_set(err, MR_ERR_INVALID, "qp workspace: bad sizes n=%d m_eq=%d m_in=%d", n_max,
                        m_eq_max, m_in_max);
  ws->n_max = n_max, ws->m_eq_max = m_eq_max, ws->m_in_max = m_in_max;
  if (mr_arena_init(&ws->arena, scratch_bytes(n_max, m_eq_max, m_in_max)))
    return mr_error_set(err, MR_ERR_NOMEM, "qp workspace: out of memory (n=%d)", n_max);
  return MR_OK;
}

void mr_qp_workspace_destroy(mr_qp_workspace *ws) {
  mr_arena_destroy(&ws->arena);
}

/* ---------------------------------------------------------------- symmetric eigenproblem */

/* one Jacobi rotation zeroing A[p][q]; columns then rows, and the eigenvector columns */
static void jacobi_rotate(double *A, int n, double *V, int p, int q) {
  double apq = A[p * n + q];
  double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
  double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
  double c = 1 / sqrt(t * t + 1), s = t * c;
  for (int k = 0; k < n; ++k) {
    double akp = A[k * n + p], akq = A[k * n + q];
    A[k * n + p] = c * akp - s * akq, A[k * n + q] = s * akp + c * akq;
  }
  for (int k = 0; k < n; ++k) {
    double apk = A[p * n + k], aqk = A[q * n + k];
    A[p * n + k] = c * apk - s * aqk, A[q * n + k] = s * apk + c * aqk;
  }
  for (int k = 0; V && k < n; ++k) {
    double vkp = V[k * n + p], vkq = V[k * n + q];
    V[k * n + p] = c * vkp - s * vkq, V[k * n + q] = s * vkp + c * vkq;
  }
}

void mr_sym_eigen(double *A, int n, double *eig, double *V) {
  double total = 0;
  for (int i = 0; i < n * n; ++i)
    total += A[i] * A[i];
  for (int i = 0; V && i < n; ++i)
    for (int j = 0; j < n; ++j)
      V[i * n + j] = (i == j);
  // cyclic sweeps until the off-diagonal mass is negligible
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q)
        off += A[p * n + q] * A[p * n + q];
    if (off <= 1e-32 * total || off == 0) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q)
        if (A[p * n + q] != 0) jacobi_rotate(A, n, V, p, q);
  }
  for (int i = 0; i < n; ++i)
    eig[i] = A[i * n + i];
}

/* ---------------------------------------------------------------- Householder QR of A_Wᵀ */

static const double *qp_row(const qp_view *v, int id) {
  return id < v->me ? v->Ae + (size_t)id * v->n : v->Ai + (size_t)(id - v->me) * v->n;
}

/* y ← H_j y for the j-th reflector */
static void reflect(const qp_scratch *s, int n, int j, double *y) {
  const double *v = s->hv + (size_t)j * s->n;
  double t = 0;
  for (int i = j; i < n; ++i)
    t += v[i] * y[i];
  t *= s->beta[j];
  for (int i = j; i < n; ++i)
    y[i] -= t * v[i];
}

/* y ← Qᵀ y and y ← Q y with Q = H_0 ⋯ H_{k−1} */
static void apply_qt(const qp_scratch *s, int n, double *y) {
  for (int j = 0; j < s->k; ++j)
    reflect(s, n, j, y);
}
static void apply_q(const qp_scratch *s, int n, double *y) {
  for (int j = s->k - 1; j >= 0; --j)
    reflect(s, n, j, y);
}

/* append row a as a new column of the factor; 0 when it depends on the previous ones */
static int qr_add(qp_scratch *s, int n, const double *a, double tol) {
  int k = s->k;
  double *y = s->tmp, anorm = mr_norm(a, n), res = 0;
  if (k >= n || anorm == 0) return 0;
  mr_copy(y, a, n);
  apply_qt(s, n, y);
  for (int i = k; i < n; ++i)
    res += y[i] * y[i];
  res = sqrt(res);
  if (res <= tol * anorm) return 0;
  // reflector mapping y[k:] onto alpha e_k
  double alpha = y[k] > 0 ? -res : res, *v = s->hv + (size_t)k * s->n;
  mr_zero(v, n);
  for (int i = k; i < n; ++i)
    v[i] = y[i];
  v[k] -= alpha;
  double vtv = 0;
  for (int i = k; i < n; ++i)
    vtv += v[i] * v[i];
  s->beta[k] = 2 / vtv;
  for (int i = 0; i < k; ++i)
    s->R[i * s->n + k] = y[i];
  s->R[k * s->n + k] = alpha;
  s->k = k + 1;
  return 1;
}

/* refactor the working set, dropping rows that depend on earlier ones */
static void factor_working_set(const qp_view *v, qp_scratch *s, double tol) {
  int kept = 0;
  s->k = 0;
  for (int i = 0; i < s->nw; ++i) {
    int id = s->rows[i];
    if (qr_add(s, v->n, qp_row(v, id), tol))
      s->rows[kept++] = id;
    else if (id >= v->me)
      s->in_w[id - v->me] = 0;
  }
  s->nw = kept;
}

/* ---------------------------------------------------------------- active-set iteration */

static double hessian_scale(const qp_view *v) {
  double h = 0;
  for (int i = 0; v->H && i < v->n * v->n; ++i)
    h = fmax(h, fabs(v->H[i]));
  return h * v->n;
}

/* g = H x + c */
static void gradient(const qp_view *v, const double *x, double *g) {
  if (v->H)
    mr_matvec(g, v->H, x, v->n, v->n);
  else
    mr_zero(g, v->n);
  mr_axpy(g, 1.0, v->c, v->n);
}

/* null-space basis Z (columns stored as rows of s->Z), reduced gradient and Hessian */
static int reduced_problem(const qp_view *v, qp_scratch *s) {
  int n = v->n, nz = n - s->k;
  for (int i = 0; i < nz; ++i) {
    double *z = s->Z + (size_t)i * s->n;
    mr_zero(z, n);
    z[s->k + i] = 1;
    apply_q(s, n, z);
    s->r[i] = mr_dot(z, s->g, n);
    if (v->H) mr_matvec(s->HZ + (size_t)i * s->n, v->H, z, n, n);
  }
  for (int i = 0; i < nz; ++i)
    for (int j = 0; j < nz; ++j)
      s->Hz[i * nz + j] = v->H ? mr_dot(s->Z + (size_t)i * s->n, s->HZ + (size_t)j * s->n, n) : 0;
  return nz;
}

/* the search direction p; returns 1 for a zero-curvature (linear descent) ray, 0 for Newton */
static int direction(const qp_view *v, qp_scratch *s, double etol, double gtol) {
  int n = v->n, nz = reduced_problem(v, s), linear = 0;
  mr_sym_eigen(s->Hz, nz, s->eig, s->V);
  // coordinates of r in the eigenbasis; weight of the zero-curvature part
  double null2 = 0;
  for (int i = 0; i < nz; ++i) {
    s->w[i] = 0;
    for (int j = 0; j < nz; ++j)
      s->w[i] += s->V[j * nz + i] * s->r[j];
    if (s->eig[i] <= etol) null2 += s->w[i] * s->w[i];
  }
  linear = sqrt(null2) > gtol;
  // d = −V (w/e) on positive eigenvalues, or −V w on the zero-curvature ones
  mr_zero(s->d, nz);
  for (int i = 0; i < nz; ++i) {
    double coef = s->eig[i] <= etol ? (linear ? -s->w[i] : 0) : (linear ? 0 : -s->w[i] / s->eig[i]);
    for (int j = 0; coef != 0 && j < nz; ++j)
      s->d[j] += coef * s->V[j * nz + i];
  }
  mr_zero(s->p, n);
  for (int i = 0; i < nz; ++i)
    mr_axpy(s->p, s->d[i], s->Z + (size_t)i * s->n, n);
  return linear;
}

/* multipliers of the working set, A_Wᵀ y = g, by back substitution R y = (Qᵀ g)[:k] */
static void multipliers(const qp_view *v, qp_scratch *s) {
  int k = s->k;
  mr_copy(s->tmp, s->g, v->n);
  apply_qt(s, v->n, s->tmp);
  for (int i = k - 1; i >= 0; --i) {
    double t = s->tmp[i];
    for (int j = i + 1; j < k; ++j)
      t -= s->R[i * s->n + j] * s->y[j];
    s->y[i] = t / s->R[i * s->n + i];
  }
}

/* the working-set entry to drop (an inequality with negative multiplier), or −1 */
static int leaving(const qp_view *v, const qp_scratch *s, double gtol, int bland) {
  int best = -1;
  for (int i = 0; i < s->nw; ++i) {
    if (s->rows[i] < v->me || s->y[i] >= -gtol) continue;
    if (best < 0)
      best = i;
    else if (bland ? s->rows[i] < s->rows[best] : s->y[i] < s->y[best])
      best = i;
  }
  return best;
}

/* ratio test along p: largest step ≤ alpha_max keeping A_in x ≥ b_in; *block the row or −1 */
static double ratio_test(const qp_view *v, const qp_scratch *s, const double *x, double alpha_max,
                         int *block) {
  double alpha = alpha_max, pn = mr_norm(s->p, v->n);
  *block = -1;
  for (int i = 0; i < v->mi; ++i) {
    if (s->in_w[i]) continue;
    const double *a = v->Ai + (size_t)i * v->n;
    double ap = mr_dot(a, s->p, v->n);
    if (ap >= -1e-13 * mr_norm(a, v->n) * pn) continue;
    double slack = fmax(mr_dot(a, x, v->n) - v->bi[i], 0.0), ai = slack / -ap;
    if (ai < alpha) alpha = ai, *block = i;
  }
  return alpha;
}

static void remove_entry(qp_scratch *s, int at) {
  for (int i = at + 1; i < s->nw; ++i)
    s->rows[i - 1] = s->rows[i];
  s->nw--;
}

/* iterate from a feasible x with W = equalities (+ the inequalities flagged in in_w) */
static mr_status active_set(const qp_view *v, qp_scratch *s, double *x, int max_iter, double tol,
                            int *iters, mr_qp_outcome *out, mr_error *err) {
  double hs = hessian_scale(v), etol = tol * fmax(1.0, hs), cn = mr_norm_inf(v->c, v->n);
  int degenerate = 0;
  for (int it = 0; it < max_iter; ++it, ++*iters) {
    factor_working_set(v, s, 1e-12);
    gradient(v, x, s->g);
    double gtol = tol * (1 + cn + hs * mr_norm_inf(x, v->n));
    int linear = direction(v, s, etol, gtol);
    // stationary on the working set: optimal, or release one inequality
    if (!linear && mr_norm_inf(s->p, v->n) <= tol * (1 + mr_norm_inf(x, v->n))) {
      multipliers(v, s);
      int drop = leaving(v, s, gtol, degenerate > v->n);
      if (drop < 0) {
        *out = MR_QP_OPTIMAL;
        return MR_OK;
      }
      s->in_w[s->rows[drop] - v->me] = 0;
      remove_entry(s, drop);
      continue;
    }
    // step to the nearest blocking constraint
    int block;
    double alpha = ratio_test(v, s, x, linear ? INFINITY : 1.0, &block);
    if (isinf(alpha)) {
      *out = MR_QP_UNBOUNDED;
      return MR_OK;
    }
    mr_axpy(x, alpha, s->p, v->n);
    degenerate = alpha == 0 ? degenerate + 1 : 0;
    if (block >= 0) s->in_w[block] = 1, s->rows[s->nw++] = v->me + block;
  }
  return mr_error_set(err, MR_ERR_LIMIT,
                      "qp: no convergence in %d active-set iterations (n=%d, %d inequalities); "
                      "degenerate constraints may be cycling",
                      max_iter, v->n, v->mi);
}

/* ---------------------------------------------------------------- phases */

static void carve(mr_arena *a, qp_scratch *s, int n1, int me, int mi1) {
  size_t nn = (size_t)n1 * n1;
  s->n = n1;
  s->hv = mr_arena_doubles(a, nn), s->R = mr_arena_doubles(a, nn);
  s->Z = mr_arena_doubles(a, nn), s->HZ = mr_arena_doubles(a, nn);
  s->Hz = mr_arena_doubles(a, nn), s->V = mr_arena_doubles(a, nn);
  s->beta = mr_arena_doubles(a, n1), s->eig = mr_arena_doubles(a, n1);
  s->g = mr_arena_doubles(a, n1), s->r = mr_arena_doubles(a, n1);
  s->w = mr_arena_doubles(a, n1), s->d = mr_arena_doubles(a, n1);
  s->p = mr_arena_doubles(a, n1), s->tmp = mr_arena_doubles(a, n1);
  s->y = mr_arena_doubles(a, (size_t)me + n1);
  s->rows = mr_arena_alloc(a, sizeof(int) * ((size_t)me + mi1 + n1));
  s->in_w = mr_arena_alloc(a, sizeof(int) * (size_t)mi1);
}

/* reset the working set to the equality rows */
static void start_working_set(const qp_view *v, qp_scratch *s) {
  s->nw = 0;
  for (int i = 0; i < v->me; ++i)
    s->rows[s->nw++] = i;
  for (int i = 0; i < v->mi; ++i)
    s->in_w[i] = 0;
}

/* minimum-norm solution of A_eq x = b_eq; returns the largest residual over all rows */
static double min_norm_point(const qp_view *v, qp_scratch *s, double *x) {
  start_working_set(v, s);
  factor_working_set(v, s, 1e-12);
  // Rᵀ z = b_W, x = Q [z; 0]
  mr_zero(x, v->n);
  for (int i = 0; i < s->k; ++i) {
    double t = v->be[s->rows[i]];
    for (int j = 0; j < i; ++j)
      t -= s->R[j * s->n + i] * x[j];
    x[i] = t / s->R[i * s->n + i];
  }
  apply_q(s, v->n, x);
  double res = 0;
  for (int i = 0; i < v->me; ++i)
    res = fmax(res, fabs(mr_dot(qp_row(v, i), x, v->n) - v->be[i]));
  return res;
}

/* phase 1: a feasible point, or the least uniform violation of the inequalities */
static mr_status phase_one(const mr_qp_problem *qp, mr_arena *a, qp_scratch *s, double *x,
                           double feas_tol, int max_iter, double tol, mr_qp_info *info,
                           mr_error *err) {
  int n = qp->n, n1 = n + 1, me = qp->m_eq, mi = qp->m_in;
  qp_view v0 = {n, me, 0, NULL, qp->c, qp->A_eq, qp->b_eq, NULL, NULL};
  double eq_res = min_norm_point(&v0, s, x), t0 = 0;
  if (eq_res > feas_tol) {
    info->outcome = MR_QP_INFEASIBLE, info->infeasibility = eq_res;
    return MR_OK;
  }
  for (int i = 0; i < mi; ++i)
    t0 = fmax(t0, qp->b_in[i] - mr_dot(qp->A_in + (size_t)i * n, x, n));
  info->infeasibility = t0;
  if (t0 <= feas_tol) return MR_OK;
  // the phase-1 linear program in (x, t)
  double *Ae1 = mr_arena_doubles(a, (size_t)me * n1),
         *Ai1 = mr_arena_doubles(a, (size_t)(mi + 1) * n1);
  double *bi1 = mr_arena_doubles(a, (size_t)mi + 1), *c1 = mr_arena_doubles(a, n1);
  double *x1 = mr_arena_doubles(a, n1);
  for (int i = 0; i < me; ++i)
    mr_copy(Ae1 + (size_t)i * n1, qp->A_eq + (size_t)i * n, n);
  for (int i = 0; i < mi; ++i) {
    mr_copy(Ai1 + (size_t)i * n1, qp->A_in + (size_t)i * n, n);
    Ai1[(size_t)i * n1 + n] = 1, bi1[i] = qp->b_in[i];
  }
  Ai1[(size_t)mi * n1 + n] = 1, c1[n] = 1;
  mr_copy(x1, x, n), x1[n] = t0;
  qp_view v1 = {n1, me, mi + 1, NULL, c1, Ae1, qp->b_eq, Ai1, bi1};
  mr_qp_outcome out;
  start_working_set(&v1, s);
  mr_status st = active_set(&v1, s, x1, max_iter, tol, &info->iterations, &out, err);
  if (st != MR_OK) return st;
  mr_copy(x, x1, n);
  info->infeasibility = fmax(x1[n], 0.0);
  if (x1[n] > feas_tol) info->outcome = MR_QP_INFEASIBLE;
  return MR_OK;
}

static int problem_finite(const mr_qp_problem *qp) {
  int n = qp->n;
  for (int i = 0; qp->H && i < n * n; ++i)
    if (!isfinite(qp->H[i])) return 0;
  for (int i = 0; i < n; ++i)
    if (!isfinite(qp->c[i])) return 0;
  for (int i = 0; i < qp->m_eq * n; ++i)
    if (!isfinite(qp->A_eq[i])) return 0;
  for (int i = 0; i < qp->m_in * n; ++i)
    if (!isfinite(qp->A_in[i])) return 0;
  for (int i = 0; i < qp->m_eq; ++i)
    if (!isfinite(qp->b_eq[i])) return 0;
  for (int i = 0; i < qp->m_in; ++i)
    if (!isfinite(qp->b_in[i])) return 0;
  return 1;
}

/* multipliers of the final working set, scattered to y_eq / y_in */
static void scatter_multipliers(const mr_qp_problem *qp, const qp_scratch *s, double *y_eq,
                                double *y_in) {
  if (y_eq) mr_zero(y_eq, qp->m_eq);
  if (y_in) mr_zero(y_in, qp->m_in);
  for (int i = 0; i < s->nw; ++i) {
    int id = s->rows[i];
    if (id < qp->m_eq && y_eq) y_eq[id] = s->y[i];
    if (id >= qp->m_eq && y_in) y_in[id - qp->m_eq] = fmax(s->y[i], 0.0);
  }
}

static double objective(const mr_qp_problem *qp, const double *x, double *tmp) {
  double f = mr_dot(qp->c, x, qp->n);
  if (qp->H) mr_matvec(tmp, qp->H, x, qp->n, qp->n), f += 0.5 * mr_dot(x, tmp, qp->n);
  return f;
}

mr_status mr_qp_solve(const mr_qp_problem *qp, const mr_qp_settings *settings, mr_qp_workspace *ws,
                      double *x, double *y_eq, double *y_in, mr_qp_info *info, mr_error *err) {
  mr_qp_settings def = mr_qp_settings_default();
  const mr_qp_settings *st = settings ? settings : &def;
  if (qp->n < 1 || qp->n > ws->n_max || qp->m_eq < 0 || qp->m_eq > ws->m_eq_max || qp->m_in < 0 ||
      qp->m_in > ws->m_in_max)
    return mr_error_set(err, MR_ERR_INVALID,
                        "qp: sizes n=%d m_eq=%d m_in=%d exceed the workspace (%d, %d, %d)", qp->n,
                        qp->m_eq, qp->m_in, ws->n_max, ws->m_eq_max, ws->m_in_max);
  if (!problem_finite(qp)) return mr_error_set(err, MR_ERR_NUMERIC, "qp: non-finite input data");
  memset(info, 0, sizeof *info);
  double tol = st->tol > 0 ? st->tol : def.tol, bmax = 0;
  int max_iter = st->max_iter > 0 ? st->max_iter : 50 * (qp->n + qp->m_in) + 100;
  for (int i = 0; i < qp->m_eq; ++i)
    bmax = fmax(bmax, fabs(qp->b_eq[i]));
  for (int i = 0; i < qp->m_in; ++i)
    bmax = fmax(bmax, fabs(qp->b_in[i]));
  double feas_tol = 1e3 * tol * (1 + bmax);
  size_t mark = mr_arena_mark(&ws->arena);
  qp_scratch s;
  carve(&ws->arena, &s, ws->n_max + 1, ws->m_eq_max, ws->m_in_max + 1);
  mr_status status = phase_one(qp, &ws->arena, &s, x, feas_tol, max_iter, tol, info, err);
  // phase 2 from the feasible point
  if (status == MR_OK && info->outcome == MR_QP_OPTIMAL) {
    qp_view v = {qp->n, qp->m_eq, qp->m_in, qp->H, qp->c, qp->A_eq, qp->b_eq, qp->A_in, qp->b_in};
    start_working_set(&v, &s);
    status = active_set(&v, &s, x, max_iter, tol, &info->iterations, &info->outcome, err);
  }
  if (status == MR_OK && info->outcome == MR_QP_OPTIMAL) {
    scatter_multipliers(qp, &s, y_eq, y_in);
    info->active = 0;
    for (int i = 0; i < s.nw; ++i)
      info->active += s.rows[i] >= qp->m_eq;
    info->fval = objective(qp, x, s.tmp);
  }
  mr_arena_reset(&ws->arena, mark);
  return status;
}
